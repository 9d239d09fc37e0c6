"""Damaged or crafted model files: a clear error naming the member, never a crash.

Each tampering starts from a real saved model of every learner. Loading runs in a
separate interpreter, followed (when the file was accepted) by scoring and learning,
so a segfault from an inconsistent state is a failed test, not a dead run.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_cases import ESTIMATORS, make, run_isolated_cases, stream

from aucstream import load_model, save_model

TESTS = Path(__file__).resolve().parent
# (one worker builds the module's fixtures: its tests are one xdist group, tests/conftest.py)


def read_members(path) -> tuple[dict, dict[str, bytes]]:
    with zipfile.ZipFile(path) as z:
        raw = {name[: -len(".npy")]: z.read(name) for name in z.namelist()}
    meta = json.loads(str(np.load(io.BytesIO(raw.pop("__meta__")))))
    return meta, raw


def write_members(path, meta: dict, raw: dict[str, bytes]) -> None:
    buffer = io.BytesIO()
    np.save(buffer, np.array(json.dumps(meta)))
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("__meta__.npy", buffer.getvalue())
        for name, data in raw.items():
            z.writestr(f"{name}.npy", data)


def npy(array: np.ndarray, allow_pickle: bool = False) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


def huge_header(shape: tuple) -> bytes:
    """An .npy member declaring ``shape`` but holding 16 bytes."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": "<f8", "fortran_order": False, "shape": shape}
    )
    return buffer.getvalue() + bytes(16)


def _repeated_candidate(meta: dict, name: str) -> bool:
    """Whether ``name`` is a member of a search's candidate whose class an earlier
    candidate has: the same member of the same class is tampered there, and the
    candidates are decoded by one loop (OnePassSearch's file holds two generations of
    its three candidates: tampering all of them would load the search some 500 times)."""
    parts = name.split("/")
    if len(parts) < 4 or parts[:2] != ["state", "candidates_"] or not parts[2].isdigit():
        return False
    classes = [item["class"] for item in meta["state"]["candidates_"]["items"]]
    return classes[int(parts[2])] in classes[: int(parts[2])]


def tamperings(path: Path) -> dict[str, tuple[dict, dict[str, bytes]] | bytes]:
    """Damaged versions of the model file at ``path``, by name."""
    meta, raw = read_members(path)
    blob = path.read_bytes()
    cases: dict = {f"truncated-{f}": blob[: int(len(blob) * f)] for f in (0.1, 0.5, 0.9)}

    def edit(name, fn):
        m, r = json.loads(json.dumps(meta)), dict(raw)
        fn(m, r)
        cases[name] = (m, r)

    state = meta["state"]
    edit("seen-negative", lambda m, r: m["state"]["n_samples_seen_"].update(value=-1))
    edit("seen-string", lambda m, r: m["state"]["n_samples_seen_"].update(value="many"))
    for label, width in (("zero", 0), ("plus-one", state["n_features_in_"]["value"] + 1)):
        edit(f"width-{label}", lambda m, r, w=width: m["state"]["n_features_in_"].update(value=w))
    edit("width-huge", lambda m, r: m["state"]["n_features_in_"].update(value=10**9))
    edit("classes-three", lambda m, r: r.update({"state/classes_": npy(np.array([0, 1, 2]))}))
    edit("class-unknown", lambda m, r: m.update({"class": "Evil"}))
    edit("format-newer", lambda m, r: m.update({"format_version": 99}))
    edit("param-unknown", lambda m, r: m["params"].update(zzz=1))
    edit("state-missing", lambda m, r: m["state"].pop(next(iter(sorted(m["state"])))))
    edit("state-kind", lambda m, r: m["state"]["n_samples_seen_"].update(kind="pickle"))
    edit(
        "state-extra-array",
        lambda m, r: (
            m["state"].update(evil_={"kind": "array"}),
            r.update({"state/evil_": npy(np.zeros(3))}),
        ),
    )
    for name in sorted(raw):
        if name == "state/classes_" or _repeated_candidate(meta, name):
            continue
        array = np.load(io.BytesIO(raw[name]), allow_pickle=False)
        key = name.replace("/", ".")
        edit(f"{key}-huge", lambda m, r, n=name: r.update({n: huge_header((10**9,) + (1,) * 0)}))
        edit(
            f"{key}-object",
            lambda m, r, n=name: r.update(
                {n: npy(np.array([None, 1], dtype=object), allow_pickle=True)}
            ),
        )
        if array.dtype.kind in "fiub":
            edit(
                f"{key}-dtype",
                lambda m, r, n=name, a=array: r.update(
                    {n: npy(a.astype(np.float32 if a.dtype.kind != "f" else np.int32))}
                ),
            )
        if array.ndim:
            edit(
                f"{key}-longer",
                lambda m, r, n=name, a=array: r.update(
                    {
                        n: npy(
                            np.concatenate([a, a[:1]])
                            if a.shape[0]
                            else np.zeros((1,) + a.shape[1:], a.dtype)
                        )
                    }
                ),
            )
        if array.dtype.kind in "iu" and array.size:
            huge = min(10**9, int(np.iinfo(array.dtype).max))  # fits the dtype
            for value in (-1, huge):
                edit(
                    f"{key}-counter-{value}",
                    lambda m, r, n=name, a=array, v=value: r.update({n: npy(np.full_like(a, v))}),
                )
        if array.dtype.kind == "f" and array.size:
            edit(
                f"{key}-nan",
                lambda m, r, n=name, a=array: r.update({n: npy(np.full_like(a, np.nan))}),
            )
    return cases


def write_case(path: Path, case) -> None:
    if isinstance(case, bytes):
        path.write_bytes(case)
    else:
        write_members(path, *case)


