"""StreamPipeline one example at a time: the examples ``learn_one`` holds are learnt
by the estimator as one chunk, and the model is that of one ``partial_fit`` call, bit
for bit (the scaler's one-example method included), saved and resumed exactly, with
rejected examples changing nothing."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from aucstream import OnePassSearch, StreamPipeline, load_model, save_model
from aucstream.checks import pickled_state
from aucstream.preprocessing import OnlineStandardScaler


def stream(n=900, d=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 50, size=d)
    X[rng.random((n, d)) < 0.5] = 0.0
    y = (X[:, 0] / X[:, 0].std() + rng.normal(size=n) > 0.8).astype(int)
    return X, y


def _dict(row):
    return {int(j): float(row[j]) for j in np.flatnonzero(row)}


def _search_pipeline(**kwargs):
    # rounds at 150, 300, 600 and the drift watch inside 900 examples
    return StreamPipeline(estimator=OnePassSearch(first_round=150, window=300), **kwargs)


def _held(model) -> int:
    return int(model.__dict__["queue_"][0])  # (read without catching up)


@pytest.mark.parametrize("layout", ["dict", "array", "one-row CSR", "one-row array"])
def test_learn_one_gives_the_model_of_one_chunk_bit_for_bit(layout):
    """learn_one, and partial_fit of one row (held alike), row by row."""
    X, y = stream()
    S = sp.csr_matrix(X)
    dense = "array" in layout
    start = X[:30] if dense else S[:30]
    whole = _search_pipeline().partial_fit(X if dense else S, y, classes=[0, 1])
    single = _search_pipeline().partial_fit(start, y[:30], classes=[0, 1])
    calls = {
        "dict": lambda i: single.learn_one(_dict(X[i]), y[i]),
        "array": lambda i: single.learn_one(X[i], y[i]),
        "one-row CSR": lambda i: single.partial_fit(S[i], y[i : i + 1]),
        "one-row array": lambda i: single.partial_fit(X[i : i + 1], y[i : i + 1]),
    }
    for i in range(30, len(y)):
        calls[layout](i)
    assert _held(single) > 0
    assert pickled_state(single) == pickled_state(whole)  # (pickling learns the held rows)
    assert _held(single) == 0
    np.testing.assert_array_equal(single.decision_function(X), whole.decision_function(X))
    board = single.estimator_.leaderboard_
    assert (board["n_samples_seen"][board["status"] == "alive"] == len(y)).all()


def test_reads_and_other_calls_between_examples_change_nothing():
    """Scores, chunks and one-row calls between held examples: the model of one call."""
    X, y = stream(seed=1)
    S = sp.csr_matrix(X)
    whole = _search_pipeline().partial_fit(S, y, classes=[0, 1])
    mixed = _search_pipeline().partial_fit(S[:10], y[:10], classes=[0, 1])
    scores = []
    for i in range(10, len(y)):
        if i % 97 == 0:
            mixed.partial_fit(S[i : i + 1], y[i : i + 1])
        else:
            if i % 13 == 0:
                scores.append(mixed.decision_one(_dict(X[i])))
            mixed.learn_one(_dict(X[i]), y[i])
    assert pickled_state(mixed) == pickled_state(whole)
    reference = _search_pipeline().partial_fit(S[:10], y[:10], classes=[0, 1])
    expected = []
    for i in range(10, len(y)):
        if i % 13 == 0 and i % 97:
            expected.append(reference.decision_function(S[i])[0])
        reference.partial_fit(S[i : i + 1], y[i : i + 1])
    np.testing.assert_array_equal(scores, expected)


def test_test_then_train_after_held_examples_scores_as_one_pass():
    X, y = stream(seed=2)
    whole = _search_pipeline().partial_fit(X[:10], y[:10], classes=[0, 1])
    expected = whole.partial_fit(X[10:500], y[10:500]).test_then_train(X[500:], y[500:])
    held = _search_pipeline().partial_fit(X[:10], y[:10], classes=[0, 1])
    for i in range(10, 500):
        held.learn_one(X[i], y[i])
    np.testing.assert_array_equal(held.test_then_train(X[500:], y[500:]), expected)


@pytest.mark.parametrize("how", ["save_model", "pickle"])
def test_held_examples_are_saved_and_resumed_exactly(how, tmp_path):
    X, y = stream(seed=3)
    S = sp.csr_matrix(X)
    whole = _search_pipeline().partial_fit(S, y, classes=[0, 1])
    model = _search_pipeline().partial_fit(S[:10], y[:10], classes=[0, 1])
    for i in range(10, 420):
        model.learn_one(_dict(X[i]), y[i])
    held = _held(model)
    assert held > 0
    if how == "save_model":  # the file keeps the held rows as they are
        resumed = load_model(save_model(model, tmp_path / "model"))
        assert _held(resumed) == held
    else:
        resumed = pickle.loads(pickle.dumps(model))
    for i in range(420, len(y)):
        resumed.learn_one(_dict(X[i]), y[i])
    assert pickled_state(resumed) == pickled_state(whole)


def test_a_refused_example_changes_nothing_while_examples_are_held():
    """A refused example leaves the model as it was (a refusal on the usual path may
    have the estimator learn the held examples first: the same model)."""
    X, y = stream(seed=4)
    model, reference = (
        _search_pipeline().partial_fit(X[:10], y[:10], classes=[0, 1]) for _ in "ab"
    )
    for i in range(10, 40):
        model.learn_one(X[i], y[i])
        reference.learn_one(X[i], y[i])
    bad = X[40].copy()
    bad[3] = np.nan
    for call in (
        lambda: model.learn_one(bad, y[40]),
        lambda: model.learn_one({0: 1.0, 99: 2.0}, y[40]),
        lambda: model.learn_one({0: float("inf")}, y[40]),
        lambda: model.learn_one(X[40], 7),
        lambda: model.learn_one(X[40, :3], y[40]),
    ):
        with pytest.raises(ValueError):
            call()
    assert model.n_samples_seen_ == 40
    for i in range(40, 60):
        model.learn_one(X[i], y[i])
        reference.learn_one(X[i], y[i])
    assert pickled_state(model) == pickled_state(reference)


def test_a_change_of_layout_learns_the_held_rows_first():
    """Dense rows and dict rows are held apart (dense and sparse input agree only up to
    rounding): a dict after arrays makes the estimator learn the arrays first."""
    X, y = stream(seed=5)
    model = StreamPipeline(OnlineStandardScaler(with_mean=False), OnePassSearch(first_round=100))
    model.partial_fit(X[:10], y[:10], classes=[0, 1])
    reference = StreamPipeline(
        OnlineStandardScaler(with_mean=False), OnePassSearch(first_round=100)
    ).partial_fit(X[:10], y[:10], classes=[0, 1])
    for i in range(10, 300):
        if (i // 25) % 2:
            model.learn_one(_dict(X[i]), y[i])
            reference.partial_fit(sp.csr_matrix(X[i : i + 1]), y[i : i + 1])
        else:
            model.learn_one(X[i], y[i])
            reference.partial_fit(X[i : i + 1], y[i : i + 1])
    assert pickled_state(model) == pickled_state(reference)


def test_scaler_one_example_equals_its_one_row_chunk():
    X, _ = stream(200, seed=6)
    for with_mean in (False, True):
        one, chunk = (OnlineStandardScaler(with_mean=with_mean).partial_fit(X[:5]) for _ in "ab")
        for i in range(5, 200):
            z = one.partial_fit_transform_one(X[i])
            np.testing.assert_array_equal(z, chunk.partial_fit_transform(X[i : i + 1])[0])
            if not with_mean:
                d = one.partial_fit_transform_one(_dict(X[i]))
                expected = chunk.partial_fit_transform(sp.csr_matrix(X[i : i + 1]))
                assert list(d) == expected.indices.tolist()
                assert list(d.values()) == expected.data.tolist()
        assert pickled_state(one) == pickled_state(chunk)
    centered = OnlineStandardScaler().partial_fit(X[:5])
    with pytest.raises(ValueError, match="Cannot center sparse"):
        centered.partial_fit_transform_one({0: 1.0})
    with pytest.raises(ValueError, match="one example"):
        centered.partial_fit_transform_one(X[:2])
    assert centered.n_samples_seen_ == 5


def test_dict_rows_after_dense_chunks_are_centered_dense_rows():
    """A pipeline started on dense chunks centers: a dict row then means the dense row
    with zeros at its missing keys (learnt and scored as that row), not a sparse row
    the scaler must refuse."""
    X, y = stream(n=400)
    dicts = _search_pipeline().partial_fit(X[:100], y[:100], classes=[0, 1])
    arrays = _search_pipeline().partial_fit(X[:100], y[:100], classes=[0, 1])
    assert dicts.transformer_.with_mean_
    for i in range(100, 400):
        np.testing.assert_array_equal(
            dicts.predict_proba_one(_dict(X[i])), arrays.predict_proba_one(X[i])
        )
        dicts.learn_one(_dict(X[i]), y[i])
        arrays.learn_one(X[i], y[i])
    assert _held(dicts) == _held(arrays) > 0  # held alike: the one-example path
    assert pickled_state(dicts) == pickled_state(arrays)
    for key in (12, -1):  # keys outside the features: refused by name, nothing held
        with pytest.raises(ValueError, match="feature"):
            dicts.learn_one({key: 1.0}, 1)
        assert _held(dicts) == 0
    with pytest.raises(ValueError, match="feature"):
        dicts.learn_one({12: 1.0}, 1)  # a key beyond the width: refused by name
    assert pickled_state(dicts) == pickled_state(arrays)
