"""Exact partial AUC: roc_auc(max_fpr, min_tpr), PrequentialAUC and RollingAUC.

References in the same test: scikit-learn's ``roc_auc_score(max_fpr=...)`` (one-way,
McClish), a brute-force count over the selected pairs (two-way, no ties, integer cuts)
and a numeric integration of the interpolated ROC curve from scikit-learn's
``roc_curve`` (two-way and raw one-way, tie-heavy scores).
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from conftest import assert_same_state, snapshot
from sklearn.metrics import roc_auc_score, roc_curve

from aucstream._config import config_context
from aucstream.metrics import PrequentialAUC, RollingAUC, pr_auc, roc_auc

#: (max_fpr, min_tpr) pairs; None for a missing parameter.
REGIONS = [(0.01, None), (0.1, None), (0.37, None), (0.2, 0.5), (None, 0.3), (0.05, 0.0)]


def stream(n, rate, decimals, seed):
    """Labels with positive rate ``rate`` (both classes present) and rounded scores."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < rate).astype(int)
    y[:2] = [0, 1]
    s = np.round(rng.normal(size=n) + 1.5 * y, decimals)
    return y, s


def kwargs(max_fpr, min_tpr, **more):
    return {"max_fpr": max_fpr, "min_tpr": min_tpr, **more}


def integrated(y, s, beta, alpha, n_grid=40001):
    """The integral of max(TPR(u) - alpha, 0) over u in [0, beta], numerically.

    TPR(u) interpolates scikit-learn's ROC points linearly (taking the top of a
    vertical step); the midpoint rule on a grid holding every vertex is exact on the
    linear pieces, so only the kink at TPR = alpha is approximate.
    """
    fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
    grid = np.unique(np.concatenate([np.linspace(0, beta, n_grid), fpr[fpr < beta]]))
    u = 0.5 * (grid[1:] + grid[:-1])
    k = np.searchsorted(fpr, u, side="right")  # fpr[k - 1] <= u < fpr[k]
    x0, x1, y0, y1 = fpr[k - 1], fpr[k], tpr[k - 1], tpr[k]
    value = y0 + (y1 - y0) * (u - x0) / (x1 - x0)
    return float(np.sum(np.diff(grid) * np.maximum(value - alpha, 0.0)))


def selected_pairs_auc(y, s, beta, alpha):
    """AUC of (lowest ceil((1 - alpha) n+) positives) x (highest beta n- negatives)."""
    pos, neg = np.sort(s[y == 1]), np.sort(s[y == 0])
    pos = pos[: int(np.ceil(round((1 - alpha) * pos.size, 9)))]
    neg = neg[neg.size - int(round(beta * neg.size)) :]
    diff = pos[:, None] - neg[None, :]
    return float(np.mean((diff > 0) + 0.5 * (diff == 0)))


# --- batch -----------------------------------------------------------------------


@pytest.mark.parametrize("rate", [0.01, 0.1, 0.5])
@pytest.mark.parametrize("decimals", [1, 2])
def test_one_way_equals_sklearn_on_tie_heavy_scores(rate, decimals):
    y, s = stream(3000, rate, decimals, seed=int(rate * 100) + decimals)
    for beta in [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 0.8, 1.0]:
        value, reference = roc_auc(y, s, max_fpr=beta), roc_auc_score(y, s, max_fpr=beta)
        assert abs(value - reference) <= 1e-12, (beta, value, reference)
        raw = roc_auc(y, s, max_fpr=beta, standardized=False)
        least = beta * beta / 2  # McClish inverted
        assert abs(raw - (least + (2 * reference - 1) * (beta - least))) <= 1e-12
    assert roc_auc(y, s, max_fpr=1.0) == roc_auc(y, s)
    assert roc_auc(y, s, max_fpr=1, standardized=False) == roc_auc(y, s)


def test_one_way_equals_sklearn_on_many_small_samples():
    rng = np.random.default_rng(11)
    for _ in range(80):
        n = int(rng.integers(2, 60))
        y = rng.integers(0, 2, n)
        y[:2] = [0, 1]
        s = rng.integers(0, int(rng.integers(1, 6)), n).astype(float)  # a few values
        beta = float(rng.choice([0.05, 0.2, 0.5, 0.9, rng.uniform(0.01, 1)]))
        assert abs(roc_auc(y, s, max_fpr=beta) - roc_auc_score(y, s, max_fpr=beta)) <= 1e-12


