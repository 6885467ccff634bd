"""The published algorithms as configurations of the one loop (:mod:`bob_boost.boosting.loop`).

:class:`GradientBoosting`
    bob.learn.boosting's generic trainer: the weak trainer follows the loss gradient, L-BFGS fits the
    weights (:func:`~bob_boost.boosting.steps.fit_weights`). With the exponential loss and stumps this is
    discrete AdaBoost.

The algorithms with closed-form steps, BAdaCost (with SAMME and AdaBoost.M1) and Cost-Sensitive AdaBoost
(with AdaBoostDB), are :mod:`bob_boost.boosting.closed_form`'s (importable from here too).
"""
from __future__ import annotations

import logging
import warnings
from typing import Any

import numpy as np

from ..exceptions import ConvergenceWarning, InvalidValueError
from ..losses.base import LossFunction, joined_derivatives, unit_weights, weighted
from ..machine import BoostedMachine
from ..sparse import by_row_blocks
from ..weak.base import WeakMachine
from ..weak.tree import TreeMachine
from .closed_form import CostSensitiveStumpBoosting, MulticlassCostBoosting  # noqa: F401 (re-exported)
from .protocol import Proposal, RoundState, uses_propose
from .sampling import CLASS_METHODS, Sampling, check_strata, distinct_rows, in_memory_factors, strata_of
from .rows import derivatives_and_total, loss_derivatives, loss_total, step_moments, updated_scores
from .steps import MAX_HALVINGS  # noqa: F401 (re-exported: first defined here)
from .steps import compiled_loss, descending_weight, fit_line_step, newton_fit_step, proves_descent

logger = logging.getLogger(__name__)


