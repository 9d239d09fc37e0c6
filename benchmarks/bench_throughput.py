"""Throughput of one pass of every online learner, against SGDClassifier.partial_fit.

For a9a and ijcnn1 (from ``$AUCSTREAM_DATA``, default ``../shared/data``; or generated
streams of the same shape when the files are absent), each learner makes one pass over
the training file as a stream of chunks (``partial_fit``), after a warm-up call that
compiles its kernels. scikit-learn's ``SGDClassifier.partial_fit`` runs on the same
chunks in the same process, and the table gives examples per second and the ratio
(learner / SGD; above 1 means faster than SGD). Times are CPU time of the calling
thread (``time.thread_time``), best of ``--repeat`` passes.

Usage::

    python benchmarks/bench_throughput.py [--chunk-size 10000] [--repeat 3] [--learner OPAUC OAM]

``run(quick)`` gives the same measurements as rows for ``benchmarks/run.py`` (quick:
a9a only, best of 1).
"""

from __future__ import annotations

import argparse
import lzma
import os
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import SGDClassifier

import aucstream

DATA = Path(
    os.environ.get("AUCSTREAM_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data")
)
SHAPES = {"a9a": ("a9a.xz", 32561, 123, 0.11, 0.24), "ijcnn1": ("ijcnn1.xz", 49990, 22, 0.6, 0.1)}


def load(name: str):
    file, n, d, density, pos_rate = SHAPES[name]
    path = DATA / file
    if path.exists():
        X, y = load_svmlight_file(lzma.open(path), n_features=d)
        return X.tocsr(), y, "real"
    rng = np.random.default_rng(0)
    X = sp.random(n, d, density=density, format="csr", random_state=0)
    y = np.where(
        X @ rng.normal(size=d) + rng.normal(size=n)
        > np.quantile(X @ rng.normal(size=d), 1 - pos_rate),
        1.0,
        -1.0,
    )
    return X, y, "generated"


def one_pass(make, X, y, chunk: int) -> float:
    model = make()
    start = time.thread_time()
    for lo in range(0, X.shape[0], chunk):
        model.partial_fit(X[lo : lo + chunk], y[lo : lo + chunk], classes=np.array([-1.0, 1.0]))
    return time.thread_time() - start


def measure(datasets: list[str], names: list[str] | None, chunk: int, repeat: int) -> list[dict]:
    """One pass of each online learner and of SGDClassifier per dataset, as rows."""
    learners = dict(aucstream.all_estimators("online"))
    rows = []
    for dataset in datasets:
        X, y, source = load(dataset)
        sgd = min(one_pass(lambda: SGDClassifier(loss="hinge"), X, y, chunk) for _ in range(repeat))
        for name in names or list(learners):
            cls = learners[name]
            # a learner that plans its pass from the stream length is told it (FSAUC)
            length = cls.stream_length_param
            extra = {length: X.shape[0]} if length is not None else {}
            make = lambda cls=cls, extra=extra: cls(**extra)  # noqa: E731
            one_pass(make, X[:200], y[:200], 100)  # warm-up: compile the kernels
            best = min(one_pass(make, X, y, chunk) for _ in range(repeat))
            rows.append(
                {
                    "dataset": f"{dataset} ({source}, n={X.shape[0]}, d={X.shape[1]})",
                    "learner": name,
                    "chunk": chunk,
                    "rows_per_s": round(X.shape[0] / best),
                    "peer": "SGDClassifier(hinge).partial_fit",
                    "peer_rows_per_s": round(X.shape[0] / sgd),
                    "speed_vs_peer": round(sgd / best, 2),
                }
            )
    return rows


def run(quick: bool = False) -> list[dict]:
    """Rows for ``benchmarks/run.py``: every online learner at chunks of 10,000."""
    return measure(["a9a"] if quick else list(SHAPES), None, 10000, 1 if quick else 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunk-size", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many passes")
    parser.add_argument("--learner", nargs="+", default=None)
    parser.add_argument("--dataset", nargs="+", default=list(SHAPES))
    args = parser.parse_args()
    print(f"{'dataset':<40} {'learner':<20} {'examples/s':>12} {'vs SGD':>7}")
    for row in measure(args.dataset, args.learner, args.chunk_size, args.repeat):
        print(
            f"{row['dataset']:<40} {row['learner']:<20} {row['rows_per_s']:>12,} "
            f"{row['speed_vs_peer']:>7.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
