"""Forgetting (``half_life``) in the O(d) online learners: SOLAM, SOLAM-l1,
UnivariateOnline, Perceptron, PassiveAggressive and CostSensitivePA.

Each learner's forgetting is checked against an eager reference written from its
docstring's equation (the kernels keep the decays lazy: scales, inflated sums), the
whole battery (chunking, resume, save/load bit for bit, dense = sparse, merge) runs
with ``half_life`` set, and on a stream whose concept flips, forgetting must recover
where the paper's algorithm does not.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from aucstream import (
    FSAUC,
    SOLAM,
    SOLAML1,
    CostSensitivePA,
    PassiveAggressive,
    Perceptron,
    UnivariateOnline,
    load_model,
    save_model,
)
from aucstream._params import decay_per_example
from aucstream._saddle import saddle_grad_scalars
from aucstream.checks import check_estimator
from aucstream.metrics import roc_auc

pytestmark = pytest.mark.filterwarnings("ignore:the stream is longer than the announced")

LEARNERS = [
    FSAUC(R=10.0, n_samples=120, leftover="last_stage"),
    FSAUC(R=2.0, n_samples=120, leftover="last_stage", accumulators="per_stage"),
    SOLAM(R=10.0),
    SOLAML1(R=2.0),
    UnivariateOnline(),
    Perceptron(),
    PassiveAggressive(),
    CostSensitivePA(variant="ml"),
]


def stream(n=400, d=6, seed=0, sparsity=0.4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random(X.shape) < sparsity] = 0.0
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    y = np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0, 1, -1)
    return X, y, rng.uniform(0.0, 2.0, size=n)


def run(model, X, y, weights=None, chunk=97):
    for lo in range(0, X.shape[0], chunk):
        sw = None if weights is None else weights[lo : lo + chunk]
        model.partial_fit(X[lo : lo + chunk], y[lo : lo + chunk], classes=[-1, 1], sample_weight=sw)
    return model


# ------------------------------------------------------------------ eager references
def ref_linear(X, y, weights, h, mode, C=1.0):
    """Perceptron / PA-I with w <- gamma^omega w before each example's rule."""
    lam = decay_per_example(h)
    w = np.zeros(X.shape[1])
    for x, t, om in zip(X, y, weights):
        if om == 0:
            continue
        w = lam**om * w
        m = t * (w @ x)
        if mode == "perceptron":
            if m <= 0:
                w = w + om * t * x
        elif 1 - m > 0 and x @ x > 0:
            w = w + min(om * C, (1 - m) / (x @ x)) * t * x
    return w


def ref_univariate(X, y, weights, h, eta=2**-6):
    """Uni-Log with running class weights from decayed totals (module docstring)."""
    lam = decay_per_example(h)
    w, b, tot = np.zeros(X.shape[1]), 0.0, np.zeros(2)
    for x, t, om in zip(X, y, weights):
        if om == 0:
            continue
        s = w @ x + b
        c = int(t > 0)
        tot = np.where(tot > 0, tot * lam**om, 0.0)
        tot[c] += om
        rho = tot.sum() / (2 * tot[c])
        step = eta * om * rho * (-1.0 / (1.0 + math.exp(t * s))) * t
        w = w - step * x
        b -= step
    return w, b, tot


def ref_solam(X, y, weights, h, R=10.0, zeta=1.0):
    """Y16 Alg. 1 (l2, average "pre") with the forgetting of the SOLAM docstring
    (``h`` a half-life or None, or one per example)."""
    hs = h if isinstance(h, list) else [h] * len(y)
    w, a, b, al = np.zeros(X.shape[1]), 0.0, 0.0, 0.0
    S, G, tot, t = np.zeros(X.shape[1]), 0.0, np.zeros(2), 0
    for x, yy, om, h in zip(X, y, weights, hs):
        if om == 0:
            continue
        f = decay_per_example(h) ** om
        tot = np.where(tot > 0, tot * f, 0.0)
        tot[int(yy > 0)] += om
        t += 1
        p = tot[1] / tot.sum()
        gamma = zeta / math.sqrt(t if h is None else min(t, h))
        g, ga, gb, gal = saddle_grad_scalars(w @ x, yy, p, a, b, al)
        S, G = f * S + gamma * w, f * G + gamma
        step = om * gamma
        w = w - step * g * x
        a = float(np.clip(a - step * ga, -R, R))
        b = float(np.clip(b - step * gb, -R, R))
        al = float(np.clip(al + step * gal, -2 * R, 2 * R))
        norm = np.linalg.norm(w)
        if norm > R:
            w *= R / norm
    return S / G, tot


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_linear_learners_match_eager_reference(weighted, sparse):
    X, y, om = stream()
    om = om if weighted else np.ones(len(y))
    Xk = sp.csr_matrix(X) if sparse else X
    for model, mode in (
        (Perceptron(half_life=30), "perceptron"),
        (PassiveAggressive(half_life=30), "pa"),
    ):
        run(model, Xk, y, om if weighted else None)
        np.testing.assert_allclose(
            model.coef_.ravel(), ref_linear(X, y, om, 30, mode), rtol=1e-12, atol=1e-13
        )


