r"""Batch baselines of the OPAUC paper: pairwise square and hinge losses, univariate losses.

Gao, Wang, Jin, Zhu, Zhou, *One-Pass AUC Optimization* (AI 2016, "G16") §7.1 and
Table 3 (G13 §6.1, Table 3) compare OPAUC with five batch learners.
All are linear scorers :math:`s(x) = w^\top x (+ b)`, fitted on all their data at once
(``is_batch = True``: the base calls ``_update`` once; they have no ``partial_fit``).
Throughout, :math:`n_\pm` are the class counts, :math:`P = n_+ n_-` the number of
positive-negative pairs and :math:`d_{ij} = x_i^+ - x_j^-`.

Batch LS-SVM, :class:`LSSVMAUC` (pairwise square loss; G16 §7.1)
    minimizes OPAUC's objective (G16 Eq. 3) exactly,

    .. math::

        \frac\lambda2\|w\|^2 + \frac{1}{2P}\sum_{i,j}(1 - w^\top d_{ij})^2 .

    Since :math:`\frac1P\sum_{ij} d_{ij} d_{ij}^\top = S_+ + S_- + \delta\delta^\top`
    and :math:`\frac1P\sum_{ij} d_{ij} = \delta = c_+ - c_-` (class means c, covariances
    S with 1/n normalization), the minimizer is
    :math:`w^* = (\lambda I + S_+ + S_- + \delta\delta^\top)^{-1}\delta` in
    O(n d^2 + d^3), never enumerating pairs.

Batch Uni-Log / Uni-Squ, :class:`BatchUnivariate` (G16 §7.1 after Kotlowski et al.
2011)
    minimize :math:`\frac\lambda2\|w\|^2 + \frac1n\sum_i \rho_{y_i}
    \ell(y_i(w^\top x_i + b))` with the class-prior weights
    :math:`\rho_\pm = n / (2 n_\pm)` and an unregularized intercept b.

    * ``loss="log"``, :math:`\ell(z) = \log(1 + e^{-z})`: scikit-learn's
      ``LogisticRegression(class_weight="balanced", solver="lbfgs")``. Its objective
      :math:`\frac12\|w\|^2 + C\sum_i s_i\ell_i` with :math:`s_i = \rho_{y_i}` (that
      is what "balanced" means) is ours multiplied by :math:`1/\lambda` when
      :math:`C = 1/(n\lambda)`; lbfgs leaves the intercept unpenalized.
    * ``loss="squ"``, :math:`\ell(z) = (1 - z)^2 = (y - w^\top x - b)^2`: weighted ridge
      regression on the targets :math:`y \in \{\pm1\}`. With :math:`r_i = \rho_{y_i}/n`
      (so :math:`\sum r_i = 1`), the weighted mean :math:`\bar x = \sum r_i x_i`, and
      :math:`\bar y = \sum r_i y_i = 0`, the normal equations are
      :math:`(\frac\lambda2 I + \sum_i r_i (x_i - \bar x)(x_i - \bar x)^\top) w =
      \sum_i r_i y_i (x_i - \bar x)` and :math:`b = -\bar x^\top w`.

    With these weights the Gram matrix is :math:`\frac12(S_+ + S_-) +
    \frac14\delta\delta^\top` and the right-hand side :math:`\frac12\delta`, so
    :math:`w_{squ} = (\lambda I + S_+ + S_- + \frac12\delta\delta^\top)^{-1}\delta`:
    by Sherman-Morrison a positive multiple of LS-SVM's :math:`w^*` at the same
    :math:`\lambda`, so the two rank identically (tested). G16 Table 3 reports
    different numbers for them, so the paper's Uni-Squ must have differed (other
    weights, or a regularized bias); the paper does not say.

SVM-OR / SVM-perf, :class:`PairwiseHingeSVM`, :class:`SVMOR`, :class:`SVMPerfAUC`
(Joachims 2005, 2006)
    minimize the pairwise hinge objective

    .. math::

        F(w) = \frac\lambda2\|w\|^2 + H(w), \qquad
        H(w) = \frac1P\sum_{i\in+,\,j\in-}\max(0, 1 - w^\top d_{ij}),

    with the 1-slack cutting-plane method (Joachims 2006, Alg. 1 / "Joachims, Finley,
    Yu 2009"): :math:`\min \frac12\|w\|^2 + C\xi` with :math:`C = 1/\lambda`,
    subject to :math:`w^\top a_k \ge b_k - \xi` for the working-set constraints k. The
    separation oracle returns the most violated constraint at w,
    :math:`a = \frac1P\sum_{ij}[w^\top d_{ij} < 1] d_{ij}`,
    :math:`b = \frac1P\sum_{ij}[w^\top d_{ij} < 1]`, for which :math:`b - w^\top a = H(w)`.
    With scores s = Xw it needs only the counts
    :math:`k_i = \#\{j\in-: s_j > s_i - 1\}` and :math:`m_j = \#\{i\in+: s_i < s_j + 1\}`:
    :math:`a = \frac1P(\sum_i k_i x_i - \sum_j m_j x_j)`, found by sorting and binary
    search in O(n log n) (:func:`pairwise_hinge_oracle`), so pairs are never
    enumerated. The dual over the working set,
    :math:`\max_{\beta \ge 0, \sum\beta \le C} \beta^\top b - \frac12\|\sum_k\beta_k
    a_k\|^2` with :math:`w = \sum_k \beta_k a_k`, is solved by sequential minimal
    optimization over the simplex (a slack coordinate turns :math:`\sum\beta \le C`
    into an equality), warm-started from the previous round. The method stops when
    :math:`H(w) \le \xi + \epsilon`, where :math:`\xi = \max(0, \max_k b_k -
    w^\top a_k)`; then :math:`F(w) \le \min F + \epsilon`.

    SVM-perf with the ROC-area loss (margin rescaling) reduces to this problem over
    all pairs (Joachims 2005 §5); its loss is the *percentage* of swapped pairs, so
    SVM-perf's objective is :math:`\frac12\|w\|^2 + C_{perf}\cdot 100\,H(w)` and
    :math:`\lambda = 1 / (100\, C_{perf})`; its ``-e`` tolerance is in percent too
    (:math:`\epsilon = e/100`). SVM-OR (ordinal regression) with two ranks is the same
    problem in the :math:`\lambda` parameterization (G16 does not say how its SVM-OR
    baseline was set up; with two ranks, ordinal regression compares exactly the
    positive-negative pairs).

Example weights (``sample_weight``)
    Weights enter the objectives as multiplicities: an example of weight
    :math:`\omega_i` counts :math:`\omega_i` times. LS-SVM and the pairwise hinge
    weigh pair (i, j) by :math:`\omega_i\omega_j` and average over
    :math:`W_+ W_-` instead of :math:`n_+ n_-` (for LS-SVM: the weighted class means
    and covariances, normalized by the class weight totals :math:`W_\pm`, in the
    same closed form); the univariate losses weigh example i by
    :math:`\omega_i\rho_{y_i}` with :math:`\rho_\pm = W/(2W_\pm)` and average over
    :math:`W`. Integer weights therefore give the model of the data with every row
    repeated weight times (up to the solvers' tolerances), and weight 0 drops a row
    (its row is removed before solving). Weights that leave a class empty are
    refused.

Overflow and memory
    The solvers stop with a ``FloatingPointError`` that names the quantity when a
    matrix they build, the scores, the hinge loss or the gradient of the
    cutting-plane dual is not finite (features so large that their products
    overflow; the cutting-plane method used to run every round to ``max_iter`` with
    NaN in its stopping tests). LS-SVM and Uni-Squ declare their d x d working
    memory, which is checked against aucstream's memory budget before anything is
    allocated.

Deviations
----------
- The batch learners form d x d matrices (LS-SVM, Uni-Squ); they are meant for the
  moderate dimensions of G16 Table 3 (d up to a few thousand), as in the paper.
- SVM-perf and SVM-OR are one solver here, so with matching grids they
  give the same models; in G16 Table 3 they come from two different programs.
- Data are multiplied as dense arrays when at least 25 % of the entries are
  non-zero, as sparse matrices otherwise. The choice counts true non-zeros, so dense
  and sparse input of the same data take the same path.
- CAPO (Li, Tsang and Zhou 2013, a baseline of D16 §5.1) is not provided: its scorer
  is not linear in x (see the project's notes).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from ._base import BaseStreamingAUC
from ._chunks import Chunk
from ._kernels import jit
from ._params import StrOptions, positive, positive_int
from ._runtime import LearnerTags, StateSpec
from ._typing import Matrix
from ._warn import caller_stacklevel

__all__ = [
    "BatchUnivariate",
    "LSSVMAUC",
    "PairwiseHingeSVM",
    "SVMOR",
    "SVMPerfAUC",
    "cutting_plane_hinge",
    "pairwise_hinge_oracle",
]

_LAM_GRID = [2.0**k for k in range(-10, 11)]
_DENSE_FRACTION = 0.25
_SQUARE_HINT = (
    "this solver forms d x d matrices; for many features use PairwiseHingeSVM or "
    "BatchUnivariate(loss='log') (O(n d) memory), or an online learner"
)


def _design(chunk: Chunk):
    """The chunk's rows as a dense array or a CSR matrix, chosen by true density."""
    n, d = chunk.n_samples, chunk.n_features
    nnz = int(np.count_nonzero(chunk.data))
    if n * d == 0 or nnz >= _DENSE_FRACTION * n * d:
        return chunk.dense()
    X = sp.csr_matrix((chunk.data, chunk.indices, chunk.indptr), shape=(n, d))
    if nnz < chunk.data.shape[0]:  # explicit zeros: dropped from a copy (the chunk's
        X = X.copy()  # arrays are read-only views, maybe of the caller's matrix)
        X.eliminate_zeros()
    return X


