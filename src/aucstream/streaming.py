"""Learning from a stream of chunks, with a progress bar and a running AUC.

:func:`fit_stream` feeds ``(X, y)`` chunks (e.g. from
:func:`aucstream.datasets.iter_file`) to a learner; it can show a :class:`Progress`
bar, keep the running prequential AUC (each chunk is scored by the model *before* it
learns the chunk, :meth:`~aucstream._base.BaseStreamingAUC.test_then_train`), and call
a ``callback`` with a :class:`StreamInfo` after each chunk. The command line
(``aucstream fit``, ``score``, ``predict``) and the evaluation harness (batches of
runs, ``aucstream compare``/``reproduce``) share this one reporter.

How far a file has been read
----------------------------
A reader's iterator may tell how far it has come through two attributes, read after
each chunk (:func:`stream_bytes`):

``bytes_read``
    Bytes of the file (compressed bytes, for a compressed file) consumed so far.
``total_bytes``
    The size of the file, or None when it is not known (a pipe).

When both are there, the bar shows a percentage, the rate in bytes per second and
an ETA; otherwise it counts examples and shows their rate. :class:`ChunkStream`
wraps any iterator of chunks (e.g. to map labels) and passes both attributes on.
"""

from __future__ import annotations

import lzma
import math
import os
import shutil
import sys
import threading
import time
import warnings
import weakref
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

__all__ = [
    "ChunkStream",
    "Progress",
    "StreamInfo",
    "compile_kernels",
    "fit_stream",
    "kernels_compiled",
    "running_auc_is_cheap",
    "stream_bytes",
]

#: Scores kept by the running AUC of :func:`fit_stream` (8 bytes each). Beyond, the
#: AUC is estimated from a histogram (see :class:`aucstream.metrics.PrequentialAUC`),
#: with an error bound of about 2.4e-6 (1/(2m), m = 209,715 cells) while the scores
#: keep their distribution.
RUNNING_AUC_MEMORY = 1 << 20


@dataclass(frozen=True)
class StreamInfo:
    """Where a stream stands, after a chunk.

    Attributes
    ----------
    n_seen : int
        Examples read so far.
    n_chunks : int
        Chunks read so far.
    bytes_read : int or None
        Bytes of the source consumed (None: the source does not tell).
    total_bytes : int or None
        Size of the source (None: unknown).
    auc : float
        The running prequential AUC (NaN when it is not computed, or while only one
        class has been seen).
    elapsed : float
        Seconds since the stream started.
    """

    n_seen: int
    n_chunks: int
    bytes_read: int | None
    total_bytes: int | None
    auc: float
    elapsed: float

    @property
    def fraction(self) -> float | None:
        """The share of the source read, when its size is known."""
        if self.bytes_read is None or not self.total_bytes:
            return None
        return min(self.bytes_read / self.total_bytes, 1.0)


def stream_bytes(source: Any) -> tuple[int | None, int | None]:
    """``(bytes_read, total_bytes)`` of a reader's iterator, None where it does not tell.

    Parameters
    ----------
    source : iterator
        E.g. the iterator returned by :func:`aucstream.datasets.iter_file`.

    Returns
    -------
    bytes_read, total_bytes : int or None

    Examples
    --------
    >>> stream_bytes(iter([]))
    (None, None)
    """
    read, total = getattr(source, "bytes_read", None), getattr(source, "total_bytes", None)
    return (None if read is None else int(read)), (None if total is None else int(total))


def _describe_read_error(error: BaseException) -> str:
    if isinstance(error, EOFError):
        return f"the file ends early (truncated compressed data?): {error}"
    if isinstance(error, (lzma.LZMAError, zlib.error)):
        return f"corrupt compressed data ({type(error).__name__}: {error})"
    if isinstance(error, UnicodeDecodeError):
        return f"not text in the expected encoding ({error})"
    return str(error)


