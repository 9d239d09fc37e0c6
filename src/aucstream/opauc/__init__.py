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
  all: :class:`aucstream.covariance.FrequentDirectionsCovariance`). With
  ``centering="exact"`` the "fd" columns are dense, but their mean parts are kept
  implicitly (:func:`aucstream.covariance.fd_insert`), so the cost is the same. The
  weights are formed (O(d tau)) only when they are read (``w_``, ``coef_``,
  ``decision_function``), not by the calls that learn (see ``OPAUC.w_``): ``w_`` is
  then a cache that reading refreshes (it may lag behind the implicit form, e.g. in
  a saved file), never read by the kernels.

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

Forgetting
----------
``half_life`` = h (in examples of the stream, both classes; None: the papers' OPAUC)
makes the class statistics exponentially weighted, a library extension for streams
that change (none of G13, G16 forgets). With :math:`\gamma = 2^{-1/h}` per example
and t the current position of the stream, example i weighs :math:`\gamma^{t-i}`:

.. math::

    W = \sum_i \gamma^{t-i}, \quad c = \frac1W \sum_i \gamma^{t-i} x_i, \quad
    S = \frac1W \sum_i \gamma^{t-i} (x_i - c)(x_i - c)^\top ,

and the step reads the opposite class's c and S as before (G16 Eqs. 7-8 with these
weighted statistics). Advancing a summary by :math:`\Delta` examples multiplies W,
:math:`s = Wc` and :math:`P = \sum_i \gamma^{t-i} x_i x_i^\top` by
:math:`\gamma^\Delta` and leaves c and S unchanged; adding x then adds 1 to W, x to
s and :math:`x x^\top` to P. The clock is the stream's, shared by the two classes: a
rare class's W shrinks between its arrivals, so its statistics are those of its
recent examples whatever its frequency (a per-class clock would keep a rare class's
old examples for longer in time).

Nothing is multiplied per example (that would be an O(d^2) pass over the other
class's scatter): the summaries store :math:`2^{t/h - E} \times` (W, s, P), so that
example t enters with the weight :math:`g_t = 2^{t/h - E}` and no stored value
changes as time advances; c and S are ratios, in which the factor cancels. The
integer E (``forget_[1]``, with the clock t in ``forget_[0]``) is raised when
:math:`\lfloor t/h\rfloor - E` would pass 40 (the stored weights stay below
:math:`2^{41}`), and the stored statistics are then multiplied by the exact power of 2
:math:`2^{-\Delta E}`: every ratio is unchanged bit for bit, so the model does not
depend on when that happens, nor on chunking. With ``sample_weight`` the example
enters with :math:`\omega_t g_t` and steps with :math:`\omega_t` as without
forgetting; an example of weight 0 is not learnt and does not advance the clock.

Merging two learners that learnt disjoint shards (the weighted merge of the
statistics, exact): each learner's statistics are brought to its own present (its
latest example weighs 1), scaled by :math:`2^{(t/h - E) - (t_k/h - E_k)}`, and added;
the merged clock is :math:`t = t_1 + t_2`. So every example keeps the weight it had in
its shard, and the next one weighs 1 (its shards' latest :math:`\gamma`).
``OPAUC.from_statistics`` with ``half_life`` takes the summaries' weights as they
hold them (e.g. counts: every example 1) as of its latest example, so that the next
example weighs 1 and the summarized ones :math:`\gamma` times their weights.

The linear sketches ("randomized", "hash") forget the same way: example t enters
with :math:`s \mathrel{+}= g_t x`, :math:`W \mathrel{+}= g_t` and the draw
:math:`\sqrt{g_t}\,a_t`, so that :math:`E[Z Z^\top] = \sum_i g_i x_i x_i^\top`, and
a rescaling multiplies Z and u by :math:`2^{-\Delta E/2}` (:math:`\Delta E` even:
exact), s, W and the Gram matrix by :math:`2^{-\Delta E}`, and the implicit weights'
coefficients and maintained products by the powers that keep w (exact too). The
implicit form compensates each new example's weight in v (the compensation of
:math:`\gamma_c s_c` grows as :math:`2^{t/h}` relative to w since the last
re-basing), so with forgetting these kinds re-base every 8 half-lives (O(d tau)
reads, v written; at the first example of half-lives 9, 17, 25, ... of the clock:
:func:`~aucstream.opauc._kernels.forgetting_rebase_due`), which keeps that
cancellation within :math:`2^9` of w (the weights then differ from the weighted
OPAUC's by rounding of relative order :math:`2^{18}\epsilon`). The re-basing writes
neither the sketches nor the sums: only the rescaling of the stored weights does
(when :math:`\lfloor t/h\rfloor - E` passes 40, as for the explicit kinds), which is
exact and needs no re-basing, so between two rescalings a call's transaction saves
only the rows its examples write, and forgetting costs about what the stationary
pass does plus one re-basing every 8 half-lives. (Earlier these kinds rescaled and
re-based together every 8 half-lives, writing both d x tau sketches whole each time;
the models are the same bit for bit when no example advances the clock by a whole
half-life, :math:`h \ge 1`, and to rounding otherwise, where the re-basings fall on
other examples.) The estimates "g16" and "exact" are ratios in which the
scale cancels; G13's mean term :math:`\|u/T\|^2 c c^\top` is not (it would change
at each rescaling), so with ``half_life`` ``centering=None`` means "g16" for every
sketch and "g13" is refused.

