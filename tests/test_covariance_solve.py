"""solve_from_statistics: the minimizer of OPAUC's objective from two class summaries
equals LSSVMAUC's for the exact summaries and the dense solve with the sketch's own
estimates for the sketches."""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_stream

from aucstream import LSSVMAUC
from aucstream.covariance import (
    ExactSparseCovariance,
    FrequentDirectionsCovariance,
    FullCovariance,
    make_covariance,
    solve_from_statistics,
)
from aucstream.opauc import solve_from_statistics as from_opauc

LAMS = [0.0, 2.0**-8, 2.0**-2, 4.0]


def summaries(make, X, y, **update):
    return [make().update(X[y == label], **update) for label in (-1, 1)]


def brute_force(neg, pos, lam):
    """The dense system with the summaries' own d x d estimates (pinv for lam = 0)."""
    delta = pos.mean - neg.mean
    A = neg.covariance + pos.covariance + np.outer(delta, delta) + lam * np.eye(neg.n_features)
    return np.linalg.pinv(A, rcond=1e-13, hermitian=True) @ delta


def test_the_opauc_module_exports_the_same_function():
    assert from_opauc is solve_from_statistics


@pytest.mark.parametrize("lam", LAMS[1:])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize(
    "make",
    [lambda: FullCovariance(6), lambda: ExactSparseCovariance(6)],
    ids=["full", "exact_sparse"],
)
def test_exact_summaries_give_lssvmauc(make, sparse, lam):
    X, y = make_stream(500, 6, seed=2, sparsity=0.4)
    Xin = sp.csr_matrix(X) if sparse else X
    neg, pos = summaries(make, Xin, y)
    w = solve_from_statistics(neg, pos, lam)
    reference = LSSVMAUC(lam=lam).fit(X, y).w_
    np.testing.assert_allclose(w, reference, rtol=1e-8, atol=1e-10 * np.abs(reference).max())


def test_merged_shards_give_lssvmauc_over_all_the_data():
    X, y = make_stream(900, 8, seed=3, sparsity=0.3)
    shards = [
        summaries(lambda: FullCovariance(8), X[a : a + 300], y[a : a + 300]) for a in (0, 300, 600)
    ]
    neg = shards[0][0].merge(shards[1][0]).merge(shards[2][0])
    pos = shards[0][1].merge(shards[1][1]).merge(shards[2][1])
    reference = LSSVMAUC(lam=2**-6).fit(X, y).w_
    np.testing.assert_allclose(solve_from_statistics(neg, pos, 2**-6), reference, rtol=1e-8)


LOWRANK = [
    ("randomized", "g13"),
    ("randomized", "g16"),
    ("randomized", "exact"),
    ("hash", "g16"),
    ("hash", "exact"),
    ("hash", "g13"),
    ("fd", "g16"),
    ("fd", "exact"),
]


@pytest.mark.parametrize("lam", LAMS)
@pytest.mark.parametrize("d", [5, 30])
@pytest.mark.parametrize("kind, centering", LOWRANK)
def test_sketches_give_the_dense_solve_of_their_estimates(kind, centering, d, lam):
    """d = 30 > 2 tau + 3: a true low-rank system; d = 5: U has more columns than rows."""
    X, y = make_stream(400, d, seed=4, sparsity=0.3)
    X = X + 0.5  # a mean to remove
    neg, pos = summaries(lambda: make_covariance(kind, d, 4, centering=centering), X, y, **(
        {} if kind == "fd" else {"rng": 0}
    ))  # fmt: skip
    w = solve_from_statistics(neg, pos, lam)
    expected = brute_force(neg, pos, lam)
    scale = np.abs(expected).max()
    tol = 1e-8 if lam > 0 else 1e-6
    np.testing.assert_allclose(w, expected, rtol=tol, atol=tol * scale)


def test_frequent_directions_before_any_shrink_is_exact():
    """Fewer examples than tau per class: Z Z^T is the exact scatter, so the solve is
    LSSVMAUC's."""
    X, y = make_stream(30, 12, seed=5)
    for centering in ("g16", "exact"):
        neg, pos = summaries(
            lambda c=centering: FrequentDirectionsCovariance(12, 40, centering=c), X, y
        )
        assert neg.n_shrinks_[0] == pos.n_shrinks_[0] == 0
        reference = LSSVMAUC(lam=0.1).fit(X, y).w_
        np.testing.assert_allclose(solve_from_statistics(neg, pos, 0.1), reference, rtol=1e-8)


