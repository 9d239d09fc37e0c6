"""aucstream: one-pass and online AUC maximization for data streams.

Online learners (scikit-learn estimators whose ``fit`` makes one pass over the data and
whose ``partial_fit`` continues the stream):

- :class:`OPAUC` — one-pass AUC optimization (Gao et al. 2013, 2016);
- :class:`OAM` — online AUC maximization with reservoir buffers (Zhao et al. 2011);
- :class:`AdaOAM`, :class:`SAdaOAM` — adaptive and sparse variants (Ding et al. 2016);
- :class:`SOLAM`, :class:`SOLAML1` — stochastic online AUC maximization (Ying et al. 2016);
- :class:`FSAUC` — fast stochastic AUC maximization (Liu et al. 2018);
- :class:`UnivariateOnline` and the online classifiers :class:`Perceptron`,
  :class:`PassiveAggressive`, :class:`ConfidenceWeighted`, :class:`CostSensitivePA` —
  the papers' baselines.

Batch baselines: :class:`LSSVMAUC`, :class:`BatchUnivariate`, :class:`PairwiseHingeSVM`
(:class:`SVMOR`, :class:`SVMPerfAUC`).

``aucstream.metrics.roc_auc`` is the exact AUC; ``aucstream.datasets`` reads streams
and benchmark data; ``aucstream.evaluation`` runs the papers' protocols;
:func:`save_model` / :func:`load_model` store learners without pickle;
:func:`all_estimators` lists every learner.
"""

from ._config import config_context, get_config, set_config
from ._discovery import all_estimators
from .adaoam import AdaOAM, SAdaOAM
from .batch import LSSVMAUC, SVMOR, BatchUnivariate, PairwiseHingeSVM, SVMPerfAUC
from .capo import CAPO
from .fsauc import FSAUC
from .metrics import roc_auc
from .oam import OAM
from .online_classifiers import (
    ConfidenceWeighted,
    CostSensitivePA,
    PassiveAggressive,
    Perceptron,
)
from .opauc import OPAUC
from .persistence import load_model, save_model
from .pipeline import StreamPipeline
from .search import OnePassSearch
from .solam import SOLAM, SOLAML1
from .univariate import UnivariateOnline

__version__ = "0.1.0"

__all__ = [
    "CAPO",
    "FSAUC",
    "LSSVMAUC",
    "OAM",
    "OPAUC",
    "SOLAM",
    "SOLAML1",
    "SVMOR",
    "AdaOAM",
    "BatchUnivariate",
    "ConfidenceWeighted",
    "CostSensitivePA",
    "PairwiseHingeSVM",
    "PassiveAggressive",
    "Perceptron",
    "SAdaOAM",
    "SVMPerfAUC",
    "UnivariateOnline",
    "OnePassSearch",
    "StreamPipeline",
    "all_estimators",
    "config_context",
    "get_config",
    "set_config",
    "load_model",
    "roc_auc",
    "save_model",
    "__version__",
]
