"""What two learners must share to merge, checked before either is touched.

:meth:`Merging.merge` (a mixin of :class:`aucstream._base.BaseStreamingAUC`) absorbs a
learner that learnt another part of the stream. :func:`check_mergeable` refuses the
merge, naming what differs, unless both have the same class and parameters
(estimator-valued parameters compared by class and parameters, ``random_state`` aside), the same
features and feature names, the same classes (values and kind), and states of the same
kind (members, array dtypes and axes, component classes: a parameter changed by
``set_params`` after learning leaves a state of the old kind).
"""

from __future__ import annotations

import numbers
from typing import TypeVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .. import _state
from ._host import LearnerHost

__all__ = ["Merging", "check_mergeable", "kind_difference", "same_param", "state_kind_difference"]

_Learner = TypeVar("_Learner", bound="Merging")


def same_param(a, b) -> bool:
    """Whether two values of a parameter are equal: estimators by class and parameters
    (but ``random_state``), containers item by item, arrays element by element (NaN
    equal to NaN), numbers by value."""
    if isinstance(a, BaseEstimator) or isinstance(b, BaseEstimator):
        if type(a) is not type(b):
            return False
        pa, pb = a.get_params(deep=False), b.get_params(deep=False)
        pa.pop("random_state", None)
        pb.pop("random_state", None)
        return pa.keys() == pb.keys() and all(same_param(pa[k], pb[k]) for k in pa)
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same_param, a, b))
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            type(a) is type(b) and a.keys() == b.keys() and all(same_param(a[k], b[k]) for k in a)
        )
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
        )
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    if type(a) is not type(b) and not (
        isinstance(a, numbers.Number) and isinstance(b, numbers.Number)
    ):
        return False
    return bool(a == b)


