"""Streaming readers for LIBSVM/SVMlight, CSV/TSV and idx files.

The readers never hold a whole file in memory: they yield ``(X, y)`` chunks of at
most ``chunk_size`` rows, through a :class:`FileChunks` iterator that also tells how
many bytes of the file it has read (for a progress bar). Plain, gzip, bzip2 and
xz/lzma files are opened transparently (detected from the first bytes of the file,
or from an ``.xz`` / ``.lzma`` suffix). Malformed input raises :class:`ValueError`
with a message that starts with ``"<path>, line <n>: "`` where ``n`` is the 1-based
physical line number.

Each format has a fast parser and a reference parser that decides. LIBSVM lines go
through a compiled parser over blocks of bytes, which leaves every line outside a
plain grammar to a token-by-token parser; CSV goes through pandas' C parser in
chunks, which hands a chunk it does not read plainly to the :mod:`csv` module. The
fast parsers read numbers exactly as Python's ``float`` (correctly rounded), so both
ways give the same chunks and the same errors, at the speed of the fast one.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import itertools
import lzma
import math
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Literal

import numba as nb
import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, DTypeLike

__all__ = [
    "FileChunks",
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


class _CountingRaw(io.RawIOBase):
    """A raw binary file that adds the bytes it reads to ``reader.bytes_read``."""

    def __init__(self, raw, reader: FileChunks):
        super().__init__()
        self._raw, self._reader = raw, reader

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        n = self._raw.readinto(b)
        self._reader.bytes_read += n or 0
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


class FileChunks(Iterator):
    """The ``(X, y)`` chunks of a data file, and how far the reading has come.

    What :func:`iter_svmlight` and :func:`iter_csv` (and so
    :func:`~aucstream.datasets.iter_file`) return: an iterator of chunks that a
    progress bar can follow. ``bytes_read / total_bytes`` is the fraction of the
    file read so far — bytes of the file as stored, so compressed bytes for a
    compressed file, counted as the decompressor asks for them (it reads ahead by
    at most a block) — and, with the time elapsed, gives an ETA.

    Attributes
    ----------
    path : str
        The file.
    total_bytes : int
        Its size on disk.
    bytes_read : int
        Bytes of it read so far by the pass that yields the chunks. A LIBSVM file
        read without ``n_features`` is read twice; the first pass (which finds the
        width, before the first chunk) is not counted, so ``bytes_read`` goes from
        0 to ``total_bytes`` once.
    rows : int
        Rows yielded so far.
    n_features : int or None
        The width of the chunks, once the first chunk is read (for a CSV file,
        the number of feature columns).
    zero_based : bool or None
        For a LIBSVM file, whether its indices are read as 0-based (decided
        before the first chunk, see :func:`iter_svmlight`); None for CSV.

    Examples
    --------
    >>> import os, tempfile
    >>> from aucstream.datasets import iter_svmlight
    >>> path = os.path.join(tempfile.mkdtemp(), "tiny.svm")
    >>> with open(path, "w") as f:
    ...     _ = f.write("1 1:0.5 3:1\\n-1 2:2\\n")
    >>> chunks = iter_svmlight(path, chunk_size=1, n_features=3)
    >>> X, y = next(chunks)
    >>> chunks.rows, chunks.total_bytes
    (1, 19)
    >>> sum(1 for _ in chunks), chunks.bytes_read == chunks.total_bytes
    (1, True)
    """

    def __init__(self, path: PathLike, generator: Iterator | None):
        self.path = os.fspath(path)
        self.name = self.path
        self.total_bytes = os.path.getsize(self.path)
        self.bytes_read = 0
        self.rows = 0
        self.n_features: int | None = None
        self.zero_based: bool | None = None
        self._generator = generator

    def _start(self, generator: Iterator) -> None:
        self._generator = generator

    @contextmanager
    def _open_binary(self) -> Iterator[IO[bytes]]:
        """The file, decompressed, with the bytes read from disk counted."""
        kind = detect_compression(self.path)
        with _CountingRaw(open(self.path, "rb", buffering=0), self) as counted:
            if kind is None:
                f = io.BufferedReader(counted, buffer_size=1 << 20)
            elif kind == "gzip":
                f = gzip.GzipFile(fileobj=counted, mode="rb")
            elif kind == "bz2":
                f = bz2.BZ2File(counted, mode="rb")
            else:
                f = lzma.LZMAFile(counted, mode="rb")
            with f:
                yield f

    def __iter__(self) -> FileChunks:
        return self

    def __next__(self):
        return next(self._generator)

    def close(self) -> None:
        """Stop reading and close the file (as for a generator)."""
        self._generator.close()

    def __enter__(self) -> FileChunks:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _check_chunk_size(chunk_size: int) -> int:
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int | np.integer):
        raise TypeError(f"chunk_size must be a positive int, got {chunk_size!r}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
    return int(chunk_size)


# ---------------------------------------------------------------------- SVMlight


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


def _svmlight_slow(
    path: str,
    labels: list[str],
    rests: list[str],
    linenos: list[int],
    offset: int,
    n_features: int | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The reference parser: token by token, with the exact message for a bad line.

    Every line the compiled parser does not take (:func:`_svm_line`) comes here, so
    this function decides what is accepted and what each error says.
    """
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


