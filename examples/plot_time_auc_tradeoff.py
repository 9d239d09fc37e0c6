"""
Training time against test AUC
==============================

The learners trade accuracy for speed and memory differently. Each point below is one
learner trained by one pass over the same 20,000 examples in 100 dimensions (generated,
20% positives, correlated features) and tested on 10,000 others: its training time
(best of 3 passes) against its test AUC. The batch :class:`~aucstream.LSSVMAUC` (the
exact optimum of OPAUC's objective on all the data) marks the ceiling of the linear
square-loss learners. The hyperparameters are fixed by hand, not tuned: a tuned
SOLAM or FSAUC does much better than here (see the L18 reproduction), so read the
picture for the costs more than for the AUCs.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import LogLocator, NullFormatter, StrMethodFormatter

from aucstream import (
    FSAUC,
    LSSVMAUC,
    OAM,
    OPAUC,
    SOLAM,
    AdaOAM,
    PassiveAggressive,
    UnivariateOnline,
)

rng = np.random.default_rng(1)
n, d = 30_000, 100
mixing = rng.normal(size=(d, d)) / np.sqrt(d)
X = rng.normal(size=(n, d)) @ mixing
y = np.where(rng.random(n) < 0.2, 1, -1)
X[y == 1] += 0.05 * rng.normal(size=d)
X /= np.abs(X).max()
X_train, y_train, X_test, y_test = X[:20_000], y[:20_000], X[20_000:], y[20_000:]

learners = {
    "OPAUC (full)": OPAUC(eta=2**-4, lam=2**-10),
    "OPAUC_fd (τ=20)": OPAUC(covariance="fd", sketch_size=20, eta=2**-4, lam=2**-10),
    "OPAUC_r (τ=20)": OPAUC(covariance="randomized", sketch_size=20, eta=2**-4, lam=2**-10),
    "AdaOAM": AdaOAM(eta=2**-2, lam=2**-10),
    "OAM_seq (N=100)": OAM(buffer_size=100, C=2**-8, random_state=0),
    "SOLAM": SOLAM(R=10, zeta=2**0),
    "FSAUC": FSAUC(R=10, eta1=2**0),
    "Uni-Log": UnivariateOnline(loss="log", eta=2**-4),
    "PA-I": PassiveAggressive(C=2**-4),
    "LS-SVM (batch)": LSSVMAUC(lam=2**-10),
}

results = {}
for name, model in learners.items():
    model.fit(X_train[:500], y_train[:500])  # compile the kernels once, untimed
    seconds = []
    for _ in range(3):
        tic = time.perf_counter()
        model.fit(X_train, y_train)
        seconds.append(time.perf_counter() - tic)
    results[name] = (min(seconds), model.score(X_test, y_test))
    print(f"{name:18s} {min(seconds):7.3f} s  test AUC {results[name][1]:.4f}")

# %%
# Time on a logarithmic axis; the dotted line is the batch ceiling. The learners that
# keep the class covariances (OPAUC, OPAUC_fd, AdaOAM) or buffers (OAM) come within a
# few hundredths of the ceiling at a few tenths of a second; the O(d) learners are an
# order of magnitude faster and, with these untuned steps, rank worse; the randomized
# sketch with τ = 20 loses accuracy against frequent directions at the same τ.

fig, ax = plt.subplots(figsize=(8.4, 4.8))
markers = iter("osD^v<>phX*")
for name, (sec, auc) in results.items():
    ax.scatter(sec, auc, marker="s" if "batch" in name else next(markers), s=55, label=name)
ax.axhline(results["LS-SVM (batch)"][1], color="grey", linestyle=":", linewidth=1)
ax.set(
    xscale="log",
    xlabel="training time of one pass (s, best of 3)",
    ylabel="test AUC",
    title=f"{X_train.shape[0]:,} training examples, d = {d}",
)
ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))  # 0.01, 0.02, 0.05, ...
ax.xaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
ax.xaxis.set_minor_formatter(NullFormatter())
ax.grid(alpha=0.3, which="both")
ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize="small")
fig.tight_layout()
plt.show()
