"""Compiled kernels of the face detector: Haar feature pools quantised on the fly, and cascade scanning.

Like the histogram engine's kernels (:mod:`bob_boost.engine.kernels`) they are ``nogil`` and called on
blocks by :func:`bob_boost.engine.threads.run_blocks`; no ``fastmath``, so every value is the same for every
blocking and thread count.
"""
from __future__ import annotations

import numba
import numpy as np

from ..engine.kernels import _count_at_most

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}

#: Width of the +inf-padded threshold rows (the engine's unrolled search needs 256).
PADDED_WIDTH = 256


@numba.njit(**_JIT)
def _feature_row(indptr, indices, data, feature, integrals, inverse_deviation, out):
    """Values of one feature for every window: its corner terms in a fixed order, then the deviation."""
    out[:] = 0.0
    for k in range(indptr[feature], indptr[feature + 1]):
        corner, c = indices[k], data[k]
        row = integrals[corner]
        for n in range(out.size):
            out[n] += c * row[n]
    for n in range(out.size):
        out[n] *= inverse_deviation[n]


@numba.njit(**_JIT)
def _row_thresholds(values, max_bins, out):
    """Thresholds cutting ``values`` into at most ``max_bins`` bins; returns how many (``out`` is padded +inf).

    One bin per distinct value when there are at most ``max_bins``, otherwise cuts at the sorted positions
    ``k * n / max_bins`` (skipping cuts inside a run of equal values). Each threshold lies strictly above
    the value below it and at most the value above, so ``#(thresholds <= x)`` separates them.
    """
    ordered = np.sort(values)
    n = ordered.size
    distinct = 1
    for i in range(1, n):
        if ordered[i] != ordered[i - 1]:
            distinct += 1
    out[:] = np.inf
    count = 0
    if distinct <= max_bins:
        for i in range(1, n):
            if ordered[i] != ordered[i - 1]:
                out[count] = _midpoint(ordered[i - 1], ordered[i])
                count += 1
        return count
    for k in range(1, max_bins):
        p = (k * n) // max_bins
        if p <= 0 or ordered[p] == ordered[p - 1]:
            continue
        t = _midpoint(ordered[p - 1], ordered[p])
        if count == 0 or t > out[count - 1]:
            out[count] = t
            count += 1
    return count


@numba.njit(**_JIT)
def _midpoint(low, high):
    t = low + 0.5 * (high - low)
    return t if t > low else high


@numba.njit(**_JIT)
def quantize_pool(indptr, indices, data, fit_integrals, fit_inverse, other_integrals, other_inverse,
                  sample, max_bins, start, stop, fit_codes, other_codes, counts):
    """Codes of features ``start:stop`` for the fitting windows and the other windows.

    Each feature's thresholds come from its values on the fitting windows ``sample`` only; both sets of
    windows are coded against them (``code = #(thresholds <= value)``). Codes are written feature-major,
    and each feature's number of thresholds to ``counts``.
    """
    fit_values = np.empty(fit_inverse.size)
    other_values = np.empty(other_inverse.size)
    edges = np.empty(PADDED_WIDTH)
    for f in range(start, stop):
        _feature_row(indptr, indices, data, f, fit_integrals, fit_inverse, fit_values)
        counts[f] = _row_thresholds(fit_values[sample], max_bins, edges)
        for n in range(fit_values.size):
            fit_codes[f, n] = _count_at_most(edges, fit_values[n])
        if other_values.size:
            _feature_row(indptr, indices, data, f, other_integrals, other_inverse, other_values)
            for n in range(other_values.size):
                other_codes[f, n] = _count_at_most(edges, other_values[n])


@numba.njit(**_JIT)
def pool_thresholds(indptr, indices, data, feature, fit_integrals, fit_inverse, sample, max_bins):
    """The thresholds :func:`quantize_pool` codes ``feature`` with (the same values, the same rule)."""
    values = np.empty(fit_inverse.size)
    edges = np.empty(PADDED_WIDTH)
    _feature_row(indptr, indices, data, feature, fit_integrals, fit_inverse, values)
    count = _row_thresholds(values[sample], max_bins, edges)
    return edges[:count].copy()


