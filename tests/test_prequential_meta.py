"""prequential feeds a StreamPipeline over a plain learner whole chunks at delay 0 (one
``test_then_train`` per chunk), with the brute-force loop's results. OnePassSearch,
whose scoring leader can change with every example, has no calibration to replay: it
records its decisions while it learns a chunk instead (``aucstream._search_scores``,
``tests/test_prequential_search.py``)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import log_loss, roc_auc_score
from test_prequential import (
    ALL,
    Recorder,
    brute_force,
    callable_delay,
    check_columns,
    data,
    delays_of,
)

from aucstream import OPAUC, SOLAM, OnePassSearch, StreamPipeline, _calibration
from aucstream.datasets import iter_chunks
from aucstream.evaluation import _prequential_merge, prequential
from aucstream.evaluation._prequential_parts import _calibration_owner, _one_example
from aucstream.preprocessing import OnlineStandardScaler

PIPELINES = {
    # the papers' updates: the running column scale's first scaled values (+-1) give
    # analytic ties that the kernel and decision_function round either way
    "scaler+SOLAM": lambda: StreamPipeline(
        OnlineStandardScaler(), SOLAM(random_state=0, column_scale=None)
    ),
    "scaler+OPAUC": lambda: StreamPipeline(OnlineStandardScaler(), OPAUC(random_state=0)),
}


class Counting:
    """Counts a model's learning calls (test_then_train, partial_fit) per chunk size."""

    def __init__(self, model, monkeypatch):
        self.calls: list[tuple[str, int]] = []
        for name in ("test_then_train", "partial_fit"):
            method = getattr(model, name)
            monkeypatch.setattr(model, name, self.wrap(name, method))

    def wrap(self, name, method):
        def call(X, y, *args, **kwargs):
            self.calls.append((name, X.shape[0]))
            return method(X, y, *args, **kwargs)

        return call


@pytest.mark.parametrize("delay", [0, 3, callable_delay], ids=lambda d: str(d)[:14])
@pytest.mark.parametrize("chunk", [1, 250])
@pytest.mark.parametrize("name", list(PIPELINES))
def test_pipelines_equal_the_brute_force_loop(name, chunk, delay):
    X, y = data(120, seed=2)
    make = PIPELINES[name]
    ref = brute_force(make(), X, y, delays_of(delay, X, y), (0, 1))
    curve = prequential(make(), iter_chunks(X, y, chunk), delay=delay, metrics=ALL, every=40)
    check_columns(curve, ref, y, (0, 1))


@pytest.mark.parametrize("chunk", [1, 250])
@pytest.mark.parametrize("make", [StreamPipeline, OnePassSearch], ids=["pipeline", "search"])
def test_a_row_alone_goes_through_the_one_example_methods(make, chunk, monkeypatch):
    """With a delay every row is scored and learnt alone: the default holders take
    decision_one, predict_proba_one and learn_one (no validated chunk of one row), and
    the run is still the brute-force loop's."""
    X, y = data(150, seed=5)
    ref = brute_force(make(), X, y, delays_of(3, X, y), (0, 1))
    model = make()
    assert _one_example(model) and not _one_example(Subclassed())
    calls = Counting(model, monkeypatch)
    monkeypatch.setattr(model, "decision_function", _refused)
    curve = prequential(model, iter_chunks(X, y, chunk), delay=3, metrics=ALL, every=50)
    check_columns(curve, ref, y, (0, 1))
    # chunks learnt: the first label (with the classes) and the three the end releases
    assert calls.calls == [("partial_fit", 1), ("partial_fit", 3)]


@pytest.mark.parametrize(
    "make",
    [lambda: SOLAM(random_state=0, column_scale=None), PIPELINES["scaler+SOLAM"], StreamPipeline],
    ids=["SOLAM", "scaler+SOLAM", "default"],
)
def test_a_csr_row_scored_alone_is_learnt_from_the_same_dict(make, monkeypatch):
    """With a delay a CSR row is scored alone and learnt alone later: its dict (the
    one-example methods' row) is made once, when it is scored, and reused to learn it
    (not made again); the run is still the brute-force loop's, and the model the
    same. Rows whose labels are dropped are not kept."""
    import scipy.sparse as sp

    from aucstream.evaluation import _prequential as P

    X, y = data(150, seed=5)
    X[X < 0.2] = 0.0  # (rows of different lengths)
    Xs = sp.csr_matrix(X)
    made = []
    plain = P.plain_row
    monkeypatch.setattr(P, "plain_row", lambda X, j: made.append(j) or plain(X, j))
    monkeypatch.setattr(P, "_WEAVE", False)  # (SOLAM's rows would be woven: row by row)
    ref = brute_force(make(), Xs, y, delays_of(3, X, y), (0, 1))
    model = make()
    curve = prequential(model, iter_chunks(Xs, y, 40), delay=3, metrics=ALL, every=50)
    check_columns(curve, ref, y, (0, 1))
    # each row scored alone once (the first is scored untrained), learnt from its dict;
    # the first label, learnt before anything is fitted, and the three the end
    # releases go in chunks
    assert len(made) == 149
    kept = prequential(make(), iter_chunks(Xs, y, 40), delay=3, label_probability=0.5)
    assert kept["n_learnt"].iloc[-1] < 150


