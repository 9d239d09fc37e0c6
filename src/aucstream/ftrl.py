r"""FTRL-AUC: online AUC optimization for sparse high-dimensional streams, O(k) a step.

Zhou, Ying and Skiena, *Online AUC Optimization for Sparse High-Dimensional Datasets*
(ICDM 2020, arXiv 2009.10867, "ZYS"), Alg. 1.

Objective
---------
The square-loss AUC of :math:`w` is written as an empirical saddle problem over the
stream (ZYS Lemma 1, SOLAM's form on the data): with :math:`s_t = w^\top x_t` and
:math:`p = T_+/T`,

.. math::

    f_t(w, a, b, \alpha) = (1-p)(s_t - a)^2 [y_t = 1] + p (s_t - b)^2 [y_t = -1]
      - p(1-p)\alpha^2 + 2(1+\alpha) s_t \bigl(p[y_t = -1] - (1-p)[y_t = 1]\bigr),

whose optimal :math:`a, b, \alpha` are :math:`w^\top\bar x_+`, :math:`w^\top\bar x_-`
and :math:`b - a`. ZYS Thm 1 takes :math:`a, b, p` from the previous step, so that
the per-step surrogate's gradient in :math:`w` is a multiple of :math:`x_t`:

.. math::

    g_t = 2(1-p)(s_t - \hat b - 1)\,x_t \quad (y_t = 1), \qquad
    g_t = 2p\,(s_t - \hat a + 1)\,x_t \quad (y_t = -1).

**Lazy class scores** (ZYS, the "lazy update" rule): :math:`\hat a` is the running mean
of the scores :math:`s_t` that the positives received when they arrived (updated
after the step of each positive), :math:`\hat b` the same for the negatives. They
replace the O(d) products :math:`w^\top\bar x_\pm` and make a step O(k) for an
example with k non-zeros.

FTRL-Proximal with l1 and l2 (ZYS Alg. 1, after McMahan et al., KDD 2013)
--------------------------------------------------------------------------
Per coordinate, :math:`z_i` (gradients minus the proximal corrections) and
:math:`n_i = \sum g_i^2`:

.. math::

    w_i = 0 \text{ if } |z_i| \le \lambda_1, \quad \text{else }
    w_i = -\frac{z_i - \operatorname{sign}(z_i)\lambda_1}{(\beta + \sqrt{n_i})/\gamma
          + \lambda_2},

and a step with gradient :math:`g_i` sets :math:`\sigma_i = (\sqrt{n_i + g_i^2} -
\sqrt{n_i})/\gamma`, :math:`z_i \mathrel{+}= g_i - \sigma_i w_i`, :math:`n_i
\mathrel{+}= g_i^2` (per-coordinate rate :math:`\gamma/(\beta + \sqrt{n_i})`). A
coordinate that an example does not touch has :math:`g_i = 0`: its :math:`z_i, n_i`
do not change and :math:`w_i` is a function of them, so nothing needs catching up.
A step reads and writes the k coordinates of the example: O(k) time, O(d) memory
(z and :math:`\sqrt{n}` side by side in one d x 2 array, so that a coordinate is
one cache line; keeping the root rather than :math:`n_i` saves a square root per
touch, and the kernels multiply by :math:`1/\gamma`, computed once a call, where the
equations divide by :math:`\gamma`: the same floats for a power of 2 such as the
default 0.5), independent of the stream length. The model starts at 0
and is the last :math:`w` (no averaging), as in ZYS.

Order of operations and deviations
----------------------------------
* **Standard FTRL order.** For each example the touched :math:`w_i` are computed
  from :math:`(z_i, n_i)` first, the example is scored with them (this score is the
  prequential score and equals ``decision_function`` before the example is learnt),
  then :math:`z, n` are updated. The authors' C code scores with the :math:`w_i`
  cached at each coordinate's previous touch (predictions lag one touch per
  coordinate), which needs a cache of w (d more floats); the standard order
  (McMahan et al. 2013, Alg. 1) needs no cache and makes the model a function of
  :math:`(z, n)` alone, which is what ``coef_`` returns. ``reference_order=True``
  reproduces the code's order (``_algo_ftrl_auc`` in ``baojianzhou/ftrl-auc``:
  score with the cache, p counting the current example, recompute the touched
  weights into the cache, update z and n with them; the model is the cache).
* **p** is the positive rate of the examples before the current one (Alg. 1); the
  first example, which has none before it, uses :math:`p = 1/2`. (The C code counts
  the current example.) Before a class has been seen its mean score is 0 (the
  score of the initial :math:`w = 0`).
* :math:`\lambda_1` is a constant per step (the closed form and the code of ZYS;
  its objective writes :math:`t\lambda\|w\|_1`). ZYS use :math:`\beta = 1,
  \lambda_2 = 0` and tune :math:`\gamma, \lambda_1` over grids without a default
  (``param_grid`` holds their grids). The defaults here, :math:`\gamma = 0.5`,
  :math:`\lambda_1 = 0.5`, were chosen from a small grid (:math:`\gamma \in
  \{0.1, 0.3, 0.5, 1, 2\}`, :math:`\lambda_1 \in \{0.01, \dots, 1\}`) on the
  generated sparse unit-norm stream of ``benchmarks/bench_highdim.py`` (d = 10^6, 50
  non-zeros a row) and checked on a9a and w8a with unit rows
  (``docs/results/highdim_bench.md``): the AUC changes little for :math:`\gamma` in
  [0.3, 2], and :math:`\lambda_1` trades AUC for zeros; 0.5 keeps most weights
  exactly zero on the wide stream for a small loss of AUC.
* **Columns in their running scale** (``column_scale``, a library option; the
  default "max_abs_1"). FTRL's per-coordinate rate :math:`\gamma/(\beta + \sqrt{n_i})`
  moves a weight by about :math:`\gamma` whatever its column's units, and
  :math:`\lambda_1` weighs all weights alike: on raw columns (readings in the
  thousands next to rates in [0, 1]) the large columns swamp the scores and the
  small ones are never learnt (ZYS normalize their rows). So by default the
  learner runs Alg. 1 on :math:`\tilde x_i = x_i/s_i`, :math:`s_i` the running
  maximum of the column's :math:`|x|` (Ross, Mineiro and Langford, *Normalized
  Online Learning*, UAI 2013; :mod:`aucstream._running_scale`): z, n and the
  closed-form weights are those of the scaled columns, and ``coef_`` is
  :math:`\tilde w_i/s_i`. A row's columns join the scale after its prequential
  score (computed with the scale before it) and before its step, whose score (for
  the gradient and the class mean scores) is taken on :math:`\tilde x_t`. A scale
  is read and written only in the row's non-zeros: O(k) still. When a column's
  scale grows its z, n (so its :math:`\tilde w_i`) are kept. "max_abs" divides by
  the running maximum itself; the default "max_abs_1" by
  :math:`\max(1, s_i)`, so that the columns within [-1, 1]
  are left as they come and only the larger ones are brought into [-1, 1]: on rows
  inside the unit box (ZYS's unit-norm rows) it is ZYS Alg. 1 bit for bit. With
  "max_abs_1", :math:`s_i` records a column's maximum only once it exceeds 1 (0
  until then: the divisor is 1 either way), so a call whose values all lie in
  [-1, 1] while no :math:`s_i` exceeds 1 learns without reading the scale, the same
  floats (``SparseScaled._kernel_scale``): at 10^6 columns the kernel then reaches
  one array fewer for each value. (A model switched to "max_abs" afterwards starts
  such a column's scale at its next value.) It was
  chosen so because on such rows the plain maximum costs AUC where rare features
  get their scale from one or two values (measured: on the generated wide stream of
  ``benchmarks/bench_highdim.py``, 30,000 rows of d = 10^5, prequential AUC 0.80 as
  the paper and with "max_abs_1", 0.71 with "max_abs"), while on raw columns both
  learn (docs/results/raw_data.md). ``column_scale=None`` is ZYS Alg. 1 on the rows
  as they come (the paper's setting, rows normalized beforehand); a file saved
  before the parameter existed loads with None.
* Example weights are not supported (refused with an error): ZYS define none.
* Merging two learners is not defined (:meth:`merge` raises): the per-coordinate
  sums :math:`z, n` of two streams do not combine into the state of their union
  (:math:`z` holds corrections :math:`\sigma_i w_i` computed along one stream).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._base import BaseStreamingAUC
from ._calibration import step as calibration_step
from ._chunks import Chunk
from ._kernels import bound_call, col, jit, n_rows, prefetch_row_of, row, rows_of
from ._kernels._lazy import check_example_counts
from ._kernels._saves import (
    NO_SAVES,
    keep_row,
    new_saves,
    record_saves,
    save_row,
    start_saves,
)
from ._params import PASS_ORDER, StrOptions, non_negative, positive
from ._running_scale import coef_in_columns, grow_scale
from ._runtime import LearnerTags, StateSpec
from ._state import active_log
from ._typing import RandomState

__all__ = ["FTRLAUC", "ROW_COPY", "auc_gradient_scale", "ftrl_weights"]

#: The kernels' "no running column scale".
_NO_SCALE = np.empty(0)


#: No saved rows of a d x 2 array.
_NO_ROWS2 = np.zeros((0, 2))

# indices into scalars_: the running mean scores of the positives and the negatives
_AHAT, _BHAT = 0, 1

#: From this many features on, a call saves only the rows of the state that its
#: examples touch (``FTRLAUC._state_spec``) rather than copying it whole.
_ROW_LOG_MIN = 4096
#: Saving a row of the state costs about as much as copying this many consecutive
#: floats (``Chunk.names_few``): FTRL-AUC's and SPAM's one or two arrays.
ROW_COPY = 32


@jit(inline="always")
def auc_gradient_scale(s, y, counts, scal):
    r"""The multiple of :math:`x_t` that is the surrogate's gradient (ZYS Thm 1).

    ``counts`` = (examples, positives) before this one, ``scal`` = (:math:`\hat a,
    \hat b`). :math:`p` is the previous positive rate (1/2 before any example).
    """
    t = counts[0]
    p = counts[1] / t if t > 0 else 0.5
    if y > 0:
        return 2.0 * (1.0 - p) * (s - scal[_BHAT] - 1.0)
    return 2.0 * p * (s - scal[_AHAT] + 1.0)


@jit(inline="always")
def observe_score(s, y, counts, scal):
    """Count the example and move its class's running mean score towards ``s``."""
    counts[0] += 1
    if y > 0:
        counts[1] += 1
        scal[_AHAT] += (s - scal[_AHAT]) / counts[1]
    else:
        neg = counts[0] - counts[1]
        scal[_BHAT] += (s - scal[_BHAT]) / neg


