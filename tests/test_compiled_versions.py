"""One compiled version of a kernel per kind of state, whatever the caller passes.

numba compiles a kernel once for each new combination of argument types, and a large
kernel takes seconds: read-only and writeable arrays are two types, and so is a
constant passed from compiled code (``Literal[int](0)``) and ``int64``. The package
hands kernels read-only views of the rows and plain values
(:func:`aucstream._kernels.plain`), so a learner's chunks, its one-row calls and a
component called directly share one version.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from aucstream import OPAUC, SOLAM
from aucstream._chunks import csr_arrays
from aucstream._kernels import jit, plain


@jit
def _callee(a, k, flag):
    return a[0] + k + (1.0 if flag else 0.0)


@jit
def _through_plain(a):
    return _callee(a, plain(3), plain(True))


def test_plain_values_take_the_usual_version():
    a = np.ones(2)
    assert _callee(a, 3, True) == _through_plain(a) == 5.0
    assert not any("Literal" in str(t) for s in _callee.signatures for t in s)


def _stream(n=300, d=7, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + rng.normal(size=n) > 0.5).astype(int)
    return X, y


def test_solam_one_row_calls_compile_no_literal_version():
    from aucstream.solam import _solam_chunk

    X, y = _stream()
    model = SOLAM().fit(X[:50], y[:50])
    for x, label in zip(X[50:60], y[50:60]):
        model.learn_one(dict(enumerate(x)), int(label))
    assert _solam_chunk.signatures
    assert not any("Literal" in str(t) for s in _solam_chunk.signatures for t in s)


@pytest.mark.parametrize("covariance", ["randomized", "fd"])
def test_the_low_rank_kernel_reads_rows_through_read_only_views(covariance):
    from aucstream.opauc import _opauc_lowrank_chunk

    X, y = _stream()
    frozen = X.copy()
    frozen.flags.writeable = False
    model = OPAUC(covariance=covariance, random_state=0)
    model.partial_fit(X[:100], y[:100], classes=[0, 1])
    model.partial_fit(frozen[100:200], y[100:200])
    model.partial_fit(sp.csr_matrix(X[200:]), y[200:])
    for x, label in zip(X[:5], y[:5]):
        model.learn_one(dict(enumerate(x)), int(label))
    rows = [s[2:5] for s in _opauc_lowrank_chunk.signatures]
    assert rows and all(not t.mutable for r in rows for t in r), rows


@pytest.mark.parametrize("X", [np.ones((3, 4)), sp.csr_matrix(np.eye(4)[:3])], ids=["dense", "csr"])
def test_csr_arrays_are_read_only_views(X):
    indptr, indices, data, d = csr_arrays(X)
    assert d == 4 and not any(a.flags.writeable for a in (indptr, indices, data))
    with pytest.raises(ValueError, match="read-only"):
        data[0] = 2.0
