"""arc-gv (Breiman, "Prediction games and arcing algorithms", Neural Computation 1999) as a configuration of
the one loop: AdaBoost's sample weights ``D_i ∝ w_i exp(-y_i F(x_i))`` and weak learner (the +-1 machine of
largest edge ``g = sum_i D_i y_i h(x_i)``), with the weight :func:`~bob_boost.boosting.steps.arc_gv_step`,
which subtracts from AdaBoost's the weight matching the ensemble's normalised minimum margin
``r = min_i y_i F(x_i) / sum_t alpha_t`` so far; it stops when that weight is not positive. The weights do
not minimise the exponential loss, so no descent guarantee applies.

The margin term is taken at ``max(r, 0)``: while some training row is misclassified by the whole ensemble
(after the first round, any row the first weak machine gets wrong has margin exactly -1, where
``ln((1 + r)/(1 - r))`` is minus infinity) the weight is AdaBoost's, and arc-gv's correction starts once the
ensemble separates the rows, the case Breiman's analysis of the minimum margin is about.
"""
from __future__ import annotations

import logging

import numpy as np
import scipy.special

from ..machine import BoostedMachine
from ..weak.base import WeakMachine
from .algorithms import GradientBoosting
from .protocol import RoundState
from .steps import arc_gv_step

logger = logging.getLogger(__name__)


class ArcGVBoosting(GradientBoosting):
    """arc-gv's configuration: :class:`GradientBoosting` of the exponential loss with arc-gv's step.

    Parameters are :class:`GradientBoosting`'s (the loss is the exponential, the targets +-1, no baseline).
    """

    name = "arc-gv"

    def start(self, features: np.ndarray, machine: BoostedMachine) -> RoundState:
        """The scores, and the sum of the machine's weights (the margins' normaliser)."""
        state = super().start(features, machine)
        state.extra["weight_sum"] = float(machine.weights.sum()) if len(machine) else 0.0
        return state

    def step(self, machine: WeakMachine, state: RoundState) -> tuple[np.ndarray, bool] | None:
        """arc-gv's weight from the machine's edge and the ensemble's minimum margin; None (stop) when it is
        not positive."""
        weak_scores = state.extra.pop("weak_scores", None)
        if weak_scores is None:
            weak_scores = machine.forward(state.features)
        targets, scores = self.targets[:, 0], state.scores[:, 0]
        log_weights = -targets * scores
        if self.sample_weight is not None:
            with np.errstate(divide="ignore"):
                log_weights = log_weights + np.log(self.sample_weight)
        distribution = np.exp(log_weights - scipy.special.logsumexp(log_weights))
        edge = float(np.sum(distribution * targets * weak_scores[:, 0]))
        total = state.extra["weight_sum"]
        weighted = distribution > 0
        margin = max(float(np.min(targets[weighted] * scores[weighted]) / total), 0.0) if total > 0 else 0.0
        perfect = bool(np.all(targets[weighted] * weak_scores[weighted, 0] > 0))
        alpha = arc_gv_step(1.0 if perfect else edge, margin) * self.learning_rate
        if not alpha > 0:
            logger.info("Round %d: arc-gv's weight %.6g (edge %.6g, minimum margin %.6g) is not positive; "
                        "stopping", state.round_index + 1, alpha, edge, margin)
            return None
        state.extra["weak_scores"] = weak_scores
        return np.array([alpha]), perfect

    def descend(self, machine: WeakMachine, weight: np.ndarray, state: RoundState) -> np.ndarray:
        """arc-gv's weight as it is: it does not minimise the exponential loss, which it may raise."""
        return weight

    def end_round(self, state: RoundState, machine: WeakMachine, weight: np.ndarray) -> None:
        """The scores, and the weights' sum."""
        super().end_round(state, machine, weight)
        state.extra["weight_sum"] += float(np.sum(weight))
