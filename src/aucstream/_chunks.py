"""The one layout in which examples reach the compiled kernels.

Every kernel reads CSR arrays (``indptr``, ``indices``, ``data``) with int64 indices
and float64 values, whatever the input was. A dense block becomes CSR arrays that
store every entry, zeros included, so dense and sparse input run the very same
arithmetic (zeros contribute exact zeros) and give the same model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["Chunk", "csr_arrays", "to_chunk"]


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
    """

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    y: np.ndarray
    n_features: int

    @property
    def n_samples(self) -> int:
        return self.indptr.shape[0] - 1

    def dense(self) -> np.ndarray:
        """The rows as a dense float64 array (for batch learners and tests)."""
        X = np.zeros((self.n_samples, self.n_features))
        rows = np.repeat(np.arange(self.n_samples), np.diff(self.indptr))
        X[rows, self.indices] = self.data
        return X


def to_chunk(X, y_pm: np.ndarray) -> Chunk:
    """Turn a validated dense array or sparse matrix and +/-1 labels into a Chunk."""
    indptr, indices, data, d = csr_arrays(X)
    return Chunk(indptr, indices, data, np.ascontiguousarray(y_pm, dtype=np.float64), d)
