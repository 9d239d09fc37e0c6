"""Tests of the batch baselines (G16 Table 3; SPEC §12.2-§12.4)."""

from __future__ import annotations

import lzma
import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.linear_model import Ridge

from aucstream.batch import (
    LSSVMAUC,
    SVMOR,
    BatchUnivariate,
    PairwiseHingeSVM,
    SVMPerfAUC,
    pairwise_hinge_oracle,
)
from aucstream.metrics import pairwise_auc_loss


def _data(n=80, d=4, seed=0, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + 0.3
    y = np.where(X @ rng.normal(size=d) + 0.8 * rng.normal(size=n) > 0.5, 1, -1)
    if sparse:
        X[np.abs(X) < 0.6] = 0.0
    return X, y


def _pairs(X, y):
    D = (X[y > 0][:, None, :] - X[y < 0][None, :, :]).reshape(-1, X.shape[1])
    return D


# ------------------------------------------------------------------------- LS-SVM
@pytest.mark.parametrize("lam", [2.0**-8, 0.5, 8.0])
def test_lssvm_matches_brute_force_over_all_pairs(lam):
    X, y = _data(seed=1)
    D = _pairs(X, y)
    w = LSSVMAUC(lam=lam).fit(X, y).w_

    def obj(v):
        r = 1.0 - D @ v
        return 0.5 * lam * v @ v + 0.5 * np.mean(r**2), lam * v - D.T @ r / len(D)

    # the gradient over the explicit pairs vanishes at the closed form ...
    assert np.linalg.norm(obj(w)[1]) < 1e-10
    # ... and a generic solver on the explicit-pairs objective finds the same point
    res = minimize(
        obj,
        np.zeros(X.shape[1]),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10000},
    )
    np.testing.assert_allclose(w, res.x, rtol=1e-6, atol=1e-8)
    assert obj(w)[0] <= res.fun + 1e-12


def test_lssvm_sparse_equals_dense():
    X, y = _data(seed=2, sparse=True)
    a = LSSVMAUC(lam=0.1).fit(X, y).w_
    b = LSSVMAUC(lam=0.1).fit(sp.csr_matrix(X), y).w_
    np.testing.assert_allclose(a, b, rtol=1e-10)
    Xs = sp.random(200, 30, density=0.05, random_state=3, format="csr")
    ys = np.random.default_rng(3).integers(0, 2, 200)
    c = LSSVMAUC(lam=0.1).fit(Xs, ys).w_
    e = LSSVMAUC(lam=0.1).fit(Xs.toarray(), ys).w_
    np.testing.assert_allclose(c, e, rtol=1e-9, atol=1e-12)


# -------------------------------------------------------------------- univariate
def _uni_objective(X, y, lam, loss):
    n = len(y)
    rho = np.where(y > 0, n / (2.0 * np.sum(y > 0)), n / (2.0 * np.sum(y < 0)))

    def f(z):
        w, b = z[:-1], z[-1]
        margin = y * (X @ w + b)
        if loss == "squ":
            r = 1.0 - margin
            val, dl = r**2, -2.0 * r
        else:
            val, dl = np.logaddexp(0.0, -margin), -1.0 / (1.0 + np.exp(margin))
        coef = rho * dl * y / n
        return (
            0.5 * lam * w @ w + np.sum(rho * val) / n,
            np.append(lam * w + X.T @ coef, np.sum(coef)),
        )

    return f


@pytest.mark.parametrize("loss", ["squ", "log"])
@pytest.mark.parametrize("lam", [2.0**-6, 1.0])
def test_batch_univariate_matches_brute_force(loss, lam):
    X, y = _data(seed=4)
    model = BatchUnivariate(loss=loss, lam=lam, tol=1e-10).fit(X, y)
    f = _uni_objective(X, y, lam, loss)
    res = minimize(
        f,
        np.zeros(X.shape[1] + 1),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10000},
    )
    ours = np.append(model.w_, model.b_)
    assert f(ours)[0] <= res.fun + 1e-9
    np.testing.assert_allclose(ours, res.x, rtol=1e-4, atol=1e-5)
    if loss == "squ":  # the closed form is exact: its gradient vanishes
        assert np.linalg.norm(f(ours)[1]) < 1e-10


def test_batch_uni_squ_equals_weighted_ridge():
    X, y = _data(seed=5)
    lam, n = 0.25, len(y)
    rho = np.where(y > 0, n / (2.0 * np.sum(y > 0)), n / (2.0 * np.sum(y < 0)))
    ridge = Ridge(alpha=n * lam / 2, solver="cholesky").fit(X, y, sample_weight=rho)
    model = BatchUnivariate(loss="squ", lam=lam).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(model.w_, ridge.coef_, rtol=1e-8)
    np.testing.assert_allclose(model.b_, ridge.intercept_, rtol=1e-8, atol=1e-12)


