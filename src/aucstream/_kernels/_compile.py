r"""The compile policy: every compiled function of aucstream is made here.

Nothing outside :mod:`aucstream._kernels` calls numba's ``njit``, ``jit``,
``overload`` or ``intrinsic`` (``tests/test_style.py`` checks it): a kernel is
decorated with :func:`jit` (or one of the named variants below), so the options every
kernel must have — on-disk caching, and the rules of the functions compiled without
reference counting — are set in one place, and a reader finds the safety rules of raw
pointers and compiled entry points next to the helpers that use them.

The variants
------------
:func:`jit`
    ``numba.njit(cache=True, ...)``: the default. ``fastmath`` takes flag sets such as
    :data:`REASSOC`; ``inline="always"`` inlines the function into its callers at
    numba's IR level (a call that is not inlined costs a call and a reference count per
    array argument); ``inline="llvm"`` compiles it once and lets LLVM inline it (the
    same code, far less compile time for a large callee).
:func:`jit` with ``borrowing=True`` (:data:`borrowing_njit`)
    compiled without reference counting; see "Reference counts" below.
:func:`jit` with ``entry_only=True`` (:data:`compiled_step`, :data:`borrowing_step`)
    no Python or C wrapper: called from compiled code only, and faster to compile.
:func:`inline_overload`
    a numba ``overload`` of a Python stub, cached and inlined: one specialization per
    argument layout (dense rows or CSR rows, :mod:`aucstream._kernels._rows`).
:func:`intrinsic`
    LLVM code written by hand (:func:`pointer`, :func:`prefetch`).

Reference counts
----------------
Numba counts references to arrays with atomic increments and decrements: at every
call that is not inlined, at every slice (a sparse row's ``idx`` and ``val``), and at
every array bound to a variable of an inlined helper, which its pruning pass does not
all remove in a large kernel. Per example they cost about as much as the O(k tau) work
of OPAUC's low-rank step at small tau, and a large part of the time of SOLAM-l1 and
FSAUC with an active l1 ball (their throughput: ``benchmarks/bench_highdim.py`` and
``benchmarks/bench_linear.py``, reported in docs/benchmarks.md). Kernels that allocate
nothing (every array, scratch included, is owned by the caller, who outlives the call)
are therefore compiled without them (numba's ``_nrt=False``, the option numba uses for
its own string helpers). A kernel that needs scratch allocates it in a thin wrapper
that calls its borrowing loop (:func:`aucstream._adaoam_step._adaoam_chunk`,
:func:`aucstream.oam._oam_chunk`, OPAUC's ``_opauc_chunk``, the scaler's
``_pass_dense``): at 10 to 20 features those loops ran about twice as fast so. A
counted kernel that walks with a helper returning its pointers and taking the arrays
(``(score, i, g, q) = step(a, i, gone, g, new, q)``) ran about 40 times slower than
the same loop written out (:func:`aucstream._sorted_pairs._down`). Why this is safe,
precisely (numba's behaviour, checked by ``tests/test_covariance_nrt.py``):

- A function compiled without reference counting passes that setting on to every
  jitted function it calls that does not set it (numba's flag inheritance), and numba
  refuses, at compile time, any allocation in such code and any returned array that is
  not one of the arguments. So these functions and their callees cannot allocate, hence
  cannot leak memory; they only read and write the arrays of their arguments (and views
  of them, alive only during the call), whose owner outlives the call.
- Reference counts are then never touched inside them, so none is left unbalanced: a
  learner's arrays keep their reference counts across calls.
- The hazard is a jitted function that returns arrays (a view, an argument, a bundle)
  and is reached both from code without reference counting and from code with it, with
  the same argument types: numba keeps one compiled version per signature, and if the
  one compiled without reference counting serves a caller that counts, that caller
  releases references that were never taken (a use-after-free). Hence the rules: a
  borrowing function returns no array (numbers and tuples of numbers only); a helper
  that returns arrays and is reached from both kinds of code is inlined into its
  callers (``inline="always"``: :func:`aucstream.covariance.own_and_opposite`,
  :func:`aucstream._kernels.row`), so no compiled version of it is shared; and no
  :data:`compiled_step` function (which may return arrays) is called from a borrowing
  one.

The policy enforces these rules itself, whenever numba compiles a new version of a
function made here (numba's ``numba:compile`` event; :func:`check_compiled`): a
version compiled without reference counting (borrowing, or called from borrowing code)
that returns an array and is not inlined, or that calls a function that returns an
array and is not inlined, is refused with a :class:`BorrowingRuleError` naming both,
before numba uses or caches it. So every version compiled anywhere (in the tests, from
a cold cache: each one once) has been checked, and ``tests/test_covariance_nrt.py``
checks the leaks and reference counts of the learners and that this check refuses
what it must.

Sums
----
With :data:`REASSOC`, LLVM vectorizes a float sum (four lanes of partial sums, added
at the end): a different order than the scalar loop's, a different rounding. A loop
that sums *and writes to an array* is compiled twice, vectorized and scalar, with a
check at run time that picks the scalar one when two of its arrays start within
``VF * UF`` elements of each other (they could overlap): 128 bytes with AVX2. Small
arrays allocated one after the other are that close or not depending on
the allocator's history, so such a loop's sum would change in its last bits with
where the arrays happen to lie: a learner's result would depend on what the process
did before (seen: FSAUC's ``||v_1||^2`` one bit apart on 12 features). Hence the rule:
under reassociation, a loop that writes to an array does not also sum floats (its
sums go in a pass that only reads, :func:`aucstream._saddle.rebase`), unless every
array it touches spans at least :data:`SAME_ORDER_BYTES` (then no two non-overlapping
ones start that close; :func:`aucstream.covariance._full.upper_matvec` takes a loop
that only reads below it). Integer sums are exact in any order and need no care.
The test run checks the LLVM code of every kernel it compiles
(:func:`sums_behind_overlap_checks`, in ``tests/conftest.py``), and
``tests/test_memory_layout.py`` that learners give the same bits wherever their
arrays lie.

Flags
-----
A jitted function that does not set ``fastmath`` takes the setting of the jitted
function that first calls it (numba's flag inheritance, as for reference counts), and
numba keeps that one version per signature for every later caller and in its cache. A
helper called from kernels with and without reassociation was thus compiled one way or
the other depending on which kernel the process (or the cache) compiled first, and its
floats with it (seen: ``aucstream._kernels.lazy_mean``, SOLAM's averaged model, took
either version depending on the order in which learners were first used). So
:func:`jit` always sets ``fastmath`` (``False`` included, which numba then does not
override): each function's arithmetic is its own declaration, whoever calls it. The
helpers that ran with their callers' reassociation declare it (:data:`REASSOC`), so
their floats are the ones they had when called from those kernels. (Functions inlined
at numba's IR level, ``inline="always"``, are compiled inside their callers, with the
callers' flags.)

Raw pointers and compiled entry points
--------------------------------------
Two devices skip numba's per-call work, and both move a check from numba to us:

- :func:`compiled_entry` / :func:`bound_call` call a compiled overload at its entry
  point, without numba's typing of the arguments (for a named tuple, more than a
  one-row kernel's work).
  The entry point reads its arguments as the types it was compiled for: bind only
  objects that every call reuses (arrays written in place, named tuples of them,
  numbers), so their types can not change.
- :func:`pointer` turns an integer address into a pointer (the flat copies and checks
  of a learner's state, :class:`aucstream._state.FlatState`, one compiled call for
  every array). The addresses must be those of arrays the caller keeps alive and
  checks, before each use, to still be the ones it walked.

Numba does not bounds-check: whatever reaches a kernel has been checked before (the
chunk checks of :mod:`aucstream._chunks`, the one-row loads of
:mod:`aucstream._fastpath`, the state checks of a loaded model).
"""

