r"""One-pass model selection: race AUC learners on the stream by exact prequential AUC.

The papers tune by cross-validation over many passes (G13 §6.1, G16 §7.1, Z11 §4.1),
which a stream does not allow. :class:`OnePassSearch` runs candidate learners on the
same stream in the same pass and keeps the best: every example is scored by every
candidate (test), then learnt (train), so all are compared out-of-sample on the same
examples. Confidently worse candidates are dropped: the cost stays a small multiple.

The rule
--------
Elimination rounds happen at stream positions :math:`n_k = n_0 2^k`
(``first_round`` :math:`= n_0`). At a round, each alive candidate's statistic is its
exact AUC over the last ``window`` examples (:class:`aucstream.metrics.RollingAUC`),
with :math:`m = \min(n_+, n_-)` the smaller class count of that window:

1. **Racing** (Maron and Moore 1994). For a fixed scorer on i.i.d. examples the AUC
   of a window is a two-sample U-statistic, and Hoeffding's inequality for such
   statistics gives :math:`P(|\widehat{A} - A| \ge \epsilon) \le 2 e^{-2 m \epsilon^2}`.
   With :math:`\epsilon = \sqrt{\ln(2 K R / \delta) / (2m)}` (``delta`` :math:`=
   \delta`, union over the :math:`K` candidates and at most :math:`R` = 64 rounds), a
   candidate is dropped when :math:`\widehat A_i + \epsilon < \widehat A_{best} -
   \epsilon`. Guarantee: with probability at least :math:`1 - \delta`, no candidate
   whose windowed AUC is as high as the leader's is ever dropped by this step.
2. **Successive halving** (Karnin, Koren, Somekh 2013; Jamieson and Talwalkar 2016),
   when ``halving`` is True: if more than half of the candidates alive at the start
   of the round remain, the ones with the lowest windowed AUC are dropped until half
   (rounded up) remain. This bounds the cost whatever the data: with :math:`K`
   candidates the total work is at most that of :math:`K n_0 \lceil\log_2 K\rceil`
   candidate-examples plus one candidate's pass over the stream, so on long streams
   the search costs about one pass of the chosen learner plus a fixed overhead. Its
   price is that a slow starter can be dropped before it overtakes (the racing step
   alone would keep it while it is not confidently worse).

A round waits for ``min_class`` examples of each class in the window. A diverged
candidate is dropped at once (its last good state kept). The scorers change while
they learn, so the i.i.d. premise holds only approximately; what is exact is the AUC
and that all candidates are judged on the same examples.

Example weights
---------------
With ``sample_weight`` (when every candidate takes it) each candidate learns each
example with its weight; the race counts every example of positive weight once (its
windowed AUCs are not weighted). An example of weight 0 is only scored, by the round
leader: no candidate learns it and the race does not count it, so the search is the
one learnt without it (``n_samples_seen_`` included), as scikit-learn means weight 0.

The scores
----------
The search's own prequential scores (what ``test_then_train`` returns) come from the
**round leader**, the alive candidate with the best windowed AUC at the last round
(the first candidate before any round), fixed before the labels are seen. The
**leader** (``leader_``, ``best_estimator_``) is the alive candidate with the best
windowed AUC over everything learnt so far, the buffered rows included (the round
leader while the window lacks a class): a stream that ends before the first round, or
between rounds, still scores with its best candidate so far.

``decision_function``, ``predict_proba`` and ``coef_`` average the leader with the
next best alive candidates (``ensemble``, default 3; ``ensemble_``) on the scale of
their calibrated log-odds. Each candidate :math:`i` maps its score :math:`s_i` to
:math:`t_i = a_i (s_i - m_i)/\sigma_i + b_i` by the online Platt scaling it fitted on
its own prequential scores (:mod:`aucstream._calibration`); the search scores
:math:`\bar t = \frac{1}{k}\sum_i t_i`, with probability :math:`\sigma(\bar t)` (a
logarithmic opinion pool) and the threshold of ``predict`` at :math:`\bar t = 0`. The
calibration puts the candidates' scores, whose scales differ by orders of magnitude,
on one scale and weighs each by how well it separates the classes; the members are
linear scorers, so the average is one too (``coef_``). Why: until the race has
decided — on a stream of a few thousand examples no candidate is confidently better
yet — the leader's lead is mostly noise (a windowed AUC over 800 examples has a
standard error near 0.02), and averaging the best few removes much of that noise at
no cost in learning; on long streams halving leaves one candidate alive and the
average is the leader alone. A candidate whose calibration is not ready (both classes
seen, with a spread of scores) is left out; with fewer than two calibrated members
the leader scores alone, with its own calibration.

**Operating points** (``predict(X, threshold="fpr:R" | "alert_rate:R")``,
:meth:`OnePassSearch.operating_cut`) are quantiles of what scores now, on its scale:
the leader's own windows of its last prequential scores (:mod:`aucstream._calibration`)
when it scores alone, else the members' windows, aligned on their last common rows
(every alive candidate learns every row) and averaged on the log-odds scale with each
member's calibration of now, as :math:`\bar t`.

The leaderboard (``leaderboard_``, a DataFrame) lists each candidate's exact
prequential AUC with the span of the stream it covers (a dropped one's ends at its
drop: compare rows over the same span), its windowed AUC, status and membership.

Streams that change (``drift``, on by default: the race reopens when the leader's AUC
drops): :mod:`aucstream._race_drift`; ``drift=None`` is the race above exactly. The
partial AUC as the racing statistic and its ensemble (``max_fpr``): ``_pauc_race``.

Everything happens at stream positions, never at chunk boundaries (scores are
buffered and the metrics updated at multiples of ``_BLOCK`` examples and at rounds),
so the search, like every aucstream learner, does not depend on how the stream is
cut into chunks, and saving and resuming it is exact.
"""

