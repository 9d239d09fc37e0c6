"""
The top of the ranking: partial AUC and an operating point
==========================================================

A reviewer who can look at 1% of the negatives sees only the left edge of the ROC
curve. Drawn on a log axis of false positive rates, that edge is where two scorers of
almost the same AUC part ways. ``StreamPipeline(max_fpr=0.05)`` races the full-AUC
and the partial-AUC learners by their prequential partial AUC at FPR <= 0.05, and
``predict(X, threshold="fpr:0.01")`` flags the rows above a threshold chosen in the
same pass from the recent negatives' scores (the dots).

The stream is the user guide's (:doc:`/user_guide/partial_auc`): make_classification
with 3% positives, 30,000 examples learnt in one pass and the next 10,000 scored. The
legend gives the partial AUC at FPR <= 0.05 (McClish-standardized, as scikit-learn's
``roc_auc_score(max_fpr=)``) and the full AUC, both from
:func:`aucstream.metrics.roc_auc`; the shaded band is the region the partial AUC
measures.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import make_classification
from sklearn.metrics import roc_curve

from aucstream import StreamPipeline
from aucstream.metrics import roc_auc

X, y = make_classification(
    n_samples=40_000, n_features=20, n_informative=6, weights=[0.97], flip_y=0.01, random_state=0
)
train, test = slice(0, 30_000), slice(30_000, None)

fig, ax = plt.subplots(figsize=(6.5, 4.2))
ax.axvspan(1e-3, 0.05, color="0.93", label="FPR <= 0.05")
for name, model in (
    ("StreamPipeline()", StreamPipeline()),
    ("StreamPipeline(max_fpr=0.05)", StreamPipeline(max_fpr=0.05)),
):
    scores = model.fit(X[train], y[train]).decision_function(X[test])
    fpr, tpr, _ = roc_curve(y[test], scores)
    partial = roc_auc(y[test], scores, max_fpr=0.05)
    full = roc_auc(y[test], scores)
    (line,) = ax.plot(fpr, tpr, label=f"{name}: pAUC {partial:.3f}, AUC {full:.3f}")
    flagged = model.predict(X[test], threshold="fpr:0.01") == 1
    negatives, positives = y[test] == 0, y[test] == 1
    point = flagged[negatives].mean(), flagged[positives].mean()
    ax.plot(*point, "o", color=line.get_color())
    print(
        f"{name}: threshold fpr:0.01 flags {point[0]:.2%} of negatives, {point[1]:.0%} of positives"
    )
ax.set_xscale("log")
ax.set_xlim(1e-3, 1)
ax.set_ylim(0, 1.02)
ax.set_xlabel("false positive rate (log scale)")
ax.set_ylabel("true positive rate")
ax.set_title("ROC curves at low false positive rates")
ax.legend(loc="lower right", fontsize=8)
fig.tight_layout()
plt.show()
