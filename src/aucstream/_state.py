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
- **undo logs** for states of O(d tau) (:class:`UndoLog`, in
  :mod:`aucstream._runtime._undo`): arrays indexed by feature that a learning call
  writes only in the rows its examples name are not copied by the transaction; the
  rows are saved before each kernel call (and checked after it), so a call costs what
  its chunk touches, not the size of the state;
- the same two for calls that come by the thousand (one example each):
  :class:`FlatState` walks the state once, keeps it as flat lists and preallocated
  shadow buffers, and then copies, restores and checks it in one compiled call each;
- a loaded state is checked against the state a fresh learner with the same
  parameters allocates (:func:`aucstream.persistence.check_like`): the same members,
  dtypes and shapes.

Components and learners refine the last check with a ``_check_state()`` method for
what a shape cannot say (counters within range, indices inside their arrays).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from operator import is_
from typing import Any

import numba as nb
import numpy as np

from ._kernels import compiled_entry, jit, pointer
from ._runtime._undo import (
    _LOGS,
    LoggedCall,
    UndoLog,
    _copy_rows,
    _finite,
    _rows_finite32,
    _rows_finite64,
    active_log,
    declare_upper_cells,
    journal_of,
    mark_finite,
    marked_finite,
    unique_rows,
    unique_rows_by_class,
    upper_cells,
)
from ._runtime._undo import _SPARES as _SPARES  # (re-exported: tests lend buffers)

__all__ = [
    "STATE_EXTRA",
    "state_items",
    "snapshot",
    "writeable_state",
    "check_writeable_state",
    "restore",
    "transaction",
    "UndoLog",
    "active_log",
    "journal_of",
    "unique_rows",
    "unique_rows_by_class",
    "declare_upper_cells",
    "mark_finite",
    "marked_finite",
    "walked_transaction",
    "kept_walk",
    "first_non_finite",
    "nbytes_of",
    "FlatState",
]

#: Private attributes that are state although their names do not end in ``_``.
STATE_EXTRA = ("_rng",)


def is_state_name(name: str) -> bool:
    """State attributes end in ``_`` (but are not dunder names) or are listed above."""
    return (name.endswith("_") and not name.startswith("__")) or name in STATE_EXTRA


def state_items(obj) -> dict[str, Any]:
    """The state attributes of a learner (not its hyperparameters)."""
    return {k: v for k, v in vars(obj).items() if is_state_name(k)}


#: Whether each class met is an aucstream class or derives from one (:func:`is_component`).
_COMPONENT_TYPES: dict[type, bool] = {}


def is_component(value) -> bool:
    """Whether ``value`` is a part of a state to walk into: an object of an aucstream
    class or of a class derived from one (a user's learner held by a search or a
    pipeline: its state is copied and restored as a built-in learner's)."""
    cls = type(value)
    known = _COMPONENT_TYPES.get(cls)
    if known is None:
        known = any(c.__module__.startswith("aucstream") for c in cls.__mro__[:-1])
        _COMPONENT_TYPES[cls] = known
    return known and hasattr(value, "__dict__")


class _Saved:
    """A generator or component to rewind in place, with its saved contents."""

    __slots__ = ("obj", "contents")

    def __init__(self, obj, contents):
        self.obj, self.contents = obj, contents


def _copy(value, keep: frozenset = frozenset()):
    """A copy of a state value; arrays and components whose id is in ``keep`` are kept
    by reference."""
    if keep and id(value) in keep:
        return value
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, list):
        return [_copy(v, keep) for v in value]
    if isinstance(value, tuple):
        return tuple(_copy(v, keep) for v in value)
    if isinstance(value, np.random.Generator):
        return _Saved(value, value.bit_generator.state)
    if is_component(value):
        return _Saved(value, {k: _copy(v, keep) for k, v in vars(value).items()})
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


