"""A kernel's arguments packed into one int64 array: a call that unboxes one integer.

Numba's entry point of a compiled function unboxes every argument at every call: per
array an adapter that reads the array's fields and makes (then frees) a reference
holder, per named tuple each of its fields. For a one-row call of a learner that
passes a dozen arrays, that is about as much as the learner's arithmetic. So the
per-example path (:class:`aucstream._fastpath.OneRow`, the learner's
``_bind_update(chunk, reuse=True)``) may pack the arguments once (:func:`pack`: per
array its address and shape, per float its bits, per bool or int the value), keep the
packed array and every array it names alive, and call a small compiled *unpacking
wrapper* of the kernel with the packed array's address: the wrapper rebuilds the
arguments as views of those addresses (:func:`f64`, :func:`i64`, :func:`f64_2d`,
:func:`real`, :func:`read_only`, the named tuples by their constructors) and calls the
kernel, whose compiled version for the same argument types runs (the same code, so
the same bits as the unpacked call).

Each wrapper is a module-level function of its learner's module (cached on disk like
any kernel of :func:`aucstream._kernels.jit`), written next to the kernel it unpacks,
with the :data:`signature <pack>` its layout reads: a packing whose signature differs
(another layout of the rows, another dtype) is not handed to it, and the learner binds
its kernel the usual way (:func:`aucstream._kernels.bound_call`). The same rules as
the raw pointers of :mod:`aucstream._kernels._compile` hold: the caller keeps every
array named alive for as long as the packed array, and binds only arrays that every
call reuses (written in place).
"""

from __future__ import annotations

from functools import partial

import numba as nb
import numpy as np
from numba import types
from numba.core.imputils import impl_ret_borrowed

from ._compile import compiled_entry, float_of_bits, intrinsic, jit, pointer
from ._lazy import class_totals, store_class_totals
from ._pyobjects import TYPE_OFFSET, dict_item, dict_set_float, error_clear, float_value

__all__ = [
    "floats_at",
    "ints_at",
    "TOTALS",
    "f64",
    "f64_2d",
    "i64",
    "pack",
    "packed_call",
    "real",
    "read_only",
    "totals_in",
    "totals_out",
    "totals_update",
]

#: The names of the class totals a learner keeps as Python floats
#: (:func:`aucstream._kernels.class_totals`), held here (a packing names them by
#: address).
_TOTAL_NAMES = ("weight_neg_", "weight_pos_")
#: What a packing holds to read and write the class totals in the learner's
#: ``__dict__`` (:func:`totals_in`, :func:`totals_out`): the offset of an object's
#: type, the address of ``float``, the addresses of the two names.
TOTALS = (TYPE_OFFSET, id(float), *map(id, _TOTAL_NAMES))


def _flatten(items, out: list) -> None:
    for item in items:
        if isinstance(item, tuple):  # (a named tuple of arrays or numbers)
            _flatten(item, out)
        else:
            out.append(item)


def pack(*items) -> tuple[np.ndarray, str] | None:
    """``items`` (named tuples flattened in order) as one int64 array, and its
    signature: per float64 (``f``) or int64 (``i``) C-contiguous array its address
    then its shape (one value per dimension; the signature names the kind, the number
    of dimensions and ``r`` for a read-only array, e.g. ``f1``, ``i1r``, ``f2``), per
    float its bits (``d``), per bool or int its value (``b``, ``n``). None when an
    item is none of these (the caller binds its kernel the usual way)."""
    flat: list = []
    _flatten(items, flat)
    values: list[int] = []
    signature: list[str] = []
    for item in flat:
        if isinstance(item, np.ndarray):
            kind = {np.dtype(np.float64): "f", np.dtype(np.int64): "i"}.get(item.dtype)
            if kind is None or not item.flags.c_contiguous or not item.flags.aligned:
                return None
            values += [item.__array_interface__["data"][0], *item.shape]
            signature.append(f"{kind}{item.ndim}{'' if item.flags.writeable else 'r'}")
        elif isinstance(item, (bool, np.bool_)):
            values.append(int(item))
            signature.append("b")
        elif isinstance(item, (int, np.integer)):
            values.append(int(item))
            signature.append("n")
        elif isinstance(item, (float, np.floating)) and type(item) in (float, np.float64):
            values.append(int(np.float64(item).view(np.int64)))
            signature.append("d")
        else:
            return None
    return np.array(values, dtype=np.int64), " ".join(signature)


