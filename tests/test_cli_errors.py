"""Every failure of the command line is one line on stderr and a non-zero exit.

Each kind of failure is tested in-process through ``aucstream.cli.main``: the exit
status, that stderr holds exactly one line, and that the line names what is wrong
(the file and line, the parameter, the member of a model file).
"""

import lzma
import os
import zipfile

import numpy as np
import pytest
from conftest import run_cli as run
from sklearn.datasets import dump_svmlight_file

from aucstream import OPAUC, UnivariateOnline, load_model, save_model
from aucstream.cli import main


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A training file (-1/+1), a test file labelled 1/2 (2 = positive), a model."""
    tmp = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 4))
    y = np.where(X @ np.array([1.0, -2.0, 0.5, 1.5]) + 0.5 * rng.normal(size=600) > 0, 1, -1)
    paths = {"train": tmp / "train.svm", "test12": tmp / "test12.svm", "model": tmp / "m.npz"}
    dump_svmlight_file(X[:400], y[:400], str(paths["train"]), zero_based=False)
    dump_svmlight_file(X[400:], np.where(y[400:] > 0, 2, 1), str(paths["test12"]), zero_based=False)
    model = OPAUC(eta=2**-4, lam=1e-3).fit(X[:400], y[:400])
    save_model(model, paths["model"])
    paths.update(X=X, y=y, model_object=model, tmp=tmp)
    return paths


def test_truncated_xz_names_the_file(files, tmp_path, capsys):
    whole = tmp_path / "whole.svm.xz"
    with lzma.open(whole, "wb") as f:
        f.write(files["train"].read_bytes())
    cut = tmp_path / "cut.svm.xz"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    code, _, err = run(capsys, "fit", cut, "--learner", "OPAUC", "--no-scale", "-o", tmp_path / "m")
    line = one_line(err)
    assert code == 2
    assert line.startswith("aucstream fit: error: ") and str(cut) in line and "ends early" in line
    assert not (tmp_path / "m.npz").exists()


def test_bad_line_names_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("1,2,1\n3,4,-1\n5,x,1\n")
    code, _, err = run(capsys, "fit", bad, "--learner", "OPAUC", "--no-scale", "-o", tmp_path / "m")
    assert code == 2 and "bad.csv, line 3" in one_line(err)


def test_corrupt_model_names_file_and_member(files, tmp_path, capsys):
    damaged = tmp_path / "damaged.npz"
    with zipfile.ZipFile(files["model"]) as src, zipfile.ZipFile(damaged, "w") as out:
        for info in src.infolist():
            data = src.read(info.filename)
            out.writestr(info, data if info.filename == "__meta__.npy" else data[:40])
    code, _, err = run(capsys, "score", damaged, files["test12"], "--positive", "2")
    line = one_line(err)
    assert code == 2 and str(damaged) in line and "state/" in line
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(files["model"].read_bytes()[:300])
    code, _, err = run(capsys, "predict", truncated, files["test12"])
    assert code == 2 and str(truncated) in one_line(err)


def test_invalid_parameter_value_names_the_parameter(files, tmp_path, capsys):
    argv = ["fit", files["train"], "--learner", "UnivariateOnline", "--no-scale"]
    code, _, err = run(capsys, *argv, "--param", "eta=abc", "-o", tmp_path / "m")
    line = one_line(err)
    assert code == 2 and "'eta' parameter of UnivariateOnline" in line and "abc" in line
    code, _, err = run(capsys, *argv, "--param", "eta=-1", "-o", tmp_path / "m")
    assert code == 2 and "'eta'" in one_line(err)
    assert not (tmp_path / "m.npz").exists()


def test_unknown_parameter_and_bad_syntax(files, tmp_path, capsys):
    argv = ["fit", files["train"], "--learner", "OPAUC", "--no-scale", "-o", tmp_path / "m"]
    code, _, err = run(capsys, *argv, "--param", "etta=0.1")
    line = one_line(err)
    assert code == 2 and "unknown parameter 'etta' for OPAUC" in line and "eta" in line
    code, _, err = run(capsys, *argv, "--param", "eta")
    assert code == 2 and "NAME=VALUE" in one_line(err)
    code, _, err = run(capsys, "fit", files["train"], "--learner", "NoSuch", "-o", tmp_path / "m")
    assert code == 2 and "unknown learner 'NoSuch'" in one_line(err)


def test_unreadable_input_is_one_line(files, tmp_path, capsys):
    code, _, err = run(
        capsys, "fit", tmp_path, "--learner", "OPAUC", "--no-scale", "-o", tmp_path / "m"
    )
    assert code == 2 and str(tmp_path) in one_line(err)
    code, _, err = run(capsys, "score", files["model"], tmp_path / "absent.svm")
    assert code == 2 and "absent.svm" in one_line(err)
    if os.geteuid() == 0:
        pytest.skip("root reads files without read permission")
    locked = tmp_path / "locked.svm"
    locked.write_bytes(files["train"].read_bytes())
    locked.chmod(0)
    code, _, err = run(
        capsys, "fit", locked, "--learner", "OPAUC", "--no-scale", "-o", tmp_path / "m"
    )
    assert code == 2 and "locked.svm" in one_line(err) and "ermission" in err


def test_permission_error_is_one_line(files, tmp_path, capsys, monkeypatch):
    """As the root user reads any file, the refusal is simulated where the model is
    opened: the line is the file and the system's reason, not a traceback."""
    import aucstream.persistence

    def refuse(path):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(aucstream.persistence, "load_model", refuse)
    code, _, err = run(capsys, "score", files["model"], files["test12"])
    assert (
        code == 2
        and one_line(err) == f"aucstream score: error: {files['model']}: Permission denied"
    )


