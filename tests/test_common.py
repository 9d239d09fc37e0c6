"""The checks battery every aucstream learner runs: :mod:`aucstream.checks` (its
docstring lists the scikit-learn checks left out, with reasons), one test per check
and learner.

Learners are found by ``aucstream.all_estimators()``, so a new learner is checked
without editing this file. A learner may define a ``_unit_test_params`` classmethod
returning constructor arguments for these checks (for instance a stream length).
"""

from __future__ import annotations

import numpy as np
import pytest

import aucstream
from aucstream import SOLAM
from aucstream.checks import check_estimator, yield_checks


def make(cls, **extra):
    params = {}
    if hasattr(cls, "_unit_test_params"):
        params.update(cls._unit_test_params())
    if "random_state" in cls().get_params():
        params["random_state"] = 0
    params.update(extra)
    return cls(**params)


ESTIMATORS = [cls for _, cls in aucstream.all_estimators()]
CHECKS = [(cls, check) for cls in ESTIMATORS for check in yield_checks(make(cls))]


def test_learners_are_discovered():
    names = {cls.__name__ for cls in ESTIMATORS}
    assert {"OPAUC", "OAM"} <= names


def test_every_learner_gets_the_battery():
    # each online learner gets every check of aucstream.checks (merge and learn_one
    # included), each batch learner the ones that do not stream
    online = {name for name, _ in aucstream.all_estimators("online")}
    names = {}
    for cls, check in CHECKS:
        names.setdefault(cls.__name__, set()).add(check.__name__)
    mine = {name for name in vars(aucstream.checks) if name.startswith("check_")}
    mine.discard("check_estimator")
    for cls in ESTIMATORS:
        got = names[cls.__name__]
        assert "check_estimators_pickle" in got and "check_fit2d_1sample" in got
        if cls.__name__ in online:
            assert mine <= got, mine - got
        else:
            assert "check_dense_and_sparse_input_give_the_same_model" in got
            assert "check_chunking_never_changes_the_model" not in got


@pytest.mark.parametrize(
    "check", [check for _, check in CHECKS], ids=[f"{c.__name__}-{k.__name__}" for c, k in CHECKS]
)
def test_common(check):
    check()


class OutsideSOLAM(SOLAM):
    """A learner defined outside the package (here: in a test module)."""


class ForgetfulSOLAM(SOLAM):
    """Learns only the first row of each chunk: the model depends on the chunking."""

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        return super().partial_fit(X[:1], np.asarray(y)[:1], classes=classes)


def test_check_estimator_passes_a_learner_from_outside_and_leaves_it_unchanged():
    model = OutsideSOLAM(zeta=0.5)
    names = [check.__name__ for check in yield_checks(model, sklearn_checks=False)]
    # save_model stores aucstream's own classes only: resumed through pickle
    assert "check_resuming_mid_stream_is_exact_pickle" in names
    assert "check_resuming_mid_stream_is_exact_memory_mapped" in names
    assert "check_resuming_mid_stream_is_exact_save_model" not in names
    check_estimator(model, sklearn_checks=False)
    assert model.get_params() == OutsideSOLAM(zeta=0.5).get_params()
    assert not hasattr(model, "n_samples_seen_")


def test_check_estimator_names_the_failed_check_and_why():
    with pytest.raises(AssertionError, match="check_chunking_never_changes_the_model failed") as e:
        check_estimator(ForgetfulSOLAM(), sklearn_checks=False)
    assert "ForgetfulSOLAM" in str(e.value) and e.value.__cause__ is not None
