"""Transformers in front of streaming learners.

:class:`StreamPipeline` puts an online transformer (the online scaler) in front of a
learner, both learning in the same pass: one learner of the stream, with every
guarantee of the others (chunk invariance, transactions, merging, saving).

:class:`ChunkedPipeline` is how a learner meets data that are only ever materialized
chunk by chunk: random Fourier features of G16 §7.2 (``d + 50,000`` dense columns,
see :mod:`aucstream.random_features`) or a fitted dimension reduction
(:mod:`aucstream.reduction`). Memory is that of one transformed chunk.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import BaseStreamingAUC
from ._chunks import check_sparse_structure
from ._params import Interval, Real, StrOptions
from ._runtime import LearnerTags
from .drift import DriftDetector
from .metrics import roc_auc

__all__ = ["ChunkedPipeline", "StreamPipeline"]

#: ``half_life`` of the default scaler when ``drift`` is on (examples): long against
#: the scaler's own noise (a standard deviation from about ``2.9 * half_life``
#: weighted rows), short against the concepts of the drift benchmark
#: (``benchmarks/bench_drift.py``).
_SCALER_HALF_LIFE = 10_000.0


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


class StreamPipeline(BaseStreamingAUC):
    r"""An online transformer in front of a learner, both learning in the same pass.

    Every chunk goes through ``transformer.partial_fit_transform`` — each row is
    transformed with the statistics of the rows *before* it (for
    :class:`~aucstream.preprocessing.OnlineStandardScaler`: standardized by the running
    mean and standard deviation), then the statistics learn it — and the transformed
    chunk goes to the learner. Scoring transforms with the current statistics. So
    the pipeline is one learner of the one pass: ``partial_fit``, ``test_then_train``,
    ``merge``, ``save_model`` and ``learn_one`` work as for any aucstream learner, and
    the result does not depend on how the stream is cut into chunks.

    ``StreamPipeline()`` with no arguments is the library's tuning-free learner: the
    online scaler in front of :class:`~aucstream.OnePassSearch`, which races the
    online AUC learners on the stream and keeps the best. It needs neither a scaled
    file nor a tuning grid. By default it also recovers from changes of the stream
    (``drift="auto"``): the search watches its leader's AUC and reopens its race when
    it drops (:mod:`aucstream._race_drift`), and the scaler forgets, with
    ``half_life`` = ``_SCALER_HALF_LIFE`` examples.

    Parameters
    ----------
    transformer : online affine transformer or None, default=None
        An object with ``start(n_features)``, ``partial_fit_transform(X)``,
        ``transform(X)``, ``affine_map()`` and ``merge(other)``; None means
        ``OnlineStandardScaler()``.
    estimator : aucstream online learner or None, default=None
        The learner fed the transformed rows; None means
        ``OnePassSearch(drift=drift, max_fpr=max_fpr)``.
    drift : "auto", aucstream.drift.DriftDetector or None, default="auto"
        How the default steps meet a stream that changes: passed to the default
        estimator (see :class:`~aucstream.OnePassSearch`), and, unless None, the
        default scaler forgets (``OnlineStandardScaler(half_life=_SCALER_HALF_LIFE)``).
        None: the stationary pipeline exactly. Given steps are used as they are.
    max_fpr : float in (0, 1] or None, default=None
        Passed to the default estimator: the race selects by the partial AUC over
        false positive rates up to ``max_fpr``.

    Attributes
    ----------
    transformer_, estimator_
        The fitted clones.
    coef_, intercept_
        The learner's linear model expressed on the raw features (exact for rows the
        transformer does not clip).
    classes_ : ndarray of shape (2,)
        The labels; ``classes_[1]`` is the positive class.
    n_samples_seen_ : int
        Examples learnt.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream import OPAUC, StreamPipeline
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3)) * [1.0, 300.0, 0.01]  # very different ranges
    >>> y = (X[:, 1] / 300 + X[:, 2] * 100 + rng.normal(size=2000) > 0).astype(int)
    >>> model = StreamPipeline(estimator=OPAUC(eta=2**-6)).fit(X, y)
    >>> bool(model.score(X, y) > 0.85)
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "transformer": [
            HasMethods(["start", "partial_fit_transform", "transform", "affine_map"]),
            None,
        ],
        "estimator": [HasMethods(["partial_fit", "test_then_train", "decision_function"]), None],
        "drift": [StrOptions({"auto"}), None, DriftDetector],
        "max_fpr": [None, Interval(Real, 0, 1, closed="right")],
    }

    def __init__(self, transformer=None, estimator=None, drift="auto", max_fpr=None):
        self.transformer = transformer
        self.estimator = estimator
        self.drift = drift
        self.max_fpr = max_fpr

    @classmethod
    def _unit_test_params(cls) -> dict:
        from .preprocessing import OnlineStandardScaler
        from .univariate import UnivariateOnline

        # without centering, dense and sparse input are scaled alike (the checks compare)
        return {
            "transformer": OnlineStandardScaler(with_mean=False),
            "estimator": UnivariateOnline(eta=2**-4),
        }

    # ------------------------------------------------------------------ state
    def _default_estimator(self):
        """The estimator ``estimator=None`` stands for."""
        from .search import OnePassSearch

        return OnePassSearch(drift=self.drift, max_fpr=self.max_fpr)

    def _steps(self):
        from .preprocessing import OnlineStandardScaler

        transformer = self.transformer
        if transformer is None:
            forgetting = None if self.drift is None else _SCALER_HALF_LIFE
            transformer = OnlineStandardScaler(half_life=forgetting)
        estimator = self._default_estimator() if self.estimator is None else self.estimator
        return clone(transformer), clone(estimator)

    def _state_nbytes(self, n_features: int) -> int:
        estimator = self._default_estimator() if self.estimator is None else self.estimator
        return estimator._state_nbytes(n_features)  # reads the parameters only

    def _init_state(self, n_features: int) -> None:
        self.transformer_, self.estimator_ = self._steps()
        self.transformer_.start(n_features)
        self.estimator_._validate_params()
        self.estimator_._reset(self.classes_, n_features)
        self.estimator_.n_features_in_ = n_features

    def _transaction(self, X=None):
        from .search import OnePassSearch, search_transaction

        search = self.__dict__.get("estimator_")
        if not isinstance(search, OnePassSearch):
            return super()._transaction(X)
        return search_transaction(self, search, X)

    def _begin_pass(self, y_pm: np.ndarray) -> None:
        self.estimator_._begin_pass(y_pm)

    @property  # the steps' answers, not a class constant
    def _tags(self) -> LearnerTags:  # type: ignore[override]
        """Learns through ``_learn`` (not the fast path); its prequential scores come at
        kernel speed when its estimator's do."""
        inner = self.__dict__.get("estimator_", self.estimator)
        if inner is None:  # not fitted: the default estimator it will clone
            inner = self._default_estimator()
        tags = getattr(inner, "_tags", None)  # (an invalid estimator: its check says so)
        prequential = isinstance(tags, LearnerTags) and tags.kernel_prequential
        return LearnerTags(fast_path=False, kernel_prequential=prequential)

    # --------------------------------------------------------------- learning
    def _learn(self, X, y, pre_scores=None, sample_weight=None) -> None:
        Z = self.transformer_.partial_fit_transform(X)
        self.estimator_._learn(Z, y, pre_scores=pre_scores, sample_weight=sample_weight)
        self.n_samples_seen_ += X.shape[0]

    def _learn_prequential(self, X, y, weights) -> np.ndarray:
        Z = self.transformer_.partial_fit_transform(X)
        scores = self.estimator_._learn_prequential(Z, y, weights)
        self.n_samples_seen_ += X.shape[0]
        return scores

    def _merge(self, other: StreamPipeline) -> None:
        self.transformer_.merge(other.transformer_)
        self.estimator_.merge(other.estimator_)

    # ---------------------------------------------------------------- scoring
    def _raw_scores(self, X) -> np.ndarray:
        return self.estimator_.decision_function(self.transformer_.transform(X))

    def _threshold(self) -> float:
        return 0.0  # the learner's scores are already centred on its calibration

    def _has_calibration(self) -> bool:
        estimator = getattr(self, "estimator_", None)
        if estimator is None:  # not fitted: the estimator it will clone
            estimator = self._steps()[1]
        return hasattr(estimator, "predict_proba")

    @available_if(_has_calibration)
    def predict_proba(self, X) -> np.ndarray:
        """The learner's calibrated probabilities of the transformed rows."""
        check_is_fitted(self, "n_samples_seen_")
        check_sparse_structure(X, "X")
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        return self.estimator_.predict_proba(self.transformer_.transform(X))

    def _coef(self) -> np.ndarray:
        """The learner's weights on the raw features: ``w * multiplier``."""
        _, multiplier = self.transformer_.affine_map()
        return self.estimator_._coef() * multiplier

    def _intercept(self) -> float:
        offset, multiplier = self.transformer_.affine_map()
        w = self.estimator_._coef()
        return float(self.estimator_._intercept() - np.dot(w * multiplier, offset))
