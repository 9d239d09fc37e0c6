"""The fast path of calls that learn a few examples gives what the full path gives.

``partial_fit``/``learn_one``/``test_then_train`` on a learner that has already learnt
take a fast path (``BaseStreamingAUC._quick_chunk`` / ``_quick_learn``) for plainly
valid input. Here every online learner learns the same stream through the fast path
and through the full path (the fast path switched off), and the two must agree bit
for bit: the whole state, the random generator, the prequential scores. Inputs the
fast path does not take must give the very outcome of the full path (the same error
and message, or the same model), and a rejected or failed call must change nothing.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import warnings
from decimal import Decimal

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import assert_same_state, make_stream, patch_update, snapshot
from reliability_cases import ONLINE, make

import aucstream
from aucstream import _base, _chunks, _fastpath, _state
from aucstream._base import BaseStreamingAUC
from aucstream._params import InvalidParameterError
from aucstream._runtime import _learning


@pytest.fixture
def full_path_only(monkeypatch):
    """Switch the fast path off (every call validates in full)."""
    monkeypatch.setattr(BaseStreamingAUC, "_quick_chunk", lambda self, *args: None)


@pytest.fixture
def fast_calls(monkeypatch):
    """Count the calls that took the fast path (:meth:`_quick_learn`, or the one-row
    front :meth:`_learn_row_fast` when it took the call)."""
    calls = []
    learn, learn_row = BaseStreamingAUC._quick_learn, BaseStreamingAUC._learn_row_fast

    def counted(self, quick, X, prequential, *args, **kwargs):
        calls.append(prequential)
        return learn(self, quick, X, prequential, *args, **kwargs)

    def counted_row(self, row, indices, data, y, prequential, *args):
        learnt = learn_row(self, row, indices, data, y, prequential, *args)
        if learnt is not _learning._NOT_TAKEN:
            calls.append(prequential)
        return learnt

    monkeypatch.setattr(BaseStreamingAUC, "_quick_learn", counted)
    monkeypatch.setattr(BaseStreamingAUC, "_learn_row_fast", counted_row)
    return calls


#: Learners that take the fast path (meta-learners learn through their own _learn).
FAST = [cls for cls in ONLINE if make(cls)._tags.fast_path]


def stream(n=80, d=6, seed=0):
    X, y = make_stream(n, d, seed=seed, sparsity=0.4)
    y[:2] = [-1, 1]
    return X, y


def feed(model, X, y, how: str):
    """Learn rows 10.. of (X, y) the way ``how`` says; returns prequential scores."""
    scores = []
    if how == "dense rows":
        for i in range(10, len(y)):
            model.partial_fit(X[i : i + 1], y[i : i + 1])
    elif how == "csr rows":
        S = sp.csr_matrix(X)
        for i in range(10, len(y)):
            model.partial_fit(S[i : i + 1], y[i : i + 1])
    elif how == "learn_one arrays":
        for i in range(10, len(y)):
            model.learn_one(X[i], y[i])
    elif how == "learn_one dicts":
        for i in range(10, len(y)):
            model.learn_one({j: v for j, v in enumerate(X[i]) if v != 0.0}, y[i])
    elif how == "label lists":
        for i in range(10, len(y)):
            model.partial_fit(X[i : i + 1], [int(y[i])], classes=[1, -1])
    elif how == "small chunks":
        for lo in range(10, len(y), 3):
            model.partial_fit(X[lo : lo + 3], y[lo : lo + 3])
    elif how == "float32 csr chunks":
        S = sp.csr_matrix(X.astype(np.float32))
        for lo in range(10, len(y), 4):
            model.partial_fit(S[lo : lo + 4], list(y[lo : lo + 4]))
    elif how == "test_then_train":
        for lo in range(10, len(y), 2):
            scores.append(model.test_then_train(X[lo : lo + 2], y[lo : lo + 2]))
    else:  # pragma: no cover
        raise ValueError(how)
    return np.concatenate(scores) if scores else None


HOWS = [
    "dense rows",
    "csr rows",
    "learn_one arrays",
    "learn_one dicts",
    "label lists",
    "small chunks",
    "float32 csr chunks",
    "test_then_train",
]


def learnt(cls, how, monkeypatch, fast: bool):
    X, y = stream()
    with monkeypatch.context() as patch:
        if not fast:
            patch.setattr(BaseStreamingAUC, "_quick_chunk", lambda self, *args: None)
        model = make(cls).partial_fit(X[:10], y[:10], classes=[-1, 1])
        scores = feed(model, X, y, how)
    return model, scores


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("cls", FAST, ids=lambda c: c.__name__)
def test_fast_path_gives_the_model_of_the_full_path(cls, how, monkeypatch, fast_calls):
    if how == "learn_one dicts" and _base._own_partial_fit(cls):
        pytest.skip("learn_one goes through the learner's own partial_fit")
    fast, fast_scores = learnt(cls, how, monkeypatch, fast=True)
    assert fast_calls, "the fast path was not taken"
    fast_calls.clear()
    full, full_scores = learnt(cls, how, monkeypatch, fast=False)
    assert not fast_calls
    assert_same_state(snapshot(vars(full)), snapshot(vars(fast)))
    if full_scores is not None:
        np.testing.assert_array_equal(fast_scores, full_scores)


def odd_inputs(X, y):
    """(name, X, y, extra keyword arguments) of calls the fast path must not take."""
    S = sp.csr_matrix(X[:4])
    unsorted = S.copy()
    unsorted.indices[[0, 1]] = unsorted.indices[[1, 0]]
    unsorted.has_sorted_indices = False
    duplicated = sp.csr_matrix((np.ones(3), [1, 1, 2], [0, 3]), shape=(1, X.shape[1]))
    out_of_range = S.copy()
    out_of_range.indices = out_of_range.indices.astype(np.int64)
    out_of_range.indices[2] = 10**6
    nan, inf, huge = X[:3].copy(), X[:3].copy(), X[:3].copy()
    nan[1, 2], inf[2, 0], huge[0, 1] = np.nan, -np.inf, 1e200
    return [
        ("nan", nan, y[:3], {}),
        ("inf", inf, y[:3], {}),
        ("magnitude", huge, y[:3], {}),
        ("overflowing row", np.full((1, X.shape[1]), 1e300), y[:1], {}),
        ("width", X[:3, :-1], y[:3], {}),
        ("no rows", X[:0], y[:0], {}),
        ("int X", np.ones((2, X.shape[1]), dtype=np.int64), y[:2], {}),
        ("fortran X", np.asfortranarray(X[:4]), y[:4], {}),
        ("list X", X[:2].tolist(), list(y[:2]), {}),
        ("csc X", sp.csc_matrix(X[:4]), y[:4], {}),
        ("unsorted csr", unsorted, y[:4], {}),
        ("duplicate csr", duplicated, y[:1], {}),
        ("out-of-range csr", out_of_range, y[:4], {}),
        ("unknown label", X[:2], np.array([1, 7]), {}),
        ("string label", X[:1], ["a"], {}),
        ("nan label", X[:1], [np.nan], {}),
        ("2-D labels", X[:2], y[:2].reshape(-1, 1), {}),
        ("short labels", X[:3], y[:2], {}),
        ("object labels", X[:2], np.array([1, -1], dtype=object), {}),
        ("other classes", X[:2], y[:2], {"classes": [0, 1]}),
        ("same classes", X[:2], y[:2], {"classes": np.array([1.0, -1.0])}),
        ("sample_weight", X[:2], y[:2], {"sample_weight": np.ones(2)}),
    ]


def outcome(model, X, y, extra):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model.partial_fit(X, y, **extra)
        except Exception as error:  # noqa: BLE001 - the outcome is compared
            return type(error).__name__, str(error)
    return "accepted", None


@pytest.mark.parametrize("cls", FAST, ids=lambda c: c.__name__)
def test_odd_input_gets_the_outcome_of_the_full_path(cls, monkeypatch):
    X, y = stream()
    for name, bad_X, bad_y, extra in odd_inputs(X, y):
        results = []
        for fast in (True, False):
            with monkeypatch.context() as patch:
                if not fast:
                    patch.setattr(BaseStreamingAUC, "_quick_chunk", lambda self, *args: None)
                model = make(cls).partial_fit(X[:20], y[:20], classes=[-1, 1])
                model.partial_fit(X[20:21], y[20:21])  # the fast path has seen the learner
                before = snapshot(vars(model))
                result = outcome(model, bad_X, bad_y, extra)
                if result[0] != "accepted":
                    assert_same_state(before, snapshot(vars(model)), f"{name}: model")
                results.append((result, snapshot(vars(model))))
        (fast_result, fast_state), (full_result, full_state) = results
        assert fast_result == full_result, name
        assert_same_state(full_state, fast_state, f"{name}: model")


@pytest.mark.parametrize("cls", FAST, ids=lambda c: c.__name__)
def test_a_changed_parameter_is_validated_again(cls, fast_calls):
    if "shuffle" not in cls._parameter_constraints:
        pytest.skip(f"{cls.__name__} does not declare its parameters (tests/test_params.py)")
    X, y = stream()
    model = make(cls).partial_fit(X[:20], y[:20], classes=[-1, 1])
    model.partial_fit(X[20:21], y[20:21])
    before = snapshot(_state.state_items(model))
    model.set_params(shuffle="yes")
    with pytest.raises(InvalidParameterError, match="'shuffle' parameter"):
        model.partial_fit(X[21:22], y[21:22])
    assert_same_state(before, snapshot(_state.state_items(model)))
    model.shuffle = 0  # assigned directly, not through set_params
    with pytest.raises(InvalidParameterError, match="'shuffle' parameter"):
        model.learn_one(X[21], y[21])
    assert_same_state(before, snapshot(_state.state_items(model)))
    model.shuffle = False
    model.partial_fit(X[21:22], y[21:22])
    assert model.n_samples_seen_ == 22
    assert len(fast_calls) == 2


def test_a_changed_parameter_reaches_the_cross_parameter_checks():
    from aucstream.univariate import UnivariateOnline

    X, y = stream()
    model = UnivariateOnline(eta=0.5).partial_fit(X[:20], y[:20])
    model.partial_fit(X[20:21], y[20:21])
    before = snapshot(_state.state_items(model))
    model.set_params(lam=2.0)  # eta * lam = 1: refused by _check_params only
    with pytest.raises(InvalidParameterError, match="eta \\* lam < 1"):
        model.partial_fit(X[21:22], y[21:22])
    assert_same_state(before, snapshot(_state.state_items(model)))


def test_a_pipeline_validates_its_steps_once_and_a_new_step_again(monkeypatch):
    """A pipeline's own checks of its steps (their methods, their type) are made once
    per step object: one example at a time they are not made again (scikit-learn's
    validation cost more than the rest of the call); a step replaced is checked."""
    from aucstream import SOLAM, StreamPipeline
    from aucstream.preprocessing import OnlineStandardScaler

    X, y = stream()
    model = StreamPipeline(OnlineStandardScaler(), SOLAM()).partial_fit(X[:20], y[:20])
    calls = []
    validate = StreamPipeline._validate_params
    monkeypatch.setattr(
        StreamPipeline, "_validate_params", lambda m: calls.append(1) or validate(m)
    )
    for i in range(20, 40):
        model.predict_proba_one(X[i])
        model.learn_one(X[i], y[i])
    assert len(calls) <= 1
    model.estimator = object()  # assigned directly: a step without the methods
    before = model.estimator_
    with pytest.raises(InvalidParameterError, match="'estimator' parameter"):
        model.learn_one(X[40], y[40])
    assert model.estimator_ is before and model.n_samples_seen_ == 40


class _Interrupt(BaseException):
    pass


def _spoilers():
    """Ways a kernel call can go wrong after it has changed the state."""

    def nan_in_place(model):
        for value in _state.state_items(model).values():
            if isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.size:
                value.flat[0] = np.nan
                return

    def replaced_then_interrupt(model):
        model.n_samples_seen_ = -5
        model.new_attribute_ = np.ones(3)
        for name, value in list(_state.state_items(model).items()):
            if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                setattr(model, name, value + 1.0)
        raise _Interrupt

    def rng_drawn_then_zero_division(model):
        model._rng.random(7)
        raise ZeroDivisionError("division by zero")

    return {
        "nan": (nan_in_place, FloatingPointError),
        "replaced": (replaced_then_interrupt, _Interrupt),
        "rng": (rng_drawn_then_zero_division, FloatingPointError),
    }


@pytest.mark.parametrize("spoiler", ["nan", "replaced", "rng"])
@pytest.mark.parametrize("cls", FAST, ids=lambda c: c.__name__)
def test_a_failed_fast_call_is_rolled_back_exactly(cls, spoiler, monkeypatch, fast_calls):
    X, y = stream()
    model = make(cls).partial_fit(X[:20], y[:20], classes=[-1, 1])
    model.partial_fit(X[20:21], y[20:21])
    before = snapshot(vars(model))
    reference = pickle.loads(pickle.dumps(model))
    spoil, error = _spoilers()[spoiler]

    def spoilt(self, chunk, update):
        update(self, chunk)
        spoil(self)

    with monkeypatch.context() as patch:
        patch_update(patch, cls, spoilt)
        if spoiler == "rng":  # a draw breaks a learner's word that its kernel uses no generator
            patch.setattr(cls, "_read_only_state", lambda self, y_pm, chunk=None: ())
        for call in (
            lambda: model.partial_fit(X[21:23], y[21:23]),
            lambda: model.partial_fit(X[21:22], y[21:22]),
            lambda: model.learn_one(X[21], y[21]),
        ):
            with pytest.raises(error):
                call()
            assert fast_calls
            assert_same_state(before, snapshot(vars(model)))
    # the learner goes on exactly as one that never saw the failed call
    model.partial_fit(X[21:30], y[21:30])
    reference.partial_fit(X[21:30], y[21:30])
    assert_same_state(snapshot(vars(reference)), snapshot(vars(model)))


def test_divergence_names_the_array_on_the_fast_path(monkeypatch):
    from aucstream import SOLAM

    X, y = stream()
    model = SOLAM().partial_fit(X[:20], y[:20])
    model.partial_fit(X[20:21], y[20:21])

    def spoilt(self, chunk, update):
        update(self, chunk)
        self.avg_corr_[2] = np.inf

    patch_update(monkeypatch, SOLAM, spoilt)
    with pytest.raises(FloatingPointError, match="its state avg_corr_ became infinite or NaN"):
        model.learn_one(X[21], y[21])


class _Component:
    """Stands for a covariance summary or reservoir (module name starts with aucstream)."""


_Component.__module__ = "aucstream.tests_component"


def _holder():
    class Holder:
        pass

    h = Holder()
    part = _Component()
    part.sketch_ = np.arange(12.0).reshape(3, 4)
    part.fortran_ = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    part.strided_ = np.arange(10.0)[::2]
    part.labels_ = np.array(["a", "b"], dtype=object)
    part.size = 3
    h.w_ = np.zeros(5)
    h.counts_ = np.zeros(2, dtype=np.int64)
    h.flags_ = np.zeros(3, dtype=bool)
    h.stats_ = [part, _Component()]
    h.pair_ = (np.ones(2), np.float32([1.0, 2.0]))
    h.total_ = 1.5
    h._rng = np.random.default_rng(3)
    h.eta = 0.1
    return h


def test_flat_state_restores_every_kind_of_member():
    h = _holder()
    before = snapshot(vars(h))
    flat = _state.FlatState(h)
    assert flat.is_current(h) and flat.all_finite()
    saved = flat.save()
    part = h.stats_[0]
    h.w_ += 1.0
    h.counts_[1] = 7
    h.flags_[0] = True
    part.sketch_[1, 2] = np.nan
    part.fortran_[1, 1] = -3.0
    part.strided_[2] = np.inf
    part.labels_[0] = "z"
    part.size = 4
    part.extra_ = 1
    h.pair_[1][0] = np.nan
    h.stats_.append(_Component())
    h.stats_[1] = _Component()
    h.total_ = float("nan")
    h._rng.random(5)
    h.w_ = np.ones(5)
    assert not flat.is_current(h)
    flat.restore(saved)
    assert_same_state(before, snapshot(vars(h)))
    assert h.stats_[0] is part
    assert flat.is_current(h)


def test_an_opaque_member_is_checked_by_identity_and_not_entered():
    """A walk with an opaque component (a search's candidate) saves, restores and
    checks everything else, holds the component by identity (replacing it makes the
    walk stale) and leaves its contents alone."""
    h = _holder()
    part = h.stats_[0]
    flat = _state.FlatState(h, opaque=frozenset({id(part)}))
    assert id(part.sketch_) not in map(id, flat._arrays)
    assert vars(part) not in flat._dicts
    before = snapshot(vars(h))
    saved = flat.save()
    h.w_ += 1.0
    part.sketch_[0, 0] = 99.0
    part.size = 4
    part.sketch_[1, 1] = np.nan
    assert flat.is_current(h) and flat.all_finite()  # contents not checked
    flat.restore(saved)
    assert part.sketch_[0, 0] == 99.0 and part.size == 4  # not restored
    np.testing.assert_array_equal(h.w_, before["w_"])
    h.stats_[0] = _Component()
    assert not flat.is_current(h)


@pytest.mark.parametrize(
    "where",
    ["w_", "sketch", "fortran", "strided", "float32", "total_", None],
)
def test_flat_state_finds_every_non_finite_value(where):
    h = _holder()
    flat = _state.FlatState(h)
    part = h.stats_[0]
    targets = {
        "w_": lambda v: h.w_.__setitem__(4, v),
        "sketch": lambda v: part.sketch_.__setitem__((2, 3), v),
        "fortran": lambda v: part.fortran_.__setitem__((0, 2), v),
        "strided": lambda v: part.strided_.__setitem__(4, v),
        "float32": lambda v: h.pair_[1].__setitem__(1, v),
        "total_": lambda v: setattr(h, "total_", v),
    }
    for value in (np.nan, np.inf, -np.inf):
        if where is not None:
            targets[where](value)
        expected = where is None
        assert flat.all_finite() is expected
        assert (_state.first_non_finite(h) is None) is expected


@pytest.mark.parametrize("n", [1, 3, 4, 5, 8, 15, 16, 17, 31, 64, 1000])
def test_compiled_finiteness_check_at_every_position(n):
    rng = np.random.default_rng(n)
    a = rng.normal(size=n) * 10.0 ** rng.integers(-300, 300, size=n)
    h = type("H", (), {})()
    h.a_ = a
    flat = _state.FlatState(h)
    assert flat.all_finite()
    for position in range(n):
        for value in (np.nan, np.inf, -np.inf):
            old = a[position]
            a[position] = value
            assert not flat.all_finite(), (position, value)
            a[position] = old
    a[:] = np.finfo(np.float64).max  # sums overflow but every value is finite
    assert flat.all_finite()


def test_table_calls_skip_the_dispatch_only_for_tables_of_the_compiled_type():
    """A plan's compiled calls go straight to the entry point for an int64 2-D
    C-contiguous writeable table; any other table goes through numba's dispatch."""
    a = np.arange(6.0)
    good = np.array([[a.ctypes.data, a.size]], dtype=np.int64)
    direct = _state.table_call(_state._all_finite, good)
    assert direct.func is not _state._all_finite and direct() is True
    frozen = good.copy()
    frozen.flags.writeable = False
    wide = np.zeros((2, 4), dtype=np.int64)  # two rows: a slice of columns is strided
    wide[:, :2] = [good[0], good[0]]
    for other in (frozen, wide[:, :2], good.astype(np.int32), good.ravel()):
        assert _state.table_call(_state._all_finite, other).func is _state._all_finite
    a[3] = np.nan
    assert direct() is False
    assert _state.table_call(_state._all_finite, wide[:, :2])() is False


def test_large_states_use_fresh_shadows(monkeypatch):
    monkeypatch.setattr(_state, "SHADOW_LIMIT", 8)
    h = _holder()
    before = snapshot(vars(h))
    flat = _state.FlatState(h)
    saved = flat.save()
    h.w_[:] = 5.0
    h.stats_[0].sketch_[:] = 2.0
    flat.restore(saved)
    assert_same_state(before, snapshot(vars(h)))


def test_the_fast_path_keeps_nothing_in_the_learner(fast_calls):
    from aucstream import OPAUC

    X, y = stream()
    fast = OPAUC().partial_fit(X[:20], y[:20])
    names = set(vars(fast))
    for i in range(20, 30):
        fast.learn_one(X[i], y[i])
    assert fast_calls
    assert set(vars(fast)) == names
    copy = pickle.loads(pickle.dumps(fast))
    assert _fastpath.FAST.get(copy) is None
    copy.learn_one(X[30], y[30])
    fast.learn_one(X[30], y[30])
    assert_same_state(snapshot(vars(fast)), snapshot(vars(copy)))


def test_the_cache_of_a_learner_goes_with_it():
    """``FAST`` finds a learner's cache by identity; a learner collected takes its entry
    along, so an object made later at the same address finds nothing."""
    import gc

    from aucstream import SOLAM

    X, y = stream()
    registry = _fastpath.ByIdentity()
    model = SOLAM().partial_fit(X[:20], y[:20])
    cache = registry[model] = _fastpath.FastCache()
    assert registry.get(model) is cache and registry[model] is cache
    key = id(model)
    del model
    gc.collect()
    assert key not in registry._data
    other = SOLAM()
    assert registry.get(other) is None
    with pytest.raises(KeyError):
        registry[other]


def test_a_state_replaced_between_calls_is_walked_again(fast_calls):
    from aucstream import SOLAM

    X, y = stream()
    model = SOLAM().partial_fit(X[:20], y[:20])
    model.learn_one(X[20], y[20])
    reference = pickle.loads(pickle.dumps(model))
    model.u_ = model.u_.copy()  # the walk made at the last call is stale now
    model.learn_one(X[21], y[21])
    reference.learn_one(X[21], y[21])
    assert_same_state(snapshot(vars(reference)), snapshot(vars(model)))
    assert _fastpath.FAST[model].flat.is_current(model)


def test_walks_of_learners_alike_share_compiled_code_but_check_their_own_state():
    """The check of a walk is compiled once per source (names and sizes only): two
    learners of one shape share it, and each walk still checks its own objects."""
    from aucstream import SOLAM

    X, y = stream()
    a, b = (SOLAM().partial_fit(X[:20], y[:20]) for _ in range(2))
    walk_a, walk_b = _state.FlatState(a), _state.FlatState(b)
    assert walk_a.current.__code__ is walk_b.current.__code__
    assert walk_a.current(a) and walk_b.current(b)
    assert not walk_a.current(b) and not walk_b.current(a)
    a.u_ = a.u_.copy()
    assert not walk_a.current(a) and walk_b.current(b)


def test_dict_rows_are_checked_like_arrays():
    from aucstream import SOLAM

    X, y = stream()
    model = SOLAM().partial_fit(X[:20], y[:20])
    before = snapshot(vars(model))
    for bad, message in (
        ({True: 1.0}, "integer indices"),
        ({"a": 1.0}, "integer indices"),
        ({7: 1.0}, r"outside \[0, 6\)"),
        ({-1: 1.0}, r"outside \[0, 6\)"),
        ({1: "x"}, "numbers"),
        ({1: np.nan}, "NaN"),
        ({1: np.inf}, "infinity"),
        ({2**70: 1.0}, r"index 1180591620717411303424 is outside \[0, 6\)"),
        ({1: "1.5"}, "feature 1 has the value '1.5' \\(str\\)"),
        ({0: 1.0, 2: None}, "feature 2 has the value None"),
        ({1: [1.0]}, "real numbers"),  # (a 2-D value array reached the kernel)
        ({1: 1 + 2j}, "real numbers"),
        ({1: 10**400}, "range of float64"),
    ):
        with pytest.raises(ValueError, match=message):
            model.learn_one(bad, 1)
        assert_same_state(before, snapshot(vars(model)))
    model.learn_one({3: 0.5, 0: -1.0, np.int64(5): Decimal(2)}, -1)  # real numbers of any type
    reference = SOLAM().partial_fit(X[:20], y[:20])
    reference.partial_fit(np.array([[-1.0, 0, 0, 0.5, 0, 2.0]]), [-1])
    # a dict row is sparse, so it stores no zeros: compare the scores
    np.testing.assert_allclose(model.coef_, reference.coef_, rtol=1e-12, atol=1e-15)


def test_a_second_process_does_not_compile_the_fast_path_again():
    """The compiled helpers are cached on disk: a new interpreter loads them."""
    code = """
import numpy as np, scipy.sparse as sp
from aucstream import SOLAM, _chunks, _state
X = np.abs(np.random.default_rng(0).normal(size=(30, 4))); y = np.arange(30) % 2
model = SOLAM().partial_fit(X[:10], y[:10])
model.partial_fit(X[10:11], y[10:11]); model.partial_fit(sp.csr_matrix(X[11:13]), y[11:13])
model.learn_one({0: 1.0, 2: 0.5}, 1)
fns = [_chunks._values_ok, _chunks._csr_ok, _chunks.load_row_in_place, _state._copy_table,
       _state._all_finite]
print(sum(len(f.stats.cache_misses) for f in fns), sum(len(f.stats.cache_hits) for f in fns))
"""
    exec(code, {})  # compiled (or loaded) in this process first, so cached on disk
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    misses, hits = map(int, run.stdout.split())
    assert misses == 0, run.stdout
    assert hits >= 5


@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.int32, np.float32])
@pytest.mark.parametrize("value", [1, -1, 7, 0.5, "nan"])
def test_one_label_arrays_get_the_outcome_of_the_full_path(dtype, value, monkeypatch):
    """A one-row label array of the classes' dtype is compared as Python values."""
    from aucstream import SOLAM

    X, y = stream()
    if value == "nan" and np.dtype(dtype).kind != "f":
        pytest.skip("no NaN of an integer dtype")
    label = np.array([np.nan if value == "nan" else value]).astype(dtype)
    results = []
    for fast in (True, False):
        with monkeypatch.context() as patch:
            if not fast:
                patch.setattr(BaseStreamingAUC, "_quick_chunk", lambda self, *args: None)
            model = SOLAM(random_state=0).partial_fit(
                X[:20], y[:20].astype(np.int64), classes=[-1, 1]
            )
            model.partial_fit(X[20:21], y[20:21].astype(np.int64))
            results.append((outcome(model, X[21:22], label, {}), snapshot(vars(model))))
    (fast_result, fast_state), (full_result, full_state) = results
    assert fast_result == full_result
    assert_same_state(full_state, fast_state)


