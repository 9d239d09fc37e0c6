"""The per-chunk pieces of ``prequential`` made cheaper in issue 32: the log-loss's
products of 16 factors, the labels' compiled check, the memory reading, the
branch-free merge of the sorted runs. Each against its plain definition."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss, log_loss

from aucstream import SOLAM, all_estimators
from aucstream._sorted_pairs import _merged
from aucstream._stream_metrics import (
    StreamingBrier,
    StreamingLogLoss,
    StreamingPositiveRate,
    Together,
    _loss_sums,
)
from aucstream.evaluation import prequential
from aucstream.evaluation._prequential import model_bytes
from aucstream.evaluation._prequential_parts import (
    MemoryReading,
    ScoreBlock,
    distinct,
    is_fitted,
)


def per_row_log_loss(positive, p) -> float:
    return -sum(math.log(q) for q in np.where(positive, p, 1.0 - p))


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 127, 128, 1000, 4099])
def test_log_loss_and_brier_equal_scikit_learn(n):
    rng = np.random.default_rng(n)
    p = np.clip(rng.random(n) ** 3, 1e-15, 1 - 1e-15)  # (many small probabilities)
    positive = rng.random(n) < 0.3
    loss, brier = StreamingLogLoss(), StreamingBrier()
    loss.update(positive, None, p)
    brier.update(positive, None, p)
    if n == 0:
        assert math.isnan(loss.get()) and math.isnan(brier.get())
        return
    assert loss.get() == pytest.approx(log_loss(positive, p, labels=[False, True]), rel=1e-13)
    assert loss.get() == pytest.approx(per_row_log_loss(positive, p) / n, rel=1e-13)
    assert brier.get() == pytest.approx(brier_score_loss(positive, p), rel=1e-13)


@pytest.mark.parametrize(
    "odd, expected",
    [
        (0.0, math.inf),  # a positive given 0: the log-loss is infinite, as before
        (1e-300, None),  # below the floor: that block goes row by row (no underflow)
        (1.5, None),  # not a probability: row by row too
        (math.nan, math.nan),
    ],
)
def test_a_block_with_a_factor_outside_the_floor_goes_row_by_row(odd, expected):
    p = np.full(200, 0.5)
    positive = np.ones(200, dtype=bool)
    p[70] = odd  # inside the second block of 64
    loss = StreamingLogLoss()
    loss.update(positive, None, p)
    if expected is None:
        assert loss.get() == pytest.approx(per_row_log_loss(positive, p) / 200, rel=1e-14)
    elif math.isnan(expected):
        assert math.isnan(loss.get())
    else:
        assert loss.get() == expected


def _log(v: float) -> float:
    """``np.log``'s value (-inf at 0, NaN below) as a Python float."""
    return math.log(v) if v > 0 else (-math.inf if v == 0 else math.nan)


def lanes_reference(positive, p) -> tuple[float, float]:
    """The sums of ``_loss_sums`` in Python, operation by operation: blocks of 64 rows
    in four lanes of 16 (products, then four logarithms; a block with a factor outside
    [1e-15, 1] or NaN one logarithm per row), the squared errors in the same lanes, the
    rows after the last whole block one by one into lane 0."""
    n, loss, lanes, i = len(p), 0.0, [0.0] * 4, 0
    q = [float(p[j]) if positive[j] else 1.0 - float(p[j]) for j in range(n)]
    e = [float(p[j]) - 1.0 if positive[j] else float(p[j]) for j in range(n)]
    while i + 64 <= n:
        m = [1.0] * 4
        for j in range(i, i + 64):
            m[j % 4] *= q[j]
            lanes[j % 4] += e[j] * e[j]
        if all(1e-15 <= v <= 1.0 for v in q[i : i + 64]):
            loss -= (math.log(m[0]) + math.log(m[1])) + (math.log(m[2]) + math.log(m[3]))
        else:
            for j in range(i, i + 64):
                loss -= _log(q[j])
        i += 64
    for j in range(i, n):
        loss -= _log(q[j])
        lanes[0] += e[j] * e[j]
    return loss, (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])


