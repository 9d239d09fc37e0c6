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
sorted array (the state). During a call the sorted scores of each class are held in
buckets: consecutive runs of the sorted array, ``f = max(8, isqrt(window))`` scores
each to begin with, at most ``2f``, with the largest score of each bucket apart. A
score is ranked by counting the buckets whose largest score is below it (adding
their sizes), then the scores below it in the one bucket that may hold more (a
second count when it ties a stored score); storing it, and removing the score it
replaces, moves the entries of one bucket only. The counts have no branch per entry
(their loops vectorize): about :math:`2\sqrt{w}` comparisons and :math:`\sqrt{w}`
moves per example, with no mispredicted branch of a binary search, instead of three
binary searches and a third of the window moved on average in one sorted array. A
bucket that fills or empties is spread afresh (all of them: O(window), rarely), and
the buckets are gathered back into the sorted array at the call's end: the state,
and every value, are those of one sorted array updated example by example. One
compiled call runs a whole chunk; its loop runs without reference counts (the
buckets are allocated by a wrapper: :mod:`aucstream._kernels`, "Reference counts").
The buckets, allocated at each call and freed after it, take about as many bytes as
the state again.
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
def _below(v, k, lo, hi, s, right):  # pragma: no cover - compiled
    """How many of ``v[k, lo:hi]`` are below ``s`` (at most ``s`` when ``right``): a
    count with no branch per entry (its loop vectorizes; unsigned: no wraparound
    test), faster than a binary search over the few entries it is given."""
    n = 0
    if right:
        for e in range(np.uint64(lo), np.uint64(hi)):
            n += v[k, e] <= s
    else:
        for e in range(np.uint64(lo), np.uint64(hi)):
            n += v[k, e] < s
    return n


@jit(inline="always")
def _below_in(v, k, b, hi, s, right):  # pragma: no cover - compiled
    """How many of ``v[k, b, :hi]`` are below ``s`` (as :func:`_below`)."""
    n = 0
    if right:
        for e in range(np.uint64(hi)):
            n += v[k, b, e] <= s
    else:
        for e in range(np.uint64(hi)):
            n += v[k, b, e] < s
    return n


