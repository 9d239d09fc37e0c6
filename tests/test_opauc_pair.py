"""OPAUC's linear sketches interleaved in one d x 2 tau array (issue 33).

The two classes' sketches of covariance="randomized" and "hash" live side by side
in one array (:func:`aucstream.covariance.sketch_pair`), each summary's ``sketch_`` a
view of its half; copies (pickling, saving) come apart and are interleaved again by
the next call that learns. Neither changes a number: the learners below are compared
bit for bit with one that learnt without interruption.
"""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from aucstream import OPAUC
from aucstream.covariance import sketch_pair


def _stream(n=600, d=300, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.05, random_state=seed, format="csr")
    y = np.where(X @ rng.normal(size=d) > 0, 1, -1)
    return X, y


def _model(kind, dtype):
    return OPAUC(covariance=kind, sketch_size=6, random_state=0, dtype=dtype, eta=2**-4)


def _state(model):
    return [s.sketch_.copy() for s in model.stats_] + [model.v_.copy(), model.p_.copy()]


@pytest.mark.parametrize("kind", ["randomized", "hash"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_sketches_interleaved_and_copies_resume_bit_for_bit(kind, dtype):
    X, y = _stream()
    whole = _model(kind, dtype)
    for lo in range(0, 600, 100):
        whole.partial_fit(X[lo : lo + 100], y[lo : lo + 100], classes=[-1, 1])
    neg, pos = whole.stats_
    pair = sketch_pair(neg, pos)
    assert neg.sketch_.base is pair and pos.sketch_.base is pair
    assert pair.dtype == np.dtype(dtype) and pair.shape == (300, 12)

    half = _model(kind, dtype)
    for lo in range(0, 300, 100):
        half.partial_fit(X[lo : lo + 100], y[lo : lo + 100], classes=[-1, 1])
    copy = pickle.loads(pickle.dumps(half))  # its sketches come apart
    assert not np.shares_memory(copy.stats_[0].sketch_, copy.stats_[1].sketch_)
    for lo in range(300, 600, 100):
        copy.partial_fit(X[lo : lo + 100], y[lo : lo + 100])
    assert copy.stats_[0].sketch_.base is copy.stats_[1].sketch_.base  # together again
    for a, b in zip(_state(copy), _state(whole)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(copy.decision_function(X), whole.decision_function(X))


def test_a_rejected_call_that_interleaved_changes_nothing():
    """A call that interleaves the sketches of a copy and then fails (a float32
    sketch overflows) leaves the learner as it was: it then learns as the original."""
    X, y = _stream()
    model = _model("randomized", "float32")
    model.partial_fit(X[:300], y[:300], classes=[-1, 1])
    copy = pickle.loads(pickle.dumps(model))
    before = _state(copy)
    huge = X[300:310] * 1e30
    with pytest.raises(FloatingPointError):
        copy.partial_fit(huge, y[300:310])
    for a, b in zip(_state(copy), before):
        np.testing.assert_array_equal(a, b)
    copy.partial_fit(X[300:], y[300:])
    model.partial_fit(X[300:], y[300:])
    np.testing.assert_array_equal(copy.decision_function(X), model.decision_function(X))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_undo_log_rows_of_the_halves_of_a_pair(dtype):
    """The undo log's compiled gather and finiteness check take the rows of a half
    of the pair (a view with contiguous rows) as numpy's indexing does."""
    from aucstream._runtime._undo import _finite, _take_rows

    pair = np.arange(60, dtype=dtype).reshape(6, 10)
    rows = np.array([0, 3, 5])
    for half in (pair[:, :5], pair[:, 5:]):
        np.testing.assert_array_equal(_take_rows(half, rows), half[rows])
        assert _finite(half, rows)
    pair[3, 7] = np.inf
    assert not _finite(pair[:, 5:], rows) and _finite(pair[:, :5], rows)
    assert _finite(pair[:, 5:], np.array([0, 5]))


@pytest.mark.parametrize("kind", ["randomized", "hash"])
def test_the_kernels_gram_matrices_are_their_sketches_and_exactly_symmetric(kind):
    """The Gram matrix each class keeps while OPAUC learns (the randomized one by the
    symmetric rank-2 update, aucstream.covariance._lowrank.gram_add_rank2, with the
    kernel's work vector; no re-basing refreshes it in this stream) is Z^T Z of its
    sketch and symmetric bit for bit (the kernel reads its rows for its columns)."""
    X, y = _stream(seed=3)
    model = _model(kind, "float64").fit(X, y)
    for s in model.stats_:
        Z = np.asarray(s.sketch_)
        np.testing.assert_allclose(s.gram_, Z.T @ Z, rtol=1e-10, atol=1e-10)
        assert np.array_equal(s.gram_, s.gram_.T)
