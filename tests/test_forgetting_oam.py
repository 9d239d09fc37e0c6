"""Forgetting (``half_life``) in OAM (biased reservoirs) and AdaOAM / SAdaOAM (decayed
squared gradients and class statistics): the retention law, exact references, the
invariants of the battery with half_life set, and a drift that forgetting must win."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import chisquare

from aucstream import OAM, load_model, roc_auc, save_model
from aucstream.adaoam import AdaOAM, SAdaOAM
from aucstream.checks import yield_checks
from aucstream.reservoir import BiasedReservoir


# ------------------------------------------------------------------ biased reservoir
def _age_histogram(ages, h, n_bins):
    """Counts of ages in bins of width h/2, and the geometric law's probabilities
    P(a) = (1 - gamma) gamma^a of those bins (the last one open)."""
    gamma = 2.0 ** (-1.0 / h)
    edges = np.arange(n_bins + 1) * (h / 2)
    edges[-1] = np.inf
    counts = np.histogram(ages, bins=edges)[0]
    # P(a >= e) = gamma^ceil(e) for integer ages
    tail = gamma ** np.ceil(edges[:-1])
    probs = tail - np.append(tail[1:], 0.0)
    return counts, probs


@pytest.mark.parametrize("capacity", [30, 400])
def test_biased_reservoir_keeps_ages_with_the_half_life_law(capacity):
    """Ages of the stored examples follow P(a) ~ 2^(-a/h) (chi-square): subsampled
    (capacity 30 < about 72 alive) and whole (every alive example fits)."""
    h, every, snapshots = 50.0, 400, 300
    rng = np.random.default_rng(7)
    r = BiasedReservoir(1, capacity, half_life=h)
    ages = []
    t = 0
    for _ in range(snapshots):
        r.offer(np.arange(t, t + every, dtype=float).reshape(-1, 1), rng)
        t += every
        ages.append(t - 1 - r.buffer[:, 0])
        assert r.size <= capacity
    ages = np.concatenate(ages)
    counts, probs = _age_histogram(ages, h, 8)
    assert chisquare(counts, probs * counts.sum()).pvalue > 1e-3
    # half as many examples of age [h, 2h) as of age [0, h)
    young, old = np.sum(ages < h), np.sum((ages >= h) & (ages < 2 * h))
    assert 0.42 < old / young < 0.58
    full = min(capacity, 1 / (1 - 2 ** (-1 / h)))  # about 72 alive examples
    assert 0.7 * full < len(ages) / snapshots < 1.15 * full


def test_uniform_reservoir_keeps_old_examples_unlike_the_biased_one():
    """The failing control: Algorithm R's ages are uniform over the stream."""
    rng = np.random.default_rng(0)
    X = np.arange(5000, dtype=float).reshape(-1, 1)
    biased = BiasedReservoir(1, 40, half_life=100.0).offer(X, rng)
    assert np.median(4999 - biased.buffer[:, 0]) < 200
    from aucstream.reservoir import Reservoir

    uniform = Reservoir(1, 40).offer(X, rng)
    assert np.median(4999 - uniform.buffer[:, 0]) > 1000


def test_oam_buffers_age_on_the_stream_clock_of_both_classes():
    """A class of share 0.2: its buffered examples' ages, counted in examples of the
    whole stream, still follow 2^(-a/h) (not in arrivals of the class)."""
    h, n, chunk = 40.0, 60_000, 500
    rng = np.random.default_rng(3)
    t = np.arange(n, dtype=float)
    y = np.where(rng.random(n) < 0.2, 1, -1)
    X = np.column_stack([t, np.zeros(n)])
    model = OAM(C=1e-12, buffer_size=20, half_life=h, random_state=0)
    ages = []
    for lo in range(0, n, chunk):
        model.partial_fit(X[lo : lo + chunk], y[lo : lo + chunk], classes=[-1, 1])
        if lo >= 4 * chunk:
            ages.append(lo + chunk - 1 - model.buffers_[1].buffer[:, 0])
    ages = np.concatenate(ages)
    counts, probs = _age_histogram(ages, h, 8)
    assert chisquare(counts, probs * counts.sum()).pvalue > 1e-3


def test_biased_reservoir_state_is_checked_and_refuses_to_merge():
    rng = np.random.default_rng(0)
    r = BiasedReservoir(2, 5, half_life=3.0).offer(rng.normal(size=(50, 2)), rng)
    r._check_state()
    with pytest.raises(NotImplementedError, match="do not merge"):
        r.merge(BiasedReservoir(2, 5, half_life=3.0), rng)
    r.expiry_[0] = r.forget_[0]  # a stored example already dead
    with pytest.raises(ValueError, match="expiry_"):
        r._check_state()
    with pytest.raises(ValueError, match="half_life"):
        BiasedReservoir(2, 5, half_life=float("nan"))