Frequent directions forgets the same way (Liberty 2013's sketch of the weighted
columns): example t enters as the column :math:`\sqrt{g_t}\,x_t` ("g16"; "exact":
the weighted Welford column :math:`\sqrt{W g_t/(W + g_t)}\,(x_t - c)`), s and W
take :math:`g_t x_t` and :math:`g_t`, and a rescaling multiplies the sketch by
:math:`2^{-\Delta E/2}` (with its deferred shrinks' history, exact). Scaling every
stored column by :math:`\sqrt\gamma` per example, which the clock does lazily,
commutes with the shrink (it subtracts a squared singular value of the scaled
sketch), so the sketch is a frequent-directions sketch of the decayed scatter
:math:`\sum_i \gamma^{t-i} x_i x_i^\top` (of the decayed centered scatter for
"exact"), with the bound :math:`\|\sum_i \gamma^{t-i} x_i x_i^\top - Z Z^\top\|_2
\le (\sum_i \gamma^{t-i}\|x_i\|^2 - \|Z\|_F^2)/\ell` on its decayed mass
(:attr:`aucstream.covariance.FrequentDirectionsCovariance.error_bound`, in stored
units: divide by the latest example's weight). Its re-basings are full ones, as
without forgetting.

Columns in their running scale
------------------------------
A library option (``column_scale``), not the papers'. The step
:math:`w \leftarrow w - \eta g_t` contracts only when :math:`\eta` times the largest
curvature of the loss, of the order of :math:`\|x\|^2`, stays below 2: the papers
scale their rows first (G16 §7.1 tunes :math:`\eta` for features in [0, 1] or
[-1, 1]), and on raw columns (readings in the thousands next to rates in [0, 1]) any
fixed :math:`\eta` that the large columns allow leaves the small ones unlearnt, while
the default diverges in the first rows. With ``column_scale="max_abs"`` (what the
default "auto" means) OPAUC learns the columns in their
running scale :math:`s_i = \max_{t' \le t} |x_{t',i}|` (the scale of the normalized
updates of Ross, Mineiro and Langford, *Normalized Online Learning*, UAI 2013), as
:mod:`aucstream.solam` and :mod:`aucstream.adaoam` do: with :math:`D =
\operatorname{diag}(1/s)` (0 where :math:`s_i = 0`, a column never non-zero) the
learner is OPAUC on the rows :math:`\tilde x = D x` with weights :math:`\tilde w =
D^{-1} w`. The class summaries keep the statistics of the raw rows, and the step reads
them in the current scale: the scaled rows' mean is :math:`Dc` and covariance
:math:`DSD`, i.e. every example so far is taken in today's scale (not the scale it
had when it arrived), which is what the summaries of the scaled rows would hold had
the scale been known from the start. The step on :math:`\tilde w`,
:math:`\tilde w \leftarrow (1 - \eta\lambda)\tilde w - \eta D(Sw + \alpha e)` with
:math:`\alpha = e^\top w - y_t` (:math:`e^\top w = \tilde e^\top \tilde w`), is in
the units of the raw columns

.. math::

    w \leftarrow (1 - \eta\lambda)\, w - \eta D^2 (S w + \alpha e) ,

G16 Eq. 8 with a diagonal preconditioner: the same O(d) pass over the opposite
class's :math:`Sw` (``w_`` stays the model in raw units). The example's columns join
the scale after its prequential score and before its step; a column whose scale
grows from s to s' keeps :math:`\tilde w_i` (:math:`w_i \leftarrow w_i s/s'`; the
convention of :mod:`aucstream._running_scale`). Nothing here depends on chunking
(the scale is a running maximum of the examples learnt; an example of weight 0
leaves it). ``merge`` takes the maximum of the two scales and averages the two
models with their scaled weights kept in it. ``from_statistics`` starts the scale
from the next examples (the summaries hold no maxima). Forgetting (``half_life``)
forgets the statistics, not the maxima. ``column_scale=None`` is the papers' OPAUC
bit for bit (the reproduction harness pins it); a file saved before the option
existed loads with None, and so does one of a low-rank kind saved before they had it
(its "auto" then meant None: it has no ``column_scale_``).

The low-rank kinds ("randomized", "hash", "fd") keep their weights in an implicit form
over their sketches (above), which a per-column step :math:`D^2` would leave, and their
sketches can not be read in another scale than the one their rows entered in. They learn
in the running scale another way, which keeps the sketch update of the papers (G13 Eqs.
10-11, G16 Eqs. 14-17 and Alg. 2) as it is: each row enters it already divided by the
running scale, :math:`\tilde x_t = \hat D_t x_t` with :math:`\hat D_t =
\operatorname{diag}(1/\hat s_t)`, the scale as it is after the example joins it: with
``column_scale="max_abs_1"`` (what "auto" means for them) :math:`\hat s_{t,i} = \max(1,
\max_{t' \le t} |x_{t',i}|)`, so that rows inside [-1, 1] (the papers' scaled data,
unit-norm sparse rows, where dividing by a rare feature's one value would inflate the
row) are learnt as they come, bit for bit; with "max_abs" the running maximum itself (1
while it is 0). ``column_scale_`` holds the running maxima either way; the sketches,
class sums and the step (G16 Eq. 8) are those of the papers on the stream :math:`\tilde
x_1, \tilde x_2, \dots`, and the implicit weights are :math:`\tilde w` (of the scaled
rows), ``w_`` = ``coef_`` being :math:`\hat D_t \tilde w` in raw units. Deviations from
the explicit kinds' running scale, and why: (i) a summarized row stays in the scale it
entered with (the explicit kinds read every example in today's scale), since rescaling a
sketch's rows would change every maintained product of the implicit form; the scaled
rows all lie in :math:`[-1, 1]`, which is what keeps G16 Eq. 8's fixed step contracting.
(ii) When an example raises the scale of columns, their weights in raw units are kept
(:math:`\tilde w_i \leftarrow \tilde w_i \hat s'_i/\hat s_i`, before the example's
prequential score and step), not their scaled weights: the kernel scores a row in the
scale it learns it in, and keeping :math:`w_i` makes that score the one of the model
before the example (:math:`\tilde w'^\top \hat D_t x_t = w^\top x_t`). The engine cuts a
chunk before each such example (rare once the maxima are known) and updates v and its
products with the sketches for the grown columns (O(tau) each); the cuts fall on
examples fixed by the stream, so the model does not depend on the chunking. ``merge``
takes the larger scale and averages the weights in raw units (the sketches then sum rows
of both scales, as (i)). ``from_statistics`` starts the scale from the next examples
(the summaries are taken as they are).