from __future__ import annotations

import os
import re
import warnings
import weakref
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, Literal

import numba as nb
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core import event as numba_event
from numba.core.errors import NumbaIRAssumptionWarning
from numba.extending import intrinsic, overload

__all__ = [
    "REASSOC",
    "SAME_ORDER_BYTES",
    "BorrowingRuleError",
    "check_compiled",
    "CompileRule",
    "sums_behind_overlap_checks",
    "jit",
    "borrowing_njit",
    "borrowing_step",
    "compiled_step",
    "inline_overload",
    "intrinsic",
    "compiled_entry",
    "kernels_cached",
    "bound_call",
    "pointer",
    "float_of_bits",
    "bits_of_float",
    "plain",
    "prefetch",
    "prefetch_span",
]

# Compiling a kernel that inlines sparse_dot / sparse_axpy (or prefetch_row_of) more
# than once can trip a pedantic check of numba's SSA pass ("variable
# '_sparse_dot__locals__..._acc_2.1' is not in scope ... please report"): the inlined
# loop's variables are renamed per copy. The compiled code is right (the kernels equal
# their references in the tests); only this message, naming our inlined helpers, is
# silenced, so users do not see it at the first (compiling) call.
warnings.filterwarnings(
    "ignore",
    message=r"variable '_(sparse_dot|sparse_axpy|prefetch_row_of)__locals__",
    category=NumbaIRAssumptionWarning,
)

