"""Polynomial-decay averaging of OnlinePAUC's and PAUCI's iterates (``average_decay``):
the lazily kept average against the iterates averaged by brute force, and against
Shamir and Zhang's recursion; it changes the scores only, never the learning."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from aucstream import PAUCI, OnlinePAUC

LEARNERS = {
    "OnlinePAUC": lambda **kw: OnlinePAUC(max_fpr=0.2, buffer_size=9, random_state=0, **kw),
    "PAUCI": lambda **kw: PAUCI(max_fpr=0.2, eta=0.3, **kw),
}


def _stream(n=250, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.7 * X[:, 1] + rng.normal(size=n) > 1.2).astype(int)
    return X, y


def _weights(n, decay):
    """a_t = t (t + 1) ... (t + decay - 1) for t = 1..n (1 for decay 0)."""
    t = np.arange(1, n + 1, dtype=float)
    a = np.ones(n)
    for i in range(decay):
        a *= t + i
    return a


def _iterates(make, X, y):
    """The last iterate after each example, one example per call."""
    model = make()
    out = []
    for r in range(len(y)):
        model.partial_fit(X[r : r + 1], y[r : r + 1], classes=[0, 1])
        out.append(model.w_.copy())
    return np.array(out)


@pytest.mark.parametrize("decay", [0, 1, 2, 3])
@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_the_average_is_the_weighted_average_of_the_iterates(name, decay):
    X, y = _stream()
    make = LEARNERS[name]
    W = _iterates(make, X, y)
    a = _weights(len(y), decay)
    model = make(average_decay=decay)
    pre = model.test_then_train(X, y, classes=[0, 1])
    want = a @ W / a.sum()
    np.testing.assert_allclose(model.coef_.ravel(), want, rtol=1e-8, atol=1e-10)
    # the prequential score of example r: the average of the r iterates before it
    ref = np.array([X[r] @ (a[:r] @ W[:r] / a[:r].sum()) if r else 0.0 for r in range(len(y))])
    np.testing.assert_allclose(pre, ref, rtol=1e-8, atol=1e-10)
    # Shamir and Zhang's recursion of the same average
    avg = np.zeros(W.shape[1])
    for t, w in enumerate(W, start=1):
        rate = (decay + 1.0) / (t + decay)
        avg = (1.0 - rate) * avg + rate * w
    np.testing.assert_allclose(model.coef_.ravel(), avg, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_it_changes_the_scores_not_the_learning(name):
    X, y = _stream(300, seed=1)
    make = LEARNERS[name]
    uniform, decayed = make().fit(X, y), make(average_decay=2).fit(X, y)
    np.testing.assert_array_equal(uniform.w_, decayed.w_)
    np.testing.assert_array_equal(uniform.grad_sq_, decayed.grad_sq_)
    assert not np.allclose(uniform.coef_, decayed.coef_)
    # 0 is the uniform average, bit for bit
    np.testing.assert_array_equal(make(average_decay=0).fit(X, y).coef_, uniform.coef_)


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_chunking_and_sparse_give_the_same_average(name):
    X, y = _stream(300, seed=2)
    make = LEARNERS[name]
    one = make(average_decay=2)
    pre = one.test_then_train(X, y, classes=[0, 1])
    parts = make(average_decay=2)
    pre_parts = np.concatenate(
        [
            parts.test_then_train(X[s : s + 37], y[s : s + 37], classes=[0, 1])
            for s in range(0, 300, 37)
        ]
    )
    np.testing.assert_array_equal(one.coef_, parts.coef_)
    np.testing.assert_array_equal(pre, pre_parts)
    sparse = make(average_decay=2).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.coef_, one.coef_, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_merge_combines_the_averages_by_examples_seen(name):
    X, y = _stream(600, seed=3)
    make = LEARNERS[name]
    a = make(average_decay=1).fit(X[:350], y[:350])
    b = make(average_decay=1).fit(X[350:], y[350:])
    coef = (350 * a.coef_ + 250 * b.coef_) / 600
    w = (350 * a.w_ + 250 * b.w_) / 600
    a.merge(b)
    np.testing.assert_allclose(a.coef_, coef, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.w_, w, rtol=1e-12)
    a.partial_fit(X[:100], y[:100])
    assert np.all(np.isfinite(a.decision_function(X)))


@pytest.mark.parametrize("name", sorted(LEARNERS))
@pytest.mark.parametrize("value", [-1, 17, 1.5, True, "1", None])
def test_bad_decays_are_refused_before_any_change(name, value):
    X, y = _stream(100)
    model = LEARNERS[name]().fit(X, y)
    w, coef = model.w_.copy(), model.coef_.copy()
    with pytest.raises((ValueError, TypeError), match="average_decay"):
        model.set_params(average_decay=value).partial_fit(X, y)
    np.testing.assert_array_equal(model.w_, w)
    np.testing.assert_array_equal(model.set_params(average_decay=0).coef_, coef)
    assert model.n_samples_seen_ == 100
