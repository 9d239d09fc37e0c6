import numpy as np
import pytest
from conftest import make_stream

from aucstream import OPAUC
from aucstream.covariance import FullCovariance
from aucstream.metrics import pairwise_auc_loss
from aucstream.opauc import opauc_gradient


def per_step_loss_gradient(w, X, y, t, lam):
    """Gradient of G16 Eq. 5 at step t by brute force over the stored pairs."""
    opposite = [i for i in range(t) if y[i] != y[t]]
    grad = lam * w
    for i in opposite:
        d = y[t] * (X[t] - X[i])
        grad = grad - d * (1.0 - d @ w) / len(opposite)
    return grad


def test_gradient_equals_brute_force_over_pairs():
    X, y = make_stream(40, 5, seed=0)
    rng = np.random.default_rng(1)
    lam = 0.1
    for t in range(5, 40):
        opposite = FullCovariance(5).update(X[:t][y[:t] != y[t]])
        if opposite.count == 0:
            continue
        w = rng.normal(size=5)
        np.testing.assert_allclose(
            opauc_gradient(w, X[t], y[t], opposite, lam),
            per_step_loss_gradient(w, X, y, t, lam),
            rtol=1e-10, atol=1e-12,
        )


def test_kernel_follows_the_brute_force_recursion():
    X, y = make_stream(60, 4, seed=2, sparsity=0.3)
    eta, lam = 0.05, 0.01
    model = OPAUC(eta=eta, lam=lam).fit(X, y)
    w = np.zeros(4)
    for t in range(60):
        if np.any(y[:t] != y[t]):
            w = w - eta * per_step_loss_gradient(w, X, y, t, lam)
    np.testing.assert_allclose(model.w_, w, rtol=1e-10, atol=1e-12)


def test_statistics_equal_numpy():
    X, y = make_stream(200, 6, seed=3)
    model = OPAUC().fit(X, y)
    for label, summary in zip((-1, 1), model.stats_):
        part = X[y == label]
        assert summary.count == len(part)
        np.testing.assert_allclose(summary.mean, part.mean(axis=0), rtol=1e-12)
        np.testing.assert_allclose(summary.covariance, np.cov(part.T, bias=True), atol=1e-12)


def test_converges_to_the_closed_form_optimum():
    """On a long stream, w approaches argmin of the population objective (SPEC §12.3)."""
    rng = np.random.default_rng(4)
    n, d, lam = 60_000, 3, 0.1
    y = np.where(rng.random(n) < 0.3, 1, -1)
    X = rng.normal(size=(n, d)) @ np.diag([1.0, 0.5, 2.0]) + np.outer(y, [0.5, -0.3, 0.2])
    model = OPAUC(eta=2**-8, lam=lam).fit(X, y)
    pos, neg = X[y > 0], X[y < 0]
    delta = pos.mean(0) - neg.mean(0)
    cov = np.cov(pos.T, bias=True) + np.cov(neg.T, bias=True)
    A = lam * np.eye(d) + cov + np.outer(delta, delta)
    w_star = np.linalg.solve(A, delta)
    assert np.linalg.norm(model.w_ - w_star) < 0.05 * np.linalg.norm(w_star)


def test_pairwise_loss_decreases_over_a_pass_on_separable_data():
    """The O(n^2) square pairwise loss falls over the pass towards its minimum."""
    rng = np.random.default_rng(5)
    v = np.array([1.0, -2.0, 0.5, 0.0, 1.0])
    X = rng.normal(size=(400, 5))
    y = np.where(X @ v > 0, 1, -1)
    X = X + 0.2 * y[:, None] * v  # a margin: the data are separable
    model = OPAUC(eta=2**-9, lam=2**-10)
    losses = [pairwise_auc_loss(y, np.zeros(400))]
    for lo in range(0, 400, 50):
        model.partial_fit(X[lo : lo + 50], y[lo : lo + 50], classes=[-1, 1])
        losses.append(pairwise_auc_loss(y, model.decision_function(X)))
    # stochastic steps may wobble slightly near the optimum, never climb
    assert all(b < a * 1.01 for a, b in zip(losses, losses[1:]))
    # the minimum of the mean pairwise square loss, by brute force over all pairs
    D = (X[y > 0][:, None, :] - X[y < 0][None, :, :]).reshape(-1, 5)
    w_opt = np.linalg.lstsq(D, np.ones(len(D)), rcond=None)[0]
    best = pairwise_auc_loss(y, X @ w_opt)
    assert losses[-1] < 1.05 * best < 0.2 * losses[0]
    assert model.score(X, y) == 1.0


def test_only_statistics_until_both_classes_seen():
    X, y = make_stream(30, 3, seed=6)
    model = OPAUC().partial_fit(X[y > 0], y[y > 0], classes=[-1, 1])
    np.testing.assert_array_equal(model.w_, 0.0)
    assert model.stats_[1].count == np.sum(y > 0) and model.stats_[0].count == 0


@pytest.mark.parametrize("params", [{"eta": 0}, {"eta": -1}, {"lam": -0.1}, {"eta": np.nan}])
def test_invalid_parameters(params):
    X, y = make_stream(20, 2)
    with pytest.raises(ValueError, match="must be"):
        OPAUC(**params).fit(X, y)
