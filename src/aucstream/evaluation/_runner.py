"""Runs: one learner with fixed hyperparameters on one split, cached and parallel.

A :class:`Job` is a complete description of one run (learner class and parameters,
data, protocol, outer split, inner fold or test, convergence checkpoints). Its hash
names the run's record in a :class:`~aucstream.evaluation.RunCache`; :func:`run_jobs`
takes the cached records and computes the others on a pool of processes (joblib),
writing each record as soon as it arrives, so an interrupted comparison resumes
where it stopped.

Learners are found by class name through :func:`aucstream.all_estimators`; their
grids come from ``param_grid`` and their batch status from ``is_batch``: there is no
per-learner code here.
"""

from __future__ import annotations

import ctypes
import functools
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, clone

from .._typing import MatrixLike, PathLike
from ..metrics import roc_auc
from ..streaming import Progress
from ._cache import RunCache, config_hash
from ._data import DataSpec, LoadedData, load_data
from ._protocol import (
    SEED_CAP,
    SEED_LEARNER,
    SEED_ORDER,
    SEED_SUB,
    Protocol,
    cap_indices,
    coarse_grid,
    inner_splits,
    outer_splits,
    preprocess,
    run_seed,
    stratified_subsample,
)
from ._values import parse_call

__all__ = [
    "Job",
    "LearnerSpec",
    "RunStats",
    "best_params",
    "execute_job",
    "fit_and_score",
    "learner_classes",
    "parse_learner_spec",
    "run_jobs",
    "train_one_pass",
]

#: Version of the run records; bump it when a change in the harness alters results.
RECORD_FORMAT = 1
#: Rows expanded at a time by a learner's random-feature map (``LearnerSpec.features``).
FEATURE_CHUNK = 256


@functools.lru_cache(maxsize=1)
def _all_learners() -> tuple:
    from .._discovery import all_estimators

    return tuple(all_estimators())


def learner_classes() -> dict[str, Any]:
    """Every learner class of the package by name (``aucstream.all_estimators()``).

    Returns
    -------
    dict of str to type
        Class name to class, online and batch learners alike (``cls.is_batch``).

    Examples
    --------
    >>> from aucstream.evaluation import learner_classes
    >>> classes = learner_classes()
    >>> classes["OAM"].__name__, classes["OAM"].is_batch
    ('OAM', False)
    """
    return dict(_all_learners())


def _freeze(mapping: Mapping | None) -> tuple:
    if not mapping:
        return ()
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in mapping.items()))


