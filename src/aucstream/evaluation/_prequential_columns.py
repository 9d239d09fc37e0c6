"""The columns of :func:`aucstream.evaluation.prequential`: one accumulator per metric,
fed the scored rows in arrival order and read at each checkpoint (:data:`METRICS`).

Each accumulator has ``update(positive, scores, proba, predicted)`` and ``get()`` and
declares in ``needs`` what it reads; the ranking ones (``ranks = True``) are given
the probabilities instead of the decision scores with ``rank="proba"``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._sorted_pairs import StreamRuns
from .._stream_metrics import (
    StreamingAveragePrecision,
    StreamingBrier,
    StreamingECE,
    StreamingGMean,
    StreamingKappa,
    StreamingLogLoss,
    StreamingPositiveRate,
)
from .._streaming_auc import PrequentialAUC, RollingAUC

__all__ = ["METRICS", "chosen_metrics", "curve_frame"]


class _PairMetric:
    """A ranking metric of :mod:`aucstream.metrics` over (positive, score) pairs."""

    needs = frozenset({"scores"})
    ranks = True  # ranks the probabilities instead with rank="proba"

    def __init__(self, metric):
        self.metric = metric

    def update(self, positive, scores, proba=None, predicted=None) -> None:
        self.metric.update(positive, scores)

    def get(self) -> float:
        return float(self.metric.get())


class _CumulativeAUC:
    """``auc``: :class:`~aucstream.metrics.PrequentialAUC`'s value (the same integer
    pair count, the same float) in two compiled calls per update
    (:class:`aucstream._sorted_pairs.StreamRuns`)."""

    needs = frozenset({"scores"})
    ranks = True

    def __init__(self) -> None:
        self.runs = StreamRuns()

    def update(self, positive, scores, proba=None, predicted=None) -> None:
        self.runs.add(
            np.ascontiguousarray(positive, dtype=bool), np.ascontiguousarray(scores, np.float64)
        )

    def get(self) -> float:
        return self.runs.auc()


class _Alarms:
    """Alarms of a drift detector fed ``update(score, label)`` per example."""

    needs = frozenset({"scores"})

    def __init__(self, detector):
        self.detector = detector
        self.count = 0

    def update(self, positive, scores, proba=None, predicted=None) -> None:
        detector = self.detector
        many = getattr(detector, "update_many", None)
        if callable(many) and isinstance(detector, _AUC_DETECTORS()):
            self.count += int(np.asarray(many(scores, positive)).size)  # one compiled loop
            return
        for score, label in zip(scores.tolist(), positive.tolist()):
            detector.update(score, label)
            if detector.drift_detected:
                self.count += 1

    def get(self) -> int:
        return self.count


def _AUC_DETECTORS() -> tuple[type, ...]:
    """Detectors whose ``update_many(scores, labels)`` returns the positions of the
    alarms, exactly as ``update`` example by example would raise them."""
    from ..drift import AUCDriftDetector

    return (AUCDriftDetector,)


@dataclass(frozen=True)
class _Column:
    """One metric column: how to make its accumulator from the options, whether it is
    computed by default, and the option it needs (its value must not be None)."""

    make: Callable[[dict], Any]
    default: bool = False
    requires: str | tuple[str, ...] | None = None

    def missing(self, options: dict) -> list[str]:
        """The options this column needs that are None."""
        needs = () if self.requires is None else self.requires
        needs = (needs,) if isinstance(needs, str) else needs
        return [name for name in needs if options[name] is None]


#: The metric columns by name. Adding a column is one entry here.
METRICS: dict[str, _Column] = {
    "auc": _Column(lambda o: _CumulativeAUC(), default=True),
    "window_auc": _Column(
        lambda o: _PairMetric(RollingAUC(o["window"], pos_label=True)),
        default=True,
        requires="window",
    ),
    "partial_auc": _Column(
        lambda o: _PairMetric(PrequentialAUC(pos_label=True, max_fpr=o["max_fpr"])),
        default=True,
        requires="max_fpr",
    ),
    "window_partial_auc": _Column(
        lambda o: _PairMetric(RollingAUC(o["window"], pos_label=True, max_fpr=o["max_fpr"])),
        default=True,
        requires=("window", "max_fpr"),
    ),
    "average_precision": _Column(lambda o: StreamingAveragePrecision()),
    "log_loss": _Column(lambda o: StreamingLogLoss(), default=True),
    "brier": _Column(lambda o: StreamingBrier(), default=True),
    "ece": _Column(lambda o: StreamingECE()),
    "g_mean": _Column(lambda o: StreamingGMean()),
    "kappa": _Column(lambda o: StreamingKappa()),
    "positive_rate": _Column(lambda o: StreamingPositiveRate(), default=True),
    "alarms": _Column(lambda o: _Alarms(o["detector"]), default=True, requires="detector"),
}


def prequential_metrics() -> dict[str, tuple[str, ...]]:
    """The columns :func:`~aucstream.evaluation.prequential` can compute, each with the
    options it needs (``window``, ``max_fpr``, ``detector``: not None).

    Examples
    --------
    >>> from aucstream.evaluation import prequential_metrics
    >>> prequential_metrics()["window_partial_auc"]
    ('window', 'max_fpr')
    """
    return {
        name: tuple(column.missing(dict.fromkeys(_OPTIONS))) for name, column in METRICS.items()
    }


#: The options of :func:`~aucstream.evaluation.prequential` a column may need.
_OPTIONS = ("window", "max_fpr", "detector")


def chosen_metrics(metrics, options: dict) -> list[str]:
    """The names of the columns ``metrics`` asks for (refused by name when unknown, or
    when an option they need is None); the default ones when it is None."""
    if metrics is None:
        return list(_default_names(tuple((k, v is None) for k, v in options.items())))
    if isinstance(metrics, str):
        metrics = [m.strip() for m in metrics.split(",") if m.strip()]
    names = list(metrics)
    if not names:
        raise ValueError(f"metrics is empty; choose from: {', '.join(METRICS)}")
    for name in names:
        if not isinstance(name, str) or name not in METRICS:
            raise ValueError(f"unknown metric {name!r}; choose from: {', '.join(METRICS)}")
        missing = METRICS[name].missing(options)
        if missing:
            raise ValueError(f"the metric {name!r} needs {'= and '.join(missing)}=")
    if len(set(names)) != len(names):
        raise ValueError(f"metrics names a column twice: {names}")
    return names


@functools.lru_cache(maxsize=16)
def _default_names(unset: tuple[tuple[str, bool], ...]) -> tuple[str, ...]:
    """The default columns given which options are None (``(name, is None)`` pairs):
    one walk of :data:`METRICS` per such set, not per run."""
    options = {name: None if is_none else True for name, is_none in unset}
    return tuple(
        name for name, column in METRICS.items() if column.default and not column.missing(options)
    )


def curve_frame(rows: list[dict]) -> pd.DataFrame:
    """The curve of :func:`~aucstream.evaluation.prequential` from its checkpoint
    rows: the columns of one dtype (``n_seen``, ``n_learnt`` and ``model_bytes``
    int64, the others as numpy reads their values) as one 2-D block, and the frame
    made of the blocks with pandas' ``create_dataframe_from_blocks`` (pandas >= 3; a
    third of the cost of a frame of column arrays, which sorts them into the same
    blocks), else a frame of column arrays keyed by position and then named. The
    column index is built once per set of names (a frame of named arrays builds its
    index of strings anew: most of its cost); each curve has its own view of it (a
    name set on one curve's index stays there)."""
    names = tuple(rows[0])
    values = [[row[name] for row in rows] for name in names]
    columns = _column_index(names).view()  # (its own object: a name set on it stays there)
    if _from_blocks is None:  # pragma: no cover - pandas < 3
        frame = pd.DataFrame(  # (the arrays are new)
            {
                i: np.array(v, dtype=_dtype(name, v))
                for i, (name, v) in enumerate(zip(names, values))
            },
            copy=False,
        )
        frame.columns = columns
        return frame
    by_dtype: dict[np.dtype, list[int]] = {}
    for i, name in enumerate(names):
        by_dtype.setdefault(_dtype(name, values[i]), []).append(i)
    blocks = [
        (np.array([values[i] for i in at], dtype=dtype), np.array(at, dtype=np.intp))
        for dtype, at in by_dtype.items()
    ]
    return _from_blocks(blocks, index=pd.RangeIndex(len(rows)), columns=columns)


def _dtype(name: str, values: list) -> np.dtype:
    """A column's dtype: int64 for the counts, else numpy's for its values."""
    if name in _INTEGERS:
        return _INT64
    if all(type(v) is float for v in values):
        return _FLOAT64
    return np.array(values).dtype


_INT64, _FLOAT64 = np.dtype(np.int64), np.dtype(np.float64)
#: The columns of a curve held as int64 (the others as numpy reads their values).
_INTEGERS = frozenset({"n_seen", "n_learnt", "model_bytes"})

try:
    from pandas.api.internals import create_dataframe_from_blocks as _from_blocks
except ImportError:  # pragma: no cover - pandas < 3
    _from_blocks = None


@functools.lru_cache(maxsize=64)
def _column_index(names: tuple[str, ...]) -> pd.Index:
    """The columns of a curve (an immutable index, shared by the curves with these names)."""
    return pd.DataFrame({name: [] for name in names}).columns
