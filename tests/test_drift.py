"""aucstream.drift: River parity, chunk invariance, the exact ranking signal, robustness."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import roc_auc_score

from aucstream._config import config_context
from aucstream.drift import ADWIN, AUCDriftDetector, PageHinkley, RankSignal

river_drift = pytest.importorskip("river.drift")


def _streams(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "bernoulli_change": np.r_[rng.random(2500) < 0.2, rng.random(2500) < 0.5].astype(float),
        "gaussian_shift": np.r_[rng.normal(0, 1, 2500), rng.normal(0.6, 1, 2500)],
        "stationary": rng.normal(0.3, 1, 5000),
    }


_SETTINGS = [
    (PageHinkley, {}),
    (PageHinkley, {"threshold": 8.0, "mode": "up", "min_instances": 5}),
    (PageHinkley, {"threshold": 8.0, "mode": "down", "delta": 0.05, "alpha": 0.99}),
    (ADWIN, {}),
    (ADWIN, {"delta": 0.2, "clock": 1, "grace_period": 0}),
    (ADWIN, {"delta": 0.05, "clock": 7, "max_buckets": 2, "min_window_length": 1}),
]


def _river(cls, params):
    return getattr(river_drift, cls.__name__)(**params)


def _river_alarms(detector, values) -> list[int]:
    found = []
    for i, x in enumerate(values):
        detector.update(float(x))
        if detector.drift_detected:
            found.append(i)
    return found


def _state(obj) -> bytes:
    return pickle.dumps(obj)


@pytest.mark.parametrize("stream", ["bernoulli_change", "gaussian_shift", "stationary"])
@pytest.mark.parametrize(("cls", "params"), _SETTINGS)
def test_same_alarms_as_river(cls, params, stream):
    values = _streams()[stream]
    ours = cls(**params).update_many(values)
    theirs = _river_alarms(_river(cls, params), values)
    assert ours.tolist() == theirs
    if stream != "stationary" and not params:  # the defaults see the change
        assert any(i >= 2500 for i in theirs)


def test_adwin_window_equals_rivers_at_every_step():
    rng = np.random.default_rng(1)
    values = np.r_[rng.normal(0, 1, 700), rng.normal(1.5, 2, 700)]
    for params in ({}, {"delta": 0.1, "clock": 3, "max_buckets": 2}):
        ours, theirs = ADWIN(**params), river_drift.ADWIN(**params)
        detections = 0
        for x in values:
            ours.update(x)
            theirs.update(x)
            detections += theirs.drift_detected
            assert ours.drift_detected == theirs.drift_detected
            assert ours.width == theirs.width
            assert ours.estimation == pytest.approx(theirs.estimation, abs=1e-9)
            assert ours.total == pytest.approx(theirs.total, abs=1e-9)
            assert ours.variance == pytest.approx(theirs.variance, rel=1e-9, abs=1e-9)
        assert detections >= 1 and ours.n_detections == detections


def test_page_hinkley_mean_equals_rivers():
    values = _streams()["gaussian_shift"][:800]
    ours, theirs = PageHinkley(threshold=5.0), river_drift.PageHinkley(threshold=5.0)
    for x in values:
        ours.update(x)
        theirs.update(x)
        assert ours.drift_detected == theirs.drift_detected
        assert ours.n_seen == theirs._x_mean.n
        assert ours.estimation == theirs._x_mean.get()


@pytest.mark.parametrize(("cls", "params"), _SETTINGS)
def test_update_many_is_update_one_by_one(cls, params):
    values = _streams(3)["gaussian_shift"][:3000].copy()
    values[[5, 900, 2999]] = np.nan  # skipped
    one = cls(**params)
    expected = []
    for i, x in enumerate(values):
        before = one.drift_detected
        one.update(x)
        if np.isnan(x):
            assert one.drift_detected == before
        elif one.drift_detected:
            expected.append(i)
    assert expected, "choose settings that raise alarms"
    for chunk in (1, 7, 32, 1000, 3000):
        det = cls(**params)
        alarms = [
            a + s
            for s in range(0, values.size, chunk)
            for a in det.update_many(values[s : s + chunk])
        ]
        assert alarms == expected
        assert _state(det) == _state(one)


def test_nan_changes_nothing():
    for det in (ADWIN(), PageHinkley()):
        det.update_many(_streams()["stationary"][:100])
        before = _state(det)
        det.update(float("nan"))
        assert det.update_many([np.nan, np.nan]).size == 0
        assert _state(det) == before


# --- RankSignal ---------------------------------------------------------------------


def _brute_signal(scores, labels, window, positive, min_other=1):
    recent = {label: [] for label in set(labels)}
    out = []
    for s, y in zip(scores, labels):
        others = [v for k, lst in recent.items() if k != y for v in lst[-window:]]
        if len(others) < min_other:
            out.append(np.nan)
        else:
            others = np.array(others)
            if y == positive:
                good = 2 * np.sum(others < s) + np.sum(others == s)
            else:
                good = 2 * np.sum(others > s) + np.sum(others == s)
            out.append(good / (2.0 * others.size))
        recent[y].append(s)
    return np.array(out)


@pytest.mark.parametrize("window", [1, 3, 50, 10_000])
def test_rank_signal_is_exact(window):
    rng = np.random.default_rng(window)
    n = 1500
    labels = (rng.random(n) < 0.2).astype(int)
    scores = rng.integers(0, 12, n) + 3.0 * labels  # many ties
    min_other = min(window, 4)
    expected = _brute_signal(scores, labels, window, 1, min_other)
    one = RankSignal(window, min_other)
    got = np.array([one.update(s, y) for s, y in zip(scores, labels)])
    np.testing.assert_array_equal(got, expected)
    for chunk in (5, 333, n):
        sig = RankSignal(window, min_other)
        parts = [
            sig.update_many(scores[i : i + chunk], labels[i : i + chunk])
            for i in range(0, n, chunk)
        ]
        np.testing.assert_array_equal(np.concatenate(parts), expected)
        assert _state(sig) == _state(one)


@pytest.mark.parametrize("trend", [1.0, -1.0])
def test_rank_signal_is_exact_when_the_scores_move(trend):
    """Scores that rise (or fall) with time: every new score lands in the last (first)
    bucket of its class and every removed one leaves the other end, so buckets fill and
    empty again and again (spread afresh); drawn from a few values, so they tie."""
    rng = np.random.default_rng(7)
    n, window = 3000, 90
    labels = (rng.random(n) < 0.3).astype(int)
    scores = np.round(trend * np.arange(n) / 40 + rng.normal(size=n) + labels)
    expected = _brute_signal(scores, labels, window, 1)
    for chunk in (1, 97, n):
        sig = RankSignal(window)
        got = [
            sig.update_many(scores[i : i + chunk], labels[i : i + chunk])
            for i in range(0, n, chunk)
        ]
        np.testing.assert_array_equal(np.concatenate(got), expected)
        for k in range(2):  # the state: each class's last scores, sorted
            kept = scores[labels == k][-window:]
            np.testing.assert_array_equal(sig._ranked[k, : kept.size], np.sort(kept))


def test_rank_signal_labels():
    rng = np.random.default_rng(5)
    labels = np.where(rng.random(300) < 0.3, 1, -1)
    scores = rng.normal(size=300) + labels
    expected = _brute_signal(scores, labels, 40, positive=1)
    np.testing.assert_array_equal(RankSignal(40).update_many(scores, labels), expected)
    words = np.where(labels == 1, "spam", "ham")  # "spam" > "ham": positive
    np.testing.assert_array_equal(RankSignal(40).update_many(scores, words), expected)
    flipped = RankSignal(40, pos_label=-1).update_many(-scores, labels)
    np.testing.assert_array_equal(flipped, _brute_signal(-scores, labels, 40, positive=-1))
    booleans = RankSignal(40).update_many(scores, labels == 1)
    np.testing.assert_array_equal(booleans, expected)
    # once both labels are known, a chunk's labels are matched to them (any dtype)
    zero_one, sig = (labels == 1).astype(int), RankSignal(40)
    parts = [
        sig.update_many(scores[:100], zero_one[:100]),
        sig.update_many(scores[100:200], zero_one[100:200].astype(float)),
        sig.update_many(scores[200:], zero_one[200:] == 1),
    ]
    np.testing.assert_array_equal(np.concatenate(parts), expected)
    before = _state(sig)
    with pytest.raises(ValueError, match=r"labels\[1\] = 2 is a third label"):
        sig.update_many([0.1, 0.2], [1, 2])
    assert _state(sig) == before


def test_rank_signal_identity_and_mean():
    """Each pair is counted once, by its later member: sum m_t r_t = n+ n- AUC."""
    rng = np.random.default_rng(7)
    n = 4000
    labels = (rng.random(n) < 0.1).astype(int)
    scores = np.round(rng.normal(size=n) + labels, 1)  # ties
    values = RankSignal(window=n).update_many(scores, labels)
    seen_pos = np.cumsum(labels) - labels  # opposite-class examples before each one
    seen_neg = np.cumsum(1 - labels) - (1 - labels)
    m = np.where(labels == 1, seen_neg, seen_pos)
    assert np.all(np.isnan(values) == (m == 0))
    pair_count = np.nansum(2 * m * values)  # 2 #correct + #tied, each an integer
    n_pos, n_neg = labels.sum(), n - labels.sum()
    assert pair_count == pytest.approx(2 * n_pos * n_neg * roc_auc_score(labels, scores), rel=1e-12)
    # stationary: the plain mean of the signal estimates the AUC
    assert abs(np.nanmean(values) - roc_auc_score(labels, scores)) < 0.01
    windowed = RankSignal(window=200).update_many(scores, labels)
    assert abs(np.nanmean(windowed) - roc_auc_score(labels, scores)) < 0.01


# --- AUCDriftDetector ---------------------------------------------------------------


def _auc_stream(n=12_000, change=6000, seed=0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.1).astype(int)
    good = y * 1.5 + rng.normal(size=n)
    scores = np.where(np.arange(n) < change, good, rng.normal(size=n))  # AUC 0.86 -> 0.5
    return scores, y


def _reference_alarms(river_detector, scores, y, window, restart, min_other=30):
    """River's detector on RankSignal's values, value by value; a fresh signal after
    each alarm when ``restart``."""
    signal, found = RankSignal(window, min_other), []
    for i, (s, label) in enumerate(zip(scores, y)):
        value = signal.update(s, label)
        if np.isnan(value):
            continue
        river_detector.update(value)
        if river_detector.drift_detected:
            found.append(i)
            if restart:
                signal = RankSignal(window, min_other)
    return found


@pytest.mark.parametrize(("restart", "min_other"), [(True, 30), (False, 30), (True, 1)])
def test_auc_detector_finds_the_change_like_river_fed_the_same_signal(restart, min_other):
    scores, y = _auc_stream(7000, 3500, seed=1)
    for ours, params in [(None, {}), (PageHinkley(threshold=30.0), {"threshold": 30.0})]:
        det = AUCDriftDetector(ours, window=300, min_other=min_other, restart_signal=restart)
        alarms = det.update_many(scores, y)
        assert alarms.size >= 1 and 3500 <= alarms[0] < 5000
        if restart and ours is None:
            assert alarms.size == 1  # one change, one alarm
        assert det.n_detections == alarms.size
        cls = PageHinkley if params else ADWIN
        expected = _reference_alarms(_river(cls, params), scores, y, 300, restart, min_other)
        assert alarms.tolist() == expected
        river_inside = AUCDriftDetector(
            _river(cls, params), window=300, min_other=min_other, restart_signal=restart
        )
        assert river_inside.update_many(scores, y).tolist() == expected


@pytest.mark.parametrize("restart", [True, False])
def test_auc_detector_chunking_update_and_reset(restart):
    scores, y = _auc_stream(3000, 1500, seed=2)

    def make():
        return AUCDriftDetector(
            PageHinkley(threshold=10.0), window=200, min_other=5, restart_signal=restart
        )

    det = make()
    expected = det.update_many(scores, y)
    one = make()
    got = [i for i in range(scores.size) if one.update(scores[i], y[i]).drift_detected]
    assert got == expected.tolist() and expected.size >= 2
    assert _state(one) == _state(det)
    for chunk in (1, 250, 1777, 3000):
        chunked = make()
        parts = [
            chunked.update_many(scores[i : i + chunk], y[i : i + chunk]) + i
            for i in range(0, 3000, chunk)
        ]
        assert np.concatenate(parts).tolist() == expected.tolist()
        assert _state(chunked) == _state(det)
    assert _state(det.reset()) == _state(make())


@pytest.mark.parametrize(
    "make", [lambda: AUCDriftDetector(), lambda: AUCDriftDetector(PageHinkley(threshold=5.0), 100)]
)
def test_pickle_resume_is_one_pass(make):
    scores, y = _auc_stream(8000, 4000, seed=4)
    whole = make().update_many(scores, y)
    first = make()
    head = first.update_many(scores[:3001], y[:3001])
    resumed = pickle.loads(pickle.dumps(first))
    tail = resumed.update_many(scores[3001:], y[3001:]) + 3001
    assert np.concatenate([head, tail]).tolist() == whole.tolist()
    assert _state(resumed) == _state(_replay(make, scores, y))


def _replay(make, scores, y):
    det = make()
    det.update_many(scores, y)
    return det


def test_clone_keeps_parameters_not_history():
    det = AUCDriftDetector(ADWIN(delta=0.01, clock=8), window=77, pos_label=1)
    scores, y = _auc_stream(3000, 1500)
    det.update_many(scores, y)
    copy = clone(det)
    assert copy.get_params()["window"] == 77 and copy.detector.get_params()["delta"] == 0.01
    assert _state(copy) == _state(
        AUCDriftDetector(ADWIN(delta=0.01, clock=8), window=77, pos_label=1)
    )
    assert clone(PageHinkley(mode="up")).get_params() == PageHinkley(mode="up").get_params()


# --- robustness ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda: ADWIN(delta=0), ValueError),
        (lambda: ADWIN(delta=1.0), ValueError),
        (lambda: ADWIN(delta=True), ValueError),
        (lambda: ADWIN(clock=0), ValueError),
        (lambda: ADWIN(clock=2.5), ValueError),
        (lambda: ADWIN(max_buckets=True), ValueError),
        (lambda: ADWIN(grace_period=-1), ValueError),
        (lambda: PageHinkley(threshold=0), ValueError),
        (lambda: PageHinkley(threshold=-1.0), ValueError),
        (lambda: PageHinkley(threshold=float("inf")), ValueError),
        (lambda: PageHinkley(delta=-0.1), ValueError),
        (lambda: PageHinkley(alpha=0.0), ValueError),
        (lambda: PageHinkley(alpha=1.5), ValueError),
        (lambda: PageHinkley(min_instances=True), ValueError),
        (lambda: PageHinkley(mode="sideways"), ValueError),
        (lambda: RankSignal(window=0), ValueError),
        (lambda: RankSignal(window=True), ValueError),
        (lambda: RankSignal(window=10.0), ValueError),
        (lambda: RankSignal(window=10, min_other=11), ValueError),
        (lambda: RankSignal(min_other=0), ValueError),
        (lambda: AUCDriftDetector(min_other=False), ValueError),
        (lambda: AUCDriftDetector(restart_signal=1), ValueError),
        (lambda: RankSignal(pos_label=[1]), TypeError),
        (lambda: AUCDriftDetector(window=-5), ValueError),
        (lambda: AUCDriftDetector(detector="ADWIN"), TypeError),
        (lambda: AUCDriftDetector(detector=ADWIN), TypeError),
    ],
)
def test_bad_parameters(make, error):
    with pytest.raises(error):
        make()


def test_memory_budget():
    with config_context(memory_budget=10_000):
        RankSignal(window=300)
        with pytest.raises(ValueError, match="memory_budget"):
            RankSignal(window=1000)
        with pytest.raises(ValueError, match="memory_budget"):
            AUCDriftDetector(window=1000)
        with pytest.raises(ValueError, match="memory_budget"):
            ADWIN(max_buckets=100)


@pytest.mark.parametrize("cls", [ADWIN, PageHinkley])
@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda d: d.update(float("inf")), ValueError),
        (lambda d: d.update("1.0"), TypeError),
        (lambda d: d.update(None), TypeError),
        (lambda d: d.update(1 + 2j), TypeError),
        (lambda d: d.update_many([0.1, np.inf]), ValueError),
        (lambda d: d.update_many(["a", "b"]), TypeError),
        (lambda d: d.update_many([[0.1, 0.2]]), ValueError),
        (lambda d: d.update_many(0.5), ValueError),
        (lambda d: d.update_many(np.array([1, None], dtype=object)), TypeError),
    ],
)
def test_refused_values_change_nothing(cls, call, error):
    det = cls(threshold=5.0) if cls is PageHinkley else cls(delta=0.1)
    det.update_many(_streams()["gaussian_shift"][:2600])
    before = _state(det)
    with pytest.raises(error):
        call(det)
    assert _state(det) == before


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda d: d.update_many([0.1, np.nan], [0, 1]), ValueError),
        (lambda d: d.update_many([0.1, -np.inf], [0, 1]), ValueError),
        (lambda d: d.update_many([0.1, 0.2], [0, 1, 1]), ValueError),
        (lambda d: d.update_many([[0.1, 0.2]], [[0, 1]]), ValueError),
        (lambda d: d.update_many(["x", "y"], [0, 1]), TypeError),
        (lambda d: d.update_many([0.1, 0.2, 0.3], [0, 1, 2]), ValueError),
        (lambda d: d.update_many([0.1, 0.2], [0.0, np.nan]), ValueError),
        (lambda d: d.update_many([0.1, 0.2], [0, "a"]), ValueError),
        (lambda d: d.update_many([0.1], [None]), TypeError),
        (lambda d: d.update(float("nan"), 1), ValueError),
        (lambda d: d.update("0.3", 1), TypeError),
        (lambda d: d.update(0.3, 7), ValueError),
        (lambda d: d.update(0.3, None), TypeError),
    ],
)
@pytest.mark.parametrize("make", [lambda: RankSignal(50), lambda: AUCDriftDetector(window=50)])
def test_refused_examples_change_nothing(make, call, error):
    det = make()
    scores, y = _auc_stream(400, 200)
    det.update_many(scores, y)
    before = _state(det)
    with pytest.raises(error):
        call(det)
    assert _state(det) == before


def test_unorderable_labels_need_pos_label():
    sig = RankSignal(10)
    sig.update_many([0.1, 0.2], [0, 0])
    before = _state(sig)
    with pytest.raises(TypeError, match="pos_label"):
        sig.update(0.3, "a")
    assert _state(sig) == before
    assert np.isfinite(RankSignal(10, pos_label="a").update_many([0.1, 0.3], [0, "a"])[1])