@jit(inline="always")
def _weight(z, root_n, rate, beta, l1, l2):
    """FTRL-Proximal's closed form of one coordinate (``root_n`` = sqrt(n_i), ``rate``
    = 1/gamma: one division a weight rather than two)."""
    if abs(z) <= l1:
        return 0.0
    shrunk = z - l1 if z > 0.0 else z + l1
    return -shrunk / ((beta + root_n) * rate + l2)


@jit(inline="always")
def in_scale(scale, floor, i, v):
    """A value of column i in its running scale, at least ``floor`` (0 where that is
    0); the value itself when there is no scale (``scale`` empty)."""
    if scale.shape[0] == 0:
        return v
    c = max(scale[i], floor)
    return v / c if c > 0.0 else 0.0


@jit(inline="always")
def weight_in_column(c, scale, floor, j):
    """The weight ``c`` of column j in its running scale, in the raw column's units
    (:func:`aucstream._running_scale.coef_in_columns`, one weight: 0 where the scale,
    at least ``floor``, is 0)."""
    s = max(scale[j], floor)
    return c / s if s > 0.0 else 0.0


@jit(inline="always")
def held_term(w, scale, floor, i, v, a, work, xs):
    """The term ``w * x`` of a row's score, ``x`` the value ``v`` of column i in its
    running scale (:func:`in_scale`); ``w`` kept in ``work[a]`` and ``x`` in
    ``xs[a]`` for the step that follows (the O(k) learners' first pass over a row)."""
    work[a] = w
    x = in_scale(scale, floor, i, v)
    xs[a] = x
    return w * x


