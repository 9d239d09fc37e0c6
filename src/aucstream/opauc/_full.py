"""OPAUC's engine for ``covariance="full"``: exact class covariances (G16 Alg. 1).

The summaries are :class:`aucstream.covariance.FullCovariance`: a class sum and a
d x d scatter each, O(d^2) memory. One compiled call learns a chunk
(:func:`~aucstream.opauc._kernels._opauc_chunk`, bound once to the chunk's buffers
for the one-row path). Dense rows are held back and added to a scatter 16 at a
time (:meth:`~aucstream.covariance.FullCovariance.fills_pending`), so a chunk of
dense rows of one class either writes its class's scatter whole (it fills the
held-back rows, :data:`FILLED`) or leaves it untouched (:data:`UNTOUCHED`): the
two plans of :meth:`FullEngine.plan_variant`. Sparse rows write the rows of their
features only.
"""

from __future__ import annotations

import importlib
from dataclasses import replace

import numpy as np

from .._chunks import Chunk
from .._kernels import Rows, bound_call, jit, rows_of
from .._kernels._packed import f64, f64_2d, i64, ints_at, packed_call, read_only, real
from .._runtime._entry import (
    DIVERGED,
    NOT_COUNTED,
    RAN_OUT,
    SAME,
    begin_dict,
    count_then_finish,
    fused_arguments,
)
from .._state import declare_upper_cells
from ..covariance import FullArrays
from . import _kernels
from ._engine import FILLED, UNTOUCHED, ExplicitEngine

#: The package, whose namespace holds the kernel this engine binds (looked up at
#: each binding: the one place to instrument it).
_PACKAGE = importlib.import_module(__package__)


#: The layout :func:`_full_packed` reads (:func:`aucstream._kernels._packed.pack` of
#: :func:`~aucstream.opauc._kernels._opauc_chunk`'s arguments with the summaries'
#: :class:`~aucstream.covariance.FullArrays` and CSR rows).
_PACKED = "f1 i1 f1 f1 f2 f2 f1 i1 i1 f1 f1 f2 f2 f1 i1 i1r i1r f1r f1 f1 f1 d d f1 i1 f1 d f1"


@jit(inline="always")
def _summary(a, i):
    """The :class:`~aucstream.covariance.FullArrays` packed at position ``i`` (16 values)."""
    return FullArrays(
        i64(a, i), f64(a, i + 2), f64(a, i + 4), f64_2d(a, i + 6), f64_2d(a, i + 9),
        f64(a, i + 12), i64(a, i + 14),
    )  # fmt: skip


@jit
def _full_packed(at, start):
    """:func:`~aucstream.opauc._kernels._opauc_chunk` of its arguments packed at address
    ``at`` (layout :data:`_PACKED`: then its work vector, bound once, not allocated per
    call: :func:`~aucstream.opauc._kernels._opauc_rows`) from row ``start``: the
    one-row path's call, which unboxes two integers (:mod:`aucstream._kernels._packed`)."""
    a = ints_at(at, 57)
    rows = Rows(read_only(i64(a, 34)), read_only(i64(a, 36)), read_only(f64(a, 38)), f64(a, 40))
    return _kernels._opauc_rows(
        f64(a, 0), (_summary(a, 2), _summary(a, 18)), rows, f64(a, 42), f64(a, 44),
        real(a, 46), real(a, 47), f64(a, 48), i64(a, 50), f64(a, 52), real(a, 54),
        f64(a, 55), start,
    )  # fmt: skip


