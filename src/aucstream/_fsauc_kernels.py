"""FSAUC's compiled steps (L18 Algs. 1-3): the kernel over a chunk and its helpers.

The math, the lazy bookkeeping and the deviations are in :mod:`aucstream.fsauc`,
whose estimator calls :func:`_fsauc_chunk` once per chunk; the stage's end
(:func:`_end_stage`) also serves its ``merge``.
"""

from __future__ import annotations

import math
from collections import namedtuple

from ._calibration import step as calibration_step
from ._kernels import (
    REASSOC,
    fold_due,
    jit,
    lazy_axpy,
    lazy_mean,
    n_rows,
    row,
    sparse_axpy,
    sparse_dot,
)
from ._kernels._lazy import decay_factor, decay_totals
from ._running_scale import grow_scale, scaled_values
from ._saddle import clip, l1_change, project_l1_lazy, rebase, saddle_grad_scalars, warm_start

# indices into FSAUC.scalars_
(
    _SIGMA,
    _TAU,
    _C,
    _SUM_TAU,
    _A,
    _B,
    _ALPHA,
    _A1,
    _B1,
    _ALPHA1,
    _SUM_A,
    _SUM_B,
    _RADIUS,
    _D,
    _BETA,
    _ETA,
    _NRM2_U,
    _DOT_UV1,
    _NRM1_U,
    _NRM2_V1,
    _NRM1_V1,
) = range(21)
_N_SCALARS = 21
# indices into FSAUC.counts_
_T, _STAGE, _IN_STAGE, _TPOS, _TNEG, _DONE = range(6)
#: D and beta when Lemma 1's denominators are not positive (the authors' code).
_UNBOUNDED = 1e7

#: The constants of one run: radius R, bound kappa on ||x||, confidence delta, the
#: schedule (m stages of n0 examples), l1 ball?, leftover joins the last stage?,
#: class accumulators reset at every stage?
#: forgetting's decay per example (1.0: none) and half-life (0.0: none), and whether
#: the columns are learnt in their running scale (``column_scale="max_abs"``).
FsaucConfig = namedtuple(
    "FsaucConfig",
    [
        "R",
        "kappa",
        "delta",
        "n_stages",
        "n0",
        "use_l1",
        "last_stage",
        "per_stage",
        "decay",
        "half_life",
        "rescale",
    ],
)
#: The state of a stage: the lazy iterate w = tau v1 + sigma u with its running sum,
#: the stage's start v1, the class sums A+, A- (Alg. 3), and forgetting's inflation
#: phi of the sums and the stage's (inflated) sum of iterate weights, ``fg``.
FsaucArrays = namedtuple("FsaucArrays", ["lz", "v1", "acc_pos", "acc_neg", "fg"])
#: Forgetting: the sums are deflated at the next fold once their inflation exceeds this.
INFLATION_MAX = 2.0**512
#: ... and a fold due for another reason deflates them once it exceeds this (a fold
#: that deflates costs three more O(d) passes: not at every fold).
DEFLATE_ABOVE = 2.0**256


@jit(inline="always")
def _set_norms(scal, norms):
    scal[_NRM2_U], scal[_DOT_UV1], scal[_NRM1_U] = norms


@jit(inline="always")
def _rebased(scal, norms):
    """Scalars after a rebase: sigma = tau = 1, c = 0 and the recomputed norms of u."""
    _set_norms(scal, norms)
    scal[_C] = 0.0
    scal[_SIGMA] = 1.0
    scal[_TAU] = 1.0


@jit(inline="always")
def _sq_norm(scal, tau, sigma):
    """||tau v1 + sigma u||^2 from the maintained norms."""
    return (
        tau * tau * scal[_NRM2_V1]
        + 2.0 * tau * sigma * scal[_DOT_UV1]
        + sigma * sigma * scal[_NRM2_U]
    )


@jit(inline="always")
def _count(counts, totals, y, weight):
    """Alg. 3: count the example; return the estimate of p (W+ / (W+ + W-))."""
    counts[_T] += 1
    cls = 1 if y > 0 else 0
    counts[_TPOS if cls else _TNEG] += 1
    totals[cls] += weight
    return totals[1] / (totals[0] + totals[1])


@jit(inline="always")
def _project_l1(st, scal, R, norm, nnz, work):
    """Step (d) with the l1 ball: the exact projection, O(d), warm-started from the
    running ||w||_1 and number of non-zeros of w (``nnz`` -1: not known); returns both
    afterwards."""
    rho0 = warm_start(norm, nnz, R)
    theta, norm, nnz, norms = project_l1_lazy(
        st.lz, scal[_C], st.v1, scal[_TAU], scal[_SIGMA], R, rho0, work
    )
    if theta > 0.0:
        _rebased(scal, norms)
    return norm, nnz


