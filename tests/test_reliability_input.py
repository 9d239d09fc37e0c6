"""Bad input never crashes the interpreter, and a rejected call changes nothing.

Broken sparse structures are made the way they happen in practice: a valid matrix
whose index arrays are changed afterwards (scipy checks its constructor's arguments
only lightly). Every case runs in a separate interpreter, so a segfault is a failed
test, not a dead test run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import assert_same_state, patch_update, snapshot
from reliability_cases import ESTIMATORS, ONLINE, make, run_isolated, stream

TESTS = Path(__file__).resolve().parent


def broken_matrices(X: np.ndarray) -> dict[str, sp.spmatrix]:
    """Sparse matrices of X's shape whose structure is invalid, by name."""
    cases = {}
    n, d = X.shape
    for fmt in ("csr", "csc"):
        for name, value in (("huge", 10**6), ("width", d if fmt == "csr" else n), ("neg", -1)):
            M = sp.csr_matrix(X).asformat(fmt)
            M.indices = M.indices.astype(np.int64)
            M.indices[1] = value
            cases[f"{fmt}-index-{name}"] = M
        M = sp.csr_matrix(X).asformat(fmt)
        M.indptr[2] = M.indptr[-1] + 5  # past the stored entries
        cases[f"{fmt}-indptr-past-end"] = M
        M = sp.csr_matrix(X).asformat(fmt)
        M.indptr[3], M.indptr[4] = M.indptr[4], M.indptr[3] - 1  # decreasing
        cases[f"{fmt}-indptr-decreasing"] = M
        M = sp.csr_matrix(X).asformat(fmt)
        M.data = M.data[: M.nnz // 2]
        cases[f"{fmt}-data-short"] = M
    return cases


SCRIPT = """
import json, sys
sys.path.insert(0, {tests!r})
import numpy as np
from conftest import assert_same_state, snapshot
from reliability_cases import make, stream
from test_reliability_input import broken_matrices
import aucstream
X, y = stream()
for name, cls in aucstream.all_estimators():
  for case, M in broken_matrices(X).items():
    for call in ("fit", "partial_fit", "decision_function", "test_then_train"):
        if cls.is_batch and call in ("partial_fit", "test_then_train"):
            continue
        model = make(cls).fit(X, y)
        before = snapshot(vars(model))
        print(json.dumps({{"learner": name, "case": case, "call": call}}), flush=True)
        try:
            if call == "decision_function":
                model.decision_function(M)
            elif call == "fit":
                model.fit(M, y)
            else:
                getattr(model, call)(M, y)
            outcome = "accepted"
        except ValueError as error:
            outcome = "error: " + str(error)[:200]
        except Exception as error:
            outcome = "wrong error: " + type(error).__name__ + ": " + str(error)[:200]
        try:
            assert_same_state(before, snapshot(vars(model)))
            changed = False
        except AssertionError:
            changed = True
        print(json.dumps({{"learner": name, "case": case, "call": call, "outcome": outcome,
                          "changed": changed}}), flush=True)
"""


@pytest.fixture(scope="module")
def broken_structure_results() -> list[dict]:
    """Every learner x broken matrix x call, in one separate interpreter."""
    return [r for r in run_isolated(SCRIPT.format(tests=str(TESTS))) if "outcome" in r]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_broken_sparse_structure_is_refused_without_crash(cls, broken_structure_results):
    results = [r for r in broken_structure_results if r["learner"] == cls.__name__]
    assert len(results) >= 12 * 2, "cases missing"
    bad = [r for r in results if not r["outcome"].startswith("error") or r["changed"]]
    assert not bad, bad[:5]


def test_error_names_the_index():
    X, y = stream()
    M = sp.csr_matrix(X)
    M.indices[0] = 10**6
    with pytest.raises(ValueError, match=r"column index 1000000 outside \[0, 5\)"):
        make(ESTIMATORS[0]).fit(M, y)


@pytest.mark.parametrize("cls", ONLINE, ids=lambda c: c.__name__)
def test_rejected_calls_change_nothing(cls):
    X, y = stream()
    model = make(cls).partial_fit(X[:40], y[:40], classes=[-1, 1])
    before = snapshot(vars(model))
    bad_rows = [X[40:50, :3], np.full((3, 5), np.nan), np.full((3, 5), np.inf)]
    for rows in bad_rows:
        with pytest.raises(ValueError):
            model.partial_fit(rows, y[: rows.shape[0]])
        assert_same_state(before, snapshot(vars(model)))
    for labels in (np.full(10, 7), np.array(["a"] * 10)):
        with pytest.raises(ValueError):
            model.partial_fit(X[40:50], labels)
        assert_same_state(before, snapshot(vars(model)))
    with pytest.raises(ValueError):
        model.partial_fit(X[40:50], y[40:50], classes=[0, 1])
    assert_same_state(before, snapshot(vars(model)))
    with pytest.raises(ValueError):
        model.test_then_train(X[40:40], y[40:40])
    assert_same_state(before, snapshot(vars(model)))


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_a_rejected_fit_keeps_the_fitted_model(cls):
    X, y = stream()
    model = make(cls).fit(X, y)
    scores = model.decision_function(X)
    before = snapshot(vars(model))
    nan_X = X.copy()
    nan_X[5, 2] = np.nan
    for bad_X, bad_y in (
        (X[y > 0][:, :3], y[y > 0]),  # another width and one class
        (nan_X, y),
        (X, np.arange(60) % 3),
    ):
        with pytest.raises(ValueError):
            model.fit(bad_X, bad_y)
        assert_same_state(before, snapshot(vars(model)))
    np.testing.assert_array_equal(model.decision_function(X), scores)


class _Interrupt(BaseException):
    pass


@pytest.mark.parametrize("cls", ONLINE, ids=lambda c: c.__name__)
def test_an_interrupted_call_changes_nothing(cls, monkeypatch):
    """An exception after the kernel has run (e.g. Ctrl-C) rolls the state back."""
    X, y = stream()
    model = make(cls).partial_fit(X[:40], y[:40], classes=[-1, 1])
    before = snapshot(vars(model))
    # the kernel call of a learner; the learning step of a meta-learner (its _learn)
    if model._tags.fast_path:

        def update_then_interrupt(self, chunk, update):
            update(self, chunk)
            raise _Interrupt

        patch_update(monkeypatch, cls, update_then_interrupt)
    else:
        step = cls._learn

        def step_then_interrupt(self, *args, **kwargs):
            step(self, *args, **kwargs)
            raise _Interrupt

        monkeypatch.setattr(cls, "_learn", step_then_interrupt)
    # (a pipeline holds a one-example call for its estimator, which then learns it
    # as part of a chunk: given ``classes``, the call is learnt at once)
    once = {"classes": [-1, 1]} if cls.__name__ == "StreamPipeline" else {}
    for call in (
        lambda: model.partial_fit(X[40:], y[40:]),
        lambda: model.learn_one(X[40], y[40], **once),
    ):
        with pytest.raises(_Interrupt):
            call()
        assert_same_state(before, snapshot(vars(model)))


@pytest.mark.parametrize("cls", ONLINE, ids=lambda c: c.__name__)
@pytest.mark.parametrize("position", [0, 3, 7])
def test_an_overflowing_row_is_refused_or_harmless(cls, position):
    """A row of 1e308 at any position: either a clear error with nothing learnt, or
    learnt with every state array finite and finite scores on ordinary rows."""
    X, y = stream()
    model = make(cls).partial_fit(X[:40], y[:40], classes=[-1, 1])
    before = snapshot(vars(model))
    chunk = X[40:48].copy()
    chunk[position] = 1e308
    try:
        model.partial_fit(chunk, y[40:48])
    except (ValueError, FloatingPointError):
        assert_same_state(before, snapshot(vars(model)))
        return
    from aucstream._state import first_non_finite

    assert first_non_finite(model) is None
    assert np.isfinite(model.decision_function(X[:40])).all()


def test_writeable_state_copies_read_only_arrays_once_and_keeps_containers():
    """An unpickled learner's read-only state arrays (joblib's memory maps) become
    writeable copies: an array named twice stays one array, a named tuple keeps its
    type, and a container without read-only arrays is kept as it is."""
    from collections import namedtuple

    from aucstream import SOLAM
    from aucstream._state import writeable_state

    Pair = namedtuple("Pair", "a b")
    model = SOLAM()
    read_only, writeable = np.arange(3.0), np.arange(2.0)
    read_only.setflags(write=False)
    model.pair_ = Pair(read_only, writeable)
    model.kept_ = (writeable, 1)
    model.twice_ = [read_only, read_only]
    kept = model.kept_
    writeable_state(model)
    assert type(model.pair_) is Pair and model.pair_.b is writeable
    assert model.pair_.a.flags.writeable and model.pair_.a.tolist() == [0.0, 1.0, 2.0]
    assert model.kept_ is kept
    assert model.twice_[0] is model.twice_[1] and model.twice_[0].flags.writeable
