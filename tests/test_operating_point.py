"""Operating points: predict(threshold="fpr:R" | "alert_rate:R" | float), chosen from
the windows of prequential scores kept in the same pass (aucstream._calibration)."""

from __future__ import annotations

import numpy as np
import pytest

from aucstream import OPAUC, SOLAM, OnlinePAUC, load_model, save_model
from aucstream._calibration import WINDOW, window_scores


def _rare(n, rate=0.003, seed=0):
    """A stream with about ``rate`` positives (a threshold on a noisy feature)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    latent = X[:, 0] + 0.5 * X[:, 1] + 0.7 * rng.normal(size=n)
    cut = np.quantile(latent, 1.0 - rate)
    return X, (latent > cut).astype(int)


@pytest.mark.parametrize("learner", [SOLAM(), OPAUC(), OnlinePAUC(random_state=0)])
def test_windows_hold_the_last_prequential_scores(learner):
    """Learners whose kernel fits the calibration (OPAUC, SOLAM) and those whose
    runtime does (OnlinePAUC): the windows are the prequential scores test_then_train
    returns, of the last WINDOW negatives and the last WINDOW rows, whatever the chunks."""
    X, y = _rare(6000, rate=0.05)
    pre = np.concatenate(
        [
            learner.test_then_train(X[i : i + 700], y[i : i + 700], classes=[0, 1])
            for i in range(0, 6000, 700)
        ]
    )
    window = learner.score_window_
    assert window[:, 0].tolist() == [int((y == 0).sum()), 6000]
    np.testing.assert_array_equal(np.sort(window_scores(window, 1)), np.sort(pre[-WINDOW:]))
    np.testing.assert_array_equal(np.sort(window_scores(window, 0)), np.sort(pre[y == 0][-WINDOW:]))
    last = 1 + (6000 - 1) % WINDOW  # a ring: the newest score at 1 + (count - 1) % WINDOW
    assert window[1, last] == pre[-1]


def test_thresholds_are_numpys_quantiles_of_the_windows():
    X, y = _rare(9000, rate=0.02)
    model = SOLAM().fit(X, y)
    Xn = _rare(3000, rate=0.02, seed=1)[0]
    own = model.decision_function(Xn) + model._threshold()
    cut = np.quantile(window_scores(model.score_window_, 0), 0.99)
    np.testing.assert_array_equal(model.predict(Xn, threshold="fpr:0.01"), (own > cut).astype(int))
    cut = np.quantile(window_scores(model.score_window_, 1), 0.995)
    flagged = model.predict(Xn, threshold="alert_rate:0.005")
    np.testing.assert_array_equal(flagged, (own > cut).astype(int))
    np.testing.assert_array_equal(
        model.predict(Xn, threshold=0.25), (model.decision_function(Xn) > 0.25).astype(int)
    )


def test_a_partly_filled_window_uses_only_its_scores():
    X, y = _rare(500, rate=0.1)
    model = OPAUC().fit(X, y)
    filled = int(model.score_window_[0, 0])
    assert filled == (y == 0).sum() < WINDOW and not model.score_window_[0, 1 + filled :].any()
    own = model.decision_function(X) + model._threshold()
    cut = np.quantile(model.score_window_[0, 1 : 1 + filled], 0.9)
    np.testing.assert_array_equal(model.predict(X, threshold="fpr:0.1"), (own > cut).astype(int))


@pytest.mark.parametrize("learner", [SOLAM(), OnlinePAUC(random_state=0)])
def test_alert_budget_on_rare_positives(learner):
    """0.3% positives: probability 1/2 flags (almost) nothing; an alert budget of 0.5%
    flags about 0.5% of new rows, and a 1% false-positive rate about 1% of negatives
    (the window's quantile of about 20 scores above it varies by about a quarter)."""
    X, y = _rare(40000)
    Xn, yn = _rare(40000, seed=1)
    learner.fit(X, y)
    assert learner.predict(Xn).mean() < 0.001
    rate = learner.predict(Xn, threshold="alert_rate:0.005").mean()
    assert 0.0035 < rate < 0.0065, rate
    fpr = learner.predict(Xn, threshold="fpr:0.01")[yn == 0].mean()
    assert 0.007 < fpr < 0.013, fpr


@pytest.mark.parametrize(
    ("threshold", "error", "match"),
    [
        ("fpr", ValueError, "expected 'fpr:R'"),
        ("recall:0.1", ValueError, "expected 'fpr:R'"),
        ("fpr:abc", ValueError, "not a number"),
        ("fpr:0", ValueError, r"in \(0, 1\)"),
        ("alert_rate:1", ValueError, r"in \(0, 1\)"),
        ("fpr:nan", ValueError, r"in \(0, 1\)"),
        (True, TypeError, "number or a string"),
        ([0.1], TypeError, "number or a string"),
        (float("nan"), ValueError, "finite"),
    ],
)
def test_bad_thresholds_are_refused(threshold, error, match):
    X, y = _rare(300, rate=0.1)
    model = SOLAM().fit(X, y)
    with pytest.raises(error, match=match):
        model.predict(X, threshold=threshold)


def test_empty_window_and_unfitted():
    X, y = _rare(300, rate=0.1)
    model = SOLAM().partial_fit(X[y == 1][:5], y[y == 1][:5], classes=[0, 1])
    with pytest.raises(ValueError, match="no prequential scores of negatives"):
        model.predict(X, threshold="fpr:0.01")
    assert model.predict(X, threshold="alert_rate:0.5").shape == (300,)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        SOLAM().predict(X, threshold="fpr:0.01")


def test_saved_windows_resume_and_old_files_load(tmp_path):
    X, y = _rare(3000, rate=0.05)
    model = OPAUC().fit(X, y)
    save_model(model, tmp_path / "m.npz")
    back = load_model(tmp_path / "m.npz")
    np.testing.assert_array_equal(back.score_window_, model.score_window_)
    # a file written before the windows existed: the members removed
    with np.load(tmp_path / "m.npz") as archive:
        arrays = {k: archive[k] for k in archive.files}
    import json

    meta = json.loads(str(arrays["__meta__"]))
    text = json.dumps(meta)
    assert "score_window_" in text
    _drop(meta, {"score_window_"})
    arrays = {k: v for k, v in arrays.items() if "window" not in k}
    arrays["__meta__"] = np.array(json.dumps(meta))
    np.savez(tmp_path / "old.npz", **arrays)
    old = load_model(tmp_path / "old.npz")
    assert old.score_window_[:, 0].tolist() == [0, 0]
    np.testing.assert_array_equal(old.decision_function(X), model.decision_function(X))
    with pytest.raises(ValueError, match="no prequential scores"):
        old.predict(X, threshold="fpr:0.05")
    old.partial_fit(X[:100], y[:100])
    assert old.score_window_[1, 0] == 100


def _drop(node, names):
    if isinstance(node, dict):
        for name in names:
            node.pop(name, None)
        for value in node.values():
            _drop(value, names)
    elif isinstance(node, list):
        for value in node:
            _drop(value, names)


def test_a_pipeline_uses_its_learners_windows():
    from aucstream import StreamPipeline
    from aucstream.batch import BatchUnivariate

    X, y = _rare(8000, rate=0.02)
    X = X * [1.0, 100.0, 0.1, 5.0]
    model = StreamPipeline(estimator=SOLAM()).fit(X, y)
    inner = model.estimator_
    Z = model.transformer_.transform(X)
    cut = np.quantile(window_scores(inner.score_window_, 1), 0.99)
    expected = (inner.decision_function(Z) + inner._threshold() > cut).astype(int)
    np.testing.assert_array_equal(model.predict(X, threshold="alert_rate:0.01"), expected)
    with pytest.raises(ValueError, match="records no prequential scores"):
        BatchUnivariate().fit(X, y).predict(X, threshold="fpr:0.1")


def test_the_tuning_free_pipeline_has_an_operating_point():
    """StreamPipeline() (the search's race) cuts from what scores now, so an alert
    budget flags about its rate, whatever the chunks."""
    from aucstream import StreamPipeline

    X, y = _rare(12000, rate=0.01)
    one = StreamPipeline().fit(X, y)
    flagged = one.predict(X, threshold="alert_rate:0.02").mean()
    assert 0.005 < flagged < 0.05, flagged
    chunked = StreamPipeline()
    for start in range(0, X.shape[0], 777):
        chunked.partial_fit(X[start : start + 777], y[start : start + 777], classes=[0, 1])
    for threshold in ("fpr:0.01", "alert_rate:0.02"):
        assert chunked.operating_cut(threshold) == one.operating_cut(threshold)
    np.testing.assert_array_equal(
        chunked.predict(X, threshold="fpr:0.01"), one.predict(X, threshold="fpr:0.01")
    )


def _search_stream(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    return X, (X[:, 0] + rng.normal(size=n) > 1.5).astype(int)


@pytest.mark.parametrize("n", [3000, 50_000])
def test_a_search_cuts_on_the_scale_it_scores_with(n):
    """OnePassSearch's cut comes from what scores now: the leader's own cut when it
    scores alone, else the quantile of the members' last common prequential scores
    mapped to log-odds by their calibrations of now and averaged (as its scores are).
    Its cut was once taken from a window recorded at the last block end, by the
    ensemble chosen then: at 60,000 rows the leader scored alone on another scale, and
    alert_rate:0.01 flagged 0.02% of new rows, fpr:0.05 19% of their negatives. (At
    60,000 rows a false alarm now leaves a spared newcomer in the ensemble,
    ``aucstream._race_drift.spared_newcomer``: 50,000 rows give the leader alone.)"""
    from aucstream import OnePassSearch
    from aucstream._calibration import logit_map

    X, y = _search_stream(n, 0)
    search = OnePassSearch().fit(X, y)
    members = search._choice()[1]
    assert (len(members) > 1) == (n == 3000)  # (both cases are met)
    for threshold, kind, rate in (("fpr:0.05", 0, 0.05), ("alert_rate:0.01", 1, 0.01)):
        cut = search.operating_cut(threshold)
        if len(members) == 1:
            assert cut == search.candidates_[members[0]].operating_cut(threshold)
            continue
        windows = [search.candidates_[i].score_window_ for i in members]
        common = min(min(int(w[kind, 0]), WINDOW) for w in windows)
        mapped = []
        for i, w in zip(members, windows):
            count = int(w[kind, 0])
            last = [w[kind, 1 + (count - common + j) % WINDOW] for j in range(common)]
            slope, offset = logit_map(search.candidates_[i].calibration_)
            mapped.append(slope * np.array(last) + offset)
        assert cut == pytest.approx(np.quantile(np.mean(mapped, axis=0), 1.0 - rate), rel=1e-12)
    X_new, y_new = _search_stream(40_000, 1)  # new rows of the same stream
    flagged = search.predict(X_new, threshold="alert_rate:0.01") == 1
    assert 0.005 < flagged.mean() < 0.02, flagged.mean()
    flagged = search.predict(X_new, threshold="fpr:0.05") == 1
    assert 0.03 < flagged[y_new == 0].mean() < 0.07, flagged[y_new == 0].mean()


def test_operating_cut_is_the_cut_predict_applies():
    """The public cut: predict(threshold=T) flags exactly the rows whose score_samples
    exceed operating_cut(T), for a learner and a pipeline (whose learner's windows
    choose it, on the pipeline's scale); a number or a learner without windows is
    refused by name, before anything changes."""
    from aucstream import StreamPipeline
    from aucstream.batch import BatchUnivariate

    X, y = _rare(8000, rate=0.02)
    for model in (SOLAM().fit(X, y), StreamPipeline(estimator=OPAUC()).fit(X * 3.0 + 1.0, y)):
        Z = X if isinstance(model, SOLAM) else X * 3.0 + 1.0
        for threshold in ("fpr:0.01", "alert_rate:0.05"):
            cut = model.operating_cut(threshold)
            np.testing.assert_array_equal(
                model.predict(Z, threshold=threshold) == 1, model.score_samples(Z) > cut
            )
    model = SOLAM().fit(X, y)
    with pytest.raises(ValueError, match="give 'fpr:R' or 'alert_rate:R'"):
        model.operating_cut(0.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="the rate must lie in"):
        model.operating_cut("fpr:1.5")
    with pytest.raises(ValueError, match="records no prequential scores"):
        BatchUnivariate().fit(X, y).operating_cut("fpr:0.1")
