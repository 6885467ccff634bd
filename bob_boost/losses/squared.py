"""The squared-error loss for regression."""
from __future__ import annotations

import numba
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


#: The gradients of :func:`_fill_residual_derivatives`: ``r``, ``r`` clipped to ``[-a, a]``, ``sign(r)``, and
#: ``1 - a`` above the target, ``-a`` below (``r = s - t``; ``a`` the loss's parameter).
SQUARED, CLIPPED, SIGN, PINBALL = range(4)


class ResidualLoss(LossFunction):
    """A convex, elementwise loss of ``scores - targets`` for real targets, predicting the scores themselves
    (squared, Huber, absolute error, quantile). A subclass that defines its loss and gradient says again that
    it is ``convex`` and ``row_separable`` (:meth:`LossFunction.__init_subclass__` resets both)."""

    convex = True
    row_separable = True
    shift_invariant = True

    #: The compiled form of the gradient (:data:`SQUARED` ...), or None: None, the safe default, for a subclass
    #: that defines its own derivatives without setting it again.
    gradient_form: int | None = None

    def __init_subclass__(cls, **kwargs) -> None:
        """A subclass that overrides a derivative has no compiled gradient, unless it says so itself."""
        super().__init_subclass__(**kwargs)
        derivatives = ("loss_gradient", "loss_hessian", "gradient_and_hessian")
        if "gradient_form" not in cls.__dict__ and any(name in cls.__dict__ for name in derivatives):
            cls.gradient_form = None

    def gradient_parameter(self) -> float:
        """The parameter ``a`` of the compiled gradient (:data:`gradient_form`): Huber's ``delta``, the quantile."""
        return 0.0

    def derivatives_into(self, targets: np.ndarray, scores: np.ndarray, out: np.ndarray) -> None:
        """The gradient and the hessian (ones) side by side in ``out``, the bits of :meth:`gradient_and_hessian`,
        compiled in one pass for the built-in losses (numpy's passes allocate arrays of the rows' size)."""
        if self.gradient_form is None:
            super().derivatives_into(targets, scores, out)
            return
        _fill_residual_derivatives(np.asarray(targets, dtype=np.float64), np.asarray(scores, dtype=np.float64), out,
                                   self.gradient_form, self.gradient_parameter())

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
    gradient_form = SQUARED

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


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _fill_residual_derivatives(targets: np.ndarray, scores: np.ndarray, out: np.ndarray, form: int,
                               parameter: float) -> None:
    """``out[:, :K]`` the gradient of ``form`` (:data:`SQUARED` ...) at ``r = scores - targets``, ``out[:, K:]``
    ones; each value as numpy computes it (``np.clip``, ``np.sign``, the pinball's two constants and 0 at the
    target), without branches that the residuals' signs would mispredict."""
    outputs = targets.shape[1]
    above, below = 1.0 - parameter, -parameter
    for i in range(targets.shape[0]):
        for k in range(outputs):
            residual = scores[i, k] - targets[i, k]
            if form == SQUARED:
                value = residual
            elif form == CLIPPED:
                value = min(max(residual, -parameter), parameter)
            elif form == SIGN:
                value = 1.0 * (residual > 0) - 1.0 * (residual < 0)
            else:
                value = above * (residual > 0) + below * (residual < 0)
            out[i, k] = value
            out[i, outputs + k] = 1.0
