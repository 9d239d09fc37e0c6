"""Streaming readers for LIBSVM/SVMlight, CSV/TSV and idx files.

The readers never hold a whole file in memory: they yield ``(X, y)`` chunks of at
most ``chunk_size`` rows. Plain, gzip, bzip2 and xz/lzma files are opened
transparently (detected from the first bytes of the file, or from an ``.xz`` /
``.lzma`` suffix). Malformed input raises :class:`ValueError` with a message that
starts with ``"<path>, line <n>: "`` where ``n`` is the 1-based physical line number.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import lzma
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, DTypeLike

__all__ = [
    "SvmlightInfo",
    "detect_compression",
    "iter_chunks",
    "iter_csv",
    "iter_svmlight",
    "load_csv",
    "load_idx",
    "load_svmlight",
    "open_file",
    "scan_svmlight",
]

PathLike = str | os.PathLike

_GZIP_MAGIC = b"\x1f\x8b"
_XZ_MAGIC = b"\xfd7zXZ\x00"
_BZ2_BLOCK_MAGIC = b"1AY&SY"


# --------------------------------------------------------------------------- opening


def detect_compression(path: PathLike) -> str | None:
    """The compression of a file from its first bytes: "gzip", "bz2", "xz" or None.

    A file whose name ends in ``.lzma`` is a legacy lzma stream ("xz" here: both are
    read by :mod:`lzma`).

    Parameters
    ----------
    path : str or path-like
        An existing file.

    Returns
    -------
    str or None
    """
    with open(os.fspath(path), "rb") as f:
        head = f.read(10)
    if head.startswith(_GZIP_MAGIC):
        return "gzip"
    if head.startswith(_XZ_MAGIC) or os.fspath(path).endswith(".lzma"):
        return "xz"
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[4:10] == _BZ2_BLOCK_MAGIC:
        return "bz2"
    if head[:3] == b"BZh" and len(head) == 4 and head[3:4].isdigit():
        return "bz2"  # an empty bzip2 stream
    return None


_OPENERS = {"gzip": gzip.open, "xz": lzma.open, "bz2": bz2.open, None: open}


def open_file(path: PathLike) -> IO[bytes]:
    """Open a possibly compressed file for binary reading.

    The compression is detected from the magic bytes at the start of the file
    (gzip, bzip2, xz; see :func:`detect_compression`); a file whose name ends in
    ``.lzma`` is read as a legacy lzma stream. Anything else is opened as a plain file.

    Parameters
    ----------
    path : str or path-like
        The file to open.

    Returns
    -------
    file object
        A binary file object yielding the decompressed bytes; close it after use.
    """
    path = os.fspath(path)
    return _OPENERS[detect_compression(path)](path, "rb")


def _open_text(path: PathLike, encoding: str, newline: str | None = None) -> io.TextIOWrapper:
    return io.TextIOWrapper(open_file(path), encoding=encoding, newline=newline)


def _check_chunk_size(chunk_size: int) -> int:
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int | np.integer):
        raise TypeError(f"chunk_size must be a positive int, got {chunk_size!r}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
    return int(chunk_size)


# ---------------------------------------------------------------------- SVMlight


# a ':' at the start of the joined feature text or right after whitespace means a
# token without an index (or an index separated from its ':' by a blank)
_BAD_COLON = re.compile(r"\s:")
_MAX_INDEX = 2**62


@dataclass(frozen=True)
class SvmlightInfo:
    """What a streaming pass over a LIBSVM/SVMlight file found.

    Attributes
    ----------
    n_samples : int
        Number of examples (non-blank, non-comment lines).
    n_features : int
        Number of columns implied by the largest feature index and ``zero_based``.
    zero_based : bool
        True when the file contains the index 0 (so it is read as 0-based).
    nnz : int
        Number of stored ``index:value`` pairs.
    min_index, max_index : int
        Smallest and largest feature index as written in the file (-1 if none).
    """

    n_samples: int
    n_features: int
    zero_based: bool
    nnz: int
    min_index: int
    max_index: int


def _parse(cast, text: str, where: str, what: str):
    """``cast(text)``, or a ValueError "<where>: cannot parse <what>"."""
    try:
        return cast(text)
    except ValueError:
        raise ValueError(f"{where}: cannot parse {what}") from None


def _drop_qid(rest: str) -> str:
    return " ".join(t for t in rest.split() if not t.startswith("qid:"))


def _svmlight_slow(
    path: str,
    labels: list[str],
    rests: list[str],
    linenos: list[int],
    offset: int,
    n_features: int | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Token-by-token parse of one chunk; raises with the exact line on bad input."""
    ys: list[float] = []
    data: list[float] = []
    indices: list[int] = []
    indptr = [0]
    for label, rest, lineno in zip(labels, rests, linenos, strict=True):
        where = f"{path}, line {lineno}"
        yv = _parse(float, label, where, f"label {label!r}")
        if not math.isfinite(yv):
            raise ValueError(f"{where}: non-finite label {label!r}")
        ys.append(yv)
        prev = -1
        for tok in rest.split():
            if tok.startswith("qid:"):
                continue
            idx_s, sep, val_s = tok.partition(":")
            if not sep or not idx_s or not val_s or ":" in val_s:
                raise ValueError(f"{where}: cannot parse feature token {tok!r}")
            idx = _parse(int, idx_s, where, f"feature index in token {tok!r}")
            val = _parse(float, val_s, where, f"feature value in token {tok!r}")
            if not math.isfinite(val):
                raise ValueError(f"{where}: non-finite feature value in token {tok!r}")
            if idx < 0:
                raise ValueError(f"{where}: negative feature index in token {tok!r}")
            if idx >= _MAX_INDEX:
                raise ValueError(f"{where}: feature index too large in token {tok!r}")
            col = idx - offset
            if col < 0:
                raise ValueError(
                    f"{where}: feature index 0 in token {tok!r}, but the file is read as "
                    "1-based; pass zero_based=True to read it as 0-based"
                )
            if n_features is not None and col >= n_features:
                raise ValueError(
                    f"{where}: feature index {idx} in token {tok!r} exceeds "
                    f"n_features={n_features}"
                    + (" (indices are 1-based)" if offset == 1 else " (indices are 0-based)")
                )
            if col <= prev:
                raise ValueError(
                    f"{where}: feature indices must be sorted in increasing order and "
                    f"unique (token {tok!r})"
                )
            prev = col
            indices.append(col)
            data.append(val)
        indptr.append(len(indices))
    return (
        np.asarray(ys, dtype=np.float64),
        np.asarray(data, dtype=np.float64),
        np.asarray(indices, dtype=np.int64),
        np.asarray(indptr, dtype=np.int64),
    )


