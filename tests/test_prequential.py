"""aucstream.evaluation.prequential: exact against a brute-force loop and scikit-learn's
batch metrics at every checkpoint; bad input; calibrated probabilities never 0 or 1."""

from __future__ import annotations

import heapq
import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file
from sklearn.linear_model import SGDClassifier
from sklearn.metrics import (
    average_precision_score,
    brier_score_loss,
    cohen_kappa_score,
    confusion_matrix,
    log_loss,
    roc_auc_score,
)

import aucstream
from aucstream import SOLAM, OnePassSearch, StreamPipeline
from aucstream._stream_metrics import expected_calibration_error
from aucstream.checks import pickled_state
from aucstream.datasets import iter_chunks, iter_svmlight
from aucstream.evaluation import prequential
from aucstream.evaluation._prequential import METRICS, model_bytes
from aucstream.preprocessing import OnlineStandardScaler

ALL = [m for m in METRICS if METRICS[m].requires is None]


def data(n=400, d=4, seed=0, labels=(0, 1)):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + X[:, 1] + rng.normal(size=n) > 0.3, labels[1], labels[0])
    return X, y


class Flagger:
    """A stand-in drift detector: an alarm at every confidently wrong score."""

    def __init__(self):
        self.drift_detected = False

    def update(self, score, label):
        self.drift_detected = (score > 0.5) != bool(label) and abs(score) > 0.5


class Recorder:
    """A stand-in detector that keeps every score it is fed (never an alarm)."""

    drift_detected = False

    def __init__(self):
        self.scores = []

    def update(self, score, label):
        self.scores.append(score)


def brute_force(model, X, y, delays, classes, keep=None, window=None):
    """The definition, one example at a time: score x_i on one row (0.0, 1/2 and the
    negative class before anything is learnt), then learn, one row per call, every
    label released by then (release i + delay_i, ties by arrival); the end releases
    the rest."""
    n = len(y)
    keep = np.ones(n, bool) if keep is None else keep
    out = {"scores": [], "proba": [], "pred": [], "alarms": []}
    pending, fitted = [], False
    detector = Flagger()
    alarms = 0
    for i in range(n):
        row = X[i : i + 1]
        if fitted:
            s = float(model.decision_function(row)[0])
            if hasattr(model, "predict_proba"):
                p = float(model.predict_proba(row)[0, 1])
            else:
                p = float(np.clip(1 / (1 + np.exp(-s)), 1e-15, 1 - 1e-15))
            pred = model.predict(row)[0] == classes[1]
        else:
            s, p, pred = 0.0, 0.5, False
        out["scores"].append(s)
        out["proba"].append(p)
        out["pred"].append(pred)
        detector.update(s, y[i] == classes[1])
        alarms += detector.drift_detected
        out["alarms"].append(alarms)
        if keep[i]:
            heapq.heappush(pending, (i + delays[i], i))
        while pending and pending[0][0] <= i:
            _, j = heapq.heappop(pending)
            model.partial_fit(X[j : j + 1], y[j : j + 1], classes=list(classes))
            fitted = True
    while pending:  # the end releases the rest
        _, j = heapq.heappop(pending)
        model.partial_fit(X[j : j + 1], y[j : j + 1], classes=list(classes))
    out = {k: np.asarray(v) for k, v in out.items()}
    return out


