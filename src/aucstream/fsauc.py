"""FSAUC: fast stochastic AUC maximization by multi-stage primal-dual steps.

Liu, Zhang, Chen, Wang and Yang, *Fast Stochastic AUC Maximization with
O(1/n)-Convergence Rate* (ICML 2018, "L18", Algs. 1-3, Lemma 1); SPEC §11. The
constants follow SPEC §11, which reads the garbled OCR of L18 together with the
authors' code.

Problem
-------
The saddle function F of SOLAM (:mod:`aucstream.solam`, L18 §3.1) over
:math:`\\Omega_1 = \\{\\|w\\|_1 \\le R, |a| \\le R\\kappa, |b| \\le R\\kappa\\}` and
:math:`\\Omega_2 = \\{|\\alpha| \\le 2R\\kappa\\}` (L18 Eq. 2), with the unknown
:math:`p = \\Pr(y=1)` replaced by the running estimate :math:`\\hat p` (L18 Alg. 3).
``constraint="l2"`` uses :math:`\\|w\\|_2 \\le R` instead.

Schedule (L18 Alg. 1, line 1)
-----------------------------
For a stream of n examples, known in advance: :math:`m = \\max(1, \\lfloor\\frac12
\\log_2(2n/\\log_2 n)\\rfloor - 1)` stages of :math:`n_0 = \\lfloor n/m \\rfloor` examples
(:func:`fsauc_schedule`), :math:`R_0 = 2\\sqrt{1+2\\kappa^2}R`,
:math:`\\beta_0 = 1+8\\kappa^2`, :math:`D_0 = 2\\sqrt2\\kappa R_0`, and step sizes
:math:`\\eta_k = \\sqrt{\\beta_{k-1}}R_{k-1}/(\\sqrt{3n_0}G)` (line 4). As in L18 §5 the
step :math:`\\eta_1` is tuned directly, which fixes G; then
:math:`\\eta_k = \\min(\\eta_{k-1}\\cdot\\frac12\\sqrt{\\beta_{k-1}/\\beta_{k-2}},\\ \\eta_{k-1})`
(the ratio of line 4, with the authors' ``min`` guard). Stage k runs
PDSG(:math:`v_{k-1}, \\alpha_{k-1}, R_{k-1}, D_{k-1}, n_0, \\eta_k`) from
:math:`v_0 = 0, \\alpha_0 = 0`.

PDSG (L18 Alg. 2), for each example of a stage started at :math:`(v_1, \\alpha_1)`
---------------------------------------------------------------------------------
(a) update :math:`T_\\pm`, :math:`A_\\pm = \\sum_{y=\\pm1} x` and :math:`\\hat p =
T_+/(T_+ + T_-)` (Alg. 3); (b) take the gradients of F at :math:`(v, \\alpha)`;
(c) :math:`v' = v - \\eta\\nabla_v`, :math:`\\alpha' = \\alpha + \\eta\\nabla_\\alpha`;
(d) project :math:`v'` onto :math:`\\Omega_1 \\cap B(v_1, r)` (line 5): w onto the l1
ball, a and b onto their boxes, then the result onto the l2 ball
:math:`B(v_1, r)` in :math:`\\mathbb R^{d+2}` (one round of alternating projections,
SPEC §14 #14: both points lie in the convex :math:`\\Omega_1`, so the result is
feasible); (e) :math:`\\alpha = \\mathrm{clip}(\\alpha', \\max(-2R\\kappa, \\alpha_1 - D),
\\min(2R\\kappa, \\alpha_1 + D))` (line 6, exact); (f) add the updated v to a running
sum. At the end of the stage (lines 8-10): :math:`\\bar v = \\sum v / n_0`,
:math:`\\hat\\alpha = \\bar w^\\top(A_-/T_- - A_+/T_+)` (the dual initialization from
the class means; a class never seen has mean 0), :math:`r \\leftarrow r/2`, and with
:math:`\\xi = \\min(\\hat p, 1-\\hat p)`, :math:`L = \\ln(12/\\delta)`,
:math:`c_\\delta = 2 + \\sqrt{2L}` (Lemma 1)

.. math::

    D = 2\\sqrt2\\kappa r + \\frac{4\\sqrt2\\kappa c_\\delta (1+2\\kappa) R}
        {\\sqrt{\\xi n_0 - \\sqrt{2 n_0 L}}}, \\qquad
    \\beta = 1 + 8\\kappa^2 + \\frac{32\\kappa^2(1+2\\kappa)^2c_\\delta^2}
        {\\xi - \\sqrt{2L/n_0}},

each set to :math:`10^7` when its denominator is not positive (authors' code).
The output is :math:`\\bar v_m` and the score is :math:`\\bar w_m^\\top x`.

The stream length
-----------------
The schedule needs n. ``fit`` uses ``n_samples`` if given, else ``X.shape[0]``;
``partial_fit`` uses ``n_samples``. Examples beyond the first :math:`m n_0` (the
:math:`n - m n_0 < m` left over by the rounding, and any examples past the announced
n) are dropped with ``leftover="drop"`` (faithful: Alg. 1 uses :math:`m n_0`
examples; a warning is given when the stream runs past n) or join the last stage,
with its step size, radius and running average, with ``leftover="last_stage"``.
When a stream ends early, the model is the running average of the current stage
(the previous stage's output if the current stage has no example yet), as SPEC §11
prescribes for mid-stage checkpoints. Without ``n_samples``, ``partial_fit`` warns
and runs the whole stream as one stage (m = 1, step :math:`\\eta_1`, radius
:math:`R_0`).

Cost per example: sparse bookkeeping
------------------------------------
The kernel keeps :math:`w = \\tau v_1 + \\sigma u` (:math:`v_1` fixed during a stage),
the running sum as :math:`\\Sigma_w = (\\sum\\tau) v_1 + S_0 + c\\,u - P` (c the sum of
the :math:`\\sigma` since the last flush; a change :math:`\\Delta u` adds
:math:`c\\Delta u` to P), and :math:`\\|u\\|_2^2`, :math:`u^\\top v_1`, :math:`\\|u\\|_1`
up to date from the changed entries. The gradient step changes the k non-zeros of
x; the l2-ball projection and the step back into :math:`B(v_1, r)` are affine maps
that only change :math:`(\\sigma, \\tau)`. So ``constraint="l2"`` costs O(k) per
example. For the l1 ball, :math:`\\tau\\|v_1\\|_1 + \\sigma\\|u\\|_1 \\le R` (all
coefficients stay positive) certifies feasibility in O(1); otherwise the exact norm
and, if needed, the projection cost O(d). The representation is rebased (O(d)) after
an l1 projection, when :math:`\\sigma < 10^{-4}`, every 65536 examples of a stage and
at each stage end; these rules depend only on the stream, so any chunking gives
bit-identical models.

Deviations and choices
----------------------
* :math:`\\kappa` is a parameter (default 1, right for l2-normalized rows), not
  computed from the training set (SPEC §14 #16 defines it as the largest norm).
* Accumulators :math:`A_\\pm, T_\\pm` are global by default, as the Remark after
  Thm. 1 and the authors' code use; ``accumulators="per_stage"`` resets them at each
  stage as Alg. 2, line 1 does for the analysis (SPEC §14 #13b).
* The averaged iterate is the sum of the updated iterates (authors' code; SPEC §14
  #15). The exact projection onto :math:`\\Omega_1 \\cap B(v_1, r)` (Dykstra) is not
  offered; one alternating round is used (SPEC §14 #14).
* :math:`\\hat\\alpha` is clipped into :math:`\\Omega_2` before it starts a stage; it
  lies there already when :math:`\\|x\\|_2 \\le \\kappa` holds.
* For n < 2 the schedule formula is undefined; one stage of n examples is used.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numba as nb
import numpy as np

from ._base import BaseStreamingAUC
from ._chunks import Chunk
from .projections import l1_threshold
from .solam import saddle_grad_scalars, sparse_dot

__all__ = ["FSAUC", "fsauc_schedule"]

_FLUSH_EVERY = 1 << 16
_MIN_SIGMA = 1e-4

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


def fsauc_schedule(n: int) -> tuple[int, int]:
    """Number of stages m and stage length n0 for a stream of n examples (L18 Alg. 1).

    Parameters
    ----------
    n : int
        Stream length, at least 1.

    Returns
    -------
    m, n0 : int
        ``m = max(1, floor(log2(2 n / log2 n) / 2) - 1)`` and ``n0 = n // m``
        (m = 1 for n < 2, where the formula is undefined).

    Examples
    --------
    >>> from aucstream.fsauc import fsauc_schedule
    >>> fsauc_schedule(1000), fsauc_schedule(32561)
    ((2, 500), (5, 6512))
    """
    n = int(n)
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if n < 2:
        return 1, n
    m = max(1, math.floor(0.5 * math.log2(2.0 * n / math.log2(n))) - 1)
    return m, n // m


@nb.njit(cache=True)
def _rebase(u, v1, base, corr, scal, w):
    """Fold the running sum into ``base`` and restart u from the explicit ``w``.

    Afterwards ``w = v1 + u`` (sigma = tau = 1) and the norms are exact.
    """
    c = scal[_C]
    nrm2 = 0.0
    dot = 0.0
    nrm1 = 0.0
    for i in range(u.shape[0]):
        base[i] += c * u[i] - corr[i]
        corr[i] = 0.0
        ui = w[i] - v1[i]
        u[i] = ui
        nrm2 += ui * ui
        dot += ui * v1[i]
        nrm1 += abs(ui)
    scal[_C] = 0.0
    scal[_SIGMA] = 1.0
    scal[_TAU] = 1.0
    scal[_NRM2_U] = nrm2
    scal[_DOT_UV1] = dot
    scal[_NRM1_U] = nrm1


@nb.njit(cache=True)
def _rebase_shrunk(u, v1, base, corr, scal, w, theta):
    """``_rebase`` to the soft-thresholded ``w`` (the l1 projection), in one pass."""
    c = scal[_C]
    nrm2 = 0.0
    dot = 0.0
    nrm1 = 0.0
    for i in range(u.shape[0]):
        base[i] += c * u[i] - corr[i]
        corr[i] = 0.0
        m = abs(w[i]) - theta
        wi = 0.0
        if m > 0.0:
            wi = m if w[i] > 0.0 else -m
        ui = wi - v1[i]
        u[i] = ui
        nrm2 += ui * ui
        dot += ui * v1[i]
        nrm1 += abs(ui)
    scal[_C] = 0.0
    scal[_SIGMA] = 1.0
    scal[_TAU] = 1.0
    scal[_NRM2_U] = nrm2
    scal[_DOT_UV1] = dot
    scal[_NRM1_U] = nrm1


@nb.njit(cache=True)
def _explicit_w(u, v1, scal, out):
    sigma, tau = scal[_SIGMA], scal[_TAU]
    for i in range(u.shape[0]):
        out[i] = tau * v1[i] + sigma * u[i]


@nb.njit(cache=True)
def _stage_average(u, v1, base, corr, scal, count, out):
    """The running average of the current stage's iterates, written into ``out``."""
    c, st = scal[_C], scal[_SUM_TAU]
    for i in range(u.shape[0]):
        out[i] = (st * v1[i] + base[i] + c * u[i] - corr[i]) / count


