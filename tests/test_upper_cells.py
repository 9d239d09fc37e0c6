"""OPAUC (full covariance) saves and checks only the scatter cells a sparse row writes.

A sparse row of k stored indices adds :math:`\\omega x x^\\top` to the upper triangle of
its class's scatter in the k (k + 1) / 2 cells :math:`(i, j)`, :math:`i \\le j`, of its
indices (``aucstream.covariance._full._add_sparse``). The engine declares the scatters
so (``aucstream._state.declare_upper_cells``), and a one-row transaction's plan saves,
restores and checks those cells, where it saved and checked the k whole rows. What
must hold: the reduced record restores bit for bit a call that raises or diverges after
the update wrote (through the per-example entry, ``learn_one`` of a dict), and the
learner then goes on as one that never saw the call; the check still finds a
non-finite value the update wrote.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_stream, patch_update
from test_write_sets import assert_same_bytes, state_bytes

from aucstream import OPAUC, _state
from aucstream._fastpath import FAST
from aucstream._runtime import _entry


class _Interrupt(BaseException):
    pass


def data(seed=3):
    X, y = make_stream(90, 30, seed=seed, sparsity=0.85)
    X[np.arange(90), np.arange(90) % 30] = 1.0  # none empty
    y[:2] = [-1, 1]
    return sp.csr_matrix(X), y


def as_dict(X, i) -> dict:
    """Row i as a dict of plain ints and floats (what the per-example entry reads)."""
    row = X[i]
    return {int(j): float(v) for j, v in zip(row.indices, row.data)}


def model(X, y, **params):
    return OPAUC(eta=0.05, lam=0.01, random_state=0, **params).partial_fit(
        X[:20], y[:20], classes=[-1, 1]
    )


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_plan_saves_restores_and_checks_the_upper_cells_of_the_rows(dtype):
    X, y = data()
    m = model(X, y, dtype=dtype)
    flat = _state.FlatState(m)
    plan = flat.plan((), m._row_logged_state())
    item = np.dtype(dtype).itemsize
    # (sum_, scatter_) per class: the sums by whole rows, the scatters by cells
    assert plan.rows_copy[:, 4].tolist() == [0, item, 0, item]
    assert flat.all_finite()  # complete: later checks visit the saved part only
    rows = np.array([2, 7, 11, 29], dtype=np.int64)
    before = state_bytes(m)
    saved = flat.save(plan, rows)
    for s in m.stats_:
        s.sum_[rows] += 1.5
        for i in rows:
            for j in rows[rows >= i]:
                s.scatter_[i, j] += 0.25 * (i + j + 1)
    assert state_bytes(m) != before
    flat.restore(saved)
    assert_same_bytes(before, state_bytes(m))
    # a cell outside the record is not put back: the record is the upper cells only
    saved = flat.save(plan, rows)
    m.stats_[1].scatter_[29, 2] += 1.0  # (lower triangle: never written)
    m.stats_[1].scatter_[2, 3] += 1.0  # (column 3 not named)
    flat.restore(saved)
    changed = np.frombuffer(before["model.stats_[1].scatter_"][2], dtype=dtype).reshape(30, 30)
    assert m.stats_[1].scatter_[29, 2] == changed[29, 2] + 1
    assert m.stats_[1].scatter_[2, 3] == changed[2, 3] + 1
    # the check visits the same cells
    m.stats_[1].scatter_[29, 2] = np.nan
    assert flat.all_finite(plan, rows)
    m.stats_[1].scatter_[7, 11] = np.nan
    assert not flat.all_finite(plan, rows)
    m.stats_[1].scatter_[7, 11] = 0.0
    m.stats_[0].scatter_[29, 29] = np.inf
    assert not flat.all_finite(plan, rows)
    m.stats_[0].scatter_[29, 29] = 0.0
    assert flat.all_finite(plan, rows)
    with pytest.raises(ValueError, match="rows"):  # outside: nothing saved
        flat.save(plan, np.array([1, 30], dtype=np.int64))


def _armed(how, armed):
    """A ``spoilt`` of :func:`conftest.patch_update`: the update, then (when armed) an
    interruption, or a NaN in a cell the row wrote, in its class's scatter."""

    def spoilt(self, chunk, update):
        update(self, chunk)
        if not armed:
            return
        if how == "interrupt":
            raise _Interrupt
        idx = np.sort(chunk.indices[chunk.indptr[0] : chunk.indptr[1]])
        self.stats_[int(chunk.y[0] > 0)].scatter_[idx[0], idx[-1]] = np.nan

    return spoilt