@pytest.mark.parametrize("alpha", [0.0, 0.25, 0.5, 0.75, 0.95])
@pytest.mark.parametrize("beta", [0.1, 0.2, 0.5, 1.0])
def test_two_way_is_the_auc_of_the_selected_pairs(alpha, beta):
    rng = np.random.default_rng(int(100 * alpha + 10 * beta))
    for _ in range(20):  # no ties, alpha n+ and beta n- integers
        y = rng.permutation(np.repeat([1, 0], [20, 50]))
        s = rng.permutation(200)[:70].astype(float)
        value = roc_auc(y, s, max_fpr=beta, min_tpr=alpha)
        assert abs(value - selected_pairs_auc(y, s, beta, alpha)) <= 1e-12
        raw = roc_auc(y, s, max_fpr=beta, min_tpr=alpha, standardized=False)
        assert abs(raw - (1 - alpha) * beta * value) <= 1e-12


def test_two_way_equals_the_integrated_roc_curve_on_tie_heavy_scores():
    rng = np.random.default_rng(12)
    for trial in range(30):
        y, s = stream(int(rng.integers(20, 400)), [0.05, 0.3, 0.6][trial % 3], 1, trial)
        s = np.round(s * rng.choice([1, 0.3]), 1)  # very few distinct values
        beta, alpha = float(rng.uniform(0.02, 1)), float(rng.uniform(0, 0.98))
        raw = roc_auc(y, s, max_fpr=beta, min_tpr=alpha, standardized=False)
        assert abs(raw - integrated(y, s, beta, alpha)) <= 1e-7, (trial, beta, alpha)
        normalized = roc_auc(y, s, max_fpr=beta, min_tpr=alpha)
        assert 0 <= normalized <= 1 and abs(normalized * (1 - alpha) * beta - raw) <= 1e-12
        one_way = roc_auc(y, s, max_fpr=beta, standardized=False)
        assert abs(one_way - integrated(y, s, beta, 0.0)) <= 1e-7
        assert abs(roc_auc(y, s, max_fpr=beta, min_tpr=0.0) * beta - one_way) <= 1e-12
    # min_tpr alone: max_fpr = 1; perfect and reversed rankings
    y, s = stream(500, 0.3, 1, 1)
    assert roc_auc(y, s, min_tpr=0.4) == roc_auc(y, s, max_fpr=1.0, min_tpr=0.4)
    assert roc_auc(y, y * 1.0, max_fpr=0.3, min_tpr=0.6) == 1.0
    assert roc_auc(y, -y * 1.0, max_fpr=0.3, min_tpr=0.6) == 0.0


def test_labels_follow_roc_auc():
    y, s = stream(400, 0.3, 1, 2)
    named = np.array(["neg", "pos"])[y]
    for max_fpr, min_tpr in REGIONS:
        k = kwargs(max_fpr, min_tpr)
        assert roc_auc(named, s, **k) == roc_auc(y, s, **k)
        assert roc_auc(named, -s, pos_label="neg", **k) == roc_auc(1 - y, -s, **k)


# --- bad input ---------------------------------------------------------------------

BAD_PARAMETERS = [
    ({"max_fpr": 0}, "max_fpr"),
    ({"max_fpr": -0.1}, "max_fpr"),
    ({"max_fpr": 1.5}, "max_fpr"),
    ({"max_fpr": float("nan")}, "max_fpr"),
    ({"max_fpr": float("inf")}, "max_fpr"),
    ({"max_fpr": True}, "max_fpr"),
    ({"max_fpr": np.True_}, "max_fpr"),
    ({"max_fpr": "0.1"}, "max_fpr"),
    ({"min_tpr": 1}, "min_tpr"),
    ({"min_tpr": 1.0}, "min_tpr"),
    ({"min_tpr": -0.01}, "min_tpr"),
    ({"min_tpr": float("nan")}, "min_tpr"),
    ({"min_tpr": -float("inf")}, "min_tpr"),
    ({"min_tpr": False}, "min_tpr"),
    ({"min_tpr": "0"}, "min_tpr"),
    ({"max_fpr": 0.5, "standardized": "yes"}, "standardized"),
]


@pytest.mark.parametrize("bad, name", BAD_PARAMETERS)
@pytest.mark.parametrize(
    "call",
    [
        lambda **k: roc_auc([0, 1, 1], [0.1, 0.2, 0.3], **k),
        lambda **k: PrequentialAUC(**k),
        lambda **k: RollingAUC(10, **k),
    ],
)
def test_bad_parameters_are_refused_by_name(call, bad, name):
    with pytest.raises((ValueError, TypeError), match=f"'{name}' parameter"):
        call(**bad)


def test_bounded_memory_and_partial_auc_are_refused_together():
    with pytest.raises(ValueError, match="max_memory.*partial AUC"):
        PrequentialAUC(max_memory=100, max_fpr=0.1)
    with pytest.raises(ValueError, match="max_memory.*partial AUC"):
        PrequentialAUC(max_memory=100, min_tpr=0.5)
    PrequentialAUC(max_memory=100, max_fpr=1.0)  # the whole AUC: allowed