#: numba ``fastmath`` flags of kernels whose sums may be evaluated in any order: only
#: reassociation (no FMA contraction, no finite-math or signed-zero assumptions), so
#: that LLVM vectorizes the dense dot products and norms. The result changes by
#: rounding only; a step that adds an exact zero still changes nothing.
REASSOC = {"reassoc"}

#: Arrays spanning at least this many bytes can not start close enough to each other
#: for LLVM's run-time overlap check to pick a loop's scalar version over its vector
#: one (``VF * UF`` elements: 128 bytes with AVX2, 256 with AVX-512; twice that, to
#: spare): see "Sums" in the module docstring.
SAME_ORDER_BYTES = 512


def jit(
    fn: Callable | None = None,
    /,
    *,
    fastmath: bool | set = False,
    inline: str = "never",
    borrowing: bool = False,
    entry_only: bool = False,
    error_model: str = "python",
) -> Any:
    """Compile ``fn`` with numba under the library's policy (cached on disk).

    Used bare (``@jit``) or with options (``@jit(inline="always")``).

    Parameters
    ----------
    fn : callable, optional
        The function; without it, a decorator is returned.
    fastmath : bool or set of str, default=False
        numba's ``fastmath`` (the library uses :data:`REASSOC` and flag sets of its own),
        always passed to numba, so that no caller's setting is inherited ("Flags" in
        the module docstring).
    inline : {"never", "always", "llvm"}, default="never"
        ``"always"``: inline into compiled callers at numba's IR level (the callee is
        typed again, and its IR copied, at every call site). ``"llvm"``: compiled once
        per signature by numba, then inlined by LLVM into each caller (LLVM's
        ``alwaysinline``; numba's ``forceinline``): the code of ``"always"`` at a
        fraction of its compile time, for a large callee whose call costs (in a
        loop) must not be paid. Such a callee keeps its own ``fastmath`` (set it to
        its callers'), and the functions it calls inherit ``forceinline``.
    borrowing : bool, default=False
        Compile without reference counting (see "Reference counts" in the module
        docstring): the function must allocate nothing and return no array.
    entry_only : bool, default=False
        No Python or C wrapper: the function is called from compiled code only.
    error_model : {"python", "numpy"}, default="python"
        numba's ``error_model``: ``"python"`` checks every float division for a zero
        divisor (raising ``ZeroDivisionError``), a branch per division that keeps a
        loop from vectorizing; ``"numpy"`` divides as IEEE 754 does. For a kernel
        whose divisors are never zero (its docstring says why), the same floats.

    Returns
    -------
    numba dispatcher, or a decorator making one
    """
    # fastmath always set, False included: a function that leaves it unset takes its
    # first caller's (numba's flag inheritance), and numba keeps that one version per
    # signature for every later caller, and in its cache ("Flags" in the docstring)
    options: dict[str, Any] = {"cache": True, "fastmath": fastmath, "error_model": error_model}
    if inline == "llvm":
        options["forceinline"] = True
    elif inline != "never":
        options["inline"] = inline
    if borrowing:
        options["_nrt"] = False
    if entry_only:
        options["no_cpython_wrapper"] = True
        options["no_cfunc_wrapper"] = True
    decorate = nb.njit(**options)
    if fn is None:

        def decorator(f: Callable) -> Any:
            return _made_here(decorate(f))

        return decorator
    return _made_here(decorate(fn))


