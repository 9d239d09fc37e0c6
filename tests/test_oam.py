import numpy as np
import pytest
from conftest import make_stream
from scipy.optimize import minimize

from aucstream import OAM
from aucstream.metrics import pairwise_auc_loss
from aucstream.oam import _oam_gra, _oam_seq


def solve_problem_6(w0, d, y, C):
    """argmin_w ||w - w0||^2 + C max(0, 1 - y w.d), by a generic solver (SLSQP)."""
    k = len(w0)
    objective = lambda z: np.sum((z[:k] - w0) ** 2) + C * z[k]  # noqa: E731
    constraints = [
        {"type": "ineq", "fun": lambda z: z[k]},
        {"type": "ineq", "fun": lambda z: z[k] - (1 - y * z[:k] @ d)},
    ]
    z0 = np.append(w0, max(0.0, 1 - y * w0 @ d))
    res = minimize(
        objective,
        z0,
        constraints=constraints,
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 500},
    )
    return res.x[:k]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("C", [0.05, 1.0, 20.0])
def test_seq_step_solves_problem_6(seed, C):
    rng = np.random.default_rng(seed)
    d = 5
    w = rng.normal(size=d) * 0.3
    x_t, x_b, y = rng.normal(size=d), rng.normal(size=d), float(rng.choice([-1, 1]))
    idx = np.arange(d, dtype=np.int64)
    expected = solve_problem_6(w, x_t - x_b, y, C)
    items = x_b[None, :].copy()
    _oam_seq(w, idx, x_t.copy(), float(x_t @ x_t), y, items, np.array([x_b @ x_b]), 1, C / 2)
    np.testing.assert_allclose(w, expected, atol=1e-6)


def test_gra_step_matches_its_formula():
    rng = np.random.default_rng(0)
    d, size, C, y = 4, 6, 0.7, -1.0
    w = rng.normal(size=d)
    x_t = rng.normal(size=d)
    items = rng.normal(size=(size, d))
    expected = w.copy()
    for x in items:
        if y * w @ (x_t - x) <= 1:
            expected += C / 2 * y * (x_t - x)
    _oam_gra(
        w, np.arange(d, dtype=np.int64), x_t, y, items, size, C / 2, np.zeros(size, dtype=np.bool_)
    )
    np.testing.assert_allclose(w, expected, rtol=1e-12)


def test_kernel_follows_algorithm_1_with_reservoirs():
    """A Python transcription of Z11 Alg. 1-3 (same uniforms) gives the same w."""
    X, y = make_stream(80, 3, seed=1)
    C, N = 0.5, 5
    model = OAM(C=C, buffer_size=N, random_state=7).fit(X, y)
    uniforms = np.random.default_rng(7).random(80)
    w = np.zeros(3)
    buffers = {1: [], -1: []}
    seen = {1: 0, -1: 0}
    for t in range(80):
        own, opp = y[t], -y[t]
        c_t = C * max(1.0, seen[opp] / N)
        seen[own] += 1
        if len(buffers[own]) < N:
            buffers[own].append(X[t])
        else:
            j = int(uniforms[t] * seen[own])
            if j < N:
                buffers[own][j] = X[t]
        for x in buffers[opp]:
            diff = X[t] - x
            loss = max(0.0, 1 - own * w @ diff)
            if loss > 0:
                w = w + min(c_t / 2, loss / (diff @ diff)) * own * diff
    np.testing.assert_allclose(model.w_, w, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(model.buffers_[1].buffer, np.array(buffers[1]))


def test_unbounded_buffer_stores_everything():
    X, y = make_stream(100, 3, seed=2)
    model = OAM(buffer_size=None).fit(X, y)
    neg, pos = model.buffers_
    np.testing.assert_array_equal(pos.buffer, X[y > 0])
    np.testing.assert_array_equal(neg.buffer, X[y < 0])


@pytest.mark.parametrize("update", ["seq", "gra"])
def test_pairwise_hinge_loss_decreases_on_separable_data(update):
    rng = np.random.default_rng(3)
    w_true = np.array([1.0, -1.0, 0.5])
    X = rng.normal(size=(300, 3))
    y = np.where(X @ w_true > 0, 1, -1)
    X += 0.3 * y[:, None] * w_true
    model = OAM(C=0.05, buffer_size=20, update=update, random_state=0)
    losses = [pairwise_auc_loss(y, np.zeros(300), "hinge")]
    for lo in range(0, 300, 100):
        model.partial_fit(X[lo : lo + 100], y[lo : lo + 100], classes=[-1, 1])
        losses.append(pairwise_auc_loss(y, model.decision_function(X), "hinge"))
    assert losses[-1] < 0.3 * losses[0]
    assert model.score(X, y) > 0.98


@pytest.mark.parametrize("params", [{"update": "sgd"}, {"C": 0}, {"buffer_size": 0}])
def test_invalid_parameters(params):
    X, y = make_stream(20, 2)
    with pytest.raises(ValueError):
        OAM(**params).fit(X, y)
