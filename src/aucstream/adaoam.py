r"""AdaOAM and SAdaOAM: adaptive-subgradient online AUC maximization.

Ding, Zhao, Hoi and Ong, *Adaptive Subgradient Methods for Online AUC Maximization*
(arXiv 1602.00351, "D16"; AAAI 2015 short version "D15"). The copy of D16 we work
from lost its displayed formulas; the equation numbers below are the ones its prose
refers to, and the formulas are our reconstruction from that prose: the OPAUC
gradient (G16 Eqs. 7-8), which D16 §3.1-3.2 describe in words, plus diagonal AdaGrad
(Duchi, Hazan and Singer 2011), step by step as D16 §3.2-3.3 describe it.

Objective and gradient
----------------------
Both learners minimize the regularized square pairwise loss of OPAUC (D16 §3.1,
objective (2); :mod:`aucstream.opauc`),

.. math::

    \mathcal L(w) = \frac\lambda2\|w\|^2 + \frac{1}{2T_+T_-}
        \sum_{i\in+,\,j\in-} \big(1 - w^\top(x_i - x_j)\big)^2 ,

one example at a time. For :math:`(x_t, y_t)` the gradient of the per-step loss needs
only the mean :math:`c` and covariance :math:`\Gamma` of the *opposite* class
(D16 Eqs. (3)-(4); G16 Eqs. 7-8):

.. math::

    g_t = \lambda w_t - y_t e + e\,(e^\top w_t) + \Gamma w_t, \qquad e = x_t - c .

Before the step the example joins its own class's summary; while the opposite class
is still empty the step is skipped entirely (no gradient, no accumulator update,
no shrinkage: the model is left unchanged, as OPAUC does before both classes exist).

AdaOAM (D16 §3.2, Alg. 1)
-------------------------
Diagonal AdaGrad (D16 Eq. (6), the diagonal proxy of the full-matrix update (5)):

.. math::

    s \leftarrow s + g_t \odot g_t, \quad h = \delta + \sqrt s, \quad
    w_{t+1} = \Pi^{H}_{\mathcal W}\big(w_t - \eta\, g_t \oslash h\big),

where :math:`\Pi^H_{\mathcal W}(v) = \arg\min_{\|u\|\le r} (u-v)^\top
\mathrm{diag}(h)(u-v)` projects in the H-norm onto the ball of radius
:math:`r = 1/\sqrt\lambda` that contains the optimum (D16 §3.1). Its solution is
:math:`u_i = h_i v_i / (h_i + \mu)` with :math:`\mu \ge 0` the root of
:math:`\|u(\mu)\| = r`, which decreases in :math:`\mu`; we find it by safeguarded Newton steps on
:math:`1/\|u(\mu)\| - 1/r`, which is increasing and concave in :math:`\mu`, so
Newton from :math:`\mu = 0` rises monotonically to the root (the secular-equation
device of trust-region methods). The class summaries are the exact
:class:`aucstream.covariance.FullCovariance` (O(d^2) per example, dominated by
:math:`\Gamma w`).

SAdaOAM (D16 §3.3, Alg. 2)
--------------------------
The objective gains :math:`\theta\|w\|_1`, handled by AdaGrad's composite mirror
descent step (D16 §3.3, the coordinate-wise solution of the composite update):

.. math::

    u_i = w_{t,i} - \eta g_{t,i}/h_i, \qquad
    w_{t+1,i} = \operatorname{sign}(u_i)\max\big(0, |u_i| - \eta\theta/h_i\big),

the minimizer of :math:`\eta g_i w + \eta\theta|w| + \frac{h_i}2(w - w_{t,i})^2`.
The class covariances are kept in the sparse P-form that D16 §3.3 prescribes,
:math:`\Gamma w = P w / T - c\,(c^\top w)` with :math:`P = \sum x x^\top` stored
exactly as a sparse symmetric matrix (:class:`ExactSparseCovariance`): adding an
example with k non-zeros costs O(k^2) and :math:`P w` costs O(nnz(P)).

Lazy updates (D16 §3.3, last paragraph). If :math:`g_{\tau,i} = 0` for the steps
:math:`\tau = t_0, \dots, t-1`, then :math:`h_i` is frozen and those steps only
shrink :math:`w_i`:
:math:`w_{t,i} = \operatorname{sign}(w_{t_0,i})\max(0, |w_{t_0,i}| -
(t - t_0)\eta\theta/h_i)`. The learner stores the step :math:`t_0` at which each
coordinate was last brought up to date and applies the accumulated shrinkage when the
coordinate is next read or written, and when the weights are requested (``coef_``
materializes a copy; the stored state stays lazy, so splitting the stream into chunks
never changes the model).

Which coordinates have an exactly zero gradient? With the opposite class's
feature support :math:`S` (features that were non-zero in at least one of its
examples) the gradient is
:math:`g_i = \lambda w_i + (Pw)_i/T - c_i(c^\top w + \alpha) + \alpha x_i` with
:math:`\alpha = e^\top w - y`. Outside :math:`S` row i of P and :math:`c_i` are
exactly zero, so :math:`g_i = \lambda w_i + \alpha x_i`. Hence the coordinates
updated eagerly at a step are

- ``lam == 0``: :math:`S \cup \mathrm{supp}(x_t)` -- every other coordinate has
  :math:`g_i = 0` and is lazy; the per-example cost is O(k) plus the cost of the
  covariance summary (O(k^2) to add, O(nnz(P) + |S|) to multiply);
- ``lam > 0``: :math:`S_+ \cup S_-` (every feature seen so far): a coordinate outside
  :math:`S` but with :math:`w_i \neq 0` has :math:`g_i = \lambda w_i \neq 0`, which
  changes :math:`h_i` at every step and has no closed form, so it is updated eagerly;
  features never seen have :math:`w_i = 0` and :math:`g_i = 0` forever.

Inside :math:`S` the term :math:`(Pw)_i` couples coordinate i to every feature it
co-occurred with, so the gradient is generically dense there and no lazy form is
exact. The lazy path therefore pays off on high-dimensional data where each class's
support is a small part of the features; on data whose features all occur in both
classes it costs the same as the eager path. Lazy and eager results agree up to
rounding (one multiplication by the number of skipped steps instead of repeated
subtractions).

Example weights
---------------
With ``sample_weight`` both learners minimize the weighted objective of
:class:`aucstream.opauc.OPAUC` (the statistics of the weighted sample in the class
summaries: :math:`W`, :math:`\sum\omega x`, :math:`\sum \omega x x^\top`) and take
AdaGrad's step on the weighted per-step loss :math:`\omega_t f_t`: the gradient is
:math:`\omega_t g_t`, both in the step and in the squared-gradient sums (SAdaOAM's
:math:`\theta\|w\|_1` term is the regularizer of each step and is not weighted).
A weight of 0 leaves the model exactly as it was: no statistics, no step, and
SAdaOAM's step counter (the lazy clock) does not advance.

Forgetting (``half_life``)
--------------------------
D16 learns one stationary stream. With a half-life of :math:`h` examples
(:data:`aucstream._params.FORGETTING`: examples of the stream, both classes) and
:math:`\gamma = 2^{-1/h}`, an example of age :math:`a` (examples learnt after it)
weighs :math:`\gamma^a` in everything the learners accumulate:

- the squared-gradient sums decay like RMSProp's, one factor per example,
  :math:`s \leftarrow \gamma s + g_t \odot g_t` (D16's :math:`s \leftarrow s + g_t
  \odot g_t` when :math:`\gamma = 1`), so :math:`h` and the steps no longer shrink
  for ever;
- each class summary holds the decayed statistics :math:`W_c = \sum_i \gamma^{a_i}
  \omega_i`, :math:`s_c = \sum_i \gamma^{a_i}\omega_i x_i`, :math:`P_c = \sum_i
  \gamma^{a_i}\omega_i x_i x_i^\top` over its examples, so that
  :math:`c = s_c / W_c` and :math:`\Gamma = P_c/W_c - c c^\top` are exponentially
  weighted means and covariances, ages counted on the stream's clock (a rare class's
  old examples fade while the other class streams by; its mean does not change
  between its arrivals, as every term decays alike).

The summaries are not multiplied by :math:`\gamma` at each example (O(d^2) for
AdaOAM's scatter): each class has a clock :math:`E_c` that every example (of either
class, of weight > 0) advances by :math:`1/h`, and an example joins its class with
weight :math:`\omega\,2^{E_c}`; the stored statistics are then :math:`2^{E_c}`
times the decayed ones, and :math:`c` and :math:`\Gamma`, ratios, are the decayed
ones exactly. An example first advances the clocks, then joins. When :math:`E_c`
passes 32 it goes back by 32 and the summary is multiplied by :math:`2^{-32}` (exact
in binary floating point; as many times as it passed 32, when :math:`h < 1/32`), so
nothing overflows. A summary whose weight has fallen below :math:`2^{-224}` (a class
absent for some 200 half-lives) is no longer rescaled: its mass relative to its next
example stays below :math:`2^{-224}` (the exact one, smaller still), far below
rounding. ``class_clocks_``
holds :math:`E_c`; ``half_life=None`` keeps them at 0 and is D16 exactly. Merging
brings the other learner's summaries to this one's clocks (a factor
:math:`2^{E_c - E'_c}`; the two learners are taken to have learnt at the same time,
as parallel shards) and adds them; the sums :math:`s` add. SAdaOAM's lazy updates
need :math:`h_i` constant between a coordinate's updates, which decay breaks: with
forgetting every feature seen so far is updated at each step (as with ``lam > 0``).

Columns in their running scale (AdaOAM's ``column_scale``, a library default)
----------------------------------------------------------------------------
AdaGrad moves each weight by about :math:`\eta` per step whatever its column's units,
and the ball :math:`\|w\| \le 1/\sqrt\lambda` and the penalty
:math:`\frac\lambda2\|w\|^2` (objective (2)) weigh all weights alike: on raw columns
(sensor readings in the thousands next to rates in [0, 1]) the large columns dominate
every score and the small ones are never learnt. So AdaOAM by default
(``column_scale="max_abs"``) learns the weights :math:`\tilde w = s \odot w` of the
columns in their running scale :math:`s_i = \max_{t' \le t}|x_{t',i}|` (the running
maximum of the normalized updates of Ross, Mineiro and Langford, UAI 2013): the class
summaries stay those of the raw rows, and the gradient of Eqs. (3)-(4) in
:math:`\tilde w` is :math:`\lambda\tilde w + D^{-1}(\Gamma w + e(e^\top w) - y e)`
with :math:`D = \mathrm{diag}(s_t)` and :math:`w = D^{-1}\tilde w`, the gradient of
objective (2) on the columns divided by the current scale (all examples so far
included); the AdaGrad step and the projection act on :math:`\tilde w`, and
``coef_`` is :math:`w`. An example's columns join the scale before its step, after
its prequential score (:mod:`aucstream._running_scale`). ``column_scale=None`` is
D16 Alg. 1 exactly, as the reproduction harness passes it; a file saved before the
parameter existed loads with ``None``. SAdaOAM has the same default, kept O(k) per
touched column: it stores :math:`w` (raw units, so the class summaries' products
:math:`Pw`, :math:`c^\top w`, :math:`x^\top w` are as before), a column's scale is
read and grown only where the row is non-zero (the column first brought up to date,
its owed shrinkage being in the old scale; then :math:`w_i \leftarrow w_i s_i/s'_i`,
which keeps :math:`\tilde w_i`), and each AdaGrad l1 step and each lazy shrinkage of
Alg. 2 acts on :math:`\tilde w_i = s_i w_i` with the gradient
:math:`\lambda\tilde w_i + g_i/s_i` (the l1 term :math:`\theta\|\tilde w\|_1`
likewise on the scaled weights): between two changes of :math:`s_i` the lazy form is
exact as before, since a column's scale changes only at an example that touches it.

Deviations from D16
-------------------
- AdaOAM's and SAdaOAM's ``column_scale="max_abs"`` (the default) learns in each
  column's running scale (section above); ``None`` is D16 Algs. 1-2.
- The formulas are reconstructed (see the top of this docstring): diagonal AdaGrad with
  :math:`\delta = 10^{-8}` (D16: "a very small value"), H-norm projection onto
  :math:`\|w\| \le 1/\sqrt\lambda`; SAdaOAM has no ball projection (Alg. 2 has none).
- ``delta`` must be positive: with :math:`\delta = 0` a coordinate whose gradient has
  always been zero would give 0/0.
- With ``lam == 0`` the ball is unbounded and no projection is made.
- SAdaOAM's default is ``lazy=True``. D16's lazy form is exact only where
  :math:`g_i = 0`, and the gradient, which contains :math:`\lambda w`, c and
  :math:`\Gamma w`, is usually dense, so an eager update would be the safe default;
  here the lazy path falls back to eager updates wherever the lazy form would not be
  exact, so it is exact (up to rounding) and never slower.
- The exact sparse P makes SAdaOAM's memory O(d + nnz(P)), which can approach
  O(d^2) on data with many co-occurring features.
"""

