"""The one pass in practice: tuning-free learning on raw data against offline tuning.

For every shared dataset in its raw (stored) form, an imbalanced generated stream and
a fraud-like stream of very different column ranges, this measures

- ``StreamPipeline()`` — the online scaler in front of ``OnePassSearch()``, with no
  argument: one pass over the raw training stream (a dataset's training part in one
  random order, seed 0, the same for every contender; the generated streams in their
  order); its test AUC, time and the learner it chose;
- the best single learner tuned offline: every online AUC learner on pre-scaled data
  (features to [-1, 1] from the training part, as the papers do), its grid searched
  by 5-fold cross-validated AUC (coarse grid; tuning on at most ``TUNE_ROWS`` rows),
  retrained on the whole training part; the best test AUC over the learners;
- for the small datasets (no test file, fewer than ``SMALL`` training rows) both AUCs
  are the mean over ``SPLITS`` stratified splits;
- one pass of ``StreamPipeline(OnlineStandardScaler(), OPAUC())`` on the same raw
  stream (the cost unit: one default learner behind the same scaler).

Run ``python benchmarks/bench_onepass.py [--quick]``; results go to
``docs/results/onepass.md``. ``run(quick)`` returns the rows for ``benchmarks/run.py``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

import aucstream
from aucstream import OPAUC, StreamPipeline
from aucstream.datasets import load_dataset
from aucstream.evaluation import coarse_grid, tune_and_test
from aucstream.preprocessing import MinMaxScalerPM1, OnlineStandardScaler

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("AUCSTREAM_DATA", ROOT.parent / "shared" / "data"))
DATASETS = [
    "a9a", "ijcnn1", "w8a", "magic04", "german_raw", "diabetes", "fourclass", "splice",
    "usps", "letter", "connect4",
]  # fmt: skip
TUNE_ROWS = 20000
#: The tuned baselines: every online AUC learner of the papers.
TUNED = ["OPAUC", "OAM", "AdaOAM", "SOLAM", "FSAUC", "UnivariateOnline"]


def make_imbalanced(seed: int = 0):
    """The issue's imbalanced stream: 100k training rows in order, the last 20k test."""
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=120000,
        n_features=100,
        n_informative=20,
        n_redundant=10,
        weights=[0.98],
        flip_y=0.01,
        random_state=seed,
    )
    return X[:100000], y[:100000], X[100000:], y[100000:]


def make_fraud(n: int = 1_000_000, seed: int = 0):
    """A fraud-like stream: 30 columns of very different ranges, 0.5% positives.

    28 anonymized components (unit normal), an amount (log-normal, in the hundreds,
    heavy-tailed) and a time column (seconds, growing); the log-odds of fraud depend
    on a few components, the log amount and an interaction, with the intercept set so
    that 0.5% of rows are positive. The last 20% of the rows are the test part.
    """
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 28))
    amount = np.exp(rng.normal(4.5, 1.2, size=n))  # median ~ 90, tail in the thousands
    seconds = np.sort(rng.uniform(0, 172800, size=n))
    logit = (
        1.2 * Z[:, 0]
        - 0.9 * Z[:, 3]
        + 0.7 * Z[:, 7] * Z[:, 8]
        + 0.6 * (np.log(amount) - 4.5)
        + 0.5 * Z[:, 12]
    )
    intercept = np.quantile(logit + rng.logistic(size=n), 0.995)
    y = (logit + rng.logistic(size=n) > intercept).astype(int)
    X = np.column_stack([seconds, Z, amount])
    cut = int(0.8 * n)
    return X[:cut], y[:cut], X[cut:], y[cut:]


def load(name: str, seed: int = 0):
    """Raw training and test arrays of a shared dataset (its test file, else 80/20),
    the training part in one random order (seed 0) that every contender sees: some
    files are sorted (w8a holds all its positives in its first tenth), and the papers
    shuffle."""
    Xtr, ytr, Xte, yte = _load_parts(name, seed)
    order = np.random.default_rng(seed).permutation(len(ytr))
    return Xtr[order], ytr[order], Xte, yte


def _load_parts(name: str, seed: int = 0):
    from sklearn.model_selection import train_test_split

    if name == "german_raw":  # german.numer as distributed, unscaled
        from aucstream.datasets import load_file

        X, y = load_file(DATA / "german.numer.xz", n_features=24)
    else:
        data = load_dataset(name, data_home=DATA, return_parts=True)
        if data.has_test:
            return data.X, data.y, data.X_test, data.y_test
        X, y = data.X, data.y
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, stratify=y, random_state=seed)
    return Xtr, ytr, Xte, yte


