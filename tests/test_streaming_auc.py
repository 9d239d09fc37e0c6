"""Exact streaming AUC: PrequentialAUC and RollingAUC against the batch roc_auc.

After every update of hypothesis-drawn streams (scores from a few values: many ties;
random batch sizes, empty ones included), the streaming value equals ``roc_auc`` of
everything seen (or of the last ``window`` pairs) to 1e-12, and equals the exact
rational AUC rounded once.
"""

from __future__ import annotations

import pickle
from fractions import Fraction

import numpy as np
import pytest
from conftest import assert_same_state, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st

from aucstream._params import InvalidParameterError
from aucstream._streaming_auc import PrequentialAUC, RollingAUC
from aucstream.metrics import roc_auc

LABEL_PAIRS = [(0, 1), (-1, 1), (1, 0), ("a", "b"), (False, True), (2.5, -3.0)]

streams = st.fixed_dictionaries(
    {
        "seed": st.integers(0, 2**32 - 1),
        "levels": st.integers(1, 5),
        "batches": st.lists(st.integers(0, 30), min_size=1, max_size=20),
        "labels": st.sampled_from(LABEL_PAIRS),
        "pos_label": st.booleans(),
    }
)


def make(stream):
    """Labels, scores (few distinct values: many ties) and batch boundaries of a stream."""
    rng = np.random.default_rng(stream["seed"])
    n = sum(stream["batches"])
    y = np.array(stream["labels"])[rng.integers(0, 2, n)]
    s = rng.integers(0, stream["levels"], n) / 2.0 - 1.0
    bounds = np.cumsum([0, *stream["batches"]])
    pos_label = stream["labels"][1] if stream["pos_label"] else None
    return y, s, list(zip(bounds[:-1], bounds[1:])), pos_label


def expected(y, s, pos_label):
    """roc_auc, or NaN when a class is missing."""
    if np.unique(y).size < 2:
        return float("nan")
    return roc_auc(y, s, pos_label=pos_label)


def exact(y, s, pos_label):
    """The AUC as an exact fraction, by brute force over the pairs."""
    positive = y == (pos_label if pos_label is not None else max(np.unique(y).tolist()))
    diff = s[positive][:, None] - s[~positive][None, :]
    return Fraction(int(2 * (diff > 0).sum() + (diff == 0).sum()), 2 * diff.size)


def assert_auc(value, reference):
    assert (np.isnan(value) and np.isnan(reference)) or abs(value - reference) <= 1e-12, (
        value,
        reference,
    )


@settings(max_examples=120, deadline=None)
@given(stream=streams)
def test_prequential_equals_batch_auc_after_every_update(stream):
    y, s, batches, pos_label = make(stream)
    metric = PrequentialAUC(pos_label=pos_label)
    for lo, hi in batches:
        metric.update(y[lo:hi], s[lo:hi])
        assert_auc(metric.get(), expected(y[:hi], s[:hi], pos_label))
        assert metric.n_seen == hi
        assert metric.error_bound() == 0.0 or np.isnan(metric.get())
    if not np.isnan(metric.get()):
        assert metric.get() == float(exact(y, s, pos_label))  # the exact ratio, rounded once
        positive = y == (pos_label if pos_label is not None else max(np.unique(y).tolist()))
        assert (metric.n_positive, metric.n_negative) == (positive.sum(), (~positive).sum())


@settings(max_examples=120, deadline=None)
@given(stream=streams, window=st.integers(1, 25))
def test_rolling_equals_batch_auc_of_the_window_after_every_update(stream, window):
    y, s, batches, pos_label = make(stream)
    metric = RollingAUC(window, pos_label=pos_label)
    for lo, hi in batches:
        metric.update(y[lo:hi], s[lo:hi])
        last = slice(max(0, hi - window), hi)
        yw, sw = y[last], s[last]
        assert_auc(metric.get(), expected(yw, sw, pos_label))
        assert metric.n_positive + metric.n_negative == yw.size
        assert metric.n_seen == hi