from __future__ import annotations

import math
from collections import namedtuple
from copy import deepcopy
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from ._adaoam_step import EUCLIDEAN, H_NORM, NO_PROJECTION, _adaoam_chunk, _h_project
from ._base import BaseStreamingAUC
from ._chunks import Chunk
from ._kernels import bound_call, mean_by_count, rows_of
from ._params import FORGETTING, StrOptions, decay_per_example, non_negative, positive
from ._running_scale import coef_in_columns
from ._runtime import LearnerTags, StateSpec
from ._sadaoam_step import (
    CLOCK_SPAN,
    _caught_up,
    _l1_coord,
    _sadaoam_chunk,
)
from ._typing import RandomState
from .covariance import (
    SUMMARY_DTYPES,
    ExactSparseCovariance,
    FullCovariance,
    borrowing_njit,
    run_reserving,
)
from .covariance._nbytes import summary_nbytes

__all__ = [
    "AdaOAM",
    "SAdaOAM",
    "ExactSparseCovariance",
    "h_norm_projection",
    "adagrad_l1_step",
]

#: Projection codes of the AdaOAM kernel.
_PROJECTIONS = {"none": NO_PROJECTION, "euclidean": EUCLIDEAN, "H": H_NORM}

#: Constraints of the parameters both learners share.
_COMMON_CONSTRAINTS = {
    "eta": [positive()],
    "lam": [non_negative()],
    "delta": [positive()],
    **FORGETTING,
    "shuffle": ["boolean"],
    "random_state": ["random_state", np.random.Generator],
}

