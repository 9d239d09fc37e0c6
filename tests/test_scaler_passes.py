"""The passes of :class:`~aucstream.preprocessing.OnlineStandardScaler`.

- The dense pass computes a row at a time, in vectorized loops over the columns, the
  floats that the per-value path (:func:`aucstream.preprocessing._standard_kernels._entry`,
  which the CSR pass takes) computes value by value: the same transformed rows and
  statistics, bit for bit, for every option, with and without forgetting, learning or
  only transforming, from a fresh state and from one whose columns skipped rows (a
  stream whose earlier chunks were sparse).
- A sparse chunk's call saves, and checks, only the columns it names (the undo log of
  :func:`aucstream._state.transaction`): a refused or interrupted call leaves the
  whole state as it was, and the results are those of the whole state's transaction.
"""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import assert_same_state, snapshot

from aucstream import _state
from aucstream.preprocessing import OnlineStandardScaler
from aucstream.preprocessing import _standard as standard
from aucstream.preprocessing._standard_kernels import (
    EVERY_ROW,
    _Options,
    _pass_csr,
    _pass_dense,
    _Stats,
)


def _rows(seed: int, n: int = 300, d: int = 9) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.01, 100.0, d) + rng.normal(size=d) * 5
    X[:, 2] = 3.0  # a constant column: no usable scale
    X[:, 4] = 1e-300 * rng.normal(size=n)  # a scale near the rounding bound
    X[0, 5] = 0.0  # an explicit zero, stored in the CSR copy
    return X


def _stats_after(d: int, seen: int, seed: int) -> _Stats:
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
        _pass_dense(X, out, stats, seen, options, learn, emit, EVERY_ROW)
        return (out if emit else None), stats
    csr = sp.csr_matrix(X)
    # every value stored, zeros included: the CSR pass then sees each value as the
    # dense pass does
    indptr = np.arange(0, X.size + 1, X.shape[1], dtype=np.int32)
    indices = np.tile(np.arange(X.shape[1], dtype=np.int32), X.shape[0])
    data = np.ascontiguousarray(X).ravel()
    assert csr.shape == X.shape
    out = np.empty(data.size if emit else 0)
    _pass_csr(indptr, indices, data, out, stats, seen, options, learn, emit, EVERY_ROW)
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
    stats = _stats_after(X.shape[1], seen, seed=seen)
    out_d, stats_d = _run("dense", X, stats, seen, options, learn, emit)
    out_c, stats_c = _run("csr", X, stats, seen, options, learn, emit)
    if emit:
        assert out_d.tobytes() == out_c.tobytes()
    for a, b in zip(stats_d, stats_c):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_an_empty_block_changes_nothing_and_one_row_calls_equal_a_chunk():
    X = _rows(3, n=40)
    options = _Options(True, True, np.inf, 1.0)
    stats = _stats_after(X.shape[1], 5, seed=1)
    before = [a.copy() for a in stats]
    _pass_dense(X[:0], np.empty((0, X.shape[1])), stats, 5, options, True, True, EVERY_ROW)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(stats, before))
    chunk, row = OnlineStandardScaler(), OnlineStandardScaler()
    whole = chunk.partial_fit_transform(X)
    rows = np.vstack([row.partial_fit_transform(X[i : i + 1]) for i in range(X.shape[0])])
    assert whole.tobytes() == rows.tobytes()
    assert chunk.running_m2_.tobytes() == row.running_m2_.tobytes()


def _sparse_stream(seed: int = 5, n: int = 600, d: int = 4000) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.004, format="csr", random_state=seed)
    X.data = rng.normal(size=X.nnz) * 10.0
    return X


def _state_of(scaler) -> dict:
    return snapshot({k: v for k, v in vars(scaler).items() if k.endswith("_")})


