"""Feature scaling for streams, and multi-class to binary label conversions.

The two transformers are thin subclasses of scikit-learn's own
:class:`~sklearn.preprocessing.MinMaxScaler` and
:class:`~sklearn.preprocessing.Normalizer`: they fix the parameters the AUC papers
use and add what a stream needs (``partial_fit``, constant features mapped to 0).

The ``binarize_*`` functions turn class labels into ``{-1, +1}`` (int64). They work
for numeric and string labels alike.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike
from sklearn.preprocessing import MinMaxScaler, Normalizer
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

__all__ = [
    "MinMaxScalerPM1",
    "UnitNormalizer",
    "binarize_largest_vs_rest",
    "binarize_one_vs_rest",
    "binarize_random_halves",
    "binarize_smallest_vs_rest",
]


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
    >>> from aucstream.datasets import MinMaxScalerPM1
    >>> MinMaxScalerPM1().fit_transform(np.array([[0.0, 5.0], [2.0, 5.0], [4.0, 5.0]]))
    array([[-1.,  0.],
           [ 0.,  0.],
           [ 1.,  0.]])
    """

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
    >>> from aucstream.datasets import UnitNormalizer
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
        validate_data(self, X, accept_sparse="csr", reset=not hasattr(self, "n_features_in_"))
        return self


# ------------------------------------------------------------- label conversions


def _classes(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    classes, counts = np.unique(y, return_counts=True)
    return classes, counts


def _as_labels(y: ArrayLike) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-dimensional, got shape {y.shape}")
    return y


def _apply_positive(y: ArrayLike, positive: Sequence | np.ndarray) -> np.ndarray:
    """Map labels to +1 when they are in ``positive`` and to -1 otherwise.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.
    positive : sequence
        The labels that become +1.

    Returns
    -------
    ndarray of int64 of shape (n_samples,)
        Values in ``{-1, +1}``.
    """
    y = _as_labels(y)
    pos = np.asarray(list(positive) if not isinstance(positive, np.ndarray) else positive)
    if pos.size == 0:
        return np.full(y.shape, -1, dtype=np.int64)
    return np.where(np.isin(y, pos), 1, -1).astype(np.int64)


def _random_halves_partition(classes: ArrayLike, random_state: int | None = 0) -> np.ndarray:
    """The classes that :func:`binarize_random_halves` makes positive.

    Parameters
    ----------
    classes : array-like
        The distinct class labels (duplicates are removed; order does not matter).
    random_state : int, numpy Generator or None, default=0
        Seed of ``np.random.default_rng``.

    Returns
    -------
    ndarray
        ``floor(K / 2)`` of the ``K`` classes, sorted.
    """
    classes = np.unique(np.asarray(classes))
    k = classes.size
    if k < 2:
        raise ValueError(f"need at least 2 classes to split, got {k}")
    rng = np.random.default_rng(random_state)
    perm = rng.permutation(k)
    return np.sort(classes[perm[: k // 2]])


def binarize_random_halves(
    y: ArrayLike, random_state: int | None = 0, *, classes: ArrayLike | None = None
) -> np.ndarray:
    """Split the classes at random into two halves: ``floor(K/2)`` of them become +1.

    The ``K`` distinct classes are sorted, permuted with
    ``np.random.default_rng(random_state)``, and the first ``floor(K/2)`` of the
    permutation are positive. The partition depends only on the set of classes and
    the seed, so a train part and a test part with the same classes get the same one;
    pass ``classes`` when a part may lack some class.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels (numbers or strings).
    random_state : int, numpy Generator or None, default=0
        Seed of the permutation.
    classes : array-like or None, default=None
        All class labels of the problem; default: the distinct values of ``y``.

    Returns
    -------
    ndarray of int64 of shape (n_samples,)
        Labels in ``{-1, +1}``.

    Examples
    --------
    >>> from aucstream.datasets import binarize_random_halves
    >>> y = binarize_random_halves([0, 1, 2, 3, 0, 1], random_state=0)
    >>> sorted(set(y.tolist()))
    [-1, 1]
    """
    y = _as_labels(y)
    pos = _random_halves_partition(y if classes is None else classes, random_state)
    return _apply_positive(y, pos)


def binarize_one_vs_rest(y: ArrayLike, positive: object) -> np.ndarray:
    """One class against all the others.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.
    positive : label
        The class that becomes +1; it must occur in ``y``.

    Returns
    -------
    ndarray of int64 of shape (n_samples,)
        +1 where ``y == positive``, -1 elsewhere.
    """
    y = _as_labels(y)
    if not np.isin(np.asarray([positive]), y).all():
        raise ValueError(f"positive class {positive!r} does not occur in y")
    return _apply_positive(y, np.asarray([positive]))


def _largest_class(y: ArrayLike) -> object:
    """The most frequent label of ``y`` (ties: the smallest label)."""
    classes, counts = _classes(_as_labels(y))
    if classes.size == 0:
        raise ValueError("y is empty")
    return classes[np.argmax(counts)]


def _smallest_class(y: ArrayLike) -> object:
    """The least frequent label of ``y`` (ties: the smallest label)."""
    classes, counts = _classes(_as_labels(y))
    if classes.size == 0:
        raise ValueError("y is empty")
    return classes[np.argmin(counts)]


def binarize_largest_vs_rest(y: ArrayLike) -> np.ndarray:
    """The most frequent class against all the others.

    "Largest" means the class with the most examples in ``y`` (ties broken by the
    smallest label), not the largest label value.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.

    Returns
    -------
    ndarray of int64 of shape (n_samples,)
        +1 for the most frequent class, -1 elsewhere.
    """
    y = _as_labels(y)
    return _apply_positive(y, np.asarray([_largest_class(y)]))


def binarize_smallest_vs_rest(y: ArrayLike) -> np.ndarray:
    """The least frequent class against all the others (an imbalanced problem).

    "Smallest" means the class with the fewest examples in ``y`` (ties broken by
    the smallest label), not the smallest label value.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.

    Returns
    -------
    ndarray of int64 of shape (n_samples,)
        +1 for the least frequent class, -1 elsewhere.
    """
    y = _as_labels(y)
    return _apply_positive(y, np.asarray([_smallest_class(y)]))
