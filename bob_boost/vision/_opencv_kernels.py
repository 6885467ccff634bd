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
#: The per-window helpers are inlined into the scan (a call per feature costs several times the feature).
_INLINE = {**_JIT, "inline": "always"}

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
    """The (h+1, w+1) int32 integral images of ``image``, wrapping around as OpenCV's: sums, sums of squares and
    (when ``tilted_too``) OpenCV's 45-degree sums ``T[Y, X] = sum of image[py, px] over py < Y,
    |X - 1 - px| <= Y - 1 - py``."""
    h, w = image.shape
    for y in range(h):
        row_sum = np.int64(0)
        row_square = np.int64(0)
        for x in range(w):
            value = np.int64(image[y, x])
            row_sum += value
            row_square += value * value
            total[y + 1, x + 1] = np.int32(np.int64(total[y, x + 1]) + row_sum)
            squares[y + 1, x + 1] = np.int32(np.int64(squares[y, x + 1]) + row_square)
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
            tilted[y, x] = np.int32(wide[y, x + pad])


@numba.njit(**_INLINE)
def _rect_sum(flat, base, corners, k):
    """The sum ``F[p0] - F[p1] - F[p2] + F[p3]`` of the rectangle whose corner offsets start at ``corners[k]``: on
    int32 integral images that wrap around, as OpenCV's do, the true sum modulo 2^32."""
    # unsigned indices: numba then adds no negative-index wrap-around test to every read
    return np.int32(flat[np.uint64(base + corners[k])] - flat[np.uint64(base + corners[k + np.uint64(1)])]
                    - flat[np.uint64(base + corners[k + np.uint64(2)])]
                    + flat[np.uint64(base + corners[k + np.uint64(3)])])


@numba.njit(**_INLINE)
def _window_factor(total, squares, base, norm_corners, norm_area):
    """OpenCV's variance normalisation of a Haar window, ``1 / sqrt(area * sum(x^2) - sum(x)^2)`` over its interior
    (double, rounded to float32); 0 for a window OpenCV rejects as (nearly) uniform."""
    window_sum = _rect_sum(total, base, norm_corners, np.uint64(0))
    window_squares = np.uint32(_rect_sum(squares, base, norm_corners, np.uint64(0)))
    spread = norm_area * np.float64(window_squares) - np.float64(window_sum) * np.float64(window_sum)
    if spread > 0.0:
        factor = np.float32(1.0 / np.sqrt(spread))
        if norm_area * np.float64(factor) < 0.1:
            return factor
    return np.float32(0.0)


@numba.njit(**_INLINE)
def _lbp_code(total, base, grid, node):
    """The 8-bit MB-LBP code of a split's block grid (``grid[node]``, 16 corner offsets): a neighbour block whose
    sum is at least the centre's sets its bit, clockwise from the top-left (128) to the left (1)."""
    g = grid[node]
    centre = np.int32(total[base + g[5]] - total[base + g[6]] - total[base + g[9]] + total[base + g[10]])
    code = 0
    # (top-left corner index of the block in the 4x4 grid of corners, bit)
    for corner, bit in ((0, 128), (1, 64), (2, 32), (6, 16), (10, 8), (9, 4), (8, 2), (4, 1)):
        block = np.int32(total[base + g[corner]] - total[base + g[corner + 1]] - total[base + g[corner + 4]]
                         + total[base + g[corner + 5]])
        if block >= centre:
            code |= bit
    return code


