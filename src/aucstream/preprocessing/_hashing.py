r"""Hashed features: string and categorical columns in a fixed width (the hashing trick).

Streams of ads, fraud or text carry columns of strings (a city, a device, a
merchant) with more values than any one-hot encoding fixed in advance can hold.
The hashing trick (Weinberger, Dasgupta, Langford, Smola and Attenberg, "Feature
hashing for large scale multitask learning", ICML 2009) maps every feature name to
one of ``n_features`` columns with a signed hash, so the width is fixed before the
stream starts and new values need no new columns.

The conventions are scikit-learn's :class:`~sklearn.feature_extraction.FeatureHasher`
with ``input_type="dict"`` and ``alternate_sign=True``, and the hashing *is*
scikit-learn's (its MurmurHash3 of the UTF-8 bytes, seed 0): the matrices equal
``FeatureHasher(n_features, input_type="dict").transform(rows)`` on the same rows,
entry for entry. For a row given as ``{name: value}``:

- a **string** value ``v`` of column ``name`` is the feature ``"name=v"`` with value
  1 (a category: one-hot before hashing);
- a **number** (bools count as 0/1) is the feature ``"name"`` with that value (kept
  as a value, not as a category), so numeric and string columns combine in one
  row: :math:`x_{h(f)} \mathrel{+}= s(f)\, v_f` over the row's features :math:`f`,
  with :math:`h(f)` the hash modulo ``n_features`` and :math:`s(f) = \pm 1` its sign;
- a missing value (``None``, NaN, a pandas ``NA``; an empty CSV field) is absent,
  as is a number 0 (FeatureHasher skips zeros).

Colliding features add their signed values (the sign makes the inner products
unbiased, Weinberger et al. §2). The output is a CSR matrix of float64 with sorted
indices and no duplicates, the layout the learners read.

``n_features`` must be a power of two (``2**k``): FeatureHasher recommends it (the
modulo of a 32-bit hash then keeps its low bits, evenly), and the command line's
``--hash-features 2^20`` reads that way. Bools, non-integers and values <= 0 are
refused.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, TransformerMixin

from .._typing import DictRow, MatrixLike

__all__ = ["FeatureHashing", "check_hash_width", "hash_rows"]

#: The default width: 2**20 columns (FeatureHasher's default).
DEFAULT_WIDTH = 2**20


def check_hash_width(n_features: Any, name: str = "hash_features") -> int:
    """``n_features`` as an int, after checking it is a power of two (``2**k``, k >= 0).

    Parameters
    ----------
    n_features : int
        The width.
    name : str, default="hash_features"
        How the error messages name it.

    Returns
    -------
    int

    Raises
    ------
    TypeError
        If it is a bool or not an integer.
    ValueError
        If it is <= 0 or not a power of two.

    Examples
    --------
    >>> check_hash_width(2**10)
    1024
    """
    if isinstance(n_features, (bool, np.bool_)) or not isinstance(
        n_features, (numbers.Integral, np.integer)
    ):
        raise TypeError(f"{name} must be an int power of two (2**k), got {n_features!r}")
    n = int(n_features)
    if n <= 0:
        raise ValueError(f"{name} must be a positive power of two (2**k), got {n}")
    if n & (n - 1):
        raise ValueError(
            f"{name} must be a power of two (2**k), got {n} (e.g. {1 << (n.bit_length() - 1)} "
            f"or {1 << n.bit_length()})"
        )
    return n


def _missing(value) -> bool:
    if value is None:
        return True
    if isinstance(value, (float, np.floating)):
        return math.isnan(value)
    try:
        import pandas as pd

        return value is pd.NA or value is pd.NaT
    except ImportError:  # pragma: no cover - pandas is a dependency
        return False


def _clean(row: Mapping) -> dict:
    """A row for FeatureHasher: names as strings, missing values dropped, numbers
    checked finite, numpy scalars as Python values."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if _missing(value):
            continue
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, str):
            out[str(key)] = value
        elif isinstance(value, (numbers.Real, bool)):
            if not math.isfinite(value):
                raise ValueError(f"feature {key!r} has the non-finite value {value!r}")
            out[str(key)] = value
        else:  # a category of another type (a pandas Categorical of ints, a date...)
            out[str(key)] = str(value)
    return out


