"""bob.learn.boosting's trainers: ``StumpTrainer``, ``LUTTrainer``, ``Boosting`` and ``weighted_histogram``.

The weak trainers wrap bob_boost's: :class:`StumpTrainer` is ``bob_boost.StumpTrainer(max_bins=None)``,
which tries every threshold half-way between two distinct feature values, as bob's does, and
:class:`LUTTrainer` selects its features with ``bob_boost.LUTTrainer``. Their machines come out in bob's
sign convention, the opposite of bob_boost's (the stump's polarity, the look-up table's entries), and the
weights fitted to them are then negative, as in bob; the products, hence the scores, are the same. The
tables are summed in bob's order (:func:`bob_tables`), which decides entries whose gradient sum cancels.

:class:`Boosting` runs bob_boost's training loop (:mod:`bob_boost.boosting.loop`) with its generic
configuration, changing only the step rule: each weight is fitted by the call bob's ``Boosting.train``
made, :func:`scipy.optimize.fmin_l_bfgs_b` from zero with SciPy's default tolerances on the loss's
``loss_sum`` and ``loss_gradient_sum`` (:func:`bob_weights`). bob_boost's own rule converges much further
(see :func:`bob_boost.trainers.fit_weights`); bob's stops earlier, and these are bob's numbers.
"""
from __future__ import annotations

import dataclasses
import logging
import numbers

import numpy as np
import scipy.optimize

from ... import trainers as core_trainers
from ..._validation import as_feature_matrix, check_same_samples
from ...boosting import loop
from ...boosting.algorithms import GradientBoosting
from ...boosting.protocol import Proposal, RoundState
from ...engine.threads import single_threaded_blas
from ...exceptions import InvalidTypeError, InvalidValueError
from ...losses.base import LossFunction as CoreLossFunction
from ...weak import base as core_base
from ...weak import lut as core_lut
from ...weak import stump as core_stump
from ._calls import check_output
from .machines import BoostedMachine, LUTMachine, StumpMachine, unwrap, wrap

logger = logging.getLogger(__name__)


def to_bob_signs(machine: core_base.WeakMachine) -> core_base.WeakMachine:
    """The weak machine with its output negated: a bob_boost stump or look-up table in bob's convention.

    Negating a polarity or a table of +-1 is exact, so the machine times the negated weight equals the
    bob_boost machine times its weight, bit for bit.
    """
    if isinstance(machine, core_stump.StumpMachine):
        return core_stump.StumpMachine(machine.threshold, -machine.polarity, machine.index, machine.missing_above)
    if isinstance(machine, core_lut.LUTMachine):
        return core_lut.LUTMachine(-machine.look_up_tables, machine.indices)
    raise InvalidTypeError(f"machine: bob's sign convention is defined for stumps and look-up tables, "
                           f"got {type(machine).__name__}")


def bob_tables(machine: core_lut.LUTMachine, features: np.ndarray, loss_gradient: np.ndarray) -> core_lut.LUTMachine:
    """The look-up-table machine bob's trainer builds on the features bob_boost's trainer selected.

    bob's entry is +1 where the loss gradient summed over the samples of that feature value is positive,
    -1 elsewhere: the negation of bob_boost's table, except where the sum cancels to a rounding error, whose
    sign depends on the order of the additions. The sums are therefore redone in bob's order
    (:func:`weighted_histogram`); bob's univariate MNIST example then gives bob's machine round for round.

    Parameters
    ----------
    machine : bob_boost.LUTMachine
        What ``bob_boost.LUTTrainer`` proposed (its selected feature per output).
    features : numpy.ndarray
        The validated (#samples, #features) integer training features.
    loss_gradient : numpy.ndarray
        The (#samples, #outputs) loss gradient the machine was selected for.
    """
    entries = machine.look_up_tables.shape[0]
    gradient = np.asarray(loss_gradient, dtype=np.float64).reshape(features.shape[0], -1)
    columns = [weighted_histogram(features[:, index].astype(np.intp), gradient[:, output], entries) > 0.0
               for output, index in enumerate(machine.indices)]
    return core_lut.LUTMachine(np.where(np.column_stack(columns), 1.0, -1.0), machine.indices)