def _svmlight_line(text: str, where: tuple, offset: int, n_features: int | None):
    """The reference reading of one line: ``(label, values, indices)`` or None if blank.

    ``where`` is ``(path, line number)``. Text after ``#`` is a comment; ``qid:``
    tokens are dropped; the rest goes to :func:`_svmlight_slow`.
    """
    if "#" in text:
        text = text[: text.index("#")]
    parts = text.split(None, 1)
    if not parts:
        return None
    rest = parts[1] if len(parts) == 2 else ""
    y, data, idx, _ = _svmlight_slow(where[0], [parts[0]], [rest], [where[1]], offset, n_features)
    return y[0], data, idx


# The compiled parser. It takes the lines of a plain grammar — a label and
# ``index:value`` tokens separated by spaces and tabs, numbers written
# ``[+-]digits[.digits][(e|E)[+-]digits]``, indices of at most 18 digits, ``qid:``
# tokens of printable characters, comments after ``#`` — and reads them exactly as
# the reference parser does: a number of at most 18 significant digits whose decimal
# exponent is within [-22, 22] is one correctly rounded operation on two exactly
# representable doubles (Clinger's fast path), any other number is kept as text and
# converted by numpy (correctly rounded, as ``float``). Every other line (and every
# line the reference would refuse) goes to the reference parser.

_LINE_OK, _LINE_BAD, _LINE_SPACE = 0, 1, 2
_NEED_DATA, _ROWS_FULL, _BAD_LINE, _NEED_SPACE = 0, 1, 2, 3
# the parser's state, in one int64 array
(
    _POS,
    _LINE,
    _ROWS,
    _NNZ,
    _NHARD,
    _HLEN,
    _BAD_START,
    _BAD_END,
    _BAD_NEXT,
    _MIN,
    _MAX,
    _ZERO_LINE,
    _ZERO_LINES,
) = range(13)
_N_STATE = 13
_POW10 = np.array([10.0**k for k in range(23)])
_EXACT_MANTISSA = 1 << 53