#: The AdaOAM kernel's settings; ``radius`` = 1/sqrt(lam) (inf when lam = 0).
#: Both kernels' ``gamma`` = 2^(-1/h) and ``step`` = 1/h (1.0 and 0.0 without forgetting).
AdaOAMSettings = namedtuple(
    "AdaOAMSettings",
    ["eta", "lam", "delta", "projection", "radius", "gamma", "step", "rescale"],
)
#: The SAdaOAM kernel's settings.
SAdaOAMSettings = namedtuple(
    "SAdaOAMSettings", ["eta", "lam", "theta", "delta", "lazy", "gamma", "step"]
)
#: SAdaOAM's state: weights w, squared-gradient sums s, each coordinate's last
#: up-to-date step, the step counter (shape (1,)) and the two class clocks.
#: ``colscale`` is the running column scale (empty without ``column_scale``).
SAdaOAMState = namedtuple("SAdaOAMState", ["w", "s", "last", "steps", "clocks", "colscale"])


# --------------------------------------------------------------------------- helpers
def h_norm_projection(v: ArrayLike, h: ArrayLike, radius: float) -> np.ndarray:
    r"""Projection onto the Euclidean ball in the norm of ``diag(h)`` (AdaOAM's step).

    Solves :math:`\min_{\|u\|_2 \le r} (u - v)^\top \mathrm{diag}(h) (u - v)`; the
    solution is :math:`u_i = h_i v_i / (h_i + \mu)` with :math:`\|u\| = r` when
    :math:`\|v\| > r`.

    Parameters
    ----------
    v : array-like of shape (d,)
        The point to project.
    h : array-like of shape (d,)
        Positive weights of the norm (AdaGrad's :math:`\delta + \sqrt{s}`).
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


@borrowing_njit
def _l1_step_all(w, g, h, eta, eta_theta, out):
    for i in range(w.shape[0]):
        out[i] = _l1_coord(w[i], g[i], h[i], eta, eta_theta)


def adagrad_l1_step(
    w: ArrayLike, g: ArrayLike, h: ArrayLike, eta: float, theta: float
) -> np.ndarray:
    r"""SAdaOAM's coordinate-wise step (D16 §3.3): an l1 proximal AdaGrad update.

    Returns :math:`\arg\min_v \eta g^\top v + \eta\theta\|v\|_1 +
    \frac12 (v - w)^\top \mathrm{diag}(h) (v - w)`, i.e.
    :math:`\operatorname{sign}(u)\max(0, |u| - \eta\theta/h)` with
    :math:`u = w - \eta g / h`.

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


