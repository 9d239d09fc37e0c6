"""A transformer and a streaming learner, fed one chunk of rows at a time.

:class:`ChunkedPipeline` is how a learner meets data that are only ever materialized
chunk by chunk: random Fourier features of G16 §7.2 (``d + 50,000`` dense columns,
see :mod:`aucstream.random_features`) or a fitted dimension reduction
(:mod:`aucstream.reduction`). Memory is that of one transformed chunk.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted

from .metrics import roc_auc

__all__ = ["ChunkedPipeline"]


class ChunkedPipeline(ClassifierMixin, BaseEstimator):
    """A transformer followed by a streaming learner, fed one chunk of rows at a time.

    ``fit`` fits the transformer on the training data (``RandomFourierFeatures`` only
    needs d and the width), then passes over the examples in the given order,
    transforming ``chunk_size`` rows and calling the learner's ``partial_fit`` on
    them. For aucstream learners the result equals ``learner.fit(transform(X))``
    (without ``shuffle``: chunking never changes their model), but the transformed
    data never exist all at once. ``decision_function`` also works chunk by chunk.

    Parameters
    ----------
    transformer : transformer
        E.g. :class:`RandomFourierFeatures` or a fitted-on-the-fly
        :class:`aucstream.reduction.ReduceDimension`.
    estimator : streaming classifier
        A learner with ``partial_fit`` and ``decision_function`` (any aucstream
        online learner). Its ``shuffle`` is ignored: shuffle the data beforehand.
    chunk_size : int, default=256
        Rows per chunk.

    Attributes
    ----------
    transformer_, estimator_
        The fitted clones.
    classes_ : ndarray of shape (2,)
        The labels.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream import OPAUC
    >>> from aucstream.pipeline import ChunkedPipeline
    >>> from aucstream.random_features import RandomFourierFeatures
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(300, 2))
    >>> y = np.where(np.hypot(X[:, 0], X[:, 1]) < 0.7, 1, -1)  # not linearly separable
    >>> model = ChunkedPipeline(RandomFourierFeatures(500, sigma=0.5),
    ...                         OPAUC(covariance="fd", sketch_size=20, eta=2**-2),
    ...                         chunk_size=64).fit(X, y)
    >>> bool(model.score(X, y) > 0.9)
    True
    """

    def __init__(self, transformer, estimator, chunk_size: int = 256):
        self.transformer = transformer
        self.estimator = estimator
        self.chunk_size = chunk_size

    def _chunks(self, n: int):
        if not (isinstance(self.chunk_size, (int, np.integer)) and self.chunk_size >= 1):
            raise ValueError(f"chunk_size must be a positive int, got {self.chunk_size!r}")
        return range(0, n, int(self.chunk_size))

    def _start(self, X, y, classes) -> None:
        self.transformer_ = clone(self.transformer).fit(X, y)
        self.estimator_ = clone(self.estimator)
        self.classes_ = np.unique(y if classes is None else classes)

    def _feed(self, X, y) -> ChunkedPipeline:
        for lo in self._chunks(X.shape[0]):
            rows = slice(lo, lo + int(self.chunk_size))
            self.estimator_.partial_fit(
                self.transformer_.transform(X[rows]), y[rows], classes=self.classes_
            )
        return self

    def fit(self, X, y) -> ChunkedPipeline:
        """Fit the transformer, then one pass of the learner over the chunks."""
        y = np.asarray(y)
        self._start(X, y, None)
        return self._feed(X, y)

    def partial_fit(self, X, y, classes=None) -> ChunkedPipeline:
        """Continue the stream; the first call also fits the transformer on ``X``."""
        y = np.asarray(y)
        if not hasattr(self, "estimator_"):
            self._start(X, y, classes)
        return self._feed(X, y)

    def decision_function(self, X) -> np.ndarray:
        """Scores of the rows of ``X``, computed chunk by chunk."""
        check_is_fitted(self, "estimator_")
        parts = [
            self.estimator_.decision_function(
                self.transformer_.transform(X[lo : lo + int(self.chunk_size)])
            )
            for lo in self._chunks(X.shape[0])
        ]
        return np.concatenate(parts) if parts else np.zeros(0)

    def predict(self, X) -> np.ndarray:
        """Labels from thresholding the scores at 0."""
        return self.classes_[(self.decision_function(X) > 0).astype(np.intp)]

    def score(self, X, y, sample_weight=None) -> float:
        """ROC AUC of the scores (not accuracy)."""
        if sample_weight is not None:
            raise ValueError("score does not support sample_weight")
        y = np.asarray(y).ravel()
        return roc_auc(y == self.classes_[-1], self.decision_function(X))
