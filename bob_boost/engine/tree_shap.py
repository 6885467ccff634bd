"""Interventional Tree SHAP: exact Shapley values of regression trees against background rows, compiled.

For a foreground row ``x`` and a background row ``b``, the game of a tree ``f`` is ``v(S) = f(z)`` with
``z_j = x_j`` for ``j`` in ``S`` and ``b_j`` otherwise. Walking the tree, a node whose feature sends ``x`` and
``b`` the same way is passed; where they part, the feature joins either the features taken from ``x`` (``P``,
following ``x``) or those taken from ``b`` (``N``, following ``b``), once per path, as a feature met again on
the path must go the way its first meeting chose. A leaf of value ``c`` reached with ``|P| = p`` and
``|N| = n`` is ``z``'s leaf exactly when ``S`` holds ``P`` and nothing of ``N``, a game whose Shapley values
are ``c (p-1)! n! / (p+n)!`` for each feature of ``P`` and ``-c p! (n-1)! / (p+n)!`` for each of ``N``
(the chance that, in a random order of ``P`` and ``N``, the feature completes ``P`` before any of ``N``
arrives). Averaged over the background rows this is the interventional Tree SHAP of Lundberg et al.,
"From local explanations to global understanding with explainable AI for trees" (Nature Machine
Intelligence, 2020), whose values add up to ``f(x)`` minus the background's mean of ``f``.

Rows of ``x`` are split in fixed blocks over the threads; each row's sums are taken in one order, so the
values do not depend on the thread count.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from .threads import run_blocks

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}

#: Foreground rows per block of work.
BLOCK_ROWS = 256


def path_weights(depth: int) -> np.ndarray:
    """(depth + 2, depth + 2) ``[p, n]``: the Shapley value of a feature of ``P`` in the leaf game of
    ``|P| = p`` and ``|N| = n`` features, ``(p-1)! n! / (p+n)!`` (0 for ``p = 0``); a feature of ``N`` gets
    minus ``[p + 1, n - 1]``."""
    size = depth + 2
    table = np.zeros((size, size))
    for p in range(1, size):
        for n in range(size - p):
            table[p, n] = math.factorial(p - 1) * math.factorial(n) / math.factorial(p + n)
    return table


@numba.njit(**_JIT)
def goes_left(value, node, thresholds, missing_left, has_missing, category_offsets, category_values):
    """The side of ``node`` a feature value takes, as :func:`bob_boost.engine.prediction.node_leaves` routes."""
    if value != value:
        return missing_left[node] if has_missing else True
    if category_offsets.size > 0 and category_offsets[node + 1] > category_offsets[node]:
        values = category_values[category_offsets[node]:category_offsets[node + 1]]
        at = np.searchsorted(values, value)
        return at < values.size and values[at] == value
    return not value >= thresholds[node]


@numba.njit(**_JIT)
def directions(features, first, last, node_features, thresholds, missing_left, has_missing, category_offsets,
               category_values, start, stop, out):
    """``out[i - first, node - start]``: whether row ``i`` goes left at inner ``node`` of the nodes
    ``start:stop`` (as :func:`bob_boost.engine.prediction.node_leaves` routes; leaves' entries untouched); a
    node at a time, its test hoisted out of the loop over the rows."""
    for node in range(start, stop):
        f = node_features[node]
        if f < 0:
            continue
        if category_offsets.size > 0 and category_offsets[node + 1] > category_offsets[node]:
            for i in range(first, last):
                out[i - first, node - start] = goes_left(features[i, f], node, thresholds, missing_left, has_missing,
                                                          category_offsets, category_values)
            continue
        threshold, nan_left = thresholds[node], missing_left[node] if has_missing else True
        for i in range(first, last):
            value = features[i, f]
            out[i - first, node - start] = nan_left if value != value else not value >= threshold


@numba.njit(**_JIT)
def _pair(x_left, b_left, root, node_features, left, right, values, weights, scale, state, decided, stack, out):
    """Add ``scale`` times the Shapley values of the game of a row against a background row in the tree at
    ``root`` to ``out`` (#features, #outputs); ``x_left`` and ``b_left`` are the two rows' sides at every node.
    ``state`` (per feature: 0 free, 1 in P, 2 in N) is all 0 on entry and exit; ``decided`` and ``stack``
    are scratch."""
    outputs = values.shape[1]
    # a stack entry: node, the feature decided on entering it (-1: none), its side (1 or 2), p, n, entering
    stack[0, 0], stack[0, 1], stack[0, 2], stack[0, 3], stack[0, 4], stack[0, 5] = root, -1, 0, 0, 0, 1
    top = 1
    depth = 0
    while top > 0:
        top -= 1
        node, feature, side, p, n, entering = (stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3],
                                               stack[top, 4], stack[top, 5])
        if entering == 0:  # leaving: undo the decision made on entering
            if feature >= 0:
                state[feature] = 0
                depth -= 1
            continue
        if feature >= 0:
            state[feature] = side
            decided[depth] = feature
            depth += 1
        f = node_features[node]
        if f < 0:
            for q in range(depth):
                j = decided[q]
                share = weights[p, n] if state[j] == 1 else -weights[p + 1, n - 1]
                for k in range(outputs):
                    out[j, k] += scale * share * values[node, k]
            if feature >= 0:  # nothing below a leaf: undo at once
                state[feature] = 0
                depth -= 1
            continue
        stack[top, 5] = 0  # the entry stays, now the mark of leaving
        top += 1
        x_child = left[node] if x_left[node] else right[node]
        if x_left[node] == b_left[node] or state[f] == 1:
            stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3], stack[top, 4], stack[top, 5] = (
                x_child, -1, 0, p, n, 1)
            top += 1
            continue
        b_child = left[node] if b_left[node] else right[node]
        if state[f] == 2:
            stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3], stack[top, 4], stack[top, 5] = (
                b_child, -1, 0, p, n, 1)
            top += 1
        else:
            stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3], stack[top, 4], stack[top, 5] = (
                b_child, f, 2, p, n + 1, 1)
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2], stack[top + 1, 3], stack[top + 1, 4] = (
                x_child, f, 1, p + 1, n)
            stack[top + 1, 5] = 1
            top += 2


@numba.njit(**_JIT)
def _rows(features, background_left, node_features, thresholds, left, right, missing_left, has_missing,
          category_offsets, category_values, values, roots, weights, stack_size, first, last, out):
    """Rows ``first:last`` of ``out`` (#rows, #features, #outputs): the trees' interventional Shapley values
    against every background row (``background_left``: their sides at every node), averaged."""
    scale = 1.0 / background_left.shape[0]
    state = np.zeros(features.shape[1], dtype=np.int64)
    decided = np.empty(stack_size, dtype=np.int64)
    stack = np.empty((3 * stack_size + 3, 6), dtype=np.int64)
    x_left = np.zeros((last - first, node_features.size), dtype=np.bool_)
    directions(features, first, last, node_features, thresholds, missing_left, has_missing, category_offsets,
               category_values, 0, node_features.size, x_left)
    for i in range(first, last):
        for r in range(background_left.shape[0]):
            for t in range(roots.size):
                _pair(x_left[i - first], background_left[r], roots[t], node_features, left, right, values, weights,
                      scale, state, decided, stack, out[i])


def interventional_tree_shap(features: np.ndarray, background: np.ndarray, node_features: np.ndarray,
                             thresholds: np.ndarray, left: np.ndarray, right: np.ndarray,
                             missing_left: np.ndarray | None, categories: tuple | None, values: np.ndarray,
                             roots: np.ndarray, depth: int, n_threads: int) -> np.ndarray:
    """(#rows, #features, #outputs) interventional Shapley values of the trees (validated node arrays, as
    :func:`bob_boost.engine.prediction.node_leaves` takes them, ``values`` (#nodes, #outputs) leaf values,
    ``depth`` their largest depth) for every row of ``features`` against the rows of ``background`` (both
    float64, C order)."""
    out = np.zeros((features.shape[0], features.shape[1], values.shape[1]))
    has_missing = missing_left is not None
    offsets, category_values = categories if categories is not None else (np.empty(0, dtype=np.int64),
                                                                          np.empty(0))
    missing = missing_left if has_missing else np.zeros(1, dtype=np.bool_)
    # writable copies of the (small) node arrays, whatever the machine's flags: one compiled variant
    node_features, thresholds, left, right, missing, offsets, category_values, values, roots = (
        np.array(a) for a in (node_features, thresholds, left, right, missing, offsets, category_values, values,
                              roots))
    background_left = np.zeros((background.shape[0], node_features.size), dtype=np.bool_)
    directions(background, 0, background.shape[0], node_features, thresholds, missing, has_missing, offsets,
               category_values, 0, node_features.size, background_left)
    common = (features, background_left, node_features, thresholds, left, right, missing, has_missing, offsets,
              category_values, values, roots, path_weights(depth), depth + 1)
    blocks = [common + (start, min(start + BLOCK_ROWS, features.shape[0]), out)
              for start in range(0, features.shape[0], BLOCK_ROWS)]
    run_blocks(_rows, blocks, n_threads, work=float(features.shape[0]) * background.shape[0] * values.shape[0])
    return out