#: Datasets without a test file and with fewer training rows than this are measured
#: over ``SPLITS`` stratified 80/20 splits (each with its own training order), both
#: contenders on the same splits: a test part of ~150 rows has an AUC standard error
#: near 0.03, far above the 0.005 the comparison is about. Over 5 splits the tuned
#: baseline's mean still moved by up to 0.009 with the splits' seeds; over 20 the
#: paired gap has a standard error near 0.002 (reported beside it).
SMALL, SPLITS = 5000, 20


def _best_time(make, X, y, repeats: int):
    """The fitted model and the least CPU time of ``repeats`` fits from scratch (CPU
    time of this process: other processes on a shared machine disturb it less than
    the wall clock; the learners run on one thread)."""
    best = float("inf")
    for _ in range(repeats):
        model = make()
        tic = time.process_time()
        model.fit(X, y)
        best = min(best, time.process_time() - tic)
    return model, best


def one_pass_search(Xtr, ytr, Xte, yte) -> dict:
    repeats = 5 if len(ytr) < 20000 else 1  # short passes: the least of 5 times each
    model, seconds = _best_time(StreamPipeline, Xtr, ytr, repeats)
    _, opauc_seconds = _best_time(
        lambda: StreamPipeline(OnlineStandardScaler(), OPAUC()), Xtr, ytr, repeats
    )
    search = model.estimator_
    board = search.leaderboard_
    members = [repr(search.candidates_[i]) for i in search.ensemble_ if i >= 0]
    return {
        "auc": model.score(Xte, yte),
        "seconds": seconds,
        "chosen": " + ".join(members),
        "diverged": int((board["status"] == "diverged").sum()),
        "opauc_seconds": opauc_seconds,
    }


def tuned_best(Xtr, ytr, Xte, yte, quick: bool) -> dict:
    if hasattr(Xtr, "toarray"):  # scikit-learn's MinMaxScaler is dense only
        Xtr, Xte = Xtr.toarray(), Xte.toarray()
    scaler = MinMaxScalerPM1().fit(Xtr)
    Str, Ste = scaler.transform(Xtr), scaler.transform(Xte)
    rows = np.random.default_rng(0).permutation(len(ytr))[:TUNE_ROWS]
    classes = dict(aucstream.all_estimators("online"))
    best = {"auc": -1.0}
    for name in TUNED[:2] if quick else TUNED:
        cls = classes[name]
        grid = coarse_grid(cls.param_grid, max_values=3 if quick else 6)
        extra = {"n_samples": len(rows)} if cls.stream_length_param else {}
        if "random_state" in cls().get_params():  # OAM's reservoir: the same table each run
            extra["random_state"] = 0
        params, _, _, _ = tune_and_test(
            cls(**extra), Str[rows], ytr[rows], Ste, yte, grid=grid, cv=5, random_state=0
        )
        final = {**params}
        if "random_state" in extra:
            final["random_state"] = 0
        if cls.stream_length_param:
            final[cls.stream_length_param] = len(ytr)
        try:
            auc = cls(**final).fit(Str, ytr).score(Ste, yte)
        except FloatingPointError:
            auc = float("nan")
        if auc > best["auc"]:
            best = {"auc": auc, "learner": name, "params": params}
    return best


def run(quick: bool = False) -> list[dict]:
    streams = {"imbalanced": make_imbalanced}
    streams["fraud"] = (lambda: make_fraud(200_000)) if quick else make_fraud
    names = ["diabetes", "german_raw", "a9a"] if quick else DATASETS
    out = []
    for name in [*names, *streams]:
        try:
            parts = streams[name]() if name in streams else load(name)
        except FileNotFoundError as error:
            print(f"{name}: skipped ({error})", file=sys.stderr)
            continue
        ours = one_pass_search(*parts)
        tuned = tuned_best(*parts, quick=quick)
        splits = SPLITS if name not in streams and len(parts[1]) < SMALL else 1
        ours_auc, tuned_auc = [ours["auc"]], [tuned["auc"]]
        for seed in range(1, splits):
            more = load(name, seed)
            ours_auc.append(one_pass_search(*more)["auc"])
            tuned_auc.append(tuned_best(*more, quick=quick)["auc"])
        row = {
            "dataset": name,
            "n_train": len(parts[1]),
            "splits": splits,
            "onepass_auc": float(np.mean(ours_auc)),
            "onepass_seconds": ours["seconds"],
            "chosen": ours["chosen"],
            "diverged_candidates": ours["diverged"],
            "tuned_auc": float(np.mean(tuned_auc)),
            "tuned_learner": f"{tuned.get('learner')} {tuned.get('params')}",
            "gap": float(np.mean(ours_auc) - np.mean(tuned_auc)),
            "gap_se": float(np.std(np.subtract(ours_auc, tuned_auc), ddof=1) / np.sqrt(splits))
            if splits > 1
            else float("nan"),
            "gap_first_split": ours_auc[0] - tuned_auc[0],
            "cost_vs_opauc": ours["seconds"] / ours["opauc_seconds"],
        }
        print(row, file=sys.stderr, flush=True)
        out.append(row)
    return out


