r"""ADWIN: an adaptive window cut where its two parts have different means.

Bifet and Gavaldà, "Learning from time-changing data with adaptive windowing", SDM
2007 (ADWIN2: the window compressed into an exponential histogram), in the form of
River's ``drift.ADWIN`` (River 0.26.1, whose core is a line-by-line port of its
former ``adwin_c.pyx``); the semantics here are River's, step for step, so that both
raise the same alarms and keep the same window on the same values.

**Histogram.** Row :math:`i` holds up to ``max_buckets`` buckets of :math:`2^i`
values each, oldest first; a bucket stores the sum of its values and the sum of
their squared deviations from its mean. A new value enters row 0 as a bucket of one;
when a row holds ``max_buckets + 1`` buckets its two oldest merge into one bucket of
the next row (sums add; the squared deviations add plus
:math:`2^i (\mu_0 - \mu_1)^2 / 2`). The window's width :math:`W`, sum and squared
deviations :math:`V` are kept too (:math:`V` by Welford's update on insertion).

**Cuts.** Every ``clock`` updates (counted since the last reset), if
:math:`W >` ``grace_period``, the cuts between buckets are scanned from the oldest:
:math:`W_0` is the older part (:math:`n_0` values, mean :math:`\mu_0`) and
:math:`W_1` the newer (:math:`n_1`, :math:`\mu_1`, never empty). With
:math:`L` = ``min_window_length``, a cut with :math:`n_0, n_1 \ge L` is a change when

.. math::

    |\mu_0 - \mu_1| > \varepsilon = \sqrt{2 m' \frac{V}{W} \delta'}
        + \frac{2}{3} \delta' m', \qquad
    \delta' = \ln\frac{2 \ln W}{\delta}, \quad
    m' = \frac{1}{n_0 - L + 1} + \frac{1}{n_1 - L + 1}

(River's bound; the paper's :math:`\delta' = \delta / n` differs). Then the oldest
bucket is dropped, a drift is flagged and the scan starts again on the shorter
window. As in River, the update that follows a detection first clears the **whole**
window (and the clock).

One difference from River: the clock counts in 64-bit integers (River's in 32 bits,
which wrap after :math:`2^{31}` updates without a detection).
"""

from __future__ import annotations

import numpy as np

from aucstream._params import Integral, Interval, unit_open

from .._kernels import jit
from ._base import DriftDetector
from ._checks import check_memory

__all__ = ["ADWIN"]

#: Histogram rows: row i holds buckets of 2**i values, so 64 rows hold any stream.
_ROWS = 64
# _scalars: width, sum, squared deviations; _flags: drift, detections, rows, clock tick
_WIDTH, _TOTAL, _VAR = 0, 1, 2
_ROWS_USED, _TICK = 2, 3


@jit
def _shift_out(totals, variances, counts, row, k):  # pragma: no cover - compiled
    """Remove the ``k`` oldest buckets of ``row`` (the slots after the last are not
    read, so they are left as they are)."""
    n = counts[row]
    for j in range(n - k):
        totals[row, j] = totals[row, j + k]
        variances[row, j] = variances[row, j + k]
    counts[row] = n - k


@jit
def _insert(x, totals, variances, counts, scalars, flags, max_buckets):  # pragma: no cover
    """Add one value as a bucket of row 0, then merge full rows upwards."""
    totals[0, counts[0]] = x
    variances[0, counts[0]] = 0.0
    counts[0] += 1
    scalars[_WIDTH] += 1.0
    width = scalars[_WIDTH]
    increment = 0.0
    if width > 1.0:
        dev = x - scalars[_TOTAL] / (width - 1.0)
        increment = (width - 1.0) * dev * dev / width
    scalars[_VAR] += increment
    scalars[_TOTAL] += x
    row = 0
    while counts[row] == max_buckets + 1 and row + 1 < totals.shape[0]:
        size = float(np.int64(1) << row)
        t0, t1 = totals[row, 0], totals[row, 1]
        mu0 = t0 / size
        mu1 = t1 / size
        merged_var = variances[row, 0] + variances[row, 1] + size * 0.5 * (mu0 - mu1) * (mu0 - mu1)
        if row + 1 >= flags[_ROWS_USED]:
            flags[_ROWS_USED] = row + 2
        nxt = counts[row + 1]
        totals[row + 1, nxt] = t0 + t1
        variances[row + 1, nxt] = merged_var
        counts[row + 1] = nxt + 1
        _shift_out(totals, variances, counts, row, 2)
        if counts[row + 1] <= max_buckets:
            break
        row += 1