def _svmlight_fast(
    labels: list[str], rests: list[str], offset: int, n_features: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Vectorised parse of one chunk; returns None whenever anything looks wrong.

    It accepts exactly the input the token-by-token parser accepts, so on None the
    caller re-parses the chunk slowly to either raise a precise error or get the
    same result.
    """
    try:
        y = np.array(labels, dtype=np.float64)
    except ValueError:
        return None
    counts = np.fromiter((r.count(":") for r in rests), dtype=np.int64, count=len(rests))
    text = " ".join(rests)
    if text.startswith(":") or _BAD_COLON.search(text) is not None:
        return None
    # every token 'i:v' becomes 'i', ':v'; tokens must then strictly alternate
    toks = text.replace(":", " :").split()
    if len(toks) % 2:
        return None
    idx_toks = toks[0::2]
    val_toks = toks[1::2]
    if ":" in "".join(idx_toks):
        return None
    joined_vals = "".join(val_toks)
    if joined_vals.count(":") != len(val_toks):
        return None
    try:
        idx = np.array(idx_toks, dtype=np.int64)
        data = np.array(joined_vals.split(":")[1:], dtype=np.float64)
    except (ValueError, OverflowError):
        return None
    if not (np.isfinite(y).all() and np.isfinite(data).all()):
        return None
    if idx.size:
        idx -= offset
        if idx.min() < 0:
            return None
        if n_features is not None and idx.max() >= n_features:
            return None
    indptr = np.zeros(len(rests) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    if indptr[-1] != idx.size:  # pragma: no cover - guaranteed by the checks above
        return None
    if idx.size > 1:
        # strictly increasing within each row: ignore the steps across row starts
        steps_ok = np.diff(idx) > 0
        starts = indptr[1:-1]
        starts = starts[(starts > 0) & (starts < idx.size)]
        steps_ok[starts - 1] = True
        if not steps_ok.all():
            return None
    return y, data, idx, indptr


def _svmlight_raw_chunks(
    path: PathLike, chunk_size: int, offset: int, n_features: int | None
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Yield ``(y, data, indices, indptr)`` arrays for chunks of the file."""
    name = os.fspath(path)
    labels: list[str] = []
    rests: list[str] = []
    linenos: list[int] = []

    def convert():
        out = _svmlight_fast(labels, rests, offset, n_features)
        if out is None:
            out = _svmlight_slow(name, labels, rests, linenos, offset, n_features)
        return out

    with _open_text(path, encoding="latin-1") as f:
        for lineno, line in enumerate(f, 1):
            if "#" in line:
                line = line[: line.index("#")]
            parts = line.split(None, 1)
            if not parts:
                continue
            labels.append(parts[0])
            if len(parts) == 2:
                rest = parts[1]
                if "qid:" in rest:
                    rest = _drop_qid(rest)
                rests.append(rest)
            else:
                rests.append("")
            linenos.append(lineno)
            if len(labels) == chunk_size:
                yield convert()
                labels, rests, linenos = [], [], []
        if labels:
            yield convert()


def scan_svmlight(path: PathLike, chunk_size: int = 10000) -> SvmlightInfo:
    """Make one streaming pass over a LIBSVM/SVMlight file and summarise it.

    This is the pass :func:`iter_svmlight` makes first when ``n_features`` is not
    given. Malformed lines raise :class:`ValueError` (see :func:`iter_svmlight`).

    Parameters
    ----------
    path : str or path-like
        The file (plain or compressed).
    chunk_size : int, default=10000
        Number of lines parsed at a time.

    Returns
    -------
    SvmlightInfo
        Row count, inferred width (``max_index`` for 1-based files, ``max_index + 1``
        when index 0 occurs), whether index 0 occurs, and the number of stored values.
    """
    chunk_size = _check_chunk_size(chunk_size)
    n = nnz = 0
    lo, hi = -1, -1
    for y, _, idx, _ in _svmlight_raw_chunks(path, chunk_size, 0, None):
        n += y.size
        nnz += idx.size
        if idx.size:
            cmin, cmax = int(idx.min()), int(idx.max())
            lo = cmin if lo < 0 else min(lo, cmin)
            hi = max(hi, cmax)
    zero_based = lo == 0
    n_features = 0 if hi < 0 else (hi + 1 if zero_based else hi)
    return SvmlightInfo(n, n_features, zero_based, nnz, lo, hi)


def iter_svmlight(
    path: PathLike,
    chunk_size: int = 10000,
    n_features: int | None = None,
    dtype: DTypeLike = np.float64,
    zero_based: bool | Literal["auto"] = "auto",
    dense: bool = False,
) -> Iterator[tuple[sp.csr_matrix | np.ndarray, np.ndarray]]:
    """Stream a LIBSVM/SVMlight file as ``(X, y)`` chunks.

    Each line is ``label index:value index:value ...``. Text after ``#`` is a
    comment, blank lines are skipped, ``qid:`` tokens are ignored, CRLF line ends
    are accepted. Feature indices must be non-negative integers, sorted in
    increasing order and unique within a line; values and labels must be finite
    numbers. Multi-label lines (``1,3 ...``) are not supported.

    Parameters
    ----------
    path : str or path-like
        The file; plain, gzip, bzip2 or xz compressed (see :func:`open_file`).
    chunk_size : int, default=10000
        Maximum number of rows per chunk (the last chunk may be shorter).
    n_features : int or None, default=None
        Width of every chunk. If None, it is inferred with a first streaming pass
        over the whole file (:func:`scan_svmlight`) that finds the largest index,
        so that every chunk has the same width; the file is then read a second
        time. Pass it to read the file once, and always pass it when reading a
        test file on its own (a test file may lack the highest index).
    dtype : numpy dtype, default=np.float64
        Dtype of the feature values.
    zero_based : bool or "auto", default="auto"
        Whether indices start at 0. LIBSVM files are 1-based. With "auto" the file
        is read as 1-based unless an index 0 occurs in it; that is decided by the
        inference pass when ``n_features`` is None, and otherwise "auto" means
        1-based (pass ``zero_based=True`` for 0-based files).
    dense : bool, default=False
        Yield dense ndarrays instead of CSR matrices.

    Yields
    ------
    X : scipy.sparse.csr_matrix or ndarray of shape (n_chunk, n_features)
        Features of at most ``chunk_size`` rows, with sorted indices.
    y : ndarray of float64 of shape (n_chunk,)
        Labels.

    Raises
    ------
    ValueError
        For a malformed line (unparsable label, a token without ``:``, non-integer
        or negative index, non-numeric or non-finite value, unsorted or repeated
        indices, index 0 in a file read as 1-based, an index beyond ``n_features``).
        The message names the file and the 1-based line number, e.g.
        ``"a9a.xz, line 17: cannot parse feature token '3x0.5'"``.

    Notes
    -----
    Bad arguments and a missing file are reported when the function is called;
    parse errors while iterating. A chunk is parsed with a few vectorised string
    operations; a chunk that fails any check is parsed again token by token to
    find the first bad line, so both paths accept exactly the same input.
    """
    chunk_size = _check_chunk_size(chunk_size)
    if zero_based not in (True, False, "auto"):
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
    if n_features is not None:
        if isinstance(n_features, bool) or not isinstance(n_features, int | np.integer):
            raise TypeError(f"n_features must be None or a non-negative int, got {n_features!r}")
        if n_features < 0:
            raise ValueError(f"n_features must be non-negative, got {n_features!r}")
        n_features = int(n_features)
    dtype = np.dtype(dtype)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {os.fspath(path)!r}")
    return _iter_svmlight(path, chunk_size, n_features, dtype, zero_based, dense)


def _iter_svmlight(path, chunk_size, n_features, dtype, zero_based, dense):
    if n_features is None:
        info = scan_svmlight(path, chunk_size)
        if zero_based == "auto":
            zero_based = info.zero_based
        n_features = (info.max_index + 1 if zero_based else info.max_index) if info.nnz else 0
        n_features = max(n_features, 0)
    elif zero_based == "auto":
        zero_based = False
    offset = 0 if zero_based else 1
    for y, data, idx, indptr in _svmlight_raw_chunks(path, chunk_size, offset, n_features):
        X = sp.csr_matrix((data.astype(dtype, copy=False), idx, indptr), shape=(y.size, n_features))
        X.has_sorted_indices = True
        yield (X.toarray() if dense else X), y


def load_svmlight(
    path: PathLike,
    n_features: int | None = None,
    dtype: DTypeLike = np.float64,
    zero_based: bool | Literal["auto"] = "auto",
    dense: bool = False,
    chunk_size: int = 100000,
) -> tuple[sp.csr_matrix | np.ndarray, np.ndarray]:
    """Read a whole LIBSVM/SVMlight file (the chunks of :func:`iter_svmlight`, stacked).

    Parameters
    ----------
    path, n_features, dtype, zero_based, dense, chunk_size
        As in :func:`iter_svmlight`.

    Returns
    -------
    X : scipy.sparse.csr_matrix or ndarray of shape (n_samples, n_features)
    y : ndarray of float64 of shape (n_samples,)
    """
    Xs, ys = [], []
    width = n_features
    for X, y in iter_svmlight(path, chunk_size, n_features, dtype, zero_based, dense):
        Xs.append(X)
        ys.append(y)
        width = X.shape[1]
    return _stack(Xs, ys, width, np.dtype(dtype), dense)


def _stack(Xs, ys, width, dtype, dense):
    if not Xs:
        width = width or 0
        X = np.zeros((0, width), dtype=dtype) if dense else sp.csr_matrix((0, width), dtype=dtype)
        return X, np.zeros(0, dtype=np.float64)
    if dense:
        X = np.concatenate(Xs, axis=0)
    else:
        X = sp.vstack(Xs, format="csr") if len(Xs) > 1 else Xs[0]
    return X, np.concatenate(ys)


# --------------------------------------------------------------------------- CSV


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _rows(f: IO[str], delimiter: str | None) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line number, fields)`` for the non-blank records of a text file."""
    if delimiter is None:
        for lineno, line in enumerate(f, 1):
            fields = line.split()
            if fields:
                yield lineno, fields
    else:
        reader = csv.reader(f, delimiter=delimiter)
        for fields in reader:
            if fields and not (len(fields) == 1 and not fields[0].strip()):
                yield reader.line_num, fields


def iter_csv(
    path: PathLike,
    label_column: int | str = -1,
    chunk_size: int = 10000,
    delimiter: str | None = ",",
    header: bool | Literal["infer"] = "infer",
    dtype: DTypeLike = np.float64,
    encoding: str = "utf-8",
    label_type: Literal["infer", "numeric", "str"] = "infer",
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Stream a delimited text file (CSV, TSV, space separated) as ``(X, y)`` chunks.

    One column holds the label, every other column is a numeric feature. Blank lines
    are skipped; CRLF line ends and compressed files (see :func:`open_file`) are
    accepted.

    Parameters
    ----------
    path : str or path-like
        The file.
    label_column : int or str, default=-1
        Position of the label column (negative counts from the end) or, when the
        file has a header, its name.
    chunk_size : int, default=10000
        Maximum number of rows per chunk.
    delimiter : str or None, default=","
        Field separator. ``None`` or ``" "`` means fields are separated by runs of
        whitespace (leading and trailing blanks ignored, as in ``str.split()``);
        any other single character, ``"\\t"`` included, is used with the :mod:`csv`
        module, so quoted fields work and every separator counts.
    header : bool or "infer", default="infer"
        Whether the first non-blank line is a header. "infer" treats it as a header
        when none of its fields is a number, or when ``label_column`` is a name.
    dtype : numpy dtype, default=np.float64
        Dtype of the features.
    encoding : str, default="utf-8"
        Text encoding.
    label_type : {"infer", "numeric", "str"}, default="infer"
        "numeric": labels are parsed as float64 (a label that is not a finite number
        raises :class:`ValueError`). "str": labels are kept as strings, with
        surrounding whitespace stripped. "infer": "numeric" if the label of the
        first data row is a number, else "str" (the decision does not depend on
        ``chunk_size``).

    Yields
    ------
    X : ndarray of shape (n_chunk, n_columns - 1)
        Features of at most ``chunk_size`` rows.
    y : ndarray of shape (n_chunk,)
        Labels, float64 or strings (see ``label_type``).

    Raises
    ------
    ValueError
        For a row with the wrong number of fields, a non-numeric or non-finite
        feature, or a bad label; the message names the file and the 1-based line.
    """
    chunk_size = _check_chunk_size(chunk_size)
    if header not in (True, False, "infer"):
        raise ValueError(f"header must be True, False or 'infer', got {header!r}")
    if not isinstance(label_column, str | int | np.integer) or isinstance(label_column, bool):
        raise TypeError(f"label_column must be an int or a column name, got {label_column!r}")
    if isinstance(label_column, str):
        if header is False:
            raise ValueError("label_column given by name needs a header (header=True)")
        header = True
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1):
        raise ValueError(f"delimiter must be a single character or None, got {delimiter!r}")
    delim = None if delimiter == " " else delimiter
    if label_type not in ("infer", "numeric", "str"):
        raise ValueError(f"label_type must be 'infer', 'numeric' or 'str', got {label_type!r}")
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {os.fspath(path)!r}")
    return _iter_csv(
        path, label_column, chunk_size, delim, header, np.dtype(dtype), encoding, label_type
    )


