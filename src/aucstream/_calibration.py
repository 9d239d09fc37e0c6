r"""Probabilities from scores, learnt in the same pass (online Platt scaling).

AUC learners fix a ranking, not a probability: their scores have no scale of their
own (OPAUC's square pairwise loss, OAM's hinge on pairs). A probability needs a map
from score to :math:`P(y = +1 \mid s)`; Platt (1999) fits
:math:`\sigma(a s + b)` by logistic regression on *held-out* scores, because scores of
the training examples themselves are over-confident.

In a single pass the held-out scores come for free: every online learner reports the
**prequential** score of each example — the score the model gave it *before* learning
from it (:meth:`~aucstream._base.BaseStreamingAUC.test_then_train`). The calibration
is fitted on those, example by example, in the same pass:

.. math::

    z_t = \frac{s_t - m_{t-1}}{\sqrt{v_{t-1}}}, \qquad
    p_t = \sigma(a z_t + b), \qquad
    (a, b) \leftarrow (a, b) - \frac{\eta\, \omega_t (p_t - [y_t = +1])}{\sqrt{G}}
        \odot (z_t, 1),

with the running mean :math:`m` and variance :math:`v` of the scores so far (Welford;
standardizing makes the step size independent of the learner's score scale), example
weight :math:`\omega_t`, and per-coordinate AdaGrad accumulators :math:`G` (Duchi,
Hazan, Singer 2011) with :math:`\eta` = ``ETA``; the slope is kept at least
``A_MIN`` > 0, so the map is increasing and the probabilities rank the examples as
the scores do. Each step uses only earlier
examples, so the map is fitted out of sample; it follows the model as it changes,
weighting recent examples about as much as early ones. The per-example order makes
the result independent of how the stream is cut into chunks.

Probabilities are kept strictly inside (0, 1): before the calibration is ready (both
classes seen, scores with some spread) the probability of every row is the
Laplace-smoothed class prior :math:`(n_+ + 1) / (n + 2)` (1/2 before anything is
learnt), and afterwards the log-odds are capped so that every probability lies in
:math:`[\epsilon, 1 - \epsilon]` with :math:`\epsilon` = ``EPS`` = :math:`10^{-15}`
(the log-odds at most :math:`\log((1 - \epsilon)/\epsilon) \approx 34.5` in size).
An unsmoothed prior (0 or 1 after examples of one class) or a saturated logistic
made the log-loss of early predictions infinite. Rankings are unchanged except among
scores whose log-odds lie beyond the cap (they tie), where float64 probabilities
already rounded to 1 above about 36.7.

A kernel that fits the calibration as it scores can also write, per example, the
decision score (the score minus the threshold :math:`m - b \sqrt{v} / a` whose
probability is 1/2) and the probability it had before the step
(:func:`step_scored`, asked for by :class:`writing`):
:func:`aucstream.evaluation.prequential` then needs no second pass over the scores
(:func:`replay`, which gives the same floats).

Batch learners have no prequential scores: they fit :math:`(a, b)` by Newton's method
on their training scores after the fit (in-sample, as the documentation of their
``predict_proba`` says).

State: one float64 array ``[n, mean, m2, a, b, G_a, G_b, n_pos]`` (weighted counts).

**Operating points.** On rare positives the probability 1/2 is a useless threshold:
nothing scores that high (0 flagged of 40,000 rows of a 0.3%-positive stream). The same
prequential scores also feed two bounded windows (:func:`observe`): the last
:data:`WINDOW` scores of negatives and the last :data:`WINDOW` scores of all examples
(examples of weight 0 excluded), as ring buffers. A target false-positive rate
:math:`r` then gives the threshold :math:`t` = the exact :math:`(1 - r)`-quantile of the
negatives' window (numpy's default linear interpolation), and an alert budget
:math:`r` (the fraction of rows flagged) the :math:`(1 - r)`-quantile of the window of
all scores; a row is flagged when its score exceeds :math:`t`
(:func:`operating_threshold`). Prequential scores are out of sample, so the rates hold
for new rows of a stationary stream, up to the model's change over the window (the
scores of the window come from the models of the last :data:`WINDOW` examples).
State: ``score_window_`` (:func:`new_window`: per row, negatives and all, the count of
scores pushed and the ring); model files written before it existed load with empty
windows.
"""

