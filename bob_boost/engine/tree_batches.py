"""A round's gradient trees grown one after the other in the same histogram slots, as a batch for one thread.

:class:`~bob_boost.TreeTrainer` gives each of its threads a batch of a round's trees (one per output):
:func:`grow_trees` (float gradients) or :func:`grow_quantised_trees`; a batch of several trees makes its
root histograms in one pass over the rows, then grows each tree with
:func:`~bob_boost.engine.tree_kernels.grow_tree`. A round's lone tree grows through the trainer instead,
which builds its large histograms on every thread.
"""
from __future__ import annotations

import numba
import numpy as np

from .bin_quads import quad_scratch
from .categorical import has_category
from .listed import code_at
from .quantised import quantise
from .tree_histograms import node_total, paired_root_histograms, root_histograms
from .tree_kernels import grow_tree, tree_state
from .tree_team import crew_of
from .unliteral import ONE, ZERO

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}


@numba.njit(**_JIT)
def _tree_values(gradient, hessian, column, leaf_width, values):
    """Columns ``column:column + leaf_width`` of ``gradient`` then of ``hessian``, side by side in ``values``."""
    for i in range(gradient.shape[0]):
        for k in range(leaf_width):
            values[i, k] = gradient[i, column + k]
            values[i, leaf_width + k] = hessian[i, column + k]


@numba.njit(**_JIT)
def leaf_outputs(tree_values, sample_node, column, leaf_width, outputs, rows):
    """The leaf values of the training samples ``rows`` (those the tree grew on) into columns
    ``column:column + leaf_width`` of ``outputs``."""
    for i in rows:
        _leaf_output(tree_values, sample_node, column, leaf_width, outputs, i)


@numba.njit(**_JIT)
def leaf_outputs_between(tree_values, sample_node, column, leaf_width, outputs, start, stop):
    """:func:`leaf_outputs` of the samples ``start .. stop - 1`` (a tree grown on every sample)."""
    for i in range(start, stop):
        _leaf_output(tree_values, sample_node, column, leaf_width, outputs, i)


@numba.njit(**dict(_JIT, inline="always"))
def _leaf_output(tree_values, sample_node, column, leaf_width, outputs, i):
    # inlined, and indexed rather than through a view of the leaf's row: a million rows took 1.9 ms, 5.5 as a call
    node = sample_node[i]
    for k in range(leaf_width):
        outputs[i, column + k] = tree_values[node, k]


@numba.njit(**_JIT)
def routed_outputs(stored, mode_bins, offsets, missing, categorical, node_feature, node_bin, node_nan_left, node_left,
                   node_right, node_categories, leaf_values, leaf_width, dropped, outputs):
    """The leaf values of the samples ``dropped`` (those a sampled round's trees did not grow on), each routed
    from every tree's root by its codes as the grower splits rows (a categorical feature's, ``categorical[f]``,
    by its node's set), into the trees' columns of ``outputs``; ``stored`` is
    :meth:`~bob_boost.engine.codes.CodedFeatures.stored`."""
    for q in range(dropped.size):
        i = dropped[q]
        for t in range(node_feature.shape[0]):
            node = 0
            while node_feature[t, node] >= 0:
                f = node_feature[t, node]
                code = code_at(stored, mode_bins, f, i)
                if categorical.size > 0 and categorical[f]:
                    right = not has_category(node_categories[t, node], code)
                else:
                    right = code > node_bin[t, node] - offsets[f]
                    if missing and code == offsets[f + 1] - offsets[f] - 1:
                        right = not node_nan_left[t, node]
                node = node_right[t, node] if right else node_left[t, node]
            for k in range(leaf_width):
                outputs[i, t * leaf_width + k] = leaf_values[t, node, k]


