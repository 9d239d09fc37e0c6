r"""The racing statistic of ``OnePassSearch(max_fpr=β)``: partial AUC guarded by the
full AUC.

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
    it, the ensemble's last place goes to the candidate with the best windowed full
    AUC (the earlier in ``ranked`` on ties) when it is not among the first
    ``ensemble`` already (module docstring, "The full-AUC member")."""
    size = int(search.ensemble)
    top = [int(i) for i in ranked[:size]]
    if search.max_fpr is None or size < 2:
        return top
    others = [i for j, i in enumerate(ranked) if j not in spared(search, ranked)]
    if not others:
        return top
    full = [m.full() for m in search._current_metrics(others, windowed=True)]
    if any(f != f for f in full):  # a class missing: no full AUC yet
        return top
    best = int(others[int(np.argmax(full))])
    return top[:1] if best == top[0] else [top[0], best]


def incumbent(search, alive, kept: list) -> int:
    """The candidate an elimination round crowns (the search's prequential scores,
    the one the drift watch follows): the first of ``kept`` (positions in ``alive``,
    best first); with ``max_fpr``, the first that is not :func:`spared`, when there is
    one (module docstring, "The incumbent")."""
    protected = spared(search, alive)
    first = next((j for j in kept if j not in protected), kept[0])
    return int(alive[first])