from __future__ import annotations

import math

import numpy as np

from ._kernels import REASSOC, jit

__all__ = [
    "ETA",
    "EPS",
    "check_state",
    "check_learner",
    "new_state",
    "step",
    "update",
    "fit_batch",
    "probability",
    "is_ready",
    "threshold",
    "threshold_one",
    "logit_map",
    "logistic_state",
    "capped_logistic",
    "replay",
    "replay_maps",
    "step_scored",
    "writing",
    "written_for",
    "WINDOW",
    "new_window",
    "observe",
    "record",
    "window_scores",
    "recent_scores",
    "quantile_cut",
    "operating_threshold",
    "parse_operating_point",
]

#: AdaGrad step size of the calibration (for standardized scores).
ETA = 0.5
#: Smallest slope: the map stays increasing, so probabilities rank the examples exactly
#: as the scores do (same AUC), even when the scores carry no signal yet.
A_MIN = 1e-3
#: Every probability lies in ``[EPS, 1 - EPS]``: the log-odds are capped (a logistic
#: saturates to exactly 0 or 1 in float64, an infinite log-loss).
EPS = 1e-15
#: Scores kept in each operating-point window (negatives, all examples).
WINDOW = 2048
_N, _MEAN, _M2, _A, _B, _GA, _GB, _NPOS = range(8)
_SIZE = 8


def check_state(state: np.ndarray) -> str | None:
    """What a loaded calibration state breaks of its invariants (a weighted count
    ``n >= 0`` with ``0 <= n_+ <= n``, ``m2 >= 0``, the slope ``a >= A_MIN``, AdaGrad
    sums ``>= 0``), or None: a slope of 0 divided by zero in :func:`threshold`."""
    n, _, m2, a, _, g_a, g_b, n_pos = state.tolist()
    if not (n >= 0 and 0 <= n_pos <= n):
        return f"counts n = {n!r}, n_pos = {n_pos!r} (0 <= n_pos <= n)"
    if not m2 >= 0:
        return f"m2 = {m2!r} < 0"
    if not a >= A_MIN:
        return f"slope a = {a!r} < A_MIN = {A_MIN}"
    if not (g_a >= 0 and g_b >= 0):
        return f"AdaGrad sums {g_a!r}, {g_b!r} < 0"
    return None


def check_learner(model) -> tuple[str, str] | None:
    """``(member, problem)`` for the first calibration state of a loaded learner, of a
    pipeline's estimator or of a search's candidates that breaks its invariants
    (:func:`check_state`), or None."""
    learners = [("", model)]
    members = vars(model)  # not the pipeline's estimator_ property: it learns held rows
    if members.get("estimator_") is not None:
        learners.append(("estimator_.", members["estimator_"]))
    for i, candidate in enumerate(members.get("candidates_") or ()):
        learners.append((f"candidates_/{i}.", candidate))
    for prefix, learner in learners:
        state = getattr(learner, "calibration_", None)
        if isinstance(state, np.ndarray) and state.shape == (_SIZE,):
            problem = check_state(state)
            if problem is not None:
                return f"state/{prefix}calibration_", problem
    return None


def new_state() -> np.ndarray:
    """The calibration of a learner that has seen nothing (the identity map a=1, b=0)."""
    state = np.zeros(_SIZE)
    state[_A] = 1.0
    return state


@jit(fastmath=REASSOC)
def _sigmoid(t):
    if t >= 0.0:
        return 1.0 / (1.0 + math.exp(-t))
    e = math.exp(t)
    return e / (1.0 + e)


