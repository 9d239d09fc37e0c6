r"""Sparse scatter matrices: sparsified (OPAUC_s) and exact (SAdaOAM).

Both keep :math:`P = \sum x_i x_i^\top` as the entries of its upper triangle in a hash
table (:mod:`._hashtable`), so only co-occurring feature pairs take memory, and
compute :math:`\Gamma v = P v/T - c\,(c^\top v)` in O(nnz(P) + d). Stored zeros of the
input (dense rows) are skipped, so dense and sparse input give the same summary.

:class:`SparsifiedCovariance` (G16 §4.2, Alg. 3, Eqs. 16-17)
    After adding :math:`x x^\top`, only the :math:`d\tau` entries of largest
    magnitude are kept: the Frobenius-optimal sparse approximation of the current P
    (G16 §4.2). Alg. 3 prunes after every example that makes nnz(P) exceed
    :math:`d\tau`, at O(nnz(P)) each time; we let the stored cost grow to
    :math:`(1 + \text{prune\_slack})\,d\tau` and then prune back to :math:`d\tau`
    (``prune_slack=0`` is Alg. 3 exactly). The selection is by magnitude and
    symmetric: the budget counts the non-zeros of the full symmetric P (a diagonal
    entry costs 1, an off-diagonal pair 2), so P stays symmetric. (The authors' code
    keeps the entries above a signed threshold found by bisection, the same for the
    non-negative features of text data.) The arrays are allocated once for the most
    entries the budget can hold before a prune: memory O(d tau), about 16 + 4/0.75
    bytes per entry, independent of the stream. An example with so many non-zeros
    that its k(k+1)/2 new entries would not fit first prunes (if over budget) and
    otherwise grows the arrays.

:class:`ExactSparseCovariance` (D16 §3.3)
    The same storage without a budget (nothing is ever pruned; the arrays start small
    and double as P fills), plus the feature support, for SAdaOAM: D16 §3.3 keeps the
    mean and the sum of outer products of each class, :math:`\Gamma = P/T - c
    c^\top`.
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._chunks import csr_arrays
from .._kernels import jit
from .._typing import Matrix
from ._base import (
    CovarianceSummary,
    add_example,
    add_rows,
    borrowing_njit,
    borrowing_step,
    check_n_features,
    check_sample_weight,
    check_sketch_size,
    compiled_step,
    cov_from_scatter_product,
    cov_matvec,
    register,
    track_support,
)
from ._checks import (
    check_array,
    check_count,
    check_derived,
    check_empty,
    check_float_setting,
    check_int_setting,
    check_moments,
    check_support,
    check_table,
    check_weight,
    check_zero_outside,
)
from ._hashtable import (
    EMPTY,
    LOW32,
    EntryTable,
    entry_key,
    frobenius_sq,
    index_size,
    insert_all,
    keep_largest,
    locate,
    lookup,
    reindex,
    sparse_scatter_add,
)

__all__ = [
    "ExactSparseArrays",
    "ExactSparseCovariance",
    "SparseArrays",
    "SparsifiedCovariance",
    "exact_sparse_add",
    "sparse_add",
    "sparse_cov_matvec",
    "sparse_prune",
    "sparse_room",
    "sparsified_add",
]

#: The arrays of a :class:`SparsifiedCovariance` as its compiled functions take them:
#: count, sum, the entry table, and the settings budget (cost kept by a prune),
#: trigger (cost that triggers one) and full (d(d+1)/2 entries: the whole triangle).
SparseArrays = namedtuple(
    "SparseArrays", ["count", "weight", "sums", "table", "budget", "trigger", "full"]
)

#: The arrays of an :class:`ExactSparseCovariance`: no budget, plus the support.
ExactSparseArrays = namedtuple(
    "ExactSparseArrays",
    ["count", "weight", "sums", "table", "full", "seen", "support", "n_support"],
)


@borrowing_step
def sparse_room(arrays, idx, val):
    """Whether the table surely has room for the new entries of one more example."""
    k = 0
    for a in range(idx.shape[0]):
        if val[a] != 0.0:
            k += 1
    need = arrays.table.info[0] + k * (k + 1) // 2
    return min(need, arrays.full) <= arrays.table.keys.shape[0]


@borrowing_step
def sparse_add(arrays, idx, val, omega):
    """``P += omega x x^T`` (upper triangle), ``s += omega x``, ``T += 1``, ``W +=
    omega``; O(k^2). Zeros skipped; the caller made room (:func:`sparse_room`)."""
    keys, vals, index, info = arrays.table
    sums = arrays.sums
    arrays.count[0] += 1
    arrays.weight[0] += omega
    k = idx.shape[0]
    for a in range(k):
        va = val[a]
        if va == 0.0:
            continue
        va = omega * va  # exact when omega = 1
        i = idx[a]
        sums[i] += va
        for b in range(a, k):
            vb = val[b]
            if vb == 0.0:
                continue
            pos = locate(keys, vals, index, info, entry_key(i, idx[b]))
            vals[pos] += va * vb


@jit
def sparse_prune(arrays):
    """Alg. 3 line 8: keep the entries of largest magnitude within the budget."""
    table, budget = arrays.table, arrays.budget
    keep_largest(table, budget)


@compiled_step
def sparsified_add(arrays, idx, val, omega):
    r"""Alg. 3 lines 6-9 for one example: add :math:`x x^\top`, prune if over the
    trigger.

    Returns False (and changes nothing) if the table has no room for the example even
    after pruning; the caller reserves room and calls again.
    """
    if not sparse_room(arrays, idx, val):
        sparse_prune(arrays)
        if not sparse_room(arrays, idx, val):
            return False
    sparse_add(arrays, idx, val, omega)
    if arrays.table.info[1] > arrays.trigger:
        sparse_prune(arrays)
    return True


@borrowing_step
def exact_sparse_add(arrays, idx, val, omega):
    r"""Add one example to an :class:`ExactSparseCovariance`: :math:`P \mathrel{+}= x
    x^\top`, :math:`s \mathrel{+}= x`, and the features seen for the first time join
    the support. O(k^2). Returns False (and changes nothing) if the table has no room;
    the caller reserves room and calls again."""
    if not sparse_room(arrays, idx, val):
        return False
    seen, support, n_support = arrays.seen, arrays.support, arrays.n_support
    sparse_add(arrays, idx, val, omega)
    track_support(seen, support, n_support, idx, val)
    return True


@borrowing_njit
def sparse_cov_matvec(arrays, v, out):
    """Write ``Gamma v = P v / W - c (c^T v)`` into ``out``; return ``c^T v``."""
    table, sums = arrays.table, arrays.sums
    out[:] = 0.0
    sparse_scatter_add(table, v, out)
    return cov_from_scatter_product(arrays.weight, sums, v, out)


register(add_example, (SparseArrays,), lambda arrays, *args: sparsified_add(arrays, *args))
register(add_example, (ExactSparseArrays,), lambda arrays, *args: exact_sparse_add(arrays, *args))
register(
    cov_matvec,
    (SparseArrays, ExactSparseArrays),
    lambda arrays, *args: sparse_cov_matvec(arrays, *args),
)


@borrowing_njit
def _rows_quadratic(table, indptr, indices, data):
    r""":math:`\sum_t x_t^\top P x_t` for the symmetric P of a table."""
    keys, vals, index, _ = table
    total = 0.0
    for r in range(indptr.shape[0] - 1):
        lo, hi = indptr[r], indptr[r + 1]
        for a in range(lo, hi):
            va = data[a]
            if va == 0.0:
                continue
            i = indices[a]
            for b in range(a, hi):
                vb = data[b]
                if vb == 0.0:
                    continue
                p = lookup(keys, vals, index, entry_key(i, indices[b]))
                if p != 0.0:
                    total += (1.0 if a == b else 2.0) * va * vb * p
    return total


def _reserve() -> int:
    """Entries allocated above the pre-prune maximum, for one example's new entries:
    the package setting ``aucstream.covariance._SPARSE_RESERVE``, read at allocation
    (tests lower it to exercise the growth path)."""
    from . import _SPARSE_RESERVE

    return _SPARSE_RESERVE


def _entries_at_cost(n_features: int, cost: int) -> int:
    """The most entries an upper triangle of total cost ``cost`` can hold."""
    diag = min(n_features, cost)
    return min(diag + (cost - diag) // 2, n_features * (n_features + 1) // 2)


class SparsifiedCovariance(CovarianceSummary):
    r"""Sparse covariance estimate of OPAUC_s (G16 §4.2, Alg. 3, Eqs. 16-17).

    :math:`P \approx \sum x_i x_i^\top` keeps at most :math:`d\tau` non-zeros: after
    adding :math:`x x^\top`, only the entries of largest magnitude are kept (see the
    module docstring for the symmetric selection, the storage and ``prune_slack``).
    The estimate is :math:`P/T - c c^\top`. Adding an example with k non-zeros costs
    O(k^2) (plus O(nnz) for a prune); the product costs O(nnz(P)) <= O(d tau); memory
    is O(d tau) whatever the stream length. With :math:`\tau \ge d` nothing is ever
    pruned and the summary is exact.

    Parameters
    ----------
    n_features : int
        Dimension d.
    sketch_size : int, default=50
        tau: the budget is :math:`d\tau` non-zeros of the symmetric P (G16 §7.3).
    prune_slack : float, default=0.1
        Prune when the stored cost exceeds ``(1 + prune_slack) * d * tau``, back to
        ``d * tau``. 0 reproduces Alg. 3 exactly (a prune after every example once the
        budget is full); the default amortizes the O(nnz) selection.

    Attributes
    ----------
    count_ : ndarray of shape (1,), int64
        Number of examples T.
    weight_ : ndarray of shape (1,)
        Their total weight W (= T without example weights; ``update(X,
        sample_weight)`` adds :math:`\omega x` to the sum and :math:`\omega x
        x^\top` to P before the prune, as :class:`FullCovariance` does).
    sum_ : ndarray of shape (d,)
        :math:`\sum x_i`.
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
        :math:`d\tau`, the cost that triggers a prune, and d(d+1)/2.

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
        if isinstance(prune_slack, (bool, np.bool_)) or not (
            isinstance(prune_slack, (int, float, np.number))
            and np.isfinite(prune_slack)
            and prune_slack >= 0
        ):
            raise ValueError(f"prune_slack must be a non-negative number, got {prune_slack!r}")
        self.n_features = check_n_features(n_features)
        self.sketch_size: int | None = check_sketch_size(sketch_size)
        self.prune_slack = float(prune_slack)
        d = self.n_features
        self.full = d * (d + 1) // 2
        self.budget = d * self.sketch_size
        self.trigger = int(math.floor((1.0 + self.prune_slack) * self.budget))
        self._allocate(min(self.full, _entries_at_cost(d, self.trigger) + _reserve()))

    def _allocate(self, capacity: int) -> None:
        """Empty state with entry arrays for ``capacity`` entries."""
        self.count_ = np.zeros(1, dtype=np.int64)
        self.weight_ = np.zeros(1)
        self.sum_ = np.zeros(self.n_features)
        self.keys_ = np.zeros(capacity, dtype=np.int64)
        self.values_ = np.zeros(capacity)
        self.index_ = np.full(index_size(capacity), EMPTY, dtype=np.int32)
        self.info_ = np.zeros(3, dtype=np.int64)

    def _table(self) -> EntryTable:
        return EntryTable(self.keys_, self.values_, self.index_, self.info_)

    def arrays(self) -> SparseArrays:
        """:data:`SparseArrays` of this summary (its own arrays, updated in place)."""
        return SparseArrays(
            self.count_,
            self.weight_,
            self.sum_,
            self._table(),
            self.budget,
            self.trigger,
            self.full,
        )

    #: The entry arrays grow with the stream (:meth:`reserve`): a loaded state may
    #: have any length along their first axis (checked by :meth:`_check_state`).
    _growable_state = ("keys_", "values_", "index_")

    def _check_table_state(self, d: int, full: int) -> tuple:
        """The count, the sum and the entry table (:func:`._checks.check_table`);
        returns (T, rows, cols, values) of the stored entries."""
        t = check_count(self)
        check_array(self, "sum_", (d,), "f")
        entries = check_table(self, d, full)
        check_empty(self, t, ("sum_", "info_"))
        check_weight(self, t)
        return (t, *entries)

    def _check_state(self) -> None:
        """Consistency of a loaded state (:mod:`._checks`): the settings derived from
        ``n_features``, ``sketch_size`` and ``prune_slack`` (``full``, ``budget``,
        ``trigger``), the entry table (keys inside the triangle, the hash index that of
        the keys, the cost that of the entries, within the trigger), a count that is
        not negative, and zeros in an empty summary."""
        d = check_int_setting("n_features", self.n_features, 1)
        tau = check_int_setting("sketch_size", self.sketch_size, 1)
        slack = check_float_setting("prune_slack", self.prune_slack)
        full = d * (d + 1) // 2
        check_derived("full", self.full, full)
        check_derived("budget", self.budget, d * tau)
        check_derived("trigger", self.trigger, int(math.floor((1.0 + slack) * d * tau)))
        self._check_table_state(d, full)
        if self.cost > self.trigger:
            raise ValueError(
                f"info_[1] = {self.cost} stored non-zeros, above the trigger {self.trigger} "
                "that makes the summary prune"
            )

    #: Members that model files written before they existed lack (see
    #: :meth:`_upgrade_state`).
    _state_added_later = ("weight_",)
    _weighted_state = ("weight_", "sum_", "values_")

    def _upgrade_state(self, missing: set) -> None:
        """A summary saved before example weights: every example weighed 1, W = T."""
        if "weight_" in missing:
            self.weight_ = self.count_.astype(np.float64)

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
        return keys >> 32, keys & LOW32, self.values_[: self.nnz].copy()

    def _resize(self, capacity: int) -> None:
        """Move the entries to arrays for ``capacity`` entries (order kept)."""
        n = self.nnz
        keys = np.zeros(capacity, dtype=np.int64)
        vals = np.zeros(capacity)
        keys[:n] = self.keys_[:n]
        vals[:n] = self.values_[:n]
        self.keys_, self.values_ = keys, vals
        self.index_ = np.full(index_size(capacity), EMPTY, dtype=np.int32)
        reindex(self._table(), n)

    def reserve(self, values: ArrayLike) -> None:
        """Make room for one more example with these stored values (before a kernel
        call that returned for lack of room): its k non-zeros add at most k(k+1)/2
        entries. The arrays at least double when they grow."""
        k = int(np.count_nonzero(values))
        extra = k * (k + 1) // 2
        if self.nnz + extra > self.capacity:
            self._resize(min(self.full, max(2 * self.capacity, self.nnz + extra)))

    def prune(self) -> None:
        """Prune to the budget now (Alg. 3 line 8), if the stored cost exceeds it."""
        sparse_prune(self.arrays())

    def update(self, X: ArrayLike, sample_weight: ArrayLike | None = None) -> SparsifiedCovariance:
        """Add the rows of ``X`` (dense or sparse), with optional non-negative weights
        (rows of weight 0 are not added; see :class:`FullCovariance` for the weighted
        statistics); returns self."""
        indptr, indices, data, d = csr_arrays(X, finite=True)
        self._check_dim(d)
        n = indptr.shape[0] - 1
        weights = check_sample_weight(sample_weight, n)
        r = 0
        while True:
            r = add_rows(self.arrays(), indptr, indices, data, weights, r)
            if r == n:
                return self
            self.reserve(data[indptr[r] : indptr[r + 1]])

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
        out = np.zeros(self.n_features)
        sparse_scatter_add(self._table(), self._vector(v), out)
        return out

    def matvec(self, v: ArrayLike) -> np.ndarray:
        """The product ``Gamma v = P v / T - c (c^T v)`` without forming anything."""
        out = np.empty(self.n_features)
        sparse_cov_matvec(self.arrays(), self._vector(v), out)
        return out

    def scatter_inner(self, X: Matrix) -> float:
        r""":math:`\sum_t x_t^\top P x_t` over the rows of X: one lookup per pair of
        non-zeros of each row."""
        indptr, indices, data, d = csr_arrays(X)
        self._check_dim(d)
        return float(_rows_quadratic(self._table(), indptr, indices, data))

    def scatter_frobenius_sq(self) -> float:
        r""":math:`\|P\|_F^2`; O(nnz)."""
        return float(frobenius_sq(self._table()))

    def merge(self, other: Any) -> SparsifiedCovariance:
        r"""The sparsification of the sum of both summaries (a new object).

        :math:`P = \mathrm{prune}(P_a + P_b)` to :math:`d\tau` non-zeros. By the
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
        merged = SparsifiedCovariance(self.n_features, int(self.sketch_size or 0), self.prune_slack)
        standard = merged.capacity
        merged.count_[:] = self.count_ + other.count_
        merged.weight_[:] = self.weight_ + other.weight_
        merged.sum_[:] = self.sum_ + other.sum_
        union = min(self.full, self.nnz + other.nnz)
        if union > standard:
            merged._resize(union)
        for part in (self, other):
            insert_all(merged._table(), part._table())
        pruned = merged.cost > merged.budget
        merged.prune()
        if merged.capacity != standard:
            merged._resize(standard)
        merged.info_[2] = self.info_[2] + other.info_[2] + int(pruned)
        return merged


class ExactSparseCovariance(SparsifiedCovariance):
    r"""Exact count, mean and covariance of a stream with a sparse scatter matrix.

    The P-form of the class covariance (see :class:`FullCovariance`) as D16 §3.3
    prescribes for SAdaOAM: the sum :math:`s = \sum x_i` and :math:`P = \sum x_i
    x_i^\top`, in the storage of :class:`SparsifiedCovariance` without a budget
    (nothing is ever pruned; the arrays start small and double as P fills), so only
    co-occurring feature pairs take memory. It also records the feature support (the
    rows of P that are non-zero), which SAdaOAM's lazy updates need.
    ``Gamma v = P v / T - c (c^T v)`` costs O(nnz(P) + d); adding an example with k
    non-zeros costs O(k^2). Memory grows with the number of distinct co-occurring
    pairs, at most d(d+1)/2 entries.

    Parameters
    ----------
    n_features : int
        Dimension d of the examples.
    capacity : int, default=64
        Initial number of stored entries (>= 1); grows by doubling.

    Attributes
    ----------
    count_, weight_, sum_, keys_, values_, index_, info_
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
        d = self.n_features = check_n_features(n_features)
        if isinstance(capacity, (bool, np.bool_)) or not (
            isinstance(capacity, (int, np.integer)) and capacity >= 1
        ):
            raise ValueError(f"capacity must be an int >= 1, got {capacity!r}")
        self.sketch_size = None  # no pruning budget: exact
        self.prune_slack = 0.0
        self.full = self.budget = self.trigger = d * (d + 1) // 2  # never prunes
        self._allocate(min(int(capacity), self.full))
        self.seen_ = np.zeros(d, dtype=np.bool_)
        self.support_ = np.zeros(d, dtype=np.int64)
        self.n_support_ = np.zeros(1, dtype=np.int64)

    def arrays(self) -> ExactSparseArrays:  # type: ignore[override]  # the exact kind's
        """:data:`ExactSparseArrays` of this summary (its own arrays, updated in place)."""
        return ExactSparseArrays(
            self.count_,
            self.weight_,
            self.sum_,
            self._table(),
            self.full,
            self.seen_,
            self.support_,
            self.n_support_,
        )

    def _check_state(self) -> None:
        r"""Consistency of a loaded state (:mod:`._checks`): the settings (no budget),
        the entry table (as for :class:`SparsifiedCovariance`, and never pruned), the
        support (distinct features in [0, d) marked by ``seen_``: exactly the features
        with a diagonal entry, and every entry's row and column among them; the sum is
        zero outside it), a count that is not negative, and exact second moments
        (:math:`P_{ii} \ge 0`, :math:`s_i^2 \le T P_{ii}`)."""
        d = check_int_setting("n_features", self.n_features, 1)
        full = d * (d + 1) // 2
        if self.sketch_size is not None or self.prune_slack != 0.0:
            raise ValueError(
                f"sketch_size = {self.sketch_size!r} and prune_slack = {self.prune_slack!r}: "
                "an exact summary has no budget (None and 0.0)"
            )
        for name in ("full", "budget", "trigger"):
            check_derived(name, getattr(self, name), full)
        t, rows, cols, values = self._check_table_state(d, full)
        if self.n_prunes != 0:
            raise ValueError(f"info_[2] = {self.n_prunes} prunes; an exact summary never prunes")
        check_support(self, d)
        seen = self.seen_
        if not (np.all(seen[rows]) and np.all(seen[cols])):
            raise ValueError("keys_ holds an entry of a feature outside the support (seen_)")
        diagonal = np.zeros(d, dtype=np.bool_)
        diagonal[rows[rows == cols]] = True
        if not np.array_equal(diagonal, seen):
            raise ValueError("the support (seen_) is not the set of features with a diagonal entry")
        check_zero_outside(self, "sum_", seen)
        p_diag = np.zeros(d)
        p_diag[rows[rows == cols]] = values[rows == cols]
        check_moments(self.sum_, p_diag, check_weight(self, t))

    def prune(self) -> None:
        """Nothing: an exact summary is never pruned."""

    def merge(self, other: Any) -> ExactSparseCovariance:
        """The exact summary of both streams together (a new object)."""
        if not isinstance(other, ExactSparseCovariance):
            raise TypeError(f"cannot merge ExactSparseCovariance with {type(other).__name__}")
        self._check_dim(other.n_features)
        merged = ExactSparseCovariance(self.n_features, capacity=max(self.nnz + other.nnz, 1))
        for part in (self, other):
            insert_all(merged._table(), part._table())
            merged.count_ += part.count_
            merged.weight_ += part.weight_
            merged.sum_ += part.sum_
            support = part.support_[: part.n_support_[0]]
            track_support(
                merged.seen_, merged.support_, merged.n_support_, support, np.ones(len(support))
            )
        return merged
