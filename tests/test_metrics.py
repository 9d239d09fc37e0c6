import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from aucstream.metrics import pairwise_auc_loss, roc_auc


def brute_force_auc(y, s):
    pos, neg = s[y == 1], s[y != 1]
    diff = pos[:, None] - neg[None, :]
    return float(np.mean((diff > 0) + 0.5 * (diff == 0)))


@settings(max_examples=200, deadline=None)
@given(n=st.integers(2, 300), levels=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_equals_sklearn_with_many_ties(n, levels, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    y[0], y[1] = 0, 1
    scores = rng.integers(0, levels, size=n).astype(float)  # few distinct values: many ties
    assert abs(roc_auc(y, scores) - roc_auc_score(y, scores)) <= 1e-12
    assert abs(roc_auc(y, scores) - brute_force_auc(y, scores)) <= 1e-12


def test_labels_and_pos_label():
    y = np.array(["a", "b", "b", "a"])
    s = np.array([0.1, 0.9, 0.3, 0.4])
    assert roc_auc(y, s) == 0.75  # "b" (the larger label) is positive
    assert roc_auc(y, s, pos_label="a") == 0.25
    assert roc_auc([-1, 1, 1], [0.5, 0.5, 0.9]) == 0.75


def test_large_input_is_fast_and_exact():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200_000)
    s = np.round(rng.normal(size=200_000) + y, 2)
    assert abs(roc_auc(y, s) - roc_auc_score(y, s)) < 1e-12


@pytest.mark.parametrize(
    "y, s, message",
    [
        ([1, 1, 1], [0.1, 0.2, 0.3], "only one class"),
        ([0, 1, 2], [0.1, 0.2, 0.3], "binary"),
        ([0, 1], [0.1, np.nan], "NaN"),
        ([0, 1, 1], [0.1, 0.2], "different lengths"),
    ],
)
def test_errors(y, s, message):
    with pytest.raises(ValueError, match=message):
        roc_auc(y, s)


def test_pairwise_loss_brute_force():
    y = np.array([1, -1, 1, -1])
    s = np.array([2.0, 0.5, 0.0, 1.0])
    margins = np.array([2 - 0.5, 2 - 1.0, 0 - 0.5, 0 - 1.0])
    assert pairwise_auc_loss(y, s) == pytest.approx(np.mean((1 - margins) ** 2))
    assert pairwise_auc_loss(y, s, "hinge") == pytest.approx(np.mean(np.maximum(0, 1 - margins)))


def test_pairwise_loss_checks_its_input():
    with pytest.raises(ValueError, match=r"y_score must be 1-D.*shape \(2, 2\)"):
        pairwise_auc_loss([0, 1], [[0.1, 0.2], [0.3, 0.4]])
    with pytest.raises(ValueError, match="different lengths"):
        pairwise_auc_loss([0, 1, 1], [0.1, 0.2])
