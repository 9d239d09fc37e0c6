"""UnivariateOnline: steps against finite differences, overflow safety, real data."""

from __future__ import annotations

import lzma
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import require_data
from sklearn.datasets import load_svmlight_file

from aucstream import roc_auc
from aucstream.univariate import UnivariateOnline, univariate_loss

LOSSES = {
    "exp": lambda z: np.exp(-z),
    "log": lambda z: np.logaddexp(0.0, -z),
    "squ": lambda z: (1.0 - z) ** 2,
}


def stream(n=60, d=5, seed=0, sparsity=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 0.5
    if sparsity:
        X[rng.random(X.shape) < sparsity] = 0.0
    y = np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0.4, 1, -1)
    return X, y


def weighted_objective(params, x, y, rho, loss, lam, fit_intercept):
    w, b = params[:-1], params[-1] if fit_intercept else 0.0
    return rho * LOSSES[loss](y * (w @ x + b)) + 0.5 * lam * w @ w


def fd_gradient(f, params, *args, eps=1e-6):
    """Central differences of ``f(params, *args)`` in ``params``."""
    return np.array(
        [
            (f(params + eps * e, *args) - f(params - eps * e, *args)) / (2 * eps)
            for e in np.eye(params.size)
        ]
    )


def reference_run(X, y, loss, eta, lam, fit_intercept, weights):
    """Plain SGD on the weighted objective, with gradients by finite differences."""
    params = np.zeros(X.shape[1] + 1)
    counts = {1: 0, -1: 0}
    n_pos = (y > 0).sum()
    prior = {1: len(y) / (2.0 * n_pos), -1: len(y) / (2.0 * (len(y) - n_pos))}
    for t, (x, yt) in enumerate(zip(X, y), start=1):
        counts[yt] += 1
        rho = {"running": t / (2.0 * counts[yt]), "prior": prior[yt], "none": 1.0}[weights]
        g = fd_gradient(weighted_objective, params, x, yt, rho, loss, lam, fit_intercept)
        if not fit_intercept:
            g[-1] = 0.0
        params = params - eta * g
    return params[:-1], params[-1]


@pytest.mark.parametrize("loss", ["exp", "log", "squ"])
@pytest.mark.parametrize("weights", ["running", "prior", "none"])
@pytest.mark.parametrize("lam,fit_intercept", [(0.0, True), (0.3, False), (0.3, True)])
def test_steps_follow_finite_difference_gradients(loss, weights, lam, fit_intercept):
    X, y = stream(50, 5, seed=1, sparsity=0.3)
    model = UnivariateOnline(
        loss=loss, eta=0.2, lam=lam, fit_intercept=fit_intercept, weights=weights
    ).fit(sp.csr_matrix(X), y)
    w, b = reference_run(X, y, loss, 0.2, lam, fit_intercept, weights)
    np.testing.assert_allclose(model.coef_[0], w, rtol=1e-6, atol=1e-8)
    # the model's own intercept b (intercept_ also subtracts the calibrated threshold)
    assert model.b_[0] == pytest.approx(b, rel=1e-6, abs=1e-8)
    if not fit_intercept:
        assert model.b_[0] == 0.0


def test_one_step_at_a_time_matches_finite_differences():
    """Each partial_fit step is -eta times the gradient at the state before it."""
    X, y = stream(30, 4, seed=2)
    model = UnivariateOnline(loss="log", eta=0.5, lam=0.1)
    counts = {1: 0, -1: 0}
    params = np.zeros(5)
    for t in range(len(y)):
        model.partial_fit(X[t : t + 1], y[t : t + 1], classes=[-1, 1])
        counts[y[t]] += 1
        rho = (t + 1) / (2.0 * counts[y[t]])
        g = fd_gradient(weighted_objective, params, X[t], y[t], rho, "log", 0.1, True)
        new = np.append(model.coef_[0], model.b_[0])
        np.testing.assert_allclose((params - new) / 0.5, g, rtol=1e-6, atol=1e-9)
        params = new


