r"""A per-example ranking signal whose mean is the AUC.

For each labelled score, :class:`RankSignal` returns the share of recent examples of
the other class that it is ranked correctly against, ties one half:

.. math::

    r_t = \frac{1}{m_t} \sum_{j \in N_t} \big(\mathbb{I}[s_t > s_j]
          + \tfrac12 \mathbb{I}[s_t = s_j]\big) \text{ for a positive}, \qquad
    r_t = \frac{1}{m_t} \sum_{j \in P_t} \big(\mathbb{I}[s_j > s_t]
          + \tfrac12 \mathbb{I}[s_j = s_t]\big) \text{ for a negative},

where :math:`N_t` (:math:`P_t`) holds the last ``window`` negatives (positives) that
arrived before :math:`t` and :math:`m_t` is their number; :math:`r_t` is NaN while
:math:`m_t = 0`.

**The identity.** Every positive-negative pair is counted once, by whichever of its
two members arrives later, as long as the earlier one is still among the last
``window`` of its class. So while neither class has more than ``window`` examples,

.. math::

    \sum_t m_t\, r_t = n_+ n_-\, \mathrm{AUC}

exactly (the AUC of all the scores so far, ties one half; with ``min_other=1``, the
default): the :math:`m_t`-weighted mean of the signal is the AUC. Its plain mean is
not exactly the AUC, but on a stationary stream of independent examples each
:math:`r_t` with :math:`m_t > 0` has expectation
:math:`\Pr(s_+ > s_-) + \frac12 \Pr(s_+ = s_-)`, the AUC of the score distribution,
so the mean of the signal estimates it, and a change in the mean of the signal is a
change in the AUC: drift detectors on the mean of a stream of values
(:class:`~aucstream.drift.ADWIN`, :class:`~aucstream.drift.PageHinkley`) watch the AUC
through it.

Each class keeps its last ``window`` scores in a ring (arrival order) and in a
sorted array. A score is ranked by a binary search in the other class's sorted
array (a second one when it ties a stored score); storing it moves only the entries
between the position of the score it replaces and its own (O(window) in the worst
case, a third of the window on average). One compiled call runs a whole chunk.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator

from aucstream._params import Integral, Interval

from .._kernels import jit
from .._typing import Label
from ._checks import check_memory, check_params

__all__ = ["RankSignal"]


@jit(inline="always")
def _bisect(a, n, x, right):  # pragma: no cover - compiled
    """The first position in sorted ``a[:n]`` whose entry is >= x (> x when ``right``).

    Plain halving: about log2(n) comparisons wherever the position is (a galloping
    search from 0, :func:`aucstream._sorted_pairs._gallop`, takes twice as many for a
    position in the middle, where the scores of a window mostly fall).
    """
    lo, size = 0, n
    while size > 0:
        half = size >> 1
        v = a[lo + half]
        if v < x or (right and v == x):
            lo += half + 1
            size -= half + 1
        else:
            size = half
    return lo


@jit(inline="always")
def _shift_down(a, lo, hi):  # pragma: no cover - compiled
    """``a[lo:hi] = a[lo + 1:hi + 1]``, with unsigned indices: no wraparound test per
    entry (numba's for a signed index), in the loop that costs the signal most."""
    for j in range(np.uint64(lo), np.uint64(hi)):
        a[j] = a[j + np.uint64(1)]


@jit(inline="always")
def _shift_up(a, lo, hi):  # pragma: no cover - compiled
    """``a[lo + 1:hi + 1] = a[lo:hi]`` (from the top down), unsigned as :func:`_shift_down`."""
    for j in range(np.uint64(hi), np.uint64(lo), -1):
        a[j] = a[j - np.uint64(1)]


@jit
def _rank_run(numbers, scores, ring, ranked, meta, positive, min_other, out):  # pragma: no cover
    """The signal of each (class number, score) in turn, storing each score after.

    ``ring[k]`` holds class k's last scores in arrival order from ``meta[2k]`` (the
    oldest), ``meta[2k + 1]`` of them, and ``ranked[k, :meta[2k + 1]]`` the same sorted.
    """
    window = ring.shape[1]
    for i in range(scores.shape[0]):
        k = numbers[i]
        s = scores[i]
        other = 1 - k
        m = meta[2 * other + 1]
        if m < min_other:
            out[i] = np.nan
        else:
            b = ranked[other]
            lo = _bisect(b, m, s, False)
            hi = lo if lo == m or b[lo] != s else _bisect(b, m, s, True)  # (ties only)
            if k == positive:
                out[i] = (2 * lo + (hi - lo)) / (2.0 * m)
            else:
                out[i] = (2 * (m - hi) + (hi - lo)) / (2.0 * m)
        start = meta[2 * k]
        size = meta[2 * k + 1]
        a = ranked[k]
        q = _bisect(a, size, s, True)
        if size < window:
            ring[k, (start + size) % window] = s
            meta[2 * k + 1] = size + 1
            _shift_up(a, q, size)
            a[q] = s
        else:
            old = ring[k, start]
            ring[k, start] = s
            meta[2 * k] = (start + 1) % window
            p = _bisect(a, size, old, False)
            if q > p:
                _shift_down(a, p, q - 1)
                a[q - 1] = s
            else:
                _shift_up(a, q, p)
                a[q] = s


class RankSignal(BaseEstimator):
    r"""Per-example ranking signal whose mean is the AUC (see the module docstring).

    For a positive, the share of the last ``window`` negatives scored below it; for a
    negative, the share of the last ``window`` positives scored above it; ties count
    one half. NaN while the other class has no score yet (or fewer than
    ``min_other``). Exact: the value is the
    integer count ``2 #correct + #tied`` over ``2 m``, rounded once.

    Parameters
    ----------
    window : int >= 1, default=1000
        How many of the most recent scores of each class a score is ranked against.
        The state takes 32 bytes per unit of ``window``, checked against
        ``aucstream.get_config()["memory_budget"]``.
    min_other : int in [1, window], default=1
        The value is NaN while fewer than ``min_other`` scores of the other class are
        stored (with 1: while there is none).
    pos_label : scalar, optional
        The label of the positive class. When None, the positive class is the larger of
        the stream's two labels (as ``classes_[1]`` of the learners), fixed when both
        have been seen; until then every value is NaN anyway. A third label (or, with
        ``pos_label`` given, a second label other than it) is refused.

    Attributes
    ----------
    n_seen : int
        The number of examples given so far.

    Examples
    --------
    >>> from aucstream.drift import RankSignal
    >>> signal = RankSignal(window=3)
    >>> signal.update(0.2, 0)  # no positive yet
    nan
    >>> signal.update(0.5, 1)  # above the one negative
    1.0
    >>> signal.update_many([0.5, 0.9, 0.1], [0, 0, 1])  # tie, above, below both negatives
    array([0.5, 0. , 0. ])
    """

    _parameter_constraints: dict = {
        "window": [Interval(Integral, 1, None, closed="left")],
        "min_other": [Interval(Integral, 1, None, closed="left")],
    }

    #: The labels seen grow from none to two (a model file holding a signal, see
    #: :mod:`aucstream.persistence`, stores them as a list of scalars).
    _growable_state = ("_labels",)

    def __init__(
        self, window: int = 1000, min_other: int = 1, pos_label: Label | None = None
    ) -> None:
        self.window = window
        self.min_other = min_other
        self.pos_label = pos_label
        check_params(self, self._parameter_constraints)
        if min_other > window:
            raise ValueError(f"min_other={min_other} must not exceed window={window}")
        if pos_label is not None and not _is_label(pos_label):
            raise TypeError(f"pos_label must be a number, bool or string, got {pos_label!r}")
        check_memory(self, 32 * window, f"window={window}")
        self.reset()

    def reset(self) -> RankSignal:
        """Forget every score (the labels seen too).

        Returns
        -------
        self
        """
        self._ring = np.zeros((2, self.window))
        self._ranked = np.zeros((2, self.window))
        self._meta = np.zeros(4, dtype=np.int64)
        self._labels: list = [] if self.pos_label is None else [_plain(self.pos_label)]
        self.n_seen = 0
        return self

    def _check_state(self) -> None:
        """Consistency of a loaded state (a model file), before a kernel reads it:
        the arrays' shapes and dtypes, ring positions and sizes inside the window, the
        stored scores finite and each class's sorted copy sorted."""
        w = self.window
        if not (isinstance(w, (int, np.integer)) and not isinstance(w, bool) and w >= 1):
            raise ValueError(f"window must be a positive int, got {w!r}")
        for name in ("_ring", "_ranked"):
            a = getattr(self, name)
            if not (isinstance(a, np.ndarray) and a.dtype == np.float64 and a.shape == (2, w)):
                raise ValueError(f"{name} must be a float64 array of shape (2, {w})")
        meta = self._meta
        if not (isinstance(meta, np.ndarray) and meta.dtype == np.int64 and meta.shape == (4,)):
            raise ValueError("_meta must be an int64 array of shape (4,)")
        for k in range(2):
            start, size = int(meta[2 * k]), int(meta[2 * k + 1])
            if not (0 <= start < w and 0 <= size <= w and (size == w or start == 0)):
                raise ValueError(
                    f"_meta gives class {k} {size} scores from position {start}: not a ring "
                    f"of window {w}"
                )
            kept = self._ranked[k, :size]
            if not np.isfinite(kept).all() or np.any(np.diff(kept) < 0):
                raise ValueError(f"the sorted scores of class {k} are not finite and sorted")
            if not np.isfinite(self._ring[k, :size]).all():
                raise ValueError(f"the stored scores of class {k} are not finite")
        if not isinstance(self._labels, list) or len(self._labels) > 2:
            raise ValueError("_labels must be a list of at most two labels")
        if not (isinstance(self.n_seen, (int, np.integer)) and self.n_seen >= 0):
            raise ValueError(f"n_seen must be a non-negative int, got {self.n_seen!r}")

    def update(self, score: float, label: Label) -> float:
        """The signal of one example, which is then stored.

        Parameters
        ----------
        score : float
            A finite score; larger means more likely positive.
        label : scalar
            Its label (one of the stream's two).

        Returns
        -------
        float
            The share of recent examples of the other class ranked correctly against
            it, ties one half; NaN if there is none.

        Raises
        ------
        TypeError
            If the score is not a real number or the label not a scalar.
        ValueError
            If the score is not finite or the label is a third one. Nothing changes.
        """
        if isinstance(score, np.ndarray) and score.ndim == 0:
            score = score[()]
        if not isinstance(score, (Real, np.bool_)):
            raise TypeError(f"score must be a real number, got {type(score).__name__}")
        if isinstance(label, np.ndarray) and label.ndim == 0:
            label = label[()]
        if not _is_label(label):
            raise TypeError(f"label must be a number, bool or string, got {label!r}")
        value = float(score)
        if not math.isfinite(value):
            raise ValueError(f"score = {value} is not finite (nothing changed)")
        return float(self.update_many(np.array([value]), np.array([label]))[0])

    def update_many(self, scores: ArrayLike, labels: ArrayLike) -> np.ndarray:
        """The signal of each example in turn, each stored after its value is taken.

        Exactly the values of :meth:`update` called on each pair in order, in one
        compiled loop.

        Parameters
        ----------
        scores : array-like of shape (n_examples,)
            Finite scores.
        labels : array-like of shape (n_examples,)
            Their labels.

        Returns
        -------
        ndarray of shape (n_examples,)
            The signal of each example (NaN where the other class has no score).

        Raises
        ------
        TypeError
            If the scores are not real numbers.
        ValueError
            If the arrays are not 1-D, their lengths differ, a score is not finite, or
            a label is a third one (the message names it). Nothing changes.
        """
        return self._apply(*self._check(scores, labels))

    def _check(self, scores: ArrayLike, labels: ArrayLike) -> tuple:
        """Every check of :meth:`update_many`, changing nothing.

        Returns the float64 scores, the class number of each example, the stream's
        labels afterwards and the number of the positive class (-1 while unknown),
        the arguments of :meth:`_apply` (which may take consecutive slices of the
        first two).
        """
        s = np.asarray(scores)
        y = np.asarray(labels)
        if s.dtype.kind not in "biuf":
            raise TypeError(f"scores must be real numbers, got an array of dtype {s.dtype}")
        if s.ndim != 1 or y.ndim != 1:
            raise ValueError(
                f"scores and labels must be one-dimensional, got shapes {s.shape} and {y.shape}"
            )
        if s.shape != y.shape:
            raise ValueError(f"scores and labels have different lengths: {s.size} and {y.size}")
        s = np.ascontiguousarray(s, dtype=np.float64)
        bad = ~np.isfinite(s)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"scores[{i}] = {s[i]} is not finite (nothing changed)")
        known = self._labels
        if len(known) == 2 and y.dtype.kind in "biuf" and all(map(_is_number, known)):
            # both labels known (a detector's every chunk after its first): no search
            # for new ones unless a label is neither (then it names the third one)
            second = y == known[1]
            if not (second | (y == known[0])).all():
                self._labels_after(y)
                raise AssertionError("a third label passed the check")  # pragma: no cover
            return s, second.astype(np.int64), list(known), self._positive(known)
        known = self._labels_after(y)
        numbers = np.zeros(y.size, dtype=np.int64)
        if len(known) == 2:
            numbers[y == known[1]] = 1
        return s, numbers, known, self._positive(known)

    def _apply(self, scores, numbers, known, positive) -> np.ndarray:
        """The signal of checked examples (see :meth:`_check`), which are then stored."""
        out = np.empty(scores.size)
        if known != self._labels:  # kept when unchanged: a learner's kept walk of its
            self._labels = known  # state (aucstream._state.FlatState) stays current
        _rank_run(
            numbers, scores, self._ring, self._ranked, self._meta, positive, self.min_other, out
        )
        self.n_seen += scores.size
        return out

    def _forget_scores(self) -> None:
        """Forget the stored scores, keep the labels and ``n_seen``."""
        self._ring[:] = 0.0
        self._ranked[:] = 0.0
        self._meta[:] = 0

    def _labels_after(self, labels: np.ndarray) -> list:
        """The stream's labels once ``labels`` are seen, in order of appearance."""
        if labels.dtype.kind not in "biufUS" and not all(_is_label(v) for v in labels.tolist()):
            raise TypeError(f"labels must be numbers, bools or strings, got dtype {labels.dtype}")
        if labels.dtype.kind == "f" and np.isnan(labels).any():
            i = int(np.argmax(np.isnan(labels)))
            raise ValueError(f"labels[{i}] is NaN; labels must be two distinct values")
        known = list(self._labels)
        _, first = np.unique(labels, return_index=True)
        for i in np.sort(first):
            value = _plain(labels[i])
            if not any(value == v for v in known):
                known.append(value)
                if len(known) > 2:
                    described = " and ".join(repr(v) for v in known[:2])
                    if self.pos_label is not None:
                        described = f"pos_label={described}"
                    raise ValueError(
                        f"labels[{i}] = {value!r} is a third label; this stream's labels are "
                        f"{described} (nothing changed)"
                    )
        return known

    def _positive(self, known: list) -> int:
        """The number of the positive class (-1 while unknown)."""
        if self.pos_label is not None:
            return 0
        if len(known) < 2:
            return -1
        try:
            return 1 if known[1] > known[0] else 0
        except TypeError:
            raise TypeError(
                f"the labels {known[0]!r} and {known[1]!r} cannot be ordered to tell the "
                "positive class; give pos_label (nothing changed)"
            ) from None


def _is_label(value) -> bool:
    return isinstance(value, (Real, np.bool_, str, np.str_)) and not isinstance(value, complex)


def _is_number(value) -> bool:
    return isinstance(value, (Real, np.bool_)) and not isinstance(value, complex)


def _plain(value):
    """A numpy scalar as the Python scalar it holds."""
    return value.item() if isinstance(value, np.generic) else value
