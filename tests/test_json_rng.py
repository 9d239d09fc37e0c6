"""The one JSON helper (aucstream._json) and the one RNG helper (aucstream._rng)."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from aucstream._json import dumps, to_jsonable
from aucstream._rng import make_rng, seed_from
from aucstream.evaluation import config_hash

# ---------------------------------------------------------------------- JSON


def test_report_rule_converts_numpy_paths_tuples_and_nested_dicts():
    value = {
        "i": np.int32(-3),
        "f": np.float32(0.5),
        "b": np.bool_(False),
        "a": np.array([[1, 2], [3, 4]], dtype=np.int64),
        "p": Path("dir") / "file.csv",
        "t": (1, (2.5, "x")),
        "s": {3, 1, 2},
        7: {"nested": [np.float64(1.25), None]},
    }
    out = to_jsonable(value)
    assert out == {
        "i": -3,
        "f": 0.5,
        "b": False,
        "a": [[1, 2], [3, 4]],
        "p": str(Path("dir") / "file.csv"),
        "t": [1, [2.5, "x"]],
        "s": [1, 2, 3],
        "7": {"nested": [1.25, None]},
    }
    kinds = [type(out[k]) for k in ("i", "f", "b")]
    assert kinds == [int, float, bool]  # Python scalars, not numpy ones
    # what json itself would write for the converted value, read back the same
    assert json.loads(json.dumps(out)) == out


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -np.inf, np.float32("nan")])
def test_report_rule_writes_non_finite_as_null(bad):
    assert to_jsonable({"auc": bad}) == {"auc": None}
    assert json.loads(dumps([bad])) == [None]  # standard JSON: no NaN token


def test_exact_rule_keeps_floats_bit_for_bit_and_refuses_what_would_not_come_back():
    values = [0.1, 1 / 3, 2.0**-1074, np.float64(np.pi), float("inf"), float("nan")]
    back = json.loads(dumps(values, exact=True))
    for mine, theirs in zip(back, values, strict=True):
        assert np.array_equal(np.float64(mine), np.float64(theirs), equal_nan=True)
        assert math.isnan(mine) or np.float64(mine).tobytes() == np.float64(theirs).tobytes()
    for refused in (np.arange(3), {1, 2}, Path("x")):
        with pytest.raises(TypeError, match=type(refused).__name__):
            to_jsonable({"k": refused}, exact=True)


def test_default_hook_and_unknown_types():
    class Thing:
        pass

    with pytest.raises(TypeError, match="Thing"):
        to_jsonable([Thing()])
    assert to_jsonable([Thing()], default=lambda t: {"thing": (np.int8(1),)}) == [{"thing": [1]}]


def test_config_hash_is_the_one_written_before_the_helper():
    # the hash of this configuration by the former json.dumps(..., default=_default)
    # of evaluation/_cache.py: cached runs keep their names
    cfg = {
        "learner": "OAM",
        "params": (("eta", 0.015625), ("update", "gra")),
        "grid": {"eta": [2.0**-6, 1e-3]},
        "seed": np.int64(3),
        "frac": np.float64(0.25),
        "flag": np.bool_(True),
        "data": {"name": "a9a", "binary": [1, "x"], "part": None},
        "n": 10,
        "keys": {1: 2},
    }
    assert config_hash(cfg) == "4e1960e00c9abcc10519a633d4b95c78ff9a372bd2e871a51c4a70c818745cbf"
    canonical = json.dumps(to_jsonable(cfg), sort_keys=True, separators=(",", ":"))
    assert '"seed":3' in canonical and '"params":[["eta",0.015625],["update","gra"]]' in canonical


# ----------------------------------------------------------------------- RNG


@pytest.mark.parametrize("seed", [0, 7, np.int64(2**40), np.uint8(5)])
def test_int_seed_draws_what_default_rng_draws(seed):
    a, b = make_rng(seed), np.random.default_rng(seed)
    assert np.array_equal(a.random(5), b.random(5))
    assert seed_from(seed) == int(seed)


def test_generator_is_shared_and_random_state_gives_one_draw():
    g = np.random.default_rng(3)
    assert make_rng(g) is g
    legacy, twin = np.random.RandomState(4), np.random.RandomState(4)
    mine = make_rng(legacy).random(3)
    expected = np.random.default_rng(twin.randint(2**31 - 1)).random(3)
    assert np.array_equal(mine, expected)
    assert legacy.randint(100) == twin.randint(100)  # both advanced by one draw
    g1, g2 = np.random.default_rng(9), np.random.default_rng(9)
    assert seed_from(g1) == int(g2.integers(2**31 - 1))
    seq = np.random.SeedSequence(11)
    assert np.array_equal(make_rng(seq).random(2), np.random.default_rng(11).random(2))
    assert make_rng(None).random() != make_rng(None).random()


@pytest.mark.parametrize("bad", [True, False, np.bool_(True), 1.0, "0", [1, 2]])
def test_bools_and_other_types_are_refused_naming_the_parameter(bad):
    with pytest.raises(TypeError, match="^rng must be None, an int"):
        make_rng(bad, "rng")
    with pytest.raises(TypeError, match="random_state"):
        seed_from(bad)


def test_negative_seed_is_refused():
    with pytest.raises(ValueError, match="non-negative"):
        make_rng(-1)


def test_every_caller_draws_what_it_drew_for_an_int_seed():
    from aucstream.covariance import RandomizedCovariance
    from aucstream.datasets._labels import random_halves_partition
    from aucstream.random_features import RandomFourierFeatures
    from aucstream.reduction import RandomFeatureSubset

    X = np.random.default_rng(0).normal(size=(20, 6))
    # covariance sketch: the a_i are draw(default_rng(seed))
    mine = RandomizedCovariance(6, sketch_size=3).update(X, rng=5)
    theirs = RandomizedCovariance(6, sketch_size=3).update(
        X, draws=RandomizedCovariance.draw(np.random.default_rng(5), 20, 3)
    )
    for a, b in zip(mine.arrays(), theirs.arrays(), strict=True):
        assert np.array_equal(a, b)
    # feature subset: default_rng(seed).choice
    subset = RandomFeatureSubset(3, random_state=4).fit(X).features_
    assert np.array_equal(subset, np.sort(np.random.default_rng(4).choice(6, 3, replace=False)))
    # random feature map: seed_ is the int itself
    assert RandomFourierFeatures(8, sigma=1.0, random_state=12).fit(X).seed_ == 12
    # random halves: default_rng(seed).permutation
    classes = np.arange(5)
    perm = np.random.default_rng(2).permutation(5)
    assert np.array_equal(random_halves_partition(classes, random_state=2), np.sort(perm[:2]))
