"""Where aucstream's warnings point: the first line outside the package."""

from __future__ import annotations

import os
import sys
from types import FrameType

__all__ = ["caller_stacklevel"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def caller_stacklevel() -> int:
    """The ``stacklevel`` for :func:`warnings.warn` called in the function that calls
    this one, such that the warning names the first frame outside aucstream: the
    user's line, whichever path (``fit``, ``partial_fit``, ``learn_one``, a reader, a
    pipeline) led to the warning."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level