@nb.njit(cache=True)
def _end_stage(
    u,
    v1,
    base,
    corr,
    acc_pos,
    acc_neg,
    scal,
    counts,
    n0,
    R,
    kappa,
    delta,
    per_stage,
    start_next,
    work,
):
    """L18 Alg. 2 lines 8-10 and the start of the next PDSG call."""
    d = u.shape[0]
    wbar = work[:d]
    _stage_average(u, v1, base, corr, scal, n0, wbar)
    abar = scal[_SUM_A] / n0
    bbar = scal[_SUM_B] / n0
    tpos, tneg = counts[_TPOS], counts[_TNEG]
    alpha_hat = 0.0
    for i in range(d):
        diff = 0.0
        if tneg > 0:
            diff += acc_neg[i] / tneg
        if tpos > 0:
            diff -= acc_pos[i] / tpos
        alpha_hat += wbar[i] * diff
    # Lemma 1 with the halved radius
    r = 0.5 * scal[_RADIUS]
    p = tpos / max(tpos + tneg, 1)
    xi = min(p, 1.0 - p)
    log_term = math.log(12.0 / delta)
    c_delta = 2.0 + math.sqrt(2.0 * log_term)
    den_d = xi * n0 - math.sqrt(2.0 * n0 * log_term)
    if den_d > 0.0:
        D = 2.0 * math.sqrt(2.0) * kappa * r + 4.0 * math.sqrt(2.0) * kappa * c_delta * (
            1.0 + 2.0 * kappa
        ) * R / math.sqrt(den_d)
    else:
        D = 1e7
    den_b = xi - math.sqrt(2.0 * log_term / n0)
    if den_b > 0.0:
        beta = (
            1.0
            + 8.0 * kappa * kappa
            + 32.0 * kappa * kappa * (1.0 + 2.0 * kappa) ** 2 * c_delta**2 / den_b
        )
    else:
        beta = 1e7
    eta = scal[_ETA]
    scal[_ETA] = min(eta * 0.5 * math.sqrt(beta / scal[_BETA]), eta)
    scal[_BETA] = beta
    scal[_RADIUS] = r
    scal[_D] = D
    # the stage output becomes the centre and the start of the next stage
    nrm2 = 0.0
    nrm1 = 0.0
    for i in range(d):
        v1[i] = wbar[i]
        nrm2 += wbar[i] * wbar[i]
        nrm1 += abs(wbar[i])
        u[i] = 0.0
        base[i] = 0.0
        corr[i] = 0.0
    ak = 2.0 * R * kappa
    scal[_NRM2_V1] = nrm2
    scal[_NRM1_V1] = nrm1
    scal[_NRM2_U] = 0.0
    scal[_DOT_UV1] = 0.0
    scal[_NRM1_U] = 0.0
    scal[_SIGMA] = 1.0
    scal[_TAU] = 1.0
    scal[_C] = 0.0
    scal[_SUM_TAU] = 0.0
    scal[_SUM_A] = 0.0
    scal[_SUM_B] = 0.0
    scal[_A1] = scal[_A] = abar
    scal[_B1] = scal[_B] = bbar
    scal[_ALPHA1] = scal[_ALPHA] = min(max(alpha_hat, -ak), ak)
    counts[_IN_STAGE] = 0
    if start_next:
        counts[_STAGE] += 1
        if per_stage:
            counts[_TPOS] = 0
            counts[_TNEG] = 0
            acc_pos[:] = 0.0
            acc_neg[:] = 0.0
    else:
        counts[_DONE] = 1


