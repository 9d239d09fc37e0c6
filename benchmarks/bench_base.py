"""Per-call cost of learning one example, and what the base class adds to the kernel.

A stream learnt one example at a time pays every per-call cost once per example.
For SOLAM, UnivariateOnline and OPAUC (full covariance) at d = 123 (a9a from
``$AUCSTREAM_DATA``, or a generated stream of its shape: 11% non-zeros, 24%
positives), this measures, on the same rows:

- issue 29's targets on dict rows, each call and its River peer in the same
  interleaved rounds (``issue29_targets``: ``learn_one``, ``predict_proba_one`` and
  ``decision_one`` against River's ``LogisticRegression``, the progressive loop
  against River's LogisticRegression with its ROCAUC; ``ratio_to_peer`` against
  ``TARGETS``);
- ``learn_one`` with dict rows (the non-zeros) against River's
  ``LogisticRegression.learn_one`` on the same dicts (when River is installed);
- ``learn_one`` with 1-D arrays, and one-row ``partial_fit`` with dense and with CSR
  rows, against scikit-learn's ``SGDClassifier.partial_fit`` on the same one-row
  inputs;
- the learner's own part of a one-row call: its update bound once to the fast
  path's buffers (``_bind_update``: the compiled kernel called at its entry point,
  with the learner's few Python lines around it; ``bound_update_us``, the time of
  loading a row and updating less that of loading it), so that the base class's
  part (checks, transaction, finiteness check) is the rest
  (``call_over_bound_update``: the call's time over the bound update's); and, for
  comparison with earlier runs, ``_update(chunk)`` on a prepared one-row chunk as a
  chunk calls it (arguments made and typed by numba's dispatcher at every call:
  ``call_over_dispatched_update``). For OPAUC a one-class row's transaction skips
  the other class's summary, which the kernel only reads.
  The three learners fit the probability calibration inside their kernels
  (``_tags.kernel_calibrates``), so its per-example work counts in the update, and the
  base class no longer makes a compiled call for it.
  Other helpers rewrite the kernels; this separates their cost from the base's;
- scoring one example (``decision_one``, ``predict_proba_one`` with arrays and dicts)
  against River's ``predict_proba_one`` and scikit-learn's one-row
  ``decision_function``, and the learners' own one-row ``decision_function``;
- :class:`aucstream.river.RiverClassifier` around each learner, on River-style dicts
  (string keys), against River's ``LogisticRegression`` (``learn_one``,
  ``predict_proba_one``);
- the targets of issue 29 as ratios to their peers (``ratio_to_peer``, lower is
  faster): the progressive loop on dicts (``predict_proba_one``, a one-pair
  ``PrequentialAUC.update``, ``learn_one``) against River's LogisticRegression with
  its ROCAUC, ``decision_one`` against River's ``predict_proba_one``, the one-pair
  metric update against River's ``ROCAUC.update`` (and with a read after every pair,
  against ``update`` and ``get``), and ``StreamPipeline().learn_one``
  against ``OPAUC().learn_one``;
- ``learn_one`` through the per-example entry against the fast path's one-row call
  it replaces (the entry switched off), in one process with interleaved rounds, and
  against River's ``LogisticRegression.learn_one`` in the same rounds;
- ``learn_one`` with 1-D arrays for every online learner with default parameters,
  and for the tuning-free race (``StreamPipeline()``, ``OnePassSearch()``) again
  after 5,000 examples, when its rounds have dropped candidates;
- chunks of 10,000 rows through the fast path and through the full validation (the
  fast path switched off), to show that large chunks did not get slower.

Times are CPU time of the calling thread (``time.thread_time``), best of several
rounds, so that other processes on a shared machine disturb them less; every ratio
compares two measurements of the same run.

Usage::

    python benchmarks/bench_base.py [--quick] [--targets]

(``--targets``: the rows of issue 29's targets alone, ``issue29_targets``.)
"""

from __future__ import annotations

import lzma
import os
import time
from functools import partial
from pathlib import Path

import numpy as np
import scipy.sparse as sp

DATA = Path(
    os.environ.get("AUCSTREAM_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data")
)
D = 123


def stream(n: int) -> tuple[sp.csr_matrix, np.ndarray, str]:
    """a9a's first n rows (or a generated stream of its shape), labels +1/-1."""
    path = DATA / "a9a.xz"
    if path.exists():
        from sklearn.datasets import load_svmlight_file

        X, y = load_svmlight_file(lzma.open(path), n_features=D)
        return X[:n].tocsr(), y[:n], "a9a"
    rng = np.random.default_rng(0)
    X = sp.random(n, D, density=0.11, format="csr", random_state=0)
    X.data[:] = 1.0
    y = np.where(rng.random(n) < 0.24, 1.0, -1.0)
    return X, y, "generated (a9a shape)"


