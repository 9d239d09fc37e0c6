"""A CSR matrix whose index arrays were written in place after scipy cached its
flags (``has_canonical_format`` still True) holds unsorted or duplicate indices that
scipy's own routines trust: the learners sort and sum them as they do for a matrix
that says so (:func:`aucstream._chunks.csr_arrays`), so both learn the same state,
bit for bit (a duplicate used to reach the kernels as two values of one column)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import assert_same_state, snapshot

from aucstream import FTRLAUC, SOLAM, StreamPipeline
from aucstream.preprocessing import OnlineStandardScaler


def _stale_and_canonical(seed: int = 0):
    rng = np.random.default_rng(seed)
    X = sp.random(300, 40, density=0.2, format="csr", random_state=rng)
    X.data = rng.normal(size=X.nnz)
    assert X.has_canonical_format  # (cached now)
    stale = X.copy()
    stale.has_canonical_format = True  # (the copy's cache, as the original's)
    lo = stale.indptr[1]
    stale.indices[lo + 1] = stale.indices[lo]  # a duplicate in row 1
    lo = stale.indptr[5]
    stale.indices[lo], stale.indices[lo + 1] = stale.indices[lo + 1], stale.indices[lo]
    assert stale.has_canonical_format  # scipy still trusts it
    canonical = stale.copy()
    canonical.has_sorted_indices = False
    canonical.has_canonical_format = False
    canonical.sum_duplicates()
    y = np.where(rng.random(300) < 0.4, 1, 0)
    return stale, canonical, y


@pytest.mark.parametrize(
    "make",
    [
        lambda: FTRLAUC(random_state=0),
        lambda: SOLAM(random_state=0),
        lambda: StreamPipeline(estimator=FTRLAUC(random_state=0), drift=None),
    ],
    ids=["FTRLAUC", "SOLAM", "StreamPipeline"],
)
def test_stale_flags_learn_as_the_canonical_matrix(make):
    stale, canonical, y = _stale_and_canonical()
    a, b = make(), make()
    a.partial_fit(stale, y, classes=[0, 1])  # (the whole matrix: a slice recomputes flags)
    b.partial_fit(canonical, y, classes=[0, 1])
    if isinstance(a, StreamPipeline):  # (its steps: the pipeline's own generator is unseeded)
        a, b = a.estimator_, b.estimator_
    assert_same_state(snapshot(vars(b)), snapshot(vars(a)))


def test_the_scaler_sums_stale_duplicates():
    stale, canonical, _ = _stale_and_canonical(1)
    a, b = OnlineStandardScaler(with_mean=False), OnlineStandardScaler(with_mean=False)
    out_a, out_b = a.partial_fit_transform(stale), b.partial_fit_transform(canonical)
    np.testing.assert_array_equal(out_a.toarray(), out_b.toarray())
    assert_same_state(snapshot(vars(b)), snapshot(vars(a)))


def _stale_row(values, columns, width):
    """A one-row CSR matrix whose cached flags call it canonical after its indices
    were written in place to ``columns`` (which may repeat)."""
    X = sp.csr_matrix((values, np.arange(len(values)), [0, len(values)]), shape=(1, width))
    assert X.has_canonical_format  # (cached now)
    X.indices[:] = columns
    return X


def test_one_row_calls_sum_stale_duplicates():
    """``StreamPipeline``'s one-row path turned such a row into a dict, which kept the
    last of a repeated column's values; it now learns what the summed row gives."""
    stale, canonical, y = _stale_and_canonical(2)
    a = StreamPipeline(estimator=SOLAM(random_state=0), drift=None)
    b = StreamPipeline(estimator=SOLAM(random_state=0), drift=None)
    a.partial_fit(canonical[:50], y[:50], classes=[0, 1])
    b.partial_fit(canonical[:50], y[:50], classes=[0, 1])
    for j, (values, columns) in enumerate([([1.0, 2.0, 0.5], [3, 3, 7]), ([0.3, -1.2], [9, 1])]):
        row = _stale_row(np.array(values), np.array(columns), 40)
        summed = sp.csr_matrix((values, columns, [0, len(values)]), shape=(1, 40))
        summed.sum_duplicates()
        a.partial_fit(row, y[j : j + 1])
        b.partial_fit(summed, y[j : j + 1])
    a.partial_fit(canonical[50:60], y[50:60])  # (releases what the pipeline holds)
    b.partial_fit(canonical[50:60], y[50:60])
    assert_same_state(snapshot(vars(b.estimator_)), snapshot(vars(a.estimator_)))
    assert_same_state(snapshot(vars(b.transformer_)), snapshot(vars(a.transformer_)))


def test_plain_row_refuses_a_stale_duplicate():
    from aucstream.evaluation._prequential_parts import plain_row

    stale, canonical, _ = _stale_and_canonical(3)
    assert plain_row(stale, 1) is None  # a repeated column: the sliced path sums it
    lo, hi = canonical.indptr[5], canonical.indptr[6]
    expected = dict(zip(canonical.indices[lo:hi].tolist(), canonical.data[lo:hi].tolist()))
    assert plain_row(stale, 5) == expected  # unsorted but distinct: the same row
