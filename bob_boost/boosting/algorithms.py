"""The published algorithms as configurations of the one loop (:mod:`bob_boost.boosting.loop`).

:class:`GradientBoosting`
    bob.learn.boosting's generic trainer: the weak trainer follows the loss gradient, L-BFGS fits the
    weights (:func:`~bob_boost.boosting.steps.fit_weights`). With the exponential loss and stumps this is
    discrete AdaBoost.
:class:`MulticlassCostBoosting`
    BAdaCost (and SAMME, AdaBoost.M1, which are BAdaCost with particular cost matrices and steps): sample
    weights from the CMEL loss, a cost-sensitive multi-class weak learner, a closed-form step.

:class:`CostSensitiveStumpBoosting`
    Cost-Sensitive AdaBoost and AdaBoostDB: the double-base bound ``sum_n D_1(n) exp(-C_n t_n F(x_n))`` gives
    the sample weights; the weak trainer is the stump pool of :mod:`bob_boost.weak_trainers.stump_pool`, whose
    selection rule proposes each stump together with its closed-form step.
"""
from __future__ import annotations

import logging
import warnings
from typing import Any
from collections.abc import Callable

import numpy as np
import scipy.special

from ..costs import margin_vectors
from ..exceptions import ConvergenceWarning, InvalidTypeError, InvalidValueError
from ..losses.base import LossFunction, weighted
from ..machine import BoostedMachine
from ..weak.base import WeakMachine
from ..weak.multiclass import MultiClassWeakMachine
from .protocol import Proposal, RoundState
from .rows import derivatives_and_total, loss_derivatives, loss_total, updated_scores
from .steps import (MAX_HALVINGS, capped_step, compiled_loss, descending_weight,  # noqa: F401 (MAX_HALVINGS:
                    fit_line_step, newton_fit_step, proves_descent)  # re-exported, where it was first defined)

logger = logging.getLogger(__name__)


