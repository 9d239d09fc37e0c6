r"""Online feature scaling that works inside the single pass.

The one-pass learners assume bounded instances (:math:`\|x_t\| \le 1` in G13 §4,
Theorem 2), and the papers' experiments scale every feature to [-1, 1] first (G13 §6.1).
Finding a feature's range needs the whole file, which breaks the one-pass promise;
without any scaling the learners diverge on a stream with one column in the hundreds.
:class:`OnlineStandardScaler` learns the scale as the stream goes, and its
:meth:`~OnlineStandardScaler.partial_fit_transform` transforms every row with the
statistics of the rows *before* it, so it never uses the future.

Usage inside a stream::

    scaler, model = OnlineStandardScaler(), OPAUC()
    for X, y in chunks:
        model.partial_fit(scaler.partial_fit_transform(X), y, classes=[-1, 1])
    scores = model.decision_function(scaler.transform(X_test))
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeAlias

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import _state
from .._chunks import (
    check_sparse_structure,
    csr_arrays,
    dict_row,
    dict_row_values,
    plain_rows,
)
from .._fastpath import validate_params_once
from .._kernels import read_only_view
from .._params import (
    FORGETTING,
    InvalidParameterError,
    StrOptions,
    check_parameters,
    decay_per_example,
    positive,
)
from ._standard_kernels import (
    _RUNNING_DTYPES,
    EVERY_ROW,
    _columns,
    _merge_columns,
    _Options,
    _pass_csr,
    _pass_dense,
    _Stats,
    _weight,
)
from ._standard_one import one_csr, one_dense

__all__ = ["OnlineStandardScaler"]

_Sparse: TypeAlias = sp.spmatrix | sp.sparray


def _refuse_overflow(where: str | None, X) -> None:
    """Raise ``FloatingPointError`` when the statistics at ``where`` (a path, from
    :func:`aucstream._state.first_non_finite`) overflowed on the chunk ``X``."""
    if where is not None:
        raise FloatingPointError(
            f"the running statistics {where} overflowed on a chunk whose largest "
            f"value is {float(abs(X).max()):.3g}; the chunk was not learnt"
        )


class OnlineStandardScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    r"""Standardize features with running statistics, inside the single pass.

    Keeps, for every column, the number of rows seen, their mean and their sum of
    squared deviations, updated one row at a time. Used *prequentially*
    (:meth:`partial_fit_transform`: transform each row, then learn it), it scales a
    stream for a one-pass learner without reading the stream twice and without using
    any row's future; :meth:`fit` / :meth:`transform` follow scikit-learn's
    ``StandardScaler`` (fit on all rows, then transform).

    Parameters
    ----------
    with_mean : "auto" or bool, default="auto"
        Subtract the running mean. ``"auto"`` centers a stream whose first chunk is
        dense and does not center one whose first chunk is sparse; the choice is made
        on the first chunk and kept (``with_mean_``). ``True`` with sparse input is an
        error: centering would make every implicit zero nonzero.
    with_std : bool, default=True
        Divide by the running standard deviation.
    clip : float > 0 or None, default=10.0
        Clip every transformed value to ``[-clip, clip]``; ``None`` does not clip. See
        the notes for the default.
    half_life : float > 0 or None, default=None
        Forget: a row seen ``half_life`` rows ago weighs half as much as the latest in
        the mean and the variance (the library's one meaning of ``half_life``,
        :data:`aucstream._params.FORGETTING`; see the notes). ``None`` keeps the exact
        statistics of every row. :class:`aucstream.StreamPipeline` uses a forgetting
        scaler when its ``drift`` is on.

    Attributes
    ----------
    n_samples_seen_ : int
        Rows learnt so far.
    n_features_in_ : int
        Number of columns.
    feature_names_in_ : ndarray of str
        Column names, when the first chunk had string column names.
    with_mean_ : bool
        Whether the scaler centers (``with_mean``, with ``"auto"`` resolved on the
        first chunk).
    running_count_ : ndarray of int64, shape (n_features,)
        Column ``j``'s running statistics summarize its first ``running_count_[j]``
        rows; a sparse column catches up with the zeros of the rows that skipped it
        when it is next touched or read (see the notes). Read :attr:`mean_` and
        :attr:`var_` rather than the running arrays.
    running_mean_ : ndarray of float64, shape (n_features,)
        Mean of those rows.
    running_m2_ : ndarray of float64, shape (n_features,)
        Sum of their squared deviations from that mean.

    See Also
    --------
    sklearn.preprocessing.StandardScaler : The same statistics, in batch.
    MinMaxScalerPM1 : Scaling to [-1, 1] by the range (needs the
        range of the whole stream first).

    Notes
    -----
    **Transform.** For row :math:`t` (counting from 0), with :math:`n = t` rows
    before it whose column :math:`j` has mean :math:`\mu_j` and population variance
    :math:`\sigma_j^2 = M_j / n` (divisor :math:`n`, as in scikit-learn),

    .. math::

        z_{tj} = \operatorname{clip}\Big(\frac{x_{tj} - \mu_j}{\sigma_j}\Big),

    with :math:`\mu_j = 0` when not centering and :math:`\sigma_j = 1` when not
    scaling. :meth:`transform` uses the statistics of all rows learnt so far.

    **Columns with no spread map to 0.** A column with no usable scale yet — fewer than
    two rows, or a variance within rounding error of zero,
    :math:`\sigma_j^2 \le n\varepsilon\sigma_j^2 + (n\varepsilon\mu_j)^2` (the bound
    scikit-learn uses to call a column constant) — transforms to 0, whatever its
    value. scikit-learn divides such a column by 1 instead, which is harmless when the
    column is constant on all the data; in a stream, a column constant for 1,000 rows
    may then jump to 500, and dividing by 1 would hand the learner exactly the
    unscaled value that makes it diverge. 0 says "no information yet" (the batch
    min-max scaling of the papers' protocols also maps constant features to 0); the
    column counts from the row after its first change on. When centering without
    scaling, a column maps to 0 only before its first row. :meth:`inverse_transform`
    maps such columns back to their mean, their value so far.

    **Clipping.** Early in a stream the statistics come from a few rows, and the next
    row can lie far outside them: a binary column that was 1 once in 1,000 rows
    standardizes its next 1 to about 31.6, and a column whose only spread is a
    rounding error can give :math:`10^9`. A finite ``clip`` bounds every transformed
    value, hence the step any single row can cause in a learner, and restores the
    bounded instances the analyses assume (:math:`\|z\|_2 \le \mathrm{clip}\sqrt d`).
    The default 10 rarely touches settled data: by Chebyshev's inequality, at most
    1% of any distribution lies more than 10 standard deviations from its mean, and a
    Gaussian column essentially never does (probability about :math:`10^{-23}`).
    ``clip=None`` gives exact standardization, as scikit-learn's. Clipped values do
    not invert.

    **Updates.** One formula updates the statistics (Chan, Golub & LeVeque's pairwise
    update): two disjoint sets of rows with :math:`(n_a, \mu_a, M_a)` and
    :math:`(n_b, \mu_b, M_b)` pool to

    .. math::

        n = n_a + n_b, \quad \delta = \mu_b - \mu_a, \quad
        \mu = \mu_a + \delta\,\frac{n_b}{n}, \quad
        M = M_a + M_b + \delta^2\,\frac{n_a n_b}{n}.

    A row is :math:`(1, x, 0)` (this is Welford's stable one-pass update); the zeros of
    the :math:`k` rows a sparse column skipped are :math:`(k, 0, 0)`, absorbed when the
    column is next touched or read, so a sparse row costs O(nnz) and not O(d); and
    :meth:`merge` pools two scalers that saw disjoint parts of a stream.

    Rows are processed one at a time in one compiled loop and the pending zeros are
    never flushed at the end of a call, so the results do not depend on how the
    stream is split into chunks, bit for bit. Dense and sparse input of the same rows
    agree to rounding (explicit zeros are learnt one by one, implicit ones in runs).

    **Forgetting.** With ``half_life`` :math:`h`, each row shrinks the weight of every
    earlier row by :math:`\gamma = 2^{-1/h}`
    (:func:`aucstream._params.decay_per_example`): after :math:`n` rows the weights are
    :math:`\gamma^{n-1-i}` for row :math:`i`, of total
    :math:`W_n = (1 - \gamma^n)/(1 - \gamma)` (the same for every column, its implicit
    zeros included), and :math:`\mu_j`, :math:`\sigma_j^2 = M_j / W_n` are the weighted
    mean and variance. The same pairwise update holds with weights (West 1979): the older
    set's weight and :math:`M` fade by :math:`\gamma^{k}` for the :math:`k` newer rows,
    then :math:`\mu = \mu_a + \delta w_b / w` and
    :math:`M = M_a + M_b + \delta^2 w_a w_b / w`; a sparse column's skipped zeros are
    one set of weight :math:`W_k`. So forgetting keeps the O(nnz) sparse rows and the
    chunk invariance. :meth:`merge` of forgetting scalers puts the other scaler's rows
    after this one's (the weights need an order): the statistics of the two streams
    one after the other.

    **Sparse input** is never densified: it is scaled, not centered, and keeps its
    sparsity structure (a column with no usable scale gives stored zeros). CSC input
    gives CSC output. Every output is float64. The state is numpy arrays and scalars
    only, so a pickled scaler resumes its stream exactly.

    References
    ----------
    .. [1] B. P. Welford. Note on a method for calculating corrected sums of squares
       and products. *Technometrics* 4(3):419-420, 1962.
    .. [2] T. F. Chan, G. H. Golub, R. J. LeVeque. Updating formulae and a pairwise
       algorithm for computing sample variances. Technical report STAN-CS-79-773,
       Stanford University, 1979.
    .. [3] T. F. Chan, G. H. Golub, R. J. LeVeque. Algorithms for computing the sample
       variance: analysis and recommendations. *The American Statistician*
       37(3):242-247, 1983.
    .. [4] D. H. D. West. Updating mean and variance estimates: an improved method.
       *Communications of the ACM* 22(9):532-535, 1979.

    Examples
    --------
    Prequential use: each row is scaled by the rows before it. The second column is
    constant for three rows, so it maps to 0 even when it jumps to 500:

    >>> import numpy as np
    >>> from aucstream.preprocessing import OnlineStandardScaler
    >>> X = np.array([[1.0, 10.0], [3.0, 10.0], [5.0, 10.0], [9.0, 500.0]])
    >>> scaler = OnlineStandardScaler()
    >>> scaler.partial_fit_transform(X[:2])
    array([[0., 0.],
           [0., 0.]])
    >>> scaler.partial_fit_transform(X[2:])
    array([[3.        , 0.        ],
           [3.67423461, 0.        ]])
    >>> scaler.mean_
    array([  4.5, 132.5])

    After the stream, :meth:`transform` uses every row, like scikit-learn:

    >>> scaler.transform([[4.5, 132.5]])
    array([[0., 0.]])
    >>> OnlineStandardScaler(clip=None).fit_transform(X).round(3)
    array([[-1.183, -0.577],
           [-0.507, -0.577],
           [ 0.169, -0.577],
           [ 1.521,  1.732]])
    """

    # fitted state (set by partial_fit; the pieces merge checks)
    n_features_in_: int
    n_samples_seen_: Any
    with_mean_: bool | None

    _parameter_constraints: ClassVar[dict[str, list]] = {
        "with_mean": [StrOptions({"auto"}), "boolean"],
        "with_std": ["boolean"],
        "clip": [None, positive()],
        **FORGETTING,
    }
    #: ``fit``, ``partial_fit`` and ``partial_fit_transform``, inside a ``Journalled``
    #: block, journal what undoes them (:func:`aucstream._runtime.journals_calls`:
    #: a pipeline's transaction then does not copy the statistics);
    #: ``partial_fit_transform_one`` does not, and is called outside such blocks.
    _journals_calls: ClassVar[bool] = True

    def __init__(
        self,
        with_mean: str | bool = "auto",
        with_std: bool = True,
        clip: float | None = 10.0,
        half_life: float | None = None,
    ):
        self.with_mean = with_mean
        self.with_std = with_std
        self.clip = clip
        self.half_life = half_life

    # ------------------------------------------------------------- public API
    def partial_fit_transform(
        self, X: ArrayLike, y: ArrayLike | None = None, *, learnt: ArrayLike | None = None
    ) -> np.ndarray | _Sparse:
        """Prequential step: transform each row with the rows before it, then learn it.

        Row ``i`` of the result uses the statistics of every row learnt before it —
        the earlier calls' and this chunk's rows ``0 .. i-1`` — and never its own or a
        later row, so the call fits inside the one pass of an online learner. The
        result does not depend on how the stream is cut into chunks.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The next chunk of the stream (dense, CSR or CSC).
        y : None
            Ignored.
        learnt : array-like of bool of shape (n_samples,), optional
            Which rows to learn (default: every row). A row not learnt is transformed
            with the statistics of the rows learnt before it and changes nothing
            (``n_samples_seen_`` counts the rows learnt): what a
            :class:`~aucstream.StreamPipeline` does with the rows of weight 0 of a
            weighted call.

        Returns
        -------
        ndarray or sparse matrix of shape (n_samples, n_features)
            The transformed chunk (float64; sparse input keeps its format and
            structure).
        """
        if learnt is None:
            return self._learn(X, reset=False, emit=True)
        mask = np.asarray(learnt)
        if mask.dtype != np.bool_ or mask.ndim != 1:  # (its length: checked by _pass)
            raise ValueError(
                "learnt must be a 1-D boolean array with one entry per row of X, got "
                f"{mask.dtype} of shape {mask.shape}"
            )
        return self._learn(X, reset=False, emit=True, learnt=np.ascontiguousarray(mask))

    def partial_fit_transform_one(self, x: dict | np.ndarray) -> dict | np.ndarray:
        """:meth:`partial_fit_transform` of one example: transform it with the rows
        before it, then learn it.

        The row's values go through the compiled pass of
        :meth:`partial_fit_transform` (the same arithmetic, so the same values bit for
        bit), with the checks of a one-row call in a few compiled calls: a call on a
        fitted scaler pays no scikit-learn validation and no copy of the statistics
        (only the row's columns are saved, and put back if the statistics overflow).
        Anything else (a first row, values beyond the plain range) goes through
        :meth:`partial_fit_transform` itself, which converts or refuses it as usual. A
        refused example changes nothing.

        Parameters
        ----------
        x : dict or array-like of shape (n_features,)
            The example: ``{feature index: value}`` (missing indices are 0; a sparse
            row, so the scaler must not center), or a 1-D array.

        Returns
        -------
        dict or ndarray of shape (n_features,)
            The transformed example: a dict of the same keys (in increasing order) for
            a dict, else a 1-D float64 array.

        Examples
        --------
        >>> import numpy as np
        >>> from aucstream.preprocessing import OnlineStandardScaler
        >>> scaler = OnlineStandardScaler(with_mean=False).partial_fit(np.eye(3))
        >>> scaler.partial_fit_transform_one({2: 1.0})  # scaled by the rows before it
        {2: 2.1213203435596424}
        """
        if type(x) is dict:
            learnt = self._one_sparse(x)
            if learnt is not None:
                return learnt
            width = self.__dict__.get("n_features_in_")
            if width is None:
                raise ValueError(
                    "OnlineStandardScaler does not know its number of features yet: learn "
                    "a first example as an array (or through partial_fit) before dicts"
                )
            Z: Any = self.partial_fit_transform(dict_row(x, width))
            return dict(zip(Z.indices.tolist(), Z.data.tolist()))
        if type(x) is np.ndarray:
            out = self._one_dense(x)
            if out is not None:
                return out
        row = np.asarray(x)
        if row.ndim != 1:
            raise ValueError(
                f"x must be one example (a 1-D array or a dict), got shape {row.shape}"
            )
        return np.asarray(self.partial_fit_transform(row.reshape(1, -1)))[0]

    def transform_one(self, x: dict | np.ndarray) -> dict | np.ndarray:
        """:meth:`transform` of one example (River's name): nothing is learnt.

        A plainly valid row (a dict of feature indices, or a 1-D float64 array of the
        width, with plain values) goes through the compiled pass of :meth:`transform`
        (the same arithmetic, so the same values bit for bit) without scikit-learn's
        validation; anything else through :meth:`transform` itself, which converts or
        refuses it and says why.

        Parameters
        ----------
        x : dict or array-like of shape (n_features,)
            The example: ``{feature index: value}`` (missing indices are 0; a sparse
            row, so the scaler must not center), or a 1-D array.

        Returns
        -------
        dict or ndarray of shape (n_features,)
            The transformed example: a dict of the same keys (in increasing order) for
            a dict, else a 1-D float64 array.

        Examples
        --------
        >>> import numpy as np
        >>> from aucstream.preprocessing import OnlineStandardScaler
        >>> scaler = OnlineStandardScaler(with_mean=False).partial_fit(np.eye(3))
        >>> scaler.transform_one({2: 1.0})
        {2: 2.1213203435596424}
        """
        state = self.__dict__
        if type(x) is dict and self._one_ready(centered_ok=False):
            row = dict_row_values(x)
            if row is not None:
                idx, vals = row
                args = (self._one_stats(), self.n_samples_seen_, self._options(), False, True)
                if one_csr(idx, vals, vals, *args):  # (in place; nothing learnt)
                    return dict(zip(idx.tolist(), vals.tolist()))
        elif type(x) is np.ndarray and self._one_ready(centered_ok=True):
            width = state.get("n_features_in_")
            if x.ndim == 1 and x.dtype == np.float64 and x.shape[0] == width:
                X = np.ascontiguousarray(x).reshape(1, -1)
                out = np.empty(X.shape)
                args = (self._one_stats(), self.n_samples_seen_, self._options(), False, True)
                if one_dense(X, out, *args):
                    return out[0]
        if type(x) is dict:
            check_is_fitted(self, "n_samples_seen_")
            Z: Any = self.transform(dict_row(x, self.n_features_in_))
            return dict(zip(Z.indices.tolist(), Z.data.tolist()))
        one = np.asarray(x)
        if one.ndim != 1:
            raise ValueError(
                f"x must be one example (a 1-D array or a dict), got shape {one.shape}"
            )
        return np.asarray(self.transform(one.reshape(1, -1)))[0]

    def _one_ready(self, centered_ok: bool) -> bool:
        """Whether a one-example call may take the compiled path: a fitted scaler whose
        parameters are valid (and, for a sparse row, that does not center)."""
        state = self.__dict__
        if state.get("with_mean_") is None or "n_samples_seen_" not in state:
            return False
        validate_params_once(self)
        return centered_ok or not self.with_mean_

    def partial_fit_transform_sparse_one(self, indices: np.ndarray, values: np.ndarray) -> bool:
        """:meth:`partial_fit_transform_one` of one sparse row given as its two arrays,
        transformed in place: the allocation-free step of a caller that holds rows in
        buffers of its own (:class:`aucstream.StreamPipeline` queues the rows of
        ``learn_one`` so).

        Parameters
        ----------
        indices : ndarray of int64 of shape (k,)
            The row's column indices, in any order; sorted in place (with ``values``).
        values : ndarray of float64 of shape (k,)
            Its values; overwritten by the transformed values.

        Returns
        -------
        bool
            True: the row was learnt, and the arrays hold it sorted and transformed.
            False, the scaler unchanged (and the arrays' contents unspecified), when the
            call can not take it as it is: a scaler that is not fitted or that centers,
            arrays that are not 1-D, C-contiguous, writeable, of these dtypes and of
            one length, an index outside the features or repeated, a value that is not
            finite or too large, statistics that would overflow.
            :meth:`partial_fit_transform_one` of the row then converts or refuses it
            and says why.

        Examples
        --------
        >>> import numpy as np
        >>> from aucstream.preprocessing import OnlineStandardScaler
        >>> scaler = OnlineStandardScaler(with_mean=False).partial_fit(np.eye(3))
        >>> idx, vals = np.array([2]), np.array([1.0])
        >>> scaler.partial_fit_transform_sparse_one(idx, vals), vals
        (True, array([2.12132034]))
        """
        if not self._one_ready(centered_ok=False):
            return False
        if not (
            type(indices) is np.ndarray
            and type(values) is np.ndarray
            and indices.dtype == np.int64
            and values.dtype == np.float64
            and indices.ndim == values.ndim == 1
            and indices.shape == values.shape
            and indices.flags.c_contiguous
            and values.flags.c_contiguous
            and indices.flags.writeable
            and values.flags.writeable
        ):
            return False
        args = (self._one_stats(), self.n_samples_seen_, self._options(), True, True)
        if not one_csr(indices, values, values, *args):  # (in place: each value read first)
            return False
        self.n_samples_seen_ += 1
        return True

    def _one_sparse(self, x: dict) -> dict | None:
        """A plainly valid dict row transformed and learnt, else None (nothing touched)."""
        row = dict_row_values(x)
        if row is None or not self.partial_fit_transform_sparse_one(*row):
            return None
        idx, vals = row
        return dict(zip(idx.tolist(), vals.tolist()))

    def _one_dense(self, x: np.ndarray) -> np.ndarray | None:
        """A plainly valid 1-D float64 row transformed and learnt, else None."""
        if x.ndim != 1 or x.dtype != np.float64 or not self._one_ready(centered_ok=True):
            return None
        if x.shape[0] != self.n_features_in_:
            return None
        X = np.ascontiguousarray(x).reshape(1, -1)
        out = np.empty(X.shape)
        args = (self._one_stats(), self.n_samples_seen_, self._options(), True, True)
        if not one_dense(X, out, *args):
            return None
        self.n_samples_seen_ += 1
        return out[0]

    def _one_stats(self) -> _Stats:
        """:meth:`_stats` without its conversions when the arrays need none."""
        stats = _Stats(self.running_count_, self.running_mean_, self.running_m2_)
        for a, dtype in zip(stats, _RUNNING_DTYPES.values()):
            flags = a.flags
            if not (flags.writeable and flags.c_contiguous and a.dtype == dtype):
                return self._stats()
        return stats

    def partial_fit(self, X: ArrayLike, y: ArrayLike | None = None) -> OnlineStandardScaler:
        """Learn the statistics of one more chunk (no transform).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The next chunk of the stream.
        y : None
            Ignored.

        Returns
        -------
        self
            The updated scaler.
        """
        self._learn(X, reset=False, emit=False)
        return self

    def fit(self, X: ArrayLike, y: ArrayLike | None = None) -> OnlineStandardScaler:
        """Learn the statistics of ``X``, forgetting any earlier stream.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows.
        y : None
            Ignored.

        Returns
        -------
        self
            The fitted scaler.
        """
        self._learn(X, reset=True, emit=False)
        return self

    def transform(self, X: ArrayLike) -> np.ndarray | _Sparse:
        """Standardize ``X`` with the statistics of every row learnt so far.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to transform; they are not learnt.

        Returns
        -------
        ndarray or sparse matrix of shape (n_samples, n_features)
            The transformed rows (float64; sparse input keeps its format and
            structure).
        """
        check_is_fitted(self, "n_samples_seen_")
        validate_params_once(self)
        X = self._check_input(X, reset=False)
        self._centering(sp.issparse(X), reset=False)
        return self._pass(X, learn=False, emit=True)

    def inverse_transform(self, X: ArrayLike) -> np.ndarray:
        """Undo :meth:`transform` with the current statistics (dense input only).

        Columns with no usable scale map back to their mean (their value so far);
        clipped values come back at the clip bound.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Transformed rows.

        Returns
        -------
        ndarray of shape (n_samples, n_features)
            The rows in the original units.
        """
        check_is_fitted(self, "n_samples_seen_")
        self._validate_params()
        if sp.issparse(X):
            raise TypeError(
                "OnlineStandardScaler.inverse_transform takes dense input only: columns "
                "with no usable scale map back to their mean, which is not sparse"
            )
        X = validate_data(self, X, dtype=np.float64, reset=False)
        mean, _, offset, scale = self._columns()
        return np.where(scale > 0, X * scale + offset, mean)

    def merge(self, other: OnlineStandardScaler) -> OnlineStandardScaler:
        """Pool the statistics of a scaler that saw a disjoint part of the stream.

        Afterwards this scaler's statistics are those of all the rows both scalers
        learnt (to rounding; Chan, Golub & LeVeque's pairwise update), as if it had
        seen them all. With ``half_life`` (the same in both), the other's rows count
        as the later ones. ``other`` is not changed.

        Parameters
        ----------
        other : OnlineStandardScaler
            A fitted scaler with the same columns and the same centering.

        Returns
        -------
        self
            The merged scaler.
        """
        check_is_fitted(self, "n_samples_seen_")
        if not isinstance(other, OnlineStandardScaler):
            raise TypeError(f"can only merge an OnlineStandardScaler, not {type(other).__name__}")
        check_is_fitted(other, "n_samples_seen_")
        if self.half_life != other.half_life:
            raise ValueError(
                f"cannot merge a scaler with half_life={other.half_life} into one with "
                f"half_life={self.half_life}"
            )
        if other.n_features_in_ != self.n_features_in_:
            raise ValueError(
                f"cannot merge a scaler of {other.n_features_in_} features into one of "
                f"{self.n_features_in_}"
            )
        if other.with_mean_ != self.with_mean_:
            raise ValueError(
                f"cannot merge a scaler with with_mean_={other.with_mean_} into one with "
                f"with_mean_={self.with_mean_}"
            )
        names, other_names = (getattr(s, "feature_names_in_", None) for s in (self, other))
        if (names is None) != (other_names is None) or (
            names is not None and other_names is not None and not np.array_equal(names, other_names)
        ):
            raise ValueError("cannot merge scalers fitted on different feature names")
        n_a, n_b = self.n_samples_seen_, other.n_samples_seen_
        mean_a, m2_a = self._columns()[:2]
        mean_b, m2_b = other._columns()[:2]
        decay = decay_per_example(self.half_life)
        mean, m2 = _merge_columns(mean_a, m2_a, n_a, mean_b, m2_b, n_b, decay)
        self.n_samples_seen_ = n_a + n_b
        self.running_count_ = np.full(self.n_features_in_, n_a + n_b, dtype=np.int64)
        self.running_mean_, self.running_m2_ = mean, m2
        return self

    @property
    def mean_(self) -> np.ndarray:
        """Mean of every column over the rows learnt (0 before any row)."""
        return self._columns()[0]

    @property
    def var_(self) -> np.ndarray:
        """Population variance (divisor ``n_samples_seen_``; with ``half_life``, the
        weighted variance, divisor the rows' total weight) of every column."""
        weight = _weight(self.n_samples_seen_, decay_per_example(self.half_life))
        return self._columns()[1] / weight  # a fitted scaler has seen a row

    @property
    def scale_(self) -> np.ndarray:
        """What :meth:`transform` divides by: the standard deviation, or 1 for columns
        with no usable scale (which map to 0) and for every column when ``with_std`` is
        False."""
        scale = self._columns()[3]
        return np.where(scale > 0, scale, 1.0)

    def affine_map(self) -> tuple[np.ndarray, np.ndarray]:
        """``(offset, multiplier)`` with ``transform(x) = (x - offset) * multiplier``
        before clipping (multiplier 0 for the columns with no usable scale).

        Returns
        -------
        offset, multiplier : ndarray of shape (n_features,)
        """
        _, _, offset, scale = self._columns()
        multiplier = np.divide(1.0, scale, out=np.zeros_like(scale), where=scale > 0)
        return offset, multiplier

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # --------------------------------------------------------------- internals
    def _validate_params(self) -> None:
        check_parameters(self)

    def _check_state(self) -> None:
        """Consistency checks of a loaded state that shapes cannot express."""
        n = self.n_samples_seen_
        if np.any(self.running_count_ < 0) or np.any(self.running_count_ > n):
            raise ValueError(f"running_count_ must lie in [0, n_samples_seen_={n}]")
        if np.any(self.running_m2_ < 0):
            raise ValueError("running_m2_ must not be negative")

    def start(self, n_features: int) -> OnlineStandardScaler:
        """Begin a stream of ``n_features`` columns with empty statistics.

        Centering is decided by the first chunk (``with_mean_`` is None until then).
        :class:`aucstream.StreamPipeline` calls this so that its state has the same
        members before and after the first chunk.

        Returns
        -------
        self
        """
        self._validate_params()
        self._allocate(n_features)
        return self

    def _allocate(self, n_features: int) -> None:
        """Empty statistics for ``n_features`` columns; centering is decided by the
        first chunk (``with_mean_`` is None until then)."""
        self.n_samples_seen_ = 0
        self.n_features_in_ = int(n_features)
        self.with_mean_ = None
        for name, dtype in _RUNNING_DTYPES.items():
            setattr(self, name, np.zeros(n_features, dtype=dtype))

    def _learn(self, X, *, reset: bool, emit: bool, learnt: np.ndarray = EVERY_ROW):
        if not reset and sp.issparse(X) and self._by_columns():
            return self._learn_columns(X, emit, learnt)
        # a walk of the state kept between calls (a one-row call costs a compiled copy
        # of the statistics, not a walk and a snapshot)
        with _state.walked_transaction(self, journal=_state.journal_of(self)):
            validate_params_once(self)
            reset = reset or not hasattr(self, "n_samples_seen_")
            X = self._check_input(X, reset=reset)
            if reset:
                self._allocate(X.shape[1])
            if self.with_mean_ is None:
                self.with_mean_ = self._centering(sp.issparse(X), reset=True)
            else:
                self._centering(sp.issparse(X), reset=False)
            out = self._pass(X, learn=True, emit=emit, learnt=learnt)
            self.n_samples_seen_ += _learnt_rows(X, learnt)
            flat = _state.kept_walk(self)
            if flat is not None and flat.current(self) and flat.all_finite():
                return out
            _refuse_overflow(_state.first_non_finite(self), X)
        return out

    def _by_columns(self) -> bool:
        """Whether a sparse chunk's call saves only the columns it names
        (:meth:`_learn_columns`): a scaler that has learnt a chunk, whose running
        arrays are the writable C arrays :meth:`_stats` would keep (a loaded memory
        map's are replaced by copies, inside the whole state's transaction), and
        together larger than :data:`aucstream._state.SHADOW_LIMIT`. Below it the whole
        state's transaction keeps its copy between calls and copies the arrays in one
        compiled call, which costs less than the columns' saves and checks (measured in
        docs/benchmarks.md, "bench_scaler"); above it that transaction allocates its
        copy at each call."""
        if getattr(self, "with_mean_", None) is None:
            return False
        size = 0
        for name, dtype in _RUNNING_DTYPES.items():
            a = self.__dict__.get(name)
            if not (isinstance(a, np.ndarray) and a.dtype == dtype and a.ndim == 1):
                return False
            if not (a.flags.c_contiguous and a.flags.writeable):
                return False
            size += a.nbytes
        return size > _state.SHADOW_LIMIT

    def _learn_columns(self, X, emit: bool, learnt: np.ndarray = EVERY_ROW):
        """:meth:`_learn` of a sparse chunk: a pass writes the statistics of the
        columns its values name, and only these can become non-finite, so its
        transaction saves those columns (an undo log,
        :func:`aucstream._state.transaction`) and the check reads them, instead of a
        copy and a check of every column (at 10^6 columns, 24 MB for each call of a
        few hundred rows)."""
        stats = tuple(self.__dict__[name] for name in _RUNNING_DTYPES)
        with _state.transaction(self, logged=stats, journal=_state.journal_of(self)):
            validate_params_once(self)
            X = self._check_input(X, reset=False)
            self._centering(sp.issparse(X), reset=False)
            columns = _state.unique_rows(csr_arrays(X)[1], self.n_features_in_)
            log = _state.active_log(self)
            assert log is not None
            log.cover(dict.fromkeys(map(id, stats), columns))
            out = self._pass(X, learn=True, emit=emit, learnt=learnt)
            self.n_samples_seen_ += _learnt_rows(X, learnt)
            _refuse_overflow(
                _state.first_non_finite(self, rows=dict.fromkeys(map(id, stats), columns)), X
            )
        return out

    def _check_input(self, X, reset: bool):
        """Validated float64 input; sparse structure checked before anything reads it.

        Plainly valid rows (:func:`aucstream._chunks.plain_rows`) skip scikit-learn's
        validation, which accepts them unchanged (most of the cost of a one-row call);
        anything else is validated in full."""
        if not reset:
            plain = plain_rows(self, X)
            if plain is not None:
                return plain
        check_sparse_structure(X, "X")
        return validate_data(self, X, accept_sparse=("csr", "csc"), dtype=np.float64, reset=reset)

    def _centering(self, sparse: bool, reset: bool) -> bool:
        """Whether to center: ``with_mean`` on the first chunk, ``with_mean_`` after."""
        if reset:
            centered = not sparse if self.with_mean == "auto" else bool(self.with_mean)
        else:
            centered = bool(self.with_mean_)
            if self.with_mean != "auto" and bool(self.with_mean) != centered:
                raise InvalidParameterError(
                    f"The 'with_mean' parameter of OnlineStandardScaler is {self.with_mean} "
                    f"but the stream was started with with_mean_={centered}; call fit to "
                    "start a new stream"
                )
        if centered and sparse:
            raise ValueError(
                "Cannot center sparse matrices: pass `with_mean=False` or 'auto' instead "
                "(centering would make every implicit zero nonzero)"
                + ("" if reset else "; this scaler centers, as its first chunk was dense")
            )
        return centered

    def _options(self) -> _Options:
        clip = np.inf if self.clip is None else float(self.clip)
        decay = decay_per_example(self.half_life)
        return _Options(bool(self.with_mean_), bool(self.with_std), clip, decay)

    def _stats(self) -> _Stats:
        """The running arrays, writable and C-contiguous (a memory-mapped pickle's are
        read-only: they are replaced by copies, with the same values)."""
        for name, dtype in _RUNNING_DTYPES.items():
            setattr(self, name, np.require(getattr(self, name), dtype, ("C", "W")))
        return _Stats(self.running_count_, self.running_mean_, self.running_m2_)

    def _columns(self):
        """Every column's ``(mean, m2, offset, scale)`` over the rows learnt so far."""
        check_is_fitted(self, "n_samples_seen_")
        return _columns(self._stats(), self.n_samples_seen_, self._options())

    def _pass(self, X, *, learn: bool, emit: bool, learnt: np.ndarray = EVERY_ROW):
        """Run the compiled pass over the rows of ``X``; the transformed rows if ``emit``
        (``learnt``: which rows are learnt, see :func:`._standard_kernels._pass_dense`)."""
        if learnt.shape[0] not in (0, X.shape[0]):  # (inside the call's transaction)
            raise ValueError(
                "learnt must be a 1-D boolean array with one entry per row of X, got "
                f"{learnt.shape[0]} entries for {X.shape[0]} rows"
            )
        args = (self._stats(), self.n_samples_seen_, self._options(), learn, emit, learnt)
        if not sp.issparse(X):
            X = np.ascontiguousarray(X, dtype=np.float64)
            out = np.empty(X.shape if emit else (0, 0))
            _pass_dense(read_only_view(X), out, *args)  # (one version for both kinds)
            return out if emit else None
        indptr, indices, data, d = csr_arrays(X)
        out = np.empty(data.shape[0] if emit else 0)
        _pass_csr(indptr, indices, data, out, *args)
        if not emit:
            return None
        csr = sp.csr_array if isinstance(X, sp.sparray) else sp.csr_matrix
        result = csr((out, indices.copy(), indptr.copy()), shape=(X.shape[0], d))
        return result.tocsc() if X.format == "csc" else result


def _learnt_rows(X, learnt: np.ndarray) -> int:
    """How many rows of ``X`` a pass with ``learnt`` learns (every row when empty)."""
    return X.shape[0] if learnt.shape[0] == 0 else int(np.count_nonzero(learnt))
