r"""aucstream learners as River classifiers: ``learn_one`` on dicts, River's metrics.

:class:`RiverClassifier` wraps any online aucstream learner (OPAUC, OAM, AdaOAM,
SOLAM, FSAUC, the online classifiers) as a ``river.base.MiniBatchClassifier``, so it
runs in ``river.evaluate.progressive_val_score``, in River pipelines and with River's
metrics. It needs the optional extra ``aucstream[river]``.

Features
--------
River examples are dicts whose keys (strings, ints, anything hashable) may appear
for the first time at any point of the stream. aucstream's learners keep a
fixed-width state (OPAUC's d x d covariances), so the wrapper maps keys to the
columns of a learner of width ``n_features``, in one of two ways:

``hashing=False`` (default): columns in order of first appearance
    The first new key takes column 0, the next column 1, and so on (new keys of one
    example in the order of ``(type name, repr)``, so the order of a dict's keys
    never matters). Until all ``n_features`` columns are taken this is exact: a
    column that no example has touched yet holds a zero in every example, which
    changes no learner's update (its weight stays 0), so the model equals the
    learner fitted on the columns seen so far. A key that comes after all columns
    are taken is refused with a ValueError (before anything is learnt): raise
    ``n_features`` or use ``hashing=True``. At prediction, keys never learnt are
    ignored (their weight is 0, exactly).
``hashing=True``: the hashing trick (Weinberger et al., 2009)
    Key k goes to column :math:`h(k) \bmod n` with sign :math:`\pm 1` from another
    bit of :math:`h(k)` (64 bits of BLAKE2b of the key's type and repr: the same in
    every process and run). Any number of keys fits in ``n_features`` columns;
    colliding keys share a column (their signed values add, in key order), which
    perturbs the model.

The learner's memory and time follow ``n_features``, not the number of columns in
use: OPAUC's full covariance costs O(n_features^2) per example (choose a sketch,
``OPAUC(covariance="fd")``, or a smaller width for wide streams).

Values must be numbers (bools count as 0/1); ``None`` and NaN mean the feature is
absent (as in a pandas row of ``learn_many``). Other values (strings) are refused
with an error that names the key: encode them first (e.g. River's
``preprocessing.OneHotEncoder``).

Labels
------
``classes`` gives both labels; ``classes[1]`` (or the larger label) is the positive
class. When it is None, boolean labels mean ``(False, True)`` and the numbers 0, 1
and -1 mean ``(0, 1)`` or ``(-1, 1)``: each example is learnt when it comes, so the
wrapper is the learner, example for example, as
:func:`aucstream.evaluation.prequential` runs it (a first label 1 is learnt as the
positive class of ``(0, 1)``; a later -1, with no 0 seen, renames the negative class
-1, which changes nothing learnt). Other labels (strings) are learnt once both have
appeared: the examples before that are kept (in order) and learnt first, so the
model is the same as if the classes had been known from the start, but those
examples are scored by the unlearnt model (before any label, predictions follow
River's binary convention, ``{False: 1/2, True: 1/2}``; after a first such label
they are ``{}``, River's "no idea", until the second label comes).

Probabilities
-------------
``predict_proba_one`` returns the learner's own ``predict_proba`` when it has one
(calibrated, never 0 or 1: see :mod:`aucstream._calibration`).
Otherwise, AUC learners give a ranking score s, not a probability: the wrapper
returns :math:`p = 1 / (1 + e^{-s})` for ``classes[1]``, a monotone map of the
score, so every rank-based metric (ROC AUC, River's ``RollingROCAUC``) is that of
the scores, and :math:`p > 1/2` exactly where the learner predicts ``classes[1]``.
It is not calibrated. The log-odds are capped at about 34.5, so that every
probability lies in :math:`[10^{-15}, 1 - 10^{-15}]` (a finite log-loss); scores
beyond the cap tie. Before anything is learnt the probabilities are 1/2.

``learn_many`` is exactly ``learn_one`` over the rows in order (the learners'
results do not depend on how the stream is chunked), bit for bit; it is faster
because the learner runs one compiled pass over the batch.
"""

