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


UNWEIGHTED = [cls for cls in ESTIMATORS if not _make(cls)._supports_sample_weight]
WEIGHTED = [cls for cls in ESTIMATORS if _make(cls)._supports_sample_weight]


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
