"""Gradient trees on a Dask cluster: the round's trees grown from summed node histograms.

Each level (levelwise) or each split (leafwise: every tree of the round splits one leaf per round trip),
every chunk sends the gradient/hessian histograms of the new frontier nodes of every tree of the round
(one per output, or one for all); the histograms are summed in chunk order and each node's split is
chosen on the client by the in-memory trees' own scan
(:func:`bob_boost.engine.split_scan.best_split`) and, leafwise, the in-memory choice of the open leaf
of largest gain; the splits go back to the chunks, which move their rows. Leaves get
``-G / (H + lambda)`` from the leaves' summed derivatives (hessian 1 for gradient-only leaves). The
trees are those :class:`bob_boost.TreeTrainer` grows in memory, up to the rounding of sums added per
chunk.
"""
from __future__ import annotations

import numpy as np

from ..engine.split_scan import best_split
from ..engine.tree_histograms import build_histogram, node_total
from ..engine.codes import CodedFeatures
from ..exceptions import InvalidTypeError, InvalidValueError
from ..losses import LossFunction
from ..losses.base import weighted
from ..weak.tree import TreeMachine
from ..weak_trainers.tree import TIE_TOLERANCE, TreeTrainer
from ._chunks import Chunks


def check_cluster_tree(trainer) -> TreeTrainer:
    """The tree trainer of distributed gradient trees."""
    if not isinstance(trainer, TreeTrainer):
        raise InvalidTypeError(f"tree: expected a TreeTrainer, got {type(trainer).__name__}")
    if trainer.quantized_gradients is not None:
        raise InvalidValueError("tree: quantized_gradients is for training in memory; distributed gradient trees "
                                "sum float histograms (use quantized_gradients=None)")
    return trainer


# -- on the workers -------------------------------------------------------------------------------------------

def derivatives(targets: np.ndarray, scores: np.ndarray, weights, loss: LossFunction,
                newton_leaves: bool) -> np.ndarray:
    """(#rows, 2 x #outputs) the chunk's weighted loss gradient, then its weighted hessian.

    Without ``newton_leaves`` the hessian columns are 1 (unweighted, as in memory): the gradient-only leaves
    ``-G / (n + lambda)`` of :class:`~bob_boost.TreeTrainer`.
    """
    if not newton_leaves:
        gradient = weighted(loss.loss_gradient(targets, scores), weights)
        return np.hstack([gradient, np.ones_like(gradient)])
    gradient, hessian = loss.gradient_and_hessian(targets, scores)
    return np.hstack([weighted(gradient, weights), weighted(hessian, weights)])


def root_nodes(rows: int, trees: int) -> np.ndarray:
    """(#trees, #rows): every row at every tree's root."""
    return np.zeros((trees, rows), dtype=np.int64)


def node_histograms(coded: CodedFeatures, sample_node: np.ndarray, values: np.ndarray, groups: np.ndarray,
                    frontiers: tuple[np.ndarray, ...]) -> list[tuple]:
    """Per tree, the chunk's (sums, counts, totals, node counts) of its frontier nodes.

    Tree ``t`` reads the gradient columns ``groups[t]`` and the matching hessian columns of ``values``;
    sums are (#frontier, #features x bins, 2K), in the in-memory trees' histogram layout.
    """
    outputs = values.shape[1] // 2
    layout = coded.row_layout()
    cells = coded.codes.shape[0] * coded.number_of_bins
    result = []
    for t, frontier in enumerate(frontiers):
        columns = np.concatenate([groups[t], groups[t] + outputs])
        tree_values = np.ascontiguousarray(values[:, columns])
        width = columns.size
        local = np.full(max(int(frontier.max(initial=0)), int(sample_node[t].max(initial=0))) + 1, -1,
                        dtype=np.int64)
        local[frontier] = np.arange(frontier.size)
        position = local[sample_node[t]]
        order, bounds = _grouped_rows(position, frontier.size)
        # build_histogram zeroes each node's part itself
        sums = np.empty((frontier.size, cells, width))
        counts = np.empty((frontier.size, cells), dtype=np.int64)
        totals = np.zeros((frontier.size, width))
        for j in range(frontier.size):
            start, stop = int(bounds[j]), int(bounds[j + 1])
            node_total(tree_values, order, start, stop, totals[j])
            build_histogram(layout, coded.mode_bins, coded.number_of_bins, tree_values, order, start,
                                          stop, totals[j], stop - start, sums[j], counts[j])
        result.append((sums, counts, totals, np.diff(bounds)))
    return result


