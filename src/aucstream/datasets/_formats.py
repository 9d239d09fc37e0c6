"""File formats: the one place that decides how a data file is read.

:func:`detect_format` looks at a file's name and, when the name does not tell, at its
first line; :func:`iter_file` and :func:`load_file` read it accordingly. The command
line (``aucstream fit``/``score``), the evaluation harness (``compare --datasets
FILE``) and the dataset registry all read files through these functions, so a file is
read the same way everywhere.

Rules, applied to the name after stripping a ``.gz``, ``.bz2``, ``.xz`` or ``.lzma``
suffix:

- ``.csv``: comma-separated values; ``.tsv`` and ``.tab``: tab-separated values;
- ``.svm``, ``.libsvm``, ``.svmlight``: LIBSVM/SVMlight (``label index:value ...``);
- anything else (``.txt``, ``.data``, ``.t``, no extension, ...): the first non-blank,
  non-comment line decides. It is LIBSVM when it is a number (ASCII digits, see
  :func:`~aucstream.datasets.iter_svmlight`) followed only by
  ``index:value`` (and ``qid:``) tokens, otherwise CSV, with the delimiter found in
  that line: a tab, else a comma, else a semicolon, else runs of whitespace.

The compression comes from the file's first bytes (see
:func:`~aucstream.datasets.detect_compression`), so a misnamed compressed file is
still read.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ._csv import iter_csv, load_csv
from ._readers import FileChunks, PathLike, detect_compression, is_number, open_file
from ._svmlight import iter_svmlight, load_svmlight

__all__ = ["FileFormat", "detect_format", "iter_file", "load_file"]

_COMPRESSED = (".gz", ".bz2", ".xz", ".lzma")
_BY_EXTENSION: dict[str, tuple[str, str | None]] = {
    ".csv": ("csv", ","),
    ".tsv": ("csv", "\t"),
    ".tab": ("csv", "\t"),
    ".svm": ("libsvm", None),
    ".libsvm": ("libsvm", None),
    ".svmlight": ("libsvm", None),
}
_LIBSVM_TOKEN = re.compile(r"(qid:\S+|[0-9]+:\S+)\Z")
_DELIMITERS = ("\t", ",", ";")
_KINDS = ("libsvm", "csv")


@dataclass(frozen=True)
class FileFormat:
    """How a data file is read.

    Attributes
    ----------
    kind : {"libsvm", "csv"}
        LIBSVM/SVMlight, or delimited text with one label column.
    compression : {"gzip", "bz2", "xz"} or None
        As found in the file's first bytes (None: plain, or the file does not exist).
    delimiter : str or None
        The CSV field separator; None means runs of whitespace (and is the value for
        LIBSVM files).
    """

    kind: Literal["libsvm", "csv"]
    compression: str | None = None
    delimiter: str | None = None


def _stem_suffix(path: PathLike) -> str:
    name = os.path.basename(os.fspath(path)).lower()
    for suffix in _COMPRESSED:
        name = name.removesuffix(suffix)
    return os.path.splitext(name)[1]


def _first_line(path: PathLike) -> str:
    with open_file(path) as f:
        for raw in f:
            line = raw.decode("latin-1").split("#", 1)[0].strip()
            if line:
                return line
    return ""


def _is_libsvm_line(line: str) -> bool:
    tokens = line.split()
    if not tokens:
        return False
    return is_number(tokens[0]) and all(_LIBSVM_TOKEN.match(t) for t in tokens[1:])


def _sniff_delimiter(line: str) -> str | None:
    return next((d for d in _DELIMITERS if d in line), None)


def detect_format(
    path: PathLike, kind: str | None = None, delimiter: str | None = None
) -> FileFormat:
    """Decide how to read ``path`` (see the module docstring for the rules).

    Parameters
    ----------
    path : str or path-like
        The file (plain or compressed).
    kind : {"libsvm", "csv"} or None, default=None
        Force the kind instead of deciding it ("svmlight" is accepted for "libsvm").
    delimiter : str or None, default=None
        Force the CSV delimiter (``"tab"`` is accepted for a tab); None decides it
        from the extension or the first line.

    Returns
    -------
    FileFormat

    Examples
    --------
    >>> detect_format("train.tsv.gz").delimiter
    '\\t'
    >>> detect_format("a9a.libsvm").kind
    'libsvm'
    """
    kind = "libsvm" if kind == "svmlight" else kind
    if kind is not None and kind not in _KINDS:
        raise ValueError(f"format must be 'libsvm' or 'csv', got {kind!r}")
    delimiter = "\t" if delimiter == "tab" else delimiter
    exists = os.path.isfile(os.fspath(path))
    compression = detect_compression(path) if exists else None
    found_kind, found_delimiter = _BY_EXTENSION.get(_stem_suffix(path), (None, None))
    line = ""  # read below whenever the kind or the delimiter depends on it
    if (kind or found_kind) is None or (
        (kind or found_kind) == "csv" and delimiter is None and found_delimiter is None
    ):
        line = _first_line(path) if exists else ""
    kind = kind or found_kind or ("libsvm" if _is_libsvm_line(line) else "csv")
    if kind == "libsvm":
        return FileFormat("libsvm", compression, None)
    if delimiter is None:
        delimiter = found_delimiter if found_delimiter is not None else _sniff_delimiter(line)
    return FileFormat("csv", compression, delimiter)


def iter_file(
    path: PathLike,
    fmt: FileFormat | None = None,
    *,
    chunk_size: int = 10000,
    n_features: int | None = None,
    label_column: int | str = -1,
    **options: Any,
) -> FileChunks:
    """Stream a data file as ``(X, y)`` chunks, in the format :func:`detect_format` finds.

    Parameters
    ----------
    path : str or path-like
        The file.
    fmt : FileFormat or None
        How to read it (default: ``detect_format(path)``).
    chunk_size : int, default=10000
        Rows per chunk.
    n_features : int or None
        Width of a LIBSVM file (default: inferred by a first pass).
    label_column : int or str, default=-1
        The label column of a CSV file.
    **options
        Passed on to :func:`~aucstream.datasets.iter_svmlight` or
        :func:`~aucstream.datasets.iter_csv` (e.g. ``zero_based``, ``header``).

    Returns
    -------
    FileChunks
        The iterator of ``(X, y)`` chunks — X a CSR matrix (LIBSVM) or an ndarray
        (CSV), y the labels as written in the file — with the progress of the
        reading (``bytes_read`` of ``total_bytes``).
    """
    fmt = fmt or detect_format(path)
    if fmt.kind == "libsvm":
        return iter_svmlight(path, chunk_size=chunk_size, n_features=n_features, **options)
    return iter_csv(
        path,
        label_column=label_column,
        chunk_size=chunk_size,
        delimiter=fmt.delimiter,
        **options,
    )


def load_file(
    path: PathLike, fmt: FileFormat | None = None, **options: Any
) -> tuple[Any, np.ndarray]:
    """Read a whole data file (the chunks of :func:`iter_file`, stacked).

    ``path``, ``fmt`` and the keyword ``options`` are those of :func:`iter_file`.

    Returns
    -------
    X : CSR matrix (LIBSVM) or ndarray (CSV)
    y : ndarray
    """
    fmt = fmt or detect_format(path)
    if fmt.kind == "libsvm":
        return load_svmlight(path, **options)
    return load_csv(path, delimiter=fmt.delimiter, **options)
