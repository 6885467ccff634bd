"""The squared-error loss for regression."""
from __future__ import annotations

import numpy as np

from .base import LossFunction, weighted


class SquaredLoss(LossFunction):
    """``L(t, s) = (s - t)^2 / 2``, for real-valued (multi-output) regression."""

    name = "squared"
    row_separable = True

    def decision_rule(self, number_of_outputs: int) -> str:
        """``"identity"``: The scores are the predicted values."""
        return "identity"

    def loss(self, targets: np.ndarray, scores: np.ndarray,
             sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Return ``(scores - targets)^2 / 2``."""
        return weighted(0.5 * (scores - targets) ** 2, sample_weight)

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray,
                      sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Return ``scores - targets``."""
        return weighted(scores - targets, sample_weight)

    def loss_hessian(self, targets: np.ndarray, scores: np.ndarray,
                     sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Return ones: the loss is quadratic."""
        return weighted(np.ones(np.broadcast_shapes(np.shape(targets), np.shape(scores))), sample_weight)
