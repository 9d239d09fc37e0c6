"""Prequential scores of OPAUC (every covariance kind), AdaOAM and SAdaOAM.

``test_then_train`` must return, for each row, the score ``w^T x`` of the model that
has learnt exactly the rows before it: checked against a model that learns the
stream one row per ``partial_fit`` call and scores each row before learning it, and
against models refitted from scratch on prefixes of the stream (brute force; a few
prefixes: the first rows, while the negative class is still empty, the re-basings of
OPAUC's implicit weights, the end), on dense and on sparse input.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_stream

from aucstream import OPAUC
from aucstream.adaoam import AdaOAM, SAdaOAM

N, D = 60, 6

CASES = {
    "full": (OPAUC, {"eta": 0.1, "lam": 0.01}),
    "sparse": (OPAUC, {"eta": 0.1, "covariance": "sparse", "sketch_size": 2, "prune_slack": 0.0}),
    "randomized": (OPAUC, {"eta": 0.1, "covariance": "randomized", "sketch_size": 3}),
    "randomized_exact": (
        OPAUC,
        {"eta": 0.1, "covariance": "randomized", "sketch_size": 3, "centering": "exact"},
    ),
    "hash": (OPAUC, {"eta": 0.1, "covariance": "hash", "sketch_size": 3}),
    "fd": (OPAUC, {"eta": 0.1, "covariance": "fd", "sketch_size": 3}),
    "fd_exact": (OPAUC, {"eta": 0.1, "covariance": "fd", "sketch_size": 3, "centering": "exact"}),
    "adaoam": (AdaOAM, {"eta": 0.1, "lam": 0.01}),
    "adaoam_euclidean": (AdaOAM, {"eta": 0.5, "lam": 0.5, "projection": "euclidean"}),
    "sadaoam": (SAdaOAM, {"eta": 0.1, "lam": 0.0, "theta": 0.05}),
    "sadaoam_lam": (SAdaOAM, {"eta": 0.1, "lam": 0.01, "theta": 0.05}),
    "sadaoam_eager": (SAdaOAM, {"eta": 0.1, "lam": 0.0, "theta": 0.05, "lazy": False}),
}


def _stream(sparse: bool):
    X, y = make_stream(N, D, seed=3, sparsity=0.4)
    y[:7] = 1  # the first rows are learnt while the negative class is still empty
    y[7] = -1
    return (sp.csr_matrix(X) if sparse else X), y


#: The prefixes refitted from scratch (rows 0..7 are positive, row 7 the first negative;
#: OPAUC re-bases every 11 rows).
REFITTED = (1, 2, 7, 8, 9, 11, 12, 22, 23, 34, 45, 59)


def _prefix_scores(name, X, y) -> np.ndarray:
    """Row t's score by the model that learnt rows 0..t-1: learnt row by row, and
    refitted from scratch at the prefixes :data:`REFITTED` (the same scores asked)."""
    expected = np.zeros(N)
    model = _model(name)
    for t in range(N):
        if t:
            expected[t] = model._raw_scores(X[t : t + 1])[0]
        model.partial_fit(X[t : t + 1], y[t : t + 1], classes=[-1, 1])
    for t in REFITTED:
        prefix = _model(name).partial_fit(X[:t], y[:t], classes=[-1, 1])
        np.testing.assert_allclose(
            prefix._raw_scores(X[t : t + 1])[0], expected[t], rtol=1e-9, atol=1e-12
        )
    return expected


def _model(name):
    cls, params = CASES[name]
    if "random_state" in cls().get_params():
        params = {**params, "random_state": 5}
    model = cls(**params)
    if isinstance(model, OPAUC):
        model._rebase_every = 11  # exercise the re-basing of the implicit weights
    return model


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("name", list(CASES))
def test_prequential_scores_are_those_of_the_prefix_model(name, sparse):
    X, y = _stream(sparse)
    scores = _model(name).test_then_train(X, y, classes=[-1, 1])
    expected = _prefix_scores(name, X, y)
    assert np.any(expected != 0.0)
    np.testing.assert_allclose(scores, expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["full", "fd", "sadaoam"])
def test_prequential_scores_do_not_depend_on_chunking(name):
    X, y = _stream(sparse=True)
    whole = _model(name).test_then_train(X, y, classes=[-1, 1])
    model = _model(name)
    parts = [
        model.test_then_train(X[a : a + 13], y[a : a + 13], classes=[-1, 1])
        for a in range(0, N, 13)
    ]
    np.testing.assert_array_equal(np.concatenate(parts), whole)


@pytest.mark.parametrize("name", ["full", "sparse", "adaoam", "sadaoam", "sadaoam_eager"])
def test_weighted_prequential_scores_are_those_of_the_weighted_prefix_model(name):
    X, y = _stream(sparse=False)
    weights = np.random.default_rng(7).choice([0.0, 0.5, 1.0, 3.0], size=N)
    scores = _model(name).test_then_train(X, y, classes=[-1, 1], sample_weight=weights)
    expected = np.zeros(N)
    for t in range(1, N):  # (every prefix refitted: a row of weight 0 alone is refused)
        prefix = _model(name).partial_fit(X[:t], y[:t], classes=[-1, 1], sample_weight=weights[:t])
        expected[t] = prefix._raw_scores(X[t : t + 1])[0]
    assert np.any(expected != 0.0)
    np.testing.assert_allclose(scores, expected, rtol=1e-9, atol=1e-12)
