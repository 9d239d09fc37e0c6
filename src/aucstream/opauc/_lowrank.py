r"""OPAUC's engine for the low-rank sketches: implicit weights, re-basing, forming w.

"randomized" (OPAUC_r) and "hash" (OPAUC_h) use :class:`LowRankEngine` as it is;
frequent directions (OPAUC_fd) extends it (:mod:`._fd`). The weights are kept in the
implicit form of the package docstring,

.. math::

    w = \sigma\,\big(v + Z_- p_- + Z_+ p_+ + \gamma_- s_- + \gamma_+ s_+\big),

in the learner's ``v_``, ``p_``, ``gamma_`` and ``scale_``, with the maintained
products ``zz_`` (:math:`Z_0^\top Z_1`), ``zs_`` (:math:`Z_a^\top s_b`), ``ss_``
(:math:`s_a^\top s_b`), ``zv_`` (:math:`Z_a^\top v`) and ``sv_`` (:math:`s_a^\top
v`). The compiled kernel (:func:`~aucstream.opauc._kernels._opauc_lowrank_chunk`)
learns a chunk in O(k tau + tau^2) per example and returns early when a re-basing is
due (every ``OPAUC._rebase_every`` examples, a position fixed by the stream); the
engine re-bases (:meth:`LowRankEngine.rebase`) and resumes it. ``w_`` is formed
from the implicit form (O(d tau)) only when it is read (:meth:`form_weights`).
"""

from __future__ import annotations

import importlib
import weakref
from dataclasses import replace
from typing import Any

import numpy as np

from .._blas import one_blas_thread
from .._chunks import Chunk
from .._kernels import SCALE_MAX, SCALE_MIN, jit, prefetch_rows, read_only_view
from .._runtime._undo import union_rows
from ..covariance import sketch_cross, sketch_pair, sketch_tmatvec
from ._engine import Engine
from ._kernels import (
    _DONE,
    _RESCALE,
    _SHRINK,
    Implicit,
    LowRankSettings,
    Scratch,
    _fold_implicit,
)

#: The package, whose namespace holds the kernel and ``PREFETCH_BYTES`` this engine
#: uses (looked up at each call: the one place to instrument or tune them).
_PACKAGE = importlib.import_module(__package__)

#: Low-rank learners whose ``w_`` holds the weights their implicit form gives now
#: (``OPAUC.w_``). Outside the state on purpose: a learner that is not listed (after a
#: call that learnt, a rolled-back call, unpickling or loading) forms them again when
#: they are read, which is always right.
_FORMED: weakref.WeakSet = weakref.WeakSet()


#: Rows ahead of the one scaled whose entries of the column scale :func:`_scale_rows`
#: prefetches, when the learner prefetches (``PREFETCH_BYTES``): each entry is a
#: random read of a d-vector, a few rows' work ahead of its use.
SCALE_AHEAD = 8


@jit
def _scale_rows(
    colscale, floor, v, indptr, indices, data, scaled, factors, grows, ahead
):  # pragma: no cover
    r"""The rows in the running column scale (package docstring, "Columns in their
    running scale"): row by row, each column's running maximum ``colscale`` of
    :math:`|x_i|` rises to the row's, ``scaled`` gets :math:`x_i / \hat s_i`
    (:math:`\hat s_i` = the maximum where it exceeds ``floor``, else 1: ``floor`` 1
    for "max_abs_1", 0 for "max_abs") and ``factors`` the growth :math:`\hat s'_i /
    \hat s_i` of each entry's column (1 where it did not grow). ``grows[r]``: whether
    row r raises the scale of a column whose scaled weight may be non-zero (a column
    seen before, or one never seen whose v is non-zero: the others weigh 0).
    ``ahead`` > 0: prefetch the column scale of row ``r + ahead`` while scaling row
    r (changes no result)."""
    n = indptr.shape[0] - 1
    for r in range(n):
        if ahead > 0 and r + ahead < n:
            prefetch_rows(colscale, indices[indptr[r + ahead] : indptr[r + ahead + 1]])
        grown = False
        for k in range(indptr[r], indptr[r + 1]):
            i = indices[k]
            a = abs(data[k])
            s = colscale[i]
            hat = s if s > floor else 1.0
            factors[k] = 1.0
            if a > s:
                colscale[i] = a
                if a > floor:
                    factors[k] = a / hat
                    grown = grown or s > 0.0 or v[i] != 0.0
                    hat = a
            scaled[k] = data[k] / hat
        grows[r] = grown


