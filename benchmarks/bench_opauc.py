"""OPAUC with the full covariance on dense rows, against the same work done by BLAS.

Per example, OPAUC (covariance="full") adds x to its class's scatter (a rank-one
update, O(d^2)) and multiplies the opposite class's scatter by w (O(d^2)); the rest
is O(d). The peer does that per-example work with a Python loop calling
``scipy.linalg.blas.dger`` (the rank-one update of the own class's d x d scatter,
in place) and ``dgemv`` (the opposite class's scatter times w), plus the O(d) step
in NumPy; single-threaded BLAS (``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` and
``MKL_NUM_THREADS`` are set to 1 before NumPy loads, when not already set). OPAUC
computes the same model (up to rounding: the two are compared at the warm-up) with
less memory traffic: it holds dense rows back and adds them to P 16 at a time
(``aucstream.covariance.FullCovariance``), and reads and writes one triangle. A
second peer is the plain NumPy reference recursion (``opauc_gradient`` on
``FullCovariance`` summaries, one example at a time, as the tests use it).

Data: Gaussian rows (a dense stream, labels from a random hyperplane), d = 123,
300, 784, 2000. Each measurement is the fastest of ``repeats`` passes after a
warm-up (numba compilation or cache load), learner and peers interleaved so that a
busy machine slows them alike. ``run(quick)`` returns one row per (d, peer): the
learner's rows/s, the peer's, and their ratio (above 1: OPAUC faster).

``dtype="float32"`` (float32 scatters, half the bytes; :class:`aucstream.OPAUC`) is
measured against float64 in the same run at d = 784 and 2000 (784 only with
``--quick``), learner passes interleaved: rows/s of each, their ratio (above 1:
float32 faster), the bytes of the two summaries and the difference of the two models'
AUC on 2000 held-out rows of the same stream (``--dtype`` runs only this table).

The sketched OPAUC at its memory floor (``--floor``, issue 33): at d = 10^6 with 50
non-zeros a row (``bench_highdim.make_stream``), the randomized and hashed sketches
(tau = 50) in float64 and float32 each learn ``--floor-rows`` examples in chunks of
8192, and the rows per second of the second half of the pass are compared with
those of a floor loop over the same rows in the same run: a compiled loop that reads
what the pass must read, in the layout the pass reads it, (with the same prefetch)
and does nothing else: the row of each feature in the d x 2 tau array that
interleaves both classes' sketches (:func:`aucstream.covariance.sketch_pair`: one
random read per feature), the class sums and v (``_read_pair_rows``). Ratio = pass /
floor (at most 1).
``SGDClassifier(loss="log_loss")`` learns the same chunks in the same run (its second
half's rows per second: the peer of the O(k) learners). ``--half-lives none 1000``
adds the passes with forgetting (``OPAUC(half_life=...)``); ``--repeats`` keeps the
best of that many passes of each; ``--markdown FILE`` appends the table;
``--floor-d 2000`` runs the same where the sketches fit in the caches (the pass's
arithmetic against the floor loop's). ``--split`` adds the per-row split of the
second half's processor time (``time.thread_time``: less sensitive than wall time
to a machine shared with other work): the compiled kernel (``OPAUC._update``), the
undo log's saving of the rows the chunk will write (``UndoLog.cover``) and the rest
(input checks, the rows' finiteness checks), and the floor loop's processor time
per row.

Usage::

    python benchmarks/bench_opauc.py [--quick] [--repeats 3] [--dtype]
    python benchmarks/bench_opauc.py --floor [--floor-rows 40000] [--floor-d 1000000]
        [--half-lives none 1000] [--split]
        [--repeats 1] [--markdown docs/results/highdim_bench.md]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numba as nb  # noqa: E402
import numpy as np  # noqa: E402
from scipy.linalg import blas  # noqa: E402

from aucstream import OPAUC  # noqa: E402
from aucstream._kernels import prefetch_rows  # noqa: E402
from aucstream.covariance import FullCovariance  # noqa: E402
from aucstream.opauc import opauc_gradient  # noqa: E402

ETA, LAM = 2.0**-8, 2.0**-8
DIMS = (123, 300, 784, 2000)


def stream(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """n dense Gaussian rows (scaled to unit expected norm) and +/-1 labels."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    y = np.where(X @ rng.normal(size=d) + 0.1 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def opauc_pass(X: np.ndarray, y: np.ndarray, dtype: str = "float64") -> np.ndarray:
    """One pass of OPAUC(covariance="full") over the rows (one chunk)."""
    model = OPAUC(eta=ETA, lam=LAM, dtype=dtype, column_scale=None)  # (the peers do not scale)
    return model.partial_fit(X, y, classes=[-1, 1]).w_