def writeable_state(obj) -> None:
    """Give ``obj`` (a learner) writeable copies of its read-only state arrays, in place,
    each array once: an unpickled learner's read-only arrays (joblib's memory maps)
    crashed the compiled writes, and compiled a read-only version of each kernel."""
    made: dict[int, np.ndarray] = {}

    def own(value):
        if isinstance(value, np.ndarray):
            if value.flags.writeable:
                return value
            copy = made.get(id(value))
            if copy is None:
                copy = made[id(value)] = np.array(value)  # (a base ndarray, writeable)
            return copy
        if isinstance(value, list):
            value[:] = [own(v) for v in value]
        elif isinstance(value, tuple):
            items = [own(v) for v in value]
            if any(a is not b for a, b in zip(items, value)):  # (else kept as it is)
                return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
        elif is_component(value):
            vars(value).update({k: own(v) for k, v in vars(value).items()})
        return value

    for name, value in state_items(obj).items():
        setattr(obj, name, own(value))


def snapshot(obj, keep: frozenset = frozenset()) -> dict:
    """Everything needed to put ``obj`` back as it is now (arrays are copied, but those
    whose id is in ``keep``: they are kept by reference, for an :class:`UndoLog`; so are
    components whose id is in it, for a holder that undoes their calls itself)."""
    return {k: _copy(v, keep) for k, v in vars(obj).items()}


def restore(obj, saved: dict) -> None:
    """Put ``obj`` back to a :func:`snapshot` (the same component and generator objects)."""
    values = {k: _restored(v) for k, v in saved.items()}
    vars(obj).clear()
    vars(obj).update(values)


def check_writeable_state(obj, every: bool = False) -> None:
    """Refuse by name, before anything changes, read-only state arrays (compiled writes
    into a read-only map crash); those of held learners only when ``every``."""
    if not every and all(_writeable(v) for k, v in vars(obj).items() if is_state_name(k)):
        return
    arrays = (found for k, v in state_items(obj).items() for found in _arrays(v, k))
    names = [path for path, a in arrays if not a.flags.writeable]
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    raise ValueError(
        f"{type(obj).__name__}'s state holds read-only arrays ({shown}): learning writes "
        "its state in place. Give it writeable copies (np.array(a)); a model loaded with "
        "load_model or joblib.load(..., mmap_mode='r') has them already."
    )


def _writeable(value) -> bool:
    """Whether the arrays of ``value`` are writeable (a learner held: its calls check)."""
    if isinstance(value, np.ndarray):
        return value.flags.writeable
    if isinstance(value, (list, tuple)):
        return all(_writeable(v) for v in value)
    if not is_component(value) or hasattr(value, "partial_fit"):
        return True
    return all(_writeable(v) for v in vars(value).values())


@contextmanager
def transaction(obj, logged: tuple = (), journal: list | None = None) -> Iterator[None]:
    """Run a block so that, if it raises, ``obj`` is exactly as before (state, generator).

    ``logged`` names state arrays that the block writes only after saving what it
    will write into the :class:`UndoLog` it finds with :func:`active_log` (the
    learners' kernel calls, :meth:`aucstream._base.BaseStreamingAUC._learn_chunk`):
    they are not copied here, and a block that raises puts back what the log saved.
    ``journal`` (a list, or None): a block that succeeds appends what undoes it,
    ``(LoggedCall, saved)`` (:class:`aucstream._runtime._undo.Journalled`).
    """
    check_writeable_state(obj)
    log = UndoLog(logged) if logged else None
    saved = snapshot(obj, log.ids if log is not None else frozenset())
    if log is not None:
        _LOGS.setdefault(obj, []).append(log)
    kept = False
    try:
        yield
    except BaseException:
        if log is not None:
            log.undo()
        restore(obj, saved)
        raise
    else:
        if journal is not None:
            journal.append((LoggedCall(obj, log, restore), saved))
            kept = True
    finally:
        if log is not None:
            if not kept:
                log.release()
            stack = _LOGS[obj]
            stack.pop()
            if not stack:
                del _LOGS[obj]


