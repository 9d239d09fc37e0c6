r"""One-pass least-squares partial AUC: the square pairwise loss with its hard negatives
weighted up, solved exactly from the class statistics.

:class:`LSPAUC` keeps the first- and second-order statistics of each class (as OPAUC
does) with every negative weighted by whether it was among the top :math:`\beta`
(``max_fpr``) of the negatives' scores when it arrived, and scores with the exact
minimizer of the weighted objective.

Objective
---------
The square pairwise loss over the examples seen, OPAUC's (Gao, Jin, Zhu, Zhou, *One-Pass
AUC Optimization*, ICML 2013, Eq. 3; Gao, Wang, Jin, Zhou, Artificial Intelligence
2016, "G16", Eq. 4), with a weight :math:`\omega_j` on each negative:

.. math::
    :label: lspauc-objective

    F(w) = \frac\lambda2\|w\|^2 + \frac{1}{2 n_+ W_-}\sum_{i\in+}\sum_{j\in-}
        \omega_j \big(1 - w^\top(x_i - x_j)\big)^2, \qquad W_- = \sum_{j\in-}\omega_j,

where :math:`\omega_j = 1 + \rho` for a *hard* negative (its score at arrival was at
least :math:`q`, the tracked :math:`(1 - \beta)`-quantile of the negatives' scores) and 1
otherwise, with :math:`\rho = \mu / (\beta (1 - \mu))` (:math:`\mu` =
``partial_weight``). When a fraction :math:`\beta` of the negatives is hard, the weighted
negatives are the mixture :math:`(1 - \mu)\,U_- + \mu\,U_{\text{hard}}` of the uniform
distributions over all negatives and over the hard ones, and the loss is linear in that
distribution, so

.. math::
    :label: lspauc-mixture

    F(w) = \frac\lambda2\|w\|^2 + (1 - \mu)\,L_{\text{AUC}}(w) + \mu\,L_{\beta}(w):

:math:`L_{\text{AUC}}` is OPAUC's full-AUC surrogate and :math:`L_\beta` is the CVaR
form of the one-way partial AUC at FPR :math:`\le \beta` with the square loss (Zhu, Li,
Wang, Wu, Yang, *When AUC meets DRO: Optimizing Partial AUC for Deep Learning with
Non-Convex Convergence Guarantee*, ICML 2022, the one-way problem of SOPA): its optimal
per-positive thresholds are :math:`\ell(f_i - q)` with :math:`q` the
:math:`(1-\beta)`-quantile of the negatives' scores (the loss does not decrease in
:math:`f_j`), so a pair counts with weight :math:`1/\beta` exactly when its negative is
above :math:`q` (:mod:`aucstream.pauc`, "Objective"). :math:`\mu = 0` is OPAUC's
objective; :math:`\mu \to 1` the partial AUC's alone.

The exact minimizer
-------------------
With the weighted class means :math:`c_+ = \frac{1}{n_+}\sum_{i\in+} x_i`,
:math:`c_- = \frac{1}{W_-}\sum_{j\in-}\omega_j x_j`, covariances :math:`S_\pm` (the
weighted second moments :math:`P_\pm / W_\pm` minus :math:`c_\pm c_\pm^\top`) and
:math:`\delta = c_+ - c_-`, the mean over the weighted pairs of :math:`(x_i - x_j)` is
:math:`\delta` and of :math:`(x_i - x_j)(x_i - x_j)^\top` is :math:`S_+ + S_- +
\delta\delta^\top`, so :eq:`lspauc-objective` is
:math:`\frac\lambda2\|w\|^2 + \frac12\big[(1 - w^\top\delta)^2 + w^\top(S_+ + S_-)w\big]`
and its minimizer solves

.. math::
    :label: lspauc-solve

    (\lambda I + S_+ + S_- + \delta\delta^\top)\, w = \delta ,

the closed form of the least-squares AUC (the batch LS-SVM of G16's experiments,
:class:`aucstream.batch.LSSVMAUC`) on the weighted negatives. The statistics
:math:`(n_+, W_-, \sum \omega x, \sum \omega x x^\top)` are sums: one pass keeps them
exactly, at :math:`O(k^2)` per example of :math:`k` non-zeros (OPAUC's covariance
update), and ``coef_`` is :eq:`lspauc-solve` of everything seen, solved when read
(:math:`O(d^3)`, cached until the next example).

The one-pass algorithm
----------------------
For an example :math:`x_t` (``test_then_train``: its score first):

1. **Score.** :math:`s_t = w_s^\top x_t` with :math:`w_s` (``w_``) the scoring model:
   :eq:`lspauc-solve` of the statistics as they were at the last refresh.
2. **Hardness** (a negative, once a scoring model exists): hard when
   :math:`s_t \ge q`; then the quantile tracker moves by the stochastic subgradient of
   the pinball loss, :math:`q \leftarrow q + c\,\sigma\,(1[s_t > q] - \beta)`, with
   :math:`\sigma` the running mean of :math:`|s_t - q|` and :math:`c` = 0.1 (the
   tracker of :class:`aucstream.OnlinePAUC`, ``aucstream.pauc._track``; the first
   negative scored sets :math:`q`).
3. **Statistics.** Its class's weight total, sum and second-moment sum add
   :math:`\omega_t`, :math:`\omega_t x_t`, :math:`\omega_t x_t x_t^\top` (positives:
   :math:`\omega_t = 1`).
4. **Refresh.** After examples :math:`t = 1, 2, 4, \dots` up to ``refresh``, then every
   ``refresh`` examples, :math:`w_s` becomes :eq:`lspauc-solve` of the statistics
   (when both classes have been seen). The schedule counts examples of the stream, so
   any split of the stream into calls gives the same model bit for bit.

Deviations, against the batch problem :eq:`lspauc-mixture` (whose hard set is the top
:math:`\beta` of the negatives under the final :math:`w`): a negative's weight is fixed
when it arrives, by the scoring model of the last refresh and the tracked quantile (a
negative that became hard later keeps weight 1, one that stopped being hard keeps
:math:`1 + \rho`), and the negatives seen before the first refresh weigh 1. No step
size: the weights are the exact minimizer of :eq:`lspauc-objective` for the weights
given, where OPAUC takes one gradient step per example.

Merging: the statistics and the class counts add exactly; the quantile trackers
average by the negatives each scored (approximate, as for :class:`aucstream.OnlinePAUC`),
and the scoring model is re-solved from the merged statistics.

Cost: :math:`O(k^2)` per example plus one :math:`O(d^3)` solve per ``refresh``
examples; memory :math:`O(d^2)` (two :math:`d \times d` sums), as OPAUC with
``covariance="full"``. ``benchmarks/bench_pauc.py`` measures it (docs/results/pauc.md).

Defaults (``partial_weight`` 0.5, ``lam`` 0.1) were chosen on six imbalanced streams
outside that benchmark's (``held_out_streams`` of ``benchmarks/bench_pauc.py``: letter,
USPS, magic04, phishing, skin, connect-4; docs/results/pauc.md, "LSPAUC's defaults"),
over ``partial_weight`` in {0, 0.5, 0.7, 0.9} and ``lam`` in {0.001, 0.01, 0.1, 1}:
the best mean partial AUC at FPR <= 0.05 (0.732, against 0.729 for 0.7 and 0.706 for
0 at the same ``lam``; OnlinePAUC 0.718, OPAUC 0.693); 0.5 was above 0 on each of the
six. ``refresh`` 250 and 4000
were neither better nor worse than 1000 there.

Limitation: the square loss is not monotone (it penalizes margins above 1 too), so when
the weighted negatives' mean passes the positives' along the scoring direction, the
solve turns that direction around; the hardness of later negatives is then decided by a
worse model, and fixed. On a synthetic stream whose negatives have a heavy-tailed
feature (5% of them, 6 times the spread), ``partial_weight`` 0.9 gave a test AUC of
0.11 where 0 gave 0.88 (the defaults otherwise); 0.5 stayed at 0.86 (its partial AUC
below 0's there). Large
``partial_weight`` values are for streams whose top negatives are stable.
"""

