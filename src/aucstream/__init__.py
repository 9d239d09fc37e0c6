"""aucstream: one-pass and online AUC maximization for data streams.

Learners (scikit-learn estimators whose ``fit`` makes one pass over the data and whose
``partial_fit`` continues the stream):

- :class:`OPAUC` — one-pass AUC optimization (Gao et al. 2013, 2016);
- :class:`OAM` — online AUC maximization with reservoir buffers (Zhao et al. 2011).

``aucstream.metrics.roc_auc`` is the exact AUC; ``aucstream.datasets`` reads streams
and benchmark data; ``aucstream.save_model`` / ``aucstream.load_model`` store learners
without pickle.
"""

from ._discovery import all_estimators
from .metrics import roc_auc
from .oam import OAM
from .opauc import OPAUC
from .persistence import load_model, save_model

__version__ = "0.1.0"

__all__ = [
    "OAM",
    "OPAUC",
    "all_estimators",
    "load_model",
    "roc_auc",
    "save_model",
    "__version__",
]
