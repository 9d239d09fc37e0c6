"""A learner's result does not depend on where its arrays lie in memory.

Under ``fastmath`` reassociation a loop that both writes to an array and sums floats is
compiled by LLVM in two versions, vectorized and scalar, which sum in different orders;
a check at run time takes the scalar one when two of the loop's arrays start within a
few vectors of each other. Small arrays allocated one after the other are that close
or not depending on what the process allocated before, so such a loop made a learner's
floats depend on the process's history (FSAUC's ``||v_1||^2``, one bit apart on 12
features). The rule and its check: "Sums" in :mod:`aucstream._kernels._compile`; the
check of every kernel the test run compiles is in ``conftest.py``
(:class:`SumsApartFromStores`).
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
import scipy.sparse as sp

import aucstream
from aucstream._kernels import REASSOC, jit
from aucstream._kernels._compile import sums_behind_overlap_checks

#: every online learner, with settings that reach the code of the folds, projections
#: and stage restarts on 600 rows
LEARNERS = {
    "SOLAM": {},
    "SOLAML1": {},
    "FSAUC": {"n_samples": 600},
    "UnivariateOnline": {},
    "OPAUC": {},
    "OAM": {"random_state": 0},
    "AdaOAM": {},
    "SAdaOAM": {},
    "OnlinePAUC": {"random_state": 0},
    "PAUCI": {"random_state": 0},
    "LSPAUC": {"random_state": 0},
    "FTRLAUC": {},
    "SPAM": {},
    "Perceptron": {},
    "PassiveAggressive": {},
    "CostSensitivePA": {},
    "ConfidenceWeighted": {},
}


def _stream(d: int, n: int = 600):
    rng = np.random.default_rng(d)
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.3] = 0.0
    y = (X[:, 0] - X[:, 1] + rng.normal(size=n) > 0).astype(int)
    return X, y


def _relocate(model, d: int, layout: str | int, gap: int) -> None:
    """Copy every 1-D float array of ``d`` entries of the model's state into one
    block, ``gap`` floats apart: in the order listed, reversed, or shuffled by the
    seed ``layout``."""
    names = [
        name
        for name, value in vars(model).items()
        if name.endswith("_")
        and isinstance(value, np.ndarray)
        and value.shape == (d,)
        and value.dtype == np.float64
    ]
    if layout == "reversed":
        names.reverse()
    elif not isinstance(layout, str):
        names = [names[i] for i in np.random.default_rng(layout).permutation(len(names))]
    block = np.zeros(len(names) * (d + gap) + 1)
    for k, name in enumerate(names):
        view = block[k * (d + gap) : k * (d + gap) + d]
        view[:] = getattr(model, name)
        setattr(model, name, view)


def _state(model) -> dict[str, np.ndarray]:
    return {
        name: np.array(value, copy=True)
        for name, value in vars(model).items()
        if isinstance(value, np.ndarray) and value.dtype.kind in "fiub"
    }


@pytest.mark.parametrize("name", sorted(LEARNERS))
@pytest.mark.parametrize("d", [5, 12])
def test_the_same_bits_wherever_the_state_lies(name, d):
    """A learner that goes on learning with its state arrays one after the other in
    memory (in several orders, where a loop's overlap check fires) ends with the same
    bits as with them far apart (where it does not)."""
    X, y = _stream(d)
    layouts = [("listed", 64), ("listed", 0), ("reversed", 0), (1, 0), (2, 0)]
    ends = []
    for layout, gap in layouts:
        for rows in (X, sp.csr_matrix(X)):
            model = getattr(aucstream, name)(**LEARNERS[name])
            model.partial_fit(rows[:100], y[:100], classes=[0, 1])
            _relocate(model, d, layout, gap)
            model.partial_fit(rows[100:], y[100:])
            ends.append(_state(model))
    for k, end in enumerate(ends[2:]):
        far = ends[k % 2]  # the same kind of rows, the arrays far apart
        for key, value in far.items():
            where = layouts[1 + k // 2]
            np.testing.assert_array_equal(end[key], value, err_msg=f"{name}.{key} {where}")


def _writes_and_sums(a, b, c):
    s = 0.0
    for i in range(a.shape[0]):
        a[i] = b[i] * c
        s += b[i] * a[i]
    return s


def _writes_then_sums(a, b, c):
    for i in range(a.shape[0]):
        a[i] = b[i] * c
    s = 0.0
    for i in range(a.shape[0]):
        s += b[i] * a[i]
    return s


def _ir(fn) -> str:
    # numba's own njit, uncached: a cached version has no LLVM IR to read
    compiled = numba.njit(fastmath=REASSOC)(fn)
    x = np.ones(40)
    compiled(x[:20], x[20:], 1.0)
    return compiled.inspect_llvm(compiled.signatures[0])


def test_the_rule_finds_a_loop_that_writes_and_sums():
    found = sums_behind_overlap_checks(_ir(_writes_and_sums))
    assert [name.rpartition(".")[2] for name in found] == ["_writes_and_sums"]
    assert sums_behind_overlap_checks(_ir(_writes_then_sums)) == []


def test_a_sum_apart_from_the_stores_does_not_depend_on_where_the_arrays_lie():
    """The split loop sums in the same order whether its arrays are adjacent (the
    overlap check fires) or far apart; the fused one need not (not asserted: its two
    orders may round alike on some data)."""
    compiled = numba.njit(fastmath=REASSOC)(_writes_then_sums)
    rng = np.random.default_rng(1)
    values = rng.normal(size=12)
    results = set()
    for gap in (0, 1, 4, 64):
        block = np.zeros(24 + gap)
        b = block[:12]
        a = block[12 + gap : 24 + gap]
        b[:] = values
        results.add(compiled(a, b, 0.37))
    assert len(results) == 1


# ---------------------------------------------------------------- flags of helpers
@jit
def _helper_sum(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i]
    return s


@jit(fastmath=REASSOC)
def _reassociating_caller(a):
    return _helper_sum(a)


@jit
def _strict_caller(a):
    return _helper_sum(a)


def test_a_helper_keeps_its_own_flags_whoever_calls_it_first():
    """A helper made by ``aucstream._kernels.jit`` without ``fastmath`` sums in order
    even when a reassociating kernel is the first to call it ("Flags" in
    :mod:`aucstream._kernels._compile`): numba would otherwise compile it with that
    caller's flags and serve that version to every later caller."""
    # In order, every 0.5 is lost against 1e16 (under half its ulp of 2); summed in
    # lanes, whatever the vector width, the other lanes' halves add up exactly and
    # then move 1e16. (Random data could not tell the two apart on every machine:
    # with AVX-512's eight lanes one such draw summed to the same bits.)
    values = np.full(64, 0.5)
    values[0] = 1e16
    in_order = 0.0
    for v in values:
        in_order += v
    reassociated = numba.njit(fastmath=REASSOC)(_helper_sum.py_func)(values)
    assert reassociated != in_order  # (else this data could not tell the two apart)
    assert _reassociating_caller(values) == in_order
    assert _strict_caller(values) == in_order
