r"""Prequential evaluation with delayed and missing labels: what a deployment sees.

A deployed model scores each example when it arrives; its label comes later (a
fraud is confirmed weeks afterwards), or never. :func:`prequential` replays a stream
that way and reports, at checkpoints, the metrics of the scores *as they were
emitted*:

- example :math:`i` is scored on arrival by the model as it is then
  (``decision_function``, and ``predict_proba`` / ``predict`` when a metric needs
  them);
- with delay :math:`k_i` its label is released once example :math:`i + k_i` has been
  scored; released labels are learnt (``partial_fit``) right after that scoring, in
  order of release and, for equal release times, of arrival (River's and CapyMOA's
  delayed progressive validation). ``delay=0`` is test-then-train;
- a label dropped (probability ``1 - label_probability``) is never learnt, but the
  example's score still counts in the metrics: the evaluator knows every label, the
  model only the released ones;
- the end of the stream releases the labels still pending: they are learnt, and
  nothing is scored again.

The result depends only on the order of the examples, not on how the stream is cut
into chunks: the model learns each maximal run of labels released between two
scorings in one ``partial_fit`` call, and scores each run of examples between two
releases in one ``decision_function`` call. For ``delay=0`` an aucstream learner
whose kernels score each example before learning it (or a
:class:`~aucstream.StreamPipeline` in front of one) runs one ``test_then_train`` per
chunk (small chunks together: :mod:`._prequential_merge`), and the scores
``decision_function`` would have given (the model's own score minus the calibrated
threshold of that moment) and the probabilities are written by the learner's kernel
as it learns (SOLAM's,
:func:`aucstream._calibration.step_scored`), or else recovered by replaying the
calibration (:mod:`aucstream._calibration`) over the prequential scores (the same
IEEE operations either way): exactly, up to the rounding of the learner's kernel, whose
prequential score can differ from ``decision_function``'s in the last bits. SOLAM's
kernel sums its score coordinate by coordinate as ``coef_`` is formed, so a score
``decision_function`` gives as an analytic 0.0 is 0.0 there too (it came out near
1e-15 and broke ties the row-by-row definition keeps); other kernels may still
round such a score either way (``tests/test_prequential_meta.py``). A
:class:`~aucstream.OnePassSearch`, or a pipeline over one, also runs one
``test_then_train`` per chunk: the search records, as it learns, the decision score
and probability it gave each row before learning it (:mod:`aucstream._search_scores`),
and a chunk it cannot record exactly goes row by row. With a delay, such a learner
or search that takes example weights gets the scored rows (weight 0) and the labels
they release woven into one ``test_then_train`` a piece (:mod:`._prequential_weave`).

Before anything is learnt a model has no scores: an example scored then gets 0.0,
the probability 1/2 (the Laplace-smoothed prior of no examples) and the negative
class, which is what an aucstream learner with zero weights and an empty
calibration gives.

Probabilities come from ``predict_proba`` when the model has it, else from the
logistic of the score, capped to :math:`[10^{-15}, 1 - 10^{-15}]`
(:func:`aucstream._calibration.capped_logistic`).

**What the AUCs rank.** By default the ranking columns rank the decision scores;
``rank="proba"`` ranks the probabilities, as River's metrics do. At one moment both
rank the examples alike (the calibrated map is increasing), but across a stream
they do not: an aucstream learner's decision score is its score minus the
calibrated threshold, :math:`(a z + b)\, \sigma / a` for the calibration's
standardized score :math:`z`, slope :math:`a` and score deviation :math:`\sigma`,
while the probability is :math:`\sigma(a z + b)`, and :math:`\sigma / a` changes as
the calibration learns. With ``rank="proba"``, ``window_auc`` equals River's
``RollingROCAUC`` under ``progressive_val_score`` of
:class:`aucstream.river.RiverClassifier` of the same learner (``tests/
test_prequential_river.py``, River's bundled Phishing). River's ``RollingROCAUC`` is
exact only on windows without tied probabilities (it does not count a tie one half,
as scikit-learn's ``roc_auc_score`` and ours do): "equal" holds there, and the test
checks that the windows it compares hold no ties.
"""

from __future__ import annotations

import copy
import heapq
import math
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import pandas as pd

from .. import _calibration, _search_scores
from .._chunks import check_sparse_structure
from .._labels import LabelCheck
from .._rng import make_rng
from .._state import nbytes_of, state_items
from .._stream_metrics import Together
from .._streaming_auc import PrequentialAUC
from ..streaming import ChunkStream, Progress
from . import _prequential_merge as _merge
from ._prequential_columns import METRICS, chosen_metrics, curve_frame
from ._prequential_parts import (
    MemoryReading,
    ProgressLine,
    ScoreBlock,
    _calibration_owner,
    _one_example,
    _replays_calibration,
    _scores_as_base,
    check_params,
    classes_for,
    distinct,
    is_fitted,
    is_int,
    note_non_finite,
    pair_from,
    plain_row,
    row_of,
    slice_rows,
    stack_rows,
    take_rows,
    width_of,
)
from ._prequential_weave import Weave, weaves

