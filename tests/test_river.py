"""aucstream.river.RiverClassifier: River's checks, learn_many == learn_one, exact AUC."""

from __future__ import annotations

import dataclasses
import itertools
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import roc_auc_score

river = pytest.importorskip("river")
pd = pytest.importorskip("pandas")
from conftest import assert_same_state, snapshot  # noqa: E402
from river import checks, datasets, evaluate, metrics  # noqa: E402

from aucstream import LSSVMAUC, OAM, OPAUC, SOLAM, UnivariateOnline  # noqa: E402
from aucstream.metrics import PrequentialAUC  # noqa: E402
from aucstream.river import RiverClassifier, _hashed  # noqa: E402


def phishing(n=300):
    return list(itertools.islice(datasets.Phishing(), n))


def as_matrix(model, rows):
    """The rows in the wrapper's columns (first-appearance map), dense."""
    X = np.zeros((len(rows), model.n_features))
    for i, x in enumerate(rows):
        for key, value in x.items():
            X[i, model.features_[key]] = value
    return X


@pytest.mark.parametrize("params", list(RiverClassifier._unit_test_params()), ids=repr)
def test_river_check_estimator(params):
    """River's own battery (no check is skipped)."""
    model = RiverClassifier(**params)
    assert model._unit_test_skips() == set()
    checks.check_estimator(model)


LEARNERS = [  # seeded: the learners' generators are part of the compared state
    {"estimator": OPAUC(eta=2**-6, random_state=0), "n_features": 12},
    {
        "estimator": OPAUC(eta=2**-6, covariance="fd", sketch_size=4, random_state=0),
        "n_features": 12,
    },
    {
        "estimator": OPAUC(eta=2**-6, covariance="randomized", sketch_size=4, random_state=0),
        "n_features": 12,
    },
    {"estimator": SOLAM(random_state=0), "n_features": 12},
    {"estimator": OAM(random_state=0), "n_features": 12},
    {"estimator": OPAUC(eta=2**-6, random_state=0), "n_features": 8, "hashing": True},
]


@pytest.mark.parametrize("params", LEARNERS, ids=lambda p: f"{p['estimator']!r}-{p['n_features']}")
def test_learn_many_is_learn_one_bit_for_bit(params):
    """Batches of varying size and with features that come and go (River's #1912)."""
    rows = phishing(240)
    keys = list(rows[0][0])
    subsets = [keys[:4], keys, keys[4:], keys[:1], keys]
    one, many = RiverClassifier(**params), RiverClassifier(**params)
    start = 0
    for i, size in enumerate([7, 60, 1, 33, 139]):
        batch = rows[start : start + size]
        start += size
        cols = subsets[i]
        xs = [{c: x[c] for c in cols} for x, _ in batch]
        ys = [y for _, y in batch]
        for x, y in zip(xs, ys):
            one.learn_one(x, y)
        many.learn_many(pd.DataFrame(xs, columns=cols), pd.Series(ys))
        assert one.features_ == many.features_
        assert_same_state(snapshot(one.estimator_), snapshot(many.estimator_))
    assert one.estimator_.n_samples_seen_ == 240
    X = pd.DataFrame([x for x, _ in rows[:20]])
    probas = many.predict_proba_many(X)
    for i, (x, _) in enumerate(rows[:20]):
        assert many.predict_proba_one(x) == probas.iloc[i].to_dict()
        assert many.predict_one(x) == many.predict_many(X).iloc[i]


