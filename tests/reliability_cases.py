"""Shared pieces of the reliability suite: learners, streams, subprocess runner."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np

import aucstream

ESTIMATORS = [cls for _, cls in aucstream.all_estimators()]
ONLINE = [cls for _, cls in aucstream.all_estimators("online")]


def make(cls, **extra):
    params = dict(cls._unit_test_params()) if hasattr(cls, "_unit_test_params") else {}
    if "random_state" in cls().get_params():
        params["random_state"] = 0
    params.update(extra)
    return cls(**params)


def stream(n: int = 60, d: int = 5, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random(size=X.shape) < 0.3] = 0.0
    y = np.where(X @ rng.normal(size=d) > 0, 1, -1)
    y[:2] = [-1, 1]
    return X, y


def run_isolated(code: str, timeout: float = 120.0) -> list[dict]:
    """Run ``code`` in a fresh interpreter; it prints one JSON object per line.

    A crash (segfault, abort) or a hang is a test failure with the output so far,
    not a dead test run.
    """
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0:
        last = lines[-1] if lines else None
        raise AssertionError(
            f"the isolated run ended with code {proc.returncode} (a crash if negative); "
            f"last case reported: {last}\nstderr:\n{proc.stderr[-3000:]}"
        )
    return lines


_FROM_STDIN = "json.loads(sys.stdin.read())"


def run_isolated_cases(script: str, cases: list[str], timeout: float = 600.0) -> list[dict]:
    """Run ``script`` over ``cases`` in fresh interpreters; a case during which the
    interpreter dies is reported as ``{"case": case, "outcome": "crash ..."}`` and the
    run resumes after it. ``{cases}`` in the script is an expression that reads the
    list from standard input (JSON; thousands of cases exceed a command line), so the
    script must import ``json`` and ``sys``."""
    results: list[dict] = []
    remaining = list(cases)
    while remaining:
        proc = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(script.format(cases=_FROM_STDIN))],
            input=json.dumps(remaining),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        results += [r for r in lines if "outcome" in r]
        if proc.returncode == 0:
            break
        started = [r["case"] for r in lines if "outcome" not in r]
        crashed = started[-1] if started else remaining[0]
        results.append({"case": crashed, "outcome": f"crash (exit code {proc.returncode})"})
        remaining = remaining[remaining.index(crashed) + 1 :]
    return results