#: The walks of :func:`walked_transaction`, by object (kept while the object lives).
_WALKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@contextmanager
def walked_transaction(obj, read_only: tuple = (), journal: list | None = None) -> Iterator[None]:
    """:func:`transaction` through a walk of the state kept between calls.

    For an object that runs many small transactions (the candidates of
    ``OnePassSearch``, one per candidate per call): the state is walked once
    (:class:`FlatState`) and walked again only when it no longer consists of the same
    objects, so a transaction costs one compiled copy instead of a Python walk.
    ``read_only`` declares state the block can not write (:meth:`FlatState.plan`):
    it is neither copied nor restored. ``journal`` (a list, or None) receives
    ``(walk, saved)``: ``walk.restore(saved)`` undoes the block after it succeeded,
    until the next transaction of ``obj`` (the transaction of a caller that holds
    ``obj``, :func:`aucstream.search.search_transaction`).
    """
    flat = _WALKS.get(obj)
    if flat is None or not flat.current(obj):
        flat = _WALKS[obj] = FlatState(obj)
    saved = flat.save(flat.plan(read_only))
    if journal is not None:
        journal.append((flat, saved))
    try:
        yield
    except BaseException:
        flat.restore(saved)
        raise
    if not flat.current(obj):  # the block replaced state objects: do not hold the old
        del _WALKS[obj]


def kept_walk(obj) -> FlatState | None:
    """The walk :func:`walked_transaction` keeps for ``obj`` (None if there is none;
    check :meth:`FlatState.is_current` before use)."""
    return _WALKS.get(obj)


def _arrays(value, path: str) -> Iterator[tuple[str, np.ndarray]]:
    if isinstance(value, np.ndarray):
        yield path, value
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _arrays(v, f"{path}[{i}]")
    elif is_component(value):
        for k, v in vars(value).items():
            yield from _arrays(v, f"{path}.{k}")