@jit
def _begin_then_learn(block, where):
    """The per-example entry's load and save of the dict at address ``where``
    (:func:`aucstream._runtime._entry.begin_dict`, its block at ``at``), then, the row
    taken, the one-row kernel (:func:`_full_packed` of the packing at ``kernel``) and
    the count and the checks (:func:`aucstream._runtime._entry.count_then_finish`,
    its block at ``finish``, the count's name at ``name``): one compiled call per
    example, whose block at ``block`` holds these addresses and the label
    (:func:`aucstream._runtime._entry.fused_arguments`). What ``begin_dict`` returns,
    or ``RAN_OUT`` (the kernel learnt less than the row), ``DIVERGED`` (the state is
    no longer finite; the count was set) or ``NOT_COUNTED`` (learnt; the caller
    counts and checks); the caller puts the state back after the first two."""
    at, kernel, finish, name, label, k = fused_arguments(block, where)
    got = begin_dict(at, label, where, k)
    if got < 0:
        return got
    # (from row np.int64(0), not 0: a literal 0 would compile _full_packed and the
    # kernel again, for the literal's type, beside the chunk path's int64)
    if _full_packed(kernel, np.int64(0)) != 1:
        return RAN_OUT
    done = count_then_finish(finish, name, got - SAME if got >= SAME else got)
    if done < 0:
        return NOT_COUNTED
    return got if done else DIVERGED


