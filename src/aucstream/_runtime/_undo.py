"""Undo logs: what a transaction's kernel calls overwrote in the arrays it did not copy.

For states of O(d tau) a transaction (:func:`aucstream._state.transaction`) does not
copy the arrays, indexed by feature, that a learner's kernel calls write only in the
rows their examples name; before each kernel call the learner saves those rows into
the :class:`UndoLog` of the transaction in progress (:func:`active_log`), and checks
only them afterwards. This module holds that job:

- :class:`UndoLog`, :func:`active_log` and the spare row buffers the logs reuse
  (:data:`_SPARES`);
- the rows a chunk names (:func:`unique_rows`, :func:`unique_rows_by_class`) and the
  compiled gather of those rows (:func:`_take_rows`);
- the finiteness of those rows only: :func:`mark_finite` / :func:`marked_finite`
  (which arrays were finite before the call) and :func:`_finite`, which
  :func:`aucstream._state.first_non_finite` calls per array;
- the copies and checks of the rows of :class:`aucstream._state.FlatState`'s plans
  (:func:`_copy_rows`, :func:`_rows_finite64`, :func:`_rows_finite32`);
- the square arrays whose kernel calls write, of the rows named, only the cells of the
  upper triangle whose column is named too (:func:`declare_upper_cells`,
  :func:`upper_cells`): the one-row transactions of :class:`aucstream._state.FlatState`
  save and check those cells alone.
"""

from __future__ import annotations

import weakref

import numba as nb
import numpy as np

from .._chunks import flagged
from .._fastpath import ByIdentity
from .._kernels import jit, pointer, prefetch_span, read_only_view

__all__ = [
    "Journalled",
    "LoggedCall",
    "UndoLog",
    "journal_of",
    "settle",
    "active_log",
    "unique_rows",
    "unique_rows_by_class",
    "union_rows",
    "mark_finite",
    "marked_finite",
    "declare_upper_cells",
    "upper_cells",
]


#: The undo logs of the transactions in progress, by object (innermost last).
_LOGS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def active_log(obj) -> UndoLog | None:
    """The undo log of the innermost :func:`transaction` of ``obj`` in progress, if any."""
    stack = _LOGS.get(obj)
    return stack[-1] if stack else None


#: What :meth:`UndoLog.cover` saves of an array that was all zero bits.
_ZEROS = object()


def _zero_bits(array: np.ndarray) -> bool:
    """Whether every byte of ``array`` is 0 (a float array of +0.0 only; -0.0 and
    NaN payloads are not); False for an array that is not contiguous."""
    if not array.flags.c_contiguous or array.dtype.hasobject:
        return False
    data = array.reshape(-1).view(np.uint8)
    cut = data.shape[0] - data.shape[0] % 8
    return not _any_set(data[:cut].view(np.uint64), data[cut:])


@jit
def _any_set(words, tail):
    """Whether a word or a byte is not 0, stopping at the first."""
    for i in range(words.shape[0]):
        if words[i] != 0:
            return True
    for i in range(tail.shape[0]):
        if tail[i] != 0:
            return True
    return False


