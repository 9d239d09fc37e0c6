r"""Approximation error of OPAUC's covariance sketches (G16 §7.3, Fig. 4).

For the data matrix A of one class (rows are the examples, in stream order) and a
summary of A built by one pass, the error is

.. math::

    E = \|A^\top A - B^\top B\|_F \quad (B = Z^\top: \text{frequent directions,
    randomized, hashing}), \qquad E = \|A^\top A - P\|_F \quad (\text{sparse}),

reported as is and relative to :math:`\|A^\top A\|_F`. No d x d matrix is formed:

.. math::

    \|A^\top A - B^\top B\|_F^2 = \|A A^\top\|_F^2 - 2\|A B^\top\|_F^2
        + \|B B^\top\|_F^2 ,\qquad
    \|A^\top A - P\|_F^2 = \|A A^\top\|_F^2 - 2\langle A^\top A, P\rangle + \|P\|_F^2,

with :math:`\|A A^\top\|_F^2` summed over blocks of rows of :math:`A A^\top`,
:math:`A B^\top = A Z` (n x tau) and :math:`\langle A^\top A, P\rangle = \sum_t x_t^\top
P x_t`, one hash lookup per pair of non-zeros of each row.

For the randomized and hashing sketches the expected squared errors are known
(:func:`expected_error`):

.. math::

    E\,\|Z Z^\top - A^\top A\|_F^2 = \frac{\|A\|_F^4 + \|A^\top A\|_F^2}{\tau}
    \ \text{(randomized)}, \qquad
    \frac{\|A\|_F^4 + \|A^\top A\|_F^2 - 2\sum_t \|x_t\|^4}{\tau}\ \text{(hashing)},

and frequent directions guarantees :math:`\|A^\top A - Z Z^\top\|_2 \le
\|A\|_F^2/\lfloor\tau/2\rfloor`.

Choice: the sparse summary runs with ``prune_slack`` (default 0.1, as in OPAUC) and
is then pruned to exactly :math:`d\tau` non-zeros at the end of the pass, so every
method is measured at its nominal budget.

Example::

    from aucstream.sketch_error import class_error_curves, plot_sketch_error
    curves = class_error_curves(X, y, sketch_sizes=(10, 20, 50, 100, 200))
    print(curves[1].table())            # the positive class
    plot_sketch_error(curves, path="error.png")

Plotting needs matplotlib (the optional extra ``plot``); it is imported only there.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ._typing import MatrixLike, PathLike
from .covariance import CovarianceSummary, make_covariance

if TYPE_CHECKING:  # pragma: no cover (matplotlib is an extra)
    from matplotlib.figure import Figure

__all__ = [
    "SketchErrorCurve",
    "class_error_curves",
    "expected_error",
    "gram_frobenius_sq",
    "plot_sketch_error",
    "sketch_error",
    "sketch_error_curve",
]

KINDS = ("fd", "randomized", "hash", "sparse")
LABELS = {
    "fd": "frequent directions",
    "randomized": "randomized (OPAUC_r)",
    "hash": "hashing",
    "sparse": "sparse (OPAUC_s)",
}


def _as_csr(A) -> sp.csr_matrix:
    A = sp.csr_matrix(A, dtype=np.float64)
    A.sum_duplicates()
    A.sort_indices()
    return A


def gram_frobenius_sq(A: MatrixLike, block: int = 512) -> float:
    r""":math:`\|A^\top A\|_F^2 = \|A A^\top\|_F^2`, from blocks of rows of
    :math:`A A^\top` (memory O(block n))."""
    A = _as_csr(A)
    At = A.T.tocsr()
    total = 0.0
    for lo in range(0, A.shape[0], block):
        part = A[lo : lo + block] @ At
        total += (
            float(np.sum(np.square(part.data)))
            if sp.issparse(part)
            else float(np.sum(np.square(part)))
        )
    return total


def sketch_error(
    A: MatrixLike, summary: CovarianceSummary, gram_sq: float | None = None
) -> tuple[float, float]:
    r"""``(absolute, relative)`` error of a summary of the rows of A.

    Parameters
    ----------
    A : {array-like, sparse matrix} of shape (n, d)
        The examples the summary has seen.
    summary : CovarianceSummary
        Any summary of the rows of A (its ``scatter_inner`` and
        ``scatter_frobenius_sq``); a :class:`FullCovariance` gives its rounding error.
    gram_sq : float, optional
        :math:`\|A^\top A\|_F^2` if already known.

    Returns
    -------
    (float, float)
        :math:`E` and :math:`E / \|A^\top A\|_F`.
    """
    A = _as_csr(A)
    if gram_sq is None:
        gram_sq = gram_frobenius_sq(A)
    cross = summary.scatter_inner(A)
    own = summary.scatter_frobenius_sq()
    err = float(np.sqrt(max(gram_sq - 2.0 * cross + own, 0.0)))
    norm = float(np.sqrt(gram_sq))
    return err, err / norm if norm > 0 else float("nan")


def expected_error(
    A: MatrixLike, kind: str, sketch_size: int, gram_sq: float | None = None
) -> float:
    """Root of the expected squared error of the randomized or hashing sketch.

    See the module docstring; NaN for the deterministic kinds.
    """
    if kind not in ("randomized", "hash"):
        return float("nan")
    A = _as_csr(A)
    if gram_sq is None:
        gram_sq = gram_frobenius_sq(A)
    row_sq = np.asarray(A.multiply(A).sum(axis=1)).ravel()
    value = row_sq.sum() ** 2 + gram_sq
    if kind == "hash":
        value -= 2.0 * np.sum(row_sq**2)
    return float(np.sqrt(max(value, 0.0) / sketch_size))


@dataclass
class SketchErrorCurve:
    r"""Errors of each summary kind against the sketch size, for one data matrix.

    Attributes
    ----------
    kinds : tuple of str
        Summary kinds (rows of the arrays).
    sketch_sizes : ndarray of int
        tau values (columns).
    absolute, relative : ndarray of shape (n_kinds, n_sizes, n_repeats)
        :math:`E` and :math:`E/\|A^\top A\|_F` per repeat (random kinds vary by seed;
        the deterministic ones repeat the same value).
    expected : ndarray of shape (n_kinds, n_sizes)
        Root expected error for randomized and hashing, NaN otherwise.
    seconds : ndarray of shape (n_kinds, n_sizes)
        Mean time to build one summary.
    gram_norm : float
        :math:`\|A^\top A\|_F`.
    n_samples, n_features : int
        Shape of A.
    """

    kinds: tuple
    sketch_sizes: np.ndarray
    absolute: np.ndarray
    relative: np.ndarray
    expected: np.ndarray
    seconds: np.ndarray
    gram_norm: float
    n_samples: int
    n_features: int
    name: str = field(default="")

    def table(self) -> str:
        """The mean relative errors as a markdown table (kinds by sketch size)."""
        head = "| summary | " + " | ".join(f"tau={t}" for t in self.sketch_sizes) + " |"
        lines = [head, "|---|" + "---:|" * len(self.sketch_sizes)]
        for a, kind in enumerate(self.kinds):
            cells = []
            for b in range(len(self.sketch_sizes)):
                rel = self.relative[a, b]
                cell = f"{rel.mean():.4f}"
                if rel.size > 1 and np.ptp(rel) > 0:
                    cell += f" ± {rel.std(ddof=1):.4f}"
                cells.append(cell)
            lines.append(f"| {LABELS.get(kind, kind)} | " + " | ".join(cells) + " |")
        return "\n".join(lines)


def sketch_error_curve(
    A: MatrixLike,
    kinds: Sequence[str] = KINDS,
    sketch_sizes: Sequence[int] = (10, 20, 50, 100, 200),
    n_repeats: int = 1,
    random_state: int = 0,
    prune_slack: float = 0.1,
    name: str = "",
) -> SketchErrorCurve:
    """Build each summary of A (one pass, in row order) for each tau; measure its error.

    Parameters
    ----------
    A : {array-like, sparse matrix} of shape (n, d)
        One class's examples.
    kinds : sequence of {"fd", "randomized", "hash", "sparse"}
        Summaries to compare.
    sketch_sizes : sequence of int
        tau values.
    n_repeats : int, default=1
        Seeds per random summary (the deterministic ones are built once).
    random_state : int, default=0
        Base seed; repeat r of size tau uses ``[random_state, tau, r]``.
    prune_slack : float, default=0.1
        Of the sparse summary (it is pruned to the budget at the end, see above).
    name : str
        A label kept with the result.

    Returns
    -------
    SketchErrorCurve
    """
    A = _as_csr(A)
    n, d = A.shape
    gram_sq = gram_frobenius_sq(A)
    sizes = np.asarray(sketch_sizes, dtype=np.int64)
    shape = (len(kinds), len(sizes), n_repeats)
    absolute, relative = np.zeros(shape), np.zeros(shape)
    expected = np.full(shape[:2], np.nan)
    seconds = np.zeros(shape[:2])
    for a, kind in enumerate(kinds):
        for b, tau in enumerate(sizes):
            random = kind in ("randomized", "hash")
            expected[a, b] = expected_error(A, kind, int(tau), gram_sq)
            for r in range(n_repeats if random else 1):
                start = time.perf_counter()
                summary: Any = make_covariance(
                    kind, d, int(tau), prune_slack=prune_slack, centering="g16"
                )
                if random:
                    summary.update(A, np.random.default_rng([random_state, int(tau), r]))
                else:
                    summary.update(A)
                if kind == "sparse":
                    summary.prune()  # to exactly its budget (see above)
                seconds[a, b] += time.perf_counter() - start
                absolute[a, b, r], relative[a, b, r] = sketch_error(A, summary, gram_sq)
            if not random:
                absolute[a, b, :] = absolute[a, b, 0]
                relative[a, b, :] = relative[a, b, 0]
            else:
                seconds[a, b] /= n_repeats
    return SketchErrorCurve(
        tuple(kinds),
        sizes,
        absolute,
        relative,
        expected,
        seconds,
        float(np.sqrt(gram_sq)),
        n,
        d,
        name,
    )


def class_error_curves(X: MatrixLike, y: ArrayLike, **kwargs: Any) -> dict:
    """:func:`sketch_error_curve` for the examples of each class of ``y``.

    Returns
    -------
    dict
        ``{label: SketchErrorCurve}`` for each distinct label, in sorted order.
    """
    X = _as_csr(X)
    y = np.asarray(y)
    name = kwargs.pop("name", "")
    return {
        label: sketch_error_curve(X[y == label], name=f"{name} class {label}".strip(), **kwargs)
        for label in np.unique(y)
    }


def plot_sketch_error(
    curves: SketchErrorCurve | Mapping[Any, SketchErrorCurve] | Sequence[SketchErrorCurve],
    relative: bool = True,
    path: PathLike | None = None,
    title: str | None = None,
) -> Figure:
    r"""Error against sketch size, one panel per curve (matplotlib, imported here).

    Parameters
    ----------
    curves : SketchErrorCurve, or dict or list of them
        One panel each (e.g. the two classes of :func:`class_error_curves`).
    relative : bool, default=True
        Plot :math:`E/\|A^\top A\|_F` (else E).
    path : str or path-like, optional
        Save the figure there (PNG by extension).
    title : str, optional
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib

    if path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    if isinstance(curves, SketchErrorCurve):
        curves = [curves]
    elif isinstance(curves, dict):
        curves = list(curves.values())
    fig, axes = plt.subplots(1, len(curves), figsize=(4.8 * len(curves), 3.8), squeeze=False)
    for ax, curve in zip(axes[0], curves):
        values = curve.relative if relative else curve.absolute
        for a, kind in enumerate(curve.kinds):
            mean = values[a].mean(axis=1)
            (line,) = ax.plot(curve.sketch_sizes, mean, marker="o", label=LABELS.get(kind, kind))
            if values.shape[2] > 1:
                ax.fill_between(
                    curve.sketch_sizes,
                    values[a].min(axis=1),
                    values[a].max(axis=1),
                    color=line.get_color(),
                    alpha=0.2,
                )
            if np.isfinite(curve.expected[a]).all():
                scale = curve.gram_norm if relative else 1.0
                ax.plot(
                    curve.sketch_sizes,
                    curve.expected[a] / scale,
                    linestyle=":",
                    color=line.get_color(),
                )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(curve.sketch_sizes, [str(t) for t in curve.sketch_sizes])
        ax.set_xlabel("sketch size tau")
        ax.set_ylabel("relative error" if relative else "error ||A^T A - sketch||_F")
        ax.set_title(curve.name or f"n={curve.n_samples}, d={curve.n_features}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig
