"""bob.learn.boosting's loss functions, as subclasses of bob_boost's.

Each is the bob_boost loss of the same name with bob's interface on top:

- :meth:`LossFunction.loss_sum` and :meth:`LossFunction.loss_gradient_sum` return one value per output
  (bob's L-BFGS objective and its gradient), where bob_boost's ``loss_sum`` returns their total;
- :class:`LogitLoss` computes bob's formulas, ``log(1 + exp(-t s))`` and ``-t e / (1 + e)``, operation for
  operation, so that its values equal bob's bit for bit; where they overflow (margins below about -709,
  where bob returned ``inf`` and ``nan``) bob_boost's overflow-free form takes over;
- :class:`JesorskyLoss` is ``sum_p ||s_p - t_p|| / d_eyes``, as bob 2.0 computes it (bob_boost's is half
  that, which has the same minimisers).

bob's :class:`TangentialLoss` gradient lacked the factor ``t`` (it was the derivative only for positive
targets); this one is bob_boost's, which has it. The exponential loss is bob's within bob_boost's cap of
the exponent at 600 (beyond it bob's overflowed).
"""
from __future__ import annotations

import numpy as np

from ...losses import base as core_base
from ...losses import exponential, jesorsky, logit, tangential
from ...losses.base import weighted


class LossFunction(core_base.LossFunction):
    """bob's base class of losses: implement ``loss`` and ``loss_gradient``; the sums follow per output.

    A subclass also works with bob_boost's trainers, which minimise the total of these sums.
    """

    def loss_sum(self, alpha, targets: np.ndarray, previous_scores: np.ndarray, current_scores: np.ndarray,
                 sample_weight: np.ndarray | None = None) -> np.ndarray:
        """The loss summed over the samples, per output, at ``previous_scores + alpha * current_scores``.

        Parameters
        ----------
        alpha : float or numpy.ndarray
            The weight(s) of the new weak machine, one per output.
        targets, previous_scores, current_scores : numpy.ndarray
            (#samples, #outputs) targets, strong machine's scores so far, and the new weak machine's outputs
            (1-D arrays for one output work too).
        sample_weight : numpy.ndarray, optional
            (#samples,) factors of the samples' losses (not in bob).

        Returns
        -------
        numpy.ndarray
            (#outputs,) sums, or (1,) for a loss coupling the outputs (:class:`JesorskyLoss`); a number
            for 1-D arguments.
        """
        scores = previous_scores + np.asarray(alpha) * current_scores
        return np.sum(weighted(self.loss(targets, scores), sample_weight), 0)

    def loss_gradient_sum(self, alpha, targets: np.ndarray, previous_scores: np.ndarray,
                          current_scores: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """The derivative of :meth:`loss_sum`'s total in each ``alpha``: ``sum_n dL/ds[n, o] * current[n, o]``.

        Returns
        -------
        numpy.ndarray
            (#outputs,) sums (a number for 1-D arguments).
        """
        scores = previous_scores + np.asarray(alpha) * current_scores
        return np.sum(weighted(self.loss_gradient(targets, scores), sample_weight) * current_scores, 0)


class ExponentialLoss(LossFunction, exponential.ExponentialLoss):
    """bob's exponential loss ``exp(-t s)`` and its gradient ``-t exp(-t s)``, for targets -1 / +1."""


class LogitLoss(LossFunction, logit.LogitLoss):
    """bob's logit loss ``log(1 + exp(-t s))`` and its gradient ``-t exp(-t s) / (1 + exp(-t s))``."""

    # elementwise, its fallback where bob's numbers overflow included (tests/test_rows.py)
    row_separable = True

    def loss(self, targets: np.ndarray, scores: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """``log(1 + exp(-t s))`` as bob computes it (bob_boost's form where bob's overflows)."""
        with np.errstate(over="ignore"):
            values = np.log(1.0 + np.exp(-(targets * scores)))
        if not np.all(np.isfinite(values)):
            values = np.where(np.isfinite(values), values, super().loss(targets, scores))
        return weighted(values, sample_weight)

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray,
                      sample_weight: np.ndarray | None = None) -> np.ndarray:
        """``-t e / (1 + e)`` with ``e = exp(-t s)``, as bob computes it (bob_boost's form where bob's is NaN)."""
        return self.loss_and_gradient(targets, scores, sample_weight)[1]

    def loss_and_gradient(self, targets: np.ndarray, scores: np.ndarray,
                          sample_weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`loss` and :meth:`loss_gradient` from one exponential, so that training sees bob's numbers."""
        with np.errstate(over="ignore", invalid="ignore"):
            e = np.exp(-(targets * scores))
            values = np.log(1.0 + e)
            gradient = -targets * e * (1.0 / (1.0 + e))
        if not (np.all(np.isfinite(values)) and np.all(np.isfinite(gradient))):
            safe_values, safe_gradient = super().loss_and_gradient(targets, scores)
            values = np.where(np.isfinite(values), values, safe_values)
            gradient = np.where(np.isfinite(gradient), gradient, safe_gradient)
        return weighted(values, sample_weight), weighted(gradient, sample_weight)


class TangentialLoss(LossFunction, tangential.TangentialLoss):
    """The tangent loss ``(2 arctan(t s) - 1)^2``; its gradient has the factor ``t`` that bob's lacked."""


class JesorskyLoss(LossFunction, jesorsky.JesorskyLoss):
    """bob's Jesorsky loss: per sample, ``sum_p ||s_p - t_p|| / d_eyes`` over the (y, x) points.

    ``loss`` has shape (#samples, 1), ``loss_sum`` shape (1,), ``loss_gradient_sum`` (#outputs,).
    """

    def loss(self, targets: np.ndarray, scores: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """The (#samples, 1) distances relative to the inter-eye distance (twice bob_boost's)."""
        # doubling is exact in floating point: bob_boost's 0.5 / d scale becomes bob's 1 / d
        return 2.0 * super().loss(targets, scores, sample_weight)

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray,
                      sample_weight: np.ndarray | None = None) -> np.ndarray:
        """The (#samples, #outputs) gradient of :meth:`loss`."""
        return 2.0 * super().loss_gradient(targets, scores, sample_weight)


__all__ = ["ExponentialLoss", "JesorskyLoss", "LogitLoss", "LossFunction", "TangentialLoss"]
