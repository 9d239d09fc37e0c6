r"""Lazily scaled weights and lazy running sums, and the class weights of weighted
streams: the bookkeeping that makes a step cost O(k) for k non-zeros.

Lazily scaled weights
---------------------
Several learners shrink their whole weight vector at every step (an L2 penalty, a
projection onto an l2 ball) but change only the k non-zeros of the current example
otherwise. They keep :math:`w = \sigma u` with a scalar :math:`\sigma`, so that the
shrinkage costs O(1) and a step costs O(k): adding :math:`c\,x` to w adds
:math:`(c/\sigma)\,x` to u. The scale is folded into u (an O(d) pass, after which
:math:`\sigma = 1`) as soon as it leaves [``SCALE_MIN``, ``SCALE_MAX``], before the
entries of u can overflow or underflow (:func:`scale_in_range`, :func:`fold_scale`).

Learners that also average their iterates (SOLAM, FSAUC) keep the running sum
:math:`S = \sum_s \gamma_s w_s` in the lazy form

.. math::

    S = \mathrm{base} + c\,u - \mathrm{corr},

a :class:`LazySum`, with a scalar :math:`c` (the sum of :math:`\gamma_s\sigma_s` since
the last fold). Adding the current iterate to S is ``c += gamma * sigma``; changing u
by :math:`\Delta u` adds :math:`c\,\Delta u` to ``corr``, so S does not change
(:func:`lazy_axpy`). A fold (:func:`aucstream._saddle.rebase`) moves :math:`c\,u - \mathrm{corr}`
into ``base`` and then may replace u freely. This form has a price: when
:math:`\sigma` has fallen by a factor f since the last fold, the entries of u written
since then are f times larger than those of w, :math:`c\,u` and ``corr`` grow with
them and cancel in S, which loses about :math:`\log_{10} f` digits. So the averaging
learners fold already when :math:`\sigma` falls below ``AVERAGE_SCALE_MIN`` (1e-4:
at most 4 digits lost, while the scale range alone would allow 9), and every
``FOLD_EVERY`` examples, which bounds the round-off of the norms they maintain
incrementally (:func:`fold_due`). All these rules depend only on the stream, not on
how it is cut into chunks, so any chunking gives bit-identical models.

Kernels here are compiled under the policy of :mod:`aucstream._kernels._compile`.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ._compile import REASSOC, jit
from ._rows import col

__all__ = [
    "AVERAGE_SCALE_MIN",
    "DECAY_MIN",
    "FOLD_EVERY",
    "LazySum",
    "SCALE_MAX",
    "SCALE_MIN",
    "TOTAL_FLOOR",
    "check_class_totals",
    "class_totals",
    "decay_factor",
    "decay_totals",
    "fold_due",
    "fold_scale",
    "lazy_axpy",
    "lazy_mean",
    "lazy_mean_of",
    "mean_by_count",
    "scale_in_range",
    "start_class_totals",
    "store_class_totals",
    "upgrade_class_totals",
]

#: Lazily scaled weights ``w = sigma * u`` fold sigma into u (an O(d) pass) when sigma
#: leaves [SCALE_MIN, SCALE_MAX], before u's entries can lose precision or overflow.
SCALE_MIN, SCALE_MAX = 1e-9, 1e9
#: Averaging learners (a :class:`LazySum`) fold when sigma falls below this, to bound
#: the cancellation in their running sum, and every FOLD_EVERY examples.
AVERAGE_SCALE_MIN = 1e-4
FOLD_EVERY = 1 << 16

#: The lazy running sum ``S = base + c * u - corr`` of iterates ``w = sigma * u``
#: (three float64 arrays of length d; the scalars c and sigma live with the learner).
LazySum = namedtuple("LazySum", ["u", "base", "corr"])


# ------------------------------------------------------------------ lazy scaling
@jit(fastmath=REASSOC)
def scale_in_range(sigma):
    """Whether the implicit scale may stay as it is (SCALE_MIN <= |sigma| <= SCALE_MAX)."""
    return SCALE_MIN <= abs(sigma) <= SCALE_MAX


@jit(fastmath=REASSOC)
def fold_due(sigma, count):
    """Whether an averaging learner folds: sigma below AVERAGE_SCALE_MIN or above
    SCALE_MAX, or ``count`` a multiple of FOLD_EVERY."""
    return not (AVERAGE_SCALE_MIN <= abs(sigma) <= SCALE_MAX) or count % FOLD_EVERY == 0


@jit(fastmath=REASSOC)
def fold_scale(u, sigma):
    """``u *= sigma`` (w = sigma u is unchanged once sigma is reset); returns the new 1.0."""
    for i in range(u.shape[0]):
        u[i] *= sigma
    return 1.0


@jit(fastmath=REASSOC)
def lazy_mean(lz, c, center, sum_tau, count, out):
    r"""``out = S / count`` with :math:`S = (\sum\tau) v_1 + \mathrm{base} + c u - \mathrm{corr}`.

    ``center`` may be empty (no :math:`v_1` term).
    """
    u, base, corr = lz
    has_center = center.shape[0] > 0
    for i in range(u.shape[0]):
        total = base[i]
        if has_center:
            total = sum_tau * center[i] + total
        out[i] = (total + c * u[i] - corr[i]) / count


@jit
def lazy_mean_of(u, base, corr, c, center, sum_tau, count, out):
    """:func:`lazy_mean` for Python callers, with the lazy sum's arrays as plain
    arguments (numba's typing of a named tuple argument in Python, at every call,
    costs more than the kernel)."""
    lazy_mean(LazySum(u, base, corr), c, center, sum_tau, count, out)


# ------------------------------------------------ dense products, weights, merging


@jit(fastmath=REASSOC, inline="always")
def lazy_axpy(u, corr, c, coef, idx, val, nrm2, nrm1):
    r"""``u += coef * x`` leaving the running sum unchanged (``corr += c * coef * x``).

    The row x is sparse (``idx``, ``val``) or dense (``idx`` None); a dense row's zeros
    change nothing. Returns :math:`\|u\|_2^2` and :math:`\|u\|_1`, updated from the
    changed entries (the learners that need the number of non-zeros count it
    themselves, :func:`aucstream._saddle.l1_change`). Inlined into the kernels (a call
    costs a reference count per array).
    """
    if idx is None:  # a dense row: the norms summed in a pass that only reads (the
        # stores' pass would sum in an order that depends on where u and corr lie in
        # memory: "Sums" in aucstream._kernels); the same floats as one pass
        for a in range(val.shape[0]):
            old = u[a]
            new = old + coef * val[a]
            nrm2 += new * new - old * old
            nrm1 += abs(new) - abs(old)
        for a in range(val.shape[0]):
            du = coef * val[a]
            u[a] += du
            corr[a] += c * du
        return nrm2, nrm1
    for a in range(val.shape[0]):
        i = col(idx, a)  # (typed for a dense row too: numba types both branches)
        du = coef * val[a]
        old = u[i]
        new = old + du
        u[i] = new
        corr[i] += c * du
        nrm2 += new * new - old * old
        nrm1 += abs(new) - abs(old)
    return nrm2, nrm1


def mean_by_count(a, n_a, b, n_b):
    """``(n_a a + n_b b) / (n_a + n_b)``: how two learners' points combine in ``merge``.

    ``a`` and ``b`` are numbers or arrays of the same shape, ``n_a`` and ``n_b`` the
    examples each has seen (not both 0). Two points of a convex set combine into a
    point of that set (a ball, a box), so a merged iterate stays feasible.
    """
    total = n_a + n_b
    return (n_a / total) * a + (n_b / total) * b


# ----------------------------------------------------- class weights under sample_weight
# Learners that estimate class rates or class weights from counts (SOLAM, FSAUC,
# UnivariateOnline) count the examples learnt per class in integer arrays (as in model
# files of aucstream 0.1) and the weights learnt per class in two float scalars,
# ``weight_neg_`` and ``weight_pos_``. Files written before the scalars existed (where
# every weight was 1) get them from the counts when loaded (``upgrade_class_totals``).
#: Forgetting (``half_life``) shrinks the class weight totals geometrically; a positive
#: total stays at least this (the smallest normal float64), so that a class seen long
#: ago still counts as seen (:func:`check_class_totals`).
TOTAL_FLOOR = float(np.finfo(np.float64).tiny)
#: The least factor one example shrinks the past by under forgetting (64 half-lives at
#: once): a heavier example, or a half-life under 1/64 example, forgets the past down
#: to 2^-64 of its weight, not to 0 (which would leave no finite scale to fold).
DECAY_MIN = 2.0**-64


@jit(inline="always")
def decay_factor(decay, weight):
    r"""What an example of weight :math:`\omega` does to the past under forgetting:
    :math:`\gamma^\omega` (:math:`\omega` examples of weight 1 in a row), with
    :math:`\gamma` = ``decay`` = :func:`aucstream._params.decay_per_example`, at least
    :data:`DECAY_MIN`."""
    return max(decay if weight == 1.0 else decay**weight, DECAY_MIN)


@jit(inline="always")
def decay_totals(totals, factor):
    """Both class weight totals ``[W-, W+]`` shrink by ``factor``; a positive one stays
    at least :data:`TOTAL_FLOOR`."""
    for c in range(2):
        if totals[c] > 0.0:
            totals[c] = max(totals[c] * factor, TOTAL_FLOOR)


def start_class_totals(learner) -> None:
    """No weight learnt yet: ``weight_neg_ = weight_pos_ = 0``."""
    learner.weight_neg_ = learner.weight_pos_ = 0.0


def class_totals(learner, out: np.ndarray | None = None) -> np.ndarray:
    """``[W-, W+]``, the weights learnt per class, as a new float64 array (or written
    into ``out``, float64 of 2, and returned)."""
    if out is None:
        return np.array([learner.weight_neg_, learner.weight_pos_], dtype=np.float64)
    out[0], out[1] = learner.weight_neg_, learner.weight_pos_
    return out


def store_class_totals(learner, totals) -> None:
    """Keep ``[W-, W+]`` (as updated by a kernel) in the learner's scalars."""
    learner.weight_neg_, learner.weight_pos_ = float(totals[0]), float(totals[1])


