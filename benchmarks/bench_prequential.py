"""Prequential evaluation: its cost over learning alone, reads of the exact AUC, and
aucstream against River on River's Phishing, in one run.

1. **Cost** on a9a (``$AUCSTREAM_DATA/a9a.xz``; a generated stream of its shape when
   absent), chunks of 1,000 rows, SOLAM: CPU seconds of
   :func:`aucstream.evaluation.prequential` (default columns: ``auc``, ``log_loss``,
   ``brier``, ``positive_rate``, one checkpoint per chunk) over a loop of
   ``test_then_train`` alone (the learning, no metrics), best of ``--repeat``; the
   target is a ratio of at most 1.1. Also with ``delay=10`` (the model must score
   and learn between examples: one ``decision_function`` and one ``partial_fit`` per
   example) on the first ``--delayed-rows`` rows, per example; and a meta-learner
   (``StreamPipeline`` over SOLAM) at ``delay=0``, fed whole chunks, against the
   row-by-row path (``--meta-rows``).
2. **Reading the cumulative AUC** at n = 10^6 pairs: ``PrequentialAUC.get()``
   and the count ``prequential``'s ``auc`` column keeps (``StreamRuns.auc()``)
   against re-sorting every score (``sklearn.metrics.roc_auc_score`` on all n), per
   read, after feeding the pairs in arrays of 1,000.
3. **River's Phishing** (1,250 rows, bundled with River): progressive log-loss and
   exact AUC (of the probabilities River's ``progressive_val_score`` saw, and of
   ``prequential``'s scores) of ``aucstream.StreamPipeline()`` (online standard
   scaler + one-pass search) against River's ``StandardScaler() | LogisticRegression()``;
   and ``window_auc`` of ``prequential(SOLAM(), window=500, rank="proba")`` against
   River's ``RollingROCAUC(500)`` of ``RiverClassifier(SOLAM())`` at every 250 rows.

Usage::

    python benchmarks/bench_prequential.py [--repeat 3] [--out docs/results/prequential.md]
    PYTHONPATH=OTHER/src python benchmarks/bench_prequential.py --cost-only SOLAM
    PYTHONPATH=OTHER/src python benchmarks/bench_prequential.py --own-cost --repeat 30
    python benchmarks/bench_prequential.py --paired SOLAM --repeat 60 [--sliced] [--times 10]
        [--data {a9a,ijcnn1,skin}]
    python benchmarks/bench_prequential.py --paired StreamPipeline --repeat 10 [--data ...]
    python benchmarks/bench_prequential.py --pipelines [--repeat 3] [--delayed-rows 5000]
    python benchmarks/bench_prequential.py --woven [--repeat 2] [--data {a9a,ijcnn1,skin}]
        [--models 'StreamPipeline()' ...]

``--paired`` is the way to read the cost target on a busy machine (:func:`paired`):
one process, single passes of learning alone and of ``prequential`` interleaved
A B B A with warm caches, CPU time of each, the ratios of the least and of the
median times, and each pass's ratio over the learning pass next to it (median,
quartiles, 10th and 90th percentiles). The ratio runs of ``--cost-only`` (and section
1) time blocks of 5 passes in turn and were seen to move by 0.1 between runs.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import platform
import subprocess
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("AUCSTREAM_DATA", ROOT.parent / "shared" / "data"))
D = 123


def a9a() -> tuple[sp.csr_matrix, np.ndarray, str]:
    path = DATA / "a9a.xz"
    if path.exists():
        from sklearn.datasets import load_svmlight_file

        X, y = load_svmlight_file(lzma.open(path), n_features=D)
        return X.tocsr(), y, "a9a"
    rng = np.random.default_rng(0)
    n = 32_561
    X = sp.random(n, D, density=0.11, format="csr", random_state=0)
    X.data[:] = 1.0
    y = np.where(rng.random(n) < 0.24, 1.0, -1.0)
    return X, y, "generated (a9a shape)"


def other_stream(name: str) -> tuple[object, np.ndarray, str]:
    """``ijcnn1`` (``$AUCSTREAM_DATA/ijcnn1.xz``, 49,990 rows, 22 features) or ``skin``
    (``Skin_NonSkin.txt.xz``, 245,057 rows of 3 colour values scaled to [0, 1], the
    first 50,859 all positive: many repeated rows, so many tied scores), labels +/-1;
    for ``--paired --data``. A learner costs little a row on both (ijcnn1's 13
    non-zeros a row, skin's 3 dense values), so the evaluation's share shows."""
    if name == "ijcnn1":
        from sklearn.datasets import load_svmlight_file

        X, y = load_svmlight_file(lzma.open(DATA / "ijcnn1.xz"))
        return X.tocsr(), np.where(y > 0, 1.0, -1.0), "ijcnn1"
    table = np.loadtxt(lzma.open(DATA / "Skin_NonSkin.txt.xz"))
    return table[:, :3] / 255.0, np.where(table[:, 3] == 1, 1.0, -1.0), "skin"


def chunks(X, y, size: int):
    return ((X[i : i + size], y[i : i + size]) for i in range(0, X.shape[0], size))


def cost(X, y, repeat: int, make, inner: int = 5) -> dict:
    from aucstream.evaluation import prequential
    from aucstream.metrics import PrequentialAUC

    def alone():
        model = make()
        for Xc, yc in chunks(X, y, 1000):
            model.test_then_train(Xc, yc, classes=[-1, 1])

    def by_hand():  # what fit_stream(running_auc=True) does: the exact AUC only
        model = make()
        auc = PrequentialAUC(pos_label=True)
        for Xc, yc in chunks(X, y, 1000):
            auc.update(yc == 1, model.test_then_train(Xc, yc, classes=[-1, 1]))
            auc.get()

    def replayed():  # the calibration replayed: the decision scores, no metric
        from aucstream import _calibration

        model = make()
        state = _calibration.new_state()
        for Xc, yc in chunks(X, y, 1000):
            raw = model.test_then_train(Xc, yc, classes=[-1, 1])
            written = np.empty((2, raw.size))  # the decision scores and probabilities
            _calibration.replay(
                state, raw, np.where(yc == 1, 1.0, -1.0), *written, _calibration.NO_WEIGHTS
            )

    def floor():  # by_hand and the calibration replayed: the decision scores' exact AUC
        from aucstream import _calibration

        model = make()
        auc = PrequentialAUC(pos_label=True)
        state = _calibration.new_state()
        for Xc, yc in chunks(X, y, 1000):
            raw = model.test_then_train(Xc, yc, classes=[-1, 1])
            written = np.empty((2, raw.size))  # the decision scores and probabilities
            _calibration.replay(
                state, raw, np.where(yc == 1, 1.0, -1.0), *written, _calibration.NO_WEIGHTS
            )
            auc.update(yc == 1, written[0])
            auc.get()

    def counted():  # test_then_train + the auc column's exact count of the raw scores
        from aucstream._sorted_pairs import StreamRuns

        model = make()
        runs = StreamRuns()
        for Xc, yc in chunks(X, y, 1000):
            runs.add(yc == 1, model.test_then_train(Xc, yc, classes=[-1, 1]))
            runs.auc()

    def auc_only():
        prequential(make(), chunks(X, y, 1000), every=1000, metrics=["auc"])

    def evaluated():
        prequential(make(), chunks(X, y, 1000), every=1000)

    def through_prequential_auc():  # the auc column as it was: PrequentialAUC's list of runs
        from unittest import mock

        from aucstream.evaluation import _prequential_columns as columns

        before = columns._Column(
            lambda o: columns._PairMetric(PrequentialAUC(pos_label=True)), default=True
        )
        with mock.patch.dict(columns.METRICS, {"auc": before}):
            prequential(make(), chunks(X, y, 1000), every=1000)

    def at_the_end():  # the default: one checkpoint, the metrics fed in large blocks
        prequential(make(), chunks(X, y, 1000))

    def loop():  # the evaluation loop with one cheap column, a checkpoint per chunk
        prequential(make(), chunks(X, y, 1000), every=1000, metrics=["positive_rate"])

    def loop_at_the_end():  # the same, one checkpoint at the end
        prequential(make(), chunks(X, y, 1000), metrics=["positive_rate"])

    def cpu(fn) -> float:  # a pass is short (tens of ms): time `inner` of them at once
        start = time.process_time()
        for _ in range(inner):
            fn()
        return (time.process_time() - start) / inner

    runs = {
        "alone": alone,
        "by_hand": by_hand,
        "replayed": replayed,
        "floor": floor,
        "counted": counted,
        "auc_only": auc_only,
        "prequential": evaluated,
        "before": through_prequential_auc,
        "at_the_end": at_the_end,
        "loop": loop,
        "loop_at_the_end": loop_at_the_end,
    }
    times: dict[str, list[float]] = {name: [] for name in runs}
    for fn in runs.values():  # warm-up: numba loads its caches
        fn()
    for _ in range(repeat):  # interleaved, so that a busy machine slows all alike
        for name, fn in runs.items():
            times[name].append(cpu(fn))
    out: dict = {name: min(t) for name, t in times.items()}
    # each run over the learning alone timed next to it, the median over the repeats
    alone_times = np.array(times["alone"])
    out["r"] = {name: float(np.median(np.array(t) / alone_times)) for name, t in times.items()}
    # each repeat's prequential() over its own learning alone (timed next to each other)
    paired = np.array(times["prequential"]) / np.array(times["alone"])
    out["paired"] = (float(np.median(paired)), float(paired.min()), float(paired.max()))
    gain = np.array(times["prequential"]) / np.array(times["before"])
    out["gain"] = (float(np.median(gain)), float(gain.min()), float(gain.max()))
    return out


def own_cost(X, y, repeat: int) -> dict:
    """``prequential``'s own CPU time per chunk of 1,000 rows, in microseconds: SOLAM's
    learning replaced by a learner that writes the decision scores and probabilities
    a first run of SOLAM wrote (through the same request, ``_calibration.writing``),
    so that what is timed is the evaluation alone (labels, metrics, checkpoints, the
    curve); ``learning`` is that replayed learning alone (its first call fits two rows:
    learning's cost, not the evaluation's). The ratio runs of :func:`cost` move by about
    0.1 on a busy machine; these
    differences of a few microseconds a chunk show. Best of ``repeat`` passes each,
    interleaved."""
    from aucstream import SOLAM, _calibration
    from aucstream.evaluation import prequential

    parts = list(chunks(X, y, 1000))
    model, recorded = SOLAM(random_state=0), []
    for Xc, yc in parts:
        out = np.empty((2, yc.size))
        with _calibration.writing(model, out):
            model.test_then_train(Xc, yc, classes=[-1, 1])
        recorded.append(out)

    class Replayed(SOLAM):  # fitted on two rows, then the recorded outputs
        def test_then_train(self, X, y, classes=None):
            if classes is not None:  # (the request, of another size, is left untaken)
                super().test_then_train(X[:2], y[:2], classes=classes)
                self.k_ = 0
            scores, probabilities = _calibration.written_for(self, y.shape[0])
            scores[:], probabilities[:] = recorded[self.k_]
            self.k_ += 1

    runs = {
        "every": {"every": 1000},
        "end": {},
        "loop": {"every": 1000, "metrics": ["positive_rate"]},
        "loop_at_the_end": {"metrics": ["positive_rate"]},
        "auc": {"every": 1000, "metrics": ["auc"]},
        "log_loss": {"every": 1000, "metrics": ["log_loss"]},
    }

    def learning() -> None:  # the replayed learning alone, asked to write as prequential asks
        model = Replayed(random_state=0)
        for k, (Xc, yc) in enumerate(parts):
            with _calibration.writing(model, np.empty((2, yc.size))):
                model.test_then_train(Xc, yc, classes=[-1, 1] if k == 0 else None)

    best = dict.fromkeys([*runs, "learning"], np.inf)
    for _ in range(repeat + 1):  # (the first pass loads numba's caches)
        for name, options in runs.items():
            start = time.process_time()
            prequential(Replayed(random_state=0), iter(parts), **options)
            best[name] = min(best[name], time.process_time() - start)
        start = time.process_time()
        learning()
        best["learning"] = min(best["learning"], time.process_time() - start)
    return {name: 1e6 * t / len(parts) for name, t in best.items()}


def paired(X, y, repeat: int, make, sliced: bool = False) -> dict:
    """The cost ratio resolved in ONE process: CPU time (``time.process_time_ns``, the
    process's own, so another job's time slices are not counted) of single passes of
    ``test_then_train`` alone and of :func:`~aucstream.evaluation.prequential`,
    interleaved, many times.

    Two passes timed in two processes, or minutes apart, differ by more than the 0.1
    the target resolves (the machine's load moves, caches and frequency with it);
    here each pass of ``prequential`` has a pass of learning alone next to it, in
    turn A B B A (so that neither always runs first), with the same warm caches
    (three passes of each first: numba's caches loaded, the allocator warm), the
    garbage collector run before each pass and disabled during it (a collection
    falls in one pass and not the next). Reported per run: the ratio of the least
    times (the passes least disturbed), the ratio of the medians, and each pass's
    ratio over the learning pass next to it, as a median with its quartiles and its
    10th and 90th percentiles (the spread a reader should see). ``sliced``: the
    chunks are sliced inside each pass (both runs, as :func:`cost` does); else once
    beforehand, so that learning alone is the kernel and its validation (stricter).
    """
    import gc

    from aucstream.evaluation import prequential

    parts = list(chunks(X, y, 1000))

    def stream():
        return chunks(X, y, 1000) if sliced else iter(parts)

    def alone():
        model = make()
        for k, (Xc, yc) in enumerate(stream()):
            model.test_then_train(Xc, yc, classes=[-1, 1] if k == 0 else None)

    runs = {
        "alone": alone,
        "default": lambda: prequential(make(), stream()),
        "every": lambda: prequential(make(), stream(), every=1000),
        "loop": lambda: prequential(make(), stream(), metrics=["positive_rate"]),
    }
    names = list(runs)
    for _ in range(3):
        for fn in runs.values():
            fn()
    times: dict[str, list[int]] = {name: [] for name in names}
    enabled = gc.isenabled()
    load = [os.getloadavg()[0]]
    try:
        gc.disable()
        for r in range(repeat):
            for name in names if r % 2 == 0 else names[::-1]:
                gc.collect()
                start = time.process_time_ns()
                runs[name]()
                times[name].append(time.process_time_ns() - start)
            if r % 10 == 9:
                load.append(os.getloadavg()[0])
    finally:
        if enabled:
            gc.enable()
    load.append(os.getloadavg()[0])
    base = np.array(times["alone"], dtype=float)
    out: dict = {
        "repeat": repeat,
        "sliced": sliced,
        "chunks": len(parts),
        "load": (min(load), max(load)),
        "alone_us_a_chunk": (
            float(base.min()) / 1e3 / len(parts),
            float(np.median(base)) / 1e3 / len(parts),
        ),
    }
    for name in names[1:]:
        t = np.array(times[name], dtype=float)
        ratio = t / base
        out[name] = {
            "least": float(t.min() / base.min()),
            "medians": float(np.median(t) / np.median(base)),
            "paired": float(np.median(ratio)),
            "quartiles": tuple(float(q) for q in np.percentile(ratio, [25, 75])),
            "p10_p90": tuple(float(q) for q in np.percentile(ratio, [10, 90])),
            "own_us_a_chunk": float(t.min() - base.min()) / 1e3 / len(parts),
        }
    return out


def woven(X, y, repeat: int, delays=(10, 100, 1000), models=None) -> list[dict]:
    """``prequential`` with a constant delay through weighted learners (by default
    SOLAM, OPAUC, AdaOAM, UnivariateOnline; ``models`` names others, e.g. the default
    ``StreamPipeline()``, whose search records its decisions), their rows woven into
    one weighted call a chunk (:mod:`aucstream.evaluation._prequential_weave`) against
    the row-by-row path (``_WEAVE`` False), in one process, and against their
    ``test_then_train`` pass: process microseconds a row over the whole stream in
    chunks of 1,000 (the least of ``repeat`` runs, the three alternated), and whether
    the two curves agree."""
    from aucstream import OPAUC, SOLAM, AdaOAM, OnePassSearch, StreamPipeline, UnivariateOnline
    from aucstream.evaluation import _prequential as P
    from aucstream.evaluation import prequential

    makes = {
        "SOLAM()": lambda: SOLAM(random_state=0),
        "OPAUC()": lambda: OPAUC(random_state=0),
        "AdaOAM()": lambda: AdaOAM(random_state=0),
        "UnivariateOnline()": UnivariateOnline,
        "StreamPipeline()": StreamPipeline,
        "OnePassSearch()": OnePassSearch,
    }
    chosen = list(makes)[:4] if models is None else models
    n, out = X.shape[0], []
    for name, make in ((m, makes[m]) for m in chosen):
        for delay in delays:
            best = {"woven": np.inf, "row by row": np.inf, "pass": np.inf}
            curves = {}
            for _ in range(repeat):
                for way in ("woven", "row by row"):
                    P._WEAVE = way == "woven"
                    start = time.process_time()
                    curves[way] = prequential(make(), chunks(X, y, 1000), delay=delay)
                    best[way] = min(best[way], time.process_time() - start)
                P._WEAVE = True
                model, start = make(), time.process_time()
                for k, (Xc, yc) in enumerate(chunks(X, y, 1000)):
                    model.test_then_train(Xc, yc, classes=[-1, 1] if k == 0 else None)
                best["pass"] = min(best["pass"], time.process_time() - start)
            a, b = curves["woven"]["auc"].iloc[-1], curves["row by row"]["auc"].iloc[-1]
            out.append(
                {
                    "model": name,
                    "delay": delay,
                    **{f"{k}_us_a_row": round(v / n * 1e6, 2) for k, v in best.items()},
                    "speedup": round(best["row by row"] / best["woven"], 1),
                    "auc": round(float(a), 6),
                    "auc_difference": float(abs(a - b)),
                }
            )
    return out


def delayed(X, y, rows: int) -> dict:
    from aucstream import SOLAM
    from aucstream.evaluation import prequential

    X, y = X[:rows], y[:rows]
    start = time.process_time()
    prequential(SOLAM(random_state=0), chunks(X, y, 1000), delay=10)
    per_row = (time.process_time() - start) / rows
    model = SOLAM(random_state=0)
    start = time.process_time()
    for Xc, yc in chunks(X, y, 1000):
        model.test_then_train(Xc, yc, classes=[-1, 1])
    return {"rows": rows, "delayed": per_row, "alone": (time.process_time() - start) / rows}


def meta(X, y, rows: int, repeat: int) -> dict:
    """StreamPipeline(OnlineStandardScaler(), SOLAM()) at delay 0, chunks of 1,000: the
    chunked path (one test_then_train per chunk) against the row-by-row path it
    replaced (forced by hiding the calibration's owner) and learning alone."""
    from unittest import mock

    from aucstream import SOLAM, StreamPipeline
    from aucstream.evaluation import _prequential, prequential
    from aucstream.preprocessing import OnlineStandardScaler

    X, y = X[:rows], y[:rows]

    def make():
        return StreamPipeline(OnlineStandardScaler(with_mean=False), SOLAM(random_state=0))

    def alone():
        model = make()
        for Xc, yc in chunks(X, y, 1000):
            model.test_then_train(Xc, yc, classes=[-1, 1])

    def chunked():
        return prequential(make(), chunks(X, y, 1000), every=1000)

    def row_by_row():
        with mock.patch.object(_prequential, "_calibration_owner", lambda *a: None):
            return prequential(make(), chunks(X, y, 1000), every=1000)

    a, b = chunked(), row_by_row()
    same = float(np.max(np.abs(a["auc"].to_numpy() - b["auc"].to_numpy())))
    times: dict[str, list[float]] = {"alone": [], "chunked": [], "row_by_row": []}
    for _ in range(repeat):
        for name, fn in (("alone", alone), ("chunked", chunked), ("row_by_row", row_by_row)):
            start = time.process_time()
            fn()
            times[name].append(time.process_time() - start)
    out = {name: min(t) / rows for name, t in times.items()}
    out.update(rows=rows, auc_diff=same)
    # OnePassSearch row by row: scored through one validation (decision, probability
    # and prediction from one score_samples) against the three calls it replaced
    from aucstream import OnePassSearch

    few = min(rows, 400)
    Xf, yf = X[:few], y[:few]

    def search():
        return prequential(OnePassSearch(), chunks(Xf, yf, 1000), every=1000)

    def three_calls():
        with mock.patch.object(_prequential, "_scores_as_base", lambda model: False):
            return search()

    pair: dict[str, list[float]] = {"search": [], "three_calls": []}
    for _ in range(min(repeat, 3)):
        for name, fn in (("search", search), ("three_calls", three_calls)):
            start = time.process_time()
            fn()
            pair[name].append(time.process_time() - start)
    out.update({name: min(t) / few for name, t in pair.items()}, search_rows=few)
    return out


def reads(n: int = 10**6, repeat: int = 3) -> dict:
    from sklearn.metrics import roc_auc_score

    from aucstream.metrics import PrequentialAUC

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, n).astype(bool)
    s = rng.normal(size=n) + y
    from aucstream._sorted_pairs import StreamRuns

    metric = PrequentialAUC(pos_label=True)
    runs = StreamRuns()  # what prequential's auc column keeps
    last = n - 1000 * repeat  # (each repeat adds one more chunk, then reads)
    for i in range(0, last, 1000):
        metric.update(y[i : i + 1000], s[i : i + 1000])
        runs.add(y[i : i + 1000], s[i : i + 1000])
    runs.auc()
    best_get = best_runs = best_counting = best_sort = np.inf
    for k in range(repeat):
        part = slice(last + 1000 * k, last + 1000 * (k + 1))
        metric.update(y[part], s[part])
        runs.add(y[part], s[part])
        start = time.process_time()
        ours = metric.get()
        best_get = min(best_get, time.process_time() - start)
        start = time.process_time()
        runs.auc()  # (counts the chunk added since the last read: what its update deferred)
        best_counting = min(best_counting, time.process_time() - start)
        start = time.process_time()
        column = runs.auc()  # (nothing pending: the read itself)
        best_runs = min(best_runs, time.process_time() - start)
        start = time.process_time()
        theirs = roc_auc_score(y, s)
        best_sort = min(best_sort, time.process_time() - start)
    return {
        "n": n,
        "get": best_get,
        "runs": best_runs,
        "runs_counting": best_counting,
        "sort": best_sort,
        "diff": abs(ours - theirs),
        "same": column == ours,
    }


def phishing() -> dict:
    from river import compose, datasets, evaluate, linear_model, metrics, preprocessing

    from aucstream import StreamPipeline
    from aucstream.evaluation import prequential

    rows = list(datasets.Phishing())
    keys = sorted({k for x, _ in rows for k in x})
    X = np.array([[float(x.get(k, 0.0)) for k in keys] for x, _ in rows])
    y = np.array([label for _, label in rows])

    class Recorded(metrics.LogLoss):  # River's log-loss, keeping what it was given
        def __init__(self):
            super().__init__()
            self.given = []

        def update(self, y_true, y_pred, w=1.0):
            self.given.append(y_pred.get(True, 0.0))
            super().update(y_true, y_pred, w)

    river_model = compose.Pipeline(
        preprocessing.StandardScaler(), linear_model.LogisticRegression()
    )
    river_loss = Recorded()
    start = time.process_time()
    evaluate.progressive_val_score(rows, river_model, river_loss)
    river_seconds = time.process_time() - start
    from sklearn.metrics import roc_auc_score

    start = time.process_time()
    curve = prequential(
        StreamPipeline(), ((X[i : i + 50], y[i : i + 50]) for i in range(0, len(y), 50))
    )
    ours_seconds = time.process_time() - start
    from aucstream import SOLAM
    from aucstream.river import RiverClassifier

    keys: list = []
    for x, _ in rows:  # RiverClassifier's columns: keys in order of first appearance
        for k in sorted(x, key=lambda k: (type(k).__name__, repr(k))):
            if k not in keys:
                keys.append(k)
    Xk = np.array([[float(x.get(k, 0.0)) for k in keys] for x, _ in rows])
    rolling = metrics.RollingROCAUC(500)
    adapter = RiverClassifier(SOLAM(), n_features=len(keys))
    theirs = [
        rolling.get() for _ in evaluate.iter_progressive_val_score(rows, adapter, rolling, step=250)
    ]
    window = prequential(
        SOLAM(),
        ((Xk[i : i + 250], y[i : i + 250]) for i in range(0, len(y), 250)),
        window=500,
        every=250,
        rank="proba",
    )["window_auc"].to_numpy()
    return {
        "window_diff": float(np.max(np.abs(window - np.array(theirs)))),
        "window_last": (window[-1], theirs[-1]),
        "n": len(y),
        "ours": (curve["log_loss"].iloc[-1], curve["auc"].iloc[-1], ours_seconds),
        "river": (river_loss.get(), roc_auc_score(y, river_loss.given), river_seconds),
    }


def machine() -> str:
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        lines = [
            line
            for line in lscpu.splitlines()
            if line.split(":")[0] in ("Model name", "CPU(s)", "Architecture")
        ]
        lscpu = "\n".join(lines)
    except (OSError, subprocess.CalledProcessError):
        lscpu = platform.processor()
    import numba
    import sklearn

    return (
        f"```\n{lscpu}\n```\n\nPython {platform.python_version()}, numpy {np.__version__}, "
        f"numba {numba.__version__}, scikit-learn {sklearn.__version__}"
    )


def pipelines(X, y, repeat: int, delayed_rows: int) -> list[dict]:
    """``prequential`` of the models users run, against a pass of their
    ``test_then_train`` over the same chunks of 1,000 (process seconds, the least of
    ``repeat`` runs, the two runs alternated), and with ``delay=100`` (process
    microseconds a row over the first ``delayed_rows`` rows; the default pipeline
    over a fifth of them, its rows cost fifty times more): ``SOLAM()``,
    ``StreamPipeline(OnlineStandardScaler(), SOLAM())`` and the default
    ``StreamPipeline()``, whose search records its decisions as it learns
    (:mod:`aucstream._search_scores`)."""
    from aucstream import SOLAM, StreamPipeline
    from aucstream.datasets import iter_chunks
    from aucstream.evaluation import prequential
    from aucstream.preprocessing import OnlineStandardScaler

    makes = {
        "SOLAM()": lambda: SOLAM(random_state=0),
        "StreamPipeline(OnlineStandardScaler(), SOLAM())": lambda: StreamPipeline(
            OnlineStandardScaler(), SOLAM(random_state=0)
        ),
        "StreamPipeline()": StreamPipeline,
    }
    out = []
    for name, make in makes.items():
        warm = iter_chunks(X[:3000], y[:3000], 1000)
        prequential(make(), warm, delay=100, classes=[-1, 1])  # (warm)
        best = {"prequential": np.inf, "test_then_train": np.inf}
        for _ in range(repeat):
            start = time.process_time()
            prequential(make(), chunks(X, y, 1000))
            best["prequential"] = min(best["prequential"], time.process_time() - start)
            model, start = make(), time.process_time()
            for k, (Xc, yc) in enumerate(chunks(X, y, 1000)):
                model.test_then_train(Xc, yc, classes=[-1, 1] if k == 0 else None)
            best["test_then_train"] = min(best["test_then_train"], time.process_time() - start)
        rows = delayed_rows if name != "StreamPipeline()" else delayed_rows // 5
        start = time.process_time()
        prequential(make(), iter_chunks(X[:rows], y[:rows], 1000), delay=100, classes=[-1, 1])
        out.append(
            {
                "model": name,
                "prequential_s": round(best["prequential"], 3),
                "test_then_train_s": round(best["test_then_train"], 3),
                "ratio": round(best["prequential"] / best["test_then_train"], 2),
                "delay_100_us_a_row": round((time.process_time() - start) / rows * 1e6, 1),
                "delay_rows": rows,
            }
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--delayed-rows", type=int, default=5000)
    parser.add_argument("--meta-rows", type=int, default=3000)
    parser.add_argument("--out", default=str(ROOT / "docs" / "results" / "prequential.md"))
    parser.add_argument(
        "--own-cost",
        action="store_true",
        help="print prequential's own CPU microseconds per chunk (SOLAM's learning "
        "replaced by its recorded outputs) as JSON and stop",
    )
    parser.add_argument(
        "--cost-only",
        choices=("SOLAM", "OPAUC"),
        help="print section 1's paired median ratios for this learner as JSON and stop "
        "(to compare two versions of the library: run it under each one's PYTHONPATH, "
        "in turn)",
    )
    parser.add_argument(
        "--paired",
        choices=("SOLAM", "OPAUC", "StreamPipeline"),
        help="the cost ratio in one process: single passes of learning alone and of "
        "prequential, interleaved (A B B A), CPU time, --repeat times (at least 40, "
        "but for the default StreamPipeline, whose pass takes 0.2 to 0.4 s); "
        "prints the ratios of the least and the median times and the paired ratios' "
        "median and spread as JSON and stops (see paired())",
    )
    parser.add_argument(
        "--sliced",
        action="store_true",
        help="with --paired: slice the chunks inside each pass (both runs), as section 1 does",
    )
    parser.add_argument(
        "--data",
        choices=("a9a", "ijcnn1", "skin"),
        default="a9a",
        help="with --paired: the stream (see other_stream(); these two need $AUCSTREAM_DATA)",
    )
    parser.add_argument(
        "--times",
        type=int,
        default=1,
        help="with --paired: the stream is the data set this many times in a row (a "
        "longer pass, over which a call's fixed costs weigh less)",
    )
    parser.add_argument(
        "--pipelines",
        action="store_true",
        help="prequential of SOLAM(), a pipeline over it and the default pipeline against "
        "their test_then_train pass, and their cost a row with delay=100, as JSON "
        "lines, and stop (see pipelines())",
    )
    parser.add_argument(
        "--woven",
        action="store_true",
        help="prequential with delays 10, 100 and 1000 through bare weighted learners, "
        "woven against row by row and against their pass, as JSON lines, and stop "
        "(see woven())",
    )
    parser.add_argument(
        "--models",
        nargs="+",
        default=None,
        help="with --woven: the models, e.g. 'StreamPipeline()' (default: the bare four)",
    )
    args = parser.parse_args()
    from aucstream import OPAUC, SOLAM

    X, y, name = a9a() if args.data == "a9a" else other_stream(args.data)
    if args.pipelines:
        for row in pipelines(X, y, args.repeat, args.delayed_rows):
            print(json.dumps(row))
        return
    if args.woven:
        for row in woven(X, y, args.repeat, models=args.models):
            print(json.dumps(row))
        return
    if args.own_cost:
        print(json.dumps(own_cost(X, y, max(args.repeat, 10))))
        return
    if args.paired:
        from aucstream import StreamPipeline

        make = {
            "SOLAM": lambda: SOLAM(random_state=0),
            "OPAUC": lambda: OPAUC(random_state=0),
            "StreamPipeline": StreamPipeline,  # (the default: what `evaluate` runs)
        }[args.paired]
        if args.times < 1:
            parser.error("--times must be at least 1")
        if args.times > 1:
            X = (
                sp.vstack([X] * args.times, format="csr")
                if sp.issparse(X)
                else np.tile(X, (args.times, 1))
            )
            y = np.tile(y, args.times)
        repeat = args.repeat if args.paired == "StreamPipeline" else max(args.repeat, 40)
        result = paired(X, y, repeat, make, sliced=args.sliced)
        print(json.dumps({"data": name, "rows": int(X.shape[0]), **result}))
        return
    if args.cost_only:
        learner = {"SOLAM": SOLAM, "OPAUC": OPAUC}[args.cost_only]
        only = cost(X, y, args.repeat, lambda: learner(random_state=0))
        print(json.dumps({"ratios": only["r"], "alone": only["alone"]}))
        return
    c = cost(X, y, args.repeat, lambda: SOLAM(random_state=0))
    o = cost(X, y, args.repeat, lambda: OPAUC(random_state=0))
    # the target's reading: single passes interleaved, many times, three rounds (paired())
    rounds = [paired(X, y, 100, lambda: SOLAM(random_state=0)) for _ in range(3)]
    target = float(np.median([run["default"]["paired"] for run in rounds]))
    d = delayed(X, y, args.delayed_rows)
    mt = meta(X, y, args.meta_rows, args.repeat)
    r = reads()
    p = phishing()
    rc, ro = c["r"], o["r"]
    ratio = rc["prequential"]
    lines = [
        "# Prequential evaluation: cost, reads, and River",
        "",
        "Written by `python benchmarks/bench_prequential.py` "
        f"(`--repeat {args.repeat}`). CPU seconds (`time.process_time`), best of the "
        "repeats (each the mean of 5 passes in section 1); the machine was shared with "
        "other jobs, so ratios are the numbers to read: in section 1 each is the median "
        "over the repeats of the run's time over the learning alone timed next to it "
        "(interleaved), and differences of a few hundredths are noise.",
        "",
        f"## 1. Cost of evaluating: {name}, {X.shape[0]:,} rows, chunks of 1,000, SOLAM",
        "",
        "| run | CPU s | ratio |",
        "|---|---:|---:|",
        f"| `test_then_train` per chunk (learning alone) | {c['alone']:.3f} | 1.00 |",
        f"| `test_then_train` + `PrequentialAUC` by hand (`fit_stream(running_auc=True)`) "
        f"| {c['by_hand']:.3f} | {rc['by_hand']:.2f} |",
        f"| `test_then_train` + calibration replayed (the decision scores and "
        f"probabilities `decision_function` and `predict_proba` gave, no metric) "
        f"| {c['replayed']:.3f} | {rc['replayed']:.2f} |",
        f"| `test_then_train` + calibration replayed + `PrequentialAUC` of the decision "
        f"scores by hand (an exact AUC of what `decision_function` gave, the metric's own "
        f"upkeep) | {c['floor']:.3f} | {rc['floor']:.2f} |",
        f"| `test_then_train` + the exact count `prequential`'s `auc` column keeps "
        f"(`_sorted_pairs.StreamRuns`) of the scores, by hand | {c['counted']:.3f} | "
        f"{rc['counted']:.2f} |",
        f"| `prequential(metrics=['auc'])`, a checkpoint per chunk | {c['auc_only']:.3f} | "
        f"{rc['auc_only']:.2f} |",
        f"| `prequential()`: auc, log_loss, brier, positive_rate, a checkpoint per chunk "
        f"| {c['prequential']:.3f} | **{ratio:.2f}** |",
        f"| `prequential()`, the same columns, one checkpoint at the end (the default "
        f"`every=None`) | {c['at_the_end']:.3f} | {rc['at_the_end']:.2f} |",
        f"| the loop alone: `prequential(metrics=['positive_rate'])`, a checkpoint per "
        f"chunk | {c['loop']:.3f} | {rc['loop']:.2f} |",
        f"| the loop alone, one checkpoint at the end | {c['loop_at_the_end']:.3f} | "
        f"{rc['loop_at_the_end']:.2f} |",
        "",
        "Each repeat's `prequential()` over the learning alone timed next to it: median "
        f"{c['paired'][0]:.2f}, from {c['paired'][1]:.2f} to {c['paired'][2]:.2f} over the "
        f"{args.repeat} repeats (the best times' ratio: "
        f"{c['prequential'] / c['alone']:.2f}). The same `prequential()` with its `auc` column "
        "counted by `PrequentialAUC` (as before `StreamRuns`): "
        f"{c['before']:.3f} s ({rc['before']:.2f}); paired, the new column's "
        f"pass over it: median {c['gain'][0]:.2f}, from {c['gain'][1]:.2f} to "
        f"{c['gain'][2]:.2f}.",
        "",
        "The target's reading (`paired()`, `--paired SOLAM`): single passes of learning "
        "alone and of `prequential` interleaved (A B B A), 100 of each, CPU time of the "
        "process, the chunks sliced once beforehand (so that learning alone is the "
        "kernel and its checks: stricter than the table above, which slices in both "
        "runs); each pass's ratio over the learning pass next to it; three rounds:",
        "",
        "| round | `prequential()` (default: one checkpoint at the end) | a checkpoint per "
        "chunk (`every=1000`) | the loop alone (`metrics=['positive_rate']`, a checkpoint "
        "per chunk) | learning alone, us a chunk | load |",
        "|---|---:|---:|---:|---:|---:|",
        *(
            f"| {k + 1} | {run['default']['paired']:.3f} ({run['default']['quartiles'][0]:.3f}"
            f" to {run['default']['quartiles'][1]:.3f}) | {run['every']['paired']:.3f} | "
            f"{run['loop']['paired']:.3f} | {run['alone_us_a_chunk'][1]:.0f} | "
            f"{run['load'][0]:.1f} to {run['load'][1]:.1f} |"
            for k, run in enumerate(rounds)
        ),
        "",
        "(medians of the paired ratios, with their quartiles). "
        "Target: at most 1.1 over learning alone: "
        f"**{'met' if target <= 1.1 else 'not met'}** for SOLAM with the default "
        f"columns and checkpoints (median of the rounds {target:.3f}; the table's "
        f"5-repeat reading above: {rc['at_the_end']:.2f}), "
        f"**{'met' if ratio <= 1.1 else 'not met'}** with a checkpoint per chunk. "
        f"SOLAM learns {name} at {1e6 * c['alone'] / X.shape[0]:.2f} us a row, so every "
        "per-row cost of the metrics shows. The loop itself (labels checked, one "
        "`test_then_train` per chunk whose kernel writes the decision scores and "
        "probabilities as it learns: `_calibration.step_scored`, the floats a replay of "
        f"the calibration gives, which alone costs {(rc['replayed'] - 1):.2f}x; the rows "
        "held for the metrics; the curve's DataFrame) costs "
        f"{(rc['loop_at_the_end'] - 1):.2f}x with one checkpoint and "
        f"{(rc['loop'] - 1):.2f}x with a checkpoint per chunk (a CPU-clock and memory "
        "reading and a row each). The default columns add "
        f"{(rc['at_the_end'] - rc['loop_at_the_end']):.2f}x at the end (a logarithm per "
        "row for the log-loss, whose branch on the label no predictor learns; one sort "
        "per class and the pair count for the AUC) and "
        f"{(ratio - rc['loop']):.2f}x with a checkpoint per chunk, mostly the exact AUC of "
        f"1,000 new scores a chunk: {(rc['counted'] - 1):.2f}x learning alone for the "
        "count `prequential` keeps, by hand (split by class and sorted by numpy, then one "
        "compiled call that counts them against each other and against the other class's "
        "O(log n) sorted runs by galloping searches and merges them into their class's "
        "runs: O(log^2 n) comparisons a score, mostly unpredictable branches), against "
        f"{(rc['by_hand'] - 1):.2f}x for `PrequentialAUC`. "
        "A learner with more work per row "
        "leaves the evaluation a smaller share: OPAUC (full covariance, d = 123):",
        "",
        "| OPAUC run | CPU s | ratio |",
        "|---|---:|---:|",
        f"| `test_then_train` alone | {o['alone']:.3f} | 1.00 |",
        f"| `test_then_train` + `PrequentialAUC` by hand | {o['by_hand']:.3f} | "
        f"{ro['by_hand']:.2f} |",
        f"| `prequential(metrics=['auc'])` | {o['auc_only']:.3f} | {ro['auc_only']:.2f} |",
        f"| `prequential()` | {o['prequential']:.3f} | **{ro['prequential']:.2f}** |",
        f"| `prequential()`, one checkpoint at the end | {o['at_the_end']:.3f} | "
        f"{ro['at_the_end']:.2f} |",
        "",
        f"With `delay=10` (first {d['rows']:,} rows) the model scores "
        "and learns between examples (a score and a learning call per example, through "
        f"the learner's one-example paths): {1e6 * d['delayed']:.0f} us per example, against "
        f"{1e6 * d['alone']:.1f} us for `test_then_train` alone "
        f"({d['delayed'] / d['alone']:.0f}x).",
        "",
        f"A meta-learner at `delay=0`: `StreamPipeline(OnlineStandardScaler(with_mean="
        f"False), SOLAM())` on the first {mt['rows']:,} rows, chunks of 1,000, one "
        "checkpoint per chunk. `prequential` now feeds it whole chunks (one "
        "`test_then_train`, its learner's kernel writing the calibrated scores): "
        f"{1e6 * mt['chunked']:.1f} us per example, against {1e6 * mt['row_by_row']:.0f} "
        f"us through the row-by-row path it replaced "
        f"({mt['row_by_row'] / mt['chunked']:.0f}x faster) and {1e6 * mt['alone']:.1f} us "
        f"for `test_then_train` alone ({mt['chunked'] / mt['alone']:.2f}x); the two paths' "
        f"AUCs differ by at most {mt['auc_diff']:.1e} over the checkpoints (SOLAM's "
        "kernel sums its score coordinate by coordinate as `coef_` is formed, so a score "
        "`decision_function` gives as an exact 0.0 is 0.0 there too, and no tie is "
        "broken; see `aucstream.evaluation._prequential`). "
        "`OnePassSearch` (and the default `StreamPipeline()` over it) still goes row by "
        "row: before each example it scores with the candidate of the best windowed AUC "
        "at that example, which its `test_then_train` scores do not tell. Its rows are "
        "now scored through one validation (decision score, probability and prediction "
        f"from one `score_samples`): {1e6 * mt['search']:.0f} us per example on the first "
        f"{mt['search_rows']:,} rows, against {1e6 * mt['three_calls']:.0f} us with the "
        "three calls (`decision_function`, `predict_proba`, `predict`) it replaced; most "
        "of what is left is its choice of the leader before each example.",
        "",
        f"## 2. Reading the cumulative AUC at n = {r['n']:,}",
        "",
        "| read | CPU ms per read |",
        "|---|---:|",
        f"| `PrequentialAUC.get()` (exact, counts kept) | {1e3 * r['get']:.3f} |",
        f"| the `auc` column's read (`StreamRuns.auc()`, the same count; the same float: "
        f"{r['same']}) | {1e3 * r['runs']:.3f} |",
        "| the column's first read after a chunk of 1,000 (it counts the chunk, as "
        f"`PrequentialAUC.update` does) | {1e3 * r['runs_counting']:.3f} |",
        f"| re-sorting all scores (`roc_auc_score`) | {1e3 * r['sort']:.1f} |",
        "",
        f"Ratio: re-sorting costs **{r['sort'] / max(r['get'], 1e-9):,.0f}x** a read of "
        f"`PrequentialAUC` and {r['sort'] / max(r['runs'], 1e-9):,.0f}x a read of the "
        f"column ({r['sort'] / max(r['runs_counting'], 1e-9):,.0f}x its first read after "
        f"a chunk, with the chunk's count) (values differ by {r['diff']:.1e}).",
        "",
        f"## 3. River's Phishing ({p['n']:,} rows), progressive validation, same run",
        "",
        "| model | log-loss | exact AUC | CPU s |",
        "|---|---:|---:|---:|",
        f"| aucstream `StreamPipeline()` (`prequential`) | {p['ours'][0]:.4f} | "
        f"{p['ours'][1]:.4f} | {p['ours'][2]:.2f} |",
        f"| River `StandardScaler() \\| LogisticRegression()` (`progressive_val_score`) | "
        f"{p['river'][0]:.4f} | {p['river'][1]:.4f} | {p['river'][2]:.2f} |",
        "",
        "The AUC of each is exact on the scores it emitted (for River: the probabilities "
        "`progressive_val_score` passed to its metric, ranked by `roc_auc_score`).",
        "",
        "`window_auc` of `prequential(SOLAM(), window=500, rank='proba')` against River's "
        "`RollingROCAUC(500)` under `progressive_val_score` of `RiverClassifier(SOLAM())`, "
        f"at every 250 rows: largest difference {p['window_diff']:.1e} (last window: "
        f"{p['window_last'][0]:.6f} and {p['window_last'][1]:.6f}). Ranking the "
        "probabilities (`rank='proba'`), as River does, is what makes them equal: the "
        "decision scores rank the examples of a window differently as the calibration "
        "moves. River's `RollingROCAUC` is exact on windows without tied probabilities "
        "(it does not count a tie one half); these windows have none.",
        "",
        "## Machine",
        "",
        machine(),
        "",
    ]
    Path(args.out).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
