import numba as nb
import numpy as np
import pytest
import scipy.sparse as sp

from aucstream.covariance import (
    COVARIANCE_KINDS,
    FrequentDirectionsCovariance,
    FullCovariance,
    HashedCovariance,
    RandomizedCovariance,
    SparsifiedCovariance,
    make_covariance,
)
from aucstream.covariance._full import PENDING_ROWS, TRIANGLE_MATH, full_add
from aucstream.covariance._lowrank import (
    sketch_pair_tdot,
    sketch_pair_tdot_add,
)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(loc=2.0, size=(300, 7))
    X[rng.random(X.shape) < 0.5] = 0.0
    return X


@pytest.mark.parametrize("sparse", [False, True])
def test_statistics_equal_numpy(data, sparse):
    summary = FullCovariance(7)
    for lo in range(0, 300, 37):  # in several chunks
        block = data[lo : lo + 37]
        summary.update(sp.csr_matrix(block) if sparse else block)
    assert summary.count == 300
    np.testing.assert_allclose(summary.mean, data.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(summary.covariance, np.cov(data.T, bias=True), atol=1e-12)
    v = np.arange(7.0)
    np.testing.assert_allclose(summary.matvec(v), np.cov(data.T, bias=True) @ v, atol=1e-11)


def test_merge_is_exact(data):
    a = FullCovariance(7).update(data[:100])
    b = FullCovariance(7).update(data[100:])
    both = FullCovariance(7).update(data)
    merged = a.merge(b)
    assert merged.count == both.count
    np.testing.assert_allclose(merged.covariance, both.covariance, atol=1e-12)
    np.testing.assert_allclose(merged.mean, both.mean, rtol=1e-14)


def test_single_example_and_empty():
    s = FullCovariance(3)
    np.testing.assert_array_equal(s.matvec(np.ones(3)), 0.0)
    s.update(np.array([[1.0, 2.0, 3.0]]))
    np.testing.assert_allclose(s.covariance, 0.0, atol=1e-15)
    np.testing.assert_array_equal(s.mean, [1.0, 2.0, 3.0])


def test_dimension_errors():
    s = FullCovariance(3)
    with pytest.raises(ValueError, match="3 features"):
        s.update(np.ones((2, 4)))
    with pytest.raises(ValueError, match="3 features"):
        s.matvec(np.ones(4))
    with pytest.raises(ValueError, match="3 features"):
        s.merge(FullCovariance(4))


# ------------------------------------------------------------------ every summary kind

RANDOM_KINDS = ("randomized", "hash")


def _update(summary, X, kind, seed=0):
    return summary.update(X, seed) if kind in RANDOM_KINDS else summary.update(X)


@pytest.mark.parametrize("kind", COVARIANCE_KINDS)
def test_count_mean_and_interface(data, kind):
    s = _update(make_covariance(kind, 7, 3), data, kind)
    assert s.count == 300
    np.testing.assert_allclose(s.mean, data.mean(axis=0), rtol=1e-12)
    out = s.matvec(np.arange(7.0))
    assert out.shape == (7,) and np.all(np.isfinite(out))
    np.testing.assert_allclose(s.covariance @ np.arange(7.0), out, rtol=1e-9, atol=1e-9)
    empty = make_covariance(kind, 7, 3)
    np.testing.assert_array_equal(empty.matvec(np.ones(7)), 0.0)
    with pytest.raises(ValueError, match="7 features"):
        empty.update(np.ones((2, 4)))
    with pytest.raises(ValueError, match="7 features"):
        empty.matvec(np.ones(4))


@pytest.mark.parametrize("kind", COVARIANCE_KINDS)
def test_dense_sparse_and_chunked_updates_agree(data, kind):
    whole = _update(make_covariance(kind, 7, 3), data, kind, seed=5)
    rng = np.random.default_rng(5)
    parts = make_covariance(kind, 7, 3)
    for lo in range(0, 300, 41):
        block = sp.csr_matrix(data[lo : lo + 41])
        _update(parts, block, kind, seed=rng)
    v = np.linspace(-1, 1, 7)
    np.testing.assert_array_equal(parts.matvec(v), whole.matvec(v))
    for name, value in vars(whole).items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(getattr(parts, name), value, err_msg=name)


@pytest.mark.parametrize("kind", ["randomized", "hash", "fd"])
def test_lowrank_gram_is_maintained(data, kind):
    s = _update(make_covariance(kind, 7, 4), data, kind)
    np.testing.assert_allclose(s.gram_, s.sketch_.T @ s.sketch_, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(s.scatter, s.sketch_ @ s.sketch_.T)


@pytest.mark.parametrize("centering", ["g13", "g16", "exact"])
def test_randomized_centerings_equal_their_formulas(data, centering):
    n, tau = 300, 6
    A = RandomizedCovariance.draw(np.random.default_rng(3), n, tau)
    s = RandomizedCovariance(7, tau, centering).update(data, draws=A)
    Z = data.T @ A  # Z = X R with the rows a_t of R (G13 Eqs. 8-9)
    np.testing.assert_allclose(s.sketch_, Z, rtol=1e-12, atol=1e-12)
    c = data.mean(axis=0)
    if centering == "g16":
        expected = Z @ Z.T / n - np.outer(c, c)
    elif centering == "g13":
        abar = A.mean(axis=0)
        expected = Z @ Z.T / n - (abar @ abar) * np.outer(c, c)
    else:
        centered = (data - c).T @ A  # (X - c 1^T) R
        expected = centered @ centered.T / n
        assert np.linalg.eigvalsh(expected).min() > -1e-10  # PSD
    np.testing.assert_allclose(s.covariance, expected, rtol=1e-10, atol=1e-10)


def test_hash_draws_are_signed_buckets():
    A = HashedCovariance.draw(np.random.default_rng(0), 2000, 5)
    assert np.all(np.count_nonzero(A, axis=1) == 1)
    assert set(np.unique(A)) == {-1.0, 0.0, 1.0}
    counts = np.count_nonzero(A, axis=0)
    assert counts.min() > 300  # roughly uniform buckets
    assert abs(A.sum()) < 150  # balanced signs


def test_fd_is_exact_before_any_shrink(data):
    s = FrequentDirectionsCovariance(7, 40).update(data[:39])
    assert int(s.n_shrinks_[0]) == 0
    np.testing.assert_allclose(s.scatter, data[:39].T @ data[:39], rtol=1e-12, atol=1e-12)


def test_sparse_is_exact_when_tau_at_least_d(data):
    s = SparsifiedCovariance(7, 7).update(data)
    assert s.n_prunes == 0
    np.testing.assert_allclose(s.scatter, data.T @ data, rtol=1e-12)
    np.testing.assert_allclose(
        s.matvec(np.arange(7.0)), np.cov(data.T, bias=True) @ np.arange(7.0), atol=1e-11
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"kind": "nope"}, "covariance must be"),
        ({"kind": "fd", "sketch_size": 1}, "sketch_size must be"),
        ({"kind": "randomized", "sketch_size": 0}, "sketch_size must be"),
        ({"kind": "sparse", "sketch_size": 2.5}, "sketch_size must be"),
        ({"kind": "randomized", "centering": "mean"}, "centering must be"),
        ({"kind": "fd", "shrink": "third"}, "shrink must be"),
        ({"kind": "sparse", "prune_slack": -1.0}, "prune_slack must be"),
    ],
)
def test_invalid_settings(kwargs, match):
    kwargs = dict(kwargs)
    kind = kwargs.pop("kind")
    with pytest.raises(ValueError, match=match):
        make_covariance(kind, 5, kwargs.pop("sketch_size", 3), **kwargs)


