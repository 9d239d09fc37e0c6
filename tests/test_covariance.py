import numpy as np
import pytest
import scipy.sparse as sp

from aucstream.covariance import FullCovariance


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(loc=2.0, size=(300, 7))
    X[rng.random(X.shape) < 0.5] = 0.0
    return X


@pytest.mark.parametrize("sparse", [False, True])
def test_statistics_equal_numpy(data, sparse):
    summary = FullCovariance(7)
    for lo in range(0, 300, 37):  # in several chunks
        block = data[lo : lo + 37]
        summary.update(sp.csr_matrix(block) if sparse else block)
    assert summary.count == 300
    np.testing.assert_allclose(summary.mean, data.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(summary.covariance, np.cov(data.T, bias=True), atol=1e-12)
    v = np.arange(7.0)
    np.testing.assert_allclose(summary.matvec(v), np.cov(data.T, bias=True) @ v, atol=1e-11)


def test_merge_is_exact(data):
    a = FullCovariance(7).update(data[:100])
    b = FullCovariance(7).update(data[100:])
    both = FullCovariance(7).update(data)
    merged = a.merge(b)
    assert merged.count == both.count
    np.testing.assert_allclose(merged.covariance, both.covariance, atol=1e-12)
    np.testing.assert_allclose(merged.mean, both.mean, rtol=1e-14)


def test_single_example_and_empty():
    s = FullCovariance(3)
    np.testing.assert_array_equal(s.matvec(np.ones(3)), 0.0)
    s.update(np.array([[1.0, 2.0, 3.0]]))
    np.testing.assert_allclose(s.covariance, 0.0, atol=1e-15)
    np.testing.assert_array_equal(s.mean, [1.0, 2.0, 3.0])


def test_dimension_errors():
    s = FullCovariance(3)
    with pytest.raises(ValueError, match="3 features"):
        s.update(np.ones((2, 4)))
    with pytest.raises(ValueError, match="3 features"):
        s.matvec(np.ones(4))
    with pytest.raises(ValueError, match="3 features"):
        s.merge(FullCovariance(4))
