"""The compiled per-example entry (:class:`aucstream._runtime._entry.OneStep`).

``learn_one`` of a learner seen before goes through one step per layout (dict rows,
1-D float64 rows): a compiled check, load and save, the bound update, a compiled
finiteness check. It must give the model of the full validation bit for bit, refuse
bad rows and labels before any state changes (with the usual errors), undo a call
that diverges or whose kernel raises, and step aside when the state's objects or the
parameters change.
"""

from __future__ import annotations

import ctypes
from functools import partial

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import assert_same_state, make_stream, snapshot

from aucstream import (
    OPAUC,
    SOLAM,
    PassiveAggressive,
    UnivariateOnline,
    config_context,
    get_config,
)
from aucstream._fastpath import FAST
from aucstream._kernels import compiled_entry
from aucstream._runtime._entry import DIVERGED, RAN_OUT, OneStep, _begin_dict

LEARNERS = {
    "SOLAM": lambda: SOLAM(random_state=0),
    "UnivariateOnline": lambda: UnivariateOnline(random_state=0),
    "OPAUC": lambda: OPAUC(eta=0.05, lam=0.01, random_state=0),
    # (a kernel that does not fit the calibration: the step's last call does)
    "PassiveAggressive": lambda: PassiveAggressive(random_state=0),
}


def stream(n: int = 70, d: int = 6):
    X, y = make_stream(n, d, seed=3, sparsity=0.5)
    X[np.arange(n), np.arange(n) % d] += 1.0  # no empty row
    return X, y


def as_dict(row: np.ndarray) -> dict:
    return {int(j): float(row[j]) for j in np.flatnonzero(row)}


@pytest.fixture
def steps(monkeypatch):
    """The examples learnt through a step (its layout each time)."""
    learnt = []
    learn = OneStep.learn

    def counted(self, learner, x, y):
        done = learn(self, learner, x, y)
        if done:
            learnt.append(self.dense)
        return done

    monkeypatch.setattr(OneStep, "learn", counted)
    return learnt


def started(name: str, X, y):
    return LEARNERS[name]().partial_fit(X[:10], y[:10], classes=[-1, 1])


def ready(name: str, X, y, dense: bool):
    """A learner that has learnt rows 10..13 one at a time (its step is made, with the
    fast path on)."""
    model = started(name, X, y)
    for i in range(10, 14):
        model.learn_one(X[i] if dense else as_dict(X[i]), y[i])
    if get_config()["fast_path"]:
        cache = FAST.get(model)
        assert (cache.dense_step if dense else cache.sparse_step) is not None
    return model


@pytest.mark.parametrize("dense", [False, True], ids=["dict", "array"])
@pytest.mark.parametrize("name", LEARNERS)
def test_the_step_gives_the_full_paths_model(name, dense, steps):
    X, y = stream()
    calls = [(X[i] if dense else as_dict(X[i]), y[i]) for i in range(10, len(y))]
    fast = started(name, X, y)
    for x, label in calls:
        fast.learn_one(x, label)
    # (a miss per new plan; a learner that saves rows has one per class and row size)
    assert len(steps) >= 3 * len(calls) // 4, "the step was not used"
    with config_context(fast_path=False):
        full = started(name, X, y)
        for x, label in calls:
            full.learn_one(x, label)
    assert_same_state(snapshot(vars(full)), snapshot(vars(fast)))
    rest = X[10:] if dense else sp.csr_matrix(X[10:])  # (the layout of the rows learnt)
    chunk = started(name, X, y).partial_fit(rest, y[10:])
    np.testing.assert_array_equal(chunk.decision_function(X), fast.decision_function(X))


BAD_DICTS = {
    "key past the width": ({0: 1.0, 6: 1.0}, ValueError),
    "negative key": ({-1: 1.0}, ValueError),
    "NaN": ({0: float("nan")}, ValueError),
    "infinity": ({1: float("inf")}, ValueError),
    "too large": ({2: 1e300}, ValueError),
    "string value": ({0: "1.0"}, (TypeError, ValueError)),
    "None value": ({0: None}, (TypeError, ValueError)),
    "bool key": ({True: 1.0}, (TypeError, ValueError)),
    "float key": ({1.5: 1.0}, (TypeError, ValueError)),
    "string key": ({"x1": 1.0}, (TypeError, ValueError)),
    "more keys than the width": ({j: 1.0 for j in range(7)}, ValueError),
}


