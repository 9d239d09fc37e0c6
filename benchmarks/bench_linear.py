"""Throughput of the O(d) online learners against SGDClassifier.partial_fit on a9a.

One pass over the a9a training file (32,561 rows, 123 binary features, rows
l2-normalized as in the SOLAM/FSAUC papers), fed as a stream of chunks of 1,000 and
10,000 rows to ``partial_fit``, once as CSR matrices and once as dense arrays.
scikit-learn's ``SGDClassifier.partial_fit`` gets the very same chunk objects in the
same run: hinge loss (its default) as the peer of the pairwise and margin learners,
log loss as the peer of UnivariateOnline(loss="log"). The chunks are sliced before
timing, so slicing is not measured. Each learner and each peer makes one warm-up
pass (numba compilation or cache load), then ``repeats`` passes, round-robin over all
of them so that a busy machine slows every one alike; the fastest pass counts.

``run(quick)`` returns one dict per (learner, layout, chunk): examples per second,
the peer's examples per second in the same run and their ratio (above 1: faster
than SGD). ``quick=True`` runs the first 8,000 rows, one timed pass, chunks of 1,000.

Usage::

    python benchmarks/bench_linear.py [--quick] [--repeats 3] [--only "FSAUC,SOLAML1"]

``--only`` keeps the learners whose names contain one of the comma-separated words
(their SGD peers always run).

The data folder is ``$AUCSTREAM_DATA`` or ``../shared/data`` next to the repository;
without the file, a generated sparse stream of a9a's shape is used (said in the rows).
"""

from __future__ import annotations

import argparse
import lzma
import os
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import SGDClassifier
from sklearn.preprocessing import normalize

from aucstream import (
    FSAUC,
    SOLAM,
    SOLAML1,
    CostSensitivePA,
    PassiveAggressive,
    Perceptron,
    UnivariateOnline,
)

DATA = Path(
    os.environ.get("AUCSTREAM_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data")
)
CLASSES = np.array([-1, 1])


def load_a9a(limit: int | None = None) -> tuple[sp.csr_matrix, np.ndarray, str]:
    """a9a's training rows (l2-normalized), or a generated stream of the same shape."""
    path = DATA / "a9a.xz"
    if path.exists():
        with lzma.open(path) as fh:
            X, y = load_svmlight_file(fh, n_features=123)
        source = "a9a"
    else:
        rng = np.random.default_rng(0)
        X = sp.random(32561, 123, density=0.113, format="csr", random_state=0, data_rvs=np.ones)
        y = np.where(X @ rng.normal(size=123) + 0.5 * rng.normal(size=32561) > 1.0, 1, -1)
        source = "generated (a9a not found)"
    X, y = normalize(X).tocsr(), np.where(y > 0, 1, -1)
    if limit is not None:
        X, y = X[:limit], y[:limit]
    return X, y, source


def learners(n: int) -> dict[str, tuple]:
    """name -> (factory, name of the SGD peer). Parameters: the a9a settings of the
    tests (tuned in L18 Table 2's protocol); "R=1" makes the l1 ball active at almost
    every step (an O(d) projection per example)."""
    return {
        "SOLAM": (lambda: SOLAM(R=10.0, zeta=16.0), "SGD hinge"),
        "SOLAML1": (lambda: SOLAML1(R=100.0, zeta=2.0), "SGD hinge"),
        "SOLAML1 R=1": (lambda: SOLAML1(R=1.0, zeta=2.0), "SGD hinge"),
        "FSAUC": (lambda: FSAUC(R=100.0, eta1=2.0**-4, n_samples=n), "SGD hinge"),
        "FSAUC R=1": (lambda: FSAUC(R=1.0, eta1=2.0**-4, n_samples=n), "SGD hinge"),
        "UnivariateOnline": (lambda: UnivariateOnline(loss="log", eta=2.0**-3), "SGD log"),
        "PassiveAggressive": (lambda: PassiveAggressive(C=1.0), "SGD hinge"),
        "CostSensitivePA": (lambda: CostSensitivePA(variant="ml", rho_pos=4.0), "SGD hinge"),
        "Perceptron": (lambda: Perceptron(), "SGD hinge"),
    }


PEERS = {
    "SGD hinge": lambda: SGDClassifier(loss="hinge", random_state=0),
    "SGD log": lambda: SGDClassifier(loss="log_loss", random_state=0),
}


def one_pass(make, chunks) -> float:
    """Seconds of one pass of ``partial_fit`` over the chunks, for a fresh model."""
    model = make()
    start = time.perf_counter()
    for X, y in chunks:
        model.partial_fit(X, y, classes=CLASSES)
    return time.perf_counter() - start


def run(quick: bool = False, repeats: int = 3, only: str | None = None) -> list[dict]:
    """Examples per second of every learner and its SGD peer, per layout and chunk size.

    Parameters
    ----------
    quick : bool, default=False
        8,000 rows, chunks of 1,000 only, one timed pass (a smoke run).
    repeats : int, default=3
        Timed passes per learner (best counts); ignored with ``quick``.
    only : str, optional
        Comma-separated words: keep the learners whose names contain one of them.

    Returns
    -------
    list of dict
        Keys: benchmark, data, learner, layout, chunk, rows_per_s, peer,
        peer_rows_per_s, ratio, repeats.
    """
    X, y, source = load_a9a(8000 if quick else None)
    n = X.shape[0]
    sizes = [1000] if quick else [1000, 10000]
    repeats = 1 if quick else repeats
    candidates = learners(n)
    if only:
        words = [word.strip() for word in only.split(",") if word.strip()]
        candidates = {k: v for k, v in candidates.items() if any(w in k for w in words)}
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for layout in ("csr", "dense"):
            data = X if layout == "csr" else X.toarray()
            for size in sizes:
                chunks = [(data[lo : lo + size], y[lo : lo + size]) for lo in range(0, n, size)]
                makers = {name: make for name, (make, _) in candidates.items()}
                makers.update({peer: PEERS[peer] for _, peer in candidates.values()})
                for make in makers.values():
                    one_pass(make, chunks[:2])  # warm-up: compilation / cache load
                best = dict.fromkeys(makers, np.inf)
                for _ in range(repeats):  # round-robin
                    for name, make in makers.items():
                        best[name] = min(best[name], one_pass(make, chunks))
                for name, (_, peer) in candidates.items():
                    rows.append(
                        {
                            "benchmark": "linear",
                            "data": source,
                            "learner": name,
                            "layout": layout,
                            "chunk": size,
                            "rows_per_s": n / best[name],
                            "peer": f"SGDClassifier.partial_fit ({peer.split()[1]} loss)",
                            "peer_rows_per_s": n / best[peer],
                            "ratio": best[peer] / best[name],
                            "repeats": repeats,
                        }
                    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default=None, help="comma-separated learner name parts")
    args = parser.parse_args()
    rows = run(quick=args.quick, repeats=args.repeats, only=args.only)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"data: {rows[0]['data']}; best of {rows[0]['repeats']}; load average {load:.1f}")
    print(f"{'learner':<20}{'layout':<7}{'chunk':>7}{'rows/s':>12}{'SGD rows/s':>12}{'ratio':>7}")
    for r in rows:
        print(
            f"{r['learner']:<20}{r['layout']:<7}{r['chunk']:>7}{r['rows_per_s']:>12,.0f}"
            f"{r['peer_rows_per_s']:>12,.0f}{r['ratio']:>7.2f}  vs {r['peer']}"
        )


if __name__ == "__main__":
    main()
