"""Compiled growing of gradient trees: one call grows a whole tree on the engine's bin codes.

:func:`grow_tree` is the in-memory histogram source of the growth policy
(:mod:`.tree_policy`, which the distributed trees share): it keeps every
node's samples as a contiguous range of one row order (a split partitions its
parent's range stably, so each range stays in ascending row order), builds a
node's gradient/hessian histogram from its own rows only (:mod:`.tree_histograms`),
gets the larger child's histogram by subtraction (parent minus the smaller
child) and scores every split with the Newton gain (:mod:`.split_scan`).
Histograms live in a few reusable slots. Sums add rows in ascending order and
bins in bin order, so a tree does not depend on the thread that grows it, and
trees of one round (one per output) can grow on several threads at once
(:mod:`.tree_batches`). The grower can stop for a large node's histogram and go
on once its caller has built it (``part_rows``).

Histogram layout: a slot is ``(#bins, width)``, bin ``b`` of feature ``f`` at the
global bin ``offsets[f] + b``; ``width`` is K
gradient then K hessian columns, or the int64 columns of packed quantised
gradients (:mod:`~bob_boost.engine.quantised`, one output).
"""
from __future__ import annotations

import numba
import numpy as np

from . import tree_policy
from .categorical import CATEGORY_WORDS, partition_by_set, workspace
from .listed import node_codes
from .prefetch import DISTANCE, PARTITION_SPREAD, prefetch
from .quantised import decode
from .split_scan import best_split, chosen_split, interaction_columns, node_columns
from .tree_histograms import build_histogram, build_paired_histogram
from .tree_team import (SHARED_PARTITION_ROWS, leaves_share, root_counted, shared_histogram, shared_leaves,
                        shared_partition, shared_scan, shares_histogram)
from .unliteral import FALSE, ONE, TRUE, ZERO

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}
_INLINE = dict(_JIT, inline="always")


@numba.njit(**_JIT)
def _partition(order, buffer, start, stop, feature_codes, local_bin, missing_code, nan_left):
    """Split ``order[start:stop]`` stably into the rows going left, then right; returns the boundary.

    Rows with a code above ``local_bin`` go right, and those in the missing
    values' bin ``missing_code`` (-1: none) go right unless ``nan_left``.
    Branch-free: every row is written to both destinations and only the
    counters move by its side (where rows go is data, which a branch would
    mispredict about every other row).
    """
    # one loop for each case, none testing a flag for every row: a million rows took 1.4 ns a row without
    # missing values, against 1.9 in one loop testing both flags
    ahead = (stop - start) * PARTITION_SPREAD < feature_codes.size
    if missing_code >= 0 and ahead:
        middle, moved = _sweep(order, buffer, start, stop, feature_codes, local_bin, missing_code, nan_left,
                               True, True)
    elif missing_code >= 0:
        middle, moved = _sweep(order, buffer, start, stop, feature_codes, local_bin, missing_code, nan_left,
                               True, False)
    elif ahead:
        middle, moved = _sweep(order, buffer, start, stop, feature_codes, local_bin, missing_code, nan_left,
                               False, True)
    else:
        middle, moved = _sweep(order, buffer, start, stop, feature_codes, local_bin, missing_code, nan_left,
                               False, False)
    for q in range(moved):
        order[middle + q] = buffer[q]
    return middle


@numba.njit(**_INLINE)
def _sweep(order, buffer, start, stop, feature_codes, local_bin, missing_code, nan_left, with_missing, ahead):
    """:func:`_partition`'s pass over the rows: the left ones in place, the right ones into ``buffer``; returns
    ``(boundary, rows right)``. ``with_missing`` and ``ahead`` (prefetch the codes) are constants of each copy."""
    middle = start
    moved = 0
    nan_right = not nan_left
    for p in range(start, stop):
        if ahead and p + DISTANCE < stop:
            prefetch(feature_codes, order[p + DISTANCE])
        i = order[p]
        code = feature_codes[i]
        goes_right = code > local_bin
        if with_missing:
            goes_right = nan_right if code == missing_code else goes_right
        buffer[moved] = i
        order[middle] = i  # middle <= p: that entry has been read
        step = np.intp(goes_right)
        moved += step
        middle += 1 - step
    return middle, moved


