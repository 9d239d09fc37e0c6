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

import numba as nb
import numpy as np
from numpy.typing import ArrayLike

from ._kernels import REASSOC, count_nonzero
from .projections import _NO_BITS, _bits_of_float, _float_of_bits, l1_threshold_passes

__all__ = [
    "clip",
    "project_l1_lazy",
    "project_l1_scaled",
    "rebase",
    "saddle_grad_scalars",
    "saddle_gradient",
    "saddle_objective",
]


@nb.njit(cache=True)
def saddle_grad_scalars(s, y, p, a, b, alpha):
    """Gradient of F at (w, a, b, alpha) for one example with score ``s = w.x``.

    Returns ``(g, g_a, g_b, g_alpha)`` with ``grad_w F = g * x`` (module docstring).
    """
    if y > 0:
        q = 2.0 * (1.0 - p)
        return q * (s - a - 1.0 - alpha), -q * (s - a), 0.0, -q * (s + p * alpha)
    q = 2.0 * p
    return q * (s - b + 1.0 + alpha), 0.0, -q * (s - b), q * (s - (1.0 - p) * alpha)


@nb.njit(cache=True)
def clip(v, lo, hi):
    """``v`` clipped to [lo, hi] (the projection onto an interval)."""
    return min(max(v, lo), hi)


@nb.njit(cache=True, fastmath=REASSOC, inline="always")
def rebase(lz, c, center, tau, sigma, theta):
    r"""Fold the running sum into ``base`` and restart u from the explicit iterate.

    The iterate is :math:`w = \tau v_1 + \sigma u` (``center`` = :math:`v_1`, or None
    for :math:`w = \sigma u`), soft-thresholded by ``theta`` (the l1-ball projection;
    ``theta = 0`` changes nothing). Afterwards :math:`w = v_1 + u`
    (:math:`\sigma = \tau = 1`, ``c = 0``, ``corr = 0``). One pass without branches on
    the data, so it vectorizes; ``center is None`` is decided when numba compiles, so
    each learner gets a single loop. It is inlined into its callers, which are all
    compiled with the same ``fastmath`` reassociation.

    Returns
    -------
    nrm2, dot, nrm1 : float
        :math:`\|u\|_2^2`, :math:`u^\top v_1` and :math:`\|u\|_1`, recomputed exactly.
    """
    u, base, corr = lz
    nrm2 = 0.0
    dot = 0.0
    nrm1 = 0.0
    if center is None:
        for i in range(u.shape[0]):
            ui = u[i]
            base[i] += c * ui - corr[i]
            corr[i] = 0.0
            wi = sigma * ui
            ui = math.copysign(max(abs(wi) - theta, 0.0), wi)
            u[i] = ui
            nrm2 += ui * ui
            nrm1 += abs(ui)
    else:
        for i in range(u.shape[0]):
            ui, ci = u[i], center[i]
            base[i] += c * ui - corr[i]
            corr[i] = 0.0
            wi = tau * ci + sigma * ui
            ui = math.copysign(max(abs(wi) - theta, 0.0), wi) - ci
            u[i] = ui
            nrm2 += ui * ui
            dot += ui * ci
            nrm1 += abs(ui)
    return nrm2, dot, nrm1


@nb.njit(cache=True, fastmath=REASSOC, inline="always")
def _magnitudes(u, center, tau, sigma, mags):
    """``mags = |tau center + sigma u|`` (``center`` None: ``|sigma u|``); returns
    their sum and the number of non-zeros."""
    total = 0.0
    count = 0
    if center is None:
        for i in range(u.shape[0]):
            m = abs(sigma * u[i])
            mags[i] = m
            total += m
            count += m > 0.0
    else:
        for i in range(u.shape[0]):
            m = abs(tau * center[i] + sigma * u[i])
            mags[i] = m
            total += m
            count += m > 0.0
    return total, count


@nb.njit(cache=True, fastmath=REASSOC, inline="always")
def project_l1_lazy(lz, c, center, tau, sigma, radius, work):
    r"""Project :math:`w = \tau v_1 + \sigma u` onto :math:`\|w\|_1 \le` ``radius``.

    ``center`` is :math:`v_1`, or None for :math:`w = \sigma u`. Computes the exact
    :math:`\|w\|_1` in one pass; if it exceeds the radius, finds the soft threshold
    :math:`\theta` by Michelot's passes
    (:func:`aucstream.projections.l1_threshold_passes`) and rebases the lazy iterate
    onto the projection (:func:`rebase`). Michelot's passes stop as soon as the
    candidate set is their fixed point, without a pass that only confirms it, so a
    projection after one step usually costs three vectorized passes over d floats.
    The passes and the rebase are inlined here (a call that is not inlined costs a
    reference count per array). ``work`` holds at least 4 d floats.

    Returns
    -------
    moved : bool
        Whether the projection was active (then sigma = tau = 1 and c = 0).
    total : float
        :math:`\|w\|_1` before the projection.
    norms : tuple of float
        With ``moved``: :math:`(\|u\|_2^2, u^\top v_1, \|u\|_1)` after the rebase.
    """
    d = lz.u.shape[0]
    mags = work[:d]
    total, count = _magnitudes(lz.u, center, tau, sigma, mags)
    if not total > radius:
        return False, total, (0.0, 0.0, 0.0)
    theta = l1_threshold_passes(mags, total, count, radius, work[d:])
    return True, total, rebase(lz, c, center, tau, sigma, theta)