@pytest.mark.parametrize("delay", [0, 5])
@pytest.mark.parametrize("make", [SOLAM, StreamPipeline], ids=["SOLAM", "pipeline"])
def test_a_reader_that_refills_its_arrays(make, delay):
    """Rows kept past their chunk (labels released later, chunks read ahead to find
    both classes, a holder's queue) are the rows given: a reader that fills the same
    arrays for every chunk changes nothing."""
    X, y = data(300, seed=6)
    order = np.r_[
        np.flatnonzero(y == 0)[:130], np.flatnonzero(y == 1), np.flatnonzero(y == 0)[130:]
    ]
    X, y = X[order], y[order]  # the first two chunks of one class: read ahead

    def refilled():
        rows, labels = np.empty((60, X.shape[1])), np.empty(60, dtype=y.dtype)
        for a in range(0, len(y), 60):
            rows[:], labels[:] = X[a : a + 60], y[a : a + 60]
            yield rows, labels

    ref = brute_force(make(), X, y, delays_of(delay, X, y), (0, 1))
    curve = prequential(make(), refilled(), delay=delay, metrics=ALL, every=150)
    check_columns(curve, ref, y, (0, 1))


class Subclassed(SOLAM):
    def decision_function(self, X):  # (its decision_one would not follow it)
        return super().decision_function(X) + 1.0


def _refused(X):
    raise AssertionError("decision_function called on a row alone")


def test_delay_0_feeds_a_pipeline_whole_chunks(monkeypatch):
    X, y = data(300, seed=3)
    model = PIPELINES["scaler+SOLAM"]()
    counting = Counting(model, monkeypatch)
    prequential(model, iter_chunks(X, y, 100), metrics=ALL)
    assert counting.calls == [("test_then_train", 300)]  # (small chunks together)
    monkeypatch.setattr(_prequential_merge, "ENABLED", False)
    model = PIPELINES["scaler+SOLAM"]()
    counting = Counting(model, monkeypatch)
    prequential(model, iter_chunks(X, y, 100), metrics=ALL)
    assert counting.calls == [("test_then_train", 100)] * 3
    assert _calibration_owner(model)() is model.estimator_
    # OnePassSearch's decision before each example is not what test_then_train reports
    assert _calibration_owner(OnePassSearch()) is None
    assert _calibration_owner(StreamPipeline()) is None  # the default: over OnePassSearch


def test_a_fitted_pipeline_continues_on_its_learners_calibration():
    X, y = data(240, seed=4)
    make = PIPELINES["scaler+SOLAM"]
    model, ref = make(), make()
    model.partial_fit(X[:120], y[:120], classes=[0, 1])
    ref.partial_fit(X[:120], y[:120], classes=[0, 1])
    curve = prequential(model, iter_chunks(X[120:], y[120:], 50), metrics=ALL)
    scores, proba = [], []
    for i in range(120, 240):  # the fitted pipeline scores from the first row
        scores.append(ref.decision_function(X[i : i + 1])[0])
        proba.append(ref.predict_proba(X[i : i + 1])[0, 1])
        ref.partial_fit(X[i : i + 1], y[i : i + 1])
    last = curve.iloc[-1]
    assert last["auc"] == pytest.approx(roc_auc_score(y[120:], scores), abs=1e-9)
    assert last["log_loss"] == pytest.approx(log_loss(y[120:], proba), abs=1e-9)
    np.testing.assert_allclose(model.decision_function(X), ref.decision_function(X), atol=1e-12)


@pytest.mark.parametrize(
    "make",
    [lambda: SOLAM(), lambda: StreamPipeline(OnlineStandardScaler(), SOLAM())],
    ids=["SOLAM", "scaler+SOLAM"],
)
def test_delay_0_scores_equal_decision_function_to_rounding(make):
    """The delay-0 path's scores are the kernel's prequential scores calibrated as
    they are learnt: decision_function's up to rounding. Where decision_function
    gives an analytic 0 exactly (seed 1: the first rows, before the model has a
    direction) the kernel gives 0.0 too (it sums the average's score coordinate by
    coordinate, as coef_ is formed), so no tie the brute force keeps is broken."""
    X, y = data(80, seed=1)
    if not isinstance(make(), StreamPipeline):
        scaler = OnlineStandardScaler()
        scaler.start(X.shape[1])
        X = scaler.partial_fit_transform(X)
    ref = brute_force(make(), X, y, np.zeros(80, int), (0, 1))
    recorder = Recorder()
    curve = prequential(make(), iter_chunks(X, y, 40), detector=recorder, metrics=["alarms"])
    assert curve["n_seen"].iloc[-1] == 80
    np.testing.assert_allclose(recorder.scores, ref["scores"], rtol=0, atol=1e-12)
    zeros = ref["scores"] == 0.0
    assert zeros.any()
    np.testing.assert_array_equal(np.asarray(recorder.scores)[zeros], 0.0)