#: Rounds between two tries of a curvature bound once it has failed to show descent
#: (:meth:`GradientBoosting._bounded_descent`).
BOUND_RETRY = 8

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
        (#outputs,) constant a new machine starts from, which the machine adds to its scores. For a
        ``shift_invariant`` loss the rounds boost ``targets`` (already the residuals ``targets - baseline``)
        from 0; for the others they start from the scores ``baseline``.
    step_rule : {"auto", "lbfgs", "newton"}
        ``"lbfgs"``: :func:`~bob_boost.boosting.steps.fit_weights`; ``"newton"``:
        :func:`~bob_boost.boosting.steps.newton_fit_weights` (built-in separable losses only);
        ``"auto"``: Newton when the loss has a compiled form and the weak trainer's binning is lossy
        (some feature cut at quantiles), else L-BFGS, so models of exactly binned data stay bob's.
    learning_rate : float
        Shrinkage: every weight (fitted, or proposed by the weak trainer) is multiplied by it.
    sampling : Sampling, optional
        The rows (their factors on the weak trainer's gradient and hessian) and the tree columns of every
        round (:mod:`bob_boost.boosting.sampling`); the step rule still fits on every row.
    """

    name = "Boosting"

    def __init__(self, loss_function: LossFunction, weak_trainer: Any, targets: np.ndarray,
                 sample_weight: np.ndarray | None = None, baseline: np.ndarray | None = None,
                 step_rule: str = "auto", learning_rate: float = 1.0, sampling: Sampling | None = None) -> None:
        self.loss_function = loss_function
        self.learning_rate = learning_rate
        self.weak_trainer = weak_trainer
        self.targets = targets
        self.sample_weight = sample_weight
        self.baseline = baseline
        self.step_rule = step_rule
        self.sampling = sampling
        self.strata = (strata_of(targets, check_strata(distinct_rows(targets)))
                       if sampling is not None and sampling.samples_rows and sampling.method in CLASS_METHODS else None)
        # the last draw's factors and rows, reused for subsample_freq rounds
        self._drawn: tuple[int, np.ndarray, np.ndarray] | None = None
        # the last round's derivative arrays, which the weak trainer has read (filled again, not reallocated)
        self._spent: tuple[np.ndarray, np.ndarray] | None = None
        # whether the last curvature bound tried did not show descent (see _bounded_descent)
        self._bound_missed = False
        # weights of 1 (an estimator's default) leave the derivatives as they are: multiplying costs a pass
        self._unit_weights = isinstance(sample_weight, np.ndarray) and unit_weights(sample_weight)

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
        if self.baseline is not None and self.loss_function.shift_invariant:
            # residuals from 0; callbacks see the baseline added back
            # a continued machine's rounds summed from 0, as this loop accumulated them: bit for bit the
            # scores a single longer run would have reached
            scores = (machine.decision_scores(features, include_baseline=False) if len(machine)
                      else np.zeros(self.targets.shape))
            return RoundState(features=features, scores=scores, score_offset=self.baseline)
        # an empty machine scores its baseline: no need to validate the features again
        if len(machine):
            scores = machine.decision_scores(features)
        else:
            scores = np.zeros(self.targets.shape) + machine.baseline
        return RoundState(features=features, scores=scores)

    def begin_round(self, state: RoundState) -> None:
        """The loss gradient at the current scores."""
        cached = state.extra.pop("derivatives", None)  # the descent check's, at these scores
        if cached is not None:
            gradient, hessian = cached
        else:
            gradient, hessian = loss_derivatives(self.loss_function, self.targets, state.scores,
                                                 self._with_hessian(), getattr(state.prepared, "n_threads", 1),
                                                 self._spent, self._joint())
        # the weak trainer reads them in this round only: the next round's derivatives may fill them
        self._spent = (gradient, hessian) if hessian is not None else None
        weights = self._round_weights(state, gradient)
        state.extra["round_weights"] = weights
        # times ones, a C-ordered array (or joint halves, which a weak trainer reads as one) would be copied bit
        # for bit, in the same order
        unit = self._unit_weights and weights is self.sample_weight
        if unit and hessian is not None and joined_derivatives(gradient, hessian) is not None:
            state.gradient, state.hessian = gradient, hessian
            return
        if hessian is not None:
            state.hessian = hessian if unit and hessian.flags.c_contiguous else weighted(hessian, weights)
        state.gradient = gradient if unit and gradient.flags.c_contiguous else weighted(gradient, weights)

    def _round_weights(self, state: RoundState, gradient: np.ndarray) -> np.ndarray | None:
        """The sample weights of the round's weak trainer: times the sampling's factors (and its columns into
        ``state.feature_subset``)."""
        sampling = self.sampling
        if sampling is None:
            return self.sample_weight
        place = state.rounds_before + state.round_index
        state.feature_subset = sampling.columns(place, state.features.shape[1])
        state.node_columns = sampling.node_columns(place)
        if not sampling.samples_rows:
            return self.sample_weight
        draw = sampling.draw(place)
        if self._drawn is None or self._drawn[0] != draw or sampling.method == "goss":
            factors = in_memory_factors(sampling, place, gradient.shape[0], self.strata, gradient, self.sample_weight)
            self._drawn = (draw, factors, np.flatnonzero(factors))
        factors, state.rows = self._drawn[1:]
        return factors if self.sample_weight is None else self.sample_weight * factors

    def _with_hessian(self) -> bool:
        return bool(getattr(self.weak_trainer, "uses_hessian", False) and self.loss_function.has_hessian)

    def _joint(self) -> bool:
        reads = getattr(self.weak_trainer, "joint_derivatives", None)
        return reads is not None and bool(reads(self.targets.shape[1]))

    def propose(self, prepared: Any, state: RoundState) -> Proposal:
        """The weak trainer's machine for the gradient (with its training outputs, when it has them)."""
        if not uses_propose(self.weak_trainer):
            return Proposal(self.weak_trainer.train(prepared, state.gradient))
        proposal = self.weak_trainer.propose(prepared, state)
        if proposal is not None and self.loss_function.renews_leaves and isinstance(proposal.machine, TreeMachine):
            weights = state.extra.get("round_weights", self.sample_weight)
            # unit weights are no weights: leaf quantiles are then selected rather than sorted for (the same values)
            unit = self._unit_weights and weights is self.sample_weight
            proposal = renewed_leaves(proposal, state.features, self.targets - state.scores,
                                      None if unit else weights, self.loss_function)
            # each leaf's value minimises the training loss over its rows (unless the round samples them), so the
            # whole step does not raise it, nor, the loss being convex, does any shrunk step
            state.extra["certified"] = (self.loss_function.convex and weights is self.sample_weight
                                        and 0.0 < self.learning_rate <= 1.0)
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
            weak_scores = by_row_blocks(machine.forward, state.features)
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
        certified = state.extra.pop("certified", False)
        if certified or not self.loss_function.has_loss or self._bounded_descent(weight, state):
            # the loss reached is not kept: a later check sums it afresh, as a continued run would (a loss
            # known by its derivatives only goes without the guarantee)
            state.extra["loss"] = None
            return weight
        weak_scores = state.extra.get("weak_scores")
        if weak_scores is None:
            weak_scores = state.extra["weak_scores"] = by_row_blocks(machine.forward, state.features)
        n_threads = getattr(state.prepared, "n_threads", 1)
        before = state.extra.get("loss")
        if before is None:
            before = loss_total(self.loss_function, self.targets, state.scores, self.sample_weight, n_threads)

        def loss_at(weight: np.ndarray, halvings: int) -> float:
            scores = updated_scores(state.scores, weight, weak_scores, n_threads)
            derivatives = None
            if halvings == 0:
                *derivatives, after = derivatives_and_total(self.loss_function, self.targets, scores,
                                                            self._with_hessian(), self.sample_weight, n_threads,
                                                            self._spent, self._joint())
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

    def _bounded_descent(self, weight: np.ndarray, state: RoundState) -> bool:
        """Whether the loss's curvature bound shows that ``weight`` times the round's training outputs lowers the
        training loss: first-order change plus ``curvature / 2`` times the weighted squared step below zero
        (:func:`~bob_boost.boosting.rows.step_moments`, from the round's own derivatives).

        After a round the bound did not show to descend it is tried again every :data:`BOUND_RETRY` rounds only:
        its two sums over the rows would then mostly come on top of the loss's evaluation (the softmax's bound
        fails most rounds). Either way the round's weight is the same.
        """
        curvature, weak_scores = self.loss_function.curvature, state.extra.get("weak_scores")
        if curvature is None or weak_scores is None or self._spent is None:
            return False
        if self._bound_missed and state.round_index % BOUND_RETRY:
            return False
        first, second = step_moments(self._spent[0], weak_scores, None if self._unit_weights else self.sample_weight)
        alpha = np.broadcast_to(np.asarray(weight, dtype=np.float64), first.shape)
        change, size = alpha @ first, 0.5 * curvature * (alpha * alpha) @ second
        # by a margin well above the rounding of the two sums
        self._bound_missed = not bool(change + size < -1e-9 * (abs(change) + size))
        return not self._bound_missed

    def reached_loss(self, state: RoundState) -> tuple | None:
        """``(loss_function, targets, sample_weight, total)``: the training loss the descent check summed at the
        round's scores (:func:`~bob_boost.boosting.rows.loss_total`), for callbacks that would sum it again; None
        when it did not (a certified step), or when the scores are residuals of a baseline callbacks add back."""
        total = state.extra.get("loss")
        if total is None or state.score_offset is not None:
            return None
        return self.loss_function, self.targets, self.sample_weight, total

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
                weak_scores = by_row_blocks(machine.forward, state.features)
            scores = updated_scores(state.scores, weight, weak_scores, getattr(state.prepared, "n_threads", 1))
        state.scores = scores

    def describe(self, state: RoundState) -> str:
        """The training loss (when the loss has values)."""
        if not self.loss_function.has_loss:
            return ""
        values = weighted(self.loss_function.loss(self.targets, state.scores), self.sample_weight)
        return f", training loss {np.sum(values):.6g}"


def renewed_leaves(proposal: Proposal, features: np.ndarray, residuals: np.ndarray,
                   sample_weight: np.ndarray | None, loss: LossFunction) -> Proposal:
    """``proposal``'s trees with every leaf's value re-estimated by ``loss.leaf_values`` from the residuals of
    the training rows it holds (the tree of output ``k`` from column ``k``; a tree shared by the outputs from
    each column), and their training outputs. The rows' leaves are the proposal's, when the weak trainer gave them."""
    tree = proposal.machine
    leaves = by_row_blocks(tree.leaves, features) if proposal.leaves is None else proposal.leaves
    values = np.array(tree.values)
    shared = tree.roots.size == 1
    for t in range(leaves.shape[1]):
        for k in (range(values.shape[1]) if shared else (t,)):
            renewed = loss.leaf_values(leaves[:, t], residuals[:, k], sample_weight, values.shape[0])
            reached = ~np.isnan(renewed)
            values[reached, k] = renewed[reached]
    machine = tree.with_values(values)
    outputs = values[leaves[:, 0]].copy()
    for t in range(1, leaves.shape[1]):
        outputs += values[leaves[:, t]]
    return Proposal(machine, proposal.weight, proposal.perfect, outputs)
