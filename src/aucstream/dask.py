r"""One parallel pass over data that outgrow one machine, with Dask.

:class:`ParallelPass` fits an aucstream learner on a dask array, a dask dataframe or a
list of data files that the workers read themselves, in one parallel pass over the
partitions (shards), a tree of merges and, for the square pairwise loss, one solve.
It needs the optional extra ``aucstream[dask]`` (``dask`` and ``distributed``); with
a ``distributed.Client`` active (a ``LocalCluster`` on a laptop, or
``Client("tcp://scheduler:8786")`` for a cluster) the work runs there, otherwise on
dask's local scheduler.

Strategies
----------
``strategy="statistics"`` (:class:`~aucstream.OPAUC`, :class:`~aucstream.LSSVMAUC`)
    OPAUC minimizes the regularized square pairwise loss (G13 Eq. 3; G16 Eq. 3)

    .. math::

        \mathcal L(w) = \frac\lambda2\|w\|^2 + \frac{1}{2T_+T_-}
            \sum_{i\in+,\,j\in-} \big(1 - w^\top(x_i - x_j)\big)^2 ,

    whose gradient needs only each class's count, mean :math:`c_\pm` and covariance
    :math:`S_\pm` (G16 Eqs. 7-8): :math:`\frac{1}{T_+T_-}\sum_{ij} d_{ij}
    d_{ij}^\top = S_+ + S_- + \delta\delta^\top` and :math:`\frac{1}{T_+T_-}\sum_{ij}
    d_{ij} = \delta = c_+ - c_-`, so its minimizer over all the data is

    .. math::

        w^* = (\lambda I + S_+ + S_- + \delta\delta^\top)^{-1}\,\delta

    (the batch LS-SVM of G16 §7.1, :class:`~aucstream.LSSVMAUC`). Every partition
    builds the two class summaries of its rows (:mod:`aucstream.covariance`), a tree
    of ``merge`` calls adds them, and the driver solves. With ``covariance="full"``
    the summaries add exactly, so the result is the exact optimum of the paper's
    objective over all the data, whatever the partitioning (up to rounding). With a
    sketch (``"randomized"``, ``"hash"``, ``"fd"``, ``"sparse"``) each partition
    sketches its rows, the sketches merge as the sketch kind allows, and the solve
    uses the sketch's estimate of :math:`S_\pm`
    (:func:`aucstream.covariance.solve_from_statistics`, in the sketch's low-rank form,
    O(d tau^2); frequent directions merge with their error bound, "sparse" merges
    then prunes). The randomized and hashed sketches draw their random vectors from a
    generator per
    partition and class, seeded from ``random_state``, the partition's position and
    the class's order of appearance in it, so a sum of partition sketches is the
    sketch of the concatenated stream with those draws.

    The result ``estimator_`` is a fitted learner of the estimator's class: its
    weights are :math:`w^*` and its class summaries are the merged ones, so it
    scores, saves (:func:`aucstream.save_model`) and can continue the stream with
    ``partial_fit``. Unlike one-pass OPAUC, which takes a step per example from the
    statistics seen so far (O(d^2) per example with the full covariance), a
    partition only adds its examples to the summaries (O(k^2) per example with k
    non-zeros), so this is also the fastest way to fit OPAUC's objective on one
    machine.

``strategy="average"`` (every online learner whose ``merge`` is implemented)
    Every partition runs the learner's own one pass over its rows (``partial_fit``
    in chunks of ``chunk_size``), and the partition models are merged in a tree
    (``merge``: what it means is the learner's own, e.g. weights averaged by
    examples seen, summaries added): one-shot parameter averaging (Zinkevich,
    Weimer, Smola, Li 2010). With ``rounds > 1``, every partition's rows are cut
    into ``rounds`` consecutive blocks and learning goes in synchronous rounds:
    in round r every partition continues a copy of the model mixed after round
    r - 1 over its r-th block, and the copies are merged again (iterative parameter
    mixing; McDonald, Hall, Mann 2010). Merging copies of one model counts that
    model's history once per copy, which only the weights survive (their average
    by examples seen is still the right mixture): so ``rounds > 1`` is accepted
    only for learners whose whole state is weights (no counters, no summaries;
    e.g. :class:`~aucstream.Perceptron`, :class:`~aucstream.PassiveAggressive`),
    and ``n_samples_seen_`` is reset to the true count after each round. Learners
    that take a ``random_state`` get one per partition, derived from
    ``random_state``; learners that plan their pass from the stream length
    (FSAUC) are told their partition's length.

Determinism and failures
------------------------
Partition and merge tasks are pure functions of their inputs, and the merge tree
is fixed by the number of partitions and ``split_every``, so a fixed partitioning
(and a fixed ``random_state`` where something is random) gives the same model
bit for bit on any cluster and any number of workers. When a worker dies, Dask
recomputes the tasks whose results it held, from the same inputs, and the result
is identical. Seeds are drawn on the client before anything runs (also with
``random_state=None``), so recomputed tasks see the same ones.

Not supported
-------------
Sample weights, and the learner's ``shuffle`` (partitions are learnt in their order;
shuffle the partitions' rows beforehand if the stream's order is not random).

What travels
------------
Partitions of dask collections are computed where they are; a list of files is
read by the workers (:func:`aucstream.datasets.iter_file`), so the data never go
through the client. What each partition ships to its merge is its summaries: for
``covariance="full"`` two d x d scatters (:math:`2 \cdot 8 (d^2 + d + 1)` bytes),
for the sketches O(d tau); with ``strategy="average"`` the learner's state. The
client receives one merged result and solves a d x d system (full covariance).
``partition_nbytes_`` records the bytes of each partition's result.
"""

