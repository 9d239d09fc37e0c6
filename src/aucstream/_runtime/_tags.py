"""What a learner tells the runtime about itself: one frozen object (as scikit-learn's
``Tags``), read by the learning step and the fast path.

A learner declares ``_tags = LearnerTags(...)`` (a subclass: ``dataclasses.replace`` of
its parent's); a learner whose answers depend on its parameters (OPAUC's covariance
kind) or on the learners it holds (``StreamPipeline``, ``OnePassSearch``) makes
``_tags`` a property that builds them. Every field has the default of a learner that
declares nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LearnerTags"]


@dataclass(frozen=True)
class LearnerTags:
    """The learner's answers to the runtime.

    Attributes
    ----------
    dense_kernels : bool, default=False
        The kernels read dense chunks in place (``chunk.indices is None``,
        ``chunk.data`` 2-D) as well as CSR chunks; otherwise dense input is converted
        to CSR arrays.
    kernel_prequential : bool, default=False
        The kernels write each row's decision value before learning it into
        ``chunk.pre_scores`` (when that array is not empty); otherwise
        ``test_then_train`` learns row by row, and there is no calibration.
    kernel_calibrates : bool, default=False
        The kernel also fits the calibration (:func:`aucstream._calibration.step` on
        ``calibration_``, per example as it writes ``chunk.pre_scores``), so the
        runtime does not (:func:`aucstream._calibration.update`) after it.
    sample_weight : bool, default=False
        The update takes example weights from ``chunk.sample_weight`` (else they are
        refused with an error).
    zero_weight_inert : bool, default=True
        With ``sample_weight``: an example of weight 0 is scored and changes nothing
        but ``n_samples_seen_`` (:func:`aucstream.checks.
        check_zero_weight_rows_change_nothing`; :func:`aucstream.evaluation.prequential`
        weaves a delay's labels into one call on it). A learner for which it does not
        hold says False (:class:`~aucstream.OnePassSearch` holds it: its race does not
        count an example of weight 0).
    update_draws : bool, default=True
        ``_update`` (and the rest of a learning call) may draw from ``_rng``; a learner
        that never does says False, and the fast path then leaves the generator out
        of its transactions.
    row_written_by_class : bool, default=False
        ``_row_written_state`` of a one-row chunk depends on its label, the parameters
        and the state's objects only (as ``_read_only_state`` does), so the fast path
        keeps it in its plan of a one-row call per class.
    fast_path : bool, default=True
        Small calls may skip the general validation (the fast path); meta-learners
        that learn through ``_learn`` say False.
    fit_chunk_size : int, default=8192
        Rows per kernel call in ``fit`` (bounds the temporary CSR copy of dense input).
    """

    dense_kernels: bool = False
    kernel_prequential: bool = False
    kernel_calibrates: bool = False
    sample_weight: bool = False
    zero_weight_inert: bool = True
    update_draws: bool = True
    row_written_by_class: bool = False
    fast_path: bool = True
    fit_chunk_size: int = 8192
