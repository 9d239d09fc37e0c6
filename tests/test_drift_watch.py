"""The watch of OnePassSearch(drift=...) call by call (aucstream._race_drift,
"The watch, call by call"): the candidates' calls are not cut at the detector's feeds,
a reopening inside a long call cuts it exactly there, and the waiting fresh slots
hold no metrics."""

from __future__ import annotations

import numpy as np
import pytest

from aucstream import OPAUC, OnePassSearch, UnivariateOnline, _race_drift, search


def small_search(**kw):
    candidates = [OPAUC(eta=2**-6), OPAUC(eta=2**-9), UnivariateOnline(eta=2**-6)]
    return OnePassSearch(candidates, **kw)


def concepts(n=12000, k=2, d=8, rate=0.2, seed=0):
    rng = np.random.default_rng(seed)
    Xs, ys = [], []
    for _ in range(k):
        w = rng.normal(size=d)
        X = rng.normal(size=(n, d))
        s = X @ w / np.linalg.norm(w) + 0.3 * rng.normal(size=n)
        ys.append((s > np.quantile(s, 1 - rate)).astype(int))
        Xs.append(X)
    return np.vstack(Xs), np.concatenate(ys)


@pytest.fixture
def calls(monkeypatch):
    """Every candidate call: (candidate id, rows)."""
    seen: list[tuple[int, int]] = []
    learn = search._learn_candidate

    def counted(candidate, X, *rest):
        seen.append((id(candidate), X.shape[0]))
        return learn(candidate, X, *rest)

    monkeypatch.setattr(search, "_learn_candidate", counted)
    return seen


@pytest.mark.parametrize("drift", ["auto", None])
def test_a_call_across_a_feed_learns_each_candidate_once(calls, drift):
    X, y = concepts(k=1)
    model = small_search(drift=drift)
    model.partial_fit(X[:300], y[:300])
    calls.clear()
    model.partial_fit(X[300:800], y[300:800])  # across the feed at 512, no round, no block end
    alive = int(np.sum(model.status_ == search.ALIVE))
    assert alive == 3
    assert sorted(calls) == sorted((id(c), 500) for c in model.candidates_[:alive])


def test_a_reopening_inside_one_call_cuts_it_there(calls):
    X, y = concepts()
    whole = small_search()
    scores = whole.test_then_train(X, y)  # one call: pieces of up to a block
    assert whole.race_[1] >= 1
    # the incumbent's call of the piece holding the reopening was undone and made again
    # up to it: one call more than the pieces
    undone = [
        c
        for c in whole.candidates_[:3]
        if sum(r for i, r in calls if i == id(c)) > c.n_samples_seen_
    ]
    assert len(undone) == 1
    # cut at the feeds (every 512 rows) gives the same bits
    cut = small_search()
    step = _race_drift._DRIFT_BLOCK
    parts = [cut.test_then_train(X[a : a + step], y[a : a + step]) for a in range(0, len(y), step)]
    np.testing.assert_array_equal(np.concatenate(parts), scores)
    np.testing.assert_array_equal(cut.race_, whole.race_)
    for a, b in zip(cut.candidates_, whole.candidates_):
        assert a.n_samples_seen_ == b.n_samples_seen_


def test_waiting_slots_hold_no_metrics_until_a_reopening():
    X, y = concepts()
    model = small_search()
    model.partial_fit(X[:6000], y[:6000])
    assert model.race_[1] == 0
    assert model.overall_[3:] == [None] * 3 and model.recent_[3:] == [None] * 3
    assert len(model.leaderboard_) == 3
    model.partial_fit(X[6000:], y[6000:])
    assert model.race_[1] >= 1
    started = np.flatnonzero(model.started_at_ > 0)
    assert started.size and all(model.recent_[i] is not None for i in started)
    assert all(model.recent_[i].window == model.window for i in started)


def test_a_reopened_race_runs_the_fresh_copies_of_the_first_races_survivors():
    X, y = concepts()
    etas = [2**-k for k in (2, 4, 6, 8, 10)]
    model = OnePassSearch([OPAUC(eta=e) for e in etas] + [UnivariateOnline(eta=2**-6)])
    model.fit(X, y)
    assert model.race_[1] >= 1
    first = int(model.race_[_race_drift.N_FIRST])
    assert first == 6 > _race_drift._FRESH_ALL
    last = model.first_round * 2 ** (_race_drift._FRESH_ROUNDS - 1)
    for i in range(first):
        early = 0 <= model.dropped_at_[i] <= last and model.status_[i] != _race_drift.RETIRED
        assert (model.status_[first + i] == _race_drift.WAITING) == early
    assert (model.status_[first:] == _race_drift.WAITING).any()
    assert (model.status_[first:] != _race_drift.WAITING).any()
