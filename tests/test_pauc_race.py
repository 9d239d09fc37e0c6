"""The racing statistic of OnePassSearch(max_fpr=): the mean of the windowed partial
and full AUC, exact against roc_auc for every chunking, saved and loaded with the
search."""

from __future__ import annotations

import copy

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


@pytest.mark.parametrize("beta", [0.05, 0.3, 1.0])
def test_window_aucs_are_roc_auc(beta):
    from aucstream._pauc_race import _window_aucs

    rng = np.random.default_rng(1)
    y = rng.random(500) < 0.2
    s = rng.integers(0, 9, size=500).astype(float) + y  # many ties
    partial, full = _window_aucs(y, s, beta)
    assert full == pytest.approx(roc_auc(y, s), abs=1e-12)
    assert partial == pytest.approx(roc_auc(y, s, max_fpr=beta), abs=1e-12)
    assert np.isnan(_window_aucs(np.zeros(5, bool), s[:5], beta)).all()


def _brute_force_choice(search, scores, y, ranked):
    """The rule of :func:`aucstream._pauc_race.choose` from the candidates' own
    test-then-train scores over the window: the sets (the full-AUC learner with the best
    windowed full AUC alone, then the first k partial-AUC learners by the racing
    statistic, alone and with it), the best mean of partial and full AUC of their mean
    calibrated log-odds among those whose full AUC is at most 0.01 below that learner's."""
    from aucstream import _calibration

    w, beta = search.window, search.max_fpr
    partial = [i for i in ranked if "max_fpr" in search.candidates_[i].get_params()]
    others = [i for i in ranked if i not in partial]
    full = {i: roc_auc(y[-w:], scores[i][-w:]) for i in others}
    member = max(others, key=lambda i: (full[i], -ranked.index(i)))
    sets = [[member]]
    for k in range(1, search.ensemble):
        sets += [partial[:k], [*partial[:k], member]]
    best, value = None, -1.0
    for chosen in sets:
        maps = [_calibration.logit_map(search.candidates_[i].calibration_) for i in chosen]
        t = sum(a * scores[i][-w:] + b for (a, b), i in zip(maps, chosen)) / len(chosen)
        auc = roc_auc(y[-w:], t)
        if auc >= full[member] - 0.01 and 0.5 * (roc_auc(y[-w:], t, max_fpr=beta) + auc) > value:
            best, value = chosen, 0.5 * (roc_auc(y[-w:], t, max_fpr=beta) + auc)
    return sorted(best, key=ranked.index), sets


def test_the_ensemble_is_the_set_with_the_best_windowed_statistic():
    """With max_fpr the scores average the set of :func:`aucstream._pauc_race.choices`
    whose own windowed statistic is the best within the full-AUC tolerance, its best
    candidate leading; recomputed here from each candidate's own test-then-train scores
    (the scores the search gave it)."""
    from sklearn.base import clone

    X, y = _stream()
    search = OnePassSearch(_candidates(), max_fpr=0.1, drift=None, first_round=200, delta=0.999)
    search.fit(X, y)
    w = search.window
    alive = [int(i) for i in np.flatnonzero(search.status_ == 0)]
    scores, stat = {}, {}
    for i in alive:
        scores[i] = clone(search.candidates[i]).test_then_train(X, y, classes=[0, 1])
        s = scores[i][-w:]
        stat[i] = 0.5 * (roc_auc(y[-w:], s, max_fpr=0.1) + roc_auc(y[-w:], s))
    ranked = sorted(alive, key=lambda i: (-stat[i], i))
    want, sets = _brute_force_choice(search, scores, y, ranked)
    assert len(alive) == 3 and len(sets) == 5  # the test is not trivial
    assert [i for i in search.ensemble_ if i >= 0] == want
    assert search.leader_ == want[0]


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


def test_choice_rule_on_a_stand_in_search():
    """:func:`aucstream._pauc_race.choose` on a stand-in of the search with given
    windows: a partial-AUC learner that ranks perfectly scores alone; one that is noise
    does not enter; an average whose full AUC falls more than the tolerance below the
    full-AUC learner's is not chosen; without a learner that does not take max_fpr, or
    with ``ensemble`` 1, the leader alone; without max_fpr, the first ``ensemble``."""
    from types import SimpleNamespace

    from aucstream import OPAUC, PAUCI, SOLAM, OnlinePAUC, _calibration
    from aucstream._pauc_race import FULL_AUC_TOLERANCE, choices, choose, members

    rng = np.random.default_rng(0)
    y = rng.random(2000) < 0.1
    good = y + rng.normal(scale=0.8, size=y.size)  # a full-AUC learner: AUC about 0.8
    windows = {
        0: y + rng.normal(scale=0.05, size=y.size),  # PAUCI: perfect
        1: rng.normal(size=y.size),  # OnlinePAUC: noise
        2: good,  # OPAUC
        3: good - 0.5 * y,  # SOLAM: worse than OPAUC
    }
    candidates = [PAUCI(), OnlinePAUC(), OPAUC(), SOLAM()]  # the first two take max_fpr
    for c in candidates:  # calibrated: the log-odds are the scores
        c.calibration_ = _calibration.logistic_state()

    def metrics():  # (the windows as the race keeps them; no buffered rows)
        return [GuardedPartialAUC(y.size, max_fpr=0.05).update(y, windows[i]) for i in range(4)]

    class StandIn(SimpleNamespace):  # (weakly referable: the peeks' cache is by search)
        pass

    search = StandIn(
        ensemble=3,
        max_fpr=0.05,
        candidates_=candidates,
        recent_=metrics(),
        _buffered=lambda i: (np.zeros(0, bool), np.zeros(0)),  # (no buffered rows)
        _calibrated=lambda i: True,
    )
    assert choices(search, [0, 1, 2, 3]) == [[2], [0], [0, 2], [0, 1], [0, 1, 2]]
    assert choose(search, [0, 3, 1, 2]) == (0, (0,))
    windows[0] = y + rng.normal(scale=0.8, size=y.size)  # as good as OPAUC, other errors
    search.recent_ = metrics()
    lead, chosen = choose(search, [3, 0, 1, 2])
    assert chosen == (0, 2) and lead == 0  # the average beats either; noise stays out
    windows[0] = 3 * y * rng.random(y.size) - 2 * y  # top: right; overall: wrong
    search.recent_ = metrics()
    assert roc_auc(y, (windows[0] + windows[2]) / 2) < roc_auc(y, good) - FULL_AUC_TOLERANCE
    assert choose(search, [0, 1, 2, 3]) == (2, (2,))
    search.candidates_ = [PAUCI(), OnlinePAUC(), PAUCI(), OnlinePAUC()]  # all spared
    assert choose(search, [1, 0, 2, 3]) == (1, (1,))
    search.candidates_, search.ensemble = candidates, 1
    assert choose(search, [1, 0, 2, 3]) == (1, (1,))
    search.ensemble, search.max_fpr = 3, None
    assert members(search, [0, 1, 2, 3]) == [0, 1, 2]


