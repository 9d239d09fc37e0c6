"""Reproductions end to end in quick mode: report structure, cache, resume, CLI."""

import csv
import json
import math
import re

import pytest

from aucstream.cli import main
from aucstream.evaluation import compare, get_protocol
from aucstream.evaluation._reproduce import REPRODUCTIONS, reproduce

G16_LEARNERS = ["OPAUC", "OAM_seq", "OAM_gra", "Uni-Exp", "Uni-Log", "Uni-Squ"]
QUICK_SETS = ["diabetes", "fourclass", "german"]


def _table_rows(markdown: str) -> dict[str, list[str]]:
    """The rows of the first Markdown table after '## Test AUC', by first cell."""
    section = markdown[markdown.index("## Test AUC") :]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    end = (
        next(i for i, line in enumerate(lines[2:], 2) if not line.startswith("|"))
        if any(not line.startswith("|") for line in lines[2:])
        else len(lines)
    )
    rows = {}
    for line in lines[:end]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows.setdefault(cells[0], cells[1:])
    return rows


def _numbers(cell: str) -> list[float]:
    return [float(x) for x in re.findall(r"\d*\.\d+", cell)]


@pytest.fixture(scope="module")
def quick_g16(tmp_path_factory):
    out = tmp_path_factory.mktemp("g16")
    files = reproduce("g16-table2", out, mode="quick", n_jobs=1, progress=False)
    return out, files


def test_quick_g16_table2_report_structure(quick_g16):
    out, files = quick_g16
    text = files["markdown"].read_text()
    rows = _table_rows(text)
    assert rows["dataset"] == G16_LEARNERS
    for name in QUICK_SETS:
        assert len(rows[name]) == 6 and len(rows[f"{name} (paper)"]) == 6
        for cell in rows[name]:
            mean, std = _numbers(cell)[:2]
            assert 0.0 <= mean <= 1.0 and 0.0 <= std <= 1.0
            assert set(re.sub(r"[\d.± ]", "", cell)) <= set("●○†")
    assert rows["diabetes (paper)"][0] == ".8309 ± .0350"
    wtl = rows["win/tie/loss"]
    assert wtl[0] == "" and all(sum(map(int, c.split("/"))) == 3 for c in wtl[1:])
    assert rows["win/tie/loss (paper, all its datasets)"][1] == "14/2/0"
    # the protocol and its deviations are stated; the absent datasets are listed
    assert "quick mode" in text and "Deviations from the paper" in text
    assert "kddcup04: not in the benchmark data" in text
    for key in ("csv", "json", "time_png"):
        assert files[key].stat().st_size > 0
    with open(files["csv"]) as f:
        runs = list(csv.DictReader(f))
    assert len(runs) == 3 * 6 * 3  # datasets x learners x (1 trial x 3 folds)
    assert all(0 <= float(r["auc"]) <= 1 and r["status"] == "ok" for r in runs)
    doc = json.loads(files["json"].read_text())
    assert doc["protocol"]["mode"] == "quick" and doc["deviations"]
    assert {s["learner"] for s in doc["summary"]} == set(G16_LEARNERS)
    assert len(doc["paper"]["values"]) == 16 * 6
    assert all(math.isfinite(s["mean"]) for s in doc["summary"])


def test_second_run_is_served_from_the_cache(quick_g16):
    out, _ = quick_g16
    first = json.loads((out / "g16_table2.json").read_text())["stats"]
    assert first["computed"] == first["total"] > 0
    files = reproduce("g16-table2", out, mode="quick", n_jobs=1, progress=False)
    again = json.loads(files["json"].read_text())
    assert again["stats"]["cached"] == again["stats"]["total"] == first["total"]
    assert again["stats"]["computed"] == 0
    assert again["summary"] == json.loads((out / "g16_table2.json").read_text())["summary"]


def test_an_interrupted_comparison_resumes_where_it_stopped(tmp_path):
    protocol = get_protocol("z11", "quick").replace(coarse_values=2)
    args = (["OAM_seq=OAM(update='seq')", "PA=PassiveAggressive"], ["fourclass"], protocol)
    done = []

    def interrupt(job, record):
        done.append(job.key())
        if len(done) == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        compare(*args, n_jobs=1, cache_dir=tmp_path, on_record=interrupt)
    result = compare(*args, n_jobs=1, cache_dir=tmp_path)
    assert result.stats.cached == 5
    assert result.stats.computed == result.stats.total - 5
    fresh = compare(*args, n_jobs=1)
    assert [r["auc"] for r in result.runs] == [r["auc"] for r in fresh.runs]


def test_cli_reproduce_and_compare_quick(tmp_path, capsys):
    assert main(["reproduce", "list"]) == 0
    assert "z11-table2" in capsys.readouterr().out
    out = tmp_path / "z11"
    assert main(["reproduce", "z11-table2", "--quick", "--out", str(out), "--jobs", "1"]) == 0
    printed = capsys.readouterr().out
    assert "| fourclass (paper) |" in printed and "z11_table2.md" in printed
    rows = _table_rows((out / "z11_table2.md").read_text())
    assert rows["dataset"] == [s.title for s in REPRODUCTIONS["z11-table2"].learners]
    assert set(rows) >= {"fourclass", "german", "win/tie/loss"}
    assert (
        main(
            [
                "compare",
                "--learners",
                "OPAUC",
                "Uni=UnivariateOnline(loss='exp')",
                "--datasets",
                "german",
                "--quick",
                "--out",
                str(tmp_path / "c"),
                "--jobs",
                "1",
                "--curves",
                "5",
            ]
        )
        == 0
    )
    rows = _table_rows((tmp_path / "c" / "comparison.md").read_text())
    assert rows["dataset"] == ["OPAUC", "Uni"]
    assert (tmp_path / "c" / "comparison_curves_examples.png").exists()
    with pytest.raises(SystemExit, match="unknown table"):
        main(["reproduce", "nope"])
    with pytest.raises(SystemExit, match="unknown learner"):
        main(["compare", "--learners", "Nope", "--datasets", "german"])