@pytest.mark.parametrize("kind", ["randomized", "hash", "fd", "sparse"])
def test_merge_checks_compatibility(kind):
    a = make_covariance(kind, 5, 3)
    with pytest.raises(TypeError, match="cannot merge"):
        a.merge(FullCovariance(5))
    with pytest.raises(ValueError, match="sizes"):
        a.merge(make_covariance(kind, 5, 4))
    with pytest.raises(ValueError, match="5 features"):
        a.merge(make_covariance(kind, 6, 3))


# ------------------------------------------------- the full scatter's blocked loops


@nb.njit(fastmath=TRIANGLE_MATH)
def _rowwise_add(upper, sums, val, omega):
    """The definition of the dense add, row by row: P[i, j] += omega x_i x_j, j >= i."""
    for i in range(val.shape[0]):
        va = omega * val[i]
        if va == 0.0:
            continue
        sums[i] += va
        row, tail = upper[i, i:], val[i:]
        for j in range(row.shape[0]):
            row[j] += va * tail[j]


@nb.njit
def _dense_add(arrays, val, omega):
    full_add(arrays, None, val, omega)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_full_dense_rows_held_back_equal_rowwise_adds(dtype):
    """Dense rows held back (16 at a time, then added to P in one pass): at any point
    the summary's P, its product and its mean are those of adding each row to P at once
    (up to rounding), its sums bit for bit; zeros of x, the last rows of a sweep of
    four and example weights included."""
    rng = np.random.default_rng(1)
    for d in [*range(1, 10), 50, 123]:
        for omega in (1.0, 0.37):
            summary = FullCovariance(d, dtype)
            upper, sums = np.zeros((d, d)), np.zeros(d)
            for t in range(1, 40):
                x = 3.0 * rng.normal(size=d)
                x[rng.random(d) < rng.random()] = 0.0
                _dense_add(summary.arrays(), x, omega)
                _rowwise_add(upper, sums, x, omega)
                assert summary.n_pending_[0] == t % PENDING_ROWS
                if t % 7 and t % PENDING_ROWS:
                    continue
                P = upper + np.triu(upper, 1).T
                rtol = 1e-12 if dtype == np.float64 else 1e-5
                np.testing.assert_allclose(
                    summary.scatter, P, rtol=rtol, atol=rtol * np.abs(P).max()
                )
                np.testing.assert_array_equal(summary.sum_, sums, err_msg=f"d={d}")
                v = rng.normal(size=d)
                np.testing.assert_allclose(
                    summary.scatter_matvec(v), summary.scatter @ v, rtol=1e-12, atol=1e-12
                )
            summary._check_state()
            n = summary.n_pending_[0]
            assert not summary.pending_[n:].any() and not summary.pending_weight_[n:].any()


