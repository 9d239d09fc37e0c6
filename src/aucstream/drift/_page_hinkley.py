r"""The Page–Hinkley test: cumulative deviations from the running mean.

Page's CUSUM chart (E. S. Page, "Continuous inspection schemes", Biometrika 41, 1954)
in the two-sided form of River's ``drift.PageHinkley`` (River 0.26.1), whose
semantics this follows step for step so that both raise the same alarms on the same
values. For each value :math:`x_t`:

1. if the previous update detected a drift, everything is reset first;
2. :math:`\bar x_t` is the plain running mean of the values since the last reset,
   :math:`x_t` included (``alpha`` does not fade it), and :math:`d_t = x_t - \bar x_t`;
3. :math:`S^+_t = \alpha S^+_{t-1} + d_t - \delta` and
   :math:`S^-_t = \alpha S^-_{t-1} + d_t + \delta`, from :math:`S^\pm_0 = 0`;
4. :math:`m^+_t = \min(m^+_{t-1}, S^+_t)` from :math:`+\infty` and
   :math:`M^-_t = \max(M^-_{t-1}, S^-_t)` from :math:`-1` (River's start);
5. once :math:`t \ge` ``min_instances``, an increase is detected when
   :math:`S^+_t - m^+_t > \lambda` and a decrease when :math:`M^-_t - S^-_t > \lambda`;
   ``mode`` says which of the two raise the alarm.

There is no warning zone. The running mean is updated as River's
``stats.Mean`` does (:math:`\bar x \mathrel{+}= (1/n)(x - \bar x)`) so that the
floating-point results agree to the last bit.
"""

from __future__ import annotations

import numpy as np

from aucstream._params import Integral, Interval, Real, StrOptions, non_negative, positive

from .._kernels import jit
from ._base import DriftDetector

__all__ = ["PageHinkley"]

_MODES = {"both": 0, "up": 1, "down": 2}
#: The start of the running minimum :math:`m^+`: the largest float rather than
#: :math:`+\infty` (the first :math:`S^+_t` replaces either, so the alarms are the
#: same), so that the state stays finite, as a model file holding a detector requires.
_HUGE = float(np.finfo(np.float64).max)


@jit
def _page_hinkley_run(
    values, state, flags, min_instances, delta, threshold, alpha, mode, alarms, limit
):  # pragma: no cover - compiled
    """Page–Hinkley over ``values`` (NaN skipped); return the number of alarms.

    Stops right after the ``limit``-th alarm (the values after it are not read).

    ``state`` is ``[n, mean, S+, S-, m+, M-]`` and ``flags`` ``[drift, detections]``.
    """
    found = 0
    for i in range(values.shape[0]):
        x = values[i]
        if x != x:
            continue
        if flags[0] != 0:
            state[0] = 0.0
            state[1] = 0.0
            state[2] = 0.0
            state[3] = 0.0
            state[4] = _HUGE
            state[5] = -1.0
            flags[0] = 0
        state[0] += 1.0
        state[1] += (1.0 / state[0]) * (x - state[1])
        dev = x - state[1]
        state[2] = alpha * state[2] + dev - delta
        state[3] = alpha * state[3] + dev + delta
        if state[2] < state[4]:
            state[4] = state[2]
        if state[3] > state[5]:
            state[5] = state[3]
        if state[0] >= min_instances:
            up = state[2] - state[4] > threshold
            down = state[5] - state[3] > threshold
            if (mode != 2 and up) or (mode != 1 and down):
                flags[0] = 1
                flags[1] += 1
                alarms[found] = i
                found += 1
                if found == limit:
                    break
    return found


class PageHinkley(DriftDetector):
    r"""Page–Hinkley change detector, with River's semantics and a compiled loop.

    Raises the same alarms as River's ``drift.PageHinkley`` with the same parameters on
    the same values (see the module docstring for the test); :meth:`update_many` runs
    the loop over a whole array in one compiled call.

    Parameters
    ----------
    min_instances : int >= 1, default=30
        No alarm before this many values since the last reset.
    delta : float >= 0, default=0.005
        The magnitude of change tolerated (:math:`\delta`).
    threshold : float > 0, default=50.0
        The alarm threshold (:math:`\lambda`).
    alpha : float in (0, 1], default=1 - 1e-4
        The forgetting factor of the cumulative sums.
    mode : {"both", "up", "down"}, default="both"
        Alarm on increases of the mean, decreases, or both.

    Attributes
    ----------
    drift_detected : bool
        Whether the last update detected a drift (the next update then resets).
    n_detections : int
        The number of drifts detected so far.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.drift import PageHinkley
    >>> rng = np.random.default_rng(0)
    >>> values = np.concatenate([rng.normal(0, 1, 1000), rng.normal(2, 1, 500)])
    >>> ph = PageHinkley()
    >>> ph.update_many(values)
    array([1024])
    >>> ph.n_detections
    1
    """

    _parameter_constraints: dict = {
        "min_instances": [Interval(Integral, 1, None, closed="left")],
        "delta": [non_negative()],
        "threshold": [positive()],
        "alpha": [Interval(Real, 0, 1, closed="right")],
        "mode": [StrOptions(set(_MODES))],
    }

    def __init__(
        self,
        min_instances: int = 30,
        delta: float = 0.005,
        threshold: float = 50.0,
        alpha: float = 1 - 0.0001,
        mode: str = "both",
    ) -> None:
        self.min_instances = min_instances
        self.delta = delta
        self.threshold = threshold
        self.alpha = alpha
        self.mode = mode
        self._setup()

    def _check_params(self) -> None:
        for name in ("delta", "threshold", "alpha"):
            if not np.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be finite, got {getattr(self, name)}")

    def _reset_state(self) -> None:
        self._state = np.array([0.0, 0.0, 0.0, 0.0, _HUGE, -1.0])
        self._flags = np.zeros(2, dtype=np.int64)

    def _check_state(self) -> None:
        """Consistency of a loaded state (a model file): the statistics' shapes, finite
        sums and non-negative counters."""
        state, flags = self._state, self._flags
        if not (isinstance(state, np.ndarray) and state.dtype == np.float64) or state.shape != (6,):
            raise ValueError("_state must be a float64 array of shape (6,)")
        if not np.isfinite(state).all():
            raise ValueError("_state must be finite")
        if not (isinstance(flags, np.ndarray) and flags.dtype == np.int64 and flags.shape == (2,)):
            raise ValueError("_flags must be an int64 array of shape (2,)")
        if flags.min() < 0:
            raise ValueError(f"_flags {flags.tolist()} must not be negative")

    def _run(self, values: np.ndarray, alarms: np.ndarray, limit: int) -> int:
        return int(
            _page_hinkley_run(
                values,
                self._state,
                self._flags,
                float(self.min_instances),
                float(self.delta),
                float(self.threshold),
                float(self.alpha),
                _MODES[self.mode],
                alarms,
                limit,
            )
        )

    @property
    def n_seen(self) -> int:
        """The number of values since the last reset (River's ``_x_mean.n``)."""
        return int(self._state[0])

    @property
    def estimation(self) -> float:
        """The running mean of the values since the last reset."""
        return float(self._state[1])