@pytest.mark.parametrize("estimator", [OPAUC(eta=2**-6), SOLAM(), UnivariateOnline()], ids=repr)
def test_progressive_val_score_gives_the_exact_prequential_auc(estimator):
    """progressive_val_score scores each row with the learner's calibrated
    probability before learning it: the same probabilities, in the same order,
    as the learner fed the same CSR rows one by one. Their exact AUC
    (PrequentialAUC, ties counted one half as in scikit-learn) matches River's
    RollingROCAUC over a window holding the whole stream up to River's handling of
    tied scores (the first rows, before the opposite class is seen, tie)."""
    rows = phishing(600)
    model = RiverClassifier(estimator, n_features=10)
    metric = evaluate.progressive_val_score(rows, model, metrics.RollingROCAUC(window_size=10_000))
    X = as_matrix(model, [x for x, _ in rows])
    y = np.array([y for _, y in rows])
    learner = type(estimator)(**estimator.get_params())
    wrapper = RiverClassifier(type(estimator)(**estimator.get_params()), n_features=10)
    probabilities, from_wrapper = [], []
    for i, (x, label) in enumerate(rows):
        row = sp.csr_matrix(X[i : i + 1])  # the wrapper's rows are CSR
        if not hasattr(learner, "classes_"):
            probabilities.append(0.5)
        elif hasattr(learner, "predict_proba"):
            probabilities.append(learner.predict_proba(row)[0, 1])
        else:  # the wrapper's documented map for learners without probabilities
            probabilities.append(1.0 / (1.0 + np.exp(-learner.decision_function(row)[0])))
        learner.partial_fit(row, y[i : i + 1], classes=[False, True])
        from_wrapper.append(wrapper.predict_proba_one(x).get(True, 0.0))
        wrapper.learn_one(x, label)
    np.testing.assert_allclose(from_wrapper, probabilities, rtol=0, atol=1e-12)
    exact = PrequentialAUC().update(y, np.array(probabilities)).get()
    assert exact == pytest.approx(roc_auc_score(y, probabilities), abs=1e-12)
    assert metric.get() == pytest.approx(exact, abs=1e-4)
    # and the model is the learner fitted on the same matrix in one call, up to
    # rounding: the wrapper's rows hold a dict's entries in the dict's order
    reference = type(estimator)(**estimator.get_params())
    reference.partial_fit(sp.csr_matrix(X), y, classes=[False, True])
    np.testing.assert_allclose(model.estimator_.coef_, reference.coef_, rtol=1e-12, atol=1e-15)


def test_emerging_features_grow_the_map_exactly():
    """A key seen late takes the next column; unused columns change nothing."""
    rng = np.random.default_rng(0)
    rows, ys = [], []
    for i in range(300):
        x = {"a": rng.normal(), "b": rng.normal()}
        if i >= 100:
            x["late"] = rng.normal()
        if i >= 200:
            x[7] = rng.normal()  # keys of any type
        rows.append(x)
        ys.append(bool(x["a"] + x.get("late", 0.0) > 0))
    model = RiverClassifier(OPAUC(eta=2**-5), n_features=6)
    for x, y in zip(rows, ys):
        model.learn_one(x, y)
    assert model.features_ == {"a": 0, "b": 1, "late": 2, 7: 3}
    X = as_matrix(model, rows)[:, :4]
    narrow = OPAUC(eta=2**-5).partial_fit(X, ys, classes=[False, True])
    np.testing.assert_allclose(model.estimator_.coef_[0, :4], narrow.coef_[0], rtol=1e-12)
    assert np.all(model.estimator_.coef_[0, 4:] == 0.0)
    # unknown keys at prediction time are ignored, exactly
    x = dict(rows[-1], unseen=123.0)
    assert model.decision_one(x) == model.decision_one(rows[-1])
    assert "unseen" not in model.features_


