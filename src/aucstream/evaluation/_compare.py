"""Comparisons of learners on datasets under a protocol: tuning, test runs, curves.

:func:`compare` is the tables of the papers: for every dataset and outer split, every
learner's hyperparameters are chosen on the training part (inner cross-validation
over its grid, or the validation part), then one pass over the training part with
the chosen values gives the test AUC and the training time. :func:`convergence`
records the test AUC along the pass (against examples seen and seconds), and
:func:`parameter_sweep` the test AUC against one parameter. All three share the
tuning runs and the cache, so a figure made after its table costs little.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.model_selection import ParameterGrid

from .._typing import PathLike
from ._cache import RunCache
from ._data import DataSpec, data_available, parse_data_spec
from ._protocol import Protocol
from ._runner import (
    Job,
    LearnerSpec,
    RunStats,
    best_params,
    load_for_protocol,
    parse_learner_spec,
    run_jobs,
)
from ._stats import TIE, compare_runs, mean_std

__all__ = ["Comparison", "DatasetMeta", "compare", "convergence", "parameter_sweep"]


@dataclass
class DatasetMeta:
    """A dataset of a comparison, as used (after any subsampling), or why it was skipped.

    ``n_samples`` is the number of examples used, ``n_available`` the number the
    dataset has (larger when the protocol subsampled it, see :attr:`subsampled`).
    """

    spec: DataSpec
    n_samples: int = 0
    n_features: int = 0
    n_positive: int = 0
    rule: str = ""
    skipped: str | None = None
    n_available: int = 0

    @property
    def subsampled(self) -> bool:
        """Whether the comparison used fewer examples than the dataset has."""
        return self.n_available > self.n_samples

    @property
    def title(self) -> str:
        return self.spec.title

    @property
    def imbalance(self) -> float:
        """T-/T+, the ratio of negatives to positives (Z11 Table 1)."""
        return (self.n_samples - self.n_positive) / max(self.n_positive, 1)


@dataclass
class Comparison:
    """Everything a report needs: the setup, the per-run records, the chosen values.

    Attributes
    ----------
    protocol : Protocol
    learners : list of LearnerSpec
        The learners that ran (available classes).
    datasets : list of DatasetMeta
        Including the skipped ones (``skipped`` says why).
    runs : list of dict
        One record per (learner, dataset, split) test run (see
        :func:`~aucstream.evaluation.execute_job`), with ``learner`` (label); sweeps
        add ``param`` and ``value``; convergence runs add ``curve``.
    tuning : list of dict
        Chosen parameters and their validation AUC per (learner, dataset, split).
    skipped_learners : dict of str to str
        Learners that could not run, and why.
    reference : str or None
        Label of the method the others are tested against (●/○).
    stats : RunStats
        Runs requested, taken from the cache, computed; errors.
    """

    protocol: Protocol
    learners: list[LearnerSpec]
    datasets: list[DatasetMeta]
    runs: list[dict] = field(default_factory=list)
    tuning: list[dict] = field(default_factory=list)
    skipped_learners: dict[str, str] = field(default_factory=dict)
    reference: str | None = None
    stats: RunStats = field(default_factory=RunStats)

    @property
    def used_datasets(self) -> list[DatasetMeta]:
        """The datasets that ran."""
        return [d for d in self.datasets if d.skipped is None]

    def values(self, dataset: str, learner: str, value: Any = None) -> dict[tuple[int, int], float]:
        """Test AUC per (trial, fold) of one cell (of one swept value)."""
        return {
            (r["trial"], r["fold"]): r["auc"]
            for r in self.runs
            if r["dataset"] == dataset and r["learner"] == learner and r.get("value") == value
        }

    def curves(self, dataset: str, learner: str) -> list[dict]:
        """The convergence curves (``n_seen``, ``seconds``, ``auc``) of one cell."""
        return [
            r["curve"]
            for r in self.runs
            if r["dataset"] == dataset and r["learner"] == learner and r.get("curve")
        ]

    def summary(self) -> list[dict]:
        """One row per (dataset, learner): mean and std of the test AUC, mean training
        seconds, runs, failures and the t-test outcome against the reference."""
        rows = []
        for meta in self.used_datasets:
            ref = (
                self.values(meta.title, self.reference)
                if self.reference in {s.title for s in self.learners}
                else None
            )
            for spec in self.learners:
                runs = [
                    r
                    for r in self.runs
                    if r["dataset"] == meta.title
                    and r["learner"] == spec.title
                    and r.get("value") is None
                ]
                aucs = [r["auc"] for r in runs]
                mean, std = mean_std(aucs)
                seconds = [r["train_seconds"] for r in runs]
                outcome = TIE
                if ref is not None and spec.title != self.reference:
                    outcome = compare_runs(ref, self.values(meta.title, spec.title))
                rows.append(
                    {
                        "dataset": meta.title,
                        "learner": spec.title,
                        "mean": mean,
                        "std": std,
                        "n_runs": int(np.isfinite(aucs).sum()) if aucs else 0,
                        "n_failed": sum(r["status"] != "ok" for r in runs),
                        "seconds": mean_std(seconds)[0],
                        "outcome": outcome,
                        "n_train": int(np.mean([r["n_train"] for r in runs])) if runs else 0,
                    }
                )
        return rows


def _as_learners(learners: Iterable) -> list[LearnerSpec]:
    return [x if isinstance(x, LearnerSpec) else parse_learner_spec(str(x)) for x in learners]


def _as_data(datasets: Iterable) -> list[DataSpec]:
    return [x if isinstance(x, DataSpec) else parse_data_spec(str(x)) for x in datasets]


def unavailable(spec: DataSpec, data_home: PathLike | None = None) -> str | None:
    """None when the files of ``spec`` are present, else why not, naming where they
    were looked for: the folder and what gave it (``data_home`` or the environment
    variable ``AUCSTREAM_DATA``), or that the variable is not set."""
    reason = data_available(spec, data_home)
    if reason is None or spec.is_file:
        return reason
    from ..datasets import dataset_info
    from ..datasets._registry import DATA_ENV

    try:
        dataset_info(spec.name)
    except ValueError:
        return reason  # an unknown name: the reason says so, with the close matches
    folder = data_home if data_home is not None else (os.environ.get(DATA_ENV) or None)
    if folder is None:
        return (
            f"needs the benchmark data folder, but {DATA_ENV} is not set (no folder was "
            f"looked at): export {DATA_ENV}=/path/to/data or pass --data-home"
        )
    source = (
        f"given by data_home / --data-home instead of ${DATA_ENV}"
        if data_home is not None
        else f"named by ${DATA_ENV}"
    )
    where = Path(folder).expanduser().absolute()
    if not where.is_dir():
        return f"the benchmark data folder {where} ({source}) does not exist"
    missing = [f.filename for f in dataset_info(spec.name).files]
    missing = [name for name in missing if not (where / name).is_file()]
    return f"missing {', '.join(missing)} in the benchmark data folder {where} ({source})"


class _Session:
    """Shared setup of one comparison: cache, workers, progress, accumulated stats."""

    def __init__(
        self,
        learners,
        datasets,
        protocol,
        reference,
        cache_dir,
        n_jobs,
        data_home,
        progress,
        on_record=None,
    ):
        self.protocol = protocol
        self.n_jobs, self.data_home, self.progress = n_jobs, data_home, progress
        self.on_record = on_record
        self.stats = RunStats()
        specs = _as_learners(learners)
        labels = [s.title for s in specs]
        if len(set(labels)) != len(labels):
            raise ValueError(f"learner labels must be distinct, got {labels}")
        self.result = Comparison(
            protocol,
            [s for s in specs if s.available],
            [],
            reference=reference if reference is not None else (labels[0] if labels else None),
        )
        self.result.skipped_learners = {
            s.title: f"class {s.estimator} is not in aucstream.all_estimators()"
            for s in specs
            if not s.available
        }
        for spec in _as_data(datasets):
            reason = unavailable(spec, data_home)
            meta = DatasetMeta(spec, skipped=reason)
            if reason is None:
                data = load_for_protocol(spec, protocol, data_home)
                meta.n_samples, meta.n_features = data.n_samples, data.n_features
                meta.n_positive, meta.rule = data.n_positive, data.rule
                meta.n_available = data.n_samples
                if protocol.max_samples is not None:
                    whole = protocol.replace(max_samples=None)
                    meta.n_available = load_for_protocol(spec, whole, data_home).n_samples
            self.result.datasets.append(meta)
        if self.result.datasets and not self.result.used_datasets:
            # nothing can run: fail before anything (a cache folder, a report) is written
            reasons = "; ".join(f"{m.title} ({m.skipped})" for m in self.result.datasets)
            raise ValueError(f"no dataset could be used: {reasons}")
        self.cache = RunCache(cache_dir) if cache_dir is not None else None
        self.result.stats = self.stats

    def run(self, jobs: Sequence[Job], label: str) -> list[dict]:
        records, stats = run_jobs(
            jobs, self.cache, self.n_jobs, self.data_home, self.progress, label, self.on_record
        )
        self.stats += stats
        return records

    def split_ids(self, n_splits: int | None = None) -> list[tuple[int, int]]:
        ids = self.protocol.split_ids()
        return ids if n_splits is None else ids[:n_splits]

    def tune(self, split_ids: Sequence[tuple[int, int]]) -> dict:
        """Chosen parameters per (learner, dataset, trial, fold); fills ``tuning``."""
        p = self.protocol
        where = split_ids if p.tune == "each" else self.split_ids()[:1]
        n_inner = 1 if p.holdout else p.inner_folds
        jobs, slots = [], []
        for meta in self.result.used_datasets:
            for trial, fold in where:
                for spec in self.result.learners:
                    grid = spec.search_grid(p)
                    if not grid:
                        continue
                    for candidate in ParameterGrid(grid):
                        params = tuple(sorted(candidate.items()))
                        for k in range(n_inner):
                            jobs.append(Job(spec, meta.spec, p, trial, fold, params, inner=k))
                            slots.append((spec.title, meta.title, trial, fold, params))
        records = self.run(jobs, "tuning")
        scores: dict = defaultdict(lambda: defaultdict(list))
        for slot, record in zip(slots, records, strict=True):
            scores[slot[:4]][slot[4]].append(record["auc"])
        chosen = {}
        for cell, by_params in scores.items():  # grid order: the first maximum wins
            best, score, diverged = best_params(by_params.items())
            chosen[cell] = best
            self.result.tuning.append(
                {
                    "learner": cell[0],
                    "dataset": cell[1],
                    "trial": cell[2],
                    "fold": cell[3],
                    "params": dict(best),
                    "validation_auc": score,
                    "n_candidates": len(by_params),
                    "n_failed": diverged,
                }
            )
        return chosen

    def params_for(self, chosen: dict, spec, meta, trial: int, fold: int) -> tuple:
        if self.protocol.tune == "first":
            trial, fold = self.split_ids()[0]
        return chosen.get((spec.title, meta.title, trial, fold), ())

    def test_jobs(self, chosen, split_ids, checkpoints=0, override=None):
        jobs, labels = [], []
        for meta in self.result.used_datasets:
            for trial, fold in split_ids:
                for spec in self.result.learners:
                    if checkpoints and spec.is_batch:
                        continue
                    params = dict(self.params_for(chosen, spec, meta, trial, fold))
                    params.update(override or {})
                    jobs.append(
                        Job(
                            spec,
                            meta.spec,
                            self.protocol,
                            trial,
                            fold,
                            tuple(sorted(params.items())),
                            checkpoints=checkpoints,
                        )
                    )
                    labels.append(spec.title)
        return jobs, labels

    def tested(self, label: str, n_splits: int | None = None, checkpoints: int = 0) -> Comparison:
        """Tune on the outer splits, then run and collect the test runs."""
        ids = self.split_ids(n_splits)
        jobs, labels = self.test_jobs(self.tune(ids), ids, checkpoints=checkpoints)
        self.collect(jobs, labels, self.run(jobs, label))
        return self.result

    def collect(self, jobs, labels, records, **extra) -> None:
        for job, label, record in zip(jobs, labels, records, strict=True):
            self.result.runs.append(
                {**record, "learner": label, "dataset": job.data.title, **extra}
            )


def compare(
    learners: Sequence,
    datasets: Sequence,
    protocol: Protocol,
    *,
    reference: str | None = None,
    cache_dir: str | Path | None = None,
    n_jobs: int = 2,
    data_home: PathLike | None = None,
    progress: bool | None = None,
    on_record: Callable[[Job, dict], None] | None = None,
) -> Comparison:
    """Compare learners on datasets under ``protocol`` (the papers' tables).

    Parameters
    ----------
    learners : sequence of LearnerSpec or str
        E.g. ``["OPAUC", "OAM_gra=OAM(update='gra')"]`` (see
        :func:`parse_learner_spec`). Classes that do not exist are skipped (and
        reported).
    datasets : sequence of DataSpec or str
        Registry names or file paths with a binary rule (see
        :func:`parse_data_spec`). Datasets whose files are missing are skipped
        (and reported).
    protocol : Protocol
    reference : str or None
        Label of the method tested against the others (default: the first learner).
    cache_dir : str, path or None
        Directory of finished runs (None: no cache).
    n_jobs : int, default=2
        Worker processes.
    data_home : str or None
        Folder of the registered datasets (default ``$AUCSTREAM_DATA``).
    progress : bool or None
        Progress lines on stderr (None: when it is a terminal).
    on_record : callable, optional
        Called with (job, record) after every computed run.

    Returns
    -------
    Comparison
    """
    session = _Session(
        learners, datasets, protocol, reference, cache_dir, n_jobs, data_home, progress, on_record
    )
    return session.tested("test runs")


def convergence(
    learners: Sequence,
    datasets: Sequence,
    protocol: Protocol,
    *,
    checkpoints: int = 40,
    n_splits: int | None = 1,
    reference: str | None = None,
    cache_dir: str | Path | None = None,
    n_jobs: int = 2,
    data_home: PathLike | None = None,
    progress: bool | None = None,
) -> Comparison:
    """Test AUC along one pass: after each of ``checkpoints`` consecutive chunks.

    The hyperparameters are tuned as in :func:`compare` (same runs, same cache);
    the online learners then learn the training part by ``partial_fit`` over
    consecutive chunks, and after each chunk the AUC on the test part and the
    cumulated training time (evaluation not included) are recorded. Batch learners
    are left out.

    Parameters
    ----------
    learners, datasets, protocol, reference, cache_dir, n_jobs, data_home, progress
        As in :func:`compare`.
    checkpoints : int, default=40
        Chunks of the pass (evenly spaced checkpoints).
    n_splits : int or None, default=1
        Curves on the first ``n_splits`` outer splits (None: all).

    Returns
    -------
    Comparison
        ``runs`` hold a ``curve`` entry: ``n_seen``, ``seconds``, ``auc`` lists.
    """
    session = _Session(
        learners, datasets, protocol, reference, cache_dir, n_jobs, data_home, progress
    )
    return session.tested("curves", n_splits, checkpoints)


def parameter_sweep(
    learners: Sequence,
    datasets: Sequence,
    protocol: Protocol,
    param: str,
    values: Sequence,
    *,
    n_splits: int | None = None,
    reference: str | None = None,
    cache_dir: str | Path | None = None,
    n_jobs: int = 2,
    data_home: PathLike | None = None,
    progress: bool | None = None,
) -> Comparison:
    """Test AUC against one parameter (the papers' parameter-influence figures).

    The other hyperparameters are tuned as in :func:`compare`; then ``param`` is set
    to each of ``values`` (replacing a tuned or fixed value) and the learner is
    trained and tested on the outer splits.

    Parameters
    ----------
    learners, datasets, protocol, reference, cache_dir, n_jobs, data_home, progress
        As in :func:`compare`.
    param : str
        A constructor parameter, e.g. ``"eta"``, ``"lam"``, ``"buffer_size"``.
    values : sequence
        Its values.
    n_splits : int or None
        Use the first ``n_splits`` outer splits (None: all).

    Returns
    -------
    Comparison
        ``runs`` carry ``param`` and ``value``.
    """
    session = _Session(
        learners, datasets, protocol, reference, cache_dir, n_jobs, data_home, progress
    )
    result = session.result
    for spec in list(result.learners):
        if param not in spec.cls().get_params():
            result.learners.remove(spec)
            result.skipped_learners[spec.title] = f"{spec.estimator} has no parameter {param!r}"
    ids = session.split_ids(n_splits)
    chosen = session.tune(ids)
    all_jobs, all_labels, values_of = [], [], []
    for value in values:
        jobs, labels = session.test_jobs(chosen, ids, override={param: value})
        all_jobs += jobs
        all_labels += labels
        values_of += [value] * len(jobs)
    records = session.run(all_jobs, f"{param} sweep")
    for job, label, record, value in zip(all_jobs, all_labels, records, values_of, strict=True):
        session.collect([job], [label], [record], param=param, value=value)
    return session.result
