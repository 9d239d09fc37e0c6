import re

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from aucstream import OPAUC, load_model
from aucstream.cli import main


def test_run_prints_a_table_of_test_auc(capsys):
    assert main(["run", "--dataset", "diabetes", "fourclass", "--learner", "OPAUC", "OAM"]) == 0
    out = capsys.readouterr().out
    rows = re.findall(r"^(diabetes|fourclass)\s+(\w+)\s+([\d.]+)\s+([\d.]+)", out, re.M)
    assert len(rows) == 4
    aucs = {(d, name): float(auc) for d, name, auc, _ in rows}
    assert aucs["diabetes", "OPAUC"] > 0.8  # one pass on the embedded diabetes data
    assert all(0.5 < auc <= 1.0 for auc in aucs.values())


@pytest.fixture
def svm_files(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 6))
    y = np.where(X @ np.arange(1.0, 7.0) + rng.normal(size=3000) > 0, 1, -1)
    train, test = tmp_path / "train.svm.xz", tmp_path / "test.svm"
    import lzma

    with lzma.open(train, "wb") as f:
        dump_svmlight_file(X[:2000], y[:2000], f, zero_based=False)
    dump_svmlight_file(X[2000:], y[2000:], str(test), zero_based=False)
    return X, y, train, test


def test_fit_streams_a_file_and_score_matches_the_api(svm_files, tmp_path, capsys):
    X, y, train, test = svm_files
    model_path = tmp_path / "model.npz"
    assert (
        main(
            [
                "fit",
                "OPAUC",
                str(train),
                "-o",
                str(model_path),
                "--chunk-size",
                "300",
                "--param",
                "eta=2^-6",
                "lam=0.001",
                "--no-progress",
            ]
        )
        == 0
    )
    model = load_model(model_path)
    reference = OPAUC(eta=2**-6, lam=0.001).fit(X[:2000], y[:2000])
    np.testing.assert_allclose(model.coef_, reference.coef_, rtol=1e-6)
    assert model.n_samples_seen_ == 2000
    capsys.readouterr()
    assert main(["score", str(model_path), str(test), "--n-features", "6"]) == 0
    out = capsys.readouterr().out
    auc = float(re.search(r"AUC ([\d.]+)", out).group(1))
    assert auc == pytest.approx(reference.score(X[2000:], y[2000:]), abs=1e-6)
    assert auc > 0.9


def test_errors_are_reported_not_raised(tmp_path, capsys):
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:0.5 2:1\n-1 1:0.3 2:x\n")
    assert main(["fit", "OPAUC", str(bad), "-o", str(tmp_path / "m.npz")]) == 2
    err = capsys.readouterr().err
    assert "bad.svm" in err and "line 2" in err
    with pytest.raises(SystemExit, match="unknown learner"):
        main(["fit", "NoSuchLearner", str(bad), "-o", str(tmp_path / "m.npz")])


def test_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "OPAUC" in out and "diabetes" in out
