"""Sketched OPAUC on sector (55,197 features) beside OAM and the univariate baselines.

G16 §7.3 (Table 6) runs OPAUC_s, OPAUC_fd, OPAUC_r and OPAUC_h with tau = 50 on
sector, against OAM with buffers of 50, the online univariate baselines and
OPAUC^f/^rp/^pca with k = 1000. We do the same on LIBSVM's split (sector.scale for
training, sector.t.scale for testing) with two binary conversions:

- ``largest_vs_rest``: one class against the other 104 (G16's sector.lvr);
- ``random_halves``: 52 of the 105 classes, chosen by the seeded permutation of
  ``aucstream.datasets``, against the other 53 (G16's sector).

Protocol (lighter than G16's 5 x 5-fold CV, which we do not repeat): the training
part is split once, stratified 80/20 (seed 0), into fit and validation parts; each
method's step size (and OAM's C) is chosen on the validation AUC over a grid, then
the method makes one pass over the whole training part (visited in a random order,
seed 0) and is scored on the test part. Grids: OPAUC variants eta in 2^[-12:2:0] with
lambda = 2^-10 (G16 Fig. 6: OPAUC is insensitive to small lambda); OAM C in
2^[-16:2:-2] (see ``aucstream.OAM``: long streams want small C); univariate eta in
2^[-12:2:2]. The exact OPAUC is out of reach (two 55,197^2 matrices, 49 GB).

``--errors`` instead measures the approximation error of each summary (G16 §7.3,
Fig. 4) with :mod:`aucstream.sketch_error`: for each class of sector's training part
(random halves) and of news20.t (random halves), one pass of frequent directions,
the randomized and hashing sketches (3 seeds each) and the sparsification, for tau in
{10, 20, 50, 100, 200}.

Usage::

    python benchmarks/sector_experiment.py                       # both conversions
    python benchmarks/sector_experiment.py --binary random_halves
    python benchmarks/sector_experiment.py --report              # markdown from the JSON files
    python benchmarks/sector_experiment.py --errors              # error curves and PNGs

Results go to ``docs/results/highdim_sector_<binary>.json``,
``docs/results/highdim_sector.md``, ``docs/results/highdim_errors.md`` and
``docs/results/highdim_error_<dataset>.png``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split

from aucstream import OAM, OPAUC
from aucstream.datasets import load_dataset
from aucstream.reduction import ReduceDimension

try:
    from aucstream.univariate import UnivariateOnline
except ImportError:  # pragma: no cover - written by a colleague
    UnivariateOnline = None

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"
BINARIES = ("largest_vs_rest", "random_halves")
ETAS = [2.0**k for k in range(-12, 1, 2)]
LAM = 2.0**-10
PAPER = {  # G16 Table 6 (mean test AUC over 25 runs): sector.lvr, sector
    "OPAUC_s": (0.9980, 0.9520),
    "OPAUC_fd": (0.9965, 0.9296),
    "OPAUC_r": (0.9962, 0.9292),
    "OPAUC_h": (0.9956, 0.9265),
    "OAM_seq (N=50)": (0.9965, 0.9163),
    "OAM_gra (N=50)": (0.9955, 0.9043),
    "Uni-Exp": (0.9969, 0.9215),
    "Uni-Log": (0.9776, 0.9528),
    "Uni-Squ": (0.9669, 0.9203),
    "OPAUC^f (k=1000)": (0.6813, 0.6228),
    "OPAUC^rp (k=1000)": (0.9863, 0.7286),
    "OPAUC^pca (k=1000)": (0.9893, 0.8853),
}


def methods():
    """(name, factory(param) -> estimator, grid, reduction) for every method."""

    def opauc(kind, centering=None):
        return lambda eta: OPAUC(
            eta=eta,
            lam=LAM,
            covariance=kind,
            sketch_size=50,
            centering=centering,
            shuffle=True,
            random_state=0,
        )

    table = [
        (f"OPAUC_{tag}", opauc(kind), ETAS, None)
        for tag, kind in (("s", "sparse"), ("fd", "fd"), ("r", "randomized"), ("h", "hash"))
    ]
    table += [
        (f"OPAUC_{tag}, centering=exact", opauc(kind, "exact"), ETAS, None)
        for tag, kind in (("fd", "fd"), ("r", "randomized"), ("h", "hash"))
    ]
    for update in ("seq", "gra"):
        table.append(
            (
                f"OAM_{update} (N=50)",
                lambda C, u=update: OAM(
                    C=C, buffer_size=50, update=u, shuffle=True, random_state=0
                ),
                [2.0**k for k in range(-16, -1, 2)],
                None,
            )
        )
    if UnivariateOnline is not None:
        for loss in ("exp", "log", "squ"):
            table.append(
                (
                    f"Uni-{loss.capitalize()}",
                    lambda eta, loss=loss: UnivariateOnline(
                        loss=loss, eta=eta, shuffle=True, random_state=0
                    ),
                    [2.0**k for k in range(-12, 3, 2)],
                    None,
                )
            )
    for tag, method in (("f", "subset"), ("rp", "gaussian"), ("pca", "pca")):
        table.append(
            (
                f"OPAUC^{tag} (k=1000)",
                lambda eta: OPAUC(eta=eta, lam=LAM, shuffle=True, random_state=0),
                ETAS,
                method,
            )
        )
    return table


def run(binary: str, only=None) -> dict:
    ds = load_dataset("sector", binary=binary, return_parts=True)
    X, y, X_test, y_test = ds.X, ds.y, ds.X_test, ds.y_test
    X_fit, X_val, y_fit, y_val = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)
    out = {
        "binary": binary,
        "n_train": int(X.shape[0]),
        "n_test": int(X_test.shape[0]),
        "n_features": int(X.shape[1]),
        "train_positives": int(np.sum(y > 0)),
        "test_positives": int(np.sum(y_test > 0)),
        "rows": [],
    }
    reduced = {}
    for name, factory, grid, reduction in methods():
        if only and not any(o in name for o in only):
            continue
        start = time.perf_counter()
        if reduction is not None:
            if reduction not in reduced:  # reduce once per split (G16 fits it on training data)
                fit_red = ReduceDimension(reduction, 1000, random_state=0).fit(X_fit)
                full_red = ReduceDimension(reduction, 1000, random_state=0).fit(X)
                reduced[reduction] = (
                    fit_red.transform(X_fit),
                    fit_red.transform(X_val),
                    full_red.transform(X),
                    full_red.transform(X_test),
                )
            A_fit, A_val, A_train, A_test = reduced[reduction]
        else:
            A_fit, A_val, A_train, A_test = X_fit, X_val, X, X_test
        val = []
        for param in grid:
            try:
                val.append(factory(param).fit(A_fit, y_fit).score(A_val, y_val))
            except FloatingPointError:
                val.append(float("nan"))
        best = int(np.nanargmax(val))
        t0 = time.perf_counter()
        model = factory(grid[best]).fit(A_train, y)
        train_seconds = time.perf_counter() - t0
        row = {
            "method": name,
            "param": grid[best],
            "validation_auc": val[best],
            "validation_curve": val,
            "grid": grid,
            "test_auc": model.score(A_test, y_test),
            "train_seconds": train_seconds,
            "total_seconds": time.perf_counter() - start,
        }
        out["rows"].append(row)
        print(
            f"{binary:16s} {name:20s} param=2^{np.log2(row['param']):+.0f} "
            f"val={row['validation_auc']:.4f} test={row['test_auc']:.4f} "
            f"({row['train_seconds']:.1f}s)",
            flush=True,
        )
    return out


def report() -> str:
    parts = {
        b: json.loads((RESULTS / f"highdim_sector_{b}.json").read_text())
        for b in BINARIES
        if (RESULTS / f"highdim_sector_{b}.json").exists()
    }
    lines = [
        "# Sketched OPAUC on sector (issue 3)",
        "",
        "Generated by `benchmarks/sector_experiment.py`; protocol in its docstring: "
        "LIBSVM's train/test split, step size chosen on a stratified 80/20 split of "
        "the training part, one pass over the whole training part in a random order, "
        "test AUC on sector.t. tau = 50 for every sketch, buffers of 50 for OAM, "
        "k = 1000 for the reductions. One run per cell, so differences of a few "
        "thousandths are within noise. G16 Table 6 is 5 x 5-fold CV on train + test "
        "together, so its numbers are only a rough reference.",
        "",
    ]
    for binary, res in parts.items():
        paper_col = 0 if binary == "largest_vs_rest" else 1
        lines += [
            f"## {binary} ({res['train_positives']} / {res['n_train']} positive in "
            f"training, {res['test_positives']} / {res['n_test']} in test, "
            f"d = {res['n_features']})",
            "",
            "| method | chosen eta / C | validation AUC | test AUC | G16 Table 6 | one pass (s) |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for row in sorted(res["rows"], key=lambda r: -r["test_auc"]):
            paper = PAPER.get(row["method"], (None, None))[paper_col]
            lines.append(
                f"| {row['method']} | 2^{np.log2(row['param']):.0f} "
                f"| {row['validation_auc']:.4f} | **{row['test_auc']:.4f}** "
                f"| {'' if paper is None else f'{paper:.4f}'} "
                f"| {row['train_seconds']:.1f} |"
            )
        lines.append("")
        lines += [
            "Validation AUC over the step-size grid (NaN: diverged):",
            "",
            "| method | " + " | ".join(f"2^{np.log2(g):.0f}" for g in ETAS) + " |",
            "|---|" + "---:|" * len(ETAS),
        ]
        for row in res["rows"]:
            if row["grid"] == ETAS:
                lines.append(
                    f"| {row['method']} | "
                    + " | ".join(f"{v:.3f}" for v in row["validation_curve"])
                    + " |"
                )
        lines.append("")
    lines += NOTES
    return "\n".join(lines)


NOTES = """## Notes

