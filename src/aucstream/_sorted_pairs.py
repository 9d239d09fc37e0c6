"""Pair counts over sorted scores, shared by :class:`~aucstream.metrics.PrequentialAUC`
and :class:`~aucstream.metrics.RollingAUC` (:mod:`aucstream._streaming_auc`).

- the compiled counts: :func:`_count` walks the smaller of two sorted arrays through
  the larger with galloping searches (:func:`_gallop`), O(k log(n / k)) comparisons;
  :func:`_across`, :func:`_within` and :func:`_by_class` count labelled sets;
- the sorted arrays' upkeep: :func:`_merged`, :func:`_insert_sorted`,
  :func:`_remove_sorted`, and the window's slide (:func:`_slide`,
  :func:`_peek_counts`);
- the partial AUC read from sorted runs: :func:`_tops` (the scores the region can
  reach, merged from the runs) and :func:`_partial_auc` (the walk down the ROC curve,
  :func:`_partial_area`);
- :class:`StreamRuns`: the pair count of a stream with each class's runs in one
  buffer, its chunks split by class as they come (:func:`_split_into`) and counted at
  the next read (:func:`_count_new`), what :func:`aucstream.evaluation.prequential`'s
  ``auc`` column keeps; many scores pending before the first count are counted
  without a sort (:func:`_count_in_span`).
"""

from __future__ import annotations

import math

import numpy as np

from ._kernels import bits_of_float, float_of_bits, jit


def _partial_auc(neg, pos, n_neg: int, n_pos: int, region, standardized: bool) -> float:
    r"""The partial AUC over ``region = (beta, alpha)`` (see :func:`aucstream.metrics.roc_auc`).

    ``neg`` and ``pos`` are the sorted scores of each class, or only their tops (every
    score at least the ``floor(beta n_-) + 1``-th largest negative, see :func:`_tops`);
    ``n_neg`` and ``n_pos`` are the full class sizes.
    """
    beta, alpha = region
    a = 0.0 if alpha is None else alpha * n_pos
    area = _partial_area(neg, pos, beta * n_neg, a) / (float(n_pos) * float(n_neg))
    if not standardized:
        return float(area)
    if alpha is None:  # McClish (1989), as scikit-learn's roc_auc_score(max_fpr=...)
        least = 0.5 * beta * beta
        return float(0.5 * (1.0 + (area - least) / (beta - least)))
    return float(area / ((1.0 - alpha) * beta))


def _merge_all(arrays: list[np.ndarray]) -> np.ndarray:
    """The sorted union of sorted arrays, smallest first (linear for geometric sizes)."""
    arrays = sorted((a for a in arrays if a.size), key=len)
    if not arrays:
        return np.empty(0)
    out = arrays[0]
    for a in arrays[1:]:
        out = _merged(out, a)
    return out


def _tops(neg_runs: list[np.ndarray], pos_runs: list[np.ndarray], n_neg: int, beta: float):
    """The scores of each class at least the ``floor(beta n_-) + 1``-th largest negative,
    merged from sorted runs: all the partial AUC over FPR <= beta reads.

    A score below it lies past FPR = beta on the ROC curve. Costs O(r log n) to find
    it (r the rank) and O(size of the tops) to merge them; nothing is re-sorted.
    """
    r = min(n_neg, math.floor(beta * n_neg) + 1)
    if len(neg_runs) == 1:
        threshold = neg_runs[0][-r]
    else:  # the r largest negatives, from the smallest run up
        top = np.empty(0)
        for run in sorted(neg_runs, key=len):
            top = _merged(top, run[-r:])[-r:]
        threshold = top[-r]
    return tuple(
        _merge_all([run[np.searchsorted(run, threshold, "left") :] for run in runs])
        for runs in (neg_runs, pos_runs)
    )


@jit
def _gallop(a, lo, n, x, right):
    """The first position p >= lo of sorted ``a[:n]`` with ``a[p] > x`` (right) or ``>= x``.

    Steps 1, 2, 4, ... from ``lo`` then bisects: O(log(p - lo)) comparisons, so a sorted
    run of searches through ``a`` costs O(k log(n / k)) in all (``a[:lo]`` must precede
    ``x``).
    """
    hi, step = lo, 1
    while hi < n and (a[hi] < x or (right and a[hi] == x)):
        lo, hi, step = hi + 1, hi + step, 2 * step
    hi = min(hi, n)
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x or (right and a[mid] == x):
            lo = mid + 1
        else:
            hi = mid
    return lo


