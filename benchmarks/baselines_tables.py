"""Reproduce the baseline rows of G16 Table 3 and Z11 Table 2 (reduced protocol).

(a) G16 (seed 001) Table 3: OPAUC against the batch learners SVM-perf, SVM-OR,
    LS-SVM, Uni-Log and Uni-Squ, on the Table-3 datasets present in the shared data.
    Features scaled to [-1, 1] (min-max on dense data, max-abs on sparse data, fitted
    on the training part); multi-class sets made binary with ``random_halves``; batch
    learners see at most 8,000 training examples drawn without replacement.
(b) Z11 (seed 004) Table 2: Perceptron, PA-I, CW-full, CPA_PB and CPA_ML beside
    OAM_seq / OAM_gra (buffers of 100), features normalized to unit L2 norm, letter
    made imbalanced with class 8 (H) against the rest (T-/T+ = 26.88, as in Z11
    Table 1), magic04 with the minority class h as positive.

Reduced protocol (stated in the output): the papers use 25 (G16) or 20 (Z11) runs
with 5-fold inner cross-validation over the full grids. Here:

- 5 random stratified 80/20 train/test splits per dataset;
- hyperparameters chosen once, on the first split's training part, by 3-fold
  stratified CV on a coarse sub-grid of the paper's grid (below); online learners are
  tuned on a stratified subsample of at most 20,000 training examples, batch learners
  on their capped (8,000) training sample;
- every learner is then trained on each split's training part (one pass for online
  learners, shuffled with the split's seed) and its test AUC recorded.

Usage::

    python benchmarks/baselines_tables.py            # both tables, 2 processes
    python benchmarks/baselines_tables.py --table 2 --datasets german fourclass

It writes docs/results/opauc_table3.md and docs/results/oam_table2_baselines.md.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold, StratifiedShuffleSplit
from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, Normalizer

from aucstream import OAM, OPAUC
from aucstream.batch import LSSVMAUC, SVMOR, BatchUnivariate, SVMPerfAUC
from aucstream.datasets import load_dataset
from aucstream.online_classifiers import (
    ConfidenceWeighted,
    CostSensitivePA,
    PassiveAggressive,
    Perceptron,
)

ROOT = Path(__file__).resolve().parents[1]
N_SPLITS = 5
INNER_FOLDS = 3
BATCH_CAP = 8000
TUNE_CAP_ONLINE = 20000


def _pow2(lo, hi, step=1):
    return [2.0**k for k in range(lo, hi + 1, step)]


# ----------------------------------------------------------------- paper numbers
G16_T3_COLUMNS = ["OPAUC", "SVM-perf", "SVM-OR", "LS-SVM", "Uni-Log", "Uni-Squ"]
G16_T3 = {  # G16 Table 3, mean and std of the test AUC over 25 runs
    "diabetes": [
        (0.8309, 0.0350),
        (0.8325, 0.0220),
        (0.8326, 0.0328),
        (0.8325, 0.0329),
        (0.8330, 0.0322),
        (0.8332, 0.0323),
    ],
    "fourclass": [
        (0.8310, 0.0251),
        (0.8221, 0.0381),
        (0.8305, 0.0311),
        (0.8309, 0.0309),
        (0.8288, 0.0307),
        (0.8297, 0.0310),
    ],
    "german": [
        (0.7978, 0.0347),
        (0.7952, 0.0340),
        (0.7935, 0.0348),
        (0.7994, 0.0343),
        (0.7995, 0.0344),
        (0.7990, 0.0342),
    ],
    "splice": [
        (0.9232, 0.0099),
        (0.9235, 0.0091),
        (0.9239, 0.0089),
        (0.9245, 0.0092),
        (0.9208, 0.0107),
        (0.9211, 0.0107),
    ],
    "usps": [
        (0.9620, 0.0040),
        (0.9600, 0.0054),
        (0.9630, 0.0047),
        (0.9634, 0.0045),
        (0.9637, 0.0041),
        (0.9617, 0.0043),
    ],
    "letter": [
        (0.8114, 0.0065),
        (0.8028, 0.0074),
        (0.8144, 0.0064),
        (0.8124, 0.0065),
        (0.8121, 0.0061),
        (0.8112, 0.0061),
    ],
    "magic04": [
        (0.8383, 0.0077),
        (0.8427, 0.0078),
        (0.8426, 0.0074),
        (0.8379, 0.0078),
        (0.8378, 0.0073),
        (0.8338, 0.0073),
    ],
    "a9a": [
        (0.9002, 0.0047),
        (0.9033, 0.0039),
        (0.9009, 0.0036),
        (0.8982, 0.0028),
        (0.9033, 0.0025),
        (0.8967, 0.0028),
    ],
    "w8a": [
        (0.9633, 0.0035),
        (0.9626, 0.0042),
        (0.9495, 0.0082),
        (0.9495, 0.0092),
        (0.9421, 0.0062),
        (0.9075, 0.0104),
    ],
    "mnist": [
        (0.9242, 0.0021),
        (0.9338, 0.0022),
        (0.9340, 0.0020),
        (0.9336, 0.0025),
        (0.9334, 0.0021),
        (0.9279, 0.0021),
    ],
    "connect4": [
        (0.8760, 0.0023),
        (0.8794, 0.0024),
        (0.8749, 0.0025),
        (0.8739, 0.0026),
        (0.8784, 0.0026),
        (0.8760, 0.0024),
    ],
    "ijcnn1": [
        (0.9269, 0.0021),
        (0.9314, 0.0025),
        (0.9337, 0.0024),
        (0.9320, 0.0037),
        (0.9282, 0.0023),
        (0.9038, 0.0025),
    ],
}

Z11_T2_COLUMNS = ["Perceptron", "PA-I", "CW-full", "CPA_PB", "CPA_ML", "OAM_seq", "OAM_gra"]
Z11_T2 = {  # Z11 Table 2, mean and std of the test AUC over 20 runs
    "fourclass": [
        (0.690, 0.165),
        (0.668, 0.168),
        (0.758, 0.032),
        (0.812, 0.020),
        (0.812, 0.020),
        (0.831, 0.020),
        (0.826, 0.020),
    ],
    "magic04": [
        (0.723, 0.069),
        (0.564, 0.111),
        (0.746, 0.027),
        (0.730, 0.030),
        (0.734, 0.026),
        (0.778, 0.029),
        (0.765, 0.032),
    ],
    "german": [
        (0.701, 0.039),
        (0.701, 0.033),
        (0.757, 0.025),
        (0.698, 0.034),
        (0.701, 0.033),
        (0.775, 0.037),
        (0.773, 0.033),
    ],
    "ijcnn1": [
        (0.647, 0.088),
        (0.531, 0.074),
        (0.829, 0.021),
        (0.908, 0.012),
        (0.910, 0.011),
        (0.920, 0.017),
        (0.916, 0.018),
    ],
    "letter": [
        (0.551, 0.092),
        (0.533, 0.104),
        (0.804, 0.025),
        (0.784, 0.056),
        (0.802, 0.035),
        (0.820, 0.016),
        (0.817, 0.023),
    ],
}


# ----------------------------------------------------------------- learners, grids
def table3_learners():
    lam = _pow2(-10, 10, 2)
    return {
        "OPAUC": (OPAUC(), {"eta": _pow2(-12, -4, 2), "lam": _pow2(-10, 2, 3)}, False),
        "SVM-perf": (SVMPerfAUC(), {"C": [1.0 / (100.0 * v) for v in lam]}, True),
        "SVM-OR": (SVMOR(), {"lam": lam}, True),
        "LS-SVM": (LSSVMAUC(), {"lam": lam}, True),
        "Uni-Log": (BatchUnivariate(loss="log"), {"lam": lam}, True),
        "Uni-Squ": (BatchUnivariate(loss="squ"), {"lam": lam}, True),
    }


def table2_learners():
    c_grid = _pow2(-10, 10, 2)
    cpa = {"C": _pow2(-10, 10, 4), "rho_pos": _pow2(0, 10, 2)}
    return {
        "Perceptron": (Perceptron(), {}, False),
        "PA-I": (PassiveAggressive(), {"C": c_grid}, False),
        "CW-full": (ConfidenceWeighted(), {"eta": [0.5, 0.6, 0.7, 0.8, 0.9, 1.0]}, False),
        "CPA_PB": (CostSensitivePA(variant="pb"), dict(cpa), False),
        "CPA_ML": (CostSensitivePA(variant="ml"), dict(cpa), False),
        "OAM_seq": (OAM(update="seq", buffer_size=100), {"C": c_grid}, False),
        "OAM_gra": (OAM(update="gra", buffer_size=100), {"C": c_grid}, False),
    }


# ---------------------------------------------------------------------- datasets
# name: (registry name, binary rule, use the predefined test part too, note)
TABLE3_DATA = {
    "diabetes": ("diabetes", None, True, ""),
    "fourclass": ("fourclass", None, True, ""),
    "german": ("german", None, True, "german.numer_scale"),
    "splice": ("splice", None, True, "1,000 of the paper's 3,175 rows (splice.t missing)"),
    "usps": ("usps", "random_halves", True, "train + test = 9,298 rows"),
    "letter": ("letter", "random_halves", False, "train part, 15,000 rows as in Table 1"),
    "magic04": ("magic04", None, True, "g = +1"),
    "a9a": ("a9a", None, False, "train part, 32,561 rows as in Table 1"),
    "w8a": ("w8a", None, False, "train part, 49,749 rows as in Table 1"),
    "mnist": ("mnist", "random_halves", True, "10,000 test images only (paper: 60,000)"),
    "connect4": (
        "connect4",
        "random_halves",
        True,
        "one-hot 126 features; 3 classes, random_halves puts 1 class in the positive group",
    ),
    "ijcnn1": ("ijcnn1", None, True, "train + test = 141,691 rows"),
}
TABLE2_DATA = {
    "fourclass": ("fourclass", None, True, "+1 = minority (T-/T+ = 1.81)"),
    "magic04": ("magic04", ("one_vs_rest", "h"), True, "h = +1 (T-/T+ = 1.84)"),
    "german": ("german", None, True, "+1 = bad credit (T-/T+ = 2.33)"),
    "ijcnn1": ("ijcnn1", None, True, "train + test (T-/T+ = 9.45)"),
    "letter": ("letter", ("one_vs_rest", 8), False, "train part, class 8 (H) = +1 (T-/T+ = 26.88)"),
}


def load(spec):
    name, binary, all_parts, _ = spec
    ds = load_dataset(name, binary=binary, random_state=0, return_parts=not all_parts)
    X, y = ds.X, np.asarray(ds.y)
    if sp.issparse(X):
        X = X.tocsr().astype(np.float64)
    else:
        X = np.asarray(X, dtype=np.float64)
    return X, y


def scale(kind, X_train, X_test):
    if kind == "l2":
        norm = Normalizer()
        return norm.transform(X_train), norm.transform(X_test)
    scaler = MaxAbsScaler() if sp.issparse(X_train) else MinMaxScaler((-1, 1), clip=True)
    return scaler.fit_transform(X_train), scaler.transform(X_test)


def _subsample(y, cap, seed):
    if len(y) <= cap:
        return np.arange(len(y))
    sss = StratifiedShuffleSplit(n_splits=1, train_size=cap, random_state=seed)
    return np.sort(next(sss.split(np.zeros(len(y)), y))[0])


# --------------------------------------------------------------------------- runs
def run_task(dataset, method, est, grid, is_batch, X, y, splits, scaling, seed=0):
    """Tune on the first split, then train and test on every split."""
    warnings.simplefilter("ignore")
    t0 = time.process_time()
    cap = BATCH_CAP if is_batch else TUNE_CAP_ONLINE
    best = {}
    if grid:
        train, test = splits[0]
        Xtr, _ = scale(scaling, X[train], X[test])
        sub = _subsample(y[train], cap, seed)
        base = clone(est)
        if "shuffle" in base.get_params():
            base.set_params(shuffle=True, random_state=seed)
        search = GridSearchCV(
            base,
            grid,
            cv=StratifiedKFold(INNER_FOLDS, shuffle=True, random_state=seed),
            error_score=0.0,
            n_jobs=1,
        )
        search.fit(Xtr[sub], y[train][sub])
        best = search.best_params_
    aucs = []
    for k, (train, test) in enumerate(splits):
        Xtr, Xte = scale(scaling, X[train], X[test])
        ytr = y[train]
        model = clone(est).set_params(**best)
        if is_batch:
            keep = np.sort(np.random.default_rng(1000 + k).permutation(len(ytr))[:BATCH_CAP])
            Xtr, ytr = Xtr[keep], ytr[keep]
        else:
            model.set_params(shuffle=True, random_state=k)
        try:
            model.fit(Xtr, ytr)
            aucs.append(model.score(Xte, y[test]))
        except FloatingPointError:
            aucs.append(np.nan)
    return dict(
        dataset=dataset, method=method, params=best, aucs=aucs, cpu=time.process_time() - t0
    )


def run_table(data_specs, learners, scaling, n_jobs, only=None):
    tasks = []
    for dname, spec in data_specs.items():
        if only and dname not in only:
            continue
        try:
            X, y = load(spec)
        except (FileNotFoundError, OSError, ValueError) as err:
            print(f"  skip {dname}: {err}")
            continue
        sss = StratifiedShuffleSplit(n_splits=N_SPLITS, test_size=0.2, random_state=0)
        splits = list(sss.split(np.zeros(len(y)), y))
        print(f"  {dname}: n={X.shape[0]} d={X.shape[1]} pos={np.mean(y > 0):.3f}", flush=True)
        for method, (est, grid, is_batch) in learners.items():
            tasks.append((dname, method, est, grid, is_batch, X, y, splits, scaling))
    # biggest first, for load balance
    tasks.sort(key=lambda t: -t[5].shape[0] * (1 if t[4] else 3))
    return Parallel(n_jobs=n_jobs, verbose=5)(delayed(run_task)(*t) for t in tasks)


# ------------------------------------------------------------------------ reports
def _fmt(mean, std):
    return f"{mean:.4f} ± {std:.4f}"


def _fmt_params(params):
    out = []
    for k, v in params.items():
        if isinstance(v, float) and v > 0 and float(np.log2(v)).is_integer():
            out.append(f"{k}=2^{int(np.log2(v))}")
        elif isinstance(v, float):
            out.append(f"{k}={v:.3g}")
        else:
            out.append(f"{k}={v}")
    return ", ".join(out) or "-"


def write_report(path, title, intro, columns, paper, data_specs, results, digits=4, notes=()):
    by = {(r["dataset"], r["method"]): r for r in results}
    lines = [f"# {title}", "", *intro, ""]
    lines += ["| dataset | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    flagged = []
    for dname in data_specs:
        if not any((dname, c) in by for c in columns):
            continue
        cells = []
        for j, c in enumerate(columns):
            r = by.get((dname, c))
            if r is None:
                cells.append("n/a")
                continue
            a = np.asarray(r["aucs"], dtype=float)
            mean, std = np.nanmean(a), np.nanstd(a, ddof=1)
            pm, ps = paper[dname][j]
            mark = ""
            if abs(mean - pm) > ps:
                mark = " †"
                flagged.append((dname, c, mean - pm, ps))
            cells.append(
                f"{mean:.{digits}f} ± {std:.{digits}f}{mark}<br>"
                f"<sub>paper {pm:.{digits}f} ± {ps:.{digits}f}</sub>"
            )
        lines.append(f"| {dname} | " + " | ".join(cells) + " |")
    lines += ["", "† ours differs from the paper's mean by more than the paper's std.", ""]
    if notes:
        lines += ["## Where and why we differ", "", *notes, ""]
    lines += [
        "## Chosen hyperparameters (first split) and CPU seconds per learner",
        "",
        "| dataset | " + " | ".join(columns) + " |",
        "|---" * (len(columns) + 1) + "|",
    ]
    for dname in data_specs:
        if not any((dname, c) in by for c in columns):
            continue
        cells = [
            f"{_fmt_params(by[(dname, c)]['params'])} ({by[(dname, c)]['cpu']:.0f} s)"
            if (dname, c) in by
            else "n/a"
            for c in columns
        ]
        lines.append(f"| {dname} | " + " | ".join(cells) + " |")
    lines += ["", "## Data notes", ""]
    for dname, spec in data_specs.items():
        if any((dname, c) in by for c in columns):
            lines.append(f"- **{dname}**: {spec[3] or 'as in the paper'}")
    lines += ["", "## Per-split test AUC", "", "```"]
    for r in sorted(results, key=lambda r: (r["dataset"], r["method"])):
        lines.append(
            f"{r['dataset']:10s} {r['method']:10s} " + " ".join(f"{a:.4f}" for a in r["aucs"])
        )
    lines += ["```", ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))
    return flagged


# Read from the run of this script recorded in docs/results (same seeds); a rerun with
# other data or code should revisit them.
NOTES_T3 = [
    "- **SVM-perf = SVM-OR** in every row, by construction: one solver (SPEC §12.4), and "
    "the C grid is the lam grid mapped by C = 1/(100 lam). In G16 the two columns come "
    "from two programs with their own defaults.",
    "- **LS-SVM = Uni-Squ** in every row, by a theorem, not a coincidence: with class-prior "
    "weights and an unregularized intercept the Uni-Squ normal equations give "
    "w = (lam I + S+ + S- + dd'/2)^-1 d, a positive multiple of LS-SVM's "
    "(lam I + S+ + S- + dd')^-1 d (Sherman-Morrison; `tests/test_batch.py`). G16's "
    "Uni-Squ differs from its LS-SVM (w8a .9075 vs .9495, ijcnn1 .9038 vs .9320), so the "
    "paper's Uni-Squ was set up differently (weights or intercept); it does not say how.",
    "- **Whole-row shifts** (all six learners move together) come from the data, not the "
    "learners: letter (+.05), fourclass (+.03), german (-.03), splice (-.025), connect4 "
    "(-.015), usps (-.003 to -.013). splice has only the 1,000-row training file (paper "
    "3,175); mnist only the 10,000 test images; letter, usps, mnist and connect4 use our "
    "random_halves draw (seed 0), not the paper's unknown one; connect4 has 3 classes, "
    "which cannot be halved (ours: class 2, 66 % positive). With 5 splits instead of 25 "
    "runs our std is itself uncertain by about +-35 %.",
    "- **Within rows the paper's ordering holds**: OPAUC is the best learner on w8a "
    "(.9631 vs .951-.956; paper .9633 vs .9495 for the pairwise batch learners) and "
    "within .009 of the best batch learner on every other dataset; the largest gaps, "
    "usps (-.009) and ijcnn1 (-.008), are where G16 also has the batch learners ahead.",
]
NOTES_T2 = [
    "- **PA-I** is far above Z11 (e.g. ijcnn1 .917 vs .531, fourclass .850 vs .668): we "
    "tune C over 2^[-10:10] (SPEC §12.6 decision); Z11 gives no grid for PA and its PA-I "
    "is its worst learner. With small C, PA-I is a small-step hinge-loss SGD and ranks "
    "well. For the same reason **CPA_ML** (rho_pos of 1 or 4 chosen on four datasets) "
    "tracks PA-I.",
    "- **Perceptron** agrees with Z11 within its std except ijcnn1 (.858 vs .647); we "
    "cannot tell why (Z11's std of .088 there suggests strong order effects).",
    "- **CW-full** and **CPA_PB** are below Z11 and vary a lot between splits (CW on "
    "fourclass: split AUCs from .33 to .86). Both are mistake-driven last iterates "
    "without a bias; on unit-norm features (fourclass has 2 features, so only the angle "
    "is left) the last few mistakes swing the direction. Our CW matches the direct "
    "formula of SPEC §12.6 in tests; Z11 does not say how it scaled features, and we "
    "tune eta on the first split only. CPA_PB with C = 2^-10 and rho_pos = 1 is a scaled "
    "perceptron (ijcnn1: identical to the Perceptron column).",
    "- **OAM_seq / OAM_gra** are within Z11's std on fourclass, magic04 and german and "
    ".02-.03 below on ijcnn1 and letter. The chosen C is 2^-10, the lower edge of Z11's "
    "grid, on every dataset: on unit-norm data the best C lies below the paper's grid.",
]


PROTOCOL = [
    "**Reduced protocol** (not the paper's): 5 random stratified 80/20 train/test splits "
    "per dataset; hyperparameters chosen once, on the first split's training part, by "
    "3-fold stratified CV (AUC) on a coarse sub-grid of the paper's grid; online learners "
    f"tuned on a stratified subsample of at most {TUNE_CAP_ONLINE:,} training examples; "
    "then every learner is trained on each split's training part (online learners: one "
    "pass in a random order seeded by the split) and tested on its test part. "
    "Mean ± sample std over the 5 splits.",
]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", choices=["2", "3", "both"], default="both")
    parser.add_argument("--datasets", nargs="*", default=None)
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args(argv)
    t0 = time.time()
    if args.table in ("3", "both"):
        print("G16 Table 3", flush=True)
        t3 = time.time()
        res3 = run_table(TABLE3_DATA, table3_learners(), "pm1", args.n_jobs, args.datasets)
        intro = PROTOCOL + [
            "",
            f"Run time: {time.time() - t3:.0f} s wall with {args.n_jobs} processes.",
            "",
            "Sub-grids: OPAUC eta in 2^{-12,-10,...,-4}, lam in 2^{-10,-7,...,2} (G16 "
            "reports eta < 2^-4 works best); batch learners lam in 2^{-10,-8,...,10} "
            "(SVM-perf: C = 1/(100 lam)). Batch learners train on at most 8,000 examples "
            "(as in G16). Features scaled to [-1, 1] on the training part (min-max, or "
            "max-abs for sparse data); multi-class sets by random_halves (seed 0).",
            "",
            "Columns are G16 Table 3's: OPAUC = `aucstream.OPAUC`; SVM-perf = "
            "`batch.SVMPerfAUC`; SVM-OR = `batch.SVMOR`; LS-SVM = `batch.LSSVMAUC`; "
            "Uni-Log / Uni-Squ = `batch.BatchUnivariate`.",
        ]
        flagged = write_report(
            ROOT / "docs/results/opauc_table3.md",
            "G16 Table 3: OPAUC against batch learners (reproduction)",
            intro,
            G16_T3_COLUMNS,
            G16_T3,
            TABLE3_DATA,
            res3,
            notes=NOTES_T3,
        )
        print(f"Table 3 done, {len(flagged)} cells off by more than the paper's std")
    if args.table in ("2", "both"):
        print("Z11 Table 2", flush=True)
        t2 = time.time()
        res2 = run_table(TABLE2_DATA, table2_learners(), "l2", args.n_jobs, args.datasets)
        intro = PROTOCOL + [
            "",
            f"Run time: {time.time() - t2:.0f} s wall with {args.n_jobs} processes.",
            "",
            "Sub-grids: PA-I and OAM C in 2^{-10,-8,...,10}; CPA C in 2^{-10,-6,...,10} x "
            "rho_pos in 2^{0,2,...,10}; CW eta in {0.5,...,0.9,1.0 (run as 0.999)}; "
            "OAM buffers N+ = N- = 100. Features normalized to unit L2 norm (Z11 does not "
            "say; its lemmas assume |x| <= 1).",
            "",
            "Columns are Z11 Table 2's: Perceptron, PA-I = `online_classifiers.Perceptron`, "
            "`PassiveAggressive`; CW-full = `ConfidenceWeighted`; CPA_PB / CPA_ML = "
            "`CostSensitivePA(variant='pb' / 'ml')`; OAM_seq / OAM_gra = "
            "`aucstream.OAM(update='seq' / 'gra')`.",
        ]
        flagged = write_report(
            ROOT / "docs/results/oam_table2_baselines.md",
            "Z11 Table 2: online classifiers and OAM (reproduction)",
            intro,
            Z11_T2_COLUMNS,
            Z11_T2,
            TABLE2_DATA,
            res2,
            digits=3,
            notes=NOTES_T2,
        )
        print(f"Table 2 done, {len(flagged)} cells off by more than the paper's std")
    print(f"total wall time {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
