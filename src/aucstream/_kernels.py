r"""Small compiled pieces shared by the learners' kernels, written once.

Every per-example kernel reads a row as ``(idx, val)``: the column indices and values
of one CSR row (``indices[lo:hi]``, ``data[lo:hi]``). The helpers here are the only
sparse dot product and sparse axpy in the package.

Lazily scaled weights
---------------------
Several learners shrink their whole weight vector at every step (an L2 penalty, a
projection onto an l2 ball) but change only the k non-zeros of the current example
otherwise. They keep :math:`w = \sigma u` with a scalar :math:`\sigma`, so that the
shrinkage costs O(1) and a step costs O(k): adding :math:`c\,x` to w adds
:math:`(c/\sigma)\,x` to u. The scale is folded into u (an O(d) pass, after which
:math:`\sigma = 1`) as soon as it leaves [``SCALE_MIN``, ``SCALE_MAX``], before the
entries of u can overflow or underflow (:func:`scale_in_range`, :func:`fold_scale`).

Learners that also average their iterates (SOLAM, FSAUC) keep the running sum
:math:`S = \sum_s \gamma_s w_s` in the lazy form

.. math::

    S = \mathrm{base} + c\,u - \mathrm{corr},

a :class:`LazySum`, with a scalar :math:`c` (the sum of :math:`\gamma_s\sigma_s` since
the last fold). Adding the current iterate to S is ``c += gamma * sigma``; changing u
by :math:`\Delta u` adds :math:`c\,\Delta u` to ``corr``, so S does not change
(:func:`lazy_axpy`). A fold (:func:`aucstream._saddle.rebase`) moves :math:`c\,u - \mathrm{corr}`
into ``base`` and then may replace u freely. This form has a price: when
:math:`\sigma` has fallen by a factor f since the last fold, the entries of u written
since then are f times larger than those of w, :math:`c\,u` and ``corr`` grow with
them and cancel in S, which loses about :math:`\log_{10} f` digits. So the averaging
learners fold already when :math:`\sigma` falls below ``AVERAGE_SCALE_MIN`` (1e-4:
at most 4 digits lost, while the scale range alone would allow 9), and every
``FOLD_EVERY`` examples, which bounds the round-off of the norms they maintain
incrementally (:func:`fold_due`). All these rules depend only on the stream, not on
how it is cut into chunks, so any chunking gives bit-identical models.

Reference counts
----------------
Numba counts references to arrays with atomic increments and decrements: at every
call that is not inlined, at every slice (a sparse row's ``idx`` and ``val``), and at
every array bound to a variable of an inlined helper, which its pruning pass does not
all remove in a large kernel. On SOLAM-l1 and FSAUC with an active l1 ball they took
a third of the time. Their chunk kernels allocate nothing (every array, scratch
included, is owned by the caller, who outlives the call), so they are compiled
without reference counting (numba's ``_nrt=False``, which refuses to compile an
allocation), under the rules of the covariance kernels (``borrowing_njit`` in
``aucstream.covariance._base``): nothing they call returns an array unless it is
inlined (``row``), so no compiled version that skips the counts serves a caller that
keeps them. ``tests/test_covariance_nrt.py`` checks this and that they leak nothing.
"""

from __future__ import annotations

import warnings
from collections import namedtuple
from functools import partial

import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.errors import NumbaIRAssumptionWarning
from numba.extending import intrinsic, overload

# Compiling a kernel that inlines sparse_dot / sparse_axpy (below) more than once can
# trip a pedantic check of numba's SSA pass ("variable '_sparse_dot__locals__..._acc_2.1'
# is not in scope ... please report"): the inlined loop's accumulator is renamed per
# copy. The compiled code is right (the kernels equal their references in the tests);
# only this message, naming our inlined helpers, is silenced, so users do not see it
# at the first (compiling) call.
warnings.filterwarnings(
    "ignore",
    message=r"variable '_sparse_(dot|axpy)__locals__",
    category=NumbaIRAssumptionWarning,
)

__all__ = [
    "AVERAGE_SCALE_MIN",
    "FOLD_EVERY",
    "LazySum",
    "Rows",
    "SCALE_MAX",
    "SCALE_MIN",
    "fold_due",
    "fold_scale",
    "lazy_mean",
    "lazy_axpy",
    "col",
    "count_nonzero",
    "n_rows",
    "row",
    "rows_of",
    "scale_in_range",
    "sparse_axpy",
    "sparse_dot",
    "squared_norm",
]

