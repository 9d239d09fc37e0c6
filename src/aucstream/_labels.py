"""Labels compared with two classes in one compiled pass: what a run of
:func:`~aucstream.evaluation.prequential` checks in every chunk (:class:`LabelCheck`),
and what a learner's call of many rows takes its +1/-1 labels from
(:func:`aucstream._fastpath.quick_labels`, through :meth:`LabelCheck.signs`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._kernels import compiled_entry, jit

__all__ = ["LabelCheck", "positive_of"]


@jit
def _first_other(y, negative, positive):
    """The first position whose label is neither class, or -1."""
    for i in range(y.shape[0]):
        if not (y[i] == positive or y[i] == negative):
            return i
    return -1


@jit
def _positive_of(y, negative, positive, out):
    """``out = y == positive``; the first position whose label is neither class, or -1
    (a pass without a branch on the labels, then a search only when one is bad)."""
    bad = 0
    for i in range(y.shape[0]):
        v = y[i]
        is_positive = v == positive
        out[i] = is_positive
        bad += not (is_positive | (v == negative))
    return _first_other(y, negative, positive) if bad else -1


@jit
def _signs_of(y, negative, positive, out):
    """:func:`_positive_of` writing +1.0 where ``y == positive`` and -1.0 elsewhere
    (a learner's labels) into float64 ``out``."""
    bad = 0
    for i in range(y.shape[0]):
        v = y[i]
        is_positive = v == positive
        out[i] = 2.0 * is_positive - 1.0
        bad += not (is_positive | (v == negative))
    return _first_other(y, negative, positive) if bad else -1


_NUMBERS = (int, float)


def _cast_classes(classes: tuple, cast: type) -> tuple | None:
    """Both classes as ``cast`` (float for float64 labels, int for int64) when they
    are ints or floats that dtype holds exactly; else None."""
    negative, positive = classes
    if type(negative) not in _NUMBERS or type(positive) not in _NUMBERS:
        return None
    try:
        if cast(negative) != negative or cast(positive) != positive:
            return None
    except (OverflowError, ValueError):  # (int of an infinity or a NaN)
        return None
    if cast is int and not (-(2**63) <= negative < 2**63 and -(2**63) <= positive < 2**63):
        return None
    return cast(negative), cast(positive)


class LabelCheck:
    """:func:`positive_of` for one pair of classes, the classes cast once (a run of
    :func:`~aucstream.evaluation.prequential` checks every chunk's labels).

    A plain array of labels (exactly an ndarray, 1-D, C-contiguous, writeable and
    aligned: what numba's typing of it then is) goes to the kernel's compiled entry point for
    its dtype, resolved once (:func:`aucstream._kernels.compiled_entry`): numba's
    dispatcher types the arguments at every call, about a third of a call on a chunk
    of 1,000 labels; any other array goes through the dispatcher.
    """

    __slots__ = ("classes", "as_float", "as_int")

    def __init__(self, classes: tuple) -> None:
        self.classes = classes
        self.as_float = _cast_classes(classes, float)
        self.as_int = _cast_classes(classes, int)

    def __call__(self, y: np.ndarray) -> tuple[np.ndarray, int] | None:
        """``(y == classes[1], first position of a label of neither class or -1)``, or
        None for labels of another dtype or classes it does not hold exactly."""
        return self._run(y, False)

    def signs(self, y: np.ndarray) -> tuple[np.ndarray, int] | None:
        """As calling it, with +1.0 for the positive class and -1.0 for the other (a
        float64 array) in place of the booleans."""
        return self._run(y, True)

    def _run(self, y: np.ndarray, signs: bool) -> tuple[np.ndarray, int] | None:
        dtype = y.dtype
        if dtype == _FLOAT64:
            cast, kind = self.as_float, "f"
        elif dtype == _INT64:
            cast, kind = self.as_int, "i"
        else:
            return None
        if cast is None:
            return None
        kernel = _signs_of if signs else _positive_of
        out = np.empty(y.shape[0], dtype=np.float64 if signs else bool)
        flags = y.flags
        if (
            type(y) is np.ndarray
            and y.ndim == 1
            and flags.c_contiguous
            and flags.writeable
            and flags.aligned
        ):
            key = kind + "s" if signs else kind  # (a string: hashing a dtype is slow)
            entry = _ENTRIES.get(key)
            if entry is None:  # (y plain, the classes of the dtype's Python type, out new)
                entry = _ENTRIES[key] = compiled_entry(kernel, (y, *cast, out))
            return out, int(entry(y, cast[0], cast[1], out))
        return out, int(kernel(np.ascontiguousarray(y), cast[0], cast[1], out))


_FLOAT64, _INT64 = np.dtype(np.float64), np.dtype(np.int64)
#: The compiled entries of :func:`_positive_of` ("f" float64 labels, "i" int64) and of
#: :func:`_signs_of` ("fs", "is") for plain labels (classes of that dtype's Python type,
#: float or int, and a new output array).
_ENTRIES: dict[str, Any] = {}


def positive_of(y: np.ndarray, classes: tuple) -> tuple[np.ndarray, int] | None:
    """``(y == classes[1], first position of a label of neither class or -1)`` in one
    compiled pass, for float64 or int64 labels and classes that are ints or floats
    (that dtype holds exactly); None otherwise (numpy's comparisons then)."""
    return LabelCheck(classes)(y)
