r"""The race that reopens: :class:`~aucstream.OnePassSearch` on a stream that changes.

The race of :mod:`aucstream.search` runs once and settles: halving leaves one
candidate, and after a change of concept that candidate stays, however badly it now
ranks. With ``drift`` on (``"auto"``, the default) the search watches its incumbent and
reopens the race when the incumbent's AUC drops.

The watch
---------
The **incumbent** is the round leader, whose prequential scores are the search's own.
At every ``_DRIFT_BLOCK`` examples of the search's buffer (and when the buffer is
flushed into the metrics: at its ends and at rounds) its scores since the last feed
are fed, with their labels, to an :class:`aucstream.drift.AUCDriftDetector`: each
example becomes the :class:`~aucstream.drift.RankSignal` value whose mean is the AUC
(the share of the recent examples of the other class it is ranked correctly against),
and a change detector watches the mean of that signal. ``drift="auto"`` uses
:class:`~aucstream.drift.PageHinkley` with ``mode="down"``: only a *drop* of the AUC
is a drift to react to (a learner's AUC rises as it learns, which a two-sided
detector reads as a change), with River's default threshold (50): twice that missed
changes and reacted later in ``benchmarks/bench_drift.py``, while a false alarm costs
computation only (see below); any :class:`~aucstream.drift.DriftDetector` may be given
instead. The detector starts afresh whenever the incumbent changes (a round crowns
another candidate, a reopening), so it never ranks one scorer's scores against
another's.

The watch, call by call
-----------------------
Feeding the detector every ``_DRIFT_BLOCK`` examples must not cut the candidates'
calls there (a call of a few hundred rows would then make two calls of every alive
candidate, each with its own transaction: twice the cost of ``drift=None``). So a
piece of the search's buffer (up to a block end, a round or the end of the call) is
learnt by the incumbent first, in one call (:func:`lead_first`); its scores are then
fed to the detector at each feed position inside the piece, exactly as if the piece
had been cut there, and the other alive candidates learn the piece in one call each.
Only when a confirmed alarm reopens the race at a feed position inside the piece is
the piece cut there: the incumbent's call is undone (its transaction) and made again
up to that position, the others learn up to it, the race reopens, and the rest of the
call goes on from it. Learning is invariant to chunking, so this is the watch of a
piece cut at every feed, bit for bit, at the cost of one incumbent call more per
reopening; the positions of alarms and reopenings do not depend on how the stream
is cut into calls. (When the incumbent diverges inside a piece, the crowned one's
scores wait for the next flush: an exception, since the search scales nothing.)

The confirmation
----------------
The ranking signal compares each example's score with the recent scores of the
other class, which a learner produced earlier: when the scores drift as a whole (a
column that grows with time, a learner still moving) the signal moves although the
AUC does not, and with a rare positive class the negatives' values, which such a
drift lowers, make nearly all of the signal. So an alarm is only a suspicion. It
reopens the race when the incumbent's exact AUC over its latest k rows, :math:`A_1`
(the fewest rows, at least ``_CONFIRM_ROWS``, with ``_CONFIRM_CLASS`` of each class),
is below the mean :math:`A_0` of its AUCs over the B blocks of the older half of the
rest of its history (cut backwards into blocks of the fewest rows, at least k, with
``_CONFIRM_CLASS`` of each class, as far back as its window reaches: its level
before a change that the detector may have seen late) by more than ``_CONFIRM_Z``
standard errors of the difference,

.. math::

    A_0 - A_1 > z \sqrt{\bar\sigma_0^2/B + \sigma_1^2},

with Hanley & McNeil's (1982) variance of each AUC
(:func:`aucstream._auc_variance.auc_and_variance`; the
blocks share no pair, and are treated as independent). Each AUC ranks the scores of
one block against each other: pooled over a longer span, the scores of a learner
that moves (or of a drifting column) are not comparable, which is the trouble with
the signal in the first place. When the incumbent's history is too short to tell (a
race reopened less than a window ago, too few examples of a class), the alarm
reopens as before. An unconfirmed
alarm is checked again at each feed of the detector (every ``_DRIFT_BLOCK``
examples) for ``_CONFIRM_WAIT`` examples after it, while the latest rows come more
and more after the change (the alarm came within a few hundred rows of it, and they
then mix both concepts); the detector, restarted by the alarm, may raise the next.

The reopening
-------------
On a confirmed alarm, unless the current race is younger than ``2 * first_round``
examples (a new race gets time to settle before it can be reopened), at stream
position :math:`p`:

1. the incumbent keeps learning and scoring (the search's scores stay its scores);
2. the **fresh candidates** start from nothing at :math:`p`: one per candidate of the
   first race, with its parameters and, when its class takes ``half_life``
   (``get_params()``), ``half_life = _FRESH_HALF_LIFE`` (forgetting, the library's
   one meaning, :data:`aucstream._params.FORGETTING`), so that the newcomers keep
   adapting; a fresh candidate that is itself the incumbent is kept as it is. Of a
   first race of more than ``_FRESH_ALL`` candidates, only those that survived its
   first ``_FRESH_ROUNDS`` rounds get a fresh copy (:func:`slow`), and of each
   learner type none of whose candidates did, the first that survived the round
   before: those rounds measured how fast each learns from nothing, which is what a
   reopened race asks, and a reopened race of all of them cost as much as the first
   race again (in ``benchmarks/bench_drift.py``, about the same AUC;
   docs/results/drift.md); the survivors of one round gave a better worst abrupt
   stream but reopenings a tenth dearer (what they added was a type the first race had
   dropped at its second round: a type's first survivor of round one keeps that);
3. the other candidates of the previous race are retired (their states reflect the
   old concept, and the newcomers include their kind);
4. the incumbent's window is emptied: from :math:`p` on, the incumbent and every
   newcomer are judged on the same examples, the ones all of them have seen;
5. the rounds restart: at :math:`p + (n_0/4) 2^k` (``first_round // 4`` rather than
   ``first_round``: the incumbent's alarm is itself evidence against it, and every row
   it keeps scoring after a change is scored by the old concept), with the racing and
   halving rules of :mod:`aucstream.search` over the incumbent and the newcomers; for
   ``_SPARE_ROWS`` examples, while the incumbent leads, halving spares the best
   newcomer (:func:`spared_newcomer`): in a gradual change the old concept leads at
   first, and halving had dropped every newcomer before they could overtake.

A reopening writes no metric: it can happen inside a call of a few rows, whose
transaction copies only the small state (:func:`aucstream.search.search_transaction`).
The buffered scores of the rows before it still go to the incumbent's prequential AUC at
the next block end, not to its (emptied) window nor to the restarted candidates'
metrics; a retired candidate's metrics stop at the last block end before it.

So a newcomer takes over at a round where its windowed AUC (over the span since
:math:`p`, which both have seen) is the best, the incumbent winning ties by its
earlier position in ``candidates_`` unless it is itself a fresh slot, or earlier by
the handover (below). Until then the incumbent scores: a false alarm costs
computation (the reopened race), never the search's scores, and a stationary stream
that raises no alarm is learnt exactly as with ``drift=None``, bit for bit (the
fresh slots wait, learning nothing). The transaction of a call that reaches a block
end or a round does not copy the candidates that are not alive at its start
(:func:`untouched`): a dropped or retired one is never written again, and a waiting
slot is replaced, not written, when a reopening starts it.

The handover
------------
A round of the reopened race waits for ``min_class`` examples of each class in the
window: with 2% positives its first rounds (at :math:`p + 500` and :math:`p + 1000`
by default) pass without a decision, while an incumbent that the change broke keeps
scoring near chance (``benchmarks/bench_drift.py``, linear abrupt 2%: about 2,000
rows). So at every metric update of a reopened race (block ends and rounds) the
alive candidate :math:`i` whose windowed AUC :math:`A_i` beats the round leader's
:math:`A_l` by the most takes the scoring over (:func:`handover`: it becomes the
round leader, the race itself goes on) when

.. math::

    A_i - A_l > z \sqrt{V_i + V_l},

with Hanley & McNeil's (1982) variances :math:`V`
(:func:`aucstream._auc_variance.hanley_mcneil`) of the two
windows (the same rows since :math:`p`; treated as independent, which overstates the
variance of the difference of two positively correlated AUCs: the test is
conservative), ``_HANDOVER_Z`` :math:`= z = 1` (as good as 2 or better on every
draw measured), at least ``_HANDOVER_CLASS`` (5) examples of each class in the window,
not when the race is by the partial AUC (``max_fpr``: the variance is the full AUC's).
It needs no more rows than the rounds' metric updates: it moves no cut of the calls.

The transactions
----------------
A call to the search, or to a :class:`~aucstream.StreamPipeline` holding it, that
reaches a metric update (and every learning call of such a pipeline) saves the state
through :func:`held_transaction`: a walk of the state kept between calls in which
the metrics and the idle candidates (:func:`untouched`: the waiting fresh slots, the
dropped and retired ones) are opaque, plus a copy of the alive candidates' metrics
when the call may update them. A Python copy of the whole search at every call (the
17 waiting fresh slots of the default candidates included) was most of the cost of
``drift`` on a stream without an alarm (docs/results/drift.md). Inside a holder's
transaction the search makes none of its own (:func:`under_holder`): the holder's
already saved all the search's call can write, and a second walk, of the search, was
rebuilt (its identity check compiled anew) each time a reopened race replaced a
candidate or a new incumbent its detector. The detector too is opaque in the walk and
copied apart at every call (it is small): a new incumbent's watch is the same
detector reset (:func:`restart_watch`), which would otherwise make the walk stale at
every crowning. A call that reaches no metric update (no block end) writes the
search's buffer (a row per candidate, the waiting slots' included) only in the columns
of its own rows: its transaction copies those columns apart, not the whole buffer.

Everything happens at stream positions (blocks and rounds), so chunking, saving and
resuming stay exact; the detector is part of the state (``drift_``).

Selection by the target metric
------------------------------
With ``max_fpr`` :math:`= \beta`, the racing statistic is the exact partial AUC over
false positive rates up to :math:`\beta` of each candidate's window
(:class:`aucstream.metrics.RollingAUC`, McClish-standardized as scikit-learn's
``roc_auc_score(max_fpr=)``), and the candidates include the partial-AUC learners of
``aucstream.pauc`` when that module is present. The racing bound uses
:math:`m = \min(n_+, \lfloor \beta n_- \rfloor)`: the partial AUC is an average over
the pairs of a positive and one of the :math:`\beta n_-` highest-scored negatives,
and the standardization shrinks deviations by :math:`1/(2-\beta) \le 1`, so the
bound of the full AUC with that :math:`m` holds (heuristically, as for the full AUC:
the top negatives are chosen by the scores themselves). The leaderboard's
``prequential_auc`` stays the full AUC; the drift signal watches the full AUC, whose
drop is the change of concept.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from typing import Any

import numpy as np
from sklearn.base import clone

from . import _state
from ._auc_variance import block_aucs, hanley_mcneil
from ._base import BaseStreamingAUC
from ._pauc_race import GuardedPartialAUC
from ._runtime import Journalled, journals_by_log, journals_calls, settle
from ._streaming_auc import PrequentialAUC, RollingAUC
from .drift import AUCDriftDetector, DriftDetector, PageHinkley, RankSignal

__all__ = [
    "fresh_candidates",
    "may_reopen",
    "lead_first",
    "new_detector",
    "reopen",
    "restart_watch",
    "slot_metrics",
    "spared_newcomer",
    "until_watch",
    "under_holder",
    "untouched",
    "held_transaction",
    "quiet_call",
    "first_round",
    "frozen_ok",
    "watch",
]

#: Examples per block of the incumbent's scores fed to the detector (and of the
#: metrics' updates) while ``drift`` is on: the delay of a reaction is at most a block.
#: (Smaller blocks reopen sooner after a change, but, confirming each alarm more often,
#: also after more false alarms: no better on ``benchmarks/bench_drift.py``'s streams,
#: nor a lower Page-Hinkley threshold or a looser confirmation; docs/results/drift.md.)
_DRIFT_BLOCK = 512
#: ``half_life`` of the fresh candidates whose class takes one (in examples).
_FRESH_HALF_LIFE = 5000.0
#: Examples after a reopening during which halving spares a newcomer (their half-life).
_SPARE_ROWS = int(_FRESH_HALF_LIFE)
#: A reopened race runs the fresh slots of the first race's candidates that survived
#: its first ``_FRESH_ROUNDS`` rounds, and one per learner type that lost all its
#: candidates in the last of them (:func:`slow`).
_FRESH_ROUNDS = 2
#: ... unless the first race had at most this many candidates: then all of them.
_FRESH_ALL = 4
#: Candidate status codes of the reopened race (after those of aucstream.search).
WAITING, RETIRED = 4, 5
#: The confirmation of an alarm (:func:`confirmed`): the latest rows of the incumbent
#: compared with those before them, at least this many rows, this many of each class,
#: and a drop of this many standard errors of the difference.
_CONFIRM_ROWS = 1024
_CONFIRM_CLASS = 20
_CONFIRM_Z = 1.0
#: An unconfirmed alarm is checked again at each feed of the detector for this many
#: examples after it (its latest rows then come more and more after the change).
_CONFIRM_WAIT = 3 * _DRIFT_BLOCK
#: The handover in a reopened race (:func:`handover`): a candidate takes the scoring
#: over from the round leader at a metric update when its windowed AUC beats the
#: leader's by this many standard errors of the difference (None: at rounds only),
#: the windows holding at least ``_HANDOVER_CLASS`` examples of each class.
_HANDOVER_Z: float | None = 1.0
_HANDOVER_CLASS = 5
#: ``race_``: [start of the current race, reopenings, alarms, position of the last
#: alarm, number of candidates of the first race, buffered examples fed].
START, REOPENS, ALARMS, LAST_ALARM, N_FIRST, FED = range(6)


def fresh_candidates(first: list[BaseStreamingAUC]) -> list[BaseStreamingAUC]:
    """One fresh candidate per candidate of the first race: its parameters, with
    ``half_life = _FRESH_HALF_LIFE`` when its class takes one and it does not forget."""
    out = []
    for c in first:
        params = c.get_params(deep=False)
        forgets = "half_life" in params and params["half_life"] is None
        out.append(_unfitted(c, params, half_life=_FRESH_HALF_LIFE) if forgets else _unfitted(c))
    return out


def _unfitted(c: BaseStreamingAUC, params: dict | None = None, **changes) -> BaseStreamingAUC:
    """A new unfitted learner of ``c``'s class with its parameters (``params``: read
    already) each cloned, then ``changes``: one read of the parameters (``clone`` then
    ``set_params`` make four). Not carried: a metadata request, ``set_output``."""
    params = c.get_params(deep=False) if params is None else params
    cloned = {k: clone(v, safe=False) for k, v in params.items()}
    return type(c)(**{**cloned, **changes})


def new_detector(drift) -> AUCDriftDetector:
    """The incumbent's watch for ``drift`` ("auto" or a DriftDetector), with no history."""
    base = PageHinkley(mode="down") if drift == "auto" else clone(drift)
    assert isinstance(base, DriftDetector)
    return AUCDriftDetector(base, pos_label=1)


