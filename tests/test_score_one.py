"""Scoring one example: ``decision_one``, ``predict_one`` and ``predict_proba_one``
take a path without scikit-learn's validation (``BaseStreamingAUC._score_one``) for
plainly valid rows. They must equal ``decision_function`` / ``predict`` /
``predict_proba`` of the same row bit for bit, for every learner, and give the
usual path's error (or result) for anything else.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from reliability_cases import ESTIMATORS, ONLINE, make, stream

from aucstream import SOLAM, OnePassSearch, StreamPipeline
from aucstream._runtime import HoldsLearners


def fitted(cls):
    X, y = stream(n=80, d=6)
    model = make(cls)
    if hasattr(model, "n_samples") and model.get_params().get("n_samples", 0) is None:
        model.set_params(n_samples=80)
    return model.fit(X, y), X


def as_dict(row: np.ndarray) -> dict:
    return {int(j): float(row[j]) for j in np.flatnonzero(row)}


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_one_example_scores_equal_the_batch_methods(cls, monkeypatch):
    model, X = fitted(cls)
    taken = []
    score_one = cls._score_one
    # (a learner that holds others scores through its scorer: its members' public
    # score_one, or its own, as a pipeline's transformed scores)
    short = cls._scores_by_coef or issubclass(cls, HoldsLearners)

    def counted(self, x):
        found = score_one(self, x)
        if type(self) is cls:
            taken.append(found is not None)
        return found

    monkeypatch.setattr(cls, "_score_one", counted)
    S = sp.csr_matrix(X)
    for i in range(X.shape[0]):
        for x, batch in ((X[i], X[i : i + 1]), (as_dict(X[i]), S[i])):
            assert model.decision_one(x) == model.decision_function(batch)[0]
            assert model.predict_one(x) == model.predict(batch)[0]
            if hasattr(model, "predict_proba"):
                proba = model.predict_proba(batch)[0]
                np.testing.assert_array_equal(model.predict_proba_one(x), proba)
    # the learners that score through their weights, and those that hold others
    # (through their members' score_one), took the short path
    assert all(taken) == short and any(taken) == short


def test_learners_with_scores_of_their_own_take_the_usual_path():
    assert not StreamPipeline._scores_by_coef and not OnePassSearch._scores_by_coef
    assert SOLAM._scores_by_coef


BAD = {
    "NaN": lambda x: np.where(np.arange(x.size) == 1, np.nan, x),
    "inf": lambda x: np.where(np.arange(x.size) == 0, np.inf, x),
    "short": lambda x: x[:-1],
    "2-D": lambda x: x[None, :],
    "dict index out of range": lambda x: {0: 1.0, 6: 2.0},
    "dict NaN": lambda x: {0: np.nan},
    "dict key str": lambda x: {"a": 1.0},
}


@pytest.mark.parametrize("bad", list(BAD))
def test_bad_examples_get_the_usual_paths_error(bad):
    model, X = fitted(SOLAM)
    for method in ("decision_one", "predict_one", "predict_proba_one"):
        with pytest.raises(ValueError):
            getattr(model, method)(BAD[bad](X[3]))


def test_huge_values_take_the_usual_path():
    model, X = fitted(SOLAM)
    x = X[3] * 1e200  # beyond the short path's magnitude: decision_function decides
    try:
        expected = model.decision_function(x[None, :])[0]
    except FloatingPointError:
        with pytest.raises(FloatingPointError):
            model.decision_one(x)
    else:
        assert model.decision_one(x) == expected


def test_other_row_types_score_as_the_batch_methods():
    model, X = fitted(SOLAM)
    for x in (X[3].astype(np.float32), list(X[3]), np.repeat(X[3], 2)[::2]):
        assert model.decision_one(x) == model.decision_function(np.asarray(x)[None, :])[0]


def test_an_unfitted_learner_says_so():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        SOLAM().decision_one(np.zeros(3))


def test_the_threshold_and_one_probability_agree_with_the_calibration():
    from aucstream import _calibration

    rng = np.random.default_rng(0)
    scores = rng.normal(size=200)
    state = _calibration.new_state()
    assert _calibration.threshold(state) == 0.0  # not ready
    assert _calibration.probability_one(state, 1.0) == 0.5  # nothing seen: one half
    labels = (scores + rng.normal(size=200) > 0.3).astype(float) * 2 - 1
    _calibration.update(state, scores, labels, np.zeros(0))
    assert _calibration.is_ready(state)
    n, mean, m2, a, b = (float(state[i]) for i in range(5))
    t = _calibration.threshold(state)
    assert t == mean - b * np.sqrt(m2 / n) / a
    assert abs(_calibration.probability_one(state, t) - 0.5) < 1e-12
    batch = _calibration.probability(state, scores)
    assert [_calibration.probability_one(state, s) for s in scores] == batch.tolist()
    one_class = _calibration.new_state()
    _calibration.update(one_class, scores[:5], -np.ones(5), np.zeros(0))
    assert _calibration.probability_one(one_class, 3.0) == 1 / 7  # the smoothed prior
    assert _calibration.probability(one_class, scores[:3]).tolist() == [1 / 7] * 3


def test_dict_rows_in_any_key_order_score_as_their_csr_row():
    from aucstream._chunks import sparse_row_dot

    model, X = fitted(SOLAM)
    S = sp.csr_matrix(X)
    rng = np.random.default_rng(1)
    for i in range(X.shape[0]):
        cols = rng.permutation(np.flatnonzero(X[i]))
        x = {(np.int64(j) if a % 2 else int(j)): X[i, j] for a, j in enumerate(cols)}
        assert model.decision_one(x) == model.decision_function(S[i])[0]
        np.testing.assert_array_equal(model.predict_proba_one(x), model.predict_proba(S[i])[0])
    coef = np.arange(5.0)
    for idx in ([1, 3, 1], [0, 5], [-1, 2]):  # repeated, outside
        assert np.isnan(sparse_row_dot(np.array(idx), np.ones(len(idx)), coef))
    assert sparse_row_dot(np.array([4, 0, 2]), np.array([1.0, 2.0, 3.0]), coef) == 10.0


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_dict_scores_follow_the_model_between_calls(cls):
    """The prepared scoring of dict rows keeps the weights between calls
    (``aucstream._fastpath.OneScore``): interleaved with learning, a new fit of as many
    rows, and a state object replaced, every score is still the batch method's."""
    if not cls._scores_by_coef or cls.is_batch:
        pytest.skip("scores of its own, or no learn_one")
    X, y = stream(n=80, d=6)
    model = make(cls).partial_fit(X[:20], y[:20], classes=np.unique(y))
    S = sp.csr_matrix(X)
    has_proba = hasattr(model, "predict_proba")

    def agree(i):
        x = as_dict(X[i])
        assert model.decision_one(x) == model.decision_function(S[i])[0]
        assert model.decision_one(x) == model.decision_function(S[i])[0]  # (kept weights)
        assert model.predict_one(x) == model.predict(S[i])[0]
        if has_proba:
            np.testing.assert_array_equal(model.predict_proba_one(x), model.predict_proba(S[i])[0])

    for i in range(20, 40):
        agree(i)
        model.learn_one(as_dict(X[i]), y[i])
        agree((i + 7) % 80)
    assert model.n_samples_seen_ == 40
    model.fit(X[40:], y[40:])  # as many rows as before: new state objects
    agree(3)
    model.partial_fit(X[:10], y[:10])
    arrays = [k for k, v in vars(model).items() if isinstance(v, np.ndarray) and v.ndim == 1]
    setattr(model, arrays[-1], getattr(model, arrays[-1]).copy())  # a new state object
    agree(5)


