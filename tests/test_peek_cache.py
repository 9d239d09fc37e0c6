"""The search's windowed AUC peeks counted from the last one (aucstream._peek_cache):
the same floats as the count from scratch, however the buffer grows, is rewritten or
is flushed, and for a bare RollingAUC with ties, a positive label given, a label that
comes late and pairs that leave the window."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from aucstream import OnePassSearch
from aucstream._pauc_race import GuardedPartialAUC
from aucstream._peek_cache import _KEPT, peek, peek_full
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
    leaving it), and with a buffered score rewritten in place."""
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


@pytest.mark.parametrize(
    "make",
    [
        lambda: RollingAUC(window=80, max_fpr=0.1),
        lambda: RollingAUC(window=80, pos_label=1, max_fpr=0.3, min_tpr=0.5),
        lambda: RollingAUC(window=80, max_fpr=0.5, standardized=False),
        lambda: GuardedPartialAUC(80, pos_label=1, max_fpr=0.05),
    ],
)
def test_partial_peeks_grow_as_from_scratch(make):
    """A partial AUC (and the race's statistic) read from the kept buffered rows, sorted
    as they came, equals the peek from scratch and the update it does not make, float
    for float, as the buffer grows one row at a time: ties, a label that comes late,
    the window filling, then rows leaving it."""
    rng = np.random.default_rng(2)
    metric = make().update(np.array([0, 0, 0]), np.array([0.5, 0.2, 0.5]))
    for start in (0, 50):
        y = rng.integers(0, 2, size=70)
        y[:4] = 0  # (the other label comes late)
        scores = rng.integers(0, 8, size=70) / 7.0  # (ties)
        owner = object.__new__(OnePassSearch)  # (a key for the kept counts)
        for j in range(71):
            got = peek(owner, 0, metric, y[:j], scores[:j])
            want = copy.deepcopy(metric).update(y[:j], scores[:j]).get() if j else metric.get()
            assert same(got, want) and same(got, metric._peek(y[:j], scores[:j])), (start, j)
            if isinstance(metric, GuardedPartialAUC):
                full = copy.deepcopy(metric).update(y[:j], scores[:j]).full() if j else None
                if j:
                    assert same(peek_full(owner, 0, metric, y[:j], scores[:j]), full)
        assert _KEPT.get(owner) is not None  # (the kept counts were used)
        metric.update(y[:50], scores[:50])


@pytest.mark.parametrize(
    "make",
    [
        lambda: RollingAUC(window=30),
        lambda: RollingAUC(window=30, pos_label=0, max_fpr=0.2),
        lambda: RollingAUC(window=30, max_fpr=0.4, min_tpr=0.3),
        lambda: GuardedPartialAUC(30, pos_label=1, max_fpr=0.1),
    ],
)
def test_a_full_window_counts_the_rows_pushed_out_from_the_kept_counts(make):
    """Once the window is full every buffered row pushes one out: the kept counts take
    the departures too (never from scratch here: the metric's own peek is disabled),
    counts that fall as well as rise, equal to the update the peek does not make,
    float for float; with ties and buffers up to the window's length."""
    rng = np.random.default_rng(3)
    metric = make()
    for trial in range(6):
        y = rng.integers(0, 2, size=30)
        scores = rng.integers(0, 5, size=30) / 4.0 if trial % 2 else rng.normal(size=30)
        metric.update(rng.integers(0, 2, size=30), rng.integers(0, 5, size=30) / 4.0)
        owner = object.__new__(OnePassSearch)  # (a key for the kept counts)
        scratch = metric._peek
        metric._peek = None  # (a peek from scratch would fail)
        try:
            for j in range(1, 31):
                got = peek(owner, 0, metric, y[:j], scores[:j])
                updated = copy.deepcopy(metric)
                updated._peek = scratch
                want = updated.update(y[:j], scores[:j]).get()
                assert same(got, want), (trial, j)
                if isinstance(metric, GuardedPartialAUC):
                    assert same(peek_full(owner, 0, metric, y[:j], scores[:j]), updated.full())
        finally:
            del metric._peek
        assert scratch(y, scores) == got or (
            got != got and scratch(y, scores) != scratch(y, scores)
        )
