"""Path-dependent Tree SHAP: exact Shapley values of regression trees under the trees' own training cover, compiled.

The game of a tree ``f`` at a row ``x`` is ``v(S) = E[f(x) | x_S]`` estimated by the tree itself: at a node
splitting on a feature of ``S`` the row's branch is followed, at any other node both branches are, weighted
by the share of the node's training cover each child holds. Algorithm 2 of Lundberg et al., "From local
explanations to global understanding with explainable AI for trees" (Nature Machine Intelligence, 2020),
computes the Shapley values of that game for all features in one walk of the tree: the walk keeps, for the
unique features met on the way to a node, the fraction of the paths through it where the feature is left out
(``zero``: the cover share) and taken (``one``: 1 if ``x`` goes this way, else 0), and the permutation
weights of every subset size of them (EXTEND); a feature met a second time is first taken back out of the
path (UNWIND), so that its two fractions multiply; at a leaf each feature's value is its weight with the
feature unwound, times ``(one - zero)`` and the leaf value. The values add up to ``f(x)`` minus the
cover-weighted mean of the leaves, the tree's expected value.

The walk is iterative (a stack of nodes, one copy of the path per tree level). Rows are split in fixed
blocks over the threads; each row's sums are taken in one order, so the values do not depend on the thread
count.
"""
from __future__ import annotations

import numba
import numpy as np

from .threads import run_blocks
from .tree_shap import BLOCK_ROWS, directions

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}


@numba.njit(inline="always", **_JIT)
def _extend(feature, zero, one, weight, length, zero_fraction, one_fraction, index, reciprocal):
    """Add a feature with its fractions at place ``length`` of the path and update the subset weights
    (``reciprocal[j]`` is ``1 / j``: multiplications, not divisions, in the loops)."""
    feature[length], zero[length], one[length] = index, zero_fraction, one_fraction
    weight[length] = 1.0 if length == 0 else 0.0
    scale = reciprocal[length + 1]
    for i in range(length - 1, -1, -1):
        weight[i + 1] += one_fraction * weight[i] * (i + 1) * scale
        weight[i] = zero_fraction * weight[i] * (length - i) * scale


@numba.njit(inline="always", **_JIT)
def _unwind(feature, zero, one, weight, length, place, reciprocal):
    """Take the feature at ``place`` back out of a path of ``length + 1`` entries (the inverse of EXTEND)."""
    one_fraction, zero_fraction = one[place], zero[place]
    carried = weight[length]
    if one_fraction != 0.0:
        inverse_one = (length + 1) / one_fraction
        for i in range(length - 1, -1, -1):
            previous = weight[i]
            weight[i] = carried * inverse_one * reciprocal[i + 1]
            carried = previous - weight[i] * zero_fraction * (length - i) * reciprocal[length + 1]
    else:
        inverse_zero = (length + 1) / zero_fraction
        for i in range(length - 1, -1, -1):
            weight[i] = weight[i] * inverse_zero * reciprocal[length - i]
    for i in range(place, length):
        feature[i], zero[i], one[i] = feature[i + 1], zero[i + 1], one[i + 1]


@numba.njit(inline="always", **_JIT)
def _unwound_sums(zero, one, weight, length, reciprocal, carried, totals, inverse):
    """``totals[p]`` for every place ``p`` in ``1..length``: the total subset weight of the path without its
    feature at ``p`` (UNWIND's weights, summed). The places' recurrences are independent: they advance side
    by side, one path weight at a time, rather than one place after another."""
    for p in range(1, length + 1):
        carried[p] = weight[length]
        totals[p] = 0.0
        inverse[p] = 1.0 / (one[p] if one[p] != 0.0 else zero[p])
    for i in range(length - 1, -1, -1):
        below, ahead, shift = weight[i], reciprocal[i + 1], length - i
        for p in range(1, length + 1):
            if one[p] != 0.0:
                share = carried[p] * ahead * inverse[p]
                totals[p] += share
                carried[p] = below - share * zero[p] * shift
            else:
                totals[p] += below * reciprocal[shift] * inverse[p]
    for p in range(1, length + 1):
        totals[p] *= length + 1


