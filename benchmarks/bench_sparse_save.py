"""Model files of wide sparse learners: sparse against dense saves (issue 33).

FTRL-AUC and SPAM at their defaults learn ``n`` examples of a sparse stream over
d = 10^6 features (``k`` = 50 non-zeros a row drawn uniformly, unit-norm rows,
positive rate 0.05), then are saved twice: as :func:`aucstream.save_model` does
(arrays of at least 4,096 elements with at least 90% zeros stored sparse) and with
every array dense (``SPARSE_MIN_SIZE`` raised out of reach, the format before). For
each: the non-zeros of the learner's state arrays, the file's size, the best of
``--repeats`` save and load times (the machine is shared), and that both files load
to the same learner bit for bit.

Usage::

    python benchmarks/bench_sparse_save.py             # n = 2, 20, 200, 2000
    python benchmarks/bench_sparse_save.py --n 20 --d 1000000 --repeats 5
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from aucstream import FTRLAUC, SPAM, load_model, persistence, save_model


def stream(n: int, d: int, k: int = 50, seed: int = 0):
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), k)
    cols = rng.integers(0, d, size=n * k)
    X = sp.csr_matrix((rng.normal(size=n * k) / np.sqrt(k), (rows, cols)), shape=(n, d))
    y = np.where(rng.random(n) < 0.05, 1, -1)
    y[:2] = [1, -1]
    return X, y


def _arrays(model) -> dict[str, np.ndarray]:
    return {k: v for k, v in vars(model).items() if isinstance(v, np.ndarray)}


def measure(model, folder: Path, repeats: int) -> list[dict]:
    rows = []
    nnz = sum(int(np.count_nonzero(v)) for v in _arrays(model).values())
    size = sum(int(v.size) for v in _arrays(model).values())
    loaded = {}
    for form, limit in (("sparse", persistence.SPARSE_MIN_SIZE), ("dense", 1 << 62)):
        saves, loads = [], []
        old = persistence.SPARSE_MIN_SIZE
        persistence.SPARSE_MIN_SIZE = limit
        try:
            for _ in range(repeats):
                start = time.perf_counter()
                path = save_model(model, folder / form)
                saves.append(time.perf_counter() - start)
                start = time.perf_counter()
                loaded[form] = load_model(path)
                loads.append(time.perf_counter() - start)
        finally:
            persistence.SPARSE_MIN_SIZE = old
        rows.append(
            {
                "form": form,
                "nnz": nnz,
                "elements": size,
                "bytes": path.stat().st_size,
                "save_s": min(saves),
                "load_s": min(loads),
            }
        )
    for key, value in _arrays(model).items():
        for form in loaded:
            assert getattr(loaded[form], key).tobytes() == value.tobytes(), (form, key)
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[2, 20, 200, 2000])
    parser.add_argument("--d", type=int, default=10**6)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print("| learner | examples | non-zeros / elements | form | file (B) | save (s) | load (s) |")
    print("|---|---:|---:|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.n:
            X, y = stream(n, args.d)
            for cls in (FTRLAUC, SPAM):
                model = cls().partial_fit(X, y)
                for r in measure(model, Path(tmp), args.repeats):
                    print(
                        f"| {cls.__name__} | {n:,} | {r['nnz']:,} / {r['elements']:,} | "
                        f"{r['form']} | {r['bytes']:,} | {r['save_s']:.3f} | {r['load_s']:.3f} |"
                    )


if __name__ == "__main__":
    main()
