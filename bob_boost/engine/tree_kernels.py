"""Compiled kernels of gradient trees: per-node gradient/hessian histograms and the Newton split scan."""
from __future__ import annotations

import numba
import numpy as np

from .kernels import recover_mode_bin

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}

#: Gains below this fraction of the children's summed scores are rounding noise, not splits.
ROUNDING_GAIN = 1e-10


@numba.njit(**_JIT)
def node_totals(node_of_sample, values, totals, counts):
    """``totals[j, :] += values[i, :]`` and ``counts[j] += 1`` for every sample ``i`` of node ``j``.

    ``node_of_sample[i] < 0`` leaves sample ``i`` out. Rows are added in order, as ``numpy.bincount``
    adds them, so the sums are the same bit for bit.
    """
    width = values.shape[1]
    for i in range(values.shape[0]):
        node = node_of_sample[i]
        if node >= 0:
            for v in range(width):
                totals[node, v] += values[i, v]
            counts[node] += 1


@numba.njit(**_JIT)
def split_samples(sample_node, node, feature_codes, local_bin, missing_code, nan_left, left, right):
    """Move the samples of ``node`` to ``left`` (code at most ``local_bin``) or ``right``.

    Samples whose code is ``missing_code`` (the feature's missing-value bin; -1 for none) go left
    where ``nan_left`` is set, else right.
    """
    for i in range(sample_node.size):
        if sample_node[i] == node:
            code = feature_codes[i]
            if code == missing_code:
                goes_right = not nan_left
            else:
                goes_right = code > local_bin
            sample_node[i] = right if goes_right else left


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
def _split_gain(node_totals, left, node_count, left_count, outputs, regularization, min_samples, min_hessian,
                parent, right):
    """The Newton gain of sending ``left`` (2K sums, ``left_count`` samples) left; -1 if not allowed.

    ``right`` receives the right child's sums.
    """
    right_count = node_count - left_count
    if left_count < min_samples or right_count < min_samples:
        return -1.0
    for v in range(2 * outputs):
        right[v] = node_totals[v] - left[v]
    for k in range(outputs, 2 * outputs):
        if left[k] < min_hessian or right[k] < min_hessian:
            return -1.0
    children = (_newton_score(left[:outputs], left[outputs:], regularization)
                + _newton_score(right[:outputs], right[outputs:], regularization))
    value = children - parent
    # a gain at the rounding level of the scores (a pure node) is no gain
    if value <= ROUNDING_GAIN * children:
        return -1.0
    return value


@numba.njit(**_JIT)
def best_newton_splits(sums, counts, positions, offsets, totals, node_counts, regularization, min_samples,
                       min_hessian, tie_tolerance, missing, best, gain, nan_left):
    """Each node's best split by the Newton gain ``sum_k G_L^2/(H_L+l) + G_R^2/(H_R+l) - G^2/(H+l)``.

    ``sums[node, positions[g], :]`` holds bin ``g``'s K gradient sums then K
    hessian sums, ``counts`` its samples. A split needs ``min_samples``
    samples and a hessian sum of ``min_hessian`` (every output) on each side,
    and a gain above :data:`ROUNDING_GAIN` times the children's scores.
    ``best[node]`` is the first split (feature, then bin order) within
    ``tie_tolerance`` (relative) of the largest gain, -1 when no split is
    allowed or none gains; ``gain[node]`` its gain.

    With ``missing`` each feature's last bin holds its NaN samples (never a
    split of its own: a split lies between two value bins), and every split of
    a node with NaN samples is scored with them on the left (first) and on the
    right; ``nan_left[node]`` says where they go. A node without NaN samples
    scores each split once and sends NaN to the child of larger hessian sum
    (left on a tie), where unseen values are likelier to belong.
    """
    n_nodes = sums.shape[0]
    outputs = sums.shape[2] // 2
    width = 2 * outputs
    last = 2 if missing else 1
    left = np.empty(width)
    candidate = np.empty(width)
    right = np.empty(width)
    nan_sums = np.zeros(width)
    for node in range(n_nodes):
        node_totals = totals[node]
        parent = _newton_score(node_totals[:outputs], node_totals[outputs:], regularization)
        top = 0.0
        best[node] = -1
        gain[node] = 0.0
        nan_left[node] = False
        for scan in range(2):
            for f in range(offsets.size - 1):
                left[:] = 0.0
                left_count = 0
                nan_count = 0
                if missing:
                    p = positions[offsets[f + 1] - 1]
                    nan_count = counts[node, p]
                    for v in range(width):
                        nan_sums[v] = sums[node, p, v]
                for g in range(offsets[f], offsets[f + 1] - last):
                    p = positions[g]
                    for v in range(width):
                        left[v] += sums[node, p, v]
                    left_count += counts[node, p]
                    # side 0: NaN samples (if any) left; side 1: right
                    for side in range(2 if nan_count > 0 else 1):
                        moved = nan_count if side == 0 else 0
                        for v in range(width):
                            candidate[v] = left[v] + nan_sums[v] if moved > 0 else left[v]
                        value = _split_gain(node_totals, candidate, node_counts[node], left_count + moved, outputs,
                                            regularization, min_samples, min_hessian, parent, right)
                        if value < 0.0:
                            continue
                        if scan == 0:
                            top = max(top, value)
                        elif top > 0 and value >= top - tie_tolerance * top:
                            best[node] = g
                            gain[node] = value
                            if nan_count > 0:
                                nan_left[node] = side == 0
                            else:
                                left_hessian = 0.0
                                right_hessian = 0.0
                                for k in range(outputs, width):
                                    left_hessian += candidate[k]
                                    right_hessian += right[k]
                                nan_left[node] = left_hessian >= right_hessian
                            break
                    if scan == 1 and best[node] >= 0:
                        break
                if scan == 1 and best[node] >= 0:
                    break
            if top <= 0:
                break
