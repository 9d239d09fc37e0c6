r""":class:`~aucstream.OnePassSearch`'s decision before each example, recorded while it
learns a chunk: what :func:`aucstream.evaluation.prequential` needs at delay 0.

Before each example the search scores with its leader, or the mean calibrated log-odds
of its ensemble (:mod:`aucstream.search`, "The scores"): the alive candidate with the
best windowed AUC over everything learnt so far, the buffered rows included, and the
next best calibrated ones. That is not what ``test_then_train`` returns (the round
leader's scores), so prequential used to score the search one row at a time. Within a
*piece* of the search's buffer (:meth:`~aucstream.OnePassSearch._learn_piece`: the
rows up to the next block end, round or reopening, where the metrics, the alive
candidates and the round leader change) everything the decision before row :math:`r`
reads is a function of what the piece leaves behind:

- each alive candidate's score of row :math:`r` is its prequential score
  (``pending_scores_``), the score it gives the row before learning it;
- its windowed AUC before row :math:`r` is its :class:`~aucstream.metrics.RollingAUC`
  peeked with the buffered rows before :math:`r`: :func:`window_pairs` slides a copy
  of the window's pair count over them one row at a time (each row that enters or
  leaves counts its pairs against the window's other class: the sorted scores of
  the window for the rows that were in it, a Fenwick tree over the ranks of the rows
  that entered or left since), the same integer counts as the peek, so the same AUC;
- its calibration before row :math:`r` is its calibration at the piece's start with
  the piece's rows before :math:`r` learnt (:func:`aucstream._calibration.replay_maps`:
  the same steps the candidate took, hence the same floats).

:func:`decisions` then ranks the candidates row by row, as ``_choose`` does (best
windowed AUC, ties by position; the round leader while a window lacks a class; the
first ``ensemble`` of them whose calibration is ready, or the leader alone), and
writes the leader's decision score and probability, or the ensemble's mean log-odds
and its logistic, with the arithmetic of ``decision_function`` and
``predict_proba``. Exact up to the candidates' kernels, whose prequential scores can
differ from ``score_samples``'s in the last bits (as for a plain learner,
:mod:`aucstream.evaluation._prequential`).

A candidate other than the round leader that diverges inside a piece leaves the race,
row by row, at the row where it fails, having learnt the rows before it; the others
learn as if it were not there. So the piece stands: the candidate, as it was before
the piece (its transaction undid the piece), learns the rows before that row again
(the row found on copies of it, :func:`failing_row`), its scores of them are
buffered, its score of the row itself is ``score_samples``'s (as the row-by-row path
scores it), and :func:`decisions` counts it alive up to that row
(:func:`_until_failure`). What is not reproduced here is refused, never
approximated: when the round leader diverges (its successor is chosen at that row) or
no row is found (a candidate too large to copy), :func:`learn_piece` raises
:class:`Diverged`, which the search's transaction rolls back, naming the failing row
when it is known, and prequential records the rows before it, takes that row alone,
as row by row, then records the rest; prequential does not ask a search that races by
the partial AUC (``max_fpr``, whose ensemble reads windowed full AUCs) or whose
candidates' scores are not kernel-prequential (:func:`recordable`).

With a delay, :func:`~aucstream.evaluation.prequential` weaves the rows it scores
(weight 0) among the labels it learns (:mod:`aucstream.evaluation._prequential_weave`):
a piece then holds rows of weight 0, which no candidate learns and the race does not
count. Each alive candidate's score of every row of the piece comes from its call
(kept as ``search._WOVEN``), its calibration is replayed with the rows' weights, and
its windowed AUC before a row of weight 0 is the one before the next row learnt;
weights other than 0 and 1 are :class:`NotExact`.

:class:`Ensemble` is what scores for the search after the chunk, when its ensemble
averages: ``decision_function``'s arithmetic, which :func:`decisions` repeats row by row.
"""

from __future__ import annotations

import contextvars
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple, cast

import numpy as np

from . import _calibration
from ._kernels import jit
from ._sorted_pairs import _gallop, _peek_counts
from ._streaming_auc import RollingAUC

__all__ = [
    "Ensemble",
    "Diverged",
    "NotExact",
    "recording",
    "learn_piece",
    "learn_candidate",
    "recordable",
    "held_by",
    "search_of",
    "learnt_chunk",
    "failing_row",
    "window_pairs",
    "peek_pairs",
    "decisions",
    "in_play",
]


