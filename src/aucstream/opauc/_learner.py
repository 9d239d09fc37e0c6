"""The OPAUC estimator: parameters, the documented interface, and delegation to its engine.

The class holds the parameters and the state (attributes ending in ``_``); every
method that depends on the covariance kind forwards to the kind's engine
(:func:`engine_for`), a stateless strategy object of :mod:`._full`, :mod:`._sparse`,
:mod:`._lowrank` or :mod:`._fd` (the package docstring says why and how).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._base import BaseStreamingAUC
from .._params import FORGETTING, StrOptions, non_negative, positive, positive_int
from .._runtime import DROP, StateSpec
from .._typing import RandomState
from ..covariance import COVARIANCE_KINDS, SUMMARY_DTYPES, CovarianceSummary
from ._engine import Engine
from ._fd import FrequentDirectionsEngine
from ._full import FullEngine
from ._lowrank import _FORMED, LowRankEngine
from ._sparse import SparseEngine

#: One engine per covariance kind (stateless: shared by every learner of the kind).
_ENGINES: dict[str, Engine] = {
    "full": FullEngine(),
    "sparse": SparseEngine(),
    "randomized": LowRankEngine(),
    "hash": LowRankEngine(),
    "fd": FrequentDirectionsEngine(),
}
assert set(_ENGINES) == set(COVARIANCE_KINDS)

#: The answers of a kind not (yet) validated: no declarations, the base defaults.
_UNKNOWN = Engine()


def _forward(name: str):
    """The learner's method ``_name``: its engine's method ``name``, applied to it (the
    engines' bound methods looked up by kind in one dict: these run on every call)."""
    by_kind = {kind: getattr(engine, name, None) for kind, engine in _ENGINES.items()}
    unknown = getattr(_UNKNOWN, name, None)

    def method(self, *args, **kwargs):
        kind = self.covariance
        step = by_kind.get(kind, unknown) if isinstance(kind, str) else unknown
        if step is None:  # a step of some kinds only (e.g. the low-rank kinds' _rebase)
            raise AttributeError(f"OPAUC(covariance={kind!r}) has no {method.__name__}")
        return step(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = f"_{name}"
    method.__doc__ = f"The engine's ``{name}`` (:class:`~aucstream.opauc._engine.Engine`)."
    return method


def _declared(name: str) -> property:
    """The learner's property ``_name``: its engine's class constant ``name``."""
    by_kind = {kind: getattr(engine, name) for kind, engine in _ENGINES.items()}
    unknown = getattr(_UNKNOWN, name)

    def get(self):
        kind = self.covariance
        return by_kind.get(kind, unknown) if isinstance(kind, str) else unknown

    return property(get, doc=f"The engine's ``{name}``.")


def _spec(engine: Engine) -> StateSpec:
    """The declaration of the state of the engine's kind: its answers
    (``row_logged_state`` and so on, :class:`~aucstream.opauc._engine.Engine`)."""
    return StateSpec(
        logged=engine.row_logged_state,
        written=engine.row_written_state,
        rows=engine.written_rows,
        bounded=engine.bounded_state,
        read_only=engine.read_only_state,
        variant=engine.plan_variant,
        nbytes=engine.state_nbytes,
        memory_hint=engine.low_memory_hint,
        weights=getattr(engine, "bound_weights", None),
    )


#: The declaration of each kind's state (and of a kind not validated yet).
_SPECS = {kind: _spec(engine) for kind, engine in _ENGINES.items()}
_UNKNOWN_SPEC = _spec(_UNKNOWN)


def _state_spec_of(learner) -> StateSpec:
    """The learner's ``_state_spec``: its covariance kind's."""
    kind = learner.covariance
    return _SPECS.get(kind, _UNKNOWN_SPEC) if isinstance(kind, str) else _UNKNOWN_SPEC


def engine_for(covariance) -> Engine:
    """The engine of a covariance kind (:data:`aucstream.covariance.COVARIANCE_KINDS`);
    a value that is not one of them (a parameter not validated yet) gets the base
    :class:`~aucstream.opauc._engine.Engine`, which declares nothing and learns
    nothing."""
    return _ENGINES.get(covariance, _UNKNOWN) if isinstance(covariance, str) else _UNKNOWN


class OPAUC(BaseStreamingAUC):
    r"""One-pass AUC optimization (OPAUC) with exact or sketched class covariances.

    See the package docstring (:mod:`aucstream.opauc`) for the update, the variants,
    their costs and merging. With ``covariance="full"`` (the default) the covariances
    are exact: O(d^2) memory and O(d^2) per example, for moderate d (the O(k^2)
    statistics never densify sparse input). The other kinds keep O(d tau) memory,
    independent of the number of examples, for 10^4-10^6 features.

    The sketched estimates :math:`\hat S` (a sketch of :math:`X X^\top`, divided by
    T, minus :math:`c c^\top`; G16 Eqs. 10-11, 16-17, 19) need not be positive
    semi-definite: frequent directions under-estimates :math:`X X^\top` while
    :math:`c c^\top` is exact, and hashing and sparsification err in both directions.
    Along such directions the step is not a contraction, so large step sizes can
    diverge where the exact OPAUC does not (on sector, OPAUC_fd and OPAUC_h diverge
    from eta = 2^-4 on; OPAUC_r with the G13 centering, which hardly removes the mean,
    does not): tune ``eta`` per variant, as the papers do, or use
    ``centering="exact"``, whose estimates are positive semi-definite (for "fd":
    :math:`0 \preceq \hat S \preceq S`), so the step contracts wherever the exact
    OPAUC's does.

    Example weights (``sample_weight``; "full" and "sparse" only) weigh each
    example's pairs in the loss: see the package docstring, "Example weights".

    Parameters
    ----------
    eta : float, default=2**-10
        Constant step size. The papers tune it over 2^[-12:10] (G13 §6.1; G16 §7.1)
        and find values in [2^-12, 2^-4] work best (G16 Figs. 5-6). The default is a
        library choice, not the papers': behind
        :class:`~aucstream.preprocessing.OnlineStandardScaler` (unit-variance
        features, so squared row norms near d) it converged on every shared dataset
        and generated stream we measured, where 2^-8 diverged on w8a and scored lower
        on 11 of 13 (docs/results/onepass.md and the issue notes). With the running
        column scale (``column_scale``) it is the step in the scaled columns.
    lam : float, default=2**-8
        L2 regularization lambda, tuned over 2^[-10:2] in the papers.
    covariance : {"full", "randomized", "fd", "sparse", "hash"}, default="full"
        The class summaries: exact (OPAUC), randomized low rank (OPAUC_r), frequent
        directions (OPAUC_fd), sparsification (OPAUC_s) or hashing (OPAUC_h).
    sketch_size : int, default=50
        tau of the sketches (the papers use 50); ignored by "full". "sparse" keeps
        d * tau non-zeros; "fd" needs tau >= 2.
    centering : {"g13", "g16", "exact"} or None, default=None
        How the sketches remove the class mean. None is each paper's form:
        "g13" for "randomized" (G13 Eqs. 10-11, :math:`Z Z^\top/T - \|\bar a\|^2
        c c^\top`), "g16" for "hash" and "fd" (G16 Eqs. 10-11, 19, :math:`Z Z^\top/T
        - c c^\top`). "exact" gives a positive semi-definite estimate: the linear
        sketches (randomized, hash) sketch :math:`(X - c 1^\top)` through the same
        draws, frequent directions sketches the centered examples by Welford's
        rank-one updates (:class:`aucstream.covariance.FrequentDirectionsCovariance`,
        at the same cost). "exact" is a library option
        (not in the papers) that keeps OPAUC_fd and OPAUC_h stable at the step sizes
        where their G16 form diverges; "g13" applies to the linear sketches only.
        Ignored by "full" and "sparse".
    shrink : {"half", "ceil_0.9"} or int, default="half"
        Frequent-directions shrink index: floor(tau/2) (G16 Alg. 2) or ceil(0.9 tau)
        (authors' code); used by "fd" only.
    prune_slack : float, default=0.1
        "sparse" prunes when its stored non-zeros exceed (1 + prune_slack) d tau,
        back to d tau; 0 is G16 Alg. 3 exactly (a library choice that amortizes the
        O(d tau) selection; see :class:`aucstream.covariance.SparsifiedCovariance`).
    shuffle : bool, default=False
        Whether ``fit`` visits the examples in a random order (one pass still).
    random_state : int, Generator or None, default=None
        Seed of the shuffle and of the sketches' random draws ("randomized": tau
        Gaussians per example; "hash": one uniform per example).
    dtype : {"auto", "float64", "float32"}, default="auto"
        Storage of the summaries' large arrays: the d x d scatters of "full", the
        d x tau sketches of "randomized", "hash" and "fd". "auto" is "float32" for
        the sketches from :data:`aucstream.covariance.AUTO_FLOAT32_FROM` (10^5)
        features on, where their rows come from memory, and "float64" below and for
        "full" and "sparse" (so small problems are unchanged). "float32" halves their
        memory (``_state_nbytes`` and the memory budget count it so) and the memory
        traffic of the per-example passes over them, which bound "full"'s O(d^2)
        step. Everything else stays float64: the weights (``w_`` and the implicit
        form of the low-rank kinds, the quantities the steps update by small
        amounts), the counts, weights and class sums, the tau x tau Gram matrices and
        every maintained product; every product is formed and accumulated in float64
        and rounded once where it is stored into a float32 array. So the float32
        model differs from the float64 one by that rounding of the summaries only
        (measured: AUC within 1e-3 on a9a and generated streams); fit and any split
        into partial_fit calls give the same float32 model bit for bit, and it saves,
        loads and resumes exactly. "sparse" refuses "float32" (its hash table
        would save a quarter, not half: ``InvalidParameterError``). Models of
        different storage do not merge.
    half_life : float or None, default=None
        Forgetting, in examples of the stream (both classes): the class counts, means
        and covariances become exponentially weighted, an example seen ``half_life``
        examples ago weighing half the latest (:math:`\gamma = 2^{-1/h}` per example,
        :func:`aucstream._params.decay_per_example`; the equations are in the package
        docstring, "Forgetting"). None (the default) forgets nothing: the papers'
        OPAUC bit for bit. Every kind (the sketches with ``centering`` "g16" or
        "exact"; None then means "g16"; frequent directions keeps its bound on the
        decayed scatter).
    column_scale : {"auto", "max_abs", "max_abs_1"} or None, default="auto"
        "max_abs" learns each column in its running scale (the running maximum of
        its |x|, after Ross, Mineiro and Langford 2013; package docstring, "Columns
        in their running scale"), so that the defaults converge on raw, unscaled
        columns; None steps on the rows as they come, the papers' OPAUC exactly
        (what the reproductions run). The low-rank kinds take the scale in the rows
        they sketch (package docstring), and have "max_abs_1": each column divided
        by the larger of 1 and its running maximum, so that rows inside [-1, 1]
        (the papers' scaled data, unit-norm sparse rows) are learnt as they come, bit
        for bit. "auto" (the default) is "max_abs" for "full" and "sparse" and
        "max_abs_1" for the low-rank kinds. A library option.

    Attributes
    ----------
    w_ : ndarray of shape (n_features,)
        Current weights (also ``coef_[0]``).
    column_scale_ : ndarray of shape (n_features,)
        With the running column scale only: the largest |x| of each column learnt
        so far (0 for a column never non-zero).
    stats_ : list of two CovarianceSummary
        Summaries of the negative and the positive class (:class:`FullCovariance`,
        :class:`RandomizedCovariance`, :class:`FrequentDirectionsCovariance`,
        :class:`SparsifiedCovariance` or :class:`HashedCovariance`).
    v_, p_, gamma_, scale_ : ndarray
        Low-rank kinds only: the implicit form of the weights, ``w = scale_[0] *
        (v_ + Z_0 p_[0] + Z_1 p_[1] + gamma_[0] s_0 + gamma_[1] s_1)``.
    zz_, zs_, ss_, zv_, sv_ : ndarray
        Low-rank kinds only: the maintained products :math:`Z_0^\top Z_1`,
        :math:`Z_a^\top s_b`, :math:`s_a^\top s_b`, :math:`Z_a^\top v`,
        :math:`s_a^\top v`.
    classes_ : ndarray of shape (2,)
        Labels; ``classes_[1]`` is the positive class.
    n_samples_seen_ : int
        Number of examples processed.
    n_features_in_ : int
        Number of features.

    Examples
    --------
    >>> from aucstream import OPAUC
    >>> from aucstream.datasets import load_diabetes
    >>> data = load_diabetes()
    >>> model = OPAUC(eta=2**-6, lam=2**-8).fit(data.X, data.y)
    >>> round(model.score(data.X, data.y), 2) > 0.8
    True
    >>> sketched = OPAUC(eta=2**-6, covariance="fd", sketch_size=8).fit(data.X, data.y)
    >>> round(sketched.score(data.X, data.y), 2) > 0.8
    True
    """

    param_grid = {
        "eta": [2.0**k for k in range(-12, 11)],
        "lam": [2.0**k for k in range(-10, 3)],
    }

    _parameter_constraints = {
        **FORGETTING,
        "eta": [positive()],
        "lam": [non_negative()],
        "covariance": [StrOptions(set(COVARIANCE_KINDS))],
        "sketch_size": [positive_int()],
        "centering": [StrOptions({"g13", "g16", "exact"}), None],
        "shrink": [StrOptions({"half", "ceil_0.9"}), positive_int()],
        "prune_slack": [non_negative()],
        "shuffle": ["boolean"],
        "random_state": ["random_state", np.random.Generator],
        "dtype": [StrOptions({*SUMMARY_DTYPES, "auto"})],
        "column_scale": [StrOptions({"auto", "max_abs", "max_abs_1"}), None],
    }

    #: State added after format 1 (the forgetting clock: zeros for older files; the
    #: running column scale: an older file learnt the rows as they came, and keeps
    #: doing so, :meth:`_upgrade_state`).
    _state_added_later = (*BaseStreamingAUC._state_added_later, "forget_", "column_scale_")
    #: A file saved before ``column_scale`` existed learnt the rows as they came: it
    #: keeps doing so (``column_scale=None``, which has no ``column_scale_``).
    _upgrades = {"column_scale_": {"column_scale": None, "column_scale_": DROP}}
    #: Examples between two re-basings of the implicit weights (low-rank kinds).
    _rebase_every = 1 << 17
    #: Every this many re-basings, the summaries' products are recomputed too.
    _refresh_every = 8

    def __init__(
        self,
        eta: float = 2**-10,
        lam: float = 2**-8,
        covariance: str = "full",
        sketch_size: int = 50,
        centering: str | None = None,
        shrink: str | int = "half",
        prune_slack: float = 0.1,
        shuffle: bool = False,
        random_state: RandomState = None,
        dtype: str = "auto",
        half_life: float | None = None,
        column_scale: str | None = "auto",
    ):
        self.eta = eta
        self.lam = lam
        self.covariance = covariance
        self.sketch_size = sketch_size
        self.centering = centering
        self.shrink = shrink
        self.prune_slack = prune_slack
        self.shuffle = shuffle
        self.random_state = random_state
        self.dtype = dtype
        self.half_life = half_life
        self.column_scale = column_scale

    @property
    def _engine(self) -> Engine:
        """The engine of ``covariance`` (not state: looked up at each use)."""
        return engine_for(self.covariance)

    # ------------------------------------------- the base class's hooks, forwarded
    _tags = _declared("tags")
    _state_spec = property(_state_spec_of, doc="The engine's declaration of the state.")
    _check_params = _forward("check_params")
    _init_state = _forward("init_state")
    _check_state = _forward("check_state")
    _update = _forward("learn")  # (the low-rank kinds: in the running column scale)
    _bind_update = _forward("bind_update")
    _merge = _forward("merge")  # package docstring, "Merging"

    def _validate_weights(self, sample_weight, X):
        self._engine.check_sample_weight(self, sample_weight)
        return super()._validate_weights(sample_weight, X)

    def _coef(self) -> np.ndarray:
        return self.w_

    # ---------------------------------------------------------------- weights
    @property
    def w_(self) -> np.ndarray:
        """Current weights (also ``coef_[0]``); the low-rank kinds form them from their
        implicit form when read (a cache, never read by the kernels: package docstring)."""
        state = self.__dict__
        try:
            w = state["w_"]
        except KeyError:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute 'w_'") from None
        if state.get("v_") is not None:  # (only the implicit form needs forming)
            self._engine.form_weights(self)
            return state["w_"]  # (a read-only w_ is replaced when formed)
        return w

    @w_.setter
    def w_(self, value: np.ndarray) -> None:
        self.__dict__["w_"] = value
        _FORMED.discard(self)

    @w_.deleter
    def w_(self) -> None:
        self.__dict__.pop("w_", None)
        _FORMED.discard(self)

    # the engines' own steps, by the learner's names (for tools and tests)
    _rebase = _forward("rebase")
    _materialize = _forward("materialize")
    _implicit_sum = _forward("implicit_sum")
    _filled_scatters = _forward("filled_scatters")

    def from_statistics(
        self,
        neg: CovarianceSummary,
        pos: CovarianceSummary,
        *,
        classes: ArrayLike,
        coef: ArrayLike | None = None,
    ) -> OPAUC:
        r"""Make this learner the OPAUC fitted on the examples two class summaries hold.

        Its summaries become ``neg`` and ``pos`` (taken over, not copied) and its
        weights ``coef`` or, by default, the minimizer of its objective over those
        examples (:func:`~aucstream.covariance.solve_from_statistics` with this
        learner's ``lam``): e.g. from summaries of shards merged with ``merge``
        (:mod:`aucstream.dask` does this).
        The learner then scores, saves, merges and continues the stream with
        ``partial_fit`` like one that learnt the examples itself; its
        ``n_samples_seen_`` is the summaries' total count, its calibration starts
        empty, and its random draws (the linear sketches) come from ``random_state``.

        Parameters
        ----------
        neg, pos : CovarianceSummary
            Summaries of the negative and the positive class (the smaller and the
            larger label, as in ``classes_``), of this learner's kind and settings
            (``covariance``, ``sketch_size``, ``centering``, ``shrink``, ``dtype``).
        classes : array-like of shape (2,)
            The two labels (in any order; ``classes_`` is them sorted).
        coef : array-like of shape (n_features,), optional
            The weights; None solves for them (both summaries must be non-empty).

        Returns
        -------
        self
        """
        return self._engine.from_statistics(self, neg, pos, classes, coef)


def _always_calibrated(cls: type) -> None:
    """Give ``cls`` the base class's ``predict_proba`` and ``predict_proba_one`` as
    plain functions when every covariance kind (and a kind not validated yet) has a
    prequential kernel, as the base class does for a class whose tags are a class
    constant (``BaseStreamingAUC.__init_subclass__``): OPAUC's ``_tags`` is a
    property, so the base class keeps scikit-learn's ``available_if`` descriptors,
    whose check (the property, then the wrapper it makes) cost more than the rest of a
    ``predict_proba_one`` of a dict row; here the check would always pass."""
    engines = (*_ENGINES.values(), _UNKNOWN)
    if not all(engine.tags.kernel_prequential is True for engine in engines):
        return
    for name in ("predict_proba", "predict_proba_one"):
        descriptor: Any = BaseStreamingAUC.__dict__[name]
        plain = descriptor.fn
        if cls.__dict__.get(name) is descriptor:
            setattr(cls, name, plain)


_always_calibrated(OPAUC)
