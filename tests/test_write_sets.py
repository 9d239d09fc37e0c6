"""Write sets: what a chunk can not write is neither copied, restored nor checked.

A learner may declare, per chunk, state that learning the chunk leaves unchanged
(``BaseStreamingAUC._read_only_state``: OPAUC and AdaOAM declare the summary of the
class no example of the chunk belongs to, learners whose update draws no random
numbers their generator). The fast path's transaction and finiteness check then skip
it (:meth:`aucstream._state.FlatState.plan`). Two things must hold:

- the declaration is true: the declared arrays keep every byte (and a declared
  generator its state) over many calls of the other class, through every input form;
- a rejected call still leaves the learner bit for bit as before, whichever class it
  holds and in whichever order the classes come, and the learner then goes on as one
  that never saw the call.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_stream, patch_update

from aucstream import (
    FSAUC,
    OAM,
    OPAUC,
    SOLAM,
    SOLAML1,
    AdaOAM,
    ConfidenceWeighted,
    CostSensitivePA,
    OnlinePAUC,
    PassiveAggressive,
    Perceptron,
    UnivariateOnline,
    _state,
)
from aucstream._base import BaseStreamingAUC
from aucstream._fastpath import FAST

#: (name, factory) of the learners whose declarations are tested.
DECLARING = [
    ("OPAUC-full", lambda: OPAUC(eta=0.05)),
    ("OPAUC-sparse", lambda: OPAUC(eta=0.05, covariance="sparse", sketch_size=2)),
    ("AdaOAM", lambda: AdaOAM()),
    ("OnlinePAUC", lambda: OnlinePAUC(buffer_size=8)),
    ("OAM", lambda: OAM(buffer_size=8)),
    ("OAM-sequential", lambda: OAM(buffer_size=8, update="seq")),
    ("OnlinePAUC-two-way", lambda: OnlinePAUC(max_fpr=0.3, min_tpr=0.2, buffer_size=8)),
]
IDS = [name for name, _ in DECLARING]
FACTORIES = [factory for _, factory in DECLARING]


def stream(n=200, d=7, seed=0):
    X, y = make_stream(n, d, seed=seed, sparsity=0.4)
    y[:2] = [-1, 1]
    return X, y


def state_bytes(obj, path="model") -> dict:
    """Every array's bytes (with dtype and shape), generator state and scalar of a
    learner's state, by path: equal dicts mean bit-for-bit equal states."""
    out = {}

    def walk(value, where):
        if isinstance(value, np.ndarray):
            out[where] = (value.dtype.str, value.shape, value.tobytes())
        elif isinstance(value, (list, tuple)):
            out[where] = (type(value).__name__, len(value))
            for i, v in enumerate(value):
                walk(v, f"{where}[{i}]")
        elif isinstance(value, np.random.Generator):
            out[where] = repr(value.bit_generator.state)
        elif type(value).__module__.startswith("aucstream") and hasattr(value, "__dict__"):
            out[where] = (type(value).__name__, tuple(vars(value)))
            for k, v in vars(value).items():
                walk(v, f"{where}.{k}")
        else:
            out[where] = repr(value)

    for name, value in vars(obj).items():
        walk(value, f"{path}.{name}")
    return out


def assert_same_bytes(before: dict, after: dict) -> None:
    assert before.keys() == after.keys(), before.keys() ^ after.keys()
    differ = [k for k in before if before[k] != after[k]]
    assert not differ, differ


def declared_bytes(model, y_pm) -> dict:
    """The bytes of what ``model`` declares read-only for a chunk of labels ``y_pm``."""
    declared = model._read_only_state(np.asarray(y_pm, dtype=np.float64))
    holder = type("Declared", (), {})()
    for i, value in enumerate(declared):
        setattr(holder, f"d{i}", value)
    return state_bytes(holder, "declared")


def one_class_calls(model, X, y, label):
    """Rows of class ``label`` through every one-row input form, then a chunk."""
    rows = np.flatnonzero(y == label)
    S = sp.csr_matrix(X)
    for k, i in enumerate(rows[:-3]):
        form = k % 4
        if form == 0:
            model.partial_fit(X[i : i + 1], y[i : i + 1])
        elif form == 1:
            model.partial_fit(S[i : i + 1], [y[i]])
        elif form == 2:
            model.learn_one(X[i], y[i])
        else:
            model.learn_one({j: v for j, v in enumerate(X[i]) if v != 0.0}, y[i])
    model.partial_fit(X[rows[-3:]], y[rows[-3:]])  # a chunk of three rows of the class
    model.test_then_train(X[rows[-3:]], y[rows[-3:]])


