"""Drift detection on the AUC: delay, misses, false alarms and cost, against River.

Streams: ``x ~ N(0, I_20)``, label ``y = 1[w·x + 0.5 e > t]`` with ``e ~ N(0, 1)``,
``||w|| = 1`` and ``t`` set for 10% or 2% positives. The concept ``w`` alternates
between ``w_A`` and ``w_B`` every ``--segment`` rows (30,000), with ``w_B`` at an angle
of 90° (the old scorer falls to AUC 0.5) or 45° from ``w_A``; the stationary
controls keep ``w_A``. Two scorers produce the prequential scores:

- ``fixed``: ``w_A·x`` (AUC about 0.95 on concept A and 0.5 or 0.85 on B), so every
  change moves its AUC;
- ``SOLAM``: ``aucstream.SOLAM`` through ``test_then_train`` in chunks of 1,000, first
  trained on 20,000 unmonitored rows of concept A; at a change its AUC drops, then
  recovers as it learns.

Each (scores, labels) stream is fed in chunks of 1,000 to
``aucstream.drift.AUCDriftDetector`` (RankSignal(window=1000) then a detector; the
signal restarts after each alarm and is NaN while fewer than 30 scores of the other
class are stored, unless a row says otherwise) with
our ADWIN and PageHinkley, and, for comparison, River's ADWIN and PageHinkley on the
same signal (AUCDriftDetector runs a River detector value by value; the benchmark
checks that the alarms are identical to ours with the same parameters). For each
change: the delay (rows from the change to the first alarm before the next change)
or a miss. "Other alarms" counts the alarms that are not the first after a change,
per 100k rows, on the drifting streams (with the learner some are real: its AUC
recovers); "false alarms" counts every alarm on the stationary controls, per 100k
rows.

Cost: microseconds per example of the whole ``update_many`` (signal + detector), and
of the detector alone on the precomputed signal: ours (one compiled loop per chunk)
against River's detector called value by value in the same run.

Usage::

    python benchmarks/bench_drift_detectors.py [--quick] [--out docs/results/drift_detectors.md]
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np

from aucstream import SOLAM
from aucstream.drift import ADWIN, AUCDriftDetector, PageHinkley, RankSignal

ROOT = Path(__file__).resolve().parents[1]
D = 20
CHUNK = 1000
WINDOW = 1000


def make_stream(rate, angle, scorer, n, segment, seed):
    """Scores and labels of one monitored stream, and its change points."""
    rng = np.random.default_rng(seed)
    w_a = rng.normal(size=D)
    w_a /= np.linalg.norm(w_a)
    u = rng.normal(size=D)
    u -= (u @ w_a) * w_a
    u /= np.linalg.norm(u)
    rad = np.deg2rad(angle)
    w_b = np.cos(rad) * w_a + np.sin(rad) * u
    burn = 20_000 if scorer == "SOLAM" else 0
    X = rng.normal(size=(burn + n, D))
    segment_of = np.r_[np.zeros(burn, int), np.arange(n) // segment]
    use_b = (segment_of % 2 == 1) if angle else np.zeros(burn + n, bool)
    margin = np.where(use_b, X @ w_b, X @ w_a) + 0.5 * rng.normal(size=burn + n)
    t = np.quantile(rng.normal(size=200_000) * np.sqrt(1.25), 1 - rate)
    y = (margin > t).astype(int)
    if scorer == "fixed":
        scores = X @ w_a
    else:
        model = SOLAM()
        scores = np.concatenate(
            [
                model.test_then_train(X[i : i + CHUNK], y[i : i + CHUNK])
                for i in range(0, burn + n, CHUNK)
            ]
        )
    changes = list(range(segment, n, segment)) if angle else []
    return scores[burn:], y[burn:], changes


def contenders(river):
    """(name, factory, name of the row it must equal): ours and River's on the same
    signal. Every AUCDriftDetector has window=1000 and, unless named, min_other=30 and
    restart_signal=True (the defaults)."""
    rows = [
        ("ADWIN() [default]", lambda: AUCDriftDetector(), "ADWIN", {}),
        ("ADWIN(), min_other=1", lambda: AUCDriftDetector(min_other=1), None, None),
        (
            "ADWIN(), restart_signal=False",
            lambda: AUCDriftDetector(restart_signal=False),
            None,
            None,
        ),
        ("ADWIN(delta=1e-4)", lambda: AUCDriftDetector(ADWIN(delta=1e-4)), None, None),
        ("PageHinkley()", lambda: AUCDriftDetector(PageHinkley()), "PageHinkley", {}),
        (
            "PageHinkley(threshold=25)",
            lambda: AUCDriftDetector(PageHinkley(threshold=25.0)),
            None,
            None,
        ),
    ]
    out = []
    for name, make, river_name, params in rows:
        out.append((name, make, None))
        if river is not None and river_name is not None:
            cls = getattr(river, river_name)
            out.append(
                (
                    f"River {river_name}() on the same signal",
                    lambda c=cls, p=params: AUCDriftDetector(c(**p)),
                    name,
                )
            )
    return out


def run(make, scores, y):
    det = make()
    alarms, start = [], time.perf_counter()
    for i in range(0, y.size, CHUNK):
        alarms.extend(det.update_many(scores[i : i + CHUNK], y[i : i + CHUNK]) + i)
    return np.array(alarms, dtype=np.int64), time.perf_counter() - start


def score(alarms, changes, n):
    """Delays of detected changes, misses, and the alarms that are not first detections."""
    bounds = [*changes, n]
    delays, firsts = [], set()
    for c, end in zip(changes, bounds[1:]):
        hits = alarms[(alarms >= c) & (alarms < end)]
        if hits.size:
            delays.append(int(hits[0] - c))
            firsts.add(int(hits[0]))
    return delays, len(changes) - len(delays), len(alarms) - len(firsts)


def detector_cost(values, river):
    """µs per value of the detectors alone on a signal: ours in one call, River's loop."""
    values = values[~np.isnan(values)]
    out = {}
    for name, ours, theirs in [
        ("ADWIN", ADWIN, getattr(river, "ADWIN", None)),
        ("PageHinkley", PageHinkley, getattr(river, "PageHinkley", None)),
    ]:
        best_ours = best_theirs = np.inf
        for _ in range(3):
            det = ours()
            t = time.perf_counter()
            for i in range(0, values.size, CHUNK):
                det.update_many(values[i : i + CHUNK])
            best_ours = min(best_ours, time.perf_counter() - t)
            if theirs is not None:
                det, listed = theirs(), values.tolist()
                t = time.perf_counter()
                for v in listed:
                    det.update(v)
                best_theirs = min(best_theirs, time.perf_counter() - t)
        out[name] = (1e6 * best_ours / values.size, 1e6 * best_theirs / values.size)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rows (about a minute)")
    parser.add_argument("--segment", type=int, default=30_000)
    parser.add_argument("--out", type=Path, default=ROOT / "docs/results/drift_detectors.md")
    args = parser.parse_args()
    try:
        from river import drift as river
    except ImportError:  # pragma: no cover - optional
        river = None
    segments = 4 if args.quick else 10
    n = segments * args.segment
    n_stationary = (2 if args.quick else 10) * args.segment
    AUCDriftDetector().update_many(*make_stream(0.1, 90, "fixed", 3000, 1000, 0)[:2])  # compile

    streams = {}
    for scorer in ("fixed", "SOLAM"):
        for rate in (0.10, 0.02):
            for angle in (90, 45):
                streams[(scorer, rate, angle)] = make_stream(
                    rate, angle, scorer, n, args.segment, 1
                )
            streams[(scorer, rate, 0)] = make_stream(rate, 0, scorer, n_stationary, args.segment, 2)

    lines = [
        "# Drift detection on the AUC",
        "",
        f"`python benchmarks/bench_drift_detectors.py{' --quick' if args.quick else ''}` "
        f"({platform.machine()}, Python {platform.python_version()}). Changes every "
        f"{args.segment:,} rows, {segments - 1} per drifting stream ({n:,} rows); stationary "
        f"controls of {n_stationary:,} rows. RankSignal(window={WINDOW}), chunks of {CHUNK:,}. "
        "Delay: median [max] rows from a change to its first alarm; missed: changes with no "
        "alarm before the next; other: alarms per 100k rows that are not a first detection; "
        "false: alarms per 100k rows on the stationary controls.",
        "",
    ]
    costs = {}
    for scorer in ("fixed", "SOLAM"):
        for rate in (0.10, 0.02):
            lines += [
                f"## {scorer} scorer, {rate:.0%} positives",
                "",
                "| detector | delay 90° | missed 90° | other 90° | delay 45° | missed 45° | "
                "other 45° | false (stationary) |",
                "|---|---|---|---|---|---|---|---|",
            ]
            results = {}
            for name, make, twin in contenders(river):
                cells = []
                for angle in (90, 45):
                    scores, y, changes = streams[(scorer, rate, angle)]
                    alarms, seconds = run(make, scores, y)
                    results[(name, angle)] = alarms
                    costs.setdefault(name, []).append((seconds, y.size))
                    delays, missed, other = score(alarms, changes, y.size)
                    delay = f"{int(np.median(delays)):,} [{max(delays):,}]" if delays else "–"
                    cells += [delay, f"{missed}/{len(changes)}", f"{1e5 * other / y.size:.1f}"]
                scores, y, _ = streams[(scorer, rate, 0)]
                alarms, seconds = run(make, scores, y)
                results[(name, 0)] = alarms
                costs.setdefault(name, []).append((seconds, y.size))
                cells.append(f"{1e5 * alarms.size / y.size:.1f}")
                if twin is not None:  # River fed the same signal raises the same alarms
                    for angle in (90, 45, 0):
                        same = np.array_equal(results[(name, angle)], results[(twin, angle)])
                        assert same, f"{name} differs from {twin} on {scorer} {rate} {angle}"
                lines.append(f"| {name} | " + " | ".join(cells) + " |")
            lines.append("")

    scores, y, _ = streams[("SOLAM", 0.10, 90)]
    values = RankSignal(WINDOW).update_many(scores, y)
    detector_only = detector_cost(values, river)
    lines += [
        "## Cost",
        "",
        "Whole `AUCDriftDetector.update_many` (signal + detector), µs per example over all "
        "the streams above:",
        "",
        "| detector | µs / example |",
        "|---|---|",
    ]
    for name, runs in costs.items():
        seconds = sum(s for s, _ in runs)
        rows = sum(r for _, r in runs)
        lines.append(f"| {name} | {1e6 * seconds / rows:.3f} |")
    lines += [
        "",
        f"Detector alone on the signal of the SOLAM 10% stream ({np.isfinite(values).sum():,} "
        "values; ours `update_many` per chunk of 1,000, River `update` per value; best of 3):",
        "",
        "| detector | ours µs / value | River µs / value | River / ours |",
        "|---|---|---|---|",
    ]
    for name, (ours, theirs) in detector_only.items():
        lines.append(f"| {name} | {ours:.3f} | {theirs:.3f} | {theirs / ours:.1f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