#: Lazily scaled weights ``w = sigma * u`` fold sigma into u (an O(d) pass) when sigma
#: leaves [SCALE_MIN, SCALE_MAX], before u's entries can lose precision or overflow.
SCALE_MIN, SCALE_MAX = 1e-9, 1e9
#: Averaging learners (a :class:`LazySum`) fold when sigma falls below this, to bound
#: the cancellation in their running sum, and every FOLD_EVERY examples.
AVERAGE_SCALE_MIN = 1e-4
FOLD_EVERY = 1 << 16

#: The lazy running sum ``S = base + c * u - corr`` of iterates ``w = sigma * u``
#: (three float64 arrays of length d; the scalars c and sigma live with the learner).
LazySum = namedtuple("LazySum", ["u", "base", "corr"])


#: A chunk's rows and their +1/-1 labels, as one kernel argument: CSR arrays
#: (``indptr``, ``indices``, ``data``), or for dense input ``indptr = indices = None``
#: and ``data`` the C-contiguous 2-D array itself (read in place, no copy).
Rows = namedtuple("Rows", ["indptr", "indices", "data", "y"])


def rows_of(chunk) -> Rows:
    """The :class:`Rows` of an :class:`aucstream._chunks.Chunk`."""
    return Rows(chunk.indptr, chunk.indices, chunk.data, chunk.y)


# Dense and sparse rows through one set of helpers. Each helper below is a numba
# overload: the stub is what Python sees, and numba compiles one specialization for
# sparse rows (``idx`` an index array) and one for dense rows (``idx`` None, ``val``
# the whole row), so a kernel written with them runs on both layouts, and the dense
# specialization reads contiguous memory that LLVM can vectorize. The helpers are
# inlined into the kernels (a call that is not inlined costs ~40 ns per row).
def _is_none(t) -> bool:
    return isinstance(t, (types.NoneType, types.Omitted)) or t is None


def row(rows, r):
    """Row ``r`` of ``rows`` as ``(idx, val, y)``; ``idx`` is None for dense rows."""
    raise NotImplementedError("row() is compiled inside kernels only")


@overload(row, jit_options={"cache": True}, inline="always")
def _row(rows, r):
    if _is_none(rows.types[1]):
        return lambda rows, r: (None, rows.data[r], rows.y[r])

    def sparse(rows, r):
        lo, hi = rows.indptr[r], rows.indptr[r + 1]
        return rows.indices[lo:hi], rows.data[lo:hi], rows.y[r]

    return sparse


@nb.njit(cache=True)
def n_rows(rows):
    """Number of rows of ``rows``."""
    return rows.y.shape[0]


def col(idx, a):
    """The column of the ``a``-th stored value of a row (``a`` itself for dense rows)."""
    raise NotImplementedError("col() is compiled inside kernels only")


@overload(col, jit_options={"cache": True}, inline="always")
def _col(idx, a):
    if _is_none(idx):
        return lambda idx, a: a
    return lambda idx, a: idx[a]


def sparse_dot(dense, idx, val):
    r""":math:`a \cdot x` for the dense vector a and the row x given by ``idx``, ``val``.

    ``idx`` None: the row is dense.
    """
    raise NotImplementedError("sparse_dot() is compiled inside kernels only")


@overload(sparse_dot, jit_options={"cache": True}, inline="always")
def _sparse_dot(dense, idx, val):
    if _is_none(idx):

        def dense_dot(dense, idx, val):
            acc = 0.0
            for a in range(val.shape[0]):
                acc += dense[a] * val[a]
            return acc

        return dense_dot

    def sparse_dot(dense, idx, val):
        acc = 0.0
        for a in range(idx.shape[0]):
            acc += dense[idx[a]] * val[a]
        return acc

    return sparse_dot


def sparse_axpy(dense, coef, idx, val):
    """``dense += coef * x`` for the row ``x`` given by ``idx``, ``val`` (``idx`` None: dense)."""
    raise NotImplementedError("sparse_axpy() is compiled inside kernels only")


@overload(sparse_axpy, jit_options={"cache": True}, inline="always")
def _sparse_axpy(dense, coef, idx, val):
    if _is_none(idx):

        def dense_axpy(dense, coef, idx, val):
            for a in range(val.shape[0]):
                dense[a] += coef * val[a]

        return dense_axpy

    def sparse_axpy(dense, coef, idx, val):
        for a in range(idx.shape[0]):
            dense[idx[a]] += coef * val[a]

    return sparse_axpy


@nb.njit(cache=True)
def squared_norm(val):
    """``||x||^2`` of a row from its stored values."""
    acc = 0.0
    for a in range(val.shape[0]):
        acc += val[a] * val[a]
    return acc


