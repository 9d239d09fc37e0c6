"""The online scaler's forgetting (``half_life``): exact against a brute-force
weighted mean and variance, chunk invariant, dense = sparse, and None unchanged."""

import numpy as np
import pytest
import scipy.sparse as sp

from aucstream._params import InvalidParameterError, decay_per_example
from aucstream.preprocessing import OnlineStandardScaler


def _weighted_reference(X, half_life):
    """Each row standardized by the exponentially weighted statistics of the rows
    before it (weights gamma**(age)), brute force."""
    g = decay_per_example(half_life)
    out = np.zeros_like(X)
    for t in range(X.shape[0]):
        if t == 0:
            continue
        w = g ** np.arange(t - 1, -1, -1.0)
        mean = w @ X[:t] / w.sum()
        var = w @ (X[:t] - mean) ** 2 / w.sum()
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(var > 1e-24, (X[t] - mean) / np.sqrt(var), 0.0)
        out[t] = z
    return out


def test_forgetting_scaler_equals_the_weighted_statistics():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3)) * [1.0, 5.0, 0.1] + [0.0, 3.0, -1.0]
    X[150:] += 4.0  # a shift: the forgetting scaler follows it
    scaler = OnlineStandardScaler(clip=None, half_life=40.0)
    got = scaler.partial_fit_transform(X)
    want = _weighted_reference(X, 40.0)
    np.testing.assert_allclose(got[2:], want[2:], rtol=1e-9, atol=1e-9)
    g = decay_per_example(40.0)
    w = g ** np.arange(299, -1, -1.0)
    np.testing.assert_allclose(scaler.mean_, w @ X / w.sum(), rtol=1e-12)
    np.testing.assert_allclose(scaler.var_, w @ (X - w @ X / w.sum()) ** 2 / w.sum(), rtol=1e-9)


def test_forgetting_scaler_does_not_depend_on_chunks_and_sparse_equals_dense():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 4)) * (rng.random((200, 4)) < 0.4)
    whole = OnlineStandardScaler(with_mean=False, half_life=25.0).partial_fit_transform(X)
    pieces = OnlineStandardScaler(with_mean=False, half_life=25.0)
    parts = [pieces.partial_fit_transform(X[a : a + 7]) for a in range(0, 200, 7)]
    np.testing.assert_array_equal(np.vstack(parts), whole)  # bit for bit
    sparse = OnlineStandardScaler(with_mean=False, half_life=25.0)
    got = sparse.partial_fit_transform(sp.csr_matrix(X)).toarray()
    np.testing.assert_allclose(got, whole, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sparse.var_, pieces.var_, rtol=1e-10)


def test_no_forgetting_is_the_exact_scaler_bit_for_bit():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(120, 3))
    a = OnlineStandardScaler().partial_fit_transform(X)
    b = OnlineStandardScaler(half_life=None).partial_fit_transform(X)
    np.testing.assert_array_equal(a, b)
    forgetting = OnlineStandardScaler(half_life=1e12).partial_fit_transform(X)
    np.testing.assert_allclose(forgetting, a, rtol=1e-6)


@pytest.mark.parametrize("bad", [0.0, -1.0, np.nan, np.inf, True, "10"])
def test_bad_half_life_is_refused_before_any_change(bad):
    scaler = OnlineStandardScaler(half_life=10.0).partial_fit(np.ones((3, 2)) * [[1], [2], [3]])
    before = scaler.running_mean_.copy(), scaler.n_samples_seen_
    scaler.set_params(half_life=bad)
    with pytest.raises(InvalidParameterError, match="half_life"):
        scaler.partial_fit(np.ones((2, 2)))
    assert scaler.n_samples_seen_ == before[1]
    np.testing.assert_array_equal(scaler.running_mean_, before[0])


def test_forgetting_merge_is_the_two_streams_one_after_the_other():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3)) + [0.0, 5.0, -2.0]
    a = OnlineStandardScaler(half_life=15.0).partial_fit(X[:25])
    b = OnlineStandardScaler(half_life=15.0).partial_fit(X[25:])
    both = OnlineStandardScaler(half_life=15.0).partial_fit(X)
    a.merge(b)
    np.testing.assert_allclose(a.mean_, both.mean_, rtol=1e-12)
    np.testing.assert_allclose(a.var_, both.var_, rtol=1e-10)
    after = X[:5] + 1.0  # and it goes on as the one pass does
    np.testing.assert_allclose(
        a.partial_fit_transform(after), both.partial_fit_transform(after), rtol=1e-9
    )
    with pytest.raises(ValueError, match="half_life"):
        a.merge(OnlineStandardScaler().partial_fit(X[:5]))
