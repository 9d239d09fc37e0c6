"""SPAM (Natole, Ying and Lyu, ICML 2018) with lazy proximal steps: the kernel against
a plain numpy SPAM that applies the proximal step to every coordinate at every step,
dense = sparse, the fold, the battery, sparsity, merge, and one pass of a9a."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from conftest import a9a_normalized
from sklearn.exceptions import NotFittedError
from test_ftrl import finite_checks, sparse_stream, w8a_normalized

from aucstream import FTRLAUC, SPAM, load_model, save_model
from aucstream.checks import check_estimator
from aucstream.metrics import roc_auc


def brute_force(X, y, eta0, l1, l2, step="global"):
    """SPAM over dense rows, eagerly: gradient step, then the proximal step of
    eta (l1 |w|_1 + l2/2 |w|^2) on every coordinate; eta = eta0 / sqrt(t) (NYL's
    global step) or, per coordinate, eta0 / sqrt(n_i) with n_i the examples so far
    whose value there is not 0 (a coordinate never seen stays 0); returns the
    prequential scores and the final weights."""
    w = np.zeros(X.shape[1])
    seen = np.zeros(X.shape[1])
    a_hat = b_hat = 0.0
    t = pos = 0
    scores = []
    for x, label in zip(X, y):
        s = float(w @ x)
        scores.append(s)
        p = pos / t if t else 0.5
        if label > 0:
            c = 2 * (1 - p) * (s - b_hat - 1)
        else:
            c = 2 * p * (s - a_hat + 1)
        c /= max(float(x @ x), 1.0)
        seen += x != 0
        if step == "global":
            eta = eta0 / np.sqrt(t + 1)
        else:  # (0 where never seen: the coordinate keeps its 0)
            eta = eta0 / np.sqrt(np.maximum(seen, 1.0)) * (seen > 0)
        u = w - eta * c * x
        w = np.sign(u) * np.maximum(np.abs(u) - eta * l1, 0.0) / (1 + eta * l2)
        t += 1
        if label > 0:
            pos += 1
            a_hat += (s - a_hat) / pos
        else:
            b_hat += (s - b_hat) / (t - pos)
    return np.array(scores), w


@pytest.mark.parametrize(
    "params",
    [
        {"eta0": 0.5, "l1": 1e-3, "l2": 0.0},  # SPAM-l1
        {"eta0": 2.0, "l1": 1e-2, "l2": 0.5},  # elastic net
        {"eta0": 1.0, "l1": 0.0, "l2": 0.1},  # l2 only
        {"eta0": 1.0, "l1": 0.0, "l2": 0.0},  # no penalty
    ],
)
@pytest.mark.parametrize("step", ["coordinate", "global"])
def test_lazy_kernel_matches_eager_brute_force(params, step):
    X, y = sparse_stream()
    X = X * 1.5  # some rows above norm 1 (their gradient is scaled)
    ref_scores, ref_w = brute_force(X.toarray(), y, **params, step=step)
    params = {**params, "column_scale": None, "step": step}  # the rows as they come
    model = SPAM(**params).fit(X, y)
    np.testing.assert_allclose(model.coef_.ravel(), ref_w, rtol=1e-11, atol=1e-12)
    one = SPAM(**params).partial_fit(X[:1], y[:1], classes=[-1, 1])
    pre = []
    for i in range(1, X.shape[0]):
        pre.append(float(X[i].toarray().ravel() @ one.coef_.ravel()))
        one.partial_fit(X[i : i + 1], y[i : i + 1])
    np.testing.assert_allclose(pre, ref_scores[1:], rtol=1e-11, atol=1e-12)
    np.testing.assert_array_equal(one.coef_, model.coef_)


def test_folds_keep_the_model(monkeypatch):
    """With A and B folded at (almost) every step the model is the eager one still,
    and chunking changes nothing (the fold rule reads the stream only)."""
    import aucstream.spam as spam

    X, y = sparse_stream(seed=4)
    params = {"eta0": 1.0, "l1": 1e-2, "l2": 0.5, "step": "global"}
    _, ref_w = brute_force(X.toarray(), y, **params)
    plain = SPAM(**params).fit(X, y)
    assert plain.scalars_[2] < 0.5 and plain.scalars_[3] > 0.0  # A, B moved
    monkeypatch.setattr(spam, "B_MAX", 1e-3)
    folded = SPAM(**params).fit(X, y)
    assert folded.scalars_[3] <= 1e-2
    np.testing.assert_allclose(folded.coef_.ravel(), ref_w, rtol=1e-11, atol=1e-12)
    chunked = SPAM(**params)
    for lo in range(0, X.shape[0], 37):
        chunked.partial_fit(X[lo : lo + 37], y[lo : lo + 37], classes=[-1, 1])
    np.testing.assert_array_equal(chunked.coef_, folded.coef_)


@pytest.mark.parametrize("step", ["coordinate", "global"])
def test_dense_equals_sparse(step):
    X, y = sparse_stream(seed=1)
    a = SPAM(l1=1e-2, l2=0.1, step=step).fit(X, y)
    b = SPAM(l1=1e-2, l2=0.1, step=step).fit(X.toarray(), y)
    np.testing.assert_allclose(a.coef_.ravel(), b.coef_.ravel(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("step", ["coordinate", "global"])
def test_battery(step):
    check_estimator(SPAM(step=step), sklearn_checks=False)


def test_save_load_resume_bit_for_bit(tmp_path):
    X, y = sparse_stream(seed=2)
    whole = SPAM(l2=0.1).fit(X, y)
    half = SPAM(l2=0.1).partial_fit(X[:150], y[:150], classes=[-1, 1])
    save_model(half, tmp_path / "m.json")
    resumed = load_model(tmp_path / "m.json").partial_fit(X[150:], y[150:])
    np.testing.assert_array_equal(resumed.coef_, whole.coef_)
    np.testing.assert_array_equal(resumed.v_, whole.v_)


def test_l1_gives_zeros_and_sparsity_counts_them():
    X, y = sparse_stream(n=400, d=200, density=0.05, seed=3)
    model = SPAM(l1=0.01).fit(X, y)
    assert model.sparsity_ == np.mean(model.coef_ == 0.0)
    assert model.sparsity_ >= 0.2
    assert SPAM(l1=0.0).fit(X, y).sparsity_ < 0.05
    with pytest.raises(NotFittedError):
        SPAM().sparsity_  # noqa: B018


@pytest.mark.parametrize("name, bad", [("l1", -1e-3), ("l2", np.inf), ("eta0", True)])
def test_bad_parameters_refused_before_state(name, bad):
    X, y = sparse_stream()
    model = SPAM().fit(X, y)
    before = model.v_.copy(), model.scalars_.copy()
    model.set_params(**{name: bad})
    with pytest.raises(ValueError, match=name):
        model.partial_fit(X, y)
    np.testing.assert_array_equal(model.v_, before[0])
    np.testing.assert_array_equal(model.scalars_, before[1])


def test_merge_averages_the_weights():
    X, y = sparse_stream()
    a, b = SPAM().fit(X[:100], y[:100]), SPAM().fit(X[100:], y[100:])
    want = (100 * a.coef_ + 200 * b.coef_) / 300
    merged = a.merge(b)
    np.testing.assert_allclose(merged.coef_, want, rtol=1e-12)
    assert merged.counts_[0] == 300 and merged.n_samples_seen_ == 300


@pytest.mark.slow
def test_auc_on_a9a():
    """One pass over a9a (unit rows) at the defaults: about 0.900, as
    SGDClassifier(log_loss) (docs/results/highdim_bench.md)."""
    X, y, Xt, yt = a9a_normalized()
    model = SPAM().fit(X, y)
    assert roc_auc(yt, model.decision_function(Xt)) > 0.895


def test_battery_with_rows_of_the_state_logged(monkeypatch):
    """The battery with v_ saved by rows at every call that cannot fold, as at
    d >= 4096 with small chunks."""
    from dataclasses import replace

    import aucstream.spam as spam

    monkeypatch.setattr(SPAM, "_state_spec", replace(SPAM._state_spec, log_from=1))
    monkeypatch.setattr(spam, "ROW_COPY", 0)  # (every chunk names few values)
    X, y = sparse_stream()
    model, nyl = SPAM().fit(X, y), SPAM(step="global").fit(X, y)
    chunk = SimpleNamespace(n_samples=10, names_few=lambda per_value: True)
    same = [a is b for a, b in zip(model._row_written_state(chunk), model._row_logged_state())]
    assert len(same) == 3 and all(same)  # v_, rates_ and scale_
    assert [a is b for a, b in zip(nyl._row_written_state(chunk), (nyl.v_, nyl.scale_))] == [
        True,
        True,
    ]
    monkeypatch.setattr(spam, "B_MAX", 0.0)  # a fold is due: the whole v_ is saved
    assert nyl._row_written_state(chunk) == ()
    assert len(model._row_written_state(chunk)) == 3  # (per-coordinate steps never fold)
    monkeypatch.setattr(spam, "B_MAX", 1e6)
    for step in ("coordinate", "global"):
        check_estimator(SPAM(step=step), sklearn_checks=False)
        check_estimator(SPAM(l2=0.5, l1=1e-2, step=step), sklearn_checks=False)


@pytest.mark.slow
def test_auc_on_w8a():
    """w8a (unit rows: the running column scale changes nothing; the file's order,
    sorted by label) at the defaults (per-coordinate steps, eta0=1): about 0.884;
    NYL's global step at its former default eta0=2 about 0.852, at eta0=4 about
    0.803 (docs/results/highdim_bench.md)."""
    X, y, Xt, yt = w8a_normalized()
    assert roc_auc(yt, SPAM().fit(X, y).decision_function(Xt)) > 0.875
    nyl = SPAM(eta0=2.0, step="global").fit(X, y)
    assert 0.845 < roc_auc(yt, nyl.decision_function(Xt)) < 0.86


def test_the_kernel_checks_what_it_writes(monkeypatch):
    """At d >= 4096 the kernel says whether what it wrote to ``v_`` is finite
    (``StateSpec.checked``): a chunk saved whole is then not read again for NaN or
    infinity there (nor in ``scale_``)."""
    checks = finite_checks(monkeypatch)
    X, y = sparse_stream(n=400, d=5000, density=0.01, seed=5)
    model = SPAM().fit(X[:200], y[:200])
    checks.clear()
    model.partial_fit(X[200:], y[200:])  # (saved whole: 200 rows of 50 values)
    assert checks == [{id(model.v_): 0, id(model.rates_): 0, id(model.scale_): 0}]


def test_a_file_written_before_per_coordinate_steps_keeps_nyls_step():
    """``tests/fixtures/spam_before_step.npz``: SPAM(l2=0.1) after 150 rows of
    ``sparse_stream(seed=2)``, saved by the code before ``step`` (commit 963316f).
    It loads with NYL's global step and resumes as a model of that step learnt whole."""
    from pathlib import Path

    X, y = sparse_stream(seed=2)
    model = load_model(Path(__file__).parent / "fixtures" / "spam_before_step.npz")
    assert model.step == "global" and model.eta0 == 2.0 and model.rates_.shape == (0, 3)
    whole = SPAM(l2=0.1, eta0=2.0, step="global").fit(X, y)
    model.partial_fit(X[150:], y[150:])
    np.testing.assert_array_equal(model.coef_, whole.coef_)
    np.testing.assert_array_equal(model.v_, whole.v_)