def test_empty_file_says_no_examples(tmp_path, capsys):
    empty = tmp_path / "empty.svm"
    empty.write_text("")
    code, _, err = run(
        capsys, "fit", empty, "--learner", "OPAUC", "--no-scale", "-o", tmp_path / "m"
    )
    assert code == 2 and one_line(err).endswith(f"no examples in {empty}")


def test_score_refuses_labels_that_are_not_the_models_classes(files, capsys):
    """A model trained on -1/+1 scored on a file labelled 1/2: without --positive the
    AUC would be computed against the wrong class (inverted); it is refused."""
    code, out, err = run(capsys, "score", files["model"], files["test12"])
    line = one_line(err)
    assert code == 2 and out == ""
    assert "label 2" in line and "--positive" in line and str(files["test12"]) in line
    code, out, _ = run(capsys, "score", files["model"], files["test12"], "--positive", "2")
    assert code == 0
    X, y = files["X"][400:], files["y"][400:]
    expected = files["model_object"].score(X, y)
    assert float(out.split("ROC AUC ")[1].split()[0]) == pytest.approx(expected, abs=1e-6)
    assert expected > 0.9


def test_fit_refuses_a_third_label(files, tmp_path, capsys):
    three = tmp_path / "three.svm"
    X = files["X"][:30]
    dump_svmlight_file(X, np.arange(30) % 3, str(three), zero_based=False)
    code, _, err = run(
        capsys, "fit", three, "--learner", "OPAUC", "--no-scale", "-o", tmp_path / "m"
    )
    assert code == 2 and "more than two labels" in one_line(err) and "--positive" in err
    argv = ["fit", three, "--learner", "OPAUC", "--no-scale", "-o", tmp_path / "m"]
    code, out, _ = run(capsys, *argv, "--positive", "2")
    assert code == 0 and "classes -1, 1" in out


def test_output_is_checked_before_learning(files, tmp_path, capsys):
    """The model path is checked first: the error is about it, not about the data
    (a bad line that the stream would reach later)."""
    bad = tmp_path / "bad.svm"
    bad.write_text(files["train"].read_text() + "1 1:x\n")
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    for target in (not_a_dir / "m.npz", tmp_path / "no" / "such" / "m"):
        code, _, err = run(capsys, "fit", bad, "--learner", "OPAUC", "--no-scale", "-o", target)
        line = one_line(err)
        assert code == 2 and "cannot write the model file" in line and "line" not in line


def test_fit_reports_the_path_written(files, tmp_path, capsys):
    target = tmp_path / "model"
    code, out, _ = run(
        capsys, "fit", files["train"], "--learner", "OPAUC", "--no-scale", "-o", target
    )
    written = tmp_path / "model.npz"
    assert code == 0 and out.strip().endswith(f"saved to {written}")
    assert written.is_file() and not target.exists()
    assert load_model(written).n_samples_seen_ == 400


