"""Helpers of :func:`aucstream.evaluation.prequential`: its parameters' check
(:func:`check_params`), the rows of a chunk (its
width, slices, stacks and plain rows), the scored rows held until the metrics count
them (:class:`ScoreBlock`), the memory reading at each
checkpoint (:class:`MemoryReading`), the progress line (:class:`ProgressLine`), the
classes of a run (:func:`is_fitted`, :func:`classes_for`, :func:`pair_from`), and what a model's
methods allow (:func:`_replays_calibration`, :func:`_scores_as_base`,
:func:`_one_example`, :func:`_calibration_owner`)."""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from .._base import BaseStreamingAUC
from .._chunks import csr_row_dict
from .._config import format_bytes, get_config
from .._kernels import jit
from .._state import is_state_name, nbytes_of

__all__ = [
    "MemoryReading",
    "ProgressLine",
    "ScoreBlock",
    "check_params",
    "classes_for",
    "distinct",
    "is_fitted",
    "is_int",
    "pair_from",
    "plain_row",
    "row_of",
    "slice_rows",
    "stack_rows",
    "take_rows",
    "width_of",
]


#: Bytes a window of :class:`~aucstream.metrics.RollingAUC` holds per example (its
#: ring of scores and labels and the two sorted copies).
_WINDOW_BYTES = 25


def is_int(value) -> bool:
    """Whether ``value`` is an integer (numpy's too), not a bool."""
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(
        value, (bool, np.bool_)
    )


def check_params(model, delay, window, every, label_probability) -> None:
    """Refuse :func:`~aucstream.evaluation.prequential`'s bad parameters before
    anything is read."""
    for method in ("partial_fit", "decision_function"):
        if not callable(getattr(model, method, None)):
            raise TypeError(
                f"model must have partial_fit and decision_function; "
                f"{type(model).__name__} has no {method}"
            )
    if not callable(delay):
        if not is_int(delay):
            raise TypeError(f"delay must be an int >= 0 or a callable, got {delay!r}")
        if delay < 0:
            raise ValueError(f"delay must be >= 0, got {delay}")
    if window is not None:
        if not is_int(window):
            raise TypeError(f"window must be a positive int or None, got {window!r}")
        if window <= 0:
            raise ValueError(f"window must be a positive int, got {window}")
        budget = get_config()["memory_budget"]
        if _WINDOW_BYTES * window > budget:
            raise ValueError(
                f"window={window} needs {format_bytes(_WINDOW_BYTES * window)}, above the "
                f"memory budget of {format_bytes(budget)} (aucstream.set_config(memory_budget=))"
            )
    if every is not None:
        if not is_int(every):
            raise TypeError(f"every must be a positive int or None, got {every!r}")
        if every <= 0:
            raise ValueError(f"every must be a positive int, got {every}")
    if label_probability is not None:
        if isinstance(label_probability, (bool, np.bool_)) or not isinstance(
            label_probability, (numbers.Real, np.floating)
        ):
            raise TypeError(f"label_probability must be a number, got {label_probability!r}")
        if not 0.0 < float(label_probability) <= 1.0:
            raise ValueError(f"label_probability must be in (0, 1], got {label_probability}")


def note_non_finite(error: BaseException, X: Any, base: int) -> None:
    """Name the example behind a refusal of the chunk ``X`` (whose first example is
    example ``base`` of the stream): when the learner refused it with a ``ValueError``
    and it holds NaN or infinity, a note on ``error`` gives the first such example's
    place in the stream and in its chunk (the learner's message names neither). Looked
    for only after a failure: the pass does not read the chunks' values again."""
    if not isinstance(error, ValueError) or X is None:
        return
    try:
        if sp.issparse(X):
            csr = sp.csr_matrix(X)
            bad = np.flatnonzero(~np.isfinite(csr.data))
            rows = np.searchsorted(csr.indptr, bad, side="right") - 1
        else:
            values = X.to_numpy() if isinstance(X, pd.DataFrame) else np.asarray(X)
            rows = np.flatnonzero(~np.isfinite(values.astype(np.float64)).all(axis=1))
    except (TypeError, ValueError):  # (values that are not numbers: nothing to name)
        return
    if rows.size:
        r = int(rows.min())
        # (what BaseException.add_note appends to, from Python 3.11 on; 3.10 lacks it)
        notes = error.__dict__.setdefault("__notes__", [])
        notes.append(
            f"prequential: example {base + r} of the stream (row {r} of its chunk) "
            "holds NaN or infinity"
        )