def check_columns(curve, ref, y, classes, window=None):
    """Every column at every checkpoint against scikit-learn on the reference's scores."""
    for _, row in curve.iterrows():
        m = int(row["n_seen"])
        pos = y[:m] == classes[1]
        s, p, pred = ref["scores"][:m], ref["proba"][:m], ref["pred"][:m]
        expected = {
            "auc": roc_auc_score(pos, s),
            "average_precision": average_precision_score(pos, s),
            "log_loss": log_loss(pos, p, labels=[False, True]),
            "brier": brier_score_loss(pos, p),
            "ece": ece_reference(pos, p),
            "g_mean": g_mean_reference(pos, pred),
            "kappa": cohen_kappa_score(pos, pred),
            "positive_rate": pos.mean(),
        }
        if "partial_auc" in curve:
            expected["partial_auc"] = roc_auc_score(pos, s, max_fpr=0.25)
        if window is not None:
            expected["window_auc"] = roc_auc_score(pos[-window:], s[-window:])
            if "window_partial_auc" in curve:
                w_pos, w_s = pos[-window:], s[-window:]
                expected["window_partial_auc"] = (
                    roc_auc_score(w_pos, w_s, max_fpr=0.25) if 0 < w_pos.sum() < window else np.nan
                )
        for name, value in expected.items():
            if name in curve:
                assert row[name] == pytest.approx(value, rel=1e-9, abs=1e-9), (name, m)


def ece_reference(pos, p):
    total = 0.0
    for b in range(10):
        inside = (p >= b / 10) & (p < (b + 1) / 10) if b < 9 else p >= 0.9
        total += abs(pos[inside].sum() - p[inside].sum())
    return total / len(p)


def g_mean_reference(pos, pred):
    tn, fp, fn, tp = confusion_matrix(pos, pred, labels=[False, True]).ravel()
    return math.sqrt(tp / (tp + fn) * tn / (tn + fp))


def callable_delay(i, x, y):
    return int(abs(x[0]) * 10) % 13 + (3 if y else 0)


def delays_of(delay, X, y):
    if callable(delay):
        return np.array([callable_delay(i, X[i], y[i]) for i in range(len(y))])
    return np.full(len(y), delay)


MODELS = {
    "SOLAM": lambda: SOLAM(random_state=0),
    "SGD": lambda: SGDClassifier(shuffle=False, random_state=0),
}


@pytest.mark.parametrize(
    "delay", [0, 1, 7, 50, callable_delay], ids=lambda d: getattr(d, "__name__", str(d))
)
@pytest.mark.parametrize("chunk", [1, 250])  # 250: one chunk of 100 (a run per call)
@pytest.mark.parametrize("name", list(MODELS))
def test_exact_against_the_brute_force_loop(name, chunk, delay):
    X, y = data(100)
    ref = brute_force(MODELS[name](), X, y, delays_of(delay, X, y), (0, 1))
    model, emitted = MODELS[name](), Recorder()
    curve = prequential(
        model,
        iter_chunks(X, y, chunk),
        delay=delay,
        every=50,
        window=40,
        metrics=[*ALL, "window_auc", "partial_auc", "window_partial_auc", "alarms"],
        detector=emitted,
        max_fpr=0.25,
    )
    # the scores as emitted equal the definition's to rounding; the metrics are then
    # checked exactly on the emitted scores (below, against scikit-learn)
    np.testing.assert_allclose(emitted.scores, ref["scores"], rtol=1e-12, atol=1e-15)
    if name == "SOLAM":
        # prequential scores aucstream learners through their compiled paths (the
        # kernel's dot product in test_then_train, the one-example path for one row),
        # decision_function through BLAS: equal to rounding (above). SOLAM's weights
        # after its first two examples are rounding noise (~1e-17, zero in exact
        # arithmetic), so a score can be 0.0 in one and ~1e-18 in the other: predict,
        # decision_function > 0 by the base class's contract, is taken on the emitted.
        ref["pred"] = np.asarray(emitted.scores) > 0
    ref["scores"] = np.asarray(emitted.scores)
    assert curve["n_seen"].tolist() == list(range(50, len(y) + 1, 50))
    assert curve["auc"].iloc[-1] == pytest.approx(roc_auc_score(y, ref["scores"]), abs=1e-9)
    check_columns(curve, ref, y, (0, 1), window=40)
    assert curve["n_learnt"].iloc[-1] == len(y)
    for _, row in curve.iloc[:-1].iterrows():  # labels released by then
        m = int(row["n_seen"])
        d = delays_of(delay, X, y)[:m]
        assert row["n_learnt"] == int(np.sum(np.arange(m) + d <= m - 1))


