"""The O(d) learners and OAM: huge inputs, inconsistent loaded states, memory guards."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_stream

from aucstream import (
    FSAUC,
    OAM,
    SOLAM,
    SOLAML1,
    ConfidenceWeighted,
    CostSensitivePA,
    PassiveAggressive,
    Perceptron,
    UnivariateOnline,
)
from aucstream._config import config_context
from aucstream._state import first_non_finite

LEARNERS = [
    Perceptron(),
    PassiveAggressive(),
    CostSensitivePA(variant="ml"),
    ConfidenceWeighted(),
    UnivariateOnline(loss="exp", eta=1.0),
    UnivariateOnline(loss="squ", eta=1.0, lam=0.5),
    SOLAM(R=1.0, zeta=4.0),
    SOLAML1(R=1.0, zeta=4.0),
    FSAUC(R=1.0, eta1=4.0, n_samples=60),
    FSAUC(R=1.0, eta1=4.0, n_samples=60, constraint="l2"),
    OAM(C=1.0, random_state=0),
]


@pytest.mark.parametrize("learner", LEARNERS, ids=lambda m: repr(m))
@pytest.mark.parametrize("scale", [1e100, 1e150, 1e153])
def test_huge_rows_never_divide_by_zero(learner, scale):
    """Rows whose squared norms still fit in float64: either learnt with every state
    array finite, or refused as a divergence naming the state. No kernel divides by
    zero on finite input (SOLAML1 and FSAUC used to)."""
    X, y = make_stream(60, 5, seed=1)
    X[::3] *= scale / np.abs(X).max()
    model = learner.__class__(**learner.get_params())
    try:
        model.fit(X, y)
    except FloatingPointError as error:
        assert "ZeroDivisionError" not in str(error)
        assert "diverged" in str(error) or "overflow" in str(error)
        return
    assert first_non_finite(model) is None


def _fitted(cls, **params):
    X, y = make_stream(60, 4, seed=2)
    return cls(**params).fit(X, y)


@pytest.mark.parametrize(
    "cls, params, damage, match",
    [
        (SOLAM, {}, lambda m: m.counts_.__setitem__(1, m.counts_[0] + 1), "counts_"),
        (SOLAM, {}, lambda m: m.counts_.__setitem__(0, -1), "counts_"),
        (SOLAM, {}, lambda m: m.scalars_.__setitem__(0, 0.0), "sigma"),
        (SOLAM, {}, lambda m: setattr(m, "weight_pos_", -1.0), "weight_pos_"),
        (SOLAM, {}, lambda m: setattr(m, "weight_neg_", "many"), "weight_neg_"),
        (UnivariateOnline, {}, lambda m: m.class_counts_.__setitem__(0, -1), "class_counts_"),
        (UnivariateOnline, {}, lambda m: m.scale_.__setitem__(0, 0.0), "scale_"),
        (UnivariateOnline, {}, lambda m: m.prior_weights_.__setitem__(1, 0.0), "prior"),
        (FSAUC, {}, lambda m: m.counts_.__setitem__(1, 7), "stage"),
        (FSAUC, {}, lambda m: m.counts_.__setitem__(3, -2), "class counts"),
        (FSAUC, {"n_samples": 200}, lambda m: m.counts_.__setitem__(2, 500), "in the stage"),
        (FSAUC, {}, lambda m: setattr(m, "n_stages_", 3), "schedule"),
        (FSAUC, {}, lambda m: m.scalars_.__setitem__(14, 0.0), "positive"),  # beta
        (OAM, {}, lambda m: m.buffers_[1].counts_.__setitem__(0, 10**6), "counts_"),
        (OAM, {}, lambda m: setattr(m.buffers_[0], "capacity", 7), "capacity"),
    ],
)
def test_inconsistent_states_are_refused(cls, params, damage, match):
    model = _fitted(cls, **params)
    model._check_state()
    damage(model)
    with pytest.raises(ValueError, match=match):
        model._check_state()
        for buffer in getattr(model, "buffers_", []):
            buffer._check_state()


def test_confidence_weighted_checks_its_square_state_against_the_budget():
    X, y = make_stream(20, 40, seed=3)
    with config_context(memory_budget=2 * 8 * 40 * 40):
        with pytest.raises(MemoryError, match="O\\(d\\) state"):
            ConfidenceWeighted().fit(X, y)
    ConfidenceWeighted().fit(X, y)
