"""Merging class summaries: merged summaries over any split of a stream equal the
single-process summary (exact kinds), or respect the sketch's bound (frequent
directions, sparsification); linear sketches equal one sketch of the concatenated
stream with the shards' draws."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from aucstream.covariance import (
    ExactSparseCovariance,
    FrequentDirectionsCovariance,
    FullCovariance,
    HashedCovariance,
    RandomizedCovariance,
    SparsifiedCovariance,
)


def stream(n=240, d=7, seed=0, sparsity=0.5, loc=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(loc=loc, size=(n, d))
    X[rng.random(X.shape) < sparsity] = 0.0
    return X


def pieces(n, cuts):
    bounds = sorted({0, n, *cuts})
    return list(zip(bounds, bounds[1:]))


def merged_over(make, X, cuts, update=None):
    """The summaries of the shards X[a:b], merged left to right."""
    update = update or (lambda s, rows, a, b: s.update(rows))
    parts = [update(make(), X[a:b], a, b) for a, b in pieces(X.shape[0], cuts)]
    merged = parts[0]
    for part in parts[1:]:
        merged = merged.merge(part)
    return merged


def assert_same(a, b, tol=1e-10):
    assert a.count == b.count
    np.testing.assert_allclose(a.sum_, b.sum_, rtol=tol, atol=tol)
    np.testing.assert_allclose(a.scatter, b.scatter, rtol=tol, atol=tol)
    np.testing.assert_allclose(a.covariance, b.covariance, rtol=tol, atol=tol)


EXACT = {
    "full": lambda d: FullCovariance(d),
    "exact_sparse": lambda d: ExactSparseCovariance(d),
    # a budget of d * tau >= d (d + 1) / 2 entries: nothing is ever pruned
    "sparsified_unpruned": lambda d: SparsifiedCovariance(d, sketch_size=d),
}


# ------------------------------------------------------------------ exact kinds
@settings(deadline=None, max_examples=30)
@given(cuts=st.lists(st.integers(0, 240), max_size=5), seed=st.integers(0, 3))
@pytest.mark.parametrize("kind", sorted(EXACT))
def test_exact_kinds_merge_to_the_single_process_summary(kind, cuts, seed):
    X = stream(seed=seed)
    make = lambda: EXACT[kind](7)  # noqa: E731
    whole = make().update(X)
    assert_same(merged_over(make, X, cuts), whole)
    # sparse input gives the same merged summary
    assert_same(merged_over(make, sp.csr_matrix(X), cuts), whole)


@pytest.mark.parametrize("kind", sorted(EXACT))
def test_exact_merge_is_associative_and_commutative(kind):
    X = stream(seed=5)
    a, b, c = (EXACT[kind](7).update(X[lo : lo + 80]) for lo in (0, 80, 160))
    left, right = a.merge(b).merge(c), a.merge(b.merge(c))
    assert_same(left, right, tol=1e-12)
    assert_same(c.merge(a).merge(b), left, tol=1e-12)
    # the inputs are left unchanged
    assert a.count == b.count == c.count == 80


@pytest.mark.parametrize("kind", sorted(EXACT))
def test_merging_an_empty_summary_changes_nothing(kind):
    X = stream(seed=6)
    s = EXACT[kind](7).update(X)
    assert_same(s.merge(EXACT[kind](7)), s, tol=0)
    assert_same(EXACT[kind](7).merge(s), s, tol=0)


def test_exact_merge_matches_the_pooled_covariance():
    """The raw scatters add; in terms of covariances this is the pooled formula with
    the between-shard term T1 T2 / T (c1 - c2)(c1 - c2)^T."""
    X = stream(seed=7, loc=3.0)
    a, b = FullCovariance(7).update(X[:50]), FullCovariance(7).update(X[50:])
    t1, t2 = a.count, b.count
    diff = a.mean - b.mean
    pooled = (t1 * a.covariance + t2 * b.covariance) / (t1 + t2) + (
        t1 * t2 / (t1 + t2) ** 2
    ) * np.outer(diff, diff)
    np.testing.assert_allclose(a.merge(b).covariance, pooled, atol=1e-10)
    np.testing.assert_allclose(pooled, np.cov(X.T, bias=True), atol=1e-10)


# --------------------------------------------------------------- linear sketches
LINEAR = {"randomized": RandomizedCovariance, "hash": HashedCovariance}


@settings(deadline=None, max_examples=25)
@given(cuts=st.lists(st.integers(0, 240), max_size=5), seed=st.integers(0, 3))
@pytest.mark.parametrize("centering", ["g13", "g16", "exact"])
@pytest.mark.parametrize("kind", sorted(LINEAR))
def test_linear_sketches_merge_to_the_sketch_of_the_concatenation(kind, centering, cuts, seed):
    """With independent draws per shard (here: one generator per shard), the merged
    sketch is the sketch of the whole stream whose draws are the shards' draws in
    order."""
    cls = LINEAR[kind]
    X = stream(seed=seed)
    tau = 5
    draws = []

    def update(s, rows, a, b):
        A = cls.draw(np.random.default_rng([seed, a]), b - a, tau)
        draws.append(A)
        return s.update(rows, draws=A)

    merged = merged_over(lambda: cls(7, tau, centering), X, cuts, update)
    whole = cls(7, tau, centering).update(X, draws=np.vstack(draws))
    assert_same(merged, whole)
    np.testing.assert_allclose(merged.sketch_, whole.sketch_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(merged.asum_, whole.asum_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(merged.gram_, whole.sketch_.T @ whole.sketch_, atol=1e-9)
    v = np.linspace(-1.0, 1.0, 7)
    np.testing.assert_allclose(merged.matvec(v), whole.matvec(v), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("kind", sorted(LINEAR))
def test_linear_merge_is_associative(kind):
    cls = LINEAR[kind]
    X = stream(seed=8)
    a, b, c = (cls(7, 4).update(X[lo : lo + 80], rng=lo) for lo in (0, 80, 160))
    assert_same(a.merge(b).merge(c), a.merge(b.merge(c)), tol=1e-12)


@pytest.mark.parametrize("kind", sorted(LINEAR))
def test_linear_merge_refuses_shared_draws(kind):
    """Summing a sketch with itself, or with a sketch made from the same draws, gives
    E[Z Z^T] with cross terms between the shards: refused."""
    cls = LINEAR[kind]
    X = stream(seed=9)
    a = cls(7, 4).update(X[:100], rng=0)
    with pytest.raises(ValueError, match="draws"):
        a.merge(a)
    twin = cls(7, 4).update(X[100:200], rng=0)  # the same seed, the same number of rows
    if kind == "randomized":  # Gaussian draws: equal sums of draws cannot be chance
        with pytest.raises(ValueError, match="draws"):
            a.merge(twin)
    assert a.merge(cls(7, 4).update(X[100:200], rng=1)).count == 200


def test_merged_randomized_sketch_is_unbiased():
    """Averaged over the draws, the merged Z Z^T is X^T X (the sketch's guarantee)."""
    X = stream(n=60, d=4, seed=10)
    tau, trials = 3, 3000
    total = np.zeros((4, 4))
    for t in range(trials):
        a = RandomizedCovariance(4, tau).update(X[:25], rng=2 * t)
        b = RandomizedCovariance(4, tau).update(X[25:], rng=2 * t + 1)
        total += a.merge(b).scatter
    err = np.abs(total / trials - X.T @ X).max()
    assert err < 0.1 * np.abs(X.T @ X).max()


# ------------------------------------------------------------ frequent directions
def fd_error(summary, X):
    return np.linalg.norm(X.T @ X - summary.scatter, 2)


@settings(deadline=None, max_examples=30)
@given(
    cuts=st.lists(st.integers(0, 240), max_size=6),
    seed=st.integers(0, 3),
    tau=st.sampled_from([2, 3, 4, 6]),
    shrink=st.sampled_from(["half", "ceil_0.9"]),
)
def test_frequent_directions_merge_respects_the_bound(cuts, seed, tau, shrink):
    """Liberty 2013; Ghashami, Liberty, Phillips, Woodruff 2016 (mergeability):
    0 <= Z Z^T <= X^T X and ||X^T X - Z Z^T||_2 <= (||X||_F^2 - ||Z||_F^2) / l for X
    all the examples of every shard."""
    X = stream(seed=seed, d=9)
    merged = merged_over(lambda: FrequentDirectionsCovariance(9, tau, shrink), X, cuts)
    assert merged.count == 240
    np.testing.assert_allclose(merged.sum_, X.sum(axis=0), rtol=1e-12)
    assert merged.frob_[0] == pytest.approx(np.sum(X**2), rel=1e-12)
    bound = merged.error_bound
    assert fd_error(merged, X) <= bound * (1 + 1e-9) + 1e-9
    assert bound <= np.sum(X**2) / merged.shrink_index * (1 + 1e-12)
    eig = np.linalg.eigvalsh(X.T @ X - merged.scatter)
    assert eig.min() >= -1e-8 * np.sum(X**2)  # Z Z^T <= X^T X
    assert merged.nfill_[0] < tau  # room for the next example


@settings(deadline=None, max_examples=20)
@given(cuts=st.lists(st.integers(0, 240), max_size=4), seed=st.integers(0, 3))
def test_centered_frequent_directions_merge_respects_the_bound(cuts, seed):
    """Centered sketches add the between-shard column: the bound holds for the
    centered scatter of all the examples."""
    X = stream(seed=seed, d=8, loc=2.0)
    merged = merged_over(lambda: FrequentDirectionsCovariance(8, 4, centering="exact"), X, cuts)
    centered = X - X.mean(axis=0)
    scatter = centered.T @ centered
    Z = merged.sketch_matrix()
    err = np.linalg.norm(scatter - Z @ Z.T, 2)
    assert err <= merged.error_bound * (1 + 1e-9) + 1e-9
    assert merged.frob_[0] == pytest.approx(np.sum(centered**2), rel=1e-9)
    np.testing.assert_allclose(
        merged.covariance, Z @ Z.T / 240, atol=1e-12
    )  # the estimate is Z Z^T / T


def test_frequent_directions_merge_without_shrink_is_exact():
    """Shards that fill fewer than tau columns in all merge to the exact scatter."""
    X = stream(n=6, d=5, seed=11, sparsity=0.0)
    merged = merged_over(lambda: FrequentDirectionsCovariance(5, 8), X, [2, 4])
    np.testing.assert_allclose(merged.scatter, X.T @ X, atol=1e-12)
    assert merged.error_bound == pytest.approx(0.0, abs=1e-9)


def test_frequent_directions_merge_is_associative_within_its_bound():
    X = stream(seed=12, d=9)
    a, b, c = (FrequentDirectionsCovariance(9, 4).update(X[lo : lo + 80]) for lo in (0, 80, 160))
    for merged in (a.merge(b).merge(c), a.merge(b.merge(c))):
        assert fd_error(merged, X) <= merged.error_bound * (1 + 1e-9)


# ---------------------------------------------------------------- sparsification
@settings(deadline=None, max_examples=25)
@given(cuts=st.lists(st.integers(0, 240), max_size=4), seed=st.integers(0, 3))
def test_sparsified_merge_prunes_and_respects_its_bound(cuts, seed):
    """prune(P_a + P_b): within budget, and its error is at most the shards' errors
    plus what the merge's prune drops (triangle inequality)."""
    X = stream(seed=seed, d=10, sparsity=0.3)
    d, tau = 10, 2
    parts = [
        SparsifiedCovariance(d, tau, prune_slack=0.0).update(X[a:b]) for a, b in pieces(240, cuts)
    ]
    merged = parts[0]
    offsets = [a for a, _ in pieces(240, cuts)] + [240]
    bound = np.linalg.norm(X[: offsets[1]].T @ X[: offsets[1]] - parts[0].scatter)
    for part, a, b in zip(parts[1:], offsets[1:], offsets[2:]):
        unpruned = merged.scatter + part.scatter
        own = np.linalg.norm(X[a:b].T @ X[a:b] - part.scatter)
        merged = merged.merge(part)
        bound += own + np.linalg.norm(unpruned - merged.scatter)
    assert merged.count == 240
    assert merged.cost <= merged.budget
    np.testing.assert_allclose(merged.sum_, X.sum(axis=0), rtol=1e-12)
    assert np.linalg.norm(X.T @ X - merged.scatter) <= bound * (1 + 1e-9) + 1e-9


def test_frequent_directions_merge_refuses_another_shrink_index():
    X = stream(seed=13, d=6)
    a = FrequentDirectionsCovariance(6, 5, "half").update(X[:50])
    b = FrequentDirectionsCovariance(6, 5, "ceil_0.9").update(X[50:])
    with pytest.raises(ValueError, match="shrink"):
        a.merge(b)
