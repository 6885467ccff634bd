"""The class-dependent exponential loss of cost-sensitive AdaBoost."""
from __future__ import annotations

import numbers

import numpy as np

from .._validation import check_scalar
from ..registry import register_loss
from .base import BinaryClassificationLoss, weighted
from .exponential import EXPONENT_LIMIT


def check_cost(value, name: str) -> float:
    """Return ``value`` as a float, raising unless it is a finite number > 0.

    Parameters
    ----------
    value : float
        A misclassification cost.
    name : str
        Argument name used in the error message.
    """
    return float(check_scalar(value, name, numbers.Real, min_val=0, include_boundaries="neither"))


@register_loss
class DoubleBaseLoss(BinaryClassificationLoss):
    """``L(t, s) = exp(-C_t * t * s)`` with a cost per class.

    ``C_t`` is ``cost_positive`` for targets ``t = +1`` and ``cost_negative``
    for ``t = -1``; equivalently ``beta_t ** (-t s)`` with the two bases
    ``beta_t = exp(C_t)`` of AdaBoostDB. With equal costs ``C`` this is the
    exponential loss of the score ``C * s``. The exponent is capped at
    :data:`~bob_boost.losses.exponential.EXPONENT_LIMIT` so scores of any size
    give finite values.

    Parameters
    ----------
    cost_positive, cost_negative : float
        Finite costs > 0 of misclassifying a positive / a negative sample.
    """

    name = "double_base"
    convex = True

    def __init__(self, cost_positive: float = 1.0, cost_negative: float = 1.0) -> None:
        self.cost_positive = check_cost(cost_positive, "cost_positive")
        self.cost_negative = check_cost(cost_negative, "cost_negative")

    def _costs(self, targets: np.ndarray) -> np.ndarray:
        """``C_t`` for every entry of ``targets``."""
        return np.where(targets > 0, self.cost_positive, self.cost_negative)

    def loss(self, targets: np.ndarray, scores: np.ndarray,
             sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Return ``exp(-C_t * targets * scores)``."""
        return weighted(np.exp(np.minimum(-self._costs(targets) * targets * scores, EXPONENT_LIMIT)), sample_weight)

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray,
                      sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Return ``-C_t * targets * exp(-C_t * targets * scores)``."""
        return self.loss_and_gradient(targets, scores, sample_weight)[1]

    def loss_and_gradient(self, targets: np.ndarray, scores: np.ndarray,
                          sample_weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Loss and gradient from a single exponential."""
        signed_costs = self._costs(targets) * targets
        values = np.exp(np.minimum(-signed_costs * scores, EXPONENT_LIMIT))
        return weighted(values, sample_weight), weighted(-signed_costs * values, sample_weight)

    def loss_hessian(self, targets: np.ndarray, scores: np.ndarray,
                     sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Return ``(C t)**2 exp(-C t s)`` with each sample's cost ``C``."""
        signed_costs = self._costs(targets) * targets
        return weighted(signed_costs * signed_costs * self.loss(targets, scores), sample_weight)

    def __repr__(self) -> str:
        return f"DoubleBaseLoss(cost_positive={self.cost_positive!r}, cost_negative={self.cost_negative!r})"
