"""One BLAS thread for the products of a step (threadpoolctl, a dependency of
scikit-learn).

The learners' matrix products inside a pass (frequent directions' shrinks, the
low-rank OPAUC's re-basing) are many small ``dgemm`` calls: BLAS threads competing
with other processes for busy cores made them many times slower (a d x tau Gram matrix
took over ten times as long at d = 10^6, ``benchmarks/bench_highdim.py``), and one
thread makes their results independent of the BLAS thread count.

The controller is built once per process: building one (what threadpoolctl's
``threadpool_limits`` does at every call) inspects every loaded library, reading
files, far more work than limiting the threads of an existing controller.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

__all__ = ["one_blas_thread"]

_CONTROLLER: list = []


def one_blas_thread() -> AbstractContextManager:
    """A context in which BLAS runs on one thread."""
    if not _CONTROLLER:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1, user_api="blas")
