"""Large mostly-zero state arrays are saved sparse: the file grows with the non-zeros,
and loading gives the same learner bit for bit (a -0.0 stays -0.0), with the same strict
checks as a dense array."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp

from aucstream import FTRLAUC, OPAUC, SOLAML1, SPAM, load_model, persistence, save_model


def wide_stream(n: int, d: int, k: int = 50, seed: int = 0):
    """``n`` unit-norm rows of ``k`` non-zeros out of ``d``, positive rate 0.05."""
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), k)
    cols = rng.integers(0, d, size=n * k)
    X = sp.csr_matrix((rng.normal(size=n * k) / np.sqrt(k), (rows, cols)), shape=(n, d))
    y = np.where(rng.random(n) < 0.05, 1, -1)
    y[:2] = [1, -1]
    return X, y


def state_arrays(model) -> dict[str, np.ndarray]:
    return {k: v for k, v in vars(model).items() if isinstance(v, np.ndarray)}


def members(path) -> list[str]:
    with zipfile.ZipFile(path) as z:
        return z.namelist()


def meta(path) -> dict:
    with zipfile.ZipFile(path) as z:
        return json.loads(str(np.load(io.BytesIO(z.read("__meta__.npy")))))


def assert_same_bits(a, b):
    left, right = state_arrays(a), state_arrays(b)
    assert sorted(left) == sorted(right)
    for key in left:
        assert left[key].dtype == right[key].dtype and left[key].shape == right[key].shape, key
        assert left[key].tobytes() == right[key].tobytes(), key


def dense_save(model, path, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(persistence, "SPARSE_MIN_SIZE", 1 << 62)
        return save_model(model, path)


def test_wide_ftrl_file_grows_with_the_non_zeros(tmp_path, monkeypatch):
    d = 10**6
    X, y = wide_stream(20, d)
    model = FTRLAUC().partial_fit(X, y)
    nnz = sum(np.count_nonzero(v) for v in state_arrays(model).values())
    assert 0 < nnz < 0.01 * model.zn_.size
    sparse_file = save_model(model, tmp_path / "sparse")
    dense_file = dense_save(model, tmp_path / "dense", monkeypatch)
    assert "state/zn_.indices.npy" in members(sparse_file)
    assert "state/zn_.npy" in members(dense_file)
    assert meta(sparse_file)["format_version"] == 2
    assert meta(dense_file)["format_version"] == 1  # readable by older versions
    # in proportion to the non-zeros: 8 bytes a value and 4 an index before compression,
    # and some kilobytes of metadata; the dense file (compressed) also pays for the
    # 2 x 10^6 zeros of zn_
    bound = 10 * nnz + 4096
    assert sparse_file.stat().st_size <= bound < dense_file.stat().st_size
    loaded, dense = load_model(sparse_file), load_model(dense_file)
    assert_same_bits(loaded, model)
    assert_same_bits(dense, model)
    more_X, more_y = wide_stream(30, d, seed=1)
    for m in (model, loaded, dense):
        m.partial_fit(more_X, more_y)
    assert_same_bits(loaded, model)
    assert_same_bits(dense, model)
    assert np.array_equal(loaded.decision_function(more_X), model.decision_function(more_X))


@pytest.mark.parametrize(
    "make",
    [
        lambda: FTRLAUC(),
        lambda: FTRLAUC(reference_order=True),
        lambda: SPAM(),
        lambda: SOLAML1(),
    ],
    ids=["FTRLAUC", "FTRLAUC-reference-order", "SPAM", "SOLAML1"],
)
def test_sparse_learners_round_trip_bit_for_bit(make, tmp_path):
    X, y = wide_stream(40, 20000, k=10)
    model = make().partial_fit(X, y)
    path = save_model(model, tmp_path / "m")
    assert any(name.endswith(".indices.npy") for name in members(path))
    loaded = load_model(path)
    assert_same_bits(loaded, model)
    assert np.array_equal(loaded.decision_function(X), model.decision_function(X))
    X2, y2 = wide_stream(40, 20000, k=10, seed=2)
    model.partial_fit(X2, y2)
    loaded.partial_fit(X2, y2)
    assert_same_bits(loaded, model)


def test_negative_zero_and_subnormals_keep_their_bits(tmp_path):
    X, y = wide_stream(10, 5000, k=5)
    model = FTRLAUC().partial_fit(X, y)
    untouched = np.flatnonzero(~model.zn_.any(axis=1))[:3]
    model.zn_[untouched[0], 0] = -0.0
    model.zn_[untouched[1], 1] = 5e-324  # the smallest subnormal
    model.zn_[untouched[2], 0] = -5e-324
    path = save_model(model, tmp_path / "m")
    with zipfile.ZipFile(path) as z:
        indices = np.load(io.BytesIO(z.read("state/zn_.indices.npy")))
    assert 2 * untouched[0] in indices  # -0.0 is stored: its sign bit is set
    loaded = load_model(path)
    assert np.signbit(loaded.zn_[untouched[0], 0])
    assert_same_bits(loaded, model)


def test_small_or_dense_arrays_stay_dense(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 5))
    y = np.where(X[:, 0] > 0, 1, -1)
    path = save_model(OPAUC().fit(X, y), tmp_path / "small")
    assert "state/coef_.npy" in members(path) or "state/w_.npy" in members(path)
    X, y = wide_stream(300, 4000, k=200)  # most of the coordinates are touched
    model = SPAM().partial_fit(X, y)
    assert np.count_nonzero(model.v_) > 0.1 * model.v_.size
    assert "state/v_.npy" in members(save_model(model, tmp_path / "dense"))


def _tampered(path, tmp_path, name, edit):
    with zipfile.ZipFile(path) as z:
        raw = {n: z.read(n) for n in z.namelist()}
    raw = edit(raw)
    out = tmp_path / f"{name}.npz"
    with zipfile.ZipFile(out, "w") as z:
        for member, data in raw.items():
            z.writestr(member, data)
    return out


def _npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def _with_meta(raw, change):
    doc = json.loads(str(np.load(io.BytesIO(raw["__meta__.npy"]))))
    change(doc["state"]["zn_"])
    return {**raw, "__meta__.npy": _npy(np.array(json.dumps(doc)))}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    X, y = wide_stream(20, 5000, k=5)
    path = save_model(FTRLAUC().partial_fit(X, y), tmp_path_factory.mktemp("s") / "m.npz")
    with zipfile.ZipFile(path) as z:
        indices = np.load(io.BytesIO(z.read("state/zn_.indices.npy")))
        values = np.load(io.BytesIO(z.read("state/zn_.values.npy")))
    return path, indices, values


I, V = "state/zn_.indices.npy", "state/zn_.values.npy"
TAMPERINGS = {
    "unsorted": (lambda i, v: {I: _npy(i[::-1].copy())}, "strictly increasing"),
    "repeated": (lambda i, v: {I: _npy(np.concatenate([i[:1], i[:-1]]))}, "strictly increasing"),
    "negative": (lambda i, v: {I: _npy(np.concatenate([[-1], i[1:]]).astype(i.dtype))}, "in \\["),
    "outside": (
        lambda i, v: {I: _npy(np.concatenate([i[:-1], [10000]]).astype(i.dtype))},
        "in \\[",
    ),
    "float-indices": (lambda i, v: {I: _npy(i.astype(np.float64))}, "not flat positions"),
    "2d-indices": (lambda i, v: {I: _npy(i.reshape(1, -1))}, "not flat positions"),
    "short-values": (lambda i, v: {V: _npy(v[:-1])}, "one per index"),
    "values-dtype": (lambda i, v: {V: _npy(v.astype(np.float32))}, "one per index"),
    "too-many": (
        lambda i, v: {I: _npy(np.arange(10001, dtype=np.int64)), V: _npy(np.ones(10001))},
        "positions in 10000",
    ),
    "no-values": (lambda i, v: {V: None}, "missing from the archive"),
    "nan-value": (lambda i, v: {V: _npy(np.where(np.arange(v.size) == 0, np.nan, v))}, "NaN"),
}


@pytest.mark.parametrize("case", sorted(TAMPERINGS))
def test_tampered_sparse_members_are_refused_by_name(case, saved, tmp_path):
    path, indices, values = saved
    edit, message = TAMPERINGS[case]

    def apply(raw):
        for member, data in edit(indices, values).items():
            if data is None:
                raw.pop(member)
            else:
                raw[member] = data
        return raw

    with pytest.raises(ValueError, match=message) as error:
        load_model(_tampered(path, tmp_path, case, apply))
    assert "state/zn_" in str(error.value)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda s: s.update(shape=[5001, 2]), "shape"),
        (lambda s: s.update(shape=[5000]), "shape"),
        (lambda s: s.update(shape="big"), "not a list of sizes"),
        (lambda s: s.update(shape=[-1, 2]), "not a list of sizes"),
        (lambda s: s.update(dtype="<f4"), "dtype"),
        (lambda s: s.update(dtype="O"), "not a numeric dtype"),
        (lambda s: s.update(dtype=[1]), "not a numeric dtype"),
        (lambda s: s.update(dtype="no such type"), "not a numeric dtype"),
        (lambda s: s.update(kind="array"), "belong to no state member"),
    ],
)
def test_tampered_sparse_entries_are_refused_by_name(change, message, saved, tmp_path):
    path = saved[0]
    bad = _tampered(path, tmp_path, "meta", lambda raw: _with_meta(raw, change))
    with pytest.raises(ValueError, match=message) as error:
        load_model(bad)
    assert "state/zn_" in str(error.value)


def test_an_extra_sparse_member_is_refused(saved, tmp_path):
    path = saved[0]
    bad = _tampered(path, tmp_path, "extra", lambda raw: {**raw, "state/evil_.indices.npy": raw[I]})
    with pytest.raises(ValueError, match="belong to no state member"):
        load_model(bad)


def test_the_dense_size_counts_against_the_memory_budget(saved):
    import aucstream

    with aucstream.config_context(memory_budget=100_000):  # zn_ is 80,000 bytes dense
        with pytest.raises(ValueError, match="memory budget"):
            load_model(saved[0])