class StumpTrainer:
    """bob's stump trainer: the stump that best follows the negative loss gradient, every threshold tried.

    Its machines have bob's polarity, so their fitted weights come out negative, as in bob.
    """

    def __init__(self) -> None:
        # bob searches every threshold between two distinct values; bob_boost's default bins at quantiles
        self._core = core_trainers.StumpTrainer(max_bins=None)

    def train(self, training_features, loss_gradient) -> StumpMachine:
        """Return the stump for the loss gradient.

        Parameters
        ----------
        training_features : array_like
            (#samples, #features) features (float or integer).
        loss_gradient : array_like
            (#samples,) or (#samples, 1) loss gradient at the current scores.

        Returns
        -------
        StumpMachine
            The stump maximising ``|sum_n g_n h(x_n)|`` over the negative gradient ``g`` (bob_boost's
            criterion; see the module documentation of :mod:`bob_boost.compat.bob`), in bob's polarity.
        """
        return wrap(to_bob_signs(self._core.train(training_features, loss_gradient)))

    def compute_threshold(self, features, gradient) -> tuple[float, float, float]:
        """bob's per-feature search: the polarity, threshold and gain of the best stump on one feature.

        Parameters
        ----------
        features : array_like
            (#samples,) values of one feature.
        gradient : array_like
            (#samples,) the negative loss gradient (what :meth:`train` passes, as in bob).

        Returns
        -------
        polarity : float
            bob's polarity of the stump: -1 when the samples above the threshold have a positive gradient sum.
        threshold : float
            Half-way between two consecutive distinct values.
        gain : float
            ``|sum_n gradient[n] h(x_n)|`` for the stump's outputs ``h`` = -1 below / +1 above.
            ``(1., 0., 0.)`` for a constant feature, as bob returns it.
        """
        column = np.asarray(features)
        if column.ndim != 1:
            raise InvalidValueError(f"features: expected the (#samples,) values of one feature, got shape "
                                    f"{column.shape}")
        negative_gradient = np.asarray(gradient, dtype=np.float64).reshape(-1)
        column = as_feature_matrix(column[:, np.newaxis])
        if np.all(column == column[0, 0]):
            return 1.0, 0.0, 0.0  # nothing to split, nothing gained
        stump = self._core.train(column, -negative_gradient)
        gain = abs(float(np.dot(negative_gradient, stump.forward(column)[:, 0])))
        return -stump.polarity, stump.threshold, gain


class LUTTrainer:
    """bob's look-up-table trainer, uni- or multi-variate, for integer features in ``[0, maximum_feature_value)``.

    Parameters
    ----------
    maximum_feature_value : int
        The number of entries of each table.
    number_of_outputs : int
        The number of outputs (1: uni-variate).
    selection_style : {"independent", "shared"}
        A feature per output, or one feature shared by all outputs.

    Its tables are bob's: +1 where the loss gradient summed over the samples of a feature value is
    positive, -1 elsewhere, so the fitted weights come out negative, as in bob.
    """

    def __init__(self, maximum_feature_value: int, number_of_outputs: int = 1,
                 selection_style: str = "independent") -> None:
        self._core = core_trainers.LUTTrainer(maximum_feature_value, number_of_outputs, selection_style)

    @property
    def number_of_labels(self) -> int:
        """The number of entries of each table (bob's name for ``maximum_feature_value``)."""
        return self._core.maximum_feature_value

    @property
    def number_of_outputs(self) -> int:
        """The number of outputs."""
        return self._core.number_of_outputs

    @property
    def selection_type(self) -> str:
        """``"independent"`` or ``"shared"``."""
        return self._core.selection_style

    def train(self, training_features, loss_gradient) -> LUTMachine:
        """Return the look-up-table machine for the loss gradient.

        Parameters
        ----------
        training_features : array_like
            (#samples, #features) integer features (bob took uint16).
        loss_gradient : array_like
            (#samples, #outputs) loss gradient at the current scores.
        """
        machine = self._core.train(training_features, loss_gradient)  # validates both arguments
        return wrap(bob_tables(machine, np.asarray(training_features), loss_gradient))


