"""Bytes a class summary allocates, before allocating it (the memory-budget check).

:func:`summary_nbytes` counts the arrays a summary of each kind allocates when it is
created (for :class:`ExactSparseCovariance`, which grows with the stream, its initial
arrays), so that a learner refuses a state that cannot fit before touching anything
(``_state_nbytes``; see :mod:`aucstream._config`).
"""

from __future__ import annotations

import math

__all__ = ["summary_nbytes"]


def summary_nbytes(
    kind: str,
    n_features: int,
    sketch_size: int = 50,
    prune_slack: float = 0.1,
    itemsize: int = 8,
) -> int:
    """Bytes of the arrays of a new summary of the given kind (:func:`make_covariance`
    kinds, and "exact_sparse" for :class:`ExactSparseCovariance`).

    Parameters
    ----------
    kind : {"full", "randomized", "hash", "fd", "sparse", "exact_sparse"}
        The summary kind.
    n_features : int
        Dimension d.
    sketch_size : int, default=50
        tau (ignored by "full" and "exact_sparse").
    prune_slack : float, default=0.1
        The "sparse" summary's slack.
    itemsize : {8, 4}, default=8
        Bytes per value of the large array ("full": the d x d scatter; the sketches:
        the d x tau sketch): 4 for ``dtype=np.float32``.

    Returns
    -------
    int
        Bytes: O(d^2) for "full", O(d tau) for the sketches and "sparse", O(d) for
        "exact_sparse" (whose tables then grow with the co-occurring pairs).
    """
    from ._hashtable import index_size
    from ._sparse import _entries_at_cost, _reserve

    d, tau = int(n_features), int(sketch_size)
    common = 8 * (d + 1)  # sum_, count_
    weight = 8  # weight_: the total weight of the examples (every kind keeps it)
    if kind == "full":
        from ._full import PENDING_ROWS

        # scatter_, and the held-back rows pending_ with pending_weight_ and n_pending_
        return common + weight + itemsize * d * d + 8 * PENDING_ROWS * (d + 1) + 8
    if kind in ("randomized", "hash"):
        return common + weight + itemsize * d * tau + 8 * (tau * tau + tau)
    if kind == "fd":
        from ._fd_shrink import defer_capacity

        # sketch_, gram_, zs_, beta_, support_ (int64), seen_ (bool) and the five
        # one-entry arrays nfill_, frob_, n_shrinks_, n_support_, ss_; the deferred
        # shrinks' version_ (int64), defer_base_ and history (H + 1 entries of
        # defer_P_, defer_q_, defer_dw_, defer_dc_)
        cap = defer_capacity(d, tau)
        deferred = 8 + (8 * d + 8 * (cap + 1) * (tau * tau + 2 * tau + 1) if cap else 0)
        return (
            common + weight + itemsize * d * tau + 8 * (tau * tau + 2 * tau + d + 5) + d + deferred
        )

    def table(capacity: int) -> int:  # keys_, values_, index_ (int32), info_
        try:
            index = index_size(capacity)
        except MemoryError:  # no int32 index addresses it: counted, for the budget's message
            index = 2 * capacity
        return 16 * capacity + 4 * index + 24

    full = d * (d + 1) // 2
    if kind == "sparse":
        trigger = int(math.floor((1.0 + float(prune_slack)) * d * tau))
        return common + weight + table(min(full, _entries_at_cost(d, trigger) + _reserve()))
    if kind == "exact_sparse":
        return common + weight + table(min(64, full)) + 9 * d + 8
    raise ValueError(f"unknown summary kind {kind!r}")
