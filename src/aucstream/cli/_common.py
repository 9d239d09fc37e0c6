"""What the commands share: arguments, reading files, labels, output paths."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..streaming import ChunkStream


class CommandError(SystemExit):
    """A mistake in the command line: :func:`main` prints it as one line, exit status 2.

    A :class:`SystemExit`, so that code calling :func:`main` sees the exit; its
    message is ``str(error)``.
    """

    def __init__(self, message: str):
        super().__init__(message)
        self.code = 2


def _value(text: str):
    """A value of the command line, by the one grammar of
    :func:`aucstream.evaluation.parse_value` (``2^-6``, ``1e-3``, ``True``, ``None``,
    ``'text'`` or a bare word); imported when a command has one to read."""
    from ..evaluation import parse_value

    return parse_value(text)


def _learner_class(name: str) -> type:
    from .. import all_estimators

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
            raise CommandError(f"--params expects NAME=VALUE, got {item!r}")
        if key not in known:
            raise CommandError(
                f"unknown parameter {key!r} for {name}; its parameters: {', '.join(known)}"
            )
        kwargs[key] = _value(value)
    model = cls(**kwargs)
    _validate_learner(model)
    return model


def _model_to_fit(args, maximize: bool = True):
    """The model ``fit`` learns: the tuning-free search or ``--learner``, behind the
    online scaler unless ``--no-scale``. ``--max-fpr`` goes to whatever takes a
    ``max_fpr`` (the search and the pipeline select by partial AUC when they do); the
    default learner without one is the partial-AUC learner ``OnlinePAUC``. Without
    ``maximize`` (``evaluate``, whose ``--max-fpr`` only adds columns) the model is made
    as if ``--max-fpr`` were not given."""
    max_fpr = getattr(args, "max_fpr", None) if maximize else None
    if args.learner is None:
        if args.params:
            raise CommandError("--params needs --learner (the default learner needs no tuning)")
        learner = _meta_learner("OnePassSearch")()
        if max_fpr is not None:
            if not _takes(learner, "max_fpr"):
                learner = _learner("OnlinePAUC", [])
            learner.set_params(max_fpr=max_fpr)
    else:
        learner = _learner(args.learner, args.params)
        if getattr(learner, "is_batch", False):
            raise CommandError(f"{args.learner} is a batch learner; `fit` streams the file")
        if max_fpr is not None:
            if not _takes(learner, "max_fpr"):
                raise CommandError(
                    f"--max-fpr: {args.learner} maximizes the full AUC and takes no max_fpr; "
                    "use --learner OnlinePAUC, or no --learner"
                )
            if any(item.partition("=")[0] == "max_fpr" for item in args.params):
                raise CommandError("give max_fpr once: --max-fpr or --params max_fpr=...")
            learner.set_params(max_fpr=max_fpr)
    _validate_learner(learner)
    if args.no_scale:
        return learner
    from ..preprocessing import OnlineStandardScaler

    pipeline = _meta_learner("StreamPipeline")(OnlineStandardScaler(), learner)
    if max_fpr is not None and _takes(pipeline, "max_fpr"):
        pipeline.set_params(max_fpr=max_fpr)
    return pipeline


def _takes(model, name: str) -> bool:
    """Whether ``model`` has the constructor parameter ``name``."""
    return name in model.get_params(deep=False)


def _rate(low: float, high_closed: bool):
    """An argparse type: a real number in ``(low, 1]`` or ``(low, 1)``, with a clear
    error naming the range (NaN and infinities refused)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        inside = low < value <= 1.0 if high_closed else low < value < 1.0
        if not inside:  # NaN fails too
            raise argparse.ArgumentTypeError(
                f"{text} is not in ({low:g}, 1{']' if high_closed else ')'})"
            )
        return value

    return parse


def _model_name(model) -> str:
    """How the commands name a fitted model: its class, or for a pipeline its learner
    behind its transformer (``SOLAM behind OnlineStandardScaler``), the two parts a
    ``fit`` chose."""
    learner = getattr(model, "estimator_", None)
    transformer = getattr(model, "transformer_", None)
    if learner is None or transformer is None:
        return type(model).__name__
    return f"{type(learner).__name__} behind {type(transformer).__name__}"