SCRIPT = """
import faulthandler, json, sys
sys.path.insert(0, {tests!r})
import numpy as np
from reliability_cases import stream
from aucstream import load_model
X, y = stream()
for path in {cases}:
    print(json.dumps({{"case": path}}), flush=True)
    faulthandler.dump_traceback_later(20, exit=True)  # a hang ends this interpreter
    try:
        model = load_model(path)
    except ValueError as error:
        why = str(error)[:300]
        print(json.dumps({{"case": path, "outcome": "refused", "why": why}}), flush=True)
        continue
    except Exception as error:
        print(json.dumps({{"case": path, "outcome": "wrong error",
                           "why": type(error).__name__ + ": " + str(error)[:300]}}), flush=True)
        continue
    try:
        model.decision_function(X)
        if hasattr(model, "partial_fit"):
            model.partial_fit(X, y)
        outcome = "loaded and used"
    except Exception as error:
        outcome = "loaded, then " + type(error).__name__ + ": " + str(error)[:200]
    print(json.dumps({{"case": path, "outcome": outcome}}), flush=True)
"""


@pytest.fixture(scope="module")
def tampered(tmp_path_factory) -> dict[str, list[dict]]:
    """Every learner's tampered files, loaded and used in one separate interpreter."""
    root = tmp_path_factory.mktemp("tampered")
    X, y = stream()
    paths = {}
    for cls in ESTIMATORS:
        original = save_model(make(cls).fit(X, y), root / f"{cls.__name__}.npz")
        for name, case in tamperings(original).items():
            path = root / f"{cls.__name__}--{name}.npz"
            write_case(path, case)
            paths[str(path)] = cls.__name__
    results: dict[str, list[dict]] = {}
    script = SCRIPT.replace("{tests!r}", repr(str(TESTS)))
    for r in run_isolated_cases(script, sorted(paths)):
        results.setdefault(paths[r["case"]], []).append(r)
    return results


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_tampered_files_are_refused_by_name(cls, tampered):
    results = tampered.get(cls.__name__, [])
    assert len(results) > 20
    crashes = [r for r in results if r["outcome"].startswith("crash")]
    assert not crashes, crashes[:5]
    wrong = [r for r in results if r["outcome"].startswith("wrong error")]
    assert not wrong, wrong[:3]
    # structural damage is always refused; counters may be accepted when consistent
    structural = [r for r in results if "counter" not in r["case"] and r["outcome"] != "refused"]
    assert not structural, structural[:3]
    used_badly = [r for r in results if r["outcome"].startswith("loaded, then")]
    assert not used_badly, used_badly[:3]


#: OPAUC's other summary kinds (``make`` builds the default, "full"): their tampered
#: files go through the same checks (counters, supports, hash tables, fill counters).
OPAUC_SKETCHES = {
    "randomized": {"covariance": "randomized", "sketch_size": 3},
    "hash": {"covariance": "hash", "sketch_size": 3, "centering": "exact"},
    "fd": {"covariance": "fd", "sketch_size": 3},
    "fd-centered": {"covariance": "fd", "sketch_size": 4, "centering": "exact"},
    "sparse": {"covariance": "sparse", "sketch_size": 2},
}


@pytest.fixture(scope="module")
def tampered_sketches(tmp_path_factory) -> dict[str, list[dict]]:
    """Tampered files of OPAUC with each sketch, loaded and used in one interpreter."""
    from aucstream import OPAUC

    root = tmp_path_factory.mktemp("tampered-sketches")
    X, y = stream()
    paths = {}
    for variant, params in OPAUC_SKETCHES.items():
        original = save_model(make(OPAUC, **params).fit(X, y), root / f"{variant}.npz")
        for name, case in tamperings(original).items():
            path = root / f"{variant}--{name}.npz"
            write_case(path, case)
            paths[str(path)] = variant
    results: dict[str, list[dict]] = {}
    script = SCRIPT.replace("{tests!r}", repr(str(TESTS)))
    for r in run_isolated_cases(script, sorted(paths)):
        results.setdefault(paths[r["case"]], []).append(r)
    return results


@pytest.mark.parametrize("variant", sorted(OPAUC_SKETCHES))
def test_tampered_opauc_sketch_files_are_refused_by_name(variant, tampered_sketches):
    results = tampered_sketches.get(variant, [])
    assert len(results) > 20
    bad = [r for r in results if r["outcome"].startswith(("crash", "wrong error", "loaded, then"))]
    assert not bad, bad[:5]
    structural = [r for r in results if "counter" not in r["case"] and r["outcome"] != "refused"]
    assert not structural, structural[:3]


def test_refusals_name_the_member(tmp_path):
    X, y = stream()
    path = save_model(make(ESTIMATORS[0]).fit(X, y), tmp_path / "m.npz")
    meta, raw = read_members(path)
    raw["state/classes_"] = huge_header((10**9,))
    write_members(path, meta, raw)
    with pytest.raises(ValueError, match=r"state/classes_: declares 8000000000 bytes"):
        load_model(path)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    flips=st.lists(
        st.tuples(st.floats(0, 1, exclude_max=True), st.integers(1, 255)), min_size=1, max_size=4
    )
)
def test_random_byte_damage_is_refused_or_harmless(tmp_path_factory, flips):
    """Random bytes changed anywhere in an OPAUC file: refused with ValueError, or
    (a change the archive does not notice) a model that still loads."""
    X, y = stream()
    root = tmp_path_factory.mktemp("flip")
    path = save_model(make(ESTIMATORS[0]).fit(X, y), root / "m.npz")
    blob = bytearray(path.read_bytes())
    for where, xor in flips:
        blob[int(where * len(blob))] ^= xor
    path.write_bytes(bytes(blob))
    try:
        model = load_model(path)
    except ValueError:
        return
    model.decision_function(X)
