"""The compiled hold of :meth:`aucstream.StreamPipeline.learn_one` for a dict row.

A fitted pipeline holds the rows of ``learn_one`` in its queue (``queue_*``, the
module docstring of :mod:`aucstream.pipeline`, "One example at a time"): each row is
scaled by the online scaler at once and written into the queue as CSR. In Python
that costs a dozen calls per example (the dict packed, the scaler's checks, its
compiled one-row step, the queue's writes), more than the estimator's own learning of
the row in its chunk. :class:`DictHold` makes it one compiled call,
:func:`hold_dict`: the dict is read where it lies (:func:`aucstream._fastpath.read_dict`)
into the queue's free slots, checked, sorted, scaled and learnt by the scaler's
one-row step (:func:`aucstream.preprocessing._standard_one.one_csr`, the same
arithmetic as ``partial_fit_transform``, so the same bits), and counted into the
queue. A row it refuses leaves the scaler and the queue as they were (the free slots
put back to zeros), and the pipeline takes the row the way it takes any other.

It serves a pipeline whose transformer is exactly an
:class:`~aucstream.preprocessing.OnlineStandardScaler` that does not center (sparse
rows), on an interpreter whose dicts compiled code can read
(:data:`aucstream._fastpath.READS_DICTS`). The arrays are bound once, by address, in
one block (:func:`aucstream._fastpath.block_call`); a call checks that the pipeline
and the scaler still hold those very arrays, writeable, and the same parameter objects
(else it binds again), as the per-example entry of the learners does
(:mod:`aucstream._runtime._entry`). The queue is cut at :data:`QUEUE_FULL` by the
pipeline (:meth:`~aucstream.StreamPipeline._catch_up`), and whatever a row refused
by the kernel is, the usual path takes it and names what is wrong.
"""

from __future__ import annotations

from operator import attrgetter, is_

import numba as nb
import numpy as np

from ._fastpath import (
    BLOCK_START,
    BLOCK_WIDTH,
    READS_DICTS,
    ByIdentity,
    block_call,
    floats_at,
    ints_at,
    param_values,
    read_dict,
    validate_params_once,
)
from ._kernels import float_of_bits, jit, pointer
from ._kernels._pyobjects import dict_size
from .preprocessing._standard_kernels import _Options, _Stats
from .preprocessing._standard_one import one_csr

__all__ = ["QUEUE_FULL", "DictHold", "dict_hold"]

#: What :func:`hold_dict` returns when the queue must be learnt first: it holds rows of
#: the other layout, or no room for this one after them.
QUEUE_FULL = -2

#: The pipeline's queue arrays, and the scaler's running statistics, as the block
#: holds them (in this order).
_QUEUE = attrgetter("queue_", "queue_indptr_", "queue_indices_", "queue_data_", "queue_labels_")
_RUNNING = attrgetter("running_count_", "running_mean_", "running_m2_")
_DTYPES = (np.int64, np.int64, np.int64, np.float64, np.int8, np.int64, np.float64, np.float64)


@jit
def hold_dict(at, where, positive, n_seen):
    """Hold the dict at address ``where`` (held by the caller) as the next row of the
    queue, scaled: the block at ``at`` (:meth:`DictHold.bind`) names the queue's
    arrays (``queue_``, ``queue_indptr_``, ``queue_indices_``, ``queue_data_``,
    ``queue_labels_``), the scaler's running statistics and its options; ``positive``
    (0 or 1) is the row's label, ``n_seen`` the scaler's ``n_samples_seen_``.

    Returns the row's number of entries; :data:`QUEUE_FULL` (nothing changed) when the
    queue holds rows it can not join; -1 (nothing changed) when the row is refused:
    a dict :func:`~aucstream._fastpath.read_dict` does not read, an index outside the
    features or repeated, a value that is not plainly valid, statistics or a scaled
    value that would not stay finite (:func:`one_csr`), or a queue whose count is
    out of its arrays' range (the usual path's check names it)."""
    b = ints_at(at, BLOCK_WIDTH)
    s = BLOCK_START
    queue = ints_at(b[s], 2)
    indptr = ints_at(b[s + 2], b[s + 3])
    indices = ints_at(b[s + 4], b[s + 5])
    data = floats_at(b[s + 6], b[s + 7])
    labels = nb.carray(pointer(b[s + 8], nb.int8), b[s + 9])
    stats = _Stats(ints_at(b[s + 10], b[s + 11]), floats_at(b[s + 12], b[s + 13]),
                   floats_at(b[s + 14], b[s + 15]))  # fmt: skip
    options = _Options(b[s + 16] != 0, b[s + 17] != 0, float_of_bits(b[s + 18]),
                       float_of_bits(b[s + 19]))  # fmt: skip
    rows, capacity = queue[0], data.shape[0]
    if rows < 0 or rows >= indptr.shape[0] or (rows == 0) != (queue[1] == 0):
        return -1
    start = indptr[rows]
    if start < 0 or start > capacity:
        return -1
    k = dict_size(where)
    if rows > 0 and (rows == labels.shape[0] or queue[1] != 2 or k > capacity - start):
        return QUEUE_FULL
    if k > capacity - start:
        return -1
    keys, values = indices[start : start + k], data[start : start + k]
    if read_dict(where, b, keys, values) != k or not one_csr(
        keys, values, values, stats, n_seen, options, True, True
    ):
        keys[:] = 0  # (the free slots hold zeros: StreamPipeline._catch_up)
        values[:] = 0.0
        return -1
    indptr[rows + 1] = start + k
    labels[rows] = positive
    queue[0], queue[1] = rows + 1, 2
    return k


