"""The kernels compiled without reference counting (``borrowing_njit``,
``borrowing_step``, and SOLAM's and FSAUC's chunk kernels: numba's ``_nrt=False``)
neither leak nor release what they do not own.

See ``aucstream._kernels._compile`` ("Reference counts") for the argument. Its rules on
return types are enforced by the compile policy itself, at every compilation
(``check_compiled``): the tests below check that it refuses what it must, on functions
compiled in a temporary folder. A leak would show as numba memory-info blocks
allocated and never freed, or as reference counts of the learners' arrays that grow
from call to call; a release of references never taken as blocks freed more often
than allocated, counts that fall, or a crash. The learning runs in a subprocess with
numba's allocation statistics on (NUMBA_NRT_STATS=1, read at import), so a crash
fails the test instead of the test run; it uses the usual numba cache.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from numba.core import event

from aucstream._kernels import BorrowingRuleError
from aucstream._kernels._compile import REFERENCE_COUNT_RULE
from aucstream.covariance import own_and_opposite

SCRIPT = textwrap.dedent(
    """
    import gc, json, sys
    import numpy as np, scipy.sparse as sp
    from numba.core.runtime import rtsys
    from aucstream import FSAUC, OPAUC, SOLAM, SOLAML1
    from aucstream.adaoam import AdaOAM, SAdaOAM
    from aucstream.covariance import make_covariance, ExactSparseCovariance

    def arrays(obj, out, seen):
        if isinstance(obj, np.ndarray):
            out.append(obj)
        elif id(obj) not in seen:
            seen.add(id(obj))
            if isinstance(obj, (list, tuple)):
                for v in obj:
                    arrays(v, out, seen)
            elif hasattr(obj, "__dict__") and not isinstance(obj, np.random.Generator):
                for v in vars(obj).values():
                    arrays(v, out, seen)

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 12))
    X[X < 0.4] = 0.0
    y = np.where(X @ rng.normal(size=12) > 0, 1, -1)
    S = sp.csr_matrix(X)
    models = {"AdaOAM": AdaOAM(), "SAdaOAM": SAdaOAM(lam=0.0), "SAdaOAM_eager": SAdaOAM(lazy=False)}
    for kind in ("full", "sparse", "randomized", "hash", "fd"):
        models["OPAUC_" + kind] = OPAUC(covariance=kind, sketch_size=3, random_state=0)
    models.update(  # the l1 balls are active at R = 1; FSAUC ends stages within the run
        SOLAM=SOLAM(), SOLAML1=SOLAML1(R=1.0), FSAUC=FSAUC(R=1.0, n_samples=400),
        FSAUC_l2=FSAUC(constraint="l2", n_samples=400),
    )
    report = {}
    for name, model in models.items():
        model.partial_fit(X[:40], y[:40], classes=[-1, 1])
        for Xin in (X, S):  # compile and warm every path first
            model.test_then_train(Xin[40:50], y[40:50])
            model.partial_fit(Xin[50:60], y[50:60])
        def learn():
            for i in range(30):
                lo = 60 + 10 * i
                Xin = X if i % 2 else S
                model.test_then_train(Xin[lo : lo + 5], y[lo : lo + 5])
                model.partial_fit(Xin[lo + 5 : lo + 10], y[lo + 5 : lo + 10])
            for summary in getattr(model, "stats_", []):
                summary.matvec(np.ones(12))
            gc.collect()

        learn()  # the same calls twice: caches are filled by the first round
        state = []
        arrays(model, state, set())
        counts = [sys.getrefcount(a) for a in state]
        before = rtsys.get_allocation_stats()
        learn()
        after = rtsys.get_allocation_stats()
        report[name] = {
            "meminfo_leaked": (after.mi_alloc - before.mi_alloc) - (after.mi_free - before.mi_free),
            "alloc_leaked": (after.alloc - before.alloc) - (after.free - before.free),
            "refcounts_changed": sum(
                now != then for now, then in zip([sys.getrefcount(a) for a in state], counts)
            ),
        }
    for kind in ("full", "sparse", "randomized", "hash", "fd", "exact_sparse"):
        s = ExactSparseCovariance(12) if kind == "exact_sparse" else make_covariance(kind, 12, 3)
        args = (0,) if kind in ("randomized", "hash") else ()
        s.update(S[:10], *args)
        s.matvec(np.ones(12))
        gc.collect()
        state = []
        arrays(s, state, set())
        counts = [sys.getrefcount(a) for a in state]
        before = rtsys.get_allocation_stats()
        for i in range(20):
            s.update((X if i % 2 else S)[10 * i : 10 * i + 10], *args)
            s.matvec(np.ones(12))
        gc.collect()
        after = rtsys.get_allocation_stats()
        report["summary_" + kind] = {
            "meminfo_leaked": (after.mi_alloc - before.mi_alloc) - (after.mi_free - before.mi_free),
            "alloc_leaked": (after.alloc - before.alloc) - (after.free - before.free),
            "refcounts_changed": sum(
                now != then for now, then in zip([sys.getrefcount(a) for a in state], counts)
            ),
        }
    from aucstream._kernels._compile import REFERENCE_COUNT_RULE
    from numba.core import event

    report["rule"] = REFERENCE_COUNT_RULE in event._registered["numba:compile"]
    print(json.dumps(report))
    """
)


def test_kernels_without_reference_counting_leak_nothing():
    env = {**os.environ, "NUMBA_NRT_STATS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    # every version compiled in that interpreter was checked by the compile policy
    assert report.pop("rule") is True
    assert len(report) == 18
    for name, found in report.items():
        assert found == {"meminfo_leaked": 0, "alloc_leaked": 0, "refcounts_changed": 0}, name


# ------------------------------------------- the compile policy's rules, enforced
KERNELS = """
from aucstream._kernels import jit


