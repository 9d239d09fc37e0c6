"""Reading a Python dict of numbers from compiled code (LLVM written by hand).

A row passed as ``{index: value}`` (``learn_one``, ``decision_one``,
``predict_proba_one``) reaches the compiled code as the dict's address: the
intrinsics here call CPython's own C functions (``PyDict_Next``,
``PyLong_AsLongLong``, ``PyFloat_AsDouble``, ``PyErr_Occurred``, ``PyErr_Clear``; and,
for the per-example entry's checks of a learner's state by identity, ``PyDict_Size``,
``PyDict_GetItem``, ``PyList_Size``, ``PyList_GetItem``, ``PyType_IsSubtype``), which
the compiled code finds by name in the running interpreter as numba's own wrappers do,
so no Python tuple of the keys and values is made and no :mod:`struct` call packs them
(the two cost more than the rest of a one-row score).

Safety rules (for the callers, :func:`aucstream._fastpath.read_dict`):

- the compiled function runs with the GIL held (numba's default), and the caller
  holds the dict for the whole call;
- only objects of the exact types listed in :data:`LAYOUT` are converted, so no
  Python code (a ``__float__`` or ``__index__`` of the user's) runs inside the
  compiled call and the dict can not change during it; any other key or value
  refuses the row (the caller then takes its usual path, which says what is wrong);
- a conversion that fails (an int key beyond int64) sets a Python exception, which
  is cleared (:func:`error_clear`) and refuses the row;
- the type of an object is read at ``address + TYPE_OFFSET`` (``ob_type``, the last
  field of CPython's object header, whose size is ``object.__basicsize__``); the
  offset is checked on live objects at import, and :data:`LAYOUT` is None (every
  caller then takes its other path) when it does not hold.
"""

from __future__ import annotations

import ctypes
import struct
import sys

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = [
    "DIGIT_OFFSET",
    "FLOAT_OFFSET",
    "LAYOUT",
    "TYPE_OFFSET",
    "dict_item",
    "dict_next",
    "dict_set_float",
    "dict_set_int",
    "dict_size",
    "error_clear",
    "float_value",
    "is_subtype",
    "list_item",
    "list_size",
    "long_value",
]

_BYTE_P = ir.IntType(8).as_pointer()
_I64 = ir.IntType(64)


def _c_function(builder, name: str, result, arguments: list):
    return cgutils.get_or_insert_function(builder.module, ir.FunctionType(result, arguments), name)


@intrinsic
def dict_next(typingctx, address, scratch):
    """``PyDict_Next`` of the dict at ``address``: the position is ``scratch[0]``
    (0 before the first item), the key's and the value's addresses go to
    ``scratch[1]`` and ``scratch[2]`` (borrowed references). True while there is an
    item. ``scratch``: an int64 array of at least 3 values (not checked)."""
    sig = types.boolean(address, scratch)

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[1])(context, builder, args[1]).data
        slots = builder.bitcast(data, _I64.as_pointer())
        objects = builder.bitcast(slots, _BYTE_P.as_pointer())
        fn = _c_function(
            builder,
            "PyDict_Next",
            ir.IntType(32),
            [_BYTE_P, _I64.as_pointer(), _BYTE_P.as_pointer(), _BYTE_P.as_pointer()],
        )
        found = builder.call(
            fn,
            [
                builder.inttoptr(args[0], _BYTE_P),
                slots,
                builder.gep(objects, [_I64(1)]),
                builder.gep(objects, [_I64(2)]),
            ],
        )
        return builder.icmp_signed("!=", found, ir.IntType(32)(0))

    return sig, codegen


@intrinsic
def long_value(typingctx, address):
    """``PyLong_AsLongLong`` of the object at ``address`` (-1 with an exception set
    when it does not fit: :func:`error_clear`)."""
    sig = types.int64(address)

    def codegen(context, builder, signature, args):
        fn = _c_function(builder, "PyLong_AsLongLong", _I64, [_BYTE_P])
        return builder.call(fn, [builder.inttoptr(args[0], _BYTE_P)])

    return sig, codegen


@intrinsic
def float_value(typingctx, address):
    """``PyFloat_AsDouble`` of the object at ``address`` (-1.0 with an exception set
    when it fails: :func:`error_clear`)."""
    sig = types.float64(address)

    def codegen(context, builder, signature, args):
        fn = _c_function(builder, "PyFloat_AsDouble", ir.DoubleType(), [_BYTE_P])
        return builder.call(fn, [builder.inttoptr(args[0], _BYTE_P)])

    return sig, codegen


