r"""One-pass partial-AUC learners: the top of the ranking.

Fraud, anomaly and advertising teams act on the few highest scores: the region of the
ROC curve left of a small false-positive rate :math:`\beta` (one-way partial AUC), and
sometimes only its part above a true-positive rate :math:`\alpha` (two-way partial AUC).
:class:`OnlinePAUC` maximizes either in one pass with memory independent of the stream
length (:func:`aucstream.roc_auc` measures both exactly).

Objective
---------
The one-way partial AUC at FPR :math:`\le \beta` counts the pairs of a positive and one
of the top :math:`\beta n_-` negatives (the highest-scored). Its convex surrogate with
a pairwise loss :math:`\ell(t) = (1 - t)_+^2` (the default of LibAUC's ``pAUC_CVaR_Loss``)
is the conditional value at risk (CVaR) of the pairwise losses of each positive
(Zhu, Li, Wang, Wu, Yang, *When AUC meets DRO: Optimizing Partial AUC for Deep Learning
with Non-Convex Convergence Guarantee*, ICML 2022, "SOPA", their one-way problem):

.. math::

    \min_w \frac{1}{n_+} \sum_{i \in +} \min_{s_i}\Big[ s_i + \frac{1}{\beta n_-}
    \sum_{j \in -} \big(\ell(w^\top (x_i - x_j)) - s_i\big)_+ \Big].

Because :math:`\ell(f_i - f_j)` does not decrease as the negative's score :math:`f_j`
grows, the optimal :math:`s_i` is :math:`\ell(f_i - q)` with :math:`q` the
:math:`(1 - \beta)`-quantile of the negatives' scores, for every positive at once: a pair
counts (weight :math:`1/\beta`) exactly when its negative scores above :math:`q`. SOPA
keeps one threshold :math:`s_i` per positive and revisits it over many epochs; the one
quantile :math:`q` replaces all of them, which is what makes one pass possible.

The two-way partial AUC (TPR :math:`\ge \alpha` = ``min_tpr``, FPR :math:`\le \beta`)
counts pairs of one of the lowest-scored :math:`(1 - \alpha) n_+` positives and one of
the top :math:`\beta n_-` negatives (Yang, Xu, Bao, He, Cao, Huang, *When All We Need is a
Piece of the Pie: A Generic Framework for Optimizing Two-way Partial AUC*, ICML 2021,
§3.2, with their :math:`\alpha` being :math:`1 - ` ``min_tpr``): the same argument on the
positives' side selects the positives below the :math:`(1 - \alpha)`-quantile
:math:`q_+` of the positives' scores (a doubly CVaR-weighted surrogate).

The one-pass algorithm
----------------------
State: the weights :math:`w`, AdaGrad's sums of squared gradients :math:`G` (Duchi,
Hazan, Singer 2011), a quantile tracker per class, and two reservoirs
(:class:`aucstream.reservoir.Reservoir`, Algorithm R): the *hard negatives* (those that
scored above :math:`q_-` when they arrived: a uniform sample of the negatives of the
FPR :math:`\le \beta` region as the model saw them) and the positives (two-way: the
*hard positives*, scored below :math:`q_+` on arrival). For an example :math:`x_t`
with score :math:`s_t = w^\top x_t` (written first: ``test_then_train``):

1. **Quantile.** The tracker of its class moves by the stochastic subgradient of the
   pinball loss (the online quantile estimate of SOPA's threshold, approximated):
   :math:`q_- \leftarrow q_- + c\,\sigma_-\,(1[s_t > q_-] - \beta)` for a negative,
   :math:`q_+ \leftarrow q_+ + c\,\sigma_+\,(\alpha' - 1[s_t < q_+])` for a positive
   (:math:`\alpha' = 1 - \alpha`), with the step scaled by :math:`\sigma`, the running
   mean of :math:`|s_t - q|` (so that the step follows the scale of the scores as
   :math:`w` grows), :math:`c` = ``QUANTILE_STEP``. The first example of a class sets
   its :math:`q`.
2. **Selection.** A negative is *hard* when :math:`s_t \ge q_-`; a positive is hard when
   :math:`s_t \le q_+` (always, one-way). Only hard examples update :math:`w`: the CVaR
   weight of the others is 0, so they cost :math:`O(k)` for :math:`k` non-zeros.
3. **Step.** A hard example is paired with the opposite buffer's members that are
   themselves still hard under the current :math:`w` (all members when none is); with
   :math:`A` that set, :math:`m_{ij} = w^\top(x_i - x_j)` (positive :math:`i`, negative
   :math:`j`),

   .. math::

       g = \frac{1}{|A|} \sum_{(i, j)} -2 (1 - m_{ij})_+ (x_i - x_j), \qquad
       G \leftarrow G + g^2, \qquad w \leftarrow w - \eta\, g / (\sqrt{G} + 10^{-12}),

   and the example is then offered to its own class's buffer (always a positive
   one-way; a hard one otherwise).
4. **Average.** The model scores with an average :math:`\bar w` of the iterates
   :math:`w_1, \dots, w_T` (``coef_`` and the prequential scores), which smooths the
   noise of steps taken on one example each: by default the uniform one
   (Polyak-Ruppert), and with ``average_decay`` :math:`= \eta > 0` the
   polynomial-decay average of Shamir and Zhang (*Stochastic Gradient Descent for
   Non-smooth Optimization: Convergence Results and Optimal Averaging Schemes*, ICML
   2013), :math:`\bar w_t = (1 - \frac{\eta + 1}{t + \eta})\bar w_{t-1} +
   \frac{\eta + 1}{t + \eta} w_t`, which weighs :math:`w_t` by
   :math:`a_t = t (t + 1) \cdots (t + \eta - 1)` (:math:`\eta = 1`: by :math:`t`) and
   so forgets the early iterates, learnt while the online scaler in front and the
   quantiles were still settling. With :math:`A_t = \sum_{s \le t} a_s = t (t + 1)
   \cdots (t + \eta) / (\eta + 1)` and :math:`\Delta_t` the change of :math:`w` at
   example :math:`t`, :math:`\bar w_T = w_T - \sum_t A_{t-1} \Delta_t / A_T`, kept
   lazily over the coordinates a step changes: :math:`U = \sum_t (A_{t-1} + 1)
   \Delta_t`, :math:`\bar w_T = ((A_T + 1) w_T - U) / A_T` (:math:`A_t = t` for
   :math:`\eta = 0`).

What is approximated, against the batch CVaR problem: the quantiles are tracked
stochastically from prequential scores (scores under earlier weights), the buffers hold
a sample of the examples that *were* hard when they arrived, and each example's step
uses a buffer of at most ``buffer_size`` opposite examples instead of the whole opposite
class. The :math:`1/\beta` weights of SOPA's gradient are absorbed into AdaGrad's
per-coordinate scaling (it is invariant to a constant factor of the gradient).

Merging
-------
:meth:`~aucstream._base.BaseStreamingAUC.merge` of two learners of two parts of a
stream: the class counts and AdaGrad's sums of squared gradients (the sums over both
parts' steps) add exactly; each buffer becomes a uniform sample of the union of the two
streams of examples offered to it (:meth:`aucstream.reservoir.Reservoir.merge`, exact
in distribution). Approximate, as for every merged gradient learner: the last iterates
and the averages of the iterates combine by examples seen (model averaging; ``U`` is
set so that the merged average is read from the merged last iterate as before), and
each class's quantile tracker (its quantile and scale) by that class's examples seen:
an average of two quantile estimates, not the quantile of the union, and the buffers'
"hard" examples were selected under two different models.

Cost per example: :math:`O(k)` for an example that is not hard (most negatives, a
fraction :math:`1 - \beta`), :math:`O(N d)` for a hard one (buffers of :math:`N` rows
of :math:`d` features). Memory :math:`O(N d)`, independent of the stream length.
``benchmarks/bench_pauc.py`` compares it with OPAUC, SOLAM, OAM, the tuning-free
pipelines and LibAUC's multi-epoch partial-AUC losses (docs/results/pauc.md).

Choices measured while building it (one pass over w8a, ijcnn1, a9a and an imbalanced
``make_classification`` stream, test partial AUC at FPR <= 0.05 and 0.01): predicting
with the uniform average of the iterates (step 4) instead of the last iterate raised
the partial AUC on a9a and make_classification and lost a little on ijcnn1; ``eta`` =
0.1 was the best of {0.01, 0.1, 1}; buffers of 300 rather than 100 raised the partial
AUC at FPR <= 0.05 on all six streams of
``benchmarks/bench_pauc.py`` (by 0.003 to 0.006 on five; fraud-like, measured on its
first 100,000 rows, by more, but on the whole stream the spread over four seeds, 0.53 to
0.61 with buffers of 100 and 0.54 to 0.55 with 300, is larger than the difference), and
1000 did better than 300 on one of the six only (a9a, by 0.001).
A warm-up that treats every negative as hard at first (a region
:math:`\max(\beta, W/n_-)`) lowered the final partial AUC on five of those six streams
with :math:`W` = 1000 and on four with 3000 (a9a rose by 0.015), and is not used.
PAUCI's instance-wise min-max form (Shao et al., NeurIPS 2022), with a bounded score
and a few extra primal-dual scalars instead of buffers, is :class:`aucstream.PAUCI`
(:mod:`aucstream.pauci`); the square loss's form with the hard negatives weighted
up in the class statistics and solved exactly, with no step size, is
:class:`aucstream.LSPAUC` (:mod:`aucstream.lspauc`); all three race in
``OnePassSearch(max_fpr=...)``.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from ._base import BaseStreamingAUC
from ._chunks import Chunk
from ._kernels import (
    REASSOC,
    jit,
    mean_by_count,
    n_rows,
    row,
    rows_of,
    sparse_axpy,
    sparse_dot,
)
from ._params import PASS_ORDER, Interval, positive, positive_int
from ._runtime import LearnerTags, StateSpec
from ._typing import RandomState
from .reservoir import Reservoir, reservoir_offer

__all__ = ["OnlinePAUC"]

#: Step of the quantile trackers, as a fraction of the running mean absolute deviation
#: of the class's scores from its tracked quantile.
QUANTILE_STEP = 0.1
#: The largest ``average_decay`` (a product of that many factors of the stream length).
MAX_AVERAGE_DECAY = 16
#: The ``average_decay`` of the settings that ``OnePassSearch(max_fpr=...)`` races
#: (``OnlinePAUC._race_settings``, ``PAUCI._race_settings``): 1, the iterate :math:`w_t`
#: weighted by :math:`t`. Chosen on the held-out streams of
#: ``benchmarks/bench_pauc.py`` (``held_out_streams``: letter, USPS, magic04, phishing,
#: skin, connect-4), one pass behind the online scaler, test partial AUC at FPR <= 0.05,
#: against the uniform average (0): OnlinePAUC at its defaults rose on five of the six
#: (by up to 0.013; letter -0.0006), PAUCI on all six (letter 0.68 to 0.80), and
#: ``StreamPipeline(max_fpr=0.05)``'s gain over ``StreamPipeline()`` from +0.0266 to
#: +0.0296 on average (phishing -0.0013, skin +0.0122; docs/results/pauc.md). PAUCI's
#: at 2 (weights :math:`t (t + 1)`) moved the pipeline by less than 0.001 on every
#: stream of both sets. The defaults stay 0: a change would move every row of the
#: learners measured before, and OnlinePAUC fell with it on fraud-like (0.54 to 0.52,
#: where it is not chosen) and a9a.
RACE_AVERAGE_DECAY = 1
#: Window of the running mean absolute deviation (examples of the class).
_SCALE_WINDOW = 1000.0
# the trackers' state: [q_neg, scale_neg, q_pos, scale_pos]
_QN, _SN, _QP, _SP = range(4)


@jit(fastmath=REASSOC)
def _track(track, q, sc, s, n, above_weight, below_weight):
    """One step of a quantile tracker (module docstring, step 1): ``q`` moves up by
    ``above_weight`` of the step when ``s > q`` and down by ``below_weight`` otherwise;
    ``n`` counts the class's examples, this one included."""
    if n == 1:
        track[q] = s
        track[sc] = 0.0
        return
    dev = abs(s - track[q])
    track[sc] += (dev - track[sc]) / min(float(n), _SCALE_WINDOW)
    step = QUANTILE_STEP * track[sc]
    if s > track[q]:
        track[q] += step * above_weight
    else:
        track[q] -= step * below_weight


