"""Compiled evaluation of whole stump, look-up-table and tree ensembles, in threads over rows.

Each row starts from the baseline and adds ``weight * output`` round by
round, the same floating-point operations in the same order as
:meth:`bob_boost.BoostedMachine.staged_decision_scores` (no fused
multiply-add, no reordering), so both give identical scores. Features are
compared in float64 against the float64 thresholds, as training does.
"""
from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np

from .._validation import sum_is_finite
from .threads import run_blocks

#: Most rows of a block (:func:`row_ranges`). Every row's score is computed alone, so the blocks never change it.
BLOCK_ROWS = 1 << 14

#: Rough cost in nanoseconds of one row through one weak machine on one thread (a stump, one output of a look-up
#: table, a tree; MNIST's on xeon-avx512: 1.5, 1.3 and 20), and the work below which prediction stays in the
#: caller's thread: waking the pool's threads and waiting for them cost up to a few hundred microseconds.
STUMP_NS, LUT_NS, TREE_NS = 1.5, 1.5, 20
PARALLEL_NS = 500_000

#: Rows a stump ensemble is evaluated on at once, round by round (their feature rows stay in cache).
_TILE_ROWS = 512

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}


@numba.njit(**_JIT)
def _stump_rows(features, indices, thresholds, polarities, missing, weights, baseline, start, stop, out):
    # tiles of rows, round by round: every row still adds the baseline, then the rounds in order, but
    # one round's comparisons over a tile run back to back (a few times faster than row by row)
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
def _lut_rows(features, indices, tables, missing_rows, weights, baseline, start, stop, out):
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
#: them, and their features stay in cache from one tree to the next.
TREE_ROWS = 128

#: A node's word in :func:`breadth_first`'s layout: its first child's index above bit 32, bit 31 set when
#: NaN goes right, its feature below.
_CHILD_SHIFT = 32
_NAN_RIGHT_BIT = 31
_FEATURE_MASK = (1 << 31) - 1


@numba.njit(**_JIT)
def _node_leaves(features, node_features, thresholds, left, right, missing_left, has_missing, category_offsets,
                 category_values, roots, out):
    categorised = category_offsets.size > 0
    for i in range(features.shape[0]):
        for t in range(roots.size):
            node = roots[t]
            while node_features[node] >= 0:
                value = features[i, node_features[node]]
                if value != value:  # NaN: where missing_left says, else left (it compares false)
                    go_left = missing_left[node] if has_missing else True
                elif categorised and category_offsets[node + 1] > category_offsets[node]:
                    values = category_values[category_offsets[node]:category_offsets[node + 1]]
                    at = np.searchsorted(values, value)
                    go_left = at < values.size and values[at] == value
                else:
                    go_left = not value >= thresholds[node]
                node = left[node] if go_left else right[node]
            out[i, t] = node


