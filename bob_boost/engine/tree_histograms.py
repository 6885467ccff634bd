"""Compiled gradient/hessian histograms of gradient-tree nodes.

A node's rows are ``order[start:stop]`` (ascending); its histogram is a slot
``(#bins, width)`` of every feature's bins one after the other, bin ``b`` of feature ``f`` at the global bin
``offsets[f] + b`` (the binning's offsets), ``width`` K gradient then K hessian columns, with
per-bin sample counts beside it. Every bin adds its rows in ascending order, so a
histogram does not depend on how the work was split.

A histogram of quantised gradients (:mod:`~bob_boost.engine.quantised`) holds
int64 sums of rows packed with their hessian and a count of 1, in one column or
a few: its sums carry their own counts, and ``counts`` is empty.
"""
from __future__ import annotations

import numba
import numpy as np

from .bin_quads import add_share, quads_of, uses_quads
from .prefetch import DISTANCE, prefetch
from .unliteral import TRUE, ZERO

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}


@numba.njit(**_JIT)
def node_total(values, order, start, stop, total):
    total[:] = 0
    for p in range(start, stop):
        if p + DISTANCE < stop:
            prefetch(values, order[p + DISTANCE] * values.shape[1])
        i = order[p]
        for v in range(values.shape[1]):
            total[v] += values[i, v]


@numba.njit(**_JIT)
def _accumulate_rows(dense_rows, dense_bases, row_starts, entry_bins, order, start, stop, values, sums, counts,
                     total):
    """Add the rows ``order[start:stop]`` into the histogram, a row at a time, and their sums into ``total``
    (:func:`node_total`'s). One output's float gradients go through :func:`~bob_boost.engine.bin_quads.add_share`.

    Row ``i`` adds to the bins ``dense_bases + dense_rows[i]`` of the dense
    features and to the bins ``entry_bins[row_starts[i]:row_starts[i + 1]]``
    of its entries outside the sparse features' frequent bins. Reading a row's
    codes together sends consecutive updates to different features, and a
    node's cost follows its own rows only.
    """
    width = values.shape[1]
    counted = counts.size > 0
    node_total(values, order, start, stop, total)
    # one output: the sums as a flat array (cheaper addressing in the innermost loop)
    flat = sums.reshape(-1)
    for p in range(start, stop):
        if p + DISTANCE < stop:  # the rows are scattered: ask for a later row's values and codes now
            ahead = order[p + DISTANCE]
            prefetch(values, ahead * width)
            prefetch(dense_rows, ahead * dense_rows.shape[1])
        i = order[p]
        row = dense_rows[i]
        if width == 1:
            packed = values[i, 0]
            for j in range(dense_bases.size):
                flat[dense_bases[j] + np.intp(row[j])] += packed
            for e in range(row_starts[i], row_starts[i + 1]):
                flat[np.intp(entry_bins[e])] += packed
        elif width == 2:
            # packed in two columns: the float path's adds without its count (one loop for both, its count
            # behind a flag, made float histograms 15-25% slower: 12.3 -> 14.4 ms for 300,000 rows)
            low = values[i, 0]
            high = values[i, 1]
            for j in range(dense_bases.size):
                b = dense_bases[j] + np.intp(row[j])
                flat[2 * b] += low
                flat[2 * b + 1] += high
            for e in range(row_starts[i], row_starts[i + 1]):
                b = np.intp(entry_bins[e])
                flat[2 * b] += low
                flat[2 * b + 1] += high
        else:
            row_values = values[i]
            for j in range(dense_bases.size):
                b = dense_bases[j] + row[j]
                target = sums[b]
                for v in range(width):
                    target[v] += row_values[v]
                if counted:
                    counts[b] += 1
            for e in range(row_starts[i], row_starts[i + 1]):
                b = entry_bins[e]
                target = sums[b]
                for v in range(width):
                    target[v] += row_values[v]
                if counted:
                    counts[b] += 1


