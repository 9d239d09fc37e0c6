"""What the runtime's mixins take from the learner they are mixed into.

:class:`~aucstream._runtime._learning.LearningStep`,
:class:`~aucstream._runtime._declarations.StateDeclarations` and
:class:`~aucstream._runtime._small_calls.SmallCalls` are pieces of one class,
:class:`aucstream._base.BaseStreamingAUC`: each calls methods another piece (or the
learner) defines. :class:`LearnerHost` lists them in one place, for the reader and
for the type checker; at run time it is ``object`` and adds nothing to the method
resolution order. The first group is what a learner writes (CONTRIBUTING,
"Writing a learner"); the rest is what the pieces give one another.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

if TYPE_CHECKING:
    from .._chunks import Chunk
    from ._declarations import StateSpec
    from ._tags import LearnerTags

    class LearnerHost:
        """The learner as the runtime's mixins see it (type checking only)."""

        # -- what a learner declares and writes
        _tags: ClassVar[LearnerTags]
        _state_spec: ClassVar[StateSpec]
        is_batch: ClassVar[bool]
        _scores_by_coef: ClassVar[bool]
        _init_state: Callable[[int], None]
        _update: Callable[[Chunk], bool | None]
        _coef: Callable[[], np.ndarray]
        _intercept: Callable[[], float]
        _state_nbytes: Callable[[int], int]
        _check_params: Callable[[], None]
        _validate_params: Callable[[], None]
        _check_two_classes: Callable[..., np.ndarray]
        _transaction: Callable[..., Any]
        _reset: Callable[..., None]

        # -- the fitted state the runtime keeps for every learner
        classes_: np.ndarray
        n_features_in_: int
        n_samples_seen_: int
        calibration_: np.ndarray
        score_window_: np.ndarray
        _rng: np.random.Generator

        # -- what the pieces give one another
        _raw_scores: Callable[..., np.ndarray]
        _learn_chunk: Callable[..., Any]
        _check_finite: Callable[..., None]
        _kernel_error: Callable[..., FloatingPointError]
        _check_partial_fit: Callable[[], None]
        _partial_fit_row_fast: Callable[..., Any]
        _quick_chunk: Callable[..., Any]
        _quick_learn: Callable[..., Any]
        _read_only_state: Callable[..., tuple]
        _row_logged_state: Callable[[], tuple]
        _undo_logged: Callable[[], bool]
        _written_rows: Callable[..., dict]
        _row_written_state: Callable[..., tuple]
        _bounded_state: Callable[[], tuple]
        _checked_state: Callable[[], tuple]
        _self_saved_state: Callable[..., tuple]
        _plan_variant: Callable[..., Any]
        _chunk_rows: Callable[..., np.ndarray]
        _threshold: Callable[[], float]
        _has_calibration: Callable[[], bool]
        predict: Callable[..., np.ndarray]
        decision_function: Callable[..., np.ndarray]

else:  # at run time the mixins derive from object: nothing above exists
    LearnerHost = object

__all__ = ["LearnerHost"]