@numba.njit(**_JIT)
def node_histogram(layout, pairs, joint, mode_bins, offsets, values, order, start, stop, total, sums, counts,
                   scratch):
    """The histogram and sums (into ``total``) of the node whose rows are ``order[start:stop]``.

    Packed quantised values go through :func:`build_paired_histogram` where
    some dense features are paired and the node has rows enough to pay for
    clearing and summing out the joint bins (at least as many row-pair adds
    as joint bins: 256 rows for letter's 8 pairs, where a node of 20 rows
    took 4 us paired and 2 alone), every other histogram through
    :func:`build_histogram` (the same sums; ``scratch`` is its room for quads).
    """
    pairs_count = pairs[2].shape[0]
    if values.shape[1] == 1 and pairs_count > 0 and (stop - start) * pairs_count >= pairs[1][-1]:
        build_paired_histogram(layout, pairs, mode_bins, offsets, values, order, start, stop, total, sums, joint)
    else:
        build_histogram(layout, mode_bins, offsets, values, order, start, stop, total, stop - start, sums, counts,
                        scratch)


@numba.njit(**_JIT)
def grow_tree(stored, mode_bins, layout, pairs, offsets, feature_of_bin, columns, values, real, packing, scales,
              scan_sums, scan_counts, max_depth, max_leaves, min_samples, min_hessian, regularization, tie_tolerance,
              missing, subtraction, leafwise, slot_sums, slot_counts, node_feature, node_bin, node_nan_left,
              node_left, node_right, node_categories, leaf_values, node_records, sample_node, root_ready, root_total,
              part_rows, state, crew):
    """Grow one tree; returns its number of nodes (node 0 is the root; children follow their parent), or -1
    when it stops to have a node's histogram built by the caller (see ``part_rows``).

    Parameters
    ----------
    stored : tuple
        The coded features' storage (:meth:`~bob_boost.engine.codes.CodedFeatures.stored`) and a scratch
        column (:meth:`~bob_boost.engine.codes.CodedFeatures.scratch`), by which rows are split.
    mode_bins : numpy.ndarray
        Each feature's frequent bin (-1: dense).
    layout, pairs : tuple
        The same codes row by row (:meth:`~bob_boost.engine.codes.CodedFeatures.row_layout`), and the
        dense features in pairs for packed histograms (:meth:`~bob_boost.engine.codes.CodedFeatures.pair_layout`).
    offsets, feature_of_bin : numpy.ndarray
        Global bins of feature ``f`` are ``offsets[f]:offsets[f + 1]``, its bins in the histogram slots; each
        global bin's feature.
    columns : tuple
        ``(allowed, key, fraction, tree, monotone, groups, categorical, category_params)``: (#features,) bool,
        whether the tree may split on
        feature ``f`` (a round's column sample); for ``fraction < 1``, each node's sample of those
        (:func:`~bob_boost.engine.split_scan.node_columns` of the round's ``key`` and the tree's index); the
        (#features,) monotone constraints (empty: none; see :func:`best_split`); and the (#groups, #features)
        interaction groups (no rows: none), a node splitting only on the features of the groups that hold
        every feature its ancestors split on; the (#features,) bool categorical features (empty: none) and
        the parameters of their splits (:mod:`~bob_boost.engine.categorical`).
    values : numpy.ndarray
        (#samples, 2K) gradients then hessians, or (#samples, w) packed quantised gradients of one output
        (:func:`~bob_boost.engine.quantised.packing`).
    real : numpy.ndarray
        The (#samples, 2K) gradients and hessians of the leaf values (``values`` itself unless packed).
    packing, scales : numpy.ndarray
        Packed ``values``: the count and hessian field bits and the gradient and hessian scales
        (:func:`~bob_boost.engine.quantised.decode`); float ``values``: zeros and ones.
    scan_sums, scan_counts : numpy.ndarray
        Packed ``values``: (#bins, 2) and (#bins,) space for a decoded histogram.
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
        (#slots, #bins, width) and (#slots, #bins) histogram space (with packed
        ``values``, counts of size 0: the sums count themselves).
    node_feature, node_bin, node_nan_left, node_left, node_right, node_categories, leaf_values : numpy.ndarray
        Node outputs (room for every node the limits allow): split feature (-1 for a leaf), global bin
        (samples with a larger code go right), where NaN goes, children, the (#nodes, CATEGORY_WORDS) bin
        set going left of a categorical split (the feature's first bin is its global bin), and (#nodes, K) leaf values
        ``-G / (H + regularization)`` (0 for inner nodes and empty denominators).
    node_records : numpy.ndarray
        (#nodes, 2) output: each node's cover and split gain (:func:`~bob_boost.engine.tree_policy.node_records`).
    sample_node : numpy.ndarray
        (#samples,) output: each sample's leaf.
    root_ready, root_total : bool, numpy.ndarray
        Whether slot 0 already holds the root's histogram (then ``root_total`` holds its sums).
    part_rows : int
        The histogram of a node of at least this many rows (other than the root) is left to the caller,
        which can build it on several threads: the call returns -1 with the node in ``state``'s
        counters (:func:`requested_node`); the caller fills the node's slot and totals and calls again
        with the same arguments to go on. 0: every histogram is built here.
    state : tuple
        :func:`tree_state`: the growing tree's working arrays and counters, fresh for each tree.
    crew : tuple
        The team that shares out the large nodes' histograms and partitions, and room for histograms in quads
        (:mod:`.tree_team`'s ``crew``, of one share: no team); its helpers serve the context
        :func:`team_context` makes of these arguments.
    """
    width = values.shape[1]
    packed = packing[0] > 0  # a packed count field has at least one bit
    (order, buffer, start, stop, depth, slot, totals, split_bin, split_gain, split_nan_left, free, frontier, chosen,
     split_nodes, bounds, child_values, node_groups, split_sets, counters) = state
    n_root = order.shape[0]  # the root's rows: every sample, or a round's sample of them
    allowed, node_key, node_fraction, tree_index, monotone, groups, categorical, category_params = columns
    node_allowed = crew[7]  # the team's, which its split scans read
    node_allowed[:] = allowed
    grouped = allowed.copy()  # the columns a node's interaction groups allow
    gains = crew[5]
    category_work = workspace(2 if packed else width, allowed.size)
    scan_total = np.zeros(2)
    joint = np.empty(pairs[1][-1], dtype=values.dtype)
    context = team_context(layout, mode_bins, offsets, values, stored, state, slot_sums, slot_counts, crew,
                           node_feature, sample_node, real)
    counted = slot_counts.shape[1] > 0
    scratch = crew[3]
    # counters: the stage to go on from (0: a new tree), the split being given histograms, then the scalars below
    stage, resume = counters[0], counters[1]
    n_free, n_nodes, leaves, n_frontier, n_split = counters[2], counters[3], counters[4], counters[5], counters[6]
    if stage == _NEW:
        n_free = free.size
        node_feature[0] = -1
        stop[0] = n_root
        n_free -= 1
        slot[0] = free[n_free]  # slot 0
        if root_ready:
            totals[0, :] = root_total
        else:
            if counted and root_counted(context, n_root, width):
                shared_histogram(context, ZERO, n_root, slot[0], ZERO, TRUE)
            elif shares_histogram(context, n_root, width, counted):
                shared_histogram(context, ZERO, n_root, slot[0], ZERO, FALSE)
            else:
                node_histogram(layout, pairs, joint, mode_bins, offsets, values, order, np.int64(0), n_root,
                               totals[0], slot_sums[slot[0]], slot_counts[slot[0]], scratch)
        n_nodes = 1
        leaves = 1
        # the nodes whose histograms are new (to be scored; levelwise: the candidates to split)
        n_frontier = 1
        resume = -1
    while True:
        if resume < 0:
            for j in range(n_frontier):
                node = frontier[j]
                if stop[node] - start[node] >= 2 * min_samples:
                    s = slot[node]
                    if groups.shape[0] > 0:
                        interaction_columns(allowed, groups, node_groups[node], grouped)
                        node_allowed[:] = grouped
                    if node_fraction < 1.0:
                        node_columns(grouped, node_key, tree_index, node, node_fraction, node_allowed)
                    if packed:
                        decode(slot_sums[s], packing[0], packing[1], scales, scan_sums, scan_counts)
                        decode(totals[node:node + 1], packing[0], packing[1], scales, scan_total.reshape(1, 2),
                               scan_counts[:1].copy())
                        split_bin[node], split_gain[node], split_nan_left[node] = best_split(
                            scan_sums, scan_counts, mode_bins, offsets, scan_total, stop[node] - start[node],
                            regularization, min_samples, min_hessian, tie_tolerance, missing, gains, node_allowed,
                            monotone, bounds[node, 0], bounds[node, 1], child_values[node], categorical,
                            category_params, split_sets[node], category_work)
                    elif crew[1] > 1 and width == 2 and monotone.size == 0 and categorical.size == 0:
                        top = shared_scan(context, s, node, stop[node] - start[node], regularization, min_samples,
                                          min_hessian, missing)
                        split_bin[node], split_gain[node], split_nan_left[node] = chosen_split(
                            top, slot_sums[s], slot_counts[s], mode_bins, offsets, totals[node],
                            stop[node] - start[node], regularization, min_samples, min_hessian, tie_tolerance,
                            missing, gains, node_allowed, monotone, bounds[node, 0], bounds[node, 1],
                            child_values[node], categorical, category_params, split_sets[node], category_work,
                            crew[6])
                    else:
                        split_bin[node], split_gain[node], split_nan_left[node] = best_split(
                            slot_sums[s], slot_counts[s], mode_bins, offsets, totals[node],
                            stop[node] - start[node], regularization, min_samples, min_hessian, tie_tolerance,
                            missing, gains, node_allowed, monotone, bounds[node, 0], bounds[node, 1],
                            child_values[node], categorical, category_params, split_sets[node], category_work)
                if leafwise and split_bin[node] < 0:
                    n_free = _release(slot, node, free, n_free)
            n_frontier, n_chosen = tree_policy.select(frontier, n_frontier, node_feature, split_bin, split_gain,
                                                      n_nodes, leaves, max_leaves, leafwise, chosen)
            if not leafwise:
                for j in range(n_frontier):
                    if not chosen[j]:
                        n_free = _release(slot, frontier[j], free, n_free)
            if n_chosen == 0:
                break
            n_split = 0
            for j in range(n_frontier):
                if not chosen[j]:
                    continue
                node = frontier[j]
                split_nodes[n_split] = node
                n_split += 1
                f = tree_policy.split(node, n_nodes, feature_of_bin, split_bin, split_nan_left, node_feature,
                                      node_bin, node_nan_left, node_left, node_right, depth)
                tree_policy.bound_children(node, f, monotone, child_values[node], node_left, node_right, bounds)
                tree_policy.group_children(node, f, groups, node_left, node_right, node_groups)
                n_nodes += 2
                leaves += 1
                g = node_bin[node]
                if categorical.size > 0 and categorical[f]:
                    node_categories[node, :] = split_sets[node]
                    middle = partition_by_set(order, buffer, start[node], stop[node],
                                              node_codes(stored, mode_bins, f, order, start[node], stop[node]),
                                              node_categories[node])
                else:
                    missing_code = offsets[f + 1] - offsets[f] - 1 if missing else -1
                    column = node_codes(stored, mode_bins, f, order, start[node], stop[node])
                    if crew[1] > 1 and stop[node] - start[node] >= SHARED_PARTITION_ROWS:
                        middle = shared_partition(context, start[node], stop[node], f, g - offsets[f], missing_code,
                                                  node_nan_left[node])
                    else:
                        middle = _partition(order, buffer, start[node], stop[node], column, g - offsets[f],
                                            missing_code, node_nan_left[node])
                start[node_left[node]], stop[node_left[node]] = start[node], middle
                start[node_right[node]], stop[node_right[node]] = middle, stop[node]
            n_frontier = 0
            j, step = 0, _SMALL
        else:
            j, step = resume, stage
        # the children's histograms: the smaller child's from its rows, its sibling's by subtraction; a step
        # whose histogram is the caller's returns, and the call after it goes on from the next step
        while j < n_split:
            parent = split_nodes[j]
            left, right = node_left[parent], node_right[parent]
            small, large = (left, right) if stop[left] - start[left] <= stop[right] - start[right] else (right, left)
            if step == _SMALL:
                if not tree_policy.children_may_split(depth[left], max_depth, max_leaves, leaves) or (
                        stop[left] - start[left] < 2 * min_samples and stop[right] - start[right] < 2 * min_samples):
                    # children that are never split (at the depth or leaf limit, or too small) need no histograms
                    n_free = _release(slot, parent, free, n_free)
                    j += 1
                    continue
                n_free -= 1
                slot[small] = free[n_free]
                step = _LARGE
                if 0 < part_rows <= stop[small] - start[small]:
                    _save(counters, step, j, small, n_free, n_nodes, leaves, n_frontier, n_split)
                    return -1
                if shares_histogram(context, stop[small] - start[small], width, counted):
                    shared_histogram(context, start[small], stop[small], slot[small], small, FALSE)
                else:
                    node_histogram(layout, pairs, joint, mode_bins, offsets, values, order, start[small],
                                   stop[small], totals[small], slot_sums[slot[small]], slot_counts[slot[small]],
                                   scratch)
            if step == _LARGE:
                slot[large] = slot[parent]
                slot[parent] = -1
                large_sums, large_counts = slot_sums[slot[large]], slot_counts[slot[large]]
                step = _CHILDREN
                if subtraction:
                    for v in range(width):
                        totals[large, v] = totals[parent, v] - totals[small, v]
                    small_sums, small_counts = slot_sums[slot[small]], slot_counts[slot[small]]
                    # flat: one loop the compiler vectorises (with the counts 0.89 against 1.21 ms, 2,000 x 256 bins)
                    large_flat, small_flat = large_sums.reshape(-1), small_sums.reshape(-1)
                    for p in range(large_flat.size):
                        large_flat[p] -= small_flat[p]
                    if not packed:
                        for p in range(large_counts.size):
                            large_counts[p] -= small_counts[p]
                elif 0 < part_rows <= stop[large] - start[large]:
                    _save(counters, step, j, large, n_free, n_nodes, leaves, n_frontier, n_split)
                    return -1
                elif shares_histogram(context, stop[large] - start[large], width, counted):
                    shared_histogram(context, start[large], stop[large], slot[large], large, FALSE)
                else:
                    node_histogram(layout, pairs, joint, mode_bins, offsets, values, order, start[large],
                                   stop[large], totals[large], large_sums, large_counts, scratch)
            frontier[n_frontier] = left
            frontier[n_frontier + 1] = right
            n_frontier += 2
            j += 1
            step = _SMALL
        resume = -1
        if not leafwise and n_frontier == 0:
            break
    # each sample's leaf, set once here rather than at every split on its way, and the leaves' sums
    leaf_totals = crew[4][:n_nodes]
    leaf_totals[:, :] = 0
    if crew[1] > 1 and n_root >= SHARED_PARTITION_ROWS:
        shared_leaves(context, n_nodes)
    else:
        leaves_share(context, ZERO, ONE, n_nodes)
    tree_policy.leaf_values(leaf_totals, node_feature, n_nodes, regularization, bounds, leaf_values)
    tree_policy.node_records(leaf_totals, node_feature, node_left, node_right, split_gain, n_nodes, node_records)
    counters[0] = _DONE
    return n_nodes


