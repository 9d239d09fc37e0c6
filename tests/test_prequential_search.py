"""prequential at delay 0 feeds OnePassSearch (and a StreamPipeline over one) whole
chunks, the search recording its decision before each row while it learns
(:mod:`aucstream._search_scores`): the same columns as the row-by-row path (kept
behind ``_prequential._RECORD_SEARCH``), on a stream with a stationary part and an
abrupt change (drift reopenings), with ensembles, for chunks of 1, 250 and 1000."""

from __future__ import annotations

import numpy as np
import pytest
from test_prequential import ALL, Flagger, brute_force, check_columns

from aucstream import OPAUC, SOLAM, OnePassSearch, StreamPipeline, UnivariateOnline
from aucstream import _search_scores as S
from aucstream import search as search_module
from aucstream._check_model import _assert_same_model
from aucstream.datasets import iter_chunks
from aucstream.evaluation import _prequential as P
from aucstream.evaluation import _prequential_merge, prequential
from aucstream.metrics import RollingAUC


@pytest.fixture(autouse=True)
def _each_chunk_its_call(monkeypatch):
    """The recording's pieces, refusals and bisections are those of the chunks given:
    small chunks not learnt together (``tests/test_prequential_merge.py`` checks that
    learning them together gives the same curves and models)."""
    monkeypatch.setattr(_prequential_merge, "ENABLED", False)


