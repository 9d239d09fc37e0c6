"""Evaluation: protocols, cached parallel comparisons, statistics, reports, reproductions.

- :mod:`~aucstream.evaluation._protocol`: the papers' protocols (repeated stratified
  k-fold, hold-out 4:1:1), seeded splits, preprocessing, fast and quick modes.
- :mod:`~aucstream.evaluation._stats`: paired t-tests, ●/○ markers, win/tie/loss.
- :mod:`~aucstream.evaluation._runner`: one run per :class:`Job`, cached on disk
  (:class:`RunCache`) and run in parallel; learners found by ``all_estimators()``.
- :mod:`~aucstream.evaluation._compare`: :func:`compare`, :func:`convergence`,
  :func:`parameter_sweep` (inner-CV tuning over each learner's ``param_grid``).
- :mod:`~aucstream.evaluation._report`: Markdown, CSV, JSON and PNG reports.
- :mod:`~aucstream.evaluation._reproduce`: the papers' tables and figures.
- :func:`holdout_comparison` / :func:`tune_and_test`: the simple hold-out protocol of
  ``aucstream run``.
"""

from ._cache import RunCache, config_hash
from ._compare import Comparison, DatasetMeta, compare, convergence, parameter_sweep
from ._data import DataSpec, LoadedData, load_data, parse_data_spec
from ._holdout import ComparisonRow, coarse_grid, holdout_comparison, tune_and_test
from ._protocol import (
    PAPER_PROTOCOLS,
    Protocol,
    Split,
    deviations,
    get_protocol,
    inner_splits,
    outer_splits,
)
from ._report import PaperTable, write_report
from ._reproduce import REPRODUCTIONS, Reproduction, reproduce
from ._runner import Job, LearnerSpec, RunStats, execute_job, parse_learner_spec, run_jobs
from ._stats import compare_runs, mean_std, paired_ttest, win_tie_loss

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
    "coarse_grid",
    "compare",
    "compare_runs",
    "config_hash",
    "convergence",
    "deviations",
    "execute_job",
    "get_protocol",
    "holdout_comparison",
    "inner_splits",
    "load_data",
    "mean_std",
    "outer_splits",
    "paired_ttest",
    "parameter_sweep",
    "parse_data_spec",
    "parse_learner_spec",
    "reproduce",
    "run_jobs",
    "tune_and_test",
    "win_tie_loss",
    "write_report",
]
