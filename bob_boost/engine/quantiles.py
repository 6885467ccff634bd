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


#: Ranges of at most this many values are sorted by insertion to find the k-th.
_INSERTION_MOST = 16


@numba.njit(**_JIT)
def _select(values, k):
    """The ``k``-th smallest of ``values`` (no NaN), which it reorders: selection around the median of three
    values, each pass moving the values below the pivot (then those equal to it) to the front without a branch
    on the comparison, whose outcome on residuals is a coin toss (2.5 times faster than Hoare's swaps)."""
    low, high = 0, values.size - 1
    while high - low >= _INSERTION_MOST:
        a, b, c = values[low], values[(low + high) >> 1], values[high]
        pivot = max(min(a, b), min(max(a, b), c))
        below = low
        for i in range(low, high + 1):
            value = values[i]
            values[i] = values[below]
            values[below] = value
            below += value < pivot
        if k < below:
            high = below - 1
            continue
        # the pivot is one of the values: this part is never empty, so every pass narrows the range
        equal = below
        for i in range(below, high + 1):
            value = values[i]
            values[i] = values[equal]
            values[equal] = value
            equal += value <= pivot
        if k < equal:
            return pivot
        low = equal
    for i in range(low + 1, high + 1):
        value = values[i]
        j = i - 1
        while j >= low and values[j] > value:
            values[j + 1] = values[j]
            j -= 1
        values[j + 1] = value
    return values[k]
