"""The transactions of a search and of the pipeline that holds it
(:func:`aucstream._race_drift.held_transaction`): a walk kept between calls, the
search's metrics and idle candidates (the waiting fresh slots of ``drift``) opaque.
A call interrupted after the estimator learnt — between metric updates, across a
block end and a round, across a reopening — changes nothing, bit for bit, and the
model then goes on exactly as one that never saw the call."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same_state, snapshot

from aucstream import OPAUC, OnePassSearch, StreamPipeline, UnivariateOnline, _race_drift
from aucstream import search as search_module
from aucstream.drift import ADWIN, PageHinkley
from aucstream.preprocessing import OnlineStandardScaler


def concepts(n=3000, k=2, d=6, rate=0.2, seed=0):
    rng = np.random.default_rng(seed)
    Xs, ys = [], []
    for _ in range(k):
        w = rng.normal(size=d)
        X = rng.normal(size=(n, d)) * np.linspace(0.5, 3.0, d)
        s = X @ w / np.linalg.norm(w) + 0.3 * rng.normal(size=n)
        ys.append((s > np.quantile(s, 1 - rate)).astype(int))
        Xs.append(X)
    return np.vstack(Xs), np.concatenate(ys)


def model(drift="auto", pipeline=True):
    candidates = [OPAUC(eta=2**-6), OPAUC(eta=2**-9), UnivariateOnline(eta=2**-6)]
    detector = PageHinkley(mode="down", threshold=20.0) if drift else None
    search = OnePassSearch(candidates, first_round=500, window=2000, drift=detector)
    return StreamPipeline(OnlineStandardScaler(), search) if pipeline else search


class _Interrupt(BaseException):
    pass


def reopening_call(X, y, drift="auto", pipeline=True, size=256) -> tuple[int, int]:
    """The call (start, end) of ``size`` rows whose learning reopens the race."""
    probe = model(drift, pipeline)
    for a in range(0, len(y), size):
        probe.partial_fit(X[a : a + size], y[a : a + size], classes=[0, 1])
        search = probe.estimator_ if pipeline else probe
        if search.race_[_race_drift.REOPENS]:
            return a, a + size
    raise AssertionError("no reopening")


@pytest.mark.parametrize(
    "pipeline", [True, False, "inside"], ids=["pipeline", "search", "inside-pipeline"]
)
@pytest.mark.parametrize("where", ["quiet", "block", "reopening", "quiet-reopening"])
def test_an_interrupted_call_changes_nothing_and_the_stream_goes_on(where, pipeline, monkeypatch):
    """``inside``: a pipeline's call interrupted inside its search, after the search
    learnt: the search's own transaction is left to the pipeline's
    (:func:`aucstream._race_drift.under_holder`), which undoes it all.
    ``quiet-reopening``: a call too short to reach the reopened race's first round,
    which reaches no metric update (its transaction copies the buffer's columns of
    its rows only) although fresh slots start and write their rows of the buffer."""
    inside, pipeline = pipeline == "inside", bool(pipeline)
    X, y = concepts()
    if not pipeline:  # (no scaler: unit columns)
        X = X / np.linspace(0.5, 3.0, X.shape[1])
    lo, hi = {"quiet": (1000, 1100), "block": (3900, 4400)}.get(where, (0, 0))
    if where.endswith("reopening"):
        size = 100 if where == "quiet-reopening" else 256
        lo, hi = reopening_call(X, y, pipeline=pipeline, size=size)
    learner, reference = model(pipeline=pipeline), model(pipeline=pipeline)
    for m in (learner, reference):
        for a in range(0, lo, 256):
            m.partial_fit(X[a : min(a + 256, lo)], y[a : min(a + 256, lo)], classes=[0, 1])
    search = learner.estimator_ if pipeline else learner
    assert where != "quiet" or search.status_.tolist().count(_race_drift.WAITING) == 3
    assert _race_drift.quiet_call(search, X[lo:hi]) == where.startswith("quiet")
    before = snapshot(vars(learner))
    cls = OnePassSearch if inside else type(learner)
    step = cls._learn_rows

    def learn_then_interrupt(self, *args, **kwargs):
        step(self, *args, **kwargs)
        raise _Interrupt

    with monkeypatch.context() as patch:
        patch.setattr(cls, "_learn_rows", learn_then_interrupt)
        with pytest.raises(_Interrupt):
            learner.partial_fit(X[lo:hi], y[lo:hi])
    assert_same_state(before, snapshot(vars(learner)))
    if where.endswith("reopening"):  # (the call did reopen: the reference's does)
        reference.partial_fit(X[lo:hi], y[lo:hi])
        ref_search = reference.estimator_ if pipeline else reference
        assert ref_search.race_[_race_drift.REOPENS] == 1
        reference = model(pipeline=pipeline)
        for a in range(0, lo, 256):
            reference.partial_fit(X[a : min(a + 256, lo)], y[a : min(a + 256, lo)], classes=[0, 1])
    rest = [learner.test_then_train(X[a : a + 300], y[a : a + 300]) for a in range(lo, len(y), 300)]
    whole = reference.test_then_train(X[lo:], y[lo:])
    np.testing.assert_array_equal(np.concatenate(rest), whole)
    assert_same_state(state(reference), state(learner))


def test_a_pipeline_leaves_its_search_no_transaction_of_its_own(monkeypatch):
    """Inside the pipeline's transaction, which saves all the search's call can write,
    the search makes none of its own, through block ends, rounds and a reopening;
    called directly, it makes its own."""
    X, y = concepts()
    learner = model()
    learner.partial_fit(X[:256], y[:256], classes=[0, 1])  # (the first call: a copy)
    search = learner.estimator_
    owners, held = [], _race_drift.held_transaction

    def spy(owner, *args, **kwargs):
        owners.append(owner)
        return held(owner, *args, **kwargs)

    monkeypatch.setattr(_race_drift, "held_transaction", spy)
    search_module._SHALLOW_WALKS.pop(search, None)
    for a in range(256, len(y), 256):
        learner.partial_fit(X[a : a + 256], y[a : a + 256])
    assert search.race_[_race_drift.REOPENS] >= 1
    assert owners and all(owner is learner for owner in owners)
    assert search not in search_module._SHALLOW_WALKS
    Z = learner.transformer_.transform(X[: search._BLOCK])
    search.partial_fit(Z[:10], y[:10])  # between updates: the search's shallow walk
    assert search in search_module._SHALLOW_WALKS
    search.partial_fit(Z, y[: search._BLOCK])  # to a block end: its own held walk
    assert owners[-1] is search


def state(learner):
    """The state but the generators (two instances draw their own seeds)."""

    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "_rng"}
        if isinstance(value, (list, tuple)):
            return type(value)(strip(v) for v in value)
        return value

    return strip(snapshot(vars(learner)))


def test_drift_none_is_learnt_as_before_through_the_kept_walk():
    """drift=None: the pipeline's calls in 300-row pieces and in one call give the same
    scores and state (its transactions never change what is learnt)."""
    X, y = concepts()
    cut, whole = model(drift=None), model(drift=None)
    parts = [
        cut.test_then_train(X[a : a + 300], y[a : a + 300], classes=[0, 1])
        for a in range(0, len(y), 300)
    ]
    np.testing.assert_array_equal(
        np.concatenate(parts), whole.test_then_train(X, y, classes=[0, 1])
    )
    assert_same_state(state(whole), state(cut))


def handover_stream(seed=1):
    """A concept, then its opposite (the incumbent ranks backwards), 4% positives."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=6)
    X = rng.normal(size=(8000, 6))
    s = X @ w + 0.3 * rng.normal(size=8000)
    s[4000:] *= -1
    y = np.zeros(8000, dtype=int)
    for lo in (0, 4000):
        part = s[lo : lo + 4000]
        y[lo : lo + 4000] = part > np.quantile(part, 0.96)
    return X, y


