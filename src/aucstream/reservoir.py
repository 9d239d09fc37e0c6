"""Reservoir buffers: a uniform sample of a class's stream in bounded memory.

Vitter's Algorithm R as used by OAM (Zhao et al. 2011, Alg. 2): with
capacity N and n examples of the class seen so far (the current one included), the
example is appended while the buffer is not full; afterwards it replaces a slot chosen
uniformly at random with probability N/n. Every example seen then sits in the buffer
with probability N/n.

One uniform draw ``u`` in [0, 1) per example decides both things: ``j = floor(u n)``
is uniform on {0, ..., n-1}; the example replaces slot ``j`` if ``j < N``. Drawing
exactly one number per example keeps results independent of how the stream is split
into chunks.

With ``capacity=None`` the buffer is unbounded (OAM_inf) and stores every example;
its memory then grows with the stream, by design.

Two reservoirs of the same capacity merge into a uniform sample of both streams
(:meth:`Reservoir.merge`); a loaded reservoir is checked for consistency
(:meth:`Reservoir._check_state`: its size is min(capacity, offered), its norms those
of its rows) before any kernel reads it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._chunks import csr_arrays
from ._kernels import Rows, col, jit, n_rows, row, sparse_axpy

__all__ = ["Reservoir", "reservoir_offer"]


@jit
def reservoir_offer(items, sq_norms, counts, capacity, idx, val, u):
    """Offer one example to a reservoir; return the slot written, or -1.

    ``counts`` is ``[size, n_seen]`` (int64, updated in place); ``capacity < 0``
    means unbounded (the caller guarantees ``items`` has room).
    """
    counts[1] += 1
    size = counts[0]
    if capacity < 0 or size < capacity:
        slot = size
        counts[0] = size + 1
    else:
        j = np.int64(u * counts[1])
        if j >= capacity:
            return -1
        slot = j
    stored = items[slot]
    stored[:] = 0.0
    sparse_axpy(stored, 1.0, idx, val)
    sq = 0.0  # of the stored row: equal to ||val||^2 unless idx repeats a column
    for a in range(val.shape[0]):
        v = stored[col(idx, a)]
        sq += v * v
    sq_norms[slot] = sq
    return slot


@jit
def _offer_rows(items, sq_norms, counts, capacity, rows, uniforms):
    for r in range(n_rows(rows)):
        idx, val, _ = row(rows, r)
        reservoir_offer(items, sq_norms, counts, capacity, idx, val, uniforms[r])


class Reservoir:
    """A uniform random sample of at most ``capacity`` examples (dense rows).

    Parameters
    ----------
    n_features : int
        Dimension of the examples.
    capacity : int or None
        Maximum number of stored examples N; None stores every example.

    Attributes
    ----------
    items_ : ndarray of shape (allocated, n_features)
        Storage; the first ``size`` rows are the buffer, in storage order.
    sq_norms_ : ndarray of shape (allocated,)
        Squared norms of the stored rows.
    counts_ : ndarray of shape (2,), int64
        ``[size, n_seen]``.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.reservoir import Reservoir
    >>> r = Reservoir(n_features=2, capacity=3)
    >>> r.offer(np.arange(20.0).reshape(10, 2), np.random.default_rng(0)).size
    3
    >>> r.n_seen
    10
    """

    #: Arrays whose first axis grows with the stream (an unbounded buffer).
    _growable_state = ("items_", "sq_norms_")

    def __init__(self, n_features: int, capacity: int | None):
        if capacity is not None and capacity < 1:
            raise ValueError(f"capacity must be a positive int or None, got {capacity}")
        self.n_features = int(n_features)
        self.capacity = None if capacity is None else int(capacity)
        initial = self.capacity if self.capacity is not None else 64
        self.items_ = np.zeros((initial, self.n_features))
        self.sq_norms_ = np.zeros(initial)
        self.counts_ = np.zeros(2, dtype=np.int64)

    @property
    def size(self) -> int:
        """Number of stored examples."""
        return int(self.counts_[0])

    @property
    def n_seen(self) -> int:
        """Number of examples offered so far."""
        return int(self.counts_[1])

    @property
    def capacity_code(self) -> int:
        """Capacity as the kernels read it (-1 = unbounded)."""
        return -1 if self.capacity is None else self.capacity

    @property
    def buffer(self) -> np.ndarray:
        """The stored examples, shape (size, n_features) (a view)."""
        return self.items_[: self.size]

    def reserve(self, extra: int) -> None:
        """Make room for ``extra`` more examples in an unbounded buffer."""
        if self.capacity is not None:
            return
        need = self.size + int(extra)
        if need > self.items_.shape[0]:
            new = max(need, 2 * self.items_.shape[0])
            items = np.zeros((new, self.n_features))
            items[: self.size] = self.buffer
            norms = np.zeros(new)
            norms[: self.size] = self.sq_norms_[: self.size]
            self.items_, self.sq_norms_ = items, norms

    def _check_state(self) -> None:
        """A loaded buffer must be consistent: the counters within their bounds, the
        norms those of the stored rows (kernels index and divide by them)."""
        if isinstance(self.n_features, bool) or not isinstance(self.n_features, int):
            raise ValueError(f"n_features = {self.n_features!r} is not an integer")
        capacity = self.capacity
        if capacity is not None and (
            isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1
        ):
            raise ValueError(f"capacity = {capacity!r} is not a positive integer or None")
        allocated = self.items_.shape[0]
        if self.items_.shape[1:] != (self.n_features,) or self.sq_norms_.shape != (allocated,):
            raise ValueError(
                f"items_ {self.items_.shape} and sq_norms_ {self.sq_norms_.shape} do not "
                f"hold rows of {self.n_features} features"
            )
        size, seen = int(self.counts_[0]), int(self.counts_[1])
        expected = seen if capacity is None else min(capacity, seen)
        if not 0 <= size <= allocated or size != expected:
            raise ValueError(
                f"counts_ {self.counts_.tolist()}: a reservoir of capacity {capacity} that "
                f"was offered {seen} examples holds min(capacity, offered), and at most the "
                f"{allocated} rows allocated"
            )
        if capacity is not None and allocated != capacity:
            raise ValueError(f"items_ has {allocated} rows for a capacity of {capacity}")
        norms = np.einsum("ij,ij->i", self.buffer, self.buffer)
        if not np.allclose(self.sq_norms_[:size], norms, rtol=1e-12, atol=0.0):
            raise ValueError("sq_norms_ are not the squared norms of the stored rows")

    def merge(self, other: Reservoir, rng: np.random.Generator) -> Reservoir:
        r"""Absorb another reservoir of the same kind: a uniform sample of both streams.

        With :math:`n_1, n_2` the examples offered to each (:math:`s_1, s_2` stored),
        the merged buffer is a uniform random sample without replacement of
        :math:`\min(N, n_1 + n_2)` examples of the concatenated streams: the number
        :math:`k` taken from the first is hypergeometric (N draws from :math:`n_1`
        "first" and :math:`n_2` "second" examples) and the :math:`k` (and
        :math:`N - k`) examples are a uniform subset of the first (second) buffer,
        itself a uniform sample of its stream, and :math:`k \le s_1` always. Every
        example of either stream is then kept with probability
        :math:`N / (n_1 + n_2)`. An unbounded buffer keeps both buffers whole.
        ``other`` is left unchanged; returns self.
        """
        if other.n_features != self.n_features or other.capacity != self.capacity:
            raise ValueError("cannot merge reservoirs of different widths or capacities")
        n1, n2 = self.n_seen, other.n_seen
        if self.capacity is None or n1 + n2 <= self.capacity:
            rows = np.vstack([self.buffer, other.buffer])
            norms = np.concatenate([self.sq_norms_[: self.size], other.sq_norms_[: other.size]])
        else:
            if n1 == 0 or n2 == 0:
                k = self.capacity if n1 else 0
            else:
                k = int(rng.hypergeometric(n1, n2, self.capacity))
            first = rng.choice(self.size, size=k, replace=False)
            second = rng.choice(other.size, size=self.capacity - k, replace=False)
            rows = np.vstack([self.buffer[first], other.buffer[second]])
            norms = np.concatenate([self.sq_norms_[first], other.sq_norms_[second]])
        allocated = max(rows.shape[0], self.items_.shape[0] if self.capacity else 64)
        self.items_ = np.zeros((allocated, self.n_features))
        self.items_[: rows.shape[0]] = rows
        self.sq_norms_ = np.zeros(allocated)
        self.sq_norms_[: rows.shape[0]] = norms
        self.counts_ = np.array([rows.shape[0], n1 + n2], dtype=np.int64)
        return self

    def offer(self, X: ArrayLike, rng: np.random.Generator) -> Reservoir:
        """Offer the rows of ``X`` in order, one uniform draw each; returns self."""
        indptr, indices, data, d = csr_arrays(X)
        if d != self.n_features:
            raise ValueError(f"Reservoir holds {self.n_features} features, got {d}")
        n = indptr.shape[0] - 1
        self.reserve(n)
        _offer_rows(
            self.items_,
            self.sq_norms_,
            self.counts_,
            self.capacity_code,
            Rows(indptr, indices, data, np.zeros(n)),
            rng.random(n),
        )
        return self
