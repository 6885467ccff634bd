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

    All three are read when training starts.
    """

    #: Reads ``state.feature_subset``, a round's column sample (:class:`~bob_boost.Sampling`).
    samples_columns = True

    def __init__(self, max_bins: int | None = 256, n_threads: int | None = None, missing: str | None = None) -> None:
        self.max_bins = check_max_bins(max_bins)
        check_threads(n_threads)
        self.n_threads = n_threads
        self.missing = check_missing(missing)

    @property
    def accepts_missing(self) -> bool:
        """Whether NaN in the features is a missing value (``missing="bin"``) rather than an error."""
        return check_missing(self.missing) is not None

    def prepare(self, features) -> BinnedFeatures:
        """Validate and bin ``features`` once, for repeated :meth:`train` calls."""
        if isinstance(features, BinnedFeatures):
            if features.split_thresholds is None:
                raise InvalidValueError("features: binned for a LUT trainer, not by feature values")
            return features
        missing = check_missing(self.missing) is not None
        return BinnedFeatures.from_values(as_feature_matrix(features, allow_nan=missing),
                                          max_bins=check_max_bins(self.max_bins),
                                          n_threads=check_threads(self.n_threads), missing=missing)

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
            outputs = prepared.coded.above(index, best - start, machine.polarity, -machine.polarity,
                                           missing_code, bool(machine.missing_above))
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
                                                    np.abs(gradient).sum(), binned.missing, columns)
        if machine is None:
            raise InvalidValueError("features: every feature is constant, so no stump can split them")
        return machine, best, gain, tolerance


def best_stump(sums: np.ndarray, offsets: np.ndarray, split_thresholds: np.ndarray, total: float,
               absolute_sum: float, missing: bool,
               columns: np.ndarray | None = None) -> tuple[StumpMachine | None, int, float, float]:
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

    Returns
    -------
    tuple
        ``(stump, the global bin after which it splits, its gain, the gains' rounding tolerance)``; the stump
        is None (and the bin -1) when every feature is constant.
    """
    # gains equal in exact arithmetic may differ by rounding (which depends
    # on summation order); treat them as tied so the documented order decides
    tolerance = TIE_TOLERANCE * absolute_sum
    best, gain, missing_above = kernels.best_stump_split(sums, offsets, total, tolerance, missing,
                                                         allowed_columns(offsets.size - 1, columns))
    if best < 0:
        return None, -1, 0.0, float(tolerance)
    index = int(np.searchsorted(offsets, best, side="right") - 1)
    polarity = 1.0 if gain >= 0 else -1.0
    machine = StumpMachine(float(split_thresholds[best]), polarity, index, bool(missing_above) if missing else None)
    return machine, int(best), float(gain), float(tolerance)
