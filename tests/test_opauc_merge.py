"""Merging OPAUC, AdaOAM and SAdaOAM learners: the summaries merge, the weights are
averaged by examples learnt, the AdaGrad accumulators add, and the merged learner
continues the stream exactly like the recursion started from that merged state."""

import copy

import numpy as np
import pytest
from conftest import make_stream, opauc_recursion

from aucstream import OPAUC, AdaOAM, SAdaOAM
from aucstream.covariance import HashedCovariance, RandomizedCovariance, make_covariance
from aucstream.opauc import opauc_gradient

KINDS = [
    ("full", None),
    ("sparse", None),
    ("randomized", None),
    ("randomized", "exact"),
    ("hash", None),
    ("hash", "exact"),
    ("fd", None),
    ("fd", "exact"),
]
DRAW = {"randomized": RandomizedCovariance.draw, "hash": HashedCovariance.draw}


def opauc(kind, centering, seed):
    tau = 2 if kind == "sparse" else 4
    return OPAUC(
        eta=0.05, lam=0.01, covariance=kind, sketch_size=tau, centering=centering,
        random_state=seed, column_scale=None,  # (the papers' OPAUC, as the references)
    )  # fmt: skip


def continue_reference(model, X, y):
    """The OPAUC recursion from the model's current summaries, weights and generator
    (the draws its next chunk makes): each example joins its class's summary, then w
    takes one step of ``opauc_gradient`` from the opposite summary."""
    draw = DRAW.get(model.covariance)
    A = None if draw is None else draw(copy.deepcopy(model._rng), X.shape[0], model.sketch_size)
    stats, w = copy.deepcopy(model.stats_), model.w_.copy()
    return opauc_recursion(stats, w, X, y, model.eta, model.lam, A)


