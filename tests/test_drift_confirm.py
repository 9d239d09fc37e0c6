"""The confirmation of an alarm (aucstream._race_drift, "The confirmation").

An alarm of the ranking signal reopens the race only when the incumbent's exact AUC
over its latest rows is below the mean of its AUCs over blocks of the older half of
its history by more than one standard error: scores whose scale drifts while their
ranking holds (a growing column, a learner still moving) must seldom reopen, a real
drop must, and a history too short to tell reopens as before.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from aucstream import StreamPipeline
from aucstream._auc_variance import auc_and_variance, block_aucs
from aucstream._race_drift import (
    _CONFIRM_CLASS,
    _CONFIRM_ROWS,
    block_start,
    confirmed,
    history,
)
from aucstream.metrics import RollingAUC, roc_auc


def _scores(labels, auc_shift, rng):
    """Scores ranking positives above negatives with AUC about Phi(shift/sqrt 2)."""
    return rng.normal(size=labels.size) + auc_shift * labels


def _search(labels, scores, window=20_000, buffered=300):
    """The parts of an OnePassSearch that the confirmation reads: the incumbent's
    window metric holding all but the last ``buffered`` rows, which wait in the
    buffer."""
    recent = RollingAUC(window, pos_label=1)
    n = labels.size
    recent.update(labels[: n - buffered], scores[: n - buffered])
    block = 4096
    pending_scores = np.zeros((1, block))
    pending_labels = np.zeros(block, dtype=np.int8)
    pending_scores[0, :buffered] = scores[n - buffered :]
    pending_labels[:buffered] = labels[n - buffered :]
    return SimpleNamespace(
        recent_=[recent],
        pending_scores_=pending_scores,
        pending_labels_=pending_labels,
        _buffered_from=lambda i, windowed: 0,
    )


def test_the_history_is_the_incumbents_rows_in_order():
    rng = np.random.default_rng(0)
    labels = (rng.random(3000) < 0.3).astype(np.int8)
    scores = rng.normal(size=3000)
    search = _search(labels, scores, window=2500)
    got_labels, got_scores = history(search, 0, 300)
    np.testing.assert_array_equal(got_labels, labels[200:])  # the window: rows 200:2700
    np.testing.assert_array_equal(got_scores, scores[200:])


def test_a_drifting_scale_with_a_steady_ranking_is_seldom_confirmed():
    """Every block ranks as well as the others (AUC near 0.9), but the scores rise
    with time: pooled over the history the AUC is far lower, the blocks' are not. A
    one-sided test at one standard error confirms about one such alarm in six."""
    verdicts = []
    for seed in range(30):
        rng = np.random.default_rng(seed)
        n = 12_000
        labels = (rng.random(n) < 0.05).astype(np.int8)
        scores = _scores(labels, 1.8, rng) + np.linspace(0.0, 30.0, n)
        if seed == 0:
            assert roc_auc(labels, scores) < 0.8  # what a signal ranking across time sees
        verdicts.append(confirmed(_search(labels, scores), 0, 300))
    assert np.mean(verdicts) < 0.35


def test_a_real_drop_is_confirmed():
    for seed in range(10):
        rng = np.random.default_rng(100 + seed)
        n = 12_000
        labels = (rng.random(n) < 0.1).astype(np.int8)
        scores = _scores(labels, 1.8, rng)
        scores[-900:] = _scores(labels[-900:], 0.3, rng)  # the last rows: AUC near 0.58
        assert confirmed(_search(labels, scores), 0, 300)


def test_a_drop_seen_late_is_confirmed_against_the_older_blocks():
    """The drop came 6,000 rows before the alarm: the blocks just before the latest
    rows are as bad as they are, the older half of the window is not."""
    rng = np.random.default_rng(7)
    n = 18_000
    labels = (rng.random(n) < 0.05).astype(np.int8)
    scores = _scores(labels, 1.8, rng)
    scores[-6000:] = _scores(labels[-6000:], 0.8, rng)
    assert confirmed(_search(labels, scores), 0, 300)


def test_a_history_too_short_to_tell_reopens():
    rng = np.random.default_rng(3)
    labels = (rng.random(_CONFIRM_ROWS + 200) < 0.3).astype(np.int8)
    scores = _scores(labels, 1.0, rng)
    assert confirmed(_search(labels, scores, buffered=100), 0, 100)  # no block before
    rare = np.zeros(6000, dtype=np.int8)
    rare[:: 6000 // (_CONFIRM_CLASS - 1)] = 1  # too few positives for any block
    assert confirmed(_search(rare, rng.normal(size=6000)), 0, 300)


def test_hanley_mcneil_variance():
    """Against the formula written out (Hanley & McNeil 1982, Table/Eq. 2)."""
    rng = np.random.default_rng(4)
    labels = (rng.random(500) < 0.2).astype(np.int8)
    scores = _scores(labels, 1.0, rng)
    a, var = auc_and_variance(labels, scores)
    n1, n0 = int(labels.sum()), int((1 - labels).sum())
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    expected = (a * (1 - a) + (n1 - 1) * (q1 - a * a) + (n0 - 1) * (q2 - a * a)) / (n1 * n0)
    assert a == roc_auc(labels, scores)
    assert abs(var - expected) < 1e-15


def test_the_default_scaler_does_not_forget():
    for drift in ("auto", None):
        scaler, _ = StreamPipeline(drift=drift)._steps()
        assert scaler.half_life is None


def test_a_rare_class_takes_longer_blocks():
    """0.5% positives: blocks of 1,024 rows hold five positives; each block grows until
    it holds enough of both classes, and a real drop is still confirmed."""
    rng = np.random.default_rng(5)
    n = 20_000
    labels = (rng.random(n) < 0.005).astype(np.int8)
    steady = _scores(labels, 1.8, rng) + np.linspace(0.0, 30.0, n)
    dropped = steady.copy()
    k = n - np.flatnonzero(labels)[-_CONFIRM_CLASS]  # the latest rows with enough positives
    dropped[-k:] = _scores(labels[-k:], -0.5, rng) + 30.0
    assert confirmed(_search(labels, dropped), 0, 300)


def test_block_start_is_the_shortest_block():
    """Against a search of every length: the shortest block ending at ``end`` with
    ``rows`` rows and ``_CONFIRM_CLASS`` of each class (-1: none)."""
    rng = np.random.default_rng(6)
    for _ in range(400):
        n = int(rng.integers(0, 300))
        labels = (rng.random(n) < rng.choice([0.02, 0.3, 0.5, 0.97])).astype(np.int8)
        end, rows = int(rng.integers(0, n + 1)), int(rng.integers(0, 150))
        expected = -1
        for k in range(1, end + 1):
            block = labels[end - k : end]
            if k >= rows and min(block.sum(), k - block.sum()) >= _CONFIRM_CLASS:
                expected = end - k
                break
        assert block_start(labels, end, rows) == expected


def test_auc_is_roc_auc_to_the_bit():
    """Ties (rounded scores, a constant block) count one half, as in roc_auc."""
    rng = np.random.default_rng(7)
    for t in range(200):
        n = int(rng.integers(2, 2000))
        labels = (rng.random(n) < rng.choice([0.02, 0.2, 0.5])).astype(np.int8)
        labels[:2] = (0, 1)
        scores = rng.normal(size=n) if t % 3 else np.round(rng.normal(size=n), 1)
        if t % 10 == 0:
            scores[:] = 0.0
        assert auc_and_variance(labels, scores)[0] == roc_auc(labels, scores)


def _midrank_auc(labels, scores):
    """The Mann-Whitney AUC from the positives' midranks (ties: the mean rank)."""
    n, n1 = labels.size, int(labels.sum())
    order = np.argsort(scores, kind="stable")
    ordered = scores[order]
    new = np.r_[True, ordered[1:] != ordered[:-1]]
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], n)
    midrank = (starts + ends + 1) / 2.0
    rank_sum = float(midrank[np.cumsum(new) - 1][labels[order] == 1].sum())
    return (rank_sum - n1 * (n1 + 1) / 2.0) / (float(n1) * float(n - n1))


