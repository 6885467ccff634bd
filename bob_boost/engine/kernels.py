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
def _code(edges, missing_code, value):
    if value != value:  # NaN: its own bin where missing values are handled (else rejected before)
        return missing_code
    return _count_at_most(edges, value)


@numba.njit(**_JIT)
def code_rows(values, thresholds, missing_codes, row_start, row_stop, codes):
    """``codes[f, i] = #(thresholds[f] <= values[i, f])`` for rows ``row_start:row_stop``.

    ``thresholds`` is (#features, P), each row sorted and padded with +inf to
    a power of two P (256 for up to 255 thresholds). NaN gets ``missing_codes[f]``.
    """
    n_features = values.shape[1]
    for i in range(row_start, row_stop):
        row = values[i]
        for f in range(n_features):
            codes[f, i] = _code(thresholds[f], missing_codes[f], np.float64(row[f]))


@numba.njit(**_JIT)
def code_columns(values, thresholds, missing_codes, feature_start, feature_stop, codes):
    """:func:`code_rows` for features ``feature_start:feature_stop`` (the order for column-major input)."""
    n_samples = values.shape[0]
    for f in range(feature_start, feature_stop):
        edges = thresholds[f]
        for i in range(n_samples):
            codes[f, i] = _code(edges, missing_codes[f], np.float64(values[i, f]))


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
def integral_columns(values, row_start, row_stop, integral):
    """Clear ``integral[f]`` when a value of feature ``f`` in rows ``row_start:row_stop`` is not an integer.

    NaN (a missing value, where they are handled) says nothing about the others and is skipped.
    """
    n_features = values.shape[1]
    for i in range(row_start, row_stop):
        row = values[i]
        for f in range(n_features):
            if integral[f] and row[f] == row[f] and row[f] != np.rint(row[f]):
                integral[f] = False


@numba.njit(**_JIT)
def step_rows(values, low, step, top, missing_codes, row_start, row_stop, codes):
    """``codes[f, i] = clip(rint((x / 2 - low / 2) / (step / 2)), 0, top)`` (uniform 8-bit quantisation).

    NaN gets ``missing_codes[f]`` (the feature's missing-value bin, where missing values are handled).
    """
    n_features = values.shape[1]
    for i in range(row_start, row_stop):
        row = values[i]
        for f in range(n_features):
            x = np.float64(row[f])
            if x != x:
                codes[f, i] = missing_codes[f]
                continue
            q = np.rint((x / 2 - low[f] / 2) / (step[f] / 2))
            codes[f, i] = min(max(q, 0.0), top)


@numba.njit(**_JIT)
def count_bins(codes, feature_start, feature_stop, counts):
    """``counts[f, b]``: how many samples of feature ``f`` fall into bin ``b``."""
    n_samples = codes.shape[1]
    for f in range(feature_start, feature_stop):
        row = counts[f]
        for i in range(n_samples):
            row[codes[f, i]] += 1


@numba.njit(**_JIT)
def kept_entries(row_starts, entry_bins, feature_of_bin, allowed, starts, kept):
    """The compressed rows of ``entry_bins`` (global bins, of features ``feature_of_bin[bin]``) of the ``allowed``
    features only, in one pass: their bins into ``kept``, each row's start into ``starts``; returns their count."""
    position = 0
    for i in range(row_starts.size - 1):
        starts[i] = position
        for e in range(row_starts[i], row_starts[i + 1]):
            if allowed[feature_of_bin[entry_bins[e]]]:
                kept[position] = entry_bins[e]
                position += 1
    starts[row_starts.size - 1] = position
    return position


@numba.njit(**_JIT)
def entries_by_row(rows, features, codes, offsets, row_starts, out_bins):
    """Place the entries (``rows[k]``, ``features[k]``, ``codes[k]``), given feature by feature, row by row as
    global histogram bins ``offsets[features[k]] + codes[k]``: entry ``k`` goes to the next free place of its
    row's range ``row_starts[r]:row_starts[r + 1]``, so each row keeps its entries in the order given (a stable
    counting sort)."""
    position = row_starts[:-1].copy()
    for k in range(rows.size):
        r = rows[k]
        out_bins[position[r]] = offsets[features[k]] + codes[k]
        position[r] += 1


@numba.njit(**_JIT)
def select_above(codes, bin_index, missing_code, missing_above, high, low, out):
    """``out[i] = high if codes[i] > bin_index else low``; the missing bin goes by ``missing_above``."""
    for i in range(codes.size):
        if codes[i] == missing_code:
            out[i] = high if missing_above else low
        else:
            out[i] = high if codes[i] > bin_index else low


