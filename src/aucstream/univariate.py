r"""Online univariate baselines: Uni-Exp, Uni-Log and Uni-Squ.

The online univariate baselines of the OPAUC and AdaOAM experiments (G13 §6.1;
G16 §7.1; D16 §5.1, after Kotlowski, Dembczynski and Hüllermeier 2011).
Instead of a pairwise loss they minimize a class-weighted univariate margin loss,
one example at a time, by plain stochastic gradient descent:

.. math::

    \min_{w, b}\; \frac{\lambda}{2}\|w\|^2 + \frac1n \sum_i \rho_{y_i}\,
        \ell\big(y_i (w^\top x_i + b)\big),

with :math:`\ell(z) = e^{-z}` ("exp"), :math:`\log(1 + e^{-z})` ("log") or
:math:`(1 - z)^2` ("squ"). The class-prior ("balanced") weights
:math:`\rho_\pm = n / (2 n_\pm)` make the loss a consistent surrogate of the AUC
(Kotlowski et al. 2011): the positive:negative weight ratio is :math:`n_-/n_+`, the
"class ratios" of G13 §6.1.

For example :math:`(x_t, y_t)`, with :math:`z = y_t(w^\top x_t + b)`:

1. increment the count :math:`T^{y_t}_t` of class :math:`y_t`;
2. :math:`\rho_t = t / (2 T^{y_t}_t)` from the running counts (``weights="running"``),
   or :math:`n / (2 n_{y_t})` from the counts of the whole training set
   (``weights="prior"``);
3. :math:`w \leftarrow (1 - \eta\lambda) w - \eta \rho_t \ell'(z) y_t x_t` and
   :math:`b \leftarrow b - \eta \rho_t \ell'(z) y_t` (the intercept is not
   regularized), with :math:`\ell'(z) = -e^{-z}`, :math:`-1/(1 + e^{z})` and
   :math:`-2(1 - z)`.

Example weights (``sample_weight``)
-----------------------------------
An example of weight :math:`\omega` enters the objective as :math:`\omega` copies of
itself to first order: its class weight uses the weighted class totals (step 1 adds
:math:`\omega` to :math:`W^{y_t}` and to :math:`W`, and :math:`\rho_t = W / (2
W^{y_t})`), the shrinkage is :math:`(1 - \eta\lambda)^\omega` (exactly
:math:`\omega` shrinks, always positive) and the gradient step is scaled by
:math:`\omega`. Weight 0 leaves the learner untouched, counters included. With all
weights 1 this is the update above, bit for bit. ``weights="prior"`` takes no
sample weights (its class weights are fixed before the pass from unweighted counts).

Forgetting (``half_life``, a library addition for streams that change)
-----------------------------------------------------------------------
The step size is constant, so SGD already follows a changing stream; what it
accumulates are the class weight totals behind the running class weights. With
:math:`h` = ``half_life`` and :math:`\gamma = 2^{-1/h}`
(:func:`aucstream._params.decay_per_example`), an example of weight :math:`\omega`
of class :math:`y_t` updates them as

.. math::

    W^{\pm} \leftarrow \gamma^{\omega} W^{\pm}, \qquad
    W^{y_t} \leftarrow W^{y_t} + \omega, \qquad
    \rho_t = \frac{W^- + W^+}{2 W^{y_t}},

so :math:`W^\pm = \sum_s \omega_s \gamma^{\Omega_t - \Omega_s}[y_s = \pm]` (with
:math:`\Omega_t` the weight seen up to t): the class ratio of the last few
half-lives, which follows a change of the class prior. A total that is positive stays
at least the smallest normal float (a class seen long ago still counts as seen).
``None`` (the default) is the update above exactly. The prior weights
(``weights="prior"``) and ``"none"`` are fixed, and forgetting leaves them so. The
weights themselves are forgotten by the L2 term: the shrink :math:`1 - \eta\lambda`
per example gives a step a half-life of :math:`\ln 2 / (\eta\lambda)` examples
(to first order); with ``lam=0`` a changed concept is followed at the pace of
:math:`\eta`.

Merging
-------
:meth:`merge` averages :math:`(w, b)` of the two learners weighted by the examples
each has seen, and adds their class counts and class weight totals.

Dense rows are read in place; their products are summed in any order (``fastmath``
reassociation, :data:`aucstream._kernels.REASSOC`), which changes results by
rounding only.

Implementation: the weights are stored as :math:`w = a\,v` with a scalar :math:`a`, so
the shrinkage by :math:`1 - \eta\lambda` costs O(1) and an example with k non-zeros
costs O(k) (:math:`a` is folded back into :math:`v`, at O(d), when it leaves
[1e-9, 1e9], the range of :mod:`aucstream._kernels`). For "exp", z is clipped at -50
before exponentiating, so the step stays finite (:math:`e^{50} \approx 5\cdot
10^{21}`); "log" uses an overflow-free form.

Deviations and choices
----------------------
- The papers name the losses only; the class weights, the intercept (on by default)
  and the optional L2 term are this library's choices (the class weights are those
  of Kotlowski et al. 2011, under which the loss is an AUC-consistent surrogate).
  ``weights="none"`` (all weights 1) is a library addition.
- ``weights="prior"`` needs the class counts of the whole training set before the
  pass, so it is available in ``fit`` only: the rows of a ``fit`` are learnt, any
  other call (``partial_fit``) raises.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numpy.typing import ArrayLike

from ._base import BaseStreamingAUC, ClassWeightTotals
from ._calibration import step as calibration_step
from ._chunks import Chunk
from ._dict_scoring import weights_begin, weights_end
from ._fastpath import BLOCK_START, BLOCK_WIDTH, block_call, floats_at, ints_at
from ._kernels import (
    REASSOC,
    SCALE_MIN,
    Rows,
    bound_call,
    check_class_totals,
    class_totals,
    fold_scale,
    jit,
    mean_by_count,
    n_rows,
    prefetch_row_of,
    row,
    rows_of,
    scale_in_range,
    sparse_axpy,
    sparse_dot,
    start_class_totals,
    store_class_totals,
)
from ._kernels._lazy import decay_factor, decay_totals
from ._kernels._packed import (
    TOTALS,
    f64,
    i64,
    packed_call,
    read_only,
    real,
    totals_in,
    totals_out,
    totals_update,
)
from ._params import (
    FORGETTING,
    PASS_ORDER,
    InvalidParameterError,
    StrOptions,
    decay_per_example,
    non_negative,
    positive,
)
from ._runtime import LearnerTags, StateSpec
from ._typing import RandomState

__all__ = ["UnivariateOnline", "univariate_loss"]

_LOSSES = {"exp": 0, "log": 1, "squ": 2}
_WEIGHTS = {"running": 0, "prior": 1, "none": 2}
_EXP_CLIP = -50.0


@jit(fastmath=REASSOC)
def _loss_derivative(code, z):
    """l'(z) of the margin loss ``code`` (0 exp, 1 log, 2 squ), overflow-free."""
    if code == 0:
        return -math.exp(-max(z, _EXP_CLIP))
    if code == 1:
        if z >= 0.0:
            e = math.exp(-z)
            return -e / (1.0 + e)
        return -1.0 / (1.0 + math.exp(z))
    return -2.0 * (1.0 - z)