class ChunkStream:
    """An iterator of ``(X, y)`` chunks that counts what it yields.

    It passes on the reader's ``bytes_read`` and ``total_bytes`` (see the module
    docstring), applies an optional ``transform`` to each chunk, and, given the
    source's ``name``, names it in any error raised while reading (a truncated or
    corrupt compressed file raises errors that do not say which file).

    Parameters
    ----------
    chunks : iterable of (X, y)
        The source, e.g. :func:`aucstream.datasets.iter_file`.
    transform : callable, optional
        ``transform(X, y) -> (X, y)``, applied to every chunk.
    name : str, optional
        The source's name, put in front of reading errors that lack it.

    Attributes
    ----------
    n_seen, n_chunks : int
        Rows and chunks yielded so far.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.datasets import iter_chunks
    >>> stream = ChunkStream(iter_chunks(np.eye(5), np.arange(5), 2))
    >>> [X.shape[0] for X, _ in stream], stream.n_seen, stream.n_chunks
    ([2, 2, 1], 5, 3)
    """

    def __init__(
        self,
        chunks: Iterable[tuple],
        transform: Callable[[Any, Any], tuple] | None = None,
        name: str | None = None,
    ):
        self.source = chunks
        self._iterator = iter(chunks)
        self.transform, self.name = transform, name
        self.n_seen = self.n_chunks = 0
        self.start = time.perf_counter()

    def __iter__(self) -> Iterator[tuple]:
        return self

    def __next__(self) -> tuple:
        try:
            X, y = next(self._iterator)
        except (OSError, EOFError, ValueError, lzma.LZMAError, zlib.error) as error:
            if self.name is None or self.name in str(error):
                raise
            raise ValueError(f"{self.name}: {_describe_read_error(error)}") from error
        if self.transform is not None:
            X, y = self.transform(X, y)
        self.n_seen += X.shape[0]
        self.n_chunks += 1
        return X, y

    @property
    def bytes_read(self) -> int | None:
        """The source's ``bytes_read`` (None if it does not tell)."""
        return stream_bytes(self.source)[0]

    @property
    def total_bytes(self) -> int | None:
        """The source's ``total_bytes`` (None if it does not tell)."""
        return stream_bytes(self.source)[1]

    def info(self, auc: float = math.nan) -> StreamInfo:
        """A :class:`StreamInfo` of the stream now."""
        read, total = stream_bytes(self.source)
        return StreamInfo(
            self.n_seen, self.n_chunks, read, total, auc, time.perf_counter() - self.start
        )


def _isatty(file) -> bool:
    try:
        return bool(file.isatty())
    except (AttributeError, ValueError):
        return False


def _thousands(value: float) -> str:
    return f"{value:,.0f}"


#: How a line looks: with a known total, in place on a terminal (a bar) or as a log
#: line; with no total (a stream of unknown size). Rendered by ``tqdm.format_meter``.
_BAR = (
    "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt}{unit}{cached} "
    "[{elapsed}, ETA {remaining}, {speed}{postfix}]"
)
_LOG = (
    "{desc}: {n_fmt}/{total_fmt}{unit}{cached}, {percentage:.0f}%, {elapsed} elapsed, "
    "ETA {remaining}, {speed}{postfix}"
)
_COUNT = "{desc}: {n_fmt}{unit}{cached}, {elapsed} elapsed, {speed}{postfix}"


