"""Datasets of a comparison: a registry name or a LIBSVM/CSV file, and a binary rule.

Reading files and the binary-label rules are :mod:`aucstream.datasets`' (one place for
the command line, the registry and this harness); this module only names the data of
a comparison (:class:`DataSpec`, hashed into the cache keys) and loads it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._json import to_jsonable
from .._typing import PathLike
from ._values import parse_value, split_top_level

__all__ = ["DataSpec", "LoadedData", "load_data", "parse_data_spec"]


@dataclass(frozen=True)
class DataSpec:
    """Which data, with which binary labels.

    Parameters
    ----------
    name : str
        A registered dataset (``aucstream.datasets.list_datasets()``) or the path of a
        LIBSVM/SVMlight or CSV file (plain, .gz, .bz2, .xz).
    binary : str or tuple, default="default"
        ``"default"`` (the registry's convention; for a file with two labels the
        larger one is positive), ``"random_halves"``, ``"largest_vs_rest"``,
        ``"smallest_vs_rest"``, ``("one_vs_rest", c)`` or ``("positive", (c1, c2, ...))``.
    part : {"all", "train"}, default="all"
        For registered sets with a predefined test file: use train + test, or the
        training file only (e.g. G16 uses a9a's 32,561 training examples).
    label : str or None
        Name shown in reports (default: ``name``, or the file's stem).
    paper_n : int or None
        Number of examples the paper reports (a difference is flagged in reports).
    note : str
        Known differences from the paper's data, shown in reports.
    """

    name: str
    binary: Any = "default"
    part: str = "all"
    label: str | None = None
    paper_n: int | None = None
    note: str = ""

    @property
    def title(self) -> str:
        """Name shown in reports."""
        if self.label:
            return self.label
        return Path(self.name).name if self.is_file else self.name

    @property
    def is_file(self) -> bool:
        """Whether ``name`` is a path rather than a registry name."""
        return os.sep in self.name or Path(self.name).suffix != "" and Path(self.name).exists()

    def key(self) -> dict:
        """What identifies the loaded data (for cache keys)."""
        key = {"name": self.name, "binary": to_jsonable(self.binary), "part": self.part}
        if self.is_file:
            key["sha256"] = _file_digest(self.name)
        return key


_DIGESTS: dict[tuple, str] = {}


def _file_digest(path: str) -> str:
    stat = os.stat(path)
    key = (os.path.abspath(path), stat.st_size, stat.st_mtime_ns)
    if key not in _DIGESTS:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            while block := f.read(1 << 20):
                h.update(block)
        _DIGESTS[key] = h.hexdigest()
    return _DIGESTS[key]


def parse_data_spec(text: str) -> DataSpec:
    """A :class:`DataSpec` from ``NAME[:RULE][:train]``.

    ``RULE`` is ``random_halves``, ``largest_vs_rest``, ``smallest_vs_rest``,
    ``one_vs_rest=C`` or ``positive=C1,C2``. Examples: ``german``,
    ``letter:one_vs_rest=8:train``, ``data/x.csv:positive=g``. The classes are read
    by :func:`~aucstream.evaluation.parse_value` (``8`` is a number, ``g`` a string).

    Parameters
    ----------
    text : str

    Returns
    -------
    DataSpec
    """
    name, *options = text.split(":")
    binary: Any = "default"
    part = "all"
    for option in options:
        key, _, value = option.partition("=")
        if key == "train" and not value:
            part = "train"
        elif key in ("random_halves", "largest_vs_rest", "smallest_vs_rest") and not value:
            binary = key
        elif key == "one_vs_rest" and value:
            binary = ("one_vs_rest", parse_value(value))
        elif key == "positive" and value:
            binary = ("positive", tuple(parse_value(v) for v in split_top_level(value)))
        else:
            raise ValueError(
                f"bad dataset option {option!r} in {text!r}; use NAME[:RULE][:train] "
                "with RULE one of random_halves, largest_vs_rest, "
                "smallest_vs_rest, one_vs_rest=C, positive=C1,C2"
            )
    return DataSpec(name, binary, part)


@dataclass
class LoadedData:
    """A dataset in memory with labels in {-1, +1}.

    Attributes
    ----------
    X : ndarray or CSR matrix
    y : ndarray of int64 in {-1, +1}
    rule : str
        The binary rule that was applied, in words.
    """

    X: Any
    y: np.ndarray
    rule: str

    @property
    def n_samples(self) -> int:
        return int(self.y.size)

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def n_positive(self) -> int:
        return int((self.y == 1).sum())


def load_data(spec: DataSpec, data_home: PathLike | None = None) -> LoadedData:
    """Load the data of ``spec`` with labels in {-1, +1}.

    A file is read as :func:`aucstream.datasets.detect_format` decides and its labels
    are made binary by :func:`aucstream.datasets.binarize` (``"default"``: a file
    with two labels has the larger one positive; more labels need a rule); a
    registered set goes through :func:`aucstream.datasets.load_dataset`.

    Parameters
    ----------
    spec : DataSpec
    data_home : str, path-like or None
        Folder of the registered datasets (default: ``$AUCSTREAM_DATA``).

    Returns
    -------
    LoadedData
    """
    from ..datasets import binarize, load_dataset, load_file

    if spec.is_file:
        X, y = load_file(spec.name)
        y, rule = binarize(np.asarray(y), spec.binary, multiclass=None, where="the file")
        return LoadedData(X, y, rule)
    data = load_dataset(
        spec.name,
        data_home=data_home,
        binary=None if spec.binary == "default" else spec.binary,
        return_parts=spec.part == "train",
    )
    return LoadedData(data.X, np.asarray(data.y, dtype=np.int64), data.binary_rule)


def data_available(spec: DataSpec, data_home: PathLike | None = None) -> str | None:
    """None when the files of ``spec`` are present, else the reason they are not."""
    if spec.is_file:
        return None if Path(spec.name).exists() else f"file {spec.name} not found"
    from ..datasets import dataset_info, get_data_home

    try:
        info = dataset_info(spec.name)
    except ValueError as error:
        return str(error)
    if info.embedded:
        return None
    try:
        home = get_data_home(data_home)
    except FileNotFoundError as error:
        return str(error).split(":")[0]
    missing = [f.filename for f in info.files if not (home / f.filename).is_file()]
    return f"missing {', '.join(missing)} in {home}" if missing else None