from __future__ import annotations

import copy
import math
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, ClassVar, cast

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from . import _calibration, _pauc_race, _peek_cache, _race_drift, _search_scores, _state
from ._base import BaseStreamingAUC
from ._candidates import WIDE, default_candidates
from ._params import Interval, Real, StrOptions, positive_int, unit_open
from ._runtime import HoldsLearners, LearnerTags, StateSpec, settle
from ._streaming_auc import PrequentialAUC, RollingAUC

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["WIDE", "OnePassSearch", "default_candidates", "search_transaction"]

#: Largest number of rounds the racing step's union bound allows for.
_ROUNDS = 64
#: Candidate status codes.
ALIVE, RACED, HALVED, DIVERGED = 0, 1, 2, 3
_STATUS = {ALIVE: "alive", RACED: "dropped (racing)", HALVED: "dropped (halving)"}
_STATUS[DIVERGED] = "diverged"
_STATUS[_race_drift.WAITING] = "waiting"
_STATUS[_race_drift.RETIRED] = "retired (drift)"


#: Searches inside a call that declared their metrics untouched (``search_transaction``).
_FROZEN: weakref.WeakSet = weakref.WeakSet()
#: The journal of such a call: what undoes each candidate's transaction.
_JOURNALS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: The walks of such calls' owners, with the candidates and metrics opaque.
_SHALLOW_WALKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_NONE = np.empty(0)  # no example weights

#: Each search's leader and ensemble at its current stream position (``_choice``).
_CHOICES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: A search's candidates' scores of the rows of its last piece with rows of weight 0
#: (``_learn_piece``; read by the recording, :mod:`aucstream._search_scores`).
_WOVEN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _n_rows(X) -> int | None:
    """The number of rows of a 2-D input (None for anything else: the full snapshot)."""
    shape = getattr(X, "shape", None)
    if shape is None or len(shape) != 2:
        return None
    return int(shape[0])


@contextmanager
def search_transaction(owner: BaseStreamingAUC, search: OnePassSearch, X: object) -> Iterator[None]:
    """The transaction of a call of ``X``'s rows to ``owner`` (the search itself, or a
    pipeline that holds it) that leaves out what the call can not write.

    The search writes its metrics (25 bytes per window example and candidate, plus the
    exact scores) only at block ends and rounds, and never touches a dropped
    candidate: a call that reaches neither copies neither (a one-row call would
    otherwise copy megabytes). The search refuses, as an internal error, a metric
    update inside such a call, so a wrong declaration cannot pass silently.

    Such a call learns each alive candidate once, in a transaction of the candidate's
    own (:func:`aucstream._search_scores.learn_candidate`), which copies only what the
    candidate's call can write (one example: what its row can change). So this
    transaction does not enter the candidates (nor the metrics) at all: it walks the
    rest of the state with them opaque (:class:`aucstream._state.FlatState`, kept
    between calls), keeps the candidates' transactions in a journal and, if the call
    fails, undoes them (last first) before restoring the rest; of the buffered scores
    and labels it saves only the call's columns. A rejected call thus leaves everything
    as it was, as with a copy of the whole state.
    """
    n = _n_rows(X)
    held = _race_drift.under_holder(search, n)  # a holder's transaction saved it all
    if held is not None:
        with held:
            yield
        return
    quiet = search._between_updates(n)  # (else nor can it write the idle candidates)
    if not quiet or _race_drift.may_reopen(search, n):  # (one may learn twice: no journal)
        with _race_drift.held_transaction(owner, search, quiet, X):
            yield
        return
    flat = _SHALLOW_WALKS.get(owner)
    if flat is None or not flat.current(owner):
        opaque = (*search.candidates_, *search.overall_, *search.recent_)
        flat = _SHALLOW_WALKS[owner] = _state.FlatState(owner, opaque=frozenset(map(id, opaque)))
    scores, labels = search.pending_scores_, search.pending_labels_
    at = int(search.progress_[0])
    columns = slice(at, at + (n or 0))  # (n is known here: _between_updates took it)
    kept = scores[:, columns].copy(), labels[columns].copy()
    saved = flat.save(flat.plan((scores, labels)))
    journal: list = []
    _FROZEN.add(search)
    _JOURNALS[search] = journal
    try:
        yield
    except BaseException:
        for walk, undo in reversed(journal):
            walk.restore(undo)
        scores[:, columns], labels[columns] = kept
        flat.restore(saved)
        raise
    finally:
        _FROZEN.discard(search)
        _JOURNALS.pop(search, None)
    settle(journal)  # (the candidates' undo logs, if any: their buffers are spares again)
    if not flat.current(owner):  # the call replaced state objects: do not hold the old
        del _SHALLOW_WALKS[owner]


