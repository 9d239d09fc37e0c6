"""The top of the ranking: partial AUC of one-pass learners on imbalanced streams.

For imbalanced streams — the fraud-like stream of ``bench_onepass.py`` (30 columns of
very different ranges, 0.5% positives), its imbalanced ``make_classification`` stream
(2% positives), w8a (3%), ijcnn1 (10%), a9a (24%) and a9a with its positives thinned
to 3% (seed 0) — this measures, after one pass over the training part (the datasets'
training files in one random order, seed 0, the same for everyone), on the test part:

- the partial AUC at FPR <= 0.05 and <= 0.01 (McClish-standardized, as scikit-learn's
  ``roc_auc_score(max_fpr=)``; :func:`aucstream.metrics.roc_auc`), the two-way partial
  AUC at TPR >= 0.5, FPR <= 0.05, and the full AUC;
- of :class:`aucstream.OnlinePAUC` and :class:`aucstream.PAUCI` (each one-way at
  max_fpr 0.05 and 0.01, two-way at min_tpr 0.5), :class:`aucstream.LSPAUC` at max_fpr
  0.05, the full-AUC learners OPAUC, SOLAM and OAM at their defaults, each behind
  the online standard scaler (``StreamPipeline(OnlineStandardScaler(), L)``: the
  fraud-like stream's columns span nine orders of magnitude), and the tuning-free
  ``StreamPipeline()`` and ``StreamPipeline(max_fpr=0.05)`` (racing by partial AUC);
- the CPU seconds of each pass (best of ``REPEATS``), and the bare per-example cost of
  OnlinePAUC, PAUCI and LSPAUC over OPAUC's on the same standardized rows (the issue's
  target: at most 2);
- for ``StreamPipeline(max_fpr=0.05)``, the test metrics of averages of its alive
  candidates at the end of the pass (``alternatives``: whether a gap to LibAUC is the
  learners' or the race's choice), and the standard error of its test partial AUC
  (``pauc_standard_error``: how large a gap one test part can tell).

``--validate`` measures LSPAUC's settings (``VALIDATED``) and the other learners on
imbalanced streams outside these (``held_out_streams``), where its defaults were
chosen, and ``--held-out-pipelines`` the two pipelines there, where the ensemble rule
of ``StreamPipeline(max_fpr=)`` was chosen; ``--from-rows`` with those rows adds their
table to the report.

LibAUC's partial-AUC losses (``pAUC_CVaR_Loss`` with its optimizer SOPA,
``pAUC_DRO_Loss`` with SOPA-s) on a linear model, after 1 and 3 epochs (``libauc_runs``),
need ``libauc`` and ``torch`` (CPU; ``pip install aucstream[bench]``); when they cannot
be imported, they are skipped and the report says so. The benchmark only calls them.

Run ``python benchmarks/bench_pauc.py [--quick]``; results go to docs/results/pauc.md.
Streams may be measured in separate processes (``--stream NAME --rows FILE``, then
``--from-rows FILE...`` writes the report from all of them). LibAUC's rows are
deterministic (seeded, one thread: the same metrics on every run; only their CPU
seconds vary) and cost most of the run: ``--libauc-from FILE...`` reuses them from
earlier JSON rows files or an earlier report (docs/results/pauc.md), and runs LibAUC
only for the streams they lack (``stored_libauc``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_onepass import DATA, load, make_fraud, make_imbalanced  # noqa: E402

from aucstream import (  # noqa: E402
    LSPAUC,
    OAM,
    OPAUC,
    PAUCI,
    SOLAM,
    OnlinePAUC,
    StreamPipeline,
)
from aucstream.metrics import roc_auc  # noqa: E402
from aucstream.preprocessing import OnlineStandardScaler  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REPEATS = 1
LEARNERS = {
    "OnlinePAUC(max_fpr=0.05)": lambda: OnlinePAUC(max_fpr=0.05, random_state=0),
    "OnlinePAUC(max_fpr=0.01)": lambda: OnlinePAUC(max_fpr=0.01, random_state=0),
    "OnlinePAUC(0.05, min_tpr=0.5)": lambda: OnlinePAUC(0.05, min_tpr=0.5, random_state=0),
    "PAUCI(max_fpr=0.05)": lambda: PAUCI(max_fpr=0.05),
    "PAUCI(max_fpr=0.01)": lambda: PAUCI(max_fpr=0.01),
    "PAUCI(0.05, min_tpr=0.5)": lambda: PAUCI(0.05, min_tpr=0.5),
    # the polynomial-decay average that OnePassSearch(max_fpr=) races (RACE_AVERAGE_DECAY)
    "OnlinePAUC(0.05, average_decay=1)": lambda: OnlinePAUC(0.05, average_decay=1, random_state=0),
    "PAUCI(0.05, average_decay=1)": lambda: PAUCI(0.05, average_decay=1),
    "LSPAUC(max_fpr=0.05)": lambda: LSPAUC(max_fpr=0.05),
    "OPAUC()": OPAUC,
    "SOLAM()": SOLAM,
    "OAM()": lambda: OAM(random_state=0),
}

#: The tuning-free pipelines: racing by full AUC and by partial AUC, with the race's
#: reopening on drift (the default) and without (``drift=None``: the race alone).
PIPELINES = {
    "StreamPipeline()": StreamPipeline,
    "StreamPipeline(max_fpr=0.05)": lambda: StreamPipeline(max_fpr=0.05),
    "StreamPipeline(drift=None)": lambda: StreamPipeline(drift=None),
    "StreamPipeline(drift=None, max_fpr=0.05)": lambda: StreamPipeline(drift=None, max_fpr=0.05),
}


def thinned_a9a(seed: int = 0):
    """a9a with its training and test positives thinned to 3% (a rare-positive a9a)."""
    Xtr, ytr, Xte, yte = load("a9a", seed)
    rng = np.random.default_rng(seed)

    def thin(X, y):
        pos = np.flatnonzero(y > 0)
        neg = np.flatnonzero(y <= 0)
        keep_pos = rng.choice(pos, size=int(0.03 / 0.97 * neg.size), replace=False)
        rows = np.sort(np.concatenate([neg, keep_pos]))
        return X[rows], y[rows]

    return (*thin(Xtr, ytr), *thin(Xte, yte))


def streams(quick: bool) -> dict:
    return {
        "fraud-like": lambda: make_fraud(200_000 if quick else 500_000),
        "make_classification": make_imbalanced,
        "w8a": lambda: load("w8a"),
        "ijcnn1": lambda: load("ijcnn1"),
        "a9a": lambda: load("a9a"),
        "a9a (3% positives)": thinned_a9a,
    }


def _thinned(X, y, Xt, yt, seed: int = 0, rate: float = 0.03):
    """The parts with their positives thinned to ``rate`` (as :func:`thinned_a9a`)."""
    rng = np.random.default_rng(seed)

    def thin(X, y):
        pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y <= 0)
        keep = rng.choice(pos, size=min(pos.size, int(rate / (1 - rate) * neg.size)), replace=False)
        rows = np.sort(np.concatenate([neg, keep]))
        return X[rows], y[rows]

    return (*thin(X, y), *thin(Xt, yt))


def _held_out(name: str, binary, thin: bool):
    """A held-out stream: a shared dataset (its test file, else 80/20) with ``binary``
    labels, the training part in one random order (seed 0), thinned to 3% positives."""
    from sklearn.model_selection import train_test_split

    from aucstream.datasets import load_dataset

    data = load_dataset(name, data_home=DATA, return_parts=True, binary=binary)
    if data.has_test:
        parts = (data.X, data.y, data.X_test, data.y_test)
    else:
        Xtr, Xte, ytr, yte = train_test_split(
            data.X, data.y, test_size=0.2, stratify=data.y, random_state=0
        )
        parts = (Xtr, ytr, Xte, yte)
    if thin:
        parts = _thinned(*parts)
    order = np.random.default_rng(0).permutation(len(parts[1]))
    return parts[0][order], parts[1][order], parts[2], parts[3]


def held_out_streams() -> dict:
    """Imbalanced streams outside the benchmark's, on which LSPAUC's defaults were chosen
    (``--validate``): letter A against the rest (4% positives), USPS 8 against the rest,
    magic04, phishing and skin with their positives thinned to 3%, connect-4's draws."""
    return {
        "letter (A vs rest)": lambda: _held_out("letter", ("one_vs_rest", 1.0), False),
        "usps (8 vs rest)": lambda: _held_out("usps", ("one_vs_rest", 8.0), False),
        "magic04 (3% positives)": lambda: _held_out("magic04", None, True),
        "phishing (3% positives)": lambda: _held_out("phishing", None, True),
        "skin (3% positives)": lambda: _held_out("skin", None, True),
        "connect-4 (draws)": lambda: _held_out("connect_4", "smallest_vs_rest", False),
    }


