"""The tree is ``ruff check`` and ``ruff format`` clean (run by CI with the test suite)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PATHS = ["src", "tests", "benchmarks", "docs"]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["check", "format"])
def test_ruff_is_clean(command):
    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    paths = [p for p in PATHS if (ROOT / p).exists()]
    result = subprocess.run(
        [sys.executable, "-m", "ruff", *command, *paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


#: What only aucstream._kernels may call: numba's compilers and its extension API.
_COMPILE_CALLS = re.compile(
    r"\b(?:nb|numba)\.(?:njit|jit|generated_jit|cfunc|vectorize|guvectorize)\b"
    r"|\bfrom numba(?:\.\w+)* import[^\n]*\b(?:njit|jit|overload|intrinsic|cfunc)\b"
    r"|@(?:njit|overload|intrinsic)\b"
)


def test_only_the_kernels_package_compiles():
    """One compile policy: nothing outside ``aucstream._kernels`` calls numba's
    ``njit``/``jit``/``overload``/``intrinsic`` (kernels use ``aucstream._kernels.jit``)."""
    package = ROOT / "src" / "aucstream"
    offenders = []
    for path in sorted(package.rglob("*.py")):
        if (package / "_kernels") in path.parents:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _COMPILE_CALLS.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "compile outside aucstream._kernels:\n" + "\n".join(offenders)