@jit(inline="always")
def scaled_score(scale, floor, idx, val, work, xs):
    """The row's score under the weights ``work`` of its columns, in the scale; its
    values in the scale written to ``xs``."""
    s = 0.0
    for a in range(val.shape[0]):
        x = in_scale(scale, floor, col(idx, a), val[a])
        xs[a] = x
        s += work[a] * x
    return s


@jit(inline="always")
def _weights_into(zs, roots, out, k, rate, beta, l1, l2):
    """:func:`_weight` of the first ``k`` pairs of ``zs`` and ``roots`` into ``out``,
    without a branch (both sides computed, then one chosen), so that the loop
    vectorizes: the same floats. A zero divisor (``beta`` = ``l2`` = 0 and a
    coordinate never stepped) can only occur where ``|z| <= l1`` (z = 0 there),
    whose 0 is chosen."""
    for a in range(k):
        z = zs[a]
        shrunk = z - l1 if z > 0.0 else z + l1
        w = -shrunk / ((beta + roots[a]) * rate + l2)
        out[a] = 0.0 if abs(z) <= l1 else w


@jit(borrowing=True, error_model="numpy")
def _ftrl_chunk(
    zn, scal, counts, rows, pre, calibration, work, xs, zs, roots, saves, saved_zn, rate,
    beta, l1, l2, scale, floor,
):  # fmt: skip
    """ZYS Alg. 1 over a chunk, standard FTRL order (module docstring): per example, the
    touched (z, sqrt n) gathered into ``zs``, ``roots`` and the row's values (in the
    scale) into ``xs``; the touched weights into ``work``; the score (written to ``pre``
    when asked, and the ``calibration`` fitted on it:
    :func:`aucstream._calibration.step`, whose chain of divisions and square roots then
    overlaps the next rows' reads); then z, sqrt n stepped with the gradient in those
    buffers and written back where the gradient is not 0, and the class's mean score
    moved. The weights and the step run over contiguous buffers without a branch, so
    that they vectorize; the score is summed value by value in the row's order: the
    floats of the value-by-value loop. ``zn`` holds z_i and sqrt(n_i) side by side (one
    cache line a coordinate). A non-empty ``scale`` is the running maximum of each
    column's |x|, grown by the row after its prequential score; the step then takes the
    row divided by it (at least ``floor``: module docstring; ``xs`` computed again only
    when a column's divisor moved). ``rate`` is 1/gamma (a product where the module
    docstring divides by gamma). ``saves`` (:class:`~aucstream._kernels._saves.Saves`;
    ``marks`` empty: none) and ``saved_zn``: the rows of ``zn`` (and of a non-empty
    ``scale``) as they were before the call, each saved before its first write
    (``StateSpec.self_saved``). Divides as IEEE 754 does (``error_model="numpy"``:
    :func:`_weights_into`; every other divisor is checked non-zero). Returns whether
    every value it wrote to ``zn`` is finite (``StateSpec.checked``: the scale holds
    maxima of checked values)."""
    scores = pre.shape[0] == n_rows(rows)
    finite = True
    saving = start_saves(saves, scale)
    for r in range(n_rows(rows)):
        idx, val, y = row(rows, r)
        prefetch_row_of(zn, rows, r + 1)  # (the next example's, when zn is large)
        prefetch_row_of(scale, rows, r + 1)
        k = val.shape[0]
        for a in range(k):  # the row's state and values, gathered
            i = col(idx, a)
            if saving:
                m = save_row(saves, scale, i)
                saved_zn[m, 0] = zn[i, 0]
                saved_zn[m, 1] = zn[i, 1]
                keep_row(saves, i, m)
            zs[a] = zn[i, 0]
            roots[a] = zn[i, 1]
            xs[a] = in_scale(scale, floor, i, val[a])
        _weights_into(zs, roots, work, k, rate, beta, l1, l2)
        s = 0.0
        for a in range(k):
            s += work[a] * xs[a]
        if scores:
            pre[r] = s
            calibration_step(calibration, s, y, 1.0)
        if scale.shape[0] > 0 and grow_scale(scale, idx, val, floor):
            s = scaled_score(scale, floor, idx, val, work, xs)
        c = auc_gradient_scale(s, y, counts, scal)
        for a in range(k):  # the step (where g = 0 it is not written back)
            g = c * xs[a]
            root = roots[a]
            root_new = np.sqrt(root * root + g * g)
            roots[a] = root_new
            zs[a] = zs[a] + (g - (root_new - root) * rate * work[a])
        for a in range(k):
            if c * xs[a] != 0.0:
                i = col(idx, a)
                z, root_new = zs[a], roots[a]
                zn[i, 0] = z
                zn[i, 1] = root_new
                finite &= (abs(z) < np.inf) & (root_new < np.inf)  # (False for NaN)
        observe_score(s, y, counts, scal)
    return finite


