"""``OPAUC(dtype="float32")``: float32 storage of the summaries' large arrays.

The float32 model keeps the float64 model's AUC (within 1e-3, on a9a and a generated
stream), stores its d x d / d x tau arrays in half the bytes, is chunk invariant bit for
bit, saves, loads and resumes exactly, and is refused where it cannot work: an unknown
dtype, the "sparse" summary, a tampered file, a merge with a float64 model.
"""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import a9a_normalized, assert_same_state, make_stream, snapshot, state_bytes
from sklearn.metrics import roc_auc_score

from aucstream import OPAUC, AdaOAM, load_model, save_model
from aucstream import covariance as cov
from aucstream._params import InvalidParameterError

KINDS = ["full", "randomized", "hash", "fd"]
#: The large array of each kind's summaries.
BIG = {"full": "scatter_", "randomized": "sketch_", "hash": "sketch_", "fd": "sketch_"}


def _model(kind: str, dtype: str = "float32", **params) -> OPAUC:
    params = {"eta": 2**-6, "sketch_size": 8, "random_state": 0, **params}
    return OPAUC(covariance=kind, dtype=dtype, **params)


def _float_arrays(obj, path="model"):
    """(path, array) of every floating-point array reachable from a learner."""
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind == "f":
            yield path, obj
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from _float_arrays(v, f"{path}[{i}]")
    elif hasattr(obj, "__dict__") and not isinstance(obj, np.random.Generator):
        for k, v in vars(obj).items():
            yield from _float_arrays(v, f"{path}.{k}")


# ------------------------------------------------------------------ accuracy
@pytest.mark.parametrize("kind", KINDS)
def test_float32_auc_is_the_float64_auc_on_a_generated_stream(kind):
    X, y = make_stream(6000, 40, seed=3)
    X, y, Xt, yt = X[:4000], y[:4000], X[4000:], y[4000:]
    X64, X32 = (_model(kind, dtype).fit(X, y) for dtype in ("float64", "float32"))
    auc64 = roc_auc_score(yt, X64.decision_function(Xt))
    auc32 = roc_auc_score(yt, X32.decision_function(Xt))
    assert auc64 > 0.8
    assert abs(auc32 - auc64) < 1e-3


@pytest.mark.parametrize("kind", KINDS)
def test_float32_auc_is_the_float64_auc_on_a9a(kind):
    X, y, Xt, yt = a9a_normalized()
    aucs = []
    for dtype in ("float64", "float32"):
        params = {"eta": 2**-4, "lam": 2**-10, "sketch_size": 20, "centering": "exact"}
        model = _model(kind, dtype, **params).fit(X, y)
        aucs.append(roc_auc_score(yt, model.decision_function(Xt)))
    assert aucs[0] > 0.85
    assert abs(aucs[1] - aucs[0]) < 1e-3


# --------------------------------------------------------------------- state
@pytest.mark.parametrize("kind", KINDS)
def test_only_the_large_arrays_are_float32_and_the_state_is_about_half(kind):
    X, y = make_stream(300, 400, seed=1)
    # (column_scale=None: no O(d) scale beside the summaries, which halve)
    m64, m32 = (
        _model(kind, dtype, sketch_size=20, column_scale=None).fit(X, y)
        for dtype in ("float64", "float32")
    )
    for c, s in enumerate(m32.stats_):
        assert s.dtype == np.float32
        assert getattr(s, BIG[kind]).dtype == np.float32
        others = [p for p, a in _float_arrays(s) if a.dtype != np.float64]
        assert others == [f"model.{BIG[kind]}"], others
        assert m64.stats_[c].dtype == np.float64
    assert m32.w_.dtype == np.float64
    # the large arrays take half their bytes and nothing else changes
    saved = state_bytes(m64.stats_) - state_bytes(m32.stats_)
    assert saved == sum(getattr(s, BIG[kind]).nbytes for s in m32.stats_)
    assert 0.5 <= state_bytes(m32.stats_) / state_bytes(m64.stats_) < 0.6
    est32, est64 = m32._state_nbytes(400), m64._state_nbytes(400)
    assert 0.5 < est32 / est64 < 0.6
    # the estimate counts the arrays the summaries allocate
    new = cov.make_covariance(kind, 400, 20, dtype=np.float32)
    assert state_bytes(new) == cov._nbytes.summary_nbytes(kind, 400, 20, itemsize=4)


