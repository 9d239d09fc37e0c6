"""Model files saved by aucstream 0.1.0 still load, score and resume identically.

The files in ``tests/fixtures/models`` were written before the 0.2 refactoring by
``tests/fixtures/make_model_fixtures.py``; they must never be regenerated to make this
test pass.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from aucstream import load_model

FIXTURES = Path(__file__).resolve().parent / "fixtures"
sys.path.insert(0, str(FIXTURES))
from make_model_fixtures import stream  # noqa: E402

with np.load(FIXTURES / "models" / "expected.npz") as _archive:
    EXPECTED = {key: _archive[key] for key in _archive.files}
NAMES = sorted({key.split("/")[0] for key in EXPECTED})


@pytest.mark.parametrize("name", NAMES)
def test_old_model_files_load_score_and_resume(name):
    X, y = stream()
    model = load_model(FIXTURES / "models" / f"{name}.npz")
    expected = EXPECTED[f"{name}/scores"]
    np.testing.assert_allclose(model.decision_function(X), expected, rtol=1e-12, atol=1e-12)
    if f"{name}/scores_after_more" in EXPECTED:
        model.partial_fit(X[300:], y[300:])
        # since 0.2, decision_function is centred on the probability calibration that
        # the resumed model starts learning (a shift, no change of ranking): compare
        # the model's own scores w.x + b, which 0.1 returned
        np.testing.assert_allclose(
            model.decision_function(X) + model._threshold(),
            EXPECTED[f"{name}/scores_after_more"],
            rtol=1e-9,
            atol=1e-9,
        )
