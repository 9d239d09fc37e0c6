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

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import assert_same_state, snapshot
from sklearn.exceptions import NotFittedError

import aucstream
from aucstream import OPAUC, SOLAM, OnePassSearch, StreamPipeline, UnivariateOnline, _calibration
from aucstream._config import config_context
from aucstream._params import InvalidParameterError
from aucstream._runtime import Journalled, check_budget, validate_params

SRC = Path(aucstream.__file__).parent
FILES = sorted(
    [SRC / "search.py", SRC / "pipeline.py", SRC / "dask.py", SRC / "river.py"]
    + list((SRC / "evaluation").glob("*.py"))
)

#: Private calls on objects that are not learners, each with its reason (none now: the
#: search's read of its racing metrics with the buffered scores moved to
#: ``aucstream._peek_cache``, a helper of the metric, not a meta-learner).
ALLOWED: set[tuple[str, str]] = set()


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


# ------------------------------------------------------- the public interface itself
def _stream(n=400, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * np.linspace(0.5, 2.0, d)
    y = (X[:, 0] - X[:, 1] + rng.normal(size=n) > 0.5).astype(int)
    return X, y


def _learners():
    small = {"first_round": 5000, "window": 80, "min_class": 5, "exact_scores": 64}
    candidates = [SOLAM(), UnivariateOnline(eta=2**-4), UnivariateOnline(loss="log")]
    return [
        SOLAM(),
        OPAUC(),
        UnivariateOnline(),
        StreamPipeline(estimator=OPAUC()),
        OnePassSearch(candidates=candidates, ensemble=3, **small),
    ]


@pytest.mark.parametrize("learner", _learners(), ids=lambda m: type(m).__name__)
def test_decision_function_is_score_samples_minus_offset(learner):
    X, y = _stream()
    with pytest.raises(NotFittedError):
        learner.score_samples(X)
    with pytest.raises(NotFittedError):
        _ = learner.offset_
    learner.fit(X, y)
    raw = learner.score_samples(X)
    assert raw.shape == (X.shape[0],) and raw.dtype == np.float64
    assert np.array_equal(raw - learner.offset_, learner.decision_function(X))
    # the plainly valid rows skip scikit-learn's validation: the same scores
    assert np.array_equal(raw, learner.score_samples(X.tolist()))
    assert np.array_equal(learner.score_samples(X[:1]), learner.score_samples(X[:1].tolist()))
    if not isinstance(learner, StreamPipeline):  # (its scaler centres: dense rows only)
        Xs = sp.csr_matrix(np.where(np.abs(X) > 0.7, X, 0.0))
        sparse = learner.score_samples(Xs)
        assert np.allclose(sparse, learner.score_samples(Xs.toarray()), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="features"):
        learner.score_samples(X[:, :-1])


def test_a_search_ensemble_scores_through_its_members_public_methods():
    X, y = _stream(600)
    search = _learners()[-1].fit(X, y)
    assert (search.ensemble_ >= 0).sum() >= 2  # the ensemble scores, not the leader alone
    members = [search.candidates_[i] for i in search.ensemble_ if i >= 0]
    total = np.zeros(X.shape[0])
    for member in members:
        slope, offset = _calibration.logit_map(member.calibration_)
        total += slope * member.score_samples(X) + offset
    assert np.array_equal(search.score_samples(X), total / len(members))


@pytest.mark.parametrize("rows", [1, 7, 50], ids=lambda n: f"{n}rows")
@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "weighted"])
def test_journalled_calls_are_undone_from_the_journal(rows, weighted):
    """Inside ``Journalled``, ``test_then_train`` (every path: the one-row update, the
    fast path of small calls, the full path with weights) leaves in the journal what
    undoes it bit for bit (until the learner's next transaction: a holder journals one
    call of each learner); outside, nothing is journalled."""
    X, y = _stream()
    learner = UnivariateOnline().fit(X[:100], y[:100])
    learner.test_then_train(X[100:103], y[100:103])  # (the fast path has seen it)
    before = snapshot(learner)
    journal: list = []
    weights = np.linspace(0.5, 2.0, rows) if weighted else None
    part = slice(200, 200 + rows)
    with Journalled(learner, journal):
        scores = learner.test_then_train(X[part], y[part], sample_weight=weights)
    assert scores.shape == (rows,) and len(journal) == 1
    reference = UnivariateOnline().fit(X[:100], y[:100])
    reference.test_then_train(X[100:103], y[100:103])
    assert np.array_equal(
        scores, reference.test_then_train(X[part], y[part], sample_weight=weights)
    )
    walk, saved = journal[0]
    walk.restore(saved)
    assert_same_state(before, snapshot(learner))
    learner.test_then_train(X[300:305], y[300:305])
    assert len(journal) == 1


def test_the_runtime_checks_a_learner_before_its_state_exists():
    with pytest.raises(InvalidParameterError, match="eta"):
        validate_params(UnivariateOnline(eta=2.0, lam=1.0))
    validate_params(OPAUC())
    check_budget(OPAUC(), 100)
    with config_context(memory_budget=10_000):
        with pytest.raises(MemoryError, match="OPAUC needs"):
            check_budget(OPAUC(), 100)
    assert "n_features_in_" not in vars(OPAUC())
