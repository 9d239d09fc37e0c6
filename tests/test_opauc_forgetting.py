"""OPAUC with forgetting (``half_life``): exponentially weighted class statistics.

Checked against a brute-force reference (weights gamma^(t - i) over the stream), for
chunking, save/load/resume and the exact power-of-2 rescaling bit for bit, for merging
against the weighted statistics of the two shards, and on an abrupt drift, where
forgetting must recover the windowed AUC that the stationary OPAUC loses.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from aucstream import OPAUC, load_model, save_model
from aucstream._params import InvalidParameterError, decay_per_example
from aucstream.covariance import HashedCovariance, RandomizedCovariance
from aucstream.metrics import roc_auc

EXPLICIT = ("full", "sparse")
LINEAR = ("randomized", "hash")
FORGETTING_KINDS = EXPLICIT + LINEAR + ("fd",)


def _stream(n=240, d=6, seed=0, rate=0.3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (rng.random(n) < rate).astype(int)
    X[y == 1] += 0.5
    return X, y


def _weighted_stats(X, gamma):
    """Mean and (biased) covariance of the rows of X with weights gamma^(n-1-i)."""
    n = X.shape[0]
    w = gamma ** np.arange(n - 1, -1, -1, dtype=float)
    mean = w @ X / w.sum()
    centered = X - mean
    return w.sum(), mean, (centered.T * w) @ centered / w.sum()


def _reference(X, y, eta, lam, half_life):
    """OPAUC written out with the statistics recomputed by brute force each step."""
    gamma = decay_per_example(half_life)
    w = np.zeros(X.shape[1])
    for t in range(X.shape[0]):
        x, label = X[t], 1.0 if y[t] > 0 else -1.0
        opposite = [i for i in range(t + 1) if (y[i] > 0) != (y[t] > 0)]
        if opposite:
            times = np.array(opposite)
            weights = gamma ** (t - times)
            rows = X[times]
            c = weights @ rows / weights.sum()
            S = ((rows - c).T * weights) @ (rows - c) / weights.sum()
            e = x - c
            w = w - eta * (lam * w - label * e + e * (e @ w) + S @ w)
    return w


@pytest.mark.parametrize("covariance", EXPLICIT)
@pytest.mark.parametrize("half_life", [0.7, 25.0])
def test_matches_brute_force(covariance, half_life):
    """The weights and the class statistics are those of the weighted sample (h = 0.7
    rescales the stored weights many times within the stream)."""
    X, y = _stream()
    model = OPAUC(
        eta=2**-4, lam=2**-6, covariance=covariance, half_life=half_life, column_scale=None
    ).fit(X, y)
    expected = _reference(X, y, 2**-4, 2**-6, half_life)
    np.testing.assert_allclose(model.w_, expected, rtol=1e-9, atol=1e-12)
    gamma = decay_per_example(half_life)
    last = X.shape[0] - 1
    for c in (0, 1):
        rows = np.flatnonzero((y > 0) == bool(c))
        weights = gamma ** (last - rows)
        mean = weights @ X[rows] / weights.sum()
        cov = ((X[rows] - mean).T * weights) @ (X[rows] - mean) / weights.sum()
        np.testing.assert_allclose(model.stats_[c].mean, mean, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(model.stats_[c].covariance, cov, rtol=1e-8, atol=1e-12)
    if half_life < 1:
        assert model.forget_[1] > 0  # the stored statistics were rescaled


@pytest.mark.parametrize("covariance", LINEAR)
@pytest.mark.parametrize("centering", [None, "exact"])
@pytest.mark.parametrize("half_life", [0.7, 25.0])
def test_linear_sketches_exact(covariance, centering, half_life, monkeypatch):
    """With orthonormal draws (unit vectors, one per example, tau >= n) a linear
    sketch is exact, so the implicit-weights kernel must give the weighted OPAUC."""
    kind = RandomizedCovariance if covariance == "randomized" else HashedCovariance
    monkeypatch.setattr(kind, "draws", lambda self, rng, n: np.eye(n, self.sketch_size))
    X, y = _stream(n=60)
    model = OPAUC(
        eta=2**-4,
        lam=2**-6,
        covariance=covariance,
        sketch_size=64,
        centering=centering,
        half_life=half_life,
        column_scale=None,  # the papers' update (the reference's)
    ).fit(X, y)
    expected = _reference(X, y, 2**-4, 2**-6, half_life)
    # (the implicit form cancels terms up to 2^9 times w between re-basings)
    np.testing.assert_allclose(model.w_, expected, rtol=1e-8, atol=1e-9)
    gamma = decay_per_example(half_life)
    last = X.shape[0] - 1
    for c in (0, 1):
        rows = np.flatnonzero((y > 0) == bool(c))
        weights = gamma ** (last - rows)
        mean = weights @ X[rows] / weights.sum()
        cov = ((X[rows] - mean).T * weights) @ (X[rows] - mean) / weights.sum()
        np.testing.assert_allclose(model.stats_[c].mean, mean, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(model.stats_[c].covariance, cov, rtol=1e-8, atol=1e-12)
    if half_life < 1:
        assert model.forget_[1] > 0  # the stored statistics were rescaled


@pytest.mark.parametrize("centering", [None, "exact"])
@pytest.mark.parametrize("half_life", [0.7, 25.0])
def test_frequent_directions_exact_while_no_shrink(centering, half_life):
    """Frequent directions that never shrinks (tau > n) holds the weighted columns
    exactly: the implicit-weights kernel must give the weighted OPAUC, with the
    weighted Welford columns for "exact"."""
    X, y = _stream(n=60)
    model = OPAUC(
        eta=2**-4,
        lam=2**-6,
        covariance="fd",
        sketch_size=64,
        centering=centering,
        half_life=half_life,
        column_scale=None,  # the papers' update (the reference's)
    ).fit(X, y)
    assert all(int(s.n_shrinks_[0]) == 0 for s in model.stats_)
    expected = _reference(X, y, 2**-4, 2**-6, half_life)
    np.testing.assert_allclose(model.w_, expected, rtol=1e-8, atol=1e-9)
    gamma = decay_per_example(half_life)
    last = X.shape[0] - 1
    for c in (0, 1):
        rows = np.flatnonzero((y > 0) == bool(c))
        weights = gamma ** (last - rows)
        mean = weights @ X[rows] / weights.sum()
        centered = X[rows] - (mean if centering == "exact" else 0.0)
        scatter = (centered.T * weights) @ centered / weights.sum()
        Z = model.stats_[c].sketch_matrix()
        np.testing.assert_allclose(model.stats_[c].mean, mean, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(
            Z @ Z.T / model.stats_[c].total_weight, scatter, rtol=1e-8, atol=1e-12
        )
    if half_life < 1:
        assert model.forget_[1] > 0  # the stored statistics were rescaled


@pytest.mark.parametrize("covariance", EXPLICIT)
def test_none_is_the_stationary_opauc(covariance):
    X, y = _stream()
    plain = OPAUC(covariance=covariance).fit(X, y)
    none = OPAUC(covariance=covariance, half_life=None).fit(X, y)
    np.testing.assert_array_equal(plain.w_, none.w_)
    assert not np.array_equal(plain.w_, OPAUC(covariance=covariance, half_life=50).fit(X, y).w_)


def _state(model):
    arrays = [model.w_, model.forget_]
    for s in model.stats_:
        arrays += [v for k, v in sorted(vars(s).items()) if isinstance(v, np.ndarray)]
    return arrays


def _assert_same(a, b):
    for u, v in zip(_state(a), _state(b), strict=True):
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("covariance", FORGETTING_KINDS)
@pytest.mark.parametrize("sparse_input", [False, True])
def test_chunking_one_row_and_resume_are_exact(covariance, sparse_input, tmp_path):
    X, y = _stream(n=200)
    if sparse_input:
        X = sp.csr_matrix(np.where(np.abs(X) > 0.7, X, 0.0))
    params = dict(covariance=covariance, half_life=0.9, eta=2**-5, random_state=3)
    whole = OPAUC(**params).fit(X, y)
    chunked = OPAUC(**params)
    for lo, hi in [(0, 7), (7, 8), (8, 90), (90, 131), (131, 200)]:
        chunked.partial_fit(X[lo:hi], y[lo:hi], classes=[0, 1])
    _assert_same(whole, chunked)
    one = OPAUC(**params)
    for i in range(50):
        one.partial_fit(X[i : i + 1], y[i : i + 1], classes=[0, 1])  # the one-row path
    ref = OPAUC(**params).partial_fit(X[:50], y[:50], classes=[0, 1])
    _assert_same(ref, one)
    path = save_model(ref, tmp_path / "m.npz")
    resumed = load_model(path).partial_fit(X[50:], y[50:])
    _assert_same(whole, resumed)


@pytest.mark.parametrize("covariance", FORGETTING_KINDS)
def test_rescaling_by_a_power_of_two_changes_nothing(covariance):
    """The stored statistics are relative to 2^E: moving E (and scaling the
    statistics by the same exact power of 2) leaves the model bit for bit."""
    X, y = _stream(n=200)
    params = dict(covariance=covariance, half_life=30.0, eta=2**-5, random_state=0)
    a = OPAUC(**params).partial_fit(X[:130], y[:130], classes=[0, 1])
    b = OPAUC(**params).partial_fit(X[:130], y[:130], classes=[0, 1])
    for s in b.stats_:
        s.scale(2.0**-4)
    b._engine.scale_implicit(b, 2.0**-4)
    b.forget_[1] += 4  # (the next weights are 2^4 smaller: the same ratios)
    a.partial_fit(X[130:], y[130:])
    b.partial_fit(X[130:], y[130:])
    np.testing.assert_array_equal(a.w_, b.w_)
    for sa, sb in zip(a.stats_, b.stats_):
        np.testing.assert_array_equal(sa.mean, sb.mean)


@pytest.mark.parametrize("covariance", FORGETTING_KINDS)
def test_merge_is_the_weighted_union(covariance):
    """Each shard's examples keep the weights they have in their shard (its latest
    example 1); after the merge the statistics are exactly those of that union."""
    X, y = _stream(n=300)
    h = 40.0
    gamma = decay_per_example(h)
    a = OPAUC(covariance=covariance, half_life=h, random_state=1, column_scale=None)
    b = OPAUC(covariance=covariance, half_life=h, random_state=2, column_scale=None)
    a, b = a.fit(X[:180], y[:180]), b.fit(X[180:], y[180:])
    a.merge(b)
    assert a.forget_[0] == 300
    ages = np.concatenate([179 - np.arange(180), 119 - np.arange(120)])
    for c in (0, 1):
        rows = np.flatnonzero((y > 0) == bool(c))
        weights = gamma ** ages[rows]
        mean = weights @ X[rows] / weights.sum()
        cov = ((X[rows] - mean).T * weights) @ (X[rows] - mean) / weights.sum()
        np.testing.assert_allclose(a.stats_[c].mean, mean, rtol=1e-9, atol=1e-12)
        if covariance in EXPLICIT:  # (the sketches estimate it)
            np.testing.assert_allclose(a.stats_[c].covariance, cov, rtol=1e-8, atol=1e-12)
    # the merged learner continues: the next example weighs 1, the union gamma less
    Xn, yn = _stream(n=20, seed=5)
    a.partial_fit(Xn, yn)
    assert np.all(np.isfinite(a.w_))


def _drift_stream(n_per, d, seed):
    rng = np.random.default_rng(seed)
    parts = []
    for k in range(2):
        direction = rng.normal(size=d)
        direction *= (-1) ** k  # the second concept reverses the first
        X = rng.normal(size=(n_per, d))
        y = (X @ direction + 0.3 * rng.normal(size=n_per) > 1.0).astype(int)
        parts.append((X, y))
    return np.vstack([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


@pytest.mark.parametrize("covariance", FORGETTING_KINDS)
def test_forgetting_recovers_after_an_abrupt_drift(covariance):
    n_per = 3000
    X, y = _drift_stream(n_per, 5, seed=1)
    after = slice(n_per + 200, n_per + 1500)  # the windowed AUC after the change
    scores = {}
    for h in (None, 300.0):
        model = OPAUC(eta=2**-5, lam=2**-8, covariance=covariance, half_life=h, random_state=0)
        model.set_params(column_scale=None)  # (the papers' update: forgetting alone)
        pre = model.test_then_train(X, y, classes=[0, 1])
        scores[h] = roc_auc(y[after], pre[after])
    assert scores[300.0] > 0.95
    assert scores[300.0] > scores[None] + 0.03


@pytest.mark.parametrize(
    "params",
    [
        dict(covariance="randomized", centering="g13"),
        dict(covariance="hash", centering="g13"),
    ],
)
def test_refused_with_half_life(params):
    """G13's centering is not scale-free."""
    X, y = _stream(n=20)
    model = OPAUC(half_life=100, **params)
    with pytest.raises(InvalidParameterError, match="half_life"):
        model.fit(X, y)
    assert not hasattr(model, "w_")


