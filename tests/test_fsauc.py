import math
import warnings

import numpy as np
import pytest
from conftest import a9a_normalized, make_stream

from aucstream.fsauc import FSAUC, fsauc_schedule
from aucstream.projections import project_l1_ball
from aucstream.solam import saddle_gradient, saddle_objective


def lemma1(r, p, T, R, kappa, delta=0.1):
    """D and beta of L18 Lemma 1 (SPEC §11, step 5), written out independently."""
    log_term = math.log(12 / delta)
    c = 2 + math.sqrt(2 * log_term)
    xi = min(p, 1 - p)
    den_d = xi * T - math.sqrt(2 * T * log_term)
    D = (
        2 * math.sqrt(2) * kappa * r
        + 4 * math.sqrt(2) * kappa * c * (1 + 2 * kappa) * R / math.sqrt(den_d)
        if den_d > 0
        else 1e7
    )
    den_b = xi - math.sqrt(2 * log_term / T)
    beta = (
        1 + 8 * kappa**2 + 32 * kappa**2 * (1 + 2 * kappa) ** 2 * c**2 / den_b if den_b > 0 else 1e7
    )
    return D, beta


def fsauc_reference(
    X, y, R, eta1, n=None, kappa=1.0, constraint="l1", leftover="drop", per_stage=False, check=None
):
    """SPEC §11 with dense (d+2)-vectors, one example at a time.

    ``check(v, alpha, v1, alpha1, r, D)`` is called after every update. Returns the
    model and the list of (r, D, eta, alpha1) of every stage started.
    """
    N, d = X.shape
    m, n0 = fsauc_schedule(N if n is None else n)
    r = 2 * math.sqrt(1 + 2 * kappa**2) * R
    D, beta_prev, eta = 2 * math.sqrt(2) * kappa * r, 1 + 8 * kappa**2, eta1
    v1, alpha1 = np.zeros(d + 2), 0.0
    sums, counts = {1: np.zeros(d), -1: np.zeros(d)}, {1: 0, -1: 0}
    t, stages = 0, []
    for k in range(1, m + 1):
        stages.append((r, D, eta, alpha1))
        if per_stage:
            sums, counts = {1: np.zeros(d), -1: np.zeros(d)}, {1: 0, -1: 0}
        v, alpha, total, used = v1.copy(), alpha1, np.zeros(d + 2), 0
        open_end = k == m and leftover == "last_stage"
        while (used < n0 or open_end) and t < N:
            x, label = X[t], int(y[t])
            t += 1
            sums[label] = sums[label] + x
            counts[label] += 1
            p = counts[1] / (counts[1] + counts[-1])
            gw, ga, gb, galpha = saddle_gradient(v[:d], v[d], v[d + 1], alpha, x, label, p)
            new = v - eta * np.concatenate([gw, [ga, gb]])
            if constraint == "l1":
                new[:d] = project_l1_ball(new[:d], R)
            else:
                new[:d] *= min(1.0, R / max(np.linalg.norm(new[:d]), 1e-300))
            new[d:] = np.clip(new[d:], -R * kappa, R * kappa)
            dist = np.linalg.norm(new - v1)
            if dist > r:
                new = v1 + r * (new - v1) / dist
            alpha = float(
                np.clip(
                    alpha + eta * galpha,
                    max(-2 * R * kappa, alpha1 - D),
                    min(2 * R * kappa, alpha1 + D),
                )
            )
            v = new
            total += v
            used += 1
            if check is not None:
                check(v, alpha, v1, alpha1, r, D)
        if used < n0 or open_end:
            return (total / used)[:d] if used else v1[:d], stages
        vbar = total / n0
        mean = {c: sums[c] / counts[c] if counts[c] else np.zeros(d) for c in (1, -1)}
        alpha_hat = float(vbar[:d] @ (mean[-1] - mean[1]))
        r = r / 2
        D, beta = lemma1(r, p, n0, R, kappa)
        eta = min(eta * 0.5 * math.sqrt(beta / beta_prev), eta)
        beta_prev = beta
        v1, alpha1 = vbar, float(np.clip(alpha_hat, -2 * R * kappa, 2 * R * kappa))
    return v1[:d], stages


def normalized_stream(n, d, seed, sparsity=0.0):
    X, y = make_stream(n, d, seed=seed, sparsity=sparsity)
    return X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12), y


