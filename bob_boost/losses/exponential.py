"""The exponential loss of AdaBoost."""
from __future__ import annotations

import numpy as np

from .base import BinaryClassificationLoss, weighted

#: exp() saturates here: exp(600) ~ 4e260 leaves room to sum 1e40 samples
#: without overflow, while margins beyond -600 never occur in useful training.
EXPONENT_LIMIT = 600.0


class ExponentialLoss(BinaryClassificationLoss):
    """``L(t, s) = exp(-t s)`` for targets ``t`` in {-1, +1}.

    With discrete weak machines and L-BFGS weights this is discrete AdaBoost.
    The exponent is capped at :data:`EXPONENT_LIMIT` so that scores of any
    size give finite values.
    """

    name = "exponential"
    convex = True
    row_separable = True

    #: The expected loss is minimised at half the log-odds (Friedman, Hastie & Tibshirani, 2000).
    probability_scale = 2.0

    def loss(self, targets: np.ndarray, scores: np.ndarray,
             sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Return ``exp(-targets * scores)``."""
        return weighted(np.exp(np.minimum(-targets * scores, EXPONENT_LIMIT)), sample_weight)

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray,
                      sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Return ``-targets * exp(-targets * scores)``."""
        return weighted(-targets * self.loss(targets, scores), sample_weight)

    def loss_hessian(self, targets: np.ndarray, scores: np.ndarray,
                     sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Return ``targets**2 * exp(-targets * scores)``."""
        return weighted(targets * targets * self.loss(targets, scores), sample_weight)

    def loss_and_gradient(self, targets: np.ndarray, scores: np.ndarray,
                          sample_weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Loss and gradient from a single exponential."""
        values = self.loss(targets, scores)
        return weighted(values, sample_weight), weighted(-targets * values, sample_weight)