@dataclass(frozen=True)
class LearnerSpec:
    """A learner of a comparison: a class name, fixed parameters and a display label.

    Parameters
    ----------
    estimator : str
        Class name as listed by :func:`aucstream.all_estimators`, e.g. ``"OAM"``.
    params : tuple of (str, value)
        Fixed parameters (not tuned), e.g. ``(("update", "gra"),)``.
    label : str or None
        Column name in reports (default: the class name).
    grid : tuple of (str, tuple) or None
        Grid to search instead of the class's ``param_grid``.
    max_train : int or None
        Train on at most this many examples, sampled uniformly (e.g. OAM_inf, whose
        cost per step grows with the examples seen).
    note : str
        Shown in reports.
    features : tuple of (str, value)
        Parameters of a :class:`~aucstream.random_features.RandomFourierFeatures` map
        put before the learner (G16 §7.2, Table 4), e.g.
        ``(("n_components", 2000), ("random_state", 0))``; an online learner then
        runs in a :class:`~aucstream.pipeline.ChunkedPipeline` that expands one chunk
        of rows at a time, a batch learner in a scikit-learn pipeline on the expanded
        training part. Empty: the learner sees the data as they are.
    """

    estimator: str
    params: tuple = ()
    label: str | None = None
    grid: tuple | None = None
    max_train: int | None = None
    note: str = ""
    features: tuple = ()

    @classmethod
    def make(
        cls,
        label: str,
        estimator: str,
        max_train: int | None = None,
        note: str = "",
        grid: Mapping | None = None,
        features: Mapping | None = None,
        **params: Any,
    ) -> LearnerSpec:
        """Convenience constructor: ``LearnerSpec.make("OAM_gra", "OAM", update="gra")``."""
        return cls(
            estimator,
            _freeze(params),
            label,
            _freeze(grid) if grid else None,
            max_train,
            note,
            _freeze(features),
        )

    @property
    def title(self) -> str:
        """Column name in reports."""
        return self.label or self.estimator

    @property
    def fixed(self) -> dict:
        """The fixed parameters."""
        return dict(self.params)

    @property
    def available(self) -> bool:
        """Whether the class exists in this installation."""
        return self.estimator in learner_classes()

    @property
    def cls(self) -> Any:
        """The learner class."""
        classes = learner_classes()
        if self.estimator not in classes:
            raise ValueError(f"unknown learner {self.estimator!r}; known: {', '.join(classes)}")
        return classes[self.estimator]

    @property
    def is_batch(self) -> bool:
        """The class's ``is_batch`` flag."""
        return bool(self.cls.is_batch)

    def search_grid(self, protocol: Protocol) -> dict[str, list]:
        """The grid searched under ``protocol`` (fixed parameters removed)."""
        grid = (
            {k: list(v) for k, v in self.grid}
            if self.grid is not None
            else dict(getattr(self.cls, "param_grid", {}))
        )
        grid = {k: list(v) for k, v in grid.items() if k not in self.fixed}
        if protocol.grid == "coarse":
            grid = coarse_grid(grid, protocol.coarse_values)
        return grid

    def build(
        self, params: Mapping | None = None, random_state: int | None = None
    ) -> BaseEstimator:
        """An unfitted learner with the fixed parameters updated by ``params``."""
        kwargs = {**self.fixed, **(params or {})}
        estimator = self.cls(**kwargs)
        if (
            random_state is not None
            and "random_state" in estimator.get_params()
            and "random_state" not in kwargs
        ):
            estimator.set_params(random_state=random_state)
        if self.features:
            from ..pipeline import ChunkedPipeline
            from ..random_features import RandomFourierFeatures

            rff = RandomFourierFeatures(**dict(self.features))
            if self.is_batch:  # no partial_fit: the batch learner sees the expanded data
                from sklearn.pipeline import make_pipeline

                return make_pipeline(rff, estimator)
            return ChunkedPipeline(rff, estimator, chunk_size=FEATURE_CHUNK)
        return estimator


def parse_learner_spec(text: str) -> LearnerSpec:
    """A :class:`LearnerSpec` from ``[LABEL=]Class[(name=value, ...)]``.

    The values follow the one grammar of :func:`~aucstream.evaluation.parse_value`
    (``2^-6``, ``1e-3``, ``True``, ``None``, ``'gra'`` or the bare word ``gra``).

    Parameters
    ----------
    text : str
        E.g. ``OPAUC``, ``OAM_gra=OAM(update=gra)``, ``OAM(eta=2^-6)``,
        ``Uni-Exp=UnivariateOnline(loss='exp')``, ``OAM_inf=OAM(buffer_size=None)``.

    Returns
    -------
    LearnerSpec
        Labelled by ``LABEL``, else by the text for a class with parameters.

    Raises
    ------
    ValueError
        One line naming the text and the part that could not be read.

    Examples
    --------
    >>> from aucstream.evaluation import parse_learner_spec
    >>> spec = parse_learner_spec("OAM_gra=OAM(update=gra, eta=2^-6)")
    >>> spec.estimator, spec.fixed, spec.title
    ('OAM', {'eta': 0.015625, 'update': 'gra'}, 'OAM_gra')
    """
    label, name, params = parse_call(text)
    if not params:
        return LearnerSpec(name, (), label)
    return LearnerSpec(name, _freeze(params), label or text)


# ---------------------------------------------------------------------------- jobs


