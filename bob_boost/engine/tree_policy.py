"""The growth policy of gradient trees: which node splits next, and which new nodes need histograms.

The same compiled functions decide the growth of a tree in memory (inside
:func:`~bob_boost.engine.tree_kernels.grow_tree`, which gets node histograms
from the training rows) and on row partitions
(``bob_boost.weak_trainers.partitioned_trees``, which gets them summed over the
partitions, in memory or on a cluster): a tree's shape depends only on the candidates its
histograms give, never on where the rows are.

A tree under growth is a set of node arrays with room for every node the
limits allow: ``node_feature`` (-1 for a leaf), ``node_bin`` (global bin of the
split: rows with a larger code go right), ``node_nan_left``, ``node_left``,
``node_right``, ``depth``, and each open leaf's best split candidate
``split_bin`` (-1: none), ``split_gain``, ``split_nan_left``, and the bin sets
of categorical splits, ``split_sets`` and ``node_sets``. Node 0 is the
root; the children of a split are the next two free nodes, left then right.
"""
from __future__ import annotations

import numba
import numpy as np

from .categorical import CATEGORY_WORDS

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}


@numba.njit(**_JIT)
def select(frontier, n_frontier, node_feature, split_bin, split_gain, n_nodes, leaves, max_leaves, leafwise, chosen):
    """The nodes to split next: ``chosen[j]`` marks ``frontier[j]``; returns ``(n_frontier, n_chosen)``.

    Leaf-wise, the frontier becomes the one open leaf of largest gain (the
    lowest node on a tie), none at ``max_leaves``. Level-wise, every frontier
    node with a candidate splits, and over the leaf limit those of largest gain
    (the earlier node on a tie). ``max_leaves`` <= 0: no limit.
    """
    if leafwise:
        if max_leaves > 0 and leaves >= max_leaves:
            return 0, 0
        pick = -1
        for node in range(n_nodes):
            if node_feature[node] < 0 and split_bin[node] >= 0 and (pick < 0 or split_gain[node] > split_gain[pick]):
                pick = node
        if pick < 0:
            return 0, 0
        frontier[0] = pick
        chosen[0] = True
        return 1, 1
    n_chosen = 0
    allowed = n_frontier if max_leaves <= 0 else min(n_frontier, max_leaves - leaves)
    for j in range(n_frontier):
        chosen[j] = split_bin[frontier[j]] >= 0
        n_chosen += chosen[j]
    while n_chosen > max(allowed, 0):
        drop = -1
        for j in range(n_frontier):
            if chosen[j] and (drop < 0 or split_gain[frontier[j]] <= split_gain[frontier[drop]]):
                drop = j
        chosen[drop] = False
        n_chosen -= 1
    return n_frontier, n_chosen


@numba.njit(**_JIT)
def split(node, n_nodes, feature_of_bin, split_bin, split_nan_left, node_feature, node_bin, node_nan_left, node_left,
          node_right, depth):
    """Split ``node`` by its candidate into the new leaves ``n_nodes`` and ``n_nodes + 1``; returns its feature."""
    g = split_bin[node]
    f = feature_of_bin[g]
    node_feature[node] = f
    node_bin[node] = g
    node_nan_left[node] = split_nan_left[node]
    node_left[node] = n_nodes
    node_right[node] = n_nodes + 1
    for child in (n_nodes, n_nodes + 1):
        node_feature[child] = -1
        split_bin[child] = -1
        depth[child] = depth[node] + 1
    return f


@numba.njit(**_JIT)
def children_may_split(child_depth, max_depth, max_leaves, leaves):
    """Whether new children at ``child_depth`` may ever be split (and so need histograms): below the depth
    limit and the tree under its leaf limit (<= 0: none)."""
    return not ((max_depth > 0 and child_depth >= max_depth) or (0 < max_leaves <= leaves))


@numba.njit(**_JIT)
def leaf_values(totals, node_feature, n_nodes, regularization, bounds, values):
    """Every leaf's Newton values ``-G / (H + regularization)`` from its (2K,) gradient then hessian sums in
    ``totals``, clipped to its ``bounds`` (#nodes, 2) ``[lower, upper]`` (infinite without monotone
    constraints), into ``values`` (#nodes, K); 0 for inner nodes and empty denominators."""
    outputs = values.shape[1]
    for node in range(n_nodes):
        for k in range(outputs):
            values[node, k] = 0.0
            if node_feature[node] < 0:
                denominator = totals[node, outputs + k] + regularization
                if denominator > 0:
                    values[node, k] = min(max(-totals[node, k] / denominator, bounds[node, 0]), bounds[node, 1])