def test_randomized_centering_defaults_to_g16_with_half_life():
    X, y = _stream(n=20)
    model = OPAUC(covariance="randomized", half_life=100).fit(X, y)
    assert model.stats_[0].centering == "g16"
    assert OPAUC(covariance="randomized").fit(X, y).stats_[0].centering == "g13"


@pytest.mark.parametrize("bad", [0, -1.0, np.nan, np.inf, True])
def test_bad_half_life(bad):
    X, y = _stream(n=20)
    with pytest.raises(InvalidParameterError, match="half_life"):
        OPAUC(half_life=bad).fit(X, y)


@pytest.mark.parametrize("covariance", FORGETTING_KINDS)
@pytest.mark.parametrize("one_row", [False, True])
def test_a_call_that_fails_after_a_rescale_changes_nothing(covariance, one_row):
    """A rescale writes both summaries whole: the transaction must restore them when
    the call fails afterwards (here the weights diverge)."""
    X, y = _stream(n=120)
    model = OPAUC(covariance=covariance, half_life=0.7, eta=2**-5, random_state=0)
    model.partial_fit(X[:10], y[:10], classes=[0, 1])
    i = 10
    while not model._engine.rescale_due(model, 1):  # one row at a time: the fast path
        model.partial_fit(X[i : i + 1], y[i : i + 1])
        i += 1
    before = [a.copy() for a in _state(model)]
    model.set_params(eta=1e300)
    for _ in range(2):
        with pytest.raises(FloatingPointError):
            rows = slice(i, i + 1) if one_row else slice(i, None)
            model.partial_fit(X[rows] * 1e10, y[rows])
        for u, v in zip(before, _state(model), strict=True):
            np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("fast_path", [True, False])
