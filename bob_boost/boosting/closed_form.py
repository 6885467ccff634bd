"""The algorithms whose steps have closed forms, as configurations of the one loop.

:class:`MulticlassCostBoosting`
    BAdaCost (and SAMME, AdaBoost.M1, which are BAdaCost with particular cost matrices and steps): sample
    weights from the CMEL loss, a cost-sensitive multi-class weak learner, a closed-form step.
:class:`MultiBoostBoosting`
    MultiBoost: the cost-weighted exponential loss ``sum_k C(l, k) exp(f_k(x))`` of margin vectors, a pool of
    multi-class weak machines to choose from, an exact line search.
:class:`CostSensitiveStumpBoosting`
    Cost-Sensitive AdaBoost and AdaBoostDB: the double-base bound ``sum_n D_1(n) exp(-C_n t_n F(x_n))`` gives
    the sample weights; the weak trainer is the stump pool of :mod:`bob_boost.weak_trainers.stump_pool`, whose
    selection rule proposes each stump together with its closed-form step.
"""
from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.special

from ..costs import margin_vectors, predicted_exponents
from ..exceptions import ConvergenceWarning, InvalidTypeError, InvalidValueError
from ..machine import BoostedMachine
from ..weak.base import WeakMachine
from ..weak.multiclass import MultiClassWeakMachine
from .protocol import Proposal, RoundState, uses_propose
from .sampling import Sampling, in_memory_factors
from .steps import PERFECT_LEARNER_WEIGHT_RATIO, capped_step, multiboost_step

logger = logging.getLogger(__name__)

#: Loss-matrix exponents above this are shifted down before ``exp`` (the weak learner's choices do not change when
#: its losses are scaled): ``exp(300)`` times the sample weights summed over a node stays far from the float64
#: limit (``exp(709)``).
LARGEST_EXPONENT = 300.0


def loss_shift(peak: float) -> float:
    """What exponents whose largest is ``peak`` are shifted down by before their exponentials become a weak
    learner's losses: ``peak`` when ``exp`` would overflow near it, else 0 (the losses as they are, bit for bit),
    as :meth:`BAdaCostTrainer.round_matrices <bob_boost.BAdaCostTrainer.round_matrices>` shifts a class matrix."""
    return peak if peak > LARGEST_EXPONENT else 0.0


