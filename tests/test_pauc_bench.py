"""The partial-AUC benchmarks' helpers: ``bench_pauc.pauc_standard_error`` (its
weighted pairs make :func:`aucstream.metrics.roc_auc`'s partial AUC, its value is that
of the components from the pair matrix, brute force, and at ``max_fpr`` 1 it is DeLong's
standard error of the AUC) and ``pauc_choice_variants`` (its re-scoring reproduces the
search's own choice)."""

import sys
from pathlib import Path

import numpy as np
import pytest

from aucstream.metrics import roc_auc

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
bench_pauc = pytest.importorskip("bench_pauc")


def _delong(positive, s):
    """DeLong's standard error of the AUC from the pair matrix (ties one half)."""
    pos, neg = s[positive], s[~positive]
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    x, y = psi.mean(axis=1), psi.mean(axis=0)
    return np.sqrt(np.var(x, ddof=1) / pos.size + np.var(y, ddof=1) / neg.size)


@pytest.mark.parametrize("ties", [False, True])
def test_full_auc_is_delong(ties):
    rng = np.random.default_rng(0)
    positive = rng.random(300) < 0.2
    s = rng.normal(size=300) + positive
    if ties:
        s = np.round(s, 1)
    got = bench_pauc.pauc_standard_error(positive, s, max_fpr=1.0)
    assert got == pytest.approx(_delong(positive, s), rel=1e-12)


@pytest.mark.parametrize("max_fpr", [0.05, 0.1, 0.37])
def test_partial_components_and_scale(max_fpr):
    """The weighted pairs (brute force at n = 2,000) give the raw partial AUC of roc_auc (no ties),
    and the standard error shrinks as the sample grows (about 1/sqrt(n))."""
    rng = np.random.default_rng(1)
    errors = []
    for n in (2_000, 32_000):
        positive = rng.random(n) < 0.1
        s = rng.normal(size=n) + positive
        pos, neg = s[positive], s[~positive]
        k = max_fpr * neg.size
        weight = np.empty(neg.size)
        weight[np.argsort(-neg)] = np.clip(k - np.arange(neg.size), 0.0, 1.0)
        # each negative's weight times the positives above it (no ties: normal draws)
        above = pos.size - np.searchsorted(np.sort(pos), neg, side="right")
        raw = (weight * above).sum() / (pos.size * neg.size)
        standardized = 0.5 * (1 + (raw - max_fpr**2 / 2) / (max_fpr - max_fpr**2 / 2))
        assert standardized == pytest.approx(roc_auc(positive, s, max_fpr=max_fpr), abs=1e-12)
        got = bench_pauc.pauc_standard_error(positive, s, max_fpr=max_fpr)
        if n == 2_000:  # the components from the pair matrix (and the sum above)
            psi = (pos[:, None] > neg[None, :]) * weight[None, :]
            assert psi.sum() / (pos.size * neg.size) == pytest.approx(raw, rel=1e-12)
            x, y = psi.sum(axis=1) / neg.size, psi.sum(axis=0) / pos.size
            var = np.var(x, ddof=1) / pos.size + np.var(y, ddof=1) / neg.size
            want = np.sqrt(var) / (2 * (max_fpr - max_fpr**2 / 2))
            assert got == pytest.approx(want, rel=1e-10)
        errors.append(got)
    assert 2.0 < errors[0] / errors[1] < 8.0  # sqrt(16) = 4


def test_choice_variants_rule_is_choose():
    """``pauc_choice_variants``'s re-scoring: its ``rule`` picks the set the search
    scores with (``ensemble_``), and every variant picks one of the compared sets."""
    variants_module = pytest.importorskip("pauc_choice_variants")
    from sklearn.datasets import make_classification

    from aucstream import StreamPipeline, _calibration

    X, y = make_classification(
        n_samples=9_000, n_features=8, n_informative=4, weights=[0.9], random_state=0
    )
    model = StreamPipeline(max_fpr=0.05, drift=None).fit(X[:7_000], y[:7_000])
    sets = variants_module.candidates_sets(model, X[7_000:], y[7_000:])
    assert len(sets) > 1 and sets[0]["first"]
    chosen = variants_module.variants(sets)
    members = [int(i) for i in model.estimator_.ensemble_ if i >= 0]
    assert sorted(chosen["rule"]["set"]) == sorted(members)
    assert all(any(c is s for s in sets) for c in chosen.values())
    assert chosen["weight 0.5"]["set"] == chosen["rule"]["set"]  # the rule's own weight
    member = sets[0]["set"][0]
    blends = [s for s in sets if s["blend"] is not None]
    assert blends and all(member in s["set"] and not s["first"] for s in blends)
    for a in variants_module.BLENDS:  # a blend variant picks a rule's set or a blend at a
        picked = chosen[f"blend {a:.2f}"]
        assert picked["first"] or picked["blend"] == a
    search, Zt = model.estimator_, model.transformer_.transform(X[7_000:])

    def log_odds(i):
        slope, offset = _calibration.logit_map(search.candidates_[i].calibration_)
        return slope * search.candidates_[i].decision_function(Zt) + offset

    for s in blends:  # its test scores: the weighted mean of the members' log-odds
        partial = [i for i in s["set"] if i != member]
        mean = sum(log_odds(i) for i in partial) / len(partial)
        scores = s["blend"] * mean + (1 - s["blend"]) * log_odds(member)
        assert s["test_auc"] == pytest.approx(roc_auc(y[7_000:] == 1, scores), abs=1e-12)
    for s in sets:  # the window's statistic: the mean of its two terms
        assert s["G"] == pytest.approx(0.5 * (s["partial"] + s["full"]))
        x, _, _, _ = s["components"]
        assert np.isfinite(x).all()