@jit
def _rank_sum(hay, needles):
    r""":math:`\sum_x 2\,\#\{z < x\} + \#\{z = x\}` over sorted ``needles`` x, sorted ``hay`` z."""
    n, lo, hi, total = hay.shape[0], 0, 0, 0
    for x in needles:
        lo = _gallop(hay, lo, n, x, False)
        # past the scores equal to x: none (one comparison) unless x is tied in hay
        hi = lo if lo == n or hay[lo] != x else _gallop(hay, max(lo, hi), n, x, True)
        total += lo + hi
    return total


@jit
def _count(ones, zeros):
    r""":math:`C` over the pairs (one, zero) of two sorted arrays (ones play the positives).

    The smaller array is searched in the larger one; a pair counts 2 in total from its two
    sides, so :math:`C(a, b) = 2|a||b| - C(b, a)`.
    """
    if ones.shape[0] <= zeros.shape[0]:
        return _rank_sum(zeros, ones)
    return 2 * ones.shape[0] * zeros.shape[0] - _rank_sum(ones, zeros)


@jit
def _across(a_sorted, a_sizes, b_sorted, b_sizes):
    """C over the pairs across two labelled sets, each given as sorted scores per class."""
    return _count(a_sorted[1, : a_sizes[1]], b_sorted[0, : b_sizes[0]]) + _count(
        b_sorted[1, : b_sizes[1]], a_sorted[0, : a_sizes[0]]
    )


@jit
def _within(sorted_scores, sizes):
    """C over the pairs inside a labelled set given as sorted scores per class."""
    return _count(sorted_scores[1, : sizes[1]], sorted_scores[0, : sizes[0]])


@jit
def _by_class(scores, numbers):
    """Each class's scores sorted, as ``(sorted_scores, sizes)`` like the window's."""
    sizes = np.zeros(2, dtype=np.int64)
    sorted_scores = np.empty((2, scores.shape[0]))
    for t in range(scores.shape[0]):
        j = numbers[t]
        sorted_scores[j, sizes[j]] = scores[t]
        sizes[j] += 1
    for j in range(2):
        sorted_scores[j, : sizes[j]] = np.sort(sorted_scores[j, : sizes[j]])
    return sorted_scores, sizes


@jit
def _remove_sorted(a, n, gone):
    """Remove the sorted multiset ``gone`` from sorted ``a[:n]``; the new length."""
    if gone.shape[0] == 0:
        return n
    write, p = _gallop(a, 0, n, gone[0], False), 0
    for read in range(write, n):
        if p < gone.shape[0] and a[read] == gone[p]:
            p += 1
        else:
            a[write] = a[read]
            write += 1
    return write


@jit
def _insert_sorted(a, n, new):
    """Merge sorted ``new`` into sorted ``a[:n]`` (room follows), from the top; the new length.

    Branch-free: each step writes the larger of the two tops and moves past it by a
    comparison's 0 or 1 (the branch of an interleaved merge is a coin toss to a
    predictor); it stops once ``new`` is placed, the rest of ``a`` being in place.
    """
    i, p, write = n - 1, new.shape[0] - 1, n + new.shape[0] - 1
    while p >= 0 and i >= 0:
        x, y = a[i], new[p]
        top = x > y
        a[write] = x if top else y
        i -= top
        p -= not top
        write -= 1
    while p >= 0:
        a[write] = new[p]
        p -= 1
        write -= 1
    return n + new.shape[0]


@jit
def _merged(a, b):
    """The sorted union of two sorted arrays."""
    out = np.empty(a.shape[0] + b.shape[0])
    out[: a.shape[0]] = a
    _insert_sorted(out, a.shape[0], b)
    return out


@jit
def _peek_counts(ring_score, ring_label, sorted_scores, counters, numbers, scores):
    """``(C, size of class 0, of 1)`` of the window after :func:`_slide` over ``scores``
    (at most ``window`` of them), computed without changing anything."""
    w, k = ring_score.shape[0], scores.shape[0]
    start, size, pairs = counters[0], counters[1], counters[2]
    sizes = counters[3:5]
    at = (start + np.arange(max(0, size + k - w))) % w  # the departing pairs' positions
    gone, gone_sizes = _by_class(ring_score[at], ring_label[at])
    new, new_sizes = _by_class(scores, numbers)
    # C(W') = C(W) - C(D, W) + C(D) + C(A, W) - C(A, D) + C(A)
    pairs += _within(gone, gone_sizes) - _across(gone, gone_sizes, sorted_scores, sizes)
    pairs += _across(new, new_sizes, sorted_scores, sizes) + _within(new, new_sizes)
    pairs -= _across(new, new_sizes, gone, gone_sizes)
    n0 = sizes[0] - gone_sizes[0] + new_sizes[0]
    n1 = sizes[1] - gone_sizes[1] + new_sizes[1]
    return pairs, n0, n1