def test_per_coordinate_states_that_do_not_hold_are_refused(tmp_path):
    X, y = sparse_stream(seed=2)
    for spoil, message in [
        (lambda m: m.rates_.__setitem__((3, 1), m.counts_[0] + 1), "rates_ holds steps"),
        (lambda m: m.rates_.__setitem__((3, 0), -1), "rates_ holds steps"),
        (
            lambda m: (
                m.rates_.__setitem__((np.argmax(m.rates_[:, 0] == 0), 0), 0)
                or m.v_.__setitem__(np.argmax(m.rates_[:, 0] == 0), 0.5)
            ),
            "never seen",
        ),
        (lambda m: setattr(m, "rates_", m.rates_[:5]), "shape"),
    ]:
        model = SPAM().fit(X[:5], y[:5])  # (5 rows: features never seen remain)
        assert (model.rates_[:, 0] == 0).any()
        spoil(model)
        save_model(model, tmp_path / "m")
        with pytest.raises(ValueError, match=message):
            load_model(tmp_path / "m")


@pytest.mark.parametrize("before, after", [("global", "coordinate"), ("coordinate", "global")])
def test_switching_step_after_fitting_is_refused_and_changes_nothing(before, after):
    """The per-coordinate steps keep ``rates_`` (d rows), NYL's none: a model learnt
    with one is refused with the other, by name, before its kernel runs."""
    X, y = sparse_stream()
    model = SPAM(step=before).fit(X[:100], y[:100])
    kept = model.v_.copy(), model.rates_.copy()
    model.set_params(step=after)
    for call in (
        lambda: model.partial_fit(X[100:], y[100:]),
        lambda: model.test_then_train(X[100:], y[100:]),
        lambda: model.decision_function(X[100:]),
    ):
        with pytest.raises(ValueError, match="switched"):
            call()
    np.testing.assert_array_equal(model.v_, kept[0])
    np.testing.assert_array_equal(model.rates_, kept[1])
    model.set_params(step=before)
    model.partial_fit(X[100:], y[100:])  # (and it learns again)
    np.testing.assert_array_equal(model.coef_, SPAM(step=before).fit(X, y).coef_)


