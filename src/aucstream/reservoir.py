r"""Reservoir buffers: a uniform sample of a class's stream in bounded memory.

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

Forgetting: :class:`BiasedReservoir`
------------------------------------
With a half-life of :math:`h` examples (``half_life``, counted on the stream of *both*
classes, the one clock of the library: :mod:`aucstream._params`), the buffer is biased
toward recent examples, after Aggarwal (*On biased reservoir sampling in the presence
of stream evolution*, VLDB 2006): the probability that an example of age :math:`a`
(examples of the stream that arrived after it) is still stored is

.. math::

    P(\text{stored} \mid a) = \rho\,\gamma^{a} = \rho\,2^{-a/h},
    \qquad \gamma = 2^{-1/h},

with :math:`\rho \le 1` the same for every age: an example seen :math:`h` examples
ago is half as likely to be in the buffer as the latest one. Aggarwal's
biased reservoir ties the rate to the capacity (:math:`\lambda = 1/N` per arrival of
the buffer's stream); here the capacity stays the user's :math:`N` and the rate
follows :math:`h` on the stream's clock, which no rule on the arrivals of one class
alone can give when the classes' rates are unknown. So each example gets a lifetime
(survival :math:`\gamma` per example of the stream, geometric: :math:`P(L > a) =
\gamma^a`, drawn when it arrives), and the buffer is a uniform random sample of at
most :math:`N` of the class's examples still alive. The uniform sample of a set with
insertions and deletions is kept by random pairing (Gemulla, Lehner and Haas, *A
dip in the reservoir*, VLDB 2006), with :math:`M` the examples alive (stored or
not) and :math:`c_1, c_2` the deaths not yet compensated among the stored examples
and among the others:

1. every example of the stream (either class) first lets the stored examples whose
   lifetime ends leave (each frees its slot: :math:`c_1 \mathrel{+}= 1`) and
   :math:`k \sim \mathrm{Binomial}(m, 1 - \gamma)` of the :math:`m` alive outside
   the buffer die (:math:`c_2 \mathrel{+}= k`);
2. an arrival, when :math:`c_1 + c_2 = 0`, is appended while the buffer has room,
   else replaces a uniform slot with probability :math:`N / (M + 1)` (Algorithm R
   on the alive set; the evicted example, or the arrival, stays alive outside);
   when :math:`c_1 + c_2 > 0` it takes a free slot with probability
   :math:`c_1 / (c_1 + c_2)` (then :math:`c_1 \mathrel{-}= 1`, else
   :math:`c_2 \mathrel{-}= 1` and it stays alive outside).

Deaths do not depend on whether an example is stored, so the buffer stays a uniform
sample of the alive set and :math:`\rho = E[|B| / M]`, at most
:math:`\min(1, N/M)` (the buffer runs below :math:`N` while deaths are pending):
with :math:`M \approx \pi / (1 - \gamma) \approx 1.44\,\pi h` alive examples of a
class of share :math:`\pi`, the buffer holds about :math:`\min(N, M)` of them. A
buffer larger than :math:`M` is therefore not full: no rule can keep more examples of
a class under this law (retention :math:`\le 1` at age 0). The lifetimes of the
stored examples are kept (``expiry_``); those of the examples outside the buffer are
not, as geometric lifetimes have no memory: the binomial deaths of step 1 are
drawn by inversion of one uniform.

Draws: four uniforms per example of the stream whatever its class (the deaths outside
each of the two class buffers, the lifetime and the admission of the arrival), so the
result does not depend on how the stream is cut into chunks. An unbounded buffer
(``capacity=None``) stores every alive example (memory :math:`\approx 1.44\,\pi h`
rows on average, no longer growing with the stream; its arrays have the rows its size
alone sets, :meth:`BiasedReservoir.settle`). Two biased reservoirs do not
merge (a uniform sample of the union of two alive sets, with the pending deletions of
random pairing, is not made from the two samples alone).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ._chunks import csr_arrays
from ._kernels import REASSOC, Rows, col, jit, n_rows, row, sparse_axpy

__all__ = ["BiasedReservoir", "Reservoir", "biased_offer", "biased_tick", "reservoir_offer"]

#: Layout of :attr:`BiasedReservoir.forget_`: the stream clock, the examples alive
#: outside the buffer, and random pairing's pending deletions c1 (stored) and c2 (not).
_CLOCK, _OUTSIDE, _C1, _C2 = 0, 1, 2, 3
#: Longest lifetime drawn (examples): far beyond any stream, and no int64 overflow.
_MAX_LIFE = 1 << 62


@jit(fastmath=REASSOC)
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


@jit(fastmath=REASSOC)
def _store(items, sq_norms, slot, idx, val):
    """Write the example into ``slot`` with its squared norm."""
    stored = items[slot]
    stored[:] = 0.0
    sparse_axpy(stored, 1.0, idx, val)
    sq = 0.0
    for a in range(val.shape[0]):
        v = stored[col(idx, a)]
        sq += v * v
    sq_norms[slot] = sq


@jit(fastmath=REASSOC)
def _binomial(n, p, v):
    """Binomial(n, p) by inversion of the uniform ``v`` in [0, 1)."""
    if n <= 0 or p <= 0.0:
        return 0
    q = 1.0 - p
    if q <= 0.0:
        return n
    pk = math.exp(n * math.log(q))  # P(0); ~exp(-expected deaths), never tiny here
    cdf = pk
    k = 0
    ratio = p / q
    while v >= cdf and k < n:
        pk *= (n - k) / (k + 1.0) * ratio
        k += 1
        cdf += pk
    return k


@jit(fastmath=REASSOC)
def biased_tick(items, sq_norms, counts, expiry, forget, gamma, v):
    """One example of the stream passes (module docstring): the clock advances, stored
    examples whose lifetime ends leave (the last stored row takes the freed slot; c1
    counts them), and Binomial(m, 1 - gamma) of the m alive outside the buffer die
    (from the uniform ``v``; c2 counts them)."""
    clock = forget[_CLOCK] + 1
    forget[_CLOCK] = clock
    size = counts[0]
    s = 0
    while s < size:
        if expiry[s] > clock:
            s += 1
            continue
        last = size - 1
        if s != last:
            for j in range(items.shape[1]):  # (a slice assignment may copy: allocates)
                items[s, j] = items[last, j]
            sq_norms[s] = sq_norms[last]
            expiry[s] = expiry[last]
        items[last, :] = 0.0
        sq_norms[last] = 0.0
        expiry[last] = 0
        size -= 1
        forget[_C1] += 1
    counts[0] = size
    k = _binomial(forget[_OUTSIDE], 1.0 - gamma, v)
    forget[_OUTSIDE] -= k
    forget[_C2] += k


@jit(fastmath=REASSOC)
def biased_offer(items, sq_norms, counts, capacity, expiry, forget, gamma, idx, val, u_life, u):
    """Offer an arrival to a biased reservoir (random pairing on the alive examples,
    module docstring); return the slot written, or -1. ``u_life`` draws its lifetime,
    ``u`` its admission (and slot)."""
    counts[1] += 1
    size = counts[0]
    pending = forget[_C1] + forget[_C2]
    slot = -1
    if pending == 0:
        if capacity < 0 or size < capacity:
            slot = size
            counts[0] = size + 1
        else:  # Algorithm R on the alive set: the evicted one (or x) lives on outside
            j = np.int64(u * (size + forget[_OUTSIDE] + 1))
            if j < capacity:
                slot = j
            forget[_OUTSIDE] += 1
    elif u * pending < forget[_C1]:  # fill a slot a stored example left
        forget[_C1] -= 1
        slot = size
        counts[0] = size + 1
    else:
        forget[_C2] -= 1
        forget[_OUTSIDE] += 1
    if slot >= 0:
        _store(items, sq_norms, slot, idx, val)
        life = _MAX_LIFE
        if gamma < 1.0:
            steps = math.log1p(-u_life) / math.log(gamma)  # >= 0; P(life > a) = gamma^a
            if steps < _MAX_LIFE:
                life = 1 + np.int64(steps)
        expiry[slot] = forget[_CLOCK] + life
    return slot


@jit
def _offer_biased_rows(items, sq_norms, counts, capacity, expiry, forget, gamma, rows, uniforms):
    for r in range(n_rows(rows)):
        idx, val, _ = row(rows, r)
        biased_tick(items, sq_norms, counts, expiry, forget, gamma, uniforms[r, 0])
        biased_offer(
            items,
            sq_norms,
            counts,
            capacity,
            expiry,
            forget,
            gamma,
            idx,
            val,
            uniforms[r, 1],
            uniforms[r, 2],
        )


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
    _growable_state: tuple[str, ...] = ("items_", "sq_norms_")

    #: Arrays of one value per stored row besides the rows (sq_norms_; expiry_ too).
    _ROW_ARRAYS: int = 1

    def __init__(self, n_features: int, capacity: int | None):
        if capacity is not None and capacity < 1:
            raise ValueError(f"capacity must be a positive int or None, got {capacity}")
        self.n_features = int(n_features)
        self.capacity = None if capacity is None else int(capacity)
        initial = self.capacity if self.capacity is not None else 64
        from ._config import check_budget  # before allocating: capacity is the user's

        check_budget(
            8 * initial * (self.n_features + self._ROW_ARRAYS),
            f"{type(self).__name__}(n_features={self.n_features}, capacity={self.capacity})",
        )
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
            self._resize(max(need, 2 * self.items_.shape[0]))

    def settle(self) -> None:
        """Give an unbounded buffer the rows its size alone sets (the least 64 2^k that
        hold it), so that its arrays never depend on how the stream was cut into
        chunks (:meth:`reserve` makes room for a whole chunk at once)."""
        if self.capacity is None:
            rows = 64
            while rows < self.size:
                rows *= 2
            if rows != self.items_.shape[0]:
                self._resize(rows)

    def _resize(self, rows: int) -> None:
        """Reallocate to ``rows`` rows (at least ``size``), keeping the stored ones."""
        size = self.size  # the rows after it are zeros
        items, norms = np.zeros((rows, self.n_features)), np.zeros(rows)
        items[:size], norms[:size] = self.buffer, self.sq_norms_[:size]
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

    def _reserved_rows(self, X: ArrayLike) -> tuple:
        """The CSR arrays of the rows of ``X`` and their number, checked against the
        width, with room reserved for them (what both rules of offering share)."""
        indptr, indices, data, d = csr_arrays(X, finite=True)
        if d != self.n_features:
            raise ValueError(f"Reservoir holds {self.n_features} features, got {d}")
        n = indptr.shape[0] - 1
        self.reserve(n)
        return indptr, indices, data, n

    def offer(self, X: ArrayLike, rng: np.random.Generator) -> Reservoir:
        """Offer the rows of ``X`` in order, one uniform draw each; returns self."""
        indptr, indices, data, n = self._reserved_rows(X)
        _offer_rows(
            self.items_,
            self.sq_norms_,
            self.counts_,
            self.capacity_code,
            Rows(indptr, indices, data, np.zeros(n)),
            rng.random(n),
        )
        self.settle()
        return self


class BiasedReservoir(Reservoir):
    r"""A reservoir biased toward recent examples: retention :math:`\rho\,2^{-a/h}`.

    At most ``capacity`` examples, a uniform sample of the examples still alive, each
    living a geometric number of examples of the stream (survival
    :math:`\gamma = 2^{-1/h}` per example); the module docstring gives the rule and
    the law. The stream's clock advances with :meth:`tick` (every example of the
    stream, whatever its class); :meth:`offer` ticks once per row and offers it.

    Parameters
    ----------
    n_features : int
        Dimension of the examples.
    capacity : int or None
        Maximum number of stored examples N; None stores every alive example.
    half_life : float
        :math:`h`, in examples of the stream (> 0).

    Attributes
    ----------
    items_, sq_norms_, counts_
        As for :class:`Reservoir` (``counts_[1]``: the examples offered).
    expiry_ : ndarray of shape (allocated,), int64
        The clock value at which each stored example dies.
    forget_ : ndarray of shape (4,), int64
        ``[clock, alive outside the buffer, c1, c2]`` (random pairing's pending
        deletions of stored and of unstored examples).

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.reservoir import BiasedReservoir
    >>> r = BiasedReservoir(n_features=1, capacity=50, half_life=20.0)
    >>> r = r.offer(np.arange(2000.0).reshape(-1, 1), np.random.default_rng(0))
    >>> bool(np.median(1999 - r.buffer[:, 0]) < 60)  # ages of about one half-life
    True
    """

    _growable_state = ("items_", "sq_norms_", "expiry_")

    _ROW_ARRAYS = 2

    def __init__(self, n_features: int, capacity: int | None, half_life: float):
        super().__init__(n_features, capacity)
        if isinstance(half_life, (bool, np.bool_)) or not (
            isinstance(half_life, (int, float, np.integer, np.floating))
            and math.isfinite(half_life)
            and half_life > 0
        ):
            raise ValueError(f"half_life must be a finite number > 0, got {half_life!r}")
        self.half_life = float(half_life)
        self.expiry_ = np.zeros(self.items_.shape[0], dtype=np.int64)
        self.forget_ = np.zeros(4, dtype=np.int64)

    @property
    def gamma(self) -> float:
        """Survival per example of the stream, :math:`2^{-1/h}`."""
        return float(2.0 ** (-1.0 / self.half_life))

    @property
    def n_alive(self) -> int:
        """Examples alive (stored or not): the size of the set the buffer samples."""
        return self.size + int(self.forget_[_OUTSIDE])

    def kernel_arrays(self) -> tuple:
        """``(items_, sq_norms_, counts_, capacity, expiry_, forget_)`` as kernels read
        them."""
        return (
            self.items_,
            self.sq_norms_,
            self.counts_,
            self.capacity_code,
            self.expiry_,
            self.forget_,
        )

    def _resize(self, rows: int) -> None:
        size = self.size
        super()._resize(rows)
        expiry = np.zeros(rows, dtype=np.int64)
        expiry[:size] = self.expiry_[:size]
        self.expiry_ = expiry

    def tick(self, rng: np.random.Generator) -> BiasedReservoir:
        """Let one example of another stream (the other class) pass; returns self."""
        biased_tick(
            self.items_,
            self.sq_norms_,
            self.counts_,
            self.expiry_,
            self.forget_,
            self.gamma,
            float(rng.random()),
        )
        return self

    def offer(self, X: ArrayLike, rng: np.random.Generator) -> BiasedReservoir:
        """Tick and offer the rows of ``X`` in order, three uniform draws each; returns
        self."""
        indptr, indices, data, n = self._reserved_rows(X)
        _offer_biased_rows(
            *self.kernel_arrays(),
            self.gamma,
            Rows(indptr, indices, data, np.zeros(n)),
            rng.random((n, 3)),
        )
        self.settle()
        return self

    def merge(self, other: Reservoir, rng: np.random.Generator) -> Reservoir:
        """Not defined (module docstring): raises NotImplementedError."""
        raise NotImplementedError(
            "biased reservoirs (half_life set) do not merge: a uniform sample of the union "
            "of two alive sets is not made from the two samples alone"
        )

    def _check_state(self) -> None:
        """A loaded buffer must be consistent: the settings, the shapes, the counters
        within their bounds (random pairing keeps size + c1 <= capacity), the norms
        those of the stored rows, every stored example alive (its expiry after the
        clock) and zeros after the stored rows."""
        h = self.half_life
        if not (isinstance(h, float) and math.isfinite(h) and h > 0):
            raise ValueError(f"half_life = {h!r} is not a finite float > 0")
        if isinstance(self.n_features, bool) or not isinstance(self.n_features, int):
            raise ValueError(f"n_features = {self.n_features!r} is not an integer")
        capacity = self.capacity
        if capacity is not None and (
            isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1
        ):
            raise ValueError(f"capacity = {capacity!r} is not a positive integer or None")
        allocated = self.items_.shape[0]
        if (
            self.items_.shape[1:] != (self.n_features,)
            or self.sq_norms_.shape != (allocated,)
            or self.expiry_.shape != (allocated,)
            or self.forget_.shape != (4,)
        ):
            raise ValueError(
                f"items_ {self.items_.shape}, sq_norms_ {self.sq_norms_.shape}, expiry_ "
                f"{self.expiry_.shape} and forget_ {self.forget_.shape} do not hold rows of "
                f"{self.n_features} features"
            )
        if capacity is not None and allocated != capacity:
            raise ValueError(f"items_ has {allocated} rows for a capacity of {capacity}")
        size, seen = int(self.counts_[0]), int(self.counts_[1])
        clock, outside, c1, c2 = (int(v) for v in self.forget_)
        room = allocated if capacity is None else capacity
        if (
            not 0 <= size <= min(allocated, seen)
            or min(outside, c1, c2) < 0
            or (capacity is not None and size + c1 > capacity)
            or size + outside > seen
            or seen > clock
        ):
            raise ValueError(
                f"counts_ {self.counts_.tolist()} and forget_ {self.forget_.tolist()} do not "
                f"fit a biased reservoir of {room} rows"
            )
        if np.any(self.expiry_[:size] <= clock) or np.any(self.expiry_[size:]):
            raise ValueError("expiry_ holds a stored example already dead, or junk after them")
        if np.any(self.items_[size:]) or np.any(self.sq_norms_[size:]):
            raise ValueError("items_ or sq_norms_ hold values after the stored rows")
        norms = np.einsum("ij,ij->i", self.buffer, self.buffer)
        if not np.allclose(self.sq_norms_[:size], norms, rtol=1e-12, atol=0.0):
            raise ValueError("sq_norms_ are not the squared norms of the stored rows")
