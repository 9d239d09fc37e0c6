"""The prepared scoring of dict rows (``decision_one``, ``predict_one``,
``predict_proba_one``): :class:`OneScore`, a learner's buffers, kept weights and one
compiled call that reads the dict where it lies (:func:`aucstream._fastpath.read_dict`)
and scores it; the checks that the kept weights are still the learner's; the learner's
bound weights fused with their keeping (:func:`weights_begin`, :func:`weights_end`);
and the thread's last scorer (:data:`LAST_SCORER`).
"""

from __future__ import annotations

import ctypes
import sys
import threading
import weakref
from functools import partial
from operator import attrgetter, is_
from typing import Any

import numpy as np

from . import _fastpath
from ._chunks import score_packed_row
from ._fastpath import (
    _FLOAT64,
    BLOCK_START,
    BLOCK_WIDTH,
    address,
    block,
    dict_version,
    floats_at,
    ints_at,
    read_dict,
)
from ._kernels import compiled_entry, jit
from ._kernels._pyobjects import (
    DICT_VERSION_OFFSET,
    TYPE_OFFSET,
    dict_item,
    dict_next,
    dict_size,
)

#: What :func:`score_dict` returns when the kept weights are not the learner's.
STALE = float("inf")
#: What :func:`score_dict` returns, with ``proba``, when it wrote the probabilities
#: into the scorer's own array ``out`` because the one it hands out
#: (:attr:`OneScore.given`) is still held elsewhere (the caller then returns a copy of
#: ``out``); a probability written into ``given`` is returned as itself, in [0, 1].
IN_OUT = -1.0


def _refcount_offset() -> int:
    """The offset of an object's reference count (CPython's ``ob_refcnt``, the word
    before ``ob_type`` in the object header), checked on a live array: the count
    ``sys.getrefcount`` reports, one more for each new reference, and back when they
    go; -1 when it does not hold (another object layout, e.g. a free-threaded build),
    and every probability array is then a copy."""
    word = ctypes.sizeof(ctypes.c_ssize_t)
    at = TYPE_OFFSET - word
    if word != 8 or at < 0:
        return -1
    probe = np.empty(2)

    def read() -> int:
        return ctypes.c_int64.from_address(id(probe) + at).value

    before = read()
    if before != sys.getrefcount(probe) - 1:  # (getrefcount holds one of its own)
        return -1
    held = [probe, probe]
    more = read()
    del held
    return at if more == before + 2 and read() == before else -1


#: See :func:`_refcount_offset` (-1: none).
REFCOUNT_OFFSET = _refcount_offset()


@jit(inline="always")
def _held_elsewhere(obj):
    """Whether the object at address ``obj`` (an array a scorer holds, 0: none) has a
    reference besides the scorer's own (or can not be told)."""
    if REFCOUNT_OFFSET < 0 or obj == 0:
        return True
    return ints_at(obj + REFCOUNT_OFFSET, 1)[0] != 1


@jit(inline="always")
def _same_members(args, members):
    """Whether the dict at address ``members`` is the one of the block ``args``
    (:meth:`OneScore.bind`) and holds the objects whose addresses it kept, in order:
    where the interpreter versions its dicts, whether it has the version kept (no
    change of the dict since), else by comparing the addresses."""
    s = BLOCK_START
    if members != args[s + 11]:
        return False
    if DICT_VERSION_OFFSET >= 0:
        return dict_version(members) == args[s + 12]
    n = args[s + 10]
    kept = ints_at(args[s + 8], args[s + 9])
    walk = args[6:9]
    walk[0] = 0
    seen = 0
    while dict_next(members, walk):
        if seen >= n or walk[2] != kept[seen]:
            return False
        seen += 1
    return seen == n


@jit(inline="always")
def _keep_ids(args, members):
    """Keep in the block ``args`` the dict at address ``members`` with the addresses
    of its values, in order (:func:`_same_members` compares them; where the
    interpreter versions its dicts, its version instead): their number, or -1
    (nothing kept) when the block's array of addresses is too short."""
    s = BLOCK_START
    kept = ints_at(args[s + 8], args[s + 9])
    args[s + 11] = 0
    if DICT_VERSION_OFFSET >= 0:  # (the version is compared, not the addresses)
        n = dict_size(members)
        if n > kept.shape[0]:
            return -1
        args[s + 10] = n
        args[s + 11] = members
        args[s + 12] = dict_version(members)
        return n
    walk = args[6:9]
    walk[0] = 0
    n = 0
    while dict_next(members, walk):
        if n >= kept.shape[0]:
            return -1
        kept[n] = walk[2]
        n += 1
    args[s + 10] = n
    args[s + 11] = members
    return n


