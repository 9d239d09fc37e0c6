"""The buffered runs behind prequential's ``auc`` column (``_sorted_pairs.StreamRuns``)
and the fused probability sums (``_stream_metrics.update_together``).

``StreamRuns`` gives, after every chunk of hypothesis-drawn streams (few distinct
scores: many ties; chunk sizes from 0 up, single scores included), the very float
``PrequentialAUC.get()`` gives and the exact rational AUC rounded once; its runs stay
sorted and each more than twice the next; a large first chunk is counted without a
sort (``_count_unsorted``, buckets; a crowded bucket sorted and searched) to the same
count, or falls back to the sort when its range overflows: buckets of 0, 1, 2, up to
the most scores compared one by one and more, ties within them and scores a step
apart across their edges, -0.0 against 0.0; the split names the first score that is
not finite (NaN of either sign, the infinities) and spans the rest exactly.
``update_together`` feeds the log-loss, Brier score and positive rate what their own
``update`` would, bit for bit.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aucstream._sorted_pairs import (
    _BUCKET_MOST,
    _BUCKETS_PER_SCORE,
    _UNSORTED_FROM,
    StreamRuns,
    _count,
    _count_unsorted,
    _split_into,
)
from aucstream._stream_metrics import (
    StreamingBrier,
    StreamingECE,
    StreamingLogLoss,
    StreamingPositiveRate,
    update_together,
)
from aucstream._streaming_auc import PrequentialAUC


def exact_auc(positive: np.ndarray, scores: np.ndarray) -> float:
    pos, neg = scores[positive], scores[~positive]
    if not pos.size or not neg.size:
        return math.nan
    twice = sum(2 * int(np.sum(p > neg)) + int(np.sum(p == neg)) for p in pos)
    return float(Fraction(twice, 2 * pos.size * neg.size))


def check_runs(runs: StreamRuns) -> None:
    runs.settle()  # (a first chunk counted unsorted: sorted now, as the next add would)
    assert not runs.unsorted
    for j in (0, 1):
        ends = runs.meta[j, 1 : runs.meta[j, 0] + 1]
        starts = np.r_[0, ends[:-1]]
        sizes = ends - starts
        assert np.all(sizes > 0) and np.all(sizes[:-1] > 2 * sizes[1:])
        for start, end in zip(starts, ends):
            assert np.all(np.diff(runs.buffers[j][start:end]) >= 0)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    levels=st.integers(1, 6),
    sizes=st.lists(st.integers(0, 300), min_size=1, max_size=25),
)
def test_equals_prequential_auc_and_the_exact_value(seed, levels, sizes):
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    scores = rng.integers(0, levels, n).astype(np.float64) / levels
    positive = rng.random(n) < rng.random()
    runs, reference = StreamRuns(), PrequentialAUC(pos_label=True)
    start = 0
    for size in sizes:
        part = slice(start, start + size)
        runs.add(positive[part], scores[part])
        reference.update(positive[part], scores[part])
        start += size
        got, want = runs.auc(), reference.get()
        assert (math.isnan(got) and math.isnan(want)) or got == want
        assert runs.auc() == exact_auc(positive[:start], scores[:start]) or math.isnan(got)
        assert runs.sizes() == (int((~positive[:start]).sum()), int(positive[:start].sum()))
        check_runs(runs)


def test_chunking_does_not_change_the_value_and_buffers_grow():
    rng = np.random.default_rng(1)
    scores, positive = rng.normal(size=5000), rng.random(5000) < 0.3
    values = []
    for size in (1, 7, 1000, 5000):
        runs = StreamRuns()
        for start in range(0, 5000, size):
            runs.add(positive[start : start + size], scores[start : start + size])
        check_runs(runs)
        values.append(runs.auc())
    assert len(set(values)) == 1 and values[0] == exact_auc(positive, scores)


def test_each_buffer_grows_to_its_own_class_only():
    """A chunk makes room for each class's new scores (and one slot), not for the whole
    chunk in both buffers: a rare class's buffer stays about as large as the class,
    through chunks of one class only, empty chunks and reads between adds."""
    rng = np.random.default_rng(2)
    runs, seen_pos, seen_scores = StreamRuns(), [], []
    for k in range(40):
        size = int(rng.choice([0, 1, 900, 5000]))
        positive = rng.random(size) < (0.0 if k % 7 == 3 else 1.0 if k % 11 == 5 else 0.02)
        scores = rng.normal(size=size) + positive
        runs.add(positive, scores)
        seen_pos.append(positive)
        seen_scores.append(scores)
        n0, n1 = runs.sizes()
        for size_of_class, buffer in ((n0, runs.buffers[0]), (n1, runs.buffers[1])):
            assert size_of_class < buffer.shape[0] <= max(1024, 2 * size_of_class + 2)
        if k % 9 == 8:
            all_pos, all_scores = np.concatenate(seen_pos), np.concatenate(seen_scores)
            assert runs.auc() == exact_auc(all_pos, all_scores)
            check_runs(runs)
    assert runs.auc() == exact_auc(np.concatenate(seen_pos), np.concatenate(seen_scores))


def test_a_score_not_finite_is_refused_and_nothing_counted():
    runs = StreamRuns()
    runs.add(np.array([True, False]), np.array([0.5, 0.1]))
    with pytest.raises(ValueError, match="score 1 = nan is not finite"):
        runs.add(np.array([False, True, False]), np.array([0.2, np.nan, 0.3]))
    assert runs.sizes() == (1, 1) and runs.pairs == 2 and runs.auc() == 1.0
    runs.add(np.array([False]), np.array([0.9]))
    assert runs.auc() == 0.5


def test_update_together_feeds_each_metric_as_its_update():
    rng = np.random.default_rng(2)
    alone = [StreamingLogLoss(), StreamingBrier(), StreamingPositiveRate(), StreamingECE()]
    fused = [StreamingLogLoss(), StreamingBrier(), StreamingPositiveRate(), StreamingECE()]
    for size in (1, 50, 333):
        positive, proba = rng.random(size) < 0.4, rng.random(size)
        for metric in alone:
            metric.update(positive, None, proba)
        rest = update_together(fused, positive, proba)
        assert rest == [fused[3]]
        rest[0].update(positive, None, proba)
        assert [m.get() for m in fused] == [m.get() for m in alone]
    rate = StreamingPositiveRate()  # no probabilities needed
    assert update_together([rate], np.array([True, False]), None) == []
    assert rate.get() == 0.5


@pytest.mark.parametrize("seed", range(6))
def test_unsorted_count_equals_the_sorted_count_or_declines(seed):
    rng = np.random.default_rng(seed)
    declined = 0
    for _ in range(60):
        n = int(rng.integers(1, 3000))
        kind = rng.integers(4)
        if kind == 0:  # few distinct values: full buckets
            scores = rng.integers(0, int(rng.integers(1, 40)), n) / 7.0
        elif kind == 1:  # a huge range
            scores = rng.normal(size=n) * 10.0 ** float(rng.integers(-300, 300))
        elif kind == 2:  # a cluster and outliers
            scores = np.where(rng.random(n) < 0.05, rng.normal(size=n) * 1e6, rng.normal(size=n))
        else:
            scores = rng.standard_t(3, size=n)
        positive = rng.random(n) < rng.random()
        ones, zeros = scores[positive].copy(), scores[~positive].copy()
        got = _count_unsorted(ones, zeros)
        want = _count(np.sort(ones), np.sort(zeros))
        declined += got == -1
        assert got == want or got == -1
    assert declined == 0  # (only a range that overflows declines)


def test_a_large_first_chunk_is_counted_unsorted_then_sorted_by_the_next_count():
    rng = np.random.default_rng(3)
    n = _UNSORTED_FROM + 500
    scores, positive = rng.normal(size=n + 700), rng.random(n + 700) < 0.3
    scores[:50] = 0.0  # some ties
    runs, reference = StreamRuns(), PrequentialAUC(pos_label=True)
    runs.add(positive[:n], scores[:n])
    reference.update(positive[:n], scores[:n])
    assert runs.auc() == reference.get() == exact_auc(positive[:n], scores[:n])
    assert runs.unsorted  # (counted by the read, without a sort)
    assert runs.sizes() == (int((~positive[:n]).sum()), int(positive[:n].sum()))
    for part in (slice(n, n + 300), slice(n + 300, n + 700)):
        runs.add(positive[part], scores[part])
        reference.update(positive[part], scores[part])
        assert runs.auc() == reference.get() and not runs.unsorted
        check_runs(runs)
    assert runs.auc() == exact_auc(positive, scores)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    sizes=st.lists(st.integers(0, 3000), min_size=1, max_size=12),
    reads=st.lists(st.booleans(), min_size=12, max_size=12),
)
def test_reads_at_any_time_give_the_count_of_every_score_added(seed, sizes, reads):
    """The count waits for a read: pending scores (many before the first read: counted
    unsorted; after it: sorted and counted against the runs) give the exact value
    whenever it is read, and the runs stay sorted and geometric."""
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    scores = np.round(rng.normal(size=n), 2)  # (ties)
    positive = rng.random(n) < rng.random()
    runs, start = StreamRuns(), 0
    for size, read in zip(sizes, reads):
        runs.add(positive[start : start + size], scores[start : start + size])
        start += size
        assert runs.sizes() == (int((~positive[:start]).sum()), int(positive[:start].sum()))
        if read:
            got, want = runs.auc(), exact_auc(positive[:start], scores[:start])
            assert got == want or (math.isnan(got) and math.isnan(want))
    got, want = runs.auc(), exact_auc(positive, scores)
    assert got == want or (math.isnan(got) and math.isnan(want))
    check_runs(runs)


def test_many_chunks_before_the_first_read_are_counted_without_a_sort():
    rng = np.random.default_rng(7)
    scores, positive = rng.normal(size=3 * _UNSORTED_FROM), rng.random(3 * _UNSORTED_FROM) < 0.2
    runs = StreamRuns()
    for start in range(0, scores.size, 1000):
        runs.add(positive[start : start + 1000], scores[start : start + 1000])
    assert runs.p0 + runs.p1 == scores.size and runs.n0 == runs.n1 == 0  # (pending)
    assert runs.auc() == exact_auc(positive, scores) and runs.unsorted
    runs.add(positive[:10], scores[:10])  # the next count sorts them first
    assert runs.auc() == exact_auc(np.r_[positive, positive[:10]], np.r_[scores, scores[:10]])
    assert not runs.unsorted
    check_runs(runs)


@pytest.mark.parametrize("kind", ["ties", "range"])
def test_a_large_first_chunk_the_buckets_decline_is_sorted(kind):
    rng = np.random.default_rng(4)
    n = _UNSORTED_FROM
    if kind == "ties":
        scores = rng.integers(0, 5, n).astype(np.float64)
    else:
        scores = np.where(rng.random(n) < 0.5, -1e308, 1e308) * rng.random(n)
    positive = rng.random(n) < 0.4
    runs = StreamRuns()
    runs.add(positive, scores)
    assert not runs.unsorted and runs.auc() == exact_auc(positive, scores)
    check_runs(runs)


def test_a_large_first_chunk_not_finite_is_refused():
    scores = np.linspace(0.0, 1.0, _UNSORTED_FROM)
    scores[5000] = np.inf
    runs = StreamRuns()
    with pytest.raises(ValueError, match="score 5000 = inf is not finite"):
        runs.add(np.arange(scores.size) % 2 == 0, scores)
    assert runs.sizes() == (0, 0) and runs.pairs == 0 and not runs.unsorted


def test_a_range_that_overflows_declines_before_any_bucket():
    """Finite scores whose range overflows (hi - lo = inf): no bucket can be computed
    ((v - lo) * 0 is NaN for v = hi), so the count declines at once; a few scores,
    where a too-full bucket would not have made it decline."""
    ones = np.array([-1.7e308, 1.7e308])
    zeros = np.array([0.0, 1.0, -1.0])
    assert _count_unsorted(ones, zeros) == -1


def _buckets_of(hay: np.ndarray, needles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The buckets :func:`_count_unsorted` gives each class (the smaller one's, hay)."""
    lo = min(hay.min(), needles.min())
    buckets = _BUCKETS_PER_SCORE * hay.size
    scale = buckets / (max(hay.max(), needles.max()) - lo)
    return tuple(
        np.minimum(((v - lo) * scale).astype(np.int64), buckets - 1) for v in (hay, needles)
    )