class DictHold:
    """:func:`hold_dict` bound to one pipeline's queue and scaler (module docstring)."""

    __slots__ = ("call", "arrays", "params", "scaler", "scaler_params", "classes", "labels")

    def __init__(self, pipeline, scaler, arrays: tuple) -> None:
        options = scaler._options()
        self.call = block_call(
            hold_dict,
            *arrays,
            int(options.centered),
            int(options.scaled),
            int(np.float64(options.clip).view(np.int64)),
            int(np.float64(options.decay).view(np.int64)),
            late=(0, 0, 0),
        )
        self.arrays = arrays
        self.params = param_values(pipeline)
        self.scaler = scaler
        self.scaler_params = param_values(scaler)
        classes = self.classes = pipeline.classes_
        # the labels compared in Python: of the classes' own kind only, whose
        # comparisons are numpy's (the pipeline's checks take any other kind)
        kinds = {
            "b": (bool, np.bool_),
            "i": (int, np.int64),
            "u": (int, np.int64),
            "f": (float, np.float64),
        }
        kind = kinds.get(classes.dtype.kind, ())
        self.labels = (kind, *classes.tolist()) if classes.shape == (2,) else ((), 0, 0)

    def hold(self, pipeline, x: dict, y) -> bool:
        """Hold ``x`` with label ``y`` (True), or False with nothing changed when the
        compiled hold does not take the call as it is (the pipeline's usual checks
        then do)."""
        kind, negative, positive = self.labels
        if type(x) is not dict or type(y) not in kind:  # (the kernel reads a dict only)
            return False
        if y == positive:
            label = 1
        elif y == negative:
            label = 0
        else:
            return False
        scaler = self.scaler
        seen = scaler.n_samples_seen_
        if type(seen) is not int:
            return False
        got = self.call(id(x), label, seen)
        if got == QUEUE_FULL:
            pipeline._catch_up()  # (its own transaction: a refused catch-up changes nothing)
            if not self.current(pipeline):
                return False
            got = self.call(id(x), label, seen)
        if got < 0:
            return False
        scaler.n_samples_seen_ = seen + 1
        pipeline.n_samples_seen_ += 1
        return True

    def current(self, pipeline) -> bool:
        """Whether the pipeline and its scaler still hold what the block names: the
        same arrays and parameter objects (their dtypes, shapes and writeability were
        checked when bound; as for the learners' per-example entry, an array made
        read-only in place later is not looked at again)."""
        scaler = pipeline.__dict__.get("transformer_")
        return (
            scaler is self.scaler
            and pipeline.__dict__.get("classes_") is self.classes
            and scaler.__dict__.get("with_mean_") is False
            and all(map(is_, (*_QUEUE(pipeline), *_RUNNING(scaler)), self.arrays))
            and all(map(is_, param_values(pipeline), self.params))
            and all(map(is_, param_values(scaler), self.scaler_params))
        )


#: The bound holds, per pipeline (kept outside its state, as the fast path's caches).
_HOLDS = ByIdentity()


def dict_hold(pipeline) -> DictHold | None:
    """The pipeline's :class:`DictHold`, bound now if it has none or it is stale; None
    when the compiled hold can not serve it (see the module docstring)."""
    hold = _HOLDS.get(pipeline)
    if hold is not None and hold.current(pipeline):
        return hold
    from .preprocessing import OnlineStandardScaler

    scaler = pipeline.__dict__.get("transformer_")
    if not READS_DICTS or type(scaler) is not OnlineStandardScaler:
        return None
    if scaler.__dict__.get("with_mean_") is not False or "n_samples_seen_" not in scaler.__dict__:
        return None
    validate_params_once(pipeline)
    validate_params_once(scaler)
    try:
        arrays = (*_QUEUE(pipeline), *_RUNNING(scaler))
    except AttributeError:
        return None
    for a, dtype in zip(arrays, _DTYPES):
        if not (
            type(a) is np.ndarray
            and a.dtype == dtype
            and a.ndim == 1
            and a.flags.c_contiguous
            and a.flags.writeable
        ):
            return None
    queue, indptr, indices, data, labels, count, means, m2s = arrays
    if (
        queue.shape[0] != 2
        or indptr.shape[0] != labels.shape[0] + 1
        or indices.shape[0] != data.shape[0]
        or not count.shape[0] == means.shape[0] == m2s.shape[0] == pipeline.n_features_in_
    ):
        return None
    hold = _HOLDS[pipeline] = DictHold(pipeline, scaler, arrays)
    return hold