@pytest.mark.parametrize("seed", range(6))
def test_the_loss_sums_are_those_of_their_lanes_bit_for_bit(seed):
    """The compiled sums (factors and errors from the labels as floats) equal
    the per-row definition in the same lanes bit for bit, odd probabilities included."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(150, 400))
    p = rng.random(n) ** 3
    odd = [0.0, -0.0, 1.0, 1e-16, 1 - 1e-16, 1.5, -0.5, 1e-300]
    p[rng.integers(0, n, 4)] = rng.choice(odd, 4)
    positive = rng.random(n) < 0.4
    out = np.empty(2)
    _loss_sums(positive, p, out)
    with np.errstate(all="ignore"):
        expected = np.array(lanes_reference(positive, p))
    assert np.array_equal(out.view(np.int64), expected.view(np.int64)), (out, expected)


def test_the_loss_sums_read_any_non_zero_label_byte_as_true():
    """The labels' bytes are read as numbers (no branch per row): a boolean array whose
    true bytes are not 1 (a view of other bytes) gives the sums of its canonical
    copy, as numpy's comparisons read it."""
    rng = np.random.default_rng(7)
    n = 300
    p = rng.random(n)
    raw = (rng.random(n) < 0.4).astype(np.uint8) * rng.integers(1, 256, n).astype(np.uint8)
    odd = raw.view(bool)
    canonical = raw != 0
    assert odd.view(np.uint8).max() > 1 and np.array_equal(odd, canonical)
    out, expected = np.empty(2), np.empty(2)
    _loss_sums(odd, p, out)
    _loss_sums(canonical, p, expected)
    assert np.array_equal(out.view(np.int64), expected.view(np.int64)), (out, expected)


def test_together_feeds_each_metric_as_its_own_update():
    rng = np.random.default_rng(3)
    alone = [StreamingLogLoss(), StreamingBrier(), StreamingPositiveRate()]
    fed = [StreamingLogLoss(), StreamingBrier(), StreamingPositiveRate()]
    together = Together(fed)
    for n in (1, 64, 300, 1000):
        positive, p = rng.random(n) < 0.4, rng.random(n)
        together.update(positive, p)
        for m in alone:
            m.update(positive, None, p)
    for a, b in zip(alone, fed):
        assert a.get() == b.get() and a.n == b.n


def test_memory_reading_follows_the_state():
    X = np.random.default_rng(0).normal(size=(40, 5))
    y = X[:, 0] > 0
    model = SOLAM().fit(X, y)
    reading = MemoryReading(model)
    assert reading.read() == model_bytes(model) == reading.read()
    model.u_ = np.zeros(50)  # a state array replaced by a larger one
    assert reading.read() == model_bytes(model)
    model.extra_ = [np.zeros(3)]  # a list: walked again at every reading
    assert reading.read() == model_bytes(model)
    model.extra_.append(np.zeros(7))
    assert reading.read() == model_bytes(model)
    del model.extra_
    model.sub_ = np.zeros((1, 6)).view(np.matrix)  # an array of a subclass counts
    model.hyper = np.zeros(9)  # not state: does not count
    assert reading.read() == model_bytes(model) == reading.read()
    assert reading.known and model_bytes(model) == 48 + sum(
        v.nbytes
        for k, v in vars(model).items()
        if k.endswith("_") and k != "sub_" and isinstance(v, np.ndarray)
    )


def test_the_branch_free_merge_sorts_with_ties():
    rng = np.random.default_rng(4)
    for _ in range(500):
        a = np.sort(rng.integers(0, 4, rng.integers(0, 30)).astype(np.float64))
        b = np.sort(rng.integers(0, 4, rng.integers(0, 30)).astype(np.float64))
        assert np.array_equal(_merged(a, b), np.sort(np.concatenate([a, b])))