def test_the_model_ends_as_the_brute_force_model():
    X, y = data(300)
    ref_model = SOLAM(random_state=0)
    brute_force(ref_model, X, y, np.full(len(y), 7), (0, 1))
    model = SOLAM(random_state=0)
    prequential(model, iter_chunks(X, y, 64), delay=7)
    np.testing.assert_allclose(model.coef_, ref_model.coef_, rtol=1e-12, atol=1e-12)
    assert model.n_samples_seen_ == len(y)


def test_dropped_labels_are_scored_but_never_learnt():
    X, y = data(400)
    keep = np.random.default_rng(3).random(len(y)) < 0.3
    ref = brute_force(SOLAM(random_state=0), X, y, np.full(len(y), 5), (0, 1), keep=keep)
    model = SOLAM(random_state=0)
    curve = prequential(
        model, iter_chunks(X, y, 77), delay=5, label_probability=0.3, random_state=3, metrics=ALL
    )
    check_columns(curve, ref, y, (0, 1))
    assert model.n_samples_seen_ == curve["n_learnt"].iloc[-1] == keep.sum()


@pytest.mark.parametrize(
    "make",
    [lambda: StreamPipeline(OnlineStandardScaler(), SOLAM()), lambda: OnePassSearch()],
    ids=["StreamPipeline", "OnePassSearch"],
)
@pytest.mark.parametrize("delay", [0, 4])
def test_meta_learners(make, delay):
    # seed 1: the first scores of the scaled stream are 0 analytically; SOLAM's kernel
    # (test_then_train, behind the delay-0 path) gives them as 0.0, as decision_function
    # does (it summed them as rounding noise of either sign, which broke the ties)
    X, y = data(80, seed=1)
    ref = brute_force(make(), X, y, np.full(len(y), delay), (0, 1))
    curve = prequential(make(), iter_chunks(X, y, 40), delay=delay, metrics=ALL)
    check_columns(curve, ref, y, (0, 1))


# The tests below hold SOLAM to its papers' updates (column_scale=None): with columns in
# their running scale, the first rows' scaled values are exactly +-1, whose scores
# are analytic ties that the rounding of a file's values (or of the kernel against
# decision_function) breaks either way, and the calibration follows the tie broken.
def test_alarms_count_the_detectors_drifts():
    X, y = data(300)
    ref = brute_force(SOLAM(random_state=0, column_scale=None), X, y, np.full(len(y), 2), (0, 1))
    curve = prequential(
        SOLAM(random_state=0, column_scale=None),
        iter_chunks(X, y, 50),
        delay=2,
        detector=Flagger(),
        every=100,
    )
    assert "alarms" in curve and "window_auc" not in curve
    assert curve["alarms"].tolist() == [ref["alarms"][m - 1] for m in curve["n_seen"]]
    assert ref["alarms"][-1] > 0


def test_inputs_csr_pandas_and_files_give_the_same_curve(tmp_path):
    X, y = data(200, labels=(-1, 1))
    path = tmp_path / "d.svm"
    dump_svmlight_file(X, y, str(path))
    streams = {
        "dense": iter_chunks(X, y, 60),
        "csr": iter_chunks(sp.csr_matrix(X), y, 45),
        "pandas": (
            (pd.DataFrame(X[i : i + 70]), pd.Series(y[i : i + 70])) for i in range(0, 200, 70)
        ),
        "file": iter_svmlight(path, n_features=4, zero_based=True, chunk_size=33),
    }
    curves, emitted = {}, {}
    for name, stream in streams.items():
        emitted[name] = Recorder()
        curves[name] = prequential(
            SOLAM(random_state=0, column_scale=None), stream, delay=3, every=100,
            detector=emitted[name], metrics=["log_loss", "brier", "positive_rate", "alarms"],
        )  # fmt: skip
    columns = ["n_seen", "n_learnt", "log_loss", "brier", "positive_rate"]
    for name in ("csr", "pandas", "file"):  # the same scores, to rounding (CSR dot products)
        np.testing.assert_allclose(emitted[name].scores, emitted["dense"].scores, atol=1e-15)
        np.testing.assert_allclose(curves[name][columns], curves["dense"][columns], rtol=1e-12)