from __future__ import annotations

import weakref
from numbers import Integral, Real

import numpy as np

from ._base import BaseStreamingAUC
from ._chunks import Chunk
from ._kernels import col, jit, n_rows, row, rows_of, sparse_dot
from ._params import PASS_ORDER, Interval, positive
from ._runtime import LearnerTags, StateSpec
from ._typing import RandomState

__all__ = ["LSPAUC"]

#: Step of the quantile tracker, a fraction of the running mean absolute deviation
#: (that of :mod:`aucstream.pauc`).
QUANTILE_STEP = 0.1
#: Window of the running mean absolute deviation (negatives scored).
_SCALE_WINDOW = 1000.0
# the tracker's state: [q, scale, negatives scored, refreshes done]
_Q, _SCALE, _SCORED, _SOLVES = range(4)

#: ``coef_`` solved from the statistics, by learner: ``(key, coef)`` (not state: a
#: function of it, cached until the next example; ``_coef``).
_SOLVED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@jit
def _solve(weights, sums, scatter, lam, out):
    """:eq:`lspauc-solve` of the statistics into ``out``; False (``out`` untouched)
    while a class is missing."""
    if weights[0] <= 0.0 or weights[1] <= 0.0:
        return False
    d = out.shape[0]
    c_neg = sums[0] / weights[0]
    c_pos = sums[1] / weights[1]
    delta = c_pos - c_neg
    A = np.empty((d, d))
    for a in range(d):
        for b in range(d):
            A[a, b] = (
                scatter[0, a, b] / weights[0]
                - c_neg[a] * c_neg[b]
                + scatter[1, a, b] / weights[1]
                - c_pos[a] * c_pos[b]
                + delta[a] * delta[b]
            )
        A[a, a] += lam
    for a in range(d):  # exactly symmetric (the sums are, up to rounding)
        for b in range(a):
            m = 0.5 * (A[a, b] + A[b, a])
            A[a, b] = m
            A[b, a] = m
    out[:] = np.linalg.solve(A, delta)
    return True