def packed_call(wrapper, signature: str, *items, late: tuple = ()):
    """``wrapper(at, *values)`` at its compiled entry point, ``at`` the address of the
    packing of ``items`` (:func:`pack`): a function of the ``values`` (examples of
    their types in ``late``), holding the packing and the items; or None when the
    packing's signature is not ``signature`` (the layout ``wrapper`` reads)."""
    packed = pack(*items)
    if packed is None or packed[1] != signature:
        return None
    values = packed[0]
    at = values.__array_interface__["data"][0]
    call = partial(compiled_entry(wrapper, (at, *late)), at)
    call.held = (values, items)  # type: ignore[attr-defined]
    return call


def totals_update(packed, run, totals: np.ndarray, name: str):
    """A learner's bound update (``BaseStreamingAUC._bind_update``) of a kernel that
    keeps the class totals in ``totals``: ``packed(id(learner.__dict__))`` (its
    unpacking wrapper, which reads and keeps the totals in the learner's
    ``__dict__`` itself: :func:`totals_in`, :func:`totals_out`) when there is one and
    the totals are plain floats, else the totals read in Python, ``run()`` (the
    kernel bound) and the totals kept (:func:`aucstream._kernels.class_totals`,
    :func:`aucstream._kernels.store_class_totals`). ``name``: the learner's, for the
    error of a float that could not be made."""

    def update(learner) -> None:
        if packed is not None:
            status = packed(id(learner.__dict__))
            if status == 0:
                return
            if status == -2:
                raise MemoryError(f"{name} could not keep its class totals")
        class_totals(learner, totals)
        run()
        store_class_totals(learner, totals)

    update.packed = packed  # type: ignore[attr-defined]  # (for the tests)
    return update


@jit(inline="always")
def ints_at(at, n):
    """The ``n`` int64 values at address ``at`` (a packing, or an array of a block of
    :mod:`aucstream._fastpath`)."""
    return nb.carray(pointer(at, nb.int64), n)


@jit(inline="always")
def floats_at(at, n):
    """The ``n`` float64 values at address ``at`` (an array of a block)."""
    return nb.carray(pointer(at, nb.float64), n)


@jit(inline="always")
def f64(a, i):
    """The 1-D float64 array of the packing ``a`` at position ``i`` (2 values)."""
    return nb.carray(pointer(a[i], nb.float64), a[i + 1])


@jit(inline="always")
def i64(a, i):
    """The 1-D int64 array of the packing ``a`` at position ``i`` (2 values)."""
    return nb.carray(pointer(a[i], nb.int64), a[i + 1])


@jit(inline="always")
def f64_2d(a, i):
    """The 2-D float64 array of the packing ``a`` at position ``i`` (3 values)."""
    return nb.carray(pointer(a[i], nb.float64), (a[i + 1], a[i + 2]))


@jit(inline="always")
def real(a, i):
    """The float64 of the packing ``a`` at position ``i`` (its bits)."""
    return float_of_bits(a[i])


@intrinsic
def read_only(typingctx, array):
    """The same array, typed read-only (as a read-only argument of the unpacked call
    is: the kernel's compiled version for read-only rows runs)."""
    if not isinstance(array, types.Array):
        return None
    result = array.copy(readonly=True)

    def codegen(context, builder, signature, args):
        return impl_ret_borrowed(context, builder, signature.return_type, args[0])

    return result(array), codegen


@jit(inline="always")
def totals_in(a, i, members, totals):
    """Read the class totals ``weight_neg_``, ``weight_pos_`` of the ``__dict__`` at
    address ``members`` into ``totals`` (as :func:`aucstream._kernels.class_totals`),
    the packing ``a`` holding :data:`TOTALS` at position ``i``: False (``totals``
    unspecified) when one is missing or not exactly a ``float`` (the caller then
    reads them in Python)."""
    offset, real_type = a[i], a[i + 1]
    for c in range(2):
        value = dict_item(members, a[i + 2 + c])
        if value == 0 or nb.carray(pointer(value + offset, nb.int64), 1)[0] != real_type:
            return False
        totals[c] = float_value(value)
    return True


@jit(inline="always")
def totals_out(a, i, members, totals):
    """Keep ``totals`` as the class totals of the ``__dict__`` at address ``members``,
    new Python floats (as :func:`aucstream._kernels.store_class_totals`): False, the
    Python error cleared, when a float could not be made or set (out of memory)."""
    for c in range(2):
        if not dict_set_float(members, a[i + 2 + c], totals[c]):
            error_clear()
            return False
    return True
