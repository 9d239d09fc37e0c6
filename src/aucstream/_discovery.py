"""Finding every learner the package defines (for the checks battery and the harness)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Any

__all__ = ["all_estimators"]

#: Modules that hold no learner and pull in optional or heavy imports.
_SKIP = {"cli", "__main__"}

#: The subpackages that hold a learner family (its classes defined in their private
#: modules and exported by the package); other subpackages hold none.
_LEARNER_PACKAGES = {"opauc"}


def all_estimators(kind: str | None = None) -> list[tuple[str, type]]:
    """All public aucstream learners, as sorted ``(name, class)`` pairs.

    Parameters
    ----------
    kind : {"online", "batch"} or None
        Keep only online learners (``partial_fit`` works) or only batch learners.

    Returns
    -------
    list of (str, type)
        The learner classes, found by importing every top-level module of the package
        (and the learner packages, :data:`_LEARNER_PACKAGES`).
    """
    import aucstream

    from ._base import BaseStreamingAUC

    found: dict[str, Any] = {}
    for info in pkgutil.iter_modules(aucstream.__path__):
        if info.name.startswith("_") or info.name in _SKIP:
            continue
        if info.ispkg and info.name not in _LEARNER_PACKAGES:
            continue
        module = importlib.import_module(f"aucstream.{info.name}")
        inside = f"{module.__name__}." if info.ispkg else None  # a package's own modules
        for name, obj in inspect.getmembers(module, inspect.isclass):
            home = obj.__module__
            if (
                issubclass(obj, BaseStreamingAUC)
                and obj is not BaseStreamingAUC
                and not name.startswith("_")
                and (home == module.__name__ or (inside is not None and home.startswith(inside)))
            ):
                found[name] = obj
    if kind == "online":
        found = {k: v for k, v in found.items() if not v.is_batch}
    elif kind == "batch":
        found = {k: v for k, v in found.items() if v.is_batch}
    elif kind is not None:
        raise ValueError(f"kind must be 'online', 'batch' or None, got {kind!r}")
    return sorted(found.items())