def stream(n=2400, d=4, seed=0, change=True):
    """A stationary stream whose concept flips at the middle (when ``change``)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    s = X @ np.array([1.0, -0.5, 0.3, 0.0][:d])
    if change:
        s[n // 2 :] = -s[n // 2 :]
    y = (s + 0.5 * rng.normal(size=n) > 0.3).astype(int)
    return X, y


def small_search(**kw):
    candidates = [
        OPAUC(eta=2.0**-6, random_state=0),
        OPAUC(eta=2.0**-9, random_state=0),
        SOLAM(random_state=0),
        UnivariateOnline(loss="log", eta=2.0**-6),
    ]
    return OnePassSearch(candidates, first_round=200, window=400, min_class=5, **kw)


MODELS = {
    "search": small_search,
    "pipeline": lambda: StreamPipeline(estimator=small_search()),
    "search-ensemble-1": lambda: small_search(ensemble=1, drift=None),
}


class Taken:
    """Whether each chunk went through the recording (``search_chunk`` gave values)."""

    def __init__(self, monkeypatch):
        self.calls: list[bool] = []
        self.sizes: list[int] = []  # (the rows of each call)
        method = P._Evaluation.search_chunk

        def spy(run, X, y):
            written = method(run, X, y)
            if P._RECORD_SEARCH:  # (the recording's run, not the row-by-row one)
                self.calls.append(written is not None)
                self.sizes.append(y.shape[0])
            return written

        monkeypatch.setattr(P._Evaluation, "search_chunk", spy)


def both(make, X, y, chunk, monkeypatch, **kw):
    """The curves of the recording and of the row-by-row path, and the models."""
    out = []
    for record in (True, False):
        monkeypatch.setattr(P, "_RECORD_SEARCH", record)
        model = make()
        curve = prequential(model, iter_chunks(X, y, chunk), **kw)
        out.append((curve, model))
    return out


def assert_same(a, b):
    cols = [c for c in a.columns if c not in ("cpu_seconds", "model_bytes")]
    assert list(a.columns) == list(b.columns)
    np.testing.assert_allclose(
        a[cols].to_numpy(float), b[cols].to_numpy(float), rtol=0, atol=1e-12, equal_nan=True
    )


@pytest.mark.parametrize("chunk", [1, 250, 1000])
@pytest.mark.parametrize("name", list(MODELS))
def test_recorded_decisions_equal_the_row_by_row_path(name, chunk, monkeypatch):
    X, y = stream(1200)
    taken = Taken(monkeypatch)
    (fast, model), (slow, _) = both(
        MODELS[name], X, y, chunk, monkeypatch, window=300, every=400, metrics=ALL
    )
    assert_same(fast, slow)
    assert taken.calls and all(taken.calls)  # every chunk recorded, none row by row
    search = getattr(model, "estimator_", model)
    if search.drift is not None:
        assert search.race_[1] >= 1  # the change reopened the race


def test_partial_aucs_probability_ranks_and_a_detector(monkeypatch):
    """The options that read the same decisions and probabilities: the partial AUCs,
    ranking by probability, a detector fed the decision scores."""
    X, y = stream(1200, seed=4)
    (a, _), (b, _) = both(
        MODELS["pipeline"],
        X,
        y,
        250,
        monkeypatch,
        window=300,
        every=300,
        max_fpr=0.3,
        rank="proba",
        detector=Flagger(),
    )
    assert {"partial_auc", "window_partial_auc", "alarms"} <= set(a.columns)
    assert a["alarms"].iloc[-1] > 0
    assert_same(a, b)


@pytest.mark.slow
def test_the_default_pipeline_on_a_changing_stream(monkeypatch):  # (the row path: most)
    """The defaults (17 candidates, a window of 20,000, blocks of 4,096, rounds from
    2,000, drift="auto") on unscaled columns whose concept flips at the middle."""
    rng = np.random.default_rng(5)
    n, d = 4000, 10
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 10, size=d)
    s = X @ rng.normal(size=d)
    s[n // 2 :] = -s[n // 2 :]
    y = (s + s.std() * rng.normal(size=n) > 0.3 * s.std()).astype(int)
    taken = Taken(monkeypatch)
    (a, model), (b, _) = both(
        StreamPipeline, X, y, 1000, monkeypatch, window=2000, every=1000, metrics=ALL
    )
    assert_same(a, b)
    assert model.estimator_.progress_[3] >= 2  # rounds held
    assert len(taken.calls) == 4 and all(taken.calls)


def test_the_search_records_what_decision_function_gave():
    """The recorded values against decision_function and predict_proba called before
    each row of a copy learnt one row at a time (ensembles form and dissolve)."""
    X, y = stream(1500, seed=3)
    loop, chunked = small_search(), small_search()
    expected = np.empty((2, y.size))
    ensembles = 0
    for i in range(y.size):
        if i:
            expected[:, i] = (
                loop.decision_function(X[i : i + 1])[0],
                loop.predict_proba(X[i : i + 1])[0, 1],
            )
            ensembles += len(loop._choice()[1]) > 1
        loop.partial_fit(X[i : i + 1], y[i : i + 1], classes=[0, 1])
    written = np.empty((2, y.size))
    for lo in range(0, y.size, 300):
        part = written[:, lo : lo + 300]
        with S.recording(part) as request:
            chunked.test_then_train(X[lo : lo + 300], y[lo : lo + 300], classes=[0, 1])
        assert request.filled == part.shape[1] and request.search is chunked
    np.testing.assert_allclose(written[:, 1:], expected[:, 1:], rtol=0, atol=1e-12)
    assert ensembles > 100 and chunked.race_[1] >= 1


def test_delay_and_partial_auc_race_go_row_by_row(monkeypatch):
    X, y = stream(800)
    taken = Taken(monkeypatch)
    (a, _), (b, _) = both(small_search, X, y, 250, monkeypatch, delay=3, every=400)
    assert_same(a, b)
    assert not taken.calls  # delay > 0: the release schedule, untouched
    (a, _), (b, _) = both(lambda: small_search(max_fpr=0.2), X, y, 250, monkeypatch, every=400)
    assert_same(a, b)
    assert taken.calls and not any(taken.calls)  # not recordable: row by row


@pytest.mark.parametrize(
    "who, found", [("other", True), ("leader", True), ("other", False), ("leader", False)]
)
@pytest.mark.parametrize("name", ["search", "pipeline"])
def test_a_candidate_that_diverges_inside_a_chunk(name, who, found, monkeypatch):
    """A candidate failing inside a piece leaves the race at its row row by row.

    Another than the round leader (``who`` "other"): the piece is recorded as it is,
    the candidate alive up to that row (found on copies of it, ``failing_row``), where
    it has learnt the rows before it again; no chunk is refused. The round leader (its
    successor is chosen at that row), or a candidate too large to copy (``found``
    False): the recording refuses the piece, the search's transaction undoes the call;
    the rows before the failing one are recorded in one call, the row goes alone (the
    row-by-row path), the rest in one call; with no row named, the chunk is split in
    halves until the failing row goes alone. The curve and the whole model are the
    row-by-row path's."""
    if not found:
        monkeypatch.setattr(S, "_COPY_AT_MOST", -1)
    learn = S.learn_candidate
    kind = SOLAM if who == "other" else OPAUC  # (the round leader: the first, an OPAUC)

    def failing(candidate, X, y, weights, journal=None):
        seen = candidate.__dict__.get("n_samples_seen_", 0)
        if type(candidate) is kind and seen + X.shape[0] > 120:  # at its row 120
            raise FloatingPointError("diverged")
        return learn(candidate, X, y, weights, journal)

    monkeypatch.setattr(S, "learn_candidate", failing)
    X, y = stream(1500, change=False)
    taken = Taken(monkeypatch)
    (a, model), (b, reference) = both(MODELS[name], X, y, 50, monkeypatch, window=300, every=250)
    assert_same(a, b)
    _assert_same_model(reference, model, X, "recorded")
    status = getattr(model, "estimator_", model).status_
    assert status[2 if who == "other" else 0] == search_module.DIVERGED
    refused = [n for ok, n in zip(taken.calls, taken.sizes) if not ok]
    calls = len(taken.calls)
    # columns without the probabilities, one checkpoint: the row alone's part holds
    # none, the recorded parts do (they were joined into one column and failed)
    (c, _), (d, _) = both(MODELS[name], X, y, 50, monkeypatch, metrics=["auc"])
    assert_same(c, d)
    del taken.calls[calls:], taken.sizes[calls:]
    recorded = sum(n for ok, n in zip(taken.calls, taken.sizes) if ok)
    if who == "other" and found:  # every chunk recorded as it came
        assert refused == [] and recorded == 1500 and len(taken.calls) == 30
        return
    assert recorded == 1500 - 1  # every row but the failing one
    if found:  # the chunk, then its row 20 (the 120th) alone; 0-19 and 21-49 recorded
        assert refused == [50, 1]
        assert taken.calls.count(True) == 29 + 2
        return
    # bisection of the failing chunk: pieces of at most half the last refused one,
    # down to the failing row alone
    assert refused[0] == 50 and refused[-1] == 1 and len(refused) <= 7
    assert all(m <= n // 2 + 1 for n, m in zip(refused, refused[1:]))
    # the other 29 chunks, at most 6 pieces before the failing row, the rest in one
    assert taken.calls.count(True) <= 29 + 6 + 1


@pytest.mark.parametrize("chunk", [250, 1000])
def test_candidates_that_really_diverge(chunk, monkeypatch):
    """Two candidates whose steps are too long diverge in their kernels (not a
    monkeypatched failure): the rows' scores and the rolled-back calls on the copy
    that finds the failing row (``failing_row``) are the real ones. The curve and the
    whole model are the row-by-row path's, and no chunk is refused."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 30))
    y = (X[:, 0] - X[:, 1] + rng.normal(size=1500) > 0.5).astype(int)

    def make():
        candidates = [
            OPAUC(eta=2.0**-6, random_state=0),
            UnivariateOnline(loss="squ", eta=1.0),  # (diverges at row 197)
            SOLAM(random_state=0),
            OPAUC(eta=4.0, random_state=0),  # (at row 478)
        ]
        return OnePassSearch(candidates, first_round=200, window=400, min_class=5, halving=False)

    taken = Taken(monkeypatch)
    (a, model), (b, reference) = both(make, X, y, chunk, monkeypatch, every=250, metrics=ALL)
    assert_same(a, b)
    _assert_same_model(reference, model, X, "recorded")
    assert list(model.status_[[1, 3]]) == [search_module.DIVERGED] * 2
    assert list(model.dropped_at_[[1, 3]]) == [197, 478]
    assert taken.calls and all(taken.calls)


@pytest.mark.parametrize("window", [5, 40, 1000])
def test_window_pairs_equal_the_peek(window):
    """Each prefix's counts against RollingAUC._peek (ties, rows leaving the window
    from its ring and from the rows added)."""
    rng = np.random.default_rng(window)
    metric = RollingAUC(window, pos_label=1)
    metric.update(rng.integers(0, 2, 30), rng.integers(0, 6, 30).astype(float))
    labels = rng.integers(0, 2, 60).astype(np.int8)
    scores = rng.integers(0, 6, 60).astype(float)
    first, k = 7, 60 - 7
    for count in (S.window_pairs, S.peek_pairs):
        counts = np.empty((3, k), dtype=np.int64)
        extra = (S._NO_SLIDE, S._NO_RUNS, False) if count is S.window_pairs else ()
        count(*S._window_of(metric), (1 - labels).astype(np.int8), scores, first, counts, *extra)
        got = S._auc(counts)
        for r in range(k):
            want = metric._peek(labels[: first + r], scores[: first + r])
            assert got[r] == want or (np.isnan(got[r]) and np.isnan(want))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("window", [5, 40, 300])
def test_a_slide_goes_on_from_the_piece_before(window, seed):
    """Pieces of random lengths, each going on from the state the one before left
    (the rows that entered and left, the count): the counts of one slide over all the
    rows from the window as it is, whenever no buffered row leaves; after one does,
    the slide starts over (nothing kept)."""
    rng = np.random.default_rng(seed)
    metric = RollingAUC(window, pos_label=1)
    n0 = int(rng.integers(0, 2 * window))
    metric.update(rng.integers(0, 2, n0), rng.integers(0, 8, n0).astype(float))
    total = 2 * window + 20
    numbers = rng.integers(0, 2, total).astype(np.int8)
    scores = rng.integers(0, 8, total).astype(float)
    arrays = S._window_of(metric)
    whole = np.empty((3, total + 1), dtype=np.int64)
    S.window_pairs(*arrays, numbers, scores, 0, whole, S._NO_SLIDE, S._NO_RUNS, False)
    state, kept, first, resumed = S._NO_SLIDE, S._NO_RUNS, 0, 0
    while first < total:
        k = int(min(total - first, rng.integers(1, max(2, window // 3))))
        out = np.empty((3, k + 1), dtype=np.int64)
        keep = first + k <= window
        if not keep:  # (a buffered row leaves: from the window as it is)
            state, kept = S._NO_SLIDE, S._NO_RUNS
        state, kept = S.window_pairs(
            *arrays, numbers[: first + k], scores[: first + k], first, out, state, kept, keep
        )
        resumed += bool(first) and keep
        np.testing.assert_array_equal(out, whole[:, first : first + k + 1])
        first += k
    assert resumed or window == 5
    with pytest.raises(ValueError, match="no buffered row leaves"):  # (misused: refused)
        S.window_pairs(*arrays, numbers, scores, 1, whole[:, 1:], state, kept, False)


def test_slides_that_go_on_with_rows_leaving_the_window(monkeypatch):
    """Through a search: windows of 100 rows that are full (blocks of 160, so flushes
    come often), chunks of 30 (so that a block's later pieces go on from its earlier
    ones while ring rows leave): every slide that went on gives the counts of one
    from the window as it is, over the same rows; the curve and model are the
    row-by-row path's; some slides went on with ring rows gone before."""
    monkeypatch.setattr(OnePassSearch, "_BLOCK", 160)
    went_on = []
    count = S.window_pairs

    def spy(*args):
        state, kept, out = args[8], args[9], args[7]
        got = count(*args)
        if state[0]:  # (the same rows, from the window as it is)
            again = np.empty_like(out)
            count(*args[:7], again, S._NO_SLIDE, S._NO_RUNS, False)
            np.testing.assert_array_equal(out, again)
            went_on.append(len(kept[2]) + len(kept[3]) > 0)
        return got

    monkeypatch.setattr(S, "window_pairs", spy)
    X, y = stream(1500)

    def make():
        candidates = [OPAUC(eta=2.0**-6, random_state=0), SOLAM(random_state=0)]
        candidates.append(UnivariateOnline(loss="log", eta=2.0**-6))
        return OnePassSearch(candidates, first_round=200, window=100, min_class=5)

    (a, model), (b, reference) = both(make, X, y, 30, monkeypatch, every=150, metrics=ALL)
    assert_same(a, b)
    _assert_same_model(reference, model, X, "recorded")
    assert sum(went_on) >= 10