def test_defaults_and_first_chunk_of_one_class():
    X, y = data(200)
    order = np.argsort(y, kind="stable")  # all negatives first
    X, y = X[order], y[order]
    curve = prequential(SOLAM(column_scale=None), iter_chunks(X, y, 10))
    assert list(curve.columns) == [
        "n_seen", "n_learnt", "auc", "log_loss", "brier", "positive_rate", "cpu_seconds",
        "model_bytes",
    ]  # fmt: skip
    assert len(curve) == 1 and curve["n_seen"].iloc[0] == 200
    ref = brute_force(SOLAM(column_scale=None), X, y, np.zeros(200, int), (0, 1))
    assert curve["auc"].iloc[0] == pytest.approx(roc_auc_score(y, ref["scores"]), abs=1e-9)
    model = SOLAM(column_scale=None)
    prequential(model, iter_chunks(X[:50], y[:50], 10), classes=[0, 1])
    assert model.classes_.tolist() == [0, 1]
    assert curve["model_bytes"].iloc[0] == model_bytes(model) > 0
    with pytest.raises(ValueError, match="classes="):
        prequential(SOLAM(column_scale=None), iter_chunks(X[:50], y[:50], 10))


def test_a_fitted_model_continues():
    X, y = data(300)
    model = SOLAM(random_state=0).fit(X[:100], y[:100])
    ref_model = SOLAM(random_state=0).fit(X[:100], y[:100])
    curve = prequential(model, iter_chunks(X[100:], y[100:], 50), delay=3)
    scores = []
    for i in range(100, 300):  # the fitted model scores from the first row
        scores.append(ref_model.decision_function(X[i : i + 1])[0])
        if i - 3 >= 100:
            ref_model.partial_fit(X[i - 3 : i - 2], y[i - 3 : i - 2])
    assert curve["auc"].iloc[-1] == pytest.approx(roc_auc_score(y[100:], scores), abs=1e-9)


def test_ece_helper():
    rng = np.random.default_rng(0)
    pos = rng.random(500) < 0.3
    p = rng.random(500)
    assert expected_calibration_error(pos, p) == pytest.approx(ece_reference(pos, p), abs=1e-12)


BAD = [
    ({"delay": -1}, ValueError, "delay"),
    ({"delay": 1.5}, TypeError, "delay"),
    ({"delay": True}, TypeError, "delay"),
    ({"delay": lambda i, x, y: float("nan")}, ValueError, "delay"),
    ({"delay": lambda i, x, y: -2}, ValueError, "delay"),
    ({"delay": lambda i, x, y: 2.0}, ValueError, "delay"),
    ({"window": 0}, ValueError, "window"),
    ({"window": 10**15}, ValueError, "memory budget"),
    ({"every": 0}, ValueError, "every"),
    ({"every": 2.5}, TypeError, "every"),
    ({"metrics": ["auc", "roc"]}, ValueError, "unknown metric 'roc'.*auc, window_auc"),
    ({"metrics": ["window_auc"]}, ValueError, "window="),
    ({"label_probability": 0.0}, ValueError, "label_probability"),
    ({"label_probability": 1.5}, ValueError, "label_probability"),
    ({"classes": [0, 0]}, ValueError, "classes"),
    ({"detector": object()}, TypeError, "detector"),
]


@pytest.mark.parametrize("kwargs, error, match", BAD, ids=lambda v: str(v)[:30])
def test_bad_parameters(kwargs, error, match):
    X, y = data(50)
    model = SOLAM().fit(X, y)
    before = model.coef_.copy()
    with pytest.raises(error, match=match):
        prequential(model, iter_chunks(X, y, 10), **kwargs)
    np.testing.assert_array_equal(model.coef_, before)
    assert model.n_samples_seen_ == 50