@pytest.mark.parametrize("bad", BAD_DICTS)
@pytest.mark.parametrize("name", LEARNERS)
def test_bad_dict_rows_are_refused_before_any_change(name, bad):
    X, y = stream()
    model = ready(name, X, y, dense=False)
    before = snapshot(vars(model))
    row, error = BAD_DICTS[bad]
    with pytest.raises(error):
        model.learn_one(row, 1)
    assert_same_state(before, snapshot(vars(model)))
    # and the step still serves the next good call, as the full path would
    model.learn_one(as_dict(X[20]), y[20])
    with config_context(fast_path=False):
        full = ready(name, X, y, dense=False)
        full.learn_one(as_dict(X[20]), y[20])
    assert_same_state(snapshot(vars(full)), snapshot(vars(model)))


BAD_ARRAYS = {
    "NaN": lambda x: np.where(np.arange(x.size) == 1, np.nan, x),
    "infinity": lambda x: np.where(np.arange(x.size) == 2, -np.inf, x),
    "too large": lambda x: x * 1e300,
    "too narrow": lambda x: x[:-1].copy(),
    "too wide": lambda x: np.append(x, 1.0),
    "strings": lambda x: np.array(["a"] * x.size),
}


@pytest.mark.parametrize("bad", BAD_ARRAYS)
def test_bad_array_rows_and_labels_are_refused_before_any_change(bad):
    X, y = stream()
    model = ready("SOLAM", X, y, dense=True)
    before = snapshot(vars(model))
    with pytest.raises(ValueError):
        model.learn_one(BAD_ARRAYS[bad](X[20].copy()), 1)
    assert_same_state(before, snapshot(vars(model)))
    for label in (2, "1", None, [1]):  # not a class (or not one label)
        with pytest.raises(ValueError):
            model.learn_one(X[20], label)
        assert_same_state(before, snapshot(vars(model)))


def _broken(step: OneStep, how: str):
    """The step's bound update, made to write a NaN (or to raise) after updating."""
    update = step.one.update

    def broken(learner):
        update(learner)
        if how == "nan":
            learner.calibration_[0] = np.nan  # an array the step saves whole
        elif how == "raises":
            raise ZeroDivisionError("float division by zero")
        else:  # interrupted after the update, before its checks (compiled, with them)
            learner.calibration_[0] = 12.5
            raise KeyboardInterrupt

    return broken


@pytest.mark.parametrize("how", ["nan", "raises", "interrupted"])
@pytest.mark.parametrize("dense", [False, True], ids=["dict", "array"])
@pytest.mark.parametrize("name", LEARNERS)
def test_a_call_that_diverges_or_raises_changes_nothing(name, dense, how, monkeypatch):
    X, y = stream()
    model = ready(name, X, y, dense)
    cache = FAST.get(model)
    step = cache.dense_step if dense else cache.sparse_step
    before = snapshot(vars(model))
    step.one.update = _broken(step, how)
    x = X[20] if dense else as_dict(X[20])
    if how == "interrupted":
        with pytest.raises(KeyboardInterrupt):
            model.learn_one(x, y[20])
    else:
        with pytest.raises(FloatingPointError, match="diverged" if how == "nan" else "failed"):
            model.learn_one(x, y[20])
    assert_same_state(before, snapshot(vars(model)))


@pytest.mark.parametrize("name", LEARNERS)
def test_the_step_steps_aside_when_the_state_or_parameters_change(name, steps):
    X, y = stream()
    fast = ready(name, X, y, dense=False)
    with config_context(fast_path=False):
        full = ready(name, X, y, dense=False)
    for model in (fast, full):
        model.set_params(random_state=1)  # a new parameter object: validated and walked again
        model.learn_one(as_dict(X[20]), y[20])
        model.n_samples_seen_ = int(model.n_samples_seen_)  # (the same value)
        arrays = [k for k, v in vars(model).items() if isinstance(v, np.ndarray)]
        setattr(model, arrays[0], getattr(model, arrays[0]).copy())  # a new state object
        for i in range(21, 30):
            model.learn_one(as_dict(X[i]), y[i])
    assert_same_state(snapshot(vars(full)), snapshot(vars(fast)))
    assert steps, "the step was not made again"


