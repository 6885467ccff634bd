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


def _huber_center(values: np.ndarray, weights: np.ndarray, delta: float) -> float:
    """The ``c`` minimising ``sum_i w_i huber_delta(c - t_i)`` (:meth:`HuberLoss.baseline`); the middle of the
    minimisers where they form an interval."""
    order = np.argsort(values, kind="stable")
    sorted_values, sorted_weights = values[order], weights[order]
    cumulative = np.concatenate([[0.0], np.cumsum(sorted_weights)])
    moments = np.concatenate([[0.0], np.cumsum(sorted_weights * sorted_values)])
    kinks = np.sort(np.concatenate([sorted_values - delta, sorted_values + delta]))

    def derivative(points: np.ndarray) -> np.ndarray:
        # residuals of at least delta (targets at or below c - delta) pull with delta, those of at most
        # -delta push with it, the others with themselves
        low = np.searchsorted(sorted_values, points - delta, side="right")
        high = np.searchsorted(sorted_values, points + delta, side="left")
        inside = cumulative[high] - cumulative[low]
        return (delta * (cumulative[low] - (cumulative[-1] - cumulative[high])) + points * inside
                - (moments[high] - moments[low]))

    # -delta times the total weight at the first kink, +delta times it at the last, both exactly (no target is
    # inside there): the first kink where the derivative is >= 0 has one before it, unless every weight is zero
    slopes = derivative(kinks)
    first = int(np.searchsorted(slopes, 0.0, side="left"))
    if slopes[first] == 0.0:  # a flat minimum: from this kink to the last one where the derivative is zero
        last = int(np.searchsorted(slopes, 0.0, side="right")) - 1
        return float(0.5 * (kinks[first] + kinks[last]))
    left, right = kinks[first - 1], kinks[first]
    # linear between the two kinks: where it crosses zero
    center = left - slopes[first - 1] * (right - left) / (slopes[first] - slopes[first - 1])
    return float(min(max(center, left), right))


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
        """(#outputs,) the constant score of least weighted loss, each column's exactly.

        The loss's derivative in the constant ``c``, ``sum_i w_i clip(c - t_i, -delta, delta)``, is piecewise
        linear and non-decreasing, with kinks at ``t_i -+ delta``: it is evaluated at every kink (from sorted
        targets and running sums), and its zero found on the piece where it changes sign, where it is linear.
        Iterating a clipped-mean step instead moves about as slowly as the share of residuals within
        ``delta``: on targets spread over hundreds of units, as scikit-learn's diabetes data with
        ``delta=1``, 200 such steps stopped 0.04 short of the minimum.
        """
        weights = np.ones(targets.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        return np.array([_huber_center(np.asarray(targets[:, k], dtype=np.float64), weights, self.delta)
                         for k in range(targets.shape[1])])

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
