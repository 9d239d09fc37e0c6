r"""Delayed labels in one call: the scored rows and the released labels woven together.

With a delay, :func:`prequential <aucstream.evaluation.prequential>` scores each
example and then learns the labels its scoring releases, one after the other, down
the stream: row by row, a ``decision_function`` (or ``decision_one``) and a
``partial_fit`` (or ``learn_one``) per example, many times the cost of the
learner's ``test_then_train`` pass (``docs/results/prequential.md``).

A learner that takes example weights and for which an example of weight 0 changes
nothing but the count ``n_samples_seen_`` (``_tags.zero_weight_inert``, held by
:func:`aucstream.checks.check_zero_weight_rows_change_nothing`; a
:class:`~aucstream.StreamPipeline` over one behind the online scaler too, whose
scaler learns only the rows of non-zero weight) gives the same
scores in one ``test_then_train`` call over the rows woven in that order: each
example with weight 0 (its prequential score is the model's before it, and it learns
nothing), then, with weight 1, the examples whose labels its scoring releases. Its
decision scores and probabilities come as at delay 0: written by its kernel (SOLAM's)
or replayed from the calibration with the same weights
(:func:`aucstream._calibration.replay`); afterwards ``n_samples_seen_`` is set to the
examples learnt (the pipeline's and its learner's). :meth:`Weave.piece` does this for
each piece of a chunk between checkpoints, gathering the learnt rows from the chunks
held (a delay longer than a chunk reaches back several); the rows scored before the
first label get the untrained model's score, as row by row.

An :class:`~aucstream.OnePassSearch` (or a pipeline over one, the default
:class:`~aucstream.StreamPipeline`) is woven the same way: its race neither learns nor
counts a row of weight 0 (each candidate scores it in the same call, its examples of
weight 0 inert), and its decision before each woven row is recorded as it learns, as
at delay 0 (:mod:`aucstream._search_scores`: before a row of weight 0, the state
before the next row learnt). A piece it cannot record exactly (a candidate that
diverges inside it, a race by the partial AUC) goes row by row.

With a constant delay :math:`k` and every label kept, the labels still to learn are
the examples from ``n_learnt`` to ``n_seen``, example :math:`p` released once example
:math:`p + k` is scored: no heap. Otherwise (a delay per example, dropped labels) each
piece takes from the release heap the entries its rows release, in the heap's order.
A piece that cannot be woven (chunks of two kinds, the learner refusing the woven
call) goes row by row, where an error names its example: the heap then holds the
labels still to learn again (:meth:`Weave.unweave`).
"""

from __future__ import annotations

import heapq

import numpy as np
import scipy.sparse as sp

from .. import _calibration, _search_scores
from .._base import BaseStreamingAUC

__all__ = ["Weave", "weaves"]

#: The fewest rows of a chunk, and of the span between two checkpoints, that are
#: woven: a woven call is a validated ``test_then_train`` with weights, whose fixed
#: cost is that of tens of rows learnt alone, so a piece of fewer rows goes row by
#: row (measured in ``docs/results/prequential.md``, "Small chunks go row by row").
WEAVE_FROM = 64