@intrinsic
def error_clear(typingctx):
    """Whether a Python exception is set (``PyErr_Occurred``); it is cleared."""
    sig = types.boolean()

    def codegen(context, builder, signature, args):
        occurred = builder.call(_c_function(builder, "PyErr_Occurred", _BYTE_P, []), [])
        raised = builder.icmp_unsigned("!=", occurred, ir.Constant(_BYTE_P, None))
        with builder.if_then(raised):
            builder.call(_c_function(builder, "PyErr_Clear", ir.VoidType(), []), [])
        return raised

    return sig, codegen


def _address_call(builder, name: str, arguments: list, values: list):
    """The call of the C function ``name`` returning an object (its address, 0 for
    NULL) or a ``Py_ssize_t`` (an int64)."""
    fn = _c_function(builder, name, _I64, arguments)
    return builder.call(fn, values)


@intrinsic
def dict_size(typingctx, container):
    """``PyDict_Size`` of the dict at address ``container``."""

    def codegen(context, builder, signature, args):
        return _address_call(
            builder, "PyDict_Size", [_BYTE_P], [builder.inttoptr(args[0], _BYTE_P)]
        )

    return types.int64(container), codegen


@intrinsic
def dict_item(typingctx, container, key):
    """``PyDict_GetItem``: the address of the value of the key at address ``key`` in
    the dict at address ``container`` (a borrowed reference), 0 when it has none
    (the keys of the callers are str objects: no error is possible)."""

    def codegen(context, builder, signature, args):
        pointers = [builder.inttoptr(a, _BYTE_P) for a in args]
        return _address_call(builder, "PyDict_GetItem", [_BYTE_P, _BYTE_P], pointers)

    return types.int64(container, key), codegen


@intrinsic
def list_size(typingctx, container):
    """``PyList_Size`` of the list at address ``container``."""

    def codegen(context, builder, signature, args):
        return _address_call(
            builder, "PyList_Size", [_BYTE_P], [builder.inttoptr(args[0], _BYTE_P)]
        )

    return types.int64(container), codegen


@intrinsic
def list_item(typingctx, container, index):
    """``PyList_GetItem``: the address of item ``index`` (inside the list: the
    callers check its size first) of the list at address ``container``."""

    def codegen(context, builder, signature, args):
        values = [builder.inttoptr(args[0], _BYTE_P), args[1]]
        return _address_call(builder, "PyList_GetItem", [_BYTE_P, _I64], values)

    return types.int64(container, index), codegen


@intrinsic
def is_subtype(typingctx, kind, base):
    """``PyType_IsSubtype`` of the type objects at addresses ``kind`` and ``base``."""

    def codegen(context, builder, signature, args):
        fn = _c_function(builder, "PyType_IsSubtype", ir.IntType(32), [_BYTE_P, _BYTE_P])
        found = builder.call(fn, [builder.inttoptr(a, _BYTE_P) for a in args])
        return builder.icmp_signed("!=", found, ir.IntType(32)(0))

    return types.boolean(kind, base), codegen


def _dict_set_codegen(maker: str, value_type):
    """The codegen of :func:`dict_set_float` and :func:`dict_set_int`: a new Python
    object of the value made by the C function ``maker`` (taking ``value_type``), set
    with ``PyDict_SetItem``, then the new reference released."""

    def codegen(context, builder, signature, args):
        made = _c_function(builder, maker, _BYTE_P, [value_type])
        obj = builder.call(made, [args[2]])
        done = cgutils.alloca_once_value(builder, ir.IntType(1)(0))
        with builder.if_then(builder.icmp_unsigned("!=", obj, ir.Constant(_BYTE_P, None))):
            setter = _c_function(
                builder, "PyDict_SetItem", ir.IntType(32), [_BYTE_P, _BYTE_P, _BYTE_P]
            )
            status = builder.call(
                setter,
                [builder.inttoptr(args[0], _BYTE_P), builder.inttoptr(args[1], _BYTE_P), obj],
            )
            builder.call(_c_function(builder, "Py_DecRef", ir.VoidType(), [_BYTE_P]), [obj])
            builder.store(builder.icmp_signed("==", status, ir.IntType(32)(0)), done)
        return builder.load(done)

    return codegen


@intrinsic
def dict_set_float(typingctx, container, key, value):
    """Set the key at address ``key`` (a str) of the dict at address ``container`` to
    a new Python float of ``value`` (``PyFloat_FromDouble``, ``PyDict_SetItem``, then
    the new reference released: the dict holds it, and releases the value it
    replaces, a float, whose release runs no Python code). False, nothing set, with
    an exception set (:func:`error_clear`) when either fails (out of memory)."""
    codegen = _dict_set_codegen("PyFloat_FromDouble", ir.DoubleType())
    return types.boolean(container, key, value), codegen


@intrinsic
def dict_set_int(typingctx, container, key, value):
    """:func:`dict_set_float` of a new Python int of ``value`` (``PyLong_FromLongLong``;
    the value it replaces must be an int, whose release runs no Python code)."""
    return types.boolean(container, key, value), _dict_set_codegen("PyLong_FromLongLong", _I64)


