"""Rows per second of ``OnlineStandardScaler.partial_fit_transform`` (each row scaled by
the statistics of the rows before it, then learnt), with and without forgetting,
against scikit-learn's ``StandardScaler`` fed the same chunks (``partial_fit`` then
``transform``: the batch peer, which scales a chunk by statistics that include it) in
the same process.

Dense Gaussian columns of mixed scales, ``--n`` rows (120,000) in chunks of ``--chunk``
(500), for each width of ``--widths`` (20 and 200); a CSR stream of ``--sparse-d``
columns (10,000) with 20 non-zeros a row. The contenders alternate, ``--repeats``
times (5); each one's least time is reported with its ratio to scikit-learn's
(greater than 1: slower).

Usage::

    python benchmarks/bench_scaler.py [--n 120000] [--repeats 5]
"""

from __future__ import annotations

import argparse
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
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=120_000)
    parser.add_argument("--chunk", type=int, default=500)
    parser.add_argument("--widths", type=int, nargs="+", default=[20, 200])
    parser.add_argument("--sparse-d", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print("| stream | scaler | rows/s | time / scikit-learn's |")
    print("|---|---|---:|---:|")
    for name, chunks in streams(args.n, args.chunk, args.widths, args.sparse_d).items():
        runs = contenders(sp.issparse(chunks[0]))
        for run in runs.values():  # warm: numba's caches loaded
            run(chunks[:4])
        best = {label: np.inf for label in runs}
        for _ in range(args.repeats):
            for label, run in runs.items():
                start = time.process_time()
                run(chunks)
                best[label] = min(best[label], time.process_time() - start)
        peer = best["StandardScaler (scikit-learn)"]
        for label, seconds in best.items():
            print(f"| {name} | {label} | {args.n / seconds:,.0f} | {seconds / peer:.2f} |")


if __name__ == "__main__":
    main()
