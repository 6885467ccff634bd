"""Compiled kernels of gradient trees: per-node gradient/hessian histograms and the Newton split scan."""
from __future__ import annotations

import numba
import numpy as np

from .kernels import recover_mode_bin

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}

#: Gains below this fraction of the children's summed scores are rounding noise, not splits.
ROUNDING_GAIN = 1e-10


@numba.njit(**_JIT)
def node_value_histograms(codes, sample_node, values, totals, node_counts, mode_bins, row_starts, rows,
                          feature_start, feature_stop, sums, counts):
    """``sums[node, f, b, :] += values[i, :]`` and ``counts[node, f, b] += 1`` over the samples of each node.

    Like :func:`bob_boost.engine.kernels.node_histograms`, with a vector of
    values per sample (gradients, then hessians) instead of one class weight;
    a sparse feature's frequent bin is ``totals`` / ``node_counts`` minus the
    node's other bins. ``sample_node[i] < 0`` leaves sample ``i`` out.
    """
    n_samples = codes.shape[1]
    width = sums.shape[3]
    for f in range(feature_start, feature_stop):
        feature_codes = codes[f]
        mode = mode_bins[f]
        if mode < 0:
            for i in range(n_samples):
                node = sample_node[i]
                if node >= 0:
                    b = feature_codes[i]
                    for v in range(width):
                        sums[node, f, b, v] += values[i, v]
                    counts[node, f, b] += 1
            continue
        for position in range(row_starts[f], row_starts[f + 1]):
            i = rows[position]
            node = sample_node[i]
            if node >= 0:
                b = feature_codes[i]
                for v in range(width):
                    sums[node, f, b, v] += values[i, v]
                counts[node, f, b] += 1
        recover_mode_bin(sums, counts, f, mode, totals, node_counts)


@numba.njit(**_JIT)
def _newton_score(gradients, hessians, regularization):
    score = 0.0
    for k in range(gradients.size):
        score += gradients[k] * gradients[k] / (hessians[k] + regularization)
    return score


@numba.njit(**_JIT)
def best_newton_splits(sums, counts, positions, offsets, totals, node_counts, regularization, min_samples,
                       min_hessian, tie_tolerance, best, gain):
    """Each node's best split by the Newton gain ``sum_k G_L^2/(H_L+l) + G_R^2/(H_R+l) - G^2/(H+l)``.

    ``sums[node, positions[g], :]`` holds bin ``g``'s K gradient sums then K
    hessian sums, ``counts`` its samples. A split needs ``min_samples``
    samples and a hessian sum of ``min_hessian`` (every output) on each side,
    and a gain above :data:`ROUNDING_GAIN` times the children's scores.
    ``best[node]`` is the first split (feature, then bin order) within
    ``tie_tolerance`` (relative) of the largest gain, -1 when no split is
    allowed or none gains; ``gain[node]`` its gain.
    """
    n_nodes = sums.shape[0]
    outputs = sums.shape[2] // 2
    left = np.empty(2 * outputs)
    right = np.empty(2 * outputs)
    for node in range(n_nodes):
        parent = _newton_score(totals[node, :outputs], totals[node, outputs:], regularization)
        top = 0.0
        best[node] = -1
        gain[node] = 0.0
        for scan in range(2):
            for f in range(offsets.size - 1):
                left[:] = 0.0
                left_count = 0
                for g in range(offsets[f], offsets[f + 1] - 1):
                    p = positions[g]
                    for v in range(2 * outputs):
                        left[v] += sums[node, p, v]
                    left_count += counts[node, p]
                    right_count = node_counts[node] - left_count
                    if left_count < min_samples or right_count < min_samples:
                        continue
                    allowed = True
                    for v in range(2 * outputs):
                        right[v] = totals[node, v] - left[v]
                    for k in range(outputs, 2 * outputs):
                        if left[k] < min_hessian or right[k] < min_hessian:
                            allowed = False
                    if not allowed:
                        continue
                    children = (_newton_score(left[:outputs], left[outputs:], regularization)
                                + _newton_score(right[:outputs], right[outputs:], regularization))
                    value = children - parent
                    # a gain at the rounding level of the scores (a pure node) is no gain
                    if value <= ROUNDING_GAIN * children:
                        continue
                    if scan == 0:
                        top = max(top, value)
                    elif top > 0 and value >= top - tie_tolerance * top:
                        best[node] = g
                        gain[node] = value
                        break
                if scan == 1 and best[node] >= 0:
                    break
            if top <= 0:
                break