@numba.njit(**_JIT)
def build_histogram(layout, mode_bins, offsets, values, order, start, stop, total, count, sums, counts, scratch):
    """The histogram of the node whose rows are ``order[start:stop]`` (``count`` rows), and their sums into
    ``total`` (:func:`node_total`'s).

    ``layout`` is :meth:`~bob_boost.engine.codes.CodedFeatures.row_layout` of ``offsets``. A
    sparse feature's frequent bin is recovered as the node's total minus its
    other bins. Every bin adds its rows in ascending order. One output's float
    gradients of a node with rows enough are added in quads (:mod:`.bin_quads`) in ``scratch``
    (:func:`~bob_boost.engine.bin_quads.quad_scratch` of the histogram's bins; empty: never).
    """
    dense_rows, dense_bases, row_starts, entry_bins = layout
    bins = sums.shape[0]
    if values.shape[1] == 2 and counts.size > 0:
        in_quads = uses_quads(stop - start, dense_bases.size, bins, scratch)
        add_share(layout, offsets, values, order, start, stop, ZERO, dense_bases.size, TRUE, in_quads,
                  quads_of(scratch, bins) if in_quads else np.empty((0, 4)), sums, counts, total)
    else:
        sums[:, :] = 0
        counts[:] = 0
        _accumulate_rows(dense_rows, dense_bases, row_starts, entry_bins, order, start, stop, values, sums, counts,
                         total)
    _recover_frequent_bins(mode_bins, offsets, total, count, sums, counts)


@numba.njit(**_JIT)
def build_paired_histogram(layout, pairs, mode_bins, offsets, values, order, start, stop, total, sums, joint):
    """:func:`build_histogram` of packed quantised ``values`` (one int64 column), with the node's sum into ``total``.

    ``pairs`` is :meth:`~bob_boost.engine.codes.CodedFeatures.pair_layout`:
    a row adds once for each pair of dense features, at the pair's joint
    code, into ``joint`` (room for every pair's joint bins), which is then
    summed out into the two features' bins. Integer sums do not depend on
    the order of their terms, so the histogram is :func:`build_histogram`'s
    exactly.
    """
    row_starts, entry_bins = layout[2], layout[3]
    pair_rows, pair_bases, pair_features, pair_bins, single_rows, single_bases = pairs
    flat = sums.reshape(-1)
    flat[:] = 0
    joint[:] = 0
    node = np.int64(0)
    for p in range(start, stop):
        if p + DISTANCE < stop:
            ahead = order[p + DISTANCE]
            prefetch(values, ahead)
            prefetch(pair_rows, ahead * pair_rows.shape[1])
            prefetch(single_rows, ahead * single_rows.shape[1])
        i = order[p]
        packed = values[i, 0]
        node += packed
        codes = pair_rows[i]
        for j in range(codes.size):
            joint[pair_bases[j] + np.intp(codes[j])] += packed
        codes = single_rows[i]
        for j in range(single_bases.size):
            flat[single_bases[j] + np.intp(codes[j])] += packed
        for e in range(row_starts[i], row_starts[i + 1]):
            flat[np.intp(entry_bins[e])] += packed
    total[0] = node
    # the one-column sum-out of paired_root_histograms': sharing one loop over a width cost 1-2 us a node
    for j in range(pair_features.shape[0]):
        first, second = offsets[pair_features[j, 0]], offsets[pair_features[j, 1]]
        code = pair_bases[j]
        for a in range(pair_bins[j, 0]):
            row = np.int64(0)
            for b in range(pair_bins[j, 1]):
                row += joint[code]
                flat[second + b] += joint[code]
                code += 1
            flat[first + a] += row
    _recover_frequent_bins(mode_bins, offsets, total, stop - start, sums, np.empty(0, dtype=np.int32))


@numba.njit(**_JIT)
def layout_counts(layout, mode_bins, offsets, counts):
    """Every row's count in each global bin of ``layout`` (:meth:`~bob_boost.engine.codes.CodedFeatures.row_layout`
    of ``offsets``) into ``counts``: the counts of a histogram of all the rows."""
    dense_rows, dense_bases, entry_bins = layout[0], layout[1], layout[3]
    counts[:] = 0
    for i in range(dense_rows.shape[0]):
        row = dense_rows[i]
        for j in range(dense_bases.size):
            counts[dense_bases[j] + np.intp(row[j])] += 1
    for e in range(entry_bins.size):
        counts[np.intp(entry_bins[e])] += 1
    _recover_frequent_bins(mode_bins, offsets, np.zeros(1), dense_rows.shape[0], np.zeros((counts.size, 1)), counts)


