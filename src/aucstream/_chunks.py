"""The one layout in which examples reach the compiled kernels.

Every kernel reads CSR arrays (``indptr``, ``indices``, ``data``) with int64 indices
and float64 values, whatever the input was. A dense block becomes CSR arrays that
store every entry, zeros included, so dense and sparse input run the very same
arithmetic (zeros contribute exact zeros) and give the same model.
"""

from __future__ import annotations

import operator
import struct
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ._calibration import probability_one, threshold_one
from ._kernels import jit, read_only_view

__all__ = [
    "Chunk",
    "check_magnitude",
    "check_sparse_structure",
    "csr_arrays",
    "dict_row",
    "dict_row_arrays",
    "quick_rows",
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
    if data.size == 0 or max(float(data.max()), -float(data.min())) < _SAFE_MAGNITUDE:
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


@jit
def _rows_increase(indptr, indices) -> bool:
    """Whether the indices of each row of a CSR structure (``indptr`` checked: from 0,
    non-decreasing, within ``indices``) increase strictly: sorted, without duplicates."""
    n = indptr.shape[0] - 1
    falls = 0
    for a in range(1, indptr[n]):
        falls += indices[a] <= indices[a - 1]
    for r in range(n):  # each non-empty row's first entry, once
        lo = indptr[r]
        if 0 < lo < indptr[r + 1]:
            falls -= indices[lo] <= indices[lo - 1]
    return falls == 0


def csr_arrays(X, *, finite: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``(indptr, indices, data, n_features)`` of a dense array or sparse matrix
    (checked by :func:`check_sparse_structure`: a malformed one raises ``ValueError``
    before anything reads it); with ``finite``, values that are NaN or infinite raise
    ``ValueError`` too (the public components' input, which no learner checked).

    Indices are int64 and values float64, C-contiguous and read-only views (the
    kernels that read them have one compiled version, whoever passes what); the indices of a row are
    sorted and duplicate entries summed, whatever scipy's flags say (they are cached,
    and stale once the index arrays are written in place). Dense input keeps its
    zeros as explicit entries.
    """
    if sp.issparse(X):
        check_sparse_structure(X)
        X = X.tocsr()
        indptr, indices = read_only_view(X.indptr), read_only_view(X.indices)
        if indptr[0] != 0 or not _rows_increase(indptr, indices):  # (one compiled version)
            X = X.copy()
            X.has_sorted_indices = False  # (the copy's flags: maybe stale ones)
            X.has_canonical_format = False
            X.sum_duplicates()
        arrays = (
            read_only_view(np.ascontiguousarray(X.indptr, dtype=np.int64)),
            read_only_view(np.ascontiguousarray(X.indices, dtype=np.int64)),
            read_only_view(np.ascontiguousarray(X.data, dtype=np.float64)),
            X.shape[1],
        )
    else:
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        n, d = X.shape
        arrays = (*_dense_index(n, d), read_only_view(np.ascontiguousarray(X).ravel()), d)
    if finite and not np.isfinite(arrays[2]).all():
        raise ValueError("X contains NaN or infinity")
    return arrays


#: Index arrays of small dense blocks, by shape (kernels only read them).
_DENSE_INDEX: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
_DENSE_INDEX_ROWS = 8


def _dense_index(n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """``indptr`` and ``indices`` of an n x d dense block stored entry by entry.

    Those of blocks of a few rows are kept (a stream learnt one row at a time asks
    for the same ones at every call).
    """
    key = (n, d)
    found = _DENSE_INDEX.get(key)
    if found is not None:
        return found
    index = (
        read_only_view(np.arange(n + 1, dtype=np.int64) * d),
        read_only_view(np.tile(np.arange(d, dtype=np.int64), n)),
    )
    if n <= _DENSE_INDEX_ROWS:
        if len(_DENSE_INDEX) >= 32:
            _DENSE_INDEX.clear()
        _DENSE_INDEX[key] = index
    return index


def _is_float(dtype: np.dtype) -> bool:
    """float64 or float32 (any byte order; the kernels get native float64)."""
    return dtype.kind == "f" and dtype.itemsize in (4, 8)


def _is_index(dtype: np.dtype) -> bool:
    """int64 or int32 (any byte order; the kernels get native int64)."""
    return dtype.kind == "i" and dtype.itemsize in (4, 8)


@jit
def _values_ok(values):
    """Every value finite and below the magnitude beyond which rows are checked.

    Without a branch per value (so the loop vectorizes), in blocks that end the check
    at the first block with a bad value. (Each block's loop counts from 0 to its
    length: a loop over ``range(start, min(start + size, n))`` inside ``range(0, n,
    size)`` did not vectorize; docs/benchmarks.md.)
    """
    n = values.shape[0]
    for block in range(n // 4096 + 1):
        start = block * 4096
        bad = 0
        for a in range(min(4096, n - start)):
            bad += not abs(values[start + a]) < _SAFE_MAGNITUDE  # (NaN counts)
        if bad:
            return False
    return True


@jit
def _csr_ok(indptr, indices, data, n_cols):
    """A canonical CSR structure (``indptr`` from 0, non-decreasing, inside the
    arrays; indices strictly increasing in each row and inside [0, n_cols)) of
    values that :func:`_values_ok` accepts.

    The indices are checked over the whole array without a loop per row (so the
    loops vectorize): all inside [0, n_cols), and every place where an index does
    not exceed the one before is a row's first entry (the count of such places
    equals the count of them at the first entries of non-empty rows).
    """
    n = indptr.shape[0] - 1
    if indptr[0] != 0:
        return False
    ok = True
    for r in range(n):
        ok &= indptr[r + 1] >= indptr[r]
    nnz = indptr[n]
    if not ok or nnz > indices.shape[0] or nnz > data.shape[0]:
        return False
    falls = 0
    if nnz > 0:
        ok &= (indices[0] >= 0) & (indices[0] < n_cols)
    for a in range(nnz - 1):  # (no branch in the loop: it vectorizes)
        c = indices[a + 1]
        ok &= (c >= 0) & (c < n_cols)
        falls += c <= indices[a]
    for r in range(n):  # each non-empty row's first entry, once
        lo = indptr[r]
        if 0 < lo < indptr[r + 1]:
            falls -= indices[lo] <= indices[lo - 1]
    return ok and falls == 0 and _values_ok(data)


@jit
def load_dense_row(values, out, nonzero):
    """Copy the 1-D ``values`` into row 0 of ``out`` when :func:`_values_ok` accepts
    them and they fill it, and write the columns of its non-zeros into ``nonzero``
    (sorted; as :func:`nonzero_columns`): their number; else -1, ``out`` and
    ``nonzero`` unspecified."""
    if values.shape[0] != out.shape[1] or not _values_ok(values):
        return -1
    k = 0
    for j in range(values.shape[0]):
        v = values[j]
        out[0, j] = v
        nonzero[k] = j
        k += v != 0.0
    return k


@jit
def load_sparse_row(source, idx, vals, n_cols, indptr, indices, data):
    """Make ``indptr``, ``indices``, ``data`` (buffers of any capacity) the CSR arrays
    of one row, the arrays ``source`` (its ``indptr``), ``idx`` and ``vals``, when
    :func:`_csr_ok` accepts them as one row of ``n_cols`` columns: its number of
    stored values; else -1, the buffers unspecified. The row's entries are the first
    ``indptr[1]`` of the buffers."""
    if source.shape[0] != 2 or not _csr_ok(source, idx, vals, n_cols):
        return -1
    k = source[1]
    if k > indices.shape[0] or k > data.shape[0]:
        return -1
    for a in range(k):
        indices[a] = idx[a]
        data[a] = vals[a]
    indptr[0] = 0
    indptr[1] = k
    return k


@jit
def load_row_in_place(indptr, indices, data, n_cols, k):
    """Make the first ``k`` entries of the buffers ``indices`` and ``data`` (written
    in any order of the indices) one CSR row: sorted by index (stably) when they are
    not, ``indptr`` = [0, k]; return k when :func:`_csr_ok` accepts them as a row of
    ``n_cols`` columns, else -1 (the buffers unspecified). ``k`` comes last, so that
    a caller can bind the rest (:func:`aucstream._kernels.bound_call`)."""
    if k < 0 or k > indices.shape[0] or k > data.shape[0] or indptr.shape[0] != 2:
        return -1
    idx, vals = indices[:k], data[:k]
    sort_row(idx, vals)
    indptr[0] = 0
    indptr[1] = k
    if not _csr_ok(indptr, idx, vals, n_cols):
        return -1
    return k


@jit
def sort_row(idx, vals):
    """Sort the entries of one row (``idx``, ``vals``, same length) by index, stably
    and in place, when the indices do not increase; the one sort of every dict row."""
    for a in range(1, idx.shape[0]):
        if idx[a] <= idx[a - 1]:
            order = np.argsort(idx, kind="mergesort")
            sorted_idx, sorted_vals = idx[order], vals[order]
            idx[:] = sorted_idx
            vals[:] = sorted_vals
            return


@jit
def sparse_row_dot(idx, vals, coef):
    """``sum_k vals[k] * coef[idx[k]]`` over the entries sorted by index (sorted in
    place, :func:`sort_row`), summed in that order from 0.0 as scipy's CSR product
    sums a row (so the score of a dict row equals ``decision_function``'s of the same
    row as CSR, bit for bit), or NaN when :func:`_values_ok` refuses the values, an
    index is outside ``coef`` or repeats."""
    if not _values_ok(vals) or idx.shape[0] != vals.shape[0]:
        return np.nan
    sort_row(idx, vals)
    s = 0.0
    for k in range(idx.shape[0]):
        c = idx[k]
        if c < 0 or c >= coef.shape[0] or (k > 0 and c == idx[k - 1]):
            return np.nan
        s += vals[k] * coef[c]
    return s


@jit
def score_packed_row(keys, values, coef, calibration, proba, out, k):
    """Score the row of ``k`` entries packed by :func:`pack_dict_pairs` (the int64
    view ``keys`` and the float64 view ``values`` of its buffer: the indices are
    ``keys[:k]``, the values ``values[k:2 k]``; sorted in place, :func:`sort_row`)
    with the weights ``coef[:-1]`` and the intercept ``coef[-1]``: the decision
    ``w^T x + b - t`` (``t``: the calibration's threshold,
    :func:`aucstream._calibration.threshold_one`; 0.0 for an empty ``calibration``),
    or, with ``proba``, the probability of the positive class
    (:func:`aucstream._calibration.probability_one`), with ``out[0], out[1]`` = the
    two classes' probabilities. The dot is summed in index order from 0.0, as
    :func:`sparse_row_dot`, so the results are those of ``decision_function`` /
    ``predict_proba`` of the same CSR row bit for bit. NaN, ``out`` unspecified,
    when :func:`_values_ok` refuses the values, an index is outside
    ``[0, coef.shape[0] - 1)`` or repeats, ``k`` exceeds the buffers, or
    ``w^T x + b`` is not finite (the usual path then says why)."""
    if k < 0 or 2 * k > keys.shape[0] or 2 * k > values.shape[0]:
        return np.nan
    idx, vals = keys[:k], values[k : 2 * k]
    if not _values_ok(vals):
        return np.nan
    sort_row(idx, vals)
    d = coef.shape[0] - 1
    s = 0.0
    for a in range(k):
        c = idx[a]
        if c < 0 or c >= d or (a > 0 and c == idx[a - 1]):
            return np.nan
        s += vals[a] * coef[c]
    s += coef[d]
    if not np.isfinite(s):
        return np.nan
    if proba:
        p = probability_one(calibration, s)
        out[0] = 1.0 - p
        out[1] = p
        return p
    return s - (threshold_one(calibration) if calibration.shape[0] else 0.0)


@jit
def flagged(seen):
    """The indices of the true entries of the boolean ``seen``, sorted (int64)."""
    out = np.empty(np.count_nonzero(seen), dtype=np.int64)
    m = 0
    for j in range(seen.shape[0]):
        if seen[j]:
            out[m] = j
            m += 1
    return out


@jit
def nonzero_columns(data):
    """The columns of the 2-D ``data`` that hold a non-zero in some row, sorted (int64):
    the features a dense chunk names (NaN counts as non-zero, -0.0 does not)."""
    n, d = data.shape
    seen = np.zeros(d, dtype=np.bool_)
    for r in range(n):
        for j in range(d):
            seen[j] |= data[r, j] != 0.0
    return flagged(seen)


#: The CSR classes :func:`quick_rows` recognizes by their type alone (others by
#: ``issparse`` and their format).
CSR_TYPES = frozenset({sp.csr_matrix, sp.csr_array})
_INT32, _FLOAT64 = np.dtype(np.int32), np.dtype(np.float64)


def quick_rows(X, n_features: int, dense_in_place: bool):
    """The chunk arrays ``(indptr, indices, data)`` of plainly valid rows, else None.

    The check a learner that already knows its width can afford on every call: one
    compiled pass over the values (and the CSR structure), no conversion beyond the
    one :func:`to_chunk` makes. It accepts only what the full validation (scikit-learn's
    ``validate_data``, :func:`check_sparse_structure`, :func:`check_magnitude`)
    accepts unchanged: a float64 or float32 ndarray, or a CSR matrix with int32 or
    int64 indices in canonical form (sorted, no duplicates), of ``n_features``
    columns and at least one row, whose every stored value is finite and below
    1e150 in absolute value. Anything else gives None and the caller validates in
    full, which either raises the usual error or accepts the input after its own
    conversions; accepted rows give the very arrays :func:`to_chunk` would.

    Parameters
    ----------
    X : object
        The rows as given by the caller.
    n_features : int
        The width the learner knows.
    dense_in_place : bool
        Keep dense rows as a 2-D array (``indptr`` and ``indices`` None).

    Returns
    -------
    tuple or None
    """
    if type(X) is np.ndarray:
        if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] != n_features:
            return None
        if not _is_float(X.dtype):
            return None
        data = np.ascontiguousarray(X, dtype=np.float64)
        if not _values_ok(data.reshape(-1)):
            return None
        if dense_in_place:
            return None, None, data
        indptr, indices = _dense_index(data.shape[0], n_features)
        return indptr, indices, data.reshape(-1)
    if type(X) not in CSR_TYPES and not (sp.issparse(X) and X.format == "csr"):
        return None
    shape = X.shape
    if len(shape) != 2:
        return None
    n, d = shape
    indptr, indices, data = X.indptr, X.indices, X.data
    if n < 1 or d != n_features or not _is_float(data.dtype):
        return None
    if not (_is_index(indices.dtype) and _is_index(indptr.dtype)):
        return None
    if indptr.shape != (n + 1,) or indices.ndim != 1 or data.ndim != 1:
        return None
    if indptr.dtype == _INT32 == indices.dtype and data.dtype == _FLOAT64:
        # scipy's usual types: astype is the cheaper copy, float64 data is kept
        indptr, indices = indptr.astype(np.int64), indices.astype(np.int64)
        if not data.flags.c_contiguous:
            data = np.ascontiguousarray(data)
    else:
        indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        indices = np.ascontiguousarray(indices, dtype=np.int64)
        data = np.ascontiguousarray(data, dtype=np.float64)
    if not _csr_ok(indptr, indices, data, d):
        return None
    return indptr, indices, data


def csr_row_dict(X, j: int) -> dict | None:
    """Row ``j`` of a CSR matrix as ``{column: value}`` (a one-example method's dict
    row), or None when a column repeats in it: scipy's cached flags can call such a
    row canonical after its indices were written in place, and a dict would keep only
    the last of the values that the full path sums (:func:`csr_arrays`)."""
    start, stop = X.indptr[j], X.indptr[j + 1]
    row = dict(zip(X.indices[start:stop].tolist(), X.data[start:stop].tolist()))
    return row if len(row) == stop - start else None


def plain_rows(owner, X):
    """``X`` as scikit-learn's ``validate_data`` would return it to ``owner`` (an
    estimator that knows its width and was not fitted with feature names), when it is
    a float64 ndarray or CSR matrix of plainly valid rows (:func:`quick_rows`): the
    dense rows C-contiguous, a CSR matrix itself. Else None: validate in full. The
    checks of a call without the cost of the general validation (most of a one-row
    call: ``benchmarks/bench_base.py``, reported in docs/benchmarks.md).
    """
    plain = plain_rows_for(owner, X)
    return None if plain is None else plain[0]


def plain_rows_for(owner, X) -> tuple | None:
    """:func:`plain_rows` with the CSR arrays its check made
    (:func:`plain_rows_and_arrays`)."""
    state = owner.__dict__
    width = state.get("n_features_in_")
    if width is None or "feature_names_in_" in state:
        return None
    return plain_rows_and_arrays(X, width)


def plain_rows_of_width(X, width: int):
    """:func:`plain_rows` for rows of ``width`` columns, whoever asks (a learner's
    first call takes the width from ``X``)."""
    plain = plain_rows_and_arrays(X, width)
    return None if plain is None else plain[0]


def plain_rows_and_arrays(X, width: int) -> tuple | None:
    """:func:`plain_rows_of_width` and, for a CSR matrix, the chunk arrays
    ``(indptr, indices, data)`` its check made (int64, int64, float64: those
    :func:`csr_arrays` would make of it; :func:`to_chunk` takes them, ``arrays``),
    else None in their place: ``(rows, arrays)``, or None when the rows are not
    plainly valid. A CSR matrix of scipy's int32 indices is thus converted and
    checked once a call, not again by :func:`csr_arrays` (at 10^6 columns and 50
    values a row, about 5% of FTRL-AUC's pass: docs/benchmarks.md)."""
    dense = type(X) is np.ndarray
    if not (dense or type(X) in CSR_TYPES) or X.dtype != np.float64:
        return None
    rows = quick_rows(X, width, True)
    if rows is None:
        return None
    return (rows[2], None) if dense else (X, rows)


class Chunk(NamedTuple):
    """A validated block of examples in the layout every kernel reads.

    An immutable named tuple (cheap to make: a call that learns one example makes
    one).

    Attributes
    ----------
    indptr, indices, data : ndarray
        CSR arrays of the rows (int64, int64, float64, C-contiguous); for dense rows
        kept in place, ``indptr`` and ``indices`` are None and ``data`` is the 2-D
        array (see :func:`to_chunk`).
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

    indptr: np.ndarray | None
    indices: np.ndarray | None
    data: np.ndarray
    y: np.ndarray
    n_features: int
    pre_scores: np.ndarray = _NO_SCORES
    sample_weight: np.ndarray = _NO_SCORES

    @property
    def n_samples(self) -> int:
        return self.y.shape[0]

    @property
    def is_dense(self) -> bool:
        """Whether the rows are a dense 2-D array (``indptr`` and ``indices`` None)."""
        return self.indices is None

    def names_few(self, per_value: int) -> bool:
        """Whether the chunk stores at most 1/``per_value`` as many values as it has
        features (a dense chunk stores them all): then a transaction saves the state's
        rows of its features rather than whole arrays of d rows, a row saved (a random
        access) costing about as much as copying ``per_value`` consecutive floats."""
        stored = self.n_samples * self.n_features if self.indices is None else self.indices.size
        return per_value * stored <= self.n_features

    def dense(self) -> np.ndarray:
        """The rows as a dense float64 array (for batch learners and tests)."""
        if self.indptr is None or self.indices is None:
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
    arrays: tuple | None = None,
) -> Chunk:
    """Turn a validated dense array or sparse matrix and +/-1 labels into a Chunk.

    With ``dense_in_place`` (learners whose kernels read both layouts, see
    :mod:`aucstream._kernels`) a dense block stays a C-contiguous float64 2-D array
    (``indptr`` and ``indices`` None, no copy when it already is one); otherwise it
    becomes CSR arrays that store every entry. ``arrays``: the CSR arrays of ``X``
    that :func:`plain_rows_and_arrays` checked in the same call, taken as they are.
    """
    if arrays is not None:
        indptr, indices, data = arrays
        d = X.shape[1]
    elif dense_in_place and not sp.issparse(X):
        data = np.ascontiguousarray(np.atleast_2d(X), dtype=np.float64)
        indptr = indices = None
        d = data.shape[1]
    else:
        indptr, indices, data, d = csr_arrays(X)
    y = np.ascontiguousarray(y_pm, dtype=np.float64)
    scores = _NO_SCORES if pre_scores is None else pre_scores
    weights = _NO_SCORES if sample_weight is None else sample_weight
    return Chunk(indptr, indices, data, y, d, scores, weights)


#: The layouts of ``k`` int64 keys and ``k`` float64 values, by ``k`` (kept: building
#: one costs a visible part of a one-row call; a dict lookup costs less than a cached
#: function's call).
_DICT_ROW_STRUCTS: dict[int, tuple[struct.Struct, struct.Struct]] = {}


def _dict_row_structs(k: int) -> tuple[struct.Struct, struct.Struct]:
    """The layouts of ``k`` keys and ``k`` values (made once per ``k``)."""
    if len(_DICT_ROW_STRUCTS) >= 1024:
        _DICT_ROW_STRUCTS.clear()
    found = _DICT_ROW_STRUCTS[k] = struct.Struct(f"={k}q"), struct.Struct(f"={k}d")
    return found


def pack_dict_row(x: dict, indices: np.ndarray, data: np.ndarray) -> bool:
    """Write the keys of the ``{index: value}`` row ``x`` into ``indices[:len(x)]``
    (int64) and its values into ``data[:len(x)]`` (float64), in the dict's order.

    The one rule by which every reader of dict rows takes them: a key is an integer
    within int64 (Python's and numpy's integers, anything with ``__index__``; not a
    bool), a value a real number within float64 (what ``float`` takes but strings:
    numbers of any type, Decimal and bool included; not None, a sequence or a complex
    number). False, the buffers holding part of the row, when a key or value breaks
    it (:func:`dict_row_error` says which). The keys are not checked against a width.

    Packed by :mod:`struct` into the buffers (C-contiguous, writeable; a buffer too
    small is refused too): cheaper than a check of the keys' types, a numpy assignment
    of the keys and an ``array("d")`` of the values (``learn_one, dict`` in
    ``benchmarks/bench_base.py``, reported in docs/benchmarks.md).
    """
    layouts = _DICT_ROW_STRUCTS.get(len(x))
    key_layout, value_layout = _dict_row_structs(len(x)) if layouts is None else layouts
    try:
        # (numpy arrays are buffers; the stubs of Python 3.10 cannot say so)
        key_layout.pack_into(indices, 0, *x)  # type: ignore[arg-type]
        value_layout.pack_into(data, 0, *x.values())  # type: ignore[arg-type]
    except (struct.error, TypeError, ValueError, OverflowError):
        return False
    return _no_bool_key(x)


def _no_bool_key(x: dict) -> bool:
    """Whether no key of ``x`` is a bool. :mod:`struct` takes True and False as 1 and
    0: only the key equal to 0 or 1 can be a bool (a scan of every key's type would
    cost more than the packing)."""
    if 0 in x or 1 in x:
        keys = list(x)
        if 0 in x and type(keys[keys.index(0)]) is bool:
            return False
        return not (1 in x and type(keys[keys.index(1)]) is bool)
    return True


#: The layouts of ``k`` int64 keys followed by ``k`` float64 values, by ``k``.
_DICT_PAIR_STRUCTS: dict[int, struct.Struct] = {}


def pack_dict_pairs(x: dict, buffer: np.ndarray) -> bool:
    """:func:`pack_dict_row` in one :mod:`struct` call: the keys of ``x`` (int64)
    then its values (float64), ``k = len(x)`` of each, into the first ``16 k`` bytes
    of ``buffer`` (C-contiguous, writeable): as int64 the keys are ``buffer[:k]``,
    as float64 the values ``buffer[k:2 k]`` (:func:`score_packed_row` reads them so).
    One call (one argument tuple, one buffer export) costs about two thirds of the
    two of :func:`pack_dict_row`. The same rule and the same False."""
    k = len(x)
    layout = _DICT_PAIR_STRUCTS.get(k)
    if layout is None:
        if len(_DICT_PAIR_STRUCTS) >= 1024:
            _DICT_PAIR_STRUCTS.clear()
        layout = _DICT_PAIR_STRUCTS[k] = struct.Struct(f"={k}q{k}d")
    try:
        layout.pack_into(buffer, 0, *x, *x.values())  # type: ignore[arg-type]
    except (struct.error, TypeError, ValueError, OverflowError):
        return False
    return _no_bool_key(x)


def dict_row_values(x: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """The keys (int64) and values (float64) of a ``{index: value}`` row in its own
    order, or None when :func:`pack_dict_row` refuses it (:func:`dict_row_error` then
    says why). The indices are not checked against a width (:func:`sparse_row_dot`
    checks them)."""
    idx, vals = np.empty(len(x), dtype=np.int64), np.empty(len(x))
    return (idx, vals) if pack_dict_row(x, idx, vals) else None


def dict_row_arrays(x: dict, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """Column indices (sorted, int64) and values (float64) of a ``{index: value}`` row
    (converted by :func:`dict_row_values`).

    Raises
    ------
    ValueError
        For a key that is not an integer index inside [0, n_features), or a value
        that is not a real number within float64 (:func:`pack_dict_row`).
    """
    row = dict_row_values(x)
    if row is None:
        raise ValueError(dict_row_error(x, n_features))
    idx, vals = row
    outside = (idx < 0) | (idx >= n_features)
    if outside.any():
        raise ValueError(f"feature index {int(idx[outside][0])} is outside [0, {n_features})")
    sort_row(idx, vals)
    return idx, vals


_KEY, _VALUE = struct.Struct("=q"), struct.Struct("=d")


def dict_row_error(x: dict, n_features: int) -> str:
    """What :func:`pack_dict_row` refused in ``x``: keys that are not integers, one
    beyond int64, or the first value that is not a real number (named)."""

    def integer(key) -> bool:
        try:
            operator.index(key)
        except TypeError:
            return False
        return type(key) is not bool

    bad = [k for k in x if not integer(k)]
    if bad:
        return f"feature keys must be integer indices, got {bad[:3]!r}"
    for key, value in x.items():
        try:
            _KEY.pack(key)
        except (struct.error, TypeError, ValueError, OverflowError):
            return f"feature index {key} is outside [0, {n_features})"
        try:
            _VALUE.pack(value)
        except (struct.error, TypeError, ValueError, OverflowError):
            shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
            return (
                f"feature {key!r} has the value {shown} ({type(value).__name__}): feature "
                "values must be real numbers within the range of float64"
            )
    return "feature keys and values must be integers and real numbers"  # pragma: no cover


def dict_row(x: dict, n_features: int) -> sp.csr_matrix:
    """One example given as ``{feature index: value}`` as a 1 x n_features CSR row."""
    idx, vals = dict_row_arrays(x, n_features)
    return sp.csr_matrix((vals, idx, np.array([0, idx.size])), shape=(1, n_features))
