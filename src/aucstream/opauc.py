r"""OPAUC: one-pass AUC optimization with the least-square pairwise loss.

Gao, Jin, Zhu and Zhou, *One-Pass AUC Optimization* (ICML 2013, "G13") and its journal
version (Gao, Wang, Jin, Zhu, Zhou, Artificial Intelligence 2016, "G16").

The objective is the regularized square pairwise loss (G13 §2; G16 §3)

.. math::

    \mathcal L(w) = \frac\lambda2\|w\|^2 + \frac{1}{2T_+T_-}
        \sum_{i\in+,\,j\in-} \big(1 - w^\top(x_i - x_j)\big)^2 .

At step t the per-step loss (G16 Eq. 5) sums the square loss of :math:`x_t` against
every earlier example of the opposite class :math:`\bar y = -y_t`, divided by that
class's count. Its gradient needs only the opposite class's mean :math:`c` and
covariance :math:`S` (G16 Eqs. 7-8; G13 Eqs. 4-5):

.. math::

    g_t = \lambda w - y_t e + e\,(e^\top w) + S w, \qquad e = x_t - c ,

and the update is :math:`w \leftarrow w - \eta g_t` (G16 Alg. 1). Before the step,
the example is added to its own class's summary; while the opposite class is still
empty only the statistics are updated. G13 writes the opposite class's statistics at
t - 1 and G16 at t; the example does not change them, so the two agree. The model is
the last iterate (G16 §5.4).

High-dimensional variants
-------------------------
``covariance`` chooses the class summaries (:mod:`aucstream.covariance`); the step
is the same with :math:`S` replaced by the summary's estimate :math:`\hat S`:

=============  ========================  =========================================
covariance     paper                     :math:`\hat S`, memory
=============  ========================  =========================================
"full"         OPAUC (G16 Alg. 1)        exact; O(d^2) memory: for moderate d only
"randomized"   OPAUC_r (G13 Eqs. 6-11)   :math:`Z Z^\top/T` - centering; O(d tau)
"fd"           OPAUC_fd (G16 Alg. 2)     frequent directions (Eqs. 10-11, 14-15)
"sparse"       OPAUC_s (G16 Alg. 3)      :math:`d\tau` largest entries (Eqs. 16-17)
"hash"         OPAUC_h (G16 §7.2)        CountSketch (reconstructed)
=============  ========================  =========================================

Costs per example with k non-zeros (CSR input is never densified):

- "full": O(k^2) to add the example, O(d^2) for :math:`S w`. Dense rows are added
  to the scatter 16 at a time (O(d) each until then, and :math:`S w` takes their part
  in O(d) each), so that a step reads one d x d triangle and writes one every 16
  examples of a class: the model of G16 Alg. 1 up to rounding
  (:class:`aucstream.covariance.FullCovariance`).
- "sparse": O(k^2) to add, O(d tau) for :math:`P w` (a scan of the hash table), O(d)
  for the step (c and :math:`P w` are dense), plus an O(d tau) prune whenever the
  stored non-zeros pass ``(1 + prune_slack) d tau``.
- "randomized", "hash", "fd": O(k tau + tau^2), independent of d, through an implicit
  form of the weights (below); "fd" adds a shrink at most once every tau - l + 1
  inserts of a class: an O(tau^3) eigendecomposition plus O(m tau^2) for the m rows
  of Z that ever received a non-zero (m <= d; O(d tau) amortized), a pass deferred
  (rows brought up to date when read, O(tau^2) each; every 64th shrink passes over
  all: :mod:`aucstream.covariance._fd`). With
  ``centering="exact"`` the "fd" columns are dense, but their mean parts are kept
  implicitly (:func:`aucstream.covariance.fd_insert`), so the cost is the same. The
  weights are formed (O(d tau)) only when they are read (``w_``, ``coef_``,
  ``decision_function``), not by the calls that learn (see ``OPAUC.w_``).

Implicit weights of the low-rank variants
-----------------------------------------
For the sketches :math:`Z_\pm` (d x tau) and class sums :math:`s_\pm`, the weights
are kept as

.. math::

    w = \sigma\,\big(v + Z_- p_- + Z_+ p_+ + \gamma_- s_- + \gamma_+ s_+\big)

with a dense v, coefficient vectors :math:`p_\pm \in \mathbb R^\tau`, scalars
:math:`\gamma_\pm` and a scale :math:`\sigma` (the bundle :data:`Implicit`). With
:math:`\hat S w = Z\phi - s\psi` (the opposite class;
:func:`aucstream.covariance.center_terms`), the step

.. math::

    w \leftarrow (1 - \eta\lambda) w - \eta Z\phi
        + \eta(\psi + \alpha/T) s - \eta\alpha x, \qquad
        \alpha = e^\top w - y_t ,

becomes :math:`\sigma \leftarrow (1-\eta\lambda)\sigma`, a change of :math:`p` and
:math:`\gamma` of the opposite class, and a k-sparse change of v. Adding x to the
own class (:math:`Z \mathrel{+}= z a^\top`, :math:`s \mathrel{+}= x`) would change
:math:`Z p + \gamma s`, which is compensated in v and :math:`\gamma` so that w does
not move. The products this needs, :math:`Z^\top w`, :math:`s^\top w` and
:math:`x^\top w`, come from maintained Gram quantities (:math:`Z_a^\top Z_b`,
:math:`Z_a^\top s_b`, :math:`s_a^\top s_b`, :math:`Z_a^\top v`, :math:`s_a^\top v`),
each updated in O(k tau + tau^2) per example. In exact arithmetic this is the same
recursion as the direct update; in floating point it differs by rounding. To bound
cancellation between v and the other terms, every ``OPAUC._rebase_every`` examples
(2^17) the representation is folded back into v, with the products that involve v
(:math:`Z_a^\top v`, :math:`s_a^\top v`) recomputed exactly (O(d tau)); every
``OPAUC._refresh_every``-th re-basing (8th: every 2^20 examples) also recomputes the
products of the summaries (the Gram matrices, :math:`Z_0^\top Z_1`, :math:`Z_a^\top
s_b`, :math:`s_a^\top s_b`; O(d tau^2)), whose incremental updates only accumulate
rounding (measured on 10^5 examples of the d = 10^6 benchmark stream with no
re-basing at all: every maintained product within 1e-14 of its recomputation,
:math:`\|v\| \le 1.6 \|w/\sigma\|`). Frequent directions re-bases fully each
time (its refresh settles the sketch). A frequent-directions shrink folds the shrunk
class's terms into v too (its old Z is gone; row by row when read, as the shrink
itself: :meth:`aucstream.covariance.FrequentDirectionsCovariance.shrink_deferred`).
:math:`\sigma` is folded into v when it leaves [``SCALE_MIN``, ``SCALE_MAX``] of
:mod:`aucstream._kernels` or becomes 0 (:math:`\eta\lambda = 1`). All of this happens
at positions fixed by the stream, so chunking never changes the model.

Dimension-reduction variants (OPAUC^f, OPAUC^rp, OPAUC^pca) are scikit-learn
pipelines in front of OPAUC: see :mod:`aucstream.reduction`. Random Fourier
features for dense data (G16 §7.2) are in :mod:`aucstream.random_features`.
"""

