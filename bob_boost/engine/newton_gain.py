"""The Newton scores of gradient-tree children, shared by the numeric and the categorical split scans."""
from __future__ import annotations

import numba

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
