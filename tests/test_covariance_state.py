"""The consistency checks of loaded states: covariance summaries, OPAUC, AdaOAM, SAdaOAM.

Every state a learner or a summary reaches by learning (and merging, and saving and
loading) passes its ``_check_state``; every member that a check covers, once
tampered with in memory, is refused with a ``ValueError`` naming it. Also the memory
guard of the O(d^2) learners.
"""

from __future__ import annotations

import copy
import math
import time

import numpy as np
import pytest
import scipy.sparse as sp

import aucstream.covariance as cov
from aucstream import OPAUC, load_model, save_model
from aucstream._config import config_context, format_bytes
from aucstream.adaoam import AdaOAM, SAdaOAM
from aucstream.covariance._hashtable import EMPTY
from aucstream.covariance._nbytes import summary_nbytes

D = 12  # features 10 and 11 are never non-zero: the supports are proper subsets


def _data(n: int = 120, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D))
    X[rng.random(X.shape) < 0.5] = 0.0
    X[:, 0] = 1.0 + np.abs(X[:, 0])  # always positive: s_0^2 > P_00 for T > 1
    X[:, 10:] = 0.0
    y = np.where(X[:, 1] - X[:, 2] > 0, 1, -1)
    y[:2] = [-1, 1]
    return X, y


#: Sketch sizes of the summaries under test.
TAU = {"fd": 4, "sparse": 2}


def _summary(kind: str, **options):
    X, _ = _data()
    if kind == "exact_sparse":
        return cov.ExactSparseCovariance(D, capacity=4).update(X)  # grows
    s = cov.make_covariance(kind, D, TAU.get(kind, 3), **options)
    if kind in ("randomized", "hash"):
        return s.update(X, rng=0)
    return s.update(sp.csr_matrix(X))


KINDS = ["full", "randomized", "hash", "fd", "sparse", "exact_sparse"]


def _check_all(model) -> None:
    """What load_model runs: each component's check, then the learner's."""
    for s in getattr(model, "stats_", []):
        s._check_state()
    model._check_state()


# ------------------------------------------------------------ valid states pass
@pytest.mark.parametrize("kind", KINDS)
def test_learnt_and_merged_summaries_pass(kind):
    X, _ = _data()
    options = [{}]
    if kind in ("randomized", "hash", "fd"):
        options.append({"centering": "exact"})
    for opts in options:
        s = _summary(kind, **opts)
        s._check_state()
        empty = (
            cov.ExactSparseCovariance(D)
            if kind == "exact_sparse"
            else cov.make_covariance(kind, D, TAU.get(kind, 3), **opts)
        )
        empty._check_state()
        one = copy.deepcopy(empty)
        if kind in ("randomized", "hash"):
            one.update(X[:1], rng=1)
        else:
            one.update(X[:1])
        one._check_state()
        pairs = [(s, empty), (empty, s), (s, one)]
        if kind not in ("randomized", "hash"):  # linear sketches refuse shared draws
            pairs.append((s, s))
        for a, b in pairs:
            a.merge(b)._check_state()


@pytest.mark.parametrize(
    "params",
    [
        {"covariance": "full"},
        {"covariance": "randomized"},
        {"covariance": "randomized", "centering": "exact"},
        {"covariance": "hash", "centering": "g13"},
        {"covariance": "fd"},
        {"covariance": "fd", "centering": "exact", "shrink": "ceil_0.9"},
        {"covariance": "fd", "shrink": 3},
        {"covariance": "sparse", "prune_slack": 0.0},
        {"covariance": "sparse"},
    ],
    ids=str,
)
def test_learnt_opauc_states_pass(params, monkeypatch, tmp_path):
    monkeypatch.setattr(OPAUC, "_rebase_every", 37)
    X, y = _data()
    model = OPAUC(sketch_size=3, random_state=0, **params).fit(X[:70], y[:70])
    _check_all(model)
    model.partial_fit(sp.csr_matrix(X[70:]), y[70:])
    _check_all(model)
    loaded = load_model(save_model(model, tmp_path / "m.npz"))
    np.testing.assert_array_equal(loaded.coef_, model.coef_)


