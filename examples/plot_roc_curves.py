"""
ROC curves of AUC learners on german
====================================

The ROC curve plots the true positive rate against the false positive rate as the
threshold on the score goes down; the AUC is the area under it. The learners below
are trained on 75% of the german credit data (shipped with the package, features
scaled to [-1, 1] on the training part) and scored on the other 25%: three one-pass
learners, the batch optimum of OPAUC's objective (:class:`~aucstream.LSSVMAUC`) and
the non-linear :class:`~aucstream.CAPO`.
"""

import matplotlib.pyplot as plt
from sklearn.metrics import roc_curve
from sklearn.model_selection import train_test_split

from aucstream import LSSVMAUC, OAM, OPAUC, UnivariateOnline
from aucstream.capo import CAPO
from aucstream.datasets import load_german
from aucstream.metrics import roc_auc
from aucstream.preprocessing import MinMaxScalerPM1

data = load_german()
X = data.X.toarray()  # the loader gives a sparse matrix; min-max scaling needs dense rows
X_train, X_test, y_train, y_test = train_test_split(
    X, data.y, test_size=0.25, stratify=data.y, random_state=0
)
scaler = MinMaxScalerPM1().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

learners = {
    "OPAUC": OPAUC(eta=2**-6, lam=2**-8, shuffle=True, random_state=0),
    "OAM_seq": OAM(C=2**-6, buffer_size=100, shuffle=True, random_state=0),
    "Uni-Log": UnivariateOnline(loss="log", eta=2**-6, shuffle=True, random_state=0),
    "LS-SVM (batch)": LSSVMAUC(lam=2**-4),
    "CAPO (batch)": CAPO(lam=2**-4, random_state=0),
}

fig, ax = plt.subplots(figsize=(5.8, 5.4))
for name, model in learners.items():
    scores = model.fit(X_train, y_train).decision_function(X_test)
    fpr, tpr, _ = roc_curve(y_test, scores)
    auc = roc_auc(y_test, scores)
    ax.plot(fpr, tpr, label=f"{name}  AUC {auc:.3f}")
    print(f"{name:16s} test AUC {auc:.4f}")
ax.plot([0, 1], [0, 1], color="grey", linestyle=":", label="random ranking  AUC 0.5")
ax.set(xlabel="false positive rate", ylabel="true positive rate", title="german, test part")
ax.legend(loc="lower right", fontsize="small")
ax.grid(alpha=0.3)
fig.tight_layout()
plt.show()
