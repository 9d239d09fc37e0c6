"""The catalogue of the papers' tables and figures that ``aucstream reproduce`` runs.

Each :class:`Reproduction` is one table or figure; :data:`REPRODUCTIONS` maps its
id to it. :func:`~aucstream.evaluation.reproduce` runs one (see
:mod:`aucstream.evaluation._reproduce` for the modes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._data import DataSpec
from ._paper import (
    D16_TABLE2,
    G16_TABLE2,
    G16_TABLE3,
    G16_TABLE4,
    G16_TABLE6,
    L18_TABLE2,
    Z11_TABLE2,
    PaperTable,
)
from ._protocol import Protocol, get_protocol
from ._runner import LearnerSpec

__all__ = ["REPRODUCTIONS", "Reproduction"]

#: The learners whose library default learns each column in its running scale
#: (``column_scale``, a library option): the reproductions run the papers' updates on
#: the rows as the papers' protocols scale them, so :func:`L` pins
#: ``column_scale=None`` for them unless an entry says otherwise.
RUNNING_SCALE_LEARNERS = frozenset(
    {"AdaOAM", "FSAUC", "FTRLAUC", "OPAUC", "SAdaOAM", "SOLAM", "SOLAML1", "SPAM"}
)


def L(label: str, estimator: str, **kwargs) -> LearnerSpec:
    """:meth:`LearnerSpec.make`, with the papers' updates (``column_scale=None``) for
    the learners of :data:`RUNNING_SCALE_LEARNERS`."""
    if estimator in RUNNING_SCALE_LEARNERS:
        kwargs.setdefault("column_scale", None)
    return LearnerSpec.make(label, estimator, **kwargs)


@dataclass(frozen=True)
class Reproduction:
    """One table or figure of a paper.

    Attributes
    ----------
    id : str
        E.g. ``"g16-table2"``; files are named ``g16_table2.*``.
    title : str
    kind : {"table", "time", "curve", "sweep"}
        See :func:`~aucstream.evaluation.write_report`.
    protocol : str
        Key of :data:`~aucstream.evaluation.PAPER_PROTOCOLS`.
    learners : tuple of LearnerSpec
    datasets : tuple of DataSpec
    absent : tuple of str
        The paper's datasets that are not in the benchmark data.
    quick_datasets : tuple of str
        Titles of the datasets of the quick mode (embedded ones, so that no data folder
        is needed; a name not in ``datasets`` is the registered set of that name).
    reference : str or None
        The paper's proposed method (●/○ are from its side).
    paper : PaperTable or None
    fast : dict
        Protocol fields of the fast mode (on top of :meth:`Protocol.fast`).
    notes : dict
        Known reasons for differences (see :func:`write_report`).
    intro : str
    sweep : tuple (param, values) or None
        For ``kind="sweep"``.
    checkpoints : int
        For ``kind="curve"``.
    n_splits : int or None
        Outer splits used by curves and sweeps (None: all of the mode).
    generated : tuple of GeneratedStream
        Generated datasets, written into the cache on first use and run before
        ``datasets`` (their labels may be named in ``quick_datasets``).
    paper_protocol : Protocol or None
        The paper's protocol when it is not in ``PAPER_PROTOCOLS`` (``protocol`` is
        then its name).
    """

    id: str
    title: str
    kind: str
    protocol: str
    learners: tuple
    datasets: tuple
    absent: tuple = ()
    quick_datasets: tuple = ("diabetes", "fourclass", "german")
    reference: str | None = None
    paper: PaperTable | None = None
    fast: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)
    intro: str = ""
    sweep: tuple | None = None
    checkpoints: int = 40
    n_splits: int | None = None
    generated: tuple = ()
    paper_protocol: Protocol | None = None

    @property
    def name(self) -> str:
        """File name stem."""
        return self.id.replace("-", "_")

    def protocol_for(self, mode: str) -> Protocol:
        """The protocol of ``mode`` ("paper", "fast", "quick")."""
        base = self.paper_protocol or get_protocol(self.protocol)
        if mode == "paper":
            return base
        if mode == "quick":
            return base.quick()
        if mode == "fast":
            fast = dict(self.fast)
            return base.fast(fast.pop("n_trials", 1)).replace(mode="fast", **fast)
        raise ValueError(f"mode must be 'paper', 'fast' or 'quick', got {mode!r}")

    def datasets_for(self, mode: str) -> list[DataSpec]:
        """The datasets of ``mode`` (quick: ``quick_datasets``, taken from ``datasets``
        when listed there, else the registered set of that name)."""
        if mode != "quick":
            return list(self.datasets)
        known = {d.title: d for d in self.datasets}
        made = {g.label for g in self.generated}
        return [known.get(name, DataSpec(name)) for name in self.quick_datasets if name not in made]


# ----------------------------------------------------------------------- G16 (AIJ)


def _oam_and_univariate(buffer_size: int, losses=("exp", "log", "squ"), make=L) -> tuple:
    """The papers' online baselines: OAM_seq and OAM_gra with buffers of ``buffer_size``,
    then the univariate learners of ``losses`` (labels "Uni-Exp", ...)."""
    return (
        make("OAM_seq", "OAM", update="seq", buffer_size=buffer_size),
        make("OAM_gra", "OAM", update="gra", buffer_size=buffer_size),
        *(make(f"Uni-{loss.capitalize()}", "UnivariateOnline", loss=loss) for loss in losses),
    )


_G16_ONLINE = (L("OPAUC", "OPAUC"), *_oam_and_univariate(100))

_G16_DATA = (
    DataSpec("diabetes", paper_n=768),
    DataSpec("fourclass", paper_n=862),
    DataSpec("german", paper_n=1000),
    DataSpec(
        "splice",
        paper_n=3175,
        note="only the 1,000-example training file is available (splice.t is missing)",
    ),
    DataSpec("usps", "random_halves", paper_n=9298, note="train + test files"),
    DataSpec(
        "letter",
        "random_halves",
        part="train",
        paper_n=15000,
        note="training file (15,000, as in the paper's Table 1)",
    ),
    DataSpec("magic04", paper_n=19020),
    DataSpec("a9a", part="train", paper_n=32561, note="training file"),
    DataSpec("w8a", part="train", paper_n=49749, note="training file"),
    DataSpec(
        "mnist",
        "random_halves",
        paper_n=60000,
        note="only the 10,000 test images are available (paper: the 60,000 training images)",
    ),
    DataSpec(
        "connect4",
        "random_halves",
        label="connect-4",
        paper_n=67557,
        note="3 classes: random halves puts 1 class against 2",
    ),
    DataSpec("ijcnn1", paper_n=141691, note="train + test files"),
)
_G16_ABSENT = ("kddcup04", "acoustic", "epsilon", "covtype")

#: Fast mode of the G16 reproductions: 2 trials x 5 folds, tuned on the first split on
#: at most 30,000 training examples, fewer where OPAUC's O(d^2) update is costly.
_G16_FAST = {
    "n_trials": 2,
    "tune_max_samples": 30000,
    "tune_overrides": (("w8a", 10000), ("connect4", 15000), ("mnist", 2000)),
}

_OAM_GRID_NOTE = (
    "OAM's C is searched over the class's grid 2^[-20:10], which extends below the paper's "
    "2^[-12:10] (small C works better on long streams, see `OAM.C`); C <= 2^-14 was chosen "
    "on most datasets, outside the paper's range, which likely explains why our OAM is "
    "better than the paper's on the larger sets."
)
_UNI_NOTE = (
    "The univariate baselines use class-prior weights n / (2 n+-) from running counts and "
    "an intercept (our choice: G16 §7.1 says only that the weights are the class ratios); "
    "the paper does not specify either further, and its online "
    "Uni-Exp / Uni-Squ are markedly weaker on the imbalanced w8a and on mnist."
)

_G16_NOTES = {
    "splice": "Our splice has 1,000 examples (the paper's 3,175 include the missing "
    "splice.t), so 800 training examples per fold instead of 2,540.",
    "mnist": "Our mnist is the 10,000-image test set with a different random class "
    "partition; the paper trains on 48,000 of the 60,000 training images.",
    "usps": "The binary problem is a random halving of the 10 digits: our partition "
    "(seed 0) is not the paper's, and the AUC depends on which digits are grouped.",
    "letter": "The binary problem is a random halving of the 26 letters: our partition "
    "(seed 0) is not the paper's, and the AUC depends strongly on it.",
    "connect-4": "Random halves of 3 classes: our positive class is class 2 (the largest, "
    "'win'); the paper's grouping is unknown.",
    "OAM_seq": _OAM_GRID_NOTE,
    "OAM_gra": _OAM_GRID_NOTE,
    "Uni-Exp": _UNI_NOTE,
    "Uni-Log": _UNI_NOTE,
    "Uni-Squ": _UNI_NOTE,
}

_G16_TABLE3_NOTE = (
    "Two pairs of columns coincide by construction: SVM-perf and SVM-OR are one "
    "pairwise-hinge solver with two parameterizations (SVM-perf with the ROC-area loss "
    "decomposes over positive-negative pairs, Joachims 2005 §5, which is SVM-OR with two "
    "ranks; see `aucstream.batch`), and LS-SVM equals "
    "batch Uni-Squ up to the scale of lambda, since by Sherman-Morrison "
    "(lambda I + S+ + S- + d d^T)^-1 d is proportional to (lambda I + S+ + S-)^-1 d, the "
    "class-balanced ridge least-squares direction (d = difference of the class means). "
    "The paper's columns differ because it ran different solvers."
)

_G16_TABLE2_INTRO = (
    "Reproduction of Table 2 of Gao, Wang, Jin, Zhu, Zhou, *One-Pass AUC Optimization* "
    "(Artificial Intelligence, 2016): test AUC of OPAUC against the online methods "
    "OAM_seq, OAM_gra (Zhao et al. 2011, buffers of 100) and online Uni-Exp / Uni-Log / "
    "Uni-Squ (class-prior weighted univariate losses). The paper's values are printed "
    "under ours."
)

_Z11_LEARNERS = (
    L("Perceptron", "Perceptron"),
    L("PA-I", "PassiveAggressive"),
    L("CW-full", "ConfidenceWeighted"),
    L("CPA_PB", "CostSensitivePA", variant="pb"),
    L("CPA_ML", "CostSensitivePA", variant="ml"),
    L("OAM_seq", "OAM", update="seq", buffer_size=100),
    L("OAM_gra", "OAM", update="gra", buffer_size=100),
    L(
        "OAM_inf",
        "OAM",
        update="seq",
        buffer_size=None,
        max_train=10000,
        note="O(t d) per step: capped at 10,000 training examples per run for time",
    ),
)

_Z11_DATA = (
    DataSpec("fourclass", paper_n=862),
    DataSpec(
        "magic04",
        ("one_vs_rest", "h"),
        paper_n=19020,
        note="positive = h (hadron), which gives Table 1's T-/T+ = 1.8439",
    ),
    DataSpec("german", paper_n=1000),
    DataSpec("ijcnn1", paper_n=141691, note="train + test files"),
    DataSpec(
        "letter",
        ("one_vs_rest", 8.0),
        part="train",
        paper_n=15000,
        note="training file, letter H (class 8) against the rest: T-/T+ = 26.881 as in Table 1",
    ),
)

#: Fast mode of the Z11 reproductions: the paper's 4 x 5 folds, tuned on the first split
#: (at most 30,000 examples) over at most 8 values per parameter.
_Z11_FAST = {"n_trials": 4, "tune_max_samples": 30000, "coarse_values": 8}

_Z11_NOTES = {
    "OAM_inf": "OAM_inf is trained on at most 10,000 examples per run (uniform sample), "
    "which matters on magic04, letter and ijcnn1.",
    "PA-I": "Z11 gives no grid for PA-I's C (§4.2 says only 'same setup'); we tune C over "
    "2^[-10:10], the range Z11 uses for the other C's. A small "
    "C makes PA-I a perceptron with small steps, much better on imbalanced data than "
    "the paper's PA-I.",
    "CPA_PB": "With a small C the PB update is a scaled perceptron, so its AUC equals the "
    "Perceptron's whenever a small C is chosen.",
    "CW-full": "Our CW-full scores about .67 with a large spread over folds on german and "
    "magic04 whatever the scaling (l2, [-1,1] or none; checked), against the "
    "paper's .757 and .746: reported to the maintainers of ConfidenceWeighted.",
    "fourclass": "fourclass has 2 features: l2-normalizing maps every example to the unit "
    "circle and removes the radial information: without it OAM_seq scores .825 "
    "and CPA_PB .752 (10 runs, checked), closer to the paper.",
    "letter": "One-vs-rest with letter H (the class that gives Table 1's ratio); which "
    "letter Z11 used is not stated.",
    "*": "Z11 reports no significance tests; the ●/○ markers and win/tie/loss rows are ours "
    "(OAM_seq against each method). Z11 does not state the feature scaling; we "
    "l2-normalize every example, since Z11's analysis assumes ||x|| <= 1.",
}

_CURVE_DATA = tuple(
    d for d in _G16_DATA if d.title in ("german", "splice", "magic04", "a9a", "ijcnn1", "connect-4")
)

REPRODUCTIONS: dict[str, Reproduction] = {}


def _register(r: Reproduction) -> None:
    REPRODUCTIONS[r.id] = r


_register(
    Reproduction(
        "g16-table2",
        "G16 Table 2: OPAUC against online methods (test AUC)",
        "table",
        "g16",
        _G16_ONLINE,
        _G16_DATA,
        _G16_ABSENT,
        reference="OPAUC",
        paper=G16_TABLE2,
        fast=_G16_FAST,
        notes=_G16_NOTES,
        intro=_G16_TABLE2_INTRO,
    )
)

_register(
    Reproduction(
        "g16-fig1",
        "G16 Figure 1: running time of OPAUC and the online methods",
        "time",
        "g16",
        _G16_ONLINE,
        _G16_DATA,
        _G16_ABSENT,
        reference="OPAUC",
        fast=_G16_FAST,
        intro="Reproduction of Figure 1 of Gao et al. 2016: mean training time (one pass) of "
        "OPAUC and the online methods of Table 2, log scale. The paper's figure has no "
        "numbers in its text, so only the shape can be compared: the paper finds the "
        "univariate methods fastest and OPAUC competitive with OAM except on the "
        "highest-dimensional sets (mnist, epsilon). The runs are those of "
        "`g16-table2` (shared cache).",
        notes={
            "*": "Times are wall-clock seconds of `fit` in a worker process (2 workers on 2 "
            "cores), after a warm-up fit that loads the compiled kernels; they exclude "
            "data loading, preprocessing and scoring."
        },
    )
)

_register(
    Reproduction(
        "g16-table3",
        "G16 Table 3: OPAUC against batch methods (test AUC)",
        "table",
        "g16",
        (
            L("OPAUC", "OPAUC"),
            L("SVM-perf", "SVMPerfAUC"),
            L("SVM-OR", "SVMOR"),
            L("LS-SVM", "LSSVMAUC"),
            L("batch Uni-Log", "BatchUnivariate", loss="log"),
            L("batch Uni-Squ", "BatchUnivariate", loss="squ"),
        ),
        _G16_DATA,
        _G16_ABSENT,
        reference="OPAUC",
        paper=G16_TABLE3,
        fast=_G16_FAST,
        notes={**_G16_NOTES, "*": _G16_TABLE3_NOTE},
        intro="Reproduction of Table 3 of Gao et al. 2016: OPAUC against batch AUC methods "
        "(batch learners trained on at most 8,000 examples).",
    )
)

_register(
    Reproduction(
        "g16-fig7",
        "G16 Figure 7: convergence of OPAUC, OAM_seq and OAM_gra",
        "curve",
        "g16",
        _G16_ONLINE[:3],
        _CURVE_DATA,
        reference="OPAUC",
        fast=_G16_FAST,
        checkpoints=40,
        n_splits=5,
        intro="Reproduction of Figure 7 of Gao et al. 2016: test AUC against the number of "
        "examples seen (and against training seconds) during the single pass, with the "
        "hyperparameters chosen as for Table 2 (shared cache). The paper's figure has no "
        "numbers in its text; its claim is that OPAUC converges faster than OAM_seq and "
        "OAM_gra. Curves are averaged over the outer splits.",
        quick_datasets=("german",),
    )
)


def _g16_sweep(number: int, param: str, name: str, values: tuple, intro: str) -> Reproduction:
    """G16's parameter-influence figures: OPAUC's test AUC against one parameter."""
    return Reproduction(
        f"g16-fig{number}",
        f"G16 Figure {number}: influence of the {name} on OPAUC",
        "sweep",
        "g16",
        _G16_ONLINE[:1],
        _CURVE_DATA,
        reference="OPAUC",
        fast=_G16_FAST,
        sweep=(param, values),
        n_splits=5,
        intro=intro,
        quick_datasets=("german",),
    )


_register(
    _g16_sweep(
        5,
        "eta",
        "step size eta",
        tuple(2.0**k for k in range(-12, 11)),
        "Reproduction of Figure 5 of Gao et al. 2016: test AUC of OPAUC against eta over "
        "2^[-12:10], lambda as tuned. The paper: eta should not exceed 1, and "
        "[2^-12, 2^-4] works well.",
    )
)

_register(
    _g16_sweep(
        6,
        "lam",
        "regularization lambda",
        tuple(2.0**k for k in range(-10, 3)),
        "Reproduction of Figure 6 of Gao et al. 2016: test AUC of OPAUC against lambda "
        "over 2^[-10:2], eta as tuned. The paper: OPAUC is insensitive to lambda unless "
        "it is large.",
    )
)


def _sketched(label: str, covariance: str, **params) -> LearnerSpec:
    # G16 §7.3: sketch size 50 for every sketched OPAUC; lambda fixed small (G16 Fig. 6:
    # OPAUC is insensitive to a small lambda), eta tuned over every second power of 2
    return L(
        label,
        "OPAUC",
        covariance=covariance,
        sketch_size=50,
        lam=2.0**-10,
        grid={"eta": [2.0**k for k in range(-12, 1, 2)]},
        **params,
    )


#: G16 §7.2 appends 50,000 random Fourier features; two cores cannot run every learner
#: over 50,000 dense features 25 times per dataset (OPAUC_fd costs O(d tau) per example
#: and a frequent-directions shrink of O(d tau^2) every tau examples), so the fast mode
#: appends 2,000 (the map is `aucstream.random_features.RandomFourierFeatures`, sigma 1
#: on the [-1, 1]-scaled features, seed 0: the same features in every split).
_RFF = {"n_components": 2000, "random_state": 0}


def _rff(label: str, estimator: str, **params) -> LearnerSpec:
    return L(label, estimator, features=_RFF, **params)


def _rff_sketched(label: str, covariance: str, **params) -> LearnerSpec:
    # G16 §7.2: tau = 50; eta and lambda tuned over the paper's ranges (every k-th value)
    return _rff(label, "OPAUC", covariance=covariance, sketch_size=50, **params)


_G16_TABLE4_LEARNERS = (
    _rff_sketched("OPAUC_fd", "fd"),
    *_oam_and_univariate(50, make=_rff),
    _rff_sketched("OPAUC_r", "randomized"),
    _rff_sketched("OPAUC_h", "hash"),
    # not in G16: the batch optimum of OPAUC's objective on the same expanded data
    _rff("LS-SVM (batch)", "LSSVMAUC"),
)

_register(
    Reproduction(
        "g16-table4",
        "G16 Table 4: OPAUC_fd on random Fourier features against online methods (test AUC)",
        "table",
        "g16",
        _G16_TABLE4_LEARNERS,
        (
            DataSpec("fourclass", paper_n=862),
            DataSpec("magic04", paper_n=19020),
            DataSpec("letter", "random_halves", part="train", paper_n=15000),
            DataSpec("ijcnn1", paper_n=141691, note="train + test files"),
        ),
        ("acoustic",),
        quick_datasets=("fourclass",),
        reference="OPAUC_fd",
        paper=G16_TABLE4,
        fast={
            "n_trials": 1,
            "max_samples": 3000,
            "tune_max_samples": 1000,
            "coarse_values": 4,
        },
        notes={
            "*": "Reduced for two cores (the paper: 50,000 features, 5 x 5 CV, tuned on "
            "every split): 2,000 random Fourier features appended to the [-1, 1]-scaled "
            "features (sigma = 1; G16 gives no width), every dataset subsampled to 3,000 "
            "examples, 1 x 5-fold CV, tuning on 1,000 examples of the first split over 4 "
            "values per parameter. OPAUC_s (the sparse summary) is left out: on dense rows "
            "its update costs O(d^2) per example (OPAUC_fd's O(d tau)), so at d = 1,000 a "
            "single pass over 2,400 examples takes minutes. "
            "The paper's columns OPAUC^f, OPAUC^rp and OPAUC^pca (a reduction to 1,000 "
            "dimensions, then exact OPAUC: `aucstream.reduction`) are pipelines over the "
            "expanded features and are not run here. Fewer random features approximate "
            "the Gaussian kernel less well, so the AUCs of the paper, which are above "
            "Table 2's, are not expected to be reached. The column LS-SVM (batch) is not "
            "in G16: the exact minimizer of OPAUC's objective on the same expanded "
            "training part (`LSSVMAUC`, at most 8,000 examples), the ceiling a one-pass "
            "OPAUC on these features can approach.",
        },
        intro="Reproduction of Table 4 of Gao et al. 2016 (§7.2): low-dimensional dense "
        "datasets made high-dimensional by appending random Fourier features, OPAUC with "
        "the frequent-directions summary (OPAUC_fd, the paper's proposal for dense "
        "high-dimensional data) against the other summaries, OAM and the univariate "
        "online methods. Every learner runs behind the same feature map, one chunk of "
        "rows at a time (`aucstream.pipeline.ChunkedPipeline`).",
    )
)

_G16_TABLE6_LEARNERS = (
    _sketched("OPAUC_s", "sparse"),
    _sketched("OPAUC_fd", "fd"),
    # long streams want a small C (see `OAM.C`): the grid reaches below the paper's
    L(
        "OAM_seq",
        "OAM",
        update="seq",
        buffer_size=50,
        grid={"C": [2.0**k for k in range(-16, -1, 2)]},
    ),
    L(
        "OAM_gra",
        "OAM",
        update="gra",
        buffer_size=50,
        grid={"C": [2.0**k for k in range(-16, -1, 2)]},
    ),
    L("Uni-Exp", "UnivariateOnline", loss="exp", grid={"eta": [2.0**k for k in range(-12, 3, 2)]}),
    L("Uni-Log", "UnivariateOnline", loss="log", grid={"eta": [2.0**k for k in range(-12, 3, 2)]}),
    L("Uni-Squ", "UnivariateOnline", loss="squ", grid={"eta": [2.0**k for k in range(-12, 3, 2)]}),
    _sketched("OPAUC_r", "randomized"),
    _sketched("OPAUC_h", "hash"),
    # not in G16: the library's positive semi-definite estimates (see `OPAUC.centering`)
    _sketched("OPAUC_fd (centered)", "fd", centering="exact"),
    _sketched("OPAUC_r (centered)", "randomized", centering="exact"),
    _sketched("OPAUC_h (centered)", "hash", centering="exact"),
)

_register(
    Reproduction(
        "g16-table6",
        "G16 Table 6: sketched OPAUCs against online methods on sparse data (test AUC)",
        "table",
        "g16",
        _G16_TABLE6_LEARNERS,
        (
            DataSpec("sector", "largest_vs_rest", label="sector.lvr", paper_n=9619),
            DataSpec("sector", "random_halves", paper_n=9619),
            DataSpec(
                "news20",
                "random_halves",
                paper_n=15935,
                note="only news20.t, 3,993 examples (paper: the 15,935 training examples)",
            ),
        ),
        ("real-sim", "rcv", "rcv1v2", "ecml2012", "news20.binary"),
        quick_datasets=("german",),
        reference="OPAUC_s",
        paper=G16_TABLE6,
        # two cores: 1 x 5 folds, tuning on 1,500 examples over 4 step sizes
        fast={"n_trials": 1, "tune_max_samples": 1500, "coarse_values": 4},
        notes={
            "*": "Columns OPAUC^f, OPAUC^rp and OPAUC^pca of the paper (a dimension "
            "reduction to k = 1000, then exact OPAUC: `aucstream.reduction`) are pipelines, "
            "not streaming learners, and are not run here. Sketch size 50 and OAM buffers "
            "of 50 as in G16 §7.3; lambda = 2^-10 fixed for the sketched OPAUCs. The "
            "(centered) columns are not in G16: they use the library's "
            "`centering='exact'` option, which sketches the centered examples so that the "
            "estimated covariance stays positive semi-definite, where the papers' "
            "estimate (sketch of X X^T / T minus c c^T, G16 Eqs. 10-11 and 19) can be "
            "indefinite when the sketch keeps little of X X^T.",
            "news20": "Our news20 is the 3,993-example news20.t with our own random halving "
            "of the 20 classes (seed 0); the paper's has 15,935 examples.",
        },
        intro="Reproduction of Table 6 of Gao et al. 2016 on the high-dimensional sparse "
        "sets we hold (sector, 55,197 features, as sector.lvr and random halves; news20): "
        "OPAUC with the sparse summary (OPAUC_s, the paper's proposal for such data) against "
        "the other sketches, OAM and the online univariate methods.",
    )
)

_register(
    Reproduction(
        "z11-table2",
        "Z11 Table 2: OAM against online classifiers (test AUC)",
        "table",
        "z11",
        _Z11_LEARNERS,
        _Z11_DATA,
        ("sonar", "svmguide1", "svmguide3", "segment", "satimage", "vowel", "poker"),
        quick_datasets=("fourclass", "german"),
        reference="OAM_seq",
        paper=Z11_TABLE2,
        fast=_Z11_FAST,
        notes=_Z11_NOTES,
        intro="Reproduction of Table 2 of Zhao, Hoi, Jin, Yang, *Online AUC Maximization* "
        "(ICML 2011) on the datasets of its Table 1 that the benchmark data holds, with "
        "Table 1's class imbalance (one-vs-rest conversions).",
    )
)

_register(
    Reproduction(
        "z11-fig1",
        "Z11 Figure 1: AUC of OAM against the buffer size",
        "sweep",
        "z11",
        _Z11_LEARNERS[5:7],
        _Z11_DATA,
        quick_datasets=("fourclass", "german"),
        reference="OAM_seq",
        fast={**_Z11_FAST, "n_trials": 1},
        sweep=("buffer_size", (1, 10, 20, 50, 100, 200, 500)),
        intro="Reproduction of Figure 1 of Zhao et al. 2011: test AUC of OAM_seq and OAM_gra "
        "against the buffer size N+ = N-, with C tuned at N = 100. The paper's figure "
        "has no numbers in its text; its claims: N = 1 is worst, a small buffer already "
        "helps much, and the AUC saturates (or drops slightly) for large buffers.",
    )
)

# -------------------------------------------------------------- D16 (AdaOAM, 2016)

_D16_LEARNERS = (
    # D16's updates on the (normalized) rows as they come, not the library's default
    # running column scale
    L("AdaOAM", "AdaOAM", column_scale=None),
    L("SAdaOAM", "SAdaOAM"),
    L("OPAUC", "OPAUC"),
    *_oam_and_univariate(100, losses=("log", "exp")),
    # D16's batch baselines, and the batch linear ceiling of the pairwise square loss
    L("SVM-perf", "SVMPerfAUC"),
    L("CAPO", "CAPO"),
    L("LS-SVM", "LSSVMAUC"),
)

_register(
    Reproduction(
        "d16-table2",
        "D16 Table II: AdaOAM and SAdaOAM against online and batch AUC learners (test AUC)",
        "table",
        "d16",
        _D16_LEARNERS,
        (
            DataSpec("german", paper_n=1000),
            DataSpec("a2a", part="train", paper_n=2265, note="training file (Table I: 2,265)"),
            DataSpec(
                "magic04",
                ("one_vs_rest", "h"),
                paper_n=19020,
                note="positive = h, which gives Table I's T-/T+ = 1.843",
            ),
            DataSpec(
                "diabetes",
                ("one_vs_rest", -1),
                paper_n=768,
                note="positive = -1 (268 examples), which gives Table I's T-/T+ = 1.865",
            ),
        ),
        (
            "glass",
            "heart",
            "svmguide4",
            "liver-disorders",
            "balance",
            "breast",
            "australian",
            "vehicle",
            "svmguide3",
            "cod-rna",
            "acoustic",
            "poker",
        ),
        quick_datasets=("german", "diabetes"),
        reference="AdaOAM",
        paper=D16_TABLE2,
        fast={"n_trials": 4, "tune_max_samples": 8000, "coarse_values": 4},
        notes={
            "*": "D16's values cannot be printed: the text of the paper we hold stops after "
            "the header of Table II. The columns SVM-perf and CAPO are D16's batch "
            "baselines (§5.1; D16 reports them in a separate batch table), and LS-SVM "
            "(`LSSVMAUC`, the exact minimizer of the pairwise square loss on the training "
            "part) is the batch linear ceiling of OPAUC's objective: where an online "
            "learner falls short of it, the gap is the price of one pass, not of the data. "
            "Batch learners train on at most 8,000 examples (G16's cap; only magic04 is "
            "larger). The tuning grids are every k-th value of the learners' grids (at "
            "most 4 per parameter: SAdaOAM has three parameters).",
            "CAPO": "CAPO as implemented in `aucstream.CAPO` (RBF auxiliary SVMs on at "
            "most 2,000 examples, adapted on the others); D16 used the authors' C++ "
            "toolbox, whose auxiliary classifiers are not described in D16.",
        },
        intro="Reproduction of the AdaOAM experiments of Ding, Zhao, Hoi, Ong, *Adaptive "
        "Subgradient Methods for Online AUC Maximization* (D16, §5, Table II) on the "
        "datasets of its Table I that the benchmark data holds, with Table I's class "
        "ratios, under its protocol: 4 independent 5-fold partitions (20 runs per cell), "
        "every example scaled to unit norm, buffers of 100 for OAM.",
    )
)

# ------------------------------------------------------------------- L18 (ICML 2018)

_L18_LEARNERS = (
    # the papers' updates on the (normalized) rows as they come, not the library's
    # default running column scale
    L("FSAUC", "FSAUC", column_scale=None),
    L("SOLAM", "SOLAM", column_scale=None),
    L("SOLAM_l1", "SOLAML1", column_scale=None),
    L(
        "OPAUC",
        "OPAUC",
        grid={
            "eta": [2.0**k for k in range(-12, -3)],
            "lam": [2.0**k for k in range(-10, 1)],
        },
    ),
    # not in L18: the batch optimum of the square pairwise loss on the whole training
    # part, the ceiling of OPAUC's (and SOLAM's, FSAUC's) objective on the same split
    L("LS-SVM (batch)", "LSSVMAUC"),
)

_L18_DATA = (
    DataSpec(
        "a9a",
        paper_n=40702,
        note="train + test merged, then 4:1:1 (paper: the training file, test file halved)",
    ),
    DataSpec("ijcnn1", paper_n=118076, note="train + test merged, then 4:1:1 as in L18"),
    DataSpec(
        "w8a",
        paper_n=57225,
        note="train + test merged, then 4:1:1 (paper: the training file, test file halved)",
    ),
)

#: Fast mode of the L18 reproductions: the paper's protocol (5 runs, the full grids,
#: tuning on the validation part); it takes minutes, so nothing is reduced.
_L18_FAST = {"n_trials": 5, "grid": "paper"}

_register(
    Reproduction(
        "l18-table2",
        "L18 Table 2: FSAUC against SOLAM and OPAUC (test AUC)",
        "table",
        "l18",
        _L18_LEARNERS,
        _L18_DATA,
        ("covtype_binary", "HIGGS", "real-sim", "rcv1_binary", "news20.binary"),
        quick_datasets=("diabetes", "german"),
        reference="FSAUC",
        paper=L18_TABLE2,
        fast=_L18_FAST,
        notes={
            "*": "L18 reports no significance tests; the markers are ours (FSAUC against "
            "each method). L18's standard deviations are over 5 training orders of one "
            "split, hence tiny: a different split alone moves the AUC by more (ours is "
            "4:1:1 on train + test merged for all three sets, seed 0; for a9a and w8a "
            "L18 kept the training file and halved the test file). The column LS-SVM "
            "(batch) is not in L18: the exact minimizer of the regularized square "
            "pairwise loss on the whole training part (lambda tuned on the validation "
            "part), i.e. the best a linear square-loss learner can do on our split; where "
            "a paper's value lies above it, our split is harder, not our learners worse."
        },
        intro="Reproduction of Table 2 of Liu et al. 2018 (*Fast Stochastic AUC Maximization "
        "with O(1/n)-Convergence Rate*): final test AUC after one pass, 5 runs with "
        "different training orders.",
    )
)

_register(
    Reproduction(
        "l18-fig1",
        "L18 Figures 1-2: test AUC of FSAUC, SOLAM and OPAUC along the pass",
        "curve",
        "l18",
        _L18_LEARNERS[:4],
        _L18_DATA,
        quick_datasets=("diabetes", "german"),
        reference="FSAUC",
        fast=_L18_FAST,
        checkpoints=50,
        intro="Reproduction of Figures 1 and 2 of Liu et al. 2018: test AUC against the "
        "number of examples seen (Fig. 1) and against training seconds (Fig. 2, log "
        "scale) during the one pass, averaged over the 5 training orders, with the "
        "hyperparameters chosen as for Table 2 (shared cache). The paper's claim: FSAUC "
        "converges faster than SOLAM, SOLAM_l1 and OPAUC. FSAUC's model at a checkpoint "
        "is the average of its current stage (L18 Alg. 1), so its curve dips where a "
        "stage starts.",
    )
)

# the sparse, wide and imbalanced experiments (ZYS, NYL) register themselves
from . import _catalogue_wide  # noqa: E402, F401
