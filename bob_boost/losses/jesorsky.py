"""The Jesorsky loss for facial-landmark regression."""
from __future__ import annotations

import numpy as np

from .._validation import as_score_matrix
from ..exceptions import InvalidValueError
from .base import LossFunction, weighted


class JesorskyLoss(LossFunction):
    """Sum of landmark distances relative to the inter-eye distance.

    Targets and scores are (#samples, 2 P) arrays of P points stored as
    (y, x) pairs; the first two points are the eyes. The per-sample loss is
    ``0.5 / d_eyes * sum_p ||s_p - t_p||`` where ``d_eyes`` is the distance
    between the first two target points: half of bob.learn.boosting 2.0's
    ``1 / d_eyes * sum_p ||s_p - t_p||`` (its C++ ``JesorskyLoss``). A
    constant factor scales the loss and its gradient alike, so the chosen
    weak machines and their fitted weights are the same
    (``bob_boost.compat.bob.JesorskyLoss`` has bob's scale). The loss couples
    all outputs, so :meth:`loss` returns shape (#samples, 1).
    """

    name = "jesorsky"

    def decision_rule(self, number_of_outputs: int) -> str:
        """``"identity"``: The scores are the predicted landmark coordinates."""
        return "identity"

    def check_targets(self, targets) -> np.ndarray:
        """Require an even number (>= 4) of outputs and distinct eye positions."""
        array = as_score_matrix(targets, "targets")
        if array.shape[1] < 4 or array.shape[1] % 2:
            raise InvalidValueError(
                f"targets: JesorskyLoss needs an even number (>= 4) of outputs (y, x pairs), got {array.shape[1]}")
        if np.any(self._scale(array) == np.inf):
            raise InvalidValueError("targets: the two eye positions (first two points) coincide for some sample")
        return array

    @staticmethod
    def _scale(targets: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return 0.5 / np.hypot(targets[:, 0] - targets[:, 2], targets[:, 1] - targets[:, 3])

    @staticmethod
    def _offsets(targets: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        diff = (scores - targets).reshape(scores.shape[0], -1, 2)
        return diff, np.hypot(diff[..., 0], diff[..., 1])

    def loss(self, targets: np.ndarray, scores: np.ndarray,
             sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Return the (#samples, 1) scaled sum of point distances."""
        _, distances = self._offsets(targets, scores)
        return weighted((self._scale(targets) * distances.sum(axis=1))[:, np.newaxis], sample_weight)

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray,
                      sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Return the (#samples, #outputs) gradient; zero for points hit exactly."""
        diff, distances = self._offsets(targets, scores)
        with np.errstate(invalid="ignore", divide="ignore"):
            unit = np.where(distances[..., np.newaxis] > 0, diff / distances[..., np.newaxis], 0.0)
        return weighted(self._scale(targets)[:, np.newaxis] * unit.reshape(scores.shape), sample_weight)
