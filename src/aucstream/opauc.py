"""OPAUC: one-pass AUC optimization with the least-square pairwise loss.

Gao, Jin, Zhu and Zhou, *One-Pass AUC Optimization* (ICML 2013, "G13") and its journal
version (Gao, Wang, Jin, Zhu, Zhou, Artificial Intelligence 2016, "G16"); SPEC §1.

The objective is the regularized square pairwise loss

.. math::

    \\mathcal L(w) = \\frac\\lambda2\\|w\\|^2 + \\frac{1}{2T_+T_-}
        \\sum_{i\\in+,\\,j\\in-} \\big(1 - w^\\top(x_i - x_j)\\big)^2 .

At step t the per-step loss (G16 Eq. 5) sums the square loss of :math:`x_t` against
every earlier example of the opposite class :math:`\\bar y = -y_t`, divided by that
class's count. Its gradient needs only the opposite class's mean :math:`c` and
covariance :math:`S` (G16 Eqs. 7-8; G13 Eqs. 4-5):

.. math::

    g_t = \\lambda w - y_t e + e\\,(e^\\top w) + S w, \\qquad e = x_t - c ,

and the update is :math:`w \\leftarrow w - \\eta g_t`. Before the step, the example
is added to its own class's summary; while the opposite class is still empty only
the statistics are updated. The model is the last iterate (G16 §5.4).

Memory is that of the two class summaries (O(d^2) for the exact covariance),
independent of the number of examples. The summaries are
:class:`aucstream.covariance.CovarianceSummary` objects.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ._base import BaseStreamingAUC
from ._chunks import Chunk
from .covariance import FullCovariance, full_add, full_cov_matvec

__all__ = ["OPAUC", "opauc_gradient"]


@nb.njit(cache=True)
def _opauc_step(w, idx, val, y, count_opp, sum_opp, cov_w, c_w, eta, lam):
    """w <- w - eta * (lam w + S w + (e.w - y) e), e = x - c (opposite class).

    ``cov_w`` is ``S w`` and ``c_w`` is ``c^T w`` of the opposite class, both at the
    current w; ``c = sum_opp / count_opp``.
    """
    inv_t = 1.0 / count_opp
    xw = 0.0
    for a in range(idx.shape[0]):
        xw += w[idx[a]] * val[a]
    alpha = (xw - c_w) - y  # e^T w - y
    shrink = 1.0 - eta * lam
    d = w.shape[0]
    for i in range(d):
        w[i] = shrink * w[i] - eta * cov_w[i] + eta * alpha * sum_opp[i] * inv_t
    for a in range(idx.shape[0]):
        w[idx[a]] -= eta * alpha * val[a]


@nb.njit(cache=True)
def _opauc_full_chunk(w, count_neg, sum_neg, scatter_neg, count_pos, sum_pos, scatter_pos,
                      indptr, indices, data, ys, eta, lam):
    cov_w = np.empty(w.shape[0])
    for r in range(indptr.shape[0] - 1):
        lo, hi = indptr[r], indptr[r + 1]
        idx, val, y = indices[lo:hi], data[lo:hi], ys[r]
        if y > 0:
            full_add(count_pos, sum_pos, scatter_pos, idx, val)
            if count_neg[0] == 0:
                continue
            c_w = full_cov_matvec(count_neg, sum_neg, scatter_neg, w, cov_w)
            _opauc_step(w, idx, val, y, count_neg[0], sum_neg, cov_w, c_w, eta, lam)
        else:
            full_add(count_neg, sum_neg, scatter_neg, idx, val)
            if count_pos[0] == 0:
                continue
            c_w = full_cov_matvec(count_pos, sum_pos, scatter_pos, w, cov_w)
            _opauc_step(w, idx, val, y, count_pos[0], sum_pos, cov_w, c_w, eta, lam)


def opauc_gradient(w: np.ndarray, x: np.ndarray, y: float, opposite, lam: float) -> np.ndarray:
    """The OPAUC gradient g_t (G16 Eqs. 7-8) from an opposite-class summary.

    Parameters
    ----------
    w : ndarray of shape (d,)
        Current weights.
    x : ndarray of shape (d,)
        The current example.
    y : {+1, -1}
        Its label.
    opposite : CovarianceSummary
        Summary of the opposite class (must hold at least one example).
    lam : float
        Regularization lambda.

    Returns
    -------
    ndarray of shape (d,)
        ``lam w - y e + e (e^T w) + S w`` with ``e = x - c``.
    """
    e = np.asarray(x, dtype=np.float64) - opposite.mean
    return lam * w - y * e + e * (e @ w) + opposite.matvec(w)


class OPAUC(BaseStreamingAUC):
    """One-pass AUC optimization (OPAUC), square pairwise loss, exact covariances.

    See the module docstring for the update. Per example the cost is O(k^2) for
    the statistics (k non-zeros of x) plus O(d^2) for the product with the opposite
    class's covariance; memory is O(d^2), independent of the number of examples.

    Parameters
    ----------
    eta : float, default=2**-8
        Constant step size. The papers tune it over 2^[-12:10] (G13 §6.1; G16 §7.1)
        and find values in [2^-12, 2^-4] work best (G16 Figs. 5-6). The default is a
        library choice, not the papers'.
    lam : float, default=2**-8
        L2 regularization lambda, tuned over 2^[-10:2] in the papers.
    shuffle : bool, default=False
        Whether ``fit`` visits the examples in a random order (one pass still).
    random_state : int, Generator or None, default=None
        Seed of the shuffle.

    Attributes
    ----------
    w_ : ndarray of shape (n_features,)
        Current weights (also ``coef_[0]``).
    stats_ : list of two FullCovariance
        Summaries of the negative and the positive class.
    classes_ : ndarray of shape (2,)
        Labels; ``classes_[1]`` is the positive class.
    n_samples_seen_ : int
        Number of examples processed.
    n_features_in_ : int
        Number of features.

    Examples
    --------
    >>> from aucstream import OPAUC
    >>> from aucstream.datasets import load_diabetes
    >>> data = load_diabetes()
    >>> model = OPAUC(eta=2**-6, lam=2**-8).fit(data.X, data.y)
    >>> round(model.score(data.X, data.y), 2) > 0.8
    True
    """

    param_grid = {
        "eta": [2.0**k for k in range(-12, 11)],
        "lam": [2.0**k for k in range(-10, 3)],
    }

    def __init__(self, eta: float = 2**-8, lam: float = 2**-8, shuffle: bool = False,
                 random_state=None):
        self.eta = eta
        self.lam = lam
        self.shuffle = shuffle
        self.random_state = random_state

    def _init_state(self, n_features: int) -> None:
        if not (self.eta > 0 and np.isfinite(self.eta)):
            raise ValueError(f"eta must be a positive finite number, got {self.eta}")
        if not (self.lam >= 0 and np.isfinite(self.lam)):
            raise ValueError(f"lam must be a non-negative finite number, got {self.lam}")
        self.w_ = np.zeros(n_features)
        self.stats_ = [FullCovariance(n_features), FullCovariance(n_features)]

    def _update(self, chunk: Chunk) -> None:
        neg, pos = self.stats_
        _opauc_full_chunk(self.w_, neg.count_, neg.sum_, neg.scatter_, pos.count_, pos.sum_,
                          pos.scatter_, chunk.indptr, chunk.indices, chunk.data, chunk.y,
                          float(self.eta), float(self.lam))

    def _coef(self) -> np.ndarray:
        return self.w_