@nb.njit(cache=True)
def _number(buf, i, stop):
    """A number of the plain grammar at ``buf[i:]``: ``(kind, value, end)``.

    ``kind`` is 0 (not a number of the grammar), 1 (``value`` is the correctly
    rounded double) or 2 (a number whose conversion needs more than one operation:
    left to numpy).
    """
    negative = False
    if i < stop and (buf[i] == 43 or buf[i] == 45):  # + -
        negative = buf[i] == 45
        i += 1
    mantissa = 0
    significant = 0
    exponent = 0
    digits = 0
    hard = False
    while i < stop and 48 <= buf[i] <= 57:
        d = buf[i] - 48
        if mantissa != 0 or d != 0:
            if significant < 18:
                mantissa = mantissa * 10 + d
                significant += 1
            else:
                exponent += 1
                hard = True
        digits += 1
        i += 1
    if i < stop and buf[i] == 46:  # .
        i += 1
        while i < stop and 48 <= buf[i] <= 57:
            d = buf[i] - 48
            if mantissa == 0 and d == 0:
                exponent -= 1
            elif significant < 18:
                mantissa = mantissa * 10 + d
                significant += 1
                exponent -= 1
            else:
                hard = True
            digits += 1
            i += 1
    if digits == 0:
        return 0, 0.0, i
    if i < stop and (buf[i] == 101 or buf[i] == 69):  # e E
        i += 1
        negative_exponent = False
        if i < stop and (buf[i] == 43 or buf[i] == 45):
            negative_exponent = buf[i] == 45
            i += 1
        first = i
        while i < stop and 48 <= buf[i] <= 57:
            i += 1
        if i == first:
            return 0, 0.0, i
        written = 0  # a longer exponent is left to numpy
        for k in range(first, min(i, first + 6)):
            written = written * 10 + (buf[k] - 48)
        hard = hard or i - first > 6
        exponent += -written if negative_exponent else written
    if mantissa == 0:
        return 1, (-0.0 if negative else 0.0), i
    if hard or mantissa >= _EXACT_MANTISSA or exponent > 22 or exponent < -22:
        return 2, 0.0, i
    value = float(mantissa)
    if exponent >= 0:
        value *= _POW10[exponent]
    else:
        value /= _POW10[-exponent]
    return 1, (-value if negative else value), i


@nb.njit(cache=True)
def _keep_hard(buf, start, stop, target, line, hard, nh, hl):
    """Queue the text of a number for numpy; returns the new counts (-1: no space)."""
    hard_target, hard_line, hard_text = hard
    if nh == hard_target.shape[0] or hl + (stop - start) + 1 > hard_text.shape[0]:
        return -1, hl
    hard_target[nh] = target
    hard_line[nh] = line
    for k in range(start, stop):
        hard_text[hl] = buf[k]
        hl += 1
    hard_text[hl] = 32
    return nh + 1, hl + 1


@nb.njit(cache=True)
def _svm_line(buf, p, e, line, st, offset, n_cols, out, hard):
    """Parse the line ``buf[p:e]`` into the next row of ``out`` (see :func:`_svm_parse`)."""
    labels, indptr, indices, values = out
    stop = p
    while stop < e and buf[stop] != 35:  # '#'
        stop += 1
    i = p
    while i < stop and (buf[i] == 32 or buf[i] == 9):
        i += 1
    if i == stop:
        return _LINE_OK  # blank or comment: no row
    row, nnz, nh, hl = st[_ROWS], st[_NNZ], st[_NHARD], st[_HLEN]
    kind, value, j = _number(buf, i, stop)
    if kind == 0 or (j < stop and not (buf[j] == 32 or buf[j] == 9)):
        return _LINE_BAD
    if kind == 2:
        nh, hl = _keep_hard(buf, i, j, -1 - row, line, hard, nh, hl)
        if nh < 0:
            return _LINE_SPACE
    labels[row] = value
    prev = -1
    lo, hi, zero = _MAX_INDEX, -1, False
    i = j
    while True:
        while i < stop and (buf[i] == 32 or buf[i] == 9):
            i += 1
        if i == stop:
            break
        if i + 4 <= stop and buf[i] == 113 and buf[i + 1] == 105 and buf[i + 2] == 100:
            if buf[i + 3] == 58:  # "qid:" token, skipped
                i += 4
                while i < stop and not (buf[i] == 32 or buf[i] == 9):
                    if buf[i] < 33 or buf[i] > 126:
                        return _LINE_BAD
                    i += 1
                continue
        index = 0
        n_digits = 0
        while i < stop and 48 <= buf[i] <= 57:
            if n_digits < 18:
                index = index * 10 + (buf[i] - 48)
            n_digits += 1
            i += 1
        if n_digits == 0 or n_digits > 18 or i == stop or buf[i] != 58:
            return _LINE_BAD
        kind, value, j = _number(buf, i + 1, stop)
        if kind == 0 or (j < stop and not (buf[j] == 32 or buf[j] == 9)):
            return _LINE_BAD
        col = index - offset
        if col < 0 or col <= prev or (n_cols >= 0 and col >= n_cols):
            return _LINE_BAD
        if nnz == indices.shape[0]:
            return _LINE_SPACE
        if kind == 2:
            nh, hl = _keep_hard(buf, i + 1, j, nnz, line, hard, nh, hl)
            if nh < 0:
                return _LINE_SPACE
        indices[nnz] = col
        values[nnz] = value
        nnz += 1
        prev = col
        lo = min(lo, index)
        hi = max(hi, index)
        zero = zero or index == 0
        i = j
    indptr[row + 1] = nnz
    st[_ROWS], st[_NNZ], st[_NHARD], st[_HLEN] = row + 1, nnz, nh, hl
    if hi >= 0:
        st[_MIN] = min(st[_MIN], lo)
        st[_MAX] = max(st[_MAX], hi)
    if zero:
        if st[_ZERO_LINES] == 0:
            st[_ZERO_LINE] = line
        st[_ZERO_LINES] += 1
    return _LINE_OK


