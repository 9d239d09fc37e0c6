"""Second-order summaries of one class's examples, used by OPAUC and AdaOAM.

A summary holds the count :math:`T`, the mean :math:`c` and (an estimate of) the
covariance :math:`\\Gamma = \\frac1T \\sum_i x_i x_i^\\top - c c^\\top` of the examples of
one class seen so far. Learners use it only through three operations:

``update(X)``
    add examples;
``matvec(v)``
    the product :math:`\\Gamma v` (the only way the OPAUC gradient touches
    :math:`\\Gamma`);
``merge(other)``
    the summary of the union of two streams.

Every summary keeps its state in numpy arrays (plus scalar settings), so a learner
holding summaries pickles, saves and resumes exactly. The per-example functions are
numba-compiled so that learner kernels call them inside their own compiled loops.

Summaries
---------
:class:`FullCovariance` (exact, O(d^2) memory: for moderate d)
    Keeps the "P-form" of SPEC C2: the sum :math:`s = \\sum x_i` and the scatter
    :math:`P = \\sum x_i x_i^\\top`, and computes :math:`\\Gamma v = P v / T - c\\,(c^\\top
    v)` with :math:`c = s/T`, never forming :math:`c c^\\top`. Adding an example with k
    non-zeros costs O(k^2), so sparse input is never densified; the product costs
    O(d^2). In exact arithmetic this equals the recursion of Gao et al. (2016, §3, text
    after Alg. 1), and merging two summaries is exact (add the sums). Deviation: the
    recursion updates :math:`\\Gamma` in place at O(d^2) per example even for sparse x;
    the P-form is cheaper on sparse data and merges exactly, at the price of a
    cancellation error of order :math:`\\epsilon \\|c\\|^2` in float64, which is
    negligible for scaled features.

:class:`RandomizedCovariance` (OPAUC_r; G13 §3 Eqs. 6-11, SPEC §2)
    :math:`Z = \\sum_i x_i a_i^\\top` (d x tau) with :math:`a_i = r_i/\\sqrt\\tau`,
    :math:`r_i \\sim N(0, I_\\tau)` (G13 Eqs. 8-9; the 1/sqrt(tau) scale is SPEC
    decision #3), so :math:`E[Z Z^\\top] = \\sum_i x_i x_i^\\top`. Three centerings of the
    estimate (SPEC decision #4): ``"g13"`` :math:`Z Z^\\top/T - \\|\\bar a\\|^2 c c^\\top`
    (G13 Eqs. 10-11, authors' code), ``"g16"`` :math:`Z Z^\\top/T - c c^\\top` (G16
    Eq. 19) and ``"exact"`` :math:`(Z - c u^\\top)(Z - c u^\\top)^\\top/T` with
    :math:`u = \\sum_i a_i` (the literal :math:`(X - c 1^\\top) R R^\\top (X - c
    1^\\top)^\\top / T`, positive semi-definite).

:class:`HashedCovariance` (OPAUC_h; G16 §7.2, reconstructed, SPEC §5)
    A CountSketch along the instance axis: :math:`Z \\mathrel{+}= \\sigma_i x_i
    e_{h_i}^\\top` with bucket :math:`h_i` uniform on {1..tau} and sign
    :math:`\\sigma_i = \\pm 1`, so :math:`E[Z Z^\\top] = \\sum_i x_i x_i^\\top`; the
    estimate is :math:`Z Z^\\top/T - c c^\\top` (G16 Eq. 19). It is the randomized
    sketch with :math:`a_i = \\sigma_i e_{h_i}` and takes the same three centerings.

:class:`FrequentDirectionsCovariance` (OPAUC_fd; G16 §4.1 Alg. 2, Eqs. 10-11, SPEC §3)
    Liberty's frequent directions: insert x into a zero column of Z; when no zero
    column remains, shrink :math:`Z \\leftarrow U \\sqrt{\\max(\\Sigma^2 - \\sigma_\\ell^2,
    0)}` with :math:`\\ell = \\lfloor\\tau/2\\rfloor` (Alg. 2) or :math:`\\lceil
    0.9\\tau\\rceil` (authors' code). Guarantee (Liberty 2013; G16 Lemma 1, in the
    form we test): :math:`0 \\preceq Z Z^\\top \\preceq X X^\\top` and :math:`\\|X X^\\top -
    Z Z^\\top\\|_2 \\le (\\|X\\|_F^2 - \\|Z\\|_F^2)/\\ell`, which is at most
    :math:`\\|X\\|_F^2/\\lfloor\\tau/2\\rfloor` (G16 states :math:`2/\\tau` times the trace,
    the same for even tau). Estimate :math:`Z Z^\\top/T - c c^\\top`, or, with
    ``centering="exact"``, Z sketches the centered examples (Welford's rank-one
    updates :math:`\\sqrt{(T-1)/T}\\,(x_T - c_{T-1})`) and the estimate is
    :math:`Z Z^\\top/T`, with :math:`0 \\preceq Z Z^\\top/T \\preceq S`.

:class:`SparsifiedCovariance` (OPAUC_s; G16 §4.2 Alg. 3, Eqs. 16-17, SPEC §4)
    :math:`P \\mathrel{+}= x x^\\top`, then only the :math:`d\\tau` entries of largest
    magnitude are kept (the Frobenius-optimal sparse approximation of the current
    P). Estimate :math:`P/T - c c^\\top` (may be indefinite).

The low-rank sketches (randomized, hashed, frequent directions) store Z row-major
(``sketch_[i]`` is the tau-vector of feature i), so adding an example with k
non-zeros touches k rows: O(k tau). They also maintain the Gram matrix
:math:`G = Z^\\top Z` (O(tau^2) per example), which frequent directions needs for its
shrink and OPAUC's compiled kernel for its O(k tau + tau^2) step (see
:mod:`aucstream.opauc`). Randomness (the :math:`a_i`, or buckets and signs) is drawn
per example by the caller, a fixed number of values per example, and passed in, so
splitting a stream into chunks never changes a summary.

Deviations and implementation choices
-------------------------------------
- Frequent directions computes the SVD of Alg. 2 from the maintained Gram matrix:
  :math:`G = V \\Sigma^2 V^\\top` (an eigendecomposition, O(tau^3)), then
  :math:`Z \\leftarrow Z V \\operatorname{diag}(\\sqrt{\\max(1 - \\sigma_\\ell^2 /
  \\sigma_i^2, 0)})`, which equals :math:`U\\hat\\Sigma` in exact arithmetic and costs
  one O(m tau^2) product (m rows in use) instead of a d x tau SVD. Eigenvalues below
  :math:`\\tau\\epsilon\\sigma_1^2` count as zero, so at least one column is always
  freed. An all-zero example is not inserted (it would leave its column zero).
- Sparsification: Alg. 3 prunes after every example that makes nnz(P) exceed
  :math:`d\\tau`, at O(nnz(P)) each time. We let the stored cost grow to
  :math:`(1 + \\text{prune\\_slack})\\,d\\tau` and then prune back to :math:`d\\tau`;
  ``prune_slack=0`` is Alg. 3 exactly. The selection is symmetric (SPEC §4): the
  upper triangle is stored, a diagonal entry costs 1 and an off-diagonal pair 2, so
  the budget counts the non-zeros of the full symmetric P; entries strictly above
  the threshold magnitude are kept, threshold ties in storage order while the budget
  allows. The threshold is found by a radix select on the IEEE-754 bit patterns of
  the magnitudes (four 16-bit passes, linear time, no copy of the entries) rather
  than quickselect (SPEC §4); the result is the same, without an O(nnz) scratch
  array. Stored zeros of the input (dense rows) are skipped, so dense and sparse
  input give the same summary.
- Sparse storage: the upper-triangle entries in insertion order (``keys_``, int64
  ``(i << 32) | j`` for i <= j, and ``values_``, float64) plus an open-addressing
  hash index with linear probing (``index_``, int32 positions, load factor <= 0.75).
  The arrays are allocated once for the most entries the budget can hold before a
  prune: memory O(d tau), about 16 + 4/0.75 bytes per entry, independent of the
  stream. The product :math:`P v` scans the entries in order, O(nnz(P)); a prune
  compacts the survivors in place (order kept) and rebuilds the index, O(nnz +
  index size). An example with so many non-zeros that its k(k+1)/2 new entries
  would not fit first prunes (if over budget) and otherwise grows the arrays.
- Positive semi-definite estimates (``centering="exact"``) are a library option.
  The papers' forms subtract the exact :math:`c c^\\top` from a sketched
  :math:`X X^\\top`, which is indefinite wherever the sketch lost more than the
  class's spread (frequent directions always under-estimates); OPAUC's step then
  grows along those directions, and on sector OPAUC_fd and OPAUC_h diverge from
  eta = 2^-4 on. The centered forms keep the sketches' guarantees for the covariance
  itself. A centered frequent-directions column :math:`\\sqrt{(T-1)/T}(x - s/(T-1))`
  is dense, but its mean parts are rank one in the current class sum:
  :math:`Z = Y - s\\beta^\\top` with a sparse update of Y and a tau-vector
  :math:`\\beta` (:func:`fd_insert`), folded into Y at each shrink, so an insert
  still costs O(k tau).
- Frequent directions records the rows of Z that ever received a non-zero
  (``support_``); a shrink only visits those, so on sparse data it costs
  O(|support| tau^2) rather than O(d tau^2).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np
from numpy.typing import ArrayLike

from ._chunks import csr_arrays

__all__ = [
    "COVARIANCE_KINDS",
    "CovarianceSummary",
    "ExactSparseCovariance",
    "FrequentDirectionsCovariance",
    "FullCovariance",
    "HashedCovariance",
    "RandomizedCovariance",
    "SparsifiedCovariance",
    "exact_sparse_add",
    "fd_column",
    "fd_insert",
    "fd_shrink_index",
    "full_add",
    "full_cov_matvec",
    "lowrank_add",
    "make_covariance",
    "sketch_tdot",
    "sparse_add",
    "sparse_cov_matvec",
    "sparse_dot",
    "sparse_prune",
    "sparse_room",
    "sparse_scatter_add",
    "sparsified_add",
]


@nb.njit(cache=True)
def full_add(count, sums, outer, idx, val):
    """Add one example (non-zeros ``val`` at columns ``idx``) to a P-form summary."""
    count[0] += 1
    k = idx.shape[0]
    for a in range(k):
        i = idx[a]
        va = val[a]
        sums[i] += va
        for b in range(k):
            outer[i, idx[b]] += va * val[b]


@nb.njit(cache=True)
def full_cov_matvec(count, sums, outer, v, out):
    """Write ``Gamma v = P v / T - c (c^T v)`` into ``out``; return ``c^T v``.

    ``out`` receives zeros when the summary is empty.
    """
    d = v.shape[0]
    t = count[0]
    if t == 0:
        out[:] = 0.0
        return 0.0
    inv_t = 1.0 / t
    cv = 0.0
    for i in range(d):
        cv += sums[i] * v[i]
    cv *= inv_t
    for i in range(d):
        acc = 0.0
        row = outer[i]
        for j in range(d):
            acc += row[j] * v[j]
        out[i] = acc * inv_t - sums[i] * inv_t * cv
    return cv


@nb.njit(cache=True)
def _full_add_rows(count, sums, outer, indptr, indices, data):
    for r in range(indptr.shape[0] - 1):
        lo, hi = indptr[r], indptr[r + 1]
        full_add(count, sums, outer, indices[lo:hi], data[lo:hi])


class CovarianceSummary:
    """Interface of a class's second-order summary (see the module docstring).

    Subclasses keep all their state in numpy arrays (so that estimators holding them
    pickle, save and resume exactly) and implement ``update``, ``matvec`` and
    ``merge``.
    """

    n_features: int

    @property
    def count(self) -> int:
        """Number of examples summarized."""
        return int(self.count_[0])

    @property
    def mean(self) -> np.ndarray:
        """Class mean c (zeros while empty)."""
        return self.sum_ / max(self.count, 1)

    @property
    def covariance(self) -> np.ndarray:
        """The d x d estimate :math:`P/T - c c^\\top` from the (estimated) scatter P
        (forms it: for inspection)."""
        c = self.mean
        return self.scatter / max(self.count, 1) - np.outer(c, c)

    def update(self, X: ArrayLike) -> CovarianceSummary:  # pragma: no cover - abstract
        raise NotImplementedError

    def matvec(self, v: ArrayLike) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def merge(self, other: CovarianceSummary) -> CovarianceSummary:  # pragma: no cover
        raise NotImplementedError

    def _check_dim(self, d: int) -> None:
        if d != self.n_features:
            raise ValueError(
                f"{type(self).__name__} summarizes {self.n_features} features, got {d}"
            )


class FullCovariance(CovarianceSummary):
    """Exact count, mean and covariance of a stream, in O(d^2) memory.

    Parameters
    ----------
    n_features : int
        Dimension d of the examples.

    Attributes
    ----------
    count_ : ndarray of shape (1,), int64
        Number of examples T.
    sum_ : ndarray of shape (d,)
        :math:`\\sum x_i`.
    scatter_ : ndarray of shape (d, d)
        :math:`P = \\sum x_i x_i^\\top` (symmetric, both triangles stored).

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

    def __init__(self, n_features: int):
        self.n_features = int(n_features)
        self.count_ = np.zeros(1, dtype=np.int64)
        self.sum_ = np.zeros(self.n_features)
        self.scatter_ = np.zeros((self.n_features, self.n_features))

    def update(self, X: ArrayLike) -> FullCovariance:
        """Add the rows of ``X`` (dense or sparse); returns self."""
        indptr, indices, data, d = csr_arrays(X)
        self._check_dim(d)
        _full_add_rows(self.count_, self.sum_, self.scatter_, indptr, indices, data)
        return self

    @property
    def scatter(self) -> np.ndarray:
        """:math:`P = \\sum x_i x_i^\\top` (the ``scatter_`` array itself)."""
        return self.scatter_

    def matvec(self, v: ArrayLike) -> np.ndarray:
        """The product ``Gamma v`` without forming ``Gamma``."""
        v = np.ascontiguousarray(v, dtype=np.float64)
        self._check_dim(v.shape[0])
        out = np.empty(self.n_features)
        full_cov_matvec(self.count_, self.sum_, self.scatter_, v, out)
        return out

    def merge(self, other: FullCovariance) -> FullCovariance:
        """The exact summary of both streams together (a new object)."""
        if not isinstance(other, FullCovariance):
            raise TypeError(f"cannot merge FullCovariance with {type(other).__name__}")
        self._check_dim(other.n_features)
        merged = FullCovariance(self.n_features)
        merged.count_ += self.count_ + other.count_
        merged.sum_ += self.sum_ + other.sum_
        merged.scatter_ += self.scatter_ + other.scatter_
        return merged


