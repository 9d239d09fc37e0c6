r"""Classic online linear classifiers: the baselines of the OAM paper.

Zhao, Hoi, Jin and Yang, *Online AUC Maximization* (ICML 2011, "Z11"), §4.1 and
Table 2, compare OAM with four accuracy-oriented online learners and two
cost-sensitive ones. All score an example by :math:`w^\top x` (no bias,
as in Z11), start from :math:`w = 0` (CW: :math:`\mu = 0, \Sigma = I`) and make one
pass; each runs as one compiled loop over a chunk.

Perceptron (Rosenblatt 1958)
    If :math:`y_t w^\top x_t \le 0` (a score of 0 counts as a mistake):
    :math:`w \leftarrow w + y_t x_t`.

PA-I (Crammer, Dekel, Keshet, Shalev-Shwartz, Singer 2006, "PA06", §3 Eq. 7)
    :math:`w_{t+1} = \arg\min_w \frac12\|w - w_t\|^2 + C\xi` s.t.
    :math:`\ell(w; x_t, y_t) \le \xi,\ \xi \ge 0`, with the hinge loss
    :math:`\ell = \max(0, 1 - y_t w^\top x_t)`. Closed form (PA06 Eq. 8):
    :math:`\tau = \min(C, \ell / \|x_t\|^2)`, :math:`w \leftarrow w + \tau y_t x_t`.
    Examples with :math:`x_t = 0` are skipped.

CW-full (Crammer, Dredze, Pereira 2008, exact "stdev" update)
    The weights are Gaussian, :math:`w \sim N(\mu, \Sigma)`. With
    :math:`\phi = \Phi^{-1}(\eta)`, :math:`\psi = 1 + \phi^2/2`,
    :math:`\zeta = 1 + \phi^2`, :math:`m = y\mu^\top x`, :math:`v = x^\top\Sigma x`:

    .. math::

        \alpha = \max\Big(0, \frac{-m\psi + \sqrt{m^2\phi^4/4 + v\phi^2\zeta}}
            {v\zeta}\Big),\quad
        \sqrt u = \tfrac12\big(-\alpha v\phi + \sqrt{\alpha^2v^2\phi^2 + 4v}\big),\quad
        \beta = \frac{\alpha\phi}{\sqrt u + v\alpha\phi},

    and if :math:`\alpha > 0`: :math:`\mu \leftarrow \mu + \alpha y \Sigma x`,
    :math:`\Sigma \leftarrow \Sigma - \beta (\Sigma x)(\Sigma x)^\top`. Scores use
    :math:`\mu`. Examples with :math:`v = 0` are skipped.

CPA_PB / CPA_ML (cost-sensitive PA, PA06 §7 with :math:`\Phi(x, y) = \frac y2 x`)
    Costs :math:`\rho(+1, -1) = \rho_+` (missing a positive), :math:`\rho(-1, +1) = 1`,
    :math:`\rho(y, y) = 0`; the loss is
    :math:`\ell = \sqrt{\rho(y_t, -y_t)} - y_t w^\top x_t`.
    Prediction-based (PB) updates only on a mistake (:math:`y_t w^\top x_t \le 0`);
    max-loss (ML) whenever :math:`\ell > 0`, including correct predictions with a
    small margin. Both take the PA-I step :math:`\tau = \min(C, \ell/\|x_t\|^2)`,
    :math:`w \leftarrow w + \tau y_t x_t`.

Example weights (``sample_weight``)
    An example of weight :math:`\omega` takes the Perceptron step
    :math:`w \leftarrow w + \omega y_t x_t`, and the PA-I / CPA step of the weighted
    problem :math:`\min_w \frac12\|w - w_t\|^2 + \omega C\xi` (PA06 Eq. 7 with the
    slack penalized by :math:`\omega C`): :math:`\tau = \min(\omega C,
    \ell/\|x_t\|^2)`. Weight 0 changes nothing. CW refuses weights: its update is
    a constraint (the example is classified with probability :math:`\eta`), not a
    loss that a weight could scale.

Merging, prequential scores, dense rows
    :meth:`merge` averages the weights of two learners by the examples each has seen,
    :math:`(n_1 w_1 + n_2 w_2)/(n_1 + n_2)`; CW averages :math:`\mu` and
    :math:`\Sigma` the same way (see :meth:`ConfidenceWeighted._merge`). Every kernel
    writes each example's score before learning it (``test_then_train`` and the
    calibration read them) and reads dense rows in place. The Perceptron and PA
    kernels sum their dense dot products in any order (``fastmath`` reassociation,
    :data:`aucstream._kernels.REASSOC`): a change by rounding only. CW does not: its
    dense and sparse paths give identical bits.

Forgetting (``half_life``, a library addition for streams that change)
    With :math:`h` = ``half_life`` and :math:`\gamma = 2^{-1/h}`
    (:func:`aucstream._params.decay_per_example`), the Perceptron, PA-I and CPA
    weights, which are the sum of their past steps, shrink by :math:`\gamma` per
    example before it is learnt:

    .. math::

        w_{t+1} = \gamma w_t + \tau_t y_t x_t,

    where :math:`\tau_t` is the rule's step computed at the shrunk point
    :math:`\gamma w_t` (the PA problem becomes :math:`\min_w \frac12\|w -
    \gamma w_t\|^2 + C\xi`; the perceptron's mistake test does not change, since
    :math:`\gamma > 0`). So :math:`w_{t+1} = \sum_{s \le t} \gamma^{t-s}\tau_s y_s
    x_s`: a step taken h examples ago weighs half the latest one, and
    :math:`\|w\|` stays bounded, so that a new concept overrides the old one within a
    few half-lives. These rules already follow a flipped concept without it (every
    example after the flip is a mistake, and their steps do not decay); forgetting
    bounds what old steps weigh, at a price on stationary streams
    (``docs/results/linear_online.md``). An example of weight :math:`\omega` shrinks the past by
    :math:`\gamma^\omega` (weight 0 changes nothing). The shrinkage costs O(1): the
    weights are kept as ``scale_[0] * w_`` (:mod:`aucstream._kernels._lazy`, the scale
    folded into ``w_`` when it leaves [1e-9, 1e9]), so each example still costs O(k)
    for k non-zeros. ``None`` (the default) is each paper's rule exactly (the scale
    stays 1). CW has no forgetting: its state is O(d^2) and its update a constraint
    on a Gaussian, with no sum of steps to decay.

Cost per example
    Perceptron, PA-I and CPA change only the k non-zeros of the example (O(k), with or
    without forgetting); CW is O(d^2) per update (its covariance factor), which no
    bookkeeping makes lazy: :math:`\Sigma x` reads every entry of the factor.

Deviations
----------
- CW with :math:`\eta = 1` has :math:`\phi = \infty`; ``eta=1`` is run as 0.999
  (just below 1, where phi is finite).
- CW keeps :math:`\Sigma` in square-root form :math:`\Sigma = A A^\top` and updates the
  factor, :math:`A \leftarrow A - \gamma (\Sigma x)(A^\top x)^\top` with
  :math:`\gamma = (1 - \sqrt{1 - \beta v}) / v`, which gives exactly the rank-one
  update above, because :math:`(I - \gamma z z^\top)^2 = I - \beta z z^\top` for
  :math:`z = A^\top x`, :math:`\|z\|^2 = v`. Reason: CW can shrink the variance along
  a direction by many orders of magnitude in one step (:math:`v' \approx v^2 /
  (m\phi)^2` when v is small), and the direct subtraction then loses positive
  definiteness to cancellation; :math:`A A^\top` is symmetric positive semidefinite
  by construction. :math:`1 - \beta v` is computed as
  :math:`\sqrt u / (\sqrt u + v\alpha\phi)`, without cancellation. The cost stays
  O(d^2) per update (three d x d passes instead of two).
- CW is equivariant under :math:`(\mu, \Sigma) \to (c\mu, c^2\Sigma)` (m and
  :math:`\sqrt v` scale by c, :math:`\alpha` by 1/c, :math:`\beta` by
  :math:`1/c^2`), and with large eta on non-separable streams both shrink
  geometrically (by about 1e-21 per 1000 examples in our tests) until they underflow
  and the update turns into 0/0. When the largest entry of A falls below
  :math:`2^{-60}`, we multiply :math:`\mu` and A by the power of two that brings it
  back to [1, 2). The model then differs from the formula's only by a positive
  factor: the same scores' order, signs and AUC. So ``mu_`` is defined up to scale.
- ``rho_pos`` enters through :math:`\sqrt{\rho}` as in PA06 §7; Z11 does not restate
  the rule.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
from scipy.stats import norm
from sklearn.utils.validation import check_is_fitted

from ._base import BaseStreamingAUC
from ._chunks import Chunk
from ._kernels import (
    REASSOC,
    SCALE_MIN,
    bound_call,
    col,
    fold_scale,
    jit,
    mean_by_count,
    n_rows,
    row,
    rows_of,
    scale_in_range,
    sparse_axpy,
    sparse_dot,
)
from ._kernels._lazy import decay_factor
from ._params import (
    FORGETTING,
    PASS_ORDER,
    Interval,
    Real,
    StrOptions,
    decay_per_example,
    positive,
)
from ._runtime import LearnerTags, StateSpec
from ._typing import RandomState

__all__ = [
    "ConfidenceWeighted",
    "CostSensitivePA",
    "PassiveAggressive",
    "Perceptron",
    "cw_coefficients",
]


# ----------------------------------------------------------------------------- kernels
_RESCALE_BELOW = 2.0**-60  # CW: rescale (mu, A) when A's largest entry falls below this


#: The update rules of :func:`_linear_chunk`.
_PA, _CPA_PB, _CPA_ML, _PERCEPTRON = 0, 1, 2, 3


@jit(fastmath=REASSOC, borrowing=True)
def _linear_chunk(w, scale, rows, pre, weights, C, mode, sqrt_rho_pos, decay):
    """PA-I, CPA prediction-based, CPA max-loss or the Perceptron (``mode``) over a chunk
    (compiled without reference counts: it allocates nothing, and each row's views
    counted theirs).

    The weights are ``scale[0] * w``. An example of weight omega takes the PA-I step
    with aggressiveness omega * C, or the Perceptron step omega * y x. With forgetting
    (``decay`` < 1) the weights first shrink by ``decay ** omega`` (O(1): the scale),
    and the rule sees the shrunk weights' margin.
    """
    scores = pre.shape[0] == n_rows(rows)
    weighted = weights.shape[0] > 0
    forgetting = decay < 1.0
    for r in range(n_rows(rows)):
        idx, val, y = row(rows, r)
        s = scale[0] * sparse_dot(w, idx, val)
        if scores:
            pre[r] = s
        weight = weights[r] if weighted else 1.0
        if forgetting and weight > 0.0:
            factor = decay_factor(decay, weight)
            scale[0] *= factor
            s *= factor
            if not scale_in_range(scale[0]):
                scale[0] = fold_scale(w, scale[0])
        ym = y * s
        if mode == _PERCEPTRON:
            if weight > 0.0 and ym <= 0.0:
                sparse_axpy(w, weight * y / scale[0], idx, val)
            continue
        if mode == _PA:
            loss = 1.0 - ym
        else:
            if mode == _CPA_PB and ym > 0.0:
                continue
            loss = (sqrt_rho_pos if y > 0 else 1.0) - ym
        if loss <= 0.0 or weight == 0.0:
            continue
        sq = 0.0
        for a in range(val.shape[0]):
            sq += val[a] * val[a]
        if sq == 0.0:
            continue
        sparse_axpy(w, min(weight * C, loss / sq) * y / scale[0], idx, val)


@jit
def _cw_coefficients(m, v, phi):
    """(alpha, beta, 1 - beta v) of the exact CW update."""
    psi = 1.0 + 0.5 * phi * phi
    zeta = 1.0 + phi * phi
    alpha = (-m * psi + math.sqrt(0.25 * m * m * phi**4 + v * phi * phi * zeta)) / (v * zeta)
    if alpha <= 0.0:
        return 0.0, 0.0, 1.0
    avp = alpha * v * phi
    # (-a + sqrt(a^2 + 4v)) / 2 written as 2v / (a + sqrt(a^2 + 4v)): no cancellation
    sqrt_u = 2.0 * v / (avp + math.sqrt(avp * avp + 4.0 * v))
    beta = alpha * phi / (sqrt_u + avp)
    return alpha, beta, sqrt_u / (sqrt_u + avp)


@jit
def _cw_chunk(mu, A, rows, pre, phi, mu_sum, seen):
    r"""CW-full over a chunk. No fastmath: dense and sparse rows give identical bits
    (the zeros of a dense row are skipped, and every sum runs in column order).

    With ``mu_sum`` non-empty (``average=True``) the direction of the mean after every
    example, :math:`\mu_t / \|\mu_t\|` (nothing while it is 0), is added to it;
    ``seen`` examples were learnt before the chunk.
    """
    scores = pre.shape[0] == n_rows(rows)
    average = mu_sum.shape[0] > 0
    d = mu.shape[0]
    z = np.empty(d)  # A^T x
    g = np.empty(d)  # Sigma x = A z
    for r in range(n_rows(rows)):
        idx, val, y = row(rows, r)
        s = sparse_dot(mu, idx, val)
        if scores:
            pre[r] = s
            if average:
                t = seen + r
                pre[r] = sparse_dot(mu_sum, idx, val) / t if t > 0 else 0.0
        _cw_step(mu, A, z, g, idx, val, y, s, phi)
        if average:
            norm = 0.0
            for i in range(d):
                norm += mu[i] * mu[i]
            if norm > 0.0:
                norm = math.sqrt(norm)
                for i in range(d):
                    mu_sum[i] += mu[i] / norm


@jit
def _cw_step(mu, A, z, g, idx, val, y, s, phi):
    """One CW-full update (module docstring) for the row (idx, val) with score s."""
    d = mu.shape[0]
    for j in range(d):
        z[j] = 0.0
    for a in range(val.shape[0]):
        xa = val[a]
        if xa == 0.0:
            continue
        A_row = A[col(idx, a)]
        for j in range(d):
            z[j] += A_row[j] * xa
    v = 0.0
    for j in range(d):
        v += z[j] * z[j]
    if v <= 0.0:
        return
    alpha, beta, one_minus_bv = _cw_coefficients(y * s, v, phi)
    if alpha <= 0.0:
        return
    for i in range(d):
        acc = 0.0
        A_i = A[i]
        for j in range(d):
            acc += A_i[j] * z[j]
        g[i] = acc
    for i in range(d):
        mu[i] += alpha * y * g[i]
    if beta > 0.0:
        gamma = (1.0 - math.sqrt(one_minus_bv)) / v
        amax = 0.0
        for i in range(d):
            gi = gamma * g[i]
            A_i = A[i]
            for j in range(d):
                A_i[j] -= gi * z[j]
                amax = max(amax, abs(A_i[j]))
        if 0.0 < amax < _RESCALE_BELOW:
            # CW is equivariant under (mu, Sigma) -> (c mu, c^2 Sigma); a power of
            # two c keeps every later step exact and the scores' order unchanged
            c = 2.0 ** (-math.floor(math.log2(amax)))
            for i in range(d):
                mu[i] *= c
                A_i = A[i]
                for j in range(d):
                    A_i[j] *= c


def cw_coefficients(m: float, v: float, eta: float) -> tuple[float, float]:
    r"""The CW step sizes ``(alpha, beta)`` for margin ``m`` and variance ``v`` > 0.

    Parameters
    ----------
    m : float
        Signed margin :math:`y \mu^\top x`.
    v : float
        Variance :math:`x^\top \Sigma x` (positive).
    eta : float
        Confidence in [0.5, 1) (1 is not allowed here).

    Returns
    -------
    tuple of float
        ``alpha`` (mean step) and ``beta`` (covariance step) of the module docstring.
    """
    alpha, beta, _ = _cw_coefficients(float(m), float(v), float(norm.ppf(eta)))
    return alpha, beta


# ----------------------------------------------------------------------------- learners
class _LinearOnline(BaseStreamingAUC):
    """Base of the learners whose whole state is the weight vector ``scale_[0] * w_``."""

    _tags = LearnerTags(
        dense_kernels=True, kernel_prequential=True, sample_weight=True, update_draws=False
    )
    #: ``scale_`` came with forgetting; an older file (no forgetting: scale 1) gets
    #: the fresh value.
    _state_added_later = (*BaseStreamingAUC._state_added_later, "scale_")

    def _init_state(self, n_features: int) -> None:
        self.w_ = np.zeros(n_features)
        self.scale_ = np.ones(1)

    def _rule(self) -> tuple[float, int, float]:
        """``(C, mode, sqrt_rho_pos)`` of :func:`_linear_chunk`, from the parameters."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _bind_update(self, chunk: Chunk, reuse: bool = False):
        """The kernel's call with its arguments made once (``w_`` and ``scale_`` are
        written in place; the rule comes from the parameters); see
        :meth:`BaseStreamingAUC._bind_update`."""
        run = bound_call(
            _linear_chunk,
            self.w_,
            self.scale_,
            rows_of(chunk),
            chunk.pre_scores,
            chunk.sample_weight,
            *self._rule(),
            decay_per_example(self.half_life),
            reuse=reuse,
        )

        def update(learner: _LinearOnline) -> None:
            run()

        return update

    def _coef(self) -> np.ndarray:
        scale = self.scale_[0]
        return self.w_ if scale == 1.0 else scale * self.w_

    def _check_state(self) -> None:
        if not SCALE_MIN <= self.scale_[0] <= 1.0:
            raise ValueError(f"scale_ {self.scale_[0]!r} is outside [{SCALE_MIN}, 1]")

    def _merge(self, other: _LinearOnline) -> None:
        """w becomes the average of both weights, weighted by the examples each has seen."""
        self.w_ = mean_by_count(
            self._coef(), self.n_samples_seen_, other._coef(), other.n_samples_seen_
        )
        self.scale_ = np.ones(1)


