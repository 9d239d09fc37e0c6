"""A directory of finished runs: one JSON file per run, named by its configuration hash."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from .._json import dumps
from ..persistence import atomic_write

__all__ = ["RunCache", "config_hash"]


def config_hash(config: dict) -> str:
    """sha256 of the canonical JSON of ``config`` (sorted keys, exact floats).

    Parameters
    ----------
    config : dict
        Description of a run, made JSON by :func:`aucstream._json.to_jsonable`
        (numpy scalars as Python scalars, tuples as lists).

    Returns
    -------
    str
        64 hex digits.
    """
    text = dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class RunCache:
    """Finished runs on disk, so an interrupted comparison resumes where it stopped.

    Each run is ``DIR/ab/abcdef....json`` (the hash of its configuration), written
    atomically (:func:`aucstream.persistence.atomic_write`: a temporary file flushed
    to disk and renamed into place): a run is either fully cached
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
        with atomic_write(path) as f:  # flushed to disk, renamed into place
            f.write(dumps(record))

    def __contains__(self, key: str) -> bool:
        return self._path(key).is_file()

    def __len__(self) -> int:
        return sum(1 for _ in self.directory.glob("*/*.json"))
