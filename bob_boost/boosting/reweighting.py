"""The binary cost-reweighting family as one configuration of the loop: AdaBoost whose step and sample-weight
update take each row's misclassification cost ``c_i`` (the cost of its class: ``C_P`` for a positive row,
``C_N`` for a negative one).

Every round the weak trainer fits, on the distribution ``D_t``, the +-1 machine ``h_t`` of largest edge
``sum_i D_t(i) y_i h_t(x_i)`` (a :class:`~bob_boost.StumpTrainer` given the gradient ``-y_i D_t(i)``, which is
the exponential loss's at these weights); with the agreements ``u_i = y_i h_t(x_i)``, the rule's step is
:func:`~bob_boost.boosting.steps.reweighting_step`'s ``alpha_t = (1/2) ln(sum D w (1 + a u) / sum D w (1 - a u))``
and its update ``D_(t+1)(i) ∝ D_t(i) o_i exp(-s_t a'_i u_i)``:

========== ================ ================= ===================== ================ ==================
rule       step ``w``       step ``a``        update ``o``          update ``a'``    update ``s_t``
========== ================ ================= ===================== ================ ==================
adac1      1                ``c``             1                     ``c``            ``alpha_t``
adac2      ``c``            1                 ``c``                 1                ``alpha_t``
adac3      ``c``            ``c``             ``c``                 ``c``            ``alpha_t``
adacost    1                ``beta``          1                     ``beta``         ``alpha_t``
csb0       1                1                 ``c`` if wrong, 1     (none)           0
csb1       1                1                 ``c`` if wrong, 1     1                1
csb2       1                1                 ``c`` if wrong, 1     1                ``alpha_t``
asymboost  1                1                 ``k^(y/(2T))``        1                ``alpha_t``
========== ================ ================= ===================== ================ ==================

AdaCost's cost adjustment is ``beta_i = (1 - c_i u_i) / 2`` (``(1 - c)/2`` on a correct row, ``(1 + c)/2`` on a
wrong one). AsymBoost's ``k = C_P / C_N`` is spread over ``T`` rounds: ``D_1`` and every update carry
``k^(y_i/(2T))``. ``D_1`` is the sample weights (uniform by default) times ``c_i`` for AdaCost and
``k^(y_i/(2T))`` for AsymBoost. The machine is ``F = sum_t alpha_t h_t``, classified by its sign; CSB's
``alpha_t`` is AdaBoost's, used in the vote (and in CSB2's update). The sources of each rule are in
:mod:`bob_boost.trainers.cost_reweighting`.

The weak machine is fitted to ``D_t`` alone, as the papers train it, so the costs can make its step negative:
AdaC1's, AdaC2's and AdaC3's rounds depend on the step and the machine through ``alpha_t u_i`` only, so their
formula's negative step is kept (the machine's weight is negative: it votes for the other class, as its
negation would with the positive step). For the other rules a step that is not positive stops training. A
machine without weighted error (or, with a negative step, without a weighted right answer) gets at most the
step at which the weights span :data:`~bob_boost.boosting.steps.PERFECT_LEARNER_WEIGHT_RATIO`, and training
stops after it.
"""
from __future__ import annotations

import logging
import warnings
from typing import Any

import numpy as np
import scipy.special

from ..exceptions import ConvergenceWarning, InvalidTypeError, InvalidValueError
from ..machine import BoostedMachine
from ..weak.base import WeakMachine
from .protocol import Proposal, RoundState, uses_propose
from .steps import PERFECT_LEARNER_WEIGHT_RATIO, reweighting_step

logger = logging.getLogger(__name__)

#: The rules, by the names the trainers and front doors use.
RULES = ("adac1", "adac2", "adac3", "adacost", "csb0", "csb1", "csb2", "asymboost")

#: The rules whose round is unchanged by negating both its step and its weak machine: their step formula's
#: negative values are taken (the weak machine then votes against its outputs).
SIGN_SYMMETRIC = ("adac1", "adac2", "adac3")

