"""Throughput and peak memory of OPAUC's covariance summaries at d = 10^6 (issue 3).

A generated sparse, text-like stream: ``--n`` examples (default 100,000) over
``--d`` features (default 10^6), exactly ``--k`` non-zeros per example (default 50).
Feature ranks follow a Zipf law with exponent 1 (as words do), values are positive
(log-normal, like tf-idf weights) and each row has unit L2 norm. Labels come from a
planted linear model (Gaussian weights on every feature) plus noise, half positive.

Each summary runs in its own subprocess (so peak memory is its own): one pass of
``OPAUC(covariance=kind, sketch_size=50)`` in chunks of 8192 examples (``partial_fit``,
which is what ``fit`` does); we report examples per second over the pass (numba
compilation excluded: a warm-up fit on a small stream comes first), over its second
half (the steady rate of a long stream: on a fresh machine, the first touch of each
page of the 0.76 GB of sketches costs up to a second in all, which a pass of 20,000
examples mostly measures), peak resident memory (``ru_maxrss``) and the test AUC on
held-out examples. ``"full"`` is skipped: its two d x d matrices would take 16 TB.

``run(quick)`` (for ``benchmarks/run.py``) returns one row per sketch with a target
(randomized and hash: 100,000 examples/s; fd: 1,000) as its "peer" (its rate over
the pass, and over the pass's second half), then the second half of each linear
sketch's pass (float64 and float32) against its memory floor (a loop that only reads
the rows the pass reads: :func:`read_floor`), then one row per
sketch with ``dtype="float32"`` (float32 d x tau sketches) against that float64 pass:
the ratio of their examples per second (above 1: float32 faster), the bytes of the
summaries and the difference of the test AUCs. ``--dtype float32`` runs the float32
summaries from the command line. Last, the randomized and hashed passes are repeated
at d = 2,000 (sketches in the caches) and 10^5, each against its rate at d = 10^6
(second halves): what the pass loses with d is the time spent reaching the sketches'
rows, since the work per example, O(k tau + tau^2), does not depend on d.

The O(k) learners (issue 33): ``--learners`` runs FTRL-AUC and SPAM at their
defaults, and ``SGDClassifier`` with the log and hinge losses (l2, l1 and elastic-net
penalties), on the same stream (one file written once, read by every process), each
pass in its own subprocess through ``partial_fit`` in chunks of ``--chunk`` (10,000)
rows, ``--repeats`` times in turn (the best rate of each is kept: the machine is
shared). Reported: rows per second over the pass (compilation excluded: a warm-up
fit comes first), its ratio to ``SGDClassifier(loss="log_loss")``'s, test AUC (exact,
``aucstream.metrics.roc_auc``) and its difference to SGD(log_loss)'s, the fraction of
zero coefficients (features never seen included: about 40% of the 10^6 here), peak
resident memory (data included), the bytes of the model's arrays, and the peak of
what a second, untimed pass allocates (``tracemalloc``: the state, the copies of the
calls' transactions and temporaries; the loaded data dominate the resident peak).

Usage::

    python benchmarks/bench_highdim.py --learners      # FTRL-AUC, SPAM against SGD
    python benchmarks/bench_highdim.py                 # all four sketches, markdown table
    python benchmarks/bench_highdim.py --kinds hash --n 20000
    python benchmarks/bench_highdim.py --kinds hash fd --centering exact
    python benchmarks/bench_highdim.py --kinds hash fd --dtype float32
    python benchmarks/bench_highdim.py --product-cost 50000   # OPAUC_s's P w at full budget
    python benchmarks/bench_highdim.py --overlap   # do reads and arithmetic overlap here?
    python benchmarks/bench_highdim.py --split --kinds randomized   # pass, kernel, floor
    python benchmarks/bench_highdim.py --oam-widths   # OAM's step against the width
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numba as nb
import numpy as np
import scipy.sparse as sp

from aucstream._kernels import prefetch_rows

KINDS = ("randomized", "hash", "fd", "sparse")


@nb.njit(cache=True)
def _read_rows(pair, s0, s1, v, indptr, indices, out):
    """What a pass of the linear sketches must read, and nothing else: for each
    example, the rows of its features in the d x 2 tau array that holds both classes'
    sketches side by side (``aucstream.covariance.sketch_pair``: the array the pass
    reads, one row per feature) and the entries of the class sums and of v, with the
    kernel's prefetch of the next example's rows
    (:func:`aucstream._kernels.prefetch_rows`, on the same arrays: the kernel
    prefetches at d = 10^6, where the floor is measured,
    ``aucstream.opauc.PREFETCH_BYTES``). Sums them into ``out`` (2 tau,)."""
    n = indptr.shape[0] - 1
    for r in range(n):
        lo, hi = indptr[r], indptr[r + 1]
        if r + 1 < n:
            ahead = indices[hi : indptr[r + 2]]
            prefetch_rows(pair, ahead)
            prefetch_rows(s0, ahead)
            prefetch_rows(s1, ahead)
            prefetch_rows(v, ahead)
        for a in range(lo, hi):
            i = indices[a]
            row = pair[i]
            for j in range(out.shape[0]):
                out[j] += row[j]
            out[0] += s0[i] + s1[i] + v[i]


def _floor_seconds(model, X, clock) -> float:
    """Seconds (by ``clock``, best of 3) of :func:`_read_rows` over the CSR stream ``X``
    with the interleaved sketches, class sums and ``v_`` of a fitted low-rank
    ``model``: the memory floor of a pass (a first short run compiles)."""
    from aucstream.covariance import sketch_pair

    (neg, pos), v = model.stats_, model.v_
    pair = sketch_pair(neg, pos)
    args = (pair, neg.sum_, pos.sum_, v)
    out = np.zeros(pair.shape[1])
    indptr, indices = X.indptr.astype(np.int64), X.indices.astype(np.int64)
    _read_rows(*args, indptr[:3], indices, out)
    best = np.inf
    for _ in range(3):
        start = clock()
        _read_rows(*args, indptr, indices, out)
        best = min(best, clock() - start)
    return best


def read_floor(model, X) -> float:
    """Examples per second of the memory floor (:func:`_floor_seconds`, wall clock)."""
    return X.shape[0] / _floor_seconds(model, X, time.perf_counter)


def _floor_cpu(model, X) -> float:
    """Processor microseconds per example of the floor (:func:`_floor_seconds`),
    comparable with a pass timed the same way on a machine whose other jobs take
    turns on the cores."""
    return _floor_seconds(model, X, time.process_time) / X.shape[0] * 1e6


def oam_widths(widths=(1000, 4096, 16384, 65536, 262144), n: int = 3000, seed: int = 0):
    """Processor microseconds a row of ``OAM(update="gra", C=2**-8)``, the hashed OPAUC
    of the default race (``OPAUC(eta=2**-6, column_scale=None, covariance="hash",
    centering="exact", sketch_size=50)``) and ``SOLAM()`` on sparse rows of about 10
    non-zeros (30% positives) at each width: the first 100 rows warm up, the other
    ``n - 100`` are timed (why the default race holds OAM only up to
    ``aucstream._candidates.SMALL`` features: its step reads its buffered rows whole)."""
    from aucstream import OAM, OPAUC, SOLAM

    makers = {
        "OAM": lambda: OAM(update="gra", C=2**-8, random_state=0),
        "hashed OPAUC": lambda: OPAUC(
            eta=2**-6, column_scale=None, covariance="hash", centering="exact", sketch_size=50
        ),
        "SOLAM": SOLAM,
    }
    rng = np.random.default_rng(seed)
    rows = []
    for d in widths:
        X = sp.random(n, d, density=min(1.0, 10 / d), format="csr", random_state=rng)
        y = np.where(rng.random(n) < 0.3, 1, -1)
        row = {"features": d}
        for name, make in makers.items():
            model = make().partial_fit(X[:100], y[:100], classes=[-1, 1])
            start = time.process_time()
            model.partial_fit(X[100:], y[100:])
            row[name] = (time.process_time() - start) / (n - 100) * 1e6
        rows.append(row)
    return rows


def split_pass(kind: str, dtype: str, n: int, d: int, k: int, tau: int, seed: int) -> dict:
    """Where a pass's time goes, against its floor, in processor time: OPAUC
    (``eta = lam = 2^-10``, chunks of 8192) learns the first half of the stream; then
    for each chunk of the second half, the floor over its rows (:func:`_floor_cpu`)
    and right after it the chunk's ``partial_fit``, with the compiled kernel timed
    apart (``aucstream.opauc._opauc_lowrank_chunk``, looked up by the engine at each
    call). Returns the medians over the chunks of microseconds per example (floor,
    pass, kernel, wall time of the pass) and of the ratios floor / pass and floor /
    kernel (the pass's and the kernel's rate over the floor's), and a checksum of the
    model (the same code gives the same number)."""
    import aucstream.opauc as package
    from aucstream import OPAUC

    X, y = make_stream(n, d, k, seed)
    warm = OPAUC(covariance=kind, sketch_size=4, random_state=0, dtype=dtype)
    warm.fit(X[:300, :1000], y[:300])
    model = OPAUC(
        eta=2**-10, lam=2**-10, covariance=kind, sketch_size=tau, random_state=0, dtype=dtype
    )
    chunk, half = 8192, (n // 2) // 8192 * 8192
    model.partial_fit(X[:chunk], y[:chunk], classes=[-1, 1])
    for lo in range(chunk, half, chunk):
        model.partial_fit(X[lo : lo + chunk], y[lo : lo + chunk])
    kernel, spent = package._opauc_lowrank_chunk, [0.0]

    def timed(*args):
        start = time.process_time()
        try:
            return kernel(*args)
        finally:
            spent[0] += time.process_time() - start

    package._opauc_lowrank_chunk = timed
    parts = []
    try:
        for lo in range(half, n, chunk):
            rows = X[lo : lo + chunk]
            floor = _floor_cpu(model, rows)
            spent[0] = 0.0
            start, wall = time.process_time(), time.perf_counter()
            model.partial_fit(rows, y[lo : lo + chunk])
            cpu, wall = time.process_time() - start, time.perf_counter() - wall
            m = rows.shape[0] / 1e6
            parts.append((floor, cpu / m, spent[0] / m, wall / m))
    finally:
        package._opauc_lowrank_chunk = kernel
    t = np.array(parts)
    return {
        "kind": kind,
        "dtype": dtype,
        **dict(zip(("floor_us", "pass_us", "kernel_us", "wall_us"), np.median(t, axis=0))),
        "floor / pass": float(np.median(t[:, 0] / t[:, 1])),
        "floor / kernel": float(np.median(t[:, 0] / t[:, 2])),
        "checksum": float(model.w_[:1000].sum()),
    }


@nb.njit(cache=True)
def _read_and_work(pair, indptr, indices, out, work, sweeps, prefetching):
    """:func:`_read_rows`' reads of the ``pair`` (with its prefetch of the next
    example's rows when ``prefetching``) and, after each row read, ``sweeps`` sweeps
    of arithmetic over ``work`` (a small array, in the caches, that does not depend
    on the rows read): a pass whose memory reads and arithmetic could overlap
    completely (:func:`overlap_probe`)."""
    n = indptr.shape[0] - 1
    for r in range(n):
        lo, hi = indptr[r], indptr[r + 1]
        if prefetching and r + 1 < n:
            prefetch_rows(pair, indices[hi : indptr[r + 2]])
        for a in range(lo, hi):
            row = pair[indices[a]]
            for j in range(out.shape[0]):
                out[j] += row[j]
            for _ in range(sweeps):
                for j in range(work.shape[0]):
                    work[j] = work[j] * 0.999 + 1e-9


def overlap_probe(n: int = 30_000, d: int = 1_000_000, k: int = 50, tau: int = 50) -> list:
    """Whether this machine overlaps a pass's random reads with its arithmetic: the
    reads of :func:`_read_rows` alone (the memory), the arithmetic alone (every row
    read is the same one, in the caches), and both in one loop with the prefetch of
    the next example's rows and without it (:func:`_read_and_work`), in microseconds
    per example (median of 3, alternated), for a few amounts of arithmetic per row.
    ``overlap`` is the share of the shorter part hidden under the longer: 1 when the
    loop takes the longer of the two, 0 when it takes their sum. A pass's ratio to
    its memory floor is bounded by it: with no overlap, a pass with as much
    arithmetic per example as reading its rows takes costs twice its floor."""
    X, _ = make_stream(n, d, k, seed=1)
    pair = np.full((d, 2 * tau), 1e-3)  # (every page touched)
    indptr, indices = X.indptr.astype(np.int64), X.indices.astype(np.int64)
    same = np.zeros_like(indices)
    out, work = np.zeros(2 * tau), np.ones(2 * tau)
    _read_and_work(pair, indptr[:3], indices, out, work, 1, True)

    def per_example(idx, sweeps, prefetching):
        start = time.perf_counter()
        _read_and_work(pair, indptr, idx, out, work, sweeps, prefetching)
        return (time.perf_counter() - start) / n * 1e6

    rows = []
    for sweeps in (2, 4, 8):
        t = {"memory": [], "arithmetic": [], "both": [], "both, no prefetch": []}
        for _ in range(3):
            t["memory"].append(per_example(indices, 0, True))
            t["arithmetic"].append(per_example(same, sweeps, False))
            t["both"].append(per_example(indices, sweeps, True))
            t["both, no prefetch"].append(per_example(indices, sweeps, False))
        m = {key: float(np.median(v)) for key, v in t.items()}
        hidden = m["memory"] + m["arithmetic"] - m["both"]
        rows.append({"sweeps": sweeps, **m, "overlap": hidden / min(m["memory"], m["arithmetic"])})
    return rows


@nb.njit(cache=True)
def _first_distinct(candidates, k, cols, done):
    """Per row, the first k distinct candidates (rows with fewer stay not done)."""
    for r in range(candidates.shape[0]):
        if done[r]:
            continue
        m = 0
        for c in candidates[r]:
            fresh = True
            for t in range(m):
                if cols[r, t] == c:
                    fresh = False
                    break
            if fresh:
                cols[r, m] = c
                m += 1
                if m == k:
                    done[r] = True
                    break


def make_stream(n: int, d: int, k: int, seed: int = 0, exponent: float = 1.0):
    """A CSR stream (n x d, k non-zeros per row, unit rows) and labels in {-1, +1}."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, d + 1) ** exponent
    cdf = np.cumsum(weights / weights.sum())
    cols = np.zeros((n, k), dtype=np.int64)
    done = np.zeros(n, dtype=np.bool_)
    while not done.all():  # Zipf draws repeat: take the first k distinct of 3k
        candidates = np.minimum(np.searchsorted(cdf, rng.random((n, 3 * k))), d - 1)
        _first_distinct(candidates, k, cols, done)
    cols = rng.permutation(d)[cols]  # popular features are spread over the index range
    cols.sort(axis=1)
    vals = rng.lognormal(0.0, 0.5, size=(n, k))
    vals /= np.linalg.norm(vals, axis=1, keepdims=True)
    X = sp.csr_matrix((vals.ravel(), cols.ravel(), np.arange(n + 1) * k), shape=(n, d))
    truth = rng.normal(size=d)
    score = X @ truth
    score += 0.3 * score.std() * rng.normal(size=n)
    y = np.where(score > np.median(score), 1, -1)
    return X, y


def run_one(
    kind: str,
    n: int,
    d: int,
    k: int,
    tau: int,
    n_test: int,
    seed: int,
    centering: str | None = None,
    dtype: str = "float64",
) -> dict:
    from aucstream import OPAUC

    X, y = make_stream(n + n_test, d, k, seed)
    X_test, y_test = X[n:], y[n:]
    X, y = X[:n], y[:n]
    centering = None if kind == "sparse" else centering
    warm = OPAUC(covariance=kind, sketch_size=4, random_state=0, centering=centering, dtype=dtype)
    warm.fit(X[:300, :1000], y[:300])  # compile the kernels (cached on disk afterwards)
    del warm
    data_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    model = OPAUC(
        eta=2**-10,  # the default; 2^-8 made |w| grow and the AUC fall after 50,000 examples
        lam=2**-10,
        covariance=kind,
        sketch_size=tau,
        random_state=0,
        centering=centering,
        dtype=dtype,
    )
    chunk, half = 8192, n // 2
    start = time.perf_counter()
    model.partial_fit(X[:chunk], y[:chunk], classes=[-1, 1])
    for lo in range(chunk, n, chunk):
        if lo <= half < lo + chunk:
            middle, mid_row = time.perf_counter(), lo
        model.partial_fit(X[lo : lo + chunk], y[lo : lo + chunk])
    seconds = time.perf_counter() - start
    if n <= 2 * chunk:
        middle, mid_row = start, 0
    steady = (n - mid_row) / (time.perf_counter() - middle)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    state = sum(
        a.nbytes for s in model.stats_ for a in vars(s).values() if isinstance(a, np.ndarray)
    )
    extra = {}
    if kind in ("randomized", "hash") and d == 1_000_000:  # the floor of the second half
        extra = {"floor_examples_per_second": read_floor(model, X[mid_row:])}
    if kind == "sparse":
        extra = {"nnz": [s.nnz for s in model.stats_], "prunes": [s.n_prunes for s in model.stats_]}
    if kind == "fd":
        extra = {
            "shrinks": [int(s.n_shrinks_[0]) for s in model.stats_],
            "support": [int(s.n_support_[0]) for s in model.stats_],
        }
    label = kind if centering is None else f"{kind}, centering={centering}"
    label += "" if dtype == "float64" else f", dtype={dtype}"
    return {
        "kind": label,
        "n": n,
        "d": d,
        "k": k,
        "tau": tau,
        "seconds": seconds,
        "examples_per_second": n / seconds,
        "steady_examples_per_second": steady,
        "peak_rss_gb": peak,
        "rss_before_fit_gb": data_rss,
        "summary_state_gb": state / 2**30,
        "summary_state_bytes": state,
        "test_auc": model.score(X_test, y_test),
        **extra,
    }


def product_cost(n_fill: int, d: int, k: int, tau: int, seed: int) -> dict:
    """Seconds per product P w of one class's sparse summary filled by n_fill examples."""
    from aucstream.covariance import SparsifiedCovariance, sparse_cov_matvec

    X, _ = make_stream(n_fill, d, k, seed)
    summary = SparsifiedCovariance(d, tau)
    start = time.perf_counter()
    for lo in range(0, n_fill, 8192):
        summary.update(X[lo : lo + 8192])
    fill_seconds = time.perf_counter() - start
    w, out = np.random.default_rng(seed).normal(size=d), np.empty(d)
    sparse_cov_matvec(summary.arrays(), w, out)
    start = time.perf_counter()
    for _ in range(5):
        sparse_cov_matvec(summary.arrays(), w, out)
    return {
        "n_fill": n_fill,
        "nnz": summary.nnz,
        "cost": summary.cost,
        "budget": summary.budget,
        "prunes": summary.n_prunes,
        "seconds_per_product": (time.perf_counter() - start) / 5,
        "fill_examples_per_second": n_fill / fill_seconds,
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
    }


def _child(**params) -> dict:
    """``run_one(**params)`` in a subprocess of its own (so that its peak memory is its
    own); the parameters travel as JSON."""
    cmd = [sys.executable, __file__, "--one", json.dumps(params)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


#: Throughput targets at d = 10^6, k = 50, tau = 50 (examples per second over a pass).
TARGETS = {"randomized": 100_000, "hash": 100_000, "fd": 1_000}


#: Smaller dimensions at which :func:`run` repeats the linear sketches' pass: at 2,000
#: both sketches (1.6 MB) stay in the caches, at 10^5 (80 MB) they do not; what the
#: pass loses from there to 10^6 is the time spent reaching the rows of the sketches.
SMALLER_DIMS = (2_000, 100_000)


def run(quick: bool = False) -> list[dict]:
    """One pass of OPAUC with each sketch at d = 10^6 (k = 50, tau = 50), in chunks of
    8192, each in its own subprocess: 100,000 examples (``quick``: the same for the
    linear sketches, which take seconds, and 20,000 for frequent directions). There
    is no peer library for these learners: each row compares the throughput, over the
    pass and over its second half, with the library's target for that sketch
    (``peer`` is "target", ``ratio`` = measured / target). The float32 sketches are
    compared with the float64 pass, and the linear sketches' pass is repeated at the
    smaller dimensions :data:`SMALLER_DIMS` (the same stream shape), against d = 10^6.
    The linear sketches' second half is also compared with its memory floor
    (:func:`read_floor`): a compiled loop over the same examples that reads the rows of
    the sketches, class sums and v that the pass reads, with the same prefetch, and
    does nothing else. No pass can be faster than its floor on the machine it runs
    on, which bounds what the target can ask of it there. Last, the O(k) learners
    against SGDClassifier (:func:`learner_rows`)."""
    rows, dtype_rows, by_dimension, floors = [], [], [], []
    for kind, target in TARGETS.items():
        n = 20_000 if quick and kind == "fd" else 100_000
        shape = dict(kind=kind, n=n, d=1_000_000, k=50, tau=50, n_test=2000, seed=0)
        r = _child(**shape)
        r32 = _child(**shape, dtype="float32")
        if kind != "fd":  # what reading the pass's rows alone allows, at either dtype
            for result, dtype in ((r, "float64"), (r32, "float32")):
                floors.append(
                    {
                        "benchmark": "OPAUC sketches at d = 10^6 against their memory floor "
                        "(second half of the pass)",
                        "name": f"OPAUC(covariance={kind!r}, sketch_size=50, dtype={dtype!r})",
                        "d": 1_000_000,
                        "rows": n,
                        "rows_per_s": result["steady_examples_per_second"],
                        "peer": "a loop that only reads the rows the pass reads",
                        "peer_rows_per_s": result["floor_examples_per_second"],
                        "ratio": result["steady_examples_per_second"]
                        / result["floor_examples_per_second"],
                        "target_rows_per_s": float(target),
                    }
                )
            for d in SMALLER_DIMS:  # the same stream at smaller d: the cost of reaching rows
                small = _child(**{**shape, "d": d})
                by_dimension.append(
                    {
                        "benchmark": "OPAUC sketches by dimension (second half of the pass)",
                        "name": f"OPAUC(covariance={kind!r}, sketch_size=50)",
                        "d": d,
                        "rows": n,
                        "rows_per_s": small["steady_examples_per_second"],
                        "peer": "the same at d = 10^6",
                        "peer_rows_per_s": r["steady_examples_per_second"],
                        "ratio": small["steady_examples_per_second"]
                        / r["steady_examples_per_second"],
                        "summary_bytes": small["summary_state_bytes"],
                    }
                )
        dtype_rows.append(
            {
                "benchmark": "OPAUC sketches at d = 10^6, float32 against float64 sketches",
                "name": f"OPAUC(covariance={kind!r}, sketch_size=50, dtype='float32')",
                "d": 1_000_000,
                "rows": n,
                "rows_per_s": r32["examples_per_second"],
                "peer": "dtype='float64'",
                "peer_rows_per_s": r["examples_per_second"],
                "ratio": r32["examples_per_second"] / r["examples_per_second"],
                "second_half_rows_per_s": r32["steady_examples_per_second"],
                "summary_bytes": r32["summary_state_bytes"],
                "peer_summary_bytes": r["summary_state_bytes"],
                "peak_rss_gb": r32["peak_rss_gb"],
                "peer_peak_rss_gb": r["peak_rss_gb"],
                "auc_difference": r32["test_auc"] - r["test_auc"],
            }
        )
        for part, key in (
            ("pass", "examples_per_second"),
            ("second half", "steady_examples_per_second"),
        ):
            rows.append(
                {
                    "benchmark": "OPAUC sketches at d = 10^6 (CSR, 50 non-zeros per row)",
                    "name": f"OPAUC(covariance={kind!r}, sketch_size=50), {part}",
                    "d": 1_000_000,
                    "rows": n,
                    "rows_per_s": r[key],
                    "peer": "target",
                    "peer_rows_per_s": float(target),
                    "ratio": r[key] / target,
                    "peak_rss_gb": r["peak_rss_gb"],
                    "test_auc": r["test_auc"],
                }
            )
    return rows + floors + dtype_rows + by_dimension + learner_rows(quick)


#: What :func:`run` reports of :func:`run_learners` (one table in docs/benchmarks.md).
_LEARNER_COLUMNS = (
    "benchmark",
    "name",
    "d",
    "rows",
    "rows_per_s",
    "peer",
    "peer_rows_per_s",
    "ratio",
    "test_auc",
    "auc_difference",
    "zeros",
)


def learner_rows(quick: bool = False) -> list[dict]:
    """FTRL-AUC and SPAM at their defaults against SGDClassifier (log loss: the peer;
    hinge; log loss with l1) on the stream of :func:`run_learners` (issue 33's targets:
    ratio >= 1, AUC difference >= -0.002, zeros >= 0.9 for one of them); one round
    when ``quick``, else the best of three."""
    names = ("FTRLAUC()", "SPAM()", "SGD(log_loss)", "SGD(hinge)", "SGD(log_loss, l1)")
    rows = run_learners(names, repeats=1 if quick else 3, n_test=10_000)
    return [{k: r[k] for k in _LEARNER_COLUMNS} for r in rows]


#: The learners of the O(k) comparison (issue 33): name -> constructor call. Other
#: constructor calls of these classes (and SOLAM, UnivariateOnline, StreamPipeline) may be
#: named on the command
#: line (``--learners "FTRLAUC(gamma=1.0, l1=0.2)"``): how the defaults were chosen.
LEARNERS = {
    "FTRLAUC()": "FTRLAUC()",
    "SPAM()": "SPAM()",
    "SGD(log_loss)": "SGDClassifier(loss='log_loss', random_state=0)",
    "SGD(log_loss, l1)": "SGDClassifier(loss='log_loss', penalty='l1', random_state=0)",
    "SGD(log_loss, elasticnet)": (
        "SGDClassifier(loss='log_loss', penalty='elasticnet', random_state=0)"
    ),
    "SGD(hinge)": "SGDClassifier(loss='hinge', random_state=0)",
    "SGD(hinge, l1)": "SGDClassifier(loss='hinge', penalty='l1', random_state=0)",
    "SGD(hinge, elasticnet)": "SGDClassifier(loss='hinge', penalty='elasticnet', random_state=0)",
}

#: The peer of the ratios. (SGDClassifier shuffles each chunk: seeded, for repeatable
#: runs.)
PEER = "SGD(log_loss)"


def _make_learner(name: str):
    """The learner of a name of :data:`LEARNERS` or of a constructor call."""
    from sklearn.linear_model import SGDClassifier

    from aucstream import FTRLAUC, SOLAM, SPAM, StreamPipeline, UnivariateOnline
    from aucstream.preprocessing import OnlineStandardScaler

    names = {
        "OnlineStandardScaler": OnlineStandardScaler,
        "FTRLAUC": FTRLAUC,
        "SPAM": SPAM,
        "SOLAM": SOLAM,
        "UnivariateOnline": UnivariateOnline,
        "StreamPipeline": StreamPipeline,
        "SGDClassifier": SGDClassifier,
    }
    if name in names:  # a bare class name: its defaults
        return names[name]()
    return eval(LEARNERS.get(name, name), {"__builtins__": {}}, names)


def run_real(
    names,
    data_dir: str,
    chunk: int = 10_000,
    spread: int | None = None,
    shuffle: int | None = None,
) -> list[dict]:
    """Test AUC and zero coefficients of each learner after one pass (``partial_fit``
    in chunks of ``chunk``) over a9a, w8a and ijcnn1 with unit rows (their training
    and test files from ``data_dir``). ``spread``: the columns placed at random distinct
    positions (in their order) among ``spread`` columns, as hashing without collisions
    would place them: the same data at a hashed width. ``shuffle``: the training rows
    in the random order of this seed (w8a's file is ordered: its 1,479 positives are
    rows 740 to 2,218), else in the file's order."""
    import lzma

    from sklearn.datasets import load_svmlight_file
    from sklearn.preprocessing import normalize

    from aucstream.metrics import roc_auc

    out = []
    for data, d in (("a9a", 123), ("w8a", 300), ("ijcnn1", 22)):
        with lzma.open(os.path.join(data_dir, f"{data}.xz")) as fh:
            X, y = load_svmlight_file(fh, n_features=d)
        with lzma.open(os.path.join(data_dir, f"{data}.t.xz")) as fh:
            X_test, y_test = load_svmlight_file(fh, n_features=d)
        X, X_test = normalize(X).tocsr(), normalize(X_test).tocsr()
        if shuffle is not None:
            order = np.random.default_rng(shuffle).permutation(X.shape[0])
            X, y = X[order], y[order]
        if spread is not None:
            at = np.sort(np.random.default_rng(0).choice(spread, d, replace=False))
            X, X_test = (
                sp.csr_matrix((M.data, at[M.indices], M.indptr), shape=(M.shape[0], spread))
                for M in (X, X_test)
            )
        for name in names:
            model = _make_learner(name)
            for lo in range(0, X.shape[0], chunk):
                model.partial_fit(X[lo : lo + chunk], y[lo : lo + chunk], classes=[-1, 1])
            out.append(
                {
                    "data": (data if spread is None else f"{data} in {spread:,} columns")
                    + ("" if shuffle is None else f", rows shuffled (seed {shuffle})"),
                    "name": name,
                    "test_auc": roc_auc(y_test, model.decision_function(X_test)),
                    "zeros": float(np.mean(np.asarray(model.coef_) == 0.0)),
                }
            )
    return out


def save_stream(path: str, n: int, d: int, k: int, seed: int) -> None:
    """:func:`make_stream` of n examples, written to ``path`` (.npz) for the children."""
    X, y = make_stream(n, d, k, seed)
    np.savez(path, data=X.data, indices=X.indices, indptr=X.indptr, y=y, d=d)


def load_stream(path: str):
    z = np.load(path)
    d = int(z["d"])
    X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=(len(z["y"]), d))
    return X, z["y"]


def run_learner(name: str, path: str, n: int, chunk: int) -> dict:
    """One pass of learner ``name`` over the first ``n`` rows of the stream at ``path``
    in chunks of ``chunk`` rows (``partial_fit``); the rest is the test set."""
    from aucstream.metrics import roc_auc

    X, y = load_stream(path)
    X_test, y_test = X[n:], y[n:]
    X, y = X[:n], y[:n]
    warm = _make_learner(name)  # compile the kernels (cached on disk afterwards)
    warm.partial_fit(X[:200], y[:200], classes=[-1, 1])
    del warm
    data_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    model = _make_learner(name)
    start = time.perf_counter()
    for lo in range(0, n, chunk):
        model.partial_fit(X[lo : lo + chunk], y[lo : lo + chunk], classes=[-1, 1])
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    coef = np.asarray(model.coef_).ravel()
    state = sum(a.nbytes for a in vars(model).values() if isinstance(a, np.ndarray))
    # the memory a pass allocates (state, transactions, temporaries), in a second,
    # untimed pass under tracemalloc (numpy reports its allocations to it; the
    # kernels allocate nothing): the data loaded before dominate ru_maxrss
    import tracemalloc

    again = _make_learner(name)
    tracemalloc.start()
    for lo in range(0, n, chunk):
        again.partial_fit(X[lo : lo + chunk], y[lo : lo + chunk], classes=[-1, 1])
    pass_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        "name": name,
        "n": n,
        "chunk": chunk,
        "seconds": seconds,
        "rows_per_s": n / seconds,
        "test_auc": roc_auc(y_test, model.decision_function(X_test)),
        "zeros": float(np.mean(coef == 0.0)),
        "peak_rss_gb": peak,
        "rss_before_fit_gb": data_rss,
        "state_bytes": state,
        "pass_peak_bytes": pass_peak,
    }


