"""Run every benchmark and write their ratios to docs/benchmarks.md.

Each benchmark module in this folder that defines ``run(quick: bool) -> list[dict]``
is run in turn (``bench_base``: per-call costs of learning one example;
``bench_readers``: the file readers; ``bench_throughput``: every online learner at
chunks of 10,000; ``bench_opauc``: OPAUC's kernels against a BLAS loop;
``bench_linear``: the O(d) learners; ``bench_streaming_auc``: the streaming AUC
against River; ``bench_highdim``: the sketches at 10^6 features; ``bench_onepass``:
the tuning-free search against offline tuning; ``bench_scale``: a Dask pass against
a serial one; ``bench_scaler``: the online scaler against scikit-learn's).
A module that is missing, has no such ``run``, or fails is listed as skipped or
failed, with the reason, and the others still run. Every row a module returns is
one line of its table in the report; the ratios in it compare measurements of the
same run (a peer measured on the same data in the same process).

The report starts with a description of the machine (CPU model, cores, memory, load
average before and after, Python and library versions, date, commit), so that
anyone can re-measure and compare.

Usage::

    python benchmarks/run.py [--quick] [--only bench_base bench_readers]
                             [--output docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import inspect
import os
import platform
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
#: The benchmark modules, in the order of the report.
MODULES = [
    "bench_base",
    "bench_readers",
    "bench_throughput",
    "bench_opauc",
    "bench_linear",
    "bench_streaming_auc",
    "bench_highdim",
    "bench_onepass",
    "bench_scale",
    "bench_scaler",
]
_LIBRARIES = ["numpy", "scipy", "numba", "scikit-learn", "pandas", "river", "aucstream"]


def _lscpu() -> dict[str, str]:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    fields = {}
    for line in out.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    return fields


def _memory() -> str:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    return "unknown"


def _version(name: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def _commit() -> str:
    try:
        commit = _git("rev-parse", "--short", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + (" (with uncommitted changes)" if dirty else "")


def _load() -> str:
    try:
        return " / ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unknown"


def machine(load_before: str, load_after: str) -> list[str]:
    """Lines describing the machine and the software of this run."""
    cpu = _lscpu()
    lines = [
        f"- CPU: {cpu.get('Model name', platform.processor() or 'unknown')}",
        f"- cores: {os.cpu_count()} logical"
        + (
            f" ({cpu['Core(s) per socket']} per socket, {cpu['Socket(s)']} socket(s), "
            f"{cpu.get('Thread(s) per core', '?')} thread(s) per core)"
            if "Core(s) per socket" in cpu and "Socket(s)" in cpu
            else ""
        ),
        f"- memory: {_memory()}",
        f"- load average (1/5/15 min): {load_before} before, {load_after} after",
        f"- OS: {platform.platform()}",
        f"- Python {platform.python_version()}; "
        + ", ".join(f"{name} {_version(name)}" for name in _LIBRARIES),
        f"- date: {dt.datetime.now(dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- commit: {_commit()}",
    ]
    return lines


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value).replace("|", "\\|")


def tables(rows: list[dict]) -> list[str]:
    """Markdown tables of the rows: one per run of consecutive rows with the same keys."""
    lines: list[str] = []
    start = 0
    while start < len(rows):
        columns = list(rows[start])
        stop = start
        while stop < len(rows) and list(rows[stop]) == columns:
            stop += 1
        lines.extend(["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)])
        for row in rows[start:stop]:
            lines.append("| " + " | ".join(_cell(row[k]) for k in columns) + " |")
        lines.append("")
        start = stop
    return lines


def _entry_point(module):
    """The module's ``run(quick)``, or None with the reason."""
    run = getattr(module, "run", None)
    if run is None:
        return None, "no run(quick) function"
    try:
        signature = inspect.signature(run)
        signature.bind(quick=True)
    except (TypeError, ValueError):
        return None, f"run{inspect.signature(run)} does not take quick (not a run(quick) entry)"
    return run, ""


def run_all(names: list[str], quick: bool) -> list[tuple[str, str, list[dict], str, float]]:
    """(module, status, rows, note, seconds) for each benchmark module."""
    sys.path.insert(0, str(HERE))
    results = []
    for name in names:
        if not (HERE / f"{name}.py").exists():
            results.append((name, "skipped", [], "not present", 0.0))
            continue
        start = time.perf_counter()
        try:
            module = importlib.import_module(name)
            run, reason = _entry_point(module)
            if run is None:
                results.append((name, "skipped", [], reason, 0.0))
                continue
            print(f"running {name} ...", file=sys.stderr, flush=True)
            rows = list(run(quick=quick))
        except Exception as error:  # noqa: BLE001 - reported, the others still run
            note = "".join(traceback.format_exception_only(type(error), error)).strip()
            results.append((name, "failed", [], note, time.perf_counter() - start))
            print(traceback.format_exc(), file=sys.stderr)
            continue
        results.append((name, "ok", rows, "", time.perf_counter() - start))
    return results


def report(results, quick: bool, load_before: str, load_after: str) -> str:
    lines = [
        "# Benchmarks",
        "",
        "Written by `python benchmarks/run.py"
        + (" --quick" if quick else "")
        + "` (re-run it to measure on your machine). Each table is one module of "
        "`benchmarks/`; see its docstring for what is measured and how. Ratios "
        "(`speed_vs_peer`, `fast_over_full`, ...) compare two measurements of the same "
        "run; above 1 means aucstream is faster.",
        "",
        "## Machine",
        "",
        *machine(load_before, load_after),
        "",
    ]
    for name, status, rows, note, seconds in results:
        lines.append(f"## {name}")
        lines.append("")
        if status != "ok":
            lines.extend([f"{status}: {note}", ""])
            continue
        module = sys.modules.get(name)
        doc = (module.__doc__ or "").strip().splitlines() if module else []
        if doc:
            lines.extend([doc[0], ""])
        lines.extend(tables(rows) if rows else ["(no rows)", ""])
        lines.extend([f"({seconds:.0f} s)", ""])
    return "\n".join(lines).rstrip() + "\n"


def standalone(run, doc: str, argv=None) -> None:
    """``python benchmarks/bench_X.py [--quick]``: print the rows of one module."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller data, fewer rounds")
    args = parser.parse_args(argv)
    for row in run(args.quick):
        print(row)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller data, fewer rounds")
    parser.add_argument("--only", nargs="+", default=None, help="these modules only")
    parser.add_argument("--output", default=str(ROOT / "docs" / "benchmarks.md"))
    args = parser.parse_args(argv)
    unknown = set(args.only or []) - set(MODULES)
    names = args.only or MODULES
    if unknown:
        names = [n for n in names if n in MODULES] + sorted(unknown)
    load_before = _load()
    results = run_all(names, args.quick)
    text = report(results, args.quick, load_before, _load())
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text)
    print(f"wrote {output}", file=sys.stderr)


if __name__ == "__main__":
    main()
