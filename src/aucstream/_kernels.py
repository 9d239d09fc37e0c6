"""Small compiled pieces shared by the learners' kernels, written once.

Every per-example kernel reads a row as ``(idx, val)``: the column indices and values
of one CSR row (``indices[lo:hi]``, ``data[lo:hi]``). The helpers here are the only
sparse dot product and sparse axpy in the package.
"""

from __future__ import annotations

import numba as nb

__all__ = ["sparse_dot", "sparse_axpy", "squared_norm", "SCALE_MIN", "SCALE_MAX"]

#: Lazily scaled weights ``w = sigma * u`` fold sigma into u (an O(d) pass) when sigma
#: leaves [SCALE_MIN, SCALE_MAX], before u's entries can lose precision or overflow.
SCALE_MIN, SCALE_MAX = 1e-9, 1e9


@nb.njit(cache=True)
def sparse_dot(dense, idx, val):
    """``dense . x`` for the sparse row ``x`` given by ``idx``, ``val``."""
    acc = 0.0
    for a in range(idx.shape[0]):
        acc += dense[idx[a]] * val[a]
    return acc


@nb.njit(cache=True)
def sparse_axpy(dense, coef, idx, val):
    """``dense += coef * x`` for the sparse row ``x`` given by ``idx``, ``val``."""
    for a in range(idx.shape[0]):
        dense[idx[a]] += coef * val[a]


@nb.njit(cache=True)
def squared_norm(val):
    """``||x||^2`` of a row from its stored values."""
    acc = 0.0
    for a in range(val.shape[0]):
        acc += val[a] * val[a]
    return acc
