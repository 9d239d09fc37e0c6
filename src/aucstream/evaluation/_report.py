"""Reports of comparisons: a Markdown page, the raw runs as CSV and JSON, PNG plots.

A report always states the protocol actually used and how it departs from the
paper's, so a number is never shown without the way it was obtained. When the
paper's values are given, they are printed beside ours and every cell whose mean
differs from the paper's by more than the paper's standard deviation is flagged (†)
and listed with the known reasons.
"""

from __future__ import annotations

import csv
import dataclasses
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from .._json import dumps
from ._compare import Comparison
from ._paper import PaperTable
from ._protocol import PAPER_PROTOCOLS, Protocol, deviations
from ._stats import MARKERS, mean_std, win_tie_loss

__all__ = ["PaperTable", "format_auc", "markdown_table", "write_report"]

FLAG = "†"


def format_auc(mean: float, std: float | None = None) -> str:
    """``.8309 ± .0350`` (the papers' style); "n/a" for NaN."""
    if mean is None or not math.isfinite(mean):
        return "n/a"

    def short(v: float) -> str:
        text = f"{v:.4f}"
        return text[1:] if text.startswith("0.") else text

    return short(mean) if std is None or not math.isfinite(std) else f"{short(mean)} ± {short(std)}"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence]) -> str:
    """A GitHub Markdown table."""
    lines = [
        "| " + " | ".join(map(str, header)) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _params_text(params: Mapping) -> str:
    out = []
    for k, v in params.items():
        if isinstance(v, float) and v > 0 and float(np.log2(v)).is_integer():
            v = f"2^{int(np.log2(v))}"
        out.append(f"{k}={v}")
    return ", ".join(out) or "(defaults)"


# ----------------------------------------------------------------------- sections


def _protocol_section(result: Comparison, reference_protocol) -> list[str]:
    p = result.protocol
    paper = reference_protocol or PAPER_PROTOCOLS.get(p.name)
    out = ["## Protocol", "", p.describe(), ""]
    if paper is not None and paper.citation:
        out += [f"The paper's protocol: {paper.citation}.", ""]
    devs = deviations(p, paper) if paper is not None else []
    if devs:
        out += (
            [f"**Deviations from the paper's protocol** (this is a {p.mode}-mode run):", ""]
            + [f"- {d}" for d in devs]
            + [""]
        )
    elif paper is not None:
        out += ["The protocol is the paper's (no deviation in the evaluation settings).", ""]
    caps = [
        f"{s.title} trains on at most {s.max_train:,} examples per run (uniform sample)"
        + (f": {s.note}" if s.note else "")
        for s in result.learners
        if s.max_train
    ]
    if any(s.is_batch for s in result.learners) and p.batch_cap:
        caps.append(f"batch learners train on at most {p.batch_cap:,} examples per run")
    if caps:
        out += ["Training caps: " + "; ".join(caps) + ".", ""]
    return out


def subsample_note(result: Comparison) -> str:
    """One sentence saying which datasets the protocol subsampled, and how: examples
    used against examples available, per dataset ("" when every dataset was used
    whole).

    Parameters
    ----------
    result : Comparison

    Returns
    -------
    str

    Examples
    --------
    >>> from aucstream.evaluation import Protocol
    >>> from aucstream.evaluation._compare import Comparison, DatasetMeta
    >>> from aucstream.evaluation._data import DataSpec
    >>> german = DatasetMeta(DataSpec("german"), n_samples=300, n_available=1000)
    >>> result = Comparison(Protocol("g16", max_samples=300), [], [german])
    >>> print(subsample_note(result))  # doctest: +NORMALIZE_WHITESPACE
    **Subsampled**: every dataset was first reduced to a stratified random sample of at
    most 300 examples: german 300 of 1,000 examples.
    """
    used = result.used_datasets
    if not any(m.subsampled for m in used):
        return ""
    p = result.protocol
    how = (
        f"every dataset was first reduced to a stratified random sample of at most "
        f"{p.max_samples:,} examples"
        if p.max_samples is not None
        else "datasets were subsampled"
    )
    if p.mode == "quick":
        how += " (quick mode: for a smoke test, not for comparing with the paper)"
    counts = "; ".join(
        f"{m.title} {m.n_samples:,} of {m.n_available:,} examples"
        if m.subsampled
        else f"{m.title} all {m.n_samples:,} examples"
        for m in used
    )
    return f"**Subsampled**: {how}: {counts}."


def _datasets_section(result: Comparison) -> list[str]:
    rows = []
    for m in result.datasets:
        if m.skipped:
            continue
        paper_n = f"{m.spec.paper_n:,}" if m.spec.paper_n else ""
        rows.append(
            [
                m.title,
                f"{m.n_samples:,} of {m.n_available:,}" if m.subsampled else f"{m.n_samples:,}",
                paper_n,
                m.n_features,
                f"{m.n_positive:,}",
                f"{m.imbalance:.4f}",
                m.rule,
                m.spec.note,
            ]
        )
    out = [
        "## Datasets",
        "",
        markdown_table(
            [
                "dataset",
                "examples used",
                "paper's examples",
                "features",
                "positives",
                "T-/T+",
                "binary labels",
                "note",
            ],
            rows,
        ),
        "",
    ]
    skipped = [f"- {m.title}: {m.skipped}" for m in result.datasets if m.skipped]
    skipped += [f"- learner {k}: {v}" for k, v in result.skipped_learners.items()]
    if skipped:
        out += ["**Not run:**", ""] + skipped + [""]
    return out


def _tuning_section(result: Comparison) -> list[str]:
    rows = []
    seen = set()
    for t in result.tuning:
        cell = (t["dataset"], t["learner"])
        if cell in seen:
            continue
        seen.add(cell)
        failed = f" ({t['n_failed']} of {t['n_candidates']} diverged)" if t["n_failed"] else ""
        rows.append(
            [
                t["dataset"],
                t["learner"],
                _params_text(t["params"]),
                format_auc(t["validation_auc"]) + failed,
            ]
        )
    if not rows:
        return []
    where = (
        "the first outer split"
        if result.protocol.tune == "first"
        else "the first outer split (each split is tuned on its own; see the JSON file)"
    )
    return [
        f"## Chosen hyperparameters ({where})",
        "",
        markdown_table(["dataset", "learner", "parameters", "validation AUC"], rows),
        "",
    ]


def _problems_section(result: Comparison) -> list[str]:
    out = []
    failed: dict = defaultdict(list)
    for r in result.runs:
        if r["status"] != "ok":
            failed[r["dataset"], r["learner"], r["status"]].append(r)
    if failed:
        out += ["**Failed runs** (left out of the means; n/a where every run failed):", ""]
        for (d, learner, status), runs in failed.items():
            swept = sorted(
                {(r["value"], r["param"]) for r in runs if "param" in r},
                key=lambda vp: (vp[0] is None, vp[0] if vp[0] is not None else 0),
            )
            at = f" (at {', '.join(_params_text({p: v}) for v, p in swept)})" if swept else ""
            out.append(
                f"- {d} / {learner}: {len(runs)} run(s) {status}{at}; first message: "
                f"{runs[0]['error'][:160]}"
            )
        out.append("")
    if result.stats.errors:
        out += ["**Errors** (not cached; rerun to retry):", ""]
        out += [f"- {e}" for e in sorted(set(result.stats.errors))[:20]] + [""]
    return out


def _footer(result: Comparison, command: str) -> list[str]:
    s = result.stats
    cmd = f"`{command}` " if command else ""
    return [
        "---",
        "",
        f"Generated by {cmd}in {s.seconds:.0f} s of run time: {s.total:,} runs "
        f"requested, {s.cached:,} from the cache, {s.computed:,} computed.",
        "",
    ]


# ---------------------------------------------------------------------- the tables


def _results_table(
    result: Comparison, paper: PaperTable | None, notes: Mapping[str, str]
) -> tuple[list[str], list[str]]:
    """The main table (ours and the paper's rows) and the list of flagged cells."""
    summary = {(r["dataset"], r["learner"]): r for r in result.summary()}
    labels = [s.title for s in result.learners]
    ref = result.reference if result.reference in labels else None
    header = ["dataset"] + labels
    rows, flagged = [], []
    for meta in result.used_datasets:
        row = [meta.title]
        for label in labels:
            cell = summary[meta.title, label]
            text = format_auc(cell["mean"], cell["std"])
            if ref and label != ref:
                text += f" {MARKERS[cell['outcome']]}".rstrip()
            theirs = paper.values.get((meta.title, label)) if paper else None
            if theirs and math.isfinite(cell["mean"]) and abs(cell["mean"] - theirs[0]) > theirs[1]:
                text += f" {FLAG}"
                reason = " ".join(
                    notes[k] for k in (f"{meta.title}/{label}", meta.title, label) if k in notes
                )
                flagged.append(
                    f"- {meta.title} / {label}: ours {format_auc(cell['mean'])} vs "
                    f"paper {format_auc(theirs[0], theirs[1])} "
                    f"(difference {cell['mean'] - theirs[0]:+.4f})"
                    + (f". {reason}" if reason else ".")
                )
            if cell["n_failed"]:
                text += f" ({cell['n_failed']} failed)"
            row.append(text)
        rows.append(row)
        if paper and any((meta.title, label) in paper.values for label in labels):
            prow = [f"{meta.title} (paper)"]
            for label in labels:
                v = paper.values.get((meta.title, label))
                prow.append(f"{format_auc(v[0], v[1])} {v[2]}".rstrip() if v else "—")
            rows.append(prow)
    if ref:
        wtl = ["win/tie/loss"]
        for label in labels:
            outcomes = [summary[m.title, label]["outcome"] for m in result.used_datasets]
            wtl.append("" if label == ref else "/".join(map(str, win_tie_loss(outcomes))))
        rows.append(wtl)
        if paper and paper.wtl:
            rows.append(
                ["win/tie/loss (paper, all its datasets)"]
                + ["/".join(map(str, paper.wtl[x])) if x in paper.wtl else "" for x in labels]
            )
    return [markdown_table(header, rows)], flagged


def _time_table(result: Comparison) -> str:
    summary = {(r["dataset"], r["learner"]): r for r in result.summary()}
    labels = [s.title for s in result.learners]
    rows = []
    for meta in result.used_datasets:
        row = [meta.title, f"{summary[meta.title, labels[0]]['n_train']:,}" if labels else ""]
        for label in labels:
            s = summary[meta.title, label]["seconds"]
            row.append("n/a" if not math.isfinite(s) else f"{s:.4f}" if s < 10 else f"{s:.1f}")
        rows.append(row)
    return markdown_table(["dataset", "training examples"] + labels, rows)


def _curve_tables(result: Comparison) -> list[str]:
    """AUC at fractions of the pass, per dataset (mean over the curve runs)."""
    out = []
    fractions = (0.05, 0.1, 0.25, 0.5, 1.0)
    for meta in result.used_datasets:
        rows = []
        for spec in result.learners:
            curves = result.curves(meta.title, spec.title)
            if not curves:
                continue
            row = [spec.title]
            for frac in fractions:
                vals = []
                for c in curves:
                    n = np.asarray(c["n_seen"], dtype=float)
                    i = int(np.searchsorted(n, frac * n[-1] - 1e-9))
                    a = c["auc"][min(i, len(n) - 1)]
                    vals.append(np.nan if a is None else a)
                row.append(format_auc(mean_std(vals)[0]))
            secs = [c["seconds"][-1] for c in curves]
            row.append(f"{np.mean(secs):.3f}")
            rows.append(row)
        if rows:
            out += [
                f"### {meta.title}",
                "",
                markdown_table(
                    ["learner"] + [f"AUC at {f:.0%}" for f in fractions] + ["seconds (pass)"], rows
                ),
                "",
            ]
    return out


def _sweep_table(result: Comparison) -> list[str]:
    out = []
    param = next((r["param"] for r in result.runs if "param" in r), "value")
    values = list(dict.fromkeys(r["value"] for r in result.runs if "value" in r))
    for spec in result.learners:
        rows = []
        for value in values:
            row = [_params_text({param: value}).split("=", 1)[1]]
            for meta in result.used_datasets:
                vals = list(result.values(meta.title, spec.title, value).values())
                row.append(format_auc(*mean_std(vals)))
            rows.append(row)
        out += [
            f"### {spec.title}",
            "",
            markdown_table([param] + [m.title for m in result.used_datasets], rows),
            "",
        ]
    return out


# -------------------------------------------------------------------------- plots


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _figure_title(source: str, shows: str) -> str:
    """A figure's title: what it shows (its axes), after the report it belongs to."""
    return f"{source}: {shows}" if source else shows[:1].upper() + shows[1:]


def plot_times(result: Comparison, path: Path, title: str = "") -> None:
    """Grouped bars of the mean training time per dataset, log-scale y (G16 Fig. 1).

    ``title`` names the source (a report, a paper's table); the figure's title adds
    what it shows, training time per pass."""
    plt = _pyplot()
    summary = {(r["dataset"], r["learner"]): r["seconds"] for r in result.summary()}
    datasets = [m.title for m in result.used_datasets]
    labels = [s.title for s in result.learners]
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(datasets) + 2), 4))
    width = 0.8 / max(len(labels), 1)
    x = np.arange(len(datasets))
    for i, label in enumerate(labels):
        ax.bar(
            x + i * width - 0.4 + width / 2,
            [max(summary.get((d, label), np.nan), 1e-5) for d in datasets],
            width,
            label=label,
        )
    ax.set_yscale("log")
    ax.set_xticks(x, datasets, rotation=30, ha="right")
    ax.set_ylabel("training time per pass (s)")
    ax.set_title(_figure_title(title, "training time per pass"))
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _grid_axes(plt, n: int):
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.3 * rows), squeeze=False)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, axes.ravel()