class Perceptron(_LinearOnline):
    r"""Rosenblatt's perceptron, one pass, no bias (Z11 §4.1 baseline).

    Update on a mistake (:math:`y_t w^\top x_t \le 0`): :math:`w \leftarrow w + y_t x_t`.
    Its only hyperparameter is the optional forgetting; see the module docstring.

    Parameters
    ----------
    shuffle : bool, default=False
        Whether ``fit`` visits the examples in a random order.
    random_state : int, Generator or None, default=None
        Seed of the shuffle.
    half_life : float or None, default=None
        Forgetting (module docstring): the weights shrink by
        :math:`\gamma = 2^{-1/h}` per example, so a step taken ``half_life``
        examples ago weighs half. None: the paper's rule exactly.

    Attributes
    ----------
    w_ : ndarray of shape (n_features,)
        Current weights up to the scale: ``coef_ = scale_[0] * w_``.
    scale_ : ndarray of shape (1,)
        The scalar factor of the weights (1 without forgetting).
    classes_, n_samples_seen_, n_features_in_
        As for every aucstream learner.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.online_classifiers import Perceptron
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = (X @ [1.0, -2.0, 0.5] > 0).astype(int)
    >>> Perceptron().fit(X, y).score(X, y) > 0.9
    True
    """

    param_grid: ClassVar[dict] = {}
    _parameter_constraints = {**PASS_ORDER, **FORGETTING}

    def __init__(
        self,
        shuffle: bool = False,
        random_state: RandomState = None,
        half_life: float | None = None,
    ):
        self.half_life = half_life
        self.shuffle = shuffle
        self.random_state = random_state

    def _rule(self) -> tuple[float, int, float]:
        return 1.0, _PERCEPTRON, 1.0