def test_the_writing_request_stands_on_the_learner_only_while_asked():
    from aucstream import _calibration

    X = np.random.default_rng(1).normal(size=(60, 4))
    y = X[:, 0] > 0
    model = SOLAM().fit(X[:20], y[:20])
    names = set(vars(model))
    out = np.empty((2, 40))
    with _calibration.writing(model, out) as taken:
        assert _calibration.written_for(model, 39)[0].shape == (0,)  # another size
        model.test_then_train(X[20:], y[20:])
    assert taken[0] and set(vars(model)) == names
    with _calibration.writing(model, np.empty((2, 5))) as taken:
        with _calibration.writing(model, np.empty((2, 7))) as inner:
            pass
        assert _calibration.written_for(model, 5)[1].shape == (5,)  # the outer, put back
    assert not inner[0] and taken[0] and set(vars(model)) == names
    with pytest.raises(RuntimeError):
        with _calibration.writing(model, out):
            raise RuntimeError
    assert set(vars(model)) == names
    assert _calibration.written_for(model, 40)[1].shape == (0,)
    request = _calibration.writing(None, np.empty((2, 0)))  # asked again, for each call
    for size in (7, 7, 3):
        block = np.empty((2, 2 * size))
        out = block[:, size:]  # (the columns of a block: rows of a view, contiguous)
        with request.ask(model, out) as taken:
            scores, probs = _calibration.written_for(model, size)
            assert scores.base is block and probs.base is block
            assert scores.flags.c_contiguous and probs.flags.c_contiguous
            assert np.shares_memory(scores, out[0]) and np.shares_memory(probs, out[1])
            assert _calibration.written_for(model, size)[0].shape == (0,)  # taken once
        assert taken[0] and set(vars(model)) == names


def test_the_score_block_holds_rows_until_taken():
    block = ScoreBlock(8)
    assert not block.fits(1)  # nothing made before the first chunk
    block.restart(100, 3)
    assert block.scores.shape == (2, 8) and block.fits(8) and not block.fits(9)
    block.columns(3)[:] = [[1, 2, 3], [0.1, 0.2, 0.3]]
    y = np.array([1, 0, 1])
    block.hold(y)
    y[:] = 7  # (held as a copy)
    block.columns(2)[:] = [[4, 5], [0.4, 0.5]]
    assert block.labels_fit(np.array([0, 1])) and not block.labels_fit(np.array([0.0, 1.0]))
    block.hold(np.array([0, 0]))
    labels, scores, proba, base = block.take(2)  # up to row 2: the rest stays held
    assert labels.tolist() == [1, 0] and scores.tolist() == [1, 2] and base == 100
    labels, scores, proba, base = block.take(5)
    assert labels.tolist() == [1, 0, 0] and proba.tolist() == [0.3, 0.4, 0.5] and base == 102
    assert not block.fits(4)
    block.restart(105, 20)  # a chunk longer than a block: a block as long
    assert block.scores.shape == (2, 20) and block.start == block.end == 0
    block.columns(20)[:] = 0.0
    block.hold(np.array(["a"] * 20))  # labels of another dtype, nothing held
    assert block.take(20)[0].tolist() == ["a"] * 20 and block.take(20)[3] == 125
    block.hold(np.array(["b"]))  # (its column not written: this only holds a row)
    with pytest.raises(AssertionError):  # (held rows are counted before a restart)
        block.restart(0, 1)


def test_distinct_labels_equal_np_unique():
    """The look-ahead's compiled span of float64 and int64 labels gives np.unique's
    array (values, dtype, sign of zero) on two-valued, one-valued and other labels."""
    rng = np.random.default_rng(3)
    cases = [
        np.array([np.nan, 1.0, 1.0]),
        np.array([1.0, np.nan]),
        np.array([np.inf, 1.0, np.inf]),
        np.array([-np.inf]),
        np.array([0.0, -0.0]),
        np.array([-1.0, 0.0]),
        np.array([5, 5, 5], dtype=np.int64),
        np.array([-(2**63), 2**63 - 1], dtype=np.int64),
        np.array([1.0, 2.0, 3.0]),
        np.array([2, 1, 3], dtype=np.int64),
        np.array([1.0, 2.0, 1.0])[::2],  # (not contiguous)
        np.array([1, 2], dtype=np.int32),
    ]
    for _ in range(200):
        values = rng.choice([-3.5, -1.0, 1.0, 2.0, 7.0], size=2, replace=False)
        y = values[rng.integers(0, 2, rng.integers(1, 40))]
        cases += [y, y.astype(np.int64)]
    for y in cases:
        ours, theirs = distinct(y), np.unique(y)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, y
        assert np.array_equal(ours, theirs, equal_nan=ours.dtype.kind == "f"), y
        if ours.dtype.kind == "f":
            assert np.signbit(ours).tolist() == np.signbit(theirs).tolist(), y


