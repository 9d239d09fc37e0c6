"""Shared fixtures: the benchmark-data directory and small synthetic streams."""

from __future__ import annotations

import atexit
import functools
import lzma
import os
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings
from numba.core import event as numba_event

from aucstream._fastpath import FAST
from aucstream._kernels._compile import CompileRule, sums_behind_overlap_checks

# Property tests draw the same examples on every run, so CI is reproducible; use
# ``pytest --hypothesis-profile=explore`` to search new ones. No deadline: an example's
# first call may compile a kernel or load numba's cache (0.3-0.9 s on a busy machine,
# past hypothesis' default 200 ms), which says nothing about the property.
settings.register_profile("reproducible", derandomize=True, deadline=None)
settings.register_profile("explore", derandomize=False, deadline=None)
settings.load_profile("reproducible")


def _leave_without_teardown() -> None:
    """End a pytest-xdist worker without tearing its interpreter down.

    A worker's results are all with the controller by the time its interpreter exits
    (pytest-xdist sends them as the tests end, and the session's end before
    ``pytest_unconfigure``); what is left is freeing every object one by one, numba's
    compiled libraries among them: 3 s after a run from numba's cache and 10-15 s after
    a fresh clone's, while the controller waits (the tail of the test command). Runs
    after the exit handlers registered later than this module's import (numba's,
    dask's), flushes the worker's output and leaves with status 0: pytest-xdist reads
    a worker's failures from its reports, never from its exit status.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if os.environ.get("PYTEST_XDIST_WORKER"):
    atexit.register(_leave_without_teardown)

#: The xdist groups of the test command's ``--dist loadgroup``: a group's tests are one
#: work unit, run by one worker. By module (the file's name) or, for the common
#: battery, one per learner (``test_common.py::test_common[LEARNER-check]``, and the
#: module's other tests of one learner, ``test_common_...[LEARNER-...]``): a
#: learner's kernels (seconds each to compile, cold) are compiled by one worker, where
#: consecutive tests spread over both workers had both compile them at the same time.
#: The tampered files' module builds hundreds of files in its module fixtures, once;
#: the site's build (``test_docs.py``) runs in one worker while the other runs tests,
#: instead of waiting for it when the scheduler hands it some of these tests.
GROUPS = {
    "test_reliability_files.py": "tampered-files",
    "test_docs.py": "docs",
    # the covariance summaries' kernels (frequent directions' shrink, the sparse
    # summary's rows), which both workers compiled at once when their tests spread
    "test_covariance.py": "covariance",
    "test_covariance_state.py": "covariance",
    "test_covariance_solve.py": "covariance",
    "test_covariance_merge.py": "covariance",
    # every learner's kernels on duplicate CSR indices and a file read back
    "test_audit34.py": "audit34",
    # module fixtures that run every learner's hostile cases in an interpreter of
    # their own (4-5 s each), once instead of once in each worker
    "test_read_only_state.py": "read-only-state",
    "test_reliability_input.py": "hostile-input",
    # modules whose tests, spread over both workers, had both compile the same kernels
    # (float32 summaries, the bound one-row updates, deferred shrinks, the scaler's
    # passes, the streaming AUC's buckets): AUCSTREAM_NUMBA_REPORT's duplicates
    "test_opauc_dtype.py": "opauc-float32",
    "test_one_row.py": "one-row",
    # SOLAM's one-row calls and the low-rank OPAUC's kernels (beside the one-row
    # group, both workers compiled SOLAM's kernels at once, first thing in the run)
    "test_compiled_versions.py": "one-row",
    "test_fd_deferred.py": "fd-deferred",
    "test_scaler_passes.py": "scaler-passes",
    "test_streaming_auc_runs.py": "streaming-auc-runs",
}


#: Learners whose battery runs in the group of another learner: the same compiled
#: kernels (SOLAML1 is SOLAM's kernel under the l1 ball), which both workers compiled
#: at once when the two groups were handed out side by side.
SAME_KERNELS = {"SOLAML1": "SOLAM"}


def group_of(nodeid: str) -> str | None:
    """The xdist group of the test ``nodeid`` (:data:`GROUPS`), or None."""
    path, _, name = nodeid.partition("::")
    module = path.rpartition("/")[2]
    if module == "test_common.py" and name.startswith("test_common") and "[" in name:
        learner = name.partition("[")[2].partition("-")[0]
        return "common-" + SAME_KERNELS.get(learner, learner)
    return GROUPS.get(module)


@pytest.hookimpl(tryfirst=True)  # (before pytest-xdist's own)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` with the groups of :func:`group_of`.

    pytest-xdist marks a test's group (``xdist_group``) by appending it to the node id,
    which pytest 9 no longer lets it change: its loadgroup then groups nothing
    (pytest-xdist issue 1386). The groups are therefore named here, from the node ids
    the scheduler sees. The work units are handed out in the order of the collection,
    which :func:`pytest_collection_modifyitems` sets (pytest-xdist's own
    ``--loadscope-reorder``, largest unit first, is turned off: it can not put the
    meta-learners' groups after the other learners')."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False  # the order is the collection's (docstring)

    class Grouped(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.rfind("@") > nodeid.rfind("]"):  # an xdist_group mark (older pytest)
                return nodeid.rpartition("@")[2]
            return group_of(nodeid) or nodeid

    return Grouped(config, log)


#: The order of the work units (:func:`pytest_collection_modifyitems`). First the
#: groups of :data:`GROUPS` and the battery's, largest first: they compile most of the
#: learners' kernels. The battery's groups of the meta-learners (:data:`META`) go
#: after the other groups: they run the other learners' kernels, which then load from
#: the cache (handed out beside them, both workers compiled SOLAM's, 6 s each); then
#: the groups that start interpreters of their own (:data:`INTERPRETERS`), which load
#: the kernels from numba's cache (5-10 times faster than compiling them as in a fresh
#: clone). Then the site's build, while the other
#: worker runs single tests (its examples' kernels are mostly in the cache by then;
#: handed out after the single tests, it ran alone for its last 30 s); then the single
#: tests, the longest that compiles nothing (mypy, :data:`FIRST`) first, so that it is
#: not left running at the end while the other worker idles, and :data:`LAST` last.
ORDER = ("groups", "test_docs.py", "first", "single", "last")
#: see :data:`ORDER`
META = ("common-OnePassSearch", "common-StreamPipeline")
#: The groups whose module fixtures run every learner in interpreters of their own
#: (hostile input, read-only state, tampered files): after every other group, so that
#: those interpreters load the learners' kernels from numba's cache. Handed out first
#: (as the largest group, the hostile input's was), its interpreter compiled them
#: itself, cold, while the workers compiled the same ones: 20 s against 5 s warm, in
#: a fresh clone.
INTERPRETERS = ("hostile-input", "read-only-state", "tampered-files")
#: see :data:`ORDER`
FIRST = ("test_typing.py",)
#: The leak check's module, which starts interpreters of its own that load the
#: learners' kernels (from numba's cache, run last).
LAST = ("test_covariance_nrt.py",)


def pytest_collection_modifyitems(config, items) -> None:
    """Sort the tests into the work units' order, :data:`ORDER` (stable: the order
    within each module, and of the single tests of one kind, stays)."""
    tests = Path(__file__).resolve().parent
    size: dict[str, int] = {}
    for item in items:
        group = group_of(item.nodeid)
        if group is not None:
            size[group] = size.get(group, 0) + 1

    def key(item) -> tuple[int, int, int]:
        path = Path(item.path)
        module = path.name if path.parent == tests else ""
        group = group_of(item.nodeid)
        if module in ORDER:
            return ORDER.index(module), 0, 0
        if module in FIRST:
            return ORDER.index("first"), 0, 0
        if module in LAST:
            return ORDER.index("last"), 0, 0
        if group is not None:
            late = 2 if group in INTERPRETERS else int(group in META)
            return ORDER.index("groups"), late, -size[group]
        return ORDER.index("single"), 0, 0

    items.sort(key=key)


#: A directory: each process of the test command writes there (``numba-<worker>.json``)
#: every signature of each compiled function of aucstream and, for each one compiled
#: (not loaded from numba's cache), its compile seconds (its callees' excluded) and the
#: test that compiled it; for finding duplicate compiles (two signatures where one
#: would do). Unset: nothing is recorded.
NUMBA_REPORT = os.environ.get("AUCSTREAM_NUMBA_REPORT")


def pytest_configure(config) -> None:
    if NUMBA_REPORT:
        numba_event.register("numba:compile", _COMPILES)


class _Compiles(numba_event.Listener):
    """numba's compile events: (function, argument types, own seconds, test)."""

    def __init__(self) -> None:
        self.rows: list = []
        self.open: list = []  # [start, seconds of nested compiles] of each open compile

    def on_start(self, event) -> None:
        self.open.append([time.perf_counter(), 0.0])

    def on_end(self, event) -> None:
        start, nested = self.open.pop()
        took = time.perf_counter() - start
        if self.open:
            self.open[-1][1] += took
        fn = event.data["dispatcher"].py_func
        test = os.environ.get("PYTEST_CURRENT_TEST", "").rpartition(" (")[0]
        name = f"{fn.__module__}.{fn.__qualname__}"
        self.rows.append([name, str(tuple(event.data["args"])), took - nested, test])