def _rescaled(summary, factor: float):
    """A copy of an exact summary with its weighted statistics (W, s, P) times
    ``factor``: the same class statistics on another clock (module docstring)."""
    copy = deepcopy(summary)
    copy.weight_ *= factor
    copy.sum_ *= factor
    if isinstance(copy, FullCovariance):
        copy.scatter_ *= factor
        copy.pending_weight_ *= factor
    else:
        copy.values_ *= factor
    return copy


class _AdaGradAUC(BaseStreamingAUC):
    """What AdaOAM and SAdaOAM share: the state of AdaGrad with the OPAUC gradient
    from two exact class summaries (of kind ``_summary``), and ``sparsity_``."""

    param_grid: ClassVar[dict[str, list]] = {
        "eta": [2.0**k for k in range(-10, 11)],
        "lam": [2.0**k for k in range(-10, 3)],
    }
    _summary: ClassVar[Any] = FullCovariance
    stats_: list[Any]  # the two class summaries (negative, positive)
    _tags = LearnerTags(kernel_prequential=True, sample_weight=True)

    def _init_state(self, n_features: int) -> None:
        self.w_ = np.zeros(n_features)
        self.sq_grad_sum_ = np.zeros(n_features)
        self.n_updates_ = np.zeros(1, dtype=np.int64)
        self.stats_ = [self._new_summary(n_features), self._new_summary(n_features)]
        self.class_clocks_ = np.zeros(2)

    #: ``class_clocks_`` came with forgetting: a file without it forgot nothing (zeros).
    _state_added_later: ClassVar[tuple[str, ...]] = (
        *BaseStreamingAUC._state_added_later,
        "class_clocks_",
    )

    def _forgetting(self) -> tuple[float, float]:
        """``(gamma, step)`` = ``(2^(-1/h), 1/h)``, or ``(1.0, 0.0)`` without forgetting."""
        if self.half_life is None:
            return 1.0, 0.0
        return decay_per_example(self.half_life), 1.0 / float(self.half_life)

    def _new_summary(self, n_features: int):
        """An empty class summary of the learner's kind."""
        return self._summary(n_features)

    def _classes(self) -> tuple:
        """The two summaries' kernel arrays (negative, positive)."""
        return tuple(s.arrays() for s in self.stats_)

    def _merge(self, other: _AdaGradAUC) -> None:
        r"""Combine two learners that learnt disjoint parts of a stream.

        The class summaries merge exactly (their counts, sums and scatters add); the
        AdaGrad accumulators :math:`\sum g^2` and the step counters add; the weights
        combine by examples learnt, :math:`w = (n_1 w_1 + n_2 w_2)/(n_1 + n_2)` with
        :math:`n` the examples in a learner's summaries. The last is one-shot
        parameter averaging (Zinkevich, Weimer, Smola, Li 2010), not the weights one
        pass over both streams would give; the summed accumulators make later steps
        as small as after both streams' gradients. SAdaOAM first brings every
        coordinate up to date (the shrinkage its lazy updates owe), so the merged
        weights owe none. With ``half_life`` the other's summaries are first brought to
        this learner's class clocks (module docstring, "Forgetting").
        """
        n1 = sum(s.count for s in self.stats_)
        n2 = sum(s.count for s in other.stats_)
        mine, theirs = self._coef(), other._coef()
        w = mean_by_count(mine, n1, theirs, n2) if n1 + n2 > 0 else mine
        theirs_stats = other.stats_
        if self.half_life is not None:  # the other's summaries on this one's clocks
            shifts = self.class_clocks_ - other.class_clocks_
            theirs_stats = [_rescaled(b, 2.0**shift) for b, shift in zip(theirs_stats, shifts)]
        self.stats_ = [a.merge(b) for a, b in zip(self.stats_, theirs_stats)]
        self.sq_grad_sum_ = self.sq_grad_sum_ + other.sq_grad_sum_
        self.n_updates_ = self.n_updates_ + other.n_updates_
        self.w_ = np.array(w, dtype=np.float64, copy=True)
        last = getattr(self, "last_", None)
        if last is not None:  # SAdaOAM: every coordinate is up to date
            self.last_ = np.full_like(last, self.n_updates_[0])

    def _check_state(self) -> None:
        """Consistency of a loaded state across its members (each summary checks its
        own, :mod:`aucstream.covariance._checks`): two summaries of the learner's kind
        over ``n_features_in_`` features, whose counts add up to at most the examples
        seen; ``n_updates_`` (one per example that met a non-empty opposite class)
        between 0 and that sum; ``sq_grad_sum_`` (a sum of squares) not negative."""
        d = self.n_features_in_
        total = 0
        for c, s in enumerate(self.stats_):
            if type(s) is not self._summary or s.n_features != d:
                raise ValueError(
                    f"stats_[{c}] is a {type(s).__name__} of {s.n_features} features, not a "
                    f"{self._summary.__name__} of {d}"
                )
            total += s.count
        if total > self.n_samples_seen_:
            raise ValueError(
                f"stats_ count {total} examples, more than the {self.n_samples_seen_} seen"
            )
        updates = int(self.n_updates_[0])
        if not 0 <= updates <= total:
            raise ValueError(
                f"n_updates_ = {updates} steps, outside [0, {total}] (the examples the "
                "summaries hold)"
            )
        if np.any(self.sq_grad_sum_ < 0):
            raise ValueError("sq_grad_sum_ holds a negative value, but it is a sum of squares")
        clocks = self.class_clocks_
        span = CLOCK_SPAN if self.half_life is not None else 0.0
        if clocks.shape != (2,) or not np.all((clocks >= 0) & (clocks <= span)):
            raise ValueError(
                f"class_clocks_ = {clocks.tolist()}: two clocks in [0, {span}] (0 without "
                "half_life)"
            )

    @property
    def sparsity_(self) -> float:
        """Fraction of the weights (of ``coef_``) that are exactly zero."""
        coef = self.coef_
        return float(np.mean(coef == 0.0)) if coef.size else 0.0