@numba.njit(**_JIT)
def histograms(codes, code_rows, listed_codes, values, mode_bins, list_bounds, rows, offsets, row_start, row_stop,
               block, feature_start, feature_stop, out):
    """``out[offsets[f] + b, k] += values[i, k]`` over rows ``row_start:row_stop`` (row block ``block``).

    ``out`` is the block's own (#bins, #outputs) array, zero on entry. Dense
    features (``mode_bins[f] < 0``, codes ``codes[code_rows[f]]``) visit every row of the block in order;
    sparse ones visit their listed rows ``rows[list_bounds[f, block]:list_bounds[f, block + 1]]``
    in order (codes ``listed_codes`` alongside) and leave their frequent bin for :func:`recover_frequent_bins`.
    """
    n_outputs = values.shape[1]
    for f in range(feature_start, feature_stop):
        histogram = out[offsets[f]:offsets[f + 1]]
        if mode_bins[f] < 0:
            feature_codes = codes[code_rows[f]]
            if n_outputs == 1:
                for i in range(row_start, row_stop):
                    histogram[feature_codes[i], 0] += values[i, 0]
            else:
                for i in range(row_start, row_stop):
                    b = feature_codes[i]
                    for k in range(n_outputs):
                        histogram[b, k] += values[i, k]
            continue
        if n_outputs == 1:
            for j in range(list_bounds[f, block], list_bounds[f, block + 1]):
                histogram[listed_codes[j], 0] += values[rows[j], 0]
        else:
            for j in range(list_bounds[f, block], list_bounds[f, block + 1]):
                i = rows[j]
                b = listed_codes[j]
                for k in range(n_outputs):
                    histogram[b, k] += values[i, k]


@numba.njit(**_JIT)
def recover_frequent_bins(out, offsets, mode_bins, totals):
    """Set every sparse feature's frequent bin to ``totals`` minus the feature's other bins."""
    for f in range(mode_bins.size):
        mode = mode_bins[f]
        if mode < 0:
            continue
        histogram = out[offsets[f]:offsets[f + 1]]
        for k in range(out.shape[1]):
            rest = 0.0
            for b in range(histogram.shape[0]):
                if b != mode:
                    rest += histogram[b, k]
            histogram[mode, k] = totals[k] - rest


@numba.njit(**_JIT)
def best_stump_split(sums, offsets, total, tolerance, missing, allowed):
    """The first split (global bin, gain, NaN above) whose |gain| is within ``tolerance`` of the largest, on
    the features ``f`` with ``allowed[f]``.

    ``sums`` are per-bin gradient sums; splitting after bin ``b`` of a feature
    gains ``total - 2 * left`` with ``left = -(sums of the feature's bins up to b)``.
    A split after a feature's last value bin is no split. With ``missing``
    each feature's last bin holds its NaN samples, and every split is scored
    with them below (first) and above the threshold. Returns bin -1 when no
    feature has two value bins.
    """
    n_features = offsets.size - 1
    last = 2 if missing else 1
    largest = -1.0
    for scan in range(2):
        for f in range(n_features):
            if not allowed[f]:
                continue
            below_missing = -sums[offsets[f + 1] - 1] if missing else 0.0
            left = 0.0
            for b in range(offsets[f], offsets[f + 1] - last):
                left -= sums[b]
                for side in range(2 if missing else 1):
                    gain = total - 2.0 * (left + below_missing) if side == 0 and missing else total - 2.0 * left
                    if scan == 0:
                        largest = max(largest, abs(gain))
                    elif abs(gain) >= largest - tolerance:
                        return b, gain, side == 1
        if largest < 0.0:
            break
    return -1, 0.0, False


@numba.njit(**_JIT)
def recover_mode_bin(sums, counts, f, mode, totals, node_counts):
    """Set feature ``f``'s frequent bin of every node to the node's totals minus its other bins.

    ``sums`` is (#nodes, #features, #bins, width), ``counts`` (#nodes, #features, #bins).
    """
    n_nodes, _, n_bins, width = sums.shape
    for node in range(n_nodes):
        remaining = node_counts[node]
        for b in range(n_bins):
            if b != mode:
                remaining -= counts[node, f, b]
        counts[node, f, mode] = remaining
        for v in range(width):
            rest = 0.0
            for b in range(n_bins):
                if b != mode:
                    rest += sums[node, f, b, v]
            sums[node, f, mode, v] = totals[node, v] - rest


