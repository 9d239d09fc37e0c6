"""Rows per second of the O(d) online learners on a wide sparse stream, against
``SGDClassifier(loss="log_loss").partial_fit`` in the same process (issue 33).

The stream is bench_highdim's (:func:`bench_highdim.make_stream`): ``--n`` examples over
``--d`` features (default 10^6), ``--k`` non-zeros per row (default 50), unit rows,
labels from a planted linear model, half positive (``--positive-rate`` thins the
positives). Each learner makes one pass in chunks of ``--chunk`` (default 10,000)
through ``partial_fit``, after a warm-up on a small stream (numba compilation
excluded). Learners and SGD alternate, ``--repeats`` times, and each learner's rate
is divided by SGD's in the same round (the machine is shared: only ratios in one run
mean something). Test AUC on held-out rows.

Usage::

    python benchmarks/bench_lazy.py                       # d = 10^6, 100,000 rows
    python benchmarks/bench_lazy.py --n 50000 --repeats 3 --learners SOLAM UnivariateOnline
    python benchmarks/bench_lazy.py --learners SOLAM "SOLAM(half_life=1e4)"   # forgetting
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_highdim import make_stream  # noqa: E402


def learners() -> dict:
    from sklearn.linear_model import SGDClassifier

    from aucstream import FSAUC, SOLAM, PassiveAggressive, Perceptron, UnivariateOnline
    from aucstream.solam import SOLAML1

    return {
        "SGD(log_loss)": lambda: SGDClassifier(loss="log_loss"),
        "SOLAM": lambda: SOLAM(),
        "SOLAML1": lambda: SOLAML1(R=10.0),
        "UnivariateOnline": lambda: UnivariateOnline(),
        "Perceptron": lambda: Perceptron(),
        "PassiveAggressive": lambda: PassiveAggressive(),
        # forgetting (issue 30): the same learners with a half-life of 10,000 examples
        "SOLAM(half_life=1e4)": lambda: SOLAM(half_life=1e4),
        "UnivariateOnline(half_life=1e4)": lambda: UnivariateOnline(half_life=1e4),
        "Perceptron(half_life=1e4)": lambda: Perceptron(half_life=1e4),
        "FSAUC(constraint='l2', half_life=1e4)": lambda: FSAUC(constraint="l2", half_life=1e4),
    }


def one_pass(make, X, y, chunk: int) -> tuple[float, object]:
    model = make()
    start = time.perf_counter()
    model.partial_fit(X[:chunk], y[:chunk], classes=[-1, 1])
    for lo in range(chunk, X.shape[0], chunk):
        model.partial_fit(X[lo : lo + chunk], y[lo : lo + chunk])
    return X.shape[0] / (time.perf_counter() - start), model


def main(argv=None) -> None:
    from aucstream.metrics import roc_auc

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--d", type=int, default=1_000_000)
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--chunk", type=int, default=10_000)
    parser.add_argument("--n-test", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--learners", nargs="+", default=None)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", message="FSAUC needs the stream length")
    makers = learners()
    names = args.learners or [n for n in makers if n != "SGD(log_loss)" and "=" not in n]
    X, y = make_stream(args.n + args.n_test, args.d, args.k, args.seed)
    X_test, y_test, X, y = X[args.n :], y[args.n :], X[: args.n], y[: args.n]
    for name in ["SGD(log_loss)", *names]:  # compile and warm up
        one_pass(makers[name], X[:2000], y[:2000], 1000)
    rates: dict[str, list[float]] = {n: [] for n in names}
    ratios: dict[str, list[float]] = {n: [] for n in names}
    aucs: dict[str, float] = {}
    for _ in range(args.repeats):
        for name in names:
            sgd_rate, sgd = one_pass(makers["SGD(log_loss)"], X, y, args.chunk)
            rate, model = one_pass(makers[name], X, y, args.chunk)
            rates[name].append(rate)
            ratios[name].append(rate / sgd_rate)
            aucs[name] = roc_auc(y_test, model.decision_function(X_test))
            aucs["SGD(log_loss)"] = roc_auc(y_test, sgd.decision_function(X_test))
    print(f"n = {args.n:,}, d = {args.d:,}, k = {args.k}, chunks of {args.chunk:,}")
    print("| learner | rows/s (median) | ratio to SGD(log_loss), each round | test AUC |")
    print("|---|---:|---|---:|")
    for name in names:
        each = ", ".join(f"{r:.2f}" for r in ratios[name])
        print(f"| {name} | {np.median(rates[name]):,.0f} | {each} | {aucs[name]:.4f} |")
    print(f"| SGD(log_loss) | | | {aucs['SGD(log_loss)']:.4f} |")


if __name__ == "__main__":
    main()