# ------------------------------------------- the linear sketches' products with x


@nb.njit
def _pair_tdot(pair, idx, val, out):
    sketch_pair_tdot(pair, idx, val, out)


@nb.njit
def _pair_tdot_add(pair, idx, val, out, c, draw):
    sketch_pair_tdot_add(pair, idx, val, out, c, draw)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sketch_products_two_features_at_a_time_are_the_sums_in_feature_order(dtype):
    """``sketch_pair_tdot`` (two features at a time) and ``sketch_pair_tdot_add``
    (the same pass also adds x a^T to one sketch) on the interleaved pair give, bit
    for bit, the sums over the features one after the other, zeros of x skipped, and
    the sketch of
    ``Z[i] += v a`` in float64 rounded once to the sketch's type: odd and even
    numbers of non-zeros, explicit zeros, dense and hashed draws, no draw."""
    rng = np.random.default_rng(2)
    d, tau = 40, 13
    for trial in range(60):
        k = int(rng.integers(0, 12))
        idx = np.sort(rng.choice(d, size=k, replace=False)).astype(np.int64)
        val = rng.normal(size=k)
        val[rng.random(k) < 0.3] = 0.0
        if trial % 3 == 0:
            draw = rng.normal(size=tau)
        elif trial % 3 == 1:
            draw = np.zeros(tau)
            draw[rng.integers(tau)] = rng.choice([-1.0, 1.0])
        else:
            draw = np.zeros(tau)
        Z = [rng.normal(size=(d, tau)).astype(dtype) for _ in range(2)]
        pair = np.hstack(Z)  # both sketches interleaved (sketch_pair)
        expected = np.zeros((2, tau))
        for v, i in zip(val, idx):
            if v != 0.0:
                for b in (0, 1):
                    expected[b] = expected[b] + v * Z[b][i].astype(np.float64)
        out = np.full((2, tau), np.nan)
        c = trial % 2
        updated = Z[c].copy()
        for v, i in zip(val, idx):
            if v != 0.0 and draw.any():
                updated[i] = (updated[i].astype(np.float64) + v * draw).astype(dtype)
        other = Z[1 - c].copy()
        _pair_tdot(pair, idx, val, out)
        np.testing.assert_array_equal(out, expected)
        out[:] = np.nan
        _pair_tdot_add(pair, idx, val, out, c, draw)
        np.testing.assert_array_equal(out, expected)
        np.testing.assert_array_equal(pair[:, c * tau : (c + 1) * tau], updated)
        np.testing.assert_array_equal(pair[:, (1 - c) * tau : (2 - c) * tau], other)