def count_fast_path_calls(monkeypatch) -> list:
    """A list that gets one item per call of the fast path (``_quick_learn``)."""
    calls = []
    learn = BaseStreamingAUC._quick_learn
    monkeypatch.setattr(
        BaseStreamingAUC,
        "_quick_learn",
        lambda self, *args, **kwargs: calls.append(1) or learn(self, *args, **kwargs),
    )
    return calls


@pytest.mark.parametrize("factory", FACTORIES, ids=IDS)
@pytest.mark.parametrize("label", [-1, 1])
def test_a_kernel_does_not_write_what_it_declares(factory, label, monkeypatch):
    X, y = stream()
    model = factory().partial_fit(X[:20], y[:20], classes=[-1, 1])
    declared = model._read_only_state(np.array([float(label)]))
    assert declared, "the learner declares nothing for a one-class chunk"
    held = model.buffers_ if isinstance(model, (OAM, OnlinePAUC)) else model.stats_
    assert held[0 if label > 0 else 1] is declared[0]  # (the other class's)
    calls = count_fast_path_calls(monkeypatch)
    before = declared_bytes(model, [label])
    everything = state_bytes(model)
    one_class_calls(model, X, y, label)
    assert calls, "the fast path was not taken"
    assert_same_bytes(before, declared_bytes(model, [label]))
    assert state_bytes(model) != everything  # the calls did learn


@pytest.mark.parametrize("factory", FACTORIES, ids=IDS)
def test_mixed_chunks_declare_nothing(factory):
    X, y = stream()
    model = factory().partial_fit(X[:20], y[:20], classes=[-1, 1])
    assert model._read_only_state(np.array([1.0, -1.0, 1.0])) == ()
    assert model._read_only_state(np.array([-1.0, -1.0])) != ()


def test_oam_with_forgetting_or_unbounded_buffers_declares_nothing():
    """Every example ticks both biased buffers; an unbounded buffer may be made anew."""
    X, y = stream()
    for model in (OAM(buffer_size=8, half_life=50), OAM(buffer_size=None)):
        model.partial_fit(X[:20], y[:20], classes=[-1, 1])
        assert model._read_only_state(np.array([1.0])) == ()


def test_low_rank_opauc_declares_nothing():
    X, y = stream()
    for kind in ("randomized", "fd", "hash"):
        model = OPAUC(covariance=kind, sketch_size=3).partial_fit(X[:20], y[:20])
        assert model._read_only_state(np.array([1.0])) == ()


class _Interrupt(BaseException):
    pass


def _fail(how, cls, monkeypatch):
    """Make the next fast call of ``cls`` fail in the way ``how`` says (after the
    kernel has written what it may write)."""
    if how == "interrupt":

        def interrupted(self, chunk, update):
            update(self, chunk)
            raise KeyboardInterrupt

        patch_update(monkeypatch, cls, interrupted)
    elif how == "interrupt in the calibration":
        from aucstream import _base
        from aucstream._runtime import _entry

        def interrupted(*args):
            raise _Interrupt

        if cls()._tags.kernel_calibrates:  # the kernel calibrated: interrupt the check after it
            monkeypatch.setattr(_state.FlatState, "all_finite", interrupted)
            # (the per-example entry checks in one compiled call, which nothing can
            # interrupt: its interrupt after the update is the case "interrupt")
            monkeypatch.setattr(_entry.OneStep, "learn", lambda *args: False)
        else:
            monkeypatch.setattr(_base._calibration, "observe", interrupted)
    elif how == "arithmetic":

        def failing(self, chunk, update):
            update(self, chunk)
            raise ZeroDivisionError("division by zero")

        patch_update(monkeypatch, cls, failing)
    elif how == "divergence":

        def diverging(self, chunk, update):
            update(self, chunk)
            self.w_[0] = np.inf  # as a step that overflows would leave it

        patch_update(monkeypatch, cls, diverging)
    else:  # pragma: no cover
        raise ValueError(how)


ERRORS = {
    "interrupt": KeyboardInterrupt,
    "interrupt in the calibration": _Interrupt,
    "arithmetic": FloatingPointError,
    "divergence": FloatingPointError,
}


