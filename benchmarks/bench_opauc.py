"""OPAUC with the full covariance on dense rows, against the same work done by BLAS.

Per example, OPAUC (covariance="full") adds x to its class's scatter (a rank-one
update, O(d^2)) and multiplies the opposite class's scatter by w (O(d^2)); the rest is
O(d). The peer does that same per-example work with a Python loop calling
``scipy.linalg.blas.dger`` (the rank-one update of the own class's d x d scatter,
in place) and ``dgemv`` (the opposite class's scatter times w), plus the O(d) step
in NumPy; single-threaded BLAS (``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` and
``MKL_NUM_THREADS`` are set to 1 before NumPy loads, when not already set). A
second peer is the plain NumPy reference recursion (``opauc_gradient`` on
``FullCovariance`` summaries, one example at a time, as the tests use it).

Data: Gaussian rows (a dense stream, labels from a random hyperplane), d = 123,
300, 784, 2000. Each measurement is the fastest of ``repeats`` passes after a
warm-up (numba compilation or cache load), learner and peers interleaved so that a
busy machine slows them alike. ``run(quick)`` returns one row per (d, peer): the
learner's rows/s, the peer's, and their ratio (above 1: OPAUC faster).

Usage::

    python benchmarks/bench_opauc.py [--quick] [--repeats 3]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from scipy.linalg import blas  # noqa: E402

from aucstream import OPAUC  # noqa: E402
from aucstream.covariance import FullCovariance  # noqa: E402
from aucstream.opauc import opauc_gradient  # noqa: E402

ETA, LAM = 2.0**-8, 2.0**-8
DIMS = (123, 300, 784, 2000)


def stream(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """n dense Gaussian rows (scaled to unit expected norm) and +/-1 labels."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    y = np.where(X @ rng.normal(size=d) + 0.1 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def opauc_pass(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """One pass of OPAUC(covariance="full") over the rows (one chunk)."""
    return OPAUC(eta=ETA, lam=LAM).partial_fit(X, y, classes=[-1, 1]).w_


def blas_pass(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The same per-example work as a Python loop over BLAS dger + dgemv."""
    d = X.shape[1]
    P = [np.zeros((d, d), order="F"), np.zeros((d, d), order="F")]
    sums, counts = [np.zeros(d), np.zeros(d)], [0, 0]
    w = np.zeros(d)
    for x, label in zip(X, y):
        c = int(label > 0)
        o = 1 - c
        P[c] = blas.dger(1.0, x, x, a=P[c], overwrite_a=True)
        sums[c] += x
        counts[c] += 1
        if counts[o] == 0:
            continue
        t = counts[o]
        mean = sums[o] / t
        cov_w = blas.dgemv(1.0 / t, P[o], w) - mean * (mean @ w)
        e = x - mean
        w -= ETA * (LAM * w - label * e + e * (e @ w) + cov_w)
    return w


def numpy_pass(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The NumPy reference recursion (``opauc_gradient`` on ``FullCovariance``)."""
    d = X.shape[1]
    stats = [FullCovariance(d), FullCovariance(d)]
    w = np.zeros(d)
    for x, label in zip(X, y):
        c = int(label > 0)
        stats[c].update(x[None, :])
        if stats[1 - c].count:
            w -= ETA * opauc_gradient(w, x, float(label), stats[1 - c], LAM)
    return w


def _rows(d: int, quick: bool) -> int:
    """Rows per pass: about the same total work at every d."""
    budget = 2e8 if quick else 1e9
    return int(min(20000, max(200, budget / d**2)))


def run(quick: bool = False, repeats: int = 3) -> list[dict]:
    """Rows per second of OPAUC full (dense) and its peers at each d (see module)."""
    repeats = 1 if quick else repeats
    results = []
    for d in DIMS[:3] if quick else DIMS:
        n = _rows(d, quick)
        X, y = stream(n, d)
        passes = {"OPAUC": opauc_pass, "BLAS dger+dgemv loop": blas_pass}
        if d <= 784:
            passes["NumPy reference"] = numpy_pass
        ref = {name: f(X[:50], y[:50]) for name, f in passes.items()}  # warm-up
        np.testing.assert_allclose(ref["OPAUC"], ref["BLAS dger+dgemv loop"], rtol=1e-8, atol=1e-12)
        best = dict.fromkeys(passes, np.inf)
        for _ in range(repeats):
            for name, f in passes.items():
                start = time.perf_counter()
                f(X, y)
                best[name] = min(best[name], time.perf_counter() - start)
        for peer in list(passes)[1:]:
            results.append(
                {
                    "benchmark": "OPAUC full covariance, dense rows",
                    "name": "OPAUC(covariance='full')",
                    "d": d,
                    "rows": n,
                    "rows_per_s": n / best["OPAUC"],
                    "peer": peer,
                    "peer_rows_per_s": n / best[peer],
                    "ratio": best[peer] / best["OPAUC"],
                }
            )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"{'d':>6}{'rows/s':>12}{'peer rows/s':>14}{'ratio':>8}  peer")
    for r in run(args.quick, args.repeats):
        print(
            f"{r['d']:>6}{r['rows_per_s']:>12,.0f}{r['peer_rows_per_s']:>14,.0f}"
            f"{r['ratio']:>8.2f}  {r['peer']}"
        )


if __name__ == "__main__":
    main()