- Timings are wall-clock seconds on a shared 2-core machine that was running other
  jobs at the time; compare them only within a table.
- The plain OPAUC_fd and OPAUC_h rows are the papers' estimates, S = sketch(X X^T)/T
  - c c^T (G16 Eqs. 10-11, 19). They fall short of G16 on sector and their
  validation curves collapse above a step size, because that estimate is indefinite:
  frequent directions keeps only a small part of X X^T here (relative Frobenius
  error 0.99 at tau = 50 on either class, see `highdim_errors.md`) while c c^T is
  subtracted exactly, and the hashed X X^T errs in both directions. Along a negative
  direction the step is not a contraction. The learner's kernels agree with the
  reference recursion (opauc_gradient on the summaries) to 1e-11 in the tests, so
  this is the method, not the code. Checks on the same validation split (random
  halves): the randomized sketch with the G16 form breaks exactly where FD and
  hashing do (eta = 2^[-8:2:0]: 0.891 0.911 0.928 0.562 0.563, against 0.892 0.913
  0.944 0.963 0.958 with G13's centering); a larger lambda does not help FD or
  hashing (lambda = 2^-6 ... 2^0: best 0.885 for FD, 0.895 for hashing); FD with
  tau = 200 reaches 0.936; the authors' shrink at ceil(0.9 tau) does not help
  (best 0.894).
- The rows "centering=exact" use aucstream's positive semi-definite estimates (a
  library option, documented in `aucstream.OPAUC`): the linear sketches (randomized,
  hash) sketch the centered examples (X - c 1^T) with the same draws, and frequent
  directions sketches the centered scatter through Welford's rank-one updates, so
  0 <= S_hat <= S. With the same tau = 50 and the same grid all three reach
  0.968-0.970 on random halves and 0.998 on largest_vs_rest, level with OPAUC_s and
  the best baselines, and none collapses at large step sizes. (The centered FD
  passes took 3-4 s against 12-16 s for the plain FD, but the two were timed in
  different sessions under different loads; at d = 10^6 the two cost the same per
  example, see `highdim_bench.md`.)