class MulticlassCostBoosting:
    """BAdaCost's configuration of the loop (SAMME and AdaBoost.M1 change its matrices and step).

    Parameters
    ----------
    weak_trainer : object
        A multi-class weak trainer: ``propose(prepared, state)`` reading ``state.labels``,
        ``state.sample_weights``, ``state.loss_matrix`` and ``state.feature_subset``, or (bob_boost 0.1's
        protocol) ``train(prepared, labels, weights, loss_matrix, feature_subset)``.
    labels : numpy.ndarray
        (#samples,) class indices.
    cost_matrix : numpy.ndarray
        (K, K) costs the machine keeps.
    loss_matrix, exponents : numpy.ndarray
        (K, K) loss matrix of the weak learner and exponents of the weight update.
    step_rule : callable
        ``step_rule(confusion, exponents) -> float``, the unshrunk step.
    shrinkage : float
        Factor of every step.
    feature_fraction : float
        Fraction of the features each round may use.
    random_state : int or numpy.random.Generator, optional
        Seed of the feature sampling.
    name : str
        The algorithm's name for the log.
    metadata : dict
        Metadata of a new machine.
    sample_weight : numpy.ndarray, optional
        (#samples,) validated initial weights (mean 1); uniform by default.
    sampling : Sampling, optional
        The rows of every round's weak learner (:mod:`bob_boost.boosting.sampling`; strata: the classes;
        GOSS's gradient magnitudes: the sample weights); the step is found on every row.
    class_log_factors : numpy.ndarray, optional
        (K,) logarithms of factors every round's weight update multiplies each class's weights by, whatever
        the step (AdaC2.M1's class costs); none by default.
    row_exponents : numpy.ndarray, optional
        (#samples, K) example-dependent exponents replacing ``exponents``' class rows (BAdaCost's per-sample
        ``C2`` rows); the weak learner then reads the matching per-row losses (``row_losses`` of the state,
        the exponentials of these) and the step rule is given each row's weight and exponent.
    """

    def __init__(self, weak_trainer: Any, labels: np.ndarray, cost_matrix: np.ndarray, loss_matrix: np.ndarray,
                 exponents: np.ndarray, step_rule: Callable[[np.ndarray, np.ndarray], float], shrinkage: float,
                 feature_fraction: float, random_state, name: str, metadata: dict[str, Any],
                 sample_weight: np.ndarray | None = None, sampling: Sampling | None = None,
                 class_log_factors: np.ndarray | None = None, row_exponents: np.ndarray | None = None) -> None:
        self.weak_trainer = weak_trainer
        self.labels = labels
        self.cost_matrix = cost_matrix
        self.loss_matrix = loss_matrix
        self.exponents = exponents
        self.step_rule = step_rule
        self.shrinkage = shrinkage
        self.feature_fraction = feature_fraction
        self.random_state = random_state
        self.name = name
        self.metadata = metadata
        self.sample_weight = sample_weight
        self.sampling = sampling if sampling is not None and sampling.samples_rows else None
        self._drawn: tuple[int, np.ndarray] | None = None
        self._vectors = margin_vectors(cost_matrix.shape[0])
        self._row_log_factors = None if class_log_factors is None else class_log_factors[labels]
        self.row_exponents = row_exponents
        self._row_losses = None
        if row_exponents is not None:
            self._row_losses = np.exp(row_exponents - loss_shift(float(row_exponents.max())))

    def new_machine(self, features: np.ndarray) -> BoostedMachine:
        """An empty machine holding the cost matrix (it predicts ``argmin_k (C* f)_k``)."""
        return BoostedMachine(cost_matrix=self.cost_matrix, number_of_features=features.shape[1],
                              metadata=dict(self.metadata))

    def check_machine(self, machine: BoostedMachine) -> None:
        """The machine must hold this run's cost matrix."""
        if machine.cost_matrix is None or not np.array_equal(machine.cost_matrix, self.cost_matrix):
            raise InvalidValueError("boosted_machine: must hold the trainer's cost matrix")

    def start(self, features: np.ndarray, machine: BoostedMachine) -> RoundState:
        """Uniform (or the given) weights for a new machine; a continued machine's rounds are replayed.

        Replaying each round's weight update and feature draw, in the order the run that trained the
        machine made them, continues it bit for bit as one longer run would have gone on.
        """
        k = self.cost_matrix.shape[0]
        log_weights = np.zeros(features.shape[0])
        if self.sample_weight is not None:
            with np.errstate(divide="ignore"):  # a zero weight stays zero: log -inf
                log_weights = np.log(self.sample_weight)
        rng = np.random.default_rng(self.random_state)
        subset_size = max(1, int(round(self.feature_fraction * features.shape[1])))
        for weak_machine, weight in zip(machine.weak_machines, machine.weights[:, 0]):
            log_weights = self._updated(log_weights, weight, weak_machine.forward_labels(features))
            if subset_size != features.shape[1]:
                rng.choice(features.shape[1], subset_size, replace=False)
        scores = (machine.decision_scores(features) if len(machine) or np.any(machine.baseline != 0)
                  else np.zeros((features.shape[0], k)))
        state = RoundState(features=features, scores=scores, labels=self.labels, loss_matrix=self.loss_matrix,
                           log_weights=log_weights, row_losses=self._row_losses)
        state.extra["rng"] = rng
        state.extra["subset_size"] = subset_size
        return state

    def ended_perfect(self, machine: BoostedMachine, state: RoundState) -> bool:
        """Whether the last weak learner's step on these weights is infinite (no costly training error)."""
        last = machine.weak_machines[-1]
        if not isinstance(last, MultiClassWeakMachine):
            return False
        weights = np.exp(state.log_weights - scipy.special.logsumexp(state.log_weights))
        return bool(np.isinf(self._step(weights, last.forward_labels(state.features))))

    def begin_round(self, state: RoundState) -> None:
        """Normalised sample weights (times the round's row factors, for the weak learner only), and this round's
        feature columns."""
        weights = np.exp(state.log_weights - scipy.special.logsumexp(state.log_weights))
        state.extra["weights"] = state.sample_weights = weights
        n_features, n_subset = state.features.shape[1], state.extra["subset_size"]
        state.feature_subset = None if n_subset == n_features else \
            np.sort(state.extra["rng"].choice(n_features, n_subset, replace=False))
        if self.sampling is not None:
            place = state.rounds_before + state.round_index
            draw = self.sampling.draw(place)
            if self._drawn is None or self._drawn[0] != draw or self.sampling.method == "goss":
                # GOSS's gradient magnitudes are the weights: the exponential loss's gradient
                self._drawn = (draw, in_memory_factors(self.sampling, place, weights.size, self.labels,
                                                       weights[:, np.newaxis], None))
            state.sample_weights = weights * self._drawn[1]

    def propose(self, prepared: Any, state: RoundState) -> Proposal:
        """The weak learner's machine for the weighted, cost-sensitive problem."""
        if uses_propose(self.weak_trainer):
            return self.weak_trainer.propose(prepared, state)
        return Proposal(self.weak_trainer.train(prepared, state.labels, state.sample_weights, state.loss_matrix,
                                                state.feature_subset))

    def step(self, machine: WeakMachine, state: RoundState) -> tuple[float, bool] | None:
        """The step rule on the weighted confusion matrix, capped when infinite, shrunk."""
        if not isinstance(machine, MultiClassWeakMachine):
            raise InvalidTypeError(f"weak_learner: returned a {type(machine).__name__}, not a MultiClassWeakMachine")
        k = self.cost_matrix.shape[0]
        predicted = machine.forward_labels(state.features)
        step = self._step(state.extra["weights"], predicted)
        if not step > 0:
            if state.rounds_before + state.round_index == 0:  # an empty machine is worth a warning
                warnings.warn(f"{self.name} round 1: the weak learner's step is {step:.6g}, not positive: on {k} "
                              f"classes it does no better than the algorithm requires (a weighted error below 1/2 "
                              f"for AdaBoost.M1, a cost-weighted one for AdaC2.M1, below 1 - 1/K for SAMME); the "
                              f"machine is empty",
                              ConvergenceWarning, stacklevel=2)
            logger.info("Round %d: step %.6g <= 0; stopping", state.round_index + 1, step)
            return None
        perfect = bool(np.isinf(step))
        if perfect:
            step = capped_step(self.exponents if self.row_exponents is None else self.row_exponents)
        state.extra["predicted"] = predicted
        return step * self.shrinkage, perfect

    def end_round(self, state: RoundState, machine: WeakMachine, weight: float) -> None:
        """CMEL weight update; the scores move along the margin vector of each predicted class."""
        predicted = state.extra.pop("predicted")
        state.log_weights = self._updated(state.log_weights, weight, predicted)
        if state.track_scores:  # training needs only the log weights; the scores cost a (#samples, K) pass
            # the weak learner's output is the margin vector of its label (MultiClassWeakMachine.forward)
            state.scores = state.scores + weight * self._vectors[predicted]

    def _step(self, weights: np.ndarray, predicted: np.ndarray) -> float:
        """The step rule on the weighted confusion matrix (with per-row exponents: on every row's weight and
        exponent)."""
        if self.row_exponents is not None:
            return self.step_rule(weights, predicted_exponents(self.labels, predicted, self.exponents,
                                                               self.row_exponents))
        k = self.cost_matrix.shape[0]
        confusion = np.bincount(self.labels * k + predicted, weights=weights, minlength=k * k).reshape(k, k)
        return self.step_rule(confusion, self.exponents)

    def _updated(self, log_weights: np.ndarray, weight: float, predicted: np.ndarray) -> np.ndarray:
        """The log weights after a weak learner of ``weight`` predicting ``predicted``."""
        log_weights = log_weights + weight * predicted_exponents(self.labels, predicted, self.exponents,
                                                                 self.row_exponents)
        return log_weights if self._row_log_factors is None else log_weights + self._row_log_factors

    def describe(self, state: RoundState) -> str:
        """Nothing beyond the step."""
        return ""


