"""Losses of counts and positive targets with a log link: Poisson, Gamma and Tweedie.

The score is the log of the predicted mean, ``mu = exp(s)``, so every prediction is positive and effects
multiply. Each loss is half the unit deviance of its distribution (zero where ``mu`` equals the target),
as scikit-learn's ``HalfPoissonLoss``, ``HalfGammaLoss`` and ``HalfTweedieLoss`` define them; its
optimal constant score is the log of the weighted mean target.
"""
from __future__ import annotations

import numbers

import numpy as np

from .._validation import as_score_matrix, check_scalar
from ..exceptions import InvalidValueError
from .base import LossFunction, weighted

#: Scores are clipped to this magnitude before ``exp``: ``exp(700)`` is near float64's largest value.
SCORE_LIMIT = 700.0
_TINY = float(np.finfo(np.float64).tiny)


def _clipped(scores: np.ndarray) -> np.ndarray:
    """The scores clipped to :data:`SCORE_LIMIT`, C-ordered: the loss and derivatives of C-ordered targets then
    are too, whatever the scores' order, as the training loop's row blocks expect
    (:func:`bob_boost.boosting.rows.loss_derivatives`)."""
    return np.ascontiguousarray(np.clip(scores, -SCORE_LIMIT, SCORE_LIMIT))


def _mean(scores: np.ndarray) -> np.ndarray:
    """``exp(scores)`` (clipped), C-ordered."""
    return np.exp(_clipped(scores))