@pytest.mark.parametrize("cls", [AdaOAM, SAdaOAM])
def test_learnt_adagrad_states_pass_and_grown_tables_load(cls, tmp_path):
    X, y = _data()
    model = cls().fit(X, y)
    _check_all(model)
    wide = np.random.default_rng(1).normal(size=(200, 40))
    model = cls().fit(wide, np.where(wide[:, 0] > 0, 1, -1))
    _check_all(model)
    if cls is SAdaOAM:  # the tables grew past their initial 64 entries
        assert model.stats_[0].capacity > 64
    loaded = load_model(save_model(model, tmp_path / "m.npz"))
    np.testing.assert_array_equal(loaded.coef_, model.coef_)
    loaded.partial_fit(wide[:10], np.where(wide[:10, 0] > 0, 1, -1))


# ------------------------------------------------------ tampered summaries
def _set(name, index, value):
    def tamper(s):
        getattr(s, name)[index] = value

    return tamper


def _attr(name, value):
    return lambda s: setattr(s, name, value)


def _first_free_column(s):
    s.sketch_[4, s.nfill_[0]] = 1.0  # feature 4 is in the support


def _outside_support(name):
    def tamper(s):
        getattr(s, name)[10] = 1.0  # feature 10 never occurs

    return tamper


def _duplicate_support(s):
    s.support_[1] = s.support_[0]


def _mark_unseen(s):
    s.seen_[10] = True


def _drop_from_support(s):
    """Remove a feature from support_ and seen_ (consistently): its entries remain."""
    n = s.n_support_[0]
    s.seen_[s.support_[n - 1]] = False
    s.n_support_[0] = n - 1


def _add_to_support(s):
    """Add a feature that never occurred to support_ and seen_ (consistently)."""
    n = s.n_support_[0]
    s.support_[n] = 10
    s.seen_[10] = True
    s.n_support_[0] = n + 1


def _swap_index_slots(s):
    occupied = np.flatnonzero(s.index_ >= 0)
    a, b = occupied[:2]
    s.index_[a], s.index_[b] = s.index_[b], s.index_[a]


def _index_without_empty_slot(s):
    s.index_[s.index_ == EMPTY] = 0  # every probe of an absent key would loop


def _key(i, j):
    """Entry (i, j) with i <= j (the stored form) as the first key."""
    return lambda s: s.keys_.__setitem__(0, (min(i, j) << 32) | max(i, j))


def _duplicate_key(s):
    s.keys_[1] = s.keys_[0]


def _negative_diagonal(s):
    keys = s.keys_[: s.info_[0]]
    s.values_[np.flatnonzero((keys >> 32) == (keys & 0xFFFFFFFF))[0]] = -1.0


def _over_trigger(s):
    """A table whose cost passes the trigger (taken from an exact summary)."""
    X, _ = _data()
    exact = cov.ExactSparseCovariance(D, capacity=s.capacity).update(X)
    for name in ("keys_", "values_", "index_", "info_", "sum_", "count_"):
        setattr(s, name, getattr(exact, name).copy())


def _scatter_diagonal(s):
    s.scatter_[3, 3] = -1.0


LOWRANK_COMMON = [
    (_set("count_", 0, -1), "count_ = -1 is negative"),
    (_set("count_", 0, 0), "count_ is 0, but sum_"),
    (_attr("n_features", 0), "n_features = 0"),
    (_attr("sketch_size", 5), "sketch_ has shape"),
    (_attr("centering", "bogus"), "centering = 'bogus'"),
    (_attr("sum_", np.zeros(D + 1)), r"sum_ has shape \(13,\)"),
]
TABLE = [
    (_set("info_", 0, -1), r"info_\[0\] = -1 entries"),
    (lambda s: s.info_.__setitem__(0, s.capacity + 1), r"info_\[0\] = \d+ entries"),
    (_set("info_", 1, 10**6), r"info_\[1\] = 1000000, but the entries' cost"),
    (_set("info_", 2, -1), r"info_\[2\] = -1 prunes is negative"),
    (_set("keys_", 0, -1), "keys_ holds a negative key"),
    (_set("keys_", 0, (5 << 32) | 2), r"outside 0 <= i <= j < 12"),  # i > j
    (_key(0, D), r"outside 0 <= i <= j < 12"),
    (_key(D + 3, D + 3), r"outside 0 <= i <= j < 12"),
    (_duplicate_key, "keys_ holds an entry twice"),
    (_set("index_", slice(None), EMPTY), "index_ is not the hash index"),
    (_set("index_", slice(None), 10**6), "index_ is not the hash index"),
    (_set("index_", slice(None), -7), "index_ is not the hash index"),
    (_index_without_empty_slot, "index_ is not the hash index"),
    (_swap_index_slots, "index_ is not the hash index"),
    (lambda s: setattr(s, "index_", s.index_[:-1].copy()), "index_ has shape"),
    (lambda s: setattr(s, "values_", s.values_[:-1].copy()), "values_ has shape"),
    (lambda s: setattr(s, "keys_", s.keys_.astype(np.int32)), "keys_ has dtype int32"),
    (_negative_diagonal, "negative diagonal"),
    (_set("count_", 0, -1), "count_ = -1 is negative"),
    (_set("count_", 0, 0), "count_ is 0, but"),
]
SUPPORT = [
    (_set("n_support_", 0, -1), r"n_support_ = -1 is outside \[0, 12\]"),
    (_set("n_support_", 0, D + 1), r"n_support_ = 13 is outside \[0, 12\]"),
    (_set("support_", 0, D), r"support_ holds a feature index outside \[0, 12\)"),
    (_set("support_", 0, -1), r"support_ holds a feature index outside"),
    (_duplicate_support, "support_ lists a feature twice"),
    (_mark_unseen, "seen_ does not mark exactly"),
    (_outside_support("sum_"), "sum_ is non-zero at a feature outside the support"),
]

