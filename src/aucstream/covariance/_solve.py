r"""The closed-form minimizer of OPAUC's objective from two class summaries.

OPAUC minimizes the regularized square pairwise loss (G13 Eq. 3; G16 Eq. 3)

.. math::

    \mathcal L(w) = \frac\lambda2\|w\|^2 + \frac{1}{2T_+T_-}
        \sum_{i\in+,\,j\in-} \big(1 - w^\top(x_i - x_j)\big)^2 .

With :math:`d_{ij} = x_i - x_j`, :math:`\frac{1}{T_+T_-}\sum_{ij} d_{ij} d_{ij}^\top =
S_+ + S_- + \delta\delta^\top` and :math:`\frac{1}{T_+T_-}\sum_{ij} d_{ij} = \delta =
c_+ - c_-` (:math:`S_\pm`, :math:`c_\pm`: the classes' covariances, normalized by
their counts, and means), so the gradient vanishes at

.. math::

    w^* = (\lambda I + S_+ + S_- + \delta\delta^\top)^{-1}\,\delta ,

the batch LS-SVM of G16 §7.1 (:class:`aucstream.LSSVMAUC`). It needs only the counts,
means and covariances, so it can be computed from merged summaries of shards.
:func:`solve_from_statistics` does so for every summary kind, with the summaries'
estimates :math:`\hat S_\pm` in place of :math:`S_\pm`:

- :class:`FullCovariance`: the exact d x d system, O(d^3) (Cholesky).
- The low-rank sketches ("randomized", "hash", "fd"): each estimate is
  :math:`\hat S = Z_c Z_c^\top/T - \kappa\,c c^\top` with a d x tau matrix
  :math:`Z_c` and a scalar :math:`\kappa` fixed by the centering (below), so
  :math:`A = \lambda I + U C U^\top` with the d x k matrix :math:`U = [Z_{c+}/\sqrt{T_+},
  Z_{c-}/\sqrt{T_-}, c_+, c_-, \delta]` (:math:`k \le 2\tau + 3`) and a diagonal C of
  signs and :math:`-\kappa_\pm`. A maps the range of U into itself and is
  :math:`\lambda I` on its orthogonal complement, and :math:`\delta` lies in that
  range, so with an orthonormal basis Q of it (from the k x k Gram matrix of U),
  :math:`w^* = Q\,(\lambda I + B C B^\top)^{-1} Q^\top\delta` with :math:`B = Q^\top U`:
  a k x k solve, O(d k^2) = O(d tau^2) in all, never a d x d array (nor a d x k
  copy of U); one step of iterative refinement recovers the accuracy the Gram
  matrix's squared conditioning costs. This is the
  Woodbury identity :math:`(\lambda I + U C U^\top)^{-1} = \lambda^{-1}(I - U(\lambda
  C^{-1} + U^\top U)^{-1}U^\top)` written on an orthonormal basis, which also covers
  :math:`\kappa = 0` (C singular) and :math:`\lambda = 0` (the least-norm solution).
- :class:`SparsifiedCovariance` and :class:`ExactSparseCovariance`: :math:`\hat S =
  P/T - c c^\top` with a sparse P, so :math:`A = B + W C W^\top` with the sparse
  :math:`B = \lambda I + P_+/T_+ + P_-/T_-` (a sparse LU factorization) and the rank-3
  correction :math:`W = [c_+, c_-, \delta]`, :math:`C = \mathrm{diag}(-1, -1, 1)`,
  applied by the Woodbury identity.

The centerings (the ``CENTER_*`` codes of :mod:`aucstream.covariance`):
"g16" :math:`Z_c = Z`, :math:`\kappa = 1`; "g13" :math:`Z_c = Z`,
:math:`\kappa = \|u\|^2/T^2`; "exact" of the linear sketches :math:`Z_c = Z - c
u^\top`, :math:`\kappa = 0`; "exact" of frequent directions :math:`Z_c = Z`,
:math:`\kappa = 0` (u: the draws' sum). Where the estimates are not positive
semi-definite (the papers' centerings) and :math:`\lambda` does not make A positive
definite, the objective with the estimates is not convex and :math:`w^*` is its
stationary point; the "exact" centerings keep it the minimizer.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ._base import CovarianceSummary
from ._full import FullCovariance
from ._lowrank import CENTER_EXACT, CENTER_G13, CENTER_G16, _LowRankSummary
from ._sparse import SparsifiedCovariance

__all__ = ["solve_from_statistics"]


def solve_from_statistics(neg: CovarianceSummary, pos: CovarianceSummary, lam: float) -> np.ndarray:
    r"""The minimizer of the regularized square pairwise loss over all the examples
    two class summaries hold: :math:`w^* = (\lambda I + \hat S_+ + \hat S_- +
    \delta\delta^\top)^{-1}\delta`, :math:`\delta = c_+ - c_-` (module docstring).

    Exact for :class:`FullCovariance` and :class:`ExactSparseCovariance` (the same
    optimum as :class:`aucstream.LSSVMAUC` with the same ``lam`` on those examples),
    and the optimum with the sketch's covariance estimates for the other kinds, in
    O(d tau^2) for the low-rank sketches.

    Parameters
    ----------
    neg, pos : CovarianceSummary
        Summaries of the negative and the positive class: the same kind and settings,
        both non-empty (e.g. merged summaries of shards, or ``OPAUC.stats_``).
    lam : float
        :math:`\lambda \ge 0`. With 0 the system may be singular; the least-norm
        least-squares solution is returned then (for the sparse kinds, only where
        the sparse part can be factorized).

    Returns
    -------
    ndarray of shape (n_features,)

    Raises
    ------
    TypeError
        Summaries of different kinds, or of a kind without a closed form.
    ValueError
        An empty summary, different dimensions or settings, or a bad ``lam``.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream import LSSVMAUC
    >>> from aucstream.covariance import FullCovariance, solve_from_statistics
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = (X[:, 0] > 0).astype(int)
    >>> neg, pos = FullCovariance(3).update(X[y == 0]), FullCovariance(3).update(X[y == 1])
    >>> w = solve_from_statistics(neg, pos, lam=0.5)
    >>> bool(np.allclose(w, LSSVMAUC(lam=0.5).fit(X, y).w_))
    True
    """
    _check(neg, pos, lam)
    lam = float(lam)
    delta = pos.mean - neg.mean
    if isinstance(neg, FullCovariance):
        return _solve_dense(pos.covariance + neg.covariance + np.outer(delta, delta), delta, lam)
    if isinstance(neg, _LowRankSummary):
        return _solve_lowrank(neg, pos, delta, lam)
    if isinstance(neg, SparsifiedCovariance):
        return _solve_sparse(neg, pos, delta, lam)
    raise TypeError(f"no closed form for {type(neg).__name__}")  # pragma: no cover


def _check(neg, pos, lam) -> None:
    for name, summary in (("neg", neg), ("pos", pos)):
        if not isinstance(summary, CovarianceSummary):
            raise TypeError(f"{name} must be a CovarianceSummary, got {type(summary).__name__}")
    if type(neg) is not type(pos):
        raise TypeError(
            f"the summaries must be of one kind, got {type(neg).__name__} and {type(pos).__name__}"
        )
    if neg.n_features != pos.n_features:
        raise ValueError(f"the summaries have {neg.n_features} and {pos.n_features} features")
    for setting in ("sketch_size", "centering"):
        if getattr(neg, setting, None) != getattr(pos, setting, None):
            raise ValueError(f"the summaries have different {setting}")
    for name, summary in (("neg", neg), ("pos", pos)):
        if summary.count == 0:
            raise ValueError(f"the {name} summary is empty: the AUC objective needs both classes")
    if isinstance(lam, (bool, np.bool_)) or not (
        isinstance(lam, (int, float, np.number)) and np.isfinite(lam) and lam >= 0
    ):
        raise ValueError(f"lam must be a finite number >= 0, got {lam!r}")


def _solve_dense(A: np.ndarray, b: np.ndarray, lam: float) -> np.ndarray:
    """``(lam I + A)^{-1} b`` for a symmetric A (Cholesky; least norm if singular)."""
    A = 0.5 * A + 0.5 * A.T  # halves first, so that the sum cannot overflow
    A[np.diag_indices_from(A)] += lam
    if lam > 0:
        try:
            return scipy.linalg.solve(A, b, assume_a="pos")
        except np.linalg.LinAlgError:  # indefinite estimate (papers' centerings)
            pass
    return scipy.linalg.lstsq(A, b)[0]


def _centered_factor(summary: _LowRankSummary) -> tuple[np.ndarray, float]:
    r""":math:`(Z_c/\sqrt T, \kappa)` with :math:`\hat S = Z_c Z_c^\top/T - \kappa c
    c^\top` (module docstring)."""
    t = summary.count
    Z = summary.sketch_matrix()
    code = summary.center_code
    if code == CENTER_EXACT:
        Z = Z - np.outer(summary.mean, summary.asum_)
        kappa = 0.0
    elif code == CENTER_G13:
        kappa = float(summary.asum_ @ summary.asum_) / (t * t)
    elif code == CENTER_G16:
        kappa = 1.0
    else:  # CENTERED_SKETCH: Z sketches the centered examples
        kappa = 0.0
    return Z / np.sqrt(t), kappa


def _solve_lowrank(neg, pos, delta: np.ndarray, lam: float) -> np.ndarray:
    r"""``(lam I + U C U^T)^{-1} delta`` on an orthonormal basis of range(U); O(d k^2).

    U is kept as its blocks (no d x k copy). Its Gram matrix :math:`G = U^\top U`
    (k x k, block by block) gives the basis: with the columns scaled to unit norm,
    :math:`U = \tilde U S`, and :math:`\tilde U^\top \tilde U = V\Lambda V^\top`,
    :math:`Q = \tilde U V\Lambda^{-1/2}` (eigenvalues below :math:`k\epsilon
    \Lambda_{max}` dropped: the dependent columns, e.g. :math:`\delta = c_+ - c_-`), so
    :math:`B = Q^\top\tilde U = \Lambda^{1/2}V^\top` and everything is k x k. The
    Gram matrix squares the condition number, so one step of iterative refinement
    (the residual by O(dk) products) follows.
    """
    blocks, signs = [], []
    for summary in (pos, neg):
        Zc, kappa = _centered_factor(summary)
        blocks.append(Zc)
        signs.append(np.ones(Zc.shape[1]))
        if kappa != 0.0:
            blocks.append(summary.mean[:, None])
            signs.append(np.array([-kappa]))
    blocks.append(delta[:, None])
    signs.append(np.ones(1))
    C = np.concatenate(signs)
    edges = np.cumsum([0] + [b.shape[1] for b in blocks])
    k = int(edges[-1])
    G = np.empty((k, k))
    for i, bi in enumerate(blocks):
        for j in range(i, len(blocks)):
            g = bi.T @ blocks[j]
            G[edges[i] : edges[i + 1], edges[j] : edges[j + 1]] = g
            G[edges[j] : edges[j + 1], edges[i] : edges[i + 1]] = g.T

    def times_u(a):  # U a
        out = np.zeros(delta.shape[0])
        for i, bi in enumerate(blocks):
            out += bi @ a[edges[i] : edges[i + 1]]
        return out

    def times_ut(v):  # U^T v
        return np.concatenate([bi.T @ v for bi in blocks])

    norms = np.sqrt(np.maximum(np.diag(G), 0.0))
    if norms[-1] == 0.0:  # delta = 0, and so is w*
        return np.zeros(delta.shape[0])
    scale = np.where(norms > 0.0, norms, 1.0)
    Gn = G / np.outer(scale, scale)
    lams, V = np.linalg.eigh(0.5 * Gn + 0.5 * Gn.T)
    keep = lams > lams[-1] * k * np.finfo(float).eps
    lams, V = lams[keep], V[:, keep]
    B = np.sqrt(lams)[:, None] * V.T  # Q^T U~, rank x k
    M = (B * (C * scale**2)) @ B.T
    to_coef = (V / np.sqrt(lams)) / scale[:, None]  # U a = Q y for a = to_coef @ y
    solve = _small_solver(M, lam)

    def apply_inverse(v_ut):  # coefficients a with U a = A^{-1} v, from U^T v
        return to_coef @ solve((V / np.sqrt(lams)).T @ (v_ut / scale))

    a = apply_inverse(G[:, -1])  # U^T delta is G's last column
    w = times_u(a)
    # one step of iterative refinement: r = delta - A w, w += A^{-1} r (r in range(U))
    r = delta - lam * w - times_u(C * times_ut(w))
    return w + times_u(apply_inverse(times_ut(r)))


def _small_solver(M: np.ndarray, lam: float):
    """``b -> (lam I + M)^{-1} b`` for a small symmetric M, factorized once (least
    norm when singular)."""
    A = 0.5 * M + 0.5 * M.T
    A[np.diag_indices_from(A)] += lam
    if lam > 0:
        try:
            factor = scipy.linalg.cho_factor(A)
            return lambda b: scipy.linalg.cho_solve(factor, b)
        except np.linalg.LinAlgError:  # indefinite estimate (papers' centerings)
            pass
    pinv = scipy.linalg.pinvh(A)
    return lambda b: pinv @ b


def _scatter_matrix(summary: SparsifiedCovariance) -> sp.csc_matrix:
    """The stored P as a symmetric sparse matrix."""
    rows, cols, vals = summary.entries()
    off = rows != cols
    d = summary.n_features
    return sp.csc_matrix(
        (
            np.concatenate([vals, vals[off]]),
            (np.concatenate([rows, cols[off]]), np.concatenate([cols, rows[off]])),
        ),
        shape=(d, d),
    )


def _solve_sparse(neg, pos, delta: np.ndarray, lam: float) -> np.ndarray:
    r"""Woodbury over the sparse :math:`B = \lambda I + P_+/T_+ + P_-/T_-`:
    :math:`A^{-1}\delta = B^{-1}\delta - B^{-1}W(C + W^\top B^{-1} W)^{-1} W^\top
    B^{-1}\delta` with :math:`W = [c_+, c_-, \delta]`, :math:`C = C^{-1} =
    \mathrm{diag}(-1, -1, 1)`."""
    d = neg.n_features
    B = _scatter_matrix(pos) / pos.total_weight + _scatter_matrix(neg) / neg.total_weight
    B = (B + lam * sp.identity(d, format="csc")).tocsc()
    W = np.column_stack([pos.mean, neg.mean, delta])
    C = np.array([-1.0, -1.0, 1.0])
    try:
        lu = spla.splu(B)
        BiW = lu.solve(W)
    except RuntimeError as error:  # exactly singular (lam = 0)
        if d > 4096:
            raise ValueError(
                f"the sparse system is singular ({error}); use lam > 0 for this summary"
            ) from None
        A = B.toarray() + (W * C) @ W.T
        return _solve_dense(A, delta, 0.0)
    if not np.all(np.isfinite(BiW)):
        raise ValueError("the sparse system is singular or ill-conditioned; use lam > 0")
    Bid = BiW[:, 2]  # B^{-1} delta (delta is W's last column)
    small = np.diag(C) + W.T @ BiW
    coef = scipy.linalg.solve(small, W.T @ Bid)
    return Bid - BiW @ coef