def test_bad_streams_change_nothing():
    X, y = data(60)
    model = SOLAM().fit(X, y)
    before = model.coef_.copy()
    bad_streams = {
        "features; the earlier chunks had 4": [(X[:20], y[:20]), (X[20:40, :3], y[20:40])],
        "not one of the classes": [(X[:20], y[:20]), (X[20:40], np.full(20, 2))],
        "no examples": [],
    }
    for match, chunks in bad_streams.items():
        with pytest.raises(ValueError, match=match):
            prequential(model, iter(chunks), delay=2)
        np.testing.assert_array_equal(model.coef_, before)
        assert model.n_samples_seen_ == 60
    with pytest.raises(ValueError, match="more than two labels"):
        prequential(SOLAM(), iter([(X[:3], np.array([0, 1, 2]))]))
    with pytest.raises(ValueError, match="not one of the classes"):
        prequential(SOLAM(), iter([(X[:3], np.array([0, 1, 1]))]), classes=[-1, 1])
    with pytest.raises(TypeError, match="partial_fit"):
        prequential(object(), iter([(X, y)]))


# ----------------------------------------------------- probabilities (issue 34)
ONLINE = [cls for _, cls in aucstream.all_estimators("online")]


@pytest.mark.parametrize("cls", ONLINE, ids=lambda c: c.__name__)
def test_early_probabilities_are_strictly_inside_0_1(cls):
    X, y = data(3, seed=5)
    y = np.array([1, 1, 0])
    model = cls()
    if not hasattr(model, "predict_proba"):
        pytest.skip(f"{cls.__name__} has no predict_proba")
    X_test = np.vstack([X, 1e6 * X[:1], -1e6 * X[:1]])  # saturating scores too
    for k in (1, 2, 3):
        model.partial_fit(X[k - 1 : k], y[k - 1 : k], classes=[0, 1])
        p = model.predict_proba(X_test)
        assert np.all((p > 0) & (p < 1)), (k, p)
        assert np.isfinite(log_loss([1, 0, 1, 1, 0], p[:, 1], labels=[0, 1]))


# -------------------------------------------------------------------- the CLI
def test_cli_evaluate_writes_the_curve(tmp_path, capsys):
    from aucstream.cli import main

    X, y = data(300, labels=(-1, 1))
    path, out = tmp_path / "d.svm", tmp_path / "curve.csv"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    argv = [
        "evaluate", str(path), "--learner", "SOLAM", "--no-scale", "--delay", "5",
        "--window", "80", "--every", "100", "--metrics", "auc,window_auc,log_loss,kappa",
        "-o", str(out), "--chunk-size", "64",
    ]  # fmt: skip
    assert main(argv) == 0
    assert "300 examples scored" in capsys.readouterr().out
    curve = pd.read_csv(out)
    expected = prequential(
        SOLAM(), iter_chunks(X, y, 64), delay=5, window=80, every=100,
        metrics=["auc", "window_auc", "log_loss", "kappa"],
    )  # fmt: skip
    columns = ["n_seen", "n_learnt", "auc", "window_auc", "log_loss", "kappa"]
    np.testing.assert_allclose(curve[columns], expected[columns], rtol=1e-12)
    assert list(curve.columns) == list(expected.columns)
    if __import__("importlib").util.find_spec("matplotlib") is not None:
        png = tmp_path / "curve.png"
        assert main([*argv, "--plot", str(png)]) == 0 and png.stat().st_size > 0


