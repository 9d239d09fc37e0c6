"""aucstream.dask.ParallelPass: exact merged statistics, the closed form, inputs, failures.

The cluster tests share one module-scoped ``LocalCluster(n_workers=2, processes=True)``;
tests that use learners defined here (which worker processes cannot import) run on
dask's synchronous scheduler instead.
"""

from __future__ import annotations

import copy
import logging
import os
import signal
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from sklearn.datasets import dump_svmlight_file

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
pytest.importorskip("dask.dataframe")
import dask.array as da  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import pandas as pd  # noqa: E402
from conftest import make_stream, require_data  # noqa: E402

from aucstream import (  # noqa: E402
    LSSVMAUC,
    OPAUC,
    SOLAM,
    AdaOAM,
    Perceptron,
    SAdaOAM,
    load_model,
    save_model,
)
from aucstream import opauc as opauc_module  # noqa: E402
from aucstream._config import config_context  # noqa: E402
from aucstream.covariance import (  # noqa: E402
    FullCovariance,
    make_covariance,
    solve_from_statistics,
)
from aucstream.dask import (  # noqa: E402
    ParallelPass,
    _combine_statistics,
    _fitted,
    _Spec,
    _statistics_task,
    sketch_rng,
)
from aucstream.metrics import roc_auc  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture
def sync():
    with dask.config.set(scheduler="sync"):
        yield


def stream(n=600, d=5, seed=0, sparsity=0.3):
    X, y = make_stream(n, d, seed, sparsity)
    return X, y


def single_process_stats(X, y, kind="full"):
    """Exact summaries of the negative and positive rows, in one process."""
    d = X.shape[1]
    return [make_covariance(kind, d).update(X[y == label]) for label in (-1, 1)]


def assert_same_summary(a, b, tol=1e-10):
    assert a.count == b.count
    np.testing.assert_allclose(a.sum_, b.sum_, rtol=tol, atol=tol)
    np.testing.assert_allclose(a.scatter, b.scatter, rtol=tol, atol=tol)


# ----------------------------------------------------------- merged == single process
@given(cuts=st.lists(st.integers(0, 300), max_size=6), seed=st.integers(0, 3))
def test_merged_full_summaries_equal_single_process(cuts, seed):
    X, y = stream(300, 4, seed)
    bounds = sorted({0, 300, *cuts})
    spec = _Spec(4, 64)
    kind = {"kind": "full", "n_features": 4}
    partials = [
        _statistics_task(("arrays", X[a:b], y[a:b]), i, spec, kind, 0)
        for i, (a, b) in enumerate(zip(bounds, bounds[1:]))
    ]
    merged = _combine_statistics(*partials)
    assert merged.n_samples == 300
    for label, reference in zip((-1, 1), single_process_stats(X, y)):
        assert_same_summary(merged.stats[label], reference)