def test_the_step_does_not_keep_the_learner_alive():
    import gc
    import weakref

    X, y = stream()
    model = ready("SOLAM", X, y, dense=False)
    ref = weakref.ref(model)
    del model
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("name", LEARNERS)
def test_the_window_is_pushed_after_the_checks_and_not_saved(name):
    """The operating-point windows are left out of the step's saved and checked tables
    (``_entry._window_apart``); the step pushes each score after its checks."""
    X, y = stream()
    model = ready(name, X, y, dense=False)
    step = FAST.get(model).sparse_step
    address = model.score_window_.__array_interface__["data"][0]
    plans = [check[0] for found in step.steps.values() if found for check in found[1]]
    assert plans and step.mode in (1, 2)
    for plan in plans:
        assert not (plan.copy[:, 0] == address).any() and not (plan.back[:, 1] == address).any()
        assert not (plan.floats[:, 0] == address).any()
    pushed = model.score_window_[1, 0]
    model.learn_one(as_dict(X[20]), y[20])
    assert model.score_window_[1, 0] == pushed + 1


def test_the_variant_is_asked_only_when_a_plan_may_depend_on_it(monkeypatch):
    """SOLAM at a width whose rows it does not log keeps its one-row plans by label
    alone and does not ask its ``_plan_variant`` per example (its plans can not depend
    on it); OPAUC, which logs rows and declares what it only reads, does when its
    variant is a function of its own, as here (its engine's own variant, whose answer
    for dict rows without forgetting is fixed, is not asked per call:
    tests/test_proba_one_array.py). The model is the full path's either way (test
    above)."""
    X, y = stream()
    asked = []
    for name, cls in (("SOLAM", SOLAM), ("OPAUC", OPAUC)):
        variant = cls._plan_variant

        def counted(self, chunk, variant=variant, name=name):
            asked.append(name)
            return variant(self, chunk)

        monkeypatch.setattr(cls, "_plan_variant", counted)
        model = ready(name, X, y, dense=False)
        cache = FAST.get(model)
        assert cache.variant_matters is (name == "OPAUC")
        asked.clear()
        for i in range(20, 30):
            model.learn_one(as_dict(X[i]), y[i])
        assert (name in asked) is (name == "OPAUC")
        assert all(key[2] is None for key in cache.plans if len(key) == 3) is (name == "SOLAM")


def _fused_ready():
    X, y = stream()
    model = ready("OPAUC", X, y, dense=False)
    step = FAST.get(model).sparse_step
    assert step.fused is not None  # (OPAUC's full covariance fuses its update)
    return X, y, model, step


@pytest.mark.parametrize("how", ["raises", "interrupted", "ran out", "nan"])
def test_a_fused_update_that_fails_changes_nothing(how, monkeypatch):
    """The fused load-and-learn (``OneStep.fused``): an error raised once the row was
    saved and learnt puts the state back (and reports a kernel error as the usual
    path does); a kernel that learnt less than the row, or a state that is no longer
    finite after it, is put back and the usual path learns the row once."""
    X, y, model, step = _fused_ready()
    with config_context(fast_path=False):
        full = ready("OPAUC", X, y, dense=False)
    before = snapshot(vars(model))
    make_step, failed = OneStep._step, []
    x = as_dict(X[20])

    def failing_step(self, key):
        made = make_step(self, key)
        begin, checks = made
        # the fused call failing after the save and the kernel, before the count and
        # the checks (where a kernel's error would leave it), or as count_then_finish
        # leaves a state that is no longer finite (the count set)
        # (the fused call's block: _begin_dict's block first, the label's bits last)
        values = np.ctypeslib.as_array((ctypes.c_int64 * 5).from_address(begin.args[0]))
        plain = partial(compiled_entry(_begin_dict, (0, 1.0, 0, 0)), int(values[0]))
        label = float(values[4:].view(np.float64)[0])

        def failing(where):
            got = plain(label, where, len(x))  # (loaded and saved)
            assert got >= 0
            self.one.update(model)  # (learnt)
            failed.append(key)
            if how == "raises":
                raise ZeroDivisionError("float division by zero")
            if how == "interrupted":
                raise KeyboardInterrupt
            if how == "nan":
                model.n_samples_seen_ += 1
                model.calibration_[0] = np.nan
                return DIVERGED
            return RAN_OUT

        return (failing, checks)

    monkeypatch.setattr(OneStep, "_step", failing_step)
    step.steps.clear()
    if how in ("ran out", "nan"):
        model.learn_one(x, y[20])
        full.learn_one(x, y[20])
        assert failed and step.steps  # (the usual path learnt it)
        assert_same_state(snapshot(vars(full)), snapshot(vars(model)))
        return
    with pytest.raises(FloatingPointError if how == "raises" else KeyboardInterrupt):
        model.learn_one(x, y[20])
    assert failed
    assert_same_state(before, snapshot(vars(model)))


