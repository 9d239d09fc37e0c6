"""CAPO: classifier adaptation for AUC, a non-linear batch learner.

Li, Tsang and Zhou, *Efficient optimization of performance measures by classifier
adaptation* (IEEE TPAMI 2013), as summarized by Ding, Zhao, Hoi, Ong (D16, §5.1):
"a batch algorithm which trains nonlinear auxiliary classifiers first and then adapts
auxiliary classifiers for specific performance measures". D16 uses it as a batch
baseline of its AdaOAM experiments, beside SVM-perf.

The model
---------
Auxiliary classifiers :math:`f_1, \\dots, f_M` are trained first for an ordinary
loss (here RBF-kernel support vector machines, the hinge loss for accuracy). The
adapted scorer adds a linear correction ("delta function") in the input space,

.. math::

    f(x) = \\sum_{m=1}^M \\beta_m f_m(x) + w^\\top x ,

and :math:`(w, \\beta)` minimize the pairwise hinge AUC objective (the one of
SVM-perf with the ROC-area loss, :class:`aucstream.PairwiseHingeSVM`):

.. math::

    \\frac\\lambda2\\left(\\|w\\|^2 + B\\|\\beta\\|^2\\right)
    + \\frac1{n_+n_-}\\sum_{i\\in+,\\,j\\in-}\\max\\bigl(0, 1 - f(x_i) + f(x_j)\\bigr).

With :math:`z(x) = [x;\\ f_1(x)/\\sqrt B;\\ \\dots;\\ f_M(x)/\\sqrt B]` and
:math:`v = [w;\\ \\sqrt B\\,\\beta]`, :math:`f(x) = v^\\top z(x)` and the objective is
the plain pairwise hinge SVM over :math:`z`: the adaptation is one linear
:class:`~aucstream.PairwiseHingeSVM` fit on the augmented features (its cutting-plane
solver and O(n log n) oracle), which is what makes CAPO cheap once the auxiliary
classifiers exist. This reduction of the adaptation to a linear structural SVM on
features augmented by the auxiliary scores is the reason CAPO is efficient.

Where the seed text is silent, and what we chose
-------------------------------------------------
D16 gives only the one sentence above; the original paper is not among the papers this
library follows, so its equation numbers are not cited and these choices are ours:

- **Auxiliary classifiers**: ``len(gamma_scales)`` RBF-kernel SVMs (scikit-learn's
  ``SVC`` on a kernel matrix computed here) with widths
  :math:`\\gamma_m = s_m\\,\\gamma_0`, :math:`\\gamma_0 = 1/(d\\,\\mathrm{Var}(X))`
  (scikit-learn's ``gamma="scale"``), trained for accuracy with ``aux_C``.
- **Their training data**: kernel SVMs cost O(n²) memory and more in time, so they
  train on a stratified random part of the training set, at most ``aux_max_samples``
  examples and at most ``aux_fraction`` of each class. The adaptation is fitted on the
  *other* examples, whose auxiliary scores are out-of-sample: on its own training
  examples an RBF SVM scores far better than on new data, and an adaptation fitted on
  those optimistic scores would overweight it. (When a class has fewer than two
  examples, both steps use every example.)
- **The correction** is linear in :math:`x` (no kernel) and :math:`\\beta` is
  regularized with the weight :math:`B` = ``aux_penalty`` relative to :math:`w`.

Saving without pickle
---------------------
The auxiliary SVMs are stored as arrays: the support vectors of every auxiliary
classifier stacked in ``support_vectors_`` with offsets ``sv_offsets_`` (classifier m
owns rows ``sv_offsets_[m]:sv_offsets_[m+1]``), their dual coefficients
``dual_coef_``, intercepts ``aux_intercepts_`` and widths ``gammas_``, beside ``w_``
and ``beta_``. :func:`aucstream.save_model` stores them like any state; the number of
support vectors depends on the data, so a fresh learner allocates these two members
as ``None`` and ``CAPO._check_state`` checks a loaded file's shapes, dtypes and
offsets against each other and against ``n_features_in_``.

Scores
------
The scores come through the base class's ``_raw_scores`` hook (the learner's own
score of validated rows), so ``decision_function``, ``predict`` and ``predict_proba``
behave as for every learner: ``predict_proba`` is the base class's calibration,
fitted on the training scores (those of the auxiliary part are in-sample, so the
probabilities may be overconfident; the ranking is unaffected).

Costs
-----
Training: the kernel matrix of the auxiliary part (the square of ``aux_max_samples`` floats) and
one SVM per width, then one pairwise hinge SVM in dimension d + M. Scoring: O(n_SV d)
per example (the kernel against every support vector), in blocks of 1,024 rows. CAPO
is meant for the moderate dimensions of the batch baselines (rows are made dense).
"""