def per_call(fn, items, rounds: int) -> float:
    """Best CPU seconds per item of ``fn(item)`` over ``rounds`` passes."""
    best = float("inf")
    for _ in range(rounds):
        start = time.thread_time()
        for item in items:
            fn(item)
        best = min(best, time.thread_time() - start)
    return best / len(items)


def _learners():
    from aucstream import OPAUC, SOLAM
    from aucstream.univariate import UnivariateOnline

    return {"SOLAM": SOLAM, "UnivariateOnline": UnivariateOnline, "OPAUC": OPAUC}


def _beside():
    """Learners measured with issue 29's targets against the same River peers, with no
    target of their own: the O(k) learners of hashed streams (issue 33)."""
    from aucstream import FTRLAUC, SPAM

    return {"FTRLAUC": FTRLAUC, "SPAM": SPAM}


def one_row_costs(quick: bool) -> list[dict]:
    from sklearn.linear_model import SGDClassifier

    from aucstream._chunks import Chunk

    n = 400 if quick else 2000
    rounds = 3 if quick else 7
    X, y, source = stream(n + 100)
    warm, Xs, ys = slice(0, 100), X[100:], y[100:]
    dense = Xs.toarray()
    dense_rows = [dense[i : i + 1] for i in range(n)]
    csr_rows = [Xs[i : i + 1] for i in range(n)]
    dicts = [dict(zip(r.indices.tolist(), r.data.tolist())) for r in csr_rows]
    label_rows = [ys[i : i + 1] for i in range(n)]
    rows, parts = [], []

    sgd = SGDClassifier(loss="log_loss").partial_fit(X[warm], y[warm], classes=[-1.0, 1.0])
    sgd_dense = per_call(lambda i: sgd.partial_fit(dense_rows[i], label_rows[i]), range(n), rounds)
    sgd_csr = per_call(lambda i: sgd.partial_fit(csr_rows[i], label_rows[i]), range(n), rounds)
    river = None
    try:
        from river import linear_model

        lr = linear_model.LogisticRegression()
        for i in range(100):
            lr.learn_one(dicts[i % n], bool(ys[i % n] > 0))
        river = per_call(lambda i: lr.learn_one(dicts[i], bool(ys[i] > 0)), range(n), rounds)
    except ImportError:
        pass
    peers = {
        "SGDClassifier.partial_fit, 1-row dense": sgd_dense,
        "SGDClassifier.partial_fit, 1-row CSR": sgd_csr,
    }
    if river is not None:
        peers["River LogisticRegression.learn_one, dict"] = river
    for peer, seconds in peers.items():
        rows.append({"learner": "(peer)", "call": peer, "us_per_call": round(seconds * 1e6, 2)})

    for name, cls in _learners().items():
        model = cls().partial_fit(X[warm], y[warm], classes=[-1.0, 1.0])
        model.learn_one(dense[0], ys[0])  # compile and walk the state once
        calls = {
            "learn_one, dict": (lambda i, m=model: m.learn_one(dicts[i], ys[i]), river, "River"),
            "learn_one, 1-D array": (
                lambda i, m=model: m.learn_one(dense[i], ys[i]),
                sgd_dense,
                "SGD",
            ),
            "partial_fit, 1-row dense": (
                lambda i, m=model: m.partial_fit(dense_rows[i], label_rows[i]),
                sgd_dense,
                "SGD",
            ),
            "partial_fit, 1-row CSR": (
                lambda i, m=model: m.partial_fit(csr_rows[i], label_rows[i]),
                sgd_csr,
                "SGD",
            ),
        }
        for call, (fn, peer_seconds, peer) in calls.items():
            seconds = per_call(fn, range(n), rounds)
            row = {"learner": name, "call": call, "us_per_call": round(seconds * 1e6, 2)}
            known = peer_seconds is not None
            row["peer"] = peer if known else "(not installed)"
            row["peer_us"] = round(peer_seconds * 1e6, 2) if known else ""
            row["speed_vs_peer"] = round(peer_seconds / seconds, 3) if known else ""
            rows.append(row)
        # the learner's own part of a one-row call: its update bound to the fast path's
        # buffers (kernel at its compiled entry point), and _update through numba's
        # dispatcher (as a chunk calls it)
        from aucstream._fastpath import FAST

        for layout, inputs in (("CSR", csr_rows), ("dense", dense_rows)):
            total = per_call(
                lambda i, m=model, x=inputs: m.partial_fit(x[i], label_rows[i]), range(n), rounds
            )
            one = FAST[model].plans[("one", layout == "dense")]
            fill = one.load_dense if layout == "dense" else one.load_sparse
            loads = []
            for i in range(n):
                r, label = inputs[i], 1.0 if ys[i] > 0 else -1.0
                if layout == "dense":
                    loads.append((r[0], label))
                else:
                    loads.append((r.indptr, r.indices, r.data, label))
            load = per_call(lambda a, f=fill: f(*a), loads, rounds)
            loaded = per_call(lambda a, f=fill, o=one, m=model: (f(*a), o.update(m)), loads, rounds)
            bound = max(loaded - load, 1e-9)
            chunks = []
            for i in range(n):
                quick_chunk = model._quick_chunk(inputs[i], label_rows[i], None, None)
                _, indptr, indices, data, y_pm = quick_chunk
                scores = np.empty(1) if model._tags.kernel_prequential else np.empty(0)
                chunks.append(Chunk(indptr, indices, data, y_pm, D, scores))
            update = per_call(lambda c, m=model: m._update(c), chunks, rounds)
            parts.append(
                {
                    "learner": name,
                    "call": f"partial_fit, 1-row {layout}",
                    "us_per_call": round(total * 1e6, 2),
                    "bound_update_us": round(bound * 1e6, 2),
                    "call_over_bound_update": round(total / bound, 2),
                    "dispatched_update_us": round(update * 1e6, 2),
                    "call_over_dispatched_update": round(total / update, 2),
                }
            )
    rows += parts
    for row in rows:
        row["data"] = source
    return rows