def _csr_ok_reference(indptr, indices, data, n_cols) -> bool:
    """The structure and values :func:`aucstream._chunks._csr_ok` accepts, row by row."""
    n = len(indptr) - 1
    if indptr[0] != 0 or any(indptr[r + 1] < indptr[r] for r in range(n)):
        return False
    if indptr[n] > len(indices) or indptr[n] > len(data):
        return False
    for r in range(n):
        row = list(indices[indptr[r] : indptr[r + 1]])
        if any(c < 0 or c >= n_cols for c in row) or any(b <= a for a, b in zip(row, row[1:])):
            return False
    return bool(np.all(np.abs(data) < 1e150))


@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
def test_the_compiled_csr_check_agrees_with_a_row_by_row_reference(index_dtype):
    """Random structures, valid and spoiled in every way the check looks for (rows
    that fall, repeat or leave the width, also at row starts and around empty rows;
    indptr that decreases or runs past the arrays; large or non-finite values)."""
    rng = np.random.default_rng(0)
    outcomes = set()
    for trial in range(3000):
        n, width = int(rng.integers(1, 6)), int(rng.integers(1, 8))
        lengths = rng.integers(0, width + 1, size=n) * (rng.random(n) < 0.8)
        rows = [np.sort(rng.choice(width, size=k, replace=False)) for k in lengths]
        indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        indices = np.concatenate(rows + [np.zeros(0)]).astype(np.int64)
        data = rng.normal(size=indices.shape[0] + int(rng.integers(0, 2)))
        spoil = trial % 8
        if spoil == 1 and indices.size:
            indices[rng.integers(indices.size)] = rng.integers(-2, width + 2)
        elif spoil == 2 and indices.size > 1:
            a = int(rng.integers(1, indices.size))
            indices[a] = indices[a - 1] - int(rng.integers(0, 2))
        elif spoil == 3 and n > 1:
            indptr[int(rng.integers(1, n))] += int(rng.integers(-2, 3))
        elif spoil == 4:
            indptr[-1] += int(rng.integers(1, 3))
        elif spoil == 5 and data.size:
            data[rng.integers(data.size)] = rng.choice([np.nan, np.inf, -np.inf, 1e200])
        elif spoil == 6:
            indptr[0] = int(rng.integers(1, 3))
        expected = _csr_ok_reference(indptr, indices, data, width)
        got = _chunks._csr_ok(indptr, indices.astype(index_dtype), data, width)
        assert got == expected, (indptr, indices, data, width)
        outcomes.add(expected)
    assert outcomes == {True, False}


