"""Small chunks learnt together (:mod:`aucstream.evaluation._prequential_merge`): the
curve and the model of one call per chunk, bit for bit, on each ``delay=0`` path; a
reader that fills the same arrays again; a refusal named as without groups, the model
unchanged; the groups bounded."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from aucstream import FTRLAUC, OPAUC, SOLAM, OnePassSearch, StreamPipeline, UnivariateOnline
from aucstream._check_model import _assert_same_model
from aucstream.checks import pickled_state
from aucstream.drift import AUCDriftDetector
from aucstream.evaluation import _prequential_merge as M
from aucstream.evaluation import prequential
from aucstream.evaluation._prequential_columns import _CumulativeAUC
from aucstream.streaming import Progress

MODELS = {
    "SOLAM": lambda: SOLAM(random_state=0),
    "OPAUC": lambda: OPAUC(random_state=0),
    "FTRLAUC": lambda: FTRLAUC(),
    "StreamPipeline": lambda: StreamPipeline(),
    "search": lambda: OnePassSearch(
        [OPAUC(random_state=0), SOLAM(random_state=0), UnivariateOnline(loss="log")],
        first_round=200,
        window=100,
        min_class=5,
    ),
}


def stream(n=1500, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] - X[:, 1] + rng.normal(size=n) > 0.8, 1, 0)
    return X, y


def pieces(X, y, sizes):
    """Chunks of the given sizes in turn (cycled) over the stream."""
    out, a, k = [], 0, 0
    while a < len(y):
        b = a + sizes[k % len(sizes)]
        out.append((X[a:b], y[a:b]))
        a, k = b, k + 1
    return out


def both(make, chunks, monkeypatch, **kw):
    """The curves and models with small chunks learnt together, and one call each."""
    out = []
    for enabled in (True, False):
        monkeypatch.setattr(M, "ENABLED", enabled)
        model = make()
        out.append((prequential(model, iter(chunks), **kw), model))
    return out


def assert_same(a, b, X):
    (curve_a, model_a), (curve_b, model_b) = a, b
    pd.testing.assert_frame_equal(
        curve_a.drop(columns="cpu_seconds"), curve_b.drop(columns="cpu_seconds")
    )
    if hasattr(model_a, "coef_"):
        _assert_same_model(model_a, model_b, X, "learnt together")
    np.testing.assert_array_equal(model_a.decision_function(X), model_b.decision_function(X))


class Calls:
    """The number of rows of each ``test_then_train`` call of ``model``'s class."""

    def __init__(self, kind, monkeypatch):
        self.rows: list[int] = []
        learn = kind.test_then_train

        def counted(model, X, y, **kw):
            self.rows.append(X.shape[0])
            return learn(model, X, y, **kw)

        monkeypatch.setattr(kind, "test_then_train", counted)


@pytest.mark.parametrize("sizes", [[1], [7, 1, 30], [250]])
@pytest.mark.parametrize("name", list(MODELS))
def test_the_curve_and_the_model_of_one_call_per_chunk(name, sizes, monkeypatch):
    X, y = stream(600 if sizes == [1] else 1500)  # (one call a row: a shorter stream)
    chunks = pieces(X, y, sizes)
    for every in (None, 400):
        a, b = both(MODELS[name], chunks, monkeypatch, every=every, window=300)
        assert_same(a, b, X)
    runs = []  # with a drift detector (a fresh one a run), fed each example's score
    for enabled in (True, False):
        monkeypatch.setattr(M, "ENABLED", enabled)
        model = MODELS[name]()
        watched = {"detector": AUCDriftDetector(), "metrics": ["auc", "alarms"]}
        runs.append((prequential(model, iter(chunks), every=500, **watched), model))
    assert_same(*runs, X)


@pytest.mark.parametrize("name", ["SOLAM", "FTRLAUC", "StreamPipeline"])
def test_csr_mixed_kinds_empty_and_large_chunks(name, monkeypatch):
    """CSR chunks among arrays (all CSR for the pipeline, whose scaler centers dense
    columns), float32 among float64, an empty chunk, a large one, integer labels
    turning into floats: each change of kind ends a group."""
    X, y = stream(1200)
    X[np.abs(X) < 0.7] = 0.0
    chunks = []
    for k, (Xc, yc) in enumerate(pieces(X, y, [20, 3, 40])):
        if k % 9 == 4:
            Xc = Xc.astype(np.float32)
        if k % 5 in (1, 2) or name == "StreamPipeline":
            Xc = sp.csr_matrix(Xc)
        if k == 6:
            chunks.append((X[:0], y[:0]))
        if k > 30:
            yc = yc.astype(float)
        chunks.append((Xc, yc))
    large = (
        (X[:1000], y[:1000]) if name != "StreamPipeline" else (sp.csr_matrix(X[:1000]), y[:1000])
    )
    chunks.insert(12, large)  # (a chunk too large to join a group)
    Xs = np.vstack([c[0].toarray() if sp.issparse(c[0]) else c[0] for c in chunks])
    ys = np.concatenate([c[1] for c in chunks]).astype(float)
    a, b = both(MODELS[name], chunks, monkeypatch, every=500)
    assert_same(a, b, Xs)
    assert len(a[0]) == int(np.ceil(len(ys) / 500))