def _iter_csv(path, label_column, chunk_size, delimiter, header, dtype, encoding, label_type):
    name = os.fspath(path)
    with _open_text(path, encoding=encoding, newline="") as f:
        rows = _rows(f, delimiter)
        first = next(rows, None)
        if first is None:
            return
        lineno0, fields0 = first
        n_fields = len(fields0)
        if header == "infer":
            header = not any(_is_number(s) for s in fields0)
        if isinstance(label_column, str):
            names = [s.strip() for s in fields0]
            if label_column not in names:
                raise ValueError(
                    f"{name}, line {lineno0}: no column named {label_column!r} in the "
                    f"header {names!r}"
                )
            li = names.index(label_column)
        else:
            li = int(label_column)
            if not -n_fields <= li < n_fields:
                raise ValueError(
                    f"{name}, line {lineno0}: label_column={label_column} is out of range "
                    f"for {n_fields} fields"
                )
            li %= n_fields
        if n_fields < 1:
            return
        state = {"numeric": None if label_type == "infer" else label_type == "numeric"}
        chunk: list[list[str]] = []
        linenos: list[int] = []

        def convert():
            return _csv_convert(name, chunk, linenos, li, n_fields, dtype, state)

        if not header:
            chunk.append(fields0)
            linenos.append(lineno0)
        for lineno, fields in rows:
            if len(fields) != n_fields:
                raise ValueError(
                    f"{name}, line {lineno}: expected {n_fields} fields, found {len(fields)}"
                )
            chunk.append(fields)
            linenos.append(lineno)
            if len(chunk) == chunk_size:
                yield convert()
                chunk, linenos = [], []
        if chunk:
            yield convert()


