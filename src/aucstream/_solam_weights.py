"""SOLAM's scalars and its averaged model as the per-example scorers read it.

The indices into ``SOLAM.scalars_`` and the averaged model written into a scorer's
buffer (``StateSpec.weights``: :func:`_bound_weights`), split from
:mod:`aucstream.solam` to keep that module under 900 lines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._dict_scoring import weights_begin, weights_end
from ._fastpath import BLOCK_START, BLOCK_WIDTH, block_call, floats_at, ints_at
from ._kernels import LazySum, jit, lazy_mean

if TYPE_CHECKING:
    from .solam import SOLAM

# indices into SOLAM.scalars_
_SIGMA, _C, _GSUM, _A, _B, _ALPHA, _SA, _SB, _SAL, _NRM2, _NRM1 = range(11)
_N_SCALARS = 11


@jit(inline="always")
def _averaged_coef(u, base, corr, scal, scale, out, rescale):
    """The averaged model (in the units of the raw columns with ``rescale``) and the
    intercept 0 into ``out``, bit for bit as ``SOLAM._coef()`` (``_scaled_coef``, then
    ``coef_in_columns``): :func:`_bound_weights`. False, nothing written, when the
    arrays do not fit."""
    d = u.shape[0]
    if (
        out.shape[0] != d + 1
        or base.shape[0] != d
        or corr.shape[0] != d
        or scale.shape[0] != d
        or scal.shape[0] != _N_SCALARS
    ):
        return False
    coef = out[:d]
    coef[:] = 0.0
    if scal[_GSUM] != 0.0:
        lazy_mean(LazySum(u, base, corr), scal[_C], u[:0], 0.0, scal[_GSUM], coef)
    if rescale:
        for j in range(d):
            coef[j] = coef[j] / scale[j] if scale[j] > 0.0 else 0.0
    out[d] = 0.0
    return True


@jit
def _averaged_coef_at(at, rescale, keep, members):
    """:func:`_averaged_coef` of the arrays of the block at ``at``
    (:func:`aucstream._fastpath.block_call`): 1 when written, 0 when not; with a
    scorer's block at ``keep`` (0: none), fused with its keeping of the weights
    (:func:`aucstream._dict_scoring.weights_begin`: -2, -1 or the number kept)."""
    if keep != 0 and not weights_begin(keep, members):
        return -2
    a, s = ints_at(at, BLOCK_WIDTH), BLOCK_START
    written = _averaged_coef(
        floats_at(a[s], a[s + 1]),
        floats_at(a[s + 2], a[s + 3]),
        floats_at(a[s + 4], a[s + 5]),
        floats_at(a[s + 6], a[s + 7]),
        floats_at(a[s + 8], a[s + 9]),
        floats_at(a[s + 10], a[s + 11]),
        rescale,
    )
    if keep != 0:
        return weights_end(keep, members, written)
    return 1 if written else 0


def _bound_weights(learner: SOLAM, out: np.ndarray) -> tuple:
    """The averaged model of ``learner`` bound to ``out`` (``StateSpec.weights``; a
    function that also keeps a scorer's weights, ``keeps``)."""
    arrays = (learner.u_, learner.avg_base_, learner.avg_corr_, learner.scalars_, learner.scale_)
    fill = block_call(_averaged_coef_at, *arrays, out, late=(True, 0, 0))

    def fill_weights(learner: SOLAM, keep: int = 0, members: int = 0):
        done = fill(learner.column_scale == "max_abs", keep, members)
        return done if keep else done > 0

    fill_weights.keeps = True  # type: ignore[attr-defined]
    return fill_weights, ("u_", "avg_base_", "avg_corr_", "scalars_", "scale_")
