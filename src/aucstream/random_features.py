r"""Random Fourier features for dense high-dimensional data (G16 §7.2, Table 4).

G16 §7.2 turns low-dimensional dense datasets (fourclass, letter, magic04, acoustic,
ijcnn1) into dense high-dimensional ones by **appending** D = 50,000 random Fourier
features (Rahimi and Recht 2007),

.. math::

    z(x) = \sqrt{2/D}\,\cos(\Omega^\top x + b), \qquad
    \Omega_{ij} \sim N(0, \sigma^{-2}), \quad b_j \sim U[0, 2\pi],

so that :math:`z(x)^\top z(x') \approx \exp(-\|x - x'\|^2 / (2\sigma^2))`, and
compares OPAUC_fd with the other variants on the d + 50,000 features.

The expanded data are never stored for a whole dataset (7.6 GB for magic04, about
57 GB for ijcnn1 in float64): :class:`RandomFourierFeatures` regenerates
:math:`\Omega` and b from its seed, block by block of columns (``block_size``), in
every ``transform`` call, and :class:`ChunkedPipeline` feeds a streaming learner one
transformed chunk of rows at a time (``partial_fit``; it lives in
:mod:`aucstream.pipeline` and is re-exported here). Memory is then
O(chunk_size (d + D)) for the chunk plus O(d block_size) for one block of
:math:`\Omega`, whatever the number of examples.

Choices (G16 leaves them open)
------------------------------
- :math:`\sigma` is not given in G16: the default is 1, the natural width for data
  scaled to [-1, 1] as G16 §7.1 scales them; ``sigma="median"`` uses the median
  pairwise distance of up to 1000 training rows.
- Block ``j`` of the features is drawn from ``numpy.random.default_rng([seed, j])``:
  first the d x width block of :math:`\Omega` (standard normals divided by sigma),
  then its width phases. The features therefore depend on ``block_size``, not on how
  the rows are chunked.
- ``dtype=np.float32`` (the default) halves the memory of the output; the features
  are computed in float64 and rounded.

Example: OPAUC_fd on magic04 with 50,000 appended features, 256 rows at a time::

    from aucstream import OPAUC
    from aucstream.random_features import ChunkedPipeline, RandomFourierFeatures
    model = ChunkedPipeline(RandomFourierFeatures(50_000, random_state=0),
                            OPAUC(covariance="fd", sketch_size=50, eta=2**-6),
                            chunk_size=256).fit(X_train, y_train)
    model.score(X_test, y_test)
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ._chunks import check_sparse_structure
from ._rng import make_rng
from ._typing import DType, Matrix, MatrixLike, RandomState
from .pipeline import ChunkedPipeline  # re-exported: it lived here

__all__ = ["ChunkedPipeline", "RandomFourierFeatures"]


def _median_distance(X, n_max: int, rng: np.random.Generator) -> float:
    if X.shape[0] > n_max:
        X = X[np.sort(rng.choice(X.shape[0], n_max, replace=False))]
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    sq = np.einsum("ij,ij->i", X, X)
    dist2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0)
    upper = dist2[np.triu_indices(X.shape[0], k=1)]
    median = float(np.sqrt(np.median(upper))) if upper.size else 0.0
    return median if median > 0 else 1.0


class RandomFourierFeatures(TransformerMixin, BaseEstimator):
    r"""Append D random Fourier features, generated block-wise from a seed.

    Parameters
    ----------
    n_components : int, default=50000
        D, the number of random features (G16 §7.2 uses 50,000).
    sigma : float or "median", default=1.0
        Kernel width: :math:`\Omega_{ij} \sim N(0, \sigma^{-2})`.
    append : bool, default=True
        Output ``[x, z(x)]`` (G16) rather than ``z(x)`` alone.
    dtype : numpy dtype, default=np.float32
        Type of the output.
    block_size : int, default=2048
        Columns of :math:`\Omega` generated at a time.
    random_state : int, Generator or None, default=0
        Seed of :math:`\Omega` and b (and of the sample for ``sigma="median"``). None
        draws a seed once in ``fit``.

    Attributes
    ----------
    sigma_ : float
        The kernel width used.
    seed_ : int
        The seed of the feature blocks.
    n_features_in_ : int
        Number of input features d.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.random_features import RandomFourierFeatures
    >>> X = np.random.default_rng(0).uniform(-1, 1, size=(5, 3))
    >>> rff = RandomFourierFeatures(4000, sigma=1.0, random_state=0).fit(X)
    >>> Z = rff.transform(X)
    >>> Z.shape, Z.dtype
    ((5, 4003), dtype('float32'))
    >>> approx = Z[0, 3:] @ Z[1, 3:]
    >>> exact = np.exp(-np.sum((X[0] - X[1]) ** 2) / 2)
    >>> bool(abs(approx - exact) < 0.05)
    True
    """

    def __init__(
        self,
        n_components: int = 50_000,
        sigma: float | str = 1.0,
        append: bool = True,
        dtype: DType = np.float32,
        block_size: int = 2048,
        random_state: RandomState = 0,
    ):
        self.n_components = n_components
        self.sigma = sigma
        self.append = append
        self.dtype = dtype
        self.block_size = block_size
        self.random_state = random_state

    def fit(self, X: MatrixLike, y: ArrayLike | None = None) -> RandomFourierFeatures:
        """Fix the width and the seed (the features themselves are never stored)."""
        check_sparse_structure(X, "X")  # (scipy's products read the indices as they are)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=True)
        for name in ("n_components", "block_size"):
            value = getattr(self, name)
            if not (isinstance(value, (int, np.integer)) and value >= 1):
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        rng = make_rng(self.random_state)
        if isinstance(self.random_state, (int, np.integer)):
            self.seed_ = int(self.random_state)
        else:
            self.seed_ = int(rng.integers(2**63 - 1))
        if isinstance(self.sigma, str):
            if self.sigma != "median":
                raise ValueError(f"sigma must be a positive number or 'median', got {self.sigma!r}")
            self.sigma_ = _median_distance(X, 1000, rng)
        else:
            if not (np.isfinite(self.sigma) and self.sigma > 0):
                raise ValueError(f"sigma must be a positive number or 'median', got {self.sigma!r}")
            self.sigma_ = float(self.sigma)
        return self

    def block(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        r"""Block j of the features: :math:`\Omega` columns (d x width) and phases."""
        check_is_fitted(self, "seed_")
        D, width = int(self.n_components), int(self.block_size)
        lo = j * width
        if not 0 <= lo < D:
            raise IndexError(f"block {j} is outside the {D} features")
        width = min(width, D - lo)
        rng = np.random.default_rng([self.seed_, j])
        omega = rng.standard_normal((self.n_features_in_, width)) / self.sigma_
        phase = rng.uniform(0.0, 2.0 * np.pi, size=width)
        return omega, phase

    def transform(self, X: MatrixLike) -> np.ndarray:
        """``[x, z(x)]`` (or ``z(x)``) for the rows of ``X``, as a dense array.

        Call it on chunks of rows (see :meth:`iter_transform`); the output has
        ``n x (d + D)`` entries.
        """
        check_is_fitted(self, "seed_")
        check_sparse_structure(X, "X")
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        n, d = X.shape
        D = int(self.n_components)
        offset = d if self.append else 0
        from ._config import check_budget  # n_components and block_size are the user's

        width = min(int(self.block_size), D)
        check_budget(
            n * (offset + D) * np.dtype(self.dtype).itemsize + 8 * (d + n) * width,
            f"RandomFourierFeatures(n_components={D}, block_size={self.block_size})"
            f".transform of {n} rows",
        )
        out = np.empty((n, offset + D), dtype=self.dtype)
        if self.append:
            out[:, :d] = X.toarray() if sp.issparse(X) else X
        scale = np.sqrt(2.0 / D)
        for j, lo in enumerate(range(0, D, int(self.block_size))):
            omega, phase = self.block(j)
            proj = X @ omega
            proj += phase
            np.cos(proj, out=proj)
            proj *= scale
            out[:, offset + lo : offset + lo + omega.shape[1]] = proj
        return out

    def iter_transform(self, X: Matrix, chunk_size: int = 256) -> Iterator[np.ndarray]:
        """Transform ``X`` chunk by chunk of rows (never the whole expansion at once)."""
        for lo in range(0, X.shape[0], chunk_size):
            yield self.transform(X[lo : lo + chunk_size])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