@nb.njit(cache=True)
def _fsauc_chunk(
    u,
    v1,
    base,
    corr,
    acc_pos,
    acc_neg,
    scal,
    counts,
    indptr,
    indices,
    data,
    ys,
    R,
    kappa,
    delta,
    n_stages,
    n0,
    use_l1,
    last_stage,
    per_stage,
    work,
):
    """Run PDSG over a chunk; return the number of examples dropped."""
    d = u.shape[0]
    rk = R * kappa
    ak = 2.0 * R * kappa
    dropped = 0
    for r in range(indptr.shape[0] - 1):
        if counts[_DONE]:
            dropped += 1
            continue
        lo, hi = indptr[r], indptr[r + 1]
        y = ys[r]
        counts[_T] += 1
        # (a) Alg. 3
        if y > 0:
            counts[_TPOS] += 1
            for k in range(lo, hi):
                acc_pos[indices[k]] += data[k]
        else:
            counts[_TNEG] += 1
            for k in range(lo, hi):
                acc_neg[indices[k]] += data[k]
        p = counts[_TPOS] / (counts[_TPOS] + counts[_TNEG])
        # (b) gradients at the current point
        sigma, tau = scal[_SIGMA], scal[_TAU]
        a, b, alpha = scal[_A], scal[_B], scal[_ALPHA]
        s = tau * sparse_dot(v1, indices, data, lo, hi) + sigma * sparse_dot(
            u, indices, data, lo, hi
        )
        g, g_a, g_b, g_alpha = saddle_grad_scalars(s, y, p, a, b, alpha)
        eta = scal[_ETA]
        # (c) primal step in w: only the non-zeros of x move
        if g != 0.0:
            c = scal[_C]
            coef = -eta * g / sigma
            nrm2, dot, nrm1 = scal[_NRM2_U], scal[_DOT_UV1], scal[_NRM1_U]
            for k in range(lo, hi):
                i = indices[k]
                du = coef * data[k]
                old = u[i]
                new = old + du
                u[i] = new
                corr[i] += c * du
                nrm2 += new * new - old * old
                dot += du * v1[i]
                nrm1 += abs(new) - abs(old)
            scal[_NRM2_U], scal[_DOT_UV1], scal[_NRM1_U] = nrm2, dot, nrm1
        a = a - eta * g_a
        b = b - eta * g_b
        alpha_new = alpha + eta * g_alpha
        # (d) projection onto Omega_1, then onto B(v1, r)
        if use_l1:
            if scal[_TAU] * scal[_NRM1_V1] + scal[_SIGMA] * scal[_NRM1_U] > R:
                w = work[:d]
                mags = work[d : 2 * d]
                sigma, tau = scal[_SIGMA], scal[_TAU]
                n_nz = 0
                total = 0.0
                for i in range(d):
                    wi = tau * v1[i] + sigma * u[i]
                    w[i] = wi
                    if wi != 0.0:
                        mags[n_nz] = abs(wi)
                        n_nz += 1
                        total += abs(wi)
                if total > R:
                    # theta depends only on the non-zero magnitudes: pass just those
                    theta = l1_threshold(mags[:n_nz], R, work[2 * d :])
                    _rebase_shrunk(u, v1, base, corr, scal, w, theta)
        else:
            sigma, tau = scal[_SIGMA], scal[_TAU]
            sq = (
                tau * tau * scal[_NRM2_V1]
                + 2.0 * tau * sigma * scal[_DOT_UV1]
                + sigma * sigma * scal[_NRM2_U]
            )
            if sq > R * R:
                f = R / math.sqrt(sq)
                scal[_SIGMA] = sigma * f
                scal[_TAU] = tau * f
        a = min(max(a, -rk), rk)
        b = min(max(b, -rk), rk)
        sigma, tau = scal[_SIGMA], scal[_TAU]
        a1, b1 = scal[_A1], scal[_B1]
        tm1 = tau - 1.0
        dist_sq = (
            tm1 * tm1 * scal[_NRM2_V1]
            + 2.0 * tm1 * sigma * scal[_DOT_UV1]
            + sigma * sigma * scal[_NRM2_U]
            + (a - a1) ** 2
            + (b - b1) ** 2
        )
        radius = scal[_RADIUS]
        if dist_sq > radius * radius:
            rho = radius / math.sqrt(dist_sq)
            scal[_TAU] = 1.0 + rho * tm1
            scal[_SIGMA] = sigma * rho
            a = a1 + rho * (a - a1)
            b = b1 + rho * (b - b1)
        scal[_A] = a
        scal[_B] = b
        # (e) dual projection onto Omega_2 and B(alpha1, D)
        alpha1, D = scal[_ALPHA1], scal[_D]
        scal[_ALPHA] = min(max(alpha_new, max(-ak, alpha1 - D)), min(ak, alpha1 + D))
        # (f) running sum of the updated iterates
        scal[_C] += scal[_SIGMA]
        scal[_SUM_TAU] += scal[_TAU]
        scal[_SUM_A] += a
        scal[_SUM_B] += b
        counts[_IN_STAGE] += 1
        in_stage = counts[_IN_STAGE]
        if scal[_SIGMA] < _MIN_SIGMA or in_stage % _FLUSH_EVERY == 0:
            w = work[:d]
            _explicit_w(u, v1, scal, w)
            _rebase(u, v1, base, corr, scal, w)
        if n0 > 0 and in_stage == n0:
            is_last = counts[_STAGE] >= n_stages
            if not (is_last and last_stage):
                _end_stage(
                    u,
                    v1,
                    base,
                    corr,
                    acc_pos,
                    acc_neg,
                    scal,
                    counts,
                    n0,
                    R,
                    kappa,
                    delta,
                    per_stage,
                    not is_last,
                    work,
                )
    return dropped