@jit
def _down(a, gone, new, r, t, out):
    """Walk the multiset ``(a - gone) + new`` (each sorted ascending, ``gone`` contained
    in ``a``) from its largest score down, over its ``r`` largest scores and every
    further one at least ``t``: ``(count, the last score walked)`` (-inf when none).
    With a non-empty ``out`` (of that count), the scores are written into it
    ascending. A score of ``a`` equal to the largest score still to remove is the one
    removed (equal scores are interchangeable in a multiset).

    One loop with its pointers in locals: the step written as a helper returning them
    (``(score, i, g, q)``) made the walk about 40 times slower."""
    i, g, q = a.shape[0] - 1, gone.shape[0] - 1, new.shape[0] - 1
    fill, m, last = out.shape[0] > 0, 0, -np.inf
    while True:
        while i >= 0 and g >= 0 and a[i] == gone[g]:
            i -= 1
            g -= 1
        if i >= 0 and (q < 0 or a[i] >= new[q]):
            x = a[i]
            i -= 1
        elif q >= 0:
            x = new[q]
            q -= 1
        else:
            return m, last
        if m >= r and x < t:
            return m, last
        if fill:
            out[out.shape[0] - 1 - m] = x
        m += 1
        last = x


@jit
def _sorted_at_least(values, numbers, c, b):
    """The ``values`` of label number ``c`` at least ``b``, sorted."""
    m = 0
    for i in range(values.shape[0]):
        m += numbers[i] == c and values[i] >= b
    out = np.empty(m)
    m = 0
    for i in range(values.shape[0]):
        if numbers[i] == c and values[i] >= b:
            out[m] = values[i]
            m += 1
    out.sort()
    return out


@jit
def _peek_tops(ring_score, ring_label, sorted_scores, counters, numbers, scores, neg, beta):
    """What the partial AUC at FPR <= ``beta`` reads after :func:`_slide` over
    ``scores`` (label numbers ``numbers``; ``neg`` the negative class's number),
    computed without changing anything: ``(negative tops, positive tops, n_neg,
    n_pos)``, the tops being each class's scores at least the ``floor(beta n_neg) +
    1``-th largest negative t, ascending: the arrays :func:`_tops` gives from the
    window's sorted scores after the slide, so the same partial AUC. Each class's
    scores are walked from the top, the departing ones left out and the arriving ones
    merged in. Only departing and arriving scores of at least b, the ``(r + g)``-th
    largest negative of the window before (r the rank of t, g the departing
    negatives), are sorted: t is at least b (the window after keeps the ``r + g``
    largest negatives but g). O(departing + arriving + tops), no copy of the window.
    Empty tops when a class is missing."""
    w, k = ring_score.shape[0], scores.shape[0]
    start, size = counters[0], counters[1]
    sizes = counters[3:5]
    at = (start + np.arange(max(0, size + k - w))) % w  # the departing pairs' positions
    gone_scores, gone_numbers = ring_score[at], ring_label[at]
    gone_neg = 0
    for j in range(at.shape[0]):
        gone_neg += gone_numbers[j] == neg
    new_neg = 0
    for j in range(k):
        new_neg += numbers[j] == neg
    pos = 1 - neg
    n_neg = sizes[neg] - gone_neg + new_neg
    n_pos = sizes[pos] - (at.shape[0] - gone_neg) + (k - new_neg)
    if n_neg == 0 or n_pos == 0:
        return np.empty(0), np.empty(0), n_neg, n_pos
    r = min(n_neg, int(np.floor(beta * n_neg)) + 1)
    b = -np.inf
    if r + gone_neg <= sizes[neg]:
        b = sorted_scores[neg, sizes[neg] - r - gone_neg]
    neg_top, pos_top = _tops_after(
        sorted_scores[neg, : sizes[neg]],
        sorted_scores[pos, : sizes[pos]],
        _sorted_at_least(gone_scores, gone_numbers, neg, b),
        _sorted_at_least(gone_scores, gone_numbers, pos, b),
        _sorted_at_least(scores, numbers, neg, b),
        _sorted_at_least(scores, numbers, pos, b),
        r,
    )
    return neg_top, pos_top, n_neg, n_pos


