"""Calls that learn or score a few examples: the fast path.

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
the parameters. Once a call of one layout has taken that path, the next ones take
the learner's per-example entry (:class:`aucstream._runtime._entry.OneStep`: the same
buffers, bound update and plans, kept with their compiled calls, so that a call is a
few attribute reads around a compiled check-load-save, the update and a compiled
finiteness check). Scoring one example (``decision_one``, ``predict_one``,
``predict_proba_one``) skips scikit-learn's validation the same way
(:meth:`BaseStreamingAUC._score_one`), with the scores of ``decision_function`` bit
for bit; a dict row goes further (:meth:`BaseStreamingAUC._dict_score`): one compiled
call checks that the learner's members are the objects they were when the weights
were read, reads the dict where it lies, and scores, checks and calibrates the row
(:class:`aucstream._dict_scoring.OneScore`). After a learning call the weights are read
again (a learner whose ``n_samples_seen_`` is another object has learnt: the compiled
check is not asked first), through the learner's bound weights when it has them
(:meth:`SmallCalls._bind_coef`: one compiled call writes ``_coef()`` and
``_intercept()`` into the scorer's buffer), so that a progressive loop
(``predict_proba_one``, then ``learn_one``) does not pay an averaged model's
``_coef()`` through numba's dispatcher at every example. The plans of a one-row call
are kept by label alone, and the learner's ``_plan_variant`` is not asked, when they
can not depend on it (a learner that logs no rows and declares nothing it only reads:
:func:`_declares_read_only`).
"""

from __future__ import annotations

import math
from operator import is_
from threading import get_ident
from typing import Any

import numpy as np

