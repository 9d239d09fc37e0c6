"""A hold-out comparison of learners with cross-validated hyperparameters."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import clone
from sklearn.exceptions import FitFailedWarning
from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split

from ..metrics import roc_auc

__all__ = ["ComparisonRow", "coarse_grid", "tune_and_test", "holdout_comparison"]


def coarse_grid(grid: Mapping[str, list], max_values: int = 6) -> dict[str, list]:
    """Every k-th value of each list so that at most ``max_values`` remain.

    The values keep the papers' range (first and last values are kept when the
    stride allows), so a coarse grid is a sub-grid of the paper's grid.

    Parameters
    ----------
    grid : mapping of str to list
        A learner's ``param_grid``.
    max_values : int, default=6
        Largest number of values kept per parameter.

    Returns
    -------
    dict
        The coarse grid.

    Examples
    --------
    >>> import numpy as np
    >>> grid = coarse_grid({"eta": [2.0**k for k in range(-12, 11)]}, 4)
    >>> np.log2(grid["eta"]).tolist()
    [-12.0, -6.0, 0.0, 6.0]
    """
    out = {}
    for name, values in grid.items():
        values = list(values)
        stride = max(1, int(np.ceil(len(values) / max_values)))
        out[name] = values[::stride]
    return out


@dataclass
class ComparisonRow:
    """One learner on one split: chosen parameters, AUCs and the training time."""

    learner: str
    dataset: str
    params: dict = field(default_factory=dict)
    validation_auc: float = float("nan")
    test_auc: float = float("nan")
    train_seconds: float = float("nan")
    n_train: int = 0
    n_test: int = 0


def tune_and_test(
    estimator,
    X_train: ArrayLike,
    y_train: ArrayLike,
    X_test: ArrayLike,
    y_test: ArrayLike,
    grid: Mapping[str, list] | None = None,
    cv: int = 3,
    random_state: int = 0,
    n_jobs: int | None = None,
) -> tuple[dict, float, float, float]:
    """Choose hyperparameters by cross-validated AUC, retrain, and test.

    Parameters
    ----------
    estimator : BaseStreamingAUC
        The learner (its ``score`` is the AUC).
    X_train, y_train, X_test, y_test : array-like
        The split.
    grid : mapping or None
        Values to try; None or empty trains with the estimator's own parameters.
    cv : int, default=3
        Number of stratified folds on the training part.
    random_state : int, default=0
        Seed of the folds.
    n_jobs : int or None
        Parallel jobs for the grid search.

    Returns
    -------
    params : dict
        The chosen values.
    validation_auc : float
        Their mean cross-validated AUC (NaN without a grid).
    test_auc : float
        AUC on the test part of one pass over the whole training part.
    train_seconds : float
        Wall time of that final pass.
    """
    if grid:
        folds = StratifiedKFold(cv, shuffle=True, random_state=random_state)
        # a step size too large for the data makes a learner diverge (FloatingPointError):
        # that candidate scores NaN and is never chosen
        search = GridSearchCV(
            clone(estimator), dict(grid), cv=folds, refit=False, n_jobs=n_jobs, error_score=np.nan
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FitFailedWarning)
            warnings.simplefilter("ignore", UserWarning)
            search.fit(X_train, y_train)
        params, validation = search.best_params_, float(search.best_score_)
    else:
        params, validation = {}, float("nan")
    final = clone(estimator).set_params(**params)
    start = time.perf_counter()
    final.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    test = roc_auc(np.asarray(y_test) == final.classes_[1], final.decision_function(X_test))
    return params, validation, test, seconds


def holdout_comparison(
    learners: Mapping[str, object],
    X: ArrayLike,
    y: ArrayLike,
    dataset: str = "",
    test_size: float = 0.2,
    grids: Mapping[str, Mapping[str, list]] | str | None = "coarse",
    cv: int = 3,
    random_state: int = 0,
    n_jobs: int | None = None,
    callback: Callable[[ComparisonRow], None] | None = None,
) -> list[ComparisonRow]:
    """Compare learners on one stratified train/test split.

    Parameters
    ----------
    learners : mapping of str to estimator
        Names and (unfitted) learners.
    X, y : array-like
        The data set.
    dataset : str
        Name stored in the rows.
    test_size : float, default=0.2
        Fraction held out for testing (stratified).
    grids : "coarse", "paper", None, or mapping of learner name to grid
        "coarse" uses :func:`coarse_grid` of each learner's ``param_grid``; "paper" the
        full grid; None the learners' own parameters.
    cv : int, default=3
        Folds of the inner cross-validation.
    random_state : int, default=0
        Seed of the split and the folds.
    n_jobs : int or None
        Parallel jobs of each grid search.
    callback : callable, optional
        Called with each finished row (e.g. to print progress).

    Returns
    -------
    list of ComparisonRow
        One row per learner.
    """
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, test_size=test_size, stratify=y, random_state=random_state
    )
    rows = []
    for name, estimator in learners.items():
        if grids == "coarse":
            grid = coarse_grid(getattr(estimator, "param_grid", {}))
        elif grids == "paper":
            grid = dict(getattr(estimator, "param_grid", {}))
        elif grids is None:
            grid = None
        else:
            grid = grids.get(name)
        params, val, test, seconds = tune_and_test(
            estimator, X_tr, y_tr, X_te, y_te, grid, cv, random_state, n_jobs
        )
        row = ComparisonRow(name, dataset, params, val, test, seconds, X_tr.shape[0], X_te.shape[0])
        rows.append(row)
        if callback is not None:
            callback(row)
    return rows