@jit(inline="always")
def _shrink_to_l2_ball(scal, R):
    """Step (d) with the l2 ball: ||w||_2 <= R by a change of (sigma, tau) alone."""
    sigma, tau = scal[_SIGMA], scal[_TAU]
    sq = _sq_norm(scal, tau, sigma)
    if sq > R * R:
        f = R / math.sqrt(sq)
        scal[_SIGMA] = sigma * f
        scal[_TAU] = tau * f


@jit(inline="always")
def _project_to_stage_ball(scal, a, b):
    """Step (d), last part: (w, a, b) onto the ball B(v1, r); returns a, b."""
    sigma, tau = scal[_SIGMA], scal[_TAU]
    a1, b1 = scal[_A1], scal[_B1]
    tm1 = tau - 1.0
    dist_sq = _sq_norm(scal, tm1, sigma) + (a - a1) ** 2 + (b - b1) ** 2
    radius = scal[_RADIUS]
    if dist_sq > radius * radius:
        rho = radius / math.sqrt(dist_sq)
        scal[_TAU] = 1.0 + rho * tm1
        scal[_SIGMA] = sigma * rho
        a = a1 + rho * (a - a1)
        b = b1 + rho * (b - b1)
    return a, b


@jit(inline="always")
def _add_to_sum(scal, fg):
    """Step (f): the updated iterate joins the stage's running sum, with the inflation
    phi of forgetting as its weight (1 without forgetting: the plain sum and count)."""
    phi = fg[0]
    scal[_C] += phi * scal[_SIGMA]
    scal[_SUM_TAU] += phi * scal[_TAU]
    scal[_SUM_A] += phi * scal[_A]
    scal[_SUM_B] += phi * scal[_B]
    fg[1] += phi


@jit(fastmath=REASSOC)
def _deflate(st, scal):
    """Forgetting: divide the folded sums (``c = 0``, ``corr = 0``) and the class sums
    by their inflation phi, which becomes 1."""
    f = st.fg[0]
    if f > DEFLATE_ABOVE:
        base = st.lz.base
        for i in range(base.shape[0]):
            base[i] /= f
            st.acc_pos[i] /= f
            st.acc_neg[i] /= f
        for k in (_SUM_TAU, _SUM_A, _SUM_B):
            scal[k] /= f
        st.fg[1] /= f
        st.fg[0] = 1.0


@jit(inline="always")
def _stage_weight(st):
    """What the stage's sums are divided by: the (inflated) sum of its iterates'
    weights, the number of its examples without forgetting."""
    return st.fg[1]


@jit(fastmath=REASSOC)
def _alpha_hat(st, totals, wbar):
    """Alg. 2 line 9: wbar . (mean of the negatives - mean of the positives)."""
    w_neg, w_pos = totals[0] * st.fg[0], totals[1] * st.fg[0]  # (class sums inflated)
    alpha_hat = 0.0
    for i in range(wbar.shape[0]):
        diff = 0.0
        if w_neg > 0:
            diff += st.acc_neg[i] / w_neg
        if w_pos > 0:
            diff -= st.acc_pos[i] / w_pos
        alpha_hat += wbar[i] * diff
    return alpha_hat


@jit(fastmath=REASSOC)
def _lemma1(r, p, n0, cfg):
    """D and beta of L18 Lemma 1 for the next stage (radius r, positive rate p)."""
    kappa, R = cfg.kappa, cfg.R
    xi = min(p, 1.0 - p)
    log_term = math.log(12.0 / cfg.delta)
    c_delta = 2.0 + math.sqrt(2.0 * log_term)
    den_d = xi * n0 - math.sqrt(2.0 * n0 * log_term)
    D = _UNBOUNDED
    if den_d > 0.0:
        D = 2.0 * math.sqrt(2.0) * kappa * r + 4.0 * math.sqrt(2.0) * kappa * c_delta * (
            1.0 + 2.0 * kappa
        ) * R / math.sqrt(den_d)
    den_b = xi - math.sqrt(2.0 * log_term / n0)
    beta = _UNBOUNDED
    if den_b > 0.0:
        beta = (
            1.0
            + 8.0 * kappa * kappa
            + 32.0 * kappa * kappa * (1.0 + 2.0 * kappa) ** 2 * c_delta**2 / den_b
        )
    return D, beta


