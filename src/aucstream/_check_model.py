"""What :mod:`aucstream.checks` compares: "the same model, bit for bit" (the state
pickle saves, walked recursively; see that module's docstring), and the small helpers
its checks share (fresh copies, expected errors, the state's bytes)."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone


def _is_online(estimator) -> bool:
    return hasattr(estimator, "partial_fit") and not getattr(estimator, "is_batch", False)


def _fresh(estimator, **params):
    """A clone of ``estimator`` (random_state None set to 0), with ``params`` set."""
    model = clone(estimator)
    own = model.get_params(deep=False)
    if "random_state" in own and own["random_state"] is None:
        model.set_params(random_state=0)
    if params:
        model.set_params(**params)
    return model


def pickled_state(obj: object, _seeded: bool = True, _seen: frozenset = frozenset()) -> Any:
    """The state pickle saves of ``obj`` as nested tuples that compare bit for bit.

    Arrays become (dtype, shape, bytes) (object arrays their values), floats their
    hexadecimal form (NaN equal to NaN, -0.0 unlike 0.0), random generators their
    exact state, objects the walk of their ``__getstate__`` (or ``__dict__``). The
    generators of an estimator whose ``random_state`` is None or that has none (and
    of its components) are left out: they are seeded by the operating system, so two
    equal models differ there, and if they shaped the model its scores would show it.

    Parameters
    ----------
    obj : object
        A learner (or any picklable value).

    Returns
    -------
    object
        Nested tuples: equal exactly when the two states are equal bit for bit.

    Examples
    --------
    >>> import pickle
    >>> from aucstream import SOLAM
    >>> from aucstream.checks import make_stream, pickled_state
    >>> X, y = make_stream(40, 3)
    >>> model = SOLAM(random_state=0).fit(X, y)
    >>> pickled_state(pickle.loads(pickle.dumps(model))) == pickled_state(model)
    True
    >>> pickled_state(SOLAM(random_state=0).fit(X[:39], y[:39])) == pickled_state(model)
    False
    """
    if isinstance(obj, np.ndarray):
        if obj.dtype == object:
            return ("array", "O", obj.shape, pickled_state(obj.tolist(), _seeded, _seen))
        return ("array", obj.dtype.str, obj.shape, np.ascontiguousarray(obj).tobytes())
    if isinstance(obj, np.generic):
        return ("scalar", obj.dtype.str, obj.tobytes())
    if isinstance(obj, float):
        return ("float", obj.hex())
    if obj is None or isinstance(obj, (bool, int, str, bytes, complex)):
        return obj
    if isinstance(obj, np.random.Generator):
        return ("rng", repr(obj.bit_generator.state) if _seeded else "unseeded")
    if isinstance(obj, np.random.RandomState):
        return ("RandomState", repr(obj.get_state(legacy=False)) if _seeded else "unseeded")
    if id(obj) in _seen:
        return ("cycle", type(obj).__name__)
    seen = _seen | {id(obj)}
    if isinstance(obj, dict):
        items = sorted(obj.items(), key=lambda kv: repr(kv[0]))
        return ("dict", tuple((repr(k), pickled_state(v, _seeded, seen)) for k, v in items))
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, tuple(pickled_state(v, _seeded, seen) for v in obj))
    if isinstance(obj, (set, frozenset)):
        return ("set", tuple(sorted(repr(v) for v in obj)))
    if sp.issparse(obj):
        csr = sp.csr_array(obj)
        parts = (csr.indptr, csr.indices, csr.data)
        return ("sparse", csr.shape, tuple(pickled_state(a, _seeded, seen) for a in parts))
    getstate = getattr(obj, "__getstate__", None)
    state = getstate() if getstate is not None else getattr(obj, "__dict__", None)
    if state is None:  # a plain object with no state (a function, a class): its name
        return ("object", type(obj).__qualname__, getattr(obj, "__qualname__", repr(obj)))
    seeded = _is_seeded(obj, _seeded)
    return ("object", type(obj).__qualname__, pickled_state(state, seeded, seen))


def _is_seeded(obj, inherited: bool) -> bool:
    """An estimator is seeded when its ``random_state`` is set; anything else (a
    component) is as seeded as the estimator that holds it."""
    get_params = getattr(obj, "get_params", None)
    if get_params is None or isinstance(obj, type):
        return inherited
    try:
        return get_params(deep=False).get("random_state") is not None
    except Exception:  # noqa: BLE001 - not an estimator after all
        return inherited


def _seeded_file_state(node, seeded: bool):
    """A model file's metadata with the generator states of unseeded estimators (as
    :func:`pickled_state`) replaced by "unseeded"."""
    if isinstance(node, list):
        return [_seeded_file_state(v, seeded) for v in node]
    if not isinstance(node, dict):
        return node
    if node.get("kind") == "rng" and not seeded:
        return "unseeded"
    if node.get("kind") == "object" and isinstance(node.get("attrs"), dict):
        own = node["attrs"].get("random_state")
        if isinstance(own, dict) and own.get("kind") == "scalar":
            seeded = own.get("value") is not None
    return {k: _seeded_file_state(v, seeded) for k, v in node.items()}


def _first_difference(a, b, path: str = "") -> str:
    """Where two :func:`pickled_state` values first differ (for the message)."""
    if type(a) is not type(b):
        return f"{path or 'state'}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, tuple) and a and a[0] == "dict" and len(a) == 2:
        keys_a, keys_b = [k for k, _ in a[1]], [k for k, _ in b[1]]
        if keys_a != keys_b:
            return f"{path or 'state'}: members {sorted(set(keys_a) ^ set(keys_b))} differ"
        for (key, va), (_, vb) in zip(a[1], b[1]):
            if va != vb:
                name = key.strip("'\"")
                return _first_difference(va, vb, f"{path}.{name}" if path else name)
    if isinstance(a, tuple) and len(a) == len(b):
        for va, vb in zip(a, b):
            if va != vb and isinstance(va, tuple):
                return _first_difference(va, vb, path)
    return f"{path or 'state'} differs"


def _assert_same_state(a, b, what: str) -> None:
    sa, sb = pickled_state(a), pickled_state(b)
    if sa != sb:
        raise AssertionError(f"{what}: the pickled state differs ({_first_difference(sa, sb)})")


def _assert_same_model(a, b, X, what: str) -> None:
    """``a`` and ``b`` are the same model bit for bit (see the module docstring)."""
    np.testing.assert_array_equal(a.coef_, b.coef_, err_msg=f"{what}: coef_")
    np.testing.assert_array_equal(
        a.decision_function(X), b.decision_function(X), err_msg=f"{what}: decision_function"
    )
    assert a.n_samples_seen_ == b.n_samples_seen_, (
        f"{what}: n_samples_seen_ {a.n_samples_seen_} != {b.n_samples_seen_}"
    )
    _assert_same_state(a, b, what)


def _model_file(model) -> tuple[dict, dict]:
    """What :func:`aucstream.save_model` stores of ``model``: the metadata (class,
    parameters, scalar state, generator states) and every state array."""
    import json

    from .persistence import save_model

    with tempfile.TemporaryDirectory() as tmp:
        path = save_model(model, Path(tmp) / "model.npz")
        with np.load(path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    meta = json.loads(str(arrays.pop("__meta__")))
    meta.pop("aucstream_version", None)
    meta = _seeded_file_state(meta, meta.get("params", {}).get("random_state") is not None)
    return meta, {name: pickled_state(a) for name, a in arrays.items()}


def _assert_same_model_file(a, b, X, what: str) -> None:
    """``a`` and ``b`` score alike bit for bit and save the same model file."""
    np.testing.assert_array_equal(a.coef_, b.coef_, err_msg=f"{what}: coef_")
    np.testing.assert_array_equal(
        a.decision_function(X), b.decision_function(X), err_msg=f"{what}: decision_function"
    )
    assert a.n_samples_seen_ == b.n_samples_seen_, what
    (meta_a, arrays_a), (meta_b, arrays_b) = _model_file(a), _model_file(b)
    assert meta_a == meta_b, f"{what}: the model files' metadata differ"
    assert arrays_a.keys() == arrays_b.keys(), (
        f"{what}: the model files' arrays differ: {sorted(arrays_a.keys() ^ arrays_b.keys())}"
    )
    for name in arrays_a:
        assert arrays_a[name] == arrays_b[name], f"{what}: the model files' {name} differ"


def _raises(exception, match: str, call: Callable, what: str):
    try:
        call()
    except exception as error:
        if not re.search(match, str(error)):
            raise AssertionError(
                f"{what}: the {type(error).__name__} does not say {match!r}: {error}"
            ) from error
        return error
    raise AssertionError(f"{what}: no {exception.__name__} was raised")


def _state_nbytes(obj, _seen: frozenset = frozenset()) -> int:
    """Bytes of every numpy array in the pickled state of ``obj``."""
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if id(obj) in _seen or isinstance(obj, (np.random.Generator, str, bytes)):
        return 0
    seen = _seen | {id(obj)}
    if isinstance(obj, dict):
        return sum(_state_nbytes(v, seen) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(_state_nbytes(v, seen) for v in obj)
    if hasattr(obj, "__dict__"):
        return _state_nbytes(vars(obj), seen)
    return 0
