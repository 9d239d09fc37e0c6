"""OnePassSearch and StreamPipeline: the racing rule, the leaderboard, and the pipeline."""

from __future__ import annotations

import numpy as np
import pytest

from aucstream import OPAUC, SOLAM, OnePassSearch, StreamPipeline, UnivariateOnline
from aucstream.metrics import roc_auc
from aucstream.preprocessing import OnlineStandardScaler


def stream(n=6000, d=5, seed=0, rate=0.3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=n) > np.quantile(X[:, 0], 1 - rate)).astype(int)
    return X, y


def test_leaderboard_auc_is_each_candidates_exact_prequential_auc():
    X, y = stream(3000)
    candidates = [UnivariateOnline(eta=2**-6), SOLAM()]
    search = OnePassSearch(candidates, first_round=10**6, window=5000).fit(X, y)
    board = {row["candidate"]: row for row in search.leaderboard_.to_dict("records")}
    for c in candidates:
        alone = c.__class__(**c.get_params()).test_then_train(X, y)
        assert board[repr(c)]["prequential_auc"] == roc_auc(y, alone)
        assert board[repr(c)]["recent_auc"] == roc_auc(y, alone)  # window covers it all


def test_search_scores_are_the_leaders_prequential_scores():
    X, y = stream(3000)
    search = OnePassSearch([UnivariateOnline(eta=2**-6), SOLAM()], first_round=10**6, ensemble=1)
    scores = search.test_then_train(X, y)
    alone = UnivariateOnline(eta=2**-6).test_then_train(X, y)  # the first leads before a round
    np.testing.assert_array_equal(scores, alone)
    # the leader that scores afterwards: the best windowed AUC over what was learnt
    learners = [UnivariateOnline(eta=2**-6), SOLAM()]
    auc = [roc_auc(y, type(c)(**c.get_params()).test_then_train(X, y)) for c in learners]
    assert search.window >= len(y) and auc[0] != auc[1]
    best = learners[int(np.argmax(auc))].fit(X, y)
    assert search.leader_ == int(np.argmax(auc))
    np.testing.assert_array_equal(search.coef_, best.coef_)


def test_the_leader_needs_no_round_and_does_not_depend_on_chunks():
    """A stream shorter than the first round still scores with its best candidate, and
    the leader is the same however the stream was cut (it is a function of the state)."""
    X, y = stream(1500)
    candidates = [UnivariateOnline(eta=2**-14), SOLAM()]  # prequential AUC .820 < .843
    whole = OnePassSearch(candidates).fit(X, y)
    assert whole.leader_ == 1 and whole.leaderboard_.iloc[0]["leader"]
    pieces = OnePassSearch(candidates)
    for start in range(0, 1500, 333):
        pieces.partial_fit(X[start : start + 333], y[start : start + 333], classes=[0, 1])
    assert pieces.leader_ == whole.leader_
    np.testing.assert_array_equal(pieces.decision_function(X), whole.decision_function(X))