@nb.njit(cache=True)
def _svm_parse(buf, end, final, st, max_rows, offset, n_cols, out, hard):
    """Parse the lines of ``buf[st[_POS]:end]`` into ``out`` until ``max_rows`` rows.

    ``out`` is ``(labels, indptr, indices, values)`` and ``hard`` the queue of
    numbers left to numpy (``(target, line, text)``: target >= 0 is a position in
    ``values``, -1 - r the label of row r). Lines end at ``\\n``, ``\\r\\n`` or
    ``\\r`` (Python's universal newlines, so line numbers are those of the
    reference reader). Returns ``_ROWS_FULL``, ``_NEED_DATA`` (the buffer ends
    before a complete line; with ``final`` the file is done), ``_NEED_SPACE`` (the
    arrays are full; the line is not consumed) or ``_BAD_LINE`` (the line between
    ``st[_BAD_START]`` and ``st[_BAD_END]`` is left to the reference parser, and the
    next one starts at ``st[_BAD_NEXT]``).
    """
    pos = st[_POS]
    while True:
        if st[_ROWS] == max_rows:
            return _ROWS_FULL
        if pos >= end:
            return _NEED_DATA
        e = pos
        while e < end and buf[e] != 10 and buf[e] != 13:
            e += 1
        if e == end:
            if not final:
                return _NEED_DATA
            following = end
        elif buf[e] == 13:
            if e + 1 < end:
                following = e + 2 if buf[e + 1] == 10 else e + 1
            elif final:
                following = e + 1
            else:
                return _NEED_DATA  # a '\n' may follow in the next block
        else:
            following = e + 1
        line = st[_LINE] + 1
        status = _svm_line(buf, pos, e, line, st, offset, n_cols, out, hard)
        if status == _LINE_BAD:
            st[_BAD_START], st[_BAD_END], st[_BAD_NEXT] = pos, e, following
            return _BAD_LINE
        if status == _LINE_SPACE:
            return _NEED_SPACE
        st[_LINE] = line
        pos = following
        st[_POS] = pos