def kind_difference(a, b, path: str) -> str | None:
    """The first state member (``path``) whose kind differs: type, array dtype or
    number of axes, component class or members (scalars are values, not kinds: an int
    read from a model file and a numpy integer are alike); None if none does."""
    plain = (type(None), bool, numbers.Number, str)
    if isinstance(a, plain) and isinstance(b, plain):
        return None
    if type(a) is not type(b):
        return f"{path} ({type(a).__name__} against {type(b).__name__})"
    if isinstance(a, np.ndarray):
        if a.dtype != b.dtype or a.ndim != b.ndim:
            return f"{path} ({a.dtype}[{a.ndim}d] against {b.dtype}[{b.ndim}d])"
        return None
    if isinstance(a, (list, tuple)):
        for i, (u, v) in enumerate(zip(a, b)):
            found = kind_difference(u, v, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    if isinstance(a, BaseEstimator):  # a step or candidate: its own state
        return state_kind_difference(a, b, path)
    if _state.is_component(a):
        ka, kb = vars(a), vars(b)
        if ka.keys() != kb.keys():
            return f"{path} (members {sorted(ka.keys() ^ kb.keys())} in only one)"
        for k in ka:
            found = kind_difference(ka[k], kb[k], f"{path}.{k}")
            if found is not None:
                return found
    return None


def state_kind_difference(a, b, path: str) -> str | None:
    """The first member (``path``) of the states of two learners whose kind differs
    (:func:`kind_difference`), or None."""
    sa, sb = _state.state_items(a), _state.state_items(b)
    prefix = f"{path}." if path else ""
    if sa.keys() != sb.keys():
        return f"{prefix}{sorted(sa.keys() ^ sb.keys())[0]} (in only one)"
    for k in sa:
        found = kind_difference(sa[k], sb[k], f"{prefix}{k}")
        if found is not None:
            return found
    return None


def check_mergeable(learner, other) -> None:
    """Refuse, changing nothing, to merge ``other`` into ``learner`` unless they share
    what the module docstring lists.

    Raises
    ------
    TypeError
        If ``other`` is of another class.
    NotImplementedError
        If the learner does not merge (its ``_merge`` says so).
    ValueError
        If they differ in parameters, features, feature names, classes or the kind of
        their state (the message names what differs), or one is not fitted.
    """
    name = type(learner).__name__
    if type(other) is not type(learner):
        raise TypeError(f"cannot merge a {type(other).__name__} into a {name}")
    check_is_fitted(learner, "n_samples_seen_")
    check_is_fitted(other, "n_samples_seen_")
    if not learner._merges():
        learner._merge(other)  # says that this learner does not merge
    mine, theirs = learner.get_params(deep=False), other.get_params(deep=False)
    mine.pop("random_state", None)
    theirs.pop("random_state", None)
    differ = sorted(k for k in mine if k not in theirs or not same_param(mine[k], theirs[k]))
    if differ:
        raise ValueError(f"cannot merge {name}s whose parameters differ: {differ}")
    if other.n_features_in_ != learner.n_features_in_:
        raise ValueError(
            f"cannot merge a {name} of {other.n_features_in_} features into one of "
            f"{learner.n_features_in_}"
        )
    names = getattr(learner, "feature_names_in_", None)
    their_names = getattr(other, "feature_names_in_", None)
    if (names is None) != (their_names is None):
        which = "this one" if names is not None else "the other"
        raise ValueError(
            f"cannot merge {name}s of which only {which} learnt from named columns "
            "(feature_names_in_): the columns may not be the same"
        )
    if names is not None and their_names is not None and not np.array_equal(names, their_names):
        changed = [
            f"{a!r} != {b!r}" for a, b in zip(names.tolist(), their_names.tolist()) if a != b
        ]
        raise ValueError(
            f"cannot merge {name}s fitted on other column names (feature_names_in_ "
            f"differ: {', '.join(changed[:3])}{', ...' if len(changed) > 3 else ''})"
        )
    if not (
        np.array_equal(other.classes_, learner.classes_)
        and other.classes_.dtype.kind == learner.classes_.dtype.kind
    ):
        raise ValueError(
            f"cannot merge {name}s with classes {other.classes_!r} and {learner.classes_!r}"
        )
    found = state_kind_difference(learner, other, "")
    if found is not None:
        raise ValueError(
            f"cannot merge {name}s whose states are of different kinds: {found} (a "
            "parameter changed by set_params after learning?)"
        )


class Merging(LearnerHost):
    """Mixin of :class:`aucstream._base.BaseStreamingAUC`: ``merge`` (module
    docstring); a learner says what merging means for it in ``_merge``."""

    def merge(self: _Learner, other: _Learner) -> _Learner:
        """Absorb a learner of the same kind that learnt another part of the stream.

        Both must have the same class and parameters (``random_state`` may differ; an
        estimator given as a parameter, a pipeline's steps, is compared by class and
        parameters), the same features (their number, and the column names of
        ``feature_names_in_``: both learnt from named columns with equal names, or
        neither did, as :meth:`partial_fit` requires of its input), the same classes
        (values and kind: ``[0, 1]`` and ``[0.0, 1.0]`` are different labels to
        :meth:`predict`) and a state of the same kind (the same members, array dtypes
        and components: a parameter changed by ``set_params`` after learning leaves a
        state of the old kind). What merging means is the learner's own (see its
        ``_merge``): class summaries add exactly, weights combine by examples seen,
        reservoirs merge into a uniform sample of the union. Either way
        ``n_samples_seen_`` becomes the sum. A refused merge changes nothing.

        Parameters
        ----------
        other : BaseStreamingAUC
            The other learner (left unchanged).

        Returns
        -------
        self

        Raises
        ------
        TypeError
            If ``other`` is of another class.
        ValueError
            If the two differ in parameters, features, feature names, classes or the
            kind of their state (the message names what differs).

        Examples
        --------
        >>> import numpy as np
        >>> from aucstream import OPAUC
        >>> X = np.random.default_rng(0).normal(size=(200, 3)); y = X[:, 0] > 0
        >>> a, b = OPAUC().fit(X[:100], y[:100]), OPAUC().fit(X[100:], y[100:])
        >>> int(a.merge(b).n_samples_seen_)
        200
        """
        check_mergeable(self, other)
        with self._transaction():
            self._merge(other)
            self.n_samples_seen_ += other.n_samples_seen_
        return self

    def _merge(self, other) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not support merge() yet")

    def _merges(self) -> bool:
        """Whether the learner defines ``_merge`` (merging is its own)."""
        return type(self)._merge is not Merging._merge
