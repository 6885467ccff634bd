"""Compiled categorical splits of gradient trees: a set of a feature's categories goes left, the rest right.

A categorical feature's bins are its categories (one bin per category value,
the missing values' bin a category like the others). A node's candidate sets
are LightGBM's:

- with at most ``max_cat_to_onehot`` categories present in the node, each
  category alone (one against the rest), scored with the trees' ``l2``;
- with more, the categories holding at least ``min_data_per_group`` of the
  node's samples are ordered by their smoothed Newton ratio
  ``sum_k G_k / (H_k + cat_smooth)`` (at float32 precision, ties in bin order), and the first ``j`` of
  that order, from
  either end, go left, for ``j`` up to ``max_cat_threshold`` and half the
  ordered categories; these are scored with ``l2 + cat_l2``.

For one output, ``cat_smooth = cat_l2 = l2 = 0`` and no cap, the ordered
prefixes contain the best of all ``2^(k-1) - 1`` two-way partitions of the
node's categories (Fisher 1958: the Newton gain ``G_L^2/H_L + G_R^2/H_R`` is
maximised by a partition that is contiguous in the order of ``G/H``).
Categories a node does not hold, and values never seen in training, go
right. A set is a bitset of :data:`CATEGORY_WORDS` words over a feature's
bins, so a categorical feature has at most :data:`MAX_CATEGORY_BINS` bins.
"""
from __future__ import annotations

import numba
import numpy as np

from ..exceptions import InvalidValueError
from .newton_gain import ROUNDING_GAIN, bounded_score, child_score, split_gain
from .unliteral import ONE, ZERO

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}
# the scan calls its per-feature search for every categorical feature of every node: inlined, it does not take
# and release its array arguments' references at each call (a tenth of a node's scan on credit-g)
_INLINE = dict(_JIT, inline="always")

#: 64-bit words of a node's category set.
CATEGORY_WORDS = 4

#: Bins a categorical feature may have (its categories, and the missing values' bin).
MAX_CATEGORY_BINS = 64 * CATEGORY_WORDS

#: Largest category value: codes are counts of categories, which a float64 holds exactly far beyond this.
MAX_CATEGORY_VALUE = 2 ** 31 - 1

#: Positions in the parameter vector of :func:`best_category_split`.
SMOOTH, CAT_L2, MAX_THRESHOLD, MAX_ONEHOT, MIN_GROUP = range(5)


def category_parameters(cat_smooth: float, cat_l2: float, max_cat_threshold: int, max_cat_to_onehot: int,
                        min_data_per_group: int) -> np.ndarray:
    """The kernels' float64 parameter vector of categorical splits (see the module's description)."""
    return np.array([cat_smooth, cat_l2, max_cat_threshold, max_cat_to_onehot, min_data_per_group], dtype=np.float64)


def category_ranks(features: np.ndarray, categories: dict[int, np.ndarray]) -> np.ndarray:
    """``features`` with each categorical column replaced by its categories' ranks (NaN stays NaN); the
    array itself without categorical features."""
    if not categories:
        return features
    ranked = features.astype(np.float64) if features.dtype.kind != "f" else features.copy()
    for f, values in categories.items():
        column = ranked[:, f]
        present = ~np.isnan(column)
        column[present] = np.searchsorted(values, column[present])
    return ranked


def category_limit(max_bins: int | None, missing: bool) -> int:
    """The most categories a feature may have: one bin each, within ``max_bins`` and the kernels' sets (the
    missing values' bin takes one)."""
    limit = MAX_CATEGORY_BINS if max_bins is None else min(max_bins, MAX_CATEGORY_BINS)
    return limit - 1 if missing else limit


def checked_categories(f: int, values: np.ndarray, max_bins: int | None, missing: bool) -> np.ndarray:
    """Feature ``f``'s sorted distinct ``values`` (NaN out with ``missing``), checked as categories.

    Raises
    ------
    ValueError
        For a value that is not an integer in ``[0, MAX_CATEGORY_VALUE]``, or more categories than
        :func:`category_limit`.
    """
    limit = category_limit(max_bins, missing)
    bad = values[(values < 0) | (values != np.floor(values)) | (values > MAX_CATEGORY_VALUE)
                 | ~np.isfinite(values)]
    if bad.size:
        raise InvalidValueError(f"categorical_features: feature {f} holds {float(bad[0])!r}; categories must be "
                                f"integers in [0, {MAX_CATEGORY_VALUE}]")
    if values.size > limit:
        raise InvalidValueError(f"categorical_features: feature {f} has {values.size} categories, more than "
                                f"the {limit} a tree can split on (max_bins={max_bins}, "
                                f"missing={'bin' if missing else None!r})")
    return values