@pytest.mark.parametrize("kind, centering", KINDS)
def test_opauc_merge(kind, centering):
    X, y = make_stream(360, 6, seed=1, sparsity=0.3)
    first = opauc(kind, centering, 0).fit(X[:100], y[:100])
    second = opauc(kind, centering, 1).fit(X[100:300], y[100:300])
    expected_stats = [a.merge(b) for a, b in zip(first.stats_, second.stats_)]
    w1, w2 = first.w_.copy(), second.w_.copy()
    merged = first.merge(second)
    assert merged is first and merged.n_samples_seen_ == 300
    # the weights: the average by examples learnt
    np.testing.assert_allclose(merged.w_, (100 * w1 + 200 * w2) / 300, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(merged.coef_[0], merged.w_)
    # the summaries: the merged ones (for "full": the exact statistics of X[:300])
    for got, want in zip(merged.stats_, expected_stats):
        assert got.count == want.count
        np.testing.assert_allclose(got.scatter, want.scatter, rtol=1e-12, atol=1e-12)
    if kind == "full":
        for label, got in zip((-1, 1), merged.stats_):
            exact = make_covariance("full", 6).update(X[:300][y[:300] == label])
            np.testing.assert_allclose(got.scatter, exact.scatter, rtol=1e-10, atol=1e-10)
            np.testing.assert_allclose(got.sum_, exact.sum_, rtol=1e-10, atol=1e-12)
    # the merged learner continues like the recursion from the merged state
    expected = continue_reference(merged, X[300:], y[300:])
    merged.partial_fit(X[300:], y[300:])
    scale = max(np.abs(expected).max(), 1.0)
    np.testing.assert_allclose(merged.w_, expected, rtol=1e-9, atol=1e-11 * scale)
    assert merged.n_samples_seen_ == 360


@pytest.mark.parametrize("kind", ["full", "fd", "hash"])
def test_opauc_merge_is_associative_for_exact_summaries(kind):
    X, y = make_stream(300, 5, seed=2)
    parts = [
        opauc(kind, None, i).fit(X[a : a + 100], y[a : a + 100])
        for i, a in enumerate((0, 100, 200))
    ]
    left = copy.deepcopy(parts[0]).merge(parts[1]).merge(parts[2])
    right = copy.deepcopy(parts[0]).merge(copy.deepcopy(parts[1]).merge(parts[2]))
    np.testing.assert_allclose(left.w_, right.w_, rtol=1e-12, atol=1e-15)
    if kind != "fd":  # frequent directions: each order within its bound (covariance tests)
        for a, b in zip(left.stats_, right.stats_):
            np.testing.assert_allclose(a.scatter, b.scatter, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["randomized", "hash"])
def test_opauc_refuses_to_merge_sketches_with_the_same_draws(kind):
    X, y = make_stream(200, 5, seed=3)
    first = opauc(kind, None, 7).fit(X[:100], y[:100])
    second = opauc(kind, None, 7).fit(X[100:], y[100:])
    before = first.w_.copy()
    with pytest.raises(ValueError, match="same random_state"):
        first.merge(second)
    np.testing.assert_array_equal(first.w_, before)  # a refused merge changes nothing
    assert first.n_samples_seen_ == 100


# ------------------------------------------------------------------- AdaOAM, SAdaOAM
def adagrad_reference(model, X, y, theta=None):
    """AdaOAM without projection (theta None) or eager SAdaOAM, from the model's state."""
    stats = copy.deepcopy(model.stats_)
    w, s = model.coef_[0].copy(), model.sq_grad_sum_.copy()
    for t in range(X.shape[0]):
        own = int(y[t] > 0)
        stats[own].update(X[t : t + 1])
        if not stats[1 - own].count:
            continue
        g = opauc_gradient(w, X[t], float(y[t]), stats[1 - own], model.lam)
        s += g * g
        h = model.delta + np.sqrt(s)
        u = w - model.eta * g / h
        w = u if theta is None else np.sign(u) * np.maximum(0.0, np.abs(u) - model.eta * theta / h)
    return w, s


@pytest.mark.parametrize(
    "make, theta",
    [
        (lambda: AdaOAM(eta=0.1, lam=0.01, projection="none", column_scale=None), None),
        (lambda: SAdaOAM(eta=0.1, lam=0.01, theta=1e-2, lazy=True, column_scale=None), 1e-2),
        (lambda: SAdaOAM(eta=0.1, lam=0.01, theta=1e-2, lazy=False, column_scale=None), 1e-2),
    ],
    ids=["AdaOAM", "SAdaOAM-lazy", "SAdaOAM-eager"],
)
def test_adagrad_merge(make, theta):
    X, y = make_stream(330, 8, seed=4, sparsity=0.6)
    first, second = make().fit(X[:120], y[:120]), make().fit(X[120:300], y[120:300])
    w1, w2 = first.coef_[0].copy(), second.coef_[0].copy()
    s1, s2 = first.sq_grad_sum_.copy(), second.sq_grad_sum_.copy()
    steps = int(first.n_updates_[0] + second.n_updates_[0])
    merged = first.merge(second)
    np.testing.assert_allclose(merged.coef_[0], (120 * w1 + 180 * w2) / 300, rtol=1e-12)
    np.testing.assert_array_equal(merged.sq_grad_sum_, s1 + s2)
    assert merged.n_updates_[0] == steps and merged.n_samples_seen_ == 300
    for label, got in zip((-1, 1), merged.stats_):
        exact = make_covariance("full", 8).update(X[:300][y[:300] == label])
        np.testing.assert_allclose(got.covariance, exact.covariance, rtol=1e-10, atol=1e-12)
    w, s = adagrad_reference(merged, X[300:], y[300:], theta)
    merged.partial_fit(X[300:], y[300:])
    np.testing.assert_allclose(merged.coef_[0], w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(merged.sq_grad_sum_, s, rtol=1e-9)


# ------------------------------------------------------------------ from_statistics
def test_from_statistics_of_merged_shards_is_lssvmauc(tmp_path):
    from aucstream import LSSVMAUC, load_model, save_model

    X, y = make_stream(600, 6, seed=5, sparsity=0.3)
    y = np.where(y > 0, "pos", "neg")
    shards = [
        [
            make_covariance("full", 6).update(X[a : a + 200][y[a : a + 200] == c])
            for c in ("neg", "pos")
        ]
        for a in (0, 200, 400)
    ]
    neg = shards[0][0].merge(shards[1][0]).merge(shards[2][0])
    pos = shards[0][1].merge(shards[1][1]).merge(shards[2][1])
    model = OPAUC(eta=2**-6, lam=2**-5, column_scale=None)
    model.from_statistics(neg, pos, classes=["pos", "neg"])
    reference = LSSVMAUC(lam=2**-5).fit(X, y)
    np.testing.assert_allclose(model.coef_[0], reference.w_, rtol=1e-8, atol=1e-12)
    assert model.classes_.tolist() == ["neg", "pos"] and model.n_samples_seen_ == 600
    assert model.stats_[0] is neg and model.n_features_in_ == 6
    assert model.score(X, y) == reference.score(X, y)
    loaded = load_model(save_model(model, tmp_path / "model"))
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    # it continues the stream like OPAUC from that state
    expected = continue_reference(model, X[:40], np.where(y[:40] == "pos", 1, -1))
    model.partial_fit(X[:40], y[:40])
    np.testing.assert_allclose(model.w_, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind, centering", KINDS[1:])
def test_from_statistics_of_sketches(kind, centering):
    """Given weights: the learner continues like the recursion from the summaries and
    those weights; without: the closed form of the sketch's estimates."""
    from aucstream.covariance import solve_from_statistics

    X, y = make_stream(300, 6, seed=6, sparsity=0.3)
    source = opauc(kind, centering, 0).fit(X[:200], y[:200])
    model = opauc(kind, centering, 0).from_statistics(
        *copy.deepcopy(source.stats_), classes=[-1, 1], coef=source.w_
    )
    np.testing.assert_allclose(model.w_, source.w_, rtol=1e-12, atol=1e-14)
    expected = continue_reference(model, X[200:], y[200:])
    model.partial_fit(X[200:], y[200:])
    scale = max(np.abs(expected).max(), 1.0)
    np.testing.assert_allclose(model.w_, expected, rtol=1e-9, atol=1e-11 * scale)
    solved = opauc(kind, centering, 0).from_statistics(*source.stats_, classes=[-1, 1])
    np.testing.assert_allclose(
        solved.w_, solve_from_statistics(*source.stats_, source.lam), rtol=1e-10, atol=1e-14
    )


def test_from_statistics_refusals():
    X, y = make_stream(100, 4, seed=7)
    neg, pos = (make_covariance("full", 4).update(X[y == c]) for c in (-1, 1))
    with pytest.raises(TypeError, match="FrequentDirectionsCovariance"):
        OPAUC(covariance="fd").from_statistics(neg, pos, classes=[-1, 1])
    with pytest.raises(ValueError, match="sketch_size"):
        a, b = (make_covariance("fd", 4, 3).update(X[y == c]) for c in (-1, 1))
        OPAUC(covariance="fd", sketch_size=4).from_statistics(a, b, classes=[-1, 1])
    with pytest.raises(ValueError, match="two classes"):
        OPAUC().from_statistics(neg, pos, classes=[1])
    with pytest.raises(ValueError, match="coef"):
        OPAUC().from_statistics(neg, pos, classes=[-1, 1], coef=np.ones(3))
    model = OPAUC().fit(X, y)
    before = model.w_.copy()
    with pytest.raises(ValueError, match="coef"):
        model.from_statistics(neg, pos, classes=[-1, 1], coef=[np.nan] * 4)
    np.testing.assert_array_equal(model.w_, before)