def test_ensemble_averages_the_best_candidates_calibrated_log_odds():
    """The scores are the mean calibrated log-odds of the best ``ensemble`` candidates,
    each computed here from the candidate learnt alone; probabilities are their
    logistic function and predict thresholds them at 0."""
    X, y = stream(3000)
    learners = [UnivariateOnline(eta=2**-6), SOLAM(), UnivariateOnline(eta=2**-12)]
    search = OnePassSearch(learners, first_round=10**6, ensemble=2).fit(X, y)
    auc = [roc_auc(y, type(c)(**c.get_params()).test_then_train(X, y)) for c in learners]
    best_two = list(np.argsort(auc)[::-1][:2])
    assert list(search.ensemble_) == best_two and search.leader_ == best_two[0]
    logits = []
    for i in best_two:
        alone = type(learners[i])(**learners[i].get_params()).fit(X, y)
        cal = alone.calibration_  # [n, mean, m2, a, b, ...]: t = a (s - mean) / sd + b
        raw = X @ alone.coef_.ravel() + alone.intercept_[0] + alone._threshold()
        logits.append(cal[3] * (raw - cal[1]) / np.sqrt(cal[2] / cal[0]) + cal[4])
    expected = np.mean(logits, axis=0)
    np.testing.assert_allclose(search.decision_function(X), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(search.predict_proba(X)[:, 1], 1 / (1 + np.exp(-expected)))
    np.testing.assert_array_equal(search.predict(X), (expected > 0).astype(int))
    np.testing.assert_allclose(X @ search.coef_.ravel() + search.intercept_[0], expected)
    board = dict(zip(search.leaderboard_["candidate"], search.leaderboard_["in_ensemble"]))
    assert [board[repr(c)] for c in learners] == [i in best_two for i in range(3)]


def test_ensemble_of_one_scores_with_the_leader_alone():
    X, y = stream(3000)
    learners = [UnivariateOnline(eta=2**-6), SOLAM()]
    one = OnePassSearch(learners, first_round=10**6, ensemble=1).fit(X, y)
    assert list(one.ensemble_) == [one.leader_]
    best = one.best_estimator_
    np.testing.assert_array_equal(one.decision_function(X), best.decision_function(X))
    np.testing.assert_array_equal(one.predict_proba(X), best.predict_proba(X))


class Frozen(UnivariateOnline):
    """A learner that never learns: every score is 0, an AUC of exactly 1/2."""

    def _update(self, chunk):
        chunk.pre_scores[:] = 0.0  # its prequential scores (w = 0 throughout)


def test_racing_drops_a_confidently_worse_candidate_and_keeps_close_ones():
    X, y = stream(40000, rate=0.5)
    search = OnePassSearch(
        [OPAUC(eta=2**-6), OPAUC(eta=2**-7), Frozen()],
        first_round=4000,
        window=4000,
        halving=False,
        drift=None,
    ).fit(X, y)
    status = dict(zip(range(3), search.status_))
    assert status[2] == 1  # dropped by racing
    assert status[0] == 0 and status[1] == 0  # indistinguishable: both kept
    assert search.leader_ in (0, 1)


def test_halving_bounds_the_work():
    X, y = stream(20000)
    candidates = [UnivariateOnline(eta=2.0**-k) for k in range(2, 10)]  # 8 candidates
    search = OnePassSearch(candidates, first_round=1000, window=1000).fit(X, y)
    seen = sum(c.n_samples_seen_ for c in search.candidates_)
    # rounds at 1000 (8 -> 4), 2000 (4 -> 2), 4000 (2 -> 1): 8k + 4k + 8k + 20k
    assert seen == 8 * 1000 + 4 * 1000 + 2 * 2000 + 1 * 16000
    assert int((search.status_ == 0).sum()) == 1


def test_a_diverging_candidate_is_dropped_and_the_search_goes_on():
    X, y = stream(5000)
    X = X * 100.0  # unscaled: a large step diverges at once
    search = OnePassSearch(
        [OPAUC(eta=8.0), UnivariateOnline(eta=2**-12)], first_round=10**6, drift=None
    )
    search.fit(X, y)
    assert list(search.status_) == [3, 0]
    assert search.leader_ == 1
    assert search.leaderboard_.iloc[1]["status"] == "diverged"
    assert np.isfinite(search.decision_function(X)).all()


def test_every_candidate_diverging_is_an_error_that_changes_nothing():
    X, y = stream(500)
    search = OnePassSearch([OPAUC(eta=64.0)], first_round=10**6)
    search.partial_fit(X[:2] * 0, y[:2], classes=[0, 1])
    with pytest.raises(FloatingPointError, match="every candidate diverged"):
        search.partial_fit(X * 1e3, y)
    assert search.n_samples_seen_ == 2 and search.status_[0] == 0


def test_one_example_on_which_every_candidate_diverges_changes_nothing():
    """A one-row call (the journaled transaction) that drops every candidate is
    refused with the search bit for bit as before, and the stream goes on."""
    from conftest import assert_same_state

    X, y = stream(500)
    search = OnePassSearch([OPAUC(eta=64.0), OPAUC(eta=32.0)], first_round=10**6, drift=None)
    search.partial_fit(X[:20], y[:20], classes=[0, 1])
    before = _bits(search)
    with pytest.raises(FloatingPointError, match="every candidate diverged"):
        search.partial_fit(X[20:21] * 1e150, y[20:21])
    assert_same_state(before, _bits(search))
    search.learn_one(X[20], y[20])
    assert search.n_samples_seen_ == 21 and list(search.status_) == [0, 0]


def test_rounds_wait_for_both_classes_in_the_window():
    X, y = stream(4000)
    y[:3000] = 0  # the first round's window has no positive
    search = OnePassSearch(
        [UnivariateOnline(eta=2**-6), UnivariateOnline(eta=2**-9)],
        first_round=1000,
        window=500,
        drift=None,
    )
    search.partial_fit(X[:2999], y[:2999], classes=[0, 1])
    assert (search.status_ == 0).all() and search.progress_[3] == 0


def test_pipeline_learns_an_unscaled_stream_that_diverges_without_it():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20000, 4)) * [1.0, 300.0, 0.01, 50.0]
    y = (X[:, 1] / 300 + X[:, 2] * 100 + rng.normal(size=20000) > 2.0).astype(int)
    with pytest.raises(FloatingPointError):  # the papers' OPAUC on the raw columns
        OPAUC(eta=2**-4, column_scale=None).fit(X, y)
    model = StreamPipeline(estimator=OPAUC(eta=2**-4, column_scale=None)).fit(X, y)
    assert model.score(X, y) > 0.85
    # (the default OPAUC learns each column in its running scale, bare too)
    assert OPAUC(eta=2**-4).fit(X, y).score(X, y) > 0.85
    # decision_function is the learner's decision value of the transformed rows, and
    # coef_, intercept_ map raw rows to it (no row is clipped here), as for every learner
    shifted = model.estimator_.decision_function(model.transformer_.transform(X))
    np.testing.assert_allclose(model.decision_function(X), shifted, atol=1e-8)
    np.testing.assert_allclose(X @ model.coef_[0] + model.intercept_[0], shifted, atol=1e-8)
    assert model.estimator_.intercept_[0] != model.estimator_._intercept()  # a threshold


