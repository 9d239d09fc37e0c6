"""First runs: a learner's first fit with numba's cache empty, after ``aucstream compile``,
and the compile itself with one process and with several.

Each measurement runs in a fresh interpreter with its own empty ``NUMBA_CACHE_DIR``
(a temporary folder), as a first run after an install:

- **cold**: ``LEARNER().fit`` of ``--rows`` dense rows of 20 features (the script's
  wall clock from its start, import included), and how many functions numba compiled;
- **compile**: ``aucstream compile --learners LEARNER ... --jobs J`` for each ``J`` of
  ``--jobs`` (wall clock and the CPU seconds of the process and its children);
- **after**: the cold script again in the folder the compile filled (a later process:
  kernels loaded, none compiled).

The ratio cold / after is what a first run gains; compile with 1 job / with J jobs is
the parallel speed-up (bounded by the cores, and by the largest learner's compile).

Usage::

    python benchmarks/bench_compile.py [--learners StreamPipeline] [--rows 5000]
        [--jobs 1 2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

FIRST = """
import json, sys, time
from numba.core import event
compiled = []
class Count(event.Listener):
    def on_start(self, e): pass
    def on_end(self, e): compiled.append(1)
event.register("numba:compile", Count())
import numpy as np
import aucstream
rng = np.random.default_rng(0)
X = rng.normal(size=(ROWS, 20)); y = (X[:, 0] + rng.normal(size=ROWS) > 1).astype(int)
start = time.perf_counter()
getattr(aucstream, NAME)().fit(X, y)
print(json.dumps({"fit_s": time.perf_counter() - start, "compiles": len(compiled)}))
"""


def _run(argv: list[str], cache: str) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the children, stdout) of ``argv`` with ``cache``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        argv,
        env={**os.environ, "NUMBA_CACHE_DIR": cache},
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def first_fit(name: str, rows: int, cache: str) -> dict:
    code = FIRST.replace("ROWS", str(rows)).replace("NAME", repr(name))
    wall, cpu, out = _run([sys.executable, "-c", code], cache)
    return {"wall_s": wall, "cpu_s": cpu, **json.loads(out.splitlines()[-1])}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", nargs="+", default=["StreamPipeline"])
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args(argv)
    print("| learner | run | wall s | CPU s | fit s | compiles |")
    print("|---|---|---:|---:|---:|---:|")
    for name in args.learners:
        with tempfile.TemporaryDirectory() as cache:
            r = first_fit(name, args.rows, cache)
        print(
            f"| {name} | cold | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['fit_s']:.2f} "
            f"| {r['compiles']} |"
        )
    for jobs in args.jobs:
        with tempfile.TemporaryDirectory() as cache:
            command = [sys.executable, "-m", "aucstream", "compile", "--jobs", str(jobs)]
            wall, cpu, _ = _run([*command, "--learners", *args.learners], cache)
            names = " ".join(args.learners)
            print(f"| {names} | compile, {jobs} job(s) | {wall:.1f} | {cpu:.1f} | | |")
            for name in args.learners:
                r = first_fit(name, args.rows, cache)
                print(
                    f"| {name} | after | {r['wall_s']:.1f} | {r['cpu_s']:.1f} "
                    f"| {r['fit_s']:.2f} | {r['compiles']} |"
                )
    load = os.getloadavg()
    print(f"\nload average (1/5/15 min) at the end: {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}")


if __name__ == "__main__":
    main()
