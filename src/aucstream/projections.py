r"""Euclidean projections onto l2 balls, l1 balls and boxes.

Each projection is the map :math:`\Pi_C(v) = \arg\min_{u \in C} \|u - v\|_2`.

l2 ball of radius r (centre c)
    :math:`\Pi(v) = c + (v - c)\min(1, r / \|v - c\|_2)`.

l1 ball of radius R (Duchi, Shalev-Shwartz, Singer and Chandra, *Efficient
projections onto the l1-ball for learning in high dimensions*, ICML 2008, §4)
    If :math:`\|v\|_1 \le R` the point is its own projection. Otherwise
    :math:`\Pi(v)_i = \mathrm{sign}(v_i)\max(|v_i| - \theta, 0)` where
    :math:`\theta > 0` solves :math:`\sum_i \max(|v_i| - \theta, 0) = R`.
    Duchi et al. (Fig. 1) find :math:`\theta` by sorting :math:`u = |v|` in
    decreasing order: with :math:`\rho = \max\{j : u_j > (\sum_{i \le j} u_i - R)/j\}`,
    :math:`\theta = (\sum_{i \le \rho} u_i - R)/\rho`, in O(d log d)
    (``method="sort"``). The default, ``method="condat"``, computes the same
    :math:`\theta` with the algorithm of Condat (*Fast projection onto the simplex and
    the l1 ball*, Math. Programming 158, 2016, §3), which keeps a running candidate
    set and its threshold :math:`\rho = (\sum_{v} u - R)/|v|` and is O(d) in
    practice.

    Learners' kernels find the same :math:`\theta` with Michelot's algorithm
    (``method="passes"``, :func:`l1_threshold_passes`): a few branch-free passes over
    the whole vector, which vectorize, instead of Condat's data-dependent loop. Their
    projections start the passes from an estimate of :math:`\theta`
    (:func:`l1_threshold_warm`), which each pass certifies, so that one pass usually
    suffices, with a result that does not depend on the start.

Box :math:`[\ell, h]`
    :math:`\Pi(v)_i = \min(\max(v_i, \ell), h)`.

The functions whose names end in ``_inplace`` and :func:`l1_threshold` are
numba-compiled (``cache=True``) so that learner kernels call them inside their own
compiled loops; :func:`project_l2_ball`, :func:`project_l1_ball`,
:func:`project_box` and :func:`l1_ball_threshold` are thin numpy wrappers that
validate their arguments and return new arrays.

Since :math:`\theta > 0` whenever the projection is active, zero entries of v never
matter for :math:`\theta`: a kernel may pass only the non-zero magnitudes.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._kernels import REASSOC, bits_of_float, float_of_bits, jit

__all__ = [
    "l1_threshold",
    "l1_threshold_passes",
    "l1_threshold_warm",
    "proj_l1_ball_inplace",
    "proj_l2_ball_inplace",
    "proj_box_inplace",
    "soft_threshold",
    "project_l1_ball",
    "project_l2_ball",
    "project_box",
    "l1_ball_threshold",
]


# --------------------------------------------------------------------- compiled
@jit(fastmath=REASSOC)
def l1_threshold(mags, radius, work):
    """Condat's threshold: theta with sum(max(mags - theta, 0)) = radius.

    ``mags`` holds non-negative numbers whose sum exceeds ``radius > 0`` (otherwise
    the result is 0.0, meaning "no shrinkage"); ``work`` is a float64 scratch array
    of at least ``2 * len(mags)`` entries. The input is not modified.

    The candidate set v is tracked by its sum S and size K, with the threshold
    ``rho = (S - radius) / K``; the tests ``y > rho`` are written as
    ``y * K > S - radius`` so that the first pass has no division in its dependency
    chain. The cleanup pass (Condat's step 4) removes every member below the current
    rho and repeats until none is removed, and theta is recomputed from a fresh sum
    over the final set, so the result does not depend on the order of the removals.
    """
    n = mags.shape[0]
    total = 0.0
    for i in range(n):
        total += mags[i]
    if total <= radius or n == 0:
        return 0.0
    # work[:n] holds the candidate set v, work[n:] the values set aside.
    nv = 1
    nt = 0
    work[0] = mags[0]
    S = mags[0]
    for i in range(1, n):
        yi = mags[i]
        if yi * nv > S - radius:  # y > rho
            if S + yi - radius > (nv + 1) * (yi - radius):  # the updated rho > y - radius
                work[nv] = yi
                nv += 1
                S += yi
            else:
                for j in range(nv):
                    work[n + nt + j] = work[j]
                nt += nv
                work[0] = yi
                nv = 1
                S = yi
    for j in range(nt):
        yj = work[n + j]
        if yj * nv > S - radius:
            work[nv] = yj
            nv += 1
            S += yj
    changed = True
    rho = 0.0
    while changed and nv > 0:  # nv > 0 but when rounding swamps the radius
        changed = False
        rho = (S - radius) / nv
        keep = 0
        for j in range(nv):
            yj = work[j]
            if yj <= rho:
                S -= yj
                changed = True
            else:
                work[keep] = yj
                keep += 1
        nv = keep
    if nv == 0:  # only when rounding swamps the radius (magnitudes ~1e16 times larger)
        return max(rho, 0.0)
    S = 0.0
    for j in range(nv):
        S += work[j]
    return max((S - radius) / nv, 0.0)


#: int64 bits above those of every finite non-negative float64 (those of +inf).
_NO_BITS = np.int64(0x7FF0000000000000)


#: Passes of Michelot's algorithm before :func:`l1_threshold_passes` hands the
#: remaining candidates to Condat's algorithm.
MICHELOT_PASSES = 12


@jit(fastmath={"reassoc"}, inline="always")
def l1_threshold_passes(mags, total, count, radius, work):
    """The same threshold as :func:`l1_threshold`, by passes over the whole array.

    Michelot's algorithm (*A finite algorithm for finding the projection of a point
    onto the canonical simplex of R^n*, JOTA 50, 1986), as Condat (2016, §2) states
    it: with the candidate set V (at first every non-zero), set
    ``rho = (sum(V) - radius) / |V|`` and keep ``V = {m > rho}`` until V no longer
    changes; then theta = rho. Each pass reads ``mags`` in order with no data-dependent
    store, so it vectorizes; rho only grows, so the sets shrink and the passes end.

    A pass also takes the smallest member of the new set V' (over the bits of the
    values read as int64, which order non-negative floats as their values do, so that
    the minimum vectorizes). If it exceeds the new
    rho' (computed from V'), the next pass would keep all of V' and sum the same
    members again, so V' is the fixed point and theta = rho' at once: the pass that
    would only confirm it is skipped, with the same result (the same members summed by
    the same loop). A projection after a small step from a point of the ball moves
    few entries, and one or two passes suffice; after ``MICHELOT_PASSES`` passes the
    remaining candidates go to Condat's algorithm, which gives the same theta.

    ``mags`` holds non-negative numbers (zeros allowed) with sum ``total`` >
    ``radius`` > 0 and ``count`` non-zeros; ``work`` holds at least ``3 * len(mags)``
    floats. Sums are reassociated (``fastmath``): the result changes by rounding only.
    """
    bits = mags.view(np.int64)  # non-negative floats order as their int64 bits
    s, k = total, count
    rho = 0.0
    for _ in range(MICHELOT_PASSES):
        if k <= 0:
            return max(rho, 0.0)
        rho = (s - radius) / k
        s_new = 0.0
        k_new = 0
        low = _NO_BITS
        for i in range(mags.shape[0]):
            m = mags[i]
            keep = m > rho
            s_new += m if keep else 0.0
            k_new += keep
            low = min(low, bits[i] if keep else _NO_BITS)
        if k_new >= k or k_new == 0:
            return max((s_new - radius) / k_new if k_new > 0 else rho, 0.0)
        s, k = s_new, k_new
        if float_of_bits(low) > (s - radius) / k:  # V' is the fixed point
            return max((s - radius) / k, 0.0)
    n = 0
    for i in range(mags.shape[0]):
        if mags[i] > rho:
            work[n] = mags[i]
            n += 1
    return l1_threshold(work[:n], radius, work[n : 3 * n])


@jit(fastmath={"reassoc"}, inline="always")
def _warm_pass(v, center, tau, sigma, rho):
    """One pass of :func:`l1_threshold_warm` over ``m = |tau center + sigma v|``: the
    sum and number of the magnitudes above ``rho`` and the bits of the smallest of
    them (``_NO_BITS`` if none). ``center`` None: ``m = |sigma v|``."""
    s = 0.0
    k = 0
    low = _NO_BITS
    if center is None:
        for i in range(v.shape[0]):
            m = abs(sigma * v[i])
            keep = m > rho
            s += m if keep else 0.0
            k += keep
            low = min(low, bits_of_float(m) if keep else _NO_BITS)
    else:
        for i in range(v.shape[0]):
            m = abs(tau * center[i] + sigma * v[i])
            keep = m > rho
            s += m if keep else 0.0
            k += keep
            low = min(low, bits_of_float(m) if keep else _NO_BITS)
    return s, k, low


@jit(fastmath={"reassoc"}, inline="always")
def l1_threshold_warm(v, center, tau, sigma, radius, rho0, work):
    """The l1-ball threshold of ``w = tau center + sigma v`` by Michelot's passes from
    any start ``rho0 >= 0``; returns ``(theta, k, norm)``.

    ``theta = 0`` when ``||w||_1 <= radius``, else ``theta > 0``; ``k`` and ``norm``
    are the number of non-zeros and the l1 norm of the projection (of w itself when
    theta = 0; ``norm`` is ``radius`` up to rounding otherwise). ``center`` None means
    ``w = sigma v``; ``work`` holds at least ``3 * len(v)`` floats. The magnitudes are
    computed in each pass, not stored.

    Michelot's passes (:func:`l1_threshold_passes`) set ``rho = (sum(V) - radius) /
    |V|`` with ``V = {m > rho}`` until V no longer changes. Started from any
    ``rho <= theta`` they reach theta, since every pass keeps the projection's
    support. A pass also certifies its start: ``rho <= theta`` if and only if the new
    rho is not below it (if ``rho > theta``, V misses part of the support or the new
    rho is theta < rho; if ``rho <= theta``, ``sum(V) - radius >= |V| rho``), so a
    start above theta (or a point inside the ball) is detected and the passes start
    over from 0 (the exact Michelot start, over all non-zeros). A pass whose smallest
    member exceeds the new rho has found the fixed point.

    Whatever the start, the result comes from the same pass over the same final set,
    which adds the same members in the same order (the others add an exact 0.0): the
    threshold is bit for bit independent of ``rho0``, so a learner may warm-start
    from any estimate (a running norm, a count kept in a chunk) without its results
    depending on how the stream is cut into chunks. After ``MICHELOT_PASSES`` passes
    (an adversarial vector: Michelot's worst case is one member removed per pass)
    Condat's algorithm (:func:`l1_threshold`) gives theta for a restart just below it
    (once), which the next pass certifies and finishes. Only when the radius is lost in
    the rounding of the magnitudes (about 1e-16 of them) can a pass that follows a
    certified one fail; then every entry goes to 0 (theta is the last rho, k = 0), as
    when a sum overflows (theta = inf): the passes always end.
    """
    rho = max(rho0, 0.0)
    passes = 0
    condat = True
    derived = False  # rho comes from a pass that certified the one before
    while True:
        s, k, low = _warm_pass(v, center, tau, sigma, rho)
        passes += 1
        rho1 = (s - radius) / k if k > 0 else -1.0
        if not rho1 >= rho or rho1 <= 0.0:  # rho > theta, or ||w||_1 <= radius
            if rho == 0.0:
                return 0.0, k, s
            if derived:  # only by rounding (radius ~1e-16 of the magnitudes): all -> 0
                return rho, 0, 0.0
            rho = 0.0
            derived = True
            continue
        if float_of_bits(low) > rho1:  # V is the fixed point
            return rho1, k, s - k * rho1
        if rho1 == np.inf:  # the sum overflowed: every entry goes to 0
            return rho1, 0, 0.0
        rho = rho1
        derived = True
        if condat and passes >= MICHELOT_PASSES:
            condat = False
            n = 0
            for i in range(v.shape[0]):
                m = abs(sigma * v[i]) if center is None else abs(tau * center[i] + sigma * v[i])
                if m > rho:
                    work[n] = m
                    n += 1
            theta = l1_threshold(work[:n], radius, work[n : 3 * n])
            if theta - 2.0**-40 * theta > rho:
                rho = theta - 2.0**-40 * theta
                derived = False


@jit
def _l1_threshold_sort(mags, radius):
    """Duchi et al.'s sort-based threshold (reference implementation)."""
    total = 0.0
    for i in range(mags.shape[0]):
        total += mags[i]
    if total <= radius:
        return 0.0
    u = np.sort(mags)[::-1]
    cum = 0.0
    theta = 0.0
    for j in range(u.shape[0]):
        cum += u[j]
        cand = (cum - radius) / (j + 1)
        if u[j] > cand:
            theta = cand
    return max(theta, 0.0)


@jit
def soft_threshold(x, theta):
    """``sign(x) * max(|x| - theta, 0)``: one coordinate of the l1-ball projection."""
    m = abs(x) - theta
    if m > 0.0:
        return m if x > 0.0 else -m
    return 0.0


@jit
def proj_l1_ball_inplace(v, radius, work):
    """Project ``v`` onto {||u||_1 <= radius} in place; return theta (0: unchanged).

    ``work`` is a float64 scratch array of at least ``3 * len(v)`` entries.
    """
    n = v.shape[0]
    mags = work[:n]
    total = 0.0
    for i in range(n):
        mags[i] = abs(v[i])
        total += mags[i]
    if total <= radius:
        return 0.0
    theta = l1_threshold(mags, radius, work[n:])
    for i in range(n):
        v[i] = soft_threshold(v[i], theta)
    return theta


@jit
def proj_l2_ball_inplace(v, radius):
    """Scale ``v`` onto {||u||_2 <= radius} in place; return the factor applied."""
    sq = 0.0
    for i in range(v.shape[0]):
        sq += v[i] * v[i]
    if sq <= radius * radius:
        return 1.0
    factor = radius / np.sqrt(sq)
    for i in range(v.shape[0]):
        v[i] *= factor
    return factor


@jit
def proj_box_inplace(v, lower, upper):
    """Clip ``v`` to [lower, upper] entrywise in place."""
    for i in range(v.shape[0]):
        if v[i] < lower:
            v[i] = lower
        elif v[i] > upper:
            v[i] = upper


# ------------------------------------------------------------------- wrappers
def _vector(v: ArrayLike) -> np.ndarray:
    out = np.array(v, dtype=np.float64, copy=True)
    if out.ndim != 1:
        raise ValueError(f"expected a 1-d vector, got shape {out.shape}")
    if not np.all(np.isfinite(out)):
        raise ValueError("the vector contains NaN or infinity")
    return out


def _radius(radius: float) -> float:
    radius = float(radius)
    if not (radius > 0 and np.isfinite(radius)):
        raise ValueError(f"radius must be a positive finite number, got {radius}")
    return radius


def l1_ball_threshold(v: ArrayLike, radius: float, method: str = "condat") -> float:
    """The soft-threshold theta of the l1-ball projection (0 when ``v`` is inside).

    Parameters
    ----------
    v : array-like of shape (d,)
        The point to project.
    radius : float
        Radius R > 0 of the ball.
    method : {"condat", "sort", "passes"}, default="condat"
        Condat's O(d) algorithm, Duchi et al.'s O(d log d) sort, or Michelot's
        passes (:func:`l1_threshold_passes`, what the learners' kernels use).

    Returns
    -------
    float
        theta >= 0 with ``sum(max(|v| - theta, 0)) = radius`` if ``||v||_1 > radius``.
    """
    mags = np.abs(_vector(v))
    radius = _radius(radius)
    if method == "condat":
        return float(l1_threshold(mags, radius, np.empty(2 * mags.size)))
    if method == "sort":
        return float(_l1_threshold_sort(mags, radius))
    if method == "passes":
        total = float(mags.sum())
        if total <= radius:
            return 0.0
        count = int(np.count_nonzero(mags))
        return float(l1_threshold_passes(mags, total, count, radius, np.empty(3 * mags.size)))
    raise ValueError(f"method must be 'condat', 'sort' or 'passes', got {method!r}")


def project_l1_ball(v: ArrayLike, radius: float, method: str = "condat") -> np.ndarray:
    """Euclidean projection onto the l1 ball {u : ||u||_1 <= radius}.

    Parameters
    ----------
    v : array-like of shape (d,)
        The point to project.
    radius : float
        Radius R > 0.
    method : {"condat", "sort", "passes"}, default="condat"
        How the threshold is found (see the module docstring).

    Returns
    -------
    ndarray of shape (d,)
        ``sign(v) * max(|v| - theta, 0)``, or a copy of v when it is inside.

    Examples
    --------
    >>> from aucstream.projections import project_l1_ball
    >>> project_l1_ball([3.0, -1.0, 0.5], 2.0)
    array([2., 0., 0.])
    """
    out = _vector(v)
    theta = l1_ball_threshold(out, radius, method)
    if theta > 0.0:
        shrunk = np.abs(out) - theta
        out = np.where(shrunk > 0.0, np.sign(out) * shrunk, 0.0)
    return out


def project_l2_ball(v: ArrayLike, radius: float, center: ArrayLike | None = None) -> np.ndarray:
    """Euclidean projection onto the l2 ball {u : ||u - center||_2 <= radius}.

    Parameters
    ----------
    v : array-like of shape (d,)
        The point to project.
    radius : float
        Radius r > 0.
    center : array-like of shape (d,), optional
        Centre of the ball (the origin by default).

    Returns
    -------
    ndarray of shape (d,)
        ``center + (v - center) * min(1, radius / ||v - center||_2)``.

    Examples
    --------
    >>> from aucstream.projections import project_l2_ball
    >>> project_l2_ball([3.0, 4.0], 1.0)
    array([0.6, 0.8])
    """
    out = _vector(v)
    radius = _radius(radius)
    if center is None:
        proj_l2_ball_inplace(out, radius)
        return out
    c = _vector(center)
    if c.shape != out.shape:
        raise ValueError(f"center has shape {c.shape}, v has shape {out.shape}")
    diff = out - c
    proj_l2_ball_inplace(diff, radius)
    return c + diff


def project_box(v: ArrayLike, lower: float, upper: float) -> np.ndarray:
    """Euclidean projection onto the box [lower, upper]^d (clipping).

    Parameters
    ----------
    v : array-like of shape (d,)
        The point to project.
    lower, upper : float
        Bounds, ``lower <= upper``.

    Returns
    -------
    ndarray of shape (d,)
        ``min(max(v, lower), upper)``.

    Examples
    --------
    >>> from aucstream.projections import project_box
    >>> project_box([-2.0, 0.5, 3.0], -1.0, 1.0)
    array([-1. ,  0.5,  1. ])
    """
    out = _vector(v)
    lower, upper = float(lower), float(upper)
    if not lower <= upper:
        raise ValueError(f"lower={lower} must not exceed upper={upper}")
    proj_box_inplace(out, lower, upper)
    return out