# ------------------------------------------------------------------ schedule
def test_schedule_follows_spec_examples():
    assert fsauc_schedule(1000) == (2, 500)
    assert fsauc_schedule(32561) == (5, 6512)
    assert fsauc_schedule(7_333_333)[0] == 8
    for n in range(1, 21):
        assert fsauc_schedule(n) == (1, n)


@pytest.mark.parametrize("n", [2, 21, 100, 999, 1000, 4096, 49749, 94460, 10**6])
def test_schedule_formula(n):
    m = max(1, int(np.floor(0.5 * np.log2(2 * n / np.log2(n)))) - 1)
    assert fsauc_schedule(n) == (m, n // m)


def test_stages_and_their_lengths_in_the_kernel():
    X, y = normalized_stream(1000, 4, seed=0)
    model = FSAUC(R=1.0, eta1=0.5, n_samples=1000, column_scale=None)
    boundaries = []
    for t in range(1000):
        before = model._stage_state()["stage"] if t else 1
        model.partial_fit(X[t : t + 1], y[t : t + 1], classes=[-1, 1])
        state = model._stage_state()
        if state["stage"] != before or state["done"]:
            boundaries.append(t + 1)
            if state["done"]:
                break
    assert (model.n_stages_, model.stage_length_) == (2, 500)
    assert boundaries == [500, 1000]


def test_leftover_examples_are_dropped_or_join_the_last_stage():
    X, y = normalized_stream(1003, 4, seed=1)  # m = 2, n0 = 501: one example left over
    dropped = FSAUC(R=1.0, eta1=0.5, column_scale=None).fit(X, y)
    assert (dropped.n_stages_, dropped.stage_length_) == (2, 501)
    first = FSAUC(R=1.0, eta1=0.5, n_samples=1003, column_scale=None).fit(X[:1002], y[:1002])
    np.testing.assert_array_equal(dropped.coef_, first.coef_)
    joined = FSAUC(R=1.0, eta1=0.5, leftover="last_stage", column_scale=None).fit(X, y)
    assert not np.array_equal(joined.coef_, dropped.coef_)
    expected, _ = fsauc_reference(X, y, 1.0, 0.5, leftover="last_stage")
    np.testing.assert_allclose(joined.coef_[0], expected, rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------------ updates
@pytest.mark.parametrize("label", [1, -1])
def test_gradient_equals_finite_differences_of_the_saddle_function(label):
    rng = np.random.default_rng(1)
    h = 1e-6
    for _ in range(10):
        w, x = rng.normal(size=5), rng.normal(size=5)
        a, b, alpha, p = *rng.normal(size=3), rng.uniform(0.05, 0.95)
        point = np.concatenate([w, [a, b, alpha]])

        def F(q, x=x, p=p):
            return saddle_objective(q[:5], q[5], q[6], q[7], x, label, p)

        fd = [(F(point + h * e) - F(point - h * e)) / (2 * h) for e in np.eye(8)]
        gw, ga, gb, galpha = saddle_gradient(w, a, b, alpha, x, label, p)
        np.testing.assert_allclose(np.concatenate([gw, [ga, gb, galpha]]), fd, atol=1e-6)


def test_first_steps_follow_finite_difference_gradients():
    """Without active constraints, each PDSG step is v - eta grad F (by FD), alpha + ..."""
    X, y = normalized_stream(10, 3, seed=4)
    eta, h = 0.05, 1e-6
    model = FSAUC(R=1e4, eta1=eta, n_samples=1000, column_scale=None)
    q = np.zeros(6)  # (w, a, b, alpha)
    for t in range(10):
        model.partial_fit(X[t : t + 1], y[t : t + 1], classes=[-1, 1])
        p = np.mean(y[: t + 1] > 0)

        def F(z, t=t, p=p):
            return saddle_objective(z[:3], z[3], z[4], z[5], X[t], y[t], p)

        g = np.array([(F(q + h * e) - F(q - h * e)) / (2 * h) for e in np.eye(6)])
        q = q + eta * np.concatenate([-g[:5], g[5:]])
        w, a, b, alpha = model._iterate()
        np.testing.assert_allclose(np.concatenate([w, [a, b, alpha]]), q, atol=1e-8)


@pytest.mark.parametrize("constraint", ["l1", "l2"])
@pytest.mark.parametrize("R, eta1", [(0.3, 2.0), (3.0, 0.1), (1e4, 1.0)])
@pytest.mark.parametrize("accumulators", ["global", "per_stage"])
def test_kernel_equals_the_dense_reference(constraint, R, eta1, accumulators):
    X, y = normalized_stream(1500, 6, seed=2, sparsity=0.4)
    model = FSAUC(
        R=R, eta1=eta1, constraint=constraint, accumulators=accumulators, column_scale=None
    ).fit(X, y)
    expected, stages = fsauc_reference(
        X, y, R, eta1, constraint=constraint, per_stage=accumulators == "per_stage"
    )
    np.testing.assert_allclose(model.coef_[0], expected, rtol=1e-9, atol=1e-12)
    assert len(stages) == model.n_stages_ == 3


def test_stage_parameters_follow_alg1_and_lemma1():
    """r halves, D and beta follow Lemma 1, eta the min rule, alpha1 the class means."""
    X, y = normalized_stream(4000, 5, seed=6)
    R, eta1 = 2.0, 0.5
    m, n0 = fsauc_schedule(4000)
    assert m == 3
    _, stages = fsauc_reference(X, y, R, eta1)
    r0 = 2 * math.sqrt(3) * R
    model = FSAUC(R=R, eta1=eta1, n_samples=4000, column_scale=None).partial_fit(
        X[:1], y[:1], classes=[-1, 1]
    )
    state = model._stage_state()
    assert (state["stage"], state["radius"], state["eta"]) == (1, pytest.approx(r0), eta1)
    assert state["D"] == pytest.approx(2 * math.sqrt(2) * r0)
    model.partial_fit(X[1:n0], y[1:n0])
    beta_prev, eta = 9.0, eta1
    for k in range(1, m):
        lo = k * n0
        if k > 1:
            model.partial_fit(X[lo - n0 : lo], y[lo - n0 : lo])
        state = model._stage_state()
        assert state["stage"] == k + 1 and state["in_stage"] == 0
        assert state["radius"] == pytest.approx(r0 / 2**k, rel=1e-12)
        assert state["radius"] == pytest.approx(stages[k][0], rel=1e-12)
        p = np.mean(y[:lo] > 0)
        D, beta = lemma1(r0 / 2**k, p, n0, R, 1.0)
        eta = min(eta * 0.5 * math.sqrt(beta / beta_prev), eta)
        beta_prev = beta
        assert state["D"] == pytest.approx(D, rel=1e-12)
        assert state["beta"] == pytest.approx(beta, rel=1e-12)
        assert state["eta"] == pytest.approx(eta, rel=1e-12)
        # dual start: the stage output against the difference of the class means
        w1 = state["v1"]
        expected_alpha = w1 @ (X[:lo][y[:lo] < 0].mean(0) - X[:lo][y[:lo] > 0].mean(0))
        assert state["alpha1"] == pytest.approx(expected_alpha, rel=1e-10)
        assert state["alpha1"] == pytest.approx(stages[k][3], rel=1e-10)
        np.testing.assert_allclose(model.coef_[0], w1)  # no example in the stage yet


@pytest.mark.parametrize("constraint", ["l1", "l2"])
def test_every_iterate_lies_in_omega_and_the_stage_balls(constraint):
    X, y = normalized_stream(600, 5, seed=3, sparsity=0.3)
    R, kappa = 0.5, 1.0
    model = FSAUC(R=R, eta1=4.0, n_samples=600, constraint=constraint, column_scale=None)
    radii = set()
    for t in range(600):
        model.partial_fit(X[t : t + 1], y[t : t + 1], classes=[-1, 1])
        state = model._stage_state()
        if state["in_stage"] == 0:
            continue  # a stage just ended; its iterates were checked
        w, a, b, alpha = model._iterate()
        norm = np.abs(w).sum() if constraint == "l1" else np.linalg.norm(w)
        assert norm <= R * (1 + 1e-9)
        assert abs(a) <= R * kappa * (1 + 1e-12) and abs(b) <= R * kappa * (1 + 1e-12)
        v = np.concatenate([w, [a, b]])
        v1 = np.concatenate([state["v1"], [state["a1"], state["b1"]]])
        assert np.linalg.norm(v - v1) <= state["radius"] * (1 + 1e-9)
        radii.add(state["radius"])
        assert abs(alpha) <= 2 * R * kappa
        assert abs(alpha - state["alpha1"]) <= state["D"] * (1 + 1e-12)
    assert len(radii) == model.n_stages_ == 2  # each stage has its own (halved) radius

    def check(v, alpha, v1, alpha1, r, D):  # the reference obeys the same constraints
        assert np.linalg.norm(v - v1) <= r * (1 + 1e-9)

    fsauc_reference(X, y, R, 4.0, constraint=constraint, check=check)


def test_ball_constraint_is_active_in_that_test():
    """Guard: the parameters above do push iterates onto the stage balls."""
    X, y = normalized_stream(600, 5, seed=3, sparsity=0.3)
    hits = []

    def check(v, alpha, v1, alpha1, r, D):
        hits.append(np.linalg.norm(v - v1) >= r * (1 - 1e-9))

    fsauc_reference(X, y, 0.5, 4.0, check=check)
    assert 0 < np.mean(hits) < 1


# ------------------------------------------------------------------ stream length
def test_shorter_and_longer_streams_than_announced():
    X, y = normalized_stream(900, 4, seed=8)
    short = FSAUC(R=1.0, eta1=0.5, n_samples=1200, column_scale=None).fit(X, y)  # m = 2, n0 = 600
    expected, _ = fsauc_reference(X, y, 1.0, 0.5, n=1200)
    np.testing.assert_allclose(short.coef_[0], expected, rtol=1e-9, atol=1e-12)
    assert short._stage_state()["stage"] == 2 and short._stage_state()["in_stage"] == 300
    with pytest.warns(UserWarning, match="longer than the announced"):
        long = FSAUC(R=1.0, eta1=0.5, n_samples=600, column_scale=None).fit(X, y)
    np.testing.assert_array_equal(
        long.coef_, FSAUC(R=1.0, eta1=0.5, column_scale=None).fit(X[:600], y[:600]).coef_
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kept = FSAUC(R=1.0, eta1=0.5, n_samples=600, leftover="last_stage", column_scale=None).fit(
            X, y
        )
    expected, _ = fsauc_reference(X, y, 1.0, 0.5, n=600, leftover="last_stage")
    np.testing.assert_allclose(kept.coef_[0], expected, rtol=1e-9, atol=1e-12)


def test_partial_fit_without_n_samples_runs_one_stage():
    X, y = normalized_stream(300, 4, seed=9)
    model = FSAUC(R=1.0, eta1=0.5, column_scale=None)
    with pytest.warns(UserWarning, match="n_samples"):
        model.partial_fit(X[:100], y[:100])
    model.partial_fit(X[100:], y[100:])
    assert model.n_stages_ == 1 and model._stage_state()["in_stage"] == 300
    # one stage of 300 examples = the schedule of any n <= 20 stretched to 300
    expected, _ = fsauc_reference(X, y, 1.0, 0.5, n=20, leftover="last_stage")
    np.testing.assert_allclose(model.coef_[0], expected, rtol=1e-9, atol=1e-12)


def test_fit_and_partial_fit_agree_when_n_is_announced():
    X, y = normalized_stream(700, 5, seed=10, sparsity=0.5)
    whole = FSAUC(R=0.5, eta1=1.0, column_scale=None).fit(X, y)
    streamed = FSAUC(R=0.5, eta1=1.0, n_samples=700, column_scale=None)
    for lo in range(0, 700, 97):
        streamed.partial_fit(X[lo : lo + 97], y[lo : lo + 97], classes=[-1, 1])
    np.testing.assert_array_equal(whole.coef_, streamed.coef_)


def test_converges_to_the_population_optimum():
    """Gaussian classes: argmin E(1 - w.(x+ - x-))^2 solves (S_D + m m^T) w = m."""
    rng = np.random.default_rng(0)
    n, mean, cov = 40000, np.array([0.6, -0.3, 0.1]), np.diag([0.5, 1.0, 0.3])
    y = np.where(rng.random(n) < 0.3, 1, -1)
    X = rng.multivariate_normal(np.zeros(3), cov, size=n) + np.outer(y > 0, mean)
    w_star = np.linalg.solve(2 * cov + np.outer(mean, mean), mean)
    w = FSAUC(R=10.0, eta1=0.01, kappa=5.0, column_scale=None).fit(X, y).coef_[0]
    assert np.abs(w_star).sum() < 10.0  # the optimum lies inside the l1 ball
    cosine = w @ w_star / np.linalg.norm(w) / np.linalg.norm(w_star)
    assert cosine > 0.995
    assert np.linalg.norm(w - w_star) < 0.1 * np.linalg.norm(w_star)


@pytest.mark.parametrize(
    "bad",
    [
        {"R": -1.0},
        {"eta1": 0.0},
        {"kappa": np.nan},
        {"delta": 1.5},
        {"n_samples": 0},
        {"n_samples": 10.5},
        {"constraint": "l3"},
        {"leftover": "keep"},
        {"accumulators": "local"},
    ],
)
def test_invalid_parameters_are_rejected(bad):
    X, y = make_stream(30, 3)
    with pytest.raises(ValueError):
        FSAUC(**bad).fit(X, y)


def test_param_grid_is_the_papers():
    assert FSAUC.param_grid["R"] == [0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0, 100000.0]
    assert FSAUC.param_grid["eta1"] == [2.0**k for k in range(-10, 11)]


def test_auc_on_a9a():
    """One pass over a9a (l2-normalized rows); L18 Table 2 reports 0.9008."""
    X, y, Xt, yt = a9a_normalized()
    model = FSAUC(R=100.0, eta1=2.0**-4, shuffle=True, random_state=0, column_scale=None)
    model.fit(X, y)
    assert model.n_stages_ == 5
    assert model.score(Xt, yt) > 0.897


def test_warnings_name_the_callers_line():
    """FSAUC's warnings (no stream length; a stream longer than announced) point at
    the user's call, whichever path learnt: partial_fit of a chunk, of one row, or
    learn_one."""
    X = np.random.default_rng(0).normal(size=(30, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    calls = [
        lambda: FSAUC().partial_fit(X[:5], y[:5], classes=[-1, 1]),
        lambda: FSAUC().learn_one(X[0], y[0], classes=[-1, 1]),
    ]
    for call in [
        lambda m: m.partial_fit(X[10:12], y[10:12]),
        lambda m: m.partial_fit(X[10:11], y[10:11]),
        lambda m: m.learn_one(X[10], y[10]),
    ]:
        model = FSAUC(n_samples=10).partial_fit(X[:10], y[:10], classes=[-1, 1])
        calls.append(lambda call=call, model=model: call(model))
    for call in calls:
        with pytest.warns(UserWarning, match="n_samples") as record:
            call()
        assert {w.filename for w in record if "n_samples" in str(w.message)} == {__file__}


@pytest.mark.parametrize("constraint", ["l1", "l2"])
def test_default_is_alg1_on_each_column_in_its_running_scale(constraint):
    """column_scale="max_abs" (the default) is Algs. 1-3 on x / (running max |x|),
    whatever the columns' scales, and its coef_ is in the units of the raw columns."""
    X, y = make_stream(600, 6, seed=4, sparsity=0.3)
    X *= np.logspace(-3, 4, 6)
    running = np.maximum.accumulate(np.abs(X), axis=0)
    scaled = np.divide(X, running, out=np.zeros_like(X), where=running > 0)
    model = FSAUC(R=2.0, eta1=0.5, constraint=constraint).fit(X, y)
    paper = FSAUC(R=2.0, eta1=0.5, constraint=constraint, column_scale=None).fit(scaled, y)
    np.testing.assert_array_equal(model.scale_, running[-1])
    np.testing.assert_allclose(model.coef_[0] * running[-1], paper.coef_[0], rtol=1e-9, atol=1e-13)
    # the prequential score of an example is the model's before it, on its raw row
    fresh = FSAUC(R=2.0, eta1=0.5, n_samples=600, constraint=constraint).fit(X[:100], y[:100])
    X[120] *= 50.0  # an example that raises every column's scale
    for i in range(100, 140):
        before = fresh.decision_function(X[i : i + 1]) + fresh._threshold()
        np.testing.assert_allclose(fresh.test_then_train(X[i : i + 1], y[i : i + 1]), before)
