"""Saving and loading learners without pickle.

A model file is a numpy ``.npz`` archive: every state array of the learner (and of its
components such as covariance summaries and reservoirs) is one entry, and the entry
``__meta__`` is a JSON document with the format name and version, the aucstream
version, the learner's class name and parameters, its scalar state and the exact
state of its random generator. Loading uses ``allow_pickle=False`` and only
instantiates aucstream's own learner and component classes, so a model file cannot
run code. A loaded learner continues its stream exactly where the saved one stopped.

Saving is atomic: the archive is written to a temporary file in the target's
directory, flushed to disk, then renamed over the target, so a crash or a kill during
a save leaves either the old file or the new one, never a truncated mix.

Loading trusts nothing in the file. Before any array is read, its header is checked
against the state that a fresh learner with the file's parameters allocates (member
names, dtype, shape; buffers that grow with the stream are bounded by the memory
budget), so a damaged or crafted file cannot make a kernel read or write outside its
arrays, nor inflate a small file into a huge allocation; counters and indices are then
checked by the learner's and components' ``_check_state``. Any problem is a
``ValueError`` naming the file and the member.

Sparse arrays
-------------
A large array that is mostly zeros (at least :data:`SPARSE_MIN_SIZE` elements, at
least 90% of them zero) is stored as its non-zeros: the entry ``{"kind": "sparse",
"shape": [...], "dtype": "<f8"}`` and the members ``PATH.indices`` (the flat C-order
positions of the non-zero elements, strictly increasing, in the smallest of ``int16``,
``int32``, ``int64`` that holds them) and
``PATH.values`` (their values, of the array's dtype). FTRL-AUC's weights and its
``z, sqrt(n)`` accumulators on a wide sparse stream, SPAM's and SOLAM-l1's weights are
such arrays: the file then grows with the non-zeros, not with ``d``. "Zero" means all
bits zero, so a ``-0.0`` is kept as a value and the array comes back bit for bit.
The decision is made from the array's content at save time: no learner declares it.
Loading checks the declared shape and dtype against the fresh learner's state as for
a dense array, charges the dense size to the memory budget, and refuses indices that
are not integers, not strictly increasing or outside the array, and values of another
dtype or count.

Format history
--------------
1
    First version.
2
    Sparse entries (above). A file is written with the lowest version that holds it:
    a file without sparse entries is still version 1, readable by older versions.
3
    The entry ``"reading"`` of ``__meta__``: how the command line read the file the
    model learnt from, ``{"index_base": 0}`` for a LIBSVM file read 0-based (issue
    34: ``aucstream score`` and ``predict`` then read their files 0-based too, where
    they read a file without an index 0 1-based and shifted every column). Written
    only for such a model; any other key or value is refused.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import re
import tokenize
import zipfile
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _state
from ._config import format_bytes, get_config
from ._files import atomic_write
from ._json import to_jsonable

if TYPE_CHECKING:  # pragma: no cover
    from ._base import BaseStreamingAUC

__all__ = [
    "save_model",
    "load_model",
    "model_file",
    "model_reading",
    "atomic_write",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "SPARSE_MIN_SIZE",
]

FORMAT_NAME = "aucstream-model"
FORMAT_VERSION = 3
#: Arrays of at least this many elements are stored sparse when at least
#: :data:`_SPARSE_ZEROS` of them are zero (all bits zero: ``-0.0`` is a value).
SPARSE_MIN_SIZE = 4096
#: The share of zero elements from which a large array is stored sparse.
_SPARSE_ZEROS = 0.9
#: Largest metadata document a model file may hold (bytes).
_META_LIMIT = 16 << 20


@functools.cache
def _import_learner_modules() -> None:
    """Import every learner module (once: walking the package is most of a small load)."""
    from ._discovery import all_estimators

    all_estimators()


def _allowed_classes() -> dict[str, type]:
    from ._base import BaseStreamingAUC
    from ._streaming_auc import PrequentialAUC, RollingAUC
    from .covariance import CovarianceSummary
    from .drift import AUCDriftDetector, DriftDetector, RankSignal
    from .preprocessing import OnlineStandardScaler
    from .reservoir import Reservoir

    _import_learner_modules()  # so that every learner's class is a registered subclass
    found: dict[str, type] = {}
    stack = [
        BaseStreamingAUC,
        CovarianceSummary,
        Reservoir,
        OnlineStandardScaler,
        PrequentialAUC,
        RollingAUC,
        DriftDetector,  # a search's watch (OnePassSearch(drift=...))
        AUCDriftDetector,
        RankSignal,
    ]
    while stack:
        cls = stack.pop()
        if cls.__module__.startswith("aucstream"):
            found[cls.__name__] = cls
        stack.extend(cls.__subclasses__())
    return found


def _estimator_entry(value: Any) -> dict:
    """An aucstream estimator given as a parameter (a meta-learner's candidates, a
    pipeline's steps): its class name and its own parameters."""
    if hasattr(value, "get_params") and type(value).__module__.startswith("aucstream"):
        return {"__estimator__": type(value).__name__, "params": value.get_params(deep=False)}
    raise TypeError(f"cannot store a value of type {type(value).__name__} in a model file")


def _plain(value: Any) -> Any:
    """JSON-compatible form of a parameter or scalar value: the exact rule of
    :func:`aucstream._json.to_jsonable` (non-finite floats kept, floats read back bit
    for bit), estimators as :func:`_estimator_entry`."""
    return to_jsonable(value, exact=True, default=_estimator_entry)


def _nonzero_bits(array: np.ndarray) -> np.ndarray | None:
    """The flat positions of the elements of ``array`` whose bits are not all zero,
    when ``array`` is large, C-contiguous, numeric and at least 90% zero; else None."""
    if (
        array.size < SPARSE_MIN_SIZE
        or array.dtype.kind not in "fiub"
        or array.dtype.itemsize not in (1, 2, 4, 8)
        or not array.flags.c_contiguous
    ):
        return None
    bits = array.reshape(-1).view(f"u{array.dtype.itemsize}")
    where = np.flatnonzero(bits)
    if where.size > (1.0 - _SPARSE_ZEROS) * array.size:
        return None
    for kind in (np.int16, np.int32):  # the smallest that holds every position
        if array.size - 1 <= np.iinfo(kind).max:
            return where.astype(kind)
    return where.astype(np.int64)


def _encode(value: Any, path: str, arrays: dict[str, np.ndarray], allowed: dict) -> dict:
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            value = value.astype(str)
        where = _nonzero_bits(value)
        if where is not None:
            arrays[f"{path}.indices"] = where
            arrays[f"{path}.values"] = value.reshape(-1)[where]
            return {"kind": "sparse", "shape": list(value.shape), "dtype": value.dtype.str}
        arrays[path] = value
        return {"kind": "array"}
    if isinstance(value, np.random.Generator):
        bitgen = value.bit_generator
        return {
            "kind": "rng",
            "bit_generator": type(bitgen).__name__,
            "state": _plain(bitgen.state),
        }
    if isinstance(value, (list, tuple)):
        return {
            "kind": "list",
            "items": [_encode(v, f"{path}/{i}", arrays, allowed) for i, v in enumerate(value)],
        }
    if type(value).__name__ in allowed and allowed[type(value).__name__] is type(value):
        return {
            "kind": "object",
            "class": type(value).__name__,
            "attrs": {
                k: _encode(v, f"{path}/{k}", arrays, allowed) for k, v in vars(value).items()
            },
        }
    return {"kind": "scalar", "value": _plain(value)}


def save_model(model: BaseStreamingAUC, path: str | os.PathLike) -> Path:
    """Save a fitted aucstream learner to ``path`` (a ``.npz`` file, no pickle), atomically.

    Parameters
    ----------
    model : BaseStreamingAUC
        A fitted learner (or one in mid-stream).
    path : str or path-like
        Destination (not an existing directory); ``.npz`` is appended if the name
        lacks it. An existing file is
        replaced only once the new one is completely on disk. The file's mode is
        the one ``open()`` gives a new file (``0o666`` less the umask: 0644 under the
        usual umask 022), so that another account can read it where the umask lets
        it; the temporary file is private until then.

    Returns
    -------
    pathlib.Path
        The path written.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from aucstream import OPAUC, save_model, load_model
    >>> X = np.random.default_rng(0).normal(size=(50, 3)); y = X[:, 0] > 0
    >>> model = OPAUC().fit(X, y)
    >>> path = save_model(model, os.path.join(tempfile.mkdtemp(), "model"))
    >>> path.name
    'model.npz'
    >>> np.array_equal(load_model(path).decision_function(X), model.decision_function(X))
    True
    """
    return _save(model, path)


def _save(model, path: str | os.PathLike, reading: dict | None = None) -> Path:
    """:func:`save_model`, with the ``reading`` entry of format 3 (the command line's
    ``fit`` records there that it read a LIBSVM file 0-based)."""
    from sklearn.utils.validation import check_is_fitted

    if isinstance(path, (str, os.PathLike)) and Path(path).is_dir():
        raise ValueError(  # "DIR.npz" written beside it would surprise
            f"{os.fspath(path)} is an existing directory, not a model file: give a file "
            f"name, e.g. {Path(path) / 'model.npz'}"
        )
    check_is_fitted(model, "n_samples_seen_")
    allowed = _allowed_classes()
    if type(model).__name__ not in allowed:
        raise TypeError(f"{type(model).__name__} is not an aucstream learner")
    params = model.get_params(deep=False)
    if isinstance(params.get("random_state"), (np.random.Generator, np.random.RandomState)):
        params["random_state"] = None  # its exact state is saved with the fitted state
    arrays: dict[str, np.ndarray] = {}
    state = {
        key: _encode(value, f"state/{key}", arrays, allowed)
        for key, value in _state.state_items(model).items()
    }
    from . import __version__

    sparse = any(name.endswith(".indices") for name in arrays)
    meta = {
        "format": FORMAT_NAME,
        "format_version": 2 if sparse else 1,
        "aucstream_version": __version__,
        "class": type(model).__name__,
        "params": _plain(params),
        "state": state,
    }
    if reading:
        _check_reading(reading, "reading")
        meta["reading"], meta["format_version"] = dict(reading), 3
    target = model_file(path)
    _write_atomically(target, __meta__=np.array(json.dumps(meta)), **arrays)
    return target


def model_file(path: str | os.PathLike) -> Path:
    """The file :func:`save_model` writes for ``path``: ``path`` with ``.npz`` appended
    if its name lacks it.

    Parameters
    ----------
    path : str or path-like
        The destination given to :func:`save_model`.

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> from aucstream.persistence import model_file
    >>> model_file("runs/model").as_posix(), model_file("model.npz").as_posix()
    ('runs/model.npz', 'model.npz')
    """
    target = Path(path)
    if target.suffix != ".npz":
        target = target.with_name(target.name + ".npz")
    return target


def _saved_path(path: str | os.PathLike) -> str | os.PathLike:
    """The file to read for ``path``: ``path`` itself, or, when no such file exists
    and its name lacks ``.npz``, the file :func:`save_model` wrote for it (the name
    with ``.npz`` appended), if that one exists. Raises ``TypeError`` when ``path``
    is not a str or a path-like."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or a path-like, got {path!r}")
    if Path(path).name and not os.path.exists(path):
        target = model_file(path)
        if target.exists():
            return target
    return path


def _write_atomically(target: Path, **arrays: np.ndarray) -> None:
    """Write an ``.npz`` next to ``target``, flush it to disk, then rename it over."""
    with atomic_write(target, binary=True) as f:
        np.savez_compressed(f, **arrays)  # type: ignore[arg-type]  # numpy's stub


#: State members a learner may or may not have (set by scikit-learn's validation).
_OPTIONAL_STATE = {"feature_names_in_"}

#: The entries of a model file's ``__meta__`` document.
_META_KEYS = {"format", "format_version", "aucstream_version", "class", "params", "state"}
_META_KEYS.add("reading")  # format 3
#: The entries a ``reading`` entry may hold, and their values.
_READING = {"index_base": (0,)}


def _check_reading(reading, where: str) -> None:
    """Refuse a ``reading`` entry (format 3) with keys or values it may not hold."""
    if not isinstance(reading, dict) or not reading:
        raise ValueError(f"{where} {reading!r} is not a non-empty dict")
    for key, value in reading.items():
        if key not in _READING:
            raise ValueError(f"{where}: unknown entry {key!r}")
        if isinstance(value, bool) or value not in _READING[key]:
            raise ValueError(f"{where}: {key} = {value!r}, expected one of {list(_READING[key])}")


def model_reading(path: str | os.PathLike) -> dict:
    """How the command line read the file the model in ``path`` learnt from: the
    checked ``reading`` entry of its metadata (format 3), ``{}`` when it has none.

    Parameters
    ----------
    path : str or path-like
        A model file (checked as :func:`load_model` checks its metadata).

    Returns
    -------
    dict
        ``{"index_base": 0}`` after a LIBSVM file read 0-based, else ``{}``.

    Examples
    --------
    >>> import numpy as np, tempfile
    >>> from aucstream import SOLAM, save_model
    >>> X = np.random.default_rng(0).normal(size=(20, 2))
    >>> model_reading(save_model(SOLAM().fit(X, X[:, 0] > 0), tempfile.mktemp()))
    {}
    """
    path, archive = _open_archive(path)
    with archive:
        return dict(_Reader(path, archive).meta().get("reading", {}))


def _open_archive(path: str | os.PathLike) -> tuple[str | os.PathLike, zipfile.ZipFile]:
    path = _saved_path(path)
    try:
        return path, zipfile.ZipFile(path)
    except (zipfile.BadZipFile, NotImplementedError, ValueError, EOFError) as error:
        raise ValueError(
            f"{os.fspath(path)} is not a model file (not a valid zip archive)"
        ) from error


def _documents(cls: type, name: str) -> bool:
    """Whether ``cls`` declares the fitted attribute ``name`` in the Attributes section
    of its docstring (``name : type``): a member a learner sets while learning but does
    not allocate (a solver's ``n_iter_``) is declared there."""
    doc = inspect.getdoc(cls) or ""
    section = re.search(r"^Attributes\n-+\n(.*?)(?:^\S[^\n]*\n-+\n|\Z)", doc, re.M | re.S)
    return (
        section is not None
        and re.search(rf"^{re.escape(name)}\s*:", section.group(1), re.M) is not None
    )


def _array_members(spec, path: str, out: set[str]) -> None:
    """The archive members (``path.npy``) that the entries of ``spec`` read."""
    if not isinstance(spec, dict):
        return
    kind = spec.get("kind")
    if kind == "array":
        out.add(f"{path}.npy")
    elif kind == "sparse":
        out.update((f"{path}.indices.npy", f"{path}.values.npy"))
    elif kind == "list" and isinstance(spec.get("items"), list):
        for i, item in enumerate(spec["items"]):
            _array_members(item, f"{path}/{i}", out)
    elif kind == "object" and isinstance(spec.get("attrs"), dict):
        for key, item in spec["attrs"].items():
            _array_members(item, f"{path}/{key}", out)


#: What reading a damaged archive member raises: a bad header or CRC (zipfile), a
#: corrupt deflate stream (zlib), a short or malformed array or array header (numpy,
#: whose header parser may raise tokenize's error), a header naming an unknown
#: compression method or zip version (NotImplementedError) or flagging the member as
#: encrypted (zipfile raises RuntimeError).
_DAMAGED = (
    ValueError,
    OSError,
    EOFError,
    SyntaxError,
    zipfile.BadZipFile,
    zlib.error,
    tokenize.TokenError,
    NotImplementedError,
    RuntimeError,
)


class _Reader:
    """Reads one model archive, checking every member before it is loaded."""

    def __init__(self, path: str | os.PathLike, archive: zipfile.ZipFile):
        self.path = os.fspath(path)
        self.zip = archive
        self.sizes = {info.filename: info.file_size for info in archive.infolist()}
        self.budget = get_config()["memory_budget"]
        self.loaded = 0

    def fail(self, member: str, problem: str) -> ValueError:
        return ValueError(f"{self.path}: {member}: {problem}")

    def header(self, name: str) -> tuple[tuple, np.dtype]:
        member = f"{name}.npy"
        if member not in self.sizes:
            raise self.fail(name, "missing from the archive")
        try:
            with self.zip.open(member) as f:
                version = np.lib.format.read_magic(f)
                read = (
                    np.lib.format.read_array_header_1_0
                    if version == (1, 0)
                    else np.lib.format.read_array_header_2_0
                )
                shape, _, dtype = read(f)
        except _DAMAGED as error:
            raise self.fail(name, f"not a valid array ({error})") from error
        if dtype.hasobject:
            raise self.fail(name, "object arrays are not allowed in a model file")
        nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
        if nbytes > self.sizes[member]:
            raise self.fail(name, f"declares {nbytes} bytes but holds {self.sizes[member]}")
        self.charge(name, nbytes)
        return shape, dtype

    def charge(self, name: str, nbytes: int) -> None:
        """Count ``nbytes`` more against the memory budget."""
        self.loaded += nbytes
        if self.loaded > self.budget:
            raise self.fail(
                name,
                f"the arrays need more than the memory budget ({format_bytes(self.budget)})",
            )

    def read(self, name: str) -> np.ndarray:
        try:
            with self.zip.open(f"{name}.npy") as f:
                return np.lib.format.read_array(f, allow_pickle=False)
        except _DAMAGED as error:
            raise self.fail(name, f"cannot be read ({error})") from error

    @staticmethod
    def check_shape(name: str, shape: tuple, dtype: np.dtype, reference, growable: bool) -> None:
        """The declared shape and dtype against the fresh learner's array."""
        if isinstance(reference, np.ndarray):
            probe = np.empty((0,) * len(shape), dtype=dtype)
            check_like(
                np.lib.stride_tricks.as_strided(probe, shape=shape, strides=(0,) * len(shape)),
                reference,
                name,
                growable,
            )

    def array(self, name: str, reference, growable: bool) -> np.ndarray:
        shape, dtype = self.header(name)
        self.check_shape(name, shape, dtype, reference, growable)
        return self.read(name)

    def sparse(self, name: str, spec: dict, reference, growable: bool) -> np.ndarray:
        """A sparse entry (see the module docstring), checked, then made dense."""
        shape, code = spec.get("shape"), spec.get("dtype")
        if not isinstance(shape, list) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape
        ):
            raise self.fail(name, f"sparse shape {shape!r} is not a list of sizes")
        try:
            dtype = np.dtype(code) if isinstance(code, str) else None
        except TypeError:
            dtype = None
        if dtype is None or dtype.kind not in "fiub" or dtype.itemsize not in (1, 2, 4, 8):
            raise self.fail(name, f"sparse dtype {code!r} is not a numeric dtype")
        self.check_shape(name, tuple(shape), dtype, reference, growable)
        size = int(np.prod(shape, dtype=object))
        self.charge(name, size * dtype.itemsize)
        ishape, idtype = self.header(f"{name}.indices")
        vshape, vdtype = self.header(f"{name}.values")
        if idtype.kind not in "iu" or len(ishape) != 1:
            raise self.fail(f"{name}.indices", f"{idtype}{list(ishape)} are not flat positions")
        if vdtype != dtype or vshape != ishape:
            raise self.fail(
                f"{name}.values",
                f"{vdtype}{list(vshape)}, expected {dtype}[{ishape[0]}] (one per index)",
            )
        if ishape[0] > size:
            raise self.fail(f"{name}.indices", f"{ishape[0]} positions in {size} elements")
        indices = self.read(f"{name}.indices")
        values = self.read(f"{name}.values")
        if indices.size and (
            indices.min() < 0
            or indices.max() >= size
            or np.any(np.diff(indices.astype(np.int64)) <= 0)
        ):
            raise self.fail(f"{name}.indices", f"not strictly increasing positions in [0, {size})")
        out = np.zeros(shape, dtype=dtype)
        out.reshape(-1)[indices] = values
        return out

    def meta(self) -> dict:
        if "__meta__.npy" not in self.sizes:
            raise ValueError(f"{self.path} is not an aucstream model file (no __meta__)")
        if self.sizes["__meta__.npy"] > _META_LIMIT:
            raise self.fail("__meta__", "metadata larger than 16 MiB")
        shape, dtype = self.header("__meta__")
        if dtype.kind != "U" or shape != ():
            raise self.fail("__meta__", "not a JSON string")
        try:
            with self.zip.open("__meta__.npy") as f:
                text = str(np.lib.format.read_array(f, allow_pickle=False))
        except _DAMAGED as error:
            raise self.fail("__meta__", f"cannot be read ({error})") from error
        try:
            meta = json.loads(text)
        except json.JSONDecodeError as error:
            raise self.fail("__meta__", f"not valid JSON ({error})") from error
        if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
            raise ValueError(f"{self.path} is not an aucstream model file")
        version = meta.get("format_version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise self.fail("__meta__", f"format_version {version!r} is not an integer")
        if version > FORMAT_VERSION:
            raise ValueError(
                f"{self.path} uses model format {version}; this aucstream reads up to "
                f"{FORMAT_VERSION}: upgrade aucstream"
            )
        for key, kind in (("class", str), ("params", dict), ("state", dict)):
            if not isinstance(meta.get(key), kind):
                raise self.fail("__meta__", f"{key!r} is missing or not a {kind.__name__}")
        unknown = sorted(set(meta) - _META_KEYS)
        if unknown:
            raise self.fail("__meta__", f"unknown entries {unknown}")
        if "reading" in meta:
            try:
                _check_reading(meta["reading"], "reading")
            except ValueError as error:
                raise self.fail("__meta__", str(error)) from None
        read: set[str] = set()
        for key, spec in meta["state"].items():
            _array_members(spec, f"state/{key}", read)
        unread = sorted(set(self.sizes) - read - {"__meta__.npy"})
        if unread:
            raise self.fail(
                unread[0].removesuffix(".npy"),
                f"archive members {unread} belong to no state member",
            )
        return meta

    def decode(self, spec, path: str, reference, allowed: dict, growable: bool = False) -> Any:
        if not isinstance(spec, dict) or "kind" not in spec:
            raise self.fail(path, "malformed entry")
        kind = spec["kind"]
        if kind == "array":
            return self.array(path, reference, growable)
        if kind == "sparse":
            return self.sparse(path, spec, reference, growable)
        if kind == "scalar":
            value = spec.get("value")
            if value is not None and not isinstance(value, (bool, int, float, str)):
                raise self.fail(path, f"unexpected value {value!r}")
            check_like(value, reference, path)
            return value
        if kind == "rng":
            return self.rng(spec, path)
        if kind == "list":
            items = spec.get("items")
            if not isinstance(items, list):
                raise self.fail(path, "malformed list")
            if isinstance(reference, (list, tuple)) and len(items) != len(reference):
                raise self.fail(path, f"{len(items)} items, expected {len(reference)}")
            refs = reference if isinstance(reference, (list, tuple)) else [None] * len(items)
            return [
                self.decode(s, f"{path}/{i}", r, allowed, growable)
                for i, (s, r) in enumerate(zip(items, refs))
            ]
        if kind == "object":
            return self.component(spec, path, reference, allowed)
        raise self.fail(path, f"entry of unknown kind {kind!r}")

    def rng(self, spec: dict, path: str) -> np.random.Generator:
        bitgen_cls = getattr(np.random, str(spec.get("bit_generator")), None)
        if not (isinstance(bitgen_cls, type) and issubclass(bitgen_cls, np.random.BitGenerator)):
            raise self.fail(path, f"unknown random bit generator {spec.get('bit_generator')!r}")
        bitgen = bitgen_cls()
        try:
            bitgen.state = spec["state"]
        except (TypeError, ValueError, KeyError, OverflowError) as error:  # -1 as a uint64
            raise self.fail(path, f"invalid random generator state ({error})") from error
        return np.random.Generator(bitgen)

    def component(self, spec: dict, path: str, reference, allowed: dict):
        name = spec.get("class")
        cls = allowed.get(name) if isinstance(name, str) else None  # a list: unhashable
        if cls is None:
            raise self.fail(path, f"unknown class {spec.get('class')!r}")
        if reference is not None and cls is not type(reference):
            raise self.fail(path, f"a {cls.__name__} where a {type(reference).__name__} belongs")
        attrs = spec.get("attrs")
        if not isinstance(attrs, dict):
            raise self.fail(path, "malformed component")
        later = set(getattr(cls, "_state_added_later", ()))
        if reference is not None and (
            set(attrs) - set(vars(reference)) or set(vars(reference)) - set(attrs) - later
        ):
            differ = sorted((set(attrs) ^ set(vars(reference))) - later)
            raise self.fail(path, f"members {differ} differ")
        growing = set(getattr(cls, "_growable_state", ()))
        obj = cls.__new__(cls)
        for k, s in attrs.items():
            ref = vars(reference)[k] if reference is not None else None
            if k in growing and (ref is None or isinstance(ref, list)):
                # a member whose structure varies: arrays and scalars only, and the
                # component's _check_state checks them
                setattr(obj, k, self.decode(s, f"{path}/{k}", None, {}, True))
            else:
                setattr(obj, k, self.decode(s, f"{path}/{k}", ref, allowed, k in growing))
        if reference is not None:
            _upgrade(obj, (set(vars(reference)) - set(attrs)) & later, vars(reference))
        check = getattr(obj, "_check_state", None)
        if check is not None:
            try:
                check()
            except ValueError as error:
                raise self.fail(path, str(error)) from error
        return obj


def _upgrade(obj, added: set[str], fresh: dict) -> None:
    """Give an older file's object the members added since, then let it complete them."""
    if not added:
        return
    for key in added:
        setattr(obj, key, fresh[key])
    obj._upgrade_state(added)


def _unplain(value: Any, allowed: dict, where: str) -> Any:
    """Parameters back from their JSON form (estimators rebuilt from allowed classes)."""
    if isinstance(value, list):
        return [_unplain(v, allowed, where) for v in value]
    if isinstance(value, dict):
        if "__estimator__" in value:
            name = value["__estimator__"]
            cls = allowed.get(name) if isinstance(name, str) else None
            if cls is None or not isinstance(value.get("params"), dict):
                raise ValueError(f"{where}: unknown estimator {value['__estimator__']!r}")
            return cls(**_unplain(value["params"], allowed, where))
        return {k: _unplain(v, allowed, where) for k, v in value.items()}
    return value


def _scalar(state: dict, key: str):
    spec = state.get(key)
    if isinstance(spec, dict) and spec.get("kind") == "scalar":
        return spec.get("value")
    return None


def _fresh(cls, meta: dict, reader: _Reader):
    """A learner with the file's parameters and a freshly allocated state."""
    from ._params import InvalidParameterError

    try:
        params = _unplain(meta["params"], _allowed_classes(), f"{reader.path}: params")
        model = cls(**params)
        model._validate_params()
    except InvalidParameterError as error:
        raise reader.fail("params", str(error)) from error
    except TypeError as error:
        raise reader.fail("params", f"not parameters of {cls.__name__} ({error})") from error
    state = meta["state"]
    n_features = _scalar(state, "n_features_in_")
    if isinstance(n_features, bool) or not isinstance(n_features, int) or n_features < 1:
        raise reader.fail("state/n_features_in_", f"{n_features!r} is not a positive integer")
    seen = _scalar(state, "n_samples_seen_")
    if isinstance(seen, bool) or not isinstance(seen, int) or seen < 0:
        raise reader.fail("state/n_samples_seen_", f"{seen!r} is not a count")
    if not isinstance(state.get("classes_"), dict) or state["classes_"].get("kind") != "array":
        raise reader.fail("state/classes_", "missing")
    classes = reader.array("state/classes_", None, False)
    if classes.shape != (2,) or classes[0] == classes[1]:
        raise reader.fail("state/classes_", f"{classes!r} is not two distinct labels")
    reference = cls(**params)
    try:
        reference._reset(np.sort(classes), n_features)
        reference.n_features_in_ = n_features
    except MemoryError as error:
        raise reader.fail("state", str(error)) from error
    return model, classes, reference


def load_model(path: str | os.PathLike) -> BaseStreamingAUC:
    """Load a learner saved by :func:`save_model`, checking everything in the file.

    Parameters
    ----------
    path : str or path-like
        The ``.npz`` file. When no file has this name and the name lacks ``.npz``,
        the file ``save_model`` wrote for it (the name with ``.npz`` appended) is read.

    Returns
    -------
    BaseStreamingAUC
        The learner, ready to score or to continue its stream with ``partial_fit``.

    Raises
    ------
    ValueError
        If the file is not an aucstream model, was written by a newer format version
        than this library reads, or is damaged or inconsistent (the message names
        the member).
    TypeError
        If ``path`` is not a str or a path-like.
    """
    allowed = _allowed_classes()
    path, archive = _open_archive(path)
    with archive:
        reader = _Reader(path, archive)
        meta = reader.meta()
        cls = allowed.get(meta["class"])
        from ._base import BaseStreamingAUC

        if cls is None or not issubclass(cls, BaseStreamingAUC):
            raise ValueError(f"{os.fspath(path)} holds an unknown learner {meta['class']!r}")
        model, classes, reference = _fresh(cls, meta, reader)
        expected = _state.state_items(reference)
        state = meta["state"]
        found = set(state)
        later = set(getattr(cls, "_state_added_later", ()))
        missing = set(expected) - found - later
        # a member set while learning but not allocated (a solver's n_iter_) must be
        # declared by the learner (its Attributes) and be a plain number; any other
        # member the learner does not have is refused, not dropped
        extra = {
            k
            for k in found - set(expected) - _OPTIONAL_STATE
            if not (
                _state.is_state_name(k)
                and _documents(cls, k)
                and isinstance(state[k], dict)
                and state[k].get("kind") == "scalar"
                and isinstance(state[k].get("value"), (int, float))
                and not isinstance(state[k].get("value"), bool)
            )
        }
        if extra:
            raise reader.fail(
                f"state/{sorted(extra)[0]}",
                f"{cls.__name__} has no state members {sorted(extra)}",
            )
        if missing:
            raise reader.fail("state", f"members {sorted(missing)} are missing")
        for key in found:
            growable = key in getattr(cls, "_growable_state", ())
            value = reader.decode(state[key], f"state/{key}", expected.get(key), allowed, growable)
            setattr(model, key, value)
        _upgrade(model, (set(expected) - found) & later, expected)
        names = getattr(model, "feature_names_in_", None)
        if names is not None and (
            not isinstance(names, np.ndarray)
            or names.dtype.kind != "U"
            or names.shape != (model.n_features_in_,)
        ):
            raise reader.fail("state/feature_names_in_", f"not {model.n_features_in_} column names")
    if not np.array_equal(model.classes_, classes):  # pragma: no cover - same member
        raise reader.fail("state/classes_", "changed while loading")
    where = _state.first_non_finite(model)
    if where is not None:
        raise reader.fail(f"state/{where}", "holds NaN or infinity")
    try:
        model._check_state()
    except ValueError as error:
        raise reader.fail("state", str(error)) from error
    from ._calibration import check_learner

    broken = check_learner(model)  # a slope of 0 divided by zero when the model scored
    if broken is not None:
        raise reader.fail(*broken)
    members = vars(model)  # a pipeline's steps, a search's candidates: learners too
    steps = [(k, members.get(k)) for k in ("transformer_", "estimator_")]
    steps += [(f"candidates_/{i}", c) for i, c in enumerate(members.get("candidates_") or ())]
    for key, step in steps:
        try:
            if hasattr(step, "_validate_params"):
                step._validate_params()
            width = getattr(step, "n_features_in_", model.n_features_in_)
            if width != model.n_features_in_:
                raise ValueError(f"n_features_in_ = {width!r}, not {model.n_features_in_}")
        except ValueError as error:  # the parameters' InvalidParameterError too
            raise reader.fail(f"state/{key}", str(error)) from None
    return model


def check_like(value, reference, path: str, growable: bool = False) -> None:
    """Check a loaded state value against the freshly allocated ``reference``.

    Arrays must have the reference's dtype and number of dimensions, and its shape
    except along axis 0 where ``growable`` (buffers that grow with the stream);
    components must be of the same class with the same members; scalars of a
    compatible type. Raises ``ValueError`` naming the member.
    """
    if isinstance(reference, np.ndarray):
        if not isinstance(value, np.ndarray):
            raise ValueError(f"{path}: expected an array, found {type(value).__name__}")
        if value.dtype != reference.dtype and not (
            value.dtype.kind in "UO" and reference.dtype.kind in "UO"
        ):
            raise ValueError(f"{path}: dtype {value.dtype}, expected {reference.dtype}")
        if value.ndim != reference.ndim:
            raise ValueError(f"{path}: shape {value.shape}, expected {reference.shape}")
        lead = 1 if growable and value.ndim else 0
        if value.shape[lead:] != reference.shape[lead:]:
            raise ValueError(f"{path}: shape {value.shape}, expected {reference.shape}")
        return
    if isinstance(reference, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(reference):
            raise ValueError(f"{path}: expected a list of {len(reference)} members")
        for i, (v, r) in enumerate(zip(value, reference)):
            check_like(v, r, f"{path}[{i}]", growable)
        return
    if _state.is_component(reference):
        if type(value) is not type(reference):
            raise ValueError(
                f"{path}: expected a {type(reference).__name__}, found {type(value).__name__}"
            )
        growing = set(getattr(reference, "_growable_state", ()))
        mine, theirs = set(vars(value)), set(vars(reference))
        if mine != theirs:
            raise ValueError(f"{path}: members {sorted(mine ^ theirs)} do not match")
        for k in vars(reference):
            check_like(vars(value)[k], vars(reference)[k], f"{path}.{k}", k in growing)
        check = getattr(value, "_check_state", None)
        if check is not None:
            check()
        return
    if isinstance(reference, np.random.Generator):
        if not isinstance(value, np.random.Generator):
            raise ValueError(f"{path}: expected a random generator")
        return
    if reference is None or value is None:
        return  # optional scalars (e.g. an unbounded capacity)
    if isinstance(reference, bool) != isinstance(value, bool) or not isinstance(
        value, (int, float, str, bool)
    ):
        raise ValueError(f"{path}: expected a {type(reference).__name__}, found {value!r}")
    if isinstance(reference, (int, float)) and not isinstance(value, (int, float)):
        raise ValueError(f"{path}: expected a number, found {value!r}")
