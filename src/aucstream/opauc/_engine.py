r"""What every OPAUC engine shares, and the exact-statistics step of "full" and "sparse".

An engine (package docstring) is a stateless strategy: its methods take the learner
and read and write the learner's state (the attributes ending in ``_``), never
their own. :class:`Engine` holds the answers common to every covariance kind, each
one a default that a kind's engine overrides; :class:`ExplicitEngine` the part of
"full" and "sparse", whose summaries hold the statistics explicitly so that one
compiled call (:func:`aucstream.opauc._kernels._opauc_chunk`) applies G16 Alg. 1
(Alg. 3 for "sparse") to a chunk, with the columns in their running scale or not.
"""

from __future__ import annotations

import math

import numpy as np

from .._chunks import Chunk
from .._dict_scoring import STALE, score_dict, weights_begin, weights_end
from .._fastpath import BLOCK_START, BLOCK_WIDTH, block_call, floats_at, ints_at
from .._kernels import jit, mean_by_count
from .._params import InvalidParameterError
from .._runtime import LearnerTags
from ..covariance import (
    DTYPE_KINDS,
    CovarianceSummary,
    make_covariance,
    resolve_dtype,
    solve_from_statistics,
    summary_nbytes,
)
from ._kernels import FORGET_LIMIT

#: The kernels' "no running column scale" (an empty array).
_NO_SCALE = np.empty(0)


def opauc_gradient(
    w: np.ndarray, x: np.ndarray, y: float, opposite: CovarianceSummary, lam: float
) -> np.ndarray:
    r"""The OPAUC gradient g_t (G16 Eqs. 7-8) from an opposite-class summary.

    With a sketched summary this is the approximate gradient of G13 Eqs. 10-11 or
    G16 Eqs. 14-17 (``opposite.matvec`` applies the estimate :math:`\hat S`).

    Parameters
    ----------
    w : ndarray of shape (d,)
        Current weights.
    x : ndarray of shape (d,)
        The current example.
    y : {+1, -1}
        Its label.
    opposite : CovarianceSummary
        Summary of the opposite class (must hold at least one example).
    lam : float
        Regularization lambda.

    Returns
    -------
    ndarray of shape (d,)
        ``lam w - y e + e (e^T w) + S w`` with ``e = x - c``.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.covariance import FullCovariance
    >>> from aucstream.opauc import opauc_gradient
    >>> negatives = FullCovariance(2).update(np.array([[1.0, 0.0], [0.0, 1.0]]))
    >>> opauc_gradient(np.zeros(2), np.array([1.0, 1.0]), 1, negatives, 0.1).tolist()
    [-0.5, -0.5]
    """
    e = np.asarray(x, dtype=np.float64) - opposite.mean
    return lam * w - y * e + e * (e @ w) + opposite.matvec(w)


