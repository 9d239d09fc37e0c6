"""OPAUC's engine for ``covariance="sparse"``: sparsified scatters (G16 Alg. 3).

The summaries are :class:`aucstream.covariance.SparsifiedCovariance`: the
:math:`d\\tau` largest entries of each class's scatter in a hash table. The kernel is
the exact kinds' (:func:`~aucstream.opauc._kernels._opauc_chunk`), run through
:func:`aucstream.covariance.run_reserving`: a summary that must make room for an
example's entries stops the kernel, reserves (replacing its arrays) and the kernel
resumes at that example. The arrays are small enough to be copied by a transaction,
so the engine declares no rows.
"""

from __future__ import annotations

import importlib

from .._chunks import Chunk
from .._kernels import rows_of
from ._engine import ExplicitEngine

#: The package, whose namespace holds the kernel and ``run_reserving`` this engine
#: calls (looked up at each call: the one place to instrument them).
_PACKAGE = importlib.import_module(__package__)


class SparseEngine(ExplicitEngine):
    """Sparsified summaries that make room while a chunk is learnt."""

    def update(self, learner, chunk: Chunk) -> None:
        rows = rows_of(chunk)
        pre, weights = chunk.pre_scores, chunk.sample_weight
        eta, lam, calibration = float(learner.eta), float(learner.lam), learner.calibration_
        kernel, half_life = _PACKAGE._opauc_sparse_chunk, self.half_life(learner)
        colscale = self.column_scale(learner)
        step = self.stepper(
            learner,
            lambda r: kernel(
                learner.w_,
                self.classes(learner),
                rows,
                pre,
                weights,
                eta,
                lam,
                calibration,
                learner.forget_,
                colscale,
                half_life,
                r,
            ),
            chunk.n_samples,
        )
        _PACKAGE.run_reserving(step, learner.stats_, chunk)
