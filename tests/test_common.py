"""The checks battery every aucstream learner runs (River-style common checks).

Learners are found by ``aucstream.all_estimators()``, so a new learner is checked
without editing this file. A learner may define a ``_unit_test_params`` classmethod
returning constructor arguments for these checks (for instance a stream length).

scikit-learn checks skipped, with reasons:

- ``check_array_api_input``: needs SCIPY_ARRAY_API; the kernels are numba/numpy only.
- ``check_classifier_data_not_an_array``: needs pandas, which is not a dependency.
- ``check_sample_weight_equivalence_on_*`` for online learners: it compares weights
  with repeated rows in a shuffled order, and an online learner's model depends on
  the order of its examples (scikit-learn's own SGDClassifier fails it too).
- ``check_sample_weight*`` for learners whose update takes no example weights
  (``_supports_sample_weight = False``): they refuse ``sample_weight`` with an error
  by design; ``tests/test_sample_weight.py`` checks that error and the learners
  that do take weights.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_stream, state_bytes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.utils.estimator_checks import parametrize_with_checks

import aucstream
from aucstream import load_model, save_model

ESTIMATORS = [cls for _, cls in aucstream.all_estimators()]
ONLINE = [cls for _, cls in aucstream.all_estimators("online")]
N = 120  # stream length used by the checks


def make(cls, **extra):
    params = {}
    if hasattr(cls, "_unit_test_params"):
        params.update(cls._unit_test_params())
    if "random_state" in cls().get_params():
        params["random_state"] = 0
    params.update(extra)
    return cls(**params)


def test_learners_are_discovered():
    names = {cls.__name__ for cls in ESTIMATORS}
    assert {"OPAUC", "OAM"} <= names


_SKIPPED_CHECKS = {"check_array_api_input", "check_classifier_data_not_an_array"}


@parametrize_with_checks([make(cls) for cls in ESTIMATORS])
def test_sklearn_compatible(estimator, check):
    name = getattr(check, "func", check).__name__
    if name in _SKIPPED_CHECKS:
        pytest.skip("see module docstring")
    if name.startswith("check_sample_weight_equivalence") and not estimator.is_batch:
        pytest.skip("online learners depend on the order, the check shuffles repeated rows")
    if "sample_weight" in name and not estimator._supports_sample_weight:  # instance-level
        pytest.skip("refuses sample_weight by design (see module docstring)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check(estimator)


@pytest.mark.parametrize("cls", ONLINE, ids=lambda c: c.__name__)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cuts=st.lists(st.integers(min_value=1, max_value=N - 1), max_size=6, unique=True),
    seed=st.integers(0, 2**16),
)
def test_chunking_never_changes_the_model(cls, cuts, seed):
    X, y = make_stream(N, 5, seed=seed)
    whole = make(cls).fit(X, y)
    streamed = make(cls)
    bounds = [0, *sorted(cuts), N]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        streamed.partial_fit(X[lo:hi], y[lo:hi], classes=[-1, 1])
    np.testing.assert_array_equal(whole.coef_, streamed.coef_)
    np.testing.assert_array_equal(whole.decision_function(X), streamed.decision_function(X))
    assert streamed.n_samples_seen_ == N


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_dense_and_sparse_input_give_the_same_model(cls):
    X, y = make_stream(N, 8, seed=1, sparsity=0.6)
    dense = make(cls).fit(X, y)
    for fmt in ("csr", "csc", "coo"):
        sparse = make(cls).fit(sp.csr_matrix(X).asformat(fmt), y)
        np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        dense.decision_function(sp.csr_matrix(X)), dense.decision_function(X), atol=1e-12
    )


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_fitted_properties_before_fit_say_so(cls):
    # a public property of the fitted model (coef_, leaderboard_, ...) read before any
    # learning raises NotFittedError (an AttributeError: hasattr stays False), not an
    # AttributeError that names an internal member
    from sklearn.exceptions import NotFittedError

    model = make(cls)
    names = [
        name
        for klass in cls.__mro__
        for name, member in vars(klass).items()
        if isinstance(member, property) and name.endswith("_") and not name.startswith("_")
    ]
    checked = set()
    for name in names:
        if name in checked or name in vars(model):
            continue
        checked.add(name)
        try:
            getattr(model, name)  # (one of the parameters alone, as phi_, may be read)
        except NotFittedError:
            continue
        except AttributeError as error:  # a plain state member, named as Python names it
            assert f"attribute '{name}'" in str(error), (name, error)
    assert "coef_" in checked
    X, y = make_stream(N, 5, seed=2)
    assert make(cls).fit(X, y).coef_.shape == (1, 5)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_float32_and_float64_input(cls):
    X, y = make_stream(N, 5, seed=2)
    X32 = X.astype(np.float32)
    m32 = make(cls).fit(X32, y)
    m64 = make(cls).fit(X32.astype(np.float64), y)
    np.testing.assert_array_equal(m32.coef_, m64.coef_)
    close = make(cls).fit(X, y)
    np.testing.assert_allclose(m32.coef_, close.coef_, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("labels", [(0, 1), (-1, 1), ("ham", "spam"), (False, True)])
def test_any_two_labels_positive_is_classes_1(cls, labels):
    X, y = make_stream(N, 4, seed=3)
    y_named = np.where(y > 0, labels[1], labels[0])
    model = make(cls).fit(X, y_named)
    reference = make(cls).fit(X, y)
    assert list(model.classes_) == sorted(labels)
    np.testing.assert_allclose(model.coef_, reference.coef_)
    assert set(np.unique(model.predict(X))) <= set(labels)
    expected = aucstream.roc_auc(y, model.decision_function(X))
    assert model.score(X, y_named) == pytest.approx(expected)


@pytest.mark.parametrize("cls", ONLINE, ids=lambda c: c.__name__)
@pytest.mark.parametrize("how", ["pickle", "save_model"])
def test_resuming_mid_stream_is_exact(cls, how, tmp_path):
    X, y = make_stream(N, 5, seed=4, sparsity=0.3)
    reference = make(cls).partial_fit(X[:50], y[:50], classes=[-1, 1])
    reference.partial_fit(X[50:], y[50:])
    first = make(cls).partial_fit(X[:50], y[:50], classes=[-1, 1])
    if how == "pickle":
        resumed = pickle.loads(pickle.dumps(first))
    else:
        save_model(first, tmp_path / "model.npz")
        resumed = load_model(tmp_path / "model.npz")
        assert type(resumed) is cls
        np.testing.assert_array_equal(resumed.decision_function(X), first.decision_function(X))
    resumed.partial_fit(X[50:], y[50:])
    np.testing.assert_array_equal(resumed.coef_, reference.coef_)
    assert resumed.n_samples_seen_ == N


@pytest.mark.parametrize("cls", ONLINE, ids=lambda c: c.__name__)
def test_memory_does_not_grow_with_the_stream(cls):
    if "buffer_size" in cls().get_params():
        extra = {"buffer_size": 10}
    else:
        extra = {}
    X, y = make_stream(2000, 6, seed=5)
    short = make(cls, **extra).fit(X[:200], y[:200])
    long = make(cls, **extra).fit(X, y)
    assert state_bytes(long) == state_bytes(short)


@pytest.mark.parametrize("cls", ONLINE, ids=lambda c: c.__name__)
def test_bad_input_gets_a_clear_error(cls):
    X, y = make_stream(40, 3, seed=6)
    model = make(cls).partial_fit(X, y)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        model.partial_fit(bad, y)
    bad[3, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        model.partial_fit(bad, y)
    with pytest.raises(ValueError, match="features"):
        model.partial_fit(X[:, :2], y)
    with pytest.raises(ValueError, match=r"not in classes_"):
        model.partial_fit(X, np.where(y > 0, 2, -1))
    with pytest.raises(ValueError, match="0 sample"):
        model.partial_fit(X[:0], y[:0])
    with pytest.raises(ValueError, match="one class"):
        make(cls).partial_fit(X[y > 0], y[y > 0])
    with pytest.raises(ValueError, match="one class"):
        make(cls).fit(X[y > 0], y[y > 0])
    with pytest.raises(ValueError, match="Only binary"):
        make(cls).fit(X, np.arange(40) % 3)
    # nothing was learnt from the rejected chunks
    assert model.n_samples_seen_ == 40
