"""Training decision stumps from a loss gradient."""
from __future__ import annotations

import numpy as np

from .._validation import as_feature_matrix, as_score_matrix
from ..boosting.protocol import Proposal, RoundState
from ..exceptions import InvalidValueError
from ..weak.stump import StumpMachine
from ..binning import MISSING_MODES, BinnedFeatures, check_missing  # noqa: F401 (MISSING_MODES: importable here, as before)
from ..engine import kernels
from ..engine.edges import check_max_bins
from ..engine.split_scan import allowed_columns
from ..engine.threads import check_threads
from .tree_categories import check_categorical_features, feature_categories

#: Gains closer than this fraction of the total absolute gradient count as tied (the LUT trainers' criteria
#: too). Unlike the trees' relative :data:`bob_boost.weak_trainers.tree.TIE_TOLERANCE`, it scales with
#: ``sum |gradient|``, which bounds every gain, so a tie between two small gains is as wide as one between
#: large ones; its size covers the rounding of gradient sums taken in different orders (weighted samples
#: against repeated ones). It decides which stump is chosen: changing it changes trained models.
TIE_TOLERANCE = 1e-10




class StumpTrainer:
    """Select the stump that best follows the negative loss gradient.

    Among every feature and every threshold half-way between two consecutive
    distinct values of that feature, the stump ``h`` maximising
    ``|sum_n -g_n h(x_n)|`` is chosen, with the polarity that makes the sum
    positive (so the fitted weight comes out positive). Ties (gains within
    :data:`TIE_TOLERANCE` of the total absolute gradient) go to the lowest
    feature index, then the lowest threshold.

    The features are binned once per training run by :meth:`prepare` (which
    :class:`~bob_boost.trainers.Boosting` calls); every round then costs one
    histogram of the gradient over the bins (compiled, in threads) and a scan
    of its cumulative sums.

    Parameters
    ----------
    max_bins : int or None
        At most this many candidate bins per feature (2 .. 65535). A feature
        with at most ``max_bins`` distinct values keeps one bin per value, so
        its thresholds are exactly those of the exact search; one with more is
        cut at quantiles of a sample (:mod:`bob_boost.engine.edges`). None
        searches every threshold between distinct values
        (bob.learn.boosting's behaviour). Thresholds are always in feature
        units, so the stumps are plain :class:`~bob_boost.weak.StumpMachine`.
    n_threads : int or None
        Threads for binning and histograms (None: every core). The result
        does not depend on it.
    missing : {None, "bin"}
        None: NaN in the features is rejected. ``"bin"``: NaN is a missing
        value with a bin of its own in every feature (the value bins then
        number at most ``max_bins - 1``); each stump learns which side of its
        threshold NaN goes to (``missing_above``, saved with the model),
        below when both sides gain the same (as for a feature without NaN).
    categorical_features : sequence of int, boolean mask or None
        Features whose values are categories (as :class:`~bob_boost.TreeTrainer`'s): their stumps output
        ``polarity`` on a set of categories and ``-polarity`` on the others (a category unseen in
        training too). The best set is exact: the categories of negative gradient sum, which gains
        ``sum_c |G_c|`` (NaN's bin, with ``missing="bin"``, one more category). None: every feature is
        numeric.

    All four are read when training starts.
    """

    #: Reads ``state.feature_subset``, a round's column sample (:class:`~bob_boost.Sampling`).
    samples_columns = True

    def __init__(self, max_bins: int | None = 256, n_threads: int | None = None, missing: str | None = None,
                 categorical_features=None) -> None:
        self.max_bins = check_max_bins(max_bins)
        check_threads(n_threads)
        self.n_threads = n_threads
        self.missing = check_missing(missing)
        check_categorical_features(categorical_features)
        self.categorical_features = categorical_features

    #: Sparse (CSR/CSC) features are binned without a dense copy (:mod:`bob_boost.sparse`).
    accepts_sparse = True

    @property
    def accepts_missing(self) -> bool:
        """Whether NaN in the features is a missing value (``missing="bin"``) rather than an error."""
        return check_missing(self.missing) is not None

    def prepare(self, features) -> BinnedFeatures:
        """Validate and bin ``features`` once, for repeated :meth:`train` calls."""
        if isinstance(features, BinnedFeatures):
            if features.split_thresholds is None:
                raise InvalidValueError("features: binned for a LUT trainer, not by feature values")
            indices = check_categorical_features(self.categorical_features, features.number_of_features)
            if set(features.categories) != set(() if indices is None else indices.tolist()):
                raise InvalidValueError("features: binned with other categorical features than the trainer's "
                                        "categorical_features (use StumpTrainer.prepare)")
            return features
        missing = check_missing(self.missing) is not None
        array = as_feature_matrix(features, allow_nan=missing, accept_sparse=True)
        indices = check_categorical_features(self.categorical_features, array.shape[1])
        categories = feature_categories(array, indices, check_max_bins(self.max_bins), missing)
        binned = BinnedFeatures.from_values(array, max_bins=check_max_bins(self.max_bins),
                                            n_threads=check_threads(self.n_threads), missing=missing)
        binned.categories = categories
        return binned

    def train(self, features, loss_gradient) -> StumpMachine:
        """Return the best stump for ``loss_gradient``.

        Parameters
        ----------
        features : array_like or BinnedFeatures
            (#samples, #features) matrix, or the result of :meth:`prepare`.
        loss_gradient : array_like
            (#samples,) or (#samples, 1) loss gradient at the current scores.
        """
        binned = self.prepare(features)
        gradient = as_score_matrix(loss_gradient, "loss_gradient", binned.number_of_samples)
        self.check_outputs(gradient.shape[1])
        return self._fit(binned, gradient)

    def check_outputs(self, number_of_outputs: int) -> None:
        """Raise unless the loss has one output (checked once per run by the loop)."""
        if number_of_outputs != 1:
            raise InvalidValueError(f"loss_gradient: StumpTrainer is univariate, got {number_of_outputs} outputs")

    def propose(self, prepared: BinnedFeatures, state: RoundState) -> Proposal | None:
        """The best stump for ``state.gradient`` (the loop's trusted, prepared inputs), with its outputs.

        None when even the best stump's gain is within rounding of zero: no stump follows the gradient,
        and one fitted to rounding noise would depend on the order of the samples.
        """
        machine, best, gain, tolerance = self._search(prepared, state.gradient, state.feature_subset)
        if abs(gain) <= tolerance:
            return None
        outputs = None
        if prepared.coded is not None:
            index = machine.index
            start = int(prepared.offsets[index])
            missing_code = int(prepared.offsets[index + 1]) - 1 - start if prepared.missing else -1
            if machine.categories is None:
                outputs = prepared.coded.above(index, best - start, machine.polarity, -machine.polarity,
                                               missing_code, bool(machine.missing_above))
            else:
                outputs = set_outputs(prepared.coded, index, category_bins(machine, prepared.categories[index],
                                                                           missing_code), machine.polarity)
        return Proposal(machine, outputs=outputs)

    def _fit(self, binned: BinnedFeatures, gradient: np.ndarray) -> StumpMachine:
        return self._search(binned, gradient)[0]

    def _search(self, binned: BinnedFeatures, gradient: np.ndarray,
                columns: np.ndarray | None = None) -> tuple[StumpMachine, int, float, float]:
        """The best stump on ``columns`` (None: all), the global bin after which it splits, its gain and the
        gains' rounding tolerance."""
        # output -1 below / +1 above the threshold: gain = right - left = total - 2 left
        machine, best, gain, tolerance = best_stump(binned.histograms(gradient)[:, 0], binned.offsets,
                                                    binned.split_thresholds, -gradient[:, 0].sum(),
                                                    np.abs(gradient).sum(), binned.missing, columns,
                                                    binned.categories)
        if machine is None:
            raise InvalidValueError("features: every feature is constant (or, for a categorical one, its "
                                    "categories' gradient sums share one sign), so no stump can split them")
        return machine, best, gain, tolerance


