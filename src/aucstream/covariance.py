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

:class:`FullCovariance` is exact. It keeps the "P-form" of SPEC C2: the sum
:math:`s = \\sum x_i` and the scatter :math:`P = \\sum x_i x_i^\\top`, and computes
:math:`\\Gamma v = P v / T - c\\,(c^\\top v)` with :math:`c = s/T`, never forming
:math:`c c^\\top`. Adding an example with k non-zeros costs O(k^2), so sparse input is
never densified; the product costs O(d^2). In exact arithmetic this equals the
recursion of Gao et al. (2016, §3, text after Alg. 1), and merging two summaries is
exact (add the sums). Deviation: the recursion updates :math:`\\Gamma` in place at
O(d^2) per example even for sparse x; the P-form is cheaper on sparse data and
merges exactly, at the price of a cancellation error of order
:math:`\\epsilon \\|c\\|^2` in float64, which is negligible for scaled features.

The per-example functions are numba-compiled so that learner kernels call them
inside their own compiled loops.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numpy.typing import ArrayLike

from ._chunks import csr_arrays

__all__ = ["CovarianceSummary", "FullCovariance", "full_add", "full_cov_matvec"]


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
    def mean(self) -> np.ndarray:
        """Class mean c (zeros while empty)."""
        return self.sum_ / max(self.count, 1)

    @property
    def covariance(self) -> np.ndarray:
        """The d x d covariance with 1/T normalization (forms it: for inspection)."""
        c = self.mean
        return self.scatter_ / max(self.count, 1) - np.outer(c, c)

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
