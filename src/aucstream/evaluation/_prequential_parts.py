"""Per-chunk helpers of :func:`aucstream.evaluation.prequential`: the memory reading at
each checkpoint (:class:`MemoryReading`) and the labels' check in one compiled pass
(:func:`positive_of`)."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .._dask_tasks import _nbytes
from .._kernels import jit
from .._state import state_items

__all__ = ["MemoryReading", "positive_of"]


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
        state = state_items(self.model)
        self.known = all(isinstance(v, self._LEAVES) for v in state.values())
        if self.known:
            self.names = tuple(values)
            held = [(k, v) for k, v in values.items() if not isinstance(v, self._PLAIN)]
            self.held_names = tuple(k for k, _ in held)
            self.held = tuple(v for _, v in held)
            self.arrays = [v for v in state.values() if isinstance(v, np.ndarray)]
        self.total = _nbytes(state)  # (model_bytes, on the state just read)
        return self.total


@jit
def _positive_of(y, negative, positive, out):
    """``out = y == positive``; the first position whose label is neither class, or -1."""
    for i in range(y.shape[0]):
        v = y[i]
        out[i] = v == positive
        if not (out[i] or v == negative):
            return i
    return -1


_NUMBERS = (int, float)


def positive_of(y: np.ndarray, classes: tuple) -> tuple[np.ndarray, int] | None:
    """``(y == classes[1], first position of a label of neither class or -1)`` in one
    compiled pass, for float64 or int64 labels and classes that are ints or floats
    (that dtype holds exactly); None otherwise (numpy's comparisons then)."""
    if y.dtype == np.float64:
        cast: Any = float
    elif y.dtype == np.int64:
        cast = int
    else:
        return None
    negative, positive = classes
    if type(negative) not in _NUMBERS or type(positive) not in _NUMBERS:
        return None
    if cast(negative) != negative or cast(positive) != positive:
        return None
    if cast is int and not (-(2**63) <= negative < 2**63 and -(2**63) <= positive < 2**63):
        return None
    out = np.empty(y.shape[0], dtype=bool)
    first = int(_positive_of(np.ascontiguousarray(y), cast(negative), cast(positive), out))
    return out, first
