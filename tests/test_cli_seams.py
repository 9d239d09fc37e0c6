"""The command line's seams: public names only, plural flags, one value grammar."""

import argparse
import ast
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

import aucstream.cli
from aucstream import load_model
from aucstream.cli import build_parser, main
from aucstream.evaluation import parse_data_spec, parse_learner_spec, parse_value

CLI_DIR = Path(aucstream.cli.__file__).parent


def _imports(path: Path):
    """(absolute module, imported names) of every import of a module of the CLI."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = ["aucstream", "cli"][: 3 - node.level]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield module, [alias.name for alias in node.names], node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, [], node.lineno


def _private_import(module: str, names: list[str]) -> str | None:
    """What is private in an import from the CLI, or None."""
    parts = module.split(".")
    if parts[0] != "aucstream" or parts[:2] == ["aucstream", "cli"]:
        return None  # the standard library, numpy...; the CLI's own modules
    private = [p for p in parts[1:] if p.startswith("_")]
    if private:
        return f"the private module {module}"
    if parts[:2] == ["aucstream", "evaluation"]:
        hidden = [n for n in names if n.startswith("_")]
        if hidden:
            return f"the private names {hidden} of {module}"
    return None


def test_the_checker_catches_private_evaluation_imports(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from ..evaluation._runner import parse_learner_spec\n"
        "from aucstream.evaluation._data import parse_data_spec\n"
        "import aucstream.evaluation._reproduce\n"
        "from ..evaluation import _protocol\n"
        "from ..evaluation import compare\n"
        "from ._common import _value\n"
    )
    found = [_private_import(m, n) for m, n, _ in _imports(bad)]
    assert [f is not None for f in found] == [True, True, True, True, False, False]


@pytest.mark.parametrize("path", sorted(CLI_DIR.glob("*.py")), ids=lambda p: p.name)
def test_the_cli_imports_only_public_names(path):
    problems = [
        f"{path.name}:{line}: {why}"
        for module, names, line in _imports(path)
        if (why := _private_import(module, names)) is not None
    ]
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------ plural flags


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no sub-commands")


#: (command, plural, singular) of every list-taking flag with a singular spelling.
ALIASES = [
    ("run", "--datasets", "--dataset"),
    ("run", "--learners", "--learner"),
    ("compare", "--datasets", "--dataset"),
    ("compare", "--learners", "--learner"),
    ("compile", "--learners", "--learner"),
    ("fit", "--params", "--param"),
    ("evaluate", "--params", "--param"),
    ("evaluate", "--positive-labels", "--positive"),
    ("fit", "--positive-labels", "--positive"),
    ("score", "--positive-labels", "--positive"),
]


def test_every_list_taking_flag_is_plural_first():
    for name, sub in _subparsers(build_parser()).items():
        for action in sub._actions:
            listing = action.nargs in ("+", "*") or (
                isinstance(action.nargs, int) and action.nargs > 1
            )
            if not listing or not action.option_strings:
                continue
            canonical = action.option_strings[0]
            assert canonical.endswith("s"), f"{name} {canonical}: the plural comes first"
            spelled = [(c, p) for c, p, _ in ALIASES if c == name]
            assert (name, canonical) in spelled or canonical == "--classes", (name, canonical)


@pytest.mark.parametrize(("command", "plural", "singular"), ALIASES)
def test_the_singular_is_an_alias_of_the_plural(command, plural, singular):
    sub = _subparsers(build_parser())[command]
    action = next(a for a in sub._actions if plural in a.option_strings)
    assert action.option_strings == [plural, singular]
    assert plural in sub.format_help()
    prefix = {
        "run": [],
        "compile": [],
        "compare": ["--datasets", "x"] if plural != "--datasets" else [],
        "fit": ["data.svm", "-o", "m"],
        "evaluate": ["data.svm", "-o", "m"],
        "score": ["model.npz", "data.svm"],
    }[command]
    if command in ("fit", "evaluate") and plural == "--params":
        prefix = [*prefix, "--learner", "OPAUC"]
    values = ["a", "b=2"] if plural == "--params" else ["a", "b"]
    parser = build_parser()
    one = parser.parse_args([command, *prefix, plural, *values])
    two = parser.parse_args([command, *prefix, singular, *values])
    assert getattr(one, action.dest) == getattr(two, action.dest) == values


# --------------------------------------------------------------- value grammar


@pytest.mark.parametrize(
    "text", ["3", "-1", "+1", "0.01", ".5", "1e-3", "2E+2", "True", "False", "None", "'x y'",
             '"2^-6"', "[1, 2.5, 'a']", "(1, -2)", "{'a': 1, 2: None}", "[]"],
)  # fmt: skip
def test_python_literals_read_as_python_reads_them(text):
    mine, theirs = parse_value(text), ast.literal_eval(text)
    assert mine == theirs and type(mine) is type(theirs)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("2^-6", 2.0**-6), ("2**-6", 2.0**-6), ("2^3", 8.0), ("10^-3", 10.0**-3),
     (" 2 ^ 0.5 ", 2.0**0.5), ("gra", "gra"), ("class a", "class a"), ("a.csv", "a.csv"),
     ("true", "true"), ("1x", "1x"), ("[2^-2, gra]", [0.25, "gra"])],
)  # fmt: skip
def test_powers_and_bare_words(text, expected):
    value = parse_value(text)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize(
    ("text", "why"),
    [("2^x", "exponent"), ("x^2", "base"), ("2^", "exponent"), ("'open", "quote"),
     ("[1, 2", "missing"), ("[1, 2)]", "unbalanced"), ("", "empty"), ("a,b", "comma"),
     ("2^100000", "too large"), ("0^-1", "negative power"), ("(-8)^0.5", "missing"),
     ("{1}", "KEY: VALUE")],
)  # fmt: skip
def test_bad_values_are_one_line_errors_naming_the_text(text, why):
    with pytest.raises(ValueError) as error:
        parse_value(text)
    message = str(error.value)
    assert "\n" not in message and repr(text) in message and why in message


def test_learner_specs_use_the_same_grammar():
    spec = parse_learner_spec("OAM_gra=OAM(update=gra, eta=2^-6, buffer_size=None)")
    assert (spec.estimator, spec.title) == ("OAM", "OAM_gra")
    assert spec.fixed == {"update": "gra", "eta": 2.0**-6, "buffer_size": None}
    quoted = parse_learner_spec("OAM_gra=OAM(update='gra', eta=0.015625, buffer_size=None)")
    assert quoted.fixed == spec.fixed
    plain = parse_learner_spec("OPAUC")
    assert (plain.estimator, plain.fixed, plain.title) == ("OPAUC", {}, "OPAUC")
    for bad, why in [
        ("OAM(eta=2^x)", "'2^x'"),
        ("OAM(3)", "name=value"),
        ("OAM(eta=1, eta=2)", "twice"),
        ("OAM(eta=1", "')' is missing"),
        ("1OAM", "class name"),
        ("OAM(update='gra)", "quote"),
    ]:
        with pytest.raises(ValueError, match="cannot read learner") as error:
            parse_learner_spec(bad)
        assert why in str(error.value) and repr(bad) in str(error.value)


def test_dataset_rules_use_the_same_grammar():
    assert parse_data_spec("x.csv:positive=1,g,'2'").binary == ("positive", (1, "g", "2"))
    assert parse_data_spec("letter:one_vs_rest=2^3").binary == ("one_vs_rest", 8.0)
    with pytest.raises(ValueError, match="'2\\^x'"):
        parse_data_spec("letter:one_vs_rest=2^x")


def test_the_cli_reads_every_value_by_the_grammar(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=200) > 0, 1, -1)
    data = tmp_path / "train.svm"
    dump_svmlight_file(X, y, str(data), zero_based=False)
    fit = ["fit", str(data), "--learner", "OPAUC", "--no-scale", "--no-progress"]
    assert main([*fit, "-o", str(tmp_path / "a"), "--params", "eta=2^-3", "lam=1e-3"]) == 0
    assert main([*fit, "-o", str(tmp_path / "b"), "--param", "eta=0.125", "lam=0.001"]) == 0
    a, b = load_model(tmp_path / "a.npz"), load_model(tmp_path / "b.npz")
    assert (a.eta, a.lam) == (0.125, 0.001)
    assert np.array_equal(a.decision_function(X), b.decision_function(X))
    capsys.readouterr()
    for argv, token in [
        ([*fit, "-o", str(tmp_path / "c"), "--params", "eta=2^x"], "'2^x'"),
        (["compare", "--learners", "OAM(eta=2^x)", "--datasets", "diabetes"], "'2^x'"),
        (["compare", "--learners", "OAM", "--datasets", "d:one_vs_rest='x"], repr("'x")),
    ]:
        code = main(argv)
        err = capsys.readouterr().err.strip()
        assert code == 2 and len(err.splitlines()) == 1 and token in err, err
    assert not (tmp_path / "c.npz").exists()
    for flag in ("--positive-labels", "--positive"):  # the message names the flag typed
        code = main([*fit, "-o", str(tmp_path / "d"), flag, "7"])
        err = capsys.readouterr().err.strip()
        assert code == 2 and f"{flag} 7: no example" in err, err
