"""The per-example shortcuts give the bits of the usual paths.

- the compiled dict reader's direct reads of exact ``int`` keys of one digit and of
  exact ``float`` values (:data:`aucstream._kernels._pyobjects.DIGIT_OFFSET`,
  ``FLOAT_OFFSET``): every key and value form scores and learns as the array row does,
  and what the reader must refuse (bools, big or negative keys, NaN) is refused;
- the thread's last scorer (:data:`aucstream._dict_scoring.LAST_SCORER`): learners
  scored in turn, a learner whose scorer is not the last one, and no learner kept
  alive by it;
- the bound weights fused with the scorer's keeping: after the state's arrays are
  replaced, and after a parameter the weights read changes;
- OPAUC's per-example entry, whose state holds a list (``stats_``): a summary
  replaced in that list is seen, and a sparse row leaves the held-back dense rows
  alone.
"""

import copy
import gc
import threading
import weakref

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import assert_same_state, make_stream, snapshot

import aucstream
from aucstream import OPAUC, SOLAM, UnivariateOnline
from aucstream._dict_scoring import LAST_SCORER


def _rows(X):
    return [{int(j): float(X[i, j]) for j in np.flatnonzero(X[i])} for i in range(X.shape[0])]


def _same_scores(model, row: dict, x: np.ndarray):
    csr = sp.csr_matrix(x[None])
    assert model.decision_one(row) == model.decision_function(csr)[0]
    np.testing.assert_array_equal(model.predict_proba_one(row), model.predict_proba(csr)[0])


@pytest.mark.parametrize("cls", [SOLAM, UnivariateOnline, OPAUC])
def test_key_and_value_forms_score_and_learn_as_arrays(cls):
    X, y = make_stream(40, 6, seed=5, sparsity=0.3)
    X[10:, 0] = [5e-324, -0.0, 1e3, -1e-310, 3.0] * 6  # subnormal, signed zero
    by_dict = cls(random_state=0).partial_fit(X[:10], y[:10], classes=[-1, 1])
    by_array = cls(random_state=0).partial_fit(X[:10], y[:10], classes=[-1, 1])
    forms = [int, np.int64]
    for i in range(10, 40):
        j_form = forms[i % 2]
        row = {j_form(j): X[i, j] if i % 3 else float(X[i, j]) for j in np.flatnonzero(X[i])}
        if i % 4 == 0 and 2 in row:
            row[2] = int(row[2]) if float(row[2]).is_integer() else row[2]
        _same_scores(by_dict, row, X[i])
        by_dict.learn_one(row, y[i])
        by_array.partial_fit(sp.csr_matrix(X[i][None]), y[i : i + 1])
    assert_same_state(snapshot(vars(by_array)), snapshot(vars(by_dict)))


@pytest.mark.parametrize(
    "row",
    [{True: 1.0}, {-1: 1.0}, {2**30: 1.0}, {2**62: 1.0}, {-(2**31): 1.0}, {0: float("nan")}],
    ids=["bool", "negative", "2**30", "2**62", "-2**31", "nan"],
)
def test_refused_keys_and_values_change_nothing(row):
    X, y = make_stream(30, 5, seed=2, sparsity=0.3)
    model = SOLAM().partial_fit(X, y, classes=[-1, 1])
    rows = _rows(X)
    model.learn_one(rows[3], y[3])  # (the per-example entry made)
    model.decision_one(rows[4])  # (the scorer prepared)
    before = snapshot(vars(model))
    with pytest.raises(ValueError):
        model.decision_one(row)
    with pytest.raises(ValueError):
        model.learn_one(row, y[0])
    assert_same_state(before, snapshot(vars(model)))


def test_learners_scored_in_turn_and_across_threads():
    X, y = make_stream(60, 6, seed=4, sparsity=0.3)
    rows = _rows(X)
    models = [cls().partial_fit(X[:20], y[:20], classes=[-1, 1]) for cls in (SOLAM, SOLAM)]
    models[1].learn_one(rows[20], y[20])  # (other weights)
    for i in range(21, 40):
        for model in models:  # (each call's last scorer is the other learner's)
            _same_scores(model, rows[i], X[i])
        models[i % 2].learn_one(rows[i], y[i])
    wrong = []

    def score(model):
        for i in range(40, 60):
            csr = sp.csr_matrix(X[i][None])
            if model.decision_one(rows[i]) != model.decision_function(csr)[0]:
                wrong.append(i)

    threads = [threading.Thread(target=score, args=(m,)) for m in models]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong


def test_the_last_scorer_keeps_no_learner_alive():
    X, y = make_stream(30, 5, seed=1, sparsity=0.3)
    model = SOLAM().partial_fit(X, y, classes=[-1, 1])
    model.decision_one(_rows(X)[0])
    assert LAST_SCORER.ref() is not None
    state = weakref.ref(model.u_)  # (an array of the state: freed with the learner)
    gone = weakref.ref(model)
    del model
    gc.collect()
    assert gone() is None and LAST_SCORER.ref() is None and state() is None


@pytest.mark.parametrize("cls", [SOLAM, UnivariateOnline])
def test_fused_weights_follow_replaced_arrays_and_parameters(cls):
    X, y = make_stream(50, 6, seed=6, sparsity=0.3)
    rows = _rows(X)
    model = cls(random_state=0).partial_fit(X[:20], y[:20], classes=[-1, 1])
    for i in range(20, 30):
        _same_scores(model, rows[i], X[i])
        model.learn_one(rows[i], y[i])
    name = "u_" if cls is SOLAM else "v_"
    setattr(model, name, getattr(model, name) * 2.0)  # (another array: bound again)
    for i in range(30, 40):
        _same_scores(model, rows[i], X[i])
        model.learn_one(rows[i], y[i])
    if cls is SOLAM:  # a parameter the bound weights read at each call
        model.set_params(column_scale="max_abs" if model.column_scale is None else None)
        _same_scores(model, rows[40], X[40])


def test_opauc_sees_a_summary_replaced_in_its_list():
    X, y = make_stream(60, 6, seed=8, sparsity=0.4)
    rows = _rows(X)
    outcomes = []
    for fast in (True, False):
        with aucstream.config_context(fast_path=fast):
            model = OPAUC(eta=0.05, random_state=0).partial_fit(X[:20], y[:20], classes=[-1, 1])
            for i in range(20, 40):
                model.learn_one(rows[i], y[i])
            model.stats_[0] = copy.deepcopy(model.stats_[0])
            model.stats_[0].sum_ *= 0.5  # (another summary: the next calls learn it)
            for i in range(40, 60):
                model.learn_one(rows[i], y[i])
            outcomes.append(snapshot(vars(model)))
    assert_same_state(outcomes[1], outcomes[0])


def test_opauc_sparse_rows_leave_the_held_back_rows_alone():
    X, y = make_stream(40, 6, seed=9, sparsity=0.4)
    model = OPAUC(eta=0.05).partial_fit(X[:3], y[:3], classes=[-1, 1])  # dense: held back
    held = [
        (s.pending_.copy(), s.pending_weight_.copy(), s.n_pending_.copy()) for s in model.stats_
    ]
    assert any(h[2][0] for h in held)
    for i, row in enumerate(_rows(X[3:]), start=3):
        model.learn_one(row, y[i])
    for s, (pending, weight, n) in zip(model.stats_, held):
        np.testing.assert_array_equal(s.pending_, pending)
        np.testing.assert_array_equal(s.pending_weight_, weight)
        np.testing.assert_array_equal(s.n_pending_, n)
