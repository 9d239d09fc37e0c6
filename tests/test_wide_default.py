"""The tuning-free default on hashed widths: above ``aucstream.search.WIDE`` features
the default candidates are the O(d)-state learners only, so that ``StreamPipeline()``
fits the default memory budget at 10^6 columns (its race of sketches and reservoirs
asked for 9.3 GB there) and learns a sparse stream."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from aucstream import (
    FTRLAUC,
    SOLAM,
    SPAM,
    OnePassSearch,
    StreamPipeline,
    UnivariateOnline,
    _candidates,
)
from aucstream import search as search_module
from aucstream.metrics import roc_auc

O_D = (SOLAM, FTRLAUC, SPAM, UnivariateOnline)


def test_wide_candidates_keep_o_d_states():
    for width in (search_module.WIDE, search_module.WIDE + 1):  # (2^18: a hashed width)
        wide = search_module.default_candidates(width)
        assert {type(c) for c in wide} == set(O_D)
    for c in wide:  # (O(d) states, counted from MEASURED_FROM features on: SPAM's
        # per-coordinate steps keep five floats a feature, the others one to four)
        assert 8 * 10**6 <= c.state_nbytes(10**6) <= 40 * 10**6 + 4096
    narrow = {type(c).__name__ for c in search_module.default_candidates(search_module.WIDE - 1)}
    assert "OPAUC" in narrow and "OAM" not in narrow  # the hashed sketch, no reservoirs
    small = [type(c).__name__ for c in search_module.default_candidates(_candidates.SMALL)]
    assert small.count("OAM") == 2 and small.count("AdaOAM") == 3
    middle = [type(c).__name__ for c in search_module.default_candidates(_candidates.SMALL + 1)]
    assert "OAM" not in middle and "AdaOAM" not in middle


def test_the_default_pipeline_fits_the_budget_at_a_million_columns():
    assert 2**28 < StreamPipeline().state_nbytes(10**6) < 2**30
    assert 2**27 < OnePassSearch(drift=None).state_nbytes(10**6) < 2**30


def test_a_width_beyond_the_budget_is_refused_before_any_allocation():
    """The O(d) states count against the memory budget: at 2^27 hashed columns the
    wide race's states (about 50 GB) are refused by name instead of exhausting the
    machine's memory, and nothing is learnt."""
    from aucstream import config_context

    X = sp.csr_matrix(([1.0, 1.0], [3, 7], [0, 1, 2]), shape=(2, 2**27))
    model = StreamPipeline()
    with config_context(memory_budget=8 << 30), pytest.raises(MemoryError, match="FeatureHashing"):
        model.partial_fit(X, [0, 1])
    assert not hasattr(model, "n_samples_seen_")


def _sparse_stream(n: int, d: int, k: int = 8, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=k / d, format="csr", random_state=rng)
    X.data = np.abs(rng.normal(size=X.nnz))
    truth = rng.normal(size=d)
    y = np.where(X @ truth + 0.3 * rng.normal(size=n) > 0, 1, 0)
    return X, y


def test_the_default_pipeline_learns_a_wide_stream(monkeypatch):
    """(The width is lowered for the test: the candidates are the same at 10^6.)"""
    monkeypatch.setattr(_candidates, "WIDE", 100)
    X, y = _sparse_stream(6000, 400)
    model = StreamPipeline()
    for lo in range(0, 5000, 500):
        model.partial_fit(X[lo : lo + 500], y[lo : lo + 500], classes=[0, 1])
    assert {type(c) for c in model.estimator_.candidates_} == set(O_D)
    auc = roc_auc(y[5000:], model.decision_function(X[5000:]))
    assert auc > 0.85, auc


def test_an_undeclared_state_is_measured_exactly():
    """``measured_nbytes`` (the budget's count of an undeclared state) from scratch
    states of 1, 2 and 3 features: equal to what ``_init_state`` allocates at other
    widths, for every learner that declares no ``nbytes`` (the rule's premise, a size
    polynomial of degree at most 2 in the width; SAdaOAM's is not, and declares it)."""
    from sklearn.base import clone

    from aucstream._discovery import all_estimators
    from aucstream._rng import make_rng
    from aucstream._runtime import HoldsLearners
    from aucstream._runtime._declarations import measured_nbytes
    from aucstream._state import nbytes_of, state_items

    for _, cls in all_estimators():
        learner = cls()
        if issubclass(cls, HoldsLearners) or learner._state_spec.nbytes is not None:
            continue
        for width in (7, 300, 5000):
            scratch = clone(learner)
            scratch._rng = make_rng(None)
            scratch._init_state(width)
            expected = nbytes_of(state_items(scratch))
            assert measured_nbytes(learner, width) == expected, (cls.__name__, width)
