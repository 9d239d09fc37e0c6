"""Feature scaling for streams.

The two transformers are thin subclasses of scikit-learn's own
:class:`~sklearn.preprocessing.MinMaxScaler` and
:class:`~sklearn.preprocessing.Normalizer`: they fix the parameters the AUC papers
use and add what a stream needs (``partial_fit``, constant features mapped to 0).

The label conversions (``binarize_*``) live in :mod:`aucstream.datasets._labels`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from sklearn.preprocessing import MinMaxScaler, Normalizer
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from .._chunks import check_sparse_structure
from .._typing import Matrix

__all__ = ["MinMaxScalerPM1", "UnitNormalizer"]


# ------------------------------------------------------------------- transformers


class MinMaxScalerPM1(MinMaxScaler):
    """Scale each feature to ``[-1, 1]`` with the minimum and maximum seen in fit.

    This is :class:`sklearn.preprocessing.MinMaxScaler` with
    ``feature_range=(-1, 1)`` and ``clip=True`` fixed (the scaling of the LIBSVM
    ``*_scale`` files), except that a feature that was constant in the fitted data
    is mapped to 0 (sklearn maps it to the lower end, -1). Values outside the fitted
    range, in later data, are clipped to ``[-1, 1]``. ``partial_fit`` updates the
    minimum and maximum chunk by chunk, so the scaler can be fitted on a stream.

    Dense input only: like ``MinMaxScaler`` it raises :class:`TypeError` for sparse
    input, since shifting by the minimum would destroy sparsity. Use
    :class:`sklearn.preprocessing.MaxAbsScaler` for sparse data (it scales to
    ``[-1, 1]`` by the largest absolute value and keeps zeros).

    Parameters
    ----------
    copy : bool, default=True
        Set to False to scale a float array in place where possible.

    Attributes
    ----------
    data_min_, data_max_, data_range_ : ndarray of shape (n_features,)
        Per-feature minimum, maximum and range of the data seen so far.
    scale_, min_ : ndarray of shape (n_features,)
        ``X_scaled = clip(X * scale_ + min_, -1, 1)``; both are 0 for constant features.
    n_samples_seen_ : int
        Number of rows seen so far.
    n_features_in_ : int
        Number of features.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.preprocessing import MinMaxScalerPM1
    >>> MinMaxScalerPM1().fit_transform(np.array([[0.0, 5.0], [2.0, 5.0], [4.0, 5.0]]))
    array([[-1.,  0.],
           [ 0.,  0.],
           [ 1.,  0.]])
    """

    scale_: np.ndarray
    min_: np.ndarray

    _parameter_constraints: dict = {"copy": ["boolean"]}

    def __init__(self, *, copy: bool = True):
        self.copy = copy

    # fixed parameters of the parent, exposed read-only (not constructor parameters)
    @property
    def feature_range(self) -> tuple[int, int]:
        return (-1, 1)

    @property
    def clip(self) -> bool:
        return True

    def partial_fit(self, X: ArrayLike, y: object = None) -> MinMaxScalerPM1:
        """Update the per-feature minimum and maximum with a chunk of rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            A chunk of the stream (dense).
        y : None
            Ignored.

        Returns
        -------
        self : MinMaxScalerPM1
        """
        super().partial_fit(X, y)
        constant = self.data_range_ == 0
        if constant.any():
            self.scale_ = np.where(constant, 0.0, self.scale_)
            self.min_ = np.where(constant, 0.0, self.min_)
        return self

    def inverse_transform(self, X: ArrayLike) -> np.ndarray:
        """Undo the scaling (constant features come back as their fitted value).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Scaled data.

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = check_array(
            X, copy=self.copy, dtype=[np.float64, np.float32], ensure_all_finite="allow-nan"
        )
        constant = self.data_range_ == 0
        scale = np.where(constant, 1.0, self.scale_)
        X -= self.min_
        X /= scale
        X[:, constant] = self.data_min_[constant]
        return X


class UnitNormalizer(Normalizer):
    """Scale each row to unit Euclidean norm (rows of zeros stay zero).

    This is :class:`sklearn.preprocessing.Normalizer` with ``norm="l2"`` fixed, plus
    a ``partial_fit`` so it can sit in a streaming pipeline. It keeps no statistics:
    ``fit`` and ``partial_fit`` only check the input and record ``n_features_in_``.
    Dense and sparse (CSR) input are both accepted; sparse input stays sparse.

    Parameters
    ----------
    copy : bool, default=True
        Set to False to normalise a float array or CSR matrix in place.

    Attributes
    ----------
    n_features_in_ : int
        Number of features seen in the first ``fit`` / ``partial_fit``.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.preprocessing import UnitNormalizer
    >>> UnitNormalizer().fit_transform(np.array([[3.0, 4.0], [0.0, 0.0]]))
    array([[0.6, 0.8],
           [0. , 0. ]])
    """

    _parameter_constraints: dict = {"copy": ["boolean"]}

    def __init__(self, *, copy: bool = True):
        self.copy = copy

    @property
    def norm(self) -> str:
        return "l2"

    def partial_fit(self, X: ArrayLike, y: object = None) -> UnitNormalizer:
        """Check a chunk of rows (the normaliser has no state to update).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            A chunk of the stream.
        y : None
            Ignored.

        Returns
        -------
        self : UnitNormalizer
        """
        check_sparse_structure(X, "X")
        validate_data(self, X, accept_sparse="csr", reset=not hasattr(self, "n_features_in_"))
        return self

    def fit(self, X: ArrayLike, y: object = None) -> UnitNormalizer:
        """:class:`~sklearn.preprocessing.Normalizer`'s ``fit``, after the sparse
        structure is checked (:func:`aucstream._chunks.check_sparse_structure`)."""
        check_sparse_structure(X, "X")
        return super().fit(X, y)

    def transform(self, X: ArrayLike, copy: bool | None = None) -> Matrix:
        """:class:`~sklearn.preprocessing.Normalizer`'s ``transform``, after the sparse
        structure is checked: scikit-learn's compiled row normalisation reads
        ``indptr`` and ``indices`` as they are."""
        check_sparse_structure(X, "X")
        return super().transform(X, copy=copy)