@pytest.mark.parametrize("kind", KINDS)
def test_float32_fit_is_any_partial_fit_split_and_resumes_exactly(kind, tmp_path, monkeypatch):
    monkeypatch.setattr(OPAUC, "_rebase_every", 90)  # re-base the sketches within the stream
    X, y = make_stream(500, 12, seed=2, sparsity=0.3)
    whole = _model(kind).fit(X, y)
    for cuts in ((1, 250), (37, 38, 400), (499,)):
        split = _model(kind)
        for lo, hi in zip((0, *cuts), (*cuts, 500)):
            split.partial_fit(X[lo:hi], y[lo:hi], classes=[-1, 1])
        assert_same_state(snapshot(vars(whole)), snapshot(vars(split)))
    # save half way, load, go on: the same model as one uninterrupted run
    half = _model(kind).partial_fit(X[:250], y[:250], classes=[-1, 1])
    loaded = load_model(save_model(half, tmp_path / "half.npz"))
    assert loaded.stats_[0].dtype == np.float32
    assert_same_state(snapshot(vars(half)), snapshot(vars(loaded)))
    loaded.partial_fit(X[250:], y[250:])
    assert_same_state(snapshot(vars(whole)), snapshot(vars(loaded)))
    unpickled = pickle.loads(pickle.dumps(half))
    unpickled.partial_fit(X[250:], y[250:])
    assert_same_state(snapshot(vars(whole)), snapshot(vars(unpickled)))


@pytest.mark.parametrize("kind", ["full", "fd"])
def test_float32_dense_and_sparse_input_agree(kind):
    X, y = make_stream(400, 15, seed=4, sparsity=0.5)
    dense = _model(kind).fit(X, y)
    csr = _model(kind).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(csr.w_, dense.w_, rtol=1e-5, atol=1e-9)


def _learnt(model) -> dict:
    return {k: v for k, v in vars(model).items() if k.endswith("_")}


def test_float64_is_the_default_below_a_hundred_thousand_features_and_unchanged():
    X, y = make_stream(200, 10)
    for kind in KINDS:
        default = OPAUC(covariance=kind, sketch_size=4, random_state=0).fit(X, y)
        explicit = OPAUC(covariance=kind, sketch_size=4, random_state=0, dtype="float64")
        explicit.fit(X, y)
        assert default.dtype == "auto"
        assert all(s.dtype == np.float64 for s in default.stats_)
        assert_same_state(snapshot(_learnt(default)), snapshot(_learnt(explicit)))


@pytest.mark.parametrize("kind", ["randomized", "hash", "fd", "sparse"])
def test_auto_is_float32_for_the_sketches_from_a_hundred_thousand_features(kind):
    """``dtype="auto"`` (the default): float32 sketches from 10^5 features on, the
    same model as ``dtype="float32"``; float64 on request; "sparse" stays float64."""
    from aucstream.covariance import AUTO_FLOAT32_FROM

    rng = np.random.default_rng(0)
    d, n = AUTO_FLOAT32_FROM, 60
    X = sp.random(n, d, density=20 / d, format="csr", random_state=rng)
    y = np.arange(n) % 3 == 0
    params = dict(covariance=kind, sketch_size=4, random_state=0)
    auto = OPAUC(**params).fit(X, y)
    expected = np.float64 if kind == "sparse" else np.float32
    assert all(s.dtype == expected for s in auto.stats_)
    assert auto._state_nbytes(d) == OPAUC(**params, dtype=expected.__name__)._state_nbytes(d)
    if kind != "sparse":
        same = OPAUC(**params, dtype="float32").fit(X, y)
        assert_same_state(snapshot(_learnt(auto)), snapshot(_learnt(same)))
        wide = OPAUC(**params, dtype="float64").fit(X, y)
        assert all(s.dtype == np.float64 for s in wide.stats_)
    small = OPAUC(**params).fit(X[:, : d - 1], y)
    assert all(s.dtype == np.float64 for s in small.stats_)


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize("dtype", ["float16", "float", np.float32, "FLOAT32", None])
def test_an_invalid_dtype_is_refused_by_name(dtype):
    X, y = make_stream()
    with pytest.raises(InvalidParameterError, match="The 'dtype' parameter of OPAUC"):
        OPAUC(dtype=dtype).fit(X, y)


