"""SAdaOAM's step (D16 §3.3, Alg. 2), compiled: l1-regularized AdaGrad with lazy updates.

The kernels of :class:`aucstream.adaoam.SAdaOAM`; the formulas, and which coordinates
may be left lazy, are derived in the module docstring of :mod:`aucstream.adaoam`.

- :func:`_l1_coord`: one coordinate of AdaGrad's composite mirror-descent step with
  l1 (also behind :func:`aucstream.adaoam.adagrad_l1_step`);
- :func:`_shrunk`, :func:`_catch_up`, :func:`_caught_up_dot`, :func:`_caught_up`: the
  shrinkage a lazy coordinate owes for the steps since it was last brought up to date;
- :func:`_active_coordinates`, :func:`_sparse_gradient`, :func:`_l1_updates`: one step
  over the coordinates whose gradient may be non-zero, from the exact sparse class
  summaries (:class:`aucstream.covariance.ExactSparseCovariance`);
- :func:`_sadaoam_example` and :func:`_sadaoam_chunk`: an example, and the rows of a
  chunk (stopping where a class's summary must reserve room first);
- the running column scale (``column_scale="max_abs"``; module docstring of
  :mod:`aucstream.adaoam`): :func:`_grow_scale` and, in every function above that
  moves a coordinate, its step taken in the scaled column (weights stored in the
  raw columns' units, ``state.colscale`` empty when off);
- forgetting (``half_life``), shared with AdaOAM's kernel: :func:`forget_weight` (the
  weight an example joins its class's summary with) and :func:`advance_clocks` (the
  class clocks, and the exact rescaling of a summary by :func:`rescale_summary`); the
  equations are in the module docstring of :mod:`aucstream.adaoam`.
"""

from __future__ import annotations

import math

from ._kernels import register_overload, sparse_axpy, sparse_dot
from .covariance import (
    ExactSparseArrays,
    FullArrays,
    add_example,
    borrowing_njit,
    borrowing_step,
    own_and_opposite,
    sparse_room,
    sparse_scatter_add,
)

#: A class clock runs in [0, CLOCK_SPAN): when it reaches CLOCK_SPAN the summary is
#: multiplied by 2^-CLOCK_SPAN (exact in binary floating point) and the clock goes back.
CLOCK_SPAN = 32.0
#: Below this total weight a summary is not rescaled any more (its mass, relative to
#: the next example of its class, is under 2^-224: far below rounding).
NEGLIGIBLE_WEIGHT = 2.0**-224


def rescale_summary(arrays, factor):
    """Multiply the weighted statistics of a summary (W, s, P) by ``factor`` (compiled
    code only; implemented for the exact full and sparse summaries)."""
    raise NotImplementedError("rescale_summary is called from compiled code only")


def _rescale_full(arrays, factor):
    arrays.weight[0] *= factor
    sums, upper, held = arrays.sums, arrays.scatter, arrays.pending_weight
    for i in range(sums.shape[0]):
        sums[i] *= factor
        row = upper[i, i:]  # the upper triangle only is P
        for j in range(row.shape[0]):
            row[j] *= factor
    for p in range(arrays.n_pending[0]):
        held[p] *= factor  # held-back rows x_p carry their weight here


def _rescale_sparse(arrays, factor):
    arrays.weight[0] *= factor
    sums, vals = arrays.sums, arrays.table.vals
    for i in range(sums.shape[0]):
        sums[i] *= factor
    for pos in range(arrays.table.info[0]):
        vals[pos] *= factor


def _rescale_typer(arrays, factor):
    kind = getattr(arrays, "instance_class", None)
    if kind is FullArrays:
        return _rescale_full
    if kind is ExactSparseArrays:
        return _rescale_sparse
    return None


register_overload(rescale_summary, _rescale_typer)


@borrowing_step
def forget_weight(clocks, c, step, omega):
    """The weight ``omega 2^E_c`` with which an example joins class ``c``'s summary
    when forgetting (``step = 1/h > 0``; after :func:`advance_clocks`), else
    ``omega`` unchanged."""
    if step == 0.0:
        return omega
    return omega * 2.0 ** clocks[c]


@borrowing_step
def advance_clocks(classes, clocks, step):
    """One example of the stream arrives (``step = 1/h``; nothing when 0): each class
    clock advances by ``step``; a clock that passes CLOCK_SPAN goes back by it (as many
    times as it passed it) while its summary is multiplied by 2^-CLOCK_SPAN as many
    times, or until its weight is negligible."""
    if step == 0.0:
        return
    for c in range(2):
        e = clocks[c] + step
        if e >= CLOCK_SPAN:
            wraps = math.floor(e / CLOCK_SPAN)
            e = max(0.0, e - wraps * CLOCK_SPAN)
            while wraps > 0 and classes[c].weight[0] >= NEGLIGIBLE_WEIGHT:
                rescale_summary(classes[c], 2.0**-CLOCK_SPAN)
                wraps -= 1
        clocks[c] = e


