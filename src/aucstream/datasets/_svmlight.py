"""Streaming reader of LIBSVM/SVMlight files (``label index:value ...`` per line).

A compiled parser reads blocks of bytes and leaves every line outside a plain grammar
to a token-by-token reference parser, which decides what is accepted and names the
file and line of an error; both read numbers exactly as Python's ``float``. The
grammar (ASCII digits only, no ``_``, no separators inside numbers) is written out in
:func:`iter_svmlight`'s docstring, with the rule that decides the index base.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import DTypeLike

from .._kernels import jit
from .._warn import caller_stacklevel
from ._readers import (
    FileChunks,
    PathLike,
    _check_chunk_size,
    _open_text,
    _parse,
    _stack,
)

__all__ = ["SvmlightInfo", "iter_svmlight", "load_svmlight", "scan_svmlight"]


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
        True when the index 0 occurs in the file. (:func:`iter_svmlight` with
        ``zero_based="auto"`` reads such a file as 0-based when the index 0 occurs
        in its first chunk, and refuses it otherwise.)
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


_INDEX = re.compile(r"[0-9]+")
_SEPARATORS = re.compile(r"[ \t]+")


def _svmlight_slow(
    path: str,
    labels: list[str],
    rests: list[str],
    linenos: list[int],
    offset: int,
    n_features: int | None,
    why: str = "",
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The reference parser: token by token, with the exact message for a bad line.

    Every line the compiled parser does not take (:func:`_svm_line`) comes here, so
    this function decides what is accepted and what each error says. ``why`` tells
    why the file is read as 1-based (in the message for an index 0).
    """
    ys: list[float] = []
    data: list[float] = []
    indices: list[int] = []
    indptr = [0]
    for label, rest, lineno in zip(labels, rests, linenos, strict=True):
        where = f"{path}, line {lineno}"
        ys.append(_parse(label, where, f"label {label!r}"))
        prev = -1
        for tok in _SEPARATORS.split(rest):
            if not tok or tok.startswith("qid:"):
                continue
            idx_s, sep, val_s = tok.partition(":")
            if not sep or not idx_s or not val_s or ":" in val_s:
                raise ValueError(f"{where}: cannot parse feature token {tok!r}")
            if _INDEX.fullmatch(idx_s) is None:
                if idx_s[:1] == "-" and _INDEX.fullmatch(idx_s[1:]):
                    raise ValueError(f"{where}: negative feature index in token {tok!r}")
                raise ValueError(
                    f"{where}: cannot parse feature index in token {tok!r} (an index is "
                    "written with the ASCII digits 0-9 only)"
                )
            idx = int(idx_s)
            val = _parse(val_s, where, f"feature value in token {tok!r}")
            if idx >= _MAX_INDEX:
                raise ValueError(f"{where}: feature index too large in token {tok!r}")
            col = idx - offset
            if col < 0:
                raise ValueError(
                    f"{where}: feature index 0 in token {tok!r}, but the file is read as "
                    f"1-based{why}; pass zero_based=True (on the command line: --index-base 0) to "
                    "read it as 0-based"
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


def _svmlight_line(text: str, where: tuple, offset: int, n_features: int | None, why: str = ""):
    """The reference reading of one line: ``(label, values, indices)`` or None if blank.

    ``where`` is ``(path, line number)``. Text after ``#`` is a comment; ``qid:``
    tokens are dropped; the rest goes to :func:`_svmlight_slow`.
    """
    if "#" in text:
        text = text[: text.index("#")]
    parts = _SEPARATORS.split(text.strip(" \t\r\n"), 1)
    if not parts[0]:
        return None
    rest = parts[1] if len(parts) == 2 else ""
    y, data, idx, _ = _svmlight_slow(
        where[0], [parts[0]], [rest], [where[1]], offset, n_features, why
    )
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


@jit
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


@jit
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


@jit
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


@jit
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

    def __init__(self, reader: FileChunks, offset: int, n_features: int | None, why: str = ""):
        self.reader = reader
        self.name = reader.name
        self.offset = offset
        self.why = why
        self.n_features = n_features
        self.buf = np.empty(0, dtype=np.uint8)
        # (labels, indptr, indices, values) of the chunk being parsed; None before it
        self.out: Any = None
        self.hard: Any = None
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
        if self.out is not None and self.out[0].shape[0] == chunk_size:
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
        text = self.buf[st[_BAD_START] : st[_BAD_END]].tobytes().decode("utf-8", "backslashreplace")
        parsed = _svmlight_line(text, (self.name, line), self.offset, self.n_features, self.why)
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


def _raise_at_line(
    reader: FileChunks, lineno: int, offset: int, n_features: int | None, why: str = ""
):
    """Raise the reference parser's error for one line of the file (read again)."""
    with _open_text(reader.path, "utf-8", errors="backslashreplace") as f:
        for number, text in enumerate(f, 1):
            if number == lineno:
                _svmlight_line(text, (reader.name, lineno), offset, n_features, why)
                break
    raise ValueError(f"{reader.name}, line {lineno}: bad line")  # pragma: no cover


@dataclass(frozen=True)
class _ZeroIndex:
    """Where a pass met the feature index 0: its first line, the number of lines
    holding it, and whether it occurs in the first chunk."""

    first_line: int
    lines: int
    in_first_chunk: bool
    first_chunk_rows: int


def _scan(reader: FileChunks, chunk_size: int) -> tuple[SvmlightInfo, _ZeroIndex]:
    """A validating pass over the whole file: its summary, and where index 0 occurs."""
    n = nnz = 0
    parser = _SvmlightPass(reader, 0, None)
    first: tuple[bool, int] | None = None
    for y, _, idx, _ in parser.chunks(chunk_size):
        n += y.size
        nnz += idx.size
        if first is None:
            first = (bool(parser.st[_ZERO_LINES]), n)
    st = parser.st
    lo = int(st[_MIN]) if nnz else -1
    hi = int(st[_MAX]) if nnz else -1
    zero_based = lo == 0
    n_features = 0 if hi < 0 else (hi + 1 if zero_based else hi)
    info = SvmlightInfo(n, n_features, zero_based, nnz, lo, hi)
    early, rows = first if first is not None else (False, 0)
    return info, _ZeroIndex(int(st[_ZERO_LINE]), int(st[_ZERO_LINES]), early, rows)


def _decide_base(reader: FileChunks, zero: _ZeroIndex) -> tuple[bool, str]:
    """The base "auto" chooses from the first pass (see :func:`iter_svmlight`):
    ``(zero_based, why)``, ``why`` telling in an error message why the file is read
    as 1-based. An index 0 after the first chunk of a 1-based file is refused here,
    before any chunk is yielded."""
    if zero.in_first_chunk:
        warnings.warn(
            f"{reader.name}: read as 0-based because feature index 0 occurs in its first "
            f"chunk of {zero.first_chunk_rows} examples (first at line {zero.first_line}); "
            "LIBSVM files are 1-based: pass zero_based=True (on the command line: --index-base "
            "0) to read a 0-based file without this warning, or zero_based=False "
            "(--index-base 1) to refuse index 0",
            UserWarning,
            stacklevel=caller_stacklevel(),
        )
        return True, ""
    why = (
        f' (zero_based="auto" found no index 0 in its first chunk of '
        f"{zero.first_chunk_rows} examples)"
    )
    if zero.lines:
        _raise_at_line(reader, zero.first_line, 1, None, why)
    return False, why


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

    The file is read with one strict grammar (anything else is an error naming the
    file and line)::

        file    = { line ("\\n" | "\\r\\n" | "\\r") }
        line    = [blank] [example] [blank] ["#" comment]
        example = number { blank token }
        token   = index ":" number | "qid:" text
        index   = digit { digit }
        number  = ["+" | "-"] (digit { digit } ["." { digit }] | "." digit { digit })
                  [("e" | "E") ["+" | "-"] digit { digit }]
        digit   = "0" | "1" | ... | "9"       (ASCII only)
        blank   = (" " | "\\t") { " " | "\\t" }

    So a number has no ``_`` (Python's ``float("1_0")`` is 10), no other digits than
    ASCII 0-9 (``float("１")`` is 1), no thousands separator or decimal comma, and is
    not ``inf`` or ``nan``; it is converted as Python's ``float`` (correctly
    rounded) and must be finite. Text after ``#`` is a comment, blank lines are
    skipped, ``qid:`` tokens are ignored. Feature indices must be sorted in
    increasing order and unique within a line. Multi-label lines (``1,3 ...``) are
    not supported. The bytes of a line outside a comment must be ASCII (an error
    message shows other bytes as UTF-8).

    Parameters
    ----------
    path : str or path-like
        The file; plain, gzip, bzip2 or xz compressed (see :func:`open_file`). A
        truncated or corrupt compressed file raises :class:`ValueError` naming the
        file and the line where its good data ends.
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
        before any chunk is yielded and then holds for the whole file:

        - True: 0-based. False: 1-based, and an index 0 is an error naming its
          line.
        - "auto" without ``n_features``: decided by the first pass (which reads
          the whole file anyway for its width) from the first chunk (the first
          ``chunk_size`` examples): 0-based when the index 0 occurs there — with a
          ``UserWarning`` naming the first line that holds it, as this goes
          against the LIBSVM convention — else 1-based, and then an index 0
          anywhere after the first chunk is an error naming its file and line,
          raised before any chunk is yielded. So one stray ``0:`` never shifts
          every column silently: it either shows in the warning or stops the
          reading.
        - "auto" with ``n_features``: 1-based, the LIBSVM convention (the file is
          read once, so nothing else is known in advance); an index 0 is an error
          naming its line.

        Pass True for 0-based files (no warning) or False to have any index 0
        refused.
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
        For a line outside the grammar (unparsable label, a token without ``:``,
        an index that is not ASCII digits or is negative, a value that is not a
        number of the grammar or not finite, unsorted or repeated indices, index 0
        in a file read as 1-based, an index beyond ``n_features``), and for a
        truncated or corrupt compressed file. The message names the file and the
        1-based line number, e.g.
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

    Examples
    --------
    >>> import os, tempfile
    >>> from aucstream.datasets import iter_svmlight
    >>> path = os.path.join(tempfile.mkdtemp(), "tiny.svm")
    >>> with open(path, "w") as f:
    ...     _ = f.write("1 1:0.5 3:1  # a comment\\n-1 qid:7 2:2e0\\n")
    >>> X, y = next(iter_svmlight(path))
    >>> X.toarray(), y
    (array([[0.5, 0. , 1. ],
           [0. , 2. , 0. ]]), array([ 1., -1.]))
    >>> with open(path, "w") as f:
    ...     _ = f.write("1 1_0:2\\n")
    >>> next(iter_svmlight(path))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ...tiny.svm, line 1: cannot parse feature index in token '1_0:2' ...
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
    why = ""
    if n_features is None:
        info, zero = _scan(reader, chunk_size)
        if zero_based == "auto":
            zero_based, why = _decide_base(reader, zero)
        n_features = (info.max_index + 1 if zero_based else info.max_index) if info.nnz else 0
        n_features = max(n_features, 0)
        reader.bytes_read = 0
    elif zero_based == "auto":  # one pass: nothing is known in advance
        zero_based = False
        why = ' (zero_based="auto" reads a file 1-based when n_features is given)'
    offset = 0 if zero_based else 1
    chunks = _SvmlightPass(reader, offset, n_features, why).chunks(chunk_size)
    reader.n_features, reader.zero_based = n_features, bool(zero_based)
    for y, data, idx, indptr in chunks:
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