def test_new_keys_keep_a_pipeline_holding_its_examples():
    """An example with a new key takes the learner's one-example path too (its column
    as learn_many gives it): a StreamPipeline keeps holding its examples, and the
    model is learn_many's bit for bit; a refused one maps no key."""
    from aucstream import StreamPipeline

    rng = np.random.default_rng(1)
    rows = [{f"k{j}": float(rng.normal()) for j in range(min(2 + i // 25, 9))} for i in range(300)]
    ys = [bool(x["k0"] + rng.normal() > 0) for x in rows]
    one, many = (RiverClassifier(StreamPipeline(), n_features=12) for _ in "ab")
    for x, y in zip(rows, ys):
        one.learn_one(x, y)
    many.learn_many(pd.DataFrame(rows), pd.Series(ys))
    assert one.features_ == many.features_ == {f"k{j}": j for j in range(9)}
    held = int(one.estimator_.__dict__["queue_"][0])  # (read without catching up)
    assert held == 299  # (the first example starts the pipeline; none caught up since)
    scores = [(one.decision_one(x), many.decision_one(x)) for x in rows[::7]]
    assert all(a == b for a, b in scores)  # (the pipelines' unseeded generators differ)
    before = pickle.dumps(one)
    with pytest.raises(ValueError):
        one.learn_one({"k0": 1.0, "new": float("inf")}, True)
    assert "new" not in one.features_
    assert pickle.dumps(one) == before


def test_a_full_map_refuses_a_new_key_and_changes_nothing():
    model = RiverClassifier(SOLAM(), n_features=2)
    model.learn_one({"a": 1.0, "b": 2.0}, True)
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="'c' is new.*n_features=2.*hashing=True"):
        model.learn_one({"a": 1.0, "c": 2.0}, False)
    with pytest.raises(ValueError, match="'c' is new"):
        model.learn_many(pd.DataFrame([{"a": 1.0}, {"c": 1.0}]), pd.Series([True, False]))
    assert pickle.dumps(model) == before


def test_hashing_is_stable_across_processes_and_signed():
    keys = ["word", 17, ("a", 1), "émoji ✓"]
    here = [_hashed(k, 1024) for k in keys]
    code = f"from aucstream.river import _hashed; print([_hashed(k, 1024) for k in {keys!r}])"
    env = dict(os.environ, PYTHONHASHSEED="12345")  # another salt for Python's hash()
    there = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout.strip()
    assert there == repr(here)
    signs = {_hashed(f"k{i}", 64)[1] for i in range(50)}
    assert signs == {-1.0, 1.0}
    model = RiverClassifier(OPAUC(eta=2**-6), n_features=64, hashing=True)
    x = {"w": 2.0, "v": -1.0}
    model.learn_one(x, True)
    model.learn_one({"w": -1.0}, False)
    coef = model.estimator_.coef_[0]
    (cw, sw), (cv, sv) = _hashed("w", 64), _hashed("v", 64)
    assert model.decision_one(x) == pytest.approx(coef[cw] * sw * 2.0 + coef[cv] * sv * -1.0)
    assert model.features_ == {}


def test_values_none_and_nan_are_absent_strings_are_refused():
    model = RiverClassifier(SOLAM(), n_features=4)
    model.learn_one({"a": 1.0, "b": None, "c": float("nan")}, True)
    assert model.features_ == {"a": 0}
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="feature 'colour' has the value 'red'.*OneHotEncoder"):
        model.learn_one({"a": 1.0, "colour": "red"}, False)
    with pytest.raises(TypeError, match="dict"):
        model.learn_one([1.0, 2.0], False)
    with pytest.raises(ValueError, match="NaN or infinity|infinit"):
        model.learn_one({"a": float("inf")}, False)
    assert pickle.dumps(model) == before


def test_non_boolean_labels_wait_for_the_second_label():
    rows = phishing(120)
    xs = [x for x, _ in rows]
    ys = ["yes" if y else "no" for _, y in rows]
    first_yes = ys.index("yes")
    ys = ["no"] * 5 + ys[5:] if first_yes < 5 else ys
    model = RiverClassifier(OPAUC(eta=2**-6), n_features=10)
    assert model.predict_proba_one(xs[0]) == {False: 0.5, True: 0.5}
    model.learn_one(xs[0], ys[0])
    assert model.predict_proba_one(xs[1]) == {} and model.predict_one(xs[1]) is None
    for x, y in zip(xs[1:], ys[1:]):
        model.learn_one(x, y)
    # dicts are learnt as sparse rows: the same arithmetic as a CSR matrix's rows
    X = sp.csr_matrix(as_matrix(model, xs))
    reference = OPAUC(eta=2**-6).partial_fit(X, ys, classes=["no", "yes"])
    np.testing.assert_array_equal(model.estimator_.coef_, reference.coef_)
    assert set(model.predict_proba_one(xs[0])) == {"no", "yes"}
    assert model.predict_one(xs[0]) in {"no", "yes"}
    given = RiverClassifier(OPAUC(eta=2**-6), n_features=10, classes=("yes", "no"))
    for x, y in zip(xs, ys):
        given.learn_one(x, y)
    np.testing.assert_array_equal(given.estimator_.coef_, reference.coef_)
    with pytest.raises(ValueError, match="'maybe'.* not in classes_"):
        model.learn_one(xs[0], "maybe")
    fresh = RiverClassifier(SOLAM(), n_features=10)
    fresh.learn_one(xs[0], "a")
    with pytest.raises(ValueError, match="binary"):
        fresh.learn_many(pd.DataFrame(xs[1:3]), pd.Series(["b", "c"]))


def test_probabilities_are_the_learners_calibrated_probabilities():
    rows = phishing(200)
    model = RiverClassifier(OPAUC(eta=2**-6), n_features=10)
    for x, y in rows:
        model.learn_one(x, y)
    X = as_matrix(model, [x for x, _ in rows[:30]])
    expected = model.estimator_.predict_proba(sp.csr_matrix(X))[:, 1]
    for i, (x, _) in enumerate(rows[:30]):
        s = model.decision_one(x)
        p = model.predict_proba_one(x)
        assert p[True] == pytest.approx(expected[i], rel=1e-12)
        assert p[False] + p[True] == pytest.approx(1.0)
        assert model.predict_one(x) == (s > 0) == (p[True] > 0.5)


class _Uncalibrated(OPAUC):
    """A learner without probabilities (no prequential scores to calibrate on): the
    wrapper maps its score by the logistic."""

    @property
    def _tags(self):
        return dataclasses.replace(super()._tags, kernel_prequential=False)


def test_without_calibration_probabilities_are_the_logistic_of_the_score():
    rows = phishing(200)
    model = RiverClassifier(_Uncalibrated(eta=2**-6), n_features=10)
    for x, y in rows:
        model.learn_one(x, y)
    assert not hasattr(model.estimator_, "predict_proba")
    for x, _ in rows[:30]:
        s = model.decision_one(x)
        p = model.predict_proba_one(x)
        assert p[True] == pytest.approx(1 / (1 + np.exp(-s)), rel=1e-12)
        assert model.predict_one(x) == (s > 0)


def test_pickle_in_mid_stream_continues_identically():
    rows = phishing(200)
    model = RiverClassifier(OPAUC(eta=2**-6, covariance="hash", sketch_size=4), n_features=10)
    for x, y in rows[:100]:
        model.learn_one(x, y)
    copy = pickle.loads(pickle.dumps(model))
    for x, y in rows[100:]:
        model.learn_one(x, y)
        copy.learn_one(x, y)
    assert_same_state(snapshot(model.estimator_), snapshot(copy.estimator_))


def test_refusals():
    with pytest.raises(TypeError, match="online aucstream learner"):
        RiverClassifier(LSSVMAUC())
    with pytest.raises(TypeError, match="online aucstream learner"):
        RiverClassifier(object())
    with pytest.raises(ValueError, match="n_features"):
        RiverClassifier(SOLAM(), n_features=0)
    with pytest.raises(TypeError, match="n_features"):
        RiverClassifier(SOLAM(), n_features=2.5)
    with pytest.raises(ValueError, match="two different labels"):
        RiverClassifier(SOLAM(), classes=(1, 1))
    model = RiverClassifier(SOLAM(), n_features=4)
    with pytest.raises(ValueError, match="rows"):
        model.learn_many(pd.DataFrame([{"a": 1.0}]), pd.Series([True, False]))


class _Recording(RiverClassifier):
    """The wrapper, recording each probability and score it gives (as River asks)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.given: list[tuple[float, float]] = []

    def predict_proba_one(self, x):
        proba = super().predict_proba_one(x)
        self.given.append((proba[True], self.decision_one(x)))
        return proba


class _Scores:
    """A stand-in detector for prequential: records every score, never an alarm."""

    drift_detected = False

    def __init__(self):
        self.scores = []

    def update(self, score, label):
        self.scores.append(score)


def test_progressive_val_score_is_prequential_from_the_first_example():
    """River's progressive validation of the wrapper scores and learns every example as
    aucstream.evaluation.prequential does: the same scores and probabilities from the
    first row, so the same log-loss and window AUC of the scores. River's
    RollingROCAUC ranks the probabilities, prequential's window_auc the scores: the
    calibration map between them changes as it learns (p = sigmoid(k_t * score) with
    a slope k_t of its own at each time), so the two windows rank examples of
    different times differently (0.96361 and 0.96385 here); each is checked exactly
    on what it ranks."""
    from aucstream.evaluation import prequential
    from aucstream.metrics import RollingAUC

    rows = list(datasets.Phishing())
    log_loss, rolling = metrics.LogLoss(), metrics.RollingROCAUC(window_size=500)
    for metric in (log_loss, rolling):  # River takes them one at a time (no weights)
        model = _Recording(SOLAM(random_state=0), n_features=12)
        evaluate.progressive_val_score(rows, model, metric)
    proba, river_scores = (np.array(v) for v in zip(*model.given))
    assert np.all((proba > 0) & (proba < 1))
    X = sp.csr_matrix(as_matrix(model, [x for x, _ in rows]))
    y = np.array([label for _, label in rows])
    seen = _Scores()
    curve = prequential(
        SOLAM(random_state=0),
        ((X[i : i + 100], y[i : i + 100]) for i in range(0, len(y), 100)),
        window=500,
        metrics=["auc", "window_auc", "log_loss", "alarms"],
        detector=seen,
    )
    np.testing.assert_allclose(seen.scores, river_scores, rtol=1e-12, atol=1e-15)
    last = curve.iloc[-1]
    assert last["log_loss"] == pytest.approx(log_loss.get(), rel=1e-9)
    assert last["window_auc"] == pytest.approx(
        roc_auc_score(y[-500:], river_scores[-500:]), abs=1e-9
    )
    assert last["auc"] == pytest.approx(roc_auc_score(y, river_scores), abs=1e-9)
    # River's window over the probabilities is the exact window AUC of those
    exact = RollingAUC(500, pos_label=True).update(y, proba).get()
    assert rolling.get() == pytest.approx(exact, abs=1e-9)


def test_numeric_labels_are_learnt_from_the_first_row():
    rows = phishing(60)
    xs = [x for x, _ in rows]
    for negative in (0, -1):
        ys = [1 if y else negative for _, y in rows]
        ys[0] = 1  # a first label 1: (0, 1) until a -1 comes
        model = RiverClassifier(SOLAM(random_state=0), n_features=10)
        model.learn_one(xs[0], ys[0])
        assert model._fitted() and set(model.predict_proba_one(xs[1])) == {0, 1}  # (0, 1) so far
        for x, y in zip(xs[1:], ys[1:]):
            model.learn_one(x, y)
        X = sp.csr_matrix(as_matrix(model, xs))
        reference = SOLAM(random_state=0).partial_fit(X, ys, classes=[negative, 1])
        np.testing.assert_allclose(model.estimator_.coef_, reference.coef_, rtol=1e-12)
        assert model.estimator_.classes_.tolist() == [negative, 1]
        assert model.predict_one(xs[0]) in (negative, 1)
    with pytest.raises(ValueError, match="not in classes_"):
        model.learn_one(xs[0], 0)  # a third label


@pytest.mark.parametrize("learning", [True, False])
def test_the_quick_row_map_is_the_loops(learning, monkeypatch):
    """River's usual rows (float values, known keys) are mapped in one comprehension;
    every row gives what the per-key loop gives (the loop alone: ``_FLOATS`` empty)."""
    import aucstream.river as adapter

    model = RiverClassifier(SOLAM(), n_features=8)
    model.learn_one({"a": 1.0, "b": -2.0, 3: 0.5}, True)
    model.learn_one({"a": -1.0, "c": 2.0}, False)
    rows = [
        {"a": 1.5, "b": -0.0, 3: 2.0},
        {"c": 0.25},
        {},
        {"a": 1.0, "new": 2.0},  # a new key
        {"a": float("nan"), "b": 1.0},  # NaN: absent
        {"a": float("inf"), "b": 1.0},
        {"a": 1e308, "b": 1e308},  # a finite row of infinite sum
        {"a": 1, "b": True, "c": np.float64(2.0)},  # other numbers
        {"a": None, "b": 1.0},
        {"a": "1.0"},  # refused by the loop
        {"b": 1.0, "a": 2.0},  # another key order
    ]
    quick = [model._row(x, learning) for x in rows]
    monkeypatch.setattr(adapter, "_FLOATS", frozenset())
    loop = [model._row(x, learning) for x in rows]
    for got, want in zip(quick, loop):
        assert got == want
        if got is not None:
            assert list(got) == list(want)  # the same order
            assert [np.float64(v).tobytes() for v in got.values()] == [
                np.float64(v).tobytes() for v in want.values()
            ]
