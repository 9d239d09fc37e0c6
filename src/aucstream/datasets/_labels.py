"""Binary labels: every rule that turns class labels into ``{-1, +1}``, in one place.

The AUC papers need two classes. A *rule* says which original labels become +1 (the
others become -1); the registry (:func:`~aucstream.datasets.load_dataset`), the
evaluation harness (``NAME:RULE`` dataset specs) and the command line (``--positive``)
all resolve their rules here:

- ``None`` or ``"default"``: the data's conventional positive class when it has one
  (the registry's two-class sets); otherwise, with exactly two labels, the larger
  label; otherwise the ``multiclass`` fallback of the caller (the registry uses
  ``"random_halves"``; a file needs an explicit rule);
- ``"positive"``: the conventional positive class (an error when there is none);
- ``"random_halves"``: the sorted distinct classes are permuted with
  ``np.random.default_rng(random_state)`` and the first ``floor(K/2)`` are positive,
  G13 §6 and G16 §7.1 ("each group has the same number of classes"); the partition
  depends only on the set of classes and the seed, so it is fixed per dataset;
- ``"largest_vs_rest"`` / ``"smallest_vs_rest"``: the class with the most / fewest
  examples against the others (G16 §7.2's sector.lvr; ties: the smallest label);
- ``("one_vs_rest", c)``: class ``c`` against the others (Z11 §4.1 makes its
  multi-class sets imbalanced this way);
- ``("positive", (c1, c2, ...))``: the listed labels against the others (at least one
  of them must occur).

The ``binarize_*`` functions apply one rule to an array; they work for numeric and
string labels alike and return int64 labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._rng import make_rng

__all__ = [
    "apply_positive",
    "binarize",
    "binarize_largest_vs_rest",
    "binarize_one_vs_rest",
    "binarize_random_halves",
    "binarize_smallest_vs_rest",
    "format_label",
    "positive_classes",
]

#: Rules named by a single word.
NAMED_RULES = ("random_halves", "largest_vs_rest", "smallest_vs_rest")


def _as_labels(y: ArrayLike) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-dimensional, got shape {y.shape}")
    return y


def apply_positive(y: ArrayLike, positive: Sequence | np.ndarray) -> np.ndarray:
    """Map labels to +1 when they are in ``positive`` and to -1 otherwise.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.
    positive : sequence
        The labels that become +1.

    Returns
    -------
    ndarray of int64 of shape (n_samples,)
        Values in ``{-1, +1}``.
    """
    y = _as_labels(y)
    pos = np.asarray(list(positive) if not isinstance(positive, np.ndarray) else positive)
    if pos.size == 0:
        return np.full(y.shape, -1, dtype=np.int64)
    return np.where(np.isin(y, pos), 1, -1).astype(np.int64)


def random_halves_partition(classes: ArrayLike, random_state: Any = 0) -> np.ndarray:
    """The classes that :func:`binarize_random_halves` makes positive.

    Parameters
    ----------
    classes : array-like
        The distinct class labels (duplicates are removed; order does not matter).
    random_state : int, numpy Generator or None, default=0
        Seed of ``np.random.default_rng``.

    Returns
    -------
    ndarray
        ``floor(K / 2)`` of the ``K`` classes, sorted.
    """
    classes = np.unique(np.asarray(classes))
    k = classes.size
    if k < 2:
        raise ValueError(f"need at least 2 classes to split, got {k}")
    rng = make_rng(random_state)
    perm = rng.permutation(k)
    return np.sort(classes[perm[: k // 2]])


def _class_by_count(y: ArrayLike, largest: bool) -> Any:
    """The most (or least) frequent label of ``y``; ties: the smallest label."""
    classes, counts = np.unique(_as_labels(y), return_counts=True)
    if classes.size == 0:
        raise ValueError("y is empty")
    return classes[np.argmax(counts) if largest else np.argmin(counts)]


def _check_occurs(labels: ArrayLike, y: np.ndarray, where: str, every: bool) -> None:
    found = np.isin(np.asarray(labels), y)
    if not (found.all() if every else found.any()):
        classes = ", ".join(format_label(v) for v in np.unique(y))
        raise ValueError(
            f"{'class' if every else 'none of the positive labels'} "
            f"{', '.join(format_label(v) for v in np.atleast_1d(labels))} does not occur in "
            f"{where}; its classes are {classes}"
        )


def binarize_random_halves(
    y: ArrayLike, random_state: Any = 0, *, classes: ArrayLike | None = None
) -> np.ndarray:
    """Split the classes at random into two halves: ``floor(K/2)`` of them become +1.

    The ``K`` distinct classes are sorted, permuted with
    ``np.random.default_rng(random_state)``, and the first ``floor(K/2)`` of the
    permutation are positive. The partition depends only on the set of classes and
    the seed, so a train part and a test part with the same classes get the same one;
    pass ``classes`` when a part may lack some class.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels (numbers or strings).
    random_state : int, numpy Generator or None, default=0
        Seed of the permutation.
    classes : array-like or None, default=None
        All class labels of the problem; default: the distinct values of ``y``.

    Returns
    -------
    ndarray of int64 of shape (n_samples,)
        Labels in ``{-1, +1}``.

    Examples
    --------
    >>> from aucstream.datasets import binarize_random_halves
    >>> y = binarize_random_halves([0, 1, 2, 3, 0, 1], random_state=0)
    >>> sorted(set(y.tolist()))
    [-1, 1]
    """
    y = _as_labels(y)
    return apply_positive(
        y, random_halves_partition(y if classes is None else classes, random_state)
    )


def binarize_one_vs_rest(y: ArrayLike, positive: object) -> np.ndarray:
    """One class against all the others.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.
    positive : label
        The class that becomes +1; it must occur in ``y``.

    Returns
    -------
    ndarray of int64 of shape (n_samples,)
        +1 where ``y == positive``, -1 elsewhere.
    """
    y = _as_labels(y)
    _check_occurs(np.asarray([positive]), y, "y", every=True)
    return apply_positive(y, np.asarray([positive]))


def binarize_largest_vs_rest(y: ArrayLike) -> np.ndarray:
    """The most frequent class against all the others.

    "Largest" means the class with the most examples in ``y`` (ties broken by the
    smallest label), not the largest label value.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.

    Returns
    -------
    ndarray of int64 of shape (n_samples,)
        +1 for the most frequent class, -1 elsewhere.
    """
    return apply_positive(y, np.asarray([_class_by_count(y, largest=True)]))


def binarize_smallest_vs_rest(y: ArrayLike) -> np.ndarray:
    """The least frequent class against all the others (an imbalanced problem).

    "Smallest" means the class with the fewest examples in ``y`` (ties broken by
    the smallest label), not the smallest label value.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.

    Returns
    -------
    ndarray of int64 of shape (n_samples,)
        +1 for the least frequent class, -1 elsewhere.
    """
    return apply_positive(y, np.asarray([_class_by_count(y, largest=False)]))


# ------------------------------------------------------------------ one resolver


def format_label(label: Any) -> str:
    """A label as written in rule descriptions and messages.

    Parameters
    ----------
    label : number, str or numpy scalar

    Returns
    -------
    str
        ``1`` for 1.0 (an integral float as an int), ``'g'`` for a string (quoted),
        the Python value's ``repr`` for a numpy scalar.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.datasets import format_label
    >>> format_label(1.0), format_label(np.int64(-1)), format_label(np.str_("g"))
    ('1', '-1', "'g'")
    """
    if isinstance(label, float | np.floating) and float(label).is_integer():
        return str(int(label))
    if isinstance(label, np.str_):
        return repr(str(label))
    if isinstance(label, np.generic):
        return repr(label.item())
    return repr(label)


def _default_rule(classes: np.ndarray, conventional: Any, multiclass: str | None, where: str):
    if conventional is not None:
        return ("positive", (conventional,))
    if classes.size == 2:  # already binary: the larger label is positive
        return ("positive", (classes[1],))
    if multiclass is None:
        raise ValueError(
            f"{where} has {classes.size} classes; give a binary rule "
            "(e.g. NAME:largest_vs_rest or NAME:positive=C)"
        )
    return multiclass


def positive_classes(
    y: ArrayLike,
    rule: Any = None,
    *,
    conventional: Any = None,
    multiclass: str | None = "random_halves",
    random_state: Any = 0,
    where: str = "the data",
) -> tuple[np.ndarray, str]:
    """The labels that ``rule`` maps to +1 on labels ``y``, and the rule in words.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        All labels of the problem (every part, so that parts are converted alike).
    rule : None, str or tuple
        See the module docstring.
    conventional : label or None
        The data's conventional positive class (used by ``None``, ``"default"`` and
        ``"positive"``).
    multiclass : str or None, default="random_halves"
        The default rule for more than two classes without a conventional positive
        class; None makes that an error.
    random_state : int, Generator or None, default=0
        Seed of ``"random_halves"``.
    where : str
        Names the data in error messages.

    Returns
    -------
    positives : ndarray
        The original labels that become +1.
    description : str
        E.g. ``"positive=1"``, ``"random_halves(random_state=0)"``,
        ``"largest_vs_rest (class 2)"``, ``"one_vs_rest('h')"``.
    """
    y = _as_labels(y)
    if rule is None or (isinstance(rule, str) and rule == "default"):
        rule = _default_rule(np.unique(y), conventional, multiclass, where)
    if isinstance(rule, str) and rule == "positive":
        if conventional is None:
            raise ValueError(
                f"{where} has {np.unique(y).size} classes and no conventional positive "
                "class; choose a binary rule"
            )
        rule = ("positive", (conventional,))
    if isinstance(rule, str) and rule == "random_halves":
        pos = random_halves_partition(y, random_state)
        return pos, f"random_halves(random_state={random_state!r})"
    if isinstance(rule, str) and rule in NAMED_RULES:
        c = _class_by_count(y, largest=rule == "largest_vs_rest")
        return np.asarray([c]), f"{rule} (class {format_label(c)})"
    if isinstance(rule, tuple | list) and len(rule) == 2 and rule[0] == "one_vs_rest":
        _check_occurs([rule[1]], y, where, every=True)
        return np.asarray([rule[1]]), f"one_vs_rest({format_label(rule[1])})"
    if isinstance(rule, tuple | list) and len(rule) == 2 and rule[0] == "positive":
        values = list(rule[1])
        _check_occurs(values, y, where, every=False)
        return np.asarray(values), "positive=" + ",".join(format_label(v) for v in values)
    raise ValueError(
        "binary must be None, False, 'random_halves', ('one_vs_rest', label), "
        "('positive', labels), 'largest_vs_rest' or 'smallest_vs_rest'; "
        f"got {rule!r}"
    )


def binarize(y: ArrayLike, rule: Any = None, **options: Any) -> tuple[np.ndarray, str]:
    """Labels ``y`` in ``{-1, +1}`` under ``rule`` (see :func:`positive_classes`).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.
    rule : None, str or tuple
        See the module docstring.
    **options
        ``conventional``, ``multiclass``, ``random_state``, ``where`` of
        :func:`positive_classes`.

    Returns
    -------
    y : ndarray of int64
        The binary labels.
    description : str
        The rule in words.

    Examples
    --------
    >>> from aucstream.datasets import binarize
    >>> binarize(["a", "b", "c", "a"], ("positive", ["a", "c"]))
    (array([ 1, -1,  1,  1]), "positive='a','c'")
    """
    positives, description = positive_classes(y, rule, **options)
    return apply_positive(y, positives), description