class Progress:
    """A progress line on stderr: percentage, rate and ETA (formatted by tqdm).

    Two uses share it. A batch of items (runs of a comparison) is counted with
    :meth:`update`; with a ``total``, the line shows the percentage and an ETA from
    the items computed so far (items taken from a cache count as done but do not
    shorten the ETA). A stream is shown with :meth:`show` (see :func:`fit_stream`):
    the percentage, byte rate and ETA of the file when its reader tells how far it
    has come (:func:`stream_bytes`), else the examples and their rate; and the running
    AUC when there is one.

    On a terminal the line is a bar redrawn in place; elsewhere (a log, a pipe) every
    redraw is a new plain line. While enabled, the line is also redrawn every
    ``every`` seconds by a daemon thread, so that the clock moves during a long item.

    Parameters
    ----------
    label : str
        Text before the counts.
    total : int or None, default=None
        Number of items of a batch, when known.
    unit : str, default="examples"
        What is counted.
    enabled : bool or None, default=None
        None: only when ``file`` is a terminal.
    every : float or None, default=None
        Seconds between redraws (default: 0.5 on a terminal and 10 elsewhere); 0
        redraws at every update (and starts no thread).
    file : file object, optional
        Where to draw (default: ``sys.stderr`` at construction).

    Attributes
    ----------
    count : int
        Items counted (examples, for a stream).
    cached : int
        Items counted as taken from a cache.

    Examples
    --------
    >>> p = Progress("runs", total=3, unit="runs", enabled=False)
    >>> p.update(cached=True); p.update(); p.update(); p.close()
    >>> p.count, p.cached
    (3, 1)
    >>> p._render().split(", ")[:2]
    ['runs: 3/3 runs (1 cached)', '100%']
    """

    def __init__(
        self,
        label: str,
        total: int | None = None,
        unit: str = "examples",
        enabled: bool | None = None,
        every: float | None = None,
        file: IO[str] | None = None,
    ):
        self.label, self.total, self.unit = label, total, unit
        self.file = file if file is not None else sys.stderr
        self.tty = _isatty(self.file)
        encoding = (getattr(self.file, "encoding", None) or "").lower().replace("-", "")
        self._ascii = not encoding.startswith("utf")  # bar blocks need a Unicode terminal
        self.enabled = self.tty if enabled is None else bool(enabled)
        self.every = every if every is not None else (0.5 if self.tty else 10.0)
        self.count = self.cached = 0
        self.start = self.last = time.perf_counter()
        self.note = ""
        # what the line shows: position, its total, whether in bytes, text after it
        self._n, self._of, self._in_bytes, self._postfix = 0, total, False, ""
        self._started = self._closed = self._placed = False
        self._width = 0
        self._shown: tuple[int, str, str] | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        if self.enabled and self.every > 0:  # shows life before the first item is done
            args = (weakref.ref(self), self._stop, self.every)
            threading.Thread(
                target=_tick, args=args, name="aucstream-progress", daemon=True
            ).start()

    @property
    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.perf_counter() - self.start

    def _render(self, bar: bool = False) -> str:
        """The line as text (with a bar graphic when ``bar``)."""
        from tqdm import tqdm

        elapsed = self.elapsed
        rate = (self._n - self.cached) / elapsed if elapsed > 0 else 0.0
        if self._in_bytes:
            speed = tqdm.format_sizeof(rate, "B/s", 1024)
        elif rate >= 1 or rate == 0:
            speed = f"{tqdm.format_sizeof(rate) if rate else '?'} {self.unit}/s"
        else:
            speed = f"{1 / rate:.1f} s each"
        if self._of is None:
            fmt = _COUNT
        else:
            fmt = _BAR if bar else _LOG
        columns = shutil.get_terminal_size((100, 24)).columns - 1 if bar else None
        return tqdm.format_meter(
            self._n,
            self._of,
            elapsed,
            ncols=columns,
            prefix=self.label,
            ascii=self._ascii,
            unit="B" if self._in_bytes else f" {self.unit}",
            unit_scale=self._in_bytes or self._of is None,
            unit_divisor=1024 if self._in_bytes else 1000,
            bar_format=fmt,
            postfix=", ".join(p for p in (self._postfix, self.note) if p),
            initial=self.cached,  # the rate (and the ETA) counts computed items only
            cached=f" ({self.cached} cached)" if self.cached else "",
            speed=speed,
        )

    def _emit(self, final: bool = False) -> None:
        """Draw the line: in place on a terminal, else as a new line. Holds the lock."""
        self.last = time.perf_counter()
        self._shown = (self._n, self._postfix, self.note)
        if self.tty:
            text = self._render(bar=True)
            pad = " " * max(self._width - len(text), 0)
            self._width = len(text)
            self.file.write("\r" + text + pad + ("\n" if final else ""))
        else:
            self.file.write(self._render() + "\n")
        self.file.flush()

    def _tick(self) -> bool:
        """Redraw if nothing was drawn for ``every`` seconds; False once closed."""
        with self._lock:
            if self._closed:
                return False
            if time.perf_counter() - self.last >= self.every:
                self._started = True
                self._emit()
            return True

    def _draw(self) -> None:
        """Redraw if due (called after the position changed)."""
        with self._lock:
            if not self.enabled or self._closed:
                return
            self._started = True
            if time.perf_counter() - self.last >= self.every:
                self._emit()

    def update(self, n: int = 1, cached: bool = False, note: str | None = None) -> None:
        """Count ``n`` more items (``cached``: they cost nothing, left out of the ETA).

        ``note`` (e.g. what comes next) replaces the text shown after the counts.
        """
        self.count += n
        self.cached += n if cached else 0
        self.note = self.note if note is None else note
        self._n = self.count
        self._draw()
        if self.total is not None and self.count >= self.total:
            self.close()

    def due(self) -> bool:
        """Whether the line would be drawn now (enabled, and ``every`` seconds since it
        was last drawn): what it shows need not be computed otherwise."""
        return self.enabled and not self._closed and time.perf_counter() - self.last >= self.every

    def show(self, info: StreamInfo) -> None:
        """Show a stream's position (see :func:`fit_stream`)."""
        self.count = info.n_seen
        if not self._placed:  # bytes when the reader tells them, else examples
            self._placed, self._in_bytes = True, info.fraction is not None
            self._of = info.total_bytes if self._in_bytes else None
        parts = []
        if self._in_bytes:
            self._n = min(info.bytes_read or 0, self._of or 0)
            rate = info.n_seen / max(info.elapsed, 1e-9)
            parts.append(f"{_thousands(info.n_seen)} {self.unit} ({_thousands(rate)}/s)")
        else:
            self._n = info.n_seen
        if math.isfinite(info.auc):
            parts.append(f"prequential AUC {info.auc:.4f}")
        self._postfix = ", ".join(parts)
        self._draw()

    def write(self, text: str, file: IO[str] | None = None) -> None:
        """Print a line (to stdout by default) without breaking the bar."""
        file = sys.stdout if file is None else file
        with self._lock:
            redraw = self.tty and self._started and not self._closed and self._width
            if redraw:
                self.file.write("\r" + " " * self._width + "\r")
                self.file.flush()
                self._width = 0
            print(text, file=file, flush=True)
            if redraw:
                self._emit()

    def close(self) -> None:
        """Draw the final line (once, if anything was shown)."""
        self._stop.set()
        with self._lock:
            if not self._closed and self.enabled and self._started:
                if self.tty or self._shown != (self._n, self._postfix, self.note):
                    self._emit(final=True)  # a log does not repeat its last line
            self._closed = True


