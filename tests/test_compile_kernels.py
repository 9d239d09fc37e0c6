"""``aucstream.streaming.compile_kernels`` and ``aucstream compile``: the kernels a
learner's calls need are in numba's on-disk cache afterwards, so that a later process
compiles nothing (numba's own count of cache misses, per compiled function of
aucstream); bad arguments are refused by name before anything runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from aucstream import Perceptron, UnivariateOnline
from aucstream.streaming import compile_kernels

#: A fresh interpreter's calls of BatchUnivariate (a learner with few kernels to
#: compile) on dense rows of another shape than compile_kernels's, then numba's cache
#: misses and hits of every aucstream function it ran.
LATER = """
import json
import numpy as np
from aucstream import BatchUnivariate
from aucstream._kernels._compile import _MADE
rng = np.random.default_rng(7)
X = rng.normal(size=(150, 9)); y = (X[:, 0] > 0).astype(int)
model = BatchUnivariate().fit(X, y)
model.decision_function(X); model.predict_proba(X)
misses = {}
for d in list(_MADE):
    n = sum(d.stats.cache_misses.values())
    if n:
        misses[d.py_func.__module__ + "." + d.py_func.__qualname__] = n
hits = sum(sum(d.stats.cache_hits.values()) for d in list(_MADE))
print(json.dumps({"misses": misses, "hits": hits}))
"""


def _run(code: str, cache: str) -> str:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_a_later_process_compiles_nothing(tmp_path):
    """After ``compile_kernels(sparse=False)`` in an empty cache, a later process's
    calls on dense rows (another shape) miss nothing in numba's cache."""
    cache = str(tmp_path / "numba-cache")
    code = (
        "from aucstream import BatchUnivariate\n"
        "from aucstream.streaming import compile_kernels\n"
        "print(compile_kernels([BatchUnivariate()], sparse=False))\n"
    )
    assert _run(code, cache).strip() == "['BatchUnivariate']"
    dense = json.loads(_run(LATER, cache).splitlines()[-1])
    assert dense["misses"] == {}
    assert dense["hits"] > 0  # (loaded from the cache: the counts are numba's)


def test_processes_side_by_side_and_the_command(tmp_path, capsys):
    """``n_jobs`` (loky's processes) and the command line, on numba's usual cache (the
    run's other tests compiled these learners: the workers load them)."""
    from aucstream.cli import main

    assert compile_kernels([UnivariateOnline(), Perceptron()], sparse=False, n_jobs=2) == [
        "UnivariateOnline",
        "Perceptron",
    ]
    assert main(["compile", "--learners", "Perceptron", "--no-sparse"]) == 0
    assert capsys.readouterr().out.strip() == "compiled: Perceptron"


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"estimators": [UnivariateOnline]}, TypeError, r"estimators\[0\] is .*not an unfitted"),
        ({"estimators": [UnivariateOnline(), "OPAUC"]}, TypeError, r"estimators\[1\] is 'OPAUC'"),
        ({"estimators": UnivariateOnline()}, TypeError, "must be a list of estimators"),
        ({"estimators": "OPAUC"}, TypeError, "must be a list of estimators"),
        ({"estimators": 3}, TypeError, "must be a list of estimators"),
        ({"estimators": [UnivariateOnline()], "n_jobs": 0}, ValueError, "n_jobs must be"),
        ({"estimators": [UnivariateOnline()], "n_jobs": -2}, ValueError, "n_jobs must be"),
        ({"estimators": [UnivariateOnline()], "n_jobs": True}, ValueError, "n_jobs must be"),
        ({"estimators": [UnivariateOnline()], "n_jobs": 1.5}, ValueError, "n_jobs must be"),
        ({"estimators": [UnivariateOnline()], "sparse": "no"}, TypeError, "sparse must be"),
        ({"estimators": [UnivariateOnline(eta=-1.0)]}, ValueError, "eta"),
    ],
)
def test_bad_arguments_are_refused_by_name(kwargs, error, match, monkeypatch):
    import aucstream.streaming as streaming

    def never(*args):  # nothing is learnt before the arguments are checked
        raise AssertionError("compiled before the arguments were checked")

    monkeypatch.setattr(streaming, "_compile_one", never)
    with pytest.raises(error, match=match):
        compile_kernels(**kwargs)


def test_the_command_refuses_an_unknown_learner_and_no_jobs(capsys):
    from aucstream.cli import CommandError, main

    for argv, match in (
        (["compile", "--learners", "Nope"], "unknown learner 'Nope'"),
        (["compile", "--jobs", "0"], "--jobs must be"),
    ):
        with pytest.raises((CommandError, SystemExit)):
            main(argv)
        assert match in capsys.readouterr().err


def test_a_failing_estimator_is_named():
    from sklearn.linear_model import SGDClassifier

    class Broken(SGDClassifier):
        def decision_function(self, X):
            raise FloatingPointError("overflow in the scores")

    with pytest.raises(RuntimeError, match="Broken failed on a generated stream"):
        compile_kernels([Broken()], sparse=False)


def test_nothing_runs_without_numba_s_jit(monkeypatch):
    import numba

    import aucstream.streaming as streaming

    def never(*args):
        raise AssertionError("ran with the JIT disabled")

    monkeypatch.setattr(streaming, "_compile_one", never)
    monkeypatch.setattr(numba.config, "DISABLE_JIT", True)
    with pytest.warns(RuntimeWarning, match="JIT is disabled"):
        assert compile_kernels([UnivariateOnline()]) == ["UnivariateOnline"]
    from aucstream.cli import CommandError, main

    with pytest.raises(CommandError, match="JIT is disabled"):
        main(["compile", "--learners", "UnivariateOnline"])
