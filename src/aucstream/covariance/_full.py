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

P is symmetric, so only its upper triangle is kept up to date and read:
:math:`P v` reads each of its d(d+1)/2 entries once (:func:`upper_matvec`), half the
memory traffic of a full product (BLAS ``dgemv``).

Dense rows (OPAUC's kernel on dense chunks) are held back: a dense row adds to the
count, the weight and the sum at once, but its product :math:`\omega x x^\top` waits
in ``pending_`` (16 rows) until the 16th arrives; then the 16 are added to P in one
pass over the triangle (:func:`_add_pending`), and :math:`P v` meanwhile is
:math:`P_{\text{stored}} v + \sum_p \omega_p x_p (x_p^\top v)` (O(d) per held-back
row). In exact arithmetic this is P itself; the point is memory traffic. An OPAUC
step adds the example to its class's P and multiplies the other class's P by w: with
both triangles out of cache (d = 784 on the benchmark machine), the rank-one update
read and wrote a whole triangle per example, which the product then had to read back
in. Now each example reads one triangle, and each triangle is written once per 16
examples of its class (``benchmarks/bench_opauc.py``, reported in docs/benchmarks.md).
When the rows are held back depends only on the stream (the count of dense rows per
class), so results do not depend on how it is cut into chunks, and ``pending_`` is
saved with the summary. Sparse rows are added to P at once (O(k^2) each: there is no
pass over the triangle to save).

The loops over the triangle are compiled with reassociation and contraction
(:data:`TRIANGLE_MATH`), so that LLVM vectorizes them: their results change by
rounding only. Dense and sparse rows give the same P up to that rounding (the sums
of four products of :func:`_add_pending` are formed in any order).

With ``dtype=np.float32`` only P is stored in single precision (half the memory and
half the memory traffic of the O(d^2) loops, which are bound by it); the count, the
weight, the sum and the held-back rows stay float64. Every product (of held-back rows:
every sum of up to four) is formed in float64 and rounded once when stored into P, and
:math:`P v` accumulates in float64; what differs from float64 storage is that
rounding of each entry of P at each addition (relative error of order
:math:`\sqrt T\,\epsilon_{32}` typically, at most :math:`T\epsilon_{32}`,
:math:`\epsilon_{32} \approx 6\cdot10^{-8}`; sums of integers stay exact up to
:math:`2^{24}`).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from .._chunks import csr_arrays
from .._kernels import SAME_ORDER_BYTES, inline_overload, is_none_type, jit
from .._typing import DType, Matrix
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
FullArrays = namedtuple(
    "FullArrays",
    ["count", "weight", "sums", "scatter", "pending", "pending_weight", "n_pending"],
)

#: Dense rows whose products a summary holds back before adding them to P together
#: (module docstring): the rows of ``pending_``.
PENDING_ROWS = 16


#: numba ``fastmath`` flags of the O(d^2) loops over the upper triangle: reassociation
#: (the sums of the product are evaluated in any order, so that LLVM vectorizes them)
#: and contraction (a multiply-add may be fused). Both change results by rounding
#: only; no finite-math or signed-zero assumption is made.
TRIANGLE_MATH = {"reassoc", "contract"}


@jit(borrowing=True, entry_only=True)
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


@jit(borrowing=True, fastmath=TRIANGLE_MATH, inline="always")
def _add_row_from(row, va, val, lo, hi):
    """``row[j] += va * val[j]`` for j in [lo, hi) (a loop counted from 0, which LLVM
    vectorizes)."""
    head, tail = row[lo:hi], val[lo:hi]
    for j in range(head.shape[0]):
        head[j] += va * tail[j]


@jit(borrowing=True, fastmath=TRIANGLE_MATH)
def _add_pending(upper, pending, weights, n):
    r"""``P += sum_p omega_p x_p x_p^T`` on the upper triangle for the first ``n``
    held-back rows ``x_p = pending[p]`` of weights ``omega_p``: one pass over the
    triangle, each row of P taking four examples per sweep of its entries (so that
    they are read and written once per four examples); O(n d^2 / 2)."""
    d = upper.shape[0]
    quads = n - n % 4
    for i in range(d):
        for p in range(0, quads, 4):
            a0, a1 = weights[p] * pending[p, i], weights[p + 1] * pending[p + 1, i]
            a2, a3 = weights[p + 2] * pending[p + 2, i], weights[p + 3] * pending[p + 3, i]
            row, x0, x1 = upper[i, i:], pending[p, i:], pending[p + 1, i:]
            x2, x3 = pending[p + 2, i:], pending[p + 3, i:]
            for j in range(row.shape[0]):
                row[j] = row[j] + a0 * x0[j] + a1 * x1[j] + a2 * x2[j] + a3 * x3[j]
        for p in range(quads, n):
            _add_row_from(upper[i], weights[p] * pending[p, i], pending[p], i, d)


@jit(borrowing=True, fastmath=TRIANGLE_MATH)
def _pending_matvec(pending, weights, n, v, out):
    r"""``out += sum_p omega_p x_p (x_p^T v)`` over the first ``n`` held-back rows:
    their part of :math:`P v`; O(n d)."""
    for p in range(n):
        x = pending[p]
        z = 0.0
        for j in range(x.shape[0]):
            z += x[j] * v[j]
        z *= weights[p]
        for j in range(x.shape[0]):
            out[j] += z * x[j]


@jit(borrowing=True, fastmath=TRIANGLE_MATH, entry_only=True)
def _add_dense(count, weight, sums, upper, pending, pending_weight, n_pending, val, omega):
    """Add a dense row: ``T``, ``W`` and ``s`` now, its product ``omega x x^T`` held
    back in ``pending`` until ``pending`` is full, then all of them added to P at once
    (:func:`_add_pending`) and ``pending`` cleared to zeros; O(d), and O(d^2 / 2) once
    per ``len(pending)`` dense rows of the class."""
    count[0] += 1
    weight[0] += omega
    n = n_pending[0]
    slot = pending[n]
    for i in range(val.shape[0]):
        va = omega * val[i]  # exact when omega = 1
        if va != 0.0:
            sums[i] += va
        slot[i] = val[i]
    pending_weight[n] = omega
    n += 1
    if n == pending.shape[0]:
        _add_pending(upper, pending, pending_weight, n)
        for p in range(n):
            pending_weight[p] = 0.0
            row = pending[p]
            for i in range(row.shape[0]):
                row[i] = 0.0
        n = 0
    n_pending[0] = n


def full_add(arrays: tuple, idx: np.ndarray | None, val: np.ndarray, omega: float) -> bool:
    """Add one example (non-zeros ``val`` at columns ``idx``; ``idx`` None: the dense
    row ``val``) of weight ``omega``: ``T += 1``, ``W += omega``, ``s += omega x``,
    ``P += omega x x^T`` on the upper triangle; O(k^2) (compiled code only)."""
    raise NotImplementedError("full_add is called from compiled code only")


@inline_overload(full_add, inline="never")
def _full_add(arrays, idx, val, omega):
    if is_none_type(idx):

        def dense(arrays, idx, val, omega):
            _add_dense(
                arrays.count,
                arrays.weight,
                arrays.sums,
                arrays.scatter,
                arrays.pending,
                arrays.pending_weight,
                arrays.n_pending,
                val,
                omega,
            )

        return dense

    def sparse(arrays, idx, val, omega):
        _add_sparse(arrays.count, arrays.weight, arrays.sums, arrays.scatter, idx, val, omega)

    return sparse


@jit(borrowing=True, fastmath=TRIANGLE_MATH)
def upper_matvec(upper, v, out):
    r"""``out = P v`` for the symmetric P whose upper triangle is ``upper``: one pass
    over the triangle, O(d^2 / 2) reads.

    The rows go four at a time: the 4 x 4 diagonal block, then the four rows' entries
    right of it, each column j both a term of the four rows' dot products
    (:math:`j > i`) and of ``out[j]`` (the transposed entries), so that ``v[j]`` and
    ``out[j]`` are read and written once for four rows rather than once per row
    (``benchmarks/bench_opauc.py``, reported in docs/benchmarks.md); the last d mod 4
    rows go one by one.

    A loop that both writes ``out`` and sums keeps its floats wherever the arrays lie
    only for rows of at least ``SAME_ORDER_BYTES`` ("Sums" in
    :mod:`aucstream._kernels._compile`); a smaller P sums each row's tail in a loop of
    its own, then adds the transposed entries (the same rows read twice, in the
    caches)."""
    d = v.shape[0]
    apart = d * upper.itemsize < SAME_ORDER_BYTES  # (then sums apart from the stores)
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
        if apart:
            for j in range(v_tail.shape[0]):
                vj = v_tail[j]
                acc0 += r0[j] * vj
                acc1 += r1[j] * vj
                acc2 += r2[j] * vj
                acc3 += r3[j] * vj
            for j in range(v_tail.shape[0]):
                out_tail[j] += r0[j] * v0 + r1[j] * v1 + r2[j] * v2 + r3[j] * v3
        else:
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
        if apart:
            for j in range(row.shape[0]):
                acc += row[j] * v_tail[j]
            for j in range(row.shape[0]):
                out_tail[j] += row[j] * vi
        else:
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
    if arrays.count[0] == 0:
        out[:] = 0.0
        return 0.0
    _scatter_product(arrays, v, out)
    return cov_from_scatter_product(arrays.weight, arrays.sums, v, out)


@jit(borrowing=True, inline="always")
def _scatter_product(arrays, v, out):
    """``out = P v``: the stored triangle's product plus the held-back rows' part."""
    upper_matvec(arrays.scatter, v, out)
    _pending_matvec(arrays.pending, arrays.pending_weight, arrays.n_pending[0], v, out)


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
        x_i^\top` over the examples not held back; the strictly lower triangle is
        never read nor written (files of aucstream 0.1, which stored both triangles,
        load unchanged).
    pending_ : ndarray of shape (16, d)
        Dense rows added by a learner's kernel whose products are not yet in
        ``scatter_`` (the first ``n_pending_[0]`` rows; zeros after them); module
        docstring. ``scatter``, ``matvec`` and ``merge`` include them.
    pending_weight_ : ndarray of shape (16,)
        Their weights (zeros after the first ``n_pending_[0]``).
    n_pending_ : ndarray of shape (1,), int64
        How many rows are held back (0 to 15).

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

    def __init__(self, n_features: int, dtype: DType = np.float64):
        self.n_features = check_n_features(n_features)
        self.count_ = np.zeros(1, dtype=np.int64)
        self.weight_ = np.zeros(1)
        self.sum_ = np.zeros(self.n_features)
        self.scatter_ = np.zeros((self.n_features, self.n_features), dtype=check_dtype(dtype))
        self._no_pending()

    def _no_pending(self) -> None:
        """Empty ``pending_``, ``pending_weight_`` and ``n_pending_``."""
        self.pending_ = np.zeros((PENDING_ROWS, self.n_features))
        self.pending_weight_ = np.zeros(PENDING_ROWS)
        self.n_pending_ = np.zeros(1, dtype=np.int64)

    @property
    def dtype(self) -> np.dtype:
        """Storage type of the scatter (float64 or float32)."""
        return self.scatter_.dtype

    #: Members that model files written before they existed lack (see
    #: :meth:`_upgrade_state`).
    _state_added_later = ("weight_", "pending_", "pending_weight_", "n_pending_")
    _weighted_state = ("weight_", "sum_", "scatter_", "pending_weight_")

    def _check_state(self) -> None:
        r"""Consistency of a loaded state (:mod:`._checks`): the shapes follow
        ``n_features``, the count is not negative, an empty summary holds zeros, and the
        sums are those of ``count_`` examples (:math:`P_{ii} \ge 0`,
        :math:`s_i^2 \le T P_{ii}`)."""
        d = check_int_setting("n_features", self.n_features, 1)
        t = check_count(self)
        sums = check_array(self, "sum_", (d,), "f")
        scatter = check_array(self, "scatter_", (d, d), "f")
        pending = check_array(self, "pending_", (PENDING_ROWS, d), "f")
        weights = check_array(self, "pending_weight_", (PENDING_ROWS,), "f")
        n = int(check_array(self, "n_pending_", (1,), "i")[0])
        if not 0 <= n < PENDING_ROWS or n > t:
            raise ValueError(
                f"n_pending_ is {n}, expected 0 to {min(PENDING_ROWS - 1, t)} (held-back rows)"
            )
        if not (np.isfinite(pending).all() and np.isfinite(weights).all()):
            raise ValueError("pending_ or pending_weight_ holds a value that is not finite")
        if np.any(weights[:n] <= 0) or np.any(weights[n:]) or np.any(pending[n:]):
            raise ValueError(
                f"pending_weight_ must be positive in the first n_pending_ = {n} rows, and "
                "pending_ and pending_weight_ zero after them"
            )
        check_empty(self, t, ("sum_", "scatter_"))
        # float32 sums of T squares are rounded down by at most a relative T eps_32
        slack = 0.0 if scatter.dtype == np.float64 else t * float(np.finfo(scatter.dtype).eps)
        diagonal = np.diagonal(scatter).astype(np.float64) + weights @ np.square(pending)
        check_moments(sums, diagonal, check_weight(self, t), slack)

    def _upgrade_state(self, missing: set) -> None:
        """A summary saved before example weights: every example weighed 1, W = T."""
        if "weight_" in missing:
            self.weight_ = self.count_.astype(np.float64)
        if missing & {"pending_", "pending_weight_", "n_pending_"}:
            self._no_pending()

    def arrays(self) -> FullArrays:
        """``FullArrays(count_, weight_, sum_, scatter_, pending_, pending_weight_,
        n_pending_)``."""
        return FullArrays(
            self.count_,
            self.weight_,
            self.sum_,
            self.scatter_,
            self.pending_,
            self.pending_weight_,
            self.n_pending_,
        )

    def row_state(self) -> tuple:
        """``(sum_, scatter_)``: indexed by feature along axis 0. Adding a sparse row
        writes only the rows of its stored indices (the upper triangle's row of each
        product :math:`x_i x_j`, i <= j, is that of the smaller index); adding a dense
        row writes the rows of its non-zeros in ``sum_``, and ``scatter_`` whole when
        it fills ``pending_`` (:meth:`fills_pending`), else not at all. For a learner's
        undo log (:meth:`aucstream._base.BaseStreamingAUC._row_logged_state`)."""
        return (self.sum_, self.scatter_)

    def fills_pending(self, n_dense: int) -> bool:
        """Whether adding ``n_dense`` dense rows may fill ``pending_`` (and so write
        ``scatter_`` whole)."""
        return int(self.n_pending_[0]) + int(n_dense) >= PENDING_ROWS

    def update(self, X: ArrayLike, sample_weight: ArrayLike | None = None) -> FullCovariance:
        """Add the rows of ``X`` (dense or sparse), with optional non-negative weights
        (rows of weight 0 are not added); returns self."""
        indptr, indices, data, d = csr_arrays(X, finite=True)
        self._check_dim(d)
        weights = check_sample_weight(sample_weight, indptr.shape[0] - 1)
        add_rows(self.arrays(), indptr, indices, data, weights, 0)
        return self

    @property
    def scatter(self) -> np.ndarray:
        r""":math:`P = \sum x_i x_i^\top`, both triangles (a new array; the held-back
        rows included)."""
        upper = np.triu(self.scatter_).astype(np.float64, copy=False)
        pending = self.pending_
        return upper + np.triu(upper, 1).T + (pending.T * self.pending_weight_) @ pending

    def scatter_matvec(self, v: ArrayLike) -> np.ndarray:
        """:math:`P v`; O(d^2)."""
        out = np.empty(self.n_features)
        _scatter_product(self.arrays(), self._vector(v), out)
        return out

    def matvec(self, v: ArrayLike) -> np.ndarray:
        """The product ``Gamma v`` without forming ``Gamma``."""
        out = np.empty(self.n_features)
        full_cov_matvec(self.arrays(), self._vector(v), out)
        return out

    def scatter_inner(self, X: Matrix) -> float:
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
        merged.scatter_ += self._settled() + other._settled()
        return merged

    def _settled(self) -> np.ndarray:
        """A copy of ``scatter_`` with the held-back rows added (as a full
        ``pending_`` is)."""
        upper = self.scatter_.copy()
        _add_pending(upper, self.pending_, self.pending_weight_, int(self.n_pending_[0]))
        return upper
