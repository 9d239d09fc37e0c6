"""Evaluation protocols of the papers: splits, seeds, preprocessing, caps.

The settings are those of G13 §6, G16 §7.1, Z11 §4.2, D16 §5 and L18 §5 (see
:data:`PAPER_PROTOCOLS` for each). Where a paper leaves a detail open this module
decides it and says so: folds are stratified (the papers say "randomly divided";
stratification keeps both classes in every fold), every run shuffles the training
order (online learners depend on it), and sparse data are scaled by the largest
absolute value rather than min-max (which would destroy sparsity; the papers most
likely used the pre-scaled LIBSVM files).

A :class:`Protocol` says how a learner is evaluated on a dataset: the outer splits
(repeated stratified k-fold, or one train/validation/test split), how the
hyperparameters are chosen (inner cross-validation over the learner's grid, or the
validation part), how the features are preprocessed (fitted on the training part),
and how many examples a batch learner may use. Everything random is derived from
``Protocol.seed`` and the run's (trial, fold), so every run repeats exactly.

The papers' settings are in :data:`PAPER_PROTOCOLS`; :meth:`Protocol.fast` and
:meth:`Protocol.quick` derive the documented cheaper modes, and :func:`deviations`
lists, in words, how a protocol departs from the paper's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.preprocessing import MaxAbsScaler

__all__ = [
    "PAPER_PROTOCOLS",
    "Protocol",
    "Split",
    "cap_indices",
    "coarse_grid",
    "deviations",
    "get_protocol",
    "inner_splits",
    "outer_splits",
    "preprocess",
    "run_seed",
    "stratified_subsample",
]

#: Preprocessing names: per-feature scaling to [-1, 1], rows to unit norm, nothing.
PREPROCESSING = ("minmax", "l2", "none")


@dataclass(frozen=True)
class Protocol:
    """How learners are evaluated (see the module docstring).

    Parameters
    ----------
    name : str
        Short name, e.g. ``"g16"``.
    n_trials : int, default=5
        Independent repetitions: new k-fold partitions (k-fold) or new training
        orders of the same split (hold-out).
    n_folds : int, default=5
        Outer folds per trial (ignored with ``holdout``).
    holdout : tuple of 3 ints or None, default=None
        Ratios ``(train, validation, test)`` of one stratified split (L18: 4:1:1);
        hyperparameters are then chosen on the validation part.
    preprocess : {"minmax", "l2", "none"}, default="minmax"
        ``"minmax"`` scales features to [-1, 1] (dense data; sparse data is divided
        by the largest absolute value, which keeps zeros); ``"l2"``
        scales rows to unit norm. Fitted on the training part.
    inner_folds : int, default=5
        Folds of the inner cross-validation on the training part.
    grid : {"paper", "coarse"}, default="paper"
        The learner's full ``param_grid`` or :func:`coarse_grid` of it.
    coarse_values : int, default=6
        Values per parameter kept by the coarse grid.
    tune : {"each", "first"}, default="each"
        Tune on every outer split (the papers), or once per dataset on the first
        outer split and reuse the values on the other splits (fast).
    tune_max_samples : int or None, default=None
        Inner cross-validation on a random subsample of at most this many training
        examples (None: the whole training part).
    batch_cap : int or None, default=8000
        Batch learners (``is_batch``) train on at most this many examples, sampled
        uniformly without replacement (G13/G16 §7.1).
    batch_cap_overrides : tuple of (str, int), default=(("epsilon", 2000),)
        Per-dataset caps that replace ``batch_cap``.
    tune_overrides : tuple of (str, int), default=()
        Per-dataset values that replace ``tune_max_samples`` (e.g. a smaller tuning
        sample for a dataset whose learners cost O(d^2) per example).
    max_samples : int or None, default=None
        Stratified random subsample of each dataset before splitting (quick mode).
    seed : int, default=0
        Root seed of splits, training orders and learners' random states.
    mode : {"paper", "fast", "quick", "custom"}, default="paper"
        Label of the mode (for reports).
    citation : str, default=""
        Where the paper's protocol is described.
    """

    name: str
    n_trials: int = 5
    n_folds: int = 5
    holdout: tuple[int, int, int] | None = None
    preprocess: str = "minmax"
    inner_folds: int = 5
    grid: str = "paper"
    coarse_values: int = 6
    tune: str = "each"
    tune_max_samples: int | None = None
    batch_cap: int | None = 8000
    batch_cap_overrides: tuple[tuple[str, int], ...] = (("epsilon", 2000),)
    tune_overrides: tuple[tuple[str, int], ...] = ()
    max_samples: int | None = None
    seed: int = 0
    mode: str = "paper"
    citation: str = ""

    def __post_init__(self):
        if self.preprocess not in PREPROCESSING:
            raise ValueError(f"preprocess must be one of {PREPROCESSING}, got {self.preprocess!r}")
        if self.grid not in ("paper", "coarse"):
            raise ValueError(f"grid must be 'paper' or 'coarse', got {self.grid!r}")
        if self.tune not in ("each", "first"):
            raise ValueError(f"tune must be 'each' or 'first', got {self.tune!r}")
        if self.n_trials < 1 or (self.holdout is None and self.n_folds < 2):
            raise ValueError("need n_trials >= 1 and n_folds >= 2")
        if self.holdout is None and self.inner_folds < 2:
            raise ValueError("inner_folds must be >= 2")

    # ------------------------------------------------------------------ modes
    def replace(self, **changes: Any) -> Protocol:
        """A copy with some fields changed (``mode`` becomes "custom" unless given)."""
        changes.setdefault("mode", "custom")
        return dataclasses.replace(self, **changes)

    def fast(self, n_trials: int = 1) -> Protocol:
        """The documented fast mode.

        ``n_trials`` trials of the paper's folds (or orders), hyperparameters tuned
        once per dataset on the first outer split by 3-fold inner cross-validation
        over the coarse grid (at most 6 values per parameter), on at most 8,000
        training examples, and reused on every split.
        """
        return self.replace(
            n_trials=min(n_trials, self.n_trials),
            tune="first",
            grid="coarse",
            coarse_values=6,
            inner_folds=min(3, self.inner_folds),
            tune_max_samples=8000,
            mode="fast",
        )

    def quick(self) -> Protocol:
        """The CI mode: 1 trial x 3 folds, 2 inner folds, 3 values per parameter,
        datasets subsampled to 300 examples."""
        return self.replace(
            n_trials=1,
            n_folds=min(3, self.n_folds),
            tune="first",
            grid="coarse",
            coarse_values=3,
            inner_folds=2,
            tune_max_samples=300,
            max_samples=300,
            mode="quick",
        )

    def with_mode(self, mode: str) -> Protocol:
        """This protocol in ``mode`` ("paper", "fast" or "quick")."""
        if mode == "paper":
            return self
        if mode == "fast":
            return self.fast()
        if mode == "quick":
            return self.quick()
        raise ValueError(f"mode must be 'paper', 'fast' or 'quick', got {mode!r}")

    # ---------------------------------------------------------------- details
    @property
    def n_splits(self) -> int:
        """Outer splits per dataset (runs per learner and dataset)."""
        return self.n_trials * (1 if self.holdout else self.n_folds)

    def split_ids(self) -> list[tuple[int, int]]:
        """The (trial, fold) pairs of the outer splits, trial-major."""
        folds = 1 if self.holdout else self.n_folds
        return [(t, f) for t in range(self.n_trials) for f in range(folds)]

    def cap_for(self, dataset: str) -> int | None:
        """The batch learners' training cap on ``dataset``."""
        return dict(self.batch_cap_overrides).get(dataset, self.batch_cap)

    def tune_cap_for(self, dataset: str) -> int | None:
        """The inner cross-validation's sample cap on ``dataset``."""
        return dict(self.tune_overrides).get(dataset, self.tune_max_samples)

    def split_key(self) -> dict:
        """The fields that fix the outer splits and the data (for cache keys)."""
        return {
            "n_folds": None if self.holdout else self.n_folds,
            "holdout": list(self.holdout) if self.holdout else None,
            "preprocess": self.preprocess,
            "max_samples": self.max_samples,
            "seed": self.seed,
        }

    def tuning_key(self, dataset: str) -> dict:
        """The fields that fix the inner cross-validation on ``dataset`` (cache keys)."""
        return {
            "inner_folds": None if self.holdout else self.inner_folds,
            "tune_max_samples": self.tune_cap_for(dataset),
        }

    def describe(self) -> str:
        """One paragraph that states the protocol actually used."""
        if self.holdout:
            a, b, c = self.holdout
            outer = (
                f"one stratified {a}:{b}:{c} train/validation/test split, "
                f"{self.n_trials} run(s) with different random training orders"
            )
            inner = "hyperparameters chosen by the test AUC on the validation part"
        else:
            outer = (
                f"{self.n_trials} trial(s) x {self.n_folds}-fold stratified "
                f"cross-validation ({self.n_splits} runs per learner and dataset), "
                "the training order shuffled in every run"
            )
            where = (
                "on every outer split"
                if self.tune == "each"
                else "once per dataset on the first outer split and reused on all splits"
            )
            sub = (
                f" on at most {self.tune_max_samples:,} training examples"
                if self.tune_max_samples
                else ""
            )
            sub += "".join(f" ({n:,} on {name})" for name, n in self.tune_overrides)
            inner = (
                f"hyperparameters chosen {where} by {self.inner_folds}-fold stratified "
                f"inner cross-validation{sub}"
            )
        grid = (
            "the learners' full grids (`param_grid`)"
            if self.grid == "paper"
            else f"a coarse sub-grid of every learner's grid (every k-th value, at most "
            f"{self.coarse_values} per parameter, range kept)"
        )
        prep = {
            "minmax": "features scaled to [-1, 1] (min-max; sparse data divided by the "
            "largest absolute value) with statistics of the training part",
            "l2": "every example scaled to unit Euclidean norm",
            "none": "no preprocessing",
        }[self.preprocess]
        cap = (
            f"batch learners trained on at most {self.batch_cap:,} examples sampled "
            "uniformly without replacement"
            if self.batch_cap
            else "no batch cap"
        )
        sub = (
            f"; every dataset first subsampled (stratified) to {self.max_samples:,} examples"
            if self.max_samples
            else ""
        )
        return (
            f"Protocol `{self.name}` ({self.mode} mode): {outer}; {inner}, over {grid}; "
            f"{prep}; {cap}; one pass of every online learner over its training part; "
            f"seed {self.seed}{sub}."
        )