- On largest_vs_rest (62 training positives, about 12 in the validation part) the step
  size chosen on validation can be far from the best for the full pass: plain
  OPAUC_fd picked eta = 1, which is unstable on the full training part (test 0.70).
- The exact OPAUC (covariance="full") would need two 55,197 x 55,197 matrices
  (49 GB) and is not run.
""".splitlines()


def errors(sizes=(10, 20, 50, 100, 200), repeats: int = 3) -> str:
    from aucstream.sketch_error import class_error_curves, plot_sketch_error

    lines = [
        "# Approximation error of the covariance sketches (issue 3)",
        "",
        "Generated by `benchmarks/sector_experiment.py --errors` with "
        "`aucstream.sketch_error` (G16 §7.3, Fig. 4; SPEC §13.2). For each class "
        "matrix A (rows in file order), one pass of each summary; the table gives "
        "the relative error ||A^T A - sketch||_F / ||A^T A||_F (mean ± std over 3 "
        "seeds for the random sketches; the sparse summary is pruned to exactly "
        "d tau non-zeros at the end). The last row of each table is the root "
        "expected error of the randomized sketch, sqrt((||A||_F^4 + ||A^T A||_F^2) "
        "/ tau) / ||A^T A||_F.",
        "",
    ]
    record = {}
    for name, file in (("sector", "sector.scale"), ("news20", "news20.t")):
        ds = load_dataset(name, binary="random_halves", return_parts=True)
        start = time.perf_counter()
        curves = class_error_curves(ds.X, ds.y, sketch_sizes=sizes, n_repeats=repeats, name=name)
        seconds = time.perf_counter() - start
        png = RESULTS / f"highdim_error_{name}.png"
        plot_sketch_error(curves, path=png, title=f"{name} ({file}), random halves: relative error")
        for label, curve in curves.items():
            lines += [
                f"## {name}, class {label:+d} (n = {curve.n_samples}, d = "
                f"{curve.n_features}, ||A^T A||_F = {curve.gram_norm:.4g})",
                "",
                curve.table(),
            ]
            rand = curve.kinds.index("randomized")
            lines += [
                "| expected, randomized | "
                + " | ".join(f"{e / curve.gram_norm:.4f}" for e in curve.expected[rand])
                + " |",
                "",
            ]
            record[f"{name} {label:+d}"] = {
                "kinds": curve.kinds,
                "sketch_sizes": curve.sketch_sizes.tolist(),
                "relative_mean": curve.relative.mean(axis=2).tolist(),
                "absolute_mean": curve.absolute.mean(axis=2).tolist(),
                "seconds": curve.seconds.tolist(),
                "gram_norm": curve.gram_norm,
            }
        lines += [f"![{name}]({png.name})", "", f"({seconds:.0f} s for {name})", ""]
    (RESULTS / "highdim_errors.json").write_text(json.dumps(record, indent=1))
    text = "\n".join(lines)
    (RESULTS / "highdim_errors.md").write_text(text)
    return text


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", choices=BINARIES, nargs="+", default=list(BINARIES))
    parser.add_argument("--only", nargs="+", help="run only methods whose name contains these")
    parser.add_argument("--report", action="store_true", help="only write the markdown")
    parser.add_argument("--errors", action="store_true", help="approximation-error curves")
    args = parser.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.errors:
        print(errors())
        return
    if not args.report:
        for binary in args.binary:
            res = run(binary, args.only)
            path = RESULTS / f"highdim_sector_{binary}.json"
            if args.only and path.exists():  # merge into earlier results
                old = json.loads(path.read_text())
                names = {r["method"] for r in res["rows"]}
                res["rows"] = [r for r in old["rows"] if r["method"] not in names] + res["rows"]
            path.write_text(json.dumps(res, indent=1))
    (RESULTS / "highdim_sector.md").write_text(report())
    print(report())


if __name__ == "__main__":
    main()
