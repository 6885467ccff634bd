"""Real AdaBoost, SAMME.R and PIBoost as a configuration of the one loop: the weak learner's outputs (functions
of its leaves' class probabilities; PIBoost's weighted margin vectors) are added with weight 1, and the sample
weights follow from the scores.

With class-``k`` rows coded ``y_k = 1`` and ``y_j = -1/(K-1)`` elsewhere, SAMME.R's weight update
``w <- w exp(-((K-1)/K) y^T log p(x))`` (Zhu, Zou, Rosset and Hastie 2009, Algorithm 4, step 2d) multiplies,
over the rounds, into ``w = w_1 exp(-(1/K) y^T F(x))`` for the scores ``F = sum_m h_m`` (since ``sum_k y_k = 0``,
``y^T h = (K - 1) y^T log p``): the multi-class exponential loss. Real AdaBoost's ``w <- w exp(-y f(x))``
(Friedman, Hastie and Tibshirani 2000, Algorithm 2) multiplies into ``w = w_1 exp(-y F(x))``. The loop
computes the weights from the scores so, which continues a machine exactly where its run stopped.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.special

from ..costs import margin_vectors, zero_one_cost_matrix
from ..exceptions import InvalidValueError
from ..machine import BoostedMachine
from ..weak.base import WeakMachine
from .protocol import Proposal, RoundState


class ProbabilityBoosting:
    """The loop configuration of Real AdaBoost (``real``: one output, two classes) and SAMME.R (K outputs).

    Parameters
    ----------
    weak_trainer : object
        ``propose(prepared, state)`` reading ``state.labels``, ``state.sample_weights`` and ``state.loss_matrix``
        (its size is K), returning the weak machine with weight 1
        (:class:`~bob_boost.weak_trainers.probability_trees.ProbabilityTreeTrainer`).
    labels : numpy.ndarray
        (#samples,) class indices ``0 .. K-1``.
    number_of_classes : int
        K.
    real : bool
        Real AdaBoost (one output, the positive class 1) rather than SAMME.R.
    learning_rate : float
        Factor of every weak machine's weight 1, in the model and so in the sample weights.
    name : str
        The algorithm's name for the log.
    metadata : dict
        Metadata of a new machine.
    sample_weight : numpy.ndarray, optional
        (#samples,) validated initial weights ``w_1`` (mean 1); uniform by default.
    """

    def __init__(self, weak_trainer: Any, labels: np.ndarray, number_of_classes: int, real: bool,
                 learning_rate: float, name: str, metadata: dict[str, Any],
                 sample_weight: np.ndarray | None = None) -> None:
        self.weak_trainer = weak_trainer
        self.labels = labels
        self.k = number_of_classes
        self.real = real
        self.learning_rate = learning_rate
        self.name = name
        self.metadata = metadata
        with np.errstate(divide="ignore"):  # a zero weight stays zero: log -inf
            self.log_initial = np.zeros(labels.size) if sample_weight is None else np.log(sample_weight)
        # y^T F / K of every row is (coding[labels] * F).sum(axis=1); Real AdaBoost's y F, with y = +-1
        self.coding = (np.array([[-1.0], [1.0]]) if real else margin_vectors(number_of_classes) / number_of_classes)

    def new_machine(self, features: np.ndarray) -> BoostedMachine:
        """An empty machine: one output whose sign is the class (Real AdaBoost), or K whose argmax is."""
        outputs = 1 if self.real else self.k
        return BoostedMachine(number_of_outputs=outputs, number_of_features=features.shape[1],
                              decision_rule="sign" if self.real else "argmax", metadata=dict(self.metadata))

    def check_machine(self, machine: BoostedMachine) -> None:
        """The machine must have this run's outputs and decision rule."""
        outputs = 1 if self.real else self.k
        if machine.number_of_outputs not in (None, outputs) or (len(machine) and machine.decision_rule
                                                                  != ("sign" if self.real else "argmax")):
            raise InvalidValueError(f"boosted_machine: has {machine.number_of_outputs} outputs and decision rule "
                                    f"{machine.decision_rule!r}; {self.name} continues a machine of {outputs}")

    def start(self, features: np.ndarray, machine: BoostedMachine) -> RoundState:
        """The machine's training scores (0 for a new one)."""
        outputs = 1 if self.real else self.k
        scores = (machine.decision_scores(features) if len(machine) or np.any(machine.baseline != 0)
                  else np.zeros((features.shape[0], outputs)))
        return RoundState(features=features, scores=scores, labels=self.labels,
                          loss_matrix=zero_one_cost_matrix(self.k))

    def ended_perfect(self, machine: BoostedMachine, state: RoundState) -> bool:
        """Whether the last weak machine alone classifies every training row of positive weight correctly."""
        outputs = machine.weak_machines[-1].forward(state.features)
        weighted = np.isfinite(self.log_initial)
        return bool(np.all(self._classes(outputs)[weighted] == self.labels[weighted]))

    def begin_round(self, state: RoundState) -> None:
        """Normalised sample weights ``w_1 exp(-(1/K) y^T F)`` (Real AdaBoost: ``w_1 exp(-y F)``)."""
        log_weights = self.log_initial - (self.coding[self.labels] * state.scores).sum(axis=1)
        state.sample_weights = np.exp(log_weights - scipy.special.logsumexp(log_weights))

    def propose(self, prepared: Any, state: RoundState) -> Proposal | None:
        """The weak learner's machine, weight ``learning_rate``; perfect when it makes no weighted training
        error (the loop then stops, as scikit-learn's SAMME.R does)."""
        proposal = self.weak_trainer.propose(prepared, state)
        if proposal is None:  # no weak machine contributes
            return None
        outputs = proposal.machine.forward(state.features)
        perfect = not np.any((self._classes(outputs) != self.labels) & (state.sample_weights > 0))
        state.extra["outputs"] = outputs
        return Proposal(proposal.machine, self.learning_rate, perfect, outputs)

    def _classes(self, outputs: np.ndarray) -> np.ndarray:
        """The class each row of a weak machine's ``outputs`` names: its sign's (Real AdaBoost) or argmax."""
        return (outputs[:, 0] > 0).astype(np.int64) if self.real else np.argmax(outputs, axis=1)

    def step(self, machine: WeakMachine, state: RoundState) -> None:
        """Never needed: every weak machine has weight ``learning_rate``."""
        raise NotImplementedError("the weak machines of Real AdaBoost and SAMME.R have weight 1")

    def end_round(self, state: RoundState, machine: WeakMachine, weight) -> None:
        """Scores plus the weighted outputs."""
        state.scores = state.scores + np.asarray(weight) * state.extra.pop("outputs")

    def describe(self, state: RoundState) -> str:
        """The exponential loss of the scores."""
        loss = np.exp(self.log_initial - (self.coding[self.labels] * state.scores).sum(axis=1)).mean()
        return f", exponential loss {loss:.6g}"
