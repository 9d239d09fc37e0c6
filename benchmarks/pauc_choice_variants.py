r"""Variants of the ensemble rule of ``StreamPipeline(max_fpr=0.05)``, re-scored.

The choice of :func:`aucstream._pauc_race.choose` is a function of the search's state
that never changes learning, so after one pass a variant of it can be applied to the
same end state and scored on the test part without running the pass again. For each
held-out stream of ``bench_pauc.held_out_streams`` (where rules are chosen) and each
stream of ``bench_pauc.streams`` (the benchmark), this fits ``StreamPipeline()`` and
``StreamPipeline(max_fpr=0.05)`` once and prints, per variant, the partial AUC at FPR
<= 0.05 on the test part minus ``StreamPipeline()``'s (mean and worst), the full AUC
difference (range) and, on the benchmark, the streams where it reaches LibAUC's best
after 3 epochs (``--libauc-from``, as ``bench_pauc.py``). The variants:

- ``rule``: :func:`~aucstream._pauc_race.choose` (the sets of
  :func:`~aucstream._pauc_race.choices`, the best windowed racing statistic :math:`G`
  among those within ``FULL_AUC_TOLERANCE`` of the full-AUC member's windowed full AUC);
- ``subsets``: the same over every subset of up to ``ensemble - 1`` partial-AUC
  learners, alone and with the full-AUC member (not only the first ones by :math:`G`);
- ``incumbent z``: the full-AUC member alone unless the chosen set's :math:`G` exceeds
  its own by ``z`` standard errors of the difference (DeLong's components of both terms
  of :math:`G` on the window, ``bench_pauc.pauc_components``);
- ``one-se z``: the smallest set (then the earlier) whose :math:`G` is within ``z``
  standard errors of the best's (Breiman et al.'s one-standard-error rule);
- ``noise guard z``: a set is out only when its windowed full AUC is below the member's
  by more than the tolerance plus ``z`` standard errors of the difference;
- ``partial within z``: among the sets within ``z`` standard errors of the best
  :math:`G`, the highest windowed partial AUC (the target metric);
- ``blend a``: the rule's sets and, for each of its sets with the full-AUC member
  :math:`F`, the blend ``a`` times the mean calibrated log-odds of its partial-AUC
  learners plus ``1 - a`` times :math:`F`'s (the rule's own weight is
  :math:`k / (k + 1)` for :math:`k` of them), by :math:`G` within the guard;
  ``blends``: every ``a`` of ``BLENDS`` at once;
- ``weight w``: the rule with :math:`w` the weight of the partial AUC in the
  compared statistic (:math:`w\,\mathrm{pAUC} + (1 - w)\,\mathrm{AUC}`; the rule's is
  ``PARTIAL_WEIGHT``, 1/2).

Run ``python benchmarks/pauc_choice_variants.py [--benchmark] [--libauc-from FILE]``.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_pauc  # noqa: E402

from aucstream import StreamPipeline, _calibration  # noqa: E402
from aucstream import _pauc_race as race  # noqa: E402
from aucstream.metrics import roc_auc  # noqa: E402
from aucstream.search import ALIVE  # noqa: E402

BETA = 0.05
#: The weights of the partial-AUC learners' mean in the ``blend`` variants.
BLENDS = (1 / 4, 1 / 3, 1 / 2, 2 / 3, 3 / 4)
#: The weights of the partial AUC in the compared statistic of the ``weight`` variants.
WEIGHTS = (0.3, 0.4, 0.5, 0.6, 0.75, 1.0)  # (0.5: the rule's, a check)


def _sets(search, ranked, every: bool) -> list[list[int]]:
    """The compared sets, the full-AUC member alone first."""
    sets = race.choices(search, ranked)
    if not every or not sets:
        return sets
    member = sets[0][0]
    protected = race.spared(search, ranked)
    partial = [int(i) for j, i in enumerate(ranked) if j in protected and search._calibrated(i)]
    out = [[member]]
    for k in range(1, int(search.ensemble)):
        for chosen in itertools.combinations(partial, k):
            out.append(list(chosen))
            if search._calibrated(member):
                out.append([*chosen, member])
    return out


def _g_components(y, s):
    """Per-positive and per-negative components of G (their means are G)."""
    xp, yp, scale = bench_pauc.pauc_components(y, s, BETA)
    xf, yf, _ = bench_pauc.pauc_components(y, s, 1.0)
    return 0.5 * (scale * xp + xf), 0.5 * (scale * yp + yf), xf, yf


def _se(a, b, which: int = 0) -> float:
    """Standard error of the difference of G (which=0) or of the full AUC (which=2)."""
    ca, cb = a["components"], b["components"]
    dx, dy = ca[which] - cb[which], ca[which + 1] - cb[which + 1]
    return math.sqrt(np.var(dx, ddof=1) / dx.size + np.var(dy, ddof=1) / dy.size)


def candidates_sets(model, Xt, yt) -> list[dict]:
    """Every compared set (``subsets``) with its windowed values and test metrics."""
    search = model.estimator_
    alive = np.flatnonzero(search.status_ == ALIVE)
    auc = np.array([search._windowed_auc(i) for i in alive])
    ranked = alive[np.lexsort((alive, -auc))]
    every = _sets(search, ranked, True)
    first = {tuple(s) for s in _sets(search, ranked, False)}
    needed = sorted({i for s in every for i in s})
    windows = dict(zip(needed, (m.window_scores() for m in search._current_metrics(needed, True))))
    Zt, positive = model.transformer_.transform(Xt), np.asarray(yt) > 0
    logit = {}
    for i in needed:  # (a set of one: its own scores, as the search's)
        a, b = _calibration.logit_map(search.candidates_[i].calibration_)
        raw = search.candidates_[i].decision_function(Zt)
        logit[i] = a * raw + b if search._calibrated(i) else raw
    out = []

    def entry(s, y, scores, test, blend=None):
        partial, full = race._window_aucs(y, scores, BETA)
        return {
            "set": s,
            "first": tuple(s) in first and blend is None,
            "blend": blend,
            "G": 0.5 * (partial + full),
            "partial": partial,
            "full": full,
            "components": _g_components(y, scores),
            "test": roc_auc(positive, test, max_fpr=BETA),
            "test_auc": roc_auc(positive, test),
        }

    for s in every:
        y, scores = race._average(search, s, windows)
        out.append(entry(s, y, scores, sum(logit[i] for i in s) / len(s)))
    member = every[0][0]
    for s in every:  # the blends of a first set with the member (``blend a``)
        if tuple(s) not in first or len(s) < 2 or member not in s:
            continue
        partial = [i for i in s if i != member]
        y, _ = race._average(search, s, windows)
        n = y.size
        log_odds = {}
        for i in s:
            a, b = _calibration.logit_map(search.candidates_[i].calibration_)
            log_odds[i] = a * windows[i][1][windows[i][1].size - n :] + b
        mean = sum(log_odds[i] for i in partial) / len(partial)
        test_mean = sum(logit[i] for i in partial) / len(partial)
        for a in BLENDS:
            if math.isclose(a, len(partial) / len(s)):  # the rule's own average
                continue
            scores = a * mean + (1 - a) * log_odds[member]
            test = a * test_mean + (1 - a) * logit[member]
            out.append(entry(s, y, scores, test, blend=a))
    return out


def _best(sets, guard):
    return max((s for s in sets if s is sets[0] or guard(s)), key=lambda s: s["G"])


def variants(sets: list[dict]) -> dict[str, dict]:
    """The set each variant picks."""
    tol = race.FULL_AUC_TOLERANCE
    first = [s for s in sets if s["first"]]
    blends = [s for s in sets if s.get("blend") is not None]
    member = sets[0]

    def within(s):
        return s["full"] >= member["full"] - tol

    unblended = [s for s in sets if s.get("blend") is None]
    out = {"rule": _best(first, within), "subsets": _best(unblended, within)}
    for a in BLENDS:
        out[f"blend {a:.2f}"] = _best(first + [s for s in blends if s["blend"] == a], within)
    out["blends"] = _best(first + blends, within)
    for w in WEIGHTS:
        allowed = [s for s in first if s is member or within(s)]
        out[f"weight {w:g}"] = max(allowed, key=lambda s: w * s["partial"] + (1 - w) * s["full"])
    for z in (0.5, 1.0, 1.645):
        best = out["rule"]
        keep = best is member or best["G"] - member["G"] > z * _se(best, member)
        out[f"incumbent {z:g}"] = best if keep else member
    for z in (0.5, 1.0):
        best = out["rule"]
        near = [s for s in first if (s is member or within(s))]
        near = [s for s in near if s is best or best["G"] - s["G"] <= z * _se(best, s)]
        out[f"one-se {z:g}"] = min(near, key=lambda s: len(s["set"]))
        out[f"partial within {z:g}"] = max(near, key=lambda s: s["partial"])
    z = 1.645
    out[f"noise guard {z:g}"] = _best(
        first, lambda s: member["full"] - s["full"] <= tol + z * _se(s, member, 2)
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", action="store_true", help="the benchmark's streams too")
    parser.add_argument("--libauc-from", nargs="+", help="LibAUC's rows (bench_pauc.py)")
    args = parser.parse_args()
    groups = {"held-out": bench_pauc.held_out_streams()}
    if args.benchmark:
        groups["benchmark"] = bench_pauc.streams(False)
    libauc = bench_pauc.stored_libauc(args.libauc_from) if args.libauc_from else {}
    for group, makers in groups.items():
        results: dict[str, list] = {}
        for name, make in makers.items():
            Xtr, ytr, Xt, yt = make()
            positive = np.asarray(yt) > 0
            full_race = StreamPipeline().fit(Xtr, ytr).decision_function(Xt)
            ref = (roc_auc(positive, full_race, max_fpr=BETA), roc_auc(positive, full_race))
            model = StreamPipeline(max_fpr=BETA).fit(Xtr, ytr)
            lib = [r["pauc05"] for r in libauc.get(name, []) if r["libauc"][2] == 3]
            for label, s in variants(candidates_sets(model, Xt, yt)).items():
                results.setdefault(label, []).append((name, s, ref, max(lib, default=None)))
        print(f"{group}: variant, partial AUC minus StreamPipeline()'s (mean, worst), full AUC")
        for label, got in results.items():
            gain = [s["test"] - r[0] for _, s, r, _ in got]
            gap = [s["test_auc"] - r[1] for _, s, r, _ in got]
            wins = [n for n, s, _, lib in got if lib is not None and s["test"] >= lib]
            print(
                f"  {label}: {np.mean(gain):+.4f} (worst {min(gain):+.4f}); full AUC"
                f" {min(gap):+.4f} to {max(gap):+.4f}"
                + (
                    f"; at least LibAUC's best on {len(wins)} ({', '.join(wins)})"
                    if any(lib is not None for *_, lib in got)
                    else ""
                )
            )


if __name__ == "__main__":
    main()
