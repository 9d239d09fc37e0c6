"""The one-example step of :class:`~aucstream.preprocessing.OnlineStandardScaler`
(``partial_fit_transform_one``): the checks of a plainly valid row, the saving of the
columns it writes, the compiled pass of ``partial_fit_transform`` over it, and the
finiteness check, in one compiled call."""

from __future__ import annotations

import numpy as np

from .._chunks import _values_ok, sort_row
from .._kernels import jit
from .._kernels._packed import read_only
from ._standard_kernels import EVERY_ROW, _pass_csr, _pass_dense

__all__ = ["one_csr", "one_dense"]


@jit
def one_csr(idx, vals, out, stats, n_seen, options, learn, emit):
    """One dict row (``idx``, ``vals``: sorted here) transformed into ``out`` and learnt,
    when its indices lie inside the statistics without repeats, its values are plainly
    valid (:func:`aucstream._chunks._values_ok`), and the statistics and the output
    stay finite; else False, with the statistics as they were. ``learn`` and ``emit``
    are True, given by the caller: typed ``bool``, as in ``partial_fit_transform``'s
    pass (constants here would compile the pass again for their literal types)."""
    sort_row(idx, vals)
    count, means, m2s = stats
    k = idx.shape[0]
    if not _values_ok(vals):
        return False
    for a in range(k):
        if idx[a] < 0 or idx[a] >= means.shape[0] or (a > 0 and idx[a] <= idx[a - 1]):
            return False
    saved_count, saved_mean, saved_m2 = count[idx], means[idx], m2s[idx]
    _pass_csr(np.array([0, k]), idx, vals, out, stats, n_seen, options, learn, emit, EVERY_ROW)
    ok = True
    for a in range(k):
        j = idx[a]
        ok &= np.isfinite(means[j]) and np.isfinite(m2s[j]) and np.isfinite(out[a])
    if not ok:
        count[idx], means[idx], m2s[idx] = saved_count, saved_mean, saved_m2
    return ok


@jit
def one_dense(X, out, stats, n_seen, options, learn, emit):
    """:func:`one_csr` of one dense row (``X`` of shape (1, n_features))."""
    count, means, m2s = stats
    if not _values_ok(X[0]):
        return False
    saved_count, saved_mean, saved_m2 = count.copy(), means.copy(), m2s.copy()
    _pass_dense(read_only(X), out, stats, n_seen, options, learn, emit, EVERY_ROW)
    ok = True
    for j in range(means.shape[0]):
        ok &= np.isfinite(means[j]) and np.isfinite(m2s[j]) and np.isfinite(out[0, j])
    if not ok:
        count[:], means[:], m2s[:] = saved_count, saved_mean, saved_m2
    return ok