class FSAUC(BaseStreamingAUC):
    """Fast stochastic AUC maximization (FSAUC), multi-stage primal-dual SGD.

    See the module docstring for the algorithm (L18 Algs. 1-3, Lemma 1; SPEC §11).
    Memory is O(d); the work per example is O(k) for k non-zeros except when the
    l1 projection is active (O(d)), plus O(d) once per stage.

    Parameters
    ----------
    R : float, default=1.0
        Radius of the constraint on w (boxes of radius R kappa for a, b and
        2 R kappa for alpha). Tuned over 10^[-1:5] in L18 §5. Library default.
    eta1 : float, default=1.0
        Step size of the first stage; tuned over 2^[-10:10] in L18 §5, which tunes
        eta1 in place of G. Library default.
    n_samples : int or None, default=None
        Length n of the stream, which fixes the stage schedule. None: ``fit`` uses
        ``X.shape[0]`` and ``partial_fit`` warns and runs a single stage.
    kappa : float, default=1.0
        Bound on ||x||_2 (1 for l2-normalized rows, the papers' setting).
    constraint : {"l1", "l2"}, default="l1"
        Ball for w: ||w||_1 <= R (L18 Eq. 2) or ||w||_2 <= R.
    leftover : {"drop", "last_stage"}, default="drop"
        What happens to the examples after the first m * n0 (see the module
        docstring): ignored (faithful) or added to the last stage.
    accumulators : {"global", "per_stage"}, default="global"
        Class counts and sums over the whole stream (L18 Remark, authors' code) or
        reset at every stage (L18 Alg. 2, line 1).
    delta : float, default=0.1
        Confidence level in Lemma 1 (authors' code).
    shuffle : bool, default=False
        Whether ``fit`` visits the examples in a random order (still one pass).
    random_state : int, Generator or None, default=None
        Seed of the shuffle.

    Attributes
    ----------
    n_stages_, stage_length_ : int
        m and n0 of the schedule (``stage_length_ = -1``: one unbounded stage).
    n_announced_ : int
        The stream length the schedule was built for (-1 if unknown).
    u_, v1_, avg_base_, avg_corr_ : ndarray of shape (n_features,)
        Lazy form of the iterate ``w = tau v1 + sigma u`` and of the stage's sum of
        iterates; ``v1_`` is the stage's starting point (the previous output).
    acc_pos_, acc_neg_ : ndarray of shape (n_features,)
        Sums of the positive and negative examples (Alg. 3).
    scalars_ : ndarray of shape (21,)
        sigma, tau, sums, a, b, alpha, their stage starts, radius r, D, beta, eta,
        and the maintained norms.
    counts_ : ndarray of shape (6,)
        Examples used, stage index k, examples in the stage, T+, T-, finished flag.
    classes_, n_samples_seen_, n_features_in_
        As for every aucstream learner.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.fsauc import FSAUC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(1000, 5))
    >>> y = np.where(X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=1000) > 0, 1, -1)
    >>> X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> model = FSAUC(R=10.0, eta1=0.5).fit(X, y)
    >>> model.n_stages_, model.stage_length_
    (2, 500)
    >>> model.score(X, y) > 0.85
    True
    """

    stream_length_param = "n_samples"
    param_grid = {
        "R": [10.0**k for k in range(-1, 6)],
        "eta1": [2.0**k for k in range(-10, 11)],
    }

    def __init__(
        self,
        R: float = 1.0,
        eta1: float = 1.0,
        n_samples: int | None = None,
        kappa: float = 1.0,
        constraint: str = "l1",
        leftover: str = "drop",
        accumulators: str = "global",
        delta: float = 0.1,
        shuffle: bool = False,
        random_state=None,
    ):
        self.R = R
        self.eta1 = eta1
        self.n_samples = n_samples
        self.kappa = kappa
        self.constraint = constraint
        self.leftover = leftover
        self.accumulators = accumulators
        self.delta = delta
        self.shuffle = shuffle
        self.random_state = random_state

    @classmethod
    def _unit_test_params(cls) -> dict:
        """Constructor arguments for the common checks (a 120-example stream)."""
        return {"n_samples": 120, "leftover": "last_stage"}

    def _init_state(self, n_features: int) -> None:
        for name in ("R", "eta1", "kappa"):
            value = getattr(self, name)
            if not (
                isinstance(value, (numbers.Real, np.number)) and value > 0 and np.isfinite(value)
            ):
                raise ValueError(f"{name} must be a positive finite number, got {value!r}")
        if not (isinstance(self.delta, (numbers.Real, np.number)) and 0 < self.delta < 1):
            raise ValueError(f"delta must lie in (0, 1), got {self.delta!r}")
        if self.constraint not in ("l1", "l2"):
            raise ValueError(f"constraint must be 'l1' or 'l2', got {self.constraint!r}")
        if self.leftover not in ("drop", "last_stage"):
            raise ValueError(f"leftover must be 'drop' or 'last_stage', got {self.leftover!r}")
        if self.accumulators not in ("global", "per_stage"):
            raise ValueError(
                f"accumulators must be 'global' or 'per_stage', got {self.accumulators!r}"
            )
        n = self.n_samples
        if n is not None and (isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1):
            raise ValueError(f"n_samples must be None or a positive integer, got {n!r}")
        if n is None:  # fit announces the length in _begin_pass; partial_fit cannot
            self.n_stages_, self.stage_length_, self.n_announced_ = 1, -1, -1
        else:
            self.n_stages_, self.stage_length_ = fsauc_schedule(n)
            self.n_announced_ = int(n)
        R, kappa = float(self.R), float(self.kappa)
        r0 = 2.0 * math.sqrt(1.0 + 2.0 * kappa**2) * R
        self.u_ = np.zeros(n_features)
        self.v1_ = np.zeros(n_features)
        self.avg_base_ = np.zeros(n_features)
        self.avg_corr_ = np.zeros(n_features)
        self.acc_pos_ = np.zeros(n_features)
        self.acc_neg_ = np.zeros(n_features)
        s = np.zeros(_N_SCALARS)
        s[_SIGMA] = s[_TAU] = 1.0
        s[_RADIUS] = r0
        s[_D] = 2.0 * math.sqrt(2.0) * kappa * r0
        s[_BETA] = 1.0 + 8.0 * kappa**2
        s[_ETA] = float(self.eta1)
        self.scalars_ = s
        self.counts_ = np.zeros(6, dtype=np.int64)
        self.counts_[_STAGE] = 1

    def _begin_pass(self, y_pm: np.ndarray) -> None:
        """``fit`` knows the stream length: n is ``n_samples`` or ``len(y)``."""
        if self.n_samples is None:
            self.n_stages_, self.stage_length_ = fsauc_schedule(y_pm.shape[0])
            self.n_announced_ = int(y_pm.shape[0])

    def _update(self, chunk: Chunk) -> None:
        if self.n_announced_ < 0 and self.n_samples_seen_ == 0:
            warnings.warn(
                "FSAUC needs the stream length to set its stage schedule; pass "
                "n_samples=... to use partial_fit. Running the stream as a single stage.",
                UserWarning,
                stacklevel=4,
            )
        d = self.u_.shape[0]
        work = np.empty(4 * d)
        dropped = _fsauc_chunk(
            self.u_,
            self.v1_,
            self.avg_base_,
            self.avg_corr_,
            self.acc_pos_,
            self.acc_neg_,
            self.scalars_,
            self.counts_,
            chunk.indptr,
            chunk.indices,
            chunk.data,
            chunk.y,
            float(self.R),
            float(self.kappa),
            float(self.delta),
            self.n_stages_,
            self.stage_length_,
            self.constraint == "l1",
            self.leftover == "last_stage",
            self.accumulators == "per_stage",
            work,
        )
        seen_after = self.n_samples_seen_ + chunk.n_samples
        if dropped and self.n_samples_seen_ <= self.n_announced_ < seen_after:
            warnings.warn(
                f"the stream is longer than the announced n_samples={self.n_announced_}; "
                "FSAUC's schedule is complete and further examples are ignored "
                "(leftover='drop'). Use leftover='last_stage' to keep learning.",
                UserWarning,
                stacklevel=4,
            )

    def _coef(self) -> np.ndarray:
        count = int(self.counts_[_IN_STAGE])
        if count == 0 or self.counts_[_DONE]:
            return self.v1_.copy()
        out = np.empty_like(self.u_)
        _stage_average(self.u_, self.v1_, self.avg_base_, self.avg_corr_, self.scalars_, count, out)
        return out

    def _iterate(self) -> tuple[np.ndarray, float, float, float]:
        """The current (not averaged) iterate (w, a, b, alpha)."""
        s = self.scalars_
        w = s[_TAU] * self.v1_ + s[_SIGMA] * self.u_
        return w, float(s[_A]), float(s[_B]), float(s[_ALPHA])

    def _stage_state(self) -> dict:
        """Stage index, examples in it, and the stage's v1, alpha1, r, D, eta."""
        s = self.scalars_
        return {
            "stage": int(self.counts_[_STAGE]),
            "in_stage": int(self.counts_[_IN_STAGE]),
            "done": bool(self.counts_[_DONE]),
            "v1": self.v1_.copy(),
            "a1": float(s[_A1]),
            "b1": float(s[_B1]),
            "alpha1": float(s[_ALPHA1]),
            "radius": float(s[_RADIUS]),
            "D": float(s[_D]),
            "eta": float(s[_ETA]),
            "beta": float(s[_BETA]),
        }
