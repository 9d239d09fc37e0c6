"""The shortcuts of the per-example calls (issue 29): the packed one-row update of
SOLAM and UnivariateOnline (:mod:`aucstream._kernels._packed`, the class totals read
and kept in the learner's ``__dict__`` by the compiled call), the dict version that
tells the scoring of dict rows its kept weights are current, the undo of one dict,
and OPAUC's ``predict_proba_one`` without scikit-learn's ``available_if``.

Each must give the bits of the paths without them: the full validation
(``fast_path=False``), the kernel bound the usual way, ``decision_function``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import assert_same_state, make_stream, snapshot

from aucstream import OPAUC, SOLAM, UnivariateOnline, config_context
from aucstream._base import BaseStreamingAUC
from aucstream._fastpath import FAST
from aucstream._kernels._packed import pack
from aucstream._kernels._pyobjects import DICT_VERSION_OFFSET

PACKED = {
    "SOLAM": lambda: SOLAM(random_state=0),
    "SOLAM-forgetting": lambda: SOLAM(half_life=20.0, random_state=0),
    "SOLAM-l1": lambda: SOLAM(constraint="l1", R=0.5, random_state=0),
    "UnivariateOnline": lambda: UnivariateOnline(random_state=0),
    "UnivariateOnline-exp": lambda: UnivariateOnline(loss="exp", weights="none", random_state=0),
}


def stream(n: int = 60, d: int = 7):
    X, y = make_stream(n, d, seed=5, sparsity=0.5)
    X[np.arange(n), np.arange(n) % d] += 1.0  # no empty row
    return X, y


def as_dict(row: np.ndarray) -> dict:
    return {int(j): float(row[j]) for j in np.flatnonzero(row)}


def learnt(make, X, y, fast: bool, before=None):
    """A learner after 10 rows by ``partial_fit`` and the rest one dict at a time
    (``before(model)`` run once first); its dict rows' scores as it went."""
    with config_context(fast_path=fast):
        model = make().partial_fit(X[:10], y[:10], classes=[-1, 1])
        if before is not None:
            before(model)
        scores = []
        for i in range(10, X.shape[0]):
            x = as_dict(X[i])
            scores.append((model.decision_one(x), *model.predict_proba_one(x)))
            model.learn_one(x, y[i])
    return model, np.array(scores)


def test_pack_names_each_item_and_keeps_the_bits():
    a, b = np.arange(3.0), np.arange(4, dtype=np.int64).reshape(2, 2)
    ro = a.copy()
    ro.flags.writeable = False
    values, signature = pack((a, ro), b, 0.1, True, 7)
    assert signature == "f1 f1r i2 d b n"
    assert values[0] == a.__array_interface__["data"][0] and values[1] == 3
    assert list(values[4:7]) == [b.__array_interface__["data"][0], 2, 2]
    assert values[7:8].view(np.float64)[0] == 0.1
    assert list(values[8:]) == [1, 7]
    # what a packing can not name: the caller binds the usual way
    assert pack(np.arange(3, dtype=np.float32)) is None
    assert pack(np.zeros((3, 2))[:, 0]) is None
    assert pack("x") is None


@pytest.mark.parametrize("name", PACKED)
def test_the_packed_update_gives_the_full_paths_bits(name):
    X, y = stream()
    fast, fast_scores = learnt(PACKED[name], X, y, True)
    slow, slow_scores = learnt(PACKED[name], X, y, False)
    assert_same_state(snapshot(vars(slow)), snapshot(vars(fast)))
    np.testing.assert_array_equal(fast_scores, slow_scores)
    # the packed call was made and taken (its status 0: the totals plain floats)
    packed = FAST.get(fast).plans[("one", False)].update.packed
    assert packed is not None and packed(id(fast.__dict__)) == 0
    assert type(fast.weight_neg_) is float and type(fast.weight_pos_) is float


