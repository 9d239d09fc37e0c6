"""The watch of OnePassSearch(drift=...) call by call (aucstream._race_drift,
"The watch, call by call"): the candidates' calls are not cut at the detector's feeds,
a reopening inside a long call cuts it exactly there, and the waiting fresh slots
hold no metrics."""

from __future__ import annotations

import numpy as np
import pytest

from aucstream import OPAUC, OnePassSearch, UnivariateOnline, _race_drift, _search_scores, search


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
    learn = _search_scores.learn_candidate

    def counted(candidate, X, *rest):
        seen.append((id(candidate), X.shape[0]))
        return learn(candidate, X, *rest)

    monkeypatch.setattr(_search_scores, "learn_candidate", counted)
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


def runs_in_a_reopened_race(model, i: int) -> bool:
    """The rule of :func:`aucstream._race_drift.slow`, written out: a first-race
    candidate's fresh slot runs when it survived round ``_FRESH_ROUNDS``, or survived
    the round before and is the first such one of a learner type none of whose
    candidates survived round ``_FRESH_ROUNDS`` (diverged ones never run)."""
    first = int(model.race_[_race_drift.N_FIRST])
    last = model.first_round * 2 ** (_race_drift._FRESH_ROUNDS - 1)

    def survived(j, at):
        if model.status_[j] == search.DIVERGED:
            return False
        return model.status_[j] == _race_drift.RETIRED or not 0 <= model.dropped_at_[j] <= at

    if survived(i, last):
        return True
    kin = [j for j in range(first) if type(model.candidates_[j]) is type(model.candidates_[i])]
    if any(survived(j, last) for j in kin):
        return False
    return [j for j in kin if survived(j, last // 2)][:1] == [i]


def test_a_reopened_race_runs_the_fresh_copies_of_the_first_races_survivors():
    X, y = concepts()
    etas = [2**-k for k in (2, 4, 6, 8, 10)]
    model = OnePassSearch([OPAUC(eta=e) for e in etas] + [UnivariateOnline(eta=2**-6)])
    model.fit(X, y)
    assert model.race_[1] >= 1
    first = int(model.race_[_race_drift.N_FIRST])
    assert first == 6 > _race_drift._FRESH_ALL
    for i in range(first):
        runs = runs_in_a_reopened_race(model, i)
        assert (model.status_[first + i] == _race_drift.WAITING) != runs
    assert (model.status_[first:] == _race_drift.WAITING).any()
    assert (model.status_[first:] != _race_drift.WAITING).any()


class _Other(OPAUC):
    """Another learner type (the rule tells types apart)."""


@pytest.mark.parametrize(
    "dropped, runs",
    [
        # the survivors of two rounds only, one type of each
        ([-1, 4000, 2000, -1, 2000, 2000], [1, 0, 0, 1, 0, 0]),
        # type A: none survived round 2; its first survivor of round 1 runs, no other
        ([4000, 4000, 2000, -1, 2000, 2000], [1, 0, 0, 1, 0, 0]),
        ([2000, 4000, 4000, -1, 2000, 2000], [0, 1, 0, 1, 0, 0]),
        # both types: none survived round 2
        ([2000, 2000, 2000, 4000, 2000, 4000], [0, 0, 0, 1, 0, 0]),
        # a later drop (8000) is a survivor of round 2
        ([8000, 4000, 4000, 4000, 2000, 2000], [1, 0, 0, 1, 0, 0]),
    ],
)
def test_a_type_that_lost_every_candidate_in_round_two_keeps_one(dropped, runs):
    model = OnePassSearch([OPAUC(eta=2**-k) for k in (2, 4, 6)] + [_Other() for _ in range(3)])
    model.fit(*concepts(n=300, k=1))  # (started: 12 slots; the statuses are set below)
    first = 6
    assert model.race_[_race_drift.N_FIRST] == first and model.first_round == 2000
    model.status_[:first] = [0 if d < 0 else search.RACED for d in dropped]
    model.dropped_at_[:first] = dropped
    got = [not _race_drift.slow(model, i) for i in range(first)]
    assert got == [bool(r) for r in runs]
    assert got == [runs_in_a_reopened_race(model, i) for i in range(first)]
    model.status_[3] = search.DIVERGED  # the other type's survivor of two rounds
    assert _race_drift.slow(model, 3)


class _Window:
    """A stand-in for a candidate's window in a round: a given AUC over m examples of
    each class (few enough that the racing bound drops no one)."""

    def __init__(self, auc: float, m: int = 40):
        self.auc, self.n_positive, self.n_negative = auc, m, m

    def get(self) -> float:
        return self.auc


@pytest.mark.parametrize(
    "after, aucs, alive",
    [
        # within the newcomers' half-life the best newcomer stays beside the incumbent
        (0, [0.90, 0.85], [True, True]),
        (_race_drift._SPARE_ROWS - 1, [0.90, 0.85], [True, True]),
        (0, [0.90, 0.85, 0.80], [True, True, False]),
        (0, [0.90, 0.80, 0.85], [True, False, True]),
        # later, halving alone
        (_race_drift._SPARE_ROWS, [0.90, 0.85], [True, False]),
        # a newcomer leads: halving alone
        (0, [0.85, 0.90], [False, True]),
        (0, [0.80, 0.90, 0.85], [False, True, True]),
    ],
)
def test_halving_spares_the_best_newcomer_for_its_half_life_after_a_reopening(after, aucs, alive):
    """(module docstring of aucstream._race_drift, "The reopening", step 5)"""
    X, y = concepts()
    start = int(small_search().fit(X, y).race_[_race_drift.START])
    assert start > 0
    model = small_search().fit(X[: start + 100], y[: start + 100])  # (before a round)
    assert model.race_[_race_drift.START] == start
    incumbent = int(model.progress_[2])
    assert model.started_at_[incumbent] < start
    newcomers = [i for i in np.flatnonzero(model.status_ == search.ALIVE) if i != incumbent]
    assert all(model.started_at_[i] == start for i in newcomers)
    assert len(newcomers) >= 2
    racing = [incumbent, *newcomers[: len(aucs) - 1]]
    for i in np.flatnonzero(model.status_ == search.ALIVE):
        if i not in racing:
            model._drop(i, search.RACED, model.n_samples_seen_)
    for i, auc in zip(racing, aucs):
        model.recent_[i] = _Window(auc)
    model.n_samples_seen_ = start + after
    model.progress_[1] = start + 1  # (the round's bookkeeping only)
    model._round()
    assert [model.status_[i] == search.ALIVE for i in racing] == alive
    assert model.progress_[2] == racing[int(np.argmax(aucs))]