CASES = (
    [
        ("full", _set("count_", 0, -1), "count_ = -1 is negative"),
        ("full", _set("count_", 0, 0), "count_ is 0, but sum_ is not all zero"),
        ("full", _set("weight_", 0, 1.0), "weight_ do not match the data"),
        ("full", _set("weight_", 0, -1.0), "weight_ = -1.0 is not a total weight"),
        ("full", _set("weight_", 0, 0.0), "weight_ = 0.0 does not match count_"),
        ("full", _scatter_diagonal, "negative diagonal"),
        ("full", _attr("scatter_", np.zeros((D, D + 1))), "scatter_ has shape"),
        ("full", _attr("count_", np.zeros(1)), "count_ has dtype float64"),
        ("full", _attr("n_features", True), "n_features = True"),
    ]
    + [(kind, t, m) for kind in ("randomized", "hash", "fd") for t, m in LOWRANK_COMMON]
    + [
        ("randomized", _attr("asum_", np.zeros(4)), r"asum_ has shape \(4,\)"),
        ("hash", _attr("gram_", np.zeros((3, 4))), r"gram_ has shape \(3, 4\)"),
        ("hash", _attr("centering", "exact "), "centering = 'exact '"),
        ("fd", _set("nfill_", 0, 4), r"nfill_ = 4 filled columns is outside \[0, 3\]"),
        ("fd", _set("nfill_", 0, -1), r"nfill_ = -1 filled columns is outside"),
        ("fd", _set("n_shrinks_", 0, -1), "n_shrinks_ holds a negative value"),
        ("fd", _set("n_shrinks_", 0, 10**9), "n_shrinks_ = 1000000000 shrinks"),
        ("fd", _set("frob_", 0, -1.0), "frob_ holds a negative value"),
        ("fd", _attr("shrink_index", 3), "shrink_index = 3, but the other settings give 2"),
        ("fd", _attr("shrink", "bogus"), "shrink = 'bogus'"),
        ("fd", _attr("shrink", 9), "shrink = 9"),
        ("fd", _attr("sketch_size", 1), "sketch_size = 1 is not an int >= 2"),
        ("fd", _first_free_column, "the columns from nfill_"),
        ("fd", _set("beta_", 3, 1.0), "the columns from nfill_"),
        ("fd", _set("zs_", 3, 1.0), "the columns from nfill_"),
        ("fd", _set("gram_", (3, 0), 1.0), "the columns from nfill_"),
        ("fd", _outside_support("sketch_"), "sketch_ is non-zero at a feature outside"),
        ("fd", _attr("seen_", np.zeros(D, dtype=np.int64)), "seen_ has dtype int64"),
        ("fd", _attr("beta_", np.zeros(2)), r"beta_ has shape \(2,\)"),
    ]
    + [("fd", t, m) for t, m in SUPPORT]
    + [(kind, t, m) for kind in ("sparse", "exact_sparse") for t, m in TABLE]
    + [
        ("sparse", _attr("budget", 7), "budget = 7, but the other settings give 24"),
        ("sparse", _attr("trigger", 10**6), "trigger = 1000000"),
        ("sparse", _attr("full", 3), "full = 3, but the other settings give 78"),
        ("sparse", _attr("prune_slack", -0.5), "prune_slack = -0.5"),
        ("sparse", _attr("sketch_size", 0), "sketch_size = 0"),
        ("sparse", _over_trigger, r"info_\[1\] = \d+ stored non-zeros, above the trigger"),
        ("exact_sparse", _set("info_", 2, 1), r"info_\[2\] = 1 prunes; an exact summary"),
        ("exact_sparse", _attr("sketch_size", 3), "an exact summary has no budget"),
        ("exact_sparse", _attr("budget", 3), "budget = 3, but the other settings give 78"),
        ("exact_sparse", _set("weight_", 0, 1.0), "weight_ do not match the data"),
        ("exact_sparse", _drop_from_support, "entry of a feature outside the support"),
        ("exact_sparse", _add_to_support, "not the set of features with a diagonal entry"),
    ]
    + [("exact_sparse", t, m) for t, m in SUPPORT]
)