def test_cli_evaluate_failures_write_nothing(tmp_path, capsys, monkeypatch):
    from aucstream.cli import main

    X, y = data(100)
    path, out = tmp_path / "d.svm", tmp_path / "curve.csv"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    base = ["evaluate", str(path), "--learner", "SOLAM", "-o", str(out)]
    assert main([*base, "--metrics", "auc,roc"]) == 2
    assert "unknown metric 'roc'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*base, "--delay", "-1"])
    with pytest.raises(SystemExit):
        main([*base, "--window", "0"])
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)  # not installed
    assert main([*base, "--plot", str(tmp_path / "c.png")]) == 2
    assert "pip install 'aucstream[plot]'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [path]


def test_partial_auc_columns_equal_scikit_learn_at_every_checkpoint():
    """``max_fpr`` adds the exact one-way partial AUC of every score so far and of the
    window, equal to scikit-learn's McClish-standardized value on the emitted scores."""
    from sklearn.metrics import roc_auc_score

    from aucstream import SOLAM
    from aucstream.datasets import iter_chunks

    rng = np.random.default_rng(5)
    X = rng.normal(size=(1200, 4))
    y = np.where(X[:, 0] + rng.normal(size=1200) > 1.0, 1, -1)
    emitted = Recorder()
    curve = prequential(
        SOLAM(), iter_chunks(X, y, 250), max_fpr=0.1, window=300, every=400, detector=emitted
    )
    assert {"partial_auc", "window_partial_auc"} <= set(curve.columns)
    scores = np.asarray(emitted.scores)  # the decision scores as emitted
    for row in curve.itertuples():
        n = row.n_seen
        assert row.partial_auc == pytest.approx(
            roc_auc_score(y[:n], scores[:n], max_fpr=0.1), abs=1e-9
        )
        lo = max(0, n - 300)
        assert row.window_partial_auc == pytest.approx(
            roc_auc_score(y[lo:n], scores[lo:n], max_fpr=0.1), abs=1e-9
        )
    with pytest.raises(ValueError, match="max_fpr"):
        prequential(SOLAM(), iter_chunks(X, y, 250), max_fpr=1.5)
    with pytest.raises(ValueError, match="needs max_fpr"):
        prequential(SOLAM(), iter_chunks(X, y, 250), metrics=["partial_auc"])


def test_cli_evaluate_output_follows_the_umask(tmp_path):
    """The curve is written as save_model writes (aucstream.persistence.atomic_write):
    all at once, with the mode open() would give it (it was always 0600)."""
    import os

    from aucstream.cli import main

    X, y = data(120, labels=(-1, 1))
    path, out = tmp_path / "d.svm", tmp_path / "curve.csv"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    old = os.umask(0o022)
    try:
        assert main(["evaluate", str(path), "--learner", "SOLAM", "-o", str(out)]) == 0
    finally:
        os.umask(old)
    assert out.stat().st_mode & 0o777 == 0o644
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


class Growing:
    """A stand-in model whose state changes size: an array replaced by a longer one,
    an array resized in place, and a list that grows (read by a walk every time)."""

    def __init__(self, with_list):
        self.rows_ = np.zeros(0)
        self.fixed_ = np.zeros(3)  # the same object throughout
        if with_list:
            self.history_ = []

    def partial_fit(self, X, y, classes=None):
        self.classes_ = getattr(self, "classes_", np.array([0, 1]))
        self.n_ = getattr(self, "n_", 0) + X.shape[0]  # a plain value, a new object
        if self.n_ <= 60:  # a new, longer array; then the same one (read from the cache)
            self.rows_ = np.zeros(self.n_)
        if hasattr(self, "history_"):
            self.history_.append(np.zeros(X.shape[0]))  # grows in place
        return self

    def decision_function(self, X):
        return np.asarray(X)[:, 0]


