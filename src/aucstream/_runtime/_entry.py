"""The compiled per-example entry: ``learn_one`` (and one-row ``partial_fit`` of a 2-D
array) of a learner seen before, in a few attribute reads and two compiled calls around
the learner's bound update.

The fast path of small calls (:mod:`aucstream._runtime._small_calls`) makes every
decision of a one-row call again at each call: which prepared buffers, which plan of
the transaction (:meth:`aucstream._state.FlatState.plan`), whether the label is a
class, then a compiled load of the row, a compiled save of the state, the update, a
compiled check. Once a call of one layout has taken that path, :class:`OneStep`
keeps its outcome: the buffers, the bound update (``_bind_update``) and, per plan key
(the class of the example, whether rows are saved whole, the learner's
``_plan_variant``), the compiled calls bound to that plan's tables. A later call is

1. the checks that keep the call valid: the fast path on, the cache's walk of the
   state still the one the step was made from and still current (the state holds the
   objects it held, the parameters are the same objects), the label one of the two
   classes;
2. one compiled call that checks, loads and saves: for a dict row :func:`_begin_dict`,
   which first makes the walk's check itself (:func:`_walk_current`, from a table of
   the walk's containers, keys and objects by address, :func:`_walk_table`; at once
   when the interpreter versions its dicts and none of the walk's dicts has changed
   since the end of the last call that passed it, its lists compared item by item,
   :func:`~aucstream._runtime._walk._unchanged`; made in
   Python, or by a compiled call of its own when the learner's ``_plan_variant`` or
   ``_check_partial_fit`` runs first, :attr:`OneStep.early`; a variant known for the
   whole layout, :func:`_fixed_variant`, is not asked per call) and reads the dict
   where it lies (:func:`aucstream._fastpath.read_dict`: keys and values of the
   plain types, through CPython's C API, no tuple and no :mod:`struct` packing);
   for a 1-D array :func:`_begin_dense_block`. The label is stored, the row checked
   (indices inside ``[0, n_features)`` and distinct, values finite and below the
   magnitude limit: :func:`aucstream._chunks.load_row_in_place`,
   :func:`aucstream._chunks.load_dense_row`) and loaded into the buffers, and the
   state it may write saved into the walk's shadow copies (what the plan copies
   whole, and the rows the example names of what it writes by rows): the undo log of
   the call. A refused row returns before anything is saved, and the call goes the
   usual way, which says what is wrong;
3. the learner's bound update (its kernel at its compiled entry point); for a dict
   row of a learner whose bound update offers it (``update.fused``: OPAUC's full
   covariance), in the same compiled call as step 2 (:attr:`OneStep.fused`; a
   compiled call costs about as much as the Python around it);
4. :func:`_finish_block`, one compiled call: the state's Python floats checked finite
   (:func:`_scalars_ok`, read from the learner's ``__dict__``), the calibration learns
   the prequential score (unless the kernel fitted it), the arrays the plan copies
   and the saved rows are checked finite (the divergence check), and only then the
   score is pushed into the operating-point windows
   (:func:`aucstream._calibration.record`); then the versions of the walk's dicts are
   kept (:func:`_keep_versions`).

The compiled calls take their arrays as one block of addresses, passed as an int
(:func:`aucstream._fastpath.block`): numba unboxes each array argument at every call,
which cost more than the work of a one-row load or check. The step keeps the blocks
and every array they name alive.

The operating-point windows (``score_window_``, two rings of 2,048 scores) are left out
of the saved and checked tables (:func:`_window_apart`): a call writes one slot of
each, after every check has passed, so there is nothing of them to undo (a bound
update never writes them: the base class's push is their only writer in a learning
call). Copying and checking them whole was the largest part of the saved state of
SOLAM and UnivariateOnline. A call whose state is no longer finite is put back and
handed to the usual path, which learns the row again and raises the error that
names the array.

A call that raises (a kernel error, an interruption) puts the state back from the shadow
copies and the copies of the state's dicts (:meth:`aucstream._state.FlatState.restore`),
as the fast path does, so a refused call changes nothing. The learner's ``__dict__`` is
copied at each call; its components' dicts only when they changed since their last
copies (their versions, compared in the compiled entry: :func:`_components_unchanged`),
and its lists not at all (the walk, current, holds their items). The model is the one the
usual fast path and the full validation give, bit for bit (``set_config(fast_path=False)``
switches all of them off; tests/test_per_example.py). What the step can not handle
(a plan with arrays numpy copies, float32 arrays, a random generator to save; dense
rows of a learner that saves rows) is left to the usual path.
"""

from __future__ import annotations

import copy
from functools import partial

import numba as nb
import numpy as np

