"""The one-row path: ``learn_one`` and one-row ``partial_fit``/``test_then_train``
through the learner's update bound once to a chunk of fixed buffers
(``BaseStreamingAUC._bind_update``, :class:`aucstream._fastpath.OneRow`).

It must give the models of the full validation bit for bit, refuse what the full
path refuses with the model unchanged, keep the walk of the state current (it does
not check it after the update), bind again when a parameter or the state's objects
change, and not keep a learner alive.
"""

from __future__ import annotations

import gc
import pickle
import re
import weakref

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import assert_same_state, make_stream, snapshot

from aucstream import (
    FSAUC,
    FTRLAUC,
    OAM,
    OPAUC,
    SOLAM,
    SOLAML1,
    SPAM,
    AdaOAM,
    ConfidenceWeighted,
    CostSensitivePA,
    PassiveAggressive,
    Perceptron,
    UnivariateOnline,
)
from aucstream._base import BaseStreamingAUC
from aucstream._fastpath import FAST, OneRow
from aucstream._runtime._entry import OneStep

#: Learners that bind their update, as the one-row path uses them.
BINDING = {
    "SOLAM": lambda: SOLAM(random_state=0),
    "SOLAML1": lambda: SOLAML1(random_state=0),
    "UnivariateOnline": lambda: UnivariateOnline(random_state=0),
    "UnivariateOnline-prior": lambda: UnivariateOnline(weights="prior", random_state=0),
    "OPAUC-full": lambda: OPAUC(eta=0.05, lam=0.01, random_state=0),
    "FSAUC": lambda: FSAUC(n_samples=90, random_state=0),  # the stream's 90 rows
    "PassiveAggressive": lambda: PassiveAggressive(C=0.5, random_state=0),
    "CostSensitivePA": lambda: CostSensitivePA(variant="ml", rho_pos=4.0, random_state=0),
    "Perceptron": lambda: Perceptron(random_state=0),
    "ConfidenceWeighted": lambda: ConfidenceWeighted(random_state=0),
    # reads n_samples_seen_ at each call
    "ConfidenceWeighted-average": lambda: ConfidenceWeighted(average=True, random_state=0),
    "AdaOAM": lambda: AdaOAM(random_state=0),
    # buffers that fill: the reservoirs draw from _rng at each call
    "OAM": lambda: OAM(C=2**-4, buffer_size=20, random_state=0),
    "FTRLAUC": lambda: FTRLAUC(random_state=0),
    "FTRLAUC-reference": lambda: FTRLAUC(reference_order=True, random_state=0),
    "SPAM": lambda: SPAM(l1=1e-3, random_state=0),
    "SPAM-global": lambda: SPAM(step="global", l2=0.1, random_state=0),
}


def stream(n=90, d=30, seed=0):
    X, y = make_stream(n, d, seed=seed, sparsity=0.7)
    X[np.arange(n), np.arange(n) % d] += 1.0  # no empty row
    y[:2] = [-1, 1]
    return X, y


def rows(X, y, how):
    """One-row calls of ``how`` for rows 10.. of (X, y): a list of functions of a model."""
    S = sp.csr_matrix(X)
    calls = {
        "learn_one array": lambda m, i: m.learn_one(X[i], y[i]),
        "learn_one dict": lambda m, i: m.learn_one(
            {int(j): v for j, v in zip(S[i].indices, S[i].data)}, y[i]
        ),
        "partial_fit dense": lambda m, i: m.partial_fit(X[i : i + 1], y[i : i + 1]),
        "partial_fit CSR": lambda m, i: m.partial_fit(S[i : i + 1], y[i : i + 1]),
        "test_then_train": lambda m, i: m.test_then_train(X[i : i + 1], y[i : i + 1]),
    }
    call = calls[how]
    return [lambda m, i=i: call(m, i) for i in range(10, len(y))]


HOWS = [
    "learn_one array",
    "learn_one dict",
    "partial_fit dense",
    "partial_fit CSR",
    "test_then_train",
]


