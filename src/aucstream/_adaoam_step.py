"""AdaOAM's compiled step: D16 Alg. 1 over a chunk, its gradient, its AdaGrad step and
its projections (the math and the deviations are in :mod:`aucstream.adaoam`)."""

from __future__ import annotations

import math

import numpy as np

from ._kernels import jit, n_rows, row, sparse_axpy, sparse_dot
from ._running_scale import grow_scale, scaled_dot
from ._sadaoam_step import advance_clocks, forget_weight
from .covariance import add_example, borrowing_njit, borrowing_step, cov_matvec, own_and_opposite

#: Projection codes of the AdaOAM kernel.
NO_PROJECTION, EUCLIDEAN, H_NORM = 0, 1, 2


@borrowing_njit
def _h_project(u, h, radius):
    """Project ``u`` in place onto ``||u|| <= radius`` in the norm of diag(h); return mu.

    ``h > 0``. The solution is ``h_i u_i / (h_i + mu)`` with ``||.|| = radius``; mu is
    found by Newton steps on phi(mu) = 1/||u(mu)|| - 1/radius (increasing, concave),
    kept inside the bracket [lo, hi] with bisection as a safeguard.
    """
    d = u.shape[0]
    sq = 0.0
    h_max = 0.0
    for i in range(d):
        sq += u[i] * u[i]
        if h[i] > h_max:
            h_max = h[i]
    if not (radius < np.inf) or sq <= radius * radius:
        return 0.0
    norm = math.sqrt(sq)
    lo = 0.0
    hi = h_max * (norm / radius - 1.0)  # ||u(hi)|| <= radius
    mu = 0.0
    inv_r = 1.0 / radius
    for _ in range(200):
        q = 0.0
        dq = 0.0
        for i in range(d):
            f = h[i] / (h[i] + mu)
            t = f * u[i]
            q += t * t
            dq += t * t / (h[i] + mu)  # -(1/2) dq/dmu
        n = math.sqrt(q)
        if abs(n - radius) <= 1e-13 * radius:
            break
        phi = 1.0 / n - inv_r
        if phi < 0.0:
            lo = mu
        else:
            hi = mu
        # d(1/n)/dmu = (sum t^2/(h+mu)) / n^3
        step = phi / (dq / (n * q))
        new = mu - step
        if not (lo < new < hi):
            new = 0.5 * (lo + hi)
        if new == mu or hi - lo <= 1e-16 * hi:
            break
        mu = new
    for i in range(d):
        u[i] = h[i] * u[i] / (h[i] + mu)
    return mu


@borrowing_step
def _exact_gradient(w, idx, val, y, opp, cov_w, c_w, lam, omega, g):
    """``g = omega (lam w + S w + alpha (x - c))`` with ``alpha = e^T w - y``, ``e = x
    - c`` (opposite class ``opp``; ``cov_w`` = ``S w``, ``c_w`` = ``c^T w``)."""
    inv_t = 1.0 / opp.weight[0]
    alpha = (sparse_dot(w, idx, val) - c_w) - y  # e^T w - y
    sums = opp.sums
    for i in range(w.shape[0]):
        g[i] = lam * w[i] + cov_w[i] - alpha * (sums[i] * inv_t)
    sparse_axpy(g, alpha, idx, val)
    if omega != 1.0:
        for i in range(w.shape[0]):
            g[i] *= omega


@borrowing_step
def _adagrad_step(w, s, g, h, eta, delta, gamma):
    """``s = gamma s + g^2``, ``h = delta + sqrt(s)``, ``w -= eta g / h``; return
    ``|w|^2``."""
    sq = 0.0
    for i in range(w.shape[0]):
        if gamma < 1.0:  # forgetting (module docstring)
            s[i] *= gamma
        s[i] += g[i] * g[i]
        h[i] = delta + math.sqrt(s[i])
        w[i] -= eta * g[i] / h[i]
        sq += w[i] * w[i]
    return sq


@borrowing_step
def _project(w, h, sq, projection, radius):
    """Project w (with ``|w|^2 = sq``) onto the ball of the given radius."""
    if projection == H_NORM:
        _h_project(w, h, radius)
    elif projection == EUCLIDEAN and sq > radius * radius:
        scale = radius / math.sqrt(sq)
        for i in range(w.shape[0]):
            w[i] *= scale


@jit
def _adaoam_chunk(w, s, steps, clocks, classes, rows, pre, weights, settings, scale):
    """AdaOAM (D16 Alg. 1) over the rows; ``classes``: the two summaries' arrays.
    When ``pre`` has one entry per row, each row's score ``w^T x`` before it is
    learnt is written there; ``weights`` is empty or holds the examples' weights.
    With ``settings.rescale``, w holds the weights of the columns in their running
    ``scale`` (module docstring, "Columns in their running scale")."""
    d = w.shape[0]
    scratch = (np.empty(d), np.empty(d), np.empty(d), np.empty(d))
    _adaoam_rows(w, s, steps, clocks, classes, rows, pre, weights, settings, scale, scratch)


@borrowing_njit
def _adaoam_rows(w, s, steps, clocks, classes, rows, pre, weights, settings, scale, scratch):
    """:func:`_adaoam_chunk`'s loop, its scratch (``S w``, the gradient, the AdaGrad
    divisors and the raw weights) allocated: compiled without reference counts."""
    cov_w, g, h, raw_w = scratch
    d = w.shape[0]
    n = n_rows(rows)
    scores = pre.shape[0] == n
    weighted = weights.shape[0] == n
    for r in range(n):
        idx, val, y = row(rows, r)
        if scores:
            pre[r] = scaled_dot(w, scale, idx, val) if settings.rescale else sparse_dot(w, idx, val)
        omega = weights[r] if weighted else 1.0
        if omega == 0.0:
            continue
        own, opp = own_and_opposite(classes, y)
        advance_clocks(classes, clocks, settings.step)
        added = forget_weight(clocks, 1 if y > 0 else 0, settings.step, omega)
        add_example(own, idx, val, added)  # exact summaries never run out of room
        if settings.rescale:
            grow_scale(scale, idx, val, 0.0)
        if opp.count[0] == 0:
            continue
        if settings.rescale:  # the gradient in w~ = s w: lam w~ + (S w + alpha e) / s
            for i in range(d):
                raw_w[i] = w[i] / scale[i] if scale[i] > 0.0 else 0.0
            c_w = cov_matvec(opp, raw_w, cov_w)
            _exact_gradient(raw_w, idx, val, y, opp, cov_w, c_w, 0.0, omega, g)
            for i in range(d):
                g[i] = omega * settings.lam * w[i] + (g[i] / scale[i] if scale[i] > 0.0 else 0.0)
        else:
            c_w = cov_matvec(opp, w, cov_w)
            _exact_gradient(w, idx, val, y, opp, cov_w, c_w, settings.lam, omega, g)
        sq = _adagrad_step(w, s, g, h, settings.eta, settings.delta, settings.gamma)
        _project(w, h, sq, settings.projection, settings.radius)
        steps[0] += 1