@numba.njit(**_JIT)
def scan_rows(total, squares, tilted, stride, lbp, stumps, rows_start, rows_stop, step, columns, norm_corners,
              norm_area, corners, weights, rectangles, is_tilted, grid, stage_weak, stage_threshold, weak_nodes,
              weak_leaves, node_left, node_right, node_threshold, node_subset, leaves, out):
    """Run the cascade on the windows of rows ``rows_start, rows_start + step, ... < rows_stop`` and columns
    ``0, step, ... < columns`` of one scale, as OpenCV's ``runAt`` with its scan loop. Every split carries its own
    feature, in split order (``corners``: 12 integral-image offsets, ``weights``: 3, ``rectangles``, ``is_tilted``,
    or ``grid``: the 16 corners of its LBP blocks), so that the scan reads them in sequence. ``out[row, column]`` gets
    :data:`ACCEPTED`, :data:`REJECTED_FIRST` (the next column is then skipped and keeps ``out``'s value),
    :data:`REJECTED` or, for a Haar window of (nearly) uniform grey, :data:`FLAT`."""
    for y in range(rows_start, rows_stop, step):
        x = 0
        while x < columns:
            base = y * stride + x
            factor = np.float32(1.0)
            result = ACCEPTED
            if not lbp:
                factor = _window_factor(total, squares, base, norm_corners, norm_area)
                if factor == 0.0:
                    result = FLAT
            if result == ACCEPTED:
                for stage in range(stage_threshold.size):
                    total_score = 0.0
                    for w in range(stage_weak[stage], stage_weak[stage + 1]):
                        first = weak_nodes[w]
                        index = 0
                        while True:
                            node = np.uint64(first + index)  # unsigned: no wrap-around test on each read
                            if lbp:
                                code = _lbp_code(total, base, grid, node)
                                left = (node_subset[node, code >> 5] & (np.int32(1) << (code & 31))) != 0
                            else:
                                # the split's feature value in OpenCV's float32 order, ((w0 r0 + w1 r1) + w2 r2) *
                                # factor (written out: as a helper, with the integral image chosen by tilt, the
                                # scan took twice as long)
                                k, j = np.uint64(12) * node, np.uint64(3) * node
                                source = total
                                if is_tilted[node]:
                                    source = tilted
                                value = weights[j] * np.float32(_rect_sum(source, base, corners, k)) \
                                    + weights[j + np.uint64(1)] * np.float32(_rect_sum(source, base, corners,
                                                                                       k + np.uint64(4)))
                                if rectangles[node] == 3:
                                    value = value + weights[j + np.uint64(2)] * np.float32(
                                        _rect_sum(source, base, corners, k + np.uint64(8)))
                                left = value * factor < node_threshold[node]
                            if stumps:  # OpenCV takes a stump's leaf 0 on its left and leaf 1 on its right
                                index = 0 if left else -1
                                break
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


@numba.njit(**_JIT)
def scan_rows_haar_stumps(total, squares, tilted, stride, rows_start, rows_stop, step, columns, norm_corners,
                          norm_area, corners, weights, rectangles, is_tilted, stage_weak, stage_threshold,
                          stump_threshold, stump_leaves, out):
    """:func:`scan_rows` for a Haar cascade of stumps (most of OpenCV's), with each stump's threshold and two
    leaves side by side: the same results, with fewer reads per feature."""
    for y in range(rows_start, rows_stop, step):
        x = 0
        while x < columns:
            base = y * stride + x
            factor = _window_factor(total, squares, base, norm_corners, norm_area)
            result = FLAT if factor == 0.0 else ACCEPTED
            if result == ACCEPTED:
                for stage in range(stage_threshold.size):
                    total_score = 0.0
                    for w in range(stage_weak[stage], stage_weak[stage + 1]):
                        node = np.uint64(w)
                        # as in scan_rows, written out: as a helper it took twice the time of the whole scan
                        k, j = np.uint64(12) * node, np.uint64(3) * node
                        source = total
                        if is_tilted[node]:
                            source = tilted
                        value = weights[j] * np.float32(_rect_sum(source, base, corners, k)) \
                            + weights[j + np.uint64(1)] * np.float32(_rect_sum(source, base, corners,
                                                                               k + np.uint64(4)))
                        if rectangles[node] == 3:
                            value = value + weights[j + np.uint64(2)] * np.float32(
                                _rect_sum(source, base, corners, k + np.uint64(8)))
                        if value * factor < stump_threshold[node]:
                            total_score += np.float64(stump_leaves[np.uint64(2) * node])
                        else:
                            total_score += np.float64(stump_leaves[np.uint64(2) * node + np.uint64(1)])
                    if total_score < np.float64(stage_threshold[stage]):
                        result = REJECTED_FIRST if stage == 0 else REJECTED
                        break
            out[y, x] = result
            if result == REJECTED_FIRST:
                x += step
            x += step


@numba.njit(parallel=True, **_JIT)
def haar_window_values(totals, squares, tilteds, norm_corners, norm_area, corners, weights, rectangles, is_tilted,
                       factors, values):
    """The Haar feature values of windows as :func:`scan_rows` computes them at a window's place in an image:
    row ``n`` of ``totals``, ``squares`` (and ``tilteds``) is window ``n``'s flattened integral images; each of
    the features (``corners``: 12 offsets, ``weights``: 3, ``rectangles``, ``is_tilted``) gets
    ``((w0 r0 + w1 r1) + w2 r2) * factor`` in float32 into ``values[feature, n]``, and ``factors[n]`` the window's
    normalisation (0 for a window OpenCV rejects as flat, whose values are then 0)."""
    for n in numba.prange(totals.shape[0]):
        total, square, tilted = totals[n], squares[n], tilteds[n]
        factor = _window_factor(total, square, np.int64(0), norm_corners, norm_area)
        factors[n] = factor
        for f in range(values.shape[0]):
            node = np.uint64(f)
            k, j = np.uint64(12) * node, np.uint64(3) * node
            source = total
            if is_tilted[node]:
                source = tilted
            value = weights[j] * np.float32(_rect_sum(source, np.int64(0), corners, k)) \
                + weights[j + np.uint64(1)] * np.float32(_rect_sum(source, np.int64(0), corners, k + np.uint64(4)))
            if rectangles[node] == 3:
                value = value + weights[j + np.uint64(2)] * np.float32(
                    _rect_sum(source, np.int64(0), corners, k + np.uint64(8)))
            values[f, n] = value * factor