# ====================================================================== shared helpers
def _as_rng(rng) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(rng)


def _check_sketch_size(sketch_size, minimum: int = 1) -> int:
    if (
        isinstance(sketch_size, (bool, np.bool_))
        or not isinstance(sketch_size, (int, np.integer))
        or sketch_size < minimum
    ):
        raise ValueError(f"sketch_size must be an int >= {minimum}, got {sketch_size!r}")
    return int(sketch_size)


#: Rows of Z processed per block by the numpy parts (bounds temporary memory).
_ROW_BLOCK = 16384


def _sym(a: np.ndarray) -> np.ndarray:
    return 0.5 * (a + a.T)


@nb.njit(cache=True)
def sparse_dot(dense, idx, val):
    """``x^T dense`` for x given by its non-zeros ``val`` at ``idx``."""
    acc = 0.0
    for a in range(idx.shape[0]):
        acc += dense[idx[a]] * val[a]
    return acc


@nb.njit(cache=True)
def sketch_tdot(sketch, idx, val, out):
    """Write ``Z^T x`` into ``out`` (Z row-major, d x tau); O(k tau). Zeros are skipped."""
    out[:] = 0.0
    tau = sketch.shape[1]
    for a in range(idx.shape[0]):
        v = val[a]
        if v == 0.0:
            continue
        row = sketch[idx[a]]
        for j in range(tau):
            out[j] += v * row[j]


@nb.njit(cache=True)
def sketch_add_outer(sketch, idx, val, a):
    """``Z += x a^T`` for x given by its non-zeros; O(k tau). Zeros are skipped."""
    tau = sketch.shape[1]
    for q in range(idx.shape[0]):
        v = val[q]
        if v == 0.0:
            continue
        row = sketch[idx[q]]
        for j in range(tau):
            row[j] += v * a[j]


@nb.njit(cache=True)
def lowrank_add(count, sums, sketch, gram, idx, val, a, ztx):
    """Add one example to a linear sketch: ``Z += x a^T``, ``s += x``, ``T += 1``.

    ``ztx`` must hold ``Z^T x`` before the update; the Gram matrix ``G = Z^T Z`` is
    updated by ``G += (Z^T x) a^T + a (Z^T x)^T + |x|^2 a a^T``. Returns ``|x|^2``.
    """
    tau = sketch.shape[1]
    xx = 0.0
    for q in range(idx.shape[0]):
        v = val[q]
        xx += v * v
        sums[idx[q]] += v
    sketch_add_outer(sketch, idx, val, a)
    count[0] += 1
    for i in range(tau):
        for j in range(tau):
            gram[i, j] += ztx[i] * a[j] + a[i] * ztx[j] + xx * a[i] * a[j]
    return xx


@nb.njit(cache=True)
def fd_column(count, xx, centered):
    """Coefficients ``(bx, bs)`` of the column ``z = bx x - bs s`` that frequent
    directions inserts for an example x with ``|x|^2 = xx`` (s: the class sum before x).

    G16 form (``centered`` false): ``z = x``, skipped when x is all zero.
    Centered: ``z = sqrt(T/(T+1)) (x - s/T)`` with T the class count before x, so that
    :math:`\\sum z z^\\top` is the centered scatter :math:`\\sum_i (x_i - c)(x_i - c)^\\top`
    (Welford's update); nothing is inserted for a class's first example.
    """
    if centered:
        t = count[0]
        if t == 0:
            return 0.0, 0.0
        bx = math.sqrt(t / (t + 1.0))
        return bx, bx / t
    return (1.0 if xx > 0.0 else 0.0), 0.0


