r"""The race of ``OnePassSearch(max_fpr=β)``: its statistic (partial AUC guarded by
the full AUC), its halving, its ensemble (chosen by its own windowed statistic) and
its incumbent.

:class:`GuardedPartialAUC` is the exact windowed AUC of
:class:`aucstream.metrics.RollingAUC`, read as the mean of the McClish-standardized
partial AUC at FPR :math:`\le \beta` and the full AUC of the same window:

.. math::

    G = \tfrac12\big(\mathrm{pAUC}_\beta + \mathrm{AUC}\big)
    \quad (``PARTIAL\_WEIGHT`` = 1/2).

Why: the partial AUC of a window counts only the pairs with its top :math:`\beta n_-`
negatives, so its noise is several times that of the full AUC (the racing bound uses
:math:`m = \min(n_+, \lfloor\beta n_-\rfloor)`), and a race by the partial AUC alone
switched on noise from the full-AUC leader to candidates that were worse on both metrics
on held-out data: after one pass, partial AUC at FPR :math:`\le` 0.05 on the test part,
``StreamPipeline(max_fpr=0.05)`` minus ``StreamPipeline()`` was -0.028 on
make_classification (docs/results/pauc.md before this statistic) and -0.006 on fraud-
like; with it, -0.002 and 0.000, ijcnn1 +0.05 (+0.07 without it), and the three other
streams of ``benchmarks/bench_pauc.py`` within 0.0002. Both terms are on the same scale
(0.5 random, 1 perfect); a candidate that is better at the top of the ranking by more
than it is worse overall still leads, and one that is better on both leads as before.
The racing bound of ``_round`` is unchanged (that of the partial AUC: conservative for
the mean).

Sparing
-------
Halving (each round keeps the better half of the alive candidates,
``OnePassSearch(halving=True)``) ranks them by :math:`G` over a window of a few
thousand examples, and the partial-AUC learners (:class:`aucstream.PAUCI`,
:class:`aucstream.OnlinePAUC`) learn slowly: their loss selects the top
:math:`\beta` fraction of the negatives, a few percent of the examples, so few
examples move them, and they started with the decision rule at zero. With every
candidate kept alive (one pass, ``benchmarks/bench_pauc.py``'s streams, the windowed
statistic of the last 20,000 examples against the partial AUC at FPR :math:`\le`
0.05 on the test part), PAUCI had the best windowed partial AUC on
make_classification from example 32,000 on (test 0.640, the best of the 21
candidates) and PAUCI at ``eta`` = 0.3 on ijcnn1 (test 0.731), but at the first
rounds (2,000 to 16,000 examples) they ranked 10th to 19th, and halving had
dropped them by example 2,000 to 4,000. So with ``max_fpr`` the candidates that take
``max_fpr`` (:func:`spared`) are not halved: each round halves the others only
(:func:`halve`; at least one is kept); the racing bound, a statistical test, still
drops any candidate. The partial-AUC learners of the default list (five) then run
for the whole stream; each costs less than OPAUC per example
(docs/results/pauc.md).

The ensemble
------------
A partial-AUC learner that leads may have a lower full AUC (PAUCI on
make_classification: test AUC 0.770 against 0.786 for ``StreamPipeline()``'s
choice), and the leaders of :math:`G` at the top of the ranking are often within the
windowed statistic's noise of each other. With ``max_fpr`` the scores average the
calibrated log-odds of a set of candidates that :func:`choose` picks by the set's own
racing statistic. With :math:`P` the first ``ensemble - 1`` calibrated candidates
that take ``max_fpr``, by :math:`G`, and :math:`F` the alive candidate that does not
take it with the best windowed full AUC (the *full-AUC member*), the sets are
:math:`\{F\}` and, for each :math:`k`, the first :math:`k` of :math:`P` alone and with
:math:`F` (:func:`choices`). For each set, the average of its members' calibrated
log-odds over the examples of the window (each member's test-then-train scores, which
its racing metric holds, mapped by its calibration now) gives the set's :math:`G`
(partial and full AUC of that window, exact); a set whose windowed full AUC is more
than ``FULL_AUC_TOLERANCE`` (0.01: the issue's tolerance on the full AUC, not tuned)
below :math:`F`'s is out; the best :math:`G` wins (ties: the earlier set,
:math:`\{F\}` first), and its best member by :math:`G` leads.

Why: the statistic of an average is not the average of its members' statistics (two
learners whose errors differ rank better together than either), and the earlier rules
fixed the composition in advance (the leader by :math:`G` and :math:`F`; then the
first two by :math:`G` and :math:`F`). At the end of one pass over the streams of
``benchmarks/bench_pauc.py``, over the 50 sets of one to three partial-AUC learners,
with or without :math:`F`, the windowed partial AUC of a set and its test partial AUC
correlated at 0.99 on ijcnn1 and make_classification and 0.98 on w8a (0.71 on
fraud-like, with about 26 positives in the window after the race's reopenings).

The rule was chosen on the held-out streams of ``benchmarks/bench_pauc.py``
(``held_out_streams``: letter, USPS, magic04, phishing, skin, connect-4), among the
variants: :math:`G` or the partial AUC alone to compare the sets, the first
:math:`k` or every subset of up to ``ensemble - 1`` partial-AUC learners, a tolerance
of 0 to 0.02. ``StreamPipeline(max_fpr=0.05)`` minus ``StreamPipeline()``, partial
AUC at FPR :math:`\le` 0.05 on the test parts after one pass: +0.0266 on average
(range 0.0000 to +0.1066; full AUC -0.0011 to +0.0086) against +0.0059 (-0.0024 to
+0.0385; full AUC -0.0008 to +0.0024) with the previous rule (the first two by
:math:`G` and :math:`F`). On the six streams of the benchmark's tables, measured
after that choice: +0.0183 on average against +0.0175 (ijcnn1 0.6991 against
0.6837, a9a 0.6700 against 0.6684, a9a with 3% positives 0.6646 against 0.6662,
make_classification 0.6250 against 0.6360: there the previous set, PAUCI, LSPAUC and
OPAUC, has a windowed full AUC 0.0115 below OPAUC's, out of the tolerance; fraud-like
and w8a the same), full AUC -0.0042 to +0.0051 against -0.0091 to +0.0055
(docs/results/pauc.md).

Variants measured after this rule and not kept (``benchmarks/pauc_choice_variants.py``:
the end state of one pass per stream re-scored; on the held-out streams, mean gain over
``StreamPipeline()`` and worst, against +0.0266 and 0.0000 for this rule): every subset
of up to ``ensemble - 1`` partial-AUC learners instead of the first ones (the same,
+0.0266; on ijcnn1 the sets with PAUCI at ``eta`` = 0.3 are then compared, but every set
that is as high as LibAUC's best there on the test part has a windowed full AUC 0.015 to
0.042 below the member's: the guard, not the order, leaves them out); complexity-aware
choices with the standard error of a difference of :math:`G` on the window (DeLong's
structural components of both terms): the member alone unless the chosen set's :math:`G`
exceeds its own by 0.5, 1 or 1.645 standard errors (+0.0231, +0.0190, +0.0165; worst
down to -0.0025), the smallest set within 0.5 or 1 standard error of the best (+0.0210,
+0.0188); a guard that leaves a set out only when its deficit exceeds the tolerance by
1.645 standard errors of the full-AUC difference (+0.0266 on the held-out streams, but
on make_classification PAUCI alone, a test full AUC 0.015 below ``StreamPipeline()``'s:
out of the issue's tolerance); averaging the union of the sets within 0.5 or 1 standard
error of the best (+0.0280 at both, from one held-out stream, usps; on the benchmark's
streams the same at 0.5 and -0.0026 on average at 1, ijcnn1 -0.0154). On five of the six
benchmark streams the chosen set leads the next three within the guard by 0.1 to 0.8
standard errors of the difference (make_classification: 0.7 to 2.6): the window does not
resolve the choice among them, and no rule of these raised the held-out gain.

Cost: a choice reads the windows of at most ``ensemble`` candidates and computes
:math:`2(2\,\mathrm{ensemble} - 1)` exact AUCs of a window (:math:`O(w \log w)` each),
once per stream position where the choice is read (each block of the search, and
scoring calls).

The incumbent
-------------
A round crowns the incumbent: the candidate whose prequential scores are the
search's own and whose AUC the drift watch follows (:mod:`aucstream._race_drift`).
With ``max_fpr`` it is the best by :math:`G` among the kept candidates that do not
take ``max_fpr`` (:func:`incumbent`): the watch reads the full AUC, and a
partial-AUC learner's full AUC may fall while its partial AUC rises, which the
watch took for a drift (make_classification with ``drift="auto"``: two reopenings
with PAUCI as incumbent, the second near the end of the stream, after which the
full-AUC member was a fresh candidate, test AUC -0.015; none with this rule).
Without ``max_fpr`` all of this is the search as before: nothing spared, the first
``ensemble`` candidates by the windowed AUC, the best kept one crowned.

**The candidates.** With ``max_fpr`` the partial-AUC learners join the default
candidates (:func:`pauc_candidates`): all of them up to 1,000 features, above that
only those whose state is a few floats a feature (the others' d x d scatters or
reservoirs of dense rows do not fit wide and hashed streams).
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import clone

from . import _calibration
from ._base import BaseStreamingAUC
from ._fastpath import param_names
from ._peek_cache import peek_full, positive_with
from ._sorted_pairs import _count, _partial_auc
from ._streaming_auc import RollingAUC

__all__ = [
    "GuardedPartialAUC",
    "choices",
    "choose",
    "halve",
    "incumbent",
    "members",
    "pauc_candidates",
    "spared",
]

#: The weight of the partial AUC in the racing statistic (the full AUC has the rest).
#: One half: on the three streams where the race by the partial AUC alone had chosen
#: differently (make_classification, fraud-like, ijcnn1), 2/3 chose as 1/2 did.
PARTIAL_WEIGHT = 0.5

#: How far below the full-AUC member's windowed full AUC the ensemble :func:`choose`
#: picks may be: the issue's tolerance on the full AUC of ``StreamPipeline(max_fpr=)``
#: against ``StreamPipeline()`` (0.01), not tuned.
FULL_AUC_TOLERANCE = 0.01


class GuardedPartialAUC(RollingAUC):
    """:class:`RollingAUC` whose :meth:`get` is the mean of the partial AUC (its
    ``max_fpr``) and the full AUC of the window (module docstring); NaN while one
    class is missing.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream._pauc_race import GuardedPartialAUC
    >>> from aucstream.metrics import roc_auc
    >>> y = np.array([0, 0, 1, 0, 1, 1, 0, 1]); s = np.arange(8.0)
    >>> g = GuardedPartialAUC(100, pos_label=1, max_fpr=0.5).update(y, s)
    >>> bool(np.isclose(g.get(), (roc_auc(y, s, max_fpr=0.5) + roc_auc(y, s)) / 2))
    True
    """

    def get(self) -> float:
        partial = super().get()
        return partial if partial != partial else self.peeked(partial, self.full())

    @staticmethod
    def peeked(partial: float, full: float) -> float:
        """The statistic of a window's partial and full AUC (NaN, one class missing,
        when the partial AUC is NaN)."""
        if partial != partial:
            return partial
        return PARTIAL_WEIGHT * partial + (1.0 - PARTIAL_WEIGHT) * full

    def _peek_of(self, labels: list, numbers: np.ndarray, scores: np.ndarray) -> float:
        """:meth:`get` after the update of :meth:`RollingAUC._peek`, nothing changed:
        the partial and the full AUC peeked from the same rows, the same floats."""
        partial = super()._peek_of(labels, numbers, scores)
        if partial != partial:
            return partial
        return self.peeked(partial, self._peek_full(labels, numbers, scores))

    def full(self) -> float:
        """The full AUC of the window (ties one half); NaN while one class is missing."""
        self._flush()
        n0, n1 = self._class_sizes()
        if n0 == 0 or n1 == 0:
            return float("nan")
        pairs = self._counted()
        if self._positive_number() == 0:
            pairs = 2 * n0 * n1 - pairs
        return pairs / (2 * n0 * n1)

    def window_scores(self, y_true=None, y_score=None) -> tuple[np.ndarray, np.ndarray]:
        """The window's labels (True: positive) and scores, oldest first (copies); with
        ``y_true`` and ``y_score``, those of the window after ``update(y_true,
        y_score)``, nothing changed."""
        self._flush()
        start, size = int(self._counters[0]), int(self._counters[1])
        at = (start + np.arange(size)) % self.window
        numbers, scores = self._ring_label[at], self._ring_score[at]
        if y_true is None or not len(y_true):
            return numbers == self._positive_number(), scores
        labels, new_numbers, new_scores = self._peek_rows(y_true, y_score)
        numbers = np.concatenate([numbers, new_numbers])[-self.window :]
        scores = np.concatenate([scores, new_scores])[-self.window :]
        return numbers == positive_with(self, labels), scores


def spared(search, alive) -> set[int]:
    """The positions in ``alive`` (indices of ``search.candidates_``) of the candidates
    that the halving of ``OnePassSearch(max_fpr=β)`` spares: none without ``max_fpr``;
    with it, the partial-AUC learners (the candidates that take ``max_fpr``; module
    docstring, "Sparing")."""
    if search.max_fpr is None:
        return set()
    candidates = search.candidates_
    # (the names get_params lists, read once per class: param_names)
    return {j for j, i in enumerate(alive) if "max_fpr" in param_names(type(candidates[i]))}


def halve(search, alive, kept: list, why: int, also: int | None = None) -> list:
    """The halving step of an elimination round of ``OnePassSearch``: of ``kept``
    (positions in ``alive``, best first), the candidates not :func:`spared` beyond the
    first half (at least one) of the alive ones not spared are dropped (``why``);
    returns the positions kept, best first. Without ``max_fpr`` nothing is spared:
    the first ``ceil(len(alive) / 2)`` are kept, as the search always did. ``also``:
    one more position spared (a reopened race's newcomer,
    :func:`aucstream._race_drift.spared_newcomer`)."""
    protected = spared(search, alive)
    if also is not None:
        protected = protected | {also}
    limit = max(1, math.ceil((len(alive) - len(protected)) / 2))
    halved = [j for j in kept if j not in protected][limit:]
    for j in halved:
        search._drop(alive[j], why, search.n_samples_seen_)
    return [j for j in kept if j not in halved]


def members(search, ranked) -> list:
    """The candidates that may average into the scores without ``max_fpr``, best first
    (``ranked``: the alive ones by the racing statistic, best first): the first
    ``ensemble``; the search keeps the calibrated ones. With ``max_fpr`` the search
    asks :func:`choose` instead."""
    return [int(i) for i in ranked[: int(search.ensemble)]]


def choose(search, ranked) -> tuple[int, tuple[int, ...]]:
    """``(leader, members)`` of ``OnePassSearch(max_fpr=β)`` (``ranked``: the alive
    candidates by :math:`G`, best first; module docstring, "The ensemble"): of the
    sets :func:`choices`, the one whose average of calibrated log-odds has the best
    :math:`G` over the window among those whose windowed full AUC is at most
    ``FULL_AUC_TOLERANCE`` below the full-AUC member's (the earlier set on ties); its
    best candidate by :math:`G` leads. The leader alone (``ensemble`` 1, a class
    missing from the window, or no candidate that does not take ``max_fpr``)."""
    lead = int(ranked[0])
    sets = choices(search, ranked)
    if not sets:
        return lead, (lead,)
    needed = sorted({i for chosen in sets for i in chosen})
    windows = {i: search.recent_[i].window_scores(*search._buffered(i)) for i in needed}
    beta = float(search.max_fpr)
    best, best_value, reference = sets[0], -math.inf, math.nan
    for chosen in sets:
        partial, auc = _window_aucs(*_average(search, chosen, windows), beta)
        if chosen is sets[0]:  # the full-AUC member alone
            reference = auc
        elif auc < reference - FULL_AUC_TOLERANCE:
            continue
        value = PARTIAL_WEIGHT * partial + (1 - PARTIAL_WEIGHT) * auc
        if value > best_value:
            best, best_value = chosen, value
    order = {int(i): j for j, i in enumerate(ranked)}
    chosen = sorted(best, key=order.__getitem__)
    return chosen[0], tuple(chosen)


def choices(search, ranked) -> list[list[int]]:
    """The sets :func:`choose` compares, the full-AUC member alone first: with ``P``
    the first ``ensemble - 1`` calibrated candidates that take ``max_fpr`` (by
    :math:`G`) and ``F`` the candidate not taking it with the best windowed full AUC
    (the earlier in ``ranked`` on ties), ``[F]``, then for each ``k`` the first ``k``
    of ``P`` alone and with ``F`` (when ``F`` is calibrated). Empty when
    ``ensemble`` is 1, no candidate but those spared is alive, or the window lacks a
    class."""
    size = int(search.ensemble)
    protected = spared(search, ranked)
    others = [int(i) for j, i in enumerate(ranked) if j not in protected]
    if size < 2 or not others:
        return []
    full = [peek_full(search, i, search.recent_[i], *search._buffered(i)) for i in others]
    if any(f != f for f in full):  # a class missing: no full AUC yet
        return []
    member = others[int(np.argmax(full))]
    partial = [int(i) for j, i in enumerate(ranked) if j in protected and search._calibrated(i)]
    sets = [[member]]
    for k in range(1, min(size - 1, len(partial)) + 1):
        sets.append(partial[:k])
        if search._calibrated(member):
            sets.append([*partial[:k], member])
    return sets


def _window_aucs(positive: np.ndarray, scores: np.ndarray, beta: float) -> tuple[float, float]:
    """The partial AUC at FPR <= ``beta`` (McClish-standardized) and the full AUC of a
    window, exact (ties one half), from one sort of each class: the values of
    :func:`aucstream.metrics.roc_auc`; NaN for both when a class is missing."""
    neg, pos = np.sort(scores[~positive]), np.sort(scores[positive])
    if pos.size == 0 or neg.size == 0:  # undefined: never chosen (NaN compares false)
        return math.nan, math.nan
    full = float(_count(pos, neg)) / (2.0 * pos.size * neg.size)
    if beta >= 1.0:
        return full, full
    return _partial_auc(neg, pos, neg.size, pos.size, (beta, None), True), full


def _average(search, chosen, windows) -> tuple[np.ndarray, np.ndarray]:
    """The labels and the mean calibrated log-odds of ``chosen`` over the examples all
    their windows hold (the latest ones); one candidate's own scores when alone."""
    n = min(windows[i][1].size for i in chosen)
    y = windows[chosen[0]][0][windows[chosen[0]][0].size - n :]
    if len(chosen) == 1:
        return y, windows[chosen[0]][1]
    total = np.zeros(n)
    for i in chosen:
        slope, offset = _calibration.logit_map(search.candidates_[i].calibration_)
        total += slope * windows[i][1][windows[i][1].size - n :] + offset
    return y, total / len(chosen)