def test_rolling_keeps_the_positive_label_when_it_leaves_the_window():
    metric = RollingAUC(3).update([0, 1, 1, 1, 0], [0.1, 0.9, 0.2, 0.3, 0.25])
    assert metric.get() == roc_auc([1, 1, 0], [0.2, 0.3, 0.25]) == 0.5
    metric.update([1, 1, 1], [0.0, 0.0, 0.0])  # only label 1 left: still the positive
    assert (metric.n_positive, metric.n_negative) == (3, 0) and np.isnan(metric.get())


@settings(max_examples=60, deadline=None)
@given(stream=streams, window=st.integers(1, 12))
def test_rolling_pair_by_pair_equals_batches(stream, window):
    y, s, batches, pos_label = make(stream)
    by_batch, by_pair = RollingAUC(window, pos_label), RollingAUC(window, pos_label)
    for lo, hi in batches:
        by_batch.update(y[lo:hi], s[lo:hi])
        for i in range(lo, hi):
            by_pair.update(y[i], s[i])
        assert_auc(by_batch.get(), by_pair.get())
        assert (by_batch.n_positive, by_batch.n_negative) == (
            by_pair.n_positive,
            by_pair.n_negative,
        )


@settings(max_examples=100, deadline=None)
@given(stream=streams, mask_seed=st.integers(0, 2**32 - 1))
def test_merge_equals_the_concatenation(stream, mask_seed):
    y, s, batches, pos_label = make(stream)
    # two streams: an arbitrary subset of the pairs and the rest, each in its own batches
    mine = np.random.default_rng(mask_seed).random(y.size) < 0.5
    a, b = PrequentialAUC(pos_label), PrequentialAUC(pos_label)
    for lo, hi in batches:
        part = slice(lo, hi)
        a.update(y[part][mine[part]], s[part][mine[part]])
        b.update(y[part][~mine[part]], s[part][~mine[part]])
    before = snapshot(b)
    merged = a.merge(b)
    assert merged is a
    assert_same_state(before, snapshot(b))
    assert_auc(a.get(), expected(y, s, pos_label))
    assert a.n_seen == y.size
    a.merge(a)  # itself: every pair twice
    assert_auc(a.get(), expected(np.tile(y, 2), np.tile(s, 2), pos_label))


def test_merge_renumbers_labels_seen_in_another_order():
    a = PrequentialAUC().update([1, 1], [0.5, 0.7])  # label 1 first
    b = PrequentialAUC().update([0, 1, 0], [0.6, 0.2, 0.1])  # label 0 first
    a.merge(b)
    y, s = [1, 1, 0, 1, 0], [0.5, 0.7, 0.6, 0.2, 0.1]
    assert a.get() == roc_auc(y, s) and (a.n_positive, a.n_negative) == (3, 2)
    c = PrequentialAUC().update(["b"], [1.0])
    c.merge(PrequentialAUC().update(["a"], [2.0]))
    assert c.get() == roc_auc(["b", "a"], [1.0, 2.0]) == 0.0


@pytest.mark.parametrize(
    "left, right, message",
    [
        (PrequentialAUC(pos_label=1), PrequentialAUC(), "pos_label"),
        (PrequentialAUC().update([0, 1], [0, 1]), PrequentialAUC().update(2, 0), "three"),
    ],
)
def test_merge_refusals(left, right, message):
    before = snapshot(left)
    with pytest.raises(ValueError, match=message):
        left.merge(right)
    assert_same_state(before, snapshot(left))
    with pytest.raises(TypeError):
        left.merge(RollingAUC(3))