from __future__ import annotations

import copy
import numbers
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from . import _state
from ._base import BaseStreamingAUC
from ._dask_tasks import (
    _check_binary,
    _combine_statistics,
    _in_partition,
    _label_key,
    _n_rows,
    _rows,
    _Spec,
    _statistics_task,
    sketch_rng,
)
from ._params import Integral, Interval, StrOptions, check_parameters
from ._runtime import check_budget, validate_params
from ._typing import MatrixLike, PathLike
from .batch import LSSVMAUC
from .covariance import solve_from_statistics
from .metrics import roc_auc
from .opauc import OPAUC

if TYPE_CHECKING:  # pragma: no cover (dask is an extra)
    from dask.typing import DaskCollection

__all__ = ["ParallelPass", "sketch_rng"]

#: Learners the statistics strategy solves in closed form (the square pairwise loss).
_CLOSED_FORM = (OPAUC, LSSVMAUC)


def _require_dask():
    """The ``dask`` module, or an ImportError that says how to install it."""
    try:
        import dask
        import dask.array  # noqa: F401
    except ImportError as error:  # pragma: no cover - the extra is installed in CI
        raise ImportError(
            "aucstream.dask needs dask and distributed: pip install 'aucstream[dask]'"
        ) from error
    return dask


# ======================================================================== average tasks
def _learn_task(part, index: int, spec: _Spec, start, template, block: tuple):
    """One partition's pass over its block ``(r, rounds)`` of rows, continuing a copy of
    ``start`` or, when that is None, a clone of ``template``. None if it has no rows."""

    def run():
        r, rounds = block
        lo, hi = 0, None
        if rounds > 1 or (start is None and template.stream_length_param):
            n = _n_rows(part, spec)
            lo, hi = (r * n) // rounds, ((r + 1) * n) // rounds
        model = copy.deepcopy(start) if start is not None else clone(template)
        if start is None and template.stream_length_param:
            model.set_params(**{template.stream_length_param: max(int(hi - lo), 1)})
        learnt = False
        for X, y in _rows(part, spec, lo, hi):
            if X.shape[0]:
                model.partial_fit(X, y, classes=np.asarray(spec.classes))
                learnt = True
        return model if learnt else None

    return _in_partition(index, part, run)


def _combine_models(*models):
    """Merge partition models in order (a copy of the first absorbs the others)."""
    models = [m for m in models if m is not None]
    if not models:
        return None
    merged = copy.deepcopy(models[0])
    for other in models[1:]:
        merged.merge(other)
    return merged


def _model_facts(model) -> tuple[int, int | None]:
    """(bytes of the state, examples seen) of a partition model."""
    if model is None:
        return 0, None
    return _state.nbytes_of(_state.state_items(model)), int(model.n_samples_seen_)


