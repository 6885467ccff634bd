"""Cost-sensitive multi-class trees grown from row partitions (:mod:`bob_boost.boosting.partitions`), for
BAdaCost, SAMME and AdaBoost.M1.

A partition's tree state is ``sample_node``, every row's current node. Level by level, every partition
sends its per-node class histograms, summed in partition order; each node's split is chosen by the
in-memory rule (:func:`bob_boost.weak_trainers.tree_growing.choose_splits`) and the few numbers of the
splits go back for the partitions to move their rows to the children; the leaves' labels come from
per-node class sums (:func:`bob_boost.weak_trainers.tree_growing.label_nodes`).
"""
from __future__ import annotations

import numpy as np

from ..binning import QuantizedLayout
from ..boosting.partitions import Partitions, reduced, summed_pieces
from ..engine.categorical import CATEGORY_WORDS
from ..engine.codes import CodedFeatures
from ..weak.multiclass import MultiClassStumpMachine, MultiClassTreeMachine
from .multiclass import MultiClassStumpTrainer
from .partitioned import routed
from .tree_categories import CategoryTable, categorical_mask
from .tree_growing import (LeafWeight, TreeNodes, choose_splits, grow_levels, label_nodes, label_nodes_by_costs,
                           leaf_costs, least_leaf_weight, row_gini_factors)


def root_nodes(rows: int) -> np.ndarray:
    """Every row at the root."""
    return np.zeros(rows, dtype=np.int64)


def node_class_histograms(coded: CodedFeatures, sample_node: np.ndarray, labels: np.ndarray, weights: np.ndarray,
                          row_factors: np.ndarray | None, factors: np.ndarray, local: np.ndarray, subset: np.ndarray,
                          number_of_classes: int) -> tuple:
    """The partition's cost-weighted class histograms of the frontier nodes.

    A row counts its class's ``factors`` times in the Gini impurity, or its own ``row_factors`` (per-row losses,
    :func:`~bob_boost.weak_trainers.tree_growing.row_gini_factors`) where given. ``local[node]`` is a node's
    position in the frontier (-1 for the others). Returns the (#frontier,
    padded bins, K) class sums, the (#frontier, padded bins) counts, the (#frontier, K) class totals
    and the (#frontier,) node counts, as :func:`bob_boost.weak_trainers.tree_growing.choose_splits` reads them.
    """
    k = number_of_classes
    nodes = int((local >= 0).sum())
    frontier = local[sample_node]
    inside = frontier >= 0
    gini_weights = weights * (factors[labels] if row_factors is None else row_factors)
    totals = np.bincount(frontier[inside] * k + labels[inside], weights=gini_weights[inside],
                         minlength=nodes * k).reshape(nodes, k)
    counts = np.bincount(frontier[inside], minlength=nodes)
    sums, bin_counts = coded.node_histograms(frontier, labels, gini_weights, totals, counts, subset)
    return sums.reshape(nodes, -1, k), bin_counts.reshape(nodes, -1), totals, counts


def node_weight_histograms(coded: CodedFeatures, sample_node: np.ndarray, weights: np.ndarray, local: np.ndarray,
                           subset: np.ndarray) -> tuple:
    """The partition's sample-weight histograms of the frontier nodes (#frontier, padded bins) and the
    nodes' weights (#frontier,), for the least weight of a leaf (``min_weight_fraction_leaf``)."""
    nodes = int((local >= 0).sum())
    frontier = local[sample_node]
    inside = frontier >= 0
    node_weights = np.bincount(frontier[inside], weights=weights[inside], minlength=nodes)
    counts = np.bincount(frontier[inside], minlength=nodes)
    sums, _ = coded.node_histograms(frontier, np.zeros_like(frontier), weights, node_weights[:, np.newaxis], counts,
                                    subset)
    return sums.reshape(nodes, -1), node_weights


def weight_total(weights: np.ndarray) -> np.ndarray:
    """The partition's total sample weight."""
    return np.array(np.sum(weights))


