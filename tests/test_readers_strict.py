"""The readers are strict (issue 34): one number grammar, an explicit index base, and
errors that name the file and the line for damaged archives and bad encodings.

Each case here was found by a hostile-user campaign and read silently wrong before:
``1_0:2`` was index 10 (Python's ``int`` accepts ``_``), a full-width ``１`` was the
number 1 in a CSV file, one stray ``0:`` shifted every column of a 1-based file, a
truncated ``.gz`` raised ``EOFError`` without a file name.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import warnings
import zlib

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

from aucstream.cli import main
from aucstream.datasets import (
    detect_format,
    iter_csv,
    iter_svmlight,
    load_csv,
    load_svmlight,
    open_file,
)


def _write(path, data: bytes):
    path.write_bytes(data)
    return path


def _run(capsys, *argv):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as stop:
        code = stop.code
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------ LIBSVM grammar


@pytest.mark.parametrize(
    "line, what",
    [
        ("1 1_0:2", "feature index in token '1_0:2'"),  # was index 10
        ("1 \uff11:2", "feature index in token '\uff11:2'"),  # was index 1
        ("1 +3:2", "feature index in token '+3:2'"),  # was index 3
        ("1 3:1_5", "feature value in token '3:1_5'"),  # was 15.0
        ("1 3:\uff15", "feature value in token '3:\uff15'"),  # was 5.0
        ("1 3:1,5", "feature value in token '3:1,5'"),
        ("1_0 3:1", "label '1_0'"),  # was the label 10
        ("\uff11 3:1", "label '\uff11'"),
        ("1 3:0x10", "feature value in token '3:0x10'"),
    ],
)
def test_libsvm_numbers_outside_the_grammar_are_refused(tmp_path, line, what):
    text = "1 1:1 2:2\n-1 3:0.5\n" + line + "\n1 1:1\n"
    path = _write(tmp_path / "bad.svm", text.encode("utf-8"))
    with pytest.raises(ValueError, match=r"bad\.svm, line 3: cannot parse " + _re(what)):
        load_svmlight(path, n_features=20)
    with pytest.raises(ValueError, match=r"bad\.svm, line 3: cannot parse"):
        load_svmlight(path)  # the first pass refuses it too


def _re(text: str) -> str:
    import re

    return re.escape(text)


def test_libsvm_separators_are_spaces_and_tabs_only(tmp_path):
    # a form feed or a no-break space between tokens was a separator for str.split()
    for sep in ("\x0c", "\x0b", "\u00a0"):
        path = _write(tmp_path / "sep.svm", f"1 1:1{sep}2:2\n".encode())
        with pytest.raises(ValueError, match=r"sep\.svm, line 1: cannot parse feature"):
            load_svmlight(path, n_features=3)
    path = _write(tmp_path / "ok.svm", b"1\t1:1 \t 2:2  # note: \xff anything\r\n")
    X, y = load_svmlight(path, n_features=3)
    ref_X, ref_y = load_svmlight_file(str(path), n_features=3, zero_based=False)
    np.testing.assert_array_equal(X.toarray(), ref_X.toarray())
    np.testing.assert_array_equal(y, ref_y)


def test_libsvm_grammar_keeps_what_sklearn_reads(tmp_path):
    text = "+1 qid:4 1:.5 2:5. 3:-1e-3 4:+2E+2\n-1 2:0 4:1e22  # c\n\n# only a comment\n0 5:7\n"
    path = _write(tmp_path / "ok.svm", text.encode())
    X, y = load_svmlight(path, n_features=5)
    ref_X, ref_y = load_svmlight_file(str(path), n_features=5, zero_based=False)
    np.testing.assert_array_equal(X.toarray(), ref_X.toarray())
    np.testing.assert_array_equal(y, ref_y)


def test_libsvm_detection_needs_ascii_digits(tmp_path):
    path = _write(tmp_path / "a.txt", "\uff11 1:2\n".encode())
    assert detect_format(path).kind == "csv"
    path = _write(tmp_path / "b.txt", b"1 1:2 3:4\n")
    assert detect_format(path).kind == "libsvm"


# ------------------------------------------------------------------ CSV grammar


@pytest.mark.parametrize(
    "field, delimiter",
    [
        ("\uff11", ","),  # full-width one: was 1.0
        ("1_0", ","),  # was 10.0
        ('"1,000"', ","),  # a thousands separator in a quoted field
        ("1,5", ";"),  # a decimal comma
        ("1 000", ","),
        ("\u0663", ","),  # Arabic-Indic three
        ("\u00a05", ","),  # a no-break space
    ],
)
def test_csv_numbers_outside_the_grammar_are_refused(tmp_path, field, delimiter):
    d = delimiter
    lines = [f"a{d}b{d}y", f"1{d}2{d}0", f"3{d}{field}{d}1", f"5{d}6{d}0"]
    path = _write(tmp_path / "bad.csv", ("\n".join(lines) + "\n").encode("utf-8"))
    with pytest.raises(ValueError, match=r"bad\.csv, line 3: cannot parse feature .* column 1"):
        load_csv(path, delimiter=d)


def test_csv_label_outside_the_grammar_is_refused(tmp_path):
    path = _write(tmp_path / "y.csv", b"a,y\n1,0\n2,1_0\n")
    with pytest.raises(ValueError, match=r"y\.csv, line 3: label '1_0' is not a finite number"):
        load_csv(path)
    path = _write(tmp_path / "z.csv", "a,y\n1,\uff10\n2,\uff11\n".encode())
    X, y = load_csv(path)  # the first label is not a number: the labels are strings
    assert y.tolist() == ["\uff10", "\uff11"]


def test_csv_reads_plain_numbers_as_pandas_does(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4)) * 10.0 ** rng.integers(-5, 5, size=(300, 4))
    y = rng.integers(0, 2, 300)
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["y"] = y
    path = tmp_path / "plain.csv"
    frame.to_csv(path, index=False, float_format="%.17g")
    head, body = path.read_text().split("\n", 1)
    path.write_text(head + "\n" + body.replace(",", " , ", 40))  # blanks around numbers
    got_X, got_y = load_csv(path)
    ref = pd.read_csv(path, sep=",", header=0, names=[*"abcd", "y"], dtype=np.float64)
    np.testing.assert_array_equal(got_X, ref[list("abcd")].to_numpy())
    np.testing.assert_array_equal(got_y, ref["y"].to_numpy())


# ------------------------------------------------------------------ index base


def _lines(n: int, stray_at: int | None = None) -> bytes:
    rows = [f"{'1' if k % 2 else '-1'} 1:{k % 7} 3:{k % 5 + 1}" for k in range(n)]
    if stray_at is not None:
        rows[stray_at - 1] = "-1 0:3 2:1"
    return ("\n".join(rows) + "\n").encode()


def test_a_stray_zero_after_the_first_chunk_is_refused(tmp_path):
    path = _write(tmp_path / "stray.svm", _lines(300, stray_at=250))
    expected = (
        r"stray\.svm, line 250: feature index 0 in token '0:3', but the file is read as "
        r"1-based \(zero_based=\"auto\" found no index 0 in its first chunk of 100 examples\)"
    )
    chunks = iter_svmlight(path, chunk_size=100)
    with pytest.raises(ValueError, match=expected):
        next(chunks)  # before any chunk: the first pass read the whole file
    chunks = iter_svmlight(path, chunk_size=100, n_features=3)  # one pass: 1-based
    with pytest.raises(ValueError, match=r"line 250: .*1-based when n_features is given"):
        list(chunks)
    assert chunks.zero_based is False and chunks.rows == 200
    with pytest.raises(ValueError, match=r"line 250: feature index 0"):
        load_svmlight(path, chunk_size=100, zero_based=False)
    X, _ = load_svmlight(path, chunk_size=100, zero_based=True)
    ref, _ = load_svmlight_file(str(path), zero_based=True)
    np.testing.assert_array_equal(X.toarray(), ref.toarray())


def test_index_zero_in_the_first_chunk_makes_a_zero_based_file_and_says_so(tmp_path):
    rng = np.random.default_rng(3)
    X = sp.random(60, 6, density=0.5, random_state=rng, format="csr")
    X.data[:] = np.round(X.data, 3)
    X[0, 0] = 1.0
    y = np.where(rng.random(60) > 0.5, 1.0, -1.0)
    path = tmp_path / "zero.svm"
    dump_svmlight_file(X, y, str(path), zero_based=True)
    with pytest.warns(UserWarning, match=r"zero\.svm: read as 0-based .* line 1\)"):
        got, got_y = load_svmlight(path)
    np.testing.assert_array_equal(got.toarray(), X.toarray())
    np.testing.assert_array_equal(got_y, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got, _ = load_svmlight(path, zero_based=True)
        np.testing.assert_array_equal(got.toarray(), X.toarray())
        with pytest.raises(ValueError, match=r"zero\.svm, line 1: feature index 0"):
            load_svmlight(path, n_features=6)  # one pass: "auto" is 1-based


# ------------------------------------------------------------ damaged archives


_COMPRESSORS = {
    "gz": (gzip.compress, "gzip"),
    "xz": (lzma.compress, "xz"),
    "bz2": (bz2.compress, "bz2"),
}


def _good_prefix(kind: str, data: bytes) -> bytes:
    """What a decompressor recovers from a truncated stream (the reference)."""
    if kind == "gz":
        return zlib.decompressobj(wbits=31).decompress(data)
    if kind == "xz":
        return lzma.LZMADecompressor().decompress(data)
    return bz2.BZ2Decompressor().decompress(data)


@pytest.mark.parametrize("suffix", ["gz", "xz", "bz2"])
def test_truncated_archives_name_the_file_and_line(tmp_path, suffix):
    compress, kind = _COMPRESSORS[suffix]
    text = b"".join(b"%d 1:%d 2:0.5\n" % (k % 2, k) for k in range(60000))
    whole = compress(text)
    cut = whole[: len(whole) * 2 // 3]
    prefix = _good_prefix(suffix, cut)
    line = prefix.count(b"\n") + 1
    path = _write(tmp_path / f"cut.svm.{suffix}", cut)
    expected = (
        rf"cut\.svm\.{suffix}: the file ends early or is corrupt at line {line}: its {kind} "
        r"data breaks off after byte " + f"{len(prefix):,}"
    )
    with pytest.raises(ValueError, match=expected):
        load_svmlight(path, n_features=2)
    with pytest.raises(ValueError, match=expected):
        load_svmlight(path)
    csv_text = b"a,b,y\n" + b"".join(b"%d,0.5,%d\n" % (k, k % 2) for k in range(60000))
    whole = compress(csv_text)
    cut = whole[: len(whole) // 2]
    line = _good_prefix(suffix, cut).count(b"\n") + 1
    path = _write(tmp_path / f"cut.csv.{suffix}", cut)
    damaged = rf"cut\.csv\.{suffix}: the file ends early or is corrupt at line "
    with pytest.raises(ValueError, match=damaged + f"{line}:"):
        load_csv(path)
    with pytest.raises(ValueError, match=damaged + r"\d+:"):
        with open_file(path) as f:
            f.read()


def test_corrupt_gzip_names_the_file(tmp_path):
    good = gzip.compress(b"".join(b"1 1:%d\n" % k for k in range(5000)))
    crc = bytearray(good)
    crc[-6] ^= 0xFF  # the CRC of the data
    path = _write(tmp_path / "crc.svm.gz", bytes(crc))
    damaged = r": the file ends early or is corrupt at line "
    with pytest.raises(ValueError, match=r"crc\.svm\.gz" + damaged + "5001:"):
        load_svmlight(path, n_features=5000)
    middle = bytearray(good)
    middle[len(middle) // 2] ^= 0xFF  # garbled data, or a broken stream
    path = _write(tmp_path / "mid.svm.gz", bytes(middle))
    with pytest.raises(ValueError, match=r"mid\.svm\.gz(, line \d+:|" + damaged + r"\d+)"):
        load_svmlight(path, n_features=5000)


# -------------------------------------------------------------------- encodings


def test_invalid_utf8_in_csv_names_the_line_and_offset(tmp_path):
    data = b"a,b,y\n1,2,0\n3,4,1\n5,\xff6,0\n7,8,1\n"
    path = _write(tmp_path / "enc.csv", data)
    offset = data.index(b"\xff")
    with pytest.raises(ValueError, match=rf"enc\.csv, line 4: not valid utf-8 text .*{offset}"):
        load_csv(path)
    path = _write(tmp_path / "enc.csv.gz", gzip.compress(data))
    with pytest.raises(ValueError, match=r"enc\.csv\.gz, line 4: not valid utf-8 text"):
        list(iter_csv(path, chunk_size=1))
    X, _ = load_csv(_write(tmp_path / "latin.csv", data.replace(b"\xff", b"")), encoding="latin-1")
    assert X[2].tolist() == [5.0, 6.0]


def test_invalid_utf8_in_a_libsvm_token_names_the_line(tmp_path):
    path = _write(tmp_path / "enc.svm", b"1 1:2\n-1 2:\xff3\n")
    with pytest.raises(ValueError, match=r"enc\.svm, line 2: cannot parse feature value"):
        load_svmlight(path, n_features=2)


# ------------------------------------------------------------------------- CLI


def _fit(tmp_path, data, *options):
    return ["fit", data, "--learner", "OPAUC", "--no-scale", "-o", tmp_path / "m", *options]


def test_cli_stray_zero_is_an_error_and_warnings_are_one_line(tmp_path, capsys):
    late = _write(tmp_path / "late.svm", _lines(300, stray_at=250))
    code, _, err = _run(capsys, *_fit(tmp_path, late, "--chunk-size", "100"))
    assert code == 2
    assert err.strip().count("\n") == 0 and "late.svm, line 250: feature index 0" in err
    early = _write(tmp_path / "early.svm", _lines(300, stray_at=5))
    code, out, err = _run(capsys, *_fit(tmp_path, early, "--chunk-size", "100"))
    assert code == 0 and "4 features" in out  # 0-based: columns 0..3
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("aucstream: warning: ") and "line 5" in lines[0]
    assert "warnings.warn" not in err and "UserWarning" not in err
    code, out, err = _run(capsys, *_fit(tmp_path, early, "--index-base", "0"))
    assert code == 0 and "4 features" in out and err == ""
    code, _, err = _run(capsys, *_fit(tmp_path, early, "--index-base", "1"))
    assert code == 2 and "early.svm, line 5: feature index 0" in err
    code, out, err = _run(capsys, *_fit(tmp_path, late, "--index-base", "0"))
    assert code == 0 and "4 features" in out and err == ""
    code, _, err = _run(capsys, *_fit(tmp_path, late, "--index-base", "0", "--zero-based", "no"))
    assert code == 2 and "--index-base 0 contradicts --zero-based no" in err


def test_cli_refuses_underscores_and_full_width_digits(tmp_path, capsys):
    good = "".join(f"{k % 2} 1:{k} 2:1\n" for k in range(20))
    for bad in ("1 1_0:2\n", "1 \uff11:2\n"):
        path = _write(tmp_path / "u.svm", (good + bad).encode())
        code, _, err = _run(capsys, *_fit(tmp_path, path))
        assert code == 2 and "u.svm, line 21: cannot parse feature index" in err
    path = _write(tmp_path / "w.csv", "a,y\n1,0\n\uff12,1\n".encode())
    code, _, err = _run(capsys, *_fit(tmp_path, path))
    assert code == 2 and "w.csv, line 3: cannot parse feature" in err
