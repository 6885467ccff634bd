"""Compiled growing of gradient trees: one call grows a whole tree on the engine's bin codes.

:func:`grow_tree` keeps every node's samples as a contiguous range of one
row order (a split partitions its parent's range stably, so each range stays
in ascending row order), builds a node's gradient/hessian histogram from its
own rows only, gets the larger child's histogram by subtraction (parent minus
the smaller child) and scores every split with the Newton gain. Histograms
live in a few reusable slots. Sums add rows in ascending order and bins in bin
order, so a tree does not depend on the thread that grows it, and trees of one
round (one per output) can grow on several threads at once.

Histogram layout: a slot is ``(#features * bins_per_feature, width)``, bin
``b`` of feature ``f`` at ``f * bins_per_feature + b``; ``width`` is K
gradient then K hessian columns.
"""
from __future__ import annotations

import numba
import numpy as np

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}

#: Gains below this fraction of the children's summed scores are rounding noise, not splits.
ROUNDING_GAIN = 1e-10


@numba.njit(**_JIT)
def _newton_score(sums, outputs, regularization):
    """``sum_k G_k^2 / (H_k + lambda)`` of a (2K,) gradient-then-hessian sum."""
    score = 0.0
    for k in range(outputs):
        score += sums[k] * sums[k] / (sums[outputs + k] + regularization)
    return score


@numba.njit(**_JIT)
def _split_gain(node_total, left, node_count, left_count, outputs, regularization, min_samples, min_hessian,
                parent, right):
    """The Newton gain of sending ``left`` (2K sums, ``left_count`` samples) left; -1 if not allowed.

    ``right`` receives the right child's sums.
    """
    right_count = node_count - left_count
    if left_count < min_samples or right_count < min_samples:
        return -1.0
    for v in range(2 * outputs):
        right[v] = node_total[v] - left[v]
    for k in range(outputs, 2 * outputs):
        if left[k] < min_hessian or right[k] < min_hessian:
            return -1.0
    children = _newton_score(left, outputs, regularization) + _newton_score(right, outputs, regularization)
    value = children - parent
    # a gain at the rounding level of the scores (a pure node) is no gain
    if value <= ROUNDING_GAIN * children:
        return -1.0
    return value


@numba.njit(**_JIT)
def _nan_count(counts, base, offsets, f, missing):
    return counts[base + offsets[f + 1] - 1] if missing else 0


@numba.njit(**_JIT)
def _hessian_side(sums, base, first, g, width, outputs, total):
    """Whether the left child of a split after global bin ``g`` has the larger hessian sum (left on a tie).

    The left sums are added as the split scans add them.
    """
    left = np.zeros(width)
    for h in range(first, g + 1):
        for v in range(width):
            left[v] += sums[base + h, v]
    left_hessian = 0.0
    right_hessian = 0.0
    for k in range(outputs, width):
        left_hessian += left[k]
        right_hessian += total[k] - left[k]
    return left_hessian >= right_hessian


@numba.njit(**_JIT)
def _one_bin(mode_bins, counts, n_bins, f, count):
    """Whether sparse feature ``f``'s frequent bin holds all ``count`` samples of the node (no split)."""
    return mode_bins[f] >= 0 and counts[f * n_bins + mode_bins[f]] == count


@numba.njit(**_JIT)
def _first_within(gains, counts, mode_bins, offsets, n_bins, count, missing, floor):
    """The first (bin, side) whose gain is at least ``floor``, as scanned by :func:`best_split`; (-1, 0) if none."""
    last = 2 if missing else 1
    for f in range(offsets.size - 1):
        if _one_bin(mode_bins, counts, n_bins, f, count):
            continue
        base = f * n_bins - offsets[f]
        nan_count = _nan_count(counts, base, offsets, f, missing)
        for g in range(offsets[f], offsets[f + 1] - last):
            if counts[base + g] == 0 and g > offsets[f]:
                continue
            for side in range(2 if nan_count > 0 else 1):
                value = gains[2 * g + side]
                if value >= 0.0 and value >= floor:
                    return g, side
    return -1, 0


