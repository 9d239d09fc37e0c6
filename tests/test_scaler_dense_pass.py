"""The dense pass of :class:`~aucstream.preprocessing.OnlineStandardScaler` computes a
row at a time, in vectorized loops over the columns, the floats that the per-value path
(:func:`aucstream.preprocessing._standard._entry`, which the CSR pass takes) computes
value by value: the same transformed rows and statistics, bit for bit, for every
option, with and without forgetting, learning or only transforming, from a fresh state
and from one whose columns skipped rows (a stream whose earlier chunks were sparse)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from aucstream.preprocessing import OnlineStandardScaler
from aucstream.preprocessing._standard import _Options, _pass_csr, _pass_dense, _Stats


def _rows(seed: int, n: int = 300, d: int = 9) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.01, 100.0, d) + rng.normal(size=d) * 5
    X[:, 2] = 3.0  # a constant column: no usable scale
    X[:, 4] = 1e-300 * rng.normal(size=n)  # a scale near the rounding bound
    X[0, 5] = 0.0  # an explicit zero, stored in the CSR copy
    return X


def _state(d: int, seen: int, seed: int) -> _Stats:
    """Statistics after ``seen`` rows, the columns having learnt 0 to ``seen`` of them
    (the others were zeros of sparse rows, not yet absorbed)."""
    rng = np.random.default_rng(seed)
    count = rng.integers(0, seen + 1, d) if seen else np.zeros(d, dtype=np.int64)
    mean = np.where(count > 0, rng.normal(size=d) * 3, 0.0)
    m2 = np.where(count > 1, rng.uniform(0.0, 50.0, d) * count, 0.0)
    return _Stats(count.astype(np.int64), mean, m2)


def _run(kernel, X, stats, seen, options, learn, emit):
    stats = _Stats(*(a.copy() for a in stats))
    if kernel == "dense":
        out = np.empty(X.shape if emit else (0, 0))
        _pass_dense(X, out, stats, seen, options, learn, emit)
        return (out if emit else None), stats
    csr = sp.csr_matrix(X)
    # every value stored, zeros included: the CSR pass then sees each value as the
    # dense pass does
    indptr = np.arange(0, X.size + 1, X.shape[1], dtype=np.int32)
    indices = np.tile(np.arange(X.shape[1], dtype=np.int32), X.shape[0])
    data = np.ascontiguousarray(X).ravel()
    assert csr.shape == X.shape
    out = np.empty(data.size if emit else 0)
    _pass_csr(indptr, indices, data, out, stats, seen, options, learn, emit)
    return (out.reshape(X.shape) if emit else None), stats


CASES = list(
    itertools.product(
        [True, False],  # centered
        [True, False],  # scaled
        [np.inf, 2.5],  # clip
        [1.0, 2.0 ** (-1 / 40), 2.0 ** (-1 / 5000)],  # decay (1: no forgetting)
        [0, 7],  # rows seen before
        [(True, True), (True, False), (False, True)],  # learn, emit
    )
)


@pytest.mark.parametrize("centered, scaled, clip, decay, seen, calls", CASES)
def test_the_dense_pass_gives_the_floats_of_the_per_value_path(
    centered, scaled, clip, decay, seen, calls
):
    learn, emit = calls
    X = _rows(seen + 11)
    options = _Options(centered, scaled, clip, decay)
    stats = _state(X.shape[1], seen, seed=seen)
    out_d, stats_d = _run("dense", X, stats, seen, options, learn, emit)
    out_c, stats_c = _run("csr", X, stats, seen, options, learn, emit)
    if emit:
        assert out_d.tobytes() == out_c.tobytes()
    for a, b in zip(stats_d, stats_c):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_an_empty_block_changes_nothing_and_one_row_calls_equal_a_chunk():
    X = _rows(3, n=40)
    options = _Options(True, True, np.inf, 1.0)
    stats = _state(X.shape[1], 5, seed=1)
    before = [a.copy() for a in stats]
    _pass_dense(X[:0], np.empty((0, X.shape[1])), stats, 5, options, True, True)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(stats, before))
    chunk, row = OnlineStandardScaler(), OnlineStandardScaler()
    whole = chunk.partial_fit_transform(X)
    rows = np.vstack([row.partial_fit_transform(X[i : i + 1]) for i in range(X.shape[0])])
    assert whole.tobytes() == rows.tobytes()
    assert chunk.running_m2_.tobytes() == row.running_m2_.tobytes()