class ScoreBlock:
    """The decision scores, probabilities and labels of consecutive scored rows, held
    until the metrics count them: delay 0 through a learner that keeps its own
    calibration (``_Evaluation.owned_chunk``).

    One ``(2, capacity)`` array: each chunk's rows are written (by the learner's kernel,
    or by the calibration's replay, each given the two rows of the view:
    :func:`aucstream._calibration.written_for`) into the next columns (:meth:`columns`), and its
    labels, as given, into one array of their dtype (:meth:`hold`). Nothing is made per
    chunk and nothing joined when the metrics count the held rows (:meth:`take`): those
    held lie one after another. The metrics' updates copy what they keep, so counted
    columns are written again once the block starts over (:meth:`restart`).

    Held are the rows ``start`` to ``end``; row ``r`` of the block is example ``base +
    r`` of the stream.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.scores = np.empty((2, 0))
        self.labels = np.empty(0)
        self.start = self.end = self.base = 0

    def fits(self, n: int) -> bool:
        """Whether ``n`` more rows fit after the held ones."""
        return self.end + n <= self.scores.shape[1]

    def restart(self, base: int, n: int) -> None:
        """Start over at row 0, nothing held, before a chunk of ``n`` rows that is
        example ``base`` on (an array at least that long: a chunk is not split)."""
        assert self.start == self.end, "held rows not counted"
        if self.scores.shape[1] < n or not self.scores.shape[1]:
            self.scores = np.empty((2, max(self.capacity, n)))
        self.start = self.end = 0
        self.base = base

    def columns(self, n: int) -> np.ndarray:
        """The ``(2, n)`` columns of the next ``n`` rows (a view): decision scores in
        row 0, probabilities in row 1."""
        return self.scores[:, self.end : self.end + n]

    def labels_fit(self, y: np.ndarray) -> bool:
        """Whether the labels ``y`` can be held with those held (the same dtype)."""
        return self.labels.dtype == y.dtype and self.labels.shape[0] == self.scores.shape[1]

    def hold(self, y: np.ndarray) -> None:
        """Hold the next ``len(y)`` rows, written into :meth:`columns`, with their
        labels ``y`` (copied). Labels of another dtype than those held need the held
        rows counted first (:meth:`labels_fit`)."""
        n, end = y.shape[0], self.end
        if not self.labels_fit(y):
            assert self.start == end, "held labels of another dtype"
            self.labels = np.empty(self.scores.shape[1], dtype=y.dtype)
        self.labels[end : end + n] = y
        self.end = end + n

    def take(self, until: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """``(labels, decision scores, probabilities, base)`` of the held rows up to
        row ``until`` of the block (views), which are no longer held; ``base`` is the
        first one's place in the stream."""
        start = self.start
        self.start = until
        return (
            self.labels[start:until],
            self.scores[0, start:until],
            self.scores[1, start:until],
            self.base + start,
        )


class ProgressLine:
    """The progress line of a :func:`~aucstream.evaluation.prequential` run: the
    examples read and the cumulative AUC, updated when the line is drawn
    (:meth:`aucstream.streaming.Progress.due`) and at the end. Reading the AUC counts
    the held rows first: read at every chunk, it made SOLAM's pass on skin 1.75x its
    learning alone (docs/results/prequential.md, "small chunks learnt together")."""

    def __init__(self, bar: Any, chunks: Any) -> None:
        self.bar, self.chunks = bar, chunks

    def show(self, run: Any, final: bool = False) -> None:
        """Show where ``run`` (the ``_Evaluation``) stands, when due or ``final``."""
        if final or self.bar.due():
            run.flush()
            auc = run.columns["auc"].get() if "auc" in run.columns else math.nan
            self.bar.show(self.chunks.info(auc))


