"""One learning runtime: a learner is its parameters, one declaration of its state
(``_state_spec``, :class:`aucstream._runtime.StateSpec`), its tags and a compiled step;
it overrides few of the runtime's methods (issue 29: at most 8).

Counted: every function, property, static or class method that a learner class (or a
class between it and :class:`~aucstream._base.BaseStreamingAUC`, its own mixins
included) defines under a name that :class:`BaseStreamingAUC`'s method resolution order
also defines, dunders excluded. Not counted: what the runtime itself puts there (the
base class's plain online methods, :mod:`aucstream._runtime`'s functions) and the two
declarations, ``_tags`` and ``_state_spec`` (data: constants, or properties when they
depend on the parameters).
"""

from __future__ import annotations

import inspect
import types

import pytest

import aucstream
from aucstream._base import BaseStreamingAUC
from aucstream._runtime import StateSpec

#: Most runtime methods a learner may override.
MOST = 8
#: The declarations (counted as data, not as methods).
DECLARATIONS = {"_tags", "_state_spec"}

_BASE_MRO = set(BaseStreamingAUC.__mro__)
_RUNTIME_NAMES = {
    name
    for c in BaseStreamingAUC.__mro__
    for name in c.__dict__
    if not (name.startswith("__") and name.endswith("__"))
}
_RUNTIME_MODULES = ("aucstream._base", "aucstream._runtime")


def _function_of(value):
    """The function a class attribute holds (plain, static, class method, property's
    getter), or None for data."""
    if isinstance(value, (staticmethod, classmethod)):
        return value.__func__
    if isinstance(value, property):
        return value.fget
    if isinstance(value, types.FunctionType):
        return value
    return None


def overrides(cls: type) -> set[str]:
    """The runtime methods ``cls`` overrides (module docstring)."""
    found = set()
    for owner in cls.__mro__:
        if owner in _BASE_MRO:
            continue
        for name, value in owner.__dict__.items():
            if name not in _RUNTIME_NAMES or name in DECLARATIONS:
                continue
            function = _function_of(value)
            if function is None:
                continue
            if getattr(function, "__module__", "").startswith(_RUNTIME_MODULES):
                continue  # put there by the runtime (BaseStreamingAUC.__init_subclass__)
            found.add(name)
    return found


LEARNERS = [cls for _, cls in aucstream.all_estimators()]


def test_every_learner_is_found():
    names = {cls.__name__ for cls in LEARNERS}
    assert {"OPAUC", "SOLAM", "StreamPipeline", "OnePassSearch"} <= names


@pytest.mark.parametrize("cls", LEARNERS, ids=lambda c: c.__name__)
def test_a_learner_overrides_few_runtime_methods(cls):
    found = overrides(cls)
    assert len(found) <= MOST, f"{cls.__name__} overrides {len(found)}: {sorted(found)}"


@pytest.mark.parametrize("cls", LEARNERS, ids=lambda c: c.__name__)
def test_the_state_declaration_is_one_object(cls):
    """No learner answers the runtime's questions about its state itself: they come
    from its declaration (a StateSpec, or a property that returns one)."""
    questions = (
        "_row_logged_state",
        "_row_written_state",
        "_read_only_state",
        "_bounded_state",
        "_written_rows",
        "_plan_variant",
        "_state_nbytes",
        "_low_memory_hint",
        "_upgrade_state",
    )
    assert not overrides(cls) & set(questions)
    assert isinstance(inspect.getattr_static(cls, "_state_spec"), (StateSpec, property))
    assert isinstance(cls()._state_spec, StateSpec)


def test_the_count_sees_an_override():
    """The count is able to fail: a learner that answers a question itself counts."""

    class Answering(aucstream.SOLAM):
        def _row_logged_state(self) -> tuple:
            return ()

        @property
        def _low_memory_hint(self) -> str:
            return ""

    assert overrides(Answering) == overrides(aucstream.SOLAM) | {
        "_row_logged_state",
        "_low_memory_hint",
    }


def test_a_variant_reaches_the_fast_path():
    """A declared ``variant`` makes the class's ``_plan_variant`` differ from the
    runtime's default (the per-example entry asks only such classes), and answers it."""
    from aucstream._runtime import StateDeclarations

    assert aucstream.SOLAM._plan_variant is not StateDeclarations._plan_variant
    assert aucstream.OPAUC._plan_variant is not StateDeclarations._plan_variant
    assert aucstream.FTRLAUC._plan_variant is StateDeclarations._plan_variant
