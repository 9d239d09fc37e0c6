"""Streaming readers: what every format shares, and idx files.

The formats' readers are :mod:`aucstream.datasets._svmlight` (LIBSVM/SVMlight) and
:mod:`aucstream.datasets._csv` (CSV/TSV); this module holds what they share.

The readers never hold a whole file in memory: they yield ``(X, y)`` chunks of at
most ``chunk_size`` rows, through a :class:`FileChunks` iterator that also tells how
many bytes of the file it has read (for a progress bar). Plain, gzip, bzip2 and
xz/lzma files are opened transparently (detected from the first bytes of the file,
or from an ``.xz`` / ``.lzma`` suffix). Malformed input raises :class:`ValueError`
with a message that starts with ``"<path>, line <n>: "`` where ``n`` is the 1-based
physical line number; a truncated or corrupt compressed file raises
:class:`ValueError` ``"<path>: the file ends early or is corrupt at line <n>: ..."``
with the byte offset in the decompressed data.

Both formats read numbers with one strict grammar (``_NUMBER`` below: ASCII digits,
sign, decimal point, exponent; no ``_``, no other digits, no separators, no
``inf``/``nan``), so a number is read the same by every reader or refused by all.

Each format has a fast parser and a reference parser that decides. LIBSVM lines go
through a compiled parser over blocks of bytes, which leaves every line outside a
plain grammar to a token-by-token parser; CSV goes through pandas' C parser in
chunks, which hands a chunk it does not read plainly to the :mod:`csv` module. The
fast parsers read numbers exactly as Python's ``float`` (correctly rounded), so both
ways give the same chunks and the same errors, at the speed of the fast one.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import math
import os
import re
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any, cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from .._typing import PathLike

__all__ = ["FileChunks", "detect_compression", "iter_chunks", "load_idx", "open_file"]


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


_OPENERS: dict[str | None, Any] = {"gzip": gzip.open, "xz": lzma.open, "bz2": bz2.open, None: open}


def open_file(path: PathLike) -> IO[bytes]:
    """Open a possibly compressed file for binary reading.

    The compression is detected from the magic bytes at the start of the file
    (gzip, bzip2, xz; see :func:`detect_compression`); a file whose name ends in
    ``.lzma`` is read as a legacy lzma stream. Anything else is opened as a plain file.
    A compressed file that is truncated or corrupt raises :class:`ValueError` when
    the reading reaches the damage, naming the file, the line and the byte offset
    (in the decompressed data) where the good data ends.

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
    kind = detect_compression(path)
    f = _OPENERS[kind](path, "rb")
    return f if kind is None else cast(IO[bytes], _Decompressed(f, path, kind))


class _FileDamaged(ValueError):
    """A compressed file ends early or is corrupt (raised by the readers of this package).

    A :class:`ValueError` whose message names the file, the line and the byte offset of
    the decompressed data where the good data ends.
    """


#: what the decompressors raise for a truncated or corrupt stream
_DECOMPRESS_ERRORS = (EOFError, OSError, lzma.LZMAError, zlib.error)


class _Decompressed(io.BufferedIOBase):
    """A decompressing file whose errors name the file, the line and the byte offset.

    ``gzip``, ``bz2`` and ``lzma`` raise ``EOFError``/``OSError``/``LZMAError`` with no
    file name when the stream is truncated or corrupt; here that is a
    :class:`_FileDamaged` saying where the good data ends: the byte offset of the
    decompressed data delivered, and its line (the ``\\n`` before it, counted by
    reading the good part again once the error happens).
    """

    def __init__(self, inner, name: str, kind: str, path: str | None = None):
        super().__init__()
        self._inner, self._name, self._kind = inner, name, kind
        self._path = name if path is None else path
        self._offset = 0  # decompressed bytes delivered
        self._error: _FileDamaged | None = None

    def readable(self) -> bool:
        return True

    def _lines_before(self, offset: int) -> int:
        """The ``\\n`` in the first ``offset`` decompressed bytes (the file read again:
        an error path, so the reading itself does not count lines)."""
        lines = 0
        with _OPENERS[self._kind](self._path, "rb") as f:
            while offset > 0:
                data = f.read1(min(offset, 1 << 20))
                if not data:
                    break
                lines += data.count(b"\n")
                offset -= len(data)
        return lines

    def _damaged(self, error: BaseException) -> _FileDamaged:
        reason = " ".join(str(error).split()) or type(error).__name__
        try:
            line = f"line {self._lines_before(self._offset) + 1}"
        except _DECOMPRESS_ERRORS:  # pragma: no cover - the good part read again
            line = "an unknown line"
        return _FileDamaged(
            f"{self._name}: the file ends early or is corrupt at {line}: "
            f"its {self._kind} data breaks off after byte {self._offset:,} of the "
            f"decompressed data ({reason})"
        )

    def read1(self, size: int = -1) -> bytes:
        """At most ``size`` bytes from one decompression step; the good data before
        a damage is delivered first, the error on the next call."""
        if self._error is not None:
            raise self._error
        try:
            data = self._inner.read1(size)
        except _DECOMPRESS_ERRORS as error:
            self._error = self._damaged(error)
            self._error.__cause__ = error
            raise self._error from error
        self._offset += len(data)
        return data

    def read(self, size: int | None = -1) -> bytes:
        parts: list[bytes] = []
        got = 0
        while size is None or size < 0 or got < size:
            try:
                data = self.read1(-1 if size is None or size < 0 else size - got)
            except _FileDamaged:
                if parts and size is not None and size >= 0:  # the good data first
                    break
                raise
            if not data:
                break
            parts.append(data)
            got += len(data)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def readinto(self, b) -> int:
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self._inner.close()
        super().close()


