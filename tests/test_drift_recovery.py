"""The one pass that recovers (``drift="auto"``): the race reopens after a change,
stays exact on a stationary stream, and keeps its state through chunking, saving
and resuming; selection by partial AUC (``max_fpr``)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from aucstream import (
    OPAUC,
    OnePassSearch,
    StreamPipeline,
    UnivariateOnline,
    config_context,
    load_model,
    save_model,
)
from aucstream._params import FORGETTING, InvalidParameterError
from aucstream.drift import ADWIN, PageHinkley
from aucstream.metrics import roc_auc
from aucstream.preprocessing import OnlineStandardScaler

CHANGE = 12000


def small_search(**kw):
    """A search over a few candidates (the default list costs more time)."""
    candidates = [OPAUC(eta=2**-6), OPAUC(eta=2**-9), UnivariateOnline(eta=2**-6)]
    return OnePassSearch(candidates, **kw)


def concepts(n=CHANGE, k=2, d=8, rate=0.2, seed=0):
    """``k`` concepts of ``n`` rows each: a new random linear rule per concept."""
    rng = np.random.default_rng(seed)
    Xs, ys = [], []
    for _ in range(k):
        w = rng.normal(size=d)
        X = rng.normal(size=(n, d))
        s = X @ w / np.linalg.norm(w) + 0.3 * rng.normal(size=n)
        ys.append((s > np.quantile(s, 1 - rate)).astype(int))
        Xs.append(X)
    return np.vstack(Xs), np.concatenate(ys)


@pytest.fixture(scope="module")
def abrupt():
    return concepts()


def test_default_pipeline_recovers_after_an_abrupt_change(abrupt):
    X, y = abrupt
    recovering = StreamPipeline()
    scores = recovering.test_then_train(X, y)
    stationary = StreamPipeline(drift=None).test_then_train(X, y)
    after = slice(CHANGE + 5000, None)
    gain = roc_auc(y[after], scores[after]) - roc_auc(y[after], stationary[after])
    assert gain > 0.04, gain
    race = recovering.estimator_.race_
    assert race[1] >= 1  # reopened
    assert CHANGE < race[3] < CHANGE + 4000  # the alarm came after the change, soon
    board = recovering.estimator_.leaderboard_
    assert (board["first_example"] > CHANGE).any()  # newcomers started after it
    # before the change both learn the same concept (an unconfirmed alarm reopens nothing)
    before = slice(4000, CHANGE)
    assert abs(roc_auc(y[before], scores[before]) - roc_auc(y[before], stationary[before])) < 0.01


def test_stationary_stream_raises_no_alarm_and_equals_drift_none():
    X, y = concepts(k=1, n=20000, seed=5)
    auto = OnePassSearch()
    none = OnePassSearch(drift=None)
    a = auto.test_then_train(X, y)
    b = none.test_then_train(X, y)
    assert auto.race_[2] == 0 and auto.race_[1] == 0
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(auto.decision_function(X[:500]), none.decision_function(X[:500]))
    assert auto.leaderboard_.equals(none.leaderboard_)
    # the pipeline with the same steps: the same, bit for bit
    scaler = OnlineStandardScaler(half_life=10_000.0)
    p_auto = StreamPipeline(scaler, OnePassSearch()).test_then_train(X, y)
    p_none = StreamPipeline(scaler, OnePassSearch(drift=None)).test_then_train(X, y)
    np.testing.assert_array_equal(p_auto, p_none)


def _arrays(model) -> dict:
    """Every state array of a learner and of its components, by path."""
    from aucstream._state import is_state_name, state_items

    out = {}

    def walk(v, path):
        if isinstance(v, np.ndarray):
            out[path] = v
        elif isinstance(v, (list, tuple)):
            for i, u in enumerate(v):
                walk(u, f"{path}/{i}")
        elif type(v).__module__.startswith("aucstream") and hasattr(v, "__dict__"):
            for k, u in vars(v).items():
                if is_state_name(k) or k.startswith("_") and not k.startswith("__"):
                    walk(u, f"{path}.{k}")

    for k, v in state_items(model).items():
        walk(v, k)
    return out


def assert_same_state(a, b):
    a, b = _arrays(a), _arrays(b)
    assert sorted(a) == sorted(b)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


def test_reopened_race_survives_chunking_save_load_and_resume(abrupt, tmp_path):
    X, y = abrupt
    X, y = X[: CHANGE + 6000], y[: CHANGE + 6000]
    # the search alone: a pipeline holding a search with given candidates does not load
    # (its estimator_'s candidates parameter is read back as fitted components)
    whole = small_search()
    scores = whole.test_then_train(X, y)
    assert whole.race_[1] >= 1
    cut = CHANGE + 2500  # after the reopening, with the new race under way
    first = small_search()
    parts = [
        first.test_then_train(X[a : min(a + 777, cut)], y[a : min(a + 777, cut)])
        for a in range(0, cut, 777)
    ]
    assert first.race_[1] >= 1 and first.n_samples_seen_ == cut
    assert first.race_[0] > cut - 2000  # the reopened race is under way
    path = save_model(first, tmp_path / "mid")
    resumed = load_model(path)
    rest = [
        resumed.test_then_train(X[a : a + 1000], y[a : a + 1000]) for a in range(cut, len(y), 1000)
    ]
    np.testing.assert_array_equal(np.concatenate(parts + rest), scores)  # bit for bit
    assert_same_state(resumed, whole)
    np.testing.assert_array_equal(
        resumed.decision_function(X[:300]), whole.decision_function(X[:300])
    )


@pytest.mark.parametrize("bad", ["always", "Auto", 1, True, 0.5, ADWIN, OPAUC()])
def test_bad_drift_values_are_refused_before_any_change(bad):
    X, y = concepts(n=600, k=1, seed=2)
    for model in (
        OnePassSearch([UnivariateOnline(), UnivariateOnline(eta=2**-8)], first_round=200),
        StreamPipeline(),
    ):
        with pytest.raises(InvalidParameterError, match="drift"):
            model.set_params(drift=bad).fit(X, y)
        assert not hasattr(model, "n_samples_seen_")
        model.set_params(drift="auto").partial_fit(X[:300], y[:300])
        before = copy.deepcopy(model)
        model.set_params(drift=bad)
        with pytest.raises(InvalidParameterError, match="drift"):
            model.partial_fit(X[300:], y[300:])
        assert_same_state(model, before)


def test_a_given_detector_watches_and_none_has_no_watch():
    X, y = concepts(n=4000, seed=3)
    search = OnePassSearch(
        [OPAUC(eta=2**-4), OPAUC(eta=2**-8)],
        first_round=500,
        drift=PageHinkley(mode="down", threshold=30.0),
    ).fit(X, y)
    watch = search.drift_.detector_
    assert isinstance(watch, PageHinkley) and watch.threshold == 30.0 and watch.mode == "down"
    assert search.race_[1] >= 1 and 4000 < search.race_[3] < 5000
    none = OnePassSearch([UnivariateOnline()], drift=None).fit(X, y)
    assert none.drift_ is None and len(none.candidates_) == 1


class ForgettingStandIn(UnivariateOnline):
    """A learner whose class takes ``half_life`` (stands in for the forgetting learners;
    it accepts the parameter and forgets nothing)."""

    _parameter_constraints = {**UnivariateOnline._parameter_constraints, **FORGETTING}

    def __init__(self, eta=2**-6, half_life=None):
        super().__init__(eta=eta)
        self.half_life = half_life


def test_a_reopened_race_starts_forgetting_candidates_when_their_class_takes_half_life():
    from aucstream._race_drift import _FRESH_HALF_LIFE

    X, y = concepts(n=4000, seed=3)
    search = OnePassSearch(
        [OPAUC(eta=2**-4), ForgettingStandIn(eta=2**-8)],
        first_round=500,
        drift=PageHinkley(mode="down", threshold=30.0),
    ).fit(X, y)
    assert search.race_[1] >= 1
    first, fresh = search.candidates_[:2], search.candidates_[2:]
    assert first[1].half_life is None  # the first race: the candidates as given
    assert fresh[1].half_life == _FRESH_HALF_LIFE  # a fresh one forgets
    # OPAUC takes half_life too (issue 30): its fresh copy forgets, the rest as given
    assert fresh[0].get_params() == OPAUC(eta=2**-4, half_life=_FRESH_HALF_LIFE).get_params()
    assert (search.started_at_[2:] == search.race_[0]).all() or search.race_[1] > 1


def test_partial_auc_learners_join_when_aucstream_pauc_exists(monkeypatch):
    import sys
    import types

    from aucstream._pauc_race import pauc_candidates

    assert pauc_candidates(0.05) == [] or "aucstream.pauc" in sys.modules

    class PartialStandIn(UnivariateOnline):
        _parameter_constraints = {**UnivariateOnline._parameter_constraints, "max_fpr": [float]}

        def __init__(self, eta=2**-6, max_fpr=1.0):
            super().__init__(eta=eta)
            self.max_fpr = max_fpr

    fake = types.ModuleType("aucstream.pauc")
    fake.__all__ = ["PartialStandIn", "roc_like"]
    fake.PartialStandIn, fake.roc_like = PartialStandIn, roc_auc
    monkeypatch.setitem(sys.modules, "aucstream.pauc", fake)
    import aucstream

    monkeypatch.setattr(aucstream, "pauc", fake, raising=False)
    found = pauc_candidates(0.05)
    found = [c for c in found if type(c).__module__ not in ("aucstream.pauci", "aucstream.lspauc")]
    assert [type(c) for c in found] == [PartialStandIn] and found[0].max_fpr == 0.05
    X, y = concepts(n=300, k=1, seed=6)
    search = OnePassSearch(max_fpr=0.05, drift=None).fit(X, y)
    assert any(isinstance(c, PartialStandIn) for c in search.candidates_)
    assert not any(isinstance(c, PartialStandIn) for c in OnePassSearch(drift=None)._first_list(8))


def test_max_fpr_races_by_the_exact_partial_auc():
    X, y = concepts(n=3000, k=1, seed=4)
    search = OnePassSearch(
        [UnivariateOnline(eta=2**-4), OPAUC(eta=2**-6)],
        first_round=10**6,
        window=1500,
        max_fpr=0.1,
        ensemble=1,
    )
    search.fit(X, y)
    alone = UnivariateOnline(eta=2**-4).test_then_train(X, y)
    board = search.leaderboard_.loc[0]
    want = roc_auc(y[-1500:], alone[-1500:], max_fpr=0.1)  # guarded (aucstream._pauc_race)
    want = 0.5 * want + 0.5 * roc_auc(y[-1500:], alone[-1500:])
    assert board["recent_auc"] == pytest.approx(want, abs=1e-12)
    assert board["prequential_auc"] == pytest.approx(roc_auc(y, alone), abs=1e-12)
    pipe = StreamPipeline(max_fpr=0.05)
    pipe.partial_fit(X[:100], y[:100])
    assert pipe.estimator_.max_fpr == 0.05
    with pytest.raises(InvalidParameterError, match="max_fpr"):
        OnePassSearch(max_fpr=0.0).fit(X[:50], y[:50])
    with pytest.raises(InvalidParameterError, match="max_fpr"):
        StreamPipeline(max_fpr=True).fit(X[:50], y[:50])


@pytest.mark.parametrize("fast_path", [True, False])
def test_one_row_calls_across_a_reopening_equal_one_pass(abrupt, fast_path):
    X, y = abrupt
    with config_context(fast_path=fast_path):
        _one_rows_equal_one_pass(X, y)


def _one_rows_equal_one_pass(X, y):
    n = CHANGE + 3000
    whole = StreamPipeline(OnlineStandardScaler(half_life=10_000.0), small_search())
    scores = whole.test_then_train(X[:n], y[:n])
    assert whole.estimator_.race_[1] >= 1
    alarm = int(whole.estimator_.race_[3])
    start = alarm - 50  # one row at a time through the alarm and the reopening
    rows = StreamPipeline(OnlineStandardScaler(half_life=10_000.0), small_search())
    got = [rows.test_then_train(X[:start], y[:start])]
    got += [rows.test_then_train(X[i : i + 1], y[i : i + 1]) for i in range(start, alarm + 600)]
    got.append(rows.test_then_train(X[alarm + 600 : n], y[alarm + 600 : n]))
    assert rows.estimator_.race_[0] <= alarm + 600  # the reopening came in a one-row call
    np.testing.assert_array_equal(np.concatenate(got), scores)
    assert_same_state(rows, whole)


def test_a_pipeline_with_a_forgetting_scaler_merges():
    X, y = concepts(n=400, k=1, seed=8)

    def make():
        return StreamPipeline(OnlineStandardScaler(half_life=10_000.0), OPAUC(eta=2**-6))

    a = make().fit(X[:200], y[:200])
    b = make().fit(X[200:], y[200:])
    one = make().fit(X, y)
    a.merge(b)
    assert a.n_samples_seen_ == 400
    np.testing.assert_allclose(a.transformer_.mean_, one.transformer_.mean_, atol=1e-12)
    np.testing.assert_allclose(a.transformer_.var_, one.transformer_.var_, rtol=1e-10)


def test_a_rejected_call_across_a_reopening_changes_nothing(abrupt, monkeypatch):
    """The reopening starts fresh slots and retires candidates inside the call; the
    call's transaction leaves the idle candidates out (``untouched``) and still
    restores every bit when the call fails after the reopening."""
    from conftest import assert_same_state as same_bits
    from conftest import snapshot

    from aucstream import _race_drift
    from aucstream._state import state_items

    X, y = abrupt
    model = StreamPipeline(OnlineStandardScaler(half_life=10_000.0), small_search())
    model.partial_fit(X[:CHANGE], y[:CHANGE])
    search = model.estimator_
    assert search.race_[1] == 0 and _race_drift.untouched(search)  # dropped ones
    before = snapshot(dict(state_items(model)))
    reopen = _race_drift.reopen

    def reopen_then_fail(s):
        reopen(s)
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(_race_drift, "reopen", reopen_then_fail)
        with pytest.raises(KeyboardInterrupt):
            model.partial_fit(X[CHANGE : CHANGE + 3000], y[CHANGE : CHANGE + 3000])
    same_bits(before, snapshot(dict(state_items(model))))
    whole = StreamPipeline(OnlineStandardScaler(half_life=10_000.0), small_search())
    whole.partial_fit(X[: CHANGE + 3000], y[: CHANGE + 3000])
    model.partial_fit(X[CHANGE : CHANGE + 3000], y[CHANGE : CHANGE + 3000])  # and it goes on
    assert model.estimator_.race_[1] >= 1
    assert_same_state(model, whole)
