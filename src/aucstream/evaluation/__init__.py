"""Evaluation: protocols, cached parallel comparisons, statistics, reports, reproductions.

One path runs everything: every run, whether a paper's table, a curve, a sweep, the
quick hold-out of ``aucstream run`` or :func:`tune_and_test`, is trained, timed,
scored and tuned by the runner's :func:`fit_and_score` and :func:`best_params`.

Layers (each module imports only from the layers before it):

1. data and settings: :mod:`._values` (:func:`parse_value`, the one grammar of values
   written as text: ``2^-6``, ``1e-3``, ``True``, ``None``, ``'gra'``/``gra``, and
   learner specs ``[LABEL=]Class(name=value, ...)``), :mod:`._data`
   (:class:`DataSpec`, files read and labels made binary by
   :mod:`aucstream.datasets`), :mod:`._protocol` (the papers' protocols,
   seeded splits, preprocessing, :func:`coarse_grid`), :mod:`._stats` (paired
   t-tests, ●/○, win/tie/loss), :mod:`._cache` (:class:`RunCache`), :mod:`._paper`
   (the papers' numbers, :class:`PaperTable`; plain data);
2. :mod:`._runner`: one run per :class:`Job`, cached and run in parallel; learners
   found by ``all_estimators()``, their needs read from declared capabilities
   (``is_batch``, ``stream_length_param``, ``param_grid``);
3. :mod:`._compare` (:func:`compare`, :func:`convergence`, :func:`parameter_sweep`)
   and :mod:`._holdout` (:func:`holdout_comparison`, :func:`tune_and_test` on arrays
   in memory);
4. :mod:`._report`: Markdown, CSV, JSON and PNG reports of a :class:`Comparison`;
5. :mod:`._reproduce`: the papers' tables and figures (``aucstream reproduce``) and
   :func:`compare_and_report` (what ``aucstream compare`` runs).

Apart from the layers, :mod:`._prequential` (:func:`prequential`) replays a stream as
a deployment sees it: each example scored on arrival, its label learnt after a delay
(or never), exact streaming metrics at checkpoints.

The command line (:mod:`aucstream.cli`) uses only the names exported here.
"""

from ._cache import RunCache, config_hash
from ._compare import Comparison, DatasetMeta, compare, convergence, parameter_sweep
from ._data import DataSpec, LoadedData, load_data, parse_data_spec
from ._holdout import ComparisonRow, holdout_comparison, tune_and_test
from ._paper import PaperTable
from ._prequential import prequential
from ._prequential_columns import prequential_metrics
from ._protocol import (
    PAPER_PROTOCOLS,
    Protocol,
    Split,
    coarse_grid,
    deviations,
    get_protocol,
    inner_splits,
    outer_splits,
)
from ._report import write_report
from ._reproduce import REPRODUCTIONS, Reproduction, compare_and_report, reproduce
from ._runner import (
    Job,
    LearnerSpec,
    RunStats,
    best_params,
    execute_job,
    fit_and_score,
    learner_classes,
    parse_learner_spec,
    run_jobs,
)
from ._stats import compare_runs, mean_std, paired_ttest, win_tie_loss
from ._values import parse_value

__all__ = [
    "PAPER_PROTOCOLS",
    "REPRODUCTIONS",
    "PaperTable",
    "Reproduction",
    "Comparison",
    "ComparisonRow",
    "DataSpec",
    "DatasetMeta",
    "Job",
    "LearnerSpec",
    "LoadedData",
    "Protocol",
    "RunCache",
    "RunStats",
    "Split",
    "best_params",
    "coarse_grid",
    "compare",
    "compare_and_report",
    "compare_runs",
    "config_hash",
    "convergence",
    "deviations",
    "execute_job",
    "fit_and_score",
    "get_protocol",
    "holdout_comparison",
    "inner_splits",
    "learner_classes",
    "load_data",
    "mean_std",
    "outer_splits",
    "paired_ttest",
    "parameter_sweep",
    "parse_data_spec",
    "parse_learner_spec",
    "parse_value",
    "prequential",
    "prequential_metrics",
    "reproduce",
    "run_jobs",
    "tune_and_test",
    "win_tie_loss",
    "write_report",
]