@nb.njit(cache=True)
def fd_insert(
    count,
    sums,
    sketch,
    gram,
    nfill,
    frob,
    seen,
    support,
    n_support,
    zs,
    ss,
    beta,
    idx,
    val,
    ztx,
    bx,
    bs,
):
    """Frequent directions, first step of Alg. 2: make ``z = bx x - bs s`` (s the
    class sum before x, see :func:`fd_column`) the first zero column of Z, then add x
    to the class (count, sum); ``bx == 0`` inserts nothing.

    Z is kept as ``Y - s beta^T`` (``sketch`` holds Y), so that the mean part of the
    centered columns, which is dense, costs nothing here: with
    ``Y += x (beta + (bx + bs) e_j)^T`` and ``beta += bs e_j``, Z gains exactly
    ``z e_j^T`` while s gains x. O(k tau + tau). ``ztx`` must hold ``Z^T x``; ``zs``
    (``Z^T s``) and ``ss`` (``s^T s``, shape (1,)) are maintained here, and so is
    the Gram matrix. Rows receiving their first non-zero are appended to ``support``
    (``seen`` marks them). Returns ``|x|^2``; the caller shrinks when
    ``nfill[0] == tau``.
    """
    tau = sketch.shape[1]
    j = nfill[0]
    xx = 0.0
    sx = 0.0
    for q in range(idx.shape[0]):
        v = val[q]
        if v == 0.0:
            continue
        xx += v * v
        i = idx[q]
        sx += sums[i] * v
        if not seen[i]:
            seen[i] = True
            support[n_support[0]] = i
            n_support[0] += 1
    # beta[j] is 0 (column j is free): Y += x (beta + (bx + bs) e_j)^T
    beta[j] = bx + bs if bx != 0.0 else 0.0
    sketch_add_outer(sketch, idx, val, beta)
    beta[j] = 0.0
    if bx != 0.0:
        # |z|^2 = bx^2 |x|^2 - 2 bx bs s^T x + bs^2 |s|^2 (= T/(T+1) |x - c|^2 centered)
        zz = bx * bx * xx - 2.0 * bx * bs * sx + bs * bs * ss[0]
        if zz < 0.0:
            zz = 0.0
        zsold = bx * sx - bs * ss[0]  # z^T s (old s)
        zx = bx * xx - bs * sx  # z^T x
        for i in range(tau):
            g = bx * ztx[i] - bs * zs[i]  # (Z^T z)_i, old Z (column j is zero)
            gram[i, j] += g
            gram[j, i] += g
        gram[j, j] += zz
        for i in range(tau):
            zs[i] += ztx[i]
        zs[j] += zsold + zx
        beta[j] += bs
        frob[0] += zz
        nfill[0] = j + 1
    else:
        for i in range(tau):
            zs[i] += ztx[i]
    ss[0] += 2.0 * sx + xx
    for q in range(idx.shape[0]):
        sums[idx[q]] += val[q]
    count[0] += 1
    return xx


@nb.njit(cache=True)
def fd_tdot(sketch, beta, sums, idx, val, out):
    """Write ``Z^T x`` into ``out`` for ``Z = Y - s beta^T`` (``sketch`` holds Y);
    return ``s^T x``. O(k tau)."""
    sketch_tdot(sketch, idx, val, out)
    sx = 0.0
    for q in range(idx.shape[0]):
        sx += sums[idx[q]] * val[q]
    if sx != 0.0:
        for k in range(out.shape[0]):
            out[k] -= beta[k] * sx
    return sx


@nb.njit(cache=True)
def _lowrank_add_rows(count, sums, sketch, gram, asum, indptr, indices, data, A):
    ztx = np.empty(sketch.shape[1])
    for r in range(indptr.shape[0] - 1):
        lo, hi = indptr[r], indptr[r + 1]
        idx, val = indices[lo:hi], data[lo:hi]
        sketch_tdot(sketch, idx, val, ztx)
        lowrank_add(count, sums, sketch, gram, idx, val, A[r], ztx)
        asum += A[r]


@nb.njit(cache=True)
def _fd_add_rows(
    count,
    sums,
    sketch,
    gram,
    nfill,
    frob,
    seen,
    support,
    n_support,
    zs,
    ss,
    beta,
    indptr,
    indices,
    data,
    start,
    centered,
):
    """Insert rows from ``start``; return the row after the one that filled Z (or n)."""
    ztx = np.empty(sketch.shape[1])
    tau = sketch.shape[1]
    n = indptr.shape[0] - 1
    for r in range(start, n):
        lo, hi = indptr[r], indptr[r + 1]
        idx, val = indices[lo:hi], data[lo:hi]
        fd_tdot(sketch, beta, sums, idx, val, ztx)
        xx = 0.0
        for q in range(idx.shape[0]):
            xx += val[q] * val[q]
        bx, bs = fd_column(count, xx, centered)
        fd_insert(
            count,
            sums,
            sketch,
            gram,
            nfill,
            frob,
            seen,
            support,
            n_support,
            zs,
            ss,
            beta,
            idx,
            val,
            ztx,
            bx,
            bs,
        )
        if nfill[0] == tau:
            return r + 1
    return n


@nb.njit(cache=True)
def _fd_settle(sketch, sums, beta, rows):
    """``sketch[i] -= sums[i] beta`` for the listed rows."""
    tau = sketch.shape[1]
    for t in range(rows.shape[0]):
        i = rows[t]
        si = sums[i]
        for k in range(tau):
            sketch[i, k] -= si * beta[k]


@nb.njit(cache=True)
def _fd_shrink_rows(sketch, sums, beta, rows, M, dump_coef, dump_out, dump):
    """``Z[i] <- Z[i] M`` (zeros after the m new columns) for the listed rows, where
    ``Z[i] = sketch[i] - sums[i] beta`` before and ``sketch[i]`` after; with ``dump``,
    first ``dump_out[i] += Z[i] . dump_coef``. O(len(rows) tau m)."""
    tau = sketch.shape[1]
    m = M.shape[1]
    old = np.empty(tau)
    acc = np.empty(m)
    for t in range(rows.shape[0]):
        row = sketch[rows[t]]
        si = sums[rows[t]]
        for k in range(tau):
            old[k] = row[k] - si * beta[k]
        if dump:
            s = 0.0
            for k in range(tau):
                s += old[k] * dump_coef[k]
            dump_out[rows[t]] += s
        acc[:] = 0.0
        for k in range(tau):
            a = old[k]
            for j in range(m):
                acc[j] += a * M[k, j]
        for j in range(m):
            row[j] = acc[j]
        for j in range(m, tau):
            row[j] = 0.0


# ============================================================ low-rank sketch summaries
class _LowRankSummary(CovarianceSummary):
    """Common state of the d x tau sketches (randomized, hashed, frequent directions).

    Attributes
    ----------
    count_ : ndarray of shape (1,), int64
        Number of examples T.
    sum_ : ndarray of shape (d,)
        :math:`s = \\sum x_i`.
    sketch_ : ndarray of shape (d, tau)
        Z, row-major (row i belongs to feature i).
    gram_ : ndarray of shape (tau, tau)
        :math:`Z^\\top Z`, maintained incrementally.
    """

    def __init__(self, n_features: int, sketch_size: int = 50):
        self.n_features = int(n_features)
        self.sketch_size = _check_sketch_size(sketch_size)
        self.count_ = np.zeros(1, dtype=np.int64)
        self.sum_ = np.zeros(self.n_features)
        self.sketch_ = np.zeros((self.n_features, self.sketch_size))
        self.gram_ = np.zeros((self.sketch_size, self.sketch_size))

    def sketch_matrix(self) -> np.ndarray:
        """The sketch Z (d x tau): ``sketch_`` itself for the linear sketches."""
        return self.sketch_

    def sketch_dot(self, p: np.ndarray) -> np.ndarray:
        """:math:`Z p` for a tau-vector p; O(d tau), no d x tau temporary."""
        return self.sketch_ @ p

    @property
    def scatter(self) -> np.ndarray:
        """The estimate :math:`Z Z^\\top` of :math:`\\sum x_i x_i^\\top` (forms it: d x d)."""
        Z = self.sketch_matrix()
        return Z @ Z.T

    def scatter_matvec(self, v: ArrayLike) -> np.ndarray:
        """:math:`Z (Z^\\top v)`, the estimate of :math:`\\sum_i x_i x_i^\\top v`; O(d tau)."""
        v = np.ascontiguousarray(v, dtype=np.float64)
        self._check_dim(v.shape[0])
        Z = self.sketch_matrix()
        return Z @ (Z.T @ v)

    @property
    def covariance(self) -> np.ndarray:
        """The d x d covariance estimate (forms it: for inspection)."""
        return np.column_stack([self.matvec(e) for e in np.eye(self.n_features)])

    def _center_terms(self, zv: np.ndarray, cv: float):
        """``(phi, psi)`` with ``Gamma v = Z phi - c psi`` given ``Z^T v`` and ``c^T v``."""
        t = self.count
        return zv / t, cv

    def matvec(self, v: ArrayLike) -> np.ndarray:
        """The product ``Gamma v`` of the estimate, without forming it; O(d tau)."""
        v = np.ascontiguousarray(v, dtype=np.float64)
        self._check_dim(v.shape[0])
        if self.count == 0:
            return np.zeros(self.n_features)
        c = self.mean
        Z = self.sketch_matrix()
        phi, psi = self._center_terms(Z.T @ v, float(c @ v))
        return Z @ phi - c * psi

    def _refresh_gram(self) -> None:
        """Recompute ``gram_`` from the sketch (O(d tau^2))."""
        Z = self.sketch_matrix()
        self.gram_[:] = _sym(Z.T @ Z)

    def _check_merge(self, other) -> None:
        if type(other) is not type(self):
            raise TypeError(f"cannot merge {type(self).__name__} with {type(other).__name__}")
        self._check_dim(other.n_features)
        if other.sketch_size != self.sketch_size:
            raise ValueError(
                f"cannot merge sketches of sizes {self.sketch_size} and {other.sketch_size}"
            )

    def _new_like(self):
        """An empty summary with the same settings."""
        raise NotImplementedError  # pragma: no cover

    def _merge_linear(self, other):
        """Merge of linear sketches: add everything (Z = X R is linear in the stream)."""
        self._check_merge(other)
        merged = self._new_like()
        merged.count_[:] = self.count_ + other.count_
        merged.sum_[:] = self.sum_ + other.sum_
        merged.sketch_[:] = self.sketch_ + other.sketch_
        merged._refresh_gram()
        return merged