def _tick(progress: weakref.ref, stop: threading.Event, every: float) -> None:
    """The redrawing thread of a :class:`Progress`: it ends when the progress is closed
    or forgotten (it holds no reference to it between redraws)."""
    while not stop.wait(every):
        line = progress()
        if line is None or not line._tick():
            return
        del line


def running_auc_is_cheap(model: Any) -> bool:
    """Whether the running prequential AUC costs (almost) nothing for ``model``.

    It does when the model's kernels write each row's score before learning it
    (``_tags.kernel_prequential``; a meta-learner that computes the prequential scores
    anyway declares it too); otherwise ``test_then_train`` learns row by row, which is
    much slower than ``partial_fit`` on chunks.

    Parameters
    ----------
    model : estimator

    Returns
    -------
    bool
    """
    tags = getattr(model, "_tags", None)
    return bool(getattr(tags, "kernel_prequential", False)) and hasattr(model, "test_then_train")


def _progress_for(progress: Progress | bool | None, model: Any) -> Progress | None:
    if progress is None or progress is False:
        return None
    if progress is True:
        return Progress(f"fit {type(model).__name__}", enabled=True)
    return progress


def fit_stream(
    model: Any,
    chunks: Iterable[tuple],
    classes: Sequence | None = None,
    progress: Progress | bool | None = None,
    callback: Callable[[StreamInfo], Any] | None = None,
    running_auc: bool | None = None,
) -> Any:
    """Feed ``(X, y)`` chunks to ``model`` in order; returns the model.

    Each chunk is learnt by ``model.partial_fit``, or, when the running AUC is on,
    by ``model.test_then_train``, whose scores (each row scored before it is learnt)
    are added to an :class:`aucstream.metrics.PrequentialAUC`: the same model, and an
    honest estimate of its AUC on the stream without a held-out set.

    Parameters
    ----------
    model : BaseStreamingAUC
        An online learner (any estimator with ``partial_fit``; ``test_then_train``
        for the running AUC).
    chunks : iterable of (X, y)
        The stream; a reader's iterator that tells ``bytes_read`` and
        ``total_bytes`` (see the module docstring) gives a percentage and an ETA.
    classes : sequence, optional
        Both labels; needed when the first chunk holds one class only.
    progress : Progress or bool, optional
        A bar updated after each chunk and closed at the end; True makes one (shown
        even when stderr is not a terminal), None or False shows none.
    callback : callable, optional
        Called with a :class:`StreamInfo` after each chunk.
    running_auc : bool or None, default=None
        Keep the running prequential AUC (shown by the bar, given to ``callback``).
        None: when it is cheap (:func:`running_auc_is_cheap`).

    Returns
    -------
    model
        The updated learner.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream import OPAUC
    >>> from aucstream.datasets import iter_chunks
    >>> X = np.random.default_rng(0).normal(size=(100, 3)); y = np.sign(X[:, 0])
    >>> fit_stream(OPAUC(), iter_chunks(X, y, 30)).n_samples_seen_
    100
    >>> seen = []
    >>> _ = fit_stream(OPAUC(), iter_chunks(X, y, 30), running_auc=True,
    ...                callback=lambda info: seen.append((info.n_seen, info.auc > 0.9)))
    >>> seen[-1]
    (100, True)
    """
    from .metrics import PrequentialAUC

    bar = _progress_for(progress, model)
    stream = chunks if isinstance(chunks, ChunkStream) else ChunkStream(chunks)
    if running_auc is None:
        running_auc = running_auc_is_cheap(model)
    metric = PrequentialAUC(pos_label=True, max_memory=RUNNING_AUC_MEMORY)
    auc = math.nan
    try:
        for X, y in stream:
            if running_auc:
                scores = model.test_then_train(X, y, classes=classes)
                positive = np.asarray(y) == model.classes_[1]
                auc = metric.update(positive, scores).get()
            else:
                model.partial_fit(X, y, classes=classes)
            info = stream.info(auc)
            if bar is not None:
                bar.show(info)
            if callback is not None:
                callback(info)
    finally:
        if bar is not None:
            bar.close()
    return model


