r"""Small compiled pieces shared by the learners' kernels, written once.

Every per-example kernel reads a row as ``(idx, val)``: the column indices and values
of one CSR row (``indices[lo:hi]``, ``data[lo:hi]``). The helpers here are the only
sparse dot product and sparse axpy in the package.

Kernels here are compiled under the policy of :mod:`aucstream._kernels._compile`.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import types

from ._compile import REASSOC, inline_overload, jit, prefetch, prefetch_span

__all__ = [
    "Rows",
    "col",
    "count_nonzero",
    "is_none_type",
    "n_rows",
    "prefetch_rows",
    "prefetch_row_of",
    "read_only_view",
    "row",
    "rows_of",
    "sparse_axpy",
    "sparse_dot",
    "squared_norm",
]


#: A chunk's rows and their +1/-1 labels, as one kernel argument: CSR arrays
#: (``indptr``, ``indices``, ``data``), or for dense input ``indptr = indices = None``
#: and ``data`` the C-contiguous 2-D array itself (read in place, no copy).
Rows = namedtuple("Rows", ["indptr", "indices", "data", "y"])


def read_only_view(a):
    """``a``, or a read-only view of it when it is writeable (None stays None): the
    argument of a kernel that only reads it, so that read-only and writeable arrays
    share one compiled version (no copy)."""
    if a is None or not a.flags.writeable:
        return a
    view = a.view()
    view.flags.writeable = False
    return view


def rows_of(chunk) -> Rows:
    """The :class:`Rows` of an :class:`aucstream._chunks.Chunk`.

    The row arrays are passed read-only, whatever the caller's arrays are: numba
    compiles one specialization per mutability, and a kernel reads its rows and never
    writes them, so read-only rows (a pandas frame under copy-on-write, a memory map,
    scikit-learn's read-only checks) and writeable ones share one compiled kernel
    instead of two (the largest kernels take seconds to compile each).
    """
    return Rows(
        read_only_view(chunk.indptr),
        read_only_view(chunk.indices),
        read_only_view(chunk.data),
        chunk.y,
    )


# Dense and sparse rows through one set of helpers. Each helper below is a numba
# overload: the stub is what Python sees, and numba compiles one specialization for
# sparse rows (``idx`` an index array) and one for dense rows (``idx`` None, ``val``
# the whole row), so a kernel written with them runs on both layouts, and the dense
# specialization reads contiguous memory that LLVM can vectorize. The helpers are
# inlined into the kernels (a call that is not inlined costs a call and reference
# counts per row).
def is_none_type(t) -> bool:
    return isinstance(t, (types.NoneType, types.Omitted)) or t is None


def row(rows, r):
    """Row ``r`` of ``rows`` as ``(idx, val, y)``; ``idx`` is None for dense rows."""
    raise NotImplementedError("row() is compiled inside kernels only")


@inline_overload(row)
def _row(rows, r):
    if is_none_type(rows.types[1]):
        return lambda rows, r: (None, rows.data[r], rows.y[r])

    def sparse(rows, r):
        lo, hi = rows.indptr[r], rows.indptr[r + 1]
        return rows.indices[lo:hi], rows.data[lo:hi], rows.y[r]

    return sparse


@jit(fastmath=REASSOC)
def n_rows(rows):
    """Number of rows of ``rows``."""
    return rows.y.shape[0]


def col(idx, a):
    """The column of the ``a``-th stored value of a row (``a`` itself for dense rows)."""
    raise NotImplementedError("col() is compiled inside kernels only")


@inline_overload(col)
def _col(idx, a):
    if is_none_type(idx):
        return lambda idx, a: a
    return lambda idx, a: idx[a]


def sparse_dot(dense: np.ndarray, idx: np.ndarray | None, val: np.ndarray) -> float:
    r""":math:`a \cdot x` for the dense vector a and the row x given by ``idx``, ``val``.

    ``idx`` None: the row is dense.
    """
    raise NotImplementedError("sparse_dot() is compiled inside kernels only")


@inline_overload(sparse_dot)
def _sparse_dot(dense, idx, val):
    if is_none_type(idx):

        def dense_dot(dense, idx, val):
            acc = 0.0
            for a in range(val.shape[0]):
                acc += dense[a] * val[a]
            return acc

        return dense_dot

    def sparse_dot(dense, idx, val):
        acc = 0.0
        for a in range(idx.shape[0]):
            acc += dense[idx[a]] * val[a]
        return acc

    return sparse_dot


def sparse_axpy(dense, coef, idx, val):
    """``dense += coef * x`` for the row ``x`` given by ``idx``, ``val`` (``idx`` None: dense)."""
    raise NotImplementedError("sparse_axpy() is compiled inside kernels only")


@inline_overload(sparse_axpy)
def _sparse_axpy(dense, coef, idx, val):
    if is_none_type(idx):

        def dense_axpy(dense, coef, idx, val):
            for a in range(val.shape[0]):
                dense[a] += coef * val[a]

        return dense_axpy

    def sparse_axpy(dense, coef, idx, val):
        for a in range(idx.shape[0]):
            dense[idx[a]] += coef * val[a]

    return sparse_axpy


@jit
def squared_norm(val):
    """``||x||^2`` of a row from its stored values."""
    acc = 0.0
    for a in range(val.shape[0]):
        acc += val[a] * val[a]
    return acc


@jit
def count_nonzero(u):
    """The number of non-zeros of ``u``."""
    n = 0
    for i in range(u.shape[0]):
        n += u[i] != 0.0
    return n


@jit(inline="always")
def prefetch_rows(array, idx):
    """:func:`prefetch` rows ``idx`` of ``array`` (axis 0), every cache line of each
    (:func:`prefetch_span` when a row can straddle lines: SPAM's ``rates_``, 24 bytes
    a row, at 2 rows of 8; OPAUC's sketch rows of 400 bytes)."""
    step = array.strides[0]
    if step % 64 == 0 or 64 % step == 0:  # (rows that begin and end on line bounds)
        for q in range(idx.shape[0]):
            start = idx[q] * step
            for b in range(0, step, 64):
                prefetch(array, start + b)
    else:
        for q in range(idx.shape[0]):
            prefetch_span(array, idx[q] * step, step)


#: :func:`prefetch_row_of` prefetches arrays of at least this many bytes: below it
#: they stay in the caches and the hints cost instructions for nothing (measured on
#: the O(k) learners at d = 2,000 and 10^6, ``benchmarks/bench_highdim.py --learners``,
#: reported in docs/benchmarks.md).
PREFETCH_MIN_BYTES = 4 << 20


def prefetch_row_of(array, rows, r):
    """:func:`prefetch_rows` of ``array`` at the columns of row ``r`` of ``rows``, when
    ``r`` is a row of a sparse chunk and ``array`` holds at least
    :data:`PREFETCH_MIN_BYTES` (nothing for dense rows, past the last row, or for an
    array the caches hold): a kernel visiting rows of a large array by column asks for
    the next example's while it works on the current one. Changes no result."""
    raise NotImplementedError("prefetch_row_of() is compiled inside kernels only")


@inline_overload(prefetch_row_of)
def _prefetch_row_of(array, rows, r):
    if is_none_type(rows.types[1]):
        return lambda array, rows, r: None

    def sparse(array, rows, r):
        if array.nbytes >= PREFETCH_MIN_BYTES and r + 1 < rows.indptr.shape[0]:
            prefetch_rows(array, rows.indices[rows.indptr[r] : rows.indptr[r + 1]])

    return sparse