@settings(max_examples=100, deadline=None)
@given(
    stream=streams,
    max_memory=st.integers(7, 60),
    continuous=st.booleans(),
    drift=st.floats(0, 3),
)
def test_bounded_memory_estimate_is_within_its_bound(stream, max_memory, continuous, drift):
    y, s, batches, pos_label = make(stream)
    if continuous:  # distinct scores: the bins are ranges, not points; drift moves them
        s = s + np.random.default_rng(stream["seed"]).normal(size=s.size) / 3
        s = s + drift * np.arange(s.size) / max(1, s.size)
    metric = PrequentialAUC(pos_label=pos_label, max_memory=max_memory)
    for lo, hi in batches:
        metric.update(y[lo:hi], s[lo:hi])
        truth, bound = expected(y[:hi], s[:hi], pos_label), metric.error_bound()
        if np.isnan(truth):
            assert np.isnan(metric.get()) and np.isnan(bound)
            continue
        assert abs(metric.get() - truth) <= bound + 1e-12
        if metric._cells is None:
            assert bound == 0.0 and hi <= max_memory
        else:  # the state is the histogram, within the budget, and no longer grows
            assert metric._edges.size + metric._cells.size <= max_memory
            assert metric._runs == [[], []]


def test_bounded_memory_is_exact_for_scores_with_few_values():
    rng = np.random.default_rng(3)
    y, s = rng.integers(0, 2, 5000), rng.integers(0, 6, 5000).astype(float)
    metric = PrequentialAUC(max_memory=50)
    for lo in range(0, 5000, 100):
        metric.update(y[lo : lo + 100], s[lo : lo + 100])
    assert metric._cells is not None and metric.error_bound() == 0.0
    assert metric.get() == roc_auc(y, s)


def test_bounded_memory_bound_is_small_without_drift_and_loose_with_it():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 40_000)
    s = rng.normal(size=y.size) + y
    steady = PrequentialAUC(max_memory=2000)
    drifting = PrequentialAUC(max_memory=2000)
    for lo in range(0, y.size, 1000):
        part = slice(lo, lo + 1000)
        steady.update(y[part], s[part])
        drifting.update(y[part], s[part] + 10 * (lo >= 3000))  # above the edges after the switch
    assert abs(steady.get() - roc_auc(y, s)) <= steady.error_bound() < 2e-3
    moved = s + 10 * (np.arange(y.size) >= 3000)
    assert abs(drifting.get() - roc_auc(y, moved)) <= drifting.error_bound()
    assert drifting.error_bound() > 0.2


@pytest.mark.parametrize("binned", ["self", "other", "both"])
def test_merge_with_a_binned_metric_stays_within_the_bound(binned):
    rng = np.random.default_rng(5)
    y, s = rng.integers(0, 2, 3000), rng.normal(size=3000)
    s += y
    a = PrequentialAUC(max_memory=300 if binned != "other" else None).update(y[:1500], s[:1500])
    b = PrequentialAUC(max_memory=300 if binned != "self" else None).update(y[1500:], s[1500:])
    if binned == "both":
        b = pickle.loads(pickle.dumps(a))  # the same edges
        y, s = np.tile(y[:1500], 2), np.tile(s[:1500], 2)
    a.merge(b)
    assert a._cells is not None and a.n_seen == y.size
    assert abs(a.get() - roc_auc(y, s)) <= a.error_bound()
    with pytest.raises(ValueError, match="different edges"):
        a.merge(PrequentialAUC(max_memory=7).update(y[:20], s[:20] + 1))


def test_runs_stay_logarithmic_and_large_streams_exact():
    rng = np.random.default_rng(6)
    y = rng.integers(0, 2, 200_000)
    s = np.round(rng.normal(size=y.size) + y, 2)
    metric = PrequentialAUC()
    lo = 0
    for size in rng.integers(1, 3000, 400):
        metric.update(y[lo : lo + size], s[lo : lo + size])
        lo += size
    for runs in metric._runs:
        assert all(a.size > 2 * b.size for a, b in zip(runs, runs[1:]))
        assert all(np.all(np.diff(run) >= 0) for run in runs)
        assert len(runs) <= np.log2(y.size) + 1
    assert abs(metric.get() - roc_auc(y[:lo], s[:lo])) <= 1e-12