def _csv_convert(name, rows, linenos, li, n_fields, dtype, state):
    if li == 0:
        feats = [r[1:] for r in rows]
    elif li == n_fields - 1:
        feats = [r[:-1] for r in rows]
    else:
        feats = [r[:li] + r[li + 1 :] for r in rows]
    raw_labels = [r[li] for r in rows]
    try:
        X = np.array(feats, dtype=np.float64).reshape(len(rows), n_fields - 1)
        ok = bool(np.isfinite(X).all())
    except ValueError:
        ok = False
    if not ok:  # locate the offending field (float() is the reference parser)
        X = np.empty((len(rows), n_fields - 1), dtype=np.float64)
        for r, (fields, lineno) in enumerate(zip(feats, linenos, strict=True)):
            for k, s in enumerate(fields):
                c = k if k < li else k + 1
                v = _parse(float, s, f"{name}, line {lineno}", f"feature {s!r} in column {c}")
                if not math.isfinite(v):
                    raise ValueError(
                        f"{name}, line {lineno}: non-finite feature {s!r} in column {c}"
                    )
                X[r, k] = v
    if state["numeric"] is None:  # decided by the first data row
        state["numeric"] = _is_number(raw_labels[0])
    if state["numeric"]:
        try:
            y = np.array(raw_labels, dtype=np.float64)
            ok = bool(np.isfinite(y).all())
        except ValueError:
            ok = False
        if not ok:
            for s, lineno in zip(raw_labels, linenos, strict=True):
                if not _is_number(s) or not math.isfinite(float(s)):
                    raise ValueError(
                        f"{name}, line {lineno}: label {s!r} is not a finite number "
                        "(labels are read as numbers; pass label_type='str' to keep "
                        "them as strings)"
                    )
    else:
        y = np.array([s.strip() for s in raw_labels], dtype=str)
    return X.astype(dtype, copy=False), y