class MemoryReading:
    """``model_bytes`` at each checkpoint, read cheaply when it cannot have changed.

    A learner whose state attributes are arrays and plain values (no lists, dicts or
    components, which can grow in place) holds the bytes of those arrays as long as
    its attributes other than plain values are the same objects (an array's size is
    fixed: ``ndarray.resize`` refuses an array referenced elsewhere, and this reading
    holds each one): then a reading returns the bytes found last time, and otherwise
    walks the state again.
    """

    _PLAIN = (int, float, str, bool, type(None), np.generic)
    _LEAVES = (np.ndarray, np.random.Generator, *_PLAIN)

    def __init__(self, model) -> None:
        self.model = model
        self.names: tuple = ()
        self.held_names: tuple[str, ...] = ()  # the attributes not plain
        self.held: tuple[Any, ...] = ()  # their objects, at the last walk
        self.arrays: list[np.ndarray] = []
        self.total = 0
        self.known = False

    def read(self) -> int:
        values = vars(self.model)
        if (
            self.known
            and tuple(values) == self.names
            and all(map(operator.is_, map(values.__getitem__, self.held_names), self.held))
        ):
            return self.total
        # one pass over the attributes (what state_items and model_bytes walk)
        arrays, held_names, held, other = [], [], [], {}
        for name, value in values.items():
            if isinstance(value, self._PLAIN):
                continue
            held_names.append(name)
            held.append(value)
            if not is_state_name(name):
                continue
            if isinstance(value, np.ndarray):
                arrays.append(value)
            elif not isinstance(value, self._LEAVES):
                other[name] = value  # a list, dict or component: not known
        # (model_bytes: the arrays' bytes, and those reachable from the other values)
        self.total = sum(int(array.nbytes) for array in arrays) + nbytes_of(other)
        self.known = not other
        if self.known:
            self.names = tuple(values)
            self.held_names, self.held = tuple(held_names), tuple(held)
            self.arrays = arrays
        return self.total


def _replays_calibration(model) -> bool:
    """Whether ``test_then_train``'s scores and the calibration replayed over them give
    ``decision_function``, ``predict_proba`` and ``predict`` as they were (a plain
    aucstream learner whose kernels score each example before learning it).

    A function of the learner's class, tags and ``is_batch`` only, so kept per such
    triple (a search's recording asks it of every candidate at every chunk); the tags
    by identity (a learner's are constants; hashing them costs more than the checks),
    the object kept with the answer so that its address is not reused."""
    kind = type(model)
    if not (
        issubclass(kind, BaseStreamingAUC)
        and kind._scores_by_coef
        and kind._threshold is BaseStreamingAUC._threshold
    ):  # (a meta-learner's tags are made per call, from its parts: not asked)
        return False
    tags, batch = getattr(model, "_tags", None), model.is_batch
    key = (kind, id(tags), batch)
    got = _REPLAYS.get(key)
    if got is None or got[0] is not tags:
        if len(_REPLAYS) >= 256:  # (tags made per call: not kept for ever)
            _REPLAYS.clear()
        got = _REPLAYS[key] = (
            tags,
            not batch
            and bool(getattr(tags, "kernel_prequential", False))
            and callable(getattr(model, "test_then_train", None)),
        )
    return got[1]


_REPLAYS: dict[tuple, tuple] = {}


def _one_example(model) -> bool:
    """Whether ``decision_one``, ``predict_proba_one`` and ``learn_one`` of ``model``
    are ``decision_function``, ``predict_proba`` and ``partial_fit`` of a one-row
    chunk: an online aucstream learner, a holder (:class:`~aucstream.StreamPipeline`,
    :class:`~aucstream.OnePassSearch`) included, none of whose six methods is
    defined outside aucstream (``tests/test_score_one.py`` holds the scores equal,
    ``tests/test_prequential_meta.py`` the runs with a delay). A row alone (a delay,
    a checkpoint) then costs a one-example call, not a validated chunk of one row."""
    if not isinstance(model, BaseStreamingAUC) or model.is_batch:
        return False
    names = ("decision_function", "predict_proba", "partial_fit")
    for name in names + ("decision_one", "predict_proba_one", "learn_one"):
        owner = next((c for c in type(model).__mro__ if name in c.__dict__), None)
        if owner is None or not owner.__module__.startswith("aucstream."):
            return False
    return True


