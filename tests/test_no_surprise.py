"""No silent-wrong results and no surprises (issue 34, part B).

Each test reproduces a case that used to pass silently (or fail without saying why)
and checks that it is now refused with an error naming the problem, or done right:
merges of learners that learnt other columns, classes or kinds of state; model files
with members the learner does not declare; the mode of saved files; CLI labels,
output paths, data folder and plot extra; reports that subsample and figure titles;
the one-pass leaderboard's spans; README and Getting started telling the same.
"""

from __future__ import annotations

import copy
import json
import os
import re
import stat
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli as run
from sklearn.datasets import dump_svmlight_file

import aucstream
from aucstream import (
    OPAUC,
    OnePassSearch,
    StreamPipeline,
    UnivariateOnline,
    load_model,
    save_model,
)
from aucstream._state import state_items
from aucstream.metrics import roc_auc
from aucstream.preprocessing import OnlineStandardScaler

ROOT = Path(__file__).resolve().parents[1]


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def same(a, b) -> bool:
    """Two states equal bit for bit: arrays, generators, components, lists, scalars."""
    if isinstance(a, np.ndarray):
        return (
            isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
        )
    if isinstance(a, np.random.Generator):
        return a.bit_generator.state == b.bit_generator.state
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if type(a).__module__.startswith("aucstream") and hasattr(a, "__dict__"):
        va, vb = vars(a), vars(b)
        return type(a) is type(b) and va.keys() == vb.keys() and all(same(va[k], vb[k]) for k in va)
    if isinstance(a, float) and a != a:
        return isinstance(b, float) and b != b
    return type(a) is type(b) and a == b


def unchanged(model, before) -> bool:
    return same(state_items(model), state_items(before))


def data(n=120, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)


# --------------------------------------------------------------------- 1. merge


def _mergeable():
    """Every online learner that merges (OnePassSearch refuses by design), and a
    pipeline of the scaler and OPAUC."""
    out = []
    for name, cls in aucstream.all_estimators("online"):
        if name in ("OnePassSearch", "StreamPipeline", "FSAUC"):
            continue  # FSAUC: below, with its stream length
        if not cls()._merges():
            continue  # merge() says it does not merge (FTRLAUC: z holds one stream's history)
        out.append(pytest.param(cls, id=name))
    out.append(pytest.param(lambda: FSAUCn(), id="FSAUC"))
    out.append(
        pytest.param(lambda: StreamPipeline(OnlineStandardScaler(), OPAUC()), id="StreamPipeline")
    )
    return out


def FSAUCn():
    from aucstream import FSAUC

    return FSAUC(n_samples=60)


@pytest.mark.parametrize("make", _mergeable())
def test_merge_refuses_other_column_names_and_changes_nothing(make):
    X, y = data(60)
    abc = pd.DataFrame(X, columns=["a", "b", "c"])
    a, b = make().fit(abc, y), make().fit(abc.set_axis(["a", "b", "z"], axis=1), y)
    before_a, before_b = copy.deepcopy(a), copy.deepcopy(b)
    with pytest.raises(ValueError, match=r"other column names.*'c' != 'z'"):
        a.merge(b)
    assert unchanged(a, before_a) and unchanged(b, before_b)
    # one learnt named columns, the other a bare array: not known to be the same columns
    bare = make().fit(X, y)
    with pytest.raises(ValueError, match="named columns"):
        a.merge(bare)
    with pytest.raises(ValueError, match="named columns"):
        bare.merge(a)
    assert unchanged(a, before_a)
    # the same names merge (partial_fit would take these columns too)
    same_names = make().fit(abc, y)
    assert a.merge(same_names).n_samples_seen_ == 120


def test_merge_refuses_classes_of_another_kind():
    X, y = data()
    a, b = OPAUC().fit(X, y), OPAUC().fit(X, y.astype(float))
    before = copy.deepcopy(a)
    assert np.array_equal(a.classes_, b.classes_)  # equal values, other labels to predict
    with pytest.raises(ValueError, match="classes"):
        a.merge(b)
    assert unchanged(a, before)


@pytest.mark.parametrize(
    "fitted, changed, member",
    [
        # a full summary where an fd one belongs (the papers' OPAUC: the default full
        # one also keeps a running column scale, which fd has not)
        ({"column_scale": None}, {"covariance": "fd", "column_scale": None}, "gamma_"),
        ({"dtype": "float32"}, {"dtype": "float64"}, "float32"),
    ],
)
def test_merge_refuses_a_state_of_another_kind(fitted, changed, member):
    """set_params after learning makes the parameters equal but not the states."""
    X, y = data()
    a = OPAUC(**fitted).fit(X, y).set_params(**changed)
    b = OPAUC(**changed).fit(X, y)
    before_a, before_b = copy.deepcopy(a), copy.deepcopy(b)
    with pytest.raises(ValueError, match=f"states are of different kinds: .*{member}"):
        a.merge(b)
    assert unchanged(a, before_a) and unchanged(b, before_b)