from .._calibration import record
from .._calibration import update as calibration_update
from .._chunks import load_dense_row, load_row_in_place, pack_dict_pairs
from .._config import _local
from .._fastpath import (
    _SCALAR_LABELS,
    BLOCK_START,
    BLOCK_WIDTH,
    NONE,
    READS_DICTS,
    address,
    block,
    floats_at,
    ints_at,
    read_dict,
    type_of,
)
from .._kernels import compiled_entry, float_of_bits, jit, pointer
from .._kernels._pyobjects import (
    dict_item,
    dict_set_int,
    dict_size,
    error_clear,
    float_value,
    is_subtype,
    long_value,
)
from .._state import _all_finite, _copy_rows, _copy_table, _rows_finite64
from ._learning import _KERNEL_ERRORS
from ._walk import (
    _NO_WALK,
    _components_unchanged,
    _keep_versions,
    _versions_for,
    _walk_check,
    _walk_current,
    _walk_table,
)

__all__ = ["OneStep"]

#: An empty copy table (a dense row's whole plan, when there is none).
_TABLE = np.zeros((0, 3), dtype=np.int64)
#: What :func:`_finish` takes for the calibration and the window of a learner without
#: a prequential kernel (never read: its mode is 0).
_NO_CALIBRATION, _NO_WINDOW = np.zeros(8), np.zeros((2, 2))
_FLOAT64 = np.dtype(np.float64)


@jit
def _begin_sparse(indptr, indices, data, n_cols, copy, rows_copy, y, keys, values, label, k):
    """Load the row of ``k`` entries packed by :func:`aucstream._chunks.pack_dict_pairs`
    (``keys[:k]``, ``values[k:2 k]``: views of its buffer) into the first ``k``
    entries of the buffers ``indices`` and ``data``, check it (sorted in place) and
    store its label (``y[0]``), then save what the plan copies: the tables ``copy``
    (whole arrays) and ``rows_copy`` (the row's indices of arrays written by rows).
    Returns ``k``, or -1 (nothing saved) when the row is refused."""
    y[0] = label
    if k < 0 or k > indices.shape[0] or k > data.shape[0] or 2 * k > keys.shape[0]:
        return -1
    for a in range(k):
        indices[a] = keys[a]
        data[a] = values[k + a]
    if load_row_in_place(indptr, indices, data, n_cols, k) < 0:
        return -1
    if rows_copy.shape[0] and not _copy_rows(rows_copy, indices[:k]):
        return -1
    _copy_table(copy)
    return k


@jit
def _begin_dense(out, nonzero, n_cols, copy, rows_copy, whole, has_whole, y, label, values):
    """Check and load the 1-D ``values`` into row 0 of ``out`` (its non-zero columns
    into ``nonzero``) and its label (``y[0]``), then save what the plan copies: the
    tables ``copy`` and ``rows_copy`` (the row's non-zero columns), or, when the row
    names more than half the columns, the table ``whole`` (the plan that copies
    everything whole; -2, nothing saved, when there is none: ``has_whole`` False).
    Returns the number of non-zeros, or -1 (nothing saved) when the row is refused."""
    y[0] = label
    named = load_dense_row(values, out, nonzero)
    if named < 0:
        return -1
    if rows_copy.shape[0] and 2 * named > n_cols:
        if not has_whole:
            return -2
        _copy_table(whole)
        return named
    if rows_copy.shape[0] and not _copy_rows(rows_copy, nonzero[:named]):
        return -1
    _copy_table(copy)
    return named


@jit
def _finish(floats, rows_floats, indices, mode, calibration, window, scores, y, weights, k):
    """After the update: with ``mode`` 2 the calibration learns the prequential score
    (:func:`aucstream._calibration.update`); then whether the arrays of the table
    ``floats``, the rows ``indices[:k]`` of those of ``rows_floats`` (the saved part
    of the state) and, with ``mode`` 1 or 2, the score are finite; if so (only then)
    the score goes into the operating-point ``window``
    (:func:`aucstream._calibration.record`). ``mode`` 0: the check alone."""
    if mode == 2:
        calibration_update(calibration, scores, y, weights)
    if not _all_finite(floats):
        return False
    if rows_floats.shape[0] and not _rows_finite64(rows_floats, indices[:k]):
        return False
    if mode:
        if not np.isfinite(scores[0]):
            return False
        record(window, scores, y, weights)
    return True


@jit(inline="always")
def _table_at(where, rows, columns):
    """The int64 table of ``rows`` x ``columns`` at address ``where`` (of a block),
    made 2-D at once (``reshape`` calls a helper of numba's at every call)."""
    return nb.carray(pointer(where, nb.int64), (rows, columns))


