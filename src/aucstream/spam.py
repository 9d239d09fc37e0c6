r"""SPAM: stochastic proximal AUC maximization with l1 / elastic-net / l2 penalties.

Natole, Ying and Lyu, *Stochastic Proximal Algorithms for AUC Maximization* (ICML
2018, PMLR 80:3710-3719, "NYL"), run online as Zhou, Ying and Skiena (ICDM 2020,
"ZYS") run it, with the lazy O(k) class scores of ZYS.

Objective and step
------------------
NYL minimize :math:`\mathbb E[F(w, a(w), b(w), \alpha(w); z)] + \Omega(w)` with the
square-loss AUC saddle function F (the form in :mod:`aucstream.ftrl`) and a penalty
that may be non-smooth,

.. math::

    \Omega(w) = \lambda_1 \|w\|_1 + \tfrac{\lambda_2}{2}\|w\|_2^2

(``l1`` > 0, ``l2`` = 0: the l1 penalty; both > 0: the elastic net; ``l1`` = 0: l2
only). Per example (the authors' MATLAB code, ``fnEP_SPAM_NET.m``):

1. the partial gradient of F in w at the current :math:`a, b`: a multiple of
   :math:`x_t`, :math:`g_t = 2(1-p)(s_t - b - 1)x_t` for a positive and
   :math:`2p(s_t - a + 1)x_t` for a negative, :math:`s_t = w^\top x_t`;
2. :math:`u = w - \eta_t g_t`, :math:`\eta_t = \eta_0/\sqrt t`;
3. the proximal step of :math:`\eta_t\Omega`, coordinate-wise:
   :math:`w_i = \operatorname{sign}(u_i)\max(0, |u_i| - \eta_t\lambda_1)/(1 +
   \eta_t\lambda_2)`.

Lazy O(k) proximal steps
------------------------
The gradient touches the k non-zeros of :math:`x_t`, but the proximal step moves
every coordinate. On a coordinate the steps do not touch, :math:`m = |w_i|` follows
:math:`m_s = d_s\max(0, m_{s-1} - c_s)` with :math:`d_s = 1/(1 + \eta_s\lambda_2)`,
:math:`c_s = \eta_s\lambda_1`. With :math:`A_t = \prod_{s\le t} d_s` and
:math:`B_t = \sum_{s\le t} c_s/A_{s-1}`, dividing by :math:`A_s` gives
:math:`m_s/A_s = m_{s-1}/A_{s-1} - c_s/A_{s-1}` while positive, and 0 is absorbing,
so

.. math::

    |w_i(t)| = A_t \max\bigl(0,\; |v_i| - B_t\bigr), \qquad
    v_i = \operatorname{sign}(w_i)\bigl(|w_i(t_0)|/A_{t_0} + B_{t_0}\bigr),

for a coordinate last touched at :math:`t_0` (that is, :math:`|w_i(t)| =
\max(0, (A_t/A_{t_0})|w_i(t_0)| - A_t(B_t - B_{t_0}))`): one array :math:`v`
(0 for a zero weight) and two scalars A, B hold the eagerly proximal
model exactly, up to rounding. A step reads and rewrites only the k touched
:math:`v_i` (bring them to :math:`t-1`, score, gradient step, proximal step of
step t, store), and updates A and B in O(1): O(k) per example, O(d) memory. B grows
and A shrinks (with :math:`\lambda_2 > 0`) along the stream; before a step at which
:math:`A < 10^{-100}` or :math:`B > 10^{6}` the form is folded (every :math:`v_i`
rewritten from the current weights, A = 1, B = 0; O(d)), which bounds both the
underflow of A and the cancellation in :math:`v_i - B`. The rule depends only on
the stream, so any chunking gives the same model bit for bit.

Per-coordinate steps (``step="coordinate"``, the default)
---------------------------------------------------------
NYL's step :math:`\eta_t = \eta_0/\sqrt t` is one for all coordinates. On a sparse
stream a feature seen in a few examples among millions then gets only late, small
steps. With ``step="coordinate"`` coordinate i steps with

.. math::

    \eta_{t,i} = \eta_0/\sqrt{n_i(t)},

:math:`n_i(t)` the number of examples up to t whose value there is not 0: the
per-coordinate rates of FTRL-Proximal (McMahan et al., KDD 2013, §3.1), counted in
examples. On rows without zeros every :math:`n_i(t) = t` and this is NYL's step; a
coordinate never seen keeps its 0. Its proximal step at every example uses its own
:math:`e_i = \eta_0/\sqrt{n_i}`, which does not change until it is touched again, so
k steps without a gradient compose in closed form: with :math:`q = 1/(1 + e_i\lambda_2)`,

.. math::

    |w_i| \leftarrow \max\Bigl(0,\; q^k |w_i| - \tfrac{\lambda_1}{\lambda_2}(1 - q^k)\Bigr)
    \quad (\lambda_2 > 0), \qquad
    |w_i| \leftarrow \max(0,\; |w_i| - k e_i\lambda_1) \quad (\lambda_2 = 0),

(the sign kept; :math:`q^k` and :math:`1 - q^k` through ``exp`` and ``expm1`` of
:math:`-k\log(1 + e_i\lambda_2)`). ``v_`` then holds each weight as of its last step
and ``rates_`` (d x 3) the steps it took, the example of the last one and
:math:`e_i`, kept so that bringing a weight forward takes no square root (without
:math:`\lambda_2`, one branch-free line); a step brings each touched weight to the
previous example by the formula, scores, steps. O(k) a step, no fold; five floats
a feature (``v_``, ``rates_``, ``scale_``) against NYL's two.
Measured (``docs/results/highdim_bench.md``, the SPAM section): on the generated
wide stream of ``benchmarks/bench_highdim.py`` (10^6 columns, 50 values a row) test AUC
0.819 at the defaults against 0.760 for NYL's step at its former default
:math:`\eta_0 = 2`; on w8a (unit rows) 0.884 / 0.970 (file order / shuffled) against
0.852 / 0.946; a9a 0.900 / 0.899 against 0.900 / 0.899; ijcnn1 0.918 / 0.914 against
0.909 / 0.917; raw Shuttle (River) 0.863 against 0.827.

Deviations
----------
* **Per-coordinate steps** by default (above); ``step="global"`` is NYL's
  :math:`\eta_t`, with the lazy form A, B.
* **Online.** NYL's code computes p and the class means :math:`\bar x_\pm` on the
  whole training set first; ZYS ran SPAM online with running p and class means.
  Here p is the positive rate of the previous examples (1/2 at the first) and
  :math:`a, b` are the running mean scores :math:`\hat a, \hat b` of ZYS's lazy
  update (the scores the examples of each class got when they arrived) instead of
  :math:`w^\top\bar x_\pm`, which would cost O(d) a step. The gradient is the one
  of :func:`aucstream.ftrl.auc_gradient_scale`.
* **Last iterate.** NYL's code outputs the average :math:`\bar w_t` of the
  iterates; the model here is the last iterate. The average of sparse iterates is
  not sparse (a coordinate is non-zero in it once it was in any iterate), which
  defeats the l1 penalty, and the lazy average of the composed proximal steps has no
  closed form as simple as the one above.
* **Step size** (``step="global"``) :math:`\eta_t = \eta_0/\sqrt t` as in NYL's
  code (t counts the examples learnt); NYL's demos use :math:`\eta_0 \in \{1,
  100\}` for 15 passes of small data. The default :math:`\eta_0 = 1` is the one of
  per-coordinate steps (above: 2 gave the wide stream 0.832 but raw Shuttle 0.649).
  NYL's step's former defaults, :math:`\eta_0 = 2`, :math:`\lambda_1 = 10^{-5}`,
  :math:`\lambda_2 = 0`, were chosen from a small grid (:math:`\eta_0 \in \{0.1,
  \dots, 30\}`, :math:`\lambda_1 \in \{0, 10^{-5}, \dots, 10^{-3}\}`) on the
  generated sparse unit-norm stream of ``benchmarks/bench_highdim.py`` and checked on
  a9a and w8a with unit rows (``docs/results/highdim_bench.md``). A single
  :math:`\eta_t` for all coordinates is a compromise on wide streams: a feature seen
  rarely gets small late steps, which wants a large :math:`\eta_0`, while denser
  streams (w8a) prefer :math:`\eta_0 \approx 2`; FTRL-AUC's per-coordinate rates
  did not show this trade-off on the same streams. The grid chose 4; the default
  is 2 since the running column scale (``column_scale``), the compromise with raw
  dense columns: measured (docs/results/raw_data.md), :math:`\eta_0` = 4 / 2 / 1
  gave prequential AUC 0.600 / 0.827 / 0.944 on River's raw Shuttle and 0.771 /
  0.755 / 0.738 on the generated wide stream (30,000 rows, d = 10^5).
* **Rows of norm above 1.** NYL (and ZYS) assume :math:`\|x_t\|_2 \le 1` (their
  demos normalize the rows). A gradient step on the square loss diverges when
  :math:`\eta_t\|x_t\|^2` is large, so the gradient of a row with
  :math:`\|x_t\|_2 > 1` is divided by :math:`\|x_t\|_2^2` (the example's loss
  weighs :math:`1/\|x_t\|^2`); on rows of norm at most 1, the papers' setting,
  nothing changes.
* **Columns in their running scale** (``column_scale``, a library option; the
  default "max_abs_1"). One step size for all coordinates assumes columns of one scale
  (NYL normalize their rows): on raw columns (readings in the thousands next to
  rates in [0, 1]) the large columns swamp the scores and the small ones are not
  learnt. So by default the learner runs the steps above on :math:`\tilde x_i =
  x_i/s_i`, :math:`s_i` the running maximum of the column's :math:`|x|` (Ross,
  Mineiro and Langford, *Normalized Online Learning*, UAI 2013;
  :mod:`aucstream._running_scale`), as :mod:`aucstream.ftrl` does: the lazy form
  holds the weights :math:`\tilde w` of the scaled columns (kept when a scale
  grows), the prequential score uses the scale before the row, the step (its score,
  gradient and row norm) the scale with it, and ``coef_`` is :math:`\tilde w_i/s_i`.
  O(k) still (a scale is touched in the row's non-zeros only). As for FTRL-AUC the
  default "max_abs_1" divides by :math:`\max(1, s_i)`: rows inside the unit box
  (NYL's unit-norm rows) are learnt as they come, bit for bit, and only columns
  beyond [-1, 1] are scaled ("max_abs", the plain maximum, measured 0.754 against
  0.771 on the generated wide stream, both at :math:`\eta_0 = 4`); as there, only
  the maxima above 1 are kept, and a call within the unit box reads no scale.
  ``column_scale=None`` is the update above on the rows as they come; a file saved
  before the parameter existed loads with None.
* Example weights are not supported (refused with an error).
* :meth:`SPAM._merge` averages the two models' weights and class scores by their
  example counts and adds the counts (as :class:`aucstream.solam.SOLAM` does); this is
  not NYL's and has no guarantee beyond being a point between the two models.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._base import BaseStreamingAUC
from ._calibration import step as calibration_step
from ._chunks import Chunk
from ._kernels import bound_call, col, jit, n_rows, prefetch_row_of, row, rows_of
from ._kernels._saves import NO_SAVES, keep_row, save_row, start_saves
from ._params import PASS_ORDER, StrOptions, non_negative, positive
from ._running_scale import grow_scale
from ._runtime import LearnerTags, StateSpec
from ._typing import RandomState
from .ftrl import (
    _ROW_LOG_MIN,
    ROW_COPY,
    SparseScaled,
    auc_gradient_scale,
    held_term,
    observe_score,
    row_room,
    scaled_score,
    self_saved,
    weight_in_column,
)

__all__ = ["SPAM", "lazy_prox_weights"]


#: No saved rows of ``v_`` and of ``rates_``.
_NO_V, _NO_RATES = np.zeros(0), np.zeros((0, 3))

# indices into scalars_: running mean scores of positives and negatives, then A and B
_AHAT, _BHAT, _A, _B = 0, 1, 2, 3

#: Fold before a step when A has fallen below this (underflow) ...
A_MIN = 1e-100
#: ... or B has grown beyond this (cancellation in v - B).
B_MAX = 1e6


@jit(inline="always")
def _current(v, A, B):
    """The weight held lazily by ``v`` under the scalars A, B (module docstring)."""
    m = abs(v) - B
    if m <= 0.0:
        return 0.0
    return A * m if v > 0.0 else -A * m


@jit(borrowing=True)
def _fold(v, scal):
    """Rewrite every v_i from its current weight and set A = 1, B = 0 (O(d))."""
    A, B = scal[_A], scal[_B]
    for i in range(v.shape[0]):
        v[i] = _current(v[i], A, B)
    scal[_A] = 1.0
    scal[_B] = 0.0


@jit(inline="always")
def _gradient(s, y, counts, scal, scale, floor, idx, val, work, xs):
    """After a row's prequential score ``s`` (its weights in ``work``, its values in
    the scale in ``xs``): the running ``scale`` grown by the row (the score taken
    again in the new scale when a column's divisor moved), and the multiple of the
    row that is the gradient, divided by the row's squared norm when above 1 (module
    docstring, deviations). Returns (the score the step takes, the multiple)."""
    if scale.shape[0] > 0 and grow_scale(scale, idx, val, floor):
        s = scaled_score(scale, floor, idx, val, work, xs)
    sq = 0.0
    for a in range(val.shape[0]):
        sq += xs[a] * xs[a]
    return s, auc_gradient_scale(s, y, counts, scal) / max(sq, 1.0)


@jit(borrowing=True)
def _spam_chunk(
    v, scal, counts, rows, pre, calibration, work, xs, eta0, l1, l2, a_min, b_max, scale, floor
):
    """SPAM over a chunk with lazy proximal steps (module docstring); the form is
    folded before a step when A < ``a_min`` or B > ``b_max``. A non-empty ``scale``
    is the running maximum of each column's |x|, grown by the row after its
    prequential score; the step then takes the row divided by it (at least
    ``floor``: module docstring). ``xs`` keeps the row's values in the scale the step
    takes (one division a value; computed again only when a column's divisor moved).
    Each prequential score fits the ``calibration`` as it is written
    (:func:`aucstream._calibration.step`). Returns whether every value it wrote to
    ``v`` is finite (``StateSpec.checked``: a
    fold writes weights no larger than the finite values it reads, the scale maxima
    of checked values)."""
    scores = pre.shape[0] == n_rows(rows)
    finite = True
    for r in range(n_rows(rows)):
        idx, val, y = row(rows, r)
        prefetch_row_of(v, rows, r + 1)  # (the next example's, when v is large)
        prefetch_row_of(scale, rows, r + 1)
        if scal[_A] < a_min or scal[_B] > b_max:
            _fold(v, scal)
        A, B = scal[_A], scal[_B]
        s = 0.0
        for a in range(val.shape[0]):
            i = col(idx, a)
            w = _current(v[i], A, B)
            s += held_term(w, scale, floor, i, val[a], a, work, xs)
        if scores:
            pre[r] = s
            calibration_step(calibration, s, y, 1.0)
        s, c = _gradient(s, y, counts, scal, scale, floor, idx, val, work, xs)
        eta = eta0 / np.sqrt(counts[0] + 1.0)
        shrink = eta * l1
        d = 1.0 / (1.0 + eta * l2)
        A_new = A * d
        B_new = B + shrink / A
        for a in range(val.shape[0]):
            u = work[a] - eta * c * xs[a]
            m = abs(u) - shrink
            if m <= 0.0:
                v[col(idx, a)] = 0.0
            else:
                stored = m * d / A_new + B_new
                v[col(idx, a)] = stored if u > 0.0 else -stored
                finite &= stored < np.inf  # (False for NaN)
        scal[_A] = A_new
        scal[_B] = B_new
        observe_score(s, y, counts, scal)
    return finite


def lazy_prox_weights(v: np.ndarray, A: float, B: float) -> np.ndarray:
    """The weights held by ``v`` under the scalars A, B (module docstring), for a whole
    array: the kernel's arithmetic, element by element."""
    m = np.abs(v) - B
    w = np.where(m > 0.0, A * m, 0.0)
    return np.where(v > 0.0, w, -w)


@jit(inline="always")
def _brought(w, e, k, l1, l2):
    """The weight ``w`` of a coordinate after ``k`` proximal steps of its own step
    size ``e`` and no gradient (module docstring, per-coordinate steps); ``e`` = 0
    (never stepped) and ``k`` = 0 keep ``w``. Without l2 one branch-free line."""
    if l2 == 0.0:
        return np.copysign(max(abs(w) - k * (e * l1), 0.0), w)
    if k <= 0.0 or e == 0.0:
        return w
    fall = np.log1p(e * l2)
    return np.copysign(max(np.exp(-k * fall) * abs(w) + (l1 / l2) * np.expm1(-k * fall), 0.0), w)


@jit(borrowing=True)
def _spam_coordinate_chunk(
    v,
    rates,
    scal,
    counts,
    rows,
    pre,
    calibration,
    work,
    xs,
    saves,
    saved_v,
    saved_rates,
    eta0,
    l1,
    l2,
    scale,
    floor,
):
    """SPAM over a chunk with per-coordinate step sizes (``step="coordinate"``, module
    docstring): ``v`` holds each weight as of its coordinate's last step, ``rates``
    its (steps taken, example of the last one, step size of the last one); a touched
    coordinate is first brought to the previous example by its proximal steps since
    (:func:`_brought`), then stepped with eta0 / sqrt(n_i). Values 0 touch nothing
    (dense = sparse). The running column ``scale`` and the ``calibration`` as
    :func:`_spam_chunk`.
    ``saves`` (:class:`~aucstream._kernels._saves.Saves`; ``marks`` empty: none), ``saved_v``
    and ``saved_rates``: the rows of ``v``, ``rates`` (and of a non-empty ``scale``)
    as they were before the call, each saved before its first write
    (``StateSpec.self_saved``). Returns whether every value it wrote to ``v`` is
    finite."""
    scores = pre.shape[0] == n_rows(rows)
    finite = True
    saving = start_saves(saves, scale)
    for r in range(n_rows(rows)):
        idx, val, y = row(rows, r)
        prefetch_row_of(v, rows, r + 1)  # (the next example's, when v is large)
        prefetch_row_of(rates, rows, r + 1)
        prefetch_row_of(scale, rows, r + 1)
        t = counts[0] + 1.0  # this example's step
        s = 0.0
        for a in range(val.shape[0]):
            i = col(idx, a)
            if saving:
                m = save_row(saves, scale, i)
                saved_v[m] = v[i]
                saved_rates[m, 0] = rates[i, 0]
                saved_rates[m, 1] = rates[i, 1]
                saved_rates[m, 2] = rates[i, 2]
                keep_row(saves, i, m)
            w = 0.0
            if val[a] != 0.0:
                w = _brought(v[i], rates[i, 2], t - 1.0 - rates[i, 1], l1, l2)
            s += held_term(w, scale, floor, i, val[a], a, work, xs)
        if scores:
            pre[r] = s
            calibration_step(calibration, s, y, 1.0)
        s, c = _gradient(s, y, counts, scal, scale, floor, idx, val, work, xs)
        for a in range(val.shape[0]):
            if val[a] == 0.0:
                continue
            i = col(idx, a)
            n = rates[i, 0] + 1.0
            e = eta0 / np.sqrt(n)
            u = work[a] - e * c * xs[a]
            m = max(abs(u) - e * l1, 0.0)
            if l2 != 0.0:  # (a division by 1 skipped: the same floats)
                m /= 1.0 + e * l2
            stored = np.copysign(m, u)
            finite &= abs(stored) < np.inf  # (False for NaN)
            v[i] = stored
            rates[i, 0] = n
            rates[i, 1] = t
            rates[i, 2] = e
        observe_score(s, y, counts, scal)
    return finite


def coordinate_weights(
    v: np.ndarray, rates: np.ndarray, steps: int, l1: float, l2: float
) -> np.ndarray:
    """The weights after ``steps`` examples of the per-coordinate form (``v``,
    ``rates``): :func:`_brought` element by element (its arithmetic)."""
    k, e = steps - rates[:, 1], rates[:, 2]
    if l2 == 0.0:
        return np.copysign(np.maximum(np.abs(v) - k * (e * l1), 0.0), v)
    fall = np.log1p(e * l2)
    w = np.copysign(
        np.maximum(np.exp(-k * fall) * np.abs(v) + (l1 / l2) * np.expm1(-k * fall), 0.0), v
    )
    return np.where((k <= 0.0) | (e == 0.0), v, w)


@jit
def _spam_weights_into(v, rates, scal, counts, scale, out, coordinate, scaled, floor, l1, l2):
    """``_coef()`` into ``out[:-1]`` and the intercept 0 into ``out[-1]``, bit for bit
    (:func:`coordinate_weights` without l2, or :func:`lazy_prox_weights`; in the
    columns' units with ``scaled``, as
    :func:`aucstream._running_scale.coef_in_columns`); False, nothing written, when
    the arrays do not fit, or with per-coordinate steps and l2 (whose exp and expm1
    ``_coef()`` takes from numpy)."""
    d = v.shape[0]
    if out.shape[0] != d + 1 or scale.shape[0] != d or counts.shape[0] < 1:
        return False
    if rates.shape[0] != (d if coordinate else 0) or (coordinate and l2 != 0.0):
        return False
    A, B, steps = scal[_A], scal[_B], counts[0]
    for j in range(d):
        vj = v[j]
        if coordinate:
            k = steps - rates[j, 1]
            c = np.copysign(max(abs(vj) - k * (rates[j, 2] * l1), 0.0), vj)
        else:
            m = abs(vj) - B
            c = A * m if m > 0.0 else 0.0
            if not vj > 0.0:
                c = -c
        out[j] = weight_in_column(c, scale, floor, j) if scaled else c
    out[d] = 0.0
    return True


def _bound_weights(learner: SPAM, out: np.ndarray) -> tuple:
    """The weights of ``learner`` bound to ``out`` (``StateSpec.weights``): its arrays
    bound once, the parameters read at each call."""
    arrays = (learner.v_, learner.rates_, learner.scalars_, learner.counts_, learner.scale_)
    late = (True, True, 1.0, 1.0, 1.0)
    run = bound_call(_spam_weights_into, *arrays, out, reuse=True, late=late)

    def fill(learner: SPAM) -> bool:
        scaled = learner.column_scale is not None
        coordinate = learner.step == "coordinate"
        return run(coordinate, scaled, learner._floor(), float(learner.l1), float(learner.l2))

    return fill, ("v_", "rates_", "scalars_", "counts_", "scale_")


def _logged(learner: SPAM) -> tuple:
    """``v_``, ``scale_`` and, with per-coordinate steps, ``rates_``: a call writes them
    in the rows of its examples' features only, unless it folds (``StateSpec.logged``),
    from ``log_from`` features on."""
    v = learner.__dict__.get("v_")
    if v is None or v.shape[0] < learner._state_spec.log_from:
        return ()
    if learner.rates_.shape[0]:
        return (v, learner.rates_, learner.scale_)
    return (v, learner.scale_)


def _no_fold_in(learner: SPAM, chunk: Chunk) -> bool:
    """Whether ``v_`` is written by rows: no fold can happen within ``chunk`` (A and B
    after its steps, computed from the step sizes with a margin of a factor 2, stay in
    range; per-coordinate steps never fold) and the chunk is small
    (``chunk.names_few(ROW_COPY)``); else a fold rewrites ``v_`` whole, or a large
    chunk is saved whole (``StateSpec.by_rows``)."""
    if not chunk.names_few(ROW_COPY):
        return False
    if learner.step == "coordinate":
        return True
    t = np.arange(learner.counts_[0] + 1, learner.counts_[0] + chunk.n_samples + 1, dtype=float)
    eta = float(learner.eta0) / np.sqrt(t)
    A, B = learner.scalars_[_A], learner.scalars_[_B]
    log_a = np.log(A) - np.log1p(eta * float(learner.l2)).sum()
    b_end = B + float(learner.l1) * eta.sum() / np.exp(log_a)
    return not (log_a < np.log(A_MIN) + np.log(2.0) or b_end > B_MAX / 2)


def _self_saved(learner: SPAM, chunk: Chunk) -> tuple:
    """:func:`~aucstream.ftrl.self_saved` with per-coordinate steps (NYL's global step
    may fold, which rewrites ``v_`` whole)."""
    return self_saved(learner, chunk) if learner.step == "coordinate" else ()


class SPAM(SparseScaled, BaseStreamingAUC):
    r"""Stochastic proximal AUC maximization (SPAM, NYL), online with lazy O(k) steps.

    See the module docstring for the objective, the lazy proximal steps and the
    deviations. Memory is two arrays of d floats (``v_``, ``scale_``) and, with
    per-coordinate steps, d x 3 more (``rates_``); a step costs O(k) for an example of
    k non-zeros (O(d) for dense rows, read in place), plus, with NYL's global step,
    a rare O(d) fold.

    Parameters
    ----------
    eta0 : float, default=1.0
        Step-size constant: eta0 / sqrt(n_i) for coordinate i (``step="coordinate"``)
        or eta0 / sqrt(t) (``step="global"``).
    l1 : float, default=1e-5
        l1 strength lambda_1 >= 0 of the penalty.
    l2 : float, default=0.0
        l2 strength lambda_2 >= 0 of the penalty (lambda_2 / 2 ||w||^2). ``l1 > 0`` and
        ``l2 = 0``: SPAM-l1; both > 0: SPAM with the elastic net; ``l1 = 0``: SPAM-l2.
    shuffle : bool, default=False
        Whether ``fit`` visits the examples in a random order (still one pass).
    column_scale : {"max_abs_1", "max_abs"} or None, default="max_abs_1"
        "max_abs" learns each column in its running scale (the running maximum of
        its |x|; module docstring), "max_abs_1" in the larger of that and 1 (the
        columns within [-1, 1] as they come), so that the defaults learn on raw,
        unscaled columns; None steps on the rows as they come (NYL's setting: rows
        normalized beforehand). A library option.
    random_state : int, Generator or None, default=None
        Seed of the shuffle.
    step : {"coordinate", "global"}, default="coordinate"
        "coordinate": each coordinate's step size falls with the examples that
        touched it, eta0 / sqrt(n_i) (module docstring); "global": NYL's
        eta0 / sqrt(t) for all. The two coincide on rows without zeros.

    Attributes
    ----------
    v_ : ndarray of shape (n_features,)
        The lazy form of the weights: with ``step="global"``,
        ``w_i = sign(v_i) A max(0, |v_i| - B)``; with ``step="coordinate"``, each
        weight as of its coordinate's last step.
    rates_ : ndarray of shape (n_features, 3) or (0, 3)
        Per coordinate (``step="coordinate"``; no rows with ``step="global"``): the
        steps it took, the example of the last one (counted from 1) and that step's
        size eta0 / sqrt(steps), 0 before any; integers held exactly as floats.
    scalars_ : ndarray of shape (4,)
        The running mean scores of the positives and of the negatives, A and B.
    counts_ : ndarray of shape (2,)
        Examples learnt and positives learnt.
    sparsity_ : float
        Fraction of the weights that are exactly zero.
    classes_, n_samples_seen_, n_features_in_
        As for every aucstream learner.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.spam import SPAM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 20))
    >>> y = np.where(X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=2000) > 0, 1, -1)
    >>> X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> model = SPAM().fit(X, y)
    >>> bool(model.score(X, y) > 0.9)
    True
    """

    # eta0 over 10^[-3:3] as ZYS's port of SPAM tunes its step constant; the l1 and l2
    # grids are the library's (NYL's own grids were not available)
    param_grid = {
        "eta0": [10.0**k for k in range(-3, 4)],
        "l1": [0.0] + [10.0**k for k in range(-6, 0)],
        "l2": [0.0] + [10.0**k for k in range(-6, 0)],
    }
    _tags = LearnerTags(
        dense_kernels=True, kernel_prequential=True, kernel_calibrates=True, update_draws=False
    )
    #: ``v_`` and ``scale_``: a call writes them in the rows of its examples' features
    #: only, unless it folds (:func:`_no_fold_in`)
    _state_spec = StateSpec(
        logged=_logged,
        log_from=_ROW_LOG_MIN,
        by_rows=_no_fold_in,
        checked=_logged,
        self_saved=_self_saved,
        weights=_bound_weights,
    )
    _parameter_constraints = {
        "eta0": [positive()],
        "l1": [non_negative()],
        "l2": [non_negative()],
        **PASS_ORDER,
        "column_scale": [StrOptions({"max_abs", "max_abs_1"}), None],
        "step": [StrOptions({"coordinate", "global"})],
    }
    #: ``scale_`` came with ``column_scale``, ``rates_`` with ``step``: an older file
    #: learnt the rows as they came with NYL's global steps, and keeps doing so
    #: (``_upgrades``).
    _state_added_later = (*BaseStreamingAUC._state_added_later, "scale_", "rates_")
    _upgrades = {
        "scale_": {"column_scale": None},
        "rates_": {"step": "global", "rates_": lambda learner: np.zeros((0, 3))},
    }

    def __init__(
        self,
        eta0: float = 1.0,
        l1: float = 1e-5,
        l2: float = 0.0,
        shuffle: bool = False,
        random_state: RandomState = None,
        column_scale: str | None = "max_abs_1",
        step: str = "coordinate",
    ):
        self.eta0 = eta0
        self.l1 = l1
        self.l2 = l2
        self.shuffle = shuffle
        self.random_state = random_state
        self.column_scale = column_scale
        self.step = step

    def _init_state(self, n_features: int) -> None:
        self.scale_ = np.zeros(n_features)
        self.v_ = np.zeros(n_features)
        rows = n_features if self.step == "coordinate" else 0
        self.rates_ = np.zeros((rows, 3))
        self.scalars_ = np.array([0.0, 0.0, 1.0, 0.0])
        self.counts_ = np.zeros(2, dtype=np.int64)

    def _check_step(self) -> None:
        """Refuse a state learnt with the other ``step`` (``set_params`` after fitting):
        the kernel indexes ``rates_`` by feature."""
        rows = self.v_.shape[0] if self.step == "coordinate" else 0
        if self.rates_.shape[0] != rows:
            had = "global" if self.step == "coordinate" else "coordinate"
            raise ValueError(
                f"SPAM's state was learnt with step={had!r} and step is now "
                f"{self.step!r}: the per-coordinate steps can not be switched on or off "
                "after fitting; set step back or start a new model"
            )

    def _bind_update(
        self, chunk: Chunk, reuse: bool = False, saves: tuple = (NO_SAVES, _NO_V, _NO_RATES)
    ) -> Callable:
        """The kernel's call with its arguments made once (every array is written in
        place; see :meth:`BaseStreamingAUC._bind_update`): the one-row path calls it
        without numba's dispatch. ``saves``: :class:`~aucstream._kernels._saves.Saves` and the
        buffers of rows of ``v_`` and ``rates_`` of a call that saves them
        (:meth:`~aucstream.ftrl.SparseScaled._update`; per-coordinate steps only).
        Returns the kernel's finite flag."""
        self._check_step()
        room = row_room(chunk, reuse)
        # the rows, the scores' and the row's buffers, the step and the penalty
        args = (
            *(rows_of(chunk), chunk.pre_scores, self.calibration_, np.empty(room), np.empty(room)),
            *(float(self.eta0), float(self.l1), float(self.l2)),
        )
        scaled = (self._kernel_scale(chunk, reuse), self._floor())
        v, scal, counts = self.v_, self.scalars_, self.counts_
        if self.step == "coordinate":
            state: tuple = (v, self.rates_, scal, counts)
            head, step = args[:5], args[5:]
            kernel = _spam_coordinate_chunk
            run = bound_call(kernel, *state, *head, *saves, *step, *scaled, reuse=reuse)
        else:
            limits = (A_MIN, B_MAX)
            run = bound_call(_spam_chunk, v, scal, counts, *args, *limits, *scaled, reuse=reuse)
        return lambda learner: run()

    def _saved_arrays(self) -> tuple:
        return (self.v_, self.rates_)

    def _weights(self) -> np.ndarray:
        """The weights in the scaled units now (a new array)."""
        self._check_step()
        if self.step == "coordinate":
            steps, l1, l2 = int(self.counts_[0]), float(self.l1), float(self.l2)
            return coordinate_weights(self.v_, self.rates_, steps, l1, l2)
        return lazy_prox_weights(self.v_, self.scalars_[_A], self.scalars_[_B])

    def _coef(self) -> np.ndarray:
        return self._in_columns(self._weights())

    def _check_state(self) -> None:
        d = self.v_.shape[0]
        self._check_counts_and_scale(d)
        A, B = self.scalars_[_A], self.scalars_[_B]
        if not 0.0 < A <= 1.0 or B < 0.0:
            raise ValueError(f"scalars_ A = {A!r}, B = {B!r} outside A in (0, 1], B >= 0")
        rates = self.rates_
        if rates.shape != ((d if self.step == "coordinate" else 0), 3):
            raise ValueError(f"rates_ has shape {rates.shape} for step={self.step!r}, d = {d}")
        if rates.shape[0]:
            n, last, e = rates[:, 0], rates[:, 1], rates[:, 2]
            if not (
                np.all((n >= 0) & (n <= last) & (last <= self.counts_[0]))
                and np.array_equal(n, np.floor(n))
                and np.array_equal(last, np.floor(last))
                and np.all((e >= 0) & (e < np.inf) & ((e == 0) == (n == 0)))
            ):
                raise ValueError(
                    "rates_ holds steps, last examples or step sizes outside "
                    "0 <= steps <= last example <= counts_[0] (integers) and "
                    "0 <= step size < inf (0 exactly before any step)"
                )
            if np.any((n == 0) & (self.v_ != 0.0)):
                raise ValueError("v_ holds a weight for a feature rates_ says was never seen")

    def _merge(self, other: SPAM) -> None:
        """Average the weights and the class mean scores by example counts (per class
        for the scores) and add the counts; the lazy form restarts at A = 1, B = 0.
        The step-size clock continues from the sum of the examples learnt (with
        per-coordinate steps, each coordinate's from the sum of its steps, every
        weight as of the merged count: ``rates_``). With
        a ``column_scale`` the models are averaged in the raw columns' units,
        the running scales merge into their maximum and the merged model is put in
        its units."""
        n1, n2 = int(self.counts_[0]), int(other.counts_[0])
        w = (n1 * self._coef() + n2 * other._coef()) / (n1 + n2)
        if self.step == "coordinate":  # steps add up; every coordinate stepped now
            steps = self.rates_[:, 0] + other.rates_[:, 0]
            with np.errstate(divide="ignore"):
                size = np.where(steps > 0, float(self.eta0) / np.sqrt(steps), 0.0)
            self.rates_ = np.stack([steps, np.where(steps > 0, n1 + n2, 0.0), size], axis=1)
        if self.column_scale is not None:
            self.scale_ = np.maximum(self.scale_, other.scale_)
            w = w * np.maximum(self.scale_, self._floor())
        p1, p2 = int(self.counts_[1]), int(other.counts_[1])
        scal = np.array([0.0, 0.0, 1.0, 0.0])
        if p1 + p2:
            scal[_AHAT] = (p1 * self.scalars_[_AHAT] + p2 * other.scalars_[_AHAT]) / (p1 + p2)
        q1, q2 = n1 - p1, n2 - p2
        if q1 + q2:
            scal[_BHAT] = (q1 * self.scalars_[_BHAT] + q2 * other.scalars_[_BHAT]) / (q1 + q2)
        self.v_ = w
        self.scalars_ = scal
        self.counts_ = self.counts_ + other.counts_
