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
