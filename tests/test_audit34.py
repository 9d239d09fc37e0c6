"""Issue 34's second audit: cases a new round of hostile probes found silently wrong
or unchecked, each with its regression test (the checklist of every case of the issue
and its test is ``docs/results/issue34_audit.md``).

- A model ``aucstream fit`` learnt from a LIBSVM file read 0-based scored and
  predicted another 0-based file 1-based whenever that file held no index 0: every
  column shifted by one, exit 0. The model file now records the base (format 3's
  ``reading`` entry) and ``score``/``predict`` read with it.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import run_cli as run
from sklearn.datasets import dump_svmlight_file

from aucstream import SOLAM, load_model, save_model
from aucstream.datasets import load_svmlight
from aucstream.persistence import model_reading


def _meta(path):
    with np.load(path, allow_pickle=False) as archive:
        return json.loads(str(archive["__meta__"]))


def _rewrite_meta(path, target, edit):
    with np.load(path, allow_pickle=False) as archive:
        arrays = {k: archive[k] for k in archive.files}
    meta = json.loads(str(arrays.pop("__meta__")))
    edit(meta)
    with open(target, "wb") as f:
        np.savez(f, __meta__=np.array(json.dumps(meta)), **arrays)
    return target


# ------------------------------------------------- the index base of a fitted model


@pytest.fixture
def zero_based_files(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4)).round(4)
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, -1)
    train, test = tmp_path / "train.svm", tmp_path / "test.svm"
    dump_svmlight_file(X[:300], y[:300], str(train), zero_based=True)
    X_test = X[300:].copy()
    X_test[:, 0] = 0.0  # no index 0 anywhere: "auto" alone would read it 1-based
    dump_svmlight_file(X_test, y[300:], str(test), zero_based=True)
    return train, test


def test_score_and_predict_read_with_the_base_fit_read_the_model_file_with(
    zero_based_files, tmp_path, capsys
):
    train, test = zero_based_files
    model_path = tmp_path / "m.npz"
    code, _, err = run(capsys, "fit", train, "--learner", "SOLAM", "--no-scale", "-o", model_path)
    assert code == 0 and "read as 0-based" in err and "--index-base 0" in err
    assert model_reading(model_path) == {"index_base": 0}
    assert _meta(model_path)["format_version"] == 3
    model = load_model(model_path)
    X, y = load_svmlight(test, n_features=model.n_features_in_, zero_based=True)
    expected = model.decision_function(X)
    out = tmp_path / "p.csv"
    assert run(capsys, "predict", model_path, test, "-o", out)[0] == 0
    got = np.loadtxt(out, delimiter=",", skiprows=1)
    np.testing.assert_array_equal(got, expected)  # the columns as fit read them
    code, stdout, _ = run(capsys, "score", model_path, test)
    from aucstream.metrics import roc_auc

    assert code == 0 and f"ROC AUC {roc_auc(y > 0, expected):.6f}" in stdout
    # an explicit base is the user's: read 1-based, shifted (the columns 1..3 as 0..2)
    assert run(capsys, "predict", model_path, test, "-o", out, "--index-base", "1")[0] == 0
    shifted, _ = load_svmlight(test, n_features=model.n_features_in_, zero_based=False)
    got = np.loadtxt(out, delimiter=",", skiprows=1)
    np.testing.assert_array_equal(got, model.decision_function(shifted))


def test_a_one_based_fit_records_nothing_and_keeps_an_older_format(tmp_path, capsys):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3)).round(4)
    y = np.where(X[:, 0] > 0, 1, -1)
    data = tmp_path / "one.svm"
    dump_svmlight_file(X, y, str(data), zero_based=False)
    model_path = tmp_path / "m.npz"
    assert run(capsys, "fit", data, "--learner", "SOLAM", "--no-scale", "-o", model_path)[0] == 0
    assert model_reading(model_path) == {} and "reading" not in _meta(model_path)
    assert _meta(model_path)["format_version"] < 3  # readable by older versions


@pytest.mark.parametrize(
    "reading, problem",
    [
        ({"index_base": 1}, "index_base = 1, expected one of [0]"),
        ({"index_base": True}, "index_base = True"),
        ({"index_base": 0, "delimiter": ","}, "unknown entry 'delimiter'"),
        ({}, "is not a non-empty dict"),
        ([0], "is not a non-empty dict"),
    ],
)
def test_a_tampered_reading_entry_is_refused_by_name(tmp_path, reading, problem):
    X = np.random.default_rng(2).normal(size=(40, 2))
    path = save_model(SOLAM().fit(X, X[:, 0] > 0), tmp_path / "m.npz")
    bad = _rewrite_meta(path, tmp_path / "bad.npz", lambda m: m.update(reading=reading))
    for read in (load_model, model_reading):
        with pytest.raises(ValueError, match=r"bad\.npz: __meta__: reading.*") as info:
            read(bad)
        assert problem in str(info.value)


# ------------------------------------- every user-set size against the memory budget


def _fit(make):
    def run():
        rng = np.random.default_rng(0)
        X = rng.normal(size=(40, 3))
        make().fit(X, (X[:, 0] > 0).astype(int))

    return run


def _fit_wide(make):
    """Fit on 10^5 sparse columns: a sketch's size is capped by the dimension."""

    def run():
        import scipy.sparse as sp

        X = sp.random(40, 10**5, density=1e-3, format="csr", random_state=0)
        make().fit(X, np.arange(40) % 2)

    return run


