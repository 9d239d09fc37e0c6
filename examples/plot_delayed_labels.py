"""
Labels that arrive late: prequential evaluation with a delay
=============================================================

A deployed scorer learns an example's label days after it scored it (chargebacks,
conversions, reviews). :func:`aucstream.evaluation.prequential` evaluates it so:
with ``delay=k``, example ``i`` is scored when it arrives and its label is learnt
right after example ``i + k`` is scored, so every score comes from a model that has
not yet learnt the last ``k`` labels (``delay`` may also be a function giving each
example's delay, and ``label_probability`` drops labels).

The stream: 30,000 examples in 10 dimensions, about 10% positives, whose concept flips
half-way; the learner: :class:`~aucstream.SOLAM` with forgetting
(``half_life=3000``). The curves are the exact AUC of the last 2,000 scores, every
500 examples, for labels learnt at once and 1,000 or 3,000 examples late. Until the
first labels arrive every example gets the untrained model's score (an AUC of 1/2).
After the change the model ranks the new concept backwards (an AUC below 1/2) until it
has learnt enough of its labels: with a delay, for that many examples longer, and
lower meanwhile (printed below: the lowest windowed AUC after the change and the
examples until it is back above 0.9).
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
for delay in (0, 1000, 3000):
    curve = prequential(SOLAM(half_life=3000), chunks(), delay=delay, window=2000, every=500)
    ax.plot(curve["n_seen"], curve["window_auc"], label=f"delay={delay}")
    after = curve[curve["n_seen"] > n // 2]
    recovered = after[after["window_auc"] >= 0.9]["n_seen"]
    back = f"{recovered.iloc[0] - n // 2:,} examples" if len(recovered) else "not in the stream"
    print(
        f"delay={delay}: labels learnt at the end {curve['n_learnt'].iloc[-1]:,}; "
        f"lowest windowed AUC after the change {after['window_auc'].min():.3f}; "
        f"back above 0.9 after {back}"
    )
ax.axvline(n // 2, color="grey", linestyle="--", linewidth=1, label="the concept flips")
ax.set_xlabel("examples seen (scored)")
ax.set_ylabel("AUC of the last 2,000 examples")
ax.set_ylim(0, 1.02)
ax.legend(loc="lower left", fontsize=8)
ax.set_title("SOLAM(half_life=3000): the same stream, labels learnt later")
fig.tight_layout()
plt.show()