def _states(metric):
    return [a.copy() for a in (metric._ring_score, metric._ring_label, metric._sorted)] + [
        metric._counters.copy(),
        list(metric._labels),
    ]


@pytest.mark.parametrize("ties", [False, True])
def test_peeks_are_the_updates_they_do_not_make_bit_for_bit(ties):
    """The windowed statistics the search reads with its buffered rows (the partial
    AUC from the window's tops, the full AUC, the window's scores) equal those of a
    copy of the metric updated with them, float for float, and change nothing: windows
    filling and full (rows departing), ties, one-way, two-way and raw partial AUCs,
    labels numbered either way, a class missing."""
    rng = np.random.default_rng(1 + ties)
    checks = 0
    for trial in range(400):
        window = int(rng.integers(1, 40))
        beta = float(rng.choice([0.01, 0.1, 0.5, 1.0]))
        kind = trial % 4
        pos_label = [None, 1][trial % 2]
        labels = np.array([0, 1]) if trial % 5 else np.array([-1, 1])
        if kind == 0:
            metric = GuardedPartialAUC(window, pos_label=pos_label, max_fpr=beta)
        else:
            extra = [{}, {"min_tpr": 0.4}, {"standardized": False}, {}][kind]
            metric = RollingAUC(window, pos_label=pos_label, max_fpr=beta, **extra)

        def draw(k, rate, labels=labels):
            s = rng.integers(0, 5, k).astype(float) if ties else rng.normal(size=k)
            return rng.choice(labels, k, p=[1 - rate, rate]), s

        for _ in range(int(rng.integers(0, 4))):
            metric.update(*draw(int(rng.integers(1, 2 * window + 3)), 0.2))
        for _ in range(3):
            y, s = draw(int(rng.integers(1, 2 * window + 3)), 0.3)
            before = _states(metric)
            updated = copy.deepcopy(metric).update(y, s)
            want, got = updated.get(), metric._peek(y, s)
            assert want == got or (np.isnan(want) and np.isnan(got))
            if kind == 0:
                full, peeked = updated.full(), metric._peek_full(*metric._peek_rows(y, s))
                assert full == peeked or (np.isnan(full) and np.isnan(peeked))
                for a, b in zip(updated.window_scores(), metric.window_scores(y, s)):
                    np.testing.assert_array_equal(a, b)
            after = _states(metric)
            for a, b in zip(before, after):
                assert (a == b) if isinstance(a, list) else np.array_equal(a, b)
            checks += 1
    assert checks == 1200


def test_wide_streams_race_the_partial_auc_learners_of_linear_state():
    """Above SMALL features only PAUCI (24 bytes a feature) joins the race: LSPAUC's d x d
    scatters made a search with max_fpr refuse 16,384 columns (9.1 GB) and 2^20
    hashed ones (35 TB); OnlinePAUC's reservoirs hold dense rows."""
    import scipy.sparse as sp

    from aucstream import LSPAUC, PAUCI, OnlinePAUC, StreamPipeline
    from aucstream._pauc_race import pauc_candidates

    assert {OnlinePAUC, PAUCI, LSPAUC} <= {type(c) for c in pauc_candidates(0.05, 300)}
    assert {type(c) for c in pauc_candidates(0.05, 2**14)} == {PAUCI}
    rng = np.random.default_rng(0)
    # (21 random columns a row, built directly: scipy.sparse.random draws its positions
    # among all 600 x 2^20 cells, over a minute)
    columns = np.sort(rng.choice(2**20, size=(600, 21)), axis=1)
    rows = (rng.random(600 * 21), columns.ravel(), np.arange(0, 600 * 21 + 1, 21))
    X = sp.csr_matrix(rows, shape=(600, 2**20))
    X.sum_duplicates()
    y = np.where(rng.random(600) < 0.2, 1, -1)
    search = OnePassSearch(max_fpr=0.05).partial_fit(X, y, classes=[-1, 1])
    assert {type(c) for c in search.candidates_} & {PAUCI, LSPAUC, OnlinePAUC} == {PAUCI}
    pipeline = StreamPipeline(max_fpr=0.05).partial_fit(X, y, classes=[-1, 1])
    assert np.isfinite(pipeline.decision_function(X[:5])).all()
