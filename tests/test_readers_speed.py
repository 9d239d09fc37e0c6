"""The fast readers read what the reference readers read (correctness, not timing).

The LIBSVM reader parses lines with a compiled parser that leaves every line outside
its plain grammar to the token-by-token reference parser; the CSV reader parses
with pandas and hands a chunk it does not read plainly back to the csv module. Here
random files full of odd lines are read both ways (the fast reader, and the
reference applied line by line or with pandas switched off), and the chunks must
agree bit for bit, or the errors word for word. Also: numbers are converted exactly
as Python's ``float``, lines cross block boundaries, memory does not grow with the
file, the iterators report their progress, and the LIBSVM index base is decided once,
before the first chunk.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import subprocess
import sys
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aucstream.datasets import (
    _csv,
    _readers,
    _svmlight,
    iter_csv,
    iter_file,
    iter_svmlight,
    load_svmlight,
    scan_svmlight,
)

# ------------------------------------------------------------------ helpers


def _write(path: Path, data: bytes) -> Path:
    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(path.suffix, open)
    with opener(path, "wb") as f:
        f.write(data)
    return path


def _bits(a: np.ndarray) -> np.ndarray:
    """float64 values as integers, so -0.0 differs from 0.0 and NaNs compare."""
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


def _outcome(chunks) -> tuple:
    """("ok", chunks as arrays) or ("error", message) of reading an iterator."""
    out = []
    try:
        for X, y in chunks:
            X = sp.csr_matrix(X) if not sp.issparse(X) else X
            out.append((X.shape, _bits(X.data), X.indices.tolist(), X.indptr.tolist(), y))
    except ValueError as error:
        return "error", str(error)
    return "ok", out


def _reference_svmlight(path: Path, chunk_size: int, offset: int, n_features: int):
    """The reference parser applied line by line (universal newlines; bytes that are
    not UTF-8 shown escaped, as the reader's messages show them)."""
    name = str(path)
    labels, rows = [], []
    with _readers._open_text(path, "utf-8", errors="backslashreplace") as f:
        for lineno, text in enumerate(f, 1):
            parsed = _svmlight._svmlight_line(text, (name, lineno), offset, n_features)
            if parsed is not None:
                labels.append(parsed[0])
                rows.append(parsed[1:])
    for lo in range(0, len(labels), chunk_size):
        part = rows[lo : lo + chunk_size]
        indptr = np.cumsum([0] + [idx.size for _, idx in part])
        data = np.concatenate([d for d, _ in part]) if part else np.zeros(0)
        idx = np.concatenate([i for _, i in part]) if part else np.zeros(0, dtype=np.int64)
        X = sp.csr_matrix((data, idx, indptr), shape=(len(part), n_features))
        yield X, np.array(labels[lo : lo + chunk_size])


# ------------------------------------------------------------- LIBSVM lines

NUMBERS = [
    "1",
    "-1",
    "+1",
    "0",
    "-0",
    "-0.0",
    "0.5",
    ".5",
    "5.",
    "-.25e-3",
    "1e5",
    "1E+05",
    "2.5e-300",
    "1e-330",
    "1e400",
    "-1e400",
    "3.141592653589793238462643",
    "0.1000000000000000055511151231257827",
    "123456789012345678901",
    "9007199254740993",
    "4.9406564584124654e-324",
    "1.7976931348623157e308",
    "1e0000000000005",
    "00012.50",
    "1_0",
    "nan",
    "inf",
    "-Infinity",
    "0x10",
    "1e",
    "e5",
    "1.2.3",
    "",
    "1,5",
    "\xb2",
]
INDICES = ["1", "2", "3", "7", "10", "0", "003", "+4", "-2", "1_1", "99999999999999999999", "x"]


@st.composite
def svm_line(draw):
    label = draw(st.sampled_from(NUMBERS[:12] + NUMBERS[12:]))
    tokens = []
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.integers(0, 9))
        if kind == 0:
            tokens.append("qid:" + draw(st.sampled_from(["1", "abc", "", "x\xa0y"])))
        elif kind == 1:
            tokens.append(draw(st.sampled_from([":5", "3:", "3", "3:1:2", "a:b"])))
        else:
            idx = draw(st.sampled_from(INDICES if kind == 2 else INDICES[:6]))
            tokens.append(f"{idx}:{draw(st.sampled_from(NUMBERS if kind == 3 else NUMBERS[:24]))}")
    seps = [draw(st.sampled_from([" ", "  ", "\t", " \t", "\x0b", "\xa0"])) for _ in tokens]
    line = label + "".join(s + t for s, t in zip(seps, tokens))
    tail = draw(st.sampled_from(["", " ", "\t", " # comment: 1:2", "#", "\x0c"]))
    return draw(st.sampled_from(["", " "])) + line + tail


