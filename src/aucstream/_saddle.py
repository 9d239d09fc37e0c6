r"""The square-loss AUC saddle problem shared by SOLAM and FSAUC.

Ying, Wen and Lyu (NIPS 2016, "Y16") write the square-loss AUC risk as a saddle
problem, restated by Liu et al. (ICML 2018, "L18", §3.1): with
:math:`v = (w, a, b) \in \mathbb R^{d+2}`, a dual variable :math:`\alpha` and
:math:`p = \Pr(y = 1)`, it equals :math:`\min_v \max_\alpha \mathbb E_z F(v, \alpha; z)`
with

.. math::

    F(v, \alpha; z) = (1-p)(w^\top x - a)^2 \mathbb I_{y=1}
        + p(w^\top x - b)^2 \mathbb I_{y=-1}
        + 2(1+\alpha)\big(p\, w^\top x\, \mathbb I_{y=-1}
        - (1-p)\, w^\top x\, \mathbb I_{y=1}\big) - p(1-p)\alpha^2 .

With :math:`s = w^\top x` its gradients (differentiate the line above) are

* :math:`y=+1`: :math:`\nabla_w = 2(1-p)(s-a-1-\alpha)x`,
  :math:`\nabla_a = -2(1-p)(s-a)`, :math:`\nabla_b = 0`,
  :math:`\nabla_\alpha = -2(1-p)(s+p\alpha)`;
* :math:`y=-1`: :math:`\nabla_w = 2p(s-b+1+\alpha)x`, :math:`\nabla_a = 0`,
  :math:`\nabla_b = -2p(s-b)`, :math:`\nabla_\alpha = 2p(s-(1-p)\alpha)`.

The gradient in w is a multiple of x, so both learners step only the k non-zeros of
x and keep their iterate lazily scaled (:mod:`aucstream._kernels`). This module
holds what they share: the gradient scalars, clipping, the fold of the lazy form,
and the exact l1-ball projection of a lazily represented iterate
:math:`w = \tau v_1 + \sigma u` (the lazy step itself, sparse or dense rows, is
:func:`aucstream._kernels.lazy_axpy`).

The dense passes here (a dense row's step, the fold, the projection) run with
``fastmath`` reassociation (:data:`aucstream._kernels.REASSOC`) so that their sums
vectorize: results change by rounding only.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ._kernels import REASSOC, col, jit
from .projections import l1_threshold_warm

__all__ = [
    "clip",
    "l1_change",
    "project_l1_lazy",
    "warm_start",
    "rebase",
    "saddle_grad_scalars",
    "saddle_gradient",
    "saddle_objective",
]


@jit(fastmath=REASSOC)
def saddle_grad_scalars(s, y, p, a, b, alpha):
    """Gradient of F at (w, a, b, alpha) for one example with score ``s = w.x``.

    Returns ``(g, g_a, g_b, g_alpha)`` with ``grad_w F = g * x`` (module docstring).
    """
    if y > 0:
        q = 2.0 * (1.0 - p)
        return q * (s - a - 1.0 - alpha), -q * (s - a), 0.0, -q * (s + p * alpha)
    q = 2.0 * p
    return q * (s - b + 1.0 + alpha), 0.0, -q * (s - b), q * (s - (1.0 - p) * alpha)


@jit(fastmath=REASSOC)
def clip(v, lo, hi):
    """``v`` clipped to [lo, hi] (the projection onto an interval)."""
    return min(max(v, lo), hi)


@jit(fastmath=REASSOC, inline="llvm")
def rebase(lz, c, center, tau, sigma, theta):
    r"""Fold the running sum into ``base`` and restart u from the explicit iterate.

    The iterate is :math:`w = \tau v_1 + \sigma u` (``center`` = :math:`v_1`, or None
    for :math:`w = \sigma u`), soft-thresholded by ``theta`` (the l1-ball projection;
    ``theta = 0`` changes nothing). Afterwards :math:`w = v_1 + u`
    (:math:`\sigma = \tau = 1`, ``c = 0``, ``corr = 0``). A pass without branches on
    the data, so it vectorizes, then one that sums the norms (apart from the stores:
    "Sums" in :mod:`aucstream._kernels._compile`); ``center is None`` is decided when
    numba compiles, so each learner gets one version. Compiled once per argument
    layout and inlined by LLVM (``inline="llvm"``), not by numba, which typed it again
    and copied its IR at every call site of every kernel. Its own ``fastmath`` is its
    callers' (reassociation), so its code is the one numba's inlining made.

    Returns
    -------
    nrm2, dot, nrm1 : float
        :math:`\|u\|_2^2`, :math:`u^\top v_1` and :math:`\|u\|_1`, recomputed exactly.
    """
    u, base, corr = lz
    nrm2 = 0.0
    dot = 0.0
    nrm1 = 0.0
    # the norms are summed in passes of their own, which only read: a loop that both
    # writes and sums under reassociation sums in an order that depends on where the
    # arrays lie in memory (aucstream._kernels, "Sums")
    if center is None:
        for i in range(u.shape[0]):
            ui = u[i]
            base[i] += c * ui - corr[i]
            corr[i] = 0.0
            wi = sigma * ui
            u[i] = math.copysign(max(abs(wi) - theta, 0.0), wi)
        for i in range(u.shape[0]):
            ui = u[i]
            nrm2 += ui * ui
            nrm1 += abs(ui)
    else:
        for i in range(u.shape[0]):
            ui, ci = u[i], center[i]
            base[i] += c * ui - corr[i]
            corr[i] = 0.0
            wi = tau * ci + sigma * ui
            u[i] = math.copysign(max(abs(wi) - theta, 0.0), wi) - ci
        for i in range(u.shape[0]):
            ui = u[i]
            nrm2 += ui * ui
            dot += ui * center[i]
            nrm1 += abs(ui)
    return nrm2, dot, nrm1


@jit(fastmath=REASSOC, inline="always")
def l1_change(u, center, tau, sigma, coef, idx, val):
    r"""How a step ``u += coef * x`` (:func:`aucstream._kernels.lazy_axpy`) changes
    :math:`\|w\|_1` and the number of non-zeros of :math:`w = \tau v_1 + \sigma u`.

    ``center`` is :math:`v_1`, or None for :math:`w = \sigma u`; the row x is
    (``idx``, ``val``), or the dense row ``val`` when ``idx`` is None. Computed before
    the step from the entries it will change (O(k)), so that it does not wait for the
    step's stores; the new entries are computed as the step computes them.
    """
    dnorm = 0.0
    dnnz = 0
    for a in range(val.shape[0]):
        i = col(idx, a)
        old = u[i]
        new = old + coef * val[a]
        c = 0.0 if center is None else tau * center[i]
        m_old = abs(c + sigma * old)
        m_new = abs(c + sigma * new)
        dnorm += m_new - m_old
        dnnz += (m_new != 0.0) - (m_old != 0.0)
    return dnorm, dnnz


#: Relative margin by which a running l1 norm is lowered before it gives the warm
#: start of the projection (:func:`warm_start`): far above its round-off.
L1_MARGIN = 2.0**-30


@jit(inline="always")
def warm_start(norm, nnz, radius):
    r"""A start for Michelot's passes from a running :math:`\|w\|_1` (``norm``) and
    the number ``nnz`` of non-zeros of w (0 or less: not known).

    Michelot's first :math:`\rho`, :math:`(\|w\|_1 - R)/\mathrm{nnz}`, with the norm
    lowered by the relative margin ``L1_MARGIN`` so that its round-off does not put the
    start above the threshold; 0 (the exact start) without an estimate. Any start
    gives the same threshold (:func:`aucstream.projections.l1_threshold_warm`); a good
    one saves a pass over w.
    """
    lower = norm - L1_MARGIN * (abs(norm) + radius)
    if lower > radius and nnz > 0:
        return (lower - radius) / nnz
    return 0.0


@jit(fastmath=REASSOC, inline="llvm")
def project_l1_lazy(lz, c, center, tau, sigma, radius, rho0, work):
    r"""Project :math:`w = \tau v_1 + \sigma u` onto :math:`\|w\|_1 \le` ``radius``.

    ``center`` is :math:`v_1`, or None for :math:`w = \sigma u`. Finds the soft
    threshold :math:`\theta` by Michelot's passes from the start ``rho0``
    (:func:`aucstream.projections.l1_threshold_warm`: any start gives the same
    :math:`\theta` bit for bit, so the start may come from estimates kept within a
    chunk; :func:`warm_start`) and, if the projection is active, rebases the lazy
    iterate onto the projection (:func:`rebase`). From a start close below
    :math:`\theta`, one pass over d floats usually finds it, and the rebase is the
    second. The passes are inlined into this function, which is compiled once per
    argument layout and inlined by LLVM into its callers, as :func:`rebase`.
    ``work`` holds at least 3 d floats.

    Returns
    -------
    theta : float
        The soft threshold; > 0 when the projection was active (then sigma = tau = 1
        and c = 0).
    norm : float
        :math:`\|w\|_1` afterwards (up to rounding: ``radius`` when theta > 0).
    nnz : int
        The number of non-zeros of w afterwards.
    norms : tuple of float
        With theta > 0: :math:`(\|u\|_2^2, u^\top v_1, \|u\|_1)` after the rebase.
    """
    theta, nnz, norm = l1_threshold_warm(lz.u, center, tau, sigma, radius, rho0, work)
    if theta > 0.0:
        return theta, norm, nnz, rebase(lz, c, center, tau, sigma, theta)
    return theta, norm, nnz, (0.0, 0.0, 0.0)


def saddle_objective(
    w: ArrayLike, a: float, b: float, alpha: float, x: ArrayLike, y: float, p: float
) -> float:
    r"""F(v, alpha; z) of the saddle problem (Y16; L18 §3.1) for one example.

    Parameters
    ----------
    w : array-like of shape (d,)
        Weights.
    a, b, alpha : float
        The auxiliary primal variables and the dual variable.
    x : array-like of shape (d,)
        The example.
    y : {+1, -1}
        Its label.
    p : float
        The positive-class probability (or its estimate).

    Returns
    -------
    float
        The value of F.
    """
    s = float(np.dot(w, x))
    pos, neg = float(y > 0), float(y <= 0)
    return (
        (1 - p) * (s - a) ** 2 * pos
        + p * (s - b) ** 2 * neg
        + 2 * (1 + alpha) * (p * s * neg - (1 - p) * s * pos)
        - p * (1 - p) * alpha**2
    )


def saddle_gradient(
    w: ArrayLike, a: float, b: float, alpha: float, x: ArrayLike, y: float, p: float
) -> tuple[np.ndarray, float, float, float]:
    """Gradient of :func:`saddle_objective` in (w, a, b, alpha), as the kernels use it.

    Parameters
    ----------
    w, a, b, alpha, x, y, p
        As for :func:`saddle_objective`.

    Returns
    -------
    grad_w : ndarray of shape (d,)
    grad_a, grad_b, grad_alpha : float
    """
    x = np.asarray(x, dtype=np.float64)
    g, g_a, g_b, g_alpha = saddle_grad_scalars(
        float(np.dot(w, x)), float(y), float(p), float(a), float(b), float(alpha)
    )
    return g * x, g_a, g_b, g_alpha