@pytest.mark.parametrize("seed", range(4))
def test_unsorted_count_with_buckets_of_0_1_2_and_more_scores(seed):
    """Buckets of the smaller class holding 0, 1, 2 and more scores, the larger class's
    scores in them below, equal to and above those (ties within a bucket and scores a
    step apart across bucket edges), -0.0 against 0.0, both classes the smaller one,
    and needle counts about the block of buckets computed at a time: the unsorted
    count is the sorted one, never declined."""
    rng = np.random.default_rng(seed)
    for k, n in ((1, 300), (2, 255), (3, 256), (7, 257), (64, 1000), (301, 3000)):
        grid = np.linspace(-1.0, 1.0, 2 * k + 1)  # fewer points than buckets: some share
        hay = rng.choice(grid, k)
        hay[:2] = 0.0
        near = rng.choice(hay, n)
        needles = np.select(
            [rng.random(n) < 0.3, rng.random(n) < 0.5],
            [near, np.nextafter(near, rng.choice([-np.inf, np.inf], n))],
            rng.uniform(-1.0, 1.0, n),
        )
        needles[rng.random(n) < 0.1] = -0.0
        needles[0], needles[1] = -1.0, 1.0  # (the span: hay's range may be narrower)
        at_hay, at_needles = _buckets_of(hay, needles)
        holding = np.bincount(at_hay, minlength=_BUCKETS_PER_SCORE * k)[at_needles]
        if k >= 64:
            assert {0, 1, 2} <= set(holding) and holding.max() >= 3
        want = _count(np.sort(hay), np.sort(needles))
        assert _count_unsorted(hay, needles) == want  # hay the positives (ones)
        assert _count_unsorted(needles, hay) == 2 * k * n - want  # hay the negatives


