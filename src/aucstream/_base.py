"""The estimator contract shared by every aucstream learner.

Every learner is a scikit-learn classifier whose ``fit`` makes exactly one pass over
the examples in the given order, and whose ``partial_fit`` continues the same stream
chunk by chunk. Validation, label encoding and the streaming loop live here, once;
a learner only allocates its state (``_init_state``) and runs its compiled kernel
over one validated chunk (``_update``).

Chunks reach the kernels in one layout: CSR arrays (``indptr``, ``indices``, ``data``)
with int64 indices and float64 values, whatever the input was. A dense chunk becomes
CSR arrays that store every entry, including zeros, so dense and sparse input run
the very same arithmetic (zeros contribute exact zeros) and give the same model.

Calls that learn a few examples each
------------------------------------
A stream learnt one example at a time (``learn_one``, one-row ``partial_fit``) pays
the per-call work once per example, so a call that a learner has seen before takes a
fast path that keeps every check and does each in O(n_features) without scikit-learn
round trips: the parameters are validated again only when one of them is no longer
the same object as at the last validation; the rows pass one compiled check
(:func:`aucstream._chunks.quick_rows`: finite values, width, magnitude, CSR
structure) and the labels one comparison with ``classes_``; the transaction and the
finiteness check of the state use a walk of the state made once
(:class:`aucstream._state.FlatState`: preallocated shadow copies, one compiled copy
and one compiled check), and leave out what the chunk can not write (the learner's
``_read_only_state``: OPAUC's and AdaOAM's summary of the class the chunk does not
hold, the random generator of a learner whose update draws nothing;
tests/test_write_sets.py checks each declaration byte for byte), and copy and check
only the rows of the chunk's features of what it writes only there (the learner's
``_row_written_state``: OPAUC's d x d scatters; tests/test_undo_log.py). Any input the
fast path does not accept as plainly valid goes through the full validation, which
raises the usual error or converts the input, so both paths accept the same input and
give bit-identical models. The first call, which sets the width, checks plainly valid
float64 rows the same way (:func:`_plain_first_input`, with the labels' kind in place
of scikit-learn's ``check_classification_targets``); tests/test_fast_path.py compares
both paths' outcomes on 20 inputs for every learner.

A call of one example goes further (:meth:`BaseStreamingAUC._learn_row_fast`): the
learner binds its update once to a chunk of fixed buffers (``_bind_update``, its
kernel called at its compiled entry point, :func:`aucstream._kernels.bound_call`),
each call loads and checks its row into them in one compiled call
(:class:`aucstream._fastpath.OneRow`), and the walk's one check covers the state and
the parameters. Scoring one example (``decision_one``, ``predict_one``,
``predict_proba_one``) skips scikit-learn's validation the same way
(:meth:`BaseStreamingAUC._score_one`), with the scores of ``decision_function`` bit
for bit.
"""

from __future__ import annotations

import math
import numbers
from operator import is_
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from . import _calibration, _state
from ._chunks import (
    CSR_TYPES,
    Chunk,
    _values_ok,
    check_magnitude,
    check_sparse_structure,
    dict_row,
    dict_row_arrays,
    dict_row_values,
    nonzero_columns,
    plain_rows,
    plain_rows_of_width,
    quick_rows,
    sparse_row_dot,
    to_chunk,
)
from ._config import format_bytes, get_config
from ._fastpath import (
    FAST,
    LABEL_KINDS,
    NONE,
    STABLE_PARAM_TYPES,
    FastCache,
    OneRow,
    one_label,
    param_names,
    param_values,
    quick_csr,
    quick_labels,
    row_chunk,
    same_classes,
    validate_params_once,
)
from ._kernels import upgrade_class_totals
from ._params import check_parameters
from .metrics import roc_auc

__all__ = ["BaseStreamingAUC", "ClassWeightTotals", "make_rng"]

#: Arithmetic errors of a kernel, reported as a FloatingPointError naming the chunk.
_KERNEL_ERRORS = (ZeroDivisionError, OverflowError, FloatingPointError)

#: The float64 dtype (rows of it take the one-row fast path).
_FLOAT64 = np.dtype(np.float64)


def _plain_labels(y) -> np.ndarray | None:
    """``y`` as an array when it is a 1-D list or array of finite numbers or strings,
    else None."""
    if type(y) not in (list, tuple, np.ndarray):
        return None
    labels = np.asarray(y)
    kind = labels.dtype.kind
    if labels.ndim != 1 or kind not in "biufU" or (kind == "f" and not _values_ok(labels)):
        return None
    return labels


def _plain_input(learner, X, y) -> tuple[np.ndarray, np.ndarray] | None:
    """``(X, y)`` as scikit-learn's ``validate_data`` would return them, when ``X`` is
    plainly valid (:func:`aucstream._chunks.plain_rows`) and ``y`` a 1-D list or array
    of as many finite numbers or strings (:func:`_plain_labels`): what a learner
    learning through :meth:`BaseStreamingAUC._learn` (a pipeline, a search) checks on
    every call. Else None: the caller validates in full."""
    labels = _plain_labels(y)
    if labels is None:
        return None
    X = plain_rows(learner, X)
    if X is None or X.shape[0] != labels.shape[0]:
        return None
    return X, labels