def _scores_as_base(model) -> bool:
    """Whether ``decision_function``, ``predict_proba`` and ``predict`` of ``model``
    are :class:`~aucstream._base.BaseStreamingAUC`'s over its own scores (its
    ``_raw_scores``, ``_threshold`` and ``calibration_`` may be its own, as
    :class:`~aucstream.OnePassSearch`'s are): then one validation and one
    ``score_samples`` give all three, with the same arithmetic."""
    if not isinstance(model, BaseStreamingAUC) or not hasattr(model, "predict_proba"):
        return False
    names = ("decision_function", "predict", "predict_proba", "score_samples")
    return all(
        next(c for c in type(model).__mro__ if name in c.__dict__) is BaseStreamingAUC
        for name in names
    )


def _calibration_owner(model, plain: bool | None = None) -> Callable[[], Any] | None:
    """How to reach the learner whose calibration, replayed over ``model``'s
    ``test_then_train`` scores, gives ``model``'s ``decision_function``,
    ``predict_proba`` and ``predict`` as they were before each row was learnt; None
    when there is none (then delay 0 goes row by row).

    A plain learner (:func:`_replays_calibration`) owns its calibration. A
    :class:`~aucstream.StreamPipeline` over a plain learner scores prequentially inside
    ``partial_fit`` (each row transformed with the statistics of the rows before it,
    then scored by the learner before the learner learns it), its
    ``test_then_train`` returns the learner's scores, and its ``decision_function``,
    ``predict_proba`` and ``predict`` are the learner's on the transformed rows: the
    learner's calibration, replayed, gives them. :class:`~aucstream.OnePassSearch`
    has no such owner: before each example it scores with the candidate of the best
    windowed AUC at that example (and an ensemble of calibrated ones), which its
    ``test_then_train`` scores (the round leader's) do not tell; it records them
    instead (:func:`aucstream._search_scores.search_of`). ``plain`` is
    ``_replays_calibration(model)`` when the caller knows it already.
    """
    if _replays_calibration(model) if plain is None else plain:
        return lambda: model
    from ..pipeline import StreamPipeline

    if (
        type(model) is StreamPipeline
        and type(model)._threshold is StreamPipeline._threshold
        and callable(getattr(model, "test_then_train", None))
    ):
        inner = model.__dict__.get("estimator_", model.estimator)
        if inner is not None and _replays_calibration(inner):
            return lambda: model.estimator_
    return None


@jit
def _span(y):
    """``(smallest, largest, labels equal to neither)`` of non-empty ``y`` in two
    passes without a sort (a NaN equals neither: it is counted)."""
    lo = hi = y[0]
    for i in range(1, y.shape[0]):
        v = y[i]
        if v < lo:
            lo = v
        if v > hi:
            hi = v
    others = 0
    for i in range(y.shape[0]):
        others += not ((y[i] == lo) | (y[i] == hi))
    return lo, hi, others


def distinct(y: np.ndarray) -> np.ndarray:
    """``np.unique(y)`` (the distinct labels, sorted), without a sort when the labels
    are numbers of at most two values (the smallest and the largest, then one count:
    one compiled call for 1-D float64 and int64 labels; not for a float zero, whose
    sign ``np.unique`` picks, nor a NaN)."""
    if not y.size or y.dtype.kind not in "biuf":
        return np.unique(y)
    if y.dtype in (np.float64, np.int64) and y.ndim == 1:
        lo, hi, others = _span(np.ascontiguousarray(y))
    else:
        lo, hi = y.min(), y.max()
        others = y.size - np.count_nonzero((y == lo) | (y == hi))  # (a NaN: all)
    if others or (y.dtype.kind == "f" and (lo == 0 or hi == 0)):
        return np.unique(y)
    if lo == hi:
        return y[:1].copy()
    return np.array([lo, hi], dtype=y.dtype)