#: LSPAUC's settings measured on the held-out streams (``--validate``).
VALIDATED = {
    "partial_weight": (0.0, 0.5, 0.7, 0.9),
    "lam": (1e-3, 1e-2, 1e-1, 1.0),
}


def validate(only: list[str] | None = None) -> list[dict]:
    """LSPAUC at each setting of ``VALIDATED``, and the other learners of ``LEARNERS``
    at 0.05, on the held-out streams: one pass, test metrics (as :func:`run`)."""
    makers = {k: v for k, v in LEARNERS.items() if "0.01" not in k and "min_tpr" not in k}
    for mu in VALIDATED["partial_weight"]:
        for lam in VALIDATED["lam"]:
            makers[f"LSPAUC(partial_weight={mu:g}, lam={lam:g})"] = lambda mu=mu, lam=lam: LSPAUC(
                partial_weight=mu, lam=lam
            )
    rows = []
    for name, make_data in held_out_streams().items():
        if only and name not in only:
            continue
        rows += one_pass_rows(name, makers, *make_data())
    return rows


#: The tuning-free pipelines measured on the held-out streams (``--held-out-pipelines``):
#: where the ensemble rule of ``OnePassSearch(max_fpr=)`` was chosen
#: (:mod:`aucstream._pauc_race`, "The ensemble").
HELD_OUT_PIPELINES = ("StreamPipeline()", "StreamPipeline(max_fpr=0.05)")