_COMPILES = _Compiles()


class SumsApartFromStores(CompileRule):
    """Every version numba compiles in the test run (a fresh clone's run compiles every
    kernel the tests reach) follows the rule of "Sums" in
    :mod:`aucstream._kernels._compile`: no vectorized float sum behind a run-time
    overlap check, whose result would depend on where the arrays lie in memory
    (``tests/test_memory_layout.py``). A version loaded from numba's cache carries no
    LLVM IR and is not read (it was checked when it was compiled)."""

    #: the kernels whose loops that write and sum run only on arrays of at least
    #: ``aucstream._kernels.SAME_ORDER_BYTES`` (a smaller one takes loops that sum
    #: apart from the stores: its docstring)
    EXEMPT = frozenset({"aucstream.covariance._full.upper_matvec"})

    def check(self, dispatcher, cres) -> None:
        if getattr(cres.library, "_disable_inspection", False):
            return  # (loaded from the cache: object code only)
        ir = cres.library.get_llvm_str()
        broken = sorted(set(sums_behind_overlap_checks(ir)) - self.EXEMPT)
        if broken:
            raise AssertionError(
                f"{', '.join(broken)} (compiled for {dispatcher.py_func.__qualname__}) "
                "sums floats in a vectorized loop that also writes to an array: its "
                "result depends on where the arrays lie in memory (aucstream._kernels, "
                "'Sums'); sum in a loop of its own"
            )