@jit
def _lspauc_chunk(w, weights, sums, scatter, track, counts, rows, pre, beta, rho, lam, refresh):
    """The module's algorithm over a chunk; ``counts`` is ``[n_neg, n_pos]``."""
    scoring = pre.shape[0] == n_rows(rows)
    for r in range(n_rows(rows)):
        idx, val, y = row(rows, r)
        s = sparse_dot(w, idx, val)
        if scoring:
            pre[r] = s
        c = 1 if y > 0 else 0
        omega = 1.0
        if c == 0 and track[_SOLVES] > 0:  # hardness (step 2)
            track[_SCORED] += 1.0
            if track[_SCORED] == 1.0:
                track[_Q] = s
                track[_SCALE] = 0.0
                omega = 1.0 + rho
            else:
                if s >= track[_Q]:
                    omega = 1.0 + rho
                dev = abs(s - track[_Q])
                track[_SCALE] += (dev - track[_SCALE]) / min(track[_SCORED], _SCALE_WINDOW)
                step = QUANTILE_STEP * track[_SCALE]
                if s > track[_Q]:
                    track[_Q] += step * (1.0 - beta)
                else:
                    track[_Q] -= step * beta
        counts[c] += 1
        weights[c] += omega
        for a in range(val.shape[0]):  # statistics (step 3)
            ja = col(idx, a)
            va = omega * val[a]
            sums[c, ja] += va
            if va != 0.0:
                for b in range(val.shape[0]):
                    scatter[c, ja, col(idx, b)] += va * val[b]
        t = counts[0] + counts[1]
        due = (t & (t - 1)) == 0 if t < refresh else t % refresh == 0
        if due and _solve(weights, sums, scatter, lam, w):  # refresh (step 4)
            track[_SOLVES] += 1.0