def test_threads_that_score_at_once_get_their_own_rows_scores():
    """Each thread packs its dict rows into buffers of its own
    (``aucstream._fastpath.FastCache.scorers``)."""
    import sys
    import threading

    model, X = fitted(SOLAM)
    rows = [as_dict(X[i]) for i in range(X.shape[0])]
    expected = model.decision_function(sp.csr_matrix(X)).tolist()
    wrong = []

    def score(offset):
        try:
            for _ in range(30):
                for i in range(offset, len(rows), 2):
                    if model.decision_one(rows[i]) != expected[i]:
                        wrong.append(i)
        except Exception as error:  # (a thread's exception would go unseen)
            wrong.append(error)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=score, args=(t,)) for t in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not wrong


@pytest.mark.parametrize("cls", ONLINE, ids=lambda c: c.__name__)
def test_bound_weights_are_the_learners_weights(cls):
    """A learner's bound weights (``_bind_coef``, read by the dict scoring after every
    learning call) write ``_coef()`` and ``_intercept()`` bit for bit, follow the
    parameters they read when called, and refuse arrays that do not fit."""
    X, y = stream(n=60, d=6)
    model = make(cls).partial_fit(X[:30], y[:30], classes=np.unique(y))
    out = np.full(X.shape[1] + 1, np.nan)
    bound = model._bind_coef(out) if cls._scores_by_coef else None
    if bound is None:
        pytest.skip("binds no weights")
    fill, names = bound
    assert all(isinstance(getattr(model, name), np.ndarray) for name in names)
    for i in range(30, 60):
        model.learn_one(X[i], y[i])
        assert fill(model) is True
        np.testing.assert_array_equal(out[:-1], model._coef())
        assert out[-1] == model._intercept()
    if "column_scale" in model.get_params():  # a parameter read at each call
        model.set_params(column_scale=None)
        assert fill(model) is True
        np.testing.assert_array_equal(out[:-1], model._coef())
    short = np.zeros(X.shape[1])  # one too few: refused, nothing written
    fill_short, _ = model._bind_coef(short)
    assert fill_short(model) is False and not short.any()


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_score_one_is_score_samples_of_the_row(cls):
    """The public one-example score (what a learner that holds others scores its
    members with), dict and array rows, and the usual path's error for a bad row."""
    model, X = fitted(cls)
    if not hasattr(model, "score_one"):
        pytest.skip("no one-example calls")
    S = sp.csr_matrix(X)
    for i in range(0, X.shape[0], 7):
        assert model.score_one(X[i]) == model.score_samples(X[i : i + 1])[0]
        assert model.score_one(as_dict(X[i])) == model.score_samples(S[i])[0]
    with pytest.raises(ValueError, match="feature"):
        model.score_one({X.shape[1]: 1.0})
