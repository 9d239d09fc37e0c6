import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import minimize

from aucstream.projections import (
    l1_ball_threshold,
    l1_threshold,
    proj_box_inplace,
    proj_l1_ball_inplace,
    proj_l2_ball_inplace,
    project_box,
    project_l1_ball,
    project_l2_ball,
)

vectors = arrays(
    np.float64,
    st.integers(1, 30),
    elements=st.floats(-100, 100, allow_nan=False, allow_subnormal=False),
)
radii = st.floats(1e-3, 50.0)


def bisection_threshold(v, R, iters=200):
    """theta of the l1 projection by bisection on the monotone sum(max(|v|-theta, 0))."""
    mags = np.abs(v)
    lo, hi = 0.0, mags.max()
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if np.maximum(mags - mid, 0.0).sum() > R:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def slsqp(objective, grad, x0, constraints, bounds=None):
    res = minimize(
        objective,
        x0,
        jac=grad,
        constraints=constraints,
        bounds=bounds,
        method="SLSQP",
        options={"ftol": 1e-12, "maxiter": 1000},
    )
    assert res.success, res.message
    return res.x


def l1_projection_by_slsqp(v, R):
    """The l1 projection as a smooth QP: u = p - q, p, q >= 0, sum(p + q) <= R."""
    d = v.size

    def objective(z):
        return 0.5 * np.sum((z[:d] - z[d:] - v) ** 2)

    def grad(z):
        r = z[:d] - z[d:] - v
        return np.concatenate([r, -r])

    cons = [{"type": "ineq", "fun": lambda z: R - z.sum(), "jac": lambda z: -np.ones(2 * d)}]
    z = slsqp(objective, grad, np.zeros(2 * d), cons, bounds=[(0, None)] * (2 * d))
    return z[:d] - z[d:]


def l2_projection_by_slsqp(v, r, c):
    cons = [
        {
            "type": "ineq",
            "fun": lambda u: r**2 - np.sum((u - c) ** 2),
            "jac": lambda u: -2 * (u - c),
        }
    ]
    return slsqp(lambda u: 0.5 * np.sum((u - v) ** 2), lambda u: u - v, c.copy(), cons)


@pytest.mark.parametrize("method", ["condat", "sort"])
@pytest.mark.parametrize("seed", range(6))
def test_l1_projection_matches_a_generic_solver(method, seed):
    rng = np.random.default_rng(seed)
    v = rng.normal(size=2 + 2 * seed) * 3
    R = 0.3 * np.abs(v).sum()
    np.testing.assert_allclose(
        project_l1_ball(v, R, method=method), l1_projection_by_slsqp(v, R), atol=1e-6
    )


@pytest.mark.parametrize("seed", range(4))
def test_l2_projection_matches_a_generic_solver(seed):
    rng = np.random.default_rng(seed)
    v, c = rng.normal(size=5) * 2, rng.normal(size=5)
    np.testing.assert_allclose(
        project_l2_ball(v, 0.5, center=c), l2_projection_by_slsqp(v, 0.5, c), atol=1e-6
    )
    np.testing.assert_allclose(
        project_l2_ball(v, 0.5), l2_projection_by_slsqp(v, 0.5, np.zeros(5)), atol=1e-6
    )


@settings(max_examples=200, deadline=None)
@given(vectors, radii)
def test_l1_threshold_equals_bisection_and_sort(v, R):
    mags = np.abs(v)
    if mags.sum() <= R:
        assert l1_ball_threshold(v, R) == 0.0
        np.testing.assert_array_equal(project_l1_ball(v, R), v)
        return
    theta = l1_ball_threshold(v, R)
    assert theta == pytest.approx(bisection_threshold(v, R), rel=1e-9, abs=1e-9)
    assert theta == pytest.approx(l1_ball_threshold(v, R, method="sort"), rel=1e-10, abs=1e-12)
    passes = l1_ball_threshold(v, R, method="passes")
    assert passes == pytest.approx(theta, rel=1e-10, abs=1e-12 * mags.sum())
    assert np.maximum(mags - theta, 0.0).sum() == pytest.approx(R, rel=1e-9, abs=1e-13 * mags.sum())


@settings(max_examples=200, deadline=None)
@given(vectors, radii)
@example(v=np.full(26, 78.98279516), R=0.5)  # |u_i| = |v_i| - theta cancels 12 digits
def test_l1_projection_is_optimal(v, R):
    """Variational inequality (v - u).(z - u) <= 0 at every vertex z = +-R e_i of the ball.

    The l1 ball is the convex hull of these vertices, so this certifies optimality.
    Feasibility holds up to the rounding of |v_i| - theta, which is relative to the
    magnitudes of v, not to R.
    """
    u = project_l1_ball(v, R)
    assert np.abs(u).sum() <= R + 1e-13 * (R + np.abs(v).sum())
    g = v - u
    scale = 1e-9 * (1 + np.abs(v).sum() * np.abs(g).max())
    assert R * np.abs(g).max() - g @ u <= scale
    np.testing.assert_allclose(project_l1_ball(u, R), u, atol=1e-9 * (1 + R))  # idempotent