def kernels_compiled() -> bool | None:
    """Whether numba's on-disk cache already holds compiled kernels of aucstream: False
    on a first run, when the first learning call compiles what it uses (which a
    command line says on screen before it sits silent), None when numba's cache can
    not be read.

    Returns
    -------
    bool or None

    Examples
    --------
    >>> from aucstream.streaming import kernels_compiled
    >>> kernels_compiled() in (True, False, None)
    True
    """
    from . import _chunks
    from ._kernels import kernels_cached

    return kernels_cached((_chunks._values_ok, _chunks._csr_ok, _chunks.nonzero_columns))


def compile_kernels(
    estimators: Iterable[Any] | None = None,
    *,
    sparse: bool = True,
    n_jobs: int | None = None,
    progress: bool | None = False,
) -> list[str]:
    """Compile the kernels of ``estimators`` now, ahead of their first learning call.

    numba compiles a learner's kernels at its first call after an install (the
    tuning-free ``StreamPipeline()`` compiles some twenty, its candidates' and the
    race's; docs/benchmarks.md) and keeps them in its on-disk cache, from which later
    processes load them. This makes those first calls now: in an image's build, before
    timing a run, on each machine of a cluster that does not share the cache. Each
    estimator (a clone, so the given ones stay unfitted) learns a generated stream
    whose concept changes half way (an online one with ``fit``, then ``partial_fit`` of
    chunks, of part of one and of one row, long enough for a search's rounds, windows
    and drift alarms; a batch one fits its first 200 rows), scores it
    (``decision_function``, ``predict_proba``) and, when it has them, learns and
    scores one example with ``learn_one`` and ``predict_proba_one``; dense rows
    (float64), and CSR rows when ``sparse``. Warnings of the learning (e.g. FSAUC's
    unknown stream length) are not shown. The kernels of the evaluation
    (:func:`aucstream.evaluation.prequential`'s metrics) compile at their first use.

    Parameters
    ----------
    estimators : iterable of estimators, optional
        Unfitted aucstream estimators. Default: every learner of
        :func:`aucstream.all_estimators` with its default parameters (the tuning-free
        ``StreamPipeline()`` and ``OnePassSearch()`` among them).
    sparse : bool, default=True
        Also compile the CSR paths (scipy.sparse input).
    n_jobs : int or None, default=None
        Processes compiling estimators side by side (numba compiles one function at
        a time in a process); None or 1: this process, -1: one per CPU.
    progress : bool or None, default=False
        A progress line on stderr (None: when stderr is a terminal).

    Returns
    -------
    list of str
        The estimators' class names, in order.

    Examples
    --------
    >>> from aucstream import UnivariateOnline
    >>> from aucstream.streaming import compile_kernels
    >>> compile_kernels([UnivariateOnline()], sparse=False)
    ['UnivariateOnline']
    """
    from sklearn.base import clone

    if estimators is None:
        from . import all_estimators

        estimators = [cls() for _, cls in all_estimators()]
    if isinstance(estimators, str) or hasattr(estimators, "fit"):
        raise TypeError(
            f"compile_kernels: estimators must be a list of estimators, got {estimators!r}"
        )
    try:
        given = list(estimators)
    except TypeError:
        raise TypeError(
            f"compile_kernels: estimators must be a list of estimators, got {estimators!r}"
        ) from None
    for i, estimator in enumerate(given):
        if isinstance(estimator, type) or not (
            callable(getattr(estimator, "fit", None)) and hasattr(estimator, "get_params")
        ):
            raise TypeError(
                f"compile_kernels: estimators[{i}] is {estimator!r}, not an unfitted "
                "estimator (an instance with fit and get_params)"
            )
    copies = [clone(estimator) for estimator in given]  # (refuses what clone can not copy)
    for estimator in copies:  # a bad parameter is refused by name, before any compile
        validate = getattr(estimator, "_validate_params", None)
        if validate is not None:
            validate()
    if not isinstance(sparse, bool | np.bool_):
        raise TypeError(f"compile_kernels: sparse must be a bool, got {sparse!r}")
    if n_jobs is not None and (
        isinstance(n_jobs, bool)
        or not isinstance(n_jobs, int | np.integer)
        or n_jobs < -1
        or n_jobs == 0
    ):
        raise ValueError(
            f"compile_kernels: n_jobs must be None, -1 or a positive int, got {n_jobs!r}"
        )
    import numba

    names = [type(estimator).__name__ for estimator in copies]
    if numba.config.DISABLE_JIT:  # (the kernels would run as Python: minutes each)
        warnings.warn(
            "compile_kernels: numba's JIT is disabled (NUMBA_DISABLE_JIT): there is "
            "nothing to compile, nothing was run",
            RuntimeWarning,
            stacklevel=2,
        )
        return names
    workers = (os.cpu_count() or 1) if n_jobs == -1 else (n_jobs or 1)
    workers = min(int(workers), len(copies)) or 1
    line = Progress("compiling", total=len(copies), unit="estimators", enabled=progress)
    try:
        if workers == 1:
            for estimator in copies:
                _compile_one(estimator, bool(sparse))
                line.update()
            return names
        from joblib import Parallel, delayed

        # loky's processes: no fork of numba's state, no import of the caller's __main__
        parallel = Parallel(n_jobs=workers, backend="loky", return_as="generator_unordered")
        with warnings.catch_warnings():
            # loky replaces a process whose memory grew past its leak guard (compiling
            # grows it) after its task, and says so: nothing is lost
            warnings.filterwarnings("ignore", "A worker stopped while some jobs", UserWarning)
            for _ in parallel(delayed(_compile_one)(e, bool(sparse)) for e in copies):
                line.update()
        return names
    finally:
        line.close()