class GradientBoosting:
    """The generic loop configuration: a loss, a weak trainer following its gradient, L-BFGS weights.

    Parameters
    ----------
    loss_function : LossFunction
        The loss minimised.
    weak_trainer : object
        Has ``propose(prepared, state)`` reading ``state.gradient``, or (bob_boost 0.1's protocol)
        ``train(prepared, loss_gradient)``.
    targets : numpy.ndarray
        (#samples, #outputs) targets, validated by the loss.
    sample_weight : numpy.ndarray, optional
        (#samples,) factors of every sample's loss, validated (mean 1).
    baseline : numpy.ndarray, optional
        (#outputs,) constant a new machine starts from: the rounds boost ``targets`` (already the
        residuals ``targets - baseline``) from 0, and the machine adds it to its scores.
    step_rule : {"auto", "lbfgs", "newton"}
        ``"lbfgs"``: :func:`~bob_boost.boosting.steps.fit_weights`; ``"newton"``:
        :func:`~bob_boost.boosting.steps.newton_fit_weights` (built-in separable losses only);
        ``"auto"``: Newton when the loss has a compiled form and the weak trainer's binning is lossy
        (some feature cut at quantiles), else L-BFGS, so models of exactly binned data stay bob's.
    learning_rate : float
        Shrinkage: every weight (fitted, or proposed by the weak trainer) is multiplied by it.
    """

    name = "Boosting"

    def __init__(self, loss_function: LossFunction, weak_trainer: Any, targets: np.ndarray,
                 sample_weight: np.ndarray | None = None, baseline: np.ndarray | None = None,
                 step_rule: str = "auto", learning_rate: float = 1.0) -> None:
        self.loss_function = loss_function
        self.learning_rate = learning_rate
        self.weak_trainer = weak_trainer
        self.targets = targets
        self.sample_weight = sample_weight
        self.baseline = baseline
        self.step_rule = step_rule

    def new_machine(self, features: np.ndarray) -> BoostedMachine:
        """An empty machine with the loss's outputs, cost matrix and decision rule."""
        outputs = self.targets.shape[1]
        return BoostedMachine(number_of_outputs=outputs, cost_matrix=self.loss_function.cost_matrix,
                              number_of_features=features.shape[1],
                              metadata={"loss": self.loss_function.name or type(self.loss_function).__name__},
                              decision_rule=self.loss_function.decision_rule(outputs), baseline=self.baseline)

    def check_machine(self, machine: BoostedMachine) -> None:
        """The machine must have as many outputs as the targets."""
        if machine.number_of_outputs not in (None, self.targets.shape[1]):
            raise InvalidValueError(f"boosted_machine: has {machine.number_of_outputs} outputs but targets "
                                    f"have {self.targets.shape[1]}")

    def start(self, features: np.ndarray, machine: BoostedMachine) -> RoundState:
        """Scores 0 for a new machine (its baseline when set), else the machine's scores."""
        if self.baseline is not None:  # residuals from 0; callbacks see the baseline added back
            # a continued machine's rounds summed from 0, as this loop accumulated them: bit for bit the
            # scores a single longer run would have reached
            scores = (machine.decision_scores(features, include_baseline=False) if len(machine)
                      else np.zeros(self.targets.shape))
            return RoundState(features=features, scores=scores, score_offset=self.baseline)
        # an empty machine without baseline scores 0: no need to validate the features again
        if len(machine) or np.any(machine.baseline != 0):
            scores = machine.decision_scores(features)
        else:
            scores = np.zeros(self.targets.shape)
        return RoundState(features=features, scores=scores)

    def begin_round(self, state: RoundState) -> None:
        """The loss gradient at the current scores."""
        cached = state.extra.pop("derivatives", None)  # the descent check's, at these scores
        if cached is not None:
            gradient, hessian = cached
        else:
            gradient, hessian = loss_derivatives(self.loss_function, self.targets, state.scores,
                                                 self._with_hessian(), getattr(state.prepared, "n_threads", 1))
        with_hessian = hessian is not None
        if with_hessian:
            state.hessian = weighted(hessian, self.sample_weight)
        state.gradient = weighted(gradient, self.sample_weight)

    def _with_hessian(self) -> bool:
        return bool(getattr(self.weak_trainer, "uses_hessian", False) and self.loss_function.has_hessian)

    def propose(self, prepared: Any, state: RoundState) -> Proposal:
        """The weak trainer's machine for the gradient (with its training outputs, when it has them)."""
        if not uses_propose(self.weak_trainer):
            return Proposal(self.weak_trainer.train(prepared, state.gradient))
        proposal = self.weak_trainer.propose(prepared, state)
        if proposal is not None and proposal.outputs is not None:
            state.extra["weak_scores"] = proposal.outputs
        if proposal is not None and proposal.weight is not None and self.learning_rate != 1.0:
            proposal = Proposal(proposal.machine, np.asarray(proposal.weight) * self.learning_rate, proposal.perfect,
                                proposal.outputs)
        return proposal

    def step(self, machine: WeakMachine, state: RoundState) -> tuple[np.ndarray, bool] | None:
        """The step rule's weights; None (stop) when they are all zero."""
        weak_scores = state.extra.pop("weak_scores", None)
        if weak_scores is None:
            weak_scores = machine.forward(state.features)
        rule = newton_fit_step if self._uses_newton(state.prepared) else fit_line_step
        line = rule(self.loss_function, self.targets, state.scores, weak_scores, self.sample_weight,
                    getattr(state.prepared, "n_threads", 1))
        alpha = line.weights * self.learning_rate
        if np.all(alpha == 0.0):
            if line.converged:
                logger.info("Round %d: the optimal weight is zero; stopping", state.round_index + 1)
            else:
                warnings.warn(f"{self.name} round {state.round_index + 1}: the weight search on "
                              f"{type(self.loss_function).__name__} found no step that decreases the training loss "
                              f"(is its loss_gradient the derivative of its loss?); training stopped",
                              ConvergenceWarning, stacklevel=2)
            return None
        state.extra["weak_scores"] = weak_scores
        state.extra["certified"] = proves_descent(line, self.learning_rate, self.loss_function.convex)
        return alpha, False

    def descend(self, machine: WeakMachine, weight: np.ndarray, state: RoundState) -> np.ndarray | None:
        """The descent guarantee: ``weight``, or the largest of its halvings that does not raise the training
        loss; None (with a :class:`~bob_boost.exceptions.ConvergenceWarning`) when none of
        :data:`MAX_HALVINGS` does.

        A weight the step rule certified is taken as it is. Otherwise the loss at the new scores is
        evaluated, at the first try with the loss derivatives there
        (:func:`~bob_boost.boosting.rows.derivatives_and_total`, one pass for the softmax), and the scores
        (and derivatives) of the weight accepted are kept for :meth:`end_round` and the next round, which
        would compute them anyway; a halved weight's are evaluated alone.
        """
        if state.extra.pop("certified", False):
            # the loss reached is not kept: a later check sums it afresh, as a continued run would
            state.extra["loss"] = None
            return weight
        weak_scores = state.extra.get("weak_scores")
        if weak_scores is None:
            weak_scores = state.extra["weak_scores"] = machine.forward(state.features)
        n_threads = getattr(state.prepared, "n_threads", 1)
        before = state.extra.get("loss")
        if before is None:
            before = loss_total(self.loss_function, self.targets, state.scores, self.sample_weight, n_threads)

        def loss_at(weight: np.ndarray, halvings: int) -> float:
            scores = updated_scores(state.scores, weight, weak_scores, n_threads)
            derivatives = None
            if halvings == 0:
                *derivatives, after = derivatives_and_total(self.loss_function, self.targets, scores,
                                                            self._with_hessian(), self.sample_weight, n_threads)
            else:
                after = loss_total(self.loss_function, self.targets, scores, self.sample_weight, n_threads)
            state.extra.update(next_scores=scores, derivatives=derivatives)
            return after

        accepted = descending_weight(weight, before, loss_at, self.name, state.round_index,
                                     type(self.loss_function).__name__)
        if accepted is None:
            state.extra.update(next_scores=None, derivatives=None)
            return None
        weight, state.extra["loss"] = accepted
        return weight

    def _uses_newton(self, prepared: Any) -> bool:
        if self.step_rule == "auto":
            return compiled_loss(self.loss_function) is not None and bool(getattr(prepared, "lossy", False))
        return self.step_rule == "newton"

    def end_round(self, state: RoundState, machine: WeakMachine, weight: np.ndarray) -> None:
        """Scores plus the weighted weak machine's outputs."""
        weak_scores = state.extra.pop("weak_scores", None)
        scores = state.extra.pop("next_scores", None)
        if scores is None:
            if weak_scores is None:  # the weak trainer chose the weight: the step rule did not run
                weak_scores = machine.forward(state.features)
            scores = updated_scores(state.scores, weight, weak_scores, getattr(state.prepared, "n_threads", 1))
        state.scores = scores

    def describe(self, state: RoundState) -> str:
        """The training loss."""
        values = weighted(self.loss_function.loss(self.targets, state.scores), self.sample_weight)
        return f", training loss {np.sum(values):.6g}"


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
    """

    def __init__(self, weak_trainer: Any, labels: np.ndarray, cost_matrix: np.ndarray, loss_matrix: np.ndarray,
                 exponents: np.ndarray, step_rule: Callable[[np.ndarray, np.ndarray], float], shrinkage: float,
                 feature_fraction: float, random_state, name: str, metadata: dict[str, Any],
                 sample_weight: np.ndarray | None = None) -> None:
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
        self._vectors = margin_vectors(cost_matrix.shape[0])

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
            log_weights = log_weights + weight * self.exponents[self.labels, weak_machine.forward_labels(features)]
            if subset_size != features.shape[1]:
                rng.choice(features.shape[1], subset_size, replace=False)
        scores = (machine.decision_scores(features) if len(machine) or np.any(machine.baseline != 0)
                  else np.zeros((features.shape[0], k)))
        state = RoundState(features=features, scores=scores, labels=self.labels, loss_matrix=self.loss_matrix,
                           log_weights=log_weights)
        state.extra["rng"] = rng
        state.extra["subset_size"] = subset_size
        return state

    def ended_perfect(self, machine: BoostedMachine, state: RoundState) -> bool:
        """Whether the last weak learner's step on these weights is infinite (no costly training error)."""
        k = self.cost_matrix.shape[0]
        last = machine.weak_machines[-1]
        if not isinstance(last, MultiClassWeakMachine):
            return False
        weights = np.exp(state.log_weights - scipy.special.logsumexp(state.log_weights))
        confusion = np.bincount(self.labels * k + last.forward_labels(state.features), weights=weights,
                                minlength=k * k).reshape(k, k)
        return bool(np.isinf(self.step_rule(confusion, self.exponents)))

    def begin_round(self, state: RoundState) -> None:
        """Normalised sample weights, and this round's feature columns."""
        state.sample_weights = np.exp(state.log_weights - scipy.special.logsumexp(state.log_weights))
        n_features, n_subset = state.features.shape[1], state.extra["subset_size"]
        state.feature_subset = None if n_subset == n_features else \
            np.sort(state.extra["rng"].choice(n_features, n_subset, replace=False))

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
        confusion = np.bincount(self.labels * k + predicted, weights=state.sample_weights,
                                minlength=k * k).reshape(k, k)
        step = self.step_rule(confusion, self.exponents)
        if not step > 0:
            if state.rounds_before + state.round_index == 0:  # an empty machine is worth a warning
                warnings.warn(f"{self.name} round 1: the weak learner's step is {step:.6g}, not positive: on {k} "
                              f"classes it does no better than the algorithm requires (a weighted error below 1/2 "
                              f"for AdaBoost.M1, below 1 - 1/K for SAMME); the machine is empty",
                              ConvergenceWarning, stacklevel=2)
            logger.info("Round %d: step %.6g <= 0; stopping", state.round_index + 1, step)
            return None
        perfect = bool(np.isinf(step))
        if perfect:
            step = capped_step(self.exponents)
        state.extra["predicted"] = predicted
        return step * self.shrinkage, perfect

    def end_round(self, state: RoundState, machine: WeakMachine, weight: float) -> None:
        """CMEL weight update; the scores move along the margin vector of each predicted class."""
        predicted = state.extra.pop("predicted")
        state.log_weights = state.log_weights + weight * self.exponents[self.labels, predicted]
        if state.track_scores:  # training needs only the log weights; the scores cost a (#samples, K) pass
            # the weak learner's output is the margin vector of its label (MultiClassWeakMachine.forward)
            state.scores = state.scores + weight * self._vectors[predicted]

    def describe(self, state: RoundState) -> str:
        """Nothing beyond the step."""
        return ""


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


def uses_propose(weak_trainer: Any) -> bool:
    """Whether the loop should call ``propose`` rather than bob_boost 0.1's ``train``.

    A subclass of a built-in weak trainer that overrides only ``train`` keeps its ``train``.
    """
    definers = {name: next((cls for cls in type(weak_trainer).__mro__ if name in vars(cls)), None)
                for name in ("propose", "train")}
    if definers["propose"] is None:
        return False
    if definers["train"] is None:
        return True
    return issubclass(definers["propose"], definers["train"])