def test_l1_projection_special_cases():
    assert project_l1_ball([5.0], 2.0).tolist() == [2.0]
    np.testing.assert_allclose(project_l1_ball([1.0, 1.0, 1.0], 1.5), [0.5, 0.5, 0.5])
    np.testing.assert_allclose(project_l1_ball([0.0, -3.0, 0.0, 1.0], 2.0), [0, -2, 0, 0])
    inside = np.array([0.2, -0.3])
    np.testing.assert_array_equal(project_l1_ball(inside, 1.0), inside)


@settings(max_examples=100, deadline=None)
@given(vectors, radii)
def test_compiled_inplace_functions_agree_with_the_wrappers(v, R):
    a = v.copy()
    theta = proj_l1_ball_inplace(a, R, np.empty(3 * v.size))
    np.testing.assert_allclose(a, project_l1_ball(v, R), rtol=1e-12, atol=1e-12)
    assert theta == pytest.approx(l1_ball_threshold(v, R), rel=1e-12, abs=1e-12)
    b = v.copy()
    factor = proj_l2_ball_inplace(b, R)
    np.testing.assert_allclose(b, project_l2_ball(v, R), rtol=1e-12)
    assert factor == pytest.approx(min(1.0, R / max(np.linalg.norm(v), 1e-300)), rel=1e-12)
    c = v.copy()
    proj_box_inplace(c, -R, R)
    np.testing.assert_array_equal(c, np.clip(v, -R, R))
    np.testing.assert_array_equal(project_box(v, -R, R), np.clip(v, -R, R))
    mags = np.abs(v)
    work = np.full(2 * v.size, np.nan)  # the scratch content must not matter
    assert l1_threshold(mags, R, work) == pytest.approx(l1_ball_threshold(v, R), abs=0.0)
    np.testing.assert_array_equal(mags, np.abs(v))  # input untouched


def test_l2_projection_closed_form():
    np.testing.assert_allclose(project_l2_ball([3.0, 4.0], 1.0), [0.6, 0.8])
    np.testing.assert_allclose(project_l2_ball([3.0, 4.0], 10.0), [3.0, 4.0])
    np.testing.assert_allclose(project_l2_ball([4.0, 4.0], 1.0, center=[1.0, 0.0]), [1.6, 0.8])


def test_wrappers_reject_bad_input():
    with pytest.raises(ValueError, match="radius"):
        project_l1_ball([1.0], 0.0)
    with pytest.raises(ValueError, match="radius"):
        project_l2_ball([1.0], -1.0)
    with pytest.raises(ValueError, match="1-d"):
        project_l1_ball(np.ones((2, 2)), 1.0)
    with pytest.raises(ValueError, match="NaN"):
        project_l2_ball([np.nan], 1.0)
    with pytest.raises(ValueError, match="method"):
        project_l1_ball([1.0], 1.0, method="magic")
    with pytest.raises(ValueError, match="lower"):
        project_box([1.0], 1.0, 0.0)
    with pytest.raises(ValueError, match="shape"):
        project_l2_ball([1.0, 2.0], 1.0, center=[0.0])


def _michelot_pass_count(mags, R):
    s, k, passes = mags.sum(), np.count_nonzero(mags), 0
    while True:
        passes += 1
        keep = mags > (s - R) / k
        if keep.sum() >= k:
            return passes
        s, k = mags[keep].sum(), keep.sum()


def test_michelot_passes_hand_long_runs_to_condat():
    """Magnitudes built so that each pass drops only the smallest one need more than
    MICHELOT_PASSES passes: the remaining candidates go to Condat's algorithm, with
    the same theta."""
    from aucstream.projections import MICHELOT_PASSES, l1_threshold_passes

    R, mags, eps = 0.5, [1.0], 1e-14
    for m in range(2, 16):  # x_m just below the threshold of the first m - 1
        mags.append((sum(mags) - R) / (m - 1) * (1 - eps))
        eps *= 1.5 * m
    mags = np.concatenate([mags, np.zeros(5)])
    assert _michelot_pass_count(mags, R) > MICHELOT_PASSES
    expected = l1_ball_threshold(mags, R, method="sort")
    got = l1_threshold_passes(mags, mags.sum(), 15, R, np.full(3 * mags.size, np.nan))
    assert got == pytest.approx(expected, rel=1e-12)