@pytest.fixture
def bound_calls(monkeypatch):
    """Count the calls that learnt through a bound update: the fast path's one-row
    call, or the per-example entry (:class:`aucstream._runtime._entry.OneStep`)."""
    calls = []
    learn = BaseStreamingAUC._learn_one_row
    step = OneStep.learn

    def counted(self, cache, one, *args):
        calls.append(one)
        return learn(self, cache, one, *args)

    def counted_step(self, learner, x, y):
        learnt = step(self, learner, x, y)
        if learnt:
            calls.append(self.one)
        return learnt

    monkeypatch.setattr(BaseStreamingAUC, "_learn_one_row", counted)
    monkeypatch.setattr(OneStep, "learn", counted_step)
    return calls


def start(make, X, y):
    model = make()
    if getattr(model, "weights", None) == "prior":  # counts the rows it will learn
        return model.fit(X, y)
    return model.partial_fit(X[:10], y[:10], classes=[-1, 1])


#: weights="prior" learns only the rows of the fit that counted them (tested below).
STREAMING = [name for name in BINDING if not name.endswith("prior")]


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("name", STREAMING)
def test_bound_one_row_calls_give_the_full_paths_model(name, how, monkeypatch, bound_calls):
    X, y = stream()
    fast = start(BINDING[name], X, y)
    scores = [call(fast) for call in rows(X, y, how)]
    assert len(bound_calls) >= len(scores) - 1, "the bound update was not used"
    with monkeypatch.context() as patch:  # the full validation only
        patch.setattr(BaseStreamingAUC, "_quick_chunk", lambda self, *args: None)
        FAST.clear()
        full = start(BINDING[name], X, y)
        full_scores = [call(full) for call in rows(X, y, how)]
    assert_same_state(snapshot(vars(full)), snapshot(vars(fast)))
    if how == "test_then_train":
        np.testing.assert_array_equal(np.concatenate(scores), np.concatenate(full_scores))
    # and the model of one chunk of all these rows (chunking does not matter)
    rest = sp.csr_matrix(X[10:]) if how in ("learn_one dict", "partial_fit CSR") else X[10:]
    chunk = start(BINDING[name], X, y).partial_fit(rest, y[10:])
    np.testing.assert_array_equal(chunk.decision_function(X), fast.decision_function(X))


@pytest.mark.parametrize("name", list(BINDING))
def test_a_bound_update_keeps_the_walk_current(name):
    X, y = stream()
    model = start(BINDING[name], X, y)
    if name.endswith("prior"):
        model._prior_rows = 10  # as a fit of 10 more rows would leave it
    model.partial_fit(X[:1], y[:1])  # walks the state
    cache = FAST[model]
    for layout, one in ((True, None), (False, 40)):
        one = model._one_row_context(cache, layout, X.shape[1])
        assert isinstance(one, OneRow) and one.update is not None
        if layout:
            assert one.load_dense(X[3], 1.0)
        else:
            assert one.load_sparse(None, np.arange(X.shape[1]), X[3], 1.0)
        one.update(model)
        assert cache.flat.current(model)


def test_prior_weights_count_the_bound_rows():
    X, y = stream()
    model = UnivariateOnline(weights="prior").fit(X[:40], y[:40])
    with pytest.raises(ValueError, match="weights='prior' needs the class counts"):
        model.learn_one(X[41], y[41])
    model._prior_rows = 2
    before = model.n_samples_seen_
    model.learn_one(X[41], y[41])
    model.learn_one(X[42], y[42])
    assert model.n_samples_seen_ == before + 2
    with pytest.raises(ValueError, match="weights='prior' needs the class counts"):
        model.learn_one(X[43], y[43])


def test_fsaucs_bound_update_reads_the_schedule_when_called(bound_calls):
    """The schedule (Python ints of the state, in the kernel's configuration) set
    between bound calls is the one the next call runs, as on the chunk path."""
    X, y = stream()
    fast = start(BINDING["FSAUC"], X, y)
    fast.learn_one(X[10], y[10])
    fast.learn_one(X[11], y[11])  # bound
    unchanged = pickle.loads(pickle.dumps(fast))
    fast.n_stages_, fast.stage_length_ = 4, 20  # stages of 20 rows instead of one of 90
    full = pickle.loads(pickle.dumps(fast))
    calls = len(bound_calls)
    for i in range(12, 60):
        fast.learn_one(X[i], y[i])
    assert len(bound_calls) == calls + 48
    full.partial_fit(X[12:60], y[12:60])
    unchanged.partial_fit(X[12:60], y[12:60])
    assert_same_state(snapshot(vars(full)), snapshot(vars(fast)))
    assert fast.counts_.tolist() != unchanged.counts_.tolist()


