"""The ``evaluate`` command: prequential evaluation of a learner on a file, with delays."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from ..streaming import Progress
from ._common import (
    CommandError,
    _add_file_options,
    _BinaryLabels,
    _check_writable,
    _labelled_stream,
    _model_name,
    _model_to_fit,
    _no_examples,
    _positive,
    _rate,
    _value,
    say_if_compiling,
)


def _plot_module():
    try:
        import matplotlib
    except ImportError:
        raise ValueError("--plot needs matplotlib: pip install 'aucstream[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _cmd_evaluate(args) -> int:
    """Score each example of FILE on arrival, learn its label --delay examples later,
    and write the metrics at every checkpoint (--every examples; by default every
    --window examples when a window is asked, else every chunk) as CSV: n_seen,
    n_learnt, the metrics (aucstream.evaluation.prequential), cpu_seconds, model_bytes.
    Default learner: StreamPipeline(OnlineStandardScaler(), OnePassSearch()).
    --max-fpr adds the partial AUC's columns and leaves the learner as it is.
    """
    from ..evaluation import prequential

    model = _model_to_fit(args, maximize=False)
    target = Path(args.output)
    _check_writable(target, "output file")
    if args.plot:
        _check_writable(Path(args.plot), "plot")
        _plot_module()
    metrics = None
    if args.metrics is not None:
        metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
        # (the columns the options ask for, when the list leaves them out)
        asked = [("alarms", args.detector is not None), ("partial_auc", args.max_fpr is not None)]
        asked.append(("window_partial_auc", args.max_fpr is not None and args.window is not None))
        metrics += [name for name, wanted in asked if wanted and name not in metrics]
        _check_options(metrics, args)
    classes = [_value(c) for c in args.classes] if args.classes else None
    if args.positive:
        classes = [-1, 1]
    labels = _BinaryLabels(_positive(args))
    stream = _labelled_stream(args, labels)
    progress = Progress(f"evaluate {args.learner or _model_name(model)}", enabled=args.progress)
    say_if_compiling()
    try:
        curve = prequential(
            model,
            stream,
            delay=args.delay,
            window=args.window,
            metrics=metrics,
            every=_every(args),
            classes=classes,
            detector=_detector(args.detector),
            max_fpr=args.max_fpr,
            rank=args.rank,
            label_probability=args.label_probability,
            random_state=args.seed,
            progress=progress,
        )
    except ValueError as error:
        if stream.n_seen == 0 and "no examples" in str(error):
            raise _no_examples(stream) from None
        raise
    from ..persistence import atomic_write

    with atomic_write(target) as out:  # all or nothing, with the umask's mode
        curve.to_csv(out, index=False, float_format="%.17g")
    last = curve.iloc[-1]
    shown = [
        f"{name} {int(last[name])}" if name == "alarms" else f"{name} {last[name]:.4f}"
        for name in curve.columns
        if name not in ("n_seen", "n_learnt", "cpu_seconds", "model_bytes")
        and isinstance(last[name], float)
        and math.isfinite(last[name])
    ]
    print(
        f"{_model_name(model)}: {int(last['n_seen']):,} examples scored, "
        f"{int(last['n_learnt']):,} learnt (delay {args.delay}); {', '.join(shown)}; "
        f"{len(curve)} checkpoint{'' if len(curve) == 1 else 's'} written to {target}"
    )
    windowed = [name for name in curve.columns if name.startswith("window_")]
    undefined = int(curve[windowed].isna().any(axis=1).sum()) if windowed else 0
    if undefined:  # (NaN in the CSV, gaps in the plot: say why)
        print(
            f"aucstream evaluate: {', '.join(windowed)} undefined (NaN) at {undefined} of "
            f"{len(curve)} checkpoints, whose last {args.window:,} examples were of one "
            "class",
            file=sys.stderr,
        )
    if args.plot:
        _plot_curve(curve, args.plot, stream.name or "", args.window, args.max_fpr)
        print(f"wrote {args.plot}")
        if len(curve) == 1:  # (a curve of one point: the stream ended before a checkpoint)
            default = "--window" if args.window is not None else "the chunk size"
            print(
                f"aucstream evaluate: one checkpoint: the stream's {int(last['n_seen']):,} "
                f"examples are fewer than --every {_every(args):,} (by default {default}); "
                "pass a smaller --every for a curve over time",
                file=sys.stderr,
            )
    return 0


#: The option of the command line that gives each of prequential's options.
_FLAGS = {"window": "--window W", "max_fpr": "--max-fpr BETA", "detector": "--detector NAME"}


def _check_options(metrics: list[str], args) -> None:
    """Refuse a column of ``--metrics`` whose option is not given, naming the flag
    (prequential's own error names its keyword)."""
    from ..evaluation import prequential_metrics

    given = {"window": args.window, "max_fpr": args.max_fpr, "detector": args.detector}
    needs = prequential_metrics()
    for name in metrics:
        missing = [option for option in needs.get(name, ()) if given[option] is None]
        if missing:
            flags = " and ".join(_FLAGS[option] for option in missing)
            raise CommandError(f"--metrics {name} needs {flags}")


def _every(args) -> int:
    """The examples between two checkpoints: ``--every``, else ``--window`` (each
    window's AUC read once, at its end, as CapyMOA's windowed evaluation reports it),
    else the chunk size."""
    if args.every is not None:
        return args.every
    return args.window if args.window is not None else args.chunk_size


#: The drift detectors of ``--detector``: the change detector on the mean of the
#: ranking signal of :class:`aucstream.drift.AUCDriftDetector`.
DETECTORS = ("page-hinkley", "adwin")


def _detector(name: str | None):
    """``--detector``'s detector: AUCDriftDetector over PageHinkley or ADWIN, defaults."""
    if name is None:
        return None
    from ..drift import ADWIN, AUCDriftDetector, PageHinkley

    return AUCDriftDetector(PageHinkley() if name == "page-hinkley" else ADWIN())


def _plot_curve(
    curve, path: str, title: str, window: int | None = None, max_fpr: float | None = None
) -> None:
    """Windowed metrics (else the cumulative ones) over n_seen, alarms as vertical
    lines; the y axis says which (the window's length, or "since the first
    example"), the legend the partial AUC's FPR bound."""
    plt = _plot_module()
    windowed = [c for c in curve.columns if c.startswith("window_")]
    cumulative = ("auc", "partial_auc", "average_precision", "g_mean")
    shown = windowed or [c for c in cumulative if c in curve]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    few = len(curve) < 30  # (points marked: a curve of one checkpoint is one point)
    for name in shown:
        label = f"{name} (FPR <= {max_fpr:g})" if "partial" in name and max_fpr else name
        ax.plot(curve["n_seen"], curve[name], marker="o" if few else None, label=label)
    if "alarms" in curve:
        raised = curve["n_seen"][curve["alarms"].diff().fillna(curve["alarms"]) > 0]
        for k, n in enumerate(raised):
            ax.axvline(n, color="red", alpha=0.5, lw=1, label="drift alarm" if k == 0 else None)
    if windowed:
        ylabel = f"over the last {window:,} examples" if window else "windowed"
    else:
        ylabel = "since the first example"
    ax.set(
        xlabel="examples seen",
        ylabel=f"metric {ylabel}",
        title=f"prequential: {Path(title).name}",
    )
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an int >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an int >= 0, got {value}")
    return value


def _positive_int(text: str) -> int:
    value = _non_negative_int(text)
    if value == 0:
        raise argparse.ArgumentTypeError("expected an int >= 1, got 0")
    return value


def _add_evaluate_parser(command) -> None:
    parser = command(
        "evaluate",
        _cmd_evaluate,
        help="prequential evaluation with delayed labels: a metrics curve (CSV)",
    )
    _add_file_options(parser)
    parser.add_argument("-o", "--output", required=True, help="CSV file of the curve to write")
    parser.add_argument("--learner", default=None, help="one learner class (see `aucstream list`)")
    parser.add_argument(
        "--params",
        "--param",
        nargs="+",
        default=[],
        metavar="NAME=VALUE",
        help="parameters of --learner, e.g. eta=2^-6 update=gra (values as in "
        "aucstream.evaluation.parse_value); --param is the same",
    )
    parser.add_argument(
        "--no-scale", action="store_true", help="no online standard scaler in front"
    )
    parser.add_argument(
        "--classes",
        nargs=2,
        default=None,
        metavar="LABEL",
        help="the two labels (else read from the file)",
    )
    parser.add_argument(
        "--delay",
        type=_non_negative_int,
        default=0,
        help="examples scored before a label is learnt (default 0: test then train); "
        "the labels that come due are learnt in chunks, so a delay costs little more "
        "than test then train; a single --learner is several times faster than the "
        "default pipeline's race (docs/results/prequential.md)",
    )
    parser.add_argument(
        "--window", type=_positive_int, default=None, help="add the AUC of the last W scores"
    )
    parser.add_argument(
        "--every",
        type=_positive_int,
        default=None,
        help="a checkpoint every N examples (default: --window when given, so that "
        "each window's AUC is read once, at its end; else the chunk size)",
    )
    parser.add_argument(
        "--metrics",
        default=None,
        help="comma-separated columns, e.g. auc,log_loss (default: auc, window_auc with "
        "--window, log_loss, brier, positive_rate)",
    )
    parser.add_argument(
        "--detector",
        choices=DETECTORS,
        default=None,
        help="a drift detector on the scores' AUC (aucstream.drift.AUCDriftDetector over "
        "PageHinkley or ADWIN, their defaults): adds the alarms column, the alarms so far "
        "at each checkpoint, marked on --plot",
    )
    parser.add_argument(
        "--max-fpr",
        type=_rate(0.0, True),
        default=None,
        metavar="BETA",
        help="add the partial AUC at false-positive rates up to BETA in (0, 1] "
        "(partial_auc, and window_partial_auc with --window; McClish-standardized as "
        "scikit-learn's max_fpr); the learner is not changed: to evaluate one that "
        "maximizes it, e.g. --learner OnlinePAUC --params max_fpr=0.05 (a search that "
        "races by it, --learner OnePassSearch --params max_fpr=0.05, is scored row by "
        "row: about a hundred times slower, docs/user_guide/streaming_evaluation.rst)",
    )
    parser.add_argument(
        "--rank",
        choices=("decision", "proba"),
        default="decision",
        help="what the AUC columns rank: the decision scores (default) or the "
        "probabilities, as River's metrics do (aucstream.evaluation.prequential)",
    )
    parser.add_argument(
        "--label-probability",
        type=_rate(0.0, True),
        default=None,
        metavar="P",
        help="keep each label with probability P in (0, 1] (one draw per example, "
        "from --seed): a dropped label is scored but never learnt",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seed of the label drops of --label-probability",
    )
    parser.add_argument(
        "--plot", default=None, metavar="PNG", help="draw the windowed metrics over n_seen"
    )
