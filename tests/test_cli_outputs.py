"""What the command line writes: predictions, scores, curves, progress bars."""

import os
import re

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from aucstream import LSSVMAUC, OPAUC, load_model, save_model
from aucstream.cli import main
from aucstream.datasets import iter_file, load_file
from aucstream.metrics import pr_auc, roc_auc


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("outputs")
    rng = np.random.default_rng(3)
    X = rng.normal(size=(700, 5))
    y = np.where(X @ rng.normal(size=5) + 0.8 * rng.normal(size=700) > 0, 1, -1)
    test_svm, test_csv = tmp / "test.svm", tmp / "test.csv"
    dump_svmlight_file(X[500:], y[500:], str(test_svm), zero_based=False)
    # a CSV whose label column holds words: predict ignores the labels
    words = np.where(y[500:] > 0, "yes", "no")
    lines = [",".join([*map(repr, row), w]) for row, w in zip(X[500:].tolist(), words)]
    test_csv.write_text("\n".join(lines) + "\n")
    model = OPAUC(eta=2**-4, lam=1e-3).fit(X[:500], y[:500])
    model_path = save_model(model, tmp / "opauc")
    return {
        "X": X[500:],
        "y": y[500:],
        "model": model,
        "model_path": model_path,
        "svm": test_svm,
        "csv": test_csv,
        "train": (X[:500], y[:500]),
        "tmp": tmp,
    }


def rows(data, source):
    options = {"n_features": 5} if source == "svm" else {"label_type": "str"}
    return load_file(data[source], **options)[0]


def read_scores(text: str) -> np.ndarray:
    lines = text.strip().splitlines()
    return np.loadtxt(lines[1:], delimiter=",", ndmin=2), lines[0]


@pytest.mark.parametrize("source", ["svm", "csv"])
def test_predict_streams_the_scores_of_decision_function(data, source, capsys):
    assert main(["predict", str(data["model_path"]), str(data[source]), "--chunk-size", "64"]) == 0
    scores, header = read_scores(capsys.readouterr().out)
    assert header == "score" and scores.shape == (200, 1)
    # the same rows, as the reader gives them (CSR or dense): printed with 17
    # significant digits, the round trip is exact
    X = rows(data, source)
    np.testing.assert_array_equal(scores[:, 0], data["model"].decision_function(X))
    np.testing.assert_allclose(scores[:, 0], data["model"].decision_function(data["X"]), rtol=1e-12)


def test_predict_to_a_file_with_probabilities(data, tmp_path, capsys):
    X_train, y_train = data["train"]
    batch = LSSVMAUC().fit(X_train, y_train)
    path = save_model(batch, tmp_path / "batch")
    out = tmp_path / "scores.csv"
    assert main(["predict", str(path), str(data["svm"]), "-o", str(out), "--proba"]) == 0
    assert f"200 scores written to {out}" in capsys.readouterr().out
    table, header = read_scores(out.read_text())
    assert header == "score,probability"
    X = rows(data, "svm")
    np.testing.assert_array_equal(table[:, 0], batch.decision_function(X))
    np.testing.assert_array_equal(table[:, 1], batch.predict_proba(X)[:, 1])
    assert not list(tmp_path.glob(".scores.csv.*"))  # no temporary file left


