r"""Second-order summaries of one class's examples, used by OPAUC and AdaOAM.

A summary holds the count :math:`T`, the mean :math:`c` and (an estimate of) the
covariance :math:`\Gamma = \frac1T \sum_i x_i x_i^\top - c c^\top` of the examples of
one class seen so far. OPAUC's gradient (G16 Eqs. 7-8) needs only the opposite
class's mean and the product :math:`\Gamma w`, so the interface
(:class:`CovarianceSummary`) is small: ``update(X)`` adds examples, ``matvec(v)``
returns :math:`\hat\Gamma v`, ``merge(other)`` summarizes the union of two streams,
and ``arrays()`` hands the state arrays to the learners' compiled kernels (below).
Every summary keeps its state in numpy arrays (plus scalar settings), so a learner
holding summaries pickles, saves and resumes exactly.

Summaries
---------
:class:`FullCovariance` (exact; O(d^2) memory: for moderate d)
    The sum and the scatter :math:`P = \sum x_i x_i^\top`; :math:`\Gamma v = P v/T -
    c\,(c^\top v)` (the form of G16 §3 for sparse data).
:class:`RandomizedCovariance` (OPAUC_r; G13 §3, Eqs. 6-11)
    :math:`Z = \sum_i x_i a_i^\top` (d x tau) with Gaussian :math:`a_i`.
:class:`HashedCovariance` (OPAUC_h; G16 §7.2, reconstructed)
    A CountSketch along the instance axis.
:class:`FrequentDirectionsCovariance` (OPAUC_fd; G16 §4.1, Alg. 2)
    Liberty's deterministic sketch with a shrink when full.
:class:`SparsifiedCovariance` (OPAUC_s; G16 §4.2, Alg. 3)
    P restricted to its :math:`d\tau` entries of largest magnitude.
:class:`ExactSparseCovariance` (SAdaOAM; D16 §3.3)
    The exact P stored sparsely.

The low-rank sketches estimate the scatter by :math:`Z Z^\top` (d x tau) and write
the estimate as :math:`\hat\Gamma v = Z\varphi - s\,\psi` (:func:`center_terms`),
with one of four ways of removing the class mean (the kernels' codes):

- ``CENTER_G16``: :math:`Z Z^\top/T - c c^\top` (G16 Eq. 19); the default of "fd"
  and "hash";
- ``CENTER_G13``: :math:`Z Z^\top/T - \|\bar a\|^2 c c^\top` (G13 Eqs. 10-11); the
  default of "randomized";
- ``CENTER_EXACT``: :math:`(Z - c u^\top)(Z - c u^\top)^\top/T` with :math:`u =
  \sum_i a_i`: ``centering="exact"`` of the linear sketches;
- ``CENTERED_SKETCH``: :math:`Z Z^\top/T` with Z sketching the centered examples:
  ``centering="exact"`` of frequent directions.

The papers' forms subtract the exact :math:`c c^\top` from a sketched :math:`X X^\top`,
which is indefinite wherever the sketch lost more than the class's spread; the
library's ``centering="exact"`` keeps the estimates positive semi-definite, and
OPAUC's step a contraction. Randomness (the :math:`a_i`, or buckets and signs) is
drawn per example by the caller, a fixed number of values per example, and passed
in, so splitting a stream into chunks never changes a summary.

Compiled code
-------------
The per-example functions (``full_add``, ``sparsified_add``, ``lowrank_add``,
``fd_insert``, ...) are called from compiled code only; they take a summary's
``arrays()`` bundle, a namedtuple (:data:`FullArrays`, :data:`SparseArrays`,
:data:`ExactSparseArrays`, :data:`LowRankArrays`). Those that only read and write
arrays their caller holds are compiled without reference counting
(:data:`borrowing_njit`, :data:`borrowing_step`): see ``_base`` for why. A learner's
kernel selects the two summaries of an example with :func:`own_and_opposite` and, for
the kinds with an explicit scatter, adds the example and multiplies by the covariance
with :func:`add_example` and :func:`cov_matvec` (each kind registers its
implementation with :func:`register`); :func:`run_reserving` reserves room in the
sparse kinds when the kernel stops for it.

Precision
---------
The kinds in :data:`DTYPE_KINDS` ("full" and the d x tau sketches) take
``dtype=np.float32``: their one large array (the scatter, the sketch) is stored in
float32, half the memory and memory traffic, while counts, sums, Gram matrices and
every accumulation stay float64 (``_full`` and ``_lowrank`` say where rounding
differs). The compiled functions get one more specialization, for float32 bundles,
compiled only when used. Summaries of different dtypes do not merge. "sparse" keeps
float64 (a float32 value next to its int64 key would save a quarter, not half).

Merging and the closed form
---------------------------
``merge`` combines the summaries of two shards of a stream: exactly for the full and
the exact sparse summaries, as the sketch of the concatenated stream for the linear
sketches (shards with independent draws), with frequent directions' error bound for
"fd", and merge-then-prune for "sparse". :func:`solve_from_statistics` computes the
minimizer of OPAUC's objective over all the examples from the two class summaries.

Products and sizes
------------------
:func:`sketch_tmatvec` (:math:`Z^\top v`) and :func:`sketch_cross` (:math:`A^\top B`)
form the products of d x tau sketches in float64 whatever their storage (a learner
re-basing on the sketches uses them); :func:`summary_nbytes` gives the bytes a
summary of a kind will allocate, before it is allocated (the memory budget).

Modules: ``_base`` (the interface), ``_full``, ``_lowrank`` (what the sketches share),
``_linear`` (randomized, hashed), ``_fd`` (frequent directions), ``_sparse`` (sparsified
and exact sparse), ``_hashtable`` (the entry storage of the sparse kinds) and
``_solve`` (the closed form).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._kernels import sparse_dot
from .._typing import DType
from ._base import (
    SUMMARY_DTYPES,
    CovarianceSummary,
    add_example,
    borrowing_njit,
    borrowing_step,
    check_dtype,
    compiled_step,
    cov_matvec,
    own_and_opposite,
    register,
    run_reserving,
)
from ._fd import FrequentDirectionsCovariance, fd_column, fd_insert, fd_shrink_index, fd_tdot
from ._full import FullArrays, FullCovariance, full_add, full_cov_matvec
from ._hashtable import sparse_scatter_add
from ._linear import (
    HashedCovariance,
    RandomizedCovariance,
    lowrank_add,
    lowrank_add_stats,
    sketch_pair,
)
from ._lowrank import (
    CENTER_EXACT,
    CENTER_G13,
    CENTER_G16,
    CENTERED_SKETCH,
    LowRankArrays,
    center_terms,
    single_nonzero,
    sketch_cross,
    sketch_pair_tdot,
    sketch_pair_tdot_add,
    sketch_tdot,
    sketch_tmatvec,
)
from ._nbytes import summary_nbytes
from ._solve import solve_from_statistics
from ._sparse import (
    ExactSparseArrays,
    ExactSparseCovariance,
    SparseArrays,
    SparsifiedCovariance,
    exact_sparse_add,
    sparse_add,
    sparse_cov_matvec,
    sparse_prune,
    sparse_room,
    sparsified_add,
)

__all__ = [
    "CENTERED_SKETCH",
    "CENTER_EXACT",
    "CENTER_G13",
    "CENTER_G16",
    "COVARIANCE_KINDS",
    "DTYPE_KINDS",
    "AUTO_FLOAT32_FROM",
    "resolve_dtype",
    "SUMMARY_DTYPES",
    "CovarianceSummary",
    "add_example",
    "borrowing_njit",
    "borrowing_step",
    "compiled_step",
    "cov_matvec",
    "ExactSparseArrays",
    "ExactSparseCovariance",
    "FrequentDirectionsCovariance",
    "FullArrays",
    "FullCovariance",
    "HashedCovariance",
    "LowRankArrays",
    "RandomizedCovariance",
    "SparseArrays",
    "SparsifiedCovariance",
    "center_terms",
    "exact_sparse_add",
    "fd_column",
    "fd_insert",
    "fd_shrink_index",
    "fd_tdot",
    "full_add",
    "full_cov_matvec",
    "lowrank_add",
    "lowrank_add_stats",
    "make_covariance",
    "own_and_opposite",
    "register",
    "run_reserving",
    "single_nonzero",
    "sketch_cross",
    "sketch_pair",
    "sketch_pair_tdot",
    "sketch_pair_tdot_add",
    "sketch_tdot",
    "sketch_tmatvec",
    "solve_from_statistics",
    "sparse_add",
    "sparse_cov_matvec",
    "sparse_dot",
    "sparse_prune",
    "sparse_room",
    "sparse_scatter_add",
    "sparsified_add",
    "summary_nbytes",
]

#: Entries a :class:`SparsifiedCovariance` allocates above the most its budget holds
#: before a prune, for the new entries of one example (more grow the arrays).
_SPARSE_RESERVE = 1 << 15

#: Summary kinds accepted by :func:`make_covariance` and ``OPAUC(covariance=...)``.
COVARIANCE_KINDS = ("full", "randomized", "fd", "sparse", "hash")

#: The kinds that take ``dtype=np.float32`` (their large array is a d x d or d x tau
#: float matrix). "sparse" refuses it: its hash table stores an int64 key and an
#: int32 index slot next to each value, so float32 values would save a quarter of
#: its memory, not half, and its prune selects among values of equal magnitude by
#: their exact order.
DTYPE_KINDS = ("full", "randomized", "fd", "hash")

#: ``dtype="auto"`` stores the d x tau sketches ("randomized", "hash", "fd") in
#: float32 from this many features on (float64 below, and always for "full" and
#: "sparse"): from there the sketches no longer fit the caches, every example's rows
#: come from memory, and half the bytes per row is what a pass gains most from
#: (``benchmarks/bench_highdim.py`` and ``benchmarks/bench_opauc.py``, reported in
#: docs/benchmarks.md). ("full" at 10^5 features would need 80 GB either way.)
AUTO_FLOAT32_FROM = 100_000


def resolve_dtype(kind: str, n_features: int, dtype: DType = "auto") -> DType:
    """The storage ``dtype`` means for a summary of ``kind`` over ``n_features``:
    ``"auto"`` gives ``"float32"`` for the sketches ("randomized", "hash", "fd") from
    :data:`AUTO_FLOAT32_FROM` features on, else ``"float64"``; any other value is
    returned as it is (checked by the summary).

    Examples
    --------
    >>> resolve_dtype("hash", 10**6), resolve_dtype("hash", 1000), resolve_dtype("sparse", 10**6)
    ('float32', 'float64', 'float64')
    """
    if isinstance(dtype, str) and dtype == "auto":
        big = kind in ("randomized", "hash", "fd") and int(n_features) >= AUTO_FLOAT32_FROM
        return "float32" if big else "float64"
    return dtype


def _check_summary_budget(kind, n_features, sketch_size, options, dtype) -> None:
    """The summary's bytes against the memory budget, before allocating (sizes that are
    not positive ints are left to the summaries' own checks)."""
    from .._config import check_budget

    sizes = (n_features, 1 if kind == "full" else sketch_size)
    if kind not in COVARIANCE_KINDS or not all(
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0 for v in sizes
    ):
        return
    slack = options.get("prune_slack", 0.1)
    what = f"make_covariance({kind!r}, n_features={n_features}, sketch_size={sketch_size})"
    nbytes = summary_nbytes(
        kind,
        int(n_features),
        int(sketch_size),
        prune_slack=slack if isinstance(slack, float) else 0.1,
        itemsize=dtype.itemsize,
    )
    check_budget(nbytes, what)