@pytest.mark.parametrize("z", [2.0, None], ids=["handover", "rounds-only"])
def test_a_reopened_race_hands_the_scoring_over_before_its_round_can(z, monkeypatch):
    """The first round of the race reopened at p (p + 500) lacks min_class positives
    (4% of 500): only the handover crowns a newcomer there, and the scores do not
    depend on how the stream is cut."""
    monkeypatch.setattr(_race_drift, "_HANDOVER_Z", z)
    X, y = handover_stream()

    def make():
        candidates = [UnivariateOnline(eta=2**-8), OPAUC(eta=2**-8)]
        detector = PageHinkley(mode="down", threshold=20.0)
        return OnePassSearch(candidates, first_round=1000, window=4000, drift=detector)

    search, leads = make(), []
    scores = []
    for a in range(0, len(y), 250):
        scores.append(search.test_then_train(X[a : a + 250], y[a : a + 250], classes=[0, 1]))
        leads.append((search.n_samples_seen_, int(search.progress_[2]), int(search.race_[0])))
    assert search.race_[_race_drift.REOPENS] >= 1
    p = next(start for _, _, start in leads if start > 0)
    lead_at_p = next(lead for n, lead, _ in leads if n >= p)
    first = p + _race_drift.first_round(search)
    after = next(lead for n, lead, _ in leads if n >= first)
    if z is None:
        assert after == lead_at_p  # the round waits for positives: the incumbent scores
    else:
        assert after != lead_at_p and after >= 2  # a newcomer took over
    rng = np.random.default_rng(0)
    cuts = np.unique(np.r_[0, rng.integers(1, len(y), 30), len(y)])
    other = make()
    parts = [other.test_then_train(X[a:b], y[a:b], classes=[0, 1]) for a, b in zip(cuts, cuts[1:])]
    np.testing.assert_array_equal(np.concatenate(parts), np.concatenate(scores))
    np.testing.assert_array_equal(other.progress_, search.progress_)


