"""Compiled categorical splits of cost-sensitive multi-class trees: a set of a feature's categories goes left.

The trees score a split by the weighted Gini criterion, ``sum_j p_j(A)^2 / P(A) + sum_j p_j(B)^2 / P(B)``
over the two children's cost-weighted class sums (:class:`~bob_boost.CostSensitiveTreeTrainer`). A
categorical feature's bins are its categories (its missing values' bin one more), and a node's candidate
sets are:

- with at most ``exhaustive`` categories present in the node, every two-way partition of them (the first
  present category stays on the left, so each partition is scored once): the best of all
  ``2^(m-1) - 1``;
- with more, for each class ``j`` the categories ordered by their share of class ``j``
  (``p_j(c) / P(c)``, ties in bin order), and every prefix of that order going left. For two classes this
  contains the best partition (Breiman et al. 1984, *Classification and Regression Trees*, Theorem 4.5, for
  the Gini criterion); for more it is a heuristic, one order per class.

Categories the node does not hold, and values never seen in training, go right. A set is a bitset of
:data:`~bob_boost.engine.categorical.CATEGORY_WORDS` words over the feature's bins.
"""
from __future__ import annotations

import numba
import numpy as np

from .categorical import CATEGORY_WORDS
from .kernels import gini_term

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}

#: Categories a node may hold for every partition of them to be scored (2^(EXHAUSTIVE_CATEGORIES - 1) - 1 sets).
EXHAUSTIVE_CATEGORIES = 10


@numba.njit(**_JIT)
def _score(sums, node, positions, bins, members, totals, left, right):
    """The split's score with ``bins[members]`` on the left (their class sums added in bin order)."""
    left[:] = 0.0
    for i in range(bins.size):
        if members[i]:
            p = positions[bins[i]]
            for c in range(left.size):
                left[c] += sums[node, p, c]
    for c in range(left.size):
        right[c] = totals[node, c] - left[c]
    return gini_term(left) + gini_term(right)


@numba.njit(**_JIT)
def _heavy_enough(bin_weights, node_weights, node, positions, bins, members, min_weight):
    """Whether both children hold at least ``min_weight`` of sample weight (always, for 0)."""
    if min_weight <= 0.0:
        return True
    weight = 0.0
    for i in range(bins.size):
        if members[i]:
            weight += bin_weights[node, positions[bins[i]]]
    return weight >= min_weight and node_weights[node] - weight >= min_weight


@numba.njit(**_JIT)
def _candidates(sums, node, positions, bins, exhaustive):
    """(#candidates, #present) the left sets scored for a node's present ``bins``, as membership rows."""
    m = bins.size
    if m <= exhaustive:
        count = (1 << (m - 1)) - 1
        sets = np.zeros((count, m), dtype=np.bool_)
        for mask in range(count):
            sets[mask, 0] = True
            for i in range(1, m):
                sets[mask, i] = (mask >> (i - 1)) & 1 == 1
        return sets
    k = sums.shape[2]
    share = np.empty(m)
    sets = np.zeros((k * (m - 1), m), dtype=np.bool_)
    for j in range(k):
        for i in range(m):
            total = 0.0
            for c in range(k):
                total += sums[node, positions[bins[i]], c]
            share[i] = sums[node, positions[bins[i]], j] / total if total > 0.0 else 0.0
        order = np.argsort(share, kind="mergesort")
        for length in range(1, m):
            for i in range(length):
                sets[j * (m - 1) + length - 1, order[i]] = True
    return sets


@numba.njit(**_JIT)
def best_category_splits(sums, counts, positions, offsets, features, totals, tie_tolerance, exhaustive,
                         bin_weights, node_weights, min_weight, best_feature, best_score, best_set):
    """Each node's best categorical split over the categorical ``features`` (see the module's description).

    ``sums[node, positions[g], c]`` and ``counts[node, positions[g]]`` are the class sums and sample count of
    global bin ``g`` (feature ``f`` owns bins ``offsets[f]:offsets[f + 1]``, its missing values' bin last
    where they are handled). ``best_feature[node]`` is the first feature, and its first set, within
    ``tie_tolerance`` (relative) of the node's highest score, or -1 when no feature has two present
    categories; ``best_score[node]`` its score and ``best_set[node]`` its left bins (bit ``g - offsets[f]``).
    With ``min_weight > 0`` each child must hold at least that much sample weight (``bin_weights``,
    ``node_weights``, as :func:`~bob_boost.engine.kernels.best_gini_splits` reads them).
    """
    n_nodes, _, k = sums.shape
    left = np.empty(k)
    right = np.empty(k)
    for node in range(n_nodes):
        best_feature[node] = -1
        best_set[node, :] = 0
        top = -np.inf
        for scan in range(2):
            for j in range(features.size):
                f = features[j]
                present = np.empty(offsets[f + 1] - offsets[f], dtype=np.int64)
                m = 0
                for g in range(offsets[f], offsets[f + 1]):
                    if counts[node, positions[g]] > 0:
                        present[m] = g
                        m += 1
                if m < 2:
                    continue
                bins = present[:m]
                sets = _candidates(sums, node, positions, bins, exhaustive)
                for s in range(sets.shape[0]):
                    members = sets[s]
                    if not _heavy_enough(bin_weights, node_weights, node, positions, bins, members, min_weight):
                        continue
                    value = _score(sums, node, positions, bins, members, totals, left, right)
                    if scan == 0:
                        top = max(top, value)
                    elif value >= top - tie_tolerance * abs(top):
                        best_feature[node] = f
                        best_score[node] = value
                        for i in range(m):
                            if members[i]:
                                bit = bins[i] - offsets[f]
                                best_set[node, bit >> 6] |= np.uint64(1) << np.uint64(bit & 63)
                        break
                if scan == 1 and best_feature[node] >= 0:
                    break
            if top == -np.inf:
                break


def category_splits(sums: np.ndarray, counts: np.ndarray, positions: np.ndarray, offsets: np.ndarray,
                    features: np.ndarray, totals: np.ndarray, tie_tolerance: float, bin_weights: np.ndarray,
                    node_weights: np.ndarray, min_weight: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`best_category_splits` of every node: ``(feature, score, left bin set)``, feature -1 without one."""
    n_nodes = sums.shape[0]
    feature = np.empty(n_nodes, dtype=np.int64)
    score = np.full(n_nodes, -np.inf)
    sets = np.zeros((n_nodes, CATEGORY_WORDS), dtype=np.uint64)
    best_category_splits(sums, counts, positions, offsets, features.astype(np.int64), totals, tie_tolerance,
                         EXHAUSTIVE_CATEGORIES, bin_weights, node_weights, min_weight, feature, score, sets)
    return feature, score, sets