@pytest.mark.parametrize("covariance", FORGETTING_KINDS)
def test_the_battery_with_forgetting(covariance, fast_path):
    """``check_estimator`` with ``half_life`` short enough that the battery's streams
    rescale the stored weights, the fast path on and off (off: aucstream's own checks,
    those of streams, chunks and resumes; scikit-learn's, of the API on whole arrays,
    run with it on)."""
    from aucstream import config_context
    from aucstream.checks import check_estimator

    with config_context(fast_path=fast_path):
        check_estimator(
            OPAUC(covariance=covariance, half_life=2.0, random_state=0),
            sklearn_checks=fast_path,
        )


def test_from_statistics_takes_the_summaries_as_they_weigh():
    """Summaries handed over (here plain counts) keep their examples' weights, the
    next example weighs 1 and the past gamma per example from then on."""
    from aucstream.covariance import FullCovariance

    X, y = _stream(n=100)
    h, gamma = 20.0, decay_per_example(20.0)
    neg, pos = (FullCovariance(X.shape[1]).update(X[(y > 0) == bool(c)]) for c in (0, 1))
    model = OPAUC(half_life=h).from_statistics(neg, pos, classes=[0, 1])
    Xn, yn = _stream(n=7, seed=7)
    model.partial_fit(Xn, yn)
    for c in (0, 1):
        old = X[(y > 0) == bool(c)]
        ages_new = 6 - np.flatnonzero((yn > 0) == bool(c))
        rows = np.vstack([old, Xn[(yn > 0) == bool(c)]])
        weights = np.concatenate([np.full(len(old), gamma**7), gamma**ages_new])
        mean = weights @ rows / weights.sum()
        np.testing.assert_allclose(model.stats_[c].mean, mean, rtol=1e-12)