def test_shrinkage_rescaling_is_exact():
    """eta * lam = 0.9 makes the scalar factor cross the rescale bound every 9 steps."""
    X, y = stream(60, 4, seed=3)
    model = UnivariateOnline(loss="log", eta=1.0, lam=0.9).fit(X, y)
    w, b = reference_run(X, y, "log", 1.0, 0.9, True, "running")
    assert model.scale_[0] > 1e-9
    np.testing.assert_allclose(model.coef_[0], w, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("loss", ["exp", "log", "squ"])
def test_loss_derivative_matches_finite_differences(loss):
    z = np.linspace(-8, 8, 41)
    eps = 1e-6
    fd = (univariate_loss(z + eps, loss) - univariate_loss(z - eps, loss)) / (2 * eps)
    np.testing.assert_allclose(univariate_loss(z, loss, derivative=True), fd, rtol=1e-6)
    np.testing.assert_allclose(univariate_loss(z, loss), LOSSES[loss](z), rtol=1e-12)


def test_losses_are_overflow_safe():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = np.array([-1e4, -800.0, 800.0, 1e4])
        d_exp = univariate_loss(big, "exp", derivative=True)
        assert np.all(np.isfinite(d_exp)) and d_exp[0] == -np.exp(50.0)
        d_log = univariate_loss(big, "log", derivative=True)
        np.testing.assert_allclose(d_log, [-1.0, -1.0, 0.0, 0.0], atol=1e-300)
        assert np.all(np.isfinite(univariate_loss(big, "log")))
    # a stream whose margins reach -1e4: the exp model stays finite
    X = np.array([[100.0, 0.0], [0.0, 100.0]] * 20)
    y = np.array([1, -1] * 20)
    model = UnivariateOnline(loss="exp", eta=1.0).fit(X, np.where(y > 0, -1, 1))
    assert np.all(np.isfinite(model.coef_)) and np.isfinite(model.intercept_[0])


def test_running_weights_balance_the_classes():
    # with rho_t = t / (2 T_y), positives and negatives get the same total weight
    X, y = stream(200, 3, seed=4)
    model = UnivariateOnline(weights="prior").fit(X, y)
    n_pos = (y > 0).sum()
    np.testing.assert_allclose(
        model.prior_weights_, [200 / (2.0 * (200 - n_pos)), 200 / (2.0 * n_pos)]
    )
    np.testing.assert_array_equal(model.class_counts_, [200 - n_pos, n_pos])
    with pytest.raises(ValueError, match="prior"):
        model.partial_fit(X, y)


@pytest.mark.parametrize(
    "params,match",
    [
        ({"loss": "hinge"}, "loss"),
        ({"weights": "balanced"}, "weights"),
        ({"eta": -1.0}, "eta"),
        ({"lam": -0.1}, "lam"),
        ({"eta": 2.0, "lam": 0.5}, "eta \\* lam"),
    ],
)
def test_invalid_parameters(params, match):
    X, y = stream(20, 3)
    with pytest.raises(ValueError, match=match):
        UnivariateOnline(**params).fit(X, y)
    with pytest.raises(ValueError, match="loss"):
        univariate_loss([0.0], "hinge")


def test_auc_on_a9a():
    path = require_data("a9a.xz", "a9a.t.xz")
    Xtr, ytr = load_svmlight_file(lzma.open(path / "a9a.xz"), n_features=123)
    Xte, yte = load_svmlight_file(lzma.open(path / "a9a.t.xz"), n_features=123)
    # batch logistic regression reaches ~0.90 on the a9a test set
    for loss, eta, threshold in [
        ("log", 2**-7, 0.895),
        ("exp", 2**-10, 0.895),
        ("squ", 2**-11, 0.895),
    ]:
        model = UnivariateOnline(loss=loss, eta=eta).fit(Xtr, ytr)
        auc = roc_auc(yte, model.decision_function(Xte))
        assert auc > threshold, (loss, auc)