@numba.njit(**_JIT)
def grow_trees(first, last, stored, mode_bins, layout, pairs, offsets,
               feature_of_bin, columns, rows, gradient, hessian, leaf_width, max_depth, max_leaves, min_samples,
               min_hessian, regularization, tie_tolerance, missing, subtraction, leafwise, slot_sums, slot_counts,
               node_feature, node_bin, node_nan_left, node_left, node_right, node_categories, leaf_values, node_records,
               n_nodes, outputs):
    """Grow trees ``first:last`` of a round, one after the other, in the same histogram slots.

    Tree ``t`` fits columns ``t * leaf_width:(t + 1) * leaf_width`` of the
    (#samples, #outputs) ``gradient`` and ``hessian`` (every column for one
    shared tree, one column for a tree per output) and grows on a contiguous
    copy of them, gradients then hessians (see :func:`grow_tree`). A batch of
    several (one-output) trees first copies its columns side by side, from
    which one pass over the rows makes every root histogram of the batch
    (``stored``: the batch's :meth:`~bob_boost.engine.codes.CodedFeatures.splitting`). The trees grow on
    the samples ``rows`` (ascending:
    all, or a round's sample, whose trees build their roots one by one).
    Tree ``t`` writes row ``t`` of the node arrays (its nodes' cover and gain into
    ``node_records``), ``n_nodes[t]``, and its
    leaf values of the samples ``rows`` into its columns of ``outputs``. Trees are independent, so batches may run on
    different threads at once (a round's lone tree grows through
    :class:`~bob_boost.TreeTrainer`, which builds its large histograms in parts).
    """
    n_samples = gradient.shape[0]
    trees = last - first
    width = 2 * leaf_width
    sample_node = np.zeros(n_samples, dtype=np.int64)
    # the shared pass reads every row: with a sample of the rows, each tree builds its root from them
    shared_root = trees > 1 and rows.size == n_samples
    if shared_root:
        # the batch's gradients, then its hessians, row by row: every root histogram from one pass
        batch = np.empty((n_samples, 2 * trees))
        for i in range(n_samples):
            gradients, hessians, row = gradient[i], hessian[i], batch[i]
            for j in range(trees):
                row[j] = gradients[first + j]
                row[trees + j] = hessians[first + j]
        root_sums = np.zeros((slot_sums.shape[1], 2 * trees))
        root_counts = np.zeros(slot_counts.shape[1], dtype=slot_counts.dtype)
        root_totals = np.zeros(2 * trees)
        node_total(batch, np.arange(n_samples), np.int64(0), n_samples, root_totals)
        root_histograms(stored, mode_bins, offsets, batch, root_totals, root_sums, root_counts)
    else:
        root_sums = np.zeros((1, 1))
        root_totals = np.zeros(width)
    values = np.empty((n_samples, width))
    no_packing = np.zeros(2, dtype=np.int64)
    no_scales = np.ones(2)
    no_scan = np.empty((0, 2))
    no_scan_counts = np.empty(0, dtype=np.int32)
    # one thread a batch; one output's histograms may be added in quads (:mod:`.bin_quads`)
    crew = crew_of(ONE, quad_scratch(offsets[-1]) if width == 2 and layout[1].size > 0 else np.empty(0),
                   node_feature.shape[1], width, offsets[-1], offsets.size - 1,
                   np.empty(0, dtype=slot_counts.dtype))
    for t in range(first, last):
        column = t * leaf_width
        _tree_values(gradient, hessian, column, leaf_width, values)
        if shared_root:
            j = t - first
            slot_sums[0, :, 0] = root_sums[:, j]
            slot_sums[0, :, 1] = root_sums[:, trees + j]
            slot_counts[0, :] = root_counts
            root_total = np.array([root_totals[j], root_totals[trees + j]])
        else:
            root_total = root_totals
        n_nodes[t] = grow_tree(stored, mode_bins, layout, pairs, offsets, feature_of_bin,
                               (columns[0], columns[1], columns[2], t, columns[4], columns[5], columns[6],
                                columns[7]), values,
                               values, no_packing, no_scales, no_scan, no_scan_counts, max_depth, max_leaves,
                               min_samples, min_hessian, regularization, tie_tolerance, missing, subtraction, leafwise,
                               slot_sums, slot_counts, node_feature[t], node_bin[t], node_nan_left[t], node_left[t],
                               node_right[t], node_categories[t], leaf_values[t], node_records[t], sample_node,
                               shared_root,
                               root_total, ZERO,
                               tree_state(rows.copy(), node_feature.shape[1], slot_sums.shape[0], width, values), crew)
        leaf_outputs(leaf_values[t], sample_node, column, leaf_width, outputs, rows)


