"""What a learner declares about its state, once, for the transactions of the fast path.

A learning call must change nothing when it raises. The general transaction copies the
whole state (:func:`aucstream._state.transaction`); a learner's declaration,
:class:`StateSpec` (its ``_state_spec``), lets the runtime copy, restore and check only
what a call can write: state a chunk can not write (``read_only``), and large arrays
indexed by feature that a call writes only in the rows its examples name (``logged``,
``by_rows``), some of which it keeps bounded (``bounded``); with the state's size
(``nbytes``), for the memory budget, and which of them the learner's kernel checks
as it writes them (``checked``). :class:`StateDeclarations` reads the declaration
for the rest of the runtime (``_row_logged_state``, ``_read_only_state`` and so on: the
runtime's questions, which a learner does not override). A declaration that is wrong
breaks the transactions: ``tests/test_write_sets.py`` and ``tests/test_undo_log.py``
check each learner's declarations against copies.

Model files written before a member of the state existed are completed from a
declared table too (``_upgrades``, read by :meth:`StateDeclarations._upgrade_state`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import clone

from .. import _state
from .._chunks import (
    Chunk,
    nonzero_columns,
)
from .._kernels import upgrade_class_totals
from .._rng import make_rng
from ._host import LearnerHost

__all__ = ["HoldsLearners", "StateDeclarations", "StateSpec"]

_Learner = TypeVar("_Learner", bound="StateDeclarations")

#: Arrays of the state: attribute names, or a function of the learner giving them.
_Arrays = tuple[str, ...] | Callable[[Any], tuple]


@dataclass(frozen=True)
class StateSpec:
    """A learner's declaration of its state (its ``_state_spec``): which arrays a call
    writes by rows, which it keeps bounded, which it can not write, and how large the
    state is. Every field has the default of a learner that declares nothing (the
    whole state copied by each call's transaction).

    A learner declares ``_state_spec = StateSpec(...)``; a learner whose declaration
    depends on its parameters (OPAUC's covariance kind) makes ``_state_spec`` a
    property that returns the one of its parameters (as ``_tags``). The functions
    take the learner first; the runtime asks them through the methods of
    :class:`StateDeclarations`, whose docstrings give the contracts.

    Attributes
    ----------
    logged : tuple of str, or callable(learner) -> tuple, default=()
        Large state arrays, indexed by feature along axis 0, that only ``_update``
        writes (:meth:`StateDeclarations._row_logged_state`). Names are read from the
        learner; a state that lacks the first (not started) logs nothing.
    log_from : int, default=0
        Named ``logged`` arrays are logged from this many rows on (below, copying
        them whole costs less).
    by_rows : callable(learner, chunk) -> bool, optional
        Whether ``_update(chunk)`` writes every ``logged`` array only in the rows the
        chunk names (:meth:`StateDeclarations._row_written_state`); None: never. An
        update may write more once it has saved the arrays whole in the active undo
        log (``active_log(learner).cover(None)``) and then checks them whole for
        divergence itself (SOLAM: a fold that falls due inside a chunk).
    written : callable(learner, chunk) -> tuple, optional
        Those of ``logged`` that ``_update(chunk)`` writes only in the rows the chunk
        names, when they are not all or none (``by_rows`` is then ignored).
    rows : callable(learner, chunk, written) -> dict, optional
        ``{id(array): rows}`` of the arrays ``written`` names, when fewer than the
        chunk's features (:meth:`StateDeclarations._written_rows`).
    bounded : tuple of str, or callable(learner) -> tuple, default=()
        Those of ``logged`` that a kernel call keeps finite
        (:meth:`StateDeclarations._bounded_state`).
    checked : tuple of str, or callable(learner) -> tuple, default=()
        Those of ``logged`` whose every write ``_update`` checks as it makes it, and
        says so by returning True (:meth:`StateDeclarations._checked_state`).
    self_saved : callable(learner, chunk) -> tuple, optional
        Those of ``checked`` that ``_update(chunk)`` saves itself into the active
        undo log, each row before its kernel first writes it
        (:meth:`StateDeclarations._self_saved_state`); None: none.
    read_only : callable(learner, y_pm, chunk) -> tuple, optional
        State that learning a chunk of labels ``y_pm`` can not write
        (:meth:`StateDeclarations._read_only_state`); None: the random generator of a
        learner whose update draws nothing from it.
    variant : callable(learner, chunk) -> hashable, optional
        What, besides its label, the declarations of a one-row chunk depend on
        (:meth:`StateDeclarations._plan_variant`); None: nothing.
    nbytes : callable(learner, n_features) -> int, optional
        Bytes of the state ``_init_state`` would allocate for ``n_features`` columns,
        from the parameters alone (:meth:`StateDeclarations.state_nbytes`); None: a
        state whose size is a polynomial of degree at most 2 in ``n_features``,
        measured (:func:`measured_nbytes`).
    memory_hint : str or callable(learner) -> str, default=""
        What to suggest when the state does not fit the memory budget.
    weights : callable(learner, out) -> (fill, names), optional
        The learner's weights bound to ``out`` (:meth:`SmallCalls._bind_coef
        <aucstream._runtime._small_calls.SmallCalls._bind_coef>` gives the contract);
        None: a scored dict row reads ``_coef()`` and ``_intercept()`` after each
        learning call.
    """

    logged: _Arrays = ()
    log_from: int = 0
    by_rows: Callable[[Any, Chunk], bool] | None = None
    written: Callable[[Any, Chunk], tuple] | None = None
    rows: Callable[[Any, Chunk, tuple], dict] | None = None
    bounded: _Arrays = ()
    checked: _Arrays = ()
    self_saved: Callable[[Any, Chunk], tuple] | None = None
    read_only: Callable[[Any, np.ndarray, Chunk | None], tuple] | None = None
    variant: Callable[[Any, Chunk], Hashable] | None = None
    nbytes: Callable[[Any, int], int] | None = None
    memory_hint: str | Callable[[Any], str] = ""
    weights: Callable[[Any, np.ndarray], tuple] | None = None


def _arrays(learner, declared: _Arrays) -> tuple:
    """The arrays ``declared`` names (or gives) of ``learner``."""
    if callable(declared):
        return declared(learner)
    return tuple(getattr(learner, name) for name in declared)


def _declared_variant(learner, chunk: Chunk):
    """The ``_plan_variant`` of a learner that declares a ``variant`` (or whose
    declaration is a property): the fast path's per-example entry asks it for every
    example (:func:`aucstream._runtime._small_calls._override`)."""
    variant = learner._state_spec.variant
    return None if variant is None else variant(learner, chunk)


#: From this many features on, an undeclared state is measured for the memory budget
#: (:func:`measured_nbytes`): 16,384 columns of one float64 array are 128 KB, and the
#: measurement (three scratch states) would cost more than a small learner's start.
MEASURED_FROM = 1 << 14


def measured_nbytes(learner, n_features: int) -> int:
    """Bytes of the state ``learner._init_state(n_features)`` allocates, from the
    states it allocates for 1, 2 and 3 features in a scratch copy of its parameters:
    exact for every state whose size is a polynomial of degree at most 2 in the width
    (arrays of d, d x k or d x d entries), which an undeclared state is (a learner
    whose state grows otherwise declares ``StateSpec.nbytes``)."""
    sizes = []
    for width in (1, 2, 3):
        scratch = clone(learner)
        scratch._rng = make_rng(getattr(learner, "random_state", None))
        scratch._init_state(width)
        sizes.append(_state.nbytes_of(_state.state_items(scratch)))
    b1, b2, b3 = sizes
    square = (b3 - 2 * b2 + b1) // 2  # b(d) = b1 + linear (d - 1) + square (d - 1)^2
    linear = b2 - b1 - square
    d = int(n_features) - 1
    return b1 + linear * d + square * d * d


#: In an ``_upgrades`` table: remove the attribute (see ``StateDeclarations._upgrades``).
DROP = object()


class StateDeclarations(LearnerHost):
    """Mixin of :class:`aucstream._base.BaseStreamingAUC`: the runtime's questions
    about a learner's state, answered from its declaration (module docstring). A
    learner declares; it does not override these."""

    #: The learner's declaration of its state (:class:`StateSpec`).
    _state_spec: ClassVar[StateSpec] = StateSpec()

    #: State members added after format 1 was first written: a model file without
    #: them gets the fresh value, then :meth:`_upgrade_state` (e.g. an uncalibrated
    #: probability map for files of aucstream 0.1).
    _state_added_later: ClassVar[tuple[str, ...]] = (
        "calibration_",
        "score_window_",  # the operating-point windows (aucstream._calibration)
    )

    #: How a file that lacks a member of ``_state_added_later`` is completed, after
    #: that member got its fresh value: ``{member: {attribute: value}}``, a value
    #: being what the file's learner had (e.g. ``{"scale_": {"column_scale": None}}``:
    #: a file saved before ``column_scale`` learnt the rows as they came, and keeps
    #: doing so), or a function of the learner that computes it from the loaded state,
    #: or :data:`DROP`: the attribute is removed (a member that exists only with an
    #: option the file's learner did not have).
    _upgrades: ClassVar[Mapping[str, Mapping[str, Any]]] = {}

    def __init_subclass__(cls, **kwargs):
        """A class whose declaration has a ``variant`` (or is a property) gets the
        runtime's :func:`_declared_variant` as its ``_plan_variant``: the fast path's
        per-example entry asks the variant of such classes only. Checks the
        ``_upgrades`` table against ``_state_added_later``."""
        super().__init_subclass__(**kwargs)
        spec = cls.__dict__.get("_state_spec")
        declares = spec is not None and (not isinstance(spec, StateSpec) or spec.variant)
        if declares and "_plan_variant" not in cls.__dict__:
            cls._plan_variant = _declared_variant
        unknown = set(cls._upgrades) - set(cls._state_added_later)
        if unknown:
            raise TypeError(f"{cls.__name__}._upgrades names {sorted(unknown)}, not added later")

    def __setstate__(self, state: dict) -> None:
        """Unpickling: the state's read-only arrays become writeable copies
        (:func:`aucstream._state.writeable_state`)."""
        super().__setstate__(state)  # type: ignore[misc]
        _state.writeable_state(self)

    def _check_state(self) -> None:
        """Consistency checks of a loaded state that shapes cannot express.

        Called by :func:`aucstream.load_model` after every member has been checked
        against a freshly allocated state; raise ``ValueError`` naming the member.
        """

    def _upgrade_state(self, missing: set[str]) -> None:
        """Complete the ``missing`` members of an older file from the rest of the state.

        Called by :func:`aucstream.load_model` after the fresh values were set and
        before :meth:`_check_state`: applies the declared ``_upgrades`` of the
        missing members, in their order.
        """
        for member, values in self._upgrades.items():
            if member in missing:
                for name, value in values.items():
                    if value is DROP:
                        delattr(self, name)
                    else:
                        setattr(self, name, value(self) if callable(value) else value)

    def _read_only_state(self, y_pm: np.ndarray, chunk: Chunk | None = None) -> tuple:
        """State that learning a chunk of labels ``y_pm`` (+1/-1) can not write
        (the declaration's ``read_only``).

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
        :meth:`_plan_variant` says how. Undeclared: the random
        generator ``_rng`` of a learner whose update draws nothing from it
        (``_tags.update_draws`` False: saving a generator's state costs more than a
        one-row update), and nothing otherwise.
        """
        declared = self._state_spec.read_only
        if declared is not None:
            return declared(self, y_pm, chunk)
        return () if self._tags.update_draws else (self._rng,)

    def _plan_variant(self, chunk: Chunk):
        """What, besides its label, the declarations of a one-row ``chunk``
        (:meth:`_read_only_state` with the chunk, :meth:`_row_written_state`) depend on:
        a hashable value that keys the fast path's kept plans with the label (the
        declaration's ``variant``). Undeclared: nothing (None)."""
        return None

    def _row_logged_state(self) -> tuple:
        """Large state arrays, indexed by feature along axis 0, that only ``_update``
        writes (not the code around it, nor any other method that runs in the
        transaction of a ``partial_fit``-like call): the declaration's ``logged``.

        Those calls do not copy them: :meth:`_learn_chunk` saves, before each kernel
        call, the rows that :meth:`_row_written_state` declares (the whole array for
        the others) into the call's undo log (:class:`aucstream._state.UndoLog`), and
        checks only those rows afterwards. For states of O(d tau) (OPAUC's sketches).
        A declaration that is wrong breaks the transactions: tests/test_undo_log.py
        checks each against a copy. Undeclared: nothing.
        """
        spec = self._state_spec
        logged = spec.logged
        if not logged:
            return ()
        if callable(logged):
            return logged(self)
        first = self.__dict__.get(logged[0])
        if first is None or first.shape[0] < spec.log_from:
            return ()
        return tuple(getattr(self, name) for name in logged)

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
        they were finite before it, whatever the checked input (the declaration's
        ``bounded``): the input checks (finite values, rows with a finite squared
        norm) bound every entry it can write there (the learner's docstring says why).
        :meth:`_learn_chunk` still saves their rows into the undo log but does not
        check them afterwards: at d = 10^6 that check read about 60 MB per chunk of
        8192 examples, a fifth of OPAUC's time with the hashed sketch. Undeclared:
        nothing."""
        bounded = self._state_spec.bounded
        return _arrays(self, bounded) if bounded else ()

    def _checked_state(self) -> tuple:
        """Those of :meth:`_row_logged_state` whose every write the learner's kernel
        checks as it makes it (the declaration's ``checked``): an ``_update`` that
        returns True has written only finite values there, so :meth:`_learn_chunk`
        does not read them again when they were finite before the call (at d = 10^6
        FTRL-AUC's check read its 24 MB after every chunk); one that returns anything
        else has them checked whole, and a non-finite value is reported by name.
        Undeclared: nothing."""
        checked = self._state_spec.checked
        return _arrays(self, checked) if checked else ()

    def _self_saved_state(self, chunk: Chunk) -> tuple:
        """Those of :meth:`_checked_state` that ``_update(chunk)``, called inside a
        transaction with an undo log, saves itself (the declaration's
        ``self_saved``): its kernel copies each row's values into buffers before it
        first writes the row, and ``_update`` hands them to the log
        (:meth:`aucstream._runtime._undo.UndoLog.record`), so :meth:`_learn_chunk`
        copies nothing of them beforehand. The kernel reads those rows anyway: at
        d = 10^6 a chunk of 10,000 rows of 50 values names some 145,000 features,
        whose save is a fifth of the 24 MB of FTRL-AUC's state that a copy reads
        and writes. They must be ``checked`` (the kernel reports a non-finite
        write; nothing reads them again). Undeclared: nothing."""
        saved = self._state_spec.self_saved
        return saved(self, chunk) if saved is not None else ()

    def _row_written_state(self, chunk: Chunk) -> tuple:
        """The arrays of :meth:`_row_logged_state` that ``_update(chunk)`` writes only
        in the rows that the chunk names (:meth:`_chunk_rows`: ``chunk.indices``, or for
        dense rows read in place their non-zero columns), whatever happens (the others
        are saved whole): the declaration's ``written``, else all of them when its
        ``by_rows`` holds for the chunk. Called before the update, with a validated
        chunk."""
        spec = self._state_spec
        if spec.written is not None:
            return spec.written(self, chunk)
        if spec.by_rows is None:
            return ()
        logged = self._row_logged_state()
        return logged if logged and spec.by_rows(self, chunk) else ()

    def _written_rows(self, chunk: Chunk, written: tuple) -> dict:
        """``{id(array): rows}``: the rows (distinct, sorted) that ``_update(chunk)``
        may write of each array of :meth:`_row_written_state` (``written``). Undeclared
        (the declaration's ``rows``): the chunk's features (:meth:`_chunk_rows`) for
        every one; a learner may name fewer per array (OPAUC: a class's summary, the
        features of the chunk's examples of that class)."""
        declared = self._state_spec.rows
        if declared is not None:
            return declared(self, chunk, written)
        return self._features_written(chunk, written)

    @classmethod
    def _features_written(cls, chunk: Chunk, written: tuple) -> dict:
        """``{id(array): rows}``: the chunk's features (distinct, sorted) for every
        array of ``written`` (what :meth:`_written_rows` answers undeclared)."""
        rows = _state.unique_rows(cls._chunk_rows(chunk), chunk.n_features)
        return dict.fromkeys(map(id, written), rows)

    def _state_nbytes(self, n_features: int) -> int:
        """Bytes of the state ``_init_state`` would allocate (checked against the
        budget): the declaration's ``nbytes``; undeclared, what ``_init_state``
        allocates, measured (:func:`measured_nbytes`) from :data:`MEASURED_FROM`
        features on, 0 below (a state of a few arrays of O(n_features) floats)."""
        nbytes = self._state_spec.nbytes
        if nbytes is not None:
            return nbytes(self, n_features)
        return measured_nbytes(self, n_features) if n_features >= MEASURED_FROM else 0

    @property
    def _low_memory_hint(self) -> str:
        """What to suggest when the state does not fit the memory budget (the
        declaration's ``memory_hint``)."""
        hint = self._state_spec.memory_hint
        return hint(self) if callable(hint) else hint

    @staticmethod
    def _chunk_rows(chunk: Chunk) -> np.ndarray:
        """The features a validated chunk names (int64): its CSR indices (in their
        order, repeated across rows), or, for dense rows read in place, the columns
        that hold a non-zero in some row (sorted)."""
        if chunk.indices is not None and chunk.indptr is not None:
            return chunk.indices[chunk.indptr[0] : chunk.indptr[-1]]
        return nonzero_columns(chunk.data)

    @staticmethod
    def _chunk_rows_by_class(chunk: Chunk) -> tuple[np.ndarray, np.ndarray]:
        """The distinct features (sorted) that the chunk's negative examples name, and
        those its positive examples name (as :meth:`_chunk_rows`)."""
        positive = chunk.y > 0
        if chunk.indices is not None and chunk.indptr is not None:
            return _state.unique_rows_by_class(
                chunk.indptr, chunk.indices, positive, chunk.n_features
            )
        return nonzero_columns(chunk.data[~positive]), nonzero_columns(chunk.data[positive])

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

    @classmethod
    def _other_class(cls, y_pm: np.ndarray, held: Sequence) -> tuple:
        """``(held[1 - c],)`` when every example of the chunk joins class ``c``
        (:meth:`_chunk_class`; ``held``: what each class holds, the negative's first),
        else (): the part of the state of the class no example belongs to, for a
        ``read_only`` declaration whose kernel only reads it."""
        c = cls._chunk_class(y_pm)
        return () if c is None else (held[1 - c],)

    # ------------------------------------------------- for learners that hold others
    def start(self: _Learner, n_features: int, classes: ArrayLike) -> _Learner:
        """Begin a new stream of ``n_features`` columns and two ``classes``, learning
        nothing: validate the parameters and allocate the state, as ``fit`` and a first
        ``partial_fit`` do before their first example.

        A learner that holds others (:class:`~aucstream.StreamPipeline`,
        :class:`~aucstream.OnePassSearch`) starts them with it, so that its state has
        the same members before and after its first example. What was learnt before
        is discarded.

        Parameters
        ----------
        n_features : int
            The width of the stream.
        classes : array-like of shape (2,)
            Both labels (the larger is the positive class, ``classes_[1]``).

        Returns
        -------
        self

        Examples
        --------
        >>> from aucstream import SOLAM
        >>> model = SOLAM().start(3, [0, 1])
        >>> model.n_samples_seen_, model.coef_.shape
        (0, (1, 3))
        """
        if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)):
            raise TypeError(f"n_features must be an int, got {n_features!r}")
        if n_features < 1:
            raise ValueError(f"n_features must be >= 1, got {n_features}")
        self._validate_params()
        classes = self._check_two_classes(np.unique(np.asarray(classes)), "classes")
        with self._transaction():
            self._reset(classes, int(n_features))
            self.n_features_in_ = int(n_features)
            self.__dict__.pop("feature_names_in_", None)
        return self

    def state_nbytes(self, n_features: int) -> int:
        """Bytes of the state the learner allocates for ``n_features`` columns, from its
        parameters alone (what the memory budget, ``aucstream.set_config``, is checked
        against when the stream starts; below 16,384 features, 0 for a state of
        O(n_features) bytes, which is then small).

        Parameters
        ----------
        n_features : int
            The width of the stream.

        Returns
        -------
        int

        Examples
        --------
        >>> from aucstream import OPAUC
        >>> OPAUC().state_nbytes(1000) >= 2 * 8 * 1000**2  # two d x d class summaries
        True
        """
        return int(self._state_nbytes(n_features))


class ClassWeightTotals:
    """Mixin of the learners that keep the weight learnt per class in the scalars
    ``weight_neg_`` and ``weight_pos_`` (the class priors of a weighted stream; see
    the ``class_totals`` helpers of :mod:`aucstream._kernels`).

    Those members arrived with sample weights (aucstream 0.2): a file of aucstream 0.1
    learnt every example with weight 1, so its totals are the class counts. A learner
    lists it before :class:`BaseStreamingAUC` and says where its counts are
    (:meth:`_class_counts`).
    """

    _state_added_later: ClassVar[tuple[str, ...]] = (
        *StateDeclarations._state_added_later,
        "weight_neg_",
        "weight_pos_",
    )

    def _class_counts(self) -> np.ndarray:
        """Examples learnt per class, ``[negative, positive]``."""
        raise NotImplementedError

    def _upgrade_state(self, missing: set[str]) -> None:
        if "weight_pos_" in missing:  # a file of aucstream 0.1: every weight was 1
            upgrade_class_totals(self, self._class_counts())
        super()._upgrade_state(missing)  # type: ignore[misc]  # (the declared table)


class HoldsLearners:
    """Mixin of the learners that hold others (:class:`~aucstream.StreamPipeline`,
    :class:`~aucstream.OnePassSearch`), listed before :class:`BaseStreamingAUC`: they
    learn through the learners they hold, not through a compiled step of their own,
    and score as some of them do. Such a learner says how once each:

    - :meth:`_learn_rows` learns validated rows (what ``_learn`` and
      ``_learn_prequential`` of the base class do for a learner with a kernel);
    - :meth:`_scorer` gives the object whose ``_raw_scores``, ``_coef``,
      ``_intercept`` and ``_threshold`` are the learner's (a learner it holds, or a
      view of them: a pipeline's transformed rows, a search's ensemble);
    - :attr:`_fit_tells`, when ``fit`` must tell a learner it holds about the pass
      (its labels, before the first example: FSAUC's stage schedule, prior class
      weights), names the attribute that holds it.

    It calls only the public methods of the learners it holds; the runtime's hooks
    of theirs are the runtime's to call (here, and in the functions of
    :mod:`aucstream._runtime`).
    """

    #: The attribute holding the learner that ``fit`` tells about its pass, or None.
    _fit_tells: ClassVar[str | None] = None
    #: Inside a ``Journalled`` block its calls journal a walk of its whole state, the
    #: learners it holds included: a holder copies it instead
    #: (:func:`aucstream._runtime._learning.journals_calls`).
    _journals_calls: ClassVar[bool] = False

    def _begin_pass(self, y_pm: np.ndarray) -> None:
        if self._fit_tells is not None:
            getattr(self, self._fit_tells)._begin_pass(y_pm)

    def _learn_rows(self, X, y, weights: np.ndarray | None, prequential: bool):
        """Learn the validated rows ``(X, y)`` with their ``weights`` (or None), and
        count them in ``n_samples_seen_``; return their prequential scores (the
        learner's decision values before each row was learnt) when ``prequential``
        (else they may be None)."""
        raise NotImplementedError

    def _scorer(self) -> Any:
        """What scores for the learner now (module docstring of the class)."""
        raise NotImplementedError

    def _learn(self, X, y, pre_scores=None, sample_weight=None, arrays=None) -> None:
        scores = self._learn_rows(X, y, sample_weight, pre_scores is not None)
        if pre_scores is not None:
            pre_scores[:] = scores

    def _learn_prequential(
        self, X, y, weights: np.ndarray | None, arrays: tuple | None = None
    ) -> np.ndarray:
        return self._learn_rows(X, y, weights, True)

    def _raw_scores(self, X) -> np.ndarray:
        return self._scorer()._raw_scores(X)

    def _coef(self) -> np.ndarray:
        return self._scorer()._coef()

    def _intercept(self) -> float:
        return self._scorer()._intercept()

    def _threshold(self) -> float:
        return self._scorer()._threshold()
