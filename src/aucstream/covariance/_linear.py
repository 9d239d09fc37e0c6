r"""The linear sketches: randomized (OPAUC_r) and hashed (OPAUC_h).

A linear sketch is :math:`Z = \sum_i x_i a_i^\top` with independent, centered draws
:math:`a_i \in \mathbb R^\tau`, :math:`E\|a_i\|^2 = 1`, so that
:math:`E[Z Z^\top] = X X^\top`. The draws are made per example by the caller (a fixed
number of values per example) and passed in, so splitting a stream into chunks never
changes a summary; only their sum :math:`u = \sum_i a_i` is kept, for the centering.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._chunks import csr_arrays
from .._kernels import jit
from .._rng import make_rng
from .._typing import DType, RandomState
from ._base import borrowing_step
from ._checks import check_array, check_empty
from ._lowrank import (
    CENTER_EXACT,
    CENTER_G13,
    CENTER_G16,
    _LowRankSummary,
    gram_add_rank2,
    single_nonzero,
    sketch_add_outer,
    sketch_tdot,
)

__all__ = [
    "HashedCovariance",
    "RandomizedCovariance",
    "lowrank_add",
    "lowrank_add_stats",
    "sketch_pair",
]

_CENTER_CODES = {"g16": CENTER_G16, "g13": CENTER_G13, "exact": CENTER_EXACT}


@borrowing_step
def lowrank_add(arrays, idx, val, a, ztx, omega, u):
    r"""Add one example with draw ``a`` and weight ``omega`` to a linear sketch
    (:data:`LowRankArrays`): ``Z += x a^T``, ``s += omega x``, ``T += 1``, ``W +=
    omega``, ``u += a``. Returns ``|x|^2``. A weighted example's draw is
    :math:`\sqrt\omega` times a unit one (the caller scales it), so that
    :math:`E[Z Z^\top] = \sum_i \omega_i x_i x_i^\top`; ``omega = 1`` is the
    unweighted arithmetic exactly.

    ``ztx`` must hold ``Z^T x`` before the update; the Gram matrix ``G = Z^T Z`` is
    updated by ``G += (Z^T x) a^T + a (Z^T x)^T + |x|^2 a a^T``, entry (i, j) by the
    same numbers as (j, i), so G stays exactly symmetric (the low-rank OPAUC kernel
    reads its rows for its columns); for a dense draw as a symmetric rank-2 update
    (:func:`aucstream.covariance._lowrank.gram_add_rank2`, ``u`` its work vector of tau
    values). O(k tau + tau^2);
    O(k + tau) for a hashed draw (one non-zero: :func:`single_nonzero`).
    """
    sketch_add_outer(arrays.sketch, idx, val, a)
    return lowrank_add_stats(
        arrays.count, arrays.weight, arrays.sums, arrays.gram, arrays.asum, idx, val, a, ztx,
        omega, u,
    )  # fmt: skip


@borrowing_step
def lowrank_add_stats(count, weight, sums, gram, asum, idx, val, a, ztx, omega, u):
    """:func:`lowrank_add` but ``Z += x a^T``, for a caller that wrote it already
    (:func:`aucstream.covariance.sketch_pair_tdot_add`); the fields of
    :data:`LowRankArrays` it writes are passed apart (``count``, ``weight``,
    ``sums``, ``gram``, ``asum``), so that a compiled caller pushes 5 arrays rather
    than the bundle's 14 (numba passes each array's fields as separate arguments).
    Returns ``|x|^2``."""
    tau = gram.shape[0]
    xx = 0.0
    for q in range(idx.shape[0]):
        v = val[q]
        xx += v * v
        sums[idx[q]] += omega * v
    count[0] += 1
    weight[0] += omega
    h = single_nonzero(a)
    if h >= 0:  # a hashed draw: row and column h change (the other terms are zeros)
        for j in range(tau):
            gram[h, j] += ztx[h] * a[j] + a[h] * ztx[j] + xx * (a[h] * a[j])
        for i in range(tau):
            if i != h:
                gram[i, h] += ztx[i] * a[h] + a[i] * ztx[h] + xx * (a[i] * a[h])
    else:
        gram_add_rank2(gram, ztx, a, xx, u)
    for j in range(tau):
        asum[j] += a[j]
    return xx


@jit
def _lowrank_add_rows(arrays, indptr, indices, data, A):
    sketch = arrays.sketch
    ztx, u = np.empty(sketch.shape[1]), np.empty(sketch.shape[1])
    for r in range(indptr.shape[0] - 1):
        lo, hi = indptr[r], indptr[r + 1]
        idx, val = indices[lo:hi], data[lo:hi]
        sketch_tdot(sketch, idx, val, ztx)
        lowrank_add(arrays, idx, val, A[r], ztx, 1.0, u)


class _LinearSketch(_LowRankSummary):
    r"""A linear sketch :math:`Z = \sum_i x_i a_i^\top` with independent draws
    :math:`a_i`, :math:`E\|a_i\|^2 = 1`, so :math:`E[Z Z^\top] = X X^\top`; subclasses
    draw the :math:`a_i`.

    Three centerings of the covariance estimate:

    - ``"g13"``: :math:`Z Z^\top/T - \|\bar a\|^2 c c^\top` (G13 Eqs. 10-11, and the
      authors' code): G13 sketches the centered data :math:`(X - c 1^\top) R` and
      approximates its mean part :math:`\hat c \hat c^\top` by
      :math:`c\,\bar a^\top \bar a\,c^\top`;
    - ``"g16"``: :math:`Z Z^\top/T - c c^\top` (G16 Eq. 19): only :math:`X X^\top` is
      approximated, the mean is exact;
    - ``"exact"``: :math:`(Z - c u^\top)(Z - c u^\top)^\top/T` with :math:`u = \sum_i
      a_i`, the literal :math:`(X - c 1^\top) R R^\top (X - c 1^\top)^\top / T`:
      unbiased for the covariance and positive semi-definite (a library option).
    """

    _DEFAULT_CENTERING = "g16"
    #: Whether the draws are continuous, so that two independent shards never have
    #: equal sums of draws (merge's check for shared draws).
    _continuous_draws = False

    def __init__(
        self,
        n_features: int,
        sketch_size: int = 50,
        centering: str | None = None,
        dtype: DType = np.float64,
    ):
        centering = self._DEFAULT_CENTERING if centering is None else centering
        if centering not in _CENTER_CODES:
            raise ValueError(f"centering must be one of {tuple(_CENTER_CODES)}, got {centering!r}")
        super().__init__(n_features, sketch_size, dtype=dtype)
        self.centering = centering
        self.asum_ = np.zeros(self.sketch_size)

    @property
    def center_code(self) -> int:
        return _CENTER_CODES[self.centering]

    def _check_state(self) -> None:
        """Consistency of a loaded state (:mod:`._checks`): shapes, settings, a count
        that is not negative, and zeros in an empty sketch."""
        _, tau, t = self._check_lowrank_state(_CENTER_CODES)
        check_array(self, "asum_", (tau,), "f")
        check_empty(self, t, ("sum_", "sketch_", "gram_", "asum_"))

    @staticmethod
    def draw(rng: np.random.Generator, n: int, sketch_size: int) -> np.ndarray:
        """The vectors :math:`a_i` of n examples, shape (n, tau)."""
        raise NotImplementedError  # pragma: no cover

    def bounded_rows(self) -> tuple:
        r"""The sum and, in float64, the sketch: an entry of :math:`Z = \sum_i x_i
        a_i^\top` sums at most :math:`T < 2^{63}` products of an example value below
        :math:`1.4\cdot10^{154}` (:meth:`_LowRankSummary.bounded_rows`) and a draw
        entry (a sign, or a standard normal over :math:`\sqrt\tau`, below 40 for any
        64-bit generator's output), so it stays below :math:`10^{176}`. A float32
        sketch overflows above :math:`3.4\cdot10^{38}`, which examples can reach: its
        rows are checked."""
        if self.sketch_.dtype == np.float64:
            return (self.sum_, self.sketch_)
        return (self.sum_,)

    def scale(self, factor: float) -> None:
        r"""Multiply every example's weight by ``factor`` > 0 in place: W and s scale
        by it, Z, u by its square root (the draws of weighted examples, as
        :func:`lowrank_add`), and the Gram matrix by it; the estimate
        (``"g16"``, ``"exact"``) is unchanged, exactly so for an even power of 2
        (:meth:`CovarianceSummary.scale`)."""
        if not (np.isfinite(factor) and factor > 0):
            raise ValueError(f"factor must be a finite number > 0, got {factor!r}")
        root = float(np.sqrt(factor))
        for name, by in (("weight_", factor), ("sum_", factor), ("gram_", factor)):
            getattr(self, name)[...] *= by
        self.sketch_ *= self.sketch_.dtype.type(root)
        self.asum_ *= root

    def draws(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """The vectors :math:`a_i` of n examples, shape (n, tau) (:meth:`draw`)."""
        return self.draw(rng, n, self.sketch_size)

    def _asum(self) -> np.ndarray:
        return self.asum_

    def update(
        self, X: ArrayLike, rng: RandomState = None, *, draws: ArrayLike | None = None
    ) -> _LinearSketch:
        """Add the rows of ``X``; returns self.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n, d)
            Examples.
        rng : int, Generator or None
            Source of the :math:`a_i` (``draw``) when ``draws`` is not given, made a
            Generator by :func:`aucstream._rng.make_rng` (a bool is refused).
        draws : ndarray of shape (n, tau), optional
            The :math:`a_i` to use.
        """
        indptr, indices, data, d = csr_arrays(X, finite=True)
        self._check_dim(d)
        n = indptr.shape[0] - 1
        A = (
            self.draws(make_rng(rng, "rng"), n)
            if draws is None
            else np.ascontiguousarray(draws, dtype=np.float64).reshape(n, self.sketch_size)
        )
        _lowrank_add_rows(self.arrays(), indptr, indices, data, A)
        return self

    def merge(self, other: _LinearSketch) -> _LinearSketch:
        r"""The sketch of both streams (a new object).

        Z is linear in the stream: the sum of the two sketches (and of their draws'
        sums u) is exactly the sketch of the concatenated stream whose draws are the
        first shard's draws followed by the second's. That is a sketch of the
        concatenation with the guarantees of one sketch (unbiased, the same expected
        error) when the draws of all the examples are independent, i.e. when the
        shards drew from **independent generators**: give every shard its own seed
        (as :class:`aucstream.dask.ParallelPass` does with ``sketch_rng(seed,
        partition, class)``, or OPAUC learners with different ``random_state``).
        Shards that share their draws (the same seed, hence the same :math:`a_i` for
        their i-th examples) do not merge into a sketch: :math:`E[Z Z^	op]` gains the
        cross terms :math:`x_i x_i'^	op + x_i' x_i^	op` of the examples that shared a
        draw. Such a merge is refused where it can be recognized: a summary merged
        with itself, and Gaussian draws (``RandomizedCovariance``) whose sums are
        equal, which independent draws are with probability 0. Hashed draws take
        few values, so equal sums can be chance there: only the caller can guarantee
        independence.

        Raises
        ------
        TypeError, ValueError
            Another kind, dimension, sketch size, centering or dtype; shared draws.
        """
        self._check_merge(other)
        if other is self or (
            self._continuous_draws
            and self.count > 0
            and other.count > 0
            and np.array_equal(self.asum_, other.asum_)
        ):
            raise ValueError(
                f"cannot merge {type(self).__name__}s made from the same random draws (the "
                "same seed): their sum is not a sketch of both streams; sketch every shard "
                "with its own seed"
            )
        merged = type(self)(self.n_features, self.sketch_size, self.centering, self.dtype)
        merged.count_[:] = self.count_ + other.count_
        merged.weight_[:] = self.weight_ + other.weight_
        merged.sum_[:] = self.sum_ + other.sum_
        merged.sketch_[:] = self.sketch_ + other.sketch_
        merged.asum_[:] = self.asum_ + other.asum_
        merged.refresh()
        return merged


def _interleaved(pair, first: np.ndarray, second: np.ndarray) -> bool:
    """Whether ``first`` and ``second`` are the left and right halves of ``pair``."""
    if not isinstance(pair, np.ndarray) or second.base is not pair:
        return False
    d, tau = first.shape
    return (
        pair.flags.c_contiguous
        and pair.shape == (d, 2 * tau)
        and pair.dtype == first.dtype
        and first.ctypes.data == pair.ctypes.data
        and second.ctypes.data == pair.ctypes.data + tau * pair.itemsize
    )


def sketch_pair(first: _LowRankSummary, second: _LowRankSummary) -> np.ndarray | None:
    r"""The d x 2 tau array whose row i holds row i of ``first``'s sketch followed by
    row i of ``second``'s, for two linear sketches of the same shape and dtype (the two
    classes of OPAUC): each summary's ``sketch_`` is a view of its half, so one
    random read of one row serves both sketches for a feature
    (:func:`aucstream.covariance.sketch_pair_tdot_add`). Makes it, copying the two
    sketches in, when they are not interleaved yet (a fresh pair of summaries, or
    sketches loaded, unpickled or copied, which come apart); None for other kinds
    (frequent directions keeps its sketches apart). The values, the public
    attributes and the saved files are those of two separate sketches.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.covariance import HashedCovariance, sketch_pair
    >>> neg, pos = HashedCovariance(3, sketch_size=2), HashedCovariance(3, sketch_size=2)
    >>> pos.update(np.eye(3), rng=0).sketch_.flags.c_contiguous
    True
    >>> before = pos.sketch_.copy()
    >>> pair = sketch_pair(neg, pos)
    >>> pair.shape, bool(np.array_equal(pair[:, 2:], before)), pos.sketch_.base is pair
    ((3, 4), True, True)
    """
    if not (isinstance(first, _LinearSketch) and isinstance(second, _LinearSketch)):
        return None
    z0, z1 = first.sketch_, second.sketch_
    if z0.shape != z1.shape or z0.dtype != z1.dtype:
        raise ValueError(
            f"cannot interleave sketches of shapes {z0.shape} and {z1.shape} "
            f"({z0.dtype}, {z1.dtype})"
        )
    if _interleaved(z0.base, z0, z1):
        return z0.base
    d, tau = z0.shape
    pair = np.zeros((d, 2 * tau), dtype=z0.dtype)  # (untouched pages: no cost for empty ones)
    if first.count > 0:  # (an empty sketch is zeros: _check_state)
        pair[:, :tau] = z0
    if second.count > 0:
        pair[:, tau:] = z1
    first.sketch_, second.sketch_ = pair[:, :tau], pair[:, tau:]
    return pair


class RandomizedCovariance(_LinearSketch):
    r"""Randomized low-rank covariance estimate of OPAUC_r (G13 §3, Eqs. 6-11).

    :math:`Z = X R` with the rows of R drawn per example,
    :math:`a_i = r_i/\sqrt\tau`, :math:`r_i \sim N(0, I_\tau)` (Eqs. 8-9), so
    :math:`E[Z Z^\top] = X X^\top` and
    :math:`E\|Z Z^\top - X X^\top\|_F^2 = (\|X\|_F^4 + \|X X^\top\|_F^2)/\tau`.
    R is never stored; only :math:`u = \sum_i a_i` is kept for the centering. The
    scale :math:`1/\sqrt\tau` is the one of Eqs. 8-9 (and of the authors' code), the
    one that makes :math:`E[R R^\top] = I`; the prose's :math:`1/\tau` is a typo.

    Parameters
    ----------
    n_features : int
        Dimension d.
    sketch_size : int, default=50
        tau (G13 §6.2 and G16 §7.2-7.3 use 50).
    centering : {"g13", "g16", "exact"} or None, default=None
        How the mean is removed (:class:`_LinearSketch`); None is "g13", G13
        Eqs. 10-11 and the authors' code.
    dtype : {np.float64, np.float32}, default=np.float64
        Storage of the sketch Z (float32 halves the summary's memory; see
        :mod:`aucstream.covariance._lowrank` for what stays float64).

    Attributes
    ----------
    count_, sum_, sketch_, gram_
        See :class:`_LowRankSummary`.
    asum_ : ndarray of shape (tau,)
        :math:`u = \sum_i a_i` (so :math:`\bar a = u/T`).

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
    _continuous_draws = True

    @staticmethod
    def draw(rng: np.random.Generator, n: int, sketch_size: int) -> np.ndarray:
        r"""The vectors :math:`a_i = r_i/\sqrt\tau` of n examples, shape (n, tau)."""
        draws = rng.standard_normal((n, sketch_size))
        draws /= np.sqrt(sketch_size)  # (in place: the same numbers, no second array)
        return draws


class HashedCovariance(_LinearSketch):
    r"""CountSketch covariance estimate of OPAUC_h (G16 §7.2, reconstructed).

    G16 only names the method ("the covariance are approximated by using hashing
    technique") and measures it like the other sketches, by :math:`\|X X^\top - Z
    Z^\top\|_F` for a d x tau sketch Z. We read it as a CountSketch along the instance
    axis: each example goes, with a random sign :math:`\sigma_i`, into one random
    column :math:`h_i` of Z: :math:`Z \mathrel{+}= \sigma_i x_i e_{h_i}^\top`. Then
    :math:`E[Z Z^\top] = X X^\top` and :math:`E\|Z Z^\top - X X^\top\|_F^2 =
    (\|X\|_F^4 + \|X X^\top\|_F^2 - 2\sum_i\|x_i\|^4)/\tau`. The estimate is
    :math:`Z Z^\top/T - c c^\top` (G16 Eq. 19) by default. One uniform draw u per
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
    dtype : {np.float64, np.float32}, default=np.float64
        Storage of the sketch Z (as for :class:`RandomizedCovariance`).

    Attributes
    ----------
    count_, sum_, sketch_, gram_
        See :class:`_LowRankSummary`.
    asum_ : ndarray of shape (tau,)
        :math:`u = \sum_i \sigma_i e_{h_i}`.

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
        r"""The vectors :math:`a_i = \sigma_i e_{h_i}` of n examples, shape (n, tau)."""
        return HashedCovariance.signed_buckets(rng.random(n), sketch_size)

    @staticmethod
    def signed_buckets(u: ArrayLike, sketch_size: int) -> np.ndarray:
        r"""Rows :math:`\sigma e_h` from uniforms u in [0, 1), shape (n, tau)."""
        u = np.asarray(u, dtype=np.float64)
        code = np.minimum((u * (2 * sketch_size)).astype(np.int64), 2 * sketch_size - 1)
        A = np.zeros((u.shape[0], sketch_size))
        A[np.arange(u.shape[0]), code // 2] = 1.0 - 2.0 * (code % 2)
        return A