@numba.njit(**_JIT)
def grow_quantised_trees(first, last, stored, mode_bins, layout, pairs, offsets,
                         feature_of_bin, columns, rows, gradient, hessian, levels, seed, packing, max_depth, max_leaves,
                         min_samples, min_hessian, regularization, tie_tolerance, missing, subtraction, leafwise,
                         slot_sums, node_feature, node_bin, node_nan_left, node_left, node_right, node_categories,
                         leaf_values, node_records, n_nodes, outputs):
    """:func:`grow_trees` of one-output trees on gradients quantised to ``levels`` (:mod:`.quantised`).

    Each tree's column is quantised and packed into the ``w`` int64 columns of
    the slots ``(#slots, #bins, w)``, with the ``packing`` field
    bits (:func:`~bob_boost.engine.quantised.packing`; ``seed`` keys the
    rounding); a batch of several trees makes its root histograms in one pass
    over the packed columns side by side. Each node's histogram is decoded for
    the split scan, and the leaves hold the real gradients' Newton values.
    """
    n_samples = gradient.shape[0]
    trees = last - first
    histogram_bins, w = slot_sums.shape[1], slot_sums.shape[2]
    sample_node = np.zeros(n_samples, dtype=np.int64)
    scales = np.ones((trees, 2))
    batch = np.empty((n_samples, w * trees), dtype=np.int64)
    packed = np.empty((n_samples, w), dtype=np.int64)
    reals = np.empty((trees, n_samples, 2))
    quantise(gradient, hessian, first, last, levels, seed, packing[0], packing[1], batch, reals, scales)
    shared_root = trees > 1 and rows.size == n_samples
    root_sums = np.zeros((histogram_bins, w * trees), dtype=np.int64)
    root_totals = np.zeros(w * trees, dtype=np.int64)
    if shared_root:
        node_total(batch, np.arange(n_samples), np.int64(0), n_samples, root_totals)
        paired_root_histograms(stored, mode_bins, pairs, offsets, batch, root_totals, root_sums)
    scan_sums = np.empty((histogram_bins, 2))
    scan_counts = np.empty(histogram_bins, dtype=np.int32)
    no_counts = np.empty((slot_sums.shape[0], 0), dtype=np.int32)
    # one thread a batch; packed sums: never in quads
    crew = crew_of(ONE, np.empty(0), node_feature.shape[1], np.int64(2), offsets[-1], offsets.size - 1,
                   np.empty(0, dtype=np.int32))
    for t in range(first, last):
        j = t - first
        packed[:, :] = batch[:, w * j:w * (j + 1)]
        if shared_root:
            slot_sums[0, :, :] = root_sums[:, w * j:w * (j + 1)]
        n_nodes[t] = grow_tree(stored, mode_bins, layout, pairs, offsets, feature_of_bin,
                               (columns[0], columns[1], columns[2], t, columns[4], columns[5], columns[6],
                                columns[7]), packed,
                               reals[j], packing, scales[j], scan_sums, scan_counts, max_depth, max_leaves, min_samples,
                               min_hessian, regularization, tie_tolerance, missing, subtraction, leafwise, slot_sums,
                               no_counts, node_feature[t], node_bin[t], node_nan_left[t], node_left[t], node_right[t],
                               node_categories[t], leaf_values[t], node_records[t], sample_node, shared_root,
                               root_totals[w * j:w * (j + 1)].copy(), ZERO,
                               tree_state(rows.copy(), node_feature.shape[1], slot_sums.shape[0], w, packed), crew)
        leaf_outputs(leaf_values[t], sample_node, t, ONE, outputs, rows)
