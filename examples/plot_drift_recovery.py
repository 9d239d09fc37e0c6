"""
A stream that changes: the windowed AUC of the default pipeline
===============================================================

A scorer learnt on one concept ranks the next one badly, and a learner whose
statistics weigh every past example alike takes as many examples again to forget the
old concept. ``StreamPipeline()`` watches the AUC of its leader (``drift="auto"``,
the default): when it drops, the race among its candidates reopens with fresh,
forgetting ones beside the incumbent, and the scoring passes to whichever ranks the
recent examples best. ``StreamPipeline(drift=None)`` is the stationary pipeline.

The stream is the one of the user guide's "Streams that change": 60,000 examples in
10 dimensions, about 10% positives, whose concept flips half-way (the labels of the
second half come from the opposite direction). Each example is scored before it is
learnt (:func:`aucstream.evaluation.prequential`), and the curve is the exact AUC of
the last 2,000 scores, every 1,000 examples. The red ticks are the alarms of an
:class:`aucstream.drift.AUCDriftDetector` fed the default pipeline's scores as they
come (the ``detector`` of :func:`~aucstream.evaluation.prequential`; the pipeline
keeps a watch of its own): one within 1,000 examples of the change, and three where the
concept did not change, the false alarms a detector pays for its speed.
"""

import matplotlib.pyplot as plt
import numpy as np

from aucstream import StreamPipeline
from aucstream.drift import AUCDriftDetector
from aucstream.evaluation import prequential

rng = np.random.default_rng(0)
n, d = 60_000, 10
X = rng.normal(size=(n, d))
w = rng.normal(size=d)
margin = X @ w
margin[n // 2 :] = X[n // 2 :] @ -w  # the concept flips half-way
y = (margin + rng.normal(size=n) > 2.5).astype(int)  # about 10% positives


def chunks(size=1000):
    for i in range(0, n, size):
        yield X[i : i + size], y[i : i + size]


curves = {
    "StreamPipeline(drift=None)": prequential(
        StreamPipeline(drift=None), chunks(), window=2000, every=1000
    ),
    'StreamPipeline() (drift="auto")': prequential(
        StreamPipeline(), chunks(), window=2000, every=1000, detector=AUCDriftDetector()
    ),
}

fig, ax = plt.subplots(figsize=(7, 3.8))
for name, curve in curves.items():
    ax.plot(curve["n_seen"], curve["window_auc"], label=name)
ax.axvline(n // 2, color="grey", linestyle="--", linewidth=1, label="the concept flips")
watched = curves['StreamPipeline() (drift="auto")']
raised = watched["n_seen"][np.diff(watched["alarms"], prepend=0) > 0]
ax.plot(raised, np.full(len(raised), 0.05), "|", color="red", markersize=12, label="alarms")
ax.set_xlabel("examples seen")
ax.set_ylabel("AUC of the last 2,000 examples")
ax.set_ylim(0, 1.02)
ax.legend(loc="center left", fontsize=8)
ax.set_title("Prequential windowed AUC through an abrupt change")
fig.tight_layout()
plt.show()

for name, curve in curves.items():
    after = curve[curve["n_seen"] > n // 2 + 2000]["window_auc"]
    print(f"{name}: lowest windowed AUC after the change {after.min():.3f}")
