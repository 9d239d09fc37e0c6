"""Every online learner's defaults converge behind the online scaler on raw streams.

The streams have columns of very different ranges (an amount in the hundreds, a
growing time column, unit-variance components): without scaling several learners'
defaults diverge; behind :class:`~aucstream.preprocessing.OnlineStandardScaler` none
may (no FloatingPointError) and each must learn something. The slow test does the same
on shared datasets in their raw form and file order (w8a holds all its positives
first), when the benchmark data are present.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pytest

import aucstream
from aucstream import StreamPipeline
from aucstream.preprocessing import OnlineStandardScaler

DATA = Path(os.environ.get("AUCSTREAM_DATA", Path(__file__).resolve().parents[2] / "shared/data"))
LEARNERS = [
    cls
    for name, cls in aucstream.all_estimators("online")
    if name not in ("StreamPipeline", "OnePassSearch")
]


def fraud_like(n: int, seed: int = 0):
    """A time column, 28 unit components and a heavy-tailed amount; 2% positives."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 28))
    amount = np.exp(rng.normal(4.5, 1.2, size=n))
    seconds = np.sort(rng.uniform(0, 172800, size=n))
    logit = 1.2 * Z[:, 0] - 0.9 * Z[:, 3] + 0.6 * (np.log(amount) - 4.5)
    y = (logit + rng.logistic(size=n) > np.quantile(logit, 0.98)).astype(int)
    return np.column_stack([seconds, Z, amount]), y


def default(cls, n: int):
    return cls(n_samples=n) if cls.stream_length_param else cls()


@pytest.mark.parametrize("cls", LEARNERS, ids=lambda c: c.__name__)
def test_defaults_converge_behind_the_online_scaler(cls):
    X, y = fraud_like(12_000)
    train, test = slice(0, 10_000), slice(10_000, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = StreamPipeline(OnlineStandardScaler(), default(cls, 10_000)).fit(X[train], y[train])
    assert np.all(np.isfinite(model.decision_function(X[test])))
    assert model.score(X[test], y[test]) > 0.6


@pytest.mark.slow
@pytest.mark.parametrize("name", ["w8a", "german_raw"])
def test_defaults_converge_on_raw_shared_datasets(name):
    from aucstream.datasets import load_dataset, load_file

    if name == "german_raw":
        if not (DATA / "german.numer.xz").exists():
            pytest.skip("benchmark data absent")
        X, y = load_file(DATA / "german.numer.xz", n_features=24)
    else:
        if not (DATA / "w8a.xz").exists():
            pytest.skip("benchmark data absent")
        X, y = load_dataset(name, data_home=DATA).X, load_dataset(name, data_home=DATA).y
    failed = []
    for cls in LEARNERS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                StreamPipeline(OnlineStandardScaler(), default(cls, len(y))).fit(X, y)
            except FloatingPointError as error:
                failed.append(f"{cls.__name__}: {error}")
    assert not failed