def test_sparse_refuses_float32_and_names_the_kinds_that_take_it():
    X, y = make_stream()
    model = OPAUC(covariance="sparse", dtype="float32")
    with pytest.raises(InvalidParameterError, match=r"'dtype'.*'float64' with covariance='spa"):
        model.fit(X, y)
    with pytest.raises(InvalidParameterError, match=r"'full', 'randomized', 'fd', 'hash'"):
        model.partial_fit(X, y, classes=[-1, 1])
    assert not hasattr(model, "w_")
    with pytest.raises(ValueError, match="not supported by the 'sparse' summary"):
        cov.make_covariance("sparse", 5, 3, dtype=np.float32)
    with pytest.raises(ValueError, match="dtype must be one of"):
        cov.FullCovariance(5, dtype=np.int32)


def _with_member_as(path, key, dtype, out) -> None:
    """Write ``out``: the model file ``path`` with its member ``key`` cast to ``dtype``."""
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    arrays[key] = arrays[key].astype(dtype)
    np.savez(out, **arrays)


@pytest.mark.parametrize("kind", KINDS)
def test_a_tampered_dtype_is_refused_on_load(kind, tmp_path):
    X, y = make_stream(200, 10, seed=5)
    path = save_model(_model(kind).fit(X, y), tmp_path / "m.npz")
    key = f"state/stats_/1/{BIG[kind]}"
    _with_member_as(path, key, np.float64, tmp_path / "bad.npz")
    with pytest.raises(ValueError, match=f"{key}: dtype float64, expected float32"):
        load_model(tmp_path / "bad.npz")
    # and a float32 array in a float64 model's file
    path = save_model(_model(kind, "float64").fit(X, y), tmp_path / "m64.npz")
    _with_member_as(path, key, np.float32, tmp_path / "bad64.npz")
    with pytest.raises(ValueError, match=f"{key}: dtype float32, expected float64"):
        load_model(tmp_path / "bad64.npz")
    # a float32 file whose parameters say float64, or "sparse" with float32
    path = save_model(_model(kind).fit(X, y), tmp_path / "m32.npz")
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(str(arrays["__meta__"]))
    meta["params"]["dtype"] = "float64"
    arrays["__meta__"] = np.array(json.dumps(meta))
    np.savez(tmp_path / "params64.npz", **arrays)
    with pytest.raises(ValueError, match=f"{BIG[kind]}: dtype float32, expected float64"):
        load_model(tmp_path / "params64.npz")
    meta["params"].update(dtype="float32", covariance="sparse")
    arrays["__meta__"] = np.array(json.dumps(meta))
    np.savez(tmp_path / "sparse32.npz", **arrays)
    with pytest.raises(ValueError, match="'dtype' parameter of OPAUC must be 'float64' with"):
        load_model(tmp_path / "sparse32.npz")


@pytest.mark.parametrize("kind", KINDS)
def test_merge_keeps_float32_and_refuses_mixed_precision(kind):
    X, y = make_stream(400, 10, seed=6)
    a = _model(kind, random_state=1).fit(X[:200], y[:200])
    b = _model(kind, random_state=2).fit(X[200:], y[200:])
    a64 = _model(kind, "float64", random_state=1).fit(X[:200], y[:200])
    before = snapshot(vars(a64))
    with pytest.raises(ValueError, match=r"parameters differ: \['dtype'\]"):
        a64.merge(b)
    assert_same_state(before, snapshot(vars(a64)))
    with pytest.raises(ValueError, match="of dtype float64 with one of dtype float32"):
        a64.stats_[0].merge(b.stats_[0])
    a.merge(b)
    assert all(s.dtype == np.float32 for s in a.stats_)
    assert a.n_samples_seen_ == 400