class _SvmlightPass:
    """One pass over a LIBSVM file in row chunks: a byte buffer, the compiled
    parser, the reference parser for the lines it leaves, numpy for hard numbers."""

    _BLOCK = 1 << 20

    def __init__(self, reader: FileChunks, offset: int, n_features: int | None):
        self.reader = reader
        self.name = reader.name
        self.offset = offset
        self.n_features = n_features
        self.buf = np.empty(0, dtype=np.uint8)
        self.out = None
        self.final = False
        self.st = np.zeros(_N_STATE, dtype=np.int64)
        self.st[_MIN] = _MAX_INDEX

    def chunks(self, chunk_size: int) -> Iterator[tuple]:
        """Yield ``(y, data, indices, indptr)`` of at most ``chunk_size`` rows."""
        with self.reader._open_binary() as f:
            self.file = f
            while True:
                out = self._chunk(chunk_size)
                if out is None:
                    return
                yield out

    def _refill(self) -> None:
        start = self.st[_POS]
        block = self.file.read(self._BLOCK)
        if not block:
            self.final = True
        rest = self.buf[start:]
        self.buf = np.concatenate([rest, np.frombuffer(block, dtype=np.uint8)])
        self.st[_POS] = 0

    def _arrays(self, chunk_size: int) -> None:
        """The output arrays of a chunk, kept from chunk to chunk."""
        if getattr(self, "out", None) is not None and self.out[0].shape[0] == chunk_size:
            return
        capacity = 16 * chunk_size
        self.out = (
            np.empty(chunk_size),
            np.zeros(chunk_size + 1, dtype=np.int64),
            np.empty(capacity, dtype=np.int64),
            np.empty(capacity),
        )
        self.hard = (
            np.empty(1024, dtype=np.int64),
            np.empty(1024, dtype=np.int64),
            np.empty(1 << 16, dtype=np.uint8),
        )

    def _grow(self, extra: int = 0) -> None:
        """Double the arrays (the parser stopped before a line that did not fit)."""
        labels, indptr, indices, values = self.out
        nnz, nh, hl = int(self.st[_NNZ]), int(self.st[_NHARD]), int(self.st[_HLEN])
        size = max(2 * indices.shape[0], nnz + extra)
        self.out = (labels, indptr, _resized(indices, nnz, size), _resized(values, nnz, size))
        target, line, text = self.hard
        # a number's text is at most as long as the rest of the buffer
        room = 2 * text.shape[0] + self.buf.shape[0] - int(self.st[_POS])
        self.hard = (
            _resized(target, nh, 2 * target.shape[0]),
            _resized(line, nh, 2 * line.shape[0]),
            _resized(text, hl, room),
        )

    def _chunk(self, chunk_size: int):
        st = self.st
        st[_ROWS] = st[_NNZ] = st[_NHARD] = st[_HLEN] = 0
        self._arrays(chunk_size)
        while True:
            status = _svm_parse(
                self.buf,
                self.buf.shape[0],
                self.final,
                st,
                chunk_size,
                self.offset,
                -1 if self.n_features is None else self.n_features,
                self.out,
                self.hard,
            )
            if status == _ROWS_FULL:
                break
            if status == _NEED_DATA:
                if self.final:
                    break
                self._refill()
            elif status == _NEED_SPACE:
                self._grow()
            else:
                self._reference_line()
        rows, nnz = int(st[_ROWS]), int(st[_NNZ])
        if rows == 0:
            return None
        self._resolve_hard()
        labels, indptr, indices, values = self.out
        return (
            labels[:rows].copy(),
            values[:nnz].copy(),
            indices[:nnz].copy(),
            indptr[: rows + 1].copy(),
        )

    def _reference_line(self) -> None:
        """Read the line the compiled parser left with the reference parser."""
        st = self.st
        self._resolve_hard()  # an earlier bad number is reported first
        line = int(st[_LINE]) + 1
        text = self.buf[st[_BAD_START] : st[_BAD_END]].tobytes().decode("latin-1")
        parsed = _svmlight_line(text, (self.name, line), self.offset, self.n_features)
        if parsed is not None:
            label, data, idx = parsed
            if st[_NNZ] + idx.size > self.out[2].shape[0]:
                self._grow(idx.size)
            labels, indptr, indices, values = self.out
            row, nnz = st[_ROWS], st[_NNZ]
            labels[row] = label
            indices[nnz : nnz + idx.size] = idx
            values[nnz : nnz + idx.size] = data
            indptr[row + 1] = nnz + idx.size
            st[_ROWS], st[_NNZ] = row + 1, nnz + idx.size
            if idx.size:
                raw = idx + self.offset
                st[_MIN] = min(st[_MIN], raw[0])
                st[_MAX] = max(st[_MAX], raw[-1])
                if raw[0] == 0:
                    st[_ZERO_LINE] = st[_ZERO_LINE] if st[_ZERO_LINES] else line
                    st[_ZERO_LINES] += 1
        st[_LINE] = line
        st[_POS] = st[_BAD_NEXT]

    def _resolve_hard(self) -> None:
        """Convert the queued numbers (numpy: correctly rounded, as ``float``)."""
        nh = int(self.st[_NHARD])
        if nh == 0:
            return
        target, line, text = self.hard
        words = text[: self.st[_HLEN]].tobytes()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            numbers = np.fromstring(words, dtype=np.float64, sep=" ")
        if numbers.shape[0] != nh:  # pragma: no cover - the grammar is numpy's subset
            numbers = np.array([float(w) for w in words.split()])
        bad = ~np.isfinite(numbers)
        if bad.any():  # "1e999": the reference parser names the token
            _raise_at_line(self.reader, int(line[:nh][bad][0]), self.offset, self.n_features)
        labels, _, _, values = self.out
        where = target[:nh]
        is_label = where < 0
        labels[-1 - where[is_label]] = numbers[is_label]
        values[where[~is_label]] = numbers[~is_label]
        self.st[_NHARD] = self.st[_HLEN] = 0


