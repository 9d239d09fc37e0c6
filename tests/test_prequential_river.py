"""prequential against River on River's bundled Phishing stream (shipped inside the
river package: no download), and the drift detector's alarms counted in one pass."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from aucstream import OPAUC, SOLAM
from aucstream.datasets import iter_chunks
from aucstream.drift import ADWIN, AUCDriftDetector, PageHinkley
from aucstream.evaluation import prequential

river = pytest.importorskip("river")
from river import datasets, evaluate, metrics  # noqa: E402

from aucstream.river import RiverClassifier  # noqa: E402


def phishing():
    rows = list(datasets.Phishing())
    keys: list = []
    for x, _ in rows:  # RiverClassifier's columns: keys in order of first appearance
        for k in sorted(x, key=lambda k: (type(k).__name__, repr(k))):
            if k not in keys:
                keys.append(k)
    X = np.array([[float(x.get(k, 0.0)) for k in keys] for x, _ in rows])
    y = np.array([label for _, label in rows])
    return rows, keys, X, y


class Recorded(metrics.RollingROCAUC):
    """River's RollingROCAUC, keeping the probabilities it was given."""

    def __init__(self, window):
        super().__init__(window)
        self.given = []

    def update(self, y_true, y_pred):
        self.given.append(y_pred.get(True, 0.0))
        super().update(y_true, y_pred)


@pytest.mark.parametrize("make", [SOLAM, OPAUC], ids=["SOLAM", "OPAUC"])
@pytest.mark.parametrize("chunk", [1, 250])
def test_window_auc_equals_rivers_rolling_roc_auc(make, chunk):
    rows, keys, X, y = phishing()
    river_metric = Recorded(500)
    adapter = RiverClassifier(make(), n_features=len(keys))
    theirs = [
        river_metric.get()  # read at each checkpoint River yields
        for _ in evaluate.iter_progressive_val_score(rows, adapter, river_metric, step=250)
    ]
    given = np.array(river_metric.given)
    for m in range(250, len(y) + 1, 250):
        window = given[max(0, m - 500) : m]
        # River's RollingROCAUC is exact on windows without tied probabilities (it
        # does not count ties one half); these windows have none, so "equal" is exact
        assert np.unique(window).size == window.size
        assert theirs[m // 250 - 1] == pytest.approx(
            roc_auc_score(y[max(0, m - 500) : m], window), abs=1e-12
        )
    stream = iter_chunks(X, y, chunk)
    curve = prequential(make(), stream, window=500, every=250, rank="proba")
    np.testing.assert_allclose(curve["window_auc"], theirs, rtol=0, atol=1e-9)
    # ranking the decision scores is another ranking: the calibration moves over time
    decision = prequential(make(), iter_chunks(X, y, chunk), window=500, every=250)
    assert np.abs(decision["window_auc"].to_numpy() - theirs).max() > 1e-6


def test_rank_proba_ranks_the_probabilities():
    _, _, X, y = phishing()
    curve = prequential(SOLAM(), iter_chunks(X, y, 100), window=300, rank="proba", every=300)
    decision = prequential(SOLAM(), iter_chunks(X, y, 100), window=300, every=300)
    assert np.all(np.isfinite(curve["auc"])) and np.all(np.isfinite(decision["auc"]))
    with pytest.raises(ValueError, match="rank must be"):
        prequential(SOLAM(), iter_chunks(X, y, 100), rank="probability")


@pytest.mark.parametrize("inner", [PageHinkley, ADWIN])
def test_alarms_of_an_auc_detector_equal_its_own_count(inner):
    rng = np.random.default_rng(0)
    n = 2000
    X = rng.normal(size=(n, 4))
    w = np.where(np.arange(n)[:, None] < n // 2, [1.0, 0, 0, 0], [-1.0, 0, 0, 0])
    y = (np.sum(X * w, axis=1) + 0.3 * rng.normal(size=n) > 0).astype(int)
    curve = prequential(
        SOLAM(random_state=0),
        iter_chunks(X, y, 250),
        detector=AUCDriftDetector(inner()),
        every=500,
        metrics=["auc", "alarms"],
    )
    # the same detector fed the same decision scores example by example
    detector = AUCDriftDetector(inner())
    reference = _decision_scores(X, y)
    counts, total = [], 0
    for i, (s, label) in enumerate(zip(reference, y == 1)):
        detector.update(float(s), bool(label))
        total += detector.drift_detected
        if (i + 1) % 500 == 0:
            counts.append(total)
    assert curve["alarms"].tolist() == counts
    assert counts[-1] > 0  # the change at n / 2 is found


def _decision_scores(X, y):
    """The decision scores prequential feeds the detector at delay 0: test, then train."""
    model = SOLAM(random_state=0)
    out = np.empty(len(y))
    for i in range(len(y)):
        out[i] = model.decision_function(X[i : i + 1])[0] if i else 0.0
        model.partial_fit(X[i : i + 1], y[i : i + 1], classes=[0, 1])
    return out