@jit(inline="always")
def _spread(a, k, size, fill, buckets, sizes, tops):  # pragma: no cover - compiled
    """Sorted ``a[k, :size]`` into buckets of ``fill`` (the last holds the rest); their
    number (one, empty, when ``size`` is 0)."""
    nb = max(1, (size + fill - 1) // fill)
    for b in range(nb):
        lo = b * fill
        hi = min(size, lo + fill)
        sizes[k, b] = hi - lo
        for e in range(lo, hi):
            buckets[k, b, e - lo] = a[k, e]
        if hi > lo:
            tops[k, b] = a[k, hi - 1]
    return nb


@jit(inline="always")
def _gather(a, k, nb, buckets, sizes):  # pragma: no cover - compiled
    """The buckets' scores, in order, into ``a[k]`` (the inverse of :func:`_spread`)."""
    w = 0
    for b in range(nb):
        for e in range(sizes[k, b]):
            a[k, w] = buckets[k, b, e]
            w += 1


@jit(inline="always")
def _rank(k, nb, buckets, sizes, tops, s, right):  # pragma: no cover - compiled
    """How many of class k's bucketed scores are below ``s`` (at most ``s`` when
    ``right``), and the next score (infinite if none): the buckets whose largest is
    below, then the one bucket that holds the next (no bucket is empty)."""
    c = 0  # the buckets whose largest is below, and their sizes summed, in one pass
    n = 0
    if right:
        for b in range(np.uint64(nb)):
            t = tops[k, b] <= s
            c += t
            n += sizes[k, b] * t
    else:
        for b in range(np.uint64(nb)):
            t = tops[k, b] < s
            c += t
            n += sizes[k, b] * t
    if c == nb:
        return n, np.inf
    within = _below_in(buckets, k, c, sizes[k, c], s, right)
    return n + within, buckets[k, c, within]


@jit(inline="always")
def _insert(k, nb, buckets, sizes, tops, s):  # pragma: no cover - compiled
    """Store ``s`` in class k's bucket for it (after the scores equal to it); whether
    the bucket is now full."""
    c = min(_below(tops, k, 0, nb, s, True), nb - 1)
    z = sizes[k, c]
    q = _below_in(buckets, k, c, z, s, True)
    for j in range(np.uint64(z), np.uint64(q), -1):
        buckets[k, c, j] = buckets[k, c, j - np.uint64(1)]
    buckets[k, c, q] = s
    sizes[k, c] = z + 1
    if q == z:
        tops[k, c] = s
    return z + 1 == buckets.shape[2]


@jit(inline="always")
def _remove(k, nb, buckets, sizes, tops, s):  # pragma: no cover - compiled
    """Remove one score equal to ``s`` (one is stored) from class k's buckets; whether
    its bucket is now empty."""
    c = _below(tops, k, 0, nb, s, False)
    z = sizes[k, c]
    p = _below_in(buckets, k, c, z, s, False)
    for j in range(np.uint64(p), np.uint64(z - 1)):
        buckets[k, c, j] = buckets[k, c, j + np.uint64(1)]
    sizes[k, c] = z - 1
    if z > 1:
        tops[k, c] = buckets[k, c, z - 2]
    return z == 1


@jit
def _rank_run(numbers, scores, ring, ranked, meta, positive, min_other, out):  # pragma: no cover
    """The signal of each (class number, score) in turn, storing each score after.

    ``ring[k]`` holds class k's last scores in arrival order from ``meta[2k]`` (the
    oldest), ``meta[2k + 1]`` of them, and ``ranked[k, :meta[2k + 1]]`` the same sorted.
    During the call the sorted scores are kept in buckets (module docstring), spread
    from ``ranked`` at its start and gathered back at its end (and whenever a bucket
    fills or empties).
    """
    window = ring.shape[1]
    fill = max(8, int(math.sqrt(window)))
    most = window // fill + 2
    buckets = np.empty((2, most, 2 * fill))
    sizes = np.zeros((2, most), dtype=np.int64)
    tops = np.zeros((2, most))
    nb = np.zeros(2, dtype=np.int64)
    state = (ring, ranked, meta)
    _rank_core(numbers, scores, state, positive, min_other, out, (buckets, sizes, tops, nb), fill)


@jit(borrowing=True)
def _rank_core(numbers, scores, state, positive, min_other, out, held, fill):  # pragma: no cover
    """:func:`_rank_run` with its buckets ``held`` = (buckets, sizes, tops, numbers
    of buckets) allocated (no allocation here: no reference count in the loop)."""
    ring, ranked, meta = state
    buckets, sizes, tops, nb = held
    window = ring.shape[1]
    for k in range(2):
        nb[k] = _spread(ranked, k, meta[2 * k + 1], fill, buckets, sizes, tops)
    for i in range(scores.shape[0]):
        k = numbers[i]
        s = scores[i]
        other = 1 - k
        m = meta[2 * other + 1]
        if m < min_other:
            out[i] = np.nan
        else:
            lo, after = _rank(other, nb[other], buckets, sizes, tops, s, False)
            hi = lo
            if after == s:  # (ties only)
                hi = _rank(other, nb[other], buckets, sizes, tops, s, True)[0]
            if k == positive:
                out[i] = (2 * lo + (hi - lo)) / (2.0 * m)
            else:
                out[i] = (2 * (m - hi) + (hi - lo)) / (2.0 * m)
        start = meta[2 * k]
        size = meta[2 * k + 1]
        if size < window:
            ring[k, (start + size) % window] = s
            meta[2 * k + 1] = size + 1
        else:
            old = ring[k, start]
            ring[k, start] = s
            meta[2 * k] = start + 1 if start + 1 < window else 0
            if _remove(k, nb[k], buckets, sizes, tops, old):  # (an empty bucket)
                _gather(ranked, k, nb[k], buckets, sizes)
                nb[k] = _spread(ranked, k, size - 1, fill, buckets, sizes, tops)
        if _insert(k, nb[k], buckets, sizes, tops, s):  # (a full bucket)
            _gather(ranked, k, nb[k], buckets, sizes)
            nb[k] = _spread(ranked, k, meta[2 * k + 1], fill, buckets, sizes, tops)
    for k in range(2):
        _gather(ranked, k, nb[k], buckets, sizes)


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