def _resized(array: np.ndarray, used: int, size: int) -> np.ndarray:
    """A new array of ``size`` entries starting with ``array[:used]``."""
    out = np.empty(max(size, used), dtype=array.dtype)
    out[:used] = array[:used]
    return out


def _raise_at_line(reader: FileChunks, lineno: int, offset: int, n_features: int | None):
    """Raise the reference parser's error for one line of the file (read again)."""
    with _open_text(reader.path, encoding="latin-1") as f:
        for number, text in enumerate(f, 1):
            if number == lineno:
                _svmlight_line(text, (reader.name, lineno), offset, n_features)
                break
    raise ValueError(f"{reader.name}, line {lineno}: non-finite number")  # pragma: no cover


def _scan(reader: FileChunks, chunk_size: int) -> tuple[SvmlightInfo, tuple[int, int]]:
    """A validating pass over the whole file: its summary, and the first line holding
    index 0 with the number of such lines."""
    n = nnz = 0
    parser = _SvmlightPass(reader, 0, None)
    for y, _, idx, _ in parser.chunks(chunk_size):
        n += y.size
        nnz += idx.size
    st = parser.st
    lo = int(st[_MIN]) if nnz else -1
    hi = int(st[_MAX]) if nnz else -1
    zero_based = lo == 0
    n_features = 0 if hi < 0 else (hi + 1 if zero_based else hi)
    info = SvmlightInfo(n, n_features, zero_based, nnz, lo, hi)
    return info, (int(st[_ZERO_LINE]), int(st[_ZERO_LINES]))


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
    return _scan(FileChunks(path, None), chunk_size)[0]


def iter_svmlight(
    path: PathLike,
    chunk_size: int = 10000,
    n_features: int | None = None,
    dtype: DTypeLike = np.float64,
    zero_based: bool | Literal["auto"] = "auto",
    dense: bool = False,
) -> FileChunks:
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
        Whether indices start at 0. LIBSVM files are 1-based. The base is decided
        for the whole file before any chunk is yielded, never from a part of it:

        - True or False: as given; with False an index 0 is an error naming its
          line.
        - "auto" with ``n_features`` given: 1-based, the LIBSVM convention (the
          file is read once, so nothing else is known in advance); an index 0 is
          an error naming its line that suggests ``zero_based=True``.
        - "auto" without ``n_features``: decided by the first pass, which reads
          the whole file anyway for its width: 0-based exactly when the index 0
          occurs anywhere in the file. Because one stray ``0:`` in a 1-based file
          shifts every column, this decision is never silent: a ``UserWarning``
          names the first line holding index 0 and how many lines do; pass
          ``zero_based=True`` for 0-based files (no warning) or ``False`` to have
          a stray index 0 refused.
    dense : bool, default=False
        Yield dense ndarrays instead of CSR matrices.

    Returns
    -------
    FileChunks
        An iterator of ``(X, y)`` chunks that also tells how far it has read
        (``bytes_read`` of ``total_bytes``, for a progress bar), and, once the
        first chunk is read, the width (``n_features``) and base (``zero_based``)
        it uses.

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
    parse errors while iterating. The lines are parsed by a compiled parser over
    blocks of bytes; it takes the lines of a plain grammar and reads their numbers
    exactly as Python's ``float`` does (correctly rounded), and leaves every other
    line to a token-by-token reference parser, which accepts or refuses it and
    names the problem. So the two agree on every input, and the reader costs about
    as much as reading a plain file.
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
    reader = FileChunks(path, None)
    reader._start(_iter_svmlight(reader, chunk_size, n_features, dtype, zero_based, dense))
    return reader