def coarse_grid(grid: Mapping[str, list], max_values: int = 6) -> dict[str, list]:
    """Every k-th value of each list so that at most ``max_values`` remain.

    The values keep the papers' range (first and last values are kept when the
    stride allows), so a coarse grid is a sub-grid of the paper's grid.

    Parameters
    ----------
    grid : mapping of str to list
        A learner's ``param_grid``.
    max_values : int, default=6
        Largest number of values kept per parameter.

    Returns
    -------
    dict
        The coarse grid.

    Examples
    --------
    >>> import numpy as np
    >>> grid = coarse_grid({"eta": [2.0**k for k in range(-12, 11)]}, 4)
    >>> np.log2(grid["eta"]).tolist()
    [-12.0, -6.0, 0.0, 6.0]
    """
    out = {}
    for name, values in grid.items():
        values = list(values)
        stride = max(1, int(np.ceil(len(values) / max_values)))
        out[name] = values[::stride]
    return out


def _paper(name: str, **kw) -> Protocol:
    return Protocol(name, mode="paper", **kw)


#: The papers' protocols (G13 §6, G16 §7.1, Z11 §4.2, D16 §5, L18 §5).
PAPER_PROTOCOLS: dict[str, Protocol] = {
    "g13": _paper(
        "g13",
        citation="Gao et al. 2013, §6: 5 trials x 5-fold CV, [-1,1] "
        "scaling, 5-fold inner CV, batch cap 8,000",
    ),
    "g16": _paper(
        "g16",
        citation="Gao et al. 2016, §7.1: 5 trials x 5-fold CV, [-1,1] "
        "scaling, 5-fold inner CV, batch cap 8,000 (2,000 for epsilon)",
    ),
    "z11": _paper(
        "z11",
        n_trials=4,
        preprocess="l2",
        citation="Zhao et al. 2011, §4.2: 4 independent 5-fold partitions, 5-fold "
        "inner CV (features: l2-normalized; Z11 does not state its scaling and its "
        "lemmas assume ||x|| <= 1)",
    ),
    "d16": _paper(
        "d16",
        n_trials=4,
        preprocess="l2",
        citation="Ding et al. 2016, §5: 4 x 5-fold CV, l2-normalized, 5-fold inner CV",
    ),
    "l18": _paper(
        "l18",
        n_trials=5,
        holdout=(4, 1, 1),
        preprocess="l2",
        batch_cap=None,  # L18 has no batch method; the batch ceiling sees all the data
        citation="Liu et al. 2018, §5: 4:1:1 train/validation/test, tuning on the "
        "validation part, 5 runs with different training orders (l2-normalized, "
        "so kappa = 1: L18 does not state its scaling)",
    ),
}


