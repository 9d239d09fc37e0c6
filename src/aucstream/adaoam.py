"""AdaOAM and SAdaOAM: adaptive-subgradient online AUC maximization.

Ding, Zhao, Hoi and Ong, *Adaptive Subgradient Methods for Online AUC Maximization*
(arXiv 1602.00351, "D16"; AAAI 2015 short version "D15"); SPEC §7-§8. The seed text of
D16 lost its displayed formulas; the equation numbers below are the ones its prose
refers to, and the formulas are the SPEC's reconstruction (SPEC §14 #8).

Objective and gradient
----------------------
Both learners minimize the regularized square pairwise loss of OPAUC (D16 §3.1,
objective (2); :mod:`aucstream.opauc`),

.. math::

    \\mathcal L(w) = \\frac\\lambda2\\|w\\|^2 + \\frac{1}{2T_+T_-}
        \\sum_{i\\in+,\\,j\\in-} \\big(1 - w^\\top(x_i - x_j)\\big)^2 ,

one example at a time. For :math:`(x_t, y_t)` the gradient of the per-step loss needs
only the mean :math:`c` and covariance :math:`\\Gamma` of the *opposite* class
(D16 Eqs. (3)-(4); G16 Eqs. 7-8):

.. math::

    g_t = \\lambda w_t - y_t e + e\\,(e^\\top w_t) + \\Gamma w_t, \\qquad e = x_t - c .

Before the step the example joins its own class's summary; while the opposite class
is still empty the step is skipped entirely (no gradient, no accumulator update,
no shrinkage; SPEC C5).

AdaOAM (D16 §3.2, Alg. 1)
-------------------------
Diagonal AdaGrad (D16 Eq. (6), the diagonal proxy of the full-matrix update (5)):

.. math::

    s \\leftarrow s + g_t \\odot g_t, \\quad h = \\delta + \\sqrt s, \\quad
    w_{t+1} = \\Pi^{H}_{\\mathcal W}\\big(w_t - \\eta\\, g_t \\oslash h\\big),

where :math:`\\Pi^H_{\\mathcal W}(v) = \\arg\\min_{\\|u\\|\\le r} (u-v)^\\top
\\mathrm{diag}(h)(u-v)` projects in the H-norm onto the ball of radius
:math:`r = 1/\\sqrt\\lambda` that contains the optimum (D16 §3.1). Its solution is
:math:`u_i = h_i v_i / (h_i + \\mu)` with :math:`\\mu \\ge 0` the root of
:math:`\\|u(\\mu)\\| = r` (SPEC C3); we find it by safeguarded Newton steps on
:math:`1/\\|u(\\mu)\\| - 1/r`, which is increasing and concave in :math:`\\mu`, so
Newton from :math:`\\mu = 0` rises monotonically to the root (the secular-equation
device of trust-region methods). The class summaries are the exact
:class:`aucstream.covariance.FullCovariance` (O(d^2) per example, dominated by
:math:`\\Gamma w`).

SAdaOAM (D16 §3.3, Alg. 2)
--------------------------
The objective gains :math:`\\theta\\|w\\|_1`, handled by AdaGrad's composite mirror
descent step (D16 §3.3, the coordinate-wise solution of the composite update):

.. math::

    u_i = w_{t,i} - \\eta g_{t,i}/h_i, \\qquad
    w_{t+1,i} = \\operatorname{sign}(u_i)\\max\\big(0, |u_i| - \\eta\\theta/h_i\\big),

the minimizer of :math:`\\eta g_i w + \\eta\\theta|w| + \\frac{h_i}2(w - w_{t,i})^2`.
The class covariances are kept in the sparse P-form that D16 §3.3 prescribes,
:math:`\\Gamma w = P w / T - c\\,(c^\\top w)` with :math:`P = \\sum x x^\\top` stored
exactly as a sparse symmetric matrix (:class:`ExactSparseCovariance`): adding an
example with k non-zeros costs O(k^2) and :math:`P w` costs O(nnz(P)).

Lazy updates (D16 §3.3, last paragraph). If :math:`g_{\\tau,i} = 0` for the steps
:math:`\\tau = t_0, \\dots, t-1`, then :math:`h_i` is frozen and those steps only
shrink :math:`w_i`:
:math:`w_{t,i} = \\operatorname{sign}(w_{t_0,i})\\max(0, |w_{t_0,i}| -
(t - t_0)\\eta\\theta/h_i)`. The learner stores the step :math:`t_0` at which each
coordinate was last brought up to date and applies the accumulated shrinkage when the
coordinate is next read or written, and when the weights are requested (``coef_``
materializes a copy; the stored state stays lazy, so splitting the stream into chunks
never changes the model).

Which coordinates have an exactly zero gradient? With the opposite class's
feature support :math:`S` (features that were non-zero in at least one of its
examples) the gradient is
:math:`g_i = \\lambda w_i + (Pw)_i/T - c_i(c^\\top w + \\alpha) + \\alpha x_i` with
:math:`\\alpha = e^\\top w - y`. Outside :math:`S` row i of P and :math:`c_i` are
exactly zero, so :math:`g_i = \\lambda w_i + \\alpha x_i`. Hence the coordinates
updated eagerly at a step are

- ``lam == 0``: :math:`S \\cup \\mathrm{supp}(x_t)` -- every other coordinate has
  :math:`g_i = 0` and is lazy; the per-example cost is O(k) plus the cost of the
  covariance summary (O(k^2) to add, O(nnz(P) + |S|) to multiply);
- ``lam > 0``: :math:`S_+ \\cup S_-` (every feature seen so far): a coordinate outside
  :math:`S` but with :math:`w_i \\neq 0` has :math:`g_i = \\lambda w_i \\neq 0`, which
  changes :math:`h_i` at every step and has no closed form, so it is updated eagerly;
  features never seen have :math:`w_i = 0` and :math:`g_i = 0` forever.

Inside :math:`S` the term :math:`(Pw)_i` couples coordinate i to every feature it
co-occurred with, so the gradient is generically dense there and no lazy form is
exact. The lazy path therefore pays off on high-dimensional data where each class's
support is a small part of the features; on data whose features all occur in both
classes it costs the same as the eager path. Lazy and eager results agree up to
rounding (one multiplication by the number of skipped steps instead of repeated
subtractions).

Deviations from D16
-------------------
- The formulas are reconstructed (SPEC §7-§8, §14 #8): diagonal AdaGrad with
  :math:`\\delta = 10^{-8}` (D16: "a very small value"), H-norm projection onto
  :math:`\\|w\\| \\le 1/\\sqrt\\lambda`; SAdaOAM has no ball projection (Alg. 2 has none).
- ``delta`` must be positive: with :math:`\\delta = 0` a coordinate whose gradient has
  always been zero would give 0/0.
- With ``lam == 0`` the ball is unbounded and no projection is made.
- SAdaOAM's default is ``lazy=True`` (SPEC §8 defaults to eager because the lazy form
  is exact only where :math:`g_i = 0`; here the lazy path falls back to eager updates
  wherever that fails, so it is exact and never slower).
- The exact sparse P makes SAdaOAM's memory O(d + nnz(P)), which can approach
  O(d^2) on data with many co-occurring features (SPEC C6).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np
from numpy.typing import ArrayLike

from ._base import BaseStreamingAUC
from ._chunks import Chunk
from .covariance import (
    ExactSparseCovariance,
    FullCovariance,
    exact_sparse_add,
    full_add,
    full_cov_matvec,
    sparse_room,
    sparse_scatter_add,
)

__all__ = [
    "AdaOAM",
    "SAdaOAM",
    "ExactSparseCovariance",
    "h_norm_projection",
    "adagrad_l1_step",
]

_PROJECTIONS = {"none": 0, "euclidean": 1, "H": 2}


# --------------------------------------------------------------------------- helpers
@nb.njit(cache=True)
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


def h_norm_projection(v: ArrayLike, h: ArrayLike, radius: float) -> np.ndarray:
    """Projection onto the Euclidean ball in the norm of ``diag(h)`` (SPEC C3).

    Solves :math:`\\min_{\\|u\\|_2 \\le r} (u - v)^\\top \\mathrm{diag}(h) (u - v)`; the
    solution is :math:`u_i = h_i v_i / (h_i + \\mu)` with :math:`\\|u\\| = r` when
    :math:`\\|v\\| > r`.

    Parameters
    ----------
    v : array-like of shape (d,)
        The point to project.
    h : array-like of shape (d,)
        Positive weights of the norm (AdaGrad's :math:`\\delta + \\sqrt{s}`).
    radius : float
        Radius r of the ball (may be ``inf``).

    Returns
    -------
    ndarray of shape (d,)
        The projection.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.adaoam import h_norm_projection
    >>> u = h_norm_projection([3.0, 4.0], [1.0, 1.0], 1.0)  # equal weights: rescaling
    >>> np.round(u, 12).tolist()
    [0.6, 0.8]
    """
    u = np.array(v, dtype=np.float64, copy=True).ravel()
    h = np.ascontiguousarray(h, dtype=np.float64).ravel()
    if h.shape != u.shape:
        raise ValueError(f"v and h have different lengths: {u.size} and {h.size}")
    if not np.all(h > 0):
        raise ValueError("h must be positive")
    if not radius > 0:
        raise ValueError(f"radius must be positive, got {radius}")
    _h_project(u, h, float(radius))
    return u


@nb.njit(cache=True)
def _l1_coord(w, g, h, eta, eta_theta):
    """One coordinate of AdaGrad's composite mirror-descent step with l1 (SPEC §8)."""
    u = w - eta * g / h
    a = abs(u) - eta_theta / h
    if a > 0.0:
        return math.copysign(a, u)
    return 0.0


@nb.njit(cache=True)
def _l1_step_all(w, g, h, eta, eta_theta, out):
    for i in range(w.shape[0]):
        out[i] = _l1_coord(w[i], g[i], h[i], eta, eta_theta)


def adagrad_l1_step(
    w: ArrayLike, g: ArrayLike, h: ArrayLike, eta: float, theta: float
) -> np.ndarray:
    """SAdaOAM's coordinate-wise step (D16 §3.3): an l1 proximal AdaGrad update.

    Returns :math:`\\arg\\min_v \\eta g^\\top v + \\eta\\theta\\|v\\|_1 +
    \\frac12 (v - w)^\\top \\mathrm{diag}(h) (v - w)`, i.e.
    :math:`\\operatorname{sign}(u)\\max(0, |u| - \\eta\\theta/h)` with
    :math:`u = w - \\eta g / h`.

    Parameters
    ----------
    w, g, h : array-like of shape (d,)
        Current weights, gradient, and positive AdaGrad scales.
    eta : float
        Step size.
    theta : float
        l1 weight.

    Returns
    -------
    ndarray of shape (d,)
        The new weights.

    Examples
    --------
    >>> from aucstream.adaoam import adagrad_l1_step
    >>> adagrad_l1_step([1.0, 0.1], [0.0, 0.0], [1.0, 1.0], eta=1.0, theta=0.5).tolist()
    [0.5, 0.0]
    """
    w = np.ascontiguousarray(w, dtype=np.float64).ravel()
    g = np.ascontiguousarray(g, dtype=np.float64).ravel()
    h = np.ascontiguousarray(h, dtype=np.float64).ravel()
    if not (w.shape == g.shape == h.shape):
        raise ValueError("w, g and h must have the same length")
    out = np.empty_like(w)
    _l1_step_all(w, g, h, float(eta), float(eta) * float(theta), out)
    return out


def _check_common(est) -> None:
    if not (isinstance(est.eta, (int, float, np.number)) and est.eta > 0 and np.isfinite(est.eta)):
        raise ValueError(f"eta must be a positive finite number, got {est.eta!r}")
    if not (isinstance(est.lam, (int, float, np.number)) and est.lam >= 0 and np.isfinite(est.lam)):
        raise ValueError(f"lam must be a non-negative finite number, got {est.lam!r}")
    if not (
        isinstance(est.delta, (int, float, np.number)) and est.delta > 0 and np.isfinite(est.delta)
    ):
        raise ValueError(f"delta must be a positive finite number, got {est.delta!r}")


# ---------------------------------------------------------------------------- AdaOAM
@nb.njit(cache=True)
def _adaoam_chunk(
    w,
    s,
    steps,
    count_neg,
    sum_neg,
    scatter_neg,
    count_pos,
    sum_pos,
    scatter_pos,
    indptr,
    indices,
    data,
    ys,
    eta,
    lam,
    delta,
    projection,
    radius,
):
    d = w.shape[0]
    cov_w = np.empty(d)
    g = np.empty(d)
    h = np.empty(d)
    for r in range(indptr.shape[0] - 1):
        lo, hi = indptr[r], indptr[r + 1]
        idx, val, y = indices[lo:hi], data[lo:hi], ys[r]
        if y > 0:
            full_add(count_pos, sum_pos, scatter_pos, idx, val)
            t_opp = count_neg[0]
            if t_opp == 0:
                continue
            c_w = full_cov_matvec(count_neg, sum_neg, scatter_neg, w, cov_w)
            sum_opp = sum_neg
        else:
            full_add(count_neg, sum_neg, scatter_neg, idx, val)
            t_opp = count_pos[0]
            if t_opp == 0:
                continue
            c_w = full_cov_matvec(count_pos, sum_pos, scatter_pos, w, cov_w)
            sum_opp = sum_pos
        inv_t = 1.0 / t_opp
        xw = 0.0
        for a in range(idx.shape[0]):
            xw += w[idx[a]] * val[a]
        alpha = (xw - c_w) - y  # e^T w - y
        # g = lam w + S w + alpha (x - c)
        for i in range(d):
            g[i] = lam * w[i] + cov_w[i] - alpha * (sum_opp[i] * inv_t)
        for a in range(idx.shape[0]):
            g[idx[a]] += alpha * val[a]
        sq = 0.0
        for i in range(d):
            s[i] += g[i] * g[i]
            h[i] = delta + math.sqrt(s[i])
            w[i] -= eta * g[i] / h[i]
            sq += w[i] * w[i]
        if projection == 2:
            _h_project(w, h, radius)
        elif projection == 1 and sq > radius * radius:
            scale = radius / math.sqrt(sq)
            for i in range(d):
                w[i] *= scale
        steps[0] += 1


class AdaOAM(BaseStreamingAUC):
    """Adaptive online AUC maximization (AdaOAM, D16 Alg. 1), diagonal AdaGrad.

    The OPAUC gradient from exact class covariances, a per-coordinate AdaGrad step
    and a projection onto ``||w|| <= 1/sqrt(lam)`` in the AdaGrad norm (see the
    module docstring). The cost per example is O(d^2) (the product with the opposite
    class's covariance); memory is O(d^2), independent of the stream length.

    Parameters
    ----------
    eta : float, default=2**-3
        Step size; tuned over 2^[-10:10] (D15 §5; SPEC §7). The default is a library
        choice.
    lam : float, default=2**-8
        L2 regularization lambda, tuned over 2^[-10:2]; also sets the radius
        ``1/sqrt(lam)`` of the feasible ball (no projection when 0).
    delta : float, default=1e-8
        Smoothing term of ``h = delta + sqrt(s)``; must be positive.
    projection : {"H", "euclidean", "none"}, default="H"
        Projection onto the ball: in the AdaGrad norm (D16), Euclidean, or none.
    shuffle : bool, default=False
        Whether ``fit`` visits the examples in a random order (one pass still).
    random_state : int, Generator or None, default=None
        Seed of the shuffle.

    Attributes
    ----------
    w_ : ndarray of shape (n_features,)
        Current weights.
    sq_grad_sum_ : ndarray of shape (n_features,)
        AdaGrad's sum of squared gradients s.
    stats_ : list of two FullCovariance
        Summaries of the negative and the positive class.
    n_updates_ : ndarray of shape (1,), int64
        Number of steps taken (examples that met a non-empty opposite class).
    classes_, n_samples_seen_, n_features_in_
        As for every aucstream learner.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream import roc_auc
    >>> from aucstream.adaoam import AdaOAM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 5))
    >>> y = np.where(X @ [1.0, -1.0, 0.5, 0.0, 0.0] + 0.5 * rng.normal(size=400) > 0, 1, -1)
    >>> model = AdaOAM(eta=0.1, lam=2**-8).fit(X[:300], y[:300])
    >>> bool(model.score(X[300:], y[300:]) > 0.9)
    True
    """

    param_grid = {
        "eta": [2.0**k for k in range(-10, 11)],
        "lam": [2.0**k for k in range(-10, 3)],
    }

    def __init__(
        self,
        eta: float = 2**-3,
        lam: float = 2**-8,
        delta: float = 1e-8,
        projection: str = "H",
        shuffle: bool = False,
        random_state=None,
    ):
        self.eta = eta
        self.lam = lam
        self.delta = delta
        self.projection = projection
        self.shuffle = shuffle
        self.random_state = random_state

    def _init_state(self, n_features: int) -> None:
        _check_common(self)
        if self.projection not in _PROJECTIONS:
            raise ValueError(
                f"projection must be 'H', 'euclidean' or 'none', got {self.projection!r}"
            )
        self.w_ = np.zeros(n_features)
        self.sq_grad_sum_ = np.zeros(n_features)
        self.n_updates_ = np.zeros(1, dtype=np.int64)
        self.stats_ = [FullCovariance(n_features), FullCovariance(n_features)]

    def _update(self, chunk: Chunk) -> None:
        neg, pos = self.stats_
        radius = 1.0 / math.sqrt(self.lam) if self.lam > 0 else math.inf
        _adaoam_chunk(
            self.w_,
            self.sq_grad_sum_,
            self.n_updates_,
            neg.count_,
            neg.sum_,
            neg.scatter_,
            pos.count_,
            pos.sum_,
            pos.scatter_,
            chunk.indptr,
            chunk.indices,
            chunk.data,
            chunk.y,
            float(self.eta),
            float(self.lam),
            float(self.delta),
            _PROJECTIONS[self.projection],
            radius,
        )

    def _coef(self) -> np.ndarray:
        return self.w_

    @property
    def sparsity_(self) -> float:
        """Fraction of the weights that are exactly zero."""
        coef = self.coef_
        return float(np.mean(coef == 0.0)) if coef.size else 0.0


# --------------------------------------------------------------------------- SAdaOAM
@nb.njit(cache=True)
def _catch_up(w, s, last, i, now, eta_theta, delta):
    """Apply the shrinkage of the steps last[i]..now-1, in which g_i was 0."""
    n = now - last[i]
    if n > 0:
        wi = w[i]
        if wi != 0.0:
            a = abs(wi) - n * eta_theta / (delta + math.sqrt(s[i]))
            w[i] = math.copysign(a, wi) if a > 0.0 else 0.0
        last[i] = now


@nb.njit(cache=True)
def _sadaoam_chunk(
    start,
    w,
    s,
    last,
    steps,
    neg,
    pos,
    indptr,
    indices,
    data,
    ys,
    eta,
    lam,
    theta,
    delta,
    lazy,
    pw,
    gbuf,
    active,
):
    """SAdaOAM over rows ``start..``; returns the first row not processed.

    A row is left unprocessed (and returned) when its class's sparse summary must grow
    first; the caller grows it and calls again from that row.
    """
    d = w.shape[0]
    full = d * (d + 1) // 2
    eta_theta = eta * theta
    n_rows = indptr.shape[0] - 1
    if not lazy:
        for i in range(d):
            active[i] = i
    for r in range(start, n_rows):
        lo, hi = indptr[r], indptr[r + 1]
        idx, val, y = indices[lo:hi], data[lo:hi], ys[r]
        if y > 0:
            own = pos
            opp = neg
        else:
            own = neg
            opp = pos
        if not sparse_room(own[5], own[2].shape[0], full, idx, val):
            return r
        exact_sparse_add(own, idx, val)
        t_opp = opp[0][0]
        if t_opp == 0:
            continue
        o_sum, o_keys, o_vals, o_nnz = opp[1], opp[2], opp[3], opp[5][0]
        o_seen, o_support, o_n_support = opp[6], opp[7], opp[8][0]
        now = steps[0]
        # the coordinates whose gradient may be non-zero at this step
        if lazy:
            n_active = 0
            for q in range(o_n_support):
                active[n_active] = o_support[q]
                n_active += 1
            if lam > 0.0:
                own_seen_support, own_n_support = own[7], own[8][0]
                for q in range(own_n_support):
                    i = own_seen_support[q]
                    if not o_seen[i]:
                        active[n_active] = i
                        n_active += 1
            else:
                for a in range(idx.shape[0]):
                    if val[a] != 0.0 and not o_seen[idx[a]]:
                        active[n_active] = idx[a]
                        n_active += 1
            for q in range(n_active):
                _catch_up(w, s, last, active[q], now, eta_theta, delta)
        else:
            n_active = d
        inv_t = 1.0 / t_opp
        xw = 0.0
        for a in range(idx.shape[0]):
            xw += w[idx[a]] * val[a]
        cw = 0.0
        for q in range(o_n_support):
            i = o_support[q]
            cw += o_sum[i] * w[i]
        cw *= inv_t
        sparse_scatter_add(o_keys, o_vals, o_nnz, w, pw)
        alpha = (xw - cw) - y
        for q in range(n_active):
            i = active[q]
            gbuf[i] = lam * w[i] + pw[i] * inv_t - (o_sum[i] * inv_t) * (cw + alpha)
        for a in range(idx.shape[0]):
            gbuf[idx[a]] += alpha * val[a]
        for q in range(n_active):
            i = active[q]
            g = gbuf[i]
            gbuf[i] = 0.0
            pw[i] = 0.0
            s[i] += g * g
            w[i] = _l1_coord(w[i], g, delta + math.sqrt(s[i]), eta, eta_theta)
            last[i] = now + 1
        steps[0] = now + 1
    return n_rows


class SAdaOAM(BaseStreamingAUC):
    """Sparse AdaOAM (D16 Alg. 2): l1-regularized AdaGrad with lazy updates.

    The OPAUC gradient from exact sparse class summaries
    (:class:`ExactSparseCovariance`), AdaGrad's composite mirror-descent step with an
    l1 term, and just-in-time ("lazy") shrinkage of the coordinates whose gradient is
    zero (see the module docstring for which ones). Per example the cost is O(k^2)
    for the summary plus O(nnz(P) + |S|) for the gradient, where S is the opposite
    class's feature support (plus every seen feature when ``lam > 0``), or O(d +
    nnz(P)) with ``lazy=False``. The learned weights are sparse; ``sparsity_``
    reports the fraction of zeros.

    Parameters
    ----------
    eta : float, default=2**-3
        Step size; tuned over 2^[-10:10] (SPEC §8). The default is a library choice.
    lam : float, default=2**-8
        L2 regularization lambda, tuned over 2^[-10:2]. ``lam=0`` lets the lazy path
        skip every coordinate outside the opposite class's support.
    theta : float, default=1e-4
        l1 weight, tuned over 10^[-8:-1] (SPEC §8, our choice; the seed lost it).
    delta : float, default=1e-8
        Smoothing term of ``h = delta + sqrt(s)``; must be positive.
    lazy : bool, default=True
        Just-in-time shrinkage of zero-gradient coordinates (exact up to rounding),
        or eager updates of every coordinate at every step.
    shuffle : bool, default=False
        Whether ``fit`` visits the examples in a random order (one pass still).
    random_state : int, Generator or None, default=None
        Seed of the shuffle.

    Attributes
    ----------
    w_ : ndarray of shape (n_features,)
        Stored weights; coordinate i still owes the shrinkage of the steps since
        ``last_[i]`` (``coef_`` applies it).
    sq_grad_sum_ : ndarray of shape (n_features,)
        AdaGrad's sum of squared gradients s.
    last_ : ndarray of shape (n_features,), int64
        Step at which each coordinate was last brought up to date.
    n_updates_ : ndarray of shape (1,), int64
        Number of steps taken (the lazy clock).
    stats_ : list of two ExactSparseCovariance
        Summaries of the negative and the positive class.
    sparsity_ : float
        Fraction of exactly zero weights in ``coef_``.
    classes_, n_samples_seen_, n_features_in_
        As for every aucstream learner.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.adaoam import SAdaOAM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 20))
    >>> y = np.where(X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=400) > 0, 1, -1)
    >>> model = SAdaOAM(eta=0.1, lam=0.0, theta=0.5).fit(X[:300], y[:300])
    >>> bool(model.score(X[300:], y[300:]) > 0.9), model.sparsity_ >= 0.5
    (True, True)
    """

    param_grid = {
        "eta": [2.0**k for k in range(-10, 11)],
        "lam": [2.0**k for k in range(-10, 3)],
        "theta": [10.0**k for k in range(-8, 0)],
    }

    def __init__(
        self,
        eta: float = 2**-3,
        lam: float = 2**-8,
        theta: float = 1e-4,
        delta: float = 1e-8,
        lazy: bool = True,
        shuffle: bool = False,
        random_state=None,
    ):
        self.eta = eta
        self.lam = lam
        self.theta = theta
        self.delta = delta
        self.lazy = lazy
        self.shuffle = shuffle
        self.random_state = random_state

    def _init_state(self, n_features: int) -> None:
        _check_common(self)
        if not (
            isinstance(self.theta, (int, float, np.number))
            and self.theta >= 0
            and np.isfinite(self.theta)
        ):
            raise ValueError(f"theta must be a non-negative finite number, got {self.theta!r}")
        if not isinstance(self.lazy, (bool, np.bool_)):
            raise ValueError(f"lazy must be True or False, got {self.lazy!r}")
        self.w_ = np.zeros(n_features)
        self.sq_grad_sum_ = np.zeros(n_features)
        self.last_ = np.zeros(n_features, dtype=np.int64)
        self.n_updates_ = np.zeros(1, dtype=np.int64)
        self.stats_ = [ExactSparseCovariance(n_features), ExactSparseCovariance(n_features)]

    def _update(self, chunk: Chunk) -> None:
        neg, pos = self.stats_
        d = self.w_.shape[0]
        pw = np.zeros(d)
        gbuf = np.zeros(d)
        active = np.empty(d, dtype=np.int64)
        n = chunk.n_samples
        r = 0
        while True:
            r = _sadaoam_chunk(
                r,
                self.w_,
                self.sq_grad_sum_,
                self.last_,
                self.n_updates_,
                neg.arrays(),
                pos.arrays(),
                chunk.indptr,
                chunk.indices,
                chunk.data,
                chunk.y,
                float(self.eta),
                float(self.lam),
                float(self.theta),
                float(self.delta),
                bool(self.lazy),
                pw,
                gbuf,
                active,
            )
            if r == n:
                return
            own = pos if chunk.y[r] > 0 else neg
            own.grow_for(int(chunk.indptr[r + 1] - chunk.indptr[r]))

    def _coef(self) -> np.ndarray:
        owed = (self.n_updates_[0] - self.last_) * (float(self.eta) * float(self.theta))
        a = np.abs(self.w_) - owed / (float(self.delta) + np.sqrt(self.sq_grad_sum_))
        return np.where(a > 0.0, np.copysign(a, self.w_), 0.0)

    @property
    def sparsity_(self) -> float:
        """Fraction of the weights (of ``coef_``) that are exactly zero."""
        coef = self.coef_
        return float(np.mean(coef == 0.0)) if coef.size else 0.0