class Ensemble(NamedTuple):
    """What scores for a search whose ensemble averages (``OnePassSearch._scorer``):
    the mean of the calibrated members' scores mapped by their slopes and offsets."""

    members: list[tuple[Any, float, float]]

    def _raw_scores(self, X) -> np.ndarray:
        total = np.zeros(X.shape[0])
        for candidate, slope, offset in self.members:
            total += slope * candidate.score_samples(X) + offset
        return total / len(self.members)

    def score_one(self, x) -> float:
        """:meth:`_raw_scores` of one example through the members' ``score_one``: the
        same arithmetic, so the same float."""
        total = 0.0
        for candidate, slope, offset in self.members:
            total += slope * candidate.score_one(x) + offset
        return total / len(self.members)

    def _coef(self) -> np.ndarray:
        members = self.members
        return cast(np.ndarray, sum(slope * c.coef_[0] for c, slope, _ in members) / len(members))

    def _intercept(self) -> float:  # (the members' own intercepts: score_samples's)
        members = self.members
        own = [(c.intercept_[0] + c.offset_, slope, offset) for c, slope, offset in members]
        return sum(slope * b + offset for b, slope, offset in own) / len(members)

    def _threshold(self) -> float:
        return 0.0


class NotExact(Exception):
    """A piece whose decisions the recording cannot give exactly: raised inside the
    search's call, whose transaction undoes it."""


class Diverged(NotExact):
    """The round leader, or a candidate whose failing row is not found, diverged inside
    the piece: it leaves the race at the row where it fails, which the rows before it,
    recorded, and the row itself, alone, give exactly (:func:`learnt_chunk` raises it
    for its caller to split the chunk; module docstring).

    ``row``: that row's place in the recorded call (0 for its first row), found by
    :func:`failing_row`; None when it was not looked for (then the caller bisects)."""

    def __init__(self, message: str, row: int | None = None) -> None:
        super().__init__(message)
        self.row = row


class recording:
    """Ask the next :class:`~aucstream.OnePassSearch` that learns (the first to claim it,
    e.g. inside a :class:`~aucstream.StreamPipeline`) to write the decision score and
    probability it gave each row before learning it into ``out`` (shape ``(2, n)``);
    a context manager whose ``as`` target is the request (``filled``: rows written).
    Asks through a context variable: the search may not exist before the call."""

    __slots__ = ("out", "filled", "search", "token", "piece")

    def __init__(self, out: np.ndarray) -> None:
        self.out, self.filled = out, 0
        self.search: Any = None  # the search that claimed the request
        self.token: Any = None
        self.piece: _Piece | None = None  # the piece being learnt (before_flush)

    def __enter__(self) -> recording:
        self.token = _REQUEST.set(self)
        return self

    def __exit__(self, *exc) -> None:
        _REQUEST.reset(self.token)


_REQUEST: contextvars.ContextVar[recording | None] = contextvars.ContextVar(
    "aucstream_search_scores", default=None
)


def recordable(search, width: int) -> bool:
    """Whether ``search``'s decisions can be recorded (module docstring): no
    ``max_fpr``, and every candidate (those of a fitted search, or the first race's)
    a plain online learner whose calibration replays over its prequential scores."""
    from .evaluation._prequential_parts import _replays_calibration

    if search.max_fpr is not None:
        return False
    candidates = search.__dict__.get("candidates_")
    if candidates is None:
        try:
            candidates = search._first_list(width, fresh=False)
        except Exception:  # an invalid list: its own check says so when it learns
            return False
    return bool(candidates) and all(_replays_calibration(c) for c in candidates)


def search_of(model) -> Callable[[], Any] | None:
    """How :func:`aucstream.evaluation.prequential` reaches the search whose decisions
    before each row, recorded while it learns a chunk, are ``model``'s
    ``decision_function`` and ``predict_proba`` as they were: the
    :class:`~aucstream.OnePassSearch` itself, or the one a
    :class:`~aucstream.StreamPipeline` holds (its scores are the search's on the rows
    it transformed, as for a plain learner); None otherwise (row by row)."""
    from .pipeline import StreamPipeline
    from .search import OnePassSearch

    if type(model) is OnePassSearch:
        return lambda: model
    if type(model) is StreamPipeline and type(model)._threshold is StreamPipeline._threshold:
        if type(held_by(model)) is OnePassSearch:
            return lambda: held_by(model)
    return None


def learnt_chunk(model, X, y, classes) -> np.ndarray | None:
    """``model.test_then_train(X, y)`` (``classes`` on the first call) with the
    decision score and probability before each row recorded (``(2, n)``), or None,
    the call undone by the model's transaction, when a piece is :class:`NotExact`;
    :class:`Diverged` (the call undone) when a candidate diverged inside it."""
    written = np.empty((2, y.shape[0]))
    extra = {} if classes is None else {"classes": classes}
    getattr(model, "estimator_", None)  # (a pipeline learns the rows it holds first)
    try:
        with recording(written) as request:
            model.test_then_train(X, y, **extra)
    except Diverged:
        raise
    except NotExact:
        return None
    if request.filled != y.shape[0]:
        raise RuntimeError(
            f"internal error: the search recorded {request.filled} of {y.shape[0]} rows; "
            "please report it"
        )
    return written


