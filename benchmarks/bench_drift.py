"""The one pass that recovers: StreamPipeline() on streams that change.

Streams after Aguiar, Krawczyk & Cano (2023)'s protocol: concepts of ``--concept``
rows (40,000), a minority (positive) class of 10%, 2% or 1% of every concept (exact
counts, rows in random order), and four kinds of stream of three concepts:

- ``abrupt``: concepts A, B, C, switching at once;
- ``gradual``: the same changes spread over ``--width`` rows (20,000) centred on the
  change point: a row of the transition comes from the new concept with a probability
  rising linearly from 0 to 1;
- ``recurring``: A, B, A (the second A sampled afresh from concept A);
- ``stationary``: A only (the control).

Generators, written here in numpy after River's ``datasets.synth`` definitions (River's
own are Python loops; its Agrawal generator was too slow to draw the rare-class
streams and is left out):

- ``SEA``: three uniform features on [0, 10], label ``x1 + x2 <= theta`` with the
  variants' thresholds 8, 9, 7, 9.5 and 10% label noise. A change of threshold does not
  change the ranking by ``x1 + x2``: SEA's drift is invisible to the AUC (the positive
  rate is fixed by the protocol), a control of another kind.
- ``hyperplane``: ten uniform features on [0, 1], label ``w.x > sum(w)/2`` with
  ``w ~ U[0, 1]^10`` drawn anew per concept and 5% label noise.
- ``linear``: issue 30's stream: twenty standard Gaussian features, label
  ``w.x + 0.5 e > t`` with ``w ~ N(0, I)`` (unit norm) drawn anew per concept and
  ``e ~ N(0, 1)`` (the threshold is irrelevant: the protocol fixes the positive rate).
- ``RBF``: ten features, 50 Gaussian centroids (uniform centres, standard deviations
  and weights, random class) drawn anew per concept (River's RandomRBF); not linearly
  separable.

Contenders, each scoring every row before learning it (``test_then_train`` in chunks
of 500): ``StreamPipeline()`` (the default, ``drift="auto"``), ``StreamPipeline
(drift=None)``, ``StreamPipeline(drift=None)`` restarted from scratch at every true
change point (the centre of a gradual change), and River's ``StandardScaler |
LogisticRegression`` (``predict_proba_one`` then ``learn_one``, row by row).

Reported per stream: the mean windowed AUC (exact AUC of 2,000 consecutive
prequential scores, every 500 rows); the recovery time after each abrupt change
(abrupt and recurring streams): rows from the change until a window lying wholly after
it has an AUC within 0.02 of the window just before it (2,000 at best; ``>k`` when it
does not happen before the next change); CPU seconds (``time.process_time``: the
least of ``--repeats`` runs (3) of each pipeline contender, the contenders of a stream
interleaved, run after run, so that a burst of load on the shared machine, which only
ever adds time, touches one run of each rather than the whole of one contender; every
repeat must give the same scores, alarms and reopenings, bit for bit, or the run
stops); the default's alarms. Peak memory (``tracemalloc``, numpy arrays included) is measured
in a separate pass over the first abrupt stream. Plots: windowed AUC over time, true
changes dashed, the default's alarms as red ticks.

Usage::

    python benchmarks/bench_drift.py [--quick] [--out docs/results/drift.md]
                                     [--river-from docs/results/drift.json]
                                     [--rates 0.1 0.02]

``--river-from`` takes River's numbers (mean AUC, recovery, CPU seconds, peak memory)
from an earlier run's JSON instead of running River again: its model and the streams
(generators, seeds, ``--concept``, ``--width``) must be the same; its curves are then
missing from the plots. The report says so.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import time
import tracemalloc
from pathlib import Path

import numpy as np

from aucstream import StreamPipeline
from aucstream.metrics import roc_auc

ROOT = Path(__file__).resolve().parents[1]
CHUNK = 500
WINDOW, STEP = 2000, 500
NEAR = 0.02  # recovery: within this of the pre-change windowed AUC


# ----------------------------------------------------------------------------- data
def _sea(rng, n, variant):
    X = rng.uniform(0, 10, size=(n, 3))
    y = X[:, 0] + X[:, 1] <= (8.0, 9.0, 7.0, 9.5)[variant]
    flip = rng.random(n) < 0.1
    return X, np.where(flip, ~y, y)


def _hyperplane(rng, n, w):
    X = rng.uniform(0, 1, size=(n, w.size))
    y = X @ w > w.sum() / 2
    flip = rng.random(n) < 0.05
    return X, np.where(flip, ~y, y)


def _linear(rng, n, w):
    X = rng.normal(size=(n, w.size))
    s = X @ w + 0.5 * rng.normal(size=n)
    return X, s > 0.5


def _rbf(rng, n, model):
    centres, stds, weights, classes = model
    k = rng.choice(len(weights), size=n, p=weights / weights.sum())
    direction = rng.normal(size=(n, centres.shape[1]))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    X = centres[k] + direction * (rng.normal(size=(n, 1)) * stds[k, None])
    return X, classes[k].astype(bool)


def _concepts(generator: str, seed: int) -> list:
    """Three concept samplers ``f(rng, n) -> (X, y)`` of a generator."""
    rng = np.random.default_rng(seed)
    if generator == "SEA":
        return [lambda r, n, v=v: _sea(r, n, v) for v in (0, 1, 2)]
    if generator == "hyperplane":
        ws = [rng.uniform(0, 1, 10) for _ in range(3)]
        return [lambda r, n, w=w: _hyperplane(r, n, w) for w in ws]
    if generator == "linear":
        ws = [w / np.linalg.norm(w) for w in rng.normal(size=(3, 20))]
        return [lambda r, n, w=w: _linear(r, n, w) for w in ws]
    models = [
        (
            rng.uniform(0, 1, (50, 10)),
            rng.uniform(0, 1, 50) * 0.3,
            rng.uniform(0, 1, 50),
            rng.integers(0, 2, 50),
        )
        for _ in range(3)
    ]
    return [lambda r, n, m=m: _rbf(r, n, m) for m in models]


def _draw(sampler, rng, n, rate):
    """``n`` rows of one concept with exactly ``round(rate n)`` positives, shuffled."""
    n_pos = int(round(rate * n))
    pos, neg = [], []
    have_pos = have_neg = 0
    while have_pos < n_pos or have_neg < n - n_pos:
        X, y = sampler(rng, 4 * n)
        pos.append(X[y])
        neg.append(X[~y])
        have_pos += int(y.sum())
        have_neg += int((~y).sum())
    P = np.vstack(pos)[:n_pos]
    N = np.vstack(neg)[: n - n_pos]
    X = np.vstack([P, N])
    y = np.r_[np.ones(n_pos, int), np.zeros(n - n_pos, int)]
    order = rng.permutation(n)
    return X[order], y[order]


def make_stream(generator, kind, rate, concept, width, seed):
    """``(X, y, change points)`` of one stream."""
    rng = np.random.default_rng(seed + 1)
    concepts = _concepts(generator, seed)
    if kind == "stationary":
        X, y = _draw(concepts[0], rng, 3 * concept, rate)
        return X, y, []
    order = [0, 1, 0] if kind == "recurring" else [0, 1, 2]
    parts = [_draw(concepts[c], rng, concept, rate) for c in order]
    X = np.vstack([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    changes = [concept, 2 * concept]
    if kind == "gradual":  # rows of the transitions drawn from either side's concept
        for i, c in enumerate(changes):
            lo, hi = c - width // 2, c + width // 2
            t = np.arange(lo, hi)
            new = rng.random(t.size) < (t - lo + 0.5) / width
            old_rows = _draw(concepts[order[i]], rng, t.size, rate)
            new_rows = _draw(concepts[order[i + 1]], rng, t.size, rate)
            X[lo:hi] = np.where(new[:, None], new_rows[0], old_rows[0])
            y[lo:hi] = np.where(new, new_rows[1], old_rows[1])
    return X, y, changes


# ------------------------------------------------------------------------ contenders
def run_pipeline(X, y, drift="auto", restarts=()):
    """Prequential scores of StreamPipeline(drift=...) (restarted at ``restarts``),
    CPU seconds, the alarms (positions) of its search and its reopenings (positions:
    the alarms it confirmed, ``aucstream._race_drift``)."""
    scores = np.empty(len(y))
    alarms, reopens = [], []
    cuts = sorted(set(range(0, len(y), CHUNK)) | set(restarts))
    t = time.process_time()
    model = StreamPipeline(drift=drift)
    for a, b in zip(cuts, cuts[1:] + [len(y)]):
        if a in restarts:
            model = StreamPipeline(drift=drift)
        heard = model.estimator_.race_[2] if hasattr(model, "estimator_") else 0
        opened = model.estimator_.race_[1] if hasattr(model, "estimator_") else 0
        scores[a:b] = model.test_then_train(X[a:b], y[a:b], classes=[0, 1])
        race = model.estimator_.race_
        if race[2] != heard:
            alarms.append(int(race[3]))
        if race[1] != opened:
            reopens.append(int(race[0]))
    return scores, time.process_time() - t, alarms, reopens


def _run_contender(name, X, y, changes):
    """``run_pipeline``'s outputs for one contender."""
    if name == "default":
        return run_pipeline(X, y)
    if name == "drift=None":
        return run_pipeline(X, y, drift=None)
    if name == "restarted":
        return run_pipeline(X, y, drift=None, restarts=changes)
    return run_river(X, y)


