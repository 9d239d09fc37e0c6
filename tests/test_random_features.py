"""Random Fourier features (G16 §7.2) and chunk-by-chunk pipelines."""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_stream

from aucstream import OAM, OPAUC
from aucstream.random_features import ChunkedPipeline, RandomFourierFeatures


def test_features_approximate_the_gaussian_kernel():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(30, 4))
    rff = RandomFourierFeatures(
        20_000, sigma=0.8, append=False, dtype=np.float64, random_state=1
    ).fit(X)
    Z = rff.transform(X)
    sq = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=2)
    kernel = np.exp(-sq / (2 * 0.8**2))
    assert np.abs(Z @ Z.T - kernel).max() < 0.05
    assert np.all(np.abs(Z) <= np.sqrt(2 / 20_000) + 1e-12)


def test_blocks_are_generated_from_the_seed_and_chunks_do_not_matter():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 3))
    rff = RandomFourierFeatures(1000, block_size=300, random_state=7).fit(X)
    whole = rff.transform(X)
    assert whole.shape == (50, 1003) and whole.dtype == np.float32
    np.testing.assert_array_equal(whole[:, :3], X.astype(np.float32))
    chunks = np.vstack(list(rff.iter_transform(X, chunk_size=7)))
    np.testing.assert_array_equal(chunks, whole)
    np.testing.assert_array_equal(rff.transform(sp.csr_matrix(X)), whole)
    again = RandomFourierFeatures(1000, block_size=300, random_state=7).fit(X[:5])
    np.testing.assert_array_equal(again.transform(X), whole)  # the data do not matter
    omega, phase = rff.block(3)  # last block: 1000 - 900 columns
    assert omega.shape == (3, 100) and phase.shape == (100,)
    assert np.all((phase >= 0) & (phase < 2 * np.pi))
    other = RandomFourierFeatures(1000, block_size=300, random_state=8).fit(X)
    assert not np.array_equal(other.transform(X), whole)


def test_median_bandwidth_and_validation():
    X = np.random.default_rng(2).normal(size=(200, 5)) * 3.0
    rff = RandomFourierFeatures(10, sigma="median", random_state=0).fit(X)
    assert 5.0 < rff.sigma_ < 15.0  # about 3 * sqrt(2 * 5)
    with pytest.raises(ValueError, match="sigma"):
        RandomFourierFeatures(10, sigma=-1.0).fit(X)
    with pytest.raises(ValueError, match="sigma"):
        RandomFourierFeatures(10, sigma="mean").fit(X)
    with pytest.raises(ValueError, match="n_components"):
        RandomFourierFeatures(0).fit(X)
    with pytest.raises(ValueError, match="features"):
        RandomFourierFeatures(10).fit(X).transform(X[:, :3])


@pytest.mark.parametrize(
    "estimator",
    [OPAUC(covariance="fd", sketch_size=8, eta=2**-3), OAM(buffer_size=10, random_state=0)],
)
def test_chunked_pipeline_equals_fitting_the_transformed_data(estimator):
    X, y = make_stream(150, 3, seed=3)
    rff = RandomFourierFeatures(300, sigma=1.0, random_state=0, dtype=np.float64)
    model = ChunkedPipeline(rff, estimator, chunk_size=16).fit(X, y)
    Z = rff.fit(X).transform(X)
    reference = estimator.__class__(**estimator.get_params()).fit(Z, y)
    np.testing.assert_array_equal(model.estimator_.coef_, reference.coef_)
    np.testing.assert_allclose(model.decision_function(X), reference.decision_function(Z))
    assert model.score(X, y) == pytest.approx(reference.score(Z, y))
    assert set(model.predict(X)) <= {-1, 1}
    streamed = ChunkedPipeline(rff, estimator, chunk_size=16)
    for lo in range(0, 150, 50):
        streamed.partial_fit(X[lo : lo + 50], y[lo : lo + 50], classes=[-1, 1])
    np.testing.assert_array_equal(streamed.estimator_.coef_, reference.coef_)


def test_rff_helps_opauc_on_a_nonlinear_problem():
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(1200, 2))
    y = np.where(np.hypot(X[:, 0], X[:, 1]) < 0.6, 1, -1)
    linear = OPAUC(eta=2**-4).fit(X[:800], y[:800]).score(X[800:], y[800:])
    model = ChunkedPipeline(
        RandomFourierFeatures(2000, sigma=0.5, random_state=0),
        OPAUC(covariance="fd", sketch_size=20, eta=2**-2),
        chunk_size=200,
    )
    rff_auc = model.fit(X[:800], y[:800]).score(X[800:], y[800:])
    assert linear < 0.7 < 0.9 < rff_auc