def _sizes():
    import aucstream
    from aucstream import covariance, drift, metrics, random_features, reservoir
    from aucstream.evaluation import prequential

    N = 10**12
    X = np.random.default_rng(0).normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    cases = {
        "OAM(buffer_size)": _fit(lambda: aucstream.OAM(buffer_size=N)),
        "OnlinePAUC(buffer_size)": _fit(lambda: aucstream.OnlinePAUC(buffer_size=N)),
        "CAPO(aux_max_samples)": _fit(lambda: aucstream.CAPO(aux_max_samples=N)),
        "OnePassSearch(window)": _fit(lambda: aucstream.OnePassSearch(window=N)),
        "OnePassSearch(exact_scores)": _fit(lambda: aucstream.OnePassSearch(exact_scores=N)),
        "RollingAUC(window)": lambda: metrics.RollingAUC(N),
        "prequential(window=)": lambda: prequential(aucstream.SOLAM(), [(X, y)], window=N),
        "ADWIN(max_buckets)": lambda: drift.ADWIN(max_buckets=N).update(0.5),
        "RankSignal(window)": lambda: drift.RankSignal(window=N).update(1, 0.5),
        "AUCDriftDetector(window)": lambda: drift.AUCDriftDetector(window=N).update(1, 0.5),
        "Reservoir(capacity)": lambda: reservoir.Reservoir(3, N),
        "BiasedReservoir(capacity)": lambda: reservoir.BiasedReservoir(3, N, 10.0),
        "make_covariance(full, n_features)": lambda: covariance.make_covariance("full", 10**7),
        "RandomFourierFeatures(n_components)": lambda: (
            random_features.RandomFourierFeatures(n_components=N).fit(X).transform(X)
        ),
    }
    for kind in ("fd", "randomized", "hash", "sparse"):
        cases[f"OPAUC(covariance={kind}, sketch_size)"] = _fit_wide(
            lambda k=kind: aucstream.OPAUC(covariance=k, sketch_size=10**7, random_state=0)
        )
        cases[f"make_covariance({kind}, sketch_size)"] = lambda k=kind: covariance.make_covariance(
            k, 10**7, sketch_size=10**7
        )
    return [pytest.param(run, id=name) for name, run in cases.items()]


@pytest.mark.parametrize("allocate", _sizes())
def test_every_size_a_user_sets_is_checked_against_the_budget_before_allocating(allocate):
    """Each size (windows, buffers, sketches, candidates' windows, transforms) far
    beyond the budget is refused by the budget check, naming it, before numpy is asked
    for the memory (a bare numpy MemoryError, or an allocation that succeeds, fails)."""
    from aucstream import config_context

    with config_context(memory_budget=10**6):
        with pytest.raises((MemoryError, ValueError)) as info:
            allocate()
    message = str(info.value)
    assert "memory_budget" in message or "memory budget" in message, message
    assert "Unable to allocate" not in message  # numpy's own error


def test_components_within_the_budget_still_build():
    from aucstream import config_context
    from aucstream.covariance import make_covariance, summary_nbytes
    from aucstream.reservoir import BiasedReservoir, Reservoir

    need = summary_nbytes("full", 30)
    with config_context(memory_budget=need):
        assert make_covariance("full", 30).n_features == 30
    with config_context(memory_budget=need - 1):
        with pytest.raises(MemoryError, match=r"make_covariance\('full', n_features=30"):
            make_covariance("full", 30)
    with config_context(memory_budget=8 * 100 * (5 + 2)):
        assert Reservoir(5, 100).capacity == BiasedReservoir(5, 100, 3.0).capacity == 100
        with pytest.raises(MemoryError, match=r"BiasedReservoir\(n_features=5, capacity=101\)"):
            BiasedReservoir(5, 101, 3.0)


# ------------------------------------------------------------ huge sample weights


