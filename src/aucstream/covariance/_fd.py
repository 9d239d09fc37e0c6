r"""Frequent directions (OPAUC_fd; G16 §4.1, Alg. 2, Eqs. 10-11, 14-15).

Liberty's frequent directions: insert x into the first zero column of Z; when no zero
column remains, shrink :math:`Z \leftarrow U \sqrt{\max(\Sigma^2 - \sigma_\ell^2, 0)}`
with :math:`\ell = \lfloor\tau/2\rfloor` (Alg. 2) or :math:`\lceil 0.9\tau\rceil` (the
authors' code, which frees about 10% of the columns per shrink). Alg. 2 inserts, then
shrinks; G16's prose says the reverse, and we follow the algorithm (as the authors'
code does). Guarantee (Liberty 2013; G16 Lemma 1, in the form we test):
:math:`0 \preceq Z Z^\top \preceq X X^\top` and :math:`\|X X^\top - Z Z^\top\|_2 \le
(\|X\|_F^2 - \|Z\|_F^2)/\ell`, which is at most :math:`\|X\|_F^2/\lfloor\tau/2\rfloor`
(G16 states :math:`2/\tau` times the trace, the same for even tau).

Implementation choices
----------------------
- The SVD of Alg. 2 is computed from the maintained Gram matrix:
  :math:`G = V \Sigma^2 V^\top` (an eigendecomposition, O(tau^3)), then
  :math:`Z \leftarrow Z V \operatorname{diag}(\sqrt{\max(1 - \sigma_\ell^2 /
  \sigma_i^2, 0)})`, which equals :math:`U\hat\Sigma` in exact arithmetic and costs
  one O(m tau^2) product (m rows in use) instead of a d x tau SVD. Eigenvalues below
  :math:`\tau\epsilon\sigma_1^2` count as zero, so at least one column is always
  freed. An all-zero example is not inserted (it would leave its column zero).
- The rows of Z that ever received a non-zero are recorded (``support_``); a shrink
  only visits those, so on sparse data it costs O(|support| tau^2), not O(d tau^2).
  It gathers them in blocks and multiplies each block by the tau x m matrix with one
  single-threaded BLAS ``dgemm`` (faster than a compiled loop at d = 10^6; the sums
  run in BLAS's order, so Z differs from the loop's by rounding).
- ``centering="exact"`` (a library option): Z sketches the centered examples through
  Welford's rank-one updates of the scatter, columns :math:`\sqrt{(T-1)/T}\,(x_T -
  c_{T-1})`, so :math:`0 \preceq Z Z^\top/T \preceq S`. Such a column is dense, but
  its mean part is rank one in the current class sum: :math:`Z = Y - s\beta^\top`
  with a sparse update of Y and a tau-vector :math:`\beta` (:func:`fd_insert`),
  folded into Y at each shrink, so an insert still costs O(k tau).
- Deferred shrinks (OPAUC; :meth:`FrequentDirectionsCovariance.shrink_deferred`).
  The support grows with the stream (new words keep coming), so passing over it at
  every shrink made a pass quadratic in its length. OPAUC instead brings a row of Z
  up to date only when an example reads it. Row i of the stored sketch is the row
  of Z after shrink :math:`b + h` (``version_``, at least ``defer_base_`` = b), and
  a history holds, for every h, the map to the current Z: :math:`Z_i = y_i P_h -
  s_i q_h - s_i\beta` (y: the stored row, s: the class sum, which no insert changed
  since, as an insert reads its rows first). A shrink with matrix M (and OPAUC's dump
  :math:`v \mathrel{+}= Z p + g s` into its weights, :mod:`aucstream.opauc`) updates
  every entry in O(tau^3): :math:`w_h \mathrel{+}= P_h p`, :math:`c_h \mathrel{+}=
  (q_h + \beta)^\top p - g`, :math:`P_h \leftarrow P_h M`, :math:`q_h \leftarrow
  (q_h + \beta) M`, and bringing a row up applies :math:`v_i \mathrel{+}= y_i^\top
  w_h - s_i c_h`, :math:`y_i \leftarrow y_i P_h - s_i q_h` (O(tau^2)). Before each
  stretch of examples in which no sketch can fill, OPAUC brings up the rows of their
  features; a re-basing, the 64th deferred shrink (fewer for small d:
  :func:`defer_capacity`) and any whole-sketch read bring up every row (the reads
  in a copy). This is Alg. 2 exactly, with the products :math:`M_1 M_2 \cdots`
  grouped differently, so Z and the weights differ from the shrink-by-shrink pass by
  rounding only; the grouping follows the stream (where its examples read rows),
  never the chunks, so chunking and saving/loading still change nothing. At d =
  10^6 passing over the support at every shrink made a pass several times slower
  (the pass's throughput: ``OPAUC(covariance='fd')`` in
  ``benchmarks/bench_highdim.py``, reported in docs/benchmarks.md).
- Weighted examples and forgetting (a library extension; neither paper forgets).
  An example of weight :math:`\omega` enters as the column :math:`\sqrt\omega\,x`
  (centered: :math:`\sqrt{W\omega/(W+\omega)}\,(x - s/W)`, Welford's update weighted
  as in West 1979, W the class's weight before x), s takes :math:`\omega x` and W
  :math:`\omega` (:func:`fd_column`, :func:`fd_insert`; ``update(X,
  sample_weight)``). The sketch is then Alg. 2 run on the columns
  :math:`\sqrt{\omega_i}\,x_i`, so Liberty's guarantee holds for the weighted scatter
  :math:`A = \sum_i \omega_i x_i x_i^\top`: :math:`0 \preceq Z Z^\top \preceq A` and
  :math:`\|A - Z Z^\top\|_2 \le (\sum_i \omega_i\|x_i\|^2 - \|Z\|_F^2)/\ell`
  (``frob_`` sums :math:`\omega_i\|x_i\|^2`). Exponential forgetting with
  :math:`\gamma = 2^{-1/h}` per example multiplies every stored column by
  :math:`\sqrt\gamma` before each insert; :meth:`FrequentDirectionsCovariance.scale`
  does that in bulk (Z by :math:`\sqrt f`, s, W, the Gram matrix and ``frob_`` by f,
  and the deferred history with them), and it commutes with the shrink (the shrink
  of the scaled sketch subtracts :math:`f\sigma_\ell^2`), so scaling lazily gives
  the same sketch: OPAUC inserts example t as the column :math:`\sqrt{g_t}\,x_t` with
  :math:`g_t = 2^{t/h - E}` and rescales by an exact power of 2 now and then
  (:mod:`aucstream.opauc`, "Forgetting"). The sketch is then one of the decayed
  scatter :math:`\sum_i \gamma^{t-i} x_i x_i^\top`, with the bound above on the
  decayed mass :math:`\sum_i \gamma^{t-i}\|x_i\|^2` (in stored units: divide by the
  latest example's weight).
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from .._blas import one_blas_thread
from .._chunks import csr_arrays
from .._kernels import jit, squared_norm
from .._typing import DType
from ._base import borrowing_step, check_sample_weight, symmetrize, track_support
from ._checks import (
    check_array,
    check_derived,
    check_empty,
    check_nonnegative,
    check_support,
    check_zero_outside,
)
from ._fd_shrink import (
    _fd_catch_up,
    _fd_deferred_dot,
    _fd_deferred_dump,
    _fd_settle,
    _fd_shrink_rows,
    _shrink_matrix,
    defer_capacity,
    fd_shrink_index,
)
from ._lowrank import (
    CENTER_G16,
    CENTERED_SKETCH,
    _LowRankSummary,
    single_nonzero,
    sketch_add_outer,
    sketch_matvec,
    sketch_tdot,
    sketch_tmatvec,
)

__all__ = [
    "FrequentDirectionsCovariance",
    "fd_column",
    "fd_insert",
    "fd_shrink_index",
    "fd_tdot",
]

_CENTER_CODES = {"g16": CENTER_G16, "exact": CENTERED_SKETCH}


@borrowing_step
def fd_column(weight, xx, centered, g=1.0):
    r"""Coefficients ``(bx, bs)`` of the column ``z = bx x - bs s`` that frequent
    directions inserts for an example x of weight g with ``|x|^2 = xx`` (s: the class
    sum before x, ``weight[0]`` = W its total weight, the count T when every example
    weighs 1).

    G16 form (``centered`` false): ``z = sqrt(g) x``, skipped when x is all zero.
    Centered: ``z = sqrt(W g/(W + g)) (x - s/W)`` (``sqrt(T/(T+1)) (x - s/T)`` for unit
    weights), so that :math:`\sum z z^\top` is the (weighted) centered scatter
    :math:`\sum_i g_i (x_i - c)(x_i - c)^\top` (Welford's update, weighted by West
    1979); nothing is inserted for a class's first example.
    """
    if centered:
        t = weight[0]
        if t == 0.0:
            return 0.0, 0.0
        if g == 1.0:
            bx = math.sqrt(t / (t + 1.0))
        else:
            bx = math.sqrt(t * g / (t + g))
        return bx, bx / t
    if xx > 0.0:
        return (1.0 if g == 1.0 else math.sqrt(g)), 0.0
    return 0.0, 0.0


@borrowing_step
def _fd_fill_column(arrays, j, ztx, bx, bs, xx, sx, g):
    """Column j of Z becomes ``z = bx x - bs s`` (``bx != 0``): update G, ``Z^T s``,
    ``beta`` and the Frobenius norm, before s gains ``g x``."""
    gram, zs, ss, beta = arrays.gram, arrays.zs, arrays.ss, arrays.beta
    # |z|^2 = bx^2 |x|^2 - 2 bx bs s^T x + bs^2 |s|^2 (= T/(T+1) |x - c|^2 centered)
    zz = bx * bx * xx - 2.0 * bx * bs * sx + bs * bs * ss[0]
    if zz < 0.0:
        zz = 0.0
    zsold = bx * sx - bs * ss[0]  # z^T s (old s)
    zx = bx * xx - bs * sx  # z^T x
    for i in range(gram.shape[0]):
        zi = bx * ztx[i] - bs * zs[i]  # (Z^T z)_i, old Z (column j is zero)
        gram[i, j] += zi
        gram[j, i] += zi
    gram[j, j] += zz
    for i in range(zs.shape[0]):
        zs[i] += g * ztx[i]
    zs[j] += zsold + g * zx
    beta[j] += bs
    arrays.frob[0] += zz
    arrays.nfill[0] = j + 1


@borrowing_step
def _add_outer_weighted(sketch, idx, val, beta, g, j):
    """``Y += x (g beta + beta[j] e_j)^T`` off column j's ``g`` (column j takes
    ``beta[j]`` as it is); O(k) when beta is zero off column j (the G16 form)."""
    h = single_nonzero(beta)
    if h == -1:
        return
    for q in range(idx.shape[0]):
        v, i = val[q], idx[q]
        if v == 0.0:
            continue
        if h >= 0:
            sketch[i, h] += v * (beta[h] if h == j else g * beta[h])
        else:
            for k in range(beta.shape[0]):
                sketch[i, k] += v * (beta[k] if k == j else g * beta[k])


@borrowing_step
def fd_insert(arrays, idx, val, ztx, bx, bs, g=1.0):
    """Frequent directions, first step of Alg. 2: make ``z = bx x - bs s`` (s the
    class sum before x, see :func:`fd_column`) the first zero column of Z, then add x
    of weight g (1 without forgetting) to the class (count, weight, sum ``+= g x``);
    ``bx == 0`` inserts nothing. ``arrays``: :data:`LowRankArrays`.

    Z is kept as ``Y - s beta^T`` (``sketch`` holds Y), so that the mean part of the
    centered columns, which is dense, costs nothing here: with
    ``Y += x (g beta + (bx + g bs) e_j)^T`` and ``beta += bs e_j``, Z gains exactly
    ``z e_j^T`` while s gains ``g x``. O(k tau + tau^2). ``ztx`` must hold ``Z^T x``;
    ``zs`` (``Z^T s``) and ``ss`` (``s^T s``) are maintained here, and so is the Gram
    matrix. Rows receiving their first non-zero join the support. Returns ``|x|^2``;
    the caller shrinks when ``nfill[0] == tau``.
    """
    sums, beta, zs, sketch = arrays.sums, arrays.beta, arrays.zs, arrays.sketch
    seen, support, n_support = arrays.seen, arrays.support, arrays.n_support
    j = arrays.nfill[0]
    xx = 0.0
    sx = 0.0
    for q in range(idx.shape[0]):
        v = val[q]
        if v == 0.0:
            continue
        xx += v * v
        sx += sums[idx[q]] * v
    track_support(seen, support, n_support, idx, val)
    # beta[j] is 0 (column j is free): Y += x (g beta + (bx + g bs) e_j)^T
    beta[j] = bx + g * bs if bx != 0.0 else 0.0
    if g == 1.0:
        sketch_add_outer(sketch, idx, val, beta)
    else:
        _add_outer_weighted(sketch, idx, val, beta, g, j)
    beta[j] = 0.0
    if bx != 0.0:
        _fd_fill_column(arrays, j, ztx, bx, bs, xx, sx, g)
    else:
        for i in range(zs.shape[0]):
            zs[i] += g * ztx[i]
    arrays.ss[0] += g * (2.0 * sx + g * xx)
    for q in range(idx.shape[0]):
        sums[idx[q]] += g * val[q]
    arrays.count[0] += 1
    arrays.weight[0] += g
    return xx


@borrowing_step
def fd_tdot(sketch, sums, beta, idx, val, out):
    """Write ``Z^T x`` into ``out`` for ``Z = Y - s beta^T`` (``sketch`` holds Y);
    return ``s^T x``. O(k tau)."""
    sketch_tdot(sketch, idx, val, out)
    sx = 0.0
    for q in range(idx.shape[0]):
        sx += sums[idx[q]] * val[q]
    if sx != 0.0:
        for k in range(out.shape[0]):
            out[k] -= beta[k] * sx
    return sx


@jit
def _fd_add_rows(arrays, indptr, indices, data, weights, start, centered):
    """Insert rows from ``start`` (with the weights in ``weights``, or 1 each when it
    is empty; a row of weight 0 is skipped); return the row after the one that filled
    Z (or n)."""
    nfill = arrays.nfill
    sketch, sums, beta = arrays.sketch, arrays.sums, arrays.beta
    tau = sketch.shape[1]
    ztx = np.empty(tau)
    n = indptr.shape[0] - 1
    weighted = weights.shape[0] == n
    for r in range(start, n):
        g = weights[r] if weighted else 1.0
        if g == 0.0:
            continue
        lo, hi = indptr[r], indptr[r + 1]
        idx, val = indices[lo:hi], data[lo:hi]
        fd_tdot(sketch, sums, beta, idx, val, ztx)
        bx, bs = fd_column(arrays.weight, squared_norm(val), centered, g)
        fd_insert(arrays, idx, val, ztx, bx, bs, g)
        if nfill[0] == tau:
            return r + 1
    return n


class FrequentDirectionsCovariance(_LowRankSummary):
    r"""Frequent-directions covariance estimate of OPAUC_fd (G16 §4.1, Alg. 2).

    Deterministic; see the module docstring for the shrink and its guarantee.
    Adding an example costs O(k tau + tau^2); every shrink (at most once per
    tau - l + 1 inserts) costs O(tau^3 + m tau^2) for the m <= d rows of Z that ever
    received a non-zero (``support_``), so at most O(d tau) amortized with
    ``shrink="half"``. OPAUC defers that pass (:meth:`shrink_deferred`): a shrink
    then costs O(H tau^3) for H <= 64 deferred shrinks, each row read costs O(tau^2)
    more when a shrink came since, and every H-th shrink visits the m rows.

    Parameters
    ----------
    n_features : int
        Dimension d.
    sketch_size : int, default=50
        Number of columns tau (>= 2).
    shrink : {"half", "ceil_0.9"} or int, default="half"
        Which squared singular value is subtracted: index floor(tau/2) (G16 Alg. 2),
        ceil(0.9 tau) (authors' code: frees about 10% of the columns per shrink) or a
        given index.
    centering : {"g16", "exact"} or None, default=None
        None or "g16": Z sketches the examples, :math:`Z Z^\top \preceq X X^\top`, and the
        estimate is :math:`Z Z^\top/T - c c^\top` (G16 Eqs. 10-11), which is indefinite
        wherever the sketch lost more of :math:`X X^\top` than the class's spread.
        "exact" (a library option, not the paper's): Z sketches the centered examples
        through Welford's rank-one updates of the scatter,
        :math:`M_T = M_{T-1} + \frac{T-1}{T}(x_T - c_{T-1})(x_T - c_{T-1})^\top`, so the
        estimate :math:`Z Z^\top/T` satisfies :math:`0 \preceq Z Z^\top/T \preceq S`
        with the frequent-directions bound on :math:`\|M - Z Z^\top\|_2`. The
        columns' dense mean parts are kept implicitly (``beta_``), so an insert still
        costs O(k tau + tau^2).
    dtype : {np.float64, np.float32}, default=np.float64
        Storage of ``sketch_`` (float32 halves the summary's memory and the traffic of
        inserts and shrinks); the Gram matrix, ``zs_``, ``beta_`` and the sums stay
        float64, and the shrink's products accumulate in float64
        (:mod:`aucstream.covariance._lowrank`).

    Attributes
    ----------
    count_, sum_, sketch_, gram_
        See :class:`_LowRankSummary`. Columns ``nfill_[0]:`` of the sketch are zero.
    nfill_ : ndarray of shape (1,), int64
        Number of filled (leading) columns.
    frob_ : ndarray of shape (1,)
        :math:`\|X\|_F^2` of the inserted examples (for :attr:`error_bound`).
    n_shrinks_ : ndarray of shape (1,), int64
        Number of shrinks so far.
    zs_, ss_ : ndarray of shape (tau,) and (1,)
        :math:`Z^\top s` and :math:`s^\top s`, maintained for the centered columns.
    beta_ : ndarray of shape (tau,)
        The sketch is :math:`Z = Y - s \beta^\top` with Y in ``sketch_``: the mean
        parts of the centered columns inserted since the last shrink (all zero in the
        G16 form). Use :meth:`sketch_matrix` for Z itself.
    seen_ : ndarray of shape (d,), bool
        Whether row i of Z ever received a non-zero.
    support_, n_support_ : ndarray of shape (d,) and (1,), int64
        Those rows (the first ``n_support_[0]`` entries); a shrink visits only them.
    version_ : ndarray of shape (d,), int64
        After which shrink row i of ``sketch_`` was last brought up to date (at least
        ``defer_base_[0]`` counts: module docstring, deferred shrinks).
    defer_base_ : ndarray of shape (1,), int64
        The shrink after which every row was up to date; ``deferred`` =
        ``n_shrinks_[0] - defer_base_[0]`` shrinks wait in the history.
    defer_P_, defer_q_, defer_dw_, defer_dc_ : ndarray
        Of shapes (H + 1, tau, tau), (H + 1, tau), (H + 1, tau) and (H + 1,): the
        history (:math:`P_h, q_h, w_h, c_h`) for rows at shrink
        ``defer_base_[0] + h``; entry ``deferred`` is the identity (zeros), the later
        ones zero. H = :func:`defer_capacity`.

    Examples
    --------
    >>> import numpy as np
    >>> from aucstream.covariance import FrequentDirectionsCovariance
    >>> X = np.random.default_rng(0).normal(size=(100, 6))
    >>> s = FrequentDirectionsCovariance(6, sketch_size=4).update(X)
    >>> err = np.linalg.norm(X.T @ X - s.scatter, 2)
    >>> bool(err <= s.error_bound <= (X**2).sum() / 2)
    True
    """

    fills_columns: ClassVar[bool] = True

    def __init__(
        self,
        n_features: int,
        sketch_size: int = 50,
        shrink: str | int = "half",
        centering: str | None = None,
        dtype: DType = np.float64,
    ):
        centering = "g16" if centering is None else centering
        if centering not in _CENTER_CODES:
            raise ValueError(f"centering must be one of {tuple(_CENTER_CODES)}, got {centering!r}")
        super().__init__(n_features, sketch_size, minimum_size=2, dtype=dtype)
        self.centering = centering
        self.shrink = shrink
        self.shrink_index = fd_shrink_index(shrink, self.sketch_size)
        self.nfill_ = np.zeros(1, dtype=np.int64)
        self.frob_ = np.zeros(1)
        self.n_shrinks_ = np.zeros(1, dtype=np.int64)
        self.seen_ = np.zeros(self.n_features, dtype=np.bool_)
        self.support_ = np.zeros(self.n_features, dtype=np.int64)
        self.n_support_ = np.zeros(1, dtype=np.int64)
        self.zs_ = np.zeros(self.sketch_size)
        self.ss_ = np.zeros(1)
        self.beta_ = np.zeros(self.sketch_size)
        tau, cap = self.sketch_size, defer_capacity(self.n_features, self.sketch_size)
        h = cap + 1 if cap else 0  # history entries
        self.version_ = np.zeros(self.n_features if cap else 0, dtype=np.int64)
        self.defer_base_ = np.zeros(1, dtype=np.int64)
        self.defer_P_ = np.zeros((h, tau, tau))
        self.defer_P_[:1] = np.eye(tau)
        self.defer_q_ = np.zeros((h, tau))
        self.defer_dw_ = np.zeros((h, tau))
        self.defer_dc_ = np.zeros(h)

    #: Members older files lack (no deferred shrinks: :meth:`_upgrade_state`).
    _state_added_later: ClassVar[tuple[str, ...]] = (
        "weight_",
        "version_",
        "defer_base_",
        "defer_P_",
        "defer_q_",
        "defer_dw_",
        "defer_dc_",
    )

    def _upgrade_state(self, missing: set) -> None:
        """An older file's sketch is up to date: no shrink is deferred; its examples
        weigh 1 each."""
        super()._upgrade_state(missing)
        if "defer_base_" in missing:
            self.defer_base_ = self.n_shrinks_.copy()

    @property
    def center_code(self) -> int:
        return _CENTER_CODES[self.centering]

    _row_arrays = ("sketch_", "sum_", "seen_", "version_")

    def rows_only(self, n_inserts: int, refresh: bool) -> tuple:
        """The sum, ``seen_`` and ``version_`` (written at the examples' features
        only); the sketch too unless ``refresh`` runs or the deferred shrinks can reach
        the capacity within ``n_inserts`` inserts (both rewrite every row of the
        support: :meth:`catch_up_all`). A deferred shrink itself writes only small
        arrays, and the rows it leaves behind are brought up to date when an example
        reads them (OPAUC: :meth:`catch_up`)."""
        shrinks = self.nfill_[0] + n_inserts >= self.sketch_size
        cap = self.defer_P_.shape[0] - 1  # -1 without a history: every shrink passes
        folds = shrinks and self.deferred + n_inserts >= cap
        if refresh or folds:
            return tuple(a for a in self.row_state() if a is not self.sketch_)
        return self.row_state()

    def row_state(self) -> tuple:
        """The arrays of ``_row_arrays`` (``version_`` only when there is a history)."""
        return tuple(a for a in super().row_state() if a.shape[0])

    def draws(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Frequent directions draws nothing: an empty (0, tau) array."""
        return np.zeros((0, self.sketch_size))

    def _fd_fields(self) -> tuple:
        return (
            self.nfill_,
            self.frob_,
            self.seen_,
            self.support_,
            self.n_support_,
            self.zs_,
            self.ss_,
            self.beta_,
        )

    def _check_state(self) -> None:
        """Consistency of a loaded state (:mod:`._checks`): shapes and settings
        (``shrink_index`` is the index ``shrink`` gives); ``0 <= nfill_[0] < tau``
        (the kernels write column ``nfill_[0]``; a full sketch is shrunk at once) and
        at most the count; at most two shrinks per example; the columns from
        ``nfill_[0]`` on are zero in the sketch, ``beta_``, the Gram matrix and
        ``zs_``; the support is a set of features in [0, d), marked by ``seen_``,
        outside which the sketch and the sum are zero; ``frob_`` is not negative; an
        empty summary holds zeros; the deferred shrinks' state (:meth:`_check_deferred`;
        the free columns are checked in the rows up to date only)."""
        d, tau, t = self._check_lowrank_state(_CENTER_CODES, minimum_size=2)
        try:
            ell = fd_shrink_index(self.shrink, tau)
        except ValueError as error:
            raise ValueError(f"shrink = {self.shrink!r}: {error}") from None
        check_derived("shrink_index", self.shrink_index, ell)
        nfill = int(check_array(self, "nfill_", (1,), "i")[0])
        if not 0 <= nfill < tau:
            raise ValueError(
                f"nfill_ = {nfill} filled columns is outside [0, {tau - 1}] (a full sketch "
                f"of sketch_size {tau} is shrunk at once)"
            )
        check_array(self, "frob_", (1,), "f")
        check_nonnegative(self, "frob_", "a sum of squared norms")
        check_array(self, "n_shrinks_", (1,), "i")
        check_nonnegative(self, "n_shrinks_", "a number of shrinks")
        check_array(self, "zs_", (tau,), "f")
        check_array(self, "ss_", (1,), "f")
        check_array(self, "beta_", (tau,), "f")
        check_support(self, d)
        seen = self.seen_
        check_zero_outside(self, "sum_", seen)
        check_zero_outside(self, "sketch_", seen)
        free = (
            self.beta_[nfill:],
            self.gram_[nfill:],
            self.gram_[:, nfill:],
            self.zs_[nfill:],
        )
        if any(np.any(part) for part in free):
            raise ValueError(
                f"the columns from nfill_ = {nfill} on are not zero (sketch_, beta_, gram_ or zs_)"
            )
        check_empty(self, t, ("sum_", "sketch_", "frob_", "n_shrinks_", "n_support_", "ss_"))
        if nfill > t:
            raise ValueError(f"nfill_ = {nfill} filled columns, more than the {t} examples")
        if self.n_shrinks_[0] > 2 * t:
            raise ValueError(
                f"n_shrinks_ = {int(self.n_shrinks_[0])} shrinks, more than twice the {t} "
                "examples (a shrink follows an insert or a merge of non-empty sketches)"
            )
        current = self._check_deferred(d, tau)
        if np.any(self.sketch_[:, nfill:].any(axis=1) & current):  # no copy of the rows
            raise ValueError(
                f"the columns from nfill_ = {nfill} on are not zero in sketch_ (rows up to date)"
            )

    def _check_deferred(self, d: int, tau: int) -> np.ndarray:
        """The deferred shrinks' state (:meth:`_check_state`): shapes; at most
        capacity - 1 shrinks deferred; ``version_`` within [0, n_shrinks_]; the entry
        of the last shrink the identity (zeros in ``defer_q_``, ``defer_dw_`` and
        ``defer_dc_``), and zeros after it. Returns which rows are up to date."""
        cap = defer_capacity(d, tau)
        h = cap + 1 if cap else 0  # history entries
        version = check_array(self, "version_", (d if cap else 0,), "i")
        base = int(check_array(self, "defer_base_", (1,), "i")[0])
        check_array(self, "defer_P_", (h, tau, tau), "f")
        for name, shape in (("defer_q_", (h, tau)), ("defer_dw_", (h, tau))):
            check_array(self, name, shape, "f")
        check_array(self, "defer_dc_", (h,), "f")
        now = int(self.n_shrinks_[0])
        if not cap:
            if base != now:
                raise ValueError(f"defer_base_ = {base}, not n_shrinks_ = {now} (no deferral)")
            return np.ones(d, dtype=np.bool_)
        if base < 0 or not 0 <= now - base < cap:
            raise ValueError(
                f"defer_base_ = {base}: between n_shrinks_ - {cap - 1} = {now - cap + 1} and "
                f"n_shrinks_ = {now} (at most {cap - 1} shrinks are deferred)"
            )
        if version.size and (version.min() < 0 or version.max() > now):
            raise ValueError(f"version_ holds a shrink count outside [0, n_shrinks_ = {now}]")
        h = now - base
        last = (self.defer_q_[h:], self.defer_dw_[h:], self.defer_dc_[h:], self.defer_P_[h + 1 :])
        if any(np.any(part) for part in last) or not np.array_equal(self.defer_P_[h], np.eye(tau)):
            raise ValueError(
                f"the deferred shrinks' entry {h} (n_shrinks_ - defer_base_) is not the "
                "identity, or an entry after it is not zero (defer_P_, defer_q_, defer_dw_, "
                "defer_dc_)"
            )
        return np.maximum(version, base) >= now

    @property
    def deferred(self) -> int:
        """The number of shrinks not yet applied to every row (:meth:`shrink_deferred`)."""
        return int(self.n_shrinks_[0] - self.defer_base_[0])

    def _deferred_arrays(self) -> tuple:
        h = self.deferred + 1
        return self.defer_P_[:h], self.defer_q_[:h], self.defer_dw_[:h], self.defer_dc_[:h]

    def catch_up(self, rows: np.ndarray, v_out: np.ndarray, mark: bool = True) -> None:
        """Bring the given rows of the sketch (O(tau^2) each, O(1) when up to date) and
        of ``v_out`` (OPAUC's v) up to the last shrink, and mark them so in
        ``version_`` (the only rows of it written)."""
        if self.deferred:
            base, now = int(self.defer_base_[0]), int(self.n_shrinks_[0])
            P, q, dw, dc = self._deferred_arrays()
            args = (self.sum_, self.version_, rows, P, q, dw, dc, base, now, v_out, mark)
            _fd_catch_up(self.sketch_, *args)

    def catch_up_all(self, v_out: np.ndarray | None = None) -> None:
        """Bring every row of the support up to the last shrink (O(|support| tau^2));
        ``v_out`` (OPAUC's v) takes the deferred parts of the weights, and may be
        omitted only when there are none (a summary no OPAUC shrinks)."""
        if not self.deferred:
            return
        if v_out is None:
            if self.defer_dw_.any() or self.defer_dc_.any():
                raise ValueError(
                    "this sketch defers part of an OPAUC's weights (its shrinks ran in "
                    "OPAUC.partial_fit): update it through the learner, or a copy of it"
                )
            v_out = np.zeros(self.n_features)
        # version_ stays: every row at or below the new base is up to date
        self.catch_up(self.support_[: self.n_support_[0]], v_out, mark=False)
        tau = self.sketch_size
        self.defer_base_[0] = self.n_shrinks_[0]
        self.defer_P_[:] = 0.0
        self.defer_P_[:1] = np.eye(tau)
        self.defer_q_[:] = 0.0
        self.defer_dw_[:] = 0.0
        self.defer_dc_[:] = 0.0

    def add_deferred_weights(self, out: np.ndarray) -> None:
        """Add to ``out`` what :meth:`catch_up_all` would add to OPAUC's v (state
        unchanged); O(|support| tau)."""
        if self.deferred:
            base = int(self.defer_base_[0])
            _, _, dw, dc = self._deferred_arrays()
            rows = self.support_[: self.n_support_[0]]
            _fd_deferred_dump(self.sketch_, self.sum_, self.version_, rows, dw, dc, base, out)

    def sketch_matrix(self) -> np.ndarray:
        """Z = ``sketch_ - sum_ beta_^T`` (a new d x tau array when beta_ is non-zero or
        a shrink is deferred: the rows are brought up to date in the copy)."""
        Y = self.sketch_
        if self.deferred:
            Y = Y.copy()
            base, now = int(self.defer_base_[0]), int(self.n_shrinks_[0])
            P, q, dw, dc = self._deferred_arrays()
            rows = self.support_[: self.n_support_[0]]
            dummy = np.zeros(self.n_features)
            args = (self.sum_, self.version_, rows, P, q, dw, dc, base, now, dummy, False)
            _fd_catch_up(Y, *args)
        if not self.beta_.any():
            return Y
        return Y - np.outer(self.sum_, self.beta_)

    def sketch_dot(self, p: np.ndarray) -> np.ndarray:
        if not self.deferred:
            return sketch_matvec(self.sketch_, p) - self.sum_ * float(self.beta_ @ p)
        P, q, _, _ = self._deferred_arrays()
        out = np.zeros(self.n_features)
        rows = self.support_[: self.n_support_[0]]
        base = int(self.defer_base_[0])
        _fd_deferred_dot(self.sketch_, self.sum_, self.version_, rows, P @ p, q @ p, base, out)
        return out - self.sum_ * float(self.beta_ @ p)

    def settle(self) -> None:
        """Bring every row up to date (:meth:`catch_up_all`), then fold ``- sum_
        beta_^T`` into ``sketch_`` in place (Z unchanged up to rounding);
        O(|support| tau^2) with deferred shrinks, else O(|support| tau), no temporary."""
        self.catch_up_all()
        if self.beta_.any():
            _fd_settle(self.sketch_, self.sum_, self.beta_, self.support_[: self.n_support_[0]])
            self.beta_[:] = 0.0

    def refresh(self) -> None:
        r"""Settle the pending mean parts, then recompute the Gram matrix,
        :math:`Z^\top s` and :math:`s^\top s` exactly; O(d tau^2)."""
        self.settle()
        super().refresh()
        self.zs_[:] = sketch_tmatvec(self.sketch_matrix(), self.sum_)
        self.ss_[0] = self.sum_ @ self.sum_

    @property
    def error_bound(self) -> float:
        r""":math:`(\|X\|_F^2 - \|Z\|_F^2)/\ell \ge \|X^\top X - Z Z^\top\|_2`
        (centered: X holds the centered examples, and :math:`X^\top X` is the scatter)."""
        return max(float(self.frob_[0] - np.trace(self.gram_)), 0.0) / self.shrink_index

    def update(
        self, X: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> FrequentDirectionsCovariance:
        r"""Insert the rows of ``X`` (Alg. 2: insert, then shrink when full); returns self.

        ``sample_weight`` (finite, >= 0; a row of weight 0 is skipped) inserts row i
        as the column :math:`\sqrt{\omega_i} x_i` (centered: the weighted Welford
        column, :func:`fd_column`) and adds :math:`\omega_i x_i` to the sum and
        :math:`\omega_i` to W: the sketch of :math:`\sum_i \omega_i x_i x_i^\top`,
        with the bound of :attr:`error_bound` (``frob_`` sums :math:`\omega_i
        \|x_i\|^2`). Exponential forgetting is the weights :math:`\gamma^{t-i}`
        (:meth:`scale` by :math:`\gamma^\Delta` ages the summary by Delta examples).
        """
        indptr, indices, data, d = csr_arrays(X, finite=True)
        self._check_dim(d)
        n = indptr.shape[0] - 1
        weights = check_sample_weight(sample_weight, n)
        self.catch_up_all()  # the shrinks below visit every row
        centered = self.center_code == CENTERED_SKETCH
        r = 0
        while r < n:
            r = _fd_add_rows(self.arrays(), indptr, indices, data, weights, r, centered)
            if self.nfill_[0] == self.sketch_size:
                self.shrink_now()
        return self

    def scale(self, factor: float) -> None:
        r"""Multiply every example's weight by ``factor`` > 0 in place.

        The sketch of :math:`\sum_i \omega_i x_i x_i^\top` becomes that of
        :math:`\sum_i f\omega_i x_i x_i^\top`: Z (``sketch_``) scales by
        :math:`\rho = \sqrt f`, W, s, the Gram matrix and ``frob_`` by f,
        :math:`Z^\top s` by :math:`\rho f`, :math:`s^\top s` by :math:`f^2`, and
        ``beta_`` (:math:`Z = Y - s\beta^\top`) by :math:`1/\rho`. The deferred shrinks'
        history (a row at shrink h is :math:`y P_h - s q_h`, and OPAUC's v takes
        :math:`y^\top w_h - s c_h`) keeps its maps P and scales q and w by
        :math:`1/\rho`, c by :math:`1/f`, so that what a row and v will be given is
        unchanged (OPAUC's implicit weights scale with it:
        :meth:`aucstream.opauc._lowrank.LowRankEngine.scale_implicit`). Frequent
        directions commutes with the scaling (each shrink subtracts a squared singular
        value of the scaled sketch, :math:`f\sigma_\ell^2`), so this is forgetting:
        scaling by :math:`\gamma` before each insert makes the sketch a
        frequent-directions sketch of the decayed scatter :math:`\sum_i \gamma^{t-i}
        x_i x_i^\top`, with the bound of :attr:`error_bound` on its decayed mass.
        Exact (every estimate unchanged bit for bit) for an even power of 2."""
        if not (np.isfinite(factor) and factor > 0):
            raise ValueError(f"factor must be a finite number > 0, got {factor!r}")
        root = math.sqrt(factor)
        for name, by in (
            ("weight_", factor),
            ("sum_", factor),
            ("gram_", factor),
            ("frob_", factor),
            ("zs_", root * factor),
            ("ss_", factor * factor),
            ("beta_", 1.0 / root),
            ("defer_q_", 1.0 / root),
            ("defer_dw_", 1.0 / root),
            ("defer_dc_", 1.0 / factor),
        ):
            getattr(self, name)[...] *= by
        self.sketch_ *= self.sketch_.dtype.type(root)

    def shrink_now(
        self,
        dump_coef: np.ndarray | None = None,
        dump_out: np.ndarray | None = None,
        dump_sum: float = 0.0,
    ) -> np.ndarray:
        """Shrink the sketch (second step of Alg. 2); return the tau x m matrix M.

        The new sketch is ``Z M`` in its first m columns (zeros after), and the new
        Gram matrix ``M^T G M``. If ``dump_coef`` is given, ``dump_sum * sum_`` and
        then ``Z @ dump_coef`` (with the old Z) are added to ``dump_out`` in the same
        pass over the rows (used by OPAUC's kernel; both are zero off the support).
        """
        self.catch_up_all(dump_out)  # the pass below needs every row up to date
        M = _shrink_matrix(self.gram_, self.shrink_index)
        rows = self.support_[: self.n_support_[0]]  # every other row of Z is zero
        rows[:] = np.sort(rows, kind="stable")  # sorted prefix + short tail: O(support)
        dump = dump_coef is not None
        with one_blas_thread():
            _fd_shrink_rows(
                self.sketch_,
                self.sum_,
                self.beta_,
                rows,
                M,
                dump_coef if dump else np.zeros(self.sketch_size),
                dump_out if dump else self.sum_,
                dump,
                float(dump_sum),
            )
        self.beta_[:] = 0.0
        self._shrink_products(M)
        self.defer_base_[0] = self.n_shrinks_[0]  # every row is up to date
        return M

    def _shrink_products(self, M: np.ndarray) -> None:
        """After the rows of a shrink by the tau x m matrix M: the Gram matrix
        and ``Z^T s`` become ``M^T G M`` and ``M^T Z^T s`` (zeros after column m), m
        columns are filled and the shrink is counted."""
        m = M.shape[1]
        gram = M.T @ self.gram_ @ M
        self.gram_[:] = 0.0
        self.gram_[:m, :m] = symmetrize(gram)
        zs = M.T @ self.zs_
        self.zs_[:] = 0.0
        self.zs_[:m] = zs
        self.nfill_[0] = m
        self.n_shrinks_[0] += 1

    def shrink_deferred(
        self, dump_coef: np.ndarray, dump_sum: float, v_out: np.ndarray
    ) -> np.ndarray:
        """:meth:`shrink_now` (with its dump into ``v_out``) for OPAUC, the rows' pass
        deferred; return M.

        The shrink is recorded in the history: a row at shrink ``base + h`` is
        ``y P[h] - s q[h]``, and ``v_out`` at it takes ``y . dw[h] - s dc[h]``, with
        ``y`` its row of ``sketch_`` and ``s`` its class sum (module docstring). O(H
        tau^3) for H deferred shrinks; at the capacity, every row is brought up to
        date (:meth:`catch_up_all`). Without a history (small d), :meth:`shrink_now`."""
        if not self.defer_P_.shape[0]:
            return self.shrink_now(dump_coef, v_out, dump_sum)
        M = _shrink_matrix(self.gram_, self.shrink_index)
        m = M.shape[1]
        P, q, dw, dc = self._deferred_arrays()
        with one_blas_thread():
            qb = q + self.beta_  # Z = Y - s beta^T: the rows' part of beta
            dw += P @ dump_coef
            dc += qb @ dump_coef - float(dump_sum)
            P[:, :, :m] = P @ M
            P[:, :, m:] = 0.0
            q[:, :m] = qb @ M
            q[:, m:] = 0.0
        self.beta_[:] = 0.0
        self._shrink_products(M)
        self.defer_P_[self.deferred] = np.eye(self.sketch_size)
        if self.deferred == self.defer_P_.shape[0] - 1:
            self.catch_up_all(v_out)
        return M

    def merge(self, other: FrequentDirectionsCovariance) -> FrequentDirectionsCovariance:
        r"""A frequent-directions sketch of both streams (a new object).

        The filled columns of both sketches are put side by side; if that leaves no
        zero column, one shrink of the combined matrix at the same index l follows.
        This is a frequent-directions run over the examples of the first stream
        followed by the sketch columns of the second, so the guarantee holds for the
        union: :math:`\|X^\top X - Z Z^\top\|_2 \le (\|X\|_F^2 - \|Z\|_F^2)/\ell`
        with X all the examples of both streams (the two sketching errors add, and
        the merge shrink removes at least l times what it subtracts). Centered
        sketches add the column :math:`\sqrt{T_1 T_2/T}\,(c_1 - c_2)`: the centered
        scatter of the union is :math:`M_1 + M_2 + \frac{T_1T_2}{T}(c_1 - c_2)(c_1 -
        c_2)^\top`.
        """
        self._check_merge(other)
        if other.shrink_index != self.shrink_index:
            raise ValueError(
                f"cannot merge frequent-directions sketches with shrink indices "
                f"{self.shrink_index} and {other.shrink_index}"
            )
        merged = FrequentDirectionsCovariance(
            self.n_features, self.sketch_size, self.shrink, self.centering, self.dtype
        )
        merged.count_[:] = self.count_ + other.count_
        merged.weight_[:] = self.weight_ + other.weight_
        merged.sum_[:] = self.sum_ + other.sum_
        merged.frob_[:] = self.frob_ + other.frob_
        merged.n_shrinks_[:] = self.n_shrinks_ + other.n_shrinks_
        for part in (self, other):
            support = part.support_[: part.n_support_[0]]
            track_support(
                merged.seen_, merged.support_, merged.n_support_, support, np.ones(len(support))
            )
        cols = [
            self.sketch_matrix()[:, : self.nfill_[0]],
            other.sketch_matrix()[:, : other.nfill_[0]],
        ]
        t1, t2 = self.total_weight, other.total_weight
        if self.centering == "exact" and t1 > 0 and t2 > 0:
            between = np.sqrt(t1 * t2 / (t1 + t2)) * (self.mean - other.mean)
            if np.any(between):
                cols.append(between[:, None])
                merged.frob_[0] += between @ between
        block = np.hstack(cols).astype(np.float64, copy=False)  # float32 sketches: in float64
        m = block.shape[1]
        if m < self.sketch_size:
            merged.sketch_[:, :m] = block
            merged.nfill_[0] = m
        else:
            M = _shrink_matrix(block.T @ block, self.shrink_index)
            merged.sketch_[:, : M.shape[1]] = block @ M
            merged.nfill_[0] = M.shape[1]
            merged.n_shrinks_[0] += 1
        merged.defer_base_[0] = merged.n_shrinks_[0]
        merged.refresh()
        return merged
