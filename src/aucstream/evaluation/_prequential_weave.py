r"""Delayed labels in one call: the scored rows and the released labels woven together.

With a constant delay :math:`k \ge 1` and every label kept, :func:`prequential
<aucstream.evaluation.prequential>` scores example :math:`p` and then learns example
:math:`p - k`, one after the other, down the stream: row by row, a
``decision_function`` (or ``decision_one``) and a ``partial_fit`` (or
``learn_one``) per example, many times the cost of its ``test_then_train`` pass
(``docs/results/prequential.md``).

A learner that takes example weights and for which an example of weight 0 changes
nothing but the count ``n_samples_seen_`` (``_tags.zero_weight_inert``, held by
:func:`aucstream.checks.check_zero_weight_rows_change_nothing`) gives the same
scores in one ``test_then_train`` call over the rows woven in that order: example
:math:`p` with weight 0 (its prequential score is the model's before it, and it
learns nothing), then example :math:`p - k` with weight 1. Its decision scores and
probabilities come as at delay 0: written by its kernel (SOLAM's) or replayed from
the calibration with the same weights (:func:`aucstream._calibration.replay`);
afterwards ``n_samples_seen_`` is set to the examples learnt. :meth:`Weave.piece`
does this for each piece of a chunk between checkpoints, gathering the learnt rows
from the chunks held (a delay longer than a chunk reaches back several). The chunks
before the model is fitted (the first label) go row by row.

The pending labels are then the examples from ``n_learnt`` to ``n_seen`` in order,
not entries of the release heap; :meth:`Weave.unweave` writes them back there (the
stream's end releases them, and a piece the learner refuses goes row by row, where
the error names its example).
"""

from __future__ import annotations

import heapq

import numpy as np
import scipy.sparse as sp

from .. import _calibration
from .._base import BaseStreamingAUC

__all__ = ["Weave", "weaves"]


def weaves(model, delay, label_probability, plain: bool) -> bool:
    """Whether a run of ``model`` with these settings goes through :class:`Weave`: a
    constant delay of at least 1, every label kept, a plain aucstream learner (its
    calibration replayed: ``plain``) that takes example weights."""
    tags = getattr(model, "_tags", None)
    return (
        plain
        and isinstance(model, BaseStreamingAUC)
        and not callable(delay)
        and int(delay) >= 1
        and label_probability is None
        and bool(getattr(tags, "sample_weight", False))
        and bool(getattr(tags, "zero_weight_inert", False))
    )


def _kind(X) -> str | None:
    """``"dense"`` (a 2-D ndarray), ``"csr"``, or None (not woven)."""
    if type(X) is np.ndarray and X.ndim == 2:
        return "dense"
    if sp.issparse(X) and X.format == "csr":
        return "csr"
    return None


