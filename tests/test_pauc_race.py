"""The racing statistic of OnePassSearch(max_fpr=): the mean of the windowed partial
and full AUC, exact against roc_auc for every chunking, saved and loaded with the
search."""

from __future__ import annotations

import numpy as np
import pytest

from aucstream import OnePassSearch, load_model, save_model
from aucstream._pauc_race import PARTIAL_WEIGHT, GuardedPartialAUC
from aucstream.metrics import RollingAUC, roc_auc


@pytest.mark.parametrize("chunk", [1, 7, 100])
def test_it_is_the_mean_of_the_partial_and_full_auc_of_the_window(chunk):
    rng = np.random.default_rng(0)
    y = rng.random(400) < 0.2
    s = rng.integers(0, 12, size=400).astype(float)  # many ties
    window = 150
    g = GuardedPartialAUC(window, pos_label=True, max_fpr=0.1)
    plain = RollingAUC(window, pos_label=True, max_fpr=0.1)
    for start in range(0, 400, chunk):
        g.update(y[start : start + chunk], s[start : start + chunk])
        plain.update(y[start : start + chunk], s[start : start + chunk])
    yw, sw = y[-window:], s[-window:]
    want = PARTIAL_WEIGHT * roc_auc(yw, sw, max_fpr=0.1) + (1 - PARTIAL_WEIGHT) * roc_auc(yw, sw)
    assert g.get() == pytest.approx(want, abs=1e-12)
    assert plain.get() == pytest.approx(roc_auc(yw, sw, max_fpr=0.1), abs=1e-12)
    # a peek at buffered scores reads the same statistic
    more_y, more_s = rng.random(30) < 0.2, rng.normal(size=30)
    peek = g._peek(more_y, more_s)
    y2, s2 = np.concatenate([y, more_y])[-window:], np.concatenate([s, more_s])[-window:]
    assert peek == pytest.approx(0.5 * (roc_auc(y2, s2, max_fpr=0.1) + roc_auc(y2, s2)))


def test_one_class_is_nan():
    g = GuardedPartialAUC(10, pos_label=1, max_fpr=0.5).update([0, 0, 0], [1.0, 2.0, 3.0])
    assert np.isnan(g.get())


def test_the_search_races_by_it_and_resumes_exactly(tmp_path):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1200, 4))
    y = np.where(X[:, 0] + rng.normal(size=1200) > 1.5, 1, -1)
    whole = OnePassSearch(max_fpr=0.05, drift=None, first_round=100).fit(X, y)
    assert all(type(m) is GuardedPartialAUC for m in whole.recent_)
    half = OnePassSearch(max_fpr=0.05, drift=None, first_round=100).partial_fit(
        X[:500], y[:500], classes=[-1, 1]
    )
    save_model(half, tmp_path / "search.model")
    resumed = load_model(tmp_path / "search.model").partial_fit(X[500:], y[500:])
    assert type(resumed.recent_[0]) is GuardedPartialAUC
    np.testing.assert_array_equal(resumed.decision_function(X), whole.decision_function(X))
    assert resumed.leader_ == whole.leader_