# ------------------------------------------------------------ AdaOAM: exact reference
def _reference(X, y, h, eta, lam, delta, theta=None, weights=None):
    """AdaOAM (theta None, Euclidean projection) or SAdaOAM (l1 step, no projection)
    with forgetting, straight from the module docstring: every example of weight > 0
    first decays both classes' W, s, P and the squared-gradient sums' clock by gamma."""
    gamma = 2.0 ** (-1.0 / h)
    n, d = X.shape
    W, S, P = np.zeros(2), np.zeros((2, d)), np.zeros((2, d, d))
    w, s = np.zeros(d), np.zeros(d)
    for x, label, omega in zip(X, y, np.ones(n) if weights is None else weights):
        if omega == 0:
            continue
        W, S, P = gamma * W, gamma * S, gamma * P
        c = int(label > 0)
        W[c] += omega
        S[c] += omega * x
        P[c] += omega * np.outer(x, x)
        o = 1 - c
        if W[o] == 0:
            continue
        mean = S[o] / W[o]
        cov = P[o] / W[o] - np.outer(mean, mean)
        alpha = (x - mean) @ w - label
        g = omega * (lam * w + cov @ w + alpha * (x - mean))
        s = gamma * s + g * g
        hh = delta + np.sqrt(s)
        u = w - eta * g / hh
        if theta is None:
            norm = np.linalg.norm(u)
            if lam > 0 and norm > 1 / np.sqrt(lam):
                u *= 1 / np.sqrt(lam) / norm
            w = u
        else:
            w = np.sign(u) * np.maximum(0.0, np.abs(u) - eta * theta / hh)
    return w, s, W, S, P


