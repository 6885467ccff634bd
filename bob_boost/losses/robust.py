"""Robust regression losses of the residual ``r = s - t``: Huber, absolute error and quantile (pinball).

Their second derivatives are zero (or undefined) almost everywhere, which would make Newton leaves divide
by zero. As LightGBM does, their :meth:`loss_hessian` is the constant 1 instead. For Huber this is an
upper bound of the true second derivative (which is 1 inside the ``delta`` band and 0 outside), so a Newton
step with it is a majorise-minimise step that never overshoots; for the absolute and quantile losses it
makes a tree's leaf the mean of its rows' gradient signs, a direction only: once the tree is grown, its
leaves are re-estimated as the weighted median or quantile of their rows' residuals (``renews_leaves``), as
LightGBM and scikit-learn do.
"""
from __future__ import annotations

import numbers

import numpy as np

from .._validation import check_scalar
from ..engine.quantiles import grouped_quantiles_of_counts, grouped_weighted_quantiles
from .base import weighted
from .squared import CLIPPED, PINBALL, SIGN, ResidualLoss


def weighted_quantile(values: np.ndarray, sample_weight: np.ndarray | None, quantile: float) -> np.ndarray:
    """Each column's weighted ``quantile``: the smallest value whose cumulative weight reaches ``quantile``
    of the column's total (the lower weighted quantile; with equal weights, ``numpy.quantile``'s
    ``"inverted_cdf"`` method).

    Parameters
    ----------
    values : numpy.ndarray
        (#samples, #columns).
    sample_weight : numpy.ndarray or None
        (#samples,) non-negative weights, not all zero (None: equal).
    quantile : float
        In [0, 1].
    """
    weights = np.ones(values.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    result = np.empty(values.shape[1])
    for column in range(values.shape[1]):
        order = np.argsort(values[:, column], kind="stable")
        cumulative = np.cumsum(weights[order])
        index = np.searchsorted(cumulative, quantile * cumulative[-1], side="left")
        result[column] = values[order[min(index, order.size - 1)], column]
    return result


def grouped_quantiles(groups: np.ndarray, values: np.ndarray, sample_weight: np.ndarray | None, quantile: float,
                      number_of_groups: int) -> np.ndarray:
    """(#groups,) the weighted ``quantile`` of the ``values`` of every group, as :func:`weighted_quantile` takes it
    of the group's values up to the order of equal values (NaN for a group without values).

    Parameters
    ----------
    groups : numpy.ndarray
        (#samples,) each value's group, in ``0 .. number_of_groups - 1``.
    values : numpy.ndarray
        (#samples,) the values.
    sample_weight : numpy.ndarray or None
        (#samples,) non-negative weights (None: equal).
    quantile : float
        In [0, 1].
    number_of_groups : int
        Groups in all.
    """
    result = np.empty(number_of_groups)
    values = np.asarray(values, dtype=np.float64)
    groups = np.asarray(groups, dtype=np.int64)
    if sample_weight is None:
        grouped_quantiles_of_counts(groups, values, float(quantile), result)
    else:
        grouped_weighted_quantiles(groups, np.argsort(values), values, np.asarray(sample_weight, dtype=np.float64),
                                   float(quantile), result)
    return result


class HuberLoss(ResidualLoss):
    """``L(t, s) = r^2 / 2`` for ``|r| <= delta``, else ``delta (|r| - delta / 2)``, with ``r = s - t``.

    Quadratic near the target and linear far from it, so outliers pull the model with a bounded force.

    Parameters
    ----------
    delta : float
        Where the loss turns from quadratic to linear (> 0), in the targets' units.

    Raises
    ------
    ValueError
        For ``delta`` that is not positive and finite.
    """

    name = "huber"
    convex = True
    row_separable = True
    #: Its gradient, the residual clipped to ``[-delta, delta]``, changes at most as fast as the scores.
    curvature = 1.0
    gradient_form = CLIPPED

    def __init__(self, delta: float = 1.0) -> None:
        self.delta = float(check_scalar(delta, "delta", numbers.Real, min_val=0, include_boundaries="neither"))

    def gradient_parameter(self) -> float:
        """``delta``, where the gradient is clipped."""
        return self.delta

    def loss(self, targets: np.ndarray, scores: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """The Huber loss of every residual."""
        residual = np.abs(scores - targets)
        inside = residual <= self.delta
        values = np.where(inside, 0.5 * residual ** 2, self.delta * (residual - 0.5 * self.delta))
        return weighted(values, sample_weight)

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray,
                      sample_weight: np.ndarray | None = None) -> np.ndarray:
        """The residual clipped to ``[-delta, delta]``."""
        return weighted(np.clip(scores - targets, -self.delta, self.delta), sample_weight)

    def baseline(self, targets: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """(#outputs,) the constant score of least weighted loss, found by Newton-majorised iterations from
        the weighted median (each step the mean clipped residual, which never increases the loss)."""
        center = weighted_quantile(targets, sample_weight, 0.5)
        weights = np.ones(targets.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        total = weights.sum()
        for _ in range(200):
            step = weights @ np.clip(targets - center, -self.delta, self.delta) / total
            center = center + step
            if np.all(np.abs(step) <= 1e-12 * (1.0 + np.abs(center))):
                break
        return center

    def __repr__(self) -> str:
        return f"HuberLoss(delta={self.delta!r})"


class AbsoluteErrorLoss(ResidualLoss):
    """``L(t, s) = |s - t|``: its population minimiser is the median, so models predict conditional medians."""

    name = "absolute_error"
    convex = True
    row_separable = True
    renews_leaves = True
    gradient_form = SIGN

    def loss(self, targets: np.ndarray, scores: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """``|scores - targets|``."""
        return weighted(np.abs(scores - targets), sample_weight)

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray,
                      sample_weight: np.ndarray | None = None) -> np.ndarray:
        """``sign(scores - targets)`` (0 at the target)."""
        return weighted(np.sign(scores - targets), sample_weight)

    def baseline(self, targets: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """(#outputs,) the weighted median of each target column."""
        return weighted_quantile(targets, sample_weight, 0.5)

    def leaf_values(self, leaves: np.ndarray, residuals: np.ndarray, sample_weight: np.ndarray | None,
                    number_of_nodes: int) -> np.ndarray:
        """The weighted median of every leaf's residuals."""
        return grouped_quantiles(leaves, residuals, sample_weight, 0.5, number_of_nodes)


class QuantileLoss(ResidualLoss):
    """The pinball loss ``L(t, s) = quantile (t - s)`` for ``t >= s``, else ``(1 - quantile) (s - t)``: its
    population minimiser is the ``quantile`` of the target's distribution.

    Parameters
    ----------
    quantile : float
        In (0, 1); 0.5 is half the absolute error.

    Raises
    ------
    ValueError
        For ``quantile`` outside (0, 1).
    """

    name = "quantile"
    convex = True
    row_separable = True
    renews_leaves = True
    gradient_form = PINBALL

    def __init__(self, quantile: float = 0.5) -> None:
        self.quantile = float(check_scalar(quantile, "quantile", numbers.Real, min_val=0, max_val=1,
                                           include_boundaries="neither"))

    def gradient_parameter(self) -> float:
        """The quantile."""
        return self.quantile

    def loss(self, targets: np.ndarray, scores: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """The pinball loss of every residual."""
        difference = np.subtract(targets, scores, dtype=np.float64)
        values = (self.quantile - 1.0) * difference
        # the larger of the two products is the one of the residual's side, np.where's choice but for the sign
        # of a zero (no sum changes); masks and np.where cost several times more
        np.maximum(values, np.multiply(difference, self.quantile, out=difference), out=values)
        return weighted(values, sample_weight)

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray,
                      sample_weight: np.ndarray | None = None) -> np.ndarray:
        """``-quantile`` where the score is below the target, ``1 - quantile`` where above (0 at it)."""
        difference = scores - targets
        values = np.where(difference > 0, 1.0 - self.quantile, np.where(difference < 0, -self.quantile, 0.0))
        return weighted(values, sample_weight)

    def baseline(self, targets: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """(#outputs,) the weighted ``quantile`` of each target column."""
        return weighted_quantile(targets, sample_weight, self.quantile)

    def leaf_values(self, leaves: np.ndarray, residuals: np.ndarray, sample_weight: np.ndarray | None,
                    number_of_nodes: int) -> np.ndarray:
        """The weighted ``quantile`` of every leaf's residuals."""
        return grouped_quantiles(leaves, residuals, sample_weight, self.quantile, number_of_nodes)

    def __repr__(self) -> str:
        return f"QuantileLoss(quantile={self.quantile!r})"
