"""Saving and loading learners without pickle.

A model file is a numpy ``.npz`` archive: every state array of the learner (and of its
components such as covariance summaries and reservoirs) is one entry, and the entry
``__meta__`` is a JSON document with the format name and version, the aucstream
version, the learner's class name and parameters, its scalar state and the exact
state of its random generator. Loading uses ``allow_pickle=False`` and only
instantiates aucstream's own learner and component classes, so a model file cannot
run code. A loaded learner continues its stream exactly where the saved one stopped.

Format history
--------------
1
    First version.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

__all__ = ["save_model", "load_model", "FORMAT_NAME", "FORMAT_VERSION"]

FORMAT_NAME = "aucstream-model"
FORMAT_VERSION = 1


def _allowed_classes() -> dict[str, type]:
    from ._base import BaseStreamingAUC
    from ._discovery import all_estimators
    from .covariance import CovarianceSummary
    from .reservoir import Reservoir

    all_estimators()  # imports every learner module so that subclasses are registered
    found: dict[str, type] = {}
    stack = [BaseStreamingAUC, CovarianceSummary, Reservoir]
    while stack:
        cls = stack.pop()
        if cls.__module__.startswith("aucstream"):
            found[cls.__name__] = cls
        stack.extend(cls.__subclasses__())
    return found


def _plain(value: Any) -> Any:
    """JSON-compatible form of a parameter or scalar value."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot store a value of type {type(value).__name__} in a model file")


def _encode(value: Any, path: str, arrays: dict[str, np.ndarray], allowed: dict) -> dict:
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            value = value.astype(str)
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


def _decode(spec: dict, path: str, archive, allowed: dict) -> Any:
    kind = spec["kind"]
    if kind == "array":
        return np.array(archive[path])
    if kind == "scalar":
        return spec["value"]
    if kind == "rng":
        bitgen_cls = getattr(np.random, spec["bit_generator"], None)
        if bitgen_cls is None or not issubclass(bitgen_cls, np.random.BitGenerator):
            raise ValueError(f"unknown random bit generator {spec['bit_generator']!r}")
        bitgen = bitgen_cls()
        bitgen.state = spec["state"]
        return np.random.Generator(bitgen)
    if kind == "list":
        return [_decode(s, f"{path}/{i}", archive, allowed) for i, s in enumerate(spec["items"])]
    if kind == "object":
        cls = allowed.get(spec["class"])
        if cls is None:
            raise ValueError(f"model file names unknown class {spec['class']!r}")
        obj = cls.__new__(cls)
        for k, s in spec["attrs"].items():
            setattr(obj, k, _decode(s, f"{path}/{k}", archive, allowed))
        return obj
    raise ValueError(f"model file has an entry of unknown kind {kind!r}")


def save_model(model, path: str | os.PathLike) -> None:
    """Save a fitted aucstream learner to ``path`` (a ``.npz`` file, no pickle).

    Parameters
    ----------
    model : BaseStreamingAUC
        A fitted learner (or one in mid-stream).
    path : str or path-like
        Destination; numpy appends ``.npz`` if the name lacks it.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from aucstream import OPAUC, save_model, load_model
    >>> X = np.random.default_rng(0).normal(size=(50, 3)); y = X[:, 0] > 0
    >>> model = OPAUC().fit(X, y)
    >>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
    >>> save_model(model, path)
    >>> np.array_equal(load_model(path).decision_function(X), model.decision_function(X))
    True
    """
    from sklearn.utils.validation import check_is_fitted

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
        for key, value in vars(model).items()
        if key not in params
    }
    from . import __version__

    meta = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "aucstream_version": __version__,
        "class": type(model).__name__,
        "params": _plain(params),
        "state": state,
    }
    np.savez_compressed(path, __meta__=np.array(json.dumps(meta)), **arrays)


def load_model(path: str | os.PathLike):
    """Load a learner saved by :func:`save_model`.

    Parameters
    ----------
    path : str or path-like
        The ``.npz`` file.

    Returns
    -------
    BaseStreamingAUC
        The learner, ready to score or to continue its stream with ``partial_fit``.

    Raises
    ------
    ValueError
        If the file is not an aucstream model, or was written by a newer format
        version than this library reads.
    """
    allowed = _allowed_classes()
    with np.load(path, allow_pickle=False) as archive:
        if "__meta__" not in archive.files:
            raise ValueError(f"{os.fspath(path)} is not an aucstream model file (no __meta__)")
        meta = json.loads(str(archive["__meta__"]))
        if meta.get("format") != FORMAT_NAME:
            raise ValueError(f"{os.fspath(path)} is not an aucstream model file")
        if meta["format_version"] > FORMAT_VERSION:
            raise ValueError(
                f"{os.fspath(path)} uses model format {meta['format_version']}; this aucstream "
                f"reads up to {FORMAT_VERSION}: upgrade aucstream"
            )
        cls = allowed.get(meta["class"])
        if cls is None:
            raise ValueError(f"{os.fspath(path)} holds an unknown learner {meta['class']!r}")
        model = cls(**meta["params"])
        for key, spec in meta["state"].items():
            setattr(model, key, _decode(spec, f"state/{key}", archive, allowed))
    return model