@st.composite
def svm_file(draw):
    lines = draw(st.lists(svm_line(), min_size=0, max_size=12))
    blanks = draw(st.lists(st.sampled_from(["", "   ", "# only a comment", "\t"]), max_size=3))
    for b in blanks:
        lines.insert(draw(st.integers(0, len(lines))), b)
    ends = [draw(st.sampled_from(["\n", "\r\n", "\r"])) for _ in lines]
    text = "".join(line + end for line, end in zip(lines, ends))
    if lines and draw(st.booleans()):
        text = text[: -len(ends[-1])]  # no newline at the end
    return text.encode("latin-1")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=svm_file(),
    chunk_size=st.integers(1, 5),
    block=st.sampled_from([3, 17, 1 << 20]),
    zero_based=st.booleans(),
)
def test_svmlight_reader_equals_the_reference_line_by_line(
    tmp_path_factory, data, chunk_size, block, zero_based
):
    path = tmp_path_factory.mktemp("svm") / "f.svm"
    path.write_bytes(data)
    n_features = 12
    original = _svmlight._SvmlightPass._BLOCK
    _svmlight._SvmlightPass._BLOCK = block
    try:
        fast = _outcome(iter_svmlight(path, chunk_size, n_features, zero_based=zero_based))
    finally:
        _svmlight._SvmlightPass._BLOCK = original
    offset = 0 if zero_based else 1
    reference = _outcome(_reference_svmlight(path, chunk_size, offset, n_features))
    assert fast[0] == reference[0], (fast, reference)
    if fast[0] == "error":
        assert fast[1] == reference[1]
    else:
        assert len(fast[1]) == len(reference[1])
        for a, b in zip(fast[1], reference[1]):
            assert a[0] == b[0]
            np.testing.assert_array_equal(a[1], b[1])
            assert a[2:4] == b[2:4]
            np.testing.assert_array_equal(_bits(a[4]), _bits(b[4]))


def _decimal_strings():
    digits = st.text("0123456789", min_size=1, max_size=30)
    return st.builds(
        lambda sign, a, b, e: f"{sign}{a}{'.' + b if b is not None else ''}{e}",
        st.sampled_from(["", "-", "+"]),
        digits,
        st.none() | st.text("0123456789", max_size=30),
        st.sampled_from([""]) | st.integers(-350, 350).map(lambda k: f"e{k}"),
    )


@settings(max_examples=500, deadline=None)
@given(texts=st.lists(_decimal_strings(), min_size=1, max_size=30))
def test_numbers_are_read_as_python_float_reads_them(tmp_path_factory, texts):
    expected = [float(t) for t in texts]
    finite = [t for t, v in zip(texts, expected) if np.isfinite(v)]
    if not finite:
        return
    line = "1 " + " ".join(f"{k + 1}:{t}" for k, t in enumerate(finite)) + "\n"
    path = tmp_path_factory.mktemp("num") / "n.svm"
    path.write_text(line + f"{finite[0]} 1:1\n")
    ((X, y),) = list(iter_svmlight(path, 10, n_features=len(finite)))
    np.testing.assert_array_equal(_bits(X.data[: len(finite)]), _bits([float(t) for t in finite]))
    np.testing.assert_array_equal(_bits(y), _bits([1.0, float(finite[0])]))