Dimension-reduction variants (OPAUC^f, OPAUC^rp, OPAUC^pca) are scikit-learn
pipelines in front of OPAUC: see :mod:`aucstream.reduction`. Random Fourier
features for dense data (G16 §7.2) are in :mod:`aucstream.random_features`.

Example weights
---------------
``sample_weight`` ("full" and "sparse" only). With weights
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
the implicit form of the weights (above) assumes unit additions to
the class sums and counts, and is not extended to them here.

Merging
-------
``merge`` combines two OPAUC learners that learnt disjoint parts of a stream. The
class summaries merge (:meth:`aucstream.covariance.CovarianceSummary.merge`: exact for
"full", the sketch of both streams for "randomized" and "hash", frequent directions'
merge with its error bound for "fd", merge then prune for "sparse"). The weights
combine by examples learnt, :math:`w = (n_1 w_1 + n_2 w_2)/(n_1 + n_2)` with
:math:`n` the examples in a learner's summaries: one-shot parameter averaging
(Zinkevich, Weimer, Smola, Li 2010), not the weights one pass over both streams would
give (those depend on the order of the examples). For the optimum of the objective
over both streams from the merged summaries (exact for "full"), use
:func:`aucstream.covariance.solve_from_statistics` or ``OPAUC.from_statistics``. The
low-rank kinds re-base their implicit weights on the merged sketches (:math:`v = w`,
the products recomputed exactly). The linear sketches merge only when the learners
drew independent random vectors: two learners with the same integer ``random_state``
drew the same :math:`a_i` for their i-th examples, and their summed sketches would
not be a sketch of both streams, so that merge is refused.