def big_chunks(quick: bool) -> list[dict]:
    """Chunks of 10,000 rows through the fast path and the full validation."""
    from aucstream._base import BaseStreamingAUC

    n = 20000 if quick else 30000
    X, y, source = stream(n)
    dense = X.toarray()
    rounds = 2 if quick else 3
    rows = []
    quick_chunk = BaseStreamingAUC._quick_chunk
    for name, cls in _learners().items():
        for layout, data in (("CSR", X), ("dense", dense)):
            times = {}
            for path in ("fast path", "full validation"):
                if path == "full validation":
                    BaseStreamingAUC._quick_chunk = lambda self, *args: None
                try:
                    model = cls().partial_fit(data[:100], y[:100], classes=[-1.0, 1.0])
                    chunks = [
                        (data[lo : lo + 10000], y[lo : lo + 10000]) for lo in range(0, n, 10000)
                    ]
                    times[path] = per_call(lambda c, m=model: m.partial_fit(*c), chunks, rounds)
                finally:
                    BaseStreamingAUC._quick_chunk = quick_chunk
            rows.append(
                {
                    "learner": name,
                    "call": f"partial_fit, 10,000-row {layout} chunks",
                    "rows_per_s_fast": round(10000 / times["fast path"]),
                    "rows_per_s_full": round(10000 / times["full validation"]),
                    "fast_over_full": round(times["full validation"] / times["fast path"], 3),
                    "data": source,
                }
            )
    return rows


def _river_lr(dicts: list[dict], ys: np.ndarray):
    """River's LogisticRegression warmed on the first rows, or None without River."""
    try:
        from river import linear_model
    except ImportError:
        return None
    lr = linear_model.LogisticRegression()
    for i in range(100):
        lr.learn_one(dicts[i % len(dicts)], bool(ys[i % len(dicts)] > 0))
    return lr


