r"""The compiled passes of :class:`~aucstream.preprocessing.OnlineStandardScaler`.

Per column, the running count, mean and sum of squared deviations (Chan, Golub &
LeVeque's pairwise update; West's weighted update when forgetting), the transform of a
value with the statistics of the rows before it, and the passes over a dense block (a
row at a time, vectorized over the columns) and a CSR block (value by value), with the
same floats. The estimator, its checks and its transactions are in
:mod:`aucstream.preprocessing._standard`.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .._kernels import jit, prefetch

_EPS = float(np.finfo(np.float64).eps)
#: How many values ahead the CSR pass asks for a column's statistics (:func:`_pass_csr`;
#: 4, 6, 8, 12, 16, 32 and 64 tried at 10^6 columns, 50 values a row: 8 the fastest).
_AHEAD = 8

#: Running statistics of every column, as the kernels read them: ``count[j]`` rows are
#: summarized by their mean ``mean[j]`` and sum of squared deviations ``m2[j]``.
_Stats = namedtuple("_Stats", "count mean m2")
#: How a value is transformed: subtract the mean, divide by the standard deviation,
#: clip to ``[-clip, clip]`` (``inf`` for no clipping); ``decay`` is the factor
#: :math:`\gamma = 2^{-1/h}` by which each row shrinks the weight of the rows before it
#: (1.0: no forgetting, the exact statistics).
_Options = namedtuple("_Options", "centered scaled clip decay")
#: The running state arrays and their dtypes.
_RUNNING_DTYPES = {
    "running_count_": np.int64,
    "running_mean_": np.float64,
    "running_m2_": np.float64,
}


# --------------------------------------------------------------------------- kernels
@jit
def _weight(n, decay):
    r"""The total weight of ``n`` rows, :math:`W_n = \sum_{i<n} \gamma^i =
    (1 - \gamma^n)/(1 - \gamma)` (``n`` itself without forgetting)."""
    if decay == 1.0:
        return float(n)
    return (1.0 - decay**n) / (1.0 - decay)


@jit
def _combine(w_a, mean_a, m2_a, w_b, mean_b, m2_b, fade):
    r"""Mean and sum of squared deviations of two disjoint sets of rows of weights
    ``w_a`` and ``w_b`` (counts without forgetting), pooled; the older set ``a`` faded
    by ``fade`` (:math:`\gamma^{k_b}` for the :math:`k_b` rows of ``b``; 1 without
    forgetting).

    With :math:`w'_a = \text{fade}\,w_a`, :math:`M'_a = \text{fade}\,M_a`,
    :math:`w = w'_a + w_b` and :math:`\delta = \mu_b - \mu_a`:
    :math:`\mu = \mu_a + \delta w_b / w` and
    :math:`M = M'_a + M_b + \delta^2 w'_a w_b / w`: Chan, Golub & LeVeque's pairwise
    update, weighted as West's. Counts below :math:`2^{53}` are exact floats, so a
    count's float gives the floats of the integer formula.
    """
    w_a = w_a * fade
    m2_a = m2_a * fade
    if w_b == 0.0:
        return mean_a, m2_a
    if w_a == 0.0:
        return mean_b, m2_b
    share = w_b / (w_a + w_b)
    delta = mean_b - mean_a
    return mean_a + delta * share, m2_a + m2_b + delta * delta * (w_a * share)


@jit
def _caught_up(count, mean, m2, n, decay):
    """A column's statistics over ``n`` rows: it absorbs the zeros of the rows it skipped."""
    if decay == 1.0:
        return _combine(float(count), mean, m2, float(n - count), 0.0, 0.0, 1.0)
    skipped = n - count
    if skipped == 0:  # a dense column: nothing to absorb
        return mean, m2
    fade = decay**skipped  # (one power for the fade and _weight(skipped, decay))
    return _combine(_weight(count, decay), mean, m2, (1.0 - fade) / (1.0 - decay), 0.0, 0.0, fade)


@jit
def _center_scale(n, w, mean, m2, options):
    r"""``(offset, scale)`` of a column over ``n`` rows of total weight ``w``
    (:func:`_weight`, computed once for every column of a row); ``scale == 0``: no
    usable scale.

    A column has no usable scale while its variance is within the rounding error of a
    constant column's, :math:`\sigma^2 \le n\varepsilon\sigma^2 + (n\varepsilon\mu)^2`
    (scikit-learn's bound); this covers every column before its second row.
    """
    offset = mean if options.centered else 0.0
    if not options.scaled:
        return offset, 0.0 if options.centered and n == 0 else 1.0
    var = m2 / w if n > 0 else 0.0
    if var <= w * _EPS * var + (w * mean * _EPS) ** 2:
        return offset, 0.0
    return offset, np.sqrt(var)


