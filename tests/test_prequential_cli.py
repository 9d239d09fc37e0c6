"""The command line: ``evaluate --detector`` and ``--hash-features`` (fit, score, evaluate)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import dump_svmlight_file

from aucstream import SOLAM
from aucstream.cli import main
from aucstream.datasets import iter_chunks, iter_csv
from aucstream.drift import ADWIN, AUCDriftDetector, PageHinkley
from aucstream.evaluation import prequential


def drifting(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    sign = np.where(np.arange(n) < n // 2, 1.0, -1.0)
    y = np.where(sign * X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, -1)
    return X, y


@pytest.mark.parametrize("name, inner", [("page-hinkley", PageHinkley), ("adwin", ADWIN)])
def test_evaluate_detector_writes_the_alarms(tmp_path, capsys, name, inner):
    X, y = drifting()
    path, out = tmp_path / "d.svm", tmp_path / "curve.csv"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    argv = [
        "evaluate", str(path), "--learner", "SOLAM", "--no-scale", "--detector", name,
        "--every", "100", "--metrics", "auc", "-o", str(out), "--chunk-size", "128",
    ]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    curve = pd.read_csv(out)
    expected = prequential(
        SOLAM(), iter_chunks(X, y, 128), every=100, metrics=["auc", "alarms"],
        detector=AUCDriftDetector(inner()),
    )  # fmt: skip
    assert list(curve.columns) == list(expected.columns)
    assert curve["alarms"].tolist() == expected["alarms"].tolist()
    assert curve["alarms"].iloc[-1] > 0  # the sign flip at n / 2 raises an alarm
    if __import__("importlib").util.find_spec("matplotlib") is not None:
        png = tmp_path / "curve.png"
        assert main([*argv, "--plot", str(png)]) == 0 and png.stat().st_size > 0
    with pytest.raises(SystemExit):  # not a detector the option knows
        main([*argv[:5], "--detector", "ddm", "-o", str(out)])


def categorical_csv(path, n=600, seed=0):
    rng = np.random.default_rng(seed)
    city = rng.choice(["Paris", "Oslo", "Lima", "Kyiv"], n)
    amount = np.round(rng.normal(size=n), 3)
    y = (np.isin(city, ["Paris", "Oslo"]) ^ (rng.random(n) < 0.1)).astype(int)
    with open(path, "w") as f:
        f.write("city,amount,label\n")
        for c, a, label in zip(city, amount, y):
            f.write(f"{c},{a},{label}\n")


def test_hash_features_through_fit_score_and_evaluate(tmp_path, capsys):
    path, model, out = tmp_path / "cat.csv", tmp_path / "m.npz", tmp_path / "curve.csv"
    categorical_csv(path)
    common = ["--learner", "SOLAM", "--no-scale", "--chunk-size", "100"]
    hashed = ["--hash-features", "2^10"]
    assert main(["fit", str(path), *common, *hashed, "-o", str(model)]) == 0
    assert main(["score", str(model), str(path), *hashed]) == 0
    assert "AUC" in capsys.readouterr().out
    assert main(["evaluate", str(path), *common, *hashed, "-o", str(out)]) == 0
    curve = pd.read_csv(out)
    expected = prequential(SOLAM(), iter_csv(path, chunk_size=100, hash_features=2**10), every=100)
    np.testing.assert_allclose(curve["auc"], expected["auc"], rtol=1e-12)
    assert curve["auc"].iloc[-1] > 0.8


def test_hash_features_refusals(tmp_path, capsys):
    path, out = tmp_path / "cat.csv", tmp_path / "curve.csv"
    categorical_csv(path, n=50)
    base = ["evaluate", str(path), "--learner", "SOLAM", "--no-scale", "-o", str(out)]
    assert main(base) == 2  # a string column, and no hashing asked
    assert "--hash-features 2^20" in capsys.readouterr().err
    assert main([*base, "--hash-features", "1000"]) == 2
    assert "power of two" in capsys.readouterr().err
    assert main([*base, "--hash-features", "True"]) == 2
    assert "power of two" in capsys.readouterr().err
    svm = tmp_path / "d.svm"
    dump_svmlight_file(*drifting(50), str(svm), zero_based=False)
    assert main(["evaluate", str(svm), "--hash-features", "2^10", "-o", str(out)]) == 2
    assert "applies to CSV files" in capsys.readouterr().err
    assert not out.exists()


def test_evaluate_plot_of_a_short_stream_says_how_to_get_a_curve(tmp_path, capsys):
    """A stream shorter than the default checkpoint interval (the chunk size) gives
    one checkpoint: the plot marks it, and the command says to pass --every."""
    pytest.importorskip("matplotlib")
    X, y = drifting(300)
    path, out, png = tmp_path / "d.svm", tmp_path / "curve.csv", tmp_path / "curve.png"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    argv = ["evaluate", str(path), "--learner", "SOLAM", "-o", str(out), "--plot", str(png)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert len(pd.read_csv(out)) == 1 and png.stat().st_size > 0
    assert "one checkpoint" in err and "--every 10,000" in err
    assert main([*argv, "--every", "50"]) == 0
    assert len(pd.read_csv(out)) == 6 and "one checkpoint" not in capsys.readouterr().err


def test_evaluate_with_a_window_reads_it_once_per_window_by_default(tmp_path, capsys):
    """Without --every, a --window W gives a checkpoint every W examples: each
    checkpoint's window_auc is the AUC of the W examples since the one before (tumbling
    windows, as CapyMOA's windowed evaluation), the same as prequential's."""
    X, y = drifting(1000)
    path, out = tmp_path / "d.svm", tmp_path / "curve.csv"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    argv = ["evaluate", str(path), "--learner", "SOLAM", "--no-scale", "-o", str(out)]
    assert main([*argv, "--window", "250", "--chunk-size", "300"]) == 0
    capsys.readouterr()
    curve = pd.read_csv(out)
    assert curve["n_seen"].tolist() == [250, 500, 750, 1000]
    expected = prequential(SOLAM(), iter_chunks(X, y, 300), every=250, window=250)
    np.testing.assert_array_equal(curve["window_auc"], expected["window_auc"])
    assert main([*argv, "--window", "250", "--every", "500"]) == 0  # --every still rules
    assert pd.read_csv(out)["n_seen"].tolist() == [500, 1000]
    assert main([*argv, "--chunk-size", "300"]) == 0  # no window: a checkpoint a chunk
    assert pd.read_csv(out)["n_seen"].tolist() == [300, 600, 900, 1000]
    if __import__("importlib").util.find_spec("matplotlib") is not None:
        png = tmp_path / "curve.png"
        assert main([*argv, "--window", "5000", "--plot", str(png)]) == 0
        err = capsys.readouterr().err  # (a window longer than the stream: one checkpoint)
        assert "one checkpoint" in err and "--every 5,000 (by default --window)" in err


def test_a_hashed_models_width_is_named_when_the_file_is_read_otherwise(tmp_path, capsys):
    """A model fitted on a CSV hashed into 2^10 columns: scoring or predicting that CSV
    without --hash-features, or with another width, is refused with the model's width
    to pass (not an example width), before anything is read or written."""
    path, model = tmp_path / "cat.csv", tmp_path / "m.npz"
    categorical_csv(path)
    common = ["--learner", "SOLAM", "--no-scale", "--chunk-size", "100"]
    assert main(["fit", str(path), *common, "--hash-features", "2^10", "-o", str(model)]) == 0
    capsys.readouterr()
    for argv in (["score", str(model), str(path)], ["predict", str(model), str(path)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "the model reads 1,024 columns (2^10): pass --hash-features 2^10" in err
        assert main([*argv, "--hash-features", "2^12"]) == 2
        err = capsys.readouterr().err
        assert "hashes into 4,096 columns, but the model reads 1,024 (2^10)" in err
        assert "pass --hash-features 2^10" in err
    out = tmp_path / "scores.csv"
    assert main(["predict", str(model), str(path), "--hash-features", "2^12", "-o", str(out)]) == 2
    assert not out.exists()
    assert main(["score", str(model), str(path), "--hash-features", "2^10"]) == 0


def test_the_width_hint_reads_any_integer_and_names_powers_of_two_only():
    from aucstream.cli._common import _width_hint

    assert _width_hint(np.int64(2**18)) == _width_hint(2**18)
    assert "pass --hash-features 2^18" in _width_hint(2**18)
    assert _width_hint(1000) == _width_hint(1) == ""


def test_evaluate_max_fpr_rank_and_label_drops(tmp_path, capsys):
    """``--max-fpr`` adds the partial AUC's columns (to --metrics too) and leaves the
    learner as it is; ``--rank``, ``--label-probability`` and ``--seed`` reach
    prequential; a partial-AUC column without ``--max-fpr`` names the flag."""
    X, y = drifting(900, seed=3)
    path, out = tmp_path / "d.svm", tmp_path / "curve.csv"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    base = ["evaluate", str(path), "--learner", "SOLAM", "--no-scale", "--chunk-size", "100"]
    argv = [*base, "--max-fpr", "0.1", "--window", "300", "--rank", "proba"]
    assert main([*argv, "--label-probability", "0.5", "--seed", "4", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    curve = pd.read_csv(out)
    expected = prequential(
        SOLAM(), iter_chunks(X, y, 100), window=300, every=300, max_fpr=0.1, rank="proba",
        label_probability=0.5, random_state=4,
    )  # fmt: skip
    assert list(curve.columns) == list(expected.columns)
    for name in ("partial_auc", "window_partial_auc", "window_auc", "n_learnt"):
        np.testing.assert_allclose(curve[name], expected[name], rtol=1e-12)
    assert curve["n_learnt"].iloc[-1] < 900  # labels dropped
    assert "partial_auc" in printed
    assert main([*base, "--max-fpr", "0.1", "--metrics", "auc", "-o", str(out)]) == 0
    capsys.readouterr()
    assert list(pd.read_csv(out).columns[2:4]) == ["auc", "partial_auc"]
    for bad, flag in (
        (["--metrics", "partial_auc"], "--max-fpr"),
        (
            ["--max-fpr", "0.1", "--metrics", "window_partial_auc"],
            "--window",
        ),
    ):
        with pytest.raises(SystemExit) as error:
            main([*base, *bad, "-o", str(out)])
        assert flag in str(error.value)
    for bad in (["--max-fpr", "0"], ["--max-fpr", "nan"], ["--label-probability", "1.5"]):
        with pytest.raises(SystemExit):
            main([*base, *bad, "-o", str(out)])
    capsys.readouterr()


def test_evaluate_says_when_a_window_held_one_class(tmp_path, capsys):
    X, y = drifting(600, seed=5)
    y = np.where(np.arange(600) < 300, y, -1)  # the second half: negatives only
    path, out = tmp_path / "d.svm", tmp_path / "curve.csv"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    argv = ["evaluate", str(path), "--learner", "SOLAM", "--no-scale", "--window", "100"]
    assert main([*argv, "-o", str(out)]) == 0
    curve = pd.read_csv(out)
    assert curve["window_auc"].isna().sum() == 3  # (the windows ending at 400, 500, 600)
    assert "window_auc undefined (NaN) at 3 of 6 checkpoints" in capsys.readouterr().err
