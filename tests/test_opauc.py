import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import assert_same_state, make_stream, opauc_recursion, snapshot, state_bytes

from aucstream import OPAUC, load_model, save_model
from aucstream import opauc as opauc_module
from aucstream.covariance import (
    FullCovariance,
    HashedCovariance,
    RandomizedCovariance,
    make_covariance,
)
from aucstream.metrics import pairwise_auc_loss
from aucstream.opauc import opauc_gradient
from aucstream.reduction import RandomFeatureSubset, make_opauc_f, make_opauc_pca, make_opauc_rp


def per_step_loss_gradient(w, X, y, t, lam):
    """Gradient of G16 Eq. 5 at step t by brute force over the stored pairs."""
    opposite = [i for i in range(t) if y[i] != y[t]]
    grad = lam * w
    for i in opposite:
        d = y[t] * (X[t] - X[i])
        grad = grad - d * (1.0 - d @ w) / len(opposite)
    return grad


def test_gradient_equals_brute_force_over_pairs():
    X, y = make_stream(40, 5, seed=0)
    rng = np.random.default_rng(1)
    lam = 0.1
    for t in range(5, 40):
        opposite = FullCovariance(5).update(X[:t][y[:t] != y[t]])
        if opposite.count == 0:
            continue
        w = rng.normal(size=5)
        np.testing.assert_allclose(
            opauc_gradient(w, X[t], y[t], opposite, lam),
            per_step_loss_gradient(w, X, y, t, lam),
            rtol=1e-10,
            atol=1e-12,
        )


def test_kernel_follows_the_brute_force_recursion():
    X, y = make_stream(60, 4, seed=2, sparsity=0.3)
    eta, lam = 0.05, 0.01
    model = OPAUC(eta=eta, lam=lam, column_scale=None).fit(X, y)
    w = np.zeros(4)
    for t in range(60):
        if np.any(y[:t] != y[t]):
            w = w - eta * per_step_loss_gradient(w, X, y, t, lam)
    np.testing.assert_allclose(model.w_, w, rtol=1e-10, atol=1e-12)


def test_statistics_equal_numpy():
    X, y = make_stream(200, 6, seed=3)
    model = OPAUC().fit(X, y)
    for label, summary in zip((-1, 1), model.stats_):
        part = X[y == label]
        assert summary.count == len(part)
        np.testing.assert_allclose(summary.mean, part.mean(axis=0), rtol=1e-12)
        np.testing.assert_allclose(summary.covariance, np.cov(part.T, bias=True), atol=1e-12)


def test_converges_to_the_closed_form_optimum():
    """On a long stream, w approaches argmin of the population objective (SPEC §12.3)."""
    rng = np.random.default_rng(4)
    n, d, lam = 60_000, 3, 0.1
    y = np.where(rng.random(n) < 0.3, 1, -1)
    X = rng.normal(size=(n, d)) @ np.diag([1.0, 0.5, 2.0]) + np.outer(y, [0.5, -0.3, 0.2])
    model = OPAUC(eta=2**-8, lam=lam, column_scale=None).fit(X, y)
    pos, neg = X[y > 0], X[y < 0]
    delta = pos.mean(0) - neg.mean(0)
    cov = np.cov(pos.T, bias=True) + np.cov(neg.T, bias=True)
    A = lam * np.eye(d) + cov + np.outer(delta, delta)
    w_star = np.linalg.solve(A, delta)
    assert np.linalg.norm(model.w_ - w_star) < 0.05 * np.linalg.norm(w_star)