@jit(fastmath=REASSOC)
def averaging_total(t, decay):
    r""":math:`A_t = t (t + 1) \cdots (t + \eta) / (\eta + 1)` for ``decay`` =
    :math:`\eta`: the total weight of the iterates :math:`w_1, \dots, w_t` in
    polynomial-decay averaging (module docstring, step 4); :math:`t` for :math:`\eta = 0`
    (exactly: the uniform average's)."""
    total = t
    for i in range(1, decay + 1):
        total *= t + i
    return total / (decay + 1.0)


@jit(fastmath=REASSOC)
def _pair_step(w, G, U, t, grad, scores, idx, val, y, s, items, size, threshold, eta):
    """Module docstring, step 3: one AdaGrad step on the pairs of the example
    ``(idx, val)`` of label ``y`` and score ``s`` with the buffered opposite examples
    that are hard under the current ``w`` (score above ``threshold`` for negatives,
    below for positives; all of them when none is)."""
    n_active = 0
    for b in range(size):
        scores[b] = sparse_dot(w, None, items[b])
        hard = scores[b] >= threshold if y > 0 else scores[b] <= threshold
        n_active += hard
    use_all = n_active == 0
    if use_all:
        n_active = size
    grad[:] = 0.0
    total = 0.0  # the sum of coefficients of the example itself
    for b in range(size):
        hard = scores[b] >= threshold if y > 0 else scores[b] <= threshold
        if not (hard or use_all):
            continue
        margin = y * (s - scores[b])  # w^T (x_pos - x_neg)
        if margin >= 1.0:
            continue
        coef = -2.0 * (1.0 - margin) / n_active  # d loss / d margin, averaged
        # d margin / d w = y (x - x_b)
        total += coef * y
        sparse_axpy(grad, -coef * y, None, items[b])
    if total == 0.0:
        return
    sparse_axpy(grad, total, idx, val)
    for j in range(w.shape[0]):
        g = grad[j]
        if g != 0.0:
            G[j] += g * g
            delta = eta * g / (math.sqrt(G[j]) + 1e-12)
            w[j] -= delta
            U[j] -= t * delta