class MultiBoostBoosting:
    """MultiBoost's configuration of the loop: descent on ``sum_n sum_k C(l_n, k) exp(f_k(x_n))``.

    Every round the weak trainer (a :class:`~bob_boost.weak_trainers.machine_pool.MachinePool`) reads the
    loss's terms ``R[n, k] = C(l_n, k) exp(f_k(x_n))`` as ``state.row_losses`` (scaled by one common factor,
    which changes no choice) and proposes the member of least ``A = sum_n R[n, G(x_n)]``; its step is the
    exact minimiser :func:`~bob_boost.boosting.steps.multiboost_step` (the member of least ``A`` is the one
    of least loss after its step, as long as that step is positive). Training stops when it is not.

    Parameters
    ----------
    weak_trainer : MachinePool
        The pool: ``propose(prepared, state)`` reads ``state.row_losses`` and leaves the chosen member's
        training predictions in ``state.extra["predicted"]``.
    labels : numpy.ndarray
        (#samples,) class indices.
    cost_matrix : numpy.ndarray
        (K, K) costs ``C``.
    row_weights : numpy.ndarray, optional
        (#samples,) factors of each row's loss (``sample_weight``, mean 1); none by default.
    metadata : dict
        Metadata of a new machine (the cost matrix included).
    """

    name = "MultiBoost"

    def __init__(self, weak_trainer: Any, labels: np.ndarray, cost_matrix: np.ndarray,
                 row_weights: np.ndarray | None, metadata: dict[str, Any]) -> None:
        self.weak_trainer = weak_trainer
        self.labels = labels
        self.cost_matrix = cost_matrix
        k = cost_matrix.shape[0]
        with np.errstate(divide="ignore"):  # a zero cost (the diagonal) is a zero term: log -inf
            self.log_costs = np.log(cost_matrix[labels])
            if row_weights is not None:
                self.log_costs = self.log_costs + np.log(row_weights)[:, np.newaxis]
        self.metadata = metadata
        self._vectors = margin_vectors(k)
        # a perfect member's step: the loss terms then span the float64 precision range
        self._capped = float(np.log(PERFECT_LEARNER_WEIGHT_RATIO) * (k - 1) / k)

    def new_machine(self, features: np.ndarray) -> BoostedMachine:
        """An empty machine of K outputs, predicting the class of the largest score."""
        return BoostedMachine(number_of_outputs=self.cost_matrix.shape[0], number_of_features=features.shape[1],
                              metadata=dict(self.metadata))

    def check_machine(self, machine: BoostedMachine) -> None:
        """The machine must be a MultiBoost machine of these costs."""
        if machine.metadata.get("multiboost_cost_matrix") != self.metadata["multiboost_cost_matrix"]:
            raise InvalidValueError("boosted_machine: was not trained by MultiBoost with this cost matrix (its "
                                    "metadata 'multiboost_cost_matrix' differs)")

    def start(self, features: np.ndarray, machine: BoostedMachine) -> RoundState:
        """The machine's training scores (0 for a new one)."""
        k = self.cost_matrix.shape[0]
        scores = (machine.decision_scores(features) if len(machine) or np.any(machine.baseline != 0)
                  else np.zeros((features.shape[0], k)))
        return RoundState(features=features, scores=scores, labels=self.labels)

    def _terms(self, scores: np.ndarray) -> np.ndarray:
        exponents = self.log_costs + scores
        return np.exp(exponents - exponents.max())

    def ended_perfect(self, machine: BoostedMachine, state: RoundState) -> bool:
        """Whether the last weak machine makes no costly prediction."""
        last = machine.weak_machines[-1]
        predicted = last.forward_labels(state.features)
        return bool(np.all(self.log_costs[np.arange(predicted.size), predicted] == -np.inf))

    def begin_round(self, state: RoundState) -> None:
        """The loss terms, for the pool."""
        state.row_losses = self._terms(state.scores)

    def propose(self, prepared: Any, state: RoundState) -> Proposal:
        """The pool's member of least predicted cost."""
        return self.weak_trainer.propose(prepared, state)

    def step(self, machine: WeakMachine, state: RoundState) -> tuple[float, bool] | None:
        """The exact line search; None when it is not positive."""
        terms, predicted = state.row_losses, state.extra["predicted"]
        chosen = terms[np.arange(predicted.size), predicted]
        predicted_cost = float(chosen.sum())
        other_cost = float(np.maximum(terms.sum(axis=1) - chosen, 0.0).sum())
        step = multiboost_step(predicted_cost, other_cost, self.cost_matrix.shape[0])
        if not step > 0:
            logger.info("Round %d: the best member's step %.6g is not positive; stopping", state.round_index + 1,
                        step)
            return None
        perfect = bool(np.isinf(step))
        return (self._capped if perfect else step), perfect

    def end_round(self, state: RoundState, machine: WeakMachine, weight: float) -> None:
        """The scores move along the margin vectors of the predicted classes."""
        state.scores = state.scores + weight * self._vectors[state.extra.pop("predicted")]

    def describe(self, state: RoundState) -> str:
        """The mean training loss."""
        loss = np.exp(scipy.special.logsumexp(self.log_costs + state.scores)) / state.scores.shape[0]
        return f", training loss {loss:.6g}"