def test_memory_is_read_at_every_checkpoint():
    """model_bytes at each checkpoint is the state's size then, whether the state is
    flat (read from the arrays found last time while they are the same objects) or
    holds containers (walked again)."""
    X, y = data(120)
    for with_list in (False, True):
        curve = prequential(Growing(with_list), iter_chunks(X, y, 30), every=30, classes=[0, 1])
        n = curve["n_learnt"].to_numpy()
        expected = 8 * np.minimum(n, 60) + with_list * 8 * n + 8 * 3 + 8 * 2  # + fixed_, classes_
        assert curve["model_bytes"].tolist() == expected.tolist()
    curve = prequential(SOLAM(), iter_chunks(X, y, 30), every=30, classes=[0, 1])
    model = SOLAM()
    prequential(model, iter_chunks(X, y, 30), classes=[0, 1])
    assert curve["model_bytes"].iloc[-1] == model_bytes(model) > 0


@pytest.mark.parametrize(
    "labels",
    [
        [1.0, -1.0, 1.0],
        [0.0, 1.0, 0.0],
        [-0.0, 0.0, 1.0],
        [2.0, 2.0],
        [3, 1, 2],
        [True, False, True],
        [np.nan, 1.0],
        [np.inf, -np.inf],
        ["b", "a"],
        [],
    ],
)
def test_the_look_ahead_finds_the_labels_np_unique_finds(labels):
    """The look-ahead for the classes reads the distinct labels without a sort when
    they are two numbers: the same array (values, dtype, sign of zero) as np.unique."""
    from aucstream.evaluation._prequential_parts import distinct

    y = np.array(labels)
    ours, theirs = distinct(y), np.unique(y)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    assert np.array_equal(ours, theirs, equal_nan=ours.dtype.kind == "f")
    if ours.dtype.kind == "f":
        assert np.signbit(ours).tolist() == np.signbit(theirs).tolist()


def test_curves_do_not_share_their_column_index():
    """The curve's columns come from an index built once per set of names: a name
    given to one curve's columns does not reach the next curve."""
    X, y = data(100)
    first = prequential(SOLAM(), iter_chunks(X, y, 50))
    first.columns.name = "mine"
    second = prequential(SOLAM(), iter_chunks(X, y, 50))
    assert second.columns.name is None
    assert list(second.columns) == list(first.columns)
    assert first.equals(first.copy()) and second["n_seen"].dtype == np.int64


# ------------------------------------- delay 0: the labels checked once per flush
@pytest.mark.parametrize(
    "make",
    [SOLAM, aucstream.OPAUC, lambda: StreamPipeline(OnlineStandardScaler(), SOLAM())],
    ids=["SOLAM", "OPAUC", "pipeline"],
)
@pytest.mark.parametrize("every", [None, 7])
@pytest.mark.parametrize("bad", [2, np.nan])
def test_delay_0_names_the_example_of_a_bad_label_and_changes_nothing(make, every, bad):
    X, y = data(80)
    model = make().fit(X[:20], y[:20])
    before = pickled_state(model)
    labels = y[20:].astype(float)
    labels[37] = bad  # example 37 of the run (its count starts at 0)
    with pytest.raises(ValueError, match=r"of example 37 is not one of the classes"):
        prequential(model, iter_chunks(X[20:], labels, 25), every=every)
    assert pickled_state(model) == before


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("delay", [0, 9, "callable"])
@pytest.mark.parametrize(
    "make",
    [SOLAM, lambda: StreamPipeline(OnlineStandardScaler(), SOLAM())],
    ids=["SOLAM", "pipeline"],
)
def test_a_refused_value_names_its_example_and_changes_nothing(make, delay, sparse):
    """A value the learner refuses (NaN, infinity): its ``ValueError`` gets a note
    naming the example in the stream and in its chunk, on every path (delay 0, woven,
    one row at a time), dense and CSR; the model is as before."""
    X, y = data(300)
    X[237, 1] = np.inf if sparse else np.nan
    X = sp.csr_matrix(X) if sparse else X
    model = make().fit(X[:20], y[:20])
    before = pickled_state(model)
    by = (lambda i, x, label: i % 4) if delay == "callable" else delay
    with pytest.raises(ValueError) as caught:
        prequential(model, iter_chunks(X[20:], y[20:], 40), delay=by)
    assert caught.value.__notes__ == [
        "prequential: example 217 of the stream (row 17 of its chunk) holds NaN or infinity"
    ]
    assert pickled_state(model) == before