from __future__ import annotations

import warnings
from numbers import Real
from typing import ClassVar

import numpy as np
from sklearn.svm import SVC

from ._base import BaseStreamingAUC
from ._chunks import Chunk
from ._params import Interval, InvalidParameterError, positive, positive_int, unit_open
from ._runtime import LearnerTags, StateSpec
from ._typing import RandomState
from .batch import PairwiseHingeSVM

__all__ = ["CAPO"]

#: Rows per block when scoring (bounds the kernel block to 1,024 x n_SV floats).
_SCORE_BLOCK = 1024


def _dense_rows(chunk: Chunk) -> np.ndarray:
    """The chunk's rows as a dense float64 array (dense chunks are read in place)."""
    if chunk.indices is None:  # dense layout: data is the 2-D array itself
        return np.asarray(chunk.data, dtype=np.float64)
    return chunk.dense()


def _squared_norms(A: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", A, A)


def rbf_kernel_matrix(A: np.ndarray, B: np.ndarray, gamma: float) -> np.ndarray:
    """:math:`K_{ij} = \\exp(-\\gamma\\|a_i - b_j\\|^2)` for dense rows ``A`` and ``B``.

    Parameters
    ----------
    A : ndarray of shape (n_a, d)
    B : ndarray of shape (n_b, d)
    gamma : float
        Kernel width (> 0).

    Returns
    -------
    ndarray of shape (n_a, n_b)

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.capo import rbf_kernel_matrix
    >>> rbf_kernel_matrix(np.array([[0.0, 0.0]]), np.array([[1.0, 1.0], [0.0, 0.0]]), 0.5)
    array([[0.36787944, 1.        ]])
    """
    d2 = _squared_norms(A)[:, None] + _squared_norms(B)[None, :] - 2.0 * (A @ B.T)
    np.maximum(d2, 0.0, out=d2)  # rounding can make tiny distances negative
    return np.exp(-gamma * d2)


def _stratified_parts(
    y: np.ndarray, fraction: float, cap: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(auxiliary rows, adaptation rows): a stratified random part of each class.

    Each class gives ``floor(fraction * n_c)`` rows (at least 1, at most n_c - 1) to
    the auxiliary part, scaled down together so that it holds at most ``cap`` rows;
    the rest is the adaptation part. A class with fewer than 2 rows cannot be split:
    then both parts are every row.
    """
    classes = [np.flatnonzero(y > 0), np.flatnonzero(y < 0)]
    if min(c.size for c in classes) < 2:
        every = np.arange(y.size)
        return every, every
    want = np.array([max(1, min(c.size - 1, int(fraction * c.size))) for c in classes])
    if want.sum() > cap:
        want = np.maximum(1, np.floor(want * (cap / want.sum())).astype(int))
    aux, rest = [], []
    for rows, k in zip(classes, want):
        order = rng.permutation(rows)
        aux.append(order[:k])
        rest.append(order[k:])
    return np.sort(np.concatenate(aux)), np.sort(np.concatenate(rest))


def _state_nbytes(learner: CAPO, n_features: int) -> int:
    """The bytes CAPO's state takes for ``n_features`` columns, from its parameters
    (``StateSpec.nbytes``)."""
    n_aux = int(learner.aux_max_samples)
    support = len(learner.gamma_scales) * n_aux * (n_features + 1)
    return 8 * (support + 2 * n_aux * n_aux + n_aux * n_features)


class CAPO(BaseStreamingAUC):
    """CAPO (Li, Tsang, Zhou 2013): auxiliary kernel SVMs adapted for the AUC, batch.

    The score is :math:`f(x) = \\sum_m \\beta_m f_m(x) + w^\\top x`, where the
    :math:`f_m` are RBF-kernel SVMs trained for accuracy and :math:`(w, \\beta)`
    minimize the pairwise hinge AUC objective (module docstring; D16 §5.1). A batch
    learner (``is_batch = True``): ``fit`` only, on all the data at once.

    Parameters
    ----------
    lam : float, default=1.0
        Regularization :math:`\\lambda > 0` of the adaptation (as in
        :class:`~aucstream.PairwiseHingeSVM`); tuned over 2^[-10:10] like the other
        batch learners. The default is a library choice.
    aux_penalty : float, default=1.0
        :math:`B > 0`: weight of :math:`\\|\\beta\\|^2` relative to :math:`\\|w\\|^2`
        (small values let the adaptation lean on the auxiliary classifiers).
    gamma_scales : tuple of float, default=(0.25, 1.0, 4.0)
        One auxiliary RBF SVM per value :math:`s_m`, of width
        :math:`s_m / (d\\,\\mathrm{Var}(X))`.
    aux_C : float, default=1.0
        ``C`` of the auxiliary SVMs (hinge loss, no class weights).
    aux_max_samples : int, default=2000
        Largest number of examples the auxiliary SVMs train on (their kernel matrix
        is this size squared).
    aux_fraction : float, default=0.5
        Largest fraction of each class given to the auxiliary SVMs; the adaptation
        is fitted on the remaining examples (module docstring).
    tol : float, default=1e-3
        Tolerance of the adaptation's cutting-plane solver.
    max_iter : int, default=2000
        Cap on its cutting-plane rounds.
    random_state : int, Generator or None, default=None
        Seeds the split into the auxiliary and adaptation parts.

    Attributes
    ----------
    w_ : ndarray of shape (n_features,)
        The linear correction (also ``coef_``).
    beta_ : ndarray of shape (n_auxiliary,)
        Weights of the auxiliary classifiers' scores.
    gammas_ : ndarray of shape (n_auxiliary,)
        Their kernel widths.
    aux_intercepts_ : ndarray of shape (n_auxiliary,)
        Their intercepts; ``intercept_`` is ``beta_ @ aux_intercepts_``.
    support_vectors_ : ndarray of shape (n_support, n_features)
        Support vectors of all auxiliary classifiers, stacked.
    dual_coef_ : ndarray of shape (n_support,)
        Their dual coefficients (label times multiplier).
    sv_offsets_ : ndarray of shape (n_auxiliary + 1,)
        Classifier m owns rows ``sv_offsets_[m]:sv_offsets_[m+1]``.
    n_iter_ : int
        Cutting-plane rounds of the adaptation.
    objective_ : float
        Its objective at the solution (in the scaled variables).
    classes_, n_samples_seen_, n_features_in_
        As for every aucstream learner.

    See Also
    --------
    aucstream.PairwiseHingeSVM : the linear pairwise hinge SVM (CAPO without the
        auxiliary classifiers).
    aucstream.SVMPerfAUC : the same in SVM-perf's parameterization.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.capo import CAPO
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 2)); y = (np.hypot(X[:, 0], X[:, 1]) < 1.0).astype(int)
    >>> model = CAPO(lam=2**-6, random_state=0).fit(X, y)   # a disc: not linear
    >>> model.score(X, y) > 0.95
    True
    """

    is_batch: ClassVar[bool] = True
    _tags = LearnerTags(dense_kernels=True)
    _state_spec = StateSpec(nbytes=_state_nbytes, memory_hint="Use a smaller aux_max_samples.")
    param_grid: ClassVar[dict[str, list]] = {"lam": [2.0**k for k in range(-10, 11)]}
    _parameter_constraints: ClassVar[dict[str, list]] = {
        "lam": [positive()],
        "aux_penalty": [positive()],
        "gamma_scales": [tuple, list],
        "aux_C": [positive()],
        "aux_max_samples": [positive_int(2)],
        "aux_fraction": [unit_open()],
        "tol": [positive()],
        "max_iter": [positive_int(1)],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(
        self,
        lam: float = 1.0,
        aux_penalty: float = 1.0,
        gamma_scales: tuple = (0.25, 1.0, 4.0),
        aux_C: float = 1.0,
        aux_max_samples: int = 2000,
        aux_fraction: float = 0.5,
        tol: float = 1e-3,
        max_iter: int = 2000,
        random_state: RandomState = None,
    ):
        self.lam = lam
        self.aux_penalty = aux_penalty
        self.gamma_scales = gamma_scales
        self.aux_C = aux_C
        self.aux_max_samples = aux_max_samples
        self.aux_fraction = aux_fraction
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    # ------------------------------------------------------------------ hooks
    def _check_params(self) -> None:
        scales = self.gamma_scales
        scale_ok = Interval(Real, 0, None, closed="neither")
        if len(scales) == 0 or not all(scale_ok.is_satisfied_by(s) for s in scales):
            raise InvalidParameterError(
                f"The 'gamma_scales' parameter of {type(self).__name__} must be a non-empty "
                f"tuple of positive numbers. Got {scales!r} instead."
            )
        if not all(np.isfinite(float(s)) for s in scales):
            raise InvalidParameterError(
                f"The 'gamma_scales' parameter of {type(self).__name__} must hold finite "
                f"numbers. Got {scales!r} instead."
            )

    def _init_state(self, n_features: int) -> None:
        m = len(self.gamma_scales)
        self.w_ = np.zeros(n_features)
        self.beta_ = np.zeros(m)
        self.gammas_ = np.ones(m)
        self.aux_intercepts_ = np.zeros(m)
        self.sv_offsets_ = np.zeros(m + 1, dtype=np.int64)
        # sizes known only after training (checked by _check_state when loaded)
        self.support_vectors_: np.ndarray | None = None
        self.dual_coef_: np.ndarray | None = None
        self.n_iter_ = 0
        self.objective_ = 0.0

    def _update(self, chunk: Chunk) -> None:
        X = _dense_rows(chunk)
        y = chunk.y
        aux, rest = _stratified_parts(
            y, float(self.aux_fraction), int(self.aux_max_samples), self._rng
        )
        X_aux, y_aux = X[aux], y[aux]
        variance = float(X_aux.var())
        gamma0 = 1.0 / (X.shape[1] * variance) if variance > 0 else 1.0
        gammas = gamma0 * np.asarray(self.gamma_scales, dtype=np.float64)
        supports, duals, intercepts, offsets = [], [], [], [0]
        scores = np.empty((rest.size, gammas.size))
        for m, gamma in enumerate(gammas):
            svm = SVC(kernel="precomputed", C=float(self.aux_C))
            svm.fit(rbf_kernel_matrix(X_aux, X_aux, gamma), y_aux)
            sv = X_aux[svm.support_]
            alpha = np.asarray(svm.dual_coef_[0], dtype=np.float64)
            supports.append(sv)
            duals.append(alpha)
            intercepts.append(float(svm.intercept_[0]))
            offsets.append(offsets[-1] + sv.shape[0])
            scores[:, m] = _kernel_scores(X[rest], sv, alpha, gamma) + intercepts[-1]
        root_b = np.sqrt(float(self.aux_penalty))
        Z = np.hstack([X[rest], scores / root_b])
        solver = PairwiseHingeSVM(lam=self.lam, tol=self.tol, max_iter=self.max_iter)
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            solver.fit(Z, y[rest])
        v = solver.coef_[0]
        d = X.shape[1]
        self.w_ = np.array(v[:d])
        self.beta_ = v[d:] / root_b
        self.gammas_ = gammas
        self.aux_intercepts_ = np.array(intercepts)
        self.support_vectors_ = np.ascontiguousarray(np.vstack(supports))
        self.dual_coef_ = np.concatenate(duals)
        self.sv_offsets_ = np.array(offsets, dtype=np.int64)
        self.n_iter_ = int(solver.n_iter_)
        self.objective_ = float(solver.objective_)

    def _coef(self) -> np.ndarray:
        return self.w_

    def _intercept(self) -> float:
        return float(self.beta_ @ self.aux_intercepts_)

    def _check_state(self) -> None:
        m = len(self.gamma_scales)
        offsets = self.sv_offsets_
        if offsets[0] != 0 or np.any(np.diff(offsets) < 0):
            raise ValueError("sv_offsets_: must start at 0 and never decrease")
        n_support = int(offsets[-1])
        if n_support > m * int(self.aux_max_samples):
            raise ValueError(
                f"sv_offsets_: {n_support} support vectors, more than {m} classifiers "
                f"x aux_max_samples={self.aux_max_samples}"
            )
        if not np.all(self.gammas_ > 0):
            raise ValueError("gammas_: kernel widths must be positive")
        expected = {
            "support_vectors_": (n_support, int(self.n_features_in_)),
            "dual_coef_": (n_support,),
        }
        for name, shape in expected.items():
            value = getattr(self, name)
            if not isinstance(value, np.ndarray):
                raise ValueError(f"{name}: expected an array, found {type(value).__name__}")
            if value.dtype != np.float64:
                raise ValueError(f"{name}: dtype {value.dtype}, expected float64")
            if value.shape != shape:
                raise ValueError(f"{name}: shape {value.shape}, expected {shape}")

    # ----------------------------------------------------------------- scoring
    def _raw_scores(self, X) -> np.ndarray:
        """The model's scores :math:`\\sum_m \\beta_m f_m(x) + w^\\top x` of validated rows.

        The base class's hook: ``decision_function`` validates the rows and shifts
        these scores by the calibrated threshold, and the calibration of
        ``predict_proba`` is fitted on them. Rows are made dense 1,024 at a time.
        """
        scores = np.empty(X.shape[0])
        offsets, vectors, duals = self.sv_offsets_, self.support_vectors_, self.dual_coef_
        if vectors is None or duals is None:
            raise RuntimeError("CAPO's support vectors are missing: fit it first")
        for start in range(0, X.shape[0], _SCORE_BLOCK):
            block = X[start : start + _SCORE_BLOCK]
            block = np.asarray(block.toarray() if hasattr(block, "toarray") else block, np.float64)
            total = block @ self.w_ + self._intercept()
            for m, gamma in enumerate(self.gammas_):
                rows = slice(int(offsets[m]), int(offsets[m + 1]))
                total += self.beta_[m] * _kernel_scores(
                    block, vectors[rows], duals[rows], float(gamma)
                )
            scores[start : start + _SCORE_BLOCK] = total
        return scores


def _kernel_scores(X: np.ndarray, support: np.ndarray, dual: np.ndarray, gamma: float):
    """:math:`\\sum_k \\alpha_k \\exp(-\\gamma\\|x - s_k\\|^2)` for every row of X."""
    if support.shape[0] == 0:
        return np.zeros(X.shape[0])
    return rbf_kernel_matrix(X, support, gamma) @ dual
