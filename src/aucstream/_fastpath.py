"""What the base class's fast path for small calls keeps and checks between calls.

``BaseStreamingAUC._quick_chunk`` / ``_quick_learn`` (see :mod:`aucstream._base`) take
plainly valid small calls of a learner that has already learnt through a path without
scikit-learn's general validation; the helpers here remember, per learner and outside
its state, the parameters last validated and the labels, and check labels cheaply;
the prepared one-row learning call (:class:`OneRow`) lives here too, with what the
compiled per-example calls share: the reading of a dict row where it lies
(:func:`read_dict`, through :mod:`aucstream._kernels._pyobjects`) and the blocks that
pass a call's arrays as one address (:func:`block`). The prepared scoring of dict rows
is :mod:`aucstream._dict_scoring`.
"""

from __future__ import annotations

import weakref
from functools import partial
from operator import attrgetter, is_
from typing import TYPE_CHECKING, Any

import numba as nb
import numpy as np
from sklearn.base import BaseEstimator

from . import _chunks
from ._chunks import (
    Chunk,
    load_dense_row,
    load_row_in_place,
    load_sparse_row,
)
from ._kernels import bound_call, compiled_entry, jit, pointer
from ._kernels._packed import floats_at as floats_at  # (re-exported: the blocks' readers)
from ._kernels._packed import ints_at
from ._kernels._pyobjects import (
    DICT_VERSION_OFFSET,
    DIGIT_OFFSET,
    FLOAT_OFFSET,
    LAYOUT,
    dict_next,
    error_clear,
    float_value,
    long_value,
)

if TYPE_CHECKING:
    from ._dict_scoring import OneScore

#: Parameter values of these types are kept by identity between validations: they are
#: immutable, or (generators) their validity does not depend on their contents.
STABLE_PARAM_TYPES = frozenset(
    {
        bool,
        int,
        float,
        str,
        type(None),
        np.bool_,
        np.int32,
        np.int64,
        np.float32,
        np.float64,
        np.random.Generator,
        np.random.RandomState,
    }
)
#: Label types compared with ``classes_`` one by one (everything else is validated in full).
_SCALAR_LABELS = (int, float, str, np.number, np.bool_)
#: Label dtypes that compare with classes of each dtype kind as ``np.isin`` does.
LABEL_KINDS = {"b": "biuf", "i": "biuf", "u": "biuf", "f": "biuf", "U": "U", "S": "S"}


class FastCache:
    """What the fast path remembers of one learner between calls.

    Kept outside the learner (in a weak dictionary), so it is never part of the
    learner's state, of its copies, pickles or model files.
    """

    __slots__ = (
        "params",
        "flat",
        "pinned",
        "plans",
        "by_rows",
        "variant_matters",
        "classes",
        "c0",
        "c1",
        "py0",
        "py1",
        "kinds",
        "labels",
        "sparse_step",
        "dense_step",
        "scorers",
    )
    # what the slots hold (set when the cache is filled; None until then)
    params: Any
    flat: Any
    classes: Any
    c0: Any
    c1: Any
    py0: Any
    py1: Any
    kinds: Any
    labels: Any  # (a LabelCheck of the classes)
    sparse_step: Any
    dense_step: Any

    def __init__(self):
        self.params = self.flat = self.classes = self.labels = None
        #: whether ``flat``'s check pins the parameters (all stable, all attributes)
        self.pinned = False
        #: whether the learner logs rows (``_row_logged_state``), for ``flat``
        self.by_rows = False
        #: whether a one-row plan may depend on the learner's ``_plan_variant`` (it
        #: logs rows, or declares what it only reads), for ``flat``: else the plans
        #: are kept by label alone and the variant is not asked
        self.variant_matters = True
        #: the plans of one-row calls by class (+1: True) and whether they handle no
        #: rows, for ``flat`` and ``params``
        self.plans: dict[tuple, Any] = {}
        #: the per-example entries (:class:`aucstream._runtime._entry.OneStep`) of
        #: dict rows and of 1-D float64 rows, once made
        self.sparse_step = self.dense_step = None
        #: the prepared scorings of dict rows (:class:`OneScore`), one per thread (by
        #: ``threading.get_ident``: threads that score at once do not share buffers)
        self.scorers: dict[int, OneScore] = {}


