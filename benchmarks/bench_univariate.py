"""Throughput of UnivariateOnline against SGDClassifier.partial_fit on the a9a stream.

One pass over the a9a training file (from ``$AUCSTREAM_DATA``, default
``../shared/data``), fed as a stream of CSR chunks (1000 rows by default) to
``partial_fit``. scikit-learn's ``SGDClassifier.partial_fit`` (constant step, the
matching loss where one exists, ``alpha`` tiny) runs on the very same chunks in the
same process. Each timing is the best of ``--repeat`` passes, after a warm-up pass that
compiles the numba kernels. The table gives examples per second, the ratio to SGD
(above 1 = faster than SGD), and the test AUC of both models as a sanity check.

Usage::

    python benchmarks/bench_univariate.py [--chunk-size 1000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import lzma
import os
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import SGDClassifier

from aucstream import roc_auc
from aucstream.univariate import UnivariateOnline

DATA = Path(
    os.environ.get("AUCSTREAM_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data")
)
#: Our loss -> (SGDClassifier loss, step size used by both).
LOSSES = {
    "log": ("log_loss", 2**-7),
    "squ": ("squared_error", 2**-11),
    "exp": ("modified_huber", 2**-10),
}


def one_pass(make, chunks, classes) -> tuple[float, object]:
    model = make()
    start = time.perf_counter()
    for X, y in chunks:
        model.partial_fit(X, y, classes=classes)
    return time.perf_counter() - start, model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunk-size", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5, help="best of this many passes")
    args = parser.parse_args()
    Xtr, ytr = load_svmlight_file(lzma.open(DATA / "a9a.xz"), n_features=123)
    Xte, yte = load_svmlight_file(lzma.open(DATA / "a9a.t.xz"), n_features=123)
    Xtr = Xtr.tocsr()
    chunks = [
        (Xtr[lo : lo + args.chunk_size], ytr[lo : lo + args.chunk_size])
        for lo in range(0, Xtr.shape[0], args.chunk_size)
    ]
    classes = np.array([-1.0, 1.0])
    print(
        f"a9a: n={Xtr.shape[0]}, d={Xtr.shape[1]}, {len(chunks)} chunks of "
        f"{args.chunk_size} rows, best of {args.repeat}"
    )
    print(
        f"{'loss':<5} {'learner':<36} {'seconds':>8} {'examples/s':>12} {'vs SGD':>7} "
        f"{'test AUC':>9}"
    )
    for loss, (sgd_loss, eta) in LOSSES.items():

        def make_sgd(sgd_loss=sgd_loss, eta=eta):
            return SGDClassifier(
                loss=sgd_loss, learning_rate="constant", eta0=eta, alpha=1e-12, shuffle=False
            )

        def make_uni(loss=loss, eta=eta):
            return UnivariateOnline(loss=loss, eta=eta)

        one_pass(make_uni, chunks[:2], classes)  # warm-up: compile the kernel
        one_pass(make_sgd, chunks[:2], classes)
        sgd_runs = [one_pass(make_sgd, chunks, classes) for _ in range(args.repeat)]
        uni_runs = [one_pass(make_uni, chunks, classes) for _ in range(args.repeat)]
        t_sgd, sgd = min(sgd_runs, key=lambda r: r[0])
        t_uni, uni = min(uni_runs, key=lambda r: r[0])
        n = Xtr.shape[0]
        print(
            f"{loss:<5} {'SGDClassifier(' + sgd_loss + ')':<36} {t_sgd:>8.4f} "
            f"{n / t_sgd:>12,.0f} {1.0:>7.2f} "
            f"{roc_auc(yte, sgd.decision_function(Xte)):>9.4f}"
        )
        print(
            f"{loss:<5} {'UnivariateOnline(' + loss + ')':<36} {t_uni:>8.4f} "
            f"{n / t_uni:>12,.0f} {t_sgd / t_uni:>7.2f} "
            f"{roc_auc(yte, uni.decision_function(Xte)):>9.4f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