def restart_watch(search) -> None:
    """The incumbent's watch with no history, in place (as :func:`new_detector` makes
    it): the same object keeps a holder's walk (:func:`held_transaction`) current."""
    search.drift_.reset()


def slot_metrics(make: Callable[[], Any], first: int, k: int) -> list[Any]:
    """A metric per candidate of the first race, None per waiting fresh slot (a
    reopening gives it metrics: transactions need not copy their empty windows)."""
    return [make() for _ in range(first)] + [None] * (k - first)


def untouched(search) -> tuple:
    """What a call to ``search`` can not write (a transaction need not copy it): the
    candidates that are not alive at its start, with their metrics. A dropped or
    retired candidate never learns again and its metrics stop; a waiting fresh slot
    is replaced, objects and metrics, when a reopening starts it, never written."""
    from .search import ALIVE, OnePassSearch

    if not isinstance(search, OnePassSearch) or "status_" not in search.__dict__:
        return ()
    idle = np.flatnonzero(search.status_ != ALIVE)
    return tuple(
        part
        for i in idle
        for part in (search.candidates_[i], search.overall_[i], search.recent_[i])
        if part is not None
    )


#: The searches whose holder's :func:`held_transaction` runs, with its ``quiet``.
_COVERED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def under_holder(search, n: int | None):
    """The transaction of a call of ``n`` rows to ``search`` inside a transaction of its
    holder (:func:`held_transaction`, a :class:`~aucstream.StreamPipeline`'s) that
    saved all the call can write, or None (no such holder's transaction runs; or it
    left the metrics out and the call may update them): the holder's restores the
    search if the call fails, so the search's own would copy it all again for nothing
    (a walk rebuilt, and compiled, each time a reopened race replaces a candidate or
    the detector). With the metrics left out, the search's guard refuses an update
    (:func:`aucstream.search.search_transaction`)."""
    quiet = _COVERED.get(search)
    if quiet is None or (quiet and not search._between_updates(n)):
        return None
    return _guarded(search) if quiet else nullcontext()


