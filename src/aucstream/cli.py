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
``aucstream fit FILE -o MODEL [--learner NAME] [--no-scale]``
    Learn from a LIBSVM or CSV file as a stream (bounded memory) and save the model
    (``.npz``, no pickle needed to load it). The default learner needs no tuning:
    ``StreamPipeline(OnlineStandardScaler(), OnePassSearch())``; ``--learner NAME``
    puts one learner behind the online scaler (``--no-scale``: the learner alone).
    The older form ``aucstream fit NAME FILE`` means ``--learner NAME --no-scale``.
``aucstream score MODEL FILE [--plot curves.png]``
    ROC AUC and PR AUC of a saved model on a file (and the two curves).
``aucstream predict MODEL FILE [-o scores.csv] [--proba]``
    One score per row of a file (and the probability), streamed: bounded memory.
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

Errors
------
Every failure is one line on stderr, ``aucstream COMMAND: error: ...``, naming the
file and line (bad input), the parameter (``--param``) or the member (a damaged
model file), and the exit status is 2; an unexpected internal error exits with 1.
``--debug`` shows the traceback instead. Progress bars go to stderr (by default only
when it is a terminal; ``--progress`` forces them), results to stdout.
"""

from __future__ import annotations

import argparse
import ast
import functools
import inspect
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .streaming import ChunkStream, Progress, fit_stream  # re-exported: they lived here

__all__ = ["CommandError", "Progress", "build_parser", "fit_stream", "main"]


class CommandError(SystemExit):
    """A mistake in the command line: :func:`main` prints it as one line, exit status 2.

    A :class:`SystemExit`, so that code calling :func:`main` sees the exit; its
    message is ``str(error)``.
    """

    def __init__(self, message: str):
        super().__init__(message)
        self.code = 2


def _parse_value(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        if text.startswith("2^") or text.startswith("2**"):
            try:
                return 2.0 ** float(text.split("^")[-1].split("**")[-1])
            except ValueError:
                pass
        return text


def _learner_class(name: str) -> type:
    from ._discovery import all_estimators

    learners = dict(all_estimators())
    if name not in learners:
        raise CommandError(f"unknown learner {name!r}; choose from: {', '.join(learners)}")
    return learners[name]


def _validate_learner(model) -> None:
    """A learner's declared parameter checks, before any data is read."""
    validate = getattr(model, "_validate_params", None)
    if validate is not None:
        validate()


def _learner(name: str, params: list[str]):
    cls = _learner_class(name)
    known = cls().get_params(deep=False)
    kwargs = {}
    for item in params:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CommandError(f"--param expects NAME=VALUE, got {item!r}")
        if key not in known:
            raise CommandError(
                f"unknown parameter {key!r} for {name}; its parameters: {', '.join(known)}"
            )
        kwargs[key] = _parse_value(value)
    model = cls(**kwargs)
    _validate_learner(model)
    return model


def _model_to_fit(args):
    """The model ``fit`` learns: the tuning-free search or ``--learner``, behind the
    online scaler unless ``--no-scale``."""
    if args.learner is None:
        if args.param:
            raise CommandError("--param needs --learner (the default learner needs no tuning)")
        learner = _meta_learner("OnePassSearch")()
    else:
        learner = _learner(args.learner, args.param)
        if getattr(learner, "is_batch", False):
            raise CommandError(f"{args.learner} is a batch learner; `fit` streams the file")
    if args.no_scale:
        return learner
    from .preprocessing import OnlineStandardScaler

    return _meta_learner("StreamPipeline")(OnlineStandardScaler(), learner)


def _meta_learner(name: str) -> type:
    import aucstream

    if not hasattr(aucstream, name):
        raise CommandError(
            f"aucstream.{name} is not in this version: pass --learner NAME --no-scale"
        )
    return getattr(aucstream, name)


# ----------------------------------------------------------------------- reading


_ZERO_BASED = {"auto": "auto", "yes": True, "no": False}


def _positive(args) -> list | None:
    return None if not args.positive else [_parse_value(p) for p in args.positive]


