r"""OPAUC's engine for ``covariance="fd"``: frequent directions (OPAUC_fd, G16 Alg. 2).

The implicit weights and re-basing of :class:`~aucstream.opauc._lowrank.LowRankEngine`,
with what a sketch that fills its columns one example at a time adds:

- the kernel stops when a class's sketch is full; the engine shrinks it
  (:meth:`FrequentDirectionsEngine.shrink`) and folds the shrunk class's terms
  :math:`Z_c p_c + \gamma_c s_c` into v first (its old Z is gone), so that w does not
  move, and updates the maintained products by the shrink's tau x m matrix M;
- the shrink's pass over the rows is deferred
  (:meth:`aucstream.covariance.FrequentDirectionsCovariance.shrink_deferred`): the
  chunk is learnt in windows that end where a sketch may next fill
  (:meth:`FrequentDirectionsEngine.window`), the rows a window reads brought up to
  date before it (:meth:`~aucstream.covariance.FrequentDirectionsCovariance.catch_up`),
  and every row before a re-basing;
- every re-basing is a full one (its refresh settles the sketch);
- forgetting (``half_life``) as the linear sketches: example t enters as the column
  :math:`\sqrt{g_t}\,x_t` (centered: the weighted Welford column, :func:`aucstream.
  covariance.fd_column`) with :math:`g_t = 2^{t/h - E}`, and the rescaling of the
  stored weights multiplies the sketch by :math:`2^{-\Delta E/2}`, its deferred
  shrinks' history with it (:meth:`aucstream.covariance.FrequentDirectionsCovariance.
  scale`); a shrink subtracts :math:`\sigma_\ell^2` of the weighted sketch, which
  is frequent directions on the columns :math:`\sqrt{g_i}\,x_i`, so the sketch
  carries the frequent-directions bound on the decayed scatter;
- no random draws: any two learners merge, and the write sets name every row an
  example reads (a catch-up writes them).
"""

from __future__ import annotations

import numpy as np

from .._base import BaseStreamingAUC
from .._chunks import Chunk
from .._kernels import read_only_view
from .._params import InvalidParameterError
from ..covariance import fd_shrink_index
from ._engine import Engine
from ._kernels import _DONE, _RESCALE, _SHRINK
from ._lowrank import LowRankEngine


