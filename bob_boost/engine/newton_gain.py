"""The Newton scores of gradient-tree children, shared by the numeric and the categorical split scans."""
from __future__ import annotations

import numba
import numpy as np

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}

#: Gains below this fraction of the children's summed scores are rounding noise, not splits.
ROUNDING_GAIN = 1e-10


@numba.njit(**_JIT)
def newton_score(sums, outputs, regularization):
    """``sum_k G_k^2 / (H_k + lambda)`` of a (2K,) gradient-then-hessian sum."""
    score = 0.0
    for k in range(outputs):
        score += sums[k] * sums[k] / (sums[outputs + k] + regularization)
    return score


@numba.njit(**_JIT)
def bounded_score(gradient, hessian, regularization, lower, upper):
    """``(score, value)``: the Newton value ``-G / (H + lambda)`` clipped to ``[lower, upper]`` and the loss
    decrease it achieves, ``-(2 G w + (H + lambda) w^2)`` (``G^2 / (H + lambda)`` when not clipped)."""
    denominator = hessian + regularization
    value = -gradient / denominator if denominator > 0 else 0.0
    value = min(max(value, lower), upper)
    return -(2.0 * gradient * value + denominator * value * value), value


@numba.njit(**_JIT)
def child_score(sums, outputs, regularization, lower, upper):
    """The loss decrease of a child with these (2K,) sums: :func:`newton_score`, or for one output between
    monotone bounds (not both infinite) the clipped Newton value's (:func:`bounded_score`)."""
    if outputs == 1 and (lower > -np.inf or upper < np.inf):
        return bounded_score(sums[0], sums[1], regularization, lower, upper)[0]
    return newton_score(sums, outputs, regularization)


@numba.njit(**_JIT)
def split_gain(node_total, left, node_count, left_count, outputs, regularization, min_samples, min_hessian, lower,
               upper, parent, right):
    """The gain of sending ``left`` (2K sums, ``left_count`` samples) left, the children scored by
    :func:`child_score` against the ``parent``'s score; -1 if not allowed: a child of fewer than ``min_samples``
    samples or a hessian sum below ``min_hessian`` (any output), or a gain at the rounding level of the
    scores (a pure node). ``right`` receives the right child's sums."""
    if left_count < min_samples or node_count - left_count < min_samples:
        return -1.0
    for v in range(2 * outputs):
        right[v] = node_total[v] - left[v]
    for k in range(outputs, 2 * outputs):
        if left[k] < min_hessian or right[k] < min_hessian:
            return -1.0
    children = (child_score(left, outputs, regularization, lower, upper)
                + child_score(right, outputs, regularization, lower, upper))
    value = children - parent
    if value <= ROUNDING_GAIN * abs(children):
        return -1.0
    return value