@jit
def _tops_after(neg, pos, gone_neg, gone_pos, new_neg, new_pos, r):
    """The tops (:func:`_tops`) of the negatives ``neg - gone_neg + new_neg`` and the
    positives ``pos - gone_pos + new_pos`` (each sorted ascending; what is gone
    contained in what was, and the scores of ``gone`` and ``new`` below the tops may be
    left out), at the ``r``-th largest negative: ``(negative tops, positive tops)``,
    ascending."""
    none = np.empty(0)
    t = _down(neg, gone_neg, new_neg, r, np.inf, none)[1]
    neg_top = np.empty(_down(neg, gone_neg, new_neg, 0, t, none)[0])
    _down(neg, gone_neg, new_neg, 0, t, neg_top)
    pos_top = np.empty(_down(pos, gone_pos, new_pos, 0, t, none)[0])
    _down(pos, gone_pos, new_pos, 0, t, pos_top)
    return neg_top, pos_top


@jit
def _slide(ring_score, ring_label, sorted_scores, counters, numbers, scores):
    """Move the window over ``scores`` (at most ``window`` of them) and their label numbers.

    ``counters`` = [oldest ring position, pairs in the window, C, size of class 0, of 1].
    """
    w, k = ring_score.shape[0], scores.shape[0]
    start, size, pairs = counters[0], counters[1], counters[2]
    sizes = counters[3:5]
    at = (start + np.arange(max(0, size + k - w))) % w  # the departing pairs' positions
    gone, gone_sizes = _by_class(ring_score[at], ring_label[at])
    new, new_sizes = _by_class(scores, numbers)
    # C(R) = C(W) - C(D, W) + C(D), then C(W') = C(R) + C(A, R) + C(A)
    pairs += _within(gone, gone_sizes)
    pairs -= _across(gone, gone_sizes, sorted_scores, sizes)
    for j in range(2):
        sizes[j] = _remove_sorted(sorted_scores[j], sizes[j], gone[j, : gone_sizes[j]])
    pairs += _within(new, new_sizes)
    pairs += _across(new, new_sizes, sorted_scores, sizes)
    for j in range(2):
        sizes[j] = _insert_sorted(sorted_scores[j], sizes[j], new[j, : new_sizes[j]])
    start, size = (start + at.shape[0]) % w, size - at.shape[0]
    at = (start + size + np.arange(k)) % w
    ring_score[at], ring_label[at] = scores, numbers
    counters[0], counters[1], counters[2] = start, size + k, pairs


@jit
def _partial_area(neg, pos, m, a):
    r"""The area, in pair units, of the ROC curve above ``TPR n_+ = a`` left of ``FPR n_- = m``.

    ``neg`` and ``pos`` are sorted (ascending) scores of the two classes: all of them,
    or every score from some negative up (the rest lies right of ``m``). Walking the
    distinct scores from the top, a score with :math:`f` negatives and :math:`t`
    positives moves the curve, in counts, from :math:`(F, T)` to
    :math:`(F + f, T + t)` in a straight line (ties are a diagonal segment); the area of
    :math:`\max(T(x) - a, 0)` over :math:`x \le m` is an integer sum over the segments
    wholly inside the region (kept as integers: ``f (2T + t)`` and ``f``) plus at most
    two clipped segments in floating point. O(number of scores read).
    """
    i, j = neg.shape[0] - 1, pos.shape[0] - 1
    fp, tp = 0, 0  # negatives and positives above the current score
    twice, width, part = 0, 0, 0.0
    while i >= 0 and fp < m:
        v = neg[i]
        if j >= 0 and pos[j] > v:
            v = pos[j]
        f = 0
        while i >= 0 and neg[i] == v:
            f += 1
            i -= 1
        t = 0
        while j >= 0 and pos[j] == v:
            t += 1
            j -= 1
        top = tp + t
        if f > 0 and top > a:
            if fp + f <= m and tp >= a:  # wholly inside: an integer area, twice
                twice += f * (2 * tp + t)
                width += f
            else:
                lo, y_lo = float(fp), float(tp)
                if tp < a:  # the segment crosses TPR = min_tpr (so t > 0)
                    lo = fp + (a - tp) * f / t
                    y_lo = a
                hi, y_hi = float(fp + f), float(top)
                if fp + f > m:  # the segment crosses FPR = max_fpr
                    hi = m
                    y_hi = tp + t * (m - fp) / f
                if hi > lo:
                    part += (hi - lo) * (0.5 * (y_lo + y_hi) - a)
        fp += f
        tp = top
    return 0.5 * twice - a * width + part


def _cell_index(edges: np.ndarray, x: np.ndarray) -> np.ndarray:
    r"""The cell of each ``x`` among the edges: :math:`2\,\#\{e < x\} + \#\{e = x\}`.

    Even cells are the open intervals between edges, odd cells the edges themselves.
    """
    return np.searchsorted(edges, x, "left") + np.searchsorted(edges, x, "right")


