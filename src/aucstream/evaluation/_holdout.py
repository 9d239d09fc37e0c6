"""The quick hold-out comparison of ``aucstream run``, on in-memory data.

It runs through the runner's pieces (:func:`~aucstream.evaluation._runner.fit_and_score`
for every run, :func:`~aucstream.evaluation._runner.best_params` for the choice), so a
hold-out run is trained, timed, scored and tuned exactly like a run of
:func:`~aucstream.evaluation.compare`; only the splits differ: one stratified
train/test split of arrays in memory, and stratified k-fold on the training part for
the hyperparameters. Nothing is cached (the data have no name to hash).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import ParameterGrid, StratifiedKFold, train_test_split

from ._protocol import coarse_grid
from ._runner import TUNING_CHUNK, best_params, fit_and_score

__all__ = ["ComparisonRow", "coarse_grid", "holdout_comparison", "tune_and_test"]


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


def _index(X, rows):
    return X[rows] if hasattr(X, "shape") else np.asarray(X)[rows]


def _validation_aucs(estimator, X, y, params: dict, folds, n_jobs) -> list[float]:
    from joblib import Parallel, delayed

    def one(train, test):
        model = clone(estimator).set_params(**params)
        parts = (_index(X, train), y[train], _index(X, test), y[test])
        return fit_and_score(model, *parts, chunk=TUNING_CHUNK)["auc"]

    return Parallel(n_jobs=n_jobs)(delayed(one)(a, b) for a, b in folds)


def tune_and_test(
    estimator: BaseEstimator,
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
        Parallel jobs for the candidates' folds.

    Returns
    -------
    params : dict
        The chosen values (a candidate that diverges on a fold is never chosen;
        ties go to the first in grid order).
    validation_auc : float
        Their mean cross-validated AUC (NaN without a grid).
    test_auc : float
        AUC on the test part of one pass over the whole training part.
    train_seconds : float
        Wall time of that final pass.
    """
    y_train, y_test = np.asarray(y_train), np.asarray(y_test)
    params, validation = {}, float("nan")
    if grid:
        folds = list(
            StratifiedKFold(cv, shuffle=True, random_state=random_state).split(
                np.zeros(y_train.size), y_train
            )
        )
        candidates = [
            (
                tuple(sorted(c.items())),
                _validation_aucs(estimator, X_train, y_train, c, folds, n_jobs),
            )
            for c in ParameterGrid(dict(grid))
        ]
        chosen, validation, _ = best_params(candidates)
        params = dict(chosen)
    final = clone(estimator).set_params(**params)
    record = fit_and_score(final, X_train, y_train, X_test, y_test)
    return params, validation, record["auc"], record["train_seconds"]


def _grid_for(name: str, estimator, grids) -> dict | None:
    if grids is None:
        return None
    if isinstance(grids, str):
        own = dict(getattr(estimator, "param_grid", {}))
        return coarse_grid(own) if grids == "coarse" else own
    return grids.get(name)


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
        Parallel jobs of each search.
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
        grid = _grid_for(name, estimator, grids)
        params, val, test, seconds = tune_and_test(
            estimator, X_tr, y_tr, X_te, y_te, grid, cv, random_state, n_jobs
        )
        row = ComparisonRow(name, dataset, params, val, test, seconds, X_tr.shape[0], X_te.shape[0])
        rows.append(row)
        if callback is not None:
            callback(row)
    return rows