@jit(fastmath=REASSOC)
def step(state, s, y, w):
    """Fit the calibration on one prequential score ``s`` of label ``y`` (+/-1) and
    weight ``w`` (:func:`update`'s step; a weight of 0 changes nothing).

    Compiled on its own (no fast-math flags): a kernel that calls it per example as
    it scores (a learner with ``_tags.kernel_calibrates``) gets the arithmetic of
    :func:`update` bit for bit, and the step's chain of dependent divisions and square
    roots overlaps the kernel's own work.
    """
    if w == 0.0:
        return
    n = state[_N]
    if n > 0.0 and state[_M2] > 0.0:
        z = (s - state[_MEAN]) / math.sqrt(state[_M2] / n)
        _fit(state, s, y, w, True, z, _sigmoid(state[_A] * z + state[_B]))
    else:
        _fit(state, s, y, w, False, 0.0, 0.0)


@jit(fastmath=REASSOC)
def _fit(state, s, y, w, ready, z, q):
    """:func:`step` given the standardized score ``z`` and ``q = sigmoid(a z + b)``
    when ``ready`` (scores to standardize by); :func:`replay` shares ``q`` with the
    probability it writes."""
    target = 1.0 if y > 0 else 0.0
    if ready:
        g = w * (q - target)
        state[_GA] += (g * z) ** 2
        state[_GB] += g * g
        if state[_GA] > 0.0:  # a stays positive: probabilities rank as the scores
            state[_A] = max(state[_A] - ETA * g * z / math.sqrt(state[_GA]), A_MIN)
        if state[_GB] > 0.0:  # no step before the first non-zero gradient
            state[_B] -= ETA * g / math.sqrt(state[_GB])
    n_new = state[_N] + w  # weighted Welford
    delta = s - state[_MEAN]
    state[_MEAN] += delta * w / n_new
    state[_M2] += w * delta * (s - state[_MEAN])
    state[_N] = n_new
    state[_NPOS] += w * target


@jit
def update(state, scores, y_pm, weights):
    """Fit the calibration on prequential ``scores`` of +/-1 labels, in order.

    ``weights`` is empty (all ones) or one non-negative weight per example.
    """
    weighted = weights.shape[0] > 0
    for r in range(scores.shape[0]):
        step(state, scores[r], y_pm[r], weights[r] if weighted else 1.0)


def fit_batch(state: np.ndarray, scores: np.ndarray, y_pm: np.ndarray, weights) -> None:
    """Platt scaling on a batch learner's training scores (Newton's method, in place)."""
    w = np.ones_like(scores) if weights is None or len(weights) == 0 else np.asarray(weights)
    n = float(w.sum())
    target = (y_pm > 0).astype(np.float64)
    mean = float(np.dot(w, scores) / n) if n > 0 else 0.0
    m2 = float(np.dot(w, (scores - mean) ** 2))
    state[:] = new_state()
    state[_N], state[_MEAN], state[_M2], state[_NPOS] = n, mean, m2, float(np.dot(w, target))
    if n == 0 or m2 <= 0:
        return
    z = (scores - mean) / math.sqrt(m2 / n)
    Z = np.column_stack([z, np.ones_like(z)])
    theta = np.array([1.0, 0.0])
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(Z @ theta, -500, 500)))
        grad = Z.T @ (w * (p - target)) + 1e-6 * theta
        hess = (Z * (w * p * (1 - p))[:, None]).T @ Z + 1e-6 * np.eye(2)
        step = np.linalg.solve(hess, grad)
        theta -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    state[_A], state[_B] = max(theta[0], A_MIN), theta[1]


def is_ready(state: np.ndarray) -> bool:
    """Whether the calibration has seen scores of both classes with some spread."""
    return _ready(state.tolist())


def _ready(values: list) -> bool:
    """:func:`is_ready` of the state as Python floats (compiled in
    :func:`probability_one`, which numba keeps apart)."""
    return 0 < values[_NPOS] < values[_N] and values[_M2] > 0


