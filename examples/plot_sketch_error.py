"""
Sketch error against the sketch size
====================================

For high-dimensional data OPAUC replaces each class covariance (d x d numbers) by a
summary of O(dτ) numbers (:doc:`/user_guide/high_dimensional`). How much of the
class scatter :math:`A^\\top A` does each summary keep? :mod:`aucstream.sketch_error`
measures the relative error :math:`\\|A^\\top A - \\text{sketch}\\|_F / \\|A^\\top A\\|_F`
after one pass over the rows of A, without forming a d x d matrix, for each sketch
size τ.

The data are generated: 3,000 sparse rows in 2,000 dimensions (20 non-zeros each)
whose features have Zipf-like frequencies, like words in text, so that a few
directions carry most of the scatter.
"""

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp

from aucstream.sketch_error import LABELS, sketch_error_curve

rng = np.random.default_rng(0)
n, d, k = 3000, 2000, 20
weights = 1.0 / np.arange(1, d + 1) ** 1.1  # Zipf-like feature frequencies
weights /= weights.sum()
cols = np.concatenate([rng.choice(d, size=k, replace=False, p=weights) for _ in range(n)])
rows = np.repeat(np.arange(n), k)
A = sp.csr_matrix((rng.random(n * k), (rows, cols)), shape=(n, d))
A = sp.diags(1.0 / np.sqrt(np.asarray(A.multiply(A).sum(axis=1)).ravel())) @ A  # unit rows

sizes = (5, 10, 20, 50, 100)
curve = sketch_error_curve(A, sketch_sizes=sizes, n_repeats=2, random_state=0)
print(curve.table())

# %%
# The relative error of every summary (lines) and the expected error of the
# randomized sketch (dashed), :math:`\sqrt{(\|A\|_F^4 + \|A^\top A\|_F^2)/\tau}`
# relative to :math:`\|A^\top A\|_F`. The random sketches (randomized, hashing)
# follow their expected error, which falls like :math:`1/\sqrt\tau`; frequent
# directions keeps the leading directions and falls faster; the sparse summary keeps
# the largest entries of the scatter, which on such data hold most of it.

fig, ax = plt.subplots(figsize=(6.4, 4.4))
for a, kind in enumerate(curve.kinds):
    ax.plot(sizes, curve.relative[a].mean(axis=1), marker="o", label=LABELS.get(kind, kind))
randomized = curve.kinds.index("randomized")
expected = curve.expected[randomized] / curve.gram_norm
ax.plot(sizes, expected, linestyle="--", color="grey", label="expected, randomized")
ax.set(
    xscale="log",
    yscale="log",
    xlabel="sketch size τ",
    ylabel="relative error  ‖AᵀA − sketch‖_F / ‖AᵀA‖_F",
    title=f"one class of {n:,} sparse rows, d = {d:,}",
)
ax.legend()
ax.grid(alpha=0.3, which="both")
fig.tight_layout()
plt.show()