def held_by(pipeline):
    """The estimator a :class:`~aucstream.StreamPipeline` learns with: its fitted
    ``estimator_``, else the one it will clone (``estimator``, or its default)."""
    fitted = pipeline.__dict__.get("estimator_")
    if fitted is not None:
        return fitted
    return pipeline._default_estimator() if pipeline.estimator is None else pipeline.estimator


def _window_of(metric) -> tuple | None:
    """``(ring_score, ring_label, sorted, counters)`` of a search's windowed metric, or
    None when it is not the plain :class:`RollingAUC` of 0/1 labels (positive 1)."""
    if type(metric) is not RollingAUC or metric.max_fpr is not None or metric.min_tpr is not None:
        return None
    metric._flush()  # (a search's metrics hold no single pairs)
    if metric.pos_label != 1 or [int(v) for v in metric._labels] not in ([1], [1, 0]):
        return None
    return metric._ring_score, metric._ring_label, metric._sorted, metric._counters


class _Piece:
    """What a piece's decisions need from before the search learns it."""

    def __init__(self, search, k: int) -> None:
        from .search import ALIVE

        self.at = int(search.progress_[0])
        self.lead = int(search.progress_[2])
        self.alive = np.flatnonzero(search.status_ == ALIVE)
        self.objects = [search.candidates_[i] for i in self.alive]
        self.seen = [c.__dict__.get("n_samples_seen_", 0) for c in self.objects]
        self.states = [c.calibration_.copy() for c in self.objects]
        self.lo = search._buffered_from(self.lead, windowed=True)
        self.start = int(search.n_samples_seen_)
        self.windows: list | None = None
        self.pairs: dict[int, np.ndarray] = {}  # (counted before a flush: before_flush)
        self.flushed = False
        if self.lead not in self.alive:
            raise NotExact("the round leader is not alive")
        if self.alive.size > 1:
            found = [_window_of(search.recent_[i]) for i in self.alive]
            self.windows = [w for w in found if w is not None]
            if len(self.windows) < len(found):
                raise NotExact("a windowed metric is not a plain RollingAUC")

    def count_windows(self, search, learnt: int, ends: dict, diverged=()) -> None:
        """Each candidate's window counts before each of the piece's ``learnt`` rows and
        after them (:func:`window_pairs`, into ``self.pairs``), but those already
        counted; ``ends``: a revived candidate's rows; the candidates ``diverged`` (their
        row not known yet) have their windows copied instead, for a later count."""
        if self.windows is None:
            return
        at, lo = self.at, self.lo
        numbers = (1 - search.pending_labels_[lo : at + learnt]).astype(np.int8)
        slides = _SLIDES.setdefault(search, {})
        for j, window in enumerate(self.windows):
            i = int(self.alive[j])
            if j in self.pairs:
                continue
            if i in diverged:  # (the flush changes the window in place)
                self.windows[j] = tuple(a.copy() for a in window)
                continue
            n, first = ends.get(j, learnt), at - lo
            pairs = np.empty((3, n + 1), dtype=np.int64)
            scores = np.ascontiguousarray(search.pending_scores_[i, lo : at + n])
            if n + 1 <= _FEW:
                peek: Any = peek_pairs
                peek(*window, numbers[: first + n], scores, first, pairs)
            else:
                slides[i] = _slide(
                    slides.get(i), self, window, numbers[: first + n], scores, pairs,
                    search.candidates_[i], n == learnt and not self.flushed,
                )  # fmt: skip
            self.pairs[j] = pairs

    def write(self, search, k: int, request: recording, keep=None, revived=None) -> None:
        """Write the decisions before the piece's ``k`` rows (``keep``: its rows of
        weight 1, the others scored and learnt by none: each alive candidate's
        scores of all the rows are the search's ``_WOVEN``; before a row of weight 0
        the state is the one before the next row learnt). ``revived``: candidates
        alive up to the row where they diverged (:func:`_until_failure`)."""
        from .search import _WOVEN

        out = request.out
        if request.filled + k > out.shape[1]:
            raise NotExact("more rows than recorded")
        at, a = self.at, self.alive.size
        learnt = k if keep is None else int(np.count_nonzero(keep))
        labels = search.pending_labels_[at : at + learnt]
        if keep is None:
            scores = np.ascontiguousarray(search.pending_scores_[self.alive, at : at + k])
            y_pm, weights = 2.0 * labels - 1.0, _calibration.NO_WEIGHTS
        else:
            scores = np.ascontiguousarray(_WOVEN.pop(search)[self.alive])
            y_pm, weights = np.ones(k), keep.astype(np.float64)
            y_pm[keep] = 2.0 * labels - 1.0
        # until[j]: the last row at which candidate j is alive
        until, ends = np.full(a, k, dtype=np.int64), {}
        for i, (row, prefix, own) in (revived or {}).items():
            j = int(np.flatnonzero(self.alive == i)[0])
            until[j], ends[j] = row, row if keep is None else int(np.count_nonzero(keep[:row]))
            scores[j, :row], scores[j, row], scores[j, row + 1 :] = prefix, own, 0.0
        auc = np.zeros((a, learnt + 1))  # (before each row learnt, and after them all)
        if self.windows is not None:
            self.count_windows(search, learnt, ends)
            for j, pairs in self.pairs.items():
                auc[j, : pairs.shape[1]] = _auc(pairs)
        # (the windowed AUCs before each row: of the rows learnt before it)
        auc = auc[:, :k] if keep is None else auc[:, np.cumsum(keep) - keep]
        lead = int(np.flatnonzero(self.alive == self.lead)[0])
        maps = np.empty((a, 5, k))  # (of the candidates in play: the others are not read)
        for c in np.flatnonzero(in_play(auc, until, lead, int(search.ensemble))).tolist():
            if c in ends:  # (replayed up to its row)
                m, part = until[c] + 1, np.empty((5, until[c] + 1))
                w = weights if keep is None else weights[:m]
                _calibration.replay_maps(self.states[c], scores[c, :m], y_pm[:m], w, part)
                maps[c, :, :m], maps[c, :, m:] = part, 0.0
            else:
                _calibration.replay_maps(self.states[c], scores[c], y_pm, weights, maps[c])
        part = out[:, request.filled : request.filled + k]
        decisions(scores, maps, auc, until, lead, int(search.ensemble), _LOGISTIC, *part)
        request.filled += k


