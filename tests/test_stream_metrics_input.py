"""Bad input to the streaming metrics of ``aucstream.metrics``: a clear error naming the
metric and what is wrong, and the metric unchanged (their compiled sums read the
labels and probabilities without bounds checks, so lengths are checked first)."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from aucstream._stream_metrics import Together
from aucstream.metrics import (
    StreamingAveragePrecision,
    StreamingBrier,
    StreamingECE,
    StreamingGMean,
    StreamingKappa,
    StreamingLogLoss,
    StreamingPositiveRate,
)

POSITIVE = np.array([True, False, True, False])
PROBA = np.array([0.9, 0.2, 0.6, 0.4])

#: (metric, the keyword of the values it needs)
METRICS = [
    (StreamingLogLoss, "proba"),
    (StreamingBrier, "proba"),
    (StreamingECE, "proba"),
    (StreamingGMean, "predicted"),
    (StreamingKappa, "predicted"),
    (StreamingAveragePrecision, "scores"),
]


def fed(cls, what):
    metric = cls()
    values = PROBA > 0.5 if what == "predicted" else PROBA
    metric.update(POSITIVE, **{what: values})
    return metric


def unchanged(before, after) -> bool:
    a, b = vars(before), vars(after)
    return a.keys() == b.keys() and all(
        np.array_equal(a[k].view(np.uint8), b[k].view(np.uint8))  # (the bytes: NaN too)
        if isinstance(a[k], np.ndarray)
        else a[k] == b[k]
        for k in a
    )


@pytest.mark.parametrize("cls, what", METRICS)
@pytest.mark.parametrize(
    "positive, values, error, words",
    [
        (POSITIVE[:3], PROBA, ValueError, "3 labels (positive) and 4"),  # shorter labels
        (POSITIVE, PROBA[:2], ValueError, "4 labels (positive) and 2"),
        (np.array([1, -1, 1, -1]), PROBA, ValueError, "booleans or 0/1, got -1 at position 1"),
        (np.array(["a", "b", "a", "b"]), PROBA, ValueError, "must be booleans, got dtype"),
        (POSITIVE.reshape(2, 2), PROBA, ValueError, "1-D (one value per pair); got shape (2, 2)"),
        (POSITIVE, None, TypeError, "needs"),
    ],
)
def test_a_bad_update_is_refused_by_name_and_changes_nothing(
    cls, what, positive, values, error, words
):
    metric = fed(cls, what)
    before = copy.deepcopy(metric)
    if what == "predicted" and values is not None:
        values = values > 0.5
    with pytest.raises(error, match=f"{cls.__name__}.update") as caught:
        metric.update(positive, **{what: values})
    assert words in str(caught.value)
    assert unchanged(before, metric)


def test_labels_and_values_as_columns_or_0_1_numbers_are_read_as_given():
    for cls, what in METRICS:
        values = (PROBA > 0.5).astype(int) if what == "predicted" else PROBA
        a, b = cls(), cls()
        a.update(POSITIVE, **{what: values})
        b.update(POSITIVE.astype(float).reshape(-1, 1), **{what: values.reshape(-1, 1)})
        assert a.get() == b.get() or (math.isnan(a.get()) and math.isnan(b.get())), cls


def test_the_calibration_error_refuses_a_probability_outside_0_1():
    metric = fed(StreamingECE, "proba")
    before = copy.deepcopy(metric)
    for bad in (np.nan, 1.5, -0.1):
        with pytest.raises(ValueError, match=r"StreamingECE.update: probability .* position 2"):
            metric.update(POSITIVE, proba=np.array([0.1, 0.2, bad, 0.4]))
    assert unchanged(before, metric)


def test_the_positive_rate_and_the_fused_sums_check_their_labels_too():
    rate = StreamingPositiveRate()
    with pytest.raises(ValueError, match="StreamingPositiveRate.update: positive must be"):
        rate.update(np.array([2, 0, 1]))
    assert rate.n == 0
    metrics = [StreamingLogLoss(), StreamingBrier(), StreamingPositiveRate()]
    together = Together(metrics)
    with pytest.raises(ValueError, match="4 labels .positive. and 3 probabilities"):
        together.update(POSITIVE, PROBA[:3])
    assert [m.n for m in metrics] == [0, 0, 0]
    together.update(POSITIVE, PROBA)
    alone = StreamingLogLoss()
    alone.update(POSITIVE, proba=PROBA)
    assert metrics[0].get() == alone.get()
