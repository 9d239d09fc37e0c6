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


#: The most lines a module of src/aucstream may have (issue 29: split by job, not by
#: line count, before a module grows past it).
MAX_MODULE_LINES = 900


def _module_lines() -> dict[str, int]:
    package = ROOT / "src" / "aucstream"
    return {
        path.relative_to(package).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(package.rglob("*.py"))
    }


def test_no_module_is_over_900_lines():
    """No module of aucstream is over :data:`MAX_MODULE_LINES` lines (a longer one is
    split by job: see CONTRIBUTING.md's layout)."""
    lines = _module_lines()
    assert "__init__.py" in lines and "_state.py" in lines  # the walk found the package
    offenders = {name: n for name, n in lines.items() if n > MAX_MODULE_LINES}
    assert not offenders, (
        f"modules over {MAX_MODULE_LINES} lines (split them by job): "
        + ", ".join(f"src/aucstream/{name} ({n})" for name, n in sorted(offenders.items()))
    )


def test_the_core_stays_small():
    """Issue 29's sizes: the base class's module at most 600 lines, the ``OPAUC`` class
    at most 300 (its engines live in their own modules); the base class crept to 602
    lines before this test held it."""
    import ast

    assert _module_lines()["_base.py"] <= 600
    path = ROOT / "src" / "aucstream" / "opauc" / "_learner.py"
    (node,) = [
        n
        for n in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(n, ast.ClassDef) and n.name == "OPAUC"
    ]
    assert node.end_lineno - node.lineno + 1 <= 300


#: A duration quoted in the source: a number (or a range) of nanoseconds,
#: microseconds, milliseconds or seconds, or those units spelt out.
_TIMING = re.compile(
    r"(?<![\w.^])\d+(?:\.\d+)?(?:\s?-\s?\d+(?:\.\d+)?)?\s?(?:ns|us|µs|ms|s|sec|seconds?)\b(?!['\"])"
    r"|\b(?:nano|micro|milli)seconds?\b",
    re.IGNORECASE,
)

#: Files excused from the rule (none today).
_TIMINGS_EDITED_ELSEWHERE: set[str] = set()

#: A line may keep a duration that is not a measurement (a documented constant, a
#: default) by saying so with this marker in a comment.
_TIMING_OPT_OUT = "timing: not measured"


@pytest.mark.parametrize(
    ("text", "quotes"),
    [
        ("costs about 25 us per array argument", True),
        ("a flag array cost 1.7 ms", True),
        ("cuts a pass from 30-45 s to 5 s", True),
        ("a call that is not inlined costs ~40 ns", True),
        ("a call on arrays has tens of microseconds of fixed cost", True),
        ("count, means, m2s = stats", False),
        ("O(k tau) work per example, 2^-8 and 10^6 features", False),
        ('speed = f"{1 / rate:.1f} s each"', False),
    ],
)
def test_the_timing_pattern(text, quotes):
    assert bool(_TIMING.search(text)) is quotes


def test_no_timings_of_one_machine_in_the_source():
    """Docstrings and comments give the reason for a design, not the timings of one
    machine: measured timings live in docs/benchmarks.md (written by ``benchmarks/``),
    and the text points there."""
    package = ROOT / "src" / "aucstream"
    offenders = []
    for path in sorted(package.rglob("*.py")):
        if path.relative_to(package).as_posix() in _TIMINGS_EDITED_ELSEWHERE:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _TIMING.search(line) and _TIMING_OPT_OUT not in line:
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, (
        "timings in the source (move them to docs/benchmarks.md and point there):\n"
        + "\n".join(offenders)
    )
