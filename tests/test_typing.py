"""The package is typed (PEP 561: ``py.typed``) and ``mypy src/aucstream`` is clean,
with the settings of ``pyproject.toml`` (issue 34)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("mypy", reason="mypy is in the test extra")


def test_the_package_says_it_is_typed():
    assert (ROOT / "src" / "aucstream" / "py.typed").is_file()


def test_mypy_finds_nothing(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path), "src/aucstream"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
