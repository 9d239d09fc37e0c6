"""The dict scoring's kept weights belong to the learner's ``__dict__`` object: a
learner whose ``__dict__`` is replaced, or whose state changes, is scored with its
own weights (the same bits as ``decision_function`` / ``predict_proba``)."""

import numpy as np
import scipy.sparse as sp
from conftest import make_stream

from aucstream import SOLAM, UnivariateOnline


def _check(model, rows, X):
    for row, x in zip(rows, X):
        x = sp.csr_matrix(x[None])  # (the dict's order: a sparse row's)
        assert model.decision_one(row) == model.decision_function(x)[0]
        np.testing.assert_array_equal(model.predict_proba_one(row), model.predict_proba(x)[0])


def test_replaced_dict_and_changed_state_are_scored_with_their_weights():
    X, y = make_stream(60, 5, seed=3, sparsity=0.3)
    rows = [{int(j): float(X[i, j]) for j in np.flatnonzero(X[i])} for i in range(60)]
    for cls in (SOLAM, UnivariateOnline):
        model = cls(random_state=0).partial_fit(X[:30], y[:30], classes=[-1, 1])
        _check(model, rows[30:35], X[30:35])
        other = cls(random_state=1).partial_fit(X[30:], y[30:], classes=[-1, 1])
        # another dict object, other weights, the same count object (what the scorer
        # compares first)
        model.__dict__ = {**other.__dict__, "n_samples_seen_": model.n_samples_seen_}
        _check(model, rows[:5], X[:5])
        model.learn_one(rows[40], y[40])
        _check(model, rows[5:10], X[5:10])
        model.__dict__["_extra"] = 1  # (a change of the dict: its version)
        del model.__dict__["_extra"]
        _check(model, rows[10:15], X[10:15])
