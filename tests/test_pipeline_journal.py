"""A pipeline's call undoes its steps' calls from a journal instead of copying them
(:func:`aucstream._runtime.journalled_transaction`): a call that fails in the
estimator, or after both steps learnt, leaves the pipeline exactly as it was, and the
stream then goes on as if the call had never been made, bit for bit, whichever
transactions the steps take (a walk of their state below
``aucstream._state.SHADOW_LIMIT``, an undo log of the rows a chunk names above it)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import assert_same_state, snapshot

from aucstream import FTRLAUC, OnePassSearch, StreamPipeline, _state
from aucstream._runtime import journals_calls
from aucstream._runtime._undo import LoggedCall
from aucstream.preprocessing import OnlineStandardScaler

WIDTH = 5000  # FTRL-AUC logs rows from 4096 features on


class Interrupted(FTRLAUC):
    """FTRL-AUC whose kernel call number ``fail_at`` (from 0) is interrupted after it
    has written the state; it records whether a journal was open at each call."""

    fail_at = -1
    calls = 0
    journalled: list = []

    def _update(self, chunk):
        super()._update(chunk)
        type(self).journalled.append(_state.journal_of(self) is not None)
        type(self).calls += 1
        if type(self).calls - 1 == self.fail_at:
            raise KeyboardInterrupt


class FailsAfter(StreamPipeline):
    """A pipeline whose call number ``fail_at`` fails after both steps learnt; it
    records the kinds of the journal's entries then."""

    fail_at = -1
    calls = 0
    entries: list = []

    def _learn_rows(self, X, y, weights, prequential):
        out = super()._learn_rows(X, y, weights, prequential)
        journal = _state.journal_of(self.__dict__["estimator_"])
        type(self).entries.append(None if journal is None else [type(w) for w, _ in journal])
        type(self).calls += 1
        if type(self).calls - 1 == self.fail_at:
            raise KeyboardInterrupt
        return out


def _chunks(dense: bool, n_chunks: int = 6, rows: int = 40, seed: int = 0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_chunks):
        X = sp.random(rows, WIDTH, density=8 / WIDTH, format="csr", random_state=rng)
        X.data = rng.normal(size=X.nnz) * 3.0
        y = np.where(rng.random(rows) < 0.3, 1, -1)
        out.append((X.toarray() if dense else X, y))
    return out


@pytest.fixture(params=["walked", "logged"])
def limit(request, monkeypatch):
    """The steps' transactions: walks of their whole state, or undo logs (a shadow
    limit of 0 bytes: every state is above it)."""
    if request.param == "logged":
        monkeypatch.setattr(_state, "SHADOW_LIMIT", 0)
    return request.param


def _reset(cls, fail_at):
    cls.fail_at, cls.calls = fail_at, 0
    for name in ("journalled", "entries"):
        if name in cls.__dict__:
            setattr(cls, name, [])


@pytest.mark.parametrize("dense", [False, True], ids=["csr", "dense"])
@pytest.mark.parametrize("where", ["estimator", "after"])
def test_a_failed_call_is_undone_from_the_journal(limit, dense, where):
    chunks = _chunks(dense)
    failing = 3
    cls = FailsAfter if where == "after" else StreamPipeline
    model = cls(
        transformer=OnlineStandardScaler(with_mean=False), estimator=Interrupted(random_state=0)
    )
    _reset(Interrupted, failing if where == "estimator" else -1)
    _reset(FailsAfter, failing if where == "after" else -1)
    reference = StreamPipeline(
        transformer=OnlineStandardScaler(with_mean=False), estimator=FTRLAUC(random_state=0)
    )
    for i, (X, y) in enumerate(chunks):
        if i == failing:
            before = snapshot(model)
            with pytest.raises(KeyboardInterrupt):
                model.partial_fit(X, y)
            assert_same_state(before, snapshot(model))
            continue
        model.partial_fit(X, y, classes=[-1, 1] if i == 0 else None)
        reference.partial_fit(X, y, classes=[-1, 1] if i == 0 else None)
    assert_same_state(snapshot(vars(reference.estimator_)), snapshot(vars(model.estimator_)))
    assert_same_state(snapshot(vars(reference.transformer_)), snapshot(vars(model.transformer_)))
    np.testing.assert_array_equal(model.decision_function(X), reference.decision_function(X))
    # every call after the first ran in a journalled transaction
    assert Interrupted.journalled[0] is False and all(Interrupted.journalled[1:])
    if where == "after":
        kinds = FailsAfter.entries[failing]
        assert len(kinds) == 2  # the scaler's call, then the estimator's
        logged = [k is LoggedCall for k in kinds]
        if limit == "logged":
            assert logged == [not dense, True]  # (a dense chunk: the scaler's walk)
        else:
            assert logged == [False, False]