def is_fitted(model) -> bool:
    """Whether scikit-learn's ``check_is_fitted`` accepts ``model``.

    An aucstream learner (an instance of a :class:`~aucstream._base.BaseStreamingAUC`
    subclass that defines no ``__sklearn_is_fitted__``) gets the answer of
    ``check_is_fitted``'s own rule for such estimators, an attribute ending in ``_``
    and not starting with ``__``, without its tag lookup and the raised error (a fixed
    cost of every :func:`~aucstream.evaluation.prequential` run; the two agree:
    ``tests/test_prequential_parts.py``)."""
    if isinstance(model, BaseStreamingAUC) and not hasattr(model, "__sklearn_is_fitted__"):
        return any(k.endswith("_") and not k.startswith("__") for k in vars(model))
    try:
        check_is_fitted(model)
    except NotFittedError:
        return False
    except TypeError:
        return False
    return True


def pair_from(values: np.ndarray) -> tuple | None:
    """Both classes from the distinct labels seen (sorted, as ``np.unique`` gives
    them), when they tell them (two labels, or bools)."""
    if values.size > 2:
        raise ValueError(
            f"the stream holds more than two labels ({values[:5].tolist()}); prequential "
            "evaluates binary classifiers"
        )
    if values.size == 2:
        return tuple(v.item() if isinstance(v, np.generic) else v for v in values)
    if values.size == 1 and values.dtype == bool:
        return (False, True)
    return None


def classes_for(model, classes, fitted: bool) -> tuple | None:
    """The run's two classes: the model's when fitted (``classes`` must agree), else
    ``classes`` checked and sorted, else None (read from the stream)."""
    if classes is not None:
        values = np.unique(np.asarray(classes))
        if len(classes) != 2 or values.size != 2:
            raise ValueError(f"classes must hold two different labels, got {classes!r}")
        classes = tuple(v.item() if isinstance(v, np.generic) else v for v in values)
    if fitted and hasattr(model, "classes_"):
        known = tuple(v.item() if isinstance(v, np.generic) else v for v in model.classes_)
        if classes is not None and list(classes) != list(known):
            raise ValueError(f"classes={list(classes)} differs from the model's {list(known)}")
        return known
    return classes


# ------------------------------------------------------------------- the rows
def width_of(X) -> int:
    """The number of columns of a chunk (refused by name when it is not 2-D)."""
    shape = getattr(X, "shape", None)
    if shape is None or len(shape) != 2:
        raise ValueError(f"each chunk's X must be 2-D, got {type(X).__name__} of shape {shape}")
    return int(shape[1])


def take_rows(X, rows: np.ndarray):
    """The rows ``rows`` of a chunk (an array, a sparse matrix or a DataFrame)."""
    if isinstance(X, pd.DataFrame):
        return X.iloc[rows]
    return X[rows]


def slice_rows(X, start: int, stop: int):
    """The rows ``start:stop`` of a chunk."""
    if isinstance(X, pd.DataFrame):
        return X.iloc[start:stop]
    return X[start:stop]


def stack_rows(parts: list):
    """The chunks ``parts`` one after the other, as one of their kind."""
    if len(parts) == 1:
        return parts[0]
    if isinstance(parts[0], pd.DataFrame):
        return pd.concat(parts)
    if sp.issparse(parts[0]):
        return sp.vstack(parts, format="csr")
    return np.concatenate(parts)


def plain_row(X, j: int):
    """Row ``j`` as a learner's one-example methods take it without validation (a
    float64 1-D array, or a dict of feature indices for a CSR row), or None."""
    if type(X) is np.ndarray:
        if X.dtype == np.float64 and X.ndim == 2 and X.flags.c_contiguous:
            return X[j]
        return None
    if sp.issparse(X) and X.format == "csr":
        return csr_row_dict(X, j)
    return None


def row_of(X, j: int):
    """Row ``j`` of a chunk, as its kind gives one (what a ``delay`` callable gets): a
    CSR matrix's through ``getrow`` (the same one-row matrix as ``X[j]``, in two
    thirds of its time)."""
    if isinstance(X, pd.DataFrame):
        return X.iloc[j]
    if type(X) is sp.csr_matrix:
        return X.getrow(j)
    return X[j]