@pytest.mark.parametrize(
    ("kind", "tamper", "match"), CASES, ids=[f"{k}-{m[:40]}" for k, _, m in CASES]
)
def test_tampered_summary_member_is_refused_by_name(kind, tamper, match):
    s = _summary(kind)
    s._check_state()
    tamper(s)
    with pytest.raises(ValueError, match=match):
        s._check_state()


def test_fd_fill_counter_is_at_most_the_count():
    X, _ = _data()
    s = cov.FrequentDirectionsCovariance(D, 4).update(X[:3])  # three columns, no shrink
    s._check_state()
    assert s.nfill_[0] == 3
    s.count_[0] = 2
    with pytest.raises(ValueError, match="nfill_ = 3 filled columns, more than the 2 examples"):
        s._check_state()


# -------------------------------------------------------- tampered learners
def _stat(c, name, index, value):
    def tamper(m):
        getattr(m.stats_[c], name)[index] = value

    return tamper


def _replace_summary(m):
    m.stats_[1] = cov.FullCovariance(D + 1)


LEARNER_CASES = [
    ({"covariance": "full"}, _stat(0, "count_", 0, 10**6), "stats_ count 1000\\d+ examples, more"),
    ({"covariance": "full"}, _replace_summary, r"stats_\[1\] is a FullCovariance of 13 features"),
    ({"covariance": "sparse"}, _replace_summary, r"stats_\[1\] is a FullCovariance"),
    (
        {"covariance": "fd"},
        lambda m: setattr(m.stats_[0], "centering", "exact"),
        r"stats_\[0\].centering = 'exact', but the parameters give 'g16'",
    ),
    (
        {"covariance": "randomized"},
        lambda m: setattr(m.stats_[1], "centering", "g16"),
        r"stats_\[1\].centering = 'g16', but the parameters give 'g13'",
    ),
    (
        {"covariance": "sparse"},
        lambda m: setattr(m.stats_[0], "prune_slack", 0.5),
        r"stats_\[0\].prune_slack = 0.5, but the parameters give 0.1",
    ),
    (
        {"covariance": "fd"},
        lambda m: setattr(m.stats_[0], "shrink", "ceil_0.9"),
        r"stats_\[0\].shrink = 'ceil_0.9'",
    ),
    (
        {"covariance": "hash"},
        lambda m: m.scale_.__setitem__(0, 1e12),
        "scale_ = 1000000000000.0 is outside",
    ),
    ({"covariance": "fd"}, lambda m: m.scale_.__setitem__(0, 0.0), "scale_ = 0.0 is outside"),
]


@pytest.mark.parametrize(
    ("params", "tamper", "match"), LEARNER_CASES, ids=[m[:40] for _, _, m in LEARNER_CASES]
)
def test_tampered_opauc_is_refused_by_name(params, tamper, match):
    X, y = _data()
    model = OPAUC(sketch_size=3, random_state=0, **params).fit(X, y)
    _check_all(model)
    tamper(model)
    with pytest.raises(ValueError, match=match):
        model._check_state()


ADAGRAD_CASES = [
    (AdaOAM, _set("n_updates_", 0, -1), r"n_updates_ = -1 steps, outside \[0, 120\]"),
    (AdaOAM, _set("n_updates_", 0, 121), r"n_updates_ = 121 steps"),
    (AdaOAM, _set("sq_grad_sum_", 3, -1.0), "sq_grad_sum_ holds a negative value"),
    (AdaOAM, _stat(1, "count_", 0, 10**6), "more than the 120 seen"),
    (AdaOAM, lambda m: m.stats_.__setitem__(0, cov.ExactSparseCovariance(D)), "not a FullCov"),
    (SAdaOAM, _set("last_", 0, -1), r"last_ holds a step outside \[0, n_updates_ = \d+\]"),
    (SAdaOAM, lambda m: m.last_.__setitem__(0, m.n_updates_[0] + 1), "last_ holds a step"),
    (SAdaOAM, _set("n_updates_", 0, 10**9), "n_updates_ = 1000000000 steps"),
    (SAdaOAM, _replace_summary, r"stats_\[1\] is a FullCovariance of 13 features, not an? Ex"),
]