def _adaoam_nbytes(learner: AdaOAM, n_features: int) -> int:
    """The two d x d summaries, w, the squared-gradient sums and the kernel's three work
    vectors (``StateSpec.nbytes``)."""
    d = int(n_features)
    itemsize = np.dtype(learner.dtype).itemsize
    return 2 * summary_nbytes("full", d, itemsize=itemsize) + 8 * (5 * d + 1)


def _adaoam_variant(learner: AdaOAM, chunk: Chunk) -> int:
    """1 when learning ``chunk`` may bring a class clock to its span (forgetting: the
    kernel then rescales that class's summary, :func:`advance_clocks`), else 0 (a
    bound, with a margin for the rounding of the clocks' sums); ``StateSpec.variant``."""
    if learner.half_life is None:
        return 0
    ahead = chunk.n_samples / float(learner.half_life) * (1.0 + 1e-9) + 1e-9
    return int(float(learner.class_clocks_.max()) + ahead >= CLOCK_SPAN)


def _adaoam_read_only(learner: AdaOAM, y_pm: np.ndarray, chunk: Chunk | None = None) -> tuple:
    """The summary of the class no example of the chunk belongs to, which the kernel
    (:func:`_adaoam_chunk`) only reads (unless forgetting may rescale it within the
    chunk, :func:`_adaoam_variant`); ``StateSpec.read_only``."""
    if learner.half_life is not None and (chunk is None or learner._plan_variant(chunk)):
        return ()
    return learner._other_class(y_pm, learner.stats_)