# ------------------------------------------------------------------ lazy scaling
@nb.njit(cache=True)
def scale_in_range(sigma):
    """Whether the implicit scale may stay as it is (SCALE_MIN <= |sigma| <= SCALE_MAX)."""
    return SCALE_MIN <= abs(sigma) <= SCALE_MAX


@nb.njit(cache=True)
def fold_due(sigma, count):
    """Whether an averaging learner folds: sigma below AVERAGE_SCALE_MIN or above
    SCALE_MAX, or ``count`` a multiple of FOLD_EVERY."""
    return not (AVERAGE_SCALE_MIN <= abs(sigma) <= SCALE_MAX) or count % FOLD_EVERY == 0


@nb.njit(cache=True)
def fold_scale(u, sigma):
    """``u *= sigma`` (w = sigma u is unchanged once sigma is reset); returns the new 1.0."""
    for i in range(u.shape[0]):
        u[i] *= sigma
    return 1.0


@nb.njit(cache=True)
def lazy_mean(lz, c, center, sum_tau, count, out):
    r"""``out = S / count`` with :math:`S = (\sum\tau) v_1 + \mathrm{base} + c u - \mathrm{corr}`.

    ``center`` may be empty (no :math:`v_1` term).
    """
    u, base, corr = lz
    has_center = center.shape[0] > 0
    for i in range(u.shape[0]):
        total = base[i]
        if has_center:
            total = sum_tau * center[i] + total
        out[i] = (total + c * u[i] - corr[i]) / count


@nb.njit(cache=True)
def lazy_mean_of(u, base, corr, c, center, sum_tau, count, out):
    """:func:`lazy_mean` for Python callers, with the lazy sum's arrays as plain
    arguments (numba types a named tuple argument in about 2 us a call)."""
    lazy_mean(LazySum(u, base, corr), c, center, sum_tau, count, out)


# ------------------------------------------------ dense products, weights, merging
#: numba ``fastmath`` flags of kernels whose sums may be evaluated in any order: only
#: reassociation (no FMA contraction, no finite-math or signed-zero assumptions), so
#: that LLVM vectorizes the dense dot products and norms. The result changes by
#: rounding only; a step that adds an exact zero still changes nothing.
REASSOC = {"reassoc"}


@nb.njit(cache=True, fastmath=REASSOC, inline="always")
def lazy_axpy(u, corr, c, coef, idx, val, nrm2, nrm1):
    r"""``u += coef * x`` leaving the running sum unchanged (``corr += c * coef * x``).

    The row x is sparse (``idx``, ``val``) or dense (``idx`` None); a dense row's zeros
    change nothing. Returns :math:`\|u\|_2^2` and :math:`\|u\|_1`, updated from the
    changed entries (the learners that need the number of non-zeros count it
    themselves, :func:`aucstream._saddle.l1_change`). Inlined into the kernels (a call
    costs a reference count per array).
    """
    for a in range(val.shape[0]):
        i = col(idx, a)
        du = coef * val[a]
        old = u[i]
        new = old + du
        u[i] = new
        corr[i] += c * du
        nrm2 += new * new - old * old
        nrm1 += abs(new) - abs(old)
    return nrm2, nrm1


@nb.njit(cache=True)
def count_nonzero(u):
    """The number of non-zeros of ``u``."""
    n = 0
    for i in range(u.shape[0]):
        n += u[i] != 0.0
    return n


def mean_by_count(a, n_a, b, n_b):
    """``(n_a a + n_b b) / (n_a + n_b)``: how two learners' points combine in ``merge``.

    ``a`` and ``b`` are numbers or arrays of the same shape, ``n_a`` and ``n_b`` the
    examples each has seen (not both 0). Two points of a convex set combine into a
    point of that set (a ball, a box), so a merged iterate stays feasible.
    """
    total = n_a + n_b
    return (n_a / total) * a + (n_b / total) * b


# ----------------------------------------------------- class weights under sample_weight
# Learners that estimate class rates or class weights from counts (SOLAM, FSAUC,
# UnivariateOnline) count the examples learnt per class in integer arrays (as in model
# files of aucstream 0.1) and the weights learnt per class in two float scalars,
# ``weight_neg_`` and ``weight_pos_``. Files written before the scalars existed (where
# every weight was 1) get them from the counts when loaded (``upgrade_class_totals``).
def start_class_totals(learner) -> None:
    """No weight learnt yet: ``weight_neg_ = weight_pos_ = 0``."""
    learner.weight_neg_ = learner.weight_pos_ = 0.0