def test_labels_pos_label_and_scalars():
    assert PrequentialAUC().update(["a", "b", "b", "a"], [0.1, 0.9, 0.3, 0.4]).get() == 0.75
    metric = PrequentialAUC(pos_label="a").update(["a", "b", "b", "a"], [0.1, 0.9, 0.3, 0.4])
    assert metric.get() == 0.25 and (metric.n_positive, metric.n_negative) == (2, 2)
    metric = PrequentialAUC()
    for label, score in [(1, 0.4), (1, 0.8), (-1, 0.5)]:
        metric.update(label, score)
    assert metric.get() == 0.5 and metric.n_seen == 3
    # one label so far: roc_auc's convention (1 or True positive, anything else negative)
    assert PrequentialAUC().update([1, 1], [0, 0]).n_positive == 2
    assert PrequentialAUC().update([0, 0], [0, 0]).n_negative == 2
    assert np.isnan(PrequentialAUC().update([], []).get())


@pytest.mark.parametrize("make_metric", [PrequentialAUC, lambda: RollingAUC(300)])
def test_single_pairs_are_held_then_counted_in_order(make_metric):
    rng = np.random.default_rng(8)
    y, s = rng.integers(0, 2, 1300), rng.integers(0, 9, 1300) / 4
    by_pair, by_array = make_metric(), make_metric()
    for i in range(1300):  # more than the hold: flushed on the way, and before reads
        by_pair.update(np.int64(y[i]), float(s[i]) if i % 2 else s[i])
        if i in (0, 1, 700, 1299):
            by_array.update(y[: i + 1][by_array.n_seen :], s[: i + 1][by_array.n_seen :])
            assert_auc(by_pair.get(), by_array.get())
            assert by_pair.n_seen == by_array.n_seen == i + 1
    by_pair.update(y[0], s[0])
    copy = pickle.loads(pickle.dumps(by_pair))  # the held pair is counted before pickling
    by_array.update(y[:1], s[:1])
    assert not copy._held_scores and copy.get() == by_array.get() == by_pair.get()
    by_pair.update(1, 0.5).update([0, 1], [0.2, 0.7])  # held, then an array after it
    by_array.update([1, 0, 1], [0.5, 0.2, 0.7])
    assert by_pair.get() == by_array.get() and by_pair.n_seen == by_array.n_seen
    assert (by_pair.n_positive, by_pair.n_negative) == (by_array.n_positive, by_array.n_negative)


def test_a_held_pair_precedes_the_next_array():
    metric = RollingAUC(2).update(1, 0.5).update([0, 1], [0.2, 0.9])
    assert metric.get() == 1.0  # the window is (0, 0.2), (1, 0.9): the held pair left first


def _bad_updates():
    return [
        ([0, 1, 0, 1], [0.1, 0.2, np.nan, 0.3], r"y_score\[2\] = nan is not finite"),
        ([0, 1, 0, 1], [0.1, np.inf, 0.5, 0.3], r"y_score\[1\] = inf is not finite"),
        ([0, 1, 2, 1], [0.1, 0.2, 0.3, 0.4], r"y_true\[2\] = 2 is a third label"),
        ([0, 1, 1], [0.1, 0.2], "different lengths: 3 and 2"),
        ([0.0, np.nan], [0.1, 0.2], "NaN"),
    ]


@pytest.mark.parametrize("make_metric", [PrequentialAUC, lambda: RollingAUC(5)])
@pytest.mark.parametrize("y, s, message", _bad_updates())
def test_refused_updates_change_nothing(make_metric, y, s, message):
    metric = make_metric().update([0, 1, 1], [0.3, 0.6, 0.2]).update(1, 0.4)  # one held
    before = snapshot(metric)
    with pytest.raises(ValueError, match=message):
        metric.update(y, s)
    assert_same_state(before, snapshot(metric))
    if len(y) == len(s):  # the offending pair alone, as scalars
        i = next(i for i in range(len(y)) if not np.isfinite(s[i]) or y[i] not in (0, 1))
        with pytest.raises(ValueError, match=message.replace(rf"\[{i}\]", r"\[0\]")):
            metric.update(y[i], s[i])
        assert_same_state(before, snapshot(metric))


