"""Writing a file all at once or not at all (:func:`atomic_write`), with the mode
``open()`` would give it: the one home of the library's atomic saves (model files,
the run cache, the CLI's outputs), re-exported by :mod:`aucstream.persistence`."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

__all__ = ["atomic_write"]


def _umask() -> int:
    """The process's umask: from ``/proc/self/status`` where there is one (Linux),
    else by setting it and putting it back (for that instant a file another thread
    creates would be more private, never less)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


@contextmanager
def atomic_write(path: str | os.PathLike, binary: bool = False) -> Iterator[IO]:
    """Write a file all at once or not at all: a context manager giving a file that
    takes ``path``'s name only when the block ends without an error.

    The data go to a temporary file beside ``path``, flushed to disk; the file then
    gets the mode ``open()`` would give it (0666 less the umask), is renamed over
    ``path`` and the rename is flushed too. If the block raises, the temporary file is
    removed and ``path`` is untouched. Used for model files (:func:`save_model`) and
    the CLI's outputs.

    Parameters
    ----------
    path : str or path-like
        The file to write.
    binary : bool, default=False
        Open the file in binary mode (else text).

    Yields
    ------
    file object

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.csv"
    >>> with atomic_write(target) as f:
    ...     _ = f.write("score\\n0.5\\n")
    >>> target.read_text().split()
    ['score', '0.5']
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb" if binary else "w") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        # mkstemp makes the file private (0600); it gets the mode open() would give
        # it, 0666 less the umask, before it takes the target's name
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:  # make the rename itself durable
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory handles
        return
    try:
        os.fsync(dir_fd)
    except OSError:  # pragma: no cover - file systems that refuse it
        pass
    finally:
        os.close(dir_fd)