def test_many_hard_numbers_on_one_line_grow_the_queue(tmp_path):
    rng = np.random.default_rng(0)
    values = rng.normal(size=5000) * 10.0 ** rng.integers(-40, 40, 5000)
    texts = [f"{v:.25e}" for v in values]  # 26 digits: left to numpy
    line = "-1 " + " ".join(f"{k + 1}:{t}" for k, t in enumerate(texts))
    path = _write(tmp_path / "wide.svm", (line + "\n" + line + "\n").encode())
    chunks = list(iter_svmlight(path, chunk_size=1, n_features=5000))
    for X, _ in chunks:
        np.testing.assert_array_equal(_bits(X.data), _bits([float(t) for t in texts]))


def test_a_non_finite_hard_number_is_reported_before_a_later_bad_line(tmp_path):
    lines = ["1 1:0.5", "1 2:1e400", "1 x:1"]
    path = _write(tmp_path / "order.svm", ("\n".join(lines) + "\n").encode())
    with pytest.raises(ValueError, match=r"order\.svm, line 2: non-finite feature value"):
        list(iter_svmlight(path, chunk_size=10, n_features=5))
    with pytest.raises(ValueError, match=r"order\.svm, line 2: non-finite feature value"):
        scan_svmlight(path)


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2", ".xz"])
@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_line_numbers_with_every_line_end(tmp_path, suffix, end):
    lines = ["1 1:1"] * 30 + ["", "# c", "1 3:1 2:1"] + ["1 1:1"] * 3
    path = _write(tmp_path / f"ends.svm{suffix}", end.join(lines).encode())
    for block in (5, 1 << 20):
        original = _svmlight._SvmlightPass._BLOCK
        _svmlight._SvmlightPass._BLOCK = block
        try:
            with pytest.raises(ValueError, match=r", line 33: feature indices must be sorted"):
                list(iter_svmlight(path, chunk_size=4, n_features=5))
        finally:
            _svmlight._SvmlightPass._BLOCK = original


# ---------------------------------------------------------------- index base


def _svm(tmp_path, name, lines):
    return _write(tmp_path / name, ("\n".join(lines) + "\n").encode())


def test_auto_base_is_decided_from_the_first_chunk_and_said(tmp_path):
    lines = ["1 1:1 5:2"] * 50 + ["-1 0:3 2:1"] + ["1 4:1"] * 50  # a stray 0: at line 51
    path = _svm(tmp_path, "stray.svm", lines)
    chunks = iter_svmlight(path, chunk_size=10)  # line 51 is after the first chunk
    with pytest.raises(ValueError, match=r"stray\.svm, line 51: feature index 0 .*first chunk"):
        next(chunks)  # decided before the first chunk: nothing was yielded 1-based
    chunks = iter_svmlight(path, chunk_size=60)
    with pytest.warns(
        UserWarning,
        match=r"stray\.svm: read as 0-based .* first chunk of 60 examples \(first at line 51\)",
    ):
        X, _ = next(chunks)  # decided before the first chunk
    assert chunks.zero_based is True and chunks.n_features == 6
    assert X.shape == (60, 6) and X[0].indices.tolist() == [1, 5]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X1, _ = next(iter_svmlight(path, chunk_size=10, zero_based=True))  # said: no warning
        assert X1[0].indices.tolist() == [1, 5]
        with pytest.raises(ValueError, match=r"stray\.svm, line 51: feature index 0"):
            list(iter_svmlight(path, chunk_size=10, zero_based=False))
        plain = _svm(tmp_path, "plain.svm", lines[:50])
        chunks = iter_svmlight(plain, chunk_size=10)
        X2, _ = next(chunks)
        assert chunks.zero_based is False and X2.shape[1] == 5
        assert X2[0].indices.tolist() == [0, 4]