@jit(fastmath=REASSOC)
def _restart(st, scal, wbar, a, b, alpha):
    """The stage output (wbar, a, b, alpha) becomes the centre and start of the next."""
    u, base, corr = st.lz
    v1 = st.v1
    for i in range(v1.shape[0]):
        v1[i] = wbar[i]
        u[i] = 0.0
        base[i] = 0.0
        corr[i] = 0.0
    nrm2 = 0.0  # (summed apart from the stores: see aucstream._kernels, "Sums")
    nrm1 = 0.0
    for i in range(v1.shape[0]):
        nrm2 += v1[i] * v1[i]
        nrm1 += abs(v1[i])
    scal[_NRM2_V1] = nrm2
    scal[_NRM1_V1] = nrm1
    _rebased(scal, (0.0, 0.0, 0.0))  # u = 0, w = v1
    scal[_SUM_TAU] = 0.0
    scal[_SUM_A] = 0.0
    scal[_SUM_B] = 0.0
    scal[_A1] = scal[_A] = a
    scal[_B1] = scal[_B] = b
    scal[_ALPHA1] = scal[_ALPHA] = alpha


@jit(fastmath=REASSOC)
def _end_stage(st, scal, counts, totals, cfg, start_next, work):
    """L18 Alg. 2 lines 8-10 and Alg. 1 lines 4-5: the stage output and the next call.

    The output averages the stage's iterates (its n0 examples; after a merge, the
    examples of both learners in the stage).
    """
    used = _stage_weight(st)
    wbar = work[: st.v1.shape[0]]
    lazy_mean(st.lz, scal[_C], st.v1, scal[_SUM_TAU], used, wbar)
    alpha_hat = _alpha_hat(st, totals, wbar)
    # forgetting: from t = half-life on, the stage constants stop shrinking
    if not (cfg.decay < 1.0 and counts[_T] >= cfg.half_life):
        r = 0.5 * scal[_RADIUS]  # Lemma 1 with the halved radius
        total = totals[0] + totals[1]
        D, beta = _lemma1(r, totals[1] / total if total > 0 else 0.0, cfg.n0, cfg)
        eta = scal[_ETA]
        scal[_ETA] = min(eta * 0.5 * math.sqrt(beta / scal[_BETA]), eta)
        scal[_BETA] = beta
        scal[_RADIUS] = r
        scal[_D] = D
    st.fg[1] = 0.0
    ak = 2.0 * cfg.R * cfg.kappa
    _restart(st, scal, wbar, scal[_SUM_A] / used, scal[_SUM_B] / used, clip(alpha_hat, -ak, ak))
    counts[_IN_STAGE] = 0
    if not start_next:
        counts[_DONE] = 1
        return
    counts[_STAGE] += 1
    if cfg.per_stage:
        counts[_TPOS] = 0
        counts[_TNEG] = 0
        totals[0] = 0.0
        totals[1] = 0.0
        st.acc_pos[:] = 0.0
        st.acc_neg[:] = 0.0


@jit(inline="always")
def _stage_end_due(counts, cfg):
    """Whether the stage has its n0 examples (and is not an open last stage)."""
    if cfg.n0 <= 0 or counts[_IN_STAGE] < cfg.n0:
        return False, False
    is_last = counts[_STAGE] >= cfg.n_stages
    return not (is_last and cfg.last_stage), not is_last


