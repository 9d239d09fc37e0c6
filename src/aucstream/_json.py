"""The one home of "make it JSON": run records, cache keys, reports and model files.

:func:`to_jsonable` turns what aucstream writes as JSON into plain Python values
(dict with str keys, list, str, int, float, bool, None), with two rules:

- the **report rule** (default, ``exact=False``), for run records, cache keys and
  reports: numpy scalars become Python scalars, numpy arrays, tuples and sets become
  lists (a set sorted when its items can be), paths become strings, dict keys become
  strings, and a NaN or infinite float becomes ``None`` (standard JSON has no NaN;
  readers turn a missing AUC back into NaN);
- the **exact rule** (``exact=True``), for model files, whose values must come back
  exactly as they were: a NaN or infinite float stays a float (:mod:`json` writes
  ``NaN``/``Infinity``, which it reads back), and a value that would not come back
  as the same kind (an array, a set, a path) is refused with ``TypeError``; tuples
  become lists, numpy scalars Python scalars. Floats are written by :mod:`json` with
  ``repr``, so they read back bit for bit.

Anything else is handed to ``default`` (like :func:`json.dumps`' hook), whose answer
is converted in turn; without one, ``TypeError`` names the type.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["dumps", "to_jsonable"]


def to_jsonable(
    value: Any, *, exact: bool = False, default: Callable[[Any], Any] | None = None
) -> Any:
    """``value`` as plain JSON-able Python values (see the module's rules).

    Parameters
    ----------
    value : object
        Nested dicts, lists and tuples of scalars, numpy scalars and arrays, paths.
    exact : bool, default=False
        The model files' rule: non-finite floats kept, arrays, sets and paths refused.
    default : callable, optional
        Called with a value of any other type; its result is converted in turn.

    Returns
    -------
    object
        Made of dict (str keys), list, str, int, float, bool and None only.

    Raises
    ------
    TypeError
        For a value of another type (without ``default``), or refused by ``exact``.

    Examples
    --------
    >>> import numpy as np
    >>> from pathlib import Path
    >>> from aucstream._json import to_jsonable
    >>> to_jsonable({"auc": np.float64("nan"), 1: (np.int64(2), np.bool_(True)),
    ...              "path": Path("a/b"), "x": np.arange(2)})
    {'auc': None, '1': [2, True], 'path': 'a/b', 'x': [0, 1]}
    >>> to_jsonable([float("inf"), (1, 2)], exact=True)
    [inf, [1, 2]]
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)  # an int subclass (an IntEnum, say) as a plain int
    if isinstance(value, float):
        if not exact and not math.isfinite(value):
            return None
        return float(value)
    if isinstance(value, np.generic):
        if isinstance(value, (np.number, np.bool_)):
            return to_jsonable(value.item(), exact=exact, default=default)
        if isinstance(value, (np.str_, np.bytes_)):
            return to_jsonable(value.item(), exact=exact, default=default)
    if isinstance(value, dict):
        return {
            str(k) if not isinstance(k, np.generic) else str(k.item()): to_jsonable(
                v, exact=exact, default=default
            )
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v, exact=exact, default=default) for v in value]
    if not exact:
        if isinstance(value, np.ndarray):
            return to_jsonable(value.tolist(), default=default)
        if isinstance(value, (set, frozenset)):
            items = [to_jsonable(v, default=default) for v in value]
            try:
                return sorted(items)
            except TypeError:
                return items
        if isinstance(value, os.PathLike):
            return os.fspath(value)
    if default is not None:
        return to_jsonable(default(value), exact=exact, default=default)
    raise TypeError(f"cannot write a value of type {type(value).__name__} as JSON")


def dumps(value: Any, *, exact: bool = False, **options) -> str:
    """:func:`json.dumps` of :func:`to_jsonable` of ``value``.

    Parameters
    ----------
    value : object
        See :func:`to_jsonable`.
    exact : bool, default=False
        The model files' rule (see :func:`to_jsonable`).
    **options
        Passed to :func:`json.dumps` (``sort_keys``, ``separators``, ``indent``);
        ``default`` is passed to :func:`to_jsonable`.

    Returns
    -------
    str

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream._json import dumps
    >>> dumps({"b": np.float32(0.5), "a": (1, float("nan"))}, sort_keys=True)
    '{"a": [1, null], "b": 0.5}'
    """
    default = options.pop("default", None)
    return json.dumps(to_jsonable(value, exact=exact, default=default), **options)
