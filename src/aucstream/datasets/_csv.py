"""Streaming reader of CSV/TSV files: pandas' C parser in chunks, the csv module to decide.

A chunk that pandas does not read plainly goes to the :mod:`csv` module from there on,
which either reads it or names the file and line of the problem.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any, Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import DTypeLike

from ._readers import (
    _BLANKS,
    FileChunks,
    PathLike,
    _check_chunk_size,
    _decode_error,
    _FileDamaged,
    _parse,
    all_numbers,
)
from ._readers import is_number as _is_number

__all__ = ["iter_csv", "load_csv"]


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
    hash_features: int | None = None,
) -> FileChunks:
    """Stream a delimited text file (CSV, TSV, space separated) as ``(X, y)`` chunks.

    One column holds the label, every other column is a numeric feature. Blank lines
    are skipped; CRLF line ends and compressed files (see :func:`open_file`) are
    accepted.

    A feature (and a numeric label) is a number of one strict grammar, the same as
    in LIBSVM files (see :func:`iter_svmlight`), with ASCII blanks allowed around it:
    ``[+-]`` digits, an optional ``.`` and digits, an optional exponent — ASCII
    digits only, so no full-width digits (``１``), no ``_`` (``1_0``), no thousands
    separator (``1,000`` in a quoted field; unquoted it is two fields), no decimal
    comma, no ``inf``/``nan``. It is converted as Python's ``float`` (correctly
    rounded, independent of the locale). Anything else is refused with a
    :class:`ValueError` naming the file, the line and the column.

    A column of strings or categories (``Paris``, ``mobile``) is refused unless
    ``hash_features`` is given: then every row is hashed into ``hash_features``
    columns with scikit-learn's ``FeatureHasher`` conventions (see
    :class:`aucstream.preprocessing.FeatureHashing`), X is a CSR matrix, and each
    field is a feature of its column's name (the header's, else the column's
    position in the file, ``"0"``, ``"1"``, ...): a number of the grammar is kept as
    a value of the feature ``"name"``, any other text is the category
    ``"name=text"`` with value 1 (blanks around it stripped), an empty field is
    absent.

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
    hash_features : int (a power of two) or None, default=None
        Hash every row into this many columns (e.g. ``2**20``; see above); None: every
        feature must be a number.

    Returns
    -------
    FileChunks
        An iterator of ``(X, y)`` chunks that also tells how far it has read
        (``bytes_read`` of ``total_bytes``, for a progress bar).

    Yields
    ------
    X : ndarray of shape (n_chunk, n_columns - 1), or CSR of shape (n_chunk, hash_features)
        Features of at most ``chunk_size`` rows.
    y : ndarray of shape (n_chunk,)
        Labels, float64 or strings (see ``label_type``).

    Raises
    ------
    ValueError
        For a row with the wrong number of fields, a feature that is not a finite
        number of the grammar, or a bad label; the message names the file, the
        1-based line and the column. Also for text that is not valid in
        ``encoding`` (naming the line and byte offset of the first bad byte) and for
        a truncated or corrupt compressed file.

    Notes
    -----
    The first record (header or not) is read with the :mod:`csv` module; the rest
    is parsed in chunks by pandas' C parser (when pandas is installed), whose
    numbers are correctly rounded, as Python's ``float``. Whatever pandas does not
    parse as plainly valid — a parse error, a value that is not a finite number, a
    missing field, a label that is not a finite number — makes the reader go back
    to the start of that chunk with the :mod:`csv` module (the file is read again
    from its start), which either reads the chunk or names the bad line. So both
    ways give the same chunks and the same errors. pandas is called with explicit
    options (float64 columns, ``thousands=None``, ``decimal="."``, no missing-value
    strings); its C parser accepts no number outside the grammar.

    Examples
    --------
    >>> import os, tempfile
    >>> from aucstream.datasets import iter_csv
    >>> path = os.path.join(tempfile.mkdtemp(), "tiny.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("x1,x2,label\\n0.5, 1e-3,1\\n-2,.25,0\\n")
    >>> X, y = next(iter_csv(path))
    >>> X, y
    (array([[ 5.0e-01,  1.0e-03],
           [-2.0e+00,  2.5e-01]]), array([1., 0.]))
    >>> with open(path, "w", encoding="utf-8") as f:
    ...     _ = f.write("x1,x2,label\\n0.5,\\uff11,1\\n")
    >>> next(iter_csv(path))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ...tiny.csv, line 2: cannot parse feature '１' in column 1 (...)
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
    if hash_features is not None:
        from ..preprocessing._hashing import check_hash_width

        hash_features = check_hash_width(hash_features)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {os.fspath(path)!r}")
    reader = FileChunks(path, None)
    options = _CsvOptions(
        label_column, chunk_size, delim, header, np.dtype(dtype), encoding, hash_features
    )
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
    hash_features: int | None = None


@contextmanager
def _open_csv_text(reader: FileChunks, encoding: str) -> Iterator[io.TextIOWrapper]:
    """The file as text; a byte that is not ``encoding`` is an error naming its line."""
    with reader._open_binary() as f:
        text = io.TextIOWrapper(f, encoding=encoding, newline="")
        try:
            yield text
        except UnicodeDecodeError as error:
            raise _decode_error(reader, encoding, error) from None
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
    if options.hash_features is not None:
        reader.n_features = options.hash_features
        for X, y in _csv_reference(reader, options, head, label_type):
            reader.rows += y.shape[0]
            yield X, y
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
    dtype: Any
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
                thousands=None,
                decimal=".",
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
        except _FileDamaged:
            raise
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
            if options.hash_features is not None:
                names = [s.strip() for s in fields0] if header else None
                return _csv_hashed(name, chunk, linenos, li, names, options, state)
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


def _numbers(fields: list[list[str]], n_rows: int, n_cols: int) -> np.ndarray | None:
    """The numbers of ``fields`` (rows of strings) as float64, or None if some field is
    not a finite number of the grammar (blanks around a number allowed)."""
    flat = list(itertools.chain.from_iterable(fields))
    if not all_numbers(flat):
        flat = [s.strip(_BLANKS) for s in flat]
        if not all_numbers(flat):
            return None
    values = np.array(flat, dtype=np.float64).reshape(n_rows, n_cols)
    return values if np.isfinite(values).all() else None


#: How the error for a string feature says to hash it.
_HASH_HINT = (
    "a column of strings or categories is hashed with iter_csv(..., hash_features=2**20), "
    "the command line's --hash-features 2^20"
)


def _csv_hashed(name, rows, linenos, li, names, options, state):
    """A chunk of records hashed (see :func:`iter_csv`): CSR features, labels."""
    from ..preprocessing._hashing import hash_rows

    if names is None:
        names = [str(k) for k in range(len(rows[0]))]
    dicts = []
    for fields in rows:
        row: dict = {}
        for k, text in enumerate(fields):
            if k == li:
                continue
            core = text.strip(_BLANKS)
            if not core:
                continue
            if _is_number(core):
                value = float(core)
                if math.isfinite(value):
                    row[names[k]] = value
                    continue
            row[names[k]] = core
        dicts.append(row)
    X = hash_rows(dicts, options.hash_features)
    y = _csv_labels(name, [r[li] for r in rows], linenos, state)
    return X.astype(options.dtype, copy=False), y


def _csv_convert(name, rows, linenos, li, n_fields, dtype, state):
    if li == 0:
        feats = [r[1:] for r in rows]
    elif li == n_fields - 1:
        feats = [r[:-1] for r in rows]
    else:
        feats = [r[:li] + r[li + 1 :] for r in rows]
    raw_labels = [r[li] for r in rows]
    X = _numbers(feats, len(rows), n_fields - 1)
    if X is None:  # locate the offending field
        X = np.empty((len(rows), n_fields - 1), dtype=np.float64)
        for r, (fields, lineno) in enumerate(zip(feats, linenos, strict=True)):
            for k, s in enumerate(fields):
                c = k if k < li else k + 1
                try:
                    X[r, k] = _parse(
                        s, f"{name}, line {lineno}", f"feature {s!r} in column {c}", blanks=True
                    )
                except ValueError as error:
                    if "cannot parse" not in str(error):
                        raise
                    raise ValueError(f"{str(error)[:-1]}; {_HASH_HINT})") from None
    return X.astype(dtype, copy=False), _csv_labels(name, raw_labels, linenos, state)


def _csv_labels(name, raw_labels, linenos, state) -> np.ndarray:
    """The labels of a chunk: numbers or strings (decided by the first data row)."""
    if state["numeric"] is None:  # decided by the first data row
        state["numeric"] = _is_number(raw_labels[0])
    if state["numeric"]:
        y = _numbers([raw_labels], 1, len(raw_labels))
        if y is None:
            for s, lineno in zip(raw_labels, linenos, strict=True):
                if not _is_number(s) or not np.isfinite(float(s)):
                    raise ValueError(
                        f"{name}, line {lineno}: label {s!r} is not a finite number "
                        "(labels are read as numbers; pass label_type='str' to keep "
                        "them as strings)"
                    )
        assert y is not None  # the loop above raised on the first bad label
        return y.ravel()
    return np.array([s.strip() for s in raw_labels], dtype=str)


def load_csv(
    path: PathLike,
    label_column: int | str = -1,
    delimiter: str | None = ",",
    header: bool | Literal["infer"] = "infer",
    dtype: DTypeLike = np.float64,
    encoding: str = "utf-8",
    chunk_size: int = 100000,
    label_type: Literal["infer", "numeric", "str"] = "infer",
    hash_features: int | None = None,
) -> tuple[Any, np.ndarray]:
    """Read a whole delimited text file (the chunks of :func:`iter_csv`, stacked).

    Parameters
    ----------
    path, label_column, delimiter, header, dtype, encoding, chunk_size, label_type, hash_features
        As in :func:`iter_csv`.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), or CSR with ``hash_features``
    y : ndarray of shape (n_samples,)
        float64 labels, or strings when the labels are not numbers.
    """
    Xs, ys = [], []
    chunks = iter_csv(
        path,
        label_column,
        chunk_size,
        delimiter,
        header,
        dtype,
        encoding,
        label_type,
        hash_features,
    )
    for X, y in chunks:
        Xs.append(X)
        ys.append(y)
    if not Xs:
        if hash_features is not None:
            width = chunks.n_features or 0
            return sp.csr_matrix((0, width), dtype=dtype), np.zeros(0, dtype=np.float64)
        return np.zeros((0, 0), dtype=dtype), np.zeros(0, dtype=np.float64)
    if hash_features is not None:
        return sp.vstack(Xs, format="csr"), np.concatenate(ys)
    return np.concatenate(Xs, axis=0), np.concatenate(ys)


# --------------------------------------------------------------------------- idx
