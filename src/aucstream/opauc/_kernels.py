r"""OPAUC's compiled per-example kernels (the mathematics is in :mod:`aucstream.opauc`).

- :func:`_opauc_chunk`: the exact kinds, G13 Eqs. 3-5 / G16 Alg. 1 with the opposite
  class's summary applied as :math:`\hat\Gamma w` (compiled without reference counts),
  and :func:`_opauc_sparse_chunk` the same for the sparse kind (Alg. 3);
- :func:`_opauc_lowrank_chunk`: the low-rank kinds (randomized, hash, frequent
  directions), the weights kept in the implicit form described in
  :mod:`aucstream.opauc` and updated in named steps over small bundles.

Both write each row's score before learning it (``pre``) and scale the step by the
row's weight.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from .._calibration import step as calibration_step
from .._kernels import (
    REASSOC,
    SCALE_MAX,
    SCALE_MIN,
    col,
    jit,
    n_rows,
    prefetch_rows,
    row,
    sparse_axpy,
    sparse_dot,
    squared_norm,
)
from ..covariance import (
    CENTERED_SKETCH,
    add_example,
    borrowing_njit,
    borrowing_step,
    center_terms,
    cov_matvec,
    fd_column,
    fd_insert,
    fd_tdot,
    lowrank_add_stats,
    own_and_opposite,
    single_nonzero,
    sketch_pair_tdot,
    sketch_pair_tdot_add,
    sketch_tdot,
)

#: The implicit weights of the low-rank kinds and the products maintained with them
#: (module docstring). Class 0 is the negative class, 1 the positive one: ``v``
#: (d,), ``p`` (2, tau), ``gamma`` (2,), ``scale`` (1,) give
#: ``w = scale * (v + Z_0 p_0 + Z_1 p_1 + gamma_0 s_0 + gamma_1 s_1)``; ``zz`` =
#: :math:`Z_0^\top Z_1`, ``zs[a, b]`` = :math:`Z_a^\top s_b`, ``ss[a, b]`` =
#: :math:`s_a^\top s_b`, ``zv[a]`` = :math:`Z_a^\top v`, ``sv[a]`` = :math:`s_a^\top v`.
Implicit = namedtuple("Implicit", ["v", "p", "gamma", "scale", "zz", "zs", "ss", "zv", "sv"])

#: Settings of the low-rank kernel: step size, lambda, the summaries' centering code
#: (``aucstream.covariance.CENTER_*``), whether they fill columns (frequent
#: directions), the re-basing period, whether to prefetch the next example's rows
#: (:data:`PREFETCH_BYTES`), the half-life of forgetting (0.0: none) and the largest
#: exponent of its weights before a rescaling (:data:`FORGET_LIMIT`).
LowRankSettings = namedtuple(
    "LowRankSettings",
    [
        "eta",
        "lam",
        "center",
        "fills_columns",
        "rebase_every",
        "prefetch",
        "half_life",
        "forget_limit",
    ],
)

#: The kernel prefetches the next example's rows of the sketches, class sums and v
#: only when the two sketches together take more than this many bytes. Prefetching
#: costs some 850 instructions per example (k = 50, tau = 50), which pay when the rows
#: come from memory and cost when they are in the caches (``benchmarks/bench_highdim.py``
#: runs the hashed sketch at d = 2,000, 10^5 and 10^6 with and without it: reported in
#: docs/benchmarks.md). Prefetching changes no result.
PREFETCH_BYTES = 4 << 20

#: Scratch vectors of the low-rank kernel (tau = sketch size), in two arrays: ``rows``
#: (6, tau) holds, row by row, ``zx`` (rows 0 and 1: :math:`Z_a^\top x` of the current
#: example), ``a`` (row :data:`_A`: the coefficients of the column its class's sketch
#: gains), ``zoz`` (row :data:`_ZOZ`: :math:`Z_o^\top z`), ``q`` (row :data:`_Q`:
#: :math:`Z_o^\top w`) and ``phi`` (row :data:`_PHI`: the centering coefficients of
#: the opposite class o); ``sx`` (2,) holds :math:`s_a^\top x`. One array for six
#: vectors because numba passes each array argument as its separate fields (7 words
#: for a vector, 9 for a matrix) on the stack at every call that is not inlined: the
#: per-example steps below take the one block and the arrays of the bundles they use,
#: rather than whole bundles (some 250 words a call, a large part of the kernel
#: body's time before; docs/results/highdim_bench.md, 2026-11-29).
Scratch = namedtuple("Scratch", ["rows", "sx"])

#: The rows of ``Scratch.rows`` after ``zx`` (rows 0 and 1).
_A, _ZOZ, _Q, _PHI = 2, 3, 4, 5

#: Why the low-rank kernel returned: the chunk is done; a frequent-directions sketch
#: is full and must be shrunk; the implicit weights are due for re-basing; the
#: forgetting weights must be rescaled (:func:`forgetting_weight`).
_DONE, _SHRINK, _REBASE, _RESCALE = 0, 1, 2, 3


# ------------------------------------------------------- exact and sparse kinds
@borrowing_step
def _opauc_step(w, idx, val, y, opp, cov_w, c_w, eta, lam, colscale):
    r"""w <- w - eta * (lam w + S w + (e.w - y) e), e = x - c (opposite class ``opp``).

    ``cov_w`` is ``S w`` and ``c_w`` is ``c^T w`` of the opposite class, both at the
    current w; ``c = opp.sums / W`` (W = ``opp.weight``, the class's total weight).
    With a running column scale s (``colscale`` non-empty; package docstring,
    "Columns in their running scale") the loss part of the step is taken in the
    scaled columns: :math:`w \leftarrow (1 - \eta\lambda) w - \eta D^2 (S w +
    \alpha e)`, :math:`D = \operatorname{diag}(1/s)` (0 where s = 0).

    The scaled loop divides with ``np.true_divide`` (the same IEEE division, which
    numba compiles without its zero check, so that the loop vectorizes) and raises
    ZeroDivisionError after it when a column's :math:`s^2` underflowed to 0, as
    ``/`` raised in it (the caller puts the state back either way).
    """
    inv_t = 1.0 / opp.weight[0]
    alpha = (sparse_dot(w, idx, val) - c_w) - y  # e^T w - y
    shrink = 1.0 - eta * lam
    sums = opp.sums
    if colscale.shape[0] == 0:
        for i in range(w.shape[0]):
            w[i] = shrink * w[i] - eta * cov_w[i] + eta * alpha * sums[i] * inv_t
        sparse_axpy(w, -eta * alpha, idx, val)
        return
    underflow = False
    for i in range(w.shape[0]):
        s = colscale[i]
        square = s * s
        q = np.true_divide(eta, square) if s > 0.0 else 0.0
        underflow |= s > 0.0 and square == 0.0
        w[i] = shrink * w[i] - q * (cov_w[i] - alpha * sums[i] * inv_t)
    if underflow:
        raise ZeroDivisionError("division by zero")
    for a in range(val.shape[0]):
        i = col(idx, a)
        s = colscale[i]
        if s > 0.0:
            w[i] -= eta * alpha * val[a] / (s * s)


@borrowing_step
def grow_column_scale(w, colscale, idx, val):
    """Raise each column's running maximum of |x| to the row's, keeping the weights
    of the scaled columns (:math:`\tilde w_i = s_i w_i`): a column whose scale grows
    from :math:`s > 0` to :math:`s'` has its weight multiplied by :math:`s/s'`."""
    for a in range(val.shape[0]):
        v = abs(val[a])
        i = col(idx, a)
        s = colscale[i]
        if v > s:
            if s > 0.0:
                w[i] *= s / v
            colscale[i] = v


@borrowing_njit
def forgetting_weight(forget, half_life):
    r"""The weight :math:`g_t = 2^{t/h - E}` under which the example at clock t
    (``forget[0]``) enters its class's summary, ``forget[1]`` = E the exponent the
    stored statistics are relative to (:data:`FORGET_LIMIT`); 1.0 without forgetting
    (``half_life`` 0). :math:`2^{t/h - q}` with :math:`q = \lfloor t/h \rfloor` is
    computed from t alone and scaled by the exact power :math:`2^{q - E}`, so the
    weight does not depend on when E last changed: returns ``(g, q - E)``."""
    if half_life == 0.0:
        return 1.0, 0
    ratio = forget[0] / half_life
    q = math.floor(ratio)
    shift = q - forget[1]
    return 2.0 ** (ratio - q) * math.ldexp(1.0, shift), shift


#: Forgetting keeps :math:`q - E` (:func:`forgetting_weight`) in [0, FORGET_LIMIT]: the
#: stored weights stay below :math:`2^{41}`, far from overflow also for a float32
#: scatter (the engine scales the stored statistics by an exact power of 2 when an
#: example would leave the range).
FORGET_LIMIT = 40

#: With forgetting, the low-rank kernel re-bases its implicit weights every
#: REBASE_HALF_LIVES half-lives of the stream (:func:`forgetting_rebase_due`): the
#: compensation terms of the implicit form grow as :math:`2^{t/h}` relative to w
#: between two re-basings (package docstring, "Forgetting").
REBASE_HALF_LIVES = 8


@borrowing_njit
def forgetting_rebase_due(clock, half_life):
    r"""Whether the low-rank implicit weights are re-based after the example that
    brought the forgetting clock to ``clock`` (> 0): when :math:`\max(\lfloor t/h
    \rfloor - 1, 0)` passes a multiple of :data:`REBASE_HALF_LIVES`, i.e. at the
    first example of half-lives 9, 17, 25, ... (where the stored weights were once
    rescaled, and re-based with them). A function of the clock alone, so chunking
    never moves it; never without forgetting (``half_life`` 0)."""
    if half_life == 0.0:
        return False
    now = max(math.floor(clock / half_life) - 1, 0) // REBASE_HALF_LIVES
    before = max(math.floor((clock - 1) / half_life) - 1, 0) // REBASE_HALF_LIVES
    return now > before


@jit
def _opauc_chunk(
    w, classes, rows, pre, weights, eta, lam, calibration, forget, colscale, half_life, start
):
    """OPAUC with exact summaries (G16 Alg. 1) over rows ``start:``; ``classes``: the
    two summaries' ``arrays()``; ``rows``: the chunk's :data:`aucstream._kernels.Rows`
    (CSR, or dense). When ``pre`` has one entry per row, each row's score ``w^T x``
    before it is learnt is written there, and fits the ``calibration``
    (:func:`aucstream._calibration.step`) once the row will not be resumed.
    ``weights`` is empty or holds the examples' weights (a row of weight 0 is not
    learnt; otherwise its statistics and its step are weighted: class docstring). With
    forgetting (``half_life`` > 0) each learnt row enters its summary with the weight
    :func:`forgetting_weight` gives at the clock ``forget[0]``, which then advances
    (package docstring, "Forgetting"). A non-empty ``colscale`` is the running maximum
    of each column's |x|, grown by each learnt row before its step, which then takes
    the columns in that scale (:func:`_opauc_step`).

    Returns the first row whose forgetting weight leaves [1, 2^FORGET_LIMIT] (the
    stored statistics must be rescaled) before it can take the example (or n when
    done)."""
    return _opauc_rows(
        w, classes, rows, pre, weights, eta, lam, calibration, forget, colscale, half_life,
        np.empty(w.shape[0]), start,
    )  # fmt: skip


@borrowing_njit
def _opauc_rows(
    w, classes, rows, pre, weights, eta, lam, calibration, forget, colscale, half_life, cov_w,
    start,
):  # fmt: skip
    """:func:`_opauc_chunk` with its work vector ``cov_w`` (d values, overwritten before
    each read) given: the one-row path binds one for all its calls
    (:func:`aucstream.opauc._full._full_packed`), where the chunk's call allocates it.
    Compiled without reference counts (exact summaries allocate nothing): the views of
    each row and of the summaries counted theirs at every row."""
    return _rows(
        w, classes, rows, pre, weights, eta, lam, calibration, forget, colscale, half_life,
        cov_w, start,
    )  # fmt: skip


@jit
def _opauc_sparse_chunk(
    w, classes, rows, pre, weights, eta, lam, calibration, forget, colscale, half_life, start
):
    """:func:`_opauc_chunk` for the sparse summaries (G16 Alg. 3), which allocate as
    they make room: compiled with reference counts. Returns also the first row whose
    class summary must reserve room before it can take the example."""
    return _rows(
        w, classes, rows, pre, weights, eta, lam, calibration, forget, colscale, half_life,
        np.empty(w.shape[0]), start,
    )  # fmt: skip


@jit(inline="always")
def _rows(
    w, classes, rows, pre, weights, eta, lam, calibration, forget, colscale, half_life, cov_w,
    start,
):  # fmt: skip
    """The loop of :func:`_opauc_rows` and :func:`_opauc_sparse_chunk` (each compiles
    its own copy, with or without reference counts)."""
    n = n_rows(rows)
    scores = pre.shape[0] == n
    weighted = weights.shape[0] == n
    for r in range(start, n):
        idx, val, y = row(rows, r)
        if scores:  # rewritten with the same w when the row is resumed
            pre[r] = sparse_dot(w, idx, val)
        omega = weights[r] if weighted else 1.0
        if omega == 0.0:
            continue
        g, shift = forgetting_weight(forget, half_life)
        if shift < 0 or shift > FORGET_LIMIT:
            return r
        own, opp = own_and_opposite(classes, y)
        if not add_example(own, idx, val, omega * g):
            return r
        if half_life != 0.0:
            forget[0] += 1
        if scores:  # (a step of weight 0 changes nothing)
            calibration_step(calibration, pre[r], y, omega)
        if colscale.shape[0] > 0:
            grow_column_scale(w, colscale, idx, val)
        if opp.count[0] > 0:
            c_w = cov_matvec(opp, w, cov_w)
            _opauc_step(w, idx, val, y, opp, cov_w, c_w, eta * omega, lam, colscale)
    return n


# ------------------------------------------------------------- low-rank kinds
@borrowing_step
def _add_to_v(v, zv, sv, idx, val, coef, rows, sx):
    """``v += coef x`` and the maintained ``Z_a^T v``, ``s_a^T v`` with it (from the
    example's ``Z_a^T x`` and ``s_a^T x`` in ``rows[:2]`` and ``sx``); O(k + tau)."""
    zx = rows[:2]
    sparse_axpy(v, coef, idx, val)
    for j in range(zv.shape[1]):
        zv[0, j] += coef * zx[0, j]
        zv[1, j] += coef * zx[1, j]
    sv[0] += coef * sx[0]
    sv[1] += coef * sx[1]


@borrowing_step
def _sketch_x(sketch, sums, beta, fills_columns, idx, val, rows, sx, b):
    r"""``zx[b]`` (``rows[b]``) = :math:`Z^\top x` and ``sx[b]`` = :math:`s^\top x` of
    class b's sketch and sum (frequent directions: :math:`Z = Y - s\beta^\top`);
    O(k tau)."""
    out = rows[b]
    if fills_columns:
        sx[b] = fd_tdot(sketch, sums, beta, idx, val, out)
    else:
        sketch_tdot(sketch, idx, val, out)
        sx[b] = sparse_dot(sums, idx, val)


@borrowing_step
def _sketch_and_add(pair, idx, val, rows, c, A, r, root, adding):
    r"""The linear sketches' products with x (``zx``: :math:`Z_0^\top x`,
    :math:`Z_1^\top x`) and, when ``adding``, class c's sketch gains :math:`x a^\top`
    with the draw ``a`` = ``A[r]`` times ``root`` (written into ``rows[_A]``, as
    :func:`_new_column`), in one pass over the rows of x's features in ``pair``, where
    both classes' sketches are interleaved (:func:`aucstream.covariance.sketch_pair`:
    one random read per feature serves both; :func:`aucstream.covariance.sketch_pair_tdot_add`):
    the rows of class c are written while they are in the cache, rather than read
    again."""
    if not adding:
        sketch_pair_tdot(pair, idx, val, rows[:2])
        return
    a = rows[_A]
    for j in range(a.shape[0]):
        a[j] = A[r, j] * root
    sketch_pair_tdot_add(pair, idx, val, rows[:2], c, a)


@borrowing_step
def _new_column(own, settings, xx, A, r, a, g):
    """The change ``z a^T`` that x brings to its class's sketch: write ``a``, return
    the coefficients ``(bx, bs)`` of ``z = bx x - bs s`` (s: the class sum before x).

    Linear sketches add ``x a^T`` with the example's draw ``A[r]`` times the square
    root of its forgetting weight g (1.0 without forgetting); frequent directions
    writes ``z`` (:func:`aucstream.covariance.fd_column`, the column of an example of
    weight g) into its first zero column (a = that unit vector, or 0 when nothing is
    inserted).
    """
    if settings.fills_columns:
        bx, bs = fd_column(own.weight, xx, settings.center == CENTERED_SKETCH, g)
        a[:] = 0.0
        if bx != 0.0:
            a[own.nfill[0]] = 1.0
        return bx, bs
    root = math.sqrt(g)
    for j in range(a.shape[0]):
        a[j] = A[r, j] * root
    return 1.0, 0.0


@borrowing_step
def _compensation(p, gamma, a, c, bx, bs, g):
    r"""Keep w fixed while class c gains :math:`z a^\top` and x of weight g (its sum
    :math:`g x`): :math:`Z_c p_c` gains :math:`(a^\top p_c)\,z = (a^\top p_c)(b_x +
    b_s g)x - (a^\top p_c) b_s s_c^{new}` and :math:`\gamma_c s_c` gains
    :math:`\gamma_c g x`, so :math:`\gamma_c` takes :math:`(a^\top p_c) b_s` more
    (done here) and v must take the returned multiple of x."""
    ap = 0.0
    for j in range(a.shape[0]):
        ap += a[j] * p[c, j]
    gamma_old = gamma[c]
    gamma[c] += ap * bs
    return -gamma_old * g - ap * (bx + bs * g)


@borrowing_step
def _update_products(zz, zs, ss, zv, sv, c, rows, sx, bx, bs, vx, xx, g):
    r"""The maintained products after class c gains :math:`z a^\top` and x of weight
    g (:math:`s_c \mathrel{+}= g x`; from the old :math:`Z^\top x`, :math:`s^\top x`,
    :math:`v^\top x`); return :math:`z^\top x`."""
    o = 1 - c
    zx, a, zoz = rows[:2], rows[_A], rows[_ZOZ]
    z_x = bx * xx - bs * sx[c]
    z_sc = bx * sx[c] - bs * ss[c, c]
    z_so = bx * sx[o] - bs * ss[c, o]
    z_v = bx * vx - bs * sv[c]
    tau = a.shape[0]
    for j in range(tau):
        zoz[j] = bx * zx[o, j] - bs * zs[o, c, j]  # Z_o^T z
    h = single_nonzero(a)  # hashed draws and new FD columns: one row or column of zz
    # Every update writes rows of zz, whose loops numba vectorizes (a loop over
    # range(lo, hi) with bounds chosen by a conditional expression was not)
    if h == -2:
        for i in range(tau):
            row = zz[i]
            if c == 0:  # Z_0^T Z_1 gains a (Z_1^T z)^T
                ai = a[i]
                for j in range(tau):
                    row[j] += ai * zoz[j]
            else:  # ... or (Z_0^T z) a^T
                zi = zoz[i]
                for j in range(tau):
                    row[j] += zi * a[j]
    elif h >= 0:
        ah = a[h]
        if c == 0:
            row = zz[h]
            for j in range(tau):
                row[j] += ah * zoz[j]
        else:
            for i in range(tau):
                zz[i, h] += zoz[i] * ah
    for j in range(tau):  # (g = 1.0 without forgetting: the same numbers)
        zs[c, c, j] += g * zx[c, j] + a[j] * (z_sc + g * z_x)
        zs[c, o, j] += a[j] * z_so
        zs[o, c, j] += g * zx[o, j]
        zv[c, j] += a[j] * z_v
    ss[c, c] += 2.0 * g * sx[c] + g * g * xx
    ss[c, o] += g * sx[o]
    ss[o, c] += g * sx[o]
    sv[c] += g * vx
    return z_x


@borrowing_step
def _add_own_example(own, c, imp, settings, idx, val, A, r, vx, rows, sx, g, sketched):
    r"""Add x with forgetting weight g (1.0 without forgetting) to its class c
    (summary ``own``) while w stays fixed, and bring ``zx[c]``, ``sx[c]`` to the new
    sketch and sum; return the new
    :math:`v^\top x` and whether a frequent-directions sketch is full. With
    ``sketched`` (linear sketches), :math:`Z_c \mathrel{+}= x a^\top` was done with the
    example's sketch products (:func:`_sketch_and_add`), and ``rows[_A]`` holds a."""
    xx = squared_norm(val)
    a, zxc = rows[_A], rows[c]
    if sketched:
        bx, bs = 1.0, 0.0
    else:
        bx, bs = _new_column(own, settings, xx, A, r, a, g)
    beta = _compensation(imp.p, imp.gamma, a, c, bx, bs, g)
    if beta != 0.0:
        _add_to_v(imp.v, imp.zv, imp.sv, idx, val, beta, rows, sx)
        vx += beta * xx
    z_x = _update_products(imp.zz, imp.zs, imp.ss, imp.zv, imp.sv, c, rows, sx, bx, bs, vx, xx, g)
    if settings.fills_columns:
        fd_insert(own, idx, val, zxc, bx, bs, g)
    else:  # (Z_c += x a^T is done: _sketch_and_add; zoz: done with)
        lowrank_add_stats(
            own.count, own.weight, own.sums, own.gram, own.asum, idx, val, a, zxc, g, rows[_ZOZ]
        )
    for j in range(a.shape[0]):
        zxc[j] += a[j] * z_x
    sx[c] += g * xx
    return vx, settings.fills_columns and own.nfill[0] == a.shape[0]


@jit(borrowing=True, fastmath=REASSOC, entry_only=True)
def _add_row_dots(mat, vec, out):
    """``out += mat @ vec``, each row's dot product summed in any order (``fastmath``
    reassociation, :data:`aucstream._kernels.REASSOC`, so that it vectorizes: a change
    by rounding only). Compiled with the options of ``borrowing_step``
    (:mod:`aucstream.covariance`), reassociation added."""
    for i in range(out.shape[0]):
        row = mat[i]
        acc = 0.0
        for j in range(vec.shape[0]):
            acc += row[j] * vec[j]
        out[i] += acc


@borrowing_step
def _opposite_products(gram, o, imp, vx, rows, sx):
    r"""Write :math:`Z_o^\top w` into ``q`` and return :math:`(\sigma, s_o^\top u,
    x^\top u)` for w = :math:`\sigma u`, all from the maintained products; O(tau^2)."""
    q, zx = rows[_Q], rows[:2]
    zs, ss, zv, sv = imp.zs, imp.ss, imp.zv, imp.sv
    p, gamma, sigma = imp.p, imp.gamma, imp.scale[0]
    tau = q.shape[0]
    # Z_o^T u = G_o p_o + Z_o^T Z_c p_c + ... read in rows only (strided columns made
    # this 3x slower). G_o is symmetric (its row j is its column j, bit for bit), so
    # G_o p_o adds p_o[j] times row j, with j in the outer loop: the tau sums are
    # independent, and the inner loop runs at the machine's throughput rather than
    # one addition's latency per term. zz = Z_0^T Z_1: for o = 1, Z_1^T Z_0 p_0 adds
    # p_0[j] times row j of zz in the same loop; for o = 0, Z_0^T Z_1 p_1 takes the
    # dot product of each row of zz with p_1 (_add_row_dots), so that zz's transpose
    # need not be kept.
    for i in range(tau):
        q[i] = zv[o, i] + zs[o, 0, i] * gamma[0] + zs[o, 1, i] * gamma[1]
    zz, own = imp.zz, p[o]
    if o == 0:
        for j in range(tau):
            po, g = own[j], gram[j]
            for i in range(tau):
                q[i] += g[i] * po
        _add_row_dots(zz, p[1], q)
    else:
        other = p[0]
        for j in range(tau):
            po, pc = own[j], other[j]
            g, z = gram[j], zz[j]
            for i in range(tau):
                q[i] += z[i] * pc + g[i] * po
    for i in range(tau):
        q[i] = sigma * q[i]
    sw = sv[o] + ss[o, 0] * gamma[0] + ss[o, 1] * gamma[1]
    xw = vx + gamma[0] * sx[0] + gamma[1] * sx[1]
    for j in range(tau):
        sw += zs[0, o, j] * p[0, j] + zs[1, o, j] * p[1, j]
        xw += zx[0, j] * p[0, j] + zx[1, j] * p[1, j]
    return sigma, sw, xw


@borrowing_step
def _implicit_dot(p, gamma, scale, vx, rows, sx):
    r""":math:`w^\top x` from the implicit form (``p``, ``gamma``, ``scale``), the
    example's sketch products (``zx`` = ``rows[:2]``, ``sx``) and ``vx`` =
    :math:`v^\top x`; O(tau)."""
    zx = rows[:2]
    xu = vx + gamma[0] * sx[0] + gamma[1] * sx[1]
    for j in range(p.shape[1]):
        xu += zx[0, j] * p[0, j] + zx[1, j] * p[1, j]
    return scale[0] * xu


@borrowing_step
def _rescale(v, gamma, sv, p, zv, new_scale):
    """Fold a scale that left [SCALE_MIN, SCALE_MAX] (or became 0) into v, p, gamma
    and the products with v; return the scale to keep."""
    if new_scale != 0.0 and SCALE_MIN <= abs(new_scale) <= SCALE_MAX:
        return new_scale
    for part in (v, gamma, sv, p.reshape(-1), zv.reshape(-1)):
        for i in range(part.shape[0]):
            part[i] *= new_scale
    return 1.0


@borrowing_step
def _opposite_step(gram, weight, asum, o, imp, settings, idx, val, y, vx, rows, sx):
    """The OPAUC step against the opposite class o (non-empty; ``gram``, ``weight``,
    ``asum``: the fields of its :data:`aucstream.covariance.LowRankArrays` it reads),
    in implicit form."""
    sigma, sw, xw = _opposite_products(gram, o, imp, vx, rows, sx)
    count = weight[0]  # W: the count T (exactly) without forgetting
    inv_t = 1.0 / count
    cw = sigma * sw * inv_t
    alpha = sigma * xw - cw - y
    phi = rows[_PHI]
    psi = center_terms(settings.center, count, asum, rows[_Q], cw, phi)
    eta = settings.eta
    p, gamma = imp.p, imp.gamma
    new_scale = _rescale(imp.v, gamma, imp.sv, p, imp.zv, sigma * (1.0 - eta * settings.lam))
    inv_s = 1.0 / new_scale
    for j in range(phi.shape[0]):
        p[o, j] -= eta * phi[j] * inv_s
    gamma[o] += eta * (psi + alpha * inv_t) * inv_s
    _add_to_v(imp.v, imp.zv, imp.sv, idx, val, -eta * alpha * inv_s, rows, sx)
    imp.scale[0] = new_scale


@borrowing_njit
def _opauc_lowrank_chunk(
    classes,
    imp,
    indptr,
    indices,
    data,
    ys,
    pre,
    A,
    start,
    resume,
    settings,
    scratch,
    calibration,
    forget,
):
    r"""The OPAUC step with low-rank summaries in implicit form (module docstring).

    ``classes`` holds the two ``LowRankArrays`` (negative, positive; for the linear
    sketches, the ``sketch`` of both is their interleaved pair,
    :func:`aucstream.covariance.sketch_pair`), ``imp`` the
    :data:`Implicit` weights, ``A`` the per-example draws of the linear sketches and
    ``scratch`` a :data:`Scratch`. Returns ``(row, event)``: ``_DONE``; ``_SHRINK``
    (row ``row`` was inserted and filled its class's sketch: shrink, then resume at
    ``row`` with ``resume``); ``_REBASE`` (resume at ``row`` after the periodic
    re-basing); ``_RESCALE`` (row ``row``'s forgetting weight leaves its range:
    rescale, then resume at ``row``). When ``pre`` has one entry per row, each row's
    score ``w^T x`` before it is learnt is written there and fits the ``calibration``
    (:func:`aucstream._calibration.step`; neither again when the row is resumed).
    With forgetting (``settings.half_life`` > 0) each example enters its class with
    the weight :func:`forgetting_weight` gives at the clock ``forget[0]``, which then
    advances.
    """
    neg, pos = classes
    rows, sx = scratch
    z0, s0, b0 = neg.sketch, neg.sums, neg.beta
    z1, s1, b1 = pos.sketch, pos.sums, pos.beta
    n = indptr.shape[0] - 1
    scores = pre.shape[0] == n
    for r in range(start, n):
        lo, hi = indptr[r], indptr[r + 1]
        idx, val, y = indices[lo:hi], data[lo:hi], ys[r]
        if settings.prefetch and r + 1 < n:  # the next example's rows (PREFETCH_BYTES)
            ahead = indices[hi : indptr[r + 2]]
            prefetch_rows(z0, ahead)  # (the linear sketches: the pair, both classes)
            if settings.fills_columns:
                prefetch_rows(z1, ahead)
            prefetch_rows(s0, ahead)
            prefetch_rows(s1, ahead)
            prefetch_rows(imp.v, ahead)
        c = 1 if y > 0 else 0
        o = 1 - c
        adding = not (resume and r == start)
        g = 1.0
        if adding:
            g, shift = forgetting_weight(forget, settings.half_life)
            if shift < 0 or shift > settings.forget_limit:
                return r, _RESCALE
        sketched = adding and not settings.fills_columns
        if settings.fills_columns:
            _sketch_x(z0, s0, b0, True, idx, val, rows, sx, 0)
            _sketch_x(z1, s1, b1, True, idx, val, rows, sx, 1)
        else:  # both linear sketches' rows in one pass (and x's column of its own)
            _sketch_and_add(z0, idx, val, rows, c, A, r, math.sqrt(g), sketched)
            sx[0] = sparse_dot(s0, idx, val)
            sx[1] = sparse_dot(s1, idx, val)
        vx = sparse_dot(imp.v, idx, val)
        if adding:
            if scores:
                pre[r] = _implicit_dot(imp.p, imp.gamma, imp.scale, vx, rows, sx)
                calibration_step(calibration, pre[r], y, 1.0)
            # (a call per class, rather than one with the summary picked by c: the
            # bundle's arrays are passed from where they are, not copied first; c and
            # o are passed as variables: a constant 0 or 1 would be typed as a literal,
            # and numba would compile a version of the step for each)
            if c == 1:
                vx, full = _add_own_example(
                    pos, c, imp, settings, idx, val, A, r, vx, rows, sx, g, sketched
                )
            else:
                vx, full = _add_own_example(
                    neg, c, imp, settings, idx, val, A, r, vx, rows, sx, g, sketched
                )
            if settings.half_life != 0.0:
                forget[0] += 1
            if full:
                return r, _SHRINK
        if c == 1 and neg.count[0] > 0:
            _opposite_step(
                neg.gram, neg.weight, neg.asum, o, imp, settings, idx, val, y, vx, rows, sx
            )
        elif c == 0 and pos.count[0] > 0:
            _opposite_step(
                pos.gram, pos.weight, pos.asum, o, imp, settings, idx, val, y, vx, rows, sx
            )
        seen = neg.count[0] + pos.count[0]
        if settings.rebase_every > 0 and seen % settings.rebase_every == 0:
            return r + 1, _REBASE
        if forgetting_rebase_due(forget[0], settings.half_life):
            return r + 1, _REBASE
    return n, _DONE


@jit(fastmath=REASSOC)
def _fold_implicit(pair, s0, s1, v, p, gamma, sigma, zv, sv):
    r"""Re-base the implicit weights of the linear sketches in one pass over the rows
    of their interleaved ``pair`` (:func:`aucstream.covariance.sketch_pair`: row i
    is row i of :math:`Z_0` then row i of :math:`Z_1`):
    :math:`v \leftarrow \sigma(v + Z_0 p_0 + Z_1 p_1 + \gamma_0 s_0 + \gamma_1 s_1)`
    (= w) and, from the new v, ``zv[a]`` = :math:`Z_a^\top v` and ``sv[a]`` =
    :math:`s_a^\top v`, summed in float64 (also for float32 sketches).

    One read of each d x tau sketch, where a matrix-vector product per term read them
    four times (:meth:`aucstream.opauc._lowrank.LowRankEngine.rebase`). The dot
    product of a row with p is summed in any order (``fastmath`` reassociation, so
    that it vectorizes: rounding only); the sums over the rows run in row order, and
    rows whose new v is 0 add nothing. Deterministic: the same numbers whatever the
    chunking or the BLAS threads."""
    tau = p.shape[1]
    zv[:] = 0.0
    sv[:] = 0.0
    p0, p1 = p[0], p[1]
    zv0, zv1 = zv[0], zv[1]
    g0, g1 = gamma[0], gamma[1]
    for i in range(v.shape[0]):
        row = pair[i]
        acc = 0.0
        for j in range(tau):
            acc += row[j] * p0[j] + row[tau + j] * p1[j]
        u = sigma * (v[i] + acc + g0 * s0[i] + g1 * s1[i])
        v[i] = u
        if u != 0.0:
            for j in range(tau):
                zv0[j] += np.float64(row[j]) * u
                zv1[j] += np.float64(row[tau + j]) * u
            sv[0] += s0[i] * u
            sv[1] += s1[i] * u