def blas_pass(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The same per-example work as a Python loop over BLAS dger + dgemv."""
    d = X.shape[1]
    P = [np.zeros((d, d), order="F"), np.zeros((d, d), order="F")]
    sums, counts = [np.zeros(d), np.zeros(d)], [0, 0]
    w = np.zeros(d)
    for x, label in zip(X, y):
        c = int(label > 0)
        o = 1 - c
        P[c] = blas.dger(1.0, x, x, a=P[c], overwrite_a=True)
        sums[c] += x
        counts[c] += 1
        if counts[o] == 0:
            continue
        t = counts[o]
        mean = sums[o] / t
        cov_w = blas.dgemv(1.0 / t, P[o], w) - mean * (mean @ w)
        e = x - mean
        w -= ETA * (LAM * w - label * e + e * (e @ w) + cov_w)
    return w


def numpy_pass(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The NumPy reference recursion (``opauc_gradient`` on ``FullCovariance``)."""
    d = X.shape[1]
    stats = [FullCovariance(d), FullCovariance(d)]
    w = np.zeros(d)
    for x, label in zip(X, y):
        c = int(label > 0)
        stats[c].update(x[None, :])
        if stats[1 - c].count:
            w -= ETA * opauc_gradient(w, x, float(label), stats[1 - c], LAM)
    return w


def _rows(d: int, quick: bool) -> int:
    """Rows per pass: about the same total work at every d."""
    budget = 2e8 if quick else 1e9
    return int(min(20000, max(200, budget / d**2)))


def run(quick: bool = False, repeats: int = 3, with_dtype: bool = True) -> list[dict]:
    """Rows per second of OPAUC full (dense) and its peers at each d, then float32
    against float64 scatters (:func:`run_dtype`, unless ``with_dtype`` is false)."""
    repeats = 1 if quick else repeats
    results = []
    for d in DIMS[:3] if quick else DIMS:
        n = _rows(d, quick)
        X, y = stream(n, d)
        passes = {"OPAUC": opauc_pass, "BLAS dger+dgemv loop": blas_pass}
        if d <= 784:
            passes["NumPy reference"] = numpy_pass
        ref = {name: f(X[:50], y[:50]) for name, f in passes.items()}  # warm-up
        np.testing.assert_allclose(ref["OPAUC"], ref["BLAS dger+dgemv loop"], rtol=1e-8, atol=1e-12)
        best = dict.fromkeys(passes, np.inf)
        for _ in range(repeats):
            for name, f in passes.items():
                start = time.perf_counter()
                f(X, y)
                best[name] = min(best[name], time.perf_counter() - start)
        for peer in list(passes)[1:]:
            results.append(
                {
                    "benchmark": "OPAUC full covariance, dense rows",
                    "name": "OPAUC(covariance='full')",
                    "d": d,
                    "rows": n,
                    "rows_per_s": n / best["OPAUC"],
                    "peer": peer,
                    "peer_rows_per_s": n / best[peer],
                    "ratio": best[peer] / best["OPAUC"],
                }
            )
    if with_dtype:
        results += run_dtype(quick, repeats)
    return results


def run_dtype(quick: bool = False, repeats: int = 3) -> list[dict]:
    """Rows per second of OPAUC full with float32 scatters against float64 (module)."""
    from sklearn.metrics import roc_auc_score

    repeats = 1 if quick else repeats
    results = []
    for d in (784,) if quick else (784, 2000):
        n = _rows(d, quick)
        X, y = stream(n + 2000, d)
        X, y, X_test, y_test = X[:n], y[:n], X[n:], y[n:]
        dtypes = ("float64", "float32")
        for dtype in dtypes:  # warm-up
            opauc_pass(X[:50], y[:50], dtype)
        best, auc = dict.fromkeys(dtypes, np.inf), {}
        for _ in range(repeats):
            for dtype in dtypes:
                start = time.perf_counter()
                w = opauc_pass(X, y, dtype)
                best[dtype] = min(best[dtype], time.perf_counter() - start)
                auc[dtype] = roc_auc_score(y_test, X_test @ w)
        nbytes = {
            dtype: sum(s.scatter_.nbytes for s in OPAUC(dtype=dtype).fit(X[:20], y[:20]).stats_)
            for dtype in dtypes
        }
        results.append(
            {
                "benchmark": "OPAUC full covariance, float32 against float64 scatters",
                "name": "OPAUC(covariance='full', dtype='float32')",
                "d": d,
                "rows": n,
                "rows_per_s": n / best["float32"],
                "peer": "dtype='float64'",
                "peer_rows_per_s": n / best["float64"],
                "ratio": best["float64"] / best["float32"],
                "scatter_bytes": nbytes["float32"],
                "peer_scatter_bytes": nbytes["float64"],
                "auc_difference": auc["float32"] - auc["float64"],
            }
        )
    return results


def _sgd_rate(X, y, half: int, chunk: int) -> float:
    """Rows per second of ``SGDClassifier(loss="log_loss")`` over the second half of
    the same pass (``partial_fit`` in the same chunks): the peer of every row."""
    from sklearn.linear_model import SGDClassifier

    model = SGDClassifier(loss="log_loss", random_state=0)
    n = X.shape[0]
    for lo in range(0, n, chunk):
        if lo == half:
            start = time.perf_counter()
        model.partial_fit(X[lo : lo + chunk], y[lo : lo + chunk], classes=[-1, 1])
    return (n - half) / (time.perf_counter() - start)


class _Split:
    """Processor time (``time.thread_time``) spent in ``OPAUC._update`` and in
    ``UndoLog.cover`` while active (``--split``), by wrapping both; ``restore`` puts
    the originals back."""

    def __init__(self):
        from aucstream._runtime import _undo

        self.seconds = {"kernel": 0.0, "undo": 0.0}
        self._originals = [(OPAUC, "_update", "kernel"), (_undo.UndoLog, "cover", "undo")]
        self._saved = [getattr(owner, name) for owner, name, _ in self._originals]
        for (owner, name, key), method in zip(self._originals, self._saved):
            setattr(owner, name, self._timed(method, key))

    def _timed(self, method, key):
        def timed(*args, **kwargs):
            start = time.thread_time()
            try:
                return method(*args, **kwargs)
            finally:
                self.seconds[key] += time.thread_time() - start

        return timed

    def restore(self) -> None:
        for (owner, name, _), method in zip(self._originals, self._saved):
            setattr(owner, name, method)


@nb.njit(cache=True)
def _read_pair_rows(pair, s0, s1, v, indptr, indices, out):
    """The floor with the layout the pass uses (``--floor``): for each example, the
    row of each of its features in the d x 2 tau array that interleaves both classes'
    sketches (:func:`aucstream.covariance.sketch_pair`: one random read per feature),
    and the entries of the class sums and of v, with the kernel's prefetch of the next
    example's rows (one row of the pair per feature); sums them into ``out`` (tau,)."""
    n = indptr.shape[0] - 1
    tau = out.shape[0]
    for r in range(n):
        lo, hi = indptr[r], indptr[r + 1]
        if r + 1 < n:
            ahead = indices[hi : indptr[r + 2]]
            prefetch_rows(pair, ahead)
            prefetch_rows(s0, ahead)
            prefetch_rows(s1, ahead)
            prefetch_rows(v, ahead)
        for a in range(lo, hi):
            row = pair[indices[a]]
            for j in range(tau):
                out[j] += row[j] + row[tau + j]
            out[0] += s0[indices[a]] + s1[indices[a]] + v[indices[a]]


def sketch_pair(neg, pos) -> np.ndarray:
    """``aucstream.covariance.sketch_pair`` (the pass's interleaved sketches), or an
    interleaved copy of the two sketches with a version of aucstream that keeps them
    apart (to run this file against the code before them)."""
    try:
        from aucstream.covariance import sketch_pair as pair_of
    except ImportError:
        return np.ascontiguousarray(np.hstack([neg.sketch_, pos.sketch_]))
    return pair_of(neg, pos)


def _floor(model, X) -> tuple[float, float]:
    """Rows per second (wall time) and processor microseconds per row
    (``time.thread_time``) of the floor loop (:func:`_read_pair_rows`, on the arrays
    the pass reads) over ``X``, each the best of 3 after a call that loads it."""
    (neg, pos), v = model.stats_, model.v_
    loop, args = _read_pair_rows, (sketch_pair(neg, pos), neg.sum_, pos.sum_, v)
    out = np.zeros(model.stats_[0].sketch_size)
    indptr, indices = X.indptr.astype(np.int64), X.indices.astype(np.int64)
    loop(*args, indptr[:3], indices, out)
    wall, cpu = np.inf, np.inf
    for _ in range(3):
        start, start_cpu = time.perf_counter(), time.thread_time()
        loop(*args, indptr, indices, out)
        cpu = min(cpu, time.thread_time() - start_cpu)
        wall = min(wall, time.perf_counter() - start)
    n = indptr.shape[0] - 1
    return n / wall, 1e6 * cpu / n


def run_floor(
    n: int = 40000,
    half_lives: tuple = (None,),
    d: int = 10**6,
    repeats: int = 1,
    split: bool = False,
) -> list[dict]:
    """The linear sketches' passes at d = 10^6 against their memory floor and against
    ``SGDClassifier(loss="log_loss")``, each measured right after the pass (module
    docstring); one row per (kind, dtype, half-life), the best of ``repeats`` rounds.
    With ``split``, each row also holds the per-row processor time of the last
    round's second half (``--split``)."""
    import gc
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_highdim import make_stream

    X, y = make_stream(n, d, 50, seed=0)
    results, chunk = [], 8192
    half = (n // 2) // chunk * chunk
    for half_life in half_lives:
        for kind in ("randomized", "hash"):
            for dtype in ("float64", "float32"):
                params = dict(covariance=kind, sketch_size=50, random_state=0, dtype=dtype)
                params["half_life"] = half_life
                OPAUC(**{**params, "sketch_size": 4}).fit(X[:300, :1000], y[:300])  # compile
                rate, floor, sgd = 0.0, 0.0, 0.0
                times: dict = {}
                for _ in range(repeats):  # the three measured back to back (a busy machine)
                    model = OPAUC(eta=2**-10, lam=2**-10, **params)
                    for lo in range(0, n, chunk):
                        if lo == half:
                            start = time.perf_counter()
                            if split:
                                timer, cpu = _Split(), time.thread_time()
                        model.partial_fit(X[lo : lo + chunk], y[lo : lo + chunk], classes=[-1, 1])
                    rate = max(rate, (n - half) / (time.perf_counter() - start))
                    if split:
                        timer.restore()
                        per_row = 1e6 / (n - half)
                        times = {key: per_row * t for key, t in timer.seconds.items()}
                        times["total"] = per_row * (time.thread_time() - cpu)
                        times["other"] = times["total"] - times["kernel"] - times["undo"]
                    pair_rate, pair_cpu = _floor(model, X[half:])
                    if split:
                        times["floor"] = pair_cpu
                    floor = max(floor, pair_rate)
                    del model
                    gc.collect()
                    sgd = max(sgd, _sgd_rate(X, y, half, chunk))
                results.append(
                    {
                        "benchmark": f"OPAUC sketches at d = {d:,} against their memory floor",
                        "name": f"OPAUC(covariance={kind!r}, dtype={dtype!r}"
                        + ("" if half_life is None else f", half_life={half_life:g}")
                        + ")",
                        "d": d,
                        "rows": n - half,
                        "rows_per_s": rate,
                        "peer": "memory floor (interleaved rows, _read_pair_rows)",
                        "peer_rows_per_s": floor,
                        "ratio": rate / floor,
                        "sgd_rows_per_s": sgd,
                        "sgd_ratio": rate / sgd,
                        **{f"cpu_us_{key}": t for key, t in times.items()},
                    }
                )
    return results


def floor_table(rows: list[dict]) -> str:
    """The rows of :func:`run_floor` as a Markdown table."""
    lines = [
        "| learner | rows/s | floor rows/s | pass / floor | SGD(log_loss) rows/s | pass / SGD |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['rows_per_s']:,.0f} | {r['peer_rows_per_s']:,.0f} "
            f"| {r['ratio']:.2f} | {r['sgd_rows_per_s']:,.0f} | {r['sgd_ratio']:.2f} |"
        )
    if rows and "cpu_us_total" in rows[0]:
        lines += [
            "",
            "| learner | processor us/row: pass | kernel | undo log | other | floor "
            "| floor / pass | floor / kernel |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in rows:
            lines.append(
                f"| {r['name']} | {r['cpu_us_total']:.2f} | {r['cpu_us_kernel']:.2f} "
                f"| {r['cpu_us_undo']:.2f} | {r['cpu_us_other']:.2f} | {r['cpu_us_floor']:.2f} "
                f"| {r['cpu_us_floor'] / r['cpu_us_total']:.2f} "
                f"| {r['cpu_us_floor'] / r['cpu_us_kernel']:.2f} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dtype", action="store_true", help="only float32 against float64")
    parser.add_argument("--floor", action="store_true", help="only the sketches at their floor")
    parser.add_argument("--floor-rows", type=int, default=40000)
    parser.add_argument("--floor-d", type=int, default=10**6, help="with --floor: d")
    parser.add_argument(
        "--half-lives",
        nargs="+",
        default=["none"],
        help="with --floor: the passes' half_life values ('none': no forgetting)",
    )
    parser.add_argument("--markdown", help="with --floor: also append the table to this file")
    parser.add_argument(
        "--split", action="store_true", help="with --floor: the per-row processor time split"
    )
    args = parser.parse_args()
    if args.floor:
        half_lives = tuple(None if h == "none" else float(h) for h in args.half_lives)
        rows = run_floor(args.floor_rows, half_lives, args.floor_d, args.repeats, args.split)
        table = floor_table(rows)
        print(table)
        if args.markdown:
            with open(args.markdown, "a") as fh:
                fh.write(table + "\n\n")
        return
    print(f"{'d':>6}{'rows/s':>12}{'peer rows/s':>14}{'ratio':>8}  peer")
    rows = [] if args.dtype else run(args.quick, args.repeats, with_dtype=False)
    rows += run_dtype(args.quick, args.repeats)
    for r in rows:
        print(
            f"{r['d']:>6}{r['rows_per_s']:>12,.0f}{r['peer_rows_per_s']:>14,.0f}"
            f"{r['ratio']:>8.2f}  {r['peer']}"
            + (
                f"  (bytes {r['scatter_bytes']:,} vs {r['peer_scatter_bytes']:,}, "
                f"AUC difference {r['auc_difference']:.1e})"
                if "auc_difference" in r
                else ""
            )
        )


if __name__ == "__main__":
    main()
