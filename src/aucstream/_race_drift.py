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

The reopening
-------------
On an alarm, unless the current race is younger than ``2 * first_round`` examples
(a new race gets time to settle before it can be reopened), at stream position
:math:`p`:

1. the incumbent keeps learning and scoring (the search's scores stay its scores);
2. the **fresh candidates** start from nothing at :math:`p`: one per candidate of the
   first race, with its parameters and, when its class takes ``half_life``
   (``get_params()``), ``half_life = _FRESH_HALF_LIFE`` (forgetting, the library's
   one meaning, :data:`aucstream._params.FORGETTING`), so that the newcomers keep
   adapting; a fresh candidate that is itself the incumbent is kept as it is;
3. the other candidates of the previous race are retired (their states reflect the
   old concept, and the newcomers include their kind);
4. the incumbent's window is emptied: from :math:`p` on, the incumbent and every
   newcomer are judged on the same examples, the ones all of them have seen;
5. the rounds restart: at :math:`p + (n_0/4) 2^k` (``first_round // 4`` rather than
   ``first_round``: the incumbent's alarm is itself evidence against it, and every row
   it keeps scoring after a change is scored by the old concept), with the racing and
   halving rules of :mod:`aucstream.search` over the incumbent and the newcomers.

A reopening writes no metric: it can happen inside a call of a few rows, whose
transaction copies only the small state (:func:`aucstream.search.search_transaction`).
The buffered scores of the rows before it still go to the incumbent's prequential AUC at
the next block end, not to its (emptied) window nor to the restarted candidates'
metrics; a retired candidate's metrics stop at the last block end before it.

So a newcomer takes over only at a round where its windowed AUC (over the span since
:math:`p`, which both have seen) is the best, the incumbent winning ties by its
earlier position in ``candidates_`` unless it is itself a fresh slot. Until then the
incumbent scores: a false alarm costs computation (the reopened race), never the
search's scores, and a stationary stream that raises no alarm is learnt exactly as with
``drift=None``, bit for bit (the fresh slots wait, learning nothing). The transaction
of a call that reaches a block end or a round does not copy the candidates that are
not alive at its start (:func:`untouched`): a dropped or retired one is never written
again, and a waiting slot is replaced, not written, when a reopening starts it.

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

import numpy as np
from sklearn.base import clone

from ._base import BaseStreamingAUC
from ._streaming_auc import PrequentialAUC, RollingAUC
from .drift import AUCDriftDetector, DriftDetector, PageHinkley

__all__ = [
    "fresh_candidates",
    "new_detector",
    "pauc_candidates",
    "reopen",
    "until_watch",
    "untouched",
    "first_round",
    "frozen_ok",
    "watch",
]

#: Examples per block of the incumbent's scores fed to the detector (and of the
#: metrics' updates) while ``drift`` is on: the delay of a reaction is at most a block.
_DRIFT_BLOCK = 512
#: ``half_life`` of the fresh candidates whose class takes one (in examples).
_FRESH_HALF_LIFE = 5000.0
#: Candidate status codes of the reopened race (after those of aucstream.search).
WAITING, RETIRED = 4, 5
#: ``race_``: [start of the current race, reopenings, alarms, position of the last
#: alarm, number of candidates of the first race, buffered examples fed].
START, REOPENS, ALARMS, LAST_ALARM, N_FIRST, FED = range(6)


def pauc_candidates(max_fpr: float) -> list[BaseStreamingAUC]:
    """The partial-AUC learners of ``aucstream.pauc`` set to ``max_fpr`` (none while
    that module is absent): its exported online learners that take ``max_fpr``, each
    once per setting its class's ``_race_settings(max_fpr)`` lists (parameter dicts),
    or once at ``max_fpr`` when the class lists none; a learner that draws random
    numbers draws them from seed 0 (as the default candidates do: the same stream gives
    the same race)."""
    try:
        from . import pauc
    except ImportError:
        return []
    found: list[BaseStreamingAUC] = []
    for name in getattr(pauc, "__all__", ()):
        cls = getattr(pauc, name, None)
        if not (isinstance(cls, type) and issubclass(cls, BaseStreamingAUC)) or cls.is_batch:
            continue
        try:
            learner = cls()
        except TypeError:  # needs arguments: not a default candidate
            continue
        if (
            "max_fpr" not in learner.get_params(deep=False)
            or learner.stream_length_param is not None
        ):
            continue
        settings = getattr(cls, "_race_settings", None)
        for params in settings(max_fpr) if settings else [{"max_fpr": max_fpr}]:
            candidate = clone(learner).set_params(**params)
            if candidate.get_params(deep=False).get("random_state", 0) is None:  # reproducible
                candidate.set_params(random_state=0)
            found.append(candidate)
    return found


def fresh_candidates(first: list[BaseStreamingAUC]) -> list[BaseStreamingAUC]:
    """One fresh candidate per candidate of the first race: its parameters, with
    ``half_life = _FRESH_HALF_LIFE`` when its class takes one and it does not forget."""
    out = []
    for c in first:
        fresh = clone(c)
        params = fresh.get_params(deep=False)
        if "half_life" in params and params["half_life"] is None:
            fresh.set_params(half_life=_FRESH_HALF_LIFE)
        out.append(fresh)
    return out


def new_detector(drift) -> AUCDriftDetector:
    """The incumbent's watch for ``drift`` ("auto" or a DriftDetector), with no history."""
    base = PageHinkley(mode="down") if drift == "auto" else clone(drift)
    assert isinstance(base, DriftDetector)
    return AUCDriftDetector(base, pos_label=1)


def untouched(search) -> tuple:
    """What a call to ``search`` can not write (a transaction need not copy it): the
    candidates that are not alive at its start, with their metrics. A dropped or
    retired candidate never learns again and its metrics stop; a waiting fresh slot
    is replaced, objects and metrics, when a reopening starts it, never written."""
    from .search import ALIVE

    if "status_" not in search.__dict__:
        return ()
    idle = np.flatnonzero(search.status_ != ALIVE)
    return tuple(
        part
        for i in idle
        for part in (search.candidates_[i], search.overall_[i], search.recent_[i])
    )


def until_watch(buffered: int) -> int:
    """Examples from a buffer of ``buffered`` to the detector's next feed."""
    return _DRIFT_BLOCK - buffered % _DRIFT_BLOCK


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
    if not alarms.size:
        return False
    n = search.n_samples_seen_
    race[ALARMS] += alarms.size
    race[LAST_ALARM] = n - scores.size + int(alarms[-1]) + 1
    return n - race[START] >= 2 * search.first_round


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
        if i >= first:
            fresh = clone(candidate)
            fresh._validate_params()
            fresh._reset(search.classes_, d)
            fresh.n_features_in_ = d
            search.candidates_[i] = fresh
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
    search.drift_ = new_detector(search.drift)


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
    windowed racing statistic (the partial AUC with ``max_fpr``)."""
    overall = PrequentialAUC(pos_label=1, max_memory=exact_scores)
    if max_fpr is None:
        return overall, RollingAUC(window, pos_label=1)
    return overall, RollingAUC(window, pos_label=1, max_fpr=max_fpr)
