"""AdaOAM and SAdaOAM against brute-force references, generic solvers and real data."""

from __future__ import annotations

import lzma

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import require_data
from scipy.optimize import NonlinearConstraint, brentq, minimize, minimize_scalar
from sklearn.datasets import load_svmlight_file
from sklearn.model_selection import train_test_split

from aucstream import roc_auc
from aucstream.adaoam import (
    AdaOAM,
    ExactSparseCovariance,
    SAdaOAM,
    adagrad_l1_step,
    h_norm_projection,
)
from aucstream.covariance import FullCovariance

# ------------------------------------------------------------------ references


def pairwise_step_loss(w, x, y, opposite, lam):
    """D16/G16 per-step loss: lam/2 |w|^2 + sum_j (1 - y (x - x_j)^T w)^2 / (2 T)."""
    margins = (x - opposite) @ w
    return 0.5 * lam * w @ w + np.sum((1.0 - y * margins) ** 2) / (2 * len(opposite))


def pairwise_step_grad(w, x, y, opposite, lam):
    """Gradient of ``pairwise_step_loss``, pair by pair (no covariance formula)."""
    diffs = x - opposite
    return lam * w + ((diffs @ w - y)[:, None] * diffs).mean(axis=0)


def reference_h_projection(v, h, radius):
    """Root of ||h v / (h + mu)|| = r by bracketing (an independent solver)."""
    if np.linalg.norm(v) <= radius:
        return v.copy()
    f = lambda mu: np.linalg.norm(h * v / (h + mu)) - radius  # noqa: E731
    hi = h.max() * (np.linalg.norm(v) / radius - 1.0)
    mu = brentq(f, 0.0, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    return h * v / (h + mu)


def reference_run(X, y, eta, lam, delta=1e-8, projection="H", theta=None, running=None):
    """AdaOAM (theta None) or eager SAdaOAM by brute force over the stored examples.

    ``running`` (an array of d zeros): every column divided by the running maximum of
    its absolute values at each step, all stored examples included (AdaOAM's
    ``column_scale="max_abs"``); w is then the weights of the scaled columns."""
    d = X.shape[1]
    w, s = np.zeros(d), np.zeros(d)
    seen = {1: [], -1: []}
    radius = 1 / np.sqrt(lam) if lam > 0 else np.inf
    n_projected = 0
    for x, yt in zip(X, y):
        seen[yt].append(x)
        if running is not None:
            running[:] = np.maximum(running, np.abs(x))
        if not seen[-yt]:
            continue
        if running is not None:
            inv = np.divide(1.0, running, out=np.zeros(d), where=running > 0)
            g = pairwise_step_grad(w, x * inv, yt, np.array(seen[-yt]) * inv, lam)
        else:
            g = pairwise_step_grad(w, x, yt, np.array(seen[-yt]), lam)
        s += g * g
        h = delta + np.sqrt(s)
        u = w - eta * g / h
        if theta is not None:
            w = np.sign(u) * np.maximum(0.0, np.abs(u) - eta * theta / h)
            continue
        if np.linalg.norm(u) > radius and projection != "none":
            n_projected += 1
            u = (
                reference_h_projection(u, h, radius)
                if projection == "H"
                else u * radius / np.linalg.norm(u)
            )
        w = u
    return w, s, n_projected


def stream(n=80, d=6, seed=0, sparsity=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if sparsity:
        X[rng.random(X.shape) < sparsity] = 0.0
    y = np.where(X @ rng.normal(size=d) + 0.5 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def class_specific_stream(n=300, d=120, k=6, seed=0):
    """Sparse rows: features 0..d/2 shared, then a block seen only in positives and a
    block seen only in negatives (so the lazy path has coordinates to defer)."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.4, 1, -1)
    X = np.zeros((n, d))
    half, quarter = d // 2, d // 4
    for r in range(n):
        own = np.arange(half, half + quarter) if y[r] > 0 else np.arange(half + quarter, d)
        cols = np.concatenate([rng.choice(half, k, replace=False), rng.choice(own, 2)])
        X[r, cols] = rng.normal(size=cols.size) + 0.3 * y[r] * (cols < 5)
    return X, y


# ---------------------------------------------------------------- the gradient


def test_reference_gradient_matches_finite_differences():
    X, y = stream(30, 4, seed=1)
    rng = np.random.default_rng(0)
    w = rng.normal(size=4)
    x, yt, opp = X[0], 1, X[1:][y[1:] < 0]
    g = pairwise_step_grad(w, x, yt, opp, 0.3)
    eps = 1e-6
    fd = [
        (
            pairwise_step_loss(w + eps * e, x, yt, opp, 0.3)
            - pairwise_step_loss(w - eps * e, x, yt, opp, 0.3)
        )
        / (2 * eps)
        for e in np.eye(4)
    ]
    np.testing.assert_allclose(g, fd, rtol=1e-7, atol=1e-9)


# ------------------------------------------------------------------- AdaOAM


@pytest.mark.parametrize("projection", ["H", "euclidean", "none"])
@pytest.mark.parametrize("lam", [0.0, 2**-8, 4.0])
def test_adaoam_matches_brute_force_reference(projection, lam):
    X, y = stream(80, 6, seed=2, sparsity=0.3)
    model = AdaOAM(eta=2.0, lam=lam, projection=projection, column_scale=None).fit(X, y)
    w, s, n_projected = reference_run(X, y, eta=2.0, lam=lam, projection=projection)
    if lam == 4.0 and projection != "none":
        assert n_projected > 25  # the ball constraint was active
        assert np.linalg.norm(model.w_) <= 0.5 * (1 + 1e-12)
    np.testing.assert_allclose(model.coef_[0], w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.sq_grad_sum_, s, rtol=1e-9, atol=1e-12)
    assert model.n_updates_[0] == len(y) - np.argmax(y != y[0])


@pytest.mark.parametrize("projection", ["H", "none"])
def test_adaoam_default_learns_each_column_in_its_running_scale(projection):
    """column_scale="max_abs" (the default): D16's steps on the columns divided by
    their running maximum |x| (the summaries', too), whatever the columns' scales."""
    X, y = stream(80, 6, seed=2, sparsity=0.3)
    X *= np.logspace(-3, 4, 6)
    model = AdaOAM(eta=2.0, lam=2**-8, projection=projection).fit(X, y)
    running = np.zeros(6)
    w, s, _ = reference_run(X, y, eta=2.0, lam=2**-8, projection=projection, running=running)
    np.testing.assert_array_equal(model.scale_, running)
    np.testing.assert_allclose(model.w_, w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.coef_[0], w / running, rtol=1e-9, atol=0)
    np.testing.assert_allclose(model.sq_grad_sum_, s, rtol=1e-9, atol=1e-12)
    # the prequential score of an example is the model's before it, on its raw row
    fresh = AdaOAM(eta=2.0, lam=2**-8, projection=projection).fit(X[:40], y[:40])
    X[50] *= 50.0  # an example that raises every column's scale
    for i in range(40, 60):
        before = fresh.decision_function(X[i : i + 1]) + fresh._threshold()
        np.testing.assert_allclose(fresh.test_then_train(X[i : i + 1], y[i : i + 1]), before)


def test_adaoam_steps_are_skipped_until_both_classes_are_seen():
    X, y = stream(40, 4, seed=3)
    order = np.argsort(-y, kind="stable")  # all positives first
    model = AdaOAM(eta=0.5).partial_fit(
        X[order][: (y > 0).sum()], y[order][: (y > 0).sum()], classes=[-1, 1]
    )
    np.testing.assert_array_equal(model.w_, 0.0)
    np.testing.assert_array_equal(model.sq_grad_sum_, 0.0)
    assert model.n_updates_[0] == 0 and model.stats_[1].count == (y > 0).sum()
    model.partial_fit(X[order][(y > 0).sum() :], y[order][(y > 0).sum() :])
    assert model.n_updates_[0] == (y < 0).sum()


@pytest.mark.parametrize("seed", range(6))
def test_h_projection_matches_a_generic_solver(seed):
    rng = np.random.default_rng(seed)
    d = 5
    v = rng.normal(size=d) * 3
    h = np.exp(rng.normal(size=d) * 1.5)  # weights spread over orders of magnitude
    radius = 0.3 + rng.random()
    u = h_norm_projection(v, h, radius)
    res = minimize(
        lambda z: (z - v) @ (h * (z - v)),
        np.zeros(d),
        jac=lambda z: 2 * h * (z - v),
        method="SLSQP",
        constraints=[{"type": "ineq", "fun": lambda z: radius**2 - z @ z, "jac": lambda z: -2 * z}],
        options={"ftol": 1e-12, "maxiter": 500},
    )
    assert res.success
    np.testing.assert_allclose(u, res.x, atol=1e-6)
    res = minimize(
        lambda z: (z - v) @ (h * (z - v)),
        np.zeros(d),
        jac=lambda z: 2 * h * (z - v),
        hess=lambda z: np.diag(2 * h),
        method="trust-constr",
        constraints=[
            NonlinearConstraint(
                lambda z: z @ z,
                -np.inf,
                radius**2,
                jac=lambda z: 2 * z[None, :],
                hess=lambda z, m: 2 * m[0] * np.eye(d),
            )
        ],
        options={"gtol": 1e-12, "xtol": 1e-14, "maxiter": 5000},
    )
    assert res.success
    np.testing.assert_allclose(u, res.x, atol=1e-8)
    assert np.linalg.norm(u) == pytest.approx(radius, rel=1e-12)
    # and against an independent bracketing root finder, tightly
    np.testing.assert_allclose(u, reference_h_projection(v, h, radius), rtol=1e-10, atol=1e-14)


def test_h_projection_special_cases():
    v = np.array([0.3, -0.1])
    np.testing.assert_array_equal(h_norm_projection(v, [1.0, 5.0], 1.0), v)  # inside
    np.testing.assert_allclose(h_norm_projection([3.0, 4.0], [2.0, 2.0], 1.0), [0.6, 0.8])
    np.testing.assert_array_equal(h_norm_projection([3.0, 4.0], [2.0, 2.0], np.inf), [3, 4])
    # a heavy weight keeps its coordinate: the light one absorbs the shrinkage
    u = h_norm_projection([1.0, 1.0], [1e6, 1.0], 1.0)
    assert u[0] > 0.999 and abs(u[1]) < 0.05
    with pytest.raises(ValueError, match="positive"):
        h_norm_projection([1.0], [0.0], 1.0)
    with pytest.raises(ValueError, match="lengths"):
        h_norm_projection([1.0, 2.0], [1.0], 1.0)


# ------------------------------------------------------------------ SAdaOAM


@pytest.mark.parametrize("seed", range(4))
def test_l1_step_matches_the_prox_objective_minimized_numerically(seed):
    rng = np.random.default_rng(seed)
    d = 12
    w, g = rng.normal(size=d), rng.normal(size=d) * 2
    h = np.exp(rng.normal(size=d))
    eta, theta = 0.7, 0.8
    step = adagrad_l1_step(w, g, h, eta, theta)
    for i in range(d):

        def obj(v, gi=g[i], hi=h[i], wi=w[i]):
            return eta * gi * v + eta * theta * abs(v) + 0.5 * hi * (v - wi) ** 2

        res = minimize_scalar(obj, bracket=(-20.0, 20.0), method="brent", options={"xtol": 1e-12})
        assert obj(step[i]) <= res.fun + 1e-12
        assert step[i] == pytest.approx(res.x, abs=1e-6)
    assert np.any(step == 0.0) and np.any(step != 0.0)  # both branches exercised


@pytest.mark.parametrize("lazy", [True, False])
@pytest.mark.parametrize("lam", [0.0, 0.05])
def test_sadaoam_matches_brute_force_reference(lazy, lam):
    X, y = class_specific_stream(150, 40, seed=1)
    model = SAdaOAM(eta=0.5, lam=lam, theta=0.05, lazy=lazy, column_scale=None).fit(X, y)
    w, s, _ = reference_run(X, y, eta=0.5, lam=lam, theta=0.05)
    assert 0.1 < np.mean(w == 0) < 0.9
    np.testing.assert_allclose(model.coef_[0], w, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(model.coef_[0] == 0, w == 0)
    np.testing.assert_allclose(model.sq_grad_sum_, s, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("lam", [0.0, 0.01])
def test_lazy_updates_equal_eager_updates(lam):
    X, y = class_specific_stream(400, 200, seed=2)
    Xs = sp.csr_matrix(X)
    eager = SAdaOAM(eta=0.5, lam=lam, theta=0.02, lazy=False).fit(Xs, y)
    lazy = SAdaOAM(eta=0.5, lam=lam, theta=0.02, lazy=True)
    for lo in range(0, 400, 37):
        lazy.partial_fit(Xs[lo : lo + 37], y[lo : lo + 37], classes=[-1, 1])
    np.testing.assert_allclose(lazy.coef_, eager.coef_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(lazy.sq_grad_sum_, eager.sq_grad_sum_, rtol=1e-12, atol=1e-12)
    assert 0.2 < lazy.sparsity_ < 0.95
    assert lazy.sparsity_ == eager.sparsity_
    # the lazy state really defers work, and coef_ settles the debt without changing w_
    stale = lazy.last_ < lazy.n_updates_[0]
    if lam == 0.0:
        assert stale.sum() > 20
        assert np.any(lazy.w_[stale] != lazy.coef_[0][stale])
    else:  # lam > 0: every seen feature is updated eagerly (see the module docstring)
        assert not stale.any()
    np.testing.assert_array_equal(eager.last_, eager.n_updates_[0])


def test_lazy_path_leaves_one_class_features_alone_when_lam_is_zero():
    X, y = class_specific_stream(200, 80, seed=3)
    for end in (len(y), np.flatnonzero(y != y[-1])[-1] + 1):  # the stream ends with either class
        model = SAdaOAM(eta=0.5, lam=0.0, theta=0.01).fit(X[:end], y[:end])
        last_y, last_x = y[end - 1], X[end - 1]
        own_only = np.arange(40, 60) if last_y > 0 else np.arange(60, 80)
        opp_only = np.arange(60, 80) if last_y > 0 else np.arange(40, 60)
        # features seen only in the last example's class, and absent from it, had a zero
        # gradient at its step: they were left lazy; the opposite class's were updated
        untouched = own_only[last_x[own_only] == 0]
        assert untouched.size > 10
        assert np.all(model.last_[untouched] < model.n_updates_[0])
        np.testing.assert_array_equal(model.last_[opp_only], model.n_updates_[0])
        touched = own_only[last_x[own_only] != 0]
        np.testing.assert_array_equal(model.last_[touched], model.n_updates_[0])


def test_lazy_chunking_is_exact_with_lam_zero():
    X, y = class_specific_stream(200, 60, seed=4)
    whole = SAdaOAM(eta=0.3, lam=0.0, theta=0.05).fit(X, y)
    parts = SAdaOAM(eta=0.3, lam=0.0, theta=0.05)
    bounds = [0, 1, 5, 13, 50, 51, 120, 200]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        parts.partial_fit(sp.csr_matrix(X[lo:hi]), y[lo:hi], classes=[-1, 1])
    np.testing.assert_array_equal(whole.coef_, parts.coef_)
    np.testing.assert_array_equal(whole.w_, parts.w_)


@pytest.mark.parametrize("column_scale", [None, "max_abs"])
def test_theta_zero_is_adaoam_without_projection(column_scale):
    """Also in the running column scale (the defaults), where both step on the scaled
    weights and keep them when a scale grows."""
    X, y = stream(60, 5, seed=5, sparsity=0.4)
    X = X * [1.0, 100.0, 0.01, 3.0, 1.0]
    a = AdaOAM(eta=0.3, lam=0.01, projection="none", column_scale=column_scale).fit(X, y)
    s = SAdaOAM(eta=0.3, lam=0.01, theta=0.0, column_scale=column_scale).fit(X, y)
    np.testing.assert_allclose(s.coef_, a.coef_, rtol=1e-10, atol=1e-13)


# ------------------------------------------------------ exact sparse summaries


def test_exact_sparse_covariance_equals_numpy_and_grows():
    rng = np.random.default_rng(0)
    X = rng.normal(loc=1.0, size=(300, 50))
    X[rng.random(X.shape) < 0.85] = 0.0
    summary = ExactSparseCovariance(50, capacity=4)
    for lo in range(0, 300, 41):
        summary.update(sp.csr_matrix(X[lo : lo + 41]))
    assert summary.capacity > 4  # it grew (several times)
    full = FullCovariance(50).update(X)
    np.testing.assert_allclose(summary.scatter, full.scatter, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(summary.covariance, np.cov(X.T, bias=True), atol=1e-12)
    v = rng.normal(size=50)
    np.testing.assert_allclose(summary.matvec(v), full.matvec(v), rtol=1e-10, atol=1e-12)
    assert summary.nnz == np.count_nonzero(np.triu(X.T @ X))
    assert set(summary.support_[: summary.n_support_[0]]) == set(np.flatnonzero(X.any(0)))
    # dense input stores no zeros and gives the same entries
    dense = ExactSparseCovariance(50).update(X)
    assert dense.nnz == summary.nnz
    np.testing.assert_array_equal(dense.scatter, summary.scatter)


def test_exact_sparse_covariance_merge_and_empty():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 8))
    X[rng.random(X.shape) < 0.5] = 0.0
    a = ExactSparseCovariance(8).update(X[:30])
    b = ExactSparseCovariance(8).update(X[30:])
    merged = a.merge(b)
    assert merged.count == 100
    np.testing.assert_allclose(merged.covariance, np.cov(X.T, bias=True), atol=1e-12)
    empty = ExactSparseCovariance(8)
    np.testing.assert_array_equal(empty.matvec(np.ones(8)), 0.0)
    with pytest.raises(ValueError, match="8 features"):
        empty.update(np.ones((2, 3)))
    with pytest.raises(TypeError):
        a.merge(FullCovariance(8))


# ------------------------------------------------------------------ validation


@pytest.mark.parametrize(
    "cls,params,match",
    [
        (AdaOAM, {"eta": 0.0}, "eta"),
        (AdaOAM, {"lam": -1.0}, "lam"),
        (AdaOAM, {"delta": 0.0}, "delta"),
        (AdaOAM, {"projection": "l1"}, "projection"),
        (SAdaOAM, {"theta": -1.0}, "theta"),
        (SAdaOAM, {"lazy": "yes"}, "lazy"),
    ],
)
def test_invalid_parameters(cls, params, match):
    X, y = stream(20, 3)
    with pytest.raises(ValueError, match=match):
        cls(**params).fit(X, y)


# ------------------------------------------------------------------ real data


def _load(name, n_features):
    path = require_data(name) / name
    X, y = load_svmlight_file(lzma.open(path), n_features=n_features)
    return X, y


@pytest.mark.parametrize(
    "name,n_features,params,threshold",
    [
        ("diabetes_scale.xz", 8, {}, 0.81),  # OPAUC: ~0.83
        ("german.numer_scale.xz", 24, {"eta": 2**-6}, 0.77),  # OPAUC: ~0.79
    ],
)
def test_adaoam_auc_on_real_data(name, n_features, params, threshold):
    X, y = _load(name, n_features)
    X = X.toarray()
    aucs = []
    for seed in range(3):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, stratify=y, random_state=seed)
        model = AdaOAM(**params, column_scale=None).fit(Xtr, ytr)  # D16's setting
        aucs.append(roc_auc(yte, model.decision_function(Xte)))
    assert np.mean(aucs) > threshold, aucs


def test_sadaoam_is_sparser_than_adaoam_at_equal_auc_on_a9a():
    Xtr, ytr = _load("a9a.xz", 123)
    Xte, yte = _load("a9a.t.xz", 123)
    dense = AdaOAM(eta=2**-3, lam=2**-8, column_scale=None).fit(Xtr, ytr)
    sparse = SAdaOAM(eta=2**-3, lam=2**-8, theta=3e-3).fit(Xtr, ytr)
    auc_dense = dense.score(Xte, yte)
    auc_sparse = sparse.score(Xte, yte)
    assert auc_dense > 0.89
    assert auc_sparse > auc_dense - 0.01, (auc_sparse, auc_dense)
    assert sparse.sparsity_ > 0.2 and sparse.sparsity_ > dense.sparsity_ + 0.2