@pytest.mark.parametrize("how", list(ERRORS))
@pytest.mark.parametrize("factory", FACTORIES, ids=IDS)
def test_a_rejected_one_row_call_restores_everything(factory, how, monkeypatch):
    X, y = stream()
    model = factory().partial_fit(X[:20], y[:20], classes=[-1, 1])
    reference = pickle.loads(pickle.dumps(model))
    neg, pos = np.flatnonzero(y[20:] < 0)[:4] + 20, np.flatnonzero(y[20:] > 0)[:4] + 20
    # one of each class, then the classes' roles swapped, then the first class again:
    # every plan is used once made and once found again
    order = [neg[0], pos[0], pos[1], neg[1], neg[2], pos[2]]
    for i in order:
        before = state_bytes(model)
        with monkeypatch.context() as patch:
            _fail(how, type(model), patch)
            with pytest.raises(ERRORS[how]):
                if i % 2:
                    model.learn_one(X[i], y[i])
                else:
                    model.partial_fit(X[i : i + 1], y[i : i + 1])
        assert_same_bytes(before, state_bytes(model))
        # the call that succeeds goes on exactly as the reference
        model.partial_fit(X[i : i + 1], y[i : i + 1])
        reference.partial_fit(X[i : i + 1], y[i : i + 1])
        assert_same_bytes(state_bytes(reference), state_bytes(model))
    assert FAST[model].flat is not None and FAST[model].flat._plans


@pytest.mark.parametrize("factory", FACTORIES, ids=IDS)
def test_a_rejected_call_with_bad_input_changes_nothing(factory):
    X, y = stream()
    model = factory().partial_fit(X[:20], y[:20], classes=[-1, 1])
    model.learn_one(X[20], y[20])
    before = state_bytes(model)
    bad = X[21:22].copy()
    bad[0, 1] = np.nan
    for call in (
        lambda: model.partial_fit(bad, y[21:22]),
        lambda: model.learn_one(bad[0], y[21]),
        lambda: model.learn_one(X[21], 7),
        lambda: model.partial_fit(np.full((1, X.shape[1]), 1e300), y[21:22]),
    ):
        with pytest.raises(ValueError):
            call()
        assert_same_bytes(before, state_bytes(model))


def test_a_non_finite_declared_array_is_found_at_the_first_check():
    """A state that holds a non-finite value in an array a plan skips (an edited or
    loaded learner) is refused as the full path refuses it: the first check after a
    walk is complete."""
    X, y = stream()
    results = []
    for fast in (True, False):
        model = OPAUC().partial_fit(X[:20], y[:20], classes=[-1, 1])
        model.stats_[1].scatter_[1, 0] = np.nan  # read by no kernel, but state
        model = pickle.loads(pickle.dumps(model))  # a new walk
        before = state_bytes(model)
        neg = int(np.flatnonzero(y[20:] < 0)[0]) + 20
        with pytest.MonkeyPatch.context() as patch:
            if not fast:
                patch.setattr(BaseStreamingAUC, "_quick_chunk", lambda self, *args: None)
            with pytest.raises(FloatingPointError, match=r"stats_\[1\]\.scatter_") as error:
                model.learn_one(X[neg], y[neg])
        assert_same_bytes(before, state_bytes(model))
        results.append(str(error.value))
    assert results[0] == results[1]


# ------------------------------------------------------------------ FlatState plans
class _Component:
    """Stands for a covariance summary (module name starts with aucstream)."""


_Component.__module__ = "aucstream.tests_component"


def _holder():
    class Holder:
        pass

    h = Holder()
    h.w_ = np.zeros(5)
    h.stats_ = [_Component(), _Component()]
    for c, part in enumerate(h.stats_):
        part.sums_ = np.full(4, float(c))
        part.count_ = np.zeros(1, dtype=np.int64)
        part.strided_ = np.arange(10.0)[::2]  # copied by numpy, not the compiled copy
    h.total_ = 1.5
    h._rng = np.random.default_rng(3)
    return h


@pytest.mark.parametrize("shadows", ["kept", "fresh"])
def test_a_plan_copies_restores_and_checks_what_it_does_not_leave_out(shadows, monkeypatch):
    if shadows == "fresh":
        monkeypatch.setattr(_state, "SHADOW_LIMIT", 8)
    h = _holder()
    flat = _state.FlatState(h)
    plan = flat.plan((h.stats_[1], h._rng))
    assert flat.plan((h.stats_[1], h._rng)) is plan  # kept per declaration
    assert flat.plan(()) is flat.plan(()) is not plan
    before = state_bytes(h)
    saved = flat.save(plan)
    # what the plan keeps is restored
    h.w_[:] = 2.0
    h.stats_[0].sums_[1] = -1.0
    h.stats_[0].strided_[2] = 9.0
    h.stats_[0].count_[0] = 4
    h.total_ = 3.0
    flat.restore(saved)
    assert_same_bytes(before, state_bytes(h))
    # what it leaves out is not: the declaration is the caller's word
    saved = flat.save(plan)
    h.stats_[1].sums_[0] = 8.0
    h._rng.random(3)
    flat.restore(saved)
    assert h.stats_[1].sums_[0] == 8.0
    assert state_bytes(h)["model._rng"] != before["model._rng"]


