r"""Exact AUC of a stream of (label, score) pairs: over everything seen, or over a window.

The AUC of scores with :math:`n_+` positives and :math:`n_-` negatives, ties counted
one half (G13 §2), is a ratio of integers:

.. math::

    \mathrm{AUC} = \frac{C}{2 n_+ n_-}, \qquad
    C = \sum_{i \in +} \sum_{j \in -}
        \big(2\,\mathbb{I}[s_i > s_j] + \mathbb{I}[s_i = s_j]\big).

Both metrics here keep the pair count :math:`C` as an integer and divide once when
asked, so the AUC they report is the exact rational number rounded once to a float (the
same float as :func:`aucstream.metrics.roc_auc` up to its own last-bit rounding), never
a running sum of floats.

- :class:`PrequentialAUC` counts every pair seen so far (the prequential AUC of
  Brzezinski and Stefanowski, "Prequential AUC: properties of the area under the ROC
  curve for data streams with concept drift", Knowledge and Information Systems 52,
  2017, doi:10.1007/s10115-017-1022-8, without their window). Each class keeps its
  scores as a few sorted runs whose sizes shrink geometrically (a log-structured set):
  a batch is sorted, counted against every run of the other class and stored as one
  new run, and runs of similar sizes are merged, so a pair costs O(log n) amortized
  moves and O(log^2 n) comparisons. ``max_memory`` bounds the memory by binning the
  scores once it is full (then the AUC is an estimate with a rigorous error bound).
- :class:`RollingAUC` counts the pairs among the last ``window`` pairs: a ring buffer
  holds the window in arrival order and each class its scores in sorted order; an
  update counts the departing and the arriving pairs against the window and merges
  them out of and into the sorted arrays.

Counting two sorted arrays against each other (the one idea both use, compiled in
:mod:`aucstream._sorted_pairs`) walks the smaller one through the larger with galloping
searches: O(k log(n / k)) comparisons for :math:`k \le n`, so a few pairs against a
long run cost O(log n) each and two runs of similar sizes cost a linear merge.

**Partial AUC.** Given ``max_fpr`` or ``min_tpr``, both metrics report the exact one-way
or two-way partial AUC of the pairs they count, as defined (and standardized) by
:func:`aucstream.metrics.roc_auc`. Updates are unchanged (the pair count :math:`C` is
kept too); a read takes the scores of both classes at or above the
:math:`(\lfloor \beta n_- \rfloor + 1)`-th highest negative from the sorted runs (a
search per run, then a merge of what is above it, nothing re-sorted) and walks down
the ROC curve from the top through them, so it costs O(the number of scores read)
plus O(r log n) for r such negatives: a small ``max_fpr`` reads little, ``max_fpr =
1`` (with ``min_tpr``) reads all n. Both classes' sorted scores and their walk are
the same whatever the chunking, so the value is the same float as ``roc_auc``'s.

Labels follow :func:`aucstream.metrics.roc_auc`: two distinct values; the positive class
is ``pos_label`` or, when it is None, the larger of the two labels. Internally the two
labels are numbered in order of appearance (``pos_label``, when given, is number 0
from the start) and :math:`C` counts pairs of label 1 over label 0; which number is the
positive class matters only when the AUC is read.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from aucstream._config import format_bytes, get_config
from aucstream._params import Interval, positive_int, validate_parameter_constraints

from . import _sorted_pairs as _sp
from ._peek_cache import peeked_auc, positive_with
from ._sorted_pairs import _count, _partial_auc, _peek_counts, _peek_tops, _slide, _tops
from ._typing import ArrayLike, Label

__all__ = ["PrequentialAUC", "RollingAUC"]

_Metric = TypeVar("_Metric", bound="_BinaryPairs")
_SCORES = frozenset((float, np.float64))  # (some Real scores and scalar labels, by type)
_LABELS = frozenset((bool, int, float, str, np.bool_, np.int64, np.float64))

#: The partial-AUC parameters shared by ``roc_auc``, PrequentialAUC and RollingAUC.
_PARTIAL_CONSTRAINTS: dict = {
    "max_fpr": [None, Interval(Real, 0, 1, closed="right")],
    "min_tpr": [None, Interval(Real, 0, 1, closed="left")],
    "standardized": ["boolean"],
}


def _resolved(max_fpr, min_tpr) -> tuple[float, float | None] | None:
    """``(beta, alpha)`` of checked partial-AUC parameters; None for the whole AUC.

    ``min_tpr`` alone means ``max_fpr = 1``; ``max_fpr = 1`` alone is the whole AUC.
    """
    if max_fpr is None and min_tpr is None:
        return None
    beta = 1.0 if max_fpr is None else float(max_fpr)
    if min_tpr is None:
        return None if beta == 1.0 else (beta, None)
    return beta, float(min_tpr)


def _partial_region(max_fpr, min_tpr, standardized, caller: str):
    """Check the partial-AUC parameters (InvalidParameterError naming the bad one) and
    resolve them as :func:`_resolved` does."""
    validate_parameter_constraints(
        _PARTIAL_CONSTRAINTS,
        {"max_fpr": max_fpr, "min_tpr": min_tpr, "standardized": standardized},
        caller_name=caller,
    )
    return _resolved(max_fpr, min_tpr)


def _as_1d(name: str, a: np.ndarray) -> np.ndarray:
    """``a`` flattened if it is 1-D or one column; a ValueError naming ``name`` otherwise."""
    if a.ndim > 2 or (a.ndim == 2 and a.shape[1] != 1):
        raise ValueError(f"{name} must be 1-D (one value per pair); got shape {a.shape}")
    return a.ravel()


def _equal(y: np.ndarray, label) -> np.ndarray | None:
    """``y == label`` elementwise as a boolean array, or None when numpy does not give one
    (labels of types it does not compare elementwise: the caller's general path)."""
    try:
        eq = y == label
    except (TypeError, ValueError):
        return None
    if isinstance(eq, np.ndarray) and eq.dtype == bool and eq.shape == y.shape:
        return eq
    return None


class _BinaryPairs:
    """Updates, the label rule, the input checks and the AUC from a pair count.

    Subclasses keep ``_labels`` (at most two labels, numbered by position) and define
    ``_ingest(numbers, scores)``, which counts checked pairs (label numbers 0/1 and
    float64 scores), ``_class_sizes()``, the number of scores counted for label 0 and
    for label 1, and ``_counted()``, the count :math:`C` of label-1 over label-0 pairs.

    A single pair (a scalar label and score) is checked at once but held in a short
    buffer and counted with the next array, read or pickle (every public reader flushes
    it first): a call on arrays costs many times as much as holding a pair.
    """

    if TYPE_CHECKING:  # what each subclass defines (above)

        def _ingest(self, numbers: np.ndarray, scores: np.ndarray) -> None: ...

        def _class_sizes(self) -> tuple[int, int]: ...

        def _counted(self) -> int: ...

        def _sorted_runs(self, number: int) -> list[np.ndarray]: ...

    #: Single pairs held before they are counted as one array.
    _HOLD = 512  # (benchmarks/bench_streaming_auc.py, reported in docs/benchmarks.md)
    #: Members whose length varies with the stream (checked by ``_check_state`` when a
    #: model holding the metric is loaded, see :mod:`aucstream.persistence`).
    _growable_state: tuple[str, ...] = ("_labels", "_held_numbers", "_held_scores")
    #: Members a model file written before them lacks (given their defaults on loading).
    _state_added_later: tuple[str, ...] = ("max_fpr", "min_tpr", "standardized")

    def _upgrade_state(self, missing: set[str]) -> None:
        """An older file's metric: the whole AUC (the defaults are already set)."""

    def _check_common(self) -> None:
        """Checks of a loaded state shared by both metrics (raise ValueError)."""
        _partial_region(self.max_fpr, self.min_tpr, self.standardized, type(self).__name__)
        if (
            not isinstance(self._labels, list)
            or len(self._labels) > 2
            or not all(isinstance(v, (bool, int, float, str)) for v in self._labels)
        ):
            raise ValueError("_labels must be a list of at most two labels")
        if not (isinstance(self.n_seen, int) and self.n_seen >= 0):
            raise ValueError("n_seen must be a non-negative int")
        held = (self._held_numbers, self._held_scores)
        if not all(isinstance(h, list) for h in held) or len(held[0]) != len(held[1]):
            raise ValueError("the held pairs are inconsistent")
        if not all(isinstance(n, int) and n in (0, 1) for n in held[0]) or not all(
            isinstance(x, float) and math.isfinite(x) for x in held[1]
        ):
            raise ValueError("the held pairs are inconsistent")
        if held[0] and len(self._labels) <= max(held[0]):
            raise ValueError("a held pair has an unknown label")

    def __init__(self, pos_label, max_fpr=None, min_tpr=None, standardized=True) -> None:
        self.pos_label = pos_label
        self.max_fpr = max_fpr
        self.min_tpr = min_tpr
        self.standardized = standardized
        self.n_seen = 0
        self._labels: list = [] if pos_label is None else [pos_label]
        self._held_numbers: list[int] = []
        self._held_scores: list[float] = []

    def update(self: _Metric, y_true: ArrayLike, y_score: ArrayLike) -> _Metric:
        """Count a batch of pairs (arrays, or one label and one score).

        One pair (a scalar label and a real score) is checked now and counted with the
        next ones, in arrays of up to 512 pairs, before any read.

        Parameters
        ----------
        y_true : array-like of shape (n_pairs,) or scalar
            Labels (see the class documentation for the positive class).
        y_score : array-like of shape (n_pairs,) or scalar
            Finite scores; larger means more likely positive.

        Returns
        -------
        self
            The metric, so that ``metric.update(y, s).get()`` reads the new value.

        Raises
        ------
        ValueError
            If an array is not 1-D (a single column is accepted), the lengths differ, a
            score is NaN or infinite, or a label is a third label. The message names the
            first offending position; nothing is changed.
        """
        one = type(y_score) in _SCORES and type(y_true) in _LABELS  # (no ABC check: faster)
        if one or isinstance(y_score, Real) and not isinstance(y_true, (list, tuple, np.ndarray)):
            score = float(y_score)  # type: ignore[arg-type]  # (a Real, checked above)
            if score - score != 0.0:  # (inf - inf and nan - nan are nan)
                self._check_finite(np.array([score]))
            try:  # a known label: one scan (``index`` compares as ``in`` does)
                number = self._labels.index(y_true)
            except ValueError:  # a new label (or a comparison that raised: again, below)
                number = -1
            if number < 0:  # checked (out of the except block: no chained traceback)
                self._labels = self._labels_with([y_true], y_true)
                number = self._labels.index(y_true)
            self._held_numbers.append(number)
            self._held_scores.append(score)
            self.n_seen += 1
            if len(self._held_scores) >= self._HOLD:
                self._flush()
            return self
        numbers, scores = self._accept(y_true, y_score)
        self._flush()
        self._ingest(numbers, scores)
        self.n_seen += scores.size
        return self

    def _flush(self) -> None:
        """Count the held single pairs."""
        if self._held_scores:  # (label numbers 0 and 1: their bytes, as a writable array)
            numbers = np.frombuffer(bytearray(self._held_numbers), dtype=np.int8)
            scores = np.array(self._held_scores, dtype=np.float64)
            self._held_numbers, self._held_scores = [], []
            self._ingest(numbers, scores)

    def __getstate__(self) -> dict:
        self._flush()
        return self.__dict__.copy()

    @staticmethod
    def _check_finite(s: np.ndarray) -> None:
        bad = ~np.isfinite(s)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(
                f"y_score[{i}] = {s[i]} is not finite; the update was refused (nothing changed)"
            )

    def _labels_with(self, values, y: ArrayLike) -> list:
        """The labels after an update of labels ``y`` with distinct ``values``, checked."""
        labels = list(self._labels)
        for value in values:
            if value != value:
                raise ValueError("y_true contains NaN; labels must be two distinct values")
            if not any(value == known for known in labels):
                labels.append(value.item() if isinstance(value, np.generic) else value)
        if len(labels) > 2:
            y = np.atleast_1d(np.asarray(y)).ravel()
            i = int(np.argmax((y != labels[0]) & (y != labels[1])))
            described = f"{labels[0]!r} and {labels[1]!r}"
            if self.pos_label is not None:
                described = f"pos_label={labels[0]!r} and {labels[1]!r}"
            raise ValueError(
                f"y_true[{i}] = {y[i : i + 1].tolist()[0]!r} is a third label; this stream's "
                f"labels are {described} (the update was refused, nothing changed)"
            )
        return labels

    def _accept(self, y_true: ArrayLike, y_score: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Checked arrays: the label number of each pair and the float64 scores.

        Every check precedes the one change (a new label): a refused update changes nothing.
        """
        if (  # boolean labels once both labels (equal to 0 and 1) are known: no comparison
            type(y_true) is type(y_score) is np.ndarray
            and (y_true.dtype, y_true.shape, y_score.dtype, y_score.ndim)
            == (bool, (y_score.size,), np.float64, 1)
            and self._labels in ([True, False], [False, True])
        ):
            self._check_finite(y_score)  # label 1 where y_true equals self._labels[1]
            return (y_true if self._labels[1] else ~y_true).view(np.int8), y_score
        y = _as_1d("y_true", np.atleast_1d(np.asarray(y_true)))
        s = _as_1d("y_score", np.atleast_1d(np.asarray(y_score, dtype=np.float64)))
        if y.shape != s.shape:
            raise ValueError(f"y_true and y_score have different lengths: {y.size} and {s.size}")
        self._check_finite(s)
        if len(self._labels) == 2:  # both labels known: two comparisons, no np.unique
            ones = _equal(y, self._labels[1])
            if ones is not None:
                zeros = _equal(y, self._labels[0])
                if zeros is not None and bool((ones | zeros).all()):
                    return ones.astype(np.int8), s
        self._labels = self._labels_with(np.unique(y), y)
        if len(self._labels) < 2:
            return np.zeros(y.size, np.int8), s
        return (y == self._labels[1]).astype(np.int8), s

    def _positive_number(self) -> int:
        """Which label number is the positive class (0 or 1).

        ``pos_label`` is label 0; otherwise the larger of two labels seen; with one label
        seen, it is positive if it is 1 or True and negative otherwise, as in ``roc_auc``.
        """
        if self.pos_label is not None:
            return 0
        if len(self._labels) == 2:
            return 0 if self._labels[0] > self._labels[1] else 1
        if len(self._labels) == 1 and self._labels[0] in (1, True):
            return 0
        return 1

    @property
    def n_positive(self) -> int:
        """The number of scores of the positive class counted."""
        self._flush()
        return self._class_sizes()[self._positive_number()]

    @property
    def n_negative(self) -> int:
        """The number of scores of the negative class counted."""
        self._flush()
        return self._class_sizes()[1 - self._positive_number()]

    def get(self) -> float:
        """The AUC of the pairs counted, ties one half; NaN while one class is missing.

        The AUC is undefined without both classes; NaN (where River's metrics give 0)
        cannot be mistaken for the value of a bad model, and ``roc_auc`` raises there.
        With ``max_fpr`` or ``min_tpr``, the partial AUC that
        :func:`aucstream.metrics.roc_auc` gives on the same pairs, with the same
        parameters (the same float: the same computation on the same sorted scores).

        Returns
        -------
        float
            ``C / (2 n_+ n_-)`` from the exact integer pair count ``C``, rounded once;
            or the partial AUC, read from the sorted scores of the top of the ranking
            (the scores at or above the ``floor(max_fpr n_-) + 1``-th highest negative):
            O(that many + r log n) where r is their number of negatives, O(n) at worst
            (``max_fpr = 1``), never a new sort.
        """
        self._flush()
        n0, n1 = self._class_sizes()
        if n0 == 0 or n1 == 0:
            return float("nan")
        region = _resolved(self.max_fpr, self.min_tpr)
        if region is not None:
            p = self._positive_number()
            n_pos, n_neg = (n0, n1) if p == 0 else (n1, n0)
            neg, pos = _tops(self._sorted_runs(1 - p), self._sorted_runs(p), n_neg, region[0])
            return _partial_auc(neg, pos, n_neg, n_pos, region, self.standardized)
        pairs = self._counted()
        if self._positive_number() == 0:
            pairs = 2 * n0 * n1 - pairs
        return pairs / (2 * n0 * n1)

    def _describe(self) -> str:
        region = "".join(
            f"{name}={getattr(self, name)!r}, "
            for name in ("max_fpr", "min_tpr")
            if getattr(self, name) is not None
        )
        if region and not self.standardized:
            region += "standardized=False, "
        counts = f"n_positive={self.n_positive}, n_negative={self.n_negative}"
        return f"{region}auc={self.get():.6g}, {counts}"

    def _check_same_region(self, other: _BinaryPairs) -> None:
        """Refuse to combine metrics of different partial-AUC parameters (ValueError)."""
        mine, theirs = (
            (r, None if r is None else bool(m.standardized))
            for m in (self, other)
            for r in [_resolved(m.max_fpr, m.min_tpr)]
        )
        if mine != theirs:
            described = [
                f"max_fpr={m.max_fpr!r}, min_tpr={m.min_tpr!r}, standardized={m.standardized!r}"
                for m in (self, other)
            ]
            raise ValueError(f"cannot merge metrics of {described[0]} and of {described[1]}")


class PrequentialAUC(_BinaryPairs):
    r"""Exact AUC of every (label, score) pair seen so far, updated in polylog time per pair.

    The AUC of all pairs given to :meth:`update` (or brought in by :meth:`merge`),
    ties counted one half, exactly as :func:`aucstream.metrics.roc_auc` would give on
    their concatenation, at any point of the stream. Each class keeps its scores as
    sorted runs of geometrically shrinking sizes; a batch of :math:`k` pairs is sorted,
    counted against each of the other class's O(log n) runs by galloping searches
    (compiled), stored as one run, and runs of similar sizes are merged: per pair,
    O(log(n/k)) amortized moves and O(log^2(n/k)) comparisons, which is
    O(log n) and O(log^2 n) for single pairs. The pair count is an integer
    (``2 #greater + #equal`` over positive-negative pairs), so the AUC is exact. Pairs
    given one at a time (a scalar label and score) are checked at once and counted
    in arrays of a few hundred (see :meth:`update`), or at the next read: one pair
    read at once is counted against each run of the other class without a sort.

    Parameters
    ----------
    pos_label : scalar, optional
        The label of the positive class. When None, the positive class is the larger of
        the stream's two labels; it is fixed by the first update that shows both (until
        then, :attr:`n_positive` and :attr:`n_negative` follow ``roc_auc``'s one-class
        convention: a lone label 1 or True is positive, any other lone label negative).
        A third label (or, with ``pos_label`` given, a second label other than it) is
        refused with a ValueError.
    max_memory : int >= 7, optional
        Store at most this many scores. None (default): store every score, exact AUC.
        Otherwise the AUC is exact until an update brings the stored count above
        ``max_memory``; that update is counted exactly, then the stored scores are
        replaced by a histogram and every later pair is counted from it (see Notes).
        Not with a partial AUC (``max_fpr < 1`` or ``min_tpr``): the histogram loses
        the order of the top scores it reads, so the combination is refused with a
        ValueError.
    max_fpr : float in (0, 1], optional
        Report the partial AUC over false positive rates up to ``max_fpr`` (keyword
        only); see :func:`aucstream.metrics.roc_auc` for the definitions.
    min_tpr : float in [0, 1), optional
        Report the two-way partial AUC over true positive rates from ``min_tpr``
        (keyword only; ``max_fpr`` then defaults to 1).
    standardized : bool, default=True
        McClish's standardized one-way value (scikit-learn's) and the normalized
        two-way value in [0, 1]; False: the raw partial area (keyword only).

    Attributes
    ----------
    n_seen : int
        The number of pairs counted.
    n_positive, n_negative : int
        The number of positive and negative pairs counted.

    Notes
    -----
    **Bounded memory.** When the stored scores exceed ``max_memory``, they are sorted and
    :math:`m = \lfloor (\texttt{max\_memory} - 2) / 5 \rfloor` edges
    :math:`e_1 < \dots < e_m` are taken from them: every distinct stored value if there
    are at most :math:`m`, otherwise the midpoints of :math:`m` equal-count groups
    (repeated values merged). The edges define :math:`2m + 1` ordered cells: the open
    intervals :math:`(-\infty, e_1), (e_1, e_2), \dots, (e_m, \infty)` and the points
    :math:`\{e_1\}, \dots, \{e_m\}`; each class keeps its count per cell
    (:math:`m + 2(2m + 1) \le` ``max_memory`` numbers in all, and no more growth). A
    later pair is compared with the stored scores by cell: cells in a different order
    count as the order of their scores, the same cell counts one half. The pairs
    counted before the switch, and the pairs inside one update, stay exact. So
    :meth:`get` is then an estimate, and its error is at most the share of pairs that
    lie in one open cell (in a point cell the scores are equal, so one half is exact):

    .. math::

        |\widehat{\mathrm{AUC}} - \mathrm{AUC}| \le
        \sum_{\text{open cells } c} \frac{n_{+,c}\, n_{-,c}}{2\, n_+ n_-},

    which :meth:`error_bound` returns. The bound is small while the scores keep the
    distribution they had at the switch: the :math:`m + 1` open cells then hold about
    :math:`1/m` of the scores each, so the bound is about :math:`1/(2m)` when the
    classes are mixed in every cell (less as they separate), and 0 for scores taking at
    most :math:`m` values. It becomes loose when the scores drift: if a model's scores all move
    above :math:`e_m`, every new pair lands in the last open cell and the bound grows
    towards the share of pairs seen after the switch, while the estimate moves towards
    one half for those pairs. Use the exact mode (the default) when memory allows: it
    costs 8 bytes per pair.

    **Partial AUC.** With ``max_fpr`` or ``min_tpr``, :meth:`get` returns the partial
    AUC of every pair counted, the float ``roc_auc(y, s, max_fpr=..., min_tpr=...,
    standardized=...)`` gives on their concatenation (see the module docstring for its
    cost: proportional to the scores above the ``max_fpr`` cut, O(n) at most).
    :meth:`merge` requires the same ``max_fpr``, ``min_tpr`` and ``standardized``.

    Examples
    --------
    >>> from aucstream.metrics import PrequentialAUC
    >>> auc = PrequentialAUC()
    >>> auc.update([0, 0], [0.1, 0.4]).get()  # one class only so far
    nan
    >>> auc.update([1, 1], [0.35, 0.8]).get()
    0.75
    >>> auc.update(-1, 0.5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: y_true[0] = -1 is a third label; this stream's labels are 0 and 1 ...
    >>> auc
    PrequentialAUC(auc=0.75, n_positive=2, n_negative=2)
    >>> top = PrequentialAUC(max_fpr=0.5, standardized=False)
    >>> top.update([0, 0, 0, 0, 1, 1], [0.1, 0.2, 0.3, 0.9, 0.4, 0.8]).get()
    0.25
    """

    _parameter_constraints: dict = {"max_memory": [None, positive_int(7)]}

    def __init__(
        self,
        pos_label: Label | None = None,
        max_memory: int | None = None,
        *,
        max_fpr: float | None = None,
        min_tpr: float | None = None,
        standardized: bool = True,
    ) -> None:
        validate_parameter_constraints(
            self._parameter_constraints, {"max_memory": max_memory}, caller_name="PrequentialAUC"
        )
        region = _partial_region(max_fpr, min_tpr, standardized, "PrequentialAUC")
        if max_memory is not None and region is not None:
            raise ValueError(
                f"PrequentialAUC cannot bound its memory (max_memory={max_memory}) for a "
                f"partial AUC (max_fpr={max_fpr!r}, min_tpr={min_tpr!r}): the histogram it "
                "switches to loses the order of the scores at the top of the ranking that "
                "the partial AUC reads; leave max_memory=None (8 bytes per pair)"
            )
        super().__init__(pos_label, max_fpr, min_tpr, standardized)
        self.max_memory = max_memory
        self._pairs = 0
        self._runs: list[list[np.ndarray]] = [[], []]
        # None until the memory bound switches the metric to a histogram
        self._edges: Any = None
        self._cells: Any = None

    _growable_state = (*_BinaryPairs._growable_state, "_runs", "_edges", "_cells")

    def _check_state(self) -> None:
        """Consistency of a loaded state: sorted finite runs or consistent cells, and the
        pair count equal to its recomputation (raise ValueError)."""
        self._check_common()
        if self.max_memory is not None and _resolved(self.max_fpr, self.min_tpr) is not None:
            raise ValueError("a partial AUC cannot be binned (max_memory must be None)")
        if not (isinstance(self._runs, list) and len(self._runs) == 2):
            raise ValueError("_runs must hold one list of runs per label")
        for runs in self._runs:
            for run in runs:
                if not (isinstance(run, np.ndarray) and run.dtype == np.float64 and run.ndim == 1):
                    raise ValueError("every run must be a 1-D float64 array")
                if not np.isfinite(run).all() or np.any(np.diff(run) < 0):
                    raise ValueError("every run must be sorted and finite")
        if (self._edges is None) != (self._cells is None):
            raise ValueError("_edges and _cells go together")
        if self._edges is not None:
            edges, cells = self._edges, self._cells
            if edges.dtype != np.float64 or edges.ndim != 1 or np.any(np.diff(edges) <= 0):
                raise ValueError("_edges must be strictly increasing float64")
            if not np.isfinite(edges).all() or any(self._runs[0] + self._runs[1]):
                raise ValueError("a binned metric keeps finite edges and no runs")
            if cells.dtype.kind not in "iu" or cells.shape != (2, 2 * edges.size + 1):
                raise ValueError("_cells must be integer counts of shape (2, 2 * edges + 1)")
            if np.any(cells < 0):
                raise ValueError("_cells must not be negative")
        n0, n1 = self._class_sizes()
        if not (isinstance(self._pairs, int) and 0 <= self._pairs <= 2 * n0 * n1):
            raise ValueError("_pairs is outside [0, 2 n_0 n_1]")
        if self._edges is None:
            zeros = np.sort(np.concatenate([np.empty(0), *self._runs[0]]))
            ones = np.sort(np.concatenate([np.empty(0), *self._runs[1]]))
            if int(_count(ones, zeros)) != self._pairs:
                raise ValueError("_pairs differs from the count of the stored scores")
        if self.n_seen < n0 + n1 + len(self._held_scores):
            raise ValueError("n_seen is smaller than the pairs counted")

    def _class_sizes(self) -> tuple[int, int]:
        if self._cells is not None:
            return int(self._cells[0].sum()), int(self._cells[1].sum())
        n0, n1 = (sum(run.size for run in runs) for runs in self._runs)
        return n0, n1

    def _counted(self) -> int:
        return self._pairs

    def _sorted_runs(self, number: int) -> list[np.ndarray]:
        return self._runs[number]

    def _ingest(self, numbers: np.ndarray, scores: np.ndarray) -> None:
        if scores.size == 1:  # one pair (a read after each single pair): no split, no sort
            one = [scores.copy()]  # stored: never a caller's array
            self._absorb([], one, 0) if numbers[0] else self._absorb(one, [], 0)
            return
        zeros, ones = np.sort(scores[numbers == 0]), np.sort(scores[numbers == 1])
        self._absorb([zeros], [ones], int(_count(ones, zeros)))

    def merge(self, other: PrequentialAUC) -> PrequentialAUC:
        """Count the pairs of another stream too: the AUC of the union, cross pairs included.

        Exact when both are exact. When one is binned (bounded memory), the other's
        scores are counted by its cells (and ``self`` becomes binned); two binned
        metrics merge only if their edges are equal. ``other`` keeps its value (its
        held single pairs are counted first).

        Parameters
        ----------
        other : PrequentialAUC
            With the same ``pos_label``, and labels that make at most two with ours.

        Returns
        -------
        PrequentialAUC
            ``self``.

        Raises
        ------
        TypeError
            If ``other`` is not a PrequentialAUC.
        ValueError
            If ``pos_label`` differs, the labels make more than two, both are binned
            with different edges, or the partial-AUC parameters (``max_fpr``,
            ``min_tpr``, ``standardized``) differ. Nothing is changed.
        """
        if not isinstance(other, PrequentialAUC):
            raise TypeError(f"can only merge a PrequentialAUC, not {type(other).__name__}")
        self._check_same_region(other)
        self._flush()
        other._flush()
        if other.pos_label != self.pos_label:
            raise ValueError(
                f"cannot merge streams with pos_label={self.pos_label!r} and {other.pos_label!r}"
            )
        labels = self._labels + [v for v in other._labels if not any(v == u for u in self._labels)]
        if len(labels) > 2:
            raise ValueError(f"the merged streams would have three labels: {labels}")
        if (
            self._edges is not None
            and other._edges is not None
            and not np.array_equal(self._edges, other._edges)
        ):
            raise ValueError("cannot merge two binned PrequentialAUC with different edges")
        # other's label numbers, renumbered as ours: swapped when its label 0 is our label 1
        swap = len(other._labels) > 0 and not any(other._labels[0] == u for u in labels[:1])
        n0, n1 = other._class_sizes()
        pairs = 2 * n0 * n1 - other._pairs if swap else other._pairs
        order = [1, 0] if swap else [0, 1]
        self._labels = labels
        self.n_seen += other.n_seen
        if other._cells is not None:
            self._switch_to_cells(other._edges)
            self._absorb_cells(other._cells[order], pairs)
        else:
            zeros, ones = ([run.copy() for run in other._runs[k]] for k in order)
            self._absorb(zeros, ones, pairs)
        return self

    def _absorb(self, zeros: list[np.ndarray], ones: list[np.ndarray], pairs: int) -> None:
        """Count sorted runs of new scores, with ``pairs`` counted among them, and keep them."""
        if self._cells is not None:
            new = np.stack(
                [self._histogram(np.concatenate([np.empty(0), *part])) for part in (zeros, ones)]
            )
            self._absorb_cells(new, pairs)
            return
        zeros, ones = [a for a in zeros if a.size], [a for a in ones if a.size]
        self._pairs += pairs
        self._pairs += sum(int(_count(a, b)) for a in ones for b in self._runs[0])
        self._pairs += sum(int(_count(a, b)) for a in self._runs[1] for b in zeros)
        for runs, added in zip(self._runs, (zeros, ones)):
            for run in added:
                runs.append(run)
                _sp._compact(runs)
        if self.max_memory is not None and sum(self._class_sizes()) > self.max_memory:
            self._switch_to_cells(self._quantile_edges())

    def _absorb_cells(self, new: np.ndarray, pairs: int) -> None:
        """Count per-cell counts ``new`` (shape (2, cells)) with ``pairs`` among them."""
        cells = self._cells
        self._pairs += (
            pairs + _sp._cell_pair_count(new[1], cells[0]) + _sp._cell_pair_count(cells[1], new[0])
        )
        self._cells = cells + new

    def _histogram(self, scores: np.ndarray) -> np.ndarray:
        return np.bincount(_sp._cell_index(self._edges, scores), minlength=2 * self._edges.size + 1)

    def _quantile_edges(self) -> np.ndarray:
        stored = np.sort(np.concatenate([run for runs in self._runs for run in runs]))
        m = (int(self.max_memory or 0) - 2) // 5  # called only under a memory bound
        distinct = np.unique(stored)
        if distinct.size <= m:
            return distinct
        middles = ((2 * np.arange(m) + 1) * stored.size) // (2 * m)
        return np.unique(stored[middles])

    def _switch_to_cells(self, edges: np.ndarray) -> None:
        """Replace the stored scores by their counts per cell of ``edges`` (once)."""
        if self._cells is not None:
            return
        self._edges = np.array(edges, dtype=np.float64)
        self._cells = np.stack(
            [self._histogram(np.concatenate([np.empty(0), *runs])) for runs in self._runs]
        )
        self._runs = [[], []]

    def error_bound(self) -> float:
        """A bound on ``|get() - exact AUC|``: 0 while exact, NaN while a class is missing.

        Returns
        -------
        float
            The share of positive-negative pairs that share an open cell, halved (see
            the class Notes).
        """
        self._flush()
        n0, n1 = self._class_sizes()
        if n0 == 0 or n1 == 0:
            return float("nan")
        if self._cells is None:
            return 0.0
        same = int(np.dot(self._cells[0, ::2], self._cells[1, ::2]))
        return same / (2 * n0 * n1)

    def __repr__(self) -> str:
        bound = f", error_bound={self.error_bound():.3g}" if self._cells is not None else ""
        return f"PrequentialAUC({self._describe()}{bound})"


class RollingAUC(_BinaryPairs):
    r"""Exact AUC of the last ``window`` (label, score) pairs.

    A ring buffer holds the window in arrival order and each class keeps its scores of
    the window sorted. An update of :math:`k` pairs is one numba call: the :math:`d`
    oldest pairs leave and the :math:`k` new ones enter (only the last ``window`` of
    them if :math:`k` exceeds it), and the pair count of the window becomes

    .. math::

        C(W') = C(W) - C(D, W) + C(D) + C(A, R) + C(A),

    with :math:`W` the old window, :math:`D` the departing pairs, :math:`R = W
    \setminus D`, :math:`A` the arriving pairs, :math:`C(X)` the count within
    :math:`X` and :math:`C(X, Y)` the count of the pairs across :math:`X` and :math:`Y`
    (:math:`C(D, W)` counts the pairs inside :math:`D` twice, hence :math:`+C(D)`).
    Each count walks the sorted departing or arriving scores of one class through the
    other class's with galloping searches (O(k log(w/k)) comparisons); the sorted
    arrays lose :math:`D` and gain :math:`A` in one merge pass each, from the first
    position they change. So an update costs O(k log w + w): one pair O(log w)
    comparisons plus at most O(w) moves (it moves only the scores above it), and
    O(log w + w/k) per pair in batches of :math:`k`. The pair count is an integer, so
    the AUC is exact. The window's arrays take 25 bytes per pair of ``window``,
    allocated at construction, and a window that would take more than aucstream's
    ``memory_budget`` (:func:`aucstream.set_config`) is refused with a MemoryError that
    says so before anything is allocated.

    With ``max_fpr`` or ``min_tpr``, :meth:`get` is the partial AUC of the window's
    pairs, as ``roc_auc`` gives it (read from the window's sorted scores, see the module
    docstring; updates cost the same).

    Parameters
    ----------
    window : int >= 1
        The number of most recent pairs the AUC is computed over.
    pos_label : scalar, optional
        As for :class:`PrequentialAUC`: the positive label, or the larger of the two
        labels of the stream (fixed once both have been seen, even if one leaves the
        window); a third label is refused.
    max_fpr, min_tpr, standardized : optional
        The partial AUC to report (keyword only), as for :class:`PrequentialAUC` and
        :func:`aucstream.metrics.roc_auc`.

    Attributes
    ----------
    n_seen : int
        The number of pairs given to :meth:`update` in total.
    n_positive, n_negative : int
        The number of positive and negative pairs in the window.

    Examples
    --------
    >>> from aucstream.metrics import RollingAUC
    >>> auc = RollingAUC(window=4)
    >>> auc.update([0, 1, 0, 1, 0, 1, 0, 0, 1, 1],
    ...            [0.3, 0.5, 0.5, 0.7, 0.1, 0.3, 0.1, 0.4, 0.35, 0.8]).get()
    0.75
    >>> auc
    RollingAUC(window=4, auc=0.75, n_positive=2, n_negative=2)
    """

    _parameter_constraints: dict = {"window": [positive_int()]}

    #: Bytes of state per pair of the window (ring: score and label; sorted scores).
    _BYTES_PER_PAIR = 25

    def __init__(
        self,
        window: int,
        pos_label: Label | None = None,
        *,
        max_fpr: float | None = None,
        min_tpr: float | None = None,
        standardized: bool = True,
    ) -> None:
        validate_parameter_constraints(
            self._parameter_constraints, {"window": window}, caller_name="RollingAUC"
        )
        _partial_region(max_fpr, min_tpr, standardized, "RollingAUC")
        need, budget = self._BYTES_PER_PAIR * int(window), get_config()["memory_budget"]
        if need > budget:
            raise MemoryError(
                f"RollingAUC(window={window}) needs {format_bytes(need)} for its window "
                f"({self._BYTES_PER_PAIR} bytes per pair, allocated at once), above "
                f"aucstream's memory_budget of {format_bytes(budget)}; use a smaller "
                "window, or raise the budget with aucstream.set_config(memory_budget=...)"
            )
        super().__init__(pos_label, max_fpr, min_tpr, standardized)
        self.window = window
        self._ring_score = np.zeros(window)
        self._ring_label = np.zeros(window, dtype=np.int8)
        self._sorted = np.zeros((2, window))
        # oldest position in the ring, pairs in the window, pair count C, class sizes
        self._counters = np.zeros(5, dtype=np.int64)

    def _check_state(self) -> None:
        """Consistency of a loaded state: ring positions and sizes in range, the sorted
        scores equal to the ring's, the pair count equal to its recomputation."""
        self._check_common()
        w = self.window
        if not (isinstance(w, int) and w >= 1):
            raise ValueError("window must be a positive int")
        kept: list[np.ndarray] = [self._ring_score, self._ring_label, self._sorted, self._counters]
        shapes: tuple[tuple[int, ...], ...] = ((w,), (w,), (2, w), (5,))
        if any(a.shape != shape for a, shape in zip(kept, shapes)):
            raise ValueError("the window's arrays do not match window")
        start, size, pairs, n0, n1 = (int(c) for c in self._counters)
        if not (0 <= start < w and 0 <= size <= w and n0 >= 0 and n1 >= 0 and n0 + n1 == size):
            raise ValueError("_counters are out of range")
        at = (start + np.arange(size)) % w
        labels, scores = self._ring_label[at], self._ring_score[at]
        if np.any((labels != 0) & (labels != 1)) or not np.isfinite(scores).all():
            raise ValueError("the ring holds an unknown label or a non-finite score")
        for j, n in enumerate((n0, n1)):
            if not np.array_equal(self._sorted[j, :n], np.sort(scores[labels == j])):
                raise ValueError("the sorted scores differ from the ring's")
        if int(_count(self._sorted[1, :n1], self._sorted[0, :n0])) != pairs:
            raise ValueError("the pair count differs from the window's")

    def _class_sizes(self) -> tuple[int, int]:
        return int(self._counters[3]), int(self._counters[4])

    def _counted(self) -> int:
        return int(self._counters[2])

    def _sorted_runs(self, number: int) -> list[np.ndarray]:
        return [self._sorted[number, : self._counters[3 + number]]]

    def _ingest(self, numbers: np.ndarray, scores: np.ndarray) -> None:
        last = slice(max(0, scores.size - self.window), None)  # the earlier ones never count
        _slide(
            self._ring_score,
            self._ring_label,
            self._sorted,
            self._counters,
            np.ascontiguousarray(numbers[last]),
            np.ascontiguousarray(scores[last]),
        )

    def _peek(self, y_true: np.ndarray, y_score: np.ndarray) -> float:
        """:meth:`get` after ``update(y_true, y_score)`` (checked labels, finite scores),
        nothing changed, no copy of the window: the pair count of the class docstring,
        O(k log w) for k pairs; a partial AUC from the tops (``_sorted_pairs._peek_tops``)."""
        return self._peek_of(*self._peek_rows(y_true, y_score))

    def _peek_of(self, labels: list, numbers: np.ndarray, scores: np.ndarray) -> float:
        region = _resolved(self.max_fpr, self.min_tpr)  # (_peek of _peek_rows's rows)
        if region is None:
            return self._peek_full(labels, numbers, scores)
        state = (self._ring_score, self._ring_label, self._sorted, self._counters)
        neg = 1 - positive_with(self, labels)
        neg, pos, n_neg, n_pos = _peek_tops(*state, numbers, scores, neg, region[0])
        if n_neg == 0 or n_pos == 0:
            return float("nan")
        return _partial_auc(neg, pos, int(n_neg), int(n_pos), region, self.standardized)

    def _peek_rows(self, y_true, y_score) -> tuple[list, np.ndarray, np.ndarray]:
        """The labels after the pairs of a peek, their label numbers and scores (the
        last ``window`` of them); the held pairs counted first."""
        self._flush()
        y = np.asarray(y_true).ravel()
        scores = np.ascontiguousarray(y_score, dtype=np.float64).ravel()
        labels = self._labels_with(np.unique(y), y)
        if len(labels) < 2:
            numbers = np.zeros(y.size, np.int8)
        else:
            numbers = (y == labels[1]).astype(np.int8)
        last = slice(max(0, scores.size - self.window), None)
        return labels, np.ascontiguousarray(numbers[last]), np.ascontiguousarray(scores[last])

    def _peek_full(self, labels: list, numbers: np.ndarray, scores: np.ndarray) -> float:
        """The full AUC of the window after the pairs of :meth:`_peek_rows`."""
        state = (self._ring_score, self._ring_label, self._sorted, self._counters)
        pairs, n0, n1 = _peek_counts(*state, numbers, scores)
        return peeked_auc(self, int(pairs), int(n0), int(n1), labels)

    def __repr__(self) -> str:
        return f"RollingAUC(window={self.window}, {self._describe()})"