def hash_rows(rows: Iterable[Mapping], n_features: int) -> sp.csr_matrix:
    """Hash dict rows ``{name: value}`` into a CSR matrix of width ``n_features``.

    Parameters
    ----------
    rows : iterable of dict
        One dict per example (see the module docstring: strings are categories,
        numbers values, None/NaN absent).
    n_features : int
        The width, a power of two.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_rows, n_features), float64
        Equal to ``FeatureHasher(n_features, input_type="dict").transform(rows)``.

    Examples
    --------
    >>> X = hash_rows([{"city": "Paris", "age": 30.0}, {"city": "Oslo"}], 2**8)
    >>> X.shape, X.nnz
    ((2, 256), 3)
    """
    from sklearn.feature_extraction import FeatureHasher

    n_features = check_hash_width(n_features, "n_features")
    cleaned = [_clean(row) for row in rows]
    if not cleaned:
        return sp.csr_matrix((0, n_features), dtype=np.float64)
    hasher = FeatureHasher(n_features=n_features, input_type="dict", alternate_sign=True)
    X = sp.csr_matrix(hasher.transform(cleaned), dtype=np.float64)
    X.sum_duplicates()
    return X


def _dict_rows(X) -> list[dict]:
    """The rows of a DataFrame, a 2-D array or a list of dicts, as dicts."""
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        pd = None
    if pd is not None and isinstance(X, pd.DataFrame):
        names = [str(c) for c in X.columns]
        columns = [X[c].to_numpy(dtype=object) for c in X.columns]
        return [dict(zip(names, values)) for values in zip(*columns)]
    if isinstance(X, Mapping):
        raise TypeError("X must be a list of dict rows, a DataFrame or a 2-D array, not a dict")
    if sp.issparse(X):
        raise TypeError("X is already numeric and sparse: hashing applies to named columns")
    if isinstance(X, np.ndarray) or (isinstance(X, (list, tuple)) and X and not _is_dict(X[0])):
        array = np.asarray(X, dtype=object)
        if array.ndim != 2:
            raise ValueError(f"X must be 2-D (rows of columns), got shape {array.shape}")
        names = [str(k) for k in range(array.shape[1])]
        return [dict(zip(names, values)) for values in array]
    rows = list(X)
    for i, row in enumerate(rows):
        if not _is_dict(row):
            raise TypeError(f"row {i} is a {type(row).__name__}, not a dict of features")
    return rows


def _is_dict(value) -> bool:
    return isinstance(value, Mapping)


class FeatureHashing(TransformerMixin, BaseEstimator):
    """Hash string, categorical and numeric columns into ``n_features`` columns (CSR).

    A stateless transformer (see the module docstring :mod:`aucstream.preprocessing._hashing`
    for the conventions, those of scikit-learn's ``FeatureHasher(input_type="dict")``,
    whose output it equals): a column of strings or categories becomes one signed
    hashed feature per value, ``"name=value"``; a numeric column keeps its value
    under the hashed feature ``"name"``. It takes a pandas DataFrame (column names
    are the feature names), a list of dict rows, or a 2-D array (the names are the
    column positions ``"0"``, ``"1"``, ...), so it fits in a scikit-learn pipeline
    in front of any aucstream learner and in :func:`aucstream.evaluation.prequential`
    streams.

    Parameters
    ----------
    n_features : int, default=2**20
        The width, a power of two.

    Attributes
    ----------
    n_features_out_ : int
        The width of the output (set by ``fit`` / ``partial_fit``).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"city": ["Paris", "Oslo", None], "age": [30.0, 41.0, 25.0]})
    >>> X = FeatureHashing(n_features=2**10).fit_transform(frame)
    >>> X.shape, X.nnz
    ((3, 1024), 5)
    """

    def __init__(self, n_features: int = DEFAULT_WIDTH):
        self.n_features = n_features

    def fit(
        self, X: MatrixLike | Iterable[DictRow] | None = None, y: ArrayLike | None = None
    ) -> FeatureHashing:
        """Check the width (nothing is learnt: the hashing is fixed).

        Parameters
        ----------
        X, y : ignored

        Returns
        -------
        self
        """
        self.n_features_out_ = check_hash_width(self.n_features, "n_features")
        return self

    def partial_fit(
        self, X: MatrixLike | Iterable[DictRow] | None = None, y: ArrayLike | None = None
    ) -> FeatureHashing:
        """As :meth:`fit` (for streams).

        Parameters
        ----------
        X, y : ignored

        Returns
        -------
        self
        """
        return self.fit(X, y)

    def transform(self, X: MatrixLike | Iterable[DictRow]) -> sp.csr_matrix:
        """The hashed rows.

        Parameters
        ----------
        X : DataFrame, list of dict, or 2-D array
            The rows.

        Returns
        -------
        scipy.sparse.csr_matrix of shape (n_rows, n_features), float64
        """
        width = check_hash_width(self.n_features, "n_features")
        return hash_rows(_dict_rows(X), width)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        tags.input_tags.two_d_array = True
        tags.input_tags.string = True
        tags.input_tags.dict = True
        return tags
