"""Declared constraints of the parameters that every streaming learner shares.

``shuffle`` decides whether ``fit`` visits the examples in a random order and
``random_state`` seeds that order (and any sampling). scikit-learn's ``"random_state"``
constraint accepts an int, None or a ``numpy.random.RandomState``; aucstream also
takes a ``numpy.random.Generator`` (:func:`aucstream._base.make_rng`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["PASS_ORDER"]

#: ``{**PASS_ORDER, ...}`` in a learner's ``_parameter_constraints``.
PASS_ORDER: dict[str, list] = {
    "shuffle": ["boolean"],
    "random_state": ["random_state", np.random.Generator],
}