class Weave:
    """The woven path of one :func:`prequential` run (module docstring); ``run`` is
    its ``_Evaluation``."""

    def __init__(self, run) -> None:
        self.run = run
        self.delay = int(run.delay)
        #: whether the pending labels are the examples n_learnt..n_seen (True), or
        #: entries of the release heap (False: before the model is fitted, after a
        #: refusal)
        self.on = False

    def ready(self) -> bool:
        """Whether the next chunk can be woven; the first time, the heap's entries
        moved out (they are the examples n_learnt..n_seen)."""
        run = self.run
        if self.on:
            return True
        if len(run.pending) != run.n_seen - run.n_learnt or (run.fitted and run.first_fit):
            return False
        run.pending.clear()
        self.on = True
        return True

    def unweave(self, end: int) -> None:
        """Write the labels of examples n_learnt..end (those seen, and the current
        chunk's) back as entries of the release heap, and weave no more."""
        if not self.on:
            return
        run = self.run
        for chunk_id, held in run.chunks.items():
            X, start = held[0], held[4]
            lo, hi = max(start, run.n_learnt), min(start + X.shape[0], end)
            held[2] = max(0, hi - lo)  # (its rows still to learn)
            for p in range(lo, hi):
                heapq.heappush(run.pending, (p + self.delay, p, chunk_id, p - start))
        self.on = False

    def _learnt_rows(self, lo: int, hi: int) -> tuple[list, list]:
        """The rows (``(chunk, first, stop)``) and labels of examples lo..hi, from the
        chunks held."""
        parts_X, parts_y = [], []
        for held in self.run.chunks.values():
            X, y, start = held[0], held[1], held[4]
            a, b = max(lo, start), min(hi, start + X.shape[0])
            if a < b:
                parts_X.append((X, a - start, b - start))
                parts_y.append(y[a - start : b - start])
        return parts_X, parts_y

    def piece(self, X, y: np.ndarray, positive: np.ndarray, cur: int, stop: int) -> bool:
        """Score rows ``cur:stop`` of the current chunk (example ``n_seen`` on) and
        learn the labels released meanwhile, in one weighted ``test_then_train``;
        count the scores. False, nothing changed, when the rows cannot be woven or
        the learner refuses them (then :meth:`unweave` has been called)."""
        run, k = self.run, self.delay
        first, m = run.n_seen, stop - cur
        lo, hi = max(0, first - k), max(0, first + m - k)
        n_learn, a = hi - lo, m - (hi - lo)  # (a: the rows scored before any label)
        parts_X, parts_y = self._learnt_rows(lo, hi)
        parts = [(X, cur, stop), *parts_X]
        kind = _kind(X)
        if (
            run.n_learnt != lo
            or kind is None
            or any(_kind(p[0]) != kind for p in parts_X)
            or sum(p[2] - p[1] for p in parts_X) != n_learn
        ):  # (chunks of other kinds, or mixed: row by row)
            self.unweave(first + (y.shape[0] - cur))
            return False
        order = np.empty(m + n_learn, dtype=np.intp)  # woven row -> stacked row
        order[:a] = np.arange(a)
        order[a::2] = np.arange(a, m)
        order[a + 1 :: 2] = m + np.arange(n_learn)
        woven_X = (
            np.concatenate([P[a:b] for P, a, b in parts])[order]
            if kind == "dense"
            else _csr_rows(parts, order)
        )
        woven_y = np.concatenate([y[cur:stop], *parts_y])[order]
        weights = np.zeros(m + n_learn)
        weights[a + 1 :: 2] = 1.0
        fresh = run.first_fit  # (then the rows scored before the first label: untrained)
        if n_learn:
            written = self._call(woven_X, woven_y, weights, fresh)
            if written is None:  # (refused, unchanged) row by row
                self.unweave(first + (y.shape[0] - cur))
                return False
            at = np.concatenate([np.arange(a), a + 2 * np.arange(n_learn)])
            decision, proba = written[0, at], written[1, at]
            run.first_fit, run.fitted = False, True
        else:  # (nothing released yet: nothing to learn, nothing learnt)
            decision, proba = np.zeros(m), np.empty(m)
        if fresh:  # the untrained model's score, as prequential gives it
            decision[: a + 1], proba[: a + 1] = 0.0, 0.5
        run.count(
            positive[cur:stop],
            decision,
            proba if "proba" in run.needs else None,
            decision > 0 if run.predicts else None,
        )
        run.n_seen, run.n_learnt = first + m, run.n_learnt + n_learn
        self._release(hi)
        return True

    def _call(self, X, y, weights, fresh: bool) -> np.ndarray | None:
        """The ``(2, n)`` decision scores and probabilities of the woven rows, before
        each was learnt, after one ``test_then_train`` of them (None, the model
        unchanged, when the learner refuses them)."""
        run = self.run
        model = run.model
        classes = np.asarray(run.classes) if fresh else None
        state = _calibration.new_state() if fresh else model.calibration_.copy()
        seen = getattr(model, "n_samples_seen_", 0)
        written = np.empty((2, y.shape[0]))
        with run.request.ask(model, written) as taken:
            try:
                raw = model.test_then_train(X, y, classes, weights)
            except Exception:  # (a refused call changes nothing)
                return None
        if not taken[0]:
            y_pm = np.where(y == run.classes[1], 1.0, -1.0)
            raw = np.asarray(raw, dtype=np.float64)
            _calibration.replay(state, raw, y_pm, written[0], written[1], weights)
        model.n_samples_seen_ = seen + int(np.count_nonzero(weights))  # (weight 0: nothing)
        return written

    def _release(self, hi: int) -> None:
        """Let go of the chunks whose examples are all learnt (up to ``hi``)."""
        chunks = self.run.chunks
        for chunk_id in [c for c, held in chunks.items() if held[4] + held[0].shape[0] <= hi]:
            del chunks[chunk_id]


def _csr_rows(parts: list, order: np.ndarray) -> sp.csr_matrix:
    """Row ``order[i]`` of the row ranges ``parts`` (``(CSR matrix, first, stop)``)
    one after another, for each ``i``: one gather of their values (scipy's slices,
    stack and row indexing made and checked a matrix per step: a quarter of a woven
    pass on a9a)."""
    ends = [P.indptr[a : b + 1] for P, a, b in parts]
    lengths = np.concatenate([np.diff(e) for e in ends])[order]
    firsts, total = [], 0
    for e in ends:  # (where each row's values start among all the parts' values)
        firsts.append(e[:-1] - e[0] + total)
        total += int(e[-1] - e[0])
    indptr = np.zeros(order.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    at = np.repeat(np.concatenate(firsts)[order] - indptr[:-1], lengths) + np.arange(indptr[-1])
    data = np.concatenate([P.data[e[0] : e[-1]] for (P, _, _), e in zip(parts, ends)])[at]
    indices = np.concatenate([P.indices[e[0] : e[-1]] for (P, _, _), e in zip(parts, ends)])
    shape = (order.shape[0], parts[0][0].shape[1])
    return sp.csr_matrix((data, indices[at], indptr), shape=shape)