def held_out_pipelines(only: list[str] | None = None) -> list[dict]:
    """``HELD_OUT_PIPELINES`` on the held-out streams: one pass, test metrics, and what
    the race chose (as :func:`run`)."""
    rows = []
    for name, make_data in held_out_streams().items():
        if only and name not in only:
            continue
        Xtr, ytr, Xte, yte = make_data()
        for label in HELD_OUT_PIPELINES:
            row = measure(PIPELINES[label], Xtr, ytr, Xte, yte)
            rows.append({**stream_row(name, Xtr, ytr), "learner": label, **row})
            print(rows[-1], file=sys.stderr, flush=True)
    return rows


def stream_row(name: str, Xtr, ytr) -> dict:
    """The columns every row of a stream starts with."""
    positives = float(np.mean(ytr > 0))
    return {"stream": name, "n_train": len(ytr), "positives": positives, "d": Xtr.shape[1]}


def one_pass_rows(name: str, makers: dict, Xtr, ytr, Xte, yte) -> list[dict]:
    """One row per learner of ``makers``, each behind the online scaler, learnt in one
    pass over the training part and measured on the test part (:func:`measure`)."""
    base, rows = stream_row(name, Xtr, ytr), []
    for label, make in makers.items():
        row = measure(
            lambda make=make: StreamPipeline(OnlineStandardScaler(), make()), Xtr, ytr, Xte, yte
        )
        rows.append({**base, "learner": label, **row})
        print(rows[-1], file=sys.stderr, flush=True)
    return rows


def measure(make, X, y, Xt, yt) -> dict:
    """Test metrics after one pass, and the CPU seconds of the pass (best of
    ``REPEATS``, after a pass over the first 500 rows that compiles the kernels)."""
    make().fit(X[:500], y[:500])
    best, model = float("inf"), None
    for _ in range(REPEATS):
        model = make()
        tic = time.process_time()
        model.fit(X, y)
        best = min(best, time.process_time() - tic)
    s = model.decision_function(Xt)
    positive = np.asarray(yt) > 0
    return {**_test_metrics(positive, s), "seconds": best, **race(model, Xt, positive)}


def _name(learner) -> str:
    """A learner's repr on one line (a long one wraps)."""
    return " ".join(repr(learner).split())


def race(model, Xt, positive) -> dict:
    """What a tuning-free pipeline's race chose: the candidates that score at the end
    (the leader first) and how often the race reopened (none for other learners); with
    ``max_fpr``, also what it could have chosen (:func:`alternatives`)."""
    search = getattr(model, "estimator_", None)
    if not hasattr(search, "ensemble_"):
        return {}
    members = [_name(search.candidates_[i]) for i in search.ensemble_ if i >= 0]
    out = {"members": members, "reopens": int(search.race_[1])}
    if search.max_fpr is not None:
        out["pauc05_se"] = pauc_standard_error(positive, model.decision_function(Xt))
        out["alternatives"] = alternatives(search, model.transformer_.transform(Xt), positive)
    return out


#: The largest sets of alive candidates whose averages :func:`alternatives` measures.
ALTERNATIVE_SIZE = 3


def alternatives(search, Zt, positive) -> list[dict]:
    """The race's diagnosis (is a deficit the learners' or the race's choice?): on the
    test part, the partial AUC at FPR <= 0.05 and the full AUC of every alive candidate
    of ``search`` at the end of the pass, and of every average of up to
    ``ALTERNATIVE_SIZE`` of them on the scale of their calibrated log-odds (the
    search's ensemble, :mod:`aucstream.search`; the candidates whose calibration is
    ready). Not a rule: the test part picks among them, as it does LibAUC's best."""
    from itertools import combinations

    from aucstream import _calibration
    from aucstream.search import ALIVE

    logits = {}
    for i in np.flatnonzero(search.status_ == ALIVE):
        candidate = search.candidates_[i]
        if _calibration.is_ready(candidate.calibration_):
            a, b = _calibration.logit_map(candidate.calibration_)
            logits[int(i)] = a * candidate.decision_function(Zt) + b
    out = []
    for k in range(1, ALTERNATIVE_SIZE + 1):
        for chosen in combinations(sorted(logits), k):
            t = sum(logits[i] for i in chosen) / k
            out.append(
                {
                    "members": [_name(search.candidates_[i]) for i in chosen],
                    "pauc05": roc_auc(positive, t, max_fpr=0.05),
                    "auc": roc_auc(positive, t),
                }
            )
    return out


def bare_cost(X, y) -> dict:
    """Per-example CPU time of OnlinePAUC and PAUCI over OPAUC's on the same
    standardized rows (best of three each)."""
    Z = OnlineStandardScaler().partial_fit(X).transform(X)
    times = {}
    makers = (
        ("pauc", lambda: OnlinePAUC(random_state=0)),
        ("pauci", PAUCI),
        ("lspauc", LSPAUC),
        ("opauc", OPAUC),
    )
    for name, make in makers:
        make().fit(Z[:200], y[:200])  # compiled before timing
        best = float("inf")
        for _ in range(3):
            model = make()
            tic = time.process_time()
            model.fit(Z, y)
            best = min(best, time.process_time() - tic)
        times[name] = best
    return {k: times[k] / times["opauc"] for k in ("pauc", "pauci", "lspauc")}


