"""Compiled code of aucstream: the compile policy and the pieces kernels share.

- :mod:`._compile` — the one place numba is told to compile anything (:func:`jit` and
  its variants), with the safety rules of the functions compiled without reference
  counting, of raw pointers and of compiled entry points;
- :mod:`._rows` — a chunk's rows as kernels read them (dense in place or CSR), and the
  only sparse dot product and axpy of the package;
- :mod:`._lazy` — lazily scaled weights and lazy running sums (a step costs O(k) for k
  non-zeros), and the class weights of weighted streams.
"""

from ._compile import (
    REASSOC,
    bits_of_float,
    borrowing_njit,
    borrowing_step,
    bound_call,
    compiled_entry,
    compiled_step,
    float_of_bits,
    inline_overload,
    intrinsic,
    jit,
    pointer,
    prefetch,
    register_overload,
)
from ._lazy import (
    AVERAGE_SCALE_MIN,
    FOLD_EVERY,
    SCALE_MAX,
    SCALE_MIN,
    LazySum,
    check_class_totals,
    class_totals,
    fold_due,
    fold_scale,
    lazy_axpy,
    lazy_mean,
    lazy_mean_of,
    mean_by_count,
    scale_in_range,
    start_class_totals,
    store_class_totals,
    upgrade_class_totals,
)
from ._rows import (
    Rows,
    col,
    count_nonzero,
    is_none_type,
    n_rows,
    prefetch_rows,
    row,
    rows_of,
    sparse_axpy,
    sparse_dot,
    squared_norm,
)

__all__ = [
    "AVERAGE_SCALE_MIN",
    "FOLD_EVERY",
    "REASSOC",
    "SCALE_MAX",
    "SCALE_MIN",
    "LazySum",
    "Rows",
    "borrowing_njit",
    "borrowing_step",
    "bits_of_float",
    "bound_call",
    "check_class_totals",
    "class_totals",
    "col",
    "compiled_entry",
    "compiled_step",
    "count_nonzero",
    "float_of_bits",
    "fold_due",
    "fold_scale",
    "inline_overload",
    "intrinsic",
    "is_none_type",
    "jit",
    "lazy_axpy",
    "lazy_mean",
    "lazy_mean_of",
    "mean_by_count",
    "n_rows",
    "pointer",
    "prefetch",
    "prefetch_rows",
    "register_overload",
    "row",
    "rows_of",
    "scale_in_range",
    "sparse_axpy",
    "sparse_dot",
    "squared_norm",
    "start_class_totals",
    "store_class_totals",
    "upgrade_class_totals",
]
