"""What each row partition computes for the partitioned gradient trees
(:mod:`bob_boost.weak_trainers.partitioned_trees`): its rows' derivatives, the histograms of the nodes asked for
(and of trial children), its rows moved down the trees, its leaves' sums and its rows' tree outputs. Plain numpy
functions of one partition's arrays, run where the partition is."""
from __future__ import annotations

import numpy as np

from ..engine.bin_quads import quad_scratch
from ..engine.codes import CodedFeatures
from ..engine.tree_histograms import build_histogram
from ..boosting.partitions import summed_pieces
from ..losses import LossFunction
from ..losses.base import weighted
from .partitioned import routed


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
                    frontiers: tuple[np.ndarray, ...], offsets: np.ndarray,
                    trials: tuple[np.ndarray, ...] | None = None) -> list[tuple]:
    """Per tree, the partition's (sums, counts, totals, node counts) of its frontier nodes.

    Tree ``t`` reads the gradient columns ``groups[t]`` and the matching hessian columns of ``values``;
    sums are (#frontier, #bins, 2K), in the in-memory trees' histogram layout of the global ``offsets``.
    ``sample_node`` may be a :func:`routed_histograms` pair. ``trials``: per tree, a table of
    :func:`~bob_boost.weak_trainers.partitioned.routed` that splits some leaves into trial children (node
    numbers past the tree's), whose rows count there for these histograms only.
    """
    outputs = values.shape[1] // 2
    sample_node = positions(sample_node)
    if trials is not None:
        sample_node = routed_trees(coded, sample_node, trials)
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


def settled_trees(coded: CodedFeatures, sample_node: np.ndarray, tables: tuple[np.ndarray, ...]) -> np.ndarray:
    """:func:`routed_trees` until every row rests at a leaf: leaf-wise, a leaf whose children will not split is
    split without histograms, before its own rows have moved down to it, so a row may have two levels to go."""
    sample_node = positions(sample_node)
    while True:
        moved = routed_trees(coded, sample_node, tables)
        if np.array_equal(moved, sample_node):
            return moved
        sample_node = moved


def routed_histograms(coded: CodedFeatures, grown, values: np.ndarray, tables: tuple[np.ndarray, ...] | None,
                      groups: np.ndarray, frontiers: tuple[np.ndarray, ...], offsets: np.ndarray,
                      trials: tuple[np.ndarray, ...] | None = None) -> tuple:
    """``(sample_node, histograms)``: the rows of ``grown`` (a sample_node, or the last such pair) moved by
    ``tables`` (:func:`settled_trees`; None: not moved), and their :func:`node_histograms` of ``frontiers``
    (with ``trials``).

    One task per partition and split, for results small enough to gather (``Partitions.gathered_bytes``): a
    task of histograms that waited for a task of routing would add a scheduling hop and as many tasks again
    to every split's round trip.
    """
    sample_node = positions(grown)
    if tables is not None:
        sample_node = settled_trees(coded, sample_node, tables)
    return sample_node, node_histograms(coded, sample_node, values, groups, frontiers, offsets, trials)


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