class Engine:
    """The state, update and declarations of one covariance kind of OPAUC.

    Each method takes the learner (``learner``) whose state it reads and writes; the
    :class:`~aucstream.opauc.OPAUC` hooks of the same name without the engine
    (``_row_logged_state`` and so on, :class:`aucstream._base.BaseStreamingAUC`)
    return what these return. The defaults here are those of a kind whose kernel
    takes CSR rows and keeps nothing beyond the weights ``w_`` and the two class
    summaries ``stats_``.
    """

    #: What the learner tells the runtime with this kind (the learner's ``_tags``):
    #: every kind's kernel writes the prequential scores and fits the calibration;
    #: the default kind takes CSR rows and example weights.
    tags = LearnerTags(kernel_prequential=True, kernel_calibrates=True, sample_weight=True)

    # ------------------------------------------------------------- parameters
    #: Whether the kind forgets (``half_life``).
    forgets = True
    #: Whether the kind can learn the columns in their running scale
    #: (``column_scale``): every kind but the base's.
    scales_columns = False
    #: Whether the kind has "max_abs_1" (the scale floored at 1: the low-rank kinds).
    floors_scales = False

    def column_scaled(self, learner) -> bool:
        """Whether the learner learns the columns in their running scale:
        ``column_scale="max_abs"``, or "auto" with a kind that can."""
        option = getattr(learner, "column_scale", None)
        return option == "max_abs" or (option == "auto" and self.scales_columns)

    def column_scale(self, learner) -> np.ndarray:
        """The running column scale as the kernel takes it (empty when off)."""
        return learner.column_scale_ if self.column_scaled(learner) else _NO_SCALE

    def check_params(self, learner) -> None:
        """The parameter rules that depend on the kind: a "float32" ``dtype`` only for
        the kinds in :data:`aucstream.covariance.DTYPE_KINDS`, ``half_life`` only for
        the kinds that forget."""
        if learner.half_life is not None and not self.forgets:
            raise InvalidParameterError(
                f"The 'half_life' parameter of {type(learner).__name__} must be None with "
                f"covariance={learner.covariance!r} (forgetting is available for "
                "covariance='full', 'sparse', 'randomized', 'hash' and 'fd'). Got "
                f"{learner.half_life!r} instead."
            )
        if learner.half_life is not None and learner.centering == "g13":
            raise InvalidParameterError(
                f"The 'centering' parameter of {type(learner).__name__} must be 'g16', "
                "'exact' or None with half_life (G13's mean term is not scale-free under "
                "weights: package docstring, 'Forgetting'). Got 'g13' instead."
            )
        if learner.column_scale == "max_abs" and not self.scales_columns:
            raise InvalidParameterError(
                f"The 'column_scale' parameter of {type(learner).__name__} must be 'auto' "
                f"or None with covariance={learner.covariance!r} (the running column scale "
                "is available for covariance='full' and 'sparse'). Got 'max_abs' instead."
            )
        if learner.column_scale == "max_abs_1" and not self.floors_scales:
            raise InvalidParameterError(
                f"The 'column_scale' parameter of {type(learner).__name__} must be 'auto', "
                f"'max_abs' or None with covariance={learner.covariance!r} ('max_abs_1' is "
                "for the low-rank kinds). Got 'max_abs_1' instead."
            )
        if learner.dtype == "float32" and learner.covariance not in DTYPE_KINDS:
            raise InvalidParameterError(
                f"The 'dtype' parameter of {type(learner).__name__} must be 'float64' with "
                f"covariance={learner.covariance!r} (float32 storage is available for "
                f"covariance in {DTYPE_KINDS}). Got {learner.dtype!r} instead."
            )

    def check_sample_weight(self, learner, sample_weight) -> None:
        """Refuse example weights the update can not take (nothing to refuse here)."""

    # ------------------------------------------------------------------ state
    @staticmethod
    def summary_options(learner) -> dict:
        """The settings of :func:`~aucstream.covariance.make_covariance` that the
        parameters give."""
        centering = learner.centering
        if centering is None and learner.half_life is not None:
            centering = "g16"  # (G13's mean term is not scale-free: package docstring)
        return {
            "centering": centering,
            "shrink": learner.shrink,
            "prune_slack": learner.prune_slack,
            "dtype": learner.dtype,
        }

    def make_summary(self, learner, n_features: int):
        """A fresh class summary of the learner's kind and settings."""
        options = self.summary_options(learner)
        return make_covariance(learner.covariance, n_features, learner.sketch_size, **options)

    def init_state(self, learner, n_features: int) -> None:
        """Allocate the weights, the two class summaries and the forgetting clock."""
        learner.w_ = np.zeros(n_features)
        learner.stats_ = [self.make_summary(learner, n_features) for _ in range(2)]
        learner.forget_ = np.zeros(2, dtype=np.int64)
        if self.column_scaled(learner):
            learner.column_scale_ = np.zeros(n_features)

    # ------------------------------------------------------------- forgetting
    @staticmethod
    def half_life(learner) -> float:
        """``half_life`` as the kernels take it: 0.0 for None (no forgetting)."""
        return 0.0 if learner.half_life is None else float(learner.half_life)

    @staticmethod
    def forgetting_shift(learner, ahead: int = 0) -> int:
        r""":math:`\lfloor t/h \rfloor - E` at the clock t = ``forget_[0]`` +
        ``ahead`` (:func:`aucstream.opauc._kernels.forgetting_weight`, the same
        division and floor)."""
        t, exponent = (int(v) for v in learner.forget_)
        return math.floor((t + ahead) / float(learner.half_life)) - exponent

    #: The largest exponent of the stored weights before :meth:`rescale`.
    forget_limit = FORGET_LIMIT

    def rescale_due(self, learner, n: int) -> bool:
        """Whether learning ``n`` more examples may rescale the stored statistics
        (:meth:`rescale`), which writes both summaries whole."""
        if learner.half_life is None or n <= 0:
            return False
        low, high = self.forgetting_shift(learner), self.forgetting_shift(learner, n - 1)
        return low < 0 or high > self.forget_limit

    def rescale(self, learner) -> bool:
        r"""If the next example's weight :math:`2^{t/h - E}` would leave
        :math:`[1, 2^{\text{FORGET\_LIMIT}+1})`, multiply both summaries' stored
        statistics by the exact power :math:`2^{E - q}` (:math:`q = \lfloor t/h
        \rfloor`) and make q the new E: the statistics, hence every ratio the step
        reads, are those without the rescaling, bit for bit (barring underflow of
        weights already below :math:`2^{-1000}` of the latest). Returns whether it
        rescaled."""
        if learner.half_life is None:
            return False
        shift = self.forgetting_shift(learner)
        if 0 <= shift <= self.forget_limit:
            return False
        shift -= shift % 2  # even: the sketches scale by its square root (exact too)
        factor = math.ldexp(1.0, -shift)
        for summary in learner.stats_:
            summary.scale(factor)
        self.scale_implicit(learner, factor)
        learner.forget_[1] += shift
        return True

    def scale_implicit(self, learner, factor: float) -> None:
        """Keep the weights fixed while the summaries scale by ``factor`` (nothing to
        do: the weights are explicit)."""

    #: Bytes per feature of the state beyond the summaries, ``w_`` and the work vector.
    extra_bytes_per_feature = 0

    def state_nbytes(self, learner, n_features: int) -> int:
        """The two summaries (:func:`aucstream.covariance.summary_nbytes`), w and the
        kernel's work vector, and :attr:`extra_bytes_per_feature` per feature."""
        d = int(n_features)
        itemsize = np.dtype(resolve_dtype(learner.covariance, d, learner.dtype)).itemsize
        summaries = summary_nbytes(
            learner.covariance, d, learner.sketch_size, learner.prune_slack, itemsize
        )
        scale = 8 * d if self.column_scaled(learner) else 0
        return 2 * summaries + 16 * d + self.extra_bytes_per_feature * d + scale

    def low_memory_hint(self, learner) -> str:
        """What to do when the state does not fit the memory budget."""
        return f"Use a smaller sketch_size (covariance={learner.covariance!r} keeps O(d tau))."

    def check_state(self, learner) -> None:
        """Consistency of a loaded state across its members (each summary checks its
        own, :mod:`aucstream.covariance`): the summaries are of the kind and settings
        the parameters give, over ``n_features_in_`` features; their counts add up to
        at most the examples seen."""
        d = learner.n_features_in_
        fresh = self.make_summary(learner, 1)
        derived = {"n_features", "full", "budget", "trigger"}
        total = 0
        for c, s in enumerate(learner.stats_):
            if type(s) is not type(fresh) or s.n_features != d:
                raise ValueError(
                    f"stats_[{c}] is a {type(s).__name__} of {s.n_features} features, not a "
                    f"{type(fresh).__name__} of {d} (covariance={learner.covariance!r})"
                )
            for key, value in vars(fresh).items():
                if key not in derived and not isinstance(value, np.ndarray):
                    if vars(s).get(key) != value:
                        raise ValueError(
                            f"stats_[{c}].{key} = {vars(s).get(key)!r}, but the parameters "
                            f"give {value!r}"
                        )
            total += s.count
        if total > learner.n_samples_seen_:
            raise ValueError(
                f"stats_ count {total} examples, more than the {learner.n_samples_seen_} seen"
            )
        if self.column_scaled(learner):
            s = learner.column_scale_
            if (
                not isinstance(s, np.ndarray)
                or s.shape != (d,)
                or s.dtype != np.float64
                or not np.all(np.isfinite(s))
                or np.any(s < 0.0)
            ):
                raise ValueError(
                    f"column_scale_ must be {d} finite non-negative float64 (the running "
                    "maximum of each column's |x|)"
                )
        forget = learner.forget_
        if (
            not isinstance(forget, np.ndarray)
            or forget.shape != (2,)
            or forget.dtype != np.int64
            or forget[0] < 0
            or forget[0] > learner.n_samples_seen_
        ):
            raise ValueError(
                "forget_ must be two int64 (the forgetting clock, at most the "
                f"{learner.n_samples_seen_} examples seen, and its exponent), got {forget!r}"
            )

    # ---------------------------------------------------------------- weights
    def form_weights(self, learner) -> None:
        """Bring ``w_`` up to date before it is read (nothing: it is the weights)."""

    def set_weights(self, learner, w: np.ndarray) -> None:
        """Make ``w`` (copied) the current weights."""
        learner.w_ = np.array(w, dtype=np.float64, copy=True)

    # ----------------------------------------------------------------- update
    def update(self, learner, chunk: Chunk) -> None:  # pragma: no cover - abstract
        """Learn ``chunk`` (``BaseStreamingAUC._update``)."""
        raise NotImplementedError

    def learn(self, learner, chunk: Chunk) -> None:
        """``BaseStreamingAUC._update``: :meth:`update` (the low-rank kinds first put
        the rows in the running column scale)."""
        self.update(learner, chunk)

    def bind_update(self, learner, chunk: Chunk, reuse: bool = False):
        """The update bound to ``chunk`` (``BaseStreamingAUC._bind_update``): None, the
        kind binds nothing."""
        return None

    # ------------------------------------------------------------- write sets
    def row_logged_state(self, learner) -> tuple:
        """``BaseStreamingAUC._row_logged_state``: nothing."""
        return ()

    def bounded_state(self, learner) -> tuple:
        """``BaseStreamingAUC._bounded_state``: nothing."""
        return ()

    def row_written_state(self, learner, chunk: Chunk) -> tuple:
        """``BaseStreamingAUC._row_written_state``: nothing."""
        return ()

    def written_rows(self, learner, chunk: Chunk, written: tuple) -> dict:
        """Each class's summary learns its class's examples only, so the kernel writes
        its arrays of :meth:`row_logged_state` in the features of those examples."""
        by_class = learner._chunk_rows_by_class(chunk)
        ids = frozenset(map(id, written))
        return {
            id(a): by_class[c]
            for c, s in enumerate(learner.stats_)
            for a in s.row_state()
            if id(a) in ids
        }

    def read_only_state(self, learner, y_pm: np.ndarray, chunk: Chunk | None = None) -> tuple:
        """``BaseStreamingAUC._read_only_state``: nothing."""
        return ()

    def plan_variant(self, learner, chunk: Chunk | None) -> int:
        """``BaseStreamingAUC._plan_variant``: one plan."""
        return 0

    # ---------------------------------------------------------------- merging
    def merge(self, learner, other) -> None:
        """Merge the summaries and average the weights by examples learnt
        (:meth:`aucstream.opauc.OPAUC._merge`). With forgetting, each learner's
        statistics are first brought to the weights of its own present (its latest
        example weighs 1), and the merged clock is the sum of the two clocks (package
        docstring, "Forgetting"). With the running column scale, the scales merge
        into their maximum and each side's weights of the scaled columns are kept
        (its weights times its old scale over the new one, as when a scale grows)
        before they are averaged."""
        n1 = sum(s.count for s in learner.stats_)
        n2 = sum(s.count for s in other.stats_)
        w1, w2 = learner.w_, other.w_
        if self.column_scaled(learner):
            scale = np.maximum(learner.column_scale_, other.column_scale_)
            w1, w2 = (self.in_scale(x, scale) for x in (learner, other))
            learner.column_scale_ = scale
        w = mean_by_count(w1, n1, w2, n2) if n1 + n2 > 0 else w1.copy()
        mine, theirs = learner.stats_, other.stats_
        if learner.half_life is not None:
            clock = int(learner.forget_[0] + other.forget_[0])
            exponent = math.floor(clock / float(learner.half_life))
            mine, theirs = (self.presented(x, clock, exponent) for x in (learner, other))
            learner.forget_[:] = (clock, exponent)
        learner.stats_ = [a.merge(b) for a, b in zip(mine, theirs)]
        self.set_weights(learner, w)

    @staticmethod
    def in_scale(learner, scale: np.ndarray) -> np.ndarray:
        """The learner's weights with the weights of its scaled columns kept in the
        larger running ``scale`` (a column of old scale 0 keeps its weight)."""
        old = learner.column_scale_
        grown = (old > 0.0) & (scale > old)
        w = learner.w_.copy()
        w[grown] *= old[grown] / scale[grown]
        return w

    @staticmethod
    def presented(learner, clock: int, exponent: int) -> list:
        r"""Copies of the learner's summaries whose examples weigh, relative to the
        stored weight :math:`2^{t/h - E}` of an example at the merged ``clock`` t and
        ``exponent`` E, what they weigh now in the learner (its latest example 1)."""
        import copy

        h = float(learner.half_life)
        own_t, own_e = (int(v) for v in learner.forget_)
        log2 = (clock / h - exponent) - (own_t / h - own_e)
        stats = copy.deepcopy(learner.stats_)
        for s in stats:
            if s.count:
                s.scale(2.0**log2)
        return stats

    def from_statistics(self, learner, neg, pos, classes, coef):
        """:meth:`aucstream.opauc.OPAUC.from_statistics`'s work."""
        from sklearn.utils.multiclass import check_classification_targets

        learner._validate_params()
        learner._check_params()
        classes = np.asarray(classes)
        check_classification_targets(classes)
        classes = learner._check_two_classes(np.unique(classes), "classes")
        d = neg.n_features
        probe = self.make_summary(learner, d)
        for name, summary in (("neg", neg), ("pos", pos)):
            if type(summary) is not type(probe) or summary.n_features != d:
                raise TypeError(
                    f"{name} must be a {type(probe).__name__} of {d} features for "
                    f"covariance={learner.covariance!r}, got {type(summary).__name__}"
                )
            if summary.dtype != probe.dtype:
                raise ValueError(
                    f"the {name} summary stores {summary.dtype}, but dtype={learner.dtype!r}"
                )
            for setting in ("sketch_size", "centering", "shrink_index"):
                if getattr(summary, setting, None) != getattr(probe, setting, None):
                    raise ValueError(f"the {name} summary's {setting} differs from this learner's")
        w = solve_from_statistics(neg, pos, float(learner.lam)) if coef is None else coef
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (d,) or not np.all(np.isfinite(w)):
            raise ValueError(f"coef must be {d} finite numbers, got shape {w.shape}")
        with learner._transaction():
            learner._reset(classes, d)
            learner.n_features_in_ = d
            if hasattr(learner, "feature_names_in_"):
                del learner.feature_names_in_
            learner.stats_ = [neg, pos]
            learner.n_samples_seen_ = t = int(neg.count + pos.count)
            if learner.half_life is not None:
                # the summaries' weights as they hold them now, as if after the
                # example before the next (stored weights 2^(t/h - E) and 2^((t-1)/h - E))
                h = float(learner.half_life)
                exponent = math.floor(t / h)
                learner.forget_[:] = (t, exponent)
                for s in learner.stats_:
                    if s.count:
                        s.scale(2.0 ** ((t - 1) / h - exponent))
            self.set_weights(learner, w)
        return learner