def _stream(n, d, seed, sparse_cols=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if sparse_cols:
        X[rng.random((n, d)) < 0.5] = 0.0
        X[:, -1] = 0.0  # a feature never seen
    y = np.where(X @ np.linspace(1, -1, d) + 0.3 * rng.normal(size=n) > 0, 1, -1)
    return X, y


@pytest.mark.parametrize("h", [0.02, 3.0, 40.0])  # 0.02: the clocks pass 32 at each example
def test_adaoam_follows_the_decayed_reference(h):
    # 400 examples at h = 3 wrap the class clocks (32 per wrap) four times
    X, y = _stream(400, 4, 0)
    weights = np.random.default_rng(1).choice([0.0, 0.5, 1.0, 2.0], size=400)
    model = AdaOAM(eta=0.1, lam=0.05, projection="euclidean", half_life=h, column_scale=None)
    model.partial_fit(X, y, classes=[-1, 1], sample_weight=weights)
    w, s, W, S, P = _reference(X, y, h, 0.1, 0.05, 1e-8, weights=weights)
    np.testing.assert_allclose(model.coef_.ravel(), w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.sq_grad_sum_, s, rtol=1e-9, atol=1e-14)
    for c, summary in enumerate(model.stats_):
        scale = 2.0 ** model.class_clocks_[c]  # stored = 2^E_c x decayed
        np.testing.assert_allclose(summary.weight_[0] / scale, W[c], rtol=1e-10)
        np.testing.assert_allclose(summary.mean, S[c] / W[c], rtol=1e-9, atol=1e-12)
        cov = P[c] / W[c] - np.outer(S[c], S[c]) / W[c] ** 2
        np.testing.assert_allclose(summary.covariance, cov, rtol=1e-8, atol=1e-10)
    if h == 3.0:
        assert 0 <= model.class_clocks_.max() < 32 and model.n_samples_seen_ / h > 64


def test_a_class_absent_for_hundreds_of_half_lives_stays_exact():
    """300 negatives in a row at half_life=1: the positives' stored weight falls under
    the negligible weight (no more rescaling); their statistics, and the model when
    positives come back, still follow the reference."""
    X, _ = _stream(400, 3, 10)
    y = np.array([1, -1] * 20 + [-1] * 300 + [1, -1] * 30)
    model = AdaOAM(eta=0.1, lam=0.05, projection="euclidean", half_life=1.0, column_scale=None)
    model.partial_fit(X[:340], y[:340], classes=[-1, 1])
    assert 0 < model.stats_[1].weight_[0] < 2.0**-224  # frozen, not zero
    *_, W, S, P = _reference(X[:340], y[:340], 1.0, 0.1, 0.05, 1e-8)
    np.testing.assert_allclose(model.stats_[1].mean, S[1] / W[1], rtol=1e-9)
    model.partial_fit(X[340:], y[340:])
    w, s, *_ = _reference(X, y, 1.0, 0.1, 0.05, 1e-8)
    np.testing.assert_allclose(model.coef_.ravel(), w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.sq_grad_sum_, s, rtol=1e-9, atol=1e-14)


@pytest.mark.parametrize("lazy", [True, False])
@pytest.mark.parametrize("lam", [0.0, 0.05])
def test_sadaoam_follows_the_decayed_reference(lazy, lam):
    X, y = _stream(300, 6, 2, sparse_cols=True)
    model = SAdaOAM(eta=0.1, lam=lam, theta=0.01, lazy=lazy, half_life=5.0, column_scale=None)
    model.partial_fit(sp.csr_matrix(X), y, classes=[-1, 1])
    w, s, *_ = _reference(X, y, 5.0, 0.1, lam, 1e-8, theta=0.01)
    np.testing.assert_allclose(model.coef_.ravel(), w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.sq_grad_sum_, s, rtol=1e-9, atol=1e-14)


def test_without_half_life_nothing_decays():
    """The failing control: half_life=None is AdaGrad's undecayed sum."""
    X, y = _stream(200, 3, 4)
    model = AdaOAM(eta=0.1, lam=0.05, projection="euclidean", column_scale=None).fit(X, y)
    w, s, *_ = _reference(X, y, np.inf, 0.1, 0.05, 1e-8)
    np.testing.assert_allclose(model.sq_grad_sum_, s, rtol=1e-9)
    assert not np.allclose(_reference(X, y, 10.0, 0.1, 0.05, 1e-8)[1], s, rtol=1e-3)
    assert np.array_equal(model.class_clocks_, [0.0, 0.0])


@pytest.mark.parametrize("cls", [AdaOAM, SAdaOAM])
def test_merge_takes_both_learners_statistics_at_their_own_ends(cls):
    """Merged class statistics: each learner's examples aged from its own end (two
    shards learnt at the same time), added; the sums of squared gradients add."""
    X, y = _stream(300, 3, 5)
    h = 4.0  # 150 examples wrap the clocks of each shard
    a = cls(half_life=h).partial_fit(X[:150], y[:150], classes=[-1, 1])
    b = cls(half_life=h).partial_fit(X[150:290], y[150:290], classes=[-1, 1])
    sums = a.sq_grad_sum_ + b.sq_grad_sum_
    *_, Wa, Sa, Pa = _reference(X[:150], y[:150], h, 0.125, 2**-8, 1e-8)
    *_, Wb, Sb, Pb = _reference(X[150:290], y[150:290], h, 0.125, 2**-8, 1e-8)
    a.merge(b)
    np.testing.assert_allclose(a.sq_grad_sum_, sums, rtol=1e-12)
    for c, summary in enumerate(a.stats_):
        W = Wa[c] + Wb[c]
        np.testing.assert_allclose(summary.mean, (Sa[c] + Sb[c]) / W, rtol=1e-9)
        cov = (Pa[c] + Pb[c]) / W - np.outer(Sa[c] + Sb[c], Sa[c] + Sb[c]) / W**2
        np.testing.assert_allclose(summary.covariance, cov, rtol=1e-8, atol=1e-10)
    a.partial_fit(X[290:], y[290:])
    assert np.isfinite(a.coef_).all()


def test_oam_with_half_life_refuses_to_merge_and_changes_nothing():
    X, y = _stream(200, 3, 6)
    a = OAM(half_life=20, random_state=0).fit(X[:100], y[:100])
    b = OAM(half_life=20, random_state=1).fit(X[100:], y[100:])
    w, buffer = a.w_.copy(), a.buffers_[1].buffer.copy()
    with pytest.raises(NotImplementedError, match="do not merge"):
        a.merge(b)
    assert np.array_equal(a.w_, w) and np.array_equal(a.buffers_[1].buffer, buffer)


# ------------------------------------------- the battery (ours), with half_life set
HALF_LIFE_LEARNERS = [
    OAM(half_life=15, random_state=0),
    OAM(half_life=15, buffer_size=None, update="gra", random_state=0),
    AdaOAM(half_life=1.5),  # 120 examples wrap the class clocks twice
    SAdaOAM(half_life=1.5),
]
CASES = [
    (learner, check)
    for learner in HALF_LIFE_LEARNERS
    for check in yield_checks(learner, sklearn_checks=False)
]


@pytest.mark.parametrize(
    "check", [c for _, c in CASES], ids=[f"{l!r}-{c.__name__}" for l, c in CASES]
)
def test_invariants_hold_with_half_life(check):
    check()


@pytest.mark.parametrize("learner", HALF_LIFE_LEARNERS, ids=repr)
def test_save_load_resume_with_half_life_is_exact(learner, tmp_path):
    X, y = _stream(240, 4, 8)
    one = learner.__class__(**learner.get_params()).fit(X, y)
    part = learner.__class__(**learner.get_params()).partial_fit(X[:97], y[:97], classes=[-1, 1])
    save_model(part, tmp_path / "m.npz")
    resumed = load_model(tmp_path / "m.npz").partial_fit(X[97:], y[97:])
    assert np.array_equal(one.coef_, resumed.coef_)
    assert np.array_equal(one.decision_function(X), resumed.decision_function(X))


# ---------------------------------------------------------------- abrupt drift
def _two_concepts(n_each, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n_each, d))
    w = rng.normal(size=d)
    v = -w + 0.3 * rng.normal(size=d)  # the second concept reverses the first
    score = np.concatenate([X[:n_each] @ w, X[n_each:] @ v])
    y = np.where(score + 0.3 * rng.normal(size=2 * n_each) > 0.8, 1, -1)
    return X, y