@numba.njit(**_JIT)
def scan_windows(integral, squared, bases, window_corners, area, minimum_deviation, corners, coefficients,
                 weak_threshold, weak_above, weak_below, stage_ends, stage_thresholds, start, stop,
                 passed, scores, evaluated):
    """Run the cascade on windows ``start:stop`` of one image at one scale.

    ``integral`` and ``squared`` are the image's flattened integral images; window ``i`` starts at flat
    position ``bases[i]``, and its own corners are ``bases[i] + window_corners`` (bottom-right, top-right,
    bottom-left, top-left). Stump ``j`` evaluates the feature whose rectangle ``r`` has corners
    ``bases[i] + corners[j, r]`` and factor ``coefficients[j, r]`` (0 ends the list). A stage's score is
    the sum of its stumps' outputs (``weak_above`` where the feature value is at least
    ``weak_threshold``, else ``weak_below``; weights and baselines folded in); a window below a stage's
    threshold is rejected there. Writes the number of stages passed, the last stage's score minus its
    threshold and the number of stumps evaluated.
    """
    for i in range(start, stop):
        base = bases[i]
        br, tr, bl, tl = (base + window_corners[0], base + window_corners[1], base + window_corners[2],
                          base + window_corners[3])
        mean = (integral[br] - integral[tr] - integral[bl] + integral[tl]) / area
        variance = (squared[br] - squared[tr] - squared[bl] + squared[tl]) / area - mean * mean
        deviation = np.sqrt(variance) if variance > 0.0 else 0.0
        if deviation < minimum_deviation:
            deviation = minimum_deviation
        inverse = 1.0 / deviation
        weak = 0
        margin = 0.0
        stage = 0
        while stage < stage_ends.size:
            score = 0.0
            while weak < stage_ends[stage]:
                value = 0.0
                for r in range(coefficients.shape[1]):
                    c = coefficients[weak, r]
                    if c == 0.0:
                        break
                    value += c * (integral[base + corners[weak, r, 0]] - integral[base + corners[weak, r, 1]]
                                  - integral[base + corners[weak, r, 2]] + integral[base + corners[weak, r, 3]])
                score += weak_above[weak] if value * inverse >= weak_threshold[weak] else weak_below[weak]
                weak += 1
            margin = score - stage_thresholds[stage]
            if margin < 0.0:
                break
            stage += 1
        passed[i] = stage
        scores[i] = margin
        evaluated[i] = weak


@numba.njit(**_JIT)
def _root(parent, i):
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@numba.njit(**_JIT)
def similar_box_roots(order, keys, class_starts, class_w, class_h, column, row, y_span, x_span, eps):
    """Connected components of OpenCV's box similarity, for integer boxes grouped by size class.

    Boxes are listed by ``order``, sorted by size class then ``key = column * y_span + row`` (``column``
    and ``row`` are the boxes' x and y minus their minima). Two boxes of classes of sizes (w1, h1) and
    (w2, h2) are similar when each side differs by at most ``delta = eps * (min(w1, w2) + min(h1, h2)) / 2``;
    for a box, the similar ones of a class lie in a rectangle of offsets, found column by column with
    binary searches. Returns every box's component root (its smallest index).
    """
    n = order.size
    parent = np.arange(n)
    classes = class_w.size
    for a in range(classes):
        for b in range(a, classes):
            delta = eps * (min(class_w[a], class_w[b]) + min(class_h[a], class_h[b])) * 0.5
            dw, dh = class_w[a] - class_w[b], class_h[a] - class_h[b]
            low_x, high_x = np.ceil(max(-delta, dw - delta)), np.floor(min(delta, dw + delta))
            low_y, high_y = np.ceil(max(-delta, dh - delta)), np.floor(min(delta, dh + delta))
            if low_x > high_x or low_y > high_y:
                continue
            keys_b = keys[class_starts[b]:class_starts[b + 1]]
            for p in range(class_starts[a], class_starts[a + 1]):
                i = order[p]
                y0, y1 = max(row[i] + int(low_y), 0), min(row[i] + int(high_y), y_span - 1)
                if y0 > y1:
                    continue
                for c in range(max(column[i] + int(low_x), 0), min(column[i] + int(high_x), x_span - 1) + 1):
                    start = np.searchsorted(keys_b, c * y_span + y0)
                    stop = np.searchsorted(keys_b, c * y_span + y1, side="right")
                    for q in range(start, stop):
                        j = order[class_starts[b] + q]
                        ri, rj = _root(parent, i), _root(parent, j)
                        if ri != rj:
                            parent[max(ri, rj)] = min(ri, rj)
    for i in range(n):
        parent[i] = _root(parent, i)
    return parent
