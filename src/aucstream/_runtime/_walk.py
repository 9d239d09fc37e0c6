"""The walk's check of the per-example entry, compiled
(:class:`aucstream._runtime._entry.OneStep`): whether the state's containers still hold
the objects the fast path's walk found (:func:`_walk_table`, :func:`_walk_current`), at
once when the dicts' versions say that nothing changed (:func:`_unchanged`,
:func:`_keep_versions`), and whether the copies of the components' dicts serve again
(:func:`_components_unchanged`).
"""

from __future__ import annotations

import numpy as np

from .._fastpath import dict_version
from .._kernels import jit
from .._kernels._pyobjects import DICT_VERSION_OFFSET, dict_item, dict_size, list_item, list_size

#: The walk's table when the walk is checked in Python (:func:`_walk_table`).
_NO_WALK = np.zeros(0, dtype=np.int64)


def _walk_table(flat) -> np.ndarray | None:
    """The walk's check (``flat.current``: the state's containers hold the objects
    walked, by identity, and have the sizes walked) as one int64 table for
    :func:`_walk_current`: per container its address, 0 (a dict) or 1 (a list), its
    size and number of entries, then per entry the key's address (a dict's) or the
    index (a list's) and the value's address. The walk holds every object named.
    None when a container is not exactly a dict or a list (the check stays in
    Python)."""
    table: list[int] = []
    for container, size, keys, values in flat._records:
        if type(container) is dict:
            kind, names = 0, [id(k) for k in keys]
        elif type(container) is list:
            kind, names = 1, list(keys)
        else:
            return None
        table += [id(container), kind, size, len(values)]
        for key, value in zip(names, values):
            table += [key, id(value)]
    return np.array(table, dtype=np.int64)


def _versions_for(walk: np.ndarray | None) -> np.ndarray:
    """The versions :func:`_unchanged` compares for the walk's table ``walk``: one
    per container (-1: none kept yet; a list's stays -1, its items are compared
    instead) when the interpreter versions its dicts and a container is a dict,
    else an empty array."""
    if walk is None or DICT_VERSION_OFFSET < 0:
        return _NO_WALK
    kinds, i = [], 0
    while i < walk.shape[0]:
        kinds.append(int(walk[i + 1]))
        i += 4 + 2 * int(walk[i + 3])
    if not kinds or all(kinds):  # (lists alone: nothing versioned)
        return _NO_WALK
    return np.full(len(kinds), -1, dtype=np.int64)


@jit(inline="always")
def _unchanged(walk, versions):
    """Whether ``versions`` (one per container of the table ``walk``: an empty
    array when none is a dict) are the dicts' versions now, none of them changed
    since :func:`_keep_versions` kept them, at the end of a call whose check passed,
    and every list (a list has no version: the state's list of components) has the
    size and holds the objects the walk names."""
    if not versions.shape[0]:
        return False
    i, c = 0, 0
    while i < walk.shape[0]:
        container, n = walk[i], walk[i + 3]
        if walk[i + 1] == 0:
            if dict_version(container) != versions[c]:
                return False
        elif list_size(container) != walk[i + 2]:
            return False
        else:
            for e in range(n):
                if list_item(container, walk[i + 4 + 2 * e]) != walk[i + 5 + 2 * e]:
                    return False
        i += 4 + 2 * n
        c += 1
    return True


@jit(inline="always")
def _keep_versions(walk, versions):
    """Keep the versions of the dicts of ``walk`` in ``versions`` (when it is not
    empty: :func:`_unchanged`)."""
    if not versions.shape[0]:
        return
    i, c = 0, 0
    while i < walk.shape[0]:
        if walk[i + 1] == 0:
            versions[c] = dict_version(walk[i])
        i += 4 + 2 * walk[i + 3]
        c += 1


@jit(inline="always")
def _components_unchanged(walk, starts):
    """Whether the dicts of the walk's table ``walk`` but its first (the learner's
    ``__dict__``, written at each call) have the versions ``starts`` (one per
    container, kept when their copies were made; empty: never); if not, ``starts``
    takes their versions now (the caller copies them anew). A dict's version changes
    at every change of the dict (CPython's global counter), so equal versions mean
    that the copies hold what the dicts hold."""
    if not starts.shape[0]:
        return False
    i, c, same = 0, 0, True
    while i < walk.shape[0]:
        if c > 0 and walk[i + 1] == 0 and dict_version(walk[i]) != starts[c]:
            same = False
        i += 4 + 2 * walk[i + 3]
        c += 1
    if same:
        return True
    i, c = 0, 0
    while i < walk.shape[0]:
        if c > 0 and walk[i + 1] == 0:
            starts[c] = dict_version(walk[i])
        i += 4 + 2 * walk[i + 3]
        c += 1
    return False


@jit(inline="always")
def _walk_current(walk, versions):
    """Whether the containers of the table ``walk`` (:func:`_walk_table`) hold the
    objects and have the sizes it names (the walk's check, compiled): at once when
    none of them changed since the end of the last call whose check passed
    (:func:`_unchanged`)."""
    if _unchanged(walk, versions):
        return True
    i = 0
    while i < walk.shape[0]:
        container, kind, size, n = walk[i], walk[i + 1], walk[i + 2], walk[i + 3]
        i += 4
        if (dict_size(container) if kind == 0 else list_size(container)) != size:
            return False
        for _ in range(n):
            key = walk[i]
            found = dict_item(container, key) if kind == 0 else list_item(container, key)
            if found != walk[i + 1]:
                return False
            i += 2
    return True


@jit
def _walk_check(walk, versions):
    """:func:`_walk_current` as a call of its own (:attr:`OneStep.early`)."""
    return _walk_current(walk, versions)