__all__ = ["prequential", "METRICS", "model_bytes"]

#: Scored rows held before the metrics count them (a read counts them first): an
#: update of the exact AUC has a per-call cost (its sorted runs are searched and
#: merged per call), so fewer, larger updates cost less; 2**16 rows hold about 1 MB.
_HOLD = 1 << 16
#: Rows read ahead, at most, to find both labels when ``classes`` is not given.
_LOOKAHEAD = 1_000_000


def model_bytes(model: Any) -> int:
    """Bytes of the arrays of a model's state (attributes ending in ``_``).

    Parameters
    ----------
    model : estimator
        Any fitted estimator (aucstream, scikit-learn, a pipeline of them).

    Returns
    -------
    int
        The bytes of every numpy array reachable from the state attributes.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream import SOLAM
    >>> model_bytes(SOLAM().fit(np.eye(4), [0, 1, 0, 1])) > 0
    True
    """
    return nbytes_of(state_items(model))


# ------------------------------------------------------------ the fast replay
#: Whether a constant delay weaves the scored rows and the released labels into one
#: weighted call (:mod:`._prequential_weave`), and whether delay 0 records
#: :class:`~aucstream.OnePassSearch`'s decisions as it learns (:func:`_search_of`);
#: False: row by row (the tests compare).
_WEAVE = _RECORD_SEARCH = True


