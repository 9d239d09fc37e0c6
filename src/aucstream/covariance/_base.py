r"""The interface every class summary implements, and the pieces the kinds share.

A summary holds the count :math:`T`, the sum :math:`s = \sum_i x_i` (so the mean is
:math:`c = s/T`) and an estimate :math:`\hat P` of the scatter :math:`P = \sum_i x_i
x_i^\top` of the examples of one class, and from them the covariance estimate
:math:`\hat\Gamma`. Its state lives in numpy arrays (attributes ending in ``_``) and
plain settings, so a learner holding summaries pickles, saves and resumes exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from numbers import Integral
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .._chunks import Chunk
from .._kernels import borrowing_njit, borrowing_step, compiled_step, jit, register_overload
from .._typing import Matrix

if TYPE_CHECKING:  # pragma: no cover
    from ._sparse import SparsifiedCovariance

__all__ = [
    "CovarianceSummary",
    "borrowing_njit",
    "borrowing_step",
    "compiled_step",
    "add_example",
    "add_rows",
    "SUMMARY_DTYPES",
    "check_dtype",
    "check_n_features",
    "check_sample_weight",
    "check_sketch_size",
    "cov_from_scatter_product",
    "cov_matvec",
    "own_and_opposite",
    "register",
    "run_reserving",
    "symmetrize",
    "track_support",
]


class CovarianceSummary:
    r"""A second-order summary of one class's examples.

    Learners and tools use a summary only through this interface:

    ``update(X)``
        add the rows of X;
    ``matvec(v)``
        the product :math:`\hat\Gamma v` (the only way OPAUC's gradient touches the
        covariance), O(d) memory;
    ``merge(other)``
        the summary of the union of two streams (a new object);
    ``count``, ``mean``, ``scatter``, ``covariance``
        T, c, :math:`\hat P` and :math:`\hat\Gamma` (the last two form d x d arrays:
        for inspection);
    ``scatter_inner(X)``, ``scatter_frobenius_sq()``
        :math:`\sum_t x_t^\top \hat P x_t` over the rows of X and :math:`\|\hat
        P\|_F^2`, from which the error :math:`\|X^\top X - \hat P\|_F` follows without
        a d x d matrix (:mod:`aucstream.sketch_error`);
    ``arrays()``
        the state arrays as the compiled functions of its kind take them: a
        namedtuple of the summary's own arrays (not copies), so a learner's kernel
        updates the summary in place.

    Kinds whose storage can run out (the sparse ones) add ``reserve``; the low-rank
    sketches add ``refresh`` and the sketch products (:class:`_LowRankSummary`).
    """

    # the state every summary holds (set by the subclasses' constructors)
    count_: np.ndarray
    sum_: np.ndarray

    n_features: int

    @property
    def count(self) -> int:
        """Number of examples summarized."""
        return int(self.count_[0])

    @property
    def dtype(self) -> np.dtype:
        """Storage type of the summary's large arrays: float64 unless the kind takes
        ``dtype`` (full and the d x tau sketches) and was given float32."""
        return np.dtype(np.float64)

    @property
    def total_weight(self) -> float:
        """W, the total weight of the examples summarized (T when unweighted).

        The exact kinds take example weights (``update(X, sample_weight)``): they keep
        W in ``weight_``; the sketches count examples, W = T.
        """
        weight = getattr(self, "weight_", None)
        return float(weight[0]) if weight is not None else float(self.count)

    @property
    def mean(self) -> np.ndarray:
        """Class mean c = s / W (zeros while empty)."""
        total = self.total_weight
        return self.sum_ / (total if total > 0 else 1.0)

    @property
    def scatter(self) -> np.ndarray:  # pragma: no cover - abstract
        r"""The d x d (estimated) scatter :math:`\hat P`."""
        raise NotImplementedError

    @property
    def covariance(self) -> np.ndarray:
        r"""The d x d estimate :math:`\hat P/W - c c^\top` (forms it: for inspection)."""
        c = self.mean
        total = self.total_weight
        return self.scatter / (total if total > 0 else 1.0) - np.outer(c, c)

    def update(self, X: ArrayLike) -> CovarianceSummary:  # pragma: no cover - abstract
        raise NotImplementedError

    def matvec(self, v: ArrayLike) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def merge(self, other: Any) -> CovarianceSummary:  # pragma: no cover
        raise NotImplementedError

    def arrays(self) -> tuple:  # pragma: no cover - abstract
        """The state arrays as the compiled functions of this kind take them."""
        raise NotImplementedError

    def scatter_inner(self, X: Matrix) -> float:  # pragma: no cover - abstract
        r""":math:`\langle X^\top X, \hat P\rangle = \sum_t x_t^\top \hat P x_t`."""
        raise NotImplementedError

    def scatter_frobenius_sq(self) -> float:  # pragma: no cover - abstract
        r""":math:`\|\hat P\|_F^2`."""
        raise NotImplementedError

    #: The arrays :meth:`scale` multiplies: those linear in the examples' weights (the
    #: kinds that take example weights).
    _weighted_state: tuple[str, ...] = ()

    def scale(self, factor: float) -> None:
        r"""Multiply every example's weight by ``factor`` > 0 in place: W, s and
        :math:`\hat P` scale, the mean :math:`c = s/W` and the estimate
        :math:`\hat P/W - c c^\top` stay (exactly so for a power of 2, barring
        underflow). Exponential forgetting (:mod:`aucstream.opauc`, "Forgetting")
        uses it to keep the growing weights of its stored statistics in range."""
        if not self._weighted_state:
            raise TypeError(f"{type(self).__name__} does not take weighted examples")
        if not (np.isfinite(factor) and factor > 0):
            raise ValueError(f"factor must be a finite number > 0, got {factor!r}")
        for name in self._weighted_state:
            array = getattr(self, name)
            array *= array.dtype.type(factor)

    def _check_dim(self, d: int) -> None:
        if d != self.n_features:
            raise ValueError(
                f"{type(self).__name__} summarizes {self.n_features} features, got {d}"
            )

    def _check_dtype(self, other: CovarianceSummary) -> None:
        """Refuse to merge summaries stored in different precisions."""
        if other.dtype != self.dtype:
            raise ValueError(
                f"cannot merge a {type(self).__name__} of dtype {self.dtype} with one of "
                f"dtype {other.dtype}: build both with the same dtype"
            )

    def _vector(self, v: ArrayLike) -> np.ndarray:
        """``v`` as a contiguous float64 d-vector (checked)."""
        v = np.ascontiguousarray(v, dtype=np.float64)
        self._check_dim(v.shape[0])
        return v


def run_reserving(
    step: Callable[[int], int], summaries: Sequence[SparsifiedCovariance], chunk: Chunk
) -> None:
    """Run a learner's kernel over a chunk, making room in the sparse summaries.

    ``step(start)`` processes the chunk's rows from ``start`` and returns the first row
    whose class summary has no room for it (``add_example`` returned False), or n when
    done. Each time it stops, that summary (``summaries[0]`` for the negative class,
    ``[1]`` for the positive one) reserves room for the row and the kernel resumes
    there; summaries that never run out of room never stop it.
    """
    assert chunk.indptr is not None  # (the kernels that reserve take CSR rows)
    r = 0
    while True:
        r = step(r)
        if r == chunk.n_samples:
            return
        own = summaries[int(chunk.y[r] > 0)]
        own.reserve(chunk.data[chunk.indptr[r] : chunk.indptr[r + 1]])


# ---------------------------------------------------------------- argument checks
def _is_int(value) -> bool:
    return isinstance(value, Integral) and not isinstance(value, (bool, np.bool_))


def check_n_features(n_features) -> int:
    """``n_features`` as an int, or ValueError."""
    if not _is_int(n_features) or n_features < 1:
        raise ValueError(f"n_features must be an int >= 1, got {n_features!r}")
    return int(n_features)


def check_sketch_size(sketch_size, minimum: int = 1) -> int:
    """``sketch_size`` as an int >= ``minimum``, or ValueError."""
    if not _is_int(sketch_size) or sketch_size < minimum:
        raise ValueError(f"sketch_size must be an int >= {minimum}, got {sketch_size!r}")
    return int(sketch_size)


#: Storage types of the large arrays of the summaries that take ``dtype`` ("full" and
#: the d x tau sketches); float64 is the default.
SUMMARY_DTYPES = ("float64", "float32")


def check_dtype(dtype) -> np.dtype:
    """``dtype`` as ``np.float64`` or ``np.float32`` (a type, a dtype or its name), or
    ValueError naming the parameter."""
    try:
        checked = None if dtype is None else np.dtype(dtype)
    except TypeError:
        checked = None
    if checked is None or checked.name not in SUMMARY_DTYPES:
        raise ValueError(f"dtype must be one of {SUMMARY_DTYPES}, got {dtype!r}")
    return checked


def symmetrize(a: np.ndarray) -> np.ndarray:
    """``(a + a^T) / 2``."""
    return 0.5 * (a + a.T)


# ------------------------------------------------------ compiling the kernels
# The covariance kernels only borrow arrays (``borrowing_njit``, ``borrowing_step``;
# ``compiled_step`` for the few that may allocate): the variants and why they are safe
# are the compile policy's, in :mod:`aucstream._kernels._compile`.


# ------------------------------------------------- the kernel-level protocol
def add_example(arrays: tuple, idx: np.ndarray | None, val: np.ndarray, omega: float) -> bool:
    r"""Add one example (non-zeros ``val`` at columns ``idx``) of weight ``omega`` > 0
    to the summary whose ``arrays()`` bundle is given; return False, changing nothing,
    if the summary must reserve room first (``reserve``), else True.

    The weighted summary holds :math:`T \mathrel{+}= 1`, :math:`W \mathrel{+}=
    \omega`, :math:`s \mathrel{+}= \omega x`, :math:`P \mathrel{+}= \omega x
    x^\top`: the statistics of a weighted sample, equal to those of the example
    repeated :math:`\omega` times when :math:`\omega` is an integer (up to rounding);
    with :math:`\omega = 1` the arithmetic is that of the unweighted summary.

    Compiled code only: each summary kind whose estimate is an explicit scatter (full,
    sparsified, exact sparse) registers its implementation for its own bundle type
    (:func:`register`), and numba picks it by the bundle's type.
    """
    raise NotImplementedError("add_example is called from compiled code only")


def cov_matvec(arrays: tuple, v: np.ndarray, out: np.ndarray) -> float:
    r"""Write :math:`\hat\Gamma v` of the summary whose ``arrays()`` bundle is given
    into ``out``; return :math:`c^\top v` (compiled code only; see
    :func:`add_example`)."""
    raise NotImplementedError("cov_matvec is called from compiled code only")


def register(protocol: Callable[..., Any], bundle_types: tuple, impl: Callable[..., Any]) -> None:
    """Make ``impl(arrays, *args)`` (a Python function, compiled by numba where used)
    the implementation of :func:`add_example` or :func:`cov_matvec` for bundles whose
    namedtuple class is one of ``bundle_types``."""

    def typer(arrays, *args):
        if getattr(arrays, "instance_class", None) in bundle_types:
            return impl

    register_overload(protocol, typer)


@jit
def add_rows(arrays, indptr, indices, data, weights, start):
    """Add the CSR rows from ``start`` with :func:`add_example`; return the first row
    that needs room (or n). ``weights`` is empty (every row weighs 1) or holds one
    weight per row; rows of weight 0 are skipped."""
    n = indptr.shape[0] - 1
    weighted = weights.shape[0] == n
    for r in range(start, n):
        omega = weights[r] if weighted else 1.0
        if omega == 0.0:
            continue
        lo, hi = indptr[r], indptr[r + 1]
        if not add_example(arrays, indices[lo:hi], data[lo:hi], omega):
            return r
    return n


def check_sample_weight(sample_weight, n_rows: int) -> np.ndarray:
    """Example weights for a summary's ``update``: None gives an empty array (every
    row weighs 1); otherwise a C-contiguous float64 array of ``n_rows`` finite,
    non-negative weights, or ValueError."""
    if sample_weight is None:
        return np.empty(0)
    weights = np.ascontiguousarray(sample_weight, dtype=np.float64).ravel()
    if weights.shape[0] != n_rows:
        raise ValueError(f"sample_weight has {weights.shape[0]} entries for {n_rows} rows")
    if not (np.isfinite(weights).all() and (weights >= 0).all()):
        raise ValueError("sample_weight must be finite and non-negative")
    return weights


# ------------------------------------------------------------- compiled helpers
@jit(inline="always", entry_only=True)
def own_and_opposite(classes, y):
    """``(own, opposite)`` from ``classes = (negative, positive)`` for label ``y`` (+1/-1).

    The one place where a kernel picks the summary an example joins and the one its
    gradient step reads. It returns arrays and is called by kernels with and without
    reference counting, so it is inlined into each (see ``borrowing_njit``).
    """
    if y > 0:
        return classes[1], classes[0]
    return classes[0], classes[1]


@borrowing_step
def cov_from_scatter_product(total, sums, v, out):
    r"""Turn ``out`` = :math:`P v` into :math:`\Gamma v = P v / W - c\,(c^\top v)`
    (``c = sums / W``, W = ``total[0]``, the total weight or the count) in place;
    return :math:`c^\top v`. An empty summary gives zeros.
    """
    t = total[0]
    if t == 0:
        out[:] = 0.0
        return 0.0
    inv_t = 1.0 / t
    cv = 0.0
    for i in range(v.shape[0]):
        cv += sums[i] * v[i]
    cv *= inv_t
    for i in range(v.shape[0]):
        out[i] = out[i] * inv_t - sums[i] * inv_t * cv
    return cv


@borrowing_njit
def track_support(seen, support, n_support, idx, val):
    """Append the features of x that are non-zero for the first time to ``support``
    (``seen`` marks them, ``n_support[0]`` counts them)."""
    for a in range(idx.shape[0]):
        i = idx[a]
        if val[a] != 0.0 and not seen[i]:
            seen[i] = True
            support[n_support[0]] = i
            n_support[0] += 1