def test_pos_label_allows_one_other_label():
    metric = PrequentialAUC(pos_label=1).update([0, 0], [0.1, 0.2])
    with pytest.raises(ValueError, match=r"y_true\[0\] = -1 is a third label.*pos_label=1"):
        metric.update([-1], [0.3])


@pytest.mark.parametrize(
    "factory, message",
    [
        (lambda: PrequentialAUC(max_memory=6), "max_memory"),
        (lambda: PrequentialAUC(max_memory=True), "max_memory"),
        (lambda: PrequentialAUC(max_memory=100.0), "max_memory"),
        (lambda: RollingAUC(0), "window"),
        (lambda: RollingAUC(True), "window"),
    ],
)
def test_parameters_are_checked(factory, message):
    with pytest.raises(InvalidParameterError, match=message):
        factory()


@pytest.mark.parametrize(
    "make_metric",
    [PrequentialAUC, lambda: PrequentialAUC(max_memory=40), lambda: RollingAUC(17)],
)
def test_pickle_round_trip_resumes_identically(make_metric):
    rng = np.random.default_rng(7)
    y, s = rng.integers(0, 2, 300), rng.integers(0, 8, 300).astype(float)
    metric = make_metric().update(y[:150], s[:150])
    copy = pickle.loads(pickle.dumps(metric))
    assert_same_state(snapshot(metric), snapshot(copy))
    assert repr(copy) == repr(metric)
    metric.update(y[150:], s[150:])
    copy.update(y[150:], s[150:])
    assert_same_state(snapshot(metric), snapshot(copy))
    assert copy.get() == metric.get()


def test_repr():
    assert repr(PrequentialAUC()) == "PrequentialAUC(auc=nan, n_positive=0, n_negative=0)"
    metric = PrequentialAUC(max_memory=7).update([0, 1] * 5, [0.0, 1.0] * 5)
    assert repr(metric).startswith("PrequentialAUC(auc=1, n_positive=5, n_negative=5, error_bound=")
    assert repr(RollingAUC(2).update([0, 1], [1, 0])) == (
        "RollingAUC(window=2, auc=0, n_positive=1, n_negative=1)"
    )


@settings(max_examples=60, deadline=None)
@given(
    window=st.integers(1, 40),
    batches=st.lists(
        st.lists(st.tuples(st.integers(0, 1), st.integers(0, 4)), min_size=1, max_size=60),
        min_size=1,
        max_size=5,
    ),
)
def test_rolling_peek_is_the_update_it_does_not_make(window, batches):
    """``RollingAUC._peek`` (what OnePassSearch reads for its buffered scores) gives
    exactly the AUC after the update, and changes nothing."""
    import copy

    metric = RollingAUC(window, pos_label=1)
    for batch in batches:
        y = np.array([b[0] for b in batch], dtype=np.int8)
        s = np.array([b[1] for b in batch], dtype=np.float64) / 4
        before = snapshot(metric)
        expected = copy.deepcopy(metric).update(y, s).get()
        peeked = metric._peek(y, s)
        assert_same_state(before, snapshot(metric))
        assert peeked == expected or (np.isnan(peeked) and np.isnan(expected))
        metric.update(y, s)


regions = st.sampled_from([(0.1, None), (0.5, None), (0.3, 0.4), (None, 0.7), (1.0, 0.0)])