#: Per search, per candidate: where its window's slide stood at the end of its last
#: piece (:func:`_slide`).
_SLIDES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_NO_SLIDE = np.zeros(5, dtype=np.int64)
_NO_RUNS = (np.empty(0), np.empty(0), np.empty(0), np.empty(0))


def _slide(last, piece, window, numbers, scores, out, candidate, keep: bool):
    """:func:`window_pairs` of one candidate's piece, going on from its slide at the end
    of the piece before (``last``) when that one ended where this one starts: the same
    candidate, its window's length and counters (start, size, pair count, class sizes)
    unchanged, buffered rows from the same start, and no row learnt in between (the
    search's count: a window changes only at a flush, inside a learning call, and a
    piece that flushes leaves nothing to go on from); else from the window as it is
    (the arrays are not compared: a call's transaction may copy them apart). Returns
    what the next piece can go on from (None when it cannot: ``keep`` False, after a
    flush or a candidate's last rows, or a buffered row left the window)."""
    first = piece.at - piece.lo
    counters = tuple(window[3].tolist())
    state, kept = _NO_SLIDE, _NO_RUNS
    if (
        last is not None
        and first
        and last[0] is candidate
        and last[1] == window[0].shape[0]
        and last[2] == counters
        and last[3] == (piece.lo, first, piece.start)
        and first + out.shape[1] - 1 <= window[0].shape[0]
    ):
        state, kept = last[4], last[5]
    keep = keep and first + out.shape[1] - 1 <= window[0].shape[0]
    after, runs = window_pairs(*window, numbers, scores, first, out, state, kept, keep)
    if not keep:
        return None
    learnt = out.shape[1] - 1
    return (candidate, window[0].shape[0], counters,
            (piece.lo, first + learnt, piece.start + learnt), after, runs)  # fmt: skip


_LOGISTIC = _calibration.logistic_state()
#: Pieces of at most this many rows peek row by row (:func:`peek_pairs`): the slide of
#: :func:`window_pairs` sorts the buffered rows once per piece, which a short piece
#: does not repay.
_FEW = 4


def peek_pairs(ring_score, ring_label, sorted_scores, counters, numbers, scores, first, out):
    """:func:`window_pairs` by one peek per row (``RollingAUC._peek``'s counts)."""
    w = ring_score.shape[0]
    for r in range(out.shape[1]):
        m = first + r
        lo = max(0, m - w)  # (only the last ``window`` rows count)
        out[:, r] = _peek_counts(
            ring_score, ring_label, sorted_scores, counters, numbers[lo:m], scores[lo:m]
        )


def _auc(pairs: np.ndarray) -> np.ndarray:
    """The windowed AUCs of :func:`window_pairs`'s counts, as ``RollingAUC`` reads them
    (positive class number 0: ``(2 n0 n1 - C) / (2 n0 n1)``; NaN with a class missing)."""
    c, n0, n1 = pairs
    total = 2 * n0 * n1
    out = np.full(c.shape, np.nan)
    ok = total > 0
    out[ok] = (total[ok] - c[ok]) / total[ok]
    return out


