"""Library-wide settings (like ``sklearn.set_config``): the memory budget, the fast path.

A learner compares the bytes its state would take with ``memory_budget`` before
allocating anything, and refuses with an error that names the bytes and the learner's
low-memory options, instead of dying in the middle of an allocation: a state that
grows with the square of the dimension (OPAUC's exact covariances, AdaOAM,
ConfidenceWeighted, the batch solvers) and, from 16,384 features on, the O(d) states
too (SOLAM, FTRL-AUC, SPAM... at a hashed width of 2^27 columns, the tuning-free
pipeline's race would take about 50 GB).

Calls that learn or score a few examples take a fast path that skips scikit-learn's
general validation for plainly valid input (:mod:`aucstream._runtime._small_calls`).
``set_config(fast_path=False)`` sends every call through the full validation: the
models and scores are the same bit for bit (``aucstream.checks`` checks it for every
learner), only slower; a switch for checking and for bisecting a suspected bug.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "get_config",
    "set_config",
    "config_context",
    "fast_path_on",
    "format_bytes",
    "check_budget",
]


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return None


_total = _physical_memory()
#: Half of the machine's memory, or 8 GiB where it cannot be read.
_DEFAULTS = {"memory_budget": _total // 2 if _total else 8 << 30, "fast_path": True}


class _Local(threading.local):
    """The settings of one thread; ``fast_path`` is a class attribute so that a thread
    that never set it reads the default without a failed lookup."""

    fast_path = True


_local = _Local()


def _settings() -> dict:
    if not hasattr(_local, "settings"):
        _local.settings = dict(_DEFAULTS)
    return _local.settings


def fast_path_on() -> bool:
    """Whether small calls may take the fast path in this thread (one attribute read:
    it is asked on every small call)."""
    return _local.fast_path


def get_config() -> dict:
    """The current settings (a copy).

    Returns
    -------
    dict
        ``memory_budget``: bytes a learner may allocate for its state, counting the
        copy it keeps while a call is in progress (default: half of the machine's
        memory); ``fast_path``: whether small calls may skip the general validation
        (default True).
    """
    return dict(_settings())


def set_config(memory_budget: int | None = None, fast_path: bool | None = None) -> None:
    """Change settings for the current thread.

    Parameters
    ----------
    memory_budget : int, optional
        Bytes a learner may allocate for its state (> 0).
    fast_path : bool, optional
        Whether calls that learn or score a few examples may take the fast path (the
        same results bit for bit; False sends every call through the full validation).
    """
    if fast_path is not None and not isinstance(fast_path, bool):
        raise TypeError(f"fast_path must be a bool, got {fast_path!r}")
    if memory_budget is not None:
        if isinstance(memory_budget, bool) or not isinstance(memory_budget, int):
            raise TypeError(f"memory_budget must be an int (bytes), got {memory_budget!r}")
        if memory_budget <= 0:
            raise ValueError(f"memory_budget must be positive, got {memory_budget}")
        _settings()["memory_budget"] = memory_budget
    if fast_path is not None:
        _settings()["fast_path"] = _local.fast_path = fast_path


@contextmanager
def config_context(**changes: Any) -> Iterator[None]:
    """Temporarily change settings (see :func:`set_config`).

    Examples
    --------
    >>> from aucstream._config import config_context, get_config
    >>> with config_context(memory_budget=1 << 20):
    ...     get_config()["memory_budget"]
    1048576
    """
    old = get_config()
    set_config(**changes)
    try:
        yield
    finally:
        _settings().update(old)
        _local.fast_path = old["fast_path"]


def check_budget(nbytes: int, what: str) -> None:
    """Refuse, before allocating it, an allocation of ``nbytes`` above ``memory_budget``:
    a MemoryError naming ``what`` (the component and the sizes its user set), for the
    public components whose size a user sets (covariance summaries, reservoirs); a
    learner checks its whole state with the copy it keeps (``aucstream._runtime.check_budget``).

    Examples
    --------
    >>> from aucstream._config import check_budget, config_context
    >>> with config_context(memory_budget=1000):
    ...     check_budget(2000, "Reservoir(capacity=250)")
    Traceback (most recent call last):
    ...
    MemoryError: Reservoir(capacity=250) needs 2.0 kB, above aucstream's memory_budget ...
    """
    budget = _settings()["memory_budget"]
    if nbytes > budget:
        raise MemoryError(
            f"{what} needs {format_bytes(nbytes)}, above aucstream's memory_budget of "
            f"{format_bytes(budget)}; aucstream.set_config(memory_budget=...) raises it"
        )


def format_bytes(n: float) -> str:
    """``1536 -> '1.5 kB'`` (decimal units)."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000.0
    raise AssertionError  # pragma: no cover
