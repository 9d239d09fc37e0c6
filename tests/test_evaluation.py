"""The evaluation harness: statistics, protocol splits, specs, cache, runner."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from sklearn.datasets import dump_svmlight_file

from aucstream.evaluation import (
    DataSpec,
    Job,
    LearnerSpec,
    RunCache,
    compare,
    compare_runs,
    deviations,
    execute_job,
    get_protocol,
    inner_splits,
    mean_std,
    outer_splits,
    paired_ttest,
    parse_data_spec,
    parse_learner_spec,
    win_tie_loss,
)
from aucstream.evaluation._protocol import Protocol, cap_indices, preprocess
from aucstream.evaluation._report import PaperTable, format_auc
from aucstream.evaluation._stats import BETTER, TIE, WORSE

# ------------------------------------------------------------------- statistics

A = [0.81, 0.83, 0.80, 0.84, 0.82]
B = [0.79, 0.80, 0.78, 0.83, 0.80]  # below A in every run
C = [0.80, 0.85, 0.79, 0.86, 0.81]  # differences change sign: not significant


@pytest.mark.parametrize("a, b", [(A, B), (A, C), (B, C), (C, A)])
def test_paired_ttest_equals_scipy(a, b):
    t, p = paired_ttest(a, b)
    ref = stats.ttest_rel(a, b)
    assert t == pytest.approx(ref.statistic)
    assert p == pytest.approx(ref.pvalue)


def test_outcomes_and_markers_follow_the_ttest_at_95_percent():
    runs = lambda v: dict(enumerate(v))  # noqa: E731
    assert stats.ttest_rel(A, B).pvalue < 0.05 < stats.ttest_rel(A, C).pvalue
    assert compare_runs(runs(A), runs(B)) == BETTER  # ●: reference significantly better
    assert compare_runs(runs(B), runs(A)) == WORSE  # ○
    assert compare_runs(runs(A), runs(C)) == TIE
    # zero-variance differences (identical, or a constant shift) count as ties
    assert compare_runs(runs(A), runs(A)) == TIE
    assert compare_runs(runs(A), runs(np.subtract(A, 0.01))) == TIE
    # only matched, finite runs are compared: here 2 pairs remain, still a valid test
    ref = {0: 0.9, 1: 0.8, 2: 0.7, 3: 0.95}
    other = {0: 0.5, 1: 0.41, 2: float("nan"), 4: 0.1}
    t, p = stats.ttest_rel([0.9, 0.8], [0.5, 0.41])
    assert compare_runs(ref, other) == (BETTER if p < 0.05 else TIE)
    assert compare_runs({0: 0.9}, {0: 0.1}) == TIE  # one pair: no test


def test_win_tie_loss_counts_from_the_reference_side():
    assert win_tie_loss([BETTER, BETTER, TIE, WORSE, BETTER]) == (3, 1, 1)
    assert win_tie_loss([]) == (0, 0, 0)


def test_mean_std_uses_ddof_1_and_drops_failed_runs():
    mean, std = mean_std([0.8, 0.9, float("nan")])
    assert mean == pytest.approx(0.85)
    assert std == pytest.approx(np.std([0.8, 0.9], ddof=1))
    assert mean_std([0.7]) == (0.7, 0.0)
    assert all(math.isnan(v) for v in mean_std([]))


def test_paper_table_parse_and_format():
    table = PaperTable.parse(
        "T",
        ["X", "Y"],
        """
        d1 | .8309 ± .0350 | .8215 ± .0309 ●
        d2 | .9 ± .01 | .95 ± .02 ○
        win/tie/loss | | 1/0/1
    """,
    )
    assert table.values["d1", "Y"] == (0.8215, 0.0309, "●")
    assert table.values["d2", "Y"][2] == "○"
    assert table.wtl == {"Y": (1, 0, 1)}
    assert format_auc(0.83094, 0.035) == ".8309 ± .0350"
    assert format_auc(float("nan")) == "n/a"


# ---------------------------------------------------------------------- protocol


def _labels(n=200, pos=0.3, seed=0):
    rng = np.random.default_rng(seed)
    return np.where(rng.random(n) < pos, 1, -1)


def test_outer_splits_are_stratified_partitions_and_repeatable():
    y = _labels()
    protocol = get_protocol("z11")  # 4 trials x 5 folds
    splits = outer_splits(y, protocol)
    assert [(s.trial, s.fold) for s in splits] == protocol.split_ids()
    assert len(splits) == 20
    rate = (y == 1).mean()
    for trial in range(4):
        tests = [s.test for s in splits if s.trial == trial]
        assert np.array_equal(np.sort(np.concatenate(tests)), np.arange(y.size))
        for s in splits[trial * 5 : (trial + 1) * 5]:
            assert np.intersect1d(s.train, s.test).size == 0
            assert abs((y[s.test] == 1).sum() - rate * s.test.size) <= 1  # stratified
    again = outer_splits(y, protocol)
    assert all(np.array_equal(a.test, b.test) for a, b in zip(splits, again))
    assert not np.array_equal(splits[0].test, splits[5].test)  # trials differ
    other_seed = outer_splits(y, protocol.replace(seed=1))
    assert not np.array_equal(splits[0].test, other_seed[0].test)


def test_holdout_split_is_4_1_1_and_shared_by_the_trials():
    y = _labels(600)
    splits = outer_splits(y, get_protocol("l18"))
    assert len(splits) == 5
    s = splits[0]
    assert (s.train.size, s.validation.size, s.test.size) == (400, 100, 100)
    assert np.intersect1d(s.train, s.validation).size == 0
    assert np.intersect1d(s.validation, s.test).size == 0
    assert all(np.array_equal(s.test, t.test) for t in splits)
    assert [(v.trial, v.fold) for v in splits] == [(t, 0) for t in range(5)]
    assert len(inner_splits(y, s, get_protocol("l18"))) == 1


def test_inner_splits_stay_in_the_training_part_and_respect_the_cap():
    y = _labels(500)
    protocol = get_protocol("g16").replace(inner_folds=3, tune_max_samples=120)
    split = outer_splits(y, protocol)[2]
    inner = inner_splits(y, split, protocol)
    assert len(inner) == 3
    used = np.concatenate([v for _, v in inner])
    assert used.size == 120 and np.isin(used, split.train).all()
    for train, val in inner:
        assert np.intersect1d(train, val).size == 0
    again = inner_splits(y, split, protocol)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(inner, again))
    over = protocol.replace(tune_overrides=(("big", 60),))
    assert sum(v.size for _, v in inner_splits(y, split, over, "big")) == 60


def test_cap_and_preprocessing_use_the_training_part_only():
    idx = np.arange(100, 200)
    capped = cap_indices(idx, 30, seed=0)
    assert capped.size == 30 and np.isin(capped, idx).all()
    assert np.array_equal(capped, cap_indices(idx, 30, seed=0))
    assert cap_indices(idx, None, 0) is idx
    X = np.array([[0.0, 5.0], [2.0, 5.0], [4.0, 5.0], [8.0, -1.0]])
    Xp = preprocess("minmax", X, np.array([0, 1, 2]))
    np.testing.assert_allclose(Xp[:3, 0], [-1, 0, 1])
    assert Xp[3, 0] == 1.0  # test row clipped to the training range
    Xs = preprocess("minmax", sp.csr_matrix(X), np.array([0, 1, 2]))
    assert sp.issparse(Xs) and np.abs(Xs.toarray()).max() <= 1.0
    Xn = preprocess("l2", X, np.array([0]))
    np.testing.assert_allclose(np.linalg.norm(Xn, axis=1), 1.0)


def test_modes_state_their_deviations():
    paper = get_protocol("g16")
    assert deviations(paper) == []
    fast = get_protocol("g16", "fast")
    text = " ".join(deviations(fast))
    assert "1 trial(s) x 5 folds" in text and "first outer split" in text
    assert "Coarse grid" in text and "3-fold inner" in text
    quick = get_protocol("g16", "quick")
    assert "subsampled" in " ".join(deviations(quick))
    assert "quick mode" in quick.describe()
    with pytest.raises(ValueError, match="unknown protocol"):
        get_protocol("x99")


# ------------------------------------------------------------------------ specs


def test_learner_specs_parse_and_use_the_class_grid():
    spec = parse_learner_spec("OAM_gra=OAM(update='gra', buffer_size=None)")
    assert (spec.title, spec.estimator, spec.fixed) == (
        "OAM_gra",
        "OAM",
        {"update": "gra", "buffer_size": None},
    )
    assert parse_learner_spec("OPAUC").title == "OPAUC"
    assert parse_learner_spec("OPAUC(eta=0.5)").fixed == {"eta": 0.5}
    fixed = LearnerSpec.make("x", "OPAUC", lam=0.1)
    grid = fixed.search_grid(get_protocol("g16"))
    assert "lam" not in grid and len(grid["eta"]) == len(fixed.cls.param_grid["eta"])
    assert len(fixed.search_grid(get_protocol("g16", "quick"))["eta"]) <= 3
    assert fixed.build({"eta": 0.25}).get_params()["eta"] == 0.25
    with pytest.raises(ValueError):
        parse_learner_spec("OPAUC(eta=f(1))")


def test_data_specs_parse():
    assert parse_data_spec("german") == DataSpec("german")
    spec = parse_data_spec("letter:one_vs_rest=8:train")
    assert (spec.binary, spec.part) == (("one_vs_rest", 8), "train")
    assert parse_data_spec("x.svm:positive=1,2").binary == ("positive", (1, 2))
    with pytest.raises(ValueError, match="bad dataset option"):
        parse_data_spec("german:halves")


def test_job_keys_and_cache_round_trip(tmp_path):
    protocol = get_protocol("g16", "quick")
    job = Job(LearnerSpec("OPAUC"), DataSpec("german"), protocol, 0, 1, (("eta", 0.5),))
    same = Job(
        LearnerSpec("OPAUC", label="other label"),
        DataSpec("german"),
        protocol,
        0,
        1,
        (("eta", 0.5),),
    )
    assert job.key() == same.key()  # the label is not part of the configuration
    for changed in (
        Job(job.learner, job.data, protocol, 0, 2, job.params),
        Job(job.learner, job.data, protocol, 0, 1, (("eta", 0.25),)),
        Job(job.learner, job.data, protocol, 0, 1, job.params, inner=0),
        Job(job.learner, job.data, protocol.replace(seed=3), 0, 1, job.params),
    ):
        assert changed.key() != job.key()
    cache = RunCache(tmp_path)
    cache.put(job.key(), {"auc": float("nan"), "status": "diverged"})
    assert job.key() in cache and len(cache) == 1
    assert math.isnan(cache.get(job.key())["auc"])
    assert cache.get("0" * 64) is None


def test_execute_job_reports_divergence_instead_of_raising():
    protocol = get_protocol("g16", "quick")
    job = Job(LearnerSpec("OPAUC"), DataSpec("german"), protocol, 0, 0, (("eta", 2.0**10),))
    record = execute_job(job)
    assert record["status"] == "diverged" and math.isnan(record["auc"])
    ok = execute_job(
        Job(LearnerSpec("OPAUC"), DataSpec("german"), protocol, 0, 0, (("eta", 2.0**-6),))
    )
    assert ok["status"] == "ok" and 0.5 < ok["auc"] <= 1
    assert ok["n_train"] + ok["n_test"] == 300 and ok["train_seconds"] >= 0


def test_compare_on_a_libsvm_file_with_a_binary_rule(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(240, 4))
    y = np.digitize(X[:, 0] + 0.3 * rng.normal(size=240), [-0.5, 0.5])  # classes 0, 1, 2
    path = tmp_path / "three.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    protocol = Protocol(
        "custom",
        n_trials=1,
        n_folds=3,
        inner_folds=2,
        grid="coarse",
        coarse_values=2,
        mode="custom",
    )
    result = compare(
        ["OPAUC", "Uni=UnivariateOnline(loss='log')"],
        [f"{path}:positive=2"],
        protocol,
        n_jobs=1,
        cache_dir=tmp_path / "c",
    )
    meta = result.datasets[0]
    assert (meta.n_samples, meta.n_features, meta.n_positive) == (240, 4, (y == 2).sum())
    rows = result.summary()
    assert [r["learner"] for r in rows] == ["OPAUC", "Uni"]
    assert all(r["n_runs"] == 3 and 0.8 < r["mean"] <= 1 for r in rows)
    with pytest.raises(ValueError, match="3 classes"):
        compare(["OPAUC"], [str(path)], protocol, n_jobs=1)


def test_parallel_runs_equal_sequential_runs(tmp_path):
    protocol = get_protocol("g16", "quick").replace(coarse_values=2)
    args = (["OPAUC"], ["fourclass"], protocol)
    one = compare(*args, n_jobs=1)
    two = compare(*args, n_jobs=2, cache_dir=tmp_path)
    assert [r["auc"] for r in one.runs] == [r["auc"] for r in two.runs]
    assert two.stats.computed == two.stats.total > 0