@pytest.mark.parametrize("name", ["AdaOAM", "SAdaOAM", "SOLAM"])
def test_huge_sample_weights_are_refused_by_name_and_change_nothing(name):
    """Weights of 1e308 made the calibration divide by zero: AdaOAM and SAdaOAM raised
    a bare ZeroDivisionError; now every learner says which call failed and why."""
    import copy

    import aucstream

    rng = np.random.default_rng(0)
    X = rng.normal(size=(36, 3))
    y = (X[:, 0] > 0).astype(int)
    model = getattr(aucstream, name)().fit(X[:30], y[:30])
    before = copy.deepcopy(model)
    with pytest.raises(FloatingPointError, match=rf"{name} .*after 30 .*smaller sample weights"):
        model.partial_fit(X[30:], y[30:], sample_weight=np.full(6, 1e308))
    assert model.n_samples_seen_ == 30
    np.testing.assert_array_equal(model.decision_function(X), before.decision_function(X))
    assert np.array_equal(model.calibration_, before.calibration_)


# ------------------------------------------------- a tampered random generator state


def _rng_specs(node, path=""):
    """(path, spec) of every random generator entry of a model file's state."""
    if isinstance(node, dict):
        if node.get("kind") == "rng":
            yield path, node
        for key, value in node.items():
            yield from _rng_specs(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _rng_specs(value, f"{path}/{i}")


@pytest.mark.parametrize("value", [-1, 2**128])
def test_a_random_state_outside_its_integers_is_refused_by_name(tmp_path, value):
    """A generator's state counter of -1 (or beyond its 128 bits) raised numpy's bare
    OverflowError from load_model (found by fuzzing the metadata's values)."""
    from aucstream import FSAUC

    X = np.random.default_rng(3).normal(size=(60, 3))
    path = save_model(FSAUC(n_samples=100, random_state=0).fit(X, X[:, 0] > 0), tmp_path / "m")
    meta = _meta(path)
    assert list(_rng_specs(meta["state"]))  # FSAUC keeps its generator

    def edit(m):
        _, spec = next(_rng_specs(m["state"]))
        spec["state"]["state"]["state"] = value

    bad = _rewrite_meta(path, tmp_path / "bad.npz", edit)
    with pytest.raises(ValueError, match=r"bad\.npz: state/.*invalid random generator state"):
        load_model(bad)
    assert load_model(path).n_samples_seen_ == 60


# ------------------------------------------------------ duplicate CSR column indices


def _online():
    import aucstream

    return [
        pytest.param(cls, id=name)
        for name, cls in aucstream.all_estimators("online")
        if name not in ("StreamPipeline",)
    ]


@pytest.mark.parametrize("cls", _online())
def test_a_chunk_with_duplicate_csr_indices_is_learnt_as_its_sum(cls):
    """A CSR chunk whose rows repeat a column (scipy sums such entries) is learnt as its
    canonical form, bit for bit, and the caller's matrix is left as it was."""
    import copy

    import scipy.sparse as sp

    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(int)
    data, indices = np.array([1.0, 2.0, 3.0, -0.5]), np.array([0, 0, 2, 1])
    dup = sp.csr_matrix((data, indices, [0, 2, 3, 4, 4, 4, 4]), shape=(6, 3))
    assert not dup.has_canonical_format
    canonical = dup.copy()
    canonical.sum_duplicates()
    y_new = np.array([0, 1, 0, 1, 1, 0])
    base = (cls(n_samples=100) if cls.__name__ == "FSAUC" else cls()).fit(X, y)
    got = copy.deepcopy(base).partial_fit(dup, y_new)
    want = copy.deepcopy(base).partial_fit(canonical, y_new)
    np.testing.assert_array_equal(got.decision_function(X), want.decision_function(X))
    assert got.n_samples_seen_ == 36
    np.testing.assert_array_equal(dup.indices, indices)  # the caller's matrix unchanged
    np.testing.assert_array_equal(dup.data, data)


def test_save_model_refuses_an_existing_directory(tmp_path):
    """save_model("models") with a folder of that name wrote models.npz beside it
    (as the command line's fit -o did before it refused)."""
    folder = tmp_path / "models"
    folder.mkdir()
    X = np.random.default_rng(5).normal(size=(30, 2))
    model = SOLAM().fit(X, X[:, 0] > 0)
    for given in (folder, str(folder), f"{folder}/"):
        with pytest.raises(ValueError, match="is an existing directory, not a model file"):
            save_model(model, given)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["models"] and not any(folder.iterdir())
    assert save_model(model, folder / "m").name == "m.npz"


# ------------------------------------------------- a tampered calibration state


@pytest.mark.parametrize(
    "index, value, problem",
    [
        (3, 0.0, "slope a = 0.0 < A_MIN"),  # divided by zero when the model scored
        (3, -1.0, "slope a = -1.0"),
        (2, -5.0, "m2 = -5.0 < 0"),
        (7, 1e9, "counts n = "),
        (0, -1.0, "counts n = -1.0"),
        (5, -2.0, "AdaGrad sums"),
    ],
)
def test_a_calibration_state_outside_its_invariants_is_refused(tmp_path, index, value, problem):
    """Found by fuzzing model files by meaning (tests/test_fuzz_models.py): an OAM file
    whose calibration slope was 0 loaded, then decision_function raised
    ZeroDivisionError."""
    from aucstream import OAM, StreamPipeline
    from aucstream.preprocessing import OnlineStandardScaler

    X = np.random.default_rng(6).normal(size=(80, 3))
    y = X[:, 0] > 0
    for model in (OAM(buffer_size=10, random_state=0), StreamPipeline(OnlineStandardScaler())):
        path = save_model(model.fit(X, y), tmp_path / "m")
        with np.load(path, allow_pickle=False) as archive:
            arrays = {k: archive[k] for k in archive.files}
        key = next(k for k in sorted(arrays) if k.endswith("calibration_"))
        arrays[key] = arrays[key].copy()
        arrays[key][index] = value
        bad = tmp_path / "bad.npz"
        with open(bad, "wb") as f:
            np.savez(f, **arrays)
        with pytest.raises(ValueError, match=r"bad\.npz: state/.*calibration_: ") as info:
            load_model(bad)
        assert problem in str(info.value)
        np.testing.assert_array_equal(
            load_model(path).decision_function(X), model.decision_function(X)
        )


def test_a_warning_raised_as_an_error_is_an_input_error_not_an_internal_one(tmp_path, capsys):
    """Under ``-W error`` the reader's 0-based warning became "an internal error: rerun
    with --debug and report it", exit 1 (found by fuzzing the command line)."""
    import warnings

    data = tmp_path / "zero.svm"
    data.write_text("1 0:1 1:2\n-1 0:2 2:1\n1 1:1\n")
    argv = ["fit", data, "--learner", "SOLAM", "--no-scale", "-o", tmp_path / "m"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code, _, err = run(capsys, *argv)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "read as 0-based" in err and "internal error" not in err
    assert not (tmp_path / "m.npz").exists()
    code, _, err = run(capsys, *argv)  # the default filters: a warning line, a model
    assert code == 0 and err.startswith("aucstream: warning: ") and (tmp_path / "m.npz").is_file()


@pytest.mark.parametrize(
    "step, attr, value, problem",
    [
        ("estimator_", "n_features_in_", 0, "n_features_in_ = 0, not 5"),
        ("transformer_", "n_features_in_", 4, "n_features_in_ = 4, not 5"),
        ("transformer_", "clip", 0, "'clip' parameter of OnlineStandardScaler"),
        ("transformer_", "half_life", -3.0, "'half_life' parameter"),
    ],
)
def test_a_pipeline_step_tampered_in_its_file_is_refused_on_load(
    tmp_path, step, attr, value, problem
):
    """A pipeline's steps are learners in the file too: a width or a parameter edited
    there loaded, and the first score failed ('X has 5 features, but SOLAM is
    expecting 0 features'; found by fuzzing model files by meaning)."""
    from aucstream import StreamPipeline
    from aucstream.preprocessing import OnlineStandardScaler

    X = np.random.default_rng(7).normal(size=(80, 5))
    model = StreamPipeline(OnlineStandardScaler(), SOLAM()).fit(X, X[:, 0] > 0)
    path = save_model(model, tmp_path / "m")

    def edit(meta):
        meta["state"][step]["attrs"][attr]["value"] = value

    bad = _rewrite_meta(path, tmp_path / "bad.npz", edit)
    with pytest.raises(ValueError, match=rf"bad\.npz: state/{step}: ") as info:
        load_model(bad)
    assert problem in str(info.value)
    np.testing.assert_array_equal(load_model(path).decision_function(X), model.decision_function(X))


@pytest.mark.parametrize("where", ["component", "estimator"])
def test_a_class_name_that_is_not_a_string_is_refused_by_name(tmp_path, where):
    """A component's or a parameter estimator's class written as a list raised
    "TypeError: unhashable type: 'list'" from load_model (found by fuzzing)."""
    from aucstream import OnePassSearch

    X = np.random.default_rng(8).normal(size=(60, 3))
    path = save_model(OnePassSearch().fit(X, X[:, 0] > 0), tmp_path / "m")

    def edit(meta):
        if where == "component":
            spec = meta["state"]["candidates_"]["items"][0]
            assert spec["kind"] == "object"
            spec["class"] = []
        else:
            meta["params"]["candidates"] = [{"__estimator__": [], "params": {}}]

    bad = _rewrite_meta(path, tmp_path / "bad.npz", edit)
    with pytest.raises(ValueError, match=r"bad\.npz.*unknown (class|estimator) \[\]"):
        load_model(bad)