def test_pipeline_scores_equal_scaler_then_learner():
    X, y = stream(3000)
    pipe = StreamPipeline(OnlineStandardScaler(), SOLAM())
    scores = pipe.test_then_train(X, y)
    scaler, learner = OnlineStandardScaler(), SOLAM()
    expected = learner.test_then_train(scaler.partial_fit_transform(X), y)
    np.testing.assert_array_equal(scores, expected)
    np.testing.assert_array_equal(
        pipe.decision_function(X), learner.decision_function(scaler.transform(X))
    )


def test_unfitted_default_pipeline_says_it_is_not_fitted():
    """predict_proba exists on the default pipeline (its search is calibrated), so an
    unfitted call is scikit-learn's NotFittedError, not a missing attribute."""
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        StreamPipeline().predict_proba(np.ones((2, 3)))


def _bits(obj):
    """Every state array and scalar reachable from ``obj``, for bitwise comparison."""
    from conftest import snapshot

    from aucstream._state import state_items

    getattr(obj, "estimator_", None)  # a pipeline's held examples are learnt first
    return snapshot({k: v for k, v in state_items(obj).items()})


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("rows", [1, 3, 700])
def test_a_rejected_call_changes_nothing_whether_or_not_it_reaches_a_block_end(
    rows, weighted, monkeypatch
):
    """The search's transaction leaves its metrics and candidates out when the call
    reaches no block end or round (it undoes the candidates' own transactions
    instead): an interrupted call — one row, a few rows, or enough rows to reach a
    round — still restores every bit, the candidates learning through their fast
    paths (one row, a few rows) or, with weights, through their full path (the
    search alone: the pipeline and OPAUC take no weights)."""
    from conftest import assert_same_state, patch_update

    X, y = stream(3000)
    candidates = [UnivariateOnline(eta=2**-6), SOLAM(), *([] if weighted else [OPAUC()])]
    search = OnePassSearch(candidates, first_round=1000)
    model = search if weighted else StreamPipeline(OnlineStandardScaler(), search)
    model.fit(X[:700], y[:700])
    search = model if weighted else model.estimator_
    before = _bits(model)
    leader = search.leader_

    def interrupt(self, chunk, update):  # the second candidate (SOLAM), after it learnt
        update(self, chunk)
        raise KeyboardInterrupt

    weights = np.full(rows, 0.5) if weighted else None
    with monkeypatch.context() as patch:
        patch_update(patch, SOLAM, interrupt)
        with pytest.raises(KeyboardInterrupt):  # (classes: a pipeline would hold one row)
            model.partial_fit(
                X[700 : 700 + rows], y[700 : 700 + rows], classes=[0, 1], sample_weight=weights
            )
    assert_same_state(before, _bits(model))
    assert search.leader_ == leader
    model.partial_fit(X[700:], y[700:])  # and it goes on
    assert model.n_samples_seen_ == 3000