@jit
def _loss_value(code, z):
    if code == 0:
        return math.exp(-z)
    if code == 1:
        if z >= 0.0:
            return math.log1p(math.exp(-z))
        return -z + math.log1p(math.exp(z))
    return (1.0 - z) * (1.0 - z)


#: The constants of one run: loss and weight codes, step size, L2 weight, intercept?,
#: and the prior class weights (used with ``weights="prior"``).
UniConfig = namedtuple(
    "UniConfig", ["loss", "eta", "lam", "fit_intercept", "weights", "prior", "decay"]
)


@jit(fastmath=REASSOC)
def _class_weight(totals, cls, cfg):
    """rho_t of the example's class: running (W / (2 W_y)), prior, or 1."""
    if cfg.weights == 0:
        return (totals[0] + totals[1]) / (2.0 * totals[cls])
    if cfg.weights == 1:
        return cfg.prior[cls]
    return 1.0


@jit(inline="always")
def _weights_into(v, scale, b, out):
    """``scale[0] * v`` and ``b[0]`` into ``out`` (the weights and intercept, bit for
    bit as ``_coef()`` and ``_intercept()``: :func:`_bound_weights`);
    False, nothing written, when the arrays do not fit."""
    d = v.shape[0]
    if out.shape[0] != d + 1 or scale.shape[0] < 1 or b.shape[0] < 1:
        return False
    s = scale[0]
    for j in range(d):
        out[j] = s * v[j]
    out[d] = b[0]
    return True