def load_csv(
    path: PathLike,
    label_column: int | str = -1,
    delimiter: str | None = ",",
    header: bool | Literal["infer"] = "infer",
    dtype: DTypeLike = np.float64,
    encoding: str = "utf-8",
    chunk_size: int = 100000,
    label_type: Literal["infer", "numeric", "str"] = "infer",
) -> tuple[np.ndarray, np.ndarray]:
    """Read a whole delimited text file (the chunks of :func:`iter_csv`, stacked).

    Parameters
    ----------
    path, label_column, delimiter, header, dtype, encoding, chunk_size, label_type
        As in :func:`iter_csv`.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        float64 labels, or strings when the labels are not numbers.
    """
    Xs, ys = [], []
    chunks = iter_csv(
        path, label_column, chunk_size, delimiter, header, dtype, encoding, label_type
    )
    for X, y in chunks:
        Xs.append(X)
        ys.append(y)
    if not Xs:
        return np.zeros((0, 0), dtype=dtype), np.zeros(0, dtype=np.float64)
    return np.concatenate(Xs, axis=0), np.concatenate(ys)


# --------------------------------------------------------------------------- idx

_IDX_DTYPES = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


def load_idx(path: PathLike) -> np.ndarray:
    """Read a whole file in the idx format of the MNIST files (plain or compressed).

    The header is two zero bytes, a type code, the number of dimensions and one
    big-endian int32 per dimension; then the data, row-major.

    Parameters
    ----------
    path : str or path-like
        The file, e.g. ``t10k-images-idx3-ubyte.xz``.

    Returns
    -------
    ndarray
        Array of the stored shape and (native-endian) dtype.
    """
    name = os.fspath(path)
    with open_file(path) as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        raise ValueError(f"{name}: not an idx file (bad magic number)")
    dt = _IDX_DTYPES[raw[2]]
    ndim = raw[3]
    start = 4 + 4 * ndim
    if len(raw) < start:
        raise ValueError(f"{name}: truncated idx header")
    shape = tuple(int(d) for d in np.frombuffer(raw, dtype=">i4", count=ndim, offset=4))
    size = math.prod(shape) * dt.itemsize
    if len(raw) - start != size:
        raise ValueError(
            f"{name}: idx header announces shape {shape} ({size} bytes) but "
            f"{len(raw) - start} bytes follow"
        )
    arr = np.frombuffer(raw, dtype=dt, offset=start).reshape(shape)
    return arr.astype(dt.newbyteorder("="))


