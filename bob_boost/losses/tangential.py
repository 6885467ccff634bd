"""The tangent loss of TangentBoost (Masnadi-Shirazi, Mahadevan & Vasconcelos)."""
from __future__ import annotations

import numpy as np

from .base import BinaryClassificationLoss, weighted


class TangentialLoss(BinaryClassificationLoss):
    """``L(t, s) = (2 arctan(t s) - 1)^2`` for targets ``t`` in {-1, +1}.

    Bounded for large negative margins, hence robust to label noise; not convex.
    """

    name = "tangential"

    def loss(self, targets: np.ndarray, scores: np.ndarray,
             sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Return ``(2 arctan(targets * scores) - 1)^2``."""
        return weighted((2.0 * np.arctan(targets * scores) - 1.0) ** 2, sample_weight)

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray,
                      sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Return ``4 t (2 arctan(t s) - 1) / (1 + (t s)^2)``.

        bob.learn.boosting omits the factor ``t``, which is only the
        derivative for positive targets.
        """
        margin = targets * scores
        return weighted(4.0 * targets * (2.0 * np.arctan(margin) - 1.0) / (1.0 + margin * margin), sample_weight)

    def constant_of_share(self, share: float) -> float:
        """``tan(share - 1/2)``: with ``a = arctan(s)`` the loss of a constant is
        ``share (2a - 1)^2 + (1 - share)(2a + 1)^2``, a parabola in ``a`` least at ``a = share - 1/2``."""
        return float(np.tan(share - 0.5))
