"""The one-pair path of ``PrequentialAUC.update`` (a scalar label and score, held and
counted with the next ones): the same AUC and state as the array path, whatever the
scalar types, and the same refusals (nothing changed)."""

import numpy as np
import pytest

from aucstream.metrics import PrequentialAUC, roc_auc


def _pairs(n=700, seed=0):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.3, 1.0, -1.0)
    s = np.round(rng.normal(size=n), 1)  # (ties)
    return y, s


@pytest.mark.parametrize(
    "as_label, as_score",
    [
        (lambda v: v, lambda v: v),  # numpy float64 (as indexed from arrays)
        (float, float),
        (int, float),
        (lambda v: bool(v > 0), lambda v: v),
        (lambda v: np.int64(v), lambda v: np.float32(v)),  # (the general path)
        (lambda v: "pos" if v > 0 else "neg", float),
    ],
)
def test_one_pair_equals_array_path(as_label, as_score):
    y, s = _pairs()
    one, arrays = PrequentialAUC(), PrequentialAUC()
    labels = [as_label(v) for v in y]
    for i in range(len(y)):  # more than the 512 pairs held
        one.update(labels[i], as_score(s[i]))
    arrays.update(np.array(labels), s.astype(np.float64))
    assert one.n_seen == arrays.n_seen == len(y)
    assert one.get() == arrays.get()
    assert one.get() == roc_auc(np.array(labels) == labels[int(np.argmax(y))], s)
    assert one._labels == arrays._labels
    assert all(type(v) is float for v in one._held_scores)


def test_chunking_does_not_matter():
    y, s = _pairs(600, seed=1)
    one, mixed = PrequentialAUC(), PrequentialAUC()
    for i in range(len(y)):
        one.update(y[i], s[i])
    mixed.update(y[:100], s[:100])
    for i in range(100, 350):
        mixed.update(y[i], s[i])
    mixed.get()
    for i in range(350, 600):
        mixed.update(float(y[i]), float(s[i]))
    assert one.get() == mixed.get()


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan, float("nan")])
def test_non_finite_score_refused(bad):
    metric = PrequentialAUC().update(1.0, 0.5).update(-1.0, 0.2).update(1.0, 0.1)
    before = (metric.n_seen, list(metric._held_scores), list(metric._held_numbers))
    with pytest.raises(ValueError, match="is not finite; the update was refused"):
        metric.update(1.0, bad)
    assert (metric.n_seen, list(metric._held_scores), list(metric._held_numbers)) == before
    assert metric.get() == 0.5


def test_third_label_and_nan_label_refused():
    metric = PrequentialAUC().update(1.0, 0.5).update(-1.0, 0.2)
    with pytest.raises(ValueError, match="is a third label"):
        metric.update(np.float64(2.0), 0.3)
    with pytest.raises(ValueError, match="contains NaN"):
        metric.update(float("nan"), 0.3)
    assert metric.n_seen == 2 and metric.get() == 1.0


def test_refusal_of_a_new_label_is_not_chained_to_the_lookup():
    """The one-scan lookup of a known label fails for a new one; the refusal that
    follows is raised on its own (no 'not in list' error in its traceback)."""
    metric = PrequentialAUC().update(1.0, 0.5).update(-1.0, 0.2)
    with pytest.raises(ValueError, match="is a third label") as refused:
        metric.update(np.float64(2.0), 0.3)
    assert refused.value.__context__ is None
    assert metric.n_seen == 2 and metric._labels == [1.0, -1.0]


class _Uncomparable:
    def __eq__(self, other):
        raise ValueError("cannot compare this label")

    __hash__ = None


def test_a_label_whose_comparison_raises_is_refused_with_its_error():
    metric = PrequentialAUC().update(1.0, 0.5).update(-1.0, 0.2)
    with pytest.raises(ValueError, match="cannot compare this label"):
        metric.update(_Uncomparable(), 0.3)
    assert (metric.n_seen, metric._held_numbers, metric._labels) == (2, [0, 1], [1.0, -1.0])


@pytest.mark.parametrize("held", [[1.0], [np.float64(0.0)], [2], ["1"]])
def test_a_loaded_state_holds_label_numbers_0_and_1_as_ints(held):
    """Held label numbers are counted from their bytes: a loaded state holding other
    values (a float 1.0 among them) is refused."""
    metric = PrequentialAUC().update(1.0, 0.5).update(-1.0, 0.2)
    metric._check_state()
    metric._held_numbers, metric._held_scores = held, [0.3]
    with pytest.raises(ValueError, match="the held pairs are inconsistent"):
        metric._check_state()