@jit
def _standardize(x, offset, scale, clip):
    """``(x - offset) / scale`` clipped to ``[-clip, clip]``; 0 for no usable scale."""
    if scale == 0.0:
        return 0.0
    return min(max((x - offset) / scale, -clip), clip)


@jit
def _entry(count, mean, m2, x, n, w, options, learn, emit):
    """One value ``x`` of a column whose statistics are ``(count, mean, m2)``.

    Returns the value transformed with the statistics of ``n`` rows (if ``emit``) and
    the column's statistics over ``n + 1`` rows with ``x`` learnt (if ``learn``; over
    ``n`` rows otherwise). ``w`` is the ``n`` rows' total weight (:func:`_weight`),
    the same for every column of a row: the loops below compute it once a row (with
    forgetting a power, which per value made the pass three times slower). Scalars
    only: the loops read and write the arrays.
    """
    mean, m2 = _caught_up(count, mean, m2, n, options.decay)
    z = 0.0
    if emit:
        offset, scale = _center_scale(n, w, mean, m2, options)
        z = _standardize(x, offset, scale, options.clip)
    if learn:  # (w: the n rows' weight, n itself without forgetting)
        mean, m2 = _combine(w, mean, m2, 1.0, x, 0.0, options.decay)
    return z, mean, m2


#: The ``learnt`` of a pass that learns every row it learns (:func:`_pass_dense`).
EVERY_ROW = np.empty(0, dtype=np.bool_)


@jit(error_model="numpy")
def _pass_dense(X, out, stats, n_seen, options, learn, emit, learnt):
    """Every row of the dense block ``X`` in order (``out[r]`` = transformed row ``r``).

    ``learnt`` (with ``learn``): whether each row is learnt; empty: every row. A row
    not learnt is transformed with the statistics of the rows learnt before it and
    leaves them as they were (a row of weight 0 of a weighted pipeline's call:
    ``aucstream.evaluation._prequential_weave``).

    The floats of :func:`_entry` value by value, computed a row at a time: the
    columns first catch up with the rows they skipped (:func:`_caught_up`, a stream
    whose earlier chunks were sparse; a no-op otherwise, and after a learnt row), then
    each row is transformed (:func:`_emit_row`) and learnt (:func:`_learn_row`) with
    what every column of it shares (its weight, the step of the update) computed once,
    in loops over the columns without a branch or a call, which the compiler
    vectorizes (the loop of :func:`_entry` per value did not). Compiled with numba's
    ``error_model="numpy"``, which lets the divisions vectorize: none of them has a
    zero divisor (the rows' weight ``w > 0`` when ``n > 0``, a scale is divided by only
    when usable, hence positive, and the steps divide by ``n + 1`` and ``w_a + 1``), so
    the floats are those of the checked division. ``tests/test_scaler_passes.py``
    holds the two paths to the same bits."""
    count, means, m2s = stats
    rows, d = X.shape
    if rows == 0:
        return
    if learn:
        mean, m2 = means, m2s  # (each row's statistics are the next row's)
    else:
        mean, m2 = np.empty(d), np.empty(d)
    _dense_rows(X, out, stats, n_seen, options, learn, emit, learnt, (mean, m2))


@jit(error_model="numpy", borrowing=True)
def _dense_rows(X, out, stats, n_seen, options, learn, emit, learnt, current):
    """:func:`_pass_dense`'s loop, the statistics it updates (``current``: the
    columns' own when it learns, copies otherwise) given: compiled without reference
    counts (the views of each row counted theirs at every row)."""
    count, means, m2s = stats
    mean, m2 = current
    rows, d = X.shape
    for j in range(d):
        mean[j], m2[j] = _caught_up(count[j], means[j], m2s[j], n_seen, options.decay)
    every = learnt.shape[0] == 0
    n = n_seen
    for r in range(rows):
        w = _weight(n, options.decay)
        if emit:
            _emit_row(X[r], out[r], mean, m2, n, w, options)
        if learn and (every or learnt[r]):
            _learn_row(X[r], mean, m2, n, w, options.decay)
            n += 1
    if learn:
        count[:] = n


