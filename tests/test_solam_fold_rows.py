"""SOLAM saves a call of several sparse rows by rows (``StateSpec.by_rows``) when it
names fewer than d / 4 values and runs under an undo log (states above
``aucstream._state.SHADOW_LIMIT``): the kernel stops before a fold of its lazy form
that falls due inside the call, the call saves the arrays whole in its undo log and
goes on (``SOLAM._bind_update``). The same floats as any other chunking, and a call
rejected after such a fold changes nothing, with or without an undo log."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from conftest import patch_update
from test_wide_prefetch import wide_stream

from aucstream import SOLAM, _state

FOLDS = {"R": 0.01, "zeta": 8.0}  # (sigma falls below 1e-4 every few rows)


def _stream(n: int = 300):
    narrow, wide, y = wide_stream(n, 6, 0, lognormal=True)
    return wide, y


def _covers(monkeypatch) -> list:
    """Every whole save an undo log makes from now on (``cover(None)``)."""
    calls = []
    cover = _state.UndoLog.cover

    def counting(self, rows, fresh=False):
        calls.append(rows is None)
        cover(self, rows, fresh)

    monkeypatch.setattr(_state.UndoLog, "cover", counting)
    return calls


def _pass(X, y, chunk, weights=None, **params):
    model = SOLAM(**params)
    scores = []
    for lo in range(0, X.shape[0], chunk):
        w = None if weights is None else weights[lo : lo + chunk]
        scores.append(model.test_then_train(X[lo : lo + chunk], y[lo : lo + chunk], [-1, 1], w))
    return np.concatenate(scores), model


@pytest.mark.parametrize(
    "params",
    [FOLDS, {**FOLDS, "half_life": 50.0, "average": "post"}, {}],
    ids=["folds", "forgetting", "default"],
)
def test_a_chunk_saved_by_rows_that_folds_learns_as_any_chunking(params, monkeypatch):
    X, y = _stream()
    weights = np.where(np.arange(X.shape[0]) % 7 == 0, 0.0, 1.5)
    weights = weights if "half_life" in params else None
    covers = _covers(monkeypatch)
    expected, whole = _pass(X, y, X.shape[0], weights, **params)  # (saved by rows too)
    scores, chunked = _pass(X, y, 40, weights, **params)
    np.testing.assert_array_equal(scores, expected)
    for name in ("u_", "avg_base_", "avg_corr_", "scale_", "scalars_"):
        assert getattr(chunked, name).tobytes() == getattr(whole, name).tobytes(), name
    if params:  # a fold inside a call saved by rows: the arrays saved whole then
        assert any(covers)
    with monkeypatch.context() as patch:  # no undo log: every call saved whole
        patch.setattr(_state, "SHADOW_LIMIT", 1 << 40)
        plain, model = _pass(X, y, 40, weights, **params)
    np.testing.assert_array_equal(plain, expected)
    assert model.u_.tobytes() == whole.u_.tobytes()


@pytest.mark.parametrize("limit", [None, 1 << 40], ids=["undo log", "walk"])
def test_a_call_rejected_after_a_fold_inside_it_changes_nothing(limit, monkeypatch):
    X, y = _stream()
    if limit is not None:  # (the fast path's walk copies the state: no undo log)
        monkeypatch.setattr(_state, "SHADOW_LIMIT", limit)
    model = SOLAM(**FOLDS).partial_fit(X[:100], y[:100], classes=[-1, 1])
    reference = pickle.loads(pickle.dumps(model))
    folded = []

    def failing(self, chunk, update):
        base = self.avg_base_.copy()
        update(self, chunk)
        folded.append(not np.array_equal(base, self.avg_base_))  # (written by folds only)
        raise FloatingPointError("refused after the kernel wrote")

    for lo in range(100, 300, 40):
        before = pickle.dumps(model)
        with monkeypatch.context() as patch:
            patch_update(patch, SOLAM, failing)
            with pytest.raises(FloatingPointError):
                model.partial_fit(X[lo : lo + 40], y[lo : lo + 40])
        assert pickle.dumps(model) == before
        model.partial_fit(X[lo : lo + 40], y[lo : lo + 40])
        reference.partial_fit(X[lo : lo + 40], y[lo : lo + 40])
    assert any(folded)
    assert model.u_.tobytes() == reference.u_.tobytes()
