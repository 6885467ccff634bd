"""Gradient trees grown from row partitions (:mod:`bob_boost.boosting.partitions`): the round's trees from
node histograms summed over the partitions.

Each round trip, every partition sends the gradient/hessian histograms of the new frontier nodes of every tree
of the round (one per output, or one for all); the histograms are summed in partition order (by the client
when they are small enough to gather, else on a worker), each node's best split is found by the in-memory
trees' scan (:func:`bob_boost.engine.split_scan.best_split`), and the in-memory growth policy
(:mod:`bob_boost.engine.tree_policy`: level by level, or the open leaf of largest gain) chooses the splits,
which go back to the partitions to move their rows. Leaves get the in-memory Newton values from the leaves'
summed derivatives (hessian 1 for gradient-only leaves). The trees are those :class:`bob_boost.TreeTrainer`
grows in memory, up to the rounding of sums added per partition.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..boosting.partitions import Partitions, summed_pieces
from ..engine import tree_policy
from ..engine.categorical import workspace
from ..engine.split_scan import allowed_columns, best_split, interaction_columns, node_columns
from ..engine.bin_quads import quad_scratch
from ..engine.tree_histograms import build_histogram
from ..engine.codes import CodedFeatures
from ..losses import LossFunction
from ..losses.base import weighted
from ..weak.tree import TreeMachine
from .partitioned import routed
from .tree import TIE_TOLERANCE, TreeTrainer, grown_machine
from .tree_categories import CategoryTable


# -- on each partition -------------------------------------------------------------------------------------------

def derivatives(targets: np.ndarray, scores: np.ndarray, weights, loss: LossFunction,
                newton_leaves: bool) -> np.ndarray:
    """(#rows, 2 x #outputs) the partition's weighted loss gradient, then its weighted hessian.

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


def sampled_roots(factors: np.ndarray, trees: int) -> np.ndarray:
    """(#trees, #rows): the rows of a round's sample (positive factor) at every tree's root, the others at -1
    (in no node: the trees do not grow on them)."""
    return np.repeat(np.where(factors > 0, 0, -1)[np.newaxis], trees, axis=0)


def node_histograms(coded: CodedFeatures, sample_node: np.ndarray, values: np.ndarray, groups: np.ndarray,
                    frontiers: tuple[np.ndarray, ...], offsets: np.ndarray) -> list[tuple]:
    """Per tree, the partition's (sums, counts, totals, node counts) of its frontier nodes.

    Tree ``t`` reads the gradient columns ``groups[t]`` and the matching hessian columns of ``values``;
    sums are (#frontier, #bins, 2K), in the in-memory trees' histogram layout of the global ``offsets``.
    ``sample_node`` may be a :func:`routed_histograms` pair.
    """
    outputs = values.shape[1] // 2
    sample_node = positions(sample_node)
    layout = coded.row_layout(offsets)
    cells = int(offsets[-1])
    result = []
    for t, frontier in enumerate(frontiers):
        columns = np.concatenate([groups[t], groups[t] + outputs])
        tree_values = np.ascontiguousarray(values[:, columns])
        width = columns.size
        local = np.full(max(int(frontier.max(initial=0)), int(sample_node[t].max(initial=0))) + 1, -1,
                        dtype=np.int64)
        local[frontier] = np.arange(frontier.size)
        position = np.where(sample_node[t] >= 0, local[sample_node[t]], -1)
        order, bounds = _grouped_rows(position, frontier.size)
        # build_histogram zeroes each node's part itself
        sums = np.empty((frontier.size, cells, width))
        counts = np.empty((frontier.size, cells), dtype=np.int64)
        totals = np.zeros((frontier.size, width))
        scratch = quad_scratch(cells)
        for j in range(frontier.size):
            start, stop = int(bounds[j]), int(bounds[j + 1])
            build_histogram(layout, coded.mode_bins, offsets, tree_values, order, start, stop, totals[j], stop - start,
                            sums[j], counts[j], scratch)
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
    """The partitions' per-tree histogram tuples summed element by element, in partition order."""
    return [summed_pieces(*trees) for trees in zip(*parts)]


def routed_trees(coded: CodedFeatures, sample_node: np.ndarray, tables: tuple[np.ndarray, ...]) -> np.ndarray:
    """Every tree's rows of split nodes moved to a child (:func:`~bob_boost.weak_trainers.partitioned.routed`
    with tree ``t``'s table); ``sample_node`` may be a :func:`routed_histograms` pair."""
    sample_node = positions(sample_node)
    return np.stack([routed(coded, sample_node[t], table) for t, table in enumerate(tables)])


def routed_histograms(coded: CodedFeatures, grown, values: np.ndarray, tables: tuple[np.ndarray, ...] | None,
                      groups: np.ndarray, frontiers: tuple[np.ndarray, ...], offsets: np.ndarray) -> tuple:
    """``(sample_node, histograms)``: the rows of ``grown`` (a sample_node, or the last such pair) moved by
    ``tables`` (:func:`routed_trees`; None: not moved), and their :func:`node_histograms` of ``frontiers``.

    One task per partition and split, for results small enough to gather (``Partitions.gathered_bytes``): a
    task of histograms that waited for a task of routing would add a scheduling hop and as many tasks again
    to every split's round trip.
    """
    sample_node = positions(grown)
    if tables is not None:
        sample_node = routed_trees(coded, sample_node, tables)
    return sample_node, node_histograms(coded, sample_node, values, groups, frontiers, offsets)


def positions(grown) -> np.ndarray:
    """The sample_node of a :func:`routed_histograms` pair (or ``grown``, a sample_node)."""
    return grown[0] if isinstance(grown, tuple) else grown


def leaf_totals(sample_node: np.ndarray, values: np.ndarray, groups: np.ndarray, nodes: list[int]) -> list:
    """Per tree, (#nodes, 2K) the partition's derivative sums per node its rows end in (rows in order)."""
    outputs = values.shape[1] // 2
    result = []
    for t, count in enumerate(nodes):
        columns = np.concatenate([groups[t], groups[t] + outputs])
        grown = sample_node[t] >= 0  # the rows the tree grew on
        result.append(np.stack([np.bincount(sample_node[t][grown], weights=values[grown, c], minlength=count)
                                for c in columns], axis=1))
    return result


def tree_outputs(sample_node: np.ndarray, leaf_values: list[np.ndarray], groups: np.ndarray,
                 outputs: int) -> np.ndarray:
    """(#rows, #outputs) the round's trees' leaf values of the partition's rows."""
    result = np.zeros((sample_node.shape[1], outputs))
    for t, values in enumerate(leaf_values):
        result[:, groups[t]] += values[sample_node[t]]
    return result


def coded_tree_outputs(coded: CodedFeatures, tables: list[np.ndarray], leaf_values: list[np.ndarray],
                       groups: np.ndarray, outputs: int, depth: int) -> np.ndarray:
    """:func:`tree_outputs` of a round's trees for the partition's rows routed from the roots by their codes."""
    sample_node = root_nodes(coded.n_samples, len(tables))
    for _ in range(depth):
        sample_node = routed_trees(coded, sample_node, tables)
    return tree_outputs(sample_node, leaf_values, groups, outputs)


# -- where the sums meet ----------------------------------------------------------------------------------------------

class PartitionedGradientTrees:
    """Grows a round's gradient trees from the partitions (see the module's description)."""

    def __init__(self, trainer: TreeTrainer, partitions: Partitions, offsets: np.ndarray, split_thresholds: np.ndarray,
                 outputs: int, categories: dict[int, np.ndarray] | None = None) -> None:
        self.trainer = trainer
        self.partitions = partitions
        self.offsets = offsets
        self.split_thresholds = split_thresholds
        self.outputs = outputs
        self.groups = (np.arange(outputs)[np.newaxis] if trainer.multi_output == "shared"
                       else np.arange(outputs)[:, np.newaxis])
        self.feature_of_bin = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
        # the partitions' summed histograms hold every bin, their frequent bins recovered by each partition
        self.no_modes = np.full(offsets.size - 1, -1, dtype=np.int64)
        self.missing = trainer.missing is not None
        self.allowed = allowed_columns(offsets.size - 1, None)
        self.node_columns: tuple[int, float] | None = None
        self.monotone = trainer._monotone(offsets.size - 1)
        self.interaction_groups = trainer._groups(offsets.size - 1)
        self.categorical, self.category_params = trainer._categorical(offsets.size - 1)
        self.category_table = CategoryTable(categories or {}, offsets.size - 1)

    def grow(self, loss: LossFunction, newton_leaves: bool, weights: list | None = None,
             columns: np.ndarray | None = None, factors: list | None = None,
             node_columns: tuple[int, float] | None = None) -> tuple[TreeMachine, list, Callable, tuple]:
        """The round's trees as one machine, the handles of every partition's (#rows, #outputs) tree outputs, and
        :func:`coded_tree_outputs` with the arguments that make them again from the codes.

        ``newton_leaves``: leaves from the loss's hessian, else gradient-only leaves (hessian 1). ``weights``:
        the round's sample weights (default: the partitions'); ``columns``: the features the trees may split on
        (None: all); ``factors``: a sampled round's row factors (handles), the trees growing on the rows of
        positive factor only, as in memory; ``node_columns``: ``(key, fraction)`` of each node's columns.
        """
        partitions, trainer, trees = self.partitions, self.trainer, self.groups.shape[0]
        self.allowed = allowed_columns(self.offsets.size - 1, columns)
        self.node_columns = node_columns
        values = partitions.each(derivatives, partitions.targets, partitions.scores,
                                 partitions.weights if weights is None else weights, loss, newton_leaves)
        # each partition's rows' nodes (or, after a split gathered whole, with the histograms: routed_histograms)
        grown = (partitions.each(root_nodes, list(partitions.rows), trees, pure=False) if factors is None
                 else partitions.each(sampled_roots, factors, trees))
        capacity = 2 * tree_policy.most_leaves(int(sum(partitions.rows)), trainer.min_samples_leaf, trainer.max_depth,
                                               trainer.max_leaves) - 1
        growing = [_GrowingTree(capacity, t) for t in range(trees)]
        moved = False  # whether nodes were split since the rows were last routed
        paired = False  # whether grown holds routed_histograms pairs
        while True:
            if any(tree.frontier.size for tree in growing):
                frontiers = tuple(tree.frontier for tree in growing)
                tables = self._tables(growing) if moved else None
                moved = False
                # a partition's histograms and its rows' positions (int64, a row per tree)
                pair_bytes = self._histogram_bytes(frontiers) + 8 * trees * max(partitions.rows)
                paired = pair_bytes * len(partitions.rows) <= partitions.gathered_bytes
                if paired:
                    grown = partitions.each(routed_histograms, partitions.coded, grown, values, tables,
                                            self.groups, frontiers, self.offsets)
                    summed = summed_trees(*(pair[1] for pair in partitions.gather(grown)))
                else:  # the histograms alone move, to the partition that sums them
                    if tables is not None:
                        grown = partitions.each(routed_trees, partitions.coded, grown, tables)
                    summed = partitions.combined(summed_trees, partitions.each(
                        node_histograms, partitions.coded, grown, values, self.groups, frontiers, self.offsets))
                for tree, histogram in zip(growing, summed):
                    self._scan(tree, *histogram)
            split_any = [tree.grow(self.feature_of_bin, trainer, self.monotone, self.interaction_groups,
                                   self.categorical) for tree in growing]
            if not any(split_any):
                break
            moved = True
        sample_node = grown
        if moved:
            sample_node = partitions.each(routed_trees, partitions.coded, grown, self._tables(growing))
        elif paired:
            sample_node = partitions.each(positions, grown)
        sizes = tuple(tree.n_nodes for tree in growing)
        totals = summed_pieces(*partitions.gather(partitions.each(leaf_totals, sample_node, values, self.groups,
                                                                  sizes)))
        leaf_values, records = [], []
        for tree, total in zip(growing, totals):
            leaves = np.zeros((tree.n_nodes, total.shape[1] // 2))
            nodes = tree.nodes
            tree_policy.leaf_values(total, nodes["node_feature"], tree.n_nodes, float(trainer.l2_regularization),
                                    nodes["bounds"], leaves)
            records.append(np.zeros((tree.n_nodes, 2)))
            tree_policy.node_records(total, nodes["node_feature"], nodes["node_left"], nodes["node_right"],
                                     nodes["split_gain"], tree.n_nodes, records[-1])
            if trainer.max_delta_step:
                np.clip(leaves, -trainer.max_delta_step, trainer.max_delta_step, out=leaves)
            leaf_values.append(leaves)
        # (tuples: the partitions' helper reads lists as one entry per partition)
        leaf_values, tables = tuple(leaf_values), self._tables(growing)
        levels = max(int(tree.nodes["depth"][:tree.n_nodes].max()) for tree in growing)
        if factors is None:
            outputs = partitions.each(tree_outputs, sample_node, leaf_values, self.groups, self.outputs)
        else:  # the rows the trees did not grow on are routed from the roots too
            outputs = partitions.each(coded_tree_outputs, partitions.coded, tables, leaf_values, self.groups,
                                      self.outputs, levels)
        return (self._machine(growing, leaf_values, records), outputs, coded_tree_outputs,
                (tables, leaf_values, self.groups, self.outputs, levels))

    def _histogram_bytes(self, frontiers: tuple[np.ndarray, ...]) -> int:
        """Bytes of one partition's :func:`node_histograms` of ``frontiers`` (sums, counts and totals)."""
        width = 2 * self.groups.shape[1]
        return sum(frontier.size * (int(self.offsets[-1]) * (width + 1) + width) * 8 for frontier in frontiers)

    def _scan(self, tree: "_GrowingTree", sums, counts, totals, node_counts) -> None:
        """Each frontier node's best split (the in-memory scan) into the tree's candidates."""
        trainer, nodes = self.trainer, tree.nodes
        gain_buffer = np.empty(2 * int(self.offsets[-1]))
        work = workspace(sums.shape[2], self.offsets.size - 1)
        allowed, grouped = self.allowed.copy(), self.allowed.copy()
        for j, node in enumerate(tree.frontier):
            if node_counts[j] >= 2 * trainer.min_samples_leaf:
                if self.interaction_groups.shape[0] > 0:  # as in memory: the groups first, then the node's sample
                    interaction_columns(self.allowed, self.interaction_groups, nodes["node_groups"][node], grouped)
                    allowed[:] = grouped
                if self.node_columns is not None:
                    node_columns(grouped, np.uint64(self.node_columns[0]), tree.index, int(node),
                                 self.node_columns[1], allowed)
                nodes["split_bin"][node], nodes["split_gain"][node], nodes["split_nan_left"][node] = best_split(
                    sums[j], counts[j], self.no_modes, self.offsets, totals[j],
                    int(node_counts[j]), float(trainer.l2_regularization), int(trainer.min_samples_leaf),
                    float(trainer.min_hessian_leaf), TIE_TOLERANCE, self.missing, gain_buffer, allowed,
                    self.monotone, nodes["bounds"][node, 0], nodes["bounds"][node, 1], nodes["child_values"][node],
                    self.categorical, self.category_params, nodes["split_sets"][node], work)

    def _tables(self, growing: list["_GrowingTree"]) -> tuple[np.ndarray, ...]:
        """Per tree, (#nodes, 6): each node's feature (-1: leaf), bin within the feature, left and right child,
        the feature's NaN code (-1 without missing values) and whether NaN goes left (1), and with categorical
        features whether the split is categorical and its bin set; see
        :func:`~bob_boost.weak_trainers.partitioned.routed`."""
        offsets, tables = self.offsets, []
        for tree in growing:
            n, nodes = tree.n_nodes, tree.nodes
            feature = nodes["node_feature"][:n]
            inner = feature >= 0
            table = np.full((n, 6), -1, dtype=np.int64)
            f = feature[inner]
            nan_code = offsets[f + 1] - offsets[f] - 1 if self.missing else np.full(f.size, -1)
            table[inner] = np.column_stack([
                f, nodes["node_bin"][:n][inner] - offsets[f], nodes["node_left"][:n][inner],
                nodes["node_right"][:n][inner], nan_code, nodes["node_nan_left"][:n][inner]])
            if self.categorical.size:
                flags = np.zeros(n, dtype=np.int64)
                flags[inner] = self.categorical[f]
                table = np.hstack([table, flags[:, np.newaxis], nodes["node_sets"][:n].view(np.int64)])
            tables.append(table)
        return tuple(tables)

    def _machine(self, growing: list["_GrowingTree"], leaf_values: tuple[np.ndarray, ...],
                 records: list[np.ndarray]) -> TreeMachine:
        """The round's machine, assembled as in memory (:func:`~bob_boost.weak_trainers.tree.grown_machine`) from
        the trees' node arrays and their leaf values and records padded to the trees' capacity."""
        n_nodes = np.array([tree.n_nodes for tree in growing], dtype=np.int64)
        capacity = growing[0].nodes["node_feature"].size

        def stacked(name: str) -> np.ndarray:
            return np.stack([tree.nodes[name] for tree in growing])

        def padded(arrays: list[np.ndarray]) -> np.ndarray:
            out = np.zeros((len(arrays), capacity) + arrays[0].shape[1:])
            for t, array in enumerate(arrays):
                out[t, :array.shape[0]] = array
            return out
        return grown_machine(self.split_thresholds, self.category_table if self.categorical.size else None,
                             self.missing, n_nodes, stacked("node_feature"), stacked("node_bin"),
                             stacked("node_nan_left"), stacked("node_left"), stacked("node_right"),
                             stacked("node_sets"), padded(list(leaf_values)), padded(records), self.groups,
                             self.outputs)


class _GrowingTree:
    """One tree's node arrays (:mod:`bob_boost.engine.tree_policy`) while it grows on the partitions, and its
    frontier: the nodes whose histograms the next round trip brings."""

    def __init__(self, capacity: int, index: int) -> None:
        self.index = index  # the tree's place in its round (what per-node column draws are keyed by)
        self.nodes = tree_policy.empty_tree(capacity)
        self.n_nodes, self.leaves = 1, 1
        self.frontier = np.zeros(1, dtype=np.int64)

    def grow(self, feature_of_bin: np.ndarray, trainer: TreeTrainer, monotone: np.ndarray,
             groups: np.ndarray, categorical: np.ndarray) -> bool:
        """Split what the in-memory growth policy chooses next (the children bounded by the ``monotone``
        constraints and keeping the interaction ``groups`` of their path, as in memory); the new frontier is
        the children that may split. Returns whether a node was split."""
        nodes = self.nodes
        capacity = nodes["node_feature"].size
        frontier = np.zeros(capacity, dtype=np.int64)
        frontier[:self.frontier.size] = self.frontier
        chosen = np.zeros(capacity, dtype=np.bool_)
        n_frontier, n_chosen = tree_policy.select(
            frontier, self.frontier.size, nodes["node_feature"], nodes["split_bin"], nodes["split_gain"],
            self.n_nodes, self.leaves, trainer.max_leaves or 0, trainer.growth == "leafwise", chosen)
        split_nodes = frontier[:n_frontier][chosen[:n_frontier]]
        for node in split_nodes:
            feature = tree_policy.split(node, self.n_nodes, feature_of_bin, nodes["split_bin"],
                                        nodes["split_nan_left"], nodes["node_feature"], nodes["node_bin"],
                                        nodes["node_nan_left"], nodes["node_left"], nodes["node_right"],
                                        nodes["depth"])
            tree_policy.bound_children(node, feature, monotone, nodes["child_values"][node], nodes["node_left"],
                                       nodes["node_right"], nodes["bounds"])
            tree_policy.group_children(node, feature, groups, nodes["node_left"], nodes["node_right"],
                                       nodes["node_groups"])
            if categorical.size and categorical[feature]:
                nodes["node_sets"][node] = nodes["split_sets"][node]
            self.n_nodes += 2
            self.leaves += 1
        children = [child for node in split_nodes for child in (nodes["node_left"][node], nodes["node_right"][node])
                    if tree_policy.children_may_split(nodes["depth"][child], trainer.max_depth or 0,
                                                      trainer.max_leaves or 0, self.leaves)]
        self.frontier = np.array(children, dtype=np.int64)
        return n_chosen > 0
