"""Generated sparse streams for the reproductions: text-like, wide, imbalanced.

ZYS (Zhou, Ying, Skiena, ICDM 2020) run FTRL-AUC on wide sparse data (up to 10^6
features with tens of non-zeros a row) and on imbalanced versions of it; the
benchmark data holds only two such sets (news20's test part, sector). A
:class:`GeneratedStream` stands in for the rest: a seeded stream written once as a
LIBSVM file into the reproduction's cache, so that the harness reads it like any other
file (its SHA-256 is part of the runs' cache keys) and every run repeats exactly.

The stream: each row has ``k`` draws of a column from a heavy-tailed popularity (the
column of rank ``r`` is drawn with density proportional to :math:`r^{-2/3}`, as word
frequencies in text; the ranks are then permuted over the ``d`` columns), positive
values (exponential, as term weights), duplicates summed and the row scaled to unit
norm. Labels come from a planted sparse linear model: 10% of the columns carry a
normal weight, the score :math:`w^\\top x` gets Gaussian noise of half its standard
deviation, and the rows whose noisy score is in the top ``positive_rate`` are
positive. The noise bounds the attainable AUC below 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ._data import DataSpec

__all__ = ["GeneratedStream", "sparse_stream"]


def sparse_stream(
    n: int, d: int, k: int, positive_rate: float, seed: int = 0
) -> tuple[sp.csr_matrix, np.ndarray]:
    """The stream of the module docstring: ``n`` unit-norm rows of at most ``k``
    non-zeros among ``d`` columns, labels in {-1, +1} with ``positive_rate`` positive.

    Parameters
    ----------
    n, d, k : int
        Rows, columns, draws of a column per row (duplicates are summed).
    positive_rate : float
        Share of positive rows, in (0, 1).
    seed : int, default=0

    Returns
    -------
    X : CSR matrix of shape (n, d)
    y : ndarray of int64

    Examples
    --------
    >>> from aucstream.evaluation._generated import sparse_stream
    >>> X, y = sparse_stream(1000, 10000, 20, 0.05)
    >>> X.shape, int((y == 1).sum()), bool(X.getnnz(axis=1).max() <= 20)
    ((1000, 10000), 50, True)
    """
    if not (n >= 2 and d >= 1 and k >= 1 and 0.0 < positive_rate < 1.0):
        raise ValueError(
            f"need n >= 2, d >= 1, k >= 1 and 0 < positive_rate < 1, got "
            f"n={n}, d={d}, k={k}, positive_rate={positive_rate}"
        )
    rng = np.random.default_rng(seed)
    order = rng.permutation(d)
    ranks = np.minimum((d * rng.random(n * k) ** 3).astype(np.int64), d - 1)
    X = sp.csr_matrix(
        (rng.exponential(size=n * k), order[ranks], np.arange(n + 1) * k), shape=(n, d)
    )
    X.sum_duplicates()
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.csr_matrix(sp.diags(1.0 / norms) @ X)
    w = rng.normal(size=d) * (rng.random(d) < 0.1)
    score = X @ w
    score = score + rng.normal(scale=0.5 * score.std() + 1e-12, size=n)
    n_pos = max(1, int(round(positive_rate * n)))
    y = -np.ones(n, dtype=np.int64)
    y[np.argsort(score, kind="stable")[n - n_pos :]] = 1
    return X, y


@dataclass(frozen=True)
class GeneratedStream:
    """A generated dataset of a reproduction (:func:`sparse_stream`'s arguments).

    Attributes
    ----------
    label : str
        Name in the reports (and in ``Reproduction.quick_datasets``).
    n, d, k : int
    positive_rate : float
    seed : int
    """

    label: str
    n: int
    d: int
    k: int
    positive_rate: float
    seed: int = 0

    @property
    def filename(self) -> str:
        return (
            f"{self.label}-n{self.n}-d{self.d}-k{self.k}-p{self.positive_rate:g}-s{self.seed}.svm"
        )

    @property
    def note(self) -> str:
        return (
            f"generated: {self.n:,} rows, d = {self.d:,}, {self.k} draws of a column a row, "
            f"positive rate {self.positive_rate:g}, seed {self.seed} (see "
            "`aucstream.evaluation._generated`)"
        )

    def smaller(self, n: int) -> GeneratedStream:
        """The same kind of stream with at most ``n`` rows (another draw)."""
        return GeneratedStream(
            self.label, min(n, self.n), self.d, self.k, self.positive_rate, self.seed
        )

    def spec(self, folder: str | Path) -> DataSpec:
        """The file's :class:`DataSpec`, writing the file into ``folder`` first if it is
        not there (atomically: a reproduction killed meanwhile leaves no partial file)."""
        from sklearn.datasets import dump_svmlight_file

        from ..persistence import atomic_write

        path = Path(folder) / self.filename
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            X, y = sparse_stream(self.n, self.d, self.k, self.positive_rate, self.seed)
            with atomic_write(path, binary=True) as f:
                dump_svmlight_file(X, y, f, zero_based=False)
        return DataSpec(str(path), label=self.label, paper_n=None, note=self.note)