@numba.njit(parallel=True, **_JIT)
def lbp_window_codes(totals, grid, codes):
    """The MB-LBP codes of windows as :func:`scan_rows` computes them at a window's place in an image: row ``n`` of
    ``totals`` is window ``n``'s flattened integral image; feature ``f`` (``grid[f]``: the 16 corner offsets of its
    3x3 blocks) gets its 8-bit code into ``codes[f, n]``."""
    for n in numba.prange(totals.shape[0]):
        total = totals[n]
        for f in range(codes.shape[0]):
            codes[f, n] = _lbp_code(total, np.int64(0), grid, np.uint64(f))


#: Category weights at most this are empty (no mean of their own), and at most :data:`_SIDE_EPS` add nothing
#: to a side; as OpenCV's boosted trees (``DBL_EPSILON``, ``FLT_EPSILON``).
_EMPTY_EPS, _SIDE_EPS = 2.220446049250313e-16, 1.1920928955078125e-07


@numba.njit(**_INLINE)
def _category_order(row, weights, signed):
    """The 256 categories' weights and label sums over the rows of positive weight, and the categories in the order
    of their mean label (a category without weight counts as mean 0; ties in category order)."""
    category_weights = np.zeros(256)
    category_sums = np.zeros(256)
    for n in range(row.shape[0]):
        if weights[n] > 0.0:
            category_weights[row[n]] += weights[n]
            category_sums[row[n]] += signed[n]
    means = np.zeros(256)
    for c in range(256):
        if abs(category_weights[c]) > _EMPTY_EPS:
            means[c] = category_sums[c] / category_weights[c]
    return category_weights, category_sums, np.argsort(means, kind="mergesort")


@numba.njit(parallel=True, **_JIT)
def category_split_gains(codes, weights, signed, gains, positions):
    """Gentle AdaBoost's best category split of every feature (row of the uint8 ``codes``, labels ``signed /
    weights``): the first ``k + 1`` categories of :func:`_category_order` go left, scored by ``S_L^2 / W_L +
    S_R^2 / W_R`` (``S`` the label sums, ``W`` the weights) at every ``k`` whose category has weight and where
    both sides do. ``gains[f]`` gets the best score (-inf without a split) and ``positions[f]`` its ``k``, the
    first of equal scores. Features are independent: the results do not depend on the threads."""
    for f in numba.prange(codes.shape[0]):
        category_weights, category_sums, order = _category_order(codes[f], weights, signed)
        total_weight, total_sum = category_weights.sum(), category_sums.sum()
        left_weight = left_sum = 0.0
        best, best_position = -np.inf, -1
        for k in range(255):
            c = order[k]
            if category_weights[c] <= _SIDE_EPS:
                continue
            left_weight += category_weights[c]
            left_sum += category_sums[c]
            right_weight, right_sum = total_weight - left_weight, total_sum - left_sum
            if left_weight > _SIDE_EPS and right_weight > _SIDE_EPS:
                gain = left_sum * left_sum / left_weight + right_sum * right_sum / right_weight
                if gain > best:
                    best, best_position = gain, k
        gains[f] = best
        positions[f] = best_position


@numba.njit(**_JIT)
def category_split(row, weights, signed, position):
    """The split :func:`category_split_gains` found at ``position`` for the feature of codes ``row``: which of the 256
    categories go left, and the left and right leaves (the sides' weighted mean labels, summed as there)."""
    category_weights, category_sums, order = _category_order(row, weights, signed)
    total_weight, total_sum = category_weights.sum(), category_sums.sum()
    left = np.zeros(256, np.bool_)
    left_weight = left_sum = 0.0
    for k in range(position + 1):
        c = order[k]
        left[c] = True
        if category_weights[c] > _SIDE_EPS:
            left_weight += category_weights[c]
            left_sum += category_sums[c]
    return left, left_sum / left_weight, (total_sum - left_sum) / (total_weight - left_weight)
