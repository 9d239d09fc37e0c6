r"""What the d x tau sketches share: randomized, hashed and frequent directions.

A low-rank summary estimates the scatter by :math:`Z Z^\top` with a sketch
:math:`Z \in \mathbb R^{d\times\tau}`, stored row-major (``sketch_[i]`` is the
tau-vector of feature i), so adding an example with k non-zeros touches k rows:
O(k tau). It also maintains the Gram matrix :math:`G = Z^\top Z` (O(tau^2) per
example), which frequent directions needs for its shrink and OPAUC's compiled kernel
for its O(k tau + tau^2) step (:mod:`aucstream.opauc`).

Interleaved pair: OPAUC keeps its two classes' linear sketches as the two halves of
one d x 2 tau array (:func:`aucstream.covariance.sketch_pair`; row i is row i of
:math:`Z_0` followed by row i of :math:`Z_1`), each summary's ``sketch_`` a view of its
half, so that the per-example pass reads one row (one random memory access) per
feature for both classes (:func:`sketch_pair_tdot`, :func:`sketch_pair_tdot_add`: the
same numbers as :func:`sketch_tdot` and :func:`sketch_add_outer` on each sketch
apart). Everything else sees two d x tau sketches with contiguous rows;
pickled and saved copies hold them apart.

The covariance estimate is :math:`\hat\Gamma v = Z\varphi - s\,\psi` with coefficients
that depend on how the class mean is removed (:func:`center_terms`; the ``CENTER_*``
codes are listed in the package docstring).

Precision: with ``dtype=np.float32`` the sketch Z (the d x tau array, the only one
that grows with d) is stored in single precision, halving the summary's memory and
the traffic of every O(d tau) pass over it; the count, the sum, the draws' sum, the
Gram matrix and frequent directions' small products stay float64. The compiled
updates form each product in float64 and round it once when storing it into Z; the
O(d tau) products with Z (:func:`sketch_tmatvec`, :func:`sketch_matvec`,
:func:`sketch_cross`) accumulate in float64. The Gram matrix is updated from the
exact float64 changes, so between two ``refresh`` calls it differs from the Gram
matrix of the rounded Z by that rounding (relative :math:`\epsilon_{32} \approx
6\cdot10^{-8}` per update); ``refresh`` recomputes it from the stored Z.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from .._kernels import jit
from .._typing import DType, Matrix
from ._base import (
    CovarianceSummary,
    borrowing_njit,
    borrowing_step,
    check_dtype,
    check_n_features,
    check_sketch_size,
    symmetrize,
)
from ._checks import check_array, check_count, check_empty, check_int_setting, check_weight

__all__ = [
    "CENTERED_SKETCH",
    "CENTER_EXACT",
    "CENTER_G13",
    "CENTER_G16",
    "LowRankArrays",
    "center_terms",
    "single_nonzero",
    "sketch_add_outer",
    "sketch_cross",
    "sketch_matvec",
    "sketch_pair_tdot",
    "sketch_pair_tdot_add",
    "sketch_tdot",
    "sketch_tmatvec",
]

#: How a low-rank estimate removes the class mean (module docstring).
CENTER_G16, CENTER_G13, CENTER_EXACT, CENTERED_SKETCH = 0, 1, 2, 3

#: The arrays of a low-rank summary as the compiled functions take them. Every kind
#: fills every field: ``asum`` (the draws' sum u) belongs to the linear sketches, the
#: fields from ``nfill`` to ``beta`` to frequent directions; a kind without a field
#: gets a small unused array of the right type, so both kinds share one compiled
#: kernel. ``weight`` is the total weight W of the examples (T without forgetting).
LowRankArrays = namedtuple(
    "LowRankArrays",
    [
        "count",
        "sums",
        "sketch",
        "gram",
        "asum",
        "nfill",
        "frob",
        "seen",
        "support",
        "n_support",
        "zs",
        "ss",
        "beta",
        "weight",
    ],
)


@borrowing_step
def sketch_tdot(sketch, idx, val, out):
    """Write ``Z^T x`` into ``out`` (Z row-major, d x tau); O(k tau). Zeros are skipped."""
    out[:] = 0.0
    for a in range(idx.shape[0]):
        v, i = val[a], idx[a]
        if v != 0.0:
            for j in range(out.shape[0]):  # reads row i of Z
                out[j] += v * sketch[i, j]


@borrowing_step
def _next_nonzero(val, a):
    """The first position from ``a`` on where ``val`` is not zero (its length if none)."""
    while a < val.shape[0] and val[a] == 0.0:
        a += 1
    return a


@borrowing_step
def sketch_pair_tdot(pair, idx, val, out):
    r"""Write :math:`Z_0^\top x` into ``out[0]`` and :math:`Z_1^\top x` into ``out[1]``
    for two d x tau sketches interleaved in ``pair`` (d x 2 tau: row i is row i of
    :math:`Z_0` followed by row i of :math:`Z_1`, :func:`aucstream.covariance.sketch_pair`):
    one read of one row per feature, the sums of :func:`sketch_tdot` on each sketch
    in its order (the same numbers); O(k tau).

    Two features at a time: each entry of ``out`` takes the two products one after
    the other (the same additions in the same order as one feature at a time) with
    one load and one store of it (the loop's bound is the sketch size, unknown to the
    compiler, so the sums can not stay in registers across features). Each row is
    taken as its two halves (slices, whose loops vectorize; indexing one row at two
    offsets made them several times slower)."""
    out[:] = 0.0
    out0, out1 = out[0], out[1]
    tau = out0.shape[0]
    a = _next_nonzero(val, 0)
    while a < idx.shape[0]:
        b = _next_nonzero(val, a + 1)
        va, row = val[a], pair[idx[a]]
        ra0, ra1 = row[:tau], row[tau:]
        if b < idx.shape[0]:
            vb, row = val[b], pair[idx[b]]
            rb0, rb1 = row[:tau], row[tau:]
            for j in range(tau):  # reads rows idx[a] and idx[b] of the pair
                out0[j] = (out0[j] + va * ra0[j]) + vb * rb0[j]
                out1[j] = (out1[j] + va * ra1[j]) + vb * rb1[j]
            a = _next_nonzero(val, b + 1)
        else:
            for j in range(tau):
                out0[j] += va * ra0[j]
                out1[j] += va * ra1[j]
            a = b


@borrowing_step
def sketch_pair_tdot_add(pair, idx, val, out, c, draw):
    r""":func:`sketch_pair_tdot` (``out``: :math:`Z_0^\top x`, :math:`Z_1^\top x`
    before the update) and then :math:`Z_c \mathrel{+}= x a^\top` (``draw`` = a) on
    the interleaved ``pair``, in the same pass over its rows: each row of
    :math:`Z_c` is written while it is in the cache, the same numbers as
    :func:`sketch_add_outer` after :func:`sketch_pair_tdot` (x's features are
    distinct, so no row is read after it was written). O(k tau)."""
    tau = out.shape[1]
    h = single_nonzero(draw)
    if h != -2:  # a hashed draw (one non-zero) or none: one entry per row, or nothing
        sketch_pair_tdot(pair, idx, val, out)
        if h >= 0:
            column, ah = c * tau + h, draw[h]
            for q in range(idx.shape[0]):
                v = val[q]
                if v != 0.0:
                    pair[idx[q], column] += v * ah
        return
    out[:] = 0.0
    own, other = c * tau, (1 - c) * tau
    out_own, out_other = out[c], out[1 - c]
    a = _next_nonzero(val, 0)
    while a < idx.shape[0]:
        b = _next_nonzero(val, a + 1)
        va, row = val[a], pair[idx[a]]
        ra, sa = row[own : own + tau], row[other : other + tau]
        if b < idx.shape[0]:
            vb, row = val[b], pair[idx[b]]
            rb, sb = row[own : own + tau], row[other : other + tau]
            for j in range(tau):
                za, zb = ra[j], rb[j]
                out_own[j] = (out_own[j] + va * za) + vb * zb
                out_other[j] = (out_other[j] + va * sa[j]) + vb * sb[j]
                ra[j] = za + va * draw[j]
                rb[j] = zb + vb * draw[j]
            a = _next_nonzero(val, b + 1)
        else:
            for j in range(tau):
                za = ra[j]
                out_own[j] += va * za
                out_other[j] += va * sa[j]
                ra[j] = za + va * draw[j]
            a = b


@borrowing_step
def single_nonzero(a):
    """The index of the only non-zero of ``a``; -1 if all are zero, -2 if more are.

    Hashed draws and frequent directions' columns are such unit vectors: updates by
    ``a`` then touch one row or column, not tau. Adding a product with a zero factor
    changes nothing but the sign of a zero, so skipping those terms gives the same
    numbers (for finite operands)."""
    found = -1
    for j in range(a.shape[0]):
        if a[j] != 0.0:
            if found >= 0:
                return -2
            found = j
    return found


@borrowing_step
def gram_add_rank2(gram, ztx, a, xx, u):
    r"""The Gram matrix of a linear sketch after it gains :math:`x a^\top` (a dense
    draw): :math:`G \mathrel{+}= (Z^\top x) a^\top + a (Z^\top x)^\top + \|x\|^2 a
    a^\top`, as the symmetric rank-2 update :math:`G \mathrel{+}= u a^\top + a
    u^\top` with :math:`u = Z^\top x + (\|x\|^2/2)\,a` (written into ``u``, a work
    vector of tau values): two products and two additions per entry instead of four
    and three (a change by rounding only). Entry (i, j) adds the same two products as
    (j, i) in the other order, and floating-point addition commutes, so G stays
    exactly symmetric (the low-rank OPAUC kernel reads its rows for its columns).
    O(tau^2)."""
    half = 0.5 * xx
    for i in range(u.shape[0]):
        u[i] = ztx[i] + half * a[i]
    for i in range(u.shape[0]):
        row, ui, ai = gram[i], u[i], a[i]
        for j in range(u.shape[0]):  # rows of G: the loop vectorizes
            row[j] += ui * a[j] + ai * u[j]


@borrowing_step
def sketch_add_outer(sketch, idx, val, a):
    """``Z += x a^T`` for x given by its non-zeros; O(k tau), O(k) for a with one
    non-zero (:func:`single_nonzero`). Zeros are skipped."""
    h = single_nonzero(a)
    if h == -1:
        return
    for q in range(idx.shape[0]):
        v, i = val[q], idx[q]
        if v != 0.0:
            if h >= 0:
                sketch[i, h] += v * a[h]
            else:
                for j in range(a.shape[0]):  # writes row i of Z
                    sketch[i, j] += v * a[j]


@borrowing_njit
def center_terms(code, count, asum, zv, cv, phi):
    r"""Coefficients of :math:`\hat\Gamma v = Z\varphi - s\,\psi` for a low-rank
    summary of ``count`` > 0 examples: write :math:`\varphi` into ``phi`` and return
    :math:`\psi`.

    ``code`` is one of the ``CENTER_*`` constants, ``asum`` the draws' sum u (linear
    sketches), ``zv`` = :math:`Z^\top v` and ``cv`` = :math:`c^\top v`. For
    ``CENTER_EXACT``,
    :math:`(Z - c u^\top)(Z^\top v - u\,c^\top v)/T = Z\varphi - s\,(u^\top\varphi)/T`.
    """
    inv_t = 1.0 / count
    if code == CENTER_EXACT:
        uq = 0.0
        for j in range(phi.shape[0]):
            qt = zv[j] - asum[j] * cv
            phi[j] = qt * inv_t
            uq += asum[j] * qt
        return uq * inv_t * inv_t
    for j in range(phi.shape[0]):
        phi[j] = zv[j] * inv_t
    if code == CENTER_G16:
        return cv * inv_t
    if code == CENTER_G13:
        uu = 0.0
        for j in range(asum.shape[0]):
            uu += asum[j] * asum[j]
        return uu * inv_t * inv_t * cv * inv_t
    return 0.0


#: Rows of a float32 sketch converted to float64 at a time by the products below
#: (2048 x tau doubles: small enough to stay in cache, large enough for BLAS).
_BLOCK_ROWS = 2048


def _blocks(Z: np.ndarray):
    """``(rows, float64 copy of Z[rows])`` over blocks of ``_BLOCK_ROWS`` rows."""
    for lo in range(0, Z.shape[0], _BLOCK_ROWS):
        rows = slice(lo, lo + _BLOCK_ROWS)
        yield rows, Z[rows].astype(np.float64)


def sketch_tmatvec(Z: np.ndarray, v: np.ndarray) -> np.ndarray:
    r""":math:`Z^\top v` (tau-vector, float64) for a d x tau sketch Z.

    A float64 Z gives ``Z.T @ v``; a float32 Z is converted block by block, so the
    sum over d accumulates in float64 without a d x tau float64 copy of Z.
    """
    if Z.dtype == np.float64:
        return Z.T @ v
    out = np.zeros(Z.shape[1])
    for rows, block in _blocks(Z):
        out += block.T @ v[rows]
    return out


def sketch_matvec(Z: np.ndarray, p: np.ndarray) -> np.ndarray:
    """:math:`Z p` (d-vector, float64) for a d x tau sketch Z (``Z @ p`` for float64;
    float64 products block by block for float32)."""
    if Z.dtype == np.float64:
        return Z @ p
    out = np.empty(Z.shape[0])
    for rows, block in _blocks(Z):
        out[rows] = block @ p
    return out


@jit(fastmath={"contract"})
def _cross32(A, B, out):
    """``out += A^T B`` for float32 A, B (d x tau), summed in float64 row by row;
    zero entries of A (the rows of features never seen) are skipped."""
    for i in range(A.shape[0]):
        a, b = A[i], B[i]
        for j in range(a.shape[0]):
            aj = np.float64(a[j])
            if aj != 0.0:
                for k in range(b.shape[0]):
                    out[j, k] += aj * b[k]


def sketch_cross(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    r""":math:`A^\top B` (tau x tau, float64) for two d x tau sketches: ``A.T @ B``
    when both are float64; for float32 sketches, float64 sums over the rows
    (compiled: a float64 copy would double the memory, and BLAS has no float32
    product that accumulates in float64)."""
    if A.dtype == np.float64 and B.dtype == np.float64:
        return A.T @ B
    out = np.zeros((A.shape[1], B.shape[1]))
    if A.dtype == np.float32 and B.dtype == np.float32:  # (rows may be views: sketch_pair)
        _cross32(A, B, out)
        return out
    for lo in range(0, A.shape[0], _BLOCK_ROWS):  # mixed precision (inspection only)
        out += A[lo : lo + _BLOCK_ROWS].astype(np.float64).T @ B[lo : lo + _BLOCK_ROWS]
    return out


class _LowRankSummary(CovarianceSummary):
    r"""Common state and interface of the d x tau sketches.

    Attributes
    ----------
    count_ : ndarray of shape (1,), int64
        Number of examples T.
    weight_ : ndarray of shape (1,)
        Their total weight W: T, but for the linear sketches of a forgetting learner
        (:meth:`_LinearSketch.scale`), whose examples weigh :math:`\omega_i`.
    sum_ : ndarray of shape (d,)
        :math:`s = \sum \omega_i x_i`.
    sketch_ : ndarray of shape (d, tau), of ``dtype``
        Z, row-major (row i belongs to feature i); float32 or float64 (module
        docstring).
    gram_ : ndarray of shape (tau, tau)
        :math:`Z^\top Z`, maintained incrementally.
    """

    centering: Any
    asum_: Any

    #: Whether examples fill the sketch's columns one by one, so that the sketch must
    #: be shrunk when full (frequent directions), rather than being added to all
    #: columns at once through random draws (the linear sketches).
    fills_columns: ClassVar[bool] = False

    def __init__(
        self,
        n_features: int,
        sketch_size: int = 50,
        minimum_size: int = 1,
        dtype: DType = np.float64,
    ):
        self.n_features = check_n_features(n_features)
        self.sketch_size = check_sketch_size(sketch_size, minimum_size)
        dtype = check_dtype(dtype)
        self.count_ = np.zeros(1, dtype=np.int64)
        self.weight_ = np.zeros(1)
        self.sum_ = np.zeros(self.n_features)
        self.sketch_ = np.zeros((self.n_features, self.sketch_size), dtype=dtype)
        self.gram_ = np.zeros((self.sketch_size, self.sketch_size))

    #: Members that model files written before they existed lack.
    _state_added_later: ClassVar[tuple[str, ...]] = ("weight_",)

    def _upgrade_state(self, missing: set) -> None:
        """A summary saved before weights: every example weighed 1, W = T."""
        if "weight_" in missing:
            self.weight_ = self.count_.astype(np.float64)

    @property
    def dtype(self) -> np.dtype:
        """Storage type of the sketch (float64 or float32)."""
        return self.sketch_.dtype

    @property
    def center_code(self) -> int:  # pragma: no cover - abstract
        """The ``CENTER_*`` constant of this summary's estimate."""
        raise NotImplementedError

    def draws(self, rng: np.random.Generator, n: int) -> np.ndarray:  # pragma: no cover
        """The random vectors of n examples, shape (n, tau), or (0, tau) if none."""
        raise NotImplementedError

    def _asum(self) -> np.ndarray:
        """The draws' sum u (zeros for a kind without draws)."""
        return np.zeros(self.sketch_size)

    def _fd_fields(self) -> tuple:
        """The frequent-directions fields of :data:`LowRankArrays` (unused arrays here)."""
        tau = self.sketch_size
        return (
            np.zeros(1, dtype=np.int64),
            np.zeros(1),
            np.zeros(1, dtype=np.bool_),
            np.zeros(1, dtype=np.int64),
            np.zeros(1, dtype=np.int64),
            np.zeros(tau),
            np.zeros(1),
            np.zeros(tau),
        )

    def arrays(self) -> LowRankArrays:
        """:data:`LowRankArrays` of this summary (its own arrays, updated in place)."""
        return LowRankArrays(  # type: ignore[call-arg]  # (_fd_fields: the FD fields)
            self.count_,
            self.sum_,
            self.sketch_,
            self.gram_,
            self._asum(),
            *self._fd_fields(),
            self.weight_,
        )

    def _check_lowrank_state(self, codes: dict, minimum_size: int = 1) -> tuple[int, int, int]:
        """What every low-rank summary checks of a loaded state (:mod:`._checks`):
        ``n_features``, ``sketch_size`` (at least ``minimum_size``), the count, the
        shapes of the common arrays, and ``centering`` (a key of ``codes``); returns
        (d, tau, T)."""
        d = check_int_setting("n_features", self.n_features, 1)
        tau = check_int_setting("sketch_size", self.sketch_size, minimum_size)
        t = check_count(self)
        check_array(self, "sum_", (d,), "f")
        check_empty(self, t, ("sum_",))
        check_weight(self, t)
        check_array(self, "sketch_", (d, tau), "f")
        check_array(self, "gram_", (tau, tau), "f")
        if not isinstance(self.centering, str) or self.centering not in codes:
            raise ValueError(f"centering = {self.centering!r} is not one of {tuple(codes)}")
        return d, tau, t

    #: The arrays indexed by feature that adding examples writes only in the rows
    #: of their non-zero features (:meth:`row_state`).
    _row_arrays: ClassVar[tuple[str, ...]] = ("sketch_", "sum_")

    def row_state(self) -> tuple:
        """The arrays of O(d) or more rows, indexed by feature, that adding examples
        writes only in their rows: for a learner's undo log
        (:meth:`aucstream._base.BaseStreamingAUC._row_logged_state`)."""
        return tuple(getattr(self, name) for name in self._row_arrays)

    def bounded_rows(self) -> tuple:
        r"""Those of :meth:`row_state` whose entries adding checked examples keeps
        finite: the sum :math:`s` (float64), whose entries are sums of at most
        :math:`T < 2^{63}` example values each below :math:`1.4\cdot10^{154}` (the
        input checks refuse a row whose squared norm overflows:
        :func:`aucstream._chunks.check_magnitude`), so below :math:`10^{174}`. A learner
        need not check their rows after a kernel call
        (:meth:`aucstream._base.BaseStreamingAUC._bounded_state`)."""
        return (self.sum_,)

    def rows_only(self, n_inserts: int, refresh: bool) -> tuple:
        """Those of :meth:`row_state` that adding ``n_inserts`` examples writes only in
        their rows, also when :meth:`refresh` runs in between if ``refresh``: all of
        them for the linear sketches (:meth:`refresh` writes the Gram matrix only)."""
        return self.row_state()

    def sketch_matrix(self) -> np.ndarray:
        """The sketch Z (d x tau): ``sketch_`` itself for the linear sketches."""
        return self.sketch_

    def sketch_dot(self, p: np.ndarray) -> np.ndarray:
        """:math:`Z p` for a tau-vector p; O(d tau), no d x tau temporary."""
        return sketch_matvec(self.sketch_, p)

    @property
    def scatter(self) -> np.ndarray:
        r"""The estimate :math:`Z Z^\top` of :math:`\sum x_i x_i^\top` (forms it: d x d)."""
        Z = self.sketch_matrix().astype(np.float64, copy=False)
        return Z @ Z.T

    def scatter_matvec(self, v: ArrayLike) -> np.ndarray:
        r""":math:`Z (Z^\top v)`, the estimate of :math:`\sum_i x_i x_i^\top v`; O(d tau)."""
        v = self._vector(v)
        Z = self.sketch_matrix()
        return sketch_matvec(Z, sketch_tmatvec(Z, v))

    def scatter_inner(self, X: Matrix) -> float:
        r""":math:`\sum_t x_t^\top Z Z^\top x_t = \|X Z\|_F^2`; O(nnz(X) tau)."""
        return float(np.sum(np.square(X @ self.sketch_matrix().astype(np.float64, copy=False))))

    def scatter_frobenius_sq(self) -> float:
        r""":math:`\|Z Z^\top\|_F^2 = \|Z^\top Z\|_F^2`."""
        Z = self.sketch_matrix()
        return float(np.sum(np.square(sketch_cross(Z, Z))))

    @property
    def covariance(self) -> np.ndarray:
        """The d x d covariance estimate (forms it: for inspection)."""
        return np.column_stack([self.matvec(e) for e in np.eye(self.n_features)])

    def matvec(self, v: ArrayLike) -> np.ndarray:
        """The product ``Gamma v`` of the estimate, without forming it; O(d tau)."""
        v = self._vector(v)
        if self.count == 0:
            return np.zeros(self.n_features)
        Z = self.sketch_matrix()
        phi = np.empty(self.sketch_size)
        cv = float(self.mean @ v)
        psi = center_terms(
            self.center_code, self.total_weight, self._asum(), sketch_tmatvec(Z, v), cv, phi
        )
        return sketch_matvec(Z, phi) - self.sum_ * psi

    def refresh(self) -> None:
        """Recompute the maintained products from the sketch, exactly; O(d tau^2).

        Incremental updates of the Gram matrix accumulate rounding; learners call this
        at fixed positions of the stream (OPAUC's re-basing).
        """
        Z = self.sketch_matrix()
        self.gram_[:] = symmetrize(sketch_cross(Z, Z))

    def _check_merge(self, other) -> None:
        if type(other) is not type(self):
            raise TypeError(f"cannot merge {type(self).__name__} with {type(other).__name__}")
        self._check_dim(other.n_features)
        if other.sketch_size != self.sketch_size:
            raise ValueError(
                f"cannot merge sketches of sizes {self.sketch_size} and {other.sketch_size}"
            )
        if other.centering != self.centering:
            raise ValueError("cannot merge sketches with different centering")
        self._check_dtype(other)