@jit
def _begin_dict(at, label, where, k):
    """:func:`_begin_sparse` of the dict of ``k`` items at address ``where`` (held by
    the caller), read by :func:`aucstream._fastpath.read_dict` straight into the
    buffers, with the arrays of the block ``args`` (:meth:`OneStep._step`): the
    buffers ``indptr``, ``indices``, ``data``, the width, the tables ``copy`` and
    ``rows_copy``, the label's ``y``, the walk's table (:func:`_walk_table`, checked
    first; empty when :attr:`OneStep.early` checks it), its versions, and the walk's
    table again with the components' versions at their copies
    (:func:`_components_unchanged`; empty: not asked). Returns ``k`` (plus :data:`_SAME` when the
    components' dicts are unchanged since their copies), -1 (nothing saved) when the
    row is refused, or -3 (nothing done) when the walk is not current."""
    args = ints_at(at, BLOCK_WIDTH)
    s = BLOCK_START
    if not _walk_current(ints_at(args[s + 13], args[s + 14]), ints_at(args[s + 15], args[s + 16])):
        return -3
    y = floats_at(args[s + 11], 1)
    y[0] = label
    indices, data = ints_at(args[s + 2], args[s + 3]), floats_at(args[s + 4], args[s + 5])
    if k < 0 or k > indices.shape[0] or k > data.shape[0]:
        return -1
    if read_dict(where, args, indices[:k], data[:k]) != k:
        return -1
    if load_row_in_place(ints_at(args[s], args[s + 1]), indices, data, args[s + 6], k) < 0:
        return -1
    rows_copy = _table_at(args[s + 9], args[s + 10], 5)
    if rows_copy.shape[0] and not _copy_rows(rows_copy, indices[:k]):
        return -1
    _copy_table(_table_at(args[s + 7], args[s + 8], 3))
    starts = ints_at(args[s + 19], args[s + 20])
    if _components_unchanged(ints_at(args[s + 17], args[s + 18]), starts):
        return k + _SAME
    return k


@jit
def _begin_dense_block(at, label, values):
    """:func:`_begin_dense` with the arrays of the block ``args``
    (:meth:`OneStep._step`): ``out`` (one row), ``nonzero``, the width, the tables
    ``copy``, ``rows_copy`` and ``whole``, ``has_whole``, the label's ``y``."""
    args = ints_at(at, BLOCK_WIDTH)
    s = BLOCK_START
    width = args[s + 4]
    return _begin_dense(
        nb.carray(pointer(args[s], nb.float64), (1, width)),
        ints_at(args[s + 2], args[s + 3]),
        width,
        _table_at(args[s + 5], args[s + 6], 3),
        _table_at(args[s + 7], args[s + 8], 5),
        _table_at(args[s + 9], args[s + 10], 3),
        args[s + 11] != 0,
        floats_at(args[s + 12], 1),
        label,
        values,
    )


@jit
def _finish_block(at, k):
    """:func:`_finish` with the arrays of the block ``args`` (:meth:`OneStep._step`):
    the tables ``floats`` and ``rows_floats``, the row's indices, the mode, the
    calibration, the window, the scores, ``y`` and the (empty) weights; first the
    state's Python floats (:func:`_scalars_ok`: the learner's ``__dict__`` and the
    addresses of their names)."""
    args = ints_at(at, BLOCK_WIDTH)
    s = BLOCK_START
    if not _scalars_ok(args, args[s + 18], ints_at(args[s + 19], args[s + 20])):
        return False
    done = _finish(
        _table_at(args[s], args[s + 1], 2),
        _table_at(args[s + 2], args[s + 3], 4),
        ints_at(args[s + 4], args[s + 5]),
        args[s + 6],
        floats_at(args[s + 7], args[s + 8]),
        nb.carray(pointer(args[s + 9], nb.float64), (2, args[s + 11])),
        floats_at(args[s + 12], args[s + 13]),
        floats_at(args[s + 14], args[s + 15]),
        floats_at(args[s + 16], args[s + 17]),
        k,
    )
    if done:  # (the state as the next call will find it, if nothing changes it)
        _keep_versions(ints_at(args[s + 21], args[s + 22]), ints_at(args[s + 23], args[s + 24]))
    return done


#: :func:`_begin_dict` by a name other modules call it by (a learner's fused
#: load-and-learn, :attr:`OneStep.fused`).
begin_dict = _begin_dict
#: What a fused load-and-learn returns when the learner's kernel learnt less than the
#: row (the state is put back and the usual path learns the row, raising its error),
#: when the state is no longer finite after it (put back, the count too; the usual
#: path learns the row again and says so), and when it could not set the count (not
#: a plain int: :meth:`OneStep.learn` counts and checks in Python).
RAN_OUT, DIVERGED, NOT_COUNTED = -4, -6, -5
#: Added to what :func:`_begin_dict` returns when the state's components' dicts are
#: unchanged since :meth:`OneStep.learn` copied them (their copies serve again).
SAME = 1 << 40
#: The values of a fused load-and-learn's block (:attr:`OneStep.fused`, one per plan
#: key): the addresses of :func:`_begin_dict`'s block, of the kernel's packing, of
#: :func:`_finish_block`'s block and of the count's name, then the label's bits.
_FUSED_VALUES = 5