def test_quick_figures_write_curves_and_sweeps(tmp_path):
    files = reproduce("g16-fig7", tmp_path, mode="quick", n_jobs=1, progress=False)
    doc = json.loads(files["json"].read_text())
    curves = [r["curve"] for r in doc["runs"]]
    assert len(curves) == 3  # OPAUC, OAM_seq, OAM_gra on german, first split
    for c in curves:
        assert c["n_seen"] == sorted(c["n_seen"]) and c["n_seen"][-1] == 200
        assert all(0 <= a <= 1 for a in c["auc"]) and c["seconds"] == sorted(c["seconds"])
    assert files["examples_png"].exists() and files["seconds_png"].exists()
    files = reproduce("z11-fig1", tmp_path, mode="quick", n_jobs=1, progress=False)
    text = files["markdown"].read_text()
    assert "### OAM_seq" in text and "| 500 |" in text and files["png"].exists()


def test_every_table_of_the_brief_is_registered(capsys):
    assert main(["reproduce", "list"]) == 0
    listed = capsys.readouterr().out
    for name in (
        "g16-table2",
        "g16-table3",
        "g16-table4",
        "g16-table6",
        "z11-table2",
        "l18-table2",
        "d16-table2",
    ):
        assert name in listed and name in REPRODUCTIONS


def test_g16_table4_values_are_the_papers():
    from aucstream.evaluation._paper import G16_TABLE4

    assert G16_TABLE4.values["ijcnn1", "OPAUC_fd"] == (0.9811, 0.0093, "")
    assert G16_TABLE4.values["letter", "OAM_seq"] == (0.9370, 0.0046, "")
    assert G16_TABLE4.values["magic04", "OPAUC_h"] == (0.8588, 0.1413, "●")
    assert ("magic04", "OPAUC^pca") not in G16_TABLE4.values  # "N/A" in the paper
    assert len(G16_TABLE4.values) == 5 * 12 - 3


def test_random_feature_learners_run_behind_the_map():
    from sklearn.pipeline import Pipeline

    from aucstream.pipeline import ChunkedPipeline

    r = REPRODUCTIONS["g16-table4"]
    online = next(s for s in r.learners if s.title == "OPAUC_fd")
    batch = next(s for s in r.learners if s.title == "LS-SVM (batch)")
    model = online.build({"eta": 0.5}, random_state=3)
    assert isinstance(model, ChunkedPipeline)
    assert model.estimator.eta == 0.5 and model.transformer.n_components == 2000
    assert isinstance(batch.build(), Pipeline)


def test_the_feature_map_is_part_of_the_cache_key_only_when_there_is_one():
    from aucstream.evaluation import DataSpec, Job, LearnerSpec

    protocol = get_protocol("g16")
    plain = Job(LearnerSpec.make("OPAUC", "OPAUC"), DataSpec("german"), protocol, 0, 0)
    mapped = Job(
        LearnerSpec.make("OPAUC", "OPAUC", features={"n_components": 10}),
        DataSpec("german"),
        protocol,
        0,
        0,
    )
    assert "features" not in plain.config()  # runs cached before the option keep their keys
    assert mapped.config()["features"] == {"n_components": 10}
    assert plain.key() != mapped.key()


def test_quick_g16_table4_and_d16_reports(tmp_path):
    files = reproduce("g16-table4", tmp_path, mode="quick", n_jobs=1, progress=False)
    text = files["markdown"].read_text()
    rows = _table_rows(text)
    assert rows["dataset"][0] == "OPAUC_fd" and "LS-SVM (batch)" in rows["dataset"]
    assert "fourclass (paper)" in rows  # the paper's values beneath ours
    ours = _numbers(rows["fourclass"][0])
    assert 0.5 < ours[0] <= 1.0
    assert "2,000 random Fourier features" in text
    files = reproduce("d16-table2", tmp_path, mode="quick", n_jobs=1, progress=False)
    text = files["markdown"].read_text()
    assert "The paper's values are not printed" in text
    assert "No mean differs" not in text  # nothing to compare with
    assert "**CAPO**" in text  # the per-learner notes are kept
    rows = _table_rows(text)
    assert {"AdaOAM", "SAdaOAM", "CAPO", "LS-SVM"} <= set(rows["dataset"])


def test_the_l18_batch_ceiling_sees_the_whole_training_part():
    from aucstream.evaluation import DataSpec, Job

    r = REPRODUCTIONS["l18-table2"]
    ceiling = next(s for s in r.learners if s.title == "LS-SVM (batch)")
    job = Job(ceiling, DataSpec("a9a"), r.protocol_for("fast"), 0, 0)
    assert ceiling.is_batch and job.train_cap() is None  # L18 has no batch cap
    g16 = REPRODUCTIONS["g16-table3"]
    capped = Job(g16.learners[3], DataSpec("a9a"), g16.protocol_for("fast"), 0, 0)
    assert capped.train_cap() == 8000  # G16's batch learners keep the paper's cap
    assert r.protocol_for("fast").grid == "paper"  # L18 runs at the paper's protocol
