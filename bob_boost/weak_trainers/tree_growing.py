"""Growing cost-sensitive multi-class trees on coded features.

Trees are grown level by level (:func:`grow_levels`, the one growth policy of these trees, in memory
and on a cluster, over a :class:`LevelSource`). All nodes of a level get their per-class
weighted histograms in one pass: from the histogram engine's compiled kernel
over the bin codes (quantised features), or from one ``np.bincount`` over
(node, feature bin, class) (exact features, whose bins may be too many to
pad). Every split of every feature is then scored by one compiled scan of
those histograms, so no Python loop runs over samples, thresholds or bins.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..binning import BinnedFeatures, midpoints
from ..engine import kernels
from ..engine.categorical import CATEGORY_WORDS
from ..engine.gini_categories import category_splits
from ..weak.multiclass import MultiClassTreeMachine
from .tree import TIE_TOLERANCE  # ties between splits and between classes: the gradient trees' rule
from .tree_categories import CategoryTable, categorical_mask

#: Upper bound on the (#nodes x #bins x #classes) histogram entries built at once; nodes of one
#: level are processed in chunks below it so deep trees on wide data stay within ~100 MB.
_MAX_HISTOGRAM_ENTRIES = 1 << 23


@dataclass
class TreeNodes:
    """The nodes of a tree being grown (node 0 the root; children follow their parent), as lists."""

    features: list[int] = field(default_factory=lambda: [-1])
    thresholds: list[float] = field(default_factory=lambda: [0.0])
    left: list[int] = field(default_factory=lambda: [-1])
    right: list[int] = field(default_factory=lambda: [-1])
    nan_left: list[bool] = field(default_factory=lambda: [False])
    #: Per node, the bins (within its feature) a categorical split sends left, as a bitset; None elsewhere.
    bin_sets: list[np.ndarray | None] = field(default_factory=lambda: [None])

    def split(self, node: int, feature: int, threshold: float, nan_left: bool,
              bin_set: np.ndarray | None = None) -> list[int]:
        """Split leaf ``node`` at ``threshold`` of ``feature`` (or by the categories of ``bin_set``); returns its
        two new children."""
        first_child = len(self.features)
        self.features[node], self.thresholds[node], self.nan_left[node] = feature, threshold, nan_left
        self.bin_sets[node] = bin_set
        self.left[node], self.right[node] = first_child, first_child + 1
        self.features += [-1, -1]
        self.thresholds += [0.0, 0.0]
        self.left += [-1, -1]
        self.right += [-1, -1]
        self.nan_left += [False, False]
        self.bin_sets += [None, None]
        return [first_child, first_child + 1]

    def category_sets(self, table: CategoryTable) -> tuple[np.ndarray, np.ndarray] | None:
        """The category values each categorical split sends left, as the machine's ``(offsets, values)``
        (:meth:`~bob_boost.weak_trainers.tree_categories.CategoryTable.sets`); None without such a split."""
        if all(bin_set is None for bin_set in self.bin_sets):
            return None
        words = np.zeros((len(self.bin_sets), CATEGORY_WORDS), dtype=np.uint64)
        for node, bin_set in enumerate(self.bin_sets):
            if bin_set is not None:
                words[node] = bin_set
        return table.sets(np.array(self.features), words)


#: A node's split as a :class:`LevelSource` gives it: ``(global bin, threshold, NaN goes left, bin set)``, the bin
#: -1 where no split helps; a categorical split's global bin is its feature's first and its bin set its left bins
#: (None for a numeric split).
Split = tuple[int, float, bool, "np.ndarray | None"]


def least_leaf_weight(fraction: float, total: float) -> float:
    """The least sample weight of a leaf, as scikit-learn's trees: ``fraction`` of the ``total``, less a
    relative :data:`TIE_TOLERANCE`, so that a leaf of exactly that share passes whatever order its weights
    were summed in (in memory, or partition by partition)."""
    return fraction * total * (1.0 - TIE_TOLERANCE)


@dataclass(frozen=True)
class LeafWeight:
    """The least sample weight each child of a split must hold, and what checking it reads.

    Attributes
    ----------
    minimum : float
        The least weight of a child (> 0).
    bin_weights : numpy.ndarray
        (#nodes, padded bins) the sample weight of every node's bins, in the histograms' layout.
    node_weights : numpy.ndarray
        (#nodes,) every node's sample weight.
    """

    minimum: float
    bin_weights: np.ndarray
    node_weights: np.ndarray


class LevelSource(Protocol):
    """Where :func:`grow_levels` gets a level's splits and sends its rows: the training rows in memory
    (:class:`TreeGrower`), or row partitions
    (:class:`~bob_boost.weak_trainers.partitioned_class_trees.PartitionedClassTrees`)."""

    def best_splits(self, frontier: list[int], nodes: TreeNodes) -> list[Split]:
        """Each frontier node's :data:`Split` (:func:`choose_splits`)."""

    def route(self, nodes: TreeNodes, splits: list[tuple[int, int]]) -> None:
        """Move the rows of the just split nodes (``(node, global bin)`` pairs) to their children."""


def grow_levels(source: LevelSource, feature_of_bin: np.ndarray, max_depth: int) -> TreeNodes:
    """Grow a cost-sensitive tree level by level, up to ``max_depth``, from ``source``'s best splits.

    Every node of a level that has a split is split; the tree stops at the depth limit or at a level
    where no node has one. In memory and on a cluster alike, only the source differs.
    """
    nodes = TreeNodes()
    frontier = [0]
    for _ in range(max_depth):
        splits = source.best_splits(frontier, nodes)
        made, children = [], []
        for node, (bin_index, threshold, nan_left, bin_set) in zip(frontier, splits):
            if bin_index >= 0:
                children += nodes.split(node, int(feature_of_bin[bin_index]), threshold, nan_left, bin_set)
                made.append((node, bin_index))
        if not children:
            break
        source.route(nodes, made)
        frontier = children
    return nodes


class TreeGrower:
    """One tree-growing run on the training rows: the :class:`LevelSource` of :func:`grow_levels` in memory."""

    def __init__(self, data: BinnedFeatures, labels: np.ndarray, weights: np.ndarray, loss_matrix: np.ndarray,
                 subset: np.ndarray, min_weight_fraction_leaf: float = 0.0,
                 row_losses: np.ndarray | None = None) -> None:
        self.data = data
        self.min_weight = least_leaf_weight(min_weight_fraction_leaf, float(np.sum(weights)))
        self.labels = labels
        self.weights = weights
        self.loss_matrix = loss_matrix
        self.row_losses = row_losses
        self.subset = subset
        self.k = loss_matrix.shape[0]
        # cost-weighted Gini: a class-j sample counts r_j = sum_k (L[j,k] - L[j,j]) times (with per-row
        # losses, its own row's r_n)
        if row_losses is None:
            factors = (loss_matrix - np.diag(loss_matrix)[:, np.newaxis]).sum(axis=1)[labels]
        else:
            factors = row_gini_factors(labels, row_losses)
        self.gini_weights = weights * factors
        self.feature_of_bin = np.repeat(np.arange(data.number_of_features), np.diff(data.offsets))
        self.sample_node = np.zeros(data.number_of_samples, dtype=np.int64)
        self.categorical = categorical_mask(np.array(sorted(data.categories), dtype=np.int64),
                                            data.number_of_features)

    def grow(self, max_depth: int) -> MultiClassTreeMachine:
        """Split level by level up to ``max_depth`` and return the tree."""
        nodes = grow_levels(self, self.feature_of_bin, max_depth)
        labels, cover = self._node_labels(nodes)
        return MultiClassTreeMachine.trusted(nodes.features, nodes.thresholds, nodes.left, nodes.right, labels, self.k,
                                             nodes.nan_left if self.data.missing else None, cover,
                                             categories=nodes.category_sets(self.data.category_table))

    def best_splits(self, frontier: list[int], nodes: TreeNodes) -> list[Split]:
        """The frontier nodes' best splits, from the histograms of their rows."""
        return self._best_splits(self.sample_node, np.array(frontier), len(nodes.features))

    def route(self, nodes: TreeNodes, splits: list[tuple[int, int]]) -> None:
        """Move the samples of the split nodes to their children, by the raw-value rule of the machine."""
        just_split = np.zeros(len(nodes.features), dtype=bool)
        just_split[[node for node, _ in splits]] = True
        sample_node = self.sample_node
        rows = np.flatnonzero(just_split[sample_node])
        node = sample_node[rows]
        feature = np.array(nodes.features)[node]
        values = self.data.raw[rows, feature]
        above = values >= np.array(nodes.thresholds)[node]
        for split, _ in splits:
            bin_set = nodes.bin_sets[split]
            if bin_set is not None:  # a set of categories goes left, every other value right
                at = node == split
                _, categories = self.data.category_table.sets(np.array([nodes.features[split]]), bin_set[np.newaxis])
                above[at] = ~np.isin(values[at], categories)
        if self.data.missing and values.dtype.kind == "f":
            nan = np.isnan(values)
            above[nan] = ~np.array(nodes.nan_left, dtype=bool)[node[nan]]
        moved = sample_node.copy()
        moved[rows] = np.where(above, np.array(nodes.right)[node], np.array(nodes.left)[node])
        self.sample_node = moved

    def _node_labels(self, nodes: TreeNodes) -> tuple[np.ndarray, np.ndarray]:
        """Every node's cheapest class and cover, from the samples that reach it (:func:`label_nodes`)."""
        n_nodes = len(nodes.features)
        sums = np.bincount(self.sample_node * self.k + self.labels, weights=self.weights,
                           minlength=n_nodes * self.k).reshape(n_nodes, self.k)
        if self.row_losses is None:
            return label_nodes(sums, nodes.features, nodes.left, nodes.right, self.loss_matrix)
        costs = leaf_costs(self.sample_node, self.weights, self.row_losses, n_nodes)
        return label_nodes_by_costs(sums, costs, nodes.features, nodes.left, nodes.right)

    def _best_splits(self, sample_node: np.ndarray, frontier: np.ndarray, n_nodes: int) -> list[Split]:
        """The best :data:`Split` per frontier node."""
        data = self.data
        n_bins = data.number_of_bins
        local = np.full(n_nodes, -1, dtype=np.int64)
        local[frontier] = np.arange(frontier.size)
        sample_local = local[sample_node]
        chunk = max(1, _MAX_HISTOGRAM_ENTRIES // (n_bins * (self.k + 1)))
        results: list[Split] = []
        for start in range(0, frontier.size, chunk):
            stop = min(start + chunk, frontier.size)
            rows = np.flatnonzero((sample_local >= start) & (sample_local < stop))
            results += self._chunk_splits(rows, sample_local[rows] - start, stop - start)
        return results

    def _chunk_splits(self, rows: np.ndarray, node: np.ndarray, n_nodes: int) -> list[Split]:
        """Score every split of ``n_nodes`` nodes whose samples are ``rows`` (local node ids ``node``)."""
        data, k = self.data, self.k
        n_bins = data.number_of_bins
        gini_weights = self.gini_weights[rows]
        totals = np.bincount(node * k + self.labels[rows], weights=gini_weights,
                             minlength=n_nodes * k).reshape(n_nodes, 1, k)
        node_counts = np.bincount(node, minlength=n_nodes)[:, np.newaxis]
        leaf_weight = None
        if data.coded is not None:
            histograms, counts = self._coded_histograms(rows, node, self.labels, self.gini_weights, totals[:, 0],
                                                        node_counts[:, 0])
            positions = data.padded_positions()
            if self.min_weight > 0:
                node_weights = np.bincount(node, weights=self.weights[rows], minlength=n_nodes)
                bin_weights, _ = self._coded_histograms(rows, node, np.zeros_like(self.labels), self.weights,
                                                        node_weights[:, np.newaxis], node_counts[:, 0])
                leaf_weight = LeafWeight(self.min_weight, bin_weights[:, :, 0], node_weights)
        else:
            codes = data.codes if rows.size == data.number_of_samples else data.codes[rows]
            if self.subset.size != data.number_of_features:
                codes = codes[:, self.subset]
            cells = codes + (node * n_bins)[:, np.newaxis]  # (#rows, #subset) cell of (node, bin)
            counts = np.bincount(cells.ravel(), minlength=n_nodes * n_bins).reshape(n_nodes, n_bins)
            if self.min_weight > 0:
                bin_weights = np.bincount(cells.ravel(), weights=np.repeat(self.weights[rows], self.subset.size),
                                          minlength=n_nodes * n_bins).reshape(n_nodes, n_bins)
                leaf_weight = LeafWeight(self.min_weight, bin_weights,
                                         np.bincount(node, weights=self.weights[rows], minlength=n_nodes))
            cells *= k
            cells += self.labels[rows][:, np.newaxis]
            histograms = np.bincount(cells.ravel(), weights=np.repeat(gini_weights, self.subset.size),
                                     minlength=n_nodes * n_bins * k).reshape(n_nodes, n_bins, k)
            positions = np.arange(n_bins)
        return choose_splits(histograms, counts, positions, data.offsets, self.subset, totals[:, 0], node_counts[:, 0],
                             bool(data.missing), data.bin_values, self.feature_of_bin, leaf_weight, self.categorical)

    def _coded_histograms(self, rows: np.ndarray, node: np.ndarray, labels: np.ndarray, weights: np.ndarray,
                          totals: np.ndarray, node_counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The chunk's sums of ``weights`` per class of ``labels`` (#nodes, padded bins, #classes of
        ``totals``) and counts (#nodes, padded bins) from the kernel.

        Each bin's sum adds its samples in row order, as ``np.bincount`` does, so both paths agree
        exactly on dense features; :meth:`BinnedFeatures.padded_positions` maps global bins into them.
        """
        data = self.data
        sample_node = np.full(data.number_of_samples, -1, dtype=np.int64)
        sample_node[rows] = node
        sums, counts = data.coded.node_histograms(sample_node, labels, weights, totals, node_counts,
                                                  self.subset.astype(np.int64))
        n_nodes = totals.shape[0]
        return sums.reshape(n_nodes, -1, totals.shape[1]), counts.reshape(n_nodes, -1)


def choose_splits(histograms: np.ndarray, counts: np.ndarray, positions: np.ndarray, offsets: np.ndarray,
                  subset: np.ndarray, totals: np.ndarray, node_counts: np.ndarray, missing: bool,
                  bin_values: np.ndarray, feature_of_bin: np.ndarray, leaf_weight: LeafWeight | None = None,
                  categorical: np.ndarray | None = None) -> list[Split]:
    """Each node's best split from its class histograms (a :data:`Split`), bin -1 where no split improves on
    the node.

    Parameters
    ----------
    histograms : numpy.ndarray
        (#nodes, padded bins, K) cost-weighted class sums per bin (``positions`` maps global bins into them).
    counts : numpy.ndarray
        (#nodes, padded bins) samples per bin.
    positions : numpy.ndarray
        (#bins,) each global bin's position in the padded layout.
    offsets : numpy.ndarray
        (#features + 1,) feature ``f``'s global bins are ``offsets[f]:offsets[f + 1]``.
    subset : numpy.ndarray
        The feature columns the splits may use.
    totals : numpy.ndarray
        (#nodes, K) each node's cost-weighted class sums.
    node_counts : numpy.ndarray
        (#nodes,) samples per node.
    missing : bool
        Whether each feature's last bin holds its missing values.
    bin_values, feature_of_bin : numpy.ndarray
        (#bins,) each bin's raw value and feature (the thresholds lie half-way between occupied bins).
    leaf_weight : LeafWeight, optional
        The least sample weight of a child, with the nodes' weights per bin; None: any.
    categorical : numpy.ndarray, optional
        (#features,) bool, the features split by sets of their bins (:mod:`bob_boost.engine.gini_categories`),
        or empty / None for none.
    """
    n_nodes = totals.shape[0]
    best = np.full(n_nodes, -1, dtype=np.int64)
    score = np.full(n_nodes, -np.inf)
    nan_left = np.zeros(n_nodes, dtype=np.bool_)
    if leaf_weight is None:
        leaf_weight = LeafWeight(0.0, np.zeros((n_nodes, 0)), np.zeros(n_nodes))
    subset = np.sort(subset).astype(np.int64)
    by_set = np.zeros(subset.size, dtype=bool) if categorical is None or not categorical.size else categorical[subset]
    totals = np.ascontiguousarray(totals)
    # near-ties (equal up to rounding) go to the first feature and threshold, as exact ones do
    if not by_set.all():
        kernels.best_gini_splits(histograms, counts, positions, offsets, subset[~by_set], totals, node_counts,
                                 TIE_TOLERANCE, missing, leaf_weight.bin_weights, leaf_weight.node_weights,
                                 leaf_weight.minimum, best, score, nan_left)
    set_feature = np.full(n_nodes, -1, dtype=np.int64)
    if by_set.any():
        set_feature, set_score, sets = category_splits(histograms, counts, positions, offsets, subset[by_set], totals,
                                                       TIE_TOLERANCE, leaf_weight.bin_weights,
                                                       leaf_weight.node_weights, leaf_weight.minimum)
    parent = _gini_term(totals)
    results: list[Split] = []
    for i, bin_index in enumerate(best.tolist()):
        bin_set = None
        if set_feature[i] >= 0:
            top = max(score[i], set_score[i])
            numeric_ties = bin_index >= 0 and score[i] >= top - TIE_TOLERANCE * abs(top)
            if not numeric_ties or (set_score[i] >= top - TIE_TOLERANCE * abs(top)
                                    and set_feature[i] < feature_of_bin[bin_index]):
                f = int(set_feature[i])
                bin_index, score[i], bin_set = int(offsets[f]), set_score[i], sets[i].copy()
                nan_bit = int(offsets[f + 1] - 1 - offsets[f])  # the missing values' bin, last of the feature's
                nan_left[i] = missing and bool((int(bin_set[nan_bit >> 6]) >> (nan_bit & 63)) & 1)
        gain = score[i] - parent[i] if bin_index >= 0 else -np.inf
        # a gain at rounding level means the children have the parent's class mix
        if not np.isfinite(gain) or gain <= 1e-12 * max(totals[i].sum(), np.finfo(float).tiny):
            results.append((-1, 0.0, False, None))
            continue
        if bin_set is not None:
            results.append((bin_index, 0.0, bool(nan_left[i]), bin_set))
            continue
        # the next occupied value bin (the missing-value bin, last, is none)
        end = offsets[feature_of_bin[bin_index] + 1] - int(missing)
        following = bin_index + 1 + int(np.argmax(counts[i, positions[bin_index + 1:end]] > 0))
        threshold = midpoints(bin_values[bin_index], bin_values[following])
        results.append((bin_index, float(threshold), bool(nan_left[i]), None))
    return results


def label_nodes(leaf_sums: np.ndarray, node_features, left, right,
                loss_matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every node's cheapest class and cover (sample-weight sum), from the (#nodes, K) weighted class sums of the
    samples ending in each node.

    The sums are accumulated bottom-up (:func:`node_class_sums`) into every ancestor first.
    """
    sums, cover = node_class_sums(leaf_sums, node_features, left, right)
    return cheapest(sums @ loss_matrix), cover


def row_gini_factors(labels: np.ndarray, row_losses: np.ndarray) -> np.ndarray:
    """How many times each row counts in the cost-weighted Gini impurity with per-row losses: its own
    ``sum_k (L[n, k] - L[n, l_n])``, as a class-``j`` row counts ``r_j`` times with a class loss matrix."""
    return (row_losses - row_losses[np.arange(labels.size), labels][:, np.newaxis]).sum(axis=1)


def leaf_costs(sample_node: np.ndarray, weights: np.ndarray, row_losses: np.ndarray, nodes: int) -> np.ndarray:
    """(#nodes, K) the weighted per-row losses ``sum_n w_n L[n, k]`` of the rows ending in each node: with
    example-dependent losses, each node's cost of predicting every class."""
    return np.stack([np.bincount(sample_node, weights=weights * row_losses[:, j], minlength=nodes)
                     for j in range(row_losses.shape[1])], axis=1)


def label_nodes_by_costs(leaf_sums: np.ndarray, leaf_costs: np.ndarray, node_features, left,
                         right) -> tuple[np.ndarray, np.ndarray]:
    """:func:`label_nodes` with per-row losses: every node's cheapest class by the (#nodes, K) costs of the rows
    ending in each node (:func:`leaf_costs`), summed bottom-up as the class sums are, and its cover."""
    node_costs, _ = node_class_sums(leaf_costs, node_features, left, right)
    return cheapest(node_costs), node_class_sums(leaf_sums, node_features, left, right)[1]


def node_class_sums(leaf_sums: np.ndarray, node_features, left, right) -> tuple[np.ndarray, np.ndarray]:
    """Every node's (#nodes, K) weighted class sums and cover (their total) from those of the samples ending in
    each node: accumulated bottom-up (children follow their parents), each inner node's its children's sum."""
    sums, cover = leaf_sums.copy(), leaf_sums.sum(axis=1)
    for node in range(sums.shape[0] - 1, -1, -1):
        if node_features[node] >= 0:
            sums[node] = sums[left[node]] + sums[right[node]]
            cover[node] = cover[left[node]] + cover[right[node]]  # the children's, so that covers add up exactly
    return sums, cover


def cheapest(costs: np.ndarray) -> np.ndarray:
    """Index of the smallest value along the last axis; values within :data:`TIE_TOLERANCE` of it tie.

    Ties go to the lowest index, so that costs which are equal up to rounding
    (e.g. balanced classes under a scaled loss matrix) give the same choice
    however they were computed.
    """
    smallest = costs.min(axis=-1, keepdims=True)
    return np.argmax(costs <= smallest + TIE_TOLERANCE * np.abs(smallest), axis=-1)


def _gini_term(class_sums: np.ndarray) -> np.ndarray:
    """``sum_j p_j^2 / sum_j p_j`` over the last axis (0 for empty sets)."""
    total = class_sums.sum(axis=-1)
    squares = np.square(class_sums).sum(axis=-1)
    return np.divide(squares, total, out=np.zeros_like(total), where=total > 0)
