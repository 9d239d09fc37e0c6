"""Exact AUCs with Hanley & McNeil's (1982) variance, for the drift confirmation of
:mod:`aucstream._race_drift` (a dozen small AUCs at each check: without the checks
and the general ranking of :func:`aucstream.metrics.roc_auc`, to its bit)."""

from __future__ import annotations

import numpy as np

__all__ = ["auc_and_variance", "block_aucs", "hanley_mcneil"]


def auc_and_variance(labels: np.ndarray, scores: np.ndarray) -> tuple[float, float]:
    """The exact AUC of the pairs (0/1 ``labels``, both present; finite ``scores``)
    and Hanley & McNeil's (1982) variance of it (:func:`hanley_mcneil`).

    The AUC is :func:`aucstream.metrics.roc_auc`'s, to the bit: the Mann-Whitney
    statistic (the positives' midranks, ties sharing the mean of their ranks, less
    ``n1 (n1 + 1) / 2``), a half-integer computed exactly, without the checks and the general
    ranking of the public function (the confirmation computes a dozen at each check);
    computed as :func:`block_aucs` does, from the same statistic.
    """
    return block_aucs(labels, scores, [(0, labels.size)])[0]


def block_aucs(
    labels: np.ndarray, scores: np.ndarray, blocks: list[tuple[int, int]]
) -> list[tuple[float, float]]:
    """:func:`auc_and_variance` of each block ``labels[lo:hi]``, ``scores[lo:hi]`` of
    ``blocks`` (each with both classes), to the bit.

    The Mann-Whitney statistic of a block counts, for each positive, the negatives
    below it and half those tied with it: two binary searches of the positives in the
    block's sorted negatives (a sort of the scores, not the stable sort of their
    indices that midranks need). It is the midranks' ``rank_sum - n1 (n1 + 1) / 2``
    exactly (a sum of half-integers, exact in any order), so the AUC is the same
    float."""
    out = []
    for lo, hi in blocks:
        y, s = labels[lo:hi], scores[lo:hi]
        positive = y == 1
        n1 = int(np.count_nonzero(positive))
        negatives = np.sort(s[~positive])
        below = np.searchsorted(negatives, s[positive], side="left")
        upto = np.searchsorted(negatives, s[positive], side="right")
        u = float(below.sum()) + float((upto - below).sum()) / 2.0
        a = u / (float(n1) * float(s.size - n1))
        out.append((a, hanley_mcneil(a, n1, s.size - n1)))
    return out


def hanley_mcneil(a: float, n1: int, n0: int) -> float:
    """Hanley & McNeil's (1982) variance of an AUC ``a`` of ``n1`` positives and
    ``n0`` negatives,
    :math:`(A(1-A) + (n_+ - 1)(Q_1 - A^2) + (n_- - 1)(Q_2 - A^2))/(n_+ n_-)` with
    :math:`Q_1 = A/(2 - A)`, :math:`Q_2 = 2A^2/(1 + A)`."""
    q1, q2 = a / (2.0 - a), 2.0 * a * a / (1.0 + a)
    var = (a * (1.0 - a) + (n1 - 1) * (q1 - a * a) + (n0 - 1) * (q2 - a * a)) / (n1 * n0)
    return max(var, 0.0)