def node_leaves(features: np.ndarray, node_features: np.ndarray, thresholds: np.ndarray, left: np.ndarray,
                right: np.ndarray, missing_left: np.ndarray | None, roots: np.ndarray,
                categories: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """(#samples, #trees) the leaf every row reaches in every tree of validated node arrays (rows go right where
    ``x[feature] >= threshold``; NaN where ``missing_left`` says, or left without it). ``categories``
    ``(offsets, values)``: node ``i``'s sorted category values ``values[offsets[i]:offsets[i + 1]]`` go left
    and every other value right (no values: a numeric node)."""
    out = np.empty((features.shape[0], roots.size), dtype=np.int64)
    has_missing = missing_left is not None
    offsets, values = categories if categories is not None else (np.empty(0, dtype=np.int64), np.empty(0))
    _node_leaves(features, node_features, thresholds, left, right,
                 missing_left if has_missing else np.zeros(1, dtype=np.bool_), has_missing, offsets, values, roots,
                 out)
    return out


@numba.njit(cache=True)
def breadth_first(node_features, thresholds, left, right, missing_right, roots):
    """Each tree's nodes renumbered breadth first, so that a node's children are adjacent.

    Returns ``(words, node_thresholds, old, new_roots, depths)``: one int64 word per node (see
    :data:`_CHILD_SHIFT`), the thresholds in the new order, the old index of every new node, each
    tree's new root and each tree's depth. A leaf's word names the leaf itself and its threshold is NaN, so a
    step from a leaf stays on it: rows that reach their leaves early wait there while the others go on.
    """
    size = node_features.size
    depth = np.zeros(size, dtype=np.int64)
    tree_depth = np.zeros(roots.size, dtype=np.int64)
    words = np.empty(size, dtype=np.int64)
    node_thresholds = np.full(size, np.nan)
    old = np.empty(size, dtype=np.int64)
    new_roots = np.empty(roots.size, dtype=np.int64)
    placed = 0
    for t in range(roots.size):
        head = new_roots[t] = placed
        old[placed] = roots[t]
        placed += 1
        while head < placed:
            node = old[head]
            if node_features[node] >= 0:
                words[head] = ((placed << _CHILD_SHIFT) | (np.int64(missing_right[node]) << _NAN_RIGHT_BIT)
                               | node_features[node])
                node_thresholds[head] = thresholds[node]
                old[placed], old[placed + 1] = left[node], right[node]
                depth[placed] = depth[placed + 1] = depth[head] + 1
                tree_depth[t] = max(tree_depth[t], depth[head] + 1)
                placed += 2
            else:
                words[head] = head << _CHILD_SHIFT
            head += 1
    return words, node_thresholds, old, new_roots, tree_depth


@numba.njit(**_JIT)
def _step(row, words, thresholds, node):
    # NaN compares false, so it goes left unless the node learnt to send it right; the child index
    # is computed rather than branched to, as the branch would be mispredicted about half the time
    word = words[node]
    value = np.float64(row[word & _FEATURE_MASK])
    nan_right = (word >> _NAN_RIGHT_BIT) & 1 == 1
    return (word >> _CHILD_SHIFT) + np.int64((value >= thresholds[node]) | (nan_right & (value != value)))


@numba.njit(**_JIT)
def _leaves(features, words, thresholds, root, depth, first, last, leaf):
    # eight rows go down the tree together, each node index in a variable of its own (a register): their
    # chains of dependent loads overlap, where one row at a time would wait on every load. They take the
    # tree's depth in steps, without asking whether they reached a leaf: eight such tests a step cost more
    # than the steps they save (MNIST's 31-leaf trees predicted 7% faster)
    i = first
    while i + 8 <= last:
        rows = features[i:i + 8]
        n0 = n1 = n2 = n3 = n4 = n5 = n6 = n7 = root
        for _ in range(depth):
            n0 = _step(rows[0], words, thresholds, n0)
            n1 = _step(rows[1], words, thresholds, n1)
            n2 = _step(rows[2], words, thresholds, n2)
            n3 = _step(rows[3], words, thresholds, n3)
            n4 = _step(rows[4], words, thresholds, n4)
            n5 = _step(rows[5], words, thresholds, n5)
            n6 = _step(rows[6], words, thresholds, n6)
            n7 = _step(rows[7], words, thresholds, n7)
        q = i - first
        leaf[q], leaf[q + 1], leaf[q + 2], leaf[q + 3] = n0, n1, n2, n3
        leaf[q + 4], leaf[q + 5], leaf[q + 6], leaf[q + 7] = n4, n5, n6, n7
        i += 8
    for tail in range(i, last):
        node = root
        for _ in range(depth):
            node = _step(features[tail], words, thresholds, node)
        leaf[tail - first] = node


@numba.njit(**_JIT)
def _tree_rows(features, words, thresholds, node_values, round_trees, roots, depths, tree_columns, weights, baseline,
               start, stop, out):
    outputs = out.shape[1]
    round_output = np.empty((TREE_ROWS, outputs))
    leaf = np.empty(TREE_ROWS, dtype=np.int64)
    for first in range(start, stop, TREE_ROWS):
        last = min(first + TREE_ROWS, stop)
        for i in range(first, last):
            for k in range(outputs):
                out[i, k] = 0.0 + baseline[k]
        for r in range(weights.shape[0]):
            if round_trees[r + 1] - round_trees[r] == 1:  # the tree's leaf row is the round's output
                _leaves(features, words, thresholds, roots[round_trees[r]], depths[round_trees[r]], first, last, leaf)
                for q in range(last - first):
                    for k in range(outputs):
                        out[first + q, k] += weights[r, k] * node_values[leaf[q], k]
                continue
            # several trees (one per output): their leaf rows added in tree order, then weighted; a tree whose
            # leaves are zero but in one column adds that column only (the others' zeros would change no sum)
            for t in range(round_trees[r], round_trees[r + 1]):
                _leaves(features, words, thresholds, roots[t], depths[t], first, last, leaf)
                column = tree_columns[t]
                if t == round_trees[r]:
                    round_output[:last - first] = 0.0
                if column >= 0:
                    for q in range(last - first):
                        round_output[q, column] += node_values[leaf[q], column]
                    continue
                for q in range(last - first):
                    for k in range(outputs):
                        round_output[q, k] += node_values[leaf[q], k]
            for i in range(first, last):
                for k in range(outputs):
                    out[i, k] += weights[r, k] * round_output[i - first, k]


def _row_type(dtype: np.dtype) -> type:
    """The type tree prediction reads features as: float32 for float32 and the integers it holds exactly
    (8 and 16 bits, booleans), float64 for the rest. Every value compares with a threshold as it would
    in its own type (each is exact in float64 either way), and the compiled kernel exists for two row
    types only (each takes about a second to compile)."""
    small = dtype == np.float32 or dtype == np.bool_ or (dtype.kind in "iu" and dtype.itemsize <= 2)
    return np.float32 if small else np.float64


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


def _tree_columns(node_values: np.ndarray, roots: np.ndarray) -> np.ndarray:
    """(#trees,) the one output column in which each tree's nodes (``roots[t]`` to the next root, breadth first)
    have values other than zero, or -1 where several do (a tree of zeros only: column 0)."""
    used = np.logical_or.reduceat(node_values != 0, roots, axis=0)
    return np.where(used.sum(axis=1) <= 1, np.argmax(used, axis=1), -1).astype(np.int64)


def tree_scorer(node_features: np.ndarray, thresholds: np.ndarray, left: np.ndarray, right: np.ndarray,
                node_values: np.ndarray, round_trees: np.ndarray, roots: np.ndarray, weights: np.ndarray,
                baseline: np.ndarray, n_threads: int,
                missing_left: np.ndarray | None = None) -> Callable[[np.ndarray], np.ndarray | None]:
    """The (#samples, #outputs) scores of a tree ensemble stored as one node table, as a function of the rows;
    the trees are laid out for it (:func:`breadth_first`) once.

    Round ``r`` owns trees ``round_trees[r]:round_trees[r + 1]`` (their first nodes in ``roots``); its
    output is the sum of the leaf rows of ``node_values`` its trees reach, weighted by ``weights[r]``.
    ``missing_left`` (:func:`tree_missing_left`) routes NaN as each node learnt; without it NaN
    cannot be routed, so for features holding NaN the function returns None and the caller takes
    the machines' own (numpy) path, which gives the same scores.
    """
    read = node_features[node_features >= 0]
    missing_right = (np.zeros(node_features.size, dtype=np.bool_) if missing_left is None
                     else np.asarray(missing_left) == 0)
    words, node_thresholds, old, new_roots, depths = breadth_first(node_features, thresholds, left, right,
                                                                   missing_right, roots)
    node_values = np.ascontiguousarray(node_values[old])
    trees = (words, node_thresholds, node_values, round_trees, new_roots, depths, _tree_columns(node_values, new_roots),
             weights, baseline)

    def scores(features: np.ndarray) -> np.ndarray | None:
        if missing_left is None and _has_nan(features, read):
            return None
        rows = np.ascontiguousarray(features, dtype=_row_type(features.dtype))
        out = np.empty((rows.shape[0], weights.shape[1]))
        _run(_tree_rows, (rows,) + trees, out, TREE_NS * roots.size, n_threads)
        return out
    return scores


def row_ranges(rows: int, row_ns: float, n_threads: int) -> list[tuple[int, int]]:
    """The ``(start, stop)`` row blocks of a prediction costing ``row_ns`` nanoseconds a row: one per thread (at
    most :data:`BLOCK_ROWS` rows each) when the work pays for the threads (:data:`PARALLEL_NS`), else one."""
    if n_threads == 1 or rows * row_ns < PARALLEL_NS:
        return [(0, rows)]
    size = min(BLOCK_ROWS, -(-rows // n_threads))
    return [(start, min(start + size, rows)) for start in range(0, rows, size)]


def _run(kernel, common: tuple, out: np.ndarray, row_ns: float, n_threads: int) -> None:
    """``kernel(*common, start, stop, out)`` over :func:`row_ranges` of ``out``'s rows, on ``n_threads`` threads."""
    run_blocks(kernel, [common + bounds + (out,) for bounds in row_ranges(out.shape[0], row_ns, n_threads)],
               n_threads)


def stump_scores(features: np.ndarray, indices: np.ndarray, thresholds: np.ndarray, polarities: np.ndarray,
                 missing: np.ndarray, weights: np.ndarray, baseline: float, n_threads: int) -> np.ndarray:
    """(#samples, 1) scores of a stump ensemble (one entry per round in each array).

    ``missing[r]``: where stump ``r`` sends NaN (1 above, 0 below, -1 no missing-value handling).
    """
    out = np.empty((features.shape[0], 1))
    _run(_stump_rows, (features, indices, thresholds, polarities, missing, weights, baseline), out,
         STUMP_NS * indices.size, n_threads)
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
    _run(_lut_rows, (features, indices, tables, missing_rows, weights, baseline), out, LUT_NS * indices.size,
         n_threads)
    return out
