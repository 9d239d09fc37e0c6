"""The learning runtime behind every aucstream learner.

:class:`aucstream._base.BaseStreamingAUC` is the public contract (``fit``,
``partial_fit``, ``test_then_train``, ``learn_one``, scoring, ``merge``); it is built
from four mixins, read in this order:

- :class:`~aucstream._runtime._learning.LearningStep` — input validation, the one
  learning step (a chunk, the learner's compiled ``_update``, the calibration, the
  finiteness check) and its transaction;
- :class:`~aucstream._runtime._declarations.StateDeclarations` — the runtime's questions
  about a learner's state, answered from what it declares once (its ``_state_spec``, a
  :class:`~aucstream._runtime._declarations.StateSpec`) so that a transaction copies
  only what a call can write;
- :class:`~aucstream._runtime._small_calls.SmallCalls` — the fast path of calls that
  learn or score a few examples, and behind it, for a learner seen before,
  :class:`~aucstream._runtime._entry.OneStep`: the per-example entry of ``learn_one``
  and one-row ``partial_fit`` (three compiled calls: check, load and save; the bound
  update; the finiteness check);
- :class:`~aucstream._runtime._merging.Merging` — ``merge``, after
  :func:`~aucstream._runtime._merging.check_mergeable`.

A learner that holds others (:class:`~aucstream._runtime._declarations.HoldsLearners`:
a pipeline, a search) and an integration (``aucstream.dask``, ``aucstream.river``, the
evaluation) use only the public methods of the learners they hold
(``tests/test_meta_public.py``): ``test_then_train`` learns a chunk prequentially, with
the fast path of small calls inside it (a holder that undoes its held learners' calls
itself runs it inside :class:`~aucstream._runtime._undo.Journalled`);
``score_samples`` and ``offset_`` are the scores before and the shift of the
calibration (``decision_function`` is their difference); ``coef_``, ``decision_one``,
``predict_proba_one`` and ``state_nbytes`` as documented. What else they need of a
learner, the runtime's functions do: ``validate_params``, ``check_budget``.

What a learner tells the runtime about itself is one frozen object,
:class:`~aucstream._runtime._tags.LearnerTags` (the learner's ``_tags``). Below them:
:mod:`aucstream._chunks` (the one layout kernels read, and the input checks),
:mod:`aucstream._state` (the state as data: copies, restores, checks; its undo logs,
which save only the rows a kernel call writes, are :mod:`aucstream._runtime._undo`),
:mod:`aucstream._fastpath` (what the fast path keeps between calls) and
:mod:`aucstream._kernels` (the compile policy and the shared compiled pieces).
"""

from ._declarations import DROP, ClassWeightTotals, HoldsLearners, StateDeclarations, StateSpec
from ._learning import (
    _NOT_TAKEN,
    Journalled,
    LearningStep,
    check_budget,
    journalled_transaction,
    journals_by_log,
    journals_calls,
    make_rng,
    validate_params,
)
from ._merging import Merging, check_mergeable
from ._small_calls import SmallCalls
from ._tags import LearnerTags
from ._undo import settle

__all__ = [
    "DROP",
    "check_budget",
    "check_mergeable",
    "ClassWeightTotals",
    "HoldsLearners",
    "Journalled",
    "journalled_transaction",
    "journals_by_log",
    "journals_calls",
    "LearnerTags",
    "LearningStep",
    "Merging",
    "SmallCalls",
    "StateDeclarations",
    "StateSpec",
    "make_rng",
    "settle",
    "validate_params",
    "_NOT_TAKEN",
]