def test_the_fusion_is_dropped_when_the_update_is_replaced():
    X, y, model, step = _fused_ready()
    update, calls = step.one.update, []

    def counted(learner):
        calls.append(1)
        update(learner)

    step.one.update = counted
    model.learn_one(as_dict(X[20]), y[20])
    assert calls == [1] and step.fused is None


def test_a_count_that_is_not_an_int_is_counted_in_python():
    """The fused call sets the count only when it is a plain int; another (here a
    NumPy integer) is counted by ``+= 1`` in Python, as the usual path does."""
    X, y, model, step = _fused_ready()
    with config_context(fast_path=False):
        full = ready("OPAUC", X, y, dense=False)
    for m in (model, full):
        m.n_samples_seen_ = np.int64(m.n_samples_seen_)
    for i in range(20, 30):
        model.learn_one(as_dict(X[i]), y[i])
        with config_context(fast_path=False):
            full.learn_one(as_dict(X[i]), y[i])
    assert type(model.n_samples_seen_) is type(full.n_samples_seen_)
    assert_same_state(snapshot(vars(full)), snapshot(vars(model)))
    assert step.fused is not None and step.steps


def test_a_column_scale_whose_square_underflows_is_refused_as_before():
    """OPAUC's scaled step divides by each column's squared scale (``np.true_divide``,
    so that the loop vectorizes): a scale whose square underflows to 0 still raises
    ZeroDivisionError, reported as the kernel's error, in the fused call (the state
    put back) and in a chunk (nothing learnt), as ``/`` did. The scale is set by a
    row learnt before the other class has any (no step), so the row that fails does
    not name the column."""
    X, y = stream()
    X = np.hstack([X, np.zeros((X.shape[0], 1))])
    positive = np.flatnonzero(y > 0)
    X[positive[0], -1] = 1e-170  # (its scale's square is 0)
    model = OPAUC().partial_fit(X[positive[:1]], [1], classes=[-1, 1])
    for i in positive[1:4]:  # (the fused step made, on rows of the same class)
        model.learn_one(as_dict(X[i]), y[i])
    step = FAST.get(model).sparse_step
    assert step is not None and step.fused is not None
    before = snapshot(vars(model))
    i = int(np.flatnonzero(y < 0)[0])
    for learn in (
        lambda: model.learn_one(as_dict(X[i]), y[i]),
        lambda: model.partial_fit(sp.csr_matrix(X[i : i + 1]), y[i : i + 1]),
    ):
        with pytest.raises(FloatingPointError, match="ZeroDivisionError"):
            learn()
        assert_same_state(before, snapshot(vars(model)))


def test_a_fused_step_found_by_the_labels_value_learns_as_the_full_path():
    """The fused steps are found by one lookup of the label (``OneStep.by_label``):
    labels equal to a class but of another type (int, NumPy float, bool) learn as the
    full path does, a label of neither class is refused with nothing changed, and
    after a fit with other classes the lookup made for the old ones is not used."""
    X, y, model, step = _fused_ready()
    assert step.by_label[0] is FAST.get(model).classes and step.by_label[1]
    labels = [int(v) for v in y[20:26]] + [np.float64(v) for v in y[26:30]]
    labels += [True if v > 0 else -1.0 for v in y[30:34]]
    rows = range(20, 34)
    for i, label in zip(rows, labels):
        model.learn_one(as_dict(X[i]), label)
    with config_context(fast_path=False):
        full = ready("OPAUC", X, y, dense=False)
        for i in rows:
            full.learn_one(as_dict(X[i]), y[i])
    assert_same_state(snapshot(vars(full)), snapshot(vars(model)))
    before = snapshot(vars(model))
    for bad in (2.0, np.float64("nan"), "1"):
        with pytest.raises(ValueError):
            model.learn_one(as_dict(X[34]), bad)
        assert_same_state(before, snapshot(vars(model)))
    # a fit with other classes, where the label 1 is now the negative class
    again = OPAUC(eta=0.05, lam=0.01, random_state=0)
    for m in (model, again):
        m.fit(X[:10], np.where(y[:10] > 0, 2, 1))
        for i in range(10, 20):
            m.learn_one(as_dict(X[i]), 2 if y[i] > 0 else 1)
    assert_same_state(snapshot(vars(again)), snapshot(vars(model)))
    assert FAST.get(model).sparse_step.by_label[1]  # (found by the new labels)