@numba.njit(**_JIT)
def _recover_frequent_bins(mode_bins, offsets, total, count, sums, counts):
    """Set each sparse feature's frequent bin to the node's ``total``/``count`` minus its other bins.

    The frequent bins hold zeros on entry (no row was added to them). Packed sums (empty ``counts``)
    recover their count fields with the rest.
    """
    width = sums.shape[1]
    for f in range(mode_bins.size):
        mode = mode_bins[f]
        if mode < 0:
            continue
        base = offsets[f]
        bins = offsets[f + 1] - base
        if counts.size > 0:
            remaining = count
            for b in range(bins):
                if b != mode:
                    remaining -= counts[base + b]
            counts[base + mode] = remaining
        for v in range(width):
            rest = sums[base + mode, v]  # zero, of the histogram's type (packed sums must stay integers)
            for b in range(bins):
                if b != mode:
                    rest += sums[base + b, v]
            sums[base + mode, v] = total[v] - rest


@numba.njit(**_JIT)
def _add_feature(stored, mode_bins, offsets, f, values, sums, counts):
    """Every row of feature ``f`` (a sparse feature's listed rows) into its bins, in ascending row order;
    ``stored`` is :meth:`~bob_boost.engine.codes.CodedFeatures.stored`."""
    codes, code_rows, listed_starts, listed_rows, listed_codes = stored[0], stored[1], stored[2], stored[3], stored[4]
    width = values.shape[1]
    base = offsets[f]
    if mode_bins[f] < 0:
        feature_codes = codes[code_rows[f]]
        for i in range(feature_codes.size):
            b = base + feature_codes[i]
            target = sums[b]
            row_values = values[i]
            for v in range(width):
                target[v] += row_values[v]
            counts[b] += 1
        return
    for q in range(listed_starts[f], listed_starts[f + 1]):
        b = base + listed_codes[q]
        target = sums[b]
        row_values = values[listed_rows[q]]
        for v in range(width):
            target[v] += row_values[v]
        counts[b] += 1


@numba.njit(**_JIT)
def root_histograms(stored, mode_bins, offsets, values, total, sums, counts):
    """The histogram of every sample (``values`` may hold several trees' columns), a feature at a time.

    A feature's part of a wide histogram stays in cache while its rows (every
    row, or a sparse feature's listed rows outside its frequent bin) are
    added, in ascending order as in :func:`build_histogram`: one pass for
    MNIST's ten roots took a third of the row-by-row pass.
    """
    sums[:, :] = 0
    counts[:] = 0
    for f in range(mode_bins.size):
        _add_feature(stored, mode_bins, offsets, f, values, sums, counts)
    _recover_frequent_bins(mode_bins, offsets, total, values.shape[0], sums, counts)


@numba.njit(**_JIT)
def paired_root_histograms(stored, mode_bins, pairs, offsets, values, total, sums):
    """:func:`root_histograms` of packed quantised ``values`` (int64, one column a tree), a pair of dense
    features a pass where :meth:`~bob_boost.engine.codes.CodedFeatures.pair_layout` pairs them (exact
    integer sums, as :func:`build_paired_histogram`'s)."""
    pair_bases, pair_features, pair_bins = pairs[1], pairs[2], pairs[3]
    width = values.shape[1]
    sums[:, :] = 0
    counts = np.zeros(sums.shape[0], dtype=np.int32)  # unused by packed sums, which count themselves
    joint = np.empty((pair_bases[-1], width), dtype=values.dtype)
    codes, code_rows = stored[0], stored[1]
    paired = np.zeros(mode_bins.size, dtype=np.bool_)
    for j in range(pair_features.shape[0]):
        paired[pair_features[j, 0]] = True
        paired[pair_features[j, 1]] = True
        part = joint[pair_bases[j]:pair_bases[j + 1]]
        part[:, :] = 0
        # the joint code from the two features' own (contiguous) rows of codes
        first_codes, second_codes = codes[code_rows[pair_features[j, 0]]], codes[code_rows[pair_features[j, 1]]]
        width_b = pair_bins[j, 1]
        for i in range(first_codes.size):
            target = part[np.intp(first_codes[i]) * width_b + np.intp(second_codes[i])]
            row_values = values[i]
            for v in range(width):
                target[v] += row_values[v]
        first, second = offsets[pair_features[j, 0]], offsets[pair_features[j, 1]]
        code = 0
        for a in range(pair_bins[j, 0]):
            for b in range(pair_bins[j, 1]):
                for v in range(width):
                    sums[first + a, v] += part[code, v]
                    sums[second + b, v] += part[code, v]
                code += 1
    for f in range(mode_bins.size):
        if not paired[f]:
            _add_feature(stored, mode_bins, offsets, f, values, sums, counts)
    _recover_frequent_bins(mode_bins, offsets, total, values.shape[0], sums, counts)