def _grouped_rows(position: np.ndarray, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows grouped by ``position`` (0 .. nodes - 1; -1 left out), ascending within each group, and the
    groups' bounds in that order."""
    if nodes <= 32:  # a pass per node beats sorting every row for the few nodes of a level
        groups = [np.flatnonzero(position == j) for j in range(nodes)]
        bounds = np.zeros(nodes + 1, dtype=np.int64)
        np.cumsum([g.size for g in groups], out=bounds[1:])
        return np.concatenate(groups) if groups else np.empty(0, dtype=np.int64), bounds
    order = np.argsort(position, kind="stable")
    start = int(np.searchsorted(position[order], 0))
    return order[start:], np.searchsorted(position[order], np.arange(nodes + 1)) - start


def summed_trees(*parts: list[tuple]) -> list[tuple]:
    """The chunks' per-tree histogram tuples summed element by element, in chunk order."""
    total = [list(tree) for tree in parts[0]]
    for part in parts[1:]:
        for tree, addition in zip(total, part):
            for i, value in enumerate(addition):
                tree[i] = tree[i] + value
    return [tuple(tree) for tree in total]


def summed_arrays(*parts: list[np.ndarray]) -> list[np.ndarray]:
    """The chunks' per-tree arrays summed, in chunk order."""
    total = list(parts[0])
    for part in parts[1:]:
        total = [a + b for a, b in zip(total, part)]
    return total


def routed(coded: CodedFeatures, sample_node: np.ndarray, tables: list[np.ndarray]) -> np.ndarray:
    """Every tree's rows of split nodes moved to a child.

    ``tables[t]`` holds per node: feature, bin, left, right, whether NaN goes left, and the feature's NaN
    code (-1 without missing values).
    """
    moved = sample_node.copy()
    for t, table in enumerate(tables):
        feature = table[sample_node[t], 0]
        moving = np.flatnonzero(feature >= 0)
        node = sample_node[t, moving]
        codes = coded.codes[feature[moving], moving]
        right = np.where(codes == table[node, 5], table[node, 4] == 0, codes > table[node, 1])
        moved[t, moving] = np.where(right, table[node, 3], table[node, 2])
    return moved


def leaf_totals(sample_node: np.ndarray, values: np.ndarray, groups: np.ndarray, nodes: list[int]) -> list:
    """Per tree, (#nodes, 2K) the chunk's derivative sums per node its rows end in (rows in order)."""
    outputs = values.shape[1] // 2
    result = []
    for t, count in enumerate(nodes):
        columns = np.concatenate([groups[t], groups[t] + outputs])
        result.append(np.stack([np.bincount(sample_node[t], weights=values[:, c], minlength=count) for c in columns],
                               axis=1))
    return result


def tree_outputs(sample_node: np.ndarray, leaf_values: list[np.ndarray], groups: np.ndarray,
                 outputs: int) -> np.ndarray:
    """(#rows, #outputs) the round's trees' leaf values of the chunk's rows."""
    result = np.zeros((sample_node.shape[1], outputs))
    for t, values in enumerate(leaf_values):
        result[:, groups[t]] += values[sample_node[t]]
    return result


def coded_tree_outputs(coded: CodedFeatures, tables: list[np.ndarray], leaf_values: list[np.ndarray],
                       groups: np.ndarray, outputs: int, depth: int) -> np.ndarray:
    """:func:`tree_outputs` of a round's trees for the chunk's rows routed from the roots by their codes."""
    sample_node = root_nodes(coded.codes.shape[1], len(tables))
    for _ in range(depth):
        sample_node = routed(coded, sample_node, tables)
    return tree_outputs(sample_node, leaf_values, groups, outputs)


# -- on the client ----------------------------------------------------------------------------------------------

class DistributedGradientTrees:
    """Grows a round's gradient trees from the chunks (see the module's description)."""

    def __init__(self, trainer: TreeTrainer, chunks: Chunks, offsets: np.ndarray, split_thresholds: np.ndarray,
                 bins_per_feature: int, outputs: int) -> None:
        self.trainer = check_cluster_tree(trainer)
        self.chunks = chunks
        self.offsets = offsets
        self.split_thresholds = split_thresholds
        self.bins_per_feature = bins_per_feature
        self.outputs = outputs
        self.groups = (np.arange(outputs)[np.newaxis] if trainer.multi_output == "shared"
                       else np.arange(outputs)[:, np.newaxis])
        self.feature_of_bin = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
        # the chunks' histograms hold every feature's bins at f x bins_per_feature; best_split reads global bins
        self.no_modes = np.full(offsets.size - 1, -1, dtype=np.int64)
        self.missing = trainer.missing is not None

    def grow(self, loss: LossFunction, newton_leaves: bool) -> tuple[TreeMachine, list, tuple]:
        """The round's trees as one machine, the futures of every chunk's (#rows, #outputs) tree outputs, and
        the arguments of :func:`coded_tree_outputs` that make them again from the codes.

        ``newton_leaves``: leaves from the loss's hessian, else gradient-only leaves (hessian 1).
        """
        chunks, trainer, trees = self.chunks, self.trainer, self.groups.shape[0]
        client = chunks.client
        values = chunks.each(derivatives, chunks.targets, chunks.scores, chunks.weights, loss, newton_leaves)
        sample_node = chunks.each(root_nodes, list(chunks.rows), trees, pure=False)
        nodes = [_Tree() for _ in range(trees)]
        grow = self._leafwise if trainer.growth == "leafwise" else self._levelwise
        sample_node, tables = grow(nodes, values, sample_node)
        sizes = [len(tree.features) for tree in nodes]
        totals = summed_arrays(*client.gather(chunks.each(leaf_totals, sample_node, values, self.groups,
                                                          tuple(sizes))))
        leaf_values = [tree.leaf_values(total, float(trainer.l2_regularization), trainer.max_delta_step)
                       for tree, total in zip(nodes, totals)]
        # (tuples: the chunks' helper reads lists as one entry per chunk)
        leaf_values, tables = tuple(leaf_values), tuple(tables)
        outputs = chunks.each(tree_outputs, sample_node, leaf_values, self.groups, self.outputs)
        levels = max(tree.depth for tree in nodes)
        return self._machine(nodes, leaf_values), outputs, (tables, leaf_values, self.groups, self.outputs, levels)

    def _levelwise(self, nodes: list["_Tree"], values: list, sample_node: list) -> tuple[list, list]:
        """Grow the trees level by level, as in memory, one round trip per level; returns the chunks' final
        ``sample_node`` and the trees' tables."""
        chunks, trainer = self.chunks, self.trainer
        frontiers = [np.array([0])] * len(nodes)
        tables = [tree.table(self.offsets, self.missing) for tree in nodes]
        for depth in range(trainer.max_depth):
            pieces = chunks.each(node_histograms, chunks.coded, sample_node, values, self.groups, tuple(frontiers))
            histograms = chunks.summed_on_worker(summed_trees, pieces)
            tables, next_frontiers = [], []
            for tree, frontier, (sums, counts, totals, node_counts) in zip(nodes, frontiers, histograms):
                children = tree.split(self, frontier, sums, counts, totals, node_counts)
                tables.append(tree.table(self.offsets, self.missing))
                # children at the depth limit are never split
                next_frontiers.append(np.array(children if depth + 1 < trainer.max_depth else [], dtype=np.int64))
            if any(tree.split_last for tree in nodes):
                sample_node = chunks.each(routed, chunks.coded, sample_node, tuple(tables))
            frontiers = next_frontiers
            if all(f.size == 0 for f in frontiers):
                break
        return sample_node, tables

    def _leafwise(self, nodes: list["_Tree"], values: list, sample_node: list) -> tuple[list, list]:
        """Grow the trees leaf by leaf, as in memory: each tree splits its open leaf of largest gain (the
        lowest node on a tie) until ``max_leaves``, one split per tree and round trip; returns the chunks'
        final ``sample_node`` and the trees' tables."""
        chunks, trainer = self.chunks, self.trainer
        limit = trainer.max_leaves or 0
        candidates: list[dict[int, tuple]] = [{} for _ in nodes]  # open leaf -> (gain, bin, NaN goes left)
        leaves = [1] * len(nodes)
        frontiers = [np.array([0])] * len(nodes)
        tables = [tree.table(self.offsets, self.missing) for tree in nodes]
        while True:
            if any(f.size for f in frontiers):
                pieces = chunks.each(node_histograms, chunks.coded, sample_node, values, self.groups,
                                     tuple(frontiers))
                histograms = chunks.summed_on_worker(summed_trees, pieces)
                for open_leaves, frontier, histogram in zip(candidates, frontiers, histograms):
                    for node, (gain, bin_index, nan_left) in zip(frontier.tolist(),
                                                                 self._best_splits(frontier, *histogram)):
                        if bin_index >= 0:
                            open_leaves[node] = (gain, bin_index, nan_left)
            frontiers = []
            for t, tree in enumerate(nodes):
                children: list[int] = []
                if candidates[t] and not 0 < limit <= leaves[t]:
                    node = min(candidates[t], key=lambda n, c=candidates[t]: (-c[n][0], n))
                    children = tree.split_node(self, node, *candidates[t].pop(node)[1:])
                    leaves[t] += 1
                    depth_limited = trainer.max_depth is not None and tree.depths[children[0]] >= trainer.max_depth
                    if depth_limited or 0 < limit <= leaves[t]:
                        children = []  # never split: no histograms
                    tree.split_last = True
                else:
                    tree.split_last = False
                frontiers.append(np.array(children, dtype=np.int64))
            if not any(tree.split_last for tree in nodes):
                return sample_node, tables
            tables = [tree.table(self.offsets, self.missing) for tree in nodes]
            sample_node = chunks.each(routed, chunks.coded, sample_node, tuple(tables))

    def _best_splits(self, frontier: np.ndarray, sums, counts, totals, node_counts) -> list[tuple[float, int, bool]]:
        """``(gain, global bin, NaN goes left)`` of each frontier node's best split by the in-memory scan (bin -1:
        none)."""
        trainer = self.trainer
        result = []
        gain_buffer = np.empty(2 * int(self.offsets[-1]))
        for j in range(frontier.size):
            bin_index, gain, nan_left = -1, 0.0, False
            if node_counts[j] >= 2 * trainer.min_samples_leaf:
                bin_index, gain, nan_left = best_split(
                    sums[j], counts[j], self.no_modes, self.offsets, self.bins_per_feature, totals[j],
                    int(node_counts[j]), float(trainer.l2_regularization), int(trainer.min_samples_leaf),
                    float(trainer.min_hessian_leaf), TIE_TOLERANCE, self.missing, gain_buffer)
            result.append((float(gain), int(bin_index), bool(nan_left)))
        return result

    def _machine(self, nodes: list["_Tree"], leaf_values: list[np.ndarray]) -> TreeMachine:
        features, thresholds, left, right, values, roots, nan_left = [], [], [], [], [], [], []
        offset = 0
        for t, (tree, leaves) in enumerate(zip(nodes, leaf_values)):
            inner = np.array(tree.features) >= 0
            features.append(tree.features)
            nan_left.append(inner & np.array(tree.nan_left, dtype=bool))
            thresholds.append(np.where(inner, self.split_thresholds[np.maximum(tree.bins, 0)], 0.0))
            left.append(np.where(inner, np.array(tree.left) + offset, -1))
            right.append(np.where(inner, np.array(tree.right) + offset, -1))
            full = np.zeros((len(tree.features), self.outputs))
            full[:, self.groups[t]] = leaves
            values.append(full)
            roots.append(offset)
            offset += len(tree.features)
        return TreeMachine(np.concatenate(features), np.concatenate(thresholds), np.concatenate(left),
                           np.concatenate(right), np.vstack(values), roots,
                           np.concatenate(nan_left) if self.missing else None)


class _Tree:
    """One tree's node arrays while it grows (global bins of its splits)."""

    def __init__(self) -> None:
        self.features: list[int] = [-1]
        self.bins: list[int] = [-1]
        self.nan_left: list[bool] = [False]
        self.left: list[int] = [-1]
        self.right: list[int] = [-1]
        self.depths: list[int] = [0]
        self.depth = 0
        self.split_last = False  # whether the last call of split split a node

    def split(self, grower: DistributedGradientTrees, frontier: np.ndarray, sums, counts, totals,
              node_counts) -> list[int]:
        """Split the frontier's nodes by the in-memory rule; return the new children."""
        trainer = grower.trainer
        best = grower._best_splits(frontier, sums, counts, totals, node_counts)
        gains = np.array([gain for gain, _, _ in best])
        bins = np.array([bin_index for _, bin_index, _ in best], dtype=np.int64)
        chosen = [j for j in np.argsort(-gains, kind="stable") if bins[j] >= 0]
        if trainer.max_leaves is not None:
            leaves = sum(1 for f in self.features if f < 0)
            chosen = chosen[:max(0, trainer.max_leaves - leaves)]
        children = []
        self.split_last = bool(chosen)
        for j in sorted(chosen):
            children += self.split_node(grower, int(frontier[j]), int(bins[j]), best[j][2])
        return children

    def split_node(self, grower: DistributedGradientTrees, node: int, bin_index: int, nan_left: bool) -> list[int]:
        """Split ``node`` after global bin ``bin_index`` (NaN left or right); return its two new children."""
        first = len(self.features)
        self.features[node] = int(grower.feature_of_bin[bin_index])
        self.bins[node] = bin_index
        self.nan_left[node] = nan_left
        self.left[node], self.right[node] = first, first + 1
        self.features += [-1, -1]
        self.bins += [-1, -1]
        self.nan_left += [False, False]
        self.left += [-1, -1]
        self.right += [-1, -1]
        self.depths += [self.depths[node] + 1] * 2
        self.depth = max(self.depth, self.depths[node] + 1)
        return [first, first + 1]

    def table(self, offsets: np.ndarray, missing: bool) -> np.ndarray:
        """(#nodes, 6): each node's feature (-1: leaf), bin within the feature, left and right child, whether
        NaN goes left (1) and the feature's NaN code (-1 without missing values); see :func:`routed`."""
        table = np.full((len(self.features), 6), -1, dtype=np.int64)
        for node, feature in enumerate(self.features):
            if feature >= 0:
                nan_code = offsets[feature + 1] - offsets[feature] - 1 if missing else -1
                table[node] = (feature, self.bins[node] - offsets[feature], self.left[node], self.right[node],
                               int(self.nan_left[node]), nan_code)
        return table

    def leaf_values(self, totals: np.ndarray, regularization: float, cap: float | None = None) -> np.ndarray:
        """(#nodes, K) ``-G / (H + lambda)`` of the leaves (0 for inner nodes and empty denominators), clipped
        to ``[-cap, cap]`` when ``cap`` (the tree trainer's ``max_delta_step``) is set, as in memory."""
        outputs = totals.shape[1] // 2
        denominator = totals[:, outputs:] + regularization
        with np.errstate(divide="ignore", invalid="ignore"):
            values = np.where(denominator > 0, -totals[:, :outputs] / denominator, 0.0)
        values[np.array(self.features) >= 0] = 0.0
        if cap:
            np.clip(values, -cap, cap, out=values)
        return values