def leaf_sums(sample_node: np.ndarray, labels: np.ndarray, weights: np.ndarray, nodes: int, k: int) -> np.ndarray:
    """(#nodes, K) the partition's weighted class sums per node its rows end in."""
    return np.bincount(sample_node * k + labels, weights=weights, minlength=nodes * k).reshape(nodes, k)

def tree_leaves(coded: CodedFeatures, table: np.ndarray, depth: int) -> np.ndarray:
    """Every row's leaf of a tree given by the split table of its inner nodes (see :func:`routed`), the rows
    routed ``depth`` times through the whole table from the root, level by level as growing moved them."""
    leaves = root_nodes(coded.n_samples)
    for _ in range(depth):
        leaves = routed(coded, leaves, table)
    return leaves


class PartitionedClassTrees:
    """The :class:`~bob_boost.weak_trainers.tree_growing.LevelSource` of row partitions: the round's tree grows
    level by level (:func:`~bob_boost.weak_trainers.tree_growing.grow_levels`, as in memory) from the
    partitions' summed node histograms. ``row_losses``, handles of every partition's (#rows, K) losses, replace
    the class loss matrix's rows (example-dependent costs), as ``row_losses`` do in memory."""

    def __init__(self, partitions: Partitions, layout: QuantizedLayout, loss_matrix: np.ndarray, weak_trainer,
                 categories: dict[int, np.ndarray] | None = None, row_losses: list | None = None) -> None:
        self.partitions = partitions
        self.row_losses = row_losses
        self.row_factors = ([None] * len(partitions.rows) if row_losses is None
                            else partitions.each(row_gini_factors, partitions.targets, row_losses))
        self.categories = categories or {}
        self.categorical = categorical_mask(np.array(sorted(self.categories), dtype=np.int64),
                                            layout.offsets.size - 1)
        self.category_table = CategoryTable(self.categories, layout.offsets.size - 1)
        self.layout = layout
        self.loss_matrix = loss_matrix
        self.k = loss_matrix.shape[0]
        self.max_depth = 1 if isinstance(weak_trainer, MultiClassStumpTrainer) else weak_trainer.max_depth
        self.stump = isinstance(weak_trainer, MultiClassStumpTrainer)
        self.missing = weak_trainer.missing is not None
        offsets = layout.offsets
        sizes = np.diff(offsets)
        self.feature_of_bin = np.repeat(np.arange(sizes.size), sizes)
        starts = np.arange(sizes.size) * layout.bins_per_feature
        self.positions = np.repeat(starts - offsets[:-1], sizes) + np.arange(offsets[-1])
        # cost-weighted Gini: class j counts r_j = sum_k (L[j,k] - L[j,j]) times, as in memory
        self.factors = (loss_matrix - np.diag(loss_matrix)[:, np.newaxis]).sum(axis=1)
        self.min_weight_fraction_leaf = weak_trainer.min_weight_fraction_leaf

    def grow(self, sample_weights: list, subset: np.ndarray) -> tuple:
        """``(weak machine, handles of every partition's leaf per row, the nodes' labels, (tree_leaves, its
        arguments))``: :func:`tree_leaves` of the arguments routes a partition's rows through the tree again
        from their codes."""
        partitions, k = self.partitions, self.k
        self.sample_node = partitions.each(root_nodes, list(partitions.rows), pure=False)
        self.weights, self.subset = sample_weights, subset.astype(np.int64)
        self.min_weight = 0.0
        if self.min_weight_fraction_leaf > 0:  # a share of the round's total weight, as in memory
            self.min_weight = least_leaf_weight(self.min_weight_fraction_leaf,
                                                float(partitions.summed(weight_total, sample_weights)))
        self.splits_made: list[tuple[int, ...]] = []  # node, feature, bin within it, children, NaN code and side
        self.depth = 0  # levels split
        nodes = grow_levels(self, self.feature_of_bin, self.max_depth)
        n_nodes = len(nodes.features)
        sums = partitions.summed(leaf_sums, self.sample_node, partitions.targets, sample_weights, n_nodes, k)
        if self.row_losses is None:
            node_labels, cover = label_nodes(sums, nodes.features, nodes.left, nodes.right, self.loss_matrix)
        else:
            costs = partitions.summed(leaf_costs, self.sample_node, sample_weights, self.row_losses, n_nodes)
            node_labels, cover = label_nodes_by_costs(sums, costs, nodes.features, nodes.left, nodes.right)
        routing = np.full((len(nodes.features), self._table_width), -1, dtype=np.int64)
        for node, *split in self.splits_made:
            routing[node] = split
        weak = self._machine(nodes.features, nodes.thresholds, nodes.left, nodes.right, node_labels, subset,
                             nodes.nan_left if self.missing else None, cover, nodes.category_sets(self.category_table))
        return weak, self.sample_node, node_labels, (tree_leaves, (routing, self.depth))

    def best_splits(self, frontier: list[int], nodes: TreeNodes) -> list[tuple[int, float, bool]]:
        """The frontier nodes' best splits, from the partitions' node class histograms, summed."""
        partitions, layout = self.partitions, self.layout
        local = np.full(len(nodes.features), -1, dtype=np.int64)
        local[frontier] = np.arange(len(frontier))
        pieces = partitions.each(node_class_histograms, partitions.coded, self.sample_node, partitions.targets,
                                 self.weights, self.row_factors, self.factors, local, self.subset, self.k)
        # (#frontier, #features, bins a feature) class sums and counts
        cells = len(frontier) * (layout.offsets.size - 1) * layout.bins_per_feature
        histograms, counts, totals, node_counts = reduced(partitions, summed_pieces, pieces,
                                                          8 * cells * (self.k + 1))
        leaf_weight = None
        if self.min_weight > 0:
            pieces = partitions.each(node_weight_histograms, partitions.coded, self.sample_node, self.weights, local,
                                     self.subset)
            leaf_weight = LeafWeight(self.min_weight, *reduced(partitions, summed_pieces, pieces, 8 * cells))
        return choose_splits(histograms, counts, self.positions, layout.offsets, self.subset, totals, node_counts,
                             self.missing, layout.bin_values, self.feature_of_bin, leaf_weight, self.categorical)

    @property
    def _table_width(self) -> int:
        """Columns of the routing table (:func:`~bob_boost.weak_trainers.partitioned.routed`): 6, and a flag and
        a bin set after them with categorical features."""
        return 7 + CATEGORY_WORDS if self.categories else 6

    def route(self, nodes: TreeNodes, splits: list[tuple[int, int]]) -> None:
        """Every partition moves the rows of the split nodes to their children by their codes."""
        layout = self.layout
        table = np.full((len(nodes.features), self._table_width), -1, dtype=np.int64)
        for node, bin_index in splits:
            feature = nodes.features[node]
            nan_code = int(layout.missing_codes[feature]) if self.missing else -1
            table[node, :6] = (feature, bin_index - layout.offsets[feature], nodes.left[node], nodes.right[node],
                               nan_code, int(nodes.nan_left[node]))
            if self.categories:
                bin_set = nodes.bin_sets[node]
                table[node, 6] = int(bin_set is not None)
                table[node, 7:] = 0 if bin_set is None else bin_set.view(np.int64)
            self.splits_made.append((node, *table[node]))
        self.sample_node = self.partitions.each(routed, self.partitions.coded, self.sample_node, table)
        self.depth += 1

    def _machine(self, features, thresholds, left, right, node_labels, subset, nan_left, cover, categories):
        """The tree, or for a stump trainer the stump (as :class:`MultiClassStumpTrainer` makes it); ``nan_left``
        (None without missing values) says where each node sends NaN, ``categories`` the category sets."""
        k = self.k
        if not self.stump:
            return MultiClassTreeMachine.trusted(features, thresholds, left, right, node_labels, k, nan_left, cover,
                                                 categories=categories)
        if features[0] < 0:
            return MultiClassStumpMachine(0.0, int(subset[0]), [node_labels[0]] * 2, k,
                                          False if self.missing else None)
        return MultiClassStumpMachine(float(thresholds[0]), int(features[0]),
                                      [node_labels[left[0]], node_labels[right[0]]], k,
                                      None if nan_left is None else not nan_left[0])