@jit(fastmath=REASSOC)
def _pauc_chunk(
    w, G, U, track, counts, neg, pos, rows, pre, uniforms, beta, alpha, eta, two_way, decay
):
    r"""The module's algorithm over a chunk. ``neg`` and ``pos`` are the reservoirs as
    ``(items, sq_norms, counts, capacity)``; ``counts`` is ``[n_neg, n_pos]``; ``alpha``
    the fraction of positives kept (``1 - min_tpr``); ``decay`` the averaging's
    :math:`\eta` (step 4)."""
    scoring = pre.shape[0] == n_rows(rows)
    d = w.shape[0]
    grad = np.empty(d)
    scores = np.empty(max(neg[0].shape[0], pos[0].shape[0]))
    for r in range(n_rows(rows)):
        idx, val, y = row(rows, r)
        s = sparse_dot(w, idx, val)
        t = float(counts[0] + counts[1])  # examples learnt before this one
        total = averaging_total(t, decay)  # A_t: weight of the iterates so far
        if scoring:  # the average of the iterates so far: ((A_t + 1) w - U) / A_t
            pre[r] = ((total + 1.0) * s - sparse_dot(U, idx, val)) / total if t > 0 else 0.0
        t = total + 1.0  # a step made now is in the iterates of this example on: U's factor
        if y > 0:
            counts[1] += 1
            hard = True
            if two_way:
                hard = counts[1] == 1 or s <= track[_QP]
                _track(track, _QP, _SP, s, counts[1], alpha, 1.0 - alpha)
            if hard:
                if neg[2][0] > 0:
                    _pair_step(
                        w, G, U, t, grad, scores, idx, val, y, s, neg[0], neg[2][0], track[_QN], eta
                    )
                reservoir_offer(pos[0], pos[1], pos[2], pos[3], idx, val, uniforms[r])
        else:
            counts[0] += 1
            hard = counts[0] == 1 or s >= track[_QN]
            _track(track, _QN, _SN, s, counts[0], 1.0 - beta, beta)
            if hard:
                if pos[2][0] > 0:
                    limit = track[_QP] if two_way else math.inf
                    _pair_step(
                        w, G, U, t, grad, scores, idx, val, y, s, pos[0], pos[2][0], limit, eta
                    )
                reservoir_offer(neg[0], neg[1], neg[2], neg[3], idx, val, uniforms[r])