def libauc_available() -> bool:
    try:
        import libauc  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


#: LibAUC's contenders: its two one-way partial-AUC losses with their optimizers
#: (SOPA for the CVaR loss, SOPA-s for the KL-DRO loss), a linear model, batches of
#: ``LIBAUC_BATCH`` from LibAUC's DualSampler (half positives), Adam mode, each step
#: size of ``LIBAUC_LRS``; the test metrics after epochs 1 and 3 of the same run.
LIBAUC_LOSSES = ("pAUC_CVaR", "pAUC_DRO")
LIBAUC_LRS = (1e-3, 1e-2, 1e-1)
LIBAUC_BATCH = 128
LIBAUC_EPOCHS = (1, 3)


def libauc_runs(X, y, Xt, yt, beta: float = 0.05) -> list[dict]:
    """LibAUC's partial-AUC losses on the rows standardized by the online scaler fitted
    on the whole training part (a batch scaling: LibAUC's multi-epoch protocol sees
    the data before training anyway), one torch thread. Rows: one per loss, step size
    and number of epochs, with the CPU seconds of the training up to that epoch."""
    import torch
    from libauc.losses import pAUC_CVaR_Loss, pAUC_DRO_Loss
    from libauc.optimizers import SOPA, SOPAs
    from libauc.sampler import DualSampler

    torch.set_num_threads(1)
    scaler = OnlineStandardScaler().partial_fit(X)
    dense = (lambda A: A.toarray()) if hasattr(X, "toarray") else np.asarray
    Z = torch.tensor(dense(scaler.transform(X)), dtype=torch.float32)
    Zt = torch.tensor(dense(scaler.transform(Xt)), dtype=torch.float32)
    labels = (np.asarray(y) > 0).astype(np.float32)
    target = torch.tensor(labels).reshape(-1, 1)
    positive = np.asarray(yt) > 0
    out = []
    for loss_name in LIBAUC_LOSSES:
        for lr in LIBAUC_LRS:
            torch.manual_seed(0)
            model = torch.nn.Linear(Z.shape[1], 1)
            device = torch.device("cpu")
            if loss_name == "pAUC_CVaR":
                loss_fn = pAUC_CVaR_Loss(
                    data_len=len(labels), pos_len=int(labels.sum()), beta=beta, device=device
                )
                optimizer = SOPA(model.parameters(), mode="adam", lr=lr, device=device)
            else:
                loss_fn = pAUC_DRO_Loss(data_len=len(labels), device=device)
                optimizer = SOPAs(
                    model.parameters(), mode="adam", lr=lr, verbose=False, device=device
                )
            sampler = DualSampler(None, LIBAUC_BATCH, labels=labels, sampling_rate=0.5)
            seconds = 0.0
            for epoch in range(1, max(LIBAUC_EPOCHS) + 1):
                tic = time.process_time()
                order = torch.tensor(np.fromiter(iter(sampler), dtype=np.int64))
                for start in range(0, len(order) - LIBAUC_BATCH + 1, LIBAUC_BATCH):
                    index = order[start : start + LIBAUC_BATCH]
                    pred = torch.sigmoid(model(Z[index]))
                    loss = loss_fn(pred, target[index], index)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                seconds += time.process_time() - tic
                if epoch in LIBAUC_EPOCHS:
                    with torch.no_grad():
                        s = model(Zt).numpy().ravel().astype(np.float64)
                    out.append(
                        {
                            "learner": f"LibAUC {loss_name} lr={lr:g}, {epoch} epoch"
                            + ("s" if epoch > 1 else ""),
                            "libauc": (loss_name, lr, epoch),
                            **_test_metrics(positive, s),
                            "seconds": seconds,
                        }
                    )
    return out


def stored_libauc(paths: list[str]) -> dict[str, list[dict]]:
    """LibAUC's rows of earlier runs, by stream: from JSON rows files (``--rows``) or
    reports written by :func:`write` (their tables; the CPU seconds are those of the
    earlier run). Each row is marked ``"reused"`` with the file it came from."""
    out: dict[str, list[dict]] = {}
    for path in paths:
        text = Path(path).read_text()
        if path.endswith(".json"):
            rows = [r for r in json.loads(text) if "libauc" in r]
        else:
            rows, stream = [], None
            for line in text.splitlines():
                if line.startswith("## ") and ":" in line:
                    stream = line[3:].split(":")[0]
                elif stream and line.startswith("| LibAUC "):
                    cells = [c.strip() for c in line.strip("|").split("|")]
                    loss, lr, epochs = cells[0].replace(",", "").split()[1:4]
                    values = [float(c) for c in cells[1:6]]
                    keys = ("pauc05", "pauc01", "two_way", "auc", "seconds")
                    rows.append(
                        {
                            "stream": stream,
                            "learner": cells[0],
                            "libauc": (loss, float(lr.split("=")[1]), int(epochs)),
                            **dict(zip(keys, values)),
                        }
                    )
        for r in rows:
            out.setdefault(r["stream"], []).append({**r, "reused": path})
    return out


