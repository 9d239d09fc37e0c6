r"""Streaming probability and threshold metrics, exact at every read.

Each metric counts ``(label, score, probability, prediction)`` of a stream in
arrival order, a chunk at a time, and reads its value at any point: the value equals
the batch metric on everything counted so far (scikit-learn's, up to the order of
floating-point sums; the log-loss sums the logarithms of products of 16 probabilities,
one logarithm per 16 rows, whose rounding is of the same size: :func:`_loss_sums`).

- :class:`StreamingLogLoss`: :math:`-\frac1n \sum_i y_i \log p_i + (1 - y_i) \log (1 - p_i)`
  (``sklearn.metrics.log_loss``);
- :class:`StreamingBrier`: :math:`\frac1n \sum_i (p_i - y_i)^2` (``brier_score_loss``);
- :class:`StreamingECE`: expected calibration error over 10 equal-width bins of the
  probability, :math:`\sum_b |\sum_{i \in b} (y_i - p_i)| / n` (Naeini, Cooper and
  Hauskrecht 2015, "Obtaining well calibrated probabilities using Bayesian binning",
  AAAI; bin :math:`b = \min(\lfloor 10 p \rfloor, 9)`), from exact per-bin counts;
- :class:`StreamingGMean`: :math:`\sqrt{\mathrm{TPR} \cdot \mathrm{TNR}}` of the
  predicted labels (the confusion matrix's geometric mean);
- :class:`StreamingKappa`: Cohen's kappa of the predicted labels
  (``cohen_kappa_score``), from the confusion counts;
- :class:`StreamingAveragePrecision`: average precision
  (``average_precision_score``); it keeps every score and sorts them at each read,
  O(n) memory and O(n log n) time per read (there is no exact bounded form);
- :class:`StreamingPositiveRate`: the share of positive labels so far.

Every class has ``update(positive, scores, proba, predicted)`` (boolean labels,
decision scores, probabilities of the positive class, boolean predictions; a metric
reads only what it declares in ``needs``) and ``get()``, NaN while undefined. An
``update`` refuses, before it counts anything, labels that are not booleans (or 0/1),
values it needs that are missing or of another length than the labels, arrays that
are not 1-D (one column is read as one, as ``roc_auc`` reads it), and for the ECE a
probability outside [0, 1] (:func:`checked_pair`).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ._kernels import jit
from ._streaming_auc import _as_1d

__all__ = [
    "StreamingAveragePrecision",
    "StreamingBrier",
    "StreamingECE",
    "StreamingGMean",
    "StreamingKappa",
    "StreamingLogLoss",
    "StreamingPositiveRate",
    "expected_calibration_error",
    "Together",
    "update_together",
]

#: Equal-width probability bins of the expected calibration error.
ECE_BINS = 10


class _Counted:
    """The shared count of examples."""

    needs: frozenset = frozenset()

    def __init__(self) -> None:
        self.n = 0

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n={self.n}, value={self.get():.6g})"

    def get(self) -> float:  # pragma: no cover - abstract
        raise NotImplementedError


def _booleans(values, owner: str, what: str = "positive") -> np.ndarray:
    """``values`` as a contiguous 1-D boolean array: booleans, or numbers that are all
    0 or 1 (labels of another coding, such as -1/+1, would all read as true)."""
    values = _as_1d(f"{owner}: {what}", np.asarray(values))
    if values.dtype != bool:
        if values.dtype.kind not in "biuf":
            raise ValueError(f"{owner}: {what} must be booleans, got dtype {values.dtype}")
        odd = (values != 0) & (values != 1)
        if odd.any():
            raise ValueError(
                f"{owner}: {what} must be booleans or 0/1, got {values[odd][0].item()!r} at "
                f"position {int(np.flatnonzero(odd)[0])}"
            )
    return np.ascontiguousarray(values, dtype=bool)


def checked_pair(metric, positive, values, what: str, booleans: bool = False):
    """``(positive, values)`` of one ``update`` of ``metric``, checked before anything is
    counted: ``positive`` booleans (:func:`_booleans`), ``values`` (``what``: the
    probabilities, scores or predictions it needs) given, 1-D and as long; float64, or
    booleans when ``booleans``. Every array that reaches a compiled loop has passed
    here (numba does not check bounds)."""
    owner = f"{type(metric).__name__}.update"
    positive = _booleans(positive, owner)
    if values is None:
        raise TypeError(f"{owner} needs {what}; got None")
    if booleans:
        values = _booleans(values, owner, what)
    else:
        values = _as_1d(f"{owner}: {what}", np.asarray(values))
        if values.dtype.kind not in "biuf":
            raise ValueError(f"{owner}: {what} must be numbers, got dtype {values.dtype}")
        values = np.ascontiguousarray(values, dtype=np.float64)
    if values.shape[0] != positive.shape[0]:
        raise ValueError(
            f"{owner}: {positive.shape[0]} labels (positive) and {values.shape[0]} {what}"
        )
    return positive, values


#: Factors of one product before its logarithm: each factor of a block taken as a
#: product lies in [LOG_FLOOR, 1], so the product stays above 1e-240, a normal float.
_BLOCK = 16
#: The smallest factor a product takes (smaller ones, NaN and factors above 1 send
#: their block through one logarithm per row).
LOG_FLOOR = 1e-15


@jit(inline="llvm")
def _label_at(labels, j):
    """Byte ``j`` of a boolean array's bytes as 1.0 when it is not zero, else 0.0,
    without a comparison (which compiles to a jump): ``(b + 255) >> 8`` for a byte
    ``b``."""
    return np.float64((np.int32(labels[j]) + 255) >> 8)


@jit
def _loss_sums(positive, p, out):
    r"""The sums of a chunk's log-losses and squared errors into ``out[0]`` and
    ``out[1]``, in one pass.

    The log-loss of row :math:`i` is :math:`-\log q_i` with :math:`q_i = p_i` for a
    positive and :math:`1 - p_i` for a negative (``sklearn.metrics.log_loss``'s
    :math:`\log(1 - p)`). Rows go in blocks of 64, four interleaved lanes of 16 rows
    each: a lane's 16 factors are multiplied and the block adds the logarithms of its
    four products, one logarithm per 16 rows instead of one per row. Each product
    rounds 15 times (relative error at most :math:`15 \cdot 2^{-53}`, so at most
    :math:`1.7 \cdot 10^{-15}` on its logarithm, the size of the rounding of the sum
    itself); a block holding a factor outside :math:`[10^{-15}, 1]` (an uncapped
    probability, NaN) takes one logarithm per row, as the rows after the last whole
    block do. The squared errors are summed in the same four lanes.

    No branch on the labels in the blocks: each label's byte is read as the float
    :math:`y \in \{0, 1\}` (any non-zero byte counts as 1, as numpy's ``True``), and
    :math:`q = y p + (1 - y)(1 - p)`, which is :math:`p` or :math:`1 - p` exactly
    (one term is a zero, added exactly) wherever the block's check passes. A choice
    between ``p`` and ``1 - p`` on the label compiles to a jump per row that streams
    of new labels mispredict: 2.3 times slower on labels not seen before.
    """
    n = p.shape[0]
    labels = positive.view(np.uint8)
    log_loss = 0.0
    b0 = b1 = b2 = b3 = 0.0
    i = 0
    while i + 4 * _BLOCK <= n:
        m0 = m1 = m2 = m3 = 1.0
        ok = True
        for j in range(i, i + 4 * _BLOCK, 4):
            p0, p1, p2, p3 = p[j], p[j + 1], p[j + 2], p[j + 3]
            y0, y1 = _label_at(labels, j), _label_at(labels, j + 1)
            y2, y3 = _label_at(labels, j + 2), _label_at(labels, j + 3)
            q0 = y0 * p0 + (1.0 - y0) * (1.0 - p0)
            q1 = y1 * p1 + (1.0 - y1) * (1.0 - p1)
            q2 = y2 * p2 + (1.0 - y2) * (1.0 - p2)
            q3 = y3 * p3 + (1.0 - y3) * (1.0 - p3)
            ok &= (q0 >= LOG_FLOOR) & (q0 <= 1.0) & (q1 >= LOG_FLOOR) & (q1 <= 1.0)
            ok &= (q2 >= LOG_FLOOR) & (q2 <= 1.0) & (q3 >= LOG_FLOOR) & (q3 <= 1.0)
            m0 *= q0
            m1 *= q1
            m2 *= q2
            m3 *= q3
            # p - 1.0 for a positive, p - 0.0 (= p, bit for bit) for a negative
            e0 = p0 - y0
            e1 = p1 - y1
            e2 = p2 - y2
            e3 = p3 - y3
            b0 += e0 * e0
            b1 += e1 * e1
            b2 += e2 * e2
            b3 += e3 * e3
        if ok:
            log_loss -= (math.log(m0) + math.log(m1)) + (math.log(m2) + math.log(m3))
        else:
            for j in range(i, i + 4 * _BLOCK):
                log_loss -= math.log(p[j] if positive[j] else 1.0 - p[j])
        i += 4 * _BLOCK
    for j in range(i, n):
        log_loss -= math.log(p[j] if positive[j] else 1.0 - p[j])
        e = p[j] - 1.0 if positive[j] else p[j]
        b0 += e * e
    out[0], out[1] = log_loss, (b0 + b1) + (b2 + b3)


@jit
def _log_loss_sum(positive, p):
    """The sum of the log-losses of a chunk (:func:`_loss_sums`)."""
    out = np.empty(2)
    _loss_sums(positive, p, out)
    return out[0]


@jit
def _brier_sum(positive, p):
    """The sum of the squared errors of a chunk (:func:`_loss_sums`)."""
    out = np.empty(2)
    _loss_sums(positive, p, out)
    return out[1]


@jit
def _chunk_sums(positive, p, out):
    """Add a chunk's log-loss sum to ``out[0]``, its squared-error sum to ``out[1]``
    (those of :func:`_log_loss_sum` and :func:`_brier_sum`: :func:`_loss_sums`,
    skipped when ``p`` is empty) and its positives to ``out[2]``."""
    n_pos = 0
    for i in range(positive.shape[0]):
        n_pos += positive[i]
    _loss_sums(positive, p, out)
    out[2] = n_pos


class Together:
    """The :class:`StreamingLogLoss`, :class:`StreamingBrier` and
    :class:`StreamingPositiveRate` among ``metrics``, fed together in one compiled
    pass (:func:`_chunk_sums`), each as its ``update`` would; ``rest`` holds the
    other metrics (not fed). Sorted out once, for a stream of chunks.
    """

    _KINDS: tuple[type, ...] = ()  # (set below, after the classes)

    def __init__(self, metrics) -> None:
        metrics = list(metrics)
        self.fed = [m for m in metrics if type(m) in self._KINDS]
        self.rest = [m for m in metrics if type(m) not in self._KINDS]
        self.needs_proba = any(type(m) is not StreamingPositiveRate for m in self.fed)
        #: each fed metric with the place of its sum in ``sums`` (2: the positives)
        self.slots = [
            (m, {StreamingLogLoss: 0, StreamingBrier: 1, StreamingPositiveRate: 2}[type(m)])
            for m in self.fed
        ]
        self.sums = np.empty(3)
        #: the metric named by a refusal of the probabilities (one that reads them)
        self.reader = next((m for m in self.fed if type(m) is not StreamingPositiveRate), None)

    def update(self, positive: np.ndarray, proba) -> None:
        """Feed one chunk (boolean labels, probabilities of the positive class)."""
        if not self.fed:
            return
        if self.needs_proba:
            positive, p = checked_pair(self.reader, positive, proba, "probabilities")
        else:
            positive, p = _booleans(positive, "StreamingPositiveRate.update"), _NO_PROBA
        n = positive.shape[0]
        _chunk_sums(positive, p, self.sums)
        sums = self.sums.tolist()
        for m, slot in self.slots:
            if slot == 2:
                m.n_pos += int(sums[2])
            else:
                m.total += sums[slot]
            m.n += n


def update_together(metrics, positive: np.ndarray, proba) -> list:
    """Feed one chunk to the :class:`StreamingLogLoss`, :class:`StreamingBrier` and
    :class:`StreamingPositiveRate` among ``metrics`` in one compiled pass
    (:func:`_chunk_sums`), each as its ``update`` would; the other metrics are
    returned, not fed (:class:`Together`, sorted out for this one chunk)."""
    together = Together(metrics)
    together.update(positive, proba)
    return together.rest


_NO_PROBA = np.empty(0)


class _MeanLoss(_Counted):
    """The mean of a per-example loss of the probabilities, summed over each chunk in
    one compiled pass (``_sum``)."""

    needs = frozenset({"proba"})

    def __init__(self) -> None:
        super().__init__()
        self.total = 0.0

    @staticmethod
    def _sum(positive: np.ndarray, p: np.ndarray) -> float:  # pragma: no cover
        raise NotImplementedError

    def update(
        self,
        positive: np.ndarray,
        scores: np.ndarray | None = None,
        proba: np.ndarray | None = None,
        predicted: np.ndarray | None = None,
    ) -> None:
        positive, p = checked_pair(self, positive, proba, "probabilities")
        self.total += float(self._sum(positive, p))
        self.n += p.shape[0]

    def get(self) -> float:
        return self.total / self.n if self.n else math.nan


class StreamingLogLoss(_MeanLoss):
    """Mean log-loss of the probabilities so far (see the module docstring).

    Examples
    --------
    >>> m = StreamingLogLoss(); m.update(np.array([True, False]), None, np.array([0.8, 0.4]))
    >>> round(m.get(), 6)
    0.366985
    """

    _sum = staticmethod(_log_loss_sum)


class StreamingBrier(_MeanLoss):
    """Mean squared error of the probabilities so far (the Brier score).

    Examples
    --------
    >>> m = StreamingBrier(); m.update(np.array([True, False]), None, np.array([0.8, 0.4]))
    >>> round(m.get(), 6)
    0.1
    """

    _sum = staticmethod(_brier_sum)


def _ece_bins(p: np.ndarray) -> np.ndarray:
    return np.minimum((p * ECE_BINS).astype(np.intp), ECE_BINS - 1)


def expected_calibration_error(positive: ArrayLike, proba: ArrayLike) -> float:
    """The expected calibration error of a sample (10 equal-width bins), in batch.

    Parameters
    ----------
    positive : array-like of bool
        Whether each example is positive.
    proba : array-like of float
        The probabilities of the positive class, in [0, 1].

    Returns
    -------
    float
        :math:`\\sum_b |\\sum_{i \\in b} (y_i - p_i)| / n`; NaN for no examples.

    Examples
    --------
    >>> expected_calibration_error([True, False, True], [0.9, 0.15, 0.55])
    0.2333333333333333
    """
    m = StreamingECE()
    m.update(np.asarray(positive, dtype=bool), None, np.asarray(proba, dtype=np.float64))
    return m.get()


class StreamingECE(_Counted):
    """Expected calibration error over 10 equal-width bins (exact per-bin counts).

    Examples
    --------
    >>> m = StreamingECE(); m.update(np.array([True, False]), None, np.array([0.8, 0.4]))
    >>> round(m.get(), 6)
    0.3
    """

    needs = frozenset({"proba"})

    def __init__(self) -> None:
        super().__init__()
        self.sum_p = np.zeros(ECE_BINS)
        self.n_pos = np.zeros(ECE_BINS)

    def update(
        self,
        positive: np.ndarray,
        scores: np.ndarray | None = None,
        proba: np.ndarray | None = None,
        predicted: np.ndarray | None = None,
    ) -> None:
        positive, p = checked_pair(self, positive, proba, "probabilities")
        bad = ~((p >= 0.0) & (p <= 1.0))  # (NaN included)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"StreamingECE.update: probability {p[i].item()!r} at position {i}")
        bins = _ece_bins(p)
        self.sum_p += np.bincount(bins, weights=p, minlength=ECE_BINS)
        self.n_pos += np.bincount(bins, weights=positive.astype(float), minlength=ECE_BINS)
        self.n += p.shape[0]

    def get(self) -> float:
        if not self.n:
            return math.nan
        return float(np.sum(np.abs(self.n_pos - self.sum_p)) / self.n)


class _Confusion(_Counted):
    """Counts of the confusion matrix of predicted labels: tp, fn, fp, tn."""

    needs = frozenset({"predicted"})

    def __init__(self) -> None:
        super().__init__()
        self.counts = np.zeros(4, dtype=np.int64)  # tp, fn, fp, tn

    def update(
        self,
        positive: np.ndarray,
        scores: np.ndarray | None = None,
        proba: np.ndarray | None = None,
        predicted: np.ndarray | None = None,
    ) -> None:
        positive, predicted = checked_pair(self, positive, predicted, "predictions", True)
        cell = 2 * (~positive).astype(np.intp) + (~predicted).astype(np.intp)
        self.counts += np.bincount(cell, minlength=4)
        self.n += positive.shape[0]


class StreamingGMean(_Confusion):
    """Geometric mean of the true positive and true negative rates of the predictions.

    NaN while a class is missing.

    Examples
    --------
    >>> m = StreamingGMean()
    >>> m.update(np.array([True, True, False, False]), predicted=np.array([1, 0, 0, 0]))
    >>> round(m.get(), 6)
    0.707107
    """

    def get(self) -> float:
        tp, fn, fp, tn = (int(c) for c in self.counts)
        if tp + fn == 0 or tn + fp == 0:
            return math.nan
        return math.sqrt(tp / (tp + fn) * (tn / (tn + fp)))


class StreamingKappa(_Confusion):
    """Cohen's kappa of the predictions against the labels (NaN when undefined).

    Examples
    --------
    >>> m = StreamingKappa()
    >>> m.update(np.array([True, True, False, False]), predicted=np.array([1, 0, 0, 0]))
    >>> m.get()
    0.5
    """

    def get(self) -> float:
        tp, fn, fp, tn = (float(c) for c in self.counts)
        n = tp + fn + fp + tn
        if n == 0:
            return math.nan
        observed = (tp + tn) / n
        expected = ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / (n * n)
        if expected == 1.0:
            return math.nan
        return (observed - expected) / (1.0 - expected)


class StreamingAveragePrecision(_Counted):
    """Exact average precision of every score so far (O(n) memory, O(n log n) reads).

    Examples
    --------
    >>> m = StreamingAveragePrecision()
    >>> m.update(np.array([0, 0, 1, 1], bool), np.array([0.1, 0.4, 0.35, 0.8]))
    >>> round(m.get(), 4)
    0.8333
    """

    needs = frozenset({"scores"})
    ranks = True  # a ranking metric: prequential(rank="proba") gives it probabilities

    def __init__(self) -> None:
        super().__init__()
        self._scores = np.empty(1024)
        self._positive = np.empty(1024, dtype=bool)

    def update(
        self,
        positive: np.ndarray,
        scores: np.ndarray,
        proba: np.ndarray | None = None,
        predicted: np.ndarray | None = None,
    ) -> None:
        positive, scores = checked_pair(self, positive, scores, "scores")
        k = scores.shape[0]
        if self.n + k > self._scores.size:
            size = max(2 * self._scores.size, self.n + k)
            self._scores = np.resize(self._scores, size)
            self._positive = np.resize(self._positive, size)
        self._scores[self.n : self.n + k] = scores
        self._positive[self.n : self.n + k] = positive
        self.n += k

    def get(self) -> float:
        if not self._positive[: self.n].any():
            return math.nan
        from sklearn.metrics import average_precision_score  # the one definition (pr_auc)

        return float(average_precision_score(self._positive[: self.n], self._scores[: self.n]))


class StreamingPositiveRate(_Counted):
    """The share of positive labels so far.

    Examples
    --------
    >>> m = StreamingPositiveRate(); m.update(np.array([True, False, False]))
    >>> round(m.get(), 4)
    0.3333
    """

    def __init__(self) -> None:
        super().__init__()
        self.n_pos = 0

    def update(
        self,
        positive: np.ndarray,
        scores: np.ndarray | None = None,
        proba: np.ndarray | None = None,
        predicted: np.ndarray | None = None,
    ) -> None:
        positive = _booleans(positive, "StreamingPositiveRate.update")
        self.n_pos += int(np.count_nonzero(positive))
        self.n += positive.shape[0]

    def get(self) -> float:
        return self.n_pos / self.n if self.n else math.nan


Together._KINDS = (StreamingLogLoss, StreamingBrier, StreamingPositiveRate)
