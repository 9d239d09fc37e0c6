"""Property-based fuzzing of the readers and of ``load_model`` (bounded, for CI).

LIBSVM and CSV texts are generated valid and then mutated (characters inserted,
replaced, deleted: underscores, full-width digits, commas, colons, blanks, form
feeds, carriage returns, ``#``...). A small reference parser written here from the
documented grammar says what each text means; the readers must return exactly that,
or raise ValueError naming the file and one of the lines the reference refuses —
never another exception, never a different result. ``load_model`` gets a real saved
model with flipped or cut bytes: it loads the same model or raises a clear
ValueError/OSError.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import aucstream
from aucstream import SOLAM
from aucstream.datasets import load_csv, load_svmlight

FUZZ = settings(
    max_examples=40,
    deadline=5000,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_LINES = re.compile(r"\r\n|\r|\n")


def _number(text: str) -> float | None:
    """The documented number grammar: the value, or None (refused)."""
    if _NUMBER.fullmatch(text) is None:
        return None
    value = float(text)
    return value if math.isfinite(value) else None


class Refused(Exception):
    """The reference refuses the text; ``lines`` are the lines it refuses."""

    def __init__(self, lines: set[int]):
        super().__init__(lines)
        self.lines = lines


@pytest.fixture(scope="module", autouse=True)
def _compiled(tmp_path_factory):
    """Load the compiled parser before the first timed example."""
    path = tmp_path_factory.mktemp("warm") / "w.svm"
    path.write_bytes(b"1 1:2\n")
    load_svmlight(path, n_features=1)
    load_csv(path, delimiter=" ", header=False)


# ------------------------------------------------------------------ LIBSVM


def _svm_rows(text: str):
    """``(line number, label, [(index, value), ...])`` per example, or a line number
    for a line outside the grammar."""
    for lineno, line in enumerate(_LINES.split(text), 1):
        body = line.split("#", 1)[0].strip(" \t")
        if not body:
            continue
        tokens = re.split(r"[ \t]+", body)
        label = _number(tokens[0])
        pairs: list[tuple[int, float]] = []
        ok = label is not None
        for tok in tokens[1:]:
            if not ok:
                break
            if tok.startswith("qid:"):
                continue
            index, sep, value = tok.partition(":")
            number = _number(value) if ":" not in value else None
            if not sep or re.fullmatch(r"[0-9]+", index) is None or number is None:
                ok = False
            elif int(index) >= 2**62 or (pairs and int(index) <= pairs[-1][0]):
                ok = False
            else:
                pairs.append((int(index), number))
        yield (lineno, label, pairs) if ok else lineno


def reference_svmlight(text: str, zero_based, chunk_size: int, n_features: int | None):
    rows, bad = [], set()
    for row in _svm_rows(text):
        (bad.add(row) if isinstance(row, int) else rows.append(row))
    zero_lines = [lineno for lineno, _, pairs in rows if pairs and pairs[0][0] == 0]
    if zero_based == "auto" and n_features is not None:
        zero_based = False
    if zero_based == "auto":
        first = {lineno for lineno, _, _ in rows[:chunk_size]}
        zero_based = any(lineno in first for lineno in zero_lines)
    if not zero_based:
        bad.update(zero_lines)
    offset = 0 if zero_based else 1
    top = max((pairs[-1][0] for _, _, pairs in rows if pairs), default=-1)
    width = n_features if n_features is not None else max(top + 1 - offset, 0)
    bad.update(lineno for lineno, _, pairs in rows if pairs and pairs[-1][0] - offset >= width)
    if bad:
        raise Refused(bad)
    X = np.zeros((len(rows), width))
    for r, (_, _, pairs) in enumerate(rows):
        for index, value in pairs:
            X[r, index - offset] = value
    return X, np.array([label for _, label, _ in rows])


_DIGITS = st.integers(0, 10**6).map(str)
_SVM_NUMBER = st.one_of(
    _DIGITS,
    st.floats(allow_nan=False, allow_infinity=False, width=64).map(repr),
    st.tuples(st.sampled_from(["", "-", "+"]), _DIGITS, _DIGITS).map("{0[0]}{0[1]}.{0[2]}".format),
    st.tuples(_DIGITS, st.integers(-30, 30)).map(lambda t: f"{t[0]}e{t[1]}"),
)


@st.composite
def _svm_line(draw):
    label = draw(st.sampled_from(["1", "-1", "+1", "0", "2", "1.0"]))
    indices = sorted(draw(st.sets(st.integers(0, 12), max_size=5)))
    tokens = [f"{i}:{draw(_SVM_NUMBER)}" for i in indices]
    if draw(st.booleans()) and tokens:
        tokens.insert(0, f"qid:{draw(st.integers(0, 9))}")
    tail = draw(st.sampled_from(["", "", " # c", "\t#x:1"]))
    sep = draw(st.sampled_from([" ", " ", "\t", "  "]))
    return sep.join([label, *tokens]) + tail


_NOISE = ["_", "\uff11", "\uff10", ",", ":", " ", "\t", "#", "e", ".", "-", "+", "0", "1"]
_NOISE += ["\x0c", "\r", "\n", "q", "\u00e9", "\u00a0", "x", "9", "inf"]


@st.composite
def _mutated(draw, text: str, noise: list[str]):
    for _ in range(draw(st.integers(0, 3))):
        if not text:
            break
        at = draw(st.integers(0, len(text) - 1))
        what = draw(st.sampled_from(["insert", "replace", "delete"]))
        piece = draw(st.sampled_from(noise))
        if what == "insert":
            text = text[:at] + piece + text[at:]
        elif what == "replace":
            text = text[:at] + piece + text[at + 1 :]
        else:
            text = text[:at] + text[at + 1 :]
    return text


@st.composite
def _svm_text(draw):
    lines = draw(st.lists(_svm_line(), min_size=0, max_size=12))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = newline.join(lines) + (newline if draw(st.booleans()) else "")
    return draw(_mutated(text, _NOISE))


def _check_outcome(path, run, expected):
    """``run()`` gives ``expected`` (arrays) or, if the reference refuses, a ValueError
    naming the file and one of the refused lines."""
    try:
        result = run()
    except (ValueError, TypeError, OSError) as error:
        message = str(error)
        assert str(path) in message, message
        if not isinstance(expected, Refused):
            raise AssertionError(f"refused a text the reference reads: {message}") from error
        line = re.search(r", line (\d+):", message)
        assert line and int(line.group(1)) in expected.lines, (message, expected.lines)
        return
    assert not isinstance(expected, Refused), f"read a text refused at {expected.lines}"
    return result


@FUZZ
@given(
    text=_svm_text(),
    zero_based=st.sampled_from(["auto", True, False]),
    chunk_size=st.sampled_from([1, 2, 5, 1000]),
    given_width=st.booleans(),
)
def test_fuzz_svmlight(tmp_path, text, zero_based, chunk_size, given_width):
    path = tmp_path / "fuzz.svm"
    path.write_bytes(text.encode("utf-8"))
    n_features = 14 if given_width else None
    try:
        expected = reference_svmlight(text, zero_based, chunk_size, n_features)
    except Refused as refused:
        expected = refused

    def run():
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return load_svmlight(
                path, n_features=n_features, zero_based=zero_based, chunk_size=chunk_size
            )

    result = _check_outcome(path, run, expected)
    if result is not None:
        X, y = result
        ref_X, ref_y = expected
        assert X.shape == ref_X.shape
        np.testing.assert_array_equal(X.toarray(), ref_X)
        np.testing.assert_array_equal(y, ref_y)


# --------------------------------------------------------------------- CSV


def reference_csv(text: str, n_rows_hint=None):
    """Comma separated, no quotes, no header, the last column the label."""
    records = []
    for lineno, line in enumerate(_LINES.split(text), 1):
        fields = line.split(",")
        if len(fields) == 1 and not fields[0].strip():
            continue
        records.append((lineno, fields))
    if not records:
        return np.zeros((0, 0)), np.zeros(0)
    n_fields = len(records[0][1])
    bad = set()
    rows = []
    for lineno, fields in records:
        values = [_number(f.strip(" \t\n\v\f\r")) for f in fields]
        if len(fields) != n_fields or any(v is None for v in values):
            bad.add(lineno)
        else:
            rows.append(values)
    if bad:
        raise Refused(bad)
    table = np.array(rows, dtype=np.float64).reshape(len(rows), n_fields)
    return table[:, :-1], table[:, -1]


_CSV_NUMBER = st.one_of(
    _DIGITS,
    st.floats(allow_nan=False, allow_infinity=False, width=64).map(repr),
    st.tuples(_DIGITS, st.integers(-30, 30)).map(lambda t: f"{t[0]}e{t[1]}"),
    st.tuples(st.sampled_from(["", " ", "\t"]), _DIGITS).map(lambda t: f"{t[0]}{t[1]} "),
)


@st.composite
def _csv_text(draw):
    width = draw(st.integers(1, 4))
    rows = draw(st.lists(st.lists(_CSV_NUMBER, min_size=width, max_size=width), max_size=10))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = newline.join(",".join(row) for row in rows) + newline
    noise = [n for n in _NOISE if n not in ("#", ":", "q", "inf")] + ["1,000", "1_000"]
    return draw(_mutated(text, noise))


@FUZZ
@given(text=_csv_text(), chunk_size=st.sampled_from([1, 3, 1000]))
def test_fuzz_csv(tmp_path, text, chunk_size):
    path = tmp_path / "fuzz.csv"
    path.write_bytes(text.encode("utf-8"))
    try:
        expected = reference_csv(text)
    except Refused as refused:
        expected = refused

    def run():
        return load_csv(path, header=False, label_type="numeric", chunk_size=chunk_size)

    result = _check_outcome(path, run, expected)
    if result is not None:
        X, y = result
        ref_X, ref_y = expected
        assert X.shape[0] == ref_X.shape[0]
        if X.shape[0]:
            np.testing.assert_array_equal(X, ref_X)
            np.testing.assert_array_equal(y, ref_y)


# -------------------------------------------------------------- load_model


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=80) > 0, 1, -1)
    model = SOLAM(random_state=0).fit(X, y)
    path = aucstream.save_model(model, tmp_path_factory.mktemp("model") / "solam.npz")
    return model, path.read_bytes(), X


@FUZZ
@given(
    how=st.sampled_from(["flip", "cut", "flip2"]),
    where=st.floats(0.0, 1.0, exclude_max=True),
    other=st.floats(0.0, 1.0, exclude_max=True),
    mask=st.integers(1, 255),
)
def test_fuzz_load_model(tmp_path, saved_model, how, where, other, mask):
    model, data, X = saved_model
    data = bytearray(data)
    at = int(where * len(data))
    if how == "cut":
        data = data[:at]
    else:
        data[at] ^= mask
        if how == "flip2":
            data[int(other * len(data))] ^= mask
    path = tmp_path / "damaged.npz"
    path.write_bytes(bytes(data))
    try:
        loaded = aucstream.load_model(path)
    except (ValueError, OSError) as error:
        assert str(error), "an error without a message"
        return
    assert type(loaded) is type(model)
    assert loaded.get_params() == model.get_params()
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