BAD_ROWS = {
    "NaN": lambda x, d: np.where(np.arange(d) == 3, np.nan, x),
    "inf": lambda x, d: np.where(np.arange(d) == 0, -np.inf, x),
    "1e200": lambda x, d: np.where(np.arange(d) == 5, 1e200, x),
    "short": lambda x, d: x[:-1].copy(),
    "long": lambda x, d: np.append(x, 1.0),
    "dict NaN": lambda x, d: {1: 0.5, 4: np.nan},
    "dict index d": lambda x, d: {1: 0.5, d: 1.0},
    "dict index -1": lambda x, d: {-1: 0.5},
    "dict value str": lambda x, d: {2: "a"},
}


@pytest.mark.parametrize("bad", list(BAD_ROWS))
@pytest.mark.parametrize("name", ["SOLAM", "UnivariateOnline", "OPAUC-full"])
def test_bad_rows_and_labels_are_refused_with_the_model_unchanged(name, bad):
    X, y = stream()
    model = start(BINDING[name], X, y)
    model.learn_one(X[10], y[10])
    model.learn_one({0: 1.0}, y[11])  # both contexts bound
    before = pickle.dumps(model)
    with pytest.raises(ValueError):
        model.learn_one(BAD_ROWS[bad](X[12], X.shape[1]), y[12])
    assert pickle.dumps(model) == before
    for label in (7, np.nan, "1", None, [1], np.array([1])):
        with pytest.raises(ValueError):
            model.learn_one(X[12], label)
        assert pickle.dumps(model) == before


#: The array that rows scaled by 1e100 make infinite, per learner. Left out: those
#: whose weights stay bounded on such rows (FSAUC's ball, the steps of PA, CPA, CW and
#: OAM that shrink with the row's squared norm): their scores of about 1e100 keep the
#: calibration finite.
DIVERGING = {
    "SOLAM": "scalars_",  # ||u||^2 overflows (the l2 step's lazy scale, refolded next)
    "SOLAML1": "calibration_",
    "UnivariateOnline": "calibration_",
    "OPAUC-full": "calibration_",
    "Perceptron": "calibration_",
    "AdaOAM": "sq_grad_sum_",  # squared gradients of about 1e200 a step
}
#: SOLAM's, AdaOAM's and OPAUC's defaults learn each column in its running scale,
#: which such rows do not break (tests/test_raw_data.py): the papers' steps on the raw
#: rows do.
PAPER_STEPS = {
    "OPAUC-full": lambda: OPAUC(eta=0.05, lam=0.01, random_state=0, column_scale=None),
    "SOLAM": lambda: SOLAM(random_state=0, column_scale=None),
    "SOLAML1": lambda: SOLAML1(random_state=0, column_scale=None),
    "AdaOAM": lambda: AdaOAM(random_state=0, column_scale=None),
}


@pytest.mark.parametrize("layout", ["array", "dict"])
@pytest.mark.parametrize("name", list(DIVERGING))
def test_a_diverging_bound_update_is_refused_naming_the_array(name, layout, bound_calls):
    X, y = stream()
    model = start(PAPER_STEPS.get(name, BINDING[name]), X, y)
    model.learn_one(X[10], y[10])
    with pytest.raises(FloatingPointError, match=f"{DIVERGING[name]} became infinite") as error:
        for i in range(11, 20):  # scores of 1e100 overflow the calibration's exponentials
            x = X[i] * 1e100
            if layout == "dict":
                x = {j: v for j, v in enumerate(x) if v != 0.0}
            before = pickle.dumps(model)
            model.learn_one(x, y[i])
    largest = f"{np.abs(X[i]).max() * 1e100:.3g}"
    assert bound_calls and f"largest feature value in the chunk: {largest})" in str(error.value)
    assert pickle.dumps(model) == before


