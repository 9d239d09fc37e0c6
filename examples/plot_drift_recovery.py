"""
The default pipeline through abrupt and gradual change
=======================================================

``StreamPipeline()`` watches the AUC of the learner that scores (``drift="auto"``,
the default): when it drops, the race of candidates reopens with fresh, forgetting
newcomers beside the incumbent, and the scoring passes to a newcomer once it ranks
the recent examples better (:mod:`aucstream._race_drift`). ``drift=None`` is the
stationary pipeline, whose race runs once and settles.

Two streams of three concepts of 40,000 examples each (10 Gaussian features, 10%
positives, a new random direction per concept, label noise), as in the benchmark: in
the first the concept changes at once, in the second over 20,000 examples centred on
the change (a row of the transition comes from the new concept with a probability
rising from 0 to 1). Each pipeline scores every
example before it learns it, in chunks of 500; the curves are the exact AUC of the
last 2,000 scores, every 500 examples. The third contender is told the truth: a
``drift=None`` pipeline started afresh at each true change point (at the centre of a
gradual change), which no real stream offers. The red ticks are the default's alarms
that reopened its race.

``benchmarks/bench_drift.py`` measures the same on 32 streams of 120,000 examples
(``docs/results/drift.md``). It is not always a gain: with concepts of 15,000 examples
(``CONCEPT = 15_000``, ``WIDTH = 8_000``) the stationary pipeline, whose step sizes
are still large so early in a stream, adapts by itself within about 3,000 examples,
and at the second abrupt change the default dips deeper (the AUC of its prequential
scores of examples 30,000 to 32,000 was 0.77, against 0.84 for ``drift=None``, in a run
of this script with those two values on 2026-12-01). Its scorer then was the forgetting
AdaOAM that its first reopened race had crowned, which ranked examples 30,000 to 31,500
at an AUC of 0.74 where ``drift=None``'s (the ensemble its one race had settled on)
reached 0.81; the newcomers of the race reopened at 31,360 took over
500 examples later.
"""

import matplotlib.pyplot as plt
import numpy as np

from aucstream import StreamPipeline
from aucstream.metrics import roc_auc

CONCEPT, WIDTH, RATE, D, CHUNK, WINDOW = 40_000, 20_000, 0.1, 10, 500, 2000


def draw(rng, w, n):
    """n rows of the concept ``w``: the top RATE of ``w . x`` plus noise are positive."""
    X = rng.normal(size=(n, D))
    s = X @ w + 0.5 * rng.normal(size=n)
    return X, (s > np.quantile(s, 1 - RATE)).astype(int)


def stream(kind, seed=0):
    rng = np.random.default_rng(seed)
    concepts = [w / np.linalg.norm(w) for w in rng.normal(size=(3, D))]
    parts = [draw(rng, w, CONCEPT) for w in concepts]
    X = np.vstack([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    changes = [CONCEPT, 2 * CONCEPT]
    if kind == "gradual":  # each row of a transition from the old or the new concept
        for i, c in enumerate(changes):
            lo = c - WIDTH // 2
            new = rng.random(WIDTH) < (np.arange(WIDTH) + 0.5) / WIDTH
            old_X, old_y = draw(rng, concepts[i], WIDTH)
            new_X, new_y = draw(rng, concepts[i + 1], WIDTH)
            X[lo : lo + WIDTH] = np.where(new[:, None], new_X, old_X)
            y[lo : lo + WIDTH] = np.where(new, new_y, old_y)
    return X, y, changes


def run(X, y, drift="auto", restarts=()):
    """Prequential scores, and the positions at which the race reopened."""
    scores, reopened = np.empty(len(y)), []
    model = StreamPipeline(drift=drift)
    for a in range(0, len(y), CHUNK):
        if a in restarts:
            model = StreamPipeline(drift=drift)
        before = model.estimator_.race_[1] if hasattr(model, "estimator_") else 0
        scores[a : a + CHUNK] = model.test_then_train(
            X[a : a + CHUNK], y[a : a + CHUNK], classes=[0, 1]
        )
        if model.estimator_.race_[1] != before:
            reopened.append(int(model.estimator_.race_[0]))
    return scores, reopened


def windowed(y, scores):
    ends = np.arange(WINDOW, len(y) + 1, 500)
    return ends, np.array([roc_auc(y[e - WINDOW : e], scores[e - WINDOW : e]) for e in ends])


fig, axes = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
for ax, kind in zip(axes, ("abrupt", "gradual")):
    X, y, changes = stream(kind)
    runs = {
        "StreamPipeline() (drift='auto')": run(X, y),
        "StreamPipeline(drift=None)": run(X, y, drift=None),
        "drift=None, restarted at the true changes": run(X, y, None, changes),
    }
    for name, (scores, _) in runs.items():
        ends, auc = windowed(y, scores)
        style = {"linestyle": ":"} if "restarted" in name else {}
        ax.plot(ends, auc, label=name, **style)
        print(f"{kind:8s} {name:45s} mean windowed AUC {auc.mean():.4f}")
    for c in changes:
        ax.axvline(c, color="grey", linestyle="--", linewidth=1)
        if kind == "gradual":
            ax.axvspan(c - WIDTH // 2, c + WIDTH // 2, color="grey", alpha=0.1)
    reopened = runs["StreamPipeline() (drift='auto')"][1]
    print(f"{kind:8s} the default's race reopened at {reopened}")
    ax.plot(reopened, [0.23] * len(reopened), "|", color="red", markersize=14)
    ax.set_ylim(0.2, 1.0)
    ax.set_ylabel("AUC, last 2,000")
    ax.set_title(f"{kind} change (dashed; shaded: the transition)", fontsize=10)
axes[0].legend(loc="lower left", fontsize=8)
axes[1].set_xlabel("examples seen (each scored before it is learnt)")
fig.tight_layout()
plt.show()
