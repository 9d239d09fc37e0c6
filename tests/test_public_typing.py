"""Every public callable of aucstream is annotated (issue 34, "a typed package").

The public API is walked from ``aucstream.__all__`` and every public submodule of
``aucstream._SUBMODULES`` (through its ``__all__``): each function defined in aucstream,
and each public method and property a public class resolves (those it inherits from
aucstream's own bases included, e.g. ``learn_one``; ``__init__`` too). A parameter
without an annotation (``self``/``cls`` aside) or a missing return annotation
(``__init__`` aside) is named.
The types themselves are mypy's job (``tests/test_typing.py``).
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable, Iterator

import aucstream

_EMPTY = inspect.Parameter.empty


def _ours(obj: object) -> bool:
    return (getattr(obj, "__module__", None) or "").split(".")[0] == "aucstream"


def _public_names(module: object) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    return [n for n in names if not n.startswith("_")]


def _unwrap(member: object) -> Callable | None:
    """The function behind a class member (static/class methods, properties' getters,
    scikit-learn's ``available_if``), or None when it is not a callable of ours."""
    if isinstance(member, (staticmethod, classmethod)):
        member = member.__func__
    elif isinstance(member, property):
        member = member.fget
    elif not inspect.isfunction(member) and inspect.isfunction(getattr(member, "fn", None)):
        member = member.fn  # type: ignore[attr-defined]
    return member if inspect.isfunction(member) else None


def unannotated(func: Callable, name: str) -> list[str]:
    """What of ``func``'s signature lacks an annotation, one line each."""
    signature = inspect.signature(func)  # (follows __wrapped__: the decorated function)
    found = [
        f"{name}: parameter {p.name!r}"
        for p in signature.parameters.values()
        if p.name not in ("self", "cls") and p.annotation is _EMPTY
    ]
    if func.__name__ != "__init__" and signature.return_annotation is _EMPTY:
        found.append(f"{name}: return")
    return found


def public_callables() -> Iterator[tuple[str, Callable]]:
    """(qualified name, function) of every public function, method and property."""
    modules = [aucstream] + [
        importlib.import_module(f"aucstream.{name}") for name in aucstream._SUBMODULES
    ]
    seen: set = set()
    for module in modules:
        for name in _public_names(module):
            obj = getattr(module, name)
            if not _ours(obj) or id(obj) in seen:
                continue
            seen.add(id(obj))
            if inspect.isfunction(obj):
                yield f"{obj.__module__}.{obj.__qualname__}", obj
            elif inspect.isclass(obj):
                for attr in ["__init__", *(a for a in dir(obj) if not a.startswith("_"))]:
                    # the member the class resolves (an overridden base method is not
                    # part of its API); those of aucstream's own classes only
                    owner = next((k for k in obj.__mro__ if attr in vars(k)), None)
                    if owner is None or not _ours(owner) or (owner, attr) in seen:
                        continue
                    seen.add((owner, attr))
                    func = _unwrap(vars(owner)[attr])
                    if func is not None:
                        yield f"{owner.__module__}.{owner.__qualname__}.{attr}", func


@functools.cache
def _all_public() -> list[tuple[str, Callable]]:
    return list(public_callables())


def test_the_walk_finds_the_public_api():
    names = {name for name, _ in _all_public()}
    # functions, inherited methods, properties, static methods, available_if methods
    expected = {
        "aucstream.metrics.roc_auc",
        "aucstream._base.BaseStreamingAUC.learn_one",
        "aucstream.opauc._learner.OPAUC.predict_proba_one",
        "aucstream._base.BaseStreamingAUC.coef_",
        "aucstream._runtime._small_calls.SmallCalls.predict_one",
        "aucstream.opauc._learner.OPAUC.__init__",
        "aucstream.opauc._learner.OPAUC.from_statistics",
        "aucstream._streaming_auc._BinaryPairs.update",
        "aucstream.persistence.load_model",
        "aucstream.datasets._registry.load_german",
        "aucstream.drift._auc.AUCDriftDetector.update",
        "aucstream.dask.ParallelPass.predict_proba",
    }
    assert expected <= names, sorted(expected - names)
    assert len(names) > 400


def test_every_public_callable_is_annotated():
    missing = [line for name, func in _all_public() for line in unannotated(func, name)]
    assert not missing, "unannotated public callables:\n" + "\n".join(missing)


def test_the_check_can_fail():
    def bare(x, y: int = 0, *args, **kwargs):
        return x

    def full(self, x: int, *args: int, **kwargs: str) -> int:
        return x

    class Thing:
        def __init__(self, a) -> None:
            self.a = a

        @property
        def value(self):
            return self.a

    assert unannotated(bare, "bare") == [
        "bare: parameter 'x'",
        "bare: parameter 'args'",
        "bare: parameter 'kwargs'",
        "bare: return",
    ]
    assert unannotated(full, "full") == []
    assert unannotated(Thing.__init__, "Thing.__init__") == ["Thing.__init__: parameter 'a'"]
    getter = _unwrap(vars(Thing)["value"])
    assert getter is not None
    assert unannotated(getter, "Thing.value") == ["Thing.value: return"]