numba_event.register("numba:compile", SumsApartFromStores())


def pytest_sessionfinish(session) -> None:
    if not NUMBA_REPORT:
        return
    import json

    from aucstream._kernels._compile import _MADE

    signatures = {}
    for d in list(_MADE):
        fn = d.py_func
        signatures[f"{fn.__module__}.{fn.__qualname__}"] = [str(s) for s in d.signatures]
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    out = Path(NUMBA_REPORT) / f"numba-{worker}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"signatures": signatures, "compiles": _COMPILES.rows}))


#: ``../shared/data`` next to the repository, unless AUCSTREAM_DATA says otherwise.
DATA_DIR = Path(
    os.environ.get("AUCSTREAM_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data")
)


def run_cli(capsys, *argv):
    """(exit status, stdout, stderr) of ``aucstream ARGV``, in process."""
    from aucstream.cli import main

    try:
        code = main([str(a) for a in argv])
    except SystemExit as stop:
        code = stop.code
    out, err = capsys.readouterr()
    return code, out, err


def require_data(*files: str) -> Path:
    """The data directory, or skip the test when it (or one of ``files``) is absent."""
    if not DATA_DIR.is_dir():
        pytest.skip(f"benchmark data not found at {DATA_DIR} (set AUCSTREAM_DATA)")
    for name in files:
        if not (DATA_DIR / name).exists():
            pytest.skip(f"{name} not found in {DATA_DIR}")
    return DATA_DIR


@pytest.fixture
def data_dir() -> Path:
    return require_data()


def make_stream(n: int = 120, d: int = 6, seed: int = 0, sparsity: float = 0.0):
    """A linearly separable-ish stream with labels {-1, +1} and optional zeros: the
    battery's stream (:func:`aucstream.checks.make_stream`) with the tests' defaults."""
    from aucstream.checks import make_stream as checks_stream

    return checks_stream(n, d, seed=seed, sparsity=sparsity)


def patch_update(patch, cls, spoilt) -> None:
    """Make every update of ``cls`` call ``spoilt(self, chunk, update)`` instead, where
    ``update(self, chunk)`` runs the original: both the chunk path's ``_update`` and
    the one-row path's bound update (``_bind_update``, which does not go through
    ``_update``). ``patch``: pytest's ``monkeypatch`` or one of its contexts."""
    update, bind = cls._update, cls._bind_update

    def original(self, chunk):
        run = bind(self, chunk)
        if run is None:
            update(self, chunk)
        else:
            run(self)

    def bound(self, chunk, reuse=False):
        if bind(self, chunk) is None:
            return None

        def run(learner):  # the original again once the patch is undone
            if cls._bind_update is bound:
                spoilt(learner, chunk, original)
            else:
                original(learner, chunk)

        return run

    patch.setattr(cls, "_update", lambda self, chunk: spoilt(self, chunk, original))
    patch.setattr(cls, "_bind_update", bound)
    FAST.clear()  # one-row calls bind again (to the patched update)