def write(rows: list[dict], path: Path) -> None:
    lines = [
        "# One pass in practice: `StreamPipeline()` on raw data vs offline tuning",
        "",
        "Generated by `python benchmarks/bench_onepass.py`. `StreamPipeline()` (online "
        "scaler + `OnePassSearch()`, no argument) makes one pass over the raw training "
        "stream; the tuned baseline is the best of the online AUC learners on "
        "data pre-scaled to [-1, 1] (seeded: random_state=0 where a learner draws), each "
        "tuned by 5-fold CV on its coarse grid (tuning "
        f"on at most {TUNE_ROWS} rows), retrained on the training part. Cost: time of "
        "the search's pass over the time of one default `OPAUC()` pass behind the same "
        "online scaler on the same stream (CPU time; on training parts under 20,000 rows, the "
        "least of 5 times each). The shared datasets' training parts are fed in "
        "one random order (seed 0; w8a's file holds all its positives first); the "
        "generated streams in their order. Datasets without a test file and with fewer "
        f"than {SMALL} training rows: the mean over {SPLITS} stratified 80/20 splits "
        "(each with its own order; both contenders on the same splits) and the standard "
        "error of the paired gap, the other columns from the first split. The scoring "
        "candidates: those whose calibrated log-odds the search averages at the end "
        "(`ensemble_`, the leader first).",
        "",
        "| dataset | n train | splits | one-pass AUC | tuned best AUC | gap | gap s.e. "
        "| tuned learner | scoring candidates (search) | cost / OPAUC pass "
        "| diverged candidates |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['dataset']} | {r['n_train']} | {r['splits']} | {r['onepass_auc']:.4f} | "
            f"{r['tuned_auc']:.4f} | {r['gap']:+.4f} | {_se(r['gap_se'])} | "
            f"{r['tuned_learner']} | "
            f"{r['chosen']} | {r['cost_vs_opauc']:.1f} | {r['diverged_candidates']} |"
        )
    lines += ["", _reading(rows)]
    path.write_text("\n".join(lines) + "\n")


def _se(value: float) -> str:
    return "" if np.isnan(value) else f"{value:.4f}"


def _reading(rows: list[dict]) -> str:
    """The table's summary: how many streams are within 0.005, the cost range."""
    within = [r["dataset"] for r in rows if r["gap"] >= -0.005]
    behind = [f"{r['dataset']} ({r['gap']:+.4f})" for r in rows if r["gap"] < -0.005]
    above = [r["dataset"] for r in rows if r["gap"] > 0]
    costs = [r["cost_vs_opauc"] for r in rows]
    imbalanced = [r["onepass_auc"] for r in rows if r["dataset"] == "imbalanced"]
    text = (
        f"Reading (this run): within 0.005 of the offline-tuned best on {len(within)} of "
        f"{len(rows)} streams and above it on {len(above)}"
        + (f"; behind by more on {', '.join(behind)}" if behind else "")
        + f". The search's pass cost {min(costs):.1f}-{max(costs):.1f} times one default "
        "OPAUC pass behind the same scaler (on the smallest datasets the whole pass takes "
        "hundredths of a second, so that ratio is noisy)."
    )
    if imbalanced:
        text += f" The imbalanced stream: {imbalanced[0]:.4f}."
    return text + (
        " The candidates' windowed AUC on a training stream cannot see a shift between a "
        "training file and its test file (ijcnn1's test AUCs are 5-10 points below its "
        "training prequential AUCs), which bounds what any prequential choice can do."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rows = run(args.quick)
    write(rows, ROOT / "docs" / "results" / "onepass.md")


if __name__ == "__main__":
    main()
