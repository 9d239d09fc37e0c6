"""prequential with a constant delay through a learner that takes example weights: the
scored rows and the released labels woven into one weighted call
(``aucstream.evaluation._prequential_weave``), against the brute-force loop and the
row-by-row path."""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
import pytest
import scipy.sparse as sp
from test_prequential import ALL, brute_force, check_columns, data, delays_of

from aucstream import SOLAM, OnePassSearch
from aucstream._discovery import all_estimators
from aucstream.datasets import iter_chunks
from aucstream.evaluation import _prequential as P
from aucstream.evaluation import _prequential_weave as W
from aucstream.evaluation import prequential


@pytest.fixture(autouse=True)
def every_piece_woven(monkeypatch):
    """Pieces of any size woven (by default one of fewer than WEAVE_FROM rows goes row
    by row, which costs less): the weave's results must not depend on it."""
    monkeypatch.setattr(W, "WEAVE_FROM", 1)


class _Run(NamedTuple):
    """What :func:`P.weaves` reads of a run."""

    owner: object
    search: object


#: The online learners that take example weights, of weight 0 inert, whose
#: calibration the run replays: woven (checked below). A search, or a pipeline over
#: one, records its decisions instead, and goes row by row under a delay.
WEIGHTED = sorted(
    name
    for name, cls in all_estimators()
    if not cls().is_batch and P.weaves(cls(), 3, _Run(P._calibration_owner(cls()), None))
)


def make(name):
    cls = dict(all_estimators())[name]
    params = {"random_state": 0} if "random_state" in cls().get_params() else {}
    return cls(**params)


