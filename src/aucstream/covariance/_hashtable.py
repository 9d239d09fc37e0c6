r"""A hash table of the entries of a symmetric sparse matrix (its upper triangle).

The sparse summaries store :math:`P` as the entries :math:`(i, j)`, :math:`i \le j`,
in insertion order: ``keys`` (int64 ``(i << 32) | j``) and ``vals`` (float64), plus an
open-addressing index with linear probing (``index``, int32 positions, -1 = empty,
load factor at most 0.75) and ``info = [entries, cost, prunes]``. The cost counts the
non-zeros of the full symmetric matrix: 1 for a diagonal entry, 2 for an off-diagonal
pair (i, j) and (j, i). The arrays are allocated by the owner for a fixed capacity;
callers make sure there is room before adding an entry.

:func:`keep_largest` compacts the table to the entries of largest magnitude that fit
a cost budget. It finds the threshold magnitude by a radix select over the IEEE-754
bit patterns of the magnitudes (four 16-bit passes: linear time, no copy of the
entries), keeps the entries strictly above it and the threshold ties in storage
order while the budget allows; survivors keep their order.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from .._kernels import jit
from ._base import borrowing_njit, borrowing_step, compiled_step

__all__ = [
    "EMPTY",
    "LOW32",
    "EntryTable",
    "entry_cost",
    "entry_key",
    "frobenius_sq",
    "index_size",
    "insert_all",
    "keep_largest",
    "locate",
    "lookup",
    "reindex",
    "sparse_scatter_add",
]

EMPTY = -1
LOW32 = 0xFFFFFFFF
#: Largest load factor of the index.
LOAD = 0.75

#: The four arrays of a table (see the module docstring).
EntryTable = namedtuple("EntryTable", ["keys", "vals", "index", "info"])


def index_size(capacity: int) -> int:
    """Slots of the index for ``capacity`` entries (load factor <= 0.75)."""
    size = max(math.ceil(capacity / LOAD), capacity + 1, 8)
    if size >= 1 << 31:
        raise MemoryError(f"a sparse summary of {capacity} entries is too large")
    return size


@borrowing_step
def _slot(key, size):
    """Home slot of a key: splitmix64 finalizer, then multiply-shift onto [0, size)."""
    z = np.uint64(key) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.int64(((z >> np.uint64(32)) * np.uint64(size)) >> np.uint64(32))


@borrowing_step
def entry_cost(key):
    """1 for a diagonal entry, 2 for an off-diagonal pair (i, j) and (j, i)."""
    return 1 if (key >> 32) == (key & LOW32) else 2


@borrowing_step
def entry_key(i, j):
    """The key of entry (i, j) of the symmetric matrix (stored as (min, max))."""
    if i <= j:
        return (i << 32) | j
    return (j << 32) | i


@borrowing_step
def _probe(keys, index, key):
    """``(slot, position)`` of ``key``: its slot in the index and its position in the
    entries, or the empty slot where it belongs and -1 (linear probing)."""
    size = index.shape[0]
    s = _slot(key, size)
    while True:
        pos = index[s]
        if pos < 0 or keys[pos] == key:
            return s, pos
        s += 1
        if s == size:
            s = 0


@borrowing_step
def locate(keys, vals, index, info, key):
    """Position of ``key`` in a table's arrays, appended with value 0 if absent (the
    caller made room). Per-entry primitives take the arrays, not the
    :data:`EntryTable`: callers read the bundle's fields once, outside their loops."""
    s, pos = _probe(keys, index, key)
    if pos < 0:
        pos = info[0]
        keys[pos] = key
        vals[pos] = 0.0
        index[s] = pos
        info[0] = pos + 1
        info[1] += entry_cost(key)
    return pos


@borrowing_step
def lookup(keys, vals, index, key):
    """Stored value of ``key`` in a table's arrays (0 if absent)."""
    _, pos = _probe(keys, index, key)
    return vals[pos] if pos >= 0 else 0.0


@borrowing_njit
def reindex(table, nnz):
    """Rebuild the index of the first ``nnz`` entries."""
    keys, index = table.keys, table.index
    index[:] = EMPTY
    for pos in range(nnz):  # the keys are distinct: each probe ends at an empty slot
        s, _ = _probe(keys, index, keys[pos])
        index[s] = pos


@borrowing_njit
def insert_all(table, src):
    """Add the entries of the table ``src`` to ``table``, in their order."""
    keys, vals, index, info = table
    src_keys, src_vals = src.keys, src.vals
    for s in range(src.info[0]):
        pos = locate(keys, vals, index, info, src_keys[s])
        vals[pos] += src_vals[s]


@borrowing_njit
def sparse_scatter_add(table, v, out):
    """``out += P v`` for the symmetric P the table holds; O(entries)."""
    keys, vals = table.keys, table.vals
    for pos in range(table.info[0]):
        key = keys[pos]
        i = key >> 32
        j = key & LOW32
        x = vals[pos]
        out[i] += x * v[j]
        if i != j:
            out[j] += x * v[i]


@borrowing_njit
def frobenius_sq(table):
    r""":math:`\|P\|_F^2` of the symmetric P the table holds."""
    keys, vals = table.keys, table.vals
    total = 0.0
    for pos in range(table.info[0]):
        x = vals[pos]
        total += float(entry_cost(keys[pos])) * x * x
    return total


@compiled_step
def _magnitude_threshold(table, budget):
    """``(prefix, remaining)``: the bit pattern of the threshold magnitude, and the cost
    still available for entries at exactly that magnitude (radix select, 4 passes)."""
    keys, bits, nnz = table.keys, table.vals.view(np.uint64), table.info[0]
    absmask = np.uint64(0x7FFFFFFFFFFFFFFF)
    digit = np.uint64(0xFFFF)
    hist = np.zeros(65536, dtype=np.int64)
    prefix = np.uint64(0)
    pmask = np.uint64(0)
    remaining = budget  # cost still available inside the current prefix bucket
    for shift in (48, 32, 16, 0):
        sh = np.uint64(shift)
        hist[:] = 0
        for pos in range(nnz):
            m = bits[pos] & absmask
            if (m & pmask) == prefix:
                hist[np.int64((m >> sh) & digit)] += entry_cost(keys[pos])
        acc = 0
        b = 65535
        while b > 0 and acc + hist[b] <= remaining:
            acc += hist[b]
            b -= 1
        remaining -= acc
        prefix = prefix | (np.uint64(b) << sh)
        pmask = pmask | (digit << sh)
    return prefix, remaining


@jit
def keep_largest(table, budget):
    """Keep the entries of largest magnitude whose cost fits ``budget`` (module
    docstring); nothing happens when the table's cost is within the budget."""
    keys, vals, _, info = table
    if info[1] <= budget:
        return
    prefix, remaining = _magnitude_threshold(table, budget)
    bits = vals.view(np.uint64)
    absmask = np.uint64(0x7FFFFFFFFFFFFFFF)
    kept = 0
    cost = 0
    for pos in range(info[0]):
        m = bits[pos] & absmask
        c = entry_cost(keys[pos])
        if m < prefix:
            continue
        if m == prefix:
            if c > remaining:
                continue
            remaining -= c
        keys[kept] = keys[pos]
        vals[kept] = vals[pos]
        kept += 1
        cost += c
    info[0] = kept
    info[1] = cost
    info[2] += 1
    reindex(table, kept)
