"""SOLAM: stochastic online AUC maximization by primal-dual steps on a saddle problem.

Ying, Wen and Lyu, *Stochastic Online AUC Maximization* (NIPS 2016, "Y16"); SPEC §10.
SOLAM-l1 is the variant with an l1-ball constraint used as a baseline by Liu, Zhang,
Chen, Wang and Yang, *Fast Stochastic AUC Maximization with O(1/n)-Convergence Rate*
(ICML 2018, "L18", §5).

Saddle form
-----------
With :math:`v = (w, a, b) \\in \\mathbb R^{d+2}`, a dual variable :math:`\\alpha`, and
:math:`p = \\Pr(y = 1)`, the square-loss AUC problem equals (Y16, restated in L18 §3.1)
:math:`\\min_v \\max_\\alpha \\mathbb E_z F(v, \\alpha; z)` with

.. math::

    F(v, \\alpha; z) = (1-p)(w^\\top x - a)^2 \\mathbb I_{y=1}
        + p(w^\\top x - b)^2 \\mathbb I_{y=-1}
        + 2(1+\\alpha)\\big(p\\, w^\\top x\\, \\mathbb I_{y=-1}
        - (1-p)\\, w^\\top x\\, \\mathbb I_{y=1}\\big) - p(1-p)\\alpha^2 .

With :math:`s = w^\\top x` its gradients are (SPEC §10; :func:`saddle_gradient`)

* :math:`y=+1`: :math:`\\nabla_w = 2(1-p)(s-a-1-\\alpha)x`,
  :math:`\\nabla_a = -2(1-p)(s-a)`, :math:`\\nabla_b = 0`,
  :math:`\\nabla_\\alpha = -2(1-p)(s+p\\alpha)`;
* :math:`y=-1`: :math:`\\nabla_w = 2p(s-b+1+\\alpha)x`, :math:`\\nabla_a = 0`,
  :math:`\\nabla_b = -2p(s-b)`, :math:`\\nabla_\\alpha = 2p(s-(1-p)\\alpha)`.

Update (Y16 Alg. 1), for t = 1, 2, ...
----------------------------------------
1. :math:`\\hat p = T_+/t` (the running positive rate, current example included)
   replaces the unknown p;
2. :math:`\\gamma_t = \\zeta/\\sqrt t`;
3. from the same old point, :math:`v \\leftarrow \\Pi_{\\Omega_1}(v - \\gamma_t\\nabla_v F)`
   (descent) and :math:`\\alpha \\leftarrow \\Pi_{\\Omega_2}(\\alpha + \\gamma_t
   \\nabla_\\alpha F)` (ascent), with :math:`\\Omega_1 = \\{\\|w\\|_2 \\le R,
   |a| \\le R\\kappa, |b| \\le R\\kappa\\}` and :math:`\\Omega_2 = \\{|\\alpha| \\le
   2R\\kappa\\}` (SPEC §10), :math:`\\kappa \\ge \\max\\|x\\|_2`;
4. the model is the step-weighted average
   :math:`\\bar w_t = \\sum_{s\\le t}\\gamma_s w_s / \\sum_{s\\le t}\\gamma_s` of the
   iterates at which the gradients were taken (``average="pre"``, Y16 Alg. 1), or of
   the updated iterates (``average="post"``, as in the authors' MATLAB code); the
   score is :math:`\\bar w^\\top x`.

SOLAM-l1 (L18 §5) replaces :math:`\\|w\\|_2 \\le R` by :math:`\\|w\\|_1 \\le R`
(projection of Duchi et al. 2008, :mod:`aucstream.projections`).

Cost per example: sparse bookkeeping
------------------------------------
The gradient in w is a multiple of x, so a step changes only the k non-zeros of x.
The kernel keeps :math:`w = \\sigma u` and the unnormalized average in the form
:math:`S = \\sum_s \\gamma_s w_s = S_0 + c\\,u - P` with a scalar :math:`c` (the sum
of :math:`\\gamma_s\\sigma_s` since the last flush). Adding the current iterate to the
average is ``c += gamma * sigma``; changing u by :math:`\\Delta u` adds
:math:`c\\,\\Delta u` to P, so S does not change. The l2 projection only rescales
:math:`\\sigma`, and :math:`\\|u\\|_2^2` and :math:`\\|u\\|_1` are kept up to date from
the changed entries. Hence SOLAM (l2) costs O(k) per example for k non-zeros (O(d)
for dense input). For SOLAM-l1 the projection, when active, moves every coordinate
by the threshold, which costs O(d) (plus Condat's O(d) threshold search); it is
skipped in O(1) when :math:`\\|w\\|_1 \\le R`. The representation is flushed (O(d)) when
:math:`\\sigma < 10^{-4}` and every 65536 examples, which bounds round-off; both
rules depend only on the stream, not on how it is cut into chunks, so any chunking
gives bit-identical models.

Deviations
----------
* :math:`\\kappa` is a parameter (default 1, right for l2-normalized rows) rather
  than computed from the training set, so that ``partial_fit`` on a stream needs no
  pass over the data (SPEC §14 #16 defines it as :math:`\\max_i\\|x_i\\|_2`).
* The initial point is v = 0, α = 0 (Y16 allows any point of Ω; SPEC §10).
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numpy.typing import ArrayLike

from ._base import BaseStreamingAUC
from ._chunks import Chunk
from .projections import l1_threshold

__all__ = ["SOLAM", "SOLAML1", "saddle_gradient", "saddle_objective"]

#: Flush the lazy representation every this many examples (a power of two).
_FLUSH_EVERY = 1 << 16
#: Flush when the scale of w = sigma * u falls below this.
_MIN_SIGMA = 1e-4

# indices into SOLAM.scalars_
_SIGMA, _C, _GSUM, _A, _B, _ALPHA, _SA, _SB, _SAL, _NRM2, _NRM1 = range(11)
_N_SCALARS = 11


@nb.njit(cache=True)
def saddle_grad_scalars(s, y, p, a, b, alpha):
    """Gradient of F at (w, a, b, alpha) for one example with score ``s = w.x``.

    Returns ``(g, g_a, g_b, g_alpha)`` with ``grad_w F = g * x`` (SPEC §10).
    """
    if y > 0:
        q = 2.0 * (1.0 - p)
        return q * (s - a - 1.0 - alpha), -q * (s - a), 0.0, -q * (s + p * alpha)
    q = 2.0 * p
    return q * (s - b + 1.0 + alpha), 0.0, -q * (s - b), q * (s - (1.0 - p) * alpha)


@nb.njit(cache=True)
def sparse_dot(dense, indices, data, lo, hi):
    """``dense . x`` for the CSR row ``indices[lo:hi], data[lo:hi]``."""
    acc = 0.0
    for k in range(lo, hi):
        acc += dense[indices[k]] * data[k]
    return acc


@nb.njit(cache=True)
def _clip(v, lo, hi):
    return min(max(v, lo), hi)


@nb.njit(cache=True)
def _flush(u, base, corr, scal):
    """Fold the average into ``base`` and sigma into u; recompute the norms."""
    c = scal[_C]
    sigma = scal[_SIGMA]
    nrm2 = 0.0
    nrm1 = 0.0
    for i in range(u.shape[0]):
        base[i] += c * u[i] - corr[i]
        corr[i] = 0.0
        ui = u[i] * sigma
        u[i] = ui
        nrm2 += ui * ui
        nrm1 += abs(ui)
    scal[_C] = 0.0
    scal[_SIGMA] = 1.0
    scal[_NRM2] = nrm2
    scal[_NRM1] = nrm1


@nb.njit(cache=True)
def _solam_chunk(
    u, base, corr, scal, counts, indptr, indices, data, ys, R, zeta, kappa, use_l1, pre, work
):
    rk = R * kappa
    ak = 2.0 * R * kappa
    d = u.shape[0]
    for r in range(indptr.shape[0] - 1):
        lo, hi = indptr[r], indptr[r + 1]
        y = ys[r]
        t = counts[0] + 1
        counts[0] = t
        if y > 0:
            counts[1] += 1
        p = counts[1] / t
        gamma = zeta / np.sqrt(t)
        sigma = scal[_SIGMA]
        a, b, alpha = scal[_A], scal[_B], scal[_ALPHA]
        s = sigma * sparse_dot(u, indices, data, lo, hi)
        g, g_a, g_b, g_alpha = saddle_grad_scalars(s, y, p, a, b, alpha)
        if pre:
            scal[_C] += gamma * sigma
            scal[_GSUM] += gamma
            scal[_SA] += gamma * a
            scal[_SB] += gamma * b
            scal[_SAL] += gamma * alpha
        c = scal[_C]
        if g != 0.0:
            coef = -gamma * g / sigma
            nrm2, nrm1 = scal[_NRM2], scal[_NRM1]
            for k in range(lo, hi):
                i = indices[k]
                du = coef * data[k]
                old = u[i]
                new = old + du
                u[i] = new
                corr[i] += c * du
                nrm2 += new * new - old * old
                nrm1 += abs(new) - abs(old)
            scal[_NRM2], scal[_NRM1] = nrm2, nrm1
        scal[_A] = _clip(a - gamma * g_a, -rk, rk)
        scal[_B] = _clip(b - gamma * g_b, -rk, rk)
        scal[_ALPHA] = _clip(alpha + gamma * g_alpha, -ak, ak)
        if use_l1:
            # sigma stays 1 in l1 mode, so u is w
            if scal[_NRM1] > R:
                # theta depends only on the non-zero magnitudes: pass just those
                mags = work[:d]
                n_nz = 0
                total = 0.0
                for i in range(d):
                    m = abs(u[i])
                    if m > 0.0:
                        mags[n_nz] = m
                        n_nz += 1
                        total += m
                if total > R:
                    theta = l1_threshold(mags[:n_nz], R, work[d:])
                    nrm2 = 0.0
                    nrm1 = 0.0
                    for i in range(d):
                        m = abs(u[i]) - theta
                        new = 0.0
                        if m > 0.0:
                            new = m if u[i] > 0.0 else -m
                        corr[i] += c * (new - u[i])
                        u[i] = new
                        nrm2 += new * new
                        nrm1 += m if m > 0.0 else 0.0
                    scal[_NRM2], scal[_NRM1] = nrm2, nrm1
                else:
                    scal[_NRM1] = total
        else:
            norm = sigma * np.sqrt(max(scal[_NRM2], 0.0))
            if norm > R:
                scal[_SIGMA] = sigma * (R / norm)
        if not pre:
            sigma = scal[_SIGMA]
            scal[_C] += gamma * sigma
            scal[_GSUM] += gamma
            scal[_SA] += gamma * scal[_A]
            scal[_SB] += gamma * scal[_B]
            scal[_SAL] += gamma * scal[_ALPHA]
        if scal[_SIGMA] < _MIN_SIGMA or t % _FLUSH_EVERY == 0:
            _flush(u, base, corr, scal)


def saddle_objective(
    w: ArrayLike, a: float, b: float, alpha: float, x: ArrayLike, y: float, p: float
) -> float:
    """F(v, alpha; z) of SPEC §10 (L18 §3.1) for one example.

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


