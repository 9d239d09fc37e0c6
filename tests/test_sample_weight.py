"""Example weights: refused with a clear error by learners whose update has none;
for the others, weight 0 means the example is not learnt, and weights are checked."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same_state, make_stream, snapshot

import aucstream

ESTIMATORS = [cls for _, cls in aucstream.all_estimators()]


def _make(cls):
    params = cls._unit_test_params() if hasattr(cls, "_unit_test_params") else {}
    if "random_state" in cls().get_params():
        params = {**params, "random_state": 0}
    return cls(**params)


UNWEIGHTED = [cls for cls in ESTIMATORS if not _make(cls)._tags.sample_weight]
WEIGHTED = [cls for cls in ESTIMATORS if _make(cls)._tags.sample_weight]


@pytest.mark.parametrize("cls", UNWEIGHTED, ids=lambda c: c.__name__)
def test_learners_without_weights_refuse_them(cls):
    X, y = make_stream(40, 3)
    with pytest.raises(ValueError, match="does not support sample_weight"):
        _make(cls).fit(X, y, sample_weight=np.ones(40))
    if not cls.is_batch:
        model = _make(cls).partial_fit(X, y)
        before = snapshot(vars(model))
        with pytest.raises(ValueError, match="does not support sample_weight"):
            model.partial_fit(X, y, sample_weight=np.ones(40))
        assert_same_state(before, snapshot(vars(model)))


@pytest.mark.parametrize("cls", WEIGHTED, ids=lambda c: c.__name__)
def test_zero_weight_examples_are_not_learnt(cls):
    X, y = make_stream(120, 4)
    keep = np.arange(120) % 3 != 0
    weights = keep.astype(float)
    weighted = _make(cls).fit(X, y, sample_weight=weights)
    dropped = _make(cls).fit(X[keep], y[keep])
    np.testing.assert_allclose(weighted.coef_, dropped.coef_, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("cls", WEIGHTED, ids=lambda c: c.__name__)
def test_bad_weights_are_refused(cls):
    X, y = make_stream(40, 3)
    for bad in (-np.ones(40), np.full(40, np.nan), np.ones(39)):
        with pytest.raises(ValueError):
            _make(cls).fit(X, y, sample_weight=bad)


# ------------------------------------------------ OPAUC, AdaOAM, SAdaOAM, summaries
def _exact_summaries(d):
    from aucstream.covariance import ExactSparseCovariance, FullCovariance, SparsifiedCovariance

    return {
        "full": FullCovariance(d),
        "exact_sparse": ExactSparseCovariance(d),
        # a budget above d(d+1)/2 entries: never prunes, so the summary is exact
        "sparsified": SparsifiedCovariance(d, sketch_size=d + 1),
    }


@pytest.mark.parametrize("kind", ["full", "exact_sparse", "sparsified"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_integer_weights_equal_repeated_rows_in_the_summaries(kind, sparse):
    import scipy.sparse as sp

    X, _ = make_stream(50, 5, seed=1, sparsity=0.3)
    m = np.random.default_rng(2).integers(0, 4, size=50)
    repeated = np.repeat(X, m, axis=0)
    if sparse:
        X, repeated = sp.csr_matrix(X), sp.csr_matrix(repeated)
    weighted = _exact_summaries(5)[kind].update(X, sample_weight=m)
    plain = _exact_summaries(5)[kind].update(repeated)
    assert weighted.count == np.count_nonzero(m) and plain.count == m.sum()
    assert weighted.total_weight == plain.total_weight == m.sum()
    np.testing.assert_allclose(weighted.sum_, plain.sum_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(weighted.scatter, plain.scatter, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(weighted.mean, np.asarray(repeated.mean(axis=0)).ravel(), rtol=1e-12)
    v = np.arange(1.0, 6.0)
    np.testing.assert_allclose(weighted.matvec(v), plain.matvec(v), rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("kind", ["full", "exact_sparse", "sparsified"])
def test_unit_weights_give_the_unweighted_summary_bit_for_bit(kind):
    X, _ = make_stream(40, 4, seed=4, sparsity=0.2)
    a = _exact_summaries(4)[kind].update(X, sample_weight=np.ones(40))
    b = _exact_summaries(4)[kind].update(X)
    for name, value in vars(b).items():
        np.testing.assert_array_equal(getattr(a, name), value)


@pytest.mark.parametrize("covariance", ["full", "sparse"])
def test_opauc_uniform_weights_scale_the_step(covariance):
    # weights c on every example leave means and covariances unchanged and scale
    # every step by c: the model of step size eta with weights c is that of eta * c
    X, y = make_stream(80, 5, seed=5)
    params = {"lam": 0.01, "covariance": covariance, "sketch_size": 2}
    weighted = aucstream.OPAUC(eta=0.05, **params).fit(X, y, sample_weight=np.full(80, 4.0))
    scaled = aucstream.OPAUC(eta=0.2, **params).fit(X, y)
    np.testing.assert_allclose(weighted.coef_, scaled.coef_, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "model",
    [
        aucstream.OPAUC(covariance="sparse", sketch_size=2),
        aucstream.AdaOAM(projection="euclidean"),
        aucstream.SAdaOAM(lam=0.0, theta=0.01),
        aucstream.SAdaOAM(lazy=False),
    ],
    ids=["opauc_sparse", "adaoam_euclidean", "sadaoam_lazy", "sadaoam_eager"],
)
def test_zero_weights_are_dropped_rows_for_every_variant(model):
    from sklearn.base import clone

    X, y = make_stream(90, 5, seed=6, sparsity=0.3)
    keep = np.arange(90) % 4 != 1
    weighted = clone(model).fit(X, y, sample_weight=keep * 1.5)
    dropped = clone(model).fit(X[keep], y[keep], sample_weight=np.full(keep.sum(), 1.5))
    np.testing.assert_array_equal(weighted.coef_, dropped.coef_)


@pytest.mark.parametrize("covariance", ["randomized", "hash", "fd"])
def test_opauc_sketches_refuse_weights(covariance):
    X, y = make_stream(30, 4)
    model = aucstream.OPAUC(covariance=covariance, sketch_size=3, random_state=0)
    assert not model._tags.sample_weight
    with pytest.raises(ValueError, match="does not support sample_weight with covariance"):
        model.fit(X, y, sample_weight=np.ones(30))