# ------------------------------------------------------------------------ chunks


def iter_chunks(
    X: ArrayLike | sp.spmatrix, y: ArrayLike | None = None, chunk_size: int = 10000
) -> Iterator[tuple[np.ndarray | sp.csr_matrix, np.ndarray | None]]:
    """Split in-memory data into consecutive row chunks.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Sparse input is converted to CSR (once) and chunked as CSR.
    y : array-like of shape (n_samples,) or None, default=None
        Labels; chunks of it are yielded alongside (None if y is None).
    chunk_size : int, default=10000
        Maximum number of rows per chunk.

    Yields
    ------
    X_chunk : ndarray or scipy.sparse.csr_matrix
        Views (dense) or row slices (sparse) of at most ``chunk_size`` rows.
    y_chunk : ndarray or None
    """
    chunk_size = _check_chunk_size(chunk_size)
    X = X.tocsr() if sp.issparse(X) else np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional, got shape {X.shape}")
    n = X.shape[0]
    if y is not None:
        y = np.asarray(y)
        if y.shape[0] != n:
            raise ValueError(f"X has {n} rows but y has {y.shape[0]} entries")
    for start in range(0, n, chunk_size):
        stop = min(start + chunk_size, n)
        yield X[start:stop], (None if y is None else y[start:stop])