def _fraction(low_open: bool):
    """A real in (0, 1] (``low_open``) or [0, 1), booleans, NaN and infinities refused."""
    if low_open:
        return Interval(Real, 0, 1, closed="right")
    return Interval(Real, 0, 1, closed="left")


def _read_only(learner: OnlinePAUC, y_pm: np.ndarray, chunk: Chunk | None = None) -> tuple:
    """The reservoir of the class no example of the chunk belongs to, which the kernel
    (:func:`_pauc_chunk`) only reads: an example is offered to its own class's
    (``StateSpec.read_only``; the generator, drawn from, is not declared)."""
    return learner._other_class(y_pm, learner.buffers_)


def _state_nbytes(learner: OnlinePAUC, n_features: int) -> int:
    """The two buffers and two vectors of d (``StateSpec.nbytes``)."""
    return 8 * (2 * learner.buffer_size * (n_features + 1) + 2 * n_features)


class OnlinePAUC(BaseStreamingAUC):
    r"""One-pass partial-AUC maximization: one-way (FPR <= max_fpr) or two-way (also
    TPR >= min_tpr), a CVaR-weighted pairwise loss against buffers of hard examples.

    See the module docstring for the objective (SOPA's CVaR form with one streaming
    quantile), the algorithm and what it approximates. A negative scored below the
    tracked (1 - max_fpr)-quantile of the negatives costs O(k) for k non-zeros; a hard
    example costs O(N d) for buffers of N rows.

    Parameters
    ----------
    max_fpr : float in (0, 1], default=0.05
        The largest false-positive rate of the region maximized (the top
        ``max_fpr`` fraction of the negatives). 1 gives a full-AUC learner.
    min_tpr : float in [0, 1) or None, default=None
        None: one-way partial AUC. A value: two-way, only the positives below the
        tracked ``(1 - min_tpr)``-quantile of the positives' scores count (the
        lowest ``1 - min_tpr`` fraction; 0 keeps all, as one-way).
    eta : float, default=0.1
        AdaGrad step size.
    buffer_size : int, default=300
        Capacity of each reservoir (hard negatives, positives).
    average_decay : int in [0, 16], default=0
        The :math:`\eta` of polynomial-decay averaging (module docstring, step 4): the
        scoring model weighs the iterate :math:`w_t` by :math:`t (t + 1) \cdots
        (t + \eta - 1)`; 0 is the uniform (Polyak-Ruppert) average, 1 weighs
        :math:`w_t` by :math:`t`, larger values come closer to the last iterate.
    shuffle : bool, default=False
        Whether ``fit`` visits the examples in a random order.
    random_state : int, Generator or None, default=None
        Seed of the reservoir sampling and the shuffle.

    Attributes
    ----------
    w_ : ndarray of shape (n_features,)
        The last iterate (``coef_`` is the average of the iterates).
    grad_sq_ : ndarray of shape (n_features,)
        AdaGrad's sums of squared gradients.
    steps_ : ndarray of shape (n_features,)
        :math:`U = \sum_t (A_{t-1} + 1) \Delta_t`, from which the average of the
        iterates is read (``coef_``; module docstring, step 4).
    quantiles_ : ndarray of shape (4,)
        The trackers ``[q_neg, scale_neg, q_pos, scale_pos]``.
    class_counts_ : ndarray of shape (2,), int64
        Negatives and positives seen.
    buffers_ : list of two Reservoir
        Hard negatives and (hard) positives.
    classes_, n_samples_seen_, n_features_in_
        As for every aucstream learner.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream import OnlinePAUC
    >>> from aucstream.metrics import roc_auc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 5)); y = X[:, 0] + 0.5 * rng.normal(size=3000) > 1.5
    >>> model = OnlinePAUC(max_fpr=0.05, random_state=0).fit(X, y)
    >>> round(roc_auc(y, model.decision_function(X), max_fpr=0.05), 1) >= 0.8
    True
    """

    param_grid = {"eta": [0.01, 0.03, 0.1, 0.3, 1.0], "max_fpr": [0.01, 0.05, 0.1]}
    _tags = LearnerTags(dense_kernels=True, kernel_prequential=True)
    _state_spec = StateSpec(nbytes=_state_nbytes, read_only=_read_only)
    _parameter_constraints = {
        "max_fpr": [_fraction(True)],
        "min_tpr": [_fraction(False), None],
        "eta": [positive()],
        "buffer_size": [positive_int()],
        "average_decay": [Interval(Integral, 0, MAX_AVERAGE_DECAY, closed="both")],
        **PASS_ORDER,
    }

    def __init__(
        self,
        max_fpr: float = 0.05,
        min_tpr: float | None = None,
        eta: float = 0.1,
        buffer_size: int = 300,
        average_decay: int = 0,
        shuffle: bool = False,
        random_state: RandomState = None,
    ):
        self.max_fpr = max_fpr
        self.min_tpr = min_tpr
        self.eta = eta
        self.buffer_size = buffer_size
        self.average_decay = average_decay
        self.shuffle = shuffle
        self.random_state = random_state

    @classmethod
    def _race_settings(cls, max_fpr: float) -> list[dict]:
        """The settings with which ``OnePassSearch(max_fpr=...)`` races this learner
        (:func:`aucstream._pauc_race.pauc_candidates`): the defaults at ``max_fpr``,
        and a slower learner (a third of the default ``eta``) of twice the region (at
        most 1), which selects its hard negatives among more of them. One pass with
        each, behind the online scaler (``benchmarks/bench_pauc.py``'s streams): the
        second was the higher at FPR <= 0.05 on five of the six, ijcnn1 excepted.

        Both score with the polynomial-decay average of ``RACE_AVERAGE_DECAY`` (module
        docstring, step 4); see that constant for what was measured."""
        eta, decay = cls().eta, RACE_AVERAGE_DECAY
        return [
            {"max_fpr": max_fpr, "average_decay": decay},
            {"max_fpr": min(1.0, 2.0 * max_fpr), "eta": eta / 3.0, "average_decay": decay},
        ]

    def _init_state(self, n_features: int) -> None:
        self.w_ = np.zeros(n_features)
        self.grad_sq_ = np.zeros(n_features)
        self.steps_ = np.zeros(n_features)
        self.quantiles_ = np.zeros(4)
        self.class_counts_ = np.zeros(2, dtype=np.int64)
        self.buffers_ = [
            Reservoir(n_features, self.buffer_size),
            Reservoir(n_features, self.buffer_size),
        ]

    def _update(self, chunk: Chunk) -> None:
        uniforms = self._rng.random(chunk.n_samples)
        neg, pos = ((b.items_, b.sq_norms_, b.counts_, b.capacity_code) for b in self.buffers_)
        two_way = self.min_tpr is not None
        _pauc_chunk(
            self.w_,
            self.grad_sq_,
            self.steps_,
            self.quantiles_,
            self.class_counts_,
            neg,
            pos,
            rows_of(chunk),
            chunk.pre_scores,
            uniforms,
            float(self.max_fpr),
            1.0 - float(self.min_tpr) if self.min_tpr is not None else 1.0,
            float(self.eta),
            two_way,
            int(self.average_decay),
        )

    def _merge(self, other: OnlinePAUC) -> None:
        """Module docstring, "Merging": the counts and AdaGrad's sums add exactly, the
        buffers merge into uniform samples of the union of both streams of hard
        examples (:meth:`Reservoir.merge`), the last iterates, the averages of the
        iterates and each class's quantile tracker combine by examples seen (of the
        class, for the trackers)."""
        t_a, t_b = float(self.class_counts_.sum()), float(other.class_counts_.sum())
        if t_b == 0:
            return
        if t_a == 0:  # nothing learnt here: take the other's state as it is
            self.w_[:] = other.w_
            self.steps_[:] = other.steps_
            self.quantiles_[:] = other.quantiles_
        else:
            average = mean_by_count(self._coef(), t_a, other._coef(), t_b)
            self.w_ = mean_by_count(self.w_, t_a, other.w_, t_b)
            # U such that ((A + 1) w - U) / A is the merged average, A of t_a + t_b
            total = averaging_total(t_a + t_b, int(self.average_decay))
            self.steps_ = (total + 1.0) * self.w_ - total * average
            for q, sc, c in ((_QN, _SN, 0), (_QP, _SP, 1)):
                n_a, n_b = self.class_counts_[c], other.class_counts_[c]
                if n_b == 0:
                    continue
                if n_a == 0:
                    self.quantiles_[[q, sc]] = other.quantiles_[[q, sc]]
                else:
                    both = mean_by_count(self.quantiles_, n_a, other.quantiles_, n_b)
                    self.quantiles_[[q, sc]] = both[[q, sc]]
        self.grad_sq_ += other.grad_sq_
        for mine, theirs in zip(self.buffers_, other.buffers_):
            mine.merge(theirs, self._rng)
        self.class_counts_ += other.class_counts_

    def _coef(self) -> np.ndarray:
        t = float(self.class_counts_.sum())
        if t == 0:
            return np.zeros_like(self.w_)
        total = averaging_total(t, int(self.average_decay))
        return ((total + 1.0) * self.w_ - self.steps_) / total

    def _check_state(self) -> None:
        if (self.class_counts_ < 0).any() or self.class_counts_.sum() != self.n_samples_seen_:
            raise ValueError(
                f"class_counts_ {self.class_counts_.tolist()} do not add up to the "
                f"{self.n_samples_seen_} examples seen"
            )
        if (self.grad_sq_ < 0).any():
            raise ValueError("grad_sq_ holds negative sums of squares")
        for label, buffer, seen in zip(("negative", "positive"), self.buffers_, self.class_counts_):
            if buffer.n_features != self.n_features_in_ or buffer.capacity != self.buffer_size:
                raise ValueError(
                    f"the {label} buffer holds {buffer.n_features} features and capacity "
                    f"{buffer.capacity}, not {self.n_features_in_} and {self.buffer_size}"
                )
            if buffer.n_seen > seen:
                raise ValueError(
                    f"the {label} buffer was offered {buffer.n_seen} examples, more than "
                    f"the {int(seen)} seen"
                )
