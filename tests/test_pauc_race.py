"""The racing statistic of OnePassSearch(max_fpr=): the mean of the windowed partial
and full AUC, exact against roc_auc for every chunking, saved and loaded with the
search."""

from __future__ import annotations

import numpy as np
import pytest

from aucstream import OnePassSearch, load_model, save_model
from aucstream._pauc_race import PARTIAL_WEIGHT, GuardedPartialAUC
from aucstream.metrics import RollingAUC, roc_auc


@pytest.mark.parametrize("chunk", [1, 7, 100])
def test_it_is_the_mean_of_the_partial_and_full_auc_of_the_window(chunk):
    rng = np.random.default_rng(0)
    y = rng.random(400) < 0.2
    s = rng.integers(0, 12, size=400).astype(float)  # many ties
    window = 150
    g = GuardedPartialAUC(window, pos_label=True, max_fpr=0.1)
    plain = RollingAUC(window, pos_label=True, max_fpr=0.1)
    for start in range(0, 400, chunk):
        g.update(y[start : start + chunk], s[start : start + chunk])
        plain.update(y[start : start + chunk], s[start : start + chunk])
    yw, sw = y[-window:], s[-window:]
    want = PARTIAL_WEIGHT * roc_auc(yw, sw, max_fpr=0.1) + (1 - PARTIAL_WEIGHT) * roc_auc(yw, sw)
    assert g.get() == pytest.approx(want, abs=1e-12)
    assert plain.get() == pytest.approx(roc_auc(yw, sw, max_fpr=0.1), abs=1e-12)
    # a peek at buffered scores reads the same statistic
    more_y, more_s = rng.random(30) < 0.2, rng.normal(size=30)
    peek = g._peek(more_y, more_s)
    y2, s2 = np.concatenate([y, more_y])[-window:], np.concatenate([s, more_s])[-window:]
    assert peek == pytest.approx(0.5 * (roc_auc(y2, s2, max_fpr=0.1) + roc_auc(y2, s2)))


def test_one_class_is_nan():
    g = GuardedPartialAUC(10, pos_label=1, max_fpr=0.5).update([0, 0, 0], [1.0, 2.0, 3.0])
    assert np.isnan(g.get())


def test_the_search_races_by_it_and_resumes_exactly(tmp_path):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1200, 4))
    y = np.where(X[:, 0] + rng.normal(size=1200) > 1.5, 1, -1)
    whole = OnePassSearch(max_fpr=0.05, drift=None, first_round=100).fit(X, y)
    assert all(type(m) is GuardedPartialAUC for m in whole.recent_)
    half = OnePassSearch(max_fpr=0.05, drift=None, first_round=100).partial_fit(
        X[:500], y[:500], classes=[-1, 1]
    )
    save_model(half, tmp_path / "search.model")
    resumed = load_model(tmp_path / "search.model").partial_fit(X[500:], y[500:])
    assert type(resumed.recent_[0]) is GuardedPartialAUC
    np.testing.assert_array_equal(resumed.decision_function(X), whole.decision_function(X))
    assert resumed.leader_ == whole.leader_


def _stream(n=3000, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=n) > 2.0, 1, 0)
    return X, y


def _candidates():
    from aucstream import OPAUC, PAUCI, SOLAM, OnlinePAUC

    return [
        OPAUC(eta=2.0**-12),
        OPAUC(eta=2.0**-14),
        SOLAM(R=0.01),
        OPAUC(eta=2.0**-13),
        PAUCI(max_fpr=0.1, eta=0.1),
        OnlinePAUC(max_fpr=0.1, random_state=0),
    ]


def test_halving_spares_the_partial_auc_learners_only_with_max_fpr():
    X, y = _stream()
    kw = {"drift": None, "first_round": 200, "delta": 0.999}  # rounds at 200, 400, ...
    race = OnePassSearch(_candidates(), max_fpr=0.1, **kw).fit(X, y)
    status = race.status_
    # the partial-AUC learners (the last two) are never halved; of the 4 others,
    # halving keeps ceil(4/2) = 2, then 1
    assert all(status[4:] != 2)
    assert (status[:4] == 0).sum() == 1 and (status[:4] == 2).sum() == 3
    # the round's incumbent (the search's prequential scores, the drift watch) is the
    # full-AUC learner left, whichever candidate leads the racing statistic
    assert race.progress_[2] == np.flatnonzero(status[:4] == 0)[0]
    plain = OnePassSearch(_candidates(), **kw).fit(X, y)
    assert (plain.status_ == 0).sum() == 1  # without max_fpr: halving down to one