def pauc_standard_error(positive, s, max_fpr: float = 0.05) -> float:
    r"""The standard error of a test partial AUC at FPR <= ``max_fpr``
    (McClish-standardized, as :func:`aucstream.metrics.roc_auc`), from the structural
    components of DeLong, DeLong and Clarke-Pearson (Biometrics 44, 1988) restricted to
    the top of the negatives: with :math:`k = \beta n_-` and weights :math:`\omega_j`
    (1 for the :math:`\lfloor k\rfloor` highest negatives, the fraction left of
    :math:`k` for the next, 0 below), the raw partial AUC is the mean over positives of
    :math:`X_i = \frac{1}{n_-}\sum_j \omega_j [s_i > s_j]` and over negatives of
    :math:`Y_j = \frac{\omega_j}{n_+}\sum_i [s_i > s_j]` (ties one half), and its
    variance is about :math:`\mathrm{var}(X)/n_+ + \mathrm{var}(Y)/n_-`; the
    standardization scales it by :math:`1 / (2(\beta - \beta^2/2))`. The weights are
    taken as fixed (the threshold of the top negatives is itself estimated), so this is
    the usual approximation; at ``max_fpr`` 1 it is DeLong's standard error of the AUC.
    For reading the benchmark's gaps (one test part, one run): not a library metric."""
    x, y, scale = pauc_components(positive, s, max_fpr)
    return scale * float(np.sqrt(np.var(x, ddof=1) / x.size + np.var(y, ddof=1) / y.size))


def pauc_components(positive, s, max_fpr: float = 0.05):
    """``(x, y, scale)`` of :func:`pauc_standard_error`: the components of the
    positives and of the negatives (each averages to the raw partial AUC) and the
    McClish scale; the components of two scorers on the same examples give the
    standard error of their difference (DeLong et al. 1988)."""
    positive = np.asarray(positive, dtype=bool)
    s = np.asarray(s, dtype=float)
    pos, neg = s[positive], s[~positive]
    n1, n0 = pos.size, neg.size
    weight = np.empty(n0)
    weight[np.argsort(-neg, kind="stable")] = np.clip(max_fpr * n0 - np.arange(n0), 0.0, 1.0)
    by_score = np.argsort(neg, kind="stable")
    negs, cum = neg[by_score], np.concatenate([[0.0], np.cumsum(weight[by_score])])
    lo, hi = np.searchsorted(negs, pos, "left"), np.searchsorted(negs, pos, "right")
    x = (cum[lo] + 0.5 * (cum[hi] - cum[lo])) / n0
    poss = np.sort(pos)
    lo, hi = np.searchsorted(poss, neg, "left"), np.searchsorted(poss, neg, "right")
    y = weight * (n1 - hi + 0.5 * (hi - lo)) / n1
    return x, y, 1.0 / (2.0 * (max_fpr - max_fpr * max_fpr / 2.0))


def _test_metrics(positive, s) -> dict:
    return {
        "pauc05": roc_auc(positive, s, max_fpr=0.05),
        "pauc01": roc_auc(positive, s, max_fpr=0.01),
        "two_way": roc_auc(positive, s, max_fpr=0.05, min_tpr=0.5),
        "auc": roc_auc(positive, s),
    }


def run(quick: bool = False, only: list[str] | None = None, reuse=None) -> list[dict]:
    """The rows of every stream (``only``: those streams); ``reuse``: LibAUC's rows of
    earlier runs by stream (:func:`stored_libauc`), run again for the others."""
    rows = []
    reuse = reuse or {}
    for name, make_data in streams(quick).items():
        if only and name not in only:
            continue
        try:
            Xtr, ytr, Xte, yte = make_data()
        except FileNotFoundError as error:
            print(f"{name}: skipped ({error})", file=sys.stderr)
            continue
        rows += one_pass_rows(name, LEARNERS, Xtr, ytr, Xte, yte)
        base = stream_row(name, Xtr, ytr)
        if not quick or name != "fraud-like":
            for label, make in PIPELINES.items():
                rows.append({**base, "learner": label, **measure(make, Xtr, ytr, Xte, yte)})
                print(rows[-1], file=sys.stderr, flush=True)
        if name in reuse:
            for row in reuse[name]:
                rows.append({**base, **row, "stream": name})
        elif libauc_available():
            for row in libauc_runs(Xtr, ytr, Xte, yte):
                rows.append({**base, **row})
                print(rows[-1], file=sys.stderr, flush=True)
        dense = Xtr[:20000].toarray() if hasattr(Xtr, "toarray") else Xtr[:20000]
        rows.append(
            {**base, "learner": "cost over OPAUC's", "ratio": bare_cost(dense, ytr[:20000])}
        )
        print(rows[-1], file=sys.stderr, flush=True)
    return rows