def learn_candidate(candidate, X, y, weights, journal=None) -> np.ndarray:
    """A candidate of a search learns the rows of ``X`` (validated by the search) in a
    transaction of its own, which a divergence rolls back; returns their prequential
    scores.

    Its public ``test_then_train``, which takes the fast path of small calls (one row:
    the bound one-row update, as ``learn_one``); ``journal`` (a list, or None)
    receives what undoes the candidate's transaction (``(walk, saved)``, see
    :func:`aucstream.search.search_transaction` and
    :class:`aucstream._runtime.Journalled`). Rows of weight 0 are scored and learnt by
    none (``OnePassSearch``, "Example weights"): the candidate counts the rows learnt.
    """
    from ._runtime import Journalled

    before = candidate.__dict__.get("n_samples_seen_", 0)
    if journal is None:
        scores = candidate.test_then_train(X, y, sample_weight=weights)
    else:
        with Journalled(candidate, journal):
            scores = candidate.test_then_train(X, y, sample_weight=weights)
    if weights is not None and not weights.all():
        candidate.n_samples_seen_ = before + int(np.count_nonzero(weights))
    return scores


def learn_piece(search, X, y, labels, weights) -> np.ndarray:
    """``search._learn_piece(X, y, labels, weights)``, recording the decisions before
    each of its rows when a :class:`recording` asks (module docstring). A candidate
    other than the round leader that diverged inside the piece is put where the row-by-row
    path leaves it (:func:`_until_failure`); otherwise :class:`Diverged` names the row
    (:func:`failing_row`)."""
    from .search import DIVERGED

    request = _REQUEST.get()
    if request is None or (request.search is not None and request.search is not search):
        return search._learn_piece(X, y, labels, weights)
    request.search = search
    keep = None
    if weights is not None:  # (rows of weight 0 woven in: scored, learnt by none)
        if not np.all((weights == 0.0) | (weights == 1.0)):
            raise NotExact("example weights other than 0 and 1")
        keep = None if weights.all() else weights != 0
    piece = _Piece(search, X.shape[0] if keep is None else int(np.count_nonzero(keep)))
    seen = int(search.n_samples_seen_)
    request.piece = piece
    try:
        scores = search._learn_piece(X, y, labels, weights)
    finally:
        request.piece = None
    k = scores.size
    failed = piece.alive[search.status_[piece.alive] == DIVERGED]
    w = None if weights is None else weights[:k]
    if (k if w is None else np.count_nonzero(w)) and any(
        search.candidates_[i] is not c and c.__dict__.get("n_samples_seen_", 0) == seen_c
        for i, c, seen_c in zip(piece.alive, piece.objects, piece.seen)
    ):  # (a reopening at the piece's end put a fresh one in the slot of one that diverged)
        raise Diverged("a candidate diverged inside a piece that reopened the race")
    revived = None
    if failed.size and piece.lead not in failed:
        revived = _until_failure(search, piece, failed, X[:k], y[:k], w, seen)
    if failed.size and revived is None:
        rows = [failing_row(search.candidates_[i], X[:k], y[:k], w) for i in failed]
        found = [r for r in rows if r is not None]
        row = request.filled + min(found) if found and len(found) == len(rows) else None
        raise Diverged("a candidate diverged inside the piece", row)
    piece.write(search, k, request, None if keep is None else keep[:k], revived)
    return scores


def before_flush(search) -> None:
    """Called by ``search._flush`` before it updates the windowed metrics in place: a
    recorded piece counts its candidates' windows now (:meth:`_Piece.count_windows`),
    rather than copying every window beforehand; a candidate that diverged in it has
    its window copied, for the count after its row is found."""
    request = _REQUEST.get()
    piece = None if request is None or request.search is not search else request.piece
    if piece is None:
        return
    from .search import DIVERGED

    piece.flushed = True
    learnt = int(search.progress_[0]) - piece.at
    diverged = {int(i) for i in piece.alive[search.status_[piece.alive] == DIVERGED]}
    piece.count_windows(search, learnt, {}, diverged)


def _until_failure(search, piece, failed, X, y, weights, seen) -> dict | None:
    """Candidates (not the round leader) that diverged inside a piece, as the row-by-row
    path leaves them: each learns, in the call's transaction, the piece's rows before
    the one it fails at (:func:`failing_row`; the search's call had undone it), its
    scores of them buffered, and leaves the race at that row (``dropped_at_``), where
    the search's call dropped it at the piece's start. The other candidates learn as
    if it were not there, so they need nothing. Returns ``{i: (row, scores of the rows
    before it, score of the row)}`` for :meth:`_Piece.write` (each alive up to its row),
    or None when a row is not found (the caller refuses the piece)."""
    from ._race_drift import held_journals
    from .search import _JOURNALS

    journal = _JOURNALS.get(search)
    held = held_journals(search) if journal is None else {}
    out = {}
    for i in failed:
        candidate = search.candidates_[i]
        row = failing_row(candidate, X, y, weights)
        if row is None:
            return None
        w = None if weights is None else weights[:row]
        prefix = np.empty(0)
        if row:
            try:
                prefix = learn_candidate(
                    candidate, X[:row], y[:row], w, held.get(id(candidate), journal)
                )
            except FloatingPointError:  # (a state that failed and recovered: bisect)
                return None
        learnt = row if w is None else int(np.count_nonzero(w))
        at = int(piece.at)
        search.pending_scores_[i, at : at + learnt] = prefix if w is None else prefix[w != 0]
        search.dropped_at_[i] = seen + learnt
        fresh = not candidate.__dict__.get("n_samples_seen_")  # (a fresh one scores 0)
        own = 0.0 if fresh else float(candidate.score_samples(X[row : row + 1])[0])
        out[int(i)] = (row, prefix, own)
    return out