@contextmanager
def _guarded(search) -> Iterator[None]:
    """No metric update of ``search`` while the block runs (an internal error)."""
    from .search import _FROZEN

    _FROZEN.add(search)
    try:
        yield
    finally:
        _FROZEN.discard(search)


#: The walks of :func:`held_transaction`, by owner (kept while the owner lives).
_HELD_WALKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: The journals of :func:`held_transaction`'s calls in progress, by search: the
#: journal of each candidate left out of the walk, by the candidate's id.
_HELD_JOURNALS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_NO_JOURNALS: dict = {}


def held_journals(search) -> dict:
    """``{id(candidate): journal}`` of the candidates whose calls go into a journal
    during a :func:`held_transaction` of ``search`` (those that journal undo logs,
    left out of the walk); empty outside one (the walk covers every candidate)."""
    return _HELD_JOURNALS.get(search, _NO_JOURNALS)


@contextmanager
def held_transaction(
    owner, search, quiet: bool, X: object = None, steps: tuple = ()
) -> Iterator[None]:
    """The whole state's transaction of a call to ``owner`` (``search`` itself, or a
    :class:`~aucstream.StreamPipeline` that holds it) of ``X``'s rows (None: unknown)
    that reaches a metric update (``quiet`` False), or not (True: the call can not
    write the metrics).

    Through a walk of ``owner``'s state kept between calls (one compiled copy per
    call instead of a Python walk of everything), in which the search's metrics and
    its idle candidates (:func:`untouched`: the waiting fresh slots, which the
    search's transactions would otherwise walk at every call, the dropped and
    retired ones) are opaque: checked by identity, not entered. The metrics change
    their arrays' objects as they merge their runs (a walk entering them would be
    stale after every update): the metrics of the alive candidates are copied apart
    (:func:`aucstream._state.snapshot`) when the call may update them; the idle
    candidates and metrics are never written (a waiting slot is replaced, not
    written, which makes the walk stale: it is walked again). A quiet call of ``n``
    known rows reaches no block end, so it writes the search's buffer
    (``pending_scores_``, one row per candidate, the waiting slots' included, and
    ``pending_labels_``) in its columns ``at .. at + n`` only: those columns are
    copied apart, not the whole buffer (as the search's own quiet transaction does,
    :func:`aucstream.search.search_transaction`). A call that fails puts everything
    back, as a copy of the whole state would.

    Neither are copied the alive candidates whose calls journal undo logs
    (:func:`aucstream._runtime.journals_by_log`: states above
    :data:`aucstream._state.SHADOW_LIMIT`, 24 to 32 MB each for the wide race at 10^6
    features), nor ``steps``, the owner's other learners that journal their calls (a
    pipeline's scaler, called once per call): their calls go into a journal
    (:func:`held_journals`, :class:`aucstream._runtime.Journalled`), undone, last first,
    when the call fails. An undo log stays valid across the several calls a
    candidate may make in one call (a piece per block, twice across a reopening).
    """
    from .search import ALIVE, _n_rows

    if "status_" not in search.__dict__:  # not started: a copy of the whole state
        with _state.transaction(owner):
            yield
        return
    watch = search.drift_
    steps = tuple(step for step in steps if journals_calls(step))
    flat, opaque, declared, logged = _HELD_WALKS.get(owner, (None, frozenset(), {}, frozenset()))
    if flat is None or not flat.current(owner):
        idle = untouched(search)
        metrics = [m for m in (*search.overall_, *search.recent_) if m is not None]
        alive = np.flatnonzero(search.status_ == ALIVE)
        logged = frozenset(
            id(c) for c in (search.candidates_[i] for i in alive) if journals_by_log(c)
        )
        watched = [watch] if watch is not None else []
        opaque = frozenset(map(id, (*metrics, *idle, *watched, *steps))) | logged
        flat, declared = _state.FlatState(owner, opaque=opaque), {}
        _HELD_WALKS[owner] = (flat, opaque, declared, logged)
    # (what the walk did not enter needs no declaring: only candidates dropped since).
    # While the walk is current, the candidates and metrics are the objects it found:
    # what is idle is a function of the statuses (kept per statuses with the walk)
    status = search.status_.tobytes()
    read_only = declared.get(status)
    if read_only is None:
        read_only = tuple(part for part in untouched(search) if id(part) not in opaque)
        if len(declared) >= 16:
            declared.clear()
        declared[status] = read_only
    buffer = (search.pending_scores_, search.pending_labels_)
    columns: slice | None = None
    kept: tuple[np.ndarray, ...] = ()
    n = _n_rows(X) if quiet and X is not None else None
    if n is not None:  # (no block end: the buffer's columns of the call's rows only)
        at = int(search.progress_[0])
        columns = slice(at, at + n)
        kept = tuple(a[..., columns].copy() for a in buffer)
        read_only += buffer
    saved = flat.save(flat.plan(read_only))
    written = () if quiet else np.flatnonzero(search.status_ == ALIVE)
    apart = [
        (metric, _state.snapshot(metric))
        for i in written
        for metric in (search.overall_[i], search.recent_[i])
    ]
    if watch is not None:  # (small; restarted in place: restart_watch)
        apart.append((watch, _watch_snapshot(watch)))
    covering = owner is not search
    if covering:
        _COVERED[search] = quiet
    guard = _guarded(search) if quiet and not covering else nullcontext()
    journal: list = []
    if logged:
        _HELD_JOURNALS[search] = dict.fromkeys(logged, journal)
    try:
        with ExitStack() as blocks, guard:  # (guard: the search's own quiet call makes
            for step in steps:  # no metric update, as its holder's)
                blocks.enter_context(Journalled(step, journal))
            yield
    except BaseException:
        for walk, undo in reversed(journal):
            walk.restore(undo)
        flat.restore(saved)
        for a, old in zip(buffer, kept):
            a[..., columns] = old
        for part, contents in apart:
            if part is watch:
                _watch_restore(contents)
            else:
                _state.restore(part, contents)
        raise
    finally:
        _HELD_JOURNALS.pop(search, None)
        if covering:
            _COVERED.pop(search, None)
    settle(journal)
    if not flat.current(owner):  # the call replaced state objects: do not hold the old
        del _HELD_WALKS[owner]