from __future__ import annotations

import hashlib
import math
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from ._base import BaseStreamingAUC
from ._calibration import capped_logistic
from ._typing import Label

if TYPE_CHECKING:  # pragma: no cover (pandas comes with river)
    import pandas as pd

try:
    from river import base as _river_base
except ImportError:  # pragma: no cover - the extra is installed where this is used
    _river_base = None  # type: ignore[assignment]

__all__ = ["RiverClassifier"]

_Base: Any = _river_base.MiniBatchClassifier if _river_base is not None else object


#: The value types :meth:`RiverClassifier._values` takes as numbers.
_NUMBERS = (int, float, np.integer, np.floating, np.bool_)
#: The value type of River's usual rows (:meth:`RiverClassifier._row`'s quick map).
_FLOATS = frozenset({float})


def _key_order(key) -> tuple[str, str]:
    """A total order on keys of any types, independent of the dict's order."""
    return (type(key).__name__, repr(key))


def _hashed(key, n_features: int) -> tuple[int, float]:
    """(column, sign) of a key under the hashing trick (stable across processes)."""
    digest = hashlib.blake2b(f"{type(key).__name__}:{key!r}".encode(), digest_size=8).digest()
    h = int.from_bytes(digest, "little")
    return h % n_features, (1.0 if h >> 63 else -1.0)