#: The stages of :func:`grow_tree`'s counters: a new tree; a split whose smaller child's histogram is ready (its
#: sibling's next); a split whose children's histograms are both ready; a grown tree. numpy scalars, not
#: literals (:mod:`.unliteral`).
_NEW, _LARGE, _CHILDREN, _DONE = (np.int64(stage) for stage in range(4))
_SMALL = _NEW


@numba.njit(**_JIT)
def _save(counters, step, j, node, n_free, n_nodes, leaves, n_frontier, n_split):
    """Keep where :func:`grow_tree` stops: the step to go on with, the split, the requested node, the scalars."""
    counters[0], counters[1], counters[7] = step, j, node
    counters[2], counters[3], counters[4], counters[5], counters[6] = n_free, n_nodes, leaves, n_frontier, n_split


@numba.njit(**_JIT)
def team_context(layout, mode_bins, offsets, values, stored, state, slot_sums, slot_counts, crew, node_feature,
                 sample_node, real):
    """What :func:`grow_tree` shares with its team's helpers (:func:`~bob_boost.engine.tree_team.serve`)."""
    return (layout, mode_bins, offsets, values, stored, state[0], state[1], slot_sums, slot_counts, state[6], crew,
            node_feature, sample_node, real, state[2], state[3])


def row_index_type(samples: int) -> type:
    """The integer type of a tree's row order and buffer over ``samples`` rows: 4 bytes while every index fits."""
    return np.int32 if samples < 2 ** 31 else np.int64