def nbytes_of(obj) -> int:
    """Bytes of the arrays reachable from a learner, summaries or a partial result."""
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if isinstance(obj, dict):
        return sum(nbytes_of(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(nbytes_of(v) for v in obj)
    if hasattr(obj, "__dict__") and not isinstance(obj, np.random.Generator):
        return sum(nbytes_of(v) for v in vars(obj).values())
    return 0


def first_non_finite(obj, rows: dict | None = None) -> str | None:
    """The path of the first floating-point state array holding NaN or infinity.

    ``rows`` maps the ids of arrays known to have been finite before a kernel call
    that wrote them only in some rows (:class:`UndoLog`) to those rows: only they are
    checked there.
    """
    rows = rows or {}
    for name, value in state_items(obj).items():
        if isinstance(value, float) and not np.isfinite(value):
            return name
        for path, array in _arrays(value, name):
            if array.dtype.kind in "fc" and not _finite(array, rows.get(id(array))):
                return path
    return None


#: Walks with more objects than this check them in a loop (:meth:`FlatState.is_current`)
#: rather than in one generated expression.
_MAX_TERMS = 2000
#: The compiled sources of the walks' checks (:meth:`FlatState._compile_check`), by
#: source (names and sizes only): the learners of one class usually share one.
_CHECK_CODE: dict[str, Any] = {}

#: A state of at most this many bytes keeps its shadow copy between calls (no
#: allocation per call); a larger one is copied into fresh buffers for each call, so
#: that the copy is not held in memory between calls.
SHADOW_LIMIT = 16 << 20


@jit
def _copy_table(table):
    """Copy ``table[i, 2]`` bytes from address ``table[i, 0]`` to ``table[i, 1]``, each i.

    The addresses are those of arrays that the caller keeps alive (a
    :class:`FlatState` holds them and checks, before each use, that they still are
    the learner's state), so one call with one small argument copies every array.
    """
    for i in range(table.shape[0]):
        size = table[i, 2]
        source = nb.carray(pointer(table[i, 0], nb.uint8), size)
        target = nb.carray(pointer(table[i, 1], nb.uint8), size)
        for j in range(size):
            target[j] = source[j]


@jit(fastmath={"reassoc"})
def _all_finite(table):
    """Whether the ``table[i, 1]`` float64 values at address ``table[i, 0]`` are all finite.

    ``x * 0.0`` is 0 for a finite x and NaN for NaN or an infinity, so the sum of
    those products is 0 exactly when all values are finite. Reassociation (and no
    other fast-math flag: NaN and infinities keep their meaning) lets the compiler
    vectorize the sum.
    """
    for i in range(table.shape[0]):
        values = nb.carray(pointer(table[i, 0], nb.float64), table[i, 1])
        acc = 0.0
        for j in range(values.shape[0]):
            acc += values[j] * 0.0
        if acc != 0.0:
            return False
    return True


@jit(fastmath={"reassoc"})
def _all_finite32(table):
    """:func:`_all_finite` for float32 values (OPAUC's ``dtype="float32"`` summaries)."""
    for i in range(table.shape[0]):
        values = nb.carray(pointer(table[i, 0], nb.float32), table[i, 1])
        acc = np.float32(0.0)
        for j in range(values.shape[0]):
            acc += values[j] * np.float32(0.0)
        if acc != 0.0:
            return False
    return True


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def _flat_view(array: np.ndarray) -> np.ndarray | None:
    """A 1-D view of a contiguous array (None when it is not contiguous)."""
    if array.flags.c_contiguous:
        return array.reshape(-1)
    if array.flags.f_contiguous:
        return array.T.reshape(-1)
    return None


def _by_rows(entry: tuple) -> bool:
    """Whether a walked array (a :class:`FlatState` entry) can be copied and checked by
    rows: C-contiguous, at least 1-D, of float64, float32, integers or booleans."""
    a, _, data, shadow = entry
    return (
        data is not None
        and shadow is not None
        and a.ndim > 0
        and a.flags.c_contiguous
        and (a.dtype in (np.float64, np.float32) or a.dtype.kind in "biu")
    )


#: The compiled entry points of the table kernels (:func:`table_call`), by kernel.
_TABLE_ENTRIES: dict = {}


def table_call(kernel, table: np.ndarray):
    """``kernel(table)`` as a function of no arguments, for a kernel of one table
    (:func:`_copy_table`, :func:`_all_finite`): the compiled entry point called
    directly, as :func:`aucstream._kernels.bound_call` does, without numba's dispatch.
    Every table is a new int64 2-D C-contiguous writeable array, so the entry point is
    resolved once per kernel (numba's typing of each new table would cost more than the
    plans made per chunk call can spend); a table of another type goes through the
    dispatcher."""
    entry = _TABLE_ENTRIES.get(kernel)
    if entry is None:
        entry = _TABLE_ENTRIES[kernel] = compiled_entry(kernel, (np.zeros((0, 2), np.int64),))
    flags = table.flags
    if not (
        table.dtype == np.int64
        and table.ndim == 2
        and flags.c_contiguous
        and flags.writeable
        and flags.aligned
    ):
        entry = kernel
    return partial(entry, table)


class _Plan:
    """What :class:`FlatState` copies, restores and checks for one declaration.

    A declaration names the state a call can not write (see :meth:`FlatState.plan`);
    the plan leaves out that state's arrays and generators and keeps, for the rest,
    the copy tables (save and restore), the finiteness table and the lists of the
    arrays handled by numpy. The arrays a call writes only in the rows its examples
    name have tables of their own (``rows_*``), for copies and checks of those rows.
    """

    __slots__ = (
        "views",
        "shadows",
        "copy",
        "back",
        "others",
        "floats",
        "floats32",
        "other_floats",
        "generators",
        "rows_copy",
        "rows_back",
        "rows_floats",
        "rows_floats32",
        "float64_only",
        "copy_call",
        "finite_call",
    )
    views: list[np.ndarray]
    shadows: list[np.ndarray]
    copy: np.ndarray | None
    back: np.ndarray | None
    others: list[np.ndarray]
    floats: np.ndarray
    floats32: np.ndarray
    other_floats: list[np.ndarray]
    generators: list
    rows_copy: np.ndarray
    rows_back: np.ndarray
    rows_floats: np.ndarray
    rows_floats32: np.ndarray
    float64_only: bool
    copy_call: Any
    finite_call: Any


class FlatState:
    """A learner's state walked once, for transactions and checks in O(1) Python calls.

    :func:`snapshot`, :func:`restore` and :func:`first_non_finite` walk the state on
    every call. For calls that learn one example each, that walk and the allocation
    of every copy cost more than the example itself, so this class walks the state
    once and keeps what it found: the dicts (of the learner and of its components)
    and lists that hold the state, every array, and the random generators. Then

    - :meth:`save` copies every array into shadow buffers in one compiled call
      (buffers kept between calls, or fresh ones for a state above
      :data:`SHADOW_LIMIT`) and takes shallow copies of the dicts and lists and the
      generators' states;
    - :meth:`restore` puts all of it back: the array contents in place (one compiled
      copy back), the dicts and lists (so an attribute that was replaced or added is
      undone), the generators. The learner is then bit for bit as at :meth:`save`,
      as after :func:`restore` of a :func:`snapshot`;
    - :meth:`all_finite` checks every float64 array in one compiled pass (others
      with numpy), and the scalars :func:`first_non_finite` checks.

    **Write sets.** A call that can not write part of the state (OPAUC learning
    examples of one class reads the other class's covariance summary and leaves it
    alone) passes :meth:`save`, :meth:`restore` and :meth:`all_finite` a plan
    (:meth:`plan`) that leaves that part out: its arrays are neither copied nor
    restored (they hold what they held) nor checked (they were finite at the last
    complete check). The first check after the walk is always complete, so a state
    that was not finite when walked (an edited or loaded learner) is found as
    before. Plans are kept per declaration, so a call with a declaration costs one
    compiled copy of what it can write. The declaration is the learner's word
    (``BaseStreamingAUC._read_only_state``), checked by tests that compare the
    declared arrays byte for byte before and after many such calls.

    The walk stays valid while the state keeps its objects: :meth:`is_current`
    compares, by identity, every array, list, component and generator reachable
    from the state with those found by the walk (and the number of attributes), in
    C-level loops; and the attributes named ``pinned`` (a learner's parameters, for
    the fast path: a new value is a new object). A learner that replaces an array (a
    buffer that grows), a call that allocates a new state, or a user who assigns an
    attribute makes it stale;
    the caller must then walk again (the compiled calls read the arrays through
    addresses taken by the walk, which holds the arrays, so they are used only
    while :meth:`is_current`). Values changed in place between calls by code other
    than the learner's calls are not the learner's writes: a plan may skip them.

    **Opaque members.** Objects whose ids are in ``opaque`` (components such as the
    candidates of a search) are checked by identity where they are held, but not
    entered: their contents are neither saved nor restored nor checked. A caller
    that walks so must undo their changes by other means (their own transactions).
    """

    __slots__ = (
        "_opaque",
        "_vars",
        "_dicts",
        "_lists",
        "_records",
        "_arrays",
        "_entries",
        "_full",
        "_plans",
        "_verified",
        "_walked",
        "_scalar_names",
        "_generators",
        "_kept",
        "current",
    )

    def __init__(self, obj, pinned: tuple[str, ...] = (), opaque: frozenset = frozenset()):
        self._opaque = opaque
        self._vars = vars(obj)
        self._dicts: list[dict] = [self._vars]
        self._lists: list[list] = []
        self._records: list[tuple] = []
        self._generators: list[np.random.Generator] = []
        arrays: dict[int, np.ndarray] = {}
        self._walked: set[int] = set()  # ids of every object the walk holds
        names = [k for k in self._vars if is_state_name(k)]
        self._record(self._vars, names, pinned)
        self._scalar_names = tuple(k for k in names if not self._is_held(self._vars[k]))
        for k in names:
            self._visit(self._vars[k], arrays)
        self._arrays = list(arrays.values())
        if not all(a.flags.writeable for a in self._arrays):
            check_writeable_state(obj, every=True)  # (raises: the calls write through them)
        # (array, flat byte view or None, shadow or None) per array
        entries = []
        for a in self._arrays:
            view = None if a.dtype.hasobject else _flat_view(a)
            entries.append((a, view, None if view is None else view.view(np.uint8)))
        self._kept = sum(e[2].shape[0] for e in entries if e[2] is not None) <= SHADOW_LIMIT
        self._entries: list[tuple[Any, Any, Any, Any]] = [
            (a, view, data, np.empty_like(data) if self._kept and data is not None else None)
            for a, view, data in entries
        ]
        self.current = self._compile_check()
        self._plans: dict[tuple, _Plan] = {}
        self._full = self._make_plan(frozenset())
        self._verified = False

    @staticmethod
    def _is_held(value) -> bool:
        """Values kept by identity (scalars are kept by the dict copies)."""
        return isinstance(value, (np.ndarray, list, tuple, np.random.Generator)) or is_component(
            value
        )

    def _record(self, container: dict, names: list[str], pinned: tuple[str, ...] = ()) -> None:
        held = tuple(k for k in names if self._is_held(container[k])) + pinned
        self._records.append((container, len(container), held, tuple(container[k] for k in held)))

    def _visit(self, value, arrays: dict) -> None:
        if self._is_held(value):
            self._walked.add(id(value))
            if id(value) in self._opaque:  # kept by identity only, not entered
                return
        if isinstance(value, np.ndarray):
            arrays.setdefault(id(value), value)
        elif isinstance(value, list):
            self._lists.append(value)
            self._records.append((value, len(value), range(len(value)), tuple(value)))
            for v in value:
                self._visit(v, arrays)
        elif isinstance(value, tuple):
            for v in value:
                self._visit(v, arrays)
        elif isinstance(value, np.random.Generator):
            self._generators.append(value)
        elif is_component(value):
            members = vars(value)
            self._dicts.append(members)
            self._record(members, list(members))
            for v in members.values():
                self._visit(v, arrays)

    @staticmethod
    def _table(views: list[np.ndarray], shadows: list[np.ndarray]) -> np.ndarray:
        """Rows (state address, shadow address, bytes) for :func:`_copy_table`."""
        rows = [(_address(v), _address(s), v.shape[0]) for v, s in zip(views, shadows)]
        return np.array(rows, dtype=np.int64).reshape(-1, 3)

    def _make_plan(self, skip: frozenset, by_rows: frozenset = frozenset()) -> _Plan:
        """The plan that leaves out the arrays and generators whose ids are in ``skip``,
        and handles by rows the arrays whose ids are in ``by_rows`` (when shadow copies
        are kept and the array is C-contiguous; others are handled whole)."""
        plan = _Plan()
        kept = [e for e in self._entries if id(e[0]) not in skip]
        rowed = []
        if self._kept and by_rows:
            rowed = [e for e in kept if id(e[0]) in by_rows and _by_rows(e)]
            kept = [e for e in kept if not (id(e[0]) in by_rows and _by_rows(e))]
        copies: list[tuple[int, int, int, int, int]] = []
        floats64: list[tuple[int, int, int, int]] = []
        floats32_rows: list[tuple[int, int, int, int]] = []
        for a, _, data, shadow in rowed:
            n = a.shape[0]
            width = a.size // n if n else 0
            # a square array written only in the upper cells of the rows and columns
            # named (declare_upper_cells): those cells alone
            cell = a.itemsize if a.itemsize in (4, 8) and upper_cells(a) else 0
            copies.append((_address(data), _address(shadow), width * a.itemsize, n, cell))
            if a.dtype == np.float64:
                floats64.append((_address(data), width, n, int(cell != 0)))
            elif a.dtype == np.float32:
                floats32_rows.append((_address(data), width, n, int(cell != 0)))
        plan.rows_copy = np.array(copies, dtype=np.int64).reshape(-1, 5)
        plan.rows_back = np.ascontiguousarray(plan.rows_copy[:, [1, 0, 2, 3, 4]])
        plan.rows_floats = np.array(floats64, dtype=np.int64).reshape(-1, 4)
        plan.rows_floats32 = np.array(floats32_rows, dtype=np.int64).reshape(-1, 4)
        plan.views = [data for _, _, data, _ in kept if data is not None]
        plan.shadows = [shadow for _, _, data, shadow in kept if data is not None]
        plan.others = [a for a, _, data, _ in kept if data is None]
        floats: list[tuple[int, int]] = []
        floats32: list[tuple[int, int]] = []
        plan.other_floats = []
        for a, view, _, _ in kept:
            if a.dtype.kind in "fc":
                if view is not None and a.dtype == np.float64:
                    floats.append((_address(view), view.shape[0]))
                elif view is not None and a.dtype == np.float32:
                    floats32.append((_address(view), view.shape[0]))
                else:
                    plan.other_floats.append(a)
        plan.floats = np.array(floats, dtype=np.int64).reshape(-1, 2)
        plan.floats32 = np.array(floats32, dtype=np.int64).reshape(-1, 2)
        plan.copy = plan.back = None
        if self._kept:
            plan.copy = self._table(plan.views, plan.shadows)
            plan.back = np.ascontiguousarray(plan.copy[:, [1, 0, 2]])
        plan.generators = [g for g in self._generators if id(g) not in skip]
        # the compiled calls of every save and check, without numba's dispatch
        plan.copy_call = None if plan.copy is None else table_call(_copy_table, plan.copy)
        plan.finite_call = table_call(_all_finite, plan.floats)
        # whether all_finite needs only the compiled check of the float64 table
        plan.float64_only = not (
            plan.floats32.shape[0]
            or plan.rows_floats.shape[0]
            or plan.rows_floats32.shape[0]
            or plan.other_floats
        )
        return plan

    def plan(self, read_only: tuple, by_rows: tuple = ()) -> _Plan:
        """The plan of a call that can not write the state objects ``read_only``, and
        writes the arrays ``by_rows`` only in the rows (along axis 0) its examples name.

        ``read_only`` holds members of the state: arrays, components (every array and
        generator they hold), lists or tuples of them, generators. What the walk did
        not find is ignored (leaving it out would save nothing). ``by_rows`` holds
        arrays of the state (those of an :class:`UndoLog`: a learner's
        ``_row_written_state``): :meth:`save`, :meth:`restore` and :meth:`all_finite`
        then copy and check only the rows they are given of those arrays, into and
        from the same places of the arrays' shadow copies (kept when the state is at
        most :data:`SHADOW_LIMIT` bytes; otherwise they are handled whole). An empty
        declaration gives the complete plan. Plans are kept per declaration (by the
        identity of the declared objects, which the walk holds).
        """
        if not read_only and not by_rows:
            return self._full
        key: Any = id(read_only[0]) if len(read_only) == 1 else tuple(map(id, read_only))
        if by_rows:
            key = (key, tuple(map(id, by_rows)))
        found = self._plans.get(key)
        if found is None:
            skip: set[int] = set()
            for value in read_only:
                self._declared(value, skip)
            found = self._make_plan(frozenset(skip), frozenset(map(id, by_rows)))
            # kept only when every declared object is one the walk holds: the ids of
            # objects made for the call could be those of other objects later
            if all(id(value) in self._walked for value in (*read_only, *by_rows)):
                if len(self._plans) >= 16:
                    self._plans.clear()
                self._plans[key] = found
        return found

    def _declared(self, value, skip: set) -> None:
        """Add the ids of the arrays and generators of a declared object to ``skip``."""
        if isinstance(value, (np.ndarray, np.random.Generator)):
            skip.add(id(value))
        elif isinstance(value, (list, tuple)):
            for v in value:
                self._declared(v, skip)
        elif is_component(value):
            for v in vars(value).values():
                self._declared(v, skip)

    def _compile_check(self):
        """The function behind :meth:`is_current`, written out for this walk.

        One expression of identity and length comparisons (``vars(obj) is V and
        len(c0) == 16 and c0[k0_0] is v0_0 and ...``) with the walked containers,
        keys and values bound as globals (the source holds only names and the
        integer sizes): faster than a loop over the records (:meth:`_check_records`,
        kept for very large walks), for a check made twice per call.
        """
        if sum(len(keys) + 1 for _, _, keys, _ in self._records) > _MAX_TERMS:
            return self._check_records
        terms, env = ["vars(obj) is V"], {"V": self._vars}
        for i, (container, size, keys, values) in enumerate(self._records):
            env[f"c{i}"] = container
            terms.append(f"len(c{i}) == {int(size)}")
            for j, (key, value) in enumerate(zip(keys, values)):
                env[f"k{i}_{j}"], env[f"v{i}_{j}"] = key, value
                terms.append(f"c{i}[k{i}_{j}] is v{i}_{j}")
        source = (
            "def current(obj):\n"
            "    try:\n"
            f"        return {' and '.join(terms)}\n"
            "    except (KeyError, IndexError):  # a member was deleted and another added\n"
            "        return False\n"
        )
        code = _CHECK_CODE.get(source)
        if code is None:  # compiled once per shape of state (a compilation is costly)
            if len(_CHECK_CODE) >= 256:
                _CHECK_CODE.clear()
            code = _CHECK_CODE[source] = compile(source, "<aucstream walk check>", "exec")
        exec(code, env)  # noqa: S102 - a source of names and integers only
        return env["current"]

    def _check_records(self, obj) -> bool:
        """:meth:`is_current` as a loop over the records (for very large walks)."""
        if vars(obj) is not self._vars:
            return False
        for container, size, keys, values in self._records:
            if len(container) != size:
                return False
            if isinstance(container, dict):
                if not all(map(is_, map(container.get, keys), values)):
                    return False
            elif not all(map(is_, container, values)):
                return False
        return True

    def is_current(self, obj) -> bool:
        """Whether the state of ``obj`` still consists of the objects found by the walk
        (also :attr:`current`, the same function without the method call)."""
        return self.current(obj)

    def save(self, plan: _Plan | None = None, rows: np.ndarray | None = None) -> tuple:
        """Copy the state aside, but what ``plan`` leaves out (default: nothing; valid
        while :meth:`is_current`); returns what :meth:`restore` needs.

        ``rows`` (int64) are the rows to copy of the arrays the plan handles by rows
        (required for such a plan; repeated rows are copied once more, to the same
        place). Raises ``ValueError``, having saved nothing, for a row outside them.
        """
        if plan is None:
            plan = self._full
        if plan.rows_copy.shape[0]:
            if rows is None:
                raise ValueError("this plan copies arrays by rows: pass the rows")
            if not _copy_rows(plan.rows_copy, rows):
                raise ValueError("rows outside the state's arrays")
        if plan.copy_call is not None:
            plan.copy_call()
            shadows = None
        else:
            shadows = [np.empty_like(v) for v in plan.views]
            _copy_table(self._table(plan.views, shadows))
        return (
            plan,
            rows,
            shadows,
            [a.copy() for a in plan.others] if plan.others else (),
            [d.copy() for d in self._dicts],  # (d.copy(): dict(d) of an instance dict is slower)
            [c.copy() for c in self._lists] if self._lists else (),
            [g.bit_generator.state for g in plan.generators] if plan.generators else (),
        )

    def restore(self, saved: tuple) -> None:
        """Put the state back exactly as it was at :meth:`save` (what the plan left out
        holds what it held then)."""
        plan, rows, shadows, others, dicts, lists, generators = saved
        if plan.rows_back.shape[0]:
            _copy_rows(plan.rows_back, rows)  # rows checked by save
        if shadows is None:
            _copy_table(plan.back)
        else:
            for view, shadow in zip(plan.views, shadows):
                view[:] = shadow
        for array, copy in zip(plan.others, others):
            array[...] = copy
        for container, copy in zip(self._lists, lists):
            container[:] = copy
        for members, copy in zip(self._dicts, dicts):
            members.clear()
            members.update(copy)
        for generator, state in zip(plan.generators, generators):
            generator.bit_generator.state = state

    def all_finite(self, plan: _Plan | None = None, rows: np.ndarray | None = None) -> bool:
        """Whether every floating-point array and top-level float of the state is finite.

        The same arrays and scalars as :func:`first_non_finite` (valid while
        :meth:`is_current`), but those ``plan`` leaves out, and but the rows other than
        ``rows`` of the arrays it handles by rows (given to :meth:`save`), once a
        complete check has passed since the walk (the first check is complete whatever
        the plan).
        """
        if plan is None or not self._verified:
            plan = self._full
        if not plan.finite_call():
            return False
        if not plan.float64_only:
            if plan.floats32.shape[0] and not _all_finite32(plan.floats32):
                return False
            if plan.rows_floats.shape[0] and not _rows_finite64(plan.rows_floats, rows):
                return False
            if plan.rows_floats32.shape[0] and not _rows_finite32(plan.rows_floats32, rows):
                return False
            for a in plan.other_floats:
                if not np.isfinite(a).all():
                    return False
        get = self._vars.get
        for name in self._scalar_names:
            value = get(name)  # math.isfinite: numpy's scalar call costs far more
            if isinstance(value, float) and not math.isfinite(value):
                return False
        self._verified = True
        return True
