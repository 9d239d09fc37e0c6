"""FTRLAUC (Zhou, Ying and Skiena, ICDM 2020): the kernel against a plain numpy
recomputation of ZYS Alg. 1, dense = sparse, the battery, sparsity, and one pass of
a9a."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import a9a_normalized
from sklearn.exceptions import NotFittedError

from aucstream import FTRLAUC, SPAM, load_model, save_model
from aucstream.checks import check_estimator
from aucstream.metrics import roc_auc


def brute_force(X, y, gamma, l1, l2, beta, floor=None):
    """ZYS Alg. 1 in numpy over dense rows, every coordinate recomputed each step from
    (z, n) with n the plain sum of squared gradients; returns the prequential scores
    and the final weights. With a ``floor``, on the columns in their running scale
    (the module docstring's ``column_scale``): example t scored on x / max(s_{t-1},
    floor), learnt on x / max(s_t, floor) (0 where the divisor is 0), the weights
    returned in the raw columns' units."""
    d = X.shape[1]
    z, n, s_max = np.zeros(d), np.zeros(d), np.zeros(d)
    a_hat = b_hat = 0.0
    t = pos = 0
    scores = []

    def weights():
        with np.errstate(invalid="ignore", divide="ignore"):  # 0/0 where z = 0 (beta = 0)
            w = -(z - np.sign(z) * l1) / ((beta + np.sqrt(n)) / gamma + l2)
        w[np.abs(z) <= l1] = 0.0
        return w

    def in_scale(x):
        if floor is None:
            return x
        c = np.maximum(s_max, floor)
        return np.divide(x, c, out=np.zeros(d), where=c > 0)

    for x, label in zip(X, y):
        w = weights()
        scores.append(float(w @ in_scale(x)))
        s_max = np.maximum(s_max, np.abs(x))
        x = in_scale(x)
        s = float(w @ x)
        p = pos / t if t else 0.5
        if label > 0:
            g = 2 * (1 - p) * (s - b_hat - 1) * x
        else:
            g = 2 * p * (s - a_hat + 1) * x
        sigma = (np.sqrt(n + g * g) - np.sqrt(n)) / gamma
        z += g - sigma * w
        n += g * g
        t += 1
        if label > 0:
            pos += 1
            a_hat += (s - a_hat) / pos
        else:
            b_hat += (s - b_hat) / (t - pos)
    return np.array(scores), np.ravel(in_scale(weights()))


def sparse_stream(n=300, d=40, density=0.2, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=rng, format="csr")
    X.data = rng.normal(size=X.data.size)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.diags(1.0 / np.maximum(norms, 1e-12)) @ X
    truth = rng.normal(size=d)
    y = np.where(X @ truth + 0.3 * rng.normal(size=n) > 0, 1, -1)
    return X.tocsr(), y