def test_only_steps_that_journal_are_left_out_of_the_copy():
    assert journals_calls(FTRLAUC()) and journals_calls(OnlineStandardScaler())
    assert not journals_calls(OnePassSearch()) and not journals_calls(StreamPipeline())
    assert not journals_calls(None)


class Recording(FTRLAUC):
    """FTRL-AUC that records the kinds of the entries of the journal open at each of its
    kernel calls, and whose call number ``fail_at`` is interrupted after its kernel."""

    fail_at = -1
    calls = 0
    seen: list = []

    def _update(self, chunk):
        super()._update(chunk)
        journal = _state.journal_of(self)
        type(self).seen.append(None if journal is None else [type(w) for w, _ in journal])
        type(self).calls += 1
        if type(self).calls - 1 == self.fail_at:
            raise KeyboardInterrupt


def test_a_search_undoes_its_candidates_undo_logs(limit):
    """A search's quiet call journals its candidates' calls (a learner above the shadow
    limit: its undo log); a candidate interrupted after another one learnt leaves the
    search as it was."""
    chunks = _chunks(dense=False, n_chunks=5)
    Recording.fail_at, Recording.calls, Recording.seen = 3, 0, []
    search = OnePassSearch(
        candidates=[FTRLAUC(random_state=0), Recording(gamma=1.0, random_state=0)],
        drift=None,
    )
    for i, (X, y) in enumerate(chunks):
        if Recording.calls == Recording.fail_at:
            before = snapshot(search)
            with pytest.raises(KeyboardInterrupt):
                search.partial_fit(X, y)
            assert_same_state(before, snapshot(search))
            entries = Recording.seen[-1]
            # the other candidate's call first (a walk's entry is made when its
            # transaction starts: this one's own follows it; a log's when it succeeds)
            assert entries is not None and len(entries) == (1 if limit == "logged" else 2)
            assert (entries[0] is LoggedCall) == (limit == "logged")
            continue
        search.partial_fit(X, y, classes=[-1, 1] if i == 0 else None)
    assert search.n_samples_seen_ == 4 * chunks[0][0].shape[0]


@pytest.mark.parametrize("drift", [None, "auto"])
@pytest.mark.parametrize("where", ["candidate", "after"])
def test_a_pipeline_holding_a_search_undoes_its_journal(limit, drift, where):
    """A pipeline's call to the search it holds (``_race_drift.held_transaction``)
    leaves the scaler and, above the shadow limit, the alive candidates out of its
    copy and undoes their calls from a journal: a call that fails in a candidate, or
    after everything learnt (calls that cross rounds and the detector's feeds), leaves
    the pipeline as it was, and the stream goes on as if it had not been made."""
    chunks = _chunks(dense=False, n_chunks=12, rows=300, seed=1)
    failing = 6

    def pipeline(cls, second):
        search = OnePassSearch(
            candidates=[FTRLAUC(random_state=0), second],
            first_round=200,
            halving=False,
            delta=1e-12,  # (both candidates stay in the race)
            drift=drift,
        )
        return cls(transformer=OnlineStandardScaler(with_mean=False), estimator=search)

    Recording.fail_at, Recording.calls, Recording.seen = -1, 0, []
    _reset(FailsAfter, -1)
    model = pipeline(FailsAfter, Recording(gamma=1.0, random_state=0))
    reference = pipeline(StreamPipeline, FTRLAUC(gamma=1.0, random_state=0))
    for i, (X, y) in enumerate(chunks):
        if i == failing:
            if where == "candidate":
                assert list(model.estimator_.status_[:2]) == [0, 0]  # both alive
                Recording.fail_at = Recording.calls
            else:
                FailsAfter.fail_at = FailsAfter.calls
            before = snapshot(model)
            with pytest.raises(KeyboardInterrupt):
                model.partial_fit(X, y)
            assert_same_state(before, snapshot(model))
            # its calls went into the holder's journal above the limit, else its copy
            assert (Recording.seen[-1] is not None) == (limit == "logged")
            Recording.fail_at = FailsAfter.fail_at = -1
            continue
        model.partial_fit(X, y, classes=[-1, 1] if i == 0 else None)
        reference.partial_fit(X, y, classes=[-1, 1] if i == 0 else None)
    assert model.n_samples_seen_ == reference.n_samples_seen_
    np.testing.assert_array_equal(model.decision_function(X), reference.decision_function(X))
    search, peer = model.estimator_, reference.estimator_
    np.testing.assert_array_equal(search.status_, peer.status_)
    for mine, theirs in zip(search.candidates_, peer.candidates_):
        assert_same_state(snapshot(vars(theirs)), snapshot(vars(mine)))
