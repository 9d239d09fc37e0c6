"""Tests of aucstream.datasets: streaming readers, registry, transforms.

Tests on the benchmark files need the shared data folder: ``$AUCSTREAM_DATA``, or
``<repo>/../shared/data``. They are skipped when it is absent.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import shutil
import struct
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

from aucstream.datasets import (
    MinMaxScalerPM1,
    UnitNormalizer,
    binarize_largest_vs_rest,
    binarize_one_vs_rest,
    binarize_random_halves,
    binarize_smallest_vs_rest,
    dataset_info,
    get_data_home,
    iter_chunks,
    iter_csv,
    iter_svmlight,
    list_datasets,
    load_csv,
    load_dataset,
    load_diabetes,
    load_fourclass,
    load_german,
    load_idx,
    load_splice,
    load_svmlight,
    open_file,
    scan_svmlight,
    sha256_file,
)

REPO = Path(__file__).resolve().parents[1]
EMBEDDED_DIR = REPO / "src" / "aucstream" / "datasets" / "data"


def _find_data_dir() -> Path | None:
    env = os.environ.get("AUCSTREAM_DATA")
    candidate = Path(env) if env else REPO.parent / "shared" / "data"
    return candidate if (candidate / "MANIFEST.tsv").is_file() else None


DATA_DIR = _find_data_dir()


@pytest.fixture
def data_dir() -> Path:
    if DATA_DIR is None:
        pytest.skip("shared benchmark data not found (set AUCSTREAM_DATA)")
    return DATA_DIR


def _manifest(data_dir: Path) -> dict[str, dict[str, str]]:
    lines = (data_dir / "MANIFEST.tsv").read_text().splitlines()
    head = lines[0].split("\t")
    rows = [dict(zip(head, line.split("\t"), strict=True)) for line in lines[1:] if line]
    return {row["file"]: row for row in rows}


def _label_counts(spec: str) -> dict[str, int]:
    return {k: int(v) for k, v in (item.split(":") for item in spec.split(";"))}


def _fmt_label(v) -> str:
    if isinstance(v, str | np.str_):
        return str(v)
    return str(int(v)) if float(v).is_integer() else str(v)


def _write(path: Path, data: bytes) -> Path:
    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(path.suffix, open)
    with opener(path, "wb") as f:
        f.write(data)
    return path


def _assert_same_csr(A, B):
    assert A.shape == B.shape
    assert (abs(sp.csr_matrix(A) - sp.csr_matrix(B))).sum() == 0


def _random_sparse(n, d, density, seed):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=seed)
    X.data = np.round(rng.standard_normal(X.nnz) * 10, 4)
    X.data[X.data == 0] = 1.5
    X = X.tolil()
    X[3, :] = 0  # an empty row (a line with only the label)
    X[5, 0] = 2.25  # column 0 is used
    X[7, d - 1] = -1.0  # the last column is used
    y = rng.choice([-1.0, 1.0, 3.0], size=n)
    return X.tocsr(), y


# ------------------------------------------------------------------ SVMlight


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2", ".xz"])
@pytest.mark.parametrize("chunk_size", [1, 7, 50, 103, 1000])
def test_iter_svmlight_matches_sklearn(tmp_path, suffix, chunk_size):
    X, y = _random_sparse(103, 17, 0.3, seed=1)
    plain = tmp_path / "gen.svm"
    dump_svmlight_file(X, y, str(plain), zero_based=False)
    path = _write(tmp_path / f"gen.svm{suffix}", plain.read_bytes())
    X_ref, y_ref = load_svmlight_file(str(plain), zero_based=False)

    chunks = list(iter_svmlight(path, chunk_size=chunk_size))
    assert all(Xc.shape[0] <= chunk_size for Xc, _ in chunks)
    assert all(Xc.shape[0] == chunk_size for Xc, _ in chunks[:-1])
    assert {Xc.shape[1] for Xc, _ in chunks} == {17}
    assert all(sp.isspmatrix_csr(Xc) for Xc, _ in chunks)
    assert len(chunks) == -(-103 // chunk_size)
    Xs = sp.vstack([c[0] for c in chunks], format="csr")
    ys = np.concatenate([c[1] for c in chunks])
    _assert_same_csr(Xs, X_ref)
    np.testing.assert_array_equal(ys, y_ref)
    assert ys.dtype == np.float64


def test_iter_svmlight_zero_based_auto(tmp_path):
    X, y = _random_sparse(40, 9, 0.4, seed=2)
    path = tmp_path / "zero.svm"
    dump_svmlight_file(X, y, str(path), zero_based=True)
    info = scan_svmlight(path)
    assert info.zero_based and info.min_index == 0 and info.n_features == 9
    assert info.n_samples == 40 and info.nnz == X.nnz
    with pytest.warns(UserWarning, match="read as 0-based") as record:
        X1, y1 = load_svmlight(path)  # auto -> detects index 0
    assert [w.filename for w in record] == [__file__]  # the warning names this line
    _assert_same_csr(X1, X)
    with pytest.warns(UserWarning, match="read as 0-based") as record:
        next(iter(iter_svmlight(path)))
    assert [w.filename for w in record] == [__file__]
    np.testing.assert_array_equal(y1, y)
    X2, _ = load_svmlight(path, n_features=9, zero_based=True)
    _assert_same_csr(X2, X)
    # with n_features given, "auto" means 1-based: index 0 is an error
    with pytest.raises(ValueError, match=r"zero\.svm, line \d+: feature index 0"):
        load_svmlight(path, n_features=10)


def test_iter_svmlight_n_features_dense_dtype(tmp_path):
    X, y = _random_sparse(30, 6, 0.5, seed=3)
    path = tmp_path / "a.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    Xw, _ = load_svmlight(path, n_features=10)
    assert Xw.shape == (30, 10)
    np.testing.assert_array_equal(Xw.toarray()[:, :6], X.toarray())
    chunks = list(iter_svmlight(path, chunk_size=8, dense=True, dtype=np.float32))
    assert all(isinstance(c, np.ndarray) and c.dtype == np.float32 for c, _ in chunks)
    np.testing.assert_allclose(np.vstack([c for c, _ in chunks]), X.toarray(), rtol=1e-6)
    with pytest.raises(ValueError, match=r"a\.svm, line \d+: feature index 6 .*n_features=5"):
        load_svmlight(path, n_features=5)


def test_iter_svmlight_comments_qid_blank_crlf(tmp_path):
    text = (
        "# a header comment\r\n"
        "\r\n"
        "+1 qid:3 1:0.5 4:-2 # trailing comment\r\n"
        "-1 qid:3 2:1e-3\r\n"
        "   \r\n"
        "2\t3:7\t5:1.25\r\n"
        "-1\r\n"
    )
    path = _write(tmp_path / "misc.svm.gz", text.encode())
    X, y = load_svmlight(path)
    expected = np.array(
        [[0.5, 0, 0, -2, 0], [0, 1e-3, 0, 0, 0], [0, 0, 7, 0, 1.25], [0, 0, 0, 0, 0]]
    )
    np.testing.assert_array_equal(X.toarray(), expected)
    np.testing.assert_array_equal(y, [1, -1, 2, -1])


def test_iter_svmlight_empty_file(tmp_path):
    path = _write(tmp_path / "empty.svm", b"# nothing\n\n")
    assert list(iter_svmlight(path)) == []
    X, y = load_svmlight(path, n_features=4)
    assert X.shape == (0, 4) and y.shape == (0,)


MALFORMED = [
    ("1 3x0.5", "cannot parse feature token '3x0.5'"),
    ("abc 1:1", "cannot parse label 'abc'"),
    ("1 a:1", "cannot parse feature index in token 'a:1'"),
    ("1 3:abc", "cannot parse feature value in token '3:abc'"),
    ("1 3:1.5.2", "cannot parse feature value"),
    ("1 -3:1", "negative feature index in token '-3:1'"),
    ("1 3:nan", "non-finite feature value in token '3:nan'"),
    ("1 3:inf", "non-finite feature value"),
    ("nan 3:1", "non-finite label"),
    ("1 1:2:3", "cannot parse feature token '1:2:3'"),
    ("1 1:2 :3", "cannot parse feature token ':3'"),
    ("1 3 :0.5", "cannot parse feature token '3'"),
    ("1 3:", "cannot parse feature token '3:'"),
    ("1 1:2:3 4", "cannot parse feature token '1:2:3'"),
    ("1 5:1 3:1", "sorted in increasing order and unique"),
    ("1 3:1 3:2", "sorted in increasing order and unique"),
    ("1 3.0:1", "cannot parse feature index in token '3.0:1'"),
    ("1 0:1", "feature index 0 in token '0:1'"),
    ("1 11:1", "feature index 11 in token '11:1' exceeds n_features=10"),
    ("1 99999999999999999999:1", "feature index too large"),
]


@pytest.mark.parametrize("bad_line, message", MALFORMED)
@pytest.mark.parametrize("chunk_size", [1, 3, 1000])
def test_iter_svmlight_malformed_line(tmp_path, bad_line, message, chunk_size):
    good = ["-1 1:0.5 2:1", "# comment", "", "+1 2:0.25 4:1", "1 1:1"]
    lines = good + [bad_line] + ["-1 4:2"] * 3
    path = tmp_path / "broken.svm.xz"
    _write(path, ("\n".join(lines) + "\n").encode())
    zb = False if "0:1" in bad_line else "auto"
    with pytest.raises(ValueError) as exc:
        for _ in iter_svmlight(path, chunk_size=chunk_size, n_features=10, zero_based=zb):
            pass
    msg = str(exc.value)
    assert "broken.svm.xz" in msg
    assert "line 6:" in msg
    assert message in msg


def test_iter_svmlight_error_line_number_in_late_chunk(tmp_path):
    lines = ["1 1:1 2:2"] * 240 + [""] * 5 + ["1 4:2 3:1"] + ["-1 2:1"] * 30
    path = _write(tmp_path / "late.svm.bz2", ("\n".join(lines) + "\n").encode())
    for kwargs in ({}, {"n_features": 5}):  # inference pass and direct pass
        with pytest.raises(ValueError, match=r"late\.svm\.bz2, line 246: feature indices"):
            list(iter_svmlight(path, chunk_size=7, **kwargs))


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 40),
    d=st.integers(1, 12),
    density=st.floats(0.0, 1.0),
    chunk_size=st.integers(1, 45),
    seed=st.integers(0, 1000),
)
def test_iter_svmlight_roundtrip_property(n, d, density, chunk_size, seed):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=seed)
    X.data = rng.integers(1, 100, X.nnz) / 8.0
    y = rng.integers(-3, 4, n).astype(float)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "p.svm"
        dump_svmlight_file(X, y, str(path), zero_based=False)
        chunks = list(iter_svmlight(path, chunk_size=chunk_size, n_features=d))
    assert [c.shape[0] for c, _ in chunks] == [
        min(chunk_size, n - s) for s in range(0, n, chunk_size)
    ]
    _assert_same_csr(sp.vstack([c for c, _ in chunks]), X)
    np.testing.assert_array_equal(np.concatenate([c for _, c in chunks]), y)


def test_open_file_detects_compression_by_magic(tmp_path):
    payload = b"1 1:1\n"
    for name, opener in [("x.gz", gzip.open), ("x.bz2", bz2.open), ("x.xz", lzma.open)]:
        with opener(tmp_path / name, "wb") as f:
            f.write(payload)
        renamed = tmp_path / (name + ".data")  # the suffix does not matter
        shutil.copy(tmp_path / name, renamed)
        with open_file(renamed) as f:
            assert f.read() == payload
    (tmp_path / "plain").write_bytes(payload)
    with open_file(tmp_path / "plain") as f:
        assert f.read() == payload


def test_reader_argument_errors(tmp_path):
    path = _write(tmp_path / "ok.svm", b"1 1:1\n")
    with pytest.raises(ValueError, match="chunk_size"):
        iter_svmlight(path, chunk_size=0)
    with pytest.raises(ValueError, match="zero_based"):
        iter_svmlight(path, zero_based="yes")
    with pytest.raises(FileNotFoundError):
        iter_svmlight(tmp_path / "missing.svm")


# ----------------------------------------------------------------------- real


def test_svmlight_a9a_matches_sklearn(data_dir):
    X_ref, y_ref = load_svmlight_file(lzma.open(data_dir / "a9a.xz"), zero_based=False)
    chunks = list(iter_svmlight(data_dir / "a9a.xz", chunk_size=4096))
    assert len(chunks) == -(-32561 // 4096)
    assert {c.shape[1] for c, _ in chunks} == {123}
    assert all(c.shape[0] <= 4096 for c, _ in chunks)
    _assert_same_csr(sp.vstack([c for c, _ in chunks]), X_ref)
    np.testing.assert_array_equal(np.concatenate([c for _, c in chunks]), y_ref)


@pytest.mark.parametrize(
    "fname, n_features", [("a1a.xz", None), ("a1a.xz", 123), ("a1a.t.xz", 123)]
)
def test_svmlight_a1a_matches_sklearn(data_dir, fname, n_features):
    X_ref, y_ref = load_svmlight_file(
        lzma.open(data_dir / fname), zero_based=False, n_features=n_features
    )
    X, y = load_svmlight(data_dir / fname, n_features=n_features, chunk_size=999)
    assert X.shape[1] == (119 if n_features is None and fname == "a1a.xz" else 123)
    _assert_same_csr(X, X_ref)
    np.testing.assert_array_equal(y, y_ref)


def test_csv_magic04(data_dir):
    chunks = list(iter_csv(data_dir / "magic04.data.xz", chunk_size=5000))
    assert [c.shape for c, _ in chunks] == [(5000, 10)] * 3 + [(4020, 10)]
    X = np.vstack([c for c, _ in chunks])
    y = np.concatenate([c for _, c in chunks])
    assert X.shape == (19020, 10) and X.dtype == np.float64
    labels, counts = np.unique(y, return_counts=True)
    assert labels.tolist() == ["g", "h"] and counts.tolist() == [12332, 6688]
    with lzma.open(data_dir / "magic04.data.xz", "rt") as f:
        first = f.readline().strip().split(",")
    np.testing.assert_array_equal(X[0], np.array(first[:-1], dtype=float))


def test_idx_mnist(data_dir):
    images = load_idx(data_dir / "t10k-images-idx3-ubyte.xz")
    labels = load_idx(data_dir / "t10k-labels-idx1-ubyte.xz")
    assert images.shape == (10000, 28, 28) and images.dtype == np.uint8
    assert labels.shape == (10000,) and labels[:5].tolist() == [7, 2, 1, 0, 4]


# ------------------------------------------------------------------------ CSV


def _csv_table(n=57, seed=0):
    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal((n, 4)), 3)
    labels = rng.choice(["pos", "neg", "mid"], size=n)
    return X, labels


@pytest.mark.parametrize("suffix", ["", ".gz", ".xz"])
@pytest.mark.parametrize("chunk_size", [1, 10, 57, 500])
def test_iter_csv_header_label_by_name(tmp_path, suffix, chunk_size):
    X, labels = _csv_table()
    rows = ["f0,f1,cls,f2,f3"] + [
        f"{a},{b},{lab},{c},{d}" for (a, b, c, d), lab in zip(X, labels, strict=True)
    ]
    path = _write(tmp_path / f"t.csv{suffix}", ("\r\n".join(rows) + "\r\n").encode())
    chunks = list(iter_csv(path, label_column="cls", chunk_size=chunk_size))
    assert all(c.shape[0] <= chunk_size for c, _ in chunks)
    np.testing.assert_array_equal(np.vstack([c for c, _ in chunks]), X)
    np.testing.assert_array_equal(np.concatenate([c for _, c in chunks]), labels)
    # the same column by position, header inferred
    X2, y2 = load_csv(path, label_column=2)
    np.testing.assert_array_equal(X2, X)
    np.testing.assert_array_equal(y2, labels)


def test_iter_csv_whitespace_numeric_labels_no_header(tmp_path):
    X, _ = _csv_table(20, seed=1)
    y = np.arange(20) % 3
    rows = [" ".join([str(lab)] + [str(v) for v in x]) + "  " for x, lab in zip(X, y, strict=True)]
    path = _write(tmp_path / "w.txt.bz2", ("\n\n".join(rows) + "\n").encode())
    Xr, yr = load_csv(path, label_column=0, delimiter=" ")
    np.testing.assert_array_equal(Xr, X)
    assert yr.dtype == np.float64
    np.testing.assert_array_equal(yr, y)


def test_iter_csv_tsv_header_inferred(tmp_path):
    text = "a\tb\ttarget\n1\t2\t0\n3\t4\t1\n"
    path = _write(tmp_path / "t.tsv", text.encode())
    X, y = load_csv(path, delimiter="\t")
    np.testing.assert_array_equal(X, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(y, [0, 1])
    X, y = load_csv(path, delimiter="\t", label_column="target", dtype=np.float32)
    assert X.dtype == np.float32


@pytest.mark.parametrize(
    "bad_row, message",
    [
        ("1,2", "expected 3 fields, found 2"),
        ("1,2,3,4", "expected 3 fields, found 4"),
        ("1,x,0", "cannot parse feature 'x' in column 1"),
        ("1,,0", "cannot parse feature '' in column 1"),
        ("1,nan,0", "non-finite feature"),
        ("1,2,zz", "label 'zz' is not a finite number"),
    ],
)
@pytest.mark.parametrize("chunk_size", [1, 4, 100])
def test_iter_csv_malformed_row(tmp_path, bad_row, message, chunk_size):
    lines = ["x,y,label", "1,2,0", "", "3,4,1", bad_row, "5,6,1"]
    path = _write(tmp_path / "bad.csv.gz", ("\n".join(lines) + "\n").encode())
    with pytest.raises(ValueError) as exc:
        list(iter_csv(path, chunk_size=chunk_size))
    msg = str(exc.value)
    assert "bad.csv.gz, line 5:" in msg and message in msg


def test_iter_csv_label_type(tmp_path):
    path = _write(tmp_path / "l.csv", b"1,2,10\n3,4,x\n")
    with pytest.raises(ValueError, match=r"l\.csv, line 2: label 'x'"):
        load_csv(path, chunk_size=1000)  # decided by the first row, whatever chunk_size
    _, y = load_csv(path, label_type="str")
    assert y.tolist() == ["10", "x"]
    path = _write(tmp_path / "s.csv", b"1,2, a \n3,4,7\n")
    _, y = load_csv(path, chunk_size=1)
    assert y.tolist() == ["a", "7"]


@pytest.mark.parametrize("header", [True, False])
def test_iter_csv_chunks_never_exceed_chunk_size(tmp_path, header):
    rows = ["a,b,y"] if header else []
    rows += [f"{k},{k / 2},{k % 2}" for k in range(7)]
    path = _write(tmp_path / "c.csv", ("\n".join(rows) + "\n").encode())
    for chunk_size in (1, 2, 3, 7, 8):
        chunks = list(iter_csv(path, chunk_size=chunk_size))
        sizes = [len(y) for _, y in chunks]
        assert sizes == [min(chunk_size, 7 - s) for s in range(0, 7, chunk_size)]
        np.testing.assert_array_equal(np.concatenate([y for _, y in chunks]), np.arange(7) % 2)


def test_iter_csv_label_name_errors(tmp_path):
    path = _write(tmp_path / "h.csv", b"a,b\n1,2\n")
    with pytest.raises(ValueError, match="no column named 'c'"):
        list(iter_csv(path, label_column="c"))
    with pytest.raises(ValueError, match="needs a header"):
        iter_csv(path, label_column="b", header=False)


# --------------------------------------------------------------------- chunks


@pytest.mark.parametrize("sparse", [False, True])
def test_iter_chunks(sparse):
    X = np.arange(23 * 3, dtype=float).reshape(23, 3)
    y = np.arange(23)
    Xin = sp.csr_matrix(X) if sparse else X
    chunks = list(iter_chunks(Xin, y, chunk_size=5))
    assert [c.shape[0] for c, _ in chunks] == [5, 5, 5, 5, 3]
    assert all(sp.issparse(c) == sparse for c, _ in chunks)
    back = (
        sp.vstack([c for c, _ in chunks]).toarray() if sparse else np.vstack([c for c, _ in chunks])
    )
    np.testing.assert_array_equal(back, X)
    np.testing.assert_array_equal(np.concatenate([c for _, c in chunks]), y)
    assert [c for _, c in iter_chunks(X, None, 10)] == [None, None, None]
    with pytest.raises(ValueError, match="rows"):
        list(iter_chunks(X, y[:-1], 5))


def test_load_idx_generated(tmp_path):
    arr = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    raw = bytes([0, 0, 0x08, 3]) + struct.pack(">3i", 2, 3, 4) + arr.tobytes()
    path = _write(tmp_path / "a-idx3-ubyte.gz", raw)
    np.testing.assert_array_equal(load_idx(path), arr)
    ints = np.array([-5, 7, 1 << 20], dtype=np.int32)
    raw = bytes([0, 0, 0x0C, 1]) + struct.pack(">i", 3) + ints.astype(">i4").tobytes()
    np.testing.assert_array_equal(load_idx(_write(tmp_path / "i.idx", raw)), ints)
    _write(tmp_path / "short.idx", raw[:-1])
    with pytest.raises(ValueError, match="short.idx"):
        load_idx(tmp_path / "short.idx")


# ------------------------------------------------------------------- registry


def test_registry_table_matches_manifest(data_dir):
    manifest = _manifest(data_dir)
    seen = set()
    for name in list_datasets():
        info = dataset_info(name)
        for spec in info.files:
            row = manifest[spec.filename]
            assert spec.sha256 == row["sha256"], spec.filename
            assert spec.n_samples == int(row["n_samples"]), spec.filename
            seen.add(spec.filename)
    required = {
        "diabetes",
        "fourclass",
        "german",
        "splice",
        "a9a",
        "w8a",
        "ijcnn1",
        "a1a",
        "a2a",
        "a3a",
        "a7a",
        "a8a",
        "w1a",
        "w7a",
        "phishing",
        "magic04",
        "letter",
        "usps",
        "connect4",
        "skin_nonskin",
        "sector",
        "news20",
        "mnist",
    }
    assert required <= set(list_datasets())
    assert len(seen) >= len(manifest) - 1  # all but german.numer (unscaled)


def test_embedded_manifest_and_size():
    lines = (EMBEDDED_DIR / "MANIFEST.tsv").read_text().splitlines()
    head = lines[0].split("\t")
    rows = [dict(zip(head, line.split("\t"), strict=True)) for line in lines[1:]]
    assert {r["dataset"] for r in rows} == {"diabetes", "fourclass", "german", "splice"}
    total = 0
    for r in rows:
        info = dataset_info(r["dataset"])
        assert info.embedded and info.train[0].filename == r["file"]
        assert info.train[0].sha256 == r["sha256"] == sha256_file(EMBEDDED_DIR / r["file"])
        total += (EMBEDDED_DIR / r["file"]).stat().st_size
    assert total < 300_000


FAST = [
    "diabetes",
    "fourclass",
    "german",
    "splice",
    "a9a",
    "w8a",
    "a1a",
    "a2a",
    "a3a",
    "a7a",
    "a8a",
    "w1a",
    "w7a",
    "phishing",
    "magic04",
    "letter",
    "usps",
    "mnist",
]  # connect4: test_connect4_one_hot
SLOW = ["ijcnn1", "sector", "news20", "skin_nonskin"]


def _check_against_manifest(name, data_dir):
    """One load per dataset: sizes per part, and labels against the manifest counts."""
    manifest = _manifest(data_dir)
    info = dataset_info(name)
    two_class = info.positive is not None
    # two-class sets: the default rule; multi-class sets: the original labels
    ds = load_dataset(
        name, data_home=data_dir, binary=None if two_class else False, return_parts=True
    )
    parts = [(ds.X, ds.y, info.train)] + ([(ds.X_test, ds.y_test, info.test)] if info.test else [])
    for X, y, files in parts:
        row = manifest[files[0].filename]
        counts = _label_counts(row["labels"])
        assert X.shape == (int(row["n_samples"]), info.n_features)
        if info.format == "libsvm":  # a part may lack the highest index
            assert X.shape[1] >= int(row["n_features"])
        else:
            assert X.shape[1] == int(row["n_features"])
        assert np.isfinite(X.data if sp.issparse(X) else X).all()
        if two_class:
            assert y.dtype == np.int64
            n_pos = counts[_fmt_label(info.positive)]
            assert int((y == 1).sum()) == n_pos
            assert int((y == -1).sum()) == sum(counts.values()) - n_pos
        else:
            labels, n = np.unique(y, return_counts=True)
            assert {_fmt_label(v): int(c) for v, c in zip(labels, n, strict=True)} == counts


@pytest.mark.parametrize("name", FAST)
def test_registry_loads_with_manifest_sizes(name, data_dir):
    _check_against_manifest(name, data_dir)


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_registry_loads_with_manifest_sizes_slow(name, data_dir):
    _check_against_manifest(name, data_dir)


def test_connect4_one_hot(data_dir):
    ds = load_dataset("connect4", data_home=data_dir, binary=False)
    assert sp.issparse(ds.X) and ds.X.shape == (67557, 126)
    assert dataset_info("connect4").n_samples == 67557
    assert np.all(ds.X.sum(axis=1) == 42)
    labels, counts = np.unique(ds.y, return_counts=True)
    assert labels.tolist() == [0, 1, 2] and counts.tolist() == [6449, 16635, 44473]
    X_raw, y_raw = next(
        iter_csv(data_dir / "connect_4.tsv.xz", "target", chunk_size=3000, delimiter="\t")
    )
    cells = ds.X[:3000].toarray().reshape(-1, 42, 3)
    np.testing.assert_array_equal(cells.sum(axis=2), 1)  # exactly one value per cell
    np.testing.assert_array_equal(cells.argmax(axis=2), X_raw)
    np.testing.assert_array_equal(ds.y[:3000], y_raw)
    yb = binarize_largest_vs_rest(ds.y)
    assert int((yb == 1).sum()) == 44473


def test_sha256_mismatch_is_detected(tmp_path):
    src = EMBEDDED_DIR / "diabetes_scale.xz"
    bad = tmp_path / "diabetes_scale.xz"
    raw = bytearray(src.read_bytes())
    raw[len(raw) // 2] ^= 0x01
    bad.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"sha256 mismatch for diabetes_scale\.xz"):
        load_dataset("diabetes", data_home=tmp_path)
    shutil.copy(src, bad)  # an intact copy in the data folder is used and passes
    assert load_dataset("diabetes", data_home=tmp_path).X.shape == (768, 8)


def test_sha256_mismatch_shared_file(tmp_path, data_dir):
    shutil.copy(data_dir / "a1a.xz", tmp_path / "a1a.xz")
    shutil.copy(data_dir / "a1a.t.xz", tmp_path / "a1a.t.xz")
    raw = bytearray((tmp_path / "a1a.t.xz").read_bytes())
    raw[-100] ^= 0xFF
    (tmp_path / "a1a.t.xz").write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"a1a\.t\.xz"):
        load_dataset("a1a", data_home=tmp_path)


def test_embedded_datasets_without_data_home(monkeypatch, tmp_path):
    monkeypatch.delenv("AUCSTREAM_DATA", raising=False)
    for loader, shape, n_pos in [
        (load_diabetes, (768, 8), 500),
        (load_fourclass, (862, 2), 307),
        (load_german, (1000, 24), 300),
        (load_splice, (1000, 60), 517),
    ]:
        ds = loader()
        assert ds.X.shape == shape and ds.n_features == shape[1]
        assert sp.isspmatrix_csr(ds.X)
        assert ds.y.dtype == np.int64 and int((ds.y == 1).sum()) == n_pos
        assert ds.X_test is None and ds.binary_rule == "positive=1"
    # a configured folder without the file falls back to the embedded copy
    monkeypatch.setenv("AUCSTREAM_DATA", str(tmp_path))
    assert load_dataset("german").X.shape == (1000, 24)


def test_data_home_resolution(monkeypatch, tmp_path):
    monkeypatch.delenv("AUCSTREAM_DATA", raising=False)
    with pytest.raises(FileNotFoundError, match="AUCSTREAM_DATA"):
        get_data_home()
    with pytest.raises(FileNotFoundError, match="AUCSTREAM_DATA"):
        load_dataset("a9a")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        get_data_home(tmp_path / "nope")
    assert get_data_home(tmp_path) == tmp_path
    monkeypatch.setenv("AUCSTREAM_DATA", str(tmp_path))
    assert get_data_home() == tmp_path
    with pytest.raises(FileNotFoundError, match=r"a9a\.xz"):
        load_dataset("a9a")


def test_registry_binary_rules_on_embedded():
    largest = load_dataset("diabetes", binary="largest_vs_rest")
    assert largest.positive_classes == (1.0,) and int((largest.y == 1).sum()) == 500
    smallest = load_dataset("diabetes", binary="smallest_vs_rest")
    assert smallest.positive_classes == (-1.0,) and int((smallest.y == 1).sum()) == 268
    assert smallest.binary_rule == "smallest_vs_rest (class -1)"
    ovr = load_dataset("german", binary=["one_vs_rest", -1])
    assert int((ovr.y == 1).sum()) == 700
    halves = load_dataset("fourclass", binary="random_halves", random_state=5)
    assert len(halves.positive_classes) == 1
    raw = load_dataset("fourclass", binary=False)
    assert raw.binary_rule == "original" and raw.y.dtype == np.float64
    assert set(np.unique(raw.y)) == {-1.0, 1.0}


def test_registry_name_errors():
    with pytest.raises(ValueError, match="Did you mean 'letter'"):
        dataset_info("leter")
    assert dataset_info("Connect-4").name == "connect4"
    with pytest.raises(ValueError, match="binary must be"):
        load_dataset("diabetes", binary="halves")
    with pytest.raises(ValueError, match="does not occur"):
        load_dataset("diabetes", binary=("one_vs_rest", 7))


def test_binary_rules_on_letter(data_dir):
    ds = load_dataset("letter", data_home=data_dir, return_parts=True, random_state=3)
    raw = load_dataset("letter", data_home=data_dir, return_parts=True, binary=False)
    assert ds.binary_rule == "random_halves(random_state=3)"
    assert len(ds.positive_classes) == 13  # floor(26 / 2)
    pos = np.asarray(ds.positive_classes)
    # the same partition for the train and the test part
    np.testing.assert_array_equal(ds.y, np.where(np.isin(raw.y, pos), 1, -1))
    np.testing.assert_array_equal(ds.y_test, np.where(np.isin(raw.y_test, pos), 1, -1))
    again = load_dataset("letter", data_home=data_dir, random_state=3, verify=False)
    assert again.positive_classes == ds.positive_classes  # deterministic given the seed
    assert again.X.shape == (20000, 16) and again.X_test is None  # parts concatenated
    np.testing.assert_array_equal(again.y, np.concatenate([ds.y, ds.y_test]))
    _assert_same_csr(again.X, sp.vstack([ds.X, ds.X_test]))
    other = load_dataset("letter", data_home=data_dir, random_state=4, verify=False)
    assert other.positive_classes != ds.positive_classes


def test_binary_rules_one_and_smallest(data_dir):
    ovr = load_dataset("letter", data_home=data_dir, binary=("one_vs_rest", 1), verify=False)
    assert int((ovr.y == 1).sum()) == 594 + 195 and ovr.positive_classes == (1,)
    small = load_dataset("letter", data_home=data_dir, binary="smallest_vs_rest", verify=False)
    # classes 8 (538 + 196) and 26 (543 + 191) tie with 734 rows: the smaller label wins
    assert small.positive_classes == (8.0,) and int((small.y == 1).sum()) == 734
    assert small.binary_rule == "smallest_vs_rest (class 8)"


# ------------------------------------------------------------------- binarize


@pytest.mark.parametrize("k", [2, 3, 4, 5, 9, 10])
def test_binarize_random_halves(k):
    rng = np.random.default_rng(k)
    y = rng.integers(0, k, 300)
    y[:k] = np.arange(k)  # every class occurs
    yb = binarize_random_halves(y, random_state=11)
    assert yb.dtype == np.int64 and set(np.unique(yb)) <= {-1, 1}
    positive = np.unique(y[yb == 1])
    assert positive.size == k // 2
    assert np.intersect1d(positive, y[yb == -1]).size == 0  # whole classes
    np.testing.assert_array_equal(yb, binarize_random_halves(y, random_state=11))
    # a "test part" lacking some classes gets the same partition via classes=
    y_test = y[y != positive[0]]
    yt = binarize_random_halves(y_test, random_state=11, classes=np.unique(y))
    np.testing.assert_array_equal(yt, np.where(np.isin(y_test, positive), 1, -1))


def test_binarize_random_halves_seeds_and_strings():
    y = np.array(list("abcdefghij") * 3)
    parts = {tuple(np.unique(y[binarize_random_halves(y, random_state=s) == 1])) for s in range(20)}
    assert len(parts) > 5
    assert all(len(p) == 5 for p in parts)
    with pytest.raises(ValueError, match="at least 2 classes"):
        binarize_random_halves(np.zeros(5))


def test_binarize_one_largest_smallest():
    y = np.array([3, 3, 3, 1, 1, 2, 2, 2, 2, 5])
    np.testing.assert_array_equal(binarize_one_vs_rest(y, 1), np.where(y == 1, 1, -1))
    np.testing.assert_array_equal(binarize_largest_vs_rest(y), np.where(y == 2, 1, -1))
    np.testing.assert_array_equal(binarize_smallest_vs_rest(y), np.where(y == 5, 1, -1))
    np.testing.assert_array_equal(binarize_one_vs_rest(np.array(["g", "h", "g"]), "g"), [1, -1, 1])
    with pytest.raises(ValueError, match="does not occur"):
        binarize_one_vs_rest(y, 4)


# ----------------------------------------------------------------- transforms


def test_minmax_pm1():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4)) * [1, 10, 100, 0]
    X[:, 3] = 7.0  # constant feature
    sc = MinMaxScalerPM1().fit(X)
    Z = sc.transform(X)
    np.testing.assert_allclose(Z[:, :3].min(axis=0), -1)
    np.testing.assert_allclose(Z[:, :3].max(axis=0), 1)
    np.testing.assert_array_equal(Z[:, 3], 0)
    out = sc.transform(np.vstack([X.max(axis=0) + 5, X.min(axis=0) - 5]))
    np.testing.assert_array_equal(out[:, :3], [[1, 1, 1], [-1, -1, -1]])
    np.testing.assert_allclose(sc.inverse_transform(Z), X)
    # fitted on a stream, chunk by chunk
    streamed = MinMaxScalerPM1()
    for Xc, _ in iter_chunks(X, None, 7):
        streamed.partial_fit(Xc)
    np.testing.assert_allclose(streamed.transform(X), Z)
    assert streamed.n_samples_seen_ == 50
    assert clone(sc).get_params() == {"copy": True}
    assert sc.feature_range == (-1, 1) and sc.clip is True
    with pytest.raises(TypeError, match="MaxAbsScaler"):
        MinMaxScalerPM1().fit(sp.csr_matrix(X))


def test_unit_normalizer():
    X = np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    Z = UnitNormalizer().fit_transform(X)
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), [1, 0, 1])
    np.testing.assert_allclose(Z[0], [0.6, 0.8, 0.0])
    Zs = UnitNormalizer().partial_fit(sp.csr_matrix(X)).transform(sp.csr_matrix(X))
    assert sp.isspmatrix_csr(Zs)
    np.testing.assert_allclose(Zs.toarray(), Z)
    norm = UnitNormalizer().partial_fit(X[:2])
    with pytest.raises(ValueError, match="features"):
        norm.partial_fit(X[:, :2])
    assert norm.norm == "l2" and clone(norm).get_params() == {"copy": True}


@pytest.mark.parametrize("estimator", [MinMaxScalerPM1(), UnitNormalizer()])
def test_transformers_pass_sklearn_checks(estimator):
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(estimator, on_fail=None)
    failed = [(r["check_name"], str(r["exception"])) for r in results if r["status"] == "failed"]
    assert failed == []