def test_the_watch_restarts_in_place():
    """A new incumbent's watch and a reopening's are the same detector reset (as
    new: ``new_detector``), so the pipeline's kept walk, where it is opaque, stays
    current; an interrupted call restores it (the tests above)."""
    X, y = concepts()
    learner = model()
    learner.partial_fit(X[:256], y[:256], classes=[0, 1])
    search = learner.estimator_
    watch, crowned = search.drift_, set()
    for a in range(256, len(y), 256):
        learner.partial_fit(X[a : a + 256], y[a : a + 256])
        crowned.add(int(search.progress_[2]))
        assert search.drift_ is watch
    assert search.race_[_race_drift.REOPENS] >= 1 and len(crowned) > 1
    watch.reset()
    assert_same_state(snapshot(vars(_race_drift.new_detector(search.drift))), snapshot(vars(watch)))


@pytest.mark.parametrize("drift", ["auto", ADWIN(delta=0.01)])
def test_watch_snapshot_puts_the_watch_back(drift):
    """The transaction's copy of the watch (a copy of each part's attributes for the
    default, the generic snapshot for any other detector) puts it back bit for bit,
    the same objects, after calls that alarm, restart the signal and grow its labels."""
    import pickle

    watch = _race_drift.new_detector(drift)
    rng = np.random.default_rng(3)
    y = (rng.random(4000) < 0.1).astype(int)
    s = rng.normal(size=4000) + y
    for fed in (0, 5, 3000):  # empty, one label only, full windows
        watch.update_many(s[:fed], np.zeros(fed, int) if fed == 5 else y[:fed])
        before, parts = pickle.dumps(watch), (watch.signal_, watch.detector_)
        saved = _race_drift._watch_snapshot(watch)
        assert isinstance(saved, list) == (drift == "auto")
        watch.update_many(-3 * s, y)  # (the AUC falls: alarms, the signal restarts)
        watch.update_many(s[:100], y[:100])
        assert pickle.dumps(watch) != before
        _race_drift._watch_restore(saved)
        assert pickle.dumps(watch) == before
        assert (watch.signal_, watch.detector_) == parts


def _clone_then_set(c):
    """The fresh slot as it was made before: sklearn's clone, then set_params."""
    from sklearn.base import clone

    fresh = clone(c)
    params = fresh.get_params(deep=False)
    if "half_life" in params and params["half_life"] is None:
        fresh.set_params(half_life=_race_drift._FRESH_HALF_LIFE)
    return fresh


@pytest.mark.parametrize("width", [5, 2000])
def test_fresh_candidates_are_clones_with_the_half_life(width):
    """The fresh slots (made reading the parameters once) are what ``clone`` then
    ``set_params`` made: the same class and parameters, new parameter objects."""
    first = search_module.default_candidates(width) + [OPAUC(eta=2**-3, half_life=100.0)]
    fresh = _race_drift.fresh_candidates(first)
    assert len(fresh) == len(first)
    for c, f in zip(first, fresh):
        expected = _clone_then_set(c)
        assert type(f) is type(expected) and f is not c
        assert repr(f.get_params(deep=False)) == repr(expected.get_params(deep=False))
        assert not hasattr(f, "n_samples_seen_")
    assert [f.half_life for f in fresh if "half_life" in f.get_params()][-1] == 100.0


def test_the_declared_idle_candidates_follow_the_statuses(monkeypatch):
    """held_transaction keeps what it declares read-only per statuses while its walk
    is current: at every call, that is what the idle candidates give afresh (through
    drops at rounds and reopenings)."""
    X, y = concepts()
    learner = model()
    checked = []
    plan = _race_drift._state.FlatState.plan

    def spy(flat, read_only, *args, **kwargs):
        search = learner.__dict__.get("estimator_")
        walks = _race_drift._HELD_WALKS.get(learner)
        if search is not None and walks is not None and walks[0] is flat:
            opaque = walks[1]
            fresh = tuple(p for p in _race_drift.untouched(search) if id(p) not in opaque)
            assert all(a is b for a, b in zip(read_only, fresh))
            assert len(read_only) - len(fresh) in (0, 2)  # (+ a quiet call's buffer)
            checked.append(len(fresh))
        return plan(flat, read_only, *args, **kwargs)

    monkeypatch.setattr(_race_drift._state.FlatState, "plan", spy)
    for a in range(0, len(y), 200):
        learner.partial_fit(X[a : a + 200], y[a : a + 200], classes=[0, 1])
    assert learner.estimator_.race_[_race_drift.REOPENS] >= 1
    assert any(checked)  # some candidates were dropped since a walk was made