def make_covariance(
    kind: str, n_features: int, sketch_size: int = 50, **options: Any
) -> CovarianceSummary:
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
        (fd), ``prune_slack`` (sparse), ``dtype`` (np.float64, the default, or
        np.float32: the storage of the large array of the kinds in
        :data:`DTYPE_KINDS`; "sparse" takes float64 only; "auto":
        :func:`resolve_dtype`).

    Returns
    -------
    CovarianceSummary
    """
    dtype = check_dtype(resolve_dtype(kind, n_features, options.get("dtype", np.float64)))
    _check_summary_budget(kind, n_features, sketch_size, options, dtype)
    if kind == "full":
        return FullCovariance(n_features, dtype)
    if kind == "randomized":
        return RandomizedCovariance(n_features, sketch_size, options.get("centering"), dtype)
    if kind == "fd":
        return FrequentDirectionsCovariance(
            n_features, sketch_size, options.get("shrink", "half"), options.get("centering"), dtype
        )
    if kind == "sparse":
        if dtype != np.float64:
            raise ValueError(
                f"dtype={dtype.name!r} is not supported by the 'sparse' summary (its hash "
                f"table stays float64); the kinds that take float32 are {DTYPE_KINDS}"
            )
        return SparsifiedCovariance(n_features, sketch_size, options.get("prune_slack", 0.1))
    if kind == "hash":
        return HashedCovariance(n_features, sketch_size, options.get("centering"), dtype)
    raise ValueError(f"covariance must be one of {COVARIANCE_KINDS}, got {kind!r}")