@numba.njit(**_JIT)
def has_category(bits, code):
    """Whether bin ``code`` is in the set ``bits``."""
    return (bits[code >> 6] >> np.uint64(code & 63)) & np.uint64(1) == np.uint64(1)


@numba.njit(**_JIT)
def workspace(width, features):
    """Scratch arrays of the categorical scan for histograms of ``width`` columns and ``features`` features,
    made once per tree: :func:`best_category_split`'s six, a bin set, a feature mask and each feature's largest
    gain (:func:`~bob_boost.engine.split_scan.best_split`'s)."""
    return (np.empty(MAX_CATEGORY_BINS, dtype=np.int64), np.empty(MAX_CATEGORY_BINS, dtype=np.int64),
            np.empty(MAX_CATEGORY_BINS), np.empty(2 * MAX_CATEGORY_BINS), np.empty(width), np.empty(width),
            np.zeros(CATEGORY_WORDS, dtype=np.uint64), np.empty(features, dtype=np.bool_), np.empty(features))


@numba.njit(**_INLINE)
def _present_bins(counts, first, stop, present):
    """The bins ``first:stop`` that hold samples, into ``present``; returns how many."""
    n = ZERO  # not a literal 0 (:mod:`.unliteral`): the callers pass the count on
    for g in range(first, stop):
        if counts[g] > 0:
            present[n] = g
            n += 1
    return n


