"""Transformers in front of streaming learners.

:class:`StreamPipeline` puts an online transformer (the online scaler) in front of a
learner, both learning in the same pass: one learner of the stream, with every
guarantee of the others (chunk invariance, transactions, merging, saving).

:class:`ChunkedPipeline` is how a learner meets data that are only ever materialized
chunk by chunk: random Fourier features of G16 §7.2 (``d + 50,000`` dense columns,
see :mod:`aucstream.random_features`) or a fitted dimension reduction
(:mod:`aucstream.reduction`). Memory is that of one transformed chunk.

One example at a time
---------------------
A stream learnt one example at a time pays each layer's per-call work once per
example, and the default estimator, :class:`~aucstream.OnePassSearch`, runs a dozen
candidates: a call per candidate per example. So ``StreamPipeline.learn_one`` of a
fitted pipeline transforms the example at once (the transformer's
``partial_fit_transform_one``: its statistics are those of the examples before it,
as in a chunk) and *holds* the transformed row, with its label, in the state
(``queue_*``, at most ``_QUEUE_ROWS`` rows); the estimator learns the held rows as one
chunk through its ``partial_fit`` when the queue is full, and before anything reads
or continues it: reading ``estimator_`` (every score, ``coef_``, ``merge``, each
other learning call) and pickling or copying the pipeline make it catch up first.
The estimator learns each example once, in the stream's order, from the same
transformed values; its model does not depend on how the stream is cut into calls
(each aucstream learner's guarantee), so the pipeline's model is the one of
``partial_fit`` on the same examples, bit for bit (``tests/test_pipeline_one.py``).
Dense rows and dict rows are held apart (a change of layout catches up first): the
estimator sees each row in the layout it was given. A model file keeps the held rows
as they are, and a model resumed from it goes on exactly.

What changes: an example that makes the estimator refuse its chunk (every
candidate of a search diverging) is reported by the call that catches up, not by
the ``learn_one`` of that example, and the rows stay held (the estimator's
``partial_fit`` changes nothing when it refuses). A call that takes the usual path
(an example the fast checks do not take, a chunk, a read) catches up first, so a
refused one may have had the estimator learn the held examples: the same model.
One-row ``partial_fit`` calls are held as ``learn_one``'s examples are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, NamedTuple, cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _race_drift, _state
from ._base import BaseStreamingAUC
from ._chunks import (
    CSR_TYPES,
    _values_ok,
    check_sparse_structure,
    csr_row_dict,
    dict_row_values,
    pack_dict_row,
)
from ._config import fast_path_on
from ._fastpath import LABEL_KINDS, validate_params_once
from ._params import Interval, Real, StrOptions
from ._pipeline_queue import dict_hold
from ._runtime import (
    HoldsLearners,
    LearnerTags,
    StateSpec,
    journalled_transaction,
    journals_calls,
)
from ._typing import Label, Matrix, MatrixLike, Row
from .drift import DriftDetector
from .metrics import roc_auc

__all__ = ["ChunkedPipeline", "StreamPipeline"]


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

    def __init__(self, transformer: BaseEstimator, estimator: BaseEstimator, chunk_size: int = 256):
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

    def fit(self, X: MatrixLike, y: ArrayLike) -> ChunkedPipeline:
        """Fit the transformer, then one pass of the learner over the chunks."""
        y = np.asarray(y)
        self._start(X, y, None)
        return self._feed(X, y)

    def partial_fit(
        self, X: MatrixLike, y: ArrayLike, classes: ArrayLike | None = None
    ) -> ChunkedPipeline:
        """Continue the stream; the first call also fits the transformer on ``X``."""
        y = np.asarray(y)
        if not hasattr(self, "estimator_"):
            self._start(X, y, classes)
        return self._feed(X, y)

    def decision_function(self, X: Matrix) -> np.ndarray:
        """Scores of the rows of ``X``, computed chunk by chunk."""
        check_is_fitted(self, "estimator_")
        parts = [
            self.estimator_.decision_function(
                self.transformer_.transform(X[lo : lo + int(self.chunk_size)])
            )
            for lo in self._chunks(X.shape[0])
        ]
        return np.concatenate(parts) if parts else np.zeros(0)

    def predict(self, X: MatrixLike) -> np.ndarray:
        """Labels from thresholding the scores at 0."""
        return self.classes_[(self.decision_function(X) > 0).astype(np.intp)]

    def score(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """ROC AUC of the scores (not accuracy)."""
        if sample_weight is not None:
            raise ValueError("score does not support sample_weight")
        y = np.asarray(y).ravel()
        return roc_auc(y == self.classes_[-1], self.decision_function(X))


def _state_nbytes(pipeline: StreamPipeline, n_features: int) -> int:
    """The held examples' arrays and the estimator's state (``StateSpec.nbytes``)."""
    estimator = pipeline.estimator
    if estimator is None:
        estimator = pipeline._default_estimator()
    queue = 16 * pipeline._queue_values(n_features) + 9 * pipeline._QUEUE_ROWS
    return queue + estimator.state_nbytes(n_features)  # reads the parameters only


class StreamPipeline(HoldsLearners, BaseStreamingAUC):
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
    it drops (:mod:`aucstream._race_drift`). The default scaler does not forget: on a
    stream with a column that grows with time (a timestamp), a forgetting scaler
    standardizes that column by its recent spread, and the rows to score, later
    still, then lie far outside what the learner saw (the fraud-like stream of
    ``benchmarks/bench_onepass.py``, measured in ``docs/results/drift.md``), while on
    the drift benchmark's streams the learners' own forgetting does the work.

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
        estimator (see :class:`~aucstream.OnePassSearch`); the default scaler is
        ``OnlineStandardScaler()`` either way. None: the stationary pipeline exactly.
        Given steps are used as they are.
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

    _fit_tells: ClassVar[str | None] = "estimator_"  # fit's labels: FSAUC's schedule...
    _parameter_constraints: ClassVar[dict] = {
        "transformer": [
            HasMethods(["start", "partial_fit_transform", "transform", "affine_map"]),
            None,
        ],
        "estimator": [HasMethods(["partial_fit", "test_then_train", "decision_function"]), None],
        "drift": [StrOptions({"auto"}), None, DriftDetector],
        "max_fpr": [None, Interval(Real, 0, 1, closed="right")],
    }

    def __init__(
        self,
        transformer: BaseEstimator | None = None,
        estimator: BaseStreamingAUC | None = None,
        drift: str | DriftDetector | None = "auto",
        max_fpr: float | None = None,
    ):
        self.transformer = transformer
        self.estimator = estimator
        self.drift = drift
        self.max_fpr = max_fpr

    #: The arrays of the held examples (:meth:`learn_one`).
    _HELD: ClassVar[tuple[str, ...]] = (
        "queue_",
        "queue_indptr_",
        "queue_indices_",
        "queue_data_",
        "queue_labels_",
    )
    #: Members that model files written before them lack (loaded empty).
    _state_added_later: ClassVar[tuple[str, ...]] = _HELD
    #: The held examples' arrays may be of another length in a model file (one written
    #: when ``_QUEUE_ROWS`` was 128): :meth:`_check_state` checks them together.
    _growable_state: ClassVar[tuple[str, ...]] = _HELD[1:]
    #: Examples :meth:`learn_one` holds before the estimator learns them as one chunk:
    #: a catch-up's fixed cost (the search's transaction, its candidates' calls) is
    #: paid once per this many examples (``benchmarks/bench_base.py``, issue 29).
    _QUEUE_ROWS: ClassVar[int] = 1024
    #: Most stored values the held examples may take (a dense row takes n_features).
    _QUEUE_VALUES: ClassVar[int] = 1 << 15
    _state_spec = StateSpec(nbytes=_state_nbytes)

    @property
    def estimator_(self) -> BaseStreamingAUC:
        """The fitted estimator, up to date: reading it first makes it learn the
        examples :meth:`learn_one` holds (module docstring, "One example at a time")."""
        try:
            estimator = self.__dict__["estimator_"]
        except KeyError:
            raise AttributeError(
                f"'{type(self).__name__}' object has no attribute 'estimator_'"
            ) from None
        self._catch_up()
        return estimator

    @estimator_.setter
    def estimator_(self, value) -> None:
        self.__dict__["estimator_"] = value

    def __getstate__(self) -> dict:
        """The state with the held examples learnt (so that a pickle, a copy, and the
        state compared bit for bit do not depend on how the stream was cut)."""
        self._catch_up()
        return super().__getstate__()

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
        if transformer is None:  # (no forgetting: the class docstring says why)
            transformer = OnlineStandardScaler()
        estimator = self._default_estimator() if self.estimator is None else self.estimator
        return clone(transformer), clone(estimator)

    def _queue_values(self, n_features: int) -> int:
        return min(self._QUEUE_ROWS * n_features, self._QUEUE_VALUES)

    def _init_state(self, n_features: int) -> None:
        transformer, estimator = self._steps()
        transformer.start(n_features)
        self.transformer_ = transformer
        self.estimator_ = estimator.start(n_features, self.classes_)
        values, rows = self._queue_values(n_features), self._QUEUE_ROWS
        # the examples learn_one holds: [how many, layout (0 none, 1 dense, 2 sparse)],
        # their rows as CSR (dense rows: n_features values each) and their labels
        self.queue_ = np.zeros(2, dtype=np.int64)
        self.queue_indptr_ = np.zeros(rows + 1, dtype=np.int64)
        self.queue_indices_ = np.zeros(values, dtype=np.int64)
        self.queue_data_ = np.zeros(values)
        self.queue_labels_ = np.zeros(rows, dtype=np.int8)

    # ------------------------------------------------------- one example at a time
    def learn_one(self, x: Row, y: Label, classes: ArrayLike | None = None) -> StreamPipeline:
        """Learn from one example (module docstring, "One example at a time").

        Parameters
        ----------
        x : array-like of shape (n_features,) or dict
            The example (a dict maps feature indices to values, as for every learner).
        y : label
            Its label.
        classes : array-like of shape (2,), optional
            Both labels, on the first call.

        Returns
        -------
        self

        Examples
        --------
        >>> import numpy as np
        >>> from aucstream import OPAUC, StreamPipeline
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(300, 3)) * [1.0, 300.0, 0.01]
        >>> y = (X[:, 1] / 300 + rng.normal(size=300) > 0).astype(int)
        >>> model = StreamPipeline(estimator=OPAUC(eta=2**-6))
        >>> model = model.partial_fit(X[:10], y[:10], classes=[0, 1])
        >>> for xi, yi in zip(X[10:], y[10:]):
        ...     model = model.learn_one(xi, yi)
        >>> model.n_samples_seen_
        300
        """
        if classes is None and self._hold_one(x, y):
            return self
        self._catch_up()
        return BaseStreamingAUC.learn_one(self, x, y, classes)

    def partial_fit(
        self,
        X: MatrixLike,
        y: np.ndarray | Sequence[Any],
        classes: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
    ) -> StreamPipeline:
        """Continue the stream with one chunk of examples (see
        :meth:`BaseStreamingAUC.partial_fit`); a call of one row (a 2-D array, or a
        CSR matrix in canonical form) is held as :meth:`learn_one` holds its example.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The chunk; it must not be empty.
        y : array-like of shape (n_samples,)
            Labels of the chunk.
        classes : array-like of shape (2,), optional
            Both label values (required on the first call unless it holds both).
        sample_weight : array-like of shape (n_samples,), optional
            Weights of the chunk's examples, when the estimator takes them and the
            transformer is the online standard scaler (the default): the estimator
            learns each example with its weight; the scaler learns every example of
            non-zero weight as one and transforms every example (one of weight 0 is
            transformed and scored, not learnt).

        Returns
        -------
        self
        """
        if (
            classes is None
            and sample_weight is None
            and type(y) in (list, tuple, np.ndarray)
            and len(y) == 1
            and self._hold_row(X, y[0])
        ):
            return self
        return cast(
            StreamPipeline, BaseStreamingAUC.partial_fit(self, X, y, classes, sample_weight)
        )

    def _hold_row(self, X, y) -> bool:
        """:meth:`_hold_one` of the row of a one-row chunk."""
        if type(X) is np.ndarray:
            return X.ndim == 2 and X.shape[0] == 1 and self._hold_one(X[0], y)
        if type(X) in CSR_TYPES and X.shape[0] == 1:
            if "queue_" not in self.__dict__ or X.shape[1] != self.n_features_in_:
                return False
            row = csr_row_dict(X, 0)
            return row is not None and self._hold_one(row, y)
        return False

    def _centers(self) -> bool:
        return bool(getattr(self.__dict__.get("transformer_"), "with_mean_", False))

    def _one_row(self, x):
        """A dict row as a dense row when the scaler centers (it started on dense
        chunks): its missing features are zeros to center, as in a dense row."""
        row = super()._one_row(x)
        return row.toarray() if sp.issparse(row) and self._centers() else row

    def _dense_row(self, x: dict) -> np.ndarray | None:
        """The dense row of a dict row (its missing features zeros), or None when its
        keys are not integer indices of the features (the usual path says why)."""
        parsed = dict_row_values(x)
        if parsed is None:
            return None
        idx, values = parsed
        width = self.n_features_in_
        # (the range test of dict_row_arrays, without its sort and error message: that
        # function on this path made a row about half again as slow)
        if idx.shape[0] and (idx.min() < 0 or idx.max() >= width):
            return None
        row = np.zeros(width)
        row[idx] = values
        return row

    def _hold_one(self, x, y) -> bool:
        """Transform ``x`` and hold it for the estimator (learnt by :meth:`_catch_up`):
        True, or False with the model unchanged when the call must take the usual
        path (a first call, input the fast checks do not take, a step without the
        one-example method, a queue that can not take the row)."""
        state = self.__dict__
        queue = state.get("queue_")
        if queue is None or "feature_names_in_" in state or not fast_path_on():
            return False
        if type(x) is dict:  # in one compiled call when it can (aucstream._pipeline_queue)
            hold = dict_hold(self)
            if hold is not None and hold.hold(self, x, y):
                return True
        dense = type(x) is np.ndarray
        if not (dense or type(x) is dict) or np.ndim(y) != 0:
            return False
        classes = self.classes_
        label = np.asarray(y)
        if label.dtype.kind not in LABEL_KINDS.get(classes.dtype.kind, ""):
            return False
        positive = bool(label == classes[1])
        if not positive and not bool(label == classes[0]):
            return False
        if not dense:
            if not self._centers():
                return self._hold_sparse(x, positive)
            x = self._dense_row(x)  # held as the dense row it stands for (:meth:`_one_row`)
            if x is None:
                return False
        transform_one = getattr(state["transformer_"], "partial_fit_transform_one", None)
        width = self.n_features_in_
        # values the pipeline's own validation takes as they are (else it converts or
        # refuses them, and says why)
        if transform_one is None or x.ndim != 1 or x.dtype != np.float64 or x.shape[0] != width:
            return False
        if not _values_ok(np.ascontiguousarray(x)):
            return False
        at = self._queue_room(width, 1)
        if at < 0:
            return False
        validate_params_once(self)
        z = transform_one(x)  # the model is unchanged if it refuses x
        end = at + width
        self.queue_indices_[at:end] = np.arange(width)
        self.queue_data_[at:end] = z
        self._held(end, positive, 1)
        return True

    def _hold_sparse(self, x: dict, positive: bool) -> bool:
        """:meth:`_hold_one` of a dict row when the scaler does not center: its keys
        and values packed straight into the queue (:func:`aucstream._chunks.pack_dict_row`)
        and scaled there (``partial_fit_transform_sparse_one``), the free slots put back
        to zeros (what the queue holds beyond its rows) when either refuses the row."""
        transform = getattr(self.transformer_, "partial_fit_transform_sparse_one", None)
        if transform is None:
            return False
        k = len(x)
        at = self._queue_room(k, 2)
        if at < 0:
            return False
        validate_params_once(self)
        end = at + k
        indices, data = self.queue_indices_[at:end], self.queue_data_[at:end]
        if not (pack_dict_row(x, indices, data) and transform(indices, data)):
            indices[:] = 0
            data[:] = 0.0
            return False
        self._held(end, positive, 2)
        return True

    def _queue_room(self, size: int, layout: int) -> int:
        """Where a row of ``size`` values in ``layout`` (1 dense, 2 sparse) goes in the
        queue, the held rows learnt first when it can not join them; -1 when the queue
        can never take it or can not be written (the usual path names it)."""
        if size > self.queue_data_.shape[0] or not self._queue_writeable():
            return -1
        queue, indptr = self.queue_, self.queue_indptr_
        rows = int(queue[0])
        if rows and (
            rows == self.queue_labels_.shape[0]
            or queue[1] != layout
            or indptr[rows] + size > self.queue_data_.shape[0]
        ):
            self._catch_up()  # (its own transaction: a refused catch-up changes nothing)
            return 0
        return int(indptr[rows])

    def _held(self, end: int, positive: bool, layout: int) -> None:
        """Count in the row just written into the queue up to ``end``."""
        queue = self.queue_
        rows = int(queue[0])
        self.queue_indptr_[rows + 1] = end
        self.queue_labels_[rows] = positive
        queue[0], queue[1] = rows + 1, layout
        self.n_samples_seen_ += 1

    def _queue_writeable(self) -> bool:
        """Whether the held examples' arrays can be written (a user may have made them
        read-only: learning must then refuse the state, not half-write it)."""
        held = self.__dict__  # (spelt out, not all(...): on the per-example path)
        return bool(
            held["queue_"].flags.writeable
            and held["queue_indptr_"].flags.writeable
            and held["queue_indices_"].flags.writeable
            and held["queue_data_"].flags.writeable
            and held["queue_labels_"].flags.writeable
        )

    def _catch_up(self) -> None:
        """The estimator learns the examples :meth:`learn_one` holds, as one chunk
        through its ``partial_fit`` (which leaves it unchanged if it refuses them:
        then they stay held, and the error is raised)."""
        state = self.__dict__
        queue = state.get("queue_")
        if queue is None or queue[0] == 0:
            return
        if not self._queue_writeable():  # (refused by name before the estimator learns)
            _state.check_writeable_state(self)
        rows, width = int(queue[0]), self.n_features_in_
        indptr = self.queue_indptr_
        end = int(indptr[rows])
        data = self.queue_data_[:end].copy()
        y = self.classes_[self.queue_labels_[:rows]]
        if queue[1] == 1:
            state["estimator_"].partial_fit(data.reshape(rows, width), y)
        elif rows == 1:  # one row: the estimator's one-example step (no sparse matrix)
            row = dict(zip(self.queue_indices_[:end].tolist(), data.tolist()))
            state["estimator_"].learn_one(row, y[0])
        else:
            indices, ends = self.queue_indices_[:end].copy(), indptr[: rows + 1].copy()
            X = sp.csr_matrix((data, indices, ends), shape=(rows, width))
            state["estimator_"].partial_fit(X, y)
        queue[:] = 0  # at once: nothing is held (the rest only clears the stale rows)
        self.queue_data_[:end] = 0.0
        self.queue_indices_[:end] = 0
        indptr[: rows + 1] = 0
        self.queue_labels_[:rows] = 0

    def _transaction(self, X=None):
        """A call's transaction: the whole state, the estimator included (the
        estimator's own transaction, inside, can not undo the steps after it: an
        interrupt after the estimator learnt must undo its learning too). For a
        learning call to a fitted pipeline whose steps journal their calls (a learner
        with a compiled step and the online scaler: :func:`aucstream._runtime.journals_calls`),
        a copy of the rest only: the steps' own transactions, kept in a journal, undo
        them when a later step fails (:func:`aucstream._runtime.journalled_transaction`;
        at 10^6 columns each step's copy is 24 MB). For one holding a search, a walk
        kept between calls that leaves out what the call can not write
        (:func:`aucstream._race_drift.held_transaction`). The held examples are learnt
        first, outside it: that changes no score (the module docstring, "One example
        at a time")."""
        self._catch_up()
        state = self.__dict__
        estimator = state.get("estimator_")
        if X is None or estimator is None:
            return super()._transaction(X)
        quiet = _race_drift.quiet_call(estimator, X)
        transformer = state.get("transformer_")
        if quiet is not None:  # (the scaler journalled, not copied: held_transaction)
            return _race_drift.held_transaction(self, estimator, quiet, X, (transformer,))
        if journals_calls(estimator) and journals_calls(transformer):
            return journalled_transaction(self, (transformer, estimator))
        return super()._transaction(X)

    def _check_state(self) -> None:
        """The held examples (read by :meth:`_catch_up`) must fit their arrays."""
        queue, indptr = self.queue_, self.queue_indptr_
        rows = int(queue[0])
        labels = self.queue_labels_
        if indptr.shape != (labels.shape[0] + 1,) or labels.shape[0] < 1:
            raise ValueError("queue_indptr_ must hold one more entry than queue_labels_")
        if self.queue_indices_.shape != self.queue_data_.shape:
            raise ValueError("queue_indices_ and queue_data_ must be of one length")
        if queue.shape != (2,) or not (0 <= rows <= labels.shape[0] and 0 <= queue[1] <= 2):
            raise ValueError("queue_ is out of range")
        if (rows == 0) != (queue[1] == 0):
            raise ValueError("queue_ holds examples without a layout")
        ends = indptr[: rows + 1]
        if ends[0] != 0 or np.any(np.diff(ends) < 0) or ends[-1] > self.queue_data_.shape[0]:
            raise ValueError("queue_indptr_ is out of range")
        width = self.n_features_in_
        if queue[1] == 1 and np.any(np.diff(ends) != width):
            raise ValueError("queue_indptr_ does not hold dense rows")
        indices = self.queue_indices_[: ends[-1]]
        if np.any((indices < 0) | (indices >= width)):
            raise ValueError("queue_indices_ holds indices outside the features")
        if np.any((self.queue_labels_ != 0) & (self.queue_labels_ != 1)):
            raise ValueError("queue_labels_ must hold 0/1 labels")
        inner = self.__dict__["estimator_"].__dict__.get("classes_")
        if inner is not None and not np.array_equal(inner, self.classes_):
            raise ValueError("estimator_.classes_ differs from classes_")

    @property  # the steps' answers, not a class constant
    def _tags(self) -> LearnerTags:  # type: ignore[override]
        """Learns through ``_learn`` (not the fast path); its prequential scores come at
        kernel speed when its estimator's do."""
        inner = self.__dict__.get("estimator_", self.estimator)
        if inner is None:  # not fitted: the default estimator it will clone
            inner = self._default_estimator()
        tags = getattr(inner, "_tags", None)  # (an invalid estimator: its check says so)
        if not isinstance(tags, LearnerTags):
            return LearnerTags(fast_path=False)
        # example weights: the estimator's, the online scaler learning the rows of
        # non-zero weight (each as one example) and transforming every row
        from .preprocessing import OnlineStandardScaler

        transformer = self.__dict__.get("transformer_", self.transformer)
        scaler = transformer is None or type(transformer) is OnlineStandardScaler
        weighted = tags.sample_weight and scaler
        return LearnerTags(
            fast_path=False,
            kernel_prequential=tags.kernel_prequential,
            sample_weight=weighted,
            zero_weight_inert=weighted and tags.zero_weight_inert,
        )

    # --------------------------------------------------------------- learning
    def _learn_rows(self, X, y, weights, prequential: bool) -> np.ndarray | None:
        if weights is None:
            Z = self.transformer_.partial_fit_transform(X)
        else:  # (the online scaler: _tags.sample_weight)
            Z = self.transformer_.partial_fit_transform(X, learnt=np.asarray(weights) != 0)
        if prequential:
            scores = self.estimator_.test_then_train(Z, y, sample_weight=weights)
        else:
            scores = None
            self.estimator_.partial_fit(Z, y, sample_weight=weights)
        self.n_samples_seen_ += X.shape[0]
        return scores

    def _merge(self, other: StreamPipeline) -> None:
        self.transformer_.merge(other.transformer_)
        self.estimator_.merge(other.estimator_)

    # ---------------------------------------------------------------- scoring
    def _scorer(self) -> _OnTransformed:
        return _OnTransformed(self)

    def _has_calibration(self) -> bool:
        estimator = getattr(self, "estimator_", None)
        if estimator is None:  # not fitted: the estimator it will clone
            estimator = self._steps()[1]
        return hasattr(estimator, "predict_proba")

    @available_if(_has_calibration)
    def predict_proba(self, X: MatrixLike) -> np.ndarray:
        """The learner's calibrated probabilities of the transformed rows."""
        check_is_fitted(self, "n_samples_seen_")
        check_sparse_structure(X, "X")
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        return self.estimator_.predict_proba(self.transformer_.transform(X))


class _OnTransformed(NamedTuple):
    """A pipeline's scores: its learner's decision values of the transformed rows (so
    already centred on the learner's calibration: no threshold of its own)."""

    pipeline: StreamPipeline

    def _raw_scores(self, X) -> np.ndarray:
        pipeline = self.pipeline
        return pipeline.estimator_.decision_function(pipeline.transformer_.transform(X))

    def _threshold(self) -> float:
        return 0.0

    def _transformed_one(self, x) -> dict | np.ndarray | None:
        """The scaler's ``transform_one`` of an example the runtime found plainly valid
        (``SmallCalls._plain_one``), or None (a dict to a scaler that centers: the usual
        path makes it the dense row it stands for; a scaler without the method)."""
        transformer = self.pipeline.transformer_
        transform = getattr(transformer, "transform_one", None)
        if transform is None or (type(x) is dict and getattr(transformer, "with_mean_", True)):
            return None
        return transform(x)

    def score_one(self, x) -> float | None:
        """The pipeline's score of one plainly valid example: its estimator's
        ``decision_one`` of the transformed example (:meth:`_raw_scores` of one row)."""
        z = self._transformed_one(x)
        return None if z is None else self.pipeline.estimator_.decision_one(z)

    def predict_proba_one(self, x) -> np.ndarray | None:
        """The pipeline's probabilities of one plainly valid example: its estimator's
        ``predict_proba_one`` of the transformed example (``predict_proba``, one row)."""
        z = self._transformed_one(x)
        return None if z is None else self.pipeline.estimator_.predict_proba_one(z)

    def _coef(self) -> np.ndarray:
        """The learner's weights on the raw features: ``w * multiplier``."""
        _, multiplier = self.pipeline.transformer_.affine_map()
        return self.pipeline.estimator_.coef_.ravel() * multiplier

    def _intercept(self) -> float:
        """The learner's intercept (its calibrated threshold included: the pipeline's
        scores are its decision values) moved to the raw features."""
        offset, multiplier = self.pipeline.transformer_.affine_map()
        estimator = self.pipeline.estimator_
        w = estimator.coef_.ravel()
        return float(estimator.intercept_[0] - np.dot(w * multiplier, offset))