class PassiveAggressive(_LinearOnline):
    r"""PA-I (Crammer et al. 2006), one pass, no bias (Z11 §4.1 baseline).

    :math:`\tau = \min(C, \max(0, 1 - y_t w^\top x_t)/\|x_t\|^2)`,
    :math:`w \leftarrow w + \tau y_t x_t` (PA06 Eq. 8); see the module docstring.

    Parameters
    ----------
    C : float, default=1.0
        Aggressiveness. Z11 gives no grid for PA ("same setup"); we tune it over
        2^[-10:10], the grid Z11 uses for C elsewhere. The default is a library choice.
    shuffle, random_state
        As for :class:`Perceptron`, whose attributes (``w_``, ...) it has.
    half_life : float or None, default=None
        Forgetting (module docstring): the weights shrink by
        :math:`\gamma = 2^{-1/h}` per example, so a step taken ``half_life``
        examples ago weighs half. None: the paper's rule exactly.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.online_classifiers import PassiveAggressive
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = (X @ [1.0, -2.0, 0.5] > 0).astype(int)
    >>> PassiveAggressive(C=0.5).fit(X, y).score(X, y) > 0.9
    True
    """

    param_grid = {"C": [2.0**k for k in range(-10, 11)]}
    _parameter_constraints = {"C": [positive()], **PASS_ORDER, **FORGETTING}

    def __init__(
        self,
        C: float = 1.0,
        shuffle: bool = False,
        random_state: RandomState = None,
        half_life: float | None = None,
    ):
        self.C = C
        self.half_life = half_life
        self.shuffle = shuffle
        self.random_state = random_state

    def _rule(self) -> tuple[float, int, float]:
        return float(self.C), _PA, 1.0