def _cell_pair_count(ones: np.ndarray, zeros: np.ndarray) -> int:
    r""":math:`C` over pairs of two histograms on the same ordered cells (same cell: a tie)."""
    return int(np.dot(ones, 2 * np.cumsum(zeros) - zeros))


def _compact(runs: list[np.ndarray]) -> None:
    """Merge the last runs while the one before the last is at most twice the last.

    Afterwards every run is more than twice the next, so a class of n scores has at most
    log2(n) + 1 runs, and a score is moved O(log n) times in all (amortized).
    """
    while len(runs) > 1 and runs[-2].size <= 2 * runs[-1].size:
        last = runs.pop()
        runs[-1] = _merged(runs[-1], last)


# ------------------------------------------------ a first chunk, counted without a sort
#: A first chunk of at least this many scores is counted unsorted (:func:`_count_unsorted`)
#: and sorted only when another chunk comes (a prequential run of one read at the end
#: never sorts): below it, sorting costs about what the buckets do.
_UNSORTED_FROM = 8192
#: The most scores of the smaller class a bucket compares one by one (more: the bucket
#: is sorted and searched, :func:`_bucketed_rank_sum`).
_BUCKET_MOST = 32
#: Buckets per score of the smaller class (a9a's 32k scores: 4 counted in about half
#: the time of 1, 16 no faster: the counts outgrow the cache), and at most.
_BUCKETS_PER_SCORE = 4
_MAX_BUCKETS = 1 << 18
#: Scores counted unsorted at most, less one (the buckets' counts are int32).
_INT32_LIMIT = 2**31 - 1
#: Scores of the larger class whose buckets are computed at a time, in a loop of their
#: own (:func:`_bucketed_rank_sum`): int32 conversions vectorize where the lookups do
#: not, and the block's buckets stay in the L1 cache until they are read.
_NEEDLE_BLOCK = 256


@jit
def _prefix_sums(counts):
    """Replace ``counts`` (int32, of even length) by its running sums, in place.

    Two halves summed at once and the first's total then added to the second: two
    chains of additions where one would wait on each previous sum.
    """
    half = counts.shape[0] // 2
    a, b = counts[:half], counts[half:]
    run_a = run_b = np.int32(0)
    for i in range(half):
        run_a += a[i]
        a[i] = run_a
        run_b += b[i]
        b[i] = run_b
    for i in range(half):
        b[i] += run_a


@jit
def _rank_in_bucket(spread, start, stop, x):
    r""":math:`\sum_z 2\,[x > z] + [x = z]` over ``spread[start:stop]``."""
    total = 0
    for j in range(start, stop):
        z = spread[j]
        total += 2 * (x > z) + (x == z)
    return total