# ------------------------------------------------------------------ the loop
class _Evaluation:
    """The state of one :func:`prequential` run."""

    _NOTHING = np.empty((2, 0))

    def __init__(
        self, model, delay, classes, label_probability, random_state, columns, every, rank, fitted
    ):
        self.model = model
        self.delay = delay
        self.classes = classes
        self.label_probability = label_probability
        #: the label drops' draws (none without label_probability: a generator is not
        #: made for nothing, but a bad seed is refused all the same)
        self.rng = None
        if label_probability is not None:
            self.rng = make_rng(random_state)
        elif random_state is not None:
            make_rng(random_state)
        self.columns = columns
        self.needs = frozenset().union(*(c.needs for c in columns.values()))
        #: the columns that rank the probabilities (rank="proba"), not the scores
        self.by_proba = frozenset(
            name for name, c in columns.items() if rank == "proba" and getattr(c, "ranks", False)
        )
        if self.by_proba:
            self.needs = self.needs | {"proba"}
        self.predicts = "predicted" in self.needs
        #: the log-loss, Brier score and positive rate, fed in one compiled pass; the
        #: other columns, each with whether it ranks the probabilities
        self.together = Together(columns.values())
        rest = {id(m) for m in self.together.rest}
        self.apart = [(m, name in self.by_proba) for name, m in columns.items() if id(m) in rest]
        self.every = every
        self.fitted = fitted
        self.first_fit = not self.fitted
        self.has_proba = hasattr(model, "predict_proba")
        self.width: int | None = None
        self.label_check: LabelCheck | None = None
        self.n_seen = self.n_learnt = 0
        self.pending: list[tuple[int, int, int, int]] = []  # (release, arrival, chunk, row)
        #: chunk id -> [X, y, rows still pending, {row: its dict, as scored}]: a CSR
        #: row scored alone is learnt alone later from the same dict (made once)
        self.chunks: dict[int, list] = {}
        self.scored_row: Any = None  # (the plain row score_row scored last)
        self.n_chunks, self.current = 0, (None, 0)  # (the chunk under way, its first example)
        self.rows: list[dict] = []
        self.held: list[tuple] = []  # scored rows not yet counted (see count)
        self.n_held = 0
        self.start = time.process_time()
        self.memory = MemoryReading(model)
        #: decision_function - threshold, predict_proba and predict are the base class's
        self.plain = _replays_calibration(model)
        #: decision_function, predict_proba and predict from one score_samples
        self.as_base = self.plain or _scores_as_base(model)
        #: a row alone is scored and learnt through the one-example methods
        self.one = self.plain or _one_example(model)
        self.column: int | None = None
        #: the learner whose calibration owned_chunk replays (see _calibration_owner)
        self.owner = _calibration_owner(model, self.plain)
        #: the search whose decisions the learning records (see _search_of)
        self.search = None if self.owner is not None else _search_scores.search_of(model)
        self.fast = (
            (self.owner is not None or self.search is not None)
            and delay == 0
            and not callable(delay)
            and label_probability is None
        )
        #: delay 0 through a learner whose calibration is replayed: each chunk's
        #: decision scores and probabilities are written into a block of held rows
        #: (:meth:`owned_chunk`) with the labels as given, which are checked and
        #: compared with the positive class when the block is counted (:meth:`flush`)
        self.raw_labels = self.fast and self.owner is not None
        self.diverged = False  # (search_chunk's last refusal: a candidate diverged)
        self.failing: int | None = None  # (and the row it failed at, when found)
        self.block = ScoreBlock(_HOLD) if self.raw_labels else None
        #: a delay through a learner whose examples of weight 0 are inert: woven calls
        self.weave = Weave(self) if _WEAVE and weaves(model, delay, self) else None
        #: the request that the learner's kernel write into the block (one per run)
        self.request = _calibration.writing(None, self._NOTHING)

    # ---------------------------------------------------------------- checks
    def check_chunk(self, X, y) -> tuple[Any, np.ndarray]:
        shape = getattr(X, "shape", None)
        if shape is None or len(shape) != 2 or shape[1] != self.width:
            self.check_width(width_of(X))
        if type(y) is not np.ndarray or y.ndim != 1:
            y = np.asarray(y)
            if y.ndim != 1:
                y = y.ravel() if y.ndim == 2 and 1 in y.shape else y
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(
                f"chunk {self.n_chunks}: X has {X.shape[0]} rows and y shape {np.shape(y)}"
            )
        return X, y

    def check_width(self, width: int) -> None:
        if self.width is None:
            known = getattr(self.model, "n_features_in_", None) if self.fitted else None
            if known is not None and known != width:
                raise ValueError(
                    f"chunk {self.n_chunks} has {width} features; the model was fitted on {known}"
                )
            self.width = width
        elif width != self.width:
            raise ValueError(
                f"chunk {self.n_chunks} has {width} features; the earlier chunks had {self.width}"
            )

    def check_labels(self, y: np.ndarray, base: int) -> np.ndarray:
        """``y == classes[1]``, after checking every label is a class."""
        check = self.label_check  # (one compiled pass for numeric labels)
        if check is None or check.classes is not self.classes:
            check = self.label_check = LabelCheck(self.classes)
        fast = check(y)
        if fast is not None and fast[1] < 0:
            return fast[0]
        try:
            positive = y == self.classes[1]
            known = positive | (y == self.classes[0])
        except TypeError:
            known = positive = np.zeros(y.shape, bool)
        if not isinstance(known, np.ndarray) or known.shape != y.shape:  # e.g. str vs number
            known = positive = np.zeros(y.shape, bool)
        if not known.all():
            first = int(np.flatnonzero(~known)[0])
            raise ValueError(
                f"label {y[first]!r} of example {base + first} is not one of the classes "
                f"{list(self.classes)}; prequential evaluates binary classifiers"
            )
        return positive

    def delays(self, X, y: np.ndarray, base: int) -> np.ndarray:
        n = y.shape[0]
        if not callable(self.delay):
            return np.full(n, int(self.delay), dtype=np.int64)
        out = np.empty(n, dtype=np.int64)
        for j in range(n):
            d = self.delay(base + j, row_of(X, j), y[j].item() if hasattr(y[j], "item") else y[j])
            if not is_int(d) or d < 0:
                raise ValueError(
                    f"delay({base + j}, x, y) returned {d!r}; it must return an int >= 0"
                )
            out[j] = int(d)
        return out

    # --------------------------------------------------------------- scoring
    def score(self, X) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """(decision scores, probabilities, predicted positive) of rows, now."""
        n = X.shape[0]
        proba = predicted = None
        if not self.fitted:
            scores = np.zeros(n)
            if "proba" in self.needs:
                proba = np.full(n, 0.5)
            if "predicted" in self.needs:
                predicted = np.zeros(n, dtype=bool)
            return scores, proba, predicted
        model = self.model
        if self.as_base:  # decision_function, predict_proba and predict from one validation
            raw = model.score_samples(X)
            return self.scored(raw, predicted)
        scores = np.asarray(model.decision_function(X), dtype=np.float64).ravel()
        if "proba" in self.needs:
            if self.has_proba:
                column = int(np.flatnonzero(np.asarray(model.classes_) == self.classes[1])[0])
                proba = np.asarray(model.predict_proba(X))[:, column]
            else:
                proba = _calibration.capped_logistic(scores)
        if "predicted" in self.needs:
            predicted = np.asarray(model.predict(X)) == self.classes[1]
        return scores, proba, predicted

    def scored(self, raw: np.ndarray, predicted=None):
        """What ``decision_function``, ``predict_proba`` and ``predict`` of a plain
        learner give rows of own scores ``raw`` (the base class's arithmetic)."""
        model, proba = self.model, None
        scores = raw - model.offset_
        if "proba" in self.needs:
            proba = _calibration.probability(model.calibration_, raw)
        if "predicted" in self.needs:
            predicted = scores > 0
        return scores, proba, predicted

    def score_row(self, X, j: int) -> tuple[float, float] | None:
        """The decision score and probability (0.0 when not asked, or when
        ``predict_proba`` is missing) of row ``j`` alone, through the model's
        one-example methods (no slice and no scikit-learn check; :func:`_one_example`)
        when the row is plain, else None."""
        if not (self.one and self.fitted):
            return None
        row = self.scored_row = plain_row(X, j)
        if row is None:
            return None
        model, proba = self.model, 0.0
        decision = model.decision_one(row)
        if "proba" in self.needs and self.has_proba:  # (else the chunk's, from decisions)
            if self.column is None:  # (of the positive class; classes_ is fitted)
                self.column = int(np.flatnonzero(model.classes_ == self.classes[1])[0])
            proba = model.predict_proba_one(row)[self.column]
        return decision, proba

    def count_scored(self, positive, scored: tuple, start: int, stop: int) -> None:
        """:meth:`count` rows ``start:stop`` of a chunk whose decision scores,
        probabilities and predictions (``scored``) :meth:`score` and :meth:`score_row`
        wrote (the probabilities of a model without ``predict_proba`` from the decision
        scores, as :meth:`score` makes them)."""
        decisions, probas, predictions = scored
        scores, proba = decisions[start:stop], None
        if "proba" in self.needs:
            proba = probas[start:stop] if self.has_proba else _calibration.capped_logistic(scores)
        predicted = predictions[start:stop] if self.predicts else None
        self.count(positive[start:stop], scores, proba, predicted)

    def count(self, positive, scores, proba, predicted) -> None:
        """Count scored rows in the metrics (held, in order, until a read or _HOLD rows:
        one metric update per example would cost more than the example)."""
        self.held.append((positive, scores, proba, predicted))
        self.n_held += len(scores)
        if self.n_held >= _HOLD:
            self.flush()

    def flush(self) -> None:
        """Count the rows scored so far (``n_seen``) and not yet counted."""
        block = self.block
        predicted: np.ndarray | None
        if block is not None:  # (raw_labels: the block's rows, the labels as given)
            until = self.n_seen - block.base
            if until <= block.start:
                return
            labels, scores, proba, base = block.take(until)
            positive = self.check_labels(labels, base)
            predicted = scores > 0 if self.predicts else None
        elif not self.held:
            return
        else:
            held, self.held, self.n_held = self.held, [], 0
            cat = np.concatenate  # (a column some parts leave out, None: no metric reads it)
            joined: Any = (None if any(a is None for a in p) else cat(p) for p in zip(*held))
            positive, scores, proba, predicted = held[0] if len(held) == 1 else joined
        self.together.update(positive, proba)  # the log-loss, Brier score, positive rate
        for metric, by_proba in self.apart:
            metric.update(positive, proba if by_proba else scores, proba, predicted)

    # -------------------------------------------------------------- learning
    def learn_row(self, X, y: np.ndarray, j: int, row: Any = None) -> None:
        """Learn row ``j`` alone (the learner's one-example path when it applies;
        ``row``: its plain row when :meth:`score_row` made it)."""
        if not self.one or self.first_fit:
            row = None
        elif row is None:
            row = plain_row(X, j)
        if row is None:
            self.learn(slice_rows(X, j, j + 1), y[j : j + 1])
            return
        self.model.learn_one(row, y[j])
        self.n_learnt += 1

    def learn(self, X, y) -> None:
        if self.first_fit:
            self.model.partial_fit(X, y, classes=np.asarray(self.classes))
            self.first_fit = False
        else:
            self.model.partial_fit(X, y)
        self.fitted = True
        self.n_learnt += X.shape[0]

    def release(self, until: float) -> None:
        """Learn every pending label released by the scoring of example ``until``."""
        run: list[tuple[int, int]] = []
        pending = self.pending
        while pending and pending[0][0] <= until:
            _, _, chunk, row = heapq.heappop(pending)
            run.append((chunk, row))
        if not run:
            return
        if len(run) == 1:
            held = self.chunks[run[0][0]]
            self.learn_row(held[0], held[1], run[0][1], held[3].pop(run[0][1], None))
            held[2] -= 1
            if held[2] == 0:
                del self.chunks[run[0][0]]
            return
        parts_X, parts_y = [], []
        start = 0
        for k in range(1, len(run) + 1):  # groups of consecutive rows of one chunk
            if k == len(run) or run[k][0] != run[start][0]:
                held = self.chunks[run[start][0]]
                rows = np.fromiter((r for _, r in run[start:k]), np.intp, k - start)
                if rows.size == held[0].shape[0] and np.array_equal(rows, np.arange(rows.size)):
                    parts_X.append(held[0])
                    parts_y.append(held[1])
                elif rows[-1] - rows[0] == rows.size - 1 and np.all(np.diff(rows) == 1):
                    parts_X.append(slice_rows(held[0], int(rows[0]), int(rows[-1]) + 1))
                    parts_y.append(held[1][rows[0] : rows[-1] + 1])
                else:
                    parts_X.append(take_rows(held[0], rows))
                    parts_y.append(held[1][rows])
                held[2] -= rows.size
                if held[2] == 0:
                    del self.chunks[run[start][0]]
                elif held[3]:
                    for r in rows.tolist():
                        held[3].pop(r, None)
                start = k
        self.learn(stack_rows(parts_X), np.concatenate(parts_y))

    # ------------------------------------------------------------ one chunk
    def chunk(self, X, y: np.ndarray) -> None:
        if self.raw_labels:
            self.owned_chunk(X, y)
            return
        n, base = y.shape[0], self.n_seen
        self.current = (X, base)
        positive = self.check_labels(y, base)
        if self.fast:  # delay 0, every label kept: no release schedule to keep
            written = self.search_chunk(X, y)
            if written is not None:
                self.count_written(written, positive, base)
                return
            if self.diverged and n > 1:
                self.around_divergence(X, y)
                return
        check_sparse_structure(X, f"chunk {self.n_chunks}")  # (rows read apart, or woven)
        delays = self.delays(X, y, base)
        kept = (
            np.ones(n, dtype=bool)
            if self.rng is None  # (None exactly without label_probability)
            else self.rng.random(n) < self.label_probability
        )
        chunk_id = self.n_chunks
        weave = self.weave is not None and self.weave.worth(n, base)
        heapless = weave and self.weave.ready() and self.weave.constant
        if kept.any():
            self.chunks[chunk_id] = [X, y, int(kept.sum()), {}, base]
            for j in [] if heapless else np.flatnonzero(kept).tolist():
                heapq.heappush(self.pending, (base + j + int(delays[j]), base + j, chunk_id, j))
        # its decisions and probabilities, counted at checkpoints, its end, a woven piece
        decisions, probas, predictions = np.empty(n), np.empty(n), np.empty(n, dtype=bool)
        cur = counted = 0
        while cur < n:
            if weave and self.weave.on:  # up to the next checkpoint (the rows before, counted)
                self.count_scored(positive, (decisions, probas, predictions), counted, cur)
                counted, stop = cur, n if self.every is None else self.next_checkpoint(base, n)
                if self.weave.piece(X, y, positive, cur, stop):
                    cur = counted = self.n_seen - base  # (stop, or a shorter piece)
                    self.checkpoint()
                    continue
            stop = n
            if self.pending:  # the next release, after the scoring of this example
                stop = min(stop, self.pending[0][0] - base + 1)
            if self.every is not None:
                stop = min(stop, self.next_checkpoint(base, n))
            one = self.score_row(X, cur) if stop == cur + 1 else None
            if one is None:
                scores, proba, predicted = self.score(slice_rows(X, cur, stop))
                decisions[cur:stop] = scores
                if proba is not None:
                    probas[cur:stop] = proba
                if predicted is not None:
                    predictions[cur:stop] = predicted
            else:
                decisions[cur], probas[cur] = one
                predictions[cur] = one[0] > 0
                if type(self.scored_row) is dict and kept[cur]:  # (a copy: kept as is)
                    self.chunks[chunk_id][3][cur] = self.scored_row
            self.n_seen = base + stop
            self.release(self.n_seen - 1)
            if stop == n or (self.every is not None and self.n_seen % self.every == 0):
                self.count_scored(positive, (decisions, probas, predictions), counted, stop)
                counted = stop
            cur = stop
            self.checkpoint()
        held = self.chunks.get(chunk_id)
        if held is not None:  # labels released later: its rows kept (a reader may refill)
            held[0], held[1] = held[0].copy(), held[1].copy()

    def next_checkpoint(self, base: int, n: int) -> int:
        """The row of the next checkpoint (``every`` given) in a chunk (at most ``n``)."""
        assert self.every is not None
        return min(n, (self.n_seen // self.every + 1) * self.every - base)

    def around_divergence(self, X, y) -> None:
        """A chunk refused because a candidate diverged inside it (:meth:`search_chunk`):
        the rows before the failing one recorded in one call, that row alone as row
        by row (where a row-by-row run drops the candidate), then the rest as one
        chunk again. The refusal names the failing row
        (:func:`aucstream._search_scores.failing_row`); when it does not, the rows
        before it are found by bisection (a piece recorded moves past it, a piece
        refused holds the failing row)."""
        lo, hi, at = 0, y.shape[0], self.failing  # (at: the failing row, when known)
        while hi - lo > 1:
            if at is not None:
                hi = at + 1
                if at == lo:
                    break
            mid = at if at is not None else lo + (hi - lo) // 2
            part, labels = slice_rows(X, lo, mid), y[lo:mid]
            positive = self.check_labels(labels, self.n_seen)
            written = self.search_chunk(part, labels)
            if written is not None:
                self.count_written(written, positive, self.n_seen)
                lo = mid
            elif self.diverged:
                hi, at = mid, None if self.failing is None else lo + self.failing
            else:  # (refused for another reason: row by row, as any such chunk)
                self.chunk(part, labels)
                lo = mid
        self.chunk(slice_rows(X, lo, lo + 1), y[lo : lo + 1])
        if lo + 1 < y.shape[0]:
            self.chunk(slice_rows(X, lo + 1, y.shape[0]), y[lo + 1 :])

    def search_chunk(self, X, y) -> np.ndarray | None:
        """``delay=0`` through one ``test_then_train`` of a search that records its
        decisions and probabilities before each row (:mod:`aucstream._search_scores`);
        None, the model unchanged, when it cannot: then the chunk goes row by row, or,
        when a candidate diverged inside it (``diverged``), around that row
        (:meth:`around_divergence`)."""
        assert self.search is not None
        self.diverged, self.failing = False, None
        if not (_RECORD_SEARCH and _search_scores.recordable(self.search(), self.width or 0)):
            return None
        classes = np.asarray(self.classes) if self.first_fit else None
        try:
            written = _search_scores.learnt_chunk(self.model, X, y, classes)
        except _search_scores.Diverged as error:  # (undone) a candidate failed inside
            self.diverged, self.failing = True, error.row
            return None
        if written is not None:
            if not self.fitted:  # nothing learnt before the first example: as untrained
                written[:, 0] = 0.0, 0.5
            self.first_fit, self.fitted = False, True
        return written

    def owned_chunk(self, X, y) -> None:
        """``delay=0`` through one ``test_then_train`` (see the module docstring), the
        chunk's decision scores and probabilities written into the next rows of the
        block (:class:`~aucstream.evaluation._prequential_parts.ScoreBlock`), by the
        learner's kernel as it learns or by the calibration replayed, and held there
        with its labels as given until the metrics count them (:meth:`flush`): no
        array made per chunk, none joined.

        The labels are checked by the learner (its classes are the run's); a chunk it
        refuses is checked here too, so that a label of neither class gets
        :meth:`check_labels`'s message naming its example. Every label the learner
        accepts is checked again when counted (:meth:`flush`), and a refusal there
        restores the model as any error of the run does. The labels are copied (a
        reader may fill the same array again for its next chunk)."""
        model, block, n, base = self.model, self.block, y.shape[0], self.n_seen
        self.current = (X, base)
        if not block.fits(n):  # count what is held, start the block over
            self.flush()
            block.restart(base, n)
        fresh = not self.fitted
        if fresh:  # a plain learner starts from an empty calibration: its kernel writes
            state, owner = _calibration.new_state(), model if self.plain else None
        else:
            owner = self.owner()
            state = owner.calibration_.copy()
        written = block.columns(n)
        # a kernel that writes the decision scores and probabilities as it learns
        # (SOLAM's) spares the replay; one row goes through the one-example path
        with self.request.ask(owner if n > 1 else None, written) as taken:
            try:
                if self.first_fit:
                    raw = model.test_then_train(X, y, classes=np.asarray(self.classes))
                    self.first_fit = False
                else:
                    raw = model.test_then_train(X, y)
            except (ValueError, TypeError):
                self.check_labels(y, base)  # (raises when a label is of neither class)
                raise
        self.fitted = True
        if not taken[0]:
            raw = np.asarray(raw, dtype=np.float64)
            positive = self.check_labels(y, base)
            _calibration.replay(
                state, raw, np.where(positive, 1.0, -1.0), *written, _calibration.NO_WEIGHTS
            )
        if fresh:  # nothing learnt before the first example: the untrained model's score
            written[0, 0] = 0.0
        if not block.labels_fit(y):  # labels of another dtype: those held counted first
            self.flush()
        block.hold(y)
        self.n_seen = self.n_learnt = base + n
        every = self.every
        if every is not None and (base // every + 1) * every <= base + n:
            self.checkpoints_in(base, n)

    def checkpoints_in(self, base: int, n: int) -> None:
        """The checkpoints among examples ``base`` to ``base + n`` (a chunk counted
        whole: every checkpoint in it counts its rows up to it)."""
        every = self.every
        assert every is not None
        stop = (base // every + 1) * every
        while stop <= base + n:
            self.n_seen = self.n_learnt = stop
            self.checkpoint()
            stop += every
        self.n_seen = self.n_learnt = base + n

    def count_written(self, written: np.ndarray, positive, base) -> None:
        """Count a chunk's decisions and probabilities as they were before each row
        (``positive``: whether each row's label is the positive class)."""
        n = written.shape[1]
        decision, proba = written[0], written[1]
        predicted = decision > 0 if self.predicts else None
        every = self.every
        if every is None:  # one part, no checkpoint: held (count, inlined)
            self.held.append((positive, decision, proba, predicted))
            self.n_held += n
            self.n_seen = self.n_learnt = base + n
            if self.n_held >= _HOLD:
                self.flush()
            return
        if (base // every + 1) * every - base >= n:  # one part
            self.count(positive, decision, proba, predicted)
            self.n_seen = self.n_learnt = base + n
            self.checkpoint()  # (at the chunk's end, when one is due there)
            return
        cur = 0
        while cur < n:  # the metrics counted up to each checkpoint
            stop = min(n, (self.n_seen // every + 1) * every - base)
            part = slice(cur, stop)
            self.count(
                positive[part],
                decision[part],
                proba[part],
                None if predicted is None else predicted[part],
            )
            self.n_seen = self.n_learnt = base + stop
            cur = stop
            self.checkpoint()

    def checkpoint(self, final: bool = False) -> None:
        if not final and (self.every is None or self.n_seen % self.every):
            return
        self.flush()
        row = {"n_seen": self.n_seen, "n_learnt": self.n_learnt}
        for name, metric in self.columns.items():
            row[name] = metric.get()
        row["cpu_seconds"] = time.process_time() - self.start
        row["model_bytes"] = self.memory.read() if self.fitted else 0
        if self.rows and self.rows[-1]["n_seen"] == self.n_seen:
            self.rows[-1] = row
        else:
            self.rows.append(row)


def prequential(
    model: Any,
    stream: Iterable[tuple],
    *,
    delay: int | Callable[[int, Any, Any], int] = 0,
    window: int | None = None,
    metrics: Iterable[str] | str | None = None,
    every: int | None = None,
    label_probability: float | None = None,
    random_state: int | np.random.Generator | None = None,
    classes: Any = None,
    detector: Any = None,
    max_fpr: float | None = None,
    rank: str = "decision",
    progress: Any = False,
) -> pd.DataFrame:
    """Score each example on arrival, learn its label when it comes, report as it goes.

    See the module docstring :mod:`aucstream.evaluation._prequential` for the exact
    semantics (scored on arrival by the model as it is then; label ``i`` learnt right
    after example ``i + delay_i`` is scored; dropped labels never learnt but scored;
    the end releases what is pending). The model is fitted in place.

    Parameters
    ----------
    model : estimator
        Anything with ``partial_fit`` and ``decision_function`` (an aucstream learner,
        :class:`~aucstream.StreamPipeline`, :class:`~aucstream.OnePassSearch`,
        scikit-learn's ``SGDClassifier``), fitted or not.
    stream : iterable of (X, y)
        Chunks of any size (arrays, CSR matrices, pandas), e.g.
        :func:`aucstream.datasets.iter_svmlight`; all chunks as wide.
    delay : int or callable, default=0
        Examples scored between an example's arrival and its label's; or
        ``delay(i, x, y) -> int >= 0`` per example (``i`` its position, ``x`` its
        row, ``y`` its label).
    window : int, optional
        Adds ``window_auc``, the exact AUC of the last ``window`` scores.
    metrics : list of str or str, optional
        Columns (see :data:`METRICS`): ``auc``, ``window_auc``, ``partial_auc`` and
        ``window_partial_auc`` (with ``max_fpr``), ``average_precision``
        (keeps every score and sorts at each checkpoint: O(n) memory, O(n log n) per
        read), ``log_loss``, ``brier``, ``ece`` (expected calibration error, 10 bins),
        ``g_mean`` and ``kappa`` (of ``predict``), ``positive_rate``, ``alarms``.
        Default: ``auc``, ``window_auc`` (with ``window``), the partial AUCs (with
        ``max_fpr``), ``log_loss``, ``brier``,
        ``positive_rate``, ``alarms`` (with ``detector``). A comma-separated string
        is accepted.
    every : int, optional
        A checkpoint every ``every`` examples (and one at the end); default: only at
        the end.
    label_probability : float in (0, 1], optional
        Each label is kept with this probability (drawn from ``random_state``, one
        draw per example); a dropped label is never learnt.
    random_state : int, Generator or None, optional
        Seeds the label drops.
    classes : sequence of two labels, optional
        Both classes. Default: the model's (if fitted), else the two labels of the
        stream's first chunks (read ahead until both have come, at most a million
        rows; boolean labels need no look-ahead).
    detector : object, optional
        A drift detector with ``update(score, label)`` and ``drift_detected``, fed
        every example's decision score and whether it is positive; adds ``alarms``.
    max_fpr : float in (0, 1], optional
        Adds ``partial_auc`` (and ``window_partial_auc`` with ``window``): the exact
        one-way partial AUC at FPR <= ``max_fpr``, McClish-standardized as
        :func:`aucstream.metrics.roc_auc` and scikit-learn give it.
    rank : {"decision", "proba"}, default="decision"
        What the ranking columns (``auc``, ``window_auc``, the partial AUCs,
        ``average_precision``) rank: the decision scores, or the probabilities of
        the positive class, as River's metrics do (see the module docstring: the two
        rankings differ over time when the calibration moves). The detector is fed
        the decision scores either way.
    progress : bool or aucstream.streaming.Progress, default=False
        A progress bar on stderr.

    Returns
    -------
    pandas.DataFrame
        One row per checkpoint: ``n_seen`` (examples scored), ``n_learnt`` (labels
        learnt), the metric columns (on every example scored so far, NaN while
        undefined), ``cpu_seconds`` (process time since the start: learning, scoring,
        metrics) and ``model_bytes`` (:func:`model_bytes`).

    Raises
    ------
    ValueError, TypeError
        For a bad parameter (before anything is read), or a bad chunk (then the model
        is restored to what it was before the call).

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream import SOLAM
    >>> from aucstream.datasets import iter_chunks
    >>> from aucstream.evaluation import prequential
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 5)); y = (X[:, 0] + 0.5 * rng.normal(size=2000) > 0)
    >>> curve = prequential(SOLAM(), iter_chunks(X, y, 500), delay=100, every=1000)
    >>> curve[["n_seen", "n_learnt"]].values.tolist()
    [[1000, 900], [2000, 2000]]
    >>> bool(curve["auc"].iloc[-1] > 0.9)
    True
    """
    check_params(model, delay, window, every, label_probability)
    if rank not in ("decision", "proba"):
        raise ValueError(f"rank must be 'decision' or 'proba', got {rank!r}")
    options = {"window": window, "detector": detector, "max_fpr": max_fpr}
    if max_fpr is not None:
        PrequentialAUC(max_fpr=max_fpr)  # refuses a bad value before anything is read
    if detector is not None and not (
        callable(getattr(detector, "update", None)) and hasattr(detector, "drift_detected")
    ):
        raise TypeError("detector must have update(score, label) and drift_detected")
    names = chosen_metrics(metrics, options)
    columns = {name: METRICS[name].make(options) for name in names}
    fitted = is_fitted(model)
    classes = classes_for(model, classes, fitted)
    run = _Evaluation(
        model, delay, classes, label_probability, random_state, columns, every, rank, fitted
    )
    bar = Progress("prequential", enabled=True) if progress is True else progress or None
    # (the progress bar reads the stream's ChunkStream; without it, the stream itself)
    chunks: Any = stream if isinstance(stream, ChunkStream) else None
    if chunks is None:
        chunks = iter(stream) if bar is None else ChunkStream(stream)
    line = None if bar is None else ProgressLine(bar, chunks)
    saved = copy.deepcopy(vars(model))
    try:
        ahead: list[tuple[Any, np.ndarray]] = []
        if run.classes is None:  # read ahead until both labels have come
            seen = np.array([], dtype=object)
            rows = 0
            for X, y in chunks:
                X, y = run.check_chunk(X, y)
                run.n_chunks += 1
                ahead.append((X, y))
                new = distinct(y)
                if not seen.size:
                    seen = new
                elif not (new.size == seen.size == 1 and new[0] == seen[0]):  # a new label
                    seen = np.unique(np.concatenate([seen.astype(y.dtype), new]))
                rows += y.shape[0]
                pair = pair_from(seen)
                if pair is not None or rows >= _LOOKAHEAD:
                    break
                # another chunk is read: a reader may refill this one's arrays
                ahead[-1] = (X.copy(), y.copy())
            else:
                pair = None
            if rows and pair is None:
                pair = pair_from(seen)
            if pair is None and rows:
                raise ValueError(
                    f"the first {rows} labels are all {seen[0]!r}: pass classes=[neg, pos]"
                )
            run.classes = pair
        run.n_chunks, group = 0, _merge.SmallChunks(run)
        for X, y in _checked(ahead, chunks, run.check_chunk):
            group.feed(X, y)  # (small chunks learnt together: _prequential_merge)
            run.n_chunks += 1
            if line is not None:
                line.show(run)
        group.learn()
        if line is not None:
            line.show(run, final=True)
        if run.n_seen == 0:
            raise ValueError("the stream holds no examples")
        if run.weave is not None:
            run.weave.unweave(run.n_seen)
        run.release(math.inf)
        run.checkpoint(final=True)
    except BaseException as error:
        vars(model).clear()
        vars(model).update(saved)
        note_non_finite(error, *run.current)
        raise
    finally:
        if bar is not None:
            bar.close()
    return curve_frame(run.rows)


def _checked(ahead: list, chunks: Iterable, check: Callable) -> Iterator[tuple]:
    """The chunks read ahead (checked then; each let go as it is taken), then the
    stream's, each checked."""
    while ahead:
        yield ahead.pop(0)
    for X, y in chunks:
        yield check(X, y)
