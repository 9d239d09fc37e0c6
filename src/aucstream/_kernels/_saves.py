"""Kernel calls that save the rows of the state they write themselves
(``StateSpec.self_saved``; ``StateDeclarations._self_saved_state`` in
:mod:`aucstream._runtime._declarations`).

A transaction with an undo log saves, before a kernel call, the rows of the logged
arrays that the call's chunk names, or the whole arrays when the chunk names more rows
than a save by rows can afford (:class:`aucstream._runtime._undo.UndoLog`). A large
chunk at 10^6 columns then copies the state whole, though the kernel reads the rows it
writes anyway. A kernel that saves each row into buffers just before it first writes
it (a bitmap of the rows met, :class:`Saves`) costs a few stores a value; the caller
hands the buffers to the log (:func:`record_saves`). Used by FTRL-AUC and SPAM
(:mod:`aucstream.ftrl`, :mod:`aucstream.spam`). SOLAM's kernel does not: it reads a
row's state in three passes and folds its lazy form every few chunks at 10^6 columns,
and saving there was slower than its whole copies (docs/benchmarks.md, "Wide calls").
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._compile import jit

__all__ = ["NO_SAVES", "Saves", "keep_row", "new_saves", "record_saves", "save_row", "start_saves"]


class Saves(NamedTuple):
    """What a kernel call that saves the state's rows itself (``StateSpec.self_saved``)
    writes them into, with the learner's own buffers of its arrays' rows:
    ``marks`` a bitmap of the rows met so far (all 0 at the start), ``rows`` the rows
    saved in turn, ``scale`` their running column scale, ``filled`` = (rows saved,
    1 when the call was given the scale). Room for every distinct feature of the
    call (the lesser of its stored values and the features), and one slot more: a
    value whose row was met before is written into the next free slot too, and not
    kept (:func:`save_row`), which is one past the last once every row is kept."""

    marks: np.ndarray
    rows: np.ndarray
    scale: np.ndarray
    filled: np.ndarray


#: The kernels' "save nothing" (``marks`` empty).
NO_SAVES = Saves(np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(0), np.zeros(2, np.int64))


def new_saves(arrays: tuple, values: int, with_scale: bool) -> tuple:
    """``(saves, buffers)`` for a call of ``values`` stored values that saves the rows
    of ``arrays`` (indexed by feature along axis 0, of one length d): a
    :class:`Saves` with room for min(values, d) + 1 rows (the scale's too when
    ``with_scale``) and one buffer of as many rows per array."""
    d = arrays[0].shape[0]
    room = min(int(values), d) + 1
    saves = Saves(
        np.zeros((d >> 3) + 1, np.uint8),
        np.empty(room, np.int64),
        np.empty(room if with_scale else 0),
        np.zeros(2, np.int64),
    )
    return saves, tuple(np.empty((room, *a.shape[1:])) for a in arrays)


def record_saves(log, saves: Saves, arrays: tuple, buffers: tuple, scale: np.ndarray) -> None:
    """Hand the rows a call saved (:func:`new_saves`) to the undo ``log``: those of each
    of ``arrays`` from its buffer, and those of ``scale`` when the call was given it."""
    m = int(saves.filled[0])
    rows = saves.rows[:m]
    for array, saved in zip(arrays, buffers):
        log.record(array, rows, saved[:m])
    if saves.filled[1]:
        log.record(scale, rows, saves.scale[:m])


@jit(inline="always")
def start_saves(saves, scale):
    """Whether the call saves its rows (``saves.marks`` not empty); if so, whether it
    saves their scale too (``scale`` not empty) is noted in ``saves.filled[1]``."""
    saving = saves.marks.shape[0] > 0
    if saving and scale.shape[0] > 0:
        saves.filled[1] = 1
    return saving


@jit(inline="always")
def save_row(saves, scale, i):
    """Row ``i`` (and its scale when ``scale`` is not empty) into the next free slot
    of ``saves``, which is kept only when the row is met for the first time in this
    call (its bit of the bitmap ``saves.marks``, all 0 when the call begins, set
    now): without a branch, the row written whether kept or not, so that no
    misprediction costs a value (a third of a chunk's values are first touches).
    Returns the slot, where the caller saves the row of its own arrays before
    :func:`keep_row`. (The slot is at most the number of distinct rows: the room
    holds one more, :class:`Saves`.)"""
    m = saves.filled[0]
    saves.rows[m] = i
    if scale.shape[0] > 0:
        saves.scale[m] = scale[i]
    return m


@jit(inline="always")
def keep_row(saves, i, m):
    """Keep slot ``m`` (see :func:`save_row`) when row ``i`` is met for the first
    time, and mark it: the next free slot then follows it."""
    word = saves.marks[i >> 3]
    bit = np.uint8(1) << np.uint8(i & 7)
    saves.marks[i >> 3] = word | bit
    saves.filled[0] = m + ((word & bit) == 0)
