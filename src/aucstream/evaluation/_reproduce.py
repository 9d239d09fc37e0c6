"""Reproductions of the papers' tables and figures (``aucstream reproduce TABLE``).

Each :class:`Reproduction` names the learners (by class name and fixed parameters,
looked up through :func:`aucstream.all_estimators`), the datasets with the paper's
binary conversion, the protocol, the paper's values, and the modes:

- ``paper``: the paper's protocol (5 x 5 CV, full grids, tuned on every split);
- ``fast``: the documented fast mode used for the committed results (see
  :meth:`Protocol.fast` and each reproduction's ``fast`` overrides);
- ``quick``: seconds, for CI: the embedded datasets only, subsampled, 1 x 3 folds.

Every report states the mode and its deviations from the paper.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .._typing import PathLike
from ._catalogue import REPRODUCTIONS, Reproduction
from ._compare import Comparison, DatasetMeta, compare, convergence, parameter_sweep
from ._data import DataSpec
from ._protocol import Protocol
from ._report import write_report
from ._runner import Job

__all__ = ["REPRODUCTIONS", "Reproduction", "compare_and_report", "reproduce"]


def reproduce(
    table: str,
    out_dir: str | Path | None = None,
    *,
    mode: str = "fast",
    cache_dir: str | Path | None = None,
    n_jobs: int = 2,
    data_home: PathLike | None = None,
    progress: bool | None = None,
    on_record: Callable[[Job, dict], None] | None = None,
) -> dict[str, Path]:
    """Run a reproduction and write its report.

    Parameters
    ----------
    table : str
        A key of :data:`REPRODUCTIONS` (e.g. ``"g16-table2"``).
    out_dir : str, path or None
        Report folder (default ``aucstream-results``).
    mode : {"fast", "paper", "quick"}, default="fast"
        See the module docstring.
    cache_dir : str, path or None
        Folder of finished runs (default ``OUT_DIR/cache``); runs found there are not
        recomputed, so an interrupted reproduction resumes, and reproductions that
        share runs (g16-table2, g16-fig1, g16-fig7) share them.
    n_jobs : int, default=2
        Worker processes.
    data_home : str or None
        Folder of the benchmark files (default ``$AUCSTREAM_DATA``).
    progress : bool or None
        Progress lines on stderr.
    on_record : callable, optional
        Called with (job, record) after each computed run.

    Returns
    -------
    dict of str to Path
        The files written (``markdown``, ``csv``, ``json``, PNGs).
    """
    if table not in REPRODUCTIONS:
        raise ValueError(f"unknown reproduction {table!r}; choose from {', '.join(REPRODUCTIONS)}")
    r = REPRODUCTIONS[table]
    out = Path(out_dir) if out_dir is not None else Path("aucstream-results")
    cache = Path(cache_dir) if cache_dir is not None else out / "cache"
    protocol = r.protocol_for(mode)
    kwargs: dict[str, Any] = dict(
        reference=r.reference,
        cache_dir=cache,
        n_jobs=n_jobs,
        data_home=data_home,
        progress=progress,
    )
    quick = mode == "quick"
    made = [g for g in r.generated if not quick or g.label in r.quick_datasets]
    # quick mode generates a 2,000-row stream (it keeps 300 rows of it anyway)
    datasets = [
        (g.smaller(2000) if quick else g).spec(cache / "generated") for g in made
    ] + r.datasets_for(mode)
    n_splits = r.n_splits if mode != "quick" else 1
    start = time.perf_counter()
    if r.kind in ("table", "time"):
        result = compare(r.learners, datasets, protocol, on_record=on_record, **kwargs)
    elif r.kind == "curve":
        result = convergence(
            r.learners, datasets, protocol, checkpoints=r.checkpoints, n_splits=n_splits, **kwargs
        )
    elif r.kind == "sweep":
        if r.sweep is None:
            raise ValueError(f"the sweep {r.name!r} names no parameter to sweep")
        param, values = r.sweep
        result = parameter_sweep(
            r.learners, datasets, protocol, param, values, n_splits=n_splits, **kwargs
        )
    else:  # pragma: no cover - registry entries are fixed
        raise ValueError(r.kind)
    result.stats.seconds = time.perf_counter() - start
    for name in r.absent:
        result.datasets.append(
            DatasetMeta(
                DataSpec(name),
                skipped="not in the benchmark data (see the data README: not found in usable form)",
            )
        )
    if mode == "quick":
        titles = [g.label for g in r.generated] + [d.title for d in r.datasets]
        skipped = [t for t in titles if t not in r.quick_datasets]
        for name in skipped:
            result.datasets.append(DatasetMeta(DataSpec(name), skipped="left out in quick mode"))
    command = f"aucstream reproduce {table} --mode {mode}"
    return write_report(
        result,
        out,
        r.name,
        r.title,
        kind=r.kind,
        paper=r.paper,
        notes=r.notes,
        intro=r.intro,
        command=command,
        reference_protocol=r.paper_protocol,
    )


def compare_and_report(
    learners: Sequence,
    datasets: Sequence,
    protocol: Protocol,
    out_dir: str | Path,
    name: str = "comparison",
    *,
    curves: int = 0,
    sweep: tuple[str, Sequence] | None = None,
    command: str = "",
    **options: Any,
) -> tuple[Comparison, list[dict[str, Path]]]:
    """:func:`compare` (and optionally curves and a sweep) with their reports.

    What ``aucstream compare`` runs: the table report ``NAME.*``, then with
    ``curves`` a convergence report ``NAME_curves.*`` and with ``sweep=(param,
    values)`` a sweep report ``NAME_PARAM.*``; all share the runs of the cache.

    Parameters
    ----------
    learners, datasets, protocol
        As in :func:`compare`.
    out_dir : str or path
        Report folder.
    name : str, default="comparison"
        File name stem.
    curves : int, default=0
        Checkpoints of the convergence curves (0: none).
    sweep : (str, sequence) or None
        A parameter and its values.
    command : str
        The command line, for the reports' footers.
    **options
        ``reference``, ``cache_dir``, ``n_jobs``, ``data_home``, ``progress`` of
        :func:`compare`.

    Returns
    -------
    result : Comparison
        The table's comparison.
    files : list of dict
        The files of each report written, table first.
    """
    start = time.perf_counter()
    result = compare(learners, datasets, protocol, **options)
    result.stats.seconds = time.perf_counter() - start
    title = f"Comparison of {', '.join(s.title for s in result.learners)}"
    files = [write_report(result, out_dir, name, title, command=command)]
    if curves:
        run = convergence(learners, datasets, protocol, checkpoints=curves, **options)
        files.append(
            write_report(
                run,
                out_dir,
                f"{name}_curves",
                f"{title}: convergence",
                kind="curve",
                command=command,
            )
        )
    if sweep is not None:
        param, values = sweep
        run = parameter_sweep(learners, datasets, protocol, param, values, **options)
        files.append(
            write_report(
                run,
                out_dir,
                f"{name}_{param}",
                f"{title}: test AUC against {param}",
                kind="sweep",
                command=command,
            )
        )
    return result, files
