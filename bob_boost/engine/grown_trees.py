"""A round's grown trees turned into one tree machine's node arrays, compiled.

The grower leaves each tree in its own row of ``(#trees, #capacity)`` node
arrays (:func:`~bob_boost.engine.tree_kernels.grow_tree`: node 0 is the root,
children follow their parent, bins instead of thresholds, category sets as
bitsets). A machine stores the trees one after the other with thresholds,
global child indices and category values. Done with numpy's small-array calls,
this took a fifth of a small data set's round (1,000 rows, 31 leaves); here it
is one pass over the nodes.
"""
from __future__ import annotations

import numba
import numpy as np

from .categorical import CATEGORY_WORDS

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}


@numba.njit(**_JIT)
def machine_arrays(n_nodes, node_feature, node_bin, node_nan_left, node_left, node_right, node_sets, leaf_values,
                   node_records, columns, outputs, split_thresholds):
    """The machine's arrays of ``n_nodes[t]`` nodes of every tree ``t``, stored one tree after the other.

    ``leaf_values`` is (#trees, #capacity, W): column ``w`` of tree ``t`` is the machine's output
    ``columns[t, w]`` (its other outputs 0). Returns ``(features, thresholds, left, right, values, roots,
    missing_left, cover, gains, bin_sets, depth)``: an inner node's threshold is ``split_thresholds`` at its
    bin (a leaf's 0), a leaf's children -1, ``missing_left`` is where inner nodes send NaN, ``cover`` and
    ``gains`` the nodes' records, ``bin_sets`` their category bitsets, and ``depth`` the longest root-to-leaf
    path of any tree (0 for leaves only).
    """
    trees = n_nodes.size
    total = 0
    for t in range(trees):
        total += n_nodes[t]
    features = np.empty(total, dtype=np.int64)
    thresholds = np.zeros(total)
    left = np.full(total, -1, dtype=np.int64)
    right = np.full(total, -1, dtype=np.int64)
    values = np.zeros((total, outputs))
    roots = np.empty(trees, dtype=np.int64)
    missing_left = np.zeros(total, dtype=np.bool_)
    cover = np.empty(total)
    gains = np.empty(total)
    bin_sets = np.empty((total, CATEGORY_WORDS), dtype=np.uint64)
    node_depth = np.zeros(total, dtype=np.int64)
    depth = 0
    i = 0
    for t in range(trees):
        root = i
        roots[t] = root
        for k in range(n_nodes[t]):
            f = node_feature[t, k]
            features[i] = f
            if f >= 0:
                thresholds[i] = split_thresholds[node_bin[t, k]]
                left[i] = node_left[t, k] + root
                right[i] = node_right[t, k] + root
                missing_left[i] = node_nan_left[t, k]
                # children follow their parent: its depth is known when they come
                node_depth[left[i]] = node_depth[i] + 1
                node_depth[right[i]] = node_depth[i] + 1
            depth = max(depth, node_depth[i])
            for w in range(columns.shape[1]):
                values[i, columns[t, w]] = leaf_values[t, k, w]
            for word in range(CATEGORY_WORDS):
                bin_sets[i, word] = node_sets[t, k, word]
            cover[i] = node_records[t, k, 0]
            gains[i] = node_records[t, k, 1]
            i += 1
    return features, thresholds, left, right, values, roots, missing_left, cover, gains, bin_sets, depth


@numba.njit(**_JIT)
def category_sets(features, node_sets, categorical, slot, sizes, table):
    """The category values of the categorical splits, as :class:`~bob_boost.weak.TreeMachine`'s ``(offsets,
    values)``, from the nodes' (#nodes, CATEGORY_WORDS) bin sets.

    Node ``i`` splits categorical feature ``f = features[i]`` when ``categorical[f]``; its feature's
    categories are ``table[slot[f], :sizes[slot[f]]]``, one bin each (a bin past them, the missing values',
    is where NaN goes, not a category). Returns ``(offsets, values, splits)``: ``splits`` counts the nodes
    that split a categorical feature (0: none).
    """
    n = features.size
    offsets = np.zeros(n + 1, dtype=np.int64)
    splits = 0
    for i in range(n):
        f = features[i]
        count = 0
        if f >= 0 and categorical[f]:
            splits += 1
            for code in range(sizes[slot[f]]):
                count += (node_sets[i, code >> 6] >> np.uint64(code & 63)) & np.uint64(1)
        offsets[i + 1] = offsets[i] + count
    values = np.empty(offsets[n])
    for i in range(n):
        f = features[i]
        if f >= 0 and categorical[f] and offsets[i + 1] > offsets[i]:
            j = offsets[i]
            for code in range(sizes[slot[f]]):
                if (node_sets[i, code >> 6] >> np.uint64(code & 63)) & np.uint64(1):
                    values[j] = table[slot[f], code]
                    j += 1
    return offsets, values, splits