@jit
def keep_members(at, coef, intercept, members):
    """Keep in the block ``args`` (:meth:`OneScore.bind`) the weights ``coef`` (of
    the learner's width) and the ``intercept``, and the dict at address ``members``
    with the addresses of its values (:func:`_keep_ids`): their number, or -1 (no
    weights kept) when the block's array of addresses is too short."""
    args = ints_at(at, BLOCK_WIDTH)
    s = BLOCK_START
    args[s + 11] = 0
    weights = floats_at(args[s + 2], args[s + 3])
    if coef.shape[0] != weights.shape[0] - 1:
        return -1
    weights[:-1] = coef
    weights[-1] = intercept
    return _keep_ids(args, members)


@jit
def keep_filled(at, members):
    """:func:`keep_members` of weights already written into the block's array (by a
    learner's bound weights, :meth:`OneScore.read_weights`)."""
    return _keep_ids(ints_at(at, BLOCK_WIDTH), members)


#: The most state members whose objects a scorer's block names for a learner's
#: fused bound weights (:func:`weights_begin`: two values each).
HELD_PAIRS = 8


@jit(inline="always")
def weights_begin(keep, members):
    """The start of a learner's bound weights fused with the keeping of the scorer
    whose block is at ``keep`` (:meth:`OneScore.read_weights`; ``_bind_coef``):
    whether the ``__dict__`` at address ``members`` still holds, under the names
    the block's pairs name (the addresses of a name and of the object bound, 0
    after the last), the very objects the weights were bound to; if so the kept
    weights are forgotten (the caller then writes them into the block's array and
    ends with :func:`weights_end`)."""
    args = ints_at(keep, BLOCK_WIDTH)
    s = BLOCK_START
    pairs = ints_at(args[s + 13], args[s + 14])
    for i in range(0, pairs.shape[0] - 1, 2):
        if pairs[i] == 0:
            break
        if dict_item(members, pairs[i]) != pairs[i + 1]:
            return False
    args[s + 11] = 0
    return True


@jit(inline="always")
def weights_end(keep, members, written):
    """The end of :func:`weights_begin`'s call: the weights ``written`` into the
    block's array (else -1), kept with the dict at ``members`` (:func:`keep_filled`)."""
    if not written:
        return -1
    return _keep_ids(ints_at(keep, BLOCK_WIDTH), members)


@jit
def score_dict(at, proba, where):
    """:func:`aucstream._chunks.score_packed_row` of the dict at address ``where``
    read by :func:`read_dict` into the packed layout, with the arrays of the block
    ``args`` (:meth:`OneScore.bind`): the buffer, the weights and intercept, the
    calibration, the output. :data:`STALE` when no weights are kept or the kept
    learner's ``__dict__`` (the caller checks that it is the learner's:
    ``OneScore.members``) no longer holds the members kept with them, NaN when the
    row is refused.

    With ``proba``, the two probabilities go into the array the scorer hands out
    (:attr:`OneScore.given`) when nothing but the scorer holds it (its reference
    count, :data:`REFCOUNT_OFFSET`: the caller dropped the array of its last call, so
    no one can see it change), and the probability is returned; else into the
    scorer's ``out``, and :data:`IN_OUT` is returned (the caller copies ``out``)."""
    args = ints_at(at, BLOCK_WIDTH)
    s = BLOCK_START
    members = args[s + 11]
    if members == 0 or not _same_members(args, members):
        return STALE
    k = dict_size(where)
    size = args[s + 1]
    buffer, keys = floats_at(args[s], size), ints_at(args[s], size)
    if k < 0 or 2 * k > size:
        return np.nan
    if read_dict(where, args, keys[:k], buffer[k : 2 * k]) != k:
        return np.nan
    coef = floats_at(args[s + 2], args[s + 3])
    calibration = floats_at(args[s + 4], args[s + 5])
    if proba and not _held_elsewhere(args[s + 17]):
        given = floats_at(args[s + 15], args[s + 16])
        return score_packed_row(keys, buffer, coef, calibration, proba, given, k)
    out = floats_at(args[s + 6], args[s + 7])
    p = score_packed_row(keys, buffer, coef, calibration, proba, out, k)
    return IN_OUT if proba and p == p else p


def _held(members: dict) -> tuple:
    """The values of a learner's ``__dict__`` that a scorer holds with the addresses
    it keeps, so that none is reused while kept: none when the compiled check
    compares the dict's version instead (:func:`_same_members`; the scorer holds the
    dict itself)."""
    return () if DICT_VERSION_OFFSET >= 0 else tuple(members.values())