@dataclass(frozen=True)
class Job:
    """One run: fit ``learner`` with ``params`` on a training part, AUC on a test part.

    Parameters
    ----------
    learner : LearnerSpec
    data : DataSpec
    protocol : Protocol
    trial, fold : int
        The outer split.
    params : tuple of (str, value)
        Hyperparameters (added to the learner's fixed ones).
    inner : int or None
        None: train on the outer training part and test on the outer test part.
        k: train and validate on inner fold k (hyperparameter search).
    checkpoints : int
        0, or the number of checkpoints of a convergence curve: the training part is
        fed to ``partial_fit`` in that many consecutive chunks, with the test AUC and
        the training time after each.
    """

    learner: LearnerSpec
    data: DataSpec
    protocol: Protocol
    trial: int
    fold: int
    params: tuple = ()
    inner: int | None = None
    checkpoints: int = 0

    @property
    def all_params(self) -> dict:
        """Fixed and tuned parameters together."""
        return {**self.learner.fixed, **dict(self.params)}

    def train_cap(self) -> int | None:
        """The largest training size of this run (batch cap, learner cap)."""
        caps = [self.learner.max_train]
        if self.learner.is_batch:
            caps.append(self.protocol.cap_for(self.data.name))
        known = [c for c in caps if c is not None]
        return min(known) if known else None

    def config(self) -> dict:
        """Everything that determines the result (hashed into the cache key)."""
        from .. import __version__

        extra = {"features": dict(self.learner.features)} if self.learner.features else {}
        return {
            **extra,
            "format": RECORD_FORMAT,
            "aucstream": __version__,
            "estimator": self.learner.estimator,
            "params": self.all_params,
            "train_cap": self.train_cap(),
            "data": self.data.key(),
            "split": self.protocol.split_key(),
            "trial": self.trial,
            "fold": self.fold,
            "inner": self.inner,
            "tuning": (
                self.protocol.tuning_key(self.data.name) if self.inner is not None else None
            ),
            "checkpoints": self.checkpoints,
        }

    def key(self) -> str:
        """Hash of :meth:`config`."""
        return config_hash(self.config())


# ------------------------------------------------------------------ worker side


@functools.lru_cache(maxsize=2)
def _loaded(data: DataSpec, data_home, max_samples: int | None, seed: int) -> LoadedData:
    loaded = load_data(data, data_home)
    if max_samples is not None and max_samples < loaded.n_samples:
        keep = stratified_subsample(loaded.y, max_samples, seed)
        loaded = LoadedData(loaded.X[keep], loaded.y[keep], loaded.rule)
    return loaded


def load_for_protocol(data: DataSpec, protocol: Protocol, data_home=None) -> LoadedData:
    """The data as a protocol uses it (after the quick mode's subsampling)."""
    seed = run_seed(protocol, 0, 0, SEED_SUB)
    return _loaded(data, data_home, protocol.max_samples, seed)


@functools.lru_cache(maxsize=4)
def _splits(data: DataSpec, data_home, protocol: Protocol):
    y = load_for_protocol(data, protocol, data_home).y
    return {(s.trial, s.fold): s for s in outer_splits(y, protocol)}


@functools.lru_cache(maxsize=3)
def _prepared(data: DataSpec, data_home, protocol: Protocol, trial: int, fold: int):
    loaded = load_for_protocol(data, protocol, data_home)
    split = _splits(data, data_home, protocol)[trial, fold]
    return preprocess(protocol.preprocess, loaded.X, split.train), loaded.y, split


_WARMED: set[str] = set()


def _warm_up(estimator, X, y) -> None:
    """Fit a copy on a few examples once per class and process, so that loading the
    compiled kernels is not counted in the timed pass."""
    name = type(estimator).__name__
    if name in _WARMED:
        return
    _WARMED.add(name)
    rows = np.concatenate([np.flatnonzero(y == 1)[:16], np.flatnonzero(y == -1)[:16]])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clone(estimator).fit(X[rows], y[rows])
    except Exception:  # noqa: BLE001 - a warm-up failure only costs timing accuracy
        pass


#: Rows per ``partial_fit`` call of a tuning run: a diverging step size is detected
#: (the learner raises FloatingPointError) after at most this many examples.
TUNING_CHUNK = 1024


def _is_batch(estimator) -> bool:
    """The declared ``is_batch``; an estimator without it (e.g. a scikit-learn
    pipeline) is fitted at once, like a batch learner."""
    return bool(getattr(estimator, "is_batch", True))


