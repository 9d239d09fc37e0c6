"""Drift of a scorer's AUC: the ranking signal watched by a change detector."""

from __future__ import annotations

import copy

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, clone

from aucstream._params import Integral, Interval

from .._typing import ChangeDetector, Label
from ._adwin import ADWIN
from ._base import DriftDetector
from ._checks import check_params
from ._signal import RankSignal

__all__ = ["AUCDriftDetector"]


def _fresh(detector):
    """A detector with ``detector``'s parameters and no history (ADWIN() when None)."""
    if detector is None:
        return ADWIN(delta=0.002)
    if isinstance(detector, BaseEstimator):
        return clone(detector)
    if callable(getattr(detector, "clone", None)):  # River's detectors
        return detector.clone()
    return copy.deepcopy(detector)


class AUCDriftDetector(BaseEstimator):
    """Detect a change in a scorer's AUC from its prequential scores.

    Each (score, label) pair is turned into the ranking signal of
    :class:`RankSignal` (the share of recent examples of the other class it is ranked
    correctly against, whose mean is the AUC), and the signal is fed to a change
    detector on the mean; NaN values of the signal (while one class has no recent
    score) are skipped. Meant to be called after each chunk a learner scored
    prequentially (``test_then_train``), with those scores.

    Parameters
    ----------
    detector : detector, optional
        A change detector with ``update(x)`` and ``drift_detected``: an
        :class:`ADWIN` or :class:`PageHinkley` (run in one compiled loop per chunk), or
        River's detectors (run value by value). It is copied without its history
        (``clone``); None means ``ADWIN(delta=0.002)``: in
        ``benchmarks/bench_drift_detectors.py`` (``docs/results/drift_detectors.md``:
        a fixed and a learning scorer, 10% and 2% positives, concept changes every
        30,000 rows) it missed no change, with about half the delay of
        ``PageHinkley()``'s defaults and a similar rate of false alarms on the
        stationary controls; ``ADWIN(delta=1e-4)`` raised fewer alarms later.
    window : int >= 1, default=1000
        The number of recent scores of each class the signal ranks against.
    min_other : int >= 1, default=30
        The signal is NaN (skipped) while fewer than ``min(min_other, window)`` scores
        of the other class are stored: a value ranked against a handful of scores is
        noisy, and the values ranked against the same few scores are correlated,
        which the detectors (built for independent values) read as changes. Matters
        after each restart of the signal, above all for a rare class.
    restart_signal : bool, default=True
        Whether the signal forgets its scores after each alarm (as the detector
        restarts its own window), so that the examples after an alarm are ranked
        against each other only. Otherwise the scores from before the change stay in
        the signal's window until ``window`` examples of each class have replaced
        them, and the signal keeps changing during that time, which raises more
        alarms for the same change.
    pos_label : scalar, optional
        The positive label; None means the larger of the two labels.

    Attributes
    ----------
    detector_ : detector
        The detector in use.
    signal_ : RankSignal
        The ranking signal.
    n_detections : int
        The number of drifts detected so far.

    Notes
    -----
    The window counts examples of each class, so with a rare class it spans many rows:
    ``window=1000`` with 2% positives reaches back about 50,000 rows, and without a
    restart the signal would take that long to forget a past concept. The values of
    the signal are not independent (those ranked against the same stored scores are
    correlated), while ADWIN's and Page–Hinkley's thresholds assume independent
    values; ``min_other`` and the restart limit the effect, and
    ``docs/results/drift_detectors.md`` measures the resulting false-alarm rates.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.drift import AUCDriftDetector
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 20_000)
    >>> good = y + rng.normal(0, 1, 20_000)  # AUC about 0.76
    >>> scores = np.where(np.arange(20_000) < 10_000, good, -good)  # then about 0.24
    >>> detector = AUCDriftDetector()
    >>> alarms = detector.update_many(scores, y)
    >>> int(alarms[0])  # the first alarm, soon after row 10,000
    10050
    """

    _parameter_constraints: dict = {
        "window": [Interval(Integral, 1, None, closed="left")],
        "min_other": [Interval(Integral, 1, None, closed="left")],
        "restart_signal": ["boolean"],
    }

    def __init__(
        self,
        detector: ChangeDetector | None = None,
        window: int = 1000,
        min_other: int = 30,
        restart_signal: bool = True,
        pos_label: Label | None = None,
    ) -> None:
        self.detector = detector
        self.window = window
        self.min_other = min_other
        self.restart_signal = restart_signal
        self.pos_label = pos_label
        check_params(self, self._parameter_constraints)
        if isinstance(detector, type):
            raise TypeError(
                f"detector must be an instance, e.g. {detector.__name__}(), not the class"
            )
        if detector is not None and not (
            callable(getattr(detector, "update", None)) and hasattr(detector, "drift_detected")
        ):
            raise TypeError(
                "detector must have an update(x) method and a drift_detected attribute, "
                f"got {type(detector).__name__}"
            )
        self.signal_ = RankSignal(window, min(min_other, window), pos_label)
        self.reset()

    def reset(self) -> AUCDriftDetector:
        """Forget everything: the signal's scores and the detector's history.

        Returns
        -------
        self
        """
        self.signal_.reset()
        self.detector_ = _fresh(self.detector)
        self.n_detections = 0
        self._drift = False
        return self

    def update(self, score: float, label: Label) -> AUCDriftDetector:
        """Add one prequential score and its label.

        Parameters
        ----------
        score : float
            A finite score.
        label : scalar
            Its label.

        Returns
        -------
        self
        """
        self.update_many(np.array([score]), np.array([label]))
        return self

    def update_many(self, scores: ArrayLike, labels: ArrayLike) -> np.ndarray:
        """Add a chunk of prequential scores and labels, in order.

        Parameters
        ----------
        scores : array-like of shape (n_examples,)
            Finite scores, as given by ``test_then_train``.
        labels : array-like of shape (n_examples,)
            Their labels.

        Returns
        -------
        ndarray of int64
            The positions in the chunk after which a drift was detected.

        Raises
        ------
        TypeError, ValueError
            As :meth:`RankSignal.update_many`; nothing changes.
        """
        checked = self.signal_._check(scores, labels)  # every check, before any change
        scores, numbers = np.asarray(checked[0]), np.asarray(checked[1])
        if scores.size == 0:
            return np.empty(0, dtype=np.int64)
        found: list[int] = []
        start = 0
        while start < scores.size:
            part = slice(start, None)
            values = self.signal_._apply(scores[part], numbers[part], *checked[2:])
            if not self.restart_signal:
                found.extend(start + self._detect(values))
                break
            first = self._detect_first(values)
            if first < 0:
                break
            found.append(start + first)
            # the signal restarts after the alarm: the rest is ranked anew
            self.signal_._forget_scores()
            self.signal_.n_seen -= values.size - (first + 1)
            start += first + 1
        alarms = np.array(found, dtype=np.int64)
        self.n_detections += alarms.size
        self._drift = bool(alarms.size and alarms[-1] == scores.size - 1)
        return alarms

    def _detect(self, values: np.ndarray) -> np.ndarray:
        """The detector over ``values`` (NaN skipped): the positions of its alarms."""
        if isinstance(self.detector_, DriftDetector):
            return self.detector_.update_many(values)
        found = [i for i in np.flatnonzero(~np.isnan(values)) if self._river_step(values[i])]
        return np.array(found, dtype=np.int64)

    def _detect_first(self, values: np.ndarray) -> int:
        """The detector over ``values`` up to its first alarm: its position, or -1."""
        if isinstance(self.detector_, DriftDetector):
            return self.detector_._until_alarm(values)
        for i in np.flatnonzero(~np.isnan(values)):
            if self._river_step(values[i]):
                return int(i)
        return -1

    def _river_step(self, value: float) -> bool:
        """One update of a detector from elsewhere (River's); whether it alarmed."""
        self.detector_.update(float(value))
        return bool(self.detector_.drift_detected)

    @property
    def drift_detected(self) -> bool:
        """Whether the last example given raised an alarm."""
        return self._drift
