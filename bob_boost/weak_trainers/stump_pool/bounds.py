"""The geometry of the bound after a step: values, slopes, tangents and lower bounds.

After a step ``alpha`` on a stump with class-conditional errors ``e_P``, ``e_N``, the bound is

    ``L(alpha) = p ((1 - e_P) e^{-C_P alpha} + e_P e^{C_P alpha}) + q ((1 - e_N) e^{-C_N alpha} + e_N e^{C_N alpha})``

(``p``, ``q``: the positives' and the negatives' shares of the current weight). It is convex in
``alpha`` and, at a fixed ``alpha``, affine in ``(e_P, e_N)``, so one small matrix product gives the value
and slope of every stump on a grid of steps (:func:`bound_coefficients`). Any value bounds the smallest
bound from above; tangents that bracket a stump's minimum (:func:`tangents_meet`) and the sum of the class
parts' separate minima (:func:`separate_minima`) bound it from below, without a root search.
"""
from __future__ import annotations

import numpy as np

from ...boosting.roots import saturating_exp

#: Relative allowance for rounding in the bound search's lower bounds.
BOUND_MARGIN = 1e-12


def bound_after_step(alpha: np.ndarray, wrong_positive: np.ndarray, right_positive: np.ndarray,
                     wrong_negative: np.ndarray, right_negative: np.ndarray, cost_positive: float,
                     cost_negative: float) -> np.ndarray:
    """The exponential bound after a step ``alpha``, up to the round's common factor.

    Parameters
    ----------
    alpha : numpy.ndarray
        (#candidates,) steps.
    wrong_positive, right_positive, wrong_negative, right_negative : numpy.ndarray
        (#candidates,) misclassified and correctly classified weight per class.
    cost_positive, cost_negative : float
        The costs ``C_P`` and ``C_N``.

    Returns
    -------
    numpy.ndarray
        (#candidates,) bounds.
    """
    return (right_positive * saturating_exp(-cost_positive * alpha)
            + wrong_positive * saturating_exp(cost_positive * alpha)
            + right_negative * saturating_exp(-cost_negative * alpha)
            + wrong_negative * saturating_exp(cost_negative * alpha))


def bound_coefficients(p: float, q: float, cost_positive: float, cost_negative: float,
                       alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The bound ``L(alpha)`` and its slope as affine functions of the class errors.

    Parameters
    ----------
    p, q : float
        The positives' and the negatives' shares of the current weight (``q = 1 - p``, each computed on
        its own so that neither is lost to rounding).
    cost_positive, cost_negative : float
        The costs ``C_P`` and ``C_N``.
    alpha : numpy.ndarray
        Steps at which to evaluate.

    Returns
    -------
    tuple of numpy.ndarray
        Two arrays of shape ``(3,) + alpha.shape``: the coefficients of ``(1, e_P, e_N)`` in ``L(alpha)``
        and in ``L'(alpha)``.
    """
    # rows: e^{C_P alpha}, e^{-C_P alpha}, e^{C_N alpha}, e^{-C_N alpha}
    exponentials = np.exp(np.multiply.outer([cost_positive, -cost_positive, cost_negative, -cost_negative], alpha))
    slope_p, slope_n = p * cost_positive, q * cost_negative
    value = np.array([[0.0, p, 0.0, q], [p, -p, 0.0, 0.0], [0.0, 0.0, q, -q]]) @ exponentials
    slope = np.array([[0.0, -slope_p, 0.0, -slope_n], [slope_p, slope_p, 0.0, 0.0],
                      [0.0, 0.0, slope_n, slope_n]]) @ exponentials
    return value, slope


def class_part_minimum(error: np.ndarray) -> np.ndarray:
    """``min over alpha >= 0`` of ``(1 - e) e^{-C alpha} + e e^{C alpha}``.

    That is ``2 sqrt(e (1 - e))``, or 1 for ``e > 1/2``.
    """
    return np.where(error <= 0.5, 2.0 * np.sqrt(error * (1.0 - error)), 1.0)


def separate_minima(error_positive: np.ndarray, error_negative: np.ndarray, p: float, q: float) -> np.ndarray:
    """A lower bound of ``min over alpha >= 0`` of ``L``: the sum of its two class parts' own minima."""
    return p * class_part_minimum(error_positive) + q * class_part_minimum(error_negative)


def tangents_meet(low: tuple[np.ndarray, ...], high: tuple[np.ndarray, ...],
                  steepness: float) -> tuple[np.ndarray, np.ndarray]:
    """Where the tangents at ``low`` and ``high`` meet, and a bound below the minimum between them.

    When the slope at ``low`` is <= 0 and the one at ``high`` > 0, the
    minimum of a convex function lies between them and is at least the
    value where the two tangents meet. The returned bound is the lower of
    the two tangents at the computed meeting point (below the true meeting
    value even when rounding moved the point), minus an allowance for the
    rounding of the values and slopes, whose terms are at most about
    ``steepness * (value + 2)`` in size for the bound ``L``.

    Parameters
    ----------
    low, high : tuple of numpy.ndarray
        ``(alpha, value, slope)`` of each function at the two points.
    steepness : float
        The larger cost.

    Returns
    -------
    tuple of numpy.ndarray
        ``(alpha, lower bound)``: where the tangents meet, and the bound.
    """
    at_low, value_low, slope_low = low
    at_high, value_high, slope_high = high
    meet = (value_high - value_low + slope_low * at_low - slope_high * at_high) / (slope_low - slope_high)
    meet = np.clip(meet, at_low, at_high)
    to_low, to_high = meet - at_low, at_high - meet
    lower = np.minimum(value_low + slope_low * to_low, value_high - slope_high * to_high)
    allowance = BOUND_MARGIN * (value_low + value_high - slope_low * to_low + slope_high * to_high
                                + steepness * (value_low + value_high + 4.0) * (at_high - at_low))
    return meet, lower - allowance