@jit
def _weights_at(at, keep, members):
    """:func:`_weights_into` of the arrays of the block at ``at``
    (:func:`aucstream._fastpath.block_call`): 1 when written, 0 when not; with a
    scorer's block at ``keep`` (0: none), fused with its keeping of the weights
    (as ``aucstream._solam_weights._averaged_coef_at``)."""
    if keep != 0 and not weights_begin(keep, members):
        return -2
    a, s = ints_at(at, BLOCK_WIDTH), BLOCK_START
    written = _weights_into(
        floats_at(a[s], a[s + 1]),
        floats_at(a[s + 2], a[s + 3]),
        floats_at(a[s + 4], a[s + 5]),
        floats_at(a[s + 6], a[s + 7]),
    )
    if keep != 0:
        return weights_end(keep, members, written)
    return 1 if written else 0


def _bound_weights(learner: UnivariateOnline, out: np.ndarray) -> tuple:
    """The weights of ``learner`` bound to ``out`` (``StateSpec.weights``; a function
    that also keeps a scorer's weights, ``keeps``)."""
    fill = block_call(_weights_at, learner.v_, learner.scale_, learner.b_, out, late=(0, 0))

    def fill_weights(learner: UnivariateOnline, keep: int = 0, members: int = 0):
        done = fill(keep, members)
        return done if keep else done > 0

    fill_weights.keeps = True  # type: ignore[attr-defined]
    return fill_weights, ("v_", "scale_", "b_")


# no reference counting: the kernel allocates nothing (see aucstream._kernels)
@jit(fastmath=REASSOC, borrowing=True)
def _univariate_chunk(v, scale, b, counts, totals, rows, pre, weights, cfg, calibration):
    """Class-weighted SGD over a chunk with w = scale * v (module docstring).

    ``counts`` are the examples learnt per class, ``totals`` their weights. With
    prequential scores, each one also fits the ``calibration``
    (:func:`aucstream._calibration.step`).
    """
    scores = pre.shape[0] == n_rows(rows)
    weighted = weights.shape[0] > 0
    shrink = 1.0 - cfg.eta * cfg.lam
    for r in range(n_rows(rows)):
        idx, val, y = row(rows, r)
        prefetch_row_of(v, rows, r + 1)  # (the next example's, when v is large)
        s = scale[0] * sparse_dot(v, idx, val) + b[0]
        if scores:
            pre[r] = s
        weight = weights[r] if weighted else 1.0
        if scores:
            calibration_step(calibration, s, y, weight)
        if weight == 0.0:
            continue
        cls = 1 if y > 0 else 0
        counts[cls] += 1
        if cfg.decay < 1.0:  # forgetting: the past weighs decay ** weight less
            decay_totals(totals, decay_factor(cfg.decay, weight))
        totals[cls] += weight
        rho = _class_weight(totals, cls, cfg)
        step = cfg.eta * weight * rho * _loss_derivative(cfg.loss, y * s) * y
        if cfg.lam > 0.0:  # omega repetitions of the shrink: (1 - eta lam)^omega > 0
            scale[0] *= shrink if weight == 1.0 else shrink**weight
            if not scale_in_range(scale[0]):
                scale[0] = fold_scale(v, scale[0])
        sparse_axpy(v, -(step / scale[0]), idx, val)  # w <- shrink w - step x
        if cfg.fit_intercept:
            b[0] -= step