@jit(inline="always")
def _emit_row(x, z, mean, m2, n, w, options):
    """``z`` = the row ``x`` transformed with the columns' statistics ``mean``, ``m2``
    over ``n`` rows of weight ``w``: :func:`_center_scale` then :func:`_standardize`,
    the same floats, branch-free over the columns when the columns are scaled."""
    if not (options.scaled and n > 0):  # (every column the same case: per value)
        for j in range(x.shape[0]):
            offset, scale = _center_scale(n, w, mean[j], m2[j], options)
            z[j] = _standardize(x[j], offset, scale, options.clip)
        return
    clip, centered = options.clip, options.centered
    for j in range(x.shape[0]):
        mu = mean[j]
        var = m2[j] / w
        usable = not (var <= w * _EPS * var + (w * mu * _EPS) ** 2)
        q = (x[j] - (mu if centered else 0.0)) / (np.sqrt(var) if usable else 1.0)
        z[j] = min(max(q, -clip), clip) if usable else 0.0


@jit(inline="always")
def _learn_row(x, mean, m2, n, w, decay):
    """The columns' statistics with the row ``x`` learnt after ``n`` rows of weight
    ``w``: :func:`_combine` of each column
    with the one value, the same floats, with the row's share and factors computed
    once."""
    if decay == 1.0:
        first = n == 0
        share = np.int64(1) / (n + np.int64(1))
        fade, k = 1.0, n * share
    else:
        w_a = w * decay
        first = w_a == 0.0
        share = 1.0 / (w_a + 1.0)
        fade, k = decay, w_a * share
    if first:  # (the first row: its values, no deviation)
        for j in range(x.shape[0]):
            mean[j], m2[j] = x[j], 0.0
        return
    for j in range(x.shape[0]):
        delta = x[j] - mean[j]
        mean[j] = mean[j] + delta * share
        m2[j] = m2[j] * fade + 0.0 + delta * delta * k


@jit
def _pass_csr(indptr, indices, data, out, stats, n_seen, options, learn, emit, learnt):
    """Every row of a CSR block in order; ``out[a]`` = transformed ``data[a]``
    (``learnt`` as in :func:`_pass_dense`).

    Each value reads and writes its column's three statistics, at addresses as random
    as the column indices: on a wide stream (hashed features, 10^6 columns) they miss
    the caches, so the pass asks for the statistics of the column ``_AHEAD`` values
    later (:func:`aucstream._kernels.prefetch`, a hint that reads nothing), whose
    latency then overlaps the arithmetic in between; the floats are unchanged.
    ``indptr`` has at least one entry (a CSR block's), and the structure was checked:
    ``indices[a + _AHEAD]`` lies inside the block."""
    count, means, m2s = stats
    end = indptr[indptr.shape[0] - 1] - _AHEAD  # (the values with one _AHEAD after them)
    every = learnt.shape[0] == 0
    n = n_seen
    for r in range(indptr.shape[0] - 1):
        w = _weight(n, options.decay)
        row_learnt = learn and (every or learnt[r])
        for a in range(indptr[r], indptr[r + 1]):
            if a < end:  # a column read _AHEAD values later, into the cache by then
                k = indices[a + _AHEAD] * 8
                prefetch(count, k)
                prefetch(means, k)
                prefetch(m2s, k)
            j = indices[a]
            z, mean, m2 = _entry(
                count[j], means[j], m2s[j], data[a], n, w, options, row_learnt, emit
            )
            if row_learnt:
                count[j], means[j], m2s[j] = n + 1, mean, m2
            if emit:
                out[a] = z
        if row_learnt:
            n += 1


@jit
def _columns(stats, n, options):
    """Every column's ``(mean, m2, offset, scale)`` over ``n`` rows, as arrays."""
    count, means, m2s = stats
    d = means.shape[0]
    mean, m2, offset, scale = np.empty(d), np.empty(d), np.empty(d), np.empty(d)
    w = _weight(n, options.decay)
    for j in range(d):
        mean[j], m2[j] = _caught_up(count[j], means[j], m2s[j], n, options.decay)
        offset[j], scale[j] = _center_scale(n, w, mean[j], m2[j], options)
    return mean, m2, offset, scale


@jit
def _merge_columns(mean_a, m2_a, n_a, mean_b, m2_b, n_b, decay):
    """Per-column :func:`_combine` of two complete sets of statistics; with forgetting,
    ``b``'s rows come after ``a``'s."""
    d = mean_a.shape[0]
    mean, m2 = np.empty(d), np.empty(d)
    w_a, w_b, fade = _weight(n_a, decay), _weight(n_b, decay), decay**n_b
    for j in range(d):
        mean[j], m2[j] = _combine(w_a, mean_a[j], m2_a[j], w_b, mean_b[j], m2_b[j], fade)
    return mean, m2