# ------------------------------------------- Michelot's passes from any start (warm)
def sort_threshold(mags, R):
    """Duchi et al.'s sort-based theta in plain numpy (the reference)."""
    if mags.sum() <= R:
        return 0.0
    u = np.sort(mags)[::-1]
    cum = np.cumsum(u)
    j = np.arange(1, u.size + 1)
    rho = np.nonzero(u > (cum - R) / j)[0][-1]
    return (cum[rho] - R) / (rho + 1)


# few distinct values (ties), zeros, and vectors inside the ball
tied_vectors = arrays(
    np.float64,
    st.integers(1, 40),
    elements=st.sampled_from([0.0, 0.5, -0.5, 1.0, -2.0, 3.25, 1e-3, -7.0]),
)


def warm(v, R, rho0, center=None, tau=1.0, sigma=1.0):
    from aucstream.projections import l1_threshold_warm

    work = np.full(3 * v.size, np.nan)
    theta, k, norm = l1_threshold_warm(v, center, tau, sigma, R, rho0, work)
    return float(theta), int(k), float(norm)


@settings(max_examples=300, deadline=None)
@given(st.one_of(vectors, tied_vectors), radii, st.floats(0.0, 2.0))
@example(v=np.full(26, 78.98279516), R=0.5, frac=0.9)
@example(v=np.array([1.0, 1.0, 1.0, 0.0]), R=3.0, frac=0.5)  # on the sphere: inside
@example(v=np.array([2.0, 2.0, 2.0]), R=3.0, frac=1.0)  # ties, start at theta itself
def test_warm_threshold_equals_sort_and_does_not_depend_on_the_start(v, R, frac):
    """l1_threshold_warm gives the sort reference's theta, the support size and the
    projection's norm, bit for bit the same from every start: 0 (Michelot's own), below
    theta, at theta, above it (a start the first pass refuses) and far above."""
    mags = np.abs(v)
    expected = sort_threshold(mags, R)
    theta, k, norm = warm(v, R, 0.0)
    if mags.sum() <= R:
        assert theta == 0.0 and k == np.count_nonzero(v) and norm == pytest.approx(mags.sum())
    else:
        assert theta == pytest.approx(expected, rel=1e-10, abs=1e-12 * mags.sum())
        assert k == np.count_nonzero(mags > theta)
        assert norm == pytest.approx(R, rel=1e-9, abs=1e-12 * mags.sum())
    for rho0 in (frac * theta, theta, (1 + frac) * theta + 1e-300, frac * mags.max(), 1e300):
        assert warm(v, R, rho0) == (theta, k, norm)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 30), st.integers(0, 2**32 - 1), radii)
def test_warm_threshold_of_a_lazy_point(d, seed, R):
    """With a centre, the point is tau c + sigma v (the learners' lazy iterate)."""
    rng = np.random.default_rng(seed)
    v, c = rng.normal(size=d) * (rng.random(d) < 0.6), rng.normal(size=d)
    tau, sigma = rng.uniform(0.1, 2.0, size=2)
    w = tau * c + sigma * v
    theta, k, _ = warm(v, R, 0.0, center=c, tau=tau, sigma=sigma)
    assert theta == pytest.approx(sort_threshold(np.abs(w), R), rel=1e-10, abs=1e-12)
    assert warm(v, R, 0.7 * theta, center=c, tau=tau, sigma=sigma)[0] == theta
    theta_s, _, _ = warm(v, R, 0.0, sigma=sigma)
    assert theta_s == pytest.approx(sort_threshold(np.abs(sigma * v), R), rel=1e-10, abs=1e-12)


def test_warm_threshold_hands_long_runs_to_condat():
    """The vector on which each Michelot pass drops only its smallest member: after
    MICHELOT_PASSES passes Condat's theta restarts the passes just below theta, and the
    result is the sort reference's, bit for bit the same as from a start near theta."""
    from aucstream.projections import MICHELOT_PASSES

    R, mags, eps = 0.5, [1.0], 1e-14
    for m in range(2, 16):
        mags.append((sum(mags) - R) / (m - 1) * (1 - eps))
        eps *= 1.5 * m
    mags = np.concatenate([mags, np.zeros(5)])
    assert _michelot_pass_count(mags, R) > MICHELOT_PASSES
    theta, k, _ = warm(mags, R, 0.0)
    assert theta == pytest.approx(sort_threshold(mags, R), rel=1e-12)
    assert warm(mags, R, theta * (1 - 1e-9)) == warm(mags, R, 0.0)