@borrowing_step
def _l1_coord(w, g, h, eta, eta_theta):
    """One coordinate of AdaGrad's composite mirror-descent step with l1 (D16 §3.3)."""
    u = w - eta * g / h
    a = abs(u) - eta_theta / h
    if a > 0.0:
        return math.copysign(a, u)
    return 0.0


@borrowing_step
def _shrunk(wi, n, eta_theta, h):
    """w_i after n steps whose gradient coordinate was 0 (D16 §3.3, last paragraph):
    ``sign(w_i) max(0, |w_i| - n eta theta / h_i)``."""
    a = abs(wi) - n * eta_theta / h
    return math.copysign(a, wi) if a > 0.0 else 0.0


@borrowing_step
def _shrunk_in(colscale, i, wi, n, eta_theta, h):
    """:func:`_shrunk` of coordinate i, in its running scale when ``colscale`` is
    not empty (the scaled weight :math:`s_i w_i` shrinks; w stays in raw units)."""
    if colscale.shape[0] == 0:
        return _shrunk(wi, n, eta_theta, h)
    if n == 0 or wi == 0.0:
        return wi
    c = colscale[i]
    return _shrunk(wi * c, n, eta_theta, h) / c


@borrowing_step
def _catch_up(w, s, last, i, now, eta_theta, delta, colscale):
    """Bring coordinate i up to date at step ``now``: apply the shrinkage it owes
    since ``last[i]``."""
    n = now - last[i]
    if n > 0:
        if w[i] != 0.0:
            w[i] = _shrunk_in(colscale, i, w[i], n, eta_theta, delta + math.sqrt(s[i]))
        last[i] = now


@borrowing_step
def _caught_up_dot(state, idx, val, eta_theta, delta):
    """``w^T x`` with the coordinates of x brought up to date (state unchanged)."""
    w, s, last, colscale = state.w, state.s, state.last, state.colscale
    now = state.steps[0]
    acc = 0.0
    for a in range(idx.shape[0]):
        i = idx[a]
        if w[i] != 0.0:
            h = delta + math.sqrt(s[i])
            acc += _shrunk_in(colscale, i, w[i], now - last[i], eta_theta, h) * val[a]
    return acc


@borrowing_njit
def _caught_up(state, eta_theta, delta, out):
    """Write every coordinate of w, brought up to date, into ``out`` (state unchanged)."""
    w, s, last, colscale = state.w, state.s, state.last, state.colscale
    now = state.steps[0]
    for i in range(out.shape[0]):
        h = delta + math.sqrt(s[i])
        out[i] = _shrunk_in(colscale, i, w[i], now - last[i], eta_theta, h)


@borrowing_step
def _grow_scale(state, idx, val, eta_theta, delta):
    """Raise the running maximum of |x| of the row's columns, each brought up to date
    first (its owed shrinkage is in its old scale), keeping its scaled weight
    :math:`s_i w_i` (the raw weight times old over new scale)."""
    w, colscale, now = state.w, state.colscale, state.steps[0]
    for a in range(idx.shape[0]):
        i = idx[a]
        v = abs(val[a])
        c = colscale[i]
        if v > c:
            _catch_up(w, state.s, state.last, i, now, eta_theta, delta, colscale)
            if c > 0.0:
                w[i] *= c / v
            colscale[i] = v


@borrowing_step
def _active_coordinates(own, opp, idx, val, every_seen, active):
    """Write the coordinates whose gradient may be non-zero at this step into
    ``active`` (module docstring); return how many. ``own`` already holds x.
    ``every_seen`` (lam > 0, or forgetting): every feature seen so far."""
    seen, support = opp.seen, opp.support
    n_active = 0
    for q in range(opp.n_support[0]):
        active[n_active] = support[q]
        n_active += 1
    if every_seen:  # every feature seen so far
        own_support = own.support
        for q in range(own.n_support[0]):
            i = own_support[q]
            if not seen[i]:
                active[n_active] = i
                n_active += 1
    else:  # the opposite class's support and x's
        for a in range(idx.shape[0]):
            if val[a] != 0.0 and not seen[idx[a]]:
                active[n_active] = idx[a]
                n_active += 1
    return n_active


@borrowing_step
def _sparse_gradient(w, idx, val, y, opp, active, n_active, lam, pw, gbuf):
    """Write ``g_i = lam w_i + (Pw)_i/T - c_i (c^T w + alpha) + alpha x_i`` into
    ``gbuf`` for the active coordinates (opposite class ``opp``; ``pw`` receives
    ``P w``). ``gbuf`` and ``pw`` are zero outside the active coordinates. (With the
    running column scale the caller passes ``lam`` 0 and adds the regularization in
    the scaled column, :func:`_l1_updates`.)"""
    sums, support = opp.sums, opp.support
    inv_t = 1.0 / opp.weight[0]
    xw = sparse_dot(w, idx, val)
    cw = 0.0
    for q in range(opp.n_support[0]):
        i = support[q]
        cw += sums[i] * w[i]
    cw *= inv_t
    table = opp.table
    sparse_scatter_add(table, w, pw)
    alpha = (xw - cw) - y
    for q in range(n_active):
        i = active[q]
        gbuf[i] = lam * w[i] + pw[i] * inv_t - (sums[i] * inv_t) * (cw + alpha)
    sparse_axpy(gbuf, alpha, idx, val)


