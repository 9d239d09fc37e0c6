"""Small chunks of a ``delay=0`` run learnt together: one learner call for several.

A learner's call has a cost of its own beside its rows: its parameters, its input and
its state are checked, a transaction opened, the kernel dispatched. Chunks of a
thousand rows of a few features do not amortize it: SOLAM's ``test_then_train`` on
skin (3 features) took a fifth longer a row in chunks of 1,000 rows than in chunks of
8,000 (docs/results/prequential.md, "small chunks learnt together").
:func:`~aucstream.evaluation.prequential` with ``delay=0`` (every label kept)
therefore copies consecutive small chunks into one
(:class:`SmallChunks`) and learns it in one call, through the same path a chunk of
that size takes (``_Evaluation.owned_chunk``, or a search's recorded chunk).

**Exact.** With ``delay=0`` a run's scores, metrics and model depend only on the order
of the examples, not on how the stream is cut into chunks (the module docstring of
:mod:`aucstream.evaluation._prequential`), so learning a group of chunks in one call
gives what the chunks one by one give, bit for bit (``tests/test_prequential_merge.py``
compares the two on every path). A group never crosses a checkpoint (``every``): each
is read right after its last row is learnt, as without groups.

**Nothing lost.** Each chunk is copied into the group's arrays when it comes (a reader
may fill the same arrays again for its next chunk), and the arrays are made once per
kind of chunk and reused. A group holds at most :data:`GROUP_ROWS` rows and
:data:`GROUP_BYTES` bytes, and only chunks of at most :data:`CHUNK_BYTES` bytes and
half the rows join one: a larger chunk amortizes its call, or would cost more to copy
than its call, and is learnt as it comes (the group before it first).

**Errors as without groups.** A group's call that fails changed nothing (a learner's
refused call leaves it as it was, and the run counts a chunk only after its call), so
its chunks are then learnt again one by one: the one that is refused is refused as
it would have been alone, and the error names its chunk and its example.

Merged: C-contiguous or not, NumPy 2-D arrays of one numeric dtype and width; CSR
matrices of one class, dtype, index dtype and width in canonical form (sorted,
distinct indices inside the width, finite values: ``aucstream._chunks._csr_ok``, the
learners' own check), so that a group's rows, sliced again after a refusal, are the
chunks' (scipy's row slicing drops an index beyond the width). Other chunks (pandas,
lists, COO, memory maps, a CSR matrix that is not canonical) are learnt as they come,
and a learner's check names what is wrong with them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from .._chunks import _csr_ok, _is_index

#: The most rows of a group, and of its bytes (values and indices).
GROUP_ROWS = 8192
GROUP_BYTES = 1 << 18
#: The most bytes of a chunk that joins a group: copying a larger one costs about what
#: its own call costs beside its rows (a CSR chunk of a9a, 1,000 rows of 14 values,
#: 168 kB: docs/results/prequential.md).
CHUNK_BYTES = 1 << 15
#: Whether ``prequential`` groups small chunks (False: each chunk its own call, as the
#: tests compare).
ENABLED = True
_NUMERIC = frozenset("biuf")


def _kind(X, y: np.ndarray) -> tuple | None:
    """What a group's chunks share (a chunk of another kind starts a new group), or
    None when chunks like ``X`` are not merged."""
    if type(X) is np.ndarray:
        if X.ndim != 2 or X.dtype.kind not in _NUMERIC:
            return None
        return (np.ndarray, X.dtype, X.shape[1], y.dtype)
    if sp.issparse(X) and X.format == "csr" and X.dtype.kind in _NUMERIC:
        indices, indptr = X.indices, X.indptr
        if not (_is_index(indices.dtype) and _is_index(indptr.dtype)):
            return None
        if indptr.ndim != 1 or indptr.shape[0] != y.shape[0] + 1:
            return None
        return (type(X), X.dtype, indices.dtype, indptr.dtype, X.shape[1], y.dtype)
    return None


class SmallChunks:
    """The group of small chunks a ``delay=0`` run holds before learning them in one
    call of the run's ``owned_chunk`` or ``chunk`` (module docstring); any other run's
    chunks are learnt as they come, one call each.

    ``run`` is the ``_Evaluation``: the group reads its ``n_seen``, ``n_chunks`` and
    ``every``, and sets ``n_chunks`` to a chunk's number while its chunks are learnt
    (the first one's for the group; each one's when they are learnt again one by one
    after a refusal)."""

    def __init__(self, run: Any) -> None:
        self.run = run
        self.learn_chunk = run.owned_chunk if run.raw_labels else run.chunk
        self.on = ENABLED and run.fast  # (delay 0, every label kept, a fast path)
        self.kind: tuple | None = None  # (of the arrays below)
        self.X: Any = None  # dense: (max_rows, width); CSR: (data, indices, indptr)
        self.y: np.ndarray = np.empty(0)
        self.rows = self.values = 0  # held
        self.max_rows = self.max_values = 0
        self.parts: list[tuple[int, int, int]] = []  # (first row, end row, chunk number)

    def feed(self, X, y: np.ndarray) -> None:
        """Learn the chunk ``(X, y)``: copied into the group when small (the group learnt
        when full or at a checkpoint), else learnt alone after the group."""
        n = y.shape[0]
        if n == 0:
            return
        kind = _kind(X, y) if self.on else None
        values = 0
        if kind is not None:
            dense = kind[0] is np.ndarray
            values = n * X.shape[1] if dense else int(X.indptr[n] - X.indptr[0])
            size = values * (X.dtype.itemsize + (0 if dense else X.indices.dtype.itemsize))
            if size > CHUNK_BYTES or 2 * n > GROUP_ROWS:
                kind = None  # (a large chunk amortizes its call)
            elif not dense and not _csr_ok(X.indptr, X.indices, X.data, X.shape[1]):
                kind = None  # (not canonical: a learner's own check names what is wrong)
        if kind is None:
            self.learn()
            self.learn_chunk(X, y)
            return
        if kind != self.kind:
            self.learn()
            self._make(kind, X)
        if not self._fits(n, values):  # (the group full, or a checkpoint ahead)
            self.learn()
            if not self._fits(n, values):  # (the chunk crosses a checkpoint)
                self.learn_chunk(X, y)
                return
        every = self.run.every
        if every is not None and (self.run.n_seen + self.rows + n) % every == 0:
            if not self.parts:  # (alone up to a checkpoint: nothing to copy it for)
                self.learn_chunk(X, y)
                return
            self._copy(X, y, n, values)
            self.learn()  # (the checkpoint read right after its rows)
            return
        self._copy(X, y, n, values)

    def _fits(self, n: int, values: int) -> bool:
        """Whether ``n`` rows of ``values`` values join the group (room, and no
        checkpoint crossed before its end)."""
        if self.rows + n > self.max_rows or self.values + values > self.max_values:
            return False
        every = self.run.every
        if every is None:
            return True
        start = self.run.n_seen
        return start + self.rows + n <= (start // every + 1) * every

    def _make(self, kind: tuple, X) -> None:
        """The arrays of a group of chunks of ``kind`` (made once per kind). A CSR
        group learnt because the next chunk did not fit holds at least 7/8 of its
        values' room (a chunk holds at most 1/8), so scipy keeps its arrays as views
        (it copies a view of less than half of an array); one cut short (by the rows'
        bound, a checkpoint, another kind, the end) may be copied, once."""
        self.kind = kind
        if kind[0] is np.ndarray:
            width = max(int(X.shape[1]), 1)
            self.max_rows = min(GROUP_ROWS, GROUP_BYTES // (width * X.dtype.itemsize))
            self.max_values = self.max_rows * width
            self.X = np.empty((self.max_rows, X.shape[1]), dtype=kind[1])
        else:
            self.max_rows = GROUP_ROWS
            self.max_values = GROUP_BYTES // (kind[1].itemsize + kind[2].itemsize)
            self.X = (
                np.empty(self.max_values, dtype=kind[1]),
                np.empty(self.max_values, dtype=kind[2]),
                np.zeros(GROUP_ROWS + 1, dtype=kind[3]),
            )
        self.y = np.empty(self.max_rows, dtype=kind[-1])

    def _copy(self, X, y: np.ndarray, n: int, values: int) -> None:
        start, at = self.rows, self.values
        if type(self.X) is np.ndarray:
            self.X[start : start + n] = X
        else:
            data, indices, indptr = self.X
            first = X.indptr[0]  # (0 for scipy's own; the arrays may hold more)
            data[at : at + values] = X.data[first : first + values]
            indices[at : at + values] = X.indices[first : first + values]
            indptr[start + 1 : start + n + 1] = X.indptr[1 : n + 1] - (first - at)
        self.y[start : start + n] = y
        self.parts.append((start, start + n, self.run.n_chunks))
        self.rows, self.values = start + n, at + values

    def _held(self) -> tuple[Any, np.ndarray]:
        """The group as one chunk (views of its arrays)."""
        n, kind = self.rows, self.kind
        assert kind is not None
        if type(self.X) is np.ndarray:
            return self.X[:n], self.y[:n]
        data, indices, indptr = self.X
        held = (data[: self.values], indices[: self.values], indptr[: n + 1])
        return kind[0](held, shape=(n, kind[4])), self.y[:n]

    def learn(self) -> None:
        """Learn the group held, in one call (module docstring: its chunks one by one
        when that call is refused); then hold nothing."""
        if not self.parts:
            return
        X, y = self._held()
        parts, run = self.parts, self.run
        self.parts, self.rows, self.values = [], 0, 0
        number, base = run.n_chunks, run.n_seen
        run.n_chunks = parts[0][2]
        try:
            self.learn_chunk(X, y)
        except Exception:
            if len(parts) == 1 or run.n_seen != base:
                raise
            for start, stop, k in parts:  # (the refused one raises as it would alone)
                run.n_chunks = k
                self.learn_chunk(X[start:stop], y[start:stop])
        run.n_chunks = number
