"""Frequent directions with forgetting (issue 30): the sketch of the decayed scatter.

Scaling every stored column by sqrt(gamma) before each insert (or inserting example i
as the column sqrt(g_i) x_i, which OPAUC does lazily through its clock) makes the
sketch a frequent-directions sketch of :math:`\\sum_i \\gamma^{t-i} x_i x_i^\\top`;
checked against that decayed scatter computed by brute force (Liberty's two-sided
guarantee, with the bound on the decayed mass), in OPAUC with deferred shrinks and
rescalings (against an eager sketch of the same weighted columns), and for chunking,
saving and loading, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_stream

from aucstream import OPAUC, load_model, save_model
from aucstream._params import decay_per_example
from aucstream.covariance import FrequentDirectionsCovariance


def _decayed(X, gamma, centered):
    """The decayed scatter of the rows of X (the last weighs 1), and its weight."""
    w = gamma ** np.arange(X.shape[0] - 1, -1, -1, dtype=float)
    C = X - (w @ X / w.sum() if centered else 0.0)
    return (C.T * w) @ C, w


@pytest.mark.parametrize("centering", ["g16", "exact"])
@pytest.mark.parametrize("half_life", [3.0, 40.0])
def test_the_sketch_of_the_decayed_scatter_within_the_bound(centering, half_life):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 8)) * np.linspace(0.5, 3.0, 8)
    X[150:] = X[150:, ::-1]  # a change of directions halfway
    gamma = decay_per_example(half_life)
    s = FrequentDirectionsCovariance(8, sketch_size=4, centering=centering)
    for x in X:
        s.scale(gamma)
        s.update(x[None])
    assert s.n_shrinks_[0] > 10
    scatter, w = _decayed(X, gamma, centering == "exact")
    assert s.total_weight == pytest.approx(w.sum(), rel=1e-12)
    np.testing.assert_allclose(s.mean, w @ X / w.sum(), rtol=1e-9, atol=1e-12)
    Z = s.sketch_matrix()
    gap = np.linalg.eigvalsh(scatter - Z @ Z.T)
    assert gap.min() >= -1e-9  # Z Z^T <= the decayed scatter
    assert gap.max() <= s.error_bound + 1e-9  # ... and within the FD bound of it
    mass = np.trace(scatter)
    assert s.frob_[0] == pytest.approx(mass, rel=1e-9)
    assert s.error_bound <= mass / s.shrink_index + 1e-9
    # the same sketch from the weights gamma^(t-i) given at once
    weighted = FrequentDirectionsCovariance(8, 4, centering=centering).update(X, sample_weight=w)
    E = weighted.sketch_matrix()
    np.testing.assert_allclose(E @ E.T, Z @ Z.T, rtol=1e-9, atol=1e-9)


def test_scaling_by_a_power_of_two_is_exact_with_deferred_shrinks():
    X, y = make_stream(300, 800, seed=2, sparsity=0.97)
    model = OPAUC(covariance="fd", sketch_size=6, eta=0.05).fit(sp.csr_matrix(X), y)
    s = next(s for s in model.stats_ if s.deferred > 0)
    Z = s.sketch_matrix()
    s.scale(2.0**-6)
    np.testing.assert_array_equal(s.sketch_matrix(), Z * 2.0**-3)
    s.scale(2.0**6)
    np.testing.assert_array_equal(s.sketch_matrix(), Z)
    with pytest.raises(ValueError, match="factor"):
        s.scale(0.0)


def _sparse(n, d, seed):
    X, y = make_stream(n, d, seed=seed, sparsity=0.97)
    y[:2] = [-1, 1]
    return sp.csr_matrix(X), y


def _make(centering, h=4.0):
    return OPAUC(
        eta=0.05, lam=0.01, covariance="fd", sketch_size=6, centering=centering, half_life=h
    ).set_params(column_scale=None)  # the papers' update (the reference's)


@pytest.mark.parametrize("centering", [None, "exact"])
def test_opauc_sketches_the_decayed_scatter_with_deferred_shrinks(centering):
    """d = 800 defers shrinks; h = 4 over 400 examples rescales the stored weights
    twice. Each class's sketch equals an eager frequent-directions sketch of its
    weighted columns (up to rounding) and bounds the decayed scatter."""
    X, y = _sparse(400, 800, 0)
    model = _make(centering).fit(X, y)
    assert model.forget_[1] >= 80 and any(s.deferred > 0 for s in model.stats_)
    gamma = decay_per_example(4.0)
    for c, label in enumerate((-1, 1)):
        s, rows = model.stats_[c], np.flatnonzero(y == label)
        Xc = X[rows].toarray()
        weights = gamma ** (399 - rows)
        eager = FrequentDirectionsCovariance(800, 6, centering=centering)
        eager.update(Xc, sample_weight=weights)
        Z, E = s.sketch_matrix(), eager.sketch_matrix()
        unit = s.total_weight / eager.total_weight  # the stored weights' unit
        np.testing.assert_allclose(Z @ Z.T / unit, E @ E.T, rtol=1e-7, atol=1e-10)
        C = Xc - (weights @ Xc / weights.sum() if centering == "exact" else 0.0)
        scatter = (C.T * weights) @ C
        gap = np.linalg.eigvalsh(scatter - Z @ Z.T / unit)
        assert gap.min() >= -1e-9
        assert gap.max() <= s.error_bound / unit + 1e-9
    w = model.coef_[0].copy()  # read with rows behind = after bringing every row up
    model._rebase()
    np.testing.assert_allclose(model.w_, w, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("centering", [None, "exact"])
def test_chunking_and_files_change_nothing(centering, tmp_path):
    X, y = _sparse(400, 800, 1)
    whole = _make(centering).fit(X, y)
    model = _make(centering)
    bounds = [0, 1, 7, 30, 31, 90, 170, 171, 260, 400]
    for i, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
        model.partial_fit(X[lo:hi], y[lo:hi], classes=[-1, 1])
        if i == 4:
            model = load_model(save_model(model, tmp_path / "m.npz"))
    np.testing.assert_array_equal(model.w_, whole.w_)
    np.testing.assert_array_equal(model.forget_, whole.forget_)
    for a, b in zip(model.stats_, whole.stats_):
        for key, value in vars(b).items():
            if isinstance(value, np.ndarray) and key != "version_":
                np.testing.assert_array_equal(getattr(a, key), value, err_msg=key)
        # a row marked at any shrink up to the base is up to date at the base
        base = int(b.defer_base_[0])
        np.testing.assert_array_equal(np.maximum(a.version_, base), np.maximum(b.version_, base))


def test_sample_weight_is_checked_before_any_change():
    s = FrequentDirectionsCovariance(3, 2)
    for bad in ([1.0], [1.0, -1.0], [np.nan, 1.0]):
        with pytest.raises(ValueError, match="sample_weight"):
            s.update(np.ones((2, 3)), sample_weight=bad)
    assert s.count == 0 and not s.sketch_.any()