def weighted_histogram(features, weights, histogram) -> np.ndarray:
    """Sum ``weights`` per feature value: ``histogram[v] = sum of weights[n] where features[n] == v``.

    The sums run from the last sample to the first, as bob's, so that they round as bob's did.

    Parameters
    ----------
    features : array_like
        (#samples,) non-negative integer feature values.
    weights : array_like
        (#samples,) weights.
    histogram : numpy.ndarray or int
        A float64 (#values,) array to fill (bob's form), or the number of values for a new histogram.

    Returns
    -------
    numpy.ndarray
        The histogram (``histogram`` itself when an array was given).
    """
    values = np.asarray(features)
    if values.ndim != 1 or not (np.issubdtype(values.dtype, np.integer) or values.size == 0):
        raise InvalidTypeError(f"features: expected a 1-D integer array, got {values.dtype} of shape {values.shape}")
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != values.shape:
        raise InvalidValueError(f"weights: expected shape {values.shape} (one per feature value), got {weights.shape}")
    if isinstance(histogram, numbers.Integral) and not isinstance(histogram, bool):
        if histogram < 1:
            raise InvalidValueError(f"histogram: the number of values must be positive, got {histogram}")
        size, output = int(histogram), None
    else:
        if isinstance(histogram, np.ndarray) and histogram.ndim != 1:
            raise InvalidValueError(f"histogram: expected a 1-D array to fill, got shape {histogram.shape}")
        output = check_output(histogram, "histogram", [np.shape(histogram)])
        size = output.shape[0]
    if values.size and (values.min() < 0 or values.max() >= size):
        raise InvalidValueError(f"features: values must lie in [0, {size}), found {values.min()}..{values.max()}")
    # bob adds from the last sample to the first; bincount adds in input order, so the reversed arrays give
    # bob's rounding (which decides the sign of entries whose sum cancels, hence bob's tables)
    counts = np.bincount(values[::-1].astype(np.intp), weights=weights[::-1], minlength=size)
    if output is None:
        return counts
    output[...] = counts
    return output


def bob_weights(loss_function: CoreLossFunction, targets: np.ndarray, previous_scores: np.ndarray,
                current_scores: np.ndarray) -> np.ndarray:
    """The weight(s) of a new weak machine as bob's ``Boosting.train`` fitted them.

    :func:`scipy.optimize.fmin_l_bfgs_b` from zero, SciPy's default tolerances, on the loss's
    ``loss_sum`` with ``loss_gradient_sum`` as its gradient, both unscaled. bob's ``loss_sum`` returns one
    value per output; the SciPy versions bob ran on passed that vector to the Fortran code, which read its
    first element, so the objective is the first output's loss sum (while the gradient has every output).
    Current SciPy needs a number, so it is given that element. (With the summed loss instead, bob's
    expected weights of its multi-variate "shared" test are missed in the fifth digit.)

    Returns
    -------
    numpy.ndarray
        (#outputs,) weights.
    """
    return _fit_weights(loss_function, targets, previous_scores, current_scores)[0]


def _fit_weights(loss_function: CoreLossFunction, targets: np.ndarray, previous_scores: np.ndarray,
                 current_scores: np.ndarray) -> tuple[np.ndarray, int]:
    """:func:`bob_weights` and L-BFGS's warning flag (0: converged)."""
    def objective(alpha: np.ndarray) -> float:
        return float(np.ravel(loss_function.loss_sum(alpha, targets, previous_scores, current_scores))[0])

    def gradient(alpha: np.ndarray) -> np.ndarray:
        return np.ravel(loss_function.loss_gradient_sum(alpha, targets, previous_scores, current_scores))

    alpha, _, info = scipy.optimize.fmin_l_bfgs_b(objective, np.zeros(targets.shape[1]), fprime=gradient)
    if info["warnflag"] != 0:
        logger.warning("L-BFGS returned warning %d: %s", info["warnflag"], info.get("task"))
    return np.asarray(alpha, dtype=np.float64), int(info["warnflag"])


class _BobGradientBoosting(GradientBoosting):
    """bob_boost's generic loop configuration with bob's weight fit as its step rule."""

    name = "Boosting (bob.learn.boosting)"

    #: bob kept every weight its L-BFGS call returned; so do its models here (no descent guarantee).
    descend = None

    def step(self, machine: core_base.WeakMachine, state: RoundState) -> tuple[np.ndarray, bool] | None:
        """bob's L-BFGS weights; None (stop) only when L-BFGS failed with all weights zero, as bob stops.

        A converged zero weight is kept, as bob kept it: the machine then has a round that adds nothing.
        """
        # the outputs the weak trainer proposed with the machine, kept for end_round as the core step keeps them
        weak_scores = state.extra.pop("weak_scores", None)
        if weak_scores is None:
            weak_scores = machine.forward(state.features)
        alpha, warning = _fit_weights(self.loss_function, self.targets, state.scores, weak_scores)
        if warning and np.all(alpha == 0.0):
            logger.warning("Round %d: L-BFGS returned zero weights with a warning; stopping", state.round_index + 1)
            return None
        state.extra["weak_scores"] = weak_scores
        return alpha, False