def test_a_metric_update_inside_a_call_declared_not_to_reach_one_is_refused(monkeypatch):
    """A wrong declaration cannot pass silently: the search refuses to update metrics
    it declared untouched, and the call changes nothing."""
    from conftest import assert_same_state

    X, y = stream(3000)
    search = OnePassSearch([UnivariateOnline(eta=2**-6), SOLAM()], first_round=1000)
    search.fit(X[:900], y[:900])
    before = _bits(search)
    wrong = lambda n: True  # noqa: E731 - the block end is at 1000
    monkeypatch.setattr(search, "_between_updates", wrong)
    with pytest.raises(RuntimeError, match="internal error"):
        search.partial_fit(X[900:1100], y[900:1100])
    assert_same_state(before, _bits(search))


def test_one_example_at_a_time_learns_through_the_candidates_bound_updates(monkeypatch):
    """learn_one / one-row partial_fit of the search: each candidate learns the row
    through its bound one-row update (not a walk of its state), and the model is the
    one a single call learns, bit for bit, across two rounds. (A pipeline holds such
    rows and its search learns them in chunks: tests/test_pipeline_one.py.)"""
    from conftest import assert_same_state

    from aucstream._base import BaseStreamingAUC

    calls = []
    learn = BaseStreamingAUC._learn_one_row

    def counted(self, *args):
        calls.append(type(self).__name__)
        return learn(self, *args)

    monkeypatch.setattr(BaseStreamingAUC, "_learn_one_row", counted)
    X, y = stream(1300)
    candidates = [UnivariateOnline(eta=2**-6), SOLAM(), OPAUC()]

    def make():
        return OnePassSearch(candidates, first_round=600)

    whole = make().fit(X, y)
    calls.clear()
    single = make().partial_fit(X[:5], y[:5], classes=[0, 1])
    for i in range(5, 1300):
        if i % 2:
            single.learn_one(X[i], y[i])
        else:
            single.partial_fit(X[i : i + 1], y[i : i + 1])
    assert sorted(set(calls)) == ["OPAUC", "SOLAM", "UnivariateOnline"]
    assert len(calls) >= 1295 * 2  # every alive candidate, each row (racing may drop one)
    assert_same_state(_unseeded(_bits(whole)), _unseeded(_bits(single)))
    np.testing.assert_array_equal(whole.decision_function(X), single.decision_function(X))


def _unseeded(bits):
    """A state snapshot without the generators made from random_state=None (each
    learner draws nothing from them here; their seeds differ between two learners)."""
    if isinstance(bits, dict):
        return {k: _unseeded(v) for k, v in bits.items() if k != "_rng"}
    if isinstance(bits, (list, tuple)):
        return type(bits)(_unseeded(v) for v in bits)
    return bits