def _read(args, n_features: int | None = None, transform=None, any_label: bool = False):
    """The file of ``args`` as a :class:`ChunkStream` (errors name the file)."""
    from .datasets import detect_format, iter_file

    kind = None if args.format == "auto" else args.format
    fmt = detect_format(args.data, kind=kind, delimiter=args.delimiter)
    if fmt.kind == "libsvm":
        options = {"n_features": n_features or args.n_features}
        options["zero_based"] = _ZERO_BASED[args.zero_based]
    else:
        label = _parse_value(args.label_column) if args.label_column else -1
        options = {"label_column": label}
        if any_label:  # predict ignores the labels: do not insist that they are numbers
            options["label_type"] = "str"
    chunks = iter_file(args.data, fmt, chunk_size=args.chunk_size, **options)
    return ChunkStream(chunks, transform, name=os.fspath(args.data))


def _label_text(labels) -> str:
    from .datasets._labels import format_label

    return ", ".join(format_label(v) for v in labels)


def _rows(stream: ChunkStream, n: int) -> str:
    return f"rows {stream.n_seen + 1:,}-{stream.n_seen + n:,}"


class _BinaryLabels:
    """Checks (or maps, with ``--positive``) the labels of a training stream.

    Without ``--positive`` the file must hold two labels (the larger is positive);
    a third label is refused with the rows where it appears. With ``--positive`` the
    listed labels become +1 and every other label -1.
    """

    def __init__(self, positive: list | None):
        self.positive = positive
        self.seen = None
        self.stream: ChunkStream | None = None

    def __call__(self, X, y):
        from .datasets import apply_positive

        if self.positive is not None:
            return X, apply_positive(y, self.positive)
        seen = np.unique(y) if self.seen is None else np.union1d(self.seen, np.unique(y))
        if seen.size > 2:
            raise ValueError(
                f"{self.stream.name} holds more than two labels ({_label_text(seen[:10])}; "
                f"the third appears in {_rows(self.stream, len(y))}); pass --positive "
                "LABEL ... to say which labels are positive"
            )
        self.seen = seen
        return X, y


class _ModelLabels:
    """Maps the labels of a scored file to "is the model's positive class".

    Without ``--positive``, every label must be one of the model's classes
    (``classes_``), else the AUC could be silently inverted; with ``--positive``,
    the listed labels are the ones the model should score high.
    """

    def __init__(self, model, positive: list | None):
        self.classes = np.asarray(model.classes_)
        self.positive = positive
        self.stream: ChunkStream | None = None

    def __call__(self, X, y):
        y = np.asarray(y)
        if self.positive is not None:
            return X, np.isin(y, self.positive)
        try:
            unknown = ~np.isin(y, self.classes)
        except TypeError:  # e.g. numbers against string classes
            unknown = np.ones(y.shape, bool)
        if unknown.any():
            bad = np.unique(y[unknown])[:5]
            raise ValueError(
                f"{self.stream.name}: label {_label_text(bad)} ({_rows(self.stream, len(y))}) "
                f"is not a class of the model, whose classes are {_label_text(self.classes)}; "
                "pass --positive LABEL ... to say which labels of the file are positive "
                f"(scored high, like the model's class {_label_text(self.classes[1:])})"
            )
        return X, y == self.classes[1]

    def describe(self) -> str:
        if self.positive is not None:
            return f"positive: labels {_label_text(self.positive)}"
        return f"positive class {_label_text(self.classes[1:])}"


def _labelled_stream(args, labels, n_features: int | None = None) -> ChunkStream:
    stream = _read(args, n_features, labels)
    labels.stream = stream
    return stream


def _no_examples(stream: ChunkStream) -> ValueError:
    return ValueError(f"no examples in {stream.name}")


# ----------------------------------------------------------------------- writing


def _model_target(path: str) -> Path:
    """The file ``save_model`` writes for ``path`` (it appends ``.npz``)."""
    target = Path(path)
    return target if target.suffix == ".npz" else target.with_name(target.name + ".npz")


def _check_writable(target: Path, what: str) -> None:
    """Fail now, not after the whole stream, if ``target`` cannot be written."""
    if target.is_dir():
        raise ValueError(f"cannot write the {what} {target}: it is a directory")
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise ValueError(f"cannot write the {what} {target}: no directory {directory}")
    try:
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as error:
        raise ValueError(f"cannot write the {what} {target}: {error.strerror or error}") from error