def _iter_svmlight(reader, chunk_size, n_features, dtype, zero_based, dense):
    if n_features is None:
        info, (zero_line, zero_lines) = _scan(reader, chunk_size)
        if zero_based == "auto":
            zero_based = info.zero_based
            if zero_based:
                warnings.warn(
                    f"{reader.name}: read as 0-based because feature index 0 occurs on "
                    f"{zero_lines} of {info.n_samples} lines (first at line {zero_line}); "
                    "pass zero_based=True to read a 0-based file without this warning, or "
                    "zero_based=False to refuse index 0",
                    UserWarning,
                    stacklevel=3,
                )
        n_features = (info.max_index + 1 if zero_based else info.max_index) if info.nnz else 0
        n_features = max(n_features, 0)
        reader.bytes_read = 0
    elif zero_based == "auto":
        zero_based = False
    reader.n_features, reader.zero_based = n_features, bool(zero_based)
    offset = 0 if zero_based else 1
    for y, data, idx, indptr in _SvmlightPass(reader, offset, n_features).chunks(chunk_size):
        X = sp.csr_matrix((data.astype(dtype, copy=False), idx, indptr), shape=(y.size, n_features))
        X.has_sorted_indices = True
        reader.rows += y.size
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
) -> FileChunks:
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

    Returns
    -------
    FileChunks
        An iterator of ``(X, y)`` chunks that also tells how far it has read
        (``bytes_read`` of ``total_bytes``, for a progress bar).

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

    Notes
    -----
    The first record (header or not) is read with the :mod:`csv` module; the rest
    is parsed in chunks by pandas' C parser (when pandas is installed), whose
    numbers are correctly rounded, as Python's ``float``. Whatever pandas does not
    parse as plainly valid — a parse error, a value that is not a finite number, a
    missing field, a label that is not a finite number — makes the reader go back
    to the start of that chunk with the :mod:`csv` module (the file is read again
    from its start), which either reads the chunk or names the bad line. So both
    ways give the same chunks and the same errors.
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
    reader = FileChunks(path, None)
    options = _CsvOptions(label_column, chunk_size, delim, header, np.dtype(dtype), encoding)
    reader._start(_iter_csv(reader, options, label_type))
    return reader


@dataclass(frozen=True)
class _CsvOptions:
    label_column: int | str
    chunk_size: int
    delimiter: str | None
    header: bool | str
    dtype: np.dtype
    encoding: str


@contextmanager
def _open_csv_text(reader: FileChunks, encoding: str) -> Iterator[io.TextIOWrapper]:
    with reader._open_binary() as f:
        text = io.TextIOWrapper(f, encoding=encoding, newline="")
        try:
            yield text
        finally:
            text.detach()


