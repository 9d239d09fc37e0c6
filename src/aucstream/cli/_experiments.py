"""The commands over many learners and datasets: ``run``, ``list``, ``compare``, ``reproduce``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..streaming import Progress
from ._common import CommandError, _add_progress_option, say_if_compiling


def _check_datasets(names: Sequence[str]) -> None:
    """Unknown dataset names fail before anything runs (with the close matches)."""
    from ..datasets import dataset_info

    for name in names:
        dataset_info(name)


def _cmd_run(args) -> int:
    """The quick start: one pass of each online learner on each dataset (by default
    the datasets embedded in the package), with hyperparameters chosen by 3-fold
    cross-validation on the training part; prints the test AUC and training time.
    """
    from .. import all_estimators
    from ..datasets import load_dataset
    from ..evaluation import holdout_comparison

    learners = dict(all_estimators("online"))
    # the tuning-free default first: one pass, no cross-validation
    chosen = args.learners or sorted(learners, key=lambda n: n != "StreamPipeline")
    unknown = [n for n in chosen if n not in learners]
    if unknown:
        raise CommandError(f"unknown learner(s) {unknown}; choose from: {', '.join(learners)}")
    _check_datasets(args.datasets)
    estimators = {}
    for name in chosen:
        est = learners[name]()
        if "random_state" in est.get_params():
            est.set_params(random_state=args.seed)
        estimators[name] = est
    grids = None if args.grid == "none" else args.grid
    header = f"{'dataset':<10} {'learner':<22} {'test AUC':>8} {'train s':>8}  chosen parameters"
    print(
        f"One pass per learner; stratified {1 - args.test_size:.0%}/{args.test_size:.0%} split "
        f"(seed {args.seed}); parameters by 3-fold CV on the training part ({args.grid} grid)."
    )
    if "StreamPipeline" in chosen:
        print(
            "StreamPipeline (online scaler + OnePassSearch) has nothing to tune: its time is "
            "the one pass that chose its learner."
        )
    say_if_compiling()  # before the table: a first run compiles under its header
    print(header)
    print("-" * len(header), flush=True)
    order = [(d, n) for d in args.datasets for n in chosen]
    progress = Progress("run", total=len(order), unit="learners", enabled=args.progress)
    progress.note = f"tuning {order[0][1]} on {order[0][0]}" if order else ""
    rows = []

    def show(row):
        rows.append(row)
        params = ", ".join(f"{k}={_fmt(v)}" for k, v in row.params.items())
        after = order[len(rows)] if len(rows) < len(order) else None
        progress.update(note=f"tuning {after[1]} on {after[0]}" if after else "")
        progress.write(
            f"{row.dataset:<10} {row.learner:<22} {row.test_auc:>8.4f} "
            f"{row.train_seconds:>8.3f}  {params}"
        )

    try:
        for dataset in args.datasets:
            data = load_dataset(dataset)
            holdout_comparison(
                estimators,
                data.X,
                data.y,
                dataset=dataset,
                test_size=args.test_size,
                grids=grids,
                random_state=args.seed,
                callback=show,
            )
    finally:
        progress.close()
    if rows and not any(np.isfinite(row.test_auc) for row in rows):
        raise ValueError("every learner failed (no test AUC): see the table")
    return 0


def _fmt(value) -> str:
    if isinstance(value, float) and value > 0 and float(np.log2(value)).is_integer():
        return f"2^{int(np.log2(value))}"
    return str(value)


def _cmd_list(args) -> int:
    """The learners (online or batch, with the size of their tuning grids) and the
    registered datasets."""
    from .. import all_estimators
    from ..datasets import list_datasets

    print("Learners:")
    for name, cls in all_estimators():
        kind = "batch" if cls.is_batch else "online"
        grid = ", ".join(f"{k}: {len(v)} values" for k, v in cls.param_grid.items())
        print(f"  {name:<24} {kind:<7} {grid}")
    print("Datasets:")
    for name in list_datasets():
        print(f"  {name}")
    return 0


def _add_run_options(parser: argparse.ArgumentParser, default_mode: str = "fast") -> None:
    parser.add_argument(
        "--mode",
        choices=["paper", "fast", "quick"],
        default=default_mode,
        help="paper: the paper's protocol; fast: the documented fast mode "
        "(1-2 trials, tuned once per dataset on a coarse grid); quick: "
        f"seconds, for CI (default: {default_mode})",
    )
    parser.add_argument(
        "--quick", action="store_const", const="quick", dest="mode", help="same as --mode quick"
    )
    parser.add_argument(
        "--out", default="aucstream-results", help="report folder (default: aucstream-results)"
    )
    parser.add_argument(
        "--cache-dir",
        default=None,
        help="folder of finished runs (default: OUT/cache); rerunning the "
        "same command resumes where it stopped",
    )
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default: 2)")
    parser.add_argument(
        "--data-home", default=None, help="folder of the benchmark files (default: $AUCSTREAM_DATA)"
    )
    _add_progress_option(parser)


def _print_report(files: dict) -> None:
    """The report's results section (test AUC, or training time for a timing report),
    which says whether and how the datasets were subsampled; then the files."""
    text = files["markdown"].read_text()
    start = text.find("## Test AUC")
    if start < 0:
        start = text.find("## Training time")
    if start >= 0:
        end = text.find("\n## ", start + 1)
        print(text[start : end if end >= 0 else None].strip())
        print()
    for path in files.values():
        print(f"wrote {path}")


def _protocol(args):
    from ..evaluation import get_protocol

    protocol = get_protocol(args.protocol, args.mode)
    changes = {
        k: v
        for k, v in (
            ("n_trials", args.trials),
            ("n_folds", args.folds),
            ("inner_folds", args.inner_folds),
            ("grid", args.grid),
            ("max_samples", args.max_samples),
            ("seed", args.seed),
        )
        if v is not None
    }
    return protocol.replace(**changes) if changes else protocol


def _learner_specs(texts: list[str] | None) -> list:
    from ..evaluation import learner_classes, parse_learner_spec

    classes = learner_classes()
    texts = texts or [name for name, cls in classes.items() if not cls.is_batch]
    learners = [parse_learner_spec(text) for text in texts]
    unknown = [s.estimator for s in learners if not s.available]
    if unknown:
        raise SystemExit(f"unknown learner(s) {unknown}; choose from: {', '.join(classes)}")
    return learners


def _sweep(text: str | None) -> tuple | None:
    """``PARAM=V1,V2,...`` as ``(param, values)``, each value by the one grammar
    (:func:`aucstream.evaluation.parse_value`)."""
    from ..evaluation import parse_value

    if not text:
        return None
    param, _, values = text.partition("=")
    if not values:
        raise SystemExit("--sweep expects PARAM=V1,V2,...")
    return param, parse_value(f"[{values}]")  # the values as one list


def _check_data_specs(texts: Sequence[str]) -> None:
    """A dataset that is neither a registered name nor an existing file fails now."""
    from ..datasets import dataset_info
    from ..evaluation import parse_data_spec

    for text in texts:
        spec = parse_data_spec(text)
        if spec.is_file:
            if not Path(spec.name).is_file():
                raise ValueError(f"no such data file: {spec.name!r}")
        else:
            dataset_info(spec.name)


def _check_result(result) -> None:
    """Non-zero exit when nothing could run, or every run failed; else the skipped
    datasets and learners as warnings."""
    skipped = [f"{meta.title} ({meta.skipped})" for meta in result.datasets if meta.skipped]
    if not result.used_datasets:
        raise ValueError(f"no dataset could be used: {'; '.join(skipped)}")
    if not result.runs or all(r["status"] != "ok" for r in result.runs):
        errors = result.stats.errors + [r["error"] for r in result.runs if r.get("error")]
        reason = errors[0] if errors else "no run finished"
        raise ValueError(f"every run failed ({len(result.runs)} runs); first: {reason}")
    for text in skipped:
        print(f"skipped dataset {text}", file=sys.stderr)
    for label, why in result.skipped_learners.items():
        print(f"skipped learner {label}: {why}", file=sys.stderr)


def _cmd_compare(args) -> int:
    """Compare learners on datasets: repeated stratified k-fold (or a hold-out split),
    hyperparameters by inner cross-validation over each learner's param_grid, paired
    t-tests against the reference (the first learner). Finished runs are cached
    under --cache-dir, so an interrupted comparison resumes.
    """
    from ..evaluation import compare_and_report

    learners, sweep = _learner_specs(args.learners), _sweep(args.sweep)
    _check_data_specs(args.datasets)
    result, files = compare_and_report(
        learners,
        args.datasets,
        _protocol(args),
        args.out,
        args.name,
        curves=args.curves,
        sweep=sweep,
        command="aucstream " + " ".join(sys.argv[1:]) if sys.argv[1:2] == ["compare"] else "",
        reference=args.reference,
        cache_dir=args.cache_dir or f"{args.out}/cache",
        n_jobs=args.jobs,
        data_home=args.data_home,
        progress=args.progress,
    )
    _print_report(files[0])
    for more in files[1:]:
        print(f"wrote {more['markdown']}")
    _check_result(result)
    return 0


def _cmd_reproduce(args) -> int:
    """Reproduce a table or figure of the papers, with the paper's values beside ours
    and the protocol used. `aucstream reproduce list` shows the choices.
    """
    from ..evaluation import REPRODUCTIONS, reproduce

    if args.table == "list":
        for key, r in REPRODUCTIONS.items():
            print(f"  {key:<12} {r.title}")
        return 0
    if args.table not in REPRODUCTIONS:
        raise CommandError(
            f"unknown table {args.table!r}; choose from: {', '.join(REPRODUCTIONS)} (or `list`)"
        )
    files = reproduce(
        args.table,
        args.out,
        mode=args.mode,
        cache_dir=args.cache_dir,
        n_jobs=args.jobs,
        data_home=args.data_home,
        progress=args.progress,
    )
    _print_report(files)
    return 0


def _add_run_parser(command) -> None:
    run = command("run", _cmd_run, help="quick start: compare the online learners on real data")
    run.add_argument(
        "--datasets",
        "--dataset",
        nargs="+",
        default=["diabetes", "german", "fourclass"],
        metavar="NAME",
        help="registered dataset names (default: the embedded ones); --dataset is the same",
    )
    run.add_argument(
        "--learners",
        "--learner",
        nargs="+",
        default=None,
        metavar="NAME",
        help="learner class names (default: all online); --learner is the same",
    )
    run.add_argument(
        "--grid",
        choices=["coarse", "paper", "none"],
        default="coarse",
        help="hyperparameter grid searched by cross-validation",
    )
    run.add_argument("--test-size", type=float, default=0.2)
    run.add_argument("--seed", type=int, default=0)
    _add_progress_option(run)


def _add_compare_parser(command) -> None:
    cmp = command(
        "compare", _cmd_compare, help="compare learners on datasets under a paper's protocol"
    )
    cmp.add_argument(
        "--learners",
        "--learner",
        nargs="+",
        default=None,
        metavar="LEARNER",
        help="[LABEL=]Class[(name=value,...)], e.g. OPAUC "
        '"OAM_gra=OAM(update=gra)" "OAM(eta=2^-6)" (values as in '
        "aucstream.evaluation.parse_value; default: every online learner); --learner is "
        "the same",
    )
    cmp.add_argument(
        "--datasets",
        "--dataset",
        nargs="+",
        required=True,
        metavar="DATA",
        help="registry name or LIBSVM/CSV file, with an optional binary rule: "
        "NAME[:random_halves|:largest_vs_rest|:smallest_vs_rest|"
        ":one_vs_rest=C|:positive=C1,C2][:train]; --dataset is the same",
    )
    cmp.add_argument(
        "--protocol",
        default="g16",
        choices=["g13", "g16", "z11", "d16", "l18"],
        help="the paper whose protocol is followed (default: g16)",
    )
    cmp.add_argument(
        "--reference",
        default=None,
        help="label of the method tested against the others (default: first)",
    )
    cmp.add_argument("--trials", type=int, default=None, help="override the number of trials")
    cmp.add_argument("--folds", type=int, default=None, help="override the outer folds")
    cmp.add_argument("--inner-folds", type=int, default=None, help="override the inner folds")
    cmp.add_argument(
        "--grid",
        choices=["paper", "coarse"],
        default=None,
        help="override the grid (paper: full param_grid)",
    )
    cmp.add_argument(
        "--max-samples",
        type=int,
        default=None,
        help="subsample every dataset to this many examples",
    )
    cmp.add_argument("--seed", type=int, default=None, help="root seed (default 0)")
    cmp.add_argument(
        "--curves",
        type=int,
        default=0,
        metavar="N",
        help="also write convergence curves with N checkpoints",
    )
    cmp.add_argument(
        "--sweep",
        default=None,
        metavar="PARAM=V1,V2,...",
        help="also write test AUC against one parameter, e.g. eta=2^-12,2^-8,2^-4",
    )
    cmp.add_argument("--name", default="comparison", help="report file name stem")
    _add_run_options(cmp)


def _add_reproduce_parser(command) -> None:
    rep = command("reproduce", _cmd_reproduce, help="reproduce a paper's table or figure")
    rep.add_argument("table", help="e.g. g16-table2, z11-table2, g16-fig1, g16-fig7, or list")
    _add_run_options(rep)