@jit
def _bucketed_rank_sum(hay, needles, lo, scale, buckets):
    r""":func:`_rank_sum` of unsorted ``needles`` against unsorted ``hay`` (each x
    adds :math:`2\,\#\{z < x\} + \#\{z = x\}`).

    A score v falls in bucket :math:`\min(\lfloor (v - lo)\, scale \rfloor,
    buckets - 1)`: each step is monotone under IEEE rounding, so a score in a lower
    bucket is smaller and equal scores share a bucket. ``hay`` is scattered by bucket
    (a counting sort, no comparison); each needle then adds twice the hay of the
    buckets below its own and compares itself with the few of its own.

    Each needle compares itself with the score at its bucket's start whatever the
    bucket holds, without a branch (whether a bucket holds 0, 1 or 2 scores is a coin
    toss to a predictor where the classes mix): when the bucket is empty, that score
    lies in a higher bucket, so it is larger and adds nothing, and past the last
    score a sentinel (+inf) does the same. Only a bucket of two or more scores
    branches, to compare the rest (:func:`_rank_in_bucket`). A bucket of more than
    :data:`_BUCKET_MOST` scores (ties: a stream of repeated rows; a cluster) is
    sorted in place, and a needle in it finds its place by two binary searches: the
    count degrades toward a sort where the scores crowd, and only there (before,
    such a bucket declined the whole count, which then sorted every score).
    """
    top = np.int32(buckets - 1)
    k = hay.shape[0]
    # below[b + 2] counts bucket b, then (summed) the buckets up to b; int32 counts
    # and buckets (the caller declines 2**31 scores or more): half the cache of int64
    # ones, and a conversion to int32 vectorizes (the needles'); one more slot when
    # buckets is odd (_prefix_sums's halves). Each hay's bucket is computed twice,
    # here and as it is scattered: cheaper than an array of them written and read.
    below = np.zeros(buckets + 2 + (buckets & 1), dtype=np.int32)
    for i in range(k):  # (unsigned indices: no wraparound of negative ones to check)
        below[np.uint32(min(np.int32((hay[i] - lo) * scale), top)) + np.uint32(2)] += 1
    most = np.int32(0)
    for count in below:
        most = max(most, count)
    _prefix_sums(below[2:])
    # below[b + 1], the start of bucket b, is its filling position: once filled, it
    # is the bucket's end, so below[b] and below[b + 1] bound bucket b (no copy)
    spread = np.empty(k + 1)
    spread[k] = math.inf
    for i in range(k):
        b = np.uint32(min(np.int32((hay[i] - lo) * scale), top)) + np.uint32(1)
        spread[below[b]] = hay[i]
        below[b] += 1
    if most > _BUCKET_MOST:  # the crowded buckets sorted (see the docstring)
        for b in range(buckets):
            if below[b + 1] - below[b] > _BUCKET_MOST:
                spread[below[b] : below[b + 1]].sort()
    total = 0
    one = np.uint64(1)
    at = np.empty(_NEEDLE_BLOCK, dtype=np.int32)
    for first in range(0, needles.shape[0], _NEEDLE_BLOCK):
        block = needles[first : first + _NEEDLE_BLOCK]
        for i in range(block.shape[0]):
            at[i] = min(np.int32((block[i] - lo) * scale), top)
        for i in range(block.shape[0]):
            b = np.uint64(np.uint32(at[i]))
            start = np.uint64(np.uint32(below[b]))
            stop = np.uint64(np.uint32(below[b + one]))
            x, z = block[i], spread[start]
            total += 2 * np.int64(start) + 2 * (x > z) + (x == z)
            if stop - start > np.uint64(_BUCKET_MOST):  # (sorted)
                rest = spread[start + one : stop]
                total += np.searchsorted(rest, x, "left") + np.searchsorted(rest, x, "right")
            elif stop - start > one:
                total += _rank_in_bucket(spread, start + one, stop, x)
    return total


@jit
def _count_unsorted(ones, zeros):
    """:func:`_count` of two unsorted arrays of finite scores, without sorting them
    (:func:`_bucketed_rank_sum`, four buckets a score of the smaller); -1
    when their range does not make buckets (it overflows) or they hold 2**31 - 1
    scores or more: then sort and :func:`_count`."""
    if ones.shape[0] == 0 or zeros.shape[0] == 0:
        return 0
    lo = hi = ones[0]
    for v in ones:
        lo = min(lo, v)
        hi = max(hi, v)
    for v in zeros:
        lo = min(lo, v)
        hi = max(hi, v)
    return _count_in_span(ones, zeros, lo, hi)


@jit
def _count_in_span(ones, zeros, lo, hi):
    """:func:`_count_unsorted` given the least and the largest of all the scores
    (:func:`_split_into` finds them as it splits a chunk)."""
    k1, k0 = ones.shape[0], zeros.shape[0]
    if k1 == 0 or k0 == 0:
        return 0
    if k0 + k1 >= _INT32_LIMIT:  # (the buckets count in int32)
        return -1
    buckets = min(_BUCKETS_PER_SCORE * min(k0, k1), _MAX_BUCKETS)
    span = hi - lo
    if not math.isfinite(span):  # (else (hi - lo) * 0 is NaN: no bucket)
        return -1
    scale = buckets / span if span > 0.0 else 0.0
    if not math.isfinite(scale):
        return -1
    if k0 <= k1:
        return _bucketed_rank_sum(zeros, ones, lo, scale, buckets)
    twice = _bucketed_rank_sum(ones, zeros, lo, scale, buckets)
    return -1 if twice < 0 else 2 * k0 * k1 - twice


# ------------------------------------------------- the runs of a stream, in one buffer
#: Runs a class can hold: each run is more than twice the next (:func:`_push_run`), so
#: 62 runs would hold more than 2**62 scores (one more slot holds a new run before it
#: is merged).
_MAX_RUNS = 62


#: The bits of a float64 but its sign, and those of its exponent (all set: not finite).
_MAGNITUDE = 0x7FFF_FFFF_FFFF_FFFF
_EXPONENT = 0x7FF0_0000_0000_0000


