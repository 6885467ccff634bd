"""The squared-error loss for regression."""
from __future__ import annotations

import numpy as np

from .base import LossFunction


class SquaredLoss(LossFunction):
    """``L(t, s) = (s - t)^2 / 2``, for real-valued (multi-output) regression."""

    name = "squared"

    def decision_rule(self, number_of_outputs: int) -> str:
        """``"identity"``: The scores are the predicted values."""
        return "identity"

    def loss(self, targets: np.ndarray, scores: np.ndarray) -> np.ndarray:
        """Return ``(scores - targets)^2 / 2``."""
        return 0.5 * (scores - targets) ** 2

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray) -> np.ndarray:
        """Return ``scores - targets``."""
        return scores - targets
