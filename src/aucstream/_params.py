"""Declared hyperparameters: the constraints every learner states, checked in one place.

Each learner lists its parameters in a ``_parameter_constraints`` class attribute, in
scikit-learn's vocabulary (``utils/_param_validation.py``): a dict from parameter name
to a list of accepted forms. ``BaseStreamingAUC.fit`` and ``partial_fit`` check them
with scikit-learn's own ``validate_parameter_constraints`` **before any state is
touched**, so every learner rejects a bad value with the same error type
(``InvalidParameterError``, a subclass of both ``ValueError`` and ``TypeError``) and a
message of the same form, naming the learner and the parameter::

    The 'eta' parameter of OPAUC must be a float in the range (0.0, inf). Got -1 instead.

One difference from scikit-learn: a boolean is not a number here. scikit-learn's
``Interval`` accepts ``True`` for a real or integer range (``bool`` subclasses
``int``); ``OPAUC(eta=True)`` is far more likely a mistake than a step size of 1, so
:class:`Interval` below refuses ``bool`` and ``numpy.bool_``.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import (
    Interval as _SklearnInterval,
)
from sklearn.utils._param_validation import (
    InvalidParameterError,
    Options,
    StrOptions,
    validate_parameter_constraints,
)

__all__ = [
    "FORGETTING",
    "PASS_ORDER",
    "Integral",
    "Interval",
    "InvalidParameterError",
    "Options",
    "Real",
    "StrOptions",
    "check_parameters",
    "decay_per_example",
    "positive",
    "non_negative",
    "positive_int",
    "unit_open",
]


class Interval(_SklearnInterval):
    """scikit-learn's ``Interval`` that does not count booleans as numbers."""

    def is_satisfied_by(self, val) -> bool:
        if isinstance(val, (bool, np.bool_)):
            return False
        return super().is_satisfied_by(val)


def positive() -> Interval:
    """A finite real number > 0."""
    return Interval(Real, 0, None, closed="neither")


def non_negative() -> Interval:
    """A finite real number >= 0."""
    return Interval(Real, 0, None, closed="left")


def positive_int(minimum: int = 1) -> Interval:
    """An integer >= ``minimum`` (not a bool)."""
    return Interval(Integral, minimum, None, closed="left")


def unit_open() -> Interval:
    """A real number in the open interval (0, 1)."""
    return Interval(Real, 0, 1, closed="neither")


#: Constraints of the two parameters every streaming learner shares, for
#: ``{**PASS_ORDER, ...}`` in ``_parameter_constraints``: ``shuffle`` decides whether
#: ``fit`` visits the examples in a random order and ``random_state`` seeds that order
#: and any sampling. scikit-learn's ``"random_state"`` accepts an int, None or a
#: ``numpy.random.RandomState``; aucstream also takes a ``numpy.random.Generator``.
PASS_ORDER: dict[str, list] = {
    "shuffle": ["boolean"],
    "random_state": ["random_state", np.random.Generator],
}


#: The constraint of ``half_life``, the one forgetting parameter of the library, for
#: ``{**FORGETTING, ...}`` in ``_parameter_constraints``. ``half_life`` counts examples
#: of the stream (both classes: the one clock of the library): whatever a learner
#: accumulates (class counts, means and covariances, reservoirs, squared gradients),
#: an example seen ``half_life`` examples ago weighs half as much as the latest one.
#: ``None`` (every bare learner's default) forgets nothing: the paper's algorithm
#: exactly. A finite real > 0; a bool, NaN or inf is refused.
FORGETTING: dict[str, list] = {"half_life": [None, positive()]}


def decay_per_example(half_life: float | None) -> float:
    r"""The factor :math:`\gamma = 2^{-1/h}` by which one example shrinks the past.

    Parameters
    ----------
    half_life : float or None
        :math:`h`, in examples; ``None`` gives 1.0 (no forgetting).

    Returns
    -------
    float
        :math:`\gamma \in (0, 1]`: after :math:`h` examples the past weighs
        :math:`\gamma^h = 1/2`.

    Examples
    --------
    >>> decay_per_example(None)
    1.0
    >>> round(decay_per_example(1000) ** 1000, 12)
    0.5
    """
    if half_life is None:
        return 1.0
    return float(2.0 ** (-1.0 / float(half_life)))


def check_parameters(estimator) -> None:
    """Check ``estimator.get_params(deep=False)`` against its declared constraints.

    Raises
    ------
    InvalidParameterError
        Naming the estimator's class and the first parameter that breaks its
        constraint, with the value it got.
    """
    validate_parameter_constraints(
        estimator._parameter_constraints,
        estimator.get_params(deep=False),
        caller_name=type(estimator).__name__,
    )