def _learner_child(**params) -> dict:
    cmd = [sys.executable, __file__, "--one-learner", json.dumps(params)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def run_learners(
    names=tuple(LEARNERS),
    n: int = 100_000,
    d: int = 1_000_000,
    k: int = 50,
    n_test: int = 10_000,
    seed: int = 0,
    chunk: int = 10_000,
    repeats: int = 3,
) -> list[dict]:
    """Every learner of ``names`` over the same stream, each pass in its own process,
    ``repeats`` rounds in turn; per learner the round of the best rate (the AUC and
    zeros do not depend on the round), with its ratio to :data:`PEER`'s best rate."""
    names = list(names)
    if PEER not in names:
        names.append(PEER)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "stream.npz")
        save_stream(path, n + n_test, d, k, seed)
        best: dict[str, dict] = {}
        for _ in range(repeats):
            for name in names:
                r = _learner_child(name=name, path=path, n=n, chunk=chunk)
                if name not in best or r["rows_per_s"] > best[name]["rows_per_s"]:
                    best[name] = r
    peer = best[PEER]
    rows = []
    for name in names:
        r = best[name]
        rows.append(
            {
                **r,
                "benchmark": f"O(k) learners at d = {d:,} (CSR, {k} non-zeros a row, "
                f"chunks of {chunk:,})",
                "d": d,
                "rows": n,
                "peer": PEER,
                "peer_rows_per_s": peer["rows_per_s"],
                "ratio": r["rows_per_s"] / peer["rows_per_s"],
                "auc_difference": r["test_auc"] - peer["test_auc"],
            }
        )
    return rows