@jit
def view(a):  # returns an array, not inlined
    return a


@jit(borrowing=True)
def borrows_view(a):  # borrowing code calling it
    return view(a)[0]


@jit
def counts_view(a):  # code with reference counts calling it
    return view(a).sum()


@jit(inline="always")
def inlined_view(a):
    return a


@jit(borrowing=True)
def borrows_inlined(a):
    return inlined_view(a)[0] + inlined_view(a)[-1]


@jit(borrowing=True)
def returns_argument(a):
    return a


@jit(borrowing=True)
def returns_number(a):
    a[0] += 1.0
    return a.shape[0]
"""


@pytest.fixture
def kernels(tmp_path, monkeypatch):
    """Functions compiled by the policy in a new folder (so in a new numba cache: each
    test compiles them)."""
    name = f"nrt_rule_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(KERNELS)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    yield module
    sys.modules.pop(name, None)


def test_the_rule_listens_to_every_compilation():
    assert REFERENCE_COUNT_RULE in event._registered["numba:compile"]
    # the kernels' shared helper returning arrays is inlined into both kinds of code
    assert own_and_opposite.targetoptions.get("inline") == "always"


def test_a_borrowing_function_returning_an_array_is_refused(kernels):
    a = np.ones(3)
    for _ in range(2):  # nothing refused is kept: a second call is refused again
        with pytest.raises(BorrowingRuleError, match=r"returns_argument.*returns array"):
            kernels.returns_argument(a)


def test_a_helper_compiled_for_borrowing_code_then_called_with_counts_is_refused(kernels):
    a = np.ones(3)
    with pytest.raises(BorrowingRuleError, match=r"\.view\(.*without reference counting"):
        kernels.borrows_view(a)
    assert kernels.counts_view(a) == 3.0  # the refused version was not kept
    assert not kernels.borrows_view.overloads


def test_a_helper_compiled_with_counts_then_called_by_borrowing_code_is_refused(kernels):
    a = np.ones(3)
    assert kernels.counts_view(a) == 3.0
    with pytest.raises(BorrowingRuleError, match=r"borrows_view.*calls .*\.view, which returns"):
        kernels.borrows_view(a)


def test_the_allowed_forms_compile(kernels):
    a = np.arange(3.0)
    checked = REFERENCE_COUNT_RULE.checked
    assert kernels.borrows_inlined(a) == 2.0
    assert kernels.returns_number(a) == 3 and a[0] == 1.0
    assert REFERENCE_COUNT_RULE.checked >= checked + 2  # both were compiled and checked