def test_the_ensemble_is_the_first_two_and_the_best_full_auc_learner():
    """With max_fpr the scores average the first two by the racing statistic and the
    alive full-AUC learner with the best full AUC over the window (that learner alone
    when it leads), computed here from each candidate's own test-then-train scores
    (the scores the search gave it)."""
    from sklearn.base import clone

    X, y = _stream()
    search = OnePassSearch(_candidates(), max_fpr=0.1, drift=None, first_round=200, delta=0.999)
    search.fit(X, y)
    w = search.window
    alive = np.flatnonzero(search.status_ == 0)
    stat, full = {}, {}
    for i in alive:
        s = clone(search.candidates[i]).test_then_train(X, y, classes=[0, 1])
        stat[i] = 0.5 * (roc_auc(y[-w:], s[-w:], max_fpr=0.1) + roc_auc(y[-w:], s[-w:]))
        full[i] = roc_auc(y[-w:], s[-w:])
    ranked = sorted(alive, key=lambda i: (-stat[i], i))
    leader = ranked[0]
    assert search.leader_ == leader
    best_full = max((i for i in alive if i < 4), key=lambda i: (full[i], -i))
    want = (
        [leader] if best_full == leader else [*[i for i in ranked[:2] if i != best_full], best_full]
    )
    assert len(alive) == 3 and want != [leader]  # the test is not trivial
    assert [i for i in search.ensemble_ if i >= 0] == want


@pytest.mark.parametrize("chunks", [[3000], [1, 700, 1299, 1000]])
@pytest.mark.parametrize("drift", [None, "auto"])
def test_sparing_race_is_chunk_invariant_and_resumes_exactly(tmp_path, chunks, drift):
    X, y = _stream(seed=2)
    X[1500:, 0] *= -1  # a change: with drift, the race reopens
    kw = {"max_fpr": 0.1, "drift": drift, "first_round": 200}
    whole = OnePassSearch(_candidates(), **kw).fit(X, y)
    assert whole.race_[1] == (0 if drift is None else 1)
    part = OnePassSearch(_candidates(), **kw)
    at = 0
    for k in chunks:
        part.partial_fit(X[at : at + k], y[at : at + k], classes=[0, 1])
        if at == 0:
            save_model(part, tmp_path / "s.model")
            part = load_model(tmp_path / "s.model")
        at += k
    np.testing.assert_array_equal(part.status_, whole.status_)
    np.testing.assert_array_equal(part.ensemble_, whole.ensemble_)
    np.testing.assert_array_equal(part.decision_function(X), whole.decision_function(X))


def test_members_rule_on_a_stand_in_search():
    """:func:`aucstream._pauc_race.members` on a stand-in of the search: the first
    ``ensemble - 1`` by the racing statistic, then the full-AUC learner with the best
    windowed full AUC; that learner alone when it leads; the first ``ensemble``
    without max_fpr."""
    from types import SimpleNamespace

    from aucstream import OPAUC, PAUCI, SOLAM, OnlinePAUC
    from aucstream._pauc_race import members

    candidates = [PAUCI(), OnlinePAUC(), OPAUC(), SOLAM()]  # the first two take max_fpr
    full = {0: 0.99, 1: 0.99, 2: 0.80, 3: 0.90}  # the partial-AUC learners' never count

    def metrics(which, windowed):
        return [SimpleNamespace(full=lambda i=i: full[i]) for i in which]

    search = SimpleNamespace(
        ensemble=3, max_fpr=0.05, candidates_=candidates, _current_metrics=metrics
    )
    assert members(search, [0, 1, 2, 3]) == [0, 1, 3]
    assert members(search, [0, 3, 1, 2]) == [0, 3]
    assert members(search, [3, 0, 1, 2]) == [3]
    full[2] = 0.95
    assert members(search, [0, 1, 2, 3]) == [0, 1, 2]
    search.ensemble = 2
    assert members(search, [0, 1, 2, 3]) == [0, 2]
    search.max_fpr = None
    assert members(search, [0, 1, 2, 3]) == [0, 1]
