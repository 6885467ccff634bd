"""Compiled evaluation of whole stump and look-up-table ensembles, in threads over rows.

Each row starts from the baseline and adds ``weight * output`` round by
round, the same floating-point operations in the same order as
:meth:`bob_boost.BoostedMachine.staged_decision_scores` (no fused
multiply-add, no reordering), so both give identical scores. Features are
compared in float64 against the float64 thresholds, as training does.
"""
from __future__ import annotations

import numba
import numpy as np

from .._validation import sum_is_finite
from .threads import run_blocks

#: Rows per block (fixed, so that blocks and results do not depend on the thread count).
BLOCK_ROWS = 1 << 14

#: Rows a stump ensemble is evaluated on at once, round by round (their feature rows stay in cache).
_TILE_ROWS = 512

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}


@numba.njit(**_JIT)
def _stump_rows(features, indices, thresholds, polarities, missing, weights, baseline, block, out):
    # tiles of rows, round by round: every row still adds the baseline, then the rounds in order, but
    # one round's comparisons over a tile run back to back (a few times faster than row by row)
    start = block * BLOCK_ROWS
    stop = min(start + BLOCK_ROWS, features.shape[0])
    scores = np.empty(_TILE_ROWS)
    for tile in range(start, stop, _TILE_ROWS):
        end = min(tile + _TILE_ROWS, stop)
        size = end - tile
        for j in range(size):
            scores[j] = 0.0 + baseline
        for r in range(indices.size):
            column, threshold, weight = indices[r], thresholds[r], weights[r]
            high, low = weight * polarities[r], weight * -polarities[r]
            nan_high = missing[r] == 1
            for j in range(size):
                value = np.float64(features[tile + j, column])
                above = value >= threshold
                if value != value and missing[r] >= 0:  # NaN: the side the stump learnt
                    above = nan_high
                scores[j] += high if above else low
        for j in range(size):
            out[tile + j, 0] = scores[j]


@numba.njit(**_JIT)
def _lut_rows(features, indices, tables, missing_rows, weights, baseline, block, out):
    start = block * BLOCK_ROWS
    stop = min(start + BLOCK_ROWS, features.shape[0])
    outputs = out.shape[1]
    for i in range(start, stop):
        row = features[i]
        for k in range(outputs):
            out[i, k] = 0.0 + baseline[k]
        for r in range(indices.shape[0]):
            for k in range(outputs):
                value = row[indices[r, k]]
                # NaN (a missing value) reads its own row; a machine without one never sees NaN
                entry = missing_rows[r] if value != value else np.int64(value)
                out[i, k] += weights[r, k] * tables[r, entry, k]


#: Rows that go through every tree together in :func:`_tree_rows`: a tree's nodes are read once for all of
#: them, and their features (at most a few hundred kilobytes) stay in cache from one tree to the next.
TREE_ROWS = 256


@numba.njit(**_JIT)
def _tree_rows(features, node_features, thresholds, left, right, missing_right, node_values, round_trees, roots,
               weights, baseline, block, out):
    start = block * BLOCK_ROWS
    stop = min(start + BLOCK_ROWS, features.shape[0])
    outputs = out.shape[1]
    round_output = np.empty((TREE_ROWS, outputs))
    leaf = np.empty(TREE_ROWS, dtype=np.int64)
    for first in range(start, stop, TREE_ROWS):
        last = min(first + TREE_ROWS, stop)
        for i in range(first, last):
            for k in range(outputs):
                out[i, k] = 0.0 + baseline[k]
        for r in range(weights.shape[0]):
            # the weak machine's output: the leaf values of its trees, added in tree order (tree by tree for
            # the rows together; each row's sums are the same as row by row)
            for t in range(round_trees[r], round_trees[r + 1]):
                root = roots[t]
                for i in range(first, last):
                    row = features[i]
                    node = root
                    while node_features[node] >= 0:
                        value = np.float64(row[node_features[node]])
                        # NaN compares false, so it goes left unless the node learnt to send it right
                        if value >= thresholds[node] or (missing_right[node] and value != value):
                            node = right[node]
                        else:
                            node = left[node]
                    leaf[i - first] = node
                for q in range(last - first):
                    for k in range(outputs):
                        value = node_values[leaf[q], k]
                        round_output[q, k] = value if t == round_trees[r] else round_output[q, k] + value
            for i in range(first, last):
                for k in range(outputs):
                    out[i, k] += weights[r, k] * round_output[i - first, k]