@numba.njit(**_JIT)
def node_records(totals, node_feature, node_left, node_right, split_gain, n_nodes, records):
    """Every node's training record into ``records`` (#nodes, 2): its cover, the hessian sum of its rows over
    the outputs (a leaf's from its (2K,) gradient then hessian sums in ``totals``, an inner node's its
    children's sum, so that covers add up exactly), and for an inner node the gain of its split
    (``split_gain``, the split scan's ``sum G^2 / (H + lambda)`` of the children minus the parent's; 0 for
    leaves)."""
    outputs = totals.shape[1] // 2
    for node in range(n_nodes - 1, -1, -1):  # children follow their parents
        if node_feature[node] < 0:
            cover = 0.0
            for k in range(outputs):
                cover += totals[node, outputs + k]
            records[node, 0], records[node, 1] = cover, 0.0
        else:
            records[node, 0] = records[node_left[node], 0] + records[node_right[node], 0]
            records[node, 1] = split_gain[node]


@numba.njit(**_JIT)
def group_children(node, feature, groups, node_left, node_right, node_groups):
    """The interaction groups the children of ``node``, just split on ``feature``, may still use: the node's
    (bits of ``node_groups``) that hold ``feature`` (``groups`` (#groups, #features); none: no constraint)."""
    mask = node_groups[node]
    for g in range(groups.shape[0]):
        if not groups[g, feature]:
            mask &= ~(np.uint64(1) << np.uint64(g))
    node_groups[node_left[node]] = mask
    node_groups[node_right[node]] = mask


@numba.njit(**_JIT)
def bound_children(node, feature, monotone, child_values, node_left, node_right, bounds):
    """The ``bounds`` of the children of ``node``, just split on ``feature``: the node's own, and for a
    monotone feature (``monotone[feature]`` +1 or -1) each side cut at the mean of the children's values
    ``child_values`` (left, right), so that every value of the left subtree stays on its side of every
    value of the right one (LightGBM's "basic" monotone constraints)."""
    left, right = node_left[node], node_right[node]
    for b in range(2):
        bounds[left, b] = bounds[node, b]
        bounds[right, b] = bounds[node, b]
    if monotone.size == 0 or monotone[feature] == 0:
        return
    middle = 0.5 * (child_values[0] + child_values[1])
    if monotone[feature] > 0:
        bounds[left, 1] = min(bounds[left, 1], middle)
        bounds[right, 0] = max(bounds[right, 0], middle)
    else:
        bounds[left, 0] = max(bounds[left, 0], middle)
        bounds[right, 1] = min(bounds[right, 1], middle)


def most_leaves(samples: int, min_samples: int, max_depth: int | None, max_leaves: int | None) -> int:
    """The most leaves a tree of ``samples`` rows may get: each holds ``min_samples``, and the depth and
    leaf limits (None: none) bound them."""
    by_depth = 1 << min(max_depth, 62) if max_depth is not None else samples
    return max(1, min(samples // min_samples, by_depth, max_leaves or samples))


def empty_tree(capacity: int) -> dict[str, np.ndarray]:
    """The node arrays of a tree that is its root alone, with room for ``capacity`` nodes."""
    return {"node_feature": np.full(capacity, -1, dtype=np.int64), "node_bin": np.zeros(capacity, dtype=np.int64),
            "node_nan_left": np.zeros(capacity, dtype=np.bool_),
            "node_left": np.full(capacity, -1, dtype=np.int64), "node_right": np.full(capacity, -1, dtype=np.int64),
            "depth": np.zeros(capacity, dtype=np.int64), "split_bin": np.full(capacity, -1, dtype=np.int64),
            "split_gain": np.zeros(capacity), "split_nan_left": np.zeros(capacity, dtype=np.bool_),
            "bounds": unbounded(capacity), "child_values": np.zeros((capacity, 2)),
            "node_groups": np.full(capacity, np.iinfo(np.uint64).max, dtype=np.uint64),
            "split_sets": np.zeros((capacity, CATEGORY_WORDS), dtype=np.uint64),
            "node_sets": np.zeros((capacity, CATEGORY_WORDS), dtype=np.uint64)}


def unbounded(capacity: int) -> np.ndarray:
    """(capacity, 2) node bounds ``[-inf, inf]``: no monotone constraint."""
    return np.column_stack([np.full(capacity, -np.inf), np.full(capacity, np.inf)])
