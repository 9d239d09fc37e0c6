"""Scale-out: ParallelPass throughput with 1 and 2 Dask workers, bytes per partition.

What is measured (``run(quick)`` returns the rows; ``python benchmarks/bench_scale.py``
prints them as markdown):

- **throughput** of ``ParallelPass(OPAUC(), strategy="statistics")`` (class summaries
  per partition, a tree of merges, the closed-form solve) on a generated stream of
  ``--rows`` dense rows with ``--d`` features in 8 partitions, on a
  ``LocalCluster(n_workers=k, threads_per_worker=1, processes=True)`` for k = 1 and
  2. The stream is generated and persisted on the workers before the clock starts (as
  data already in a cluster's memory would be); the clock covers the whole ``fit``:
  graph, partition tasks, merges, transfer to the client, solve. Best of
  ``--repeat``. The ratio of 2 workers to 1 is the speed-up. The CPU seconds the
  worker processes used per fit (``time.process_time`` in each, summed) tell the
  work from the waiting: on a loaded machine the wall time exceeds it;
- **the single-process peer** on the same rows: ``FullCovariance.update`` of each
  class in one process without Dask (what one worker computes, without the
  scheduler), and one-pass ``OPAUC().fit`` (on a prefix of the stream; its rate is
  rows per second), the learner whose objective the statistics strategy solves
  exactly;
- **bytes per partition**: what each partition task ships to its merge
  (``partition_nbytes_`` for the full covariance; the state arrays of each summary
  kind for two classes at several d), and the time of one merge and of the final
  solve at several d, for the projection in ``docs/results/scale_out.md``.

The machine's load average is recorded before and after: on a shared machine the
2-worker speed-up is bounded by the cores actually free.

Usage::

    python benchmarks/bench_scale.py [--quick]
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import time

import numpy as np

N_PARTITIONS = 8


def _stream(dask_array, n_rows: int, d: int, seed: int = 0):
    """Rows drawn on the workers: Gaussian features, labels from a noisy linear rule."""
    rng = dask_array.random.default_rng(seed)
    chunk = -(-n_rows // N_PARTITIONS)
    X = rng.normal(size=(n_rows, d), chunks=(chunk, d))
    w = np.linspace(-1.0, 1.0, d)
    y = (X @ w + rng.normal(size=n_rows, chunks=chunk)) > 0
    return X, y


def _best(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def throughput(n_rows: int, d: int, repeat: int) -> list[dict]:
    """ParallelPass on 1 and 2 workers, and the single-process peers."""
    import dask.array as da
    import distributed

    from aucstream import OPAUC
    from aucstream.covariance import FullCovariance
    from aucstream.dask import ParallelPass

    rows: list[dict] = []
    reference = None
    for workers in (1, 2):
        cluster = distributed.LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        )
        with distributed.Client(cluster) as client:
            X, y = _stream(da, n_rows, d)
            X, y = client.persist([X, y])
            distributed.wait([X, y])
            ParallelPass(OPAUC()).fit(X[:1000], y[:1000])  # workers load the kernels
            model = None

            def fit(X=X, y=y):
                nonlocal model
                model = ParallelPass(OPAUC()).fit(X, y)

            cpu_before = sum(client.run(time.process_time).values())
            seconds = _best(fit, repeat)
            cpu = (sum(client.run(time.process_time).values()) - cpu_before) / repeat
            rows.append(
                {
                    "name": "ParallelPass statistics (OPAUC full)",
                    "workers": workers,
                    "rows": n_rows,
                    "d": d,
                    "seconds": seconds,
                    "rows_per_s": n_rows / seconds,
                    "bytes_per_partition": int(model.partition_nbytes_.max()),
                    "worker_cpu_seconds": cpu,
                }
            )
            if reference is None:
                reference = model.coef_
                Xl, yl = X.compute(), y.compute()
            else:
                rows[-1]["same_weights_as_1_worker"] = bool(np.array_equal(model.coef_, reference))
        cluster.close()
    rows[1]["ratio"] = rows[0]["seconds"] / rows[1]["seconds"]
    rows[1]["peer"] = "ParallelPass, 1 worker"

    def summaries():
        FullCovariance(d).update(Xl[yl])
        FullCovariance(d).update(Xl[~yl])

    seconds = _best(summaries, repeat)
    rows.append(
        {
            "name": "FullCovariance.update, 1 process, no Dask",
            "workers": 0,
            "rows": n_rows,
            "d": d,
            "seconds": seconds,
            "rows_per_s": n_rows / seconds,
        }
    )
    prefix = min(n_rows, 200_000)
    OPAUC().fit(Xl[:1000], yl[:1000])
    seconds = _best(lambda: OPAUC().fit(Xl[:prefix], yl[:prefix]), repeat)
    rows.append(
        {
            "name": "OPAUC one pass, 1 process",
            "workers": 0,
            "rows": prefix,
            "d": d,
            "seconds": seconds,
            "rows_per_s": prefix / seconds,
        }
    )
    for row in rows[2:]:
        row["ratio"] = rows[1]["rows_per_s"] / row["rows_per_s"]
        row["peer"] = f"{row['name']} (ratio = ParallelPass 2 workers / this)"
    return rows


def shipped_bytes(dims: list[int], tau: int = 50) -> list[dict]:
    """Bytes of the two class summaries a partition ships, per kind and d."""
    from aucstream.covariance import make_covariance
    from aucstream.dask import _nbytes

    rows = []
    for d in dims:
        for kind in ("full", "randomized", "hash", "fd", "sparse"):
            if kind == "full" and d > 4000:  # formula, checked against real objects below
                nbytes = 2 * 8 * (d * d + d + 2)  # scatter, sum, count, weight
            else:
                nbytes = 2 * _nbytes(make_covariance(kind, d, tau))
            rows.append(
                {"name": f"bytes per partition, {kind}", "d": d, "tau": tau, "bytes": nbytes}
            )
    return rows


def merge_and_solve(dims: list[int], repeat: int) -> list[dict]:
    """Time of one merge of two full summaries and of the closed-form solve, exact
    (full, O(d^3)) and low-rank (frequent directions, tau = 50, O(d tau^2))."""
    from aucstream.covariance import FullCovariance, make_covariance, solve_from_statistics

    rows = []
    rng = np.random.default_rng(0)
    for d in dims:
        X = rng.normal(size=(d + 10, d))
        a, b = FullCovariance(d).update(X), FullCovariance(d).update(X[::-1])
        merge = _best(lambda a=a, b=b: a.merge(b), repeat)
        solve = _best(lambda a=a, b=b: solve_from_statistics(a, b, 1e-3), repeat)
        fa = make_covariance("fd", d, 50).update(X)
        fb = make_covariance("fd", d, 50).update(X[::-1])
        low = _best(lambda a=fa, b=fb: solve_from_statistics(a, b, 1e-3), repeat)
        rows.append({"name": "merge two full summaries", "d": d, "seconds": merge})
        rows.append({"name": "closed-form solve (full)", "d": d, "seconds": solve})
        rows.append({"name": "closed-form solve (fd, tau = 50)", "d": d, "seconds": low})
    return rows


def run(quick: bool) -> list[dict]:
    """Every row of this benchmark (see the module docstring)."""
    n_rows = 400_000 if quick else 2_000_000
    repeat = 1 if quick else 3
    load = os.getloadavg()
    rows = throughput(n_rows, 32, repeat)
    rows += shipped_bytes([123, 1000] if quick else [123, 1000, 10_000, 100_000])
    rows += merge_and_solve([123, 500] if quick else [123, 1000, 2000], repeat)
    after = os.getloadavg()
    for row in rows:
        row["load_before"], row["load_after"] = load[0], after[0]
    return rows


def _markdown(rows: list[dict]) -> str:
    lines = []
    speed = [r for r in rows if "rows_per_s" in r]
    lines += [
        "| contender | workers | rows | d | seconds | workers' CPU s | rows/s | ratio | peer |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in speed:
        cpu = f"{r['worker_cpu_seconds']:.2f}" if "worker_cpu_seconds" in r else "-"
        lines.append(
            f"| {r['name']} | {r['workers'] or '-'} | {r['rows']:,} | {r['d']} | "
            f"{r['seconds']:.2f} | {cpu} | {r['rows_per_s']:,.0f} | "
            f"{r.get('ratio', float('nan')):.2f} | {r.get('peer', '')} |"
        )
    lines += ["", "| shipped per partition (2 classes) | d | tau | bytes |", "|---|---:|---:|---:|"]
    for r in rows:
        if "bytes" in r:
            lines.append(f"| {r['name']} | {r['d']:,} | {r['tau']} | {r['bytes']:,} |")
    lines += ["", "| step | d | seconds |", "|---|---:|---:|"]
    for r in rows:
        if "seconds" in r and "rows_per_s" not in r:
            lines.append(f"| {r['name']} | {r['d']:,} | {r['seconds']:.4f} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    rows = run(args.quick)
    import dask
    import numba

    import aucstream

    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}, "
        f"dask {dask.__version__}, aucstream {aucstream.__version__}; load average "
        f"{rows[0]['load_before']:.2f} before, {rows[0]['load_after']:.2f} after"
    )
    print(_markdown(rows))
    same = [r.get("same_weights_as_1_worker") for r in rows if r.get("workers") == 2]
    print(f"\n2 workers give the same weights as 1 worker, bit for bit: {same}")


if __name__ == "__main__":
    main()