class ByIdentity:
    """A weak dictionary keyed by identity (of learners; of arrays, which numpy does
    not hash, for the undo logs' spare buffers): ``get`` is one dict lookup by ``id``
    and one call of a weak reference (a ``WeakKeyDictionary`` makes a weak reference
    per lookup).

    An entry goes when its key object does (its weak reference's callback), so a
    later object with the same ``id`` never finds it.
    """

    __slots__ = ("_data",)

    def __init__(self):
        self._data: dict[int, tuple[weakref.ref, object]] = {}

    def get(self, obj):
        entry = self._data.get(id(obj))
        if entry is not None and entry[0]() is obj:
            return entry[1]
        return None

    def __getitem__(self, obj):
        found = self.get(obj)
        if found is None:
            raise KeyError(obj)
        return found

    def pop(self, obj):
        """Take the value of ``obj`` out (None if there is none)."""
        entry = self._data.pop(id(obj), None)
        if entry is not None and entry[0]() is obj:
            return entry[1]
        return None

    def clear(self) -> None:
        """Forget every learner (its next call walks its state and binds again)."""
        self._data.clear()

    def __setitem__(self, obj, value) -> None:
        key, data = id(obj), self._data

        def forget(ref, key=key, data=data):
            entry = data.get(key)
            if entry is not None and entry[0] is ref:
                del data[key]

        data[key] = (weakref.ref(obj, forget), value)


FAST = ByIdentity()
_PARAM_GETTERS: dict[type, attrgetter] = {}
_PARAM_NAMES: dict[type, tuple[str, ...]] = {}
#: The parameter values last validated, per estimator (:func:`validate_params_once`).
_VALIDATED = ByIdentity()


def validate_params_once(estimator) -> None:
    """``estimator._validate_params()``, unless its parameters are the very objects
    validated last time, each of a type in :data:`STABLE_PARAM_TYPES` or an
    estimator (scikit-learn's validation costs about as much as a one-row call of a
    transformer). An estimator held as a parameter (a pipeline's steps, a drift
    detector) is checked by its type and methods (``HasMethods``, ``isinstance``),
    which its own parameters do not change; they are validated by its own calls."""
    params = param_values(estimator)
    last = _VALIDATED.get(estimator)
    if last is not None and all(map(is_, params, last)):
        return
    estimator._validate_params()
    if all(type(v) in STABLE_PARAM_TYPES or isinstance(v, BaseEstimator) for v in params[:-2]):
        _VALIDATED[estimator] = params


def param_names(cls: type) -> tuple[str, ...]:
    """The parameter names of an estimator class (scikit-learn's ``_get_param_names``,
    which inspects the signature of ``__init__`` at every call), once per class."""
    names = _PARAM_NAMES.get(cls)
    if names is None:
        names = _PARAM_NAMES[cls] = tuple(cls._get_param_names())  # type: ignore[attr-defined]
    return names


def param_values(estimator) -> tuple:
    """The estimator's parameter values (and its class), in a C-level getter."""
    cls = type(estimator)
    getter = _PARAM_GETTERS.get(cls)
    if getter is None:  # with the class, the getter always returns a tuple
        getter = _PARAM_GETTERS[cls] = attrgetter(*param_names(cls), "__class__", "__class__")
    return getter(estimator)


NONE = np.empty(0)
_FLOAT64 = np.dtype(np.float64)
_PLUS_ONE, _MINUS_ONE = np.ones(1), -np.ones(1)


def quick_csr(rows: tuple, n_features: int) -> bool:
    """Whether the CSR arrays of a dict row pass :func:`aucstream._chunks.quick_rows`'s check."""
    indptr, indices, data = rows
    return _chunks._csr_ok(indptr, indices, data, n_features)


def row_chunk(indptr, indices, data, y_pm, width: int, i: int) -> Chunk:
    """Row ``i`` of chunk arrays as a chunk of its own (the arrays ``to_chunk`` makes)."""
    if indptr is None:
        return Chunk(None, None, data[i : i + 1], y_pm[i : i + 1], width)
    lo, hi = indptr[i], indptr[i + 1]
    return Chunk(
        np.array([0, hi - lo], dtype=np.int64),
        indices[lo:hi].copy(),
        data[lo:hi].copy(),
        y_pm[i : i + 1].copy(),
        width,
    )


