"""Checks shared by the detectors: parameters, the memory budget and monitored values.

Every check runs before any state is touched, so a refused call changes nothing.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
from numpy.typing import ArrayLike

from aucstream._config import format_bytes, get_config
from aucstream._params import validate_parameter_constraints

__all__ = ["check_params", "check_memory", "check_value", "check_values"]


def check_params(owner, constraints: dict) -> None:
    """Check ``owner``'s constructor parameters against ``constraints`` (scikit-learn's
    vocabulary, booleans not numbers); raise ``InvalidParameterError`` naming the class."""
    validate_parameter_constraints(
        constraints,
        {name: getattr(owner, name) for name in constraints},
        caller_name=type(owner).__name__,
    )


def check_memory(owner, nbytes: int, what: str) -> None:
    """Refuse a state of ``nbytes`` bytes larger than the memory budget."""
    budget = get_config()["memory_budget"]
    if nbytes > budget:
        raise ValueError(
            f"{type(owner).__name__} would allocate {format_bytes(nbytes)} for {what}, more than "
            f"aucstream's memory_budget of {format_bytes(budget)} "
            "(aucstream.set_config(memory_budget=...) changes it)"
        )


def check_value(x) -> float:
    """One monitored value as a float: a real number (a bool counts as 0 or 1).

    NaN is returned as is (the detectors skip it); an infinite value is refused.
    """
    if isinstance(x, np.ndarray) and x.ndim == 0:
        x = x[()]
    if not isinstance(x, (Real, np.bool_)):
        raise TypeError(f"x must be a real number, got {type(x).__name__}: {x!r}")
    value = float(x)
    if math.isinf(value):
        raise ValueError(f"x = {value} is infinite; the update was refused (nothing changed)")
    return value


def check_values(values: ArrayLike, name: str = "values") -> np.ndarray:
    """Monitored values as a contiguous 1-D float64 array (NaN kept, to be skipped).

    Raises
    ------
    TypeError
        If the values are not real numbers (strings, objects, complex, None).
    ValueError
        If they are not one-dimensional or one is infinite (the message names it).
    """
    array = np.asarray(values)
    if array.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must be real numbers, got an array of dtype {array.dtype} "
            f"(the update was refused, nothing changed)"
        )
    if array.ndim != 1:
        raise ValueError(
            f"{name} must be one-dimensional, got shape {array.shape} "
            f"(the update was refused, nothing changed)"
        )
    array = np.ascontiguousarray(array, dtype=np.float64)
    bad = np.isinf(array)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"{name}[{i}] = {array[i]} is infinite; the update was refused (nothing changed)"
        )
    return array