@pytest.mark.parametrize("kind", KINDS)
def test_from_statistics_takes_float32_summaries_of_its_dtype(kind):
    X, y = make_stream(600, 8, seed=7)
    lam = 2**-4
    solved = {}
    for dtype in ("float64", "float32"):
        stats = [cov.make_covariance(kind, 8, 6, dtype=dtype) for _ in range(2)]
        for c, s in enumerate(stats):
            rows = X[y == (1 if c else -1)]
            s.update(rows) if kind in ("full", "fd") else s.update(rows, rng=c)
        solved[dtype] = cov.solve_from_statistics(*stats, lam)
        model = OPAUC(covariance=kind, sketch_size=6, lam=lam, dtype=dtype)
        model.from_statistics(*stats, classes=[-1, 1])
        np.testing.assert_array_equal(model.w_, solved[dtype])
        other = "float32" if dtype == "float64" else "float64"
        with pytest.raises(ValueError, match=f"neg summary stores {dtype}, but dtype='{other}'"):
            OPAUC(covariance=kind, sketch_size=6, dtype=other).from_statistics(
                *stats, classes=[-1, 1]
            )
    np.testing.assert_allclose(solved["float32"], solved["float64"], rtol=1e-4, atol=1e-6)


def test_float32_divergence_is_detected_and_changes_nothing():
    X, y = make_stream(200, 6, seed=8)
    model = _model("full", eta=2**-8).partial_fit(X[:100], y[:100], classes=[-1, 1])
    before = snapshot(vars(model))
    with pytest.raises(FloatingPointError):
        model.partial_fit(X[100:] * 1e20, y[100:])
    assert_same_state(before, snapshot(vars(model)))


# -------------------------------------------------------------------- AdaOAM
def test_adaoam_float32_keeps_the_auc_and_halves_the_scatters():
    X, y, Xt, yt = a9a_normalized()
    models = {dtype: AdaOAM(dtype=dtype).fit(X, y) for dtype in ("float64", "float32")}
    aucs = {k: roc_auc_score(yt, m.decision_function(Xt)) for k, m in models.items()}
    assert aucs["float64"] > 0.85
    assert abs(aucs["float32"] - aucs["float64"]) < 1e-3
    m32, m64 = models["float32"], models["float64"]
    assert [s.scatter_.dtype for s in m32.stats_] == [np.float32, np.float32]
    assert m32.w_.dtype == m32.sq_grad_sum_.dtype == np.float64
    saved = state_bytes(m64.stats_) - state_bytes(m32.stats_)
    assert saved == sum(s.scatter_.nbytes for s in m32.stats_)
    assert m32._state_nbytes(123) < 0.6 * m64._state_nbytes(123)


def test_adaoam_float32_is_chunk_invariant_saves_and_refuses_mixing(tmp_path):
    X, y = make_stream(400, 10, seed=9)
    whole = AdaOAM(dtype="float32", random_state=0).fit(X, y)
    split = AdaOAM(dtype="float32", random_state=0)
    for lo, hi in ((0, 1), (1, 150), (150, 400)):
        split.partial_fit(X[lo:hi], y[lo:hi], classes=[-1, 1])
    assert_same_state(snapshot(vars(whole)), snapshot(vars(split)))
    half = AdaOAM(dtype="float32", random_state=0).partial_fit(X[:200], y[:200], classes=[-1, 1])
    loaded = load_model(save_model(half, tmp_path / "a.npz"))
    loaded.partial_fit(X[200:], y[200:])
    assert_same_state(snapshot(vars(whole)), snapshot(vars(loaded)))
    with pytest.raises(ValueError, match=r"parameters differ: \['dtype'\]"):
        AdaOAM().fit(X, y).merge(whole)
    with pytest.raises(InvalidParameterError, match="The 'dtype' parameter of AdaOAM"):
        AdaOAM(dtype="float16").fit(X, y)


@pytest.mark.parametrize("params", [{}, {"covariance": "randomized", "sketch_size": 4}])
def test_the_dense_sparse_check_reads_float32_at_its_precision(params):
    """check_dense_and_sparse_input_give_the_same_model on float32 summaries: dense
    and CSR rows sum in other orders, so the models agree to float32's rounding (the
    check's float64 tolerance, 1e-10, refused OPAUC(dtype="float32"))."""
    from aucstream.checks import check_dense_and_sparse_input_give_the_same_model

    check_dense_and_sparse_input_give_the_same_model(OPAUC(dtype="float32", **params))