def _label_is(label, value) -> bool:
    return isinstance(label, _SCALAR_LABELS) and bool(label == value)


def same_classes(classes, cache: FastCache) -> bool:
    """Whether ``classes`` holds exactly ``classes_[0]`` and ``classes_[1]``."""
    if not isinstance(classes, (list, tuple, np.ndarray)) or len(classes) != 2:
        return False
    a, b = classes
    c0, c1 = cache.c0, cache.c1
    return (_label_is(a, c0) and _label_is(b, c1)) or (_label_is(a, c1) and _label_is(b, c0))


def one_label(label, cache: FastCache) -> float | None:
    """+1.0 or -1.0 when the scalar ``label`` equals ``classes_[1]`` or ``classes_[0]``
    (None: validate in full)."""
    if not isinstance(label, _SCALAR_LABELS):
        return None
    # the classes as Python values compare as the numpy values (as np.isin) do, faster
    if label == cache.py1:
        return 1.0
    if label == cache.py0:
        return -1.0
    return None


def quick_labels(y, n: int, cache: FastCache) -> np.ndarray | None:
    """+1/-1 labels when every label equals a class (None: validate in full)."""
    if type(y) is np.ndarray:
        if y.ndim != 1 or y.shape[0] != n:
            return None
    elif type(y) not in (list, tuple) or len(y) != n:
        return None
    if n == 1:  # one comparison of scalars (numpy's per-call cost is larger)
        if type(y) is np.ndarray and y.dtype is cache.classes.dtype:
            # Python values of one dtype compare as the numpy values do
            label = y.item()
            if label == cache.py1:
                return _PLUS_ONE.copy()
            if label == cache.py0:
                return _MINUS_ONE.copy()
            return None
        label = one_label(y[0], cache)
        if label is None:
            return None
        return (_PLUS_ONE if label > 0.0 else _MINUS_ONE).copy()
    y = np.asarray(y)
    if y.dtype.kind not in cache.kinds:
        return None
    signs = None if cache.labels is None else cache.labels.signs(y)
    if signs is not None:  # (one compiled pass: float64 or int64 labels)
        return signs[0] if signs[1] < 0 else None
    positive = y == cache.c1
    if not (positive | (y == cache.c0)).all():
        return None
    return np.where(positive, 1.0, -1.0)


