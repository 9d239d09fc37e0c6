"""The type aliases of the public signatures: one alias per concept, written once.

``tests/test_public_typing.py`` checks that every public callable is annotated; these
are the names its annotations share (annotations only: nothing here runs).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

if TYPE_CHECKING:  # (scipy is imported only where sparse input is read)
    from scipy.sparse import sparray, spmatrix

#: A ``random_state`` parameter (:func:`aucstream._rng.make_rng`): None, a seed, a
#: Generator, a legacy RandomState or a SeedSequence.
RandomState: TypeAlias = (
    int | np.integer | np.random.Generator | np.random.RandomState | np.random.SeedSequence | None
)

#: One example as a dict: feature index (or name) -> value; missing features are 0.
DictRow: TypeAlias = Mapping[Any, float]

#: One example: a 1-d array-like of shape (n_features,) or a :data:`DictRow`.
Row: TypeAlias = ArrayLike | DictRow

#: A class label (a value of ``classes_``: a number, a string, a bool).
Label: TypeAlias = int | float | str | bool | np.generic

#: A matrix of examples: array-like, or a SciPy sparse matrix or array.
MatrixLike: TypeAlias = "ArrayLike | spmatrix | sparray"

#: A matrix returned: a NumPy array or a SciPy sparse matrix or array.
Matrix: TypeAlias = "np.ndarray | spmatrix | sparray"

#: A file or folder path.
PathLike: TypeAlias = "str | os.PathLike"

#: A ``dtype`` parameter (a NumPy dtype, its name or a type).
DType: TypeAlias = DTypeLike


class ChangeDetector(Protocol):
    """A change detector: ``update(x)`` and ``drift_detected`` (aucstream's
    :class:`~aucstream.drift.ADWIN` and :class:`~aucstream.drift.PageHinkley`, or
    River's detectors)."""

    drift_detected: bool

    def update(self, x: float) -> Any: ...


__all__ = [
    "ChangeDetector",
    "ArrayLike",
    "DType",
    "DictRow",
    "Label",
    "Matrix",
    "MatrixLike",
    "PathLike",
    "RandomState",
    "Row",
]