class CostSensitivePA(_LinearOnline):
    r"""Cost-sensitive PA-I, prediction-based (CPA_PB) or max-loss (CPA_ML).

    Loss :math:`\ell = \sqrt{\rho(y_t, -y_t)} - y_t w^\top x_t` with
    :math:`\rho(+1,-1) = \rho_+` and :math:`\rho(-1,+1) = 1`; step
    :math:`\tau = \min(C, \ell/\|x_t\|^2)`. ``variant="pb"`` updates only on
    mistakes, ``"ml"`` whenever :math:`\ell > 0` (PA06 §7; Z11 §4.1). See the module
    docstring.

    Parameters
    ----------
    variant : {"pb", "ml"}, default="pb"
        Prediction-based or max-loss.
    C : float, default=1.0
        Aggressiveness; Z11 tunes it over 2^[-10:10].
    rho_pos : float, default=1.0
        Cost :math:`\rho(+1,-1)` of missing a positive (the other cost is 1); Z11 tunes
        it over 2^[0:10]. Must be positive.
    shuffle, random_state
        As for :class:`Perceptron`, whose attributes (``w_``, ...) it has.
    half_life : float or None, default=None
        Forgetting (module docstring): the weights shrink by
        :math:`\gamma = 2^{-1/h}` per example, so a step taken ``half_life``
        examples ago weighs half. None: the paper's rule exactly.

    Examples
    --------
    A rare positive class, and a cost of 4 for missing it:

    >>> import numpy as np
    >>> from aucstream import CostSensitivePA
    >>> X = np.random.default_rng(0).normal(size=(300, 3))
    >>> y = (X @ [1.0, -2.0, 0.5] > 1.5).astype(int)
    >>> model = CostSensitivePA(variant="ml", C=0.5, rho_pos=4.0).fit(X, y)
    >>> model.score(X, y) > 0.9
    True
    """

    param_grid = {"C": [2.0**k for k in range(-10, 11)], "rho_pos": [2.0**k for k in range(0, 11)]}
    _parameter_constraints = {
        "variant": [StrOptions({"pb", "ml"})],
        "C": [positive()],
        "rho_pos": [positive()],
        **PASS_ORDER,
        **FORGETTING,
    }

    def __init__(
        self,
        variant: str = "pb",
        C: float = 1.0,
        rho_pos: float = 1.0,
        shuffle: bool = False,
        random_state: RandomState = None,
        half_life: float | None = None,
    ):
        self.variant = variant
        self.C = C
        self.rho_pos = rho_pos
        self.half_life = half_life
        self.shuffle = shuffle
        self.random_state = random_state

    def _rule(self) -> tuple[float, int, float]:
        mode = _CPA_PB if self.variant == "pb" else _CPA_ML
        return float(self.C), mode, math.sqrt(float(self.rho_pos))


