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


@nb.njit(
    cache=True, _nrt=False, no_cpython_wrapper=True, no_cfunc_wrapper=True, fastmath=TRIANGLE_MATH
)
def _add_dense(count, weight, sums, upper, val, omega):
    """``P += omega x x^T`` on the upper triangle for a dense row: one contiguous
    axpy per row of P whose x_i is non-zero (the products are those of the sparse
    path, so both give the same summary); O(d^2 / 2)."""
    count[0] += 1
    weight[0] += omega
    d = val.shape[0]
    for i in range(d):
        va = omega * val[i]
        if va == 0.0:
            continue
        sums[i] += va
        row, tail = upper[i, i:], val[i:]  # loops from 0 vectorize, from i do not
        for j in range(row.shape[0]):
            row[j] += va * tail[j]


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
    over the triangle, row by row, each row both a dot product (:math:`j \ge i`) and
    an axpy (the transposed entries :math:`j > i`), both over contiguous memory;
    O(d^2 / 2) reads."""
    d = v.shape[0]
    for i in range(d):
        out[i] = 0.0
    for i in range(d):
        vi = v[i]
        acc = upper[i, i] * vi
        # slices from i + 1, so that the loop counts from 0 (LLVM vectorizes it)
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