def get_protocol(name: str, mode: str = "paper") -> Protocol:
    """A paper's protocol by name ("g13", "g16", "z11", "d16", "l18") in a mode.

    Parameters
    ----------
    name : str
        Key of :data:`PAPER_PROTOCOLS`.
    mode : {"paper", "fast", "quick"}, default="paper"
        The paper's protocol, or a documented cheaper mode of it.

    Returns
    -------
    Protocol
    """
    if name not in PAPER_PROTOCOLS:
        raise ValueError(f"unknown protocol {name!r}; choose from {', '.join(PAPER_PROTOCOLS)}")
    return PAPER_PROTOCOLS[name].with_mode(mode)


def deviations(protocol: Protocol, paper: Protocol | None = None) -> list[str]:
    """How ``protocol`` departs from the paper's protocol, one sentence per item.

    Parameters
    ----------
    protocol : Protocol
        The protocol actually run.
    paper : Protocol or None
        The reference; default: ``PAPER_PROTOCOLS[protocol.name]`` (empty list when
        there is none).

    Returns
    -------
    list of str
    """
    if paper is None:
        paper = PAPER_PROTOCOLS.get(protocol.name)
    if paper is None:
        return []
    out = []
    if (protocol.n_trials, protocol.n_folds) != (paper.n_trials, paper.n_folds):
        if protocol.holdout:
            out.append(f"{protocol.n_trials} run(s) instead of the paper's {paper.n_trials}.")
        else:
            out.append(
                f"{protocol.n_trials} trial(s) x {protocol.n_folds} folds = "
                f"{protocol.n_splits} runs per cell instead of the paper's "
                f"{paper.n_trials} x {paper.n_folds} = {paper.n_splits}; the t-tests "
                "have fewer degrees of freedom, so fewer differences are significant."
            )
    if protocol.tune != paper.tune and not protocol.holdout:
        out.append(
            "Hyperparameters tuned once per dataset on the first outer split and "
            "reused on the other splits (paper: tuned on every split)."
        )
    if protocol.grid != paper.grid:
        out.append(
            f"Coarse grid: every k-th value of each learner's grid, at most "
            f"{protocol.coarse_values} values per parameter, the paper's range kept."
        )
    if protocol.inner_folds != paper.inner_folds and not protocol.holdout:
        out.append(
            f"{protocol.inner_folds}-fold inner cross-validation (paper: {paper.inner_folds}-fold)."
        )
    if (
        protocol.tune_max_samples
        and protocol.tune_max_samples != paper.tune_max_samples
        and not protocol.holdout
    ):
        where = "".join(f"; {n:,} on {name}" for name, n in protocol.tune_overrides)
        out.append(
            f"Inner cross-validation on a random stratified subsample of at most "
            f"{protocol.tune_max_samples:,} examples of the training part{where} (the "
            "final run of each split uses the whole training part)."
        )
    if protocol.max_samples != paper.max_samples:
        out.append(
            f"Every dataset subsampled (stratified) to {protocol.max_samples:,} "
            "examples before splitting."
        )
    if protocol.preprocess != paper.preprocess:
        out.append(f"Preprocessing `{protocol.preprocess}` (paper: `{paper.preprocess}`).")
    if protocol.batch_cap != paper.batch_cap:
        out.append(f"Batch cap {protocol.batch_cap} (paper: {paper.batch_cap}).")
    if protocol.seed != paper.seed:
        out.append(f"Seed {protocol.seed}.")
    return out


