"""Property-based fuzzing of model files by meaning, not bytes (bounded, for CI).

``tests/test_fuzz_readers.py`` flips bytes, which the archive's CRCs mostly catch.
Here a saved model's metadata gets one value replaced (another type, a negative or
huge number, NaN, a list, a dict...) or one array member one element scaled (0, -1,
1e300, NaN, a subnormal), its dtype or its length changed, and the archive is
written again so that it is well formed. ``load_model`` must refuse with a
ValueError (or OSError/MemoryError) that says something, or give a model that
scores finite values and either learns more or refuses with a ValueError or
FloatingPointError -- never another exception, a crash or a hang. (A fuller round,
500 and more examples, found numpy's bare OverflowError for a random generator state
of -1: docs/results/issue34_audit.md.)
"""

from __future__ import annotations

import copy
import json
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import aucstream
from aucstream import load_model, save_model
from aucstream.preprocessing import OnlineStandardScaler

FUZZ = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

rng = np.random.default_rng(0)
X = rng.normal(size=(120, 5))
y = np.where(X[:, 0] + 0.3 * rng.normal(size=120) > 0, 1, -1)

MAKERS = {
    "OPAUC_fd": lambda: aucstream.OPAUC(covariance="fd", sketch_size=3, random_state=0),
    "OAM": lambda: aucstream.OAM(buffer_size=10, random_state=0),
    "FSAUC": lambda: aucstream.FSAUC(n_samples=200, random_state=0),
    "SPAM": lambda: aucstream.SPAM(),
    "pipeline": lambda: aucstream.StreamPipeline(OnlineStandardScaler(), aucstream.SOLAM()),
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("models")
    out = {}
    for name, make in MAKERS.items():
        path = save_model(make().fit(X[:80], y[:80]), tmp / name)
        with np.load(path, allow_pickle=False) as archive:
            out[name] = {k: archive[k] for k in archive.files}
    return out


def _paths(node, prefix=()):
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*prefix, i))
    if prefix:
        yield prefix


_VALUES = st.one_of(
    st.integers(-(10**12), 10**12),
    st.sampled_from(
        [0, -1, 2**63, 2**128, 1e308, float("nan"), -0.0, True, None, "x", [], {}, [1, 2]]
    ),
    st.sampled_from([{"kind": "array"}, {"kind": "scalar", "value": 1}, {"kind": "rng"}]),
)


@FUZZ
@given(
    name=st.sampled_from(sorted(MAKERS)),
    target=st.sampled_from(["meta", "meta", "element", "dtype", "length"]),
    pick=st.integers(0, 10**6),
    value=_VALUES,
    scale=st.sampled_from([0.0, -1.0, 1e300, float("nan"), 1e-310]),
)
def test_fuzz_model_meaning(tmp_path, saved, name, target, pick, value, scale):
    arrays = copy.deepcopy(saved[name])
    meta = json.loads(str(arrays["__meta__"]))
    members = sorted(k for k in arrays if k != "__meta__")
    if target == "meta":
        where = list(_paths(meta))
        path = where[pick % len(where)]
        node = meta
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        arrays["__meta__"] = np.array(json.dumps(meta))
    else:
        key = members[pick % len(members)]
        a = arrays[key]
        if a.dtype.kind not in "fiub" or a.size == 0:
            return
        if target == "element":
            flat = a.copy().reshape(-1)
            i = pick % flat.size
            if a.dtype.kind == "f":
                flat[i] = flat[i] * scale if np.isfinite(scale) else scale
            elif a.dtype.kind in "iu" and isinstance(value, int) and abs(value) < 2**62:
                flat[i] = np.array(value).astype(a.dtype)
            arrays[key] = flat.reshape(a.shape)
        elif target == "dtype":
            arrays[key] = a.astype(np.float32 if a.dtype != np.float32 else np.float64)
        else:
            arrays[key] = a.reshape(-1)[:-1]
    path = tmp_path / "tampered.npz"
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = load_model(path)
        except (ValueError, OSError, MemoryError) as error:
            assert str(error)
            return
        assert np.isfinite(model.decision_function(X[80:])).all()
        try:
            model.partial_fit(X[80:], y[80:])
        except (ValueError, FloatingPointError) as error:
            assert str(error)
            return
        assert np.isfinite(model.decision_function(X[80:])).all()