def scoring_costs(quick: bool) -> list[dict]:
    """Scoring one example: ``decision_one`` / ``predict_proba_one`` of dicts against
    River's ``predict_proba_one`` (issue 29's peer for both), of 1-D arrays against
    scikit-learn's one-row ``decision_function``. The learners have learnt their first
    rows by ``partial_fit`` and score the same rows again and again (the weights kept
    between calls, ``aucstream._dict_scoring.OneScore``)."""
    from sklearn.linear_model import SGDClassifier

    n = 400 if quick else 2000
    rounds = 3 if quick else 7
    X, y, source = stream(n + 100)
    Xs, ys = X[100:], y[100:]
    dense = Xs.toarray()
    dicts = [dict(zip(r.indices.tolist(), r.data.tolist())) for r in (Xs[i] for i in range(n))]
    sgd = SGDClassifier(loss="log_loss").partial_fit(X[:100], y[:100], classes=[-1.0, 1.0])
    sgd_us = per_call(lambda i: sgd.decision_function(dense[i : i + 1]), range(n), rounds) * 1e6
    lr = _river_lr(dicts, ys)
    river_us = None
    if lr is not None:
        river_us = per_call(lambda i: lr.predict_proba_one(dicts[i]), range(n), rounds) * 1e6
    rows = [
        {
            "learner": "(peer)",
            "call": "SGDClassifier.decision_function, 1-row dense",
            "us_per_call": round(sgd_us, 2),
            "data": source,
        },
    ]
    if river_us is not None:
        rows.append(
            {
                "learner": "(peer)",
                "call": "River LogisticRegression.predict_proba_one, dict",
                "us_per_call": round(river_us, 2),
                "data": source,
            }
        )
    for name, cls in _learners().items():
        model = cls().partial_fit(X[:100], y[:100], classes=[-1.0, 1.0])
        calls = {
            "decision_one, 1-D array": (lambda i, m=model: m.decision_one(dense[i]), sgd_us, "SGD"),
            "decision_one, dict": (
                lambda i, m=model: m.decision_one(dicts[i]),
                river_us,
                "River predict_proba_one",
            ),
            "predict_proba_one, dict": (
                lambda i, m=model: m.predict_proba_one(dicts[i]),
                river_us,
                "River",
            ),
            "decision_function, 1-row dense": (
                lambda i, m=model: m.decision_function(dense[i : i + 1]),
                sgd_us,
                "SGD",
            ),
        }
        for call, (fn, peer_us, peer) in calls.items():
            us = per_call(fn, range(n), rounds) * 1e6
            known = peer_us is not None
            rows.append(
                {
                    "learner": name,
                    "call": call,
                    "us_per_call": round(us, 2),
                    "peer": peer if known else "(not installed)",
                    "peer_us": round(peer_us, 2) if known else "",
                    "speed_vs_peer": round(peer_us / us, 3) if known else "",
                    "data": source,
                }
            )
    return rows


def river_wrapper_costs(quick: bool) -> list[dict]:
    """``aucstream.river.RiverClassifier`` on River-style dicts (string keys, Python
    floats) against River's LogisticRegression on the same dicts."""
    try:
        from aucstream.river import RiverClassifier
    except ImportError:
        return []
    n = 400 if quick else 2000
    rounds = 3 if quick else 7
    X, y, source = stream(n + 100)
    dicts = [
        {f"x{j}": v for j, v in zip(r.indices.tolist(), r.data.tolist())}
        for r in (X[i] for i in range(n + 100))
    ]
    labels = [bool(v > 0) for v in y]
    lr = _river_lr(dicts, y)
    if lr is None:
        return []
    work = range(100, n + 100)
    peer = {
        "learn_one": per_call(lambda i: lr.learn_one(dicts[i], labels[i]), work, rounds),
        "predict_proba_one": per_call(lambda i: lr.predict_proba_one(dicts[i]), work, rounds),
    }
    rows = []
    for name, cls in _learners().items():
        model = RiverClassifier(cls(), n_features=D)
        for i in range(100):
            model.learn_one(dicts[i], labels[i])
        mine = {
            "learn_one": per_call(
                lambda i, m=model: m.learn_one(dicts[i], labels[i]), work, rounds
            ),
            "predict_proba_one": per_call(
                lambda i, m=model: m.predict_proba_one(dicts[i]), work, rounds
            ),
        }
        for call, seconds in mine.items():
            rows.append(
                {
                    "learner": f"RiverClassifier({name})",
                    "call": call,
                    "us_per_call": round(seconds * 1e6, 2),
                    "peer": "River LogisticRegression",
                    "peer_us": round(peer[call] * 1e6, 2),
                    "speed_vs_peer": round(peer[call] / seconds, 3),
                    "data": source,
                }
            )
    return rows


def _river_dict_rows(n: int, river_metrics):
    """a9a's first ``n + 100`` rows as dicts, their labels, the working range (after
    100 examples), River's ``LogisticRegression`` (or None), a ``ROCAUC`` and River's
    progressive step (score, update the metric, learn)."""
    X, y, source = stream(n + 100)
    dicts = [dict(zip(r.indices.tolist(), r.data.tolist())) for r in (X[i] for i in range(n + 100))]
    labels = [bool(v > 0) for v in y]
    lr = _river_lr(dicts, y)
    roc = river_metrics.ROCAUC()

    def river_step(i):
        roc.update(labels[i], lr.predict_proba_one(dicts[i]).get(True, 0.0))
        lr.learn_one(dicts[i], labels[i])

    return X, y, source, dicts, labels, range(100, n + 100), lr, roc, river_step