#: A diverged candidate whose state holds more bytes than this is not copied to find
#: the failing row (:func:`failing_row`): the caller bisects the call instead.
_COPY_AT_MOST = 1 << 26


def failing_row(candidate, X, y, weights) -> int | None:
    """The row of ``X`` at which ``candidate``, as it was before a piece it failed to
    learn (its transaction undid the piece), diverges when it learns the rows one
    call after another: a bisection on one copy of it (O(k) rows learnt in all), where
    :func:`aucstream.evaluation.prequential` used to bisect the whole search's call
    (each half refused, all candidates learning it and the transaction undoing it:
    about a third of ``prequential(StreamPipeline())`` on a9a). A call that fails
    leaves the copy as it was (its transaction), so the copy goes on from the last
    good prefix (a copy per trial paid, at each call, a new object's first-call set-up
    of the runtime: docs/results/prequential.md). None when the candidate is larger than
    :data:`_COPY_AT_MOST` or no prefix fails (a state that became infinite and finite
    again within the piece: the caller bisects)."""
    import copy

    from ._state import nbytes_of

    def fails(start: int, stop: int) -> bool:
        w = None if weights is None else weights[start:stop]
        if w is not None and not w.any():  # (rows of weight 0 only: nothing learnt)
            return False
        try:
            learn_candidate(model, X[start:stop], y[start:stop], w)
        except FloatingPointError:
            return True
        return False

    if nbytes_of(candidate) > _COPY_AT_MOST:
        return None
    model, lo, hi = copy.deepcopy(candidate), 0, y.shape[0]  # model: X[:lo]; X[:hi] fails
    while hi - lo > 1:
        mid = lo + (hi - lo) // 2
        if fails(lo, mid):
            hi = mid
        else:
            lo = mid
    # (X[:hi] failing was seen in one call when hi is the whole piece: the row alone,
    # after the others, is tried)
    if hi == y.shape[0] and not fails(lo, hi):
        return None
    return lo


@jit
def _fenwick_add(tree, p, v):
    p += 1
    while p < tree.shape[0]:
        tree[p] += v
        p += p & -p


@jit
def _fenwick_sum(tree, p):
    """The sum of the first ``p`` positions."""
    total = 0
    while p > 0:
        total += tree[p]
        p -= p & -p
    return total


@jit
def _ranks(keys, sorted_scores, sizes, c, below, at_most, kind):
    """For each of the sorted ``keys`` of the other class (``kind % 2 != c``: a key's
    pairs are with the other class only): how many of the window's class ``c``
    scores (sorted, ``sizes[c]`` of them) are below it and how many at most it (the
    keys sorted: each search goes on from the last, :func:`_gallop`)."""
    n, lo, hi = sizes[c], 0, 0
    for p in range(keys.shape[0]):
        if kind[p] % 2 == c:
            continue
        v = keys[p]
        lo = _gallop(sorted_scores[c], lo, n, v, False)
        hi = _gallop(sorted_scores[c], max(lo, hi), n, v, True)
        below[p], at_most[p] = lo, hi


@jit
def _pairs_of(ranks, ties, tree, n1, c, p):
    """The pair count C of one row (class ``c``, its score the key at position ``p``)
    against the other class: the window's scores (``ranks``) and the rows that
    entered or left since (the signed Fenwick trees over the keys, ``ties``: the
    first position of the key's value and the one after its last)."""
    o = 1 - c
    less = ranks[2 * o, p] + _fenwick_sum(tree[o], ties[0, p])
    most = ranks[2 * o + 1, p] + _fenwick_sum(tree[o], ties[1, p])
    if c == 1:  # a "one" above the zeros: 2 #{z < v} + #{z = v}
        return less + most
    return 2 * n1 - most - less  # the ones above it: 2 #{o > v} + #{o = v}


@jit
def _counts_in(keys, sorted_run, below, at_most, sign, kind, c):
    """Add ``sign`` times the count of ``sorted_run``'s values (of class ``c``) below
    each of the sorted ``keys`` of the other class (and at most it) to ``below``
    (``at_most``): one walk of both."""
    n, lo, hi = sorted_run.shape[0], 0, 0
    for p in range(keys.shape[0]):
        if kind[p] % 2 == c:
            continue
        v = keys[p]
        while lo < n and sorted_run[lo] < v:
            lo += 1
        hi = max(hi, lo)
        while hi < n and sorted_run[hi] <= v:
            hi += 1
        below[p] += sign * lo
        at_most[p] += sign * hi