def plot_curves(result: Comparison, path: Path, x: str = "n_seen", title: str = "") -> None:
    """Test AUC against examples seen (``x="n_seen"``) or seconds, one panel per dataset.

    ``title`` names the source; the figure's title adds what it shows."""
    plt = _pyplot()
    from matplotlib.ticker import NullFormatter

    xlabel = "examples seen" if x == "n_seen" else "training time (s)"
    metas = result.used_datasets
    fig, axes = _grid_axes(plt, max(len(metas), 1))
    for ax, meta in zip(axes, metas):
        for spec in result.learners:
            curves = result.curves(meta.title, spec.title)
            if not curves:
                continue
            xs = np.mean([c[x] for c in curves], axis=0)
            ys = np.nanmean(
                [[np.nan if a is None else a for a in c["auc"]] for c in curves], axis=0
            )
            ax.plot(xs, ys, label=spec.title)
        ax.set_title(meta.title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("test AUC")
        if x == "seconds":
            ax.set_xscale("log")
            ax.xaxis.set_minor_formatter(NullFormatter())  # no crowded minor labels
        ax.legend(fontsize=7)
    fig.suptitle(_figure_title(title, f"test AUC against {xlabel}"))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_sweep(result: Comparison, path: Path, title: str = "") -> None:
    """Test AUC (mean ± std) against the swept parameter, one panel per dataset.

    ``title`` names the source; the figure's title adds what it shows."""
    plt = _pyplot()
    metas = result.used_datasets
    param = next((r["param"] for r in result.runs if "param" in r), "value")
    values = list(dict.fromkeys(r["value"] for r in result.runs if "value" in r))
    fig, axes = _grid_axes(plt, max(len(metas), 1))
    numeric = all(isinstance(v, int | float) and v is not None and v > 0 for v in values)
    for ax, meta in zip(axes, metas):
        for spec in result.learners:
            stats = [
                mean_std(list(result.values(meta.title, spec.title, v).values())) for v in values
            ]
            xs = values if numeric else np.arange(len(values))
            ax.errorbar(
                xs,
                [s[0] for s in stats],
                yerr=[s[1] for s in stats],
                marker="o",
                capsize=2,
                label=spec.title,
            )
        if numeric and max(values) / min(values) > 50:
            ax.set_xscale(
                "log", base=2 if all(float(np.log2(v)).is_integer() for v in values) else 10
            )
        if not numeric:
            ax.set_xticks(np.arange(len(values)), [str(v) for v in values])
        ax.set_title(meta.title)
        ax.set_xlabel(param)
        ax.set_ylabel("test AUC")
        ax.legend(fontsize=7)
    fig.suptitle(_figure_title(title, f"test AUC against {param}"))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ------------------------------------------------------------------------ writing

RUN_COLUMNS = [
    "learner",
    "estimator",
    "dataset",
    "trial",
    "fold",
    "param",
    "value",
    "auc",
    "train_seconds",
    "cpu_seconds",
    "n_train",
    "n_test",
    "status",
    "error",
    "params",
    "key",
]


def write_runs_csv(result: Comparison, path: Path) -> None:
    """The test runs, one line each (parameters as JSON)."""
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, RUN_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for r in result.runs:
            writer.writerow({**r, "params": dumps(r.get("params", {}))})


def write_json(
    result: Comparison,
    path: Path,
    title: str,
    paper: PaperTable | None,
    extra: Mapping | None = None,
) -> None:
    """Everything: setup, deviations, summary, paper values, runs, tuning."""
    p = result.protocol
    doc = {
        "title": title,
        "protocol": dataclasses.asdict(p),
        "protocol_text": p.describe(),
        "deviations": deviations(p),
        "reference": result.reference,
        "learners": [
            {
                "label": s.title,
                "estimator": s.estimator,
                "params": s.fixed,
                "max_train": s.max_train,
            }
            for s in result.learners
        ],
        "skipped_learners": result.skipped_learners,
        "datasets": [
            {
                "name": m.title,
                "source": Path(
                    m.spec.name
                ).name,  # a generated file: its name, not where it was cached
                "n_samples": m.n_samples,
                "n_available": m.n_available,
                "paper_n": m.spec.paper_n,
                "n_features": m.n_features,
                "n_positive": m.n_positive,
                "rule": m.rule,
                "skipped": m.skipped,
                "note": m.spec.note,
            }
            for m in result.datasets
        ],
        "summary": result.summary(),
        "paper": None
        if paper is None
        else {
            "source": paper.source,
            "values": [
                {"dataset": d, "learner": x, "mean": v[0], "std": v[1], "marker": v[2]}
                for (d, x), v in paper.values.items()
            ],
            "win_tie_loss": paper.wtl,
        },
        "tuning": result.tuning,
        "runs": result.runs,
        "stats": dataclasses.asdict(result.stats),
        **(extra or {}),
    }
    with open(path, "w") as f:
        f.write(dumps(doc, indent=1))


def write_report(
    result: Comparison,
    out_dir: str | Path,
    name: str,
    title: str,
    *,
    kind: str = "table",
    paper: PaperTable | None = None,
    notes: Mapping[str, str] | None = None,
    intro: str = "",
    command: str = "",
    reference_protocol: Protocol | None = None,
) -> dict[str, Path]:
    """Write ``NAME.md``, ``NAME.csv``, ``NAME.json`` and PNG plots into ``out_dir``.

    Parameters
    ----------
    result : Comparison
    out_dir : str or path
        Created if needed.
    name : str
        File name stem.
    title : str
        Page title.
    kind : {"table", "time", "curve", "sweep"}
        ``table``: test AUC table with ●/○ and win/tie/loss (and the paper's values);
        ``time``: training times and a log-scale bar chart; ``curve``: convergence
        curves (AUC against examples and seconds); ``sweep``: AUC against a parameter.
    paper : PaperTable or None
        The paper's values, printed beside ours (``table``).
    notes : mapping of str to str
        Known reasons for differences, keyed by ``dataset``, ``learner`` or
        ``dataset/learner``; printed with the flagged cells.
    intro : str
        Markdown paragraph after the title.
    command : str
        The command that produced the report (footer).
    reference_protocol : Protocol or None
        The paper's protocol (default: by the protocol's name).

    Returns
    -------
    dict of str to Path
        The files written.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    notes = dict(notes or {})
    if kind not in _BODIES:
        raise ValueError(f"unknown report kind {kind!r}")
    files = {
        "markdown": out / f"{name}.md",
        "csv": out / f"{name}.csv",
        "json": out / f"{name}.json",
    }
    lines = [f"# {title}", ""]
    if intro:
        lines += [intro, ""]
    lines += _protocol_section(result, reference_protocol)
    n_runs = len({(r["trial"], r["fold"]) for r in result.runs}) or result.protocol.n_splits
    if kind in ("curve", "sweep") and n_runs < result.protocol.n_splits:
        lines += [
            f"This figure uses the first {n_runs} of the protocol's "
            f"{result.protocol.n_splits} outer splits.",
            "",
        ]
    body, plots = _BODIES[kind](result, name, n_runs, paper, notes)
    note = subsample_note(result)
    if note:  # beside the numbers (the part `aucstream reproduce` prints)
        body[2:2] = [note, ""]
    lines += body
    lines += _draw(result, plots, out, files, title)
    lines += _datasets_section(result) + _tuning_section(result) + _problems_section(result)
    lines += [
        f"Raw results: [{name}.csv]({name}.csv) (one line per run) and "
        f"[{name}.json]({name}.json) (setup, summary, runs, tuning).",
        "",
    ]
    lines += _footer(result, command)
    files["markdown"].write_text("\n".join(lines))
    write_runs_csv(result, files["csv"])
    write_json(result, files["json"], title, paper)
    return files


# ------------------------------------------------------------- bodies per kind
# Each returns the Markdown lines of its kind and its plots as
# (key in the returned files, file name, plot function, extra arguments).


def _general_note(notes: Mapping[str, str]) -> list[str]:
    return [notes["*"], ""] if notes.get("*") else []


def _all_notes(notes: Mapping[str, str]) -> list[str]:
    """Every note, for a table without the paper's values to attach them to."""
    lines = _general_note(notes)
    for key, text in notes.items():
        if key != "*":
            lines += [f"- **{key}**: {text}"]
    return lines + ([""] if len(lines) > 2 else [])


def _table_body(result, name, n_runs, paper, notes):
    table, flagged = _results_table(result, paper, notes)
    ref = result.reference
    lines = [f"## Test AUC (mean ± std over {n_runs} runs)", ""] + table + [""]
    if ref in {s.title for s in result.learners}:
        lines.append(
            f"● / ○: {ref} is significantly better / worse than that method "
            "(paired two-sided t-test at 95% over the matched runs); win/tie/loss "
            f"counts the datasets from {ref}'s side."
        )
    if paper and paper.values:
        lines.append(
            f"Rows marked (paper): copied from {paper.source}. {FLAG}: our mean "
            "differs from the paper's by more than the paper's standard deviation."
        )
    elif paper is not None:
        lines.append(f"The paper's values are not printed: {paper.source}.")
    lines.append("")
    if paper and paper.values:
        lines += ["### Differences from the paper", ""]
        lines += flagged or ["No mean differs from the paper's by more than its std."]
        lines += [""] + _general_note(notes)
    elif notes:
        lines += ["### Notes", ""] + _all_notes(notes)
    lines += ["## Training time (mean seconds per training pass)", "", _time_table(result), ""]
    return lines, [("time_png", f"{name}_time.png", plot_times, ())]


def _time_body(result, name, n_runs, paper, notes):
    lines = [
        "## Training time (mean wall-clock seconds of one training pass, "
        "compiled kernels already loaded)",
        "",
        _time_table(result),
        "",
        f"![training time]({name}.png)",
        "",
    ]
    return lines + _general_note(notes), [("png", f"{name}.png", plot_times, ())]


def _curve_body(result, name, n_runs, paper, notes):
    lines = [
        "## Test AUC along the pass",
        "",
        f"![AUC against examples]({name}_examples.png)",
        f"![AUC against seconds]({name}_seconds.png)",
        "",
    ]
    plots = [
        ("examples_png", f"{name}_examples.png", plot_curves, ("n_seen",)),
        ("seconds_png", f"{name}_seconds.png", plot_curves, ("seconds",)),
    ]
    return lines + _curve_tables(result) + _general_note(notes), plots


def _sweep_body(result, name, n_runs, paper, notes):
    lines = [
        f"## Test AUC against the parameter (mean ± std over {n_runs} runs)",
        "",
        f"![parameter influence]({name}.png)",
        "",
    ]
    lines += _sweep_table(result) + _general_note(notes)
    return lines, [("png", f"{name}.png", plot_sweep, ())]


_BODIES = {"table": _table_body, "time": _time_body, "curve": _curve_body, "sweep": _sweep_body}


def _draw(result, plots, out: Path, files: dict, title: str) -> list[str]:
    """Draw the plots (adding them to ``files``); a note when matplotlib is missing."""
    try:
        # the report's title may say what its table shows ("... (test AUC)"): the
        # figures name the report by what comes before the colon and add their own
        source = title.split(":")[0].strip()
        for key, filename, plot, args in plots:
            plot(result, out / filename, *args, title=source)
            files[key] = out / filename
    except ImportError:  # matplotlib is the optional "plot" extra
        return [
            '(Plots not drawn: matplotlib is not installed; `pip install "aucstream[plot]"`.)',
            "",
        ]
    return []