def _length_param(estimator) -> str | None:
    return getattr(estimator, "stream_length_param", None)


def _announce_length(estimator, n: int) -> None:
    """Tell a learner that plans its pass from the stream length (its declared
    ``stream_length_param``, e.g. FSAUC's ``n_samples``) that length, unless set."""
    name = _length_param(estimator)
    if name is not None and getattr(estimator, name) is None:
        estimator.set_params(**{name: n})


def train_one_pass(estimator, X, y, chunk: int | None = None) -> None:
    """One pass over ``(X, y)``.

    ``fit`` (one call, as timed in the reports), or with ``chunk``, ``partial_fit``
    over consecutive chunks of that many rows: the same model (the package's
    contract), but a diverging run stops early. Batch learners and learners that need
    the stream length (a declared ``stream_length_param``) always use ``fit``.
    """
    if chunk is None or _is_batch(estimator) or _length_param(estimator) is not None:
        estimator.fit(X, y)
        return
    for start in range(0, y.size, chunk):
        estimator.partial_fit(X[start : start + chunk], y[start : start + chunk], classes=[-1, 1])


def _test_auc(estimator, X_test, y_test) -> float:
    return roc_auc(y_test == estimator.classes_[1], estimator.decision_function(X_test))


def _curve(estimator, X_train, y_train, X_test, y_test, checkpoints: int) -> dict:
    _announce_length(estimator, y_train.size)
    bounds = np.unique(np.linspace(0, y_train.size, checkpoints + 1).round().astype(int))
    seen, seconds, aucs = [], [], []
    elapsed = 0.0
    for start, stop in zip(bounds[:-1], bounds[1:]):
        tic = time.perf_counter()
        estimator.partial_fit(X_train[start:stop], y_train[start:stop], classes=[-1, 1])
        elapsed += time.perf_counter() - tic
        seen.append(int(stop))
        seconds.append(elapsed)
        aucs.append(_test_auc(estimator, X_test, y_test))
    return {"n_seen": seen, "seconds": seconds, "auc": aucs}


def fit_and_score(
    estimator: BaseEstimator,
    X_train: MatrixLike,
    y_train: ArrayLike,
    X_test: MatrixLike,
    y_test: ArrayLike,
    *,
    chunk: int | None = None,
    checkpoints: int = 0,
) -> dict:
    """Train ``estimator`` by one pass and measure its test AUC: the core of every run.

    Parameters
    ----------
    estimator : BaseStreamingAUC or classifier
        An unfitted learner (it is fitted in place); any scikit-learn classifier with
        ``decision_function`` works and is fitted at once.
    X_train, y_train, X_test, y_test : arrays
        The parts, labels in {-1, +1}.
    chunk : int or None
        See :func:`train_one_pass` (tuning runs stop early when they diverge).
    checkpoints : int, default=0
        If positive, a convergence curve of that many checkpoints (``curve``).

    Returns
    -------
    dict
        ``auc`` (NaN if the learner diverged or failed), ``train_seconds`` (wall time
        of the training pass), ``cpu_seconds``, ``status`` ("ok", "diverged",
        "error"), ``error``, and ``curve`` when asked.
    """
    record: dict[str, Any] = {
        "auc": float("nan"),
        "train_seconds": float("nan"),
        "cpu_seconds": float("nan"),
        "status": "ok",
        "error": "",
    }
    try:
        _warm_up(estimator, X_train, y_train)
        if checkpoints:
            if _is_batch(estimator):
                raise TypeError(f"{type(estimator).__name__} is a batch learner: no curve")
            curve = _curve(estimator, X_train, y_train, X_test, y_test, checkpoints)
            record.update(curve=curve, auc=curve["auc"][-1], train_seconds=curve["seconds"][-1])
            return record
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            cpu, wall = time.process_time(), time.perf_counter()
            train_one_pass(estimator, X_train, y_train, chunk)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        record.update(train_seconds=wall, cpu_seconds=cpu)
        record["auc"] = _test_auc(estimator, X_test, y_test)
    except FloatingPointError as error:  # a step size too large for the data
        record.update(status="diverged", error=str(error))
    except Exception as error:  # noqa: BLE001 - reported, not cached, the others go on
        record.update(status="error", error=f"{type(error).__name__}: {error}")
    return record