def progressive_loop(quick: bool) -> list[dict]:
    """The targets of issue 29 on dict rows, each against its peer in the same run:
    the progressive loop (``predict_proba_one``, a one-pair ``PrequentialAUC.update``,
    ``learn_one``) against River's ``LogisticRegression`` with its ``ROCAUC``;
    ``decision_one`` against River's ``predict_proba_one``; the one-pair
    ``PrequentialAUC.update`` against River's ``ROCAUC.update``; and
    ``StreamPipeline().learn_one`` against ``OPAUC().learn_one`` (1-D arrays, both
    fresh after 100 examples)."""
    try:
        from river import metrics as river_metrics
    except ImportError:
        return []
    from aucstream import OPAUC, StreamPipeline
    from aucstream.metrics import PrequentialAUC

    n = 400 if quick else 2000
    rounds = 3 if quick else 7
    X, y, source, dicts, labels, work, lr, roc, river_step = _river_dict_rows(n, river_metrics)
    if lr is None:
        return []

    peers = {
        "loop": per_call(river_step, work, rounds),
        "proba": per_call(lambda i: lr.predict_proba_one(dicts[i]), work, rounds),
        "metric": per_call(lambda i: roc.update(labels[i], 0.25), work, rounds),
        "metric_read": per_call(lambda i: (roc.update(labels[i], 0.25), roc.get()), work, rounds),
    }
    rows = [
        {
            "learner": "(peer)",
            "call": "River LogisticRegression + ROCAUC, progressive loop",
            "us_per_call": round(peers["loop"] * 1e6, 2),
            "data": source,
        }
    ]

    def row(learner, call, seconds, peer, peer_seconds):
        return {
            "learner": learner,
            "call": call,
            "us_per_call": round(seconds * 1e6, 2),
            "peer": peer,
            "peer_us": round(peer_seconds * 1e6, 2),
            "ratio_to_peer": round(seconds / peer_seconds, 3),
            "data": source,
        }

    for name, cls in _learners().items():
        model = cls().partial_fit(X[:100], y[:100], classes=[-1.0, 1.0])
        metric = PrequentialAUC()

        def step(i, m=model, auc=metric):
            auc.update(y[i], m.predict_proba_one(dicts[i])[1])
            m.learn_one(dicts[i], y[i])

        loop = per_call(step, work, rounds)
        rows.append(row(name, "progressive loop, dict", loop, "River LR + ROCAUC", peers["loop"]))
        decision = per_call(lambda i, m=model: m.decision_one(dicts[i]), work, rounds)
        rows.append(
            row(name, "decision_one, dict", decision, "River predict_proba_one", peers["proba"])
        )
    metric = PrequentialAUC()
    one = per_call(lambda i: metric.update(y[i], 0.25), work, rounds)
    rows.append(row("PrequentialAUC", "update, one pair", one, "River ROCAUC", peers["metric"]))
    metric = PrequentialAUC()  # a read after every pair counts each pair at once
    read = per_call(lambda i: metric.update(y[i], 0.25).get(), work, rounds)
    peer = peers["metric_read"]
    rows.append(row("PrequentialAUC", "update + get, one pair", read, "River ROCAUC", peer))
    dense = X.toarray()
    times = {}
    for make in (OPAUC, StreamPipeline):
        model = make().partial_fit(dense[:100], y[:100], classes=[-1.0, 1.0])
        times[make.__name__] = per_call(
            lambda i, m=model: m.learn_one(dense[i], y[i]), work, rounds
        )
    rows.append(
        row(
            "StreamPipeline()",
            "learn_one, 1-D array",
            times["StreamPipeline"],
            "OPAUC().learn_one",
            times["OPAUC"],
        )
    )
    return rows


def entry_on_off(quick: bool) -> list[dict]:
    """``learn_one`` through the per-example entry (``aucstream._runtime._entry.OneStep``)
    and, in the same process with the rounds interleaved, through the fast path's
    one-row call it replaces (the entry switched off), with River's
    ``LogisticRegression.learn_one`` on the same dicts in the same rounds."""
    from aucstream._runtime._entry import OneStep

    n = 400 if quick else 2000
    rounds = 5 if quick else 9
    X, y, source = stream(n + 100)
    dicts = [dict(zip(r.indices.tolist(), r.data.tolist())) for r in (X[i] for i in range(n + 100))]
    dense = X.toarray()
    work = range(100, n + 100)
    lr = _river_lr(dicts, y)
    learn = OneStep.learn

    def off(self, learner, x, label):
        return False

    calls = {}
    if lr is not None:
        calls["river"] = (None, lambda i: lr.learn_one(dicts[i], bool(y[i] > 0)))
    for name, cls in _learners().items():
        model = cls().partial_fit(X[:100], y[:100], classes=[-1.0, 1.0])
        for layout, rows in (("dict", dicts), ("1-D array", dense)):
            for way in ("entry", "one-row call"):
                calls[name, layout, way] = (
                    way,
                    lambda i, m=model, r=rows: m.learn_one(r[i], y[i]),
                )
    best = dict.fromkeys(calls, float("inf"))
    try:
        for _ in range(rounds):
            for key, (way, fn) in calls.items():
                OneStep.learn = off if way == "one-row call" else learn
                best[key] = min(best[key], per_call(fn, work, 1))
    finally:
        OneStep.learn = learn
    river = best.pop("river", None)
    rows = []
    for name in _learners():
        for layout in ("dict", "1-D array"):
            entry, old = best[name, layout, "entry"], best[name, layout, "one-row call"]
            rows.append(
                {
                    "learner": name,
                    "call": f"learn_one, {layout}",
                    "entry_us": round(entry * 1e6, 2),
                    "one_row_call_us": round(old * 1e6, 2),
                    "entry_over_call": round(entry / old, 3),
                    "river_us": round(river * 1e6, 2) if river else "",
                    "entry_over_river": round(entry / river, 3) if river else "",
                    "data": source,
                }
            )
    return rows