# --------------------------------------------------------------------------- seeds


def run_seed(protocol: Protocol, *ids: int) -> int:
    """A 31-bit seed derived from the protocol seed and integer ids.

    Parameters
    ----------
    protocol : Protocol
        Gives the root seed.
    *ids : int
        E.g. (trial, fold, purpose).

    Returns
    -------
    int
    """
    state = np.random.SeedSequence([protocol.seed, *ids]).generate_state(1)[0]
    return int(state) & 0x7FFFFFFF


# Purposes of derived seeds (the last id of ``run_seed``).
SEED_SPLIT, SEED_ORDER, SEED_LEARNER, SEED_INNER, SEED_TUNE_SUB, SEED_CAP, SEED_SUB = range(7)


# -------------------------------------------------------------------------- splits


@dataclass(frozen=True)
class Split:
    """One outer split: indices into the dataset.

    Attributes
    ----------
    trial, fold : int
        Its ids (fold is 0 for a hold-out split).
    train, test : ndarray of int
        Training and test indices (sorted).
    validation : ndarray of int or None
        Validation indices of a hold-out split.
    """

    trial: int
    fold: int
    train: np.ndarray
    test: np.ndarray
    validation: np.ndarray | None = None


def stratified_subsample(y: ArrayLike, max_samples: int | None, seed: int) -> np.ndarray:
    """Sorted indices of a stratified random subsample of at most ``max_samples``.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels.
    max_samples : int or None
        Size of the subsample; None or >= n keeps every index.
    seed : int
        Random seed.

    Returns
    -------
    ndarray of int
    """
    y = np.asarray(y)
    if max_samples is None or max_samples >= y.size:
        return np.arange(y.size)
    keep, _ = train_test_split(
        np.arange(y.size), train_size=max_samples, stratify=y, random_state=seed
    )
    return np.sort(keep)