class UndoLog:
    """What a transaction's kernel calls overwrote in the arrays it did not copy.

    For states of O(d tau) (OPAUC's d x tau sketches at d = 10^6: 0.76 GB) a copy of
    the whole state per call costs more than learning the chunk. A learner declares
    the arrays, indexed by feature along axis 0, that only its kernel calls write
    (``_row_logged_state``); :func:`transaction` keeps them by reference, and before
    each kernel call the learner :meth:`cover` s them: the rows the chunk names, for
    the arrays the kernel writes only there, else the whole array. :meth:`undo` puts
    the saved values back, latest first, so every element ends as it was when the
    transaction began: an element a call wrote was saved by it or by an earlier call
    of the same transaction (an earlier row save, or a whole copy, which holds the
    values of the elements that no earlier save names as they were at the start).
    The cover is also the set of arrays and rows the kernel call can have made
    non-finite (:func:`first_non_finite` with ``rows``).
    """

    __slots__ = ("arrays", "ids", "_entries", "_whole", "_buffers")

    def __init__(self, arrays: tuple):
        self.arrays = tuple(arrays)
        self.ids = frozenset(map(id, self.arrays))
        self._entries: list[tuple] = []
        self._whole: set[int] = set()
        self._buffers: list[tuple] = []  # (array, buffer) for release

    def cover(self, rows: dict | None, fresh: bool = False) -> None:
        """Save, before a kernel call, what it may write of the logged arrays: for
        each array whose id ``rows`` maps to row indices (distinct, inside the array:
        :func:`unique_rows`), those rows, and the whole of the others (``rows`` None:
        every array whole).

        ``fresh``: the learner has learnt nothing yet, so its arrays are likely as
        allocated. An array to save whole whose every byte is 0 (:func:`_zero_bits`:
        +0.0, not -0.0) is then not copied: its undo fills it with zeros, which
        is the same bits. The copy it saves is of fresh memory, whose page faults
        made the copies most of a wide race's first call (nine candidates' states
        of O(d) at d = 10^6: docs/results/highdim_bench.md)."""
        for array in self.arrays:
            if id(array) in self._whole:
                continue  # its values at the start are saved
            some = None if rows is None else rows.get(id(array))
            if some is not None:
                if some.shape[0]:  # (no rows: nothing to save)
                    self._entries.append((array, some, self._take(array, some)))
            else:
                self._whole.add(id(array))
                saved = _ZEROS if fresh and _zero_bits(array) else array.copy()
                self._entries.append((array, None, saved))

    def record(self, array: np.ndarray, rows: np.ndarray, saved: np.ndarray) -> None:
        """Keep ``saved``, the values that ``rows`` (distinct) of the logged ``array``
        held before the kernel call that has just returned first wrote them: the
        record of an update that saves its rows itself (``StateSpec.self_saved``,
        covered with no rows). Nothing to keep when the array was saved whole
        earlier in the transaction (its values at the start are kept)."""
        if not rows.shape[0]:
            return
        if id(array) not in self.ids:
            raise ValueError("the undo log does not hold this array")
        if id(array) not in self._whole:
            self._entries.append((array, rows, saved))

    def _take(self, array: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """``array[rows]`` into the array's spare buffer (:data:`_SPARES`) if it is
        large enough, else into a new one that may become the spare."""
        spare = _SPARES.pop(array)
        if spare is not None and spare.shape[0] >= rows.shape[0]:
            out = _take_rows(array, rows, spare[: rows.shape[0]])
        else:  # a new one; release offers both (a new one above an eighth is not kept)
            if spare is not None:
                self._buffers.append((array, spare))
            n = rows.shape[0]  # an eighth more rows (within an eighth of the array): the
            room = max(n, min(n + n // 8, array.shape[0] // 8))  # next calls name about as many
            spare = np.empty((room, *array.shape[1:]), dtype=array.dtype)
            out = _take_rows(array, rows, spare[:n])
        self._buffers.append((array, spare))
        return out

    def undo(self) -> None:
        """Put every logged array back as it was when the transaction began."""
        for array, rows, saved in reversed(self._entries):
            if saved is _ZEROS:
                array.fill(0)
            elif rows is None:
                array[...] = saved
            else:
                array[rows] = saved
        self._entries.clear()
        self._whole.clear()

    def release(self) -> None:
        """End of the transaction: forget the saved values and keep the largest buffer
        of each array (up to an eighth of the array's size) as its spare."""
        self._entries.clear()
        self._whole.clear()
        for array, buffer in self._buffers:
            if 8 * buffer.nbytes <= array.nbytes:
                kept = _SPARES.get(array)
                if kept is None or kept.nbytes < buffer.nbytes:
                    _SPARES[array] = buffer
        self._buffers.clear()


#: The journals of objects whose calls a holder undoes itself (:class:`Journalled`),
#: by the object's ``id`` (an entry lives only while its block runs).
_JOURNALS: dict[int, list] = {}


class Journalled:
    """While the ``with`` block runs, every learning call of ``learner`` (a learner's
    ``partial_fit``, ``test_then_train``; an online scaler's ``partial_fit_transform``)
    appends ``(walk, saved)`` to ``journal`` once it has saved what it can write:
    ``walk.restore(saved)`` undoes the call after it succeeded. A walk of the whole
    state (:func:`aucstream._state.walked_transaction`) stays valid until the learner's
    next transaction, which may reuse what the walk saved (a holder journals one call
    of each learner); an undo log (:class:`LoggedCall`: a state above
    :data:`aucstream._state.SHADOW_LIMIT`) until :func:`settle` releases it.

    For a learner that holds others and makes one transaction of its own call without
    copying them (:func:`aucstream.search.search_transaction`,
    :func:`aucstream._runtime._learning.journalled_transaction`): it calls their public
    methods inside such blocks, and a failure later in its call undoes theirs from the
    journal, last first.
    """

    __slots__ = ("key", "journal")

    def __init__(self, learner, journal: list):
        self.key, self.journal = id(learner), journal

    def __enter__(self) -> None:
        _JOURNALS[self.key] = self.journal

    def __exit__(self, *exc) -> None:
        del _JOURNALS[self.key]


def journal_of(obj) -> list | None:
    """The journal of the :class:`Journalled` block of ``obj`` in progress, if any."""
    return _JOURNALS.get(id(obj)) if _JOURNALS else None


class LoggedCall:
    """A journal's ``walk`` for a call whose transaction succeeded with an undo log
    (:func:`aucstream._state.transaction` given a ``journal``): the log, kept with the
    rows it saved, and what puts the rest of the state back (``put_back(obj, saved)``,
    :func:`aucstream._state.restore` of the transaction's snapshot)."""

    __slots__ = ("obj", "log", "put_back")

    def __init__(self, obj, log: UndoLog | None, put_back):
        self.obj, self.log, self.put_back = obj, log, put_back

    def restore(self, saved: dict) -> None:
        """Undo the call: its logged rows, then the rest of the state; release the log."""
        if self.log is not None:
            self.log.undo()
        self.put_back(self.obj, saved)
        self.release()

    def release(self) -> None:
        """Forget the saved rows (their buffers become spares again, :meth:`UndoLog.release`)."""
        if self.log is not None:
            self.log.release()
            self.log = None


def settle(journal: list) -> None:
    """The call of a holder that journals succeeded: release the undo logs its journal
    kept (:class:`LoggedCall`); the walks need nothing."""
    for walk, _ in journal:
        if type(walk) is LoggedCall:
            walk.release()


#: Spare row buffers of undo logs, one per logged array (weakly, by identity).
#:
#: Each call of a learner at d = 10^6 saves the rows its chunk names (some 70,000
#: rows of 400 bytes per sketch for a chunk of 8192 examples): a new buffer per call
#: costs its pages' first touch, a large part of the copy (OPAUC with the hashed
#: sketch, ``benchmarks/bench_highdim.py``, reported in docs/benchmarks.md). A buffer
#: is lent to one log at a time
#: (taken out by ``pop``) and goes when its array does; a new one has room for an
#: eighth more rows than the call names (the next chunk names about as many: a
#: buffer of exactly this call's rows was replaced at every chunk that named more,
#: and its pages touched again), and at most an eighth of
#: each logged array's size is kept: saves of larger calls (chunks naming more than
#: an eighth of the features) take new buffers.
_SPARES = ByIdentity()


#: Arrays known finite, by object (:func:`mark_finite`): {id(array): weak reference}.
_FINITE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def mark_finite(obj, arrays: tuple) -> None:
    """Record that these state arrays of ``obj`` are finite now (freshly allocated, or
    checked in full), so that a later check may visit only the rows a call wrote."""
    if arrays or obj in _FINITE:
        _FINITE[obj] = {id(a): weakref.ref(a) for a in arrays}


def marked_finite(obj, arrays: tuple) -> tuple:
    """Those of ``arrays`` that :func:`mark_finite` recorded for ``obj`` (the same
    objects: weak references, so a new array with an old id is not taken for it)."""
    known = _FINITE.get(obj)
    if not known:
        return ()
    return tuple(a for a in arrays if (r := known.get(id(a))) is not None and r() is a)


# ------------------------------------- the row tables of FlatState's plans
# (:class:`aucstream._state.FlatState`: per array of a plan saved by rows, the
# addresses of the array and of its shadow copy; see :func:`_copy_rows`)
@jit(inline="always")
def _copy_cells(source, target, n, rows, dtype):
    """Copy the cells ``(r, c)``, ``r <= c``, of rows and columns ``rows`` (inside: checked
    by the caller) of the n x n array of ``dtype`` values at address ``source`` to the
    same places of the one at ``target`` (compiled code only: ``dtype`` is a numba
    class)."""
    src = nb.carray(pointer(source, dtype), n * n)
    out = nb.carray(pointer(target, dtype), n * n)
    for r in rows:
        base = r * n
        for c in rows:
            if c >= r:
                out[base + c] = src[base + c]


@jit
def _copy_rows(table, rows):
    """Copy rows ``rows`` of arrays to the same places of others: per table row
    (source address, target address, bytes per row, number of rows, cells), where
    cells is 0 (the rows whole) or the item size (4 or 8) of a square array of which
    only the cells ``(r, c)``, ``r <= c``, of the rows and columns ``rows`` are copied
    (:func:`declare_upper_cells`).

    Returns False, having copied nothing, when a row is outside an array (the
    addresses are those of arrays the caller keeps alive, as for
    :func:`aucstream._state._copy_table`). A row named twice is copied twice, to the
    same place.
    """
    for i in range(table.shape[0]):
        cell = table[i, 4]
        if cell != 0 and table[i, 2] != cell * table[i, 3]:
            return False  # (not square: never planned so)
        for r in rows:
            if r < 0 or r >= table[i, 3]:
                return False
    for i in range(table.shape[0]):
        width = table[i, 2]
        cell = table[i, 4]
        if cell == 8:
            _copy_cells(table[i, 0], table[i, 1], table[i, 3], rows, nb.uint64)
            continue
        if cell == 4:
            _copy_cells(table[i, 0], table[i, 1], table[i, 3], rows, nb.uint32)
            continue
        size = width * table[i, 3]
        source = nb.carray(pointer(table[i, 0], nb.uint8), size)
        target = nb.carray(pointer(table[i, 1], nb.uint8), size)
        for r in rows:
            # slices, so that the loop indexes from 0 without wraparound (it vectorizes)
            row, out = source[r * width : (r + 1) * width], target[r * width : (r + 1) * width]
            for j in range(width):
                out[j] = row[j]
    return True


@jit(fastmath={"reassoc"})
def _table_rows_finite(table, rows, dtype):
    """Whether rows ``rows`` of the arrays of ``dtype`` values in ``table`` (address,
    values per row, number of rows, cells) are finite, as
    :func:`aucstream._state._all_finite` checks them (with cells 1, a square array's
    cells ``(r, c)``, ``r <= c``, of the rows and columns ``rows`` only:
    :func:`_copy_rows`); False also for a row outside an array.
    Compiled code only (``dtype`` is a compile-time numba class):
    :func:`_rows_finite64`, :func:`_rows_finite32`."""
    zero = dtype(0.0)
    for i in range(table.shape[0]):
        width, n = table[i, 1], table[i, 2]
        values = nb.carray(pointer(table[i, 0], dtype), width * n)
        cells = table[i, 3] != 0
        if cells and width != n:
            return False  # (not square: never planned so)
        for r in rows:
            if r < 0 or r >= n:
                return False
            acc = zero
            row = values[r * width : (r + 1) * width]
            if cells:
                for c in rows:
                    if c >= r:
                        acc += row[c] * zero
            else:
                for j in range(width):
                    acc += row[j] * zero
            if acc != zero:
                return False
    return True


@jit
def _rows_finite64(table, rows):
    """:func:`_table_rows_finite` of float64 arrays."""
    return _table_rows_finite(table, rows, np.float64)


@jit
def _rows_finite32(table, rows):
    """:func:`_table_rows_finite` of float32 arrays."""
    return _table_rows_finite(table, rows, np.float32)


#: The arrays declared by :func:`declare_upper_cells` (weakly, by identity).
_UPPER_CELLS = ByIdentity()


def declare_upper_cells(*arrays: np.ndarray) -> None:
    r"""Declare square arrays (d x d) that a kernel call, when a declaration names them
    by rows (a learner's ``_row_written_state``), writes only in the cells
    :math:`(i, j)`, :math:`i \le j`, whose row i and column j are both among the rows
    named: the upper triangle of a scatter :math:`P \mathrel{+}= \omega x x^\top`
    kept for the stored indices of sparse rows
    (:func:`aucstream.covariance._full._add_sparse`: k (k + 1) / 2 cells, where the
    rows hold k d). A plan of :class:`aucstream._state.FlatState` then saves, restores
    and checks those cells only. The declaration holds for every later call that
    names the array by rows (a call that may write more must declare it whole), and
    goes with the array."""
    for array in arrays:
        if _UPPER_CELLS.get(array) is None:
            _UPPER_CELLS[array] = True


def upper_cells(array: np.ndarray) -> bool:
    """Whether :func:`declare_upper_cells` declared ``array`` (a square 2-D array)."""
    return (
        array.ndim == 2 and array.shape[0] == array.shape[1] and _UPPER_CELLS.get(array) is not None
    )


@jit
def _distinct(indices, n):
    """The distinct values of ``indices`` (all in [0, n): checked by the caller), sorted."""
    seen = np.zeros(n, dtype=np.bool_)
    for i in indices:
        seen[i] = True
    return flagged(seen)


def unique_rows(indices: np.ndarray, n: int) -> np.ndarray:
    """The distinct values of the int64 ``indices``, which must lie in [0, n), sorted
    (so that the rows are then visited in memory order): O(len + n) by flags, or by a
    sort, O(len log len), when there are far fewer indices than rows (one example at
    d = 10^6 would otherwise pay for a flag array of d entries). Raises ``ValueError``
    for an index outside."""
    indices = np.ascontiguousarray(indices, dtype=np.int64)
    if indices.size and (indices.min() < 0 or indices.max() >= n):
        raise ValueError(f"row indices outside [0, {n})")
    if 64 * indices.size < n:
        return np.unique(indices)
    return _distinct(read_only_view(indices), n)


@jit
def _distinct_by_class(indptr, indices, positive, n):
    """:func:`_distinct` of the indices of the CSR rows that are not ``positive`` and
    of those that are, in one pass (indices in [0, n): checked by the caller)."""
    seen = np.zeros((2, n), dtype=np.bool_)
    for r in range(indptr.shape[0] - 1):
        flags = seen[1 if positive[r] else 0]
        for q in range(indptr[r], indptr[r + 1]):
            flags[indices[q]] = True
    return flagged(seen[0]), flagged(seen[1])


def unique_rows_by_class(
    indptr: np.ndarray, indices: np.ndarray, positive: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`unique_rows` of the indices of the CSR rows (``indptr`` into the int64
    ``indices``) that are not ``positive`` (a boolean per row), and of those that
    are: one pass over flags instead of two masks and two passes (chunks at d = 10^6:
    ``benchmarks/bench_highdim.py``, reported in docs/benchmarks.md)."""
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    positive = np.asarray(positive, dtype=np.bool_)
    if positive.shape != (indptr.shape[0] - 1,) or (np.diff(indptr) < 0).any():
        raise ValueError("indptr and the labels do not describe the same rows")
    named = np.ascontiguousarray(indices[indptr[0] : indptr[-1]], dtype=np.int64)
    if named.shape[0] != indptr[-1] - indptr[0]:
        raise ValueError("indptr points outside the indices")
    if 64 * named.size < n:  # few indices: by sorts (unique_rows)
        mask = np.repeat(positive, np.diff(indptr))
        return unique_rows(named[~mask], n), unique_rows(named[mask], n)
    if named.size and (named.min() < 0 or named.max() >= n):
        raise ValueError(f"row indices outside [0, {n})")
    return _distinct_by_class(indptr - indptr[0], named, positive, n)


@jit
def _union(a, b):
    """The sorted union of the sorted, distinct int64 ``a`` and ``b`` (one merge)."""
    out = np.empty(a.shape[0] + b.shape[0], dtype=np.int64)
    i = j = m = 0
    while i < a.shape[0] and j < b.shape[0]:
        x, y = a[i], b[j]
        if x <= y:
            out[m] = x
            i += 1
            j += x == y
        else:
            out[m] = y
            j += 1
        m += 1
    while i < a.shape[0]:
        out[m] = a[i]
        i += 1
        m += 1
    while j < b.shape[0]:
        out[m] = b[j]
        j += 1
        m += 1
    return out[:m].copy()


def union_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The sorted union of two sorted arrays of distinct row indices (as
    :func:`unique_rows_by_class` gives them): O(len(a) + len(b)), where ``np.union1d``
    sorts them again (OPAUC's v, of the features of both classes' examples)."""
    a = np.ascontiguousarray(a, dtype=np.int64)
    b = np.ascontiguousarray(b, dtype=np.int64)
    if (a.size > 1 and (np.diff(a) <= 0).any()) or (b.size > 1 and (np.diff(b) <= 0).any()):
        raise ValueError("union_rows takes sorted arrays of distinct rows")
    return _union(a, b)


@jit
def _gather(values, first, rows, out):
    """``out[t] = values[rows[t], first:first + w]`` (w = ``out.shape[1]``) for 2-D
    C-contiguous arrays (rows inside: checked by the caller).

    Each row is prefetched 8 rows ahead: the rows of an undo log are scattered over
    arrays of up to a gigabyte, so each read would otherwise wait on memory."""
    step = values.strides[0]
    skip = first * values.itemsize
    width = out.shape[1]
    n = rows.shape[0]
    for t in range(n):
        if t + 8 < n:
            prefetch_span(values, rows[t + 8] * step + skip, width * values.itemsize)
        source = values[rows[t]]
        target = out[t]
        for j in range(width):
            target[j] = source[first + j]


def _c_rows(array: np.ndarray) -> tuple[np.ndarray, int] | None:
    """``(values, first)``: a C-contiguous 2-D array whose columns ``first`` on hold
    the rows of ``array`` (axis 0): the array itself, flattened after axis 0, or the
    C-contiguous base of which it is a block of columns (OPAUC's sketches, the halves
    of their interleaved pair: :func:`aucstream.covariance.sketch_pair`); None for
    other arrays."""
    if array.ndim == 0:
        return None
    if array.flags.c_contiguous:
        return array.reshape(array.shape[0], -1), 0
    base = array.base
    if not (
        array.ndim == 2
        and isinstance(base, np.ndarray)
        and base.ndim == 2
        and base.flags.c_contiguous
        and base.dtype == array.dtype
        and base.shape[0] == array.shape[0]
        and array.strides == base.strides
    ):
        return None
    first, rest = divmod(array.ctypes.data - base.ctypes.data, base.itemsize)
    if rest or first < 0 or first + array.shape[1] > base.shape[1]:
        return None
    return base, first


def _take_rows(array: np.ndarray, rows: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``array[rows]`` (rows along axis 0, inside the array), into ``out`` (of that
    shape and dtype, C-contiguous) or a new array."""
    source = _c_rows(array)
    if source is None or array.dtype.hasobject:
        return array[rows]
    if rows.size and (rows.min() < 0 or rows.max() >= array.shape[0]):
        raise ValueError("rows outside the array")
    if out is None:
        out = np.empty((rows.shape[0], *array.shape[1:]), dtype=array.dtype)
    width = int(np.prod(array.shape[1:], dtype=np.int64))
    _gather(*source, rows, out.reshape(rows.shape[0], width))
    return out


#: Rows between the one :func:`_rows_finite` checks and the one it prefetches.
_AHEAD = 16


@jit
def _rows_finite(values, first, width, rows):
    """Whether rows ``rows`` (inside ``values``: checked by the caller) of columns
    ``first`` to ``first + width`` of the 2-D C-contiguous float64 or float32
    ``values`` are finite (``x * 0.0`` is 0 exactly for a finite x; the flags'
    conjunction vectorizes, where a sum of the products ran one addition at a time)."""
    step = values.strides[0]
    skip = first * values.itemsize
    for q in range(rows.shape[0]):
        if q + _AHEAD < rows.shape[0]:  # random rows: ask for one well ahead
            prefetch_span(values, rows[q + _AHEAD] * step + skip, width * values.itemsize)
        row = values[rows[q]]
        ok = True
        for j in range(width):
            ok &= row[first + j] * 0.0 == 0.0
        if not ok:
            return False
    return True


def _finite(array: np.ndarray, rows: np.ndarray | None) -> bool:
    """Whether ``array`` is finite, or only its rows ``rows`` (along axis 0) if given."""
    if rows is None:
        return bool(np.isfinite(array).all())
    source = _c_rows(array)
    if source is None or array.dtype not in (np.float64, np.float32):
        return bool(np.isfinite(array[rows]).all())
    if rows.size and (rows.min() < 0 or rows.max() >= array.shape[0]):
        raise ValueError("rows outside the array")
    width = int(np.prod(array.shape[1:], dtype=np.int64))
    return _rows_finite(source[0], source[1], width, rows)