@jit(borrowing=True)
def _ftrl_reference_chunk(
    zn, w, scal, counts, rows, pre, calibration, rate, beta, l1, l2, scale, floor
):
    """The authors' C code's order (``reference_order=True``, module docstring): per
    example, the score with the weights ``w`` cached at each coordinate's previous
    touch (the ``calibration`` fitted on it, as :func:`_ftrl_chunk`), p with the
    current example counted, then the touched weights recomputed from (z, sqrt n)
    into ``w`` and z, sqrt n updated with them (in the running column ``scale`` when
    not empty, as :func:`_ftrl_chunk`)."""
    scores = pre.shape[0] == n_rows(rows)
    for r in range(n_rows(rows)):
        idx, val, y = row(rows, r)
        s = 0.0
        for a in range(val.shape[0]):
            i = col(idx, a)
            s += w[i] * in_scale(scale, floor, i, val[a])
        if scores:
            pre[r] = s
            calibration_step(calibration, s, y, 1.0)
        if scale.shape[0] > 0 and grow_scale(scale, idx, val, floor):
            s = 0.0
            for a in range(val.shape[0]):
                i = col(idx, a)
                s += w[i] * in_scale(scale, floor, i, val[a])
        p = (counts[1] + (1 if y > 0 else 0)) / (counts[0] + 1.0)
        if y > 0:
            c = 2.0 * (1.0 - p) * (s - scal[_BHAT] - 1.0)
        else:
            c = 2.0 * p * (s - scal[_AHAT] + 1.0)
        for a in range(val.shape[0]):
            if val[a] != 0.0:  # the stored values (a dense row's zeros touch nothing)
                i = col(idx, a)
                w[i] = _weight(zn[i, 0], zn[i, 1], rate, beta, l1, l2)
        for a in range(val.shape[0]):
            g = c * in_scale(scale, floor, col(idx, a), val[a])
            if g != 0.0:
                i = col(idx, a)
                root = zn[i, 1]
                root_new = np.sqrt(root * root + g * g)
                zn[i, 0] += g - (root_new - root) * rate * w[i]
                zn[i, 1] = root_new
        observe_score(s, y, counts, scal)


