"""Weighted quantiles of groups of values (the leaves' residuals of the robust losses), compiled.

The values are sorted once (numpy's sort), then sorted stably by group (a counting sort), and every group's
running weight is summed on its own, so each group's quantile is the one
:func:`bob_boost.losses.robust.weighted_quantile` takes of its values alone (up to the order of equal values).
Without weights, each group's quantile is selected from its values instead (:func:`grouped_quantiles_of_counts`).
"""
from __future__ import annotations

import math

import numba
import numpy as np

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}


@numba.njit(**_JIT)
def _group_starts(groups, number):
    """Where each of the ``number`` groups starts in the values sorted by group, and the end (a counting sort)."""
    starts = np.zeros(number + 1, np.int64)
    for i in range(groups.size):
        starts[groups[i] + 1] += 1
    for g in range(number):
        starts[g + 1] += starts[g]
    return starts


@numba.njit(**_JIT)
def _by_group(groups, starts, sequence):
    """The indices of ``sequence`` sorted stably by their group (``starts``: :func:`_group_starts`)."""
    filled = starts[:-1].copy()
    ordered = np.empty(groups.size, np.int64)
    for i in sequence:
        ordered[filled[groups[i]]] = i
        filled[groups[i]] += 1
    return ordered


@numba.njit(**_JIT)
def grouped_weighted_quantiles(groups, by_value, values, weights, quantile, out):
    """``out[g]``: the weighted ``quantile`` of the ``values`` whose group is ``g`` (``weights`` per value;
    ``by_value`` the values' ascending order): the first value in that order whose running weight within the
    group reaches ``quantile`` times the group's total (the group's last when rounding leaves it short); NaN for
    a group without values."""
    number = out.size
    starts = _group_starts(groups, number)
    ordered = _by_group(groups, starts, by_value)
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


@numba.njit(**_JIT)
def grouped_quantiles_of_counts(groups, values, quantile, out):
    """:func:`grouped_weighted_quantiles` with every weight 1: ``out[g]`` the ``k``-th smallest of group ``g``'s
    values, ``k + 1`` the least count that reaches ``quantile`` times the group's (a running count is exact, so
    it is the value the running weights choose), found by selection rather than a sort of every value."""
    number = out.size
    starts = _group_starts(groups, number)
    grouped = values[_by_group(groups, starts, np.arange(groups.size))]
    for g in range(number):
        first, stop = starts[g], starts[g + 1]
        if first == stop:
            out[g] = np.nan
            continue
        k = max(0, math.ceil(quantile * float(stop - first)) - 1)
        out[g] = _select(grouped[first:stop], k)


@numba.njit(**_JIT)
def _select(values, k):
    """The ``k``-th smallest of ``values`` (no NaN), which it reorders: Hoare's selection with the median of three
    as pivot."""
    low, high = 0, values.size - 1
    while low < high:
        middle = (low + high) >> 1
        # the median of the three ends up in the middle, the smallest at low and the largest at high
        if values[middle] < values[low]:
            values[middle], values[low] = values[low], values[middle]
        if values[high] < values[low]:
            values[high], values[low] = values[low], values[high]
        if values[high] < values[middle]:
            values[high], values[middle] = values[middle], values[high]
        pivot = values[middle]
        i, j = low, high
        while i <= j:
            while values[i] < pivot:
                i += 1
            while pivot < values[j]:
                j -= 1
            if i <= j:
                values[i], values[j] = values[j], values[i]
                i += 1
                j -= 1
        # values[low:j + 1] <= pivot <= values[i:high + 1], and values between j and i equal the pivot
        if k <= j:
            high = j
        elif k >= i:
            low = i
        else:
            return values[k]
    return values[k]