# no reference counting: the kernel allocates nothing (see aucstream._kernels)
@jit(fastmath=REASSOC, borrowing=True)
def _fsauc_chunk(st, scal, counts, totals, rows, pre, weights, cfg, work, calibration, scale, vbuf):
    """Run PDSG (L18 Alg. 2, steps (a)-(f) of the module docstring) over a chunk.

    Returns the number of examples dropped. An example of weight omega counts omega
    times in p and in the class sums and takes the step omega * eta; weight 0 skips
    it. The steps are helpers over (a part of) the state; the loop stays here. With
    prequential scores, each one (dropped examples' too) also fits the
    ``calibration`` (:func:`aucstream._calibration.step`). With ``cfg.rescale``, each
    example is read in the running scale of its columns (``scale``,
    :mod:`aucstream._running_scale`): scored before, and used after, its values join
    the scale (``vbuf``: the scaled values).
    """
    scores = pre.shape[0] == n_rows(rows)
    weighted = weights.shape[0] > 0
    forgetting = cfg.decay < 1.0
    dropped = 0
    rk = cfg.R * cfg.kappa
    # ||w||_1 and the number of non-zeros of w (l1 ball), known after the first
    # projection of the chunk while w is only stepped (nnz -1: not known). They only
    # choose where the projection's passes start, which does not change their result.
    norm, nnz = 0.0, -1
    for r in range(n_rows(rows)):
        idx, raw, y = row(rows, r)
        val = scaled_values(scale, idx, raw, vbuf, cfg.rescale)
        v1x, ux = sparse_dot(st.v1, idx, val), sparse_dot(st.lz.u, idx, val)
        if scores:  # the score under the current output (FSAUC._coef), written out here:
            # a helper that is not inlined costs a reference count per array and row
            used = _stage_weight(st)
            if counts[_IN_STAGE] == 0 or counts[_DONE]:
                pre[r] = v1x
            else:
                bx, cx = sparse_dot(st.lz.base, idx, val), sparse_dot(st.lz.corr, idx, val)
                pre[r] = (scal[_SUM_TAU] * v1x + bx + scal[_C] * ux - cx) / used
        weight = weights[r] if weighted else 1.0
        if scores:
            calibration_step(calibration, pre[r], y, weight)
        if weight == 0.0:
            continue
        if counts[_DONE]:
            dropped += 1
            continue
        if cfg.rescale and grow_scale(scale, idx, raw, 0.0):  # the step sees the new scale
            val = scaled_values(scale, idx, raw, vbuf, True)
            v1x, ux = sparse_dot(st.v1, idx, val), sparse_dot(st.lz.u, idx, val)
        if forgetting:  # the past shrinks by decay ** weight (the sums: inflation)
            factor = decay_factor(cfg.decay, weight)
            decay_totals(totals, factor)
            st.fg[0] /= factor
        p = _count(counts, totals, y, weight)  # (a)
        sparse_axpy(st.acc_pos if y > 0 else st.acc_neg, weight * st.fg[0], idx, val)
        sigma, tau, eta = scal[_SIGMA], scal[_TAU], weight * scal[_ETA]
        s = tau * v1x + sigma * ux
        g, g_a, g_b, g_alpha = saddle_grad_scalars(s, y, p, scal[_A], scal[_B], scal[_ALPHA])
        if g != 0.0:  # (c) only the non-zeros of x move
            coef = -eta * g / sigma
            if cfg.use_l1 and nnz >= 0 and idx is not None:  # (a dense row: cold starts)
                dnorm, dnnz = l1_change(st.lz.u, st.v1, tau, sigma, coef, idx, val)
                norm += dnorm
                nnz += dnnz
            scal[_NRM2_U], scal[_NRM1_U] = lazy_axpy(
                st.lz.u, st.lz.corr, scal[_C], coef, idx, val, scal[_NRM2_U], scal[_NRM1_U]
            )
            scal[_DOT_UV1] += coef * v1x
        if not cfg.use_l1:  # (d)
            _shrink_to_l2_ball(scal, cfg.R)
        elif scal[_TAU] * scal[_NRM1_V1] + scal[_SIGMA] * scal[_NRM1_U] > cfg.R:
            # tau ||v1||_1 + sigma ||u||_1 bounds ||w||_1 (both coefficients are >= 0)
            norm, nnz = _project_l1(st, scal, cfg.R, norm, nnz, work)
        # (c)-(d) for a and b: descent, their boxes, then B(v1, r) with w
        a = clip(scal[_A] - eta * g_a, -rk, rk)
        b = clip(scal[_B] - eta * g_b, -rk, rk)
        sigma, tau = scal[_SIGMA], scal[_TAU]
        scal[_A], scal[_B] = _project_to_stage_ball(scal, a, b)
        if scal[_SIGMA] != sigma or scal[_TAU] != tau:  # w moved as a whole
            nnz = -1
        # (e) dual ascent, projected onto Omega_2 and B(alpha1, D)
        alpha1, D = scal[_ALPHA1], scal[_D]
        scal[_ALPHA] = clip(
            scal[_ALPHA] + eta * g_alpha, max(-2.0 * rk, alpha1 - D), min(2.0 * rk, alpha1 + D)
        )
        _add_to_sum(scal, st.fg)  # (f)
        counts[_IN_STAGE] += 1
        if fold_due(scal[_SIGMA], counts[_IN_STAGE]) or st.fg[0] > INFLATION_MAX:
            _rebased(scal, rebase(st.lz, scal[_C], st.v1, scal[_TAU], scal[_SIGMA], 0.0))
            _deflate(st, scal)
            nnz = -1
        end, start_next = _stage_end_due(counts, cfg)
        if end:
            _end_stage(st, scal, counts, totals, cfg, start_next, work)
            nnz = -1
    return dropped