@jit(inline="always")
def fused_arguments(block, where):
    """What a fused load-and-learn reads from its block at address ``block``:
    ``(at, kernel, finish, name, label, k)``, ``k`` the size of the dict at address
    ``where``. The call takes two integers: numba unboxes each argument of a call,
    and the seven of a call that passed them all cost a visible part of it."""
    a = ints_at(block, _FUSED_VALUES)
    return a[0], a[1], a[2], a[3], float_of_bits(a[4]), dict_size(where)


@jit(inline="always")
def count_then_finish(at, name, k):
    """The end of a fused load-and-learn (:attr:`OneStep.fused`): the learner's count
    (the key at address ``name`` of its ``__dict__``, whose address the block at
    ``at`` holds) set to one more, a new int, as ``learner.n_samples_seen_ += 1``
    does, then :func:`_finish_block` of the block at ``at`` and the row's ``k``
    entries: 1 when finished, 0 when the state is no longer finite (the count set:
    the caller puts it back), -1 (nothing done) when the count is not a plain int or
    could not be set."""
    args = ints_at(at, BLOCK_WIDTH)
    members = args[BLOCK_START + 18]
    count = dict_item(members, name)
    if count == 0 or type_of(count, args[0]) != args[1]:  # (an int, not a bool)
        return -1
    n = long_value(count)
    if (n == -1 and error_clear()) or n < 0 or n >= 9223372036854775807:
        return -1
    if not dict_set_int(members, name, n + 1):
        error_clear()
        return -1
    return 1 if _finish_block(at, k) else 0


_SAME = SAME  # (the flag of :func:`_begin_dict`'s answer, :data:`SAME`)


@jit(inline="always")
def _scalars_ok(layout, members, names):
    """Whether the values of the dict at address ``members`` under the names at the
    addresses ``names`` that are floats (``float`` or a subclass; ``layout``: a
    block's first values) are finite: the state's Python floats, checked as
    :meth:`aucstream._state.FlatState.all_finite` checks them."""
    offset, integer, real = layout[0], layout[1], layout[3]
    for i in range(names.shape[0]):
        value = dict_item(members, names[i])
        if value == 0:
            continue
        kind = type_of(value, offset)
        if kind != real and (kind == integer or not is_subtype(kind, real)):
            continue
        if not np.isfinite(float_value(value)):
            return False
    return True


def _fixed_variant(learner, variant, dense: bool) -> tuple | None:
    """``(v,)`` when the learner's ``_plan_variant`` answers ``v`` for every one-row
    chunk of the layout (``dense``: 1-D arrays, else dict rows) while the learner's
    parameters are the objects they are now: asked of the object whose bound method
    the variant is (an engine), through its ``one_row_variant(learner, dense)``
    (``(v,)``, or None when the answer depends on the row or the state); None when
    it has none. The step then asks no variant per call, so no learner code runs
    before the compiled entry, which checks the walk itself (:attr:`OneStep.early`
    is not needed)."""
    fixed = getattr(getattr(variant, "__self__", None), "one_row_variant", None)
    return None if fixed is None else fixed(learner, dense)


def _without(table: np.ndarray, column: int, address: int) -> np.ndarray:
    """The rows of a table of addresses whose ``column`` is not ``address``."""
    return np.ascontiguousarray(table[table[:, column] != address])


def _window_apart(plan, address: int):
    """``plan`` without the array at ``address`` (the operating-point window, saved and
    checked apart: module docstring), as a shallow copy; ``plan`` itself when it does
    not hold it."""
    if not (plan.copy[:, 0] == address).any():
        return plan
    apart = copy.copy(plan)
    apart.copy = _without(plan.copy, 0, address)
    apart.back = _without(plan.back, 1, address)
    apart.floats = _without(plan.floats, 0, address)
    apart.copy_call = apart.finite_call = None  # (the step calls its own kernels)
    return apart


def _simple(plan) -> bool:
    """Whether a plan is one :class:`OneStep` handles: float64 arrays with kept shadow
    copies, no array copied by numpy, no generator."""
    return (
        plan.copy is not None
        and not plan.others
        and not plan.generators
        and not plan.floats32.shape[0]
        and not plan.rows_floats32.shape[0]
        and not plan.other_floats
    )