class OneRow:
    """A learner's prepared one-row call: a chunk of fixed buffers that each call
    fills, and the learner's update bound to it (``BaseStreamingAUC._bind_update``).

    Kept in a :class:`FastCache`'s ``plans`` (so it goes when they do: when a
    parameter is no longer the same object, or the state's objects change). ``dense``
    buffers hold one row of ``n_features`` values (the layout of a learner whose
    kernels read dense rows in place); sparse ones hold the CSR arrays of one row of
    at most ``capacity`` stored values (a larger row makes a larger context).
    ``update`` is None when the learner binds nothing (then the fast path does not
    use the context).
    """

    __slots__ = (
        "chunk",
        "update",
        "dense",
        "capacity",
        "indptr",
        "indices",
        "data",
        "y",
        "positive",
        "scores",
        "nonzero",
        "named",
        "whole",
        "_load",
    )
    # the buffers of the loaded row: CSR arrays (None for a dense row) or a dense row
    indptr: Any
    indices: Any
    nonzero: Any
    scores: Any
    update: Any
    _load: Any

    def __init__(self, learner, dense: bool, capacity: int, scores: bool, bind: bool):
        width = learner.n_features_in_
        self.dense, self.capacity = dense, capacity
        self.y = np.zeros(1)
        self.positive = False  # y[0] > 0, as a Python bool (keys the kept plans)
        self.scores = np.zeros(1) if scores else NONE
        #: the columns of the loaded dense row's non-zeros are nonzero[:named]
        self.nonzero, self.named = np.zeros(width if dense else 0, dtype=np.int64), 0
        self.whole = np.zeros(2, dtype=np.int64)  # [0, n]: all of a row's n entries
        if dense:
            self.indptr = self.indices = None
            self.data = np.zeros((1, width))
        else:
            self.indptr = np.zeros(2, dtype=np.int64)
            self.indices = np.zeros(capacity, dtype=np.int64)
            self.data = np.zeros(capacity)
        self.chunk = Chunk(self.indptr, self.indices, self.data, self.y, width, self.scores)
        #: load_row_in_place on these buffers, of the number of entries (sparse)
        self._load = None
        if not dense:
            buffers = self.indptr, self.indices, self.data, width
            self._load = bound_call(load_row_in_place, *buffers, reuse=True, late=(0,))
        self.update = learner._bind_update(self.chunk, reuse=True) if bind else None

    def load_dense(self, values: np.ndarray, label: float) -> bool:
        """Fill the dense buffers with the 1-D row ``values`` and its label (+1.0 or
        -1.0). False, having filled nothing that counts, when the row is not plainly
        valid (see :func:`aucstream._chunks.load_dense_row`)."""
        self.named = load_dense_row(values, self.data, self.nonzero)
        self.y[0] = label
        self.positive = label > 0.0
        return self.named >= 0

    def load_sparse(self, source, indices, values, label: float) -> bool:
        """Fill the sparse buffers with the first ``source[1]`` entries of the column
        ``indices`` and ``values`` of one row (``source``: its CSR ``indptr``; None:
        all of them) and its label. False, having filled nothing that counts, when the row is not
        plainly valid (see :func:`aucstream._chunks.load_sparse_row`)."""
        if source is None:
            source = self.whole
            source[1] = indices.shape[0]
        self.y[0] = label
        self.positive = label > 0.0
        buffers = self.indptr, self.indices, self.data
        return load_sparse_row(source, indices, values, self.chunk.n_features, *buffers) >= 0

    def load_dict(self, x: dict, label: float) -> bool:
        """Fill the sparse buffers with the ``{index: value}`` row ``x`` (at most
        ``capacity`` entries) and its label: keys and values packed into the buffers
        (:func:`aucstream._chunks.pack_dict_row`), then sorted and checked in one
        compiled call (:func:`aucstream._chunks.load_row_in_place`, bound to the buffers):
        cheaper than checking the keys' types, assigning the keys by numpy and making the
        values an ``array("d")`` (``learn_one, dict`` in ``benchmarks/bench_base.py``,
        reported in docs/benchmarks.md).
        False, having filled nothing that counts, when ``x`` is not plainly valid
        (the usual path then says why)."""
        k = len(x)
        if k > self.capacity or not _chunks.pack_dict_row(x, self.indices, self.data):
            return False
        self.y[0] = label
        self.positive = label > 0.0
        return self._load(k) >= 0

    def rows(self) -> np.ndarray:
        """The features the loaded row names (``BaseStreamingAUC._chunk_rows`` of its
        chunk): its stored columns, or a dense row's non-zero columns."""
        if self.dense:
            return self.nonzero[: self.named]
        return self.indices[: self.indptr[1]]

    def exact_chunk(self) -> Chunk:
        """The loaded row as a chunk of arrays of its own size (for error messages)."""
        if self.dense:
            return self.chunk._replace(data=self.data.copy(), y=self.y.copy())
        k = int(self.indptr[1])
        return self.chunk._replace(
            indptr=self.indptr.copy(),
            indices=self.indices[:k].copy(),
            data=self.data[:k].copy(),
            y=self.y.copy(),
        )


#: Where a block (:func:`block`) starts its addresses: before them, the layout of
#: :data:`aucstream._kernels._pyobjects.LAYOUT` (6 values) and the position and the
#: item of :func:`read_dict`'s walk of a dict (3 values).
BLOCK_START = 9
#: The most values of a block (compiled code reads a block from its address).
BLOCK_WIDTH = BLOCK_START + 32
#: Whether dict rows can be read in compiled code (:func:`read_dict`).
READS_DICTS = LAYOUT is not None


def address(array: np.ndarray) -> int:
    """The address of an array's data."""
    return array.__array_interface__["data"][0]