class AdaOAM(_AdaGradAUC):
    """Adaptive online AUC maximization (AdaOAM, D16 Alg. 1), diagonal AdaGrad.

    The OPAUC gradient from exact class covariances, a per-coordinate AdaGrad step
    and a projection onto ``||w|| <= 1/sqrt(lam)`` in the AdaGrad norm (see the
    module docstring). The cost per example is O(d^2) (the product with the opposite
    class's covariance); memory is O(d^2), independent of the stream length.

    Parameters
    ----------
    eta : float, default=2**-3
        Step size; tuned over 2^[-10:10] (the grid of D15's experiments; D16's copy
        lost it). The default is a library choice.
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
    dtype : {"float64", "float32"}, default="float64"
        Storage of the two d x d scatters: "float32" halves their memory and the
        memory traffic of the O(d^2) product that dominates each step. The weights,
        the AdaGrad sums, the counts and class sums stay float64, and every product
        is accumulated in float64 (as ``OPAUC(dtype="float32")``; see
        :class:`aucstream.covariance.FullCovariance`). Models of different dtypes do
        not merge.
    half_life : float or None, default=None
        Forgetting: an example seen ``half_life`` examples ago weighs half the latest
        one in the squared-gradient sums and the class statistics (module docstring).
        None: D16 exactly.
    column_scale : {"max_abs"} or None, default="max_abs"
        ``"max_abs"``: learn each column in its running scale (the running maximum
        of its absolute values, module docstring "Columns in their running scale"),
        so that the defaults learn on raw, unscaled columns. None: the rows as they
        come, D16 Alg. 1 exactly (the paper's setting, for rows scaled beforehand).

    Attributes
    ----------
    w_ : ndarray of shape (n_features,)
        Current weights (of the scaled columns with ``column_scale="max_abs"``:
        ``coef_`` is ``w_ / scale_``).
    scale_ : ndarray of shape (n_features,)
        The running maximum of each column's absolute values (``column_scale=
        "max_abs"``; zeros otherwise).
    sq_grad_sum_ : ndarray of shape (n_features,)
        AdaGrad's sum of squared gradients s (decayed with ``half_life``).
    stats_ : list of two FullCovariance
        Summaries of the negative and the positive class.
    n_updates_ : ndarray of shape (1,), int64
        Number of steps taken (examples that met a non-empty opposite class).
    class_clocks_ : ndarray of shape (2,)
        The class clocks :math:`E_c` of forgetting (zeros without).
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

    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "projection": [StrOptions(set(_PROJECTIONS))],
        "dtype": [StrOptions(set(SUMMARY_DTYPES))],
        "column_scale": [StrOptions({"max_abs"}), None],
    }
    _tags = replace(_AdaGradAUC._tags, dense_kernels=True)
    _state_spec = StateSpec(
        read_only=_adaoam_read_only,
        variant=_adaoam_variant,
        nbytes=_adaoam_nbytes,
        memory_hint=(
            "AdaOAM keeps two exact d x d covariance matrices (O(d^2) memory); for many "
            "features use SAdaOAM (exact sparse covariances: memory grows with the pairs "
            'of features that occur together) or OPAUC with a sketch (covariance="fd", '
            '"randomized", "hash" or "sparse")'
        ),
    )

    def __init__(
        self,
        eta: float = 2**-3,
        lam: float = 2**-8,
        delta: float = 1e-8,
        projection: str = "H",
        shuffle: bool = False,
        random_state: RandomState = None,
        dtype: str = "float64",
        half_life: float | None = None,
        column_scale: str | None = "max_abs",
    ):
        self.eta = eta
        self.lam = lam
        self.delta = delta
        self.projection = projection
        self.half_life = half_life
        self.shuffle = shuffle
        self.random_state = random_state
        self.dtype = dtype
        self.column_scale = column_scale

    def _new_summary(self, n_features: int) -> FullCovariance:
        """An empty exact summary whose scatter is stored in ``dtype``."""
        return FullCovariance(n_features, self.dtype)

    def _bind_update(self, chunk: Chunk, reuse: bool = False):
        """The kernel's call with its arguments made once (the exact d x d summaries
        always have room, and every array is written in place); see
        :meth:`BaseStreamingAUC._bind_update`."""
        settings = AdaOAMSettings(
            float(self.eta),
            float(self.lam),
            float(self.delta),
            _PROJECTIONS[self.projection],
            1.0 / math.sqrt(self.lam) if self.lam > 0 else math.inf,
            *self._forgetting(),
            self.column_scale == "max_abs",
        )
        run = bound_call(
            _adaoam_chunk,
            self.w_,
            self.sq_grad_sum_,
            self.n_updates_,
            self.class_clocks_,
            self._classes(),
            rows_of(chunk),
            chunk.pre_scores,
            chunk.sample_weight,
            settings,
            self.scale_,
            reuse=reuse,
        )

        def update(learner: AdaOAM) -> None:
            run()

        return update

    def _init_state(self, n_features: int) -> None:
        super()._init_state(n_features)
        self.scale_ = np.zeros(n_features)

    #: ``scale_`` came with ``column_scale``: an older file learnt the rows as they
    #: came, and keeps doing so (``_upgrades``).
    _state_added_later: ClassVar[tuple[str, ...]] = (
        *_AdaGradAUC._state_added_later,
        "scale_",
    )
    _upgrades = {"scale_": {"column_scale": None}}

    def _coef(self) -> np.ndarray:
        if self.column_scale == "max_abs":
            return coef_in_columns(self.w_.copy(), self.scale_)
        return self.w_

    def _merge(self, other: _AdaGradAUC) -> None:
        """As :meth:`_AdaGradAUC._merge` on the models in the raw columns' units; with
        ``column_scale="max_abs"`` the running scales merge into their maximum and the
        merged model is put in its units."""
        scale = np.maximum(self.scale_, other.scale_)  # (read before the merge)
        super()._merge(other)
        if self.column_scale == "max_abs":
            self.scale_ = scale
            self.w_ = self.w_ * scale  # _AdaGradAUC._merge averaged the raw models


# --------------------------------------------------------------------------- SAdaOAM
#: SAdaOAM's kernels' "no running column scale".
_NO_SCALE = np.empty(0)


class SAdaOAM(_AdaGradAUC):
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
        Step size; tuned over 2^[-10:10] (as for AdaOAM). The default is a library
        choice.
    lam : float, default=2**-8
        L2 regularization lambda, tuned over 2^[-10:2]. ``lam=0`` lets the lazy path
        skip every coordinate outside the opposite class's support.
    theta : float, default=1e-4
        l1 weight, tuned over 10^[-8:-1] (our choice: D16's copy lost the grid).
    delta : float, default=1e-8
        Smoothing term of ``h = delta + sqrt(s)``; must be positive.
    lazy : bool, default=True
        Just-in-time shrinkage of zero-gradient coordinates (exact up to rounding),
        or eager updates of every coordinate at every step.
    shuffle : bool, default=False
        Whether ``fit`` visits the examples in a random order (one pass still).
    random_state : int, Generator or None, default=None
        Seed of the shuffle.
    half_life : float or None, default=None
        Forgetting, as for :class:`AdaOAM` (module docstring). None: D16 exactly.
    column_scale : {"max_abs"} or None, default="max_abs"
        "max_abs" learns each column in its running scale (the running maximum of its
        |x|; module docstring, "Columns in their running scale"), so that the
        defaults learn on raw, unscaled columns; None is D16 Alg. 2 on the rows as
        they come (the paper's setting, rows scaled beforehand). A library option.

    Attributes
    ----------
    w_ : ndarray of shape (n_features,)
        Stored weights; coordinate i still owes the shrinkage of the steps since
        ``last_[i]`` (``coef_`` applies it).
    sq_grad_sum_ : ndarray of shape (n_features,)
        AdaGrad's sum of squared gradients s (decayed with ``half_life``).
    last_ : ndarray of shape (n_features,), int64
        Step at which each coordinate was last brought up to date.
    n_updates_ : ndarray of shape (1,), int64
        Number of steps taken (the lazy clock).
    stats_ : list of two ExactSparseCovariance
        Summaries of the negative and the positive class.
    class_clocks_ : ndarray of shape (2,)
        The class clocks of forgetting (zeros without).
    scale_ : ndarray of shape (n_features,)
        The running maximum of each column's absolute values (``column_scale=
        "max_abs"``; zeros and unused with None).
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
    >>> model = SAdaOAM(eta=0.1, lam=0.0, theta=0.2).fit(X[:300], y[:300])
    >>> bool(model.score(X[300:], y[300:]) > 0.9), model.sparsity_ >= 0.5
    (True, True)
    """

    param_grid = {
        **_AdaGradAUC.param_grid,
        "theta": [10.0**k for k in range(-8, 0)],
    }
    _summary = ExactSparseCovariance
    #: The summaries as created (their tables then grow with the pairs of features that
    #: occur together), w, s, ``last_``, the column scale and the kernel's three work
    #: vectors.
    _state_spec = StateSpec(
        nbytes=lambda learner, d: 2 * summary_nbytes("exact_sparse", int(d)) + 8 * (7 * int(d) + 1)
    )

    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "theta": [non_negative()],
        "lazy": ["boolean"],
        "column_scale": [StrOptions({"max_abs"}), None],
    }
    #: ``scale_`` came with ``column_scale``: an older file learnt the rows as they
    #: came, and keeps doing so (``_upgrades``).
    _state_added_later: ClassVar[tuple[str, ...]] = (
        *_AdaGradAUC._state_added_later,
        "scale_",
    )
    _upgrades = {"scale_": {"column_scale": None}}

    def __init__(
        self,
        eta: float = 2**-3,
        lam: float = 2**-8,
        theta: float = 1e-4,
        delta: float = 1e-8,
        lazy: bool = True,
        shuffle: bool = False,
        random_state: RandomState = None,
        half_life: float | None = None,
        column_scale: str | None = "max_abs",
    ):
        self.eta = eta
        self.lam = lam
        self.theta = theta
        self.delta = delta
        self.lazy = lazy
        self.half_life = half_life
        self.shuffle = shuffle
        self.random_state = random_state
        self.column_scale = column_scale

    def _init_state(self, n_features: int) -> None:
        super()._init_state(n_features)
        self.last_ = np.zeros(n_features, dtype=np.int64)
        self.scale_ = np.zeros(n_features)

    def _merge(self, other: _AdaGradAUC) -> None:
        """As :meth:`_AdaGradAUC._merge` (the raw models averaged); with
        ``column_scale="max_abs"`` the running scales merge into their maximum."""
        scale = np.maximum(self.scale_, other.scale_)  # (read before the merge)
        super()._merge(other)
        if self.column_scale == "max_abs":
            self.scale_ = scale

    def _check_state(self) -> None:
        """As for AdaOAM, and ``last_`` (the step at which each coordinate was last
        brought up to date) between 0 and ``n_updates_``."""
        super()._check_state()
        last = self.last_
        if last.size and (last.min() < 0 or last.max() > self.n_updates_[0]):
            raise ValueError(
                f"last_ holds a step outside [0, n_updates_ = {int(self.n_updates_[0])}]"
            )
        scale = self.scale_
        if scale.shape != self.w_.shape or not np.all(np.isfinite(scale) & (scale >= 0.0)):
            raise ValueError("scale_ must hold a finite, non-negative maximum |x| per column")

    def _update(self, chunk: Chunk) -> None:
        """Not bound (one-row calls take the usual path): the exact sparse summaries make
        room for a row by replacing their arrays (``run_reserving``), which a bound
        update must not do (see :meth:`BaseStreamingAUC._bind_update`)."""
        d = self.w_.shape[0]
        scratch = (np.zeros(d), np.zeros(d), np.empty(d, dtype=np.int64))
        state = self._state()
        settings = SAdaOAMSettings(
            float(self.eta),
            float(self.lam),
            float(self.theta),
            float(self.delta),
            bool(self.lazy),
            *self._forgetting(),
        )
        # read-only CSR arrays, whatever the input's (rows_of): one compiled kernel
        rows: tuple = (*rows_of(chunk), chunk.pre_scores, chunk.sample_weight)
        run_reserving(
            lambda r: _sadaoam_chunk(state, self._classes(), *rows, r, settings, scratch),
            self.stats_,
            chunk,
        )

    def _state(self) -> SAdaOAMState:
        colscale = self.scale_ if self.column_scale == "max_abs" else _NO_SCALE
        return SAdaOAMState(
            self.w_, self.sq_grad_sum_, self.last_, self.n_updates_, self.class_clocks_, colscale
        )

    def _coef(self) -> np.ndarray:
        coef = np.empty_like(self.w_)
        _caught_up(self._state(), float(self.eta) * float(self.theta), float(self.delta), coef)
        return coef