class SOLAM(BaseStreamingAUC):
    """Stochastic online AUC maximization (SOLAM), l2- or l1-constrained.

    See the module docstring for the saddle problem and the update (Y16 Alg. 1;
    SPEC §10). Memory is O(d); the work per example is O(k) for an example with k
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
        iterates (the authors' code); SPEC §14 #15.
    shuffle : bool, default=False
        Whether ``fit`` visits the examples in a random order (still one pass).
    random_state : int, Generator or None, default=None
        Seed of the shuffle.

    Attributes
    ----------
    u_ : ndarray of shape (n_features,)
        Direction of the current iterate, ``w = scalars_[0] * u_``.
    avg_base_, avg_corr_ : ndarray of shape (n_features,)
        Lazy form of the weighted sum of iterates (module docstring).
    scalars_ : ndarray of shape (11,)
        sigma, c, sum of gammas, a, b, alpha, their weighted sums, ||u||_2^2, ||u||_1.
    counts_ : ndarray of shape (2,)
        Examples seen and positives seen.
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

    def __init__(
        self,
        R: float = 1.0,
        zeta: float = 1.0,
        kappa: float = 1.0,
        constraint: str = "l2",
        average: str = "pre",
        shuffle: bool = False,
        random_state=None,
    ):
        self.R = R
        self.zeta = zeta
        self.kappa = kappa
        self.constraint = constraint
        self.average = average
        self.shuffle = shuffle
        self.random_state = random_state

    def _init_state(self, n_features: int) -> None:
        for name in ("R", "zeta", "kappa"):
            value = getattr(self, name)
            if not (
                isinstance(value, (int, float, np.number)) and value > 0 and np.isfinite(value)
            ):
                raise ValueError(f"{name} must be a positive finite number, got {value!r}")
        if self.constraint not in ("l2", "l1"):
            raise ValueError(f"constraint must be 'l2' or 'l1', got {self.constraint!r}")
        if self.average not in ("pre", "post"):
            raise ValueError(f"average must be 'pre' or 'post', got {self.average!r}")
        self.u_ = np.zeros(n_features)
        self.avg_base_ = np.zeros(n_features)
        self.avg_corr_ = np.zeros(n_features)
        self.scalars_ = np.zeros(_N_SCALARS)
        self.scalars_[_SIGMA] = 1.0
        self.counts_ = np.zeros(2, dtype=np.int64)

    def _update(self, chunk: Chunk) -> None:
        work = np.empty(3 * self.u_.shape[0] if self.constraint == "l1" else 0)
        _solam_chunk(
            self.u_,
            self.avg_base_,
            self.avg_corr_,
            self.scalars_,
            self.counts_,
            chunk.indptr,
            chunk.indices,
            chunk.data,
            chunk.y,
            float(self.R),
            float(self.zeta),
            float(self.kappa),
            self.constraint == "l1",
            self.average == "pre",
            work,
        )

    def _coef(self) -> np.ndarray:
        s = self.scalars_
        if s[_GSUM] == 0.0:
            return np.zeros_like(self.u_)
        return (self.avg_base_ + s[_C] * self.u_ - self.avg_corr_) / s[_GSUM]

    def _iterate(self) -> tuple[np.ndarray, float, float, float]:
        """The current (not averaged) iterate (w, a, b, alpha)."""
        s = self.scalars_
        return s[_SIGMA] * self.u_, float(s[_A]), float(s[_B]), float(s[_ALPHA])


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

    def __init__(
        self,
        R: float = 1.0,
        zeta: float = 1.0,
        kappa: float = 1.0,
        average: str = "pre",
        shuffle: bool = False,
        random_state=None,
    ):
        self.R = R
        self.zeta = zeta
        self.kappa = kappa
        self.average = average
        self.shuffle = shuffle
        self.random_state = random_state