class RiverClassifier(_Base):
    """An online aucstream learner as a River classifier (see the module docstring).

    Parameters
    ----------
    estimator : BaseStreamingAUC
        An online aucstream learner (not fitted; the wrapper learns a clone of it,
        ``estimator_``).
    n_features : int, default=128
        Width of the learner: the most distinct keys (``hashing=False``) or the
        number of hashed columns.
    hashing : bool, default=False
        Map keys to columns by hashing instead of by first appearance.
    classes : tuple of two labels or None, default=None
        Both labels; None: ``(False, True)`` for boolean labels, else learnt from the
        stream.

    Attributes
    ----------
    estimator_ : BaseStreamingAUC
        The learner being trained (its ``coef_`` are indexed by column).
    features_ : dict
        ``hashing=False``: key -> column, in order of first appearance.

    Examples
    --------
    >>> from river import datasets, evaluate, metrics
    >>> from aucstream import OPAUC
    >>> from aucstream.river import RiverClassifier
    >>> model = RiverClassifier(OPAUC(eta=2**-6), n_features=16)
    >>> metric = evaluate.progressive_val_score(
    ...     datasets.Phishing(), model, metrics.RollingROCAUC(window_size=2000)
    ... )
    >>> metric.get() > 0.9
    True
    >>> sorted(model.features_)[:2]
    ['age_of_domain', 'anchor_from_other_domain']
    """

    def __init__(
        self,
        estimator: BaseStreamingAUC,
        n_features: int = 128,
        hashing: bool = False,
        classes: tuple | None = None,
    ):
        if _river_base is None:  # pragma: no cover
            raise ImportError("aucstream.river needs River: pip install 'aucstream[river]'")
        if not isinstance(estimator, BaseStreamingAUC) or estimator.is_batch:
            raise TypeError(
                f"estimator must be an online aucstream learner, got {type(estimator).__name__}"
            )
        if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)):
            raise TypeError(f"n_features must be an int, got {n_features!r}")
        if n_features < 1:
            raise ValueError(f"n_features must be >= 1, got {n_features}")
        if not isinstance(hashing, (bool, np.bool_)):
            raise TypeError(f"hashing must be a bool, got {hashing!r}")
        if classes is not None:
            if len(classes) != 2 or classes[0] == classes[1]:
                raise ValueError(f"classes must hold two different labels, got {classes!r}")
            classes = tuple(classes)
        self.estimator = estimator
        self.n_features = int(n_features)
        self.hashing = bool(hashing)
        self.classes = classes
        self.estimator_ = clone(estimator)
        self.features_: dict = {}
        self._labels: tuple | None = None if classes is None else self._sorted(classes)
        self._pending: list[tuple[sp.csr_matrix, Any]] = []
        #: The classes (0, 1) were assumed from a first label 1: a -1 renames the 0.
        self._provisional = False
        self._hash_cache: dict = {}

    @classmethod
    def _unit_test_params(cls):
        from .opauc import OPAUC
        from .solam import SOLAM

        yield {"estimator": OPAUC(eta=2**-6)}
        yield {"estimator": SOLAM(), "n_features": 16, "hashing": True}

    # ------------------------------------------------------------------ columns
    @staticmethod
    def _sorted(labels) -> tuple:
        values = np.unique(np.asarray(list(labels)))
        return tuple(v.item() if isinstance(v, np.generic) else v for v in values)

    def _values(self, x: dict) -> list[tuple[Any, float]]:
        """(key, value) of the present features of x, in key order; refuses non-numbers."""
        if not isinstance(x, dict):
            raise TypeError(f"x must be a dict of features, got {type(x).__name__}")
        items = []
        for key in sorted(x, key=_key_order):
            value = x[key]
            if value is None:
                continue
            if isinstance(value, (str, bytes)) or not isinstance(value, _NUMBERS):
                raise ValueError(
                    f"feature {key!r} has the value {value!r} ({type(value).__name__}); "
                    "RiverClassifier needs numbers: encode it first (e.g. River's "
                    "preprocessing.OneHotEncoder)"
                )
            value = float(value)
            if not math.isnan(value):
                items.append((key, value))
        return items

    def _hashed_column(self, key) -> tuple[int, float]:
        found = self._hash_cache.get(key)
        if found is None:
            if len(self._hash_cache) >= 1 << 16:
                self._hash_cache.clear()
            found = self._hash_cache[key] = _hashed(key, self.n_features)
        return found

    def _column(self, key) -> tuple[int, float] | None:
        if self.hashing:
            return self._hashed_column(key)
        column = self.features_.get(key)
        return None if column is None else (column, 1.0)

    def _encode(self, rows: list[dict], grow: bool) -> tuple[sp.csr_matrix, dict]:
        """The rows as a CSR matrix, and the keys they add to ``features_`` (not yet
        added). Keys not mapped are dropped when ``grow`` is False."""
        added: dict = {}
        indptr, indices, data = [0], [], []
        for x in rows:
            entries: dict[int, float] = {}
            for key, value in self._values(x):
                found = self._column(key)
                if found is None and not self.hashing:
                    column = added.get(key)
                    if column is None:
                        if not grow:
                            continue
                        column = len(self.features_) + len(added)
                        if column >= self.n_features:
                            raise ValueError(
                                f"feature {key!r} is new, but all n_features="
                                f"{self.n_features} columns are taken by earlier keys: "
                                "raise n_features or use hashing=True"
                            )
                        added[key] = column
                    found = (column, 1.0)
                if found is None:  # never: hashing maps every key
                    continue
                column, sign = found
                entries[column] = entries.get(column, 0.0) + sign * value
            for column in sorted(entries):
                indices.append(column)
                data.append(entries[column])
            indptr.append(len(indices))
        X = sp.csr_matrix(
            (
                np.asarray(data, dtype=np.float64),
                np.asarray(indices, dtype=np.int64),
                np.asarray(indptr, dtype=np.int64),
            ),
            shape=(len(rows), self.n_features),
        )
        return X, added

    # ----------------------------------------------------------------- learning
    def _learn(self, rows: list[dict], ys: list) -> None:
        X, added = self._encode(rows, grow=True)
        labels = self._labels
        seen = {y for _, y in self._pending} | set(ys)
        if labels is None:
            if all(isinstance(y, (bool, np.bool_)) for y in seen):
                labels = (False, True)
            elif len(seen) > 2:
                raise ValueError(
                    f"Only binary classification is supported; labels {sorted(seen, key=repr)[:5]}"
                )
            elif len(seen) == 2:
                labels = self._sorted(seen)
        provisional = self._provisional
        if provisional and self._labels is not None:
            negatives = {y for y in ys if _is_number(y) and y in (0, -1)}
            if negatives == {-1}:  # only positives learnt so far: the negative class is -1
                labels = (-1, 1)
            provisional = not negatives
        elif (
            labels is None
            and len(seen) == 1
            and all(_is_number(y) and y in (0, 1, -1) for y in seen)
        ):  # one number: its pair (a first 1 is the positive of (0, 1) until a -1 comes)
            labels = (-1, 1) if -1 in seen else (0, 1)
            provisional = 1 in seen
        if labels is None:  # one label so far: keep the examples until the other comes
            self.features_.update(added)
            self._pending.extend(zip(X, ys))
            return
        if self._pending:
            X = sp.vstack([row for row, _ in self._pending] + [X], format="csr")
            ys = [y for _, y in self._pending] + list(ys)
        renamed = labels != self._labels and self._labels is not None
        if renamed:
            self.estimator_.classes_ = np.array(labels)
        try:
            self.estimator_.partial_fit(X, np.asarray(ys), classes=np.asarray(labels))
        except BaseException:
            if renamed:
                self.estimator_.classes_ = np.array(self._labels)
            raise
        self.features_.update(added)
        self._labels = labels
        self._provisional = provisional
        self._pending = []

    def learn_one(self, x: dict, y: Label) -> None:
        """Learn one example.

        Parameters
        ----------
        x : dict
            Features (keys of any hashable type, numeric values).
        y : label
            Its label.
        """
        if (
            self._labels is not None
            and not self._pending
            and not self._provisional
            and self._fitted()
        ):
            row = self._row(x, learning=True)
            if row is not None:  # the learner's one-example path, on column indices
                self.estimator_.learn_one(row, y)
                return
            if not self.hashing and type(x) is dict:
                # new keys: their columns as _encode gives them (taken only once the
                # example is learnt), and still the one-example path (a chunk call of
                # a pipeline would first learn the examples it holds)
                X, added = self._encode([x], grow=True)
                self.estimator_.learn_one(dict(zip(X.indices.tolist(), X.data.tolist())), y)
                self.features_.update(added)
                return
        self._learn([x], [y])

    def _row(self, x, learning: bool) -> dict | None:
        """``{column: value}`` of one example, as :meth:`_encode` maps it, or None
        when :meth:`_encode` must (a key without a column while learning, two keys
        hashed to one column, a value that is not a number, x not a dict).

        Values are taken as :meth:`_values` takes them (None and NaN absent, bools
        and numpy numbers as floats) and stored as ``0.0 + sign * value``, the
        :meth:`_encode` sum of one term, so the learner gets the same bits.
        """
        if type(x) is not dict:
            return None
        hashing, columns = self.hashing, self.features_
        if not hashing and _FLOATS.issuperset(map(type, x.values())):
            # River's usual row (float values, keys already mapped) in one comprehension:
            # what the loop below gives when no value is NaN and no key is new (a
            # KeyError, or a NaN or infinite sum: the loop decides)
            try:
                row = {columns[key]: 0.0 + value for key, value in x.items()}
            except KeyError:
                row = None
            if row is not None and math.isfinite(sum(row.values())):
                return row
        row = {}
        for key, value in x.items():
            if type(value) is not float:
                if value is None:
                    continue
                if isinstance(value, (str, bytes)) or not isinstance(value, _NUMBERS):
                    return None  # refused by _values, with the error naming the key
                value = float(value)
            if value != value:  # NaN: absent
                continue
            column: Any
            if hashing:
                column, sign = self._hashed_column(key)
                value = sign * value
            else:  # the sign is 1.0: 1.0 * value is value
                column = columns.get(key)
                if column is None:
                    if learning:
                        return None  # a new key takes the next column: _encode's order
                    continue  # never learnt: weight 0, dropped as _encode drops it
            if column in row:
                return None  # a collision: _encode sums the keys in key order
            row[column] = 0.0 + value
        return row

    def learn_many(self, X: pd.DataFrame, y: pd.Series) -> None:
        """Learn the rows of a dataframe in order: the same as ``learn_one`` on each.

        Parameters
        ----------
        X : pandas.DataFrame
            Features by column; NaN means absent.
        y : pandas.Series or array-like
            Labels.
        """
        labels = list(y.tolist() if hasattr(y, "tolist") else y)
        if len(labels) != len(X):
            raise ValueError(f"X has {len(X)} rows and y {len(labels)} labels")
        if len(labels):
            self._learn(X.to_dict(orient="records"), labels)

    # --------------------------------------------------------------- prediction
    def _fitted(self) -> bool:
        return hasattr(self.estimator_, "n_samples_seen_")

    def _positive_proba(self, X: sp.csr_matrix) -> np.ndarray:
        if not self._fitted():
            return np.full(X.shape[0], 0.5)
        if hasattr(self.estimator_, "predict_proba"):
            return np.asarray(self.estimator_.predict_proba(X))[:, 1]
        return capped_logistic(self.estimator_.decision_function(X))

    def _known_labels(self) -> tuple | None:
        """The labels; before any is seen, River's binary convention (False, True)."""
        if self._labels is None and not self._pending:
            return (False, True)
        return self._labels

    def predict_proba_one(self, x: dict) -> dict:
        """Probabilities of both labels (see the module docstring); ``{}`` after a first
        non-boolean label, until the second one is seen."""
        labels = self._known_labels()
        if labels is None:
            return {}
        row = self._row(x, learning=False) if self._fitted() else None
        if row is None:
            p = float(self._positive_proba(self._encode([x], grow=False)[0])[0])
        elif hasattr(self.estimator_, "predict_proba"):
            p = float(self.estimator_.predict_proba_one(row)[1])
        else:  # as _positive_proba computes it
            p = float(capped_logistic(np.array([self.estimator_.decision_one(row)]))[0])
        return {labels[0]: 1.0 - p, labels[1]: p}

    def predict_one(self, x: dict) -> Label | None:
        """The learner's predicted label (``classes[1]`` where its score is positive);
        None while the labels are not known, ``classes[0]`` before anything is learnt."""
        labels = self._known_labels()
        if labels is None:
            return None
        if not self._fitted():
            return labels[0]
        row = self._row(x, learning=False)
        if row is not None:
            return _plain(self.estimator_.predict_one(row))
        return _plain(self.estimator_.predict(self._encode([x], grow=False)[0])[0])

    def decision_one(self, x: dict) -> float:
        """The learner's score of one example (0 before anything is learnt)."""
        if not self._fitted():
            return 0.0
        row = self._row(x, learning=False)
        if row is not None:
            return float(self.estimator_.decision_one(row))
        return float(self.estimator_.decision_function(self._encode([x], grow=False)[0])[0])

    def predict_proba_many(self, X: pd.DataFrame) -> pd.DataFrame:
        """``predict_proba_one`` for every row of a dataframe, as a dataframe."""
        import pandas as pd

        labels = self._known_labels()
        if labels is None:
            return pd.DataFrame(index=X.index)
        p = self._positive_proba(self._encode(X.to_dict(orient="records"), grow=False)[0])
        return pd.DataFrame({labels[0]: 1.0 - p, labels[1]: p}, index=X.index)

    def predict_many(self, X: pd.DataFrame) -> pd.Series:
        """``predict_one`` for every row of a dataframe, as a series."""
        import pandas as pd

        labels = self._known_labels()
        if labels is None:
            return pd.Series([None] * len(X), index=X.index, dtype=object)
        if not self._fitted():
            return pd.Series([labels[0]] * len(X), index=X.index)
        encoded = self._encode(X.to_dict(orient="records"), grow=False)[0]
        return pd.Series(self.estimator_.predict(encoded), index=X.index)


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value
