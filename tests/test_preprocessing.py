"""OnlineStandardScaler: prequential scaling inside the one pass.

The references are scikit-learn's StandardScaler (fitted on all rows, or by brute force
on the rows before each row) and a single pass over the whole stream (for chunking,
merging and resuming).
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import assert_same_state, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.preprocessing import StandardScaler
from sklearn.preprocessing._data import _is_constant_feature
from sklearn.utils.estimator_checks import parametrize_with_checks

from aucstream import OPAUC, roc_auc
from aucstream._params import InvalidParameterError
from aucstream.preprocessing import OnlineStandardScaler, UnitNormalizer
from aucstream.random_features import RandomFourierFeatures

N = 80
TOL = {"rtol": 1e-12, "atol": 1e-12}


def make_stream(n: int = N, sparse: bool = False, seed: int = 0) -> np.ndarray:
    """Columns of very different scales, a column constant for half the stream that
    then jumps, one constant throughout, a rare binary one and a heavy-tailed one;
    half of the other entries zero if ``sparse``."""
    rng = np.random.default_rng(seed)
    X = np.column_stack(
        [
            rng.normal(1000.0, 100.0, n),
            rng.normal(0.0, 1e-3, n),
            np.where(np.arange(n) < n // 2, 1000.0, rng.normal(500.0, 5.0, n)),
            np.full(n, 7.0),
            (rng.random(n) < 0.1).astype(float),
            rng.standard_t(2, n),
        ]
    )
    if sparse:  # the jump and the constant stay as they are
        X[:, [0, 1, 4, 5]] *= rng.random((n, 4)) < 0.5
    return X


def dense(Z) -> np.ndarray:
    return Z.toarray() if sp.issparse(Z) else Z


def state(scaler) -> dict:
    return snapshot({k: v for k, v in vars(scaler).items() if k.endswith("_")})


# --------------------------------------------------------------------- references
def brute_force_row(X, i: int, with_mean: bool, clip: float | None) -> np.ndarray:
    """Row i scaled by scikit-learn's StandardScaler fitted on rows < i, with columns
    that have no usable scale (fewer than two rows, or constant) mapped to 0."""
    if i == 0:
        return np.zeros(X.shape[1])
    reference = StandardScaler(with_mean=with_mean).fit(X[:i])
    z = dense(reference.transform(X[i : i + 1]))[0]
    z[_is_constant_feature(reference.var_, reference.mean_, reference.n_samples_seen_)] = 0.0
    return z if clip is None else np.clip(z, -clip, clip)


@pytest.mark.parametrize("clip", [None, 3.0])
@pytest.mark.parametrize("kind", ["dense", "csr"])
def test_each_row_is_scaled_by_the_rows_before_it(kind, clip):
    X = make_stream(sparse=kind == "csr")
    Xin = sp.csr_matrix(X) if kind == "csr" else X
    with_mean = kind == "dense"
    Z = dense(OnlineStandardScaler(clip=clip).partial_fit_transform(Xin))
    for i in range(N):
        Xi = sp.csr_matrix(X) if kind == "csr" else X
        np.testing.assert_allclose(Z[i], brute_force_row(Xi, i, with_mean, clip), **TOL)


def test_a_column_without_spread_maps_to_zero_even_when_it_jumps():
    X = np.column_stack([np.arange(1500.0), np.where(np.arange(1500) < 1000, 1000.0, 500.0)])
    Z = OnlineStandardScaler(clip=None).partial_fit_transform(X)
    assert np.all(Z[:1001, 1] == 0.0)  # constant for 1,000 rows: 0, also at the jump to 500
    assert np.all(np.abs(Z[1001:, 1]) < 40)  # then scaled by a spread it has seen
    assert np.all(Z[:2] == 0.0)  # nothing to scale by before the second row
    assert np.all(Z[2:, 0] != 0.0)


def test_clip_bounds_every_value_and_none_does_not_clip():
    X = np.zeros((200, 1))
    X[100] = 1.0  # a rare event: the next one is 1 / std ~ 14 standard deviations out
    X[150] = 1.0
    assert OnlineStandardScaler(clip=None).partial_fit_transform(X)[150, 0] > 10
    clipped = OnlineStandardScaler().partial_fit_transform(X)
    assert clipped[150, 0] == 10.0 and np.abs(clipped).max() == 10.0
    assert OnlineStandardScaler(clip=2.5).partial_fit_transform(X)[150, 0] == 2.5


@pytest.mark.parametrize("kind", ["dense", "csr", "csc"])
def test_transform_after_the_stream_equals_standard_scaler(kind):
    X = make_stream(sparse=kind != "dense")
    Xin = X if kind == "dense" else sp.csr_matrix(X).asformat(kind)
    scaler = OnlineStandardScaler(clip=None)
    for lo in range(0, N, 7):
        scaler.partial_fit(Xin[lo : lo + 7])
    reference = StandardScaler(with_mean=kind == "dense").fit(Xin)
    np.testing.assert_allclose(scaler.mean_, reference.mean_, **TOL)
    np.testing.assert_allclose(scaler.var_, reference.var_, **TOL)
    np.testing.assert_allclose(scaler.scale_, reference.scale_, **TOL)
    assert scaler.n_samples_seen_ == reference.n_samples_seen_ == N
    Z, expected = scaler.transform(Xin), reference.transform(Xin)
    assert sp.issparse(Z) == sp.issparse(expected) and (kind == "dense" or Z.format == kind)
    constant = _is_constant_feature(reference.var_, reference.mean_, N)
    assert constant.tolist() == [False, False, False, True, False, False]
    np.testing.assert_allclose(dense(Z)[:, ~constant], dense(expected)[:, ~constant], **TOL)
    assert np.all(dense(Z)[:, constant] == 0.0)


def test_fit_transform_is_fit_then_transform_and_fit_forgets():
    X = make_stream()
    scaler = OnlineStandardScaler().partial_fit(X[:30] * 5.0)
    Z = scaler.fit_transform(X)
    assert scaler.n_samples_seen_ == N
    np.testing.assert_array_equal(Z, OnlineStandardScaler().fit(X).transform(X))


def test_without_std_only_centers_and_without_both_is_the_identity():
    X = make_stream()
    Z = OnlineStandardScaler(with_std=False, clip=None).partial_fit_transform(X)
    assert np.all(Z[0] == 0.0)  # no mean before the first row
    np.testing.assert_allclose(Z[5], X[5] - X[:5].mean(axis=0), **TOL)
    identity = OnlineStandardScaler(with_mean=False, with_std=False, clip=None)
    np.testing.assert_array_equal(identity.partial_fit_transform(X), X)


# ------------------------------------------------------------ streams and chunks
CUTS = st.lists(st.integers(1, N - 1), max_size=8, unique=True)


@pytest.mark.parametrize("kind", ["dense", "csr"])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cuts=CUTS)
def test_results_are_bit_identical_for_any_split_of_the_stream(kind, cuts):
    X = make_stream(sparse=kind == "csr")
    Xin = sp.csr_matrix(X) if kind == "csr" else X
    whole = OnlineStandardScaler()
    Z = dense(whole.partial_fit_transform(Xin))
    pieces, streamed, learnt = [], OnlineStandardScaler(), OnlineStandardScaler()
    bounds = [0, *sorted(cuts), N]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        pieces.append(dense(streamed.partial_fit_transform(Xin[lo:hi])))
        learnt.partial_fit(Xin[lo:hi])
    np.testing.assert_array_equal(np.vstack(pieces), Z)
    assert_same_state(state(whole), state(streamed))
    assert_same_state(state(whole), state(learnt))
    np.testing.assert_array_equal(dense(streamed.transform(Xin)), dense(whole.transform(Xin)))


def test_transform_uses_the_statistics_of_the_rows_learnt_and_changes_nothing():
    X = make_stream(sparse=True)
    Xs = sp.csr_matrix(X)
    Z = OnlineStandardScaler().partial_fit_transform(Xs).toarray()
    for i in (1, 2, 17, 40, N - 1):
        scaler = OnlineStandardScaler().partial_fit(Xs[:i])
        before = state(scaler)
        np.testing.assert_array_equal(scaler.transform(Xs[i]).toarray()[0], Z[i])
        np.testing.assert_array_equal(scaler.transform(X[i : i + 1])[0], Z[i])  # dense too
        assert_same_state(before, state(scaler))


def test_dense_and_sparse_rows_agree_to_rounding():
    X = make_stream(sparse=True)
    as_dense = OnlineStandardScaler(with_mean=False).partial_fit_transform(X)
    as_sparse = OnlineStandardScaler().partial_fit_transform(sp.csr_matrix(X))
    np.testing.assert_allclose(as_sparse.toarray(), as_dense, **TOL)


@pytest.mark.parametrize("kind", ["dense", "csr"])
def test_resuming_a_pickled_scaler_mid_stream_is_exact(kind):
    X = make_stream(sparse=kind == "csr")
    Xin = sp.csr_matrix(X) if kind == "csr" else X
    whole = OnlineStandardScaler()
    Z = dense(whole.partial_fit_transform(Xin))
    first = OnlineStandardScaler()
    head = dense(first.partial_fit_transform(Xin[:33]))
    resumed = pickle.loads(pickle.dumps(first))
    tail = dense(resumed.partial_fit_transform(Xin[33:]))
    np.testing.assert_array_equal(np.vstack([head, tail]), Z)
    assert_same_state(state(whole), state(resumed))


def test_the_state_is_arrays_and_plain_scalars():
    scaler = OnlineStandardScaler().partial_fit(make_stream())
    for name, value in vars(scaler).items():
        if name.endswith("_"):
            assert isinstance(value, (np.ndarray, bool, int)), name
    scaler.running_count_[0] = N + 1
    with pytest.raises(ValueError, match="running_count_"):
        scaler._check_state()


# ----------------------------------------------------------------------- merging
@pytest.mark.parametrize("kind", ["dense", "csr"])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cuts=st.lists(st.integers(1, N - 1), min_size=1, max_size=5, unique=True))
def test_merging_scalers_of_disjoint_parts_equals_one_pass(kind, cuts):
    X = make_stream(sparse=kind == "csr", seed=1)
    Xin = sp.csr_matrix(X) if kind == "csr" else X
    whole = OnlineStandardScaler().partial_fit(Xin)
    bounds = [0, *sorted(cuts), N]
    parts = [OnlineStandardScaler().partial_fit(Xin[lo:hi]) for lo, hi in zip(bounds, bounds[1:])]
    merged = parts[0]
    for part in parts[1:]:
        merged.merge(part)
    assert merged.n_samples_seen_ == N
    for name in ("mean_", "var_", "scale_"):
        np.testing.assert_allclose(getattr(merged, name), getattr(whole, name), **TOL)
    np.testing.assert_allclose(dense(merged.transform(Xin)), dense(whole.transform(Xin)), **TOL)
    # and the merged scaler continues the stream as the single pass does
    more = make_stream(20, sparse=kind == "csr", seed=2)
    more = sp.csr_matrix(more) if kind == "csr" else more
    np.testing.assert_allclose(
        dense(merged.partial_fit_transform(more)), dense(whole.partial_fit_transform(more)), **TOL
    )


def test_merge_refuses_what_cannot_be_pooled():
    X = make_stream()
    scaler = OnlineStandardScaler().fit(X)
    before = state(scaler)
    with pytest.raises(ValueError, match="6"):
        scaler.merge(OnlineStandardScaler().fit(X[:, :3]))
    with pytest.raises(ValueError, match="with_mean_"):
        scaler.merge(OnlineStandardScaler(with_mean=False).fit(X))
    with pytest.raises(TypeError, match="OnlineStandardScaler"):
        scaler.merge(StandardScaler().fit(X))
    with pytest.raises(Exception, match="not fitted"):
        scaler.merge(OnlineStandardScaler())
    assert_same_state(before, state(scaler))


# -------------------------------------------------------------- sparse and centering
def test_sparse_input_is_scaled_in_place_of_its_structure_never_centered():
    Xs = sp.csr_matrix(make_stream(sparse=True))
    scaler = OnlineStandardScaler()
    Z = scaler.partial_fit_transform(Xs)
    assert sp.issparse(Z) and Z.format == "csr" and Z.dtype == np.float64
    np.testing.assert_array_equal(Z.indptr, Xs.indptr)
    np.testing.assert_array_equal(Z.indices, Xs.indices)
    assert scaler.with_mean_ is False
    assert isinstance(scaler.transform(sp.csr_array(Xs)), sp.csr_array)
    by_columns = OnlineStandardScaler().partial_fit_transform(Xs.tocsc())
    assert by_columns.format == "csc"  # rows are still learnt in row order
    np.testing.assert_array_equal(by_columns.toarray(), Z.toarray())


def test_with_mean_auto_is_decided_on_the_first_chunk():
    X = make_stream(sparse=True)
    dense_first = OnlineStandardScaler().partial_fit(X[:10])
    assert dense_first.with_mean_ is True
    before = state(dense_first)
    with pytest.raises(ValueError, match="Cannot center sparse"):
        dense_first.partial_fit(sp.csr_matrix(X[10:]))
    with pytest.raises(ValueError, match="Cannot center sparse"):
        dense_first.transform(sp.csr_matrix(X))
    assert_same_state(before, state(dense_first))
    sparse_first = OnlineStandardScaler().partial_fit(sp.csr_matrix(X[:10]))
    sparse_first.partial_fit(X[10:])  # dense later: still not centered
    assert sparse_first.with_mean_ is False
    with pytest.raises(ValueError, match="Cannot center sparse"):
        OnlineStandardScaler(with_mean=True).partial_fit(sp.csr_matrix(X))
    sparse_first.set_params(with_mean=True)
    with pytest.raises(InvalidParameterError, match="'with_mean' parameter"):
        sparse_first.partial_fit(X)


def _bad_csr() -> sp.csr_matrix:
    bad = sp.csr_matrix(make_stream(5, sparse=True))
    bad.indices[1] = 99
    return bad


def _with(value: float) -> np.ndarray:
    X = make_stream(5)
    X[2, 1] = value
    return X


REFUSED = [
    ("NaN", lambda: _with(np.nan), "NaN"),
    ("inf", lambda: _with(np.inf), "infinity"),
    ("sparse NaN", lambda: sp.csr_matrix(_with(np.nan)), "NaN"),
    ("width", lambda: make_stream(5)[:, :4], "4 features"),
    ("bad CSR", _bad_csr, "outside"),
    ("empty", lambda: make_stream(5)[:0], "0 sample"),
    ("1-d", lambda: make_stream(5)[0], "2D array"),
]


@pytest.mark.parametrize("make_bad, message", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
@pytest.mark.parametrize("method", ["partial_fit", "partial_fit_transform", "transform"])
def test_a_refused_call_changes_nothing(make_bad, message, method):
    scaler = OnlineStandardScaler(with_mean=False).partial_fit(make_stream(20, sparse=True))
    before = state(scaler)
    with pytest.raises(ValueError, match=message):
        getattr(scaler, method)(make_bad())
    assert_same_state(before, state(scaler))
    if method != "transform" and message != "4 features":
        fresh = OnlineStandardScaler()
        with pytest.raises(ValueError, match=message):
            getattr(fresh, method)(make_bad())
        assert not [k for k in vars(fresh) if k.endswith("_")]


def test_overflowing_statistics_are_refused():
    scaler = OnlineStandardScaler().partial_fit(np.ones((3, 2)))
    before = state(scaler)
    with pytest.raises(FloatingPointError, match="not learnt"):
        scaler.partial_fit(np.array([[1e308, 1.0], [-1e308, 1.0]]))
    assert_same_state(before, state(scaler))


# ------------------------------------------------------------------- parameters
BAD_PARAMETERS = [
    ("with_mean", "yes"),
    ("with_mean", 1),
    ("with_mean", None),
    ("with_std", "auto"),
    ("with_std", 1),
    ("clip", 0.0),
    ("clip", -1.0),
    ("clip", np.inf),
    ("clip", np.nan),
    ("clip", True),
    ("clip", "10"),
]


@pytest.mark.parametrize("name, value", BAD_PARAMETERS)
def test_bad_parameters_get_one_error_naming_them(name, value):
    X = make_stream(20)
    message = f"'{name}' parameter of OnlineStandardScaler"
    for method in ("fit", "partial_fit", "partial_fit_transform", "fit_transform"):
        with pytest.raises(InvalidParameterError, match=message):
            getattr(OnlineStandardScaler(**{name: value}), method)(X)
    scaler = OnlineStandardScaler().partial_fit(X[:10])
    before = state(scaler)
    scaler.set_params(**{name: value})
    for method in ("partial_fit", "partial_fit_transform", "transform", "inverse_transform"):
        with pytest.raises(InvalidParameterError, match=message):
            getattr(scaler, method)(X[10:])
    assert_same_state(before, state(scaler))


# ------------------------------------------------------------- the rest of the API
def test_inverse_transform_undoes_transform():
    X = make_stream()
    scaler = OnlineStandardScaler(clip=None).partial_fit(X[:50])
    np.testing.assert_allclose(scaler.inverse_transform(scaler.transform(X)), X, rtol=1e-10)
    early = OnlineStandardScaler().partial_fit(X[:1])  # no spread yet: back to the mean
    np.testing.assert_array_equal(early.inverse_transform(np.zeros((1, 6))), X[:1])
    with pytest.raises(TypeError, match="dense"):
        scaler.inverse_transform(sp.csr_matrix(X))


def test_feature_names_out_and_dtypes():
    scaler = OnlineStandardScaler().fit(make_stream().astype(np.float32))
    assert scaler.get_feature_names_out().tolist() == [f"x{i}" for i in range(6)]
    names = ["a", "b", "c", "d", "e", "f"]
    assert scaler.get_feature_names_out(names).tolist() == names
    assert scaler.transform(make_stream(3).astype(np.float32)).dtype == np.float64


def test_a_scaled_stream_keeps_a_one_pass_learner_finite():
    rng = np.random.default_rng(0)
    n = 6000
    y = np.where(rng.random(n) < 0.1, 1, -1)
    X = rng.normal(size=(n, 5)) + 0.5 * y[:, None]
    X[:, 0] = X[:, 0] * 300.0 + 400.0  # one column in the hundreds
    with pytest.raises(FloatingPointError, match="diverged"):  # the papers' OPAUC
        OPAUC(column_scale=None).partial_fit(X[:500], y[:500], classes=[-1, 1])
    scaler, model = OnlineStandardScaler(), OPAUC(column_scale=None)
    for lo in range(0, n, 500):
        chunk = slice(lo, lo + 500)
        model.partial_fit(scaler.partial_fit_transform(X[chunk]), y[chunk], classes=[-1, 1])
    assert np.isfinite(model.coef_).all()
    assert roc_auc(y == 1, model.decision_function(scaler.transform(X))) > 0.8


@parametrize_with_checks([OnlineStandardScaler()])
def test_sklearn_compatible(estimator, check):
    if getattr(check, "func", check).__name__ == "check_array_api_input":
        pytest.skip("needs SCIPY_ARRAY_API; the kernels are numba/numpy only")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check(estimator)


def test_plain_rows_skip_the_general_validation_and_change_nothing(monkeypatch):
    """Once the width is known, float arrays of plainly valid rows skip scikit-learn's
    validation (the scaler's and a pipeline's): the same output and model as rows that
    take it (lists), which anything not plainly valid still does (a value of 1e200, a
    NaN, a wrong width: the usual errors)."""
    import aucstream._runtime._learning as base
    from aucstream import StreamPipeline, UnivariateOnline
    from aucstream.preprocessing import _standard

    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 4)) * [1.0, 10.0, 100.0, 0.1]
    y = np.where(X[:, 0] + rng.normal(size=60) > 0, 1, -1)
    calls = []
    for module in (_standard, base):
        original = module.validate_data
        monkeypatch.setattr(
            module, "validate_data", lambda *a, f=original, **k: calls.append(1) or f(*a, **k)
        )
    plain, listed = OnlineStandardScaler(), OnlineStandardScaler()
    plain_pipe = StreamPipeline(OnlineStandardScaler(), UnivariateOnline(eta=2**-4))
    listed_pipe = StreamPipeline(OnlineStandardScaler(), UnivariateOnline(eta=2**-4))
    for model in (plain, listed):
        model.partial_fit(X[:5])
    for model in (plain_pipe, listed_pipe):
        model.partial_fit(X[:5], y[:5])
    calls.clear()
    for i in range(5, 60):
        np.testing.assert_array_equal(
            plain.partial_fit_transform(X[i : i + 1]),
            listed.partial_fit_transform(X[i : i + 1].tolist()),
        )
        plain_pipe.learn_one(X[i], y[i])
        listed_pipe.partial_fit(X[i : i + 1].tolist(), [int(y[i])])
    # only the listed calls were validated: the scaler's, and the pipeline's (whose
    # scaler then receives validated float64 rows)
    assert len(calls) == 55 * 2
    assert_same_state(snapshot(plain), snapshot(listed))
    np.testing.assert_array_equal(plain_pipe.coef_, listed_pipe.coef_)
    for bad, scaler_error, pipe_error in [
        (1e200, (FloatingPointError, "overflowed"), (ValueError, "too large")),
        (np.nan, (ValueError, "NaN"), (ValueError, "NaN")),
    ]:
        row = X[:1].copy()
        row[0, 2] = bad
        with pytest.raises(scaler_error[0], match=scaler_error[1]):
            plain.partial_fit_transform(row)
        with pytest.raises(pipe_error[0], match=pipe_error[1]):
            plain_pipe.partial_fit(row, y[:1])
    with pytest.raises(ValueError, match="4 features"):
        plain.partial_fit_transform(X[:1, :3])
    assert_same_state(snapshot(plain), snapshot(listed))


def _malformed_csr():
    outside = sp.csr_matrix((np.ones(2), np.array([0, 9]), np.array([0, 1, 2])), shape=(2, 6))
    falling = sp.csr_matrix((2, 6))
    falling.indptr = np.array([0, 2, 1])  # (set after scipy's own checks)
    falling.indices, falling.data = np.array([0, 1]), np.ones(2)
    return {"outside": outside, "falling": falling}


@pytest.mark.parametrize("case", ["outside", "falling"])
@pytest.mark.parametrize(
    "call",
    [
        lambda X: UnitNormalizer().fit(X),
        lambda X: UnitNormalizer().partial_fit(X),
        lambda X: UnitNormalizer().fit(np.ones((2, 6))).transform(X),
        lambda X: RandomFourierFeatures(n_components=8, random_state=0).fit(X),
        lambda X: (
            RandomFourierFeatures(n_components=8, random_state=0).fit(np.ones((3, 6))).transform(X)
        ),
    ],
    ids=[
        "normalizer-fit",
        "normalizer-partial_fit",
        "normalizer-transform",
        "rff-fit",
        "rff-transform",
    ],
)
def test_malformed_sparse_input_is_refused_before_compiled_code_reads_it(call, case):
    """scipy and scikit-learn's compiled routines read ``indptr`` and ``indices`` as
    they are: an index outside the width or a decreasing ``indptr`` is refused by name
    first (before: a result read from outside the arrays)."""
    with pytest.raises(ValueError, match="index 9 outside|indptr is not a non-decreasing"):
        call(_malformed_csr()[case])