@pytest.mark.parametrize(
    "kwargs", [{}, {"column_scale": None}, {"constraint": "l1"}, {"half_life": 50}]
)
def test_solams_kernel_writes_what_the_replayed_calibration_gives(kwargs):
    """Asked to (``_calibration.writing``), SOLAM's kernel writes as it learns the
    decision scores and probabilities that replaying the calibration over its
    prequential scores gives, bit for bit, and learns the same model; a request of
    another size or for another learner is not taken."""
    X, y = data(600, seed=5)
    ours, ref = SOLAM(**kwargs), SOLAM(**kwargs)
    for model in (ours, ref):
        model.partial_fit(X[:100], y[:100], classes=[0, 1])
    state = ref.calibration_.copy()
    for lo in range(100, 600, 125):
        rows = slice(lo, lo + 125)
        out = np.full((2, 125), np.nan)
        with _calibration.writing(ours, out) as taken:
            raw = ours.test_then_train(X[rows], y[rows])
        assert taken[0]
        expected = ref.test_then_train(X[rows], y[rows])
        replayed = np.empty((2, 125))
        _calibration.replay(
            state, expected, np.where(y[rows] == 1, 1.0, -1.0), *replayed, _calibration.NO_WEIGHTS
        )
        np.testing.assert_array_equal(raw, expected)
        np.testing.assert_array_equal(out, replayed)
        np.testing.assert_array_equal(ours.calibration_, ref.calibration_)
    np.testing.assert_array_equal(ours.coef_, ref.coef_)
    for learner, size in ((ours, 3), (ref, 2)):
        with _calibration.writing(learner, np.empty((2, size))) as taken:
            ours.test_then_train(X[:2], y[:2])
        assert not taken[0]


@pytest.mark.parametrize(
    "make, replays",
    [
        (SOLAM, 0),
        (lambda: SOLAM(column_scale=None), 0),
        (lambda: StreamPipeline(OnlineStandardScaler(), SOLAM()), 1),
        (OPAUC, 4),
    ],
    ids=["SOLAM", "SOLAM-papers", "scaler+SOLAM", "OPAUC"],
)
def test_delay_0_replays_only_what_no_kernel_wrote(make, replays, monkeypatch):
    """prequential replays the calibration over the chunks of a learner whose kernel
    does not write the calibrated scores (OPAUC's) and over a pipeline's chunk before
    its learner exists, and takes SOLAM's from its kernel (from the first chunk, and
    behind a pipeline after it); the curve is the brute force's."""
    X, y = data(200, seed=2)
    ref = brute_force(make(), X, y, np.zeros(200, int), (0, 1))
    sizes = []
    replay = _calibration.replay
    monkeypatch.setattr(
        _calibration, "replay", lambda s, *a: sizes.append(a[0].size) or replay(s, *a)
    )
    emitted = Recorder()
    curve = prequential(
        make(), iter_chunks(X, y, 50), metrics=[*ALL, "alarms"], every=50, detector=emitted
    )
    assert sizes == [50] * replays
    # equal to rounding (SOLAM's analytic zeros exactly: its AUCs are the brute force's)
    np.testing.assert_allclose(emitted.scores, ref["scores"], rtol=0, atol=1e-12)
    if make is OPAUC:
        ref["scores"] = np.asarray(emitted.scores)
        ref["pred"] = ref["scores"] > 0
    check_columns(curve, ref, y, (0, 1))


def test_step_scored_is_the_decision_and_probability_before_the_step():
    """``_calibration.step_scored`` (what SOLAM's kernel stores when asked to write)
    returns, bit for bit, ``score - threshold_one`` and ``probability_one`` of the
    state before the example, and leaves the state that ``step`` leaves: before the
    calibration is ready (one class, the prior), after, and for weight 0."""
    rng = np.random.default_rng(3)
    scores = rng.normal(size=400) * 3.0
    y_pm = np.where(rng.random(400) < 0.3, 1.0, -1.0)
    y_pm[:5] = -1.0  # one class first: not ready, the smoothed prior
    weights = np.where(rng.random(400) < 0.1, 0.0, rng.random(400) + 0.5)
    ours, ref = _calibration.new_state(), _calibration.new_state()
    for s, y, w in zip(scores.tolist(), y_pm.tolist(), weights.tolist()):
        expected = (s - _calibration.threshold_one(ref), _calibration.probability_one(ref, s))
        assert _calibration.step_scored(ours, s, y, w) == expected
        _calibration.step(ref, s, y, w)
        np.testing.assert_array_equal(ours, ref)
    assert _calibration.is_ready(ours)
