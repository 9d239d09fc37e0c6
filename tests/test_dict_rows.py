"""Dict rows read in compiled code (:mod:`aucstream._kernels._pyobjects`,
:func:`aucstream._fastpath.read_dict`), and the compiled checks of the per-example
entry and of the scoring of dict rows.

The reader converts only keys of type ``int`` / ``numpy.int64`` and values of type
``float`` / ``numpy.float64`` / ``int``, as :mod:`struct` converts them; anything else
refuses the row (the usual path then converts it or says what is wrong), with no
Python exception left behind. Whatever the types, ``learn_one``, ``decision_one``
and ``predict_proba_one`` of a dict must give what the full validation gives, bit
for bit, and see every change of the learner's members between calls.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from conftest import assert_same_state, make_stream, snapshot

from aucstream import OPAUC, SOLAM, UnivariateOnline, config_context
from aucstream._fastpath import FAST, READS_DICTS, block, read_dict

pytestmark = pytest.mark.skipif(not READS_DICTS, reason="dicts are packed by struct here")


def _read(x: dict, capacity: int = 8):
    keys, values = np.zeros(capacity, dtype=np.int64), np.zeros(capacity)
    n = read_dict(id(x), block(), keys, values)
    assert sys.exc_info() == (None, None, None)
    return n, keys[: max(n, 0)].tolist(), values[: max(n, 0)].tolist()


def test_the_reader_converts_what_struct_converts():
    x = {3: 1.5, np.int64(1): np.float64(-2.0), 0: 7, 5: -(2**60)}
    assert _read(x) == (4, [3, 1, 0, 5], [1.5, -2.0, 7.0, float(-(2**60))])
    assert _read({}) == (0, [], [])


REFUSED = {
    "bool key": {True: 1.0},
    "bool value": {0: False},
    "float key": {1.0: 1.0},
    "string key": {"x1": 1.0},
    "string value": {0: "1.0"},
    "None value": {0: None},
    "int32 key": {np.int32(1): 1.0},
    "float32 value": {0: np.float32(1.0)},
    "key beyond int64": {2**70: 1.0},
    "value beyond float64": {0: 10**400},
    "more items than the buffers": {j: 1.0 for j in range(9)},
}


@pytest.mark.parametrize("case", REFUSED)
def test_the_reader_refuses_anything_else_and_leaves_no_exception(case):
    n, _, _ = _read(REFUSED[case])
    assert n == -1
    assert _read({1: 2.0}) == (1, [1], [2.0])  # and reads the next row


def _learners():
    return {
        "SOLAM": lambda: SOLAM(random_state=0),
        "UnivariateOnline": lambda: UnivariateOnline(random_state=0),
        "OPAUC": lambda: OPAUC(eta=0.05, lam=0.01, random_state=0),
    }


ROWS = {
    "ints and floats": lambda row: {int(j): float(row[j]) for j in np.flatnonzero(row)},
    "numpy scalars": lambda row: {np.int64(j): row[j] for j in np.flatnonzero(row)},
    "reversed keys": lambda row: {int(j): float(row[j]) for j in np.flatnonzero(row)[::-1]},
    "int values": lambda row: {int(j): int(round(4 * row[j])) for j in np.flatnonzero(row)},
    "bool values": lambda row: {int(j): bool(row[j] > 0) for j in np.flatnonzero(row)},
    "float32 values": lambda row: {int(j): np.float32(row[j]) for j in np.flatnonzero(row)},
}


@pytest.mark.parametrize("rows", ROWS)
@pytest.mark.parametrize("name", _learners())
def test_every_kind_of_dict_gives_the_full_paths_model_and_scores(name, rows):
    X, y = make_stream(60, 6, seed=5, sparsity=0.4)
    convert = ROWS[rows]
    models = []
    for fast in (True, False):
        with config_context(fast_path=fast):
            model = _learners()[name]().partial_fit(X[:10], y[:10], classes=[-1, 1])
            scores = []
            for i in range(10, 60):
                x = convert(X[i])
                scores.append((model.decision_one(x), *model.predict_proba_one(x)))
                model.learn_one(x, y[i])
            models.append((model, scores))
    (fast, fast_scores), (full, full_scores) = models
    assert_same_state(snapshot(vars(full)), snapshot(vars(fast)))
    np.testing.assert_array_equal(np.array(fast_scores), np.array(full_scores))


def test_the_scoring_sees_a_member_replaced_between_calls():
    X, y = make_stream(40, 6, seed=1, sparsity=0.3)
    model = SOLAM(random_state=0).partial_fit(X, y, classes=[-1, 1])
    x = {0: 1.0, 3: -0.5}
    row = np.array([[1.0, 0, 0, -0.5, 0, 0]])
    before = model.predict_proba_one(x)
    np.testing.assert_array_equal(before, model.predict_proba(row)[0])
    calibration = model.calibration_.copy()
    calibration[4] += 1.0  # (another intercept of the calibration: another probability)
    model.calibration_ = calibration
    after = model.predict_proba_one(x)
    np.testing.assert_array_equal(after, model.predict_proba(row)[0])
    assert not np.array_equal(before, after)
    model.set_params(R=2.0)  # a new parameter object: read again, the same weights
    assert model.decision_one(x) == model.decision_function(row)[0]


@pytest.mark.parametrize("name", _learners())
def test_a_state_float_made_nan_between_calls_is_seen(name):
    X, y = make_stream(40, 6, seed=2, sparsity=0.3)
    outcomes = []
    for fast in (True, False):
        with config_context(fast_path=fast):
            model = _learners()[name]().partial_fit(X[:10], y[:10], classes=[-1, 1])
            for i in range(10, 14):
                model.learn_one({0: float(X[i, 0]), 2: float(X[i, 2])}, y[i])
            floats = [k for k, v in vars(model).items() if k.endswith("_") and type(v) is float]
            if not floats:
                pytest.skip("no Python float in the state")
            setattr(model, floats[0], float("nan"))
            before = snapshot(vars(model))
            with pytest.raises(Exception) as error:
                model.learn_one({0: 1.0}, 1)
            assert_same_state(before, snapshot(vars(model)))
            outcomes.append(type(error.value))
    assert outcomes[0] is outcomes[1]


def test_the_step_reads_the_dict_in_its_compiled_call():
    X, y = make_stream(30, 6, seed=3, sparsity=0.3)
    model = UnivariateOnline(random_state=0).partial_fit(X[:10], y[:10], classes=[-1, 1])
    for i in range(10, 14):
        model.learn_one({j: float(X[i, j]) for j in np.flatnonzero(X[i])}, y[i])
    step = FAST.get(model).sparse_step
    assert step is not None and step.walk is not None and step.walk.shape[0] > 0


def test_without_the_compiled_reader_dicts_are_packed_with_the_same_results(monkeypatch):
    """Where the object layout is not CPython's usual one (``LAYOUT`` None), dict rows
    are packed by :mod:`struct` (the path kept for it): the same models and scores."""
    from aucstream import _fastpath
    from aucstream._runtime import _entry, _small_calls

    X, y = make_stream(50, 6, seed=7, sparsity=0.4)
    rows = [{int(j): float(X[i, j]) for j in np.flatnonzero(X[i])} for i in range(50)]
    outcomes = []
    for reads in (True, False):
        with monkeypatch.context() as patch:
            for module in (_fastpath, _entry, _small_calls):
                patch.setattr(module, "READS_DICTS", reads)
            model = SOLAM(random_state=0).partial_fit(X[:10], y[:10], classes=[-1, 1])
            scores = []
            for i in range(10, 50):
                scores.append((model.decision_one(rows[i]), *model.predict_proba_one(rows[i])))
                model.learn_one(rows[i], y[i])
            step = FAST.get(model).sparse_step
            assert (step.walk is not None) is reads
            outcomes.append((snapshot(vars(model)), scores))
    assert_same_state(outcomes[0][0], outcomes[1][0])
    np.testing.assert_array_equal(np.array(outcomes[0][1]), np.array(outcomes[1][1]))


def test_a_learner_of_many_members_is_scored_and_seen_changing():
    """More members than the scorer's first array of addresses: it grows."""
    X, y = make_stream(40, 6, seed=4, sparsity=0.3)
    model = SOLAM(random_state=0).partial_fit(X, y, classes=[-1, 1])
    x, row = {1: 0.5, 4: -1.0}, np.array([[0, 0.5, 0, 0, -1.0, 0]])
    model.decision_one(x)
    for j in range(100):
        setattr(model, f"note_{j}", j)
    np.testing.assert_array_equal(model.predict_proba_one(x), model.predict_proba(row)[0])
    (scorer,) = FAST.get(model).scorers.values()
    assert scorer.ids.shape[0] >= len(vars(model)) > 100
    model.learn_one(x, 1)
    assert model.decision_one(x) == model.decision_function(row)[0]