def class_totals(learner, out: np.ndarray | None = None) -> np.ndarray:
    """``[W-, W+]``, the weights learnt per class, as a new float64 array (or written
    into ``out``, float64 of 2, and returned)."""
    if out is None:
        return np.array([learner.weight_neg_, learner.weight_pos_], dtype=np.float64)
    out[0], out[1] = learner.weight_neg_, learner.weight_pos_
    return out


def store_class_totals(learner, totals) -> None:
    """Keep ``[W-, W+]`` (as updated by a kernel) in the learner's scalars."""
    learner.weight_neg_, learner.weight_pos_ = float(totals[0]), float(totals[1])


# ------------------------------------------------------------ calls with bound arguments
def bound_call(kernel, *args, reuse: bool = False, late: tuple = ()):
    """``kernel(*args)`` as a function of no arguments (of ``len(late)`` arguments:
    ``kernel(*args, *values)``, see ``late`` below).

    With ``reuse`` (a function that will be called many times with the same
    objects), the call skips numba's dispatch: a numba dispatcher types every
    argument at every call, and a named tuple costs about 2 us to type (a one-row
    call of SOLAM spent 6 of its 7 us there). The compiled overload for these
    arguments' types is resolved once here (:func:`compiled_entry`), and its entry
    point is called directly with the same objects, whose types can not change. So
    bind only objects that each call reuses (arrays written in place, named tuples
    of them, numbers). Without ``reuse``, or when numba does not expose the
    overload's entry point, the call goes through the dispatcher.

    ``late`` holds example values of the arguments that each call passes after
    ``args`` (values read when called, e.g. a count of the state that is a Python
    int): the overload is resolved for their types, so each call must pass values
    of the same types.
    """
    entry = compiled_entry(kernel, (*args, *late)) if reuse else kernel
    return partial(entry, *args)


def compiled_entry(kernel, args: tuple):
    """The entry point of ``kernel``'s compiled overload for the types of ``args``
    (compiled, or loaded from the cache, as a call would), or the dispatcher itself
    when numba does not expose it.

    The entry point takes its arguments without numba's typing, so each call must
    pass values of exactly these types (``typeof`` of an array includes its dtype,
    number of dimensions, layout, and whether it is read-only and aligned): a value
    of another type is read as if it had them. Resolving costs about 25 us per array
    argument and 0.4 ms for a named tuple (numba's typing in Python).
    """
    try:
        types = tuple(map(kernel.typeof_pyval, args))
        found = kernel.overloads.get(types)
        entry = kernel.compile(types) if found is None else found.entry_point
    except AttributeError:  # pragma: no cover - a numba without these members
        return kernel
    return entry if callable(entry) else kernel


def upgrade_class_totals(learner, counts) -> None:
    """A file of aucstream 0.1 learnt every example with weight 1: totals = counts."""
    store_class_totals(learner, np.asarray(counts, dtype=np.float64))


def check_class_totals(learner, counts) -> None:
    """A loaded ``weight_neg_``/``weight_pos_`` must be finite, >= 0, and positive
    exactly for the classes with examples learnt (``counts``). Raises ValueError."""
    for name, count in (("weight_neg_", counts[0]), ("weight_pos_", counts[1])):
        value = getattr(learner, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{name} is not a number: {value!r}")
        if not (value >= 0.0 and value < float("inf")) or (value > 0.0) != (count > 0):
            raise ValueError(f"{name} = {value!r} does not fit {int(count)} examples learnt")


@intrinsic
def prefetch(typingctx, array, offset):
    """Ask the processor to bring the byte ``offset`` of ``array``'s data into the cache.

    A hint (LLVM's ``llvm.prefetch``, read, high locality): it reads nothing and can
    not fault, whatever the offset, so it needs no bounds check. Kernels that visit
    rows of a large array at addresses known one example ahead use it to overlap the
    memory latency of the next example with the arithmetic of the current one.
    """
    sig = types.void(array, offset)

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        byte = ir.IntType(8).as_pointer()
        address = builder.gep(builder.bitcast(data, byte), [args[1]])
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [byte, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
        builder.call(fn, [address, i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


@nb.njit(cache=True, inline="always")
def prefetch_rows(array, idx):
    """:func:`prefetch` rows ``idx`` of ``array`` (axis 0), every cache line of each."""
    step = array.strides[0]
    for q in range(idx.shape[0]):
        start = idx[q] * step
        for b in range(0, step, 64):
            prefetch(array, start + b)