@pytest.mark.parametrize(
    ("cls", "tamper", "match"), ADAGRAD_CASES, ids=[m[:40] for _, _, m in ADAGRAD_CASES]
)
def test_tampered_adagrad_learner_is_refused_by_name(cls, tamper, match):
    X, y = _data()
    model = cls().fit(X, y)
    _check_all(model)
    tamper(model)
    with pytest.raises(ValueError, match=match):
        model._check_state()


def test_a_loaded_file_with_a_looping_index_is_refused(tmp_path):
    """The SAdaOAM table whose probes would never end is refused when loaded."""
    X, y = _data()
    model = SAdaOAM().fit(X, y)
    _index_without_empty_slot(model.stats_[0])
    path = save_model(model, tmp_path / "m.npz")
    with pytest.raises(ValueError, match=r"state/stats_/0: index_ is not the hash index"):
        load_model(path)


# ------------------------------------------------------------- memory guard
@pytest.mark.parametrize("kind", ["full", "randomized", "hash", "fd", "sparse"])
def test_state_bytes_are_the_allocated_bytes(kind):
    """``summary_nbytes`` counts exactly the arrays a new summary allocates."""
    for d, tau in ((1, 2), (7, 3), (50, 4)):
        s = cov.make_covariance(kind, d, tau)
        arrays = [v for v in vars(s).values() if isinstance(v, np.ndarray)]
        assert summary_nbytes(kind, d, tau) == sum(a.nbytes for a in arrays)
    s = cov.ExactSparseCovariance(30)
    arrays = [v for v in vars(s).values() if isinstance(v, np.ndarray)]
    assert summary_nbytes("exact_sparse", 30) == sum(a.nbytes for a in arrays)


def _wide_csr(d: int = 10**6):
    rng = np.random.default_rng(0)
    X = sp.random(40, d, density=5e-5, format="csr", random_state=rng)
    y = np.where(np.arange(40) % 2 == 0, 1, -1)
    return X, y


def test_opauc_full_refuses_a_million_features_quickly_and_changes_nothing():
    X, y = _wide_csr()
    model = OPAUC()
    start = time.perf_counter()
    with pytest.raises(MemoryError) as info:
        model.fit(X, y)
    assert time.perf_counter() - start < 5.0
    message = str(info.value)
    assert format_bytes(OPAUC()._state_nbytes(10**6)) in message
    assert OPAUC()._state_nbytes(10**6) >= 2 * 8 * 10**12  # the two scatters
    for option in ('covariance="fd"', '"randomized"', '"hash"', '"sparse"'):
        assert option in message
    assert not hasattr(model, "w_") and not hasattr(model, "n_features_in_")
    # a fitted model keeps its state bit for bit
    Xs, ys = _data()
    fitted = OPAUC().fit(Xs, ys)
    before = (fitted.coef_.copy(), fitted.n_features_in_, fitted.n_samples_seen_)
    with pytest.raises(MemoryError, match="OPAUC needs"):
        fitted.fit(X, y)
    np.testing.assert_array_equal(fitted.coef_, before[0])
    assert (fitted.n_features_in_, fitted.n_samples_seen_) == before[1:]
    # the sketches fit (O(d tau)) and learn
    OPAUC(covariance="hash", sketch_size=5, random_state=0).fit(X, y)


def test_adaoam_refuses_a_million_features_and_names_sadaoam():
    X, y = _wide_csr()
    model = AdaOAM()
    with pytest.raises(MemoryError, match="AdaOAM needs") as info:
        model.fit(X, y)
    assert "SAdaOAM" in str(info.value) and 'covariance="fd"' in str(info.value)
    assert not hasattr(model, "w_")
    SAdaOAM().fit(X, y)  # O(d) to start with


def test_budget_counts_the_square_state():
    X, y = _data()
    need = OPAUC()._state_nbytes(D)
    assert need >= 2 * 8 * D * D
    with config_context(memory_budget=2 * need - 1):
        with pytest.raises(MemoryError, match="OPAUC needs"):
            OPAUC().fit(X, y)
    with config_context(memory_budget=2 * need):
        OPAUC().fit(X, y)
    assert math.isclose(AdaOAM()._state_nbytes(D) / need, 1.0, rel_tol=0.5)
