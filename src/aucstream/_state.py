"""A learner's state as data: walk it, copy it, restore it, check it.

The state of an aucstream learner is every attribute whose name ends in ``_`` (plus its
random generator ``_rng``): numpy arrays, Python scalars, and components (covariance
summaries, reservoirs, lists of them) whose own attributes are again arrays and
scalars. Everything here works on that shape generically, so a learner declares its
state once — by allocating it in ``_init_state`` — and gets, for free:

- **transactions** (:func:`snapshot` / :func:`restore`): a call that raises leaves the
  learner exactly as before, bit for bit, including its random generator;
- **divergence detection** (:func:`first_non_finite`): every floating-point array the
  learner keeps, not only the weights, must stay finite;
- **checking a loaded state** (:func:`check_like`) against the state a fresh learner
  with the same parameters allocates: the same members, dtypes and shapes.

Components and learners refine the last check with a ``_check_state()`` method for
what a shape cannot say (counters within range, indices inside their arrays).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

__all__ = [
    "STATE_EXTRA",
    "state_items",
    "snapshot",
    "restore",
    "transaction",
    "first_non_finite",
    "check_like",
]

#: Private attributes that are state although their names do not end in ``_``.
STATE_EXTRA = ("_rng",)


def is_state_name(name: str) -> bool:
    """State attributes end in ``_`` (but are not dunder names) or are listed above."""
    return (name.endswith("_") and not name.startswith("__")) or name in STATE_EXTRA


def state_items(obj) -> dict[str, Any]:
    """The state attributes of a learner (not its hyperparameters)."""
    return {k: v for k, v in vars(obj).items() if is_state_name(k)}


def _is_component(value) -> bool:
    return type(value).__module__.startswith("aucstream") and hasattr(value, "__dict__")


class _Saved:
    """A generator or component to rewind in place, with its saved contents."""

    __slots__ = ("obj", "contents")

    def __init__(self, obj, contents):
        self.obj, self.contents = obj, contents


def _copy(value):
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_copy(v) for v in value)
    if isinstance(value, np.random.Generator):
        return _Saved(value, value.bit_generator.state)
    if _is_component(value):
        return _Saved(value, {k: _copy(v) for k, v in vars(value).items()})
    return value


def _restored(saved):
    if isinstance(saved, _Saved):
        obj = saved.obj
        if isinstance(obj, np.random.Generator):
            obj.bit_generator.state = saved.contents  # the same Generator, rewound
        else:
            vars(obj).clear()
            vars(obj).update({k: _restored(v) for k, v in saved.contents.items()})
        return obj
    if isinstance(saved, list):
        return [_restored(v) for v in saved]
    if isinstance(saved, tuple):
        return tuple(_restored(v) for v in saved)
    return saved


def snapshot(obj) -> dict:
    """Everything needed to put ``obj`` back as it is now (arrays are copied)."""
    return {k: _copy(v) for k, v in vars(obj).items()}


def restore(obj, saved: dict) -> None:
    """Put ``obj`` back to a :func:`snapshot` (the same component and generator objects)."""
    values = {k: _restored(v) for k, v in saved.items()}
    vars(obj).clear()
    vars(obj).update(values)


@contextmanager
def transaction(obj) -> Iterator[None]:
    """Run a block so that, if it raises, ``obj`` is exactly as before (state, generator)."""
    saved = snapshot(obj)
    try:
        yield
    except BaseException:
        restore(obj, saved)
        raise


def _arrays(value, path: str) -> Iterator[tuple[str, np.ndarray]]:
    if isinstance(value, np.ndarray):
        yield path, value
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _arrays(v, f"{path}[{i}]")
    elif _is_component(value):
        for k, v in vars(value).items():
            yield from _arrays(v, f"{path}.{k}")


def first_non_finite(obj) -> str | None:
    """The path of the first floating-point state array holding NaN or infinity."""
    for name, value in state_items(obj).items():
        if isinstance(value, float) and not np.isfinite(value):
            return name
        for path, array in _arrays(value, name):
            if array.dtype.kind in "fc" and not np.isfinite(array).all():
                return path
    return None


def check_like(value, reference, path: str, growable: bool = False) -> None:
    """Check a loaded state value against the freshly allocated ``reference``.

    Arrays must have the reference's dtype and number of dimensions, and its shape
    except along axis 0 where ``growable`` (buffers that grow with the stream);
    components must be of the same class with the same members; scalars of a
    compatible type. Raises ``ValueError`` naming the member.
    """
    if isinstance(reference, np.ndarray):
        if not isinstance(value, np.ndarray):
            raise ValueError(f"{path}: expected an array, found {type(value).__name__}")
        if value.dtype != reference.dtype and not (
            value.dtype.kind in "UO" and reference.dtype.kind in "UO"
        ):
            raise ValueError(f"{path}: dtype {value.dtype}, expected {reference.dtype}")
        if value.ndim != reference.ndim:
            raise ValueError(f"{path}: shape {value.shape}, expected {reference.shape}")
        lead = 1 if growable and value.ndim else 0
        if value.shape[lead:] != reference.shape[lead:]:
            raise ValueError(f"{path}: shape {value.shape}, expected {reference.shape}")
        return
    if isinstance(reference, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(reference):
            raise ValueError(f"{path}: expected a list of {len(reference)} members")
        for i, (v, r) in enumerate(zip(value, reference)):
            check_like(v, r, f"{path}[{i}]", growable)
        return
    if _is_component(reference):
        if type(value) is not type(reference):
            raise ValueError(
                f"{path}: expected a {type(reference).__name__}, found {type(value).__name__}"
            )
        growing = set(getattr(reference, "_growable_state", ()))
        mine, theirs = set(vars(value)), set(vars(reference))
        if mine != theirs:
            raise ValueError(f"{path}: members {sorted(mine ^ theirs)} do not match")
        for k in vars(reference):
            check_like(vars(value)[k], vars(reference)[k], f"{path}.{k}", k in growing)
        check = getattr(value, "_check_state", None)
        if check is not None:
            check()
        return
    if isinstance(reference, np.random.Generator):
        if not isinstance(value, np.random.Generator):
            raise ValueError(f"{path}: expected a random generator")
        return
    if reference is None or value is None:
        return  # optional scalars (e.g. an unbounded capacity)
    if isinstance(reference, bool) != isinstance(value, bool) or not isinstance(
        value, (int, float, str, bool)
    ):
        raise ValueError(f"{path}: expected a {type(reference).__name__}, found {value!r}")
    if isinstance(reference, (int, float)) and not isinstance(value, (int, float)):
        raise ValueError(f"{path}: expected a number, found {value!r}")