class _LinearSketch(_LowRankSummary):
    """A linear sketch :math:`Z = \\sum_i x_i a_i^\\top` with independent draws
    :math:`a_i`, :math:`E\\|a_i\\|^2 = 1`, so :math:`E[Z Z^\\top] = X X^\\top`; subclasses
    draw the :math:`a_i`.

    Three centerings of the covariance estimate (SPEC §2, decision #4):
    ``"g13"`` :math:`Z Z^\\top/T - \\|\\bar a\\|^2 c c^\\top` (G13 Eqs. 10-11, authors'
    code), ``"g16"`` :math:`Z Z^\\top/T - c c^\\top` (G16 Eq. 19) and ``"exact"``
    :math:`(Z - c u^\\top)(Z - c u^\\top)^\\top/T` with :math:`u = \\sum_i a_i`, the literal
    :math:`(X - c 1^\\top) R R^\\top (X - c 1^\\top)^\\top / T`: unbiased for the
    covariance and positive semi-definite.
    """

    _CENTERINGS = ("g13", "g16", "exact")
    _DEFAULT_CENTERING = "g16"

    def __init__(self, n_features: int, sketch_size: int = 50, centering: str | None = None):
        centering = self._DEFAULT_CENTERING if centering is None else centering
        if centering not in self._CENTERINGS:
            raise ValueError(f"centering must be one of {self._CENTERINGS}, got {centering!r}")
        super().__init__(n_features, sketch_size)
        self.centering = centering
        self.asum_ = np.zeros(self.sketch_size)

    @staticmethod
    def draw(rng: np.random.Generator, n: int, sketch_size: int) -> np.ndarray:
        """The vectors :math:`a_i` of n examples, shape (n, tau)."""
        raise NotImplementedError  # pragma: no cover

    def update(self, X: ArrayLike, rng=None, *, draws: ArrayLike | None = None):
        """Add the rows of ``X``; returns self.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n, d)
            Examples.
        rng : int, Generator or None
            Source of the :math:`a_i` (``draw``) when ``draws`` is not given.
        draws : ndarray of shape (n, tau), optional
            The :math:`a_i` to use.
        """
        indptr, indices, data, d = csr_arrays(X)
        self._check_dim(d)
        n = indptr.shape[0] - 1
        A = (
            self.draw(_as_rng(rng), n, self.sketch_size)
            if draws is None
            else np.ascontiguousarray(draws, dtype=np.float64).reshape(n, self.sketch_size)
        )
        _lowrank_add_rows(
            self.count_, self.sum_, self.sketch_, self.gram_, self.asum_, indptr, indices, data, A
        )
        return self

    def _center_terms(self, zv, cv):
        t = self.count
        if self.centering == "g16":
            return zv / t, cv
        if self.centering == "g13":
            return zv / t, float(self.asum_ @ self.asum_) / t**2 * cv
        q = zv - self.asum_ * cv  # "exact": (Z - c u^T)(Z^T v - u c^T v) / T
        return q / t, float(self.asum_ @ q) / t

    def _new_like(self):
        return type(self)(self.n_features, self.sketch_size, self.centering)

    def merge(self, other):
        """The sketch of both streams (a new object).

        Z is linear in the stream, so the sum of the two sketches is exactly the
        sketch of the concatenated stream with the same draws: unbiased, with the
        expected error of a single sketch of all the examples.
        """
        if isinstance(other, _LinearSketch) and other.centering != self.centering:
            raise ValueError("cannot merge sketches with different centering")
        merged = self._merge_linear(other)
        merged.asum_[:] = self.asum_ + other.asum_
        return merged


class RandomizedCovariance(_LinearSketch):
    """Randomized low-rank covariance estimate of OPAUC_r (G13 §3, Eqs. 6-11).

    :math:`Z = X R` with the rows of R drawn per example,
    :math:`a_i = r_i/\\sqrt\\tau`, :math:`r_i \\sim N(0, I_\\tau)` (Eqs. 8-9), so
    :math:`E[Z Z^\\top] = X X^\\top` and
    :math:`E\\|Z Z^\\top - X X^\\top\\|_F^2 = (\\|X\\|_F^4 + \\|X X^\\top\\|_F^2)/\\tau`.
    R is never stored; only :math:`u = \\sum_i a_i` is kept for the centering.

    Parameters
    ----------
    n_features : int
        Dimension d.
    sketch_size : int, default=50
        tau (G13 §6.2 and G16 §7.2-7.3 use 50).
    centering : {"g13", "g16", "exact"} or None, default=None
        How the mean is removed (:class:`_LinearSketch`; SPEC §2); None is "g13",
        G13 Eqs. 10-11 and the authors' code.

    Attributes
    ----------
    count_, sum_, sketch_, gram_
        See :class:`_LowRankSummary`.
    asum_ : ndarray of shape (tau,)
        :math:`u = \\sum_i a_i` (so :math:`\\bar a = u/T`).

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.covariance import RandomizedCovariance
    >>> X = np.random.default_rng(0).normal(size=(200, 4))
    >>> s = RandomizedCovariance(4, sketch_size=10, centering="exact").update(X, rng=0)
    >>> s.sketch_.shape, bool(np.allclose(s.gram_, s.sketch_.T @ s.sketch_))
    ((4, 10), True)
    """

    _DEFAULT_CENTERING = "g13"

    @staticmethod
    def draw(rng: np.random.Generator, n: int, sketch_size: int) -> np.ndarray:
        """The vectors :math:`a_i = r_i/\\sqrt\\tau` of n examples, shape (n, tau)."""
        return rng.standard_normal((n, sketch_size)) / np.sqrt(sketch_size)


