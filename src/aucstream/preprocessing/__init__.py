"""Feature scaling for streams.

- :class:`OnlineStandardScaler` learns each feature's scale as the stream goes and
  transforms every row with the statistics of the rows before it, so it works inside
  the single pass (the default in front of :class:`~aucstream.OnePassSearch`, see
  :class:`~aucstream.StreamPipeline`).
- :class:`MinMaxScalerPM1` (each feature to [-1, 1] by its range, as the papers'
  experiments do, G13 §6.1) and :class:`UnitNormalizer` (rows to unit L2 norm) need
  the range or the rows first: they are for the papers' protocols and for data whose
  range is known in advance.
- :class:`FeatureHashing` hashes string, categorical and numeric columns into a fixed
  width (scikit-learn's ``FeatureHasher`` conventions; CSR out).
"""

from ._hashing import FeatureHashing
from ._range import MinMaxScalerPM1, UnitNormalizer
from ._standard import OnlineStandardScaler

__all__ = ["FeatureHashing", "MinMaxScalerPM1", "OnlineStandardScaler", "UnitNormalizer"]
