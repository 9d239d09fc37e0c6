"""The one grammar of values written as text: command-line parameters, labels, specs.

Every value aucstream reads from a command line or a spec string (``fit --params``,
``--positives``, ``--classes``, ``--label-column``, ``compare --sweep``, the
parameters of ``--learners OAM(update=gra)``, the classes of ``--datasets
x:positive=1,2``) is read by :func:`parse_value` with this grammar::

    value    := number | power | bool | none | string | list | tuple | dict | word
    number   := [+-] digits [. digits] [e [+-] digits]    3  -1  0.01  1e-3  +1
    power    := number ^ number  |  number ** number      2^-6 = 0.015625 (always a float)
    bool     := True | False
    none     := None
    string   := 'text' | "text"                           Python's quoting rules
    list     := [ value, ... ]      tuple := ( value, ... )      dict := { value: value, ... }
    word     := any other text without quotes, brackets, commas, ^ or **
                                                          gra  exp  class-a  (a string)
    learner  := [LABEL=] Name [ ( key=value, ... ) ]      OAM_gra=OAM(update=gra, eta=2^-6)

A word is a string as written, so ``update=gra`` and ``update='gra'`` are the same;
quote a string that would otherwise read as something else (``'1'``, ``'None'``).
Text that starts to be one of the forms and is not (``2^x``, ``'open``, ``[1, 2``) is
an error: :class:`ValueError` with one line naming the text.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

__all__ = ["parse_call", "parse_value", "split_top_level"]

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CLOSING = {"[": "]", "(": ")", "{": "}"}
_WORDS = {"True": True, "False": False, "None": None}


def _bad(text: str, why: str) -> ValueError:
    return ValueError(f"cannot read the value {text!r}: {why}")


def split_top_level(text: str, separator: str = ",", *, whole: str | None = None) -> list[str]:
    """``text`` split at ``separator`` outside quotes and brackets (items stripped).

    Parameters
    ----------
    text : str
    separator : str, default=","
        One character.
    whole : str, optional
        The text named in errors (default: ``text``), when ``text`` is part of it.

    Returns
    -------
    list of str
        ``[]`` for blank text.

    Raises
    ------
    ValueError
        For an unclosed quote or an unbalanced bracket, naming ``text``.

    Examples
    --------
    >>> from aucstream.evaluation._values import split_top_level
    >>> split_top_level("eta=2^-6, update='a,b', grid=[1, 2]")
    ['eta=2^-6', "update='a,b'", 'grid=[1, 2]']
    """
    named = text if whole is None else whole
    items, depth, quote, start = [], [], None, 0
    for i, char in enumerate(text):
        if quote:
            if char == "\\":
                continue
            if char == quote and text[i - 1] != "\\":
                quote = None
        elif char in "'\"":
            quote = char
        elif char in _CLOSING:
            depth.append(_CLOSING[char])
        elif char in ")]}":
            if not depth or depth.pop() != char:
                raise _bad(named, f"unbalanced {char!r}")
        elif char == separator and not depth:
            items.append(text[start:i].strip())
            start = i + 1
    if quote:
        raise _bad(named, f"the quote {quote} is not closed")
    if depth:
        raise _bad(named, f"{depth[-1]!r} is missing")
    last = text[start:].strip()
    if items or last:
        items.append(last)
    return items


def _number(text: str) -> int | float:
    if _NUMBER.fullmatch(text) is None:
        raise _bad(text, "not a number")
    try:
        return int(text)
    except ValueError:
        return float(text)


def parse_value(text: str) -> Any:
    """A value from its text, by the grammar of the module (:mod:`._values`).

    Parameters
    ----------
    text : str

    Returns
    -------
    int, float, bool, None, str, list, tuple or dict

    Raises
    ------
    ValueError
        One line naming the text, for a form begun and not finished (``2^x``,
        ``'open``, ``[1,``).

    Examples
    --------
    >>> from aucstream.evaluation import parse_value
    >>> parse_value("2^-6"), parse_value("1e-3"), parse_value("-1"), parse_value("True")
    (0.015625, 0.001, -1, True)
    >>> parse_value("gra"), parse_value("'None'"), parse_value("None")
    ('gra', 'None', None)
    >>> parse_value("[2^-2, (1, b)]")
    [0.25, (1, 'b')]
    >>> parse_value("2^x")
    Traceback (most recent call last):
    ...
    ValueError: cannot read the value '2^x': the exponent of a power must be a number
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_value reads a str, got {type(text).__name__}")
    stripped = text.strip()
    if not stripped:
        raise _bad(text, "it is empty")
    if stripped in _WORDS:
        return _WORDS[stripped]
    if _NUMBER.fullmatch(stripped):
        return _number(stripped)
    first = stripped[0]
    if first in "'\"":
        try:
            value = ast.literal_eval(stripped)
        except (ValueError, SyntaxError):
            value = None
        if not isinstance(value, str):
            raise _bad(text, f"a string opened with {first} must be one quoted string")
        return value
    if first in _CLOSING:
        if stripped[-1] != _CLOSING[first]:
            raise _bad(text, f"{_CLOSING[first]!r} is missing at the end")
        inner = stripped[1:-1]
        items = split_top_level(inner, whole=text)
        if first == "{":
            return dict(_pair(item, text) for item in items)
        values = [parse_value(item) for item in items]
        return values if first == "[" else tuple(values)
    for operator in ("**", "^"):
        if operator in stripped:
            base, _, exponent = stripped.partition(operator)
            base, exponent = base.strip(), exponent.strip()
            if _NUMBER.fullmatch(base) is None:
                raise _bad(text, "the base of a power must be a number")
            if _NUMBER.fullmatch(exponent) is None:
                raise _bad(text, "the exponent of a power must be a number")
            try:
                value = float(base) ** float(exponent)
            except OverflowError:
                raise _bad(text, "the power is too large") from None
            except ZeroDivisionError:
                raise _bad(text, "0 to a negative power") from None
            if isinstance(value, complex) or not math.isfinite(value):
                raise _bad(text, "the power is not a finite real number")
            return value
    if any(char in stripped for char in "'\"[](){},"):
        raise _bad(text, "a word cannot hold quotes, brackets or commas (quote it)")
    return stripped


def _pair(item: str, text: str) -> tuple:
    key, sep, value = item.partition(":")
    if not sep:
        raise _bad(text, f"the dict item {item!r} must be KEY: VALUE")
    return parse_value(key), parse_value(value)


def parse_call(text: str) -> tuple[str | None, str, dict[str, Any]]:
    """``[LABEL=]Name[(key=value, ...)]`` as ``(label, name, params)``.

    The values are read by :func:`parse_value`.

    Parameters
    ----------
    text : str

    Returns
    -------
    label : str or None
    name : str
    params : dict

    Raises
    ------
    ValueError
        One line naming ``text`` and the part that could not be read.

    Examples
    --------
    >>> from aucstream.evaluation._values import parse_call
    >>> parse_call("OAM_gra=OAM(update=gra, eta=2^-6)")
    ('OAM_gra', 'OAM', {'update': 'gra', 'eta': 0.015625})
    >>> parse_call("OPAUC")
    (None, 'OPAUC', {})
    """
    stripped = text.strip()
    before, sep, call = stripped.partition("=")
    label: str | None = None
    if not sep or "(" in before:
        call = stripped
    else:
        label = before.strip()
        if not label:
            raise ValueError(f"cannot read learner {text!r}: the label before '=' is empty")
        call = call.strip()
    name, paren, rest = call.partition("(")
    name = name.strip()
    if _NAME.fullmatch(name) is None:
        raise ValueError(
            f"cannot read learner {text!r}: {name!r} is not a class name; "
            "write Class or Class(name=value, ...)"
        )
    if not paren:
        return label, name, {}
    if not rest.endswith(")"):
        raise ValueError(f"cannot read learner {text!r}: ')' is missing at the end")
    params: dict[str, Any] = {}
    try:
        items = split_top_level(rest[:-1], whole=text)
    except ValueError as error:
        raise ValueError(f"cannot read learner {text!r}: {error}") from None
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or _NAME.fullmatch(key) is None:
            raise ValueError(
                f"cannot read learner {text!r}: {item!r} is not name=value "
                "(parameters are given by name)"
            )
        if key in params:
            raise ValueError(f"cannot read learner {text!r}: {key!r} is given twice")
        try:
            params[key] = parse_value(value)
        except ValueError as error:
            raise ValueError(f"cannot read learner {text!r}: {error}") from None
    return label, name, params