@pytest.mark.parametrize("kind", [RandomizedCovariance, HashedCovariance])
def test_sketch_pair_interleaves_two_linear_sketches_without_changing_them(kind):
    """``sketch_pair`` puts both sketches' rows side by side in one d x 2 tau array,
    each summary's ``sketch_`` a view of its half with the same values; it returns
    the same array while they stay interleaved, makes a new one after they came apart
    (a pickled copy), and None for frequent directions."""
    import pickle

    from aucstream.covariance import sketch_pair

    X = np.random.default_rng(3).normal(size=(40, 6))
    first, second = kind(6, sketch_size=4), kind(6, sketch_size=4)
    second.update(X, rng=1)
    before = [first.sketch_.copy(), second.sketch_.copy()]
    pair = sketch_pair(first, second)
    assert pair.shape == (6, 8) and pair.flags.c_contiguous
    assert first.sketch_.base is pair and second.sketch_.base is pair
    np.testing.assert_array_equal(first.sketch_, before[0])
    np.testing.assert_array_equal(second.sketch_, before[1])
    first.update(X[:10], rng=2)  # the views are the sketches: updates land in the pair
    np.testing.assert_array_equal(pair[:, :4], first.sketch_)
    np.testing.assert_allclose(first.gram_, first.sketch_.T @ first.sketch_, atol=1e-12)
    assert sketch_pair(first, second) is pair
    copies = pickle.loads(pickle.dumps((first, second)))
    assert not np.shares_memory(copies[0].sketch_, copies[1].sketch_)  # (apart)
    again = sketch_pair(*copies)
    assert again is not pair
    np.testing.assert_array_equal(again, pair)
    fd = [FrequentDirectionsCovariance(6, sketch_size=4) for _ in range(2)]
    assert sketch_pair(*fd) is None
    with pytest.raises(ValueError, match="interleave"):
        sketch_pair(kind(6, sketch_size=4), kind(6, sketch_size=3))


def _malformed_inputs():
    """A caller's rows the summaries must refuse before any kernel reads them."""
    outside = sp.csr_matrix((np.ones(2), np.array([0, 9]), np.array([0, 1, 2])), shape=(2, 6))
    falling = sp.csr_matrix((2, 6))
    falling.indptr = np.array([0, 2, 1])  # (a decreasing indptr, set after the checks)
    falling.indices, falling.data = np.array([0, 1]), np.ones(2)
    nan = np.zeros((2, 6))
    nan[1, 3] = np.nan
    inf = sp.csr_matrix(np.where(np.eye(6)[:2] > 0, np.inf, 0.0))
    return {
        "index outside the width": (outside, "column index 9 outside"),
        "decreasing indptr": (falling, "indptr is not a non-decreasing"),
        "nan": (nan, "NaN or infinity"),
        "inf": (inf, "NaN or infinity"),
    }


@pytest.mark.parametrize("case", sorted(_malformed_inputs()))
@pytest.mark.parametrize(
    "make",
    [
        lambda: FullCovariance(6),
        lambda: SparsifiedCovariance(6),
        lambda: FrequentDirectionsCovariance(6, 2),
        lambda: RandomizedCovariance(6, 2),
        lambda: HashedCovariance(6, 2),
    ],
    ids=["full", "sparse", "fd", "randomized", "hash"],
)
def test_a_malformed_update_is_refused_by_name_and_changes_nothing(make, case):
    """The public ``update`` of every summary refuses sparse structures that would make
    its kernels read or write outside their arrays (a crash, before), and values that
    would turn the statistics into NaN, before anything changes."""
    import pickle

    X, message = _malformed_inputs()[case]
    summary = make()
    kwargs = {"rng": 0} if isinstance(summary, (RandomizedCovariance, HashedCovariance)) else {}
    summary.update(np.arange(12.0).reshape(2, 6), **kwargs)
    before = pickle.dumps(summary)
    with pytest.raises(ValueError, match=message):
        summary.update(X, **kwargs)
    assert pickle.dumps(summary) == before


def test_a_reservoir_refuses_a_malformed_offer():
    from aucstream.reservoir import BiasedReservoir, Reservoir

    for reservoir in (Reservoir(6, 10), BiasedReservoir(6, 10, 5.0)):
        for X, message in _malformed_inputs().values():
            with pytest.raises(ValueError, match=message):
                reservoir.offer(X, np.random.default_rng(0))
        assert reservoir.counts_.sum() == 0