def outer_splits(y: ArrayLike, protocol: Protocol) -> list[Split]:
    """The outer splits of ``protocol`` on labels ``y``, trial-major.

    k-fold: trial ``t`` is a :class:`~sklearn.model_selection.StratifiedKFold`
    partition seeded by ``(seed, t)``, so trials are independent partitions and each
    fold is the test part once. Hold-out: one stratified split by the ratios, the
    same for every trial (trials then differ only in the training order).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels.
    protocol : Protocol

    Returns
    -------
    list of Split
    """
    y = np.asarray(y)
    index = np.arange(y.size)
    if protocol.holdout:
        a, b, c = protocol.holdout
        seed = run_seed(protocol, 0, SEED_SPLIT)
        train, rest = train_test_split(
            index, train_size=a / (a + b + c), stratify=y, random_state=seed
        )
        val, test = train_test_split(
            rest, train_size=b / (b + c), stratify=y[rest], random_state=seed
        )
        train, val, test = np.sort(train), np.sort(val), np.sort(test)
        return [Split(t, 0, train, test, val) for t in range(protocol.n_trials)]
    splits = []
    for trial in range(protocol.n_trials):
        folds = StratifiedKFold(
            protocol.n_folds, shuffle=True, random_state=run_seed(protocol, trial, SEED_SPLIT)
        )
        for fold, (train, test) in enumerate(folds.split(index, y)):
            splits.append(Split(trial, fold, train, test))
    return splits


def inner_splits(
    y: ArrayLike, split: Split, protocol: Protocol, dataset: str = ""
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (train, validation) index pairs that tune hyperparameters on ``split``.

    k-fold protocols: stratified ``inner_folds``-fold cross-validation on the
    training part (or on a random subsample of ``tune_max_samples`` of it).
    Hold-out: the single pair (training part, validation part).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels of the whole dataset.
    split : Split
        The outer split.
    protocol : Protocol
    dataset : str
        Name of the dataset (for ``tune_overrides``).

    Returns
    -------
    list of (ndarray, ndarray)
        Indices into the dataset.
    """
    y = np.asarray(y)
    if split.validation is not None:
        return [(split.train, split.validation)]
    pool = split.train
    seed = run_seed(protocol, split.trial, split.fold, SEED_TUNE_SUB)
    pool = pool[stratified_subsample(y[pool], protocol.tune_cap_for(dataset), seed)]
    folds = StratifiedKFold(
        protocol.inner_folds,
        shuffle=True,
        random_state=run_seed(protocol, split.trial, split.fold, SEED_INNER),
    )
    return [(pool[a], pool[b]) for a, b in folds.split(pool, y[pool])]


def cap_indices(indices: np.ndarray, cap: int | None, seed: int) -> np.ndarray:
    """At most ``cap`` of ``indices``, uniformly without replacement (sorted).

    Parameters
    ----------
    indices : ndarray of int
    cap : int or None
        None keeps all.
    seed : int

    Returns
    -------
    ndarray of int
    """
    if cap is None or indices.size <= cap:
        return indices
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(indices, size=cap, replace=False))


# --------------------------------------------------------------------- preprocessing


def preprocess(kind: str, X, train: np.ndarray):
    """``X`` preprocessed with statistics of the rows ``train`` (see :class:`Protocol`).

    Parameters
    ----------
    kind : {"minmax", "l2", "none"}
        See :class:`Protocol`.
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        The whole dataset.
    train : ndarray of int
        Rows the scaling statistics come from (ignored by "l2" and "none").

    Returns
    -------
    ndarray or CSR matrix
        The transformed data (test rows clipped to [-1, 1] for "minmax").
    """
    from ..preprocessing import MinMaxScalerPM1, UnitNormalizer

    if kind == "none":
        return X
    if kind == "l2":
        return UnitNormalizer().fit_transform(X)
    if sp.issparse(X):
        X = sp.csr_matrix(MaxAbsScaler().fit(X[train]).transform(X))
        np.clip(X.data, -1.0, 1.0, out=X.data)
        return X
    return MinMaxScalerPM1().fit(X[train]).transform(X)
