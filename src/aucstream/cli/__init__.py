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
``aucstream evaluate FILE -o curve.csv [--learner NAME] [--delay N] [--window W]``
    ``[--every N] [--metrics auc,log_loss] [--plot curve.png]``:
    Prequential evaluation as a deployment sees it: each example scored on arrival,
    its label learnt N examples later; the metrics at every checkpoint, as CSV.
``aucstream list``
    The learners (with their tuning grids) and the registered datasets.
``aucstream compile [--learners NAMES] [--jobs N] [--no-sparse]``
    Compile the learners' kernels into numba's on-disk cache now (an image's build, a
    cluster's machines), so that a later process's first learning call loads them.
``aucstream compare --learners A B --datasets x y [--protocol g16] [--quick] [--out DIR]``
    Compare learners on datasets (registry names or LIBSVM/CSV files) under a paper's
    protocol: repeated stratified k-fold, hyperparameters by inner cross-validation
    over each learner's grid, paired t-tests; cached, resumable, in parallel; writes a
    Markdown report, the raw runs (CSV, JSON) and plots.
``aucstream reproduce TABLE [--quick] [--out DIR]``
    Reproduce a paper's table or figure (``aucstream reproduce list``) with the
    paper's values beside ours.

Values and flags
----------------
Every value written on the command line (``--params eta=2^-6 update=gra``, the
parameters of ``--learners "OAM(eta=2^-6)"``, ``--sweep``, labels, the classes of a
dataset rule) is read by one grammar, :func:`aucstream.evaluation.parse_value`.
Every flag that takes a list is plural (``--datasets``, ``--learners``, ``--params``,
``--positive-labels``); the singular spelling is the same flag.

Errors
------
Every warning is one line on stderr, ``aucstream: warning: ...``. Every failure is
one line on stderr, ``aucstream COMMAND: error: ...``, naming the
file and line (bad input), the parameter (``--param``) or the member (a damaged
model file), and the exit status is 2; an unexpected internal error exits with 1.
``--debug`` shows the traceback instead. Progress bars go to stderr (by default only
when it is a terminal; ``--progress`` forces them), results to stdout.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import os
import sys
from collections.abc import Sequence

from ..streaming import Progress, fit_stream  # re-exported: they lived here
from ._common import CommandError, cli_warnings
from ._evaluate import _add_evaluate_parser
from ._experiments import _add_compare_parser, _add_reproduce_parser, _add_run_parser
from ._model import _add_fit_parsers

__all__ = ["CommandError", "Progress", "build_parser", "fit_stream", "main"]


def _command(sub, common, name: str, func, **options) -> argparse.ArgumentParser:
    """A sub-command ``name`` run by ``func``, described by ``func``'s docstring."""
    description = inspect.cleandoc(func.__doc__) if func.__doc__ else None
    parser = sub.add_parser(name, parents=[common], description=description, **options)
    parser.set_defaults(func=func)
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``aucstream`` command."""
    from .. import __version__

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
    _add_evaluate_parser(command)
    _add_compare_parser(command)
    _add_reproduce_parser(command)
    return parser


#: Errors of the input or the environment (exit status 2); anything else is a bug (1).
#: A warning raised as an error (``python -W error``, ``PYTHONWARNINGS=error``) is the
#: environment's choice: its message, exit status 2, not "an internal error".
_EXPECTED = (ValueError, OSError, EOFError, FloatingPointError, MemoryError, Warning)


def _one_line(error: BaseException) -> str:
    """The error as one line: its message, or ``file: reason`` for a system error."""
    if isinstance(error, OSError) and error.strerror and error.filename is not None:
        return f"{error.filename}: {error.strerror}"
    text = " ".join(str(error).split())
    notes = " ".join(" ".join(str(note).split()) for note in getattr(error, "__notes__", ()))
    if notes:  # (what the library added on the way, e.g. the example a value came from)
        text = f"{text} ({notes})" if text else notes
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
        with cli_warnings():  # one line each, not Python's format with a source line
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
    except BrokenPipeError:  # the reader left (``aucstream list | head``): not an error
        # Python's recipe: point stdout at devnull so the flush at exit raises nothing
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # the shell's status of a process ended by SIGPIPE
    except Exception as error:  # noqa: BLE001 - one line, not a traceback (--debug for it)
        if args.debug:
            raise
        expected = isinstance(error, _EXPECTED)
        hint = "" if expected else " (an internal error: rerun with --debug and report it)"
        print(f"aucstream {args.command}: error: {_one_line(error)}{hint}", file=sys.stderr)
        return 2 if expected else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
