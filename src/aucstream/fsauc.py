r"""FSAUC: fast stochastic AUC maximization by multi-stage primal-dual steps.

Liu, Zhang, Chen, Wang and Yang, *Fast Stochastic AUC Maximization with
O(1/n)-Convergence Rate* (ICML 2018, "L18", Algs. 1-3, Lemma 1). Where the text
of L18 is ambiguous about a constant, the constants below are those of the authors'
code, which agrees with the formulas of Alg. 1 and Lemma 1.

Problem
-------
The saddle function F of SOLAM (:mod:`aucstream.solam`, L18 §3.1) over
:math:`\Omega_1 = \{\|w\|_1 \le R, |a| \le R\kappa, |b| \le R\kappa\}` and
:math:`\Omega_2 = \{|\alpha| \le 2R\kappa\}` (L18 Eq. 2), with the unknown
:math:`p = \Pr(y=1)` replaced by the running estimate :math:`\hat p` (L18 Alg. 3).
``constraint="l2"`` uses :math:`\|w\|_2 \le R` instead.

Schedule (L18 Alg. 1, line 1)
-----------------------------
For a stream of n examples, known in advance: :math:`m = \max(1, \lfloor\frac12
\log_2(2n/\log_2 n)\rfloor - 1)` stages of :math:`n_0 = \lfloor n/m \rfloor` examples
(:func:`fsauc_schedule`), :math:`R_0 = 2\sqrt{1+2\kappa^2}R`,
:math:`\beta_0 = 1+8\kappa^2`, :math:`D_0 = 2\sqrt2\kappa R_0`, and step sizes
:math:`\eta_k = \sqrt{\beta_{k-1}}R_{k-1}/(\sqrt{3n_0}G)` (line 4). As in L18 §5 the
step :math:`\eta_1` is tuned directly, which fixes G; then
:math:`\eta_k = \min(\eta_{k-1}\cdot\frac12\sqrt{\beta_{k-1}/\beta_{k-2}},\ \eta_{k-1})`
(the ratio of line 4, with the authors' ``min`` guard). Stage k runs
PDSG(:math:`v_{k-1}, \alpha_{k-1}, R_{k-1}, D_{k-1}, n_0, \eta_k`) from
:math:`v_0 = 0, \alpha_0 = 0`.

PDSG (L18 Alg. 2), for each example of a stage started at :math:`(v_1, \alpha_1)`
---------------------------------------------------------------------------------
(a) update :math:`T_\pm`, :math:`A_\pm = \sum_{y=\pm1} x` and :math:`\hat p =
T_+/(T_+ + T_-)` (Alg. 3); (b) take the gradients of F at :math:`(v, \alpha)`;
(c) :math:`v' = v - \eta\nabla_v`, :math:`\alpha' = \alpha + \eta\nabla_\alpha`;
(d) project :math:`v'` onto :math:`\Omega_1 \cap B(v_1, r)` (line 5): w onto the l1
ball, a and b onto their boxes, then the result onto the l2 ball
:math:`B(v_1, r)` in :math:`\mathbb R^{d+2}` (one round of alternating projections,
as in the authors' code: both points lie in the convex :math:`\Omega_1`, so the
result is feasible); (e) :math:`\alpha = \mathrm{clip}(\alpha', \max(-2R\kappa, \alpha_1 - D),
\min(2R\kappa, \alpha_1 + D))` (line 6, exact); (f) add the updated v to a running
sum. At the end of the stage (lines 8-10): :math:`\bar v = \sum v / n_0`,
:math:`\hat\alpha = \bar w^\top(A_-/T_- - A_+/T_+)` (the dual initialization from
the class means; a class never seen has mean 0), :math:`r \leftarrow r/2`, and with
:math:`\xi = \min(\hat p, 1-\hat p)`, :math:`L = \ln(12/\delta)`,
:math:`c_\delta = 2 + \sqrt{2L}` (Lemma 1)

.. math::

    D = 2\sqrt2\kappa r + \frac{4\sqrt2\kappa c_\delta (1+2\kappa) R}
        {\sqrt{\xi n_0 - \sqrt{2 n_0 L}}}, \qquad
    \beta = 1 + 8\kappa^2 + \frac{32\kappa^2(1+2\kappa)^2c_\delta^2}
        {\xi - \sqrt{2L/n_0}},

each set to :math:`10^7` when its denominator is not positive (authors' code).
The output is :math:`\bar v_m` and the score is :math:`\bar w_m^\top x`.

The stream length
-----------------
The schedule needs n. ``fit`` uses ``n_samples`` if given, else ``X.shape[0]``;
``partial_fit`` uses ``n_samples``. Examples beyond the first :math:`m n_0` (the
:math:`n - m n_0 < m` left over by the rounding, and any examples past the announced
n) are dropped with ``leftover="drop"`` (faithful: Alg. 1 uses :math:`m n_0`
examples; a warning is given when the stream runs past n) or join the last stage,
with its step size, radius and running average, with ``leftover="last_stage"``.
When a stream ends early, the model is the running average of the current stage
(the previous stage's output if the current stage has no example yet): Alg. 2
line 8 over the examples seen. Without ``n_samples``, ``partial_fit`` warns and runs
the whole stream as one stage (m = 1, step :math:`\eta_1`, radius :math:`R_0`).

Cost per example: sparse bookkeeping
------------------------------------
The kernel keeps :math:`w = \tau v_1 + \sigma u` (:math:`v_1` fixed during a stage),
the running sum as :math:`(\sum\tau) v_1` plus the lazy sum of the :math:`\sigma u`
(``avg_base_ + c u - avg_corr_``, :mod:`aucstream._kernels`), and
:math:`\|u\|_2^2`, :math:`u^\top v_1`, :math:`\|u\|_1` up to date from the changed
entries. The gradient step changes the k non-zeros of x; the l2-ball projection and
the step back into :math:`B(v_1, r)` are affine maps that only change
:math:`(\sigma, \tau)`. So ``constraint="l2"`` costs O(k) per example. For the l1
ball, :math:`\tau\|v_1\|_1 + \sigma\|u\|_1 \le R` (all coefficients stay positive)
certifies feasibility in O(1); otherwise the exact norm and, if needed, the
projection cost O(d). The representation is rebased (O(d)) after an l1 projection,
when :math:`\sigma < 10^{-4}` (which bounds the cancellation in the lazy sum), every
65536 examples of a stage and at each stage end; these rules depend only on the
stream, so any chunking gives bit-identical models. The projection's passes are
those of SOLAM-l1 (:func:`aucstream._saddle.project_l1_lazy`), started from
:math:`\|w\|_1` and the number of non-zeros of w as the steps since the last
projection changed them (kept within a chunk of sparse rows, O(k) per step); the
threshold does not depend on that start. A lazy threshold is not
possible here: the step back into :math:`B(v_1, r)` is an affine map around
:math:`v_1`, which does not commute with soft-thresholding. Dense rows are read in
place, their products summed in any order (``fastmath`` reassociation,
:data:`aucstream._kernels.REASSOC`): a change by rounding only.

Forgetting (``half_life``, a library addition for streams that change)
---------------------------------------------------------------------
L18 assumes one stationary distribution: :math:`\hat p` and the class means count
the whole stream, each stage halves the radius and shrinks the step, and the stage's
output averages all its iterates. With :math:`h` = ``half_life`` and
:math:`\lambda = 2^{-1/h}` (:func:`aucstream._params.decay_per_example`), example t
(weight :math:`\omega_t`, :math:`\lambda_t = \lambda^{\omega_t}`) does instead

.. math::

    W^\pm \leftarrow \lambda_t W^\pm,\quad A_\pm \leftarrow \lambda_t A_\pm,
    \quad (W^{y_t}, A_{y_t}) \mathrel{+}= (\omega_t, \omega_t x_t), \qquad
    S \leftarrow \lambda_t S + v_t,\quad G \leftarrow \lambda_t G + 1,

with the stage output :math:`S/G` (S, G restart at each stage as the sum of
iterates and their count do), and the stage constants :math:`(\eta, r, D, \beta)`
stop shrinking at the first stage end with :math:`t \ge h`: the next stages keep
the step and radius of the stage that held example h, so the learner keeps moving.
The sums are kept inflated by :math:`\phi_t = \prod_{s \le t} \lambda_s^{-1}`
(``forget_[0]``; the stage's inflated :math:`G` is ``forget_[1]``), so that shrinking
them costs O(1); at the next fold after :math:`\phi > 2^{512}` (or at any fold once
:math:`\phi > 2^{256}`) they are divided by
:math:`\phi` (a rule of the stream only: chunking gives bit-identical models). One
example shrinks the past by at least :math:`2^{-64}`. For an unbounded stream use
``leftover="last_stage"`` (or ``partial_fit`` without ``n_samples``: one open stage):
with ``leftover="drop"`` learning still stops after the announced n. ``None`` (the
default) is Algs. 1-3 exactly, bit for bit.

Example weights, prequential scores, merging
--------------------------------------------
An example of weight :math:`\omega` counts :math:`\omega` times in Alg. 3's
statistics (:math:`\hat p = W_+/(W_+ + W_-)` with the class weight totals, class
sums :math:`A_\pm = \sum \omega x` and class means :math:`A_\pm / W_\pm`) and takes
the step :math:`\omega\eta_k` in v and :math:`\alpha`; the schedule (stage lengths)
and the stage average count examples. Weight 0 leaves the learner untouched,
counters and stage progress included (``fit`` without ``n_samples`` still plans for
all its rows, weight 0 or not: pass ``n_samples`` to plan for the others only); with
all weights 1 this is Algs. 1-3 bit for bit. Each example's score under the current
output is written before the example is learnt (``test_then_train``).
:meth:`FSAUC._merge` defines merging (only at the same stage of the same schedule).

Columns in their running scale (``column_scale``, a library default)
--------------------------------------------------------------------
L18's constants are set for rows of norm at most :math:`\kappa` (1 by default): the
radii :math:`R_0 = 2\sqrt{1+2\kappa^2}R` and :math:`D_0` (Alg. 1 line 1), the boxes
of a, b and :math:`\alpha` (Eq. 2) and Lemma 1's D and :math:`\beta`. On raw
columns (sensor readings in the thousands next to rates in [0, 1]) the steps in w are
far too long along the large columns and the boxes far too small for
:math:`w^\top x`, and FSAUC at its defaults ranks no better than chance. So by default
(``column_scale="max_abs"``) each column is learnt in its running scale,
:math:`\tilde x_i = x_i / \max_{t' \le t}|x_{t',i}|` (the running maximum of the
normalized updates of Ross, Mineiro and Langford, UAI 2013), with Algs. 1-3 unchanged
on :math:`\tilde x` (the class sums :math:`A_\pm` included), and the output is
:math:`\bar w_i / s_i` on the raw columns (:mod:`aucstream._running_scale`: the scale
an example's columns reach joins before its step, after its prequential score).
``column_scale=None`` is Algs. 1-3 exactly (the paper's setting, rows scaled
beforehand, as the reproduction harness passes it). A file saved before the
parameter existed loads with ``column_scale=None``, the updates it was learnt with.

Deviations and choices
----------------------
* ``column_scale="max_abs"`` (the default) learns in each column's running scale
  (section above); ``None`` is L18's Algs. 1-3.
* :math:`\kappa` is a parameter (default 1, right for l2-normalized rows), not
  computed from the training set as the largest norm, so that ``partial_fit`` needs
  no pass over the data.
* Accumulators :math:`A_\pm, T_\pm` are global by default, as the Remark after
  Thm. 1 and the authors' code use; ``accumulators="per_stage"`` resets them at each
  stage as Alg. 2, line 1 does for the analysis.
* The averaged iterate is the sum of the updated iterates (authors' code). The exact
  projection onto :math:`\Omega_1 \cap B(v_1, r)` (Dykstra) is not offered; one
  alternating round is used, which gives a feasible point.
* :math:`\hat\alpha` is clipped into :math:`\Omega_2` before it starts a stage; it
  lies there already when :math:`\|x\|_2 \le \kappa` holds.
* For n < 2 the schedule formula is undefined; one stage of n examples is used.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from . import _kernels as kern
from ._base import BaseStreamingAUC, ClassWeightTotals
from ._chunks import Chunk
from ._fsauc_kernels import (
    _A,
    _A1,
    _ALPHA,
    _ALPHA1,
    _B,
    _B1,
    _BETA,
    _C,
    _D,
    _DONE,
    _DOT_UV1,
    _ETA,
    _IN_STAGE,
    _N_SCALARS,
    _NRM1_U,
    _NRM1_V1,
    _NRM2_U,
    _NRM2_V1,
    _RADIUS,
    _SIGMA,
    _STAGE,
    _SUM_A,
    _SUM_B,
    _SUM_TAU,
    _T,
    _TAU,
    _TNEG,
    _TPOS,
    FsaucArrays,
    FsaucConfig,
    _end_stage,
    _fsauc_chunk,
    _stage_end_due,
)
from ._fsauc_kernels import INFLATION_MAX as _INFLATION_MAX
from ._kernels import LazySum, lazy_mean, rows_of
from ._kernels._lazy import DECAY_MIN
from ._params import (
    FORGETTING,
    PASS_ORDER,
    StrOptions,
    decay_per_example,
    positive,
    positive_int,
    unit_open,
)
from ._running_scale import coef_in_columns, merged_scale
from ._runtime import LearnerTags
from ._typing import RandomState
from ._warn import caller_stacklevel

__all__ = ["FSAUC", "fsauc_schedule"]


def fsauc_schedule(n: int) -> tuple[int, int]:
    """Number of stages m and stage length n0 for a stream of n examples (L18 Alg. 1).

    Parameters
    ----------
    n : int
        Stream length, at least 1.

    Returns
    -------
    m, n0 : int
        ``m = max(1, floor(log2(2 n / log2 n) / 2) - 1)`` and ``n0 = n // m``
        (m = 1 for n < 2, where the formula is undefined).

    Examples
    --------
    >>> from aucstream.fsauc import fsauc_schedule
    >>> fsauc_schedule(1000), fsauc_schedule(32561)
    ((2, 500), (5, 6512))
    """
    n = int(n)
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if n < 2:
        return 1, n
    m = max(1, math.floor(0.5 * math.log2(2.0 * n / math.log2(n))) - 1)
    return m, n // m


class FSAUC(ClassWeightTotals, BaseStreamingAUC):
    """Fast stochastic AUC maximization (FSAUC), multi-stage primal-dual SGD.

    See the module docstring for the algorithm (L18 Algs. 1-3, Lemma 1).
    Memory is O(d); the work per example is O(k) for k non-zeros except when the
    l1 projection is active (O(d)), plus O(d) once per stage.

    Parameters
    ----------
    R : float, default=1.0
        Radius of the constraint on w (boxes of radius R kappa for a, b and
        2 R kappa for alpha). Tuned over 10^[-1:5] in L18 §5. Library default.
    eta1 : float, default=0.1
        Step size of the first stage; tuned over 2^[-10:10] in L18 §5, which tunes
        eta1 in place of G. Library default (0.1 since ``column_scale``: on columns in
        their running scale the first stage's steps of 1 were too long on every raw
        stream of ``tests/test_raw_data.py``; a model file keeps the value it was
        saved with).
    n_samples : int or None, default=None
        Length n of the stream, which fixes the stage schedule. None: ``fit`` uses
        ``X.shape[0]`` and ``partial_fit`` warns and runs a single stage.
    kappa : float, default=1.0
        Bound on ||x||_2 (1 for l2-normalized rows, the papers' setting).
    constraint : {"l1", "l2"}, default="l1"
        Ball for w: ||w||_1 <= R (L18 Eq. 2) or ||w||_2 <= R.
    leftover : {"drop", "last_stage"}, default="drop"
        What happens to the examples after the first m * n0 (see the module
        docstring): ignored (faithful) or added to the last stage.
    accumulators : {"global", "per_stage"}, default="global"
        Class counts and sums over the whole stream (L18 Remark, authors' code) or
        reset at every stage (L18 Alg. 2, line 1).
    delta : float, default=0.1
        Confidence level in Lemma 1 (authors' code).
    shuffle : bool, default=False
        Whether ``fit`` visits the examples in a random order (still one pass).
    random_state : int, Generator or None, default=None
        Seed of the shuffle.
    half_life : float or None, default=None
        Forgetting (module docstring), in examples: the class statistics and the
        stage's average forget the past with this half-life, and the stages stop
        shrinking the step and radius once t >= half_life. None: L18 exactly.
    column_scale : {"max_abs"} or None, default="max_abs"
        ``"max_abs"``: learn each column in its running scale (the running maximum
        of its absolute values, module docstring "Columns in their running scale"),
        so that the defaults learn on raw, unscaled columns. None: the rows as they
        come, L18 exactly (the paper's setting, for rows scaled beforehand).

    Attributes
    ----------
    n_stages_, stage_length_ : int
        m and n0 of the schedule (``stage_length_ = -1``: one unbounded stage).
    n_announced_ : int
        The stream length the schedule was built for (-1 if unknown).
    u_, v1_, avg_base_, avg_corr_ : ndarray of shape (n_features,)
        Lazy form of the iterate ``w = tau v1 + sigma u`` and of the stage's sum of
        iterates; ``v1_`` is the stage's starting point (the previous output).
    acc_pos_, acc_neg_ : ndarray of shape (n_features,)
        Sums of the positive and negative examples (Alg. 3).
    scalars_ : ndarray of shape (21,)
        sigma, tau, sums, a, b, alpha, their stage starts, radius r, D, beta, eta,
        and the maintained norms.
    counts_ : ndarray of shape (6,)
        Examples used, stage index k, examples in the stage, T+, T-, finished flag
        (weight-0 examples do not count).
    weight_neg_, weight_pos_ : float
        Total weight of the examples counted in T- and T+, which p uses (equal to
        T- and T+ without sample weights; decayed under forgetting); set by the
        first learning call.
    forget_ : ndarray of shape (2,)
        The inflation phi of the sums under forgetting (1 without) and the stage's
        inflated sum of iterate weights (without forgetting: its examples).
    scale_ : ndarray of shape (n_features,)
        The running maximum of each column's absolute values (``column_scale=
        "max_abs"``; zeros otherwise).
    classes_, n_samples_seen_, n_features_in_
        As for every aucstream learner.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream import FSAUC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(1000, 5))
    >>> noise = 0.5 * rng.normal(size=1000)
    >>> y = np.where(X[:, 0] - X[:, 1] + noise > 0, 1, -1)
    >>> X = X / np.linalg.norm(X, axis=1, keepdims=True)  # rows of unit norm (kappa = 1)
    >>> model = FSAUC(R=10.0, eta1=0.5).fit(X, y)
    >>> model.n_stages_, model.stage_length_
    (2, 500)
    >>> model.score(X, y) > 0.85
    True
    """

    stream_length_param = "n_samples"
    _tags = LearnerTags(
        dense_kernels=True,
        kernel_prequential=True,
        sample_weight=True,
        update_draws=False,
        kernel_calibrates=True,
    )
    param_grid = {
        "R": [10.0**k for k in range(-1, 6)],
        "eta1": [2.0**k for k in range(-10, 11)],
    }

    def _class_counts(self) -> np.ndarray:
        return self.counts_[[_TNEG, _TPOS]]

    _parameter_constraints = {
        "R": [positive()],
        "eta1": [positive()],
        "n_samples": [positive_int(), None],
        "kappa": [positive()],
        "constraint": [StrOptions({"l1", "l2"})],
        "leftover": [StrOptions({"drop", "last_stage"})],
        "accumulators": [StrOptions({"global", "per_stage"})],
        "delta": [unit_open()],
        **PASS_ORDER,
        **FORGETTING,
        "column_scale": [StrOptions({"max_abs"}), None],
    }
    #: ``forget_`` came with forgetting; an older file (no forgetting) gets the fresh
    #: value. ``scale_`` came with ``column_scale``: an older file learnt the rows as
    #: they came, and keeps doing so (``_upgrades``).
    _state_added_later = (*ClassWeightTotals._state_added_later, "forget_", "scale_")
    _upgrades = {
        # a file written before forgetting: no inflation, and the stage's weight is
        # the number of its examples
        "forget_": {"forget_": lambda learner: np.array([1.0, float(learner.counts_[_IN_STAGE])])},
        "scale_": {"column_scale": None},  # saved before column_scale: the rows as they came
    }

    def __init__(
        self,
        R: float = 1.0,
        eta1: float = 0.1,
        n_samples: int | None = None,
        kappa: float = 1.0,
        constraint: str = "l1",
        leftover: str = "drop",
        accumulators: str = "global",
        delta: float = 0.1,
        shuffle: bool = False,
        random_state: RandomState = None,
        half_life: float | None = None,
        column_scale: str | None = "max_abs",
    ):
        self.R = R
        self.eta1 = eta1
        self.n_samples = n_samples
        self.kappa = kappa
        self.constraint = constraint
        self.leftover = leftover
        self.accumulators = accumulators
        self.delta = delta
        self.half_life = half_life
        self.shuffle = shuffle
        self.random_state = random_state
        self.column_scale = column_scale

    @classmethod
    def _unit_test_params(cls) -> dict:
        """Constructor arguments for the common checks (a 120-example stream)."""
        return {"n_samples": 120, "leftover": "last_stage"}

    def _init_state(self, n_features: int) -> None:
        n = self.n_samples
        if n is None:  # fit announces the length in _begin_pass; partial_fit cannot
            self.n_stages_, self.stage_length_, self.n_announced_ = 1, -1, -1
        else:
            self.n_stages_, self.stage_length_ = fsauc_schedule(n)
            self.n_announced_ = int(n)
        R, kappa = float(self.R), float(self.kappa)
        r0 = 2.0 * math.sqrt(1.0 + 2.0 * kappa**2) * R
        self.u_ = np.zeros(n_features)
        self.v1_ = np.zeros(n_features)
        self.avg_base_ = np.zeros(n_features)
        self.avg_corr_ = np.zeros(n_features)
        self.acc_pos_ = np.zeros(n_features)
        self.acc_neg_ = np.zeros(n_features)
        s = np.zeros(_N_SCALARS)
        s[_SIGMA] = s[_TAU] = 1.0
        s[_RADIUS] = r0
        s[_D] = 2.0 * math.sqrt(2.0) * kappa * r0
        s[_BETA] = 1.0 + 8.0 * kappa**2
        s[_ETA] = float(self.eta1)
        self.scalars_ = s
        self.counts_ = np.zeros(6, dtype=np.int64)
        self.counts_[_STAGE] = 1
        self.forget_ = np.array([1.0, 0.0])
        self.scale_ = np.zeros(n_features)
        kern.start_class_totals(self)

    def _begin_pass(self, y_pm: np.ndarray) -> None:
        """``fit`` knows the stream length: n is ``n_samples`` or ``len(y)``."""
        if self.n_samples is None:
            self.n_stages_, self.stage_length_ = fsauc_schedule(y_pm.shape[0])
            self.n_announced_ = int(y_pm.shape[0])

    def _bind_update(self, chunk: Chunk, reuse: bool = False):
        """The kernel's call with its arguments made once (every array is written in
        place); see :meth:`BaseStreamingAUC._bind_update`. The schedule
        (``n_stages_``, ``stage_length_``: Python ints of the state, in the kernel's
        configuration) is read at each call, and the call bound again if it changed."""
        work = np.empty(4 * self.u_.shape[0])
        totals = np.zeros(2)
        args = (
            self._arrays(),
            self.scalars_,
            self.counts_,
            totals,
            rows_of(chunk),
            chunk.pre_scores,
            chunk.sample_weight,
        )
        config, calibration = self._config(), self.calibration_
        columns = (self.scale_, np.empty(self.u_.shape[0]))
        bound = [
            config,
            kern.bound_call(_fsauc_chunk, *args, config, work, calibration, *columns, reuse=reuse),
        ]

        def update(learner: FSAUC) -> None:
            seen, announced = learner.n_samples_seen_, learner.n_announced_
            if announced < 0 and seen == 0:
                warnings.warn(
                    "FSAUC needs the stream length to set its stage schedule; pass "
                    "n_samples=... to use partial_fit. Running the stream as a single stage.",
                    UserWarning,
                    stacklevel=caller_stacklevel(),
                )
            config = bound[0]
            if learner.n_stages_ != config.n_stages or learner.stage_length_ != config.n0:
                config = config._replace(n_stages=learner.n_stages_, n0=learner.stage_length_)
                bound[:] = (
                    config,
                    kern.bound_call(
                        _fsauc_chunk, *args, config, work, calibration, *columns, reuse=reuse
                    ),
                )
            kern.class_totals(learner, totals)
            dropped = bound[1]()
            kern.store_class_totals(learner, totals)
            if dropped and seen <= announced < seen + chunk.n_samples:
                warnings.warn(
                    f"the stream is longer than the announced n_samples={announced}; "
                    "FSAUC's schedule is complete and further examples are ignored "
                    "(leftover='drop'). Use leftover='last_stage' to keep learning.",
                    UserWarning,
                    stacklevel=caller_stacklevel(),
                )

        return update

    def _config(self) -> FsaucConfig:
        return FsaucConfig(
            float(self.R),
            float(self.kappa),
            float(self.delta),
            self.n_stages_,
            self.stage_length_,
            self.constraint == "l1",
            self.leftover == "last_stage",
            self.accumulators == "per_stage",
            decay_per_example(self.half_life),
            0.0 if self.half_life is None else float(self.half_life),
            self.column_scale == "max_abs",
        )

    def _arrays(self) -> FsaucArrays:
        lz = LazySum(self.u_, self.avg_base_, self.avg_corr_)
        return FsaucArrays(lz, self.v1_, self.acc_pos_, self.acc_neg_, self.forget_)

    def _stage_weight(self) -> float:
        """What the stage's sums are divided by: the inflated sum of its iterates'
        weights (its examples without forgetting)."""
        return float(self.forget_[1])

    def _coef(self) -> np.ndarray:
        """The output in the units of the raw columns."""
        coef = self._scaled_coef()
        return coef_in_columns(coef, self.scale_) if self.column_scale == "max_abs" else coef

    def _scaled_coef(self) -> np.ndarray:
        """The output in the units the iterates learn in."""
        count = int(self.counts_[_IN_STAGE])
        if count == 0 or self.counts_[_DONE]:
            return self.v1_.copy()
        out = np.empty_like(self.u_)
        s = self.scalars_
        lazy_mean(self._arrays().lz, s[_C], self.v1_, s[_SUM_TAU], self._stage_weight(), out)
        return out

    def _iterate(self) -> tuple[np.ndarray, float, float, float]:
        """The current (not averaged) iterate (w, a, b, alpha)."""
        s = self.scalars_
        w = s[_TAU] * self.v1_ + s[_SIGMA] * self.u_
        return w, float(s[_A]), float(s[_B]), float(s[_ALPHA])

    def _stage_state(self) -> dict:
        """Stage index, examples in it, and the stage's v1, alpha1, r, D, eta."""
        s = self.scalars_
        return {
            "stage": int(self.counts_[_STAGE]),
            "in_stage": int(self.counts_[_IN_STAGE]),
            "done": bool(self.counts_[_DONE]),
            "v1": self.v1_.copy(),
            "a1": float(s[_A1]),
            "b1": float(s[_B1]),
            "alpha1": float(s[_ALPHA1]),
            "radius": float(s[_RADIUS]),
            "D": float(s[_D]),
            "eta": float(s[_ETA]),
            "beta": float(s[_BETA]),
        }

    def _check_state(self) -> None:
        for name in ("n_announced_", "n_stages_", "stage_length_"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} = {value!r} is not an integer")
        n = self.n_announced_
        if n != -1 and n < 1:
            raise ValueError(f"n_announced_ = {n} is not a stream length")
        schedule = (1, -1) if n == -1 else fsauc_schedule(n)
        if (self.n_stages_, self.stage_length_) != schedule:
            raise ValueError(
                f"n_stages_, stage_length_ = {self.n_stages_}, {self.stage_length_} are not "
                f"the schedule {schedule} of n_announced_ = {n}"
            )
        if self.n_samples is not None and n != self.n_samples:
            raise ValueError(f"n_announced_ = {n} differs from n_samples = {self.n_samples}")
        used, stage, in_stage, tpos, tneg, done = (int(c) for c in self.counts_)
        open_stage = self.stage_length_ < 0 or (
            stage == self.n_stages_ and self.leftover == "last_stage"
        )
        problems = [
            (not 0 <= used <= self.n_samples_seen_, "examples used"),
            (not 1 <= stage <= self.n_stages_, "stage index"),
            (done not in (0, 1) or (done and (stage != self.n_stages_ or in_stage)), "flag"),
            (min(tpos, tneg) < 0 or tpos + tneg > used, "class counts"),
            (in_stage < 0 or in_stage > used, "examples in the stage"),
            (not open_stage and in_stage >= self.stage_length_, "examples in the stage"),
        ]
        for bad, what in problems:
            if bad:
                raise ValueError(f"counts_ {self.counts_.tolist()}: inconsistent {what}")
        sc = self.scalars_
        if not kern.AVERAGE_SCALE_MIN <= sc[_SIGMA] <= kern.SCALE_MAX:
            raise ValueError(f"scalars_[0] (sigma) = {sc[_SIGMA]!r} is outside its range")
        if min(sc[_RADIUS], sc[_D], sc[_BETA], sc[_ETA]) <= 0.0:
            raise ValueError("scalars_: the stage's radius, D, beta and eta must be positive")
        if min(sc[_NRM2_U], sc[_NRM1_U], sc[_NRM2_V1], sc[_NRM1_V1]) < 0.0:
            raise ValueError("scalars_ holds a negative norm")
        kern.check_class_totals(self, self._class_counts())
        phi, weight = (float(v) for v in self.forget_)
        if not (1.0 <= phi <= _INFLATION_MAX / DECAY_MIN and weight >= 0.0) or (
            (weight > 0.0) != (in_stage > 0)
        ):
            raise ValueError(f"forget_ {self.forget_.tolist()} does not fit the stage")

    def _merge(self, other: FSAUC) -> None:
        r"""Combine two FSAUC learners at the same stage of the same schedule.

        Stages are the unit of FSAUC: both learners must follow the same schedule
        (``n_announced_``, ``n_stages_``, ``stage_length_``) and be in the same stage
        k (or both finished); otherwise the merge is refused. With :math:`n_1, n_2`
        the examples each has used:

        * what is summed over examples adds: the class sums :math:`A_\pm`, the
          counts :math:`T_\pm` and their weights, the examples of the stage and the
          stage's running sums of iterates, so the stage's average becomes the
          average over the examples of both learners in the stage;
        * what is a point becomes :math:`(n_1 v_1 + n_2 v_2)/(n_1 + n_2)`: the current
          iterate :math:`(w, a, b, \alpha)`, the stage's start
          :math:`(v_1, a_1, b_1, \alpha_1)` and its constants :math:`(r, D, \beta,
          \eta)` (r is the same for both). The averaged iterate lies in
          :math:`\Omega_1 \cap B(v_1, r)` of the averaged start, and
          :math:`\alpha` in its interval, because each one did.

        If the merged stage holds its n0 examples or more, it ends as after its last
        example (Alg. 2 lines 8-10, Alg. 1 lines 4-5).

        With ``column_scale="max_abs"`` the running scales merge into their maximum,
        and both sides are first put in its units (weights times a column's old scale
        over the new one, class sums of scaled values the inverse), which keeps each
        side's model on the raw columns; a point so rescaled may leave its ball,
        which the next step's projection (d) corrects.
        """
        schedule = (self.n_announced_, self.n_stages_, self.stage_length_)
        theirs = (other.n_announced_, other.n_stages_, other.stage_length_)
        if schedule != theirs:
            raise ValueError(
                f"cannot merge FSAUCs with different schedules (n, m, n0): {schedule} and "
                f"{theirs}; announce the same n_samples to both"
            )
        stage = (int(self.counts_[_STAGE]), int(self.counts_[_DONE]))
        if stage != (int(other.counts_[_STAGE]), int(other.counts_[_DONE])):
            raise ValueError(
                "cannot merge FSAUCs in different stages: stage "
                f"{self.counts_[_STAGE]} (finished: {bool(self.counts_[_DONE])}) and "
                f"{other.counts_[_STAGE]} (finished: {bool(other.counts_[_DONE])})"
            )
        n1, n2 = int(self.counts_[_T]), int(other.counts_[_T])
        if n2 == 0:
            return
        if n1 == 0:
            n1, n2 = 0, 1  # self has used nothing: take the other's points
        scale = merged_scale(self.scale_, other.scale_)
        f1, f2 = self._rescaling(scale), other._rescaling(scale)
        own_points, their_points = self._points(f1), other._points(f2)
        merged = {k: kern.mean_by_count(own_points[k], n1, their_points[k], n2) for k in own_points}
        totals = kern.class_totals(self) + kern.class_totals(other)
        stage_sum = self._stage_sum() * f1 + other._stage_sum() * f2
        phi1, phi2 = self.forget_[0], other.forget_[0]  # (1 without forgetting)
        sums_ab = self.scalars_[[_SUM_A, _SUM_B]] / phi1 + other.scalars_[[_SUM_A, _SUM_B]] / phi2
        forget = np.array([1.0, self.forget_[1] / phi1 + other.forget_[1] / phi2])
        counts = self.counts_.copy()
        for k in (_T, _IN_STAGE, _TPOS, _TNEG):
            counts[k] += other.counts_[k]
        # the class sums of scaled values, in the merged scale (x / s: the inverse
        # factor of the weights')
        g1, g2 = _inverse(f1), _inverse(f2)
        self.acc_pos_ = self.acc_pos_ * g1 / phi1 + other.acc_pos_ * g2 / phi2
        self.acc_neg_ = self.acc_neg_ * g1 / phi1 + other.acc_neg_ * g2 / phi2
        self.scale_ = scale
        self.forget_ = forget
        self.v1_ = merged["v1"]
        self.u_ = merged["w"] - merged["v1"]
        self.avg_base_ = stage_sum
        self.avg_corr_ = np.zeros_like(self.u_)
        sc = np.zeros(_N_SCALARS)
        sc[_SIGMA] = sc[_TAU] = 1.0
        sc[[_A, _B, _ALPHA, _A1, _B1, _ALPHA1]] = merged["scalars"]
        sc[[_RADIUS, _D, _BETA, _ETA]] = merged["constants"]
        sc[[_SUM_A, _SUM_B]] = sums_ab
        sc[_NRM2_U], sc[_DOT_UV1] = self.u_ @ self.u_, self.u_ @ self.v1_
        sc[_NRM1_U] = np.abs(self.u_).sum()
        sc[_NRM2_V1], sc[_NRM1_V1] = self.v1_ @ self.v1_, np.abs(self.v1_).sum()
        self.scalars_ = sc
        self.counts_ = counts
        cfg = self._config()
        end, start_next = _stage_end_due(counts, cfg)
        if end:
            _end_stage(
                self._arrays(), sc, counts, totals, cfg, start_next, np.empty(self.u_.shape[0])
            )
        kern.store_class_totals(self, totals)

    def _rescaling(self, scale: np.ndarray) -> np.ndarray:
        """Per column, the factor that puts this learner's weights in the units of the
        running ``scale`` of a merge (1 without ``column_scale``; 0 for a column this
        learner has not seen, whose weights are 0)."""
        if self.column_scale != "max_abs":
            return np.ones_like(scale)
        old = self.scale_
        return np.divide(scale, old, out=np.zeros_like(old), where=old > 0.0)

    def _points(self, factor: np.ndarray) -> dict[str, np.ndarray]:
        """The current iterate, the stage start and the stage constants (to average),
        the points in the units of a merge (``factor``: :meth:`_rescaling`)."""
        sc = self.scalars_
        w, a, b, alpha = self._iterate()
        return {
            "w": w * factor,
            "v1": self.v1_ * factor,
            "scalars": np.array([a, b, alpha, sc[_A1], sc[_B1], sc[_ALPHA1]]),
            "constants": sc[[_RADIUS, _D, _BETA, _ETA]],
        }

    def _stage_sum(self) -> np.ndarray:
        """The stage's sum of iterates (0 when the stage has no example yet; under
        forgetting, the decayed sum, without its inflation)."""
        used = int(self.counts_[_IN_STAGE])
        if used == 0 or self.counts_[_DONE]:
            return np.zeros_like(self.u_)
        return self._stage_weight() / self.forget_[0] * self._scaled_coef()


def _inverse(factor: np.ndarray) -> np.ndarray:
    """1 / factor, 0 where it is 0 (columns a learner has not seen: their sums are 0)."""
    return np.divide(1.0, factor, out=np.zeros_like(factor), where=factor > 0.0)