@settings(max_examples=60, deadline=None)
@given(stream=streams, region=regions, window=st.integers(1, 25), standardized=st.booleans())
def test_partial_auc_equals_batch_after_every_update(stream, region, window, standardized):
    """Prequential and rolling partial AUC equal roc_auc's on the same pairs (labels of
    any kind, pos_label, many ties, empty batches)."""
    y, s, batches, pos_label = make(stream)
    k = {"max_fpr": region[0], "min_tpr": region[1], "standardized": standardized}
    overall, recent = PrequentialAUC(pos_label, **k), RollingAUC(window, pos_label, **k)
    for lo, hi in batches:
        overall.update(y[lo:hi], s[lo:hi])
        recent.update(y[lo:hi], s[lo:hi])
        for metric, part in ((overall, slice(0, hi)), (recent, slice(max(0, hi - window), hi))):
            yp, sp = y[part], s[part]
            reference = (
                np.nan if np.unique(yp).size < 2 else roc_auc(yp, sp, pos_label=pos_label, **k)
            )
            assert_auc(metric.get(), reference)


ONE_BY_ONE = [
    PrequentialAUC,
    lambda: RollingAUC(40),
    lambda: PrequentialAUC(max_fpr=0.3),
    lambda: RollingAUC(40, max_fpr=0.3, min_tpr=0.2),
]


@pytest.mark.parametrize("make_metric", ONE_BY_ONE)
@pytest.mark.parametrize("read_every", [1, 7, 10**6])
def test_pair_by_pair_equals_one_chunk_bit_for_bit(make_metric, read_every):
    """Python scalars, numpy scalars and bool labels one at a time (read after every
    ``read_every`` pairs, which counts the held ones) give the float one array gives,
    and the same integer counts and sorted scores: ties one half, whatever the cut."""
    rng = np.random.default_rng(3)
    n = 700  # past the hold of 512 single pairs
    y, s = rng.integers(0, 2, n), rng.integers(0, 6, n) / 4.0  # many ties
    by_pair, by_chunk = make_metric(), make_metric().update(y, s)
    for i in range(n):
        label = [int(y[i]), np.int64(y[i]), bool(y[i])][i % 3]  # True == 1: one label
        by_pair.update(label, float(s[i]) if i % 2 else s[i])
        if i % read_every == read_every - 1:
            by_pair.get()
    value = by_pair.get()
    assert value == by_chunk.get() and not np.isnan(value)
    assert by_pair.n_seen == by_chunk.n_seen == n
    # label numbers follow the order of appearance: the pair count of label 1 over
    # label 0, and each label's sorted scores, compared label by label
    counts, scores = [], []
    for m in (by_pair, by_chunk):
        first = m._labels.index(0)  # the number of label 0
        n0, n1 = m._class_sizes()
        counts.append(m._counted() if first == 0 else 2 * n0 * n1 - m._counted())
        scores.append([np.sort(np.concatenate([[], *m._sorted_runs(k ^ first)])) for k in (0, 1)])
    assert counts[0] == counts[1]
    assert all(np.array_equal(a, b) for a, b in zip(*scores))


@pytest.mark.parametrize("make_metric", ONE_BY_ONE)
@pytest.mark.parametrize(
    "label, score, message",
    [
        (1, float("nan"), r"y_score\[0\] = nan is not finite"),
        (0, float("inf"), r"y_score\[0\] = inf is not finite"),
        (1, -np.inf, r"y_score\[0\] = -inf is not finite"),
        (np.float64(np.nan), 0.5, "NaN"),
        (2, 0.5, r"y_true\[0\] = 2 is a third label"),
        ("1", 0.5, r"y_true\[0\] = '1' is a third label"),
    ],
)
def test_bad_single_pairs_are_refused_and_change_nothing(make_metric, label, score, message):
    metric = make_metric().update([0, 1, 1], [0.3, 0.6, 0.2]).update(1, 0.4)  # one held
    before = snapshot(metric)
    with pytest.raises(ValueError, match=message):
        metric.update(label, score)
    assert_same_state(before, snapshot(metric))