def woven_searches(make, X, y, chunk, monkeypatch, **kw):
    """The curves of the woven path and of the row-by-row path, the models, and the
    rows (all, of weight 1) of each woven call of the search."""
    sizes: list[tuple[int, int]] = []
    learn = OnePassSearch._learn_rows

    def spy(search, X, y, weights, prequential):  # (the calls that return)
        scores = learn(search, X, y, weights, prequential)
        if weights is not None:
            sizes.append((X.shape[0], int(np.count_nonzero(weights))))
        return scores

    monkeypatch.setattr(OnePassSearch, "_learn_rows", spy)
    out = []
    for weave in (True, False):
        monkeypatch.setattr(P, "_WEAVE", weave)
        model = make()
        out.append((prequential(model, iter_chunks(X, y, chunk), **kw), model))
    return out, sizes


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("delay,chunk", [(1, 100), (7, 250), (120, 100), (600, 250)])
@pytest.mark.parametrize("name", ["search", "pipeline"])
def test_woven_searches_equal_the_row_by_row_path(name, delay, chunk, sparse, monkeypatch):
    """A delay through a search (or a pipeline over one): each piece's scored rows
    (weight 0) and released labels in one call, the decisions recorded (rows of
    weight 0 learnt by no candidate, not counted by the race): the curve and the model
    of the row-by-row path, through rounds, a change and the race's reopening."""
    import scipy.sparse as sp

    X, y = stream(1500)
    rows = sp.csr_matrix(X) if sparse else X
    (curves, sizes) = woven_searches(
        MODELS[name], rows, y, chunk, monkeypatch, delay=delay, window=300, every=300, metrics=ALL
    )
    (woven, model), (rowwise, reference) = curves
    assert_same(woven, rowwise)
    assert sum(learnt for _, learnt in sizes) == 1500 - delay  # (the end: the last ones)
    _assert_same_model(reference, model, X, "woven")  # (the whole state, bit for bit)
    search, other = (getattr(m, "estimator_", m) for m in (model, reference))
    assert search.n_samples_seen_ == other.n_samples_seen_ == 1500
    assert [c.n_samples_seen_ for c in search.candidates_] == [
        c.n_samples_seen_ for c in other.candidates_
    ]
    np.testing.assert_array_equal(search.status_, other.status_)
    assert search.race_[1] >= 1  # (the change reopened the race)