def test_auto_with_n_features_is_one_based_and_refuses_index_zero(tmp_path):
    path = _svm(tmp_path, "z.svm", ["1 1:1"] * 20 + ["1 0:1"])
    chunks = iter_svmlight(path, chunk_size=5, n_features=3)
    with pytest.raises(ValueError, match=r"z\.svm, line 21: feature index 0 .*zero_based=True"):
        list(chunks)
    assert chunks.zero_based is False


# ------------------------------------------------------------------ progress


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2", ".xz"])
def test_progress_reaches_the_file_size(tmp_path, suffix):
    rng = np.random.default_rng(1)
    lines = [
        f"{rng.integers(2) * 2 - 1} "
        + " ".join(f"{k}:{rng.normal():.6f}" for k in sorted(rng.choice(50, 8, replace=False) + 1))
        for _ in range(3000)
    ]
    path = _write(tmp_path / f"p.svm{suffix}", ("\n".join(lines) + "\n").encode())
    for n_features in (None, 50):
        chunks = iter_svmlight(path, chunk_size=500, n_features=n_features)
        assert chunks.total_bytes == path.stat().st_size and chunks.bytes_read == 0
        seen = []
        for _ in chunks:
            seen.append(chunks.bytes_read)
            assert chunks.rows == 500 * len(seen)
        assert seen == sorted(seen) and seen[-1] == chunks.total_bytes
        assert chunks.n_features == 50
    csv_path = _write(
        tmp_path / f"p.csv{suffix}",
        ("\n".join(f"{k},{k * 0.5},{k % 2}" for k in range(20000)) + "\n").encode(),
    )
    chunks = iter_file(csv_path, chunk_size=1000)
    seen = [chunks.bytes_read for _ in chunks]
    assert seen == sorted(seen) and seen[-1] == chunks.total_bytes == csv_path.stat().st_size
    assert chunks.rows == 20000 and chunks.n_features == 2


def test_closing_the_iterator_closes_the_file(tmp_path):
    path = _svm(tmp_path, "c.svm", ["1 1:1"] * 100)
    with iter_svmlight(path, chunk_size=10, n_features=1) as chunks:
        next(chunks)
    with pytest.raises(StopIteration):
        next(chunks)


# ----------------------------------------------------------------------- CSV

FIELDS = [
    "1",
    "-2.5",
    "0.1000000000000000055511151231257827",
    "1e400",
    "nan",
    "",
    " 3",
    "4 ",
    "x",
    '"5"',
    '"6,7"',
    "1_0",
    "+.5",
    "-0",
    "2e-330",
    "NA",
]


@st.composite
def csv_file(draw):
    n_fields = draw(st.integers(2, 4))
    sep = draw(st.sampled_from([",", "\t", ";", None]))
    join = " " if sep is None else sep
    rows = []
    if draw(st.booleans()):
        rows.append(join.join(f"c{k}" for k in range(n_fields)))
    for _ in range(draw(st.integers(1, 15))):
        width = n_fields if draw(st.integers(0, 9)) else draw(st.integers(1, n_fields + 1))
        fields = [
            draw(st.sampled_from(FIELDS if draw(st.integers(0, 4)) == 0 else FIELDS[:4]))
            for _ in range(width)
        ]
        if sep is None:
            fields = [f.strip() or "0" for f in fields]
        rows.append(join.join(fields))
    for _ in range(draw(st.integers(0, 2))):
        rows.insert(draw(st.integers(0, len(rows))), draw(st.sampled_from(["", "  ", "\t"])))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    return (end.join(rows) + end).encode(), sep, n_fields


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    spec=csv_file(),
    chunk_size=st.integers(1, 6),
    label=st.sampled_from([0, -1]),
    label_type=st.sampled_from(["infer", "numeric", "str"]),
)
def test_csv_reader_equals_the_csv_module(tmp_path_factory, spec, chunk_size, label, label_type):
    data, sep, _ = spec
    path = tmp_path_factory.mktemp("csv") / "f.csv"
    path.write_bytes(data)
    options = dict(chunk_size=chunk_size, delimiter=sep, label_column=label, label_type=label_type)
    fast = _csv_outcome(iter_csv(path, **options))
    original = _csv._pandas_can_read
    _csv._pandas_can_read = lambda *args: False
    try:
        reference = _csv_outcome(iter_csv(path, **options))
    finally:
        _csv._pandas_can_read = original
    assert fast == reference


