"""Learning from a stream of chunks, with a progress line.

:func:`fit_stream` feeds ``(X, y)`` chunks (e.g. from
:func:`aucstream.datasets.iter_file`) to a learner's ``partial_fit``; :class:`Progress`
reports how far a long task has come. The command line (``aucstream fit`` and
``score``) and the evaluation harness (batches of runs) share this one reporter.

:class:`Progress` keeps the counting (``update``/``close``) apart from the drawing
(``_render`` and ``_emit``), so another front end (a progress bar with a percentage
and an ETA, say) replaces those two methods only.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["Progress", "fit_stream"]


class Progress:
    """A rate-limited progress line on stderr.

    With a ``total`` (a batch of runs) it shows ``done/total`` items, how many came
    from a cache, the elapsed time and an ETA; without one (a stream of unknown
    length) it shows the items seen and the rate.

    Parameters
    ----------
    label : str
        Text before the counts.
    total : int or None, default=None
        Number of items, when known.
    unit : str, default="examples"
        What is counted (shown in the line).
    enabled : bool or None, default=None
        None: only when stderr is a terminal.
    every : float or None, default=None
        Seconds between lines (default: 0.5 on a terminal, where the line is
        redrawn in place, and 10 elsewhere, where every line is kept).

    Examples
    --------
    >>> p = Progress("runs", total=2, unit="runs", enabled=False)
    >>> p.update(); p.update(cached=True); p.close()
    >>> p.count, p.cached
    (2, 1)
    """

    def __init__(
        self,
        label: str,
        total: int | None = None,
        unit: str = "examples",
        enabled: bool | None = None,
        every: float | None = None,
    ):
        self.label, self.total, self.unit = label, total, unit
        self.tty = sys.stderr.isatty()
        self.enabled = self.tty if enabled is None else enabled
        self.every = every if every is not None else (0.5 if self.tty else 10.0)
        self.count = self.cached = 0
        self.start = self.last = time.perf_counter()
        self._closed = False

    @property
    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.perf_counter() - self.start

    def update(self, n: int = 1, cached: bool = False) -> None:
        """Count ``n`` more items (``cached``: they cost nothing, left out of the ETA)."""
        self.count += n
        self.cached += n if cached else 0
        if self.total is not None and self.count >= self.total:
            self.close()
            return
        now = time.perf_counter()
        if self.enabled and now - self.last >= self.every:
            self.last = now
            self._emit(self._render(), final=False)

    def close(self) -> None:
        """Draw the final line (once)."""
        if self.enabled and not self._closed:
            self._emit(self._render(), final=True)
        self._closed = True

    def _render(self) -> str:
        elapsed = max(self.elapsed, 1e-9)
        if self.total is None:
            return (
                f"{self.label}: {self.count:,} {self.unit}, {elapsed:.1f} s, "
                f"{self.count / elapsed:,.0f} {self.unit}/s"
            )
        computed, left = self.count - self.cached, self.total - self.count
        eta = f", ETA {elapsed / computed * left:.0f} s" if computed and left > 0 else ""
        return (
            f"{self.label}: {self.count}/{self.total} {self.unit} ({self.cached} cached), "
            f"{elapsed:.0f} s{eta}"
        )

    def _emit(self, text: str, final: bool) -> None:
        if self.tty:
            sys.stderr.write(f"\r{text}   " + ("\n" if final else ""))
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()


def fit_stream(
    model: Any,
    chunks: Iterable[tuple],
    classes: Sequence | None = None,
    progress: Progress | None = None,
) -> Any:
    """Feed ``(X, y)`` chunks to ``model.partial_fit`` in order; returns the model.

    Parameters
    ----------
    model : BaseStreamingAUC
        An online learner (any estimator with ``partial_fit``).
    chunks : iterable of (X, y)
        The stream.
    classes : sequence, optional
        Both labels; needed when the first chunk holds one class only.
    progress : Progress, optional
        Reporter updated after each chunk and closed at the end.

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
    """
    for X, y in chunks:
        model.partial_fit(X, y, classes=classes)
        if progress is not None:
            progress.update(X.shape[0])
    if progress is not None:
        progress.close()
    return model