def _meta_learner(name: str) -> type:
    import aucstream

    if not hasattr(aucstream, name):
        raise CommandError(
            f"aucstream.{name} is not in this version: pass --learner NAME --no-scale"
        )
    return getattr(aucstream, name)


# ----------------------------------------------------------------------- reading


_ZERO_BASED: dict[str, bool | str] = {"auto": "auto", "yes": True, "no": False}
_INDEX_BASE: dict[str, bool | str] = {"auto": "auto", "0": True, "1": False}


def _zero_based(args) -> bool | str:
    """The reader's ``zero_based`` from ``--index-base`` (or the older ``--zero-based``)."""
    base = getattr(args, "index_base", None)
    older = getattr(args, "zero_based", None)
    if base is not None and older is not None and _INDEX_BASE[base] != _ZERO_BASED[older]:
        raise CommandError(f"--index-base {base} contradicts --zero-based {older}")
    if base is not None:
        return _INDEX_BASE[base]
    return _ZERO_BASED[older] if older is not None else "auto"


def say_if_compiling() -> bool:
    """Before the first learning call of a command: say in one line on stderr that the
    kernels compile now, when numba's cache holds none of the input checks every
    learner runs (a first run: the command would otherwise sit silent while it
    compiles). Returns whether it said so."""
    from ..streaming import kernels_compiled

    if kernels_compiled() is not False:
        return False
    print(
        "aucstream: compiling the kernels this command uses (once: numba caches them "
        "for later runs; `aucstream compile` compiles them all ahead of time)",
        file=sys.stderr,
        flush=True,
    )
    return True


@contextmanager
def cli_warnings() -> Iterator[None]:
    """Warnings printed as one line on stderr, ``aucstream: warning: ...``, while the
    block runs (instead of Python's format with a source line). Only the command line
    uses this; the library's warnings stay :mod:`warnings` warnings."""

    def show(message, category, filename, lineno, file=None, line=None):
        text = " ".join(str(message).split())
        print(f"aucstream: warning: {text}", file=sys.stderr if file is None else file)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


def _positive(args) -> list | None:
    return None if not args.positive else [_value(p) for p in args.positive]


def _read(args, n_features: int | None = None, transform=None, any_label: bool = False):
    """The file of ``args`` as a :class:`ChunkStream` (errors name the file)."""
    from ..datasets import detect_format, iter_file

    kind = None if args.format == "auto" else args.format
    fmt = detect_format(args.data, kind=kind, delimiter=args.delimiter)
    if fmt.kind == "libsvm":
        options = {"n_features": n_features or args.n_features}
        options["zero_based"] = _zero_based(args)
    else:
        label = _value(args.label_column) if args.label_column else -1
        options = {"label_column": label}
        if any_label:  # predict ignores the labels: do not insist that they are numbers
            options["label_type"] = "str"
    width = None
    if getattr(args, "hash_features", None) is not None:
        if fmt.kind == "libsvm":
            raise ValueError("--hash-features applies to CSV files (LIBSVM files are numeric)")
        width = options["hash_features"] = _hash_width(args.hash_features)
        if n_features is not None and width != n_features:
            raise ValueError(
                f"--hash-features {args.hash_features} hashes into {width:,} columns, but "
                f"the model reads {n_features:,}{_width_hint(n_features)}"
            )
    chunks = iter_file(args.data, fmt, chunk_size=args.chunk_size, **options)
    if fmt.kind != "libsvm" and width is None and n_features is not None:
        chunks = _hinted(chunks, n_features)
    return ChunkStream(chunks, transform, name=os.fspath(args.data))


def _width_hint(n_features: int) -> str:
    """What to pass for a saved model of ``n_features`` columns: its hashed width, when
    that is a power of two (``--hash-features``), else nothing."""
    n_features = int(n_features)
    k = n_features.bit_length() - 1
    if n_features < 2 or n_features != 1 << k:
        return ""
    return f" (2^{k}): pass --hash-features 2^{k}, the width it was fitted with"