# ------------------------------------------------ sums behind run-time overlap checks
_DEFINE = re.compile(r"^define [^@]*@(\"[^\"]+\"|[\w$.]+)", re.M)
_FLOAT_VECTOR_PHI = re.compile(r"= phi (?:[a-z]+ )*<\d+ x (?:double|float)>")


def _qualname(symbol: str) -> str:
    """The dotted path a numba symbol (``_ZN9aucstream5solam...``) names."""
    parts, k = [], symbol.find("_ZN")
    if k < 0:
        return symbol
    k += 3
    while k < len(symbol) and symbol[k].isdigit():
        j = k
        while j < len(symbol) and symbol[j].isdigit():
            j += 1
        n = int(symbol[k:j])
        parts.append(symbol[j : j + n])
        k = j + n
    return ".".join(parts) or symbol


def sums_behind_overlap_checks(llvm_ir: str) -> list[str]:
    """The functions of ``llvm_ir`` (a compiled library's LLVM IR) that break the rule
    of "Sums" (module docstring): a vectorized loop behind a run-time overlap check
    (LLVM's ``vector.memcheck`` block) whose vector body carries a float vector phi (a
    sum), as dotted names.
    """
    found = []
    defines = list(_DEFINE.finditer(llvm_ir))
    for m, after in zip(defines, [*defines[1:], None]):
        body = llvm_ir[m.start() : after.start() if after else len(llvm_ir)]
        k = body.find("\nvector.memcheck")
        while k >= 0:
            end = body.find("\nmiddle.block", k)
            if _FLOAT_VECTOR_PHI.search(body, k, end if end > 0 else len(body)):
                found.append(_qualname(m.group(1)))
                break
            k = body.find("\nvector.memcheck", k + 1)
    return found


# ------------------------------------------------ the reference-count rules, enforced
class BorrowingRuleError(TypeError):
    """A compiled version breaks the rules of the functions compiled without
    reference counting (module docstring, "Reference counts")."""


#: the dispatchers made by :func:`jit`: the ones whose compiled versions are checked
_MADE: weakref.WeakSet = weakref.WeakSet()


def _made_here(dispatcher):
    _MADE.add(dispatcher)
    return dispatcher


def _holds_array(t) -> bool:
    if isinstance(t, types.Array):
        return True
    return any(_holds_array(u) for u in getattr(t, "types", ()) if u is not t)


def _inlined(dispatcher) -> bool:
    return getattr(dispatcher, "targetoptions", {}).get("inline") == "always"


def _name(dispatcher) -> str:
    fn = dispatcher.py_func
    return f"{fn.__module__}.{fn.__qualname__}"


