"""The streaming readers against the libraries' readers, rows per second.

- LIBSVM: :func:`aucstream.datasets.iter_svmlight` (chunks of 10,000 rows; with
  ``n_features`` given, one pass; without, two passes) against scikit-learn's
  ``load_svmlight_file`` on a9a and ijcnn1 from ``$AUCSTREAM_DATA`` — the plain file
  (decompressed once into a temporary folder) and the ``.xz`` file as stored
  (``load_svmlight_file(lzma.open(...))``) — and on a generated file written by
  ``dump_svmlight_file`` (17 significant digits: numbers the compiled parser leaves
  to numpy). Without the data folder only the generated file is read.
- CSV: :func:`aucstream.datasets.iter_csv` against pandas' chunked ``read_csv``
  (chunks of 10,000 rows), on a generated file of 200,000 rows x 20 features with a
  label column (plain and gzip), and on magic04 from the data folder.

Times are CPU time of the calling thread (``time.thread_time``; both sides parse in
that thread), best of several rounds.

Usage::

    python benchmarks/bench_readers.py [--quick]
"""

from __future__ import annotations

import gzip
import lzma
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

DATA = Path(
    os.environ.get("AUCSTREAM_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data")
)


def best(fn, rounds: int) -> float:
    """Best CPU seconds of ``fn()`` over ``rounds`` calls."""
    seconds = float("inf")
    for _ in range(rounds):
        start = time.thread_time()
        fn()
        seconds = min(seconds, time.thread_time() - start)
    return seconds


def _count(chunks) -> int:
    return sum(y.shape[0] for _, y in chunks)


def _row(fmt: str, file: str, reader: str, n: int, ours: float, peer: str, theirs: float):
    """One result: ``n`` rows read in ``ours`` seconds, the peer in ``theirs``."""
    return {
        "format": fmt,
        "file": file,
        "reader": reader,
        "rows": n,
        "rows_per_s": round(n / ours),
        "peer": peer,
        "peer_rows_per_s": round(n / theirs),
        "speed_vs_peer": round(theirs / ours, 2),
    }


def _svmlight_files(folder: Path, quick: bool) -> list[tuple[str, Path]]:
    """(name, file) of the LIBSVM files to read."""
    from sklearn.datasets import dump_svmlight_file

    files = []
    for name in ("a9a", "ijcnn1"):
        stored = DATA / f"{name}.xz"
        if stored.exists():
            plain = folder / name
            with lzma.open(stored) as src, open(plain, "wb") as dst:
                shutil.copyfileobj(src, dst)
            files.append((f"{name} (plain)", plain))
            files.append((f"{name}.xz", stored))
    rng = np.random.default_rng(0)
    n = 20000 if quick else 50000
    X = sp.random(n, 300, density=0.05, format="csr", random_state=0)
    X.data = rng.normal(size=X.nnz) * 10.0 ** rng.integers(-5, 5, X.nnz)
    generated = folder / "generated.svm"
    dump_svmlight_file(
        X, np.where(rng.random(n) < 0.3, 1.0, -1.0), str(generated), zero_based=False
    )
    files.append(("generated, 17 digits (plain)", generated))
    return files


def svmlight_cases(folder: Path, quick: bool) -> list[tuple]:
    """(format, file, reader, our reading, peer, peer's reading) of LIBSVM files."""
    from sklearn.datasets import load_svmlight_file

    from aucstream.datasets import iter_svmlight

    cases = []
    for name, path in _svmlight_files(folder, quick):

        def reference(path=path):
            source = lzma.open(path) if path.suffix == ".xz" else str(path)
            return load_svmlight_file(source, zero_based=False)[0].shape[0]

        X, _ = load_svmlight_file(str(path) if path.suffix != ".xz" else lzma.open(path))
        for label, width in (("n_features given", X.shape[1]), ("n_features inferred", None)):

            def ours(path=path, width=width):
                chunks = iter_svmlight(path, chunk_size=10000, n_features=width, zero_based=False)
                return _count(chunks)

            peer = "sklearn load_svmlight_file"
            cases.append(("LIBSVM", name, f"iter_svmlight, {label}", ours, peer, reference))
    return cases


def _csv_files(folder: Path, quick: bool) -> list[tuple[str, Path]]:
    rng = np.random.default_rng(1)
    n = 50000 if quick else 200000
    X = rng.normal(size=(n, 20))
    labels = rng.integers(0, 2, n)
    text = "\n".join(
        ",".join(f"{v:.6f}" for v in row) + f",{label}" for row, label in zip(X, labels)
    )
    plain = folder / "generated.csv"
    plain.write_text("\n".join(f"f{k}" for k in range(20)).replace("\n", ",") + ",y\n" + text)
    packed = folder / "generated.csv.gz"
    with open(plain, "rb") as src, gzip.open(packed, "wb", compresslevel=6) as dst:
        shutil.copyfileobj(src, dst)
    files = [("generated 20 features (plain)", plain), ("generated 20 features (.gz)", packed)]
    magic = DATA / "magic04.data.xz"
    if magic.exists():
        files.append(("magic04.data.xz", magic))
    return files


def csv_cases(folder: Path, quick: bool) -> list[tuple]:
    """(format, file, reader, our reading, peer, peer's reading) of CSV files."""
    import pandas as pd

    from aucstream.datasets import detect_format, iter_csv

    cases = []
    for name, path in _csv_files(folder, quick):
        header = 0 if path.name.startswith("generated") else None

        def reference(path=path, header=header):
            return sum(len(frame) for frame in pd.read_csv(path, header=header, chunksize=10000))

        delimiter = detect_format(path).delimiter

        def ours(path=path, delimiter=delimiter):
            return _count(iter_csv(path, chunk_size=10000, delimiter=delimiter))

        cases.append(("CSV", name, "iter_csv", ours, "pandas read_csv(chunksize=10000)", reference))
    return cases


def run(quick: bool = False) -> list[dict]:
    """Every measurement of this module, one dict per row (see the module docstring)."""
    folder = Path(tempfile.mkdtemp(prefix="aucstream-bench-readers-"))
    rounds = 2 if quick else 5
    try:
        rows = []
        for fmt, file, reader, ours, peer, reference in svmlight_cases(folder, quick) + csv_cases(
            folder, quick
        ):
            n = reference()
            assert ours() == n, (file, reader)
            rows.append(
                _row(fmt, file, reader, n, best(ours, rounds), peer, best(reference, rounds))
            )
        return rows
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    from run import standalone

    standalone(run, __doc__)