@pytest.mark.parametrize(
    "make, binds",
    [
        (lambda: SPAM(step="global", l1=0.05, l2=0.1), True),  # (zeros in v_: -0.0)
        (lambda: SPAM(l1=1e-2, column_scale="max_abs"), True),
        (lambda: SPAM(l2=0.1), False),  # (exp and expm1: _coef()'s numpy)
        (lambda: FTRLAUC(reference_order=True), True),
        (lambda: FTRLAUC(column_scale=None, l1=0.05), True),
    ],
)
def test_bound_weights_of_the_variants_are_the_coefficients(make, binds):
    """The weights a dict row's score reads after each learning call (``_bind_coef``)
    are ``_coef()`` bit for bit, or refused (then ``_coef()`` is read)."""
    X, y = sparse_stream(seed=6)
    X = X * 3.0  # (columns beyond [-1, 1]: their running scale at work)
    model = make().partial_fit(X[:40], y[:40], classes=[-1, 1])
    out = np.full(X.shape[1] + 1, np.nan)
    fill, _ = model._bind_coef(out)
    for i in range(40, 80):
        model.partial_fit(X[i], y[i : i + 1])
        assert fill(model) is binds
        if binds:  # (the bits: a -0.0 too)
            assert out[:-1].tobytes() == model._coef().tobytes() and out[-1] == 0.0
    row = {int(j): float(v) for j, v in zip(X[80].indices, X[80].data)}
    assert model.decision_one(row) == pytest.approx(float(model.decision_function(X[80])[0]))