def test_the_value_check_finds_a_bad_value_anywhere():
    values = np.ones(2000)
    assert _chunks._values_ok(values)
    for bad in (np.nan, np.inf, -np.inf, 1e150, -2e200):
        for where in (0, 511, 512, 1023, 1999):
            spoiled = values.copy()
            spoiled[where] = bad
            assert not _chunks._values_ok(spoiled)


@pytest.mark.parametrize(
    ("labels", "classes"),
    [
        ([1, -1, 2, 0], [-1, 1]),
        ([1.0, -1.0, np.nan, 0.5], [-1, 1]),
        ([True, False], [0, 1]),
        ([0, 1, 2], [0.0, 1.0]),
        (["yes", "no", "maybe"], ["no", "yes"]),
        ([b"a", b"b", b"c"], [b"a", b"b"]),
        (["1", "0"], [0, 1]),  # kinds that do not compare: np.isin decides
        ([1, 0], ["0", "1"]),
        (np.array(["a", 1], dtype=object), np.array(["a", 1], dtype=object)),
    ],
)
def test_the_label_check_of_the_full_path_agrees_with_isin(labels, classes):
    """partial_fit's check of labels against classes_ (two comparisons where the dtypes
    compare as np.isin does) flags exactly the labels np.isin does not find."""
    y, c = np.asarray(labels), np.asarray(classes)
    np.testing.assert_array_equal(_learning._unknown_labels(y, c), ~np.isin(y, c))