def _cw_nbytes(learner: ConfidenceWeighted, n_features: int) -> int:
    """The factor A, mu (and the sum of the means) and the kernel's two work vectors
    (``StateSpec.nbytes``)."""
    return 8 * (n_features * n_features + (4 if learner.average else 3) * n_features)


class ConfidenceWeighted(BaseStreamingAUC):
    r"""Confidence-weighted learning with a full covariance (CW-full, exact update).

    See the module docstring for the update (Crammer, Dredze, Pereira 2008) and for
    the square-root form :math:`\Sigma = A A^\top` kept for numerical safety. Cost
    O(d^2) per update, memory O(d^2).

    Parameters
    ----------
    eta : float, default=0.7
        Confidence :math:`\eta \in [0.5, 1]`; Z11 §4.2 tunes it over
        {0.5, 0.6, ..., 1.0}. ``eta=1`` runs as 0.999 (phi would be infinite). The default is a
        library choice (larger eta shrinks :math:`\Sigma` faster; with no bias,
        eta >= 0.9 can stall early on unbalanced or off-centre data). With
        ``eta=0.5`` (:math:`\phi = 0`) the constraint is :math:`y\mu^\top x \ge 0`,
        which :math:`\mu = 0` already meets: the model never leaves 0.
    average : bool, default=False
        Score with the average direction of the means over the stream,
        :math:`\bar\mu_n = \frac1n\sum_{t \le n}\mu_t/\|\mu_t\|` (:math:`\mu_t`
        after example t; terms with :math:`\mu_t = 0` count as 0), instead of the last
        mean :math:`\mu_n` (Crammer et al. 2008). A library variant: the averaging of
        online iterates of Freund and Schapire (1999, the averaged perceptron, which
        Z11 cites) applied to CW's mean; the update itself is unchanged. Directions,
        because CW's model is defined up to scale (see the module's deviations):
        :math:`(\mu, \Sigma)` shrink geometrically on non-separable streams, so an
        average of the means themselves would be that of the first few hundred
        examples, and would overflow with the rescaling. On such streams the last
        mean swings with the last updates (CW updates on most examples), and its test
        AUC with it; the average does not. On german and magic04 under Z11's protocol
        (``docs/results/cw_investigation.md``) the last mean scores .689 +- .063 and
        .670 +- .088, the average .786 +- .034 and .786 +- .010 (Z11 Table 2: .757 +-
        .025 and .746 +- .027; batch logistic regression .793 and .79). Costs O(d)
        memory and O(d) work per example more.
    shuffle : bool, default=False
        Whether ``fit`` visits the examples in a random order.
    random_state : int, Generator or None, default=None
        Seed of the shuffle.

    Attributes
    ----------
    mu_ : ndarray of shape (n_features,)
        Mean weights (the scoring weights unless ``average``).
    sqrt_cov_ : ndarray of shape (n_features, n_features)
        A factor A with :math:`\Sigma = A A^\top` (initially the identity).
    mu_sum_ : ndarray of shape (n_features,)
        With ``average=True`` only: the sum of the directions of the means after
        every example (``coef_`` is this sum over ``n_samples_seen_``).
    classes_, n_samples_seen_, n_features_in_
        As for every aucstream learner.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.online_classifiers import ConfidenceWeighted
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = (X @ [1.0, -2.0, 0.5] > 0).astype(int)
    >>> model = ConfidenceWeighted(eta=0.8).fit(X, y)
    >>> model.score(X, y) > 0.9
    True
    >>> bool(np.all(np.linalg.eigvalsh(model.covariance_) > 0))
    True
    """

    param_grid = {"eta": [0.5, 0.6, 0.7, 0.8, 0.9, 1.0]}
    _parameter_constraints = {
        "eta": [Interval(Real, 0.5, 1.0, closed="both")],
        "average": ["boolean"],
        **PASS_ORDER,
    }
    _tags = LearnerTags(dense_kernels=True, kernel_prequential=True, update_draws=False)
    _state_spec = StateSpec(
        nbytes=_cw_nbytes,
        memory_hint=(
            "CW-full keeps a d x d covariance factor; for many features use a learner "
            "with O(d) state (SOLAM, UnivariateOnline, PassiveAggressive, CostSensitivePA)"
        ),
    )

    def __init__(
        self,
        eta: float = 0.7,
        average: bool = False,
        shuffle: bool = False,
        random_state: RandomState = None,
    ):
        self.eta = eta
        self.average = average
        self.shuffle = shuffle
        self.random_state = random_state

    def _init_state(self, n_features: int) -> None:
        self.mu_ = np.zeros(n_features)
        self.sqrt_cov_ = np.eye(n_features)
        if self.average:
            self.mu_sum_ = np.zeros(n_features)

    @property
    def phi_(self) -> float:
        r""":math:`\Phi^{-1}(\eta)`, with eta = 1 replaced by 0.999."""
        return float(norm.ppf(min(float(self.eta), 0.999)))

    @property
    def covariance_(self) -> np.ndarray:
        r""":math:`\Sigma = A A^\top` (formed on demand, d x d)."""
        check_is_fitted(self, "n_samples_seen_")
        return self.sqrt_cov_ @ self.sqrt_cov_.T

    def _bind_update(self, chunk: Chunk, reuse: bool = False):
        """The kernel's call with its arguments made once (``phi_`` from ``eta``; the
        arrays written in place), ``n_samples_seen_`` read at each call; see
        :meth:`BaseStreamingAUC._bind_update`."""
        run = bound_call(
            _cw_chunk,
            self.mu_,
            self.sqrt_cov_,
            rows_of(chunk),
            chunk.pre_scores,
            self.phi_,
            self.mu_sum_ if self.average else self.mu_[:0],
            reuse=reuse,
            late=(self.n_samples_seen_,),
        )

        def update(learner: ConfidenceWeighted) -> None:
            run(learner.n_samples_seen_)

        return update

    def _coef(self) -> np.ndarray:
        if self.average:
            return self.mu_sum_ / max(self.n_samples_seen_, 1)
        return self.mu_

    def _merge(self, other: ConfidenceWeighted) -> None:
        r"""Mean and covariance become the averages of both, weighted by examples seen.

        :math:`\Sigma = (n_1 \Sigma_1 + n_2 \Sigma_2) / n` is kept as a square-root
        factor: the R of the QR factorization of the stacked, weighted factors,
        :math:`[\sqrt{n_1/n} A_1^\top; \sqrt{n_2/n} A_2^\top] = QR`, gives
        :math:`R^\top R = \Sigma`, so ``sqrt_cov_`` becomes :math:`R^\top` (O(d^3)).
        """
        n1, n2 = self.n_samples_seen_, other.n_samples_seen_
        total = n1 + n2
        self.mu_ = mean_by_count(self.mu_, n1, other.mu_, n2)
        if self.average:  # the average of both averages by examples: the sums add
            self.mu_sum_ = self.mu_sum_ + other.mu_sum_
        stacked = np.vstack(
            [math.sqrt(n1 / total) * self.sqrt_cov_.T, math.sqrt(n2 / total) * other.sqrt_cov_.T]
        )
        r_factor: np.ndarray = np.linalg.qr(stacked, mode="r")  # type: ignore[assignment]
        self.sqrt_cov_ = np.ascontiguousarray(r_factor.T)