@pytest.mark.parametrize(
    "params",
    [
        {"gamma": 0.5, "l1": 0.1, "l2": 0.0, "beta": 1.0},
        {"gamma": 2.0, "l1": 0.01, "l2": 0.3, "beta": 0.5},
        {"gamma": 0.1, "l1": 0.0, "l2": 0.0, "beta": 0.0},
    ],
)
def test_kernel_matches_brute_force(params):
    X, y = sparse_stream()
    ref_scores, ref_w = brute_force(X.toarray(), y, **params)
    model = FTRLAUC(**params).fit(X, y)  # one kernel call
    np.testing.assert_allclose(model.coef_.ravel(), ref_w, rtol=1e-12, atol=1e-12)
    # the score of each example before it is learnt (the kernel scores with the
    # weights recomputed from (z, n): the model's own coef_ at that point)
    one = FTRLAUC(**params).partial_fit(X[:1], y[:1], classes=[-1, 1])
    pre = []
    for i in range(1, X.shape[0]):
        pre.append(float(X[i].toarray().ravel() @ one.coef_.ravel()))
        one.partial_fit(X[i : i + 1], y[i : i + 1])
    np.testing.assert_allclose(pre, ref_scores[1:], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(one.coef_, model.coef_)


@pytest.mark.parametrize("column_scale, floor", [("max_abs_1", 1.0), ("max_abs", 0.0)])
def test_the_running_scale_matches_brute_force(column_scale, floor):
    """Columns whose maxima cross 1 along the stream (rows scaled by 0.2 to 3): with
    "max_abs_1" a maximum that grows below 1 leaves the divisor (the kernel takes the
    score again only when a divisor moved), one that passes 1 moves it."""
    X, y = sparse_stream(seed=3)
    X = sp.diags(np.random.default_rng(3).uniform(0.2, 3.0, X.shape[0])) @ X
    dense = X.toarray()
    ref_scores, ref_w = brute_force(dense, y, 0.5, 0.1, 0.0, 1.0, floor)
    model = FTRLAUC(l1=0.1, column_scale=column_scale)
    pre = []
    for i in range(X.shape[0]):
        if i:
            pre.append(float(model.score_samples(X[i])[0]))
        model.partial_fit(X[i], y[i : i + 1], classes=[-1, 1])
    np.testing.assert_allclose(pre, ref_scores[1:], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.coef_.ravel(), ref_w, rtol=1e-12, atol=1e-12)
    whole = FTRLAUC(l1=0.1, column_scale=column_scale).fit(X, y)
    np.testing.assert_array_equal(whole.coef_, model.coef_)


def test_dense_equals_sparse():
    X, y = sparse_stream(seed=1)
    a = FTRLAUC(l1=0.05).fit(X, y)
    b = FTRLAUC(l1=0.05).fit(X.toarray(), y)
    np.testing.assert_allclose(a.coef_.ravel(), b.coef_.ravel(), rtol=1e-12, atol=1e-14)


def test_battery():
    check_estimator(FTRLAUC(), sklearn_checks=False)


def test_save_load_resume_bit_for_bit(tmp_path):
    X, y = sparse_stream(seed=2)
    whole = FTRLAUC().fit(X, y)
    half = FTRLAUC().partial_fit(X[:150], y[:150], classes=[-1, 1])
    save_model(half, tmp_path / "m.json")
    resumed = load_model(tmp_path / "m.json").partial_fit(X[150:], y[150:])
    np.testing.assert_array_equal(resumed.coef_, whole.coef_)
    np.testing.assert_array_equal(resumed.zn_, whole.zn_)


def test_l1_gives_zeros_and_sparsity_counts_them():
    X, y = sparse_stream(n=400, d=200, density=0.05, seed=3)
    model = FTRLAUC(l1=2.0).fit(X, y)
    assert model.sparsity_ == np.mean(model.coef_ == 0.0)
    assert model.sparsity_ >= 0.5
    assert model.score(X, y) > 0.85
    assert FTRLAUC(l1=0.0).fit(X, y).sparsity_ < model.sparsity_
    with pytest.raises(NotFittedError):
        FTRLAUC().sparsity_  # noqa: B018


@pytest.mark.parametrize("name, bad", [("l1", -0.1), ("gamma", 0.0), ("l1", np.nan)])
def test_bad_parameters_refused_before_state(name, bad):
    X, y = sparse_stream()
    model = FTRLAUC().fit(X, y)
    before = model.zn_.copy()
    model.set_params(**{name: bad})
    with pytest.raises(ValueError, match=name):
        model.partial_fit(X, y)
    np.testing.assert_array_equal(model.zn_, before)


def test_state_is_o_d():
    X, y = sparse_stream(d=1000, density=0.01)
    model = FTRLAUC().fit(X, y)
    assert model.zn_.shape == (1000, 2)


def test_merge_is_unsupported():
    X, y = sparse_stream()
    a, b = FTRLAUC().fit(X[:150], y[:150]), FTRLAUC().fit(X[150:], y[150:])
    with pytest.raises(NotImplementedError):
        a.merge(b)


@pytest.mark.slow
def test_auc_on_a9a():
    """One pass over a9a (unit rows) at the defaults: about 0.897, where
    SGDClassifier(log_loss) reaches about 0.901 (docs/results/highdim_bench.md)."""
    X, y, Xt, yt = a9a_normalized()
    model = FTRLAUC().fit(X, y)
    assert roc_auc(yt, model.decision_function(Xt)) > 0.895


def test_battery_with_rows_of_the_state_logged(monkeypatch):
    """The battery (transactions of refused calls, chunking, resuming) with the
    state saved by rows at every call, as at d >= 4096 with small chunks."""
    from dataclasses import replace

    import aucstream.ftrl as ftrl

    monkeypatch.setattr(ftrl, "_ROW_LOG_MIN", 1)
    by_rows = replace(FTRLAUC._state_spec, by_rows=lambda learner, chunk: True)
    monkeypatch.setattr(FTRLAUC, "_state_spec", by_rows)
    model = FTRLAUC().fit(*sparse_stream())
    assert model._row_written_state(None) == (model.zn_, model.scale_)
    check_estimator(FTRLAUC(), sklearn_checks=False)


@pytest.mark.slow
def test_auc_on_w8a():
    """One pass over w8a (unit rows, 3% positive) at the defaults: about 0.877, where
    SGDClassifier(log_loss) reaches about 0.824 (docs/results/highdim_bench.md)."""
    X, y, Xt, yt = w8a_normalized()
    model = FTRLAUC().fit(X, y)
    assert roc_auc(yt, model.decision_function(Xt)) > 0.87
    assert model.sparsity_ > 0.15


def w8a_normalized():
    """w8a's training and test files with unit rows (skips when absent)."""
    import lzma

    from conftest import require_data
    from sklearn.datasets import load_svmlight_file
    from sklearn.preprocessing import normalize

    data = require_data("w8a.xz", "w8a.t.xz")
    with lzma.open(data / "w8a.xz") as fh:
        X, y = load_svmlight_file(fh, n_features=300)
    with lzma.open(data / "w8a.t.xz") as fh:
        Xt, yt = load_svmlight_file(fh, n_features=300)
    return normalize(X).tocsr(), y, normalize(Xt).tocsr(), yt


@pytest.mark.parametrize("rows", [1, 200])
def test_a_call_that_diverges_changes_nothing_at_large_d(rows):
    """At d >= 4096 the state is saved by rows (small calls) or whole (large ones);
    either way a call whose state overflows is rolled back (on the rows as they come:
    the default running column scale brings such values into [-1, 1])."""
    X, y = sparse_stream(n=400, d=5000, density=0.01, seed=5)
    model = FTRLAUC(column_scale=None).fit(X[:200], y[:200])
    assert model._row_logged_state() == (model.zn_,)
    before = model.zn_.copy(), model.scalars_.copy(), model.counts_.copy()
    bad = X[200 : 200 + rows].copy()
    bad.data[-min(bad.nnz, 40) :] = 1e152  # finite squared norm, overflowing gradients
    with pytest.raises(FloatingPointError, match="diverged: its state zn_ became"):
        model.partial_fit(bad, y[200 : 200 + rows])
    for got, want in zip((model.zn_, model.scalars_, model.counts_), before):
        np.testing.assert_array_equal(got, want)
    assert model.n_samples_seen_ == 200


def reference_brute_force(X, y, gamma, l1, l2, beta):
    """The authors' C code's order in numpy (``reference_order=True``): score with the
    weights cached at each coordinate's last touch, p counting the current example,
    recompute the touched weights, then update z and n with them."""
    d = X.shape[1]
    z, n, w = np.zeros(d), np.zeros(d), np.zeros(d)
    a_hat = b_hat = 0.0
    t = pos = 0
    scores = []
    for x, label in zip(X, y):
        s = float(w @ x)
        scores.append(s)
        p = (pos + (label > 0)) / (t + 1)
        c = 2 * (1 - p) * (s - b_hat - 1) if label > 0 else 2 * p * (s - a_hat + 1)
        touched = x != 0
        with np.errstate(invalid="ignore", divide="ignore"):
            fresh = -(z - np.sign(z) * l1) / ((beta + np.sqrt(n)) / gamma + l2)
        fresh[np.abs(z) <= l1] = 0.0
        w[touched] = fresh[touched]
        g = c * x
        z += g - (np.sqrt(n + g * g) - np.sqrt(n)) / gamma * w
        n += g * g
        t += 1
        if label > 0:
            pos += 1
            a_hat += (s - a_hat) / pos
        else:
            b_hat += (s - b_hat) / (t - pos)
    return np.array(scores), w


def test_reference_order_matches_the_codes_order():
    X, y = sparse_stream(seed=6)
    params = {"gamma": 0.5, "l1": 0.05, "l2": 0.1, "beta": 1.0}
    ref_scores, ref_w = reference_brute_force(X.toarray(), y, **params)
    model = FTRLAUC(reference_order=True, **params).fit(X, y)
    np.testing.assert_allclose(model.coef_.ravel(), ref_w, rtol=1e-12, atol=1e-12)
    standard = FTRLAUC(**params).fit(X, y)
    assert not np.allclose(standard.coef_, model.coef_)  # the orders differ
    one = FTRLAUC(reference_order=True, **params).partial_fit(X[:1], y[:1], classes=[-1, 1])
    pre = []
    for i in range(1, X.shape[0]):
        pre.append(float(X[i].toarray().ravel() @ one.coef_.ravel()))
        one.partial_fit(X[i : i + 1], y[i : i + 1])
    np.testing.assert_allclose(pre, ref_scores[1:], rtol=1e-12, atol=1e-12)
    check_estimator(FTRLAUC(reference_order=True), sklearn_checks=False)


@pytest.mark.parametrize("reference_order", [False, True])
def test_the_kernel_checks_what_it_writes(reference_order, monkeypatch):
    """At d >= 4096 the standard order's kernel says whether what it wrote to ``zn_``
    is finite (``StateSpec.checked``): a chunk saved whole is then not read again for
    NaN or infinity there (nor in ``scale_``); the reference order's is, whole."""
    checks = finite_checks(monkeypatch)
    X, y = sparse_stream(n=400, d=5000, density=0.01, seed=5)
    model = FTRLAUC(reference_order=reference_order).fit(X[:200], y[:200])
    checks.clear()
    model.partial_fit(X[200:], y[200:])  # (saved whole: 200 rows of 50 values)
    skipped = {id(model.zn_): 0, id(model.scale_): 0}
    assert checks == [{} if reference_order else skipped]


def finite_checks(monkeypatch) -> list:
    """The checks for NaN and infinity made from now on: per call of
    ``first_non_finite``, ``{id(array): number of rows read}`` of the arrays checked
    by rows (the others are read whole)."""
    import aucstream._state as state

    checks = []
    real = state.first_non_finite

    def spy(obj, rows=None):
        checks.append({key: value.size for key, value in (rows or {}).items()})
        return real(obj, rows)

    monkeypatch.setattr(state, "first_non_finite", spy)
    return checks


def unit_box_stream(n=1200, d=4096, k=8, big_at=600, seed=5):
    """CSR rows of ``k`` values in [-1, 1] on the first 500 columns, column 0 in every
    row, whose value at row ``big_at`` is 3 (the only value outside [-1, 1])."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        c = np.concatenate(([0], rng.choice(np.arange(1, 500), k - 1, replace=False)))
        c.sort()
        rows.append((c, rng.uniform(-1, 1, k)))
    indptr = np.concatenate(([0], np.cumsum([c.size for c, _ in rows])))
    indices = np.concatenate([c for c, _ in rows])
    data = np.concatenate([v for _, v in rows])
    data[indptr[big_at]] = 3.0  # (column 0 comes first in its row)
    X = sp.csr_matrix((data, indices, indptr), shape=(n, d))
    y = np.where(X[:, :50] @ rng.normal(size=50) + 0.3 * rng.normal(size=n) > 0, 1, -1)
    return X, y


@pytest.mark.parametrize(
    "make",
    [
        lambda: FTRLAUC(l1=0.1),
        lambda: FTRLAUC(l1=0.1, reference_order=True),
        lambda: SPAM(l1=1e-3),
        lambda: SPAM(l1=1e-3, step="global"),
    ],
    ids=["ftrl", "ftrl-reference", "spam", "spam-global"],
)
def test_calls_in_the_unit_box_learn_without_the_scale_with_the_same_floats(make, monkeypatch):
    """With "max_abs_1" a call of many values, all in [-1, 1] while no column's
    maximum exceeds 1, learns without reading the running scale
    (``SparseScaled._kernel_scale``): the same prequential scores and state, bit for
    bit, as the rows one at a time (whose calls read it), before and after a column
    passes 1 (a call in the unit box then reads the scale again: that column's
    divisor is 3). ``scale_`` keeps a column's maximum only once it exceeds 1."""
    from aucstream.ftrl import SparseScaled

    X, y = unit_box_stream()
    skipped = []
    kernel_scale = SparseScaled._kernel_scale

    def spy(self, chunk, reuse):
        scale = kernel_scale(self, chunk, reuse)
        if chunk.n_samples > 1:
            skipped.append(scale.size == 0)
        return scale

    monkeypatch.setattr(SparseScaled, "_kernel_scale", spy)
    chunked, one = make(), make()
    pre = [
        chunked.test_then_train(X[a : a + 100], y[a : a + 100], classes=[-1, 1])
        for a in range(0, 1200, 100)
    ]
    assert skipped == [True] * 6 + [False] * 6  # (row 600's call and all after it read)
    pre_one = [
        one.test_then_train(X[i : i + 1], y[i : i + 1], classes=[-1, 1]) for i in range(1200)
    ]
    np.testing.assert_array_equal(np.concatenate(pre), np.concatenate(pre_one))
    state = {
        k: v for k, v in vars(chunked).items() if k.endswith("_") and isinstance(v, np.ndarray)
    }
    assert {"scale_", "counts_"} <= set(state)
    for name, value in state.items():
        np.testing.assert_array_equal(value, getattr(one, name), err_msg=name)
    expected = np.zeros(X.shape[1])
    expected[0] = 3.0
    np.testing.assert_array_equal(chunked.scale_, expected)
    exact = make().set_params(column_scale="max_abs").fit(X, y)  # every maximum kept
    np.testing.assert_array_equal(exact.scale_, abs(X).max(axis=0).toarray().ravel())


@pytest.mark.parametrize(
    "make",
    [lambda: FTRLAUC(l1=0.1), lambda: SPAM(l1=1e-3), lambda: SPAM(l1=1e-3, step="global")],
    ids=["ftrl", "spam", "spam-global"],
)
def test_a_large_call_saves_the_rows_it_writes_and_a_failure_puts_them_back(make, monkeypatch):
    """At d >= 4096 a call too large to be saved by rows beforehand, of a learner
    that has learnt, saves each row of its state itself before its kernel first
    writes it (``StateSpec.self_saved``; not with SPAM's global step, whose fold
    rewrites ``v_`` whole): exactly the chunk's features, of every array the kernel
    writes (``scale_`` too when the call's values pass 1), into the undo log of its
    transaction (here from any size of state on). A failure after the
    kernel puts every array back bit for bit; a call that succeeds learns what a
    call that copies the state beforehand learns."""
    import dataclasses

    from aucstream import _calibration, _state
    from aucstream._runtime._undo import UndoLog

    monkeypatch.setattr(_state, "SHADOW_LIMIT", 0)  # (an undo log from any size on)
    X, y = sparse_stream(n=600, d=5000, density=0.01, seed=7)
    X = X.tolil()
    X[200:400, 4000:4100] = 3.0  # (values beyond 1: the running scale grows)
    X = X.tocsr()
    chunk = X[200:400]
    assert not 32 * chunk.nnz <= X.shape[1]  # (not saved by rows: Chunk.names_few)
    model = make().fit(X[:200], y[:200])
    state = {k: v.copy() for k, v in vars(model).items() if isinstance(v, np.ndarray)}
    recorded = []
    record, learnt = UndoLog.record, _calibration.learnt

    def spy(self, array, rows, saved):
        name = next(k for k, v in vars(model).items() if v is array)
        recorded.append((name, np.sort(rows)))
        record(self, array, rows, saved)

    def fail(*args):
        raise FloatingPointError("a failure after the kernel")

    monkeypatch.setattr(UndoLog, "record", spy)
    monkeypatch.setattr(_calibration, "learnt", fail)
    with pytest.raises(FloatingPointError, match="a failure after the kernel"):
        model.partial_fit(chunk, y[200:400])
    for name, value in state.items():
        np.testing.assert_array_equal(getattr(model, name), value, err_msg=name)
    assert model.n_samples_seen_ == 200
    features = np.unique(chunk.indices)
    if model.get_params().get("step") == "global":
        assert recorded == []
    else:
        names = {"zn_"} if isinstance(model, FTRLAUC) else {"v_", "rates_"}
        assert {name for name, _ in recorded} == names | {"scale_"}
        for name, rows in recorded:
            np.testing.assert_array_equal(rows, features, err_msg=name)
    monkeypatch.setattr(_calibration, "learnt", learnt)
    model.partial_fit(chunk, y[200:400])
    copied = make()
    spec = dataclasses.replace(type(copied)._state_spec, self_saved=None)
    monkeypatch.setattr(type(copied), "_state_spec", spec)
    copied.fit(X[:200], y[:200]).partial_fit(chunk, y[200:400])
    assert copied.scale_.max() == 3.0
    for name in state:
        np.testing.assert_array_equal(getattr(model, name), getattr(copied, name), err_msg=name)


@pytest.mark.parametrize("make", [FTRLAUC, SPAM], ids=["FTRLAUC", "SPAM"])
def test_the_unit_box_memo_never_hides_a_grown_scale(make, monkeypatch):
    """A large call within the unit box skips the O(d) maximum of ``scale_`` when the
    learner's last large call left it at most 1 (``ftrl._WITHIN_FLOOR``). Whatever
    else grows the scale in between (a one-row call, whose bound kernel serves the
    rows after it; a large call beyond 1; a call undone after its kernel ran) must
    make the next call read the scale: the same floats as without the memo (a memo
    that forgot ``n_samples_seen_`` fails here)."""
    from aucstream import _calibration, ftrl

    X, y = sparse_stream(n=1400, d=300, density=0.1, seed=3)
    big = X[600:601].copy()
    big.data[:] = 4.0  # (one row beyond 1)
    beyond = X[800:1000].copy()
    beyond.data *= 2.5

    def fail(*args):
        raise FloatingPointError("a failure after the kernel")

    def row(X, i):
        return dict(zip(X[i].indices.tolist(), X[i].data.tolist()))

    def run(memo: bool):
        if not memo:  # (a memo that never remembers)
            monkeypatch.setattr(
                ftrl,
                "_WITHIN_FLOOR",
                type("Never", (dict,), {"__setitem__": lambda self, key, value: None})(),
            )
        model = make().fit(X[:200], y[:200])
        model.partial_fit(X[200:400], y[200:400])  # (remembered: at most 1)
        model.learn_one(row(X, 400), y[400])  # one row: its kernel bound
        model.partial_fit(X[401:600], y[401:600])  # (remembered again)
        model.learn_one(row(big, 0), y[600])  # the bound kernel: the scale grows to 4
        model.partial_fit(X[1000:1200], y[1000:1200])
        with monkeypatch.context() as patch:
            patch.setattr(_calibration, "learnt", fail)
            with pytest.raises(FloatingPointError):
                model.partial_fit(beyond, y[800:1000])  # undone
        model.partial_fit(X[1200:1400], y[1200:1400])
        model.partial_fit(beyond, y[800:1000])
        model.partial_fit(X[600:800], y[600:800])
        monkeypatch.undo()
        return model

    with_memo, without = run(True), run(False)
    assert with_memo.scale_.max() == 4.0
    for name in ("scale_", "coef_", "calibration_", "counts_"):
        np.testing.assert_array_equal(getattr(with_memo, name), getattr(without, name), name)
