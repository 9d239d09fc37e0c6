"""What the workers of :mod:`aucstream.dask` run on a partition: reading its rows and
the tasks of the statistics strategy (its class summaries, and their merge).

Split from :mod:`aucstream.dask`; nothing here imports dask, so the tasks unpickle on
a worker without it being imported first.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.utils.validation import check_array

from ._chunks import check_magnitude, check_sparse_structure
from ._state import nbytes_of
from .covariance import make_covariance

__all__ = ["sketch_rng"]


# ================================================================ partitions and readers
@dataclass(frozen=True)
class _Spec:
    """What every partition task needs to know (small; shipped with each task).

    A partition itself is a tuple: ``("arrays", X, y)`` (blocks of dask arrays),
    ``("frame", df, y)`` (a pandas partition, and its labels unless ``label`` names
    the label column) or ``("file", path)``.
    """

    n_features: int
    chunk_size: int
    classes: tuple | None = None
    fmt: Any = None
    read_options: dict = field(default_factory=dict)
    features: tuple | None = None  # the feature columns of a dataframe
    label: Any = None  # the label column of a dataframe, when y is not separate

    def replace(self, **changes) -> _Spec:
        values = {k: getattr(self, k) for k in self.__dataclass_fields__}
        values.update(changes)
        return _Spec(**values)


def _blocks(part, spec: _Spec) -> Iterator[tuple]:
    """A partition's raw (X, y) blocks."""
    kind = part[0]
    if kind == "file":
        from .datasets import iter_file

        yield from iter_file(
            part[1],
            spec.fmt,
            chunk_size=spec.chunk_size,
            n_features=spec.n_features,
            **spec.read_options,
        )
        return
    X, y = part[1], part[2]
    if kind == "frame":
        frame = X
        if spec.features is None:
            raise ValueError("a dataframe partition needs the feature columns of its spec")
        X = frame[list(spec.features)].to_numpy(dtype=np.float64)
        y = frame[spec.label] if spec.label is not None else y
    y = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y).ravel()
    if X.shape[0] != y.shape[0]:
        raise ValueError(
            f"X and y have different numbers of rows in this partition: {X.shape[0]} and "
            f"{y.shape[0]} (give them the same row blocks)"
        )
    for i in range(0, X.shape[0], spec.chunk_size):
        yield X[i : i + spec.chunk_size], y[i : i + spec.chunk_size]


def _rows(part, spec: _Spec, start: int = 0, stop: int | None = None) -> Iterator[tuple]:
    """The partition's checked (X, y) chunks, rows ``start:stop`` only."""
    seen = 0
    for X, y in _blocks(part, spec):
        lo, hi = seen, seen + X.shape[0]
        seen = hi
        if stop is not None and lo >= stop:
            return
        if hi <= start:
            continue
        a = max(start - lo, 0)
        b = X.shape[0] if stop is None else min(stop - lo, X.shape[0])
        yield _checked(X[a:b], np.asarray(y)[a:b], spec)


def _checked(X, y, spec: _Spec):
    """Refuse what a learner would refuse, naming the problem, before anything is learnt."""
    check_sparse_structure(X, "X")
    X = check_array(
        X, accept_sparse="csr", dtype=np.float64, ensure_all_finite=True, ensure_min_samples=0
    )
    if X.shape[1] != spec.n_features:
        raise ValueError(f"X has {X.shape[1]} features, expected {spec.n_features}")
    check_magnitude(X)
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError("y contains NaN or infinity")
    if y.dtype.kind == "O" and any(v is None for v in y):
        raise ValueError("y contains missing labels (None)")
    if spec.classes is not None:
        unknown = ~np.isin(y, np.asarray(spec.classes))
        if unknown.any():
            raise ValueError(
                f"y contains labels {np.unique(y[unknown]).tolist()[:5]} not in "
                f"classes={list(spec.classes)}"
            )
    return X, y


def _n_rows(part, spec: _Spec) -> int:
    """Number of rows of a partition (a counting pass for files)."""
    if part[0] == "file":
        return sum(X.shape[0] for X, _ in _blocks(part, spec))
    return int(part[1].shape[0])


def _label_key(value):
    """A label as a plain Python value (numpy scalars hash and pickle the same way)."""
    return value.item() if isinstance(value, np.generic) else value


def _in_partition(index: int, part, task):
    """Run ``task()``; an input error names the partition (and file)."""
    try:
        return task()
    except (ValueError, TypeError) as error:
        where = f"partition {index}" + (f" ({part[1]})" if part[0] == "file" else "")
        kind = ValueError if isinstance(error, ValueError) else TypeError
        raise kind(f"{where}: {error}") from error


def _check_binary(labels) -> None:
    if len(labels) > 2:
        shown = sorted(labels, key=repr)[:10]
        raise ValueError(
            f"Only binary classification is supported: the data contain {len(labels)} "
            f"labels {shown}"
        )


# ===================================================================== statistics tasks
@dataclass
class _Partial:
    """What a partition of the statistics strategy ships: a summary per label."""

    stats: dict
    n_samples: int
    nbytes: tuple


def sketch_rng(seed: int, partition: int, label_order: int) -> np.random.Generator:
    """The generator of the randomized/hashed sketch of one partition and class.

    ``label_order`` is the position of the class among the labels in the order they
    first appear in the partition. Public so that a merged sketch can be checked
    against the sketch of the whole stream with the same draws.
    """
    return np.random.default_rng([seed, partition, label_order])


def _statistics_task(part, index: int, spec: _Spec, kind: dict, seed: int) -> _Partial:
    """The class summaries of one partition (module docstring)."""

    def run() -> _Partial:
        stats: dict = {}
        rngs: dict = {}
        n = 0
        for X, y in _rows(part, spec):
            n += X.shape[0]
            labels, first = np.unique(y, return_index=True)
            for label in labels[np.argsort(first)]:  # in order of first appearance
                key = _label_key(label)
                if key not in stats:
                    stats[key] = make_covariance(**kind)
                    rngs[key] = sketch_rng(seed, index, len(rngs))
                    _check_binary(stats)
                rows = X[y == label]
                if hasattr(type(stats[key]), "draw"):  # randomized, hashed: random draws
                    stats[key].update(rows, rng=rngs[key])
                else:
                    stats[key].update(rows)
        return _Partial(stats, n, (nbytes_of(stats),))

    return _in_partition(index, part, run)


def _combine_statistics(*parts: _Partial) -> _Partial:
    """Merge partition summaries (new summaries; the inputs are not changed)."""
    stats: dict = {}
    for part in parts:
        for key, summary in part.stats.items():
            stats[key] = summary if key not in stats else stats[key].merge(summary)
    _check_binary(stats)
    return _Partial(
        stats, sum(p.n_samples for p in parts), tuple(b for p in parts for b in p.nbytes)
    )