@jit
def _drop_oldest(totals, variances, counts, scalars, flags):  # pragma: no cover - compiled
    """Drop the oldest bucket (the first of the last row)."""
    last = flags[_ROWS_USED] - 1
    size = float(np.int64(1) << last)
    u = totals[last, 0]
    v = variances[last, 0]
    mu = u / size
    scalars[_WIDTH] -= size
    scalars[_TOTAL] -= u
    width = scalars[_WIDTH]
    mu_window = scalars[_TOTAL] / width
    scalars[_VAR] -= v + size * width * (mu - mu_window) * (mu - mu_window) / (size + width)
    _shift_out(totals, variances, counts, last, 1)
    if counts[last] == 0 and last > 0:
        flags[_ROWS_USED] = last


@jit
def _is_cut(n0, n1, mean_gap, spread, delta_prime, min_length):  # pragma: no cover
    """Whether the means of the two parts differ by more than the bound; ``spread``
    is V / W and ``delta_prime`` ln(2 ln W / delta), both fixed during a scan."""
    m_recip = 1.0 / (n0 - min_length + 1.0) + 1.0 / (n1 - min_length + 1.0)
    epsilon = np.sqrt(2.0 * m_recip * spread * delta_prime) + 2.0 / 3.0 * delta_prime * m_recip
    return abs(mean_gap) > epsilon


@jit
def _detect(totals, variances, counts, scalars, flags, delta, clock, min_length, grace):
    """Scan the cuts (every ``clock`` updates); return whether a change was found."""
    changed = False
    flags[_TICK] += 1
    if flags[_TICK] % clock != 0 or not scalars[_WIDTH] > grace:
        return False
    again = True
    while again:
        again = False
        n0 = 0.0
        n1 = scalars[_WIDTH]
        u0 = 0.0
        u1 = scalars[_TOTAL]
        spread = scalars[_VAR] / scalars[_WIDTH]
        delta_prime = np.log(2.0 * np.log(scalars[_WIDTH]) / delta)
        done = False
        for row in range(flags[_ROWS_USED] - 1, -1, -1):
            if done:
                break
            size = float(np.int64(1) << row)
            count = counts[row]
            for k in range(count):
                n0 += size
                n1 -= size
                u0 += totals[row, k]
                u1 -= totals[row, k]
                if row == 0 and k == count - 1:
                    done = True
                    break
                if (
                    n1 >= min_length
                    and n0 >= min_length
                    and _is_cut(n0, n1, u0 / n0 - u1 / n1, spread, delta_prime, min_length)
                ):
                    again = True
                    changed = True
                    if scalars[_WIDTH] > 0.0:
                        _drop_oldest(totals, variances, counts, scalars, flags)
                        done = True
                        break
    return changed


@jit
def _adwin_run(
    values,
    totals,
    variances,
    counts,
    scalars,
    flags,
    delta,
    clock,
    max_buckets,
    min_length,
    grace,
    alarms,
    limit,
):  # pragma: no cover - compiled
    """ADWIN over ``values`` (NaN skipped); return the number of alarms.

    Stops right after the ``limit``-th alarm (the values after it are not read).
    """
    found = 0
    for i in range(values.shape[0]):
        x = values[i]
        if x != x:
            continue
        if flags[0] != 0:
            totals[:] = 0.0
            variances[:] = 0.0
            counts[:] = 0
            scalars[:] = 0.0
            flags[0] = 0
            flags[_ROWS_USED] = 1
            flags[_TICK] = 0
        _insert(x, totals, variances, counts, scalars, flags, max_buckets)
        if _detect(totals, variances, counts, scalars, flags, delta, clock, min_length, grace):
            flags[0] = 1
            flags[1] += 1
            alarms[found] = i
            found += 1
            if found == limit:
                break
    return found