class CostSensitiveStumpBoosting:
    """Cost-sensitive binary stump boosting's configuration of the loop (AdaBoostDB, Cost-Sensitive AdaBoost).

    Parameters
    ----------
    name : str
        The algorithm's name for the log.
    weak_trainer : object
        The stump pool's weak trainer: ``propose(pool, state)`` reads ``state.log_weights`` and returns each
        stump with its step.
    labels : numpy.ndarray
        (#samples,) targets in {-1, +1}.
    log_initial : numpy.ndarray
        (#samples,) logarithms of the initial distribution ``D_1``.
    cost_positive, cost_negative : float
        ``C_P`` and ``C_N``.
    metadata : dict
        Metadata of a new machine.
    """

    def __init__(self, name: str, weak_trainer: Any, labels: np.ndarray, log_initial: np.ndarray,
                 cost_positive: float, cost_negative: float, metadata: dict[str, Any]) -> None:
        self.name = name
        self.weak_trainer = weak_trainer
        self.labels = labels
        self.log_initial = log_initial
        self.costs = np.where(labels > 0, cost_positive, cost_negative)
        self.metadata = metadata

    def new_machine(self, features: np.ndarray) -> BoostedMachine:
        """An empty univariate machine (it predicts the sign of its score)."""
        return BoostedMachine(number_of_outputs=1, number_of_features=features.shape[1], metadata=dict(self.metadata))

    def check_machine(self, machine: BoostedMachine) -> None:
        """The machine must be univariate."""
        if machine.number_of_outputs not in (None, 1):
            raise InvalidValueError(f"boosted_machine: has {machine.number_of_outputs} outputs, expected 1")

    def start(self, features: np.ndarray, machine: BoostedMachine) -> RoundState:
        """The machine's training scores (0 for a new one)."""
        if len(machine) or np.any(machine.baseline != 0):
            scores = machine.decision_scores(features)
        else:
            scores = np.zeros((features.shape[0], 1))
        return RoundState(features=features, scores=scores)

    def ended_perfect(self, machine: BoostedMachine, state: RoundState) -> bool:
        """Whether the last stump classifies every training sample of positive weight correctly."""
        outputs = machine.weak_machines[-1].forward(state.features)[:, 0]
        weighted = np.isfinite(self.log_initial)
        return bool(np.all(np.sign(outputs[weighted]) == self.labels[weighted]))

    def begin_round(self, state: RoundState) -> None:
        """Log sample weights ``log D_1 - C t F``."""
        state.log_weights = self.log_initial - self.costs * self.labels * state.scores[:, 0]

    def propose(self, prepared: Any, state: RoundState) -> Proposal | None:
        """The stump pool's stump and step, or None when no stump contributes."""
        return self.weak_trainer.propose(prepared, state)

    def step(self, machine: WeakMachine, state: RoundState) -> None:
        """Never needed: the stump pool proposes every stump with its step."""
        raise NotImplementedError("the stump pool proposes every stump with its step")

    def end_round(self, state: RoundState, machine: WeakMachine, weight: float) -> None:
        """Scores plus the weighted stump."""
        state.scores = state.scores + weight * machine.forward(state.features)

    def describe(self, state: RoundState) -> str:
        """The training bound."""
        bound = np.exp(self.log_initial - self.costs * self.labels * state.scores[:, 0]).sum()
        return f", training bound {bound:.6g}"
