r"""Windowed AUC peeks that grow with the buffer: what :class:`~aucstream.OnePassSearch`
reads to choose its leader and ensemble at each stream position.

A search buffers its candidates' prequential scores between block ends (up to 4,096
rows) and reads each alive candidate's windowed AUC with the buffered rows included
(:meth:`aucstream.metrics.RollingAUC._peek`): an O(k log k) count over the k buffered
rows, made again from scratch at every position where the search scores. One example at
a time (a River progressive loop through ``StreamPipeline``), each prediction moves the
position by one row, and the seventeen peeks of the first race cost more than the rest
of the prediction (docs/benchmarks.md, issue 29's section).

:func:`peek` keeps, per candidate, what the last peek counted, and counts only the rows
buffered since. With :math:`W` the window, :math:`A` the buffered rows and :math:`D` the
oldest rows of the window that they push out (the first
:math:`\max(0, |W| + |A| - \mathrm{window})`), the peek's count is

.. math::

    C((W \setminus D) \cup A) = C(W) + \sum_{a \in A} \big(p(a, W) - p(a, D_a) +
    p(a, A_a)\big) - \sum_{d \in D} \big(p(d, W) - p(d, D_d) + p(d, A_d)\big),

(the notation of :class:`~aucstream.metrics.RollingAUC`; a pair counts 2 when its
positive scores above its negative, 1 when they tie; :math:`p(x, S)` is what the
pairs of :math:`x` with the other class's scores in :math:`S` count, and
:math:`A_x`, :math:`D_x` the rows of :math:`A` and :math:`D` before :math:`x` in the
order :func:`_grow` takes them: each buffered row after the window row it pushes
out). So a new buffered row of score :math:`s` costs a few binary searches in sorted
arrays (the window's, and the kept departed and buffered scores of each class), then
:math:`s` joins its class's sorted buffered scores and the row it pushes out its
class's departed ones. The integers are those of the count from scratch, so the AUC
is the same float. A partial AUC (a metric with ``max_fpr``, and the race's statistic
of :mod:`aucstream._pauc_race`) is read from the tops of the window's sorted scores
without the departed ones and with the buffered ones
(:func:`~aucstream._sorted_pairs._tops_after`): the arrays the metric reads after an
update, so the same float too. Anything else (more buffered rows than the window
holds, a label not yet known to the metric, buffered rows that differ from the ones
counted) takes the peek from scratch.

The kept counts are not the search's state (not saved, copied or checked): a weak
table by search, checked against the metric's counters and the buffered rows
themselves at each use.
"""

from __future__ import annotations

import math
from threading import get_ident

import numpy as np

from ._fastpath import ByIdentity
from ._kernels import jit
from ._sorted_pairs import _partial_auc, _tops_after

__all__ = ["peek", "peek_full", "peeked_auc", "positive_with"]

_NONE = np.empty(0)


@jit(inline="always")
def _pairs_with(part, s, positive):
    """The pairs of a row of score ``s`` with the sorted scores ``part`` of the other
    class: a positive counts 2 per score below it and 1 per tie, a negative the same
    from the positives' side (2 per score above it, 1 per tie)."""
    below = np.searchsorted(part, s, side="left")
    up_to = np.searchsorted(part, s, side="right")
    return below + up_to if positive else 2 * part.shape[0] - below - up_to


#: What :func:`_grow` returns: it counted the new rows (:data:`COUNTED`), the rows it
#: kept are not the buffer's first rows (:data:`DIFFERENT`), or a new row's label is not
#: one it counts with (:data:`NEW_LABEL`).
COUNTED, DIFFERENT, NEW_LABEL = 0, 1, 2


@jit(inline="always")
def _insert(part, n, s):
    """Put ``s`` into the sorted ``part[:n]`` (after the scores equal to it)."""
    at = np.searchsorted(part[:n], s, side="right")
    for j in range(n, at, -1):
        part[j] = part[j - 1]
    part[at] = s


