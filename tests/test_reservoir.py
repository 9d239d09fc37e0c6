import numpy as np
import pytest
from scipy.stats import chisquare

from aucstream.reservoir import Reservoir


def test_reservoir_sample_is_uniform():
    """Every item of the stream is kept with probability N/n (chi-square test)."""
    n, capacity, runs = 40, 8, 4000
    stream = np.arange(n, dtype=float).reshape(n, 1) + 1.0
    rng = np.random.default_rng(123)
    kept = np.zeros(n)
    for _ in range(runs):
        r = Reservoir(1, capacity)
        # offered in uneven chunks, as a stream would be
        for lo, hi in [(0, 5), (5, 6), (6, 23), (23, 40)]:
            r.offer(stream[lo:hi], rng)
        assert r.size == capacity and r.n_seen == n
        kept[r.buffer[:, 0].astype(int) - 1] += 1
        assert len(set(r.buffer[:, 0])) == capacity  # no duplicates
    assert kept.sum() == runs * capacity
    expected = np.full(n, runs * capacity / n)
    assert chisquare(kept, expected).pvalue > 1e-3


def test_fills_before_replacing_and_unbounded_keeps_all():
    rng = np.random.default_rng(0)
    X = np.arange(30.0).reshape(15, 2)
    r = Reservoir(2, 20).offer(X, rng)
    np.testing.assert_array_equal(r.buffer, X)
    np.testing.assert_allclose(r.sq_norms_[: r.size], (X**2).sum(axis=1))
    u = Reservoir(2, None)
    for _ in range(10):
        u.offer(X, rng)
    assert u.size == 150
    np.testing.assert_array_equal(u.buffer, np.tile(X, (10, 1)))


def test_bad_capacity():
    with pytest.raises(ValueError, match="capacity"):
        Reservoir(3, 0)


@pytest.mark.parametrize("sizes", [(30, 10), (5, 35), (12, 3)])
def test_merged_reservoirs_are_a_uniform_sample_of_both_streams(sizes):
    """Every item of either stream is kept with probability N / (n1 + n2) (chi-square)."""
    n1, n2 = sizes
    n, capacity, runs = n1 + n2, 8, 4000
    stream = np.arange(n, dtype=float).reshape(n, 1) + 1.0
    rng = np.random.default_rng(7)
    kept = np.zeros(n)
    for _ in range(runs):
        first = Reservoir(1, capacity).offer(stream[:n1], rng)
        second = Reservoir(1, capacity).offer(stream[n1:], rng)
        merged = first.merge(second, rng)
        assert merged.size == min(capacity, n) and merged.n_seen == n
        assert len(set(merged.buffer[:, 0])) == merged.size  # no duplicates
        np.testing.assert_array_equal(merged.sq_norms_[: merged.size], merged.buffer[:, 0] ** 2)
        kept[merged.buffer[:, 0].astype(int) - 1] += 1
    expected = np.full(n, runs * capacity / n)
    assert chisquare(kept, expected).pvalue > 1e-3


def test_merging_small_and_unbounded_reservoirs_keeps_everything():
    rng = np.random.default_rng(1)
    X = np.arange(20.0).reshape(10, 2)
    small = Reservoir(2, 20).offer(X[:4], rng).merge(Reservoir(2, 20).offer(X[4:], rng), rng)
    np.testing.assert_array_equal(small.buffer, X)
    unbounded = (
        Reservoir(2, None).offer(X[:7], rng).merge(Reservoir(2, None).offer(X[7:], rng), rng)
    )
    np.testing.assert_array_equal(unbounded.buffer, X)
    assert unbounded.n_seen == 10
    with pytest.raises(ValueError, match="capacities"):
        Reservoir(2, 3).merge(Reservoir(2, 4), rng)


@pytest.mark.parametrize(
    "damage, match",
    [
        (lambda r: r.counts_.__setitem__(0, 5), "counts_"),
        (lambda r: r.counts_.__setitem__(1, 2), "counts_"),
        (lambda r: r.counts_.__setitem__(0, -1), "counts_"),
        (lambda r: r.sq_norms_.__setitem__(0, -3.0), "sq_norms_"),
        (lambda r: setattr(r, "items_", r.items_[:2]), "rows"),
    ],
)
def test_inconsistent_reservoir_state_is_refused(damage, match):
    r = Reservoir(2, 4).offer(np.arange(12.0).reshape(6, 2), np.random.default_rng(0))
    r._check_state()
    damage(r)
    with pytest.raises(ValueError, match=match):
        r._check_state()