def test_block_aucs_are_each_blocks_auc_to_the_bit():
    """Each block's AUC, from counts in the sorted negatives, is the midranks' and
    roc_auc's to the bit (ties, a constant block, a lone positive or negative)."""
    rng = np.random.default_rng(8)
    for t in range(200):
        n = int(rng.integers(4, 3000))
        labels = (rng.random(n) < rng.choice([0.02, 0.2, 0.5, 0.98])).astype(np.int8)
        scores = rng.normal(size=n) if t % 3 else np.round(rng.normal(size=n), int(t % 2))
        cuts = np.sort(rng.choice(np.arange(1, n), size=min(n - 1, 8), replace=False))
        bounds = [0, *cuts.tolist(), n]
        blocks = [
            (lo, hi) for lo, hi in zip(bounds, bounds[1:]) if 0 < labels[lo:hi].sum() < hi - lo
        ]
        if t % 10 == 0 and blocks:
            lo, hi = blocks[0]
            scores[lo:hi] = 0.5
        for (lo, hi), (a, var) in zip(blocks, block_aucs(labels, scores, blocks)):
            y, s = labels[lo:hi], scores[lo:hi]
            assert a == _midrank_auc(y, s) == roc_auc(y, s)
            assert var == auc_and_variance(y, s)[1]
