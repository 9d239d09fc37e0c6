r"""Consistency checks of a summary's state, for states that come from outside.

:func:`aucstream.load_model` checks every member of a loaded file against a freshly
allocated state (dtype and shape) and then calls each summary's ``_check_state``,
which calls the functions here. They check what a shape cannot say and what the
compiled kernels rely on without checking it themselves (numba does not check
bounds): counters that index arrays are inside their ranges, the stored indices
(feature indices, hash-table positions and keys) point inside their arrays, the
hash index of a sparse scatter is exactly the index of its entries (so every probe
sequence ends, and every lookup finds its entry), the settings derived from the
parameters are the derived values, and counts agree with the data they count (an
empty summary holds zeros). A problem raises ``ValueError`` naming the member.

Floating-point contents are checked only where an exact property holds in floating
point too (a sum of squares is not negative, entries outside the feature support are
exactly zero); finiteness is checked generically by the loader.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

__all__ = [
    "check_array",
    "check_count",
    "check_empty",
    "check_derived",
    "check_float_setting",
    "check_int_setting",
    "check_moments",
    "check_weight",
    "check_nonnegative",
    "check_support",
    "check_table",
    "check_zero_outside",
]


def _is_int(value) -> bool:
    return isinstance(value, Integral) and not isinstance(value, (bool, np.bool_))


def check_int_setting(name: str, value, minimum: int) -> int:
    """A setting that must be an int >= ``minimum``."""
    if not _is_int(value) or value < minimum:
        raise ValueError(f"{name} = {value!r} is not an int >= {minimum}")
    return int(value)


def check_float_setting(name: str, value, minimum: float = 0.0) -> float:
    """A setting that must be a finite real >= ``minimum``."""
    if (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, Real)
        or not math.isfinite(value)
        or value < minimum
    ):
        raise ValueError(f"{name} = {value!r} is not a finite number >= {minimum}")
    return float(value)


def check_derived(name: str, value, expected) -> None:
    """A setting derived from the others must have its derived value."""
    if not _is_int(value) or value != expected:
        raise ValueError(f"{name} = {value!r}, but the other settings give {expected}")


def check_array(owner, name: str, shape: tuple, kind: str, dtype=None) -> np.ndarray:
    """``owner.name`` must be an array of this shape and dtype kind ("f": floating,
    "i": int64 unless ``dtype`` says otherwise, "b": bool)."""
    array = getattr(owner, name, None)
    if not isinstance(array, np.ndarray):
        raise ValueError(f"{name} is not an array")
    if array.shape != tuple(shape):
        raise ValueError(f"{name} has shape {array.shape}, expected {tuple(shape)}")
    if kind == "f":
        ok = array.dtype.kind == "f"
    elif kind == "i":
        ok = array.dtype == np.dtype(dtype or np.int64)
    else:
        ok = array.dtype == np.bool_
    if not ok:
        raise ValueError(f"{name} has dtype {array.dtype}")
    return array


def check_count(owner, name: str = "count_") -> int:
    """``owner.count_``: shape (1,), int64, not negative; returns T."""
    count = int(check_array(owner, name, (1,), "i")[0])
    if count < 0:
        raise ValueError(f"{name} = {count} is negative (a number of examples)")
    return count


def check_weight(owner, count: int) -> float:
    """``owner.weight_``: the total weight W of the ``count`` examples added (each of
    weight > 0): shape (1,), float, finite, >= 0, and 0 exactly when the count is;
    returns W."""
    weight = float(check_array(owner, "weight_", (1,), "f")[0])
    if not (np.isfinite(weight) and weight >= 0.0):
        raise ValueError(f"weight_ = {weight} is not a total weight (finite, >= 0)")
    if (weight == 0.0) != (count == 0):
        raise ValueError(f"weight_ = {weight} does not match count_ = {count}")
    return weight


def check_nonnegative(owner, name: str, what: str) -> None:
    """Every entry of ``owner.name`` (a sum of squares, a counter) is >= 0."""
    array = getattr(owner, name)
    if array.size and array.min() < 0:
        raise ValueError(f"{name} holds a negative value, but it is {what}")


def check_empty(owner, count: int, names: tuple[str, ...]) -> None:
    """An empty summary (count 0) holds only zeros in the listed arrays."""
    if count != 0:
        return
    for name in names:
        if np.any(getattr(owner, name)):
            raise ValueError(f"count_ is 0, but {name} is not all zero")


def check_support(owner, d: int) -> np.ndarray:
    """``seen_`` (d,), ``support_`` (d,) and ``n_support_`` (1,): the first
    ``n_support_[0]`` entries of ``support_`` are distinct features in [0, d) and
    ``seen_`` marks exactly them. Returns that support."""
    seen = check_array(owner, "seen_", (d,), "b")
    support = check_array(owner, "support_", (d,), "i")
    n = int(check_array(owner, "n_support_", (1,), "i")[0])
    if not 0 <= n <= d:
        raise ValueError(f"n_support_ = {n} is outside [0, {d}] (the number of features)")
    used = support[:n]
    if n and (used.min() < 0 or used.max() >= d):
        raise ValueError(f"support_ holds a feature index outside [0, {d})")
    marked = np.zeros(d, dtype=np.bool_)
    marked[used] = True
    if int(np.count_nonzero(marked)) != n:
        raise ValueError("support_ lists a feature twice")
    if not np.array_equal(marked, seen):
        raise ValueError(f"seen_ does not mark exactly the features support_[:{n}]")
    return used


def check_zero_outside(owner, name: str, seen: np.ndarray) -> None:
    """Rows of ``owner.name`` of features outside the support (``seen`` false) are
    zero: only features that were non-zero in an example ever change them."""
    array = getattr(owner, name)
    nonzero = array.any(axis=1) if array.ndim == 2 else array != 0  # no copy of the rows
    if np.any(nonzero & ~seen):
        raise ValueError(f"{name} is non-zero at a feature outside the support (seen_)")


def check_table(owner, d: int, full: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The entry table of a sparse scatter (``keys_``, ``values_``, ``index_``,
    ``info_``; :mod:`._hashtable`): ``info_[0]`` entries within the arrays, their keys
    distinct pairs (i, j) with 0 <= i <= j < d, ``info_[1]`` their cost, ``info_[2]``
    not negative, diagonal values not negative (:math:`P_{ii} = \\sum x_i^2`), and
    ``index_`` exactly the open-addressing index the table builds for those keys (so
    every slot is empty or holds one of the positions, every entry is found by its
    probe sequence, and every probe sequence reaches an empty slot).

    Returns the rows i, the columns j and the values of the stored entries.
    """
    from ._hashtable import LOW32, EntryTable, index_size, reindex

    keys = getattr(owner, "keys_", None)
    if not isinstance(keys, np.ndarray) or keys.ndim != 1:
        raise ValueError("keys_ is not a 1-d array")
    capacity = keys.shape[0]
    check_array(owner, "keys_", (capacity,), "i")
    vals = check_array(owner, "values_", (capacity,), "f")
    try:
        slots = index_size(capacity)
    except MemoryError as error:
        raise ValueError(f"keys_: {error}") from None
    index = check_array(owner, "index_", (slots,), "i", np.int32)
    info = check_array(owner, "info_", (3,), "i")
    nnz, cost, prunes = (int(v) for v in info)
    if not 0 <= nnz <= min(capacity, full):
        raise ValueError(
            f"info_[0] = {nnz} entries, outside [0, {min(capacity, full)}] (the capacity "
            f"of keys_, at most the d(d+1)/2 = {full} entries of a triangle)"
        )
    if prunes < 0:
        raise ValueError(f"info_[2] = {prunes} prunes is negative")
    used = keys[:nnz]
    if nnz and used.min() < 0:
        raise ValueError("keys_ holds a negative key")
    rows, cols = used >> 32, used & LOW32
    if np.any(rows > cols) or np.any(cols >= d):
        raise ValueError(f"keys_ holds an entry (i, j) outside 0 <= i <= j < {d}")
    fresh = np.empty_like(index)
    # ends whatever the keys: at most nnz < len(index) slots fill; a repeated key finds
    # its first position and takes no slot of its own
    reindex(EntryTable(keys, vals, fresh, info), nnz)
    if int(np.count_nonzero(fresh >= 0)) != nnz:
        raise ValueError("keys_ holds an entry twice")
    diagonal = rows == cols
    expected = int(2 * nnz - np.count_nonzero(diagonal))
    if cost != expected:
        raise ValueError(f"info_[1] = {cost}, but the entries' cost is {expected}")
    values = vals[:nnz]
    if np.any(values[diagonal] < 0):
        raise ValueError("values_ holds a negative diagonal entry (a sum of squares)")
    if not np.array_equal(fresh, index):
        raise ValueError(f"index_ is not the hash index of the entries keys_[:{nnz}]")
    return rows, cols, values


def check_moments(sums: np.ndarray, diagonal: np.ndarray, count: float, slack: float = 0.0) -> None:
    r"""Exact second moments: :math:`P_{ii} = \sum_t \omega_t x_{ti}^2 \ge 0` and, by
    Cauchy-Schwarz, :math:`s_i^2 \le W P_{ii}` (up to rounding, and up to a relative
    ``slack`` more for a diagonal accumulated in lower precision), W the total weight
    (the count T when every weight is 1)."""
    if np.any(diagonal < 0):
        raise ValueError("the scatter has a negative diagonal entry (a sum of squares)")
    with np.errstate(over="ignore"):
        excess = sums * sums > count * diagonal * (1.0 + 1e-6 + slack) + 1e-290
    if np.any(excess):
        raise ValueError(
            f"sum_ and the scatter's diagonal are not the sums of examples of total weight "
            f"{count} (s_i^2 > W P_ii for some feature): count_/weight_ do not match the data"
        )
