"""Frequent directions' deferred shrinks (OPAUC; covariance/_fd.py, module docstring).

OPAUC defers the shrink's pass over the support: a row of the sketch (and of v) is
brought up to date when an example reads it, by a re-basing or at the capacity. The
sketch must still be a frequent-directions sketch of its class (Liberty's guarantee),
equal to the shrink-by-shrink one up to rounding, and chunking, copying, saving and
loading must change nothing, bit for bit.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_stream, patch_update

from aucstream import OPAUC, load_model, save_model
from aucstream.covariance import FrequentDirectionsCovariance


def data(n=400, d=800, seed=0):
    X, y = make_stream(n, d, seed=seed, sparsity=0.97)
    y[:2] = [-1, 1]
    return sp.csr_matrix(X), y


def make(centering):
    return OPAUC(
        eta=0.05, lam=0.01, covariance="fd", sketch_size=6, centering=centering, column_scale=None
    )  # (the papers' update: its sketches are those of the rows as they come)


@pytest.mark.parametrize("centering", [None, "exact"])
def test_deferred_sketches_are_frequent_directions_sketches(centering):
    X, y = data()
    model = make(centering).fit(X, y)
    assert any(s.deferred > 0 for s in model.stats_)  # rows still behind
    for c, label in enumerate((-1, 1)):
        s, Xc = model.stats_[c], X[y == label].toarray()
        eager = FrequentDirectionsCovariance(X.shape[1], 6, centering=centering).update(Xc)
        Z, E = s.sketch_matrix(), eager.sketch_matrix()
        np.testing.assert_allclose(Z @ Z.T, E @ E.T, rtol=1e-9, atol=1e-12)
        if centering is None:
            gap = np.linalg.eigvalsh(Xc.T @ Xc - Z @ Z.T)
            assert gap.min() >= -1e-9
            assert gap.max() <= s.error_bound + 1e-9
    # the weights read with rows behind equal those after bringing every row up
    w = model.coef_[0].copy()
    model._rebase()
    assert all(s.deferred == 0 for s in model.stats_)
    np.testing.assert_allclose(model.w_, w, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("centering", [None, "exact"])
def test_deferred_shrinks_are_chunk_invariant_through_copies_and_files(centering, tmp_path):
    X, y = data(seed=1)
    whole = make(centering).fit(X, y)
    model = make(centering)
    bounds = [0, 1, 7, 30, 31, 90, 170, 171, 260, 400]
    for i, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
        model.partial_fit(X[lo:hi], y[lo:hi], classes=[-1, 1])
        if i == 3:
            model.coef_  # noqa: B018 - a read with rows behind changes nothing
            model = pickle.loads(pickle.dumps(model))
        if i == 5:
            assert any(s.deferred for s in model.stats_)
            model = load_model(save_model(model, tmp_path / "m.npz"))
    np.testing.assert_array_equal(model.coef_, whole.coef_)
    for a, b in zip(model.stats_, whole.stats_):
        for name in ("sketch_", "version_", "defer_P_", "defer_dw_", "defer_base_"):
            assert getattr(a, name).tobytes() == getattr(b, name).tobytes()


@pytest.mark.parametrize(
    "tamper, message",
    [
        (lambda s: s.version_.__setitem__(3, s.n_shrinks_[0] + 1), "version_ holds"),
        (lambda s: s.defer_base_.__setitem__(0, s.n_shrinks_[0] + 1), "defer_base_ ="),
        (lambda s: s.defer_P_.__setitem__((s.deferred, 0, 1), 1.0), "not the identity"),
        (lambda s: s.defer_dw_.__setitem__((s.deferred, 0), 1.0), "not the identity"),
    ],
)
def test_a_tampered_deferred_state_is_refused(tamper, message, tmp_path):
    X, y = data(seed=2)
    model = make(None).fit(X, y)
    tamper(model.stats_[0])
    path = save_model(model, tmp_path / "bad.npz")
    with pytest.raises(ValueError, match=message):
        load_model(path)


def test_a_summary_an_opauc_defers_weights_into_is_not_updated_alone():
    X, y = data(seed=3)
    model = make(None).fit(X, y)
    s = next(s for s in model.stats_ if s.deferred)
    with pytest.raises(ValueError, match="defers part of an OPAUC's weights"):
        s.update(X[:5])


def test_a_rejected_call_with_deferred_rows_restores_everything(monkeypatch):
    """The undo log (as at d = 10^6) with rows behind: catch-ups write the rows of the
    chunk's features only, and a call that fails after the kernel leaves no trace."""
    from test_write_sets import assert_same_bytes, state_bytes

    from aucstream import _state

    monkeypatch.setattr(_state, "SHADOW_LIMIT", 0)
    X, y = data(seed=4)
    model = make("exact").partial_fit(X[:60], y[:60], classes=[-1, 1])
    reference = pickle.loads(pickle.dumps(model))

    def failing(self, chunk, update):
        update(self, chunk)
        raise ZeroDivisionError("division by zero")

    for lo, hi in [(60, 61), (61, 75), (75, 200), (200, 400)]:
        before = state_bytes(model)
        with monkeypatch.context() as patch:
            patch_update(patch, OPAUC, failing)
            with pytest.raises(FloatingPointError):
                model.partial_fit(X[lo:hi], y[lo:hi])
        assert_same_bytes(before, state_bytes(model))
        model.partial_fit(X[lo:hi], y[lo:hi])
        reference.partial_fit(X[lo:hi], y[lo:hi])
        assert any(s.deferred for s in model.stats_) or hi == 400
    np.testing.assert_array_equal(model.coef_, reference.coef_)
