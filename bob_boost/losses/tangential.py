"""The tangent loss of TangentBoost (Masnadi-Shirazi, Mahadevan & Vasconcelos)."""
from __future__ import annotations

import numpy as np

from .base import BinaryClassificationLoss


class TangentialLoss(BinaryClassificationLoss):
    """``L(t, s) = (2 arctan(t s) - 1)^2`` for targets ``t`` in {-1, +1}.

    Bounded for large negative margins, hence robust to label noise; not convex.
    """

    name = "tangential"

    def loss(self, targets: np.ndarray, scores: np.ndarray) -> np.ndarray:
        """Return ``(2 arctan(targets * scores) - 1)^2``."""
        return (2.0 * np.arctan(targets * scores) - 1.0) ** 2

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray) -> np.ndarray:
        """Return ``4 t (2 arctan(t s) - 1) / (1 + (t s)^2)``.

        bob.learn.boosting omits the factor ``t``, which is only the
        derivative for positive targets.
        """
        margin = targets * scores
        return 4.0 * targets * (2.0 * np.arctan(margin) - 1.0) / (1.0 + margin * margin)