def test_pipelines_merge_when_their_steps_have_equal_parameters():
    """Steps are compared by class and parameters (they were compared by identity, so
    two pipelines never merged), and a different step parameter is refused."""
    X, y = data(200)
    make = lambda eta: StreamPipeline(OnlineStandardScaler(), OPAUC(eta=eta))  # noqa: E731
    a, b = make(0.01).fit(X[:100], y[:100]), make(0.01).fit(X[100:], y[100:])
    scaler = copy.deepcopy(a.transformer_).merge(b.transformer_)
    learner = copy.deepcopy(a.estimator_).merge(b.estimator_)
    a.merge(b)
    assert a.n_samples_seen_ == 200
    assert same(state_items(a.transformer_), state_items(scaler))
    np.testing.assert_array_equal(a.estimator_.coef_, learner.coef_)
    c = make(0.5).fit(X[100:], y[100:])
    before = copy.deepcopy(a)
    with pytest.raises(ValueError, match=r"parameters differ: \['estimator'\]"):
        a.merge(c)
    assert unchanged(a, before)


# ------------------------------------------------------------------- 2. load_model


def _rewrite(path: Path, target: Path, edit_meta=None, extra_arrays=None) -> Path:
    """A copy of a model file with its metadata edited and arrays added."""
    with np.load(path, allow_pickle=False) as archive:
        arrays = {k: archive[k] for k in archive.files}
    meta = json.loads(str(arrays.pop("__meta__")))
    if edit_meta is not None:
        edit_meta(meta)
    arrays.update(extra_arrays or {})
    with open(target, "wb") as f:
        np.savez(f, __meta__=np.array(json.dumps(meta)), **arrays)
    return target


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    X, y = data(200)
    tmp = tmp_path_factory.mktemp("saved")
    return save_model(OPAUC().fit(X, y), tmp / "opauc.npz"), X


def test_load_refuses_an_undeclared_state_key(saved, tmp_path):
    path, X = saved

    def add(meta, key, spec):
        meta["state"][key] = spec

    scalar = {"kind": "scalar", "value": 3}
    for key in ("bogus_", "bogus", "n_iter_"):  # OPAUC has no n_iter_ either
        bad = _rewrite(path, tmp_path / f"{key}.npz", lambda m, k=key: add(m, k, scalar))
        with pytest.raises(ValueError, match=f"state/{key}: OPAUC has no state members"):
            load_model(bad)
    bad = _rewrite(
        path,
        tmp_path / "array.npz",
        lambda m: add(m, "extra_", {"kind": "array"}),
        {"state/extra_": np.zeros(3)},
    )
    with pytest.raises(ValueError, match=r"extra_.*no state members \['extra_'\]"):
        load_model(bad)
    assert load_model(path).n_samples_seen_ == 200  # the file as saved loads


def test_load_refuses_an_archive_member_and_a_metadata_entry_nothing_reads(saved, tmp_path):
    path, _ = saved
    bad = _rewrite(path, tmp_path / "member.npz", extra_arrays={"state/ghost_": np.ones(2)})
    with pytest.raises(ValueError, match=r"state/ghost_.*belong to no state member"):
        load_model(bad)
    bad = _rewrite(path, tmp_path / "meta.npz", lambda m: m.update(comment="hi"))
    with pytest.raises(ValueError, match=r"__meta__: unknown entries \['comment'\]"):
        load_model(bad)


def test_load_refuses_column_names_that_do_not_fit(tmp_path):
    X, y = data()
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    path = save_model(OPAUC().fit(frame, y), tmp_path / "named.npz")
    assert list(load_model(path).feature_names_in_) == ["a", "b", "c"]
    bad = _rewrite(
        path, tmp_path / "two.npz", extra_arrays={"state/feature_names_in_": np.array(["a", "b"])}
    )
    with pytest.raises(ValueError, match="feature_names_in_: not 3 column names"):
        load_model(bad)


def test_a_declared_member_set_while_learning_still_loads(tmp_path):
    """BatchUnivariate documents n_iter_, which it sets only when it learns."""
    from aucstream.batch import BatchUnivariate

    X, y = data()
    model = BatchUnivariate().fit(X, y)
    assert "n_iter_" in state_items(model)
    loaded = load_model(save_model(model, tmp_path / "batch.npz"))
    assert loaded.n_iter_ == model.n_iter_
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))


