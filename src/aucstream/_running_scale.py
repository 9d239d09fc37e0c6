r"""A running scale per column, for learners whose fixed steps assume scaled rows.

SOLAM, SOLAM-l1 and FSAUC (Y16, L18) take steps whose size is set for rows of norm at
most :math:`\kappa` (1 by default): on raw columns (an amount in the thousands next to
a rate in [0, 1]) their steps are far too long in the large columns and far too short
in the small ones, and they learn little. Following the normalized updates of Ross,
Mineiro and Langford, *Normalized Online Learning* (UAI 2013, Alg. 1 "NG": the running
maximum :math:`s_i = \max_{t' \le t} |x_{t',i}|` of each column), such a learner can
learn on :math:`\tilde x_i = x_i / s_i` (each column in [-1, 1], :math:`s_i` including
the example being learnt) with its own update unchanged, and score
:math:`\tilde w^\top \tilde x = \sum_i (\tilde w_i / s_i) x_i`: its ``coef_`` is
:math:`\tilde w / s` in the units of the raw columns. A column never seen non-zero has
:math:`s_i = 0` and weight 0 (its scaled value is taken as 0).

The scale of an example's columns grows before its step, not before its score: the
prequential score of example t is that of the model before it,
:math:`\sum_i \tilde w_i x_{t,i} / s_{t-1,i}` (what ``decision_function`` gives before
example t is learnt), and its step uses :math:`s_t`. Unlike NG, the weights are not
rescaled when a scale grows (NG multiplies :math:`w_i` by :math:`s_{old}^2/s_{new}^2`
to keep its regret bound for a linear predictor in the raw units): the learners here
keep their iterate in the scaled units and a projection onto a ball there (Y16 §3, L18
Eq. 2), which a rescaling would leave; a column's scale settles after its largest
values, and from then on the update is the paper's on :math:`\tilde x`.

The scale depends only on the examples learnt (weight 0 leaves it), so chunking does
not change it; it is written only in the columns of each example's non-zeros.

Who uses it: SOLAM, SOLAM-l1, FSAUC and AdaOAM (here), SAdaOAM (its lazy l1 steps on
:math:`\tilde w`, :mod:`aucstream._sadaoam_step`), FTRL-AUC and SPAM (O(k): a scale
read and grown in the row's non-zeros; their default "max_abs_1" divides by at least
1, so columns within [-1, 1] are learnt as they come, and records a maximum only
above 1: :func:`grow_scale`) and OPAUC's explicit kinds
(a diagonal preconditioner on its step, :mod:`aucstream.opauc`, "Columns in their
running scale").
"""

from __future__ import annotations

import numpy as np

from ._kernels import col, jit

__all__ = ["coef_in_columns", "grow_scale", "merged_scale", "scaled_dot", "scaled_values"]


@jit(inline="always")
def scaled_values(scale, idx, val, out, on):
    """The row's values divided by their columns' ``scale`` (0 where it is 0), written
    to ``out`` and returned as ``out[:k]``; the values themselves when not ``on``."""
    k = val.shape[0]
    for a in range(k):
        v = val[a]
        if on:
            s = scale[col(idx, a)]
            v = v / s if s > 0.0 else 0.0
        out[a] = v
    return out[:k]


@jit(inline="always")
def grow_scale(scale, idx, val, floor):
    r"""Raise each column's running maximum of |x| to the row's values above
    ``floor``; whether the divisor of a column, :math:`\max(s_i, \text{floor})`,
    changed (any growth with ``floor`` 0). Values at most ``floor`` are not recorded:
    they never change a divisor, so a row's values in the scale, and a score taken on
    them, stay as they were. The learners that divide by at least 1 (FTRL-AUC's and
    SPAM's "max_abs_1") so keep in ``s_i`` the maximum of a column's |x| once it
    exceeds 1 and 0 until then (the divisor is 1 either way), take the score again
    only when a divisor moved, and read nothing of a value within [-1, 1] here.
    With ``floor`` 0 every growth is recorded."""
    changed = False
    for a in range(val.shape[0]):
        v = abs(val[a])
        if v > floor:
            c = col(idx, a)
            if v > scale[c]:  # (the old divisor, max(s_i, floor), was below v)
                scale[c] = v
                changed = True
    return changed


def coef_in_columns(coef: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Weights of the scaled columns in the units of the raw columns (in place)."""
    seen = scale > 0.0
    coef[seen] /= scale[seen]
    coef[~seen] = 0.0
    return coef


def merged_scale(mine: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """The running maximum of two disjoint parts of a stream."""
    return np.maximum(mine, theirs)


@jit(inline="always")
def scaled_dot(w, scale, idx, val):
    """:math:`\\sum_i w_i x_i / s_i` over the row's non-zeros (0 where s_i = 0, whose
    weight is 0): the score of a row under weights of the scaled columns."""
    total = 0.0
    for a in range(val.shape[0]):
        c = col(idx, a)
        if scale[c] > 0.0:
            total += w[c] * (val[a] / scale[c])
    return total
