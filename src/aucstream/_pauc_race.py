r"""The race of ``OnePassSearch(max_fpr=β)``: its statistic (partial AUC guarded by
the full AUC), its halving, its ensemble and its incumbent.

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
drops any candidate. The partial-AUC learners of the default list (four) then run
for the whole stream; each costs less than OPAUC per example
(docs/results/pauc.md).

The full-AUC member
-------------------
A partial-AUC learner that leads may have a lower full AUC (PAUCI on
make_classification: test AUC 0.770 against 0.786 for ``StreamPipeline()``'s
choice), and the leaders of :math:`G` at the top of the ranking were within the
windowed statistic's noise of each other on streams of few positives (fraud-like:
about 100 positives per window). With ``max_fpr`` the scores therefore average the
calibrated log-odds of two candidates (the search's ensemble, module docstring of
:mod:`aucstream.search`): the leader by :math:`G`, and the alive candidate that does
not take ``max_fpr`` with the best windowed full AUC (:func:`members`; the leader
alone when it is that candidate). Measured with ``drift=None`` (one pass, test part,
against ``StreamPipeline(drift=None)``; pAUC at FPR :math:`\le` 0.05 / full AUC):
the top three by :math:`G` after sparing gave make_classification +0.037 / -0.008
and a9a (3% positives) -0.0056 / -0.004 (the spared learners entered the average);
the leader with the best windowed full AUC of all alive candidates gave fraud-like
-0.004 / -0.016 (a partial-AUC learner had it); this rule gave fraud-like +0.002 /
-0.005, make_classification +0.032 / -0.004, ijcnn1 +0.028 / +0.006, w8a +0.017 /
+0.000, and a9a and a9a (3% positives) unchanged.

With :class:`aucstream.LSPAUC` among the candidates, the first ``ensemble - 1`` by
:math:`G` (two, by default) average with the full-AUC member, when that member does
not lead (a full-AUC learner that leads by :math:`G` and has the best windowed full
AUC scores alone, as before). Measured against the leader and the full-AUC member
alone (``StreamPipeline(max_fpr=0.05)``, one pass, test pAUC at FPR :math:`\le`
0.05 / full AUC): ijcnn1 0.6755 / 0.9078 to 0.6837 / 0.9097, w8a 0.8860 / 0.9752 to
0.8912 / 0.9750, make_classification 0.6250 / 0.7813 to 0.6360 / 0.7764 (the full AUC
0.009 below ``StreamPipeline()``'s), a9a and a9a (3% positives) unchanged (a full-AUC
learner leads); on the held-out streams of ``benchmarks/bench_pauc.py``
(``held_out_streams``) skin (3% positives) +0.012, letter -0.001, the four others
unchanged.

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
"""

from __future__ import annotations

import math

import numpy as np

from ._streaming_auc import RollingAUC

__all__ = ["GuardedPartialAUC", "halve", "incumbent", "members", "spared"]

#: The weight of the partial AUC in the racing statistic (the full AUC has the rest).
#: One half: on the three streams where the race by the partial AUC alone had chosen
#: differently (make_classification, fraud-like, ijcnn1), 2/3 chose as 1/2 did.
PARTIAL_WEIGHT = 0.5


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
        if partial != partial:  # NaN: one class missing
            return partial
        return PARTIAL_WEIGHT * partial + (1.0 - PARTIAL_WEIGHT) * self.full()

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


def spared(search, alive) -> set[int]:
    """The positions in ``alive`` (indices of ``search.candidates_``) of the candidates
    that the halving of ``OnePassSearch(max_fpr=β)`` spares: none without ``max_fpr``;
    with it, the partial-AUC learners (the candidates that take ``max_fpr``; module
    docstring, "Sparing")."""
    if search.max_fpr is None:
        return set()
    candidates = search.candidates_
    return {j for j, i in enumerate(alive) if "max_fpr" in candidates[i].get_params(deep=False)}


def halve(search, alive, kept: list, why: int) -> list:
    """The halving step of an elimination round of ``OnePassSearch``: of ``kept``
    (positions in ``alive``, best first), the candidates not :func:`spared` beyond the
    first half (at least one) of the alive ones not spared are dropped (``why``);
    returns the positions kept, best first. Without ``max_fpr`` nothing is spared:
    the first ``ceil(len(alive) / 2)`` are kept, as the search always did."""
    protected = spared(search, alive)
    limit = max(1, math.ceil((len(alive) - len(protected)) / 2))
    halved = [j for j in kept if j not in protected][limit:]
    for j in halved:
        search._drop(alive[j], why, search.n_samples_seen_)
    return [j for j in kept if j not in halved]


def members(search, ranked) -> list:
    """The candidates that may average into the scores, best first (``ranked``: the
    alive ones by the racing statistic, best first); the search keeps the calibrated
    ones. Without ``max_fpr`` (or with ``ensemble`` 1), the first ``ensemble``. With
    it, the first ``ensemble - 1`` and the candidate not taking ``max_fpr`` with the
    best windowed full AUC (the earlier in ``ranked`` on ties); that candidate alone
    when it leads (module docstring, "The full-AUC member")."""
    size = int(search.ensemble)
    top = [int(i) for i in ranked[:size]]
    if search.max_fpr is None or size < 2:
        return top
    protected = spared(search, ranked)
    others = [i for j, i in enumerate(ranked) if j not in protected]
    if not others:
        return top
    full = [m.full() for m in search._current_metrics(others, windowed=True)]
    if any(f != f for f in full):  # a class missing: no full AUC yet
        return top
    best = int(others[int(np.argmax(full))])
    if best == top[0]:
        return top[:1]
    return [*[i for i in top[: size - 1] if i != best], best]


def incumbent(search, alive, kept: list) -> int:
    """The candidate an elimination round crowns (the search's prequential scores,
    the one the drift watch follows): the first of ``kept`` (positions in ``alive``,
    best first); with ``max_fpr``, the first that is not :func:`spared`, when there is
    one (module docstring, "The incumbent")."""
    protected = spared(search, alive)
    first = next((j for j in kept if j not in protected), kept[0])
    return int(alive[first])