@pytest.fixture(params=["columns", "whole"])
def path(request, monkeypatch) -> str:
    """Both transactions of a sparse call: the columns' (taken above
    ``_state.SHADOW_LIMIT`` bytes of statistics, here at once) and the whole state's."""
    if request.param == "columns":
        monkeypatch.setattr(_state, "SHADOW_LIMIT", 0)
    return request.param


def test_the_columns_transaction_is_taken_above_the_shadow_limit(monkeypatch):
    scaler = OnlineStandardScaler().partial_fit(_sparse_stream()[:100])
    assert not scaler._by_columns()  # 4,000 columns: 96 KB of statistics
    monkeypatch.setattr(_state, "SHADOW_LIMIT", 3 * 8 * 4000 - 1)
    assert scaler._by_columns()


@pytest.mark.parametrize("half_life", [None, 300.0])
def test_sparse_chunks_learn_as_the_whole_state_transaction_does(half_life, monkeypatch):
    X = _sparse_stream()
    cuts = [0, 1, 97, 250, 251, 600]
    by_columns, whole = OnlineStandardScaler(half_life=half_life), None
    monkeypatch.setattr(_state, "SHADOW_LIMIT", 0)
    outs = [by_columns.partial_fit_transform(X[a:b]) for a, b in zip(cuts, cuts[1:])]
    monkeypatch.setattr(OnlineStandardScaler, "_by_columns", lambda self: False)
    whole = OnlineStandardScaler(half_life=half_life)
    ref = [whole.partial_fit_transform(X[a:b]) for a, b in zip(cuts, cuts[1:])]
    for a, b in zip(outs, ref):
        assert a.toarray().tobytes() == b.toarray().tobytes()
    assert_same_state(_state_of(whole), _state_of(by_columns))


def test_a_sparse_call_saves_only_the_columns_it_names(monkeypatch):
    monkeypatch.setattr(_state, "SHADOW_LIMIT", 0)
    scaler = OnlineStandardScaler().partial_fit(_sparse_stream()[:100])
    monkeypatch.setattr(
        _state, "walked_transaction", lambda *a, **k: pytest.fail("the whole state copied")
    )
    covered = []
    cover = _state.UndoLog.cover
    monkeypatch.setattr(
        _state.UndoLog,
        "cover",
        lambda log, rows, fresh=False: covered.append(rows) or cover(log, rows, fresh),
    )
    chunk = _sparse_stream(seed=6)[:50]
    scaler.partial_fit_transform(chunk)
    (rows,) = covered
    assert set(rows) == {
        id(a) for a in (scaler.running_count_, scaler.running_mean_, scaler.running_m2_)
    }
    for columns in rows.values():
        assert columns.tolist() == np.unique(chunk.indices).tolist()


def test_a_refused_sparse_chunk_changes_nothing(path):
    scaler = OnlineStandardScaler().partial_fit(_sparse_stream()[:100])
    before = _state_of(scaler)
    overflow = sp.csr_matrix(([1e308, -1e308, 1.0], ([0, 1, 1], [7, 7, 8])), shape=(2, 4000))
    with pytest.raises(FloatingPointError, match="running_m2_.*not learnt"):
        scaler.partial_fit_transform(overflow)
    assert_same_state(before, _state_of(scaler))
    wide = sp.csr_matrix(np.ones((1, 4001)))
    with pytest.raises(ValueError, match="4001 features"):
        scaler.partial_fit(wide)
    assert_same_state(before, _state_of(scaler))


def test_an_interrupted_sparse_call_changes_nothing(path, monkeypatch):
    scaler = OnlineStandardScaler(half_life=50.0).partial_fit(_sparse_stream()[:100])
    before = _state_of(scaler)

    run = OnlineStandardScaler._pass

    def interrupted(self, X, **options):
        run(self, X, **options)  # the statistics written, then an interrupt
        raise KeyboardInterrupt

    monkeypatch.setattr(OnlineStandardScaler, "_pass", interrupted)
    with pytest.raises(KeyboardInterrupt):
        scaler.partial_fit_transform(_sparse_stream(seed=7)[:80])
    assert_same_state(before, _state_of(scaler))


