"""
Scaling an unscaled stream inside the one pass
==============================================

The papers scale every feature to [-1, 1] with the minimum and maximum of the whole
training set, which a stream does not have. Raw features of very different scales
(an amount in dollars beside a count beside a rate) make a fixed step size either
far too large for the large features, and the learner diverges, or far too small for
the small ones, and it learns nothing from them.

:class:`aucstream.preprocessing.OnlineStandardScaler` standardizes each example with
the running mean and standard deviation of the examples *before* it
(``partial_fit_transform``), so scaling costs no second pass and uses no example's
future. The stream here is generated: 20,000 examples in 10 dimensions whose columns
have scales from 1 to 10⁵ and non-zero means, 15% positives. The same
:class:`~aucstream.OPAUC` (same step size) learns it raw, scaled prequentially, and
scaled with statistics of the whole stream (an oracle that a stream cannot have); a
fourth run gives the raw stream a step size small enough not to diverge.
"""

import matplotlib.pyplot as plt
import numpy as np

from aucstream import OPAUC
from aucstream.metrics import PrequentialAUC
from aucstream.preprocessing import OnlineStandardScaler

rng = np.random.default_rng(2)
n, d = 20_000, 10
y = np.where(rng.random(n) < 0.15, 1, -1)
Z = rng.normal(size=(n, d))
Z[y == 1] += 0.4 * rng.normal(size=d)
scales = 10.0 ** np.linspace(0, 5, d)
offsets = 3.0 * scales * rng.random(d)
X = Z * scales + offsets  # what the stream delivers

oracle = (X - X.mean(axis=0)) / X.std(axis=0)  # needs the whole stream in advance


def prequential_curve(transform, eta=2**-6, chunk=250):
    """Prequential AUC after each chunk, and where the learner diverged (or None)."""
    model, auc = OPAUC(eta=eta, lam=2**-8), PrequentialAUC()
    seen, values = [], []
    for start in range(0, n, chunk):
        rows = slice(start, start + chunk)
        try:
            scores = model.test_then_train(transform(rows), y[rows], classes=[-1, 1])
        except FloatingPointError as error:
            print(f"  diverged after {start:,} examples: {str(error)[:90]}...")
            return seen, values, start
        auc.update(y[rows], scores)
        seen.append(start + chunk)
        values.append(auc.get())
    return seen, values, None


scaler = OnlineStandardScaler()
runs = {
    "raw features": lambda rows: X[rows],
    "raw features, eta = 2^-40": lambda rows: X[rows],
    "OnlineStandardScaler (prequential)": lambda rows: scaler.partial_fit_transform(X[rows]),
    "standardized with the whole stream (oracle)": lambda rows: oracle[rows],
}
curves = {}
for name, transform in runs.items():
    print(name)
    curves[name] = prequential_curve(transform, eta=2**-40 if "2^-40" in name else 2**-6)
    if curves[name][1]:
        print(
            f"  prequential AUC after {curves[name][0][-1]:,} examples: {curves[name][1][-1]:.4f}"
        )

# %%
# With the step size that suits scaled data, OPAUC diverges on the raw stream within
# its first chunk (the cross at the start); with a step size small enough for the
# largest feature (2^-40) it does not diverge, but it learns from the largest
# features only. The prequentially scaled stream follows the oracle.

fig, ax = plt.subplots(figsize=(7.2, 4.4))
for name, (seen, values, diverged) in curves.items():
    (line,) = ax.plot(seen, values, label=name)
    if diverged is not None:
        last = values[-1] if values else 0.5
        ax.plot([diverged], [last], marker="x", markersize=10, color=line.get_color())
ax.set(xlabel="examples seen", ylabel="prequential AUC", ylim=(0.4, 1.0))
ax.set_title("OPAUC (eta = 2^-6) on a stream with feature scales from 1 to 1e5")
ax.legend(loc="lower right", fontsize="small")
ax.grid(alpha=0.3)
fig.tight_layout()
plt.show()