#: Relative margin by which the maintained l1 norm is lowered into a lower bound of the
#: exact one (:func:`project_l1_scaled`): far above its round-off.
L1_MARGIN = 2.0**-30


@nb.njit(cache=True, fastmath=REASSOC, inline="always")
def project_l1_scaled(lz, c, sigma, radius, nrm1, nnz, work):
    r"""Project :math:`w = \sigma u` onto :math:`\|w\|_1 \le` ``radius``, warm-started.

    The same projection as :func:`project_l1_lazy` with ``center`` None, given the
    maintained :math:`\|u\|_1` (``nrm1``, exact up to round-off) and the exact number
    ``nnz`` of non-zeros of u (a float; :func:`aucstream._kernels.lazy_axpy` keeps both), so
    that the pass computing :math:`\|w\|_1` is skipped:

    * Michelot's passes (:func:`aucstream.projections.l1_threshold_passes`) reach the
      same fixed point, the threshold :math:`\theta`, from any
      :math:`\rho_0 \le \theta`: each pass keeps every magnitude above
      :math:`\theta`, so its :math:`\rho` stays :math:`\le \theta`. Their first
      :math:`\rho` (over all non-zeros) is :math:`(\|w\|_1 - R)/\mathrm{nnz}`; here
      :math:`\rho_0` is that value with :math:`\|w\|_1` lowered by the relative
      margin ``L1_MARGIN`` (far above the round-off of ``nrm1``), which can only
      lower it.
    * The first pass also certifies :math:`\rho_0 \le \theta`: its set
      :math:`V_1 = \{m > \rho_0\}` gives :math:`\rho_1 = (\sum_{V_1} m - R)/|V_1|
      \ge \rho_0` whenever :math:`\rho_0 \le \theta` and :math:`\rho_0` is below
      Michelot's first :math:`\rho` (then
      :math:`\sum_{V_1}(m - \rho_0) \ge \|w\|_1 - \mathrm{nnz}\,\rho_0 \ge R`),
      while :math:`\rho_0 > \theta` forces :math:`\rho_1 < \rho_0` (:math:`V_1`
      then misses magnitudes of the projection's support, or equals it and
      :math:`\rho_1 = \theta`); so does :math:`\|w\|_1 \le R` (no projection).
      Without the certificate, or when the lowered norm is not above the radius, the
      exact path (:func:`project_l1_lazy`) runs.
    * As in :func:`~aucstream.projections.l1_threshold_passes`, when the smallest
      member of :math:`V_1` exceeds :math:`\rho_1`, :math:`V_1` is the fixed point and
      :math:`\theta = \rho_1`: with the rebase (:func:`rebase`), two vectorized
      passes over d floats on most steps.

    The final threshold is computed from a fresh sum over the final set, as before, so
    the result equals that of the exact path up to the order of that sum (rounding);
    every decision depends on the state only (u, ``nrm1``, ``nnz``), not on how the
    stream is cut into chunks. ``work`` holds at least 4 d floats.

    Returns
    -------
    moved : bool
        Whether the projection was active (then sigma = 1 and c = 0).
    norms : tuple of float
        With ``moved``: :math:`(\|u\|_2^2, 0, \|u\|_1)` after the rebase.
    nnz : float
        The number of non-zeros of u afterwards (a float: an exact small integer).
    """
    theta, nnz_after = _threshold_scaled(lz.u, sigma, radius, nrm1, nnz, work)
    if theta > 0.0:
        norms = rebase(lz, c, None, 1.0, sigma, theta)
        return True, norms, nnz_after if nnz_after >= 0.0 else float(count_nonzero(lz.u))
    moved, _, norms = project_l1_lazy(lz, c, None, 1.0, sigma, radius, work)
    return moved, norms, float(count_nonzero(lz.u)) if moved else nnz


@nb.njit(cache=True, fastmath=REASSOC, inline="always")
def _threshold_scaled(u, sigma, radius, nrm1, nnz, work):
    """The threshold of :func:`project_l1_scaled` and the non-zeros it leaves (-1:
    not known); theta = -1 when the warm start is not certified."""
    d = u.shape[0]
    scaled = abs(sigma) * nrm1
    lower = scaled - L1_MARGIN * (scaled + radius)
    if not (lower > radius and nnz > 0):
        return -1.0, nnz
    rho = (lower - radius) / nnz
    s = 0.0
    k = 0
    low = _NO_BITS
    for i in range(d):
        m = abs(sigma * u[i])
        keep = m > rho
        s += m if keep else 0.0
        k += keep
        low = min(low, _bits_of_float(m) if keep else _NO_BITS)
    if k == 0 or not (s - radius) / k >= rho:  # rho <= theta not certified
        return -1.0, nnz
    rho1 = (s - radius) / k
    if _float_of_bits(low) > rho1:  # V1 is the fixed point: k non-zeros afterwards
        return rho1, float(k)
    mags = work[:d]
    _magnitudes(u, None, 1.0, sigma, mags)
    return l1_threshold_passes(mags, s, k, radius, work[d:]), -1.0


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