def univariate_loss(z: ArrayLike, loss: str = "log", derivative: bool = False) -> np.ndarray:
    r"""The margin losses of the univariate baselines and their derivatives.

    Parameters
    ----------
    z : array-like
        Margins :math:`y (w^\top x + b)`.
    loss : {"exp", "log", "squ"}
        :math:`e^{-z}`, :math:`\log(1 + e^{-z})` or :math:`(1 - z)^2`.
    derivative : bool, default=False
        Return :math:`\ell'(z)` (as the learner uses it: for "exp", z is clipped at
        -50 first) instead of :math:`\ell(z)`.

    Returns
    -------
    ndarray
        Values of the same shape as ``z``.

    Examples
    --------
    >>> from aucstream.univariate import univariate_loss
    >>> univariate_loss([0.0, 1.0], "squ").tolist()
    [1.0, 0.0]
    >>> univariate_loss([0.0], "log", derivative=True).tolist()
    [-0.5]
    """
    if loss not in _LOSSES:
        raise ValueError(f"loss must be 'exp', 'log' or 'squ', got {loss!r}")
    z = np.asarray(z, dtype=np.float64)
    fn = _loss_derivative if derivative else _loss_value
    code = _LOSSES[loss]
    return np.array([fn(code, float(v)) for v in z.ravel()]).reshape(z.shape)


#: The layout :func:`_univariate_packed` reads (:func:`aucstream._kernels._packed.pack`
#: of :func:`_univariate_chunk`'s arguments for CSR rows).
_PACKED = "f1 f1 f1 i1 f1 i1r i1r f1r f1 f1 f1 n d d b n f1 d f1 n n n n"


@jit
def _univariate_packed(at, members):
    """:func:`_univariate_chunk` of its arguments packed at address ``at`` (layout
    :data:`_PACKED`, then :data:`aucstream._kernels._packed.TOTALS`), the class
    totals read from and kept in the learner's ``__dict__`` at address ``members``:
    the one-row path's call, which unboxes two integers
    (:mod:`aucstream._kernels._packed`). 0; -1, nothing done, when the totals are
    not plain floats; -2 when they could not be kept (out of memory)."""
    a = ints_at(at, 36)
    totals = f64(a, 8)
    if not totals_in(a, 32, members, totals):
        return -1
    _univariate_chunk(
        f64(a, 0),
        f64(a, 2),
        f64(a, 4),
        i64(a, 6),
        f64(a, 8),
        Rows(read_only(i64(a, 10)), read_only(i64(a, 12)), read_only(f64(a, 14)), f64(a, 16)),
        f64(a, 18),
        f64(a, 20),
        UniConfig(a[22], real(a, 23), real(a, 24), a[25] != 0, a[26], f64(a, 27), real(a, 29)),
        f64(a, 30),
    )
    return 0 if totals_out(a, 32, members, totals) else -2


