"""Weighted quantiles of groups of values (the leaves' residuals of the robust losses), compiled.

The values are sorted once (numpy's sort), then sorted stably by group (a counting sort), and every group's
running weight is summed on its own, so each group's quantile is the one
:func:`bob_boost.losses.robust.weighted_quantile` takes of its values alone (up to the order of equal values).
"""
from __future__ import annotations

import numba
import numpy as np

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}


@numba.njit(**_JIT)
def grouped_weighted_quantiles(groups, by_value, values, weights, quantile, out):
    """``out[g]``: the weighted ``quantile`` of the ``values`` whose group is ``g`` (``weights`` per value;
    ``by_value`` the values' ascending order): the first value in that order whose running weight within the
    group reaches ``quantile`` times the group's total (the group's last when rounding leaves it short); NaN for
    a group without values."""
    number = out.size
    starts = np.zeros(number + 1, np.int64)
    for i in range(groups.size):
        starts[groups[i] + 1] += 1
    for g in range(number):
        starts[g + 1] += starts[g]
    filled = starts[:-1].copy()
    ordered = np.empty(groups.size, np.int64)
    for i in by_value:
        ordered[filled[groups[i]]] = i
        filled[groups[i]] += 1
    for g in range(number):
        first, stop = starts[g], starts[g + 1]
        if first == stop:
            out[g] = np.nan
            continue
        total = 0.0
        for k in range(first, stop):
            total += weights[ordered[k]]
        goal = quantile * total
        running = 0.0
        chosen = ordered[stop - 1]
        for k in range(first, stop):
            running += weights[ordered[k]]
            if running >= goal:
                chosen = ordered[k]
                break
        out[g] = values[chosen]