class LSPAUC(BaseStreamingAUC):
    r"""One-pass least-squares partial AUC: OPAUC's square pairwise loss with the
    negatives above the tracked :math:`(1 - \beta)`-quantile weighted up, solved
    exactly from the weighted class statistics.

    The objective is a mixture of the full-AUC and the partial-AUC (FPR <= ``max_fpr``)
    square-loss surrogates, with weight ``partial_weight`` on the latter; see the
    module docstring (:mod:`aucstream.lspauc`) for the equations, the one-pass
    algorithm and its deviations. O(k^2) per example of k non-zeros, O(d^2) memory.

    Parameters
    ----------
    max_fpr : float in (0, 1], default=0.05
        The largest false-positive rate of the partial AUC (:math:`\beta`).
    partial_weight : float in [0, 1), default=0.5
        Weight :math:`\mu` of the partial-AUC term (0: OPAUC's objective, solved
        exactly). A hard negative weighs :math:`1 + \mu/(\beta(1 - \mu))`.
    lam : float, default=0.1
        L2 regularization :math:`\lambda` (of the standardized features: behind
        :class:`~aucstream.preprocessing.OnlineStandardScaler`).
    refresh : int, default=1000
        Examples between the solves of the scoring model (after the examples 1, 2, 4,
        ... before): ``refresh`` times fewer :math:`O(d^3)` solves than examples.
    shuffle : bool, default=False
        Whether ``fit`` visits the examples in a random order.
    random_state : int, Generator or None, default=None
        Seed of the shuffle (the update draws nothing).

    Attributes
    ----------
    w_ : ndarray of shape (n_features,)
        The scoring model of the last refresh (the prequential scores; ``coef_`` is
        solved from all the statistics).
    class_weights_ : ndarray of shape (2,)
        The weight totals :math:`W_-, W_+` (:math:`W_+ = n_+`).
    sums_ : ndarray of shape (2, n_features)
        :math:`\sum \omega x` of each class.
    scatter_ : ndarray of shape (2, n_features, n_features)
        :math:`\sum \omega x x^\top` of each class.
    tracker_ : ndarray of shape (4,)
        The quantile :math:`q`, the running mean absolute deviation, the negatives
        scored, and the refreshes done.
    class_counts_ : ndarray of shape (2,), int64
        Negatives and positives seen.
    classes_, n_samples_seen_, n_features_in_
        As for every aucstream learner.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream import LSPAUC
    >>> from aucstream.metrics import roc_auc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 5)); y = X[:, 0] + 0.5 * rng.normal(size=3000) > 1.5
    >>> model = LSPAUC(max_fpr=0.05).fit(X, y)
    >>> round(roc_auc(y, model.decision_function(X), max_fpr=0.05), 1) >= 0.8
    True
    """

    param_grid = {"partial_weight": [0.0, 0.5, 0.7, 0.9], "lam": [1e-3, 1e-2, 1e-1, 1.0]}
    _tags = LearnerTags(dense_kernels=True, kernel_prequential=True, update_draws=False)
    _state_spec = StateSpec(nbytes=lambda learner, d: 8 * (2 * d * d + 3 * d + 8))
    _parameter_constraints = {
        "max_fpr": [Interval(Real, 0, 1, closed="right")],
        "partial_weight": [Interval(Real, 0, 1, closed="left")],
        "lam": [positive()],
        "refresh": [Interval(Integral, 1, None, closed="left")],
        **PASS_ORDER,
    }

    def __init__(
        self,
        max_fpr: float = 0.05,
        partial_weight: float = 0.5,
        lam: float = 0.1,
        refresh: int = 1000,
        shuffle: bool = False,
        random_state: RandomState = None,
    ):
        self.max_fpr = max_fpr
        self.partial_weight = partial_weight
        self.lam = lam
        self.refresh = refresh
        self.shuffle = shuffle
        self.random_state = random_state

    def _rho(self) -> float:
        """The extra weight :math:`\\rho` of a hard negative (module docstring)."""
        mu = float(self.partial_weight)
        return mu / (float(self.max_fpr) * (1.0 - mu))

    def _init_state(self, n_features: int) -> None:
        self.w_ = np.zeros(n_features)
        self.class_weights_ = np.zeros(2)
        self.sums_ = np.zeros((2, n_features))
        self.scatter_ = np.zeros((2, n_features, n_features))
        self.tracker_ = np.zeros(4)
        self.class_counts_ = np.zeros(2, dtype=np.int64)

    def _update(self, chunk: Chunk) -> None:
        _lspauc_chunk(
            self.w_,
            self.class_weights_,
            self.sums_,
            self.scatter_,
            self.tracker_,
            self.class_counts_,
            rows_of(chunk),
            chunk.pre_scores,
            float(self.max_fpr),
            self._rho(),
            float(self.lam),
            int(self.refresh),
        )

    def _coef(self) -> np.ndarray:
        key = (int(self.n_samples_seen_), float(self.lam), id(self.scatter_))
        cached = _SOLVED.get(self)
        if cached is not None and cached[0] == key:
            return cached[1].copy()
        out = self.w_.copy()  # a class missing: the scoring model (zeros)
        _solve(self.class_weights_, self.sums_, self.scatter_, float(self.lam), out)
        _SOLVED[self] = (key, out)
        return out.copy()

    def _merge(self, other: LSPAUC) -> None:
        """Module docstring, "Merging"."""
        n_a, n_b = self.tracker_[_SCORED], other.tracker_[_SCORED]
        if n_b > 0:
            mix = n_b / (n_a + n_b)
            for k in (_Q, _SCALE):
                self.tracker_[k] += mix * (other.tracker_[k] - self.tracker_[k])
        self.tracker_[_SCORED] = n_a + n_b
        self.tracker_[_SOLVES] += other.tracker_[_SOLVES]
        self.class_weights_ += other.class_weights_
        self.sums_ += other.sums_
        self.scatter_ += other.scatter_
        self.class_counts_ += other.class_counts_
        _solve(self.class_weights_, self.sums_, self.scatter_, float(self.lam), self.w_)

    def _check_state(self) -> None:
        if (self.class_counts_ < 0).any() or self.class_counts_.sum() != self.n_samples_seen_:
            raise ValueError(
                f"class_counts_ {self.class_counts_.tolist()} do not add up to the "
                f"{self.n_samples_seen_} examples seen"
            )
        if (self.class_weights_ < self.class_counts_).any():
            raise ValueError(
                f"class_weights_ {self.class_weights_.tolist()} below the class counts"
            )
        if self.tracker_[_SCORED] < 0 or self.tracker_[_SOLVES] < 0:
            raise ValueError(f"tracker_ {self.tracker_.tolist()} holds negative counts")