def _add_file_options(parser: argparse.ArgumentParser, labels: bool = True) -> None:
    parser.add_argument(
        "data", metavar="FILE", help="LIBSVM/SVMlight or CSV file (plain, .gz, .bz2, .xz)"
    )
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
        "--zero-based",
        choices=["auto", "yes", "no"],
        default="auto",
        help="whether the feature indices of a LIBSVM file start at 0 (default: auto, "
        "decided by the reader)",
    )
    parser.add_argument(
        "--label-column", default=None, help="CSV label column, index or name (default: last)"
    )
    parser.add_argument(
        "--delimiter",
        default=None,
        help="CSV delimiter; 'tab' for tabs (default: from the extension or the first line)",
    )
    if labels:
        parser.add_argument(
            "--positive",
            nargs="+",
            default=None,
            help="labels of the positive class (the others are negative)",
        )
    parser.add_argument(
        "--chunk-size", type=int, default=10000, help="examples per chunk (bounds memory)"
    )
    _add_progress_option(parser)


def _add_progress_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar on stderr (default: when stderr is a terminal)",
    )


def _cmd_fit(args) -> int:
    """Learn from a file in one pass (bounded memory) and save the model. Default
    learner: StreamPipeline(OnlineStandardScaler(), OnePassSearch()), which needs no
    tuning. The older form `fit LEARNER FILE` means `--learner LEARNER --no-scale`.
    """
    from .persistence import save_model

    if args.legacy_data is not None:  # the 0.1 form `fit LEARNER FILE`: the learner alone
        if args.learner is not None:
            raise CommandError("give the learner either as --learner or before the file")
        args.learner, args.no_scale, args.data = args.data, True, args.legacy_data
    model = _model_to_fit(args)
    target = _model_target(args.output)
    _check_writable(target, "model file")
    classes = [_parse_value(c) for c in args.classes] if args.classes else None
    if args.positive:
        classes = [-1, 1]
    labels = _BinaryLabels(_positive(args))
    stream = _labelled_stream(args, labels)
    name = args.learner or type(model).__name__
    progress = Progress(f"fit {name}", enabled=args.progress)
    last = []
    fit_stream(
        model,
        stream,
        classes=classes,
        progress=progress,
        callback=last.append if args.running_auc is not False else None,
        running_auc=args.running_auc,
    )
    if stream.n_seen == 0:
        raise _no_examples(stream)
    written = save_model(model, args.output)
    auc = last[-1].auc if last else float("nan")
    running = f"; prequential AUC {auc:.4f}" if np.isfinite(auc) else ""
    print(
        f"{name}: {model.n_samples_seen_:,} examples, {model.n_features_in_} features, "
        f"classes {_label_text(model.classes_)} (positive {_label_text(model.classes_[1:])})"
        f"{running}; saved to {written}"
    )
    return 0


def _scores(model, stream: ChunkStream, progress: Progress):
    """Scores and labels of every chunk of ``stream`` (the model's decision values)."""
    scores, labels = [], []
    try:
        for X, y in stream:
            scores.append(model.decision_function(X))
            labels.append(np.asarray(y))
            progress.show(stream.info())
    finally:
        progress.close()
    if stream.n_seen == 0:
        raise _no_examples(stream)
    return np.concatenate(scores), np.concatenate(labels)


def _cmd_score(args) -> int:
    """ROC AUC and PR AUC (average precision) of a saved model on a labelled file, and
    with --plot the ROC and precision-recall curves. The file's labels must be the
    model's classes, or --positive says which of them the model should score high.
    """
    from .metrics import pr_auc, roc_auc
    from .persistence import load_model

    if args.plot:
        _check_writable(Path(args.plot), "plot")
    model = load_model(args.model)
    labels = _ModelLabels(model, _positive(args))
    stream = _labelled_stream(args, labels, getattr(model, "n_features_in_", None))
    scores, positive = _scores(model, stream, Progress("score", enabled=args.progress))
    n_pos = int(positive.sum())
    if n_pos in (0, positive.size):
        raise ValueError(
            f"{stream.name} holds only {'positive' if n_pos else 'negative'} examples "
            f"({labels.describe()}): the AUC needs both"
        )
    auc, ap = roc_auc(positive, scores), pr_auc(positive, scores)
    print(
        f"ROC AUC {auc:.6f}  PR AUC {ap:.6f}  on {positive.size:,} examples "
        f"({n_pos:,} positive; {labels.describe()}) ({type(model).__name__}, {args.model})"
    )
    if args.plot:
        _plot_curves(positive, scores, auc, ap, args.plot, stream.name)
        print(f"wrote {args.plot}")
    return 0


