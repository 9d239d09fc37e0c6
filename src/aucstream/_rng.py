"""The one home of random-state coercion: ``random_state`` (or ``rng``) to a Generator.

Every part of aucstream that draws random numbers turns what it was given into a
:class:`numpy.random.Generator` with :func:`make_rng`, and a part that must hand an
integer seed to another library (scikit-learn's projections and PCA) takes it from
:func:`seed_from`. The rules, for every caller:

=============================  =======================================================
given                          :func:`make_rng` returns
=============================  =======================================================
``None``                       a fresh Generator seeded from the operating system
a non-negative int             ``np.random.default_rng(seed)`` (numpy ints too)
a ``Generator``                that Generator itself (shared, not copied)
a legacy ``RandomState``       ``np.random.default_rng(state.randint(2**31 - 1))``: one
                               draw of the RandomState seeds a new Generator
a ``SeedSequence``             ``np.random.default_rng(sequence)``
a bool, float, string, ...     ``TypeError`` naming the parameter (``True`` is not a
                               seed, even though Python counts it as an int)
a negative int                 ``ValueError`` naming the parameter
=============================  =======================================================

The same seed gives the same numbers as ``np.random.default_rng(seed)``, so a
learner, a covariance sketch or a feature map seeded by an int draws what it always
drew.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["make_rng", "seed_from"]

#: Upper bound (exclusive) of a seed drawn from a Generator or a RandomState.
SEED_BOUND = 2**31 - 1


def make_rng(random_state, name: str = "random_state") -> np.random.Generator:
    """A :class:`numpy.random.Generator` from ``random_state`` (see the module's table).

    Parameters
    ----------
    random_state : None, int, Generator, RandomState or SeedSequence
        What the caller was given.
    name : str, default="random_state"
        The parameter's name in error messages.

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    TypeError
        For a bool or anything that is not one of the accepted kinds.
    ValueError
        For a negative int.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream._rng import make_rng
    >>> make_rng(0).random() == np.random.default_rng(0).random()
    True
    >>> g = np.random.default_rng(1)
    >>> make_rng(g) is g
    True
    >>> make_rng(True)
    Traceback (most recent call last):
    ...
    TypeError: random_state must be None, an int, a Generator or a RandomState, got True
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(SEED_BOUND))
    if isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    if random_state is None:
        return np.random.default_rng()
    _check_int(random_state, name)
    return np.random.default_rng(int(random_state))


def _check_int(random_state, name: str) -> None:
    """TypeError unless ``random_state`` is an int (not a bool), ValueError if negative."""
    if isinstance(random_state, (bool, np.bool_)) or not isinstance(random_state, numbers.Integral):
        raise TypeError(
            f"{name} must be None, an int, a Generator or a RandomState, got {random_state!r}"
        )
    if random_state < 0:
        raise ValueError(f"{name} must be a non-negative int, got {random_state!r}")


def seed_from(random_state, name: str = "random_state") -> int | None:
    """An int seed (or None) from ``random_state``, for a library that wants a seed.

    An int (checked as by :func:`make_rng`) or None is returned as it is; a Generator
    or a RandomState gives one draw in ``[0, 2**31 - 1)`` (so it advances).

    Parameters
    ----------
    random_state : None, int, Generator or RandomState
    name : str, default="random_state"
        The parameter's name in error messages.

    Returns
    -------
    int or None

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream._rng import seed_from
    >>> seed_from(7), seed_from(None)
    (7, None)
    >>> seed_from(np.random.default_rng(0)) == int(np.random.default_rng(0).integers(2**31 - 1))
    True
    """
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(SEED_BOUND))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(SEED_BOUND))
    if random_state is None:
        return None
    if isinstance(random_state, np.random.SeedSequence):
        return int(make_rng(random_state).integers(SEED_BOUND))
    _check_int(random_state, name)
    return int(random_state)
