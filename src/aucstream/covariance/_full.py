r"""The exact summary in O(d^2) memory: :class:`FullCovariance`.

It keeps the "P-form" of the covariance: the sum :math:`s = \sum x_i` and the scatter
:math:`P = \sum x_i x_i^\top`, and computes :math:`\Gamma v = P v / T - c\,(c^\top v)`
with :math:`c = s/T`, never forming :math:`c c^\top`. Adding an example with k
non-zeros costs O(k^2), so sparse input is never densified; the product costs
O(d^2). In exact arithmetic this equals the recursion of G16 (§3, the text after
Alg. 1), :math:`\Gamma \leftarrow \Gamma + c_{old} c_{old}^\top - c c^\top + (x x^\top -
\Gamma - c_{old} c_{old}^\top)/T`, and merging two summaries is exact (add the sums).
We deviate from that recursion, which updates :math:`\Gamma` in place at O(d^2) per
example even for sparse x: the P-form is cheaper on sparse data and merges exactly,
at the price of a cancellation error of order :math:`\epsilon \|c\|^2` in float64,
negligible for scaled features. (G13 §3 prints a form of the recursion without the
:math:`-c_{old} c_{old}^\top/T` term, which is not the covariance.)

P is symmetric, so only its upper triangle is kept up to date and read: adding a
dense row updates d(d+1)/2 entries, one contiguous run per row of P, and
:math:`P v` reads each of them once (:func:`upper_matvec`), half the memory traffic
of a full rank-one update and product (BLAS ``dger`` and ``dgemv``). These two loops
are compiled with reassociation and contraction (:data:`TRIANGLE_MATH`), so that
LLVM vectorizes them: their results change by rounding only. Dense and sparse rows
add the same products to P; the product :math:`P v` is the same code for both.

With ``dtype=np.float32`` only P is stored in single precision (half the memory and
half the memory traffic of the O(d^2) loops, which are bound by it); the count, the
weight and the sum stay float64. Every product is formed in float64 and rounded once
when stored into P, and :math:`P v` accumulates in float64; what differs from float64
storage is that rounding of each entry of P at each addition (relative error of
order :math:`\sqrt T\,\epsilon_{32}` typically, at most :math:`T\epsilon_{32}`,
:math:`\epsilon_{32} \approx 6\cdot10^{-8}`; sums of integers stay exact up to
:math:`2^{24}`).
"""

from __future__ import annotations

from collections import namedtuple

import numba as nb
import numpy as np
import scipy.sparse as sp
from numba.extending import overload
from numpy.typing import ArrayLike

from .._chunks import csr_arrays
from .._kernels import _is_none
from ._base import (
    CovarianceSummary,
    add_example,
    add_rows,
    borrowing_njit,
    check_dtype,
    check_n_features,
    check_sample_weight,
    cov_from_scatter_product,
    cov_matvec,
    register,
)
from ._checks import (
    check_array,
    check_count,
    check_empty,
    check_int_setting,
    check_moments,
    check_weight,
)

__all__ = ["FullArrays", "FullCovariance", "full_add", "full_cov_matvec", "upper_matvec"]

#: The arrays of a :class:`FullCovariance` as its compiled functions take them.
FullArrays = namedtuple("FullArrays", ["count", "weight", "sums", "scatter"])


#: numba ``fastmath`` flags of the O(d^2) loops over the upper triangle: reassociation
#: (the sums of the product are evaluated in any order, so that LLVM vectorizes them)
#: and contraction (a multiply-add may be fused). Both change results by rounding
#: only; no finite-math or signed-zero assumption is made.
TRIANGLE_MATH = {"reassoc", "contract"}