#: Every learner, batch ones included (their ``fit`` sets the width too).
ALL = [cls for _, cls in aucstream.all_estimators()]


def first_inputs(X, y):
    """(name, X, y) of first calls: plain ones, which skip scikit-learn's validation,
    and others, which it must still judge."""
    S = sp.csr_matrix(X)
    continuous = np.where(y > 0, 1.5, 0.5)
    return [
        ("dense", X, y),
        ("csr", S, y),
        ("int64 csr", sp.csr_matrix((S.data, S.indices.astype(np.int64), S.indptr), S.shape), y),
        ("label list", X, list(y)),
        ("float labels", X, y.astype(np.float64)),
        ("string labels", X, np.where(y > 0, "yes", "no")),
        ("bool labels", X, y > 0),
        ("fortran X", np.asfortranarray(X), y),
        ("continuous labels", X, continuous),
        ("huge labels", X, np.where(y > 0, 1e20, 0.0)),
        ("labels beyond int64", X, np.where(y > 0, 2.0**70, 0.0)),
        ("nan label", X, np.where(np.arange(len(y)) == 3, np.nan, y)),
        ("no column", X[:, :0], y),
        ("no rows", X[:0], y[:0]),
        ("nan", np.where(np.arange(X.size).reshape(X.shape) == 7, np.nan, X), y),
        ("magnitude", np.where(np.arange(X.size).reshape(X.shape) == 7, 1e200, X), y),
        ("short labels", X, y[:-1]),
        ("2-D labels", X, y.reshape(-1, 1)),
        ("1-D X", X[0], y[:1]),
        ("float32 X", X.astype(np.float32), y),
    ]