@pytest.mark.parametrize("rows", [1, 3])
def test_a_rejected_call_restores_a_candidate_that_saves_by_rows(rows, monkeypatch):
    """At high d SOLAM's transaction saves only the rows of the example's features
    (its undo is by rows): journaled in a search's call that a later candidate
    interrupts, it still puts back every bit."""
    from conftest import assert_same_state, patch_update

    rng = np.random.default_rng(0)
    n, d = 760, 5000
    X = np.where(rng.random((n, d)) < 0.01, rng.normal(size=(n, d)), 0.0)
    y = (X[:, :50].sum(axis=1) + 0.3 * rng.normal(size=n) > 0).astype(int)
    search = OnePassSearch([SOLAM(), UnivariateOnline(eta=2**-6)], first_round=10**5)
    search.fit(X[:700], y[:700])
    for i in range(700, 720):  # one-row calls: SOLAM binds its one-row update
        search.learn_one(X[i], y[i])
    assert search.candidates_[0]._row_logged_state()
    before = _bits(search)

    def interrupt(self, chunk, update):  # UnivariateOnline, after SOLAM learnt
        update(self, chunk)
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch_update(patch, UnivariateOnline, interrupt)
        with pytest.raises(KeyboardInterrupt):
            search.partial_fit(X[720 : 720 + rows], y[720 : 720 + rows])
    assert_same_state(before, _bits(search))
    search.partial_fit(X[720:], y[720:])
    assert search.n_samples_seen_ == n


@pytest.mark.parametrize("max_fpr", [None, 0.1])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_examples_of_weight_0_are_not_raced(max_fpr, sparse):
    """Weight 0 among weighted examples, past several rounds, block ends and the drift
    watch's feeds (4,500 rows learnt, a block of 4,096): the search (and a pipeline
    over it) is the one learnt without them, race included; each is scored by the
    round leader as it was then (a search fed the rows before it, without them)."""
    import scipy.sparse as sp

    from aucstream import OAM

    X, y = stream(6750, seed=5)
    rng = np.random.default_rng(6)
    weights = rng.uniform(0.5, 2.0, size=y.size)
    weights[rng.random(y.size) < 1 / 3] = 0.0
    weights[:3] = 0.0  # (scored before anything is learnt: 0)
    keep = weights > 0
    rows = sp.csr_matrix(X) if sparse else X

    def search():
        candidates = [UnivariateOnline(eta=2**-6), SOLAM(), OAM(random_state=0), OPAUC()]
        return OnePassSearch(candidates, first_round=300, window=800, max_fpr=max_fpr)

    scored = []
    for make in (search, lambda: StreamPipeline(OnlineStandardScaler(), search())):
        woven, plain = make(), make()
        cuts = [0, 1000, 1700, 4200, 6750]
        got = np.concatenate(
            [
                woven.test_then_train(rows[a:b], y[a:b], [0, 1], weights[a:b])
                for a, b in zip(cuts[:-1], cuts[1:])
            ]
        )
        expected = plain.test_then_train(rows[keep], y[keep], [0, 1], weights[keep])
        np.testing.assert_array_equal(got[keep], expected)
        inner = woven.estimator_ if hasattr(woven, "estimator_") else woven
        reference = plain.estimator_ if hasattr(plain, "estimator_") else plain
        assert inner.n_samples_seen_ == reference.n_samples_seen_ == keep.sum()
        np.testing.assert_array_equal(inner.status_, reference.status_)
        assert inner.race_.tolist() == reference.race_.tolist()
        np.testing.assert_array_equal(woven.decision_function(X), plain.decision_function(X))
        scored.append(got)
    got = scored[0]  # (the search's)
    np.testing.assert_array_equal(got[:3], 0.0)
    i = int(np.flatnonzero(~keep[1000:])[0]) + 1000  # a row of weight 0 past a round
    before = search().partial_fit(X[:i][keep[:i]], y[:i][keep[:i]], [0, 1], weights[:i][keep[:i]])
    leader = before.candidates_[int(before.progress_[2])]
    assert got[i] == leader._raw_scores(X[i : i + 1])[0]
