r"""PAUCI in one pass: partial AUC by an instance-wise min-max problem.

Shao, Xu, Yang, Bao, Huang, *Asymptotically Unbiased Instance-wise Regularized Partial
AUC Optimization: Theory and Algorithm*, NeurIPS 2022 (arXiv 2210.03967), "PAUCI";
its journal extension Jiang, Xu, Shao, Yang, Bao, Cao, Huang, *Closing the
Approximation Gap of Partial AUC Optimization: A Tale of Two Formulations*, arXiv
2512.01213, §4.2–4.3.1 (PAUCI is its §4.3.1; the empirical one-way and two-way partial
AUC are its Eq. 3 and Eq. 5). The equation numbers of the NeurIPS text were not
checked; the problems below are written out in full so that nothing depends on them.

Objective
---------
Scores are bounded, :math:`f = \sigma(w^\top x + c) \in [0, 1]` (PAUCI needs a
bounded score; the sigmoid is monotone and the offset :math:`c` the same for every
example, so ``decision_function`` returns :math:`w^\top x`, the same ranking).
Labels :math:`y \in \{0, 1\}`, :math:`p = \Pr(y = 1)`. Per example, with
the auxiliary variables :math:`a, b \in [0, 1]` (the class means of the scores at the
optimum) and the dual variable :math:`\gamma`,

.. math::

    P = (f - a)^2 - 2(1 + \gamma) f, \qquad N = (f - b)^2 + 2(1 + \gamma) f.

The full AUC's square surrogate is :math:`\min_{w,a,b}\max_\gamma
\mathbb E[P y / p + N (1 - y)/(1 - p)] - \gamma^2` (the instance-wise form of Ying,
Wen, Lyu, NeurIPS 2016). :math:`N` increases with :math:`f` when :math:`\gamma \ge b -
1`, so the top :math:`\beta` fraction of the negatives by score is the top
:math:`\beta` by :math:`N`, and its mean is a conditional value at risk,
:math:`\min_{s'} s' + \mathbb E_-[N - s']_+/\beta`. PAUCI smooths :math:`[x]_+` by
:math:`r_\kappa(x) = \log(1 + e^{\kappa x})/\kappa` (an :math:`O(1/\kappa)` bias, gone
as :math:`\kappa \to \infty`: "asymptotically unbiased") and regularizes the dual
variable (:math:`-\omega\gamma^2`, strongly concave). **One-way** (FPR :math:`\le
\beta` = ``max_fpr``):

.. math::

    \min_{w,\ a, b \in [0,1],\ s' \in [0, 5]}\ \max_{\gamma \in [b - 1, 1]}\
    \mathbb E\Big[\frac{y}{p} P + \frac{1 - y}{\beta (1 - p)}
    \big(\beta s' + r_\kappa(N - s')\big)\Big] - (1 + \omega)\gamma^2.

**Two-way** (also TPR :math:`\ge` ``min_tpr``): :math:`P` decreases with :math:`f`
when :math:`\gamma \ge -a`, so the lowest-scored fraction :math:`\alpha = 1 -`
``min_tpr`` of the positives is selected the same way: the positive term becomes
:math:`\frac{y}{\alpha p}(\alpha s + r_\kappa(P - s))` with :math:`s \in [-4, 1]`, and
:math:`\gamma \in [\max(-a, b - 1), 1]`. (The ranges are those of :math:`P` and
:math:`N` for :math:`f, a, b \in [0, 1]`, :math:`\gamma \in [-1, 1]`.)

The one-pass algorithm
----------------------
PAUCI solves the problem with stochastic gradient descent-ascent on mini-batches
(ASGDA with STORM momentum, over many epochs). Here each example is a batch of one
(the problem is an expectation of per-example terms, so one example gives an unbiased
stochastic gradient at known :math:`p`). For an example :math:`(x_t, y_t)`, its score
:math:`\bar w^\top x_t` is written first (``test_then_train``); then, at the current
variables, with :math:`h = \sigma(\kappa(\cdot))` the derivative of :math:`r_\kappa`:

- a positive: :math:`\partial/\partial f = c\,(2(f - a) - 2(1 + \gamma))`,
  :math:`\partial/\partial a = -2c(f - a)`, :math:`\partial/\partial \gamma = -2cf`,
  with :math:`c = 1/p` one-way; two-way :math:`c = h(P - s)/(\alpha p)` and
  :math:`\partial/\partial s = (\alpha - h(P - s))/(\alpha p)`;
- a negative, :math:`c = h(N - s')/(\beta(1 - p))`: :math:`\partial/\partial f =
  c\,(2(f - b) + 2(1 + \gamma))`, :math:`\partial/\partial b = -2c(f - b)`,
  :math:`\partial/\partial \gamma = 2cf`, :math:`\partial/\partial s' = (\beta -
  h(N - s'))/(\beta (1 - p))`;
- every example: :math:`\partial/\partial\gamma \mathrel{-}= 2(1 + \omega)\gamma`, and
  :math:`\partial/\partial w = \partial/\partial f \cdot f(1 - f)\, x` (:math:`O(k)`
  for :math:`k` non-zeros) and :math:`\partial/\partial c = \partial/\partial f
  \cdot f(1 - f)`.

Every variable then takes an AdaGrad step (Duchi, Hazan, Singer 2011; step ``eta``
over the root of its sum of squared gradients; per coordinate of :math:`w`, one sum
per scalar) — descent on :math:`w, c, a, b, s, s'`, ascent on :math:`\gamma` — and is
projected on its interval (:math:`\gamma` last, on the interval the new :math:`a, b`
give). The model scores with the average :math:`\bar w` of the iterates (Polyak-
Ruppert; kept lazily as :class:`aucstream.OnlinePAUC` does, :math:`U = \sum_t t\,
\Delta_t`, :math:`\bar w_T = ((T + 1) w_T - U)/T`), or with ``average_decay``
:math:`= \eta > 0` the polynomial-decay average of Shamir and Zhang (ICML 2013), which
weighs the iterate :math:`w_t` by :math:`t (t + 1) \cdots (t + \eta - 1)`
(:mod:`aucstream.pauc`, step 4: then :math:`U = \sum_t (A_{t-1} + 1)\,\Delta_t`
and :math:`\bar w_T = ((A_T + 1) w_T - U)/A_T`). Neither average is PAUCI's (its
ASGDA is analysed for its iterates over many epochs): it is this one-pass version's,
as the other one-pass learners of aucstream score.

Approximations and deviations, with their reasons:

- :math:`p` is the running estimate :math:`\hat p = (n_+ + 1)/(n + 2)` over the
  examples seen, this one included (the batch problem knows :math:`p`; the Laplace
  counts keep :math:`1/\hat p` and :math:`1/(1 - \hat p)` finite from the first
  example on).
- Plain stochastic descent-ascent with AdaGrad steps instead of ASGDA's STORM
  estimators and :math:`\eta_t = k/(m + t)^{1/3}`: STORM needs a second gradient per
  example at the previous iterate, and AdaGrad removes the scale of the
  :math:`1/p` and :math:`1/\beta` weights, which vary by orders of magnitude across
  streams, without a step-size schedule per stream.
- The constraint :math:`\gamma \ge \max(-a, b - 1)` is kept by projection (the
  journal turns it into penalties with multipliers).
- Defaults: the initial values :math:`a = b = s' = 1/2`, :math:`\gamma = 1` are
  those of the authors' code (``Shaocr/PAUCI``); :math:`\omega` = 0 (the
  unregularized limit: :math:`-\gamma^2` keeps the problem strongly concave);
  :math:`\kappa` = 10 and ``eta`` = 0.03, not the code's :math:`\kappa` = 2: in one
  pass over the streams of ``benchmarks/bench_pauc.py`` (test partial AUC at FPR
  :math:`\le` 0.05, behind the online scaler), :math:`\kappa` = 10 was above
  :math:`\kappa` = 2 on w8a (both at ``eta`` = 0.1), and among the settings tried by
  hand (:math:`\kappa \in \{10, 30\}`, ``eta`` :math:`\in \{0.03, 0.1, 0.3\}`,
  not every pair on every stream, before the offset :math:`c` was added) the pair
  (10, 0.03) was the best or within 0.01 of the best on w8a, make_classification,
  a9a and a9a (3% positives); ijcnn1 preferred ``eta`` = 0.3 (0.730 against 0.691);
  fraud-like was not in that comparison. The defaults' rows after one run of the
  benchmark are in docs/results/pauc.md. A one-pass grid on four streams *not* in
  that benchmark (letter, magic04, phishing and Skin_NonSkin, each with its positives
  thinned to 3%, seed 0; ``eta`` in {0.01, 0.03, 0.1, 0.3} by :math:`\kappa` in
  {2, 5, 10, 30}, test partial AUC at FPR :math:`\le` 0.05 behind the online scaler)
  put no setting first on more than two streams; the means over the four were 0.629
  for (0.1, 30), 0.622 for (0.1, 10) and 0.616 for the defaults, which ranked 2nd on
  phishing, 5th on Skin_NonSkin, 9th and 11th of 16 on letter and magic04. They
  are kept: the grid's streams are small (4,000 to 160,000 training rows, 120 to
  4,800 positives), and a change would move every row of the benchmark.
- :math:`w` is not projected (a linear model; no norm bound).
- The offset :math:`c` (initially 0), which a deep network's last layer has: without
  it the sigmoid is centred at :math:`w^\top x = 0` whatever the class means, and the
  factor :math:`f(1 - f)` of every gradient is set by that arbitrary centre. Measured
  (one pass, ``benchmarks/bench_pauc.py``'s streams, partial AUC at FPR
  :math:`\le` 0.05): with it, make_classification rose from 0.621 to 0.640 and
  fraud-like from 0.639 to 0.646, w8a and a9a moved by less than 0.002, ijcnn1 fell
  from 0.691 to 0.680.
- The initial :math:`s = -4` (the lower end of :math:`P`'s range: every positive
  counts at first, as one-way, and the threshold then rises to the selected
  fraction), not the code's 1/2: with 1/2 no positive is selected at first
  (:math:`P \approx -2`), only the negatives move :math:`w`, and the two-way partial
  AUC of w8a fell to 0.02 (0.47 with :math:`-4`).

State: :math:`w`, its AdaGrad sums and :math:`U` (three vectors of :math:`d`), six
scalars with their AdaGrad sums, the class counts: memory :math:`O(d)`, independent of
the stream length; cost :math:`O(k)` per example.

Merging
-------
As for every merged stochastic-gradient learner in aucstream, approximately: the class
counts and the AdaGrad sums add exactly; the last iterates, the averages of the
iterates and the scalars :math:`a, b, \gamma, s, s'` combine by examples seen (model
averaging; the scalars of a class by that class's examples), and :math:`U` is set so
that the merged average is read from the merged last iterate.

No ``half_life``: forgetting would need the Polyak average replaced by an exponential
one and AdaGrad's sums decayed (RMSprop-like steps), an algorithm other than the
paper's that was not measured; the race's fresh candidates (``OnePassSearch``'s
drift handling) restart a learner instead.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from ._base import BaseStreamingAUC
from ._chunks import Chunk
from ._kernels import REASSOC, col, jit, mean_by_count, n_rows, row, rows_of, sparse_dot
from ._params import PASS_ORDER, Interval, positive
from ._runtime import LearnerTags, StateSpec
from ._typing import RandomState
from .pauc import MAX_AVERAGE_DECAY, RACE_AVERAGE_DECAY, averaging_total

__all__ = ["PAUCI"]

# the scalars' state: [a, b, gamma, s' (negatives), s (positives), c (offset)]
_A, _B, _G, _SN, _SP, _C = range(6)
#: Initial values of the scalars (the authors' code).
_INITIAL = (0.5, 0.5, 1.0, 0.5, -4.0, 0.0)
#: Intervals of s' and s (the ranges of N and P).
_SN_RANGE = (0.0, 5.0)
_SP_RANGE = (-4.0, 1.0)


@jit(fastmath=REASSOC)
def _sigmoid(z):
    if z >= 0.0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


@jit(fastmath=REASSOC)
def _clip(v, lo, hi):
    return min(max(v, lo), hi)


@jit(fastmath=REASSOC)
def _scalar_gradients(f, y, scal, p, beta, alpha, kappa, omega, two_way, out):
    """The module docstring's partial derivatives of one example's term at score
    ``f``: ``out = [d/da, d/db, d/dgamma, d/ds', d/ds]``; returns ``d/df``."""
    a, b, g = scal[_A], scal[_B], scal[_G]
    out[:] = 0.0
    if y > 0:
        c = 1.0 / p
        if two_way:
            h = _sigmoid(kappa * ((f - a) ** 2 - 2.0 * (1.0 + g) * f - scal[_SP]))
            c = h / (alpha * p)
            out[_SP] = (alpha - h) / (alpha * p)
        out[_A] = -2.0 * c * (f - a)
        out[_G] = -2.0 * c * f
        df = c * (2.0 * (f - a) - 2.0 * (1.0 + g))
    else:
        h = _sigmoid(kappa * ((f - b) ** 2 + 2.0 * (1.0 + g) * f - scal[_SN]))
        c = h / (beta * (1.0 - p))
        out[_SN] = (beta - h) / (beta * (1.0 - p))
        out[_B] = -2.0 * c * (f - b)
        out[_G] = 2.0 * c * f
        df = c * (2.0 * (f - b) + 2.0 * (1.0 + g))
    out[_G] -= 2.0 * (1.0 + omega) * g
    return df


@jit(fastmath=REASSOC)
def _pauci_chunk(
    w, G, U, scal, scal_sq, counts, rows, pre, beta, alpha, kappa, omega, eta, two_way, decay
):
    r"""The module's algorithm over a chunk; ``counts`` is ``[n_neg, n_pos]``, ``decay``
    the averaging's :math:`\eta` (:func:`aucstream.pauc.averaging_total`)."""
    settings = (beta, alpha, kappa, omega, eta, two_way, decay)
    _pauci_rows(w, G, U, scal, scal_sq, counts, rows, pre, settings, np.empty(6))


@jit(fastmath=REASSOC, borrowing=True)
def _pauci_rows(w, G, U, scal, scal_sq, counts, rows, pre, settings, grads):
    """:func:`_pauci_chunk`'s loop, its scratch (``grads``) allocated: compiled without
    reference counts (a row's views and the gradients' call counted theirs at every
    row)."""
    beta, alpha, kappa, omega, eta, two_way, decay = settings
    scoring = pre.shape[0] == n_rows(rows)
    for r in range(n_rows(rows)):
        idx, val, y = row(rows, r)
        z = sparse_dot(w, idx, val)
        t = float(counts[0] + counts[1])  # examples learnt before this one
        total = averaging_total(t, decay)  # A_t
        if scoring:  # the average of the iterates so far
            pre[r] = ((total + 1.0) * z - sparse_dot(U, idx, val)) / total if t > 0 else 0.0
        t += 1.0
        factor = total + 1.0  # U's factor of a step made now (t for the uniform average)
        counts[1 if y > 0 else 0] += 1
        p = (counts[1] + 1.0) / (t + 2.0)
        f = _sigmoid(z + scal[_C])
        dz = _scalar_gradients(f, y, scal, p, beta, alpha, kappa, omega, two_way, grads)
        dz *= f * (1.0 - f)
        grads[_C] = dz
        if dz != 0.0:
            for q in range(val.shape[0]):
                g = dz * val[q]
                if g != 0.0:
                    j = col(idx, q)
                    G[j] += g * g
                    delta = eta * g / (math.sqrt(G[j]) + 1e-12)
                    w[j] -= delta
                    U[j] -= factor * delta
        for k in range(6):
            g = grads[k]
            if g != 0.0:
                scal_sq[k] += g * g
                step = eta * g / (math.sqrt(scal_sq[k]) + 1e-12)
                scal[k] += step if k == _G else -step  # ascent on gamma only
        scal[_A] = _clip(scal[_A], 0.0, 1.0)
        scal[_B] = _clip(scal[_B], 0.0, 1.0)
        scal[_SN] = _clip(scal[_SN], _SN_RANGE[0], _SN_RANGE[1])
        scal[_SP] = _clip(scal[_SP], _SP_RANGE[0], _SP_RANGE[1])
        lo = scal[_B] - 1.0
        if two_way:
            lo = max(lo, -scal[_A])
        scal[_G] = _clip(scal[_G], lo, 1.0)


class PAUCI(BaseStreamingAUC):
    r"""One-pass partial-AUC maximization by PAUCI's instance-wise min-max problem
    (Shao et al., NeurIPS 2022): one-way (FPR <= max_fpr) or two-way (also TPR >=
    min_tpr), stochastic primal-dual steps, O(k) per example of k non-zeros.

    See the module docstring for the problem, the per-example gradients, the
    defaults and what the one-pass version approximates.

    Parameters
    ----------
    max_fpr : float in (0, 1], default=0.05
        The largest false-positive rate of the region maximized (:math:`\beta`).
    min_tpr : float in [0, 1) or None, default=None
        None: one-way partial AUC. A value: two-way; only the lowest-scored
        ``1 - min_tpr`` fraction of the positives counts (0 keeps all of them).
    eta : float, default=0.03
        AdaGrad step size of every variable.
    kappa : float, default=10.0
        Sharpness of the smoothed hinge :math:`r_\kappa` (the authors' code uses 2;
        module docstring, "Defaults").
    omega : float, default=0.0
        Extra weight of the dual variable's regularization :math:`-\omega\gamma^2`.
    average_decay : int in [0, 16], default=0
        The :math:`\eta` of the polynomial-decay average of the iterates that scores
        (as :class:`aucstream.OnlinePAUC`'s; 0: the uniform average).
    shuffle : bool, default=False
        Whether ``fit`` visits the examples in a random order.
    random_state : int, Generator or None, default=None
        Seed of the shuffle (the update draws nothing).

    Attributes
    ----------
    w_ : ndarray of shape (n_features,)
        The last iterate (``coef_`` is the average of the iterates).
    grad_sq_ : ndarray of shape (n_features,)
        AdaGrad's sums of squared gradients of ``w_``.
    steps_ : ndarray of shape (n_features,)
        :math:`U = \sum_t (A_{t-1} + 1)\,\Delta_t`, from which ``coef_`` is read.
    scalars_ : ndarray of shape (6,)
        :math:`[a, b, \gamma, s', s, c]`.
    scalars_sq_ : ndarray of shape (6,)
        Their AdaGrad sums of squared gradients.
    class_counts_ : ndarray of shape (2,), int64
        Negatives and positives seen.
    classes_, n_samples_seen_, n_features_in_
        As for every aucstream learner.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream import PAUCI
    >>> from aucstream.metrics import roc_auc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 5)); y = X[:, 0] + 0.5 * rng.normal(size=3000) > 1.5
    >>> model = PAUCI(max_fpr=0.05).fit(X, y)
    >>> round(roc_auc(y, model.decision_function(X), max_fpr=0.05), 1) >= 0.8
    True
    >>> two_way = PAUCI(max_fpr=0.05, min_tpr=0.5).fit(X, y)
    """

    param_grid = {"eta": [0.01, 0.03, 0.1, 0.3, 1.0], "max_fpr": [0.01, 0.05, 0.1]}
    _tags = LearnerTags(dense_kernels=True, kernel_prequential=True, update_draws=False)
    _state_spec = StateSpec(nbytes=lambda learner, d: 8 * (3 * d + 12))
    _parameter_constraints = {
        "max_fpr": [Interval(Real, 0, 1, closed="right")],
        "min_tpr": [Interval(Real, 0, 1, closed="left"), None],
        "eta": [positive()],
        "kappa": [positive()],
        "omega": [Interval(Real, 0, None, closed="left")],
        "average_decay": [Interval(Integral, 0, MAX_AVERAGE_DECAY, closed="both")],
        **PASS_ORDER,
    }

    def __init__(
        self,
        max_fpr: float = 0.05,
        min_tpr: float | None = None,
        eta: float = 0.03,
        kappa: float = 10.0,
        omega: float = 0.0,
        average_decay: int = 0,
        shuffle: bool = False,
        random_state: RandomState = None,
    ):
        self.max_fpr = max_fpr
        self.min_tpr = min_tpr
        self.eta = eta
        self.kappa = kappa
        self.omega = omega
        self.average_decay = average_decay
        self.shuffle = shuffle
        self.random_state = random_state

    @classmethod
    def _race_settings(cls, max_fpr: float) -> list[dict]:
        """The settings with which ``OnePassSearch(max_fpr=...)`` races this learner
        (:func:`aucstream._pauc_race.pauc_candidates`): the defaults at ``max_fpr``,
        and a ten times larger ``eta`` (the best of the steps tried on ijcnn1, the
        worst on make_classification: the race decides); both score with the
        polynomial-decay average of :data:`aucstream.pauc.RACE_AVERAGE_DECAY`."""
        decay = RACE_AVERAGE_DECAY
        return [
            {"max_fpr": max_fpr, "average_decay": decay},
            {"max_fpr": max_fpr, "eta": 10.0 * cls().eta, "average_decay": decay},
        ]

    def _init_state(self, n_features: int) -> None:
        self.w_ = np.zeros(n_features)
        self.grad_sq_ = np.zeros(n_features)
        self.steps_ = np.zeros(n_features)
        self.scalars_ = np.array(_INITIAL, dtype=float)
        self.scalars_sq_ = np.zeros(6)
        self.class_counts_ = np.zeros(2, dtype=np.int64)

    def _update(self, chunk: Chunk) -> None:
        two_way = self.min_tpr is not None
        alpha = 1.0 - float(self.min_tpr) if self.min_tpr is not None else 1.0
        _pauci_chunk(
            self.w_,
            self.grad_sq_,
            self.steps_,
            self.scalars_,
            self.scalars_sq_,
            self.class_counts_,
            rows_of(chunk),
            chunk.pre_scores,
            float(self.max_fpr),
            alpha,
            float(self.kappa),
            float(self.omega),
            float(self.eta),
            two_way,
            int(self.average_decay),
        )

    def _coef(self) -> np.ndarray:
        t = float(self.class_counts_.sum())
        if t == 0:
            return np.zeros_like(self.w_)
        total = averaging_total(t, int(self.average_decay))
        return ((total + 1.0) * self.w_ - self.steps_) / total

    def _merge(self, other: PAUCI) -> None:
        """Module docstring, "Merging"."""
        t_a, t_b = float(self.class_counts_.sum()), float(other.class_counts_.sum())
        if t_b == 0:
            return
        if t_a == 0:
            self.w_[:] = other.w_
            self.steps_[:] = other.steps_
            self.scalars_[:] = other.scalars_
        else:
            average = mean_by_count(self._coef(), t_a, other._coef(), t_b)
            self.w_ = mean_by_count(self.w_, t_a, other.w_, t_b)
            total = averaging_total(t_a + t_b, int(self.average_decay))
            self.steps_ = (total + 1.0) * self.w_ - total * average
            both = mean_by_count(self.scalars_, t_a, other.scalars_, t_b)
            n_a, n_b = self.class_counts_, other.class_counts_
            by_class = {_A: 1, _SP: 1, _B: 0, _SN: 0}  # gamma and c: by all examples
            for k, c in by_class.items():  # a class's scalars by that class's examples
                if n_b[c] and n_a[c]:
                    both[k] = mean_by_count(
                        self.scalars_[k : k + 1], n_a[c], other.scalars_[k : k + 1], n_b[c]
                    )[0]
                elif n_b[c]:
                    both[k] = other.scalars_[k]
                else:
                    both[k] = self.scalars_[k]
            self.scalars_ = both
        self.grad_sq_ += other.grad_sq_
        self.scalars_sq_ += other.scalars_sq_
        self.class_counts_ += other.class_counts_

    def _check_state(self) -> None:
        if (self.class_counts_ < 0).any() or self.class_counts_.sum() != self.n_samples_seen_:
            raise ValueError(
                f"class_counts_ {self.class_counts_.tolist()} do not add up to the "
                f"{self.n_samples_seen_} examples seen"
            )
        if (self.grad_sq_ < 0).any() or (self.scalars_sq_ < 0).any():
            raise ValueError("grad_sq_ or scalars_sq_ holds negative sums of squares")
        a, b, g, sn, sp, _ = self.scalars_.tolist()
        if not (0 <= a <= 1 and 0 <= b <= 1 and -1 <= g <= 1):
            raise ValueError(f"scalars_ {self.scalars_.tolist()} outside their intervals")
        if not (_SN_RANGE[0] <= sn <= _SN_RANGE[1] and _SP_RANGE[0] <= sp <= _SP_RANGE[1]):
            raise ValueError(f"scalars_ {self.scalars_.tolist()} outside their intervals")