#: The largest step: the weights then span the range of float64 precision.
STEP_CAP = float(np.log(PERFECT_LEARNER_WEIGHT_RATIO) / 2.0)


def adacost_adjustment(costs: np.ndarray, agreement: np.ndarray) -> np.ndarray:
    """AdaCost's cost adjustment ``beta_i = (1 - c_i u_i) / 2``."""
    return 0.5 * (1.0 - costs * agreement)


def step_factors(rule: str, costs: np.ndarray, agreement: np.ndarray) -> tuple[Any, Any]:
    """The row factors ``w`` and agreement factors ``a`` of ``rule``'s step."""
    if rule == "adac1":
        return 1.0, costs
    if rule == "adac2":
        return costs, 1.0
    if rule == "adac3":
        return costs, costs
    if rule == "adacost":
        return 1.0, adacost_adjustment(costs, agreement)
    return 1.0, 1.0


def log_update(rule: str, log_costs: np.ndarray, costs: np.ndarray, agreement: np.ndarray,
               step: float) -> np.ndarray:
    """The logarithm of ``rule``'s factor on every row's weight after a round of step ``step`` (AsymBoost's
    asymmetry aside)."""
    if rule == "adac1":
        return -step * costs * agreement
    if rule == "adac2":
        return log_costs - step * agreement
    if rule == "adac3":
        return log_costs - step * costs * agreement
    if rule == "adacost":
        return -step * adacost_adjustment(costs, agreement) * agreement
    if rule in ("csb0", "csb1", "csb2"):
        wrong_cost = np.where(agreement < 0, log_costs, 0.0)
        return wrong_cost if rule == "csb0" else wrong_cost - (1.0 if rule == "csb1" else step) * agreement
    return -step * agreement


