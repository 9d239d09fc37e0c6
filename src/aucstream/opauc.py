"""OPAUC: one-pass AUC optimization with the least-square pairwise loss.

Gao, Jin, Zhu and Zhou, *One-Pass AUC Optimization* (ICML 2013, "G13") and its journal
version (Gao, Wang, Jin, Zhu, Zhou, Artificial Intelligence 2016, "G16"); SPEC §1-§5.

The objective is the regularized square pairwise loss

.. math::

    \\mathcal L(w) = \\frac\\lambda2\\|w\\|^2 + \\frac{1}{2T_+T_-}
        \\sum_{i\\in+,\\,j\\in-} \\big(1 - w^\\top(x_i - x_j)\\big)^2 .

At step t the per-step loss (G16 Eq. 5) sums the square loss of :math:`x_t` against
every earlier example of the opposite class :math:`\\bar y = -y_t`, divided by that
class's count. Its gradient needs only the opposite class's mean :math:`c` and
covariance :math:`S` (G16 Eqs. 7-8; G13 Eqs. 4-5):

.. math::

    g_t = \\lambda w - y_t e + e\\,(e^\\top w) + S w, \\qquad e = x_t - c ,

and the update is :math:`w \\leftarrow w - \\eta g_t`. Before the step, the example
is added to its own class's summary; while the opposite class is still empty only
the statistics are updated. The model is the last iterate (G16 §5.4).

High-dimensional variants
-------------------------
``covariance`` chooses the class summaries (:mod:`aucstream.covariance`); the step
is the same with :math:`S` replaced by the summary's estimate :math:`\\hat S`:

=============  ======================  =========================================
covariance     paper                   :math:`\\hat S`, memory
=============  ======================  =========================================
"full"         OPAUC (G16 Alg. 1)      exact; O(d^2) memory: for moderate d only
"randomized"   OPAUC_r (G13 Eqs. 6-11)  :math:`Z Z^\\top/T` - centering; O(d tau)
"fd"           OPAUC_fd (G16 Alg. 2)   frequent directions (Eqs. 10-11, 14-15)
"sparse"       OPAUC_s (G16 Alg. 3)    :math:`d\\tau` largest entries (Eqs. 16-17)
"hash"         OPAUC_h (G16 §7.2)      CountSketch (SPEC §5, reconstructed)
=============  ======================  =========================================

Costs per example with k non-zeros (CSR input is never densified):

- "full": O(k^2) to add the example, O(d^2) for :math:`S w`.
- "sparse": O(k^2) to add, O(d tau) for :math:`P w` (a scan of the hash table), O(d)
  for the step (c and :math:`P w` are dense), plus an O(d tau) prune whenever the
  stored non-zeros pass ``(1 + prune_slack) d tau``.
- "randomized", "hash", "fd": O(k tau + tau^2), independent of d, through an implicit
  form of the weights (below); "fd" adds a shrink at most once every tau - l + 1
  inserts of a class: an O(tau^3) eigendecomposition plus O(m tau^2) for the m rows
  of Z that ever received a non-zero (m <= d; O(d tau) amortized). With
  ``centering="exact"`` the "fd" columns are dense, but their mean parts are kept
  implicitly (:func:`aucstream.covariance.fd_insert`), so the cost is the same. The
  weights are formed (O(d tau)) once at the end of each chunk.

Implicit weights of the low-rank variants
-----------------------------------------
For the sketches :math:`Z_\\pm` (d x tau) and class sums :math:`s_\\pm`, the weights
are kept as

.. math::

    w = \\sigma\\,\\big(v + Z_- p_- + Z_+ p_+ + \\gamma_- s_- + \\gamma_+ s_+\\big)

with a dense v, coefficient vectors :math:`p_\\pm \\in \\mathbb R^\\tau`, scalars
:math:`\\gamma_\\pm` and a scale :math:`\\sigma`. With :math:`\\hat S w = Z\\phi - s\\psi`
(the opposite class; :math:`\\phi = Z^\\top w/T`, :math:`\\psi = c^\\top w/T` for the
G16 form), the step

.. math::

    w \\leftarrow (1 - \\eta\\lambda) w - \\eta Z\\phi
        + \\eta(\\psi + \\alpha/T) s - \\eta\\alpha x, \\qquad
        \\alpha = e^\\top w - y_t ,

becomes :math:`\\sigma \\leftarrow (1-\\eta\\lambda)\\sigma`, a change of :math:`p` and
:math:`\\gamma` of the opposite class, and a k-sparse change of v. Adding x to the
own class (:math:`Z \\mathrel{+}= x a^\\top`, :math:`s \\mathrel{+}= x`) would change
:math:`Z p + \\gamma s` by :math:`(a^\\top p + \\gamma) x`, which is subtracted from v so
that w does not move. The products this needs, :math:`Z^\\top w`,
:math:`s^\\top w` and :math:`x^\\top w`, come from maintained Gram quantities
(:math:`Z_a^\\top Z_b`, :math:`Z_a^\\top s_b`, :math:`s_a^\\top s_b`, :math:`Z_a^\\top v`,
:math:`s_a^\\top v`), each updated in O(k tau + tau^2) per example. In exact
arithmetic this is the same recursion as the direct update; in floating point it
differs by rounding. To bound cancellation between v and the other terms, every
``OPAUC._rebase_every`` examples (2^15) the representation is folded back into v and
the maintained products are recomputed exactly (O(d tau^2)); a frequent-directions
shrink folds the shrunk class's terms into v too (its old Z is gone). :math:`\\sigma`
is folded into v when it leaves [1e-100, 1e100] or becomes 0 (:math:`\\eta\\lambda = 1`).
All of this happens at positions fixed by the stream, so chunking never changes the
model.

Dimension-reduction variants (OPAUC^f, OPAUC^rp, OPAUC^pca) are scikit-learn
pipelines in front of OPAUC: see :mod:`aucstream.reduction`. Random Fourier
features for dense data (G16 §7.2) are in :mod:`aucstream.random_features`.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ._base import BaseStreamingAUC
from ._chunks import Chunk
from .covariance import (
    COVARIANCE_KINDS,
    HashedCovariance,
    RandomizedCovariance,
    fd_column,
    fd_insert,
    full_add,
    full_cov_matvec,
    lowrank_add,
    make_covariance,
    sketch_tdot,
    sparse_cov_matvec,
    sparse_dot,
    sparsified_add,
)

__all__ = ["OPAUC", "opauc_gradient"]


@nb.njit(cache=True)
def _opauc_step(w, idx, val, y, count_opp, sum_opp, cov_w, c_w, eta, lam):
    """w <- w - eta * (lam w + S w + (e.w - y) e), e = x - c (opposite class).

    ``cov_w`` is ``S w`` and ``c_w`` is ``c^T w`` of the opposite class, both at the
    current w; ``c = sum_opp / count_opp``.
    """
    inv_t = 1.0 / count_opp
    xw = 0.0
    for a in range(idx.shape[0]):
        xw += w[idx[a]] * val[a]
    alpha = (xw - c_w) - y  # e^T w - y
    shrink = 1.0 - eta * lam
    d = w.shape[0]
    for i in range(d):
        w[i] = shrink * w[i] - eta * cov_w[i] + eta * alpha * sum_opp[i] * inv_t
    for a in range(idx.shape[0]):
        w[idx[a]] -= eta * alpha * val[a]


@nb.njit(cache=True)
def _opauc_full_chunk(w, neg, pos, indptr, indices, data, ys, eta, lam):
    """OPAUC (G16 Alg. 1) over the rows; ``neg``/``pos`` are ``(count, sum, scatter)``."""
    cov_w = np.empty(w.shape[0])
    for r in range(indptr.shape[0] - 1):
        lo, hi = indptr[r], indptr[r + 1]
        idx, val, y = indices[lo:hi], data[lo:hi], ys[r]
        own, opp = (pos, neg) if y > 0 else (neg, pos)
        full_add(own[0], own[1], own[2], idx, val)
        if opp[0][0] == 0:
            continue
        c_w = full_cov_matvec(opp[0], opp[1], opp[2], w, cov_w)
        _opauc_step(w, idx, val, y, opp[0][0], opp[1], cov_w, c_w, eta, lam)


# ------------------------------------------------------------------ OPAUC_s kernel
@nb.njit(cache=True)
def _opauc_sparse_chunk(
    w, neg, pos, indptr, indices, data, ys, start, budget, trigger, full, eta, lam
):
    """G16 Alg. 3 over rows ``start:``; ``neg``/``pos`` are ``(count, sum, keys, values,
    index, info)``. Returns the first row whose class summary must grow before it can
    take the example (or n when done)."""
    cov_w = np.empty(w.shape[0])
    n = indptr.shape[0] - 1
    for r in range(start, n):
        lo, hi = indptr[r], indptr[r + 1]
        idx, val, y = indices[lo:hi], data[lo:hi], ys[r]
        own, opp = (pos, neg) if y > 0 else (neg, pos)
        if not sparsified_add(
            own[0], own[1], own[2], own[3], own[4], own[5], idx, val, budget, trigger, full
        ):
            return r
        if opp[0][0] == 0:
            continue
        c_w = sparse_cov_matvec(opp[0], opp[1], opp[2], opp[3], opp[5], w, cov_w)
        _opauc_step(w, idx, val, y, opp[0][0], opp[1], cov_w, c_w, eta, lam)
    return n


# ------------------------------------------------------ OPAUC_r / _h / _fd kernel
@nb.njit(cache=True)
def _add_to_v(v, zv, sv, idx, val, coef, zx0, zx1, sx0, sx1):
    """``v += coef x`` and the maintained ``Z_a^T v``, ``s_a^T v`` with it (given
    ``Z_a^T x`` and ``s_a^T x``); O(k + tau)."""
    for t in range(idx.shape[0]):
        v[idx[t]] += coef * val[t]
    for j in range(zv.shape[1]):
        zv[0, j] += coef * zx0[j]
        zv[1, j] += coef * zx1[j]
    sv[0] += coef * sx0
    sv[1] += coef * sx1


_DONE, _SHRINK, _REBASE = 0, 1, 2
_SCALE_MIN, _SCALE_MAX = 1e-100, 1e100


@nb.njit(cache=True)
def _opauc_lowrank_chunk(
    count0,
    sum0,
    Z0,
    G0,
    asum0,
    nfill0,
    frob0,
    seen0,
    supp0,
    nsupp0,
    fzs0,
    fss0,
    fbeta0,
    count1,
    sum1,
    Z1,
    G1,
    asum1,
    nfill1,
    frob1,
    seen1,
    supp1,
    nsupp1,
    fzs1,
    fss1,
    fbeta1,
    zz,
    zs,
    ss,
    v,
    p,
    gamma,
    scale,
    zv,
    sv,
    indptr,
    indices,
    data,
    ys,
    A,
    start,
    resume,
    fd,
    centering,
    eta,
    lam,
    rebase_every,
):
    """The OPAUC step with low-rank summaries in implicit form (module docstring).

    Class 0 is the negative class, 1 the positive one. ``zz = Z0^T Z1``,
    ``zs[a, b] = Z_a^T s_b``, ``ss[a, b] = s_a^T s_b``, ``zv[a] = Z_a^T v``,
    ``sv[a] = s_a^T v``; ``G_a = Z_a^T Z_a`` lives in the summaries. ``A`` holds the
    per-example vectors a (linear sketches); with ``fd`` the example goes into the
    first zero column: ``z = bx x - bs s_c`` (:func:`fd_column`; ``fzs``/``fss`` are
    the summary's own :math:`Z^\\top s`, :math:`s^\\top s`); its sketch array holds Y
    with :math:`Z = Y - s \\beta^\\top` (``fbeta``, :func:`fd_insert`). ``centering``: 0 = G16
    form, 1 = G13, 2 = exact (linear sketches), 3 = none (frequent directions of the
    centered examples).

    Returns ``(row, event)``: ``_DONE``; ``_SHRINK`` (row ``row`` was inserted and
    filled its class's sketch: shrink, then resume at ``row`` with ``resume``);
    ``_REBASE`` (resume at ``row`` after the periodic re-basing).
    """
    tau = Z0.shape[1]
    zx0 = np.empty(tau)
    zx1 = np.empty(tau)
    a = np.zeros(tau)
    zoz = np.empty(tau)
    phi = np.empty(tau)
    q = np.empty(tau)
    shrink = 1.0 - eta * lam
    n = indptr.shape[0] - 1
    for r in range(start, n):
        lo, hi = indptr[r], indptr[r + 1]
        idx, val, y = indices[lo:hi], data[lo:hi], ys[r]
        c = 1 if y > 0 else 0
        o = 1 - c
        sketch_tdot(Z0, idx, val, zx0)
        sketch_tdot(Z1, idx, val, zx1)
        sx0 = sparse_dot(sum0, idx, val)
        sx1 = sparse_dot(sum1, idx, val)
        if fd:  # Z = Y - s beta^T
            for j in range(tau):
                zx0[j] -= fbeta0[j] * sx0
                zx1[j] -= fbeta1[j] * sx1
        vx = sparse_dot(v, idx, val)
        if not (resume and r == start):
            # ---- add x to its own class, keeping w fixed
            xx = 0.0
            for t in range(idx.shape[0]):
                xx += val[t] * val[t]
            if c == 1:
                Zc, Gc, countc, sumc = Z1, G1, count1, sum1
                asumc, nfillc, frobc = asum1, nfill1, frob1
                seenc, suppc, nsuppc, fzsc, fssc, fbetac = seen1, supp1, nsupp1, fzs1, fss1, fbeta1
                zxc, zxo, sxc, sxo = zx1, zx0, sx1, sx0
            else:
                Zc, Gc, countc, sumc = Z0, G0, count0, sum0
                asumc, nfillc, frobc = asum0, nfill0, frob0
                seenc, suppc, nsuppc, fzsc, fssc, fbetac = seen0, supp0, nsupp0, fzs0, fss0, fbeta0
                zxc, zxo, sxc, sxo = zx0, zx1, sx0, sx1
            # the new column(s) of Z_c: Z_c += z a^T with z = bx x - bs s_c (old s_c)
            if fd:
                bx, bs = fd_column(countc, xx, centering == 3)
                a[:] = 0.0
                if bx != 0.0:
                    a[nfillc[0]] = 1.0
            else:
                bx, bs = 1.0, 0.0
                a[:] = A[r]
            ap = 0.0
            for j in range(tau):
                ap += a[j] * p[c, j]
            # keep w fixed: Z_c p_c gains ap z = ap (bx + bs) x - ap bs s_c(new), and
            # gamma_c s_c gains gamma_c x
            gamma_old = gamma[c]
            gamma[c] += ap * bs
            beta = -gamma_old - ap * (bx + bs)
            if beta != 0.0:
                _add_to_v(v, zv, sv, idx, val, beta, zx0, zx1, sx0, sx1)
                vx += beta * xx
            # products involving the own class's new Z and s (old Z^T x, s^T x, ...)
            z_x = bx * xx - bs * sxc
            z_sc = bx * sxc - bs * ss[c, c]
            z_so = bx * sxo - bs * ss[c, o]
            z_v = bx * vx - bs * sv[c]
            for j in range(tau):
                zoz[j] = bx * zxo[j] - bs * zs[o, c, j]  # Z_o^T z
            if c == 0:
                for i in range(tau):
                    for j in range(tau):
                        zz[i, j] += a[i] * zoz[j]
            else:
                for i in range(tau):
                    for j in range(tau):
                        zz[i, j] += zoz[i] * a[j]
            for j in range(tau):
                zs[c, c, j] += zxc[j] + a[j] * (z_sc + z_x)
                zs[c, o, j] += a[j] * z_so
                zs[o, c, j] += zxo[j]
                zv[c, j] += a[j] * z_v
            ss[c, c] += 2.0 * sxc + xx
            ss[c, o] += sxo
            ss[o, c] += sxo
            sv[c] += vx
            if fd:
                fd_insert(
                    countc,
                    sumc,
                    Zc,
                    Gc,
                    nfillc,
                    frobc,
                    seenc,
                    suppc,
                    nsuppc,
                    fzsc,
                    fssc,
                    fbetac,
                    idx,
                    val,
                    zxc,
                    bx,
                    bs,
                )
            else:
                lowrank_add(countc, sumc, Zc, Gc, idx, val, a, zxc)
                for j in range(tau):
                    asumc[j] += a[j]
            for j in range(tau):
                zxc[j] += a[j] * z_x
            if c == 1:
                sx1 += xx
            else:
                sx0 += xx
            if fd and nfillc[0] == tau:
                return r, _SHRINK
        # ---- the step against the opposite class
        if o == 1:
            counto, asumo = count1, asum1
        else:
            counto, asumo = count0, asum0
        t_opp = counto[0]
        if t_opp > 0:
            sigma = scale[0]
            for i in range(tau):
                acc = zv[o, i] + zs[o, 0, i] * gamma[0] + zs[o, 1, i] * gamma[1]
                if o == 0:
                    for j in range(tau):
                        acc += G0[i, j] * p[0, j] + zz[i, j] * p[1, j]
                else:
                    for j in range(tau):
                        acc += zz[j, i] * p[0, j] + G1[i, j] * p[1, j]
                q[i] = sigma * acc
            sw = sv[o] + ss[o, 0] * gamma[0] + ss[o, 1] * gamma[1]
            xw = vx + gamma[0] * sx0 + gamma[1] * sx1
            for j in range(tau):
                sw += zs[0, o, j] * p[0, j] + zs[1, o, j] * p[1, j]
                xw += zx0[j] * p[0, j] + zx1[j] * p[1, j]
            inv_t = 1.0 / t_opp
            cw = sigma * sw * inv_t
            alpha = sigma * xw - cw - y
            if centering == 0:
                for j in range(tau):
                    phi[j] = q[j] * inv_t
                psi = cw * inv_t
            elif centering == 3:
                for j in range(tau):
                    phi[j] = q[j] * inv_t
                psi = 0.0
            elif centering == 1:
                uu = 0.0
                for j in range(tau):
                    phi[j] = q[j] * inv_t
                    uu += asumo[j] * asumo[j]
                psi = uu * inv_t * inv_t * cw * inv_t
            else:
                uq = 0.0
                for j in range(tau):
                    qt = q[j] - asumo[j] * cw
                    phi[j] = qt * inv_t
                    uq += asumo[j] * qt
                psi = uq * inv_t * inv_t
            new_scale = sigma * shrink
            if new_scale == 0.0 or abs(new_scale) < _SCALE_MIN or abs(new_scale) > _SCALE_MAX:
                v *= new_scale
                p *= new_scale
                gamma *= new_scale
                zv *= new_scale
                sv *= new_scale
                new_scale = 1.0
            inv_s = 1.0 / new_scale
            for j in range(tau):
                p[o, j] -= eta * phi[j] * inv_s
            gamma[o] += eta * (psi + alpha * inv_t) * inv_s
            _add_to_v(v, zv, sv, idx, val, -eta * alpha * inv_s, zx0, zx1, sx0, sx1)
            scale[0] = new_scale
        if rebase_every > 0 and (count0[0] + count1[0]) % rebase_every == 0:
            return r + 1, _REBASE
    return n, _DONE


def opauc_gradient(w: np.ndarray, x: np.ndarray, y: float, opposite, lam: float) -> np.ndarray:
    """The OPAUC gradient g_t (G16 Eqs. 7-8) from an opposite-class summary.

    With a sketched summary this is the approximate gradient of G13 Eqs. 10-11 or
    G16 Eqs. 14-17 (``opposite.matvec`` applies the estimate :math:`\\hat S`).

    Parameters
    ----------
    w : ndarray of shape (d,)
        Current weights.
    x : ndarray of shape (d,)
        The current example.
    y : {+1, -1}
        Its label.
    opposite : CovarianceSummary
        Summary of the opposite class (must hold at least one example).
    lam : float
        Regularization lambda.

    Returns
    -------
    ndarray of shape (d,)
        ``lam w - y e + e (e^T w) + S w`` with ``e = x - c``.
    """
    e = np.asarray(x, dtype=np.float64) - opposite.mean
    return lam * w - y * e + e * (e @ w) + opposite.matvec(w)


_CENTERING_CODES = {"g16": 0, "g13": 1, "exact": 2}
_LOWRANK = ("randomized", "hash", "fd")


class OPAUC(BaseStreamingAUC):
    """One-pass AUC optimization (OPAUC) with exact or sketched class covariances.

    See the module docstring for the update, the variants and their costs. With
    ``covariance="full"`` (the default) the covariances are exact: O(d^2) memory and
    O(d^2) per example, for moderate d (the O(k^2) statistics never densify sparse
    input). The other kinds keep O(d tau) memory, independent of the number of
    examples, for 10^4-10^6 features.

    The sketched estimates :math:`\\hat S` (a sketch of :math:`X X^\\top`, divided by
    T, minus :math:`c c^\\top`; G16 Eqs. 10-11, 16-17, 19) need not be positive
    semi-definite: frequent directions under-estimates :math:`X X^\\top` while
    :math:`c c^\\top` is exact, and hashing and sparsification err in both directions.
    Along such directions the step is not a contraction, so large step sizes can
    diverge where the exact OPAUC does not (on sector, OPAUC_fd and OPAUC_h diverge
    from eta = 2^-4 on; OPAUC_r with the G13 centering, which hardly removes the mean,
    does not): tune ``eta`` per variant, as the papers do, or use
    ``centering="exact"``, whose estimates are positive semi-definite (for "fd":
    :math:`0 \\preceq \\hat S \\preceq S`), so the step contracts wherever the exact
    OPAUC's does.

    Parameters
    ----------
    eta : float, default=2**-8
        Constant step size. The papers tune it over 2^[-12:10] (G13 §6.1; G16 §7.1)
        and find values in [2^-12, 2^-4] work best (G16 Figs. 5-6). The default is a
        library choice, not the papers'.
    lam : float, default=2**-8
        L2 regularization lambda, tuned over 2^[-10:2] in the papers.
    covariance : {"full", "randomized", "fd", "sparse", "hash"}, default="full"
        The class summaries: exact (OPAUC), randomized low rank (OPAUC_r), frequent
        directions (OPAUC_fd), sparsification (OPAUC_s) or hashing (OPAUC_h).
    sketch_size : int, default=50
        tau of the sketches (the papers use 50); ignored by "full". "sparse" keeps
        d * tau non-zeros; "fd" needs tau >= 2.
    centering : {"g13", "g16", "exact"} or None, default=None
        How the sketches remove the class mean. None is each paper's form:
        "g13" for "randomized" (G13 Eqs. 10-11, :math:`Z Z^\\top/T - \\|\\bar a\\|^2
        c c^\\top`), "g16" for "hash" and "fd" (G16 Eqs. 10-11, 19, :math:`Z Z^\\top/T
        - c c^\\top`). "exact" gives a positive semi-definite estimate: the linear
        sketches (randomized, hash) sketch :math:`(X - c 1^\\top)` through the same
        draws, frequent directions sketches the centered examples by Welford's
        rank-one updates (:class:`aucstream.covariance.FrequentDirectionsCovariance`,
        at the same cost). "exact" is a library option
        (not in the papers) that keeps OPAUC_fd and OPAUC_h stable at the step sizes
        where their G16 form diverges; "g13" applies to the linear sketches only.
        Ignored by "full" and "sparse".
    shrink : {"half", "ceil_0.9"} or int, default="half"
        Frequent-directions shrink index: floor(tau/2) (G16 Alg. 2) or ceil(0.9 tau)
        (authors' code); used by "fd" only.
    prune_slack : float, default=0.1
        "sparse" prunes when its stored non-zeros exceed (1 + prune_slack) d tau,
        back to d tau; 0 is G16 Alg. 3 exactly (a library choice that amortizes the
        O(d tau) selection; see :class:`aucstream.covariance.SparsifiedCovariance`).
    shuffle : bool, default=False
        Whether ``fit`` visits the examples in a random order (one pass still).
    random_state : int, Generator or None, default=None
        Seed of the shuffle and of the sketches' random draws ("randomized": tau
        Gaussians per example; "hash": one uniform per example).

    Attributes
    ----------
    w_ : ndarray of shape (n_features,)
        Current weights (also ``coef_[0]``).
    stats_ : list of two CovarianceSummary
        Summaries of the negative and the positive class (:class:`FullCovariance`,
        :class:`RandomizedCovariance`, :class:`FrequentDirectionsCovariance`,
        :class:`SparsifiedCovariance` or :class:`HashedCovariance`).
    v_, p_, gamma_, scale_ : ndarray
        Low-rank kinds only: the implicit form of the weights, ``w = scale_[0] *
        (v_ + Z_0 p_[0] + Z_1 p_[1] + gamma_[0] s_0 + gamma_[1] s_1)``.
    zz_, zs_, ss_, zv_, sv_ : ndarray
        Low-rank kinds only: the maintained products :math:`Z_0^\\top Z_1`,
        :math:`Z_a^\\top s_b`, :math:`s_a^\\top s_b`, :math:`Z_a^\\top v`,
        :math:`s_a^\\top v`.
    classes_ : ndarray of shape (2,)
        Labels; ``classes_[1]`` is the positive class.
    n_samples_seen_ : int
        Number of examples processed.
    n_features_in_ : int
        Number of features.

    Examples
    --------
    >>> from aucstream import OPAUC
    >>> from aucstream.datasets import load_diabetes
    >>> data = load_diabetes()
    >>> model = OPAUC(eta=2**-6, lam=2**-8).fit(data.X, data.y)
    >>> round(model.score(data.X, data.y), 2) > 0.8
    True
    >>> sketched = OPAUC(eta=2**-6, covariance="fd", sketch_size=8).fit(data.X, data.y)
    >>> round(sketched.score(data.X, data.y), 2) > 0.8
    True
    """

    param_grid = {
        "eta": [2.0**k for k in range(-12, 11)],
        "lam": [2.0**k for k in range(-10, 3)],
    }

    #: Examples between two re-basings of the implicit weights (low-rank kinds).
    _rebase_every = 1 << 15

    def __init__(
        self,
        eta: float = 2**-8,
        lam: float = 2**-8,
        covariance: str = "full",
        sketch_size: int = 50,
        centering: str | None = None,
        shrink="half",
        prune_slack: float = 0.1,
        shuffle: bool = False,
        random_state=None,
    ):
        self.eta = eta
        self.lam = lam
        self.covariance = covariance
        self.sketch_size = sketch_size
        self.centering = centering
        self.shrink = shrink
        self.prune_slack = prune_slack
        self.shuffle = shuffle
        self.random_state = random_state

    # ------------------------------------------------------------------ state
    def _init_state(self, n_features: int) -> None:
        if not (self.eta > 0 and np.isfinite(self.eta)):
            raise ValueError(f"eta must be a positive finite number, got {self.eta}")
        if not (self.lam >= 0 and np.isfinite(self.lam)):
            raise ValueError(f"lam must be a non-negative finite number, got {self.lam}")
        if self.covariance not in COVARIANCE_KINDS:
            raise ValueError(
                f"covariance must be one of {COVARIANCE_KINDS}, got {self.covariance!r}"
            )
        if self.centering is not None and self.centering not in _CENTERING_CODES:
            raise ValueError(
                f"centering must be one of {tuple(_CENTERING_CODES)} or None, "
                f"got {self.centering!r}"
            )
        if self.covariance == "fd" and self.centering == "g13":
            raise ValueError(
                "centering must be 'g16', 'exact' or None for covariance='fd' "
                "('g13' applies to the linear sketches 'randomized' and 'hash')"
            )
        if not (
            self.shrink in ("half", "ceil_0.9")
            or (isinstance(self.shrink, (int, np.integer)) and not isinstance(self.shrink, bool))
        ):
            raise ValueError(f"shrink must be 'half', 'ceil_0.9' or an int, got {self.shrink!r}")
        if not (np.isfinite(self.prune_slack) and self.prune_slack >= 0):
            raise ValueError(f"prune_slack must be a non-negative number, got {self.prune_slack!r}")
        self.w_ = np.zeros(n_features)
        options = {
            "centering": self.centering,
            "shrink": self.shrink,
            "prune_slack": self.prune_slack,
        }
        self.stats_ = [
            make_covariance(self.covariance, n_features, self.sketch_size, **options)
            for _ in range(2)
        ]
        if self.covariance in _LOWRANK:
            tau = self.stats_[0].sketch_size
            self.v_ = np.zeros(n_features)
            self.p_ = np.zeros((2, tau))
            self.gamma_ = np.zeros(2)
            self.scale_ = np.ones(1)
            self.zz_ = np.zeros((tau, tau))
            self.zs_ = np.zeros((2, 2, tau))
            self.ss_ = np.zeros((2, 2))
            self.zv_ = np.zeros((2, tau))
            self.sv_ = np.zeros(2)

    # ----------------------------------------------------------------- update
    def _update(self, chunk: Chunk) -> None:
        if self.covariance == "full":
            neg, pos = ((s.count_, s.sum_, s.scatter_) for s in self.stats_)
            _opauc_full_chunk(
                self.w_,
                neg,
                pos,
                chunk.indptr,
                chunk.indices,
                chunk.data,
                chunk.y,
                float(self.eta),
                float(self.lam),
            )
        elif self.covariance == "sparse":
            self._update_sparse(chunk)
        else:
            self._update_lowrank(chunk)

    def _update_sparse(self, chunk: Chunk) -> None:
        neg, pos = self.stats_
        n = chunk.n_samples
        r = 0
        while True:
            r = _opauc_sparse_chunk(
                self.w_,
                *((s.count_, s.sum_, s.keys_, s.values_, s.index_, s.info_) for s in (neg, pos)),
                chunk.indptr,
                chunk.indices,
                chunk.data,
                chunk.y,
                r,
                neg.budget,
                neg.trigger,
                neg.full,
                float(self.eta),
                float(self.lam),
            )
            if r == n:
                return
            k = int(np.count_nonzero(chunk.data[chunk.indptr[r] : chunk.indptr[r + 1]]))
            self.stats_[int(chunk.y[r] > 0)]._grow(k * (k + 1) // 2)

    def _update_lowrank(self, chunk: Chunk) -> None:
        neg, pos = self.stats_
        tau = neg.sketch_size
        n = chunk.n_samples
        fd = self.covariance == "fd"
        centering = _CENTERING_CODES[neg.centering]
        if self.covariance == "randomized":
            A = RandomizedCovariance.draw(self._rng, n, tau)
        elif self.covariance == "hash":
            A = HashedCovariance.draw(self._rng, n, tau)
        else:
            A = np.zeros((0, tau))
            centering = 3 if neg.centering == "exact" else 0
        extra = [self._class_extras(s) for s in (neg, pos)]
        r, resume = 0, False
        while True:
            r, event = _opauc_lowrank_chunk(
                neg.count_,
                neg.sum_,
                neg.sketch_,
                neg.gram_,
                *extra[0],
                pos.count_,
                pos.sum_,
                pos.sketch_,
                pos.gram_,
                *extra[1],
                self.zz_,
                self.zs_,
                self.ss_,
                self.v_,
                self.p_,
                self.gamma_,
                self.scale_,
                self.zv_,
                self.sv_,
                chunk.indptr,
                chunk.indices,
                chunk.data,
                chunk.y,
                A,
                r,
                resume,
                fd,
                centering,
                float(self.eta),
                float(self.lam),
                int(self._rebase_every),
            )
            if event == _DONE:
                break
            if event == _SHRINK:
                self._fd_shrink(int(chunk.y[r] > 0))
                resume = True
            else:
                self._rebase()
                resume = False
        self._materialize()

    @staticmethod
    def _class_extras(summary):
        """(asum, nfill, frob, seen, support, n_support, zs, ss, beta) of a summary,
        scratch where its kind has none."""
        tau = summary.sketch_size
        if hasattr(summary, "fd_arrays"):
            return (np.zeros(tau), *summary.fd_arrays())
        return (
            summary.asum_,
            np.zeros(1, dtype=np.int64),
            np.zeros(1),
            np.zeros(1, dtype=np.bool_),
            np.zeros(1, dtype=np.int64),
            np.zeros(1, dtype=np.int64),
            np.zeros(tau),
            np.zeros(1),
            np.zeros(tau),
        )

    def _fd_shrink(self, c: int) -> None:
        """Shrink class c's frequent-directions sketch (Alg. 2) and keep w fixed."""
        s, o = self.stats_[c], 1 - c
        pc, gc = self.p_[c].copy(), float(self.gamma_[c])
        # fold Z_c p_c + gamma_c s_c into v (the products need the old Z_c)
        z_oc = self.zz_.T if c == 0 else self.zz_  # Z_o^T Z_c
        self.zv_[c] += s.gram_ @ pc + gc * self.zs_[c, c]
        self.zv_[o] += z_oc @ pc + gc * self.zs_[o, c]
        for b in (0, 1):
            self.sv_[b] += self.zs_[c, b] @ pc + gc * self.ss_[b, c]
        self.v_ += gc * s.sum_
        self.p_[c] = 0.0
        self.gamma_[c] = 0.0
        M = s.shrink_now(dump_coef=pc, dump_out=self.v_)
        m = M.shape[1]
        if c == 0:
            zz = M.T @ self.zz_
            self.zz_[:] = 0.0
            self.zz_[:m] = zz
        else:
            zz = self.zz_ @ M
            self.zz_[:] = 0.0
            self.zz_[:, :m] = zz
        for b in (0, 1):
            new = M.T @ self.zs_[c, b]
            self.zs_[c, b] = 0.0
            self.zs_[c, b, :m] = new
        new = M.T @ self.zv_[c]
        self.zv_[c] = 0.0
        self.zv_[c, :m] = new

    def _implicit_sum(self) -> np.ndarray:
        """``v + Z_0 p_0 + Z_1 p_1 + gamma_0 s_0 + gamma_1 s_1`` (O(d tau))."""
        total = self.v_.copy()
        for c, s in enumerate(self.stats_):
            total += s.sketch_dot(self.p_[c])
            total += self.gamma_[c] * s.sum_
        return total

    def _materialize(self) -> None:
        self.w_[:] = self.scale_[0] * self._implicit_sum()

    def _rebase(self) -> None:
        """Fold the implicit weights into v and recompute every maintained product."""
        self.v_[:] = self.scale_[0] * self._implicit_sum()
        self.scale_[0] = 1.0
        self.p_[:] = 0.0
        self.gamma_[:] = 0.0
        for s in self.stats_:
            if hasattr(s, "settle"):
                s.settle()  # FD: fold the pending mean parts into the sketch array
        Z = [s.sketch_ for s in self.stats_]
        S = [s.sum_ for s in self.stats_]
        for s in self.stats_:
            s._refresh_gram()
        self.zz_[:] = Z[0].T @ Z[1]
        for a in (0, 1):
            self.zv_[a] = Z[a].T @ self.v_
            self.sv_[a] = S[a] @ self.v_
            for b in (0, 1):
                self.zs_[a, b] = Z[a].T @ S[b]
                self.ss_[a, b] = S[a] @ S[b]

    def _coef(self) -> np.ndarray:
        return self.w_