@nb.njit(cache=True, _nrt=False, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _add_sparse(count, weight, sums, upper, idx, val, omega):
    """``P += omega x x^T`` on the upper triangle for a sparse row; O(k^2)."""
    count[0] += 1
    weight[0] += omega
    k = idx.shape[0]
    for a in range(k):
        i = idx[a]
        va = omega * val[a]  # exact when omega = 1
        sums[i] += va
        for b in range(a, k):
            j = idx[b]
            if i <= j:
                upper[i, j] += va * val[b]
            else:
                upper[j, i] += va * val[b]


@nb.njit(cache=True, _nrt=False, fastmath=TRIANGLE_MATH, inline="always")
def _add_row_from(row, va, val, lo, hi):
    """``row[j] += va * val[j]`` for j in [lo, hi): the one update of an entry of P
    (a loop counted from 0, which LLVM vectorizes)."""
    head, tail = row[lo:hi], val[lo:hi]
    for j in range(head.shape[0]):
        head[j] += va * tail[j]


@nb.njit(
    cache=True, _nrt=False, no_cpython_wrapper=True, no_cfunc_wrapper=True, fastmath=TRIANGLE_MATH
)
def _add_dense(count, weight, sums, upper, val, omega):
    """``P += omega x x^T`` on the upper triangle for a dense row; O(d^2 / 2).

    Row i of P, for each non-zero x_i, gains ``omega x_i x_j`` at the columns j >= i
    (the products of the sparse path, so both give the same summary, and rows of a
    zero x_i are not written: :meth:`FullCovariance.row_state`). The rows go four at
    a time: four non-zeros i0 < i1 < i2 < i3 update their rows up to column i3 one by
    one, then together over the columns from i3, so that each x_j read there serves
    four rows (1.5x faster than row by row at d = 784 on the benchmark machine). Each
    entry still receives the same single product, so P is the same bit for bit.
    """
    count[0] += 1
    weight[0] += omega
    d = val.shape[0]
    i = 0
    while i < d:
        # the next four rows of non-zero x_i (fewer at the end: one by one)
        i0 = i1 = i2 = i3 = d
        found = 0
        while i < d and found < 4:
            if val[i] != 0.0:
                if found == 0:
                    i0 = i
                elif found == 1:
                    i1 = i
                elif found == 2:
                    i2 = i
                else:
                    i3 = i
                found += 1
            i += 1
        if found < 4:  # the last rows, one by one
            for r in (i0, i1, i2):
                if r < d:
                    a = omega * val[r]  # exact when omega = 1
                    sums[r] += a
                    _add_row_from(upper[r], a, val, r, d)
            break
        a0, a1, a2, a3 = omega * val[i0], omega * val[i1], omega * val[i2], omega * val[i3]
        sums[i0] += a0
        sums[i1] += a1
        sums[i2] += a2
        sums[i3] += a3
        _add_row_from(upper[i0], a0, val, i0, i3)
        _add_row_from(upper[i1], a1, val, i1, i3)
        _add_row_from(upper[i2], a2, val, i2, i3)
        r0, r1, r2, r3 = upper[i0, i3:], upper[i1, i3:], upper[i2, i3:], upper[i3, i3:]
        tail = val[i3:]
        for j in range(tail.shape[0]):
            t = tail[j]
            r0[j] += a0 * t
            r1[j] += a1 * t
            r2[j] += a2 * t
            r3[j] += a3 * t


def full_add(arrays, idx, val, omega):
    """Add one example (non-zeros ``val`` at columns ``idx``; ``idx`` None: the dense
    row ``val``) of weight ``omega``: ``T += 1``, ``W += omega``, ``s += omega x``,
    ``P += omega x x^T`` on the upper triangle; O(k^2) (compiled code only)."""
    raise NotImplementedError("full_add is called from compiled code only")


@overload(full_add, jit_options={"cache": True})
def _full_add(arrays, idx, val, omega):
    if _is_none(idx):

        def dense(arrays, idx, val, omega):
            _add_dense(arrays.count, arrays.weight, arrays.sums, arrays.scatter, val, omega)

        return dense

    def sparse(arrays, idx, val, omega):
        _add_sparse(arrays.count, arrays.weight, arrays.sums, arrays.scatter, idx, val, omega)

    return sparse


@nb.njit(cache=True, _nrt=False, fastmath=TRIANGLE_MATH)
def upper_matvec(upper, v, out):
    r"""``out = P v`` for the symmetric P whose upper triangle is ``upper``: one pass
    over the triangle, O(d^2 / 2) reads.

    The rows go four at a time: the 4 x 4 diagonal block, then the four rows' entries
    right of it, each column j both a term of the four rows' dot products
    (:math:`j > i`) and of ``out[j]`` (the transposed entries), so that ``v[j]`` and
    ``out[j]`` are read and written once for four rows (1.9x faster than row by row
    at d = 784 on the benchmark machine); the last d mod 4 rows go one by one."""
    d = v.shape[0]
    for i in range(d):
        out[i] = 0.0
    blocked = d - d % 4
    for i in range(0, blocked, 4):
        v0, v1, v2, v3 = v[i], v[i + 1], v[i + 2], v[i + 3]
        p01, p02, p03 = upper[i, i + 1], upper[i, i + 2], upper[i, i + 3]
        p12, p13, p23 = upper[i + 1, i + 2], upper[i + 1, i + 3], upper[i + 2, i + 3]
        acc0 = upper[i, i] * v0 + p01 * v1 + p02 * v2 + p03 * v3
        acc1 = p01 * v0 + upper[i + 1, i + 1] * v1 + p12 * v2 + p13 * v3
        acc2 = p02 * v0 + p12 * v1 + upper[i + 2, i + 2] * v2 + p23 * v3
        acc3 = p03 * v0 + p13 * v1 + p23 * v2 + upper[i + 3, i + 3] * v3
        # slices from i + 4, so that the loop counts from 0 (LLVM vectorizes it)
        s = i + 4
        r0, r1, r2, r3 = upper[i, s:], upper[i + 1, s:], upper[i + 2, s:], upper[i + 3, s:]
        v_tail, out_tail = v[s:], out[s:]
        for j in range(v_tail.shape[0]):
            q0, q1, q2, q3 = r0[j], r1[j], r2[j], r3[j]
            vj = v_tail[j]
            acc0 += q0 * vj
            acc1 += q1 * vj
            acc2 += q2 * vj
            acc3 += q3 * vj
            out_tail[j] += q0 * v0 + q1 * v1 + q2 * v2 + q3 * v3
        out[i] += acc0
        out[i + 1] += acc1
        out[i + 2] += acc2
        out[i + 3] += acc3
    for i in range(blocked, d):
        vi = v[i]
        acc = upper[i, i] * vi
        row, v_tail, out_tail = upper[i, i + 1 :], v[i + 1 :], out[i + 1 :]
        for j in range(row.shape[0]):
            p = row[j]
            acc += p * v_tail[j]
            out_tail[j] += p * vi
        out[i] += acc


@borrowing_njit
def full_cov_matvec(arrays, v, out):
    """Write ``Gamma v = P v / W - c (c^T v)`` into ``out``; return ``c^T v``. O(d^2).

    ``out`` receives zeros when the summary is empty.
    """
    count, weight, sums, upper = arrays
    if count[0] == 0:
        out[:] = 0.0
        return 0.0
    upper_matvec(upper, v, out)
    return cov_from_scatter_product(weight, sums, v, out)


def _add_full(arrays, *args):
    full_add(arrays, *args)
    return True  # never out of room


register(add_example, (FullArrays,), _add_full)
register(cov_matvec, (FullArrays,), lambda arrays, *args: full_cov_matvec(arrays, *args))


class FullCovariance(CovarianceSummary):
    r"""Exact count, mean and covariance of a stream, in O(d^2) memory.

    Parameters
    ----------
    n_features : int
        Dimension d of the examples.
    dtype : {np.float64, np.float32}, default=np.float64
        Storage of the scatter ``scatter_`` (float32 halves its memory and the traffic
        of the O(d^2) update and product; module docstring); the count, weight and sum
        are float64 either way, and so is every accumulation.

    Attributes
    ----------
    count_ : ndarray of shape (1,), int64
        Number of examples T.
    weight_ : ndarray of shape (1,)
        Their total weight W (= T without example weights).
    sum_ : ndarray of shape (d,)
        :math:`s = \sum \omega_i x_i`.
    scatter_ : ndarray of shape (d, d), of ``dtype``
        The upper triangle (:math:`i \le j`) of :math:`P = \sum \omega_i x_i
        x_i^\top`; the strictly lower triangle is never read nor written (files of
        aucstream 0.1, which stored both triangles, load unchanged).

    Notes
    -----
    With example weights :math:`\omega_i` (``update(X, sample_weight)``) the summary
    holds the statistics of the weighted sample: mean :math:`c = s/W` and covariance
    :math:`P/W - c c^\top`; an integer weight m gives the summary of the example
    repeated m times (up to rounding) and a weight 0 leaves the summary unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.covariance import FullCovariance
    >>> X = np.random.default_rng(0).normal(size=(100, 3))
    >>> s = FullCovariance(3).update(X)
    >>> np.allclose(s.covariance, np.cov(X.T, bias=True))
    True
    >>> np.allclose(s.matvec(np.ones(3)), np.cov(X.T, bias=True) @ np.ones(3))
    True
    """

    def __init__(self, n_features: int, dtype=np.float64):
        self.n_features = check_n_features(n_features)
        self.count_ = np.zeros(1, dtype=np.int64)
        self.weight_ = np.zeros(1)
        self.sum_ = np.zeros(self.n_features)
        self.scatter_ = np.zeros((self.n_features, self.n_features), dtype=check_dtype(dtype))

    @property
    def dtype(self) -> np.dtype:
        """Storage type of the scatter (float64 or float32)."""
        return self.scatter_.dtype

    #: Members that model files written before they existed lack (see
    #: :meth:`_upgrade_state`).
    _state_added_later = ("weight_",)

    def _check_state(self) -> None:
        r"""Consistency of a loaded state (:mod:`._checks`): the shapes follow
        ``n_features``, the count is not negative, an empty summary holds zeros, and the
        sums are those of ``count_`` examples (:math:`P_{ii} \ge 0`,
        :math:`s_i^2 \le T P_{ii}`)."""
        d = check_int_setting("n_features", self.n_features, 1)
        t = check_count(self)
        sums = check_array(self, "sum_", (d,), "f")
        scatter = check_array(self, "scatter_", (d, d), "f")
        check_empty(self, t, ("sum_", "scatter_"))
        # float32 sums of T squares are rounded down by at most a relative T eps_32
        slack = 0.0 if scatter.dtype == np.float64 else t * float(np.finfo(scatter.dtype).eps)
        check_moments(sums, np.diagonal(scatter).astype(np.float64), check_weight(self, t), slack)

    def _upgrade_state(self, missing: set) -> None:
        """A summary saved before example weights: every example weighed 1, W = T."""
        if "weight_" in missing:
            self.weight_ = self.count_.astype(np.float64)

    def arrays(self) -> FullArrays:
        """``FullArrays(count_, weight_, sum_, scatter_)``."""
        return FullArrays(self.count_, self.weight_, self.sum_, self.scatter_)

    def row_state(self) -> tuple:
        """``(sum_, scatter_)``: indexed by feature along axis 0, and written, when an
        example is added, only in the rows of its features (the stored indices of a
        sparse row, the non-zeros of a dense one; the upper triangle's row of each
        product :math:`x_i x_j`, i <= j, is that of the smaller index). For a
        learner's undo log (:meth:`aucstream._base.BaseStreamingAUC._row_logged_state`)."""
        return (self.sum_, self.scatter_)

    def update(self, X: ArrayLike, sample_weight: ArrayLike | None = None) -> FullCovariance:
        """Add the rows of ``X`` (dense or sparse), with optional non-negative weights
        (rows of weight 0 are not added); returns self."""
        indptr, indices, data, d = csr_arrays(X)
        self._check_dim(d)
        weights = check_sample_weight(sample_weight, indptr.shape[0] - 1)
        add_rows(self.arrays(), indptr, indices, data, weights, 0)
        return self

    @property
    def scatter(self) -> np.ndarray:
        r""":math:`P = \sum x_i x_i^\top`, both triangles (a new array)."""
        upper = np.triu(self.scatter_).astype(np.float64, copy=False)
        return upper + np.triu(upper, 1).T

    def scatter_matvec(self, v: ArrayLike) -> np.ndarray:
        """:math:`P v`; O(d^2)."""
        out = np.empty(self.n_features)
        upper_matvec(self.scatter_, self._vector(v), out)
        return out

    def matvec(self, v: ArrayLike) -> np.ndarray:
        """The product ``Gamma v`` without forming ``Gamma``."""
        out = np.empty(self.n_features)
        full_cov_matvec(self.arrays(), self._vector(v), out)
        return out

    def scatter_inner(self, X) -> float:
        r""":math:`\sum_t x_t^\top P x_t` over the rows of X (forms :math:`X^\top X`)."""
        gram = X.T @ X
        gram = gram.toarray() if sp.issparse(gram) else np.asarray(gram)
        return float(np.sum(gram * self.scatter))

    def scatter_frobenius_sq(self) -> float:
        r""":math:`\|P\|_F^2`."""
        return float(np.sum(np.square(self.scatter)))

    def merge(self, other: FullCovariance) -> FullCovariance:
        r"""The exact summary of both streams together (a new object).

        Counts, sums and raw scatters :math:`P = \sum x_i x_i^\top` add. In terms of
        the covariances this is the pooled formula with its between-shard term,
        :math:`T\Gamma = T_1\Gamma_1 + T_2\Gamma_2 + \frac{T_1T_2}{T}(c_1 - c_2)(c_1 -
        c_2)^\top`, which the P-form never has to form. Associative and commutative
        up to rounding.
        """
        if not isinstance(other, FullCovariance):
            raise TypeError(f"cannot merge FullCovariance with {type(other).__name__}")
        self._check_dim(other.n_features)
        self._check_dtype(other)
        merged = FullCovariance(self.n_features, self.dtype)
        merged.count_ += self.count_ + other.count_
        merged.weight_ += self.weight_ + other.weight_
        merged.sum_ += self.sum_ + other.sum_
        merged.scatter_ += self.scatter_ + other.scatter_
        return merged