def check_compiled(dispatcher, cres) -> str | None:
    """Why the compiled version ``cres`` of ``dispatcher`` (a function made by
    :func:`jit`) breaks the rules of "Reference counts" (module docstring), or None.

    A version compiled without reference counting (the function's own ``borrowing``
    option, or inherited from a borrowing caller) must not return an array unless the
    function is inlined into its callers, and must not call a function that returns
    an array unless that one is inlined: numba keeps one version per signature, and a
    version without reference counts that serves a caller with them (or the reverse)
    releases references never taken (or takes references never released).
    """
    if cres.target_context.enable_nrt:
        return None
    sig = cres.signature
    if _holds_array(sig.return_type) and not _inlined(dispatcher):
        return (
            f"{_name(dispatcher)}{tuple(sig.args)} is compiled without reference "
            f"counting and returns {sig.return_type}: a borrowing function returns no "
            "array, and a helper returning arrays that borrowing code calls must be "
            "inlined (inline='always')"
        )
    typemap = cres.fndesc.typemap
    for expr, call in cres.fndesc.calltypes.items():
        func = getattr(expr, "func", None) if getattr(expr, "op", None) == "call" else None
        callee = typemap.get(func.name) if func is not None else None
        if not isinstance(callee, types.Dispatcher) or call is None:
            continue
        if _holds_array(call.return_type) and not _inlined(callee.dispatcher):
            return (
                f"{_name(dispatcher)}{tuple(sig.args)} is compiled without reference "
                f"counting and calls {_name(callee.dispatcher)}, which returns "
                f"{call.return_type} and is not inlined: make the callee "
                "inline='always', or return no array from it"
            )
    return None


class CompileRule(numba_event.Listener):
    """A rule checked on each version numba compiles (or loads from its cache) of a
    function made by :func:`jit`: subclasses define :meth:`check`, called after the
    compilation with the dispatcher and the version (numba's compile event)."""

    def on_start(self, event) -> None:
        pass

    def on_end(self, event) -> None:
        dispatcher = event.data["dispatcher"]
        if dispatcher not in _MADE:
            return
        cres = dispatcher.overloads.get(tuple(event.data["args"]))
        if cres is not None:  # (None: the compilation failed)
            self.check(dispatcher, cres)

    def check(self, dispatcher, cres) -> None:
        """Raise when ``cres``, a version of ``dispatcher``, breaks the rule."""
        raise NotImplementedError


class _ReferenceCountRule(CompileRule):
    """Checks each version numba compiles of a function made by :func:`jit`
    (:func:`check_compiled`); a version breaking the rules is dropped, before numba
    caches it, and the compilation raises :class:`BorrowingRuleError`."""

    def __init__(self) -> None:
        self.checked = 0

    def check(self, dispatcher, cres) -> None:
        self.checked += 1
        problem = check_compiled(dispatcher, cres)
        if problem is not None:
            dispatcher._reset_overloads()  # a later call compiles, and is refused, again
            raise BorrowingRuleError(problem)


#: the listener, registered once for the process (numba's compile event)
REFERENCE_COUNT_RULE = _ReferenceCountRule()
numba_event.register("numba:compile", REFERENCE_COUNT_RULE)


#: Decorator of the compiled functions that only borrow arrays: they read and write
#: arrays their caller holds, allocate nothing and return no array (module docstring).
borrowing_njit = jit(borrowing=True)
#: The same for functions called only from compiled code (the per-example steps): no
#: Python wrapper, which is also faster to compile.
borrowing_step = jit(borrowing=True, entry_only=True)
#: A function called only from compiled code that may allocate or return arrays.
compiled_step = jit(entry_only=True)


def inline_overload(stub: Callable, *, inline: Literal["always", "never"] = "always") -> Callable:
    """Decorator: the decorated typer is numba's implementation of ``stub`` (a Python
    function that raises when called from Python), cached and inlined (``inline``
    ``"never"`` for an overload too large to inline)."""
    options: Any = {"cache": True}  # numba's stubs do not list "cache"
    return overload(stub, jit_options=options, inline=inline)


def register_overload(stub: Callable, typer: Callable) -> None:
    """``typer`` (a function of the argument types returning an implementation, or
    None to decline) as one more numba overload of ``stub``, not inlined."""
    overload(stub)(typer)


@intrinsic
def pointer(typingctx, address, dtype):
    """The integer ``address`` as a pointer to values of ``dtype`` (a numba type).

    Only for addresses of arrays the caller keeps alive (module docstring)."""
    target = dtype.dtype if isinstance(dtype, types.NumberClass) else dtype
    sig = types.CPointer(target)(address, dtype)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(signature.return_type))

    return sig, codegen


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