def first_outcome(model, X, y, fit: bool):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if fit:
                model.fit(X, y)
            else:
                model.partial_fit(X, y, classes=np.unique(np.asarray(y)))
        except Exception as error:  # noqa: BLE001 - the outcome is compared
            return type(error).__name__, str(error)
    return "accepted", None


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_a_first_call_on_plain_input_skips_only_the_general_validation(cls, monkeypatch):
    """A first call (``fit``, the first ``partial_fit``) on a float64 array or CSR
    matrix of plainly valid rows and labels that are not continuous skips
    scikit-learn's ``validate_data`` and ``check_classification_targets`` (1.5 ms on
    10,000 rows): the same outcome (model, or error and message) as with them, and
    the same width and no feature names; anything else still goes through them."""
    X, y = stream(n=40)
    calls = []
    original = _learning.validate_data
    monkeypatch.setattr(
        _learning, "validate_data", lambda *a, **k: calls.append(1) or original(*a, **k)
    )
    seeded = _learning.make_rng  # unseeded generators (of candidates, say) seeded alike
    monkeypatch.setattr(_learning, "make_rng", lambda state: seeded(0 if state is None else state))
    for name, first_X, first_y in first_inputs(X, y):
        for fit in (True,) if cls.is_batch else (False, True):
            results = []
            for plain in (True, False):
                with monkeypatch.context() as patch:
                    if not plain:
                        patch.setattr(_learning, "_plain_first_input", lambda X, y: None)
                    calls.clear()
                    model = make(cls)
                    model.feature_names_in_ = np.array(["stale"], dtype=object)
                    result = first_outcome(model, first_X, first_y, fit)
                    results.append((result, snapshot(vars(model)), len(calls), model))
            (plain_result, plain_state, plain_calls, model), (full_result, full_state, *_) = results
            what = f"{name}, {'fit' if fit else 'partial_fit'}"
            assert plain_result == full_result, what
            assert_same_state(full_state, plain_state, f"{what}: model")
            skipped = name in {"dense", "csr", "int64 csr", "label list", "float labels"}
            skipped |= name in {"string labels", "bool labels"}
            if skipped and plain_result[0] == "accepted" and model._tags.fast_path:
                assert plain_calls == 0, what
                assert model.n_features_in_ == X.shape[1] and "feature_names_in_" not in vars(
                    model
                ), what


def test_the_fast_path_setting_is_per_thread_and_checked():
    """``set_config(fast_path=...)`` is a bool, per thread, and restored by
    ``config_context`` (the checks of aucstream.checks run under both values)."""
    import threading

    from aucstream import config_context, get_config, set_config
    from aucstream._config import fast_path_on

    seen = []
    with config_context(fast_path=False):
        other = threading.Thread(target=lambda: seen.append(fast_path_on()))
        other.start()
        other.join()
        seen.append(fast_path_on())
        assert get_config()["fast_path"] is False
    seen.append(fast_path_on())
    assert seen == [True, False, True]
    for bad in (1, "no", None.__class__):
        with pytest.raises(TypeError, match="fast_path"):
            set_config(fast_path=bad)
    assert fast_path_on() is True