def test_one_class_is_undefined():
    for max_fpr, min_tpr in REGIONS:
        with pytest.raises(ValueError, match="only one class"):  # as roc_auc without them
            roc_auc([1, 1, 1], [0.1, 0.2, 0.3], **kwargs(max_fpr, min_tpr))
        for metric in (PrequentialAUC(**kwargs(max_fpr, min_tpr)), RollingAUC(4)):
            assert np.isnan(metric.update([0, 0], [0.2, 0.3]).get())
            assert metric.update([1], [0.25]).get() >= 0  # defined once both are present


@pytest.mark.parametrize("fn", [roc_auc, pr_auc])
def test_batch_metrics_refuse_two_dimensional_scores(fn):
    with pytest.raises(ValueError, match=r"y_score must be 1-D.*shape \(2, 2\)"):
        fn([0, 1, 0, 1], [[0.1, 0.2], [0.3, 0.4]])
    with pytest.raises(ValueError, match=r"y_true must be 1-D.*shape \(2, 2\)"):
        fn([[0, 1], [0, 1]], [0.1, 0.2, 0.3, 0.4])
    column = np.array([[0.1], [0.4], [0.35], [0.8]])  # one column: accepted
    assert fn([0, 0, 1, 1], column) == fn([0, 0, 1, 1], column.ravel())


@pytest.mark.parametrize(
    "make_metric",
    [
        PrequentialAUC,
        lambda: PrequentialAUC(max_fpr=0.5, min_tpr=0.2),
        lambda: RollingAUC(5),
        lambda: RollingAUC(5, max_fpr=0.5),
    ],
)
@pytest.mark.parametrize(
    "y, s, message",
    [
        ([0, 1], [[0.1, 0.2], [0.3, 0.4]], r"y_score must be 1-D.*shape \(2, 2\)"),
        ([[0, 1], [1, 0]], [0.1, 0.2, 0.3, 0.4], r"y_true must be 1-D.*shape \(2, 2\)"),
        ([0, 1], np.zeros((2, 1, 1)), r"y_score must be 1-D.*shape \(2, 1, 1\)"),
        ([0, 1, 0], [0.1, np.nan, 0.2], "not finite"),
        ([0, 1, 2], [0.1, 0.2, 0.3], "third label"),
        ([0, 1, 0], [0.1, 0.2], "different lengths"),
    ],
)
def test_refused_updates_change_nothing(make_metric, y, s, message):
    metric = make_metric().update([0, 1, 1, 0], [0.3, 0.6, 0.2, 0.1]).update(1, 0.4)
    value, before = metric.get(), snapshot(metric)
    with pytest.raises(ValueError, match=message):
        metric.update(y, s)
    assert_same_state(before, snapshot(metric))
    assert metric.get() == value


def test_a_single_column_of_scores_is_accepted():
    a = PrequentialAUC().update([0, 1, 1], np.array([[0.3], [0.6], [0.2]]))
    assert a.get() == PrequentialAUC().update([0, 1, 1], [0.3, 0.6, 0.2]).get() == 0.5


def test_a_window_beyond_the_memory_budget_is_refused_before_allocating():
    with pytest.raises(MemoryError, match=r"window=1000000000000.*memory_budget"):
        RollingAUC(10**12)
    with config_context(memory_budget=1000):
        with pytest.raises(MemoryError, match=r"needs 2\.5 kB .* memory_budget of 1\.0 kB"):
            RollingAUC(100)  # 2500 bytes
        assert RollingAUC(40).window == 40  # 1000 bytes: within


# --- streaming ---------------------------------------------------------------------


@pytest.mark.parametrize("max_fpr, min_tpr", REGIONS)
@pytest.mark.parametrize("rate", [0.01, 0.2])
def test_prequential_equals_batch_for_every_chunking(max_fpr, min_tpr, rate):
    y, s = stream(1500, rate, 1 if rate > 0.1 else 2, seed=7)
    k = kwargs(max_fpr, min_tpr)
    reference = roc_auc(y, s, **k)
    if min_tpr is None:
        assert abs(reference - roc_auc_score(y, s, max_fpr=max_fpr)) <= 1e-12
    for size in [1, 7, 250, y.size]:
        metric = PrequentialAUC(**k)
        for lo in range(0, y.size, size):
            metric.update(y[lo : lo + size], s[lo : lo + size])
            if size == 250:  # after every chunk, the prefix's value
                hi = lo + size
                prefix = np.nan if np.unique(y[:hi]).size < 2 else roc_auc(y[:hi], s[:hi], **k)
                assert metric.get() == prefix or (np.isnan(prefix) and np.isnan(metric.get()))
        assert abs(metric.get() - reference) <= 1e-12, size
    by_pair = PrequentialAUC(**k, standardized=False)
    for label, score in zip(y.tolist(), s.tolist()):  # scalars, held then counted
        by_pair.update(label, score)
    assert abs(by_pair.get() - roc_auc(y, s, **k, standardized=False)) <= 1e-12