def every_learner_learn_one(quick: bool) -> list[dict]:
    """``learn_one`` with 1-D arrays for every online learner (default parameters)."""
    import aucstream

    n = 300 if quick else 1500
    rounds = 3 if quick else 5
    X, y, source = stream(n + 100)
    dense = X.toarray()
    rows = []
    for name, cls in aucstream.all_estimators("online"):
        try:
            model = cls()
            if "n_samples" in model.get_params():
                model.set_params(n_samples=100 + n * rounds)
            model.partial_fit(dense[:100], y[:100], classes=[-1.0, 1.0])
        except (TypeError, ValueError):
            continue  # needs parameters (a search, a pipeline of a given learner)
        us = per_call(lambda i, m=model: m.learn_one(dense[i], y[i]), range(100, n + 100), rounds)
        rows.append(
            {
                "learner": name,
                "call": "learn_one, 1-D array, every online learner",
                "us_per_call_all": round(us * 1e6, 2),
                "data": source,
            }
        )
    return rows


def race_learn_one_later(quick: bool) -> list[dict]:
    """``learn_one`` of the tuning-free race (``StreamPipeline()``, ``OnePassSearch()``)
    after its first rounds: the steady cost on a long stream, with fewer candidates
    alive (the table above measures the first examples, all 14 alive)."""
    from aucstream import OnePassSearch, StreamPipeline

    start, n = 5000, (300 if quick else 1500)
    rounds = 3 if quick else 5
    X, y, source = stream(start + n)
    dense = X.toarray()
    rows = []
    for make in (StreamPipeline, OnePassSearch):
        model = make()
        for lo in range(0, start, 500):
            model.partial_fit(dense[lo : lo + 500], y[lo : lo + 500], classes=[-1.0, 1.0])
        search = model.estimator_ if make is StreamPipeline else model
        alive = int(np.sum(search.status_ == 0))
        items = range(start, start + n)
        us = per_call(lambda i, m=model: m.learn_one(dense[i], y[i]), items, rounds)
        rows.append(
            {
                "learner": make.__name__,
                "call": f"learn_one, 1-D array, after {start:,} examples",
                "us_per_call": round(us * 1e6, 2),
                "alive_candidates": alive,
                "data": source,
            }
        )
    return rows


def _dict_rows(n: int) -> tuple:
    """The first ``n`` rows of the stream with their dicts (integer keys), River-style
    dicts (``x{j}`` keys) and boolean labels."""
    X, y, source = stream(n)
    dicts = [dict(zip(r.indices.tolist(), r.data.tolist())) for r in (X[i] for i in range(n))]
    named = [{f"x{j}": v for j, v in d.items()} for d in dicts]
    return X, y, source, dicts, named, [bool(v > 0) for v in y]


def _warm_wrapped(named: list, labels: list):
    """``RiverClassifier(StreamPipeline())`` after the first 100 River-style rows."""
    from aucstream import StreamPipeline
    from aucstream.river import RiverClassifier

    wrapped = RiverClassifier(StreamPipeline(), n_features=D)
    for i in range(100):
        wrapped.learn_one(named[i], labels[i])
    return wrapped


def _pipeline_rows(best: dict, what: str, peers: tuple[str, str], source: str) -> list[dict]:
    """The rows of ``what`` (best seconds per call in ``best``): ``StreamPipeline()``
    against ``OPAUC()``, and, with River, the wrapped pipeline against River's
    LogisticRegression (``peers``: their names)."""
    pairs = [
        ("StreamPipeline()", "StreamPipeline", "OPAUC", f"{what}, dict", peers[0]),
        ("RiverClassifier(StreamPipeline())", "wrapped", "river", f"{what}, River dict", peers[1]),
        (
            "StreamPipeline(OnlineStandardScaler(), SOLAM())",
            "over SOLAM",
            "OPAUC",
            f"{what}, dict",
            peers[0],
        ),
    ]
    return [
        {
            "learner": learner,
            "call": call,
            "us_per_call": round(best[key] * 1e6, 2),
            "peer": peer,
            "peer_us": round(best[other] * 1e6, 2),
            "ratio_to_peer": round(best[key] / best[other], 3),
            "data": source,
        }
        for learner, key, other, call, peer in pairs
        if key in best and other in best
    ]