@jit
def _grow(ring, kept, scores, labels, zero, one, k):
    """Count the buffered rows ``k:`` into the kept counts, once the first ``k`` are
    found to be the ones kept: per row, the window's oldest row it pushes out (if the
    window is full) leaves the count and joins the departed rows (``gone``), then the
    row's pairs with the window, less the departed rows, and with the buffered rows
    before it (``grown``) join it, and the row joins ``grown`` in order and is kept
    (``kept_scores``, ``kept_labels``). ``ring``: the window's sorted scores, its class
    sizes, its ring of scores and label numbers, its oldest position and its size;
    ``zero`` and ``one``: the label values numbered 0 and 1 (equal when one label is
    known: every row is numbered 0). Returns ``(COUNTED, the pairs added)`` (a change
    of the count, negative when the rows pushed out count more), or ``(DIFFERENT, 0)``
    or ``(NEW_LABEL, 0)`` with nothing counted."""
    window, sizes, ring_score, ring_label, start, size = ring
    grown, grown_sizes, gone, gone_sizes, kept_scores, kept_labels = kept
    for r in range(k):
        if kept_scores[r] != scores[r] or kept_labels[r] != labels[r]:
            return DIFFERENT, 0
    for r in range(k, scores.shape[0]):
        if labels[r] != zero and labels[r] != one:
            return NEW_LABEL, 0
    w, added = ring_score.shape[0], 0
    for r in range(k, scores.shape[0]):
        j = size + r - w  # (this row pushes out the window's row j, counted from its oldest)
        if j >= 0:
            p = (start + j) % w
            s, c = ring_score[p], ring_label[p]
            o = 1 - c
            added -= _pairs_with(window[o, : sizes[o]], s, c == 1)
            added += _pairs_with(gone[o, : gone_sizes[o]], s, c == 1)
            added -= _pairs_with(grown[o, : grown_sizes[o]], s, c == 1)
            _insert(gone[c], gone_sizes[c], s)
            gone_sizes[c] += 1
        s = scores[r]
        c = 1 if labels[r] == one and one != zero else 0
        o = 1 - c
        added += _pairs_with(window[o, : sizes[o]], s, c == 1)
        added -= _pairs_with(gone[o, : gone_sizes[o]], s, c == 1)
        added += _pairs_with(grown[o, : grown_sizes[o]], s, c == 1)
        _insert(grown[c], grown_sizes[c], s)
        grown_sizes[c] += 1
        kept_scores[r] = s
        kept_labels[r] = labels[r]
    return COUNTED, added


class _Kept:
    """One candidate's counted buffer (:func:`peek`)."""

    __slots__ = (
        "metric", "window", "ring", "counters", "known", "labels", "k", "pairs", "grown",
        "sizes", "gone", "gone_sizes", "scores", "ys",
    )  # fmt: skip

    def __init__(self, metric, counters: tuple, labels: list, capacity: int, dtype) -> None:
        self.metric, self.counters, self.labels, self.k, self.pairs = metric, counters, labels, 0, 0
        self.known = list(metric._labels)  # (the metric's; ``labels``: with the buffer's)
        # (the window's sorted scores, by identity: a transaction that fails restores
        # the metric with copies, so the counts kept before it are not taken again)
        self.window, self.ring = metric._sorted, metric._ring_score
        self.grown, self.gone = np.empty((2, capacity)), np.empty((2, capacity))
        self.sizes, self.gone_sizes = np.zeros(2, dtype=np.int64), np.zeros(2, dtype=np.int64)
        self.scores = np.empty(capacity)
        self.ys = np.empty(capacity, dtype=dtype)


#: The kept counts, per search, thread and candidate (a thread's own: two threads that
#: score one search never grow the same counts).
_KEPT = ByIdentity()


def peek(owner, i: int, metric, y: np.ndarray, scores: np.ndarray) -> float:
    """``metric._peek(y, scores)`` (the :class:`~aucstream.metrics.RollingAUC` of
    candidate ``i`` of the search ``owner``, with its buffered labels ``y`` and scores,
    float64), counted from what the last peek of the same buffer counted (module
    docstring); the same float. A partial AUC (and the race's statistic,
    :class:`~aucstream._pauc_race.GuardedPartialAUC`, whose ``peeked`` combines it with
    the full AUC) is read from the tops of the window and of the kept buffered rows,
    which are sorted already."""
    from ._streaming_auc import _resolved

    counted = _counted(owner, i, metric, y, scores)
    if counted is None:
        return metric._peek(y, scores)
    full = _full(metric, *counted)
    region = _resolved(metric.max_fpr, metric.min_tpr)
    if region is None:
        return full
    partial = _partial(metric, *counted, region)
    combine = getattr(metric, "peeked", None)
    return partial if combine is None else combine(partial, full)


def peek_full(owner, i: int, metric, y: np.ndarray, scores: np.ndarray) -> float:
    """The full AUC of the window of ``metric`` with the buffered rows (as :func:`peek`
    counts it), whatever the AUC the metric reports; the same float as
    ``metric._peek_full``."""
    counted = _counted(owner, i, metric, y, scores)
    if counted is None:
        return metric._peek_full(*metric._peek_rows(y, scores))
    return _full(metric, *counted)