@numba.njit(**_JIT)
def tree_state(order, capacity, slots, width, dtype_like):
    """Fresh working arrays and counters of :func:`grow_tree` for a tree of at most ``capacity`` nodes, ``slots``
    histogram slots and ``width`` histogram columns of ``dtype_like``'s type; the row order (``state[0]``) is
    ``order`` itself (ascending: every row, or a round's sample of them, the root's rows), which the growing
    rearranges."""
    return (order, np.empty_like(order),
            np.zeros(capacity, dtype=np.int64), np.zeros(capacity, dtype=np.int64), np.zeros(capacity, dtype=np.int64),
            np.full(capacity, -1, dtype=np.int64), np.zeros((capacity, width), dtype=dtype_like.dtype),
            np.full(capacity, -1, dtype=np.int64), np.zeros(capacity), np.zeros(capacity, dtype=np.bool_),
            np.arange(slots - 1, -1, -1), np.zeros(capacity, dtype=np.int64), np.zeros(capacity, dtype=np.bool_),
            np.zeros(capacity, dtype=np.int64), _unbounded(capacity), np.zeros((capacity, 2)),
            np.full(capacity, np.iinfo(np.uint64).max, dtype=np.uint64),
            np.zeros((capacity, CATEGORY_WORDS), dtype=np.uint64), np.zeros(8, dtype=np.int64))


@numba.njit(**_JIT)
def _unbounded(capacity):
    """(capacity, 2) node bounds ``[-inf, inf]`` (:func:`~bob_boost.engine.tree_policy.bound_children` narrows
    them under monotone constraints)."""
    bounds = np.empty((capacity, 2))
    bounds[:, 0] = -np.inf
    bounds[:, 1] = np.inf
    return bounds


def requested_node(state: tuple) -> tuple[int, int, int]:
    """The node whose histogram a paused :func:`grow_tree` waits for: ``(node, start, stop)`` (its rows are
    ``order[start:stop]``, ``order`` being ``state[0]``)."""
    node = int(state[-1][7])
    return node, int(state[2][node]), int(state[3][node])


@numba.njit(**_JIT)
def _release(slot, node, free, n_free):
    """Give ``node``'s histogram slot back (if it has one); returns the new number of free slots."""
    if slot[node] >= 0:
        free[n_free] = slot[node]
        n_free += 1
        slot[node] = -1
    return n_free
