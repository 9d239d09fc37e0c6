"""Evaluation protocols: hold-out comparisons with model selection, and grids.

``holdout_comparison`` is the simple protocol of the quick start: a stratified
train/test split, hyperparameters chosen by stratified k-fold cross-validation on the
training part (scikit-learn's ``GridSearchCV`` over each learner's grid, scored by AUC),
one pass on the whole training part with the chosen values, and the test AUC.
"""

from ._holdout import ComparisonRow, coarse_grid, holdout_comparison, tune_and_test

__all__ = ["ComparisonRow", "coarse_grid", "holdout_comparison", "tune_and_test"]