@numba.njit(**_JIT)
def best_split(sums, counts, mode_bins, offsets, n_bins, total, count, regularization, min_samples, min_hessian,
               tie_tolerance, missing, gains):
    """A node's best split by the Newton gain ``sum_k G_L^2/(H_L+l) + G_R^2/(H_R+l) - G^2/(H+l)``.

    ``sums``/``counts`` are the node's histogram slot, ``total``/``count`` its
    sums and samples. A split needs ``min_samples`` samples and a hessian sum of
    ``min_hessian`` (every output) on each side, and a gain above
    :data:`ROUNDING_GAIN` times the children's scores. Returns ``(global bin,
    gain, NaN goes left)`` of the first split (feature, then bin order) within
    ``tie_tolerance`` (relative) of the largest gain; bin -1 when none gains.
    ``gains`` is scratch space of two entries per global bin. An empty bin
    other than a feature's first is skipped: its split sends the same samples
    as the bin before it, which comes first; so is a sparse feature (frequent
    bin ``mode_bins[f] >= 0``) whose frequent bin holds every sample.

    With ``missing`` each feature's last bin holds its NaN samples (never a
    split of its own: a split lies between two value bins), and every split of
    a node with NaN samples is scored with them on the left (first) and on the
    right. A node without NaN samples scores each split once and sends NaN to
    the child of larger hessian sum (left on a tie), where unseen values are
    likelier to belong.
    """
    width = sums.shape[1]
    if width == 2:
        top = _scan_single(sums, counts, mode_bins, offsets, n_bins, total, count, regularization, min_samples,
                           min_hessian, missing, gains)
    else:
        top = _scan(sums, counts, mode_bins, offsets, n_bins, total, count, regularization, min_samples, min_hessian,
                    missing, gains)
    if top <= 0:
        return -1, 0.0, False
    g, side = _first_within(gains, counts, mode_bins, offsets, n_bins, count, missing, top - tie_tolerance * top)
    if g < 0:
        return -1, 0.0, False
    f = 0
    while offsets[f + 1] <= g:
        f += 1
    base = f * n_bins - offsets[f]
    if _nan_count(counts, base, offsets, f, missing) > 0:
        return g, gains[2 * g + side], side == 0
    return g, gains[2 * g + side], _hessian_side(sums, base, offsets[f], g, width, width // 2, total)


@numba.njit(**_JIT)
def _scan(sums, counts, mode_bins, offsets, n_bins, total, count, regularization, min_samples, min_hessian, missing,
          gains):
    """Fill ``gains`` with every split's gain (-1: not allowed) and return the largest (0 if none)."""
    width = sums.shape[1]
    outputs = width // 2
    last = 2 if missing else 1
    left = np.empty(width)
    candidate = np.empty(width)
    right = np.empty(width)
    parent = _newton_score(total, outputs, regularization)
    top = 0.0
    for f in range(offsets.size - 1):
        if _one_bin(mode_bins, counts, n_bins, f, count):
            continue
        base = f * n_bins - offsets[f]
        nan_count = _nan_count(counts, base, offsets, f, missing)
        nan_position = base + offsets[f + 1] - 1
        left[:] = 0.0
        left_count = 0
        for g in range(offsets[f], offsets[f + 1] - last):
            p = base + g
            if counts[p] == 0 and g > offsets[f]:
                continue
            for v in range(width):
                left[v] += sums[p, v]
            left_count += counts[p]
            # side 0: NaN samples (if any) left; side 1: right
            for side in range(2 if nan_count > 0 else 1):
                moved = nan_count if side == 0 else 0
                for v in range(width):
                    candidate[v] = left[v] + sums[nan_position, v] if moved > 0 else left[v]
                value = _split_gain(total, candidate, count, left_count + moved, outputs, regularization,
                                    min_samples, min_hessian, parent, right)
                gains[2 * g + side] = value
                top = max(top, value)
    return top


@numba.njit(**_JIT)
def _scan_single(sums, counts, mode_bins, offsets, n_bins, total, count, regularization, min_samples, min_hessian,
                 missing, gains):
    """:func:`_scan` for one output, in scalars (the same operations in the same order, so the same gains)."""
    last = 2 if missing else 1
    gradient, hessian = total[0], total[1]
    parent = 0.0 + gradient * gradient / (hessian + regularization)
    top = 0.0
    for f in range(offsets.size - 1):
        if _one_bin(mode_bins, counts, n_bins, f, count):
            continue
        base = f * n_bins - offsets[f]
        nan_count = _nan_count(counts, base, offsets, f, missing)
        nan_position = base + offsets[f + 1] - 1
        nan_gradient = sums[nan_position, 0] if nan_count > 0 else 0.0
        nan_hessian = sums[nan_position, 1] if nan_count > 0 else 0.0
        left_gradient = 0.0
        left_hessian = 0.0
        left_count = 0
        for g in range(offsets[f], offsets[f + 1] - last):
            p = base + g
            if counts[p] == 0 and g > offsets[f]:
                continue
            left_gradient += sums[p, 0]
            left_hessian += sums[p, 1]
            left_count += counts[p]
            for side in range(2 if nan_count > 0 else 1):
                moved = nan_count if side == 0 else 0
                value = -1.0
                candidate_count = left_count + moved
                if candidate_count >= min_samples and count - candidate_count >= min_samples:
                    gl = left_gradient + nan_gradient if moved > 0 else left_gradient
                    hl = left_hessian + nan_hessian if moved > 0 else left_hessian
                    gr = gradient - gl
                    hr = hessian - hl
                    if hl >= min_hessian and hr >= min_hessian:
                        children = (0.0 + gl * gl / (hl + regularization)) + (0.0 + gr * gr / (hr + regularization))
                        value = children - parent
                        if value <= ROUNDING_GAIN * children:
                            value = -1.0
                gains[2 * g + side] = value
                top = max(top, value)
    return top


@numba.njit(**_JIT)
def _node_total(values, order, start, stop, total):
    total[:] = 0.0
    for p in range(start, stop):
        i = order[p]
        for v in range(values.shape[1]):
            total[v] += values[i, v]


@numba.njit(**_JIT)
def _accumulate_rows(dense_rows, dense_bases, row_starts, entry_bins, order, start, stop, values, sums, counts):
    """Add the rows ``order[start:stop]`` into the histogram, a row at a time.

    Row ``i`` adds to the bins ``dense_bases + dense_rows[i]`` of the dense
    features and to the bins ``entry_bins[row_starts[i]:row_starts[i + 1]]``
    of its entries outside the sparse features' frequent bins. Reading a row's
    codes together sends consecutive updates to different features, and a
    node's cost follows its own rows only.
    """
    width = values.shape[1]
    for p in range(start, stop):
        i = order[p]
        row = dense_rows[i]
        if width == 2:
            gradient = values[i, 0]
            hessian = values[i, 1]
            for j in range(dense_bases.size):
                b = dense_bases[j] + row[j]
                sums[b, 0] += gradient
                sums[b, 1] += hessian
                counts[b] += 1
            for e in range(row_starts[i], row_starts[i + 1]):
                b = entry_bins[e]
                sums[b, 0] += gradient
                sums[b, 1] += hessian
                counts[b] += 1
        else:
            row_values = values[i]
            for j in range(dense_bases.size):
                b = dense_bases[j] + row[j]
                target = sums[b]
                for v in range(width):
                    target[v] += row_values[v]
                counts[b] += 1
            for e in range(row_starts[i], row_starts[i + 1]):
                b = entry_bins[e]
                target = sums[b]
                for v in range(width):
                    target[v] += row_values[v]
                counts[b] += 1


@numba.njit(**_JIT)
def _build_histogram(layout, mode_bins, n_bins, values, order, start, stop, total, count, sums, counts):
    """The histogram of the node whose rows are ``order[start:stop]`` (sums ``total``, ``count`` rows).

    ``layout`` is :meth:`~bob_boost.engine.codes.CodedFeatures.row_layout`. A
    sparse feature's frequent bin is recovered as the node's total minus its
    other bins. Every bin adds its rows in ascending order.
    """
    dense_rows, dense_bases, row_starts, entry_bins = layout
    sums[:, :] = 0.0
    counts[:] = 0
    _accumulate_rows(dense_rows, dense_bases, row_starts, entry_bins, order, start, stop, values, sums, counts)
    _recover_frequent_bins(mode_bins, n_bins, total, count, sums, counts)


@numba.njit(**_JIT)
def _recover_frequent_bins(mode_bins, n_bins, total, count, sums, counts):
    """Set each sparse feature's frequent bin to the node's ``total``/``count`` minus its other bins."""
    width = sums.shape[1]
    for f in range(mode_bins.size):
        mode = mode_bins[f]
        if mode < 0:
            continue
        base = f * n_bins
        remaining = count
        for b in range(n_bins):
            if b != mode:
                remaining -= counts[base + b]
        counts[base + mode] = remaining
        for v in range(width):
            rest = 0.0
            for b in range(n_bins):
                if b != mode:
                    rest += sums[base + b, v]
            sums[base + mode, v] = total[v] - rest


@numba.njit(**_JIT)
def _root_histograms(codes, mode_bins, listed_starts, listed_rows, n_bins, values, total, sums, counts):
    """The histogram of every sample (``values`` may hold several trees' columns), a feature at a time.

    A feature's part of a wide histogram stays in cache while its rows (every
    row, or a sparse feature's listed rows outside its frequent bin) are
    added, in ascending order as in :func:`_build_histogram`: one pass for
    MNIST's ten roots took a third of the row-by-row pass.
    """
    width = values.shape[1]
    sums[:, :] = 0.0
    counts[:] = 0
    for f in range(codes.shape[0]):
        feature_codes = codes[f]
        base = f * n_bins
        dense = mode_bins[f] < 0
        low = 0 if dense else listed_starts[f]
        high = feature_codes.size if dense else listed_starts[f + 1]
        for q in range(low, high):
            i = q if dense else listed_rows[q]
            b = base + feature_codes[i]
            target = sums[b]
            row_values = values[i]
            for v in range(width):
                target[v] += row_values[v]
            counts[b] += 1
    _recover_frequent_bins(mode_bins, n_bins, total, values.shape[0], sums, counts)


@numba.njit(**_JIT)
def _partition(order, buffer, start, stop, sample_node, feature_codes, local_bin, missing_code, nan_left,
               left, right):
    """Split ``order[start:stop]`` stably into the rows going left, then right; returns the boundary."""
    middle = start
    moved = 0
    for p in range(start, stop):
        i = order[p]
        code = feature_codes[i]
        goes_right = (not nan_left) if code == missing_code else code > local_bin
        if goes_right:
            sample_node[i] = right
            buffer[moved] = i
            moved += 1
        else:
            sample_node[i] = left
            order[middle] = i
            middle += 1
    for q in range(moved):
        order[middle + q] = buffer[q]
    return middle


@numba.njit(**_JIT)
def grow_tree(codes, mode_bins, layout, n_bins, offsets, feature_of_bin, values,
              max_depth, max_leaves, min_samples, min_hessian, regularization, tie_tolerance, missing, subtraction,
              leafwise, slot_sums, slot_counts, node_feature, node_bin, node_nan_left, node_left, node_right,
              leaf_values, sample_node, root_ready, root_total):
    """Grow one tree; returns its number of nodes (node 0 is the root; children follow their parent).

    Parameters
    ----------
    codes, mode_bins : numpy.ndarray
        The coded features' (#features, #samples) codes and frequent bins (-1: dense), of
        :class:`~bob_boost.engine.codes.CodedFeatures`.
    layout : tuple
        The same codes row by row (:meth:`~bob_boost.engine.codes.CodedFeatures.row_layout`).
    n_bins : int
        Bins per feature in the histogram slots.
    offsets, feature_of_bin : numpy.ndarray
        Global bins of feature ``f`` are ``offsets[f]:offsets[f + 1]``; each global bin's feature.
    values : numpy.ndarray
        (#samples, 2K) gradients then hessians.
    max_depth, max_leaves : int
        Depth limit (<= 0: none) and leaf limit (<= 0: none).
    min_samples, min_hessian, regularization, tie_tolerance : int or float
        See :func:`best_split`.
    missing : bool
        Whether each feature's last bin holds its missing values.
    subtraction : bool
        Whether the larger child's histogram is its parent's minus its sibling's (else built from its rows).
    leafwise : bool
        Split the leaf of largest gain first, until ``max_leaves`` (else level by level; with
        ``max_leaves``, each level splits its nodes of largest gain first).
    slot_sums, slot_counts : numpy.ndarray
        (#slots, #features * n_bins, 2K) and (#slots, #features * n_bins) histogram space.
    node_feature, node_bin, node_nan_left, node_left, node_right, leaf_values : numpy.ndarray
        Node outputs (room for every node the limits allow): split feature (-1 for a leaf), global bin
        (samples with a larger code go right), where NaN goes, children, and (#nodes, K) leaf values
        ``-G / (H + regularization)`` (0 for inner nodes and empty denominators).
    sample_node : numpy.ndarray
        (#samples,) output: each sample's leaf.
    root_ready, root_total : bool, numpy.ndarray
        Whether slot 0 already holds the root's histogram (then ``root_total`` holds its sums).
    """
    n_samples, width = values.shape
    outputs = width // 2
    capacity = node_feature.size
    order = np.arange(n_samples)
    buffer = np.empty(n_samples, dtype=np.int64)
    gains = np.empty(2 * offsets[-1])
    start = np.zeros(capacity, dtype=np.int64)
    stop = np.zeros(capacity, dtype=np.int64)
    depth = np.zeros(capacity, dtype=np.int64)
    slot = np.full(capacity, -1, dtype=np.int64)
    totals = np.zeros((capacity, width))
    split_bin = np.full(capacity, -1, dtype=np.int64)
    split_gain = np.zeros(capacity)
    split_nan_left = np.zeros(capacity, dtype=np.bool_)
    free = np.arange(slot_sums.shape[0] - 1, -1, -1)
    n_free = free.size
    sample_node[:] = 0
    node_feature[0] = -1
    stop[0] = n_samples
    n_free -= 1
    slot[0] = free[n_free]  # slot 0
    if root_ready:
        totals[0, :] = root_total
    else:
        _node_total(values, order, 0, n_samples, totals[0])
        _build_histogram(layout, mode_bins, n_bins, values, order, 0, n_samples, totals[0], n_samples,
                         slot_sums[slot[0]], slot_counts[slot[0]])
    n_nodes = 1
    leaves = 1
    # the nodes whose histograms are new (to be scored; levelwise: the candidates to split)
    frontier = np.zeros(capacity, dtype=np.int64)
    n_frontier = 1
    chosen = np.zeros(capacity, dtype=np.bool_)
    split_nodes = np.zeros(capacity, dtype=np.int64)
    while True:
        for j in range(n_frontier):
            node = frontier[j]
            if stop[node] - start[node] >= 2 * min_samples:
                s = slot[node]
                split_bin[node], split_gain[node], split_nan_left[node] = best_split(
                    slot_sums[s], slot_counts[s], mode_bins, offsets, n_bins, totals[node], stop[node] - start[node],
                    regularization, min_samples, min_hessian, tie_tolerance, missing, gains)
            if leafwise and split_bin[node] < 0:
                free[n_free] = slot[node]
                n_free += 1
                slot[node] = -1
        n_chosen = 0
        if leafwise:
            if max_leaves > 0 and leaves >= max_leaves:
                break
            # the open leaf of largest gain (the lowest node on a tie)
            pick = -1
            for node in range(n_nodes):
                if node_feature[node] < 0 and split_bin[node] >= 0 and (
                        pick < 0 or split_gain[node] > split_gain[pick]):
                    pick = node
            if pick < 0:
                break
            frontier[0] = pick
            n_frontier = 1
            chosen[0] = True
            n_chosen = 1
        else:
            allowed = n_frontier if max_leaves <= 0 else min(n_frontier, max_leaves - leaves)
            for j in range(n_frontier):
                chosen[j] = split_bin[frontier[j]] >= 0
                n_chosen += chosen[j]
            # over the leaf limit: keep the largest gains (the earlier node on a tie)
            while n_chosen > max(allowed, 0):
                drop = -1
                for j in range(n_frontier):
                    if chosen[j] and (drop < 0 or split_gain[frontier[j]] <= split_gain[frontier[drop]]):
                        drop = j
                chosen[drop] = False
                n_chosen -= 1
            for j in range(n_frontier):
                if not chosen[j] and slot[frontier[j]] >= 0:
                    free[n_free] = slot[frontier[j]]
                    n_free += 1
                    slot[frontier[j]] = -1
            if n_chosen == 0:
                break
        n_split = 0
        for j in range(n_frontier):
            if not chosen[j]:
                continue
            node = frontier[j]
            split_nodes[n_split] = node
            n_split += 1
            g = split_bin[node]
            f = feature_of_bin[g]
            left = n_nodes
            right = n_nodes + 1
            n_nodes += 2
            leaves += 1
            node_feature[node] = f
            node_bin[node] = g
            node_nan_left[node] = split_nan_left[node]
            node_left[node] = left
            node_right[node] = right
            missing_code = offsets[f + 1] - offsets[f] - 1 if missing else -1
            middle = _partition(order, buffer, start[node], stop[node], sample_node, codes[f], g - offsets[f],
                                missing_code, split_nan_left[node], left, right)
            for child, first, last in ((left, start[node], middle), (right, middle, stop[node])):
                node_feature[child] = -1
                split_bin[child] = -1
                start[child] = first
                stop[child] = last
                depth[child] = depth[node] + 1
        # the children's histograms: the smaller child's from its rows, its sibling's by subtraction
        n_frontier = 0
        for j in range(n_split):
            parent = split_nodes[j]
            left, right = node_left[parent], node_right[parent]
            if (max_depth > 0 and depth[left] >= max_depth) or (leafwise and 0 < max_leaves <= leaves) or (
                    stop[left] - start[left] < 2 * min_samples and stop[right] - start[right] < 2 * min_samples):
                # children that are never split (at the depth or leaf limit, or too small) need no histograms
                free[n_free] = slot[parent]
                n_free += 1
                slot[parent] = -1
                continue
            small, large = (left, right) if stop[left] - start[left] <= stop[right] - start[right] else (right, left)
            _node_total(values, order, start[small], stop[small], totals[small])
            n_free -= 1
            slot[small] = free[n_free]
            _build_histogram(layout, mode_bins, n_bins, values, order, start[small], stop[small], totals[small],
                             stop[small] - start[small], slot_sums[slot[small]], slot_counts[slot[small]])
            slot[large] = slot[parent]
            slot[parent] = -1
            large_sums, large_counts = slot_sums[slot[large]], slot_counts[slot[large]]
            if subtraction:
                for v in range(width):
                    totals[large, v] = totals[parent, v] - totals[small, v]
                small_sums, small_counts = slot_sums[slot[small]], slot_counts[slot[small]]
                for p in range(large_counts.size):
                    for v in range(width):
                        large_sums[p, v] -= small_sums[p, v]
                    large_counts[p] -= small_counts[p]
            else:
                _node_total(values, order, start[large], stop[large], totals[large])
                _build_histogram(layout, mode_bins, n_bins, values, order, start[large], stop[large],
                                 totals[large], stop[large] - start[large], large_sums, large_counts)
            frontier[n_frontier] = left
            frontier[n_frontier + 1] = right
            n_frontier += 2
        if not leafwise and n_frontier == 0:
            break
    leaf_values[:n_nodes] = 0.0
    total = np.empty(width)
    for node in range(n_nodes):
        if node_feature[node] < 0:
            _node_total(values, order, start[node], stop[node], total)
            for k in range(outputs):
                denominator = total[outputs + k] + regularization
                if denominator > 0:
                    leaf_values[node, k] = -total[k] / denominator
    return n_nodes


@numba.njit(**_JIT)
def grow_trees(first, last, codes, mode_bins, listed_starts, listed_rows, layout, n_bins, offsets,
               feature_of_bin, values, row_values, max_depth, max_leaves, min_samples, min_hessian, regularization,
               tie_tolerance, missing, subtraction, leafwise, slot_sums, slot_counts, node_feature, node_bin,
               node_nan_left, node_left, node_right, leaf_values, n_nodes, outputs):
    """Grow trees ``first:last`` of a round, one after the other, in the same histogram slots.

    Tree ``t`` fits ``values[t]`` ((#samples, 2K)); ``row_values`` holds the
    batch's values side by side, (#samples, (last - first) * 2K), from which
    one pass makes every root histogram of the batch (``listed_starts`` and
    ``listed_rows``: each sparse feature's rows outside its frequent bin).
    Tree ``t`` writes row ``t`` of the node arrays (see :func:`grow_tree`),
    ``n_nodes[t]``, and ``outputs[t]``: its (#samples, K) leaf values of the
    training samples. Trees are independent, so batches may run on different
    threads at once.
    """
    n_samples, width = values.shape[1], values.shape[2]
    sample_node = np.zeros(n_samples, dtype=np.int64)
    shared_root = last - first > 1
    if shared_root:
        # every tree's root histogram from one pass over the rows (the same sums, in the same order)
        columns = (last - first) * width
        root_sums = np.zeros((slot_sums.shape[1], columns))
        root_counts = np.zeros(slot_counts.shape[1], dtype=slot_counts.dtype)
        root_totals = np.zeros(columns)
        _node_total(row_values, np.arange(n_samples), 0, n_samples, root_totals)
        _root_histograms(codes, mode_bins, listed_starts, listed_rows, n_bins, row_values, root_totals, root_sums,
                         root_counts)
    else:
        root_sums = np.zeros((1, 1))
        root_totals = np.zeros(width)
    for t in range(first, last):
        if shared_root:
            columns = slice((t - first) * width, (t - first + 1) * width)
            slot_sums[0, :, :] = root_sums[:, columns]
            slot_counts[0, :] = root_counts
            root_total = root_totals[columns]
        else:
            root_total = root_totals
        count = grow_tree(codes, mode_bins, layout, n_bins, offsets,
                          feature_of_bin, values[t], max_depth, max_leaves, min_samples, min_hessian, regularization,
                          tie_tolerance, missing, subtraction, leafwise, slot_sums, slot_counts, node_feature[t],
                          node_bin[t], node_nan_left[t], node_left[t], node_right[t], leaf_values[t], sample_node,
                          shared_root, root_total)
        n_nodes[t] = count
        tree_values = leaf_values[t]
        tree_outputs = outputs[t]
        for i in range(sample_node.size):
            tree_outputs[i, :] = tree_values[sample_node[i]]
