"""
A stream that changes, labels that arrive late: prequential evaluation
======================================================================

A deployed scorer learns an example's label days after it scored it (chargebacks,
conversions, reviews). :func:`aucstream.evaluation.prequential` evaluates it so:
with ``delay=k``, example ``i`` is scored when it arrives and its label is learnt
right after example ``i + k`` is scored, so every score comes from a model that has
not yet learnt the last ``k`` labels (``delay`` may also be a function giving each
example's delay, and ``label_probability`` drops labels).

The stream: 30,000 examples in 10 dimensions, about 10% positives, whose concept flips
half-way. The curves are the exact AUC of the last 2,000 scores, every 500 examples,
of :class:`~aucstream.SOLAM` as the paper defines it (``SOLAM()``: every example
weighs alike, and its steps shrink) and with forgetting (``half_life=3000``: an example
3,000 examples old weighs half as much as the latest), the latter with labels learnt at
once and 1,000 or 3,000 examples late. Until the first labels arrive every example
gets the untrained model's score (an AUC of 1/2). After the change a model ranks the
new concept backwards (an AUC below 1/2) until it has learnt enough of its labels:
without forgetting it does not get there in this stream; with a delay, it takes that
many examples longer, and falls lower meanwhile (printed below: the lowest windowed
AUC after the change and the examples until it is back above 0.9).
"""

import matplotlib.pyplot as plt
import numpy as np

from aucstream import SOLAM
from aucstream.evaluation import prequential

rng = np.random.default_rng(0)
n, d = 30_000, 10
X = rng.normal(size=(n, d))
w = rng.normal(size=d)
margin = X @ w
margin[n // 2 :] = X[n // 2 :] @ -w  # the concept flips half-way
y = (margin + rng.normal(size=n) > 2.5).astype(int)  # about 10% positives


def chunks(size=1000):
    for i in range(0, n, size):
        yield X[i : i + size], y[i : i + size]


fig, ax = plt.subplots(figsize=(7, 3.8))
runs = [("SOLAM(), delay=0", SOLAM(), 0)] + [
    (f"SOLAM(half_life=3000), delay={delay}", SOLAM(half_life=3000), delay)
    for delay in (0, 1000, 3000)
]
for name, model, delay in runs:
    curve = prequential(model, chunks(), delay=delay, window=2000, every=500)
    ax.plot(curve["n_seen"], curve["window_auc"], label=name)
    after = curve[curve["n_seen"] > n // 2]
    recovered = after[after["window_auc"] >= 0.9]["n_seen"]
    back = (
        f"after {recovered.iloc[0] - n // 2:,} examples"
        if len(recovered)
        else "never, in this stream"
    )
    print(
        f"{name}: labels learnt at the end {curve['n_learnt'].iloc[-1]:,}; "
        f"lowest windowed AUC after the change {after['window_auc'].min():.3f}; "
        f"back above 0.9 {back}"
    )
ax.axvline(n // 2, color="grey", linestyle="--", linewidth=1, label="the concept flips")
ax.set_xlabel("examples seen (scored)")
ax.set_ylabel("AUC of the last 2,000 examples")
ax.set_ylim(0, 1.02)
ax.legend(loc="lower left", fontsize=8)
ax.set_title("Windowed AUC through a concept flip")
fig.tight_layout()
plt.show()