@numba.njit(**_JIT)
def best_category_split(sums, counts, first, stop, total, count, regularization, min_samples, min_hessian,
                        tie_tolerance, params, lower, upper, missing, bits, work):
    """The best category set of a feature whose bins are ``first:stop`` (histogram rows ``g``) in a node
    of ``count`` samples with (2K,) sums ``total``: returns its gain (-1: none) and writes it into ``bits``.

    Each side needs ``min_samples`` samples and a hessian sum of ``min_hessian``; with one output the
    children's values are clipped to ``[lower, upper]`` (monotone bounds of the node), as numeric splits are.
    The first set in scan order (one-vs-rest in bin order; prefixes from the front, then the back, shortest
    first) within ``tie_tolerance`` (relative) of the largest gain wins, so that sums rounded in another
    order (on partitions) choose the same set. With ``missing`` (the last bin holds NaN), a set of the
    missing values alone is turned around: the node's categories go left and NaN right (the same partition
    of the node), so that every categorical split sends some category left.
    """
    width = sums.shape[1]
    outputs = width // 2
    bits[:] = 0
    present, ordered, keys, gains, left, right = work[0], work[1], work[2], work[3], work[4], work[5]
    n = _present_bins(counts, first, stop, present)
    if n < 2:
        return -1.0
    if n <= params[MAX_ONEHOT]:
        parent = child_score(total, outputs, regularization, lower, upper)
        for j in range(n):
            p = present[j]
            for v in range(width):
                left[v] = sums[p, v]
            gains[j] = split_gain(total, left, count, counts[p], outputs, regularization, min_samples, min_hessian,
                                  lower, upper, parent, right)
        if n == 2:  # the second category alone is the first's partition again
            gains[1] = -1.0
        pick = _first_within(gains, n, tie_tolerance, parent)
        if pick < 0:
            return -1.0
        _add(bits, present[pick] - first)
        _turn_missing_around(bits, present, n, first, stop - first - 1, missing)
        return gains[pick]
    m = ZERO
    for j in range(n):
        p = present[j]
        if counts[p] >= params[MIN_GROUP]:
            key = 0.0
            for k in range(outputs):
                key += sums[p, k] / (sums[p, outputs + k] + params[SMOOTH])
            ordered[m] = present[j]
            # ratios equal but for the rounding of sums added in another order (on partitions) must sort
            # alike: compared at float32 precision, such ties keep the bins' order
            keys[m] = np.float32(key)
            m += 1
    if m < 1:
        return -1.0
    _sort_by_keys(ordered, keys, m)
    most = min(int(params[MAX_THRESHOLD]), (m + 1) // 2)
    regularization = regularization + params[CAT_L2]
    parent = child_score(total, outputs, regularization, lower, upper)
    size = min(most, m)
    for direction in range(2):
        left[:] = 0.0
        left_count = 0
        for i in range(size):
            g = ordered[i] if direction == 0 else ordered[m - 1 - i]
            for v in range(width):
                left[v] += sums[g, v]
            left_count += counts[g]
            gains[direction * size + i] = split_gain(total, left, count, left_count, outputs, regularization,
                                                     min_samples, min_hessian, lower, upper, parent, right)
            if direction == 1 and m - (i + 1) <= size:
                # the front's prefix of the other m - i - 1 is this partition, summed the other way round:
                # scoring it once keeps rounding from choosing between the two
                gains[size + i] = -1.0
    pick = _first_within(gains, 2 * size, tie_tolerance, parent)
    if pick < 0:
        return -1.0
    direction, length = pick // size, pick % size + 1
    for i in range(length):
        _add(bits, (ordered[i] if direction == 0 else ordered[m - 1 - i]) - first)
    _turn_missing_around(bits, present, n, first, stop - first - 1, missing)
    return gains[pick]


@numba.njit(**_JIT)
def _single_gain(gradient, hessian, count, left_gradient, left_hessian, left_count, regularization, min_samples,
                 min_hessian, lower, upper, parent):
    """:func:`~bob_boost.engine.newton_gain.split_gain` of one output, in scalars (the same operations in the
    same order, so the same gain)."""
    if left_count < min_samples or count - left_count < min_samples:
        return -1.0
    right_gradient = gradient - left_gradient
    right_hessian = hessian - left_hessian
    if left_hessian < min_hessian or right_hessian < min_hessian:
        return -1.0
    if lower > -np.inf or upper < np.inf:
        children = (bounded_score(left_gradient, left_hessian, regularization, lower, upper)[0]
                    + bounded_score(right_gradient, right_hessian, regularization, lower, upper)[0])
    else:
        children = ((0.0 + left_gradient * left_gradient / (left_hessian + regularization))
                    + (0.0 + right_gradient * right_gradient / (right_hessian + regularization)))
    value = children - parent
    if value <= ROUNDING_GAIN * abs(children):
        return -1.0
    return value


@numba.njit(**_INLINE)
def _category_gain_single(sums, counts, first, stop, total, count, regularization, min_samples, min_hessian,
                          tie_tolerance, params, lower, upper, present, ordered, keys, gains):
    """The gain :func:`best_category_split` returns for a histogram of one output (two columns), computed in
    scalars without the set: the split scan's hot path, where a node scores every categorical feature and only
    the winner's set is made."""
    gradient, hessian = total[0], total[1]
    n = _present_bins(counts, first, stop, present)
    if n < 2:
        return -1.0
    if n <= params[MAX_ONEHOT]:
        parent = child_score(total, ONE, regularization, lower, upper)
        for j in range(n):
            p = present[j]
            gains[j] = _single_gain(gradient, hessian, count, sums[p, 0], sums[p, 1], counts[p], regularization,
                                    min_samples, min_hessian, lower, upper, parent)
        if n == 2:
            gains[1] = -1.0
        pick = _first_within(gains, n, tie_tolerance, parent)
        return -1.0 if pick < 0 else gains[pick]
    m = ZERO
    for j in range(n):
        p = present[j]
        if counts[p] >= params[MIN_GROUP]:
            ordered[m] = p
            keys[m] = np.float32(0.0 + sums[p, 0] / (sums[p, 1] + params[SMOOTH]))
            m += 1
    if m < 1:
        return -1.0
    _sort_by_keys(ordered, keys, m)
    size = min(int(params[MAX_THRESHOLD]), (m + 1) // 2, m)
    regularization = regularization + params[CAT_L2]
    parent = child_score(total, ONE, regularization, lower, upper)
    for direction in range(2):
        left_gradient = 0.0
        left_hessian = 0.0
        left_count = 0
        for i in range(size):
            g = ordered[i] if direction == 0 else ordered[m - 1 - i]
            left_gradient += sums[g, 0]
            left_hessian += sums[g, 1]
            left_count += counts[g]
            gains[direction * size + i] = (-1.0 if direction == 1 and m - (i + 1) <= size else
                                           _single_gain(gradient, hessian, count, left_gradient, left_hessian,
                                                        left_count, regularization, min_samples, min_hessian,
                                                        lower, upper, parent))
    pick = _first_within(gains, 2 * size, tie_tolerance, parent)
    return -1.0 if pick < 0 else gains[pick]


#: Most categories a node's ordering sorts by insertion (allocation-free, quadratic); more take a merge sort.
INSERTION_SORT_MOST = 32


@numba.njit(**_JIT)
def _sort_by_keys(ordered, keys, m):
    """Sort ``ordered[:m]`` by ``keys[:m]`` in place, stably (equal keys keep their order), NaN last: numpy's
    merge sort, or for a few categories the insertion sort that gives the same order without allocating."""
    if m > INSERTION_SORT_MOST:
        order = np.argsort(keys[:m], kind="mergesort")
        ordered[:m] = ordered[:m][order]
        keys[:m] = keys[:m][order]
        return
    for i in range(1, m):
        key, item = keys[i], ordered[i]
        j = i - 1
        while j >= 0 and (keys[j] > key or (np.isnan(keys[j]) and not np.isnan(key))):
            keys[j + 1], ordered[j + 1] = keys[j], ordered[j]
            j -= 1
        keys[j + 1], ordered[j + 1] = key, item


@numba.njit(**_JIT)
def _first_within(gains, n, tie_tolerance, parent):
    """The first of ``gains[:n]`` within ``tie_tolerance`` of the largest positive one, relative to the
    children's scores (the largest gain plus the ``parent``'s score, whose difference a gain is); -1 if none."""
    top = 0.0
    for j in range(n):
        top = max(top, gains[j])
    if top <= 0:
        return -1
    for j in range(n):
        if gains[j] > 0 and gains[j] >= top - tie_tolerance * (top + abs(parent)):
            return j
    return -1


@numba.njit(**_JIT)
def _add(bits, code):
    bits[code >> 6] |= np.uint64(1) << np.uint64(code & 63)


@numba.njit(**_JIT)
def _turn_missing_around(bits, present, n, first, missing_code, missing):
    """With ``missing``, a set holding the missing values' bin alone becomes the ``present[:n]`` bins (global:
    less ``first``) but that one."""
    if not missing or not has_category(bits, missing_code):
        return
    for j in range(n):
        if present[j] - first != missing_code and has_category(bits, present[j] - first):
            return
    bits[:] = 0
    for j in range(n):
        if present[j] - first != missing_code:
            _add(bits, present[j] - first)


@numba.njit(**_JIT)
def scan_categories(sums, counts, mode_bins, offsets, total, count, regularization, min_samples, min_hessian,
                    tie_tolerance, missing, gains, allowed, categorical, params, lower, upper, work):
    """Every allowed categorical feature's best set gain into ``gains`` at its first bin (side 0; its other
    entries -1), as :func:`~bob_boost.engine.split_scan.best_split` reads them; returns the largest (0 if none).

    A feature needs two value bins (the missing values' bin is not one), as a numeric split does.
    """
    bits, feature_top = work[6], work[8]
    present, ordered, keys, scores = work[0], work[1], work[2], work[3]
    single = sums.shape[1] == 2
    top = 0.0
    for f in range(offsets.size - 1):
        if not (allowed[f] and categorical[f]):
            continue
        for g in range(offsets[f], offsets[f + 1]):
            gains[2 * g] = -1.0
            gains[2 * g + 1] = -1.0
        feature_top[f] = -1.0
        if offsets[f + 1] - offsets[f] - (1 if missing else 0) < 2:
            continue
        if mode_bins[f] >= 0 and counts[offsets[f] + mode_bins[f]] == count:
            continue
        if single:
            value = _category_gain_single(sums, counts, offsets[f], offsets[f + 1], total, count, regularization,
                                          min_samples, min_hessian, tie_tolerance, params, lower, upper, present,
                                          ordered, keys, scores)
        else:
            value = best_category_split(sums, counts, offsets[f], offsets[f + 1], total, count, regularization,
                                        min_samples, min_hessian, tie_tolerance, params, lower, upper, missing,
                                        bits, work)
        gains[2 * offsets[f]] = value
        feature_top[f] = value
        top = max(top, value)
    return top


@numba.njit(**_JIT)
def partition_by_set(order, buffer, start, stop, feature_codes, bits):
    """Split ``order[start:stop]`` stably into the rows whose code is in the set ``bits`` (left), then the others;
    returns the boundary. Branch-free, as the numeric partition (where a row goes is data)."""
    middle = start
    moved = 0
    for p in range(start, stop):
        i = order[p]
        code = np.intp(feature_codes[i])
        step = np.intp((bits[code >> 6] >> np.uint64(code & 63)) & np.uint64(1)) ^ 1  # 1: right
        buffer[moved] = i
        order[middle] = i  # middle <= p: that entry has been read
        moved += step
        middle += 1 - step
    for q in range(moved):
        order[middle + q] = buffer[q]
    return middle
