"""The search's windowed AUC peeks counted from the last one (aucstream._peek_cache):
the same floats as the count from scratch, however the buffer grows, is rewritten or
is flushed, and for a bare RollingAUC with ties, a positive label given, a label that
comes late and pairs that leave the window."""

from __future__ import annotations

import numpy as np
import pytest

from aucstream import OnePassSearch
from aucstream._peek_cache import _KEPT, peek
from aucstream.metrics import RollingAUC


def same(a: float, b: float) -> bool:
    return a == b or (a != a and b != b)


def from_scratch(search, i):
    m = int(search.progress_[0])
    lo = search._buffered_from(i, windowed=True)
    if lo >= m or search.status_[i] != 0:
        return search.recent_[i].get()
    return search.recent_[i]._peek(search.pending_labels_[lo:m], search.pending_scores_[i, lo:m])


def test_the_search_peeks_as_from_scratch_at_every_position():
    """One example at a time through rounds, block ends and a full window (pairs
    leaving it: counted from scratch), and with a buffered score rewritten in place."""
    rng = np.random.default_rng(0)
    n, d = 1400, 6
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + rng.normal(size=n) > 0.5, 1, -1)
    search = OnePassSearch(first_round=200, window=300)
    search.partial_fit(X[:20], y[:20], classes=[-1, 1])
    used = 0
    for i in range(20, n):
        search.learn_one(X[i], y[i])
        alive = np.flatnonzero(search.status_ == 0)
        for j in alive:
            assert same(search._windowed_auc(j), from_scratch(search, j)), (i, j)
        used += _KEPT.get(search) is not None
        if i == 700:  # a buffered score rewritten: counted again, not taken as kept
            m = int(search.progress_[0])
            search.pending_scores_[alive[0], m - 3] += 1.0
            assert same(search._windowed_auc(alive[0]), from_scratch(search, alive[0]))
    assert used > n // 2


@pytest.mark.parametrize("pos_label", [None, 1])
def test_a_bare_window_peeks_as_from_scratch(pos_label):
    rng = np.random.default_rng(1)
    metric = RollingAUC(window=50, pos_label=pos_label)
    metric.update(np.array([1, 1, 1]), np.array([0.5, 0.2, 0.5]))
    for start in (0, 40):
        y = rng.integers(0, 2, size=60).astype(np.int8)
        y[:5] = 1  # (the other label comes late)
        scores = rng.integers(0, 6, size=60) / 5.0  # (ties)
        for k in range(0, 60):
            owner = object.__new__(OnePassSearch)  # (a key for the kept counts)
            got = [peek(owner, 0, metric, y[:j], scores[:j]) for j in range(k + 1)]
            want = [metric._peek(y[:j], scores[:j]) for j in range(k + 1)]
            assert all(map(same, got, want)), (start, k)
        metric.update(y[:40], scores[:40])