@pytest.mark.parametrize("lam", LAMS)
@pytest.mark.parametrize("tau", [1, 3, 20])
def test_sparsified_summaries_give_the_dense_solve_of_their_estimates(tau, lam):
    """tau = 20 >= (d + 1) / 2: nothing pruned, so it is LSSVMAUC's optimum too."""
    X, y = make_stream(400, 10, seed=6, sparsity=0.5)
    neg, pos = summaries(lambda: make_covariance("sparse", 10, tau), X, y)
    w = solve_from_statistics(neg, pos, lam)
    expected = brute_force(neg, pos, lam)
    tol = 1e-8 if lam > 0 else 1e-6
    np.testing.assert_allclose(w, expected, rtol=tol, atol=tol * np.abs(expected).max())
    if tau == 20 and lam > 0:
        reference = LSSVMAUC(lam=lam).fit(X, y).w_
        np.testing.assert_allclose(w, reference, rtol=1e-8, atol=1e-10)


def test_exact_summaries_with_lam_zero_give_the_least_norm_solution():
    X, y = make_stream(200, 5, seed=7)
    X[:, 4] = 0.0  # a constant feature: singular system
    for make in (lambda: FullCovariance(5), lambda: ExactSparseCovariance(5)):
        neg, pos = summaries(make, X, y)
        np.testing.assert_allclose(
            solve_from_statistics(neg, pos, 0.0), brute_force(neg, pos, 0.0), rtol=1e-7, atol=1e-9
        )


@pytest.mark.parametrize("kind", ["randomized", "hash", "fd"])
def test_sketches_never_form_a_d_by_d_array(kind):
    """d = 200000: a d x d array would need 320 GB; the low-rank solve is O(d tau^2)."""
    d, tau = 200_000, 8
    rng = np.random.default_rng(8)
    X = sp.random(400, d, density=25 / d, format="csr", random_state=rng)
    y = np.where(rng.random(400) < 0.5, -1, 1)
    neg, pos = summaries(lambda: make_covariance(kind, d, tau, centering="exact"), X, y, **(
        {} if kind == "fd" else {"rng": 1}
    ))  # fmt: skip
    w = solve_from_statistics(neg, pos, 0.5)
    assert w.shape == (d,) and np.all(np.isfinite(w))
    # the normal equations hold: (lam I + S+ + S- + delta delta^T) w = delta
    delta = pos.mean - neg.mean
    lhs = 0.5 * w + pos.matvec(w) + neg.matvec(w) + delta * (delta @ w)
    np.testing.assert_allclose(lhs, delta, atol=1e-10 * np.abs(delta).max())


def test_refusals():
    X, y = make_stream(100, 3, seed=9)
    neg, pos = summaries(lambda: FullCovariance(3), X, y)
    with pytest.raises(ValueError, match="empty"):
        solve_from_statistics(FullCovariance(3), pos, 1.0)
    with pytest.raises(ValueError, match="features"):
        solve_from_statistics(neg, FullCovariance(4).update(np.ones((2, 4))), 1.0)
    for lam in (-1.0, np.nan, np.inf, True, "1"):
        with pytest.raises(ValueError, match="lam"):
            solve_from_statistics(neg, pos, lam)
    with pytest.raises(TypeError, match="one kind"):
        solve_from_statistics(make_covariance("fd", 3, 2).update(X), pos, 1.0)
    with pytest.raises(TypeError, match="CovarianceSummary"):
        solve_from_statistics(neg, X, 1.0)
    a, b = (make_covariance("hash", 3, s).update(X, rng=0) for s in (2, 3))
    with pytest.raises(ValueError, match="sketch_size"):
        solve_from_statistics(a, b, 1.0)


@pytest.mark.parametrize(
    "make",
    [
        lambda: FullCovariance(6),
        lambda: ExactSparseCovariance(6),
        lambda: make_covariance("sparse", 6, 40),
    ],
    ids=["full", "exact_sparse", "sparse"],
)
def test_integer_weights_solve_like_repeated_rows(make):
    """Weighted summaries (``weight_`` = W) give the solve of the repeated rows."""
    X, y = make_stream(200, 6, seed=5, sparsity=0.3)
    counts = np.random.default_rng(5).integers(0, 4, size=len(y))
    weighted = [
        make().update(sp.csr_matrix(X[y == c]), sample_weight=counts[y == c].astype(float))
        for c in (-1, 1)
    ]
    repeated = summaries(make, sp.csr_matrix(np.repeat(X, counts, axis=0)), np.repeat(y, counts))
    for lam in LAMS[1:]:
        np.testing.assert_allclose(
            solve_from_statistics(*weighted, lam), solve_from_statistics(*repeated, lam), rtol=1e-9
        )