def tree_missing_left(machines) -> np.ndarray | None:
    """The machines' per-node NaN directions concatenated in node-table order (int8), or None.

    Entry ``i`` is 1 where NaN goes left, 0 where it goes right, -1 for a node of a machine
    without missing-value handling (``missing_left is None``); None when no machine has it.
    """
    directions = [getattr(machine, "missing_left", None) for machine in machines]
    if all(d is None for d in directions):
        return None
    return np.concatenate([np.full(m.features.size, -1, dtype=np.int8) if d is None else d.astype(np.int8)
                           for m, d in zip(machines, directions)])


def tree_scores(features: np.ndarray, node_features: np.ndarray, thresholds: np.ndarray, left: np.ndarray,
                right: np.ndarray, node_values: np.ndarray, round_trees: np.ndarray, roots: np.ndarray,
                weights: np.ndarray, baseline: np.ndarray, n_threads: int,
                missing_left: np.ndarray | None = None) -> np.ndarray | None:
    """(#samples, #outputs) scores of a tree ensemble stored as one node table.

    Round ``r`` owns trees ``round_trees[r]:round_trees[r + 1]`` (their first nodes in ``roots``); its
    output is the sum of the leaf rows of ``node_values`` its trees reach, weighted by ``weights[r]``.
    ``missing_left`` (:func:`tree_missing_left`) routes NaN as each node learnt; without it NaN
    cannot be routed, so for features holding NaN the function returns None and the caller takes
    the machines' own (numpy) path, which gives the same scores.
    """
    if missing_left is None:
        if _has_nan(features, node_features[node_features >= 0]):
            return None
        missing_right = np.zeros(node_features.size, dtype=np.bool_)
    else:
        missing_right = np.asarray(missing_left) == 0
    out = np.empty((features.shape[0], weights.shape[1]))
    blocks = [(features, node_features, thresholds, left, right, missing_right, node_values, round_trees, roots,
               weights, baseline, b, out) for b in range(-(-features.shape[0] // BLOCK_ROWS))]
    run_blocks(_tree_rows, blocks, n_threads)
    return out


def stump_scores(features: np.ndarray, indices: np.ndarray, thresholds: np.ndarray, polarities: np.ndarray,
                 missing: np.ndarray, weights: np.ndarray, baseline: float, n_threads: int) -> np.ndarray:
    """(#samples, 1) scores of a stump ensemble (one entry per round in each array).

    ``missing[r]``: where stump ``r`` sends NaN (1 above, 0 below, -1 no missing-value handling).
    """
    out = np.empty((features.shape[0], 1))
    blocks = [(features, indices, thresholds, polarities, missing, weights, baseline, b, out)
              for b in range(-(-features.shape[0] // BLOCK_ROWS))]
    run_blocks(_stump_rows, blocks, n_threads)
    return out


def lut_missing_rows(machines) -> np.ndarray | None:
    """(R,) row of each LUT machine's table that NaN reads (-1 for a machine without one), or None if none has."""
    rows = [machine.number_of_values if getattr(machine, "missing_entry", False) else -1 for machine in machines]
    return None if max(rows) < 0 else np.array(rows, dtype=np.int64)


def _has_nan(features: np.ndarray, columns: np.ndarray) -> bool:
    """Whether any of ``columns`` of ``features`` holds NaN (one sum first: usually there is none)."""
    if features.dtype.kind != "f" or sum_is_finite(features):
        return False
    return bool(np.isnan(features[:, np.unique(columns)]).any())


def lut_scores(features: np.ndarray, indices: np.ndarray, tables: np.ndarray, weights: np.ndarray,
               baseline: np.ndarray, n_threads: int, missing_rows: np.ndarray | None = None) -> np.ndarray | None:
    """(#samples, #outputs) scores of a LUT ensemble: ``indices`` (R, K), ``tables`` (R, V, K), ``weights`` (R, K).

    ``missing_rows`` (:func:`lut_missing_rows`) gives the table row NaN reads in each round; without
    it NaN cannot be looked up, so for features holding NaN in a column read the function returns
    None and the caller takes the machines' own (numpy) path, which gives the same scores.
    """
    if missing_rows is None:
        if _has_nan(features, indices.ravel()):
            return None
        missing_rows = np.full(indices.shape[0], -1, dtype=np.int64)
    out = np.empty((features.shape[0], indices.shape[1]))
    blocks = [(features, indices, tables, missing_rows, weights, baseline, b, out)
              for b in range(-(-features.shape[0] // BLOCK_ROWS))]
    run_blocks(_lut_rows, blocks, n_threads)
    return out