def _csv_head(reader: FileChunks, options: _CsvOptions):
    """The first record: ``(line number, fields, header?, label index, first label)``.

    ``first label`` is the label of the first data row (None if there is none); None
    for an empty file.
    """
    name = reader.name
    with _open_csv_text(reader, options.encoding) as f:
        first = next(_rows(f, options.delimiter), None)
        if first is None:
            return None
        lineno0, fields0 = first
        header = options.header
        if header == "infer":
            header = not any(_is_number(s) for s in fields0)
        following = next(_rows(f, options.delimiter), None) if header else first
    n_fields = len(fields0)
    label_column = options.label_column
    if isinstance(label_column, str):
        names = [s.strip() for s in fields0]
        if label_column not in names:
            raise ValueError(
                f"{name}, line {lineno0}: no column named {label_column!r} in the header {names!r}"
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
    if following is None:
        first_label = None
    else:  # a short record is refused later, with its line
        first_label = following[1][li] if len(following[1]) > li else ""
    return lineno0, fields0, header, li, first_label


def _iter_csv(reader: FileChunks, options: _CsvOptions, label_type: str):
    head = _csv_head(reader, options)
    if head is None:
        return
    lineno0, fields0, header, li, first_label = head
    reader.n_features = len(fields0) - 1
    if first_label is None:  # a header and no data
        return
    numeric = _is_number(first_label) if label_type == "infer" else label_type == "numeric"
    done = 0
    if _pandas_can_read(reader, options, fields0):
        reader.bytes_read = 0
        chunks = _csv_pandas(reader, options, head, numeric)
        try:
            for X, y in chunks:
                done += 1
                reader.rows += y.shape[0]
                yield X, y
            return
        except _NotPlain:
            pass
    reader.bytes_read = 0  # the csv module reads the file again from its start
    chunks = _csv_reference(reader, options, head, label_type)
    for k, (X, y) in enumerate(chunks):
        if k >= done:
            reader.rows += y.shape[0]
            yield X, y


class _NotPlain(Exception):
    """pandas met something it does not read as the csv module does."""


_PANDAS_ENCODINGS = {"utf-8", "utf8", "ascii", "latin-1", "latin1", "iso-8859-1"}


def _pandas_can_read(reader: FileChunks, options: _CsvOptions, fields0: list[str]) -> bool:
    """Whether the pandas path applies (pandas installed, an encoding both read alike,
    no byte-order mark, a one-line first record)."""
    if options.encoding.lower().replace("_", "-") not in _PANDAS_ENCODINGS:
        return False
    if any("\n" in s or "\r" in s for s in fields0) or fields0[0].startswith("\ufeff"):
        return False
    try:
        import pandas  # noqa: F401
    except ImportError:  # pragma: no cover - pandas is a dependency
        return False
    return True


def _csv_pandas(reader: FileChunks, options: _CsvOptions, head, numeric):
    import pandas as pd

    _, fields0, header, li, _ = head
    n_fields = len(fields0)
    features = np.array([k for k in range(n_fields) if k != li], dtype=np.intp)
    extra = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
    if numeric:  # one float64 block: one array per chunk
        dtype = np.float64
    else:
        dtype = {k: (object if k == li else np.float64) for k in range(n_fields)}
    with reader._open_binary() as f:
        try:
            # header=0: pandas' first non-blank line is the header the csv module found
            # (a line one counts as blank and the other not makes the header a data
            # row, which does not parse: the csv module then reads the file)
            frames = pd.read_csv(
                f,
                sep=r"\s+" if options.delimiter is None else options.delimiter,
                header=0 if header else None,
                names=list(range(n_fields)),
                chunksize=options.chunk_size,
                dtype=dtype,
                na_filter=False,
                encoding=options.encoding,
                engine="c",
                skip_blank_lines=True,
                **extra,
            )
            for frame in frames:
                if numeric:
                    values = frame.to_numpy(dtype=np.float64)
                    if not np.isfinite(values).all():
                        raise _NotPlain
                    X, y = values[:, features], values[:, li].copy()
                else:
                    X = frame[features].to_numpy(dtype=np.float64)
                    labels = frame[li].to_numpy()
                    if not np.isfinite(X).all() or pd.isna(labels).any():
                        raise _NotPlain
                    y = np.array([s.strip() for s in labels], dtype=str)
                yield X.astype(options.dtype, copy=False), y
        except (ValueError, TypeError, pd.errors.ParserError) as error:
            raise _NotPlain from error


def _csv_reference(reader: FileChunks, options: _CsvOptions, head, label_type: str):
    """The csv-module reader: every record checked field by field, errors by line."""
    name = reader.name
    lineno0, fields0, header, li, _ = head
    n_fields = len(fields0)
    with _open_csv_text(reader, options.encoding) as f:
        rows = _rows(f, options.delimiter)
        next(rows)  # the first record, read already
        state = {"numeric": None if label_type == "infer" else label_type == "numeric"}
        chunk: list[list[str]] = []
        linenos: list[int] = []

        def convert():
            return _csv_convert(name, chunk, linenos, li, n_fields, options.dtype, state)

        if not header:  # the first record is a data row
            rows = itertools.chain([(lineno0, fields0)], rows)
        for lineno, fields in rows:
            if len(fields) != n_fields:
                raise ValueError(
                    f"{name}, line {lineno}: expected {n_fields} fields, found {len(fields)}"
                )
            chunk.append(fields)
            linenos.append(lineno)
            if len(chunk) == options.chunk_size:
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
