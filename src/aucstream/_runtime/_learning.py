"""The learning step: a validated chunk becomes one kernel call, in a transaction.

:class:`LearningStep` is the part of :class:`aucstream._base.BaseStreamingAUC` that
turns a call's input into a chunk (:mod:`aucstream._chunks`), runs the learner's
``_update`` on it inside a transaction (a call that raises changes nothing:
:mod:`aucstream._state`), fits the probability calibration on the prequential scores
and checks that the state stayed finite. Every learning call (``fit``, ``partial_fit``,
``test_then_train``, ``learn_one``) reaches the kernels through :meth:`LearningStep._learn`,
or, for small calls, through the fast path (:mod:`aucstream._runtime._small_calls`),
which runs the same ``_update`` with the same checks in fewer Python calls.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any, ClassVar

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, validate_data

from .. import _calibration, _state
from .._chunks import (
    CSR_TYPES,
    Chunk,
    _values_ok,
    check_magnitude,
    check_sparse_structure,
    plain_rows_and_arrays,
    plain_rows_for,
    to_chunk,
)
from .._config import fast_path_on, format_bytes, get_config
from .._fastpath import LABEL_KINDS, validate_params_once
from .._params import check_parameters
from .._rng import make_rng  # the one coercion of random_state (aucstream._rng)
from ._declarations import MEASURED_FROM
from ._host import LearnerHost
from ._undo import Journalled, journal_of, settle

__all__ = [
    "Journalled",
    "LearningStep",
    "check_budget",
    "journalled_transaction",
    "journals_by_log",
    "make_rng",
    "validate_params",
]

#: Arithmetic errors of a kernel, reported as a FloatingPointError naming the chunk.
_KERNEL_ERRORS = (ZeroDivisionError, OverflowError, FloatingPointError)


#: No row to check (:meth:`LearningStep._check_finite`'s rows of an array that can not
#: have become non-finite). Never written; not made read-only, which would compile the
#: row check a second time.
_NO_ROWS = np.zeros(0, dtype=np.int64)

#: What the one-row fast path returns when it does not take a call.
_NOT_TAKEN = object()


@contextmanager
def journalled_transaction(owner, held: tuple) -> Iterator[None]:
    """The transaction of a call to ``owner`` that copies its state but not the objects
    ``held`` (learners, an online scaler), which it calls inside
    :class:`~aucstream._runtime._undo.Journalled` blocks: their own transactions leave
    in the journal what undoes them, and a failure later in the call undoes them, last
    first, before ``owner``'s state is put back. So a rejected call changes nothing, as
    with a copy of everything, at the cost of what the held objects' calls save (the
    rows a chunk names, for a state above :data:`aucstream._state.SHADOW_LIMIT`):
    :class:`~aucstream.StreamPipeline`'s calls at 10^6 columns copied two states of
    24 MB each.

    Each object of ``held`` must journal every call that writes it (its class's
    ``_journals_calls``, :func:`journals_calls`), and be called once per block.
    """
    _state.check_writeable_state(owner)
    saved = _state.snapshot(owner, frozenset(map(id, held)))
    journal: list = []
    with ExitStack() as blocks:
        for obj in held:
            blocks.enter_context(Journalled(obj, journal))
        try:
            yield
        except BaseException:
            for walk, undo in reversed(journal):
                walk.restore(undo)
            _state.restore(owner, saved)
            raise
        settle(journal)


def journals_by_log(learner) -> bool:
    """Whether ``learner``'s calls inside a
    :class:`~aucstream._runtime._undo.Journalled` block journal undo logs
    (:class:`~aucstream._runtime._undo.LoggedCall`: a fitted learner whose row-logged
    arrays exceed :data:`aucstream._state.SHADOW_LIMIT`), which stay valid however
    many calls of it the block makes; a walk's entry stays valid only until its next
    call."""
    state = learner.__dict__
    return journals_calls(learner) and "n_features_in_" in state and learner._undo_logged()


def journals_calls(obj) -> bool:
    """Whether every call that writes ``obj``, made inside a
    :class:`~aucstream._runtime._undo.Journalled` block of it, journals what undoes it
    (its class's ``_journals_calls``): the learners with a compiled step of their own
    and the online scaler, not the learners that hold others."""
    return getattr(type(obj), "_journals_calls", False) is True


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


def _plain_input(learner, X, y) -> tuple | None:
    """``(X, y, arrays)``: ``X`` and ``y`` as scikit-learn's ``validate_data`` would
    return them, when ``X`` is plainly valid (:func:`aucstream._chunks.plain_rows`)
    and ``y`` a 1-D list or array of as many finite numbers or strings
    (:func:`_plain_labels`): what a learner learning through
    :meth:`BaseStreamingAUC._learn` (a pipeline, a search) checks on every call; and
    the CSR arrays the check made of a sparse ``X``
    (:func:`aucstream._chunks.plain_rows_and_arrays`), else None. None when not
    plain: the caller validates in full."""
    labels = _plain_labels(y)
    if labels is None:
        return None
    plain = plain_rows_for(learner, X)
    if plain is None or plain[0].shape[0] != labels.shape[0]:
        return None
    return plain[0], labels, plain[1]


def _plain_first_input(X, y) -> tuple | None:
    """:func:`_plain_input` for the call that sets the width (``fit``, a first
    ``partial_fit``), which takes it from ``X``: ``(X, y)`` when ``X`` is a C-contiguous
    float64 ndarray or a CSR matrix of at least one column and plainly valid rows, and ``y``
    plain labels that are not continuous (integers, bools, strings, or floats of
    integer value: what :func:`~sklearn.utils.multiclass.check_classification_targets`
    accepts of them). Else None: the caller validates in full, and raises what
    scikit-learn raises. Saves the cost of those two checks on a large chunk (the cost
    of each new learner's first call; ``benchmarks/bench_base.py`` compares the fast and
    the full path, reported in docs/benchmarks.md)."""
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
    plain = plain_rows_and_arrays(X, width) if width >= 1 else None
    if plain is None or plain[0].shape[0] != labels.shape[0]:
        return None
    return plain[0], labels, plain[1]


def _unknown_labels(y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Mask of the labels of ``y`` that are not in ``classes`` (two labels), as
    ``~np.isin(y, classes)``: by two comparisons where the dtypes compare as
    ``np.isin`` does (:data:`aucstream._fastpath.LABEL_KINDS`; ``np.isin`` has a fixed
    cost, its checks and its choice of method, that dominates a call of one label)."""
    if y.dtype.kind in LABEL_KINDS.get(classes.dtype.kind, "") and classes.shape == (2,):
        return (y != classes[0]) & (y != classes[1])
    return ~np.isin(y, classes)


def validate_params(learner) -> None:
    """Check ``learner``'s parameters as every learning call does first, touching no
    state: its declared constraints, then its cross-parameter rules (its
    ``_check_params``). Raises ``InvalidParameterError`` naming the parameter."""
    check_parameters(learner)
    learner._check_params()


def check_budget(learner, n_features: int) -> None:
    """Raise ``MemoryError`` when ``learner``'s state for ``n_features`` columns (and
    its copy while a call is in progress) would not fit the memory budget
    (``aucstream.set_config``), before anything is allocated: what a stream's start
    checks, for a caller that allocates the state elsewhere (``aucstream.dask``)."""
    need = learner.state_nbytes(n_features)
    budget = get_config()["memory_budget"]
    if 2 * need > budget:  # the state, and its copy while a call is in progress
        hint = learner._low_memory_hint
        if not hint and n_features >= MEASURED_FROM:  # (a state that grows with the width)
            hint = (
                "Fewer columns need less: hash the features into a smaller width, e.g. "
                "aucstream.preprocessing.FeatureHashing(n_features=2**20)."
            )
        raise MemoryError(
            f"{type(learner).__name__} needs {format_bytes(need)} for its state at "
            f"n_features={n_features}, above the memory budget of "
            f"{format_bytes(budget // 2)} (half of aucstream's memory_budget, which "
            "also holds a copy during each call; aucstream.set_config(memory_budget=...) "
            f"raises it). {hint}".rstrip()
        )


class LearningStep(LearnerHost):
    """Mixin of :class:`aucstream._base.BaseStreamingAUC`: validation, the learning
    step and its transaction (module docstring)."""

    #: Every call that writes the learner (``partial_fit``, ``test_then_train``,
    #: ``fit``) journals what undoes it inside a ``Journalled`` block
    #: (:func:`journals_calls`, :func:`journalled_transaction`); a subclass whose
    #: learning calls write outside :meth:`_stream` must say False.
    _journals_calls: ClassVar[bool] = True

    def _validate_params(self) -> None:
        """Declared constraints, then cross-parameter checks (no state touched)."""
        validate_params(self)

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

    def _validate_input(self, X, y, reset: bool) -> tuple[Any, np.ndarray, tuple | None]:
        """``(X, y, arrays)``: the checked rows and labels, and the CSR arrays of
        plainly valid sparse rows (:func:`_plain_input`; :func:`to_chunk` takes them)
        or None."""
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        if not fast_path_on():
            pass  # the full validation below, always
        elif not reset:
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
        return X, y, None

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
        check_budget(self, n_features)
        self.classes_ = classes
        self.n_samples_seen_ = 0
        self.calibration_ = _calibration.new_state()
        self.score_window_ = _calibration.new_window()
        self._rng = make_rng(getattr(self, "random_state", None))
        self._init_state(n_features)
        _state.mark_finite(self, self._row_logged_state())  # freshly allocated

    def _validate_weights(self, sample_weight, X) -> np.ndarray | None:
        if sample_weight is None:
            return None
        if not self._tags.sample_weight:
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
        arrays: tuple | None = None,
    ) -> None:
        y_pm = np.where(y == self.classes_[1], 1.0, -1.0)
        calibrate = self._tags.kernel_prequential and not self.is_batch
        if calibrate and pre_scores is None:
            pre_scores = np.empty(X.shape[0])
        chunk = to_chunk(
            X,
            y_pm,
            pre_scores=pre_scores,
            sample_weight=sample_weight,
            dense_in_place=self._tags.dense_kernels,
            arrays=arrays,
        )
        self._learn_chunk(chunk, X)

    def _learn_chunk(
        self, chunk: Chunk, X, flat: _state.FlatState | None = None, plan=None
    ) -> None:
        """One kernel call on a validated chunk, then the calibration (unless the kernel
        fits it, ``_tags.kernel_calibrates``) and the checks.

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
            checked = self._update(chunk)
        except _KERNEL_ERRORS as error:
            raise self._kernel_error(chunk, error) from error
        before = self.n_samples_seen_
        self.n_samples_seen_ += chunk.n_samples
        if self._tags.kernel_prequential and not self.is_batch:
            try:  # huge sample weights: an arithmetic error named, not a bare one
                _calibration.learnt(self, chunk.pre_scores, chunk.y, chunk.sample_weight)
            except _KERNEL_ERRORS as error:
                self.n_samples_seen_ = before  # the call's transaction restores the rest
                raise self._kernel_error(chunk, error) from error
        elif self.is_batch:
            scores = self._raw_scores(X)
            _calibration.fit_batch(self.calibration_, scores, chunk.y, chunk.sample_weight)
        if flat is None:  # a walk kept by a transaction around this call, if any
            flat = _state.kept_walk(self)
        if flat is not None and flat.current(self) and flat.all_finite(plan):
            return
        if checked is True:  # (the kernel checked its writes: _checked_state)
            rows = self._skip_checked(rows)
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
            own = self._self_saved_state(chunk)  # (saved by the update itself)
            cover = {**rows, **dict.fromkeys(map(id, own), _NO_ROWS)} if own else rows
            log.cover(cover, fresh=not self.n_samples_seen_)
        finite = _state.marked_finite(self, written)
        if not finite:
            return None
        bounded = frozenset(map(id, self._bounded_state()))
        return {id(a): _NO_ROWS if id(a) in bounded else rows[id(a)] for a in finite}

    def _skip_checked(self, rows: dict | None) -> dict | None:
        """``rows`` for :meth:`_check_finite` after an ``_update`` that checked its
        writes (:meth:`_checked_state`): no row to read of those arrays that were
        finite before the call."""
        finite = _state.marked_finite(self, self._checked_state())
        if not finite:
            return rows
        return {**(rows or {}), **dict.fromkeys(map(id, finite), _NO_ROWS)}

    def _kernel_error(self, chunk: Chunk, error: Exception) -> FloatingPointError:
        """The error that reports an arithmetic ``error`` raised by ``_update``."""
        return FloatingPointError(
            f"{type(self).__name__} failed on a chunk of {chunk.n_samples} examples after "
            f"{self.n_samples_seen_} ({type(error).__name__}: {error}); the chunk was not "
            "learnt. Scale the features or use a smaller step size"
            + ("" if chunk.sample_weight is None else ", or smaller sample weights")
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

    def _learn_prequential(
        self, X, y, weights: np.ndarray | None, arrays: tuple | None = None
    ) -> np.ndarray:
        scores = np.empty(X.shape[0])
        if self._tags.kernel_prequential:
            self._learn(X, y, pre_scores=scores, sample_weight=weights, arrays=arrays)
            return scores
        for i in range(X.shape[0]):
            row = X[i : i + 1]
            scores[i] = self._raw_scores(row)[0]
            self._learn(
                row, y[i : i + 1], sample_weight=None if weights is None else weights[i : i + 1]
            )
        return scores

    def _stream(self, X, y, classes, sample_weight, prequential: bool) -> np.ndarray | None:
        """``partial_fit`` / ``test_then_train``: the fast path, else the full validation.

        Returns the prequential scores when ``prequential``.
        """
        self._check_partial_fit()
        journal = journal_of(self)  # (Journalled)
        if classes is None and sample_weight is None:
            learnt = self._partial_fit_row_fast(X, y, prequential, journal)
            if learnt is not _NOT_TAKEN:
                return learnt
        quick = self._quick_chunk(X, y, classes, sample_weight)
        if quick is not None:
            return self._quick_learn(quick, X, prequential, journal)
        scores: list[np.ndarray] | None = [] if prequential else None
        if journal is None:
            transaction = self._transaction(X)
        elif journals_by_log(self):
            # the rows it writes kept in the journal, which undoes the call after it
            # succeeded (a walk would copy the whole state into new buffers)
            transaction = _state.transaction(self, self._row_logged_state(), journal)
        else:  # a transaction that the journal can undo after it succeeded
            transaction = _state.walked_transaction(self, journal=journal)
        with transaction:
            self._continue(X, y, classes, sample_weight, scores)
        return scores[0] if scores is not None else None

    def _continue(self, X, y, classes, sample_weight, scores: list | None) -> None:
        """partial_fit's body: checks, first-call set-up, then one learning step.

        The parameters are validated unless they are the very (immutable) objects
        validated last time (:func:`aucstream._fastpath.validate_params_once`).
        """
        validate_params_once(self)
        first = not hasattr(self, "classes_")
        X, y, arrays = self._validate_input(X, y, reset=first)
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
            self._learn(X, y, sample_weight=weights, arrays=arrays)
        else:
            scores.append(self._learn_prequential(X, y, weights, arrays))