def best_stump(sums: np.ndarray, offsets: np.ndarray, split_thresholds: np.ndarray, total: float,
               absolute_sum: float, missing: bool, columns: np.ndarray | None = None,
               categories: dict[int, np.ndarray] | None = None) -> tuple[StumpMachine | None, int, float, float]:
    """The stump of largest gain from a gradient histogram, in memory and on a cluster alike.

    Parameters
    ----------
    sums : numpy.ndarray
        (#bins,) the gradient's sum in every bin (feature ``f``'s bins are ``offsets[f]:offsets[f + 1]``).
    offsets, split_thresholds : numpy.ndarray
        Each feature's first bin; each bin's upper threshold (NaN for a feature's last bins).
    total : float
        Minus the gradient's sum (the gain of a stump that outputs +1 everywhere).
    absolute_sum : float
        The sum of the gradient's absolute values, which scales the gains' rounding tolerance.
    missing : bool
        Whether every feature's last bin holds its NaN (each stump then learns NaN's side).
    columns : numpy.ndarray, optional
        The features the stump may split (a round's column sample); None: all.
    categories : dict, optional
        The categorical features' categories (one bin each, in order; see
        :class:`~bob_boost.TreeTrainer`): their stumps output +1 on a set of categories and -1 elsewhere,
        the set of largest gain being the categories of negative gradient sum (or the others: the same
        gain, ``sum_c |G_c|``), with NaN's bin as one more category.

    Returns
    -------
    tuple
        ``(stump, the global bin after which it splits (a categorical stump's feature's first bin), its gain,
        the gains' rounding tolerance)``; the stump is None (and the bin -1) when every feature is constant.
    """
    # gains equal in exact arithmetic may differ by rounding (which depends
    # on summation order); treat them as tied so the documented order decides
    tolerance = TIE_TOLERANCE * absolute_sum
    allowed = allowed_columns(offsets.size - 1, columns)
    numeric = allowed.copy()
    numeric[list(categories or ())] = False
    best, gain, missing_above = kernels.best_stump_split(sums, offsets, total, tolerance, missing, numeric)
    candidates = []  # (feature, stump, signed gain, bin)
    if best >= 0:
        index = int(np.searchsorted(offsets, best, side="right") - 1)
        candidates.append((index, StumpMachine(float(split_thresholds[best]), 1.0 if gain >= 0 else -1.0, index,
                                               bool(missing_above) if missing else None), float(gain), int(best)))
    for f in sorted(categories or ()):
        if allowed[f] and (found := _categorical_stump(sums, offsets, f, categories[f], missing)) is not None:
            candidates.append((f, found[0], found[1], int(offsets[f])))
    if not candidates:
        return None, -1, 0.0, float(tolerance)
    top = max(abs(candidate[2]) for candidate in candidates)
    _, machine, gain, best = min((c for c in candidates if abs(c[2]) >= top - tolerance), key=lambda c: c[0])
    return machine, int(best), float(gain), float(tolerance)


