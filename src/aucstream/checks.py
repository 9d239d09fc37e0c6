"""The checks every aucstream learner passes, public so that any learner can be checked.

:func:`check_estimator` runs the whole battery on a learner and raises an
``AssertionError`` that names the first check that failed and why;
:func:`yield_checks` yields the checks one by one (each a callable without
arguments, named by its ``__name__``), so that a test suite can make each one a
test of its own, as aucstream's ``tests/test_common.py`` does for every learner of
:func:`aucstream.all_estimators`. In the manner of scikit-learn's
``check_estimator`` and River's ``river.checks``, and with scikit-learn's own checks
included.

The checks use only the public interface of a learner, so that a learner written
outside aucstream (for instance a subclass of ``aucstream._base.BaseStreamingAUC``
in another package, or any estimator with the same interface) can be checked:
``fit``, ``partial_fit(X, y, classes=...)``, ``decision_function``, ``predict``,
``predict_proba``, ``score`` (the ROC AUC), ``learn_one``, ``decision_one``,
``predict_one``, ``predict_proba_one``, ``merge``, ``get_params`` / ``set_params``,
pickle, and the fitted attributes ``coef_``, ``classes_``, ``n_samples_seen_``,
``n_features_in_``. A learner without ``partial_fit`` is a batch learner (or has
``is_batch = True``) and gets the checks that do not stream; one without
``learn_one`` or ``merge`` skips the checks of those methods.

What "the same model, bit for bit" means
----------------------------------------
Two learners are the same model when they score a fixed probe set identically (the
``decision_function`` values, bit for bit), have identical ``coef_`` and
``n_samples_seen_``, and have identical *pickled state*: the state pickle saves
(``__getstate__``, the scikit-learn convention that puts the fitted attributes in
the instance's ``__dict__``), walked recursively through lists, dicts and
components, arrays compared by dtype, shape and bytes, floats by their bits (NaN
equal to itself), random generators by their exact bit-generator state. So a
resumed or differently chunked learner must agree in every number it will ever use,
not only in the scores of the probe set. A learner that keeps a cache which
legitimately differs (a timing, a buffer that is scratch space) must leave it out
of ``__getstate__``.

Data
----
The streams are made here from a seeded generator (Gaussian features, labels from a
noisy linear rule, optional zeros for sparse input): no file is read.

Randomness
----------
Each check works on fresh copies of the learner (``sklearn.base.clone``); the
learner passed in is never changed. A ``random_state`` of None is set to 0 in the
copies, since two copies must draw the same numbers for their models to be compared.

Settings
--------
The checks change no library setting (:func:`aucstream.set_config`) and start no
thread, so a battery run inside ``aucstream.config_context(...)`` checks the learner
under those settings.

scikit-learn checks left out, with reasons
------------------------------------------
- ``check_array_api_input``: needs SCIPY_ARRAY_API; the kernels are numba/numpy only.
- ``check_classifier_data_not_an_array``: needs pandas, which is not a dependency.
- ``check_sample_weight_equivalence_on_*`` for online learners: it compares weights
  with repeated rows in a shuffled order, and an online learner's model depends on
  the order of its examples (scikit-learn's own SGDClassifier fails it too).
- ``check_sample_weight*`` for learners whose update takes no example weights
  (``_tags.sample_weight`` False, see CONTRIBUTING.md): they refuse
  ``sample_weight`` with an error by design.
"""

from __future__ import annotations

import functools
import math
import pickle
import tempfile
import unittest
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from ._check_model import (
    _assert_same_model,
    _assert_same_model_file,
    _fresh,
    _is_online,
    _raises,
    _state_nbytes,
    pickled_state,
)

__all__ = ["check_estimator", "yield_checks", "make_stream", "pickled_state"]

#: Length of the streams the checks learn.
N = 120
#: Labels the checks give ``partial_fit`` as ``classes``.
CLASSES = [-1, 1]

_SKIPPED_SKLEARN = {"check_array_api_input", "check_classifier_data_not_an_array"}