class OneStep:
    """One learner's per-example entry for one layout (sparse: dict rows; dense: 1-D
    float64 rows), made from the fast path's cache once a call of that layout took the
    one-row path (module docstring). Kept in the cache (:class:`aucstream._fastpath.FastCache`),
    so it goes when the cache's walk of the state or its prepared buffers do."""

    __slots__ = (
        "cache",
        "flat",
        "one",
        "dense",
        "width",
        "by_rows",
        "variant",
        "mode",
        "calibration",
        "window",
        "steps",
        "vars",
        "dicts",
        "single",
        "lists",
        "scalars",
        "check_hook",
        "current",
        "layout",
        "pairs",
        "keys",
        "walk",
        "versions",
        "names",
        "early",
        "fixed",
        "settled",
        "blocks",
        "starts",
        "copies",
        "list_copies",
        "fused",
        "fused_update",
        "by_label",
    )

    def __init__(self, learner, cache, one, dense: bool, variant, check_hook):
        self.cache, self.flat, self.one, self.dense = cache, cache.flat, one, dense
        self.width = learner.n_features_in_
        self.by_rows = cache.by_rows
        #: the variant of every call of this layout when the variant's owner knows it
        #: in advance (:func:`_fixed_variant`; the parameters are pinned while the
        #: step serves), else None
        self.fixed = _fixed_variant(learner, variant, dense)
        #: the variant of the plan key when none is asked per call (the fixed one)
        self.settled = None
        if self.fixed is not None:
            variant = None  # (not asked: no learner code before the compiled entry)
            self.settled = self.fixed[0]
        #: the class's _plan_variant (a function: the cache must not hold the
        #: learner), or None when it does not override it or its answer is fixed
        self.variant = variant
        tags = learner._tags
        # after the update (_finish): 2, the calibration and the operating-point window
        # learn the row's prequential score; 1, the window alone (the kernel
        # calibrated); 0, neither (no prequential kernel)
        self.mode = 0
        self.calibration, self.window = _NO_CALIBRATION, _NO_WINDOW
        if tags.kernel_prequential:
            self.mode = 1 if tags.kernel_calibrates else 2
            # (objects of the walked state: the walk's check keeps them the learner's)
            self.calibration, self.window = learner.calibration_, learner.score_window_
        #: plan key -> (begin, checks) or None (not handled)
        self.steps: dict[tuple, tuple | None] = {}
        flat = cache.flat
        self.vars = flat._vars
        self.dicts = tuple(flat._dicts)
        self.lists = tuple(flat._lists)
        #: the state's one dict when it has one and no list (the undo copies it alone:
        #: a plain ``dict.copy``, not a list made by ``map``), else None
        self.single = self.dicts[0] if len(self.dicts) == 1 and not self.lists else None
        self.scalars = flat._scalar_names
        #: the class's _check_partial_fit, or None when it does not override it
        self.check_hook = check_hook
        self.current = flat.current  # the walk's check (a function of the learner)
        self.layout = ("one", dense)  # the key of the prepared buffers in the cache
        #: a dict row packed (:func:`aucstream._chunks.pack_dict_pairs`, up to the
        #: buffers' capacity): as float64 (``pairs``) and as int64 (``keys``)
        self.pairs = np.zeros(2 * (0 if dense else one.capacity))
        self.keys = self.pairs.view(np.int64)
        #: the walk's check as a table for the compiled entry (dict rows), or None
        #: (:func:`_walk_table`)
        self.walk = None if dense or not READS_DICTS else _walk_table(flat)
        #: the versions of the walk's containers at the end of the last call whose
        #: check passed (:func:`~._walk._unchanged`), when the interpreter versions its dicts
        #: and a container is a dict; else empty (the check compares them all)
        self.versions = _versions_for(self.walk)
        #: the blocks of the compiled calls' arguments (:func:`aucstream._fastpath.block`)
        self.blocks: list[np.ndarray] = []
        #: the compiled walk's check as a call of its own, made first when code of the
        #: learner runs before the compiled entry (``_plan_variant``, the hook: they may
        #: pass the state to a kernel), else None (the entry makes it)
        self.early = None
        if self.walk is not None and (variant is not None or check_hook is not None):
            check = compiled_entry(_walk_check, (self.walk, self.versions))
            self.early = partial(check, self.walk, self.versions)
        #: the addresses of the names of the state's Python scalars (:func:`_scalars_ok`)
        self.names = np.array([id(name) for name in self.scalars], dtype=np.int64)
        #: the versions of the components' dicts when :attr:`copies` were made
        #: (:func:`_components_unchanged`; empty when the compiled entry checks no
        #: versions), and those copies (None: none yet)
        components = len(self.dicts) > 1
        self.starts = np.full(self.versions.shape[0] if components else 0, -1, dtype=np.int64)
        self.copies: list | None = None
        #: the copies of the state's lists: the walk holds all their items, and a
        #: call's walk is current when they are copied (the walk's items, once)
        walked = {id(record[0]): record[3] for record in flat._records}
        self.list_copies = tuple(list(walked[id(c)]) for c in flat._lists)
        #: the bound update's fused load-and-learn of a dict row, when it offers one
        #: (``update.fused``: a compiled function of ``(block, where)`` that reads
        #: ``(at, kernel, finish, name, label, k)`` by :func:`fused_arguments` and
        #: runs :func:`_begin_dict` of the block at ``at`` and, the row taken, the
        #: kernel of the packing at ``kernel``, then :func:`count_then_finish` of the
        #: block at ``finish``, returning what
        #: ``_begin_dict`` does, :data:`RAN_OUT`, :data:`DIVERGED` or
        #: :data:`NOT_COUNTED`; the update must change no dict of the state, which
        #: are copied only when a call is put back), and the entry compiles the
        #: walk's check: one compiled call per example, not three; else None
        #: (the fusion serves while the buffers' update is the one that offered it:
        #: :meth:`learn` drops it, and the steps made with it, otherwise)
        fused = getattr(one.update, "fused", None)
        usable = not dense and READS_DICTS and self.walk is not None and self.early is None
        self.fused = fused if usable else None
        self.fused_update = one.update
        #: the fused steps by the label's value (``cache.py1`` or ``cache.py0``),
        #: for rows whose plan saves rows (``whole`` False), and the classes they
        #: were made for: :meth:`learn` finds the step by one lookup of ``y``, which
        #: for these labels matches as ``y == cache.py1`` and ``y == cache.py0`` do
        #: (labels of ``_SCALAR_LABELS``: equal values hash alike)
        self.by_label: tuple = (None, {})

    def valid(self, learner) -> bool:
        """Whether the step may serve a call now (step 1 of the module docstring;
        :meth:`learn` makes the same checks inline)."""
        cache = self.cache
        return (
            _local.fast_path
            and cache.flat is self.flat
            and self.current(learner)
            and cache.plans.get(self.layout) is self.one
        )

    def _apart(self, plan):
        """``plan`` without the operating-point window when the step pushes it
        (:func:`_window_apart`), else ``plan``."""
        if not self.mode:
            return plan
        return _window_apart(plan, self.window.__array_interface__["data"][0])

    def _step(self, key: tuple):
        """The plans of ``key`` kept by the fast path, with the compiled calls bound to
        their tables, or None (not handled, or not yet planned).

        A step is ``(begin, checks)``: ``begin(label, ...)`` checks, loads and saves
        (``begin(label, address, k)`` of a dict of ``k`` items, :func:`_begin_dict`;
        ``begin(label, row)`` of a 1-D array; ``begin(label, k)`` of a dict packed by
        :mod:`struct` without :data:`aucstream._fastpath.READS_DICTS`); ``checks[i]``
        is ``(plan, finish)`` of the plan used (without the window), ``finish(k)`` the
        bound :func:`_finish_block`, ``i`` = 1 for a dense row of a learner that
        saves rows when it names more than half the columns (its plan copies
        everything whole), else 0."""
        cache = self.cache
        plan = cache.plans.get(key)
        if plan is None or not self.flat._verified or not _simple(plan):
            return None
        plan = self._apart(plan)
        one = self.one
        if self.dense:
            whole = plan  # (no rows saved: unused)
            if plan.rows_copy.shape[0]:
                whole = cache.plans.get((key[0], True, key[2]))
                if whole is not None and (not _simple(whole) or whole.rows_copy.shape[0]):
                    return None
                if whole is not None:
                    whole = self._apart(whole)
            tables = (plan.copy, plan.rows_copy, _TABLE if whole is None else whole.copy)
            args = block(one.data, one.nonzero, self.width, *tables, whole is not None, one.y)
            entry = compiled_entry(_begin_dense_block, (0, 1.0, np.zeros(self.width)))
            plans: tuple = (plan, plan if whole is None else whole)
            rows = one.nonzero
        elif READS_DICTS:
            buffers = (one.indptr, one.indices, one.data, self.width)
            walk = _NO_WALK if self.walk is None or self.early is not None else self.walk
            versions = self.versions if walk is self.walk else _NO_WALK
            # (the components' versions: asked whenever the walk's table has versions)
            have = self.walk is not None and self.starts.shape[0] > 0
            seen = (self.walk, self.starts) if have else (_NO_WALK, _NO_WALK)
            args = block(*buffers, plan.copy, plan.rows_copy, one.y, walk, versions, *seen)
            plans = (plan,)
            rows = one.indices
            if self.fused is not None:  # (the update and the checks in the same call)
                function, kernel = self.fused
                checks = self._checks(plans, rows)
                finish_at = checks[0][1].args[0]  # (the block of its _finish_block)
                label = int(np.float64(1.0 if key[0] else -1.0).view(np.int64))
                values = (address(args), kernel, finish_at, id("n_samples_seen_"), label)
                fused = np.array(values, dtype=np.int64)  # (fused_arguments)
                entry = compiled_entry(function, (0, 0))
                self.blocks += [args, fused]
                step = (partial(entry, address(fused)), checks)
                self.steps[key] = step
                return step
            entry = compiled_entry(_begin_dict, (0, 1.0, 0, 0))
        else:
            packed = (
                *(one.indptr, one.indices, one.data, self.width, plan.copy, plan.rows_copy),
                *(one.y, self.keys, self.pairs),
            )
            entry = compiled_entry(_begin_sparse, (*packed, 1.0, 0))
            step = (partial(entry, *packed), self._checks((plan,), one.indices))
            self.steps[key] = step
            return step
        self.blocks.append(args)  # (alive with the step: its calls take its address)
        step = (partial(entry, address(args)), self._checks(plans, rows))
        self.steps[key] = step
        return step

    def _checks(self, plans: tuple, rows: np.ndarray) -> tuple:
        """``(plan, finish)`` per plan of :meth:`_step`: :func:`_finish_block` bound
        to a block of the plan's tables and the step's arrays."""
        one, window = self.one, self.window
        checks = []
        for p in plans:
            tables = (p.floats, p.rows_floats, rows, self.mode, self.calibration)
            tail = (one.scores, one.y, NONE, id(self.vars), self.names)
            walk = _NO_WALK if self.walk is None else self.walk
            args = block(*tables, window, window.shape[1], *tail, walk, self.versions)
            finish = compiled_entry(_finish_block, (0, 0))
            self.blocks.append(args)
            checks.append((p, partial(finish, address(args))))
        return tuple(checks)

    def learn(self, learner, x, y) -> bool:
        """Learn the example ``(x, y)``: True when learnt (or raised, having changed
        nothing), False, having changed nothing, when it must take the usual path (a
        row or label not plainly valid; a state that diverged, which the usual path
        learns again and reports)."""
        cache = self.cache
        if not (
            _local.fast_path
            and cache.flat is self.flat
            and learner.__dict__ is self.vars
            and (self.walk is not None or self.current(learner))  # (else compiled)
            and cache.plans.get(self.layout) is self.one
            and isinstance(y, _SCALAR_LABELS)
        ):
            return False
        if type(x) is dict and self.by_label[0] is cache.classes:
            # a fused step made for this label and these classes, found at once (a
            # row of more than half the columns, or of more entries than the buffers
            # hold, goes the way below); its update still the one fused (else below)
            k = len(x)
            step = self.by_label[1].get(y) if 2 * k <= self.width else None
            if step is not None and k <= self.one.capacity and self.one.update is self.fused_update:
                return self._fused_learn(learner, x, step)
        if y == cache.py1:
            label = 1.0
        elif y == cache.py0:
            label = -1.0
        else:
            return False
        one = self.one
        if self.dense:
            if type(x) is not np.ndarray or x.ndim != 1 or x.dtype != _FLOAT64:
                return False
            flags = x.flags  # (the compiled entry takes arrays of exactly one type)
            if not (flags.c_contiguous and flags.writeable and flags.aligned):
                return False
            # a learner that saves rows: the plan that saves them (the compiled load
            # takes the whole plan instead for a row of many non-zeros)
            whole = not self.by_rows
        else:
            if type(x) is not dict:
                return False
            k = len(x)
            if k > one.capacity or not (READS_DICTS or pack_dict_pairs(x, self.pairs)):
                return False
            whole = not self.by_rows or 2 * k > self.width
        fused = self.fused  # (dict rows only)
        if fused is not None and one.update is not self.fused_update:
            self.fused = fused = None  # (another update: not the one fused; new steps)
            self.steps.clear()
            self.by_label = (None, {})
        if fused is None:
            early, ask = self.early, self.variant
            if early is not None and not early():
                return False
            key = (label > 0.0, whole, self.settled if ask is None else ask(learner, one.chunk))
        else:  # (a fused step has no early check, no variant asked and no hook)
            key = (label > 0.0, whole, self.settled)
        step = self.steps.get(key)
        if step is None:
            step = self._step(key)
            if step is None:
                return False
        begin, checks = step
        if fused is not None:  # the load and save, the update, the count, the checks
            if self.by_rows and not whole:  # (found at once from now on: by_label)
                if self.by_label[0] is not cache.classes:
                    self.by_label = (cache.classes, {})
                self.by_label[1][cache.py1 if label > 0.0 else cache.py0] = step
            return self._fused_learn(learner, x, step)
        else:
            if self.check_hook is not None:
                self.check_hook(learner)
            if self.dense:
                k = begin(label, x)
                plan, finish = checks[self.by_rows and 2 * k > self.width]
            else:
                k = begin(label, id(x), k) if READS_DICTS else begin(label, k)
                plan, finish = checks[0]
        if k < 0:  # refused (the usual path says why) or not current: nothing saved
            if k == -2:  # no whole plan yet: the usual path makes it, then a new step
                del self.steps[key]
            return False
        # (the state's dicts are plain dicts; the walk is current, so the lists hold
        # the walk's items)
        same = k >= _SAME  # (the components' dicts unchanged since their copies)
        if same:
            k -= _SAME
        single = self.single
        if single is not None:
            dicts = single.copy()
        else:  # (the learner's __dict__; the components' copies are :attr:`copies`)
            if not same or self.copies is None:
                self.copies = None  # (until made: the versions are those of now)
                self.copies = list(map(dict.copy, self.dicts[1:]))
            dicts = self.vars.copy()
        lists = self.list_copies
        try:
            try:
                one.update(learner)
            except _KERNEL_ERRORS as error:
                raise learner._kernel_error(one.exact_chunk(), error) from error
            learner.n_samples_seen_ += 1
            # the Python floats and the arrays checked, then the window pushed (last)
            if finish(k):
                return True
        except BaseException:
            self._restore(plan, k, dicts, lists)
            raise
        # diverged: put back, and let the usual path learn the row again and say so
        self._restore(plan, k, dicts, lists)
        return False

    def _fused_learn(self, learner, x: dict, step: tuple) -> bool:
        """:meth:`learn` of the dict row ``x`` by a fused step (:attr:`fused`): the
        load and save, the update, the count and the checks in one compiled call."""
        begin, checks = step
        seen = learner.n_samples_seen_  # (the count before: put back on failure)
        try:
            k = begin(id(x))  # (the label and the size: the step's, the dict's)
        except BaseException as error:  # (raised by the update: the row was saved)
            learner.n_samples_seen_ = seen
            self._put_back(checks[0][0], len(x))
            if isinstance(error, _KERNEL_ERRORS):
                raise learner._kernel_error(self.one.exact_chunk(), error) from error
            raise
        if k >= 0:  # learnt, counted, checked, the window pushed
            if k < _SAME:  # (the components' versions are those of now)
                self.copies = None
            return True
        if k == NOT_COUNTED:  # learnt: counted and checked in Python
            plan, finish = checks[0]
            return self._fused_finish(learner, plan, finish, len(x))
        if k == RAN_OUT or k == DIVERGED:  # put back; the usual path learns the row
            learner.n_samples_seen_ = seen  # (and says why)
            self._put_back(checks[0][0], len(x))
            return False
        # (-1: refused, the usual path says why; -3: the walk is not current)
        return False  # (nothing saved)

    def _fused_finish(self, learner, plan, finish, k: int) -> bool:
        """The end of :meth:`learn` after a fused load-and-learn that did not count
        (:data:`NOT_COUNTED`): the count and the checks in Python, the dicts copied
        only when the call is put back (:meth:`_put_back`; the update changed none)."""
        self.copies = None  # (the components' versions kept may be those of now)
        seen = learner.n_samples_seen_
        try:
            learner.n_samples_seen_ = seen + 1
            if finish(k):  # (the floats and arrays checked, then the window pushed)
                return True
        except BaseException:
            learner.n_samples_seen_ = seen
            self._put_back(plan, k)
            raise
        learner.n_samples_seen_ = seen  # diverged: put back, the usual path says so
        self._put_back(plan, k)
        return False

    def _put_back(self, plan, k: int) -> None:
        """:meth:`_restore` after a fused load-and-learn (:attr:`fused`) that saved the
        row of ``k`` entries and whose update then failed: the state's dicts, which a
        compiled update does not change, copied now."""
        self.copies = None if self.single is not None else list(map(dict.copy, self.dicts[1:]))
        dicts = self.single.copy() if self.single is not None else self.vars.copy()
        self._restore(plan, k, dicts, self.list_copies)

    def _restore(self, plan, k: int, dicts, lists) -> None:
        """Put the state back as :meth:`learn` saved it (the window was not written;
        ``dicts``: the copy of :attr:`single` when there is one, else of the learner's
        ``__dict__``, the components' copies being :attr:`copies`)."""
        dicts = [dicts] if self.single is not None else [dicts, *(self.copies or ())]
        rows = (self.one.nonzero if self.dense else self.one.indices)[:k]
        self.flat.restore((plan, rows, None, (), dicts, lists, ()))
