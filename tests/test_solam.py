import numpy as np
import pytest
from conftest import a9a_normalized, make_stream

from aucstream.projections import project_l1_ball
from aucstream.solam import SOLAM, SOLAML1, saddle_gradient, saddle_objective


def finite_difference_gradient(w, a, b, alpha, x, y, p, h=1e-6):
    """Central differences of F(v, alpha; z) in every coordinate of (w, a, b, alpha)."""
    point = np.concatenate([w, [a, b, alpha]])
    d = w.size

    def F(q):
        return saddle_objective(q[:d], q[d], q[d + 1], q[d + 2], x, y, p)

    grad = np.empty_like(point)
    for i in range(point.size):
        e = np.zeros_like(point)
        e[i] = h
        grad[i] = (F(point + e) - F(point - e)) / (2 * h)
    return grad


def solam_reference(X, y, R, zeta, kappa=1.0, constraint="l2", average="pre", running=False):
    """SPEC §10 with dense numpy arrays, one example at a time; ``running``: each
    column divided by the running maximum of its absolute values (column_scale)."""
    n, d = X.shape
    w, a, b, alpha = np.zeros(d), 0.0, 0.0, 0.0
    total, weights, n_pos = np.zeros(d), 0.0, 0
    scale = np.zeros(d)
    for t in range(1, n + 1):
        x, label = X[t - 1], y[t - 1]
        if running:
            scale = np.maximum(scale, np.abs(x))
            x = np.divide(x, scale, out=np.zeros(d), where=scale > 0)
        n_pos += label > 0
        p, gamma = n_pos / t, zeta / np.sqrt(t)
        gw, ga, gb, galpha = saddle_gradient(w, a, b, alpha, x, label, p)
        if average == "pre":
            total, weights = total + gamma * w, weights + gamma
        w = w - gamma * gw
        if constraint == "l2":
            w = w * min(1.0, R / max(np.linalg.norm(w), 1e-300))
        else:
            w = project_l1_ball(w, R)
        a = float(np.clip(a - gamma * ga, -R * kappa, R * kappa))
        b = float(np.clip(b - gamma * gb, -R * kappa, R * kappa))
        alpha = float(np.clip(alpha + gamma * galpha, -2 * R * kappa, 2 * R * kappa))
        if average == "post":
            total, weights = total + gamma * w, weights + gamma
    wbar = total / weights
    if running:
        wbar = np.divide(wbar, scale, out=np.zeros(d), where=scale > 0)
    return wbar, (w, a, b, alpha)


@pytest.mark.parametrize("label", [1, -1])
def test_gradient_equals_finite_differences_of_the_saddle_function(label):
    rng = np.random.default_rng(0)
    for _ in range(10):
        w, x = rng.normal(size=6), rng.normal(size=6)
        a, b, alpha, p = *rng.normal(size=3), rng.uniform(0.05, 0.95)
        gw, ga, gb, galpha = saddle_gradient(w, a, b, alpha, x, label, p)
        np.testing.assert_allclose(
            np.concatenate([gw, [ga, gb, galpha]]),
            finite_difference_gradient(w, a, b, alpha, x, label, p),
            rtol=1e-6,
            atol=1e-6,
        )


def test_first_steps_follow_finite_difference_gradients():
    """The kernel's iterate after each example equals a step along the FD gradient."""
    X, y = make_stream(12, 4, seed=7)
    zeta, R = 0.3, 100.0
    model = SOLAM(R=R, zeta=zeta, column_scale=None)
    w, a, b, alpha = np.zeros(4), 0.0, 0.0, 0.0
    for t in range(1, 13):
        model.partial_fit(X[t - 1 : t], y[t - 1 : t], classes=[-1, 1])
        p = np.mean(y[:t] > 0)
        g = finite_difference_gradient(w, a, b, alpha, X[t - 1], y[t - 1], p)
        gamma = zeta / np.sqrt(t)
        w, a, b = w - gamma * g[:4], a - gamma * g[4], b - gamma * g[5]
        alpha = alpha + gamma * g[6]
        got = model._iterate()
        np.testing.assert_allclose(got[0], w, atol=1e-7)
        np.testing.assert_allclose(got[1:], [a, b, alpha], atol=1e-7)