class ReweightingBoosting:
    """The cost-reweighting family's configuration of the loop (see the module's description).

    Parameters
    ----------
    rule : str
        One of :data:`RULES`.
    weak_trainer : object
        A trainer of +-1 weak machines following ``state.gradient`` (``-y D``), such as
        :class:`~bob_boost.StumpTrainer`.
    labels : numpy.ndarray
        (#samples,) targets in {-1, +1}.
    log_initial : numpy.ndarray
        (#samples,) logarithms of ``D_1`` up to a constant (-inf for a row of zero weight).
    costs : numpy.ndarray
        (#samples,) every row's cost ``c_i`` (> 0).
    log_asymmetry : numpy.ndarray, optional
        (#samples,) AsymBoost's ``(y_i / (2T)) ln k``, added to the log weights after every round.
    metadata : dict
        Metadata of a new machine.
    name : str
        The algorithm's name for the log.
    """

    def __init__(self, rule: str, weak_trainer: Any, labels: np.ndarray, log_initial: np.ndarray, costs: np.ndarray,
                 log_asymmetry: np.ndarray | None, metadata: dict[str, Any], name: str) -> None:
        self.rule = rule
        self.weak_trainer = weak_trainer
        self.labels = labels
        self.log_initial = log_initial
        self.costs = costs
        self.log_costs = np.log(costs)
        self.log_asymmetry = log_asymmetry
        self.metadata = metadata
        self.name = name

    def new_machine(self, features: np.ndarray) -> BoostedMachine:
        """An empty univariate machine (it predicts the sign of its score)."""
        return BoostedMachine(number_of_outputs=1, number_of_features=features.shape[1], metadata=dict(self.metadata))

    def check_machine(self, machine: BoostedMachine) -> None:
        """The machine must be univariate."""
        if machine.number_of_outputs not in (None, 1):
            raise InvalidValueError(f"boosted_machine: has {machine.number_of_outputs} outputs, expected 1")

    def _updated(self, log_weights: np.ndarray, agreement: np.ndarray, step: float) -> np.ndarray:
        log_weights = log_weights + log_update(self.rule, self.log_costs, self.costs, agreement, step)
        return log_weights if self.log_asymmetry is None else log_weights + self.log_asymmetry

    def start(self, features: np.ndarray, machine: BoostedMachine) -> RoundState:
        """``D_1``, and for a continued machine its rounds replayed (in their order, so that continuing gives
        bit for bit one longer run's weights)."""
        log_weights = self.log_initial
        for weak_machine, weight in zip(machine.weak_machines, machine.weights[:, 0]):
            agreement = self.labels * weak_machine.forward(features)[:, 0]
            log_weights = self._updated(log_weights, agreement, float(weight))
        scores = (machine.decision_scores(features) if len(machine) or np.any(machine.baseline != 0)
                  else np.zeros((features.shape[0], 1)))
        return RoundState(features=features, scores=scores, log_weights=log_weights)

    def ended_perfect(self, machine: BoostedMachine, state: RoundState) -> bool:
        """Whether the last weak machine classifies every row of positive weight correctly."""
        agreement = self.labels * machine.weak_machines[-1].forward(state.features)[:, 0]
        return bool(np.all(agreement[np.isfinite(self.log_initial)] > 0))

    def begin_round(self, state: RoundState) -> None:
        """The distribution ``D_t`` and the exponential loss's gradient at it, ``-y D_t``."""
        distribution = np.exp(state.log_weights - scipy.special.logsumexp(state.log_weights))
        state.sample_weights = distribution
        state.gradient = (-self.labels * distribution)[:, np.newaxis]

    def propose(self, prepared: Any, state: RoundState) -> Proposal | None:
        """The weak trainer's machine for the round's gradient."""
        if uses_propose(self.weak_trainer):
            proposal = self.weak_trainer.propose(prepared, state)
        else:
            proposal = Proposal(self.weak_trainer.train(prepared, state.gradient))
        if proposal is not None and proposal.outputs is not None:
            state.extra["weak_scores"] = proposal.outputs
        return proposal

    def step(self, machine: WeakMachine, state: RoundState) -> tuple[float, bool] | None:
        """The rule's step; None (stop) when it is not positive, capped at :data:`STEP_CAP` for a machine
        without weighted error (which stops training after it)."""
        outputs = state.extra.pop("weak_scores", None)
        if outputs is None:
            outputs = machine.forward(state.features)
        outputs = outputs[:, 0]
        if not np.all(np.abs(outputs) == 1.0):
            raise InvalidTypeError(f"weak_trainer: {self.name} boosts +-1 weak machines; "
                                   f"{type(machine).__name__} output other values")
        agreement = self.labels * outputs
        distribution = state.sample_weights
        step = reweighting_step(distribution, agreement, *step_factors(self.rule, self.costs, agreement))
        sign = 1.0
        if step < 0 and self.rule in SIGN_SYMMETRIC:
            # (alpha, h) and (-alpha, -h) are the same round of these rules: the formula's negative step is the
            # negated machine's positive one
            sign, step = -1.0, -step
        if not step > 0:
            if state.rounds_before + state.round_index == 0:  # an empty machine is worth a warning
                warnings.warn(f"{self.name} round 1: the step of the best weak machine is {step:.6g}, not positive, "
                              f"at these costs; the machine is empty", ConvergenceWarning, stacklevel=2)
            logger.info("%s round %d: step %.6g is not positive; stopping", self.name, state.round_index + 1, step)
            return None
        perfect = bool(np.all(sign * agreement[distribution > 0] > 0))
        state.extra["agreement"] = agreement
        return sign * min(step, STEP_CAP), perfect

    def end_round(self, state: RoundState, machine: WeakMachine, weight: float) -> None:
        """The rule's weight update, and the scores plus the weighted machine."""
        agreement = state.extra.pop("agreement")
        state.log_weights = self._updated(state.log_weights, agreement, float(weight))
        state.scores = state.scores + float(weight) * (self.labels * agreement)[:, np.newaxis]

    def describe(self, state: RoundState) -> str:
        """The weighted training error of the machine so far, under ``D_1``."""
        distribution = np.exp(self.log_initial - scipy.special.logsumexp(self.log_initial))
        return f", weighted training error {float(np.sum(distribution[self.labels * state.scores[:, 0] <= 0])):.6g}"
