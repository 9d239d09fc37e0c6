"""``predict_proba_one`` of a dict row right after a learning call (a progressive
loop) reads the weights again through the learner's bound weights in one compiled
call (:meth:`aucstream._dict_scoring.OneScore.refill_score`, OPAUC's exact kinds through
``ExplicitEngine.bound_weights``): the probabilities stay ``predict_proba``'s bit
for bit, with the fast path on and off, and the refill steps aside (the usual path
reads the weights) when the members it was bound to are no longer the learner's."""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_stream

from aucstream import OPAUC, SOLAM, UnivariateOnline, config_context
from aucstream._dict_scoring import STALE, OneScore
from aucstream._fastpath import READS_DICTS

LEARNERS = [
    SOLAM,
    UnivariateOnline,
    OPAUC,
    lambda: OPAUC(covariance="sparse"),
    lambda: OPAUC(covariance="randomized", sketch_size=3, random_state=0),
]
IDS = ["SOLAM", "UnivariateOnline", "OPAUC", "OPAUC-sparse", "OPAUC-randomized"]


def _rows(X):
    return [{int(j): float(X[i, j]) for j in np.flatnonzero(X[i])} for i in range(X.shape[0])]


def _loop(make, X, y, rows):
    """The progressive loop's probabilities, and each row's ``predict_proba``."""
    model = make().partial_fit(X[:20], y[:20], classes=[-1, 1])
    got, want = [], []
    for i in range(20, X.shape[0]):
        want.append(model.predict_proba(sp.csr_matrix(X[i : i + 1]))[0])
        got.append(model.predict_proba_one(rows[i]).copy())
        model.learn_one(rows[i], y[i])
    return np.array(got), np.array(want), model


@pytest.mark.parametrize("make", LEARNERS, ids=IDS)
def test_progressive_loop_equals_predict_proba_fast_path_on_and_off(make, monkeypatch):
    X, y = make_stream(70, 6, seed=3, sparsity=0.4)
    rows = _rows(X)
    refilled = []
    refill = OneScore.refill_score

    def counted(self, learner, members, where):
        done = refill(self, learner, members, where)
        refilled.append(done < STALE)
        return done

    monkeypatch.setattr(OneScore, "refill_score", counted)
    got, want, on = _loop(make, X, y, rows)
    np.testing.assert_array_equal(got, want)
    with config_context(fast_path=False):
        got_off, want_off, off = _loop(make, X, y, rows)
    np.testing.assert_array_equal(got_off, got)
    np.testing.assert_array_equal(want_off, want)
    np.testing.assert_array_equal(on.coef_, off.coef_)
    name = make.__name__ if isinstance(make, type) else ""
    if READS_DICTS and name in ("SOLAM", "UnivariateOnline", "OPAUC"):
        # the weights read again by the refill after (nearly) every learning call
        assert sum(refilled) >= len(rows) - 25


def test_opauc_binds_its_weights_only_for_the_exact_kinds():
    X, y = make_stream(40, 5, seed=1)
    out = np.zeros(6)
    for kind, binds in (("full", True), ("sparse", True), ("randomized", False)):
        model = OPAUC(covariance=kind, sketch_size=2, random_state=0).fit(X, y)
        bound = model._bind_coef(out)
        assert (bound is not None) == binds
        if binds:
            fill, names = bound
            assert names == ("w_",) and fill.keeps and fill.scores is not None
            out[:] = np.nan
            assert fill(model) is True
            np.testing.assert_array_equal(out[:-1], model._coef())
            assert out[-1] == 0.0


def test_refill_steps_aside_when_the_weights_are_new_objects():
    X, y = make_stream(60, 6, seed=7, sparsity=0.3)
    rows = _rows(X)
    model = OPAUC().partial_fit(X[:20], y[:20], classes=[-1, 1])
    for i in range(20, 30):
        model.predict_proba_one(rows[i])
        model.learn_one(rows[i], y[i])
    # a new weights array (as loading or a user's assignment makes): the bound
    # weights hold the old one, refuse, and the usual path binds the new one
    model.__dict__["w_"] = model.__dict__["w_"] * 0.5
    for i in range(30, 40):
        want = model.predict_proba(sp.csr_matrix(X[i : i + 1]))[0]
        np.testing.assert_array_equal(model.predict_proba_one(rows[i]), want)
        model.learn_one(rows[i], y[i])


def test_a_refused_row_after_learning_changes_nothing():
    X, y = make_stream(40, 6, seed=2, sparsity=0.3)
    rows = _rows(X)
    model = SOLAM().partial_fit(X[:20], y[:20], classes=[-1, 1])
    model.predict_proba_one(rows[20])
    model.learn_one(rows[20], y[20])
    with pytest.raises(ValueError):
        model.predict_proba_one({0: float("nan")})
    want = model.predict_proba(sp.csr_matrix(X[21:22]))[0]
    np.testing.assert_array_equal(model.predict_proba_one(rows[21]), want)