def block(*items) -> np.ndarray:
    """The arguments of a compiled call as one int64 array (a compiled call costs
    about as much per array argument as for the rest of a one-row call): the layout
    that :func:`read_dict` reads, two free values, then per item its address and
    length (a C-contiguous array; a 2-D array's length is its number of rows) or
    the integer itself (at most :data:`BLOCK_WIDTH` values in all). The caller keeps
    the arrays alive for as long as the block, passes the block to compiled code as
    its address (:func:`address`; an int costs less to pass than an array) and
    reads it back there with ``ints_at(at, BLOCK_WIDTH)``, and the arrays with
    :func:`floats_at` / :func:`ints_at`."""
    out = [*(LAYOUT if LAYOUT is not None else np.zeros(6, dtype=np.int64)), 0, 0, 0]
    for item in items:
        if isinstance(item, np.ndarray):
            if not item.flags.c_contiguous:
                raise ValueError("a block holds C-contiguous arrays only")
            out += [address(item), item.shape[0] if item.ndim else 1]
        else:
            out.append(int(item))
    if len(out) > BLOCK_WIDTH:
        raise ValueError("too many items for a block")
    return np.array(out + [0] * (BLOCK_WIDTH - len(out)), dtype=np.int64)


def block_call(kernel, *items, late: tuple = ()):
    """``kernel(at, *values)`` bound to the block of ``items`` (:func:`block`; ``at``
    its address): a function of the ``values`` (examples of their types in
    ``late``), calling the compiled overload at its entry point
    (:func:`aucstream._kernels.compiled_entry`). It holds the block and the items,
    so a call passes one int where binding the arrays themselves would unbox each
    at every call; ``kernel`` reads them back with :func:`floats_at` /
    :func:`ints_at`, and checks what their lengths must be."""
    args = block(*items)
    at = address(args)
    call = partial(compiled_entry(kernel, (at, *late)), at)
    call.held = (args, items)  # type: ignore[attr-defined]
    return call


@jit(inline="always")
def type_of(obj, offset):
    """The address of the type of the Python object at address ``obj`` (``offset``:
    :data:`aucstream._kernels._pyobjects.TYPE_OFFSET`, a block's first value)."""
    return nb.carray(pointer(obj + offset, nb.int64), 1)[0]


@jit(inline="always")
def dict_version(container):
    """The version of the dict at address ``container`` (CPython's ``ma_version_tag``,
    PEP 509, at :data:`aucstream._kernels._pyobjects.DICT_VERSION_OFFSET`, which the
    caller must have found >= 0)."""
    return ints_at(container + DICT_VERSION_OFFSET, 1)[0]


@jit
def read_dict(where, scratch, keys, values):
    """Read the Python dict at address ``where`` (held by the caller) into
    ``keys[:n]`` (int64) and ``values[:n]`` (float64), in its order: ``n``, its
    number of items, or -1 (the buffers unspecified) when it has more items than the
    buffers hold or a key is not an ``int`` / ``numpy.int64`` or does not fit in
    int64, or a value is not a ``float`` / ``numpy.float64`` / ``int`` or does not
    convert (the same conversions as :func:`aucstream._chunks.pack_dict_pairs`'s
    :mod:`struct` packing; bools, keys or values, are refused). ``scratch``: a
    block (:func:`block`), whose first values are the layout and the walk's state.
    See :mod:`aucstream._kernels._pyobjects` for why this is safe. The values are
    not checked here (finite, magnitude): the callers' loads do that."""
    walk = scratch[6:9]
    walk[0] = 0
    offset, n = scratch[0], 0
    while dict_next(where, walk):
        if n >= keys.shape[0] or n >= values.shape[0]:
            return -1
        key_kind = type_of(walk[1], offset)
        if key_kind != scratch[1] and key_kind != scratch[2]:
            return -1
        kind = type_of(walk[2], offset)
        if kind != scratch[3] and kind != scratch[4] and kind != scratch[5]:
            return -1
        key = -1
        if DIGIT_OFFSET >= 0 and key_kind == scratch[1]:  # an int of at most one digit
            size = nb.carray(pointer(walk[1] + DIGIT_OFFSET - 8, nb.int64), 1)[0]
            if size == 0 or size == 1 or size == -1:
                key = size * np.int64(nb.carray(pointer(walk[1] + DIGIT_OFFSET, nb.uint32), 1)[0])
        if key == -1:
            key = long_value(walk[1])
            if key == -1 and error_clear():
                return -1
        if FLOAT_OFFSET >= 0 and kind == scratch[3]:  # an exact float: its value
            value = nb.carray(pointer(walk[2] + FLOAT_OFFSET, nb.float64), 1)[0]
        else:
            value = float_value(walk[2])
            if value == -1.0 and error_clear():
                return -1
        keys[n] = key
        values[n] = value
        n += 1
    return n