def test_small_chunks_make_few_calls_within_the_bounds(monkeypatch):
    X, y = stream(5000, d=3)
    calls = Calls(SOLAM, monkeypatch)
    prequential(SOLAM(), iter(pieces(X, y, [10])))
    assert len(calls.rows) == 1 and calls.rows == [5000]  # (within GROUP_ROWS)
    monkeypatch.setattr(M, "GROUP_ROWS", 64)
    calls.rows.clear()
    prequential(SOLAM(), iter(pieces(X, y, [10])))
    assert set(calls.rows[:-1]) == {60} and sum(calls.rows) == 5000
    calls.rows.clear()  # a checkpoint every 25 rows: no group crosses one
    curve = prequential(SOLAM(), iter(pieces(X, y, [10])), every=25)
    ends = np.cumsum(calls.rows)
    crossing = (ends - calls.rows) // 25 != (ends - 1) // 25
    assert all(r == 10 for r, c in zip(calls.rows, crossing) if c)  # (learnt alone)
    assert max(calls.rows) == 20 and sum(calls.rows) == 5000
    assert curve["n_seen"].tolist() == list(range(25, 5001, 25))
    calls.rows.clear()  # wide dense rows: a chunk of more than CHUNK_BYTES goes alone
    wide = np.repeat(X, 400, axis=1)
    prequential(SOLAM(), iter(pieces(wide, y, [20])))
    assert set(calls.rows) == {20}


def test_a_reader_that_fills_the_same_arrays_again(monkeypatch):
    X, y = stream(900)
    rows, labels = np.empty((9, X.shape[1])), np.empty(9, dtype=y.dtype)
    data = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))

    def refilled():
        for a in range(0, len(y), 9):
            rows[:], labels[:] = X[a : a + 9], y[a : a + 9]
            yield rows, labels

    def refilled_csr():  # (the CSR arrays of each chunk written over the last one's)
        buffers = np.empty(10**4), np.empty(10**4, dtype=np.int32)
        for a in range(0, len(y), 9):
            part = data[a : a + 9]
            buffers[0][: part.nnz], buffers[1][: part.nnz] = part.data, part.indices
            held = sp.csr_matrix(
                (buffers[0][: part.nnz], buffers[1][: part.nnz], part.indptr), shape=part.shape
            )
            labels[:] = y[a : a + 9]
            yield held, labels

    for reader, matrix in ((refilled, X), (refilled_csr, data)):
        monkeypatch.setattr(M, "ENABLED", True)
        model = SOLAM()
        curve = prequential(model, reader())
        monkeypatch.setattr(M, "ENABLED", False)
        reference = SOLAM()
        expected = prequential(reference, iter(pieces(matrix, y, [9])))
        assert_same((curve, model), (expected, reference), X)


@pytest.mark.parametrize("bad", ["nan", "label", "csr index", "csr indptr"])
@pytest.mark.parametrize("name", ["SOLAM", "StreamPipeline"])
def test_a_refusal_names_its_chunk_and_example_and_changes_nothing(name, bad, monkeypatch):
    """A bad value, a bad label, a CSR chunk with a column index beyond its width or a
    decreasing indptr (scipy builds such a matrix from arrays without a check; its row
    slicing would drop the index): the error of one call per chunk, the model as it
    was."""
    X, y = stream(600)
    sparse = bad.startswith("csr")
    if bad == "nan":
        X[437, 2] = np.nan
    elif bad == "label":
        y = y.astype(float)
        y[437] = 7.0
    chunks = pieces(X[50:], y[50:], [7])
    if sparse:
        chunks = [(sp.csr_matrix(Xc), yc) for Xc, yc in chunks]
        broken = chunks[55][0]  # (rows 385-391 of the stream after the first 50)
        if bad == "csr index":
            broken.indices[3] = X.shape[1] + 4
        else:
            broken.indptr[2] = broken.indptr[4] + 1
    errors, states = [], []
    for enabled in (True, False):
        monkeypatch.setattr(M, "ENABLED", enabled)
        model = MODELS[name]()
        first = sp.csr_matrix(X[:50]) if sparse else X[:50]
        model.partial_fit(first, y[:50] if bad != "label" else y[:50].astype(int), classes=[0, 1])
        before = pickled_state(model)
        with pytest.raises(ValueError) as error:
            prequential(model, iter(chunks))
        errors.append((str(error.value), getattr(error.value, "__notes__", [])))
        states.append(pickled_state(model) == before)
    assert errors[0] == errors[1]
    assert states == [True, True]
    if not sparse:
        assert "387" in " ".join([errors[0][0], *errors[0][1]])  # (its place in the stream)


def test_the_progress_line_reads_the_auc_when_drawn(monkeypatch):
    """A progress line drawn at every chunk shows the AUC of the rows learnt so far; one
    drawn rarely (a log every hour) reads the AUC only for its last line, whose AUC is
    the curve's; the curve is the same with or without the line."""
    X, y = stream(2000)
    chunks = pieces(X, y, [100])
    reads = []
    get = _CumulativeAUC.get

    def counted(metric):
        reads.append(1)
        return get(metric)

    monkeypatch.setattr(_CumulativeAUC, "get", counted)
    plain = prequential(SOLAM(), iter(chunks))
    n_plain = len(reads)
    lines = {}
    for every in (0, 3600):
        out = io.StringIO()
        reads.clear()
        bar = Progress("evaluate", enabled=True, every=every, file=out)
        curve = prequential(SOLAM(), iter(chunks), progress=bar)
        pd.testing.assert_frame_equal(
            curve.drop(columns="cpu_seconds"), plain.drop(columns="cpu_seconds")
        )
        lines[every] = (out.getvalue().splitlines(), len(reads) - n_plain)
    final = f"prequential AUC {plain['auc'].iloc[-1]:.4f}"
    assert final in lines[3600][0][-1] and len(lines[3600][0]) == 1
    assert lines[3600][1] == 1  # (the AUC read once for the line: at the end)
    assert len(lines[0][0]) >= 2 and lines[0][1] >= 2 and final in lines[0][0][-1]