def _state_nbytes(search: OnePassSearch, n_features: int) -> int:
    """The candidates' states and metrics, the detector's signal (``StateSpec.nbytes``)."""
    per_metric = 25 * search.window + 16 * search.exact_scores + 8 * search._BLOCK
    watch = 0 if search.drift is None else 32 * 1000  # the detector's signal
    candidates = search._candidate_list(n_features, fresh=False)
    return watch + sum(c.state_nbytes(n_features) + per_metric for c in candidates)


class OnePassSearch(HoldsLearners, BaseStreamingAUC):
    """Tuning-free one-pass learning: race candidate learners by exact prequential AUC.

    See the module docstring for the rule, its guarantee and its cost. Use it behind
    the online scaler (``aucstream.StreamPipeline()`` does exactly that) when the
    features are not scaled.

    Parameters
    ----------
    candidates : list of aucstream online learners or None, default=None
        The learners to race (cloned); None means :func:`default_candidates`, chosen
        by the dimension at the first chunk.
    first_round : int, default=2000
        Examples before the first elimination round; round k happens after
        ``first_round * 2**k`` examples.
    window : int, default=20000
        The racing statistic: the exact AUC over the last ``window`` examples (25 bytes
        per example per candidate).
    delta : float in (0, 1), default=0.05
        Confidence of the racing step.
    halving : bool, default=True
        Each round also keeps at most half of the candidates (cost control).
    min_class : int, default=20
        A round needs this many positives and negatives in the window.
    exact_scores : int, default=2**17
        Scores each candidate keeps for its exact prequential AUC (16 bytes each);
        beyond, the AUC is binned and reported with its error bound (bounded memory).
    ensemble : int, default=3
        Scores average the calibrated log-odds of the (at most) ``ensemble`` best alive
        candidates (module docstring, "The scores"); 1 means the leader alone.
    drift : "auto", aucstream.drift.DriftDetector or None, default="auto"
        Reopen the race when the leader's AUC drops (:mod:`aucstream._race_drift`):
        ``"auto"`` watches with ``PageHinkley(mode="down")``, a detector instance with
        that one; None never reopens (a stationary stream is learnt the same either way).
    max_fpr : float in (0, 1] or None, default=None
        Race by the exact partial AUC over false positive rates up to ``max_fpr``
        (McClish-standardized), guarded by the full AUC; the default candidates then
        include the partial-AUC learners, spared by halving (:mod:`aucstream._pauc_race`).

    Attributes
    ----------
    candidates_ : list of BaseStreamingAUC
        The candidates as they are now (dropped ones frozen).
    status_ : ndarray of int8
        0 alive, 1 dropped by racing, 2 dropped by halving, 3 diverged.
    dropped_at_ : ndarray of int64
        Examples seen when each candidate was dropped (-1 if alive).
    leader_ : int
        Index of the leading candidate (``best_estimator_``).
    ensemble_ : ndarray of int64 of shape (ensemble,)
        The candidates averaged into the scores, best first (-1 pads).
    leaderboard_ : pandas.DataFrame
        One row per candidate: status, each AUC and the span it was measured on.
    started_at_ : ndarray of int64
        Examples seen when each candidate started (0, or its reopening).
    drift_ : aucstream.drift.AUCDriftDetector or None
        The leader's watch (None with ``drift=None``).
    race_ : ndarray of int64 of shape (6,)
        Race start, reopenings, alarms, last alarm's position (0: none), first race's
        candidates, buffered examples fed to the detector.
    classes_, n_samples_seen_, n_features_in_
        As for every learner.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream import OnePassSearch, OPAUC, SOLAM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(6000, 5)); y = (X[:, 0] + rng.normal(size=6000) > 1).astype(int)
    >>> search = OnePassSearch([OPAUC(eta=2**-6), OPAUC(eta=2**-14), SOLAM()],
    ...                        first_round=1000).fit(X, y)
    >>> search.leaderboard_["status"].iloc[0]
    'alive'
    >>> bool(search.score(X, y) > 0.8)
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "candidates": [list, None],
        "first_round": [positive_int()],
        "window": [positive_int()],
        "delta": [unit_open()],
        "halving": ["boolean"],
        "min_class": [positive_int()],
        "exact_scores": [positive_int(7)],
        "ensemble": [positive_int()],
        "drift": [StrOptions({"auto"}), None, _race_drift.DriftDetector],
        "max_fpr": [None, Interval(Real, 0, 1, closed="right")],
    }
    #: Metrics are updated at multiples of this many examples (and at rounds).
    _BLOCK = 4096
    _state_spec = StateSpec(nbytes=_state_nbytes)

    def __init__(
        self,
        candidates: list | None = None,
        first_round: int = 2000,
        window: int = 20000,
        delta: float = 0.05,
        halving: bool = True,
        min_class: int = 20,
        exact_scores: int = 1 << 17,
        ensemble: int = 3,
        drift: str | _race_drift.DriftDetector | None = "auto",
        max_fpr: float | None = None,
    ):
        self.candidates = candidates
        self.first_round = first_round
        self.window = window
        self.delta = delta
        self.halving = halving
        self.min_class = min_class
        self.exact_scores = exact_scores
        self.ensemble = ensemble
        self.drift = drift
        self.max_fpr = max_fpr

    @classmethod
    def _unit_test_params(cls) -> dict:
        from .solam import SOLAM
        from .univariate import UnivariateOnline

        return {
            "candidates": [SOLAM(), UnivariateOnline(eta=2**-6), UnivariateOnline(eta=2**-2)],
            "first_round": 40,
            "window": 64,
            "min_class": 5,
            "exact_scores": 64,
        }

    def _check_params(self) -> None:
        from ._params import InvalidParameterError

        for c in self.candidates or []:
            if not (isinstance(c, BaseStreamingAUC) and not c.is_batch):
                raise InvalidParameterError(
                    f"The 'candidates' parameter of OnePassSearch must hold aucstream online "
                    f"learners. Got {c!r} instead."
                )
            if c.stream_length_param is not None:
                raise InvalidParameterError(
                    f"The 'candidates' parameter of OnePassSearch cannot hold {type(c).__name__}"
                    ": it needs the stream length in advance"
                )

    def _first_list(self, n_features: int, fresh: bool = True) -> list[BaseStreamingAUC]:
        """The first race's candidates for ``n_features``: new unfitted learners, or with
        ``fresh=False`` the given ones themselves (to read, not to fit)."""
        if self.candidates is None:  # new instances: nothing to clone
            first = default_candidates(n_features)
            if self.max_fpr is not None:
                first += _pauc_race.pauc_candidates(self.max_fpr, n_features)
            return first
        return [clone(c) for c in self.candidates] if fresh else list(self.candidates)

    def _candidate_list(self, n_features: int, fresh: bool = True) -> list[BaseStreamingAUC]:
        """The first race's candidates, then (with ``drift``) the fresh slots of a
        reopened race (:func:`aucstream._race_drift.fresh_candidates`)."""
        first = self._first_list(n_features, fresh)
        if self.drift is None:
            return first
        return first + _race_drift.fresh_candidates(first)

    def _overall_metric(self) -> PrequentialAUC:
        return _race_drift.metrics(self.window, self.exact_scores, self.max_fpr)[0]

    def _window_metric(self) -> RollingAUC:  # the racing statistic
        return _race_drift.metrics(self.window, self.exact_scores, self.max_fpr)[1]

    # ------------------------------------------------------------------ state
    def _init_state(self, n_features: int) -> None:
        self.candidates_ = self._candidate_list(n_features)
        k = len(self.candidates_)
        if k == 0:
            raise ValueError("OnePassSearch needs at least one candidate")
        for c in self.candidates_:
            c.start(n_features, self.classes_)
        first = k if self.drift is None else k // 2
        self.status_ = np.zeros(k, dtype=np.int8)
        self.status_[first:] = _race_drift.WAITING
        self.dropped_at_ = np.full(k, -1, dtype=np.int64)
        self.started_at_ = np.zeros(k, dtype=np.int64)
        self.overall_ = _race_drift.slot_metrics(self._overall_metric, first, k)
        self.recent_ = _race_drift.slot_metrics(self._window_metric, first, k)
        self.drift_ = None if self.drift is None else _race_drift.new_detector(self.drift)
        self.race_ = np.array([0, 0, 0, 0, first, 0], dtype=np.int64)
        self.pending_scores_ = np.zeros((k, self._BLOCK))
        self.pending_labels_ = np.zeros(self._BLOCK, dtype=np.int8)
        # [examples buffered, next round position, round leader, rounds held]
        self.progress_ = np.array([0, int(self.first_round), 0, 0], dtype=np.int64)

    @property
    def leader_(self) -> int:
        """Index of the leading candidate (module docstring, "The scores")."""
        check_is_fitted(self, "n_samples_seen_")
        return self._choice()[0]

    @property
    def ensemble_(self) -> np.ndarray:
        """The candidates that score, the leader first, padded with -1 to ``ensemble``."""
        check_is_fitted(self, "n_samples_seen_")
        members = self._choice()[1]
        out = np.full(max(int(self.ensemble), len(members)), -1, dtype=np.int64)
        out[: len(members)] = members
        return out

    def _choice(self) -> tuple[int, tuple[int, ...]]:
        """``(leader, members)``, computed from the state once per stream position.

        Not state itself (nothing to save or check): a function of the state, cached
        by the identity of ``progress_`` (new with every new state) and the examples
        seen, so learning calls do not pay for it.
        """
        key = (id(self.progress_), self.n_samples_seen_, self.ensemble)
        cached = _CHOICES.get(self)
        if cached is None or cached[0] != key:
            cached = _CHOICES[self] = (key, self._choose())
        return cached[1]

    def _choose(self) -> tuple[int, tuple[int, ...]]:
        """The leader and the ensemble now (module docstring, "The scores").

        The leader is the alive candidate with the best windowed AUC over everything
        learnt so far, buffered rows included (ties: the earlier candidate); the round
        leader while the window lacks a class. The ensemble: the leader and the next best
        alive calibrated candidates (max_fpr: :func:`._pauc_race.choose`). A function of
        the state (not of the chunking); it never changes learning.
        """
        lead = int(self.progress_[2])
        alive = np.flatnonzero(self.status_ == ALIVE)
        auc = np.array([self._windowed_auc(i) for i in alive])
        members = [lead]
        if alive.size and not np.isnan(auc).any():
            ranked = alive[np.lexsort((alive, -auc))]
            if self.max_fpr is not None:  # the ensemble by its own windowed statistic
                return _pauc_race.choose(self, ranked)
            lead = int(ranked[0])
            members = [int(i) for i in _pauc_race.members(self, ranked) if self._calibrated(i)]
            if lead not in members or len(members) < 2:
                members = [lead]
        return lead, tuple(members)

    def _windowed_auc(self, i: int | np.integer) -> float:
        """Candidate i's AUC over its window with the buffered scores included (a
        peek: the metric is not changed)."""
        labels, scores = self._buffered(i)
        if not labels.size:
            return self.recent_[i].get()
        return _peek_cache.peek(self, int(i), self.recent_[i], labels, scores)

    def _buffered(self, i, windowed: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Candidate i's buffered labels and scores that its metric (``recent_``, or
        ``overall_``) has not counted; none unless it is alive."""
        m = int(self.progress_[0])
        lo = self._buffered_from(i, windowed)
        if lo >= m or self.status_[i] != ALIVE:
            lo = m
        return self.pending_labels_[lo:m], self.pending_scores_[i, lo:m]

    def _buffered_from(self, i: int | np.integer, windowed: bool) -> int:
        """The first buffered row of candidate i's metric (rows before a reopening
        are not in it, :mod:`aucstream._race_drift`)."""
        start = self.race_[_race_drift.START] if windowed else self.started_at_[i]
        return max(0, int(start) - (self.n_samples_seen_ - int(self.progress_[0])))

    def _calibrated(self, i: int) -> bool:
        return _calibration.is_ready(self.candidates_[i].calibration_)

    def _members(self) -> list[tuple[BaseStreamingAUC, float, float]]:
        """``(candidate, slope, offset)`` of each ensemble member, whose calibrated
        log-odds are ``slope * score + offset`` (empty when the leader scores alone)."""
        chosen = self._choice()[1]
        if len(chosen) < 2:
            return []
        members = []
        for i in chosen:
            candidate = self.candidates_[i]
            members.append((candidate, *_calibration.logit_map(candidate.calibration_)))
        return members

    def _current_metrics(self, which, windowed: bool) -> list:
        """The metrics of the candidates ``which`` with the buffered scores included
        (on copies for alive candidates with a non-empty buffer)."""
        metrics = self.recent_ if windowed else self.overall_
        out = []
        for i in which:
            labels, scores = self._buffered(i, windowed)
            metric = metrics[i]
            out.append(copy.deepcopy(metric).update(labels, scores) if labels.size else metric)
        return out

    @property
    def best_estimator_(self) -> BaseStreamingAUC:
        """The leading candidate (the best windowed AUC; it scores alone when
        ``ensemble`` is 1 or no other candidate is calibrated yet)."""
        check_is_fitted(self, "n_samples_seen_")
        return self._leader()

    def _leader(self) -> BaseStreamingAUC:
        """The leading candidate (:attr:`best_estimator_` without the check)."""
        return self.candidates_[self._choice()[0]]

    def _scorer(self) -> BaseStreamingAUC | _search_scores.Ensemble:  # the leader, or members
        members = self._members()
        return _search_scores.Ensemble(members) if members else self._leader()

    def _operating_cut(self, threshold: str, kind: str, rate: float) -> float:
        """The cut of :meth:`operating_cut` from what scores now (module docstring,
        "Operating points"): the leader's own when it scores alone, else the
        ``(1 - R)``-quantile of the members' last common prequential scores averaged on
        the log-odds scale."""
        members = self._members()
        if not members:
            return self._leader().operating_cut(threshold)
        windows = [c.__dict__.get("score_window_") for c, _, _ in members]
        if not all(isinstance(w, np.ndarray) for w in windows):
            raise ValueError(
                f"{type(self).__name__}: an ensemble member records no prequential scores, "
                f"from which an operating point ({kind}={rate}) is chosen: give a float "
                "threshold"
            )
        recent = _calibration.recent_scores(cast(list, windows), kind)
        mapped = [slope * s + offset for (_, slope, offset), s in zip(members, recent)]
        return _calibration.quantile_cut(np.mean(mapped, axis=0), kind, rate)

    @property
    def calibration_(self) -> np.ndarray:  # the leader's, or the logistic map of log-odds
        check_is_fitted(self, "n_samples_seen_")
        if not self._members():
            return self._leader().calibration_
        return _calibration.logistic_state()

    @calibration_.setter
    def calibration_(self, value) -> None:  # the base class resets it; the leader's wins
        pass

    def _current_candidates(self) -> list[BaseStreamingAUC]:
        if hasattr(self, "candidates_"):
            return self.candidates_
        return default_candidates(1) if self.candidates is None else list(self.candidates)

    @property
    def _tags(self) -> LearnerTags:  # type: ignore[override]
        """Its own scores come at kernel speed, it takes example weights, and its examples
        of weight 0 are inert, when every candidate's are."""
        try:
            candidates = [getattr(c, "_tags", None) for c in self._current_candidates()]
        except TypeError:  # invalid candidates: their parameter check says so
            candidates = [None]
        tags = [t for t in candidates if isinstance(t, LearnerTags)]
        valid = len(tags) == len(candidates)
        return LearnerTags(  # learns through _learn, not the fast path
            fast_path=False,
            kernel_prequential=valid and all(t.kernel_prequential for t in tags),
            sample_weight=valid and all(t.sample_weight for t in tags),
            zero_weight_inert=valid and all(t.zero_weight_inert for t in tags),
        )

    # --------------------------------------------------------------- learning
    def _learn_rows(self, X, y, weights, prequential: bool) -> np.ndarray:
        """(The scores are computed whether ``prequential`` or not.) A piece ends at
        the row that brings the examples learnt to the next metric update; rows of
        weight 0 are in the pieces, learnt by none (module docstring, "Example
        weights")."""
        n = X.shape[0]
        scores = np.empty(n)
        labels = (y == self.classes_[1]).astype(np.int8)
        # (with rows of weight 0: the examples learnt up to each row, that row included)
        upto = None if weights is None or weights.all() else np.cumsum(weights != 0)
        start = 0
        while start < n:  # (a piece stops early at a reopening: _race_drift.lead_first)
            stop = start + self._piece_length()
            if upto is not None:  # (the row after the one that learns the last of them)
                done = int(upto[start - 1]) if start else 0
                stop = int(np.searchsorted(upto, done + stop - start)) + 1
            rows = slice(start, min(n, stop))
            w = None if weights is None else weights[rows]
            part = X if rows.stop - rows.start == n else X[rows]  # (a sparse slice copies)
            got = _search_scores.learn_piece(self, part, y[rows], labels[rows], w)
            scores[start : start + got.size] = got
            start += got.size
        return scores

    def _piece_length(self) -> int:
        """Examples until the next metric update (a block end or a round)."""
        buffered, next_round = int(self.progress_[0]), int(self.progress_[1])
        return min(self._BLOCK - buffered, max(1, next_round - self.n_samples_seen_))

    def _learn_piece(self, X, y, labels, weights) -> np.ndarray:
        lead = int(self.progress_[2])  # the round leader: fixed before the labels
        at = int(self.progress_[0])
        journal = _JOURNALS.get(self)  # a call that declared its metrics untouched
        # else, in a holder's transaction, the journals of the candidates it leaves out
        held = _race_drift.held_journals(self) if journal is None else {}
        # rows of weight 0: each candidate's scores of all the rows (its buffer: of the
        # rows learnt), kept for the recording (_search_scores); a piece of them only
        # (after a metric update, the call's last rows) is scored, not learnt
        keep = None if weights is None or weights.all() else weights != 0
        full = None if keep is None else np.zeros((len(self.candidates_), X.shape[0]))
        if keep is not None and full is not None and not keep.any():
            for i in np.flatnonzero(self.status_ == ALIVE):
                candidate = self.candidates_[i]
                if candidate.__dict__.get("n_samples_seen_"):  # (a fresh one scores 0)
                    full[i] = candidate.score_samples(X)
            _WOVEN[self] = full
            return full[lead].copy()
        k, reopen = X.shape[0], False
        if self.drift_ is not None:  # the leader first, watched (_race_drift.lead_first)
            mine = held.get(id(self.candidates_[lead]), journal)
            k, reopen, got = _race_drift.lead_first(self, X, y, labels, weights, mine, keep)
            if full is not None and got is not None:
                full[lead, : got.shape[0]] = got
            if k < X.shape[0]:
                X, y, labels, weights, keep = (
                    a if a is None else a[:k] for a in (X, y, labels, weights, keep)
                )
                full = None if full is None else full[:, :k]
        learnt = k if keep is None else int(np.count_nonzero(keep))
        rows = slice(at, at + learnt)
        for i in np.flatnonzero(self.status_ == ALIVE):
            if i == lead and self.drift_ is not None:
                continue
            candidate = self.candidates_[i]
            try:
                got = _search_scores.learn_candidate(
                    candidate, X, y, weights, held.get(id(candidate), journal)
                )
            except FloatingPointError:
                self._drop(i, DIVERGED, self.n_samples_seen_)
                continue
            if full is None:
                self.pending_scores_[i, rows] = got
            else:
                self.pending_scores_[i, rows], full[i] = got[keep], got
        if not np.any(self.status_ == ALIVE):
            raise FloatingPointError(
                "OnePassSearch: every candidate diverged; scale the features "
                "(aucstream.StreamPipeline puts the online scaler in front)"
            )
        if self.status_[lead] != ALIVE:  # the leader diverged: the best alive one leads
            alive = np.flatnonzero(self.status_ == ALIVE)
            recent = np.array([np.nan_to_num(self.recent_[i].get(), nan=0.0) for i in alive])
            lead = int(alive[np.lexsort((alive, -recent))[0]])
            self._crown(lead)
        if full is None:
            scores = self.pending_scores_[lead, rows].copy()
            self.pending_labels_[rows] = labels
        else:
            scores = full[lead].copy()
            self.pending_labels_[rows] = labels[keep]
            _WOVEN[self] = full
        self.progress_[0] += learnt
        self.n_samples_seen_ += learnt
        at_round = self.n_samples_seen_ >= self.progress_[1]
        if at_round or self.progress_[0] == self._BLOCK:
            reopened = self._flush()
            if at_round and not reopened:  # a reopening schedules its own rounds
                self._round()
        elif reopen:  # (a leader that diverged leaves the feed to the flush)
            _race_drift.reopen(self)
        return scores

    def _crown(self, lead: int) -> None:
        """Make ``lead`` the round leader; a new one gets its watch afresh."""
        if lead != self.progress_[2] and self.drift_ is not None:
            _race_drift.restart_watch(self)
        self.progress_[2] = lead

    def _transaction(self, X=None):
        return search_transaction(self, self, X)

    def _between_updates(self, n: int | None) -> bool:
        """Whether a call of ``n`` rows reaches no block end and no round: then it
        writes neither the metrics nor a dropped candidate, and each alive candidate
        learns its rows in one transaction of its own (:func:`search_transaction`)."""
        if n is None or n < 0 or "progress_" not in self.__dict__:
            return False
        buffered, next_round = int(self.progress_[0]), int(self.progress_[1])
        quiet = self.__dict__.get("drift_") is None or _race_drift.frozen_ok(self, n)
        return quiet and buffered + n < self._BLOCK and self.n_samples_seen_ + n < next_round

    def _flush(self) -> bool:
        """Feed the buffered scores to the metrics of the candidates that produced them
        (the leader's to the detector); reopen on an alarm; whether it reopened."""
        if self in _FROZEN:
            raise RuntimeError(
                "internal error: OnePassSearch updated its metrics inside a call declared "
                "not to reach a block end or a round; please report it"
            )
        m = int(self.progress_[0])
        if m == 0:
            return False
        _search_scores.before_flush(self)  # (a recording reads the windows first)
        reopen = _race_drift.watch(self)
        labels = self.pending_labels_
        for i in np.flatnonzero(self.status_ == ALIVE):  # a diverged one's block is lost
            for metric, lo in (
                (self.overall_[i], self._buffered_from(i, windowed=False)),
                (self.recent_[i], self._buffered_from(i, windowed=True)),
            ):
                if lo < m:
                    metric.update(labels[lo:m], self.pending_scores_[i, lo:m])
        self.progress_[0] = 0
        self.race_[_race_drift.FED] = 0
        _race_drift.after_flush(self, reopen)  # a reopening, or perhaps a handover
        return reopen

    def _drop(self, i: int | np.integer, why: int, at: int) -> None:
        self.status_[i] = why
        self.dropped_at_[i] = at

    def _round(self) -> None:
        """An elimination round (module docstring); the next one at twice the position."""
        start = self.race_[_race_drift.START]  # 0 but in a reopened race
        self.progress_[1] = start + 2 * (self.progress_[1] - start)
        alive = np.flatnonzero(self.status_ == ALIVE)
        if alive.size <= 1:
            if alive.size == 1:
                self._crown(int(alive[0]))
            return
        recent = self.recent_[alive[0]]
        m = min(recent.n_positive, recent.n_negative)
        if m < self.min_class:
            return
        if self.max_fpr is not None:  # the pairs with the top negatives (_race_drift)
            m = min(recent.n_positive, max(1, math.floor(self.max_fpr * recent.n_negative)))
        self.progress_[3] += 1
        auc = np.array([self.recent_[i].get() for i in alive])
        order = np.lexsort((alive, -auc))  # best first; ties by candidate order
        best = auc[order[0]]
        k = len(self.candidates_)
        eps = math.sqrt(math.log(2.0 * k * _ROUNDS / self.delta) / (2.0 * m))
        kept = []
        for j in order:
            if auc[j] + eps < best - eps:
                self._drop(alive[j], RACED, self.n_samples_seen_)
            else:
                kept.append(j)
        if self.halving:  # half of the candidates (max_fpr: not the spared, _pauc_race)
            kept = _pauc_race.halve(
                self, alive, kept, HALVED, _race_drift.spared_newcomer(self, alive, kept)
            )
        self._crown(_pauc_race.incumbent(self, alive, kept))

    def _merge(self, other: OnePassSearch) -> None:
        raise NotImplementedError(
            "OnePassSearch does not merge (its candidates may differ between shards): "
            "merge the chosen learners instead (search.best_estimator_.merge(...))"
        )

    # --------------------------------------------------------------- reports
    @property
    def leaderboard_(self) -> pd.DataFrame:
        """Every candidate, with each AUC and the span of the stream it was measured on.

        One row per candidate that ran (the index is its position in ``candidates_``;
        the fresh slots of ``drift`` appear once a reopening starts them): the
        alive ones first, then by windowed AUC, best first (ties: candidate order).

        Why the spans differ: every candidate starts at example 1, but a dropped one
        stops learning, and being scored, when it is dropped. Its prequential AUC
        covers examples ``first_example`` to ``last_example`` only, while an alive
        candidate's covers the whole stream seen so far. Early examples are the hard
        ones for an online learner (it has learnt little yet), so a candidate dropped
        early can show a *higher* prequential AUC than the leader, measured on a
        shorter and different stretch of the stream: compare AUCs only over the same
        span. The leader is chosen by the windowed AUC (``recent_auc``) over the
        same last examples for every alive candidate (module docstring).

        The columns:

        candidate : str
            The candidate's ``repr``.
        status : str
            ``"alive"``, ``"dropped (racing)"``, ``"dropped (halving)"``, ``"diverged"``.
        dropped_at : Int64
            The number of examples seen when it was dropped (``<NA>`` while alive).
        leader, in_ensemble : bool
            Whether it is the leader (``leader_``), whether it scores (``ensemble_``).
        n_samples_seen : int
            The examples it learnt.
        prequential_auc : float
            The exact AUC of its prequential scores (each example scored before it
            was learnt) over examples ``first_example`` .. ``last_example`` (1-based,
            inclusive; exact up to ``exact_scores`` examples, then within
            ``auc_error_bound``).
        auc_error_bound : float
            Bound on the error of ``prequential_auc`` (0 while exact).
        first_example, last_example : int
            The span of ``prequential_auc`` (``last_example`` is 0 before a score).
        recent_auc : float
            The exact AUC over the last ``window`` examples of that span, examples
            ``recent_first_example`` .. ``last_example``: the racing statistic.
        recent_first_example : int
            The first example of the window of ``recent_auc``.

        Examples
        --------
        >>> import numpy as np
        >>> from aucstream import OnePassSearch, OPAUC, SOLAM
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(3000, 4)); y = (X[:, 0] + rng.normal(size=3000) > 1)
        >>> search = OnePassSearch([OPAUC(), SOLAM()], first_round=1000).fit(X, y)
        >>> best = search.leaderboard_.iloc[0]
        >>> best["status"], int(best["first_example"]), int(best["last_example"])
        ('alive', 1, 3000)
        """
        check_is_fitted(self, "n_samples_seen_")
        import pandas as pd

        rows = {}
        everyone = range(len(self.candidates_))
        overalls = self._current_metrics(everyone, windowed=False)
        recents = self._current_metrics(everyone, windowed=True)
        leader, chosen = self._choice()
        members = set(chosen)
        for i, c in enumerate(self.candidates_):
            if self.status_[i] == _race_drift.WAITING:  # a fresh slot never started
                continue
            overall, recent = overalls[i], recents[i]
            first = int(self.started_at_[i]) + 1
            last = first - 1 + int(overall.n_positive + overall.n_negative)
            in_window = int(recent.n_positive + recent.n_negative)
            alive = self.status_[i] == ALIVE
            rows[i] = {
                "candidate": repr(c),
                "status": _STATUS[int(self.status_[i])],
                "dropped_at": pd.NA if alive else int(self.dropped_at_[i]),
                "leader": i == leader,
                "in_ensemble": i in members,
                "n_samples_seen": int(c.n_samples_seen_),
                "prequential_auc": overall.get(),
                "auc_error_bound": overall.error_bound(),
                "first_example": first,
                "last_example": last,
                "recent_auc": recent.get(),
                "recent_first_example": last - in_window + 1,
            }
        order = sorted(
            rows,
            key=lambda i: (
                self.status_[i] != ALIVE,
                -np.nan_to_num(rows[i]["recent_auc"], nan=-1.0),
                i,
            ),
        )
        board = pd.DataFrame([rows[i] for i in order], index=pd.Index(order, name="index"))
        return board.astype({"dropped_at": "Int64"})

    def _check_state(self) -> None:
        k = len(self.candidates_)
        if self.status_.shape != (k,) or self.dropped_at_.shape != (k,):
            raise ValueError("status_ and dropped_at_ must have one entry per candidate")
        _race_drift.check_state(self)
        for c in self.candidates_:
            if hasattr(c, "classes_") and not np.array_equal(c.classes_, self.classes_):
                raise ValueError("a candidate's classes_ differ from the search's")
        if np.any((self.status_ < ALIVE) | (self.status_ > _race_drift.RETIRED)):
            raise ValueError("status_ holds an unknown code")
        if len(self.overall_) != k or len(self.recent_) != k:
            raise ValueError("one metric of each kind per candidate")
        if self.progress_.shape != (4,):
            raise ValueError("progress_ must hold 4 counters")
        buffered, next_round, leader, rounds = (int(v) for v in self.progress_)
        fed = int(self.race_[_race_drift.FED])
        if not (0 <= fed <= buffered < self._BLOCK and 0 <= leader < k and 0 <= rounds):
            raise ValueError("progress_ is out of range")
        if next_round < self.first_round:
            raise ValueError("progress_ is out of range")
        if self.pending_labels_.shape != (self._BLOCK,) or np.any(
            (self.pending_labels_ != 0) & (self.pending_labels_ != 1)
        ):
            raise ValueError("pending_labels_ must hold one 0/1 label per buffered row")
        if self.pending_scores_.shape != (k, self._BLOCK):
            raise ValueError("pending_scores_ must have one row per candidate")
