"""Reproductions of the sparse, wide and imbalanced experiments: FTRL-AUC (ZYS) and
SPAM (NYL), registered in :data:`~aucstream.evaluation._catalogue.REPRODUCTIONS`.

ZYS: Zhou, Ying, Skiena, *Online AUC Optimization for Sparse High-Dimensional
Datasets*, ICDM 2020 (arXiv 2009.10867). NYL: Natole, Ying, Lyu, *Stochastic Proximal
Algorithms for AUC Maximization*, ICML 2018 (PMLR 80:3710-3719).

Neither paper has a protocol entry in :data:`~aucstream.evaluation.PAPER_PROTOCOLS`:
their protocols are declared here (``Reproduction.paper_protocol``) and reports list
the deviations from them.
"""

from __future__ import annotations

from ._catalogue import L, Reproduction, _register
from ._data import DataSpec
from ._generated import GeneratedStream
from ._paper import NYL18_VALUES, ZYS20_TABLE, PaperTable
from ._protocol import Protocol

__all__: list[str] = []

#: ZYS's protocol (experiments section): each dataset split 4/6 training, 1/6
#: validation (to choose the hyperparameters), 1/6 test; 10 runs; one pass.
ZYS20_PROTOCOL = Protocol(
    "zys20",
    n_trials=10,
    holdout=(4, 1, 1),
    preprocess="l2",
    batch_cap=None,
    mode="paper",
    citation="Zhou, Ying, Skiena 2020 (ZYS), experiments: 4/6 train, 1/6 validation "
    "(tuning), 1/6 test, 10 randomly shuffled runs, one pass; the LIBSVM text sets they "
    "use have unit-norm rows, so rows are scaled to unit norm",
)


def _zys_values() -> str:
    """ZYS's AUC table in words (none of its datasets is in the benchmark data)."""
    rows: dict[str, list[str]] = {}
    for (dataset, learner), (mean, _, _) in ZYS20_TABLE.values.items():
        rows.setdefault(dataset, []).append(f"{learner} {mean:.4f}")
    return "; ".join(f"{d}: {', '.join(v)}" for d, v in rows.items())


_SPAM_ETA = [10.0**k for k in range(-3, 4)]
_SPAM_PENALTY = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1]

_ZYS_LEARNERS = (
    L("FTRL-AUC", "FTRLAUC"),
    L("SPAM-l1", "SPAM", step="global", l2=0.0, grid={"eta0": _SPAM_ETA, "l1": _SPAM_PENALTY}),
    L("SPAM-NET", "SPAM", step="global"),
    L("SOLAM", "SOLAM"),
    L("FSAUC", "FSAUC"),
)

#: The wide imbalanced stream: positive rate 0.05 as in ZYS's imbalanced experiments.
SPARSE_P05 = GeneratedStream("sparse-p05", n=20000, d=2**17, k=50, positive_rate=0.05)

_ZYS_DATA = (
    DataSpec(
        "news20",
        "random_halves",
        paper_n=19996,
        note="news20.t only (3,993 rows) with random halves of the 20 classes; ZYS use "
        "news20.binary (19,996 rows, 1,355,191 features)",
    ),
    DataSpec(
        "news20",
        ("one_vs_rest", 1),
        label="news20 (1 vs rest)",
        note="class 1 against the other 19: 200 of 3,993 positive (5.0%)",
    ),
    DataSpec("sector", "random_halves", note="random halves of the 105 classes"),
    DataSpec(
        "sector",
        ("positive", (1, 2, 3, 4, 5)),
        label="sector (5 classes vs rest)",
        note="classes 1-5 against the other 100: 457 of 9,619 positive (4.8%)",
    ),
)

