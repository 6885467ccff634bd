"""What the workers run for multi-class boosting of trees (BAdaCost, SAMME, AdaBoost.M1): numpy on one chunk.

A chunk's tree state is ``sample_node``, every row's current node; each level sends per-node class
histograms, each round a (K, K) confusion matrix.
"""
from __future__ import annotations

import numpy as np

from ..costs import check_class_labels
from ..engine.codes import CodedFeatures, integral_features, step_codes
from ..engine.threads import check_threads
from ..exceptions import InvalidValueError


def value_range(chunk: np.ndarray, n_threads: int | None = 1,
                missing: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each column's smallest and largest value and whether it holds only integers; NaN is an error, unless
    ``missing`` (NaN a missing value, skipped: a column of NaN only gives +inf and -inf). Infinity is an error
    either way."""
    if missing and chunk.dtype.kind == "f":
        if np.isinf(chunk).any():
            raise InvalidValueError("features: contain infinite values")
        present = ~np.isnan(chunk)
        low = np.where(present, chunk, np.inf).min(axis=0, initial=np.inf)
        high = np.where(present, chunk, -np.inf).max(axis=0, initial=-np.inf)
    else:
        if not np.isfinite(chunk).all():
            raise InvalidValueError("features: contain NaN or infinite values")
        low, high = chunk.min(axis=0), chunk.max(axis=0)
    # the in-memory test, which skips NaN, on the chunk's rows: all chunks integral is the whole matrix integral
    return low.astype(np.float64), high.astype(np.float64), integral_features(chunk, check_threads(n_threads))


def quantized_codes(chunk: np.ndarray, low: np.ndarray, step: np.ndarray, top: int, bins: int,
                    n_threads: int | None = 1, missing_codes: np.ndarray | None = None) -> CodedFeatures:
    """The chunk coded into the global quantised bins (:class:`bob_boost.engine.edges.QuantizedLayout`), NaN as
    its feature's ``missing_codes`` (with missing values), its node histograms built on ``n_threads``."""
    threads = check_threads(n_threads)
    return CodedFeatures(step_codes(chunk, low, step, threads, top, missing_codes), bins, threads)


def class_indices(chunk: np.ndarray, number_of_classes: int) -> np.ndarray:
    """The chunk's labels as int64 classes ``0 .. K-1`` (checked)."""
    return check_class_labels(chunk, number_of_classes)


def largest_label(chunk: np.ndarray) -> int:
    """The largest label of the chunk (labels must be integers >= 0)."""
    return int(check_class_labels(chunk, np.iinfo(np.int64).max).max(initial=0))


def initial_log_weights(labels: np.ndarray, weights, mean: float) -> np.ndarray:
    """``log(w / mean)`` (0 without weights): the in-memory trainers' mean-1 initial weights, in logs."""
    if weights is None:
        return np.zeros(labels.size)
    with np.errstate(divide="ignore"):  # a zero weight stays zero
        return np.log(weights / mean)


def replayed_log_weights(chunk: np.ndarray, labels: np.ndarray, initial: np.ndarray, exponents: np.ndarray,
                         machine) -> np.ndarray:
    """The chunk's log weights after a continued machine's rounds, replayed on its raw rows in their order, as
    the in-memory loop replays them (:meth:`bob_boost.boosting.closed_form.MulticlassCostBoosting.start`)."""
    log_weights = initial
    for weak, weight in zip(machine.weak_machines, machine.weights[:, 0]):
        log_weights = log_weights + weight * exponents[labels, weak.forward_labels(chunk)]
    return log_weights


def raw_confusion(chunk: np.ndarray, labels: np.ndarray, weights: np.ndarray, weak, k: int) -> np.ndarray:
    """(K, K) weighted confusion matrix of a weak machine's labels on the chunk's raw rows."""
    return np.bincount(labels * k + weak.forward_labels(chunk), weights=weights, minlength=k * k).reshape(k, k)


def largest(values: np.ndarray) -> float:
    """The chunk's largest value (-inf for an empty chunk)."""
    return float(values.max(initial=-np.inf))


def exp_sum(log_weights: np.ndarray, peak: float) -> float:
    """``sum exp(log w - peak)``."""
    return float(np.exp(log_weights - peak).sum())


def normalised(log_weights: np.ndarray, log_total: float) -> np.ndarray:
    """The chunk's share of the normalised weights ``exp(log w - log total)``."""
    return np.exp(log_weights - log_total)


def root_nodes(rows: int) -> np.ndarray:
    """Every row at the root."""
    return np.zeros(rows, dtype=np.int64)


def node_class_histograms(coded: CodedFeatures, sample_node: np.ndarray, labels: np.ndarray, weights: np.ndarray,
                          factors: np.ndarray, local: np.ndarray, subset: np.ndarray, number_of_classes: int) -> tuple:
    """The chunk's cost-weighted class histograms of the frontier nodes.

    ``local[node]`` is a node's position in the frontier (-1 for the others). Returns the (#frontier,
    padded bins, K) class sums, the (#frontier, padded bins) counts, the (#frontier, K) class totals
    and the (#frontier,) node counts, as :func:`bob_boost.weak_trainers.tree_growing.choose_splits` reads them.
    """
    k = number_of_classes
    nodes = int((local >= 0).sum())
    frontier = local[sample_node]
    inside = frontier >= 0
    gini_weights = weights * factors[labels]
    totals = np.bincount(frontier[inside] * k + labels[inside], weights=gini_weights[inside],
                         minlength=nodes * k).reshape(nodes, k)
    counts = np.bincount(frontier[inside], minlength=nodes)
    sums, bin_counts = coded.node_histograms(frontier, labels, gini_weights, totals, counts, subset)
    return sums.reshape(nodes, -1, k), bin_counts.reshape(nodes, -1), totals, counts


def summed(*parts: tuple) -> tuple:
    """Tuples of arrays summed element by element, left to right (the chunks' order)."""
    total = list(parts[0])
    for part in parts[1:]:
        total = [a + b for a, b in zip(total, part)]
    return tuple(total)


def routed(coded: CodedFeatures, sample_node: np.ndarray, split: np.ndarray) -> np.ndarray:
    """Rows of split nodes moved to a child: right where their code is above the split's bin.

    ``split`` is a (#nodes, 6) table of each node's feature, bin within the feature, left and right child,
    the feature's NaN code (-1 without missing values) and whether NaN goes left (feature -1: not split this
    level). The node's rows hold codes at most that bin or at least the next occupied one, so this is the raw
    rule ``x >= threshold`` of the tree (threshold between the two); a NaN row goes to the split's NaN side.
    """
    feature = split[sample_node, 0]
    moving = np.flatnonzero(feature >= 0)
    if moving.size == 0:
        return sample_node
    node = sample_node[moving]
    codes = coded.codes[feature[moving], moving]
    above = codes > split[node, 1]
    above = np.where(codes == split[node, 4], split[node, 5] == 0, above)
    moved = sample_node.copy()
    moved[moving] = np.where(above, split[node, 3], split[node, 2])
    return moved


def leaf_sums(sample_node: np.ndarray, labels: np.ndarray, weights: np.ndarray, nodes: int, k: int) -> np.ndarray:
    """(#nodes, K) the chunk's weighted class sums per node its rows end in."""
    return np.bincount(sample_node * k + labels, weights=weights, minlength=nodes * k).reshape(nodes, k)


def confusion(labels: np.ndarray, sample_node: np.ndarray, weights: np.ndarray, node_labels: np.ndarray,
              k: int) -> np.ndarray:
    """(K, K) weighted confusion matrix of the tree's predictions (the labels of the rows' leaves)."""
    predicted = node_labels[sample_node]
    return np.bincount(labels * k + predicted, weights=weights, minlength=k * k).reshape(k, k)


def updated_log_weights(log_weights: np.ndarray, labels: np.ndarray, sample_node: np.ndarray,
                        node_labels: np.ndarray, exponents: np.ndarray, weight: float) -> np.ndarray:
    """The multi-class weight update ``log w + weight * exponents[label, predicted]``."""
    return log_weights + weight * exponents[labels, node_labels[sample_node]]


def rebuilt_log_weights(coded: CodedFeatures, labels: np.ndarray, initial: np.ndarray, exponents: np.ndarray,
                        history: tuple) -> np.ndarray:
    """The chunk's log weights rebuilt from its codes and the trees so far, as the rounds updated them.

    ``history`` holds each round's ``(split table of every inner node, depth, node labels, weight)``;
    routing ``depth`` times through the whole table moves the rows level by level as growing did.
    """
    log_weights = initial
    for table, depth, node_labels, weight in history:
        leaves = root_nodes(labels.size)
        for _ in range(depth):
            leaves = routed(coded, leaves, table)
        log_weights = updated_log_weights(log_weights, labels, leaves, node_labels, exponents, weight)
    return log_weights