def _open_text(
    path: PathLike, encoding: str, newline: str | None = None, errors: str = "strict"
) -> io.TextIOWrapper:
    return io.TextIOWrapper(open_file(path), encoding=encoding, newline=newline, errors=errors)


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
        self._generator: Any = generator

    def _start(self, generator: Iterator) -> None:
        self._generator = generator

    @contextmanager
    def _open_binary(self) -> Iterator[IO[bytes]]:
        """The file, decompressed, with the bytes read from disk counted."""
        kind = detect_compression(self.path)
        with _CountingRaw(open(self.path, "rb", buffering=0), self) as counted:
            f: Any
            inner: Any
            if kind is None:
                f = io.BufferedReader(counted, buffer_size=1 << 20)
            else:
                if kind == "gzip":
                    inner = gzip.GzipFile(fileobj=counted, mode="rb")
                else:
                    opener: Any = bz2.BZ2File if kind == "bz2" else lzma.LZMAFile
                    inner = opener(counted, mode="rb")
                f = _Decompressed(inner, self.name, kind, self.path)
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


# ------------------------------------------------------------------------ numbers

# The one grammar of a number in a data file, for every reader: ASCII digits, an
# optional sign, an optional decimal point and an optional exponent,
#     [+-]? ( digits [ "." digits? ] | "." digits ) ( (e|E) [+-]? digits )?
# and nothing else: no "_" (Python's float("1_0") is 10), no other digits than 0-9
# (float("\uff11") is 1), no thousands separators, no decimal comma, no "inf" or "nan",
# no hexadecimal. A number that matches is converted as Python's float (correctly
# rounded). CSV fields may have ASCII blanks around the number (as pandas allows).
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_BLANKS = " \t\n\v\f\r"
_NUMBERS_TEXT = _NUMBER.pattern + r"(?:\x00" + _NUMBER.pattern + r")*"
_NUMBERS = re.compile(_NUMBERS_TEXT)
GRAMMAR_HINT = "numbers are written with ASCII digits, '.', and an optional exponent"


def is_number(text: str) -> bool:
    """Whether ``text`` is a number of the readers' grammar (blanks around allowed)."""
    return _NUMBER.fullmatch(text.strip(_BLANKS)) is not None


def all_numbers(texts: list[str]) -> bool:
    """Whether every string of ``texts`` is a number of the grammar, without blanks
    (one regular-expression pass over them all)."""
    return not texts or _NUMBERS.fullmatch("\x00".join(texts)) is not None


def _parse(text: str, where: str, what: str, blanks: bool = False) -> float:
    """The number ``text`` (of the grammar), or a ValueError "<where>: ..." naming
    ``what``: "cannot parse" (not a number of the grammar) or "non-finite"."""
    core = text.strip(_BLANKS) if blanks else text
    if _NUMBER.fullmatch(core) is None:
        try:
            value = float(core)
        except ValueError:
            value = None
        if value is not None and not math.isfinite(value):
            raise ValueError(f"{where}: non-finite {what}")
        raise ValueError(f"{where}: cannot parse {what} ({GRAMMAR_HINT})")
    value = float(core)
    if not math.isfinite(value):
        raise ValueError(f"{where}: non-finite {what}")
    return value


def _decode_error(reader: FileChunks, encoding: str, error: UnicodeDecodeError) -> ValueError:
    """The error for a file that is not valid text in ``encoding``: the line and byte
    offset of the first bad byte (found by decoding the file line by line)."""
    offset = 0
    try:
        with open_file(reader.path) as f:
            for lineno, raw in enumerate(f, 1):
                try:
                    raw.decode(encoding)
                except UnicodeDecodeError as bad:
                    return ValueError(
                        f"{reader.name}, line {lineno}: not valid {encoding} text (byte "
                        f"{raw[bad.start : bad.start + 1]!r} at byte offset "
                        f"{offset + bad.start:,}); pass the file's encoding"
                    )
                offset += len(raw)
    except UnicodeError:  # pragma: no cover - an encoding that cannot decode lines
        pass
    return ValueError(f"{reader.name}: not valid {encoding} text ({error.reason})")


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


_IDX_DTYPES: dict[int, np.dtype] = {
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
    X = X.tocsr() if sp.issparse(X) else np.asarray(X)  # type: ignore[union-attr]
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