def test_delay_0_holds_its_own_copy_of_each_chunks_labels():
    """A reader that fills the same label array for every chunk gives the curve of
    fresh arrays (the run holds the labels until it counts them)."""
    X, y = data(300)

    def reused():
        buffer = np.empty(50, dtype=y.dtype)
        for start in range(0, 300, 50):
            buffer[:] = y[start : start + 50]
            yield X[start : start + 50], buffer

    fresh = prequential(SOLAM(), iter_chunks(X, y, 50))
    again = prequential(SOLAM(), reused())
    pd.testing.assert_frame_equal(
        fresh.drop(columns="cpu_seconds"), again.drop(columns="cpu_seconds")
    )


@pytest.mark.parametrize("bad", ["maybe", 3.5, None])
def test_delay_0_names_a_bad_label_among_strings(bad):
    X, y = data(60)
    labels = np.where(y == 1, "yes", "no").astype(object)
    labels[45] = bad
    with pytest.raises(ValueError, match=r"of example 45 is not one of the classes"):
        prequential(SOLAM(), iter_chunks(X, labels, 30))


@pytest.mark.parametrize(
    "make, every",
    [
        (SOLAM, 30),  # its kernel writes into the block
        (aucstream.OPAUC, None),  # the calibration replayed into it
        (lambda: StreamPipeline(OnlineStandardScaler(), SOLAM()), 30),
    ],
    ids=["SOLAM", "OPAUC", "pipeline"],
)
def test_delay_0_held_in_small_blocks_gives_the_curve_of_one_block(make, every, monkeypatch):
    """The scored rows held in blocks of 64 (started over many times, a chunk of 100
    longer than a block, labels of three dtypes in turn: int, float, then object) give
    the curve of one large block (the counts and AUCs exactly, the sums of the
    log-loss, Brier score and ECE, added block by block, to rounding), and every column
    equals scikit-learn's on the brute-force loop's scores."""
    X, y = data(700)
    sizes = [10, 100, 3, 64, 1, 57, 200, 65, 80, 120]  # 700 rows

    def chunks(labels_as):
        start = 0
        for k, size in enumerate(sizes):
            labels = y[start : start + size]
            yield X[start : start + size], labels_as(k, labels)
            start += size

    def mixed(k, labels):  # int, float, object labels, in turn (the same values)
        return [labels, labels.astype(float), labels.astype(object)][k % 3]

    metrics = [*ALL, "window_auc", "partial_auc", "alarms"]
    options = {"every": every, "window": 90, "max_fpr": 0.25, "metrics": metrics}
    whole = prequential(make(), chunks(lambda k, labels: labels), detector=Recorder(), **options)
    monkeypatch.setattr(aucstream.evaluation._prequential, "_HOLD", 64)
    emitted = Recorder()
    small = prequential(make(), chunks(mixed), detector=emitted, **options)
    sums = ["log_loss", "brier", "ece"]  # float sums per block: equal to rounding
    pd.testing.assert_frame_equal(
        whole.drop(columns=["cpu_seconds", *sums]),
        small.drop(columns=["cpu_seconds", *sums]),
        check_exact=True,
    )
    pd.testing.assert_frame_equal(whole[sums], small[sums], check_exact=False, rtol=1e-13)
    ref = brute_force(make(), X, y, np.zeros(len(y), dtype=int), (0, 1))
    np.testing.assert_allclose(emitted.scores, ref["scores"], rtol=1e-12, atol=1e-15)
    ref["scores"] = np.asarray(emitted.scores)  # (to rounding: see the exactness test)
    ref["pred"] = ref["scores"] > 0
    check_columns(small, ref, y, (0, 1), window=90)
    assert small["n_seen"].tolist() == (
        [len(y)] if every is None else [*range(30, len(y) + 1, 30), len(y)]
    )