def _class_stats(X, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Weighted mean and covariance (normalized by the total weight) of the rows of X.

    Without weights every row weighs 1 (the 1/n normalization).
    """
    if weights is None:
        n = X.shape[0]
        if sp.issparse(X):
            mean = np.asarray(X.mean(axis=0)).ravel()
            scatter = np.asarray((X.T @ X).toarray()) / n
            return mean, scatter - np.outer(mean, mean)
        mean = X.mean(axis=0)
        Xc = X - mean
        return mean, (Xc.T @ Xc) / n
    total = float(weights.sum())
    if sp.issparse(X):
        mean = np.asarray(X.T @ weights).ravel() / total
        scatter = np.asarray((X.T @ sp.diags(weights) @ X).toarray()) / total
        return mean, scatter - np.outer(mean, mean)
    mean = (weights @ X) / total
    Xc = X - mean
    return mean, (Xc.T @ (weights[:, None] * Xc)) / total


def _require_finite(what: str, *arrays) -> None:
    """Stop a batch solver with a clear error when a quantity it uses is not finite."""
    for array in arrays:
        if not np.all(np.isfinite(array)):
            raise FloatingPointError(
                f"{what} overflowed to infinity or NaN: the feature values are too large "
                "for this solver; scale the features"
            )


class _BatchLearner(BaseStreamingAUC):
    """Base of the batch learners: ``fit`` only (the base hides ``partial_fit``).

    Example weights (``sample_weight``) weigh each example's terms in the objective
    (see each learner); an example of integer weight k counts as k copies of itself,
    and weight 0 drops it (its row is removed before solving, so the result equals
    fitting without it).
    """

    is_batch = True
    _tags = LearnerTags(sample_weight=True)

    def _weighted_design(self, chunk: Chunk):
        """The design, the +/-1 labels and the weights (None: all 1) of the examples of
        positive weight; refuses weights that leave a class empty."""
        weights = chunk.sample_weight if chunk.sample_weight.shape[0] else None
        X, y = _design(chunk), chunk.y
        if weights is None:
            return X, y, None
        keep = weights > 0
        if not keep.any():
            raise ValueError("sample_weight is zero for every example: there is nothing to learn")
        for label, name in ((1.0, "positive"), (-1.0, "negative")):
            if not keep[y == label].any():
                raise ValueError(
                    f"sample_weight is zero for every example of the {name} class: the AUC "
                    "ranks two classes"
                )
        if keep.all():
            return X, y, weights
        return X[keep], y[keep], weights[keep]


def _solve_spd(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    A = 0.5 * A + 0.5 * A.T  # symmetric; halves first, so that the sum cannot overflow
    try:
        return scipy.linalg.solve(A, b, assume_a="pos")
    except np.linalg.LinAlgError:  # pragma: no cover - lam > 0 makes A positive definite
        return scipy.linalg.lstsq(A, b)[0]


# ------------------------------------------------------------------------------ LS-SVM
class LSSVMAUC(_BatchLearner):
    r"""Batch LS-SVM for AUC: the exact minimizer of the pairwise square loss.

    :math:`w^* = (\lambda I + S_+ + S_- + \delta\delta^\top)^{-1}\delta` (module
    docstring), the batch optimum of OPAUC's objective.

    Parameters
    ----------
    lam : float, default=1.0
        Regularization :math:`\lambda > 0`; G16 tunes it over 2^[-10:10]. The default
        is a library choice.

    Attributes
    ----------
    w_ : ndarray of shape (n_features,)
        Weights.
    classes_, n_samples_seen_, n_features_in_
        As for every aucstream learner.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.batch import LSSVMAUC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 4)); y = (X @ [1.0, -1.0, 0.5, 0.0] > 0.5).astype(int)
    >>> model = LSSVMAUC(lam=2**-4).fit(X, y)
    >>> model.score(X, y) > 0.95
    True
    """

    param_grid = {"lam": list(_LAM_GRID)}
    _parameter_constraints = {"lam": [positive()]}
    #: two class covariances, A, its factor
    _state_spec = StateSpec(nbytes=lambda learner, d: 8 * 4 * d * d, memory_hint=_SQUARE_HINT)

    def __init__(self, lam: float = 1.0):
        self.lam = lam

    def _init_state(self, n_features: int) -> None:
        self.w_ = np.zeros(n_features)

    def _update(self, chunk: Chunk) -> None:
        X, y, weights = self._weighted_design(chunk)
        pos = y > 0
        c_pos, s_pos = _class_stats(X[pos], None if weights is None else weights[pos])
        c_neg, s_neg = _class_stats(X[~pos], None if weights is None else weights[~pos])
        delta = c_pos - c_neg
        A = s_pos + s_neg + np.outer(delta, delta)
        _require_finite("the class covariances", A)
        A[np.diag_indices_from(A)] += float(self.lam)
        self.w_ = _solve_spd(A, delta)

    def _coef(self) -> np.ndarray:
        return self.w_


# ------------------------------------------------------------------ univariate losses
class BatchUnivariate(_BatchLearner):
    r"""Batch Uni-Log / Uni-Squ: class-prior weighted univariate loss with intercept.

    Minimizes :math:`\frac\lambda2\|w\|^2 + \frac1n\sum_i\rho_{y_i}\ell(y_i(w^\top
    x_i + b))`, :math:`\rho_\pm = n/(2n_\pm)` (module docstring).

    Parameters
    ----------
    loss : {"log", "squ"}, default="log"
        Logistic loss (scikit-learn's ``LogisticRegression`` with
        ``class_weight="balanced"`` and ``C = 1/(n lam)``, L-BFGS to gradient tolerance
        ``tol``) or square loss (closed form).
    lam : float, default=1.0
        Regularization :math:`\lambda > 0`, tuned over 2^[-10:10] in G16.
    tol : float, default=1e-6
        Gradient tolerance of L-BFGS (``loss="log"`` only).
    max_iter : int, default=1000
        Iteration cap of L-BFGS (``loss="log"`` only).

    Attributes
    ----------
    w_ : ndarray of shape (n_features,)
        Weights.
    b_ : float
        Intercept (also ``intercept_[0]``).
    n_iter_ : int
        L-BFGS iterations (1 for the closed form).
    classes_, n_samples_seen_, n_features_in_
        As for every aucstream learner.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.batch import BatchUnivariate
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 4)); y = (X @ [1.0, -1.0, 0.5, 0.0] > 0.5).astype(int)
    >>> BatchUnivariate(loss="squ", lam=2**-6).fit(X, y).score(X, y) > 0.95
    True
    >>> BatchUnivariate(loss="log", lam=2**-6).fit(X, y).score(X, y) > 0.95
    True
    """

    param_grid = {"lam": list(_LAM_GRID)}
    _state_spec = StateSpec(
        nbytes=lambda learner, d: 8 * 2 * d * d if learner.loss == "squ" else 0,
        memory_hint=_SQUARE_HINT,
    )
    _parameter_constraints = {
        "loss": [StrOptions({"log", "squ"})],
        "lam": [positive()],
        "tol": [positive()],
        "max_iter": [positive_int()],
    }

    def __init__(
        self, loss: str = "log", lam: float = 1.0, tol: float = 1e-6, max_iter: int = 1000
    ):
        self.loss = loss
        self.lam = lam
        self.tol = tol
        self.max_iter = max_iter

    def _init_state(self, n_features: int) -> None:
        self.w_ = np.zeros(n_features)
        self.b_ = 0.0

    def _update(self, chunk: Chunk) -> None:
        X, y, weights = self._weighted_design(chunk)
        omega = np.ones(y.shape[0]) if weights is None else weights
        total = float(omega.sum())
        pos = y > 0
        # rho_y / n with weighted counts: r_i = omega_i / (2 W_{y_i}), summing to 1
        r = np.where(pos, 0.5 / omega[pos].sum(), 0.5 / omega[~pos].sum()) * omega
        lam = float(self.lam)
        if self.loss == "log":
            clf = LogisticRegression(
                C=1.0 / (total * lam),
                solver="lbfgs",
                tol=float(self.tol),
                max_iter=int(self.max_iter),
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                clf.fit(X, y, sample_weight=total * r)  # omega_i rho_{y_i}
            # classes_ of clf are [-1, 1]: coef_ scores the positive class
            self.w_ = np.array(clf.coef_[0], dtype=np.float64)
            self.b_ = float(clf.intercept_[0])
            _require_finite("the logistic regression weights", self.w_, self.b_)
            self.n_iter_ = int(np.max(clf.n_iter_))
            return
        if sp.issparse(X):
            x_bar = np.asarray(X.T @ r).ravel()
            gram = np.asarray((X.T @ sp.diags(r) @ X).toarray()) - np.outer(x_bar, x_bar)
            rhs = np.asarray(X.T @ (r * y)).ravel() - x_bar * float(r @ y)
        else:
            x_bar = r @ X
            Xc = X - x_bar
            gram = Xc.T @ (r[:, None] * Xc)
            rhs = Xc.T @ (r * y)
        _require_finite("the weighted covariance", gram, rhs)
        gram[np.diag_indices_from(gram)] += 0.5 * lam
        self.w_ = _solve_spd(gram, rhs)
        self.b_ = float(r @ y) - float(x_bar @ self.w_)
        _require_finite("the weights of the square loss", self.w_, self.b_)
        self.n_iter_ = 1

    def _coef(self) -> np.ndarray:
        return self.w_

    def _intercept(self) -> float:
        return self.b_


# -------------------------------------------------------------------- pairwise hinge
def pairwise_hinge_oracle(
    s_pos: np.ndarray,
    s_neg: np.ndarray,
    w_pos: np.ndarray | None = None,
    w_neg: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, float]:
    r"""Violation counts and mean pairwise hinge loss in O(n log n).

    Parameters
    ----------
    s_pos : ndarray of shape (n_pos,)
        Scores of the positives.
    s_neg : ndarray of shape (n_neg,)
        Scores of the negatives.
    w_pos, w_neg : ndarray, optional
        Example weights of the positives and negatives (default: all 1). Pair (i, j)
        then weighs :math:`\omega_i \omega_j`, the counts below become sums of
        weights, and the mean is over :math:`W_+ W_-`.

    Returns
    -------
    k : ndarray of shape (n_pos,), int64 (float64 with weights)
        :math:`k_i = \#\{j: s_j > s_i - 1\}`, the negatives whose pair with positive i
        has margin below 1 (their total weight, with weights).
    m : ndarray of shape (n_neg,), int64 (float64 with weights)
        :math:`m_j = \#\{i: s_i < s_j + 1\}` (their total weight, with weights).
    hinge : float
        :math:`\frac1{n_+n_-}\sum_{ij}\max(0, 1 - s_i + s_j)`, from suffix sums of the
        sorted negative scores (weighted: :math:`\frac1{W_+W_-}\sum_{ij}\omega_i\omega_j
        \max(0, \cdot)`).

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.batch import pairwise_hinge_oracle
    >>> k, m, h = pairwise_hinge_oracle(np.array([2.0, 0.5]), np.array([0.0, 1.0]))
    >>> k.tolist(), m.tolist(), h
    ([0, 2], [1, 1], 0.5)
    """
    s_pos = np.asarray(s_pos, dtype=np.float64)
    s_neg = np.asarray(s_neg, dtype=np.float64)
    weighted = w_pos is not None or w_neg is not None
    w_pos = np.ones_like(s_pos) if w_pos is None else np.asarray(w_pos, dtype=np.float64)
    w_neg = np.ones_like(s_neg) if w_neg is None else np.asarray(w_neg, dtype=np.float64)
    neg_order = np.argsort(s_neg, kind="stable")
    pos_order = np.argsort(s_pos, kind="stable")
    neg_sorted, neg_weights = s_neg[neg_order], w_neg[neg_order]
    pos_sorted, pos_weights = s_pos[pos_order], w_pos[pos_order]
    n_neg = neg_sorted.shape[0]
    first = np.searchsorted(neg_sorted, s_pos - 1.0, side="right")  # violators: [first, n)
    below = np.searchsorted(pos_sorted, s_neg + 1.0, side="left")
    if not weighted:
        k = (n_neg - first).astype(np.int64)
        m = below.astype(np.int64)
        prefix = np.concatenate(([0.0], np.cumsum(neg_sorted)))
        top_sums = prefix[n_neg] - prefix[first]  # sum of the k largest negative scores
        total = float(np.sum(k * (1.0 - s_pos)) + np.sum(top_sums))
        return k, m, total / (s_pos.shape[0] * n_neg)
    weight_prefix = np.concatenate(([0.0], np.cumsum(neg_weights)))
    score_prefix = np.concatenate(([0.0], np.cumsum(neg_weights * neg_sorted)))
    k = weight_prefix[n_neg] - weight_prefix[first]
    m = np.concatenate(([0.0], np.cumsum(pos_weights)))[below]
    top_sums = score_prefix[n_neg] - score_prefix[first]
    total = float(np.sum(w_pos * (k * (1.0 - s_pos) + top_sums)))
    return k, m, total / (float(w_pos.sum()) * float(w_neg.sum()))


@jit
def _simplex_qp(gram, b, theta, scale, tol, max_iter):
    """min_theta scale/2 theta' G theta - b' theta over {theta >= 0, sum theta <= 1}.

    Sequential minimal optimization on the maximal violating pair. ``theta`` (length
    K + 1; the last entry is the slack of sum <= 1) is the warm start and is updated
    in place. Returns the number of iterations, or -1 if the gradient stopped being
    finite (overflow: the caller stops with an error).
    """
    K = b.shape[0]
    grad = np.zeros(K + 1)
    for i in range(K):
        acc = 0.0
        for j in range(K):
            acc += gram[i, j] * theta[j]
        grad[i] = scale * acc - b[i]
    it = 0
    while it < max_iter:
        up = 0  # coordinate with the smallest gradient (to increase)
        for i in range(1, K + 1):
            if grad[i] < grad[up]:
                up = i
        down = -1  # coordinate with the largest gradient among theta > 0 (to decrease)
        for i in range(K + 1):
            if theta[i] > 0.0 and (down < 0 or grad[i] > grad[down]):
                down = i
        gap = grad[down] - grad[up] if down >= 0 else 0.0
        if not math.isfinite(gap):
            return -1
        if down < 0 or gap <= tol:
            break
        g_uu = gram[up, up] if up < K else 0.0
        g_dd = gram[down, down] if down < K else 0.0
        g_ud = gram[up, down] if (up < K and down < K) else 0.0
        curv = scale * (g_uu + g_dd - 2.0 * g_ud)
        step = theta[down]
        if curv > 0.0:
            step = min(step, (grad[down] - grad[up]) / curv)
        theta[up] += step
        theta[down] -= step
        if theta[down] < 0.0:
            theta[down] = 0.0
        for i in range(K):
            col_u = gram[i, up] if up < K else 0.0
            col_d = gram[i, down] if down < K else 0.0
            grad[i] += scale * step * (col_u - col_d)
        it += 1
    return it


def cutting_plane_hinge(
    X_pos: Matrix,
    X_neg: Matrix,
    lam: float,
    tol: float = 1e-3,
    max_iter: int = 2000,
    w_pos: np.ndarray | None = None,
    w_neg: np.ndarray | None = None,
) -> tuple[np.ndarray, int, float, bool]:
    r"""Minimize the pairwise hinge objective with the 1-slack cutting-plane method.

    The objective (Joachims 2006; the module docstring, "SVM-OR / SVM-perf") is

    .. math::

        F(w) = \frac\lambda2\|w\|^2 + H(w), \qquad
        H(w) = \frac1P\sum_{i\in+,\,j\in-}\max(0, 1 - w^\top(x_i - x_j)),

    with :math:`P = n_+ n_-` (with example weights, pair (i, j) weighs
    :math:`\omega_i\omega_j` and :math:`P = W_+ W_-`). It is the 1-slack problem
    :math:`\min \frac12\|w\|^2 + C\xi` (:math:`C = 1/\lambda`) subject to
    :math:`w^\top a_k \ge b_k - \xi` for the constraints of a working set. Each round:

    1. The scores :math:`s = Xw` give, through :func:`pairwise_hinge_oracle` (O(n log
       n)), the counts :math:`k_i = \#\{j: s_j > s_i - 1\}`, :math:`m_j = \#\{i: s_i <
       s_j + 1\}` and :math:`H(w)`; the slack is :math:`\xi = \max(0, \max_k b_k -
       w^\top a_k)`.
    2. Stop if :math:`H(w) \le \xi + \epsilon` (``tol``): then :math:`F(w) \le \min F
       + \epsilon`.
    3. Add the most violated constraint :math:`a = \frac1P(\sum_i k_i x_i - \sum_j m_j
       x_j)`, :math:`b = \frac1P\sum_i k_i` (so :math:`b - w^\top a = H(w)`) and its
       row and column of the Gram matrix :math:`G_{kl} = a_k^\top a_l`.
    4. Solve the dual over the working set, :math:`\max_{\beta\ge0,\ \sum\beta\le C}
       \beta^\top b - \frac12\beta^\top G\beta`, in :math:`\theta = \beta/C` on the
       simplex (a slack coordinate makes :math:`\sum\theta \le 1` an equality) by
       sequential minimal optimization on the maximal violating pair, warm-started
       from the previous round; then :math:`w = \sum_k (\theta_k/\lambda) a_k`.

    Parameters
    ----------
    X_pos, X_neg : ndarray or sparse matrix of shape (n_pos, d), (n_neg, d)
        The positive and the negative examples (each class non-empty).
    lam : float
        :math:`\lambda > 0`.
    tol : float, default=1e-3
        :math:`\epsilon` of the stopping test.
    max_iter : int, default=2000
        Cap on the rounds (oracle calls).
    w_pos, w_neg : ndarray, optional
        Example weights of the positives and negatives (both or neither; default:
        all 1).

    Returns
    -------
    w : ndarray of shape (d,)
        The weights after the last round.
    n_iter : int
        Rounds run.
    hinge : float
        :math:`H(w)` at the last oracle call.
    converged : bool
        Whether the stopping test held (else ``max_iter`` rounds ran).

    Raises
    ------
    FloatingPointError
        When the scores, the hinge loss, the slack, a cutting plane or the gradient of
        the dual is not finite (it names which).

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.batch import cutting_plane_hinge
    >>> X_pos, X_neg = np.array([[2.0, 0.0], [1.0, 1.0]]), np.array([[0.0, 0.0]])
    >>> w, n_iter, hinge, converged = cutting_plane_hinge(X_pos, X_neg, lam=0.1)
    >>> converged, bool(hinge <= 1e-3)
    (True, True)
    """
    if (w_pos is None) != (w_neg is None):
        raise ValueError("give the weights of both classes (w_pos and w_neg) or of neither")
    if X_pos.ndim != 2 or X_neg.ndim != 2 or X_pos.shape[1] != X_neg.shape[1]:
        raise ValueError(
            f"X_pos and X_neg must be 2-d with the same number of columns, got shapes "
            f"{X_pos.shape} and {X_neg.shape}"
        )
    if X_pos.shape[0] == 0 or X_neg.shape[0] == 0:
        raise ValueError("each class needs at least one example")
    if not (lam > 0 and tol > 0 and max_iter >= 1):
        raise ValueError(f"need lam > 0, tol > 0, max_iter >= 1; got {lam}, {tol}, {max_iter}")
    if w_pos is None or w_neg is None:  # both or neither (checked above)
        n_pairs = float(X_pos.shape[0]) * float(X_neg.shape[0])
    else:
        n_pairs = float(w_pos.sum()) * float(w_neg.sum())
    d = X_pos.shape[1]
    cap = 16
    A = np.zeros((cap, d))  # constraint vectors a_k
    gram = np.zeros((cap, cap))  # a_k . a_l
    b = np.zeros(cap)
    theta = np.zeros(cap + 1)  # beta / C, plus the slack coordinate
    theta_slack = 1.0
    n_cons = 0
    w = np.zeros(d)
    hinge = 1.0
    converged = False
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        s_pos = np.asarray(X_pos @ w).ravel()
        s_neg = np.asarray(X_neg @ w).ravel()
        _require_finite("the scores X w of the cutting-plane method", s_pos, s_neg)
        k, m, hinge = pairwise_hinge_oracle(s_pos, s_neg, w_pos, w_neg)
        xi = 0.0
        if n_cons:
            xi = max(0.0, float(np.max(b[:n_cons] - A[:n_cons] @ w)))
        _require_finite("the pairwise hinge loss and the slack", hinge, xi)
        if hinge <= xi + tol:
            converged = True
            break
        k_w = k.astype(np.float64) if w_pos is None else w_pos * k
        m_w = m.astype(np.float64) if w_neg is None else w_neg * m
        a_new = (np.asarray(X_pos.T @ k_w).ravel() - np.asarray(X_neg.T @ m_w).ravel()) / n_pairs
        _require_finite("a cutting plane", a_new)
        if n_cons == cap:
            cap *= 2
            A = np.vstack([A, np.zeros((cap - n_cons, d))])
            gram_new = np.zeros((cap, cap))
            gram_new[:n_cons, :n_cons] = gram[:n_cons, :n_cons]
            gram = gram_new
            b = np.concatenate([b, np.zeros(cap - n_cons)])
            theta = np.concatenate([theta[:n_cons], np.zeros(cap - n_cons + 1)])
        A[n_cons] = a_new
        row = A[: n_cons + 1] @ a_new
        gram[n_cons, : n_cons + 1] = row
        gram[: n_cons + 1, n_cons] = row
        b[n_cons] = float(k_w.sum()) / n_pairs
        n_cons += 1
        # pack the working set (slack last) and solve the dual
        th = np.concatenate([theta[:n_cons], [theta_slack]])
        done = _simplex_qp(
            np.ascontiguousarray(gram[:n_cons, :n_cons]),
            b[:n_cons].copy(),
            th,
            1.0 / lam,
            1e-10 * max(1.0, float(b[:n_cons].max())),
            1_000_000,
        )
        if done < 0:
            _require_finite("the gradient of the cutting-plane dual", np.nan)
        theta[:n_cons] = th[:n_cons]
        theta_slack = th[n_cons]
        w = (th[:n_cons] / lam) @ A[:n_cons]
    return w, n_iter, hinge, converged


class PairwiseHingeSVM(_BatchLearner):
    r"""Pairwise hinge (ranking) SVM over all positive-negative pairs, batch.

    Minimizes :math:`\frac\lambda2\|w\|^2 + \frac1{n_+n_-}\sum_{ij}\max(0, 1 -
    w^\top(x_i - x_j))` with the 1-slack cutting-plane method and the O(n log n)
    oracle (:func:`cutting_plane_hinge`; module docstring). This is batch SVM-OR; see
    :class:`SVMPerfAUC` for SVM-perf's parameterization.

    Parameters
    ----------
    lam : float, default=1.0
        Regularization :math:`\lambda > 0` (:math:`C = 1/\lambda`); G16 tunes it over
        2^[-10:10]. The default is a library choice.
    tol : float, default=1e-3
        :math:`\epsilon`: stop when :math:`H(w) \le \xi + \epsilon`, which
        bounds the objective's distance to its minimum by :math:`\epsilon`.
    max_iter : int, default=2000
        Cap on cutting-plane rounds; a ``ConvergenceWarning`` is raised if hit.

    Attributes
    ----------
    w_ : ndarray of shape (n_features,)
        Weights.
    n_iter_ : int
        Cutting-plane rounds (oracle calls).
    objective_ : float
        :math:`F(w)` at the returned w.
    classes_, n_samples_seen_, n_features_in_
        As for every aucstream learner.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.batch import PairwiseHingeSVM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 4)); y = (X @ [1.0, -1.0, 0.5, 0.0] > 0.5).astype(int)
    >>> model = PairwiseHingeSVM(lam=2**-4).fit(X, y)
    >>> model.score(X, y) > 0.95
    True
    """

    param_grid = {"lam": list(_LAM_GRID)}
    _parameter_constraints = {
        "lam": [positive()],
        "tol": [positive()],
        "max_iter": [positive_int()],
    }

    def __init__(self, lam: float = 1.0, tol: float = 1e-3, max_iter: int = 2000):
        self.lam = lam
        self.tol = tol
        self.max_iter = max_iter

    def _lam(self) -> float:
        return float(self.lam)

    def _tol(self) -> float:
        return float(self.tol)

    def _init_state(self, n_features: int) -> None:
        self.w_ = np.zeros(n_features)
        self.n_iter_ = 0
        self.objective_ = np.nan

    def _update(self, chunk: Chunk) -> None:
        X, y, weights = self._weighted_design(chunk)
        pos = y > 0
        w_pos = None if weights is None else weights[pos]
        w_neg = None if weights is None else weights[~pos]
        lam, tol, max_iter = self._lam(), self._tol(), int(self.max_iter)
        w, n_iter, hinge, converged = cutting_plane_hinge(
            X[pos], X[~pos], lam, tol, max_iter, w_pos, w_neg
        )
        if not converged:
            warnings.warn(
                f"{type(self).__name__}: the cutting-plane method did not reach "
                f"tol={tol} in max_iter={max_iter} rounds",
                ConvergenceWarning,
                stacklevel=caller_stacklevel(),
            )
        self.w_ = w
        self.n_iter_ = n_iter
        self.objective_ = 0.5 * lam * float(w @ w) + hinge

    def _coef(self) -> np.ndarray:
        return self.w_


class SVMOR(PairwiseHingeSVM):
    r"""Batch SVM-OR (Joachims 2006) with two ranks: :class:`PairwiseHingeSVM` by name.

    Same parameters and solver as :class:`PairwiseHingeSVM` (module docstring);
    the alias names the "batch SVM-OR" column of G16 Table 3.

    Parameters
    ----------
    lam : float, default=1.0
        Regularization :math:`\lambda > 0`, tuned over 2^[-10:10] in G16.
    tol : float, default=1e-3
        Cutting-plane tolerance :math:`\epsilon`.
    max_iter : int, default=2000
        Cap on cutting-plane rounds.

    Attributes
    ----------
    w_, n_iter_, objective_, classes_, n_samples_seen_, n_features_in_
        As in :class:`PairwiseHingeSVM`.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.batch import SVMOR
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = (X @ [1.0, -1.0, 0.5] > 0).astype(int)
    >>> SVMOR(lam=0.1).fit(X, y).score(X, y) > 0.95
    True
    """


class SVMPerfAUC(PairwiseHingeSVM):
    r"""SVM-perf with the ROC-area loss (Joachims 2005), in SVM-perf's parameterization.

    SVM-perf minimizes :math:`\frac12\|w\|^2 + C\xi` with :math:`\xi` bounding the
    *percentage* of swapped pairs, i.e. :math:`\frac12\|w\|^2 + 100\,C\,H(w)`: the
    minimizer of :class:`PairwiseHingeSVM` with :math:`\lambda = 1/(100\,C)`. SVM-perf's
    ``-e`` is likewise in percent: ``epsilon`` = 100 x ``tol``.

    Parameters
    ----------
    C : float, default=0.01
        SVM-perf's ``-c`` (its default 0.01, i.e. :math:`\lambda = 1`). The grid is
        G16's :math:`\lambda \in 2^{[-10:10]}` mapped by :math:`C = 1/(100\lambda)`.
    epsilon : float, default=0.1
        SVM-perf's ``-e`` in percent (its default 0.1, i.e. tol = 1e-3).
    max_iter : int, default=2000
        Cap on cutting-plane rounds.

    Attributes
    ----------
    w_, n_iter_, objective_, classes_, n_samples_seen_, n_features_in_
        As in :class:`PairwiseHingeSVM` (``objective_`` in the lambda scale).

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.batch import SVMPerfAUC, SVMOR
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = (X @ [1.0, -1.0, 0.5] > 0).astype(int)
    >>> a = SVMPerfAUC(C=0.1).fit(X, y); b = SVMOR(lam=0.1).fit(X, y)
    >>> bool(np.allclose(a.coef_, b.coef_))
    True
    """

    param_grid = {"C": [1.0 / (100.0 * lam) for lam in _LAM_GRID]}
    _parameter_constraints = {
        "C": [positive()],
        "epsilon": [positive()],
        "max_iter": [positive_int()],
    }

    def __init__(self, C: float = 0.01, epsilon: float = 0.1, max_iter: int = 2000):
        self.C = C
        self.epsilon = epsilon
        self.max_iter = max_iter

    def _lam(self) -> float:
        return 1.0 / (100.0 * float(self.C))

    def _tol(self) -> float:
        return float(self.epsilon) / 100.0
