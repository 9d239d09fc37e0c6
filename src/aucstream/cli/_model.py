"""The commands on one model: ``fit``, ``score``, ``predict``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

from ..streaming import ChunkStream, Progress, fit_stream
from ._common import (
    CommandError,
    _add_file_options,
    _add_progress_option,
    _BinaryLabels,
    _check_writable,
    _label_text,
    _labelled_stream,
    _learner_class,
    _model_name,
    _model_to_fit,
    _ModelLabels,
    _no_examples,
    _positive,
    _rate,
    _read,
    _typed_flag,
    _value,
    say_if_compiling,
)
from ._experiments import _cmd_list


def _cmd_fit(args) -> int:
    """Learn from a file in one pass (bounded memory) and save the model. Default
    learner: StreamPipeline(OnlineStandardScaler(), OnePassSearch()), which needs no
    tuning. The older form `fit LEARNER FILE` means `--learner LEARNER --no-scale`.
    """
    from ..persistence import _save, model_file

    if args.legacy_data is not None:  # the 0.1 form `fit LEARNER FILE`: the learner alone
        if args.learner is not None:
            raise CommandError("give the learner either as --learner or before the file")
        args.learner, args.no_scale, args.data = args.data, True, args.legacy_data
    model = _model_to_fit(args)
    if Path(args.output).is_dir():
        raise ValueError(
            f"-o {args.output} is an existing directory, not a model file: give a file "
            f"name, e.g. -o {Path(args.output) / 'model.npz'}"
        )
    target = model_file(args.output)
    _check_writable(target, "model file")
    classes = [_value(c) for c in args.classes] if args.classes else None
    if args.positive:
        classes = [-1, 1]
    labels = _SeenLabels(_positive(args), _typed_flag(args, "positive", "--positive-labels"))
    stream = _labelled_stream(args, labels)
    name = args.learner or type(model).__name__
    progress = Progress(f"fit {name}", enabled=args.progress)
    say_if_compiling()
    last: list = []
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
    labels.check_positive()
    # a LIBSVM file read 0-based: score and predict read their files 0-based too
    zero_based = getattr(stream.source, "zero_based", None) is True
    written = _save(model, args.output, {"index_base": 0} if zero_based else None)
    auc = last[-1].auc if last else float("nan")
    running = f"; prequential AUC {auc:.4f}" if np.isfinite(auc) else ""
    chosen = _scoring_text(getattr(model, "estimator_", model))
    print(
        f"{_model_name(model)}: {model.n_samples_seen_:,} examples, "
        f"{model.n_features_in_} features, "
        f"classes {_label_text(model.classes_)} (positive {_label_text(model.classes_[1:])})"
        f"{running}{chosen}; saved to {written}"
    )
    return 0


class _SeenLabels(_BinaryLabels):
    """:class:`_BinaryLabels` that also keeps the file's own labels, so that a
    ``--positive-labels`` label that no example has is refused (it would make every example
    negative) once the stream has been read; the message names the flag as it was typed
    (``flag``)."""

    def __init__(self, positive: list | None, flag: str = "--positive-labels"):
        super().__init__(positive)
        self.flag = flag

    def __call__(self, X, y):
        if self.positive is not None:
            found = np.unique(np.asarray(y))
            self.seen = found if self.seen is None else np.union1d(self.seen, found)
        return super().__call__(X, y)

    def check_positive(self) -> None:
        """Raise ``ValueError`` naming the ``--positive-labels`` labels that no example has."""
        from ..datasets import apply_positive

        if self.positive is None or self.seen is None:
            return
        absent = [p for p in self.positive if not (apply_positive(self.seen, [p]) > 0).any()]
        if absent:
            raise ValueError(
                f"{self.flag} {_label_text(absent)}: no example of {self.stream.name} has "
                f"{'this label' if len(absent) == 1 else 'these labels'} (its labels: "
                f"{_label_text(self.seen[:10])}{', ...' if self.seen.size > 10 else ''}); "
                "no model saved"
            )


def _fitted_index_base(args) -> None:
    """``score`` and ``predict`` read a LIBSVM file with the index base the model's own
    file was read with (format 3's ``reading`` entry, written by ``fit``), unless
    ``--index-base`` (or ``--zero-based``) says otherwise: a file of a model fitted
    0-based that happens to hold no index 0 was read 1-based, every column shifted."""
    from ..persistence import model_reading

    if getattr(args, "index_base", None) is None and getattr(args, "zero_based", None) is None:
        if model_reading(args.model).get("index_base") == 0:
            args.index_base = "0"


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
    model's classes, or --positive-labels says which of them the model should score high.
    """
    from ..metrics import pr_auc, roc_auc
    from ..persistence import load_model

    if args.plot:
        _check_writable(Path(args.plot), "plot")
        _need_matplotlib()
    model = load_model(args.model)
    _fitted_index_base(args)
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
    partial = "  ".join(
        f"FPR<={beta:g} {roc_auc(positive, scores, max_fpr=beta):.6f}" for beta in _LOW_FPRS
    )
    # the top of the ranking first: the last line names the model, as it always did
    print(f"partial AUC (McClish-standardized, as scikit-learn's max_fpr)  {partial}")
    print(
        f"ROC AUC {auc:.6f}  PR AUC {ap:.6f}  on {positive.size:,} examples "
        f"({n_pos:,} positive; {labels.describe()}) ({_model_name(model)}, {args.model})"
    )
    if args.plot:
        _plot_curves(positive, scores, auc, ap, args.plot, stream.name or "")
        print(f"wrote {args.plot}")
    return 0


#: The false-positive rates at which ``score`` reports the partial AUC.
_LOW_FPRS = (0.01, 0.05, 0.1)


def _need_matplotlib():
    """matplotlib's pyplot on the Agg backend (files only), or a one-line error with the
    command that installs the plot extra when matplotlib cannot be imported (the first
    install in the README leaves it out): called before the data is read."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError(
            '--plot needs matplotlib, which is not installed: pip install "aucstream[plot]"'
        ) from None
    return plt


def _plot_curves(positive, scores, auc: float, ap: float, path: str, title: str) -> None:
    """ROC and precision-recall curves, and the low-FPR part of the ROC curve on a log
    FPR axis (where fraud and alerting work), side by side, to a PNG."""
    plt = _need_matplotlib()
    from sklearn.metrics import precision_recall_curve, roc_curve

    from ..metrics import roc_auc

    fpr, tpr, _ = roc_curve(positive, scores)
    precision, recall, _ = precision_recall_curve(positive, scores)
    fig, (left, right, low) = plt.subplots(1, 3, figsize=(15, 4.5))
    floor = 1.0 / max(int(np.count_nonzero(~np.asarray(positive, bool))), 1)
    keep = fpr >= floor  # the first point at FPR = 0 has no place on a log axis
    low.step(fpr[keep], tpr[keep], where="post", label="ROC")
    for beta, style in zip(_LOW_FPRS, (":", "--", "-.")):
        pauc = roc_auc(positive, scores, max_fpr=beta)
        low.axvline(beta, ls=style, color="grey", label=f"FPR {beta:g}: pAUC {pauc:.4f}")
    low.set_xscale("log")
    low.set(
        xlim=(floor, 1.0),
        ylim=(0, 1.02),
        xlabel="false positive rate (log)",
        ylabel="true positive rate",
        title="ROC curve, low false-positive rates",
    )
    low.legend(loc="upper left", fontsize="small")
    low.grid(alpha=0.3, which="both")
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
    from ..persistence import atomic_write, load_model

    model = load_model(args.model)
    args.threshold = None
    if args.alert_rate is not None or args.fpr is not None:
        kind, rate = ("alert_rate", args.alert_rate) if args.fpr is None else ("fpr", args.fpr)
        args.threshold = f"{kind}:{rate!r}"
        try:  # the operating point can be chosen: said before any row is read
            model.operating_cut(args.threshold)
        except (AttributeError, ValueError) as error:
            flag = "--alert-rate" if kind == "alert_rate" else "--fpr"
            raise CommandError(f"{flag} {rate}: {error}") from None
    if args.proba and not hasattr(model, "predict_proba"):
        raise CommandError(
            f"{type(model).__name__} gives no probabilities (no predict_proba): drop --proba"
        )
    target = Path(args.output) if args.output else None
    if target is not None:
        _check_writable(target, "output file")
    _fitted_index_base(args)
    stream = _read(args, getattr(model, "n_features_in_", None), any_label=True)
    if target is None:
        try:
            _write_predictions(model, stream, args, sys.stdout)
        except BrokenPipeError:  # e.g. `aucstream predict ... | head`: not an error
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    with atomic_write(target) as out:  # all or nothing, with the umask's mode
        _write_predictions(model, stream, args, out)
    print(f"{type(model).__name__}: {stream.n_seen:,} scores written to {target}")
    return 0


def _write_predictions(model, stream: ChunkStream, args, out) -> None:
    """One CSV line per row: the score (and the probability of the positive class, and
    the flag of the operating point: 1 when the row is flagged)."""
    threshold = getattr(args, "threshold", None)
    names = ["score"] + ["probability"] * bool(args.proba) + ["flag"] * (threshold is not None)
    out.write(",".join(names) + "\n")
    progress = Progress("predict", enabled=args.progress)
    try:
        for X, _ in stream:
            columns = [model.decision_function(X)]
            if args.proba:
                columns.append(model.predict_proba(X)[:, 1])
            if threshold is not None:
                flagged = model.predict(X, threshold=threshold) == model.classes_[1]
                columns.append(flagged.astype(np.float64))
            np.savetxt(out, np.column_stack(columns), fmt="%.17g", delimiter=",")
            progress.show(stream.info())
    finally:
        progress.close()
    out.flush()
    if stream.n_seen == 0:
        raise _no_examples(stream)


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
        "--params",
        "--param",
        nargs="+",
        default=[],
        metavar="NAME=VALUE",
        help="parameters of --learner, e.g. eta=2^-6 lam=1e-3 update=gra (values as in "
        "aucstream.evaluation.parse_value); --param is the same",
    )
    fit.add_argument(
        "--no-scale",
        action="store_true",
        help="learn from the raw features (no online standard scaler in front)",
    )
    fit.add_argument(
        "--max-fpr",
        type=_rate(0.0, True),
        default=None,
        metavar="BETA",
        help="maximize the partial AUC at false-positive rates up to BETA in (0, 1]: the "
        "search (and pipeline) select by it when they take max_fpr, --learner must take "
        "max_fpr (OnlinePAUC does); without --learner and a search that takes it, the "
        "learner is OnlinePAUC(max_fpr=BETA)",
    )
    fit.add_argument(
        "--classes",
        nargs=2,
        default=None,
        metavar="LABEL",
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
    point = predict.add_mutually_exclusive_group()
    point.add_argument(
        "--alert-rate",
        type=_rate(0.0, False),
        default=None,
        metavar="R",
        help="add a column flag: 1 for the rows scored above the (1 - R)-quantile of the "
        "model's recent prequential scores (about a fraction R of rows flagged)",
    )
    point.add_argument(
        "--fpr",
        type=_rate(0.0, False),
        default=None,
        metavar="F",
        help="add a column flag: 1 for the rows scored above the (1 - F)-quantile of the "
        "recent prequential scores of negatives (a false-positive rate of about F)",
    )

    command("list", _cmd_list, help="list learners and datasets")

    compile_ = command(
        "compile", _cmd_compile, help="compile the learners' kernels now (numba's cache)"
    )
    compile_.add_argument(
        "--learners",
        "--learner",
        nargs="+",
        default=None,
        metavar="NAME",
        help="learner classes (see `aucstream list`); default: every one, the tuning-free "
        "StreamPipeline() included",
    )
    compile_.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="processes compiling side by side (-1: one per CPU; default 1)",
    )
    compile_.add_argument(
        "--no-sparse", action="store_true", help="only the dense paths (no CSR input)"
    )
    _add_progress_option(compile_)


def _cmd_compile(args) -> int:
    """Compile the kernels the learners learn and score with, into numba's on-disk
    cache, so that the first learning call of a later process (a script, a command,
    a worker of a cluster) loads them instead of compiling them. Without
    --learners: every learner with its defaults (the tuning-free StreamPipeline()
    included), dense and CSR input (aucstream.streaming.compile_kernels)."""
    import numba

    from ..streaming import compile_kernels

    if args.jobs == 0 or args.jobs < -1:
        raise CommandError(f"--jobs must be -1 or a positive number, got {args.jobs}")
    if numba.config.DISABLE_JIT:
        raise CommandError("numba's JIT is disabled (NUMBA_DISABLE_JIT): nothing to compile")
    estimators = None
    if args.learners is not None:
        estimators = [_learner_class(name)() for name in args.learners]
    names = compile_kernels(
        estimators, sparse=not args.no_sparse, n_jobs=args.jobs, progress=args.progress
    )
    print(f"compiled: {', '.join(names)}")
    return 0


def _scoring_text(model) -> str:
    """Which candidates a fitted search scores with ("" for any other learner)."""
    members = getattr(model, "ensemble_", None)
    if members is None:
        return ""
    names = [repr(model.candidates_[i]) for i in members if i >= 0]
    if len(names) == 1:
        return f"; scoring with {names[0]}"
    return f"; scoring with the mean calibrated log-odds of {' + '.join(names)}"