def _plot_curves(positive, scores, auc: float, ap: float, path: str, title: str) -> None:
    """ROC and precision-recall curves, side by side, to a PNG."""
    try:
        import matplotlib
    except ImportError:
        raise ValueError("--plot needs matplotlib: pip install 'aucstream[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.metrics import precision_recall_curve, roc_curve

    fpr, tpr, _ = roc_curve(positive, scores)
    precision, recall, _ = precision_recall_curve(positive, scores)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.5))
    left.plot(fpr, tpr, label=f"ROC AUC {auc:.4f}")
    left.plot([0, 1], [0, 1], ":", color="grey", label="chance")
    left.set(xlabel="false positive rate", ylabel="true positive rate", title="ROC curve")
    right.step(recall, precision, where="post", label=f"PR AUC (AP) {ap:.4f}")
    right.axhline(positive.mean(), ls=":", color="grey", label="chance (positive rate)")
    right.set(xlabel="recall", ylabel="precision", title="precision-recall curve")
    for ax in (left, right):
        ax.set(xlim=(0, 1), ylim=(0, 1.02))
        ax.legend(loc="lower right" if ax is left else "lower left")
        ax.grid(alpha=0.3)
    fig.suptitle(Path(title).name)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _cmd_predict(args) -> int:
    """Write one line per row of FILE: the model's score (larger means more likely
    positive) and, with --proba, the probability of the positive class. The file's
    labels are ignored.
    """
    from .persistence import load_model

    model = load_model(args.model)
    if args.proba and not hasattr(model, "predict_proba"):
        raise CommandError(
            f"{type(model).__name__} gives no probabilities (no predict_proba): drop --proba"
        )
    target = Path(args.output) if args.output else None
    if target is not None:
        _check_writable(target, "output file")
    stream = _read(args, getattr(model, "n_features_in_", None), any_label=True)
    if target is None:
        try:
            _write_predictions(model, stream, args, sys.stdout)
        except BrokenPipeError:  # e.g. `aucstream predict ... | head`: not an error
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as out:
            _write_predictions(model, stream, args, out)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    print(f"{type(model).__name__}: {stream.n_seen:,} scores written to {target}")
    return 0


def _write_predictions(model, stream: ChunkStream, args, out) -> None:
    """One CSV line per row: the score (and the probability of the positive class)."""
    out.write("score,probability\n" if args.proba else "score\n")
    progress = Progress("predict", enabled=args.progress)
    try:
        for X, _ in stream:
            columns = [model.decision_function(X)]
            if args.proba:
                columns.append(model.predict_proba(X)[:, 1])
            np.savetxt(out, np.column_stack(columns), fmt="%.17g", delimiter=",")
            progress.show(stream.info())
    finally:
        progress.close()
    out.flush()
    if stream.n_seen == 0:
        raise _no_examples(stream)


def _check_datasets(names: Sequence[str]) -> None:
    """Unknown dataset names fail before anything runs (with the close matches)."""
    from .datasets import dataset_info

    for name in names:
        dataset_info(name)


def _cmd_run(args) -> int:
    """The quick start: one pass of each online learner on each dataset (by default
    the datasets embedded in the package), with hyperparameters chosen by 3-fold
    cross-validation on the training part; prints the test AUC and training time.
    """
    from ._discovery import all_estimators
    from .datasets import load_dataset
    from .evaluation import holdout_comparison

    learners = dict(all_estimators("online"))
    chosen = args.learner or list(learners)
    unknown = [n for n in chosen if n not in learners]
    if unknown:
        raise CommandError(f"unknown learner(s) {unknown}; choose from: {', '.join(learners)}")
    _check_datasets(args.dataset)
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
    print("-" * len(header), flush=True)
    order = [(d, n) for d in args.dataset for n in chosen]
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
    _add_progress_option(parser)


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


def _check_data_specs(texts: Sequence[str]) -> None:
    """A dataset that is neither a registered name nor an existing file fails now."""
    from .datasets import dataset_info
    from .evaluation._data import parse_data_spec

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
    from .evaluation._reproduce import compare_and_report

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
    from .evaluation._reproduce import REPRODUCTIONS, reproduce

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


def _command(sub, common, name: str, func, **options) -> argparse.ArgumentParser:
    """A sub-command ``name`` run by ``func``, described by ``func``'s docstring."""
    description = inspect.cleandoc(func.__doc__) if func.__doc__ else None
    parser = sub.add_parser(name, parents=[common], description=description, **options)
    parser.set_defaults(func=func)
    return parser


def _add_run_parser(command) -> None:
    run = command("run", _cmd_run, help="quick start: compare the online learners on real data")
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
    _add_progress_option(run)