#: The types of the default watch's attributes kept by reference in its snapshot.
_PLAIN = frozenset((int, float, str, bool, type(None), RankSignal, PageHinkley))


def _watch_snapshot(watch) -> Any:
    """:func:`aucstream._state.snapshot` of the incumbent's watch, for a
    transaction: the default's (an :class:`~aucstream.drift.AUCDriftDetector` of a
    :class:`~aucstream.drift.PageHinkley`, whose parts hold scalars, arrays and a list
    of labels only) as a copy of each part's attributes, four dictionaries (the
    generic walk visits every attribute: most of the watch's cost in a quiet call);
    any other, the generic snapshot (a pair ``(watch, snapshot)``)."""
    signal, detector = watch.__dict__.get("signal_"), watch.__dict__.get("detector_")
    parts = (watch, signal, detector, watch.__dict__.get("detector"))
    if not (type(signal) is RankSignal and all(type(p) is PageHinkley for p in parts[2:])):
        return (watch, _state.snapshot(watch))
    saved = []
    for part in parts:
        contents = vars(part).copy()
        for k, v in contents.items():
            kind = type(v)
            if kind is np.ndarray or kind is list:
                contents[k] = v.copy()
            elif kind not in _PLAIN:
                return (watch, _state.snapshot(watch))  # (a part of another kind)
        saved.append((part, contents))
    return saved