def _csv_outcome(chunks):
    out = []
    try:
        for X, y in chunks:
            out.append((X.shape, _bits(X).tolist(), y.dtype.kind, y.tolist()))
    except ValueError as error:
        return "error", str(error)
    return "ok", out


def test_plain_csv_is_read_by_pandas(tmp_path, monkeypatch):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(3000, 5)) * 10.0 ** rng.integers(-20, 20, (3000, 5))
    text = "\n".join(",".join(repr(float(v)) for v in row) + ",a" for row in X)
    path = _write(tmp_path / "plain.csv.gz", ("f0,f1,f2,f3,f4,label\n" + text + "\n").encode())
    monkeypatch.setattr(_csv, "_csv_reference", None)  # any fallback would fail
    chunks = list(iter_csv(path, chunk_size=700))
    np.testing.assert_array_equal(_bits(np.vstack([c for c, _ in chunks])), _bits(X))
    assert [len(y) for _, y in chunks] == [700] * 4 + [200]


# ----------------------------------------------------------- bounded memory


def _peak_kib(path: Path, n_features) -> int:
    """Peak KiB allocated (numpy arrays included) while reading the file in chunks."""
    width = {} if n_features is None else {"n_features": n_features}
    for _ in iter_file(path, chunk_size=2000, **width):
        break  # compile (or load) the parser before measuring
    tracing = tracemalloc.is_tracing()  # (PYTHONTRACEMALLOC: left as it was)
    if not tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        held = tracemalloc.get_traced_memory()[0]
        for _ in iter_file(path, chunk_size=2000, **width):
            pass
        return (tracemalloc.get_traced_memory()[1] - held) // 1024
    finally:
        if not tracing:
            tracemalloc.stop()


@pytest.mark.parametrize("kind", ["libsvm", "libsvm-no-width", "csv"])
def test_peak_memory_does_not_grow_with_the_file(tmp_path, kind):
    rng = np.random.default_rng(3)
    if kind == "csv":

        def row():
            return ",".join(f"{v:.6f}" for v in rng.normal(size=20)) + ",1"

        name = "m.csv"
    else:

        def row():
            pairs = zip(range(1, 200, 5), rng.normal(size=40))
            return "1 " + " ".join(f"{k}:{v:.6f}" for k, v in pairs)

        name = "m.svm"
    block = "\n".join(row() for _ in range(10000)) + "\n"
    short = _write(tmp_path / ("s" + name), block.encode())
    long = _write(tmp_path / ("l" + name), (block * 5).encode())  # 5x the rows and bytes
    width = None if kind == "libsvm-no-width" else 200
    peaks = [_peak_kib(p, width) for p in (short, long)]
    # holding the long file's rows would take more than 7 MB (CSV) or 20 MB (LIBSVM)
    assert peaks[1] - peaks[0] < 2 * 1024, peaks


def test_a_second_process_does_not_compile_the_parser_again(tmp_path):
    """The compiled parser is cached on disk: a new interpreter loads it."""
    path = _svm(tmp_path, "cache.svm", ["1 1:0.5 3:1.25e-3 qid:2", "-1 2:12345678901234567890"])
    code = f"""
from aucstream.datasets import _svmlight, load_svmlight
load_svmlight({str(path)!r}, n_features=3)
fns = [_svmlight._number, _svmlight._keep_hard, _svmlight._svm_line, _svmlight._svm_parse]
print(sum(len(f.stats.cache_misses) for f in fns), len(_svmlight._svm_parse.stats.cache_hits))
"""
    load_svmlight(path, n_features=3)  # compiled (or loaded) here, so cached on disk
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    misses, hits = map(int, run.stdout.split())
    assert misses == 0, run.stdout  # the helpers are compiled into _svm_parse
    assert hits == 1