class ADWIN(DriftDetector):
    r"""ADWIN change detector (adaptive windowing), with River's semantics, compiled.

    Keeps a window of recent values compressed into an exponential histogram and cuts
    its older part when the means of the two parts differ by more than a Hoeffding-
    Bernstein bound at confidence ``delta`` (see the module docstring). Raises the same
    alarms, with the same window, as River's ``drift.ADWIN`` with the same parameters
    on the same values; :meth:`update_many` runs the loop over a whole array in one
    compiled call.

    Parameters
    ----------
    delta : float in (0, 1), default=0.002
        The confidence of a cut: smaller means fewer false alarms and later detections.
    clock : int >= 1, default=32
        Look for a cut every ``clock`` updates.
    max_buckets : int >= 1, default=5
        Buckets of each size kept before the two oldest merge (more is finer).
    min_window_length : int >= 1, default=5
        Both parts of a cut must hold at least this many values.
    grace_period : int >= 0, default=10
        No cut while the window holds this many values or fewer.

    Attributes
    ----------
    drift_detected : bool
        Whether the last update detected a drift (the next update clears the window).
    n_detections : int
        The number of drifts detected so far.
    width : int
        The number of values in the window.
    estimation : float
        The mean of the window (0 when empty).

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.drift import ADWIN
    >>> rng = np.random.default_rng(0)
    >>> values = np.concatenate([rng.normal(0, 1, 1000), rng.normal(1, 1, 1000)])
    >>> adwin = ADWIN()
    >>> adwin.update_many(values)
    array([1055])
    >>> adwin.width, round(adwin.estimation, 3)  # the window after the cut
    (944, 0.988)
    """

    _parameter_constraints: dict = {
        "delta": [unit_open()],
        "clock": [Interval(Integral, 1, None, closed="left")],
        "max_buckets": [Interval(Integral, 1, None, closed="left")],
        "min_window_length": [Interval(Integral, 1, None, closed="left")],
        "grace_period": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        delta: float = 0.002,
        clock: int = 32,
        max_buckets: int = 5,
        min_window_length: int = 5,
        grace_period: int = 10,
    ) -> None:
        self.delta = delta
        self.clock = clock
        self.max_buckets = max_buckets
        self.min_window_length = min_window_length
        self.grace_period = grace_period
        self._setup()

    def _check_params(self) -> None:
        check_memory(self, 16 * _ROWS * (self.max_buckets + 1), f"max_buckets={self.max_buckets}")

    def _reset_state(self) -> None:
        self._totals = np.zeros((_ROWS, self.max_buckets + 1))
        self._variances = np.zeros((_ROWS, self.max_buckets + 1))
        self._counts = np.zeros(_ROWS, dtype=np.int64)
        self._scalars = np.zeros(3)
        self._flags = np.array([0, 0, 1, 0], dtype=np.int64)

    def _check_state(self) -> None:
        """Consistency of a loaded state (a model file), before a kernel reads it: the
        histogram's shapes, its counts inside its rows, the rows in use and finite
        sums (the kernels index the histogram by these counts)."""
        b = self.max_buckets + 1
        for name in ("_totals", "_variances"):
            a = getattr(self, name)
            if not (isinstance(a, np.ndarray) and a.dtype == np.float64 and a.shape == (_ROWS, b)):
                raise ValueError(f"{name} must be a float64 array of shape ({_ROWS}, {b})")
        counts, flags, scalars = self._counts, self._flags, self._scalars
        if not (isinstance(counts, np.ndarray) and counts.dtype == np.int64):
            raise ValueError("_counts must be an int64 array")
        if counts.shape != (_ROWS,) or counts.min() < 0 or counts.max() > self.max_buckets:
            raise ValueError(f"_counts must hold {_ROWS} counts in [0, {self.max_buckets}]")
        if not (isinstance(flags, np.ndarray) and flags.dtype == np.int64 and flags.shape == (4,)):
            raise ValueError("_flags must be an int64 array of shape (4,)")
        if not (1 <= flags[_ROWS_USED] <= _ROWS and flags[_TICK] >= 0 and flags[1] >= 0):
            raise ValueError(f"_flags {flags.tolist()} are out of range")
        if not (isinstance(scalars, np.ndarray) and scalars.shape == (3,)):
            raise ValueError("_scalars must be an array of shape (3,)")
        if not (np.isfinite(scalars).all() and np.isfinite(self._totals).all()):
            raise ValueError("the window's sums are not finite")

    def _run(self, values: np.ndarray, alarms: np.ndarray, limit: int) -> int:
        return int(
            _adwin_run(
                values,
                self._totals,
                self._variances,
                self._counts,
                self._scalars,
                self._flags,
                float(self.delta),
                int(self.clock),
                int(self.max_buckets),
                float(self.min_window_length),
                float(self.grace_period),
                alarms,
                limit,
            )
        )

    @property
    def width(self) -> int:
        """The number of values in the window."""
        return int(self._scalars[_WIDTH])

    @property
    def total(self) -> float:
        """The sum of the values in the window."""
        return float(self._scalars[_TOTAL])

    @property
    def variance(self) -> float:
        """The sum of squared deviations from the window's mean (River's ``variance``)."""
        return float(self._scalars[_VAR])

    @property
    def estimation(self) -> float:
        """The mean of the window (0 when it is empty)."""
        width = self._scalars[_WIDTH]
        return float(self._scalars[_TOTAL] / width) if width else 0.0