#: ``plan_variant`` of a chunk of dense rows of one class with "full": its scatter
#: is written whole (the held-back rows fill) or not at all (:mod:`._full`).
FILLED, UNTOUCHED = 1, 2


@jit
def _weights_at(at, keep, members):
    """``w_`` and the intercept 0 into ``out`` (the arrays of the block at ``at``,
    :func:`aucstream._fastpath.block_call`): 1 when written, 0 when the lengths do not
    fit; with a scorer's block at ``keep`` (0: none), fused with its keeping of the
    weights (:func:`aucstream._dict_scoring.weights_begin`: -2, -1 or the number
    kept). :meth:`ExplicitEngine.bound_weights`."""
    if keep != 0 and not weights_begin(keep, members):
        return -2
    a, s = ints_at(at, BLOCK_WIDTH), BLOCK_START
    w, out = floats_at(a[s], a[s + 1]), floats_at(a[s + 2], a[s + 3])
    written = out.shape[0] == w.shape[0] + 1
    if written:
        out[:-1] = w
        out[-1] = 0.0
    if keep != 0:
        return weights_end(keep, members, written)
    return 1 if written else 0


@jit
def _weights_then_score(at, keep, members, proba, where):
    """:func:`_weights_at` with a scorer's block at ``keep``, then, the weights kept,
    that scorer's :func:`aucstream._dict_scoring.score_dict` of the dict at address
    ``where``: one compiled call for ``predict_proba_one`` after a learning call
    (``OneScore.refill_score``). :data:`~aucstream._dict_scoring.STALE` when the
    weights were not kept."""
    if _weights_at(at, keep, members) < 0:
        return STALE
    return score_dict(keep, proba, where)