#: The rows an online estimator learns in :func:`compile_kernels` (a batch one: 200)
_COMPILE_ROWS = 5000


def _compile_one(estimator: Any, sparse: bool) -> str:
    """The learning and scoring calls of :func:`compile_kernels` on ``estimator``."""
    import scipy.sparse as sp
    from sklearn.base import clone

    # a concept that flips half way: the online learners' streams are long enough for
    # a search's rounds, windows and drift alarms (kernels of their own); 20 features
    # outgrow a sparse summary's first table (its regrowth is a kernel too)
    from .checks import make_stream

    X, y = make_stream(_COMPILE_ROWS + 40, 20, seed=0)
    y[_COMPILE_ROWS // 2 :] *= -1
    inputs = [X] + ([sp.csr_matrix(X)] if sparse else [])
    n = _COMPILE_ROWS
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for rows in inputs:
                model = clone(estimator).fit(rows[:200], y[:200])
                if hasattr(model, "partial_fit"):
                    for start in range(200, n, 1200):  # chunks, a part one, one row
                        stop = min(start + 1200, n)
                        model.partial_fit(rows[start:stop], y[start:stop])
                    model.partial_fit(rows[n : n + 39], y[n : n + 39])
                    model.partial_fit(rows[n + 39 :], y[n + 39 :])
                model.decision_function(rows[-40:])
                if hasattr(model, "predict_proba"):
                    model.predict_proba(rows[-40:])
                if hasattr(model, "learn_one"):  # a dict row, and after dense chunks an array
                    one = [X[0], dict(enumerate(X[0].tolist()))] if rows is X else [{0: 1.0}]
                    for row in one:
                        model.learn_one(row, int(y[0]))
                        if hasattr(model, "predict_proba_one"):
                            model.predict_proba_one(row)
    except Exception as error:
        raise RuntimeError(
            f"compile_kernels: {type(estimator).__name__} failed on a generated stream: "
            f"{type(error).__name__}: {error}"
        ) from error
    return type(estimator).__name__