def test_balanced_uni_squ_has_the_lssvm_direction():
    # w_squ = (lam I + S+ + S- + dd'/2)^-1 d, parallel to LS-SVM's by Sherman-Morrison
    X, y = _data(seed=6)
    a = LSSVMAUC(lam=0.3).fit(X, y).w_
    b = BatchUnivariate(loss="squ", lam=0.3).fit(X, y).w_
    np.testing.assert_allclose(a / np.linalg.norm(a), b / np.linalg.norm(b), rtol=1e-9)


# ---------------------------------------------------------------- pairwise hinge
@pytest.mark.parametrize("seed", range(5))
def test_oracle_counts_equal_brute_force(seed):
    rng = np.random.default_rng(seed)
    if seed % 2:  # integer scores: many ties and margins of exactly 1
        s_pos, s_neg = rng.integers(-3, 4, 40).astype(float), rng.integers(-3, 4, 30) * 1.0
    else:
        s_pos, s_neg = rng.normal(size=40), rng.normal(size=30) - 0.5
    k, m, hinge = pairwise_hinge_oracle(s_pos, s_neg)
    violated = (s_pos[:, None] - s_neg[None, :]) < 1.0
    np.testing.assert_array_equal(k, violated.sum(axis=1))
    np.testing.assert_array_equal(m, violated.sum(axis=0))
    y = np.r_[np.ones(40), -np.ones(30)]
    np.testing.assert_allclose(
        hinge, pairwise_auc_loss(y, np.r_[s_pos, s_neg], "hinge"), rtol=1e-12
    )


def _explicit_pairs_optimum(X, y, lam):
    """min lam/2 |w|^2 + mean_ij hinge over explicit pairs, via its box-constrained dual.

    max_a sum(a) - |D' a|^2 / (2 lam), 0 <= a <= 1/P, w = D' a / lam; L-BFGS-B on the
    dual, then the primal value at w (weak duality bounds it from below).
    """
    D = _pairs(X, y)
    P = len(D)

    def neg_dual(a):
        v = D.T @ a
        return -(a.sum() - v @ v / (2 * lam)), -(1.0 - D @ v / lam)

    res = minimize(
        neg_dual,
        np.full(P, 0.5 / P),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, 1.0 / P)] * P,
        options={"gtol": 1e-14, "ftol": 1e-16, "maxiter": 20000},
    )
    w = D.T @ res.x / lam
    primal = 0.5 * lam * w @ w + np.mean(np.maximum(0.0, 1.0 - D @ w))
    return primal, -res.fun


@pytest.mark.parametrize("lam", [2.0**-6, 2.0**-2, 2.0])
def test_pairwise_hinge_objective_matches_generic_solver(lam):
    X, y = _data(n=60, d=3, seed=7)
    model = PairwiseHingeSVM(lam=lam, tol=1e-7).fit(X, y)
    D = _pairs(X, y)
    ours = 0.5 * lam * model.w_ @ model.w_ + np.mean(np.maximum(0.0, 1.0 - D @ model.w_))
    np.testing.assert_allclose(model.objective_, ours, rtol=1e-12)
    primal, dual = _explicit_pairs_optimum(X, y, lam)
    assert dual <= ours + 1e-9  # weak duality: nothing beats the dual bound
    assert ours <= primal + 1e-6 * primal  # and we are as good as the generic solver
    np.testing.assert_allclose(ours, primal, rtol=1e-5)


def test_pairwise_hinge_default_tolerance_is_an_objective_bound():
    X, y = _data(n=70, d=4, seed=8)
    lam = 2.0**-5
    model = PairwiseHingeSVM(lam=lam).fit(X, y)
    primal, dual = _explicit_pairs_optimum(X, y, lam)
    assert model.objective_ <= dual + 1e-3 + 1e-9
    assert model.n_iter_ >= 2


def test_svmperf_and_svmor_are_the_same_problem():
    X, y = _data(n=100, d=5, seed=9, sparse=True)
    for lam in (2.0**-7, 0.5):
        a = SVMOR(lam=lam).fit(X, y).w_
        b = SVMPerfAUC(C=1.0 / (100 * lam)).fit(X, y).w_
        c = PairwiseHingeSVM(lam=lam).fit(sp.csr_matrix(X), y).w_
        np.testing.assert_allclose(a, b, rtol=1e-12)
        np.testing.assert_allclose(a, c, rtol=1e-7, atol=1e-10)
    assert SVMPerfAUC.param_grid["C"][10] == pytest.approx(0.01)


def test_batch_learners_have_no_partial_fit():
    for est in (LSSVMAUC(), BatchUnivariate(), PairwiseHingeSVM(), SVMPerfAUC()):
        assert est.is_batch
        assert not hasattr(est, "partial_fit")
        assert est.param_grid


@pytest.mark.parametrize(
    "bad",
    [
        (LSSVMAUC, {"lam": 0.0}),
        (BatchUnivariate, {"loss": "hinge"}),
        (BatchUnivariate, {"lam": -1.0}),
        (PairwiseHingeSVM, {"tol": 0.0}),
        (SVMPerfAUC, {"C": -1.0}),
    ],
)
def test_invalid_parameters(bad):
    cls, params = bad
    X, y = _data(n=20)
    with pytest.raises(ValueError):
        cls(**params).fit(X, y)