def weaves(model, delay, run) -> bool:
    """Whether a run of ``model`` with this delay goes through :class:`Weave`: a delay
    (a callable, or a constant of at least 1), an aucstream learner whose calibration
    is replayed (``run.owner``: :func:`._prequential_parts._calibration_owner`, a plain
    learner or a pipeline over one) or whose search records its decisions
    (``run.search``: :func:`aucstream._search_scores.search_of`), and whose examples
    of weight 0 are inert."""
    tags = getattr(model, "_tags", None)
    return (
        (run.owner is not None or run.search is not None)
        and isinstance(model, BaseStreamingAUC)
        and (callable(delay) or int(delay) >= 1)
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
        #: a constant delay with every label kept: the labels still to learn are the
        #: examples n_learnt..n_seen, each released ``delay`` examples after it (no
        #: heap); else the release heap's entries, taken by each piece
        self.constant = not callable(run.delay) and run.label_probability is None
        self.delay = int(run.delay) if self.constant else -1
        #: whether the pending labels are kept as the constant delay keeps them (True),
        #: or as entries of the release heap (False: a constant delay before its first
        #: woven chunk, and after a refusal)
        self._on = not self.constant
        self.taken: list = []  # (the heap's entries a piece took)
        #: after a piece refused where a search's candidate diverged at a known row:
        #: the example from which to weave again (the row path dropped it by then),
        #: and the end of the chunk whose rows the refusal put in the heap
        self.resume: int | None = None
        self.resume_end = 0
        self.failed: int | None = None  # (the woven row the last refusal named)

    @property
    def on(self) -> bool:
        """Whether the next piece is woven (:attr:`_on`), weaving again once the row
        path has gone past a refused piece's failing row (:attr:`resume`)."""
        if self.resume is not None and self.run.n_seen >= self.resume:
            self.resume = None
            self.ready(self.resume_end)
        return self._on

    def worth(self, n: int, base: int) -> bool:
        """Whether to weave a chunk of ``n`` rows from example ``base``: its pieces
        (between checkpoints) hold at least :data:`WEAVE_FROM` rows; else it goes row
        by row (the labels still to learn as entries of the heap: :meth:`unweave`)."""
        every = self.run.every
        if n >= WEAVE_FROM and (every is None or every >= WEAVE_FROM):
            return True
        self.unweave(base)
        return False

    def ready(self, end: int | None = None) -> bool:
        """Whether the next chunk (the rest of one, up to ``end``) can be woven; with a
        constant delay, the first time, the heap's entries moved out (they are the
        examples n_learnt..n_seen, or ..end)."""
        run = self.run
        if self._on:
            return True
        if len(run.pending) != (run.n_seen if end is None else end) - run.n_learnt:
            return False
        run.pending.clear()
        self._on = True
        return True

    def unweave(self, end: int) -> None:
        """Write the labels of examples n_learnt..end (those seen, and the current
        chunk's) back as entries of the release heap (a constant delay), and weave no
        more until :meth:`ready` says so again."""
        if not (self._on and self.constant):
            return
        run = self.run
        for chunk_id, held in run.chunks.items():
            X, start = held[0], held[4]
            lo, hi = max(start, run.n_learnt), min(start + X.shape[0], end)
            held[2] = max(0, hi - lo)  # (its rows still to learn)
            for p in range(lo, hi):
                heapq.heappush(run.pending, (p + self.delay, p, chunk_id, p - start))
        self._on = False

    def _released(self, first: int, last: int):
        """The labels released by the scoring of examples ``first`` to ``last``, in
        the order they are learnt: ``(releases, [(chunk id, rows)], stacked)``, where
        label ``i`` is learnt right after example ``releases[i]`` is scored and its row
        is ``stacked[i]`` of the parts' rows one after another; None when a constant
        delay's labels are not where they should be (the heap's entries a call takes
        are kept in ``taken`` until the piece is learnt or refused)."""
        run, k = self.run, self.delay
        if self.constant:  # (the examples n_learnt.., each released k examples later)
            lo, hi = run.n_learnt, max(run.n_learnt, last + 1 - k)
            if lo != max(0, first - k):
                return None
            parts = []
            for chunk_id, held in run.chunks.items():
                start = held[4]
                a, b = max(lo, start), min(hi, start + held[0].shape[0])
                if a < b:
                    parts.append((chunk_id, np.arange(a - start, b - start)))
            if sum(rows.shape[0] for _, rows in parts) != hi - lo:
                return None
            return np.arange(lo, hi) + k, parts, np.arange(hi - lo)
        entries = []
        while run.pending and run.pending[0][0] <= last:
            entries.append(heapq.heappop(run.pending))
        self.taken = entries
        if not entries:
            return np.empty(0, dtype=np.int64), [], np.empty(0, dtype=np.intp)
        releases, _, ids, rows = (np.array(column) for column in zip(*entries))
        parts, stacked, at = [], np.empty(len(entries), dtype=np.intp), 0
        for chunk_id in dict.fromkeys(ids.tolist()):  # (in order of first appearance)
            mine = np.flatnonzero(ids == chunk_id)
            parts.append((chunk_id, rows[mine]))
            stacked[mine] = at + np.arange(mine.shape[0])
            at += mine.shape[0]
        return releases, parts, stacked

    def _put_back(self) -> None:
        """The heap's entries :meth:`_released` took, back (a piece not woven)."""
        for entry in self.taken:
            heapq.heappush(self.run.pending, entry)
        self.taken = []

    def piece(self, X, y: np.ndarray, positive: np.ndarray, cur: int, stop: int) -> bool:
        """Score rows ``cur:stop`` of the current chunk (example ``n_seen`` on) and
        learn the labels released meanwhile, in one weighted ``test_then_train``;
        count the scores. False, nothing changed, when the rows cannot be woven or
        the learner refuses them (then the labels still to learn are entries of the
        release heap again: :meth:`unweave`)."""
        run = self.run
        first, m = run.n_seen, stop - cur
        if self.resume is not None:  # (a delay per example: its heap as it was)
            if first < self.resume:
                return False
            self.resume = None
        released = self._released(first, first + m - 1)
        chunks = run.chunks
        kind = _kind(X)
        if (
            released is None
            or kind is None
            or any(_kind(chunks[c][0]) != kind for c, _ in released[1])
        ):  # (chunks of other kinds, or mixed: row by row)
            self._refused(first + (y.shape[0] - cur))
            return False
        releases, parts, stacked = released
        n_learn = releases.shape[0]
        # woven: each scored row, then the labels its scoring releases
        scored_at = np.arange(m) + np.searchsorted(releases, first + np.arange(m))
        learnt_at = np.arange(n_learn) + (releases - first + 1)
        order = np.empty(m + n_learn, dtype=np.intp)  # woven row -> stacked row
        order[scored_at] = np.arange(m)
        order[learnt_at] = m + stacked
        rows = [(X, np.arange(cur, stop))] + [(chunks[c][0], r) for c, r in parts]
        woven_X = (
            np.concatenate([P[r] for P, r in rows])[order]
            if kind == "dense"
            else _csr_rows(rows, order)
        )
        labels = [y[cur:stop]] + [chunks[c][1][r] for c, r in parts]
        woven_y = np.concatenate(labels)[order]
        weights = np.zeros(m + n_learn)
        weights[learnt_at] = 1.0
        fresh = run.first_fit  # (then the rows scored before the first label: untrained)
        if n_learn:
            self.failed = None
            written = self._call(woven_X, woven_y, weights, fresh)
            if written is None:  # (refused, unchanged) row by row
                end = first + (y.shape[0] - cur)
                self._refused(end)
                if self.failed is None:
                    return False
                return self._around(X, y, positive, cur, scored_at, end, self.failed)
            decision, proba = written[0, scored_at], written[1, scored_at]
            run.first_fit, run.fitted = False, True
            if fresh:  # the rows before the first label: the untrained model's score
                untrained = int(releases[0]) - first + 1
                decision[:untrained], proba[:untrained] = 0.0, 0.5
            scored = (
                decision,
                proba if "proba" in run.needs else None,
                decision > 0 if run.predicts else None,
            )
        else:  # (no label released: the rows scored, nothing learnt)
            scored = run.score(X[cur:stop])
        run.count(positive[cur:stop], *scored)
        run.n_seen, run.n_learnt = first + m, run.n_learnt + n_learn
        self._let_go(parts)
        return True

    def _around(self, X, y, positive, cur: int, scored_at, end: int, failed: int) -> bool:
        """After a piece refused where a search's candidate diverged at woven row
        ``failed``: the rows scored before the example whose scoring releases it woven
        (when there are :data:`WEAVE_FROM` of them), that example row by row (the
        row path drops the candidate), then woven again from the next (``resume``).
        Whether a shorter piece was woven (the run's ``n_seen`` says how far)."""
        first = self.run.n_seen
        resume = first + int(np.searchsorted(scored_at, failed))
        before, woven = resume - 1 - first, False
        if before >= WEAVE_FROM and self.ready(end):
            if not self.piece(X, y, positive, cur, cur + before):
                return False  # (refused again: as that refusal left it)
            self._refused(end)
            woven = True
        self.resume, self.resume_end = resume, end
        return woven

    def _refused(self, end: int) -> None:
        """A piece not woven: the labels still to learn as entries of the heap."""
        if self.constant:
            self.unweave(end)
        else:
            self._put_back()

    def _call(self, X, y, weights, fresh: bool) -> np.ndarray | None:
        """The ``(2, n)`` decision scores and probabilities of the woven rows, before
        each was learnt, after one ``test_then_train`` of them (None, the model
        unchanged, when the learner refuses them)."""
        run = self.run
        model = run.model
        classes = np.asarray(run.classes) if fresh else None
        if run.search is not None:
            return self._recorded(X, y, weights, classes)
        # the learner whose calibration gives the scores (a fresh pipeline has none yet:
        # its calibration is replayed from an empty one, as at delay 0)
        owner = (model if run.plain else None) if fresh else run.owner()
        state = _calibration.new_state() if owner is None or fresh else owner.calibration_.copy()
        before = (getattr(model, "n_samples_seen_", 0), getattr(owner, "n_samples_seen_", 0))
        written = np.empty((2, y.shape[0]))
        with run.request.ask(owner, written) as taken:
            try:
                raw = model.test_then_train(X, y, classes, weights)
            except Exception:  # (a refused call changes nothing)
                return None
        if not taken[0]:
            y_pm = np.where(y == run.classes[1], 1.0, -1.0)
            raw = np.asarray(raw, dtype=np.float64)
            _calibration.replay(state, raw, y_pm, written[0], written[1], weights)
        learnt = int(np.count_nonzero(weights))  # (the rows of weight 0 learnt nothing)
        inner = run.owner()
        inner.n_samples_seen_ = before[1] + learnt
        model.n_samples_seen_ = before[0] + learnt
        return written

    def _recorded(self, X, y, weights, classes) -> np.ndarray | None:
        """:meth:`_call` of a search, or a pipeline over one, that records its decisions
        before each row as it learns (:mod:`aucstream._search_scores`; its rows of
        weight 0 learnt by none of its candidates, and not counted by its race);
        None, the model unchanged (its transaction undoes the call), when it cannot
        record them exactly (``recordable``, :class:`~aucstream._search_scores.NotExact`:
        a candidate that diverged, too), or refuses the call."""
        run = self.run
        model = run.model
        if not _search_scores.recordable(run.search(), X.shape[1]):
            return None
        before = getattr(model, "n_samples_seen_", 0)
        written = np.empty((2, y.shape[0]))
        getattr(model, "estimator_", None)  # (a pipeline learns the rows it holds first)
        try:
            with _search_scores.recording(written) as request:
                model.test_then_train(X, y, classes, weights)
        except _search_scores.Diverged as error:  # (undone) a candidate failed inside
            self.failed = error.row
            return None
        except Exception:  # (a refused call changes nothing)
            return None
        if request.filled != y.shape[0]:
            raise RuntimeError(
                f"internal error: the search recorded {request.filled} of {y.shape[0]} "
                "rows; please report it"
            )
        model.n_samples_seen_ = before + int(np.count_nonzero(weights))
        return written

    def _let_go(self, parts: list) -> None:
        """Count the rows ``parts`` learnt; let go of a chunk with none left to learn."""
        self.taken = []
        chunks = self.run.chunks
        for chunk_id, rows in parts:
            held = chunks[chunk_id]
            held[2] -= rows.shape[0]
            if held[2] == 0:
                del chunks[chunk_id]
            elif held[3]:  # (a CSR row's dict made when it was scored alone)
                for r in rows.tolist():
                    held[3].pop(r, None)


def _csr_rows(parts: list, order: np.ndarray) -> sp.csr_matrix:
    """Row ``order[i]`` of the rows ``parts`` (``(CSR matrix, row indices)``) one after
    another, for each ``i``: one gather of their values (scipy's slices, stack and
    row indexing made and checked a matrix per step: a quarter of a woven pass on
    a9a)."""
    starts = [P.indptr[r] for P, r in parts]
    lengths = np.concatenate([P.indptr[r + 1] - a for (P, r), a in zip(parts, starts)])
    firsts, total = [], 0
    for (P, _), a in zip(parts, starts):  # (each row's values among all the parts')
        firsts.append(a + (total - P.indptr[0]))
        total += int(P.indptr[-1] - P.indptr[0])
    lengths = lengths[order]
    indptr = np.zeros(order.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    at = np.repeat(np.concatenate(firsts)[order] - indptr[:-1], lengths) + np.arange(indptr[-1])
    data = np.concatenate([P.data[P.indptr[0] : P.indptr[-1]] for P, _ in parts])[at]
    indices = np.concatenate([P.indices[P.indptr[0] : P.indptr[-1]] for P, _ in parts])
    shape = (order.shape[0], parts[0][0].shape[1])
    return sp.csr_matrix((data, indices[at], indptr), shape=shape)