def test_linear_scale_folds_and_stays_exact():
    """A half-life of 2 examples takes the scale below 1e-9 within a few dozen
    examples: folds happen and the model still equals the reference."""
    X, y, om = stream(n=300)
    model = run(Perceptron(half_life=2.0), X, y)
    assert 1e-9 <= model.scale_[0] <= 1.0
    np.testing.assert_allclose(
        model.coef_.ravel(),
        ref_linear(X, y, np.ones(300), 2.0, "perceptron"),
        rtol=1e-12,
        atol=1e-15,
    )


@pytest.mark.parametrize("weighted", [False, True])
def test_univariate_decayed_totals_match_reference(weighted):
    X, y, om = stream()
    om = om if weighted else np.ones(len(y))
    model = run(UnivariateOnline(half_life=25), sp.csr_matrix(X), y, om if weighted else None)
    w, b, tot = ref_univariate(X, y, om, 25)
    np.testing.assert_allclose([model.weight_neg_, model.weight_pos_], tot, rtol=1e-12)
    np.testing.assert_allclose(model.coef_.ravel(), w, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(model.b_[0], b, rtol=1e-11, atol=1e-13)
    # without forgetting the totals are the plain sums of the weights
    plain = run(UnivariateOnline(), X, y, om if weighted else None)
    np.testing.assert_allclose(
        [plain.weight_neg_, plain.weight_pos_], [om[y < 0].sum(), om[y > 0].sum()], rtol=1e-12
    )


@pytest.mark.parametrize("h", [40.0, 2.0])
@pytest.mark.parametrize("weighted", [False, True])
def test_solam_matches_eager_reference(h, weighted):
    """h = 2 inflates the running sums past 2^512 after about a thousand examples:
    the deflation at the fold is exercised too."""
    X, y, om = stream(n=1500)
    om = om if weighted else np.ones(len(y))
    for Xk in (X, sp.csr_matrix(X)):
        model = run(
            SOLAM(R=10.0, half_life=h, column_scale=None),
            Xk,
            y,
            om if weighted else None,
            chunk=211,
        )
        wbar, tot = ref_solam(X, y, om, h)
        np.testing.assert_allclose(model.coef_.ravel(), wbar, rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose([model.weight_neg_, model.weight_pos_], tot, rtol=1e-12)
    if h == 2.0:
        assert model.forget_scale_[0] < 2.0**512 < 2.0 ** (len(y) / h)


def ref_fsauc_one_stage(X, y, weights, h, R=10.0, eta=0.5):
    """L18's PDSG, one open stage (FSAUC without n_samples), l2 ball, with the
    forgetting of the FSAUC docstring: decayed totals and class sums, decayed average
    (``h`` a half-life or None, or one per example)."""
    hs = h if isinstance(h, list) else [h] * len(y)
    d = X.shape[1]
    r = 2.0 * math.sqrt(3.0) * R
    D = 2.0 * math.sqrt(2.0) * r
    w, a, b, al = np.zeros(d), 0.0, 0.0, 0.0
    S, G, tot, acc = np.zeros(d + 2), 0.0, np.zeros(2), np.zeros((2, d))
    for x, yy, om, h in zip(X, y, weights, hs):
        if om == 0:
            continue
        f = decay_per_example(h) ** om
        tot = np.where(tot > 0, tot * f, 0.0)
        acc *= f
        c = int(yy > 0)
        tot[c] += om
        acc[c] += om * x
        p = tot[1] / tot.sum()
        g, ga, gb, gal = saddle_grad_scalars(w @ x, yy, p, a, b, al)
        step = om * eta
        w = w - step * g * x
        norm = np.linalg.norm(w)
        if norm > R:
            w *= R / norm
        a = float(np.clip(a - step * ga, -R, R))
        b = float(np.clip(b - step * gb, -R, R))
        v = np.r_[w, a, b]
        dist = np.linalg.norm(v)
        if dist > r:
            v *= r / dist
        w, a, b = v[:d], v[d], v[d + 1]
        al = float(np.clip(al + step * gal, max(-2 * R, -D), min(2 * R, D)))
        S, G = f * S + v, f * G + 1.0
    return S[:d] / G, tot, acc


@pytest.mark.parametrize("weighted", [False, True])
def test_fsauc_matches_eager_reference(weighted):
    X, y, om = stream(n=900)
    om = om if weighted else np.ones(len(y))
    for h in (30.0, 1.5):  # 1.5: the sums inflate past 2^512 and are deflated
        for Xk in (X, sp.csr_matrix(X)):
            model = FSAUC(R=10.0, eta1=0.5, constraint="l2", half_life=h, column_scale=None)
            with pytest.warns(UserWarning, match="n_samples"):
                run(model, Xk, y, om if weighted else None, chunk=173)
            wbar, tot, acc = ref_fsauc_one_stage(X, y, om, h)
            np.testing.assert_allclose(model.coef_.ravel(), wbar, rtol=1e-9, atol=1e-11)
            np.testing.assert_allclose([model.weight_neg_, model.weight_pos_], tot, rtol=1e-12)
            phi = model.forget_[0]
            np.testing.assert_allclose(model.acc_neg_ / phi, acc[0], rtol=1e-10, atol=1e-14)
            np.testing.assert_allclose(model.acc_pos_ / phi, acc[1], rtol=1e-10, atol=1e-14)


@pytest.mark.filterwarnings("ignore:FSAUC needs the stream length")
@pytest.mark.parametrize("first,then", [(20.0, None), (None, 20.0)])
def test_half_life_changed_mid_stream(first, then):
    """set_params(half_life=...) between calls: the learner continues from its state
    with the new rule (the inflated sums stay consistent either way)."""
    X, y, om = stream(n=700)
    hs = [first] * 350 + [then] * 350
    solam = run(SOLAM(R=10.0, half_life=first, column_scale=None), X[:350], y[:350], om[:350])
    run(solam.set_params(half_life=then), X[350:], y[350:], om[350:])
    np.testing.assert_allclose(
        solam.coef_.ravel(), ref_solam(X, y, om, hs)[0], rtol=1e-9, atol=1e-11
    )
    fsauc = run(
        FSAUC(R=10.0, eta1=0.5, constraint="l2", half_life=first, column_scale=None),
        X[:350],
        y[:350],
        om[:350],
    )
    run(fsauc.set_params(half_life=then), X[350:], y[350:], om[350:])
    np.testing.assert_allclose(
        fsauc.coef_.ravel(), ref_fsauc_one_stage(X, y, om, hs)[0], rtol=1e-9, atol=1e-11
    )


def test_fsauc_stage_constants_stop_shrinking_at_half_life():
    X, y, _ = stream(n=2000)
    plain = FSAUC(R=10.0, n_samples=2000).fit(X, y)
    forgetting = FSAUC(R=10.0, n_samples=2000, half_life=300.0).fit(X, y)
    m, n0 = plain.n_stages_, plain.stage_length_
    assert m >= 2 and n0 >= 300  # the first stage holds example 300
    start = FSAUC(R=10.0, n_samples=2000).partial_fit(X[:1], y[:1], classes=[-1, 1])
    kept = start._stage_state()
    for key in ("eta", "radius"):
        assert forgetting._stage_state()[key] == kept[key]
        assert plain._stage_state()[key] < kept[key]


@pytest.mark.parametrize("model", LEARNERS, ids=lambda m: type(m).__name__)
def test_battery_with_forgetting(model):
    """Chunking, resume (pickle and save_model), dense = sparse, merge, one-row calls,
    bad input: the whole battery, with a short half-life."""
    check_estimator(model.set_params(half_life=7.0), sklearn_checks=False)


@pytest.mark.parametrize("model", LEARNERS, ids=lambda m: type(m).__name__)
def test_none_is_no_forgetting_and_save_load_resume(model, tmp_path):
    X, y, om = stream(n=300)
    a = run(model.set_params(half_life=None), X, y, om)
    if hasattr(a, "scale_"):
        assert a.scale_[0] == 1.0
    if hasattr(a, "forget_scale_"):
        assert a.forget_scale_[0] == 1.0
    one = run(type(model)(**{**model.get_params(), "half_life": 11.0}), X, y, om)
    half = run(type(model)(**{**model.get_params(), "half_life": 11.0}), X[:150], y[:150], om[:150])
    save_model(half, tmp_path / "m")
    resumed = run(load_model(tmp_path / "m"), X[150:], y[150:], om[150:])
    assert np.array_equal(one.coef_, resumed.coef_)
    assert not np.array_equal(one.coef_, a.coef_)


def test_old_files_load_without_forgetting_state():
    """A model file written before forgetting (tests/fixtures) gets the new state's
    fresh value and continues as before."""
    from pathlib import Path

    models = Path(__file__).parent / "fixtures" / "models"
    for name, attr in (
        ("SOLAM", "forget_scale_"),
        ("Perceptron", "scale_"),
        ("PassiveAggressive", "scale_"),
    ):
        model = load_model(models / f"{name}.npz")
        assert getattr(model, attr)[0] == 1.0 and model.half_life is None
    fsauc = load_model(models / "FSAUC.npz")  # the stage's weight: its examples
    assert fsauc.forget_.tolist() == [1.0, float(fsauc.counts_[2])]
    assert fsauc.counts_[2] > 0


def test_bad_half_life_refused_before_any_change():
    X, y, _ = stream(n=50)
    for bad in (0, -1.0, float("nan"), float("inf"), True):
        model = Perceptron().partial_fit(X, y, classes=[-1, 1])
        model.set_params(half_life=bad)
        with pytest.raises(ValueError, match="half_life"):
            model.partial_fit(X, y)
        assert np.array_equal(model.coef_, Perceptron().partial_fit(X, y, classes=[-1, 1]).coef_)


# --------------------------------------------------------------------- abrupt drift
def flipped_stream(n_per=4000, d=10, seed=3):
    """Two concepts: w, then -w (unit rows, 30% positives)."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    X = rng.normal(size=(2 * n_per, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    score = X @ w
    score[n_per:] *= -1
    score += 0.1 * rng.normal(size=2 * n_per)
    y = np.where(score > np.quantile(score, 0.7), 1, -1)
    return X, y, n_per


@pytest.mark.parametrize("flip", [True, False], ids=["w flipped", "features swapped"])
@pytest.mark.parametrize(
    "make",
    [
        lambda h: SOLAM(R=10.0, half_life=h),
        lambda h: FSAUC(R=10.0, eta1=0.5, half_life=h),  # a stream: one open stage
    ],
    ids=["SOLAM", "FSAUC"],
)
@pytest.mark.filterwarnings("ignore:FSAUC needs the stream length")
def test_forgetting_recovers_after_abrupt_drift(make, flip):
    """Prequential AUC over the 2000 rows from 1000 after the change: with a
    half-life the learner recovers; Y16's SOLAM (step ~ 1/sqrt(t), average of every
    iterate) and FSAUC's open stage (the average of every iterate) do not.
    (Perceptron and PA need no such test: every example after a flip is a mistake
    and their steps do not decay, so they recover without forgetting.)"""
    X, y, n_per = flipped_stream()
    if not flip:  # the second concept on other features than the first
        X[n_per:] = np.roll(X[n_per:], 5, axis=1)
    window = slice(n_per + 1000, n_per + 3000)
    aucs = {}
    for h in (None, 300.0):
        scores = make(h).test_then_train(X, y, classes=[-1, 1])
        aucs[h] = roc_auc(y[window], scores[window])
    assert aucs[300.0] > 0.95, aucs
    assert aucs[300.0] > aucs[None] + 0.3, aucs