def run_river(X, y):
    from river import linear_model, preprocessing

    model = preprocessing.StandardScaler() | linear_model.LogisticRegression()
    scores = np.empty(len(y))
    t = time.process_time()
    for i in range(len(y)):
        x = dict(enumerate(X[i].tolist()))
        scores[i] = model.predict_proba_one(x).get(True, 0.0)
        model.learn_one(x, bool(y[i]))
    return scores, time.process_time() - t, [], []


# --------------------------------------------------------------------------- metrics
def windowed(y, s):
    """Exact AUC of each window of WINDOW rows ending at multiples of STEP."""
    ends = np.arange(WINDOW, len(y) + 1, STEP)
    return ends, np.array([roc_auc(y[e - WINDOW : e], s[e - WINDOW : e]) for e in ends])


def recovery(ends, auc, changes, n):
    """Rows from each change until a window wholly after it is within NEAR of the
    window that ends at it (None: not before the next change)."""
    out = []
    bounds = [*changes[1:], n]
    for c, nxt in zip(changes, bounds):
        pre = auc[ends == c]
        if not pre.size:
            out.append(None)
            continue
        ok = (ends >= c + WINDOW) & (ends <= nxt) & (auc >= pre[0] - NEAR)
        out.append(int(ends[ok][0] - c) if ok.any() else None)
    return out