@jit
def _span_of(scores, span):
    """Write the least and the largest of ``scores`` into ``span``; False when a score
    is not finite (then ``span`` is left as it was).

    Compared as integers, whose minimum vectorizes where a float one (without
    finite-math flags) does not: a float64's bits, with those after the sign flipped
    when the sign is set, order as the float does (-0.0 just below 0.0), and the same
    flip undoes it. A score is not finite when its exponent's bits are all set.
    """
    lo, hi, bad = _MAGNITUDE, -_MAGNITUDE - 1, False
    for i in range(scores.shape[0]):
        bits = bits_of_float(scores[i])
        key = bits ^ ((bits >> 63) & _MAGNITUDE)
        lo = min(lo, key)
        hi = max(hi, key)
        bad |= (bits & _EXPONENT) == _EXPONENT
    if bad:
        return False
    span[0] = float_of_bits(lo ^ ((lo >> 63) & _MAGNITUDE))
    span[1] = float_of_bits(hi ^ ((hi >> 63) & _MAGNITUDE))
    return True


@jit
def _split_into(buf0, buf1, t0, t1, scores, positive, span):
    """Write each class's scores (unsorted) from ``buf0[t0]`` and ``buf1[t1]`` on; the
    number of positives, or -1 - i when ``scores[i]`` is the first that is not finite
    (then nothing is written). ``span`` receives the least and the largest score (what
    :func:`_count_in_span` needs).

    Two passes, faster than one loop doing both: the span and the finiteness
    (:func:`_span_of`, vectorized), then the split, without a branch on the label:
    each score is written after both classes' new scores and only its class's count
    moves past it (the other class's slot is written again by its next score; each
    buffer has room for its class's new scores and one slot more, :meth:`StreamRuns.add`).
    """
    if not _span_of(scores, span):
        for i in range(scores.shape[0]):
            if not math.isfinite(scores[i]):
                return -1 - i
    # unsigned positions: a signed index costs each write numba's wraparound (a
    # negative one counts from the end)
    at0, at1 = np.uint64(t0), np.uint64(t1)
    for i in range(scores.shape[0]):
        s = scores[i]
        is_positive = np.uint64(positive[i])
        buf1[at1] = s
        buf0[at0] = s
        at1 += is_positive
        at0 += np.uint64(1) - is_positive
    return np.int64(at1 - np.uint64(t1))


@jit
def _push_run(buf, m, k):
    """Make the ``k`` sorted scores after the runs of ``buf`` a run, then merge the
    last two runs while the one before the last is at most twice the last (so every
    run is more than twice the next, and a score is moved O(log n) times in all).

    ``m`` = [number of runs r, end of run 1, ..., end of run r] (run i starts where
    run i - 1 ends, run 1 at 0; ``m[r]`` is the class's size, 0 when r = 0).
    """
    if k == 0:
        return
    r = m[0]
    m[r + 1] = m[r] + k
    r += 1
    while r >= 2:
        start = m[r - 2] if r > 2 else 0
        mid, end = m[r - 1], m[r]
        if mid - start > 2 * (end - mid):
            break
        _insert_sorted(buf[start:end], mid - start, buf[mid:end].copy())
        m[r - 1] = end
        r -= 1
    m[0] = r


@jit
def _count_new(buf0, buf1, meta, k0, k1):
    """C over the pairs the new sorted scores (``k0`` after the runs of ``buf0``,
    ``k1`` after those of ``buf1``) make with each other and with the runs, the new
    ones playing class 1 against class 0; then each class's new scores made a run."""
    t0, t1 = meta[0, meta[0, 0]], meta[1, meta[1, 0]]
    zeros, ones = buf0[t0 : t0 + k0], buf1[t1 : t1 + k1]
    pairs = _count(ones, zeros)
    start = 0
    for i in range(1, meta[0, 0] + 1):
        pairs += _count(ones, buf0[start : meta[0, i]])
        start = meta[0, i]
    start = 0
    for i in range(1, meta[1, 0] + 1):
        pairs += _count(buf1[start : meta[1, i]], zeros)
        start = meta[1, i]
    _push_run(buf0, meta[0], k0)
    _push_run(buf1, meta[1], k1)
    return pairs