@jit
def _merged(run, keys, take):
    """``run`` (sorted) and the ``keys`` (sorted) where ``take``, merged."""
    out = np.empty(run.shape[0] + np.count_nonzero(take))
    i = j = 0
    for p in range(keys.shape[0]):
        if not take[p]:
            continue
        while i < run.shape[0] and run[i] <= keys[p]:
            out[j] = run[i]
            i, j = i + 1, j + 1
        out[j] = keys[p]
        j += 1
    out[j:] = run[i:]
    return out


@jit
def window_pairs(
    ring_score, ring_label, sorted_scores, counters, numbers, scores, first, out, state, kept,
    keep,
):  # fmt: skip
    """``out[:, r]`` = (C, size of class 0, of class 1) of a ``RollingAUC`` window (its
    arrays) after ``update`` with the first ``first + r`` of ``numbers`` (label numbers)
    and ``scores``, for each ``r < out.shape[1]``: the counts ``_peek`` gives for those
    rows, one row at a time (module docstring), nothing changed.

    Every score that enters or leaves is a *key*: the ring rows that may leave and the
    rows added, sorted once. Before the slide each key gets its counts against the
    window's scores of either class (:func:`_ranks`) and the span of its equal keys;
    the slide then costs each row two Fenwick sums and an addition (no search).

    A slide can go on from an earlier one over the same window and rows
    (:func:`_slide`): ``state`` = (rows slid, C, the two classes' sizes minus the
    window's, ring rows gone) after them, ``kept`` = the sorted scores of the rows
    that entered (class 0, class 1) and of the ring rows that left (class 0, class 1)
    by then; the keys are then this call's rows only, counted against those too (a
    piece no longer slides the rows buffered before it again). ``state[0]`` = 0: from
    the window as it is. Only when no buffered row leaves (``first + out.shape[1] - 1``
    at most the window's length) may a slide go on. ``state`` and ``kept`` come back
    for the rows after all of them (``kept`` only when ``keep``, else empty)."""
    w, k = ring_score.shape[0], out.shape[1]
    start, size = counters[0], counters[1]
    static = counters[3:5].copy()
    t0, ring0 = state[0], state[4]
    pairs = state[1] if t0 else counters[2]
    adds = first + k - 1
    if t0 and adds > w:  # (a buffered row of an earlier call would leave: not a key here)
        raise ValueError("window_pairs: a slide goes on only while no buffered row leaves")
    gone = min(size, max(0, size + adds - w)) - ring0  # ring rows that leave from t0 on
    unsorted = np.empty(gone + adds - t0)
    for j in range(gone):
        unsorted[j] = ring_score[(start + ring0 + j) % w]
    unsorted[gone:] = scores[t0:adds]
    order = np.argsort(unsorted, kind="mergesort")
    keys = unsorted[order]
    m = keys.shape[0]
    where = np.empty(m, dtype=np.int64)  # each key's position in the sorted keys
    ties = np.empty((2, m), dtype=np.int64)  # the first and past-the-last of its value
    for p in range(m):
        where[order[p]] = p
        ties[0, p] = p if p == 0 or keys[p - 1] != keys[p] else ties[0, p - 1]
    for p in range(m - 1, -1, -1):
        ties[1, p] = p + 1 if p == m - 1 or keys[p + 1] != keys[p] else ties[1, p + 1]
    # each key's class (0, 1: a row that enters; 2, 3: a ring row that leaves), in
    # sorted order: its pairs are counted against the other class only
    kind = np.empty(m, dtype=np.int8)
    for p in range(m):
        j = order[p]
        if j < gone:
            kind[p] = 2 + ring_label[(start + ring0 + j) % w]
        else:
            kind[p] = numbers[t0 + j - gone]
    ranks = np.empty((4, m), dtype=np.int64)  # class 0: below, at most; class 1: same
    _ranks(keys, sorted_scores, static, 0, ranks[0], ranks[1], kind)
    _ranks(keys, sorted_scores, static, 1, ranks[2], ranks[3], kind)
    if t0:  # (the rows that entered and left before: counted too)
        for c in range(2):
            _counts_in(keys, kept[c], ranks[2 * c], ranks[2 * c + 1], 1, kind, c)
            _counts_in(keys, kept[2 + c], ranks[2 * c], ranks[2 * c + 1], -1, kind, c)
    sizes = static + state[2:4] if t0 else static
    tree = np.zeros((2, m + 1), dtype=np.int64)
    dyn = np.zeros(2, dtype=np.int64)
    held, ring_left, pend_left = size + t0 - ring0, 0, 0
    for t in range(t0, first + k):
        if t >= first:
            out[0, t - first] = pairs
            out[1, t - first] = sizes[0] + dyn[0]
            out[2, t - first] = sizes[1] + dyn[1]
        if t == adds:
            break
        if held == w:  # the oldest row leaves
            if ring_left < gone:
                c, p = ring_label[(start + ring0 + ring_left) % w], where[ring_left]
                ring_left += 1
            else:  # (a buffered row: t0 is 0)
                c, p = numbers[pend_left], where[gone + pend_left]
                pend_left += 1
            _fenwick_add(tree[c], ties[0, p], -1)
            dyn[c] -= 1
            pairs -= _pairs_of(ranks, ties, tree, sizes[1] + dyn[1], c, p)
            held -= 1
        c, p = numbers[t], where[gone + t - t0]
        pairs += _pairs_of(ranks, ties, tree, sizes[1] + dyn[1], c, p)
        _fenwick_add(tree[c], ties[0, p], 1)
        dyn[c] += 1
        held += 1
    after = np.array([adds, pairs, sizes[0] + dyn[0] - static[0], sizes[1] + dyn[1] - static[1],
                      ring0 + ring_left])  # fmt: skip
    if not keep or pend_left:
        return after, (keys[:0], keys[:0], keys[:0], keys[:0])
    # (each key joins the kept run of its kind)
    before = kept if t0 else (keys[:0], keys[:0], keys[:0], keys[:0])
    return after, (
        _merged(before[0], keys, kind == 0),
        _merged(before[1], keys, kind == 1),
        _merged(before[2], keys, kind == 2),
        _merged(before[3], keys, kind == 3),
    )


