"""Training look-up-table weak machines from a loss gradient."""
from __future__ import annotations

import numpy as np

from .._validation import as_feature_matrix, as_score_matrix, check_positive_int
from ..boosting.protocol import Proposal, RoundState
from ..exceptions import InvalidValueError
from ..weak.lut import LUTMachine, check_discrete
from ..binning import BinnedFeatures, check_histogram_size, check_missing
from ..engine.threads import check_threads
from .stump import TIE_TOLERANCE

SELECTION_STYLES = ("independent", "shared")


class LUTTrainer:
    """Train a (multi-variate) :class:`~bob_boost.weak.LUTMachine`.

    For every feature and output the gradient is summed per feature value;
    the feature whose histogram has the largest absolute mass best follows
    the negative gradient. Each LUT entry is +1 where the summed negative
    gradient is non-negative (a sum within rounding of zero, see below,
    counts as zero) and -1 elsewhere, so fitted weights come out
    positive (bob.learn.boosting uses the opposite signs and gets negative
    weights; the products are the same).

    Parameters
    ----------
    maximum_feature_value : int
        Number of LUT entries; features must be integers in ``[0, maximum_feature_value)``.
    number_of_outputs : int
        Number of outputs (gradient columns).
    selection_style : {"independent", "shared"}
        ``"independent"`` picks the best feature per output; ``"shared"`` one
        feature for all outputs, minimising the summed criterion.
    n_threads : int or None
        Threads for the histograms (None: every core; read when training
        starts). The result does not depend on it.
    missing : {None, "bin"}
        None: NaN in the features is rejected. ``"bin"``: NaN is a missing
        value with an entry of its own after the ``maximum_feature_value``
        value entries (:attr:`~bob_boost.weak.LUTMachine.missing_entry`, saved
        with the model), learnt like any other entry and counted in the
        selection criterion; a feature without NaN gets +1 there, as a value
        no sample takes does. A feature that is NaN for every sample is never
        selected (its table could only give every sample one output).

    Criteria within :data:`~bob_boost.weak_trainers.stump.TIE_TOLERANCE` of the
    output's total absolute gradient count as tied and go to the lowest
    feature index (a gradient of one sign for every sample ties every
    feature exactly; rounding must not decide).
    """

    def __init__(self, maximum_feature_value: int, number_of_outputs: int = 1,
                 selection_style: str = "independent", n_threads: int | None = None,
                 missing: str | None = None) -> None:
        self.maximum_feature_value = check_positive_int(maximum_feature_value, "maximum_feature_value", 2)
        self.number_of_outputs = check_positive_int(number_of_outputs, "number_of_outputs")
        if selection_style not in SELECTION_STYLES:
            raise InvalidValueError(f"selection_style: must be one of {SELECTION_STYLES}, got {selection_style!r}")
        self.selection_style = selection_style
        check_threads(n_threads)
        self.n_threads = n_threads
        self.missing = check_missing(missing)

    #: Sparse (CSR/CSC) features are binned without a dense copy (:mod:`bob_boost.sparse`).
    accepts_sparse = True

    @property
    def accepts_missing(self) -> bool:
        """Whether NaN in the features is a missing value (``missing="bin"``) rather than an error."""
        return check_missing(self.missing) is not None

    @property
    def _entries(self) -> int:
        """Table rows: one per value, and one for NaN with ``missing="bin"``."""
        return self.maximum_feature_value + int(self.accepts_missing)

    def prepare(self, features) -> BinnedFeatures:
        """Validate ``features`` and bin them once, for repeated :meth:`train` calls."""
        if isinstance(features, BinnedFeatures):
            expected = features.number_of_features * self._entries
            if (features.bin_values is not None or features.offsets[-1] != expected
                    or features.missing != self.accepts_missing):
                raise InvalidValueError("features: binned for another trainer")
            return features
        missing = self.accepts_missing
        array = as_feature_matrix(features, allow_nan=missing, accept_sparse=True)
        check_histogram_size(array.shape[1], self._entries, self.number_of_outputs)
        check_discrete(array, self.maximum_feature_value, allow_nan=missing)
        return BinnedFeatures.from_integers(array, self.maximum_feature_value, check_threads(self.n_threads),
                                            missing=missing)

    def train(self, features, loss_gradient) -> LUTMachine:
        """Return the LUT machine that best follows ``-loss_gradient``.

        Parameters
        ----------
        features : array_like or BinnedFeatures
            (#samples, #features) integer matrix, or the result of :meth:`prepare`.
        loss_gradient : array_like
            (#samples, #outputs) loss gradient at the current scores.
        """
        binned = self.prepare(features)
        gradient = as_score_matrix(loss_gradient, "loss_gradient", binned.number_of_samples)
        self.check_outputs(gradient.shape[1])
        return self._fit(binned, gradient)

    def check_outputs(self, number_of_outputs: int) -> None:
        """Raise unless the loss has the trainer's number of outputs (checked once per run by the loop)."""
        if number_of_outputs != self.number_of_outputs:
            raise InvalidValueError(f"loss_gradient: has {number_of_outputs} outputs, the trainer expects "
                                    f"{self.number_of_outputs}")

    def propose(self, prepared: BinnedFeatures, state: RoundState) -> Proposal:
        """The LUT machine for ``state.gradient`` (the loop's trusted, prepared inputs), with its outputs."""
        machine = self._fit(prepared, state.gradient)
        return Proposal(machine, outputs=None if prepared.coded is None else self._outputs(prepared, machine))

    @staticmethod
    def _outputs(binned: BinnedFeatures, machine: LUTMachine) -> np.ndarray:
        """``machine.forward`` on the training samples, read through their codes (each a feature's value, or
        the NaN entry's row): contiguous per feature, where the raw matrix is read across its rows."""
        coded = binned.coded
        # Fortran order, as forward's: the step rule's sums add in memory order
        out = np.empty((coded.n_samples, machine.number_of_outputs), order="F")
        for j, feature in enumerate(machine.indices):
            np.take(machine.look_up_tables[:, j], coded.column(feature), out=out[:, j])
        return out

    def _fit(self, binned: BinnedFeatures, gradient: np.ndarray) -> LUTMachine:
        all_missing = None
        if binned.missing:
            all_missing = binned.coded.counts[:, self.maximum_feature_value] == binned.number_of_samples
        return self.from_histograms(binned.histograms(gradient), np.abs(gradient).sum(axis=0), all_missing)

    def from_histograms(self, histograms: np.ndarray, absolute_sums: np.ndarray,
                        all_missing: np.ndarray | None = None) -> LUTMachine:
        """The LUT machine chosen from summed gradient histograms (how distributed training uses the rule).

        Parameters
        ----------
        histograms : numpy.ndarray
            (#features * #entries, #outputs) loss gradient summed per feature value (feature-major).
        absolute_sums : numpy.ndarray
            (#outputs,) sums of the gradient's absolute values, which scale the tie tolerance.
        all_missing : numpy.ndarray, optional
            (#features,) whether a feature is NaN for every sample (never selected); with ``missing="bin"``.
        """
        histograms = histograms.reshape(-1, self._entries, self.number_of_outputs)
        criterion = -np.abs(histograms).sum(axis=1)  # (#features, #outputs); lower is better
        if all_missing is not None:
            if all_missing.all():
                raise InvalidValueError("features: every feature is NaN for every sample, so no LUT can tell "
                                        "samples apart")
            criterion[all_missing] = np.inf
        tolerance = TIE_TOLERANCE * absolute_sums
        if self.selection_style == "shared":
            summed = criterion.sum(axis=1)
            indices = np.full(self.number_of_outputs, np.argmax(summed <= summed.min() + tolerance.sum()))
        else:
            indices = np.argmax(criterion <= criterion.min(axis=0) + tolerance, axis=0)
        outputs = np.arange(self.number_of_outputs)
        selected = histograms[indices, :, outputs].T  # (#entries, #outputs)
        # a summed gradient within rounding of zero is zero: its sign would depend on the sample order
        table = np.where(selected <= tolerance, 1.0, -1.0)
        return LUTMachine(table, indices, missing_entry=self.accepts_missing)