@pytest.mark.parametrize("name", ["SOLAM", "UnivariateOnline"])
def test_totals_that_are_not_plain_floats_are_read_in_python(name):
    """An int (a float subclass) for a class total: the packed call does nothing and
    the update reads the totals in Python, as the unpacked call does."""

    class Total(float):
        pass

    X, y = stream()
    for kind in (int, Total):

        def odd_totals(model, kind=kind):
            model.weight_neg_ = kind(round(model.weight_neg_))
            model.weight_pos_ = kind(round(model.weight_pos_))

        fast, fast_scores = learnt(PACKED[name], X, y, True, odd_totals)
        slow, slow_scores = learnt(PACKED[name], X, y, False, odd_totals)
        assert_same_state(snapshot(vars(slow)), snapshot(vars(fast)))
        np.testing.assert_array_equal(fast_scores, slow_scores)
        assert type(fast.weight_neg_) is float


def test_the_dict_version_is_found_or_not_used():
    """Where found, the version changes with every change of a dict and only then."""
    if DICT_VERSION_OFFSET < 0:
        pytest.skip("this interpreter keeps no dict version where it is looked for")
    import ctypes

    def version(d):
        return ctypes.c_int64.from_address(id(d) + DICT_VERSION_OFFSET).value

    d = {"a": 1.0}
    v = version(d)
    assert version(d) == v
    d["a"] = 2.0
    assert version(d) != v


@pytest.mark.parametrize("name", ["SOLAM", "UnivariateOnline", "OPAUC"])
def test_scoring_a_dict_sees_a_changed_state_at_once(name):
    """The kept weights are read again after any change of the learner's members
    (a replaced array, a parameter), without a learning call between."""
    X, y = stream()
    make = {**PACKED, "OPAUC": lambda: OPAUC(random_state=0)}[name]
    model, _ = learnt(make, X, y, True)
    x, row = as_dict(X[3]), sp.csr_matrix(X[3:4])  # (the same sums as the dict's)
    first = model.decision_one(x)
    assert first == model.decision_function(row)[0]
    coef_name = {"SOLAM": "u_", "UnivariateOnline": "v_", "OPAUC": "w_"}[name]
    setattr(model, coef_name, 2.0 * getattr(model, coef_name))
    changed = model.decision_one(x)
    assert changed == model.decision_function(row)[0]
    assert changed != first
    model.set_params(random_state=1)  # (a member replaced: read again, same weights)
    assert model.decision_one(x) == changed


def test_opauc_has_the_plain_probability_methods():
    """Every covariance kind has a prequential kernel: the base class's functions, not
    scikit-learn's descriptors (whose check ran OPAUC's ``_tags`` property at each
    access), with the same answers."""
    for method in ("predict_proba", "predict_proba_one"):
        assert OPAUC.__dict__[method] is BaseStreamingAUC.__dict__[method].fn
    X, y = stream()
    model = OPAUC(random_state=0).fit(X, y)
    for i in range(5):
        proba = model.predict_proba(X[i : i + 1])[0]
        np.testing.assert_array_equal(model.predict_proba_one(X[i]), proba)
        np.testing.assert_array_equal(model.predict_proba_one(as_dict(X[i])), proba)


def test_a_raising_call_with_one_dict_of_state_puts_it_back(monkeypatch):
    """The undo of a learner whose state is one dict (a copy of it alone)."""
    X, y = stream()
    model, _ = learnt(PACKED["SOLAM"], X, y, True)
    step = FAST.get(model).sparse_step
    assert step.single is model.__dict__
    update = step.one.update

    def broken(learner):
        update(learner)
        raise KeyboardInterrupt

    before = snapshot(vars(model))
    monkeypatch.setattr(step.one, "update", broken)
    with pytest.raises(KeyboardInterrupt):
        model.learn_one(as_dict(X[4]), y[4])
    assert_same_state(before, snapshot(vars(model)))


@pytest.mark.parametrize("half_life", [None, 15.0])
def test_opauc_full_packed_update_gives_the_full_paths_bits(half_life):
    """OPAUC's exact summaries: the one-row update packed (``_full_packed``), the same
    bits as the full validation's call."""
    from aucstream.opauc import _full

    X, y = stream()

    def make():
        return OPAUC(half_life=half_life, random_state=0)

    fast, fast_scores = learnt(make, X, y, True)
    slow, slow_scores = learnt(make, X, y, False)
    assert_same_state(snapshot(vars(slow)), snapshot(vars(fast)))
    np.testing.assert_array_equal(fast_scores, slow_scores)
    assert _full._full_packed.signatures  # (the packed call was made)
