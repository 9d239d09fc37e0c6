"""Undo logs: OPAUC's O(d tau) sketches are saved by the rows a call writes.

The low-rank kinds declare their sketches and class sums (``_row_logged_state``) and,
per chunk, which of them the chunk writes only in the rows of its features
(``_row_written_state``: all, but a frequent-directions sketch that may shrink and
every sketch when a re-basing falls in the chunk). A ``partial_fit``-like call then
saves those rows (or the whole array) into an undo log before the kernel runs, instead
of copying the state, and checks only them for divergence afterwards. Three things
must hold, for every sketch and centering:

- the declaration is true: outside the chunk's rows the declared arrays keep every
  byte, through shrinks, re-basings and rescalings;
- a call that raises after the kernel wrote (an interrupt, an arithmetic error, a
  divergence) leaves the learner bit for bit as before, and it then goes on as one
  that never saw the call;
- a divergence in the rows a chunk wrote is still found and named.

The undo log is used for every call when the logged arrays exceed
``_state.SHADOW_LIMIT`` (d = 10^6); the tests lower that limit to use it at small d.
The weights of the low-rank kinds are formed only when read (``OPAUC.w_``).
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_stream, patch_update, watch_rows_outside
from test_write_sets import assert_same_bytes, state_bytes

from aucstream import OPAUC, _state, load_model, save_model
from aucstream import opauc as opauc_module
from aucstream._runtime import _undo

#: (covariance, centering) of every low-rank variant.
VARIANTS = [
    ("randomized", None),
    ("randomized", "g16"),
    ("randomized", "exact"),
    ("hash", None),
    ("hash", "g13"),
    ("hash", "exact"),
    ("fd", None),
    ("fd", "exact"),
]
IDS = [f"{kind}-{centering}" for kind, centering in VARIANTS]


def make(kind, centering, **params):
    return OPAUC(
        eta=0.05, lam=0.01, covariance=kind, sketch_size=3, centering=centering, random_state=0
    ).set_params(**params)


def data(n=240, d=40, seed=0):
    X, y = make_stream(n, d, seed=seed, sparsity=0.85)
    y[:2] = [-1, 1]
    return sp.csr_matrix(X), y


@pytest.fixture
def logged(monkeypatch):
    """Every call of a low-rank OPAUC through the undo log (as at d = 10^6)."""
    monkeypatch.setattr(_state, "SHADOW_LIMIT", 0)


@pytest.mark.parametrize("kind, centering", VARIANTS, ids=IDS)
def test_declared_rows_are_the_only_rows_written(kind, centering, logged, monkeypatch):
    monkeypatch.setattr(OPAUC, "_rebase_every", 11)  # re-basings inside some chunks
    X, y = data()
    model = make(kind, centering)
    checked = watch_rows_outside(monkeypatch, OPAUC)
    model.partial_fit(X[:3], y[:3], classes=[-1, 1])
    for lo, hi in [(3, 4), (4, 9), (9, 30), (30, 31), (31, 80), (80, 150), (150, 240)]:
        model.partial_fit(X[lo:hi], y[lo:hi])
    assert len(checked) == 8 and max(checked) == len(model._row_logged_state())
    if kind == "fd":
        assert min(checked) < max(checked)  # shrinks: the sketch saved whole
        assert all(s.n_shrinks_[0] > 3 for s in model.stats_)


class _Interrupt(BaseException):
    pass


def _failing(how):
    """A ``spoilt`` of :func:`conftest.patch_update` that fails the way ``how`` says."""

    def failing(self, chunk, update):
        update(self, chunk)  # writes what it may write, then fails
        if how == "interrupt":
            raise _Interrupt
        if how == "arithmetic":
            raise ZeroDivisionError("division by zero")
        # a divergence in a row the chunk wrote: in the full covariance's scatter
        # (checked by rows; its sum when dense rows leave the scatter untouched), in
        # the sketch if it is checked by its rows (frequent directions, float32), else
        # in the Gram matrix (checked whole)
        row = self._chunk_rows(chunk)[-1]
        c = int(chunk.y[-1] > 0)
        summary = self.stats_[c]
        if self.covariance == "full":
            if chunk.indices is None and not self._filled_scatters(chunk)[c]:
                summary.sum_[row] = np.nan
            else:  # (a cell the row wrote: the one-row plans check those alone)
                summary.scatter_[row, row] = np.nan
            return
        if any(a is summary.sketch_ for a in self._bounded_state()):
            summary.gram_[0, 0] = np.nan
        else:
            summary.sketch_[row, 0] = np.nan

    return failing


ERRORS = {"interrupt": _Interrupt, "arithmetic": FloatingPointError, "divergence": None}


@pytest.mark.parametrize("how", list(ERRORS))
@pytest.mark.parametrize("kind, centering", VARIANTS, ids=IDS)
def test_a_rejected_call_restores_everything(kind, centering, how, logged, monkeypatch):
    monkeypatch.setattr(OPAUC, "_rebase_every", 13)
    X, y = data(seed=1)
    model = make(kind, centering).partial_fit(X[:20], y[:20], classes=[-1, 1])
    model.coef_  # noqa: B018 - w_ formed, then stale again below
    model.partial_fit(X[20:25], y[20:25])
    reference = pickle.loads(pickle.dumps(model))
    bounds = [25, 26, 40, 41, 90, 160, 240]  # one row, shrinks and re-basings inside
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        before = state_bytes(model)
        for call in ("partial_fit", "test_then_train"):
            with monkeypatch.context() as patch:
                patch_update(patch, OPAUC, _failing(how))
                with pytest.raises(ERRORS[how] or FloatingPointError) as error:
                    getattr(model, call)(X[lo:hi], y[lo:hi])
            if how == "divergence":
                named = "gram_" if kind in ("hash", "randomized") else "sketch_"
                assert "diverged" in str(error.value) and named in str(error.value)
            assert_same_bytes(before, state_bytes(model))
        model.partial_fit(X[lo:hi], y[lo:hi])
        reference.partial_fit(X[lo:hi], y[lo:hi])
        assert_same_bytes(state_bytes(reference), state_bytes(model))
    np.testing.assert_array_equal(model.coef_, reference.coef_)
    if kind == "fd":
        assert all(s.n_shrinks_[0] > 3 for s in model.stats_)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kind", ["hash", "randomized", "fd"])
def test_bounded_arrays_are_the_sums_and_the_float64_linear_sketches(kind, dtype):
    """The arrays whose rows are not checked after a kernel call: those that sum
    checked examples times bounded draws (OPAUC._bounded_state)."""
    X, y = data()
    model = OPAUC(covariance=kind, sketch_size=4, dtype=dtype, random_state=0).fit(X, y)
    bounded = {id(a) for a in model._bounded_state()}
    for s in model.stats_:
        assert id(s.sum_) in bounded
        linear64 = kind != "fd" and dtype == "float64"
        assert (id(s.sketch_) in bounded) == linear64
    # the draws the bound assumes: signs, or standard normals over sqrt(tau) below 40
    draws = model.stats_[0].draws(np.random.default_rng(0), 100_000)
    assert np.abs(draws).max(initial=0.0) < 40


@pytest.mark.parametrize("kind, centering", [("hash", "g16"), ("fd", None), ("randomized", None)])
def test_a_real_divergence_is_found_and_named(kind, centering, logged):
    X, y = data(seed=2)
    model = make(kind, centering, eta=64.0, lam=0.0).partial_fit(X[:10], y[:10], classes=[-1, 1])
    before = state_bytes(model)
    with pytest.raises(FloatingPointError, match="diverged: its state"):
        for lo in range(10, 240, 10):
            before = state_bytes(model)
            model.partial_fit(X[lo : lo + 10] * 1e3, y[lo : lo + 10])
    assert_same_bytes(before, state_bytes(model))


@pytest.mark.parametrize("kind, centering", VARIANTS, ids=IDS)
def test_the_undo_log_path_learns_what_the_fast_path_learns(kind, centering, monkeypatch):
    X, y = data(seed=3)
    fast, slow = make(kind, centering), make(kind, centering)
    for model, limit in ((fast, 1 << 40), (slow, 0)):
        with monkeypatch.context() as patch:
            patch.setattr(_state, "SHADOW_LIMIT", limit)
            model.partial_fit(X[:4], y[:4], classes=[-1, 1])
            for i in range(4, 60):
                model.learn_one(X[i].toarray()[0], y[i])
            model.partial_fit(X[60:], y[60:])
    np.testing.assert_array_equal(fast.coef_, slow.coef_)
    assert_same_bytes(state_bytes(fast), state_bytes(slow))


def test_undo_log_puts_back_overlapping_row_and_whole_saves():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(30, 4)), rng.normal(size=30)
    flags = rng.random(30) < 0.5
    start = [a.copy(), b.copy(), flags.copy()]
    log = _state.UndoLog((a, b, flags))
    for step, rows in enumerate([[1, 5, 7], [5, 6, 29], None, [0, 5]]):
        rows = None if rows is None else np.array(rows, dtype=np.int64)
        written = (a,) if step == 1 else (a, b, flags)
        log.cover(None if rows is None else dict.fromkeys(map(id, written), rows))
        for array in (a, b, flags):
            where = slice(None) if rows is None or step == 1 and array is not a else rows
            array[where] = rng.normal(size=array[where].shape) if array.dtype.kind == "f" else 1
    log.undo()
    for now, then in zip((a, b, flags), start):
        assert now.tobytes() == then.tobytes()


@pytest.mark.parametrize("start", ["zeros", "negative zero", "one value"])
def test_a_fresh_cover_saves_zeros_by_name_and_anything_else_by_copy(start, monkeypatch):
    """``cover(fresh=True)``: an array of zero bits is not copied (its undo fills it
    with zeros); one with a -0.0 or another value is, so every undo is bit for bit."""
    rng = np.random.default_rng(1)
    a, b = np.zeros((50, 3)), np.zeros(51, dtype=np.float32)  # (51: a tail of bytes)
    if start == "negative zero":
        a[49, 2] = -0.0
        b[50] = -0.0
    elif start == "one value":
        a[0, 0] = 1e-300
        b[50] = 3.0
    before = [a.tobytes(), b.tobytes()]
    copies = []
    real_copy = np.ndarray.copy
    log = _state.UndoLog((a, b))
    monkeypatch.setattr(_undo, "_zero_bits", lambda x: copies.append(x) or _zero_bits(x))
    log.cover({id(b): np.array([3, 7], dtype=np.int64)}, fresh=True)  # b by rows
    b[[3, 7]] = 1.0
    log.cover(None, fresh=True)  # a whole (zeros or not), b whole after its rows
    a[...] = rng.normal(size=a.shape)
    b[...] = 2.0
    log.cover(None, fresh=True)  # both saved already: nothing more
    a[5] = np.nan
    assert [x is a for x in copies] == [True, False]  # b was no longer zero bits: copied
    saved = {id(array): kept for array, rows, kept in log._entries if rows is None}
    assert (saved[id(a)] is _undo._ZEROS) == (start == "zeros")
    assert isinstance(saved[id(b)], np.ndarray)
    log.undo()
    assert [a.tobytes(), b.tobytes()] == before
    assert real_copy is np.ndarray.copy


_zero_bits = _undo._zero_bits


def test_zero_bits_reads_every_byte():
    assert _zero_bits(np.zeros(0)) and _zero_bits(np.zeros((9, 7), dtype=np.float32))
    for dtype, size in [(np.float64, 17), (np.float32, 33), (np.int64, 8), (np.bool_, 13)]:
        for at in (0, size // 2, size - 1):
            x = np.zeros(size, dtype=dtype)
            x.view(np.uint8)[at * x.itemsize + x.itemsize - 1] = 1  # the last byte of one
            assert not _zero_bits(x)
    assert not _zero_bits(np.array([0.0, -0.0]))
    assert not _zero_bits(np.zeros((4, 4))[:, :2])  # not contiguous: copied, not read


def test_a_wide_race_refused_in_its_first_call_changes_nothing(monkeypatch):
    """The fresh candidates of a wide race cover their O(d) states by name (zeros) in
    their first call; a call refused after their kernels wrote leaves the search as it
    was (unstarted: the candidates made in the call are dropped, so the zeros put back
    are checked by the test above), and it then learns as a copy that never saw it."""
    from aucstream import FTRLAUC, SOLAM, OnePassSearch

    monkeypatch.setattr(_state, "SHADOW_LIMIT", 64)
    X, y = make_stream(400, 5000, seed=3, sparsity=0.995)  # (logged from 4096)
    X = sp.csr_matrix(X)
    search = OnePassSearch([SOLAM(), FTRLAUC(), SOLAM(R=10.0, column_scale=None)], drift=None)
    twin = pickle.loads(pickle.dumps(search))
    before = state_bytes(search)
    zeros = []
    cover = _undo.UndoLog.cover

    def counted(log, rows, fresh=False):
        zeros.extend(saved is _undo._ZEROS for _, _, saved in log._entries)
        cover(log, rows, fresh)
        zeros.extend(saved is _undo._ZEROS for _, _, saved in log._entries[-len(log.arrays) :])

    def spoilt(learner, chunk, update):
        update(learner, chunk)  # (after the candidate before it learnt too)
        raise _Interrupt

    with monkeypatch.context() as patch:
        patch.setattr(_undo.UndoLog, "cover", counted)
        patch_update(patch, FTRLAUC, spoilt)
        with pytest.raises(_Interrupt):
            search.partial_fit(X[:300], y[:300], classes=[-1, 1])
    assert any(zeros), "no state was covered by name"
    assert_same_bytes(state_bytes(search), before)
    for model in (search, twin):
        model.partial_fit(X, y, classes=[-1, 1])
    learnt = [  # (the generators are seeded from entropy: random_state=None)
        {k: v for k, v in state_bytes(m).items() if not k.endswith("_rng")} for m in (search, twin)
    ]
    assert_same_bytes(*learnt)


def test_unique_rows_are_sorted_and_checked():
    indices = np.array([5, 3, 5, 9, 0, 3], dtype=np.int64)
    np.testing.assert_array_equal(_state.unique_rows(indices, 10), [0, 3, 5, 9])
    assert _state.unique_rows(np.zeros(0, dtype=np.int64), 4).shape == (0,)
    for bad in (10, -1):
        with pytest.raises(ValueError, match="outside"):
            _state.unique_rows(np.array([1, bad]), 10)


def test_union_rows_merges_sorted_row_sets():
    rng = np.random.default_rng(0)
    for _ in range(20):
        a = np.unique(rng.integers(0, 50, rng.integers(0, 30)))
        b = np.unique(rng.integers(0, 50, rng.integers(0, 30)))
        np.testing.assert_array_equal(_undo.union_rows(a, b), np.union1d(a, b))
    with pytest.raises(ValueError, match="sorted"):
        _undo.union_rows(np.array([3, 1]), np.array([2]))


@pytest.mark.parametrize("kind", ["randomized", "hash"])
def test_linear_sketches_log_their_weights_by_rows(kind, logged, monkeypatch):
    """v_, w_ and column_scale_ are logged, not copied: by the chunk's rows (w_ by
    none: a call does not form it), and v_ whole when the chunk may re-base or fold
    the implicit scale into v (here eta * lam = 0.95: sigma leaves [1e-9, 1e9] every
    seven steps), the declaration checked against the rows each call wrote."""
    X, y = data(seed=6)
    model = make(kind, None, eta=0.5, lam=1.9)
    checked = watch_rows_outside(monkeypatch, OPAUC)
    model.partial_fit(X[:3], y[:3], classes=[-1, 1])
    logged_ids = {id(model.v_), id(model.__dict__["w_"]), id(model.column_scale_)}
    assert logged_ids <= set(map(id, model._row_logged_state()))
    engine = model._engine  # one step cannot fold sigma, eight can
    assert not engine.folds_within(model, 1)
    assert engine.folds_within(model, 8)
    for lo, hi in [(3, 4), (4, 5), (5, 40), (40, 41), (41, 240)]:
        model.partial_fit(X[lo:hi], y[lo:hi])
    assert len(checked) == 6
    assert max(checked) == len(model._row_logged_state())  # v_ by rows (one-row chunks)
    assert min(checked) == max(checked) - 1  # v_ whole (a fold may fall in the chunk)
    reference = make(kind, None, eta=0.5, lam=1.9)
    monkeypatch.setattr(_state, "SHADOW_LIMIT", 1 << 40)  # (copies: no undo log)
    reference.partial_fit(X[:3], y[:3], classes=[-1, 1])
    for lo, hi in [(3, 4), (4, 5), (5, 40), (40, 41), (41, 240)]:
        reference.partial_fit(X[lo:hi], y[lo:hi])
    np.testing.assert_array_equal(model.coef_, reference.coef_)
    # the check can fail: v_ declared by rows in a chunk whose folds write it whole
    monkeypatch.setattr(_state, "SHADOW_LIMIT", 0)
    narrow = X[:40].multiply(np.arange(40) < 20).tocsr()  # (rows left outside)
    narrow.eliminate_zeros()
    model.partial_fit(narrow, y[:40])  # (declared right: v_ whole)
    monkeypatch.setattr(type(model._engine), "folds_within", lambda *args: False)
    with pytest.raises(AssertionError):
        model.partial_fit(narrow, y[:40])


@pytest.mark.parametrize("kind, centering", [("hash", None), ("fd", "exact")])
def test_weights_are_formed_when_read_and_saved_stale_ones_load_right(kind, centering, tmp_path):
    X, y = data(seed=4)
    model = make(kind, centering).fit(X[:100], y[:100])
    assert model not in opauc_module._FORMED  # fit did not form them
    stale = model.__dict__["w_"].copy()
    save_model(model, tmp_path / "stale.npz")
    copied = pickle.loads(pickle.dumps(model))
    expected = model.scale_[0] * model._implicit_sum()
    if hasattr(model, "column_scale_"):  # (the weights of the scaled rows, in raw units)
        expected /= model._engine.scale_hat(model)
    np.testing.assert_array_equal(model.w_, expected)
    assert not np.array_equal(stale, expected)
    for other in (copied, load_model(tmp_path / "stale.npz")):
        np.testing.assert_array_equal(other.coef_[0], expected)
        np.testing.assert_array_equal(other.decision_function(X), model.decision_function(X))
    model.partial_fit(X[100:], y[100:])
    assert model not in opauc_module._FORMED
    whole = make(kind, centering).fit(X, y)
    np.testing.assert_array_equal(model.w_, whole.w_)


# ------------------------------------------------------------ the full covariance
# "full" declares its class sums and d x d scatters (``FullCovariance.row_state``): a
# row writes them only in the rows of its features (a dense row writes its scatter
# whole when it fills the held-back rows, or not at all), so a call saves and checks
# those rows only, in the fast path (``FlatState`` plans by rows) and in the undo log.
PATHS = {"fast path": None, "undo log": 0}


def full_data(seed=5):
    X, y = make_stream(80, 40, seed=seed, sparsity=0.9)  # ~4 features a row
    X[np.arange(80), np.arange(80) % 40] = 1.0  # none empty
    y[:2] = [-1, 1]
    return sp.csr_matrix(X), y


def full_model(X, y, **params):
    return OPAUC(eta=0.05, lam=0.01, **params).partial_fit(X[:20], y[:20], classes=[-1, 1])


@pytest.mark.parametrize("layout", ["CSR", "dense"])
def test_full_covariance_writes_only_the_rows_of_its_features(layout, monkeypatch):
    X, y = full_data()
    model = full_model(X, y)
    checked = watch_rows_outside(monkeypatch, OPAUC)
    for lo, hi in [(20, 21), (21, 24), (24, 60)]:
        chunk = X[lo:hi] if layout == "CSR" else X[lo:hi].toarray()
        if layout == "dense":
            chunk[:, ::3][chunk[:, ::3] == 0] = -0.0  # not a feature of the row
        model.partial_fit(chunk, y[lo:hi])
    # dense rows are held back 16 a class (FullCovariance.pending_): 17 positive and 19
    # negative rows in the last chunk fill both, and both scatters are saved whole
    assert checked == ([4, 4, 4] if layout == "CSR" else [4, 4, 2])
    assert layout == "CSR" or [s.n_pending_[0] for s in model.stats_] == [5, 3]


def full_on_path(path: str, seed: int, monkeypatch, **params):
    """A stream and a full-covariance OPAUC that has learnt its start, with one-row
    calls sent down ``path`` (:data:`PATHS`)."""
    if PATHS[path] is not None:
        monkeypatch.setattr(_state, "SHADOW_LIMIT", PATHS[path])
    X, y = full_data(seed=seed)
    return X, y, full_model(X, y, **params)


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("how", ["interrupt", "divergence"])
def test_full_covariance_rejected_calls_restore_the_rows_they_wrote(path, how, monkeypatch):
    X, y, model = full_on_path(path, 6, monkeypatch)
    reference = pickle.loads(pickle.dumps(model))
    calls = {
        "CSR row": lambda m, i: m.partial_fit(X[i : i + 1], y[i : i + 1]),
        "dense row": lambda m, i: m.partial_fit(X[i : i + 1].toarray(), y[i : i + 1]),
        "learn_one array": lambda m, i: m.learn_one(X[i].toarray()[0], y[i]),
        "learn_one dict": lambda m, i: m.learn_one(dict(zip(X[i].indices, X[i].data)), y[i]),
        "CSR chunk": lambda m, i: m.partial_fit(X[i : i + 3], y[i : i + 3]),
        "dense chunk": lambda m, i: m.partial_fit(X[i : i + 3].toarray(), y[i : i + 3]),
    }
    for i, call in zip(range(20, 80, 4), [*calls.values(), *calls.values()]):
        before = state_bytes(model)
        with monkeypatch.context() as patch:
            patch_update(patch, OPAUC, _failing(how))
            with pytest.raises(_Interrupt if how == "interrupt" else FloatingPointError) as error:
                call(model, i)
        if how == "divergence":
            message = str(error.value)
            assert "diverged" in message and ("scatter_" in message or "sum_" in message)
        assert_same_bytes(before, state_bytes(model))
        call(model, i)
        call(reference, i)
        assert_same_bytes(state_bytes(reference), state_bytes(model))
    if path == "fast path":  # the plans of one-row calls handle the summaries by rows
        from aucstream._fastpath import FAST

        c = int(y[79] > 0)
        assert model.stats_[c].n_pending_[0] < 15  # the row does not fill them
        model.learn_one(X[79].toarray()[0], y[79])
        plans = list(FAST[model].flat._plans.values())
        # its class's sum by rows, its scatter not at all (a held-back row)
        scatter = model.stats_[c].scatter_.ctypes.data
        assert any(
            p.rows_copy.shape[0] == 1 and scatter not in p.copy[:, 0].tolist() for p in plans
        )
        model.partial_fit(X[79], y[79:80])  # a CSR row: the sum and scatter by rows
        plans = list(FAST[model].flat._plans.values())
        assert any(p.rows_copy.shape[0] == 2 for p in plans)


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("layout", ["CSR", "dense"])
def test_full_covariance_chunk_diverging_midway_changes_nothing(path, layout, monkeypatch):
    # (the papers' step: the default running column scale takes rows of 1e140 in)
    X, y, model = full_on_path(path, 7, monkeypatch, column_scale=None)
    model.partial_fit(X[20:21], y[20:21])
    reference = pickle.loads(pickle.dumps(model))
    bad = X[21:24].toarray()
    bad[1:][bad[1:] != 0] = 1e140  # rows 2 and 3 overflow the step
    before = state_bytes(model)
    with pytest.raises(FloatingPointError, match="diverged"):
        model.partial_fit(bad if layout == "dense" else sp.csr_matrix(bad), y[21:24])
    assert_same_bytes(before, state_bytes(model))
    model.partial_fit(X[21:30], y[21:30])
    reference.partial_fit(X[21:30], y[21:30])
    assert_same_bytes(state_bytes(reference), state_bytes(model))


def test_a_plan_by_rows_refuses_rows_outside_its_arrays():
    X, y = full_data()
    model = full_model(X, y)
    flat = _state.FlatState(model)
    plan = flat.plan((), model._row_logged_state())
    assert plan.rows_copy.shape[0] == 4
    before = state_bytes(model)
    for rows in ([0, 40], [-1], None):
        with pytest.raises(ValueError, match="rows"):
            flat.save(plan, None if rows is None else np.array(rows, dtype=np.int64))
    assert flat.all_finite()  # complete: later checks may visit the rows only
    assert not flat.all_finite(plan, np.array([40], dtype=np.int64))
    assert_same_bytes(before, state_bytes(model))


def test_unique_rows_by_class_are_those_of_each_class():
    rng = np.random.default_rng(3)
    for n, density in [(50, 0.3), (10_000, 0.0005)]:  # by flags; by sorts (few indices)
        X = sp.random(40, n, density=density, format="csr", random_state=rng)
        positive = rng.random(40) < 0.4
        part = slice(7, 33)  # indptr not starting at 0
        sub, labels = X[part], positive[part]
        start = X.indptr[7]
        indptr = X.indptr[7:34]
        assert indptr[0] == start and (start > 0 or density < 0.01)
        neg, pos = _state.unique_rows_by_class(indptr, X.indices.astype(np.int64), labels, n)
        np.testing.assert_array_equal(neg, np.unique(sub[~labels].indices))
        np.testing.assert_array_equal(pos, np.unique(sub[labels].indices))
        assert neg.dtype == pos.dtype == np.int64
    bad = np.array([0, 2, 3], dtype=np.int64)
    indices = np.arange(3, dtype=np.int64)
    for indptr, labels in (([0, 2, 3], [True]), ([0, 2, 1], [True, False]), ([0, 2, 5], [1, 0])):
        with pytest.raises(ValueError, match="indptr"):
            _state.unique_rows_by_class(np.array(indptr), indices, np.array(labels, bool), 10)
    for index in (-1, 10):
        indices = np.array([1, index, 4], dtype=np.int64)
        with pytest.raises(ValueError, match="outside"):
            _state.unique_rows_by_class(bad, indices, np.array([True, False]), 10)


def test_undo_logs_keep_one_spare_buffer_per_array_of_at_most_an_eighth():
    rng = np.random.default_rng(4)
    a = rng.normal(size=(400, 3))
    start = a.copy()

    def call(rows, fail):
        log = _state.UndoLog((a,))
        rows = np.array(rows, dtype=np.int64)
        log.cover({id(a): rows})
        saved = log._entries[0][2] if rows.size else None
        a[rows] = rng.normal(size=(rows.size, 3))
        if fail:
            log.undo()
            assert a.tobytes() == start.tobytes()
        log.release()
        return saved

    assert _state._SPARES.pop(a) is None
    call([], fail=False)  # nothing to save: no buffer
    assert _state._SPARES.pop(a) is None
    start = a.copy()
    first = call(range(0, 80, 2), fail=True)
    spare = _state._SPARES.pop(a)
    assert first.base is spare and spare.shape == (45, 3)  # an eighth more room
    _state._SPARES[a] = spare
    again = call([3, 7, 399], fail=True)  # fewer rows: into the spare
    assert again.base is spare and _state._SPARES.pop(a) is spare
    _state._SPARES[a] = spare
    call(range(51), fail=False)  # more rows than an eighth: not kept
    assert _state._SPARES.pop(a) is spare
    start = a.copy()
    call(range(0, 400, 8), fail=True)  # an eighth: kept, the larger one
    assert _state._SPARES.pop(a).shape == (50, 3)
