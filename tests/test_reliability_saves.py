"""Saves are atomic: a process killed in the middle of save_model leaves the old model
or the new one on disk, never a damaged file."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

from aucstream import OPAUC, load_model, save_model


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_kill_during_save_leaves_old_or_new_model(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 300))
    y = np.arange(200) % 2
    models = [OPAUC(eta=e).fit(X, y) for e in (0.01, 0.001)]
    expected = [m.decision_function(X) for m in models]
    target = tmp_path / "model.npz"
    save_model(models[0], target)
    kills = 0
    for delay in np.random.default_rng(1).uniform(0.0, 0.05, size=20):
        pid = os.fork()
        if pid == 0:  # the child saves the two models in turn until it is killed
            try:
                i = 0
                while True:
                    save_model(models[i % 2], target)
                    i += 1
            finally:
                os._exit(1)
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        kills += os.WIFSIGNALED(status)
        scores = load_model(target).decision_function(X)
        assert any(np.array_equal(scores, e) for e in expected)
    assert kills == 20
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "model.npz"]
    # a killed save may leave its temporary file (hidden, never the target)
    assert all(name.startswith(".model.npz.") and name.endswith(".tmp") for name in leftovers)


def test_save_returns_the_path_it_wrote(tmp_path):
    X = np.eye(4)
    model = OPAUC().fit(X, [0, 1, 0, 1])
    assert save_model(model, tmp_path / "m") == tmp_path / "m.npz"
    assert save_model(model, tmp_path / "n.npz") == tmp_path / "n.npz"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz", "n.npz"]


def test_failed_save_keeps_the_old_file(tmp_path, monkeypatch):
    X = np.eye(4)
    old = OPAUC().fit(X, [0, 1, 0, 1])
    target = save_model(old, tmp_path / "m.npz")
    before = target.read_bytes()

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez_compressed", broken)
    with pytest.raises(OSError, match="disk full"):
        save_model(OPAUC(eta=0.5).fit(X, [0, 1, 0, 1]), target)
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]


def test_load_reads_the_file_save_wrote_for_a_name_without_npz(tmp_path):
    X = np.eye(4)
    model = OPAUC().fit(X, [0, 1, 0, 1])
    written = save_model(model, tmp_path / "m")  # writes m.npz
    for name in (tmp_path / "m", str(tmp_path / "m"), written):
        assert np.array_equal(load_model(name).coef_, model.coef_)
    # a file of the given name comes first, even when the .npz one exists too
    (tmp_path / "m").write_bytes(b"not a model")
    with pytest.raises(ValueError, match="not a model file"):
        load_model(tmp_path / "m")
    # no file of either name: the usual error, naming the given path
    with pytest.raises(FileNotFoundError, match="nothing"):
        load_model(tmp_path / "nothing")


@pytest.mark.parametrize("bad", [None, 3, b"model.npz"])
def test_load_refuses_what_is_not_a_path(bad):
    with pytest.raises(TypeError, match="path must be a str or a path-like"):
        load_model(bad)


def test_load_of_an_empty_name_says_no_such_file():
    with pytest.raises(FileNotFoundError):
        load_model("")
