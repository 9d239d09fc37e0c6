"""The top of the ranking on the command line: fit --max-fpr, score's partial AUCs and
low-FPR plot, predict --alert-rate / --fpr."""

import numpy as np
import pytest
from conftest import run_cli as run
from sklearn.datasets import dump_svmlight_file

from aucstream import LSSVMAUC, SOLAM, load_model, save_model
from aucstream.datasets import load_file
from aucstream.metrics import roc_auc


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Rare positives (about 4%): a training and a test file, a saved SOLAM."""
    tmp = tmp_path_factory.mktemp("pauc")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 4)) * [1.0, 10.0, 0.5, 2.0]
    latent = X @ np.array([1.0, 0.1, 1.0, 0.2]) + rng.normal(size=5000)
    y = np.where(latent > np.quantile(latent, 0.96), 1, -1)
    paths = {"train": tmp / "train.svm", "test": tmp / "test.svm", "model": tmp / "m.npz"}
    dump_svmlight_file(X[:4000], y[:4000], str(paths["train"]), zero_based=False)
    dump_svmlight_file(X[4000:], y[4000:], str(paths["test"]), zero_based=False)
    save_model(SOLAM().fit(X[:4000], y[:4000]), paths["model"])
    paths.update(tmp=tmp)
    return paths


def test_fit_max_fpr_default_learner(files, capsys):
    out = files["tmp"] / "default.npz"
    code, _, err = run(capsys, "fit", files["train"], "-o", out, "--max-fpr", "0.05")
    assert code == 0, err
    model = load_model(out)
    # the search when it selects by partial AUC, else the partial-AUC learner
    assert model.estimator_.get_params()["max_fpr"] == 0.05


def test_fit_max_fpr_with_a_learner(files, capsys):
    out = files["tmp"] / "pauc.npz"
    argv = ["fit", files["train"], "-o", out, "--learner", "OnlinePAUC", "--no-scale"]
    code, _, err = run(capsys, *argv, "--max-fpr", "0.01", "--params", "eta=0.3")
    assert code == 0, err
    model = load_model(out)
    assert (type(model).__name__, model.max_fpr, model.eta) == ("OnlinePAUC", 0.01, 0.3)
    code, _, err = run(capsys, *argv, "--max-fpr", "0.01", "--params", "max_fpr=0.1")
    assert code == 2 and "give max_fpr once" in err


@pytest.mark.parametrize("value", ["0", "1.5", "nan", "-0.1", "abc"])
def test_fit_max_fpr_out_of_range(files, capsys, value):
    code, _, err = run(
        capsys, "fit", files["train"], "-o", files["tmp"] / "x.npz", "--max-fpr", value
    )
    assert code == 2 and "--max-fpr" in err
    assert not (files["tmp"] / "x.npz").exists()


def test_fit_max_fpr_refuses_a_full_auc_learner(files, capsys):
    argv = ["fit", files["train"], "-o", files["tmp"] / "y.npz", "--learner", "OPAUC"]
    code, _, err = run(capsys, *argv, "--max-fpr", "0.05")
    assert code == 2 and "OPAUC maximizes the full AUC" in err


def test_score_reports_partial_aucs(files, capsys):
    code, out, err = run(capsys, "score", files["model"], files["test"])
    assert code == 0, err
    X, y = load_file(files["test"], n_features=4)[:2]
    scores = load_model(files["model"]).decision_function(X)
    line = out.strip().splitlines()[0]
    assert line.startswith("partial AUC (McClish")
    for beta in (0.01, 0.05, 0.1):
        assert f"FPR<={beta:g} {roc_auc(y > 0, scores, max_fpr=beta):.6f}" in line


def test_score_plot_has_a_low_fpr_panel(files, capsys, monkeypatch):
    pytest.importorskip("matplotlib")
    import matplotlib.figure

    axes = []
    real = matplotlib.figure.Figure.savefig

    def spy(fig, *args, **kwargs):
        axes.extend(fig.axes)
        return real(fig, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", spy)
    png = files["tmp"] / "roc.png"
    code, _, err = run(capsys, "score", files["model"], files["test"], "--plot", png)
    assert code == 0, err
    assert png.stat().st_size > 0
    low = axes[-1]
    assert low.get_xscale() == "log" and low.get_xlim()[0] > 0
    assert "low false-positive" in low.get_title()


@pytest.mark.parametrize(("flag", "threshold"), [("--alert-rate", "alert_rate"), ("--fpr", "fpr")])
def test_predict_flags_the_operating_point(files, capsys, flag, threshold):
    code, out, err = run(capsys, "predict", files["model"], files["test"], flag, "0.05")
    assert code == 0, err
    lines = out.strip().splitlines()
    assert lines[0] == "score,flag"
    table = np.loadtxt(lines[1:], delimiter=",", ndmin=2)
    X = load_file(files["test"], n_features=4)[0]
    model = load_model(files["model"])
    expected = model.predict(X, threshold=f"{threshold}:0.05") == model.classes_[1]
    np.testing.assert_array_equal(table[:, 1], expected)
    np.testing.assert_array_equal(table[:, 0], model.decision_function(X))
    assert 0.02 < table[:, 1].mean() < 0.1


def test_predict_operating_point_errors(files, capsys):
    code, _, err = run(
        capsys, "predict", files["model"], files["test"], "--fpr", "0.1", "--alert-rate", "0.1"
    )
    assert code == 2 and "not allowed with" in err
    code, _, err = run(capsys, "predict", files["model"], files["test"], "--alert-rate", "1")
    assert code == 2 and "--alert-rate" in err
    X, y = load_file(files["train"], n_features=4)[:2]
    batch = save_model(LSSVMAUC().fit(X[:500], y[:500]), files["tmp"] / "batch.npz")
    code, _, err = run(capsys, "predict", batch, files["test"], "--fpr", "0.01")
    assert code == 2 and "records no prequential scores" in err