class StreamRuns:
    """The exact pair count :math:`C` of a labelled stream, each class's scores kept as
    sorted runs of geometrically shrinking sizes in one growing buffer per class.

    What :class:`~aucstream.metrics.PrequentialAUC` counts, in a few compiled calls per
    read and one sort per class (no list of runs to walk in Python): ``add`` splits a
    chunk's scores by class after the runs (pending, not counted); a read
    (:meth:`auc`, :attr:`pairs`, :meth:`settle`) sorts the pending scores of each
    class, counts them against each other and the other class's runs by galloping
    searches (:func:`_count`) and merges them into the runs as :func:`_compact` merges
    them. ``auc()`` is :math:`C / (2 n_+ n_-)`, the float ``PrequentialAUC.get()``
    gives from the same integer count. Memory: 8 bytes a score, up to twice that as
    the buffers grow by doubling.

    The count waits for a read because one count of many scores costs less than
    several of fewer: prequential's default reads once, at the end, and its updates
    come in blocks of at most 2**16 rows. When nothing was counted before and
    :data:`_UNSORTED_FROM` scores or more are pending, they are counted without a
    sort (:func:`_count_in_span`, buckets) and left unsorted, each class one run to be
    (``unsorted``); the next count (or :meth:`settle`) sorts them first.
    """

    def __init__(self) -> None:
        self.buffers = [np.empty(1024), np.empty(1024)]
        self.meta = np.zeros((2, _MAX_RUNS + 2), dtype=np.int64)  # see _push_run
        self.span = np.empty(2)  # the least and the largest score of the last chunk
        self._pairs = 0
        self.n0 = self.n1 = 0  # (the class sizes of meta, as Python ints)
        self.p0 = self.p1 = 0  # scores of each class after the runs, not yet counted
        self.lo, self.hi = math.inf, -math.inf  # the span of the pending scores
        self.unsorted = False  # each class's scores one run still to sort (settle)

    @property
    def pairs(self) -> int:
        """:math:`C` over every pair of the scores added (counted now if need be)."""
        self.count()
        return self._pairs

    def settle(self) -> None:
        """Count the pending scores, then sort those counted unsorted (each class one
        run)."""
        self.count()
        self._sort_unsorted()

    def _sort_unsorted(self) -> None:
        if not self.unsorted:
            return
        for j, size in ((0, self.n0), (1, self.n1)):
            self.buffers[j][:size].sort()
            if size:
                self.meta[j, 0], self.meta[j, 1] = 1, size
        self.unsorted = False

    def sizes(self) -> tuple[int, int]:
        """The number of scores of class 0 (negatives) and of class 1 (positives)."""
        return self.n0 + self.p0, self.n1 + self.p1

    def add(self, positive: np.ndarray, scores: np.ndarray) -> None:
        """Add the pairs of a chunk (boolean labels, float64 scores; contiguous),
        counted at the next read; a score that is not finite is refused and nothing
        is added."""
        n = scores.shape[0]
        at0, at1, buffers = self.n0 + self.p0, self.n1 + self.p1, self.buffers
        # room for each class's new scores and one slot more (_split_into), not for
        # the whole chunk in both: fewer and smaller buffers made as they grow, whose
        # fresh memory's page faults were most of a long stream's adds (measured in
        # docs/results/prequential.md, "the held rows in one block")
        k1 = int(np.count_nonzero(positive))
        for j, size, need in ((0, at0, at0 + n - k1 + 1), (1, at1, at1 + k1 + 1)):
            if need > buffers[j].shape[0]:
                grown = np.empty(max(2 * buffers[j].shape[0], need))
                grown[:size] = buffers[j][:size]
                buffers[j] = grown
        span = self.span
        written = int(_split_into(buffers[0], buffers[1], at0, at1, scores, positive, span))
        if written < 0:
            i = -1 - written
            raise ValueError(f"score {i} = {scores[i]} is not finite (nothing was counted)")
        if n:
            self.p0, self.p1 = self.p0 + n - k1, self.p1 + k1
            self.lo, self.hi = min(self.lo, float(span[0])), max(self.hi, float(span[1]))

    def count(self) -> None:
        """Count the pairs the pending scores make with each other and with the runs."""
        k0, k1 = self.p0, self.p1
        if k0 == k1 == 0:
            return
        n0, n1 = self.n0, self.n1
        buf0, buf1 = self.buffers
        self.p0 = self.p1 = 0
        lo, hi = self.lo, self.hi
        self.lo, self.hi = math.inf, -math.inf
        if k0 + k1 >= _UNSORTED_FROM and n0 == n1 == 0:  # (k0 and k1 after empty runs)
            pairs = int(_count_in_span(buf1[:k1], buf0[:k0], lo, hi))
            if pairs >= 0:
                self._pairs, self.n0, self.n1, self.unsorted = pairs, k0, k1, True
                return
        self._sort_unsorted()
        buf0[n0 : n0 + k0].sort()
        buf1[n1 : n1 + k1].sort()
        self._pairs += int(_count_new(buf0, buf1, self.meta, k0, k1))
        self.n0, self.n1 = n0 + k0, n1 + k1

    def auc(self) -> float:
        """The AUC of the pairs added, ties one half; NaN while a class is missing."""
        self.count()
        n0, n1 = self.n0, self.n1
        if n0 == 0 or n1 == 0:
            return math.nan
        return self._pairs / (2 * n0 * n1)