def _wrapped_learnt(wrapped, named: list, labels: list, last: int, i: int) -> None:
    """``RiverClassifier(StreamPipeline()).learn_one`` of example ``i``, the last one
    followed by its pipeline's catch-up (as in ``pipeline_learn_one``)."""
    wrapped.learn_one(named[i], labels[i])
    if i == last:
        _ = wrapped.estimator_.estimator_  # (reading it catches up)


def pipeline_learn_one(quick: bool) -> list[dict]:
    """Issue 29's target on dict rows: ``StreamPipeline().learn_one`` against
    ``OPAUC().learn_one`` (both after 100 examples, the rounds interleaved; the
    pipeline's time includes learning the examples it still holds at the end), and
    ``RiverClassifier(StreamPipeline()).learn_one`` against River's
    ``LogisticRegression.learn_one`` on the same River-style dicts."""
    from aucstream import OPAUC, StreamPipeline

    n = 600 if quick else 2000
    rounds = 2 if quick else 3
    X, y, source, dicts, named, labels = _dict_rows(n + 100)
    work = range(100, n + 100)
    last = n + 99

    def learnt(model, i: int) -> None:
        """``model`` has learnt example ``i``; the last one also catches up (reads
        ``estimator_``): a pipeline holds examples, and every one must be learnt
        within the timing."""
        model.learn_one(dicts[i], y[i])
        if i == last and isinstance(model, StreamPipeline):
            _ = model.estimator_  # (reading it catches up)

    best: dict[str, float] = {}
    for _ in range(rounds):  # fresh models each round: the same examples, the same state
        calls = {}
        for make in (OPAUC, StreamPipeline):
            model = make().partial_fit(X[:100], y[:100], classes=[-1.0, 1.0])
            calls[make.__name__] = partial(learnt, model)
        lr = _river_lr(named, y)
        if lr is not None:
            wrapped = _warm_wrapped(named, labels)
            calls["river"] = lambda i, m=lr: m.learn_one(named[i], labels[i])
            calls["wrapped"] = partial(_wrapped_learnt, wrapped, named, labels, last)
        for key, fn in calls.items():
            best[key] = min(best.get(key, float("inf")), per_call(fn, work, 1))
    return _pipeline_rows(
        best, "learn_one", ("OPAUC().learn_one", "River LogisticRegression.learn_one"), source
    )


def pipeline_progressive(quick: bool) -> list[dict]:
    """Beside issue 29's targets (none of its own): the progressive loop of the
    tuning-free pipeline one example at a time (``predict_proba_one``, then
    ``learn_one``: each prediction makes it learn the row it holds), on dict rows
    against ``OPAUC()``'s, and inside River (``RiverClassifier(StreamPipeline())``)
    against River's LogisticRegression, after 100 examples; and of a pipeline with steps
    of its own, ``StreamPipeline(OnlineStandardScaler(), SOLAM())``, against
    ``OPAUC()``'s."""
    from aucstream import OPAUC, SOLAM, StreamPipeline
    from aucstream.preprocessing import OnlineStandardScaler

    n = 200 if quick else 1000
    X, y, source, dicts, named, labels = _dict_rows(n + 100)
    work = range(100, n + 100)

    def loop(model, rows, ys, i: int) -> None:
        model.predict_proba_one(rows[i])
        model.learn_one(rows[i], ys[i])

    best: dict[str, float] = {}
    for _ in range(2):  # fresh models each round
        calls = {}
        makes = {
            "OPAUC": OPAUC,
            "StreamPipeline": StreamPipeline,
            "over SOLAM": lambda: StreamPipeline(OnlineStandardScaler(), SOLAM()),
        }
        for key, make in makes.items():
            model = make().partial_fit(X[:100], y[:100], classes=[-1.0, 1.0])
            calls[key] = partial(loop, model, dicts, y)
        lr = _river_lr(named, y)
        if lr is not None:
            wrapped = _warm_wrapped(named, labels)
            calls["river"] = partial(loop, lr, named, labels)
            calls["wrapped"] = partial(loop, wrapped, named, labels)
        for key, fn in calls.items():
            best[key] = min(best.get(key, float("inf")), per_call(fn, work, 1))
    peers = ("OPAUC() progressive loop", "River LogisticRegression progressive loop")
    return _pipeline_rows(best, "progressive loop", peers, source)