def test_pairwise_loss_decreases_over_a_pass_on_separable_data():
    """The O(n^2) square pairwise loss falls over the pass towards its minimum."""
    rng = np.random.default_rng(5)
    v = np.array([1.0, -2.0, 0.5, 0.0, 1.0])
    X = rng.normal(size=(400, 5))
    y = np.where(X @ v > 0, 1, -1)
    X = X + 0.2 * y[:, None] * v  # a margin: the data are separable
    model = OPAUC(eta=2**-9, lam=2**-10, column_scale=None)
    losses = [pairwise_auc_loss(y, np.zeros(400))]
    for lo in range(0, 400, 50):
        model.partial_fit(X[lo : lo + 50], y[lo : lo + 50], classes=[-1, 1])
        losses.append(pairwise_auc_loss(y, model.decision_function(X)))
    # stochastic steps may wobble slightly near the optimum, never climb
    assert all(b < a * 1.01 for a, b in zip(losses, losses[1:]))
    # the minimum of the mean pairwise square loss, by brute force over all pairs
    D = (X[y > 0][:, None, :] - X[y < 0][None, :, :]).reshape(-1, 5)
    w_opt = np.linalg.lstsq(D, np.ones(len(D)), rcond=None)[0]
    best = pairwise_auc_loss(y, X @ w_opt)
    assert losses[-1] < 1.05 * best < 0.2 * losses[0]
    assert model.score(X, y) == 1.0


def test_only_statistics_until_both_classes_seen():
    X, y = make_stream(30, 3, seed=6)
    model = OPAUC().partial_fit(X[y > 0], y[y > 0], classes=[-1, 1])
    np.testing.assert_array_equal(model.w_, 0.0)
    assert model.stats_[1].count == np.sum(y > 0) and model.stats_[0].count == 0


@pytest.mark.parametrize("params", [{"eta": 0}, {"eta": -1}, {"lam": -0.1}, {"eta": np.nan}])
def test_invalid_parameters(params):
    X, y = make_stream(20, 2)
    with pytest.raises(ValueError, match="must be"):
        OPAUC(**params).fit(X, y)


# ======================================================== sketched covariances (issue 3)
SKETCHES = ["randomized", "hash", "fd", "sparse"]
VARIANTS = [
    ("randomized", {"centering": "g13"}),
    ("randomized", {"centering": "g16"}),
    ("randomized", {"centering": "exact"}),
    ("hash", {}),
    ("hash", {"centering": "exact"}),
    ("fd", {"shrink": "half"}),
    ("fd", {"shrink": "ceil_0.9"}),
    ("fd", {"centering": "exact"}),
    ("fd", {"shrink": "ceil_0.9", "centering": "exact"}),
    ("sparse", {"prune_slack": 0.0}),
    ("sparse", {"prune_slack": 0.3}),
]


def sketch_reference(kind, X, y, eta, lam, tau, seed=0, **options):
    """The approximate OPAUC recursion (G13 Eqs. 10-11, G16 Eqs. 14-17) with summaries.

    Each example is added to its own class's summary (with the draws the learner makes:
    tau Gaussians for "randomized", one uniform for "hash"), then w takes one step of
    the gradient computed by ``opauc_gradient`` from the opposite summary.
    """
    n, d = X.shape
    rng = np.random.default_rng(seed)
    draws = {"randomized": RandomizedCovariance.draw, "hash": HashedCovariance.draw}.get(
        kind, lambda *a: None
    )(rng, n, tau)
    stats = [make_covariance(kind, d, tau, **options) for _ in range(2)]
    return opauc_recursion(stats, np.zeros(d), X, y, eta, lam, draws)


@pytest.mark.parametrize("kind, options", VARIANTS)
def test_sketched_kernel_follows_the_reference_recursion(kind, options):
    X, y = make_stream(150, 6, seed=3, sparsity=0.3)
    tau = 2 if kind == "sparse" else 4
    model = OPAUC(
        eta=0.05,
        lam=0.01,
        covariance=kind,
        sketch_size=tau,
        random_state=0,
        column_scale=None,
        **options,
    ).fit(X, y)
    w = sketch_reference(kind, X, y, 0.05, 0.01, tau, **options)
    np.testing.assert_allclose(model.w_, w, rtol=1e-11, atol=1e-12 * np.abs(w).max())
    for summary in model.stats_:
        if hasattr(summary, "n_shrinks_"):
            assert summary.n_shrinks_[0] > 3
        if hasattr(summary, "n_prunes"):
            assert summary.n_prunes > 3


LOWRANK = [("randomized", None), ("hash", None), ("fd", None), ("hash", "exact"), ("fd", "exact")]