#: The offset of ``ob_type`` in CPython's object header.
TYPE_OFFSET = object.__basicsize__ - ctypes.sizeof(ctypes.c_void_p)


def _layout() -> np.ndarray | None:
    """What the compiled reader takes (:func:`aucstream._fastpath.read_dict`): the
    type offset, then the addresses of the key types (``int``, ``numpy.int64``) and of
    the value types (``float``, ``numpy.float64``, ``int``) it converts; None when the
    offset does not give these objects' types (another object layout)."""
    samples: tuple = (1, np.int64(1), 1.5, np.float64(1.5), True, "a", None, {})
    for obj in samples:
        if ctypes.c_void_p.from_address(id(obj) + TYPE_OFFSET).value != id(type(obj)):
            return None
    return np.array(
        [TYPE_OFFSET, id(int), id(np.int64), id(float), id(np.float64), id(int)],
        dtype=np.int64,
    )


#: See :func:`_layout` (read-only).
LAYOUT = _layout()
if LAYOUT is not None:
    LAYOUT.flags.writeable = False


def _dict_version_offset() -> int:
    """The offset of a dict's version (CPython's ``ma_version_tag``, PEP 509: a value
    that every change of any dict makes new, from one counter of the interpreter)
    after the object header and ``ma_used``; -1 when this interpreter has none there
    (checked on live dicts: the size where ``ma_used`` must be, a version that stays
    while the dict does not change and changes when a value is replaced, and two
    dicts' versions distinct), and the callers compare the dict's values instead."""
    word = ctypes.sizeof(ctypes.c_ssize_t)
    used, offset = object.__basicsize__, object.__basicsize__ + word
    if ctypes.sizeof(ctypes.c_void_p) != 8 or word != 8:
        return -1

    def read(d: dict, at: int) -> int:
        return ctypes.c_int64.from_address(id(d) + at).value

    one, other = {"a": 1.5, "b": 2.5, "c": 3.5}, {"a": 1.5}
    if read(one, used) != 3 or read(other, used) != 1:
        return -1
    before = read(one, offset)
    same = read(one, offset)
    _ = one.get("a"), len(one), list(one.values())
    unchanged = read(one, offset)
    one["a"] = 4.5
    after = read(one, offset)
    one["a"] = 5.5
    again = read(one, offset)
    if not (before == same == unchanged and len({before, after, again}) == 3):
        return -1
    if read(other, offset) in (before, after, again):
        return -1
    return offset


#: See :func:`_dict_version_offset` (-1: none).
DICT_VERSION_OFFSET = _dict_version_offset()


def _float_offset() -> int:
    """The offset of an exact ``float``'s value (CPython's ``ob_fval``, right after the
    object header), checked on live floats (their 8 bytes there are theirs); -1 when
    it does not hold, and the callers convert through ``PyFloat_AsDouble``."""
    at = object.__basicsize__
    if float.__basicsize__ != at + 8:
        return -1
    for value in (1.5, -0.0, 1e300, -2.5e-310, float("inf"), 0.1):
        if ctypes.string_at(id(value) + at, 8) != struct.pack("d", value):
            return -1
    return at


def _digit_offset() -> int:
    """The offset of an exact ``int``'s first digit when the interpreter stores an int
    as its signed number of digits (CPython's ``ob_size``, right after the object
    header) and then 30-bit digits (CPython up to 3.11): an int of at most one digit
    (absolute value below 2^30) is then its size's sign times that digit. Checked on
    live ints; -1 when it does not hold (3.12 changed the layout), and the callers
    convert through ``PyLong_AsLongLong``."""
    size_at = object.__basicsize__
    digit_at = size_at + 8
    info = sys.int_info
    if sys.version_info >= (3, 12) or info.bits_per_digit != 30 or info.sizeof_digit != 4:
        return -1
    if int.__basicsize__ != digit_at or ctypes.sizeof(ctypes.c_ssize_t) != 8:
        return -1
    for value in (0, 1, 7, 122, 2**29 + 3, 2**30 - 1, -5, -(2**30 - 1), 2**30, -(2**31)):
        size = ctypes.c_int64.from_address(id(value) + size_at).value
        digits = (abs(value).bit_length() + 29) // 30
        if size != (digits if value >= 0 else -digits):
            return -1
        if digits == 1 and ctypes.c_uint32.from_address(id(value) + digit_at).value != abs(value):
            return -1
    return digit_at


#: See :func:`_float_offset` (-1: none).
FLOAT_OFFSET = _float_offset()
#: See :func:`_digit_offset` (-1: none).
DIGIT_OFFSET = _digit_offset()