def upgrade_class_totals(learner, counts) -> None:
    """A file of aucstream 0.1 learnt every example with weight 1: totals = counts."""
    store_class_totals(learner, np.asarray(counts, dtype=np.float64))


def check_example_counts(learner) -> tuple[int, int]:
    """A loaded ``counts_`` must be ``[t, positives]`` with ``0 <= positives <= t <=
    n_samples_seen_``. Returns ``(t, positives)``; raises ValueError."""
    t, pos = (int(c) for c in learner.counts_)
    if not 0 <= pos <= t <= learner.n_samples_seen_:
        raise ValueError(
            f"counts_ {learner.counts_.tolist()} are not counts of examples and positives "
            f"among the {learner.n_samples_seen_} seen"
        )
    return t, pos


def check_class_totals(learner, counts) -> None:
    """A loaded ``weight_neg_``/``weight_pos_`` must be finite, >= 0, and positive
    exactly for the classes with examples learnt (``counts``). Raises ValueError."""
    for name, count in (("weight_neg_", counts[0]), ("weight_pos_", counts[1])):
        value = getattr(learner, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{name} is not a number: {value!r}")
        if not (value >= 0.0 and value < float("inf")) or (value > 0.0) != (count > 0):
            raise ValueError(f"{name} = {value!r} does not fit {int(count)} examples learnt")