def _labels_task(part, spec: _Spec) -> list:
    """The distinct labels of a partition (``("labels", y)`` reads only the labels)."""
    if part[0] == "labels":
        y = part[1]
        y = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y).ravel()
        labels = {_label_key(v) for v in np.unique(y)}
    else:
        labels = set()
        for _, y in _rows(part, spec):
            labels.update(_label_key(v) for v in np.unique(y))
            _check_binary(labels)
    _check_binary(labels)
    return sorted(labels, key=repr)


def _union(*label_lists) -> list:
    labels = {v for labels in label_lists for v in labels}
    _check_binary(labels)
    return sorted(labels, key=repr)


def _scan_file(path: str, fmt, options: dict) -> tuple[int, bool]:
    """(width, whether index 0 occurs) of a data file, read by a worker."""
    from .datasets import iter_file, scan_svmlight

    if fmt.kind == "libsvm":
        info = scan_svmlight(path)
        return info.n_features, info.zero_based
    for X, _ in iter_file(path, fmt, chunk_size=1, **options):
        return X.shape[1], False
    return 0, False


def _tree(dask, parts: list, combine, split_every: int):
    """Reduce the delayed ``parts`` with ``combine`` in a tree of fan-in ``split_every``
    (a fixed shape for a given number of parts)."""
    level = list(parts)
    while len(level) > 1:
        level = [
            level[i]
            if i + 1 == len(level)
            else dask.delayed(combine, pure=True)(*level[i : i + split_every])
            for i in range(0, len(level), split_every)
        ]
    return level[0]