def _watch_restore(saved) -> None:
    """Put the watch back to a :func:`_watch_snapshot` (the same objects)."""
    if isinstance(saved, tuple):
        _state.restore(*saved)
        return
    for part, contents in saved:
        vars(part).clear()
        vars(part).update(contents)


def quiet_call(search, X: object) -> bool | None:
    """Whether a call of ``X``'s rows to ``search`` reaches no metric update (no block
    end, no round, no reopening's round: ``OnePassSearch._between_updates``; False
    when ``X`` is not 2-D); None for anything but a fitted
    :class:`~aucstream.OnePassSearch`. For the transaction of a holder
    (:class:`~aucstream.StreamPipeline`, :func:`held_transaction`)."""
    from .search import OnePassSearch, _n_rows

    if not isinstance(search, OnePassSearch) or "progress_" not in search.__dict__:
        return None
    return search._between_updates(_n_rows(X))


def until_watch(buffered: int) -> int:
    """Examples from a buffer of ``buffered`` to the detector's next feed."""
    return _DRIFT_BLOCK - buffered % _DRIFT_BLOCK


def may_reopen(search, n: int | None) -> bool:
    """Whether a call of ``n`` rows reaches a feed of the detector, so may reopen the
    race: its incumbent then learns twice (up to the reopening, and after it), which a
    journal of one call per learner (:class:`aucstream._runtime.Journalled`) can not
    undo; its quiet transaction is :func:`held_transaction`'s."""
    if search.__dict__.get("drift_") is None or n is None:
        return False
    return n >= until_watch(int(search.progress_[0]))