@numba.njit(**_JIT)
def _tree(x_left, root, node_features, left, right, values, cover, paths, stack, reciprocal, carried, totals, inverse,
          out):
    """Add the path-dependent Shapley values of the tree at ``root`` for one row (its sides ``x_left`` at every
    node of the tree, the root's first) to ``out`` (#features, #outputs). ``paths`` (4, levels, levels): per
    tree level the path's features, zero and one fractions and weights; ``stack`` (levels + 1, 4) int64 and
    (levels + 1, 2) float64: node, level,
    length, incoming feature, and the incoming fractions; ``reciprocal`` ``1 / j`` for every ``j`` up to the
    levels; ``carried``, ``totals`` and ``inverse`` scratch of a path's length."""
    outputs = values.shape[1]
    features_of, zeros, ones, weights = paths[0], paths[1], paths[2], paths[3]
    nodes, fractions = stack
    nodes[0, 0], nodes[0, 1], nodes[0, 2], nodes[0, 3] = root, 0, 0, -1
    fractions[0, 0], fractions[0, 1] = 1.0, 1.0
    top = 1
    while top > 0:
        top -= 1
        node, level, length, incoming = nodes[top, 0], nodes[top, 1], nodes[top, 2], nodes[top, 3]
        feature, zero, one, weight = features_of[level], zeros[level], ones[level], weights[level]
        if level > 0:  # the parent's path (as it left it for its children), then this node's entry
            parent = level - 1
            for i in range(length):
                feature[i], zero[i], one[i] = features_of[parent, i], zeros[parent, i], ones[parent, i]
                weight[i] = weights[parent, i]
        _extend(feature, zero, one, weight, length, fractions[top, 0], fractions[top, 1], incoming, reciprocal)
        f = node_features[node]
        if f < 0:
            _unwound_sums(zero, one, weight, length, reciprocal, carried, totals, inverse)
            for i in range(1, length + 1):
                share = totals[i] * (one[i] - zero[i])
                for k in range(outputs):
                    out[feature[i], k] += share * values[node, k]
            continue
        hot, cold = (left[node], right[node]) if x_left[node - root] else (right[node], left[node])
        incoming_zero, incoming_one = 1.0, 1.0
        for i in range(1, length + 1):
            if feature[i] == f:  # met before on this path: its fractions carry on, its entry is taken out
                incoming_zero, incoming_one = zero[i], one[i]
                _unwind(feature, zero, one, weight, length, i, reciprocal)
                length -= 1
                break
        cold_zero = incoming_zero * cover[cold] / cover[node]
        if cold_zero > 0.0:  # a branch without cover adds nothing to any value
            nodes[top, 0], nodes[top, 1], nodes[top, 2], nodes[top, 3] = cold, level + 1, length + 1, f
            fractions[top, 0], fractions[top, 1] = cold_zero, 0.0
            top += 1
        hot_zero = incoming_zero * cover[hot] / cover[node]
        if hot_zero > 0.0 or incoming_one > 0.0:
            nodes[top, 0], nodes[top, 1], nodes[top, 2], nodes[top, 3] = hot, level + 1, length + 1, f
            fractions[top, 0], fractions[top, 1] = hot_zero, incoming_one
            top += 1


@numba.njit(**_JIT)
def _rows(features, node_features, thresholds, left, right, missing_left, has_missing, category_offsets,
          category_values, values, cover, roots, levels, first, last, out):
    """Rows ``first:last`` of ``out`` (#rows, #features, #outputs): the trees' path-dependent Shapley values."""
    paths_features = np.zeros((levels, levels), dtype=np.int64)
    paths = (paths_features, np.zeros((levels, levels)), np.zeros((levels, levels)), np.zeros((levels, levels)))
    stack = (np.zeros((levels + 1, 4), dtype=np.int64), np.zeros((levels + 1, 2)))
    reciprocal = np.zeros(levels + 2)
    for j in range(1, levels + 2):
        reciprocal[j] = 1.0 / j
    carried, totals, inverse = np.zeros(levels + 1), np.zeros(levels + 1), np.zeros(levels + 1)
    ends = np.append(roots[1:], node_features.size)
    x_left = np.empty((last - first, np.max(ends - roots)), dtype=np.bool_)
    for t in range(roots.size):  # a tree at a time: its sides of the block's rows stay in the caches
        directions(features, first, last, node_features, thresholds, missing_left, has_missing, category_offsets,
                   category_values, roots[t], ends[t], x_left)
        for i in range(first, last):
            _tree(x_left[i - first], roots[t], node_features, left, right, values, cover, paths, stack, reciprocal,
                  carried, totals, inverse, out[i])


def path_tree_shap(features: np.ndarray, node_features: np.ndarray, thresholds: np.ndarray, left: np.ndarray,
                   right: np.ndarray, missing_left: np.ndarray | None, categories: tuple | None, values: np.ndarray,
                   cover: np.ndarray, roots: np.ndarray, depth: int, n_threads: int) -> np.ndarray:
    """(#rows, #features, #outputs) path-dependent Shapley values of the trees (validated node arrays, as
    :func:`bob_boost.engine.prediction.node_leaves` takes them, ``values`` (#nodes, #outputs) leaf values,
    ``cover`` (#nodes,) their training cover with every inner node's positive, ``depth`` their largest
    depth) for every row of ``features`` (float64, C order)."""
    out = np.zeros((features.shape[0], features.shape[1], values.shape[1]))
    has_missing = missing_left is not None
    offsets, category_values = categories if categories is not None else (np.empty(0, dtype=np.int64),
                                                                          np.empty(0))
    missing = missing_left if has_missing else np.zeros(1, dtype=np.bool_)
    # writable copies of the (small) node arrays, whatever the machine's flags: one compiled variant
    arrays = tuple(np.array(a) for a in (node_features, thresholds, left, right, missing, offsets, category_values,
                                         values, cover, roots))
    node_features, thresholds, left, right, missing, offsets, category_values, values, cover, roots = arrays
    common = (features, node_features, thresholds, left, right, missing, has_missing, offsets, category_values,
              values, cover, roots, depth + 2)
    blocks = [common + (start, min(start + BLOCK_ROWS, features.shape[0]), out)
              for start in range(0, features.shape[0], BLOCK_ROWS)]
    run_blocks(_rows, blocks, n_threads, work=float(features.shape[0]) * node_features.size * (depth + 1))
    return out


def expected_value(values: np.ndarray, node_features: np.ndarray, cover: np.ndarray, roots: np.ndarray) -> np.ndarray:
    """(#outputs,) the trees' expected value under their cover: each tree's leaves weighted by their share of
    its root's cover, summed over the trees."""
    ends = np.append(roots[1:], node_features.size)
    total = np.zeros(values.shape[1])
    for root, end in zip(roots, ends):
        leaves = np.arange(root, end)[node_features[root:end] < 0]
        # a lone leaf is its own expectation, whatever its cover (a zero hessian sum, say)
        total += values[root] if leaves.size == 1 else cover[leaves] @ values[leaves] / cover[root]
    return total