@borrowing_step
def _l1_updates(state, active, n_active, gbuf, pw, omega, settings):
    r"""AdaGrad's l1 step of every active coordinate from the gradient ``omega *
    gbuf`` (``gbuf`` cleared, with ``pw``, for the next step); they are up to date
    after this step. With the running column scale s the step is AdaGrad's on the
    scaled column: gradient :math:`\omega\,(\lambda s_i w_i + g_i / s_i)` (``gbuf``
    holds the loss part :math:`g_i` in raw units) for the scaled weight
    :math:`s_i w_i` (a column never non-zero, s = 0, does not move)."""
    now = state.steps[0]
    w, s, last, colscale = state.w, state.s, state.last, state.colscale
    eta, delta = settings.eta, settings.delta
    eta_theta = eta * settings.theta
    scaled = colscale.shape[0] > 0
    for q in range(n_active):
        i = active[q]
        g = omega * gbuf[i]  # exact when omega = 1
        gbuf[i] = 0.0
        pw[i] = 0.0
        wi, c = w[i], 1.0
        if scaled:
            c = colscale[i]
            if c == 0.0:
                last[i] = now + 1
                continue
            wi = wi * c
            g = omega * settings.lam * wi + g / c
        if settings.gamma < 1.0:  # forgetting: s decays by gamma per example
            s[i] *= settings.gamma
        s[i] += g * g
        wi = _l1_coord(wi, g, delta + math.sqrt(s[i]), eta, eta_theta)
        w[i] = wi / c if scaled else wi
        last[i] = now + 1
    state.steps[0] = now + 1


@borrowing_step
def _sadaoam_example(own, opp, state, idx, val, y, omega, added, settings, scratch):
    """One example of SAdaOAM: add it to its own class (with weight ``added``:
    ``omega``, or more when forgetting, :func:`forget_weight`), then, if the opposite
    class has examples, take the step; return False (nothing changed) when the own
    class's summary must reserve room first."""
    if not add_example(own, idx, val, added):
        return False
    eta_theta = settings.eta * settings.theta
    scaled = state.colscale.shape[0] > 0
    if scaled:
        _grow_scale(state, idx, val, eta_theta, settings.delta)
    if opp.count[0] == 0:
        return True
    pw, gbuf, active = scratch
    w, s, last = state.w, state.s, state.last
    n_active = w.shape[0]
    if settings.lazy:
        every_seen = settings.lam > 0.0 or settings.gamma < 1.0
        n_active = _active_coordinates(own, opp, idx, val, every_seen, active)
        now = state.steps[0]
        for q in range(n_active):
            _catch_up(w, s, last, active[q], now, eta_theta, settings.delta, state.colscale)
    lam = 0.0 if scaled else settings.lam
    _sparse_gradient(w, idx, val, y, opp, active, n_active, lam, pw, gbuf)
    _l1_updates(state, active, n_active, gbuf, pw, omega, settings)
    return True


@borrowing_njit
def _sadaoam_chunk(
    state, classes, indptr, indices, data, ys, pre, weights, start, settings, scratch
):
    """SAdaOAM (D16 Alg. 2) over rows ``start..``; returns the first row not processed.

    When ``pre`` has one entry per row, each row's score ``w^T x`` (with the lazy
    coordinates brought up to date) before it is learnt is written there. ``weights``
    is empty or holds the examples' weights (rows of weight 0 are not learnt).

    ``classes``: the two ``ExactSparseArrays``; ``scratch``: ``(pw, gbuf, active)``,
    two zero d-vectors and an int64 d-vector. A row is left unprocessed (and
    returned) when its class's sparse summary must reserve room first; the caller
    does and calls again from that row.
    """
    active = scratch[2]
    if not settings.lazy:  # every coordinate, always
        for i in range(active.shape[0]):
            active[i] = i
    n = indptr.shape[0] - 1
    scores = pre.shape[0] == n
    weighted = weights.shape[0] == n
    eta_theta = settings.eta * settings.theta
    for r in range(start, n):
        lo, hi = indptr[r], indptr[r + 1]
        if scores:  # rewritten with the same w when the row is resumed
            pre[r] = _caught_up_dot(state, indices[lo:hi], data[lo:hi], eta_theta, settings.delta)
        omega = weights[r] if weighted else 1.0
        if omega == 0.0:
            continue
        own, opp = own_and_opposite(classes, ys[r])
        if not sparse_room(own, indices[lo:hi], data[lo:hi]):
            return r  # nothing changed: the caller makes room and resumes here
        advance_clocks(classes, state.clocks, settings.step)
        added = forget_weight(state.clocks, 1 if ys[r] > 0 else 0, settings.step, omega)
        _sadaoam_example(
            own, opp, state, indices[lo:hi], data[lo:hi], ys[r], omega, added, settings, scratch
        )  # the room is there: it adds the example
    return indptr.shape[0] - 1
