"""CONTRIBUTING's "Writing a learner" example is a complete learner that passes the
public battery (aucstream.checks) and learns what it says: the class-mean difference."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from aucstream.checks import yield_checks

ROOT = Path(__file__).resolve().parents[1]


def _example_module() -> types.ModuleType:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text[text.index("## Writing a learner") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    module = types.ModuleType("contributing_example")
    module.__file__ = str(ROOT / "CONTRIBUTING.md")
    sys.modules[module.__name__] = module  # pickle finds the class by its module
    exec(compile(code, "CONTRIBUTING.md", "exec"), module.__dict__)
    module.MeanDifference.__module__ = module.__name__
    return module


EXAMPLE = _example_module()


def test_the_example_is_about_sixty_lines():
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text[text.index("## Writing a learner") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len(code.strip().splitlines()) <= 70


def test_the_example_learns_the_class_mean_difference():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = np.where(X[:, 0] - X[:, 2] + 0.5 * rng.normal(size=300) > 0, 1, -1)
    model = EXAMPLE.MeanDifference()
    for lo in range(0, 300, 70):
        model.partial_fit(X[lo : lo + 70], y[lo : lo + 70], classes=[-1, 1])
    expected = X[y == 1].mean(axis=0) - X[y == -1].mean(axis=0)
    np.testing.assert_allclose(model.coef_[0], expected, rtol=1e-12, atol=1e-12)
    assert model.score(X, y) > 0.85


@pytest.mark.parametrize(
    "check",
    list(yield_checks(EXAMPLE.MeanDifference(), sklearn_checks=False)),
    ids=lambda c: c.__name__,
)
def test_the_example_passes_the_battery(check):
    check()
