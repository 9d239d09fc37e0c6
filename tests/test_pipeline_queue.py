"""StreamPipeline's compiled hold of dict rows (aucstream._pipeline_queue): the model of
one chunk bit for bit, a refused row changes nothing, a full queue learnt first, a
stale binding bound again, and model files with the queue of another length."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest
import scipy.sparse as sp

from aucstream import (
    FTRLAUC,
    OPAUC,
    SOLAM,
    AdaOAM,
    OnePassSearch,
    StreamPipeline,
    load_model,
    save_model,
)
from aucstream._pipeline_queue import _HOLDS, dict_hold
from aucstream.checks import pickled_state


def stream(n=700, d=10, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 50, size=d)
    X[rng.random((n, d)) < 0.6] = 0.0
    y = (X[:, 0] / X[:, 0].std() + rng.normal(size=n) > 0.8).astype(float)
    return sp.csr_matrix(X), y


def rows(S):
    return [dict(zip(S[i].indices.tolist(), S[i].data.tolist())) for i in range(S.shape[0])]


def pipeline():
    return StreamPipeline(estimator=OnePassSearch(first_round=150, window=300))


def started(S, y, n=20):
    return pipeline().partial_fit(S[:n], y[:n], classes=[0.0, 1.0])


def twins(seed):
    """The stream, its dict rows and two pipelines started alike."""
    S, y = stream(seed=seed)
    return S, y, rows(S), started(S, y), started(S, y)


def held(model) -> int:
    return int(model.__dict__["queue_"][0])  # (read without catching up)


@pytest.mark.parametrize("queue_rows", [1024, 7])
def test_compiled_hold_gives_the_model_of_one_chunk(monkeypatch, queue_rows):
    """Row by row through the compiled hold (a queue of 7 rows: full every 7 rows, so
    the kernel's QUEUE_FULL path runs) = one partial_fit, bit for bit."""
    monkeypatch.setattr(StreamPipeline, "_QUEUE_ROWS", queue_rows)
    S, y = stream()
    whole = pipeline().partial_fit(S, y, classes=[0.0, 1.0])
    model = started(S, y)
    dicts = rows(S)
    for i in range(20, len(y)):
        model.learn_one(dicts[i], y[i])
        if i == 20:
            assert dict_hold(model) is not None  # (the compiled hold serves it)
    assert model.transformer_.n_samples_seen_ == len(y)
    assert held(model) == (len(y) - 20) % queue_rows
    assert pickled_state(model) == pickled_state(whole)
    np.testing.assert_array_equal(model.decision_function(S), whole.decision_function(S))


@pytest.mark.parametrize("make", [SOLAM, OPAUC, AdaOAM, FTRLAUC, OnePassSearch])
def test_a_row_held_alone_is_learnt_through_learn_one(make, monkeypatch):
    """Scored after each example (a progressive loop), the pipeline catches up one
    held row at a time: through its estimator's learn_one, with the model of one
    partial_fit per row, bit for bit."""
    S, y = stream(n=400)
    dicts = rows(S)
    one, fit = (
        StreamPipeline(estimator=make()).partial_fit(S[:20], y[:20], classes=[0.0, 1.0])
        for _ in range(2)
    )
    calls = []
    learn_one = one.estimator_.learn_one
    monkeypatch.setattr(  # (counts the calls to one's estimator)
        one.estimator_, "learn_one", lambda x, y_: calls.append(True) or learn_one(x, y_)
    )
    scores, expected = [], []
    for i in range(20, len(y)):
        scores.append(one.decision_one(dicts[i]))
        expected.append(float(fit.decision_function(S[i : i + 1])[0]))
        one.learn_one(dicts[i], y[i])
        fit.partial_fit(S[i : i + 1], y[i : i + 1])
    assert calls.count(True) == len(y) - 20 - 1  # (the last row: held, not scored after)
    np.testing.assert_array_equal(scores, expected)
    np.testing.assert_array_equal(one.decision_function(S), fit.decision_function(S))


def test_rows_the_kernel_refuses_take_the_usual_path():
    """Rows the compiled hold does not read (Decimal values, numpy keys) are held by
    the Python path as their float rows; rows it refuses as invalid are refused by
    name, and change nothing (the queue's free slots stay zeros)."""
    S, y, dicts, model, reference = twins(seed=1)
    for i in range(20, 60):
        model.learn_one(dicts[i], y[i])
        reference.learn_one(dicts[i], y[i])
    before = pickled_state(model)
    for bad, match in (
        ({0: float("nan")}, "finite|NaN"),
        ({0: 1e300}, "large|finite|magnitude"),
        ({0: 1.0, 10: 2.0}, "feature"),
        ({-1: 1.0}, "feature"),
        ({0: "a"}, None),
        ({True: 1.0}, None),
    ):
        with pytest.raises((ValueError, TypeError), match=match):
            model.learn_one(bad, 1.0)
        # (a refusal on the usual path may have the estimator learn the held rows first)
        assert pickled_state(model) == before
        assert not model.__dict__["queue_data_"][model.queue_indptr_[held(model)] :].any()
    for i in range(60, 90):
        x = {np.int64(k): Decimal(repr(v)) for k, v in dicts[i].items()} if i % 2 else dicts[i]
        model.learn_one(x, y[i])
        reference.learn_one(dicts[i], y[i])
    assert pickled_state(model) == pickled_state(reference)


def test_a_stale_binding_is_bound_again():
    """The scaler's arrays, its parameters or the pipeline's queue replaced: the next
    call binds the new objects (never writes through the old ones)."""
    S, y, dicts, model, reference = twins(seed=2)
    for i in range(20, 200):
        model.learn_one(dicts[i], y[i])
        reference.learn_one(dicts[i], y[i])
        if i == 50:
            scaler = model.transformer_
            scaler.running_mean_ = scaler.running_mean_.copy()
        if i == 80:
            model.transformer_.set_params(clip=3.0)
            reference.transformer_.set_params(clip=3.0)
        if i == 120:
            model.queue_data_ = model.queue_data_.copy()
        if i in (50, 80, 120):
            old = _HOLDS.get(model)
            assert old is None or not old.current(model)
    assert pickled_state(model) == pickled_state(reference)


def test_model_files_with_a_queue_of_another_length_load_and_resume(monkeypatch, tmp_path):
    """A model written with 128-row held examples (before the queue grew) loads, and
    goes on as one pass."""
    S, y = stream(n=500, seed=3)
    dicts = rows(S)
    monkeypatch.setattr(StreamPipeline, "_QUEUE_ROWS", 128)
    old = started(S, y)
    for i in range(20, 170):
        old.learn_one(dicts[i], y[i])
    assert held(old) == 22 and old.queue_labels_.shape == (128,)
    save_model(old, tmp_path / "old.npz")
    monkeypatch.undo()
    model = load_model(tmp_path / "old.npz")
    assert held(model) == 22 and model.queue_labels_.shape == (128,)
    for i in range(170, 500):
        model.learn_one(dicts[i], y[i])
    whole = pipeline().partial_fit(S, y, classes=[0.0, 1.0])
    np.testing.assert_array_equal(model.decision_function(S), whole.decision_function(S))
    model.queue_labels_ = model.queue_labels_[:-1].copy()  # no longer one row per entry
    save_model(model, tmp_path / "bad.npz")
    with pytest.raises(ValueError, match="one more entry"):
        load_model(tmp_path / "bad.npz")