@pytest.mark.parametrize("change", ["parameter", "refit", "state array"])
def test_a_changed_parameter_or_state_binds_again(change, monkeypatch):
    X, y = stream()

    def run(model):
        for i in range(10, 30):
            model.learn_one(X[i], y[i])
        if change == "parameter":
            model.set_params(R=3.0)
        elif change == "refit":
            model.fit(X[:20], y[:20])
        else:
            model.u_ = model.u_.copy()
        for i in range(30, 60):
            model.learn_one(X[i], y[i])
        return model

    fast = run(SOLAM(random_state=0).partial_fit(X[:10], y[:10]))
    with monkeypatch.context() as patch:
        patch.setattr(BaseStreamingAUC, "_quick_chunk", lambda self, *args: None)
        full = run(SOLAM(random_state=0).partial_fit(X[:10], y[:10]))
    assert_same_state(snapshot(vars(full)), snapshot(vars(fast)))


def test_dict_rows_of_growing_size_grow_the_buffers():
    X, y = make_stream(60, 200, seed=3)  # dense: up to 200 stored values a row
    model = SOLAM().partial_fit(X[:10], y[:10], classes=[-1, 1])
    reference = pickle.loads(pickle.dumps(model))
    for i, k in zip(range(10, 60), [3, 20, 17, 64, 200, 5] * 9):
        x = {j: X[i, j] for j in range(0, 200, 200 // k)}
        model.learn_one(x, y[i])
        dense = np.zeros(200)
        dense[list(x)] = list(x.values())
        reference.partial_fit(sp.csr_matrix(dense), y[i : i + 1])
    assert FAST[model].plans[("one", False)].capacity == 200
    assert_same_state(snapshot(vars(reference)), snapshot(vars(model)))


@pytest.mark.parametrize("name", ["SOLAM", "UnivariateOnline", "OPAUC-full"])
def test_dict_rows_in_any_key_order_and_of_any_key_and_value_type_learn_as_csr(name):
    X, y = make_stream(60, 200, seed=4)
    model = start(BINDING[name], X, y)
    reference = pickle.loads(pickle.dumps(model))
    rng = np.random.default_rng(5)
    for i in range(10, 60):
        k = [3, 40, 120, 1][i % 4]  # an order sorted by insertion, then by a sort
        cols = rng.choice(200, size=k, replace=False)  # in random order
        keys = [
            int(c) if a % 3 else np.int64(c) if a % 2 else np.int32(c) for a, c in enumerate(cols)
        ]
        values = [X[i, c] if a % 2 else np.float32(X[i, c]) for a, c in enumerate(cols)]
        model.learn_one(dict(zip(keys, values)), y[i])
        order = np.argsort(cols)
        row = sp.csr_matrix(
            (np.array(values, dtype=np.float64)[order], cols[order], [0, k]), shape=(1, 200)
        )
        reference.partial_fit(row, y[i : i + 1])
    assert_same_state(snapshot(vars(reference)), snapshot(vars(model)))


def test_load_row_in_place_sorts_and_checks_like_csr():
    from aucstream._chunks import load_row_in_place

    rng = np.random.default_rng(6)
    for k in (0, 1, 5, 40):
        cols = rng.choice(50, size=k, replace=False)
        vals = rng.normal(size=k)
        indices, data, indptr = np.full(64, -7), np.full(64, np.nan), np.zeros(2, np.int64)
        indices[:k], data[:k] = cols, vals
        assert load_row_in_place(indptr, indices, data, 50, k) == k
        order = np.argsort(cols)
        assert indptr.tolist() == [0, k]
        np.testing.assert_array_equal(indices[:k], cols[order])
        np.testing.assert_array_equal(data[:k], vals[order])
    for bad_index, bad_value in ((50, 1.0), (-1, 1.0), (3, 1.0), (4, np.nan), (4, np.inf)):
        indices, data = np.array([3, 9, bad_index, 0]), np.array([1.0, 2.0, bad_value, 3.0])
        assert load_row_in_place(np.zeros(2, np.int64), indices, data, 50, 4) == -1
    assert load_row_in_place(np.zeros(2, np.int64), np.arange(4), np.ones(4), 50, 5) == -1
    assert load_row_in_place(np.zeros(1, np.int64), np.arange(4), np.ones(4), 50, 2) == -1
    assert load_row_in_place(np.zeros(2, np.int64), np.arange(4), np.ones(4), 50, -1) == -1


class _Index:
    """An integer index of a type of its own (``__index__``), as numpy's integers are."""

    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value

    def __hash__(self):
        return hash(self.value)

    def __eq__(self, other):
        return other == self.value


def test_pack_dict_row_takes_integer_keys_and_real_values_only():
    """The one rule of dict rows: keys that are integers within int64 (not bools, even
    among others, at 0 and at 1), values that are real numbers within float64; what it
    refuses, dict_row_error names."""
    from decimal import Decimal

    from aucstream._chunks import dict_row_error, dict_row_values, pack_dict_row

    good = {
        5: 1.5,
        np.int64(0): np.float32(0.25),
        np.int16(1): Decimal("2.5"),
        np.uint64(7): True,
        _Index(3): 4,
        2**63 - 1: np.float16(-1.0),
    }
    indices, data = np.full(8, -9), np.full(8, np.nan)
    assert pack_dict_row(good, indices, data)
    np.testing.assert_array_equal(indices[:6], [5, 0, 1, 7, 3, 2**63 - 1])
    np.testing.assert_array_equal(data[:6], [1.5, 0.25, 2.5, 1.0, 4.0, -1.0])
    assert indices[6] == -9 and np.isnan(data[6])  # nothing written past the row
    keys, values = dict_row_values(good)
    assert keys.dtype == np.int64 and values.dtype == np.float64
    np.testing.assert_array_equal(keys, indices[:6])
    np.testing.assert_array_equal(values, data[:6])
    assert [a.size for a in dict_row_values({})] == [0, 0]
    for bad, message in (
        ({True: 1.0}, "integer indices"),
        ({2: 1.0, False: 2.0}, "integer indices"),
        ({0: 1.0, True: 2.0}, "integer indices"),
        ({np.True_: 1.0}, "integer indices"),
        ({1.0: 1.0}, "integer indices"),
        ({np.float64(2.0): 1.0}, "integer indices"),
        ({"1": 1.0}, "integer indices"),
        ({1: 1.0, np.uint64(2**63): 1.0}, "index 9223372036854775808 is outside"),
        ({-(2**63) - 1: 1.0}, "is outside"),
        ({1: "1"}, "feature 1 has the value '1' \\(str\\)"),
        ({1: b"1"}, "feature 1 has the value b'1' \\(bytes\\)"),
        ({1: 1.0, 2: None}, "feature 2 has the value None"),
        ({1: np.array([1.0])}, "feature 1 has the value array"),
        ({1: 2j}, "complex"),
        ({1: -(10**400)}, "range of float64"),
    ):
        assert not pack_dict_row(bad, np.zeros(4, np.int64), np.zeros(4))
        assert dict_row_values(bad) is None
        assert re.search(message, dict_row_error(bad, 10)), (bad, dict_row_error(bad, 10))
    assert not pack_dict_row({1: 1.0, 2: 2.0}, np.zeros(1, np.int64), np.zeros(4))  # too small


def test_non_contiguous_and_float32_rows_take_the_usual_path():
    X, y = stream()
    model = SOLAM().partial_fit(X[:10], y[:10])
    reference = pickle.loads(pickle.dumps(model))
    wide = np.repeat(X, 2, axis=1)
    model.learn_one(wide[10, ::2], y[10])
    model.learn_one(X[11].astype(np.float32), y[11])
    reference.partial_fit(X[10:11], y[10:11])
    reference.partial_fit(X[11:12].astype(np.float32), y[11:12])
    assert_same_state(snapshot(vars(reference)), snapshot(vars(model)))


@pytest.mark.parametrize("name", list(BINDING))
def test_the_fast_path_does_not_keep_a_learner_alive(name):
    X, y = stream()
    model = start(BINDING[name], X, y)
    if name.endswith("prior"):
        model._prior_rows = 10
    model.learn_one(X[10], y[10])
    model.learn_one(X[11], y[11])
    model.learn_one({0: 1.0}, y[12])
    assert ("one", True) in FAST[model].plans
    ref = weakref.ref(model)
    del model
    gc.collect()
    assert ref() is None


def _csr(indptr, indices, data, d):
    X = sp.csr_matrix((np.ones(1), [0], [0, 1]), shape=(1, d))
    X.indptr, X.indices, X.data = (np.asarray(indptr), np.asarray(indices), np.asarray(data))
    return X


BAD_CSR = {
    "indptr past the indices": lambda d: _csr([0, 5], [1, 2], [1.0, 2.0], d),
    "indptr decreasing": lambda d: _csr([2, 1], [1, 2], [1.0, 2.0], d),
    "indptr negative": lambda d: _csr([-1, 1], [1, 2], [1.0, 2.0], d),
    "index d": lambda d: _csr([0, 2], [1, d], [1.0, 2.0], d),
    "index -1": lambda d: _csr([0, 2], [-1, 2], [1.0, 2.0], d),
    "indptr from 1": lambda d: _csr([1, 2], [1, 2], [1.0, 2.0], d),
    "NaN": lambda d: _csr([0, 2], [1, 3], [1.0, np.nan], d),
    "1e200": lambda d: _csr([0, 2], [1, 3], [1.0, 1e200], d),
}


@pytest.mark.parametrize("bad", list(BAD_CSR))
@pytest.mark.parametrize("name", ["SOLAM", "OPAUC-full"])
def test_bad_one_row_csr_is_refused_with_the_model_unchanged(name, bad):
    X, y = stream()
    model = start(BINDING[name], X, y)
    S = sp.csr_matrix(X)
    model.partial_fit(S[10:11], y[10:11])
    model.partial_fit(S[11:12], y[11:12])  # the sparse context bound
    before = pickle.dumps(model)
    with pytest.raises(ValueError):
        model.partial_fit(BAD_CSR[bad](X.shape[1]), y[12:13])
    assert pickle.dumps(model) == before


@pytest.mark.parametrize("name", ["SOLAM", "OPAUC-full"])
def test_one_row_csr_in_other_forms_gives_the_model_of_its_canonical_form(name):
    X, y = stream()
    S = sp.csr_matrix(X)
    models = {}
    for kind in ("int32", "int64", "unsorted", "duplicates", "longer arrays"):
        model = start(BINDING[name], X, y)
        for i in range(10, 40):
            row = S[i : i + 1].copy()
            indices, data = row.indices, row.data
            if kind == "int64":
                row.indices, row.indptr = indices.astype(np.int64), row.indptr.astype(np.int64)
            elif kind == "unsorted":  # the full path sorts them
                row = _csr([0, row.nnz], indices[::-1], data[::-1], X.shape[1])
            elif kind == "duplicates":  # the full path sums them
                twice = np.r_[data[:1] / 2, data[:1] / 2, data[1:]]
                row = _csr([0, row.nnz + 1], np.r_[indices[:1], indices], twice, X.shape[1])
            elif kind == "longer arrays":  # entries past indptr[1] are not the row's
                row = _csr([0, row.nnz], np.r_[indices, 0], np.r_[data, 7.0], X.shape[1])
            model.partial_fit(row, y[i : i + 1])
        models[kind] = model
    for kind, model in models.items():
        if kind == "duplicates":  # half of a value, twice: one rounding apart
            np.testing.assert_allclose(
                model.decision_function(X), models["int32"].decision_function(X), rtol=1e-12
            )
        else:
            assert_same_state(snapshot(vars(models["int32"])), snapshot(vars(model)))


def test_a_subclass_that_overrides_the_update_alone_is_not_bound(monkeypatch):
    class Doubled(UnivariateOnline):
        def _update(self, chunk):  # learns each row twice
            super()._update(chunk)
            super()._update(chunk)

    X, y = stream()
    model = Doubled(random_state=0).partial_fit(X[:10], y[:10])
    for i in range(10, 30):
        model.learn_one(X[i], y[i])
    assert FAST[model].plans[("one", True)].update is None
    with monkeypatch.context() as patch:  # the full validation, through _update
        patch.setattr(BaseStreamingAUC, "_quick_chunk", lambda self, *args: None)
        reference = Doubled(random_state=0).partial_fit(X[:10], y[:10])
        for i in range(10, 30):
            reference.learn_one(X[i], y[i])
    assert_same_state(snapshot(vars(reference)), snapshot(vars(model)))
