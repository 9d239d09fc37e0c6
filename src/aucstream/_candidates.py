"""The candidates :class:`~aucstream.OnePassSearch` races by default
(:func:`default_candidates`, also importable from :mod:`aucstream.search`)."""

from __future__ import annotations

from ._base import BaseStreamingAUC

__all__ = ["SMALL", "WIDE", "default_candidates"]


#: From this many features on (2^18, a hashed width) the default candidates are the
#: O(d)-state learners only (:func:`default_candidates`).
WIDE = 1 << 18

#: Up to this many features the exact-covariance learners (O(d^2) a step) and OAM
#: (O(N d) a step: its step reads each of its N = 100 buffered rows whole) race; above
#: it their steps cost tens to thousands of times the sketched OPAUC's
#: (:func:`default_candidates`).
SMALL = 1000


def default_candidates(n_features: int) -> list[BaseStreamingAUC]:
    """The default candidates: the online AUC learners over a spread of step sizes.

    The grid is wider than the papers' tuning grids where their optima sat at the
    edges (step sizes down to 2^-12, OAM's C down to 2^-14): behind the online scaler
    every feature has unit variance, and the stable step sizes shrink with the
    dimension. The exact-covariance learners (O(d^2) memory) and OAM are used up to
    :data:`SMALL` (1,000) features; above that OPAUC uses a hashed sketch of 50 columns
    (G16 §7.2), and OAM is left out: its reservoirs hold dense rows, so its step costs
    O(N d), tens to thousands of times the hashed OPAUC's O(k tau) above 1,000 features
    (docs/benchmarks.md, "OAM's step against the width").
    From :data:`WIDE` features on (hashed widths) only the learners whose state is
    O(d) floats and whose step is O(k) for k non-zeros race: SOLAM, FTRL-AUC, SPAM
    and the univariate loss. The sketches and OAM's reservoirs (800 to 1,600 bytes a
    feature each) took 9.3 GB at 10^6 features with the fresh slots of
    ``drift="auto"``, above the default memory budget, and each learns a row in
    O(k tau).

    Parameters
    ----------
    n_features : int
        The dimension of the stream.

    Returns
    -------
    list of BaseStreamingAUC
        Unfitted learners.
    """
    from .adaoam import AdaOAM
    from .oam import OAM
    from .opauc import OPAUC
    from .solam import SOLAM
    from .univariate import UnivariateOnline

    if n_features >= WIDE:
        from .ftrl import FTRLAUC
        from .spam import SPAM

        wide: list[BaseStreamingAUC] = [SOLAM(), FTRLAUC(), SPAM()]
        wide += [SOLAM(R=float(r), column_scale=None) for r in (1, 10, 100)]
        return wide + [UnivariateOnline(loss="log", eta=2.0**k) for k in (-4, -7, -10)]
    small = n_features <= SMALL
    summary: dict = {} if small else {"covariance": "hash", "centering": "exact", "sketch_size": 50}
    # the first (round leader until the first round) learns raw (a bare search) or
    # standardized columns; column_scale=None: for the rows the scaler standardizes
    candidates: list[BaseStreamingAUC] = [OPAUC(eta=2.0**-6) if small else SOLAM()]
    candidates += [OPAUC(eta=2.0**k, column_scale=None, **summary) for k in (-6, -9, -12, -3)]
    if small:  # (AdaOAM() and SOLAM(): in the running scale too, for raw columns)
        candidates += [AdaOAM(eta=2.0**k, column_scale=None) for k in (-3, -6)]
    candidates += [SOLAM(R=float(r), column_scale=None) for r in (1, 10, 100)]
    candidates += [UnivariateOnline(loss="log", eta=2.0**k) for k in (-4, -7, -10)]
    if small:
        candidates += [OAM(update="gra", C=2.0**k, random_state=0) for k in (-8, -14)]
        candidates += [AdaOAM(), SOLAM()]
    return candidates
