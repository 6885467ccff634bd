"""Weighted quantiles of groups of values (the leaves' residuals of the robust losses), compiled.

Each group's values are sorted on their own (a counting sort by group, then a stable sort within each
group), so the cost is that of the groups' sorts, and every group's quantile is the one
:func:`bob_boost.losses.robust.weighted_quantile` takes of its values alone.
"""
from __future__ import annotations

import numba
import numpy as np

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}


@numba.njit(**_JIT)
def grouped_weighted_quantiles(groups, values, weights, quantile, out):
    """``out[g]``: the weighted ``quantile`` of the ``values`` whose group is ``g`` (``weights`` per value), the
    first value in ascending order (stable) whose running weight reaches ``quantile`` times the group's total,
    summed in that order (the last value when rounding leaves it short); NaN for a group without values."""
    number = out.size
    starts = np.zeros(number + 1, np.int64)
    for i in range(groups.size):
        starts[groups[i] + 1] += 1
    for g in range(number):
        starts[g + 1] += starts[g]
    filled = starts[:-1].copy()
    members = np.empty(groups.size, np.int64)
    for i in range(groups.size):
        members[filled[groups[i]]] = i
        filled[groups[i]] += 1
    for g in range(number):
        first, stop = starts[g], starts[g + 1]
        if first == stop:
            out[g] = np.nan
            continue
        rows = members[first:stop]
        ordered = rows[np.argsort(values[rows], kind="mergesort")]
        total = 0.0
        for row in ordered:
            total += weights[row]
        goal = quantile * total
        running = 0.0
        chosen = ordered[ordered.size - 1]
        for row in ordered:
            running += weights[row]
            if running >= goal:
                chosen = row
                break
        out[g] = values[chosen]
