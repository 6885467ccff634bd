"""Compiled kernels that run OpenCV's cascades as OpenCV 4 does: its exact bilinear resize, integral images, and
the scan of one scale's windows with its arithmetic (float32 feature values in OpenCV's order, double stage
sums, the skip after a first-stage rejection).

``nogil``, no ``fastmath`` (no fused or reordered operations), so every value is the same for every blocking
and thread count, and on every CPU.
"""
from __future__ import annotations

import numba
import numpy as np

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}

#: Window results of :func:`scan_rows`.
ACCEPTED, REJECTED_FIRST, REJECTED, FLAT = 1, 0, -2, -1


@numba.njit(**_JIT)
def resize_rows(source, x0, x1, cx0, cx1, y0, y1, cy0, cy1, out):
    """OpenCV's ``INTER_LINEAR_EXACT`` of an 8-bit image: per output pixel, the horizontal sums with 8-bit fixed
    point weights (``cx0 + cx1 = 256``) of two source rows, weighted by ``cy0 + cy1 = 256`` and rounded once,
    ``(sum + 2^15) >> 16``."""
    for y in range(out.shape[0]):
        top, bottom = source[y0[y]], source[y1[y]]
        a, b = np.int64(cy0[y]), np.int64(cy1[y])
        for x in range(out.shape[1]):
            upper = np.int64(top[x0[x]]) * cx0[x] + np.int64(top[x1[x]]) * cx1[x]
            lower = np.int64(bottom[x0[x]]) * cx0[x] + np.int64(bottom[x1[x]]) * cx1[x]
            out[y, x] = (upper * a + lower * b + 32768) >> 16


@numba.njit(**_JIT)
def integrals(image, tilted_too, total, squares, tilted):
    """The (h+1, w+1) integral images of ``image``: sums, sums of squares and (when ``tilted_too``) OpenCV's
    45-degree sums ``T[Y, X] = sum of image[py, px] over py < Y, |X - 1 - px| <= Y - 1 - py``."""
    h, w = image.shape
    for y in range(h):
        row_sum = np.int64(0)
        row_square = np.int64(0)
        for x in range(w):
            value = np.int64(image[y, x])
            row_sum += value
            row_square += value * value
            total[y + 1, x + 1] = total[y, x + 1] + row_sum
            squares[y + 1, x + 1] = squares[y, x + 1] + row_square
    if not tilted_too:
        return
    # T[Y, X] = T[Y-1, X-1] + T[Y-1, X+1] - T[Y-2, X] + I[Y-1, X-1] + I[Y-2, X-1] on the zero-extended image,
    # columns outside [0, w] carried in a wider buffer so that the recurrence needs no special edges
    pad = h + 2
    wide = np.zeros((h + 1, w + 1 + 2 * pad), np.int64)
    for y in range(1, h + 1):
        for c in range(1, wide.shape[1] - 1):
            x = c - pad
            value = wide[y - 1, c - 1] + wide[y - 1, c + 1]
            if y >= 2:
                value -= wide[y - 2, c]
            if 1 <= x <= w:
                value += image[y - 1, x - 1]
                if y >= 2:
                    value += image[y - 2, x - 1]
            wide[y, c] = value
    for y in range(h + 1):
        for x in range(w + 1):
            tilted[y, x] = wide[y, x + pad]


@numba.njit(**_JIT)
def _rect_sum(flat, base, corners):
    return flat[base + corners[0]] - flat[base + corners[1]] - flat[base + corners[2]] + flat[base + corners[3]]


@numba.njit(**_JIT)
def _haar_value(total, tilted, base, corners, weights, is_tilted, feature, factor):
    """A Haar feature's value in OpenCV's float32 order: ``((w0 r0 + w1 r1) + w2 r2) * factor``."""
    source = tilted if is_tilted[feature] else total
    value = weights[feature, 0] * np.float32(_rect_sum(source, base, corners[feature, 0]))
    value = value + weights[feature, 1] * np.float32(_rect_sum(source, base, corners[feature, 1]))
    if weights[feature, 2] != np.float32(0.0):
        value = value + weights[feature, 2] * np.float32(_rect_sum(source, base, corners[feature, 2]))
    return value * factor


@numba.njit(**_JIT)
def _lbp_code(total, base, grid, feature):
    """The 8-bit MB-LBP code: a neighbour block whose sum is at least the centre's sets its bit, clockwise from
    the top-left (128) to the left (1)."""
    g = grid[feature]
    centre = total[base + g[5]] - total[base + g[6]] - total[base + g[9]] + total[base + g[10]]
    code = 0
    # (top-left corner index of the block in the 4x4 grid of corners, bit)
    for corner, bit in ((0, 128), (1, 64), (2, 32), (6, 16), (10, 8), (9, 4), (8, 2), (4, 1)):
        block = total[base + g[corner]] - total[base + g[corner + 1]] - total[base + g[corner + 4]] \
            + total[base + g[corner + 5]]
        if block >= centre:
            code |= bit
    return code


@numba.njit(**_JIT)
def scan_rows(total, squares, tilted, stride, lbp, rows_start, rows_stop, step, columns, norm_corners, norm_area,
              corners, weights, is_tilted, grid, stage_weak, stage_threshold, weak_nodes, weak_leaves, node_left,
              node_right, node_feature, node_threshold, node_subset, leaves, out):
    """Run the cascade on the windows of rows ``rows_start, rows_start + step, ... < rows_stop`` and columns
    ``0, step, ... < columns`` of one scale, as OpenCV's ``runAt`` with its scan loop: ``out[row, column]`` gets
    :data:`ACCEPTED`, :data:`REJECTED_FIRST` (the next column is then skipped and keeps ``out``'s value),
    :data:`REJECTED` or, for a Haar window of (nearly) uniform grey, :data:`FLAT`."""
    for y in range(rows_start, rows_stop, step):
        x = 0
        while x < columns:
            base = y * stride + x
            factor = np.float32(1.0)
            result = ACCEPTED
            if not lbp:
                window_sum = _rect_sum(total, base, norm_corners)
                window_squares = _rect_sum(squares, base, norm_corners)
                spread = norm_area * np.float64(window_squares) - np.float64(window_sum) * np.float64(window_sum)
                if spread > 0.0:
                    factor = np.float32(1.0 / np.sqrt(spread))
                    if not norm_area * np.float64(factor) < 0.1:
                        result = FLAT
                else:
                    result = FLAT
            if result == ACCEPTED:
                for stage in range(stage_threshold.size):
                    total_score = 0.0
                    for w in range(stage_weak[stage], stage_weak[stage + 1]):
                        first = weak_nodes[w]
                        index = 0
                        while True:
                            node = first + index
                            feature = node_feature[node]
                            if lbp:
                                code = _lbp_code(total, base, grid, feature)
                                left = (node_subset[node, code >> 5] & (np.int32(1) << (code & 31))) != 0
                            else:
                                value = _haar_value(total, tilted, base, corners, weights, is_tilted, feature, factor)
                                left = value < node_threshold[node]
                            index = node_left[node] if left else node_right[node]
                            if index <= 0:
                                break
                        total_score += np.float64(leaves[weak_leaves[w] - index])
                    if total_score < np.float64(stage_threshold[stage]):
                        result = REJECTED_FIRST if stage == 0 else REJECTED
                        break
            out[y, x] = result
            if result == REJECTED_FIRST:
                x += step
            x += step
