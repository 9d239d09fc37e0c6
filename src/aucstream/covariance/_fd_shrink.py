"""The shrink of frequent directions (:mod:`aucstream.covariance._fd`): its matrix and
its products.

- :func:`fd_shrink_index` and :func:`_shrink_matrix`: which singular value a shrink
  subtracts, and the tau x m matrix ``M`` with ``Z M = U sqrt(max(S^2 - s_l^2, 0))``,
  from the eigendecomposition of the maintained Gram matrix (:func:`_eigh`);
- :func:`_fd_shrink_rows` (with :func:`aucstream._blas.one_blas_thread`) and :func:`_fd_settle`: the
  product ``Z <- Z M`` over the rows of the support, in blocks, and the fold of a
  centered sketch's pending rank-one part;
- :func:`defer_capacity`, :func:`_fd_catch_up`, :func:`_fd_deferred_dot` and
  :func:`_fd_deferred_dump`: deferred shrinks, the history that brings a row of the
  sketch up to date only when an example reads it (module docstring of
  :mod:`aucstream.covariance._fd`).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg

from .._kernels import jit
from ._base import borrowing_njit, symmetrize

__all__ = ["DEFER_CAPACITY", "defer_capacity", "fd_shrink_index"]


@borrowing_njit
def _fd_settle(sketch, sums, beta, rows):
    """``sketch[i] -= sums[i] beta`` for the listed rows."""
    tau = sketch.shape[1]
    for t in range(rows.shape[0]):
        i = rows[t]
        si = sums[i]
        for k in range(tau):
            sketch[i, k] -= si * beta[k]


#: Rows of Z per block of the shrink's product (:func:`_fd_shrink_rows`): a block of
#: 256 x tau float64 rows (100 kB at tau = 50) and its product stay in the L2 cache.
_SHRINK_BLOCK = 256


@jit
def _fd_shrink_rows(sketch, sums, beta, rows, M, dump_coef, dump_out, dump, dump_sum=0.0):
    """``Z[i] <- Z[i] M`` (zeros after the m new columns) for the listed rows, where
    ``Z[i] = sketch[i] - sums[i] beta`` before and ``sketch[i]`` after; with ``dump``,
    first ``dump_out[i] += dump_sum * sums[i]``, then ``dump_out[i] += Z[i] . dump_coef``.
    O(len(rows) tau m).

    The rows are gathered (in float64) into blocks of :data:`_SHRINK_BLOCK`, whose
    product with M is one BLAS ``dgemm`` each (numba's ``np.dot``); the caller limits
    BLAS to one thread (:func:`aucstream._blas.one_blas_thread`), so the result only depends on the
    rows' positions in ``rows``, never on the thread count.
    """
    tau = sketch.shape[1]
    m = M.shape[1]
    block = min(_SHRINK_BLOCK, max(rows.shape[0], 1))
    old = np.empty((block, tau))
    new = np.empty((block, m))
    pending = False
    for k in range(tau):
        if beta[k] != 0.0:
            pending = True
    n = rows.shape[0]
    for lo in range(0, n, block):
        b = min(block, n - lo)
        for t in range(b):
            i = rows[lo + t]
            si = sums[i]
            if pending:
                for k in range(tau):
                    old[t, k] = sketch[i, k] - si * beta[k]
            else:
                for k in range(tau):
                    old[t, k] = sketch[i, k]
            if dump:
                if dump_sum != 0.0:
                    dump_out[i] += dump_sum * si
                s = 0.0
                for k in range(tau):
                    s += old[t, k] * dump_coef[k]
                dump_out[i] += s
        if m == 0:
            pass
        elif b == block:
            np.dot(old, M, new)
        else:
            new[:b] = np.dot(old[:b], M)
        for t in range(b):
            i = rows[lo + t]
            for j in range(m):
                sketch[i, j] = new[t, j]
            for j in range(m, tau):
                sketch[i, j] = 0.0


#: At most this many shrinks are deferred (``defer_P_`` holds one tau x tau matrix
#: more): then every row of the support is brought up to date.
DEFER_CAPACITY = 64


def defer_capacity(n_features: int, sketch_size: int) -> int:
    """How many shrinks a sketch defers: :data:`DEFER_CAPACITY`, fewer when d is
    small, so that the history ((H + 1) tau^2 numbers) stays within 1/16 of the d x
    tau sketch, and none (0: every shrink passes over the support at once, and the
    history and ``version_`` are empty) below 2."""
    cap = min(DEFER_CAPACITY, n_features // (16 * sketch_size))
    return cap if cap >= 2 else 0


@jit
def _fd_catch_up(sketch, sums, version, rows, P, q, dw, dc, base, now, v_out, mark):
    """Bring the listed rows of the sketch (and ``v_out``) to shrink ``now``.

    Row i is at shrink ``h = max(version[i], base)`` (``base + h'`` below); with
    ``y = sketch[i]``, ``s = sums[i]`` and ``h' = h - base`` it becomes
    ``y P[h'] - s q[h']`` and ``v_out[i]`` gains ``y . dw[h'] - s dc[h']``
    (:class:`FrequentDirectionsCovariance`, deferred shrinks). With ``mark``,
    ``version[i] = now`` (so repeated rows are brought once); without, the caller
    makes ``now`` the base (all of the support, distinct rows). O(len(rows) tau^2)
    at most; rows already at ``now`` cost O(1).
    """
    tau = sketch.shape[1]
    y = np.empty(tau)
    acc = np.empty(tau)
    for t in range(rows.shape[0]):
        i = rows[t]
        h = max(version[i], base)
        if h >= now:
            continue
        if mark:
            version[i] = now
        h -= base
        si = sums[i]
        nonzero = si != 0.0
        for k in range(tau):
            y[k] = sketch[i, k]
            if y[k] != 0.0:
                nonzero = True
        if not nonzero:
            continue  # a row outside the support: zero before and after
        dot = 0.0
        for k in range(tau):
            dot += y[k] * dw[h, k]
        v_out[i] += dot - si * dc[h]
        for j in range(tau):
            acc[j] = -si * q[h, j]
        for k in range(tau):
            a = y[k]
            if a != 0.0:
                for j in range(tau):
                    acc[j] += a * P[h, k, j]
        for j in range(tau):
            sketch[i, j] = acc[j]


@jit
def _fd_deferred_dot(sketch, sums, version, rows, Pp, qp, base, out):
    """``out[i] = Z[i] . p`` for the listed rows, from ``Pp[h'] = P[h'] p`` and
    ``qp[h'] = q[h'] . p`` (see :func:`_fd_catch_up`; the pending ``beta`` apart)."""
    tau = sketch.shape[1]
    for t in range(rows.shape[0]):
        i = rows[t]
        h = max(version[i], base) - base
        acc = -sums[i] * qp[h]
        for k in range(tau):
            acc += sketch[i, k] * Pp[h, k]
        out[i] = acc


@jit
def _fd_deferred_dump(sketch, sums, version, rows, dw, dc, base, out):
    """``out[i] += y . dw[h'] - s dc[h']``: the part of :func:`_fd_catch_up`'s
    ``v_out`` update still pending, without bringing any row."""
    tau = sketch.shape[1]
    for t in range(rows.shape[0]):
        i = rows[t]
        h = max(version[i], base) - base
        acc = 0.0
        for k in range(tau):
            acc += sketch[i, k] * dw[h, k]
        out[i] += acc - sums[i] * dc[h]


def fd_shrink_index(shrink: str | int, sketch_size: int) -> int:
    """The 1-based index l whose squared singular value frequent directions subtracts.

    ``"half"``: floor(tau/2) (G16 Alg. 2); ``"ceil_0.9"``: ceil(0.9 tau) (the authors'
    code); an int l with 1 <= l <= tau.
    """
    if shrink == "half":
        ell = sketch_size // 2
    elif shrink == "ceil_0.9":
        ell = math.ceil(0.9 * sketch_size)
    elif isinstance(shrink, (int, np.integer)) and not isinstance(shrink, bool):
        ell = int(shrink)
    else:
        raise ValueError(f"shrink must be 'half', 'ceil_0.9' or an int, got {shrink!r}")
    if not 1 <= ell <= sketch_size:
        raise ValueError(f"shrink index {ell} is outside 1..{sketch_size}")
    return ell


def _eigh(gram: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.linalg.eigh`` of a small symmetric matrix, through scipy's ``dsyevd`` (the
    same LAPACK driver) when it is finite: numpy's call of it can be many times slower
    for a small matrix when its BLAS threads compete for busy cores."""
    if not np.isfinite(gram).all():
        return np.linalg.eigh(gram)  # as before (NaN out, for the divergence check)
    return scipy.linalg.eigh(gram, driver="evd", check_finite=False)


def _shrink_matrix(gram: np.ndarray, ell: int) -> np.ndarray:
    """``M`` (tau x m) with ``Z M = U sqrt(max(S^2 - s_l^2, 0))`` (non-zero columns only).

    From the eigendecomposition of ``G = Z^T Z = V S^2 V^T``; eigenvalues at or below
    ``max(s_l^2, tau eps s_1^2)`` give zero columns, so m <= l - 1.
    """
    lam, V = _eigh(symmetrize(gram))
    lam, V = lam[::-1], V[:, ::-1]
    top = max(float(lam[0]), 0.0)
    delta = max(float(lam[ell - 1]), 0.0)
    floor = max(delta, gram.shape[0] * np.finfo(np.float64).eps * top)
    keep = lam > floor
    m = int(np.count_nonzero(keep))  # a prefix, since lam is sorted
    factors = np.sqrt(np.maximum(1.0 - delta / lam[:m], 0.0))
    return np.ascontiguousarray(V[:, :m] * factors)