class LastScorer(threading.local):
    """The prepared scoring of dict rows (:class:`OneScore`) that the thread used
    last, as a weak reference (``ref``; the class attribute :func:`_no_scorer` in a
    thread that never scored one), so that a learner scoring many rows in a row
    finds its scorer without the lookups of its cache and of the thread's id: the
    caller checks that the scorer holds the learner's ``__dict__`` (``members``),
    which only the learner's own scorers of this thread can. The scorer is held by
    its learner's cache alone (weakly here), so it goes with the learner."""

    ref: Any = staticmethod(lambda: None)  # (none yet)


#: The thread's last scorer (:class:`LastScorer`).
LAST_SCORER = LastScorer()


#: The calibration of a learner without one (:func:`aucstream._chunks.score_packed_row`
#: then subtracts no threshold).
NO_CALIBRATION = np.zeros(0)


class OneScore:
    """A learner's prepared scoring of one dict row (``decision_one``,
    ``predict_one``, ``predict_proba_one``): a buffer of ``n_features`` keys and
    values, the weights and intercept (``coef``: ``_coef()`` then ``_intercept()``),
    and one compiled call at its entry point (:func:`score_dict`, bound to them and
    to the learner's calibration) that reads the dict into the buffer
    (:func:`read_dict`) and scores it (:func:`aucstream._chunks.score_packed_row`).

    The weights are kept from one call to the next while the learner's members are
    the very objects they were when they were read: the compiled call first compares
    the addresses of the learner's ``__dict__`` values with those kept (``ids``, in
    the dict's order, while ``values`` holds the objects so that no address is
    reused; where the interpreter versions its dicts, it compares the dict's version
    with the one kept instead, :data:`aucstream._kernels._pyobjects.DICT_VERSION_OFFSET`:
    the dict has not changed since) and returns :data:`STALE` when one differs. Every
    call that learns sets
    ``n_samples_seen_`` to a new value (a call undone puts back the members it had),
    ``fit`` makes new state objects and ``set_params`` new values, so any of them
    reads the weights again. (Writing into a state array from outside the library
    is not seen until one of those.) Without
    :data:`aucstream._fastpath.READS_DICTS` (read there at each use) the row is packed
    by :mod:`struct` (:func:`aucstream._chunks.pack_dict_pairs`) and the members
    compared in Python (:meth:`current`). The weights are read by the learner's
    bound weights when it binds them (``_bind_coef``, :meth:`_fill`), else by
    ``_coef()`` and ``_intercept()``. Kept in a :class:`aucstream._fastpath.FastCache`, one per
    thread, outside the learner's state; it holds the learner's ``__dict__`` and
    members, not the learner.

    ``predict_proba_one`` returns the scorer's array :attr:`given` itself when the
    compiled call could write into it, i.e. when nothing but the scorer held it (the
    caller dropped the array of its previous call, as a progressive loop does): a new
    array would cost as much as the rest of the call. An array the caller still holds
    (or a view of it) is never written again; the probabilities then go into ``out``
    and the caller gets a copy. (A weak reference does not hold it: an array referred
    to only weakly may be written again.)
    """

    __slots__ = (
        "__weakref__",
        "ref",
        "width",
        "buffer",
        "keys",
        "coef",
        "out",
        "given",
        "ids",
        "members",
        "values",
        "seen",
        "calibration",
        "calls",
        "keep",
        "keep_filled",
        "args",
        "at",
        "pairs",
        "filler",
    )

    def __init__(self, width: int):
        #: a weak reference to the scorer (:data:`LAST_SCORER` holds it)
        self.ref = weakref.ref(self)
        self.width = width
        #: the packed row (:func:`aucstream._chunks.pack_dict_pairs`): as float64
        #: (``buffer``) and as int64 (``keys``)
        self.buffer = np.zeros(2 * width)
        self.keys = self.buffer.view(np.int64)
        self.coef = np.zeros(width + 1)
        self.out = np.zeros(2)
        #: the array of probabilities that ``predict_proba_one`` returns: written
        #: again only once no one else holds it (:func:`score_dict`), else the
        #: probabilities go into ``out`` and the caller returns a copy
        self.given = np.zeros(2)
        #: the addresses of ``values`` (the compiled check of the members)
        self.ids = np.zeros(64, dtype=np.int64)
        #: the learner's ``__dict__`` and its values when ``coef`` was read
        self.members: Any = None
        self.values: tuple = ()
        #: ``values``' ``n_samples_seen_`` (None: not kept): every learning call
        #: sets a new one, so a learner whose count is another object has learnt
        #: since, and its scoring reads the weights again without asking the
        #: compiled check first
        self.seen: Any = None
        #: the calibration bound (``NO_CALIBRATION`` for none), and the bound calls
        #: (decision, probability)
        self.calibration: Any = None
        self.calls: Any = None
        #: the block of the compiled scoring's arrays (:func:`block`; kept with them),
        #: and :func:`keep_members` bound to it
        self.args: Any = None
        self.keep: Any = None
        self.keep_filled: Any = None
        #: the block's address (0: none yet)
        self.at = 0
        #: the addresses of the names and objects of the members the bound weights
        #: hold (:func:`weights_begin`; zeros after the last), in the block
        self.pairs = np.zeros(2 * HELD_PAIRS, dtype=np.int64)
        #: the learner's weights bound to ``coef`` (:meth:`_fill`): its ``__dict__``,
        #: the function that fills, a getter of the members it holds, those members,
        #: whether the function also keeps the weights (:meth:`read_weights`), their
        #: names and the function's ``scores`` (:meth:`refill_score`; None); or None
        self.filler: Any = None

    def current(self, members: dict) -> bool:
        """Whether the kept weights are those of the learner whose ``__dict__`` is
        ``members`` (:func:`score_dict` makes the same check compiled)."""
        return (
            members is self.members
            and len(members) == len(self.values)
            and all(map(is_, members.values(), self.values))
        )

    def forget(self) -> None:
        """Keep no weights (the next call reads them again)."""
        self.members, self.values, self.seen = None, (), None
        if self.args is not None:
            self.args[BLOCK_START + 11] = 0  # (no dict is at address 0)

    def bind(self, calibration: np.ndarray) -> None:
        """Bind the compiled scoring to ``calibration`` (a learner's ``calibration_``,
        or an empty array: no threshold): ``calls[proba](where)`` scores the dict at
        address ``where`` for the learner whose ``__dict__`` is :attr:`members`
        (the caller checks that: :func:`score_dict`) or, without
        :data:`~aucstream._fastpath.READS_DICTS`, ``calls[proba](k)`` the row of ``k``
        entries packed into ``buffer``. Forgets the weights."""
        self.forget()
        if _fastpath.READS_DICTS:
            # (then the kept dict's number of values, its address and version, and
            # the members the bound weights hold)
            # (and the array handed out, by its data and, to read its reference
            # count, as an object: 0 when the count can not be read)
            items = (self.buffer, self.coef, calibration, self.out, self.ids, 0, 0, 0)
            given = id(self.given) if REFCOUNT_OFFSET >= 0 else 0
            args = block(*items, self.pairs, self.given, given)
            at = self.at = address(args)  # (an int: numba unboxes an array argument slowly)
            entry = compiled_entry(score_dict, (at, True, 0))
            self.calls = (partial(entry, at, False), partial(entry, at, True))
            self.keep = partial(compiled_entry(keep_members, (at, self.coef[:-1], 0.0, 0)), at)
            self.keep_filled = partial(compiled_entry(keep_filled, (at, 0)), at)
            self.args = args
        else:
            packed = (self.keys, self.buffer, self.coef, calibration)
            entry = compiled_entry(score_packed_row, (*packed, True, self.out, 0))
            self.calls = (
                partial(entry, *packed, False, self.out),
                partial(entry, *packed, True, self.out),
            )
        self.calibration = calibration

    def read_weights(self, learner) -> bool:
        """Read the learner's weights and intercept into ``coef`` and keep them (see
        the class docstring); False (the usual path) when ``_coef()`` is not a
        float64 vector of the learner's width. Call :meth:`bind` first."""
        members = learner.__dict__
        filler = self.filler
        if (  # (the usual case, inline: the bound weights of the learner's __dict__)
            DICT_VERSION_OFFSET >= 0
            and _fastpath.READS_DICTS
            and filler is not None
            and filler[4]
            and filler[0] is members
        ):
            # one compiled call: the members' objects still those bound, the block's
            # weights forgotten, written and kept (else the way below)
            self.members, self.values, self.seen = None, (), None  # (forget)
            if filler[1](learner, self.at, id(members)) >= 0:
                self.members, self.seen = members, members.get("n_samples_seen_")
                return True
        self.forget()
        if _fastpath.READS_DICTS and self._fill(learner, members):
            # the objects held, then their addresses kept: no Python code between
            values = _held(members)
            if self.keep_filled(id(members)) < 0:  # a larger array, bound again
                self.ids = np.zeros(2 * len(members), dtype=np.int64)
                self.bind(self.calibration)
                values = _held(members)
                if self.keep_filled(id(members)) < 0:
                    return False
            return self._kept(members, values)
        coef = learner._coef()
        width = self.width
        if (
            type(coef) is not np.ndarray
            or coef.ndim != 1
            or coef.shape[0] != width
            or not (coef.dtype is _FLOAT64 or coef.dtype == _FLOAT64)
        ):
            return False
        if _fastpath.READS_DICTS:
            if not coef.flags.c_contiguous:  # (the compiled entry reads C arrays)
                coef = np.ascontiguousarray(coef)
            intercept = float(learner._intercept())
            # the objects held, then their addresses kept: no Python code between
            values = _held(members)
            if self.keep(coef, intercept, id(members)) < 0:  # a larger array, bound again
                self.ids = np.zeros(2 * len(members), dtype=np.int64)
                self.bind(self.calibration)
                values = _held(members)
                if self.keep(coef, intercept, id(members)) < 0:
                    return False
        else:
            self.coef[:width] = coef
            self.coef[width] = learner._intercept()
            values = tuple(members.values())
        return self._kept(members, values)

    def refill_score(self, learner, members: dict, where: int) -> float:
        """``calls[True](where)`` after :meth:`read_weights` of its usual case, for a
        learner whose ``__dict__`` (``members``) is the one kept and which learnt
        since (``predict_proba_one`` in a progressive loop; the caller has checked
        that the learner has a calibration): the learner's bound weights, which
        find the members they were bound to, write and keep the weights, then the
        scoring of the dict at address ``where``, both in one compiled call when the
        bound weights offer it (their ``scores``: ``scores(keep, members, proba,
        where)``), else in two. What :func:`score_dict` returns, or :data:`STALE`
        with no weights kept (the usual path reads them) when a check fails: those
        of ``_read_again`` first (the same calibration, width, no feature names)."""
        filler = self.filler
        if (
            filler is None
            or filler[0] is not members
            or DICT_VERSION_OFFSET < 0
            or members.get("calibration_") is not self.calibration
            or members.get("n_features_in_") != self.width
            or "feature_names_in_" in members
        ):
            return STALE
        seen = members.get("n_samples_seen_")
        scores = filler[6]  # (a filler that scores keeps: READS_DICTS)
        if scores is not None and seen is not None:
            # (the weights kept are forgotten by the call itself, before it writes
            # them: the scorer's members and count are set after it, either way)
            p = scores(self.at, id(members), True, where)
            if p != STALE:  # (kept: the probabilities, or NaN for a refused row)
                self.members, self.seen = members, seen
            else:
                self.members, self.values, self.seen = None, (), None  # (forget)
            return p
        if seen is None or not filler[4]:  # (a filler that keeps: READS_DICTS)
            return STALE
        self.members, self.values, self.seen = None, (), None  # (forget)
        if filler[1](learner, self.at, id(members)) < 0:
            return STALE
        self.members, self.seen = members, seen
        return self.calls[True](where)

    def _kept(self, members: dict, values: tuple) -> bool:
        """Keep the learner's ``__dict__`` and its values with the weights read."""
        self.members, self.values = members, values
        self.seen = members.get("n_samples_seen_")
        return True

    def _fill(self, learner, members: dict) -> bool:
        """Write the learner's weights and intercept into ``coef`` through its bound
        weights (``_bind_coef``, bound here once per state: again when a member it
        holds is no longer the learner's): True when written, False when the learner
        binds none (or they refused the state), for ``_coef()``."""
        filler = self.filler
        if (
            filler is None
            or filler[0] is not members
            or not all(map(is_, filler[2](learner), filler[3]))
        ):
            try:
                bound = learner._bind_coef(self.coef)
            except ValueError:  # (arrays a block does not hold: _coef() instead)
                bound = None
            if bound is None:
                self.filler = None
                return False
            fill, names = bound
            held = attrgetter(*names, names[0])  # (a tuple of them, even of one name)
            objects = held(learner)
            # a function that also keeps the weights: the block names the members
            keeps = getattr(fill, "keeps", False) and len(names) <= HELD_PAIRS
            keeps = keeps and _fastpath.READS_DICTS
            self.pairs[:] = 0
            if keeps:
                for i, (name, obj) in enumerate(zip(names, objects)):
                    self.pairs[2 * i : 2 * i + 2] = id(name), id(obj)
            # (and the weights fused with the scoring, when the function has it)
            scores = getattr(fill, "scores", None) if keeps else None
            filler = self.filler = (members, fill, held, objects, keeps, names, scores)
        return filler[1](learner)