def first_round(search) -> int:
    """Examples from a reopening to the first round of its race."""
    return max(1, int(search.first_round) // 4)


def frozen_ok(search, n: int) -> bool:
    """Whether a call of ``n`` rows can leave the metrics untouched as far as the
    watch goes: it reaches no feed of the detector, or it is too short to reach the
    first round of a race reopened at one."""
    return n < until_watch(int(search.progress_[0])) or n <= first_round(search)


def watch(search) -> bool:
    """Feed the incumbent's buffered scores not yet fed to the detector; whether an
    alarm calls for reopening the race (not while the race is young)."""
    if search.drift_ is None:
        return False
    race = search.race_
    fed, m = int(race[FED]), int(search.progress_[0])
    if fed == m:
        return False
    race[FED] = m
    lead = int(search.progress_[2])
    scores = search.pending_scores_[lead, fed:m]
    alarms = search.drift_.update_many(scores, search.pending_labels_[fed:m])
    n = search.n_samples_seen_
    if alarms.size:
        race[ALARMS] += alarms.size
        race[LAST_ALARM] = n - scores.size + int(alarms[-1]) + 1
    elif not (race[LAST_ALARM] > race[START] and n - race[LAST_ALARM] <= _CONFIRM_WAIT):
        return False  # no alarm, and none waits for its confirmation
    return n - race[START] >= 2 * search.first_round and confirmed(search, lead, m)


def lead_first(search, X, y, labels, weights, journal, keep=None) -> tuple[int, bool, Any]:
    """Learn a piece of the search's buffer with the incumbent first and watch it
    (module docstring, "The watch, call by call"): the incumbent learns the whole
    piece in one call, its scores are fed to the detector at each feed position
    inside it (the piece's end too, unless it is a block end or a round, whose flush
    feeds it). Returns ``(k, reopen, scores)``: the rows of the piece the other alive
    candidates are to learn (all of them, or up to a confirmed alarm, where the race
    reopens once they learnt them: ``reopen``), the incumbent having learnt exactly
    those ``k`` rows, and its scores of them (None when it diverged).

    ``keep`` (None: every row): the rows of positive weight, the others scored and
    learnt by none (``OnePassSearch``, "Example weights"); the buffer and the feed
    count the rows learnt, and an alarm cuts the piece right after its row.
    ``journal`` (a list, or None): see :func:`aucstream.search.search_transaction`.
    """
    from ._search_scores import learn_candidate
    from .search import DIVERGED

    lead, n = int(search.progress_[2]), X.shape[0]
    m = n if keep is None else int(np.count_nonzero(keep))  # (the rows learnt)
    at, seen = int(search.progress_[0]), search.n_samples_seen_
    stale = (
        search.pending_labels_[at : at + m].copy(),
        search.pending_scores_[lead, at : at + m].copy(),
    )
    search.pending_labels_[at : at + m] = labels if keep is None else labels[keep]
    saved: list = []  # the incumbent's transaction, to undo its rows after a reopening
    got: np.ndarray | None = None
    try:
        got = learn_candidate(search.candidates_[lead], X, y, weights, saved)
        search.pending_scores_[lead, at : at + m] = got if keep is None else got[keep]
    except FloatingPointError:  # the search crowns another (the feed waits for its flush)
        search._drop(lead, DIVERGED, seen)
        return n, False, None
    finally:
        if journal is not None:
            journal.extend(saved)
    flushed = at + m == search._BLOCK or seen + m >= search.progress_[1]
    last = at + m - (1 if flushed else 0)
    cut = 0
    try:
        for g in range(at + until_watch(at), last + 1, _DRIFT_BLOCK):
            search.progress_[0], search.n_samples_seen_ = g, seen + g - at
            if watch(search):
                cut = g - at
                break
    finally:
        search.progress_[0], search.n_samples_seen_ = at, seen
    if not cut:
        return n, False, got
    rows = cut if keep is None else int(np.flatnonzero(keep)[cut - 1]) + 1  # (X's rows)
    if cut < m:  # the incumbent learnt past the reopening: its rows up to it only
        for walk, undo in reversed(saved):
            walk.restore(undo)
        if journal is not None and saved:  # (undone: a journal holds one call of a
            del journal[-len(saved) :]  # learner, whose next one may reuse its copies)
        search.pending_labels_[at + cut : at + m] = stale[0][cut:]  # (as they were)
        search.pending_scores_[lead, at + cut : at + m] = stale[1][cut:]
        again: list = []
        w = None if weights is None else weights[:rows]
        try:
            got = learn_candidate(search.candidates_[lead], X[:rows], y[:rows], w, again)
            search.pending_scores_[lead, at : at + cut] = got if keep is None else got[keep[:rows]]
        except FloatingPointError:
            search._drop(lead, DIVERGED, seen)
            got = None
        finally:
            if journal is not None:
                journal.extend(again)
    return rows, True, None if got is None else got[:rows]


def history(search, lead: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """The incumbent's labels (0/1) and scores in arrival order, as far back as its
    window metric reaches (``recent_``, emptied at each reopening) and then the
    buffered rows ``:m`` that metric has not taken yet."""
    recent = search.recent_[lead]
    start, size = int(recent._counters[0]), int(recent._counters[1])
    at = (start + np.arange(size)) % recent.window
    lo = search._buffered_from(lead, windowed=True)
    # (the ring numbers a class as the metric does: 0 for the positive one)
    labels = np.concatenate([1 - recent._ring_label[at], search.pending_labels_[lo:m]])
    scores = np.concatenate([recent._ring_score[at], search.pending_scores_[lead, lo:m]])
    return labels, scores


def after_flush(search, confirmed_alarm: bool) -> None:
    """After a metric update: reopen the race on a confirmed alarm, else perhaps hand
    the scoring over (:func:`handover`)."""
    if confirmed_alarm:
        reopen(search)
    else:
        handover(search)


def handover(search) -> None:
    """In a reopened race, crown the alive candidate whose windowed AUC beats the
    round leader's by the most, if by more than ``_HANDOVER_Z`` standard errors of
    the difference (module docstring, "The handover")."""
    from .search import ALIVE

    if search.drift_ is None or not search.race_[REOPENS] or _HANDOVER_Z is None:
        return
    if search.max_fpr is not None:  # (the variance is the full AUC's: rounds only)
        return
    lead = int(search.progress_[2])
    alive = np.flatnonzero(search.status_ == ALIVE)
    if alive.size < 2 or search.status_[lead] != ALIVE:
        return
    stats = {}
    for i in alive:
        recent = search.recent_[i]
        n1, n0 = int(recent.n_positive), int(recent.n_negative)
        if min(n1, n0) < _HANDOVER_CLASS:
            return  # (the windows hold the same rows since the reopening)
        a = float(recent.get())
        stats[int(i)] = (a, hanley_mcneil(a, n1, n0))
    a_lead, v_lead = stats.pop(lead)
    best, margin = -1, 0.0
    for j, (a, v) in stats.items():
        if a - a_lead > max(margin, _HANDOVER_Z * np.sqrt(v + v_lead)):
            best, margin = j, a - a_lead
    if best >= 0:
        search._crown(best)


def block_start(labels: np.ndarray, end: int, rows: int) -> int:
    """The start of the shortest block ending at ``end`` with at least ``rows`` rows
    and ``_CONFIRM_CLASS`` of each class (-1: there is none)."""
    return _block_start(np.concatenate(([0], np.cumsum(labels[:end]))), end, rows)


def _block_start(ones: np.ndarray, end: int, rows: int, zeros: np.ndarray | None = None) -> int:
    """:func:`block_start` from the counts of positives before each position
    (``ones[i]``: among the first ``i`` labels; ``zeros``, of negatives, from them
    when not given): the latest start that leaves ``rows`` rows, the latest that
    leaves ``_CONFIRM_CLASS`` positives and the latest that leaves as many negatives
    (each condition holds from its latest start backwards, the counts never
    decreasing: the shortest block starts at the earliest of the three)."""
    if zeros is None:
        zeros = np.arange(ones.size) - ones
    lo = min(
        end - rows,
        int(np.searchsorted(ones, ones[end] - _CONFIRM_CLASS, side="right")) - 1,
        int(np.searchsorted(zeros, zeros[end] - _CONFIRM_CLASS, side="right")) - 1,
    )
    return lo if lo >= 0 else -1


def confirmed(search, lead: int, m: int) -> bool:
    """Whether the incumbent's AUC really dropped (module docstring, "The
    confirmation"): its AUC over its latest rows (at least ``_CONFIRM_ROWS``, and
    ``_CONFIRM_CLASS`` of each class) is below the mean of its AUCs over the blocks
    of the older half of its history by more than ``_CONFIRM_Z`` standard errors of
    the difference. True
    when the history is too short to tell (a young race, a rare class): the alarm
    then reopens, as without the confirmation."""
    labels, scores = history(search, lead, m)
    ones = np.concatenate(([0], np.cumsum(labels, dtype=np.int64)))
    zeros = np.arange(ones.size) - ones
    blocks: list[tuple[int, int]] = []  # (lo, hi): the latest rows, then those before
    hi, rows = labels.size, _CONFIRM_ROWS
    while True:
        lo = _block_start(ones, hi, rows, zeros)
        if lo < 0:
            break
        blocks.append((lo, hi))
        rows = blocks[0][1] - blocks[0][0]  # the blocks before: at least as long
        hi = lo
    if len(blocks) < 2:
        return True
    earlier = blocks[1:]
    older = earlier[len(earlier) // 2 :]  # the older half (the latest block's alone: itself)
    (a_after, v_after), *before = block_aucs(labels, scores, [blocks[0], *older])
    a_before = float(np.mean([a for a, _ in before]))
    v_before = float(np.mean([v for _, v in before])) / len(before)
    return a_before - a_after > _CONFIRM_Z * np.sqrt(v_before + v_after)


def spared_newcomer(search, alive, kept: list) -> int | None:
    """The position in ``alive`` of the newcomer a reopened race's halving spares
    ("The reopening"): within ``_SPARE_ROWS`` of the reopening, while a candidate of the
    previous race leads ``kept`` (best first), the best that started at it; else None."""
    start = int(search.race_[START])
    if start == 0 or search.n_samples_seen_ - start >= _SPARE_ROWS:
        return None
    if search.started_at_[alive[kept[0]]] >= start:  # (a newcomer leads)
        return None
    return next((j for j in kept if search.started_at_[alive[j]] >= start), None)


def slow(search, i: int) -> bool:
    """Whether the first race's candidate ``i``'s fresh slot stays out of a reopened
    race (module docstring, "The reopening"): it diverged; or, of a list of more than
    ``_FRESH_ALL``, it was dropped at (or before) that race's round ``_FRESH_ROUNDS``,
    unless it survived the round before and is the first such candidate of a class
    (a learner type) of which none survived round ``_FRESH_ROUNDS``."""
    from .search import DIVERGED

    if search.status_[i] == DIVERGED:
        return True
    if search.race_[N_FIRST] <= _FRESH_ALL:  # a short list: every slot runs
        return False
    last = int(search.first_round) * 2 ** (_FRESH_ROUNDS - 1)  # its round _FRESH_ROUNDS
    if _survived(search, i, last):
        return False
    if _FRESH_ROUNDS < 2 or not _survived(search, i, last // 2):
        return True
    kind = type(search.candidates_[i])
    kin = [
        j
        for j in range(int(search.race_[N_FIRST]))
        if type(search.candidates_[j]) is kind and search.status_[j] != DIVERGED
    ]
    if any(_survived(search, j, last) for j in kin):
        return True  # (its class runs)
    return next(j for j in kin if _survived(search, j, last // 2)) != i


def _survived(search, i: int, at: int) -> bool:
    """Whether the first race's candidate ``i`` was not dropped at (or before) position
    ``at`` of that race (a retired one was not: its race was reopened)."""
    dropped = int(search.dropped_at_[i])
    return not (0 <= dropped <= at) or search.status_[i] == RETIRED


def reopen(search) -> None:
    """Reopen the race at the current position (module docstring, "The reopening")."""
    from .search import ALIVE

    n = search.n_samples_seen_
    lead = int(search.progress_[2])
    first = int(search.race_[N_FIRST])
    d = search.n_features_in_
    for i, candidate in enumerate(search.candidates_):
        if i == lead:
            continue
        if i >= first and not slow(search, i - first):
            search.candidates_[i] = _unfitted(candidate).start(d, search.classes_)
            search.status_[i] = ALIVE
            search.dropped_at_[i] = -1
            search.started_at_[i] = n
            search.overall_[i] = search._overall_metric()
            search.recent_[i] = search._window_metric()
        elif search.status_[i] == ALIVE:
            search._drop(i, RETIRED, n)
    search.recent_[lead] = search._window_metric()
    search.race_[START] = n
    search.race_[REOPENS] += 1
    search.progress_[1] = n + first_round(search)
    restart_watch(search)


def check_state(search) -> None:
    """The reopening's counters of a loaded search (raise ValueError)."""
    k, n, race = len(search.candidates_), search.n_samples_seen_, search.race_
    if search.started_at_.shape != (k,) or race.shape != (6,):
        raise ValueError("started_at_ needs one entry per candidate, race_ 6 counters")
    if np.any((search.started_at_ < 0) | (search.started_at_ > n)) or not (
        0 <= race[START] <= n and np.all(race[1:4] >= 0) and race[LAST_ALARM] <= n
    ):
        raise ValueError("started_at_ or race_ is out of range")
    if race[N_FIRST] != (k if search.drift is None else k // 2):
        raise ValueError("race_ does not count the candidates of the first race")


def metrics(window: int, exact_scores: int, max_fpr) -> tuple[PrequentialAUC, RollingAUC]:
    """A candidate's two metrics: its prequential AUC (the leaderboard's) and its
    windowed racing statistic (with ``max_fpr``, the partial AUC guarded by the full
    AUC: :mod:`aucstream._pauc_race`)."""
    overall = PrequentialAUC(pos_label=1, max_memory=exact_scores)
    if max_fpr is None:
        return overall, RollingAUC(window, pos_label=1)
    return overall, GuardedPartialAUC(window, pos_label=1, max_fpr=max_fpr)