#: Issue 29's targets on dict rows: the most time per call as a multiple of River's
#: peer (``learn_one``: ``LogisticRegression.learn_one``; ``predict_proba_one`` and
#: ``decision_one``: its ``predict_proba_one``; the progressive loop: River's
#: LogisticRegression with its ROCAUC).
TARGETS = {
    ("SOLAM", "learn_one"): 0.8,
    ("UnivariateOnline", "learn_one"): 0.8,
    ("OPAUC", "learn_one"): 1.5,
    "predict_proba_one": 1.0,
    "decision_one": 1.0,
    "progressive loop": 0.8,
}


def issue29_targets(quick: bool) -> list[dict]:
    """Issue 29's targets on a9a's dict rows, every call and its River peer measured
    in the same rounds (interleaved, best pass of each): ``learn_one`` (a learner
    after 100 examples, learning the rows once per round), ``predict_proba_one`` and
    ``decision_one`` (a learner after 100 examples, scoring the same rows each round),
    and the progressive loop (``predict_proba_one``, a one-pair
    ``PrequentialAUC.update``, ``learn_one``), with ``ratio_to_peer`` against
    :data:`TARGETS` (``met``); the learners of :func:`_beside` too (``met`` None)."""
    try:
        from river import metrics as river_metrics
    except ImportError:
        return []
    from aucstream.metrics import PrequentialAUC

    # many short rounds: the best of each call is less disturbed by other processes
    # on a loaded machine than the best of a few long ones
    n = 300 if quick else 1000
    rounds = 30 if quick else 60
    X, y, source, dicts, labels, work, lr, roc, river_step = _river_dict_rows(n, river_metrics)
    if lr is None:
        return []

    calls = {
        ("River", "learn_one"): lambda i: lr.learn_one(dicts[i], labels[i]),
        ("River", "predict_proba_one"): lambda i: lr.predict_proba_one(dicts[i]),
        ("River", "progressive loop"): river_step,
    }

    def started(cls):
        model = cls().partial_fit(X[:100], y[:100], classes=[-1.0, 1.0])
        model.learn_one(dicts[0], y[0])  # (the per-example entry made)
        return model

    for name, cls in {**_learners(), **_beside()}.items():
        learner, scorer, looped = started(cls), started(cls), started(cls)
        metric = PrequentialAUC()

        def step(i, m=looped, auc=metric):
            auc.update(y[i], m.predict_proba_one(dicts[i])[1])
            m.learn_one(dicts[i], y[i])

        calls[name, "learn_one"] = lambda i, m=learner: m.learn_one(dicts[i], y[i])
        calls[name, "predict_proba_one"] = lambda i, m=scorer: m.predict_proba_one(dicts[i])
        calls[name, "decision_one"] = lambda i, m=scorer: m.decision_one(dicts[i])
        calls[name, "progressive loop"] = step
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(rounds):
        for key, fn in calls.items():
            best[key] = min(best[key], per_call(fn, work, 1))
    peer_of = {
        "learn_one": "learn_one",
        "predict_proba_one": "predict_proba_one",
        "decision_one": "predict_proba_one",
        "progressive loop": "progressive loop",
    }
    rows, targeted = [], set(_learners())
    for (name, call), seconds in best.items():
        if name == "River":
            continue
        peer = best["River", peer_of[call]]
        target = TARGETS.get((name, call), TARGETS.get(call)) if name in targeted else None
        rows.append(
            {
                "learner": name,
                "call": f"{call}, dict",
                "us_per_call": round(seconds * 1e6, 2),
                "peer": f"River {peer_of[call]}",
                "peer_us": round(peer * 1e6, 2),
                "ratio_to_peer": round(seconds / peer, 3),
                "target": target,
                "met": None if target is None else seconds / peer <= target,
                "data": source,
            }
        )
    return rows


def run(quick: bool = False) -> list[dict]:
    """Every measurement of this module, one dict per row (see the module docstring)."""
    return (
        issue29_targets(quick)
        + one_row_costs(quick)
        + scoring_costs(quick)
        + river_wrapper_costs(quick)
        + progressive_loop(quick)
        + entry_on_off(quick)
        + every_learner_learn_one(quick)
        + race_learn_one_later(quick)
        + pipeline_learn_one(quick)
        + pipeline_progressive(quick)
        + big_chunks(quick)
    )


if __name__ == "__main__":
    import sys

    if "--targets" in sys.argv:  # issue 29's targets alone (a few minutes less)
        for found in issue29_targets("--quick" in sys.argv):
            print(found)
    else:
        from run import standalone

        standalone(run, __doc__)