def test_low_rank_rebasing_falls_on_the_clock():
    """The low-rank kinds re-base after the first example of half-lives 9, 17, 25, ...
    of the clock (h >= 1: one per crossing), whatever the exponent E."""
    from aucstream.opauc._kernels import forgetting_rebase_due

    for h in (1.0, 3.0, 25.0):
        due = [t for t in range(1, int(40 * h)) if forgetting_rebase_due(t, h)]
        assert due == [int(np.ceil(q * h)) for q in (9, 17, 25, 33)]
    assert not any(forgetting_rebase_due(t, 0.0) for t in range(1, 100))
    # h < 1: the clock may skip a whole half-life; still one re-basing per 8
    due = [t for t in range(1, 200) if forgetting_rebase_due(t, 0.7)]
    assert len(due) == int((np.floor(199 / 0.7) - 1) // 8)


@pytest.mark.parametrize("covariance", LINEAR)
def test_low_rank_forgetting_logs_rows_between_rescalings(covariance):
    """A chunk that re-bases (every 8 half-lives) but does not rescale the stored
    weights (every 40) writes the sketches only in its examples' rows: the call's
    transaction saves those rows, not the d x tau sketches whole; the rescaling of
    the stored weights, when due, still declares them whole."""
    from aucstream._chunks import to_chunk

    X, y = _stream(n=200)
    model = OPAUC(covariance=covariance, half_life=2.0, random_state=0)
    model.partial_fit(X[:10], y[:10], classes=[0, 1])
    v_before = model.v_.copy()
    chunk = to_chunk(X[10:30], np.where(y[10:30] > 0, 1.0, -1.0))
    assert not model._engine.rescale_due(model, chunk.n_samples)
    assert model._engine.row_written_state(model, chunk)  # rows only
    model.partial_fit(X[10:30], y[10:30])  # clock 10 -> 30: re-bases at 17 and 25
    assert model.forget_[1] == 0 and not np.array_equal(v_before, model.v_)
    while not model._engine.rescale_due(model, 20):
        model.partial_fit(X[:20], y[:20])
    chunk = to_chunk(X[:20], np.where(y[:20] > 0, 1.0, -1.0))
    assert model._engine.row_written_state(model, chunk) == ()
    model.partial_fit(X[:20], y[:20])
    assert model.forget_[1] == 40
