"""The kernels compiled without reference counting (``borrowing_njit``,
``borrowing_step``, and SOLAM's and FSAUC's chunk kernels: numba's ``_nrt=False``)
neither leak nor release what they do not own.

See ``aucstream.covariance._base`` for the argument. A leak would show as numba
memory-info blocks allocated and never freed, or as reference counts of the
learners' arrays that grow from call to call; a release of references never taken
as blocks freed more often than allocated, counts that fall, or a crash. The learning
runs in a subprocess with numba's allocation statistics on (NUMBA_NRT_STATS=1, read
at import), so a crash fails the test instead of the test run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

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
    def check_dispatchers():
        import numba as nb
        from aucstream.covariance import own_and_opposite

        def holds_array(t):
            if isinstance(t, nb.types.Array):
                return True
            return any(holds_array(u) for u in getattr(t, "types", ()) if u is not t)

        bad, checked = [], 0
        assert own_and_opposite.targetoptions.get("inline") == "always"
        for mod in [m for n, m in list(sys.modules.items()) if n.startswith("aucstream.")]:
            for value in vars(mod).values():
                if not isinstance(value, nb.core.registry.CPUDispatcher):
                    continue
                borrowing = value.targetoptions.get("_nrt") is False
                inlined = value.targetoptions.get("inline") == "always"
                for result in value.overloads.values():
                    checked += 1
                    if holds_array(result.signature.return_type) and (borrowing or not inlined):
                        if borrowing or value.py_func.__module__.startswith(
                            (
                                "aucstream.covariance", "aucstream.opauc", "aucstream.adaoam",
                                "aucstream.solam", "aucstream.fsauc", "aucstream._saddle",
                                "aucstream._kernels", "aucstream.projections",
                            )
                        ):
                            bad.append(value.py_func.__qualname__)
        return {"bad": sorted(set(bad)), "checked": checked}

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
    report["dispatchers"] = check_dispatchers()
    print(json.dumps(report))
    """
)


def test_kernels_without_reference_counting_leak_nothing(tmp_path):
    # a fresh numba cache: every function is compiled here, so each compiled version
    # (callees included) is visible to the check of the return types
    env = {**os.environ, "NUMBA_NRT_STATS": "1", "NUMBA_CACHE_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    dispatchers = report.pop("dispatchers")
    # no function compiled without reference counting returns an array, and every
    # kernel-side function that returns arrays is inlined (see _base)
    assert dispatchers["bad"] == [] and dispatchers["checked"] > 50, dispatchers
    assert len(report) == 18
    for name, found in report.items():
        assert found == {"meminfo_leaked": 0, "alloc_leaked": 0, "refcounts_changed": 0}, name
