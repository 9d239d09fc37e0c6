r"""Dimension-reduction variants of OPAUC: OPAUC^f, OPAUC^rp and OPAUC^pca.

G13 §6.2 and G16 §7.2-7.3 compare the sketched OPAUCs with a simpler idea: reduce
the data to k = 1000 dimensions first (the k both papers use), then run the exact
OPAUC of G13 Alg. 1 / G16 Alg. 1. Each variant is a scikit-learn
:class:`~sklearn.pipeline.Pipeline` of a :class:`ReduceDimension` step and
:class:`aucstream.OPAUC`; when the data have at most k features there is nothing to
reduce and the step is the identity.

Recipes
-------
OPAUC^f, a random subset of k features chosen once per run (uniformly, without
replacement)::

    from aucstream.reduction import make_opauc_f
    model = make_opauc_f(k=1000, random_state=0, eta=2**-6).fit(X, y)

OPAUC^rp, a random projection :math:`\hat x = H^\top x` with
:math:`H_{ij} \sim N(0, 1/k)` (scikit-learn's
:class:`~sklearn.random_projection.GaussianRandomProjection`), or the sparse
Achlioptas/Li projection (:class:`~sklearn.random_projection.SparseRandomProjection`,
``projection="sparse"``), which stores H sparsely and suits d of 10^5-10^6::

    from aucstream.reduction import make_opauc_rp
    model = make_opauc_rp(k=1000, projection="gaussian", random_state=0).fit(X, y)

OPAUC^pca, the top-k principal directions of the training set,
:math:`\hat x = U_k^\top (x - \mu)` (:class:`~sklearn.decomposition.PCA`; sparse
input uses the ARPACK solver, which centers implicitly and never densifies X). This
one is a batch step, not one-pass; G16 reports it running out of time or memory for
large d, and so may scikit-learn::

    from aucstream.reduction import make_opauc_pca
    model = make_opauc_pca(k=1000).fit(X, y)

The pipelines score with the AUC (``Pipeline.score`` calls ``OPAUC.score``), support
``decision_function``, and can be tuned with ``GridSearchCV`` using parameter names
such as ``opauc__eta``. A pipeline's ``fit`` reduces the whole training set at once
(n x k values); to stream chunk by chunk through a fitted reduction, use
:class:`aucstream.pipeline.ChunkedPipeline`.

G13's Remark explains why random projection does worse than OPAUC_r: it
approximates :math:`S` by :math:`H H^\top S H H^\top`, replacing both identity
factors, where the randomized sketch replaces one.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.decomposition import PCA
from sklearn.pipeline import Pipeline
from sklearn.random_projection import GaussianRandomProjection, SparseRandomProjection
from sklearn.utils.validation import check_is_fitted, validate_data

from ._rng import make_rng, seed_from
from ._typing import Matrix, MatrixLike, RandomState
from .opauc import OPAUC

__all__ = [
    "RandomFeatureSubset",
    "ReduceDimension",
    "make_opauc_f",
    "make_opauc_pca",
    "make_opauc_rp",
]


def _check_n_components(n_components) -> int:
    if not (isinstance(n_components, (int, np.integer)) and n_components >= 1):
        raise ValueError(f"n_components must be a positive int, got {n_components!r}")
    return int(n_components)


class RandomFeatureSubset(TransformerMixin, BaseEstimator):
    """Keep k features chosen uniformly at random without replacement (OPAUC^f).

    Parameters
    ----------
    n_components : int, default=1000
        Number k of features kept; all of them (in order) if the data have at most k.
    random_state : int, Generator or None, default=None
        Seed of the choice, made once in ``fit``.

    Attributes
    ----------
    features_ : ndarray of int
        The kept column indices, sorted.
    n_features_in_ : int
        Number of input features.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.reduction import RandomFeatureSubset
    >>> X = np.arange(20.0).reshape(2, 10)
    >>> RandomFeatureSubset(3, random_state=0).fit_transform(X).shape
    (2, 3)
    """

    def __init__(self, n_components: int = 1000, random_state: RandomState = None):
        self.n_components = n_components
        self.random_state = random_state

    def fit(self, X: MatrixLike, y: ArrayLike | None = None) -> RandomFeatureSubset:
        """Choose the features; returns self."""
        X = validate_data(self, X, accept_sparse=("csr", "csc"), dtype=None, reset=True)
        k = _check_n_components(self.n_components)
        d = X.shape[1]
        rng = make_rng(seed_from(self.random_state))
        if d <= k:
            self.features_ = np.arange(d)
        else:
            self.features_ = np.sort(rng.choice(d, size=k, replace=False))
        return self

    def transform(self, X: MatrixLike) -> Matrix:
        """The kept columns of ``X`` (sparse stays sparse)."""
        check_is_fitted(self, "features_")
        X = validate_data(self, X, accept_sparse=("csr", "csc"), dtype=None, reset=False)
        return X[:, self.features_]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class ReduceDimension(TransformerMixin, BaseEstimator):
    """Reduce to k dimensions by a feature subset, a random projection or PCA.

    The identity when the data have at most k features (nothing to reduce).

    Parameters
    ----------
    method : {"subset", "gaussian", "sparse", "pca"}, default="gaussian"
        :class:`RandomFeatureSubset` (OPAUC^f), Gaussian or sparse random projection
        (OPAUC^rp), or PCA (OPAUC^pca).
    n_components : int, default=1000
        k (G13 §6.2 and G16 §7.2 use 1000).
    random_state : int, Generator or None, default=None
        Seed of the subset, the projection or PCA's randomized solver.

    Attributes
    ----------
    reducer_ : transformer or None
        The fitted scikit-learn step (None for the identity).
    n_features_in_ : int
        Number of input features.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.reduction import ReduceDimension
    >>> X = np.random.default_rng(0).normal(size=(50, 40))
    >>> ReduceDimension("pca", n_components=5).fit_transform(X).shape
    (50, 5)
    >>> ReduceDimension("gaussian", n_components=100).fit_transform(X).shape  # identity
    (50, 40)
    """

    _METHODS = ("subset", "gaussian", "sparse", "pca")

    def __init__(
        self, method: str = "gaussian", n_components: int = 1000, random_state: RandomState = None
    ):
        self.method = method
        self.n_components = n_components
        self.random_state = random_state

    def fit(self, X: MatrixLike, y: ArrayLike | None = None) -> ReduceDimension:
        """Fit the reduction on ``X``; returns self."""
        X = validate_data(
            self, X, accept_sparse=("csr", "csc"), dtype=[np.float64, np.float32], reset=True
        )
        if self.method not in self._METHODS:
            raise ValueError(f"method must be one of {self._METHODS}, got {self.method!r}")
        k = _check_n_components(self.n_components)
        n, d = X.shape
        seed = seed_from(self.random_state)
        if d <= k:
            self.reducer_ = None
            return self
        if self.method == "subset":
            reducer = RandomFeatureSubset(k, random_state=seed)
        elif self.method == "gaussian":
            reducer = GaussianRandomProjection(k, random_state=seed)
        elif self.method == "sparse":
            reducer = SparseRandomProjection(k, dense_output=True, random_state=seed)
        elif sp.issparse(X):
            reducer = PCA(min(k, min(n, d) - 1), svd_solver="arpack", random_state=seed)
        else:
            reducer = PCA(min(k, n, d), random_state=seed)
        self.reducer_ = reducer.fit(X)
        return self

    def transform(self, X: MatrixLike) -> Matrix:
        """The reduced rows (dense, except a subset of sparse input)."""
        check_is_fitted(self, "reducer_")
        X = validate_data(
            self, X, accept_sparse=("csr", "csc"), dtype=[np.float64, np.float32], reset=False
        )
        return X if self.reducer_ is None else self.reducer_.transform(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _pipeline(method: str, k: int, random_state, opauc_params: dict) -> Pipeline:
    opauc_params.setdefault("random_state", random_state)
    return Pipeline(
        [
            ("reduce", ReduceDimension(method, k, random_state=random_state)),
            ("opauc", OPAUC(**opauc_params)),
        ]
    )


def make_opauc_f(k: int = 1000, random_state: RandomState = None, **opauc_params: Any) -> Pipeline:
    """OPAUC^f: k random features, then exact OPAUC (G13 §6.2, G16 §7.2).

    Parameters
    ----------
    k : int, default=1000
        Number of features kept.
    random_state : int or None, default=None
        Seed of the subset (and OPAUC's, unless given in ``opauc_params``).
    **opauc_params
        Parameters of :class:`aucstream.OPAUC` (``eta``, ``lam``, ...).

    Returns
    -------
    Pipeline
        Steps ``"reduce"`` (:class:`ReduceDimension`) and ``"opauc"``.
    """
    return _pipeline("subset", k, random_state, dict(opauc_params))


def make_opauc_rp(
    k: int = 1000,
    projection: str = "gaussian",
    random_state: RandomState = None,
    **opauc_params: Any,
) -> Pipeline:
    r"""OPAUC^rp: a random projection to k dimensions, then exact OPAUC (G13 Remark, §6.2).

    Parameters
    ----------
    k : int, default=1000
        Target dimension.
    projection : {"gaussian", "sparse"}, default="gaussian"
        :math:`H_{ij} \sim N(0, 1/k)` (G13 §6.2; stores k x d floats) or the sparse
        projection of Achlioptas and Li (for very large d).
    random_state : int or None, default=None
        Seed of the projection (and OPAUC's, unless given).
    **opauc_params
        Parameters of :class:`aucstream.OPAUC`.

    Returns
    -------
    Pipeline
    """
    if projection not in ("gaussian", "sparse"):
        raise ValueError(f"projection must be 'gaussian' or 'sparse', got {projection!r}")
    return _pipeline(projection, k, random_state, dict(opauc_params))


def make_opauc_pca(
    k: int = 1000, random_state: RandomState = None, **opauc_params: Any
) -> Pipeline:
    """OPAUC^pca: the top-k principal components, then exact OPAUC (G16 §7.2).

    Parameters
    ----------
    k : int, default=1000
        Number of components (at most min(n, d) - 1 for sparse input).
    random_state : int or None, default=None
        Seed of PCA's solver (and OPAUC's, unless given).
    **opauc_params
        Parameters of :class:`aucstream.OPAUC`.

    Returns
    -------
    Pipeline
    """
    return _pipeline("pca", k, random_state, dict(opauc_params))