def _plain_first_input(X, y) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_plain_input` for the call that sets the width (``fit``, a first
    ``partial_fit``), which takes it from ``X``: ``(X, y)`` when ``X`` is a C-contiguous
    float64 ndarray or a CSR matrix of at least one column and plainly valid rows, and ``y``
    plain labels that are not continuous (integers, bools, strings, or floats of
    integer value: what :func:`~sklearn.utils.multiclass.check_classification_targets`
    accepts of them). Else None: the caller validates in full, and raises what
    scikit-learn raises. Saves the ~1.5 ms of those two checks on a chunk of 10,000
    rows (the cost of each new learner's first call)."""
    labels = _plain_labels(y)
    if labels is None:
        return None
    if type(X) is np.ndarray and (X.ndim != 2 or not X.flags.c_contiguous):
        return None  # a batch learner's scores of X in another order round otherwise
    if labels.dtype.kind == "f" and not (
        np.abs(labels).max(initial=0.0) < 2.0**53 and np.array_equal(labels, np.trunc(labels))
    ):
        return None  # continuous (or huge) labels: scikit-learn's verdict
    width = X.shape[1] if type(X) is np.ndarray or type(X) in CSR_TYPES else 0
    X = plain_rows_of_width(X, width) if width >= 1 else None
    if X is None or X.shape[0] != labels.shape[0]:
        return None
    return X, labels


#: What the one-row fast path returns when it does not take a call.
_NOT_TAKEN = object()

#: An optional array argument.
_Maybe = ArrayLike | None

_OWN_PARTIAL_FIT: dict[type, bool] = {}


def _own_partial_fit(cls: type) -> bool:
    """Whether ``cls`` overrides ``partial_fit`` (``learn_one`` then goes through it)."""
    found = _OWN_PARTIAL_FIT.get(cls)
    if found is None:
        base = BaseStreamingAUC.__dict__["partial_fit"].fn
        found = _OWN_PARTIAL_FIT[cls] = getattr(cls, "partial_fit", None) is not base
    return found


def _binds_its_update(cls: type) -> bool:
    """Whether the ``_bind_update`` of ``cls`` binds its ``_update``: it is defined in
    the class that defines ``_update`` or in a subclass of it (a subclass that
    overrides ``_update`` alone would otherwise get its parent's update bound)."""

    def owner(name: str) -> type:
        return next(c for c in cls.__mro__ if name in c.__dict__)

    return issubclass(owner("_bind_update"), owner("_update"))


def make_rng(random_state) -> np.random.Generator:
    """A numpy Generator from an int, None, a Generator or a legacy RandomState."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(np.iinfo(np.int32).max))
    if random_state is None or isinstance(random_state, numbers.Integral):
        return np.random.default_rng(random_state)
    raise ValueError(f"random_state must be None, an int or a Generator, got {random_state!r}")


def _is_online(estimator) -> bool:
    """Batch learners have no ``partial_fit`` (``hasattr`` is False)."""
    return not estimator.is_batch


def _unknown_labels(y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Mask of the labels of ``y`` that are not in ``classes`` (two labels), as
    ``~np.isin(y, classes)``: by two comparisons where the dtypes compare as
    ``np.isin`` does (:data:`aucstream._fastpath.LABEL_KINDS`; ``np.isin`` costs about
    60 us even for one label)."""
    if y.dtype.kind in LABEL_KINDS.get(classes.dtype.kind, "") and classes.shape == (2,):
        return (y != classes[0]) & (y != classes[1])
    return ~np.isin(y, classes)


class BaseStreamingAUC(ClassifierMixin, BaseEstimator):
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
    #: Rows per kernel call in ``fit`` (bounds the temporary CSR copy of dense input).
    _fit_chunk_size: ClassVar[int] = 8192

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
        access, which cost 1.5 us of a 25 us ``learn_one``; a batch class keeps the
        descriptors, so it has no such attribute.
        """
        super().__init_subclass__(**kwargs)
        cls._scores_by_coef = all(
            next(c for c in cls.__mro__ if name in c.__dict__) is BaseStreamingAUC
            for name in ("_raw_scores", "decision_function", "predict", "predict_proba")
        )
        if cls.is_batch:
            return
        for name in BaseStreamingAUC._ONLINE_METHODS:
            descriptor = BaseStreamingAUC.__dict__[name]
            inherited = next(c.__dict__[name] for c in cls.__mro__ if name in c.__dict__)
            if inherited is descriptor:
                setattr(cls, name, descriptor.fn)

    def _init_state(self, n_features: int) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _update(self, chunk: Chunk) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _coef(self) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _intercept(self) -> float:
        return 0.0

    def _state_nbytes(self, n_features: int) -> int:
        """Bytes of the state ``_init_state`` would allocate (checked against the budget).

        Learners whose state grows faster than O(n_features) override this; the
        default counts nothing.
        """
        return 0

    #: What to suggest when the state does not fit the memory budget.
    _low_memory_hint: ClassVar[str] = ""

    #: State members added after format 1 was first written: a model file without
    #: them gets the fresh value, then :meth:`_upgrade_state` (e.g. an uncalibrated
    #: probability map for files of aucstream 0.1).
    _state_added_later: ClassVar[tuple[str, ...]] = ("calibration_",)

    def _upgrade_state(self, missing: set[str]) -> None:
        """Complete the ``missing`` members of an older file from the rest of the state.

        Called by :func:`aucstream.load_model` after the fresh values were set and
        before :meth:`_check_state`. The default keeps the fresh values.
        """

    def _check_state(self) -> None:
        """Consistency checks of a loaded state that shapes cannot express.

        Called by :func:`aucstream.load_model` after every member has been checked
        against a freshly allocated state; raise ``ValueError`` naming the member.
        """

    def _check_params(self) -> None:
        """Checks across parameters that single constraints cannot state.

        Called after the declared constraints, before any state is touched; raise
        ``InvalidParameterError`` naming the parameters. The default does nothing.
        """

    def _begin_pass(self, y_pm: np.ndarray) -> None:
        """Called by ``fit`` (not ``partial_fit``) once the state is allocated.

        ``y_pm`` holds the +1/-1 labels of the whole pass, for learners that need the
        stream length or the class counts in advance (FSAUC's stage schedule, prior
        class weights). The default does nothing.
        """

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
            X, y = self._validate_input(X, y, reset=True)
            weights = self._validate_weights(sample_weight, X)
            classes = self._check_two_classes(np.unique(y), "y")
            self._reset(classes, X.shape[1])
            self._begin_pass(np.where(y == classes[1], 1.0, -1.0))
            order = None
            if getattr(self, "shuffle", False):
                order = self._rng.permutation(X.shape[0])
            step = self._fit_chunk_size if not self.is_batch else max(X.shape[0], 1)
            for start in range(0, X.shape[0], step):
                rows = slice(start, start + step) if order is None else order[start : start + step]
                self._learn(
                    X[rows], y[rows], sample_weight=None if weights is None else weights[rows]
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
        return self._stream(X, y, classes, sample_weight, prequential=True)

    def _stream(self, X, y, classes, sample_weight, prequential: bool) -> np.ndarray | None:
        """``partial_fit`` / ``test_then_train``: the fast path, else the full validation.

        Returns the prequential scores when ``prequential``.
        """
        self._check_partial_fit()
        if classes is None and sample_weight is None:
            learnt = self._partial_fit_row_fast(X, y, prequential)
            if learnt is not _NOT_TAKEN:
                return learnt
        quick = self._quick_chunk(X, y, classes, sample_weight)
        if quick is not None:
            return self._quick_learn(quick, X, prequential)
        scores: list[np.ndarray] | None = [] if prequential else None
        with self._transaction(X):
            self._continue(X, y, classes, sample_weight, scores)
        return scores[0] if prequential else None

    def _continue(self, X, y, classes, sample_weight, scores: list | None) -> None:
        """partial_fit's body: checks, first-call set-up, then one learning step.

        The parameters are validated unless they are the very (immutable) objects
        validated last time (:func:`aucstream._fastpath.validate_params_once`).
        """
        validate_params_once(self)
        first = not hasattr(self, "classes_")
        X, y = self._validate_input(X, y, reset=first)
        weights = self._validate_weights(sample_weight, X)
        if classes is not None:
            classes = self._check_two_classes(np.unique(np.asarray(classes)), "classes")
        if first:
            if classes is None:
                classes = self._check_two_classes(
                    np.unique(y), "the first chunk (pass classes=[neg, pos] on the first call)"
                )
            self._reset(classes, X.shape[1])
        elif classes is not None and not np.array_equal(classes, self.classes_):
            raise ValueError(
                f"classes={classes.tolist()} differs from classes_={self.classes_.tolist()} "
                "set on the first call to partial_fit"
            )
        unknown = _unknown_labels(y, self.classes_)
        if unknown.any():
            raise ValueError(
                f"y contains labels {np.unique(y[unknown]).tolist()[:5]} not in "
                f"classes_={self.classes_.tolist()}"
            )
        if scores is None:
            self._learn(X, y, sample_weight=weights)
        else:
            scores.append(self._learn_prequential(X, y, weights))

    # ------------------------------------------------------- one example at a time
    @available_if(_is_online)
    def learn_one(self, x, y, classes: ArrayLike | None = None) -> BaseStreamingAUC:
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
        if classes is None and not _own_partial_fit(type(self)) and self._learn_one_fast(x, y):
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

    def _learn_one_fast(self, x, y) -> bool:
        """``learn_one(x, y)`` through :meth:`_learn_row_fast`: True when learnt, False
        (nothing touched) when the call must take the usual path."""
        if type(x) is np.ndarray:
            if x.ndim != 1:
                return False
            return self._learn_row_fast(x, None, None, y, False) is not _NOT_TAKEN
        if type(x) is dict:
            return self._learn_row_fast(x, None, None, y, False) is not _NOT_TAKEN
        return False

    def _partial_fit_row_fast(self, X, y, prequential: bool, journal: list | None = None):
        """One-row ``partial_fit`` / ``test_then_train`` through :meth:`_learn_row_fast`
        (a 2-D float64 array of one row, or a CSR matrix of one row): what the call
        returns, or ``_NOT_TAKEN`` (nothing touched)."""
        if type(y) not in (list, tuple, np.ndarray) or len(y) != 1:
            return _NOT_TAKEN
        if type(X) is np.ndarray:
            if X.ndim != 2 or X.shape[0] != 1:
                return _NOT_TAKEN
            return self._learn_row_fast(X[0], None, None, y[0], prequential, journal)
        if type(X) in CSR_TYPES and X.shape[0] == 1:
            return self._learn_row_fast(X.indptr, X.indices, X.data, y[0], prequential, journal)
        return _NOT_TAKEN

    def _learn_row_fast(self, row, indices, data, y, prequential: bool, journal=None):
        """Learn one row through the learner's bound one-row update
        (:meth:`_bind_update`), with the checks of :meth:`_quick_chunk` in fewer calls:
        what the call returns (the prequential score when ``prequential``), or
        ``_NOT_TAKEN``, having touched nothing, when it must take the usual path.

        Taken when the fast path has seen this learner (its cache holds a current walk
        of the state that pins the parameters last validated), ``y`` equals one of
        the classes, and the row is plainly valid: ``row`` a C-contiguous float64 1-D
        array of the learner's width (``indices`` None; a learner whose kernels read
        dense rows), a dict of integer keys and real numbers
        (:meth:`aucstream._fastpath.OneRow.load_dict`; the usual path says what is
        wrong with another), or the ``indptr`` of a one-row CSR matrix with its
        ``indices`` and ``data`` (float64), whose values and indices
        :class:`aucstream._fastpath.OneRow` accepts. ``journal``: see
        :meth:`_learn_one_row`.
        """
        cache = FAST.get(self)
        if cache is None or not cache.pinned or cache.flat is None:
            return _NOT_TAKEN
        if not cache.flat.current(self):
            return _NOT_TAKEN
        if prequential and not self._kernel_prequential:
            return _NOT_TAKEN
        label = one_label(y, cache)
        if label is None:
            return _NOT_TAKEN
        if type(row) is dict:
            one = self._one_row_context(cache, False, len(row))
            if one is None or not one.load_dict(row, label):
                return _NOT_TAKEN
        elif indices is None:
            if row.dtype != _FLOAT64 or not row.flags.c_contiguous or not self._dense_kernels:
                return _NOT_TAKEN
            one = self._one_row_context(cache, True, 0)
            if one is None or not one.load_dense(row, label):
                return _NOT_TAKEN
        else:
            if not (data.dtype == _FLOAT64 and indices.dtype.kind == "i" and row.dtype.kind == "i"):
                return _NOT_TAKEN
            one = self._one_row_context(cache, False, indices.shape[0])
            if one is None or not one.load_sparse(row, indices, data, label):
                return _NOT_TAKEN
        self._check_partial_fit()
        return self._learn_one_row(cache, one, prequential, journal)

    def _one_row_context(self, cache: FastCache, dense: bool, size: int) -> OneRow | None:
        """The cache's prepared one-row call of this layout, holding rows of ``size``
        stored values (sparse), or None when the learner binds no update."""
        key = ("one", dense)
        one = cache.plans.get(key)
        if one is None or (not dense and one.capacity < size):
            grown = 16 if one is None else 2 * one.capacity
            capacity = 0 if dense else min(max(size, grown), self.n_features_in_)
            binds = _binds_its_update(type(self))
            one = OneRow(self, dense, capacity, self._kernel_prequential, binds)
            cache.plans[key] = one
        return one if one.update is not None else None

    def _learn_one_row(self, cache: FastCache, one: OneRow, prequential: bool, journal=None):
        """Learn the row loaded into ``one`` in a transaction of the fast path (as
        :meth:`_quick_learn` does, with the bound update); returns its prequential
        score (an array of one) when ``prequential``.

        ``journal``, a list or None, receives ``(walk, saved)`` once the state is
        saved: ``walk.restore(saved)`` undoes the call after it succeeded, until the
        next transaction of this learner (the transaction of a caller that holds the
        learner, :func:`aucstream.search.search_transaction`)."""
        flat, chunk = cache.flat, one.chunk
        rows = None
        if cache.by_rows:  # as _fast_rows does
            rows = one.rows()
            if 2 * rows.shape[0] > chunk.n_features:
                rows = None
        plan = self._fast_plan(cache, chunk, rows, one_row=True, positive=one.positive)
        saved = flat.save(plan, rows)
        if journal is not None:
            journal.append((flat, saved))
        try:
            try:
                one.update(self)
            except _KERNEL_ERRORS as error:
                raise self._kernel_error(one.exact_chunk(), error) from error
            before = self.n_samples_seen_
            self.n_samples_seen_ = before + 1
            if self._kernel_prequential and not self._kernel_calibrates:
                _calibration.update(self.calibration_, one.scores, one.y, NONE)
            if not flat.all_finite(plan, rows):  # current: a bound update keeps it so
                self._check_finite(one.exact_chunk(), before)
        except BaseException:
            flat.restore(saved)
            raise
        return one.scores.copy() if prequential else None

    def _bind_update(self, chunk: Chunk, reuse: bool = False):
        """``_update(chunk)`` with its arguments made once: a function of the learner
        that runs it, or None (the default: the learner binds nothing).

        The one-row fast path (:meth:`learn_one`, one-row :meth:`partial_fit`) binds
        the update to a chunk of fixed buffers (:class:`aucstream._fastpath.OneRow`)
        that each call refills, and calls the result while the walk of the state is
        current and the parameters are the same objects. So the function may hold the
        state's objects (arrays, components) and values made from the parameters, but
        must read every other member of the state (Python scalars) when called, and
        must not hold the learner (pass it). It writes arrays in place and sets
        members that hold Python scalars, and never adds, removes or replaces another
        member (the walk stays current: the one-row path does not check it again;
        tests/test_one_row.py checks each binding learner). The chunk's sparse
        buffers may be longer than the row: read its entries through ``indptr``. A
        learner that binds defines ``_update(chunk)`` as
        ``self._bind_update(chunk)(self)``, so both paths run the same code; a
        subclass that overrides ``_update`` alone is not bound
        (:func:`_binds_its_update`).
        """
        return None

    def predict_one(self, x):
        """The predicted label of one example (see :meth:`predict`).

        Parameters
        ----------
        x : array-like of shape (n_features,) or dict
            The example (a dict maps feature indices to values, as in
            :meth:`learn_one`).

        Returns
        -------
        label
            A value of ``classes_``.
        """
        score = self._score_one(x)
        if score is None:
            return self.predict(self._one_row(x))[0]
        return self.classes_[int(score - self._threshold() > 0)]

    def decision_one(self, x) -> float:
        """The score of one example (see :meth:`decision_function`).

        Parameters
        ----------
        x : array-like of shape (n_features,) or dict
            The example.

        Returns
        -------
        float
        """
        score = self._score_one(x)
        if score is None:
            return float(self.decision_function(self._one_row(x))[0])
        return score - self._threshold()

    def _score_one(self, x) -> float | None:
        """The model's own score ``w^T x + b`` of one plainly valid example (a finite
        float, equal bit for bit to what :meth:`decision_function` adds the threshold
        to), or None when the example must take the usual path (which validates it
        in full, and raises or converts as for ``decision_function``).

        Plainly valid: a fitted learner without feature names that scores through
        the base class's methods (:attr:`_scores_by_coef`), and ``x`` a
        C-contiguous float64 1-D array of its width, or a dict of feature indices
        (:func:`aucstream._chunks.dict_row_arrays`), whose values are finite and
        below 1e150 in absolute value. Costs O(n_features) (the learner's ``_coef``)
        and no scikit-learn validation: 10 us instead of 330 us at d = 123.
        """
        state = self.__dict__
        width = state.get("n_features_in_")
        if width is None or "n_samples_seen_" not in state or "feature_names_in_" in state:
            return None
        if not self._scores_by_coef:  # scores of its own (a pipeline, a search)
            return None
        if type(x) is np.ndarray:
            if x.ndim != 1 or x.shape[0] != width or x.dtype != _FLOAT64:
                return None
            if not x.flags.c_contiguous or not _values_ok(x):
                return None
            score = float((x.reshape(1, -1) @ self._coef())[0])
        elif type(x) is dict:
            row = dict_row_values(x)
            if row is None:
                return None
            score = sparse_row_dot(*row, self._coef())
        else:
            return None
        score += self._intercept()
        if not math.isfinite(score):
            return None  # refused values, or an overflow: the usual path says which
        return score

    def _known_width(self) -> int:
        width = getattr(self, "n_features_in_", None)
        if width is None:
            raise ValueError(
                f"{type(self).__name__} does not know its number of features yet: learn a "
                "first example as an array (or through partial_fit) before passing dicts"
            )
        return width

    def _one_row(self, x):
        if isinstance(x, dict):
            return dict_row(x, self._known_width())
        row = np.asarray(x)
        if row.ndim != 1:
            raise ValueError(
                f"x must be one example (a 1-D array or a dict), got shape {row.shape}"
            )
        return row.reshape(1, -1)

    # ------------------------------------------------------------------- merging
    def merge(self, other: BaseStreamingAUC) -> BaseStreamingAUC:
        """Absorb a learner of the same kind that learnt another part of the stream.

        Both must have the same class and parameters (``random_state`` may differ),
        the same features and the same classes. What merging means is the learner's
        own (see its ``_merge``): class summaries add exactly, weights combine by
        examples seen, reservoirs merge into a uniform sample of the union. Either way
        ``n_samples_seen_`` becomes the sum. A refused merge changes nothing.

        Parameters
        ----------
        other : BaseStreamingAUC
            The other learner (left unchanged).

        Returns
        -------
        self
        """
        name = type(self).__name__
        if type(other) is not type(self):
            raise TypeError(f"cannot merge a {type(other).__name__} into a {name}")
        check_is_fitted(self, "n_samples_seen_")
        check_is_fitted(other, "n_samples_seen_")
        mine, theirs = self.get_params(deep=False), other.get_params(deep=False)
        mine.pop("random_state", None)
        theirs.pop("random_state", None)
        if mine != theirs:
            differ = sorted(k for k in mine if mine[k] != theirs[k])
            raise ValueError(f"cannot merge {name}s whose parameters differ: {differ}")
        if other.n_features_in_ != self.n_features_in_:
            raise ValueError(
                f"cannot merge a {name} of {other.n_features_in_} features into one of "
                f"{self.n_features_in_}"
            )
        if not np.array_equal(other.classes_, self.classes_):
            raise ValueError(
                f"cannot merge {name}s with classes {other.classes_.tolist()} and "
                f"{self.classes_.tolist()}"
            )
        with self._transaction():
            self._merge(other)
            self.n_samples_seen_ += other.n_samples_seen_
        return self

    def _merge(self, other: BaseStreamingAUC) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not support merge() yet")

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
        return self._own_scores(X) - self._threshold()

    def _own_scores(self, X) -> np.ndarray:
        """The model's own scores ``w^T x + b`` of rows validated here (what
        :meth:`decision_function` shifts by the threshold and :meth:`predict_proba`
        calibrates). Raises ``FloatingPointError`` for a score that overflowed."""
        check_is_fitted(self, "n_samples_seen_")
        check_sparse_structure(X, "X")
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        scores = self._raw_scores(X)
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
        return self.is_batch or self._kernel_prequential

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
        scores = self._own_scores(X)  # checks first that the learner is fitted
        p = _calibration.probability(self.calibration_, scores)
        return np.column_stack([1.0 - p, p])

    @available_if(_has_calibration)
    def predict_proba_one(self, x) -> np.ndarray:
        """The class probabilities of one example (see :meth:`predict_proba`).

        Parameters
        ----------
        x : array-like of shape (n_features,) or dict
            The example.

        Returns
        -------
        ndarray of shape (2,)
            ``P(classes_[0])`` and ``P(classes_[1])``.
        """
        score = self._score_one(x)
        if score is None:
            return self.predict_proba(self._one_row(x))[0]
        p = _calibration.probability_one(self.calibration_, score)
        return np.array([1.0 - p, p])

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Labels: ``classes_[1]`` where the calibrated probability exceeds 1/2.

        That is where :meth:`decision_function` is positive. Without a calibration
        yet (fewer than two scores of each class seen, or a learner that reports no
        prequential scores) the model's score is thresholded at 0, as scikit-learn's
        linear classifiers do. For another operating point use the scores or
        probabilities directly, or scikit-learn's ``FixedThresholdClassifier`` /
        ``TunedThresholdClassifierCV``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Examples to label (as many features as the examples the learner has
            learnt).

        Returns
        -------
        ndarray of shape (n_samples,)
            The predicted labels, values of ``classes_``.
        """
        positive = self.decision_function(X) > 0  # checks that the learner is fitted
        return self.classes_[positive.astype(np.intp)]

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight=None) -> float:
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
        """Intercept of :meth:`decision_function`, shape (1,).

        The model's own intercept (0 for the pairwise learners: AUC ignores shifts)
        minus the calibrated threshold.
        """
        check_is_fitted(self, "n_samples_seen_")
        return np.array([self._intercept() - self._threshold()])

    # --------------------------------------------------------------- internals
    def _validate_params(self) -> None:
        """Declared constraints, then cross-parameter checks (no state touched)."""
        check_parameters(self)
        self._check_params()

    def _transaction(self, X=None):
        """A call that raises leaves the learner exactly as it was (state, generator).

        ``X`` is the input of a ``partial_fit``-like call, for learners whose
        transaction depends on its size (``OnePassSearch``); None elsewhere. Such a
        call leaves the arrays of :meth:`_row_logged_state` to the undo log that
        :meth:`_learn_chunk` fills (:class:`aucstream._state.UndoLog`), instead of
        copying them.
        """
        if X is None or "n_features_in_" not in self.__dict__:
            return _state.transaction(self)
        return _state.transaction(self, self._row_logged_state())

    def _validate_input(self, X, y, reset: bool):
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        if not reset:
            plain = _plain_input(self, X, y)
            if plain is not None:
                return plain
        else:
            plain = _plain_first_input(X, y)
            if plain is not None:  # what validate_data(reset=True) sets for such input
                self.n_features_in_ = plain[0].shape[1]
                self.__dict__.pop("feature_names_in_", None)
                return plain
        check_sparse_structure(X, "X")
        X, y = validate_data(
            self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32], reset=reset
        )
        if reset:  # later chunks are checked against classes_ (cheaper than type_of_target)
            check_classification_targets(y)
        check_magnitude(X)
        return X, y

    def _check_two_classes(self, classes: np.ndarray, what: str) -> np.ndarray:
        if classes.size == 2:
            return classes
        if classes.size < 2:
            raise ValueError(
                f"{type(self).__name__} needs two classes, but {what} contains only one class "
                f"({classes.tolist()})"
            )
        raise ValueError(
            f"Only binary classification is supported. {type(self).__name__} ranks two "
            f"classes, but {what} contains {classes.size}: {classes.tolist()[:10]}"
        )

    def _reset(self, classes: np.ndarray, n_features: int) -> None:
        self._check_budget(n_features)
        self.classes_ = classes
        self.n_samples_seen_ = 0
        self.calibration_ = _calibration.new_state()
        self._rng = make_rng(getattr(self, "random_state", None))
        self._init_state(n_features)
        _state.mark_finite(self, self._row_logged_state())  # freshly allocated

    def _check_budget(self, n_features: int) -> None:
        need = int(self._state_nbytes(n_features))
        budget = get_config()["memory_budget"]
        if 2 * need > budget:  # the state, and its copy while a call is in progress
            raise MemoryError(
                f"{type(self).__name__} needs {format_bytes(need)} for its state at "
                f"n_features={n_features}, above the memory budget of "
                f"{format_bytes(budget // 2)} (half of aucstream's memory_budget, which "
                "also holds a copy during each call; aucstream.set_config(memory_budget=...) "
                f"raises it). {self._low_memory_hint}".rstrip()
            )

    #: The kernels read dense chunks in place (``chunk.indices is None``, ``chunk.data``
    #: 2-D) as well as CSR chunks; otherwise dense input is converted to CSR arrays.
    _dense_kernels: ClassVar[bool] = False

    #: The update takes example weights from ``chunk.sample_weight`` (else they are
    #: refused with an error).
    _supports_sample_weight: ClassVar[bool] = False

    def _validate_weights(self, sample_weight, X) -> np.ndarray | None:
        if sample_weight is None:
            return None
        if not self._supports_sample_weight:
            raise ValueError(
                f"{type(self).__name__} does not support sample_weight: its update has no "
                "per-example weight (see its notes)"
            )
        weights = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        if not np.isfinite(weights).all():
            raise ValueError("sample_weight contains NaN or infinity")
        return np.ascontiguousarray(weights)

    def _learn(
        self,
        X,
        y,
        pre_scores: np.ndarray | None = None,
        sample_weight: np.ndarray | None = None,
    ) -> None:
        y_pm = np.where(y == self.classes_[1], 1.0, -1.0)
        calibrate = self._kernel_prequential and not self.is_batch
        if calibrate and pre_scores is None:
            pre_scores = np.empty(X.shape[0])
        chunk = to_chunk(
            X,
            y_pm,
            pre_scores=pre_scores,
            sample_weight=sample_weight,
            dense_in_place=self._dense_kernels,
        )
        self._learn_chunk(chunk, X)

    def _learn_chunk(
        self, chunk: Chunk, X, flat: _state.FlatState | None = None, plan=None
    ) -> None:
        """One kernel call on a validated chunk, then the calibration (unless the kernel
        fits it, ``_kernel_calibrates``) and the checks.

        ``X`` is the validated input of the chunk (for batch learners' scores).
        ``flat`` is a current walk of the state (:class:`aucstream._state.FlatState`)
        for the fast finiteness check, or None (then the walk kept by
        :func:`aucstream._state.walked_transaction`, if it is current); ``plan`` its
        plan for the chunk (what the chunk can not write, :meth:`_read_only_state`).

        The arrays of :meth:`_row_logged_state` are saved into the undo log of the
        call's transaction first (the chunk's rows of those :meth:`_row_written_state`
        declares, the others whole), and only those rows are checked afterwards.
        """
        rows = self._logged_rows(chunk)
        try:
            self._update(chunk)
        except _KERNEL_ERRORS as error:
            raise self._kernel_error(chunk, error) from error
        before = self.n_samples_seen_
        self.n_samples_seen_ += chunk.n_samples
        if self._kernel_prequential and not self.is_batch:
            if not self._kernel_calibrates:
                _calibration.update(
                    self.calibration_, chunk.pre_scores, chunk.y, chunk.sample_weight
                )
        elif self.is_batch:
            scores = self._raw_scores(X)
            _calibration.fit_batch(self.calibration_, scores, chunk.y, chunk.sample_weight)
        if flat is None:  # a walk kept by a transaction around this call, if any
            flat = _state.kept_walk(self)
        if flat is not None and flat.current(self) and flat.all_finite(plan):
            return
        self._check_finite(chunk, before, rows)

    def _logged_rows(self, chunk: Chunk) -> dict | None:
        """Before learning ``chunk``: cover the arrays of :meth:`_row_logged_state` in
        the active undo log, if any; return ``{id(array): rows}`` of the arrays the
        chunk writes only in its rows and that were finite before (for
        :meth:`_check_finite`), or None."""
        logged = self._row_logged_state()
        if not logged:
            return None
        written = self._row_written_state(chunk)
        rows = self._written_rows(chunk, written) if written else {}
        log = _state.active_log(self)
        if log is not None:
            log.cover(rows)
        finite = _state.marked_finite(self, written)
        if not finite:
            return None
        bounded = frozenset(map(id, self._bounded_state()))
        unchecked = np.zeros(0, dtype=np.int64)  # no row to check
        return {id(a): unchecked if id(a) in bounded else rows[id(a)] for a in finite}

    def _written_rows(self, chunk: Chunk, written: tuple) -> dict:
        """``{id(array): rows}``: the rows (distinct, sorted) that ``_update(chunk)``
        may write of each array of :meth:`_row_written_state` (``written``). The
        default: the chunk's features (:meth:`_chunk_rows`) for every one; a learner
        may name fewer per array (OPAUC: a class's summary, the features of the
        chunk's examples of that class)."""
        rows = _state.unique_rows(self._chunk_rows(chunk), chunk.n_features)
        return dict.fromkeys(map(id, written), rows)

    def _kernel_error(self, chunk: Chunk, error: Exception) -> FloatingPointError:
        """The error that reports an arithmetic ``error`` raised by ``_update``."""
        return FloatingPointError(
            f"{type(self).__name__} failed on a chunk of {chunk.n_samples} examples after "
            f"{self.n_samples_seen_} ({type(error).__name__}: {error}); the chunk was not "
            "learnt. Scale the features or use a smaller step size"
        )

    def _check_finite(self, chunk: Chunk, before: int, rows: dict | None = None) -> None:
        """Raise if a state array became infinite or NaN learning ``chunk`` (after
        ``before`` examples), naming it. ``rows`` (from :meth:`_logged_rows`): arrays
        that were finite before the chunk and that it wrote only in the given rows."""
        where = _state.first_non_finite(self, rows)
        if where is None:  # every array checked whole, or finite before and checked where written
            _state.mark_finite(self, self._row_logged_state())
        else:
            largest = float(np.max(np.abs(chunk.data), initial=0.0))
            raise FloatingPointError(
                f"{type(self).__name__} diverged: its state {where} became infinite or NaN "
                f"within a chunk of {chunk.n_samples} examples after {before} "
                f"(largest feature value in the chunk: {largest:.3g}); the chunk was not learnt. "
                "Use a smaller step size or scale the features"
            )

    # ------------------------------------------------------------- the fast path
    #: Small calls may skip the general validation (see :meth:`_quick_chunk`); learners
    #: that override ``_learn`` (meta-learners) set this False.
    _fast_path: ClassVar[bool] = True

    def _check_partial_fit(self) -> None:
        """Checks of a learner before any call that continues the stream.

        Called first by ``partial_fit``, ``test_then_train`` and ``learn_one`` (for
        instance to refuse an option that needs the whole training set in advance);
        raise ``ValueError``. The default does nothing.
        """

    def _quick_chunk(self, X, y, classes, sample_weight):
        """``(cache, indptr, indices, data, y_pm)`` when the call can take the fast path.

        The fast path is for a learner that has already learnt (its classes and width
        are known) and input that is plainly valid: no sample weights, rows that
        :func:`aucstream._chunks.quick_rows` accepts (or the arrays of a dict row),
        labels equal to ``classes_[0]`` or ``classes_[1]``, ``classes`` None or those
        two. The parameters are validated here when any of them changed (raising as
        the full path does). Anything else returns None, with nothing touched, and the
        caller validates in full.
        """
        state = self.__dict__
        classes_ = state.get("classes_")
        width = state.get("n_features_in_")
        if (
            not self._fast_path
            or self.is_batch
            or sample_weight is not None
            or classes_ is None
            or width is None
            or "n_samples_seen_" not in state
            or "feature_names_in_" in state
        ):
            return None
        cache = FAST.get(self)
        if cache is None:
            cache = FAST[self] = FastCache()
        params = param_values(self)
        if cache.params is None or not all(map(is_, params, cache.params)):
            validate_params_once(self)  # not again after the first call's validation
            stable = all(type(v) in STABLE_PARAM_TYPES for v in params[:-2])
            cache.params = params if stable else None
            cache.plans = {}  # a declaration may depend on the parameters
            cache.flat = None  # walked again, pinning the parameters if stable
        if cache.classes is not classes_:
            if classes_.shape != (2,) or classes_.dtype.kind not in LABEL_KINDS:
                return None
            cache.classes = classes_
            cache.c0, cache.c1 = classes_[0], classes_[1]
            cache.py0, cache.py1 = classes_[0].item(), classes_[1].item()
            cache.kinds = LABEL_KINDS[classes_.dtype.kind]
        if classes is not None and not same_classes(classes, cache):
            return None
        flat = cache.flat
        if flat is None or not flat.current(self):  # walk the state (again)
            if self._undo_logged():
                return None
            names = param_names(type(self))
            cache.pinned = cache.params is not None and all(k in state for k in names)
            cache.flat = _state.FlatState(self, names if cache.pinned else ())
            cache.plans = {}
            cache.by_rows = bool(self._row_logged_state())
        if type(X) is tuple:  # the arrays of a dict row (learn_one)
            rows = X if quick_csr(X, width) else None
        else:
            rows = quick_rows(X, width, self._dense_kernels)
        if rows is None:
            return None
        n = rows[2].shape[0] if rows[0] is None else rows[0].shape[0] - 1
        y_pm = quick_labels(y, n, cache)
        if y_pm is None:
            return None
        return cache, rows[0], rows[1], rows[2], y_pm

    def _quick_learn(self, quick, X, prequential: bool, journal: list | None = None):
        """Learn a chunk that :meth:`_quick_chunk` accepted (just before: it leaves a
        current walk of the state in the cache), in a transaction.

        Returns the prequential scores when ``prequential`` (see
        :meth:`test_then_train`). ``journal``: see :meth:`_learn_one_row`.
        """
        cache, indptr, indices, data, y_pm = quick
        n = y_pm.shape[0]
        if n == 1 and cache.params is not None and (self._kernel_prequential or not prequential):
            label = float(y_pm[0])
            if indptr is None:
                one = self._one_row_context(cache, True, 0)
                loaded = one is not None and one.load_dense(data[0], label)
            else:
                one = self._one_row_context(cache, False, int(indptr[1]))
                loaded = one is not None and one.load_sparse(indptr, indices, data, label)
            if loaded:
                return self._learn_one_row(cache, one, prequential, journal)
        flat = cache.flat  # current: walked or checked by _quick_chunk
        calibrate = self._kernel_prequential
        learns = calibrate or not prequential  # one kernel call for the chunk
        scores = np.empty(n) if calibrate or prequential else None
        chunk = Chunk(
            indptr, indices, data, y_pm, self.n_features_in_, scores if calibrate else NONE
        )
        rows = self._fast_rows(chunk) if learns and cache.by_rows else None
        plan = self._fast_plan(cache, chunk, rows, one_row=n == 1 and cache.params is not None)
        saved = flat.save(plan, rows)
        if journal is not None:
            journal.append((flat, saved))
        try:
            if learns:
                # _learn_chunk for an online learner, inlined (one call per example)
                try:
                    self._update(chunk)
                except _KERNEL_ERRORS as error:
                    raise self._kernel_error(chunk, error) from error
                before = self.n_samples_seen_
                self.n_samples_seen_ = before + n
                if calibrate and not self._kernel_calibrates:
                    _calibration.update(self.calibration_, scores, y_pm, NONE)
                if not (flat.current(self) and flat.all_finite(plan, rows)):
                    self._check_finite(chunk, before)
            else:  # no prequential kernel: score and learn row by row
                width = chunk.n_features
                for i in range(n):
                    row = X[i : i + 1]
                    scores[i] = self._raw_scores(row)[0]
                    row_ = row_chunk(indptr, indices, data, y_pm, width, i)
                    self._learn_chunk(row_, row, flat, plan)
        except BaseException:
            flat.restore(saved)
            raise
        return scores

    def _fast_rows(self, chunk: Chunk) -> np.ndarray | None:
        """The rows the fast path saves and checks of the arrays ``chunk`` writes only
        in its rows (:meth:`_row_written_state`, for a learner that logs rows):
        :meth:`_chunk_rows`, or None (every array whole) when the chunk names more rows
        than half its features (a copy by rows would cost more than a whole one)."""
        rows = self._chunk_rows(chunk)
        return rows if 2 * rows.shape[0] <= chunk.n_features else None

    def _fast_plan(
        self,
        cache: FastCache,
        chunk: Chunk,
        rows: np.ndarray | None,
        one_row: bool = False,
        positive: bool | None = None,
    ):
        """The fast path's plan for ``chunk``: leave out :meth:`_read_only_state`, and,
        when ``rows`` are given, handle by those rows :meth:`_row_written_state`.

        The plan of a ``one_row`` chunk (a call of one example, with parameters kept by
        identity) is kept in the cache per class, when it does not depend on the rows
        (``rows`` None, or :attr:`_row_written_by_class`). ``positive``: whether its
        example is positive, when the caller knows it as a Python bool (the one-row
        path; a key of numpy values costs more to make and to hash)."""
        keep = one_row and (rows is None or self._row_written_by_class)
        plan = key = None
        if keep:
            if positive is None:
                positive = bool(chunk.y[0] > 0.0)
            key = (positive, rows is None, self._plan_variant(chunk))
            plan = cache.plans.get(key)
        if plan is None:
            by_rows = () if rows is None else self._row_written_state(chunk)
            plan = cache.flat.plan(self._read_only_state(chunk.y, chunk), by_rows)
            if keep:
                cache.plans[key] = plan
        return plan

    @staticmethod
    def _chunk_rows(chunk: Chunk) -> np.ndarray:
        """The features a validated chunk names (int64): its CSR indices (in their
        order, repeated across rows), or, for dense rows read in place, the columns
        that hold a non-zero in some row (sorted)."""
        if chunk.indices is not None:
            return chunk.indices[chunk.indptr[0] : chunk.indptr[-1]]
        return nonzero_columns(chunk.data)

    @staticmethod
    def _chunk_rows_by_class(chunk: Chunk) -> tuple[np.ndarray, np.ndarray]:
        """The distinct features (sorted) that the chunk's negative examples name, and
        those its positive examples name (as :meth:`_chunk_rows`)."""
        positive = chunk.y > 0
        if chunk.indices is not None:
            return _state.unique_rows_by_class(
                chunk.indptr, chunk.indices, positive, chunk.n_features
            )
        return nonzero_columns(chunk.data[~positive]), nonzero_columns(chunk.data[positive])

    def _read_only_state(self, y_pm: np.ndarray, chunk: Chunk | None = None) -> tuple:
        """State that learning a chunk of labels ``y_pm`` (+1/-1) can not write.

        Arrays, components (all they hold) or random generators of the state that
        ``_update`` of such a chunk — and everything the base class does around it —
        leaves unchanged whatever happens, e.g. the summary of the class no label of
        the chunk belongs to, which OPAUC only reads. The fast path then neither copies
        nor restores nor checks them (:meth:`aucstream._state.FlatState.plan`), so the
        transaction of a one-row call costs what the row can change. A declaration
        that is wrong breaks the transactions: declare only what the kernel provably
        does not write, and test it (``tests/test_write_sets.py``). Called with the
        labels of a validated chunk (one or more rows); the fast path keeps the plan of a
        one-row chunk per class while the walk is current and the parameters are the
        same objects, so a declaration may depend on the state's objects, the
        parameters and the labels only, unless it also depends on the ``chunk`` itself
        (given by the fast path: its layout, the state's counts), and then
        :meth:`_plan_variant` says how. The default declares the random
        generator ``_rng`` of a learner whose update draws nothing from it
        (:attr:`_update_draws` False: saving a generator's state costs more than a
        one-row update), and nothing otherwise.
        """
        return () if self._update_draws else (self._rng,)

    def _plan_variant(self, chunk: Chunk):
        """What, besides its label, the declarations of a one-row ``chunk``
        (:meth:`_read_only_state` with the chunk, :meth:`_row_written_state`) depend on:
        a hashable value that keys the fast path's kept plans with the label. The
        default: nothing (None)."""
        return None

    #: ``_update`` (and the rest of a learning call) may draw from ``_rng``; learners
    #: that never do set this False, and the fast path then leaves the generator out of
    #: its transactions (:meth:`_read_only_state`).
    _update_draws: ClassVar[bool] = True

    def _row_logged_state(self) -> tuple:
        """Large state arrays, indexed by feature along axis 0, that only ``_update``
        writes (not the code around it, nor any other method that runs in the
        transaction of a ``partial_fit``-like call).

        Those calls do not copy them: :meth:`_learn_chunk` saves, before each kernel
        call, the rows that :meth:`_row_written_state` declares (the whole array for
        the others) into the call's undo log (:class:`aucstream._state.UndoLog`), and
        checks only those rows afterwards. For states of O(d tau) (OPAUC's sketches).
        A declaration that is wrong breaks the transactions: tests/test_undo_log.py
        checks each against a copy. The default declares nothing.
        """
        return ()

    def _undo_logged(self) -> bool:
        """Whether the arrays of :meth:`_row_logged_state` hold more than
        :data:`aucstream._state.SHADOW_LIMIT` bytes: then every call takes the
        transaction with an undo log (the fast path's walk keeps no shadow copies for
        them, and would copy them whole). Evaluated by the fast path when it walks the
        state."""
        logged = self._row_logged_state()
        return bool(logged) and sum(a.nbytes for a in logged) > _state.SHADOW_LIMIT

    def _bounded_state(self) -> tuple:
        """Those of :meth:`_row_logged_state` that a kernel call keeps finite when
        they were finite before it, whatever the checked input: the input checks
        (finite values, rows with a finite squared norm) bound every entry it can
        write there (the learner's docstring says why). :meth:`_learn_chunk` still
        saves their rows into the undo log but does not check them afterwards: at
        d = 10^6 that check read about 60 MB per chunk of 8192 examples, a fifth of
        OPAUC's time with the hashed sketch. The default declares nothing."""
        return ()

    def _row_written_state(self, chunk: Chunk) -> tuple:
        """The arrays of :meth:`_row_logged_state` that ``_update(chunk)`` writes only
        in the rows that the chunk names (:meth:`_chunk_rows`: ``chunk.indices``, or for
        dense rows read in place their non-zero columns), whatever happens (the others
        are saved whole). Called before the update, with a validated chunk."""
        return ()

    #: :meth:`_row_written_state` of a one-row chunk depends on its label, the
    #: parameters and the state's objects only (as :meth:`_read_only_state` does), so
    #: the fast path keeps it in its plan of a one-row call per class.
    _row_written_by_class: ClassVar[bool] = False

    @staticmethod
    def _chunk_class(y_pm: np.ndarray) -> int | None:
        """1 if every label of the chunk is +1, 0 if every one is -1, else None (for
        :meth:`_read_only_state`: the class all the chunk's examples join)."""
        if y_pm.shape[0] == 1:
            return 1 if y_pm[0] > 0 else 0
        positive = y_pm > 0
        if positive.all():
            return 1
        return None if positive.any() else 0

    #: The kernels write each row's decision value before learning it into
    #: ``chunk.pre_scores`` (when that array is not empty); otherwise
    #: :meth:`test_then_train` learns row by row.
    _kernel_prequential: ClassVar[bool] = False

    #: The kernel also fits the calibration (:func:`aucstream._calibration.step` on
    #: ``calibration_``, per example as it writes ``chunk.pre_scores``), so the base
    #: class does not (:func:`aucstream._calibration.update`) after it.
    _kernel_calibrates: ClassVar[bool] = False

    def _learn_prequential(self, X, y, weights: np.ndarray | None) -> np.ndarray:
        scores = np.empty(X.shape[0])
        if self._kernel_prequential:
            self._learn(X, y, pre_scores=scores, sample_weight=weights)
            return scores
        for i in range(X.shape[0]):
            row = X[i : i + 1]
            scores[i] = self._raw_scores(row)[0]
            self._learn(
                row, y[i : i + 1], sample_weight=None if weights is None else weights[i : i + 1]
            )
        return scores

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True
        return tags


class ClassWeightTotals:
    """Mixin of the learners that keep the weight learnt per class in the scalars
    ``weight_neg_`` and ``weight_pos_`` (the class priors of a weighted stream; see
    the ``class_totals`` helpers of :mod:`aucstream._kernels`).

    Those members arrived with sample weights (aucstream 0.2): a file of aucstream 0.1
    learnt every example with weight 1, so its totals are the class counts. A learner
    lists it before :class:`BaseStreamingAUC` and says where its counts are
    (:meth:`_class_counts`).
    """

    _state_added_later = (*BaseStreamingAUC._state_added_later, "weight_neg_", "weight_pos_")

    def _class_counts(self) -> np.ndarray:
        """Examples learnt per class, ``[negative, positive]``."""
        raise NotImplementedError

    def _upgrade_state(self, missing: set[str]) -> None:
        if "weight_pos_" in missing:  # a file of aucstream 0.1: every weight was 1
            upgrade_class_totals(self, self._class_counts())