def test_the_curve_is_the_frame_of_its_rows():
    """``curve_frame`` (one block per dtype) gives what a frame of the row dicts gives:
    the columns in order, int64 counts, numpy's dtype for the others (an int column
    such as ``alarms`` stays int64), a fresh RangeIndex, writable values."""
    import pandas as pd

    from aucstream.evaluation._prequential_columns import curve_frame

    rows = [
        {
            "n_seen": 10 * i,
            "n_learnt": 9 * i,
            "auc": math.nan if i == 0 else 0.5 + i / 100,
            "alarms": i % 3,
            "cpu_seconds": 0.01 * i,
            "model_bytes": 1000 + i,
        }
        for i in range(5)
    ]
    for part in (rows, rows[:1]):
        curve = curve_frame(part)
        want = pd.DataFrame(part).astype({"n_seen": np.int64, "n_learnt": np.int64})
        pd.testing.assert_frame_equal(curve, want, check_exact=True)
        assert curve["alarms"].dtype == np.int64 and curve["auc"].dtype == np.float64
    curve.loc[0, "auc"] = 1.0
    assert curve.loc[0, "auc"] == 1.0 and math.isnan(curve_frame(rows).loc[0, "auc"])


# ------------------------------------------------------- is_fitted without the tags
@pytest.mark.parametrize("name", [name for name, _ in all_estimators()])
def test_is_fitted_agrees_with_check_is_fitted(name):
    """The shortcut for aucstream learners gives check_is_fitted's answer."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    def reference(model) -> bool:
        try:
            check_is_fitted(model)
        except NotFittedError:
            return False
        return True

    model = dict(all_estimators())[name]()
    assert is_fitted(model) is reference(model) is False
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    model.fit(X, (X[:, 0] > 0).astype(int))
    assert is_fitted(model) is reference(model) is True


def test_prequential_runs_the_kernels_compiled_for_every_call(monkeypatch):
    """The kernels that write prequential's rows into its score block (SOLAM's, the
    calibration's replay for OPAUC, a search's recorded decisions) get the block's two
    rows, contiguous, not a ``(2, n)`` view of its columns, which is contiguous only
    when the chunk fills the block: each compiles once, whatever the view (a new
    signature would compile the kernel again, seconds in a fresh environment)."""
    from aucstream import OPAUC, OnePassSearch, _calibration, _search_scores
    from aucstream.evaluation import _prequential
    from aucstream.solam import _solam_chunk

    kernels = (_solam_chunk, _calibration.replay, _search_scores.decisions)
    X = np.random.default_rng(2).normal(size=(400, 5))
    y = X[:, 0] + X[:, 1] > 0
    monkeypatch.setattr(_prequential, "_HOLD", 64)  # (blocks of 64 rows)

    def run(size):
        for make in (SOLAM, OPAUC, OnePassSearch):
            chunks = [(X[i : i + size], y[i : i + size]) for i in range(0, 400, size)]
            prequential(make(), chunks, every=100)

    SOLAM().test_then_train(X, y, classes=[False, True])
    run(50)  # views of some of a block's columns
    before = [set(kernel.signatures) for kernel in kernels]
    run(100)  # chunks longer than a block: each its own block, a view of all of it
    assert [set(kernel.signatures) for kernel in kernels] == before
