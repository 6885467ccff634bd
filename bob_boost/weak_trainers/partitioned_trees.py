"""Gradient trees grown from row partitions (:mod:`bob_boost.boosting.partitions`): the round's trees from
node histograms summed over the partitions.

Each round trip, every partition sends the gradient/hessian histograms of the new frontier nodes of every tree of
the round (one per output, or one for all): with histogram subtraction (the default, as in memory) only the child of
fewer rows of each split, its sibling's histogram being the parent's minus it. The histograms are summed in
partition order (by the client when they are small enough to gather, else on a worker), each node's best split is
found by the in-memory trees' scan (:func:`bob_boost.engine.split_scan.best_split`), and the in-memory growth policy
(:mod:`bob_boost.engine.tree_policy`: level by level, or the open leaf of largest gain) chooses the splits, which go
back to the partitions to move their rows. Leaves get the in-memory Newton values from the leaves' summed
derivatives (hessian 1 for gradient-only leaves). The trees are those :class:`bob_boost.TreeTrainer` grows in
memory, up to the rounding of sums added per partition.

Leaf-wise growth splits one leaf at a time, which would take a round trip a split. Instead each round trip also
brings, on trial, the children's histograms of the open leaves of largest gain (each leaf's candidate split is
known once it is scanned), without moving their rows; the client then splits leaves in leaf-wise order for as
long as the chosen leaf's children came on trial: a round trip is needed only when the leaf chosen next was made
since the last one. A child's histogram is the same sum of the same rows in the same order either way, so the
trees do not change (a 31-leaf tree of depth 9 on 3,000 rows: 19 round trips instead of 32).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..boosting.partitions import Partitions, gathers, summed_pieces
from ..engine import tree_policy
from ..engine.categorical import CATEGORY_WORDS, workspace
from ..engine.split_scan import allowed_columns, best_split, interaction_columns, node_columns
from ..losses import LossFunction
from ..weak.tree import TreeMachine
from .partitioned import goes_right
from .partitioned_tree_tasks import (coded_tree_outputs, derivatives, leaf_totals, node_histograms, positions,
                                     root_nodes, routed_histograms, sampled_roots, settled_trees, summed_trees,
                                     tree_outputs)
from .tree import TIE_TOLERANCE, TreeTrainer, grown_machine
from .tree_categories import CategoryTable


#: Leaf-wise, the most open leaves whose children's histograms a round trip brings on trial. On 3,000 rows of 8
#: features in 4 chunks, 31-leaf regression trees took as few round trips with 8 as with every open leaf, 1.2 to
#: 1.3 times as many with 4, twice as many with 2; the histograms a round trip moves stay bounded.
TRIAL_LEAVES = 8


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
        self.subtraction = trainer.histogram_subtraction

    def grow(self, loss: LossFunction, newton_leaves: bool, weights: list | None = None,
             columns: np.ndarray | None = None, factors: list | None = None,
             node_columns: tuple[int, float] | None = None) -> tuple[TreeMachine, list, Callable, tuple]:
        """The round's trees as one machine, the handles of every partition's (#rows, #outputs) tree outputs, and
        :func:`~.partitioned_tree_tasks.coded_tree_outputs` with the arguments that make them again from the codes.

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
        leafwise = trainer.growth == "leafwise"
        moved = False  # whether nodes were split since the rows were last routed
        paired = False  # whether grown holds routed_histograms pairs
        while True:
            # leaf-wise, the open leaves of largest gain have their children's histograms brought on trial
            trials = [self._trials(tree) for tree in growing] if leafwise else [None] * trees
            asks = [self._asked(tree, trial) for tree, trial in zip(growing, trials)]
            if any(asked.size for asked, _ in asks):
                frontiers = tuple(asked for asked, _ in asks)
                tables = self._tables(growing) if moved else None
                trial_tables = tuple(trial[0] for trial in trials) if leafwise else None
                moved = False
                # a partition's histograms and its rows' positions (int64, a row per tree)
                paired = gathers(partitions, self._histogram_bytes(frontiers) + 8 * trees * max(partitions.rows))
                if paired:
                    grown = partitions.each(routed_histograms, partitions.coded, grown, values, tables,
                                            self.groups, frontiers, self.offsets, trial_tables)
                    summed = summed_trees(*(pair[1] for pair in partitions.gather(grown)))
                else:  # the histograms alone move, to the partition that sums them
                    if tables is not None:
                        grown = partitions.each(settled_trees, partitions.coded, grown, tables)
                    summed = partitions.combined(summed_trees, partitions.each(
                        node_histograms, partitions.coded, grown, values, self.groups, frontiers, self.offsets,
                        trial_tables))
                for tree, (asked, derived), trial, histogram in zip(growing, asks, trials, summed):
                    made = tree.completed(asked, histogram, derived)
                    if tree.frontier.size:
                        self._scan(tree, *_stacked([made[int(node)] for node in tree.frontier]))
                    if leafwise:  # the frontier (a root) is scanned; its children come on trial
                        tree.settle()
                        _, leaves, children = trial
                        for k, leaf in enumerate(leaves):
                            tree.trial_children[int(leaf)] = _stacked([made[int(children[2 * k])],
                                                                       made[int(children[2 * k + 1])]])
            if leafwise:
                split_any, waiting = zip(*(self._grow_leafwise(tree) for tree in growing))
                moved = moved or any(split_any)
                if not any(waiting):
                    break
                continue
            split_any = [tree.grow(self.feature_of_bin, trainer, self.monotone, self.interaction_groups,
                                   self.categorical) for tree in growing]
            if not any(split_any):
                break
            moved = True
        sample_node = grown
        if moved:
            sample_node = partitions.each(settled_trees, partitions.coded, grown, self._tables(growing))
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

    def _trials(self, tree: "_GrowingTree") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The leaves whose children's histograms the next round trip brings on trial: the open leaves of a
        candidate split without them, at most :data:`TRIAL_LEAVES` and as many as the tree may still split (those
        of largest gain, the lowest node on a tie, as leaf-wise growth takes them). Returns the tree's
        :func:`~.partitioned.routed` table splitting them into trial children (numbered from the tree's capacity
        on), the leaves and those children."""
        nodes, n = tree.nodes, tree.n_nodes
        open_leaves = np.flatnonzero((nodes["node_feature"][:n] < 0) & (nodes["split_bin"][:n] >= 0))
        leaves = np.array([leaf for leaf in open_leaves if int(leaf) not in tree.trial_children
                           and tree.children_split(int(leaf), self.trainer)], dtype=np.int64)
        budget = max(self.trainer.max_leaves - tree.leaves, 0) if self.trainer.max_leaves else leaves.size
        leaves = leaves[np.lexsort((leaves, -nodes["split_gain"][leaves]))][:min(budget, TRIAL_LEAVES)]
        children = nodes["node_feature"].size + np.arange(2 * leaves.size, dtype=np.int64)
        table = self._routing_table(n, leaves, nodes["split_bin"][leaves], children[0::2], children[1::2],
                                    nodes["split_nan_left"][leaves], nodes["split_sets"][leaves])
        return table, leaves, children

    def _asked(self, tree: "_GrowingTree", trial: tuple | None) -> tuple[np.ndarray, list[tuple[int, int, int]]]:
        """The nodes whose histograms the partitions build next: the tree's frontier, then the children of its
        ``trial`` leaves (:meth:`_trials`). With histogram subtraction, of two siblings only the one of fewer
        rows (the left on a tie, as in memory); also returns the (node, parent, sibling) whose histograms are then
        their parent's minus their sibling's."""
        trial_children = np.zeros(0, dtype=np.int64) if trial is None else trial[2]
        if not self.subtraction:
            return np.concatenate([tree.frontier, trial_children]), []
        pairs = tree.pairs + [(int(leaf), int(trial_children[2 * k]), int(trial_children[2 * k + 1]))
                              for k, leaf in enumerate([] if trial is None else trial[1])]
        asked = [] if tree.pairs else [int(node) for node in tree.frontier]  # a root has no parent
        derived = []
        for parent, left, right in pairs:
            _, counts, _, rows = tree.histograms[parent]
            left_rows = self._left_rows(tree, parent, counts)
            small, large = (left, right) if left_rows <= rows - left_rows else (right, left)
            asked.append(small)
            derived.append((large, parent, small))
        return np.array(asked, dtype=np.int64), derived

    def _left_rows(self, tree: "_GrowingTree", node: int, counts: np.ndarray) -> int:
        """The rows of ``node`` (of per-bin ``counts``) that its candidate split sends left."""
        nodes = tree.nodes
        split_bin = nodes["split_bin"][node:node + 1]
        feature = int(self.feature_of_bin[split_bin[0]])
        first, bins = int(self.offsets[feature]), int(self.offsets[feature + 1] - self.offsets[feature])
        none = np.zeros(1, dtype=np.int64)
        table = self._routing_table(1, none, split_bin, none, none, nodes["split_nan_left"][node:node + 1],
                                    nodes["split_sets"][node:node + 1])
        right = goes_right(np.arange(bins), np.repeat(table, bins, axis=0))
        return int(counts[first:first + bins][~right].sum())

    def _grow_leafwise(self, tree: "_GrowingTree") -> tuple[bool, bool]:
        """Split the tree's leaves in leaf-wise order (:func:`~bob_boost.engine.tree_policy.select`) for as long as
        the chosen leaf's children's histograms came on trial, scanning the children with them. Returns whether
        a leaf was split, and whether the tree waits for a round trip (its next leaf's children)."""
        trainer, split_any = self.trainer, False
        while True:
            chosen = tree.next_leaf(trainer)
            if chosen < 0:
                return split_any, False
            # children that will not split need no histograms
            if chosen not in tree.trial_children and tree.children_split(chosen, trainer):
                return split_any, True
            histograms = tree.trial_children.pop(chosen, None)
            tree.histograms.pop(chosen, None)
            tree.split([chosen], self.feature_of_bin, trainer, self.monotone, self.interaction_groups,
                       self.categorical)
            if tree.frontier.size:
                self._scan(tree, *histograms)
            tree.settle()
            split_any = True

    def _histogram_bytes(self, frontiers: tuple[np.ndarray, ...]) -> int:
        """Bytes of one partition's :func:`~.partitioned_tree_tasks.node_histograms` of ``frontiers`` (sums, counts
        and totals)."""
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
                if self.subtraction and nodes["split_bin"][node] >= 0:  # its children's histograms subtract it
                    tree.histograms[int(node)] = (sums[j], counts[j], totals[j], node_counts[j])

    def _tables(self, growing: list["_GrowingTree"]) -> tuple[np.ndarray, ...]:
        """Per tree, (#nodes, 6): each node's feature (-1: leaf), bin within the feature, left and right child,
        the feature's NaN code (-1 without missing values) and whether NaN goes left (1), and with categorical
        features whether the split is categorical and its bin set; see
        :func:`~bob_boost.weak_trainers.partitioned.routed`."""
        tables = []
        for tree in growing:
            nodes = tree.nodes
            inner = np.flatnonzero(nodes["node_feature"][:tree.n_nodes] >= 0)
            tables.append(self._routing_table(tree.n_nodes, inner, nodes["node_bin"][inner], nodes["node_left"][inner],
                                              nodes["node_right"][inner], nodes["node_nan_left"][inner],
                                              nodes["node_sets"][inner]))
        return tuple(tables)

    def _routing_table(self, n: int, split: np.ndarray, bins: np.ndarray, left: np.ndarray, right: np.ndarray,
                       nan_left: np.ndarray, sets: np.ndarray) -> np.ndarray:
        """A tree's (n, 6) table of :func:`~.partitioned.routed` (with categorical features, 7 + the bin set's
        words) in which the nodes ``split`` split at the global ``bins`` into ``left`` and ``right``, NaN going
        left where ``nan_left``, categorical splits by their bin ``sets``; the other rows are -1 (not split)."""
        table = np.full((n, 6 + (1 + CATEGORY_WORDS if self.categorical.size else 0)), -1, dtype=np.int64)
        f = self.feature_of_bin[bins]
        nan_code = self.offsets[f + 1] - self.offsets[f] - 1 if self.missing else np.full(f.size, -1)
        table[split, :6] = np.column_stack([f, bins - self.offsets[f], left, right, nan_code, nan_left])
        if self.categorical.size:
            table[split, 6] = self.categorical[f]
            table[split, 7:] = sets.view(np.int64)
        return table

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
        #: (parent, left, right) of the frontier's siblings (empty for a root)
        self.pairs: list[tuple[int, int, int]] = []
        #: Leaf-wise: each open leaf's children's (sums, counts, totals, node counts), brought on trial.
        self.trial_children: dict[int, tuple] = {}
        #: With histogram subtraction: the (sums, counts, totals, node count) of scanned nodes of a candidate
        #: split, until their children's histograms are made
        self.histograms: dict[int, tuple] = {}

    def completed(self, asked: np.ndarray, histogram: tuple, derived: list[tuple[int, int, int]]) -> dict[int, tuple]:
        """Each node's (sums, counts, totals, node count): those ``asked`` from their summed ``histogram``, those
        ``derived`` as their parent's minus their sibling's (the parents are then forgotten)."""
        made = {int(node): tuple(part[j] for part in histogram) for j, node in enumerate(asked)}
        for node, parent, sibling in derived:
            made[node] = tuple(whole - part for whole, part in zip(self.histograms.pop(parent), made[sibling]))
        return made

    def settle(self) -> None:
        """Leaf-wise, after a scan: no frontier (what the next round trip brings comes on trial)."""
        self.frontier = np.zeros(0, dtype=np.int64)
        self.pairs = []

    def _select(self, trainer: TreeTrainer) -> np.ndarray:
        """The nodes the in-memory growth policy splits next."""
        nodes = self.nodes
        capacity = nodes["node_feature"].size
        frontier = np.zeros(capacity, dtype=np.int64)
        frontier[:self.frontier.size] = self.frontier
        chosen = np.zeros(capacity, dtype=np.bool_)
        n_frontier, _ = tree_policy.select(
            frontier, self.frontier.size, nodes["node_feature"], nodes["split_bin"], nodes["split_gain"],
            self.n_nodes, self.leaves, trainer.max_leaves or 0, trainer.growth == "leafwise", chosen)
        return frontier[:n_frontier][chosen[:n_frontier]]

    def children_split(self, leaf: int, trainer: TreeTrainer) -> bool:
        """Whether the children of ``leaf``, split now, may split in turn (and so need histograms)."""
        return tree_policy.children_may_split(self.nodes["depth"][leaf] + 1, trainer.max_depth or 0,
                                              trainer.max_leaves or 0, self.leaves + 1)

    def next_leaf(self, trainer: TreeTrainer) -> int:
        """Leaf-wise, the leaf split next (-1: none)."""
        chosen = self._select(trainer)
        return int(chosen[0]) if chosen.size else -1

    def grow(self, feature_of_bin: np.ndarray, trainer: TreeTrainer, monotone: np.ndarray,
             groups: np.ndarray, categorical: np.ndarray) -> bool:
        """Split what the in-memory growth policy chooses next (:meth:`split`). Returns whether a node was
        split."""
        split_nodes = self._select(trainer)
        # level by level, a node not split now never is: only the split nodes' histograms are subtracted
        self.histograms = {int(node): self.histograms[int(node)] for node in split_nodes if node in self.histograms}
        self.split(split_nodes, feature_of_bin, trainer, monotone, groups, categorical)
        return split_nodes.size > 0

    def split(self, split_nodes, feature_of_bin: np.ndarray, trainer: TreeTrainer, monotone: np.ndarray,
              groups: np.ndarray, categorical: np.ndarray) -> None:
        """Split ``split_nodes`` by their candidates (the children bounded by the ``monotone`` constraints and
        keeping the interaction ``groups`` of their path, as in memory); the new frontier is the children that
        may split."""
        nodes = self.nodes
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
        # siblings are at one depth: both children of a node may split, or neither
        self.pairs = [(int(node), int(nodes["node_left"][node]), int(nodes["node_right"][node])) for node in split_nodes
                      if tree_policy.children_may_split(nodes["depth"][node] + 1, trainer.max_depth or 0,
                                                        trainer.max_leaves or 0, self.leaves)]
        self.frontier = np.array([child for _, left, right in self.pairs for child in (left, right)], dtype=np.int64)


def _stacked(histograms: list[tuple]) -> tuple:
    """Nodes' (sums, counts, totals, node count) stacked, a node per row, as :meth:`_scan` reads them."""
    return tuple(np.stack(parts) for parts in zip(*histograms))
