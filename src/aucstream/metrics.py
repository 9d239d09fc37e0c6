r"""Exact ranking metrics for evaluating scoring models, in batch and on streams.

- :func:`roc_auc` — the exact ROC AUC of a sample (below), or its exact one-way
  (``max_fpr``) or two-way (``max_fpr``, ``min_tpr``) partial AUC;
- :func:`pr_auc` — the area under the precision-recall curve (average precision),
  more telling than the ROC AUC when positives are rare;
- :class:`PrequentialAUC` — the exact AUC of every (score, label) pair of a stream so
  far, O(log n) amortized per pair, with an optional bounded-memory mode;
- :class:`RollingAUC` — the exact AUC of the last ``window`` pairs;
- the streaming calibration and threshold metrics of a prequential evaluation
  (:func:`aucstream.evaluation.prequential`): :class:`StreamingLogLoss`,
  :class:`StreamingBrier`, :class:`StreamingECE` (:func:`expected_calibration_error`),
  :class:`StreamingGMean`, :class:`StreamingKappa`, :class:`StreamingAveragePrecision`
  (the exact :func:`pr_auc` of every score so far) and :class:`StreamingPositiveRate`.

Both streaming metrics take ``max_fpr``, ``min_tpr`` and ``standardized`` as
:func:`roc_auc` does and then give the same partial AUC of the pairs they count.

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

from ._stream_metrics import (
    StreamingAveragePrecision,
    StreamingBrier,
    StreamingECE,
    StreamingGMean,
    StreamingKappa,
    StreamingLogLoss,
    StreamingPositiveRate,
    expected_calibration_error,
)
from ._streaming_auc import PrequentialAUC, RollingAUC, _as_1d, _partial_auc, _partial_region
from ._typing import Label

__all__ = [
    "roc_auc",
    "pr_auc",
    "pairwise_auc_loss",
    "PrequentialAUC",
    "RollingAUC",
    "StreamingAveragePrecision",
    "StreamingBrier",
    "StreamingECE",
    "StreamingGMean",
    "StreamingKappa",
    "StreamingLogLoss",
    "StreamingPositiveRate",
    "expected_calibration_error",
]


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
    pos_label: Label | None = None,
    max_fpr: float | None = None,
    min_tpr: float | None = None,
    standardized: bool = True,
) -> float:
    r"""Area under the ROC curve, exact, with ties counted as one half; or a partial area.

    The ROC curve here joins the points :math:`(\mathrm{FPR}, \mathrm{TPR})` of the
    distinct score thresholds by straight lines: a score shared by :math:`f`
    negatives and :math:`t` positives is a diagonal segment, which is what counts a
    tie one half. Its whole area is the AUC (module docstring). With ``max_fpr``
    (:math:`\beta`) or ``min_tpr`` (:math:`\alpha`) it is an area of the top of the
    ranking instead, computed exactly from the sorted scores in O(n log n).

    **One-way partial AUC** (``max_fpr`` only): the area left of
    :math:`\mathrm{FPR} = \beta`,
    :math:`A_\beta = \int_0^\beta \mathrm{TPR}(u)\,du \in [0, \beta]`, where the curve
    is cut by linear interpolation. With ``standardized=True`` (the default) it is
    McClish's standardization (McClish, "Analyzing a portion of the ROC curve",
    Medical Decision Making 9(3), 1989),

    .. math::

        \frac12 \Big(1 + \frac{A_\beta - \beta^2/2}{\beta - \beta^2/2}\Big),

    which is 0.5 for a random ranking and 1 for a perfect one, and is the value of
    scikit-learn's ``roc_auc_score(y_true, y_score, max_fpr=beta)`` (to rounding);
    ``standardized=False`` returns :math:`A_\beta`. ``max_fpr=1`` is the AUC.

    **Two-way partial AUC** (``min_tpr`` given; ``max_fpr`` then defaults to 1): the
    area of the curve inside the region :math:`\{\mathrm{FPR} \le \beta,\
    \mathrm{TPR} \ge \alpha\}` above the line :math:`\mathrm{TPR} = \alpha`, as in
    Yang et al., "When All We Need is a Piece of the Pie: A Generic Framework for
    Optimizing Two-way Partial AUC", ICML 2021, §3.2 (whose region is written
    :math:`\mathrm{TPR} \ge 1 - \alpha`: their :math:`\alpha` is ``1 - min_tpr``),

    .. math::

        \mathrm{TPAUC}_{\alpha,\beta} = \frac{1}{(1 - \alpha)\,\beta}
            \int_0^\beta \max\big(\mathrm{TPR}(u) - \alpha,\ 0\big)\,du
            \ \in [0, 1],

    normalized by the area of the region (``standardized=False`` returns the integral,
    in :math:`[0, (1 - \alpha)\beta]`). When :math:`\alpha n_+` and
    :math:`\beta n_-` are integers and no scores tie, it is the AUC of the pairs of the
    :math:`(1 - \alpha) n_+` lowest-scored positives and the :math:`\beta n_-`
    highest-scored negatives (Yang et al.'s empirical form, normalized by the number
    of those pairs); with ties at the two cuts it interpolates the curve instead of
    choosing which tied scores to keep. ``min_tpr=0`` gives :math:`A_\beta / \beta`,
    the one-way area normalized without McClish's correction.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Two distinct label values. The positive class is ``pos_label``, or the larger
        of the two values when ``pos_label`` is None (as in ``classes_[1]`` of every
        aucstream estimator).
    y_score : array-like of shape (n_samples,)
        Scores; larger means more likely positive. Must be finite and 1-D (one column
        is accepted).
    pos_label : scalar, optional
        The label of the positive class.
    max_fpr : float in (0, 1], optional
        The largest false positive rate of the partial area. None: 1 (the whole AUC
        when ``min_tpr`` is None too).
    min_tpr : float in [0, 1), optional
        The smallest true positive rate of the two-way partial area. None: one-way.
    standardized : bool, default=True
        Return the standardized partial area (McClish one-way, normalized two-way) or,
        when False, the raw area. No effect on the whole AUC.

    Returns
    -------
    float
        The AUC or the (standardized) partial AUC, in [0, 1].

    Raises
    ------
    ValueError
        If the inputs have different lengths or are not 1-D, the scores are not finite,
        there are more than two labels, or only one class is present (the AUC and the
        partial AUCs are undefined; scikit-learn returns NaN with a warning there).
    InvalidParameterError
        A ValueError and a TypeError naming the parameter, if ``max_fpr`` is not a real
        number in (0, 1] (NaN, infinite, a bool or a string included), ``min_tpr`` not
        one in [0, 1), or ``standardized`` not a bool.

    Examples
    --------
    >>> from aucstream.metrics import roc_auc
    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    >>> roc_auc([-1, 1, 1], [0.5, 0.5, 0.9])  # a tie counts one half
    0.75
    >>> y, s = [0, 0, 0, 0, 1, 1], [0.1, 0.2, 0.3, 0.9, 0.4, 0.8]
    >>> roc_auc(y, s, max_fpr=0.5, standardized=False)  # left of FPR = 1/2
    0.25
    >>> round(roc_auc(y, s, max_fpr=0.5), 4)  # McClish's, as scikit-learn's
    0.6667
    >>> roc_auc(y, s, max_fpr=0.5, min_tpr=0.5)  # lowest positive vs top 2 negatives
    0.5
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


def pr_auc(y_true: ArrayLike, y_score: ArrayLike, *, pos_label: Label | None = None) -> float:
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
    positive, y_score = _checked(y_true, y_score, None, "pairwise loss")
    margins = y_score[positive][:, None] - y_score[~positive][None, :]
    if margins.size == 0:
        raise ValueError("pairwise_auc_loss needs both classes")
    if loss == "square":
        return float(np.mean((1.0 - margins) ** 2))
    if loss == "hinge":
        return float(np.mean(np.maximum(0.0, 1.0 - margins)))
    raise ValueError(f"loss must be 'square' or 'hinge', got {loss!r}")