def run(model, X, y, delay, chunk, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (FSAUC: no stream length given)
        return prequential(
            model, iter_chunks(X, y, chunk), delay=delay, metrics=ALL, every=40, **kwargs
        )


def woven_calls(model, monkeypatch) -> list:
    """The rows, and the rows of weight 1, of the weighted test_then_train calls
    ``model`` is given."""
    sizes = []
    call = model.test_then_train

    def counted(X, y, classes=None, sample_weight=None):
        if sample_weight is not None:
            sizes.append((X.shape[0], int(np.count_nonzero(sample_weight))))
        return call(X, y, classes, sample_weight)

    monkeypatch.setattr(model, "test_then_train", counted)
    return sizes


def test_the_weighted_learners_are_known():
    assert {"SOLAM", "OPAUC", "AdaOAM", "UnivariateOnline", "OAM"} <= set(WEIGHTED)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("delay,chunk", [(1, 1), (7, 33), (50, 20), (3, 250), (260, 64)])
@pytest.mark.parametrize("name", WEIGHTED)
def test_woven_runs_equal_the_brute_force_loop(name, delay, chunk, sparse, monkeypatch):
    """Every weighted learner, delays shorter and longer than a chunk: the curve is
    the brute-force loop's at every checkpoint, the model ends as its model, and the
    labels were learnt in woven calls (all but the first chunk's)."""
    X, y = data(200, seed=3)
    if sparse:
        X[np.abs(X) < 0.4] = 0.0
    Xs = sp.csr_matrix(X) if sparse else X
    ref_model = make(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = brute_force(ref_model, Xs, y, delays_of(delay, X, y), (0, 1))
    model = make(name)
    sizes = woven_calls(model, monkeypatch)
    curve = run(model, Xs, y, delay, chunk)
    check_columns(curve, ref, y, (0, 1))
    assert curve["n_learnt"].tolist() == [max(0, m - delay) for m in curve["n_seen"][:-1]] + [200]
    assert model.n_samples_seen_ == ref_model.n_samples_seen_ == 200
    np.testing.assert_allclose(model.coef_, ref_model.coef_, rtol=1e-9, atol=1e-12)
    # woven: every label released before the end (the end releases the last delay
    # ones in one call), each call its scored rows and the labels they release
    assert sum(learnt for _, learnt in sizes) == max(0, 200 - delay)
    assert all(0 < learnt <= rows - learnt for rows, learnt in sizes)
    assert bool(sizes) == (delay < 200)


@pytest.mark.parametrize("delay", [5, 120])
def test_woven_equals_row_by_row(delay, monkeypatch):
    """The same curve (to rounding of the kernel's scores) and the same model as the
    row-by-row path, for SOLAM, whose kernel writes its scores, and OPAUC, whose
    calibration is replayed with the weights."""
    X, y = data(600, seed=4)
    for name in ("SOLAM", "OPAUC"):
        woven = run(make(name), X, y, delay, 64)
        monkeypatch.setattr(P, "_WEAVE", False)
        plain = run(make(name), X, y, delay, 64)
        monkeypatch.setattr(P, "_WEAVE", True)
        columns = [c for c in woven if c not in ("cpu_seconds", "model_bytes")]
        np.testing.assert_allclose(woven[columns], plain[columns], rtol=1e-12, atol=1e-12)


class Refusing(SOLAM):
    """SOLAM that refuses a call of more than ``most`` weighted rows (as a learner
    refuses a chunk it diverges on), changing nothing."""

    def __init__(self, most=10**9, **kwargs):
        super().__init__(**kwargs)
        self.most = most

    def test_then_train(self, X, y, classes=None, sample_weight=None):
        if sample_weight is not None and X.shape[0] > self.most:
            raise FloatingPointError("too many rows at once")
        return super().test_then_train(X, y, classes, sample_weight)


def test_a_refused_woven_call_goes_row_by_row():
    """A woven call the learner refuses changes nothing and the chunk goes row by row
    (where a real refusal names its example); the run is the brute-force loop's."""
    X, y = data(300, seed=6)
    ref = brute_force(SOLAM(random_state=0), X, y, np.full(300, 9), (0, 1))
    model = Refusing(most=90, random_state=0)
    curve = run(model, X, y, 9, 50)  # pieces of 40 rows (every=40): 80 woven rows pass
    check_columns(curve, ref, y, (0, 1))
    refused = run(Refusing(most=70, random_state=0), X, y, 9, 50)  # every piece refused
    check_columns(refused, ref, y, (0, 1))
    assert refused["n_learnt"].iloc[-1] == 300


def test_chunks_of_two_kinds_are_not_woven_together():
    """Dense and CSR chunks in turn: a piece whose labels lie in a chunk of the other
    kind goes row by row; the run is still the brute-force loop's."""
    X, y = data(240, seed=7)
    ref = brute_force(SOLAM(random_state=0), X, y, np.full(240, 30), (0, 1))

    def stream():
        for k, (Xc, yc) in enumerate(iter_chunks(X, y, 40)):
            yield (sp.csr_matrix(Xc) if k % 2 else Xc), yc

    curve = prequential(SOLAM(random_state=0), stream(), delay=30, metrics=ALL, every=40)
    check_columns(curve, ref, y, (0, 1))


def test_callable_delays_and_dropped_labels_are_woven_from_the_heap(monkeypatch):
    """A delay per example and dropped labels: each piece takes the labels its rows
    release from the release heap, in order; the run is the brute-force loop's (every
    delay 0 to 15, a third of the labels dropped). A learner without weights goes row
    by row."""
    X, y = data(300, seed=8)
    delays = np.random.default_rng(1).integers(0, 16, size=300)
    keep = np.random.default_rng(3).random(300) < 2 / 3  # (the run's draws, seed 3)
    ref_model = SOLAM(random_state=0)
    ref = brute_force(ref_model, X, y, delays, (0, 1), keep=keep)
    model = make("SOLAM")
    sizes = woven_calls(model, monkeypatch)
    curve = prequential(
        model,
        iter_chunks(X, y, 50),
        delay=lambda i, x, label: int(delays[i]),
        label_probability=2 / 3,
        random_state=3,
        metrics=ALL,
        every=40,
    )
    check_columns(curve, ref, y, (0, 1))
    assert model.n_samples_seen_ == curve["n_learnt"].iloc[-1] == keep.sum()
    np.testing.assert_allclose(model.coef_, ref_model.coef_, rtol=1e-9, atol=1e-12)
    assert sum(learnt for _, learnt in sizes) > keep.sum() - 20  # (all but the end's)
    search = OnePassSearch()  # (weighted and inert, but no calibration to replay)
    assert search._tags.sample_weight and search._tags.zero_weight_inert
    assert P.weaves(search, 3, _Run(P._calibration_owner(search), None)) is False


@pytest.mark.parametrize("name", WEIGHTED)
def test_every_weighted_learner_woven_from_the_heap(name):
    """A delay per example (0 to 20) and dropped labels, through every weighted
    learner: the brute-force loop's curve and model."""
    X, y = data(200, seed=9)
    delays = np.random.default_rng(2).integers(0, 21, size=200)
    keep = np.random.default_rng(4).random(200) < 0.8
    ref_model = make(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = brute_force(ref_model, X, y, delays, (0, 1), keep=keep)
        model = make(name)
        curve = prequential(
            model,
            iter_chunks(X, y, 30),
            delay=lambda i, x, label: int(delays[i]),
            label_probability=0.8,
            random_state=4,
            metrics=ALL,
            every=40,
        )
    check_columns(curve, ref, y, (0, 1))
    assert model.n_samples_seen_ == ref_model.n_samples_seen_ == keep.sum()
    np.testing.assert_allclose(model.coef_, ref_model.coef_, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("delay", [4, 60, "callable"])
def test_a_pipeline_over_a_weighted_learner_is_woven(delay, sparse, monkeypatch):
    """StreamPipeline(OnlineStandardScaler(), learner): the scaler learns the rows of
    weight 1 and transforms every row (``partial_fit_transform(learnt=...)``), the
    learner scores and learns as bare; the brute-force loop's curve and model, the
    pipeline's, its learner's and its scaler's counts those of the examples learnt."""
    from aucstream import StreamPipeline, UnivariateOnline
    from aucstream.preprocessing import OnlineStandardScaler

    X, y = data(240, seed=10)
    if sparse:
        X[np.abs(X) < 0.5] = 0.0
    Xs = sp.csr_matrix(X) if sparse else X

    def pipeline(learner):
        return StreamPipeline(OnlineStandardScaler(with_mean=not sparse), learner)

    delays = np.random.default_rng(5).integers(0, 30, size=240)
    given = (lambda i, x, label: int(delays[i])) if delay == "callable" else delay
    for learner in (SOLAM(random_state=0), UnivariateOnline()):
        ref_model = pipeline(learner)
        per_example = delays if delay == "callable" else delays_of(given, X, y)
        ref = brute_force(ref_model, Xs, y, per_example, (0, 1))
        model = pipeline(learner)
        sizes = woven_calls(model, monkeypatch)
        curve = prequential(model, iter_chunks(Xs, y, 50), delay=given, metrics=ALL, every=40)
        check_columns(curve, ref, y, (0, 1))
        assert sizes and sum(learnt for _, learnt in sizes) > 150
        for part in (model, model.estimator_, model.transformer_):
            assert part.n_samples_seen_ == 240
        np.testing.assert_allclose(
            model.estimator_.coef_, ref_model.estimator_.coef_, rtol=1e-9, atol=1e-12
        )
        np.testing.assert_array_equal(
            model.transformer_.running_mean_, ref_model.transformer_.running_mean_
        )


def test_the_scaler_learns_only_the_rows_it_is_told():
    """``partial_fit_transform(X, learnt=mask)``: every row transformed as the scaler
    stood before it, only the masked rows learnt (bit for bit the row-by-row run);
    a mask of the wrong shape or type is refused, the scaler unchanged."""
    from aucstream.preprocessing import OnlineStandardScaler

    rng = np.random.default_rng(6)
    for sparse, half_life in [(False, None), (False, 40.0), (True, None), (True, 40.0)]:
        X = rng.normal(size=(200, 5))
        X[rng.random(X.shape) < 0.4] = 0.0
        Xs = sp.csr_matrix(X) if sparse else X
        mask = rng.random(200) < 0.5
        kw = {"half_life": half_life, "with_mean": not sparse}
        masked, by_row = OnlineStandardScaler(**kw), OnlineStandardScaler(**kw)
        masked.partial_fit_transform(Xs[:5])
        by_row.partial_fit_transform(Xs[:5])
        Z = masked.partial_fit_transform(Xs[5:], learnt=mask[5:])
        for r in range(5, 200):
            row = Xs[r : r + 1]
            z = by_row.partial_fit_transform(row) if mask[r] else by_row.transform(row)
            got = Z[r - 5 : r - 4]
            np.testing.assert_array_equal(
                z.toarray() if sparse else z, got.toarray() if sparse else got
            )
        assert masked.n_samples_seen_ == by_row.n_samples_seen_ == 5 + mask[5:].sum()
        for name in ("running_count_", "running_mean_", "running_m2_"):
            np.testing.assert_array_equal(getattr(masked, name), getattr(by_row, name))
        before = masked.running_mean_.copy()
        for bad in (mask[5:].astype(int), mask[6:], mask[5:][:, None]):
            with pytest.raises(ValueError, match="learnt must be a 1-D boolean array"):
                masked.partial_fit_transform(Xs[5:], learnt=bad)
        np.testing.assert_array_equal(masked.running_mean_, before)


@pytest.mark.parametrize("delay", [5, lambda i, x, label: 3], ids=["constant", "callable"])
def test_a_bad_row_in_a_woven_piece_is_refused_and_changes_nothing(delay):
    """A NaN in a chunk: the woven call is refused, the piece goes row by row, which
    refuses the row; the model is as it was before the run."""
    import pickle

    from aucstream import StreamPipeline
    from aucstream.preprocessing import OnlineStandardScaler

    X, y = data(400, seed=11)
    X[250, 2] = np.nan
    for model in (SOLAM(random_state=0), StreamPipeline(OnlineStandardScaler(), SOLAM())):
        model.partial_fit(X[:100], y[:100], classes=[0, 1])
        before = pickle.dumps(model)
        with pytest.raises(ValueError, match="NaN"):
            prequential(model, iter_chunks(X[100:], y[100:], 64), delay=delay)
        assert pickle.dumps(model) == before


def test_small_chunks_and_close_checkpoints_go_row_by_row(monkeypatch):
    """Chunks of fewer than WEAVE_FROM rows, or checkpoints closer than that, are not
    woven (a woven call's fixed cost is more than their rows'); a stream whose chunk
    sizes change weaves its large chunks only, and the run is the brute-force loop's."""
    monkeypatch.setattr(W, "WEAVE_FROM", 64)
    X, y = data(600, seed=12)
    ref = brute_force(SOLAM(random_state=0), X, y, np.full(600, 9), (0, 1))
    for chunks, every, woven in [(10, None, False), (200, 20, False), (200, 100, True)]:
        model = make("SOLAM")
        sizes = woven_calls(model, monkeypatch)
        prequential(model, iter_chunks(X, y, chunks), delay=9, every=every)
        assert bool(sizes) == woven, (chunks, every)

    def mixed():
        for k, (Xc, yc) in enumerate(iter_chunks(X, y, 100)):
            if k % 2:
                yield from iter_chunks(Xc, yc, 10)
            else:
                yield Xc, yc

    model = make("SOLAM")
    sizes = woven_calls(model, monkeypatch)
    curve = prequential(model, mixed(), delay=9, metrics=ALL, every=100)
    check_columns(curve, ref, y, (0, 1))
    assert len(sizes) == 3  # (the three large chunks)


@pytest.mark.parametrize("woven", [True, False], ids=["woven", "row by row"])
@pytest.mark.parametrize("broken", ["index", "indptr"])
def test_a_broken_sparse_chunk_under_a_delay_is_named_and_changes_nothing(
    broken, woven, monkeypatch
):
    """With a delay the chunk's rows are read by index (woven, or one at a time)
    before any learner checks them: a column index out of range or a decreasing
    indptr is refused naming the chunk, the model as it was (row by row, a broken
    indptr used to be learnt without an error)."""
    import pickle

    monkeypatch.setattr(P, "_WEAVE", woven)
    X, y = data(400, seed=13)
    X[np.abs(X) < 0.3] = 0.0
    parts = [(sp.csr_matrix(X[a : a + 100]), y[a : a + 100]) for a in range(0, 400, 100)]
    bad = parts[2][0]
    if broken == "index":
        bad.indices[5] = 99
    else:
        bad.indptr[10] = bad.indptr[11] + 5
    model = SOLAM(random_state=0).partial_fit(X[:10], y[:10], classes=[0, 1])
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="chunk 2 is a sparse matrix"):
        prequential(model, iter(parts), delay=5)
    assert pickle.dumps(model) == before


def test_a_callable_delay_gets_each_csr_row_as_x_i():
    """``delay(i, x, y)`` of a CSR chunk: ``x`` is ``X[i]``, a one-row CSR matrix."""
    X, y = data(120, seed=4)
    rows = sp.csr_matrix(X)
    seen = {}

    def delay(i, x, label):
        seen[i] = x
        return i % 5

    prequential(SOLAM(random_state=0), iter_chunks(rows, y, 50), delay=delay)
    assert sorted(seen) == list(range(120))
    for i, x in seen.items():
        assert type(x) is sp.csr_matrix and x.shape == (1, X.shape[1])
        np.testing.assert_array_equal(x.toarray(), rows[i].toarray())