@jit
def _ftrl_weights_into(zn, w, scale, out, reference, scaled, floor, rate, beta, l1, l2):
    """``_coef()`` into ``out[:-1]`` and the intercept 0 into ``out[-1]``, bit for bit
    (the closed form of :func:`_weight`, or the authors' cached ``w`` with
    ``reference``; in the columns' units with ``scaled``, as
    :func:`aucstream._running_scale.coef_in_columns`); False, nothing written, when
    the arrays do not fit."""
    d = zn.shape[0]
    if out.shape[0] != d + 1 or scale.shape[0] != d or (reference and w.shape[0] != d):
        return False
    for j in range(d):
        c = w[j] if reference else _weight(zn[j, 0], zn[j, 1], rate, beta, l1, l2)
        out[j] = weight_in_column(c, scale, floor, j) if scaled else c
    out[d] = 0.0
    return True


def _bound_weights(learner: FTRLAUC, out: np.ndarray) -> tuple:
    """The weights of ``learner`` bound to ``out`` (``StateSpec.weights``): its arrays
    bound once, the parameters read at each call."""
    reference = bool(learner.reference_order)
    w = learner.w_ if reference else _NO_SCALE
    late = (True, True, 1.0, 1.0, 1.0, 1.0, 1.0)
    run = bound_call(_ftrl_weights_into, learner.zn_, w, learner.scale_, out, reuse=True, late=late)

    def fill(learner: FTRLAUC) -> bool:
        if bool(learner.reference_order) != reference:  # (bound to the other's arrays)
            return False
        rate, beta = 1.0 / float(learner.gamma), float(learner.beta)
        params = rate, beta, float(learner.l1), float(learner.l2)
        return run(reference, learner.column_scale is not None, learner._floor(), *params)

    return fill, ("zn_", "scale_", "w_") if reference else ("zn_", "scale_")


def row_room(chunk: Chunk, reuse: bool) -> int:
    """Room for the values of one row of ``chunk`` (the kernels' per-row buffers): its
    widest row, or, for a chunk whose buffers every call refills (``reuse``: the
    one-row path), as many values as its buffers hold."""
    if chunk.indptr is None:
        return chunk.n_features
    if reuse:
        return int(chunk.data.shape[0])
    return int(np.diff(chunk.indptr).max(initial=0))


def _logged(learner: FTRLAUC) -> tuple:
    """``zn_``, the running column scale when on (and ``w_``): a call writes them in the rows of its
    examples' features only (``StateSpec.logged``), from :data:`_ROW_LOG_MIN`
    features on."""
    if "zn_" not in learner.__dict__ or learner.zn_.shape[0] < _ROW_LOG_MIN:
        return ()
    rows = (learner.zn_,) if learner.column_scale is None else (learner.zn_, learner.scale_)
    return (*rows, learner.w_) if learner.reference_order else rows


def _checked(learner: FTRLAUC) -> tuple:
    """The arrays of :func:`_logged` whose writes :func:`_ftrl_chunk` checks (the
    standard order's: it returns whether they are finite; the scale holds maxima of
    checked values)."""
    return () if learner.reference_order else _logged(learner)


def _saved_by_rows(learner: FTRLAUC, chunk: Chunk) -> bool:
    """Every call writes ``zn_`` (and ``w_``) in the rows of its features only; they
    are saved by rows when the chunk stores at most 1/:data:`ROW_COPY` as many values
    as there are features (:meth:`~aucstream._chunks.Chunk.names_few`), else whole
    (one sequential copy costs less than many scattered ones)."""
    return chunk.names_few(ROW_COPY)


