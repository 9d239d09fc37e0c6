"""Tests of the classic online classifiers (Z11 §4.1 baselines; SPEC §12.6)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.stats import norm

from aucstream.online_classifiers import (
    ConfidenceWeighted,
    CostSensitivePA,
    PassiveAggressive,
    Perceptron,
    cw_coefficients,
)


def _stream(n=300, d=5, seed=0, imbalance=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > imbalance, 1, -1)
    return X, y


# ------------------------------------------------------------------ reference loops
def _ref_perceptron(X, y):
    w = np.zeros(X.shape[1])
    for x, t in zip(X, y, strict=True):
        if t * (w @ x) <= 0:
            w = w + t * x
    return w


def _ref_pa(X, y, C, variant=None, rho_pos=1.0):
    w = np.zeros(X.shape[1])
    for x, t in zip(X, y, strict=True):
        margin = t * (w @ x)
        if variant is None:
            loss = max(0.0, 1.0 - margin)
        else:
            if variant == "pb" and margin > 0:
                continue
            loss = max(0.0, np.sqrt(rho_pos if t > 0 else 1.0) - margin)
        sq = x @ x
        if loss > 0 and sq > 0:
            w = w + min(C, loss / sq) * t * x
    return w


def _ref_cw(X, y, eta):
    """CW-full written directly from SPEC §12.6 (Sigma stored and downdated)."""
    phi = norm.ppf(eta)
    psi, zeta = 1 + phi**2 / 2, 1 + phi**2
    mu, S = np.zeros(X.shape[1]), np.eye(X.shape[1])
    for x, t in zip(X, y, strict=True):
        m, v = t * (mu @ x), x @ S @ x
        if v <= 0:
            continue
        alpha = max(0.0, (-m * psi + np.sqrt(m * m * phi**4 / 4 + v * phi**2 * zeta)) / (v * zeta))
        if alpha <= 0:
            continue
        u = 0.25 * (-alpha * v * phi + np.sqrt(alpha**2 * v**2 * phi**2 + 4 * v)) ** 2
        beta = alpha * phi / (np.sqrt(u) + v * alpha * phi)
        g = S @ x
        mu = mu + alpha * t * g
        S = S - beta * np.outer(g, g)
    return mu, S


# ------------------------------------------------------------------------ Perceptron
def test_perceptron_matches_reference_and_counts_zero_as_mistake():
    X, y = _stream()
    model = Perceptron().fit(X, y)
    np.testing.assert_allclose(model.w_, _ref_perceptron(X, y), rtol=1e-12, atol=1e-12)
    # the very first example meets w = 0, a score of 0: it must trigger an update
    first = Perceptron().partial_fit(X[:1], y[:1], classes=[-1, 1])
    np.testing.assert_allclose(first.w_, y[0] * X[0])


# ----------------------------------------------------------------------------- PA-I
@pytest.mark.parametrize("C", [0.05, 0.5, 10.0])
def test_pa_step_matches_closed_form_and_scipy(C):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2, 4))
    model = PassiveAggressive(C=C).partial_fit(X[:1], [1], classes=[-1, 1])
    w0 = model.w_.copy()
    x, t = X[1], -1.0
    model.partial_fit(X[1:], [-1])
    loss = max(0.0, 1 - t * (w0 @ x))
    tau = min(C, loss / (x @ x))
    np.testing.assert_allclose(model.w_, w0 + tau * t * x, rtol=1e-12)

    # the PA-I problem: min 1/2 |w - w0|^2 + C xi, xi >= 1 - t w.x, xi >= 0
    def obj(z):
        return 0.5 * np.sum((z[:-1] - w0) ** 2) + C * z[-1]

    cons = [
        {"type": "ineq", "fun": lambda z: z[-1] - (1 - t * (z[:-1] @ x))},
        {"type": "ineq", "fun": lambda z: z[-1]},
    ]
    res = minimize(
        obj,
        np.append(w0, 1.0),
        constraints=cons,
        method="SLSQP",
        options={"ftol": 1e-12, "maxiter": 500},
    )
    ours = np.append(model.w_, max(0.0, 1 - t * (model.w_ @ x)))
    assert obj(ours) <= res.fun + 1e-9
    np.testing.assert_allclose(model.w_, res.x[:-1], atol=1e-6)


def test_pa_stream_reference_and_zero_vector_skip():
    X, y = _stream(seed=2)
    X[10] = 0.0
    for C in (2.0**-4, 1.0, 16.0):
        model = PassiveAggressive(C=C).fit(X, y)
        np.testing.assert_allclose(model.w_, _ref_pa(X, y, C), rtol=1e-10, atol=1e-12)
    assert np.all(np.isfinite(model.w_))


# ----------------------------------------------------------------------------- CPA
def test_cpa_loss_definitions_on_single_examples():
    # w after one positive example x0 = e1 with C large: w = sqrt(rho) e1 (loss/|x|^2)
    rho = 4.0
    for variant in ("pb", "ml"):
        m = CostSensitivePA(variant=variant, C=100.0, rho_pos=rho)
        m.partial_fit(np.array([[1.0, 0.0]]), [1], classes=[-1, 1])
        # w = 0 scores 0: a mistake, so both variants update with loss sqrt(rho) - 0
        np.testing.assert_allclose(m.w_, [np.sqrt(rho), 0.0])
        # a correctly ranked positive with margin 1 < sqrt(rho) = 2
        w0 = m.w_.copy()
        x = np.array([[0.5, 1.0]])  # margin = 2 * 0.5 = 1
        m.partial_fit(x, [1])
        if variant == "pb":
            np.testing.assert_array_equal(m.w_, w0)  # no mistake, no update
        else:
            tau = (np.sqrt(rho) - 1.0) / 1.25
            np.testing.assert_allclose(m.w_, w0 + tau * x[0])
        # a negative uses cost 1: margin for y=-1 is -w.x
        w1 = m.w_.copy()
        xn = np.array([[0.1, 0.0]])
        m.partial_fit(xn, [-1])
        margin = -(w1 @ xn[0])
        loss = 1.0 - margin
        assert margin < 0  # a mistake: both variants update
        np.testing.assert_allclose(m.w_, w1 - min(100.0, loss / 0.01) * xn[0])


@pytest.mark.parametrize("variant", ["pb", "ml"])
def test_cpa_stream_reference(variant):
    X, y = _stream(seed=3, imbalance=1.0)
    for C, rho in ((0.1, 1.0), (1.0, 8.0), (2.0**5, 2.0**10)):
        model = CostSensitivePA(variant=variant, C=C, rho_pos=rho).fit(X, y)
        ref = _ref_pa(X, y, C, variant=variant, rho_pos=rho)
        np.testing.assert_allclose(model.w_, ref, rtol=1e-10, atol=1e-12)


def test_cpa_ml_with_unit_cost_is_pa_i_with_margin_one():
    X, y = _stream(seed=4)
    a = CostSensitivePA(variant="ml", C=0.7, rho_pos=1.0).fit(X, y)
    b = PassiveAggressive(C=0.7).fit(X, y)
    np.testing.assert_allclose(a.w_, b.w_, rtol=1e-12)


# ------------------------------------------------------------------------------ CW
@pytest.mark.parametrize("eta", [0.6, 0.8, 0.95, 0.999])
def test_cw_matches_direct_formula(eta):
    X, y = _stream(n=60, d=4, seed=5)
    mu, S = _ref_cw(X, y, eta)
    model = ConfidenceWeighted(eta=eta).fit(X, y)
    np.testing.assert_allclose(model.mu_, mu, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(model.covariance_, S, rtol=1e-7, atol=1e-12)


def test_cw_step_meets_its_constraint_with_equality():
    # after an update with alpha > 0 the CW constraint y mu.x >= phi sqrt(x' Sigma x)
    # holds with equality (Crammer et al. 2008)
    rng = np.random.default_rng(6)
    for eta in (0.6, 0.9, 0.999):
        phi = norm.ppf(eta)
        for _ in range(20):
            m, v = rng.normal(), rng.uniform(0.01, 3.0)
            alpha, beta = cw_coefficients(m, v, eta)
            if alpha == 0:
                assert m >= phi * np.sqrt(v) - 1e-12
                continue
            m_new, v_new = m + alpha * v, v - beta * v * v
            assert v_new > 0
            np.testing.assert_allclose(m_new, phi * np.sqrt(v_new), rtol=1e-9)


def test_cw_eta_one_runs_as_0999():
    X, y = _stream(n=50, seed=7)
    a = ConfidenceWeighted(eta=1.0).fit(X, y)
    b = ConfidenceWeighted(eta=0.999).fit(X, y)
    np.testing.assert_array_equal(a.mu_, b.mu_)


@pytest.mark.parametrize("eta", [0.7, 0.999])
def test_cw_covariance_stays_symmetric_positive_definite(eta):
    # a long, low-dimensional, noisy stream drives the variance down by many orders
    X, y = _stream(n=20000, d=6, seed=8)
    X[::7] *= 50.0
    model = ConfidenceWeighted(eta=eta).fit(X, y)
    S = model.covariance_
    np.testing.assert_array_equal(S, S.T)
    sv = np.linalg.svd(model.sqrt_cov_, compute_uv=False)
    assert sv.min() > 0  # Sigma = A A^T is positive definite iff A is non-singular
    eig = np.linalg.eigvalsh(S)
    assert eig.min() > -1e-12 * eig.max()
    assert np.all(np.isfinite(model.mu_))


def test_cw_sparse_equals_dense_and_chunking():
    X, y = _stream(n=200, d=6, seed=9)
    X[np.abs(X) < 0.7] = 0.0
    full = ConfidenceWeighted(eta=0.8).fit(X, y)
    sparse = ConfidenceWeighted(eta=0.8).fit(sp.csr_matrix(X), y)
    np.testing.assert_array_equal(full.mu_, sparse.mu_)
    chunked = ConfidenceWeighted(eta=0.8)
    for lo in range(0, 200, 37):
        chunked.partial_fit(X[lo : lo + 37], y[lo : lo + 37], classes=[-1, 1])
    np.testing.assert_array_equal(full.mu_, chunked.mu_)
    np.testing.assert_array_equal(full.sqrt_cov_, chunked.sqrt_cov_)


@pytest.mark.parametrize(
    "bad",
    [
        (PassiveAggressive, {"C": 0.0}),
        (CostSensitivePA, {"variant": "xx"}),
        (CostSensitivePA, {"rho_pos": -1.0}),
        (ConfidenceWeighted, {"eta": 0.3}),
        (ConfidenceWeighted, {"eta": 1.5}),
    ],
)
def test_invalid_parameters(bad):
    cls, params = bad
    X, y = _stream(n=10)
    with pytest.raises(ValueError):
        cls(**params).fit(X, y)


def test_cw_rescaling_keeps_the_formula_up_to_scale():
    # the stream of the PD test makes (mu, Sigma) shrink past 2^-60, so the kernel
    # rescales several times; the direct formula still fits in float64 here
    rng = np.random.default_rng(8)
    X = rng.normal(size=(3000, 6))
    y = np.where(X @ rng.normal(size=6) + 0.3 * rng.normal(size=3000) > 0, 1, -1)
    X[::7] *= 50.0
    mu, S = _ref_cw(X, y, 0.999)
    assert np.abs(mu).max() < 2.0**-100  # the unscaled model is tiny ...
    model = ConfidenceWeighted(eta=0.999).fit(X, y)
    assert np.abs(model.mu_).max() > 2.0**-60  # ... ours was rescaled
    cos = mu @ model.mu_ / (np.linalg.norm(mu) * np.linalg.norm(model.mu_))
    np.testing.assert_allclose(cos, 1.0, atol=1e-8)
    ratio = model.covariance_ / S
    np.testing.assert_allclose(ratio, np.median(ratio), rtol=1e-5)
    np.testing.assert_allclose(
        np.median(ratio), (np.linalg.norm(model.mu_) / np.linalg.norm(mu)) ** 2, rtol=1e-6
    )


# ------------------------------------------------------------------ CW, averaged mean
def test_averaged_cw_scores_with_the_mean_direction_of_the_means():
    X, y = _stream(n=80, d=4, seed=10)
    directions = []
    for t in range(1, 81):
        mu = _ref_cw(X[:t], y[:t], 0.8)[0]
        directions.append(mu / np.linalg.norm(mu) if mu.any() else mu)
    model = ConfidenceWeighted(eta=0.8, average=True).fit(X, y)
    np.testing.assert_allclose(model.coef_[0], np.mean(directions, axis=0), rtol=1e-8)
    np.testing.assert_array_equal(model.mu_, ConfidenceWeighted(eta=0.8).fit(X, y).mu_)
    sparse = ConfidenceWeighted(eta=0.8, average=True).fit(sp.csr_matrix(X), y)
    np.testing.assert_array_equal(sparse.coef_, model.coef_)


def test_averaged_cw_ignores_the_rescaling_of_the_means():
    """The stream of the rescaling test: the means are multiplied by powers of two
    (and the formula's means shrink below 2^-100); their directions, and so the
    average, are the formula's."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(3000, 6))
    y = np.where(X @ rng.normal(size=6) + 0.3 * rng.normal(size=3000) > 0, 1, -1)
    X[::7] *= 50.0
    model = ConfidenceWeighted(eta=0.999, average=True)
    for lo in range(0, 3000, 500):
        model.partial_fit(X[lo : lo + 500], y[lo : lo + 500], classes=[-1, 1])
    assert np.abs(model.mu_).max() > 2.0**-60  # rescaled (see the test above)
    phi = norm.ppf(0.999)
    psi, zeta = 1 + phi**2 / 2, 1 + phi**2
    mu, S, total = np.zeros(6), np.eye(6), np.zeros(6)
    for x, t in zip(X, y):  # the direct formula, without rescaling
        m, v = t * (mu @ x), x @ S @ x
        alpha = max(0.0, (-m * psi + np.sqrt(m * m * phi**4 / 4 + v * phi**2 * zeta)) / (v * zeta))
        if alpha > 0:
            u = 0.25 * (-alpha * v * phi + np.sqrt(alpha**2 * v**2 * phi**2 + 4 * v)) ** 2
            beta = alpha * phi / (np.sqrt(u) + v * alpha * phi)
            g = S @ x
            mu, S = mu + alpha * t * g, S - beta * np.outer(g, g)
        total += mu / np.linalg.norm(mu)
    assert np.abs(mu).max() < 2.0**-100
    np.testing.assert_allclose(model.coef_[0], total / 3000, rtol=1e-6, atol=1e-9)