def write(rows: list[dict], path: Path, quick: bool, held: list[dict] | None = None) -> None:
    lines = [
        "# Partial AUC of one-pass learners on imbalanced streams",
        "",
        "Written by `benchmarks/bench_pauc.py"
        + (" --quick" if quick else "")
        + "` (module docstring: streams, protocol). One pass over each training stream,"
        " measured on its test part: partial AUC at FPR <= 0.05 and <= 0.01"
        " (McClish-standardized, 0.5 = random), two-way partial AUC at TPR >= 0.5 and"
        " FPR <= 0.05 (the AUC of the selected pairs), full AUC; CPU seconds of the"
        " pass. Every bare learner runs behind the online standard scaler, at its"
        " defaults. A two-way value of 0 means that every positive of the lower half"
        " scores below every negative of the top 5%.",
        "",
    ]
    reused = sorted({r["reused"] for r in rows if "reused" in r})
    if reused:
        lines += [
            "LibAUC's rows of the streams below are **reused** from an earlier run"
            f" ({', '.join(f'`{Path(p).name}`' for p in reused)}; `--libauc-from`): its"
            " runs are seeded and deterministic, so their metrics are those LibAUC gives"
            " again; their CPU seconds are the earlier run's.",
            "",
        ]
    if not libauc_available() and not reused:
        lines += [
            "LibAUC's pAUC_CVaR / pAUC_DRO losses: **skipped** (`libauc` and `torch` are"
            " not installed here); the target against them is not measured.",
            "",
        ]
    else:
        import libauc
        import torch

        lines += [
            f"LibAUC {libauc.__version__} (torch {torch.__version__}, one thread): its"
            " one-way partial-AUC losses, pAUC_CVaR (beta 0.05, optimizer SOPA) and"
            " pAUC_DRO (KL-DRO, Lambda 1, optimizer SOPA-s), on a linear model with a"
            f" sigmoid output, batches of {LIBAUC_BATCH} from its DualSampler (half"
            " positives), Adam mode at each step size of"
            f" {', '.join(f'{lr:g}' for lr in LIBAUC_LRS)}, measured after 1 and 3 epochs"
            " of the same run (the CPU seconds up to that epoch); its rows are"
            " standardized by the online scaler fitted on the whole training part.",
            "",
        ]
    for stream in dict.fromkeys(r["stream"] for r in rows):
        sub = [r for r in rows if r["stream"] == stream]
        head = sub[0]
        lines += [
            f"## {stream}: {head['n_train']:,} training rows, {head['d']} features, "
            f"{100 * head['positives']:.1f}% positives",
            "",
            "| learner | pAUC FPR<=0.05 | pAUC FPR<=0.01 | two-way (0.5, 0.05) | AUC | seconds |",
            "|---|---|---|---|---|---|",
        ]
        for r in sub:
            if "ratio" in r:
                continue
            lines.append(
                f"| {r['learner']} | {r['pauc05']:.4f} | {r['pauc01']:.4f} | "
                f"{r['two_way']:.4f} | {r['auc']:.4f} | {r['seconds']:.2f} |"
            )
        ratio = [r["ratio"] for r in sub if "ratio" in r]
        if ratio:
            lines += [
                "",
                "Bare per-example cost over OPAUC's (first 20,000 standardized rows, dense,"
                f" best of 3): OnlinePAUC {ratio[0]['pauc']:.2f}, PAUCI"
                f" {ratio[0]['pauci']:.2f}"
                + (f", LSPAUC {ratio[0]['lspauc']:.2f}" if "lspauc" in ratio[0] else "")
                + ".",
            ]
        lines.append("")
    lines += _reading(rows)
    lines += _held_out_lines(held or [])
    path.write_text("\n".join(lines))


def _held_out_lines(held: list[dict]) -> list[str]:
    """The table of ``--validate``'s rows: partial AUC (FPR <= 0.05) / full AUC of
    each learner on each held-out stream, and each learner's mean partial AUC."""
    if not held:
        return []
    names = list(dict.fromkeys(r["stream"] for r in held))
    cell = {(r["stream"], r["learner"]): r for r in held}
    lines = [
        "## Held-out streams: LSPAUC's defaults, the pipelines' ensemble rule",
        "",
        "Written from `python benchmarks/bench_pauc.py --validate --rows FILE` and"
        " `--held-out-pipelines --rows FILE`"
        " (`held_out_streams`: streams outside the tables above; one pass, test part,"
        " each bare learner behind the online standard scaler, the pipelines as they"
        " are). Cells: partial AUC at FPR <= 0.05 / full AUC.",
        "",
        "| learner | " + " | ".join(names) + " | mean pAUC |",
        "|---|" + "---|" * (len(names) + 1),
    ]
    for learner in dict.fromkeys(r["learner"] for r in held):
        got = [cell.get((n, learner)) for n in names]
        cells = [f"{g['pauc05']:.4f} / {g['auc']:.4f}" if g else "" for g in got]
        mean = np.mean([g["pauc05"] for g in got if g])
        lines.append(f"| {learner} | " + " | ".join(cells) + f" | {mean:.4f} |")
    full, ours = HELD_OUT_PIPELINES
    pairs = [(n, cell[(n, ours)], cell[(n, full)]) for n in names if (n, ours) in cell]
    if pairs and all((n, full) in cell for n, _, _ in pairs):
        gain = [a["pauc05"] - b["pauc05"] for _, a, b in pairs]
        gap = [a["auc"] - b["auc"] for _, a, b in pairs]
        lines += [
            "",
            f"{ours} against {full} on the held-out streams (`--held-out-pipelines`; the"
            " ensemble rule of `aucstream._pauc_race` was chosen here): partial AUC (FPR"
            f" <= 0.05) {np.mean(gain):+.4f} on average (range {min(gain):+.4f} to"
            f" {max(gain):+.4f}); full AUC {min(gap):+.4f} to {max(gap):+.4f}. The"
            " scoring candidates at the end, the leader first:",
            "",
        ]
        lines += [f"- {n}: {', '.join(a['members'])}." for n, a, _ in pairs]
    return [*lines, ""]