def self_saved(learner: SparseScaled, chunk: Chunk) -> tuple:
    """The arrays of ``_logged`` whose rows a large call of a learner that has learnt
    saves itself (``StateSpec.self_saved``; :meth:`SparseScaled._update`): every one,
    for a chunk saved whole otherwise (not :func:`_saved_by_rows`), instead of a copy
    of each array. The kernel reads those rows anyway; a call of 10,000 rows of 50
    values at d = 10^6 saves some 145,000 rows rather than copying 10^6."""
    if not learner.__dict__.get("n_samples_seen_") or chunk.names_few(ROW_COPY):
        return ()  # (a first call's arrays are zeros: the log keeps no copy of them)
    return learner._row_logged_state()


def _self_saved(learner: FTRLAUC, chunk: Chunk) -> tuple:
    """:func:`self_saved`, in the standard order (the authors' order saves nothing)."""
    return () if learner.reference_order else self_saved(learner, chunk)


def ftrl_weights(
    z: np.ndarray, root_n: np.ndarray, gamma: float, beta: float, l1: float, l2: float
) -> np.ndarray:
    """The weights of FTRL-Proximal's closed form for whole arrays ``z`` and
    ``root_n`` = sqrt(n) (module docstring); the kernel's arithmetic, element by
    element."""
    shrunk = z - np.sign(z) * l1
    with np.errstate(invalid="ignore", divide="ignore"):  # 0/0 only where z = 0, set below
        w = -shrunk / ((beta + root_n) * (1.0 / gamma) + l2)
    w[np.abs(z) <= l1] = 0.0
    return w


#: Per learner, ``(a weak reference to scale_, n, floor)`` when its large calls (not
#: the one-row path, which binds the scale for the rows to come) left ``scale_`` at most
#: ``floor`` everywhere up to ``n_samples_seen_ == n``: the next such call skips the O(d)
#: maximum of ``scale_`` (:meth:`SparseScaled._kernel_scale`; measured in
#: docs/benchmarks.md). Whatever else writes the scale changes the key: a kernel given the
#: scale (the entry is dropped), an undone call (``n_samples_seen_`` restored with
#: it), a loaded or merged model (a new array).
_WITHIN_FLOOR: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class SparseScaled:
    """What the O(k) sparse learners (:class:`FTRLAUC`, :class:`~aucstream.SPAM`)
    share: their running column scale ``scale_`` (:mod:`aucstream._running_scale`;
    ``column_scale`` in {"max_abs", "max_abs_1", None}), their coefficients in the
    raw columns' units, the fraction of them that are zero, and the check of their
    counts and scale. A learner defines ``_coef`` (the weights in the scaled units,
    a new array) and holds ``counts_`` = [examples, positives]."""

    column_scale: str | None
    scale_: np.ndarray
    counts_: np.ndarray
    n_samples_seen_: int
    _coef: Callable[[], np.ndarray]
    _bind_update: Callable[..., Callable]
    _self_saved_state: Callable[[Chunk], tuple]
    _row_logged_state: Callable[[], tuple]

    def _scale(self) -> np.ndarray:
        """The running column scale as the kernels take it (empty when off)."""
        return self.scale_ if self.column_scale is not None else _NO_SCALE

    def _floor(self) -> float:
        """The least divisor of a column: 1 with "max_abs_1", else 0."""
        return 1.0 if self.column_scale == "max_abs_1" else 0.0

    def _kernel_scale(self, chunk: Chunk, reuse: bool) -> np.ndarray:
        """The running scale as a call's kernel takes it: :meth:`_scale`, or empty
        (the rows as they come) when that gives the same floats. With "max_abs_1", a
        call whose values all lie in [-1, 1] while no column's maximum exceeds 1
        divides each value by exactly 1 and records no maximum
        (:func:`~aucstream._running_scale.grow_scale`), so its kernel need not read
        the scale: one array fewer to reach for each value (at 10^6 columns the
        kernel's largest cost). Checked only for the calls whose transaction copies
        the state whole (not :meth:`~aucstream._chunks.Chunk.names_few`: the O(d)
        maximum of the scale costs less than that copy), not for the one-row path
        (``reuse``: its bound call serves the rows to come)."""
        scale = self._scale()
        floor = self._floor()
        if reuse or floor == 0.0 or chunk.names_few(ROW_COPY):
            _WITHIN_FLOOR.pop(self, None)
            return scale
        data = chunk.data
        if data.size and max(float(data.max()), -float(data.min())) > floor:
            _WITHIN_FLOOR.pop(self, None)
            return scale
        seen = self.__dict__.get("n_samples_seen_")
        known = _WITHIN_FLOOR.get(self)
        if seen is None or known is None or known[1:] != (seen, floor) or known[0]() is not scale:
            if float(scale.max(initial=0.0)) > floor:
                return scale
        # this call leaves the scale as it is, at most the floor, up to its last row
        if seen is not None:
            _WITHIN_FLOOR[self] = (weakref.ref(scale), seen + chunk.n_samples, floor)
        return _NO_SCALE

    def _saved_arrays(self) -> tuple:
        """The arrays besides ``scale_`` whose rows a saving kernel call saves, in the
        order of its buffers."""
        raise NotImplementedError

    def _update(self, chunk: Chunk) -> bool | None:
        """Learn ``chunk`` (``_bind_update``); when the runtime leaves this call's rows
        to it (``StateSpec.self_saved``: a transaction's undo log active, a large
        chunk of a learner that has learnt), its kernel saves each row of the state
        before it first writes it, and the saved rows go to the log, even when the
        kernel raises."""
        log = active_log(self)
        if log is None or not self._self_saved_state(chunk):
            return self._bind_update(chunk)(self)
        arrays = self._saved_arrays()
        saves, buffers = new_saves(arrays, chunk.data.size, self.column_scale is not None)
        try:
            return self._bind_update(chunk, saves=(saves, *buffers))(self)
        finally:
            record_saves(log, saves, arrays, buffers, self.scale_)

    def _in_columns(self, coef: np.ndarray) -> np.ndarray:
        """``coef`` (scaled units, a new array) in the raw columns' units."""
        if self.column_scale is None:
            return coef
        return coef_in_columns(coef, np.maximum(self.scale_, self._floor()))

    @property
    def sparsity_(self) -> float:
        """Fraction of the weights (of ``coef_``) that are exactly zero."""
        check_is_fitted(self, "n_samples_seen_")
        coef = self._coef()
        return float(np.mean(coef == 0.0)) if coef.size else 0.0

    def _check_counts_and_scale(self, width: int) -> None:
        """``counts_`` are counts of the examples seen and ``scale_`` holds ``width``
        finite, non-negative maxima."""
        check_example_counts(self)
        scale = self.scale_
        if scale.shape != (width,) or not np.all(np.isfinite(scale) & (scale >= 0)):
            raise ValueError("scale_ must hold a finite, non-negative maximum |x| per column")