@pytest.mark.parametrize("max_fpr, min_tpr", REGIONS)
@pytest.mark.parametrize("window", [1, 40, 400])
def test_rolling_equals_batch_of_the_window_for_every_chunking(max_fpr, min_tpr, window):
    y, s = stream(700, 0.1, 1, seed=8)
    k = kwargs(max_fpr, min_tpr)
    for size in [1, 7, 250, y.size]:
        metric = RollingAUC(window, **k)
        for lo in range(0, y.size, size):
            metric.update(y[lo : lo + size], s[lo : lo + size])
            hi = min(lo + size, y.size)
            if size == 250 or (size == 7 and lo % 70 == 0) or hi == y.size:
                last = slice(max(0, hi - window), hi)
                yw, sw = y[last], s[last]
                expected = np.nan if np.unique(yw).size < 2 else roc_auc(yw, sw, **k)
                value = metric.get()
                assert abs(value - expected) <= 1e-12 or (np.isnan(value) and np.isnan(expected))


def test_rolling_peek_with_a_partial_auc_is_the_update_it_does_not_make():
    y, s = stream(300, 0.3, 1, seed=9)
    metric = RollingAUC(50, max_fpr=0.2, min_tpr=0.3).update(y[:100], s[:100])
    before = snapshot(metric)
    peeked = metric._peek(y[100:120], s[100:120])
    assert_same_state(before, snapshot(metric))
    assert peeked == metric.update(y[100:120], s[100:120]).get()


def test_merge_equals_the_concatenation_and_refuses_other_regions():
    y, s = stream(2000, 0.1, 1, seed=10)
    mine = np.random.default_rng(10).random(y.size) < 0.4
    for max_fpr, min_tpr in REGIONS:
        k = kwargs(max_fpr, min_tpr)
        a = PrequentialAUC(**k).update(y[mine], s[mine])
        b = PrequentialAUC(**k).update(y[~mine], s[~mine])
        assert a.merge(b) is a
        assert abs(a.get() - roc_auc(np.r_[y[mine], y[~mine]], np.r_[s[mine], s[~mine]], **k)) <= (
            1e-12
        )
    a = PrequentialAUC(max_fpr=0.1).update(y[:100], s[:100])
    before = snapshot(a)
    for other in [
        PrequentialAUC(),
        PrequentialAUC(max_fpr=0.2),
        PrequentialAUC(max_fpr=0.1, min_tpr=0.0),
        PrequentialAUC(max_fpr=0.1, standardized=False),
    ]:
        with pytest.raises(ValueError, match="cannot merge metrics of max_fpr=0.1"):
            a.merge(other.update(y[100:200], s[100:200]))
        assert_same_state(before, snapshot(a))
    # the same region spelt two ways; standardized does not matter for the whole AUC
    PrequentialAUC(min_tpr=0.5).merge(PrequentialAUC(max_fpr=1, min_tpr=0.5))
    PrequentialAUC().merge(PrequentialAUC(max_fpr=1.0, standardized=False))


@pytest.mark.parametrize(
    "make_metric",
    [
        lambda: PrequentialAUC(max_fpr=0.1, min_tpr=0.5),
        lambda: PrequentialAUC(max_fpr=0.3, standardized=False),
        lambda: RollingAUC(170, max_fpr=0.2),
    ],
)
def test_pickle_round_trip_resumes_identically(make_metric):
    y, s = stream(600, 0.2, 1, seed=13)
    metric = make_metric().update(y[:300], s[:300]).update(1, 0.5)  # one pair held
    copied = pickle.loads(pickle.dumps(metric))
    assert_same_state(snapshot(metric), snapshot(copied))
    assert repr(copied) == repr(metric) and copied.get() == metric.get()
    copied._check_state()
    metric.update(y[300:], s[300:])
    copied.update(y[300:], s[300:])
    assert copied.get() == metric.get()
    broken = copy.deepcopy(copied)
    broken.max_fpr = 1.5
    with pytest.raises(ValueError, match="max_fpr"):
        broken._check_state()
    if isinstance(copied, PrequentialAUC):
        broken = copy.deepcopy(copied)
        broken.max_memory = 100
        with pytest.raises(ValueError, match="cannot be binned"):
            broken._check_state()


def test_repr_names_the_region():
    metric = PrequentialAUC(max_fpr=0.5, standardized=False)
    metric.update([0, 0, 0, 0, 1, 1], [0.1, 0.2, 0.3, 0.9, 0.4, 0.8])
    assert repr(metric) == (
        "PrequentialAUC(max_fpr=0.5, standardized=False, auc=0.25, n_positive=2, n_negative=4)"
    )
    assert repr(RollingAUC(3, min_tpr=0.5)).startswith("RollingAUC(window=3, min_tpr=0.5, auc=nan")