def test_a_plan_checks_everything_until_a_complete_check_passed():
    h = _holder()
    h.stats_[1].sums_[2] = np.nan
    h.stats_[1].strided_[1] = np.inf
    flat = _state.FlatState(h)
    plan = flat.plan((h.stats_[1],))
    assert not flat.all_finite(plan)  # the first check is complete
    assert not flat.all_finite(plan)
    h.stats_[1].sums_[2] = 0.0
    h.stats_[1].strided_[1] = 0.0
    assert flat.all_finite(plan)
    h.stats_[1].sums_[2] = np.nan  # written behind the learner's back: not its write
    assert flat.all_finite(plan)
    assert not flat.all_finite()
    h.w_[3] = np.inf
    assert not flat.all_finite(plan)


def test_declarations_outside_the_walk_are_ignored():
    h = _holder()
    flat = _state.FlatState(h)
    stranger = np.zeros(3)
    plan = flat.plan((stranger, h.stats_[0].sums_))
    saved = flat.save(plan)
    h.stats_[1].sums_[:] = 5.0
    h.stats_[0].sums_[:] = 6.0
    flat.restore(saved)
    assert (h.stats_[1].sums_ == 1.0).all()
    assert (h.stats_[0].sums_ == 6.0).all()


def test_is_current_sees_replaced_added_and_deleted_members():
    h = _holder()
    flat = _state.FlatState(h)
    assert flat.is_current(h) and flat.current(h)
    other = _holder()
    assert not flat.is_current(other)
    for change, undo in (
        (lambda h: setattr(h, "w_", np.zeros(5)), None),
        (lambda h: h.stats_.append(_Component()), lambda h: h.stats_.pop()),
        (lambda h: h.stats_.__setitem__(0, _Component()), None),
        (lambda h: setattr(h.stats_[1], "sums_", np.zeros(4)), None),
        (lambda h: setattr(h.stats_[1], "extra_", 1), lambda h: delattr(h.stats_[1], "extra_")),
    ):
        h = _holder()
        flat = _state.FlatState(h)
        change(h)
        assert not flat.is_current(h)
        if undo is not None:
            undo(h)
            assert flat.is_current(h)
    # a member deleted and another added: same size, a key missing
    h = _holder()
    flat = _state.FlatState(h)
    del h.stats_[0].count_
    h.stats_[0].other_ = 1
    assert not flat.is_current(h)
    # the loop used for very large walks agrees
    h = _holder()
    flat = _state.FlatState(h)
    assert flat._check_records(h)
    h.stats_[0].sums_ = np.zeros(4)
    assert not flat._check_records(h)


def test_a_declaration_of_objects_made_for_the_call_is_not_kept():
    """Plans are kept by the ids of the declared objects; an object made for the call
    (here a list) could share its id with another later, so its plan is not kept."""
    h = _holder()
    flat = _state.FlatState(h)
    plan = flat.plan(([h.stats_[1].sums_],))
    assert not flat._plans
    saved = flat.save(plan)
    h.stats_[0].sums_[:] = 3.0
    flat.restore(saved)
    assert (h.stats_[0].sums_ == 0.0).all()
    assert flat.plan((h.stats_[1],)) is flat.plan((h.stats_[1],))


@pytest.mark.parametrize(
    "factory",
    [
        lambda: SOLAM(random_state=0),
        lambda: SOLAML1(R=0.5, random_state=0),
        lambda: FSAUC(n_samples=400, random_state=0),
        lambda: UnivariateOnline(random_state=0),
        lambda: Perceptron(random_state=0),
        lambda: PassiveAggressive(random_state=0),
        lambda: CostSensitivePA(random_state=0),
        lambda: ConfidenceWeighted(random_state=0),
        lambda: ConfidenceWeighted(average=True, random_state=0),
    ],
    ids=[
        "SOLAM",
        "SOLAML1",
        "FSAUC",
        "UnivariateOnline",
        "Perceptron",
        "PassiveAggressive",
        "CostSensitivePA",
        "ConfidenceWeighted",
        "ConfidenceWeighted-average",
    ],
)
def test_learners_that_draw_nothing_declare_their_generator(factory, monkeypatch):
    """``_tags.update_draws`` False: every call declares the generator, which keeps its state
    through one-row calls of both classes and mixed chunks on the fast path."""
    X, y = stream()
    model = factory().partial_fit(X[:20], y[:20], classes=[-1, 1])
    for labels in ([1.0], [-1.0], [1.0, -1.0]):
        assert model._read_only_state(np.array(labels)) == (model._rng,)
    calls = count_fast_path_calls(monkeypatch)
    before = repr(model._rng.bit_generator.state)
    for label in (-1, 1):
        one_class_calls(model, X, y, label)
    model.partial_fit(X[100:130], y[100:130])
    assert calls, "the fast path was not taken"
    assert repr(model._rng.bit_generator.state) == before