@pytest.mark.parametrize("most", [_BUCKET_MOST, _BUCKET_MOST + 1, 5 * _BUCKET_MOST])
def test_unsorted_count_of_a_bucket_over_the_most(most):
    """A bucket of the smaller class holding :data:`_BUCKET_MOST` scores is counted by
    comparing each score of the other class in it with all of them; a fuller one is
    sorted and searched: the same count either way, never declined (ties of repeated
    rows once made the whole count fall back to a sort)."""
    rng = np.random.default_rng(5)
    crowd = np.r_[np.full(most // 2, 0.25), 0.25 + rng.uniform(0, 1e-9, most - most // 2)]
    hay = np.r_[rng.permutation(crowd), rng.uniform(-1.0, 1.0, 40)]
    near = np.r_[0.25, np.nextafter(0.25, 0.0), np.nextafter(0.25, 1.0), rng.choice(crowd, 50)]
    needles = np.r_[near, rng.normal(size=500)]
    want = _count(np.sort(hay), np.sort(needles))
    assert _count_unsorted(hay, needles) == want
    assert _count_unsorted(needles, hay) == 2 * hay.size * needles.size - want


@pytest.mark.parametrize("bad", [np.nan, -np.nan, np.inf, -np.inf])
def test_the_split_names_the_first_score_not_finite(bad):
    """The chunk's span is taken from the floats' bits: any score whose exponent bits are
    all set (either sign of NaN, the infinities) is refused, the first named."""
    rng = np.random.default_rng(6)
    positive = rng.random(600) < 0.3
    buffers, span = np.empty((2, 600)), np.empty(2)
    for at in (0, 299, 599):
        scores = rng.normal(size=600)
        scores[min(at + 7, 599)] = np.nan  # (a later one too)
        scores[at] = bad
        assert _split_into(*buffers, 0, 0, scores, positive, span) == -1 - at


def test_the_split_span_is_the_least_and_largest_score():
    """Zeros of either sign, subnormals and the largest floats, each class in order."""
    positive = np.arange(8) % 3 == 0
    buffers, span = np.empty((2, 8)), np.empty(2)
    for scores in (
        np.array([0.0, -0.0, 0.5, -0.5, 1e-300, -5e-324, 5e-324, 2.0]),
        -np.geomspace(1e-300, 1.7e308, 8),
        np.geomspace(5e-324, 1.7e308, 8)[::-1],
        np.array([-0.0, 0.0] * 4),
    ):
        k1 = _split_into(*buffers, 0, 0, scores, positive, span)
        assert k1 == positive.sum() and (span[0], span[1]) == (scores.min(), scores.max())
        assert np.array_equal(buffers[1, :k1], scores[positive])
        assert np.array_equal(buffers[0, : 8 - k1], scores[~positive])