def best_params(candidates: Iterable[tuple[tuple, Sequence[float]]]) -> tuple[tuple, float, int]:
    """The tuning rule: the candidate with the highest mean validation AUC.

    A candidate with a NaN among its AUCs (it diverged on some fold) is never
    chosen; among equal means the first in grid order wins.

    Parameters
    ----------
    candidates : iterable of (params, aucs)
        In grid order; ``params`` is a tuple of (name, value).

    Returns
    -------
    params : tuple
        The chosen candidate (``()`` when none is finite).
    score : float
        Its mean AUC (NaN when none is finite).
    n_failed : int
        Candidates left out as diverged.
    """
    best, best_score, failed = (), -np.inf, 0
    for params, aucs in candidates:
        score = float(np.mean(aucs)) if np.all(np.isfinite(aucs)) else np.nan
        failed += not np.isfinite(score)
        if np.isfinite(score) and score > best_score:
            best, best_score = params, score
    return best, (best_score if best else np.nan), failed


def execute_job(job: Job, data_home: PathLike | None = None) -> dict:
    """Run one job (in the current process) and return its record.

    Parameters
    ----------
    job : Job
    data_home : str or None
        Folder of the registered datasets.

    Returns
    -------
    dict
        ``auc`` (NaN if the learner diverged), ``train_seconds`` (wall time of the
        training pass), ``cpu_seconds``, ``n_train``, ``n_test``, ``status`` ("ok",
        "diverged", "error"), ``error``, and ``curve`` for convergence jobs.
    """
    record: dict[str, Any] = {
        "estimator": job.learner.estimator,
        "params": job.all_params,
        "tuned": dict(job.params),
        "dataset": job.data.title,
        "trial": job.trial,
        "fold": job.fold,
        "inner": job.inner,
        "auc": float("nan"),
        "train_seconds": float("nan"),
        "cpu_seconds": float("nan"),
        "n_train": 0,
        "n_test": 0,
        "status": "ok",
        "error": "",
    }
    try:
        estimator, parts = _job_parts(job, data_home)
    except Exception as error:  # noqa: BLE001 - reported, not cached, the others go on
        record.update(status="error", error=f"{type(error).__name__}: {error}")
        return record
    record.update(n_train=int(parts[1].size), n_test=int(parts[3].size))
    # tuning runs stop early when they diverge; test runs are timed as one fit
    chunk = None if job.inner is None else TUNING_CHUNK
    record.update(fit_and_score(estimator, *parts, chunk=chunk, checkpoints=job.checkpoints))
    return record


def _job_parts(job: Job, data_home) -> tuple:
    """The learner of a job and its training and test parts (seeded order and caps)."""
    X, y, split = _prepared(job.data, data_home, job.protocol, job.trial, job.fold)
    if job.inner is None:
        train, test = split.train, split.test
    else:
        train, test = inner_splits(y, split, job.protocol, job.data.name)[job.inner]
    code = 0 if job.inner is None else job.inner + 1
    p = job.protocol
    train = cap_indices(train, job.train_cap(), run_seed(p, job.trial, job.fold, code, SEED_CAP))
    # online learners depend on the order: every run sees a seeded random order
    order = np.random.default_rng(run_seed(p, job.trial, job.fold, code, SEED_ORDER))
    train = order.permutation(train)
    estimator = job.learner.build(dict(job.params), run_seed(p, job.trial, job.fold, SEED_LEARNER))
    return estimator, (X[train], y[train], X[test], y[test])


#: The parent a worker process is bound to (see :func:`_end_with_parent`).
_BOUND_TO: int | None = None
_PR_SET_PDEATHSIG = 1


def _watch_parent(parent: int, every: float = 1.0) -> None:
    while True:
        time.sleep(every)
        if os.getppid() != parent:
            os._exit(1)


