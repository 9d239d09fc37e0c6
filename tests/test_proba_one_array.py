"""``predict_proba_one`` of a dict row hands out one array per scorer, written again
only when no one else holds it: an array the caller keeps never changes, every
array holds ``predict_proba`` of its row bit for bit, and OPAUC's per-example entry
asks no plan variant per call when its answer is fixed (sparse rows, no forgetting)."""

import sys
import weakref

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_stream

from aucstream import OPAUC, SOLAM, UnivariateOnline
from aucstream._dict_scoring import LAST_SCORER, REFCOUNT_OFFSET
from aucstream._fastpath import FAST, READS_DICTS


def _rows(X):
    return [{int(j): float(X[i, j]) for j in np.flatnonzero(X[i])} for i in range(X.shape[0])]


@pytest.mark.parametrize("cls", [SOLAM, UnivariateOnline, OPAUC])
def test_kept_arrays_do_not_change_and_equal_predict_proba(cls):
    X, y = make_stream(80, 6, seed=5, sparsity=0.4)
    rows = _rows(X)
    model = cls().partial_fit(X[:40], y[:40], classes=[-1, 1])
    expected = model.predict_proba(sp.csr_matrix(X[40:60]))
    kept = [model.predict_proba_one(r) for r in rows[40:60]]  # (each one held)
    for got, want in zip(kept, expected):
        np.testing.assert_array_equal(got, want)
    assert len({id(a) for a in kept}) == len(kept)  # (none written twice)
    # dropped at once (as in a progressive loop): the same bits, row after row, and
    # interleaved with learning
    for i in range(60, 80):
        want = model.predict_proba(sp.csr_matrix(X[i : i + 1]))[0]
        np.testing.assert_array_equal(model.predict_proba_one(rows[i]), want)
        assert model.predict_proba_one(rows[i])[1] == want[1]
        model.learn_one(rows[i], y[i])
    for got, want in zip(kept, expected):  # (still what they were)
        np.testing.assert_array_equal(got, want)


@pytest.mark.skipif(not READS_DICTS or REFCOUNT_OFFSET < 0, reason="no compiled dict reading")
def test_the_array_is_reused_only_when_dropped():
    X, y = make_stream(50, 4, seed=2, sparsity=0.3)
    rows = _rows(X)
    model = SOLAM().partial_fit(X, y, classes=[-1, 1])
    first = model.predict_proba_one(rows[0])
    scorer = LAST_SCORER.ref()
    assert first is scorer.given  # (handed out)
    second = model.predict_proba_one(rows[1])
    assert second is not first  # (the first is held here: a copy)
    before = first.copy()
    view = first[1:]  # (a view holds its base)
    del first
    third = model.predict_proba_one(rows[2])
    assert third is not scorer.given
    assert view.base.tolist() == before.tolist()
    del view, third
    count = sys.getrefcount(scorer.given)  # (outside an assert: pytest holds its terms)
    assert count == 2  # (the scorer's, and the argument)
    fourth = model.predict_proba_one(rows[3])
    assert fourth is scorer.given
    np.testing.assert_array_equal(fourth, model.predict_proba(sp.csr_matrix(X[3:4]))[0])
    # an array that is referenced only weakly is written again (the documented limit)
    ref = weakref.ref(fourth)
    del fourth
    assert model.predict_proba_one(rows[4]) is ref()


def test_opauc_entry_asks_no_variant_without_forgetting():
    X, y = make_stream(60, 5, seed=4, sparsity=0.4)
    rows = _rows(X)
    for half_life, fixed in ((None, (0,)), (20, None)):
        model = OPAUC(half_life=half_life).partial_fit(X[:20], y[:20], classes=[-1, 1])
        reference = OPAUC(half_life=half_life).partial_fit(X[:20], y[:20], classes=[-1, 1])
        for i in range(20, 60):
            model.learn_one(rows[i], y[i])
            reference.partial_fit(sp.csr_matrix(X[i : i + 1]), y[i : i + 1])
        step = FAST.get(model).sparse_step
        if READS_DICTS:
            assert step is not None and step.fixed == fixed
            assert (step.variant is None) == (fixed is not None)
        np.testing.assert_array_equal(model.w_, reference.w_)
        for a, b in zip(model.stats_, reference.stats_):
            np.testing.assert_array_equal(a.scatter_, b.scatter_)