def threshold(state: np.ndarray) -> float:
    """The score whose calibrated probability is 1/2 (0 before calibration is ready).

    On Python floats (one ``tolist``): the same IEEE operations as on numpy's
    float64 scalars, in a quarter of the time (a one-row prediction's threshold)."""
    values = state.tolist()
    if not _ready(values):
        return 0.0
    n, mean, m2, a, b = values[: _B + 1]
    return mean - b * math.sqrt(m2 / n) / a


def logit_map(state: np.ndarray) -> tuple[float, float]:
    """``(slope, offset)`` with the calibrated log-odds ``slope * score + offset``
    (a ready calibration; :func:`is_ready`)."""
    sd = math.sqrt(state[_M2] / state[_N])
    return float(state[_A] / sd), float(state[_B] - state[_A] * state[_MEAN] / sd)


def logistic_state() -> np.ndarray:
    """A ready calibration that is the logistic function itself: scores are log-odds."""
    state = new_state()
    state[_N], state[_M2], state[_NPOS] = 2.0, 2.0, 1.0
    return state


def probability(state: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """``P(y = +1 | score)`` for each score (the Laplace-smoothed class prior before
    calibration is ready), in ``[EPS, 1 - EPS]``.

    One compiled pass (:func:`_probabilities`, the logistic as the kernels' steps
    compute it): a call for one score costs a fraction of numpy's expression on a
    one-element array (``predict_proba_one`` in ``benchmarks/bench_base.py``, reported
    in docs/benchmarks.md).
    """
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    out = np.empty_like(scores)
    _probabilities(state, scores.reshape(-1), out.reshape(-1))
    return out


@jit
def _probabilities(state, scores, out):
    """``out[i] = P(y = +1 | scores[i])`` (see :func:`probability`)."""
    for i in range(scores.shape[0]):
        out[i] = probability_one(state, scores[i])


@jit
def threshold_one(state):
    """:func:`threshold` compiled (the same IEEE operations): the score whose
    calibrated probability is 1/2, 0.0 before the calibration is ready."""
    n, m2 = state[_N], state[_M2]
    if not (0.0 < state[_NPOS] < n and m2 > 0.0):
        return 0.0
    return state[_MEAN] - state[_B] * math.sqrt(m2 / n) / state[_A]


@jit
def probability_one(state, score):
    """``P(y = +1 | score)`` of one score (float), as :func:`probability` gives it:
    the Laplace-smoothed prior before calibration is ready, always in
    ``[EPS, 1 - EPS]``. Compiled, so that a one-row prediction costs a compiled call
    and not an array's round trip."""
    n = state[_N]
    if not (0.0 < state[_NPOS] < n and state[_M2] > 0.0):  # not ready: the prior
        return _capped((state[_NPOS] + 1.0) / (n + 2.0))
    sd = math.sqrt(state[_M2] / n)
    return _capped(_sigmoid(state[_A] * ((score - state[_MEAN]) / sd) + state[_B]))


@jit
def _capped(p):
    """``p`` in ``[EPS, 1 - EPS]`` (the log-odds capped at about +/-34.5)."""
    return min(max(p, EPS), 1.0 - EPS)


@jit
def _capped_logistics(scores, out):
    for i in range(scores.shape[0]):
        out[i] = _capped(_sigmoid(scores[i]))


def capped_logistic(scores) -> np.ndarray:
    """``1 / (1 + exp(-s))`` of each score, in ``[EPS, 1 - EPS]``: the probability
    given to a model's scores when it has no calibrated ``predict_proba`` (the scores
    taken as log-odds, e.g. by :class:`aucstream.river.RiverClassifier` and
    :func:`aucstream.evaluation.prequential`)."""
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    out = np.empty_like(scores)
    _capped_logistics(scores.reshape(-1), out.reshape(-1))
    return out


@jit
def replay(state, scores, y_pm, decision, proba, weights):
    """Replay the calibration over prequential ``scores`` of +/-1 labels and
    ``weights`` (in place, as :func:`update`; ``weights`` empty: all 1), writing for
    each example ``i`` the decision score ``score - threshold``
    (:func:`threshold_one`) into ``decision[i]`` and the probability
    (:func:`probability_one`) into ``proba[i]`` that the learner gave it before
    learning it: what ``decision_function`` and ``predict_proba`` returned then
    (:func:`step_scored`, example by example). Used by
    :func:`aucstream.evaluation.prequential` after ``test_then_train``, with the two
    rows of a ``(2, n)`` view of its score block (contiguous, where the view is not:
    one signature whatever the view; :func:`written_for`), and with the weights of
    the rows a delay weaves together (:mod:`aucstream.evaluation._prequential_weave`:
    an example of weight 0 is scored, not learnt)."""
    weighted = weights.shape[0] > 0
    for i in range(scores.shape[0]):
        w = weights[i] if weighted else 1.0
        decision[i], proba[i] = step_scored(state, scores[i], y_pm[i], w)


@jit
def replay_maps(state, scores, y_pm, weights, out):
    """:func:`replay` (``weights`` empty: all 1), also writing for each example ``i``
    the map of the calibrated log-odds the learner had before learning it:
    ``out[2, i]`` 1.0 when the calibration was ready (:func:`is_ready`), else 0.0, and
    then ``out[3, i]``, ``out[4, i]`` the slope and offset of :func:`logit_map` (the
    same IEEE operations). What :class:`~aucstream.OnePassSearch`'s ensemble averaged
    before each example (:mod:`aucstream._search_scores`)."""
    weighted = weights.shape[0] > 0
    for i in range(scores.shape[0]):
        n, m2, n_pos = state[_N], state[_M2], state[_NPOS]
        if 0.0 < n_pos < n and m2 > 0.0:
            sd = math.sqrt(m2 / n)
            out[2, i] = 1.0
            out[3, i] = state[_A] / sd
            out[4, i] = state[_B] - state[_A] * state[_MEAN] / sd
        else:
            out[2, i], out[3, i], out[4, i] = 0.0, 0.0, 0.0
        w = weights[i] if weighted else 1.0
        out[0, i], out[1, i] = step_scored(state, scores[i], y_pm[i], w)


@jit(fastmath=REASSOC)
def step_scored(state, s, y, w):
    """:func:`step`, returning ``(decision score, probability)`` the learner gave the
    score ``s`` before learning it (:func:`threshold_one`, :func:`probability_one`:
    the same IEEE operations): what :func:`replay` writes, so that
    :func:`aucstream.evaluation.prequential` needs no replay (:class:`writing`). The
    caller stores the pair: the call passes what :func:`step` is passed, not an output
    array too (fewer arguments and saved registers per row; measured with
    ``benchmarks/bench_prequential.py --paired``)."""
    n, mean, m2, a, b, n_pos = (
        state[_N],
        state[_MEAN],
        state[_M2],
        state[_A],
        state[_B],
        state[_NPOS],
    )
    if 0.0 < n_pos < n and m2 > 0.0:  # the step's sigmoid is the probability's
        sd = math.sqrt(m2 / n)
        z = (s - mean) / sd
        q = _sigmoid(a * z + b)
        decision = s - (mean - b * sd / a)
        if w != 0.0:
            _fit(state, s, y, w, True, z, q)
        return decision, _capped(q)
    step(state, s, y, w)
    return s - 0.0, _capped((n_pos + 1.0) / (n + 2.0))


#: The learner's attribute holding the request of :class:`writing` while it stands
#: (no trailing underscore: not state; removed when the request ends).
_REQUEST = "_calibration_request"
_NOT_WRITTEN = (np.empty(0), np.empty(0))  # (empty: the kernel writes nothing)
#: The weights of :func:`replay` when every example weighs 1.
NO_WEIGHTS = np.empty(0)


class writing:
    """Ask ``learner``'s next kernel call of ``out.shape[1]`` examples with prequential
    scores to write their decision scores and probabilities into ``out`` (shape
    ``(2, n)``, :func:`step_scored`); a context manager whose ``as`` target is a list
    whose one item tells, afterwards, whether a kernel took the request (learners whose
    kernel does not write, or a call of another size, leave it False: then replay the
    calibration). ``learner`` None asks nothing.

    The request stands on the learner itself (an attribute named :data:`_REQUEST`,
    removed on exit, the one it replaced put back), not in a thread-local: the
    learner's kernel reads it from the learner it runs for, and a learner is not
    learnt by two threads at once. A class rather than a generator-based context
    manager: it is entered once per chunk of :func:`aucstream.evaluation.prequential`.
    """

    __slots__ = ("learner", "out", "taken", "before")

    def __init__(self, learner, out: np.ndarray) -> None:
        self.learner, self.out, self.taken = learner, out, [False]
        self.before = None

    def ask(self, learner, out: np.ndarray) -> writing:
        """This request again, of ``learner`` into ``out``, not yet taken: one object
        for the calls of a run (:func:`aucstream.evaluation.prequential`'s chunks)."""
        self.learner, self.out = learner, out
        self.taken[0] = False
        return self

    def __enter__(self) -> list[bool]:
        learner = self.learner
        if learner is not None:
            values = vars(learner)
            self.before = values.get(_REQUEST)
            values[_REQUEST] = self
        return self.taken

    def __exit__(self, *exc) -> None:
        learner = self.learner
        if learner is not None:
            values = vars(learner)
            if self.before is None:
                values.pop(_REQUEST, None)
            else:
                values[_REQUEST] = self.before


def written_for(learner, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The two rows of the ``(2, n)`` array a learner's kernel writes into
    (:class:`writing`; its decision scores, its probabilities), taken once; two empty
    arrays when there is no request for this learner and size.

    Rows, not the array: the array asked for is a view of the columns of a wider block
    (:class:`aucstream.evaluation._prequential_parts.ScoreBlock`), not contiguous,
    whose type would compile the kernel a second time; its rows are contiguous."""
    request = learner.__dict__.get(_REQUEST)
    if request is None or request.taken[0] or request.out.shape[1] != n:
        return _NOT_WRITTEN
    request.taken[0] = True
    out = request.out
    return out[0], out[1]


def new_window() -> np.ndarray:
    """Empty operating-point windows, shape ``(2, WINDOW + 1)``: row 0 the negatives,
    row 1 all examples; column 0 counts the scores pushed into the row (a float, exact
    below 2**53), the ring of the last ``WINDOW`` scores follows."""
    return np.zeros((2, WINDOW + 1))


@jit
def _push(window, scores, y_pm, weights):
    """Push each prequential score of non-zero weight into the rings of ``window``
    (:func:`new_window`)."""
    weighted = weights.shape[0] > 0
    size = window.shape[1] - 1
    for r in range(scores.shape[0]):
        if weighted and weights[r] == 0.0:
            continue
        if y_pm[r] < 0:
            n = window[0, 0]
            window[0, 1 + np.int64(n) % size] = scores[r]
            window[0, 0] = n + 1.0
        n = window[1, 0]
        window[1, 1 + np.int64(n) % size] = scores[r]
        window[1, 0] = n + 1.0


@jit
def observe(state, window, scores, y_pm, weights):
    """:func:`update` of the calibration on prequential ``scores`` of +/-1 labels, then
    their push into the operating-point ``window`` (module docstring): one compiled
    call of the learning step."""
    update(state, scores, y_pm, weights)
    _push(window, scores, y_pm, weights)


@jit
def record(window, scores, y_pm, weights):
    """The push of :func:`observe` alone, for a learner whose kernel fitted the
    calibration (``_tags.kernel_calibrates``)."""
    _push(window, scores, y_pm, weights)


def learnt(learner, scores: np.ndarray, y_pm: np.ndarray, weights: np.ndarray) -> None:
    """After a learning step whose kernel wrote the prequential ``scores``: the
    learner's calibration learns them (unless its kernel fitted it,
    ``_tags.kernel_calibrates``) and its operating-point windows take them. (The
    per-example entry decides which once, :class:`aucstream._runtime._entry.OneStep`.)"""
    if learner._tags.kernel_calibrates:
        record(learner.score_window_, scores, y_pm, weights)
    else:
        observe(learner.calibration_, learner.score_window_, scores, y_pm, weights)


def window_scores(window: np.ndarray, which: int) -> np.ndarray:
    """The scores held by row ``which`` of ``window`` (0: negatives, 1: all), in ring
    order (a view)."""
    filled = int(min(window[which, 0], window.shape[1] - 1))
    return window[which, 1 : 1 + filled]


def recent_scores(windows: list[np.ndarray], kind: str) -> list[np.ndarray]:
    """The scores of the last rows that every window of ``windows`` holds, in the
    order they came (oldest first), from the row of ``kind`` ("fpr": the negatives;
    "alert_rate": all): windows pushed the same rows last (learners that learnt the
    same stream, :class:`aucstream.OnePassSearch`'s alive candidates), so the k-th
    score of each is one row's. Empty arrays when a window holds none."""
    which = _KINDS[kind]
    size = windows[0].shape[1] - 1
    common = min(min(int(w[which, 0]), size) for w in windows)
    out = []
    for w in windows:
        n = int(w[which, 0])
        out.append(w[which, 1 + np.arange(n - common, n) % size])
    return out


def quantile_cut(scores: np.ndarray, kind: str, rate: float) -> float:
    """The exact ``(1 - rate)``-quantile of ``scores`` (numpy's linear interpolation):
    the cut of an operating point of ``kind`` (:func:`operating_threshold`). Raises
    ``ValueError`` when there is no score."""
    if scores.size == 0:
        whose = "negatives" if _KINDS[kind] == 0 else "examples"
        raise ValueError(
            f"no prequential scores of {whose} yet: a threshold for {kind}={rate} needs "
            "an online learner that has learnt some (fit, partial_fit or test_then_train)"
        )
    return float(np.quantile(scores, 1.0 - rate))


_KINDS = {"fpr": 0, "alert_rate": 1}


def parse_operating_point(threshold) -> tuple[str, float]:
    """``("fpr" | "alert_rate", rate)`` of ``"fpr:R"`` / ``"alert_rate:R"``, or
    ``("score", t)`` of a real ``t``; a clear ``ValueError``/``TypeError`` otherwise."""
    if isinstance(threshold, (bool, np.bool_)):
        raise TypeError(
            f"threshold must be a number or a string such as 'fpr:0.01', got {threshold!r}"
        )
    if isinstance(threshold, str):
        kind, sep, text = threshold.partition(":")
        kind = kind.strip()
        if not sep or kind not in _KINDS:
            raise ValueError(
                f"threshold {threshold!r}: expected 'fpr:R' (a false-positive rate) or "
                "'alert_rate:R' (the fraction of rows flagged), R in (0, 1)"
            )
        try:
            rate = float(text)
        except ValueError:
            raise ValueError(f"threshold {threshold!r}: {text.strip()!r} is not a number") from None
        if not 0.0 < rate < 1.0:  # NaN fails too
            raise ValueError(f"threshold {threshold!r}: the rate must lie in (0, 1), got {rate}")
        return kind, rate
    try:
        value = float(threshold)
    except (TypeError, ValueError):
        raise TypeError(
            f"threshold must be a number or a string such as 'fpr:0.01', got {threshold!r}"
        ) from None
    if not math.isfinite(value):
        raise ValueError(f"threshold must be finite, got {value}")
    return "score", value


def operating_threshold(window: np.ndarray, kind: str, rate: float) -> float:
    """The score above which a row is flagged for a target false-positive rate
    (``kind="fpr"``) or alert rate (``"alert_rate"``): the exact ``(1 - rate)``-quantile
    of the window's scores (numpy's linear interpolation). Raises ``ValueError`` when
    the window is empty."""
    return quantile_cut(window_scores(window, _KINDS[kind]), kind, rate)