from __future__ import annotations

import weakref

import numpy as np

from ._base import BaseStreamingAUC
from ._chunks import Chunk
from ._kernels import (
    SCALE_MAX,
    SCALE_MIN,
    bound_call,
    mean_by_count,
    rows_of,
)
from ._opauc_kernels import (
    _DONE,
    _SHRINK,
    PREFETCH_BYTES,
    Implicit,
    LowRankSettings,
    Scratch,
    _opauc_chunk,
    _opauc_lowrank_chunk,
)
from ._params import InvalidParameterError, StrOptions, non_negative, positive, positive_int
from .covariance import (
    COVARIANCE_KINDS,
    DTYPE_KINDS,
    SUMMARY_DTYPES,
    fd_shrink_index,
    make_covariance,
    run_reserving,
    solve_from_statistics,
)
from .covariance._lowrank import sketch_cross, sketch_tmatvec
from .covariance._nbytes import summary_nbytes

__all__ = ["OPAUC", "opauc_gradient", "solve_from_statistics"]


def opauc_gradient(w: np.ndarray, x: np.ndarray, y: float, opposite, lam: float) -> np.ndarray:
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
    """
    e = np.asarray(x, dtype=np.float64) - opposite.mean
    return lam * w - y * e + e * (e @ w) + opposite.matvec(w)


#: ``OPAUC._plan_variant`` of a chunk of dense rows of one class with "full": its
#: scatter is written whole (the held-back rows fill) or not at all.
_FILLED, _UNTOUCHED = 1, 2

#: The kinds whose kernel keeps the weights in implicit form.
_LOWRANK = ("randomized", "hash", "fd")

#: Low-rank learners whose ``w_`` holds the weights their implicit form gives now
#: (``OPAUC.w_``). Outside the state on purpose: a learner that is not listed (after a
#: call that learnt, a rolled-back call, unpickling or loading) forms them again when
#: they are read, which is always right.
_FORMED: weakref.WeakSet = weakref.WeakSet()


class OPAUC(BaseStreamingAUC):
    r"""One-pass AUC optimization (OPAUC) with exact or sketched class covariances.

    See the module docstring for the update, the variants and their costs. With
    ``covariance="full"`` (the default) the covariances are exact: O(d^2) memory and
    O(d^2) per example, for moderate d (the O(k^2) statistics never densify sparse
    input). The other kinds keep O(d tau) memory, independent of the number of
    examples, for 10^4-10^6 features.

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

    Example weights (``sample_weight``; "full" and "sparse" only). With weights
    :math:`\omega_i \ge 0` the objective is the weighted square pairwise loss

    .. math::

        \frac\lambda2\|w\|^2 + \frac{1}{2W_+W_-} \sum_{i\in+,\,j\in-}
            \omega_i\omega_j \big(1 - w^\top(x_i - x_j)\big)^2,
        \qquad W_\pm = \sum_{i\in\pm} \omega_i ,

    and its per-step form weighs example t's loss against the opposite class by
    :math:`\omega_t`. The class summaries hold the statistics of the weighted
    sample (:math:`W`, :math:`s = \sum \omega_i x_i`, :math:`P = \sum \omega_i
    x_i x_i^\top`, so :math:`c = s/W` and :math:`S = P/W - c c^\top`; "sparse"
    prunes the weighted P) and the step is scaled by the example's weight:
    :math:`w \leftarrow w - \eta\,\omega_t g_t`. A weight of 0 leaves the model
    exactly as it was (the example is not learnt at all); weights all equal to 1 give
    the unweighted arithmetic bit for bit. An integer weight m gives the class
    statistics of the example repeated m times, but one step of size
    :math:`m\eta` instead of m steps. The low-rank kinds refuse weights: a linear
    sketch of weighted rows is the sketch of :math:`\sqrt{\omega_i}\,x_i` (and
    frequent directions would insert :math:`\sqrt{\omega_i}\,x_i`, with its
    :math:`\|X\|_F^2/\ell` error bound then in the weighted Frobenius norm), but
    the implicit form of the weights (module docstring) assumes unit additions to
    the class sums and counts, and is not extended to them here.

    Parameters
    ----------
    eta : float, default=2**-10
        Constant step size. The papers tune it over 2^[-12:10] (G13 §6.1; G16 §7.1)
        and find values in [2^-12, 2^-4] work best (G16 Figs. 5-6). The default is a
        library choice, not the papers': behind
        :class:`~aucstream.preprocessing.OnlineStandardScaler` (unit-variance
        features, so squared row norms near d) it converged on every shared dataset
        and generated stream we measured, where 2^-8 diverged on w8a and scored lower
        on 11 of 13 (docs/results/onepass.md and the issue notes).
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
    dtype : {"float64", "float32"}, default="float64"
        Storage of the summaries' large arrays: the d x d scatters of "full", the
        d x tau sketches of "randomized", "hash" and "fd". "float32" halves their
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
        loads and resumes exactly. "sparse" takes "float64" only (its hash table
        would save a quarter, not half: ``InvalidParameterError``). Models of
        different dtypes do not merge.

    Attributes
    ----------
    w_ : ndarray of shape (n_features,)
        Current weights (also ``coef_[0]``).
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
        "eta": [positive()],
        "lam": [non_negative()],
        "covariance": [StrOptions(set(COVARIANCE_KINDS))],
        "sketch_size": [positive_int()],
        "centering": [StrOptions({"g13", "g16", "exact"}), None],
        "shrink": [StrOptions({"half", "ceil_0.9"}), positive_int()],
        "prune_slack": [non_negative()],
        "shuffle": ["boolean"],
        "random_state": ["random_state", np.random.Generator],
        "dtype": [StrOptions(set(SUMMARY_DTYPES))],
    }

    #: Examples between two re-basings of the implicit weights (low-rank kinds).
    _rebase_every = 1 << 17
    #: Every this many re-basings, the summaries' products are recomputed too.
    _refresh_every = 8
    _kernel_prequential = True
    _kernel_calibrates = True

    @property
    def _dense_kernels(self) -> bool:
        """Dense rows are read in place by the "full" kernel (the others take CSR)."""
        return self.covariance == "full"

    @property
    def _supports_sample_weight(self) -> bool:
        """Example weights for the exact summaries ("full") and "sparse" only."""
        return self.covariance not in _LOWRANK

    def _validate_weights(self, sample_weight, X):
        if sample_weight is not None and self.covariance in _LOWRANK:
            raise ValueError(
                f"OPAUC does not support sample_weight with covariance={self.covariance!r}: "
                "the implicit weights of the low-rank sketches take unit examples only; use "
                "covariance='full' or 'sparse', or repeat the examples"
            )
        return super()._validate_weights(sample_weight, X)

    def __init__(
        self,
        eta: float = 2**-10,
        lam: float = 2**-8,
        covariance: str = "full",
        sketch_size: int = 50,
        centering: str | None = None,
        shrink="half",
        prune_slack: float = 0.1,
        shuffle: bool = False,
        random_state=None,
        dtype: str = "float64",
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

    def _check_params(self) -> None:
        """A "float32" dtype with a kind that takes it (not "sparse"); frequent
        directions: tau >= 2, a shrink index within 1..tau and no "g13" centering (the
        G13 form belongs to the linear sketches)."""
        name = type(self).__name__
        if self.dtype != "float64" and self.covariance not in DTYPE_KINDS:
            raise InvalidParameterError(
                f"The 'dtype' parameter of {name} must be 'float64' with "
                f"covariance={self.covariance!r} (float32 storage is available for "
                f"covariance in {DTYPE_KINDS}). Got {self.dtype!r} instead."
            )
        if self.covariance != "fd":
            return
        if self.sketch_size < 2:
            raise InvalidParameterError(
                f"The 'sketch_size' parameter of {name} must be >= 2 with covariance='fd' "
                f"(frequent directions shrinks at index 1..sketch_size). "
                f"Got {self.sketch_size!r} instead."
            )
        if self.centering == "g13":
            raise InvalidParameterError(
                f"The 'centering' parameter of {name} must be 'g16', 'exact' or None with "
                "covariance='fd' ('g13' applies to the linear sketches 'randomized' and "
                "'hash'). Got 'g13' instead."
            )
        try:
            fd_shrink_index(self.shrink, self.sketch_size)
        except ValueError as error:
            raise InvalidParameterError(
                f"The 'shrink' parameter of {name} must be an index within "
                f"1..sketch_size={self.sketch_size} with covariance='fd': {error}. "
                f"Got {self.shrink!r} instead."
            ) from None

    # ------------------------------------------------------------------ state
    def _summary_options(self) -> dict:
        """The settings of :func:`make_covariance` that the parameters give."""
        return {
            "centering": self.centering,
            "shrink": self.shrink,
            "prune_slack": self.prune_slack,
            "dtype": self.dtype,
        }

    def _init_state(self, n_features: int) -> None:
        self.w_ = np.zeros(n_features)
        options = self._summary_options()
        self.stats_ = [
            make_covariance(self.covariance, n_features, self.sketch_size, **options)
            for _ in range(2)
        ]
        if self.covariance in _LOWRANK:
            tau = self.stats_[0].sketch_size
            self.v_ = np.zeros(n_features)
            self.p_ = np.zeros((2, tau))
            self.gamma_ = np.zeros(2)
            self.scale_ = np.ones(1)
            self.zz_ = np.zeros((tau, tau))
            self.zs_ = np.zeros((2, 2, tau))
            self.ss_ = np.zeros((2, 2))
            self.zv_ = np.zeros((2, tau))
            self.sv_ = np.zeros(2)

    def _state_nbytes(self, n_features: int) -> int:
        """The two summaries (:func:`aucstream.covariance._nbytes.summary_nbytes`:
        O(d^2) for "full", O(d tau) otherwise), w and the kernel's work vector, and
        the implicit weights of the low-rank kinds."""
        d = int(n_features)
        itemsize = np.dtype(self.dtype).itemsize
        summaries = summary_nbytes(self.covariance, d, self.sketch_size, self.prune_slack, itemsize)
        implicit = 8 * d if self.covariance in _LOWRANK else 0
        return 2 * summaries + 16 * d + implicit

    @property
    def _low_memory_hint(self) -> str:
        """What to do when the state does not fit the memory budget."""
        if self.covariance == "full":
            return (
                'covariance="full" keeps two exact d x d scatter matrices (O(d^2) memory); '
                'for many features use a sketch in O(d * sketch_size): covariance="fd", '
                '"randomized", "hash" or "sparse"'
                + ('; dtype="float32" halves them' if self.dtype == "float64" else "")
            )
        return f"Use a smaller sketch_size (covariance={self.covariance!r} keeps O(d tau))."

    def _check_state(self) -> None:
        """Consistency of a loaded state across its members (each summary checks its
        own, :mod:`aucstream.covariance._checks`): the summaries are of the kind and
        settings the parameters give, over ``n_features_in_`` features; their counts
        add up to at most the examples seen; the implicit scale of the low-rank kinds
        is inside [``SCALE_MIN``, ``SCALE_MAX``] in absolute value."""
        d = self.n_features_in_
        fresh = make_covariance(self.covariance, 1, self.sketch_size, **self._summary_options())
        derived = {"n_features", "full", "budget", "trigger"}
        total = 0
        for c, s in enumerate(self.stats_):
            if type(s) is not type(fresh) or s.n_features != d:
                raise ValueError(
                    f"stats_[{c}] is a {type(s).__name__} of {s.n_features} features, not a "
                    f"{type(fresh).__name__} of {d} (covariance={self.covariance!r})"
                )
            for key, value in vars(fresh).items():
                if key not in derived and not isinstance(value, np.ndarray):
                    if vars(s).get(key) != value:
                        raise ValueError(
                            f"stats_[{c}].{key} = {vars(s).get(key)!r}, but the parameters "
                            f"give {value!r}"
                        )
            total += s.count
        if total > self.n_samples_seen_:
            raise ValueError(
                f"stats_ count {total} examples, more than the {self.n_samples_seen_} seen"
            )
        if self.covariance in _LOWRANK and not SCALE_MIN <= abs(self.scale_[0]) <= SCALE_MAX:
            raise ValueError(
                f"scale_ = {float(self.scale_[0])!r} is outside [SCALE_MIN, SCALE_MAX] in "
                "absolute value"
            )

    # ----------------------------------------------------------------- update
    def _classes(self) -> tuple:
        """The two summaries' kernel arrays (negative, positive)."""
        return tuple(s.arrays() for s in self.stats_)

    def _update(self, chunk: Chunk) -> None:
        if self.covariance in _LOWRANK:
            self._update_lowrank(chunk)
        elif self.covariance == "full":
            self._bind_update(chunk)(self)
        else:  # "sparse": a summary that makes room replaces its arrays
            rows = rows_of(chunk)
            pre, weights = chunk.pre_scores, chunk.sample_weight
            eta, lam, calibration = float(self.eta), float(self.lam), self.calibration_
            run_reserving(
                lambda r: _opauc_chunk(
                    self.w_, self._classes(), rows, pre, weights, r, eta, lam, calibration
                ),
                self.stats_,
                chunk,
            )

    def _bind_update(self, chunk: Chunk, reuse: bool = False):
        """The "full" kernel's call with its arguments made once (the exact summaries
        always have room: one kernel call learns the chunk); the other kinds bind
        nothing (see :meth:`BaseStreamingAUC._bind_update`)."""
        if self.covariance != "full":
            return None
        run = bound_call(
            _opauc_chunk,
            self.w_,
            self._classes(),
            rows_of(chunk),
            chunk.pre_scores,
            chunk.sample_weight,
            0,
            float(self.eta),
            float(self.lam),
            self.calibration_,
            reuse=reuse,
        )
        n = chunk.n_samples

        def update(learner: OPAUC) -> None:
            if run() != n:
                raise RuntimeError("OPAUC's full covariance ran out of room")

        return update

    def _implicit(self) -> Implicit:
        return Implicit(
            self.v_,
            self.p_,
            self.gamma_,
            self.scale_,
            self.zz_,
            self.zs_,
            self.ss_,
            self.zv_,
            self.sv_,
        )

    def _update_lowrank(self, chunk: Chunk) -> None:
        _FORMED.discard(self)  # w_ is formed again when read (OPAUC.w_)
        neg = self.stats_[0]
        settings = LowRankSettings(
            float(self.eta),
            float(self.lam),
            neg.center_code,
            neg.fills_columns,
            int(self._rebase_every),
            sum(st.sketch_.nbytes for st in self.stats_) > PREFETCH_BYTES,
        )
        rows = (chunk.indptr, chunk.indices, chunk.data, chunk.y)
        A = neg.draws(self._rng, chunk.n_samples)
        tau = neg.sketch_size
        shapes = ((2, tau), 2, tau, tau, tau, tau)
        scratch = Scratch(*(np.zeros(shape) for shape in shapes))
        r, resume, n = 0, False, chunk.n_samples
        fd = neg.fills_columns
        if fd:
            labels = np.asarray(chunk.y) > 0
            members = (np.flatnonzero(~labels), np.flatnonzero(labels))
        while True:
            sub, pre = rows, chunk.pre_scores
            if fd:  # the rows up to the next possible shrink, brought up to date
                end = self._fd_window(members, r + 1 if resume else r, n)
                features = chunk.indices[chunk.indptr[r] : chunk.indptr[end + 1]]
                for s in self.stats_:
                    s.catch_up(features, self.v_)
                sub = (chunk.indptr[: end + 2], *rows[1:])
                pre = pre[: end + 1] if pre.shape[0] == n else pre
            r, event = _opauc_lowrank_chunk(
                self._classes(),
                self._implicit(),
                *sub,
                pre,
                A,
                r,
                resume,
                settings,
                scratch,
                self.calibration_,
            )
            if event == _DONE:
                if r >= n:
                    break
                resume = False  # the end of a window (fd)
            elif event == _SHRINK:
                self._fd_shrink(int(chunk.y[r] > 0))
                resume = True
            else:
                self._rebase(full=self._full_rebase_within(0))
                resume = False

    def _fd_window(self, members: tuple, first: int, n: int) -> int:
        """The last row before or at which no frequent-directions sketch can shrink:
        class c's sketch fills after tau - nfill more inserts, one per example of class
        c at most (from row ``first``)."""
        end = n - 1
        for c, s in enumerate(self.stats_):
            need = s.sketch_size - int(s.nfill_[0])
            k = int(np.searchsorted(members[c], first)) + need - 1
            if k < len(members[c]):
                end = min(end, int(members[c][k]))
        return end

    def _fd_shrink(self, c: int) -> None:
        """Shrink class c's frequent-directions sketch (Alg. 2) and keep w fixed."""
        s, o = self.stats_[c], 1 - c
        pc, gc = self.p_[c].copy(), float(self.gamma_[c])
        # fold Z_c p_c + gamma_c s_c into v (the products need the old Z_c)
        z_oc = self.zz_.T if c == 0 else self.zz_  # Z_o^T Z_c
        self.zv_[c] += s.gram_ @ pc + gc * self.zs_[c, c]
        self.zv_[o] += z_oc @ pc + gc * self.zs_[o, c]
        for b in (0, 1):
            self.sv_[b] += self.zs_[c, b] @ pc + gc * self.ss_[b, c]
        self.p_[c] = 0.0
        self.gamma_[c] = 0.0
        # v += gamma_c s_c + Z_c p_c and Z_c <- Z_c M, deferred: each row of v and Z_c
        # is brought up to date when an example reads it (_update_lowrank), or by a
        # re-basing, or when the sketch's deferred shrinks reach its capacity
        M = s.shrink_deferred(pc, gc, self.v_)
        m = M.shape[1]
        if c == 0:
            zz = M.T @ self.zz_
            self.zz_[:] = 0.0
            self.zz_[:m] = zz
        else:
            zz = self.zz_ @ M
            self.zz_[:] = 0.0
            self.zz_[:, :m] = zz
        for b in (0, 1):
            new = M.T @ self.zs_[c, b]
            self.zs_[c, b] = 0.0
            self.zs_[c, b, :m] = new
        new = M.T @ self.zv_[c]
        self.zv_[c] = 0.0
        self.zv_[c, :m] = new

    def _implicit_sum(self) -> np.ndarray:
        """``v + Z_0 p_0 + Z_1 p_1 + gamma_0 s_0 + gamma_1 s_1`` (O(d tau)), v with the
        parts frequent directions' deferred shrinks still owe it."""
        total = self.v_.copy()
        if self.covariance == "fd":
            for s in self.stats_:
                s.add_deferred_weights(total)
        for c, s in enumerate(self.stats_):
            total += s.sketch_dot(self.p_[c])
            total += self.gamma_[c] * s.sum_
        return total

    def _materialize(self) -> None:
        """Form the weights from the implicit form into ``w_`` (O(d tau))."""
        self.__dict__["w_"][:] = self.scale_[0] * self._implicit_sum()
        _FORMED.add(self)

    @property
    def w_(self) -> np.ndarray:
        """Current weights (also ``coef_[0]``).

        The low-rank kinds learn the implicit form (module docstring) and form ``w``
        from it (O(d tau)) into the stored array only when it is read after learning,
        so a call that learns a chunk costs O(chunk) and not O(d tau) more. The stored
        array may therefore lag behind the implicit form (e.g. in a saved file); it is
        a cache that reading refreshes, never read by the kernels.
        """
        state = self.__dict__
        try:
            w = state["w_"]
        except KeyError:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute 'w_'") from None
        if state.get("v_") is not None and self not in _FORMED and self.covariance in _LOWRANK:
            self._materialize()
        return w

    @w_.setter
    def w_(self, value: np.ndarray) -> None:
        self.__dict__["w_"] = value
        _FORMED.discard(self)

    @w_.deleter
    def w_(self) -> None:
        self.__dict__.pop("w_", None)
        _FORMED.discard(self)

    def _full_rebase_within(self, n: int) -> bool:
        """Whether a full re-basing (:meth:`_rebase` with ``full``) falls on one of the
        next ``n`` examples, the positions fixed by ``_rebase_every`` and
        ``_refresh_every`` (frequent directions: every re-basing is full). ``n = 0``:
        whether the re-basing due after the last example learnt is a full one."""
        every = int(self._rebase_every)
        if every <= 0:
            return False
        if not self.stats_[0].fills_columns:
            every *= max(int(self._refresh_every), 1)
        seen = sum(int(s.count) for s in self.stats_)
        if n == 0:
            return seen % every == 0
        return (seen + n) // every > seen // every

    def _rebase(self, full: bool = True) -> None:
        """Fold the implicit weights into v and recompute the products with v exactly
        (O(d tau)); with ``full``, also every product of the summaries (O(d tau^2)).

        The products run on one BLAS thread: a d x tau Gram matrix took 8-26 s instead
        of 0.5-0.8 s at d = 10^6 when the BLAS threads competed for busy cores, and one
        thread makes the products (so the re-based model) the same whatever the BLAS
        thread count (the matrix-vector products depend on it).
        """
        from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

        if self.covariance == "fd":
            for s in self.stats_:
                s.catch_up_all(self.v_)  # every row of v and the sketches up to date
        with threadpool_limits(limits=1, user_api="blas"):
            self._rebase_products(full or self.stats_[0].fills_columns)

    def _rebase_products(self, full: bool) -> None:
        """:meth:`_rebase`'s work."""
        _FORMED.discard(self)
        self.v_[:] = self.scale_[0] * self._implicit_sum()
        self.scale_[0] = 1.0
        self.p_[:] = 0.0
        self.gamma_[:] = 0.0
        if full:
            for s in self.stats_:
                s.refresh()  # exact Gram matrices (frequent directions: settled first)
        Z = [s.sketch_ for s in self.stats_]
        S = [s.sum_ for s in self.stats_]
        if full:
            self.zz_[:] = sketch_cross(Z[0], Z[1])  # float64 sums for float32 sketches
        for a in (0, 1):
            self.zv_[a] = sketch_tmatvec(Z[a], self.v_)
            self.sv_[a] = S[a] @ self.v_
            if full:
                for b in (0, 1):
                    self.zs_[a, b] = sketch_tmatvec(Z[a], S[b])
                    self.ss_[a, b] = S[a] @ S[b]

    def _coef(self) -> np.ndarray:
        return self.w_

    # ---------------------------------------------------------------- merging
    def _merge(self, other: OPAUC) -> None:
        r"""Combine two OPAUC learners that learnt disjoint parts of a stream.

        The class summaries merge (:meth:`aucstream.covariance.CovarianceSummary.merge`:
        exact for "full", the sketch of both streams for "randomized" and "hash",
        frequent directions' merge with its error bound for "fd", merge then prune for
        "sparse"). The weights combine by examples learnt, :math:`w = (n_1 w_1 + n_2
        w_2)/(n_1 + n_2)` with :math:`n` the examples in a learner's summaries: one-shot
        parameter averaging (Zinkevich, Weimer, Smola, Li 2010), not the weights one
        pass over both streams would give (those depend on the order of the examples).
        For the optimum of the objective over both streams from the merged summaries
        (exact for "full"), use :func:`aucstream.covariance.solve_from_statistics` or
        :meth:`from_statistics`.
        The low-rank kinds re-base their implicit weights on the merged sketches
        (:math:`v = w`, the products recomputed exactly).

        The linear sketches merge only when the learners drew independent random
        vectors: two learners with the same integer ``random_state`` drew the same
        :math:`a_i` for their i-th examples, and their summed sketches would not be a
        sketch of both streams, so that merge is refused.
        """
        if (
            self.covariance in ("randomized", "hash")
            and isinstance(self.random_state, (int, np.integer))
            and self.random_state == other.random_state
        ):
            raise ValueError(
                f"cannot merge OPAUC(covariance={self.covariance!r}) learners with the same "
                f"random_state={self.random_state}: they drew the same random vectors, so "
                "their summed sketches are not a sketch of both streams; give every shard "
                "its own random_state"
            )
        n1 = sum(s.count for s in self.stats_)
        n2 = sum(s.count for s in other.stats_)
        w = mean_by_count(self.w_, n1, other.w_, n2) if n1 + n2 > 0 else self.w_.copy()
        self.stats_ = [mine.merge(theirs) for mine, theirs in zip(self.stats_, other.stats_)]
        self._set_weights(w)

    def from_statistics(self, neg, pos, *, classes, coef=None) -> OPAUC:
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
        from sklearn.utils.multiclass import check_classification_targets

        self._validate_params()
        self._check_params()
        classes = np.asarray(classes)
        check_classification_targets(classes)
        classes = self._check_two_classes(np.unique(classes), "classes")
        d = neg.n_features
        probe = make_covariance(self.covariance, d, self.sketch_size, **self._summary_options())
        for name, summary in (("neg", neg), ("pos", pos)):
            if type(summary) is not type(probe) or summary.n_features != d:
                raise TypeError(
                    f"{name} must be a {type(probe).__name__} of {d} features for "
                    f"covariance={self.covariance!r}, got {type(summary).__name__}"
                )
            if summary.dtype != probe.dtype:
                raise ValueError(
                    f"the {name} summary stores {summary.dtype}, but dtype={self.dtype!r}"
                )
            for setting in ("sketch_size", "centering", "shrink_index"):
                if getattr(summary, setting, None) != getattr(probe, setting, None):
                    raise ValueError(f"the {name} summary's {setting} differs from this learner's")
        w = solve_from_statistics(neg, pos, float(self.lam)) if coef is None else coef
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (d,) or not np.all(np.isfinite(w)):
            raise ValueError(f"coef must be {d} finite numbers, got shape {w.shape}")
        with self._transaction():
            self._reset(classes, d)
            self.n_features_in_ = d
            if hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
            self.stats_ = [neg, pos]
            self._set_weights(w)
            self.n_samples_seen_ = int(neg.count + pos.count)
        return self

    def _set_weights(self, w: np.ndarray) -> None:
        """Make ``w`` the current weights (for the low-rank kinds: the implicit form
        ``v = w`` with the maintained products recomputed from the summaries)."""
        w = np.array(w, dtype=np.float64, copy=True)
        self.w_ = w
        if self.covariance in _LOWRANK:
            self.v_ = w.copy()
            self.p_[:] = 0.0
            self.gamma_[:] = 0.0
            self.scale_[0] = 1.0
            self._rebase()
            self._materialize()

    # -------------------------------------------------------------- write sets
    def _row_logged_state(self) -> tuple:
        """The class sums and scatters of "full" (:meth:`FullCovariance.row_state`:
        O(d^2), written in the rows of the examples' features only), and the low-rank
        kinds' sketches and class sums (and frequent directions' ``seen_``): O(d tau),
        written by the kernel in the rows of the examples' features, and as a whole
        only by a shrink or a re-basing (:meth:`_row_written_state`); see
        :meth:`BaseStreamingAUC._row_logged_state`. ``v_`` (written whole by a
        rescaling in the kernel), ``w_`` and the small arrays are copied by the
        transaction."""
        stats = self.__dict__.get("stats_")
        if not stats:
            return ()
        if self.covariance == "full":
            return (*stats[0].row_state(), *stats[1].row_state())
        if self.covariance not in _LOWRANK or self.__dict__.get("v_") is None:
            return ()
        return tuple(a for s in stats for a in s.row_state())

    def _bounded_state(self) -> tuple:
        """The class sums and the float64 linear sketches (their ``bounded_rows``):
        entries that sum examples times bounded draws, finite for any checked stream
        (see :meth:`BaseStreamingAUC._bounded_state`)."""
        if self.covariance not in _LOWRANK or not self._row_logged_state():
            return ()
        return tuple(a for s in self.stats_ for a in s.bounded_rows())

    @property
    def _row_written_by_class(self) -> bool:
        """ "full" writes its logged arrays by rows always (the low-rank kinds' depend on
        the counts: shrinks, re-basings); see :attr:`BaseStreamingAUC._row_written_by_class`."""
        return self.covariance == "full"

    def _row_written_state(self, chunk: Chunk) -> tuple:
        """Those of :meth:`_row_logged_state` that ``chunk`` writes only in its rows.
        "full": the class sums, and the scatters, but for dense rows only those that
        the chunk's rows can not make full (:meth:`FullCovariance.fills_pending`: a
        scatter takes held-back rows whole); the low-rank kinds: all but a
        frequent-directions sketch that may shrink within the chunk (its class has
        examples enough to fill it), or every one when a full re-basing falls within
        the chunk (:meth:`aucstream.covariance.FrequentDirectionsCovariance.rows_only`)."""
        if self.covariance == "full":
            if chunk.indices is not None:
                return self._row_logged_state()
            filled = self._filled_scatters(chunk)
            return tuple(
                a
                for s, fills in zip(self.stats_, filled)
                for a in ((s.sum_,) if fills else s.row_state())
            )
        if not self._row_logged_state():
            return ()
        refresh = self._full_rebase_within(chunk.n_samples)
        pos = int(np.count_nonzero(chunk.y > 0))
        inserts = (chunk.n_samples - pos, pos)
        return tuple(a for c, s in enumerate(self.stats_) for a in s.rows_only(inserts[c], refresh))

    def _written_rows(self, chunk: Chunk, written: tuple) -> dict:
        """Each class's summary learns its class's examples only, so the kernel writes
        its arrays in the features of those examples (a chunk of 8192 examples at
        d = 10^6: some 73,000 rows of each sketch instead of the chunk's 124,000),
        except frequent directions', which brings every row an example reads up to
        date (:meth:`aucstream.covariance.FrequentDirectionsCovariance.catch_up`)."""
        if self.covariance == "fd":
            return super()._written_rows(chunk, written)
        by_class = self._chunk_rows_by_class(chunk)
        ids = frozenset(map(id, written))
        return {
            id(a): by_class[c]
            for c, s in enumerate(self.stats_)
            for a in s.row_state()
            if id(a) in ids
        }

    def _filled_scatters(self, chunk: Chunk) -> tuple[bool, bool]:
        """For a chunk of dense rows and "full": whether the chunk may fill each
        class's held-back rows (and so write its scatter whole)."""
        pos = int(np.count_nonzero(chunk.y > 0))
        counts = (chunk.n_samples - pos, pos)
        return tuple(s.fills_pending(n) for s, n in zip(self.stats_, counts))

    def _read_only_state(self, y_pm: np.ndarray, chunk: Chunk | None = None) -> tuple:
        """With "full" and "sparse", the summary of the class no example of the chunk
        belongs to, which the kernel (:func:`_opauc_chunk`) only reads, and the random
        generator, which they do not use (the low-rank kinds draw from it and re-base
        both sketches: they declare nothing). With "full" and a ``chunk`` of dense rows
        that can not fill its class's held-back rows, also that class's scatter, which
        the chunk does not touch (:meth:`_plan_variant`); see
        :meth:`BaseStreamingAUC._read_only_state`."""
        if self.covariance not in ("full", "sparse"):
            return ()
        c = self._chunk_class(y_pm)
        if c is None:
            return ()
        if self._plan_variant(chunk) == _UNTOUCHED:
            return (self.stats_[1 - c], self._rng, self.stats_[c].scatter_)
        return (self.stats_[1 - c], self._rng)

    def _plan_variant(self, chunk: Chunk | None) -> int:
        """With "full" and a ``chunk`` of dense rows: whether it fills its class's
        held-back rows (``_FILLED``: the scatter is written whole) or not
        (``_UNTOUCHED``: not written); otherwise 0. See
        :meth:`BaseStreamingAUC._plan_variant`."""
        if self.covariance != "full" or chunk is None or chunk.indices is not None:
            return 0
        y = chunk.y
        if y.shape[0] == 1:  # (a one-example call: the quick way)
            return _FILLED if self.stats_[1 if y[0] > 0.0 else 0].fills_pending(1) else _UNTOUCHED
        c = self._chunk_class(y)
        if c is None:
            return 0
        return _FILLED if self._filled_scatters(chunk)[c] else _UNTOUCHED