def learners_table(rows: list[dict]) -> str:
    r0 = rows[0]
    lines = [
        f"n = {r0['rows']:,} (test: the next rows of the stream), d = {r0['d']:,}, "
        f"chunks of {r0['chunk']:,}; ratio and AUC difference against {PEER}",
        "",
        "| learner | rows/s | ratio | test AUC | AUC - peer | zero coefficients "
        "| peak RSS (GB) | RSS before fit (GB) | model arrays (MB) | pass allocations, peak (MB) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['rows_per_s']:,.0f} | {r['ratio']:.2f} | {r['test_auc']:.4f} "
            f"| {r['auc_difference']:+.4f} | {r['zeros']:.3f} | {r['peak_rss_gb']:.2f} "
            f"| {r['rss_before_fit_gb']:.2f} | {r['state_bytes'] / 2**20:.1f} "
            f"| {r['pass_peak_bytes'] / 2**20:.1f} |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--d", type=int, default=1_000_000)
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--tau", type=int, default=50)
    parser.add_argument("--n-test", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--centering",
        choices=("g13", "g16", "exact"),
        help="OPAUC's centering (default: each paper's form)",
    )
    parser.add_argument(
        "--dtype",
        choices=("float64", "float32"),
        default="float64",
        help="storage of the d x tau sketches (OPAUC's dtype)",
    )
    parser.add_argument("--one", help=argparse.SUPPRESS)  # child process: run one kind
    parser.add_argument("--one-learner", help=argparse.SUPPRESS)  # child: one learner
    parser.add_argument(
        "--learners",
        nargs="*",
        metavar="LEARNER",
        help="run the O(k) learners against SGD (all of LEARNERS when none is named; "
        "a constructor call of FTRLAUC, SPAM, SOLAM, UnivariateOnline, StreamPipeline, "
        "OnlineStandardScaler or SGDClassifier is also taken)",
    )
    parser.add_argument(
        "--real",
        metavar="DATA_DIR",
        help="with --learners: one pass over a9a, w8a and ijcnn1 (from DATA_DIR) instead",
    )
    parser.add_argument(
        "--spread",
        type=int,
        metavar="D",
        help="with --real: the columns at random positions among D (a hashed width)",
    )
    parser.add_argument(
        "--shuffle",
        type=int,
        metavar="SEED",
        help="with --real: the training rows in a random order of this seed",
    )
    parser.add_argument("--chunk", type=int, default=10_000, help="rows per partial_fit")
    parser.add_argument("--repeats", type=int, default=3, help="rounds of the learners")
    parser.add_argument(
        "--product-cost",
        type=int,
        metavar="N_FILL",
        help="time P w of one class's sparse summary after N_FILL examples",
    )
    parser.add_argument(
        "--overlap",
        action="store_true",
        help="measure whether the machine overlaps the random reads with arithmetic",
    )
    parser.add_argument(
        "--split",
        action="store_true",
        help="the linear sketches' second half against its floor in processor time, "
        "the kernel apart (split_pass), for --kinds and both dtypes",
    )
    parser.add_argument(
        "--oam-widths",
        action="store_true",
        help="OAM's step against the hashed OPAUC's and SOLAM's at widths 10^3 to 2^18 "
        "(oam_widths), as a markdown table",
    )
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--markdown", help="also write the table to this file")
    args = parser.parse_args(argv)
    if args.oam_widths:
        lines = ["| features | OAM | hashed OPAUC | SOLAM |", "|---:|---:|---:|---:|"]
        for r in oam_widths():
            lines.append(
                f"| {r['features']:,} | {r['OAM']:,.1f} | {r['hashed OPAUC']:.1f} "
                f"| {r['SOLAM']:.1f} |"
            )
        print("\n".join(lines))
        return
    if args.split:
        for kind in (k for k in args.kinds if k in ("randomized", "hash")):
            for dtype in ("float64", "float32"):
                shape = (args.n, args.d, args.k, args.tau, args.seed)
                print(json.dumps(split_pass(kind, dtype, *shape)), flush=True)
        return
    if args.overlap:
        lines = [
            f"d = {args.d:,}, k = {args.k}, tau = {args.tau}: microseconds per example",
            "",
            "| arithmetic sweeps per row read | memory | arithmetic | both | both, no prefetch "
            "| overlap |",
            "|---:|---:|---:|---:|---:|---:|",
        ]
        for r in overlap_probe(30_000, args.d, args.k, args.tau):
            lines.append(
                f"| {r['sweeps']} | {r['memory']:.1f} | {r['arithmetic']:.1f} | {r['both']:.1f} "
                f"| {r['both, no prefetch']:.1f} | {r['overlap']:.2f} |"
            )
        print("\n".join(lines))
        return
    if args.product_cost:
        print(json.dumps(product_cost(args.product_cost, args.d, args.k, args.tau, args.seed)))
        return
    if args.one_learner:  # a child process: the parameters of run_learner as JSON
        print(json.dumps(run_learner(**json.loads(args.one_learner))))
        return
    if args.learners is not None and args.real:
        names = args.learners or tuple(LEARNERS)
        lines = ["| data | learner | test AUC | zero coefficients |", "|---|---|---:|---:|"]
        for r in run_real(names, args.real, args.chunk, args.spread, args.shuffle):
            lines.append(f"| {r['data']} | {r['name']} | {r['test_auc']:.4f} | {r['zeros']:.3f} |")
        print("\n".join(lines))
        if args.markdown:
            with open(args.markdown, "a") as fh:
                fh.write("\n".join(lines) + "\n\n")
        return
    if args.learners is not None:
        rows = run_learners(
            args.learners or tuple(LEARNERS),
            n=args.n,
            d=args.d,
            k=args.k,
            n_test=args.n_test,
            seed=args.seed,
            chunk=args.chunk,
            repeats=args.repeats,
        )
        table = learners_table(rows)
        print(table)
        if args.markdown:
            with open(args.markdown, "a") as fh:
                fh.write(table + "\n\n")
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(rows, fh, indent=1)
        return
    if args.one:  # a child process: the parameters of run_one as JSON
        print(json.dumps(run_one(**json.loads(args.one))))
        return
    results = []
    for kind in args.kinds:
        results.append(
            _child(
                kind=kind,
                n=args.n,
                d=args.d,
                k=args.k,
                tau=args.tau,
                n_test=args.n_test,
                seed=args.seed,
                centering=args.centering,
                dtype=args.dtype if kind != "sparse" else "float64",
            )
        )
        r = results[-1]
        print(
            f"{kind}: {r['examples_per_second']:.0f} examples/s "
            f"(second half {r['steady_examples_per_second']:.0f}), {r['seconds']:.0f} s, "
            f"peak {r['peak_rss_gb']:.2f} GB",
            file=sys.stderr,
            flush=True,
        )
    lines = [
        f"n = {args.n:,}, d = {args.d:,}, k = {args.k} non-zeros per example, tau = {args.tau}",
        "",
        "| summary | examples/s | second half: examples/s | pass (s) | peak RSS (GB) "
        "| RSS before fit (GB) | summary state (GB) | test AUC |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r['kind']} | {r['examples_per_second']:,.0f} "
            f"| {r['steady_examples_per_second']:,.0f} | {r['seconds']:.1f} "
            f"| {r['peak_rss_gb']:.2f} | {r['rss_before_fit_gb']:.2f} "
            f"| {r['summary_state_gb']:.2f} | {r['test_auc']:.4f} |"
        )
    print("\n" + "\n".join(lines))
    if args.markdown:
        with open(args.markdown, "a") as fh:
            fh.write("\n".join(lines) + "\n\n")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
