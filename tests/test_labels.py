"""aucstream._labels: labels compared with two classes in one compiled pass, as numpy
compares them; what prequential checks in each chunk and what a learner's call of
many rows takes its +1/-1 labels from (the fast path's ``quick_labels``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aucstream import SOLAM, _labels
from aucstream._labels import LabelCheck, positive_of


@pytest.mark.parametrize(
    "y, classes",
    [
        (np.array([-1.0, 1.0, 1.0, -1.0]), (-1.0, 1.0)),
        (np.array([0.0, 1.0, 1.0]), (0, 1)),
        (np.array([3, 7, 7, 3], dtype=np.int64), (3, 7)),
        (np.array([3, 7], dtype=np.int64), (3.0, 7.0)),
    ],
)
def test_the_compiled_label_check_equals_numpy(y, classes):
    positive, first = positive_of(y, classes)
    assert first == -1 and np.array_equal(positive, y == classes[1])
    signs, first = LabelCheck(classes).signs(y)  # (a learner's +1/-1 labels)
    assert first == -1 and signs.dtype == np.float64
    np.testing.assert_array_equal(signs, np.where(y == classes[1], 1.0, -1.0))
    bad = np.concatenate([y, y[:1] * 0 + 5])  # a third label, last
    assert positive_of(bad, classes)[1] == y.size
    if y.dtype == np.float64:
        assert positive_of(np.array([np.nan, classes[1]]), classes)[1] == 0


@pytest.mark.parametrize(
    "y, classes",
    [
        (np.array(["a", "b"]), ("a", "b")),
        (np.array([True, False]), (False, True)),
        (np.array([1, 2], dtype=np.int32), (1, 2)),
        (np.array([1, 2], dtype=np.int64), (1.5, 2)),  # no int holds 1.5
        (np.array([1, 2], dtype=np.int64), (1, math.inf)),  # nor an infinity
        (np.array([1, 2], dtype=np.int64), (math.nan, 1)),  # nor a NaN
    ],
)
def test_other_labels_are_left_to_numpy(y, classes):
    assert positive_of(y, classes) is None
    assert LabelCheck(classes).signs(y) is None


@pytest.mark.parametrize("dtype, classes", [(np.float64, (-1.0, 1.0)), (np.int64, (-1, 1))])
def test_plain_labels_take_the_compiled_entry_and_others_the_dispatcher_alike(dtype, classes):
    """Plain labels (1-D, C-contiguous, writeable, aligned) go to the entry point
    resolved once per dtype; read-only or strided labels, typed otherwise, go through
    numba's dispatcher: the same positives and the same first bad label."""
    rng = np.random.default_rng(5)
    y = np.where(rng.random(301) < 0.3, 1, -1).astype(dtype)
    y[250] = 0  # a bad label
    _labels._ENTRIES.clear()
    plain = positive_of(y, classes)
    assert set(_labels._ENTRIES) == {"f" if dtype == np.float64 else "i"}
    signs = LabelCheck(classes).signs(y)
    assert signs[1] == 250 and np.array_equal(signs[0] > 0, plain[0])
    readonly = y.copy()
    readonly.setflags(write=False)
    strided = np.repeat(y, 2)[::2]
    for other in (readonly, strided):
        got = positive_of(other, classes)
        assert got[1] == plain[1] == 250 and np.array_equal(got[0], plain[0])
    assert np.array_equal(plain[0], y == classes[1])


def test_a_label_of_neither_class_is_found_wherever_it_is():
    rng = np.random.default_rng(0)
    y = np.where(rng.random(200) < 0.3, 1.0, -1.0)
    for at in (0, 1, 57, 199):
        bad = y.copy()
        bad[at] = 0.0
        bad[at + 1 :: 3] = 2.0 if at < 199 else bad[at + 1 :: 3]  # later ones too
        assert positive_of(bad, (-1, 1))[1] == at


@pytest.mark.parametrize(
    "labels, classes",
    [
        ([0.0, 1.0], [0, 1]),
        ([-1, 1], [-1.0, 1.0]),
        (["no", "yes"], ["no", "yes"]),
        ([False, True], [False, True]),
        ([2**60, 2**60 + 1], [2**60, 2**60 + 1]),  # (exact as int64)
    ],
)
def test_a_learner_learns_the_labels_numpy_would_give_it(labels, classes, monkeypatch):
    """The fast path's compiled labels (float64, int64) give the model of numpy's
    comparisons (the compiled pass refused), bit for bit; other labels are numpy's."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4))
    y = np.array(labels)[(X[:, 0] + rng.normal(size=300) > 0).astype(int)]
    signs, taken = LabelCheck.signs, []

    def spied(self, values):
        got = signs(self, values)
        taken.append(got is not None)
        return got

    models = []
    for refuse in (False, True):
        monkeypatch.setattr(LabelCheck, "signs", (lambda self, v: None) if refuse else spied)
        model = SOLAM().partial_fit(X[:100], y[:100], classes=classes)
        models.append(model.partial_fit(X[100:], y[100:]))
    np.testing.assert_array_equal(models[0].coef_, models[1].coef_)
    np.testing.assert_array_equal(models[0].decision_function(X), models[1].decision_function(X))
    assert any(taken) == (y.dtype.kind in "if")
