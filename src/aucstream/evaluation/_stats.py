"""Statistics of the comparison tables (G13 Tables 2-3, G16 Tables 2-6, D16 Table II).

Every cell of a table is the mean ± standard deviation of the test AUC over the runs
of one learner on one dataset. A competitor's cell is marked ● when the reference
method (the paper's proposed one) is significantly better on the *matched* runs
(same splits), and ○ when it is significantly worse, by a paired two-sided Student
t-test at the 95% level; the win/tie/loss row counts the datasets with ●, neither,
and ○ for each competitor.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

__all__ = [
    "BETTER",
    "MARKERS",
    "TIE",
    "WORSE",
    "compare_runs",
    "mean_std",
    "paired_ttest",
    "win_tie_loss",
]

#: Outcomes, from the reference method's side.
BETTER, TIE, WORSE = 1, 0, -1
#: The papers' markers: ● the reference is significantly better, ○ significantly worse.
MARKERS = {BETTER: "●", TIE: "", WORSE: "○"}


def mean_std(values: ArrayLike) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof=1) of the finite values.

    Parameters
    ----------
    values : array-like
        Per-run results; NaN (a failed run) is left out.

    Returns
    -------
    mean, std : float
        NaN when no value is finite; the std is 0 for a single value.
    """
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return float("nan"), float("nan")
    return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0


def paired_ttest(a: ArrayLike, b: ArrayLike) -> tuple[float, float]:
    """Paired two-sided Student t-test of ``a`` against ``b`` (df = n - 1).

    Parameters
    ----------
    a, b : array-like of shape (n,)
        Matched results (run ``i`` of ``a`` and of ``b`` used the same split).

    Returns
    -------
    t : float
        The statistic (positive when ``a`` is larger on average); 0 when the
        differences have zero variance or fewer than two pairs are given.
    p : float
        The two-sided p-value; 1 in those degenerate cases (a tie).
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired samples need equal shapes, got {a.shape} and {b.shape}")
    d = a - b
    if d.size < 2 or np.ptp(d) == 0:
        return 0.0, 1.0
    result = stats.ttest_rel(a, b)
    return float(result.statistic), float(result.pvalue)


def compare_runs(reference: Mapping, other: Mapping, alpha: float = 0.05) -> int:
    """Outcome of the reference against a competitor on matched runs.

    Parameters
    ----------
    reference, other : mapping of run id to float
        Per-run test AUC keyed by e.g. ``(trial, fold)``. Only ids present with a
        finite value in both are compared.
    alpha : float, default=0.05
        Significance level of the paired two-sided t-test.

    Returns
    -------
    int
        :data:`BETTER` (the reference is significantly better), :data:`WORSE`, or
        :data:`TIE` (not significant, fewer than two matched runs, or zero-variance
        differences).
    """
    ids = sorted(
        k
        for k in reference.keys() & other.keys()
        if np.isfinite(reference[k]) and np.isfinite(other[k])
    )
    a = np.array([reference[k] for k in ids], dtype=float)
    b = np.array([other[k] for k in ids], dtype=float)
    t, p = paired_ttest(a, b)
    if p < alpha:
        return BETTER if t > 0 else WORSE
    return TIE


def win_tie_loss(outcomes: Iterable[int]) -> tuple[int, int, int]:
    """Counts of :data:`BETTER`, :data:`TIE` and :data:`WORSE` outcomes.

    Parameters
    ----------
    outcomes : iterable of int
        One outcome per dataset, from the reference's side.

    Returns
    -------
    (win, tie, loss) : tuple of int
    """
    seen: Sequence[int] = list(outcomes)
    return (
        sum(o == BETTER for o in seen),
        sum(o == TIE for o in seen),
        sum(o == WORSE for o in seen),
    )
