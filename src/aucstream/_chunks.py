"""The one layout in which examples reach the compiled kernels.

Every kernel reads CSR arrays (``indptr``, ``indices``, ``data``) with int64 indices
and float64 values, whatever the input was. A dense block becomes CSR arrays that
store every entry, zeros included, so dense and sparse input run the very same
arithmetic (zeros contribute exact zeros) and give the same model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

__all__ = [
    "Chunk",
    "check_magnitude",
    "check_sparse_structure",
    "csr_arrays",
    "dict_row",
    "to_chunk",
]

_NO_SCORES = np.empty(0)


def check_sparse_structure(X, what: str = "X") -> None:
    """Refuse a compressed sparse matrix whose index arrays are not consistent.

    scipy builds a CSR/CSC/BSR matrix from user arrays without checking that the
    column (row) indices lie inside the shape or that ``indptr`` is monotone, and its
    compiled routines (conversion, products) and our numba kernels (which do not
    check bounds) would then read and write outside the arrays. This O(nnz) check
    runs before anything else touches the matrix. Other inputs pass through.

    Raises
    ------
    ValueError
        Naming the problem: an index out of range, a decreasing ``indptr``, lengths
        that disagree, or index arrays that are not integers.
    """
    if not sp.issparse(X) or X.format not in ("csr", "csc", "bsr"):
        return
    for name in ("indices", "indptr"):
        array = getattr(X, name)
        if array.dtype.kind not in "iu":
            raise ValueError(
                f"{what} is a sparse matrix whose {name} are not integers ({array.dtype})"
            )
    major, minor = X.shape if X.format != "csc" else X.shape[::-1]
    if X.format == "bsr":
        rows, cols = X.blocksize
        major, minor = major // rows, minor // cols
    indptr, indices = X.indptr, X.indices
    if indptr.ndim != 1 or indptr.shape[0] != major + 1:
        raise ValueError(
            f"{what} is a sparse matrix whose indptr has {indptr.shape[0]} entries for "
            f"{major} {'rows' if X.format != 'csc' else 'columns'} (needs {major + 1})"
        )
    if indptr[0] != 0 or np.any(np.diff(indptr) < 0) or indptr[-1] > indices.shape[0]:
        raise ValueError(
            f"{what} is a sparse matrix whose indptr is not a non-decreasing sequence from 0 "
            f"to at most {indices.shape[0]}"
        )
    if X.data.shape[0] < indptr[-1]:
        raise ValueError(f"{what} is a sparse matrix with fewer values than indptr says")
    used = indices[: indptr[-1]]
    if used.size and (used.min() < 0 or used.max() >= minor):
        bad = used[(used < 0) | (used >= minor)][0]
        axis = "column" if X.format != "csc" else "row"
        raise ValueError(
            f"{what} is a sparse matrix with {axis} index {int(bad)} outside [0, {minor}) "
            f"for its shape {X.shape}"
        )


#: Below this absolute value no row of fewer than 10^8 features has an infinite
#: squared norm, so the exact check is skipped.
_SAFE_MAGNITUDE = 1e150


def check_magnitude(X) -> None:
    """Refuse rows whose squared norm overflows float64.

    Learning from such a row turns sums of squares, outer products and scores into
    infinity; a finite but near-maximal weight learnt from it makes every later
    score overflow. Checking the rows up front names the row, instead of failing
    somewhere inside a kernel.

    Raises
    ------
    ValueError
        Naming the first such row and its largest value.
    """
    data = X.data if sp.issparse(X) else X
    if data.size == 0 or float(np.max(np.abs(data))) < _SAFE_MAGNITUDE:
        return
    squares = X.multiply(X).sum(axis=1) if sp.issparse(X) else np.einsum("ij,ij->i", X, X)
    bad = np.flatnonzero(~np.isfinite(np.asarray(squares, dtype=np.float64).ravel()))
    if bad.size:
        row = X[bad[0]].toarray().ravel() if sp.issparse(X) else X[bad[0]]
        raise ValueError(
            f"row {bad[0]} of X is too large to learn from: its squared norm overflows "
            f"float64 (largest value {float(np.max(np.abs(row))):.3g}); scale the features "
            f"({bad.size} such rows)"
        )


def csr_arrays(X) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``(indptr, indices, data, n_features)`` of a dense array or sparse matrix.

    Indices are int64 and values float64, C-contiguous; duplicate sparse entries are
    summed. Dense input keeps its zeros as explicit entries.
    """
    if sp.issparse(X):
        X = X.tocsr()
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        return (
            np.ascontiguousarray(X.indptr, dtype=np.int64),
            np.ascontiguousarray(X.indices, dtype=np.int64),
            np.ascontiguousarray(X.data, dtype=np.float64),
            X.shape[1],
        )
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    n, d = X.shape
    indptr = np.arange(n + 1, dtype=np.int64) * d
    indices = np.tile(np.arange(d, dtype=np.int64), n)
    return indptr, indices, np.ascontiguousarray(X).ravel(), d


@dataclass(frozen=True)
class Chunk:
    """A validated block of examples in the layout every kernel reads.

    Attributes
    ----------
    indptr, indices, data : ndarray
        CSR arrays of the rows (int64, int64, float64, C-contiguous).
    y : ndarray of float64
        Labels mapped to +1 (the positive class ``classes_[1]``) and -1.
    n_features : int
        Number of columns.
    pre_scores : ndarray of float64
        Empty, or of shape (n_samples,): then a kernel that supports it writes each
        row's decision value before learning it (prequential scores).
    sample_weight : ndarray of float64
        Empty (every example weighs 1), or the non-negative weights of the rows.
    """

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    y: np.ndarray
    n_features: int
    pre_scores: np.ndarray = field(default_factory=lambda: _NO_SCORES)
    sample_weight: np.ndarray = field(default_factory=lambda: _NO_SCORES)

    @property
    def n_samples(self) -> int:
        return self.y.shape[0]

    @property
    def is_dense(self) -> bool:
        """Whether the rows are a dense 2-D array (``indptr`` and ``indices`` None)."""
        return self.indices is None

    def dense(self) -> np.ndarray:
        """The rows as a dense float64 array (for batch learners and tests)."""
        if self.is_dense:
            return self.data
        X = np.zeros((self.n_samples, self.n_features))
        rows = np.repeat(np.arange(self.n_samples), np.diff(self.indptr))
        X[rows, self.indices] = self.data
        return X


def to_chunk(
    X,
    y_pm: np.ndarray,
    pre_scores: np.ndarray | None = None,
    sample_weight: np.ndarray | None = None,
    dense_in_place: bool = False,
) -> Chunk:
    """Turn a validated dense array or sparse matrix and +/-1 labels into a Chunk.

    With ``dense_in_place`` (learners whose kernels read both layouts, see
    :mod:`aucstream._kernels`) a dense block stays a C-contiguous float64 2-D array
    (``indptr`` and ``indices`` None, no copy when it already is one); otherwise it
    becomes CSR arrays that store every entry.
    """
    if dense_in_place and not sp.issparse(X):
        data = np.ascontiguousarray(np.atleast_2d(X), dtype=np.float64)
        indptr = indices = None
        d = data.shape[1]
    else:
        indptr, indices, data, d = csr_arrays(X)
    y = np.ascontiguousarray(y_pm, dtype=np.float64)
    scores = _NO_SCORES if pre_scores is None else pre_scores
    weights = _NO_SCORES if sample_weight is None else sample_weight
    return Chunk(indptr, indices, data, y, d, scores, weights)


def dict_row(x: dict, n_features: int) -> sp.csr_matrix:
    """One example given as ``{feature index: value}`` as a 1 x n_features CSR row."""
    keys = list(x)
    bad = [k for k in keys if isinstance(k, bool) or not isinstance(k, (int, np.integer))]
    if bad:
        raise ValueError(f"feature keys must be integer indices, got {bad[:3]!r}")
    idx = np.asarray(keys, dtype=np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= n_features):
        raise ValueError(
            f"feature index {int(idx[(idx < 0) | (idx >= n_features)][0])} "
            f"is outside [0, {n_features})"
        )
    try:
        vals = np.asarray([x[k] for k in keys], dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"feature values must be numbers ({error})") from error
    order = np.argsort(idx, kind="stable")
    return sp.csr_matrix((vals[order], idx[order], np.array([0, idx.size])), shape=(1, n_features))