class FrequentDirectionsEngine(LowRankEngine):
    """Frequent-directions sketches: shrinks, deferred rows, windows."""

    def check_params(self, learner) -> None:
        """tau >= 2, a shrink index within 1..tau and no "g13" centering (the G13 form
        belongs to the linear sketches)."""
        super().check_params(learner)
        name = type(learner).__name__
        if learner.sketch_size < 2:
            raise InvalidParameterError(
                f"The 'sketch_size' parameter of {name} must be >= 2 with covariance='fd' "
                f"(frequent directions shrinks at index 1..sketch_size). "
                f"Got {learner.sketch_size!r} instead."
            )
        if learner.centering == "g13":
            raise InvalidParameterError(
                f"The 'centering' parameter of {name} must be 'g16', 'exact' or None with "
                "covariance='fd' ('g13' applies to the linear sketches 'randomized' and "
                "'hash'). Got 'g13' instead."
            )
        try:
            fd_shrink_index(learner.shrink, learner.sketch_size)
        except ValueError as error:
            raise InvalidParameterError(
                f"The 'shrink' parameter of {name} must be an index within "
                f"1..sketch_size={learner.sketch_size} with covariance='fd': {error}. "
                f"Got {learner.shrink!r} instead."
            ) from None

    # ---------------------------------------------------------------- weights
    def add_deferred(self, learner, total: np.ndarray) -> None:
        """The parts of v that the deferred shrinks still owe it."""
        for s in learner.stats_:
            s.add_deferred_weights(total)

    def catch_up(self, learner) -> None:
        """Every row of v and the sketches up to date."""
        for s in learner.stats_:
            s.catch_up_all(learner.v_)

    # ----------------------------------------------------------------- update
    def update(self, learner, chunk: Chunk) -> None:
        """The kernel window by window, shrinking and re-basing where it stops."""
        settings, A, scratch = self._prepare(learner, chunk)
        # read-only views: one compiled version whoever made the chunk's arrays
        indptr, indices, data = (
            read_only_view(a) for a in (chunk.indptr, chunk.indices, chunk.data)
        )
        rows = (indptr, indices, data, chunk.y)
        r, resume, n = 0, False, chunk.n_samples
        labels = np.asarray(chunk.y) > 0
        members = (np.flatnonzero(~labels), np.flatnonzero(labels))
        while True:
            # the rows up to the next possible shrink, brought up to date
            end = self.window(learner, members, r + 1 if resume else r, n)
            features = indices[indptr[r] : indptr[end + 1]]
            for s in learner.stats_:
                s.catch_up(features, learner.v_)
            sub = (indptr[: end + 2], *rows[1:])
            pre = chunk.pre_scores
            pre = pre[: end + 1] if pre.shape[0] == n else pre
            r, event = self._run(learner, sub, pre, A, r, resume, settings, scratch)
            if event == _DONE:
                if r >= n:
                    break
                resume = False  # the end of a window
            elif event == _SHRINK:
                self.shrink(learner, int(chunk.y[r] > 0))
                resume = True
            elif event == _RESCALE:  # exact: no re-basing needed (package docstring)
                self.rescale(learner)
                resume = False
            else:
                self.rebase(learner, full=self.full_rebase_within(learner, 0))
                resume = False

    @staticmethod
    def window(learner, members: tuple, first: int, n: int) -> int:
        """The last row before or at which no sketch can shrink: class c's sketch fills
        after tau - nfill more inserts, one per example of class c at most (from row
        ``first``)."""
        end = n - 1
        for c, s in enumerate(learner.stats_):
            need = s.sketch_size - int(s.nfill_[0])
            k = int(np.searchsorted(members[c], first)) + need - 1
            if k < len(members[c]):
                end = min(end, int(members[c][k]))
        return end

    @staticmethod
    def shrink(learner, c: int) -> None:
        """Shrink class c's sketch (Alg. 2) and keep w fixed."""
        s, o = learner.stats_[c], 1 - c
        p, zz, zs, zv, sv = learner.p_, learner.zz_, learner.zs_, learner.zv_, learner.sv_
        pc, gc = p[c].copy(), float(learner.gamma_[c])
        # fold Z_c p_c + gamma_c s_c into v (the products need the old Z_c)
        z_oc = zz.T if c == 0 else zz  # Z_o^T Z_c
        zv[c] += s.gram_ @ pc + gc * zs[c, c]
        zv[o] += z_oc @ pc + gc * zs[o, c]
        for b in (0, 1):
            sv[b] += zs[c, b] @ pc + gc * learner.ss_[b, c]
        p[c] = 0.0
        learner.gamma_[c] = 0.0
        # v += gamma_c s_c + Z_c p_c and Z_c <- Z_c M, deferred: each row of v and Z_c
        # is brought up to date when an example reads it (update), or by a re-basing,
        # or when the sketch's deferred shrinks reach its capacity
        M = s.shrink_deferred(pc, gc, learner.v_)
        m = M.shape[1]
        if c == 0:
            new = M.T @ zz
            zz[:] = 0.0
            zz[:m] = new
        else:
            new = zz @ M
            zz[:] = 0.0
            zz[:, :m] = new
        for b in (0, 1):
            new = M.T @ zs[c, b]
            zs[c, b] = 0.0
            zs[c, b, :m] = new
        new = M.T @ zv[c]
        zv[c] = 0.0
        zv[c, :m] = new

    # ------------------------------------------------------------- write sets
    def written_rows(self, learner, chunk: Chunk, written: tuple) -> dict:
        """Every row an example reads: the catch-up before each window brings them up
        to date (``BaseStreamingAUC._features_written``)."""
        return BaseStreamingAUC._features_written(chunk, written)

    # ---------------------------------------------------------------- merging
    def merge(self, learner, other) -> None:
        """Frequent directions draws nothing: any two learners merge."""
        Engine.merge(self, learner, other)
