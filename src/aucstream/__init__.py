"""aucstream: one-pass and online AUC maximization for data streams.

Online learners (scikit-learn estimators whose ``fit`` makes one pass over the data and
whose ``partial_fit`` continues the stream):

- :class:`OPAUC` — one-pass AUC optimization (Gao et al. 2013, 2016);
- :class:`OAM` — online AUC maximization with reservoir buffers (Zhao et al. 2011);
- :class:`AdaOAM`, :class:`SAdaOAM` — adaptive and sparse variants (Ding et al. 2016);
- :class:`SOLAM`, :class:`SOLAML1` — stochastic online AUC maximization (Ying et al. 2016);
- :class:`FSAUC` — fast stochastic AUC maximization (Liu et al. 2018);
- :class:`FTRLAUC`, :class:`SPAM` — O(k) sparse learners (Zhou et al. 2020; Natole et al. 2018);
- :class:`UnivariateOnline` and the online classifiers :class:`Perceptron`,
  :class:`PassiveAggressive`, :class:`ConfidenceWeighted`, :class:`CostSensitivePA` —
  the papers' baselines.

Batch baselines: :class:`LSSVMAUC`, :class:`BatchUnivariate`, :class:`PairwiseHingeSVM`
(:class:`SVMOR`, :class:`SVMPerfAUC`).

``aucstream.metrics.roc_auc`` is the exact AUC; ``aucstream.datasets`` reads streams
and benchmark data; ``aucstream.evaluation`` runs the papers' protocols;
:func:`save_model` / :func:`load_model` store learners without pickle;
:func:`all_estimators` lists every learner; ``aucstream.checks`` is the battery every
learner passes (:func:`aucstream.checks.check_estimator`).

``import aucstream`` is light: the learners, their compiled kernels, numba and
scikit-learn are imported when a name is first used (``from aucstream import SOLAM``
or ``aucstream.SOLAM``), and the submodules when first accessed.
"""

import importlib as _importlib

from ._config import config_context, get_config, set_config

#: Where each public name lives: imported on first use (PEP 562), so that
#: ``import aucstream`` loads no learner, kernel, numba or scikit-learn.
_LAZY = {
    "all_estimators": "_discovery",
    "AdaOAM": "adaoam",
    "SAdaOAM": "adaoam",
    "LSSVMAUC": "batch",
    "SVMOR": "batch",
    "BatchUnivariate": "batch",
    "PairwiseHingeSVM": "batch",
    "SVMPerfAUC": "batch",
    "CAPO": "capo",
    "FSAUC": "fsauc",
    "FTRLAUC": "ftrl",
    "roc_auc": "metrics",
    "OAM": "oam",
    "ConfidenceWeighted": "online_classifiers",
    "CostSensitivePA": "online_classifiers",
    "PassiveAggressive": "online_classifiers",
    "Perceptron": "online_classifiers",
    "OPAUC": "opauc",
    "OnlinePAUC": "pauc",
    "PAUCI": "pauci",
    "LSPAUC": "lspauc",
    "load_model": "persistence",
    "save_model": "persistence",
    "StreamPipeline": "pipeline",
    "OnePassSearch": "search",
    "SOLAM": "solam",
    "SOLAML1": "solam",
    "SPAM": "spam",
    "UnivariateOnline": "univariate",
}

#: The public submodules, imported on first attribute access (``aucstream.datasets``).
_SUBMODULES = (
    "adaoam",
    "batch",
    "capo",
    "checks",
    "cli",
    "covariance",
    "dask",
    "datasets",
    "drift",
    "evaluation",
    "fsauc",
    "ftrl",
    "metrics",
    "oam",
    "online_classifiers",
    "opauc",
    "pauc",
    "pauci",
    "lspauc",
    "persistence",
    "pipeline",
    "preprocessing",
    "projections",
    "random_features",
    "reduction",
    "reservoir",
    "river",
    "search",
    "sketch_error",
    "solam",
    "spam",
    "streaming",
    "univariate",
)


def _version() -> str:
    """The installed distribution's version (``pyproject.toml``'s), or ``0+unknown``
    when aucstream runs from a source tree that is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("aucstream")
    except PackageNotFoundError:
        return "0+unknown"


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(_importlib.import_module(f".{_LAZY[name]}", __name__), name)
    elif name in _SUBMODULES:
        value = _importlib.import_module(f".{name}", __name__)
    elif name == "__version__":
        value = _version()
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # found once: later reads do not come here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | set(_SUBMODULES))


__all__ = [
    "CAPO",
    "FSAUC",
    "FTRLAUC",
    "LSSVMAUC",
    "OAM",
    "OPAUC",
    "OnlinePAUC",
    "PAUCI",
    "LSPAUC",
    "SOLAM",
    "SOLAML1",
    "SPAM",
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
