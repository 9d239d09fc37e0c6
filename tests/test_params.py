"""Declared parameters: every learner states its constraints and is checked before any
state is touched, with one error type and a message that names the parameter.

The bad values are derived from each learner's own ``_parameter_constraints`` (a wrong
type, a boolean, NaN, values just outside every numeric range, an unknown option),
so a new learner is covered without editing this file.
"""

from __future__ import annotations

import inspect
import math
from numbers import Integral

import numpy as np
import pytest
from conftest import assert_same_state, make_stream, snapshot
from sklearn.utils._param_validation import Interval, StrOptions, make_constraint

import aucstream
from aucstream._params import InvalidParameterError

ESTIMATORS = [cls for _, cls in aucstream.all_estimators()]


def _init_params(cls) -> set[str]:
    return {
        name
        for name, p in inspect.signature(cls.__init__).parameters.items()
        if name != "self" and p.kind is not p.VAR_KEYWORD
    }


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_every_parameter_is_declared(cls):
    assert set(cls._parameter_constraints) == _init_params(cls)


def _candidates(constraints) -> list:
    """Values that break a parameter's constraints: wrong types, bools, ranges, options."""
    values: list = ["not-a-valid-option", True, np.bool_(False), float("nan"), [1.0], object()]
    for c in constraints:
        if isinstance(c, Interval):
            integral = c.type is Integral
            if c.left is not None:
                values += [c.left - 1, c.left] if integral else [c.left - 1e-3, c.left]
            if c.right is not None:
                values += [c.right + 1, c.right] if integral else [c.right + 1e-3, c.right]
            if integral:
                values.append((c.left or 0) + 1.5)
            else:
                values += [math.inf, -math.inf]
        if isinstance(c, StrOptions):
            values += [min(c.options, key=str).upper() + "?"]  # the same in every process
    return values


def _bad_values(constraints) -> list:
    checks = [make_constraint(c) for c in constraints]
    bad = []
    for value in _candidates(constraints):
        try:
            ok = any(check.is_satisfied_by(value) for check in checks)
        except Exception:  # noqa: BLE001 - a value a constraint cannot even compare
            ok = False
        if not ok:
            bad.append(value)
    return bad


CASES = [
    (cls, name, value)
    for cls in ESTIMATORS
    for name, constraints in sorted(cls._parameter_constraints.items())
    for value in _bad_values(constraints)
]


def _make(cls, **params):
    base = cls._unit_test_params() if hasattr(cls, "_unit_test_params") else {}
    return cls(**{**base, **params})


@pytest.mark.parametrize(
    ("cls", "name", "value"),
    CASES,
    ids=[f"{c.__name__}-{n}-{type(v).__name__}:{v!r:.12}" for c, n, v in CASES],
)
def test_bad_parameters_get_one_error_naming_them(cls, name, value):
    X, y = make_stream(60, 3, seed=0)
    message = f"'{name}' parameter of {cls.__name__}"
    with pytest.raises(InvalidParameterError, match=message):
        _make(cls, **{name: value}).fit(X, y)
    if cls.is_batch:
        return
    with pytest.raises(InvalidParameterError, match=message):
        _make(cls, **{name: value}).partial_fit(X, y, classes=[-1, 1])
    # mid-stream: a bad value set later is refused and nothing changes
    model = _make(cls).partial_fit(X[:30], y[:30], classes=[-1, 1])
    before = snapshot(vars(model))
    good = model.get_params()[name]
    model.set_params(**{name: value})
    with pytest.raises(InvalidParameterError, match=message):
        model.partial_fit(X[30:], y[30:])
    model.set_params(**{name: good})
    assert_same_state(before, snapshot(vars(model)))