def watch_rows_outside(monkeypatch, cls) -> list:
    """Make every update of ``cls`` (:func:`patch_update`) check that the arrays its
    chunk declares written by rows (``_row_written_state``) are unchanged outside the
    rows ``_written_rows`` names for each; returns the list to which each call
    appends how many arrays it checked."""
    checked = []

    def watched(self, chunk, update):
        written = self._row_written_state(chunk)
        rows = self._written_rows(chunk, written) if written else {}
        assert set(rows) == set(map(id, written))
        every = np.arange(chunk.n_features)
        outside = [np.setdiff1d(every, rows[id(a)]) for a in written]
        before = [a[out].copy() for a, out in zip(written, outside)]
        update(self, chunk)
        for a, out, old in zip(written, outside, before):
            assert a[out].tobytes() == old.tobytes()
        checked.append(len(written))

    patch_update(monkeypatch, cls, watched)
    return checked


def state_bytes(obj) -> int:
    """Bytes of every numpy array reachable from a learner's state."""
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (list, tuple)):
        return sum(state_bytes(v) for v in obj)
    if hasattr(obj, "__dict__") and not isinstance(obj, np.random.Generator):
        return sum(state_bytes(v) for v in vars(obj).values())
    return 0


def snapshot(obj):
    """A deep copy of every value reachable from a learner's state, for equality checks."""
    if isinstance(obj, np.ndarray):
        return obj.copy()
    if isinstance(obj, (list, tuple)):
        return [snapshot(v) for v in obj]
    if isinstance(obj, dict):
        return {k: snapshot(v) for k, v in obj.items()}
    if isinstance(obj, np.random.Generator):
        return ("rng", repr(obj.bit_generator.state))
    if hasattr(obj, "__dict__"):
        return (type(obj).__name__, {k: snapshot(v) for k, v in vars(obj).items()})
    return obj


def assert_same_state(before, after, path="model"):
    """Two snapshots are equal bit for bit (NaN equal to NaN), with the path of a difference."""
    assert type(before) is type(after), f"{path}: {type(before)} != {type(after)}"
    if isinstance(before, np.ndarray):
        assert before.dtype == after.dtype and before.shape == after.shape, path
        assert np.array_equal(before, after, equal_nan=before.dtype.kind in "fc"), path
    elif isinstance(before, (list, tuple)):
        assert len(before) == len(after), path
        for i, (a, b) in enumerate(zip(before, after)):
            assert_same_state(a, b, f"{path}[{i}]")
    elif isinstance(before, dict):
        assert before.keys() == after.keys(), f"{path}: keys {before.keys() ^ after.keys()}"
        for k in before:
            assert_same_state(before[k], after[k], f"{path}.{k}")
    else:
        assert before == after or (before != before and after != after), (
            f"{path}: {before} != {after}"
        )


def opauc_recursion(stats, w, X, y, eta, lam, draws=None):
    """The OPAUC recursion (G13 Eqs. 3-5 / 10-11, G16 Eqs. 7-8 / 14-17) from the class
    summaries ``stats`` and weights ``w``: each example joins its class's summary (with
    its row of ``draws`` for the linear sketches), then w takes one step of
    ``opauc_gradient`` from the opposite summary. Returns the final w."""
    from aucstream.opauc import opauc_gradient

    for t in range(X.shape[0]):
        own = int(y[t] > 0)
        if draws is None:
            stats[own].update(X[t : t + 1])
        else:
            stats[own].update(X[t : t + 1], draws=draws[t : t + 1])
        if stats[1 - own].count:
            w = w - eta * opauc_gradient(w, X[t], float(y[t]), stats[1 - own], lam)
    return w


@functools.cache
def a9a_normalized():
    """a9a's training and test files with rows scaled to unit l2 norm (L18's scaling):
    ``(X, y, X_test, y_test)``, CSR; skips the test when the data are absent."""
    from sklearn.datasets import load_svmlight_file
    from sklearn.preprocessing import normalize

    data = require_data("a9a.xz", "a9a.t.xz")
    with lzma.open(data / "a9a.xz") as fh:
        X, y = load_svmlight_file(fh, n_features=123)
    with lzma.open(data / "a9a.t.xz") as fh:
        Xt, yt = load_svmlight_file(fh, n_features=123)
    return normalize(X).tocsr(), y, normalize(Xt).tocsr(), yt
