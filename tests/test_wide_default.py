"""The tuning-free default on hashed widths: above ``aucstream.search.WIDE`` features
the default candidates are the O(d)-state learners only, so that ``StreamPipeline()``
fits the default memory budget at 10^6 columns (its race of sketches and reservoirs
asked for 9.3 GB there) and learns a sparse stream."""

from __future__ import annotations

import numpy as np
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
    wide = search_module.default_candidates(search_module.WIDE + 1)
    assert {type(c) for c in wide} == set(O_D)
    assert all(c.state_nbytes(10**6) == 0 for c in wide)  # (O(d): not counted)
    narrow = {type(c).__name__ for c in search_module.default_candidates(search_module.WIDE)}
    assert "OPAUC" in narrow and "OAM" in narrow  # unchanged below the width


def test_the_default_pipeline_fits_the_budget_at_a_million_columns():
    assert StreamPipeline().state_nbytes(10**6) < 2**30
    assert OnePassSearch(drift=None).state_nbytes(10**6) < 2**30


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
