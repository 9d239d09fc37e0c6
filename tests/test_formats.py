"""One place decides how a file is read; the CLI and the harness read files alike."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from aucstream import OPAUC, load_model
from aucstream.cli import main
from aucstream.datasets import FileFormat, binarize, detect_format, load_file
from aucstream.evaluation import DataSpec, load_data
from aucstream.evaluation._runner import train_one_pass
from aucstream.streaming import Progress, fit_stream


def _data(n=120, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).round(6)
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def _write_csv(path, X, y, delimiter):
    rows = [delimiter.join([*(f"{v:.6f}" for v in x), str(t)]) for x, t in zip(X, y)]
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt") as f:
        f.write("\n".join(rows) + "\n")


@pytest.mark.parametrize(
    "name, kind, delimiter",
    [
        ("d.csv", "csv", ","),
        ("d.tsv", "csv", "\t"),
        ("d.tsv.gz", "csv", "\t"),
        ("d.svm", "libsvm", None),
        ("d.libsvm", "libsvm", None),
        ("d.svmlight", "libsvm", None),
    ],
)
def test_extension_decides(name, kind, delimiter):
    fmt = detect_format(name)  # the file need not exist
    assert (fmt.kind, fmt.delimiter) == (kind, delimiter)


@pytest.mark.parametrize("delimiter", [",", "\t", ";", " "])
def test_txt_and_no_extension_sniff_csv(tmp_path, delimiter):
    X, y = _data()
    for name in ("d.txt", "d", "d.data"):
        path = tmp_path / name
        _write_csv(path, X, y, delimiter)
        fmt = detect_format(path)
        assert fmt == FileFormat("csv", None, None if delimiter == " " else delimiter)
        X2, y2 = load_file(path)
        np.testing.assert_allclose(X2, X)
        np.testing.assert_array_equal(y2, y)


def test_txt_holding_libsvm_is_libsvm(tmp_path):
    X, y = _data()
    path = tmp_path / "d.txt"
    dump_svmlight_file(X, y, str(path), comment="a comment line first")
    assert detect_format(path) == FileFormat("libsvm", None, None)
    X2, y2 = load_file(path)
    np.testing.assert_allclose(X2.toarray(), X)
    np.testing.assert_array_equal(y2, y)


def test_compression_comes_from_the_bytes(tmp_path):
    X, y = _data()
    path = tmp_path / "misnamed.txt"  # gzip without a .gz suffix
    _write_csv(path, X, y, ",")
    with open(path, "rb") as f:
        raw = f.read()
    with gzip.open(path, "wb") as f:
        f.write(raw)
    fmt = detect_format(path)
    assert (fmt.kind, fmt.compression, fmt.delimiter) == ("csv", "gzip", ",")
    np.testing.assert_allclose(load_file(path)[0], X)


def test_forced_kind_and_delimiter():
    assert detect_format("x.csv", kind="svmlight").kind == "libsvm"
    assert detect_format("x.svm", kind="csv", delimiter="tab").delimiter == "\t"
    with pytest.raises(ValueError, match="format must be"):
        detect_format("x.csv", kind="parquet")


@pytest.mark.parametrize("name", ["d.tsv", "d.txt", "d.csv.gz"])
def test_cli_fit_reads_what_compare_reads(tmp_path, name):
    X, y = _data(200, 5)
    path = tmp_path / name
    _write_csv(path, X, y, "\t" if name.endswith(".tsv") else ",")
    model_path = tmp_path / "m.npz"
    assert main(["fit", "OPAUC", str(path), "-o", str(model_path), "--no-progress"]) == 0
    loaded = load_data(DataSpec(str(path)))  # what `compare --datasets d.tsv` reads
    np.testing.assert_allclose(loaded.X, X)
    reference = OPAUC().fit(loaded.X, loaded.y)
    np.testing.assert_allclose(load_model(model_path).coef_, reference.coef_, rtol=1e-12)


def test_cli_positive_uses_the_same_rule_as_the_harness(tmp_path):
    X, _ = _data(150, 3)
    labels = np.array(["a", "b", "c"])[np.arange(150) % 3]
    path = tmp_path / "multi.csv"
    _write_csv(path, X, labels, ",")
    model_path = tmp_path / "m.npz"
    args = ["fit", "OPAUC", str(path), "-o", str(model_path), "--positive", "a", "c"]
    assert main([*args, "--no-progress"]) == 0
    loaded = load_data(DataSpec(str(path), ("positive", ("a", "c"))))
    assert loaded.rule == "positive='a','c'"
    reference = OPAUC().fit(loaded.X, loaded.y)
    np.testing.assert_allclose(load_model(model_path).coef_, reference.coef_, rtol=1e-12)


def test_binarize_rules():
    y = np.array([3, 1, 2, 2, 2, 1])
    assert binarize(y)[1] == "random_halves(random_state=0)"
    assert binarize(y, "largest_vs_rest")[0].tolist() == [-1, -1, 1, 1, 1, -1]
    assert binarize(y, ("one_vs_rest", 3))[1] == "one_vs_rest(3)"
    assert binarize(np.array([0.0, 1.0, 1.0]))[1] == "positive=1"
    with pytest.raises(ValueError, match="3 classes"):
        binarize(y, multiclass=None, where="the file")
    with pytest.raises(ValueError, match="does not occur"):
        binarize(y, ("positive", (7,)))


def test_progress_counts_and_fit_stream():
    progress = Progress("fit", enabled=False)
    X, y = _data(100, 3)
    chunks = ((X[i : i + 30], y[i : i + 30]) for i in range(0, 100, 30))
    model = fit_stream(OPAUC(), chunks, progress=progress)
    assert progress.count == 100 and model.n_samples_seen_ == 100
    runs = Progress("runs", total=3, unit="runs", enabled=False)
    for cached in (True, False, False):
        runs.update(cached=cached)
    assert (runs.count, runs.cached) == (3, 1)
    assert "3/3 runs (1 cached)" in runs._render()


def test_runner_reads_the_declared_stream_length():
    class Recorder(OPAUC):
        stream_length_param = "eta"  # any declared name: the runner must not guess

        def fit(self, X, y):
            self.used = "fit"
            return super().fit(X, y)

    X, y = _data(60, 3)
    model = Recorder()
    train_one_pass(model, X, y, chunk=16)
    assert model.used == "fit"
    plain = OPAUC()
    train_one_pass(plain, X, y, chunk=16)
    assert not hasattr(plain, "used")