@pytest.mark.parametrize("half_life", [None, 40])
@pytest.mark.parametrize("how", ["interrupt", "divergence"])
def test_a_rejected_dict_row_after_the_update_wrote_changes_nothing(how, half_life, monkeypatch):
    X, y = data(seed=4)
    armed: list = []
    patch_update(monkeypatch, OPAUC, _armed(how, armed))
    m = model(X, y, half_life=half_life)
    reference = model(X, y, half_life=half_life)
    restored = []
    restore = _entry.OneStep._restore

    def counted(self, *args):
        restored.append(1)
        return restore(self, *args)

    monkeypatch.setattr(_entry.OneStep, "_restore", counted)
    for i in range(20, 30):  # the per-example entry made and taken
        m.learn_one(as_dict(X, i), y[i])
        reference.learn_one(as_dict(X, i), y[i])
    step = FAST[m].sparse_step
    assert step is not None and step.steps
    plans = [s[1][0][0] for s in step.steps.values() if s is not None]
    assert plans and all(p.rows_copy[:, 4].tolist() == [0, 8] for p in plans)
    for i in range(30, 90, 6):
        before = state_bytes(m)
        armed.append(1)
        if how == "interrupt":
            with pytest.raises(_Interrupt):
                m.learn_one(as_dict(X, i), y[i])
        else:  # the usual path learns it again, and says so
            with pytest.raises(FloatingPointError, match="diverged"):
                m.learn_one(as_dict(X, i), y[i])
        armed.clear()
        assert_same_bytes(before, state_bytes(m))
        for j in range(i, i + 6):
            m.learn_one(as_dict(X, j), y[j])
            reference.learn_one(as_dict(X, j), y[j])
        assert_same_bytes(state_bytes(reference), state_bytes(m))
    assert len(restored) >= 10  # every refusal went through the entry's undo


def test_bad_dict_rows_are_refused_with_nothing_changed():
    X, y = data(seed=6)
    m = model(X, y)
    for i in range(20, 26):
        m.learn_one(as_dict(X, i), y[i])
    before = state_bytes(m)
    bad = [
        ({0: np.nan, 3: 1.0}, y[26], ValueError),
        ({0: 1.0, 3: np.inf}, y[26], ValueError),
        ({0: 1.0, 30: 1.0}, y[26], ValueError),
        ({-1: 1.0, 3: 1.0}, y[26], ValueError),
        ({0: 1.0, 3: 1.0}, 7, ValueError),
    ]
    for x, label, error in bad:
        with pytest.raises(error):
            m.learn_one(x, label)
        assert_same_bytes(before, state_bytes(m))


# --------------------------------------- the components' dicts, copied when changed
# The per-example entry copies the learner's ``__dict__`` at each call, and its
# components' dicts (OPAUC's two summaries) only when their versions changed since
# their last copies (``_entry._components_unchanged``); the lists are the walk's.


@pytest.mark.parametrize("half_life", [None, 40])
def test_components_are_copied_again_when_they_changed(half_life, monkeypatch):
    X, y = data(seed=8)
    armed: list = []
    patch_update(monkeypatch, OPAUC, _armed("interrupt", armed))
    m = model(X, y, half_life=half_life)
    for i in range(20, 30):
        m.learn_one(as_dict(X, i), y[i])
    step = FAST[m].sparse_step
    copies = step.copies
    assert copies is not None and len(copies) == 2
    for i in range(30, 36):  # unchanged: the same copies serve
        m.learn_one(as_dict(X, i), y[i])
    assert step.copies is copies
    for value in (31, 30):  # a component's scalar rebound, then a call interrupted
        m.stats_[0].n_features = value
        before = state_bytes(m)
        armed.append(1)
        with pytest.raises(_Interrupt):
            m.learn_one(as_dict(X, 36), y[36])
        armed.clear()
        assert FAST[m].sparse_step is step and step.copies is not copies
        assert_same_bytes(before, state_bytes(m))
        assert m.stats_[0].n_features == value
        copies = step.copies


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_sparse_row_writes_only_the_upper_cells_of_its_indices(dtype):
    """What the reduced record relies on: learning a sparse row (``learn_one`` of a
    dict, and ``partial_fit`` of the one-row CSR) changes its class's scatter in the
    cells (i, j), i <= j, of its stored indices only, and the other class's not at
    all; a kernel writing elsewhere would be left unrestored by a rejected call."""
    X, y = data()
    for one_row in (True, False):
        learner = model(X, y, dtype=dtype)
        for i in range(20, 60):
            before = [s.scatter_.copy() for s in learner.stats_]
            if one_row:
                learner.learn_one(as_dict(X, i), int(y[i]))
            else:
                learner.partial_fit(X[i : i + 1], y[i : i + 1])
            own = int(y[i] > 0)
            idx = X[i].indices
            allowed = np.zeros(before[own].shape, dtype=bool)
            allowed[np.ix_(idx, idx)] = True
            allowed &= np.triu(np.ones_like(allowed))
            changed = [
                (old.view(np.uint8) != s.scatter_.view(np.uint8))
                .reshape(*old.shape, -1)
                .any(axis=-1)
                for old, s in zip(before, learner.stats_)
            ]
            assert not changed[1 - own].any(), (i, "the other class's scatter changed")
            assert changed[own].any(), (i, "nothing written: the test would see nothing")
            outside = np.argwhere(changed[own] & ~allowed)
            assert outside.size == 0, (i, outside[:5])