@numba.njit(**_JIT)
def node_histograms(codes, sample_node, labels, weights, totals, node_counts, mode_bins, row_starts, rows,
                    features, block_start, block_stop, sums, counts):
    """Per-node class histograms of features ``features[block_start:block_stop]`` in one pass per feature.

    ``sample_node[i]`` is the node (0 .. #nodes-1) of sample ``i``, or -1 for
    samples outside the nodes being split. ``sums[node, f, b, label] +=
    weights[i]`` and ``counts[node, f, b] += 1`` over the samples, in row
    order; a sparse feature's frequent bin is the node's ``totals`` /
    ``node_counts`` minus its other bins. ``sums`` and ``counts`` start at 0.
    """
    n_samples = codes.shape[1]
    for j in range(block_start, block_stop):
        f = features[j]
        feature_codes = codes[f]
        mode = mode_bins[f]
        if mode < 0:
            for i in range(n_samples):
                node = sample_node[i]
                if node >= 0:
                    b = feature_codes[i]
                    sums[node, f, b, labels[i]] += weights[i]
                    counts[node, f, b] += 1
            continue
        for position in range(row_starts[f], row_starts[f + 1]):
            i = rows[position]
            node = sample_node[i]
            if node >= 0:
                b = feature_codes[i]
                sums[node, f, b, labels[i]] += weights[i]
                counts[node, f, b] += 1
        recover_mode_bin(sums, counts, f, mode, totals, node_counts)


@numba.njit(**_JIT)
def gini_term(values):
    """``sum_j v_j^2 / sum_j v_j`` (0 for an empty set)."""
    total = 0.0
    squares = 0.0
    for v in values:
        total += v
        squares += v * v
    return squares / total if total > 0 else 0.0


@numba.njit(**_JIT)
def best_gini_splits(sums, counts, positions, offsets, features, totals, node_counts, tie_tolerance, missing,
                     bin_weights, node_weights, min_weight, best, score, nan_left):
    """Each node's best split by the weighted Gini criterion, over the bins of ``features``.

    ``sums[node, positions[g], c]`` and ``counts[node, positions[g]]`` hold the
    class sums and sample count of global bin ``g`` (feature ``f`` owns bins
    ``offsets[f]:offsets[f + 1]``). A split after an occupied bin with samples
    on both sides scores ``gini(left) + gini(right)``; ``best[node]`` is the
    first split, in feature then bin order, within ``tie_tolerance`` (relative)
    of the node's highest score, or -1 without a valid split; ``score[node]``
    is that split's score.

    With ``missing`` each feature's last bin holds its NaN samples: a split
    lies between two occupied value bins, and where the node has NaN samples
    it is scored with them on the left (first) and on the right;
    ``nan_left[node]`` says where they go. A node without NaN samples sends
    NaN to the child with more samples (left on a tie).

    With ``min_weight > 0`` a split is valid only if each child holds at
    least ``min_weight`` of sample weight, from ``bin_weights[node,
    positions[g]]`` (each bin's weight) and ``node_weights[node]``; with 0
    those two are not read.
    """
    n_nodes, _, n_classes = sums.shape
    left = np.empty(n_classes)
    candidate = np.empty(n_classes)
    right = np.empty(n_classes)
    nan_sums = np.zeros(n_classes)
    for node in range(n_nodes):
        top = -np.inf
        best[node] = -1
        nan_left[node] = False
        for scan in range(2):
            for j in range(features.size):
                f = features[j]
                left[:] = 0.0
                left_count = 0
                left_weight = 0.0
                nan_count = 0
                nan_weight = 0.0
                stop = offsets[f + 1]
                if missing:
                    stop -= 1
                    nan_count = counts[node, positions[stop]]
                    for c in range(n_classes):
                        nan_sums[c] = sums[node, positions[stop], c]
                    if min_weight > 0.0:
                        nan_weight = bin_weights[node, positions[stop]]
                value_count = node_counts[node] - nan_count
                for g in range(offsets[f], stop):
                    p = positions[g]
                    for c in range(n_classes):
                        left[c] += sums[node, p, c]
                    left_count += counts[node, p]
                    if min_weight > 0.0:
                        left_weight += bin_weights[node, p]
                    if counts[node, p] == 0 or left_count == 0 or left_count >= value_count:
                        continue
                    # side 0: NaN samples (if any) left; side 1: right
                    for side in range(2 if nan_count > 0 else 1):
                        moved = nan_count > 0 and side == 0
                        if min_weight > 0.0:
                            child = left_weight + nan_weight if moved else left_weight
                            if child < min_weight or node_weights[node] - child < min_weight:
                                continue
                        for c in range(n_classes):
                            candidate[c] = left[c] + nan_sums[c] if moved else left[c]
                            right[c] = totals[node, c] - candidate[c]
                        value = gini_term(candidate) + gini_term(right)
                        if scan == 0:
                            top = max(top, value)
                        elif value >= top - tie_tolerance * abs(top):
                            best[node] = g
                            score[node] = value
                            if nan_count > 0:
                                nan_left[node] = moved
                            else:
                                nan_left[node] = 2 * left_count >= node_counts[node]
                            break
                    if scan == 1 and best[node] >= 0:
                        break
                if scan == 1 and best[node] >= 0:
                    break
            if top == -np.inf:
                break