@jit(inline="always")
def _alive_at(auc, until, r):
    """The candidates alive before row ``r`` and whether one of their windows lacks a
    class (its AUC NaN)."""
    alive, missing = 0, False
    for j in range(auc.shape[0]):
        if r <= until[j]:
            alive += 1
            if auc[j, r] != auc[j, r]:
                missing = True
    return alive, missing


@jit(inline="always")
def _best(auc, until, r, size, chosen, top):
    """The ``size`` best alive candidates before row ``r`` into ``top``, best first
    (ties by candidate order), as ``_choose`` ranks them."""
    chosen[:] = False
    for m in range(size):
        best = -1
        for j in range(auc.shape[0]):
            if r <= until[j] and not chosen[j] and (best < 0 or auc[j, r] > auc[best, r]):
                best = j
        chosen[best] = True
        top[m] = best


@jit
def in_play(auc, until, lead, ensemble):
    """Whether :func:`decisions` reads candidate ``j``'s maps at some row: the round
    leader's, and those of the best ``ensemble`` before each row (the others' maps
    need not be replayed)."""
    a, k = auc.shape
    mark = np.zeros(a, dtype=np.bool_)
    mark[lead] = True
    top = np.empty(max(1, min(ensemble, a)), dtype=np.int64)
    chosen = np.empty(a, dtype=np.bool_)
    for r in range(k):
        alive, missing = _alive_at(auc, until, r)
        if not (missing or alive < 2):
            size = max(1, min(ensemble, alive))
            _best(auc, until, r, size, chosen, top)
            for m in range(size):
                mark[top[m]] = True
    return mark


@jit
def decisions(scores, maps, auc, until, lead, ensemble, logistic, decision, proba):
    """The search's decision score ``decision[r]`` and probability ``proba[r]`` before
    each row ``r`` of a piece (module docstring; ``_choose`` and the arithmetic of
    ``decision_function`` / ``predict_proba``), from the alive candidates' prequential
    ``scores`` (rows in candidate order), their :func:`aucstream._calibration.replay_maps`
    ``maps`` (of those :func:`in_play`), their windowed ``auc`` before each row, the last
    row ``until[j]`` at which candidate ``j`` is alive (one that diverged inside the
    piece leaves the race after it) and the round leader's row ``lead``."""
    a, k = scores.shape
    top = np.empty(max(1, min(ensemble, a)), dtype=np.int64)
    chosen = np.empty(a, dtype=np.bool_)
    members = np.empty(top.shape[0], dtype=np.int64)
    for r in range(k):
        alive, missing = _alive_at(auc, until, r)
        count = 1
        members[0] = lead
        if not (missing or alive < 2):
            size = max(1, min(ensemble, alive))
            _best(auc, until, r, size, chosen, top)
            count = 0
            for m in range(size):
                if maps[top[m], 2, r] != 0.0:
                    members[count] = top[m]
                    count += 1
            if count < 2 or maps[top[0], 2, r] == 0.0:
                count = 1
                members[0] = top[0]
        if count == 1:
            j = members[0]
            decision[r] = maps[j, 0, r]
            proba[r] = maps[j, 1, r]
            continue
        total = 0.0
        for m in range(count):
            j = members[m]
            total += maps[j, 3, r] * scores[j, r] + maps[j, 4, r]
        mean = total / count
        decision[r] = mean - 0.0
        proba[r] = _calibration.probability_one(logistic, mean)