def category_bins(machine: StumpMachine, values: np.ndarray, missing_code: int) -> np.ndarray:
    """The bins (within the feature) of a categorical stump's set: its categories' among the feature's
    ``values``, and the missing values' bin ``missing_code`` (-1: none) where NaN goes into the set."""
    bins = np.searchsorted(values, machine.categories)
    if missing_code >= 0 and machine.missing_above:
        bins = np.append(bins, missing_code)
    return bins.astype(np.int64)


def set_outputs(coded, feature: int, bins: np.ndarray, polarity: float) -> np.ndarray:
    """(#rows, 1) a categorical stump's outputs from the codes: ``polarity`` where the feature's code is one of
    ``bins``, else ``-polarity``."""
    return np.where(np.isin(coded.column(feature), bins), polarity, -polarity)[:, np.newaxis]


def _categorical_gain(sums: np.ndarray, offsets: np.ndarray, f: int) -> float:
    """A categorical stump's gain on feature ``f``: ``sum_c |G_c|`` over its bins (0 when every nonzero sum has
    one sign: no set splits the gradient)."""
    bins = sums[offsets[f]:offsets[f + 1]]
    if not (np.any(bins < 0) and np.any(bins > 0)):
        return 0.0
    return float(np.abs(bins).sum())


def _categorical_stump(sums: np.ndarray, offsets: np.ndarray, f: int, values: np.ndarray,
                       missing: bool) -> tuple[StumpMachine, float] | None:
    """Feature ``f``'s categorical stump and its gain: +1 on the categories of negative gradient sum (NaN's bin,
    last with ``missing``, among them or not); a set of NaN alone is turned around (polarity -1)."""
    bins = sums[offsets[f]:offsets[f + 1]]
    gain = _categorical_gain(sums, offsets, f)
    if gain == 0.0:
        return None
    chosen = bins < 0  # the negative gradient is positive there: output +1
    polarity = 1.0
    in_set = chosen[:values.size]
    if not in_set.any():  # NaN alone: the value categories of positive sum go in, polarity -1
        in_set, polarity = bins[:values.size] > 0, -1.0
    nan_above = bool(chosen[-1]) == (polarity > 0) if missing else None
    return StumpMachine(0.0, polarity, f, nan_above, values[in_set]), polarity * gain