def _hinted(chunks, n_features: int):
    """``chunks``, where the reader's error for a column of strings (which says to hash
    it) names the saved model's width rather than an example one."""
    try:
        yield from chunks
    except ValueError as error:
        hint = _width_hint(n_features)
        if "--hash-features" not in str(error) or not hint:
            raise
        text = f"{str(error)[:-1]}; the model reads {n_features:,} columns{hint})"
        raise ValueError(text) from None


def _hash_width(text: str) -> int:
    """``--hash-features``: an int in the value grammar (``2^20``, ``1048576``); the
    reader checks that it is a power of two."""
    value = _value(text)
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # 2^20 reads as a float
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"--hash-features must be a power of two such as 2^20, got {text!r}")
    return value


def _label_text(labels) -> str:
    from ..datasets import format_label

    return ", ".join(format_label(v) for v in labels)


def _rows(stream: ChunkStream, n: int) -> str:
    return f"rows {stream.n_seen + 1:,}-{stream.n_seen + n:,}"


class _BinaryLabels:
    """Checks (or maps, with ``--positive-labels``) the labels of a training stream.

    Without ``--positive-labels`` the file must hold two labels (the larger is positive);
    a third label is refused with the rows where it appears. With ``--positive-labels`` the
    listed labels become +1 and every other label -1.
    """

    def __init__(self, positive: list | None):
        self.positive = positive
        self.seen = None
        self.stream: ChunkStream | None = None

    def __call__(self, X, y):
        from ..datasets import apply_positive

        if self.positive is not None:
            return X, apply_positive(y, self.positive)
        seen = np.unique(y) if self.seen is None else np.union1d(self.seen, np.unique(y))
        if seen.size > 2:
            raise ValueError(
                f"{self.stream.name} holds more than two labels ({_label_text(seen[:10])}; "
                f"the third appears in {_rows(self.stream, len(y))}); pass --positive-labels "
                "LABEL ... to say which labels are positive"
            )
        self.seen = seen
        return X, y


class _ModelLabels:
    """Maps the labels of a scored file to "is the model's positive class".

    Without ``--positive-labels``, every label must be one of the model's classes
    (``classes_``), else the AUC could be silently inverted; with ``--positive-labels``,
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
                "pass --positive-labels LABEL ... to say which labels of the file are positive "
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


class _SpelledAs(argparse.Action):
    """Stores the values as ``store`` does, and in ``DEST_flag`` the spelling typed
    (``--positive-labels`` or its alias ``--positive``), so that a message about the
    values names the flag as the user wrote it."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        setattr(namespace, f"{self.dest}_flag", option_string)


def _typed_flag(args, dest: str, canonical: str) -> str:
    """The spelling of a :class:`_SpelledAs` flag that was typed (else ``canonical``)."""
    return getattr(args, f"{dest}_flag", None) or canonical


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
        "--index-base",
        choices=["auto", "0", "1"],
        default=None,
        help="the first feature index of a LIBSVM file: 1 (the LIBSVM convention; an "
        "index 0 is an error), 0, or auto (default): for fit, 0 when index 0 occurs in "
        "the first chunk (with a warning), else 1 and an index 0 further on is an error "
        "naming its line; for score and predict (the width is the model's), the base "
        "fit read the model's own file with (see aucstream.datasets.iter_svmlight)",
    )
    parser.add_argument(
        "--zero-based",
        choices=["auto", "yes", "no"],
        default=None,
        help="the older spelling of --index-base (yes: 0, no: 1)",
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
            "--positive-labels",
            "--positive",
            dest="positive",
            action=_SpelledAs,
            nargs="+",
            default=None,
            metavar="LABEL",
            help="labels of the positive class (the others are negative); --positive is the same",
        )
    parser.add_argument(
        "--hash-features",
        default=None,
        metavar="WIDTH",
        help="hash CSV rows into WIDTH columns, a power of two such as 2^20: string and "
        "categorical columns become signed hashed features, numbers stay values "
        "(scikit-learn's FeatureHasher; see aucstream.preprocessing.FeatureHashing)",
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