Engines
-------
The three ways of learning above (explicit statistics, sparsified statistics that
make room as they grow, implicit weights over low-rank sketches, the last with
frequent directions' shrinks on top) are three engines behind one estimator. The
estimator :class:`OPAUC` (``_learner``) holds the parameters, the state and the
documented interface; every step that depends on ``covariance`` is its engine's, the
object :func:`~aucstream.opauc._learner.engine_for` returns for the kind:

=============  ==========================================  =====================
covariance     engine                                      module
=============  ==========================================  =====================
"full"         ``FullEngine``                              ``_full``
"sparse"       ``SparseEngine``                            ``_sparse``
"randomized"   ``LowRankEngine``                           ``_lowrank``
"hash"         ``LowRankEngine``                           ``_lowrank``
"fd"           ``FrequentDirectionsEngine`` (low-rank +)   ``_fd``
=============  ==========================================  =====================

``_engine`` holds the base ``Engine`` (the defaults, the state checks, merging and
``from_statistics``), :func:`opauc_gradient` and ``ExplicitEngine`` (what "full" and
"sparse" share); ``_kernels`` the compiled steps of both kinds of kernel. An engine
owns its kind's state allocation, update, re-basing and forming of the weights,
merge, loaded-state checks and the declaration of its state (what a call writes by
rows, reads only, keeps bounded, and the state's size: the learner's ``_state_spec``,
made of the engine's ``row_logged_state``, ``row_written_state``, ``written_rows``,
``read_only_state``, ``bounded_state``, ``plan_variant``, ``state_nbytes``) and
``_tags``; the estimator forwards each hook to it, so the base class sees the answers
of the kind.

Engines are **stateless strategy objects**: one instance per kind, shared by every
learner, whose methods take the learner and read and write its state. The engine is
not stored on the learner: it is looked up from ``covariance`` at each use
(``OPAUC._engine``), so the state stays what :mod:`aucstream._state` walks
generically (the attributes ending in ``_``: snapshots, transactions, pickling,
``save_model``, the divergence check) with the same member names as before the split
(saved models load unchanged), and ``set_params(covariance=...)`` can not leave a
stale engine behind. The compiled kernels, ``PREFETCH_BYTES`` and ``run_reserving``
are looked up in this package's namespace when an engine calls them: one place to
instrument or tune them.
"""

from __future__ import annotations

# the names the engines look up here when they call them (package docstring)
from ..covariance import (
    run_reserving,  # noqa: F401
    solve_from_statistics,
)
from ._engine import opauc_gradient
from ._kernels import (  # noqa: F401
    PREFETCH_BYTES,
    _opauc_chunk,
    _opauc_lowrank_chunk,
    _opauc_sparse_chunk,
)
from ._learner import OPAUC, engine_for  # noqa: F401
from ._lowrank import _FORMED  # noqa: F401  (the learners whose w_ is formed)

__all__ = ["OPAUC", "opauc_gradient", "solve_from_statistics"]