_register(
    Reproduction(
        "zys20-table",
        "ZYS: FTRL-AUC against SPAM, SOLAM and FSAUC on sparse wide data (test AUC)",
        "table",
        "zys20",
        _ZYS_LEARNERS,
        _ZYS_DATA,
        ("real-sim", "rcv1b", "farm-ads", "imdb", "reviews", "news20b", "avazu"),
        quick_datasets=("sparse-p05",),
        reference="FTRL-AUC",
        paper=PaperTable(
            f"{ZYS20_TABLE.source}: none of its datasets is in the benchmark data (its "
            "values are in the notes)"
        ),
        fast={"n_trials": 3},
        generated=(SPARSE_P05,),
        paper_protocol=ZYS20_PROTOCOL,
        notes={
            "*": "None of ZYS's datasets is in the benchmark data, so the paper's values "
            f"cannot be set beside ours: ZYS report (test AUC) {_zys_values()}. "
            "The sets here are the wide sparse ones we hold (news20's test part, "
            "sector; balanced and at a positive rate near 0.05) and a generated stream "
            "at positive rate 0.05 (`aucstream.evaluation._generated`). SPAUC is not in "
            "the library. ZYS's FTRL-AUC grid is `FTRLAUC.param_grid`; SPAM-l1 is tuned "
            "over eta0 in 10^[-3:3] (ZYS's xi) and l1 in 10^[-6:-1], SPAM-NET over "
            "`SPAM.param_grid` (l1 and l2), both with NYL's global step "
            "(`step='global'`). SOLAM and FSAUC cost O(d) a step; FTRL-AUC "
            "and SPAM O(k) (lazy updates).",
        },
        intro="Reproduction of the AUC experiments of Zhou, Ying, Skiena, *Online AUC "
        "Optimization for Sparse High-Dimensional Datasets* (ICDM 2020): one pass of "
        "FTRL-AUC and the online AUC baselines over wide sparse data, hyperparameters "
        "chosen on a validation part, test AUC of the last model.",
    )
)

#: NYL's experiments, as the authors' MATLAB demos (``demo.m``) run them: 5-fold
#: cross-validation on diabetes, fourclass, german and splice with unit-norm rows.
NYL18_PROTOCOL = Protocol(
    "nyl18",
    n_trials=1,
    preprocess="l2",
    mode="paper",
    citation="Natole, Ying, Lyu 2018 (NYL), as the authors' MATLAB demos run SPAM: "
    "5-fold cross-validation, unit-norm rows (the text of NYL we hold is its abstract, "
    "so the paper's own protocol could not be checked)",
)

_register(
    Reproduction(
        "nyl18-table",
        "NYL: SPAM against SOLAM, FSAUC, OPAUC and FTRL-AUC (test AUC)",
        "table",
        "nyl18",
        (
            L("SPAM-NET", "SPAM", step="global"),
            L(
                "SPAM-L2",
                "SPAM",
                step="global",
                l1=0.0,
                grid={"eta0": _SPAM_ETA, "l2": _SPAM_PENALTY},
            ),
            L("SOLAM", "SOLAM"),
            L("FSAUC", "FSAUC"),
            L("OPAUC", "OPAUC"),
            L("FTRL-AUC", "FTRLAUC"),
        ),
        (
            DataSpec("diabetes", paper_n=768),
            DataSpec("fourclass", paper_n=862),
            DataSpec("german", paper_n=1000),
            DataSpec("splice", paper_n=1000),
        ),
        quick_datasets=("diabetes", "german"),
        reference="SPAM-NET",
        paper=NYL18_VALUES,
        fast={"n_trials": 1, "coarse_values": 4},
        paper_protocol=NYL18_PROTOCOL,
        notes={
            "*": "NYL's values cannot be printed: the text of NYL we hold is its abstract. "
            "The authors' demos make 15 passes with p and the class means computed on "
            "the whole training set beforehand; the library's SPAM is online (one pass, "
            "running p and lazy class scores as ZYS run it), and so is every learner "
            "here. SPAM-NET is `SPAM` tuned over l1 and l2 (`SPAM.param_grid`), SPAM-L2 "
            "has l1 = 0; both with NYL's step eta0/sqrt(t) (`step='global'`).",
        },
        intro="Reproduction of the SPAM experiments of Natole, Ying, Lyu, *Stochastic "
        "Proximal Algorithms for AUC Maximization* (ICML 2018) on the datasets of the "
        "authors' demos, one pass of every online learner.",
    )
)
