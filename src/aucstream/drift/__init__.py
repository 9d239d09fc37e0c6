"""Change detection for streams, and on a scorer's AUC.

- :class:`PageHinkley` and :class:`ADWIN`: change detectors on the mean of a stream
  of values, with the semantics of River's detectors of the same names (same alarms
  on the same values) and an ``update_many`` that runs the loop over a whole array in
  one compiled call.
- :class:`RankSignal`: a per-example value whose mean is the AUC (the share of recent
  examples of the other class an example is ranked correctly against).
- :class:`AUCDriftDetector`: the signal watched by a detector, fed with a learner's
  prequential scores, chunk by chunk.

Examples
--------
>>> import numpy as np
>>> from aucstream.drift import ADWIN
>>> values = np.r_[np.zeros(500), np.ones(500)]
>>> ADWIN().update_many(values)
array([511])
"""

from ._adwin import ADWIN
from ._auc import AUCDriftDetector
from ._base import DriftDetector
from ._page_hinkley import PageHinkley
from ._signal import RankSignal

__all__ = ["ADWIN", "AUCDriftDetector", "DriftDetector", "PageHinkley", "RankSignal"]
