"""The ``aucstream`` command line: it parses arguments and prints.

The work is the library's: files are read as :func:`aucstream.datasets.detect_format`
decides, labels made binary by :mod:`aucstream.datasets`' rules, streams learned by
:func:`aucstream.streaming.fit_stream` with its :class:`~aucstream.streaming.Progress`,
comparisons and reproductions run by :mod:`aucstream.evaluation`.

Commands
--------
``aucstream run``
    The quick start: one-pass train/evaluate of every online learner on the
    datasets embedded in the package (or named ones), with hyperparameters chosen by
    cross-validation on the training part; prints test AUC and training time.
``aucstream fit LEARNER FILE -o MODEL``
    Learn from a LIBSVM or CSV file as a stream (bounded memory) and save the model
    (``.npz``, no pickle needed to load it).
``aucstream score MODEL FILE``
    AUC of a saved model on a file.
``aucstream list``
    The learners (with their tuning grids) and the registered datasets.
``aucstream compare --learners A B --datasets x y [--protocol g16] [--quick] [--out DIR]``
    Compare learners on datasets (registry names or LIBSVM/CSV files) under a paper's
    protocol: repeated stratified k-fold, hyperparameters by inner cross-validation
    over each learner's grid, paired t-tests; cached, resumable, in parallel; writes a
    Markdown report, the raw runs (CSV, JSON) and plots.
``aucstream reproduce TABLE [--quick] [--out DIR]``
    Reproduce a paper's table or figure (``aucstream reproduce list``) with the
    paper's values beside ours.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator, Sequence

import numpy as np

from .streaming import Progress, fit_stream  # re-exported: they lived here

__all__ = ["main", "Progress", "fit_stream"]


def _parse_value(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        if text.startswith("2^") or text.startswith("2**"):
            return 2.0 ** float(text.split("^")[-1].split("**")[-1])
        return text


def _learner(name: str, params: list[str]):
    from ._discovery import all_estimators

    learners = dict(all_estimators())
    if name not in learners:
        raise SystemExit(f"unknown learner {name!r}; choose from: {', '.join(learners)}")
    kwargs = {}
    for item in params:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--param expects NAME=VALUE, got {item!r}")
        kwargs[key] = _parse_value(value)
    try:
        return learners[name](**kwargs)
    except TypeError as error:
        raise SystemExit(f"bad parameter for {name}: {error}") from None


def _chunks(args, n_features: int | None = None) -> Iterator[tuple]:
    from .datasets import apply_positive, detect_format, iter_file

    kind = None if args.format == "auto" else args.format
    fmt = detect_format(args.data, kind=kind, delimiter=args.delimiter)
    stream = iter_file(
        args.data,
        fmt,
        chunk_size=args.chunk_size,
        n_features=(n_features or args.n_features) if fmt.kind == "libsvm" else None,
        label_column=_parse_value(args.label_column) if args.label_column else -1,
    )
    positive = None if not args.positive else [_parse_value(p) for p in args.positive]
    for X, y in stream:
        yield X, (y if positive is None else apply_positive(y, positive))


def _add_file_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", help="LIBSVM/SVMlight or CSV file (plain, .gz, .bz2, .xz)")
    parser.add_argument(
        "--format",
        choices=["auto", "libsvm", "svmlight", "csv"],
        default="auto",
        help="file format (default: from the extension, or the first line of a .txt "
        "or unknown extension; see aucstream.datasets.detect_format)",
    )
    parser.add_argument(
        "--n-features",
        type=int,
        default=None,
        help="number of features of a LIBSVM file (default: inferred)",
    )
    parser.add_argument(
        "--label-column", default=None, help="CSV label column, index or name (default: last)"
    )
    parser.add_argument(
        "--delimiter",
        default=None,
        help="CSV delimiter; 'tab' for tabs (default: from the extension or the first line)",
    )
    parser.add_argument(
        "--positive",
        nargs="+",
        default=None,
        help="labels of the positive class (the others are negative)",
    )
    parser.add_argument(
        "--chunk-size", type=int, default=10000, help="examples per chunk (bounds memory)"
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show progress (default: when stderr is a terminal)",
    )


def _cmd_fit(args) -> int:
    from .persistence import save_model

    model = _learner(args.learner, args.param)
    if model.is_batch:
        raise SystemExit(f"{args.learner} is a batch learner; `fit` streams the file")
    classes = [_parse_value(c) for c in args.classes] if args.classes else None
    if args.positive:
        classes = [-1, 1]
    progress = Progress(f"fit {args.learner}", enabled=args.progress)
    fit_stream(model, _chunks(args), classes=classes, progress=progress)
    save_model(model, args.output)
    print(
        f"{args.learner}: {model.n_samples_seen_:,} examples, {model.n_features_in_} features, "
        f"classes {model.classes_.tolist()}; saved to {args.output}"
    )
    return 0


def _cmd_score(args) -> int:
    from .metrics import roc_auc
    from .persistence import load_model

    model = load_model(args.model)
    scores, labels = [], []
    progress = Progress("score", enabled=args.progress)
    for X, y in _chunks(args, n_features=model.n_features_in_):
        scores.append(model.decision_function(X))
        labels.append(np.asarray(y))
        progress.update(X.shape[0])
    progress.close()
    y = np.concatenate(labels)
    auc = roc_auc(y == model.classes_[1], np.concatenate(scores))
    print(f"AUC {auc:.6f} on {y.size:,} examples ({type(model).__name__}, {args.model})")
    return 0


def _cmd_run(args) -> int:
    from ._discovery import all_estimators
    from .datasets import load_dataset
    from .evaluation import holdout_comparison

    learners = dict(all_estimators("online"))
    chosen = args.learner or list(learners)
    unknown = [n for n in chosen if n not in learners]
    if unknown:
        raise SystemExit(f"unknown learner(s) {unknown}; choose from: {', '.join(learners)}")
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
    print(header)
    print("-" * len(header))

    def show(row):
        params = ", ".join(f"{k}={_fmt(v)}" for k, v in row.params.items())
        print(
            f"{row.dataset:<10} {row.learner:<22} {row.test_auc:>8.4f} "
            f"{row.train_seconds:>8.3f}  {params}",
            flush=True,
        )

    for dataset in args.dataset:
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
    return 0


def _fmt(value) -> str:
    if isinstance(value, float) and value > 0 and float(np.log2(value)).is_integer():
        return f"2^{int(np.log2(value))}"
    return str(value)


def _cmd_list(args) -> int:
    from ._discovery import all_estimators
    from .datasets import list_datasets

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
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show progress (default: when stderr is a terminal)",
    )


def _print_report(files: dict) -> None:
    text = files["markdown"].read_text()
    start = text.find("## Test AUC")
    if start >= 0:
        end = text.find("\n## ", start + 1)
        print(text[start : end if end >= 0 else None].strip())
        print()
    for path in files.values():
        print(f"wrote {path}")


def _protocol(args):
    from .evaluation import get_protocol

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
    from .evaluation._runner import learner_classes, parse_learner_spec

    classes = learner_classes()
    texts = texts or [name for name, cls in classes.items() if not cls.is_batch]
    learners = [parse_learner_spec(text) for text in texts]
    unknown = [s.estimator for s in learners if not s.available]
    if unknown:
        raise SystemExit(f"unknown learner(s) {unknown}; choose from: {', '.join(classes)}")
    return learners


def _sweep(text: str | None) -> tuple | None:
    if not text:
        return None
    param, _, values = text.partition("=")
    if not values:
        raise SystemExit("--sweep expects PARAM=V1,V2,...")
    return param, [_parse_value(v) for v in values.split(",")]


def _cmd_compare(args) -> int:
    from .evaluation._reproduce import compare_and_report

    learners, sweep = _learner_specs(args.learners), _sweep(args.sweep)
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
    for meta in result.datasets:
        if meta.skipped:
            print(f"skipped {meta.title}: {meta.skipped}", file=sys.stderr)
    _print_report(files[0])
    for more in files[1:]:
        print(f"wrote {more['markdown']}")
    return 0


def _cmd_reproduce(args) -> int:
    from .evaluation._reproduce import REPRODUCTIONS, reproduce

    if args.table == "list":
        for key, r in REPRODUCTIONS.items():
            print(f"  {key:<12} {r.title}")
        return 0
    if args.table not in REPRODUCTIONS:
        raise SystemExit(
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


def _add_run_parser(sub) -> None:
    run = sub.add_parser("run", help="quick start: compare the online learners on real data")
    run.add_argument(
        "--dataset",
        nargs="+",
        default=["diabetes", "german", "fourclass"],
        help="registered dataset names (default: the embedded ones)",
    )
    run.add_argument("--learner", nargs="+", default=None, help="learners (default: all online)")
    run.add_argument(
        "--grid",
        choices=["coarse", "paper", "none"],
        default="coarse",
        help="hyperparameter grid searched by cross-validation",
    )
    run.add_argument("--test-size", type=float, default=0.2)
    run.add_argument("--seed", type=int, default=0)
    run.set_defaults(func=_cmd_run)


def _add_fit_parsers(sub) -> None:
    fit = sub.add_parser("fit", help="learn from a file as a stream and save the model")
    fit.add_argument("learner", help="learner class name, e.g. OPAUC (see `aucstream list`)")
    _add_file_options(fit)
    fit.add_argument("-o", "--output", required=True, help="model file to write (.npz)")
    fit.add_argument(
        "--param",
        nargs="+",
        default=[],
        metavar="NAME=VALUE",
        help="learner parameters, e.g. eta=2^-6 lam=0.01",
    )
    fit.add_argument(
        "--classes",
        nargs=2,
        default=None,
        help="the two labels, if the first chunk may hold only one",
    )
    fit.set_defaults(func=_cmd_fit)

    score = sub.add_parser("score", help="AUC of a saved model on a file")
    score.add_argument("model", help="model file written by `aucstream fit`")
    _add_file_options(score)
    score.set_defaults(func=_cmd_score)

    lst = sub.add_parser("list", help="list learners and datasets")
    lst.set_defaults(func=_cmd_list)


def _add_compare_parser(sub) -> None:
    cmp = sub.add_parser(
        "compare",
        help="compare learners on datasets under a paper's protocol",
        description="Compare learners on datasets: repeated stratified k-fold (or a hold-out "
        "split), hyperparameters by inner cross-validation over each learner's "
        "param_grid, paired t-tests against the reference (the first learner). "
        "Finished runs are cached under --cache-dir, so an interrupted "
        "comparison resumes.",
    )
    cmp.add_argument(
        "--learners",
        nargs="+",
        default=None,
        metavar="LEARNER",
        help="[LABEL=]Class[(name=value,...)], e.g. OPAUC "
        "\"OAM_gra=OAM(update='gra')\" (default: every online learner)",
    )
    cmp.add_argument(
        "--datasets",
        nargs="+",
        required=True,
        metavar="DATA",
        help="registry name or LIBSVM/CSV file, with an optional binary rule: "
        "NAME[:random_halves|:largest_vs_rest|:smallest_vs_rest|"
        ":one_vs_rest=C|:positive=C1,C2][:train]",
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
    cmp.set_defaults(func=_cmd_compare)


def _add_reproduce_parser(sub) -> None:
    rep = sub.add_parser(
        "reproduce",
        help="reproduce a paper's table or figure",
        description="Reproduce a table or figure of the papers, with the "
        "paper's values beside ours and the protocol used. "
        "`aucstream reproduce list` shows the choices.",
    )
    rep.add_argument("table", help="e.g. g16-table2, z11-table2, g16-fig1, g16-fig7, or list")
    _add_run_options(rep)
    rep.set_defaults(func=_cmd_reproduce)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``aucstream`` command."""
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="aucstream", description="One-pass and online AUC maximization."
    )
    parser.add_argument("--version", action="version", version=f"aucstream {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_run_parser(sub)
    _add_fit_parsers(sub)
    _add_compare_parser(sub)
    _add_reproduce_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``aucstream`` command."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError) as error:
        print(f"aucstream {args.command}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
