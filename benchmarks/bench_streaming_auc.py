"""Streaming AUC: time per pair and accuracy of PrequentialAUC and RollingAUC, against River.

A stream of n (label, score) pairs (balanced labels; scores are probabilities
``sigmoid(z + y)`` with ``z`` standard normal, so River's ``ROCAUC``, whose thresholds
span [0, 1], is on its home ground) is fed to

- ``PrequentialAUC`` (exact, and with ``max_memory``) and ``RollingAUC(window)`` in
  arrays of ``--batch`` pairs, reading ``get()`` after every array (a running display);
- River's ``metrics.ROCAUC`` and ``metrics.RollingROCAUC`` pair by pair (their only
  way), reading ``get()`` at the same points;
- for comparison, ours pair by pair too (one label and one score per call) on the
  smallest stream.

Times are wall-clock microseconds per pair of the whole feeding loop (updates and
reads), the best of ``--repeat`` runs for rows whose first run takes under 5 s, after a
warm-up pass of every contender over 3,000 pairs (numba loads its cache). The error
is the largest ``|get() - exact|`` over the checked reads: every read for the rolling
metrics (exact = ``roc_auc`` of the window), and ``--checks`` evenly spaced reads plus
the last for the prequential ones (exact = ``roc_auc`` of the prefix). River is
optional (``pip install river``); without it its rows are skipped.

Usage::

    python benchmarks/bench_streaming_auc.py [--sizes 100000 1000000] [--batch 1000]
        [--out docs/results/streaming_auc.md]
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import time
from pathlib import Path

import numba
import numpy as np

from aucstream._streaming_auc import PrequentialAUC, RollingAUC
from aucstream.metrics import roc_auc

ROOT = Path(__file__).resolve().parents[1]
WINDOWS = (1000, 10_000)


def stream(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return y, 1.0 / (1.0 + np.exp(-(rng.normal(size=n) + y)))


def exact_at(y, s, end: int, window: int | None) -> float:
    lo = 0 if window is None else max(0, end - window)
    return roc_auc(y[lo:end], s[lo:end])


def feed(metric, y, s, batch: int, window: int | None, checks: set[int], pairwise: bool):
    """Feed the stream; return (seconds per pair, max |error| over the checks, last value)."""
    reads, start = [], time.perf_counter()
    if pairwise:  # River's way: one pair per update, get() every ``batch`` pairs
        labels, scores = y.tolist(), s.tolist()
        for lo in range(0, y.size, batch):
            for i in range(lo, min(lo + batch, y.size)):
                metric.update(labels[i], scores[i])
            value = metric.get()
            reads.append((min(lo + batch, y.size), value))
    else:
        for lo in range(0, y.size, batch):
            value = metric.update(y[lo : lo + batch], s[lo : lo + batch]).get()
            reads.append((min(lo + batch, y.size), value))
    elapsed = time.perf_counter() - start
    errors = [abs(v - exact_at(y, s, end, window)) for end, v in reads if end in checks]
    error = max(errors, default=float("nan"))
    return elapsed / y.size, error, reads[-1][1]


class _Pairwise:
    """Our metrics fed one pair per call (scalars), for the comparison with River."""

    def __init__(self, metric):
        self.metric = metric

    def update(self, label, score):
        self.metric.update(label, score)

    def get(self):
        return self.metric.get()


def contenders(n: int, batch: int, small: bool):
    """(name, feeding, window, factory, pairwise) for every row of the table."""
    rows = [
        ("PrequentialAUC()", f"arrays of {batch}", None, PrequentialAUC, False),
        (
            "PrequentialAUC(max_memory=10000)",
            f"arrays of {batch}",
            None,
            lambda: PrequentialAUC(max_memory=10_000),
            False,
        ),
    ]
    rows += [
        (f"RollingAUC({w})", f"arrays of {batch}", w, lambda w=w: RollingAUC(w), False)
        for w in WINDOWS
    ]
    if small:
        rows.append(
            ("PrequentialAUC()", "pair by pair", None, lambda: _Pairwise(PrequentialAUC()), True)
        )
        rows += [
            (f"RollingAUC({w})", "pair by pair", w, lambda w=w: _Pairwise(RollingAUC(w)), True)
            for w in WINDOWS
        ]
    try:
        from river import metrics
    except ImportError:
        print("river is not installed: its rows are skipped (pip install river)")
        return rows
    rows += [
        ("river ROCAUC(n_thresholds=10)", "pair by pair", None, metrics.ROCAUC, True),
        (
            "river ROCAUC(n_thresholds=100)",
            "pair by pair",
            None,
            lambda: metrics.ROCAUC(n_thresholds=100),
            True,
        ),
    ]
    rows += [
        (
            f"river RollingROCAUC({w})",
            "pair by pair",
            w,
            lambda w=w: metrics.RollingROCAUC(window_size=w),
            True,
        )
        for w in WINDOWS
    ]
    return rows


def machine() -> str:
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        lscpu = "\n".join(lscpu.splitlines()[:10])
    except (OSError, subprocess.CalledProcessError):
        lscpu = platform.processor()
    try:
        import river

        river_version = river.__version__
    except ImportError:
        river_version = "not installed"
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    return (
        f"```\n{lscpu}\n```\n\nPython {platform.python_version()}, numpy {np.__version__}, "
        f"numba {numba.__version__}, river {river_version}; load average at the end of "
        f"the run: {load} (the machine is shared, so times are noisy)."
    )


def measure(sizes: list[int], batch: int = 1000, checks: int = 10, repeat: int = 3) -> list[dict]:
    """One row per (stream size, contender); ours carry their speed against River's
    ``ROCAUC(n_thresholds=10)`` fed the same stream in the same run."""
    y0, s0 = stream(3000, seed=1)
    for _, _, _, make, pairwise in contenders(3000, batch, True):  # warm-up
        feed(make(), y0, s0, batch, None, set(), pairwise)
    rows = []
    for n in sizes:
        y, s = stream(n)
        ends = list(range(batch, n, batch)) + [n]
        checked = {ends[int(i)] for i in np.linspace(0, len(ends) - 1, checks)}
        block = []
        for name, fed, window, make, pairwise in contenders(n, batch, n == min(sizes)):
            metric = make()
            checks_here = set(ends) if window is not None else checked
            per_pair, error, last = feed(metric, y, s, batch, window, checks_here, pairwise)
            for _ in range(repeat - 1 if per_pair * n < 5 else 0):
                per_pair = min(per_pair, feed(make(), y, s, batch, window, set(), pairwise)[0])
            bound = metric.error_bound() if isinstance(metric, PrequentialAUC) else 0.0
            block.append(
                {
                    "pairs": n,
                    "metric": name,
                    "fed_as": fed,
                    "us_per_pair": round(per_pair * 1e6, 3),
                    "max_abs_error": float(f"{error:.2g}"),
                    "error_bound": float(f"{bound:.2g}"),
                    "final_value": round(float(last), 6),
                }
            )
            print(block[-1], flush=True)
        river = [r for r in block if r["metric"] == "river ROCAUC(n_thresholds=10)"]
        for row in block:
            if river and not row["metric"].startswith("river"):
                row["peer"] = "river ROCAUC(n_thresholds=10)"
                row["speed_vs_peer"] = round(river[0]["us_per_pair"] / row["us_per_pair"], 2)
        rows += block
    return rows


def run(quick: bool = False) -> list[dict]:
    """The entry point of ``benchmarks/run.py``."""
    return measure([20_000] if quick else [100_000, 1_000_000], repeat=1 if quick else 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--checks", type=int, default=10)
    parser.add_argument(
        "--repeat", type=int, default=3, help="best of this many runs for rows under 5 s"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "docs/results/streaming_auc.md")
    args = parser.parse_args()
    rows = measure(args.sizes, args.batch, args.checks, args.repeat)
    lines = [
        "| pairs | metric | fed as | µs per pair | max abs error vs exact | final value |",
        "|---:|---|---|---:|---:|---:|",
    ]
    for r in rows:
        note = f" (bound {r['error_bound']:.1e})" if r["error_bound"] > 0 else ""
        cells = [f"{r['pairs']:,}", r["metric"], r["fed_as"], f"{r['us_per_pair']:.2f}"]
        cells += [f"{r['max_abs_error']:.1e}{note}", f"{r['final_value']:.6f}"]
        lines.append("| " + " | ".join(cells) + " |")
    report = [
        "# Streaming AUC: time per pair and accuracy",
        "",
        "Written by `benchmarks/bench_streaming_auc.py` "
        f"(`--sizes {' '.join(map(str, args.sizes))} --batch {args.batch} "
        f"--repeat {args.repeat}`).",
        "",
        __doc__.split("Usage::")[0].split("\n", 2)[2].strip(),
        "",
        *lines,
        "",
        "## Machine",
        "",
        machine(),
        "",
    ]
    args.out.write_text("\n".join(report))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
