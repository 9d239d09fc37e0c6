"""What every detector shares: ``update``/``update_many`` over one compiled loop."""

from __future__ import annotations

from typing import TypeVar

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator

from ._checks import check_params, check_value, check_values

__all__ = ["DriftDetector"]

_Detector = TypeVar("_Detector", bound="DriftDetector")


class DriftDetector(BaseEstimator):
    """A change detector on a stream of real values (River's interface).

    Subclasses declare ``_parameter_constraints``, allocate their state in
    ``_reset_state`` (arrays only, so that pickling and copying need no code) and run
    the per-value loop in ``_run(values, alarms, limit) -> number of alarms``, one
    compiled call over the array that skips NaN, writes the position of each alarm and
    stops right after the ``limit``-th.
    ``_flags`` is an int64 array whose first two entries are the drift flag of the
    last update and the number of detections so far.
    """

    _parameter_constraints: dict = {}

    def _setup(self) -> None:
        """Check the parameters, then allocate a fresh state."""
        check_params(self, self._parameter_constraints)
        self._check_params()
        self._reset_state()

    def _check_params(self) -> None:
        """Cross-parameter rules and the memory budget (raise ValueError)."""

    def _reset_state(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _run(self, values: np.ndarray, alarms: np.ndarray, limit: int) -> int:  # pragma: no cover
        raise NotImplementedError

    def update(self: _Detector, x: float) -> _Detector:
        """Update the detector with one value.

        Parameters
        ----------
        x : float
            A real number (a bool counts as 0 or 1). NaN is skipped: nothing changes,
            not even :attr:`drift_detected`.

        Returns
        -------
        self

        Raises
        ------
        TypeError
            If ``x`` is not a real number.
        ValueError
            If ``x`` is infinite. Nothing is changed.
        """
        value = check_value(x)
        if value == value:
            self._run(np.array([value]), np.empty(1, dtype=np.int64), 1)
        return self

    def update_many(self, values: ArrayLike) -> np.ndarray:
        """Update the detector with each value in turn; return where it detected drift.

        Exactly the state and alarms of ``update`` called on each value in order, in
        one compiled loop.

        Parameters
        ----------
        values : array-like of shape (n_values,)
            Real numbers; NaN values are skipped (they change nothing).

        Returns
        -------
        ndarray of int64
            The positions in ``values`` of the updates after which
            :attr:`drift_detected` was True, in increasing order.

        Raises
        ------
        TypeError
            If the values are not real numbers.
        ValueError
            If they are not one-dimensional or one is infinite. Nothing is changed.
        """
        array = check_values(values)
        alarms = np.empty(array.size, dtype=np.int64)
        n = self._run(array, alarms, array.size)
        return alarms[:n].copy()

    def _until_alarm(self, values: np.ndarray) -> int:
        """Update with checked ``values`` up to the first alarm; return its position
        (the later values are not read) or -1."""
        alarm = np.empty(1, dtype=np.int64)
        return int(alarm[0]) if self._run(values, alarm, 1) else -1

    @property
    def drift_detected(self) -> bool:
        """Whether the last update (NaN skipped) detected a drift."""
        return bool(self._flags[0])

    @property
    def n_detections(self) -> int:
        """The number of drifts detected since construction (or :meth:`reset`).

        River's ``ADWIN.n_detections`` restarts from 0 at the reset that follows each
        detection; this one keeps counting.
        """
        return int(self._flags[1])

    def reset(self: _Detector) -> _Detector:
        """Forget everything: the detector as constructed.

        Returns
        -------
        self
        """
        self._reset_state()
        return self