def _by_stream(rows: list[dict]) -> dict[str, dict[str, dict]]:
    """The rows of each stream by learner (the cost rows left out)."""
    out: dict[str, dict[str, dict]] = {}
    for r in rows:
        if "ratio" not in r:
            out.setdefault(r["stream"], {})[r["learner"]] = r
    return out


def _reading(rows: list[dict]) -> list[str]:
    """How OnlinePAUC(max_fpr=0.05) compares, stream by stream, with the best of the
    full-AUC learners and StreamPipeline(); LibAUC's best; StreamPipeline(max_fpr=0.05)
    against StreamPipeline() (computed from the rows)."""
    ours = "OnlinePAUC(max_fpr=0.05)"
    full = {"OPAUC()", "SOLAM()", "OAM()", "StreamPipeline()"}
    streams_ = _by_stream(rows)
    out = ["## Reading", ""]
    for key, what in (("pauc05", "FPR <= 0.05"), ("pauc01", "FPR <= 0.01")):
        wins, gaps = [], []
        for stream, sub in streams_.items():
            best = max(sub[k][key] for k in full if k in sub)
            gaps.append(sub[ours][key] - best)
            if gaps[-1] > 0:
                wins.append(stream)
        out.append(
            f"- partial AUC at {what}: {ours} is above the best full-AUC learner (or "
            f"StreamPipeline()) on {len(wins)} of {len(gaps)} streams "
            f"({', '.join(wins) or 'none'}); mean difference {np.mean(gaps):+.4f}, "
            f"range {min(gaps):+.4f} to {max(gaps):+.4f}."
        )
    for epochs in LIBAUC_EPOCHS:
        for one_pass in (
            ours,
            "PAUCI(max_fpr=0.05)",
            "LSPAUC(max_fpr=0.05)",
            "StreamPipeline(max_fpr=0.05)",
        ):
            wins, gaps = [], []
            for stream, sub in streams_.items():
                libauc = [
                    r["pauc05"] for r in sub.values() if r.get("libauc", (0, 0, 0))[2] == epochs
                ]
                if not libauc or one_pass not in sub:
                    continue
                gaps.append(sub[one_pass]["pauc05"] - max(libauc))
                if gaps[-1] >= 0:
                    wins.append(stream)
            if gaps:
                out.append(
                    f"- against LibAUC's best partial-AUC loss and step size after {epochs} "
                    f"epoch{'s' if epochs > 1 else ''} (FPR <= 0.05, the best on the test "
                    f"part: optimistic for LibAUC): {one_pass} in one pass is at least as "
                    f"high on {len(wins)} of {len(gaps)} streams ({', '.join(wins) or 'none'});"
                    f" mean difference {np.mean(gaps):+.4f}, range {min(gaps):+.4f} to "
                    f"{max(gaps):+.4f}."
                )
    one_way = ("OnlinePAUC(max_fpr=0.05)", "PAUCI(max_fpr=0.05)")
    for two_way in ("OnlinePAUC(0.05, min_tpr=0.5)", "PAUCI(0.05, min_tpr=0.5)"):
        gaps = [
            (stream, sub[two_way]["two_way"] - max(sub[k]["two_way"] for k in one_way))
            for stream, sub in streams_.items()
            if two_way in sub and all(k in sub for k in one_way)
        ]
        if gaps:
            above = [stream for stream, g in gaps if g > 0]
            out.append(
                f"- two-way partial AUC (TPR >= 0.5, FPR <= 0.05): {two_way} against the"
                f" better one-way learner at 0.05 (OnlinePAUC or PAUCI): above on"
                f" {len(above)} of {len(gaps)} streams ({', '.join(above) or 'none'}),"
                f" mean difference {np.mean([g for _, g in gaps]):+.4f}."
            )
    for full_race, pauc_race in (
        ("StreamPipeline()", "StreamPipeline(max_fpr=0.05)"),
        ("StreamPipeline(drift=None)", "StreamPipeline(drift=None, max_fpr=0.05)"),
    ):
        pairs = [
            (stream, sub[pauc_race], sub[full_race])
            for stream, sub in streams_.items()
            if full_race in sub and pauc_race in sub
        ]
        if not pairs:
            continue
        gain = [a["pauc05"] - b["pauc05"] for _, a, b in pairs]
        full_gap = [a["auc"] - b["auc"] for _, a, b in pairs]
        out.append(
            f"- {pauc_race} against {full_race} over {len(pairs)} streams: partial AUC "
            f"(FPR <= 0.05) {np.mean(gain):+.4f} on average (range {min(gain):+.4f} to "
            f"{max(gain):+.4f}); full AUC {np.mean(full_gap):+.4f} on average (range "
            f"{min(full_gap):+.4f} to {max(full_gap):+.4f}). What each race chose (the "
            "scoring candidates at the end, the leader first; reopenings):"
        )
        for stream, a, b in pairs:
            out.append(
                f"  - {stream}: {pauc_race} {a['pauc05']:.4f} with "
                f"{', '.join(a['members'])} ({a['reopens']}); {full_race} {b['pauc05']:.4f} "
                f"with {', '.join(b['members'])} ({b['reopens']})."
            )
    out += _gap_reading(streams_)
    for key, label in (("pauc", "OnlinePAUC"), ("pauci", "PAUCI"), ("lspauc", "LSPAUC")):
        ratios = [r["ratio"][key] for r in rows if "ratio" in r and key in r["ratio"]]
        if not ratios:
            continue
        out.append(
            f"- bare per-example cost of {label} over OPAUC's: {min(ratios):.2f} to "
            f"{max(ratios):.2f} (target: at most 2)."
        )
    return [*out, ""]


