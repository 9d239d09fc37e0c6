"""Meta-learners and integrations use only the public methods of the learners they hold
(issue 29).

``OnePassSearch``, ``StreamPipeline``, ``aucstream.dask``, ``aucstream.river`` and the
evaluation call the learners they hold through public methods (``test_then_train``,
``score_samples``, ``coef_``, ``offset_``, ``decision_one``...) and the functions of
:mod:`aucstream._runtime` (``Journalled``, ``validate_params``, ``check_budget``); the
runtime's hooks (``_update``, ``_begin_pass``...) are the runtime's to call. The test
parses those modules and fails naming every call of a private method on an object
other than ``self``, ``cls``, ``super()``, a module, or a parameter annotated with a
class of the same module (a function that is that class's method written apart).
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

import aucstream

SRC = Path(aucstream.__file__).parent
FILES = sorted(
    [SRC / "search.py", SRC / "pipeline.py", SRC / "dask.py", SRC / "river.py"]
    + list((SRC / "evaluation").glob("*.py"))
)

#: Private calls on objects that are not learners, each with its reason.
ALLOWED = {
    # the search's own racing metric (a RollingAUC, not a learner): its read of the
    # AUC with the buffered scores, without a copy of the window
    ("search.py", "_peek"),
}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_of(path: Path):
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return importlib.import_module(".".join(parts))


def _own_parameters(function: ast.AST, classes: set[str]) -> set[str]:
    """The parameters of ``function`` annotated with a class of the module."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    found = set()
    for arg in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]:
        annotation = arg.annotation
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            annotation = ast.parse(annotation.value, mode="eval").body
        if isinstance(annotation, ast.Name) and annotation.id in classes:
            found.add(arg.arg)
    return found


def private_calls(source: str, file: str, namespace: dict) -> list[str]:
    """``file:line: call`` of every private call the module docstring refuses in
    ``source`` (the module ``file``, its names in ``namespace``)."""
    tree = ast.parse(source)
    classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    found = []

    def visit(node: ast.AST, own: frozenset) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            own = own | _own_parameters(node, classes)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name, value = node.func.attr, node.func.value
            allowed = (
                not _private(name)
                or (Path(file).name, name) in ALLOWED
                or (isinstance(value, ast.Name) and value.id in {"self", "cls"} | own)
                or (isinstance(value, ast.Name) and inspect.ismodule(namespace.get(value.id)))
                or (
                    isinstance(value, ast.Call)
                    and isinstance(value.func, ast.Name)
                    and value.func.id == "super"
                )
            )
            if not allowed:
                found.append(f"{file}:{node.lineno}: {ast.unparse(node.func)}")
        for child in ast.iter_child_nodes(node):
            visit(child, own)

    visit(tree, frozenset())
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(SRC)))
def test_only_public_methods_of_held_learners(path):
    module = _module_of(path)
    found = private_calls(path.read_text(), str(path.relative_to(SRC)), vars(module))
    assert not found, "private methods of held objects called:\n" + "\n".join(found)


def test_the_rule_finds_a_private_call():
    """The check can fail: a held learner's private method, on an attribute or a
    local name, is found; self's, a module's and super()'s are not."""
    source = (
        "from aucstream import _state\n"
        "class Holder:\n"
        "    def learn(self, other):\n"
        "        self._mine()\n"
        "        _state.transaction(self)\n"
        "        super()._transaction()\n"
        "        self.estimator_._quick_learn(1)\n"
        "        other._raw_scores(2)\n"
        "def helper(holder: Holder, learner):\n"
        "    holder._mine()\n"
        "    learner._coef()\n"
    )
    found = private_calls(source, "probe.py", {"_state": aucstream._state})
    names = [line.rsplit(": ", 1)[1] for line in found]
    assert names == ["self.estimator_._quick_learn", "other._raw_scores", "learner._coef"]


def test_the_allowed_calls_still_exist():
    """Each allowed call is still made (else its entry goes)."""
    for file, name in ALLOWED:
        assert f"._{name.lstrip('_')}(" in (SRC / file).read_text(), (file, name)