# ----------------------------------------------------------------- 3. file mode


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_saved_model_follows_the_umask(tmp_path, umask, mode):
    X, y = data()
    model = OPAUC().fit(X, y)
    old = os.umask(umask)
    try:
        path = save_model(model, tmp_path / "model")
        plain = tmp_path / "plain"
        plain.write_text("")  # what open() gives a new file under this umask
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == mode == stat.S_IMODE(plain.stat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.npz", "plain"]  # no temp file
    np.testing.assert_array_equal(load_model(path).decision_function(X), model.decision_function(X))


# -------------------------------------------------------------------- 4-6. CLI


def test_predict_output_follows_the_umask(pm_file, tmp_path, capsys):
    model = tmp_path / "m.npz"
    old = os.umask(0o022)
    try:
        assert run(capsys, "fit", pm_file, "--learner", "OPAUC", "-o", model)[0] == 0
        assert run(capsys, "predict", model, pm_file, "-o", tmp_path / "s.csv")[0] == 0
    finally:
        os.umask(old)
    for name in ("m.npz", "s.csv"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644, name


@pytest.fixture(scope="module")
def pm_file(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli")
    X, y = data(300, 4, seed=1)
    path = tmp / "pm.svm"
    dump_svmlight_file(X, np.where(y > 0, 1, -1), str(path), zero_based=False)
    return path


def test_fit_refuses_a_positive_label_no_example_has(pm_file, tmp_path, capsys):
    target = tmp_path / "m.npz"
    argv = ["fit", pm_file, "--learner", "OPAUC", "--no-scale", "-o", target]
    code, _, err = run(capsys, *argv, "--positive", "7")
    line = one_line(err)
    assert code == 2 and "--positive 7" in line and "-1, 1" in line and "no model saved" in line
    assert not target.exists() and list(tmp_path.iterdir()) == []
    code, _, err = run(capsys, *argv, "--positive", "1", "7")  # one of them absent
    assert code == 2 and "--positive 7" in one_line(err) and not target.exists()
    code, out, _ = run(capsys, *argv, "--positive", "1")
    assert code == 0 and target.is_file() and "saved to" in out


def test_fit_refuses_an_existing_directory_as_output(pm_file, tmp_path, capsys):
    folder = tmp_path / "models"
    folder.mkdir()
    code, _, err = run(capsys, "fit", pm_file, "--learner", "OPAUC", "-o", folder)
    assert code == 2 and "is an existing directory, not a model file" in one_line(err)
    assert list(tmp_path.iterdir()) == [folder] and list(folder.iterdir()) == []


def test_compare_without_the_data_folder_names_it_and_writes_nothing(tmp_path, capsys, monkeypatch):
    out = tmp_path / "results"
    argv = ["compare", "--learners", "OPAUC", "--datasets", "a9a", "--quick", "--jobs", "1"]
    monkeypatch.delenv("AUCSTREAM_DATA", raising=False)
    code, _, err = run(capsys, *argv, "--out", out)
    line = one_line(err)
    assert code == 2 and "AUCSTREAM_DATA" in line and "not set" in line
    assert not out.exists()
    empty = tmp_path / "data"
    empty.mkdir()
    monkeypatch.setenv("AUCSTREAM_DATA", str(empty))
    code, _, err = run(capsys, *argv, "--out", out)
    line = one_line(err)
    assert code == 2 and "AUCSTREAM_DATA" in line and str(empty) in line and "a9a.xz" in line
    assert not out.exists()
    code, _, err = run(capsys, *argv, "--out", out, "--data-home", tmp_path / "absent")
    line = one_line(err)
    assert code == 2 and str(tmp_path / "absent") in line and "does not exist" in line
    assert not out.exists()


def test_score_plot_without_matplotlib_says_how_to_add_it(pm_file, tmp_path, capsys, monkeypatch):
    model = tmp_path / "m.npz"
    assert run(capsys, "fit", pm_file, "--learner", "OPAUC", "-o", model)[0] == 0
    for name in ("matplotlib", "matplotlib.pyplot"):
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed
    png = tmp_path / "curves.png"
    code, out, err = run(capsys, "score", model, pm_file, "--plot", png)
    line = one_line(err)
    assert code == 2 and line.endswith('pip install "aucstream[plot]"') and "matplotlib" in line
    assert not png.exists() and "ROC AUC" not in out  # refused before reading the data


# ----------------------------------------------------- 7. subsampling, figure titles


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    """The figures (title, axes labels) of a quick compare with curves and a sweep,
    and of a table report titled like the papers' ("... (test AUC)")."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from aucstream.evaluation import get_protocol
    from aucstream.evaluation._report import write_report
    from aucstream.evaluation._reproduce import compare_and_report

    drawn = {}

    def record(fig, path, *args, **kwargs):
        axes = [ax for ax in fig.axes if ax.get_visible()]
        drawn[Path(path).name] = {
            "suptitle": fig.get_suptitle(),
            "titles": [ax.get_title() for ax in axes],
            "xlabels": {ax.get_xlabel() for ax in axes},
            "ylabels": {ax.get_ylabel() for ax in axes},
        }
        Path(path).touch()  # not rendered: the test reads the figure, not the pixels

    tmp = tmp_path_factory.mktemp("figures")
    mp = pytest.MonkeyPatch()
    mp.setattr(Figure, "savefig", record)
    try:
        result, files = compare_and_report(
            ["UnivariateOnline"],
            ["fourclass"],
            get_protocol("g16", "quick").replace(n_folds=2),
            tmp,
            curves=3,
            sweep=("eta", [2.0**-6, 2.0**-2]),
            cache_dir=tmp / "cache",
            n_jobs=1,
            progress=False,
        )
        write_report(result, tmp, "paper", "G16 Table 2: a learner against others (test AUC)")
    finally:
        mp.undo()
    return drawn, result, files


def test_every_figure_title_says_what_its_axes_show(figures):
    drawn, _, _ = figures
    assert {"comparison_time.png", "paper_time.png", "comparison_eta.png"} <= set(drawn)
    assert {"comparison_curves_examples.png", "comparison_curves_seconds.png"} <= set(drawn)
    for name, fig in drawn.items():
        title = " ".join([fig["suptitle"], *fig["titles"]])
        (ylabel,) = fig["ylabels"]
        if "time" in ylabel:  # the bar chart of training times
            assert "training time" in title.lower() and "AUC" not in title, (name, title)
        else:
            assert ylabel == "test AUC"
            (xlabel,) = fig["xlabels"]
            assert f"test AUC against {xlabel}" in fig["suptitle"], (name, fig)


def test_reports_say_how_they_subsampled(figures, tmp_path, capsys):
    _, result, files = figures
    (meta,) = result.used_datasets
    assert (meta.n_samples, meta.n_available) == (300, 862)  # fourclass, quick mode
    text = files[0]["markdown"].read_text()
    results = text[text.index("## Test AUC") :]
    assert "**Subsampled**" in results and "fourclass 300 of 862 examples" in results
    # what `aucstream reproduce --quick` prints on screen
    from aucstream.cli._experiments import _print_report

    _print_report(files[0])
    out = capsys.readouterr().out
    assert "stratified random sample of at most 300" in out and "300 of 862" in out


# ---------------------------------------------------------------- 8. leaderboard


def test_leaderboard_is_a_dataframe_with_the_span_of_each_auc():
    X, y = data(6000, 5, seed=3)
    candidates = [UnivariateOnline(eta=2.0**-k) for k in (2, 4, 6, 8)]
    search = OnePassSearch(candidates, first_round=1000, window=1000).fit(X, y)
    board = search.leaderboard_
    assert isinstance(board, pd.DataFrame) and sorted(board.index) == [0, 1, 2, 3]
    assert {"prequential_auc", "first_example", "last_example", "status", "dropped_at"} <= set(
        board.columns
    )
    alive = board[board["status"] == "alive"]
    dropped = board[board["status"] != "alive"]
    assert len(alive) == 1 and len(dropped) == 3 and board.iloc[0]["status"] == "alive"
    assert alive["last_example"].iloc[0] == 6000 and alive["dropped_at"].isna().all()
    for i, row in board.iterrows():
        last = int(row["last_example"])
        assert row["first_example"] == 1
        if row["status"] != "alive":
            assert last == row["dropped_at"] == search.candidates_[i].n_samples_seen_ < 6000
        # the AUC is exactly that of the candidate's prequential scores over its span
        alone = UnivariateOnline(**candidates[i].get_params()).test_then_train(X[:last], y[:last])
        assert row["prequential_auc"] == roc_auc(y[:last], alone)
        first = int(row["recent_first_example"])
        assert row["recent_auc"] == roc_auc(y[first - 1 : last], alone[first - 1 :])
    assert "spans differ" in type(search).leaderboard_.__doc__.replace("\n", " ")


# ------------------------------------------------------ 10. README = Getting started


def _bash_blocks_markdown(text: str) -> list[str]:
    return [b.strip() for b in re.findall(r"```bash\n(.*?)```", text, re.S)]


def _bash_blocks_rst(text: str) -> list[str]:
    blocks = []
    for match in re.finditer(r"\.\. code-block:: bash\n\n((?:    .*\n|\n)+)", text):
        lines = [line[4:] for line in match.group(1).rstrip().splitlines()]
        blocks.append("\n".join(lines).strip())
    return blocks


def test_readme_and_getting_started_give_the_same_commands():
    readme = _bash_blocks_markdown((ROOT / "README.md").read_text())
    guide = _bash_blocks_rst((ROOT / "docs" / "getting_started.rst").read_text())
    assert len(guide) == 2, guide  # the install and the command line
    assert readme == guide
    assert "pip install" in guide[0] and "aucstream fit" in guide[1]
