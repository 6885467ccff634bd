"""The binary focal loss (Lin, Goyal, Girshick, He and Dollar, "Focal loss for dense object detection",
ICCV 2017): the logit loss scaled down for samples already classified well, so that the many easy
negatives of detection do not dominate the gradient."""
from __future__ import annotations

import numbers

import numpy as np
from scipy.special import expit, log_expit

from .._validation import check_scalar
from .base import BinaryClassificationLoss, weighted


class FocalLoss(BinaryClassificationLoss):
    """``L(t, s) = -a_t (1 - p)^gamma log p`` with ``p = sigmoid(t s)`` for targets ``t`` in {-1, +1}.

    ``gamma = 0`` without ``alpha`` is the logit loss. ``a_t`` is ``alpha`` for the positive class and
    ``1 - alpha`` for the negative one (1 for both without ``alpha``).

    The loss is not convex in the score for ``gamma > 0``: its second derivative turns negative for samples
    misclassified with a large margin. :meth:`loss_hessian` is the second derivative where it is positive
    and 0 elsewhere, so that Newton leaves keep to descent directions (a leaf whose rows all have 0 weighs
    nothing: ``min_hessian_leaf`` keeps such leaves from being split off).

    Parameters
    ----------
    gamma : float
        The focusing exponent, at least 0 (2 in the paper).
    alpha : float, optional
        The positive class's weight, in (0, 1) (0.25 in the paper, with ``gamma = 2``); None: 1 for both.

    Raises
    ------
    ValueError
        For a negative ``gamma`` or ``alpha`` outside (0, 1).
    """

    name = "focal"
    row_separable = True

    def __init__(self, gamma: float = 2.0, alpha: float | None = None) -> None:
        self.gamma = float(check_scalar(gamma, "gamma", numbers.Real, min_val=0))
        self.alpha = None if alpha is None else float(check_scalar(alpha, "alpha", numbers.Real, min_val=0,
                                                                   max_val=1, include_boundaries="neither"))

    def _class_weights(self, targets: np.ndarray):
        if self.alpha is None:
            return 1.0
        return np.where(targets > 0, self.alpha, 1.0 - self.alpha)

    def loss(self, targets: np.ndarray, scores: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """``-a_t (1 - p)^gamma log p`` (``log p`` and ``1 - p`` computed without cancellation)."""
        margin = targets * scores
        values = -self._class_weights(targets) * np.power(expit(-margin), self.gamma) * log_expit(margin)
        return weighted(values, sample_weight)

    def _margin_derivatives(self, margin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The first and second derivatives of ``-(1 - p)^gamma log p`` in the margin."""
        p, q, log_p, g = expit(margin), expit(-margin), log_expit(margin), self.gamma
        q_gamma = np.power(q, g)
        first = q_gamma * (g * p * log_p - q)
        second = p * q_gamma * (q * (g * log_p + g + 1.0) - g * (g * p * log_p - q))
        return first, second

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray,
                      sample_weight: np.ndarray | None = None) -> np.ndarray:
        """``a_t t dL/dm`` for the margin ``m = t s``."""
        first, _ = self._margin_derivatives(targets * scores)
        return weighted(self._class_weights(targets) * targets * first, sample_weight)

    def loss_hessian(self, targets: np.ndarray, scores: np.ndarray,
                     sample_weight: np.ndarray | None = None) -> np.ndarray:
        """``a_t t^2 d^2L/dm^2`` where positive, else 0 (see the class)."""
        _, second = self._margin_derivatives(targets * scores)
        values = self._class_weights(targets) * targets * targets * np.maximum(second, 0.0)
        return weighted(values, sample_weight)

    def __repr__(self) -> str:
        return f"FocalLoss(gamma={self.gamma!r}, alpha={self.alpha!r})"
