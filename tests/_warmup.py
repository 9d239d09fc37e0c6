"""Compile the learners' kernels once, before the test workers start.

``tests/conftest.py`` runs this script in as many processes as there are pytest-xdist
workers, each on its share of the learners, before the workers start. Without it, a
cold numba cache (a fresh clone, as in CI) makes every worker compile the same
kernels at the same time: xdist hands the first tests out one by one in turn, so both
workers start on the same file and the same learners, and each compiles what the
other is compiling. Here each kernel is compiled once and saved in numba's cache,
from which the workers load it. A warm cache makes this a few seconds of loading.

Usage: ``python tests/_warmup.py PART PARTS`` warms the learners ``PART``,
``PART + PARTS``, ... of the list below. What it misses is compiled by the tests as
before: the warm-up changes when kernels compile, never what the tests check.
"""

from __future__ import annotations

import sys
import warnings


def _models() -> list:
    """Every learner the battery builds (tests/test_common.py's ``make``), and the
    covariance kinds, dtypes and forgetting of OPAUC, costliest first."""
    import aucstream
    from aucstream import OPAUC

    out = []
    for kind in ("full", "sparse", "randomized", "hash", "fd"):
        out.append(OPAUC(covariance=kind, sketch_size=3, random_state=0))
    for kind in ("randomized", "hash"):
        out.append(OPAUC(covariance=kind, sketch_size=3, random_state=0, dtype="float32"))
    out.append(OPAUC(half_life=500.0))
    for _, cls in aucstream.all_estimators():
        params = dict(cls._unit_test_params()) if hasattr(cls, "_unit_test_params") else {}
        if "random_state" in cls().get_params():
            params["random_state"] = 0
        out.append(cls(**params))
    return out


def _exercise(model, X, S, y) -> None:
    """The calls whose kernels the tests compile most: chunks dense, sparse and
    read-only, prequential chunks, one-row calls and scores."""
    import numpy as np

    if model.is_batch:
        model.fit(X, y)
        model.fit(S, y)
        model.decision_function(X[:5])
        return
    model.partial_fit(X[:40], y[:40], classes=[-1, 1])
    model.partial_fit(S[40:60], y[40:60])
    model.test_then_train(X[60:70], y[60:70])
    model.test_then_train(S[70:80], y[70:80])
    frozen = X[80:90].copy()
    frozen.flags.writeable = False
    model.partial_fit(frozen, y[80:90])
    model.partial_fit(X[90:91], y[90:91])
    model.partial_fit(X[91:96].astype(np.float32), y[91:96])
    for i in range(96, 100):
        row = {j: float(v) for j, v in enumerate(X[i]) if v}
        model.learn_one(row, y[i])
        model.predict_proba_one(row)
        model.decision_one(row)
    model.decision_function(X[:5])
    model.decision_function(S[:5])
    model.predict_proba(X[:5])


def main(part: int, parts: int) -> None:
    import numpy as np
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 5))
    X[X < -0.5] = 0.0
    y = np.where(X @ rng.normal(size=5) > 0, 1, -1)
    S = sp.csr_matrix(X)
    warnings.simplefilter("ignore")
    for model in _models()[part::parts]:
        try:
            _exercise(model, X, S, y)
        except Exception as error:  # the tests say what is wrong, with context
            print(f"warm-up: {model!r}: {type(error).__name__}: {error}", file=sys.stderr)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
