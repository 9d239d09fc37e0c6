"""The ``aucstream`` command line.

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
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
from collections.abc import Iterable, Iterator, Sequence

import numpy as np

__all__ = ["main", "Progress", "fit_stream"]


class Progress:
    """Rate-limited progress line on stderr: examples seen and examples per second.

    Parameters
    ----------
    label : str
        Text before the counts.
    enabled : bool or None
        None shows progress only when stderr is a terminal.
    every : float
        Seconds between updates.
    """

    def __init__(self, label: str, enabled: bool | None = None, every: float = 0.5):
        self.label = label
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.every = every
        self.count = 0
        self.start = self.last = time.perf_counter()

    def update(self, n: int) -> None:
        self.count += n
        now = time.perf_counter()
        if self.enabled and now - self.last >= self.every:
            self.last = now
            self._write("\r")

    def close(self) -> None:
        if self.enabled:
            self._write("\r")
            sys.stderr.write("\n")

    def _write(self, prefix: str) -> None:
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        sys.stderr.write(
            f"{prefix}{self.label}: {self.count:,} examples, {elapsed:.1f} s, "
            f"{self.count / elapsed:,.0f} examples/s"
        )
        sys.stderr.flush()


def fit_stream(model, chunks: Iterable[tuple], classes: Sequence | None = None,
               progress: Progress | None = None):
    """Feed ``(X, y)`` chunks to ``model.partial_fit`` in order; returns the model.

    Parameters
    ----------
    model : BaseStreamingAUC
        An online learner.
    chunks : iterable of (X, y)
        The stream.
    classes : sequence, optional
        Both labels; needed when the first chunk holds one class only.
    progress : Progress, optional
        Reporter updated after each chunk.

    Returns
    -------
    model
        The updated learner.
    """
    for X, y in chunks:
        model.partial_fit(X, y, classes=classes)
        if progress is not None:
            progress.update(X.shape[0])
    if progress is not None:
        progress.close()
    return model


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
    from .datasets import iter_csv, iter_svmlight

    fmt = args.format
    if fmt == "auto":
        name = str(args.data).lower()
        for suffix in (".gz", ".bz2", ".xz"):
            name = name.removesuffix(suffix)
        fmt = "csv" if name.endswith((".csv", ".tsv", ".txt", ".data")) else "svmlight"
    if fmt == "svmlight":
        stream = iter_svmlight(args.data, chunk_size=args.chunk_size,
                               n_features=n_features or args.n_features)
    else:
        label = _parse_value(args.label_column) if args.label_column else -1
        delimiter = "\t" if args.delimiter == "tab" else args.delimiter
        stream = iter_csv(args.data, label_column=label, chunk_size=args.chunk_size,
                          delimiter=delimiter)
    positive = None if not args.positive else {_parse_value(p) for p in args.positive}
    for X, y in stream:
        if positive is not None:
            y = np.where(np.isin(y, list(positive)), 1, -1)
        yield X, y


def _add_file_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", help="LIBSVM/SVMlight or CSV file (plain, .gz, .bz2, .xz)")
    parser.add_argument("--format", choices=["auto", "svmlight", "csv"], default="auto",
                        help="file format (default: from the file name)")
    parser.add_argument("--n-features", type=int, default=None,
                        help="number of features of a LIBSVM file (default: inferred)")
    parser.add_argument("--label-column", default=None,
                        help="CSV label column, index or name (default: last)")
    parser.add_argument("--delimiter", default=",", help="CSV delimiter; 'tab' for tabs")
    parser.add_argument("--positive", nargs="+", default=None,
                        help="labels of the positive class (the others are negative)")
    parser.add_argument("--chunk-size", type=int, default=10000,
                        help="examples per chunk (bounds memory)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show progress (default: when stderr is a terminal)")


def _cmd_fit(args) -> int:
    from .persistence import save_model

    model = _learner(args.learner, args.param)
    if model.is_batch:
        raise SystemExit(f"{args.learner} is a batch learner; `fit` streams the file")
    classes = [_parse_value(c) for c in args.classes] if args.classes else None
    if args.positive:
        classes = [-1, 1]
    progress = Progress(f"fit {args.learner}", args.progress)
    fit_stream(model, _chunks(args), classes=classes, progress=progress)
    save_model(model, args.output)
    print(f"{args.learner}: {model.n_samples_seen_:,} examples, {model.n_features_in_} features, "
          f"classes {model.classes_.tolist()}; saved to {args.output}")
    return 0


def _cmd_score(args) -> int:
    from .metrics import roc_auc
    from .persistence import load_model

    model = load_model(args.model)
    scores, labels = [], []
    progress = Progress("score", args.progress)
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
    print(f"One pass per learner; stratified {1 - args.test_size:.0%}/{args.test_size:.0%} split "
          f"(seed {args.seed}); parameters by 3-fold CV on the training part ({args.grid} grid).")
    print(header)
    print("-" * len(header))

    def show(row):
        params = ", ".join(f"{k}={_fmt(v)}" for k, v in row.params.items())
        print(f"{row.dataset:<10} {row.learner:<22} {row.test_auc:>8.4f} "
              f"{row.train_seconds:>8.3f}  {params}", flush=True)

    for dataset in args.dataset:
        data = load_dataset(dataset)
        holdout_comparison(estimators, data.X, data.y, dataset=dataset, test_size=args.test_size,
                           grids=grids, random_state=args.seed, callback=show)
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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``aucstream`` command."""
    from . import __version__

    parser = argparse.ArgumentParser(prog="aucstream",
                                     description="One-pass and online AUC maximization.")
    parser.add_argument("--version", action="version", version=f"aucstream {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="quick start: compare the online learners on real data")
    run.add_argument("--dataset", nargs="+", default=["diabetes", "german", "fourclass"],
                     help="registered dataset names (default: the embedded ones)")
    run.add_argument("--learner", nargs="+", default=None, help="learners (default: all online)")
    run.add_argument("--grid", choices=["coarse", "paper", "none"], default="coarse",
                     help="hyperparameter grid searched by cross-validation")
    run.add_argument("--test-size", type=float, default=0.2)
    run.add_argument("--seed", type=int, default=0)
    run.set_defaults(func=_cmd_run)

    fit = sub.add_parser("fit", help="learn from a file as a stream and save the model")
    fit.add_argument("learner", help="learner class name, e.g. OPAUC (see `aucstream list`)")
    _add_file_options(fit)
    fit.add_argument("-o", "--output", required=True, help="model file to write (.npz)")
    fit.add_argument("--param", nargs="+", default=[], metavar="NAME=VALUE",
                     help="learner parameters, e.g. eta=2^-6 lam=0.01")
    fit.add_argument("--classes", nargs=2, default=None,
                     help="the two labels, if the first chunk may hold only one")
    fit.set_defaults(func=_cmd_fit)

    score = sub.add_parser("score", help="AUC of a saved model on a file")
    score.add_argument("model", help="model file written by `aucstream fit`")
    _add_file_options(score)
    score.set_defaults(func=_cmd_score)

    lst = sub.add_parser("list", help="list learners and datasets")
    lst.set_defaults(func=_cmd_list)
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