def _full(metric, kept: _Kept, n0: int, n1: int) -> float:
    """The full AUC of the window with the kept buffered rows."""
    return peeked_auc(metric, int(metric._counters[2]) + kept.pairs, n0, n1, kept.labels)


def _partial(metric, kept: _Kept, n0: int, n1: int, region: tuple) -> float:
    """The partial AUC over ``region`` of the window with the kept buffered rows:
    :func:`~aucstream._sorted_pairs._tops_after` of the window's sorted scores less the
    departed ones and with the buffered ones, as ``get`` reads them after an update."""
    positive = positive_with(metric, kept.labels)
    negative = 1 - positive
    n_neg, n_pos = (n0, n1)[negative], (n0, n1)[positive]
    if n_neg == 0 or n_pos == 0:
        return float("nan")
    r = min(n_neg, math.floor(region[0] * n_neg) + 1)  # (as _tops)
    window, sizes, grown, gone = metric._sorted, metric._counters[3:5], kept.grown, kept.gone
    neg, pos = _tops_after(
        window[negative, : sizes[negative]], window[positive, : sizes[positive]],
        gone[negative, : kept.gone_sizes[negative]], gone[positive, : kept.gone_sizes[positive]],
        grown[negative, : kept.sizes[negative]], grown[positive, : kept.sizes[positive]], r,
    )  # fmt: skip
    return _partial_auc(neg, pos, n_neg, n_pos, region, metric.standardized)


def _counted(
    owner, i: int, metric, y: np.ndarray, scores: np.ndarray
) -> tuple[_Kept, int, int] | None:
    """``(kept, n0, n1)``: candidate ``i``'s kept counts grown to the buffered rows,
    and the class sizes of the window with them; None when the peek must count from
    scratch (more buffered rows than the window holds, a label not yet known, another
    buffer)."""
    metric._flush()
    k, counters = scores.shape[0], metric._counters
    if y.shape != scores.shape or k > metric.window:
        return None
    table = _KEPT.get(owner)
    if table is None:
        table = _KEPT[owner] = {}
    key = (get_ident(), i)
    kept = table.get(key)
    state = tuple(counters.tolist())
    for fresh in (False, True):
        if fresh or (
            kept is None
            or kept.metric is not metric
            or kept.window is not metric._sorted
            or kept.ring is not metric._ring_score
            or kept.counters != state
            or kept.known != metric._labels
            or kept.k > k
            or kept.scores.shape[0] < k
            or kept.ys.dtype != y.dtype
        ):
            # (the labels as the peek takes them: a third one refused by name)
            labels = metric._labels_with(np.unique(y), y) if k else list(metric._labels)
            if not labels:
                return None
            if len(table) >= 256:
                table.clear()
            kept = table[key] = _Kept(metric, state, labels, max(k, 4096), y.dtype)
        labels = kept.labels
        zero, one = (y.dtype.type(v) for v in (labels[0], labels[-1]))
        if zero != labels[0] or one != labels[-1]:  # (not values of y's dtype)
            return None
        oldest, size = int(counters[0]), int(counters[1])
        ring = (metric._sorted, counters[3:5], metric._ring_score, metric._ring_label, oldest, size)
        rows = (kept.grown, kept.sizes, kept.gone, kept.gone_sizes, kept.scores, kept.ys)
        status, added = _grow(ring, rows, scores, y, zero, one, kept.k)
        if status == COUNTED:
            break
    else:  # (never: the rows just kept are the buffer's, of its labels)
        return None
    kept.pairs += added
    kept.k = k
    sizes, gone = kept.sizes, kept.gone_sizes
    return kept, int(counters[3] - gone[0] + sizes[0]), int(counters[4] - gone[1] + sizes[1])


def peeked_auc(metric, pairs: int, n0: int, n1: int, labels: list) -> float:
    """The AUC of a peek's counts: ``pairs`` (C) over the window's ``n0`` and ``n1``
    scores of each label number, oriented by the positive label of the metric with
    ``labels`` (NaN while a class is missing)."""
    if n0 == 0 or n1 == 0:
        return float("nan")
    if positive_with(metric, labels) == 0:
        pairs = 2 * n0 * n1 - pairs
    return pairs / (2 * n0 * n1)


def positive_with(metric, labels: list) -> int:
    """The positive class's label number of ``metric`` were its labels ``labels`` (as
    after an update that brings them; nothing changed)."""
    saved, metric._labels = metric._labels, labels
    try:
        return metric._positive_number()
    finally:
        metric._labels = saved