# ------------------------------------------------------------------ benchmark data
def _data_dir() -> Path:
    env = os.environ.get("AUCSTREAM_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "data"


def test_batch_learners_on_diabetes():
    path = _data_dir() / "diabetes_scale.xz"
    if not path.exists():
        pytest.skip("shared benchmark data not found")
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(lzma.open(path), n_features=8)
    rng = np.random.default_rng(0)
    test = rng.random(len(y)) < 0.3
    for est in (
        LSSVMAUC(lam=2**-6),
        BatchUnivariate("log", lam=2**-6),
        BatchUnivariate("squ", lam=2**-6),
        PairwiseHingeSVM(lam=2**-6),
    ):
        est.fit(X[~test], y[~test])
        assert est.score(X[test], y[test]) > 0.78  # G16 Table 3: about 0.83


# ---------------------------------------------------------------- example weights
@pytest.mark.parametrize(
    "make, rtol",
    [
        (lambda: LSSVMAUC(lam=0.3), 1e-9),
        (lambda: BatchUnivariate(loss="squ", lam=0.3), 1e-9),
        (lambda: BatchUnivariate(loss="log", lam=0.3, tol=1e-12, max_iter=10000), 1e-5),
        (lambda: PairwiseHingeSVM(lam=0.3, tol=1e-10), 1e-4),
    ],
)
@pytest.mark.parametrize("sparse", [False, True])
def test_integer_weights_equal_repeated_examples(make, rtol, sparse):
    X, y = _data(n=50, seed=12, sparse=sparse)
    weights = np.arange(50) % 4  # 0 drops a row, k repeats it k times
    repeated_X, repeated_y = np.repeat(X, weights, axis=0), np.repeat(y, weights)
    if sparse:
        X, repeated_X = sp.csr_matrix(X), sp.csr_matrix(repeated_X)
    weighted = make().fit(X, y, sample_weight=weights.astype(float))
    repeated = make().fit(repeated_X, repeated_y)
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, rtol=rtol, atol=rtol * 1e-3)
    np.testing.assert_allclose(
        weighted.intercept_ + weighted._threshold(),
        repeated.intercept_ + repeated._threshold(),
        rtol=rtol,
        atol=1e-9,
    )


def test_weighted_pairwise_hinge_oracle_equals_weighted_brute_force():
    rng = np.random.default_rng(3)
    s_pos, s_neg = rng.normal(size=7), rng.normal(size=9)
    w_pos, w_neg = rng.uniform(0.1, 3.0, 7), rng.uniform(0.1, 3.0, 9)
    margins = s_pos[:, None] - s_neg[None, :]
    pair_weights = w_pos[:, None] * w_neg[None, :]
    k, m, hinge = pairwise_hinge_oracle(s_pos, s_neg, w_pos, w_neg)
    np.testing.assert_allclose(k, ((margins < 1) * w_neg[None, :]).sum(axis=1))
    np.testing.assert_allclose(m, ((margins < 1) * w_pos[:, None]).sum(axis=0))
    expected = (pair_weights * np.maximum(0.0, 1.0 - margins)).sum() / pair_weights.sum()
    assert hinge == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("cls", [LSSVMAUC, BatchUnivariate, PairwiseHingeSVM, SVMPerfAUC])
def test_weights_that_empty_a_class_are_refused(cls):
    X, y = _data(n=30, seed=13)
    with pytest.raises(ValueError, match="positive class"):
        cls().fit(X, y, sample_weight=np.where(y > 0, 0.0, 1.0))


# ------------------------------------------------------------- overflow and memory
@pytest.mark.parametrize(
    "est",
    [LSSVMAUC(), PairwiseHingeSVM(lam=2.0**-10), SVMOR(), SVMPerfAUC()],
)
@pytest.mark.parametrize("value", [1.0e154, 1.3e154])
def test_overflowing_features_stop_with_a_clear_error(est, value):
    """Squares of the features fit in float64 (the input checks pass), but the pairwise
    differences and the matrices built from them do not: the solvers stop with an
    error that names the overflow (the cutting-plane method used to run with NaN in
    its stopping test)."""
    y = np.array([1, -1] * 20)
    X = (np.where(y > 0, -value, value) * np.linspace(0.5, 1.0, 40))[:, None]
    with pytest.raises(FloatingPointError, match="overflow"):
        est.fit(X, y)
    # the square loss's normal equations hold normalized weights: they stay finite
    model = BatchUnivariate(loss="squ").fit(X, y)
    assert np.isfinite(model.coef_).all() and model.score(X, y) == 1.0


@pytest.mark.parametrize("est", [LSSVMAUC(), BatchUnivariate(loss="squ")])
def test_square_matrices_are_checked_against_the_memory_budget(est):
    from aucstream._config import config_context

    X, y = _data(n=20, d=50, seed=15)
    with config_context(memory_budget=2 * 8 * 50 * 50):
        with pytest.raises(MemoryError, match="PairwiseHingeSVM"):
            est.fit(X, y)
    est.fit(X, y)