def peak_memory(fn, X, y):
    tracemalloc.start()
    fn(X, y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


# ----------------------------------------------------------------------------- main
CONTENDERS = ("default", "drift=None", "restarted", "River LR")


def detection_delays(alarms, changes, n):
    """Rows from each true change to the default's first alarm after it and before the
    next change (None: no alarm)."""
    out = []
    for c, nxt in zip(changes, [*changes[1:], n]):
        after = [a for a in alarms if c <= a < nxt]
        out.append(after[0] - c if after else None)
    return out


def _earlier_river(path, name="River LR"):
    """A contender's rows of an earlier run, by (generator, kind, rate), and its memory."""
    data = json.loads(Path(path).read_text())
    rows = {(r["generator"], r["kind"], r["rate"]): r[name] for r in data["results"]}
    return rows, data["memory"].get(name)


def run(args):
    every = ["linear", "RBF"] if args.quick else ["SEA", "hyperplane", "linear", "RBF"]
    generators = [g for g in every if not args.generators or g in args.generators]
    rates = args.rates or ([0.10, 0.02] if args.quick else [0.10, 0.02, 0.01])
    kinds = ["abrupt", "gradual", "recurring", "stationary"]
    results = []
    river = _earlier_river(args.river_from) if args.river_from else None
    earlier = {}  # drift=None and restarted of an earlier run (--baselines-from)
    if args.baselines_from:
        earlier = {c: _earlier_river(args.baselines_from, c)[0] for c in CONTENDERS[1:3]}
    for path in args.reuse_from or []:  # every contender not run (--contenders)
        for c in CONTENDERS:
            if c not in args.contenders and c not in earlier:
                try:
                    earlier[c] = _earlier_river(path, c)[0]
                except KeyError:
                    continue
    for rate in rates:
        for generator in generators:
            g_i = every.index(generator)  # (the seed of a generator of the full run)
            for k_i, kind in enumerate(kinds):
                seed = 1000 * g_i + 10 * k_i + int(rate * 100) + args.seed_shift
                X, y, changes = make_stream(generator, kind, rate, args.concept, args.width, seed)
                row = {"generator": generator, "kind": kind, "rate": rate, "changes": changes}
                runs = {}  # a contender's outputs and its CPU seconds of every repeat
                for name in CONTENDERS:
                    if name == "River LR" and river is not None:
                        row[name] = {**river[0][(generator, kind, rate)], "curve": None}
                    elif name in earlier:
                        row[name] = {**earlier[name][(generator, kind, rate)], "curve": None}
                    elif name in args.contenders:
                        runs[name] = None
                repeats = {n: (1 if n == "River LR" else args.repeats) for n in runs}
                for rep in range(max(repeats.values(), default=0)):  # interleaved
                    for name in runs:
                        if rep >= repeats[name]:
                            continue
                        out = _run_contender(name, X, y, changes)
                        if runs[name] is None:
                            runs[name] = (out, [out[1]])
                            continue
                        first, cpus = runs[name]
                        if not (np.array_equal(first[0], out[0]) and first[2:] == out[2:]):
                            raise RuntimeError(f"{name}: a repeat gave other scores")
                        cpus.append(out[1])
                for name, ((s, _, alarms, reopens), cpus) in runs.items():
                    cpu = min(cpus)  # (another process only ever adds time)
                    ends, auc = windowed(y, s)
                    row[name] = {
                        "mean_auc": float(np.nanmean(auc)),
                        "delay": detection_delays(alarms, changes, len(y)),
                        "reopen_delay": detection_delays(reopens, changes, len(y)),
                        "recovery": recovery(ends, auc, changes, len(y))
                        if kind in ("abrupt", "recurring")
                        else [],
                        "cpu": cpu,
                        "cpu_runs": cpus,
                        "alarms": alarms,
                        "reopens": reopens,
                        "curve": auc.tolist(),
                        "ends": ends.tolist(),
                    }
                    print(
                        f"{rate:.2f} {generator} {kind} {name}: "
                        f"{row[name]['mean_auc']:.4f} cpu {cpu:.3f} "
                        f"({', '.join(f'{c:.3f}' for c in cpus)}) "
                        f"rec {row[name]['recovery']} alarms {alarms} reopens {reopens}",
                        flush=True,
                    )
                results.append(row)
    X, y, _ = make_stream("hyperplane", "abrupt", 0.10, args.concept, args.width, 7)
    if args.skip_memory:
        return results, {}
    memory = {
        "default": peak_memory(lambda X, y: run_pipeline(X, y), X, y),
        "drift=None": peak_memory(lambda X, y: run_pipeline(X, y, drift=None), X, y),
        "River LR": river[1]
        if river is not None
        else peak_memory(run_river, X[: len(y) // 4], y[: len(y) // 4]),
    }
    return results, memory


#: ``--set`` names: the watch's settings in ``aucstream._race_drift`` (the confirmation's
#: wait follows the block unless set), and the threshold of its Page-Hinkley detector.
SETTINGS = ("block", "confirm_wait", "confirm_z", "confirm_rows", "threshold")


def apply_settings(pairs) -> None:
    """Patch the watch's settings for this run (``--set NAME=VALUE``)."""
    import functools

    from aucstream import _race_drift
    from aucstream.drift import PageHinkley

    given = dict(pair.split("=", 1) for pair in pairs)
    unknown = set(given) - set(SETTINGS)
    if unknown:
        raise SystemExit(f"--set: unknown {sorted(unknown)}; known: {', '.join(SETTINGS)}")
    if "block" in given:
        _race_drift._DRIFT_BLOCK = int(given["block"])
        _race_drift._CONFIRM_WAIT = 3 * _race_drift._DRIFT_BLOCK
    if "confirm_wait" in given:
        _race_drift._CONFIRM_WAIT = int(given["confirm_wait"])
    if "confirm_z" in given:
        _race_drift._CONFIRM_Z = float(given["confirm_z"])
    if "confirm_rows" in given:
        _race_drift._CONFIRM_ROWS = int(given["confirm_rows"])
    if "threshold" in given:
        _race_drift.PageHinkley = functools.partial(  # type: ignore[misc]
            PageHinkley, threshold=float(given["threshold"])
        )


def _fmt_rec(values):
    return ", ".join("—" if v is None else f"{v:,}" for v in values) or "n/a"


def _warm_up(args) -> None:
    """Load the compiled kernels before any timing (the first stream would pay it)."""
    X, y, _ = make_stream("linear", "abrupt", 0.1, 3000, 1500, 99)
    for drift in ("auto", None):
        run_pipeline(X, y, drift=drift)


def _commit() -> str:
    """The checkout's commit (``+`` when it has uncommitted changes)."""
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--", "src", "benchmarks"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+" if dirty else "")


def report(results, memory, args, out: Path):
    lines = [
        "# One pass that recovers: StreamPipeline() under drift",
        "",
        f"`python benchmarks/bench_drift.py{' --quick' if args.quick else ''}"
        f"{' --rates ' + ' '.join(map(str, args.rates)) if args.rates else ''}"
        f"{' --river-from ' + str(args.river_from) if args.river_from else ''}"
        f"{' --seed-shift ' + str(args.seed_shift) if args.seed_shift else ''}"
        f"{' --repeats ' + str(args.repeats) if args.repeats != 3 else ''}"
        f"{' --generators ' + ' '.join(args.generators) if args.generators else ''}"
        f"{' --skip-memory' if args.skip_memory else ''}"
        f"{' --set ' + ' '.join(args.set) if args.set else ''}"
        f"{' --baselines-from ' + str(args.baselines_from) if args.baselines_from else ''}"
        f"{' --contenders ' + ' '.join(args.contenders) if args.reuse_from else ''}"
        f"{' --reuse-from ' + ' '.join(map(str, args.reuse_from)) if args.reuse_from else ''}` "
        f"at commit `{args.commit}` ({platform.machine()}, Python {platform.python_version()}; "
        f"load average {args.load[0]:.1f} at the start, {args.load[1]:.1f} at the end, on "
        f"{os.cpu_count()} CPUs: the machine is shared and noisy, CPU seconds are "
        "comparable within a row only; each the least of "
        f"{args.repeats} interleaved runs). Concepts of "
        f"{args.concept:,} rows, three per stream; gradual changes {args.width:,} rows wide; "
        f"prequential scores in chunks of {CHUNK}; windowed AUC over {WINDOW:,} rows every "
        f"{STEP}. Recovery: rows after an abrupt change until a window wholly after it is "
        f"within {NEAR} of the window ending at it (— : not before the next change). "
        "The generators and contenders are described in the benchmark's docstring. "
        "Delay: rows from each true change to the default's first alarm after it.",
        "",
    ]
    if args.river_from:
        lines += [
            f"River LR's numbers are those of the earlier run `{args.river_from}` "
            "(the same streams; River was not run again): its curves are not plotted.",
            "",
        ]
    for rate in sorted({r["rate"] for r in results}, reverse=True):
        lines += [
            f"## {rate:.0%} positives",
            "",
            "| stream | default | drift=None | restarted | River LR | default − None "
            "| default − restarted | recovery default [restarted] | delay | alarms "
            "| reopened | CPU default / None |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in (r for r in results if r["rate"] == rate):
            d, n, re, rv = (r[c] for c in CONTENDERS)
            lines.append(
                f"| {r['generator']} {r['kind']} | {d['mean_auc']:.4f} | {n['mean_auc']:.4f} "
                f"| {re['mean_auc']:.4f} | {rv['mean_auc']:.4f} "
                f"| {d['mean_auc'] - n['mean_auc']:+.4f} | {d['mean_auc'] - re['mean_auc']:+.4f} "
                f"| {_fmt_rec(d['recovery'])} [{_fmt_rec(re['recovery'])}] "
                f"| {_fmt_rec(d['delay'])} "
                f"| {', '.join(f'{a:,}' for a in d['alarms']) or '—'} "
                f"| {', '.join(f'{a:,}' for a in d.get('reopens', [])) or '—'} "
                f"| {d['cpu']:.3f} / {n['cpu']:.3f} = {d['cpu'] / n['cpu']:.2f} |"
            )
        lines += [""]
        if _plotted(results):
            lines += [f"![windowed AUC, {rate:.0%} positives](drift_{int(rate * 100)}.png)", ""]
    if _plotted(results) and any((r["generator"], r["kind"]) in EXAMPLES for r in results):
        lines += [
            "One stream of each kind, larger (the highest rate of the run):",
            "",
            "![windowed AUC of one stream of each kind](drift_examples.png)",
            "",
        ]
    lines += _targets(results)
    if args.baselines_from:
        lines += [
            f"drift=None's and the restarted pipeline's numbers (AUC, recovery, CPU seconds) "
            f"are those of the earlier run `{args.baselines_from}` (the same streams; they "
            "do not depend on the drift machinery): their curves are not plotted, and the "
            "CPU ratios compare two runs.",
            "",
        ]
    if args.reuse_from:
        lines += [
            "The contenders not in `--contenders` are those of the earlier runs "
            f"{', '.join(f'`{p}`' for p in args.reuse_from)} (the same streams): their "
            "curves are not plotted, and the CPU ratios compare two runs.",
            "",
        ]
    if not memory:
        lines += ["Peak memory was not measured in this run (`--skip-memory`).", ""]
    lines += (
        [
            "## Peak memory",
            "",
            "`tracemalloc` peak (numpy arrays included) over the hyperplane abrupt stream, "
            "10% positives (River LR: its first quarter; its model does not grow):",
            "",
            "| contender | peak MiB |",
            "|---|---|",
            *[f"| {k} | {v / 2**20:.1f} |" for k, v in memory.items() if v is not None],
            "",
        ]
        if memory
        else []
    )
    out.write_text("\n".join(lines))


def _targets(results):
    """The issue's targets, measured."""

    def pick(kind, rates=None):
        return [r for r in results if r["kind"] == kind and (rates is None or r["rate"] in rates)]

    abrupt = pick("abrupt", (0.10, 0.02))
    gap = [r["default"]["mean_auc"] - r["restarted"]["mean_auc"] for r in abrupt]
    grad = [r["default"]["mean_auc"] - r["drift=None"]["mean_auc"] for r in pick("gradual")]
    stat = [r["default"]["mean_auc"] - r["drift=None"]["mean_auc"] for r in pick("stationary")]
    oracle = [r["restarted"]["mean_auc"] - r["drift=None"]["mean_auc"] for r in pick("gradual")]
    reachable = [g for g, o in zip(grad, oracle) if o >= 0.05]
    recs, fair = [], []
    for r in pick("abrupt") + pick("recurring"):
        recs += [v for v in r["default"]["recovery"]]
        fair += [  # the changes the restarted pipeline recovers from within 5,000 rows
            v
            for v, o in zip(r["default"]["recovery"], r["restarted"]["recovery"])
            if o is not None and o <= 5000
        ]
    within = sum(v is not None and v <= 5000 for v in recs)
    within_fair = sum(v is not None and v <= 5000 for v in fair)
    cost = [r["default"]["cpu"] / r["drift=None"]["cpu"] for r in results]
    total = sum(r["default"]["cpu"] for r in results) / sum(r["drift=None"]["cpu"] for r in results)
    oracle_cost = [
        r["restarted"]["cpu"] / r["drift=None"]["cpu"] for r in results if r["kind"] != "stationary"
    ]

    def verdict(ok):
        return "met" if ok else "**not met**"

    return [
        "## Targets (issue 30), measured",
        "",
        "| target | measured | |",
        "|---|---|---|",
        f"| abrupt, 10% and 2%: default within 0.01 of restarted | worst "
        f"{min(gap):+.4f}, mean {np.mean(gap):+.4f} over {len(gap)} streams "
        f"| {verdict(min(gap) >= -0.01)} |",
        f"| gradual: ≥ +0.05 over drift=None | worst {min(grad):+.4f}, mean "
        f"{np.mean(grad):+.4f} | {verdict(min(grad) >= 0.05)} |",
        f"| gradual, the streams where the restarted pipeline (the oracle) gains ≥ 0.05 over "
        f"drift=None ({len(reachable)} of {len(grad)}): default ≥ +0.05 | worst "
        + (
            f"{min(reachable):+.4f} | {verdict(min(reachable) >= 0.05)} |"
            if reachable
            else "— | n/a |"
        ),
        f"| gradual, oracle (restarted) − drift=None | worst {min(oracle):+.4f}, mean "
        f"{np.mean(oracle):+.4f} | (the ceiling) |",
        f"| stationary: ≥ −0.005 against drift=None | worst {min(stat):+.4f}, mean "
        f"{np.mean(stat):+.4f} | {verdict(min(stat) >= -0.005)} |",
        f"| abrupt change: within 0.02 of the pre-change AUC within 5,000 rows | {within} of "
        f"{len(recs)} changes | {verdict(within == len(recs))} |",
        f"| the same, on the changes the restarted pipeline recovers from within 5,000 rows "
        f"| {within_fair} of {len(fair)} | {verdict(within_fair == len(fair))} |",
        f"| cost ≤ 1.3× drift=None (CPU, per stream) | median {np.median(cost):.2f}, worst "
        f"{max(cost):.2f}; {sum(c <= 1.3 for c in cost)} of {len(cost)} streams ≤ 1.3 "
        f"| {verdict(max(cost) <= 1.3)} |",
        f"| the same, all streams together (sum / sum) | {total:.2f} | {verdict(total <= 1.3)} |",
        f"| restarted (the oracle) / drift=None, streams that change | median "
        f"{np.median(oracle_cost):.2f}, worst {max(oracle_cost):.2f} | (for scale) |"
        if oracle_cost
        else "",
        "",
    ]


def _plotted(results) -> bool:
    """Whether a contender of this run has curves (the reused ones have none)."""
    return any(r[c].get("curve") is not None for r in results for c in CONTENDERS if c in r)


#: The streams of the larger figure (``drift_examples.png``): one of each kind.
EXAMPLES = (
    ("linear", "abrupt"),
    ("RBF", "gradual"),
    ("hyperplane", "recurring"),
    ("RBF", "stationary"),
)


def _panel(ax, r, fontsize=9):
    """One stream's windowed AUC curves, its true changes (grey dashes), the default's
    alarms (orange ticks at the bottom) and reopenings (red lines)."""
    for name, style in zip(CONTENDERS, ("-", "--", ":", "-.")):
        if r[name].get("curve") is None:  # a contender reused from an earlier run
            continue
        ax.plot(r[name]["ends"], r[name]["curve"], style, lw=1, label=name)
    for c in r["changes"]:
        ax.axvline(c, color="grey", ls="--", lw=0.8)
    for a in r["default"]["alarms"]:
        ax.axvline(a, color="orange", lw=0.8, ymax=0.08)
    for a in r["default"].get("reopens", []):
        ax.axvline(a, color="red", lw=0.6, alpha=0.6)
    ax.set_title(f"{r['generator']} {r['kind']}, {r['rate']:.0%}", fontsize=fontsize)
    ax.tick_params(labelsize=7)


def plots(results, out_dir: Path) -> list[str]:
    """One grid of every stream per rate (``drift_<rate>.png``) and the representative
    streams (``drift_examples.png``, the highest rate); the files' names."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = []
    note = "grey dashes: true changes; orange ticks: alarms; red: reopenings"
    for rate in sorted({r["rate"] for r in results}):
        rows = [r for r in results if r["rate"] == rate]
        gens = sorted({r["generator"] for r in rows}, key=[r["generator"] for r in rows].index)
        kinds = sorted({r["kind"] for r in rows}, key=[r["kind"] for r in rows].index)
        fig, axes = plt.subplots(
            len(gens), len(kinds), figsize=(4 * len(kinds), 2.8 * len(gens)), squeeze=False
        )
        for r in rows:
            _panel(axes[gens.index(r["generator"]), kinds.index(r["kind"])], r)
        axes[0, 0].legend(fontsize=6)
        fig.suptitle(f"windowed AUC ({WINDOW} rows), {rate:.0%} positives; {note}")
        fig.tight_layout()
        names.append(f"drift_{int(rate * 100)}.png")
        fig.savefig(out_dir / names[-1], dpi=80)
        plt.close(fig)
    top = max(r["rate"] for r in results)
    picked = [
        r
        for g, k in EXAMPLES
        for r in results
        if (r["generator"], r["kind"], r["rate"]) == (g, k, top)
    ]
    if picked:
        fig, axes = plt.subplots(len(picked), 1, figsize=(9, 2.6 * len(picked)), squeeze=False)
        for ax, r in zip(axes[:, 0], picked):
            _panel(ax, r, fontsize=10)
            ax.set_ylabel("windowed AUC", fontsize=8)
        axes[0, 0].legend(fontsize=7, loc="lower left")
        axes[-1, 0].set_xlabel("rows of the stream")
        fig.suptitle(f"{note}", fontsize=9)
        fig.tight_layout()
        names.append("drift_examples.png")
        fig.savefig(out_dir / names[-1], dpi=90)
        plt.close(fig)
    return names


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="shorter concepts, fewer streams")
    parser.add_argument("--concept", type=int, default=None)
    parser.add_argument("--width", type=int, default=None)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "results" / "drift.md")
    parser.add_argument("--rates", type=float, nargs="+", default=None, help="positive rates")
    parser.add_argument("--river-from", type=Path, default=None, help="River's numbers from JSON")
    parser.add_argument(
        "--baselines-from",
        type=Path,
        default=None,
        help="drift=None's and the restarted pipeline's numbers from an earlier run's JSON",
    )
    parser.add_argument("--skip-memory", action="store_true", help="no peak-memory pass")
    parser.add_argument("--generators", nargs="+", default=None, help="a subset of them")
    parser.add_argument(
        "--contenders",
        nargs="*",
        default=list(CONTENDERS),
        help="the contenders to run (the others from --reuse-from; without them, only "
        "the JSON is written)",
    )
    parser.add_argument(
        "--reuse-from", type=Path, nargs="+", default=None, help="earlier runs' JSON files"
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="runs of each pipeline contender per stream, interleaved; CPU seconds: the least",
    )
    parser.add_argument(
        "--seed-shift",
        type=int,
        default=0,
        help="add to every stream's seed (held-out draws of the same generators)",
    )
    parser.add_argument(
        "--set",
        nargs="+",
        default=[],
        metavar="NAME=VALUE",
        help="explore the watch's settings (the default contender's): "
        + ", ".join(SETTINGS)
        + " (docs/results/drift.md, the detection delay)",
    )
    args = parser.parse_args()
    apply_settings(args.set)
    args.concept = args.concept or (10_000 if args.quick else 40_000)
    args.width = args.width or args.concept // 2
    start_load, args.commit = os.getloadavg()[0], _commit()  # (the code that runs)
    _warm_up(args)
    results, memory = run(args)
    args.load = (start_load, os.getloadavg()[0])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    complete = all(c in r for r in results for c in CONTENDERS)
    if complete:
        if _plotted(results):
            plots(results, args.out.parent)
        report(results, memory, args, args.out)
    slim = [  # the curves are in the plots
        {
            k: (
                {m: x for m, x in v.items() if m not in ("curve", "ends")} if k in CONTENDERS else v
            )
            for k, v in r.items()
        }
        for r in results
    ]
    args.out.with_suffix(".json").write_text(json.dumps({"results": slim, "memory": memory}))
    if complete:
        print(args.out.read_text())


if __name__ == "__main__":
    main()
