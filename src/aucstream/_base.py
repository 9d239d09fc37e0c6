"""The estimator contract shared by every aucstream learner.

Every learner is a scikit-learn classifier whose ``fit`` makes exactly one pass over
the examples in the given order, and whose ``partial_fit`` continues the same stream
chunk by chunk. Validation, label encoding and the streaming loop live here, once;
a learner only allocates its state (``_init_state``) and runs its compiled kernel
over one validated chunk (``_update``).

Chunks reach the kernels in one layout (:class:`aucstream._chunks.Chunk`: dense rows
read in place, or CSR with int64 indices), one kernel serving both: dense and sparse
input give the same model.

The machinery behind these methods — validation, the learning step and its
transaction, the state declarations, the fast path of small calls and merging — is the
learning runtime, :mod:`aucstream._runtime`, whose four mixins this class combines.
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar, cast

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _calibration
from ._chunks import Chunk, check_sparse_structure, dict_row, dict_row_arrays, plain_rows
from ._fastpath import FAST
from ._runtime import (
    ClassWeightTotals,
    LearnerTags,
    LearningStep,
    Merging,
    SmallCalls,
    StateDeclarations,
    make_rng,
)
from ._typing import Label, Row
from .metrics import roc_auc

__all__ = ["BaseStreamingAUC", "ClassWeightTotals", "make_rng"]

#: An optional array argument.
_Maybe = ArrayLike | None

_OWN_PARTIAL_FIT: dict[type, bool] = {}
_BY_ID = FAST._data  # (read inline by learn_one)


def _own_partial_fit(cls: type) -> bool:
    """Whether ``cls`` overrides ``partial_fit`` (``learn_one`` then goes through it)."""
    found = _OWN_PARTIAL_FIT.get(cls)
    if found is None:
        base = BaseStreamingAUC.__dict__["partial_fit"].fn
        found = _OWN_PARTIAL_FIT[cls] = getattr(cls, "partial_fit", None) is not base
    return found


def _is_online(estimator) -> bool:
    """Batch learners have no ``partial_fit`` (``hasattr`` is False)."""
    return not estimator.is_batch


class BaseStreamingAUC(
    SmallCalls, StateDeclarations, LearningStep, Merging, ClassifierMixin, BaseEstimator
):
    """Base class of the online AUC learners (one pass, chunked, compiled kernels).

    Subclasses implement ``_init_state(n_features)``, ``_update(chunk)`` and
    ``_coef()``; they declare their hyperparameters in ``__init__`` (including
    ``shuffle`` and ``random_state``) and their tuning grid in ``param_grid``.

    Conventions
    -----------
    - ``classes_`` holds the two label values in sorted order; ``classes_[1]`` is the
      positive class.
    - ``score(X, y)`` returns the ROC AUC (not the accuracy, as in plain scikit-learn
      classifiers): AUC is what these learners maximize, and it does not depend on a
      threshold.
    - ``predict`` thresholds ``decision_function`` at 0, as scikit-learn's linear
      classifiers do. AUC learners fix the ranking, not the threshold, so accuracy
      from ``predict`` can be poor even when the AUC is high.
    """

    #: Hyperparameter grid from the papers, used by model selection.
    param_grid: ClassVar[dict[str, list]] = {}
    #: Accepted values of every constructor parameter (scikit-learn's vocabulary, see
    #: :mod:`aucstream._params`); checked before any state is touched.
    _parameter_constraints: ClassVar[dict[str, list]] = {}
    #: Batch learners may use all their data at once (the harness caps their size).
    is_batch: ClassVar[bool] = False
    #: Name of the parameter through which a learner that plans its pass from the
    #: stream length (FSAUC's stages) is told that length before ``partial_fit``;
    #: ``fit`` tells it through ``_begin_pass``. None: the learner needs no length.
    stream_length_param: ClassVar[str | None] = None

    #: What the learner tells the runtime (:class:`aucstream._runtime.LearnerTags`):
    #: a learner declares its own, or makes it a property when its answers depend on
    #: its parameters.
    _tags: ClassVar[LearnerTags] = LearnerTags()

    # ------------------------------------------------------------------ hooks
    #: The class scores rows as ``X @ _coef() + _intercept()`` through the base
    #: class's methods (set per class): the one-example scoring path
    #: (:meth:`_score_one`) applies.
    _scores_by_coef: ClassVar[bool] = True

    #: The methods that only online learners have (``available_if(_is_online)``).
    _ONLINE_METHODS: ClassVar[tuple[str, ...]] = ("partial_fit", "test_then_train", "learn_one")

    def __init_subclass__(cls, **kwargs):
        """An online class gets the online methods it inherits as plain functions.

        ``available_if`` checks ``is_batch`` (a class constant) at every attribute
        access, a visible part of a one-row ``learn_one`` (``benchmarks/bench_base.py``,
        reported in docs/benchmarks.md); a batch class keeps the descriptors, so it has
        no such attribute. Likewise ``predict_proba`` and ``predict_proba_one`` (the
        check of ``available_if(_has_calibration)`` cost as much as the rest of a
        ``predict_proba_one`` of a dict row) are plain functions in a class that
        always has them (batch, or tags that are a class constant with a prequential
        kernel).
        """
        super().__init_subclass__(**kwargs)
        base = BaseStreamingAUC.__dict__

        def the_base_ones(name: str) -> bool:  # (or the plain function of its descriptor)
            found = next(c.__dict__[name] for c in cls.__mro__ if name in c.__dict__)
            return found is base[name] or found is getattr(base[name], "fn", None)

        cls._scores_by_coef = all(
            map(the_base_ones, ("_raw_scores", "decision_function", "predict", "predict_proba"))
        )
        # the probabilities: plain functions too when the class always has them (its
        # tags a class constant); else (tags of a property) the descriptors
        tags = inspect.getattr_static(cls, "_tags", None)
        always = cls.is_batch is True or (
            isinstance(tags, LearnerTags) and tags.kernel_prequential is True
        )
        for name in ("predict_proba", "predict_proba_one"):
            descriptor = base[name]
            if the_base_ones(name):
                setattr(cls, name, descriptor.fn if always else descriptor)
        if cls.is_batch:
            return
        for name in BaseStreamingAUC._ONLINE_METHODS:
            descriptor = BaseStreamingAUC.__dict__[name]
            inherited = next(c.__dict__[name] for c in cls.__mro__ if name in c.__dict__)
            if inherited is descriptor:
                setattr(cls, name, descriptor.fn)

    def _init_state(self, n_features: int) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _update(self, chunk: Chunk) -> bool | None:
        """Learn ``chunk``: the learner's compiled step, ``_bind_update(chunk)`` run on
        the learner (so that the one-row fast path and every other call run the same
        code). A learner that binds no update overrides this; its ``_update`` may return
        True when its kernel checked that every value it wrote to the arrays it declares
        ``checked`` is finite (``StateSpec.checked``)."""
        step = self._bind_update(chunk)
        if step is None:  # pragma: no cover - a learner that defines neither
            raise NotImplementedError(f"{type(self).__name__} defines no _bind_update")
        step(self)
        return None

    def _coef(self) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _intercept(self) -> float:
        return 0.0

    # ------------------------------------------------------------- public API
    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> BaseStreamingAUC:
        """Learn from one pass over ``(X, y)`` in the given order.

        What was learnt before is discarded (``partial_fit`` continues a stream).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training examples, dense or CSR (any scipy sparse format is converted).
        y : array-like of shape (n_samples,)
            Their labels: exactly two distinct values, the larger being the positive
            class (``classes_[1]``).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights of the examples, for learners whose update allows
            them (see the learner's notes); others refuse them with an error.

        Returns
        -------
        self
            The fitted estimator.
        """
        with self._transaction():
            self._validate_params()
            rows_in, labels, _ = self._validate_input(X, y, reset=True)
            weights = self._validate_weights(sample_weight, rows_in)
            classes = self._check_two_classes(np.unique(labels), "y")
            n = rows_in.shape[0]
            self._reset(classes, rows_in.shape[1])
            self._begin_pass(np.where(labels == classes[1], 1.0, -1.0))
            order = None
            if getattr(self, "shuffle", False):
                order = self._rng.permutation(n)
            step = self._tags.fit_chunk_size if not self.is_batch else max(n, 1)
            for start in range(0, n, step):
                rows = slice(start, start + step) if order is None else order[start : start + step]
                self._learn(
                    rows_in[rows],
                    labels[rows],
                    sample_weight=None if weights is None else weights[rows],
                )
        return self

    @available_if(_is_online)
    def partial_fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        classes: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
    ) -> BaseStreamingAUC:
        """Continue the stream with one chunk of examples.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The chunk; it must not be empty.
        y : array-like of shape (n_samples,)
            Labels of the chunk, all in ``classes``.
        classes : array-like of shape (2,), optional
            Both label values. Required on the first call unless that chunk already
            holds both classes; checked against ``classes_`` afterwards.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights of the chunk's examples (as in :meth:`fit`).

        Returns
        -------
        self
            The updated estimator.
        """
        self._stream(X, y, classes, sample_weight, prequential=False)
        return self

    @available_if(_is_online)
    def test_then_train(
        self, X: ArrayLike, y: ArrayLike, classes: _Maybe = None, sample_weight: _Maybe = None
    ) -> np.ndarray:
        """Score each example with the model as it was just before learning it, then learn.

        The prequential (test-then-train) scores of the stream: row ``i`` is scored by
        the model that has learnt every earlier example and not row ``i`` itself, so
        the scores are honest out-of-sample predictions and their AUC estimates the
        model's AUC on the stream without a held-out set. The model afterwards is the
        one ``partial_fit(X, y, classes)`` gives, and the scores do not depend on how
        the stream is split into calls.

        Parameters
        ----------
        X, y, classes, sample_weight
            As in :meth:`partial_fit`.

        Returns
        -------
        ndarray of shape (n_samples,)
            The decision values of the rows before each was learnt.

        Examples
        --------
        >>> import numpy as np
        >>> from aucstream import SOLAM
        >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.5]]); y = [1, 0, 1]
        >>> float(SOLAM().test_then_train(X, y)[0])  # nothing learnt before the first row
        0.0
        """
        return cast(np.ndarray, self._stream(X, y, classes, sample_weight, prequential=True))

    # ------------------------------------------------------- one example at a time
    @available_if(_is_online)
    def learn_one(self, x: Row, y: Label, classes: ArrayLike | None = None) -> BaseStreamingAUC:
        """Learn from one example: ``partial_fit`` on a single row.

        Parameters
        ----------
        x : array-like of shape (n_features,) or dict
            The example; a dict maps feature indices (0-based ints) to values, and
            missing indices are 0. A dict needs the width known: learn a first
            example as an array, or from ``partial_fit``.
        y : label
            Its label.
        classes : array-like of shape (2,), optional
            Both labels, on the first call (as in :meth:`partial_fit`).

        Returns
        -------
        self
        """
        own = _OWN_PARTIAL_FIT.get(type(self))  # (_own_partial_fit, inline when known)
        if classes is None and not (_own_partial_fit(type(self)) if own is None else own):
            # the per-example entry (aucstream._runtime._entry.OneStep), else the
            # one-row fast path, which makes it (FAST.get inline: on every call)
            entry = _BY_ID.get(id(self))
            if entry is not None and entry[0]() is self:
                cache: Any = entry[1]
                step = cache.sparse_step if type(x) is dict else cache.dense_step
                if step is not None and step.learn(self, x, y):
                    return self
            if self._learn_one_fast(x, y):
                return self
        if np.ndim(y) != 0:
            raise ValueError(f"y must be one label (learn_one learns one example), got {y!r}")
        if _own_partial_fit(type(self)):
            # a learner that checks more in its own partial_fit: through it
            return self.partial_fit(self._one_row(x), [y], classes=classes)
        if isinstance(x, dict):
            self._check_partial_fit()
            width = self._known_width()
            idx, vals = dict_row_arrays(x, width)
            rows = (np.array([0, idx.size], dtype=np.int64), idx, vals)
            quick = self._quick_chunk(rows, [y], classes, None)
            if quick is not None:
                self._quick_learn(quick, None, prequential=False)
                return self
            X = dict_row(x, width)  # not plainly valid: validated in full
        else:
            X = self._one_row(x)
        self._stream(X, [y], classes, None, prequential=False)
        return self

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """Scores: larger means more likely ``classes_[1]``; positive means predicted so.

        The model's score ``w^T x (+ b)`` shifted by the calibrated threshold (the
        score whose probability is 1/2, see :meth:`predict_proba`), so that
        ``decision_function(X) > 0`` is exactly ``predict(X) == classes_[1]``. A shift
        changes no ranking: AUC learners learn only ``w``, and the AUC of these scores
        is that of ``w^T x``. Before the calibration has seen both classes the shift
        is 0.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Examples to score.

        Returns
        -------
        ndarray of shape (n_samples,)
            The scores.
        """
        return self.score_samples(X) - self._threshold()

    def score_samples(self, X: ArrayLike) -> np.ndarray:
        """The model's own scores ``w^T x + b``, before the calibrated shift.

        What :meth:`predict_proba` calibrates and :meth:`decision_function` shifts:
        ``decision_function(X) == score_samples(X) - offset_``, as in scikit-learn's
        outlier detectors. A learner that holds others (a pipeline, a search) uses it
        to score through them.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Examples to score.

        Returns
        -------
        ndarray of shape (n_samples,)
            The scores.

        Raises
        ------
        FloatingPointError
            A score overflowed (the features are too large for the weights).

        Examples
        --------
        >>> import numpy as np
        >>> from aucstream import SOLAM
        >>> X = np.random.default_rng(0).normal(size=(500, 3)); y = X[:, 0] > 0
        >>> model = SOLAM().fit(X, y)
        >>> bool(np.all(model.score_samples(X) - model.offset_ == model.decision_function(X)))
        True
        """
        check_is_fitted(self, "n_samples_seen_")
        rows = None
        if type(X) is not np.ndarray or X.flags.c_contiguous:  # (an F-ordered product rounds
            rows = plain_rows(self, X)  # otherwise: validate_data keeps the order)
        if rows is None:
            check_sparse_structure(X, "X")
            rows = validate_data(
                self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False
            )
        scores = self._raw_scores(rows)
        if not np.isfinite(scores).all():
            bad = np.flatnonzero(~np.isfinite(scores))
            raise FloatingPointError(
                f"the scores of {bad.size} rows overflowed (first: row {bad[0]}); their "
                "feature values are too large for the weights: scale the features"
            )
        return scores

    def _raw_scores(self, X) -> np.ndarray:
        """The model's own scores ``w^T x + b`` of validated rows (what kernels compute)."""
        return np.asarray(X @ self._coef() + self._intercept(), dtype=np.float64).ravel()

    def _threshold(self) -> float:
        if not self._has_calibration():
            return 0.0
        return _calibration.threshold(self.calibration_)

    def _has_calibration(self) -> bool:
        return self.is_batch or self._tags.kernel_prequential

    @available_if(_has_calibration)
    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        r"""Probabilities of the two classes, from a calibration learnt in the same pass.

        Online learners fit :math:`P(y = +1 \mid s) = \sigma(a z + b)` (online Platt
        scaling on standardized scores) to their prequential scores — the score of each
        example before it was learnt — so the map is fitted out of sample, example by
        example, in the one pass (:mod:`aucstream._calibration`). Batch learners fit
        it on their training scores. The map is increasing: the probabilities rank
        the examples exactly as :meth:`decision_function` does. Until both classes
        have been seen, every row gets the Laplace-smoothed class frequency seen so
        far, :math:`(n_+ + 1) / (n + 2)`. Probabilities are never 0 or 1: the log-odds
        are capped so that each lies in :math:`[\epsilon, 1 - \epsilon]`,
        :math:`\epsilon = 10^{-15}` (``aucstream._calibration.EPS``), and the
        log-loss stays finite.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Examples whose class probabilities are wanted.

        Returns
        -------
        ndarray of shape (n_samples, 2)
            ``P(classes_[0])`` and ``P(classes_[1])`` per row.
        """
        scores = self.score_samples(X)  # checks first that the learner is fitted
        p = _calibration.probability(self.calibration_, scores)
        return np.column_stack([1.0 - p, p])

    #: The class probabilities of one example (written beside the scoring of dict
    #: rows whose first case it makes inline: :mod:`aucstream._runtime._small_calls`).
    predict_proba_one = available_if(_has_calibration)(SmallCalls.predict_proba_one)

    def predict(self, X: ArrayLike, threshold: float | str | None = None) -> np.ndarray:
        """Labels: ``classes_[1]`` where the calibrated probability exceeds 1/2, or
        where the score exceeds the threshold of an operating point.

        By default that is where :meth:`decision_function` is positive (the score
        itself, thresholded at 0, before a calibration is ready). On rare positives
        the probability 1/2 may flag nothing: ``threshold`` then chooses the operating
        point from the last prequential scores of the same pass
        (:mod:`aucstream._calibration`).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Examples to label (as many features as the examples the learner has
            learnt).
        threshold : float or str, optional
            None: the calibrated probability 1/2. ``"fpr:R"``: a target false-positive
            rate R in (0, 1), the rows scored above the exact ``(1 - R)``-quantile of
            the recent negatives' prequential scores. ``"alert_rate:R"``: an alert
            budget, the rows scored above the ``(1 - R)``-quantile of the recent
            prequential scores of all examples (about a fraction R of new rows is
            flagged). A float: rows whose :meth:`decision_function` exceeds it.

        Returns
        -------
        ndarray of shape (n_samples,)
            The predicted labels, values of ``classes_``.

        Raises
        ------
        ValueError
            A malformed ``threshold``, a rate outside (0, 1), or no prequential scores.

        Examples
        --------
        >>> import numpy as np
        >>> from aucstream import SOLAM
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(20000, 3)); y = X[:, 0] + rng.normal(size=20000) > 3.5
        >>> model = SOLAM().fit(X, y)
        >>> int(model.predict(X).sum())  # rare positives: nothing above probability 1/2
        0
        >>> bool(0.003 < model.predict(X, threshold="alert_rate:0.005").mean() < 0.01)
        True
        """
        if threshold is None:
            positive = self.decision_function(X) > 0  # checks that the learner is fitted
        else:
            kind, value = _calibration.parse_operating_point(threshold)
            if kind == "score":
                positive = self.decision_function(X) > value
            else:
                positive = self.score_samples(X) > self.operating_cut(cast(str, threshold))
        return self.classes_[positive.astype(np.intp)]

    def operating_cut(self, threshold: str) -> float:
        """The score above which :meth:`predict` flags a row at an operating point.

        Parameters
        ----------
        threshold : str
            ``"fpr:R"`` or ``"alert_rate:R"``, R in (0, 1), as in :meth:`predict`.

        Returns
        -------
        float
            The cut on the scale of :meth:`score_samples`, from the recent prequential
            scores (else from the wrapped ``estimator_``'s). A ``ValueError`` for a
            malformed ``threshold`` or a learner that records no prequential scores.

        Examples
        --------
        >>> import numpy as np
        >>> from aucstream import SOLAM
        >>> X = np.random.default_rng(0).normal(size=(5000, 3)); y = X[:, 0] > 2
        >>> model = SOLAM().fit(X, y); cut = model.operating_cut("alert_rate:0.01")
        >>> bool(np.array_equal(model.score_samples(X) > cut,
        ...                     model.predict(X, threshold="alert_rate:0.01") == 1))
        True
        """
        kind, rate = _calibration.parse_operating_point(threshold)
        if kind == "score":
            raise ValueError(f"threshold {threshold!r}: give 'fpr:R' or 'alert_rate:R'")
        check_is_fitted(self, "n_samples_seen_")
        return self._operating_cut(threshold, kind, rate)

    def _operating_cut(self, threshold: str, kind: str, rate: float) -> float:
        """:meth:`operating_cut` of a checked threshold, from the prequential windows."""
        window = getattr(self, "score_window_", None)
        inner: Any = getattr(self, "estimator_", None)
        if (window is None or not window[:, 0].any()) and hasattr(inner, "operating_cut"):
            return inner.operating_cut(threshold) - inner._threshold()
        if window is None or (not window[:, 0].any() and self.n_samples_seen_ > 0):
            raise ValueError(
                f"{type(self).__name__} records no prequential scores, from which an "
                f"operating point ({kind}={rate}) is chosen: give a float threshold, or "
                "use an online learner (or a pipeline around one)"
            )
        return _calibration.operating_threshold(window, kind, rate)

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """ROC AUC of the scores on ``(X, y)`` (not accuracy).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Examples.
        y : array-like of shape (n_samples,)
            True labels, with both classes present.
        sample_weight : None
            Not supported; present for scikit-learn compatibility.

        Returns
        -------
        float
            The exact AUC (ties count one half).
        """
        if sample_weight is not None:
            raise ValueError("score does not support sample_weight")
        y = np.asarray(y).ravel()
        return roc_auc(y == self.classes_[1], self.decision_function(X))

    @property
    def coef_(self) -> np.ndarray:
        """Weights of the linear scoring function, shape (1, n_features)."""
        check_is_fitted(self, "n_samples_seen_")
        return self._coef().reshape(1, -1)

    @property
    def intercept_(self) -> np.ndarray:
        """Intercept of :meth:`decision_function`, shape (1,): the model's own (0 for the
        pairwise learners: AUC ignores shifts) minus the calibrated threshold."""
        check_is_fitted(self, "n_samples_seen_")
        return np.array([self._intercept() - self._threshold()])

    @property
    def offset_(self) -> float:
        """The calibrated threshold: the score whose probability is 1/2, 0.0 before
        the calibration has seen both classes (``decision_function`` is
        ``score_samples`` minus it)."""
        check_is_fitted(self, "n_samples_seen_")
        return self._threshold()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True
        return tags