class UnivariateOnline(ClassWeightTotals, BaseStreamingAUC):
    r"""Online univariate AUC baseline (Uni-Exp / Uni-Log / Uni-Squ), class-weighted SGD.

    See the module docstring for the update. Each example costs O(k) for k non-zeros
    (the L2 shrinkage is a scalar factor); memory is O(d).

    Parameters
    ----------
    loss : {"exp", "log", "squ"}, default="log"
        The margin loss: Uni-Exp, Uni-Log or Uni-Squ.
    eta : float, default=2**-6
        Constant step size; tuned over 2^[-12:10] (G13 §6.1; G16 §7.1). The default
        is a library choice (Uni-Squ and Uni-Exp need smaller steps on unnormalized
        data: the step must stay below about 1 / (rho ||x||^2) for "squ").
    fit_intercept : bool, default=True
        Whether to learn an (unregularized) intercept b.
    weights : {"running", "prior", "none"}, default="running"
        Class weights :math:`\rho_\pm`: from running class counts (one pass), from
        the class counts of the whole training set (``fit`` only), or all ones.
    lam : float, default=0.0
        L2 regularization lambda (the papers use none); ``eta * lam`` must be < 1.
    shuffle : bool, default=False
        Whether ``fit`` visits the examples in a random order (one pass still).
    random_state : int, Generator or None, default=None
        Seed of the shuffle.
    half_life : float or None, default=None
        Forgetting (module docstring): the class weight totals behind the running
        class weights shrink by :math:`\gamma = 2^{-1/h}` per example, so that
        :math:`\rho_t` follows the recent class ratio. None: running totals of the
        whole stream. Acts on ``weights="running"`` only.

    Attributes
    ----------
    v_ : ndarray of shape (n_features,)
        Unscaled weights; ``coef_ = scale_[0] * v_``.
    scale_ : ndarray of shape (1,)
        The scalar factor of the weights.
    b_ : ndarray of shape (1,)
        Intercept (also ``intercept_``).
    class_counts_ : ndarray of shape (2,), int64
        Examples learnt per class (negative, positive); weight-0 examples do not count.
    weight_neg_, weight_pos_ : float
        Sum of the weights of the examples learnt per class (the counts when no
        weights were given); set by the first learning call.
    prior_weights_ : ndarray of shape (2,)
        :math:`\rho_-, \rho_+` used with ``weights="prior"`` (ones otherwise).
    classes_, n_samples_seen_, n_features_in_
        As for every aucstream learner.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.univariate import UnivariateOnline
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 5))
    >>> y = np.where(X @ [1.0, -1.0, 0.5, 0.0, 0.0] + 0.5 * rng.normal(size=400) > 1, 1, 0)
    >>> model = UnivariateOnline(loss="log", eta=0.1).fit(X[:300], y[:300])
    >>> bool(model.score(X[300:], y[300:]) > 0.9)
    True
    """

    param_grid = {"eta": [2.0**k for k in range(-12, 11)]}
    _tags = LearnerTags(
        dense_kernels=True,
        kernel_prequential=True,
        sample_weight=True,
        update_draws=False,
        kernel_calibrates=True,
    )
    _state_spec = StateSpec(weights=_bound_weights)

    def _class_counts(self) -> np.ndarray:
        return self.class_counts_

    _parameter_constraints = {
        "loss": [StrOptions(set(_LOSSES))],
        "eta": [positive()],
        "fit_intercept": ["boolean"],
        "weights": [StrOptions(set(_WEIGHTS))],
        "lam": [non_negative()],
        **PASS_ORDER,
        **FORGETTING,
    }

    def __init__(
        self,
        loss: str = "log",
        eta: float = 2**-6,
        fit_intercept: bool = True,
        weights: str = "running",
        lam: float = 0.0,
        shuffle: bool = False,
        random_state: RandomState = None,
        half_life: float | None = None,
    ):
        self.loss = loss
        self.eta = eta
        self.fit_intercept = fit_intercept
        self.weights = weights
        self.lam = lam
        self.half_life = half_life
        self.shuffle = shuffle
        self.random_state = random_state

    def _check_params(self) -> None:
        if self.eta * self.lam >= 1.0:
            raise InvalidParameterError(
                f"The parameters 'eta' and 'lam' of {type(self).__name__} must satisfy "
                f"eta * lam < 1 (the shrink factor 1 - eta * lam), got {self.eta * self.lam}."
            )

    def _init_state(self, n_features: int) -> None:
        self.v_ = np.zeros(n_features)
        self.scale_ = np.ones(1)
        self.b_ = np.zeros(1)
        self.class_counts_ = np.zeros(2, dtype=np.int64)
        self.prior_weights_ = np.ones(2)
        self._prior_rows = 0
        start_class_totals(self)

    def _begin_pass(self, y_pm: np.ndarray) -> None:
        """With ``weights="prior"``, the class weights n/(2 n_-), n/(2 n_+) of the pass."""
        if self.weights == "prior":
            n_pos = int(np.count_nonzero(y_pm > 0))
            n_neg = y_pm.size - n_pos
            self.prior_weights_ = np.array([y_pm.size / (2.0 * n_neg), y_pm.size / (2.0 * n_pos)])
            self._prior_rows = y_pm.size  # the rows of this fit that the priors describe

    def _check_prior_rows(self, chunk: Chunk) -> None:
        """``weights="prior"`` learns only the rows of the ``fit`` that counted them."""
        if chunk.sample_weight.shape[0]:
            raise ValueError(
                "weights='prior' computes the class weights from the unweighted class counts "
                "before the pass; with sample_weight use weights='running'"
            )
        if chunk.n_samples > getattr(self, "_prior_rows", 0):
            raise ValueError(
                "weights='prior' needs the class counts of the whole training set before "
                "the pass; use fit, or weights='running' for a stream"
            )
        self._prior_rows -= chunk.n_samples

    def _bind_update(self, chunk: Chunk, reuse: bool = False):
        prior = self.weights == "prior"
        cfg = UniConfig(
            _LOSSES[self.loss],
            float(self.eta),
            float(self.lam),
            bool(self.fit_intercept),
            _WEIGHTS[self.weights],
            self.prior_weights_,
            decay_per_example(self.half_life),
        )
        totals = np.zeros(2)
        args = (
            self.v_,
            self.scale_,
            self.b_,
            self.class_counts_,
            totals,
            rows_of(chunk),
            chunk.pre_scores,
            chunk.sample_weight,
            cfg,
            self.calibration_,
        )
        # a call made many times (the one-row path): its arguments packed, when they
        # fit the layout of the packed call (CSR rows), else bound
        packed = None
        if reuse:
            packed = packed_call(_univariate_packed, _PACKED, *args, TOTALS, late=(0,))
        run = bound_call(_univariate_chunk, *args, reuse=reuse)

        step = totals_update(packed, run, totals, "UnivariateOnline")
        if not prior:
            return step

        def update(learner: UnivariateOnline) -> None:
            learner._check_prior_rows(chunk)
            step(learner)

        return update

    def _coef(self) -> np.ndarray:
        return self.scale_[0] * self.v_

    def _intercept(self) -> float:
        return float(self.b_[0])

    def _check_state(self) -> None:
        counts = self.class_counts_
        if counts.min() < 0 or counts.sum() > self.n_samples_seen_:
            raise ValueError(
                f"class_counts_ {counts.tolist()} are not counts of the "
                f"{self.n_samples_seen_} examples seen"
            )
        if not SCALE_MIN <= self.scale_[0] <= 1.0:
            raise ValueError(f"scale_ {self.scale_[0]!r} is outside [{SCALE_MIN}, 1]")
        if not np.all(self.prior_weights_ > 0):
            raise ValueError(f"prior_weights_ {self.prior_weights_.tolist()} are not positive")
        check_class_totals(self, counts)

    def _merge(self, other: UnivariateOnline) -> None:
        """Weights and intercept average by examples seen; class counts and weights add.

        With ``weights="prior"`` the class weights become n / (2 n_y) of the summed
        class counts.
        """
        n1, n2 = self.n_samples_seen_, other.n_samples_seen_
        self.v_ = mean_by_count(self._coef(), n1, other._coef(), n2)
        self.scale_ = np.ones(1)
        self.b_ = mean_by_count(self.b_, n1, other.b_, n2)
        totals = class_totals(self) + class_totals(other)
        store_class_totals(self, totals)
        self.class_counts_ = self.class_counts_ + other.class_counts_
        if self.weights == "prior" and self.class_counts_.min() > 0:
            self.prior_weights_ = self.class_counts_.sum() / (2.0 * self.class_counts_)
