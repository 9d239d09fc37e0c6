"""A directory of finished runs: one JSON file per run, named by its configuration hash."""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from pathlib import Path

__all__ = ["RunCache", "config_hash"]


def _default(value):
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    raise TypeError(f"cannot put {type(value).__name__} in a run configuration")


def config_hash(config: dict) -> str:
    """sha256 of the canonical JSON of ``config`` (sorted keys, exact floats).

    Parameters
    ----------
    config : dict
        JSON-able description of a run.

    Returns
    -------
    str
        64 hex digits.
    """
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=_default)
    return hashlib.sha256(text.encode()).hexdigest()


def _clean(value):
    """JSON has no NaN: store non-finite floats as None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


class RunCache:
    """Finished runs on disk, so an interrupted comparison resumes where it stopped.

    Each run is ``DIR/ab/abcdef....json`` (the hash of its configuration), written
    atomically (a temporary file renamed into place): a run is either fully cached
    or absent, even if the process is killed while writing.

    Parameters
    ----------
    directory : str or path-like
        Created if needed.
    """

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        """The cached record of ``key``, or None."""
        path = self._path(key)
        try:
            with open(path) as f:
                record = json.load(f)
        except (FileNotFoundError, json.JSONDecodeError):
            return None
        if record.get("auc") is None:
            record["auc"] = float("nan")
        return record

    def put(self, key: str, record: dict) -> None:
        """Store ``record`` under ``key`` (atomic replace)."""
        path = self._path(key)
        path.parent.mkdir(exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(_clean(record), f, default=_default)
        os.replace(tmp, path)

    def __contains__(self, key: str) -> bool:
        return self._path(key).is_file()

    def __len__(self) -> int:
        return sum(1 for _ in self.directory.glob("*/*.json"))
