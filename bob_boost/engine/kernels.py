"""Compiled kernels of the histogram engine (numba, ``nogil``; called on blocks by :mod:`.threads`).

Layout: ``codes`` is the (#features, #samples) feature-major matrix of every
entry's bin within its feature (uint8 or uint16), so a feature's codes are
contiguous. A *sparse* feature (most entries in one bin, such as a mostly-zero
pixel) also lists the rows outside that bin; its histogram visits only those
rows and recovers the frequent bin as "total minus the other bins".

No kernel uses ``fastmath``: sums are plain additions in a fixed order, so
results are the same on every run and for every blocking of the work.
"""
from __future__ import annotations

import numba
import numpy as np

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}


@numba.njit(**_JIT)
def _count_at_most(edges, value):
    """How many of the sorted, +inf-padded ``edges`` (a power-of-two length) are <= ``value``.

    Adds instead of branching (the comparisons are unpredictable); 256 edges,
    the usual width, take eight unrolled steps, which is several times
    faster than the loop.
    """
    position = 0
    if edges.size == 256:
        position += 128 * (edges[127] <= value)
        position += 64 * (edges[position + 63] <= value)
        position += 32 * (edges[position + 31] <= value)
        position += 16 * (edges[position + 15] <= value)
        position += 8 * (edges[position + 7] <= value)
        position += 4 * (edges[position + 3] <= value)
        position += 2 * (edges[position + 1] <= value)
        position += edges[position] <= value
        return position
    level = edges.size >> 1
    while level > 0:
        position += level * (edges[position + level - 1] <= value)
        level >>= 1
    return position


@numba.njit(**_JIT)
def code_rows(values, thresholds, row_start, row_stop, codes):
    """``codes[f, i] = #(thresholds[f] <= values[i, f])`` for rows ``row_start:row_stop``.

    ``thresholds`` is (#features, P), each row sorted and padded with +inf to
    a power of two P (256 for up to 255 thresholds).
    """
    n_features = values.shape[1]
    for i in range(row_start, row_stop):
        row = values[i]
        for f in range(n_features):
            codes[f, i] = _count_at_most(thresholds[f], np.float64(row[f]))


@numba.njit(**_JIT)
def code_columns(values, thresholds, feature_start, feature_stop, codes):
    """:func:`code_rows` for features ``feature_start:feature_stop`` (the order for column-major input)."""
    n_samples = values.shape[0]
    for f in range(feature_start, feature_stop):
        edges = thresholds[f]
        for i in range(n_samples):
            codes[f, i] = _count_at_most(edges, np.float64(values[i, f]))


@numba.njit(**_JIT)
def count_values(values, low, row_start, row_stop, counts):
    """``counts[f, v - low[f]] += 1`` for every value ``v`` of feature ``f`` in rows ``row_start:row_stop``."""
    n_features = values.shape[1]
    for i in range(row_start, row_stop):
        row = values[i]
        for f in range(n_features):
            counts[f, np.int64(row[f]) - low[f]] += 1


@numba.njit(**_JIT)
def rank_rows(values, low, ranks, row_start, row_stop, codes):
    """``codes[f, i] = ranks[f, values[i, f] - low[f]]`` for rows ``row_start:row_stop`` (integer features)."""
    n_features = values.shape[1]
    for i in range(row_start, row_stop):
        row = values[i]
        for f in range(n_features):
            codes[f, i] = ranks[f, np.int64(row[f]) - low[f]]


@numba.njit(**_JIT)
def count_bins(codes, feature_start, feature_stop, counts):
    """``counts[f, b]``: how many samples of feature ``f`` fall into bin ``b``."""
    n_samples = codes.shape[1]
    for f in range(feature_start, feature_stop):
        row = counts[f]
        for i in range(n_samples):
            row[codes[f, i]] += 1


@numba.njit(**_JIT)
def list_sparse_rows(codes, mode_bins, row_starts, feature_start, feature_stop, rows):
    """Fill ``rows[row_starts[f]:row_starts[f + 1]]`` with the rows of feature ``f`` outside its mode bin."""
    n_samples = codes.shape[1]
    for f in range(feature_start, feature_stop):
        mode = mode_bins[f]
        if mode < 0:
            continue
        position = row_starts[f]
        for i in range(n_samples):
            if codes[f, i] != mode:
                rows[position] = i
                position += 1


@numba.njit(**_JIT)
def select_above(codes, bin_index, high, low, out):
    """``out[i] = high if codes[i] > bin_index else low``."""
    for i in range(codes.size):
        out[i] = high if codes[i] > bin_index else low


@numba.njit(**_JIT)
def histograms(codes, values, totals, mode_bins, row_starts, rows, feature_start, feature_stop, out):
    """``out[f, b, k] = sum of values[i, k]`` over the samples ``i`` in bin ``b`` of feature ``f``.

    ``out`` must be zero on entry. Dense features (``mode_bins[f] < 0``)
    visit every row in order; sparse ones visit their listed rows in order
    and set the mode bin to ``totals`` minus the other bins.
    """
    n_samples, n_outputs = values.shape
    n_bins = out.shape[1]
    for f in range(feature_start, feature_stop):
        histogram = out[f]
        feature_codes = codes[f]
        mode = mode_bins[f]
        if mode < 0:
            if n_outputs == 1:
                for i in range(n_samples):
                    histogram[feature_codes[i], 0] += values[i, 0]
            else:
                for i in range(n_samples):
                    b = feature_codes[i]
                    for k in range(n_outputs):
                        histogram[b, k] += values[i, k]
            continue
        if n_outputs == 1:
            for j in range(row_starts[f], row_starts[f + 1]):
                i = rows[j]
                histogram[feature_codes[i], 0] += values[i, 0]
        else:
            for j in range(row_starts[f], row_starts[f + 1]):
                i = rows[j]
                b = feature_codes[i]
                for k in range(n_outputs):
                    histogram[b, k] += values[i, k]
        for k in range(n_outputs):
            rest = 0.0
            for b in range(n_bins):
                if b != mode:
                    rest += histogram[b, k]
            histogram[mode, k] = totals[k] - rest


@numba.njit(**_JIT)
def best_stump_split(sums, offsets, total, tolerance):
    """The first split (global bin, gain) whose |gain| is within ``tolerance`` of the largest.

    ``sums`` are per-bin gradient sums; splitting after bin ``b`` of a feature
    gains ``total - 2 * left`` with ``left = -(sums of the feature's bins up to b)``.
    A split after a feature's last bin is no split. Returns bin -1 when no
    feature has two bins.
    """
    n_features = offsets.size - 1
    largest = -1.0
    for f in range(n_features):
        left = 0.0
        for b in range(offsets[f], offsets[f + 1] - 1):
            left -= sums[b]
            largest = max(largest, abs(total - 2.0 * left))
    if largest < 0.0:
        return -1, 0.0
    for f in range(n_features):
        left = 0.0
        for b in range(offsets[f], offsets[f + 1] - 1):
            left -= sums[b]
            gain = total - 2.0 * left
            if abs(gain) >= largest - tolerance:
                return b, gain
    return -1, 0.0
