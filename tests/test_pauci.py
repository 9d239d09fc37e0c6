"""PAUCI: the per-example gradients against finite differences of the objective, the
kernel against a plain-numpy reference, chunking, sparse input, save/load, merge, bad
input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from aucstream import PAUCI, load_model, save_model
from aucstream.metrics import roc_auc
from aucstream.pauci import _INITIAL, _scalar_gradients


def _stream(n=400, d=5, rate=0.15, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X[:, 0] + 0.7 * X[:, 1] + rng.normal(size=n) > np.quantile(X[:, 0], 1 - rate) + 0.5
    return X, y.astype(int)


def _softplus(x, kappa):
    return math.log1p(math.exp(kappa * x)) / kappa


def _term(v, y, p, beta, alpha, kappa, omega, two_way):
    """One example's term of the module docstring's objective, written out:
    ``v = [f, a, b, gamma, s', s]``."""
    f, a, b, g, sn, s = v
    if y > 0:
        P = (f - a) ** 2 - 2 * (1 + g) * f
        out = (alpha * s + _softplus(P - s, kappa)) / (alpha * p) if two_way else P / p
    else:
        N = (f - b) ** 2 + 2 * (1 + g) * f
        out = (beta * sn + _softplus(N - sn, kappa)) / (beta * (1 - p))
    return out - (1 + omega) * g * g


@pytest.mark.parametrize("two_way", [False, True])
@pytest.mark.parametrize("y", [1, -1])
def test_gradients_are_those_of_the_objective(y, two_way):
    """The kernel's partial derivatives equal central finite differences of the
    objective's per-example term, at random points."""
    rng = np.random.default_rng(1)
    beta, alpha, kappa, omega, p = 0.1, 0.4, 3.0, 0.5, 0.2
    for _ in range(20):
        v = np.array([*rng.uniform(0.05, 0.95, 3), rng.uniform(-0.9, 0.9), *rng.uniform(0, 2, 2)])
        scal = np.array([v[1], v[2], v[3], v[4], v[5], 0.0])
        out = np.empty(6)
        df = _scalar_gradients(v[0], y, scal, p, beta, alpha, kappa, omega, two_way, out)
        got = np.array([df, *out[:5]])  # d/d[f, a, b, gamma, s', s]
        h = 1e-6
        want = np.empty(6)
        for k in range(6):
            up, down = v.copy(), v.copy()
            up[k] += h
            down[k] -= h
            args = (y, p, beta, alpha, kappa, omega, two_way)
            want[k] = (_term(up, *args) - _term(down, *args)) / (2 * h)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def _reference(X, y, max_fpr, min_tpr, eta, kappa, omega):
    """The module docstring's one-pass algorithm in plain numpy, with the gradients
    taken by finite differences of ``_term`` (not by the kernel's formulas)."""
    n, d = X.shape
    w, G, U = np.zeros(d), np.zeros(d), np.zeros(d)
    scal, sq = np.array(_INITIAL, dtype=float), np.zeros(6)
    two_way = min_tpr is not None
    alpha = 1.0 - min_tpr if two_way else 1.0
    counts = [0, 0]
    pre = np.empty(n)
    for t0 in range(n):
        x, yi = X[t0], 1 if y[t0] > 0 else -1
        z = w @ x
        pre[t0] = ((t0 + 1) * z - U @ x) / t0 if t0 else 0.0
        t = t0 + 1
        counts[yi > 0] += 1
        p = (counts[1] + 1) / (t + 2)
        f = 1 / (1 + math.exp(-(z + scal[5])))
        v = np.array([f, *scal[:5]])
        grad = np.empty(6)
        for k in range(6):
            up, down = v.copy(), v.copy()
            up[k] += 1e-7
            down[k] -= 1e-7
            args = (yi, p, max_fpr, alpha, kappa, omega, two_way)
            grad[k] = (_term(up, *args) - _term(down, *args)) / 2e-7
        gw = grad[0] * f * (1 - f) * x
        nz = gw != 0
        G[nz] += gw[nz] ** 2
        delta = np.zeros(d)
        delta[nz] = eta * gw[nz] / (np.sqrt(G[nz]) + 1e-12)
        w -= delta
        U -= t * delta
        gs = np.append(grad[1:], grad[0] * f * (1 - f))  # ..., d/dc
        nz = gs != 0
        sq[nz] += gs[nz] ** 2
        step = np.zeros(6)
        step[nz] = eta * gs[nz] / (np.sqrt(sq[nz]) + 1e-12)
        step[2] = -step[2]  # ascent on gamma
        scal -= step
        scal[0], scal[1] = np.clip(scal[:2], 0, 1)
        scal[3] = np.clip(scal[3], 0, 5)
        scal[4] = np.clip(scal[4], -4, 1)
        lo = max(scal[1] - 1, -scal[0]) if two_way else scal[1] - 1
        scal[2] = np.clip(scal[2], lo, 1)
    return w, U, scal, pre


@pytest.mark.parametrize("min_tpr", [None, 0.5])
@pytest.mark.parametrize("max_fpr", [0.1, 1.0])
def test_kernel_equals_the_reference(max_fpr, min_tpr):
    X, y = _stream(150)
    model = PAUCI(max_fpr=max_fpr, min_tpr=min_tpr, eta=0.3, kappa=4.0, omega=0.2)
    pre = model.test_then_train(X, y, classes=[0, 1])
    w, U, scal, ref_pre = _reference(X, y, max_fpr, min_tpr, 0.3, 4.0, 0.2)
    np.testing.assert_allclose(model.w_, w, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(model.steps_, U, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.scalars_, scal, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(pre, ref_pre, rtol=1e-5, atol=1e-7)
    t = len(y)
    np.testing.assert_allclose(model.coef_.ravel(), ((t + 1) * w - U) / t, rtol=1e-5, atol=1e-7)
    assert np.abs(model.w_).sum() > 0


def test_chunking_and_sparse_give_the_same_model():
    X, y = _stream(300)
    one = PAUCI(max_fpr=0.2, min_tpr=0.3).fit(X, y)
    parts = PAUCI(max_fpr=0.2, min_tpr=0.3)
    for start in range(0, 300, 37):
        parts.partial_fit(X[start : start + 37], y[start : start + 37], classes=[0, 1])
    np.testing.assert_array_equal(one.w_, parts.w_)
    np.testing.assert_array_equal(one.scalars_, parts.scalars_)
    sparse = PAUCI(max_fpr=0.2, min_tpr=0.3).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.w_, one.w_, rtol=1e-9, atol=1e-12)


def test_save_load_and_resume_are_exact(tmp_path):
    X, y = _stream(400)
    whole = PAUCI(min_tpr=0.5).fit(X, y)
    half = PAUCI(min_tpr=0.5).partial_fit(X[:170], y[:170], classes=[0, 1])
    save_model(half, tmp_path / "half.model")
    resumed = load_model(tmp_path / "half.model")
    resumed.partial_fit(X[170:], y[170:])
    np.testing.assert_array_equal(resumed.coef_, whole.coef_)
    np.testing.assert_array_equal(resumed.scalars_, whole.scalars_)
    np.testing.assert_array_equal(resumed.decision_function(X), whole.decision_function(X))


def test_it_learns_the_top_of_the_ranking():
    X, y = _stream(3000, rate=0.05, seed=2)
    Xt, yt = _stream(3000, rate=0.05, seed=3)
    model = PAUCI(max_fpr=0.05, eta=0.1).fit(X, y)
    assert roc_auc(yt, model.decision_function(Xt), max_fpr=0.05) > 0.65  # 0.69 measured


@pytest.mark.parametrize(
    "params",
    [
        {"max_fpr": 0.0},
        {"max_fpr": 1.5},
        {"max_fpr": float("nan")},
        {"max_fpr": True},
        {"min_tpr": 1.0},
        {"min_tpr": -0.1},
        {"min_tpr": float("nan")},
        {"min_tpr": False},
        {"eta": 0.0},
        {"kappa": float("nan")},
        {"omega": -1.0},
    ],
)
def test_bad_parameters_are_refused_before_any_change(params):
    X, y = _stream(100)
    model = PAUCI().fit(X, y)
    w, scal = model.w_.copy(), model.scalars_.copy()
    name = next(iter(params))
    with pytest.raises((ValueError, TypeError), match=name):
        model.set_params(**params).partial_fit(X, y)
    np.testing.assert_array_equal(model.w_, w)
    np.testing.assert_array_equal(model.scalars_, scal)
    assert model.n_samples_seen_ == 100


def test_nan_rows_are_refused_before_any_change():
    X, y = _stream(100)
    model = PAUCI().fit(X, y)
    w = model.w_.copy()
    bad = X.copy()
    bad[50, 2] = np.nan
    with pytest.raises(ValueError):
        model.partial_fit(bad, y)
    np.testing.assert_array_equal(model.w_, w)
    assert model.n_samples_seen_ == 100


def test_merge_adds_what_adds_and_averages_the_rest():
    X, y = _stream(900, rate=0.2, seed=4)
    a = PAUCI().fit(X[:500], y[:500])
    b = PAUCI().fit(X[500:], y[500:])
    ta, tb = a.class_counts_.sum(), b.class_counts_.sum()
    na, nb = a.class_counts_.copy(), b.class_counts_.copy()
    coef = (ta * a.coef_ + tb * b.coef_) / (ta + tb)
    gamma = (ta * a.scalars_[2] + tb * b.scalars_[2]) / (ta + tb)
    a_pos = (na[1] * a.scalars_[0] + nb[1] * b.scalars_[0]) / (na[1] + nb[1])
    s_neg = (na[0] * a.scalars_[3] + nb[0] * b.scalars_[3]) / (na[0] + nb[0])
    G = a.grad_sq_ + b.grad_sq_
    a.merge(b)
    assert a.n_samples_seen_ == 900
    np.testing.assert_array_equal(a.class_counts_, na + nb)
    np.testing.assert_allclose(a.grad_sq_, G, rtol=1e-12)
    np.testing.assert_allclose(a.coef_, coef, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.scalars_[[0, 2, 3]], [a_pos, gamma, s_neg], rtol=1e-12)
    a.partial_fit(X[:200], y[:200])
    assert np.all(np.isfinite(a.decision_function(X)))
