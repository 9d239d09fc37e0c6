"""Rows per second of ``OnlineStandardScaler.partial_fit_transform`` (each row scaled by
the statistics of the rows before it, then learnt), with and without forgetting,
against scikit-learn's ``StandardScaler`` fed the same chunks (``partial_fit`` then
``transform``: the batch peer, which scales a chunk by statistics that include it) in
the same process.

Dense Gaussian columns of mixed scales, 120,000 rows in chunks of 500, 20 and 200
wide; a CSR stream of 10,000 columns with 20 non-zeros a row, and one as wide as
hashed features (10^6 columns, 50 non-zeros a row at random columns, a sixth as many
rows), whose statistics miss the caches. The contenders
alternate, 5 rounds; each one's least CPU time is reported with its ratio to
scikit-learn's (greater than 1: slower).

Usage::

    python benchmarks/bench_scaler.py [--quick]
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp


def contenders(sparse: bool) -> dict:
    from sklearn.preprocessing import StandardScaler

    from aucstream.preprocessing import OnlineStandardScaler

    def online(half_life):
        def run(chunks):
            scaler = OnlineStandardScaler(half_life=half_life)
            for X in chunks:
                scaler.partial_fit_transform(X)

        return run

    def sklearn(chunks):
        scaler = StandardScaler(with_mean=not sparse)
        for X in chunks:
            scaler.partial_fit(X)
            scaler.transform(X)

    return {
        "StandardScaler (scikit-learn)": sklearn,
        "OnlineStandardScaler()": online(None),
        "OnlineStandardScaler(half_life=1e4)": online(1e4),
    }


def streams(n: int, chunk: int, widths: list[int], sparse_d: int) -> dict:
    rng = np.random.default_rng(0)
    out = {}
    for d in widths:
        X = rng.normal(size=(n, d)) * rng.uniform(0.1, 100.0, d) + rng.normal(size=d)
        out[f"dense, d = {d}"] = [X[i : i + chunk] for i in range(0, n, chunk)]
    X = sp.random(n, sparse_d, density=20 / sparse_d, format="csr", random_state=1)
    X.data = rng.normal(size=X.nnz) * 10.0
    out[f"CSR, d = {sparse_d:,}, 20 non-zeros a row"] = [
        X[i : i + chunk] for i in range(0, n, chunk)
    ]
    # a hashed row's non-zeros, at random columns of 10^6; a sixth as many rows
    # (scikit-learn's update costs O(d) a chunk: about 2,000 rows/s)
    k, m = 50, n // 6
    indices = rng.integers(0, WIDE, size=m * k).astype(np.int32)
    X = sp.csr_matrix((rng.normal(size=m * k) * 10.0, indices, np.arange(0, m * k + 1, k)))
    X.resize(m, WIDE)
    X.sum_duplicates()
    out[f"CSR, d = {WIDE:,}, {k} non-zeros a row"] = [X[i : i + chunk] for i in range(0, m, chunk)]
    return out


#: The width of the hashed-feature stream.
WIDE = 10**6


def run(quick: bool = False) -> list[dict]:
    """One row per stream and scaler: rows per second, and time over scikit-learn's
    (``quick``: 30,000 rows, 2 rounds)."""
    n, repeats = (30_000, 2) if quick else (120_000, 5)
    rows = []
    for name, chunks in streams(n, 500, [20, 200], 10_000).items():
        runs = contenders(sp.issparse(chunks[0]))
        for fn in runs.values():  # warm: numba's caches loaded
            fn(chunks[:4])
        best = {label: np.inf for label in runs}
        for _ in range(repeats):
            for label, fn in runs.items():
                start = time.process_time()
                fn(chunks)
                best[label] = min(best[label], time.process_time() - start)
        peer = best["StandardScaler (scikit-learn)"]
        for label, seconds in best.items():
            rows.append(
                {
                    "stream": name,
                    "scaler": label,
                    "rows_per_s": round(sum(c.shape[0] for c in chunks) / seconds),
                    "time_vs_sklearn": round(seconds / peer, 2),
                }
            )
    return rows


if __name__ == "__main__":
    from run import standalone

    standalone(run, __doc__)