def test_score_reports_roc_and_pr_auc_and_draws_the_curves(data, tmp_path, capsys):
    png = tmp_path / "curves.png"
    assert main(["score", str(data["model_path"]), str(data["svm"]), "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    scores = data["model"].decision_function(data["X"])
    positive = data["y"] == 1
    assert float(re.search(r"ROC AUC ([\d.]+)", out).group(1)) == pytest.approx(
        roc_auc(positive, scores), abs=5e-7
    )
    assert float(re.search(r"PR AUC ([\d.]+)", out).group(1)) == pytest.approx(
        pr_auc(positive, scores), abs=5e-7
    )
    assert f"{positive.sum()} positive" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def _reader_tells_bytes(path) -> bool:
    return getattr(iter_file(path), "total_bytes", None) is not None


def test_fit_progress_bar_with_running_auc(data, tmp_path, capsys):
    argv = ["fit", str(data["svm"]), "--learner", "OPAUC", "--no-scale", "-o", str(tmp_path / "m")]
    assert main([*argv, "--progress", "--running-auc", "--chunk-size", "50"]) == 0
    captured = capsys.readouterr()
    assert "prequential AUC" in captured.out
    bar = captured.err.strip().splitlines()[-1]
    assert bar.startswith("fit OPAUC: ") and "prequential AUC" in bar
    if not _reader_tells_bytes(data["svm"]):
        pytest.skip("the readers do not tell bytes_read/total_bytes yet: no percentage")
    assert ", 100%, " in bar and "ETA" in bar and "200 examples" in bar


def test_progress_is_off_unless_asked_when_not_a_terminal(data, tmp_path, capsys):
    argv = ["fit", str(data["svm"]), "--learner", "OPAUC", "--no-scale", "-o", str(tmp_path / "m")]
    assert main(argv) == 0
    assert capsys.readouterr().err == ""
    assert main(["score", str(data["model_path"]), str(data["svm"]), "--progress"]) == 0
    assert capsys.readouterr().err.startswith("score: ")


def test_run_shows_progress(capsys):
    argv = ["run", "--dataset", "fourclass", "--learner", "OPAUC", "SOLAM", "--grid", "none"]
    assert main([*argv, "--progress"]) == 0
    captured = capsys.readouterr()
    assert len(re.findall(r"^fourclass\s+(OPAUC|SOLAM)\s+0\.\d+", captured.out, re.M)) == 2
    assert re.search(r"^run: 2/2 learners, 100%, .* elapsed, ETA ", captured.err, re.M)


class _CountingReader:
    """The reader's chunks, telling ``bytes_read``/``total_bytes`` as the readers will
    (here: the file size times the share of rows yielded)."""

    def __init__(self, chunks, path, n_rows):
        self.chunks, self.rows, self.n_rows = chunks, 0, n_rows
        self.total_bytes, self.bytes_read = os.path.getsize(path), 0

    def __iter__(self):
        return self

    def __next__(self):
        X, y = next(self.chunks)
        self.rows += X.shape[0]
        self.bytes_read = self.total_bytes * self.rows // self.n_rows
        return X, y


def test_the_cli_bar_uses_the_readers_bytes(data, tmp_path, capsys, monkeypatch):
    import aucstream.datasets

    real = aucstream.datasets.iter_file

    def counting(path, *args, **kwargs):
        return _CountingReader(real(path, *args, **kwargs), path, 200)

    monkeypatch.setattr(aucstream.datasets, "iter_file", counting)
    argv = ["predict", str(data["model_path"]), str(data["svm"]), "-o", str(tmp_path / "s.csv")]
    assert main([*argv, "--progress", "--chunk-size", "50"]) == 0
    bar = capsys.readouterr().err.strip().splitlines()[-1]
    size = data["svm"].stat().st_size
    assert bar.startswith("predict: ") and ", 100%, " in bar and "ETA 00:00" in bar
    assert "200 examples" in bar
    assert f"/{size / 1024:.1f}kB" in bar


def test_compare_shows_progress(tmp_path, capsys):
    argv = ["compare", "--learners", "SOLAM", "--datasets", "fourclass", "--quick"]
    assert main([*argv, "--jobs", "1", "--out", str(tmp_path), "--progress"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"^tuning: (\d+)/\1 runs, 100%, .* elapsed, ETA ", err, re.M)
    assert re.search(r"^test runs: 3/3 runs, 100%, ", err, re.M)


def test_default_fit_says_which_candidate_scores(data, tmp_path, capsys):
    """The default learner (online scaler + OnePassSearch) names the candidates it scores
    with: the saved model's ensemble, the leader first."""
    target = tmp_path / "m.npz"
    assert main(["fit", str(data["svm"]), "--n-features", "5", "-o", str(target)]) == 0
    out = capsys.readouterr().out
    model = load_model(target)
    assert type(model).__name__ == "StreamPipeline"
    search = model.estimator_
    names = [repr(search.candidates_[i]) for i in search.ensemble_ if i >= 0]
    assert names[0] == repr(search.best_estimator_)
    assert f"scoring with {names[0]}" in out or " + ".join(names) in out


def test_fit_and_score_name_the_learner_behind_the_scaler(data, tmp_path, capsys):
    """A learner fitted behind the online scaler is named with it, by ``fit`` and by
    ``score``; ``--no-scale`` names the learner alone. ``score`` reads the model by
    the name given to ``fit`` (``save_model`` appended ``.npz``)."""
    for extra, name in ([], "SOLAM behind OnlineStandardScaler"), (["--no-scale"], "SOLAM"):
        target = tmp_path / f"m{len(extra)}"
        argv = ["fit", str(data["svm"]), "--learner", "SOLAM", *extra, "-o", str(target)]
        assert main(argv) == 0
        assert capsys.readouterr().out.startswith(f"{name}: 200 examples, 5 features")
        assert main(["score", str(target), str(data["svm"])]) == 0
        assert capsys.readouterr().out.rstrip().endswith(f"({name}, {target})")


def test_a_first_run_says_that_it_compiles(tmp_path, monkeypatch, capsys):
    """A command that learns says in one line on stderr that it compiles when numba's
    cache holds none of the core kernels (a first run, which otherwise sits silent),
    and nothing when it does (issue 34); kernels_cached reads numba's cache index."""
    import importlib.util
    import sys

    from aucstream._kernels import kernels_cached
    from aucstream.cli import _common

    source = tmp_path / "probe_kernel.py"
    source.write_text(
        "from aucstream._kernels import jit\n\n\n@jit\ndef twice(x):\n    return 2 * x\n"
    )
    spec = importlib.util.spec_from_file_location("probe_kernel", source)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "probe_kernel", module)
    spec.loader.exec_module(module)
    assert kernels_cached([module.twice]) is False  # never compiled here
    assert module.twice(2) == 4
    assert kernels_cached([module.twice]) is True  # compiled, and cached on disk
    for cached, said in ((False, True), (True, False), (None, False)):
        monkeypatch.setattr("aucstream.streaming.kernels_compiled", lambda c=cached: c)
        assert _common.say_if_compiling() is said
        err = capsys.readouterr().err
        assert (
            (err.count("\n") == 1 and err.startswith("aucstream: compiling")) if said else err == ""
        )