@pytest.mark.parametrize("kind, centering", LOWRANK)
@pytest.mark.parametrize("eta, lam", [(0.05, 0.01), (0.5, 2.0), (0.25, 3.999)])
@pytest.mark.parametrize("refresh_every", [1, 3])
def test_implicit_weights_with_rebasing_and_extreme_shrinkage(
    kind, centering, eta, lam, refresh_every, monkeypatch
):
    """Re-basing every 7 examples (the summaries' products recomputed at every one, or
    at every third), eta*lam = 1 (w restarts) and tiny scale factors."""
    monkeypatch.setattr(OPAUC, "_rebase_every", 7)
    monkeypatch.setattr(OPAUC, "_refresh_every", refresh_every)
    X, y = make_stream(120, 5, seed=4, sparsity=0.2)
    model = OPAUC(
        eta=eta, lam=lam, covariance=kind, sketch_size=3, random_state=1, centering=centering
    ).set_params(column_scale=None)  # the papers' update (the reference's)
    model.fit(X, y)
    w = sketch_reference(kind, X, y, eta, lam, 3, seed=1, centering=centering)
    np.testing.assert_allclose(model.w_, w, rtol=1e-10, atol=1e-12 * max(np.abs(w).max(), 1.0))


@pytest.mark.parametrize("kind, centering", LOWRANK)
def test_maintained_products_match_recomputation(kind, centering):
    X, y = make_stream(300, 8, seed=5, sparsity=0.5)
    model = OPAUC(
        eta=0.02, covariance=kind, sketch_size=5, random_state=2, centering=centering
    ).fit(X, y)
    saved = {k: getattr(model, k).copy() for k in ("zz_", "zs_", "ss_", "zv_", "sv_")}
    grams = [s.gram_.copy() for s in model.stats_]
    if kind == "fd":
        grams += [s.zs_.copy() for s in model.stats_] + [s.ss_.copy() for s in model.stats_]
    model._rebase()  # folds w into v and recomputes every product exactly
    w = model.w_.copy()
    model._materialize()
    np.testing.assert_allclose(model.w_, w, rtol=1e-10, atol=1e-12)
    assert model.scale_[0] == 1.0 and not model.p_.any() and not model.gamma_.any()
    now = [s.gram_ for s in model.stats_]
    if kind == "fd":
        now += [s.zs_ for s in model.stats_] + [s.ss_ for s in model.stats_]
    for current, before in zip(now, grams):
        np.testing.assert_allclose(current, before, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(model.zz_, saved["zz_"], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(model.zs_, saved["zs_"], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(model.ss_, saved["ss_"], rtol=1e-9)


@pytest.mark.parametrize(
    "kind, centering", [(k, None) for k in SKETCHES] + [("hash", "exact"), ("fd", "exact")]
)
def test_sketched_chunking_dense_sparse_and_resuming_are_exact(kind, centering, tmp_path):
    """The common-battery invariants, for every covariance kind (bit for bit)."""
    X, y = make_stream(160, 6, seed=6, sparsity=0.4)
    params = dict(
        eta=0.05, lam=0.01, covariance=kind, sketch_size=3, random_state=0, centering=centering
    )
    whole = OPAUC(**params).fit(X, y)
    for cuts in ([1, 2, 50, 51, 120], [80], list(range(10, 160, 10))):
        streamed = OPAUC(**params)
        for lo, hi in zip([0, *cuts], [*cuts, 160]):
            streamed.partial_fit(X[lo:hi], y[lo:hi], classes=[-1, 1])
        np.testing.assert_array_equal(streamed.coef_, whole.coef_)
    for fmt in ("csr", "csc"):
        sparse = OPAUC(**params).fit(sp.csr_matrix(X).asformat(fmt), y)
        np.testing.assert_array_equal(sparse.coef_, whole.coef_)
    first = OPAUC(**params).partial_fit(X[:70], y[:70], classes=[-1, 1])
    save_model(first, tmp_path / "model.npz")
    for resumed in (pickle.loads(pickle.dumps(first)), load_model(tmp_path / "model.npz")):
        resumed.partial_fit(X[70:], y[70:])
        np.testing.assert_array_equal(resumed.coef_, whole.coef_)
        assert resumed.n_samples_seen_ == 160


@pytest.mark.parametrize("kind, centering", LOWRANK)
def test_prefetching_changes_no_result(kind, centering, monkeypatch):
    """The low-rank kernel prefetches the next example's rows only for sketches too
    large for the caches (``PREFETCH_BYTES``, never at the sizes tested here), and
    the running column scale its entries a few rows ahead (``SCALE_AHEAD``): the
    same stream learnt with prefetching forced on gives the same model, bit for bit,
    and a model too large for the caches takes it."""
    X, y = make_stream(200, 9, seed=8, sparsity=0.5)
    params = dict(eta=0.05, lam=0.01, covariance=kind, sketch_size=3, random_state=0)
    without = OPAUC(**params, centering=centering).fit(X, y)
    taken = []
    kernel = opauc_module._opauc_lowrank_chunk

    def recording(*args):
        taken.append(args[10].prefetch)  # the settings
        return kernel(*args)

    monkeypatch.setattr(opauc_module, "_opauc_lowrank_chunk", recording)
    OPAUC(**params, centering=centering).fit(X, y)
    assert taken and not any(taken)
    taken.clear()
    monkeypatch.setattr(opauc_module, "PREFETCH_BYTES", -1)
    forced = OPAUC(**params, centering=centering).fit(X, y)
    assert taken and all(taken)
    assert_same_state(snapshot(without), snapshot(forced))
    np.testing.assert_array_equal(forced.w_, without.w_)


@pytest.mark.parametrize("kind", SKETCHES + ["full"])
def test_memory_is_independent_of_the_stream_length(kind):
    X, y = make_stream(3000, 30, seed=7, sparsity=0.7)
    params = dict(covariance=kind, sketch_size=4, random_state=0)
    short = OPAUC(**params).fit(X[:100], y[:100])
    long = OPAUC(**params).fit(X, y)
    assert state_bytes(long) == state_bytes(short)
    if kind != "full":  # O(d tau), far below the d^2 of the exact covariance
        assert state_bytes(long) < 2 * 30 * 30 * 8 + 40_000 * 16


def test_sketches_at_full_size_match_full_opauc():
    """Where a sketch is exact the model is full OPAUC's (to rounding): sparse with a
    budget of d^2 entries, FD before its first shrink; close for the random ones."""
    X, y = make_stream(200, 6, seed=8, sparsity=0.3)
    # (the papers' OPAUC: the low-rank kinds have no running column scale)
    full = OPAUC(eta=0.05, lam=0.01, column_scale=None).fit(X, y)
    sparse = OPAUC(eta=0.05, lam=0.01, covariance="sparse", sketch_size=6, column_scale=None)
    sparse.fit(X, y)
    np.testing.assert_allclose(sparse.w_, full.w_, rtol=1e-10, atol=1e-12)
    for centering in ("g16", "exact"):
        fd = OPAUC(eta=0.05, lam=0.01, covariance="fd", sketch_size=200, centering=centering)
        fd = fd.set_params(column_scale=None).fit(X, y)
        assert all(s.n_shrinks_[0] == 0 for s in fd.stats_)
        np.testing.assert_allclose(fd.w_, full.w_, rtol=1e-9, atol=1e-11)
    for kind, options in [
        ("randomized", {"centering": "exact"}),
        ("hash", {}),
        ("hash", {"centering": "exact"}),
    ]:
        errors = [
            np.linalg.norm(
                OPAUC(
                    eta=0.05, lam=0.01, covariance=kind, sketch_size=tau, random_state=0, **options
                )
                .set_params(column_scale=None)
                .fit(X, y)
                .w_
                - full.w_
            )
            for tau in (6, 400)
        ]
        assert errors[1] < 0.1 * np.linalg.norm(full.w_)
        assert errors[1] < errors[0]


def test_sketched_opauc_learns():
    rng = np.random.default_rng(9)
    truth = rng.normal(size=40)
    X = rng.normal(size=(1500, 40)) * (rng.random((1500, 40)) < 0.3)
    y = np.where(X @ truth + 0.3 * rng.normal(size=1500) > 0, 1, -1)
    full = OPAUC(eta=2**-5, lam=2**-10).fit(X[:1000], y[:1000]).score(X[1000:], y[1000:])
    assert full > 0.97
    for kind in SKETCHES:  # tau = d/4
        model = OPAUC(eta=2**-5, lam=2**-10, covariance=kind, sketch_size=10, random_state=0).fit(
            X[:1000], y[:1000]
        )
        assert model.score(X[1000:], y[1000:]) > full - 0.1, kind


@pytest.mark.parametrize(
    "params",
    [
        {"covariance": "diagonal"},
        {"covariance": "fd", "sketch_size": 1},
        {"covariance": "sparse", "sketch_size": 0},
        {"covariance": "randomized", "sketch_size": 1.5},
        {"centering": "mean"},
        {"shrink": "third"},
        {"covariance": "fd", "centering": "g13"},
        {"covariance": "fd", "sketch_size": 4, "shrink": 9},
        {"prune_slack": -0.5},
    ],
)
def test_invalid_sketch_parameters(params):
    X, y = make_stream(20, 4)
    with pytest.raises(ValueError, match="must be|outside"):
        OPAUC(**params).fit(X, y)


# --------------------------------------------------- dimension-reduction pipelines
@pytest.mark.parametrize(
    "factory, method",
    [(make_opauc_f, "subset"), (make_opauc_rp, "gaussian"), (make_opauc_pca, "pca")],
)
def test_reduction_pipelines(factory, method):
    rng = np.random.default_rng(10)
    X = sp.random(200, 300, density=0.05, random_state=3, format="csr")
    y = np.where(X @ rng.normal(size=300) > 0, 1, -1)
    model = factory(k=20, random_state=0, eta=2**-4).fit(X, y)
    reduce, opauc = model.named_steps["reduce"], model.named_steps["opauc"]
    assert reduce.method == method and opauc.n_features_in_ == 20
    reduced = reduce.transform(X)
    np.testing.assert_allclose(model.decision_function(X), opauc.decision_function(reduced))
    assert model.score(X, y) == pytest.approx(opauc.score(reduced, y))
    reference = OPAUC(eta=2**-4, random_state=0).fit(reduced, y)
    np.testing.assert_array_equal(opauc.coef_, reference.coef_)
    # identity when d <= k
    small = factory(k=1000, random_state=0).fit(X[:, :30], y)
    assert small.named_steps["opauc"].n_features_in_ == 30


def test_random_feature_subset_and_sparse_projection():
    X = np.arange(60.0).reshape(3, 20)
    subset = RandomFeatureSubset(5, random_state=1).fit(X)
    assert len(set(subset.features_)) == 5
    np.testing.assert_array_equal(subset.transform(X), X[:, subset.features_])
    rp = make_opauc_rp(k=8, projection="sparse", random_state=0)
    assert (
        rp.fit(np.random.default_rng(0).normal(size=(40, 30)), np.arange(40) % 2)
        .named_steps["opauc"]
        .n_features_in_
        == 8
    )
    with pytest.raises(ValueError, match="projection"):
        make_opauc_rp(projection="cosine")


def test_full_dense_rows_held_back_chunking_resuming_and_tampering(tmp_path):
    """ "full" on dense rows holds 16 rows per class back from its scatter
    (``FullCovariance.pending_``): any chunking and a resume from a file or a pickle
    with rows held back give the model bit for bit; CSR rows (added at once) give it up
    to rounding; a scatter is not written until its class's 16th row; a file whose
    held-back rows were tampered with is refused, naming them."""
    X, y = make_stream(150, 12, seed=8, sparsity=0.3)
    params = dict(eta=0.05, lam=0.01)
    whole = OPAUC(**params).fit(X, y)
    for cuts in ([1, 2, 17, 18, 40, 90], list(range(7, 150, 7))):
        streamed = OPAUC(**params)
        for lo, hi in zip([0, *cuts], [*cuts, 150]):
            streamed.partial_fit(X[lo:hi], y[lo:hi], classes=[-1, 1])
        np.testing.assert_array_equal(streamed.coef_, whole.coef_)
    sparse = OPAUC(**params).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.coef_, whole.coef_, rtol=1e-10, atol=1e-12)
    first = OPAUC(**params).partial_fit(X[:61], y[:61], classes=[-1, 1])
    assert all(0 < s.n_pending_[0] for s in first.stats_)
    eager = OPAUC(**params).fit(sp.csr_matrix(X[:61]), y[:61])
    for held, added in zip(first.stats_, eager.stats_):  # P with its held-back rows
        np.testing.assert_allclose(held.scatter, added.scatter, rtol=1e-12, atol=1e-12)
    save_model(first, tmp_path / "model.npz")
    for resumed in (pickle.loads(pickle.dumps(first)), load_model(tmp_path / "model.npz")):
        resumed.partial_fit(X[61:], y[61:])
        np.testing.assert_array_equal(resumed.coef_, whole.coef_)
    # one class's rows, one at a time: its scatter changes at the 16th only
    model = OPAUC(**params).partial_fit(X[:3], y[:3], classes=[-1, 1])
    stats = model.stats_[1]
    for i in np.flatnonzero(y > 0)[3:40]:
        before, held = stats.scatter_.copy(), int(stats.n_pending_[0])
        model.learn_one(X[i], y[i])
        assert np.array_equal(stats.scatter_, before) == (held < 15)
        assert stats.n_pending_[0] == (held + 1) % 16
    # tampered files
    for member, value, match in [
        ("pending_", np.nan, "pending_"),
        ("n_pending_", 16, "n_pending_"),
        ("pending_weight_", -1.0, "pending_weight_"),
    ]:
        bad = pickle.loads(pickle.dumps(first))
        held = int(bad.stats_[0].n_pending_[0])
        if member == "pending_":
            bad.stats_[0].pending_[held - 1, 0] = value
        elif member == "n_pending_":
            bad.stats_[0].n_pending_[0] = value
        else:
            bad.stats_[0].pending_weight_[0] = value
        save_model(bad, tmp_path / "bad.npz")
        with pytest.raises(ValueError, match=match):
            load_model(tmp_path / "bad.npz")


@pytest.mark.parametrize("covariance", ["randomized", "hash"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("half_life", [None, 3.0])
def test_rebase_folds_the_implicit_form_to_rounding(covariance, dtype, half_life):
    """The linear sketches' re-basing (one compiled pass over the rows) gives v = w
    and the products of v with the sketches and sums as the matrix products do, to
    rounding (rtol 1e-12), and resets p, gamma and the scale."""
    rng = np.random.default_rng(5)
    X = sp.random(400, 30, density=0.3, random_state=5, format="csr")
    y = rng.integers(0, 2, 400)
    model = OPAUC(
        covariance=covariance, dtype=dtype, sketch_size=8, random_state=0, half_life=half_life
    )
    model._rebase_every = 0  # no re-basing while learning: p, gamma and the scale build up
    model.fit(X, y)
    assert np.abs(model.p_).max() > 0 and model.scale_[0] != 1.0
    w = model.scale_[0] * model._engine.implicit_sum(model)
    model._engine.rebase(model, full=False)
    scale = np.abs(w).max()
    np.testing.assert_allclose(model.v_, w, rtol=1e-12, atol=1e-14 * scale)
    for a, s in enumerate(model.stats_):
        Z = s.sketch_.astype(np.float64)
        expected = Z.T @ model.v_
        np.testing.assert_allclose(model.zv_[a], expected, rtol=1e-12, atol=1e-13 * scale)
        assert model.sv_[a] == pytest.approx(s.sum_ @ model.v_, rel=1e-12, abs=1e-13 * scale)
    assert not model.p_.any() and not model.gamma_.any() and model.scale_[0] == 1.0
    np.testing.assert_allclose(model.w_, w, rtol=1e-12, atol=1e-14 * scale)