class FTRLAUC(SparseScaled, BaseStreamingAUC):
    r"""FTRL-AUC: online AUC maximization by FTRL-Proximal, O(k) per example (ZYS).

    See the module docstring for the objective, the update, the lazy class scores and
    the deviations. Memory is 2 d floats; a step costs O(k) for an example
    of k non-zeros (O(d) for dense rows, read in place). The l1 term keeps most
    weights exactly zero (``sparsity_``).

    Parameters
    ----------
    gamma : float, default=0.5
        Learning-rate constant: coordinate i moves at rate gamma / (beta + sqrt(n_i)).
        ZYS tune it over ``param_grid["gamma"]``; the default is a library choice
        (module docstring).
    l1 : float, default=0.5
        l1 strength lambda_1 >= 0: a coordinate is zero while |z_i| <= l1.
    l2 : float, default=0.0
        l2 strength lambda_2 >= 0 (0 in ZYS).
    beta : float, default=1.0
        Smoothing of the per-coordinate rate (1 in ZYS).
    reference_order : bool, default=False
        Follow the order of operations of the authors' C code (score with the
        weights cached at each coordinate's previous touch, p counting the current
        example; the model is that cache, ``w_``) instead of the standard FTRL order
        (module docstring).
    shuffle : bool, default=False
        Whether ``fit`` visits the examples in a random order (still one pass).
    random_state : int, Generator or None, default=None
        Seed of the shuffle.
    column_scale : {"max_abs_1", "max_abs"} or None, default="max_abs_1"
        "max_abs" learns each column in its running scale (the running maximum of
        its |x|; module docstring), "max_abs_1" in the larger of that and 1 (the
        columns within [-1, 1] as they come), so that the defaults learn on raw,
        unscaled columns; None is ZYS Alg. 1 on the rows as they come (their
        setting: rows normalized beforehand). A library option.

    Attributes
    ----------
    zn_ : ndarray of shape (n_features, 2)
        Per coordinate, z_i (the sum of gradients less the proximal corrections) and
        sqrt(n_i) (the root of the sum of squared gradients), side by side so that a
        step reads one cache line per coordinate.
    w_ : ndarray of shape (n_features,)
        Only with ``reference_order=True``: the weights cached at each coordinate's
        last touch (the C code's model).
    scalars_ : ndarray of shape (2,)
        The running mean scores of the positives and of the negatives.
    scale_ : ndarray of shape (n_features,)
        The running maximum of each column's absolute values (the columns are
        divided by it, by at least 1 with "max_abs_1", which keeps only the maxima
        above 1 and 0 for the other columns; unused with ``column_scale=None``).
    counts_ : ndarray of shape (2,)
        Examples learnt and positives learnt.
    sparsity_ : float
        Fraction of the weights that are exactly zero.
    classes_, n_samples_seen_, n_features_in_
        As for every aucstream learner.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.ftrl import FTRLAUC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 20))
    >>> y = np.where(X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=2000) > 0, 1, -1)
    >>> X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> model = FTRLAUC().fit(X, y)
    >>> bool(model.score(X, y) > 0.9), bool(model.sparsity_ >= 0.5)
    (True, True)
    """

    param_grid = {
        "l1": [10.0**k for k in range(-8, -2)]
        + [0.005, 0.01, 0.05, 0.1, 0.3, 0.5, 0.7, 1.0, 3.0, 5.0],
        "gamma": [1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0],
    }
    # (what a call saves by rows depends on its number of stored values, not on its
    # label only: row_written_by_class stays False)
    _tags = LearnerTags(
        dense_kernels=True, kernel_prequential=True, kernel_calibrates=True, update_draws=False
    )
    _state_spec = StateSpec(
        logged=_logged,
        by_rows=_saved_by_rows,
        checked=_checked,
        self_saved=_self_saved,
        weights=_bound_weights,
    )
    _parameter_constraints = {
        "gamma": [positive()],
        "l1": [non_negative()],
        "l2": [non_negative()],
        "beta": [non_negative()],
        "reference_order": ["boolean"],
        **PASS_ORDER,
        "column_scale": [StrOptions({"max_abs", "max_abs_1"}), None],
    }
    #: ``scale_`` came with ``column_scale``: an older file learnt the rows as they
    #: came, and keeps doing so (``_upgrades``).
    _state_added_later = (*BaseStreamingAUC._state_added_later, "scale_")
    _upgrades = {"scale_": {"column_scale": None}}

    def __init__(
        self,
        gamma: float = 0.5,
        l1: float = 0.5,
        l2: float = 0.0,
        beta: float = 1.0,
        reference_order: bool = False,
        shuffle: bool = False,
        random_state: RandomState = None,
        column_scale: str | None = "max_abs_1",
    ):
        self.gamma = gamma
        self.l1 = l1
        self.l2 = l2
        self.beta = beta
        self.reference_order = reference_order
        self.shuffle = shuffle
        self.random_state = random_state
        self.column_scale = column_scale

    def _init_state(self, n_features: int) -> None:
        self.scale_ = np.zeros(n_features)
        self.zn_ = np.zeros((n_features, 2))
        self.scalars_ = np.zeros(2)
        self.counts_ = np.zeros(2, dtype=np.int64)
        if self.reference_order:  # the C code's cache of the weights
            self.w_ = np.zeros(n_features)

    def _bind_update(
        self, chunk: Chunk, reuse: bool = False, saves: tuple = (NO_SAVES, _NO_ROWS2)
    ) -> Callable:
        """The kernel's call with its arguments made once (every array is written in
        place; see :meth:`BaseStreamingAUC._bind_update`): the one-row path calls it
        without numba's dispatch. ``saves``: :class:`~aucstream._kernels._saves.Saves`
        and the buffer of rows of ``zn_`` of a call that saves them
        (:meth:`SparseScaled._update`; the standard
        order only). Returns the kernel's finite flag (``StateSpec.checked``) in the
        standard order, None in the authors'."""
        params = 1.0 / float(self.gamma), float(self.beta), float(self.l1), float(self.l2)
        scaled = (self._kernel_scale(chunk, reuse), self._floor())
        head = (self.scalars_, self.counts_, rows_of(chunk), chunk.pre_scores, self.calibration_)
        state: tuple
        if self.reference_order:
            kernel, state = _ftrl_reference_chunk, (self.zn_, self.w_, *head)
        else:
            room = row_room(chunk, reuse)
            buffers = (*(np.empty(room) for _ in range(4)), *saves)
            kernel, state = _ftrl_chunk, (self.zn_, *head, *buffers)
        run = bound_call(kernel, *state, *params, *scaled, reuse=reuse)
        return lambda learner: run()

    def _saved_arrays(self) -> tuple:
        return (self.zn_,)

    def _coef(self) -> np.ndarray:
        if self.reference_order:
            coef = self.w_.copy()
        else:
            coef = ftrl_weights(
                self.zn_[:, 0],
                self.zn_[:, 1],
                float(self.gamma),
                float(self.beta),
                float(self.l1),
                float(self.l2),
            )
        return self._in_columns(coef)

    def _check_state(self) -> None:
        self._check_counts_and_scale(self.zn_.shape[0])
        if np.any(self.zn_[:, 1] < 0):
            raise ValueError(
                "zn_[:, 1] holds a negative value, but it is a root of a sum of squares"
            )