def incumbent(search, alive, kept: list) -> int:
    """The candidate an elimination round crowns (the search's prequential scores,
    the one the drift watch follows): the first of ``kept`` (positions in ``alive``,
    best first); with ``max_fpr``, the first that is not :func:`spared`, when there is
    one (module docstring, "The incumbent")."""
    protected = spared(search, alive)
    first = next((j for j in kept if j not in protected), kept[0])
    return int(alive[first])


def pauc_candidates(max_fpr: float, n_features: int | None = None) -> list[BaseStreamingAUC]:
    """The partial-AUC learners of ``aucstream.pauc`` and ``aucstream.pauci`` set to
    ``max_fpr`` (none of a module that is absent): their exported online learners that
    take ``max_fpr``, each once per setting its class's ``_race_settings(max_fpr)``
    lists (parameter dicts), or once at ``max_fpr`` when the class lists none; a
    learner that draws random numbers draws them from seed 0 (as the default
    candidates do: the same stream gives the same race).

    Above :data:`~aucstream._candidates.SMALL` ``n_features`` (None: any width), only
    those whose state takes at most :data:`WIDE_STATE_BYTES` bytes a feature
    (``state_nbytes``, from the parameters) race, as the default candidates leave out
    the exact covariances and OAM's reservoirs there: LSPAUC's two d x d scatters grow
    as d^2 (a search with ``max_fpr`` that took them refused wide and hashed streams
    for memory: CHANGELOG, 0.2.0, "Fixed"), OnlinePAUC's reservoirs hold dense rows
    (a step O(N d)). PAUCI (three floats a feature) races at every width."""
    import importlib

    from ._candidates import SMALL

    found: list[BaseStreamingAUC] = []
    for module in ("pauc", "pauci", "lspauc"):  # the partial-AUC learners' modules
        try:
            found += _module_candidates(importlib.import_module(f"aucstream.{module}"), max_fpr)
        except ImportError:
            continue
    if n_features is None or n_features <= SMALL:
        return found
    return [c for c in found if c.state_nbytes(n_features) <= WIDE_STATE_BYTES * n_features]


#: The most bytes of state a feature that a partial-AUC learner may take to race above
#: ``SMALL`` features (:func:`pauc_candidates`): eight floats.
WIDE_STATE_BYTES = 64


def _module_candidates(pauc, max_fpr: float) -> list[BaseStreamingAUC]:
    """:func:`pauc_candidates` of one module."""
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