@pytest.mark.parametrize(
    "make",
    [
        lambda h: OAM(C=2**-6, buffer_size=50, half_life=h, random_state=0),
        lambda h: AdaOAM(eta=0.1, half_life=h),
        lambda h: SAdaOAM(eta=0.1, half_life=h),
    ],
    ids=["OAM", "AdaOAM", "SAdaOAM"],
)
def test_forgetting_recovers_after_an_abrupt_change(make):
    """Prequential AUC over the 1,500 rows after an abrupt change (from 500 rows
    after it): clearly better with half_life than without."""
    n_each = 2500
    X, y = _two_concepts(n_each, 5, 11)
    after = slice(n_each + 500, n_each + 2000)
    auc = {}
    for h in (None, 200):
        scores = make(h).test_then_train(X, y, classes=[-1, 1])
        auc[h] = roc_auc(y[after], scores[after])
    assert auc[200] > auc[None] + 0.05, auc
    assert auc[200] > 0.85, auc


def _array_bytes(objects) -> list:
    return [
        {k: v.tobytes() for k, v in vars(o).items() if isinstance(v, np.ndarray)} for o in objects
    ]


@pytest.mark.parametrize("label", [-1, 1])
def test_adaoam_declares_read_only_only_what_no_clock_wrap_rescales(label, monkeypatch):
    """One-row calls of one class through the fast path, across many wraps of the
    class clocks (every 32 examples at half_life=1): what the plan of each call
    declares read-only (the other class's summary, unless a clock wraps within the
    call: the plan's variant) keeps every byte, and the model is that of one chunk."""
    X, y = _stream(400, 4, 9)
    model = AdaOAM(half_life=1.0).partial_fit(X[:20], y[:20], classes=[-1, 1])
    whole = AdaOAM(half_life=1.0).partial_fit(X[:20], y[:20], classes=[-1, 1])
    plans, fresh, used = {}, {}, []
    read_only, variant = AdaOAM._read_only_state, AdaOAM._plan_variant

    def recording_read_only(self, y_pm, chunk=None):
        found = read_only(self, y_pm, chunk)
        if chunk is not None and chunk.n_samples == 1:  # the fast path's plan, kept
            plans[variant(self, chunk)] = found
            fresh[variant(self, chunk)] = _array_bytes(found)  # before the kernel
        return found

    def recording_variant(self, chunk):
        used.append(variant(self, chunk))
        return used[-1]

    monkeypatch.setattr(AdaOAM, "_read_only_state", recording_read_only)
    monkeypatch.setattr(AdaOAM, "_plan_variant", recording_variant)
    rows = np.flatnonzero(y[20:] == label) + 20
    for i in rows:
        before = {v: _array_bytes(found) for v, found in plans.items()}
        fresh.clear()
        used.clear()
        model.partial_fit(X[i : i + 1], y[i : i + 1])
        assert used, "the fast path was not taken"
        v = used[-1]
        expected = fresh.get(v, before.get(v))
        assert _array_bytes(plans[v]) == expected, f"row {i} wrote what it declared read-only"
    assert set(plans) == {0, 1}  # both kinds of calls were made
    whole.partial_fit(X[rows], y[rows])
    assert np.array_equal(model.coef_, whole.coef_)


@pytest.mark.parametrize("half_life", [None, 50])
def test_unbounded_buffers_do_not_depend_on_the_chunking(half_life):
    """OAM_inf's buffers have the rows their size sets (64 2^k), however the stream
    is cut: the whole state is the same, not only the model (one chunk of 600 used
    to allocate 333 rows where chunks of 10 doubled to 512)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    one = OAM(buffer_size=None, half_life=half_life, random_state=0)
    one.partial_fit(X, y, classes=[-1, 1])
    cut = OAM(buffer_size=None, half_life=half_life, random_state=0)
    for lo in range(0, 600, 10):
        cut.partial_fit(X[lo : lo + 10], y[lo : lo + 10], classes=[-1, 1])
    for a, b in zip(one.buffers_, cut.buffers_):
        assert a.items_.shape == b.items_.shape == (64 if half_life else 512, 3)
        assert np.array_equal(a.items_, b.items_) and np.array_equal(a.sq_norms_, b.sq_norms_)