@pytest.mark.parametrize("make_metric", ONE_BY_ONE)
def test_a_bool_score_is_the_number_it_is_in_an_array(make_metric):
    """A score True or False counts as 1.0 or 0.0 as it does in an array (and in
    scikit-learn's roc_auc_score): a 0/1 predictor has an AUC."""
    y, s = [0, 1, 1, 0, 1], [False, True, False, False, True]
    by_pair = make_metric()
    for label, score in zip(y, s):
        by_pair.update(label, score)
    as_floats = make_metric().update(y, np.array(s, float)).get()
    assert by_pair.get() == make_metric().update(y, s).get() == as_floats


@pytest.mark.parametrize("make_metric", ONE_BY_ONE)
def test_arrays_after_both_labels_are_known(make_metric):
    """Once both labels are known an array is numbered by two comparisons: a label of
    another type is a third label (nothing changed), and True counts as 1, as before."""
    metric = make_metric().update(["a", "b", "a"], [0.1, 0.7, 0.4])
    before = snapshot(metric)
    with pytest.raises(ValueError, match=r"y_true\[0\] = 1 is a third label"):
        metric.update([1, 1], [0.2, 0.3])
    with pytest.raises(ValueError, match="NaN"):
        make_metric().update([0.0, 1.0], [0.1, 0.2]).update([1.0, np.nan], [0.3, 0.4])
    assert_same_state(before, snapshot(metric))
    ints = (
        make_metric().update([0, 1, 0], [0.1, 0.7, 0.4]).update(np.array([True, False]), [0.5, 0.2])
    )
    assert ints.get() == make_metric().update([0, 1, 0, 1, 0], [0.1, 0.7, 0.4, 0.5, 0.2]).get()


def test_single_pairs_read_one_by_one_in_bounded_memory():
    """After the switch to a histogram, pairs read one at a time are counted by their
    cells, within the error bound of the exact AUC."""
    rng = np.random.default_rng(5)
    y, s = rng.integers(0, 2, 300), rng.normal(size=300)
    metric = PrequentialAUC(max_memory=40).update(y[:100], s[:100])
    assert metric._cells is not None
    for i in range(100, 300):
        metric.update(int(y[i]), float(s[i]))
        if i % 50 == 0:
            assert abs(metric.get() - roc_auc(y[: i + 1], s[: i + 1])) <= metric.error_bound()
    assert metric.n_seen == 300 and metric.n_positive + metric.n_negative == 300
    assert abs(metric.get() - roc_auc(y, s)) <= metric.error_bound()


@pytest.mark.parametrize("pos_label", [True, False, None])
@pytest.mark.parametrize(
    "make_metric", [PrequentialAUC, lambda pos_label: RollingAUC(50, pos_label)]
)
def test_boolean_chunks_count_as_the_same_labels_as_integers(make_metric, pos_label):
    """Boolean labels with float64 scores (prequential's chunks) are numbered without
    comparisons once both are known: the same counts, bit for bit, as the labels 0/1
    given as integers; a NaN among them is still refused with nothing changed."""
    rng = np.random.default_rng(7)
    y = rng.random(700) < 0.3
    s = np.round(rng.normal(size=700) + y, 1)  # ties within and across chunks
    as_int = None if pos_label is None else int(pos_label)
    ours, ints = make_metric(pos_label=pos_label), make_metric(pos_label=as_int)
    for lo in range(0, 700, 70):
        ours.update(y[lo : lo + 70], s[lo : lo + 70])
        ints.update(y[lo : lo + 70].astype(int), s[lo : lo + 70])
        assert ours.get() == ints.get()
        assert (ours.n_positive, ours.n_negative) == (ints.n_positive, ints.n_negative)
    last = slice(-50, None) if isinstance(ours, RollingAUC) else slice(None)
    reference = roc_auc(y[last], s[last], pos_label=pos_label)
    assert ours.get() == pytest.approx(reference, abs=1e-12)
    before = snapshot(ours)
    with pytest.raises(ValueError, match=r"y_score\[1\] = nan"):
        ours.update(np.array([True, False]), np.array([0.5, np.nan]))
    assert_same_state(before, snapshot(ours))
