r"""Exact ranking metrics for evaluating scoring models, in batch and on streams.

- :func:`roc_auc` — the exact ROC AUC of a sample (below);
- :func:`pr_auc` — the area under the precision-recall curve (average precision),
  more telling than the ROC AUC when positives are rare;
- :class:`PrequentialAUC` — the exact AUC of every (score, label) pair of a stream so
  far, O(log n) amortized per pair, with an optional bounded-memory mode;
- :class:`RollingAUC` — the exact AUC of the last ``window`` pairs.

The AUC of a scoring function :math:`f` on a sample with :math:`n_+` positives and
:math:`n_-` negatives is (Gao et al. 2013, §2; G16 §2)

.. math::

    \\mathrm{AUC}(f) = \\frac{1}{n_+ n_-} \\sum_{i \\in +} \\sum_{j \\in -}
        \\big(\\mathbb{I}[f_i > f_j] + \\tfrac12 \\mathbb{I}[f_i = f_j]\\big).

It is computed from ranks in O(n log n): sort the scores, give tied scores their
average rank, and take :math:`(R_+ - n_+(n_+ + 1)/2) / (n_+ n_-)` where :math:`R_+` is
the sum of the positives' ranks (the Mann-Whitney U statistic).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import rankdata

from ._streaming_auc import PrequentialAUC, RollingAUC, _as_1d, _partial_auc, _partial_region

__all__ = ["roc_auc", "pr_auc", "pairwise_auc_loss", "PrequentialAUC", "RollingAUC"]


def _binary_mask(y_true: np.ndarray, pos_label) -> np.ndarray:
    labels = np.unique(y_true)
    if labels.size > 2:
        raise ValueError(
            f"roc_auc needs binary labels; y_true has {labels.size} distinct values: {labels[:10]}"
        )
    if pos_label is None:
        if labels.size == 2:
            pos_label = labels[1]
        elif labels.size == 1 and labels[0] in (1, True):
            pos_label = labels[0]
        else:
            pos_label = 1
    return y_true == pos_label


def _checked(y_true, y_score, pos_label, what: str) -> tuple[np.ndarray, np.ndarray]:
    """The positive mask and float64 scores, after the checks every metric shares."""
    y_true = _as_1d("y_true", np.asarray(y_true))
    y_score = _as_1d("y_score", np.asarray(y_score, dtype=np.float64))
    if y_true.shape != y_score.shape:
        raise ValueError(
            f"y_true and y_score have different lengths: {y_true.size} and {y_score.size}"
        )
    if not np.all(np.isfinite(y_score)):
        raise ValueError(f"y_score contains NaN or infinity; the {what} is undefined")
    return _binary_mask(y_true, pos_label), y_score


def roc_auc(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    pos_label=None,
    max_fpr: float | None = None,
    min_tpr: float | None = None,
    standardized: bool = True,
) -> float:
    """Area under the ROC curve, exact, with ties counted as one half.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Two distinct label values. The positive class is ``pos_label``, or the larger
        of the two values when ``pos_label`` is None (as in ``classes_[1]`` of every
        aucstream estimator).
    y_score : array-like of shape (n_samples,)
        Scores; larger means more likely positive. Must be finite.
    pos_label : scalar, optional
        The label of the positive class.

    Returns
    -------
    float
        The AUC in [0, 1].

    Raises
    ------
    ValueError
        If the inputs have different lengths, the scores are not finite, there are
        more than two labels, or only one class is present (the AUC is undefined).

    Examples
    --------
    >>> from aucstream.metrics import roc_auc
    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    >>> roc_auc([-1, 1, 1], [0.5, 0.5, 0.9])  # a tie counts one half
    0.75
    """
    region = _partial_region(max_fpr, min_tpr, standardized, "roc_auc")
    positive, y_score = _checked(y_true, y_score, pos_label, "AUC")
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError(
            "roc_auc is undefined when only one class is present in y_true "
            f"({n_pos} positives, {n_neg} negatives)"
        )
    if region is not None:
        neg, pos = np.sort(y_score[~positive]), np.sort(y_score[positive])
        return _partial_auc(neg, pos, n_neg, n_pos, region, standardized)
    ranks = rankdata(y_score, method="average")
    rank_sum = float(ranks[positive].sum())
    return (rank_sum - n_pos * (n_pos + 1) / 2.0) / (float(n_pos) * float(n_neg))


def pr_auc(y_true: ArrayLike, y_score: ArrayLike, *, pos_label=None) -> float:
    """Area under the precision-recall curve, as average precision.

    ``AP = sum_k (R_k - R_{k-1}) P_k`` over the distinct score thresholds, from the
    highest down (scikit-learn's ``average_precision_score``, which this calls): the
    mean precision at the ranks of the positives, with tied scores taken as one
    threshold. A random ranking scores the positive rate, not 0.5.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Two distinct label values; the positive class is ``pos_label`` or the larger.
    y_score : array-like of shape (n_samples,)
        Scores; larger means more likely positive. Must be finite.
    pos_label : scalar, optional
        The label of the positive class.

    Returns
    -------
    float
        The average precision in [0, 1].

    Examples
    --------
    >>> from aucstream.metrics import pr_auc
    >>> round(pr_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]), 4)
    0.8333
    """
    from sklearn.metrics import average_precision_score

    positive, y_score = _checked(y_true, y_score, pos_label, "PR AUC")
    if not positive.any():
        raise ValueError("pr_auc is undefined without positives in y_true")
    return float(average_precision_score(positive, y_score))


def pairwise_auc_loss(y_true: ArrayLike, y_score: ArrayLike, loss: str = "square") -> float:
    """Mean pairwise surrogate AUC loss over all positive-negative pairs, by brute force.

    ``mean_{i in +, j in -} l(s_i - s_j)`` with ``l(z) = (1 - z)^2`` ("square",
    the OPAUC loss) or ``max(0, 1 - z)`` ("hinge", the OAM loss). :math:`O(n_+ n_-)` time and
    memory: meant for tests and small diagnostics.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels; the positive class is the larger value.
    y_score : array-like of shape (n_samples,)
        Scores.
    loss : {"square", "hinge"}
        The pairwise surrogate.

    Returns
    -------
    float
        The mean pairwise loss.
    """
    y_true = np.asarray(y_true).ravel()
    y_score = np.asarray(y_score, dtype=np.float64).ravel()
    positive = _binary_mask(y_true, None)
    margins = y_score[positive][:, None] - y_score[~positive][None, :]
    if margins.size == 0:
        raise ValueError("pairwise_auc_loss needs both classes")
    if loss == "square":
        return float(np.mean((1.0 - margins) ** 2))
    if loss == "hinge":
        return float(np.mean(np.maximum(0.0, 1.0 - margins)))
    raise ValueError(f"loss must be 'square' or 'hinge', got {loss!r}")