class HashedCovariance(_LinearSketch):
    """CountSketch covariance estimate of OPAUC_h (G16 §7.2; SPEC §5, reconstructed).

    Each example goes, with a random sign :math:`\\sigma_i`, into one random column
    :math:`h_i` of Z: :math:`Z \\mathrel{+}= \\sigma_i x_i e_{h_i}^\\top`. Then
    :math:`E[Z Z^\\top] = X X^\\top` and :math:`E\\|Z Z^\\top - X X^\\top\\|_F^2 =
    (\\|X\\|_F^4 + \\|X X^\\top\\|_F^2 - 2\\sum_i\\|x_i\\|^4)/\\tau`. The estimate is
    :math:`Z Z^\\top/T - c c^\\top` (G16 Eq. 19) by default. One uniform draw u per
    example gives both: ``k = floor(2 tau u)``, bucket ``k // 2``, sign ``+1`` if k is
    even.

    Parameters
    ----------
    n_features : int
        Dimension d.
    sketch_size : int, default=50
        Number of buckets tau.
    centering : {"g13", "g16", "exact"} or None, default=None
        How the mean is removed (:class:`_LinearSketch`); None is "g16" (G16 Eq. 19).
        "exact", the CountSketch of the centered examples, is positive semi-definite
        and keeps OPAUC_h stable at step sizes where the G16 form diverges (a library
        option, not the paper's).

    Attributes
    ----------
    count_, sum_, sketch_, gram_
        See :class:`_LowRankSummary`.
    asum_ : ndarray of shape (tau,)
        :math:`u = \\sum_i \\sigma_i e_{h_i}`.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.covariance import HashedCovariance
    >>> X = np.random.default_rng(0).normal(size=(30, 3))
    >>> s = HashedCovariance(3, sketch_size=5).update(X, rng=0)
    >>> s.sketch_.shape
    (3, 5)
    """

    @staticmethod
    def draw(rng: np.random.Generator, n: int, sketch_size: int) -> np.ndarray:
        """The vectors :math:`a_i = \\sigma_i e_{h_i}` of n examples, shape (n, tau)."""
        return HashedCovariance.signed_buckets(rng.random(n), sketch_size)

    @staticmethod
    def signed_buckets(u: ArrayLike, sketch_size: int) -> np.ndarray:
        """Rows :math:`\\sigma e_h` from uniforms u in [0, 1), shape (n, tau)."""
        u = np.asarray(u, dtype=np.float64)
        code = np.minimum((u * (2 * sketch_size)).astype(np.int64), 2 * sketch_size - 1)
        A = np.zeros((u.shape[0], sketch_size))
        A[np.arange(u.shape[0]), code // 2] = 1.0 - 2.0 * (code % 2)
        return A


def fd_shrink_index(shrink, sketch_size: int) -> int:
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


def _shrink_matrix(gram: np.ndarray, ell: int) -> np.ndarray:
    """``M`` (tau x m) with ``Z M = U sqrt(max(S^2 - s_l^2, 0))`` (non-zero columns only).

    From the eigendecomposition of ``G = Z^T Z = V S^2 V^T``; eigenvalues at or below
    ``max(s_l^2, tau eps s_1^2)`` give zero columns, so m <= l - 1.
    """
    lam, V = np.linalg.eigh(_sym(gram))
    lam, V = lam[::-1], V[:, ::-1]
    top = max(float(lam[0]), 0.0)
    delta = max(float(lam[ell - 1]), 0.0)
    floor = max(delta, gram.shape[0] * np.finfo(np.float64).eps * top)
    keep = lam > floor
    m = int(np.count_nonzero(keep))  # a prefix, since lam is sorted
    factors = np.sqrt(np.maximum(1.0 - delta / lam[:m], 0.0))
    return np.ascontiguousarray(V[:, :m] * factors)


class FrequentDirectionsCovariance(_LowRankSummary):
    """Frequent-directions covariance estimate of OPAUC_fd (G16 §4.1, Alg. 2).

    Deterministic; see the module docstring for the shrink and its guarantee.
    Adding an example costs O(k tau + tau^2); every shrink (at most once per
    tau - l + 1 inserts) costs O(tau^3 + m tau^2) for the m <= d rows of Z that ever
    received a non-zero (``support_``), so at most O(d tau) amortized with
    ``shrink="half"``.

    Parameters
    ----------
    n_features : int
        Dimension d.
    sketch_size : int, default=50
        Number of columns tau (>= 2).
    shrink : {"half", "ceil_0.9"} or int, default="half"
        Which squared singular value is subtracted: index floor(tau/2) (G16 Alg. 2,
        SPEC §3), ceil(0.9 tau) (authors' code: frees about 10% of the columns per
        shrink) or a given index.
    centering : {"g16", "exact"} or None, default=None
        None or "g16": Z sketches the examples, :math:`Z Z^\\top \\preceq X X^\\top`, and the
        estimate is :math:`Z Z^\\top/T - c c^\\top` (G16 Eqs. 10-11), which is indefinite
        wherever the sketch lost more of :math:`X X^\\top` than the class's spread.
        "exact" (a library option, not the paper's): Z sketches the centered examples
        through Welford's rank-one updates of the scatter,
        :math:`M_T = M_{T-1} + \\frac{T-1}{T}(x_T - c_{T-1})(x_T - c_{T-1})^\\top`, so the
        estimate :math:`Z Z^\\top/T` satisfies :math:`0 \\preceq Z Z^\\top/T \\preceq S`
        with the frequent-directions bound on :math:`\\|M - Z Z^\\top\\|_2`. The
        columns' dense mean parts are kept implicitly (``beta_``), so an insert still
        costs O(k tau + tau^2).

    Attributes
    ----------
    count_, sum_, sketch_, gram_
        See :class:`_LowRankSummary`. Columns ``nfill_[0]:`` of the sketch are zero.
    nfill_ : ndarray of shape (1,), int64
        Number of filled (leading) columns.
    frob_ : ndarray of shape (1,)
        :math:`\\|X\\|_F^2` of the inserted examples (for :attr:`error_bound`).
    n_shrinks_ : ndarray of shape (1,), int64
        Number of shrinks so far.
    zs_, ss_ : ndarray of shape (tau,) and (1,)
        :math:`Z^\\top s` and :math:`s^\\top s`, maintained for the centered columns.
    beta_ : ndarray of shape (tau,)
        The sketch is :math:`Z = Y - s \\beta^\\top` with Y in ``sketch_``: the mean
        parts of the centered columns inserted since the last shrink (all zero in the
        G16 form). Use :meth:`sketch_matrix` for Z itself.
    seen_ : ndarray of shape (d,), bool
        Whether row i of Z ever received a non-zero.
    support_, n_support_ : ndarray of shape (d,) and (1,), int64
        Those rows (the first ``n_support_[0]`` entries); a shrink visits only them.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.covariance import FrequentDirectionsCovariance
    >>> X = np.random.default_rng(0).normal(size=(100, 6))
    >>> s = FrequentDirectionsCovariance(6, sketch_size=4).update(X)
    >>> err = np.linalg.norm(X.T @ X - s.scatter, 2)
    >>> bool(err <= s.error_bound <= (X**2).sum() / 2)
    True
    """

    _CENTERINGS = ("g16", "exact")

    def __init__(
        self, n_features: int, sketch_size: int = 50, shrink="half", centering: str | None = None
    ):
        centering = "g16" if centering is None else centering
        if centering not in self._CENTERINGS:
            raise ValueError(f"centering must be one of {self._CENTERINGS}, got {centering!r}")
        super().__init__(n_features, _check_sketch_size(sketch_size, minimum=2))
        self.centering = centering
        self.shrink = shrink
        self.shrink_index = fd_shrink_index(shrink, self.sketch_size)
        self.nfill_ = np.zeros(1, dtype=np.int64)
        self.frob_ = np.zeros(1)
        self.n_shrinks_ = np.zeros(1, dtype=np.int64)
        self.seen_ = np.zeros(self.n_features, dtype=np.bool_)
        self.support_ = np.zeros(self.n_features, dtype=np.int64)
        self.n_support_ = np.zeros(1, dtype=np.int64)
        self.zs_ = np.zeros(self.sketch_size)
        self.ss_ = np.zeros(1)
        self.beta_ = np.zeros(self.sketch_size)

    def fd_arrays(self) -> tuple:
        """``(nfill_, frob_, seen_, support_, n_support_, zs_, ss_, beta_)`` as the
        kernels take them."""
        return (
            self.nfill_,
            self.frob_,
            self.seen_,
            self.support_,
            self.n_support_,
            self.zs_,
            self.ss_,
            self.beta_,
        )

    def sketch_matrix(self) -> np.ndarray:
        """Z = ``sketch_ - sum_ beta_^T`` (a new d x tau array when beta_ is non-zero)."""
        if not self.beta_.any():
            return self.sketch_
        return self.sketch_ - np.outer(self.sum_, self.beta_)

    def sketch_dot(self, p: np.ndarray) -> np.ndarray:
        return self.sketch_ @ p - self.sum_ * float(self.beta_ @ p)

    def settle(self) -> None:
        """Fold ``- sum_ beta_^T`` into ``sketch_`` in place (Z unchanged up to
        rounding); O(|support| tau), no temporary."""
        if self.beta_.any():
            _fd_settle(self.sketch_, self.sum_, self.beta_, self.support_[: self.n_support_[0]])
            self.beta_[:] = 0.0

    def _center_terms(self, zv, cv):
        if self.centering == "exact":  # Z already sketches the centered examples
            return zv / self.count, 0.0
        return zv / self.count, cv

    def _refresh_gram(self) -> None:
        super()._refresh_gram()
        self.zs_[:] = self.sketch_matrix().T @ self.sum_
        self.ss_[0] = self.sum_ @ self.sum_

    @property
    def error_bound(self) -> float:
        """:math:`(\\|X\\|_F^2 - \\|Z\\|_F^2)/\\ell \\ge \\|X^\\top X - Z Z^\\top\\|_2`
        (centered: X holds the centered examples, and :math:`X^\\top X` is the scatter)."""
        return max(float(self.frob_[0] - np.trace(self.gram_)), 0.0) / self.shrink_index

    def update(self, X: ArrayLike):
        """Insert the rows of ``X`` (Alg. 2: insert, then shrink when full); returns self."""
        indptr, indices, data, d = csr_arrays(X)
        self._check_dim(d)
        n = indptr.shape[0] - 1
        r = 0
        while r < n:
            r = _fd_add_rows(
                self.count_,
                self.sum_,
                self.sketch_,
                self.gram_,
                *self.fd_arrays(),
                indptr,
                indices,
                data,
                r,
                self.centering == "exact",
            )
            if self.nfill_[0] == self.sketch_size:
                self.shrink_now()
        return self

    def shrink_now(
        self, dump_coef: np.ndarray | None = None, dump_out: np.ndarray | None = None
    ) -> np.ndarray:
        """Shrink the sketch (second step of Alg. 2); return the tau x m matrix M.

        The new sketch is ``Z M`` in its first m columns (zeros after), and the new
        Gram matrix ``M^T G M``. If ``dump_coef`` is given, ``Z @ dump_coef`` (with the
        old Z) is added to ``dump_out`` in the same pass over the rows (used by
        OPAUC's kernel).
        """
        M = _shrink_matrix(self.gram_, self.shrink_index)
        rows = self.support_[: self.n_support_[0]]  # every other row of Z is zero
        rows[:] = np.sort(rows, kind="stable")  # sorted prefix + short tail: O(support)
        dump = dump_coef is not None
        _fd_shrink_rows(
            self.sketch_,
            self.sum_,
            self.beta_,
            rows,
            M,
            dump_coef if dump else np.zeros(self.sketch_size),
            dump_out if dump else self.sum_,
            dump,
        )
        self.beta_[:] = 0.0
        m = M.shape[1]
        gram = M.T @ self.gram_ @ M
        self.gram_[:] = 0.0
        self.gram_[:m, :m] = _sym(gram)
        zs = M.T @ self.zs_
        self.zs_[:] = 0.0
        self.zs_[:m] = zs
        self.nfill_[0] = m
        self.n_shrinks_[0] += 1
        return M

    def _new_like(self):
        return FrequentDirectionsCovariance(
            self.n_features, self.sketch_size, self.shrink, self.centering
        )

    def merge(self, other: FrequentDirectionsCovariance) -> FrequentDirectionsCovariance:
        """A frequent-directions sketch of both streams (a new object).

        The filled columns of both sketches are put side by side; if that leaves no
        zero column, one shrink of the combined matrix at the same index l follows.
        This is a frequent-directions run over the examples of the first stream
        followed by the sketch columns of the second, so the guarantee holds for the
        union: :math:`\\|X^\\top X - Z Z^\\top\\|_2 \\le (\\|X\\|_F^2 - \\|Z\\|_F^2)/\\ell`
        with X all the examples of both streams (the two sketching errors add, and
        the merge shrink removes at least l times what it subtracts). Centered
        sketches add the column :math:`\\sqrt{T_1 T_2/T}\\,(c_1 - c_2)`: the centered
        scatter of the union is :math:`M_1 + M_2 + \\frac{T_1T_2}{T}(c_1 - c_2)(c_1 -
        c_2)^\\top`.
        """
        self._check_merge(other)
        if other.centering != self.centering:
            raise ValueError("cannot merge sketches with different centering")
        merged = self._new_like()
        merged.count_[:] = self.count_ + other.count_
        merged.sum_[:] = self.sum_ + other.sum_
        merged.frob_[:] = self.frob_ + other.frob_
        merged.n_shrinks_[:] = self.n_shrinks_ + other.n_shrinks_
        for part in (self, other):
            new_rows = part.support_[: part.n_support_[0]]
            new_rows = new_rows[~merged.seen_[new_rows]]
            merged.seen_[new_rows] = True
            n0 = merged.n_support_[0]
            merged.support_[n0 : n0 + new_rows.shape[0]] = new_rows
            merged.n_support_[0] = n0 + new_rows.shape[0]
        cols = [
            self.sketch_matrix()[:, : self.nfill_[0]],
            other.sketch_matrix()[:, : other.nfill_[0]],
        ]
        t1, t2 = self.count, other.count
        if self.centering == "exact" and t1 > 0 and t2 > 0:
            between = np.sqrt(t1 * t2 / (t1 + t2)) * (self.mean - other.mean)
            if np.any(between):
                cols.append(between[:, None])
                merged.frob_[0] += between @ between
        cols = np.hstack(cols)
        m = cols.shape[1]
        if m < self.sketch_size:
            merged.sketch_[:, :m] = cols
            merged.nfill_[0] = m
        else:
            M = _shrink_matrix(cols.T @ cols, self.shrink_index)
            merged.sketch_[:, : M.shape[1]] = cols @ M
            merged.nfill_[0] = M.shape[1]
            merged.n_shrinks_[0] += 1
        merged._refresh_gram()
        return merged


# ==================================================================== sparsified P
_EMPTY = -1
_LOW32 = 0xFFFFFFFF
#: Entries reserved above the pre-prune maximum for one example's new entries.
_SPARSE_RESERVE = 1 << 15
#: Maximal load factor of the hash index.
_SPARSE_LOAD = 0.75


@nb.njit(cache=True)
def _sp_slot(key, size):
    """Home slot of a key: splitmix64 finalizer, then multiply-shift onto [0, size)."""
    z = np.uint64(key) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.int64(((z >> np.uint64(32)) * np.uint64(size)) >> np.uint64(32))


@nb.njit(cache=True)
def _sp_cost(key):
    """1 for a diagonal entry, 2 for an off-diagonal pair (i, j) and (j, i)."""
    return 1 if (key >> 32) == (key & _LOW32) else 2


@nb.njit(cache=True)
def _sp_key(i, j):
    if i <= j:
        return (i << 32) | j
    return (j << 32) | i


@nb.njit(cache=True)
def _sp_locate(keys, vals, index, info, key):
    """Position of ``key`` in the entry arrays, appended (value 0) if absent.

    ``info = [nnz, cost, prunes]``; the caller guarantees room for one more entry.
    """
    size = index.shape[0]
    s = _sp_slot(key, size)
    while True:
        pos = index[s]
        if pos < 0:
            pos = info[0]
            keys[pos] = key
            vals[pos] = 0.0
            index[s] = pos
            info[0] = pos + 1
            info[1] += _sp_cost(key)
            return pos
        if keys[pos] == key:
            return pos
        s += 1
        if s == size:
            s = 0


@nb.njit(cache=True)
def _sp_get(keys, vals, index, key):
    """Stored value of ``key`` (0 if absent)."""
    size = index.shape[0]
    s = _sp_slot(key, size)
    while True:
        pos = index[s]
        if pos < 0:
            return 0.0
        if keys[pos] == key:
            return vals[pos]
        s += 1
        if s == size:
            s = 0


@nb.njit(cache=True)
def _sp_reindex(keys, index, nnz):
    """Rebuild the hash index of the first ``nnz`` entries."""
    index[:] = _EMPTY
    size = index.shape[0]
    for pos in range(nnz):
        s = _sp_slot(keys[pos], size)
        while index[s] >= 0:
            s += 1
            if s == size:
                s = 0
        index[s] = pos


@nb.njit(cache=True)
def sparse_add(count, sums, keys, vals, index, info, idx, val):
    """``P += x x^T`` (upper triangle), ``s += x``, ``T += 1``; O(k^2). Zeros skipped."""
    count[0] += 1
    k = idx.shape[0]
    for a in range(k):
        va = val[a]
        if va == 0.0:
            continue
        i = idx[a]
        sums[i] += va
        for b in range(a, k):
            vb = val[b]
            if vb == 0.0:
                continue
            pos = _sp_locate(keys, vals, index, info, _sp_key(i, idx[b]))
            vals[pos] += va * vb


@nb.njit(cache=True)
def sparse_prune(keys, vals, index, info, budget):
    """Keep the entries of largest magnitude whose cost fits ``budget`` (Alg. 3 line 8).

    Entries strictly above the threshold magnitude are kept, threshold ties in
    insertion order while the budget allows; the survivors keep their order. The
    threshold comes from a radix select over the magnitudes' bit patterns.
    """
    if info[1] <= budget:
        return
    nnz = info[0]
    bits = vals.view(np.uint64)
    absmask = np.uint64(0x7FFFFFFFFFFFFFFF)
    digit = np.uint64(0xFFFF)
    hist = np.zeros(65536, dtype=np.int64)
    prefix = np.uint64(0)
    pmask = np.uint64(0)
    remaining = budget  # cost still available inside the current prefix bucket
    for shift in (48, 32, 16, 0):
        sh = np.uint64(shift)
        hist[:] = 0
        for pos in range(nnz):
            m = bits[pos] & absmask
            if (m & pmask) == prefix:
                hist[np.int64((m >> sh) & digit)] += _sp_cost(keys[pos])
        acc = 0
        b = 65535
        while b > 0 and acc + hist[b] <= remaining:
            acc += hist[b]
            b -= 1
        remaining -= acc
        prefix = prefix | (np.uint64(b) << sh)
        pmask = pmask | (digit << sh)
    kept = 0
    cost = 0
    for pos in range(nnz):
        m = bits[pos] & absmask
        c = _sp_cost(keys[pos])
        if m < prefix:
            continue
        if m == prefix:
            if c > remaining:
                continue
            remaining -= c
        keys[kept] = keys[pos]
        vals[kept] = vals[pos]
        kept += 1
        cost += c
    info[0] = kept
    info[1] = cost
    info[2] += 1
    _sp_reindex(keys, index, kept)


@nb.njit(cache=True)
def sparse_room(info, capacity, full, idx, val):
    """Whether one more example surely fits in ``capacity`` stored entries."""
    k = 0
    for a in range(idx.shape[0]):
        if val[a] != 0.0:
            k += 1
    need = info[0] + k * (k + 1) // 2
    return min(need, full) <= capacity


@nb.njit(cache=True)
def sparsified_add(count, sums, keys, vals, index, info, idx, val, budget, trigger, full):
    """Alg. 3 lines 6-9 for one example: add :math:`x x^\\top`, prune if over ``trigger``.

    Returns False (and changes nothing) if the entry arrays have no room for the
    example even after pruning; the caller grows them and calls again.
    """
    capacity = keys.shape[0]
    if not sparse_room(info, capacity, full, idx, val):
        sparse_prune(keys, vals, index, info, budget)
        if not sparse_room(info, capacity, full, idx, val):
            return False
    sparse_add(count, sums, keys, vals, index, info, idx, val)
    if info[1] > trigger:
        sparse_prune(keys, vals, index, info, budget)
    return True


@nb.njit(cache=True)
def sparse_scatter_matvec(keys, vals, nnz, v, out):
    """``out = P v`` for the symmetric P stored as its upper triangle; O(nnz + d)."""
    out[:] = 0.0
    sparse_scatter_add(keys, vals, nnz, v, out)


@nb.njit(cache=True)
def sparse_scatter_add(keys, vals, nnz, v, out):
    """``out += P v`` for the symmetric P stored as its upper triangle; O(nnz)."""
    for pos in range(nnz):
        key = keys[pos]
        i = key >> 32
        j = key & _LOW32
        x = vals[pos]
        out[i] += x * v[j]
        if i != j:
            out[j] += x * v[i]


@nb.njit(cache=True)
def sparse_cov_matvec(count, sums, keys, vals, info, v, out):
    """Write ``Gamma v = P v / T - c (c^T v)`` into ``out``; return ``c^T v``."""
    t = count[0]
    if t == 0:
        out[:] = 0.0
        return 0.0
    inv_t = 1.0 / t
    sparse_scatter_matvec(keys, vals, info[0], v, out)
    cv = 0.0
    for i in range(v.shape[0]):
        cv += sums[i] * v[i]
    cv *= inv_t
    for i in range(v.shape[0]):
        out[i] = out[i] * inv_t - sums[i] * inv_t * cv
    return cv


@nb.njit(cache=True)
def _sparse_add_rows(
    count, sums, keys, vals, index, info, indptr, indices, data, start, budget, trigger, full
):
    for r in range(start, indptr.shape[0] - 1):
        lo, hi = indptr[r], indptr[r + 1]
        if not sparsified_add(
            count, sums, keys, vals, index, info, indices[lo:hi], data[lo:hi], budget, trigger, full
        ):
            return r
    return indptr.shape[0] - 1


@nb.njit(cache=True)
def _sp_insert_all(keys, vals, index, info, src_keys, src_vals, src_nnz):
    """Add the first ``src_nnz`` entries of other entry arrays, in their order."""
    for s in range(src_nnz):
        pos = _sp_locate(keys, vals, index, info, src_keys[s])
        vals[pos] += src_vals[s]


def _entries_at_cost(n_features: int, cost: int) -> int:
    """The most entries an upper triangle of total cost ``cost`` can hold."""
    diag = min(n_features, cost)
    return min(diag + (cost - diag) // 2, n_features * (n_features + 1) // 2)


def _index_size(capacity: int) -> int:
    size = max(math.ceil(capacity / _SPARSE_LOAD), capacity + 1, 8)
    if size >= 1 << 31:
        raise MemoryError(f"a sparse summary of {capacity} entries is too large")
    return size


class SparsifiedCovariance(CovarianceSummary):
    """Sparse covariance estimate of OPAUC_s (G16 §4.2, Alg. 3, Eqs. 16-17).

    :math:`P \\approx \\sum x_i x_i^\\top` keeps at most :math:`d\\tau` non-zeros: after
    adding :math:`x x^\\top`, only the entries of largest magnitude are kept (see the
    module docstring for the symmetric selection, the storage and ``prune_slack``).
    The estimate is :math:`P/T - c c^\\top`. Adding an example with k non-zeros costs
    O(k^2) (plus O(nnz) for a prune); the product costs O(nnz(P)) <= O(d tau); memory
    is O(d tau) whatever the stream length. With :math:`\\tau \\ge d` nothing is ever
    pruned and the summary is exact.

    Parameters
    ----------
    n_features : int
        Dimension d.
    sketch_size : int, default=50
        tau: the budget is :math:`d\\tau` non-zeros of the symmetric P (G16 §7.3).
    prune_slack : float, default=0.1
        Prune when the stored cost exceeds ``(1 + prune_slack) * d * tau``, back to
        ``d * tau``. 0 reproduces Alg. 3 exactly (a prune after every example once the
        budget is full); the default amortizes the O(nnz) selection.

    Attributes
    ----------
    count_ : ndarray of shape (1,), int64
        Number of examples T.
    sum_ : ndarray of shape (d,)
        :math:`\\sum x_i`.
    keys_ : ndarray of shape (capacity,), int64
        Entry keys ``(i << 32) | j`` with i <= j, in insertion order; the first
        ``info_[0]`` are in use.
    values_ : ndarray of shape (capacity,)
        :math:`P_{ij}` of those keys.
    index_ : ndarray of shape (about capacity / 0.75,), int32
        Open-addressing hash index (linear probing) from key to position; -1 = empty.
    info_ : ndarray of shape (3,), int64
        ``[stored entries, stored cost, number of prunes]``.
    budget, trigger, full : int
        :math:`d\\tau`, the cost that triggers a prune, and d(d+1)/2.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.covariance import SparsifiedCovariance
    >>> X = np.random.default_rng(0).normal(size=(50, 8))
    >>> s = SparsifiedCovariance(8, sketch_size=3, prune_slack=0.0).update(X)
    >>> s.cost <= 8 * 3, int(np.count_nonzero(s.scatter)) <= 8 * 3
    (True, True)
    """

    def __init__(self, n_features: int, sketch_size: int = 50, prune_slack: float = 0.1):
        if not (np.isfinite(prune_slack) and prune_slack >= 0):
            raise ValueError(f"prune_slack must be a non-negative number, got {prune_slack!r}")
        self.n_features = int(n_features)
        self.sketch_size = _check_sketch_size(sketch_size)
        self.prune_slack = float(prune_slack)
        d = self.n_features
        self.full = d * (d + 1) // 2
        self.budget = d * self.sketch_size
        self.trigger = int(math.floor((1.0 + self.prune_slack) * self.budget))
        self._allocate(min(self.full, _entries_at_cost(d, self.trigger) + _SPARSE_RESERVE))

    def _allocate(self, capacity: int) -> None:
        """Empty state with entry arrays for ``capacity`` entries."""
        self.count_ = np.zeros(1, dtype=np.int64)
        self.sum_ = np.zeros(self.n_features)
        self.keys_ = np.zeros(capacity, dtype=np.int64)
        self.values_ = np.zeros(capacity)
        self.index_ = np.full(_index_size(capacity), _EMPTY, dtype=np.int32)
        self.info_ = np.zeros(3, dtype=np.int64)

    @property
    def capacity(self) -> int:
        """Number of entries the arrays hold."""
        return int(self.keys_.shape[0])

    @property
    def nnz(self) -> int:
        """Number of stored entries of the upper triangle of P."""
        return int(self.info_[0])

    @property
    def cost(self) -> int:
        """Non-zeros of the symmetric P (diagonal 1, off-diagonal pairs 2)."""
        return int(self.info_[1])

    @property
    def n_prunes(self) -> int:
        """Number of prunes so far."""
        return int(self.info_[2])

    def entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(rows, cols, values)`` of the stored upper triangle, in insertion order."""
        keys = self.keys_[: self.nnz]
        return keys >> 32, keys & _LOW32, self.values_[: self.nnz].copy()

    def _resize(self, capacity: int) -> None:
        """Move the entries to arrays for ``capacity`` entries (order kept)."""
        n = self.nnz
        keys = np.zeros(capacity, dtype=np.int64)
        vals = np.zeros(capacity)
        keys[:n] = self.keys_[:n]
        vals[:n] = self.values_[:n]
        self.keys_, self.values_ = keys, vals
        self.index_ = np.full(_index_size(capacity), _EMPTY, dtype=np.int32)
        _sp_reindex(self.keys_, self.index_, n)

    def _grow(self, extra: int) -> None:
        """Enlarge the arrays to hold ``extra`` more entries."""
        self._resize(min(self.full, max(2 * self.capacity, self.nnz + extra)))

    def update(self, X: ArrayLike) -> SparsifiedCovariance:
        """Add the rows of ``X`` (dense or sparse); returns self."""
        indptr, indices, data, d = csr_arrays(X)
        self._check_dim(d)
        n = indptr.shape[0] - 1
        r = 0
        while True:
            r = self._add_rows(r, indptr, indices, data)
            if r == n:
                return self
            k = int(np.count_nonzero(data[indptr[r] : indptr[r + 1]]))
            self._grow(k * (k + 1) // 2)

    def _add_rows(self, start: int, indptr, indices, data) -> int:
        """Add rows from ``start``; return the first that needs more room (or n)."""
        return _sparse_add_rows(
            self.count_,
            self.sum_,
            self.keys_,
            self.values_,
            self.index_,
            self.info_,
            indptr,
            indices,
            data,
            start,
            self.budget,
            self.trigger,
            self.full,
        )

    @property
    def scatter(self) -> np.ndarray:
        """P as a dense d x d array (forms it: for inspection and tests)."""
        rows, cols, vals = self.entries()
        P = np.zeros((self.n_features, self.n_features))
        P[rows, cols] = vals
        P[cols, rows] = vals
        return P

    def scatter_matvec(self, v: ArrayLike) -> np.ndarray:
        """:math:`P v`; O(nnz)."""
        v = np.ascontiguousarray(v, dtype=np.float64)
        self._check_dim(v.shape[0])
        out = np.empty(self.n_features)
        sparse_scatter_matvec(self.keys_, self.values_, self.nnz, v, out)
        return out

    def matvec(self, v: ArrayLike) -> np.ndarray:
        """The product ``Gamma v = P v / T - c (c^T v)`` without forming anything."""
        v = np.ascontiguousarray(v, dtype=np.float64)
        self._check_dim(v.shape[0])
        out = np.empty(self.n_features)
        sparse_cov_matvec(self.count_, self.sum_, self.keys_, self.values_, self.info_, v, out)
        return out

    def merge(self, other: SparsifiedCovariance) -> SparsifiedCovariance:
        """The sparsification of the sum of both summaries (a new object).

        :math:`P = \\mathrm{prune}(P_a + P_b)` to :math:`d\\tau` non-zeros. By the
        triangle inequality the error with respect to all the examples is at most the
        two summaries' errors plus the Frobenius norm of what this prune drops.
        """
        if not isinstance(other, SparsifiedCovariance):
            raise TypeError(f"cannot merge SparsifiedCovariance with {type(other).__name__}")
        self._check_dim(other.n_features)
        if other.sketch_size != self.sketch_size:
            raise ValueError(
                f"cannot merge summaries of sizes {self.sketch_size} and {other.sketch_size}"
            )
        merged = SparsifiedCovariance(self.n_features, self.sketch_size, self.prune_slack)
        standard = merged.capacity
        merged.count_[:] = self.count_ + other.count_
        merged.sum_[:] = self.sum_ + other.sum_
        union = min(self.full, self.nnz + other.nnz)
        if union > standard:
            merged._resize(union)
        for part in (self, other):
            _sp_insert_all(
                merged.keys_,
                merged.values_,
                merged.index_,
                merged.info_,
                part.keys_,
                part.values_,
                part.nnz,
            )
        pruned = merged.cost > merged.budget
        sparse_prune(merged.keys_, merged.values_, merged.index_, merged.info_, merged.budget)
        if merged.capacity != standard:
            merged._resize(standard)
        merged.info_[2] = self.info_[2] + other.info_[2] + int(pruned)
        return merged


@nb.njit(cache=True)
def exact_sparse_add(summary, idx, val):
    """Add one example to an :class:`ExactSparseCovariance` (its ``arrays()`` tuple):
    :math:`P \\mathrel{+}= x x^\\top`, :math:`s \\mathrel{+}= x`, and the features seen
    for the first time join the support. O(k^2); the caller guarantees room
    (:func:`sparse_room`). Zeros are skipped."""
    count, sums, keys, vals, index, info, seen, support, n_support = summary
    sparse_add(count, sums, keys, vals, index, info, idx, val)
    _track_support(seen, support, n_support, idx, val)


@nb.njit(cache=True)
def _track_support(seen, support, n_support, idx, val):
    for a in range(idx.shape[0]):
        i = idx[a]
        if val[a] != 0.0 and not seen[i]:
            seen[i] = True
            support[n_support[0]] = i
            n_support[0] += 1


@nb.njit(cache=True)
def _exact_sparse_add_rows(summary, start, indptr, indices, data):
    """Add rows from ``start``; return the first row that needs more room (or n)."""
    info, capacity, d = summary[5], summary[2].shape[0], summary[1].shape[0]
    full = d * (d + 1) // 2
    for r in range(start, indptr.shape[0] - 1):
        lo, hi = indptr[r], indptr[r + 1]
        if not sparse_room(info, capacity, full, indices[lo:hi], data[lo:hi]):
            return r
        exact_sparse_add(summary, indices[lo:hi], data[lo:hi])
    return indptr.shape[0] - 1


class ExactSparseCovariance(SparsifiedCovariance):
    """Exact count, mean and covariance of a stream with a sparse scatter matrix.

    The P-form of SPEC C2 as D16 §3.3 prescribes for SAdaOAM: the sum
    :math:`s = \\sum x_i` and :math:`P = \\sum x_i x_i^\\top`, in the storage of
    :class:`SparsifiedCovariance` without a budget (nothing is ever pruned; the arrays
    start small and double as P fills), so only co-occurring feature pairs take
    memory. It also records the feature support (the rows of P that are non-zero),
    which SAdaOAM's lazy updates need. ``Gamma v = P v / T - c (c^T v)`` costs
    O(nnz(P) + d); adding an example with k non-zeros costs O(k^2). Memory grows
    with the number of distinct co-occurring pairs, at most d(d+1)/2 entries.

    Parameters
    ----------
    n_features : int
        Dimension d of the examples.
    capacity : int, default=64
        Initial number of stored entries; grows by doubling.

    Attributes
    ----------
    count_, sum_, keys_, values_, index_, info_
        As for :class:`SparsifiedCovariance` (``info_[2]``, the prunes, stays 0).
    seen_ : ndarray of shape (d,), bool
        Whether a feature was ever non-zero (its row of P is non-zero).
    support_ : ndarray of shape (d,), int64
        Those features in order of first appearance; the first ``n_support_[0]``.
    n_support_ : ndarray of shape (1,), int64
        Size of the support.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.covariance import ExactSparseCovariance
    >>> X = np.random.default_rng(0).normal(size=(100, 3))
    >>> s = ExactSparseCovariance(3).update(X)
    >>> np.allclose(s.matvec(np.ones(3)), np.cov(X.T, bias=True) @ np.ones(3))
    True
    >>> s.nnz  # upper triangle of a dense 3 x 3 scatter
    6
    """

    def __init__(self, n_features: int, capacity: int = 64):
        d = self.n_features = int(n_features)
        self.sketch_size = None
        self.prune_slack = 0.0
        self.full = self.budget = self.trigger = d * (d + 1) // 2  # never prunes
        self._allocate(min(max(int(capacity), 1), max(self.full, 1)))
        self.seen_ = np.zeros(d, dtype=np.bool_)
        self.support_ = np.zeros(d, dtype=np.int64)
        self.n_support_ = np.zeros(1, dtype=np.int64)

    def arrays(self) -> tuple:
        """The state arrays in the order the compiled functions take them."""
        return (
            self.count_,
            self.sum_,
            self.keys_,
            self.values_,
            self.index_,
            self.info_,
            self.seen_,
            self.support_,
            self.n_support_,
        )

    def grow_for(self, k: int) -> None:
        """Make room for one more example with ``k`` stored values."""
        if self.nnz + k * (k + 1) // 2 > self.capacity:
            self._grow(k * (k + 1) // 2)

    def _add_rows(self, start: int, indptr, indices, data) -> int:
        return _exact_sparse_add_rows(self.arrays(), start, indptr, indices, data)

    def merge(self, other: ExactSparseCovariance) -> ExactSparseCovariance:
        """The exact summary of both streams together (a new object)."""
        if not isinstance(other, ExactSparseCovariance):
            raise TypeError(f"cannot merge ExactSparseCovariance with {type(other).__name__}")
        self._check_dim(other.n_features)
        merged = ExactSparseCovariance(self.n_features, capacity=max(self.nnz + other.nnz, 1))
        for part in (self, other):
            _sp_insert_all(
                merged.keys_,
                merged.values_,
                merged.index_,
                merged.info_,
                part.keys_,
                part.values_,
                part.nnz,
            )
            merged.count_ += part.count_
            merged.sum_ += part.sum_
            support = part.support_[: part.n_support_[0]]
            _track_support(
                merged.seen_, merged.support_, merged.n_support_, support, np.ones(support.shape[0])
            )
        return merged


# ============================================================================ factory
#: Summary kinds accepted by :func:`make_covariance` and ``OPAUC(covariance=...)``.
COVARIANCE_KINDS = ("full", "randomized", "fd", "sparse", "hash")


def make_covariance(kind: str, n_features: int, sketch_size: int = 50, **options):
    """A summary of the given kind.

    Parameters
    ----------
    kind : {"full", "randomized", "fd", "sparse", "hash"}
        :class:`FullCovariance`, :class:`RandomizedCovariance`,
        :class:`FrequentDirectionsCovariance`, :class:`SparsifiedCovariance` or
        :class:`HashedCovariance`.
    n_features : int
        Dimension d.
    sketch_size : int, default=50
        tau (ignored by "full").
    **options
        ``centering`` (randomized, hash, fd; None for each paper's form), ``shrink``
        (fd), ``prune_slack`` (sparse).

    Returns
    -------
    CovarianceSummary
    """
    if kind == "full":
        return FullCovariance(n_features)
    if kind == "randomized":
        return RandomizedCovariance(n_features, sketch_size, options.get("centering"))
    if kind == "fd":
        return FrequentDirectionsCovariance(
            n_features, sketch_size, options.get("shrink", "half"), options.get("centering")
        )
    if kind == "sparse":
        return SparsifiedCovariance(n_features, sketch_size, options.get("prune_slack", 0.1))
    if kind == "hash":
        return HashedCovariance(n_features, sketch_size, options.get("centering"))
    raise ValueError(f"covariance must be one of {COVARIANCE_KINDS}, got {kind!r}")