@jit(inline="always")
def prefetch_span(array, start, nbytes):
    """:func:`prefetch` every cache line of the ``nbytes`` bytes of ``array``'s data
    from byte ``start``: one every 64 bytes and the last byte's (a span that does not
    begin on a line's boundary reaches one line further than probes every 64 bytes from
    its start do: a row of 400 bytes spans 7 or 8 lines)."""
    for b in range(0, nbytes, 64):
        prefetch(array, start + b)
    prefetch(array, start + nbytes - 1)


@intrinsic
def float_of_bits(typingctx, b):
    """The float64 whose bits are the int64 ``b`` (a bit cast, compiled code only)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@intrinsic
def bits_of_float(typingctx, x):
    """The int64 with the bits of the float64 ``x`` (a bit cast, compiled code only).

    Non-negative floats order as their bits do, and an integer minimum vectorizes
    where a float minimum (without finite-math flags) does not.
    """

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


@intrinsic
def plain(typingctx, x):
    """``x`` as a value of its plain type (``int64`` for the constant ``0``).

    A constant passed from compiled code to a jitted function types as a literal
    (``Literal[int](0)``), and numba then compiles a version of that function for the
    literal (for a large kernel, seconds, and for each value), even when it has one for
    ``int64``; passed through ``plain``, it takes the function's usual version.
    """
    ty = types.unliteral(x)

    def codegen(context, builder, signature, args):
        return context.cast(builder, args[0], x, ty)

    return ty(x), codegen


def compiled_entry(kernel, args: tuple):
    """The entry point of ``kernel``'s compiled overload for the types of ``args``
    (compiled, or loaded from the cache, as a call would), or the dispatcher itself
    when numba does not expose it.

    The entry point takes its arguments without numba's typing, so each call must
    pass values of exactly these types (``typeof`` of an array includes its dtype,
    number of dimensions, layout, and whether it is read-only and aligned): a value
    of another type is read as if it had them. Resolving costs numba's typing in
    Python (per array argument, and far more for a named tuple): do it once, not per
    call.
    """
    try:
        arg_types = tuple(map(kernel.typeof_pyval, args))
        found = kernel.overloads.get(arg_types)
        entry = kernel.compile(arg_types) if found is None else found.entry_point
    except AttributeError:  # pragma: no cover - a numba without these members
        return kernel
    return entry if callable(entry) else kernel


def bound_call(kernel, *args, reuse: bool = False, late: tuple = ()):
    """``kernel(*args)`` as a function of no arguments (of ``len(late)`` arguments:
    ``kernel(*args, *values)``, see ``late`` below).

    With ``reuse`` (a function that will be called many times with the same
    objects), the call skips numba's dispatch: a numba dispatcher types every
    argument at every call, and typing a named tuple was most of a one-row call of
    SOLAM (``bound_update_us`` against ``dispatched_update_us`` in
    ``benchmarks/bench_base.py``, reported in docs/benchmarks.md). The compiled
    overload for these arguments' types is resolved once here (:func:`compiled_entry`),
    and its entry point is called directly with the same objects, whose types can not
    change. So bind only objects that each call reuses (arrays written in place,
    named tuples of them, numbers). Without ``reuse``, or when numba does not expose
    the overload's entry point, the call goes through the dispatcher.

    ``late`` holds example values of the arguments that each call passes after
    ``args`` (values read when called, e.g. a count of the state that is a Python
    int): the overload is resolved for their types, so each call must pass values
    of the same types.
    """
    entry = compiled_entry(kernel, (*args, *late)) if reuse else kernel
    return partial(entry, *args)


def kernels_cached(dispatchers: Iterable) -> bool | None:
    """Whether numba's on-disk cache holds an index for at least one of ``dispatchers``
    (functions made by :func:`jit`): False on a first run (nothing compiled yet in this
    cache location, so the first call compiles), None when numba's cache layout can not
    be read (then nothing is claimed either way). Reads only file names."""
    try:
        return any(os.path.exists(d._cache._cache_file._index_path) for d in dispatchers)
    except AttributeError:  # pragma: no cover - another numba's cache layout
        return None