def _add_fit_parsers(command) -> None:
    fit = command("fit", _cmd_fit, help="learn from a file as a stream and save the model")
    _add_file_options(fit)
    fit.add_argument("legacy_data", nargs="?", help=argparse.SUPPRESS)  # `fit LEARNER FILE`
    fit.add_argument("-o", "--output", required=True, help="model file to write (.npz)")
    fit.add_argument(
        "--learner",
        default=None,
        help="one learner class, e.g. OPAUC (see `aucstream list`) instead of the "
        "tuning-free default",
    )
    fit.add_argument(
        "--param",
        nargs="+",
        default=[],
        metavar="NAME=VALUE",
        help="parameters of --learner, e.g. eta=2^-6 lam=0.01",
    )
    fit.add_argument(
        "--no-scale",
        action="store_true",
        help="learn from the raw features (no online standard scaler in front)",
    )
    fit.add_argument(
        "--classes",
        nargs=2,
        default=None,
        help="the two labels, if the first chunk may hold only one",
    )
    fit.add_argument(
        "--running-auc",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="keep the prequential AUC while learning (each chunk scored before it is "
        "learnt); default: when it costs nothing (learners whose kernels score each "
        "example before learning it); otherwise learning goes row by row",
    )

    score = command("score", _cmd_score, help="ROC AUC and PR AUC of a saved model on a file")
    score.add_argument("model", help="model file written by `aucstream fit`")
    _add_file_options(score)
    score.add_argument(
        "--plot", default=None, metavar="PNG", help="draw the ROC and PR curves to this file"
    )

    predict = command("predict", _cmd_predict, help="one score per row of a file (CSV), streamed")
    predict.add_argument("model", help="model file written by `aucstream fit`")
    _add_file_options(predict, labels=False)
    predict.add_argument("-o", "--output", default=None, help="CSV file to write (default: stdout)")
    predict.add_argument(
        "--proba", action="store_true", help="add the probability of the positive class"
    )

    command("list", _cmd_list, help="list learners and datasets")


def _add_compare_parser(command) -> None:
    cmp = command(
        "compare", _cmd_compare, help="compare learners on datasets under a paper's protocol"
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


def _add_reproduce_parser(command) -> None:
    rep = command("reproduce", _cmd_reproduce, help="reproduce a paper's table or figure")
    rep.add_argument("table", help="e.g. g16-table2, z11-table2, g16-fig1, g16-fig7, or list")
    _add_run_options(rep)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``aucstream`` command."""
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="aucstream", description="One-pass and online AUC maximization."
    )
    parser.add_argument("--version", action="version", version=f"aucstream {__version__}")
    debug_help = "show the traceback of an error instead of a one-line message"
    parser.add_argument("--debug", action="store_true", help=debug_help)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=debug_help)
    sub = parser.add_subparsers(dest="command", required=True)
    command = functools.partial(_command, sub, common)
    _add_run_parser(command)
    _add_fit_parsers(command)
    _add_compare_parser(command)
    _add_reproduce_parser(command)
    return parser


#: Errors of the input or the environment (exit status 2); anything else is a bug (1).
_EXPECTED = (ValueError, OSError, EOFError, FloatingPointError, MemoryError)


def _one_line(error: BaseException) -> str:
    """The error as one line: its message, or ``file: reason`` for a system error."""
    if isinstance(error, OSError) and error.strerror and error.filename is not None:
        return f"{error.filename}: {error.strerror}"
    text = " ".join(str(error).split())
    if isinstance(error, _EXPECTED) and text:
        return text
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``aucstream`` command.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0, 2 for an error of the input (one line on stderr), 1 for
        an unexpected error. A mistake in the command line raises :class:`SystemExit`
        with status 2 (argparse's errors, :class:`CommandError`).
    """
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except CommandError as error:
        if args.debug:
            raise
        print(f"aucstream {args.command}: error: {error}", file=sys.stderr)
        raise
    except KeyboardInterrupt:
        if args.debug:
            raise
        print(f"aucstream {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # noqa: BLE001 - one line, not a traceback (--debug for it)
        if args.debug:
            raise
        expected = isinstance(error, _EXPECTED)
        hint = "" if expected else " (an internal error: rerun with --debug and report it)"
        print(f"aucstream {args.command}: error: {_one_line(error)}{hint}", file=sys.stderr)
        return 2 if expected else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
