"""The O(d) learners and OAM on streams: prequential scores, example weights, merging.

Learners: Perceptron, PassiveAggressive, CostSensitivePA, ConfidenceWeighted,
UnivariateOnline, SOLAM, SOLAML1, FSAUC and OAM. References are brute force: a model
refitted on every prefix, a stream with repeated rows, the formulas of the updates.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import a9a_normalized, make_stream

from aucstream import (
    FSAUC,
    OAM,
    OPAUC,
    SOLAM,
    SOLAML1,
    ConfidenceWeighted,
    CostSensitivePA,
    PassiveAggressive,
    Perceptron,
    UnivariateOnline,
    roc_auc,
)

#: Constructor arguments that make the constraints and stage ends active on 40 rows.
LEARNERS = {
    "Perceptron": (Perceptron, {}),
    "PassiveAggressive": (PassiveAggressive, {"C": 0.5}),
    "CPA_ML": (CostSensitivePA, {"variant": "ml", "C": 0.5, "rho_pos": 4.0}),
    "ConfidenceWeighted": (ConfidenceWeighted, {"eta": 0.8}),
    "ConfidenceWeighted_avg": (ConfidenceWeighted, {"eta": 0.8, "average": True}),
    "UnivariateOnline": (UnivariateOnline, {"eta": 0.3, "lam": 0.1}),
    "SOLAM": (SOLAM, {"R": 0.5, "zeta": 2.0}),
    "SOLAML1": (SOLAML1, {"R": 0.5, "zeta": 2.0}),
    "FSAUC": (FSAUC, {"R": 0.5, "eta1": 1.0, "n_samples": 30}),
    "FSAUC_l2_open": (
        FSAUC,
        {"R": 0.5, "eta1": 1.0, "n_samples": 30, "constraint": "l2", "leftover": "last_stage"},
    ),
    "OAM": (OAM, {"C": 0.5, "buffer_size": 4, "random_state": 3}),
}
WEIGHTED = ["Perceptron", "PassiveAggressive", "CPA_ML", "UnivariateOnline", "SOLAM", "SOLAML1"]
WEIGHTED += ["FSAUC", "FSAUC_l2_open", "OAM"]


def make(name, **extra):
    cls, params = LEARNERS[name]
    return cls(**{**params, **extra})


def stream(n=40, d=5, seed=0, sparsity=0.4):
    X, y = make_stream(n, d, seed=seed, sparsity=sparsity)
    return X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12), y


# --------------------------------------------------------------- prequential scores
@pytest.mark.parametrize("name", sorted(LEARNERS))
@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_prequential_scores_equal_refits_on_every_prefix(name, layout):
    """Row i's score is the raw score of the model refitted on rows 0..i-1."""
    X, y = stream()
    data = X if layout == "dense" else sp.csr_matrix(X)
    scores = make(name).test_then_train(data, y, classes=[-1, 1])
    expected = [0.0]  # nothing learnt before the first row
    for i in range(1, len(y)):
        model = make(name).partial_fit(data[:i], y[:i], classes=[-1, 1])
        expected.append(model._raw_scores(data[i : i + 1])[0])
    np.testing.assert_allclose(scores, expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_prequential_scores_do_not_depend_on_the_chunks(name):
    X, y = stream(seed=1)
    whole = make(name).test_then_train(X, y, classes=[-1, 1])
    model = make(name)
    parts = [model.test_then_train(X[:7], y[:7], classes=[-1, 1])]
    parts += [model.test_then_train(X[lo : lo + 7], y[lo : lo + 7]) for lo in range(7, 40, 7)]
    np.testing.assert_array_equal(np.concatenate(parts), whole)
    np.testing.assert_array_equal(model.coef_, make(name).fit(X, y).coef_)


# ------------------------------------------------------------------- example weights
@pytest.mark.parametrize("name", WEIGHTED)
def test_zero_weights_are_scored_but_not_learnt(name):
    X, y = stream(seed=2)
    weights = np.where(np.arange(40) % 4 == 1, 0.0, 1.0)
    model = make(name)
    scores = model.test_then_train(X, y, classes=[-1, 1], sample_weight=weights)
    kept = weights > 0
    reference = make(name)
    expected = reference.test_then_train(X[kept], y[kept], classes=[-1, 1])
    np.testing.assert_allclose(scores[kept], expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(model.coef_, reference.coef_, rtol=1e-12, atol=1e-15)
    # a weight-0 row is scored by the model of all rows before it
    i = 5
    before = make(name).partial_fit(X[:i], y[:i], classes=[-1, 1], sample_weight=weights[:i])
    assert scores[i] == pytest.approx(before._raw_scores(X[i : i + 1])[0], rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("name", WEIGHTED)
def test_unit_weights_change_nothing(name):
    X, y = stream(seed=3)
    plain = make(name).fit(X, y)
    ones = make(name).fit(X, y, sample_weight=np.ones(40))
    np.testing.assert_array_equal(plain.coef_, ones.coef_)


@pytest.mark.parametrize("name", ["UnivariateOnline", "SOLAM", "FSAUC"])
def test_class_weight_totals_count_integer_weights_as_copies(name):
    """The class statistics (weight totals, FSAUC's class sums) of a weighted stream
    equal those of the stream with every row repeated weight times."""
    X, y = stream(seed=4)
    weights = np.arange(40) % 3 + 1
    weighted = make(name, **({"n_samples": 200} if name == "FSAUC" else {}))
    weighted.fit(X, y, sample_weight=weights.astype(float))
    repeated = make(name, **({"n_samples": 200} if name == "FSAUC" else {}))
    repeated.fit(np.repeat(X, weights, axis=0), np.repeat(y, weights))
    assert weighted.weight_pos_ == repeated.weight_pos_ == float(weights[y > 0].sum())
    assert weighted.weight_neg_ == repeated.weight_neg_ == float(weights[y < 0].sum())
    if name == "FSAUC":
        np.testing.assert_allclose(weighted.acc_pos_, repeated.acc_pos_, rtol=1e-12)
        np.testing.assert_allclose(weighted.acc_neg_, repeated.acc_neg_, rtol=1e-12)


def test_weighted_perceptron_and_pa_steps():
    X, y = stream(n=12, seed=5)
    weights = np.linspace(0.5, 3.0, 12)
    w_p = np.zeros(5)
    w_pa = np.zeros(5)
    for x, t, omega in zip(X, y, weights):
        if t * (w_p @ x) <= 0:
            w_p = w_p + omega * t * x
        loss = max(0.0, 1.0 - t * (w_pa @ x))
        if loss > 0:
            w_pa = w_pa + min(omega * 0.5, loss / (x @ x)) * t * x
    perceptron = Perceptron().fit(X, y, sample_weight=weights)
    pa = PassiveAggressive(C=0.5).fit(sp.csr_matrix(X), y, sample_weight=weights)
    np.testing.assert_allclose(perceptron.coef_[0], w_p, rtol=1e-12)
    np.testing.assert_allclose(pa.coef_[0], w_pa, rtol=1e-12)


@pytest.mark.parametrize("update", ["seq", "gra"])
def test_weighted_oam_steps_follow_their_definition(update):
    """Z11 Alg. 3 and 4 with the steps' C_t scaled by each example's weight, against a
    loop (buffers larger than the stream: every example stored, C_t = C)."""
    X, y = stream(n=30, seed=8)
    weights = np.linspace(0.2, 2.5, 30)
    weights[[4, 11]] = 0.0
    C = 0.5
    w, stored = np.zeros(5), {1: [], -1: []}
    for x, t, omega in zip(X, y, weights):
        if omega == 0:
            continue
        stored[t].append(x)
        if update == "seq":
            for xb in stored[-t]:
                d = x - xb
                loss = 1.0 - t * (w @ d)
                if loss > 0:
                    w = w + min(omega * C / 2, loss / (d @ d)) * t * d
        else:
            step = sum(x - xb for xb in stored[-t] if t * (w @ (x - xb)) <= 1.0)
            w = w + omega * C / 2 * t * step
    model = OAM(C=C, buffer_size=64, update=update, random_state=0)
    model.fit(X, y, sample_weight=weights)
    np.testing.assert_allclose(model.w_, w, rtol=1e-10)
    assert [b.n_seen for b in model.buffers_] == [len(stored[-1]), len(stored[1])]


def test_weighted_univariate_steps_follow_their_definition():
    """rho from weighted class totals, shrink (1 - eta lam)^omega, step scaled by omega."""
    X, y = stream(n=30, seed=6)
    weights = np.linspace(0.2, 2.5, 30)
    eta, lam = 0.3, 0.2
    w, b, totals = np.zeros(5), 0.0, {1: 0.0, -1: 0.0}
    for x, t, omega in zip(X, y, weights):
        totals[t] += omega
        rho = (totals[1] + totals[-1]) / (2.0 * totals[t])
        z = t * (w @ x + b)
        step = eta * omega * rho * (-1.0 / (1.0 + np.exp(z))) * t
        w = (1 - eta * lam) ** omega * w - step * x
        b -= step
    model = UnivariateOnline(eta=eta, lam=lam).fit(X, y, sample_weight=weights)
    np.testing.assert_allclose(model.coef_[0], w, rtol=1e-10)
    assert model.b_[0] == pytest.approx(b, rel=1e-10)


def test_weighted_solam_follows_its_definition():
    """p from weighted class totals; the primal-dual step omega gamma_t; gamma_t averaging."""
    from aucstream.solam import saddle_gradient

    X, y = stream(n=30, seed=7)
    weights = np.linspace(0.3, 2.0, 30)
    R, zeta = 2.0, 0.7
    w, a, b, alpha = np.zeros(5), 0.0, 0.0, 0.0
    total, gsum, w_pos, w_all = np.zeros(5), 0.0, 0.0, 0.0
    for t, (x, label, omega) in enumerate(zip(X, y, weights), start=1):
        w_all += omega
        w_pos += omega * (label > 0)
        gamma = zeta / np.sqrt(t)
        gw, ga, gb, galpha = saddle_gradient(w, a, b, alpha, x, label, w_pos / w_all)
        total, gsum = total + gamma * w, gsum + gamma
        w = w - omega * gamma * gw
        w *= min(1.0, R / np.linalg.norm(w))
        a = float(np.clip(a - omega * gamma * ga, -R, R))
        b = float(np.clip(b - omega * gamma * gb, -R, R))
        alpha = float(np.clip(alpha + omega * gamma * galpha, -2 * R, 2 * R))
    model = SOLAM(R=R, zeta=zeta, column_scale=None).fit(X, y, sample_weight=weights)
    np.testing.assert_allclose(model.coef_[0], total / gsum, rtol=1e-10)
    np.testing.assert_allclose(model._iterate()[0], w, rtol=1e-10)


def test_univariate_prior_weights_refuse_sample_weight_and_partial_fit():
    X, y = stream(seed=8)
    model = UnivariateOnline(weights="prior").fit(X, y)  # fit learns its own rows
    with pytest.raises(ValueError, match="prior"):
        model.partial_fit(X, y)
    with pytest.raises(ValueError, match="sample_weight"):
        UnivariateOnline(weights="prior").fit(X, y, sample_weight=np.ones(40))
    with pytest.raises(ValueError, match="prior"):
        UnivariateOnline(weights="prior").partial_fit(X, y)


# ---------------------------------------------------------------------------- merging
def _fit_shard(name, X, y, weights=None, **extra):
    return make(name, **extra).partial_fit(X, y, classes=[-1, 1], sample_weight=weights)


MERGEABLE = [n for n in sorted(LEARNERS) if n != "OAM"]


@pytest.mark.parametrize("name", MERGEABLE)
def test_merging_is_associative(name):
    X, y = stream(n=60, seed=9)
    extra = {"n_samples": 1000} if LEARNERS[name][0] is FSAUC else {}
    parts = [slice(0, 13), slice(13, 35), slice(35, 60)]

    def shards():
        return [_fit_shard(name, X[s], y[s], **extra) for s in parts]

    a, b, c = shards()
    left = a.merge(b).merge(c)
    a, b, c = shards()
    right = a.merge(b.merge(c))
    np.testing.assert_allclose(left.coef_, right.coef_, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(
        left.decision_function(X) + left._threshold(),
        right.decision_function(X) + right._threshold(),
        rtol=1e-10,
        atol=1e-12,
    )
    assert left.n_samples_seen_ == right.n_samples_seen_ == 60


@pytest.mark.parametrize("name", ["Perceptron", "UnivariateOnline", "SOLAM", "SOLAML1"])
def test_merged_weights_are_the_average_by_examples(name):
    X, y = stream(n=50, seed=10)
    first, second = _fit_shard(name, X[:20], y[:20]), _fit_shard(name, X[20:], y[20:])
    expected = (20 * first.coef_ + 30 * second.coef_) / 50
    merged = first.merge(second)
    np.testing.assert_allclose(merged.coef_, expected, rtol=1e-12, atol=1e-15)
    # the merged learner continues the stream from the sum of the counters
    merged.partial_fit(X[:5], y[:5])
    assert merged.n_samples_seen_ == 55


def test_merged_solam_continues_from_both_step_sums():
    X, y = stream(n=50, seed=11)
    first, second = _fit_shard("SOLAM", X[:20], y[:20]), _fit_shard("SOLAM", X[20:], y[20:])
    gsum = first.scalars_[2] + second.scalars_[2]
    merged = first.merge(second)
    assert merged.counts_[0] == 50 and merged.scalars_[2] == pytest.approx(gsum)
    w, a, b, alpha = merged._iterate()
    assert np.linalg.norm(w) <= 0.5 * (1 + 1e-12)  # still in the ball


def test_merged_confidence_weighted_covariance_is_the_average():
    X, y = stream(n=50, seed=12)
    first = _fit_shard("ConfidenceWeighted", X[:20], y[:20])
    second = _fit_shard("ConfidenceWeighted", X[20:], y[20:])
    expected = (20 * first.covariance_ + 30 * second.covariance_) / 50
    mu = (20 * first.mu_ + 30 * second.mu_) / 50
    merged = first.merge(second)
    np.testing.assert_allclose(merged.covariance_, expected, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(merged.mu_, mu, rtol=1e-12)


def test_fsauc_merges_only_at_the_same_stage_and_ends_a_full_stage():
    X, y = stream(n=400, seed=13)
    early = _fit_shard("FSAUC", X[:100], y[:100], n_samples=400)  # stage 1 of 2 (n0 = 200)
    late = _fit_shard("FSAUC", X[100:350], y[100:350], n_samples=400)  # stage 2 already
    assert (early.n_stages_, early.stage_length_) == (2, 200)
    before = early.coef_.copy()
    with pytest.raises(ValueError, match="different stages"):
        early.merge(late)
    np.testing.assert_array_equal(early.coef_, before)  # a refused merge changes nothing
    with pytest.raises(ValueError, match="schedules"):  # fit announced other lengths
        make("FSAUC", n_samples=None).fit(X[:100], y[:100]).merge(
            make("FSAUC", n_samples=None).fit(X[100:], y[100:])
        )
    first = _fit_shard("FSAUC", X[:120], y[:120], n_samples=400)
    second = _fit_shard("FSAUC", X[120:210], y[120:210], n_samples=400)
    stage_average = (120 * first.coef_ + 90 * second.coef_) / 210
    merged = first.merge(second)  # 210 >= n0 examples in stage 1: it ends
    state = merged._stage_state()
    assert state["stage"] == 2 and state["in_stage"] == 0
    np.testing.assert_allclose(state["v1"], stage_average[0], rtol=1e-10, atol=1e-14)
    merged.partial_fit(X[210:], y[210:])  # and the stream goes on in stage 2
    assert merged._stage_state()["in_stage"] == 190


def test_oam_merge_averages_w_and_keeps_uniform_buffers():
    X, y = stream(n=60, seed=14)
    first = _fit_shard("OAM", X[:25], y[:25])
    second = _fit_shard("OAM", X[25:], y[25:], random_state=4)
    expected = (25 * first.w_ + 35 * second.w_) / 60
    merged = first.merge(second)
    np.testing.assert_allclose(merged.w_, expected, rtol=1e-12)
    for label, buffer in zip((-1, 1), merged.buffers_):
        assert buffer.n_seen == int(np.sum(y == label))
        assert buffer.size == min(4, buffer.n_seen)
        rows = {tuple(r) for r in X[y == label]}
        assert all(tuple(r) in rows for r in buffer.buffer)  # stored rows of that class


# --------------------------------------------------------- one-shot averaging on a9a
@pytest.mark.slow
@pytest.mark.parametrize(
    "cls, params",
    [
        (SOLAM, {"R": 10.0, "zeta": 16.0, "column_scale": None}),
        (UnivariateOnline, {"loss": "log", "eta": 2.0**-3}),
    ],
)
def test_averaging_four_shards_on_a9a_is_as_good_as_one_pass(cls, params):
    """Four learners on four shards, merged once: the test AUC of one pass (0.005).

    The steps are the best of the papers' grids for one pass over the normalized rows
    (for UnivariateOnline, 2^-3 of 2^[-7:-1] by twos; a too small step leaves the
    shards' iterates short of convergence, and averaging does not make that up).
    """
    X, y, Xt, yt = a9a_normalized()
    order = np.random.default_rng(0).permutation(X.shape[0])
    X, y = X[order], y[order]
    one_pass = roc_auc(yt, cls(**params).fit(X, y).decision_function(Xt))
    bounds = np.linspace(0, X.shape[0], 5).astype(int)
    shards = [cls(**params).fit(X[lo:hi], y[lo:hi]) for lo, hi in zip(bounds[:-1], bounds[1:])]
    merged = shards[0]
    for shard in shards[1:]:
        merged.merge(shard)
    averaged = roc_auc(yt, merged.decision_function(Xt))
    assert abs(averaged - one_pass) < 0.005, (one_pass, averaged)


@pytest.mark.parametrize(
    "factory",
    [
        lambda: SOLAM(R=10.0, zeta=4.0),
        lambda: SOLAML1(R=1.0, zeta=2.0),
        lambda: FSAUC(R=1.0, eta1=2.0**-4, n_samples=150),
        lambda: FSAUC(R=1.0, n_samples=100, leftover="last_stage"),
        lambda: UnivariateOnline(eta=0.3),
        lambda: OPAUC(eta=0.05),
        lambda: OPAUC(eta=0.05, covariance="sparse", sketch_size=1),
        lambda: OPAUC(eta=0.05, covariance="fd", sketch_size=2, random_state=0),
        lambda: OPAUC(eta=0.05, covariance="hash", sketch_size=3, random_state=0),
    ],
    ids=[
        "SOLAM",
        "SOLAML1",
        "FSAUC-drop",
        "FSAUC-last-stage",
        "UnivariateOnline",
        "OPAUC-full",
        "OPAUC-sparse",
        "OPAUC-fd",
        "OPAUC-hash",
    ],
)
def test_a_kernel_that_calibrates_fits_what_the_base_class_would(factory):
    """``_tags.kernel_calibrates``: the calibration fitted inside the kernel, per example as
    it scores (dropped and weight-0 examples included; rows that OPAUC's kernel resumes
    after a summary reserved room, or after a frequent-directions shrink, once), is bit
    for bit the one :func:`aucstream._calibration.update` fits on the prequential
    scores afterwards."""
    from aucstream import _calibration

    X, y = make_stream(200, 6, seed=3, sparsity=0.5)
    rng = np.random.default_rng(1)
    weights = rng.choice([0.0, 0.5, 1.0, 2.0], size=200)
    weights[[0, 1, 40]] = 1.0
    model = factory()
    if not model._tags.sample_weight:
        weights[:] = 1.0
    assert model._tags.kernel_calibrates
    expected = _calibration.new_state()
    y_pm = np.where(y == 1, 1.0, -1.0)
    for lo, hi in ((0, 1), (1, 40), (40, 41), (41, 200)):
        rows = sp.csr_matrix(X[lo:hi]) if lo % 2 else X[lo:hi]
        given = weights[lo:hi] if model._tags.sample_weight else None
        scores = model.test_then_train(rows, y[lo:hi], classes=[-1, 1], sample_weight=given)
        _calibration.update(expected, scores, y_pm[lo:hi], weights[lo:hi])
        assert np.array_equal(model.calibration_, expected)
    assert _calibration.is_ready(model.calibration_)


def test_rows_opauc_resumes_are_calibrated_once(monkeypatch):
    """OPAUC's sparse summaries stop the kernel at a row they have no room for and it
    resumes there after ``reserve``: that row's score fits the calibration once."""
    from aucstream import _calibration, opauc

    resumed = []
    run = opauc.run_reserving

    def counting(step, summaries, chunk):
        return run(lambda r: resumed.append(r) or step(r), summaries, chunk)

    monkeypatch.setattr(opauc, "run_reserving", counting)
    X, y = make_stream(200, 20, seed=3, sparsity=0.3)
    model = OPAUC(eta=0.05, covariance="sparse", sketch_size=2)
    model.partial_fit(X[:50], y[:50], classes=[-1, 1])
    for summary in model.stats_:  # no spare room: the next examples need reserve
        summary._resize(summary.nnz)
    expected = model.calibration_.copy()
    resumed.clear()
    scores = model.test_then_train(X[50:], y[50:])
    assert any(r > 0 for r in resumed)
    _calibration.update(expected, scores, np.where(y[50:] == 1, 1.0, -1.0), np.empty(0))
    assert np.array_equal(model.calibration_, expected)


@pytest.mark.parametrize(
    "params",
    [
        {"half_life": 30, "buffer_size": 10},
        {"update": "gra", "buffer_size": 8},
        {"buffer_size": None},
        {"buffer_size": None, "half_life": 40},
    ],
)
def test_oam_examples_of_weight_0_are_inert_in_every_buffer(params):
    """Biased, unbounded and Alg. 4 buffers too: no step, no offer, no draw, no tick."""
    from aucstream.checks import check_zero_weight_rows_change_nothing

    check_zero_weight_rows_change_nothing(OAM(random_state=0, **params))
