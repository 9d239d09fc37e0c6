"""``import aucstream`` is lazy (PEP 562): it loads no learner, kernel, numba or
scikit-learn, and ``aucstream --help`` imports no learner; every public name still
resolves, and ``__version__`` comes from the installed distribution's metadata."""

from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import aucstream

SRC = Path(aucstream.__file__).resolve().parents[1]

#: Modules that hold learners (and their kernels) or pull in heavy dependencies.
LEARNERS = {
    "aucstream._base",
    "aucstream._kernels",
    "aucstream.adaoam",
    "aucstream.batch",
    "aucstream.capo",
    "aucstream.fsauc",
    "aucstream.oam",
    "aucstream.online_classifiers",
    "aucstream.opauc",
    "aucstream.pipeline",
    "aucstream.search",
    "aucstream.solam",
    "aucstream.univariate",
}
HEAVY = {
    "aucstream.evaluation",
    "aucstream.datasets",
    "aucstream.dask",
    "aucstream.river",
    "aucstream.checks",
    "matplotlib",
    "pandas",
    "numba",
    "sklearn",
}


def run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_import_aucstream_loads_no_learner_and_no_heavy_dependency():
    done = run("-c", "import sys, json, aucstream; print(json.dumps(sorted(sys.modules)))")
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout))
    assert "aucstream" in loaded
    assert not loaded & (LEARNERS | HEAVY), sorted(loaded & (LEARNERS | HEAVY))


def test_help_imports_no_learner():
    done = run("-X", "importtime", "-m", "aucstream", "--help")
    assert done.returncode == 0, done.stderr
    assert "usage: aucstream" in done.stdout
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }
    assert "aucstream.cli" in imported  # the parse of -X importtime works
    assert not imported & (LEARNERS | HEAVY), sorted(imported & (LEARNERS | HEAVY))


def test_every_public_name_resolves_in_a_fresh_process():
    script = """
import json, aucstream
names = {n: type(getattr(aucstream, n)).__name__ for n in aucstream.__all__}
from aucstream import SOLAM, __version__
from aucstream.solam import SOLAM as same
assert SOLAM is same
namespace = {}
exec("from aucstream import *", namespace)
assert set(aucstream.__all__) <= set(namespace), set(aucstream.__all__) - set(namespace)
assert set(aucstream.__all__) <= set(dir(aucstream))
assert {"evaluation", "datasets", "checks"} <= set(dir(aucstream))
print(json.dumps([names, aucstream.evaluation.__name__, aucstream.checks.__name__]))
"""
    done = run("-c", script)
    assert done.returncode == 0, done.stderr
    names, evaluation, checks = json.loads(done.stdout)
    assert evaluation == "aucstream.evaluation" and checks == "aucstream.checks"
    assert names["SOLAM"] in ("ABCMeta", "type")
    assert names["roc_auc"] == "function" and names["__version__"] == "str"


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'NotALearner'"):
        aucstream.NotALearner  # noqa: B018
    assert not hasattr(aucstream, "_not_there")


def test_the_lazy_submodules_are_the_public_modules():
    public = {info.name for info in pkgutil.iter_modules(aucstream.__path__)}
    public = {name for name in public if not name.startswith("_")}
    assert set(aucstream._SUBMODULES) == public


def test_version_comes_from_the_package_metadata(monkeypatch):
    assert aucstream.__version__ == metadata.version("aucstream")
    assert aucstream.__version__ == aucstream._version()

    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    assert aucstream._version() == "0+unknown"


def test_the_command_and_model_files_give_that_version(tmp_path, capsys):
    from aucstream.cli import main

    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out == f"aucstream {aucstream.__version__}\n"
    import numpy as np

    X = np.random.default_rng(0).normal(size=(30, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    path = aucstream.save_model(aucstream.SOLAM().fit(X, y), tmp_path / "m.npz")
    with np.load(path) as archive:
        meta = json.loads(str(archive["__meta__"]))
    assert meta["aucstream_version"] == aucstream.__version__