class TweedieLoss(LossFunction):
    """Half the Tweedie unit deviance with a log link, for the power ``p`` of the variance ``mu^p``.

    ``p = 1`` is the Poisson loss (counts), ``p = 2`` the Gamma loss (positive amounts), and ``1 < p < 2``
    a compound Poisson-Gamma (amounts that are exactly zero with positive probability, such as insurance
    claims). For ``1 < p < 2``::

        L(t, s) = t^(2-p) / ((1-p)(2-p)) - t mu^(1-p) / (1-p) + mu^(2-p) / (2-p),   mu = exp(s)

    Parameters
    ----------
    power : float
        The variance power, in [1, 2].

    Raises
    ------
    ValueError
        For a power outside [1, 2].
    """

    name = "tweedie"
    convex = True
    row_separable = True

    #: The factor of the hessian the weak trainers see (:class:`PoissonLoss`'s ``max_delta_step``).
    _hessian_factor = 1.0

    def __init__(self, power: float = 1.5) -> None:
        self.power = float(check_scalar(power, "power", numbers.Real, min_val=1, max_val=2))

    def decision_rule(self, number_of_outputs: int) -> str:
        """``"exp"``: The prediction is the mean ``exp(score)``."""
        return "exp"

    def check_targets(self, targets) -> np.ndarray:
        """Validate targets: finite and non-negative, positive for the Gamma loss (power 2)."""
        array = as_score_matrix(targets, "targets")
        if self.power == 2.0 and not np.all(array > 0):
            raise InvalidValueError(f"targets: {type(self).__name__} needs positive targets, found "
                                    f"{float(array.min()):g}")
        if not np.all(array >= 0):
            raise InvalidValueError(f"targets: {type(self).__name__} needs non-negative targets, found "
                                    f"{float(array.min()):g}")
        return array

    def loss(self, targets: np.ndarray, scores: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Half the unit deviance of every sample."""
        log_mu = _clipped(scores)
        return weighted(self._values(targets, log_mu, np.exp(log_mu)), sample_weight)

    def loss_and_derivatives(self, targets: np.ndarray,
                             scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`loss`, :meth:`loss_gradient` and :meth:`loss_hessian` from one ``exp`` of the scores (the same
        bits): the descent check asks for the three at a round's new scores."""
        if not self._own_derivatives() or type(self).loss is not TweedieLoss.loss:
            return super().loss_and_derivatives(targets, scores)
        log_mu = _clipped(scores)
        mu = np.exp(log_mu)
        gradient, hessian = self._derivatives(targets, mu)
        return self._values(targets, log_mu, mu), gradient, hessian

    def _values(self, targets: np.ndarray, log_mu: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """:meth:`loss` (unweighted) at the clipped scores ``log_mu`` and the means ``mu = exp(log_mu)``."""
        p = self.power
        if p == 1.0:
            # t log t, 0 at t = 0 (as scipy's xlogy, which took twice the time of numpy's log)
            values = targets * np.log(np.maximum(targets, _TINY)) - targets * log_mu - targets + mu
        elif p == 2.0:
            values = log_mu - np.log(targets) + targets / mu - 1.0
        else:
            values = (np.power(targets, 2.0 - p) / ((1.0 - p) * (2.0 - p)) - targets * np.power(mu, 1.0 - p) / (1.0 - p)
                      + np.power(mu, 2.0 - p) / (2.0 - p))
        return values

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray,
                      sample_weight: np.ndarray | None = None) -> np.ndarray:
        """``mu^(1-p) (mu - t)``."""
        p, mu = self.power, _mean(scores)
        values = mu - targets if p == 1.0 else np.power(mu, 1.0 - p) * (mu - targets)
        return weighted(values, sample_weight)

    def loss_hessian(self, targets: np.ndarray, scores: np.ndarray,
                     sample_weight: np.ndarray | None = None) -> np.ndarray:
        """``(2-p) mu^(2-p) - (1-p) t mu^(1-p)`` (``mu`` for Poisson, ``t / mu`` for Gamma): never negative."""
        p, mu = self.power, _mean(scores)
        if p == 1.0:
            values = self._hessian_factor * mu + 0.0 * targets  # times 1.0 (the default) is exact
        elif p == 2.0:
            values = targets / mu
        else:
            values = (2.0 - p) * np.power(mu, 2.0 - p) - (1.0 - p) * targets * np.power(mu, 1.0 - p)
        return weighted(values, sample_weight)

    def gradient_and_hessian(self, targets: np.ndarray, scores: np.ndarray,
                             sample_weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Both derivatives from one ``exp`` of the scores, the bits of :meth:`loss_gradient` and
        :meth:`loss_hessian`."""
        if not self._own_derivatives():
            return super().gradient_and_hessian(targets, scores, sample_weight)
        gradient, hessian = self._derivatives(targets, _mean(scores))
        return weighted(gradient, sample_weight), weighted(hessian, sample_weight)

    def derivatives_into(self, targets: np.ndarray, scores: np.ndarray, out: np.ndarray) -> None:
        """The gradient and hessian side by side in ``out``, from one ``exp`` of the scores."""
        if not self._own_derivatives():
            super().derivatives_into(targets, scores, out)
            return
        outputs = out.shape[1] // 2
        self._derivatives(targets, _mean(scores), out[:, :outputs], out[:, outputs:])

    def _own_derivatives(self) -> bool:
        cls = type(self)
        return (cls.loss_gradient is TweedieLoss.loss_gradient and cls.loss_hessian is TweedieLoss.loss_hessian
                and cls.gradient_and_hessian is TweedieLoss.gradient_and_hessian)

    def _derivatives(self, targets: np.ndarray, mu: np.ndarray, gradient: np.ndarray | None = None,
                     hessian: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`loss_gradient` and :meth:`loss_hessian` (unweighted) at the means ``mu``, the same operations, into
        ``gradient`` and ``hessian`` when given."""
        p = self.power
        if p == 1.0:
            gradient = np.subtract(mu, targets, out=gradient)
            # mu + 0 t: the hessian's bits, and its shape broadcast with the targets'
            # the default factor 1.0 would change no bit: it only spares the product's pass
            scaled = mu if self._hessian_factor == 1.0 else self._hessian_factor * mu
            hessian = np.add(scaled, 0.0 * targets, out=hessian)
        elif p == 2.0:
            gradient = np.multiply(np.power(mu, -1.0), mu - targets, out=gradient)
            hessian = np.divide(targets, mu, out=hessian)
        else:
            gradient = np.multiply(np.power(mu, 1.0 - p), mu - targets, out=gradient)
            hessian = np.subtract((2.0 - p) * np.power(mu, 2.0 - p), (1.0 - p) * targets * np.power(mu, 1.0 - p),
                                  out=hessian)
        return gradient, hessian

    def baseline(self, targets: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """(#outputs,) ``log`` of each target column's weighted mean, the constant score of least loss.

        Raises
        ------
        ValueError
            When a column's weighted mean is zero (every target 0: no finite score is best).
        """
        mean = np.average(targets, axis=0, weights=sample_weight)
        if not np.all(mean > 0):
            raise InvalidValueError(f"targets: {type(self).__name__} needs some positive target (the mean is 0, "
                                    f"whose log-link score is -inf)")
        return np.log(mean)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(power={self.power!r})"


def check_max_delta_step(value, name: str = "max_delta_step") -> float:
    """:class:`PoissonLoss`'s ``max_delta_step`` as a float, raising (naming ``name``) unless it is a real number in
    [0, :data:`SCORE_LIMIT`]: up to the scores' own limit, so that the hessian's factor is finite."""
    return float(check_scalar(value, name, numbers.Real, min_val=0, max_val=SCORE_LIMIT))


class PoissonLoss(TweedieLoss):
    """Half the Poisson deviance with a log link, ``t log(t / mu) - t + mu``, for counts (``mu = exp(s)``).

    Parameters
    ----------
    max_delta_step : float
        At least 0: the hessian given to the weak trainers is ``exp(max_delta_step) mu``, not ``mu``, so that
        Newton leaves take shorter steps (LightGBM's ``poisson_max_delta_step`` and XGBoost's ``max_delta_step``
        of ``count:poisson``, 0.7 by default in both). Where ``mu`` is far below the targets, a full Newton
        step ``t / mu - 1`` overshoots. The loss and its gradient are unchanged, so a step rule that solves for
        the weight finds the same minimiser. 0 (the default) is the true hessian, as scikit-learn's
        ``HistGradientBoostingRegressor`` uses. Not :class:`~bob_boost.TreeTrainer`'s ``max_delta_step``, which
        caps every leaf.

    Raises
    ------
    ValueError
        For a ``max_delta_step`` outside [0, 700] (:data:`SCORE_LIMIT`) or not finite.
    TypeError
        For a ``max_delta_step`` that is not a real number.
    """

    name = "poisson"

    def __init__(self, max_delta_step: float = 0.0) -> None:
        super().__init__(1.0)
        self.max_delta_step = check_max_delta_step(max_delta_step)
        self._hessian_factor = float(np.exp(self.max_delta_step))

    def __repr__(self) -> str:
        return "PoissonLoss()" if self.max_delta_step == 0.0 else f"PoissonLoss(max_delta_step={self.max_delta_step!r})"


class GammaLoss(TweedieLoss):
    """Half the Gamma deviance with a log link, ``log(mu / t) + t / mu - 1``, for positive targets."""

    name = "gamma"

    def __init__(self) -> None:
        super().__init__(2.0)

    def __repr__(self) -> str:
        return "GammaLoss()"