@pytest.mark.parametrize("constraint", ["l2", "l1"])
@pytest.mark.parametrize("average", ["pre", "post"])
@pytest.mark.parametrize("R", [0.2, 2.0, 1e4])
def test_kernel_equals_the_dense_reference(constraint, average, R):
    X, y = make_stream(300, 7, seed=11, sparsity=0.5)
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    model = SOLAM(R=R, zeta=0.8, constraint=constraint, average=average, column_scale=None).fit(
        X, y
    )
    wbar, (w, a, b, alpha) = solam_reference(X, y, R, 0.8, constraint=constraint, average=average)
    np.testing.assert_allclose(model.coef_[0], wbar, rtol=1e-9, atol=1e-11)
    got = model._iterate()
    np.testing.assert_allclose(got[0], w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got[1:], [a, b, alpha], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("constraint", ["l2", "l1"])
def test_default_learns_each_column_in_its_running_scale(constraint):
    """column_scale="max_abs" (the default): Alg. 1 on x / (running max |x|), exactly,
    whatever the columns' scales; its scores are those of coef_ on the raw columns."""
    X, y = make_stream(300, 6, seed=4, sparsity=0.3)
    X *= np.logspace(-3, 4, 6)
    model = SOLAM(R=2.0, zeta=0.8, constraint=constraint).fit(X, y)
    wbar, (w, a, b, alpha) = solam_reference(X, y, 2.0, 0.8, constraint=constraint, running=True)
    np.testing.assert_allclose(model.coef_[0], wbar, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(model._iterate()[0], w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.scale_, np.abs(X).max(axis=0), rtol=0)
    # the prequential score of an example is the model's before it, on its raw row
    fresh = SOLAM(R=2.0, zeta=0.8, constraint=constraint).partial_fit(X[:100], y[:100])
    X[120] *= 50.0  # an example that raises every column's scale
    for i in range(100, 140):
        # (test_then_train gives w.x itself; decision_function is centred on the
        # calibration's threshold)
        before = fresh.decision_function(X[i : i + 1]) + fresh._threshold()
        np.testing.assert_allclose(fresh.test_then_train(X[i : i + 1], y[i : i + 1]), before)


def test_lazy_rescaling_is_flushed_and_stays_exact():
    """A tight l2 ball shrinks sigma below 1e-4 many times; the result stays exact."""
    X, y = make_stream(400, 5, seed=3)
    model = SOLAM(R=0.05, zeta=4.0, kappa=3.0, column_scale=None).fit(X, y)
    assert np.any(model.avg_base_ != 0)  # at least one flush happened
    wbar, (w, *_rest) = solam_reference(X, y, 0.05, 4.0, kappa=3.0)
    np.testing.assert_allclose(model.coef_[0], wbar, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model._iterate()[0], w, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("constraint", ["l2", "l1"])
def test_every_iterate_lies_in_the_domain(constraint):
    X, y = make_stream(150, 6, seed=5, sparsity=0.3)
    R, kappa = 0.5, 2.0
    model = SOLAM(R=R, zeta=8.0, kappa=kappa, constraint=constraint, column_scale=None)
    for t in range(150):
        model.partial_fit(X[t : t + 1], y[t : t + 1], classes=[-1, 1])
        w, a, b, alpha = model._iterate()
        norm = np.linalg.norm(w) if constraint == "l2" else np.abs(w).sum()
        assert norm <= R * (1 + 1e-12)
        assert abs(a) <= R * kappa and abs(b) <= R * kappa and abs(alpha) <= 2 * R * kappa
        assert np.abs(model.coef_[0]).sum() <= R * (1 + 1e-9) * (
            np.sqrt(6) if constraint == "l2" else 1
        )


def test_solaml1_is_solam_with_the_l1_ball():
    X, y = make_stream(200, 5, seed=2)
    a = SOLAML1(R=0.7, zeta=2.0).fit(X, y)
    b = SOLAM(R=0.7, zeta=2.0, constraint="l1").fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert "constraint" not in a.get_params()


def test_converges_to_the_population_optimum():
    """Gaussian classes: argmin E(1 - w.(x+ - x-))^2 solves (S_D + m m^T) w = m."""
    rng = np.random.default_rng(0)
    n, mean, cov = 40000, np.array([0.6, -0.3, 0.1]), np.diag([0.5, 1.0, 0.3])
    y = np.where(rng.random(n) < 0.3, 1, -1)
    X = rng.multivariate_normal(np.zeros(3), cov, size=n) + np.outer(y > 0, mean)
    w_star = np.linalg.solve(2 * cov + np.outer(mean, mean), mean)
    w = SOLAM(R=100.0, zeta=0.5, kappa=10.0, column_scale=None).fit(X, y).coef_[0]
    cosine = w @ w_star / np.linalg.norm(w) / np.linalg.norm(w_star)
    assert cosine > 0.995
    assert np.linalg.norm(w - w_star) < 0.1 * np.linalg.norm(w_star)


@pytest.mark.parametrize(
    "bad",
    [
        {"R": 0},
        {"zeta": -1.0},
        {"kappa": np.inf},
        {"constraint": "l3"},
        {"average": "mid"},
        {"R": "1"},
    ],
)
def test_invalid_parameters_are_rejected(bad):
    X, y = make_stream(20, 3)
    with pytest.raises(ValueError):
        SOLAM(**bad).fit(X, y)


def test_param_grid_is_the_papers():
    assert SOLAM.param_grid["R"] == [0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0, 100000.0]
    assert SOLAM.param_grid["zeta"][0] == 2.0**-10 and SOLAM.param_grid["zeta"][-1] == 2.0**10
    assert len(SOLAM.param_grid["zeta"]) == 21


@pytest.mark.parametrize(
    "cls, params", [(SOLAM, {"R": 10.0, "zeta": 16.0}), (SOLAML1, {"R": 100.0, "zeta": 2.0})]
)
def test_auc_on_a9a(cls, params):
    """One pass over a9a (l2-normalized rows); L18 Table 2 reports about 0.899."""
    X, y, Xt, yt = a9a_normalized()
    model = cls(shuffle=True, random_state=0, column_scale=None, **params).fit(X, y)
    assert model.score(Xt, yt) > 0.893


# ------------------------------------------------- one example, rows of the state
# From 4096 features on (log_from), SOLAM (l2) declares u_ and the average's arrays
# written by rows (SOLAM._state_spec): a one-example call that does not fold
# first saves and checks only the rows of its features. Tested at a small d by
# lowering the limit; a small R makes sigma fall below 1e-4 often, so folds come
# between the calls.


def _row_logging_stream(monkeypatch, shadow_limit=None):
    from dataclasses import replace

    import scipy.sparse as sp

    from aucstream import _state

    monkeypatch.setattr(SOLAM, "_state_spec", replace(SOLAM._state_spec, log_from=8))
    if shadow_limit is not None:  # 0: every call through the undo log
        monkeypatch.setattr(_state, "SHADOW_LIMIT", shadow_limit)
    X, y = make_stream(200, 40, seed=9, sparsity=0.85)
    X[np.arange(200), np.arange(200) % 40] = 1.0  # no empty row
    return sp.csr_matrix(X), y


@pytest.mark.parametrize("R", [1.0, 0.1])
def test_one_example_calls_write_only_their_rows_unless_they_fold(R, monkeypatch):
    from conftest import watch_rows_outside

    X, y = _row_logging_stream(monkeypatch)
    whole = SOLAM(R=R).fit(X, y)
    model = SOLAM(R=R).partial_fit(X[:20], y[:20], classes=[-1, 1])
    declared = watch_rows_outside(monkeypatch, SOLAM)
    for i in range(20, 200):  # sparse rows, as the whole fit's (dense: up to rounding)
        if i % 2:
            model.learn_one(dict(zip(X[i].indices, X[i].data)), y[i])
        else:
            model.partial_fit(X[i], y[i : i + 1])
    np.testing.assert_array_equal(model.coef_, whole.coef_)  # the same model, bit for bit
    model.learn_one(X[0].toarray()[0], y[0])  # a dense row: its non-zero columns
    assert declared.count(4) > 100  # by rows (u_, the average's two arrays, scale_)
    if R < 1.0:
        assert 0 < declared.count(0)  # folds due (38 of 180 calls): saved whole


@pytest.mark.parametrize("shadow_limit", [None, 0], ids=["fast path", "undo log"])
@pytest.mark.parametrize("how", ["interrupt", "divergence"])
def test_rejected_one_example_calls_restore_the_rows_they_wrote(shadow_limit, how, monkeypatch):
    import pickle

    from conftest import patch_update

    X, y = _row_logging_stream(monkeypatch, shadow_limit)
    model = SOLAM(R=0.1).partial_fit(X[:20], y[:20], classes=[-1, 1])
    reference = pickle.loads(pickle.dumps(model))

    class Interrupt(BaseException):
        pass

    def failing(self, chunk, update):
        update(self, chunk)  # writes what it may, then fails
        if how == "interrupt":
            raise Interrupt
        self.u_[self._chunk_rows(chunk)[-1]] = np.nan  # a divergence in a written row

    for i in range(20, 80):
        before = pickle.dumps(model)
        with monkeypatch.context() as patch:
            patch_update(patch, SOLAM, failing)
            with pytest.raises(Interrupt if how == "interrupt" else FloatingPointError):
                model.learn_one(dict(zip(X[i].indices, X[i].data)), y[i])
        assert pickle.dumps(model) == before
        model.learn_one(dict(zip(X[i].indices, X[i].data)), y[i])
        reference.partial_fit(X[i], y[i : i + 1])
    np.testing.assert_array_equal(model.coef_, reference.coef_)
    np.testing.assert_array_equal(model.u_, reference.u_)