def _gap_reading(streams_: dict) -> list[str]:
    """Per stream, the gap of StreamPipeline(max_fpr=0.05) to LibAUC's best after 3
    epochs, against the best that an average of its alive candidates reached on the
    test part (:func:`alternatives`): with any full AUC, and with a full AUC within
    0.01 of StreamPipeline()'s (the issue's guard). A stream where even the latter
    reaches LibAUC's best has a deficit of the race's choice; one where it does not,
    of the learners. With the standard error of the pipeline's test partial AUC
    (:func:`pauc_standard_error`)."""
    ours, full_race = "StreamPipeline(max_fpr=0.05)", "StreamPipeline()"
    out = []
    for stream, sub in streams_.items():
        alts = sub.get(ours, {}).get("alternatives")
        libauc = [r for r in sub.values() if r.get("libauc", (0, 0, 0))[2] == 3]
        if not alts or not libauc or full_race not in sub:
            continue
        if not out:
            out.append(
                f"- the race's alternatives: {ours}'s partial AUC (FPR <= 0.05) against"
                " the best test value of an average of 1 to"
                f" {ALTERNATIVE_SIZE} of its alive candidates at the end of the pass"
                f" (bench_pauc.alternatives; any full AUC / a full AUC within 0.01 of"
                f" {full_race}'s), and LibAUC's best after 3 epochs:"
            )
        target = max(r["pauc05"] for r in libauc)
        floor = sub[full_race]["auc"] - 0.01
        best = max(alts, key=lambda a: a["pauc05"])
        guarded = [a for a in alts if a["auc"] >= floor]
        se = sub[ours].get("pauc05_se")
        line = (
            f"  - {stream}: {sub[ours]['pauc05']:.4f}"
            + (f" (standard error {se:.4f}, pauc_standard_error)" if se is not None else "")
            + f"; best {best['pauc05']:.4f} (AUC"
            f" {best['auc']:.4f}: {' + '.join(best['members'])})"
        )
        if guarded:
            g = max(guarded, key=lambda a: a["pauc05"])
            line += f"; guarded {g['pauc05']:.4f} (AUC {g['auc']:.4f}: {' + '.join(g['members'])})"
        reach = "reached" if guarded and g["pauc05"] >= target else "not reached"
        out.append(f"{line}; LibAUC {target:.4f} ({reach} within the guard).")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--stream", action="append", help="measure only this stream (repeatable)")
    parser.add_argument("--rows", help="write the measured rows to this JSON file only")
    parser.add_argument(
        "--from-rows", nargs="+", help="write the report from these JSON files of rows"
    )
    parser.add_argument(
        "--libauc-from",
        nargs="+",
        help="reuse LibAUC's rows from these JSON rows files or reports (stored_libauc)",
    )
    parser.add_argument(
        "--validate",
        action="store_true",
        help="measure LSPAUC's settings on the held-out streams (validate) into --rows",
    )
    parser.add_argument(
        "--held-out-pipelines",
        action="store_true",
        help="measure the pipelines on the held-out streams (held_out_pipelines) into --rows",
    )
    args = parser.parse_args()
    if args.held_out_pipelines:
        rows = [{**r, "held_out": True} for r in held_out_pipelines(args.stream)]
        Path(args.rows or "held_out_pipelines.json").write_text(json.dumps(rows))
        return
    if args.validate:
        rows = [{**r, "held_out": True} for r in validate(args.stream)]
        Path(args.rows or "validation.json").write_text(json.dumps(rows))
        return
    reuse = stored_libauc(args.libauc_from) if args.libauc_from else None
    if args.from_rows:  # streams measured in separate processes, reported together
        rows = [r for f in args.from_rows for r in json.loads(Path(f).read_text())]
        held = [r for r in rows if r.get("held_out")]
        rows = [r for r in rows if not r.get("held_out")]
        order = list(streams(args.quick))
        rows.sort(key=lambda r: order.index(r["stream"]))  # stable: rows keep their order
    else:
        held = []
        rows = run(args.quick, args.stream, reuse)
        if args.rows:
            Path(args.rows).write_text(json.dumps(rows))
            return
    write(rows, ROOT / "docs" / "results" / "pauc.md", args.quick, held)


if __name__ == "__main__":
    main()