from .. import _calibration, _state
from .._chunks import (
    CSR_TYPES,
    Chunk,
    _values_ok,
    dict_row,
    dict_row_values,
    pack_dict_pairs,
    quick_rows,
    sparse_row_dot,
)
from .._config import _local, fast_path_on
from .._dict_scoring import LAST_SCORER, NO_CALIBRATION, STALE, OneScore
from .._fastpath import (
    FAST,
    LABEL_KINDS,
    NONE,
    READS_DICTS,
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
from .._labels import LabelCheck
from .._typing import Label, Row
from ._declarations import StateDeclarations, _declared_variant
from ._host import LearnerHost
from ._learning import _KERNEL_ERRORS, _NOT_TAKEN

#: The entries of :data:`aucstream._fastpath.FAST` by ``id`` (its ``get``, inline).
_BY_ID = FAST._data

__all__ = ["SmallCalls"]

#: The float64 dtype (rows of it take the one-row fast path).
_FLOAT64 = np.dtype(np.float64)


def _binds_its_update(cls: type) -> bool:
    """Whether the ``_bind_update`` of ``cls`` binds its ``_update``: it is defined in
    the class that defines ``_update`` or in a subclass of it (a subclass that
    overrides ``_update`` alone would otherwise get its parent's update bound)."""

    def owner(name: str) -> type:
        return next(c for c in cls.__mro__ if name in c.__dict__)

    return issubclass(owner("_bind_update"), owner("_update"))


def _declares_read_only(learner) -> bool:
    """Whether the learner's ``_read_only_state`` is its own or declared (it may then
    depend on ``_plan_variant``); the runtime's default depends on the tags alone."""
    default = StateDeclarations._read_only_state
    return type(learner)._read_only_state is not default or (
        learner._state_spec.read_only is not None
    )


def _override(cls: type, name: str, base: type):
    """``cls``'s function ``name`` when it is not ``base``'s (the default), else None."""
    found = getattr(cls, name)
    return None if found is getattr(base, name) else found


class SmallCalls(LearnerHost):
    """Mixin of :class:`aucstream._base.BaseStreamingAUC`: the fast path of small
    calls (module docstring)."""

    def _check_partial_fit(self) -> None:
        """Checks of a learner before any call that continues the stream.

        Called first by ``partial_fit``, ``test_then_train`` and ``learn_one`` (for
        instance to refuse an option that needs the whole training set in advance);
        raise ``ValueError``. The default does nothing.
        """

    def _learn_one_fast(self, x, y) -> bool:
        """``learn_one(x, y)`` through :meth:`_learn_row_fast` (which then makes the
        learner's per-example entry, :class:`aucstream._runtime._entry.OneStep`, that
        ``learn_one`` tries first): True when learnt, False (nothing touched) when the
        call must take the usual path."""
        dense = type(x) is np.ndarray
        if not dense and type(x) is not dict:
            return False
        if dense and x.ndim != 1:
            return False
        if self._learn_row_fast(x, None, None, y, False) is _NOT_TAKEN:
            return False
        self._make_step(dense)
        return True

    def _make_step(self, dense: bool) -> None:
        """Make the per-example entry of this layout after a one-row call took the fast
        path, unless the cache holds a valid one."""
        cache = FAST.get(self)
        one = None if cache is None else cache.plans.get(("one", dense))
        if one is None or one.update is None or not cache.pinned:
            return
        step = cache.dense_step if dense else cache.sparse_step
        if step is not None and step.one is one and step.flat is cache.flat:
            return
        cls = type(self)  # (functions, not bound methods: the cache must not hold self)
        variant = None  # (the plans do not depend on it: not asked, _fast_plan)
        if cache.variant_matters:
            variant = _override(cls, "_plan_variant", StateDeclarations)
            if variant is _declared_variant:  # (the declaration's: the parameters are
                variant = self._state_spec.variant  # pinned while the step serves)
        hook = _override(cls, "_check_partial_fit", SmallCalls)
        from ._entry import OneStep  # here: _entry reads aucstream._state, which imports us

        step = OneStep(self, cache, one, dense, variant, hook)
        if dense:
            cache.dense_step = step
        else:
            cache.sparse_step = step

    def _partial_fit_row_fast(self, X, y, prequential: bool, journal: list | None = None):
        """One-row ``partial_fit`` / ``test_then_train`` through :meth:`_learn_row_fast`
        (a 2-D float64 array of one row, or a CSR matrix of one row): what the call
        returns, or ``_NOT_TAKEN`` (nothing touched)."""
        if type(y) not in (list, tuple, np.ndarray) or len(y) != 1:
            return _NOT_TAKEN
        if type(X) is np.ndarray:
            if X.ndim != 2 or X.shape[0] != 1:
                return _NOT_TAKEN
            if prequential or journal is not None:
                return self._learn_row_fast(X[0], None, None, y[0], prequential, journal)
            cache = FAST.get(self)  # the per-example entry, as learn_one takes it
            step = None if cache is None else cache.dense_step
            if step is not None and step.learn(self, X[0], y[0]):
                return None
            learnt = self._learn_row_fast(X[0], None, None, y[0], False)
            if learnt is not _NOT_TAKEN:
                self._make_step(True)
            return learnt
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
        if cache is None or not cache.pinned or cache.flat is None or not fast_path_on():
            return _NOT_TAKEN
        if not cache.flat.current(self):
            return _NOT_TAKEN
        if prequential and not self._tags.kernel_prequential:
            return _NOT_TAKEN
        label = one_label(y, cache)
        if label is None:
            return _NOT_TAKEN
        if type(row) is dict:
            one = self._one_row_context(cache, False, len(row))
            if one is None or not one.load_dict(row, label):
                return _NOT_TAKEN
        elif indices is None:
            if row.dtype != _FLOAT64 or not row.flags.c_contiguous or not self._tags.dense_kernels:
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
            one = OneRow(self, dense, capacity, self._tags.kernel_prequential, binds)
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
            if self._tags.kernel_prequential:
                _calibration.learnt(self, one.scores, one.y, NONE)
            if not flat.all_finite(plan, rows):  # current: a bound update keeps it so
                self._check_finite(one.exact_chunk(), before)
        except BaseException:
            flat.restore(saved)
            raise
        return one.scores.copy() if prequential else None

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
            not self._tags.fast_path
            or not fast_path_on()
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
            cache.labels = LabelCheck((cache.py0, cache.py1))
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
            cache.variant_matters = cache.by_rows or _declares_read_only(self)
        if type(X) is tuple:  # the arrays of a dict row (learn_one)
            rows = X if quick_csr(X, width) else None
        else:
            rows = quick_rows(X, width, self._tags.dense_kernels)
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
        if (
            n == 1
            and cache.params is not None
            and (self._tags.kernel_prequential or not prequential)
        ):
            label = float(y_pm[0])
            if indptr is None:
                one = self._one_row_context(cache, True, 0)
                loaded = one is not None and one.load_dense(data[0], label)
            else:
                one = self._one_row_context(cache, False, int(indptr[1]))
                loaded = one is not None and one.load_sparse(indptr, indices, data, label)
            if one is not None and loaded:
                return self._learn_one_row(cache, one, prequential, journal)
        flat = cache.flat  # current: walked or checked by _quick_chunk
        calibrate = self._tags.kernel_prequential
        learns = calibrate or not prequential  # one kernel call for the chunk
        scores: Any = np.empty(n) if calibrate or prequential else None
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
                if calibrate:
                    _calibration.learnt(self, scores, y_pm, NONE)
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
        (``rows`` None, or ``_tags.row_written_by_class``). ``positive``: whether its
        example is positive, when the caller knows it as a Python bool (the one-row
        path; a key of numpy values costs more to make and to hash)."""
        keep = one_row and (rows is None or self._tags.row_written_by_class)
        plan: Any = None
        key: Any = None
        if keep:
            if positive is None:
                positive = bool(chunk.y[0] > 0.0)
            variant = self._plan_variant(chunk) if cache.variant_matters else None
            key = (positive, rows is None, variant)
            plan = cache.plans.get(key)
        if plan is None:
            by_rows = () if rows is None else self._row_written_state(chunk)
            plan = cache.flat.plan(self._read_only_state(chunk.y, chunk), by_rows)
            if keep:
                cache.plans[key] = plan
        return plan

    def predict_one(self, x: Row) -> Label:
        """The predicted label of one example (see ``predict``).

        Parameters
        ----------
        x : array-like of shape (n_features,) or dict
            The example (a dict maps feature indices to values, as in
            ``learn_one``).

        Returns
        -------
        label
            A value of ``classes_``.
        """
        if type(x) is dict:
            decision = self._dict_score(x, False)
            if decision is not None:
                return self.classes_[int(decision > 0)]
        score = self._score_one(x)
        if score is None:
            return self.predict(self._one_row(x))[0]
        return self.classes_[int(score - self._threshold() > 0)]

    def decision_one(self, x: Row) -> float:
        """The score of one example (see ``decision_function``).

        Parameters
        ----------
        x : array-like of shape (n_features,) or dict
            The example.

        Returns
        -------
        float
        """
        if type(x) is dict and _local.fast_path:
            # the thread's last scorer, when it is this learner's and the learner has
            # not learnt since (:meth:`_dict_proba`); else through its cache
            scorer = LAST_SCORER.ref()
            state = self.__dict__
            if scorer is not None and scorer.members is state:
                if state.get("n_samples_seen_") is scorer.seen:
                    value = scorer.calls[False](id(x))
                    if value < STALE:  # (not NaN nor STALE: else as _dict_score says)
                        return value
                decision = self._dict_score_with(x, False, scorer)
            else:
                decision = self._dict_score(x, False)
            if decision is not None:
                return decision
        score = self._score_one(x)
        if score is None:
            return float(self.decision_function(self._one_row(x))[0])
        return score - self._threshold()

    def score_one(self, x: Row) -> float:
        """The model's own score of one example (see ``score_samples``): what
        ``decision_one`` shifts by the calibrated threshold, and what a learner that
        holds others scores one example through.

        Parameters
        ----------
        x : array-like of shape (n_features,) or dict
            The example.

        Returns
        -------
        float

        Examples
        --------
        >>> import numpy as np
        >>> from aucstream import SOLAM
        >>> X = np.random.default_rng(0).normal(size=(500, 3)); y = X[:, 0] > 0
        >>> model = SOLAM().fit(X, y)
        >>> x = np.array([1.0, 0.0, 0.0])
        >>> bool(model.score_one(x) == model.score_samples(x.reshape(1, -1))[0])
        True
        """
        score = self._score_one(x)
        if score is None:
            learner: Any = self  # (the base class's score_samples validates in full)
            return float(learner.score_samples(self._one_row(x))[0])
        return score

    def predict_proba_one(self, x: Row) -> np.ndarray:
        """The class probabilities of one example (see ``predict_proba``).

        Parameters
        ----------
        x : array-like of shape (n_features,) or dict
            The example.

        Returns
        -------
        ndarray of shape (2,)
            ``P(classes_[0])`` and ``P(classes_[1])``.
        """
        # (the base class makes it available where the learner has a calibration)
        if type(x) is dict:
            # the first case of _dict_proba, inline: the thread's last scorer is this
            # learner's and the learner has not learnt since
            scorer = LAST_SCORER.ref()
            state = self.__dict__
            if _local.fast_path and scorer is not None and scorer.members is state:
                if state.get("n_samples_seen_") is scorer.seen:
                    p = scorer.calls[True](id(x))
                else:  # (it learnt since: the weights read again first)
                    p = scorer.refill_score(self, state, id(x))
                if p < STALE:  # (not NaN nor STALE; IN_OUT: written into ``out``)
                    return scorer.given if p >= 0.0 else scorer.out.copy()
            proba = self._dict_proba(x)
            if proba is not None:
                return proba
        state = self.__dict__
        if (
            not self._scores_by_coef  # (a learner that holds others: its scorer's own)
            and "n_samples_seen_" in state
            and "n_features_in_" in state
            and "feature_names_in_" not in state
            and fast_path_on()
        ):
            proba = self._held_one(x, "predict_proba_one")
            if proba is not None:
                return proba
        score = self._score_one(x)
        if score is None:  # (the usual path: the base class's predict_proba)
            learner: Any = self
            return learner.predict_proba(self._one_row(x))[0]
        p = _calibration.probability_one(self.calibration_, score)
        return np.array([1.0 - p, p])

    def _dict_proba(self, x: dict):
        """:meth:`_dict_score` of the probabilities (``predict_proba_one`` of a dict
        row), through the thread's last scorer
        (:data:`aucstream._dict_scoring.LAST_SCORER`) when it holds this learner's
        ``__dict__`` (only the learner's own scorer of this thread can): at once
        when the learner has not learnt since its weights were read (its
        ``n_samples_seen_`` the object kept; the compiled call checks the rest, its
        :data:`~aucstream._dict_scoring.STALE` or NaN for a refused row taking the
        usual way), else with the weights read again (:meth:`_dict_score_with`);
        other scorers through the learner's cache."""
        if not _local.fast_path:
            return None
        scorer = LAST_SCORER.ref()
        state = self.__dict__
        if scorer is None or scorer.members is not state:
            return self._dict_score(x, True)
        if state.get("n_samples_seen_") is scorer.seen:
            p = scorer.calls[True](id(x))
            if p < STALE:  # (not NaN nor STALE; IN_OUT: written into ``out``)
                return scorer.given if p >= 0.0 else scorer.out.copy()
        return self._dict_score_with(x, True, scorer)  # (it learnt since: read again)

    def _dict_score(self, x: dict, proba: bool):
        """The decision (a float) or, with ``proba``, the class probabilities (an
        array of two) of the dict row ``x``, through the cache's prepared scoring of
        dict rows (:class:`aucstream._dict_scoring.OneScore`: one compiled call that
        checks the kept weights are the learner's, reads and checks the row, takes the
        dot with the weights and applies the calibration; the weights read again when
        they are not), equal bit for bit to
        ``decision_function`` / ``predict_proba`` of the row; or None when the row or
        the learner must take the usual path (as :meth:`_score_one`)."""
        if not _local.fast_path:
            return None
        entry = _BY_ID.get(id(self))  # (FAST.get, inline: this runs on every call)
        cache: Any = entry[1] if entry is not None and entry[0]() is self else None
        return self._dict_score_with(
            x, proba, None if cache is None else cache.scorers.get(get_ident())
        )

    def _dict_score_with(self, x: dict, proba: bool, scorer: OneScore | None):
        """:meth:`_dict_score` with the thread's scorer of the learner's cache found
        (None: none)."""
        state = self.__dict__
        k = len(x)
        if READS_DICTS:  # the kept weights are checked in the compiled call
            value = STALE
            if (
                scorer is not None
                and scorer.calls is not None
                and state.get("n_samples_seen_") is scorer.seen  # (else it learnt since)
                and scorer.members is state
            ):
                value = scorer.calls[proba](id(x))
            if value == STALE:
                if scorer is None or not self._read_again(scorer, state):
                    scorer = self._prepare_scorer()
                    if scorer is None:
                        return None
                value = scorer.calls[proba](id(x))  # (its members: the learner's, read)
                if value == STALE:  # (not kept: the usual path)
                    return None
        else:
            # kept weights: the members are the objects they were (then so is
            # everything _prepare_scorer checked of them)
            if scorer is None or not (
                scorer.members is state
                and len(state) == len(scorer.values)
                and all(map(is_, state.values(), scorer.values))
            ):
                scorer = self._prepare_scorer()
                if scorer is None:
                    return None
            if k > scorer.width or not pack_dict_pairs(x, scorer.buffer):
                return None
            value = scorer.calls[proba](k)
        if value != value or scorer is None:  # refused (NaN): the usual path says why
            return None
        if READS_DICTS:  # (the next call of the thread tries it first)
            LAST_SCORER.ref = scorer.ref
        if proba:  # (the array handed out when written into, else a copy of ``out``)
            return scorer.given if READS_DICTS and value >= 0.0 else scorer.out.copy()
        return value

    def _read_again(self, scorer: OneScore, state: dict) -> bool:
        """Read the weights again into a scorer already prepared for this learner
        (:meth:`_prepare_scorer`) whose members changed since (it learnt): True when
        its ``__dict__``, width and calibration are still those it was prepared for
        and the weights were read; False, for :meth:`_prepare_scorer`, otherwise."""
        if (
            scorer.calls is None
            or scorer.members is not state
            or state.get("n_features_in_") != scorer.width
            or "n_samples_seen_" not in state
            or "feature_names_in_" in state
        ):
            return False
        calibration = state.get("calibration_") if self._has_calibration() else NO_CALIBRATION
        return calibration is scorer.calibration and scorer.read_weights(self)

    def _prepare_scorer(self) -> OneScore | None:
        """The cache's prepared scoring of dict rows with the learner's weights read
        (:meth:`aucstream._dict_scoring.OneScore.read_weights`) and its calibration bound,
        or None when the learner must score through the usual path: not fitted, with
        feature names, scores of its own (a pipeline), or weights it can not read."""
        state = self.__dict__
        width = state.get("n_features_in_")
        if (
            not self._scores_by_coef
            or width is None
            or "n_samples_seen_" not in state
            or "feature_names_in_" in state
        ):
            return None
        cache = FAST.get(self)
        if cache is None:
            cache = FAST[self] = FastCache()
        scorers, thread = cache.scorers, get_ident()  # (the buffers are the thread's)
        scorer = scorers.get(thread)
        if scorer is None or scorer.width != width:
            if len(scorers) >= 64:  # (threads that ended)
                scorers.clear()
            scorer = scorers[thread] = OneScore(width)
        calibration = state.get("calibration_") if self._has_calibration() else NO_CALIBRATION
        if calibration is not scorer.calibration:
            if not (
                type(calibration) is np.ndarray
                and calibration.shape in ((8,), (0,))
                and calibration.dtype == _FLOAT64
                and calibration.flags.c_contiguous
            ):
                scorer.forget()
                return None
            scorer.bind(calibration)
        if not scorer.read_weights(self):
            return None
        return scorer

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
        and no scikit-learn validation (``decision_one`` against ``decision_function``
        in ``benchmarks/bench_base.py``, reported in docs/benchmarks.md).
        """
        state = self.__dict__
        width = state.get("n_features_in_")
        if width is None or "n_samples_seen_" not in state or "feature_names_in_" in state:
            return None
        if not fast_path_on():
            return None
        if not self._scores_by_coef:  # scores of its own: a search's, a pipeline's
            return self._held_one(x, "score_one")
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

    def _held_one(self, x, method: str):
        """For a learner that holds others (its ``_scorer``: a member, or an object of
        its own such as a search's ensemble or a pipeline's transformed scores), the
        scorer's ``method`` (``score_one`` or ``predict_proba_one``) of ``x`` when ``x``
        is plainly valid (as for :meth:`_score_one`) and the scorer has the method, else
        None (the usual path). A member is called through its public methods."""
        scorer = getattr(self, "_scorer", None)
        one = None if scorer is None else getattr(scorer(), method, None)
        if one is None:
            return None
        width = self.__dict__["n_features_in_"]
        if type(x) is dict:
            row = dict_row_values(x)
            if row is None or not _values_ok(row[1]):
                return None
            idx = row[0]
            if idx.size and (idx.min() < 0 or idx.max() >= width):
                return None
        elif not (
            type(x) is np.ndarray
            and x.ndim == 1
            and x.shape == (width,)
            and x.dtype == _FLOAT64
            and x.flags.c_contiguous
            and _values_ok(x)
        ):
            return None
        return one(x)

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

    def _bind_coef(self, out: np.ndarray):
        """The learner's weights bound to ``out`` (float64, ``n_features_in_ + 1``):
        ``(fill, names)``, or None (the default: ``_coef()`` and ``_intercept()`` are
        called instead), as the learner's ``_state_spec.weights`` declares.

        ``fill(learner)`` writes ``_coef()`` into ``out[:-1]`` and ``_intercept()``
        into ``out[-1]``, bit for bit, and returns True (False, ``out`` unspecified,
        when the state does not fit it). Scoring a dict row
        (:meth:`_dict_score`) reads the weights again after every learning call, so
        a learner whose ``_coef`` costs more than a compiled call (an averaged model
        computed from its lazy sums) binds one compiled call instead. The function
        may hold the state arrays of the members ``names`` (it is bound again when one
        of them is no longer the learner's) and ``out``; it reads every other member
        and the parameters when called, and must not hold the learner (pass it).
        A function with ``keeps = True`` also takes ``fill(learner, keep, members)``:
        the same weights written by one compiled call that first checks the members
        are those bound and then keeps them in the scorer's block at ``keep``
        (:func:`aucstream._dict_scoring.weights_begin`, ``weights_end``; ``members``:
        the address of the learner's ``__dict__``), returning what ``weights_end``
        does (-2 when the members are not those bound).
        """
        bind = self._state_spec.weights
        return None if bind is None else bind(self, out)