# ====================================================================== the estimator
class ParallelPass(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Fit an aucstream learner in one parallel pass over partitions, with Dask.

    See the module docstring for the two strategies, what is exact, determinism,
    failures and what travels over the network.

    Parameters
    ----------
    estimator : BaseStreamingAUC
        The learner (left unfitted; ``estimator_`` is the fitted one).
        ``strategy="statistics"`` needs :class:`~aucstream.OPAUC` or
        :class:`~aucstream.LSSVMAUC`; ``strategy="average"`` needs an online learner
        whose ``merge`` is implemented.
    strategy : {"statistics", "average"}, default="statistics"
        Class summaries merged and solved in closed form, or partition models merged.
    rounds : int, default=1
        ``strategy="average"`` only: synchronous rounds of iterative parameter mixing
        (1 = one-shot averaging).
    split_every : int, default=4
        Fan-in of the merge tree.
    chunk_size : int, default=10000
        Rows per kernel call (and per read from a file) inside a partition; it bounds
        the temporary memory of a task and does not change the result.
    random_state : int or None, default=None
        Seed of the sketches' draws (statistics) or of the partition learners'
        ``random_state`` (average); None draws one on the client at ``fit``.

    Attributes
    ----------
    estimator_ : BaseStreamingAUC
        The fitted learner (see the strategies); ``save_model(estimator_)`` stores it.
    classes_ : ndarray of shape (2,)
        The labels; ``classes_[1]`` is the positive class.
    n_features_in_ : int
        Number of features.
    feature_names_in_ : ndarray of str
        The feature columns, when fitted on a dataframe.
    n_samples_seen_ : int
        Number of examples in all partitions.
    n_partitions_ : int
        Number of partitions.
    partition_nbytes_ : ndarray of shape (n_partitions_,)
        Bytes of the arrays each partition's task returned (its summaries or its
        model; for ``rounds > 1``, in the last round).

    Examples
    --------
    >>> import dask.array as da
    >>> from aucstream import OPAUC
    >>> from aucstream.dask import ParallelPass
    >>> rng = da.random.default_rng(0)
    >>> X = rng.normal(size=(4000, 5), chunks=(1000, 5))
    >>> y = X[:, 0] + 0.5 * rng.normal(size=4000, chunks=1000) > 0
    >>> model = ParallelPass(OPAUC(lam=2**-6)).fit(X, y)  # local scheduler, 4 partitions
    >>> model.n_partitions_, model.n_samples_seen_
    (4, 4000)
    >>> model.score(X, y) > 0.9
    True

    On a cluster, create the client first (``Client(LocalCluster(n_workers=4))`` or
    ``Client("tcp://scheduler:8786")``): ``fit`` runs on it.
    """

    _parameter_constraints: dict = {
        "estimator": [BaseStreamingAUC],
        "strategy": [StrOptions({"statistics", "average"})],
        "rounds": [Interval(Integral, 1, None, closed="left")],
        "split_every": [Interval(Integral, 2, None, closed="left")],
        "chunk_size": [Interval(Integral, 1, None, closed="left")],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
    }

    def __init__(
        self,
        estimator: BaseStreamingAUC,
        strategy: str = "statistics",
        rounds: int = 1,
        split_every: int = 4,
        chunk_size: int = 10000,
        random_state: int | None = None,
    ):
        self.estimator = estimator
        self.strategy = strategy
        self.rounds = rounds
        self.split_every = split_every
        self.chunk_size = chunk_size
        self.random_state = random_state

    def _check_setup(self) -> None:
        check_parameters(self)
        validate_params(self.estimator)  # (the learner's constraints and cross-checks)
        name = type(self.estimator).__name__
        if self.strategy == "statistics":
            if not isinstance(self.estimator, _CLOSED_FORM):
                raise ValueError(
                    "strategy='statistics' needs OPAUC or LSSVMAUC (the square pairwise loss "
                    f"has a closed form from class statistics), got {name}: use "
                    "strategy='average'"
                )
            if self.rounds != 1:
                raise ValueError("rounds applies to strategy='average' only")
        elif self.estimator.is_batch:
            raise ValueError(
                f"strategy='average' needs an online learner; {name} is a batch learner "
                "(for LSSVMAUC use strategy='statistics')"
            )

    # -------------------------------------------------------------------- fit
    def fit(
        self,
        X: DaskCollection | Sequence[PathLike],
        y: DaskCollection | ArrayLike | str | None = None,
        *,
        classes: ArrayLike | None = None,
        n_features: int | None = None,
        read_options: dict | None = None,
    ) -> ParallelPass:
        """One parallel pass over the partitions of ``X``.

        Parameters
        ----------
        X : dask array, dask DataFrame, or list of paths
            A 2-D dask array (its row blocks are the partitions; its columns are put
            in one block), a dask DataFrame (its partitions; every column but the
            label is a numeric feature), or data files (one partition each, read by
            the workers with :func:`aucstream.datasets.iter_file`).
        y : dask array, dask Series, array-like, str or None
            Labels with the same rows as ``X`` (a dask array is re-blocked like X;
            a dask Series needs X's partitions); for a DataFrame, the name of its
            label column instead; None for files (their labels are inside).
        classes : array-like of shape (2,), optional
            Both labels. The average strategy needs them before learning; when they
            are not given it reads the labels once to find them.
        n_features : int, optional
            Files only: their width. When None, the workers scan the files first
            (LIBSVM: the largest index, and whether any file holds index 0, which
            then makes every file 0-based).
        read_options : dict, optional
            Files only: options of :func:`aucstream.datasets.iter_file` (``fmt``,
            ``label_column``, ``zero_based``, ``header``, ...).

        Returns
        -------
        self
        """
        dask = _require_dask()
        self._check_setup()
        parts, labels, spec = self._partitions(dask, X, y, classes, n_features, read_options)
        if not parts:
            raise ValueError("X has no partitions")
        # every partition task holds the learner's state (or its two class summaries):
        # the learner's memory guard, before any task allocates it
        check_budget(clone(self.estimator), spec.n_features)
        seeds = [
            int(s) for s in np.random.SeedSequence(self.random_state).generate_state(len(parts))
        ]
        if spec.classes is None and self.strategy == "average":
            found = _tree(
                dask,
                [dask.delayed(_labels_task, pure=True)(p, spec) for p in labels],
                _union,
                self.split_every,
            )
            found = self._two_classes(dask.compute(found)[0])
            spec = spec.replace(classes=tuple(_label_key(v) for v in found))
        fit = self._fit_statistics if self.strategy == "statistics" else self._fit_average
        estimator, classes, n_samples, nbytes = fit(dask, parts, spec, seeds)
        # nothing above changed self: a fit that raises leaves a fitted model as it was
        if spec.features is not None:
            self.feature_names_in_ = np.asarray([str(c) for c in spec.features], dtype=object)
            estimator.feature_names_in_ = self.feature_names_in_
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.estimator_ = estimator
        self.classes_ = np.asarray(classes)
        self.n_features_in_ = spec.n_features
        self.n_samples_seen_ = int(n_samples)
        self.n_partitions_ = len(parts)
        self.partition_nbytes_ = np.asarray(nbytes, dtype=np.int64)
        return self

    def _two_classes(self, labels) -> np.ndarray:
        labels = list(labels)
        try:
            classes = np.unique(np.asarray(labels))
        except TypeError as error:
            raise ValueError(f"the labels cannot be ordered: {labels[:10]}") from error
        if classes.size != 2:
            raise ValueError(
                f"{type(self.estimator).__name__} needs two classes, but the data contain "
                f"{classes.size}: {classes.tolist()[:10]}"
            )
        return classes

    def _partitions(self, dask, X, y, classes, n_features, read_options):
        """``(partitions, label-only partitions, spec)`` of any accepted input."""
        import dask.array as da
        import dask.dataframe as dd

        if classes is not None:
            classes = tuple(_label_key(v) for v in self._two_classes(classes))
        options = dict(read_options or {})
        if isinstance(X, (str, Path)):
            X = [X]
        if isinstance(X, Sequence) and X and all(isinstance(p, (str, Path)) for p in X):
            if y is not None:
                raise ValueError("y must be None when X is a list of files (the labels are inside)")
            return self._file_partitions(dask, [str(p) for p in X], classes, n_features, options)
        if n_features is not None or options:
            raise ValueError("n_features and read_options apply to a list of files only")
        if isinstance(X, dd.DataFrame):
            return self._frame_partitions(X, y, classes)
        if not isinstance(X, da.Array):
            raise TypeError(
                "X must be a dask array, a dask DataFrame or a list of file paths, got "
                f"{type(X).__name__} (wrap in-memory data with dask.array.from_array(X, "
                "chunks=(rows per partition, n_features)))"
            )
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got {X.ndim} dimensions")
        if y is None:
            raise ValueError("y is required with a dask array X")
        X = X.rechunk({1: -1})
        unknown = any(np.isnan(c) for c in X.chunks[0])
        if isinstance(y, dd.Series):
            y = y.to_dask_array(lengths=not unknown)
        if not isinstance(y, da.Array):
            y = np.asarray(y)
            if y.ndim != 1 or (not unknown and y.shape[0] != X.shape[0]):
                raise ValueError(f"y must be 1-D with {X.shape[0]} labels, got shape {y.shape}")
            if unknown:
                raise ValueError(
                    "X has unknown block sizes: give y as a dask array with X's blocks"
                )
            y = da.from_array(y, chunks=(X.chunks[0],))
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D, got {y.ndim} dimensions")
        if y.chunks[0] != X.chunks[0]:
            if unknown or any(np.isnan(c) for c in y.chunks[0]):
                if y.numblocks[0] != X.numblocks[0]:
                    raise ValueError(
                        "X and y have unknown block sizes and different numbers of blocks: "
                        "give y the same row blocks as X"
                    )
            else:
                if y.shape[0] != X.shape[0]:
                    raise ValueError(f"X has {X.shape[0]} rows and y {y.shape[0]}")
                y = y.rechunk((X.chunks[0],))
        xs, ys = X.to_delayed().ravel(), y.to_delayed().ravel()
        parts = [("arrays", a, b) for a, b in zip(xs, ys)]
        labels = [("labels", b) for b in ys]
        return parts, labels, _Spec(int(X.shape[1]), int(self.chunk_size), classes)

    def _frame_partitions(self, X, y, classes):
        columns = list(X.columns)
        if isinstance(y, str):
            if y not in columns:
                raise ValueError(f"the label column {y!r} is not among X's columns {columns[:10]}")
            features = [c for c in columns if c != y]
            frames = X.to_delayed()
            parts = [("frame", f, None) for f in frames]
            labels = [("labels", c) for c in X[y].to_delayed()]
            label = y
        else:
            if y is None:
                raise ValueError("y is required: a dask Series, or the name of X's label column")
            if getattr(y, "npartitions", None) != X.npartitions:
                raise ValueError(
                    "y must be a dask Series with X's partitions, or the name of X's label column"
                )
            features, label = columns, None
            ys = y.to_delayed()
            parts = [("frame", f, b) for f, b in zip(X.to_delayed(), ys)]
            labels = [("labels", b) for b in ys]
        bad = [c for c in features if X[c].dtype.kind not in "biuf"]
        if bad:
            raise ValueError(f"feature columns must be numeric; these are not: {bad[:10]}")
        if not features:
            raise ValueError("X has no feature columns")
        spec = _Spec(
            len(features), int(self.chunk_size), classes, features=tuple(features), label=label
        )
        return parts, labels, spec

    def _file_partitions(self, dask, paths, classes, n_features, options):
        from .datasets import detect_format

        fmt = options.pop("fmt", None)
        formats = [fmt or detect_format(p) for p in paths]
        if len({f.kind for f in formats}) > 1:
            raise ValueError(f"the files mix formats: {sorted({f.kind for f in formats})}")
        fmt = formats[0]
        options.pop("n_features", None)
        if n_features is None:
            scans = dask.compute(
                *[dask.delayed(_scan_file, pure=True)(p, fmt, options) for p in paths]
            )
            n_features = max(width for width, _ in scans)
            if fmt.kind == "libsvm" and "zero_based" not in options:
                options["zero_based"] = any(zero for _, zero in scans)
        if not (isinstance(n_features, numbers.Integral) and n_features >= 1):
            raise ValueError(f"n_features must be a positive int, got {n_features!r}")
        spec = _Spec(int(n_features), int(self.chunk_size), classes, fmt=fmt, read_options=options)
        parts = [("file", p) for p in paths]
        return parts, parts, spec

    # -------------------------------------------------------------- statistics
    def _summary_kind(self, n_features: int) -> dict:
        est = self.estimator
        if isinstance(est, LSSVMAUC):
            return {"kind": "full", "n_features": n_features}
        return {
            "kind": est.covariance,
            "n_features": n_features,
            "sketch_size": est.sketch_size,
            "centering": est.centering,
            "shrink": est.shrink,
            "prune_slack": est.prune_slack,
            "dtype": getattr(est, "dtype", "float64"),
        }

    def _fit_statistics(self, dask, parts, spec, seeds) -> tuple:
        kind = self._summary_kind(spec.n_features)
        tasks = [
            dask.delayed(_statistics_task, pure=True)(p, i, spec, kind, seeds[i])
            for i, p in enumerate(parts)
        ]
        result = dask.compute(_tree(dask, tasks, _combine_statistics, self.split_every))[0]
        classes = self._two_classes(spec.classes if spec.classes is not None else result.stats)
        missing = [c for c in classes.tolist() if _label_key(c) not in result.stats]
        if missing:
            raise ValueError(
                f"{type(self.estimator).__name__} needs two classes, but the data contain no "
                f"example of {missing}"
            )
        neg, pos = (result.stats[_label_key(c)] for c in classes)
        w = solve_from_statistics(neg, pos, float(self.estimator.lam))
        estimator = _fitted(self.estimator, classes, spec.n_features, [neg, pos], w)
        estimator.n_samples_seen_ = int(result.n_samples)
        return estimator, classes, result.n_samples, result.nbytes

    # ----------------------------------------------------------------- average
    def _fit_average(self, dask, parts, spec, seeds) -> tuple:
        classes = self._two_classes(spec.classes)
        template = clone(self.estimator)
        seeded = "random_state" in template.get_params(deep=False)
        rounds = int(self.rounds)
        if rounds > 1:
            _check_mixable(template, classes)
        mixed, n_seen, sizes = None, 0, []
        for r in range(rounds):
            tasks = [
                dask.delayed(_learn_task, pure=True)(
                    p,
                    i,
                    spec,
                    mixed,
                    clone(template).set_params(random_state=seeds[i]) if seeded else template,
                    (r, rounds),
                )
                for i, p in enumerate(parts)
            ]
            merged = _tree(dask, tasks, _combine_models, self.split_every)
            facts = [dask.delayed(_model_facts, pure=True)(t) for t in tasks]
            merged, facts = dask.compute(merged, facts)
            if merged is None:
                if mixed is None:
                    raise ValueError("the partitions hold no examples")
                merged = mixed
            base = 0 if mixed is None else mixed.n_samples_seen_
            n_seen = base + sum(seen - base for _, seen in facts if seen is not None)
            merged.n_samples_seen_ = int(n_seen)
            mixed, sizes = merged, [size for size, _ in facts]
        return mixed, classes, n_seen, sizes

    # ------------------------------------------------------------- prediction
    def decision_function(self, X: MatrixLike | DaskCollection) -> np.ndarray | DaskCollection:
        """Scores of the fitted learner; a dask array gives a dask array (by blocks).

        Parameters
        ----------
        X : array-like, sparse matrix or dask array of shape (n_samples, n_features)
            Examples.

        Returns
        -------
        ndarray or dask array of shape (n_samples,)
        """
        return self._by_blocks(X, "decision_function", np.float64)

    def predict(self, X: MatrixLike | DaskCollection) -> np.ndarray | DaskCollection:
        """Labels of the fitted learner (``classes_[1]`` where the score is positive).

        ``X`` is as in :meth:`decision_function`, and so is the type of the result.
        """
        return self._by_blocks(X, "predict", self.classes_.dtype)

    def _by_blocks(self, X, method: str, dtype):
        """``estimator_.<method>(X)``, block by block for a dask array."""
        check_is_fitted(self, "estimator_")
        function = getattr(self.estimator_, method)
        if _is_dask_array(X):
            return X.rechunk({1: -1}).map_blocks(function, drop_axis=1, dtype=dtype)
        return function(X)

    @available_if(lambda self: hasattr(self.estimator, "predict_proba"))
    def predict_proba(self, X: MatrixLike) -> np.ndarray:
        """Class probabilities of the fitted learner (for learners that have them)."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict_proba(X)

    def score(
        self,
        X: MatrixLike | DaskCollection,
        y: ArrayLike | DaskCollection,
        sample_weight: ArrayLike | DaskCollection | None = None,
    ) -> float:
        """Exact ROC AUC of the scores on ``(X, y)``; dask collections are computed.

        Parameters
        ----------
        X : array-like, sparse matrix or dask array of shape (n_samples, n_features)
            Examples.
        y : array-like or dask array of shape (n_samples,)
            Their labels, both classes present.
        sample_weight : None
            Not supported.

        Returns
        -------
        float
        """
        if sample_weight is not None:
            raise ValueError("score does not support sample_weight")
        scores = self.decision_function(X)
        scores = scores.compute() if hasattr(scores, "compute") else scores
        y = y.compute() if hasattr(y, "compute") else y
        return roc_auc(np.asarray(y).ravel() == self.classes_[1], scores)

    @property
    def coef_(self) -> np.ndarray:
        """Weights of the fitted learner, shape (1, n_features)."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.coef_

    @property
    def intercept_(self) -> np.ndarray:
        """Intercept of the fitted learner, shape (1,)."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True
        return tags


def _is_dask_array(X) -> bool:
    return type(X).__module__.startswith("dask") and hasattr(X, "map_blocks")


#: State members that merging copies of one model does not count once per copy.
_MIX_SAFE = {"classes_", "n_samples_seen_", "n_features_in_", "feature_names_in_", "_rng"}


def _check_mixable(template: BaseStreamingAUC, classes: np.ndarray) -> None:
    """Refuse ``rounds > 1`` for learners whose state is more than weights (module doc)."""
    probe = clone(template)
    probe.start(1, classes)  # the state's structure, at d = 1
    for name, value in _state.state_items(probe).items():
        if name in _MIX_SAFE:
            continue
        if not (isinstance(value, np.ndarray) and value.dtype.kind == "f"):
            raise ValueError(
                "rounds > 1 (iterative parameter mixing) merges copies of one model, which "
                f"counts that model's history once per copy; {type(template).__name__}'s "
                f"state {name} is not weights (it holds counts or summaries), so the mixed "
                "model would be wrong: use rounds=1"
            )


def _fitted(template, classes: np.ndarray, n_features: int, summaries: list, w: np.ndarray):
    """A fitted learner of ``template``'s class with weights ``w`` and, for OPAUC, the
    class summaries ``summaries`` (negative, positive)."""
    est = clone(template)
    if isinstance(est, OPAUC):
        neg, pos = summaries
        return est.from_statistics(neg, pos, classes=classes, coef=w)
    est.start(n_features, classes)
    est.w_[:] = w
    return est