class ExplicitEngine(Engine):
    """The kinds whose summaries hold the statistics explicitly ("full", "sparse"):
    the kernel :func:`~aucstream.opauc._kernels._opauc_chunk` adds each example to its
    class's summary and steps with the opposite one's :math:`\\hat S w`."""

    scales_columns = True

    @staticmethod
    def classes(learner) -> tuple:
        """The two summaries' kernel arrays (negative, positive)."""
        return tuple(s.arrays() for s in learner.stats_)

    def read_only_state(self, learner, y_pm: np.ndarray, chunk: Chunk | None = None) -> tuple:
        """The summary of the class no example of the chunk belongs to, which the
        kernel only reads, and the random generator, which these kinds do not use.
        With "full" and a ``chunk`` of dense rows that can not fill its class's
        held-back rows, also that class's scatter, which the chunk does not touch
        (:meth:`plan_variant`); see ``BaseStreamingAUC._read_only_state``. When the
        chunk may rescale the forgetting weights (:meth:`rescale_due`), which writes
        both summaries, the generator only."""
        if self.rescale_due(learner, y_pm.shape[0]):
            return (learner._rng,)
        c = learner._chunk_class(y_pm)
        if c is None:
            return ()
        if self.layout_variant(learner, chunk) == UNTOUCHED:
            return (learner.stats_[1 - c], learner._rng, learner.stats_[c].scatter_)
        return (learner.stats_[1 - c], learner._rng)

    def layout_variant(self, learner, chunk: Chunk | None) -> int:
        """What the declarations depend on besides forgetting (:meth:`plan_variant`):
        nothing here (0)."""
        return 0

    def plan_variant(self, learner, chunk: Chunk | None):
        """``BaseStreamingAUC._plan_variant``: :meth:`layout_variant`, and with
        forgetting whether the chunk may rescale (:meth:`rescale_due`)."""
        variant = self.layout_variant(learner, chunk)
        if learner.half_life is None or chunk is None:
            return variant
        return (variant, self.rescale_due(learner, chunk.n_samples))

    def bound_weights(self, learner, out: np.ndarray):
        """``StateSpec.weights``: ``w_`` (the weights themselves for these kinds:
        ``OPAUC._coef``) and the intercept 0 copied into ``out`` by one compiled call
        that also keeps a scorer's weights (``keeps``; ``scores``: and scores a dict
        row, :func:`_weights_then_score`), so that scoring a dict row
        after a learning call reads them again without ``_coef()`` and an unboxed
        array (``SmallCalls._bind_coef``; ``out`` of another length than ``w_``'s
        plus one is refused by the compiled call, nothing written); None when ``w_``
        is not a C-contiguous float64 vector."""
        w = learner.__dict__.get("w_")
        if not (
            type(w) is np.ndarray and w.dtype == np.float64 and w.ndim == 1 and w.flags.c_contiguous
        ):
            return None
        fill = block_call(_weights_at, w, out, late=(0, 0))

        def fill_weights(learner, keep: int = 0, members: int = 0):
            done = fill(keep, members)
            return done if keep else done > 0

        fill_weights.keeps = True  # type: ignore[attr-defined]
        # (the weights kept and a dict row scored by one compiled call)
        late = (0, 0, True, 0)
        fill_weights.scores = block_call(_weights_then_score, w, out, late=late)  # type: ignore[attr-defined]
        return fill_weights, ("w_",)

    def stepper(self, learner, kernel, n: int):
        """``kernel(start)`` (learning rows ``start:`` of n, returning where it stopped)
        run on until it is done or stops for something other than a forgetting
        rescale, which it makes (:meth:`rescale`)."""

        def step(start: int) -> int:
            r = kernel(start)
            while r < n and self.rescale(learner):
                r = kernel(r)
            return r

        return step