class _BobSignWeakTrainer:
    """What the loop drives for :class:`Boosting`: the weak trainer's proposals in bob's sign convention.

    bob's own trainers propose through their bob_boost trainer (prepared features, outputs from the bin
    codes); any other object with bob's ``train(features, loss_gradient)`` is asked every round.
    """

    accepts_missing = False

    def __init__(self, weak_trainer) -> None:
        self._trainer = weak_trainer
        self._core = weak_trainer._core if isinstance(weak_trainer, (StumpTrainer, LUTTrainer)) else None

    def prepare(self, features: np.ndarray):
        """The bob_boost trainer's prepared features (the features themselves for other trainers)."""
        return features if self._core is None else self._core.prepare(features)

    def check_outputs(self, number_of_outputs: int) -> None:
        """Raise unless the weak trainer serves ``number_of_outputs`` outputs."""
        if self._core is not None:
            self._core.check_outputs(number_of_outputs)

    def propose(self, prepared, state: RoundState) -> Proposal | None:
        """The round's weak machine in bob's signs (with its negated training outputs, when known)."""
        if self._core is None:
            return Proposal(unwrap(self._trainer.train(prepared, state.gradient), "weak_trainer.train()"))
        proposal = self._core.propose(prepared, state)
        if proposal is None:
            return None
        if isinstance(self._trainer, LUTTrainer):  # bob's tables, summed in bob's order
            return dataclasses.replace(
                proposal, machine=bob_tables(proposal.machine, state.features, state.gradient), outputs=None,
                weight=None if proposal.weight is None else -np.asarray(proposal.weight))
        return dataclasses.replace(
            proposal, machine=to_bob_signs(proposal.machine),
            weight=None if proposal.weight is None else -np.asarray(proposal.weight),
            outputs=None if proposal.outputs is None else -proposal.outputs)


class Boosting:
    """bob's boosting trainer: a loss drives a weak trainer, round after round.

    Parameters
    ----------
    weak_trainer : StumpTrainer or LUTTrainer
        The weak trainer (any object with bob's ``train(features, loss_gradient)`` returning a
        :class:`WeakMachine` works too).
    loss_function : LossFunction
        The loss (one of this package's, or any :class:`bob_boost.LossFunction`).
    """

    def __init__(self, weak_trainer, loss_function: CoreLossFunction) -> None:
        if not callable(getattr(weak_trainer, "train", None)):
            raise InvalidTypeError(f"weak_trainer: needs a train(features, loss_gradient) method, "
                                   f"got {type(weak_trainer).__name__}")
        if not isinstance(loss_function, CoreLossFunction):
            raise InvalidTypeError(f"loss_function: expected a LossFunction, got {type(loss_function).__name__}")
        self.m_trainer = weak_trainer
        self.m_loss_function = loss_function

    def get_loss_function(self) -> CoreLossFunction:
        """The loss this trainer minimises."""
        return self.m_loss_function

    def train(self, training_features, training_targets, number_of_rounds: int = 20,
              boosted_machine: BoostedMachine | None = None) -> BoostedMachine:
        """Boost ``number_of_rounds`` weak machines.

        Parameters
        ----------
        training_features : array_like
            (#samples, #features) features: floats or integers for stumps, integers below the table size
            for look-up tables.
        training_targets : array_like
            (#samples,) or (#samples, #outputs) targets.
        number_of_rounds : int
            The number of weak machines to add (fewer only when L-BFGS fails with all weights zero, as in
            bob; a converged zero weight is added, as bob added it).
        boosted_machine : BoostedMachine, optional
            Continue this machine: the new weak machines are added to it, and it is returned.

        Returns
        -------
        BoostedMachine
            The trained machine.
        """
        if boosted_machine is not None and not isinstance(boosted_machine, BoostedMachine):
            raise InvalidTypeError(f"boosted_machine: expected a BoostedMachine, got {type(boosted_machine).__name__}")
        features = as_feature_matrix(training_features, "training_features")
        targets = self.m_loss_function.check_targets(training_targets)
        check_same_samples(features, targets, "training_features", "training_targets")
        weak_trainer = _BobSignWeakTrainer(self.m_trainer)
        weak_trainer.check_outputs(targets.shape[1])
        algorithm = _BobGradientBoosting(self.m_loss_function, weak_trainer, targets)
        continued = None if boosted_machine is None else boosted_machine.core
        with single_threaded_blas():
            trained = loop.run(algorithm, weak_trainer, features, number_of_rounds, continued)
        return boosted_machine if boosted_machine is not None else BoostedMachine.from_core(trained)


__all__ = ["Boosting", "LUTTrainer", "StumpTrainer", "bob_tables", "bob_weights", "to_bob_signs", "weighted_histogram"]