def test_csc_chunks_learn_as_their_csr_copies(path):
    X = _sparse_stream(seed=8)
    a, b = OnlineStandardScaler(), OnlineStandardScaler()
    for lo, hi in ((0, 200), (200, 450), (450, 600)):
        za = a.partial_fit_transform(X[lo:hi])
        zb = b.partial_fit_transform(X[lo:hi].tocsc())
        assert za.toarray().tobytes() == zb.toarray().tobytes()
    assert_same_state(_state_of(a), _state_of(b))


def test_a_read_only_state_is_refused_by_name_as_before(path):
    scaler = OnlineStandardScaler().partial_fit(_sparse_stream()[:100])
    scaler.running_mean_.flags.writeable = False
    assert not standard.OnlineStandardScaler._by_columns(scaler)  # the whole state's path
    before = _state_of(scaler)
    with pytest.raises(ValueError, match=r"read-only arrays \(running_mean_\)"):
        scaler.partial_fit_transform(_sparse_stream(seed=9)[:60])
    assert_same_state(before, _state_of(scaler))


def test_transform_one_is_transform_of_the_row_and_learns_nothing():
    """``transform_one``: the compiled path's values are ``transform``'s bit for bit,
    for dict rows (a scaler that does not center) and arrays (one that centers);
    nothing is learnt; bad rows get ``transform``'s error."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 8)) * rng.uniform(0.1, 40, size=8)
    X[rng.random(X.shape) < 0.5] = 0.0
    S = sp.csr_matrix(X)
    sparse = OnlineStandardScaler(clip=4.0).partial_fit(S[:200])
    dense = OnlineStandardScaler().partial_fit(X[:200])
    for i in range(200, 300):
        row = dict(zip(S[i].indices.tolist(), S[i].data.tolist()))
        Z = sparse.transform(S[i])
        assert sparse.transform_one(row) == dict(zip(Z.indices.tolist(), Z.data.tolist()))
        np.testing.assert_array_equal(dense.transform_one(X[i]), dense.transform(X[i : i + 1])[0])
    assert sparse.n_samples_seen_ == dense.n_samples_seen_ == 200
    with pytest.raises(ValueError, match="outside"):
        sparse.transform_one({8: 1.0})
    with pytest.raises(ValueError, match="center"):
        dense.transform_one({0: 1.0})


def test_partial_fit_transform_sparse_one_in_place_or_nothing():
    """The in-place one-row step: the values of ``partial_fit_transform_one`` of the
    same dict (sorted), the scaler learnt; arrays it can not take, or a row it refuses,
    leave the scaler as it was (False)."""
    S = sp.random(200, 9, density=0.4, format="csr", random_state=6) * 30.0
    one, other = (OnlineStandardScaler().partial_fit(S[:100]) for _ in "ab")
    for i in range(100, 200):
        idx, vals = S[i].indices[::-1].astype(np.int64), S[i].data[::-1].copy()
        want = other.partial_fit_transform_one(dict(zip(idx.tolist(), vals.tolist())))
        assert one.partial_fit_transform_sparse_one(idx, vals)
        assert dict(zip(idx.tolist(), vals.tolist())) == want
    before = pickle.dumps(one)
    good = np.array([1, 4]), np.array([0.5, 2.0])
    for idx, vals in (
        (good[0].astype(np.int32), good[1]),  # dtypes
        (good[0], good[1].astype(np.float32)),
        (good[0], good[1][:1]),  # lengths
        (good[0].reshape(1, 2), good[1].reshape(1, 2)),  # not 1-D
        (np.array([1, 1]), good[1]),  # a repeated index
        (np.array([1, 9]), good[1]),  # outside the features
        (good[0], np.array([np.nan, 1.0])),
        (good[0], np.array([1e300, 1.0])),
    ):
        assert not one.partial_fit_transform_sparse_one(idx, vals)
        assert pickle.dumps(one) == before
