"""Lp-CSB's configuration of the loop: the average of stochastic hypotheses.

The model is ``H_T(k | x) = (1/T) sum_t h_t(k | x)``, every ``h_t(k | x)`` a distribution over the labels
(:class:`~bob_boost.weak.relational.RelationalTreeMachine`), so ``H_T`` is one too; before the first round
``H_0 = 1/K``. The :class:`~bob_boost.BoostedMachine` holds every hypothesis with weight 1: its scores are
``T H_T``, its largest score ``H_T``'s largest entry, and every staged prediction is the average's so far.
"""
from __future__ import annotations

import logging
from typing import Any

import numpy as np

from ..exceptions import InvalidValueError
from ..machine import BoostedMachine
from ..weak.base import WeakMachine
from .protocol import Proposal, RoundState

logger = logging.getLogger(__name__)


class LpCSBBoosting:
    """Lp-CSB (Lozano and Abe): descent on ``L_p(H) = sum_n sum_k H(k | x_n)^p C(l_n, k)``.

    Every round takes the loss's gradient ``g[n, k] = (1/2) C(l_n, k) H(k | x_n)^(p-1)`` (up to the factor
    ``2 p``), centred over each sample's labels, ``w[n, k] = g[n, k] - (1/K) sum_j g[n, j]``: the pair
    ``(n, k)`` is a good one (``state.labels[n, k]`` true) where ``w < 0``, and weighs ``|w|``
    (``state.sample_weights``, (#samples, K)). The weak trainer's hypothesis joins the average with weight 1.

    Parameters
    ----------
    weak_trainer : object
        The relational weak trainer (:class:`~bob_boost.weak_trainers.relational.RelationalTreeTrainer`).
    labels : numpy.ndarray
        (#samples,) class indices.
    cost_matrix : numpy.ndarray
        (K, K) costs ``C``.
    p : float
        The norm, >= 1.
    row_weights : numpy.ndarray, optional
        (#samples,) factors of each sample's loss terms (``sample_weight``, mean 1).
    metadata : dict
        Metadata of a new machine (the costs and ``p`` included).
    """

    name = "Lp-CSB"

    def __init__(self, weak_trainer: Any, labels: np.ndarray, cost_matrix: np.ndarray, p: float,
                 row_weights: np.ndarray | None, metadata: dict[str, Any]) -> None:
        self.weak_trainer = weak_trainer
        self.k = cost_matrix.shape[0]
        self.costs = cost_matrix[labels]
        if row_weights is not None:
            self.costs = self.costs * row_weights[:, np.newaxis]
        self.p = p
        self.metadata = metadata

    def new_machine(self, features: np.ndarray) -> BoostedMachine:
        """An empty machine of K outputs, predicting the largest."""
        return BoostedMachine(number_of_outputs=self.k, number_of_features=features.shape[1],
                              metadata=dict(self.metadata))

    def check_machine(self, machine: BoostedMachine) -> None:
        """The machine must be an Lp-CSB machine of these costs and ``p``."""
        for key in ("lp_csb_cost_matrix", "lp_csb_p"):
            if machine.metadata.get(key) != self.metadata[key]:
                raise InvalidValueError(f"boosted_machine: was not trained by Lp-CSB with these costs and p (its "
                                        f"metadata {key!r} differs)")

    def start(self, features: np.ndarray, machine: BoostedMachine) -> RoundState:
        """The machine's scores (the sums of its hypotheses; zeros for a new one)."""
        scores = machine.decision_scores(features) if len(machine) else np.zeros((features.shape[0], self.k))
        return RoundState(features=features, scores=scores)

    def _average(self, state: RoundState) -> np.ndarray:
        rounds = state.rounds_before + state.round_index
        return np.full_like(state.scores, 1.0 / self.k) if rounds == 0 else state.scores / rounds

    def begin_round(self, state: RoundState) -> None:
        """The pairs' classes and weights: the centred gradient's signs and sizes."""
        gradient = 0.5 * self.costs * self._average(state) ** (self.p - 1.0)
        centred = gradient - gradient.mean(axis=1, keepdims=True)
        state.labels = centred < 0
        state.sample_weights = np.abs(centred)

    def propose(self, prepared: Any, state: RoundState) -> Proposal | None:
        """The weak trainer's hypothesis; None when the gradient is flat (no pair has weight)."""
        return self.weak_trainer.propose(prepared, state)

    def step(self, machine: WeakMachine, state: RoundState) -> tuple[float, bool]:
        """Weight 1: the machine's scores are the sum of its hypotheses."""
        state.extra["hypothesis"] = machine.forward(state.features)
        return 1.0, False

    def end_round(self, state: RoundState, machine: WeakMachine, weight: float) -> None:
        """The scores plus the hypothesis."""
        state.scores = state.scores + state.extra.pop("hypothesis")

    def describe(self, state: RoundState) -> str:
        """The mean training loss ``L_p / N`` of the average."""
        average = state.scores / (state.rounds_before + state.round_index + 1)
        return f", training loss {np.sum(self.costs * average ** self.p) / state.scores.shape[0]:.6g}"
