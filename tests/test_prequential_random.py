"""Random configurations of ``prequential`` through its fast paths (a search's
recorded decisions at delay 0, woven delays) against the row-by-row path: random
streams (a concept that flips or not, dense or CSR), a bare search, a pipeline over
one or SOLAM, metric subsets, checkpoints, windows, delays constant or per example,
dropped labels, ``max_fpr``, ranking by probability, a drift detector, chunk sizes,
the search's block shrunk, and a candidate (or the round leader) that diverges.
Each seed is one configuration; the curves must be equal and a failure must be
both paths' (a fuzzing script of the same kind ran 4,000 configurations)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from test_prequential import ALL

from aucstream import OPAUC, SOLAM, OnePassSearch, StreamPipeline, UnivariateOnline
from aucstream import _search_scores as S
from aucstream.datasets import iter_chunks
from aucstream.drift import AUCDriftDetector
from aucstream.evaluation import _prequential as P
from aucstream.evaluation import prequential


def configuration(seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(200, 900))
    X = rng.normal(size=(n, 4))
    s = X @ np.array([1.0, -0.5, 0.3, 0.0])
    if rng.random() < 0.5:
        s[n // 2 :] = -s[n // 2 :]
    y = (s + 0.5 * rng.normal(size=n) > 0.3).astype(int)
    if rng.random() < 0.3:
        X = sp.csr_matrix(X)
    search = dict(
        first_round=int(rng.choice([50, 200])),
        window=int(rng.choice([100, 400])),
        min_class=5,
        ensemble=int(rng.choice([1, 3])),
        drift=rng.choice(["auto", None]),
    )

    def make_search():
        candidates = [
            OPAUC(eta=2.0**-6, random_state=0),
            OPAUC(eta=2.0**-9, random_state=0),
            SOLAM(random_state=0),
            UnivariateOnline(loss="log", eta=2.0**-6),
        ]
        return OnePassSearch(candidates, **search)

    model = rng.choice(["search", "pipeline", "solam"])
    make = {
        "search": make_search,
        "pipeline": lambda: StreamPipeline(estimator=make_search()),
        "solam": lambda: SOLAM(random_state=0),
    }[model]
    window = None if rng.random() < 0.5 else int(rng.integers(20, 300))
    kw: dict = {"every": None if rng.random() < 0.5 else int(rng.integers(1, 400))}
    kw["window"] = window
    if rng.random() < 0.7:
        names = [m for m in ALL if window is not None or not m.startswith("window")]
        kw["metrics"] = list(rng.choice(names, size=int(rng.integers(1, 4)), replace=False))
    kind = rng.choice(["0", "constant", "callable"])
    if kind == "constant":
        kw["delay"] = int(rng.integers(1, 50))
    elif kind == "callable":
        m = int(rng.integers(1, 30))
        kw["delay"] = lambda i, x, label: i % m
    if rng.random() < 0.25:
        kw["max_fpr"] = float(rng.choice([0.1, 0.3, 1.0]))
    if rng.random() < 0.25:
        kw["rank"] = "proba"
    if rng.random() < 0.25:
        kw["label_probability"] = float(rng.choice([0.5, 0.9]))
        kw["random_state"] = int(rng.integers(0, 10))
    detector = rng.random() < 0.2
    fails = None if model == "solam" else rng.choice([None, SOLAM, OPAUC])
    at = int(rng.integers(10, n))
    block = int(rng.choice([4096, 500, 64, 17]))
    chunk = int(rng.choice([1, 7, 50, 250, 1000]))
    return X, y, make, kw, detector, fails, at, block, chunk


@pytest.mark.parametrize("seed", range(40))
def test_a_random_configuration_equals_the_row_by_row_path(seed, monkeypatch):
    X, y, make, kw, detector, fails, at, block, chunk = configuration(seed)
    learn = S.learn_candidate

    def failing(candidate, X, y, weights, journal=None):
        seen = candidate.__dict__.get("n_samples_seen_", 0)
        learnt = X.shape[0] if weights is None else int(np.count_nonzero(weights))
        if fails is not None and type(candidate) is fails and seen + learnt > at:
            raise FloatingPointError("diverged")
        return learn(candidate, X, y, weights, journal)

    monkeypatch.setattr(S, "learn_candidate", failing)
    monkeypatch.setattr(OnePassSearch, "_BLOCK", block)
    outcomes = []
    for fast in (True, False):
        monkeypatch.setattr(P, "_RECORD_SEARCH", fast)
        monkeypatch.setattr(P, "_WEAVE", fast)
        extra = {"detector": AUCDriftDetector()} if detector else {}
        try:
            outcomes.append(prequential(make(), iter_chunks(X, y, chunk), **kw, **extra))
        except FloatingPointError as error:  # (every candidate diverged: both paths)
            outcomes.append(str(error))
    fast_curve, row_curve = outcomes
    if isinstance(row_curve, str) or isinstance(fast_curve, str):
        assert fast_curve == row_curve
        return
    cols = [c for c in fast_curve.columns if c not in ("cpu_seconds", "model_bytes")]
    assert list(fast_curve.columns) == list(row_curve.columns)
    np.testing.assert_allclose(
        fast_curve[cols].to_numpy(float),
        row_curve[cols].to_numpy(float),
        rtol=0,
        atol=1e-9,
        equal_nan=True,
    )
