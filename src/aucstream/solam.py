r"""SOLAM: stochastic online AUC maximization by primal-dual steps on a saddle problem.

Ying, Wen and Lyu, *Stochastic Online AUC Maximization* (NIPS 2016, "Y16", Alg. 1).
SOLAM-l1 is the variant with an l1-ball constraint used as a baseline by Liu, Zhang,
Chen, Wang and Yang, *Fast Stochastic AUC Maximization with O(1/n)-Convergence Rate*
(ICML 2018, "L18", §5).

Saddle form
-----------
With :math:`v = (w, a, b) \in \mathbb R^{d+2}`, a dual variable :math:`\alpha`, and
:math:`p = \Pr(y = 1)`, the square-loss AUC problem equals (Y16, restated in L18 §3.1)
:math:`\min_v \max_\alpha \mathbb E_z F(v, \alpha; z)`; F and its gradients are in
:mod:`aucstream._saddle` (:func:`saddle_objective`, :func:`saddle_gradient`, both
importable from this module).

Update (Y16 Alg. 1), for t = 1, 2, ...
----------------------------------------
1. :math:`\hat p = T_+/t` (the running positive rate, current example included)
   replaces the unknown p;
2. :math:`\gamma_t = \zeta/\sqrt t`;
3. from the same old point, :math:`v \leftarrow \Pi_{\Omega_1}(v - \gamma_t\nabla_v F)`
   (descent) and :math:`\alpha \leftarrow \Pi_{\Omega_2}(\alpha + \gamma_t
   \nabla_\alpha F)` (ascent), with :math:`\Omega_1 = \{\|w\|_2 \le R,
   |a| \le R\kappa, |b| \le R\kappa\}` and :math:`\Omega_2 = \{|\alpha| \le
   2R\kappa\}` (Y16 §3; L18 Eq. 2), :math:`\kappa \ge \max\|x\|_2`;
4. the model is the step-weighted average
   :math:`\bar w_t = \sum_{s\le t}\gamma_s w_s / \sum_{s\le t}\gamma_s` of the
   iterates at which the gradients were taken (``average="pre"``, Y16 Alg. 1), or of
   the updated iterates (``average="post"``, as in the authors' MATLAB code); the
   score is :math:`\bar w^\top x`.

SOLAM-l1 (L18 §5) replaces :math:`\|w\|_2 \le R` by :math:`\|w\|_1 \le R`
(projection of Duchi et al. 2008, :mod:`aucstream.projections`).

Cost per example: sparse bookkeeping
------------------------------------
The gradient in w is a multiple of x, so a step changes only the k non-zeros of x.
The kernel keeps :math:`w = \sigma u` and the unnormalized average
:math:`\sum_s \gamma_s w_s` in the lazy form of :mod:`aucstream._kernels`
(``avg_base_ + c u - avg_corr_``, c the sum of :math:`\gamma_s\sigma_s` since the last
fold). The l2 projection only rescales :math:`\sigma`, and :math:`\|u\|_2^2` and
:math:`\|u\|_1` are kept up to date from the changed entries. Hence SOLAM (l2) costs
O(k) per example for k non-zeros (O(d) for dense rows, which are read in place).
For SOLAM-l1 the projection, when active, moves every coordinate by the threshold:
one pass that finds the threshold, warm-started from the maintained
:math:`\|u\|_1` and the number of non-zeros of u (Michelot's passes from their first
threshold, which the pass certifies, :func:`aucstream._saddle.project_l1_lazy`; more
passes on a few steps), and one pass that soft-thresholds and folds the lazy form; all
are branch-free loops that vectorize, compiled once, inlined by LLVM. The count of non-zeros
is kept within a chunk from the k entries each step moves; the threshold does not
depend on the start of the passes, so neither does the model. It is skipped in O(1)
when the maintained :math:`\|w\|_1 \le R`. The lazy form is also folded (O(d)) when
:math:`\sigma` has fallen below :math:`10^{-4}` (which bounds the cancellation in the
lazy average) and every 65536 examples, which bounds round-off; both rules depend
only on the stream, not on how it is cut into chunks, so any chunking gives
bit-identical models. The fold comes before the step of the next example, not after
the step that made it due: so whether a call folds first is known before it runs,
and a call that does not (SOLAM, l2) writes u and the average only in the rows of its
features until a fold falls due, which is all its transaction saves until then
(``SOLAM._state_spec``: one example, or sparse rows naming fewer than d/16 values
under an undo log; at a fold inside the call the kernel stops, the call saves the
arrays whole and goes on; at d = 10^6 a call no longer copies the 32 MB state).

A lazy threshold (keep :math:`|w_i| = \max(m_i - \Theta, 0)` with a global
:math:`\Theta`, as Duchi et al. 2008 §5 do with a search tree) would make the
projection O(k log d), but the step-weighted average of the clipped coordinates then
needs per-coordinate bookkeeping of when each one reaches 0, and for the dimensions
of the papers' data (d ~ 100) four vectorized passes cost about as much as the
tree's k log d updates; it is not used.

So SOLAM-l1 is the one learner of this module that cannot be O(k) per example on
wide sparse rows: whenever :math:`\|w\|_1 > R` its exact projection moves every
non-zero of w by the threshold, and its average must follow each of them (at
d = 10^6 it runs orders of magnitude slower than SOLAM; ``benchmarks/bench_lazy.py``).
Take SOLAM (l2) or a proximal l1 learner for such streams.

Forgetting (``half_life``, a library addition for streams that change)
---------------------------------------------------------------------
Y16 assumes one stationary distribution: :math:`\hat p` counts the whole stream,
:math:`\gamma_t = \zeta/\sqrt t` decays toward 0 and the average weighs every
iterate since the start, so after a change the model hardly moves. With
:math:`h` = ``half_life`` and :math:`\lambda = 2^{-1/h}`
(:func:`aucstream._params.decay_per_example`), example t (weight
:math:`\omega_t`, :math:`\lambda_t = \lambda^{\omega_t}`) does instead

.. math::

    W^\pm \leftarrow \lambda_t W^\pm,\ W^{y_t} \leftarrow W^{y_t} + \omega_t,
    \qquad \gamma_t = \zeta/\sqrt{\min(t, h)}, \qquad
    S_t = \lambda_t S_{t-1} + \gamma_t v_t, \quad
    G_t = \lambda_t G_{t-1} + \gamma_t,

and the model is :math:`\bar v_t = S_t / G_t`: the class rate of the last few
half-lives, a step that stops decaying at the step of example h (so the iterate keeps
moving), and an average in which an iterate h examples old weighs half as much as the
latest (with its :math:`\gamma`). The iterate's own update is Alg. 1's. The sums are
kept inflated, :math:`\tilde S_t = S_t \phi_t` with :math:`\phi_t =
\prod_{s \le t} \lambda_s^{-1}` (``forget_scale_``), so that shrinking them costs
O(1): the new iterate joins with weight :math:`\gamma_t\phi_t`, and at the next
fold after :math:`\phi` exceeds :math:`2^{512}` (or at any fold, once it exceeds
:math:`2^{256}`) the folded sums are divided by :math:`\phi`, which becomes 1 (a
rule of the stream only: chunking still gives bit-identical models). One example
shrinks the past by at least :math:`2^{-64}`
(:data:`aucstream._kernels._lazy.DECAY_MIN`). ``None`` (the default) is Alg. 1
exactly, bit for bit.

Example weights, prequential scores, merging
--------------------------------------------
An example of weight :math:`\omega` counts :math:`\omega` times in the positive rate,
:math:`\hat p = W_+ / (W_- + W_+)` with the class weight totals, and takes the
primal-dual step :math:`\omega\gamma_t` (for v and :math:`\alpha`); the schedule
:math:`\gamma_t = \zeta/\sqrt t` and the averaging count examples (t is the number of
examples learnt, and each learnt example's iterate weighs :math:`\gamma_t`). Weight
0 leaves the learner untouched, counters included; with all weights 1 this is Y16
Alg. 1 bit for bit. Each example's score under the averaged model is written before
the example is learnt (``test_then_train``), and, when
:func:`aucstream.evaluation.prequential` asks, its calibrated decision score and
probability too (:func:`aucstream._calibration.step_scored`). :meth:`SOLAM._merge` defines merging.
Dense products are summed in any order (``fastmath`` reassociation,
:data:`aucstream._kernels.REASSOC`): results change by rounding only.

Columns in their running scale (``column_scale``, a library default)
--------------------------------------------------------------------
Y16's steps (Alg. 1, :math:`\gamma_t = \zeta/\sqrt t`) and boxes (:math:`|a|, |b|
\le R\kappa`) are set for rows of norm at most :math:`\kappa`: on raw columns (Shuttle's
sensor readings in the hundreds and thousands, an amount next to a rate) the step in
w is far too long along the large columns and the boxes far too small for
:math:`w^\top x`, and SOLAM-l1 at its defaults ranks worse than chance. So by default
(``column_scale="max_abs"``) each column is learnt in its running scale,
:math:`\tilde x_i = x_i / \max_{t' \le t}|x_{t',i}|` (the running maximum of
Ross, Mineiro and Langford's normalized updates, UAI 2013), with every step of Alg. 1
unchanged on :math:`\tilde x`, and the model is :math:`\bar w_i / s_i` on the raw
columns (:mod:`aucstream._running_scale`: the scale an example's columns reach joins
before its step, after its prequential score). This is a deviation from Y16 Alg. 1,
whose iterates live in the units of x; ``column_scale=None`` is Alg. 1 exactly (the
papers' setting: rows scaled beforehand, as the reproduction harness passes it). A
column's running maximum depends only on the examples learnt, so chunking, saving and
resuming stay exact; a model file written before the parameter existed loads with
``column_scale=None``, the updates it was learnt with.

Deviations
----------
* ``column_scale="max_abs"`` (the default) learns in each column's running scale
  (section above); ``None`` is Y16 Alg. 1.
* :math:`\kappa` is a parameter (default 1, right for l2-normalized rows) rather
  than computed from the training set as :math:`\max_i\|x_i\|_2`, so that
  ``partial_fit`` on a stream needs no pass over the data.
* The initial point is v = 0, α = 0 (Y16 allows any point of Ω).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ._base import BaseStreamingAUC, ClassWeightTotals
from ._calibration import step as calibration_step
from ._calibration import step_scored, written_for
from ._chunks import Chunk
from ._fastpath import ints_at
from ._kernels import (
    REASSOC,
    SCALE_MAX,
    LazySum,
    Rows,
    bound_call,
    check_class_totals,
    class_totals,
    col,
    fold_due,
    jit,
    lazy_axpy,
    lazy_mean_of,
    mean_by_count,
    n_rows,
    plain,
    prefetch_row_of,
    row,
    rows_of,
    sparse_dot,
    start_class_totals,
    store_class_totals,
)
from ._kernels._lazy import DECAY_MIN, check_example_counts, decay_factor, decay_totals
from ._kernels._packed import (
    TOTALS,
    f64,
    i64,
    packed_call,
    read_only,
    real,
    totals_in,
    totals_out,
    totals_update,
)
from ._params import FORGETTING, PASS_ORDER, StrOptions, decay_per_example, positive
from ._running_scale import coef_in_columns, grow_scale, merged_scale, scaled_values
from ._runtime import LearnerTags, StateSpec
from ._saddle import (
    clip,
    l1_change,
    project_l1_lazy,
    rebase,
    saddle_grad_scalars,
    saddle_gradient,
    saddle_objective,
    warm_start,
)
from ._solam_weights import (  # (and the indices into scalars_)
    _A,
    _ALPHA,
    _B,
    _C,
    _GSUM,
    _N_SCALARS,
    _NRM1,
    _NRM2,
    _SA,
    _SAL,
    _SB,
    _SIGMA,
    _bound_weights,
)
from ._state import active_log
from ._typing import RandomState
from .projections import project_l1_ball, project_l2_ball

__all__ = ["SOLAM", "SOLAML1", "saddle_gradient", "saddle_objective"]


#: The constants of one run: radius, step constant, bound on ||x||, l1 ball?, average
#: the iterates at which the gradients are taken ("pre")?
#: the per-example decay gamma of forgetting (1.0: none) and the half-life h (the
#: step stops decaying at t = h; 0.0: none), and whether the columns are learnt in
#: their running scale (``column_scale="max_abs"``).
SolamConfig = namedtuple(
    "SolamConfig", ["R", "zeta", "kappa", "use_l1", "pre", "decay", "half_life", "rescale"]
)

#: Forgetting: the running sums are kept inflated by ``forget_scale_`` (module
#: docstring) and deflated at the next fold once it exceeds this.
_INFLATION_MAX = 2.0**512
#: ... and a fold due for another reason deflates them once it exceeds this (a fold
#: that deflates costs one more O(d) pass: not at every fold).
_DEFLATE_ABOVE = 2.0**256

#: From this many features on, a call saves the rows of u and of the average that its
#: example writes rather than the whole arrays (``SOLAM._state_spec``);
#: below, copying three arrays of d floats costs less than handling rows (one-row
#: calls with 14 non-zeros: rows are the slower way at d = 123 and the faster one
#: from about 4,000 features on).
_ROW_LOG_MIN = 4096
#: A call of several sparse rows saves the logged arrays by rows when it stores at
#: most d / 16 values (``Chunk.names_few``), else whole: a row saved costs a random
#: access in each of the four arrays (at d = 10^6 and 50 values a row, ``bench_highdim.py --learners
#: "SOLAM()" --chunk``: chunks of 1,000 rows ran faster by rows, of 2,500 whole).
_ROWS_PER_VALUE = 16


def _plan_variant(learner: SOLAM, chunk: Chunk | None) -> int:
    """1 when the learner logs rows and a chunk's first example takes its step under
    the l2 constraint without a fold first (then one example writes the logged arrays
    by rows), else 0 (``StateSpec.variant``)."""
    if learner.constraint != "l2" or not learner._row_logged_state():
        return 0
    return 0 if _fold_due(learner.scalars_, learner.counts_, learner.forget_scale_) else 1


def _by_rows(learner: SOLAM, chunk: Chunk) -> bool:
    """Whether a call writes the logged arrays only in its rows (``StateSpec.by_rows``):
    under the l2 constraint, a chunk that does not fold first (:func:`_plan_variant`),
    of one example, or of sparse rows naming fewer than d / :data:`_ROWS_PER_VALUE`
    values in a call with an undo log (an l1 projection rewrites the arrays whole).
    Such a call stops before a fold that falls due inside it, saves the arrays whole
    in its undo log and goes on (:meth:`SOLAM._bind_update`); without an undo log (a
    state below ``aucstream._state.SHADOW_LIMIT``, copied by the fast path's walk)
    there is nowhere to save them, so the call's chunk is saved whole."""
    if chunk.n_samples > 1 and (
        not chunk.names_few(_ROWS_PER_VALUE) or active_log(learner) is None
    ):
        return False
    return learner._plan_variant(chunk) == 1


@jit(inline="always")
def _observe(counts, totals, y, weight, zeta):
    """Count the example; return t, the running positive rate and gamma_t = zeta/sqrt(t).

    ``counts`` are the examples learnt (all, positive), ``totals`` the weights learnt
    per class (negative, positive): the rate is W+ / (W- + W+).
    """
    t = counts[0] + 1
    counts[0] = t
    cls = 1 if y > 0 else 0
    counts[1] += cls
    totals[cls] += weight
    return t, totals[1] / (totals[0] + totals[1]), zeta / np.sqrt(t)


@jit(inline="always")
def _add_to_average(scal, gamma):
    """The current iterate joins the step-weighted average with weight gamma."""
    scal[_C] += gamma * scal[_SIGMA]
    scal[_GSUM] += gamma
    scal[_SA] += gamma * scal[_A]
    scal[_SB] += gamma * scal[_B]
    scal[_SAL] += gamma * scal[_ALPHA]


@jit(inline="always")
def _clip_scalars(scal, gamma, g_a, g_b, g_alpha, rk):
    """Steps in a, b (descent) and alpha (ascent), projected onto their intervals."""
    scal[_A] = clip(scal[_A] - gamma * g_a, -rk, rk)
    scal[_B] = clip(scal[_B] - gamma * g_b, -rk, rk)
    scal[_ALPHA] = clip(scal[_ALPHA] + gamma * g_alpha, -2.0 * rk, 2.0 * rk)


@jit(fastmath=REASSOC)
def _shrink_to_l2_ball(scal, R):
    """||w||_2 <= R by a change of sigma alone."""
    norm = scal[_SIGMA] * np.sqrt(max(scal[_NRM2], 0.0))
    if norm > R:
        scal[_SIGMA] *= R / norm


@jit(inline="always")
def _rebased(scal, norms):
    """Scalars after a rebase: sigma = 1, c = 0 and the recomputed norms of u."""
    scal[_NRM2], scal[_NRM1] = norms[0], norms[2]
    scal[_C] = 0.0
    scal[_SIGMA] = 1.0


@jit(inline="always")
def _fold_due(scal, counts, inflation):
    """Whether the lazy form is folded before the next example: sigma out of its range
    or a multiple of 65536 examples learnt (:func:`aucstream._kernels.fold_due`), once
    at least one example is, or (forgetting) the running sums' inflation above
    :data:`_INFLATION_MAX`."""
    return counts[0] > 0 and (fold_due(scal[_SIGMA], counts[0]) or inflation[0] > _INFLATION_MAX)


@jit(inline="always")
def _deflate(base, scal, inflation):
    """Forgetting: divide the running sums (folded: ``c = 0``, ``corr = 0``) by their
    inflation, which becomes 1."""
    f = inflation[0]
    if f > _DEFLATE_ABOVE:
        for i in range(base.shape[0]):
            base[i] /= f
        for k in (_GSUM, _SA, _SB, _SAL):
            scal[k] /= f
        inflation[0] = 1.0


@jit(inline="always")
def _project_l1(lz, scal, R, nnz, work):
    """||w||_1 <= R, exactly, in O(d), warm-started from the maintained ||u||_1 and the
    ``nnz`` non-zeros of u (-1: not known); returns the non-zeros afterwards."""
    sigma = scal[_SIGMA]
    rho0 = warm_start(abs(sigma) * scal[_NRM1], nnz, R)
    theta, _, nnz, norms = project_l1_lazy(lz, scal[_C], None, 1.0, sigma, R, rho0, work)
    if theta > 0.0:
        _rebased(scal, norms)
    return nnz


@jit(fastmath=REASSOC, inline="always")
def _averaged_dot(lz, c, idx, val):
    r""":math:`\sum_i (\mathrm{base}_i + c u_i - \mathrm{corr}_i) x_i`, the row's score
    under the unnormalized average, summed coordinate by coordinate as ``coef_`` is
    formed (:func:`aucstream._kernels.lazy_mean`): a coordinate whose terms cancel
    exactly (0 in exact arithmetic, e.g. after the first steps) adds 0.0, as in
    ``decision_function``, where three dot products combined left rounding noise of
    either sign (and broke the ties ``decision_function`` keeps)."""
    acc = 0.0
    for a in range(val.shape[0]):
        i = col(idx, a)
        acc += (lz.base[i] + c * lz.u[i] - lz.corr[i]) * val[a]
    return acc


# no reference counting: the kernel allocates nothing (see aucstream._kernels)
@jit(fastmath=REASSOC, borrowing=True)
def _solam_chunk(
    lz, scal, counts, totals, inflation, rows, pre, weights, cfg, work, calibration, scale,
    vbuf, written_scores, written_probs, start, stop,
):  # fmt: skip
    """Y16 Alg. 1 over a chunk: per example, gradients at the old point, projected steps.

    An example of weight omega counts omega times in the class rate and takes the
    primal-dual step omega * gamma_t; weight 0 skips it. The steps are helpers over (a
    part of) the state; the loop itself stays here. With prequential scores, each
    one also fits the ``calibration`` (:func:`aucstream._calibration.step`), and
    writes into ``written_scores`` and ``written_probs`` (unless they are empty) the
    decision score and the probability it had
    (:func:`aucstream._calibration.step_scored`; two 1-d arrays, so that the rows of a
    ``(2, n)`` view of a wider block compile to the signature of every other call). With
    forgetting (``cfg.decay`` < 1), the class totals and the running sums shrink by
    decay ** omega per example (the sums by inflating the later terms, ``inflation``)
    and gamma_t stops decaying at t = half-life (module docstring). With
    ``cfg.rescale``, each example is read in the running scale of its columns
    (``scale``, :mod:`aucstream._running_scale`): scored before and learnt after its
    values join the scale (``vbuf``: the scaled values). The chunk's rows from
    ``start`` on; with ``stop``, up to the first whose step a fold comes before (the
    fold falls due before anything of that row is written): returns that row, or the
    number of rows when none folds.
    """
    scores = pre.shape[0] == n_rows(rows)
    written = scores and written_scores.shape[0] == n_rows(rows)
    weighted = weights.shape[0] > 0
    forgetting = cfg.decay < 1.0
    rk = cfg.R * cfg.kappa
    # the number of non-zeros of u (l1 ball), known after the first projection of the
    # chunk and kept up to date from then on (-1: not known). It only chooses where the
    # projection's passes start, which does not change their result.
    nnz = -1
    for r in range(start, n_rows(rows)):
        if stop and _fold_due(scal, counts, inflation) and (not weighted or weights[r] != 0):
            return r  # (the caller saves the arrays whole and goes on from row r)
        idx, raw, y = row(rows, r)
        prefetch_row_of(lz.u, rows, r + 1)  # (the next example's, when they are large)
        prefetch_row_of(lz.base, rows, r + 1)
        prefetch_row_of(lz.corr, rows, r + 1)
        prefetch_row_of(scale, rows, r + 1)
        val = scaled_values(scale, idx, raw, vbuf, cfg.rescale)
        ux = sparse_dot(lz.u, idx, val)
        if scores:  # the averaged model's score, (base + c u - corr).x / sum of gammas,
            # written out here: a helper that is not inlined costs a reference count per
            # array and row
            pre[r] = 0.0
            if scal[_GSUM] != 0.0:
                pre[r] = _averaged_dot(lz, scal[_C], idx, val) / scal[_GSUM]
        weight = weights[r] if weighted else 1.0
        if written:
            written_scores[r], written_probs[r] = step_scored(calibration, pre[r], y, weight)
        elif scores:
            calibration_step(calibration, pre[r], y, weight)
        if weight == 0.0:
            continue
        if cfg.rescale and grow_scale(scale, idx, raw, 0.0):  # the step sees the new scale
            val = scaled_values(scale, idx, raw, vbuf, True)
            ux = sparse_dot(lz.u, idx, val)
        if _fold_due(scal, counts, inflation):  # before the step (see the module docstring)
            _rebased(scal, rebase(lz, scal[_C], None, 1.0, scal[_SIGMA], 0.0))
            _deflate(lz.base, scal, inflation)
            nnz = -1
            ux = sparse_dot(lz.u, idx, val)  # u was rescaled
        if forgetting:
            factor = decay_factor(cfg.decay, weight)
            decay_totals(totals, factor)
            inflation[0] /= factor
        avg_weight = inflation[0]  # gamma_t's factor in the running sums (1: none)
        t, p, gamma = _observe(counts, totals, y, weight, cfg.zeta)
        if forgetting and t > cfg.half_life:  # the step's floor
            gamma = cfg.zeta / np.sqrt(cfg.half_life)
        sigma = scal[_SIGMA]
        g, g_a, g_b, g_alpha = saddle_grad_scalars(
            sigma * ux, y, p, scal[_A], scal[_B], scal[_ALPHA]
        )
        if cfg.pre:
            _add_to_average(scal, gamma * avg_weight)
        step = weight * gamma
        if g != 0.0:
            coef = -step * g / sigma
            if nnz >= 0:  # the number of non-zeros of u, from the k entries to move
                nnz += l1_change(lz.u, None, 1.0, 1.0, coef, idx, val)[1]
            scal[_NRM2], scal[_NRM1] = lazy_axpy(
                lz.u, lz.corr, scal[_C], coef, idx, val, scal[_NRM2], scal[_NRM1]
            )
        _clip_scalars(scal, step, g_a, g_b, g_alpha, rk)
        if not cfg.use_l1:
            _shrink_to_l2_ball(scal, cfg.R)
        elif scal[_NRM1] > cfg.R:
            nnz = _project_l1(lz, scal, cfg.R, nnz, work)
        if not cfg.pre:
            _add_to_average(scal, gamma * avg_weight)
    return n_rows(rows)


#: The layout :func:`_solam_packed` reads (:func:`aucstream._kernels._packed.pack` of
#: :func:`_solam_chunk`'s arguments for CSR rows).
_PACKED = "f1 f1 f1 f1 i1 f1 f1 i1r i1r f1r f1 f1 f1 d d d b b d d b f1 f1 f1 f1 f1 f1 n n n n"


@jit
def _solam_packed(at, members):
    """:func:`_solam_chunk` of its arguments packed at address ``at`` (layout
    :data:`_PACKED`, then :data:`aucstream._kernels._packed.TOTALS`), the class
    totals read from and kept in the learner's ``__dict__`` at address ``members``:
    the one-row path's call, which unboxes two integers
    (:mod:`aucstream._kernels._packed`; with reference counts: views made here are
    returned by numba's own helpers, which code without them refuses; the views own
    nothing, so they count nothing). 0; -1, nothing done, when the totals are not
    plain floats; -2 when they could not be kept (out of memory)."""
    a = ints_at(at, 50)
    totals = f64(a, 10)
    if not totals_in(a, 46, members, totals):
        return -1
    _solam_chunk(
        LazySum(f64(a, 0), f64(a, 2), f64(a, 4)),
        f64(a, 6),
        i64(a, 8),
        f64(a, 10),
        f64(a, 12),
        Rows(read_only(i64(a, 14)), read_only(i64(a, 16)), read_only(f64(a, 18)), f64(a, 20)),
        f64(a, 22),
        f64(a, 24),
        SolamConfig(
            real(a, 26),
            real(a, 27),
            real(a, 28),
            a[29] != 0,
            a[30] != 0,
            real(a, 31),
            real(a, 32),
            a[33] != 0,
        ),
        f64(a, 34),
        f64(a, 36),
        f64(a, 38),
        f64(a, 40),
        f64(a, 42),
        f64(a, 44),
        plain(0),  # (not literals: the kernel's usual version, not one of its own)
        plain(False),
    )
    return 0 if totals_out(a, 46, members, totals) else -2


class SOLAM(ClassWeightTotals, BaseStreamingAUC):
    r"""Stochastic online AUC maximization (SOLAM), l2- or l1-constrained.

    See the module docstring for the saddle problem and the update (Y16 Alg. 1).
    Memory is O(d); the work per example is O(k) for an example with k
    non-zeros under the l2 constraint, and O(d) under the l1 constraint whenever the
    projection is active.

    Parameters
    ----------
    R : float, default=1.0
        Radius of the constraint on w (and, times ``kappa``, of the boxes for a, b
        and, times ``2 kappa``, for alpha). Tuned over 10^[-1:5] in L18 §5 (after Y16).
        The default is a library choice.
    zeta : float, default=1.0
        Step-size constant: gamma_t = zeta / sqrt(t). Tuned over 2^[-10:10].
    kappa : float, default=1.0
        Bound on ||x||_2 (1 for l2-normalized rows, the papers' setting).
    constraint : {"l2", "l1"}, default="l2"
        Ball for w: ||w||_2 <= R (SOLAM, Y16) or ||w||_1 <= R (SOLAM-l1, L18 §5).
    average : {"pre", "post"}, default="pre"
        Average the iterates at which gradients are taken (Y16) or the updated
        iterates (the authors' MATLAB code).
    shuffle : bool, default=False
        Whether ``fit`` visits the examples in a random order (still one pass).
    random_state : int, Generator or None, default=None
        Seed of the shuffle.
    half_life : float or None, default=None
        Forgetting (module docstring), in examples: the class rate and the average
        forget the past with this half-life, and the step stops decaying at
        t = half_life. None: Y16 Alg. 1 exactly.
    column_scale : {"max_abs"} or None, default="max_abs"
        ``"max_abs"``: learn each column in its running scale (the running maximum
        of its absolute values, module docstring "Columns in their running scale"),
        so that the defaults learn on raw, unscaled columns. None: the rows as they
        come, Y16 Alg. 1 exactly (the papers' setting, for rows scaled beforehand).

    Attributes
    ----------
    u_ : ndarray of shape (n_features,)
        Direction of the current iterate, ``w = scalars_[0] * u_``.
    avg_base_, avg_corr_ : ndarray of shape (n_features,)
        Lazy form of the weighted sum of iterates (module docstring).
    scalars_ : ndarray of shape (11,)
        sigma, c, sum of gammas, a, b, alpha, their weighted sums, ||u||_2^2, ||u||_1.
    counts_ : ndarray of shape (2,)
        Examples learnt and positives learnt (weight-0 examples do not count).
    weight_neg_, weight_pos_ : float
        Sum of the weights of the examples learnt per class (the counts when no
        weights were given; decayed under forgetting); set by the first learning call.
    forget_scale_ : ndarray of shape (1,)
        The inflation :math:`\phi` of the running sums under forgetting (1 without).
    scale_ : ndarray of shape (n_features,)
        The running maximum of each column's absolute values (``column_scale=
        "max_abs"``; zeros otherwise).
    classes_, n_samples_seen_, n_features_in_
        As for every aucstream learner.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.solam import SOLAM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 5))
    >>> y = np.where(X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=500) > 0, 1, -1)
    >>> X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> model = SOLAM(R=10.0, zeta=1.0).fit(X, y)
    >>> model.score(X, y) > 0.85
    True
    """

    param_grid = {
        "R": [10.0**k for k in range(-1, 6)],
        "zeta": [2.0**k for k in range(-10, 11)],
    }
    _tags = LearnerTags(
        dense_kernels=True,
        kernel_prequential=True,
        kernel_calibrates=True,
        sample_weight=True,
        update_draws=False,
        # the declarations of a one-row chunk depend on the state through
        # _plan_variant only
        row_written_by_class=True,
    )
    _parameter_constraints = {
        "R": [positive()],
        "zeta": [positive()],
        "kappa": [positive()],
        "constraint": [StrOptions({"l2", "l1"})],
        "average": [StrOptions({"pre", "post"})],
        **PASS_ORDER,
        **FORGETTING,
        "column_scale": [StrOptions({"max_abs"}), None],
    }
    #: ``forget_scale_`` came with forgetting; an older file (no forgetting) gets the
    #: fresh value 1. ``scale_`` came with ``column_scale``: an older file learnt the
    #: rows as they came, and keeps doing so (``_upgrades``).
    _state_added_later = (*ClassWeightTotals._state_added_later, "forget_scale_", "scale_")
    _upgrades = {"scale_": {"column_scale": None}}
    #: ``u_``, ``avg_base_``, ``avg_corr_``, ``scale_``: O(d), written by a step in the
    #: rows of the example's features only (u and the average whole by a fold or an
    #: l1 projection): by rows for one example under the l2 constraint that does not
    #: fold first (:func:`_plan_variant`).
    _state_spec = StateSpec(
        logged=("u_", "avg_base_", "avg_corr_", "scale_"),
        log_from=_ROW_LOG_MIN,
        by_rows=_by_rows,
        variant=_plan_variant,
        weights=_bound_weights,
    )

    def __init__(
        self,
        R: float = 1.0,
        zeta: float = 1.0,
        kappa: float = 1.0,
        constraint: str = "l2",
        average: str = "pre",
        shuffle: bool = False,
        random_state: RandomState = None,
        half_life: float | None = None,
        column_scale: str | None = "max_abs",
    ):
        self.R = R
        self.zeta = zeta
        self.kappa = kappa
        self.constraint = constraint
        self.average = average
        self.half_life = half_life
        self.shuffle = shuffle
        self.random_state = random_state
        self.column_scale = column_scale

    def _init_state(self, n_features: int) -> None:
        self.u_ = np.zeros(n_features)
        self.avg_base_ = np.zeros(n_features)
        self.avg_corr_ = np.zeros(n_features)
        self.scalars_ = np.zeros(_N_SCALARS)
        self.scalars_[_SIGMA] = 1.0
        self.counts_ = np.zeros(2, dtype=np.int64)
        self.forget_scale_ = np.ones(1)
        self.scale_ = np.zeros(n_features)
        start_class_totals(self)

    def _bind_update(self, chunk: Chunk, reuse: bool = False):
        use_l1 = self.constraint == "l1"
        half_life = self.half_life
        cfg = SolamConfig(
            float(self.R),
            float(self.zeta),
            float(self.kappa),
            use_l1,
            self.average == "pre",
            decay_per_example(half_life),
            0.0 if half_life is None else float(half_life),
            self.column_scale == "max_abs",
        )
        work = np.empty(4 * self.u_.shape[0] if use_l1 else 0)
        totals = np.zeros(2)
        args = (
            self._lazy_sum(),
            self.scalars_,
            self.counts_,
            totals,
            self.forget_scale_,
            rows_of(chunk),
            chunk.pre_scores,
            chunk.sample_weight,
            cfg,
            work,
            self.calibration_,
            self.scale_,
            np.empty(self.u_.shape[0]),
            *written_for(self, chunk.pre_scores.shape[0]),  # (asked by prequential)
        )
        # a call made many times (the one-row path): its arguments packed, when they
        # fit the layout of the packed call (CSR rows), else bound
        packed = packed_call(_solam_packed, _PACKED, *args, TOTALS, late=(0,)) if reuse else None
        if reuse or chunk.n_samples == 1 or not self._row_written_state(chunk):
            run = bound_call(_solam_chunk, *args, 0, False, reuse=reuse)  # (every row)
            return totals_update(packed, run, totals, "SOLAM")
        kernel = bound_call(_solam_chunk, *args)

        def by_rows_until_a_fold() -> None:  # (StateSpec.by_rows: _by_rows)
            end = kernel(0, True)
            if end == chunk.n_samples:
                return
            log = active_log(self)
            if log is None:  # (_by_rows asks for one: nowhere to save the arrays)
                raise RuntimeError("SOLAM folds inside a call saved by rows without an undo log")
            log.cover(None)  # the arrays whole, before the fold rewrites them
            kernel(end, False)
            for array in args[0]:  # (the runtime checks the chunk's rows only)
                if not np.isfinite(array).all():
                    raise FloatingPointError("a fold made the lazy sums infinite or NaN")

        return totals_update(packed, by_rows_until_a_fold, totals, "SOLAM")

    def _class_counts(self) -> np.ndarray:
        """Examples learnt per class (negative, positive)."""
        return np.array([self.counts_[0] - self.counts_[1], self.counts_[1]])

    def _lazy_sum(self) -> LazySum:
        return LazySum(self.u_, self.avg_base_, self.avg_corr_)

    def _coef(self) -> np.ndarray:
        """The averaged model in the units of the raw columns."""
        coef = self._scaled_coef()
        return coef_in_columns(coef, self.scale_) if self.column_scale == "max_abs" else coef

    def _scaled_coef(self) -> np.ndarray:
        """The averaged model in the units the iterates learn in."""
        s = self.scalars_
        out = np.zeros(self.u_.shape)  # (np.zeros_like costs a visible part of a one-row score)
        if s[_GSUM] != 0.0:
            u = self.u_
            lazy_mean_of(u, self.avg_base_, self.avg_corr_, s[_C], u[:0], 0.0, s[_GSUM], out)
        return out

    def _iterate(self) -> tuple[np.ndarray, float, float, float]:
        """The current (not averaged) iterate (w, a, b, alpha)."""
        s = self.scalars_
        return s[_SIGMA] * self.u_, float(s[_A]), float(s[_B]), float(s[_ALPHA])

    def _check_state(self) -> None:
        t, _ = check_example_counts(self)
        s = self.scalars_
        if not 0.0 < s[_SIGMA] <= SCALE_MAX:  # (below 1e-4: folded before the next step)
            raise ValueError(f"scalars_[0] (sigma) = {s[_SIGMA]!r} is outside its range")
        if min(s[_GSUM], s[_NRM2], s[_NRM1]) < 0.0 or (s[_GSUM] > 0.0) != (t > 0):
            raise ValueError("scalars_ holds a negative sum or norm, or sums without examples")
        check_class_totals(self, self._class_counts())
        inflation = self.forget_scale_[0]
        if not 1.0 <= inflation <= _INFLATION_MAX / DECAY_MIN:
            raise ValueError(f"forget_scale_ = {inflation!r} is outside its range")

    def _merge(self, other: SOLAM) -> None:
        r"""Combine two SOLAM learners that learnt disjoint parts of a stream.

        With :math:`n_1, n_2` the examples each has learnt: the current iterate
        :math:`(w, a, b, \alpha)` and the averaged iterate :math:`(\bar w, \bar a,
        \bar b, \bar\alpha)` become :math:`(n_1 v_1 + n_2 v_2)/(n_1 + n_2)`; the sum of
        step sizes :math:`\sum\gamma` of the average and all counters add (so later
        iterates join the average with their :math:`\gamma_t` against both passes'
        total, and :math:`t` continues from :math:`t_1 + t_2`). Both iterates stay in
        their balls and boxes (averages of feasible points). Examples of weight 0 do
        not count in :math:`n`; an unfitted learner is refused by :meth:`merge`, and
        every learning call learns at least one example (scikit-learn refuses a chunk
        whose weights are all 0), so both sides have learnt something.

        With ``column_scale="max_abs"`` the running scales merge into their maximum
        and both sides' iterates are first put in its units (each column's weights
        times its old scale over the new one, which keeps each side's model on raw
        columns); the merged iterate is then projected onto its ball again (putting
        a side in a larger scale can leave it).
        """
        n1, n2 = int(self.counts_[0]), int(other.counts_[0])
        if n2 == 0:
            return
        if n1 == 0:
            n1, n2 = 0, 1  # self has learnt nothing: take the other's iterates
        scale = merged_scale(self.scale_, other.scale_)
        mine, theirs = self._snapshot(scale), other._snapshot(scale)
        merged = {k: mean_by_count(mine[k], n1, theirs[k], n2) for k in mine}
        totals = class_totals(self) + class_totals(other)
        self.counts_ = self.counts_ + other.counts_
        store_class_totals(self, totals)
        # the running sums without their inflation (forgetting; 1 otherwise)
        gsum = (
            self.scalars_[_GSUM] / self.forget_scale_[0]
            + other.scalars_[_GSUM] / other.forget_scale_[0]
        )
        self.forget_scale_ = np.ones(1)
        self.u_ = merged["w"]
        if self.column_scale == "max_abs":
            self.scale_ = scale
            if self.constraint == "l1":
                self.u_ = project_l1_ball(self.u_, self.R)
            else:
                self.u_ = project_l2_ball(self.u_, self.R)
        self.avg_base_ = gsum * merged["wbar"]
        self.avg_corr_ = np.zeros_like(self.u_)
        s = np.zeros(_N_SCALARS)
        s[_SIGMA] = 1.0
        s[_GSUM] = gsum
        s[_A], s[_B], s[_ALPHA] = merged["abalpha"]
        s[_SA], s[_SB], s[_SAL] = gsum * merged["abalpha_bar"]
        s[_NRM2] = float(self.u_ @ self.u_)
        s[_NRM1] = float(np.abs(self.u_).sum())
        self.scalars_ = s

    def _snapshot(self, scale: np.ndarray) -> dict[str, np.ndarray]:
        """The current and the averaged iterate, as arrays to average (in the units of
        the running ``scale`` of the merge, with ``column_scale="max_abs"``)."""
        s = self.scalars_
        gsum = s[_GSUM] if s[_GSUM] > 0 else 1.0
        w, a, b, alpha = self._iterate()
        wbar = self._scaled_coef()
        if self.column_scale == "max_abs":
            old = self.scale_
            factor = np.divide(scale, old, out=np.zeros_like(old), where=old > 0.0)
            w, wbar = w * factor, wbar * factor
        return {
            "w": w,
            "wbar": wbar,
            "abalpha": np.array([a, b, alpha]),
            "abalpha_bar": s[[_SA, _SB, _SAL]] / gsum,
        }


class SOLAML1(SOLAM):
    """SOLAM with the l1-ball constraint ||w||_1 <= R (SOLAM-l1 of L18 §5).

    The same estimator as ``SOLAM(constraint="l1")``; see :class:`SOLAM` for the
    parameters and the module docstring for the algorithm.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.solam import SOLAML1
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 5))
    >>> y = np.where(X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=500) > 0, 1, -1)
    >>> X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> model = SOLAML1(R=10.0, zeta=1.0).fit(X, y)
    >>> model.score(X, y) > 0.85
    True
    """

    #: Not a parameter: SOLAML1 always uses the l1 ball.
    constraint = "l1"
    _parameter_constraints = {
        name: rule for name, rule in SOLAM._parameter_constraints.items() if name != "constraint"
    }

    def __init__(
        self,
        R: float = 1.0,
        zeta: float = 1.0,
        kappa: float = 1.0,
        average: str = "pre",
        shuffle: bool = False,
        random_state: RandomState = None,
        half_life: float | None = None,
        column_scale: str | None = "max_abs",
    ):
        self.R = R
        self.zeta = zeta
        self.kappa = kappa
        self.average = average
        self.half_life = half_life
        self.shuffle = shuffle
        self.random_state = random_state
        self.column_scale = column_scale