# ------------------------------------------------------------------------- data
def make_stream(
    n: int = N, d: int = 5, seed: int = 0, sparsity: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """A seeded stream: ``(X, y)`` with Gaussian features (a fraction ``sparsity`` of
    them set to 0) and labels in {-1, +1} from a noisy linear rule.

    Parameters
    ----------
    n, d : int
        Examples and features.
    seed : int
        Seed of the generator: the same seed gives the same stream.
    sparsity : float in [0, 1)
        Fraction of the features set to 0.

    Returns
    -------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)

    Examples
    --------
    >>> from aucstream.checks import make_stream
    >>> X, y = make_stream(4, 2, seed=1)
    >>> X.shape, set(y.tolist()) <= {-1, 1}
    ((4, 2), True)
    """
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if sparsity:
        X[rng.random(size=X.shape) < sparsity] = 0.0
    w = rng.normal(size=d)
    y = np.where(X @ w + 0.3 * rng.normal(size=n) > 0, 1, -1)
    return X, y


# ------------------------------------------------------------------ the checks
def check_chunking_never_changes_the_model(estimator) -> None:
    """Any chunking of ``partial_fit`` gives the same model, bit for bit, as one chunk,
    and the model of ``fit`` (same ``coef_`` and scores)."""
    rng = np.random.default_rng(29)
    every = list(range(1, N))
    cases = [[], every, [1], [N - 1], [N // 2]]
    cases += [sorted(rng.choice(every, size=k, replace=False).tolist()) for k in (1, 2, 3, 4, 5, 6)]
    for case, cuts in enumerate(cases):
        X, y = make_stream(N, 5, seed=case if case < 3 else int(rng.integers(2**16)))
        whole = _fresh(estimator).fit(X, y)
        one = _fresh(estimator).partial_fit(X, y, classes=CLASSES)
        streamed = _fresh(estimator)
        bounds = [0, *cuts, N]
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            streamed.partial_fit(X[lo:hi], y[lo:hi], classes=CLASSES)
        what = f"chunks cut at {cuts}" if len(cuts) < N - 1 else "one-row chunks"
        np.testing.assert_array_equal(whole.coef_, streamed.coef_, err_msg=f"fit != {what}")
        np.testing.assert_array_equal(
            whole.decision_function(X), streamed.decision_function(X), err_msg=f"fit != {what}"
        )
        assert streamed.n_samples_seen_ == N, (what, streamed.n_samples_seen_)
        _assert_same_model(one, streamed, X, f"one chunk != {what}")


def check_dense_and_sparse_input_give_the_same_model(estimator) -> None:
    """CSR, CSC and COO input give the dense input's model up to rounding (of float32
    summaries, ``dtype="float32"``, at float32's precision)."""
    X, y = make_stream(N, 8, seed=1, sparsity=0.6)
    dense = _fresh(estimator).fit(X, y)
    rtol = 1e-5 if estimator.get_params().get("dtype") == "float32" else 1e-10
    for fmt in ("csr", "csc", "coo"):
        sparse = _fresh(estimator).fit(sp.csr_matrix(X).asformat(fmt), y)
        np.testing.assert_allclose(
            sparse.coef_, dense.coef_, rtol=rtol, atol=1e-12, err_msg=f"{fmt} input"
        )
    np.testing.assert_allclose(
        dense.decision_function(sp.csr_matrix(X)), dense.decision_function(X), atol=1e-12
    )


def check_fitted_properties_before_fit_say_so(estimator) -> None:
    """A public property of the fitted model (``coef_``, ...) read before any learning
    raises NotFittedError (an AttributeError: hasattr stays False), not an
    AttributeError that names an internal member."""
    cls = type(estimator)
    model = _fresh(estimator)
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
    assert "coef_" in checked, "coef_ is not a property of the learner"
    X, y = make_stream(N, 5, seed=2)
    assert _fresh(estimator).fit(X, y).coef_.shape == (1, 5)


def check_float32_and_float64_input(estimator) -> None:
    """float32 input gives the model of the same values as float64, and close to the
    float64 data's model."""
    X, y = make_stream(N, 5, seed=2)
    X32 = X.astype(np.float32)
    m32 = _fresh(estimator).fit(X32, y)
    m64 = _fresh(estimator).fit(X32.astype(np.float64), y)
    np.testing.assert_array_equal(m32.coef_, m64.coef_)
    close = _fresh(estimator).fit(X, y)
    np.testing.assert_allclose(m32.coef_, close.coef_, rtol=1e-3, atol=1e-4)


def check_any_two_labels_positive_is_classes_1(estimator) -> None:
    """Any two labels work; the larger (``classes_[1]``) is the positive class."""
    X, y = make_stream(N, 4, seed=3)
    reference = _fresh(estimator).fit(X, y)
    pairs: list[tuple] = [(0, 1), (-1, 1), ("ham", "spam"), (False, True)]
    for labels in pairs:
        y_named = np.where(y > 0, labels[1], labels[0])
        model = _fresh(estimator).fit(X, y_named)
        assert list(model.classes_) == sorted(labels), (labels, model.classes_)
        np.testing.assert_allclose(model.coef_, reference.coef_, err_msg=f"labels {labels}")
        assert set(np.unique(model.predict(X))) <= set(labels), labels
        auc = _roc_auc(y, model.decision_function(X))
        assert math.isclose(model.score(X, y_named), auc, rel_tol=1e-6, abs_tol=1e-12), (
            labels,
            model.score(X, y_named),
            auc,
        )


def _roc_auc(y, scores) -> float:
    from .metrics import roc_auc

    return roc_auc(y, scores)


def _resume(estimator, how: str) -> None:
    X, y = make_stream(N, 5, seed=4, sparsity=0.3)
    reference = _fresh(estimator).partial_fit(X[:50], y[:50], classes=CLASSES)
    reference.partial_fit(X[50:], y[50:])
    first = _fresh(estimator).partial_fit(X[:50], y[:50], classes=CLASSES)
    if how == "pickle":
        resumed = pickle.loads(pickle.dumps(first))
    elif how == "memory_map":
        import joblib

        from ._state import _arrays, state_items

        with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
            joblib.dump(first, Path(tmp) / "model")
            resumed = joblib.load(Path(tmp) / "model", mmap_mode="r")
            # a learner writes its state in place (through raw pointers, too): a
            # read-only array left there would crash the next call, not fail it
            arrays = [a for k, v in state_items(resumed).items() for a in _arrays(v, k)]
            read_only = [k for k, a in arrays if not a.flags.writeable]
            assert not read_only, f"read-only state after a memory-mapped load: {read_only}"
    else:
        from .persistence import load_model, save_model

        with tempfile.TemporaryDirectory() as tmp:
            save_model(first, Path(tmp) / "model.npz")
            resumed = load_model(Path(tmp) / "model.npz")
        assert type(resumed) is type(estimator), type(resumed)
        np.testing.assert_array_equal(resumed.decision_function(X), first.decision_function(X))
    # pickle keeps the whole state; a model file keeps what save_model stores (the
    # members ending in "_" and the generators), so the file is what is compared
    same = _assert_same_model_file if how == "save_model" else _assert_same_model
    same(resumed, first, X, f"{how} round trip")
    resumed.partial_fit(X[50:], y[50:])
    np.testing.assert_array_equal(resumed.coef_, reference.coef_)
    assert resumed.n_samples_seen_ == N, resumed.n_samples_seen_
    same(resumed, reference, X, f"resumed after {how} != one pass")


def check_resuming_mid_stream_is_exact_pickle(estimator) -> None:
    """Pickling mid-stream and continuing gives the model of one pass, bit for bit."""
    _resume(estimator, "pickle")


def check_resuming_mid_stream_is_exact_memory_mapped(estimator) -> None:
    """Pickling mid-stream with joblib, loading with read-only memory maps
    (``mmap_mode="r"``, as scikit-learn's ``readonly_memmap`` checks do) and continuing
    gives the model of one pass, bit for bit; the loaded state is writeable."""
    _resume(estimator, "memory_map")


def check_resuming_mid_stream_is_exact_save_model(estimator) -> None:
    """:func:`aucstream.save_model` / :func:`aucstream.load_model` mid-stream, then
    continuing, gives the model of one pass, bit for bit."""
    _resume(estimator, "save_model")


def check_memory_does_not_grow_with_the_stream(estimator) -> None:
    """The state's arrays take as many bytes after 2000 examples as after 200."""
    extra = {"buffer_size": 10} if "buffer_size" in estimator.get_params() else {}
    X, y = make_stream(2000, 6, seed=5)
    short = _fresh(estimator, **extra).fit(X[:200], y[:200])
    long = _fresh(estimator, **extra).fit(X, y)
    assert _state_nbytes(long) == _state_nbytes(short), (
        _state_nbytes(long),
        _state_nbytes(short),
    )


def check_bad_input_gets_a_clear_error(estimator) -> None:
    """NaN, infinity, a wrong width, an unknown label, an empty chunk, one class and
    more than two classes are refused with a ValueError that says so."""
    X, y = make_stream(40, 3, seed=6)
    model = _fresh(estimator).partial_fit(X, y)
    bad = X.copy()
    bad[3, 1] = np.nan
    _raises(ValueError, "NaN", lambda: model.partial_fit(bad, y), "NaN")
    bad[3, 1] = np.inf
    _raises(ValueError, "infinity", lambda: model.partial_fit(bad, y), "infinity")
    _raises(ValueError, "features", lambda: model.partial_fit(X[:, :2], y), "wrong width")
    _raises(
        ValueError,
        r"not in classes_",
        lambda: model.partial_fit(X, np.where(y > 0, 2, -1)),
        "unknown label",
    )
    _raises(ValueError, "0 sample", lambda: model.partial_fit(X[:0], y[:0]), "empty chunk")
    one = y > 0
    _raises(
        ValueError,
        "one class",
        lambda: _fresh(estimator).partial_fit(X[one], y[one]),
        "partial_fit of one class",
    )
    _raises(
        ValueError, "one class", lambda: _fresh(estimator).fit(X[one], y[one]), "fit of one class"
    )
    _raises(
        ValueError,
        "Only binary",
        lambda: _fresh(estimator).fit(X, np.arange(40) % 3),
        "three classes",
    )
    # nothing was learnt from the rejected chunks
    assert model.n_samples_seen_ == 40, model.n_samples_seen_


def check_a_rejected_call_changes_nothing(estimator) -> None:
    """After a refused ``partial_fit`` (or ``learn_one``) the learner is the same model,
    bit for bit, as before the call, and learns on as if the call never happened."""
    X, y = make_stream(60, 4, seed=7, sparsity=0.3)
    model = _fresh(estimator).partial_fit(X[:40], y[:40], classes=CLASSES)
    before = pickle.loads(pickle.dumps(model))
    nan, inf = X[40:50].copy(), X[40:50].copy()
    nan[-1, 2] = np.nan  # the bad value last: the rows before it were validated
    inf[-1, 0] = -np.inf
    calls = {
        "NaN": lambda: model.partial_fit(nan, y[40:50]),
        "NaN in CSR": lambda: model.partial_fit(sp.csr_matrix(nan), y[40:50]),
        "infinity": lambda: model.partial_fit(inf, y[40:50]),
        "wrong width": lambda: model.partial_fit(X[40:50, :3], y[40:50]),
        "unknown label": lambda: model.partial_fit(X[40:50], np.where(y[40:50] > 0, 2, -1)),
        "empty chunk": lambda: model.partial_fit(X[:0], y[:0]),
        "labels of the wrong length": lambda: model.partial_fit(X[40:50], y[40:49]),
    }
    if hasattr(model, "learn_one"):
        calls["learn_one NaN"] = lambda: model.learn_one(nan[-1], y[49])
        calls["learn_one wrong width"] = lambda: model.learn_one(X[40, :3], y[40])
        calls["learn_one unknown label"] = lambda: model.learn_one(X[40], 2)
    for what, call in calls.items():
        _raises(ValueError, "", call, what)
        _assert_same_model(model, before, X, f"after the refused call ({what})")
    model.partial_fit(X[40:], y[40:])
    before.partial_fit(X[40:], y[40:])
    _assert_same_model(model, before, X, "learning on after the refused calls")


def check_merge(estimator) -> None:
    """When the learner merges: merging the learners of two halves of a stream is
    defined (n_samples_seen_ adds up, finite scores, the other learner unchanged, the
    merged learner learns on), and merging a mismatched learner (another class,
    parameters, width or classes, or an unfitted one) is refused, changing nothing."""
    X, y = make_stream(N, 5, seed=8)
    half = N // 2
    other_seed = {"random_state": 1} if "random_state" in estimator.get_params() else {}
    first = _fresh(estimator).partial_fit(X[:half], y[:half], classes=CLASSES)
    second = _fresh(estimator, **other_seed).partial_fit(X[half:], y[half:], classes=CLASSES)
    before, second_before = pickle.loads(pickle.dumps(first)), pickle.loads(pickle.dumps(second))
    try:
        merged = first.merge(second)
    except NotImplementedError:  # the learner does not merge: then it changed nothing
        _assert_same_model(first, before, X, "after a merge it does not support")
        return
    assert merged is first, "merge returns the learner merged into"
    _assert_same_model(second, second_before, X, "the merged-in learner")
    assert first.n_samples_seen_ == N, first.n_samples_seen_
    assert np.all(np.isfinite(first.decision_function(X))), "merged scores are not finite"
    assert np.all(np.isfinite(first.coef_)), "merged coef_ is not finite"
    first.partial_fit(X[:10], y[:10])
    assert first.n_samples_seen_ == N + 10, first.n_samples_seen_
    # refusals
    target = _fresh(estimator).partial_fit(X[:half], y[:half], classes=CLASSES)
    kept = pickle.loads(pickle.dumps(target))
    refusals = {
        "not a learner": (TypeError, "cannot merge", lambda: target.merge(X)),
        "unfitted": (NotFittedError, "", lambda: target.merge(_fresh(estimator))),
    }
    narrow = _fresh(estimator, **other_seed)
    refusals["another width"] = (
        ValueError,
        "features",
        lambda: target.merge(narrow.partial_fit(X[half:, :4], y[half:], classes=CLASSES)),
    )
    labelled = _fresh(estimator, **other_seed)
    y01 = (y[half:] > 0).astype(int)
    refusals["other classes"] = (
        ValueError,
        "classes",
        lambda: target.merge(labelled.partial_fit(X[half:], y01, classes=[0, 1])),
    )
    changed = _changed_parameter(estimator)
    if changed is not None:
        try:
            differs = _fresh(estimator, **other_seed, **changed)
            differs.partial_fit(X[half:], y[half:], classes=CLASSES)
        except ValueError:  # the value is refused alongside the other parameters
            differs = None
        if differs is not None:
            refusals[f"other parameters {changed}"] = (
                ValueError,
                "parameters differ",
                lambda: target.merge(differs),
            )
    for what, (exception, match, call) in refusals.items():
        _raises(exception, match, call, f"merging {what}")
        _assert_same_model(target, kept, X, f"after the refused merge ({what})")


def _changed_parameter(estimator) -> dict | None:
    """One parameter set to another value of the learner's ``param_grid`` (its public
    tuning grid), or None when it has none."""
    grid = getattr(estimator, "param_grid", None)
    if not isinstance(grid, dict):
        return None
    params = estimator.get_params(deep=False)
    for name, values in sorted(grid.items()):
        if name not in params:
            continue
        for value in values:
            if not _same_value(value, params[name]):
                return {name: value}
    return None


def _same_value(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return a is b


def _as_dict(row: np.ndarray) -> dict:
    return {int(j): float(row[j]) for j in np.flatnonzero(row)}


def check_one_example_scores_equal_the_batch_methods(estimator) -> None:
    """``decision_one``, ``predict_one`` and ``predict_proba_one`` of an example (an
    array or a dict) equal the batch methods on its one-row chunk (dense or CSR)."""
    X, y = make_stream(80, 6, seed=9, sparsity=0.5)
    model = _fresh(estimator).fit(X, y)
    S = sp.csr_matrix(X)
    proba = hasattr(model, "predict_proba_one") and hasattr(model, "predict_proba")
    for i in range(0, 80, 3):
        for x, batch in ((X[i], X[i : i + 1]), (_as_dict(X[i]), S[i])):
            kind = type(x).__name__
            score = model.decision_one(x)
            assert score == model.decision_function(batch)[0], (i, kind, score)
            assert model.predict_one(x) == model.predict(batch)[0], (i, kind)
            if proba:
                np.testing.assert_array_equal(
                    model.predict_proba_one(x), model.predict_proba(batch)[0], err_msg=kind
                )


def check_learn_one_equals_partial_fit_of_one_row(estimator) -> None:
    """``learn_one`` of each example gives the model of ``partial_fit`` on one-row
    chunks, bit for bit: an array as its dense row, a dict as its CSR row."""
    X, y = make_stream(60, 6, seed=10, sparsity=0.5)
    S = sp.csr_matrix(X)
    calls = {
        "learn_one of an array": lambda m, i: m.learn_one(X[i], y[i]),
        "dense partial_fit": lambda m, i: m.partial_fit(X[i : i + 1], y[i : i + 1]),
        "learn_one of a dict": lambda m, i: m.learn_one(_as_dict(X[i]), y[i]),
        "CSR partial_fit": lambda m, i: m.partial_fit(S[i], y[i : i + 1]),
    }
    models = {}
    for how, call in calls.items():
        models[how] = _fresh(estimator).partial_fit(X[:10], y[:10], classes=CLASSES)
        for i in range(10, 60):
            call(models[how], i)
    for one, chunk in (
        ("learn_one of an array", "dense partial_fit"),
        ("learn_one of a dict", "CSR partial_fit"),
    ):
        _assert_same_model(models[one], models[chunk], X, f"{one} != {chunk} of one row")


def check_the_fast_path_changes_nothing(estimator) -> None:
    """The same calls give the same model and outputs, bit for bit, with the fast path
    of small calls on and off (``aucstream.set_config(fast_path=False)`` sends every
    call through the full validation): one-row ``partial_fit`` (dense and CSR),
    ``test_then_train``, ``learn_one`` (array and dict), small chunks, and the
    one-example scores."""
    from ._config import config_context

    X, y = make_stream(60, 6, seed=11, sparsity=0.5)
    S = sp.csr_matrix(X)
    runs = []
    for on in (True, False):
        with config_context(fast_path=on):
            model = _fresh(estimator).partial_fit(X[:12], y[:12], classes=CLASSES)
            out: list = []
            for i in range(12, 20):
                model.partial_fit(X[i : i + 1], y[i : i + 1])
            for i in range(20, 26):
                model.partial_fit(S[i], y[i : i + 1])
            if hasattr(model, "test_then_train"):
                out.append(model.test_then_train(X[26:30], y[26:30]))
                out.append(model.test_then_train(X[30:31], y[30:31]))
            if hasattr(model, "learn_one"):
                for i in range(31, 36):
                    model.learn_one(X[i], y[i])
                for i in range(36, 41):
                    model.learn_one(_as_dict(X[i]), y[i])
            model.partial_fit(X[41:44], y[41:44])
            for i in range(44, 60) if hasattr(model, "decision_one") else ():
                out.append(model.decision_one(X[i]))
                out.append(model.decision_one(_as_dict(X[i])))
                if hasattr(model, "predict_proba_one") and hasattr(model, "predict_proba"):
                    out.append(model.predict_proba_one(_as_dict(X[i])))
            runs.append((model, out))
    (fast, fast_out), (full, full_out) = runs
    _assert_same_model(fast, full, X, "fast path on != off")
    assert len(fast_out) == len(full_out)
    for k, (a, b) in enumerate(zip(fast_out, full_out)):
        np.testing.assert_array_equal(a, b, err_msg=f"output {k}: fast path on != off")


def check_zero_weight_rows_change_nothing(estimator) -> None:
    """Examples of weight 0 among those learnt change nothing but ``n_samples_seen_``:
    the model is the one learnt without them, bit for bit once that count is set
    back, and each example is scored as without them (``test_then_train``), for any
    chunking (of chunks that hold an example of weight 1: one of weights 0 only is
    refused, as scikit-learn refuses it). :func:`aucstream.evaluation.prequential`
    relies on it to learn the labels a delay releases in one call, the scored
    examples woven in with weight 0 (a learner it holds that counted them too is
    counted back, as ``prequential`` does). Skipped for a learner that refuses
    ``sample_weight``, or says it does not hold (``_tags.zero_weight_inert`` False)."""
    if not getattr(getattr(estimator, "_tags", None), "zero_weight_inert", True):
        return
    X, y = make_stream(N, 5, seed=31)
    noise, labels = make_stream(N, 5, seed=32)
    woven_X = np.empty((2 * N, 5))
    woven_X[0::2], woven_X[1::2] = 3.0 * noise, X  # (rows far from the stream's)
    woven_y = np.empty(2 * N, dtype=y.dtype)
    woven_y[0::2], woven_y[1::2] = labels, y
    weights = np.tile([0.0, 1.0], N)
    try:
        _fresh(estimator).partial_fit(X[:4], y[:4], classes=CLASSES, sample_weight=np.ones(4))
    except (ValueError, TypeError) as error:
        if "sample_weight" in str(error):
            return  # (refused by design)
        raise
    plain = _fresh(estimator)
    scores = (
        plain.test_then_train(X, y, classes=CLASSES) if hasattr(plain, "test_then_train") else None
    )
    for cuts in ([], [2, 4, 78, 150], list(range(2, 2 * N, 2))):  # (none of weights 0 only)
        woven, bounds, got = _fresh(estimator), [0, *cuts, 2 * N], []
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            part = (woven_X[lo:hi], woven_y[lo:hi])
            if scores is None:
                woven.partial_fit(*part, classes=CLASSES, sample_weight=weights[lo:hi])
            else:
                got.append(woven.test_then_train(*part, CLASSES, weights[lo:hi]))
        what = f"weight-0 rows woven in, chunks cut at {cuts[:6]}"
        # (counted, or not: a search's count is its race's clock)
        assert woven.n_samples_seen_ in (N, 2 * N), (what, woven.n_samples_seen_)
        if scores is not None:  # (the scored rows' scores: those of the rows after them)
            np.testing.assert_array_equal(
                np.concatenate(got)[1::2], scores, err_msg=f"{what}: test_then_train"
            )
        for part in [woven, *vars(woven).values()]:  # (a held learner counted them too)
            if isinstance(part, BaseEstimator) and getattr(part, "n_samples_seen_", 0) == 2 * N:
                part.n_samples_seen_ = N
        _assert_same_model(plain, woven, X, what)


# ---------------------------------------------------------------- the battery
def _named(function: Callable, *args) -> Callable[[], None]:
    check = functools.partial(function, *args)
    functools.update_wrapper(check, function)
    return check


def _sklearn_check(check, estimator) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check(estimator)


def _sklearn_checks(estimator) -> Iterator[Callable[[], None]]:
    from sklearn.utils.estimator_checks import estimator_checks_generator

    online = _is_online(estimator)
    weights = getattr(getattr(estimator, "_tags", None), "sample_weight", True)
    for instance, check in estimator_checks_generator(estimator, legacy=True):
        name = getattr(check, "func", check).__name__
        if name in _SKIPPED_SKLEARN:
            continue
        if name.startswith("check_sample_weight_equivalence") and online:
            continue
        if "sample_weight" in name and not weights:
            continue
        keywords = getattr(check, "keywords", None) or {}
        if keywords:  # one check run twice (check_estimators_pickle(readonly_memmap=True))
            name += "(" + ",".join(f"{k}={v!r}" for k, v in sorted(keywords.items())) + ")"
        run = functools.partial(_sklearn_check, check, instance)
        run.__name__ = name  # type: ignore[attr-defined]
        run.__doc__ = f"scikit-learn's {name}."
        yield run


def yield_checks(
    estimator: BaseEstimator, *, sklearn_checks: bool = True
) -> Iterator[Callable[[], None]]:
    """The checks of :func:`check_estimator` for ``estimator``, one by one.

    Parameters
    ----------
    estimator : estimator
        The learner to check (an instance; it is cloned, never changed).
    sklearn_checks : bool, default=True
        Include scikit-learn's estimator checks (``estimator_checks_generator``),
        less the ones listed in this module's docstring.

    Yields
    ------
    callable
        A check: call it without arguments; it raises an AssertionError (or the
        error of the call that failed) when the learner fails it. Its ``__name__``
        names it (``check_...``) and its ``__doc__`` says what it checks.

    Examples
    --------
    >>> from aucstream import SOLAM
    >>> from aucstream.checks import yield_checks
    >>> names = [check.__name__ for check in yield_checks(SOLAM(), sklearn_checks=False)]
    >>> names[0]
    'check_fitted_properties_before_fit_say_so'
    >>> "check_chunking_never_changes_the_model" in names
    True
    >>> for check in yield_checks(SOLAM(), sklearn_checks=False):
    ...     check()
    """
    online = _is_online(estimator)
    functions: list[Callable] = [
        check_fitted_properties_before_fit_say_so,
        check_dense_and_sparse_input_give_the_same_model,
        check_float32_and_float64_input,
        check_any_two_labels_positive_is_classes_1,
    ]
    if hasattr(estimator, "decision_one"):
        functions.append(check_one_example_scores_equal_the_batch_methods)
    if online:
        functions += [
            check_chunking_never_changes_the_model,
            check_resuming_mid_stream_is_exact_pickle,
            check_resuming_mid_stream_is_exact_memory_mapped,
        ]
        if type(estimator).__module__.split(".")[0] == "aucstream":
            # save_model stores aucstream's own classes only (a model file cannot name
            # code to run); other learners resume through pickle
            functions.append(check_resuming_mid_stream_is_exact_save_model)
        functions += [
            check_memory_does_not_grow_with_the_stream,
            check_bad_input_gets_a_clear_error,
            check_a_rejected_call_changes_nothing,
        ]
        if hasattr(estimator, "learn_one"):
            functions.append(check_learn_one_equals_partial_fit_of_one_row)
        functions.append(check_the_fast_path_changes_nothing)
        functions.append(check_zero_weight_rows_change_nothing)
        if hasattr(estimator, "merge"):
            functions.append(check_merge)
    for function in functions:
        yield _named(function, estimator)
    if sklearn_checks:
        yield from _sklearn_checks(estimator)


def check_estimator(estimator: BaseEstimator, *, sklearn_checks: bool = True) -> None:
    """Run every check of :func:`yield_checks` on ``estimator``.

    Parameters
    ----------
    estimator : estimator
        The learner to check (an instance; it is cloned, never changed).
    sklearn_checks : bool, default=True
        Include scikit-learn's estimator checks.

    Raises
    ------
    AssertionError
        At the first check that fails, naming the check, the learner and why (the
        check's own error is chained as ``__cause__``). A scikit-learn check that
        skips itself (``unittest.SkipTest``) is passed over.

    Examples
    --------
    >>> from aucstream import OPAUC
    >>> from aucstream.checks import check_estimator
    >>> check_estimator(OPAUC(), sklearn_checks=False)
    """
    for check in yield_checks(estimator, sklearn_checks=sklearn_checks):
        try:
            check()
        except unittest.SkipTest:  # a scikit-learn check that does not apply
            continue
        except Exception as error:  # noqa: BLE001 - reported as the failed check
            why = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
            raise AssertionError(f"{check.__name__} failed for {estimator!r}: {why}") from error