@pytest.mark.parametrize("kind", ["randomized", "hash"])
@pytest.mark.parametrize("bounds", [(0, 300), (0, 70, 71, 300), (0, 100, 200, 250, 300)])
def test_merged_linear_sketches_equal_one_sketch_with_the_same_draws(kind, bounds):
    """A sum of partition sketches is the sketch of the whole stream with their draws."""
    X, y = stream(300, 6, 1)
    tau = 4
    spec = _Spec(6, 32)
    options = {"kind": kind, "n_features": 6, "sketch_size": tau, "centering": "exact"}
    partials, draws = [], {-1: [], 1: []}
    for i, (a, b) in enumerate(zip(bounds, bounds[1:])):
        partials.append(_statistics_task(("arrays", X[a:b], y[a:b]), i, spec, options, 7))
        order = {}  # labels in order of first appearance in the partition
        for label in y[a:b]:
            order.setdefault(int(label), len(order))
        for label, position in order.items():
            n = int(np.sum(y[a:b] == label))
            rng = sketch_rng(7, i, position)
            draws[label].append(type(make_covariance(**options)).draw(rng, n, tau))
    merged = _combine_statistics(*partials)
    for label in (-1, 1):
        whole = make_covariance(**options).update(X[y == label], draws=np.vstack(draws[label]))
        got = merged.stats[label]
        assert got.count == whole.count
        np.testing.assert_allclose(got.sketch_, whole.sketch_, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(got.matvec(np.ones(6)), whole.matvec(np.ones(6)), atol=1e-10)


def test_solve_equals_lssvmauc():
    X, y = stream(500, 6, 2)
    neg, pos = single_process_stats(X, y)
    for lam in (2.0**-8, 1.0):
        w = solve_from_statistics(neg, pos, lam)
        np.testing.assert_allclose(w, LSSVMAUC(lam=lam).fit(X, y).w_, rtol=1e-8, atol=1e-10)


def test_solve_refuses_bad_summaries():
    X, y = stream(100, 3, 0)
    neg, pos = single_process_stats(X, y)
    with pytest.raises(ValueError, match="empty"):
        solve_from_statistics(FullCovariance(3), pos, 1.0)
    with pytest.raises(ValueError, match="features"):
        solve_from_statistics(neg, FullCovariance(4).update(np.ones((2, 4))), 1.0)
    with pytest.raises(ValueError, match="lam"):
        solve_from_statistics(neg, pos, -1.0)
    with pytest.raises(TypeError, match="one kind"):
        solve_from_statistics(make_covariance("fd", 3, 2).update(X), pos, 1.0)


# ------------------------------------------------------------------- statistics, local
@pytest.mark.parametrize("estimator", [OPAUC(lam=2**-6), LSSVMAUC(lam=2**-6)], ids=repr)
def test_statistics_equals_the_batch_optimum(sync, estimator):
    X, y = stream(900, 6, 3, sparsity=0.5)
    model = ParallelPass(estimator).fit(da.from_array(X, chunks=(200, 3)), y)
    reference = LSSVMAUC(lam=2**-6).fit(X, y)
    np.testing.assert_allclose(model.coef_[0], reference.w_, rtol=1e-8, atol=1e-12)
    assert type(model.estimator_) is type(estimator)
    assert model.n_partitions_ == 5 and model.n_samples_seen_ == 900
    assert model.n_features_in_ == 6
    assert model.classes_.tolist() == [-1, 1]
    assert model.score(X, y) == reference.score(X, y)
    np.testing.assert_array_equal(model.predict(X), model.estimator_.predict(X))


def test_statistics_does_not_depend_on_the_partitioning(sync):
    X, y = stream(1000, 5, 4)
    coefs = [
        ParallelPass(OPAUC(), split_every=every, chunk_size=size)
        .fit(da.from_array(X, chunks=(rows, 5)), y)
        .coef_[0]
        for rows, every, size in [(1000, 2, 10000), (97, 2, 13), (250, 3, 64), (333, 4, 1)]
    ]
    for coef in coefs[1:]:
        np.testing.assert_allclose(coef, coefs[0], rtol=1e-10, atol=1e-13)


def test_statistics_is_deterministic(sync):
    X, y = stream(800, 5, 5)
    Xd = da.from_array(X, chunks=(150, 5))
    a = ParallelPass(OPAUC()).fit(Xd, y).coef_
    b = ParallelPass(OPAUC()).fit(Xd, y).coef_
    assert np.array_equal(a, b)


def test_fitted_opauc_saves_loads_and_continues(sync, tmp_path):
    X, y = stream(800, 5, 6)
    # (the papers' OPAUC: the summaries hold no running column scale to continue from)
    model = ParallelPass(OPAUC(eta=2**-6, lam=2**-6, column_scale=None)).fit(
        da.from_array(X[:600], chunks=(150, 5)), y[:600]
    )
    est = model.estimator_
    # the summaries are the exact statistics of the data
    for summary, reference in zip(est.stats_, single_process_stats(X[:600], y[:600])):
        assert_same_summary(summary, reference)
    loaded = load_model(save_model(est, tmp_path / "model"))
    assert np.array_equal(loaded.decision_function(X), est.decision_function(X))
    assert loaded.n_samples_seen_ == 600
    # continuing the stream: the same as an OPAUC whose state was built by one pass
    reference = OPAUC(eta=2**-6, lam=2**-6, column_scale=None).fit(X[:600], y[:600])
    reference.w_[:] = est.w_
    loaded.partial_fit(X[600:], y[600:])
    reference.partial_fit(X[600:], y[600:])
    np.testing.assert_allclose(loaded.w_, reference.w_, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", ["randomized", "hash", "fd"])
def test_fitted_lowrank_opauc_continues_like_the_learner(kind):
    """``estimator_`` of a sketch kind rebuilds OPAUC's implicit weights from w."""
    X, y = stream(700, 6, 7)
    # column_scale=None: a learner rebuilt from statistics starts its running column
    # scale afresh, so only the paper's update continues exactly
    reference = OPAUC(
        eta=2**-6, covariance=kind, sketch_size=4, random_state=0, column_scale=None
    ).fit(X[:400], y[:400])
    rebuilt = _fitted(
        reference, reference.classes_, 6, copy.deepcopy(reference.stats_), reference.w_
    )
    rebuilt._rng = copy.deepcopy(reference._rng)
    rebuilt.n_samples_seen_ = reference.n_samples_seen_
    np.testing.assert_allclose(rebuilt.w_, reference.w_, rtol=1e-12, atol=1e-14)
    reference.partial_fit(X[400:], y[400:])
    rebuilt.partial_fit(X[400:], y[400:])
    np.testing.assert_allclose(rebuilt.w_, reference.w_, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize(
    "kind, centering",
    [("randomized", "exact"), ("hash", "exact"), ("hash", None), ("fd", None), ("sparse", None)],
)
def test_sketch_statistics_solve_the_merged_sketch(sync, kind, centering):
    X, y = stream(600, 5, 9)
    est = OPAUC(covariance=kind, sketch_size=4, centering=centering, lam=2**-4)
    model = ParallelPass(est, random_state=3).fit(da.from_array(X, chunks=(150, 5)), y)
    neg, pos = model.estimator_.stats_
    assert neg.count + pos.count == 600 == model.estimator_.n_samples_seen_
    expected = opauc_module.solve_from_statistics(neg, pos, 2**-4)
    np.testing.assert_allclose(model.coef_[0], expected, rtol=1e-8, atol=1e-12)
    # the fitted learner holds its weights in the implicit form, and continues
    est_ = model.estimator_
    est_.partial_fit(X[:50], y[:50])
    assert est_.n_samples_seen_ == 650


# ------------------------------------------------------------------------- other inputs
def test_dataframe_with_a_label_column_or_a_series(sync):
    X, y = stream(500, 4, 10)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(label=y)
    ddf = dd.from_pandas(frame, npartitions=4)
    by_name = ParallelPass(OPAUC()).fit(ddf, "label")
    by_series = ParallelPass(OPAUC()).fit(ddf[["a", "b", "c", "d"]], ddf["label"])
    by_array = ParallelPass(OPAUC()).fit(da.from_array(X, chunks=125), y)
    for model in (by_name, by_series):
        np.testing.assert_allclose(model.coef_, by_array.coef_, rtol=1e-10, atol=1e-13)
        assert model.feature_names_in_.tolist() == ["a", "b", "c", "d"]
        assert model.estimator_.feature_names_in_.tolist() == ["a", "b", "c", "d"]
    assert not hasattr(by_array, "feature_names_in_")
    with pytest.raises(ValueError, match="label column 'nope'"):
        ParallelPass(OPAUC()).fit(ddf, "nope")
    text = ddf.assign(e=ddf["a"].astype(str))
    with pytest.raises(ValueError, match="numeric.*'e'"):
        ParallelPass(OPAUC()).fit(text, "label")


def _write_shards(tmp_path, X, y, n_shards, fmt):
    paths = []
    for i, rows in enumerate(np.array_split(np.arange(X.shape[0]), n_shards)):
        if fmt == "libsvm":
            path = tmp_path / f"shard{i}.svm"
            dump_svmlight_file(sp.csr_matrix(X[rows]), y[rows], str(path), zero_based=False)
        else:
            path = tmp_path / f"shard{i}.csv"
            pd.DataFrame(X[rows]).assign(label=y[rows]).to_csv(path, index=False)
        paths.append(str(path))
    return paths


@pytest.mark.parametrize("fmt", ["libsvm", "csv"])
def test_files_read_by_the_workers(client, tmp_path, fmt):
    X, y = stream(800, 5, 11, sparsity=0.4)
    X[:, -1] = np.where(np.arange(800) < 700, 0.0, X[:, -1])  # the last column only late
    paths = _write_shards(tmp_path, X, y, 4, fmt)
    options = {"label_column": "label"} if fmt == "csv" else None
    model = ParallelPass(OPAUC(lam=2**-5)).fit(paths, read_options=options)
    reference = LSSVMAUC(lam=2**-5).fit(X, y)
    np.testing.assert_allclose(model.coef_[0], reference.w_, rtol=1e-8, atol=1e-12)
    assert model.n_features_in_ == 5 and model.n_partitions_ == 4
    given_width = ParallelPass(OPAUC(lam=2**-5)).fit(paths, n_features=5, read_options=options)
    np.testing.assert_allclose(given_width.coef_, model.coef_, rtol=1e-12)


# ------------------------------------------------------------------------ on a cluster
def generated(n_rows, d, chunk, seed=0):
    """A stream generated on the workers (never through the client)."""
    rng = da.random.default_rng(seed)
    X = rng.normal(size=(n_rows, d), chunks=(chunk, d))
    w = np.linspace(-1.0, 1.0, d)
    y = (X @ w + rng.normal(size=n_rows, chunks=chunk)) > 0
    return X, y


def test_statistics_on_a_cluster_equals_the_single_machine_closed_form(client):
    X, y = generated(6000, 8, 1000, seed=1)
    model = ParallelPass(OPAUC(lam=2**-6)).fit(X, y)
    Xl, yl = X.compute(), y.compute()
    neg = FullCovariance(8).update(Xl[~yl])
    pos = FullCovariance(8).update(Xl[yl])
    np.testing.assert_allclose(
        model.coef_[0], solve_from_statistics(neg, pos, 2**-6), rtol=1e-8, atol=1e-12
    )
    assert model.classes_.tolist() == [False, True]
    assert model.n_partitions_ == 6
    # each partition shipped two 8 x 8 scatters, two sums and two counts
    # per class: count_, weight_ (one each), sum_ (d), scatter_ (d x d), the held-back
    # rows pending_ (16 x d), pending_weight_ (16) and n_pending_ (1); d = 8
    assert model.partition_nbytes_.tolist() == [2 * 8 * (64 + 8 + 2 + 16 * 8 + 16 + 1)] * 6
    again = ParallelPass(OPAUC(lam=2**-6)).fit(X, y)
    assert np.array_equal(again.coef_, model.coef_)
    scores = model.decision_function(X)
    assert isinstance(scores, da.Array)
    np.testing.assert_array_equal(scores.compute(), model.estimator_.decision_function(Xl))
    assert model.score(X, y) == roc_auc(yl, model.estimator_.decision_function(Xl))


def test_a_lost_worker_gives_the_identical_result(client):
    """Kill a worker process during the fit: Dask recomputes its tasks, same model
    (eight partitions of 5,000 x 120: some hundred milliseconds each, the fit still
    running when the worker is killed)."""
    X, y = generated(40_000, 120, 5_000, seed=2)
    reference = ParallelPass(OPAUC()).fit(X, y)
    before = client.run(os.getpid)
    outcome = {}

    def fit():
        try:
            outcome["model"] = ParallelPass(OPAUC()).fit(X, y)
        except BaseException as error:  # pragma: no cover - reported below
            outcome["error"] = error

    thread = threading.Thread(target=fit)
    thread.start()
    deadline = time.monotonic() + 60
    while not any(client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.15)  # let the workers get going
    assert thread.is_alive(), "the fit ended before a worker could be killed"
    victim = sorted(before.values())[0]
    os.kill(victim, signal.SIGKILL)
    thread.join(180)
    assert "error" not in outcome, outcome.get("error")
    assert np.array_equal(outcome["model"].coef_, reference.coef_)
    client.wait_for_workers(2, timeout=60)
    assert victim not in client.run(os.getpid).values()


# ---------------------------------------------------------------------------- refusals
def test_refusals(sync):
    X, y = stream(300, 4, 12)
    Xd = da.from_array(X, chunks=100)
    with pytest.raises(TypeError, match="dask array"):
        ParallelPass(OPAUC()).fit(X, y)
    with pytest.raises(ValueError, match="y is required"):
        ParallelPass(OPAUC()).fit(Xd)
    with pytest.raises(ValueError, match="strategy='average'"):
        ParallelPass(SOLAM()).fit(Xd, y)
    with pytest.raises(ValueError, match="batch learner"):
        ParallelPass(LSSVMAUC(), strategy="average").fit(Xd, y)
    with pytest.raises(ValueError, match="rounds"):
        ParallelPass(OPAUC(), rounds=2).fit(Xd, y)
    with pytest.raises(ValueError, match="strategy"):
        ParallelPass(OPAUC(), strategy="magic").fit(Xd, y)
    with pytest.raises(ValueError, match="eta"):
        ParallelPass(OPAUC(eta=-1.0)).fit(Xd, y)
    with pytest.raises(ValueError, match="Only binary"):
        ParallelPass(OPAUC()).fit(Xd, np.arange(300) % 3)
    with pytest.raises(ValueError, match="two classes"):
        ParallelPass(OPAUC()).fit(Xd, np.ones(300))
    with pytest.raises(ValueError, match="not in classes"):
        ParallelPass(OPAUC()).fit(Xd, y, classes=[-1, 2])
    with pytest.raises(ValueError, match="files only"):
        ParallelPass(OPAUC()).fit(Xd, y, n_features=4)
    with pytest.raises(ValueError, match="files"):
        ParallelPass(OPAUC()).fit(["a.svm"], y)
    bad = X.copy()
    bad[250, 1] = np.nan
    with pytest.raises(ValueError, match="partition 2.*NaN"):
        ParallelPass(OPAUC()).fit(da.from_array(bad, chunks=100), y)
    huge = X.copy()
    huge[10, 0] = 1e300
    with pytest.raises(ValueError, match="partition 0.*row 10.*too large"):
        ParallelPass(OPAUC()).fit(da.from_array(huge, chunks=100), y)


class GuardedLSSVMAUC(LSSVMAUC):
    """LSSVMAUC that declares its d x d state to the memory guard (for this test)."""

    def _state_nbytes(self, n_features):
        return 2 * 8 * n_features * n_features


def test_the_memory_guard_runs_before_the_partitions(sync):
    X, y = stream(300, 40, 19)
    calls = []

    def spy(block):
        if block.shape == (100, 40):  # dask also calls it on tiny blocks, for the meta
            calls.append(block.shape)
        return block

    Xd = da.from_array(X, chunks=100).map_blocks(spy)
    with config_context(memory_budget=2 * 2 * 8 * 40 * 40 - 1):  # state + its copy
        with pytest.raises(MemoryError, match="GuardedLSSVMAUC needs"):
            ParallelPass(GuardedLSSVMAUC()).fit(Xd, y)
    assert calls == []
    with config_context(memory_budget=2 * 2 * 8 * 40 * 40):
        ParallelPass(GuardedLSSVMAUC()).fit(Xd, y)
    assert calls


def test_a_failed_fit_changes_nothing(sync):
    X, y = stream(300, 4, 13)
    model = ParallelPass(OPAUC()).fit(da.from_array(X, chunks=100), y)
    before = (model.coef_.copy(), model.n_samples_seen_, model.estimator_)
    bad = X.copy()
    bad[5, 0] = np.inf
    with pytest.raises(ValueError, match="infinity|NaN"):
        model.fit(da.from_array(bad, chunks=100), y)
    assert np.array_equal(model.coef_, before[0])
    assert model.n_samples_seen_ == before[1] and model.estimator_ is before[2]


# ----------------------------------------------------------------------------- average
class AveragingPerceptron(Perceptron):
    """A Perceptron whose merge averages the weights by examples seen (for these tests)."""

    def _merge(self, other):
        n, m = self.n_samples_seen_, other.n_samples_seen_
        self.w_[:] = (n * self.w_ + m * other.w_) / (n + m)


def _tree_merge(models, every):
    while len(models) > 1:
        level = []
        for i in range(0, len(models), every):
            group = [copy.deepcopy(m) for m in models[i : i + every]]
            for other in group[1:]:
                group[0].merge(other)
            level.append(group[0])
        models = level
    return models[0]


def test_average_is_the_tree_merge_of_the_partition_passes(sync):
    X, y = stream(1000, 5, 14)
    model = ParallelPass(AveragingPerceptron(), strategy="average", split_every=2, chunk_size=64)
    model.fit(da.from_array(X, chunks=(200, 5)), y)
    parts = [
        AveragingPerceptron().partial_fit(X[a : a + 200], y[a : a + 200], classes=[-1, 1])
        for a in range(0, 1000, 200)
    ]
    expected = _tree_merge(parts, 2)
    np.testing.assert_allclose(model.coef_, expected.coef_, rtol=1e-12, atol=1e-15)
    assert model.n_samples_seen_ == 1000 == model.estimator_.n_samples_seen_
    assert model.partition_nbytes_.shape == (5,)


def test_average_in_rounds_is_iterative_parameter_mixing(sync):
    X, y = stream(1200, 5, 15)
    model = ParallelPass(AveragingPerceptron(), strategy="average", rounds=3, split_every=4)
    model.fit(da.from_array(X, chunks=(400, 5)), y)
    mixed = None
    for r in range(3):
        copies = []
        for a in range(0, 1200, 400):
            start = AveragingPerceptron() if mixed is None else copy.deepcopy(mixed)
            rows = slice(a + r * 400 // 3, a + (r + 1) * 400 // 3)
            copies.append(start.partial_fit(X[rows], y[rows], classes=[-1, 1]))
        mixed = _tree_merge(copies, 4)
    np.testing.assert_allclose(model.coef_, mixed.coef_, rtol=1e-12, atol=1e-15)
    assert model.n_samples_seen_ == 1200 == model.estimator_.n_samples_seen_


def test_average_refuses_mixing_learners_with_counts(sync):
    X, y = stream(300, 4, 16)
    with pytest.raises(ValueError, match="rounds=1"):
        ParallelPass(SOLAM(), strategy="average", rounds=2).fit(da.from_array(X, chunks=100), y)


def test_average_finds_the_classes_and_tells_the_learners(sync):
    X, y = stream(600, 4, 17)
    y = np.where(y > 0, "yes", "no")
    y[:200] = "no"  # the first partition has one class only
    model = ParallelPass(AveragingPerceptron(), strategy="average").fit(
        da.from_array(X, chunks=200), y
    )
    assert model.classes_.tolist() == ["no", "yes"]
    assert set(model.predict(X)) <= {"no", "yes"}


@pytest.mark.parametrize(
    "estimator",
    [
        OPAUC(eta=2**-6, lam=2**-6),
        OPAUC(eta=2**-6, covariance="fd", sketch_size=3),
        OPAUC(eta=2**-6, covariance="randomized", sketch_size=3, centering="exact"),
        AdaOAM(eta=0.1, lam=2**-6),
        SAdaOAM(eta=0.1, theta=1e-3),
    ],
    ids=repr,
)
def test_average_merges_the_opauc_family(sync, estimator):
    """OPAUC, AdaOAM, SAdaOAM: summaries merge, weights average by examples learnt."""
    from sklearn.base import clone

    X, y = stream(800, 5, 18, sparsity=0.3)
    model = ParallelPass(estimator, strategy="average", split_every=2, random_state=4)
    model.fit(da.from_array(X, chunks=(200, 5)), y)
    seeds = np.random.SeedSequence(4).generate_state(4)
    parts = [
        clone(estimator)
        .set_params(random_state=int(seeds[i]))
        .partial_fit(X[a : a + 200], y[a : a + 200], classes=[-1, 1])
        for i, a in enumerate(range(0, 800, 200))
    ]
    expected = _tree_merge(parts, 2)
    np.testing.assert_allclose(model.coef_, expected.coef_, rtol=1e-12, atol=1e-15)
    assert model.n_samples_seen_ == 800 == model.estimator_.n_samples_seen_
    for got, want in zip(model.estimator_.stats_, expected.stats_):
        assert got.count == want.count
        np.testing.assert_allclose(got.scatter, want.scatter, rtol=1e-12, atol=1e-12)
    if estimator.get_params().get("covariance", "full") == "full":
        for got, reference in zip(model.estimator_.stats_, single_process_stats(X, y)):
            assert_same_summary(got, reference)


# ----------------------------------------------------------------- real data (slow)
def _load(name, width):
    from aucstream.datasets import load_file

    root = require_data(f"{name}.xz", f"{name}.t.xz")
    X, y = load_file(root / f"{name}.xz", n_features=width)
    Xt, yt = load_file(root / f"{name}.t.xz", n_features=width)
    return X, y, Xt, yt


@pytest.mark.slow
def test_a9a_statistics_from_shard_files_on_a_cluster(client, tmp_path):
    X, y, Xt, yt = _load("a9a", 123)
    paths = []
    for i, rows in enumerate(np.array_split(np.arange(X.shape[0]), 6)):
        paths.append(str(tmp_path / f"a9a-{i}.svm"))
        dump_svmlight_file(X[rows], y[rows], paths[-1], zero_based=False)
    lam = 2.0**-8
    model = ParallelPass(OPAUC(lam=lam)).fit(paths, n_features=123)
    assert model.n_partitions_ == 6 and model.n_samples_seen_ == X.shape[0]
    Xd = X.toarray()
    neg = FullCovariance(123).update(Xd[y < 0])
    pos = FullCovariance(123).update(Xd[y > 0])
    single = solve_from_statistics(neg, pos, lam)
    np.testing.assert_allclose(model.coef_[0], single, rtol=1e-8, atol=1e-8 * np.abs(single).max())
    np.testing.assert_allclose(
        model.coef_[0], LSSVMAUC(lam=lam).fit(X, y).w_, rtol=1e-7, atol=1e-8 * np.abs(single).max()
    )
    # tuned one-pass OPAUC: the best test AUC over a grid around fsauc_table2.md's choice
    one_pass = max(
        OPAUC(eta=eta, lam=lam_).fit(X, y).score(Xt, yt)
        for eta in (2.0**-10, 2.0**-8, 2.0**-6)
        for lam_ in (2.0**-10, 2.0**-8)
    )
    assert model.score(Xt, yt) >= one_pass - 0.002


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, width, estimator",
    [
        ("a9a", 123, OPAUC(eta=2**-8, lam=2**-10)),
        ("ijcnn1", 22, OPAUC(eta=2**-8, lam=2**-10)),
        # the paper's SOLAM (its columns as given: these are unit-scaled): averaging
        # partitions of the default (column_scale="max_abs") loses more than 0.005
        ("a9a", 123, SOLAM(column_scale=None)),
        ("ijcnn1", 22, SOLAM(column_scale=None)),
    ],
    ids=["a9a-OPAUC", "ijcnn1-OPAUC", "a9a-SOLAM", "ijcnn1-SOLAM"],
)
def test_average_of_four_partitions_is_close_to_one_pass(client, name, width, estimator):
    X, y, Xt, yt = _load(name, width)
    one_pass = clone_fit(estimator, X, y).score(Xt, yt)
    chunks = -(-X.shape[0] // 4)
    Xd = da.from_array(X.toarray(), chunks=(chunks, width))
    model = ParallelPass(estimator, strategy="average", random_state=0).fit(Xd, y)
    assert model.n_partitions_ == 4
    assert model.score(Xt, yt) >= one_pass - 0.005


def clone_fit(estimator, X, y):
    from sklearn.base import clone

    return clone(estimator).fit(X, y)


@pytest.mark.parametrize("kind", ["full", "fd"])
def test_statistics_with_float32_summaries(sync, kind):
    """OPAUC(dtype="float32"): the partitions' summaries are float32, and the solution
    is the float64 one up to their rounding."""
    X, y = stream(900, 6, 3, sparsity=0.5)
    Xd = da.from_array(X, chunks=(200, 3))
    params = {"lam": 2**-6, "covariance": kind, "sketch_size": 4}
    m32 = ParallelPass(OPAUC(dtype="float32", **params)).fit(Xd, y)
    m64 = ParallelPass(OPAUC(**params)).fit(Xd, y)
    assert all(s.dtype == np.float32 for s in m32.estimator_.stats_)
    np.testing.assert_allclose(m32.coef_[0], m64.coef_[0], rtol=1e-4, atol=1e-6)