def test_woven_search_with_dropped_labels_and_a_delay_per_example(monkeypatch):
    """A callable delay and dropped labels (the release heap's entries per piece):
    the brute-force loop's curve."""
    X, y = stream(900, seed=3)
    delays = np.random.default_rng(1).integers(0, 40, size=900)
    keep = np.random.default_rng(3).random(900) < 0.7  # (the run's draws, seed 3)
    reference = small_search()
    ref = brute_force(reference, X, y, delays, (0, 1), keep=keep)
    (curves, sizes) = woven_searches(
        small_search,
        X,
        y,
        150,
        monkeypatch,
        delay=lambda i, x, label: int(delays[i]),
        label_probability=0.7,
        random_state=3,
        metrics=ALL,
        every=300,
    )
    (woven, model), (rowwise, _) = curves
    check_columns(woven, ref, y, (0, 1))
    assert_same(woven, rowwise)
    assert sum(learnt for _, learnt in sizes) > keep.sum() - 40
    np.testing.assert_array_equal(model.decision_function(X), reference.decision_function(X))


@pytest.mark.parametrize("who", ["other", "leader"])
@pytest.mark.parametrize("delay", [7, "callable"])
@pytest.mark.parametrize("name", ["search", "pipeline"])
def test_a_candidate_that_diverges_inside_a_woven_piece(name, delay, who, monkeypatch):
    """A candidate failing inside a woven piece. Another than the round leader: the
    piece is woven as it is, the candidate alive up to its example. The round leader:
    the call is undone and names the failing row; the rows scored before the example
    that releases it are woven, that example goes row by row (where the row path drops
    the candidate), the rest is woven again. The curve and the model of the row-by-row
    path."""
    learn = S.learn_candidate
    kind = SOLAM if who == "other" else OPAUC  # (the round leader: the first, an OPAUC)

    def failing(candidate, X, y, weights, journal=None):
        seen = candidate.__dict__.get("n_samples_seen_", 0)
        learnt = X.shape[0] if weights is None else int(np.count_nonzero(weights))
        if type(candidate) is kind and seen + learnt > 150:  # at its example 150
            raise FloatingPointError("diverged")
        return learn(candidate, X, y, weights, journal)

    monkeypatch.setattr(S, "learn_candidate", failing)
    X, y = stream(1500, change=False)
    delays = np.random.default_rng(2).integers(0, 30, size=1500)
    by = 7 if delay == 7 else (lambda i, x, label: int(delays[i]))
    (curves, sizes) = woven_searches(
        MODELS[name], X, y, 500, monkeypatch, delay=by, window=300, every=250, metrics=ALL
    )
    (woven, model), (rowwise, reference) = curves
    assert_same(woven, rowwise)
    _assert_same_model(reference, model, X, "woven")
    status = getattr(model, "estimator_", model).status_
    assert status[2 if who == "other" else 0] == search_module.DIVERGED
    woven_labels = sum(learnt for _, learnt in sizes)  # (woven before it, and past it)
    if delay == 7:  # all but the end's 7 (and the failing example's, the leader's)
        assert woven_labels == 1500 - 7 - (who == "leader")
    else:
        assert woven_labels > 1500 - 100