class FullEngine(ExplicitEngine):
    """Exact summaries: dense rows read in place, rows written by class."""

    tags = replace(ExplicitEngine.tags, dense_kernels=True, row_written_by_class=True)

    def low_memory_hint(self, learner) -> str:
        return (
            'covariance="full" keeps two exact d x d scatter matrices (O(d^2) memory); '
            'for many features use a sketch in O(d * sketch_size): covariance="fd", '
            '"randomized", "hash" or "sparse"'
            + ('; dtype="float32" halves them' if learner.dtype != "float32" else "")
        )

    def update(self, learner, chunk: Chunk) -> None:
        learner._bind_update(chunk)(learner)

    def bind_update(self, learner, chunk: Chunk, reuse: bool = False):
        """The kernel's call with its arguments made once (the exact summaries always
        have room: one kernel call learns the chunk)."""
        args = (
            learner.w_,
            self.classes(learner),
            rows_of(chunk),
            chunk.pre_scores,
            chunk.sample_weight,
            float(learner.eta),
            float(learner.lam),
            learner.calibration_,
            learner.forget_,
            self.column_scale(learner),
            self.half_life(learner),
        )
        kernel = packed = None
        if reuse and _PACKAGE._opauc_chunk is _kernels._opauc_chunk:  # (not instrumented)
            # a call made many times (the one-row path): its arguments packed, when
            # they fit the layout of the packed call (CSR rows), with a work vector of
            # its own (held by the call)
            work = np.empty(learner.w_.shape[0])
            kernel = packed = packed_call(_full_packed, _PACKED, *args, work, late=(0,))
        if kernel is None:
            kernel = bound_call(_PACKAGE._opauc_chunk, *args, reuse=reuse, late=(0,))
        n = chunk.n_samples
        run = self.stepper(learner, kernel, n) if learner.half_life is not None else kernel

        def update(learner) -> None:
            if run(0) != n:
                raise RuntimeError("OPAUC's full covariance ran out of room")

        if packed is not None and run is packed and n == 1:
            # the packed one-row call: the per-example entry may run it in its own
            # compiled load-and-save of a dict row (``update.fused``: the function
            # and the packing's address)
            update.fused = (_begin_then_learn, packed.args[0])  # type: ignore[attr-defined]
        return update

    # ------------------------------------------------------------- write sets
    def read_only_state(self, learner, y_pm: np.ndarray, chunk: Chunk | None = None) -> tuple:
        """:meth:`ExplicitEngine.read_only_state`, and for a ``chunk`` of sparse rows
        also the held-back dense rows of the summaries it declares none of
        (``pending_``, ``pending_weight_``, ``n_pending_``): a sparse row goes
        straight into the scatter's rows of its features and never touches them
        (:func:`aucstream.covariance._full._add_sparse`), so a one-row call neither
        copies nor checks a class's d x 16 held-back rows. With a chunk that may
        rescale the summaries (both written whole), the inherited answer alone."""
        found = super().read_only_state(learner, y_pm, chunk)
        if chunk is None or chunk.indices is None or self.rescale_due(learner, y_pm.shape[0]):
            return found
        c = learner._chunk_class(y_pm)
        return found + tuple(
            a
            for s in (learner.stats_ if c is None else (learner.stats_[c],))
            for a in (s.pending_, s.pending_weight_, s.n_pending_)
        )

    def row_logged_state(self, learner) -> tuple:
        """The class sums and scatters (:meth:`FullCovariance.row_state`: O(d^2),
        written in the rows of the examples' features only). The scatters are declared
        written, when named by rows, only in the cells of their upper triangle whose
        row and column are both named (:func:`aucstream._state.declare_upper_cells`):
        a sparse row of k stored indices writes k (k + 1) / 2 cells
        (:func:`aucstream.covariance._full._add_sparse`), where its rows hold k d, and
        a dense row that does not fill its class's held-back rows writes none (one
        that does is declared whole: :meth:`row_written_state`)."""
        stats = learner.__dict__.get("stats_")
        if not stats:
            return ()
        declare_upper_cells(stats[0].scatter_, stats[1].scatter_)
        return (*stats[0].row_state(), *stats[1].row_state())

    def row_written_state(self, learner, chunk: Chunk) -> tuple:
        """The class sums, and the scatters, but for dense rows only those that the
        chunk's rows can not make full (:meth:`FullCovariance.fills_pending`: a
        scatter takes held-back rows whole)."""
        if self.rescale_due(learner, chunk.n_samples):
            return ()  # (a rescale writes the summaries whole)
        if chunk.indices is not None:
            return self.row_logged_state(learner)
        filled = self.filled_scatters(learner, chunk)
        return tuple(
            a
            for s, fills in zip(learner.stats_, filled)
            for a in ((s.sum_,) if fills else s.row_state())
        )

    @staticmethod
    def filled_scatters(learner, chunk: Chunk) -> tuple[bool, bool]:
        """For a chunk of dense rows: whether the chunk may fill each class's
        held-back rows (and so write its scatter whole)."""
        pos = int(np.count_nonzero(chunk.y > 0))
        counts = (chunk.n_samples - pos, pos)
        return tuple(s.fills_pending(n) for s, n in zip(learner.stats_, counts))

    def plan_variant(self, learner, chunk: Chunk | None):
        """:meth:`ExplicitEngine.plan_variant`, at once for a chunk of sparse rows
        without forgetting (0: :meth:`layout_variant`'s answer; asked per example)."""
        if chunk is not None and chunk.indices is not None and learner.half_life is None:
            return 0
        return super().plan_variant(learner, chunk)

    def one_row_variant(self, learner, dense: bool) -> tuple | None:
        """:meth:`plan_variant` of every one-row chunk of a layout, when it is known in
        advance (``(0,)``: sparse rows without forgetting), else None (asked per
        example); the per-example entry then asks no variant at each call
        (``aucstream._runtime._entry._fixed_variant``)."""
        return (0,) if not dense and learner.half_life is None else None

    def layout_variant(self, learner, chunk: Chunk | None) -> int:
        """With a ``chunk`` of dense rows: whether it fills its class's held-back rows
        (:data:`FILLED`: the scatter is written whole) or not (:data:`UNTOUCHED`: not
        written); otherwise 0."""
        if chunk is None or chunk.indices is not None:
            return 0
        y = chunk.y
        if y.shape[0] == 1:  # (a one-example call: the quick way)
            c = 1 if y[0] > 0.0 else 0
            return FILLED if learner.stats_[c].fills_pending(1) else UNTOUCHED
        c = learner._chunk_class(y)
        if c is None:
            return 0
        return FILLED if self.filled_scatters(learner, chunk)[c] else UNTOUCHED
