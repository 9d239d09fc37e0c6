"""LSPAUC (aucstream.lspauc): against a plain-Python replay of the module docstring's
algorithm, against the batch least-squares AUC (LSSVMAUC) with the replayed weights,
chunking, dense = sparse, save/load, and its place in the partial-AUC race."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from aucstream import LSPAUC, LSSVMAUC, load_model, save_model
from aucstream.metrics import roc_auc


def _stream(n=400, d=4, seed=0, rate=0.1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X @ np.arange(1.0, d + 1) + rng.normal(size=n) * 2 > np.quantile(X[:, -1], 1 - rate) * d
    return X, y.astype(int)


def _replay(X, y, beta, mu, lam, refresh):
    """The module docstring's steps 1-4 in plain Python: the scores, the weights and
    the final scoring model."""
    n, d = X.shape
    rho = mu / (beta * (1 - mu))
    w = np.zeros(d)
    W, S, P = np.zeros(2), np.zeros((2, d)), np.zeros((2, d, d))
    q = scale = scored = solves = 0.0
    scores, weights = [], []

    def solve():
        c = [S[k] / W[k] for k in (0, 1)]
        delta = c[1] - c[0]
        A = sum(P[k] / W[k] - np.outer(c[k], c[k]) for k in (0, 1))
        A = A + np.outer(delta, delta) + lam * np.eye(d)
        return np.linalg.solve(0.5 * (A + A.T), delta)

    for t, (x, label) in enumerate(zip(X, y), start=1):
        s = float(w @ x)
        scores.append(s)
        omega = 1.0
        if label == 0 and solves > 0:
            scored += 1
            if scored == 1:
                q, scale, omega = s, 0.0, 1.0 + rho
            else:
                omega = 1.0 + rho if s >= q else 1.0
                scale += (abs(s - q) - scale) / min(scored, 1000.0)
                q += 0.1 * scale * (1 - beta) if s > q else -0.1 * scale * beta
        c = int(label)
        W[c] += omega
        S[c] += omega * x
        P[c] += omega * np.outer(x, x)
        weights.append(omega)
        due = (t & (t - 1)) == 0 if t < refresh else t % refresh == 0
        if due and W[0] > 0 and W[1] > 0:
            w = solve()
            solves += 1
    return np.array(scores), np.array(weights), w, np.array([q, scale, scored, solves])


@pytest.mark.parametrize("mu", [0.0, 0.7])
def test_the_kernel_is_the_replayed_algorithm(mu):
    X, y = _stream()
    model = LSPAUC(partial_weight=mu, lam=0.1, refresh=16)
    pre = model.test_then_train(X, y)
    scores, weights, w, tracker = _replay(X, y, 0.05, mu, 0.1, 16)
    np.testing.assert_allclose(pre, scores, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.w_, w, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.tracker_, tracker, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.class_weights_, [weights[y == 0].sum(), (y == 1).sum()])
    assert (weights > 1).any() == (mu > 0)
    # coef_ is the batch least-squares AUC of the weighted examples (Eq. lspauc-solve)
    batch = LSSVMAUC(lam=0.1).fit(X, y, sample_weight=weights)
    np.testing.assert_allclose(model.coef_.ravel(), batch.w_, rtol=1e-7, atol=1e-10)


def test_chunking_dense_sparse_and_save_load_are_exact(tmp_path):
    X, y = _stream(n=600, d=5, seed=1)
    whole = LSPAUC(refresh=50).fit(X, y)
    parts = LSPAUC(refresh=50)
    for lo, hi in ((0, 1), (1, 7), (7, 300), (300, 301), (301, 600)):
        parts.partial_fit(X[lo:hi], y[lo:hi], classes=[0, 1])
    sparse = LSPAUC(refresh=50).fit(sp.csr_matrix(X), y)
    for other in (parts, sparse):
        for name in ("w_", "class_weights_", "sums_", "scatter_", "tracker_", "class_counts_"):
            np.testing.assert_array_equal(getattr(whole, name), getattr(other, name))
        np.testing.assert_array_equal(whole.coef_, other.coef_)
    path = tmp_path / "lspauc.json"
    save_model(whole, path)
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.coef_, whole.coef_)
    loaded.partial_fit(X[:50], y[:50])
    whole.partial_fit(X[:50], y[:50])
    np.testing.assert_array_equal(loaded.scatter_, whole.scatter_)
    np.testing.assert_array_equal(loaded.coef_, whole.coef_)


def test_partial_weight_raises_the_partial_auc_on_an_imbalanced_stream():
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=8000, n_features=20, n_informative=8, weights=[0.97], flip_y=0.01,
        class_sep=0.8, random_state=2,
    )  # fmt: skip
    Xt, yt = X[5000:], y[5000:]
    partial = {}
    for mu in (0.0, 0.5):
        scores = LSPAUC(partial_weight=mu).fit(X[:5000], y[:5000]).decision_function(Xt)
        partial[mu] = roc_auc(yt, scores, max_fpr=0.05)
    assert partial[0.5] > partial[0.0] + 0.03, partial


def test_bad_parameters_are_refused_before_learning():
    X, y = _stream(n=50)
    for bad in ({"partial_weight": 1.0}, {"max_fpr": 0.0}, {"refresh": 0}, {"lam": 0.0}):
        model = LSPAUC(**bad)
        with pytest.raises(ValueError):
            model.fit(X, y)
        assert not hasattr(model, "w_")


def test_it_races_with_max_fpr():
    from aucstream._pauc_race import pauc_candidates

    found = [c for c in pauc_candidates(0.05) if isinstance(c, LSPAUC)]
    assert found and all(c.max_fpr == 0.05 for c in found)
