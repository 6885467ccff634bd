"""The squared-error loss for regression."""
from __future__ import annotations

import numpy as np

from .._validation import as_score_matrix
from ..exceptions import InvalidValueError
from .base import LossFunction, weighted

#: The largest target magnitude the squared loss takes: the squares of larger ones, summed over many
#: samples, overflow float64 (its range ends near 1.8e308).
TARGET_LIMIT = 1e100


def check_target_range(values: np.ndarray, name: str) -> None:
    """Raise unless every value of ``values`` is within :data:`TARGET_LIMIT` in magnitude."""
    largest = float(np.max(np.abs(values))) if values.size else 0.0
    if largest > TARGET_LIMIT:
        raise InvalidValueError(f"{name}: values up to {largest:.3g} in magnitude overflow the squared loss (their "
                                f"squares leave float64's range); rescale them to at most {TARGET_LIMIT:g}")


class ResidualLoss(LossFunction):
    """A convex, elementwise loss of ``scores - targets`` for real targets, predicting the scores themselves
    (squared, Huber, absolute error, quantile). A subclass that defines its loss and gradient says again that
    it is ``convex`` and ``row_separable`` (:meth:`LossFunction.__init_subclass__` resets both)."""

    convex = True
    row_separable = True
    shift_invariant = True

    def decision_rule(self, number_of_outputs: int) -> str:
        """``"identity"``: The scores are the predicted values."""
        return "identity"

    def check_targets(self, targets) -> np.ndarray:
        """Validate real targets: finite, and at most :data:`TARGET_LIMIT` in magnitude."""
        array = as_score_matrix(targets, "targets")
        check_target_range(array, "targets")
        return array

    def loss_hessian(self, targets: np.ndarray, scores: np.ndarray,
                     sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Ones: the squared loss's second derivative (a bound of the robust losses', as LightGBM uses)."""
        return weighted(np.ones(np.broadcast_shapes(np.shape(targets), np.shape(scores))), sample_weight)


class SquaredLoss(ResidualLoss):
    """``L(t, s) = (s - t)^2 / 2``, for real-valued (multi-output) regression."""

    name = "squared"
    convex = True
    row_separable = True
    curvature = 1.0

    def loss(self, targets: np.ndarray, scores: np.ndarray,
             sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Return ``(scores - targets)^2 / 2``."""
        return weighted(0.5 * (scores - targets) ** 2, sample_weight)

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray,
                      sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Return ``scores - targets``."""
        return weighted(scores - targets, sample_weight)

    def baseline(self, targets: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """(#outputs,) the weighted mean of each target column."""
        return np.average(targets, axis=0, weights=sample_weight)