def _end_with_parent(parent: int) -> None:
    """Make this worker process end when ``parent`` (the process of the pool) ends.

    Also when the parent is killed with SIGKILL and has no chance to stop its pool.
    On Linux the kernel sends SIGKILL to the worker when its parent dies
    (``prctl(PR_SET_PDEATHSIG)``; the workers are started by the parent's main thread,
    whose end is the process's end); elsewhere a daemon thread checks every second
    whether the worker has been handed to another parent. Idempotent.
    """
    global _BOUND_TO
    if _BOUND_TO == parent:
        return
    _BOUND_TO = parent
    watched = False
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            watched = libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
        except (OSError, AttributeError):  # pragma: no cover - no libc prctl
            watched = False
    if os.getppid() != parent:  # the parent died before the guard was set
        os._exit(1)
    if not watched:  # pragma: no cover - other platforms
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _indexed(index: int, job: Job, data_home) -> tuple[int, dict]:
    return index, execute_job(job, data_home)


# ------------------------------------------------------------------ main side


@dataclass
class RunStats:
    """What :func:`run_jobs` did: runs requested, found in the cache, computed."""

    total: int = 0
    cached: int = 0
    computed: int = 0
    errors: list = field(default_factory=list)
    seconds: float = 0.0

    def __iadd__(self, other: RunStats) -> RunStats:
        self.total += other.total
        self.cached += other.cached
        self.computed += other.computed
        self.errors += other.errors
        self.seconds += other.seconds
        return self


def run_jobs(
    jobs: Sequence[Job],
    cache: RunCache | None = None,
    n_jobs: int = 2,
    data_home: PathLike | None = None,
    progress: bool | None = None,
    label: str = "runs",
    on_record: Callable[[Job, dict], None] | None = None,
) -> tuple[list[dict], RunStats]:
    """Records of ``jobs``: from the cache, or computed in parallel and cached.

    Parameters
    ----------
    jobs : sequence of Job
    cache : RunCache or None
        Where finished runs are looked up and stored (None: no caching).
    n_jobs : int, default=2
        Worker processes (joblib/loky); 1 runs in this process.
    data_home : str or None
        Folder of the registered datasets.
    progress : bool or None
        Show a progress line (None: when stderr is a terminal).
    label : str
        Progress label.
    on_record : callable, optional
        Called with (job, record) after each computed run, once it is cached
        (e.g. for logging; raising in it stops the batch, like an interrupt).

    Returns
    -------
    records : list of dict
        One per job, in order. Errors (not divergence) are reported but not cached.
    stats : RunStats
    """
    start = time.perf_counter()
    keys = [job.key() for job in jobs]
    records: list[dict | None] = [None] * len(jobs)
    stats = RunStats(total=len(jobs))
    line = Progress(label, total=len(jobs), unit="runs", enabled=progress)
    try:
        todo: dict[str, list[int]] = {}  # key -> positions of the jobs that need it
        for i, key in enumerate(keys):
            record = cache.get(key) if cache is not None else None
            if record is not None:
                records[i] = record
                stats.cached += 1
                line.update(cached=True)
            else:
                todo.setdefault(key, []).append(i)

        def finish(i: int, record: dict) -> None:
            record["key"] = keys[i]
            if record["status"] == "error":
                stats.errors.append(
                    f"{jobs[i].learner.title} on {jobs[i].data.title}: {record['error']}"
                )
            elif cache is not None:
                cache.put(keys[i], record)
            stats.computed += 1
            for j in todo[keys[i]]:
                records[j] = record
                line.update()
            if on_record is not None:
                on_record(jobs[i], record)

        pending = sorted(positions[0] for positions in todo.values())
        if n_jobs == 1 or len(pending) <= 1:
            for i in pending:
                finish(i, execute_job(jobs[i], data_home))
        elif pending:
            from joblib import Parallel, delayed, parallel_config

            # loky workers, each bound to this process from its start
            with parallel_config("loky", initializer=_end_with_parent, initargs=(os.getpid(),)):
                parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
                for i, record in parallel(
                    delayed(_indexed)(i, jobs[i], data_home) for i in pending
                ):
                    finish(i, record)
    finally:
        line.close()
    stats.seconds = time.perf_counter() - start
    return cast("list[dict]", records), stats  # every position was filled above
