r"""OAM: online AUC maximization with reservoir buffers.

Zhao, Hoi, Jin and Yang, *Online AUC Maximization* (ICML 2011, "Z11").

The objective (Z11 Eq. 1) is the pairwise hinge loss

.. math::

    \frac12\|w\|^2 + C \sum_{i\in+,\,j\in-} \max\big(0, 1 - w^\top(x_i - x_j)\big).

Each class keeps a reservoir buffer :math:`B_\pm` of capacity :math:`N_\pm`
(:class:`aucstream.reservoir.Reservoir`, Z11 Alg. 2). For an example
:math:`(x_t, y_t)` (Z11 Alg. 1):

1. :math:`C_t = C \max(1, n_{\bar y} / N_{\bar y})`, where :math:`n_{\bar y}` is the
   number of opposite-class examples seen so far;
2. :math:`x_t` is offered to its own class's buffer;
3. w is updated against the opposite buffer, which step 2 leaves unchanged.

``update="seq"`` (Z11 Alg. 3) visits the buffered examples in storage order and
applies the closed-form solution of problem (6) (Prop. 1) to each pair in turn:
with :math:`d = x_t - x` and :math:`\ell = \max(0, 1 - y_t w'^\top d)`,

.. math::

    w' \leftarrow w' + \min\Big(\frac{C_t}{2}, \frac{\ell}{\|d\|^2}\Big) y_t d .

``update="gra"`` (Z11 Alg. 4) takes one gradient step on the whole buffer with
the margins at the w of the start of the step:
:math:`w' \leftarrow w' + \frac{C_t}{2} y_t (x_t - x)` for every buffered x with
:math:`y_t w^\top(x_t - x) \le 1`.

``buffer_size=None`` gives OAM_inf: every example is stored and :math:`C_t = C`
(the ratio tends to 0). Z11 does not state OAM_inf's update; we use the one chosen by
``update``. Its memory grows with the stream by design; the bounded variants use
O((N_+ + N_-) d).

Dense rows are read in place; the dot products with the buffered rows are summed in
any order (``fastmath`` reassociation, :data:`aucstream._kernels.REASSOC`): a change
by rounding only. Each example's score :math:`w^\top x_t` is written before it is
learnt (``test_then_train``). :meth:`OAM._merge` averages w by the examples seen and
merges each class's buffers into a uniform sample of both streams
(:meth:`aucstream.reservoir.Reservoir.merge`).

Forgetting (``half_life``)
--------------------------
Z11's reservoirs keep a uniform sample of each class's whole stream. With a half-life
of :math:`h` examples (:data:`aucstream._params.FORGETTING`: examples of the stream,
both classes) each buffer is a :class:`aucstream.reservoir.BiasedReservoir` of the same
capacity :math:`N`: a uniform sample of at most :math:`N` of the class's examples
still "alive", each living a geometric number of examples of the stream, so that an
example of age :math:`a` is stored with probability

.. math::

    P(\text{stored} \mid a) = \rho_\pm\, 2^{-a/h}, \qquad
    \rho_\pm = E\big[|B_\pm| / M_\pm\big] \le \min(1, N / M_\pm),

with :math:`M_\pm` the examples of the class alive (about :math:`1.44\,\pi_\pm h` for a
class of share :math:`\pi_\pm`): an example seen :math:`h` examples ago is half as
likely to be in the buffer as the latest. The rule (after Aggarwal's biased reservoir,
VLDB 2006, with random pairing, Gemulla et al., VLDB 2006, for the deaths) is in
:mod:`aucstream.reservoir`. A buffer holds about :math:`\min(N, M_\pm)` examples: it is not
full when the class has fewer than :math:`N` examples alive (a rare class with a short
half-life). :math:`C_t` counts the opposite class's alive examples instead of all of
them (:math:`C_t = C\max(1, M_{\bar y}/N_{\bar y})`: each buffered example stands for
:math:`M/N` alive ones, Z11's reason for the ratio). ``buffer_size=None`` stores every
alive example, so OAM_inf's memory stays near :math:`1.44 h` rows. Each example
draws four uniforms (the two buffers' deaths, its lifetime and its admission)
whatever its class, so chunking never changes the model. Biased buffers do not merge
(:meth:`OAM.merge` refuses). ``half_life=None`` is Z11's Algorithm R exactly.

Example weights (``sample_weight``, a library addition)
-------------------------------------------------------
Z11 has none. An example of weight :math:`\omega` weighs its pairs with the buffered
examples :math:`\omega` times in Eq. 1, so its steps take :math:`\omega C_t` for
:math:`C_t`: ``seq`` steps :math:`\min(\omega C_t / 2, \ell / \|d\|^2)` (Prop. 1 with
that weight) and ``gra`` :math:`\omega C_t / 2`. The reservoirs sample examples, not
weights: an example of positive weight is offered to its buffer once and counts once in
:math:`C_t`'s :math:`n_{\bar y}` (an integer weight is not the example repeated, which
would be offered :math:`\omega` times and stepped :math:`\omega` times; a weighted
reservoir, such as Efraimidis and Spirakis' A-Res, would need a key kept with each
buffered example, which the buffer's saved form does not hold). An example of weight 0
is scored and changes nothing: no step, no offer, no draw, no tick of the biased
buffers. With all weights 1 this is Alg. 1 bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import BaseStreamingAUC
from ._chunks import Chunk
from ._kernels import (
    REASSOC,
    bound_call,
    jit,
    mean_by_count,
    n_rows,
    row,
    rows_of,
    sparse_axpy,
    sparse_dot,
)
from ._params import FORGETTING, PASS_ORDER, StrOptions, decay_per_example, positive, positive_int
from ._runtime import LearnerTags, StateSpec
from ._typing import RandomState
from .reservoir import BiasedReservoir, Reservoir, biased_offer, biased_tick, reservoir_offer

__all__ = ["OAM"]


@jit(fastmath=REASSOC)
def _oam_seq(w, idx, val, x_sq, y, items, sq_norms, size, c_half):
    """Z11 Alg. 3: sequential closed-form steps against each buffered example."""
    for b in range(size):
        xb = items[b]
        loss = 1.0 - y * (sparse_dot(w, idx, val) - sparse_dot(w, None, xb))
        if loss <= 0.0:
            continue
        dist_sq = x_sq - 2.0 * sparse_dot(xb, idx, val) + sq_norms[b]
        if not dist_sq > 1e-12 * (x_sq + sq_norms[b]):
            continue  # x_t equals the buffered example: the pair has no direction
        tau = min(c_half, loss / dist_sq) * y
        sparse_axpy(w, -tau, None, xb)
        sparse_axpy(w, tau, idx, val)


@jit(fastmath=REASSOC)
def _oam_gra(w, idx, val, y, items, size, c_half, violated):
    """Z11 Alg. 4: one gradient step on the buffer, margins at the starting w."""
    xw = sparse_dot(w, idx, val)
    n_violated = 0
    for b in range(size):
        violated[b] = y * (xw - sparse_dot(w, None, items[b])) <= 1.0
        n_violated += violated[b]
    step = c_half * y
    for b in range(size):
        if violated[b]:
            sparse_axpy(w, -step, None, items[b])
    sparse_axpy(w, step * n_violated, idx, val)


@jit(fastmath=REASSOC)
def _oam_chunk(w, buffers, rows, pre, uniforms, C, sequential, gamma, weights):
    """Z11 Alg. 1 over a chunk; ``buffers`` holds the negative and the positive
    reservoir, each as ``(items, sq_norms, counts, capacity, expiry, forget)``. With
    ``gamma < 1`` the reservoirs are biased (:class:`BiasedReservoir`): each example
    first ticks both (two uniforms), then is offered to its own (two more), and
    :math:`C_t` counts the alive examples of the opposite class; otherwise one uniform
    per example offers it to Algorithm R. ``weights`` (empty: all 1) scale the steps;
    an example of weight 0 is only scored, and the uniforms are those of the examples
    learnt, in order (module docstring, "Example weights")."""
    neg, pos = buffers
    violated = np.zeros(max(neg[0].shape[0], pos[0].shape[0]), dtype=np.bool_)
    _oam_rows(w, buffers, rows, pre, uniforms, C, sequential, gamma, weights, violated)


@jit(fastmath=REASSOC, borrowing=True)
def _oam_rows(w, buffers, rows, pre, uniforms, C, sequential, gamma, weights, violated):
    """:func:`_oam_chunk`'s loop, its scratch (``violated``) allocated: compiled without
    reference counts (the views of a row and of each buffered example counted theirs
    at every use)."""
    scores = pre.shape[0] == n_rows(rows)
    weighted = weights.shape[0] > 0
    neg, pos = buffers
    biased = gamma < 1.0
    u = 0
    for r in range(n_rows(rows)):
        idx, val, y = row(rows, r)
        if scores:
            pre[r] = sparse_dot(w, idx, val)
        weight = weights[r] if weighted else 1.0
        if weight == 0.0:
            continue
        own, opp = (pos, neg) if y > 0 else (neg, pos)
        opp_items, opp_norms, opp_counts, opp_cap = opp[0], opp[1], opp[2], opp[3]
        if biased:
            for b in (neg, pos):
                biased_tick(b[0], b[1], b[2], b[4], b[5], gamma, uniforms[u])
                u += 1
            n_opp = opp_counts[0] + opp[5][1]  # alive: stored and outside
        else:
            n_opp = opp_counts[1]
        c_t = C
        if opp_cap > 0:
            c_t = C * max(1.0, n_opp / opp_cap)
        if weighted:
            c_t *= weight
        if biased:
            biased_offer(
                own[0], own[1], own[2], own[3], own[4], own[5], gamma, idx, val,
                uniforms[u], uniforms[u + 1],
            )  # fmt: skip
            u += 2
        else:
            reservoir_offer(own[0], own[1], own[2], own[3], idx, val, uniforms[u])
            u += 1
        size = opp_counts[0]
        if size == 0:
            continue
        if sequential:
            x_sq = 0.0
            for a in range(val.shape[0]):
                x_sq += val[a] * val[a]
            _oam_seq(w, idx, val, x_sq, y, opp_items, opp_norms, size, 0.5 * c_t)
        else:
            _oam_gra(w, idx, val, y, opp_items, size, 0.5 * c_t, violated)


def _read_only(learner: OAM, y_pm: np.ndarray, chunk: Chunk | None = None) -> tuple:
    """The buffer of the class no example of the chunk belongs to, which the kernel
    (:func:`_oam_chunk`) only reads under Algorithm R with a bounded buffer: an
    example is offered to its own class's (``StateSpec.read_only``). Nothing with
    ``half_life`` (every example ticks both biased buffers) or unbounded buffers."""
    if learner.half_life is not None or learner.buffer_size is None:
        return ()
    return learner._other_class(y_pm, learner.buffers_)


def _state_nbytes(learner: OAM, n_features: int) -> int:
    """Two buffers of N rows (unbounded buffers start at 64 rows and grow; with
    half_life, to about 1.44 half_life rows), their lifetimes with half_life
    (``StateSpec.nbytes``)."""
    rows = learner.buffer_size if learner.buffer_size is not None else 64
    lifetimes = learner.half_life is not None
    return 8 * (2 * rows * (n_features + 1 + lifetimes) + n_features)


class OAM(BaseStreamingAUC):
    """Online AUC maximization (OAM) with reservoir-sampled class buffers.

    See the module docstring for the algorithm (Z11 Algs. 1-4). The cost per example
    is O(N d) for a buffer of N examples in d dimensions.

    Parameters
    ----------
    C : float, default=2**-12
        Weight of the hinge loss. Z11 §4.2 tunes it over 2^[-10:10] and the OPAUC
        papers over 2^[-12:10]. Because the effective weight C_t = C n/N grows with the
        number n of opposite-class examples seen, long streams want much smaller
        values: one pass over 80% of a9a (26k examples) is best near 2^-20 (test AUC
        0.888 against 0.808 at 2^-10), ijcnn1 near 2^-18 (0.926 against 0.857). Our
        ``param_grid`` therefore extends the papers' range down to 2^-20, and the
        default is 2^-12 (a library choice).
    buffer_size : int or None, default=100
        Capacity N_+ = N_- of each class's buffer (100 in Z11 §4.2 and the OPAUC and
        AdaOAM papers; 50 in the high-dimensional experiments). None gives OAM_inf.
    update : {"seq", "gra"}, default="seq"
        Sequential closed-form updates (Alg. 3) or one gradient step (Alg. 4).
    shuffle : bool, default=False
        Whether ``fit`` visits the examples in a random order.
    random_state : int, Generator or None, default=None
        Seed of the reservoir sampling (and the lifetimes) and the shuffle.
    half_life : float or None, default=None
        Forgetting: each class buffer keeps an example seen ``half_life`` examples ago
        half as often as the latest one (a biased reservoir of the same capacity;
        module docstring). None: Z11's uniform reservoirs exactly.

    Attributes
    ----------
    w_ : ndarray of shape (n_features,)
        Current weights.
    buffers_ : list of two Reservoir (BiasedReservoir with ``half_life``)
        Buffers of the negative and the positive class.
    classes_, n_samples_seen_, n_features_in_
        As for every aucstream learner.

    Examples
    --------
    >>> from aucstream import OAM
    >>> from aucstream.datasets import load_diabetes
    >>> data = load_diabetes()
    >>> model = OAM(C=2**-8, buffer_size=100, random_state=0).fit(data.X, data.y)
    >>> round(model.score(data.X, data.y), 2) > 0.8
    True
    """

    #: Z11's 2^[-10:10] extended down to 2^-20 (see ``C`` above).
    param_grid = {"C": [2.0**k for k in range(-20, 11)]}
    _tags = LearnerTags(dense_kernels=True, kernel_prequential=True, sample_weight=True)
    _state_spec = StateSpec(nbytes=_state_nbytes, read_only=_read_only)
    _parameter_constraints = {
        "C": [positive()],
        "buffer_size": [positive_int(), None],
        "update": [StrOptions({"seq", "gra"})],
        **FORGETTING,
        **PASS_ORDER,
    }

    def __init__(
        self,
        C: float = 2**-12,
        buffer_size: int | None = 100,
        update: str = "seq",
        shuffle: bool = False,
        random_state: RandomState = None,
        half_life: float | None = None,
    ):
        self.C = C
        self.buffer_size = buffer_size
        self.update = update
        self.shuffle = shuffle
        self.random_state = random_state
        self.half_life = half_life

    def _init_state(self, n_features: int) -> None:
        self.w_ = np.zeros(n_features)
        self.buffers_: list[Any] = [self._new_buffer(n_features), self._new_buffer(n_features)]

    def _new_buffer(self, n_features: int) -> Reservoir | BiasedReservoir:
        """A class buffer: Algorithm R, or biased to recent examples with half_life."""
        if self.half_life is None:
            return Reservoir(n_features, self.buffer_size)
        return BiasedReservoir(n_features, self.buffer_size, float(self.half_life))

    def _update(self, chunk: Chunk) -> None:
        neg, pos = self.buffers_
        n_pos = int(np.count_nonzero(chunk.y > 0))
        pos.reserve(n_pos)  # unbounded buffers grow (new arrays) before the call binds them
        neg.reserve(chunk.n_samples - n_pos)
        self._bind_update(chunk)(self)
        for buffer in self.buffers_:
            buffer.settle()  # unbounded: rows set by the size alone, whatever the chunks

    def _buffers(self) -> tuple:
        """The two reservoirs as the kernel reads them (negative, positive)."""
        if self.half_life is not None:
            return tuple(b.kernel_arrays() for b in self.buffers_)
        none = np.zeros(0, dtype=np.int64)  # Algorithm R keeps no lifetimes
        return tuple(
            (b.items_, b.sq_norms_, b.counts_, b.capacity_code, none, none) for b in self.buffers_
        )

    def _bind_update(self, chunk: Chunk, reuse: bool = False):
        """The kernel's call with its arguments made once, for bounded buffers (their
        arrays are allocated whole when made and written in place; the capacity is
        fixed when a reservoir is made); the chunk's uniform draws are made from
        ``_rng`` at each call, into a buffer of the chunk's length. Unbounded buffers
        (``buffer_size=None``) bind nothing for reuse: a buffer that grows replaces its
        arrays (see :meth:`BaseStreamingAUC._bind_update`); :meth:`_update` binds them
        after making room."""
        if reuse and any(b.capacity is None for b in self.buffers_):
            return None
        gamma = decay_per_example(self.half_life)
        per_row = 1 if gamma == 1.0 else 4
        uniforms = np.empty(chunk.n_samples * per_row)
        weights = chunk.sample_weight
        run = bound_call(
            _oam_chunk,
            self.w_,
            self._buffers(),
            rows_of(chunk),
            chunk.pre_scores,
            uniforms,
            float(self.C),
            self.update == "seq",
            gamma,
            weights,
            reuse=reuse,
        )

        def update(learner: OAM) -> None:
            # the draws of the examples learnt (weight 0: none)
            n = (
                uniforms.shape[0]
                if not weights.shape[0]
                else per_row * int(np.count_nonzero(weights))
            )
            learner._rng.random(out=uniforms[:n])
            run()

        return update

    def _coef(self) -> np.ndarray:
        return self.w_

    def _check_state(self) -> None:
        for label, buffer in zip(("negative", "positive"), self.buffers_):
            h = None if type(buffer) is Reservoir else buffer.half_life
            if h != (None if self.half_life is None else float(self.half_life)):
                raise ValueError(f"the {label} buffer has half_life {h}, not {self.half_life}")
            if buffer.n_features != self.n_features_in_ or buffer.capacity != self.buffer_size:
                raise ValueError(
                    f"the {label} buffer holds {buffer.n_features} features and capacity "
                    f"{buffer.capacity}, not {self.n_features_in_} and {self.buffer_size}"
                )
        seen = sum(b.n_seen for b in self.buffers_)
        if seen > self.n_samples_seen_:
            raise ValueError(
                f"the buffers were offered {seen} examples, more than the "
                f"{self.n_samples_seen_} seen"
            )

    def _merge(self, other: OAM) -> None:
        """w averages by examples seen; each class's buffers merge into a uniform sample
        of the union of both streams of that class (:meth:`Reservoir.merge`). Biased
        buffers (``half_life`` set) do not merge: NotImplementedError, nothing
        changed."""
        if self.half_life is not None:
            self.buffers_[0].merge(other.buffers_[0], self._rng)  # raises
        self.w_ = mean_by_count(self.w_, self.n_samples_seen_, other.w_, other.n_samples_seen_)
        for mine, theirs in zip(self.buffers_, other.buffers_):
            mine.merge(theirs, self._rng)