def test_compare_unknown_dataset_exits_non_zero(tmp_path, capsys):
    argv = ["compare", "--learners", "OPAUC", "--quick", "--out", tmp_path, "--jobs", "1"]
    code, out, err = run(capsys, *argv, "--datasets", "diabetis")
    assert code == 2 and "unknown dataset 'diabetis'" in one_line(err) and "diabetes" in err
    code, _, err = run(capsys, *argv, "--datasets", tmp_path / "absent.svm")
    assert code == 2 and "absent.svm" in one_line(err)
    assert not (tmp_path / "comparison.md").exists()
    empty_home = tmp_path / "data"
    empty_home.mkdir()
    code, _, err = run(capsys, *argv, "--datasets", "a9a", "--data-home", empty_home)
    line = one_line(err)
    assert code == 2 and "no dataset could be used: a9a (missing" in line


def test_compare_with_every_run_failed_exits_non_zero(tmp_path, capsys):
    argv = ["compare", "--learners", "UnivariateOnline(eta=-1.0)", "--datasets", "fourclass"]
    code, out, err = run(capsys, *argv, "--quick", "--out", tmp_path, "--jobs", "1")
    assert code == 2
    assert "every run failed" in err and "'eta'" in err
    assert "wrote" in out  # the report of what failed is still written


def test_debug_shows_the_traceback(tmp_path, capsys):
    empty = tmp_path / "empty.svm"
    empty.write_text("")
    argv = [str(empty), "--learner", "OPAUC", "--no-scale", "-o", str(tmp_path / "m")]
    for debug in (["fit", *argv, "--debug"], ["--debug", "fit", *argv]):
        with pytest.raises(ValueError, match="no examples"):
            main(debug)


def test_zero_based_flag(tmp_path, capsys):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    y = np.where(X[:, 0] - X[:, 2] > 0, 1, -1)
    zero = tmp_path / "zero.svm"
    dump_svmlight_file(X, y, str(zero), zero_based=True)
    argv = ["fit", zero, "--learner", "OPAUC", "--no-scale", "-o", tmp_path / "m"]
    code, out, _ = run(capsys, *argv, "--zero-based", "yes")
    assert code == 0 and "3 features" in out
    np.testing.assert_allclose(load_model(tmp_path / "m.npz").coef_, OPAUC().fit(X, y).coef_)
    code, _, err = run(capsys, *argv, "--zero-based", "no")
    assert code == 2 and "zero.svm, line 1" in one_line(err) and "index 0" in err


def test_learner_path_learns_the_same_model_as_the_api(files, tmp_path, capsys):
    argv = ["fit", files["train"], "--learner", "UnivariateOnline", "--no-scale"]
    code, _, _ = run(capsys, *argv, "--param", "eta=2^-3", "-o", tmp_path / "u")
    assert code == 0
    reference = UnivariateOnline(eta=2**-3).fit(files["X"][:400], files["y"][:400])
    np.testing.assert_allclose(load_model(tmp_path / "u.npz").coef_, reference.coef_, rtol=1e-12)


def test_default_learner_is_the_tuning_free_pipeline(files, tmp_path, capsys):
    import aucstream

    if not hasattr(aucstream, "StreamPipeline") or not hasattr(aucstream, "OnePassSearch"):
        code, _, err = run(capsys, "fit", files["train"], "-o", tmp_path / "d")
        assert code == 2 and "not in this version" in one_line(err)
        pytest.skip("StreamPipeline/OnePassSearch are not in this version")
    code, out, _ = run(capsys, "fit", files["train"], "-o", tmp_path / "d")
    assert code == 0
    model = load_model(tmp_path / "d.npz")
    assert type(model).__name__ == "StreamPipeline"
    assert model.n_samples_seen_ == 400
    X, y = files["X"][400:], files["y"][400:]
    assert aucstream.roc_auc(y == 1, model.decision_function(X)) > 0.9


def test_a_reader_that_leaves_early_is_not_an_error():
    """``aucstream list | head -1``: the closed pipe ends the command quietly."""
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line
    run = subprocess.run(
        [sys.executable, "-m", "aucstream", "list"],
        stdout=write,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )
    os.close(write)
    assert "Traceback" not in run.stderr and "BrokenPipe" not in run.stderr, run.stderr
    assert run.returncode == 141


def test_a_note_on_an_error_joins_its_one_line():
    """Notes the library adds (e.g. the example a value came from) are kept on the
    one line the command prints."""
    from aucstream.cli import _one_line

    error = ValueError("Input X contains NaN.\nsee the docs")
    error.__notes__ = ["prequential: example 217 of the stream"]  # (add_note: 3.11 on)
    assert _one_line(error) == (
        "Input X contains NaN. see the docs (prequential: example 217 of the stream)"
    )