def _rows_of(chunk: Chunk, a: int, b: int, data: np.ndarray) -> Chunk:
    """Rows ``a:b`` of a CSR ``chunk``, with ``data`` for its values (views but
    ``indptr``; the prequential scores written into the chunk's own)."""
    indptr: Any = chunk.indptr
    lo, hi = indptr[a], indptr[b]
    indices: Any = chunk.indices
    pre = chunk.pre_scores
    return chunk._replace(
        indptr=indptr[a : b + 1] - lo,
        indices=indices[lo:hi],
        data=data[lo:hi],
        y=chunk.y[a:b],
        pre_scores=pre[a:b] if pre.shape[0] == chunk.n_samples else pre,
    )


class LowRankEngine(Engine):
    """The d x tau sketches whose draws are random ("randomized", "hash")."""

    tags = replace(Engine.tags, sample_weight=False)
    extra_bytes_per_feature = 8  # v
    #: The rows enter the sketches in the running column scale (``column_scale``;
    #: package docstring): the weights stay in the implicit form, of the scaled rows.
    scales_columns = True
    #: "max_abs_1" (the default here): the columns inside [-1, 1] as they come.
    floors_scales = True

    def check_sample_weight(self, learner, sample_weight) -> None:
        """The implicit weights assume unit additions to the class sums and counts."""
        if sample_weight is not None:
            raise ValueError(
                f"OPAUC does not support sample_weight with covariance={learner.covariance!r}: "
                "the implicit weights of the low-rank sketches take unit examples only; use "
                "covariance='full' or 'sparse', or repeat the examples"
            )

    # ------------------------------------------------------------------ state
    def init_state(self, learner, n_features: int) -> None:
        """The summaries, and the implicit weights at w = 0 with their products."""
        super().init_state(learner, n_features)
        sketch_pair(*learner.stats_)  # the linear sketches' rows side by side
        tau = learner.stats_[0].sketch_size
        learner.v_ = np.zeros(n_features)
        learner.p_ = np.zeros((2, tau))
        learner.gamma_ = np.zeros(2)
        learner.scale_ = np.ones(1)
        learner.zz_ = np.zeros((tau, tau))
        learner.zs_ = np.zeros((2, 2, tau))
        learner.ss_ = np.zeros((2, 2))
        learner.zv_ = np.zeros((2, tau))
        learner.sv_ = np.zeros(2)

    def check_state(self, learner) -> None:
        """:meth:`Engine.check_state`, and the implicit scale inside [``SCALE_MIN``,
        ``SCALE_MAX``] in absolute value."""
        super().check_state(learner)
        if not SCALE_MIN <= abs(learner.scale_[0]) <= SCALE_MAX:
            raise ValueError(
                f"scale_ = {float(learner.scale_[0])!r} is outside [SCALE_MIN, SCALE_MAX] in "
                "absolute value"
            )

    # ---------------------------------------------------------------- weights
    def add_deferred(self, learner, total: np.ndarray) -> None:
        """Add to ``total`` what the summaries still owe v (nothing here: :mod:`._fd`)."""

    def catch_up(self, learner) -> None:
        """Bring every row of v and of the sketches up to date before a re-basing
        (they are: :mod:`._fd`)."""

    def implicit_sum(self, learner) -> np.ndarray:
        """``v + Z_0 p_0 + Z_1 p_1 + gamma_0 s_0 + gamma_1 s_1`` (O(d tau))."""
        total = learner.v_.copy()
        self.add_deferred(learner, total)
        for c, s in enumerate(learner.stats_):
            total += s.sketch_dot(learner.p_[c])
            total += learner.gamma_[c] * s.sum_
        return total

    def materialize(self, learner) -> None:
        """Form the weights from the implicit form into ``w_`` (O(d tau))."""
        w = learner.scale_[0] * self.implicit_sum(learner)
        if self.column_scaled(learner):  # (the weights of the scaled columns, in raw units)
            w /= self.scale_hat(learner)
        if learner.__dict__["w_"].flags.writeable:
            learner.__dict__["w_"][:] = w
        else:  # (a read-only state, e.g. unpickled from a read-only memory map)
            learner.__dict__["w_"] = w
        _FORMED.add(learner)

    def form_weights(self, learner) -> None:
        """Form ``w_`` if it lags behind the implicit form (``OPAUC.w_``)."""
        if learner.__dict__.get("v_") is not None and learner not in _FORMED:
            self.materialize(learner)

    def set_weights(self, learner, w: np.ndarray) -> None:
        """The implicit form ``v = w``, the maintained products recomputed from the
        summaries."""
        w = np.array(w, dtype=np.float64, copy=True)
        learner.w_ = w
        learner.v_ = w * self.scale_hat(learner) if self.column_scaled(learner) else w.copy()
        learner.p_[:] = 0.0
        learner.gamma_[:] = 0.0
        learner.scale_[0] = 1.0
        self.rebase(learner)
        self.materialize(learner)

    def column_scaled(self, learner) -> bool:
        """Whether the rows enter in the running column scale: ``column_scale`` "auto"
        (which is "max_abs_1" here), "max_abs" or "max_abs_1"."""
        return getattr(learner, "column_scale", None) is not None

    @staticmethod
    def scale_floor(learner) -> float:
        """The scales the rows keep: 1 for "max_abs_1" (and "auto": the columns inside
        [-1, 1] as they come), 0 for "max_abs"."""
        return 0.0 if learner.column_scale == "max_abs" else 1.0

    def scale_hat(self, learner) -> np.ndarray:
        r"""The running column scale :math:`\hat s` the rows are divided by:
        ``column_scale_`` where it exceeds :meth:`scale_floor`, else 1."""
        s = learner.column_scale_
        return np.where(s > self.scale_floor(learner), s, 1.0)

    @staticmethod
    def in_scale(learner, scale: np.ndarray) -> np.ndarray:
        """``merge``: the weights in raw units are kept when the scale grows (as when
        an example raises it: :meth:`grow_weights`)."""
        return learner.w_.copy()

    def grow_weights(self, learner, columns: np.ndarray, factors: np.ndarray) -> None:
        r"""Multiply the scaled weights :math:`\tilde w_i` of ``columns`` by ``factors``
        (their scales' growth :math:`\hat s'_i/\hat s_i`), which keeps their weights in
        raw units, :math:`w_i = \tilde w_i/\hat s_i`: v gains :math:`(f_i - 1)` times
        the implicit sum's entry (:math:`\tilde w_i/\sigma`) and the maintained
        products with v (``zv_``, ``sv_``) follow, O(tau) per column (frequent
        directions brings the rows read up to date first)."""
        if learner.stats_[0].fills_columns:  # (frequent directions: deferred rows)
            for summary in learner.stats_:
                summary.catch_up(columns, learner.v_)
        S = [s.sum_[columns] for s in learner.stats_]
        Z = [np.asarray(s.sketch_[columns], dtype=np.float64) for s in learner.stats_]
        for c, summary in enumerate(learner.stats_):
            beta = getattr(summary, "beta_", None)  # (frequent directions: Z = Y - s beta^T)
            if beta is not None:
                Z[c] -= np.outer(S[c], beta)
        implicit = learner.v_[columns].copy()
        for c in (0, 1):
            implicit += Z[c] @ learner.p_[c] + learner.gamma_[c] * S[c]
        dv = (factors - 1.0) * implicit
        learner.v_[columns] += dv
        for c in (0, 1):
            learner.zv_[c] += dv @ Z[c]
            learner.sv_[c] += float(S[c] @ dv)

    def scale_implicit(self, learner, factor: float) -> None:
        r"""Keep w fixed while the summaries scale (:meth:`Engine.rescale`): Z and u by
        :math:`\rho = \sqrt f`, s and W by f, so :math:`p \mathrel{/}= \rho`,
        :math:`\gamma \mathrel{/}= f`, and the products with Z or s by the same
        factors (exact for the even powers of 2 a rescaling uses)."""
        root = float(np.sqrt(factor))
        learner.p_ /= root
        learner.gamma_ /= factor
        learner.zz_ *= factor
        learner.zs_ *= root * factor
        learner.ss_ *= factor * factor
        learner.zv_ *= root
        learner.sv_ *= factor

    # -------------------------------------------------------------- re-basing
    def full_rebase_within(self, learner, n: int) -> bool:
        """Whether a full re-basing (:meth:`rebase` with ``full``) falls on one of the
        next ``n`` examples, the positions fixed by ``_rebase_every`` and
        ``_refresh_every`` (frequent directions: every re-basing is full). ``n = 0``:
        whether the re-basing due after the last example learnt is a full one."""
        every = int(learner._rebase_every)
        if every <= 0:
            return False
        if not learner.stats_[0].fills_columns:
            every *= max(int(learner._refresh_every), 1)
        seen = sum(int(s.count) for s in learner.stats_)
        if n == 0:
            return seen % every == 0
        return (seen + n) // every > seen // every

    def rebase(self, learner, full: bool = True) -> None:
        """Fold the implicit weights into v and recompute the products with v exactly
        (O(d tau)); with ``full``, also every product of the summaries (O(d tau^2)).
        The linear sketches do the first part in one compiled pass over the rows
        (:meth:`_rebase_products`), deterministic whatever the BLAS threads.

        The products run on one BLAS thread: a d x tau Gram matrix took over ten times
        as long at d = 10^6 when the BLAS threads competed for busy cores
        (``benchmarks/bench_highdim.py``), and one thread makes the products (so the
        re-based model) the same whatever the BLAS thread count (the matrix-vector
        products depend on it).
        """
        self.catch_up(learner)
        with one_blas_thread():
            self._rebase_products(learner, full or learner.stats_[0].fills_columns)

    def _rebase_products(self, learner, full: bool) -> None:
        """:meth:`rebase`'s work. The linear sketches fold the implicit form into v and
        take the products with v in one compiled pass over the rows
        (:func:`~aucstream.opauc._kernels._fold_implicit`); frequent directions, whose
        summaries own their products with p (deferred shrinks), by products per term."""
        _FORMED.discard(learner)
        Z = [s.sketch_ for s in learner.stats_]
        S = [s.sum_ for s in learner.stats_]
        fold = not learner.stats_[0].fills_columns
        if fold:
            _fold_implicit(
                sketch_pair(*learner.stats_),
                S[0],
                S[1],
                learner.v_,
                learner.p_,
                learner.gamma_,
                float(learner.scale_[0]),
                learner.zv_,
                learner.sv_,
            )
        else:
            learner.v_[:] = learner.scale_[0] * self.implicit_sum(learner)
        learner.scale_[0] = 1.0
        learner.p_[:] = 0.0
        learner.gamma_[:] = 0.0
        if full:
            for s in learner.stats_:
                s.refresh()  # exact Gram matrices (frequent directions: settled first)
        Z = [s.sketch_ for s in learner.stats_]  # (frequent directions: settled)
        S = [s.sum_ for s in learner.stats_]
        if full:
            learner.zz_[:] = sketch_cross(Z[0], Z[1])  # float64 sums for float32 sketches
        for a in (0, 1):
            if not fold:
                learner.zv_[a] = sketch_tmatvec(Z[a], learner.v_)
                learner.sv_[a] = S[a] @ learner.v_
            if full:
                for b in (0, 1):
                    learner.zs_[a, b] = sketch_tmatvec(Z[a], S[b])
                    learner.ss_[a, b] = S[a] @ S[b]

    # ----------------------------------------------------------------- update
    @staticmethod
    def _implicit(learner) -> Implicit:
        return Implicit(
            learner.v_,
            learner.p_,
            learner.gamma_,
            learner.scale_,
            learner.zz_,
            learner.zs_,
            learner.ss_,
            learner.zv_,
            learner.sv_,
        )

    @staticmethod
    def prefetches(learner) -> bool:
        """Whether the passes prefetch the rows they will read: when the two sketches
        take more than ``PREFETCH_BYTES`` (too large for the caches)."""
        return sum(st.sketch_.nbytes for st in learner.stats_) > _PACKAGE.PREFETCH_BYTES

    def _prepare(self, learner, chunk: Chunk) -> tuple:
        """The kernel's settings, the chunk's random draws and scratch vectors."""
        _FORMED.discard(learner)  # w_ is formed again when read (OPAUC.w_)
        neg = learner.stats_[0]
        settings = LowRankSettings(
            float(learner.eta),
            float(learner.lam),
            neg.center_code,
            neg.fills_columns,
            int(learner._rebase_every),
            self.prefetches(learner),
            self.half_life(learner),
            self.forget_limit,
        )
        A = neg.draws(learner._rng, chunk.n_samples)
        tau = neg.sketch_size
        scratch = Scratch(np.zeros((6, tau)), np.zeros(2))
        return settings, A, scratch

    def _run(self, learner, rows, pre, A, r, resume, settings, scratch) -> tuple[int, int]:
        """One call of the kernel from row ``r``: (the row it stopped at, why)."""
        pair = sketch_pair(*learner.stats_)  # (linear sketches: interleaved, one read a row)
        return _PACKAGE._opauc_lowrank_chunk(
            tuple(
                s.arrays() if pair is None else s.arrays()._replace(sketch=pair)
                for s in learner.stats_
            ),
            self._implicit(learner),
            *rows,
            pre,
            A,
            r,
            resume,
            settings,
            scratch,
            learner.calibration_,
            learner.forget_,
        )

    def learn(self, learner, chunk: Chunk) -> None:
        """Learn ``chunk`` (:meth:`update`), in the running column scale when the
        learner's ``column_scale`` asks for it: the rows divided by the scale as it is
        after each (:func:`_scale_rows`), and, before a row that raises the scale of a
        column with a non-zero weight, the weights of its grown columns multiplied by
        the growth (:meth:`grow_weights`), so that the kernel's prequential score of
        the row is that of the model before it (package docstring)."""
        if not self.column_scaled(learner):
            self.update(learner, chunk)
            return
        data = chunk.data
        scaled, factors = np.empty_like(data), np.empty_like(data)
        grows = np.zeros(chunk.n_samples, dtype=np.bool_)
        indptr, indices = read_only_view(chunk.indptr), read_only_view(chunk.indices)
        rows = (indptr, indices, read_only_view(data), scaled, factors, grows)
        ahead = SCALE_AHEAD if self.prefetches(learner) else 0
        _scale_rows(learner.column_scale_, self.scale_floor(learner), learner.v_, *rows, ahead)
        starts = [0, *(int(r) for r in np.flatnonzero(grows) if r > 0), chunk.n_samples]
        for a, b in zip(starts[:-1], starts[1:]):
            if grows[a]:
                lo, hi = indptr[a], indptr[a + 1]
                grown = np.flatnonzero(factors[lo:hi] != 1.0)
                self.grow_weights(learner, indices[lo:hi][grown], factors[lo:hi][grown])
            self.update(learner, _rows_of(chunk, a, b, scaled))

    def update(self, learner, chunk: Chunk) -> None:
        """The kernel over the whole chunk, re-basing where it stops for it."""
        settings, A, scratch = self._prepare(learner, chunk)
        # read-only views: one compiled version whoever made the chunk's arrays
        rows = (*(read_only_view(a) for a in (chunk.indptr, chunk.indices, chunk.data)), chunk.y)
        r, n = 0, chunk.n_samples
        while True:
            r, event = self._run(learner, rows, chunk.pre_scores, A, r, False, settings, scratch)
            if event == _DONE:
                if r >= n:
                    break
            elif event == _SHRINK:  # pragma: no cover - the linear sketches never shrink
                raise RuntimeError("a linear sketch asked for a shrink")
            elif event == _RESCALE:  # exact: no re-basing needed (package docstring)
                self.rescale(learner)
            else:
                self.rebase(learner, full=self.full_rebase_within(learner, 0))

    # ------------------------------------------------------------- write sets
    @staticmethod
    def _weight_arrays(learner) -> tuple:
        """``v_``, ``w_`` and ``column_scale_`` (when kept) of a learner whose sketches
        are linear: O(d) arrays that a call writes in the rows of its chunk's features
        (:meth:`row_written_state`), logged by rows rather than copied whole (three
        copies of d floats per call). Frequent directions: none (copied whole)."""
        if learner.stats_[0].fills_columns:
            return ()
        state = learner.__dict__
        named = (state.get("v_"), state.get("w_"), state.get("column_scale_"))
        return tuple(a for a in named if isinstance(a, np.ndarray))

    def row_logged_state(self, learner) -> tuple:
        """The sketches and class sums (and frequent directions' ``seen_``): O(d tau),
        written by the kernel in the rows of the examples' features, and as a whole
        only by a shrink or a re-basing (:meth:`row_written_state`); for the linear
        sketches also ``v_``, ``w_`` and ``column_scale_`` (:meth:`_weight_arrays`).
        Frequent directions' ``v_`` and ``w_`` and the small arrays are copied by the
        transaction."""
        stats = learner.__dict__.get("stats_")
        if not stats or learner.__dict__.get("v_") is None:
            return ()
        return tuple(a for s in stats for a in s.row_state()) + self._weight_arrays(learner)

    def bounded_state(self, learner) -> tuple:
        """The class sums and the float64 linear sketches (their ``bounded_rows``):
        entries that sum examples times bounded draws, finite for any checked stream."""
        if not learner._row_logged_state():
            return ()
        return tuple(a for s in learner.stats_ for a in s.bounded_rows())

    def folds_within(self, learner, n: int) -> bool:
        r"""Whether learning ``n`` more examples may write ``v_`` whole: a re-basing
        (every ``_rebase_every`` examples, or one of forgetting's), or the implicit
        scale :math:`\sigma` folded into v when it leaves [``SCALE_MIN``,
        ``SCALE_MAX``] (:func:`aucstream.opauc._kernels._rescale`). Each step
        multiplies :math:`\sigma` by :math:`1 - \eta\lambda` and nothing else
        changes it between re-basings, so after at most n steps :math:`|\sigma|` lies
        between :math:`|\sigma| f_-^n` and :math:`|\sigma| f_+^n` (:math:`f_\pm` the
        larger and smaller of 1 and :math:`|1 - \eta\lambda|`); a factor of 2 of margin
        covers the rounding of the products."""
        every = int(learner._rebase_every)
        seen = sum(int(s.count) for s in learner.stats_)
        if every > 0 and (seen + n) // every > seen // every:
            return True
        if learner.half_life is not None:  # (forgetting's re-basings: not predicted)
            return True
        factor = abs(1.0 - float(learner.eta) * float(learner.lam))
        sigma = abs(float(learner.scale_[0]))
        if factor == 0.0 or not np.isfinite(factor):
            return True
        with np.errstate(over="ignore", under="ignore"):
            reach = sigma * factor ** float(n)
        return not (2.0 * SCALE_MIN <= min(sigma, reach) and max(sigma, reach) <= 0.5 * SCALE_MAX)

    def row_written_state(self, learner, chunk: Chunk) -> tuple:
        """All of :meth:`row_logged_state` but a frequent-directions sketch that may
        shrink within the chunk (its class has examples enough to fill it), or every
        sketch when a full re-basing falls within the chunk
        (:meth:`aucstream.covariance.FrequentDirectionsCovariance.rows_only`), and
        ``v_`` when the chunk may write it whole (:meth:`folds_within`). ``w_`` is
        never written by a call that learns (it is formed when read, ``OPAUC.w_``)
        and ``column_scale_`` only in the chunk's features (:func:`_scale_rows`)."""
        if not learner._row_logged_state() or self.rescale_due(learner, chunk.n_samples):
            return ()  # (a forgetting rescale writes the sketches whole)
        refresh = self.full_rebase_within(learner, chunk.n_samples)
        pos = int(np.count_nonzero(chunk.y > 0))
        inserts = (chunk.n_samples - pos, pos)
        stats = tuple(
            a for c, s in enumerate(learner.stats_) for a in s.rows_only(inserts[c], refresh)
        )
        weights = self._weight_arrays(learner)
        if weights and self.folds_within(learner, chunk.n_samples):
            weights = tuple(a for a in weights if a is not learner.v_)
        return stats + weights

    def written_rows(self, learner, chunk: Chunk, written: tuple) -> dict:
        """:meth:`Engine.written_rows` (each class's summary in its examples'
        features), and for :meth:`_weight_arrays`: ``v_`` and ``column_scale_`` in the
        features of every example of the chunk, ``w_`` in none."""
        by_class = learner._chunk_rows_by_class(chunk)
        ids = frozenset(map(id, written))
        rows = {
            id(a): by_class[c]
            for c, s in enumerate(learner.stats_)
            for a in s.row_state()
            if id(a) in ids
        }
        weights = [a for a in self._weight_arrays(learner) if id(a) in ids]
        if weights:
            both = union_rows(*by_class)
            for a in weights:
                rows[id(a)] = both if a is not learner.__dict__["w_"] else both[:0]
        return rows

    # ---------------------------------------------------------------- merging
    def merge(self, learner, other) -> None:
        """Refuse two learners with the same integer ``random_state`` (they drew the
        same random vectors), then merge and re-base on the merged sketches."""
        if (
            isinstance(learner.random_state, (int, np.integer))
            and learner.random_state == other.random_state
        ):
            raise ValueError(
                f"cannot merge OPAUC(covariance={learner.covariance!r}) learners with the "
                f"same random_state={learner.random_state}: they drew the same random "
                "vectors, so their summed sketches are not a sketch of both streams; give "
                "every shard its own random_state"
            )
        super().merge(learner, other)
