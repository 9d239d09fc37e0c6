"""The O(k) learners at widths where their kernels prefetch the next example's rows
(:func:`aucstream._kernels.prefetch_row_of`: arrays of at least
``PREFETCH_MIN_BYTES``) learn exactly what they learn in a narrow space: the same
rows with their columns spread out (in the same order) give the same prequential
scores, bit for bit, as the rows packed into the first columns."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from aucstream import FTRLAUC, SOLAM, SPAM, UnivariateOnline
from aucstream._kernels import PREFETCH_MIN_BYTES

NARROW, SPREAD = 64, 10_000  # the wide space: 640,000 columns
LEARNERS = [FTRLAUC, SPAM, UnivariateOnline, SOLAM]


def wide_stream(n: int = 600, k: int = 6, seed: int = 0, lognormal: bool = False):
    """The same rows in NARROW columns and spread over NARROW * SPREAD, and labels."""
    rng = np.random.default_rng(seed)
    cols = np.sort(np.array([rng.choice(NARROW, k, replace=False) for _ in range(n)]), axis=1)
    vals = (rng.lognormal(size=(n, k)) if lognormal else rng.normal(size=(n, k))) / np.sqrt(k)
    truth = rng.normal(size=NARROW)
    y = np.where((vals * truth[cols]).sum(1) + 0.3 * rng.normal(size=n) > 0, 1, -1)
    indptr = np.arange(0, n * k + 1, k)
    narrow = sp.csr_matrix((vals.ravel(), cols.ravel(), indptr), shape=(n, NARROW))
    wide = sp.csr_matrix((vals.ravel(), cols.ravel() * SPREAD, indptr), shape=(n, NARROW * SPREAD))
    return narrow, wide, y


def _scores(cls, X, y, chunk: int = 97):
    model = cls()
    out = [model.test_then_train(X[:chunk], y[:chunk], classes=[-1, 1])]
    out += [
        model.test_then_train(X[lo : lo + chunk], y[lo : lo + chunk])
        for lo in range(chunk, X.shape[0], chunk)
    ]
    return np.concatenate(out), model


@pytest.mark.parametrize("cls", LEARNERS, ids=lambda c: c.__name__)
def test_wide_rows_learn_as_narrow_ones(cls):
    narrow, wide, y = wide_stream()
    expected, small = _scores(cls, narrow, y)
    got, large = _scores(cls, wide, y)
    arrays = [a for a in vars(large).values() if isinstance(a, np.ndarray)]
    assert max(a.nbytes for a in arrays) >= PREFETCH_MIN_BYTES  # the prefetching path
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(
        np.asarray(large.coef_).ravel()[::SPREAD], np.asarray(small.coef_).ravel()
    )
