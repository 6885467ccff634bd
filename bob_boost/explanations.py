"""Shapley values of a boosted machine's scores: how much each feature moves a row's score away from an
expected score.

A machine's scores are its baseline plus weighted weak machines' outputs, so their Shapley values are the
weighted sum of the weak machines' own, in one of two games:

**Path-dependent** (:func:`path_dependent_shap`, no background rows): the trees' own estimate of the
expected score given a coalition's features, from each node's training cover (the path-dependent Tree SHAP
of :mod:`bob_boost.engine.path_shap`, also for the cost-sensitive trees, whose outputs are their labels'
margin vectors). The expected value is the cover-weighted mean of the leaves. Only trees record a cover.

**Interventional** (:func:`interventional_shap`, against background rows): the features outside a
coalition take a background row's values, averaged over the background rows; exact for every kind of weak
machine:

- a weak machine that reads one feature (a stump, a single-feature table, each output of a multi-output
  look-up table): that feature's value is the output minus the background's mean output;
- gradient trees: interventional Tree SHAP, compiled (:mod:`bob_boost.engine.tree_shap`);
- any other weak machine (the multi-class trees): every coalition of the few features it reads, evaluated
  on rows that mix the foreground row with each background row.

Either way the values add up, with the expected value, to the row's score.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from .costs import margin_vectors
from .engine import path_shap, tree_shap
from .exceptions import InvalidValueError
from .weak.base import WeakMachine
from .weak.lut import LUTMachine
from .weak.multiclass import MultiClassTreeMachine
from .weak.tree import TreeMachine

#: The most features a weak machine without a closed form or a compiled algorithm may read: its
#: coalitions are enumerated (2 ** 12 of them).
MAX_ENUMERATED_FEATURES = 12

#: Mixed rows (foreground rows x background rows) evaluated at once by the enumeration.
_MIXED_ROWS = 1 << 18


def interventional_shap(baseline: np.ndarray, machines: list[WeakMachine], weights: np.ndarray,
                        features: np.ndarray, background: np.ndarray, n_threads: int) -> np.ndarray:
    """(#rows, #features + 1, #outputs): each feature's Shapley value of the scores
    ``baseline + sum_i weights[i] * machines[i](x)`` for every row of ``features``, against the rows of
    ``background`` (validated, of the same width), and in the last column the expected value, the
    background's mean score."""
    features = np.ascontiguousarray(features, dtype=np.float64)
    background = np.ascontiguousarray(background, dtype=np.float64)
    rows, width = features.shape
    out = np.zeros((rows, width + 1, baseline.size))
    expected = baseline.astype(np.float64).copy()
    for machine, weight in zip(machines, weights):
        mean = machine.forward(background).mean(axis=0)
        expected += weight * mean
        if isinstance(machine, TreeMachine):
            out[:, :width] += weight * tree_shap.interventional_tree_shap(
                features, background, machine.features, machine.thresholds, machine.left_children,
                machine.right_children, machine.missing_left, machine.category_layout, machine.values,
                machine.roots, machine.depth, n_threads)
            continue
        read = machine.feature_indices()
        if isinstance(machine, LUTMachine) or read.size == 1:
            # every output reads one feature: its value is the output's distance from the background's mean
            columns = machine.indices if isinstance(machine, LUTMachine) else np.repeat(read, baseline.size)
            change = weight * (machine.forward(features) - mean)
            for k, column in enumerate(columns):
                out[:, column, k] += change[:, k]
        elif read.size:
            out[:, read] += weight * _enumerated(machine, read, features, background)
    out[:, width] = expected
    return out


def has_cover(machines: list[WeakMachine]) -> bool:
    """Whether every weak machine records its training cover, which path-dependent values need."""
    return all(getattr(machine, "cover", None) is not None for machine in machines)


def path_dependent_shap(baseline: np.ndarray, machines: list[WeakMachine], weights: np.ndarray,
                        features: np.ndarray, n_threads: int) -> np.ndarray:
    """(#rows, #features + 1, #outputs): each feature's path-dependent Shapley value of the scores
    ``baseline + sum_i weights[i] * machines[i](x)`` for every row of ``features`` (validated), and in the last
    column the expected value (the baseline plus each tree's cover-weighted mean leaf).

    Raises
    ------
    ValueError
        Naming ``background``, for a weak machine that records no training cover (stumps, look-up tables,
        trees read from files written before covers were): its values need background rows.
    """
    features = np.ascontiguousarray(features, dtype=np.float64)
    rows, width = features.shape
    out = np.zeros((rows, width + 1, baseline.size))
    expected = baseline.astype(np.float64).copy()
    for machine, weight in zip(machines, weights):
        cover = getattr(machine, "cover", None)
        if cover is None:
            raise InvalidValueError(f"background: {machine!r} records no training cover, which Shapley values "
                                    f"without background rows need; pass background rows (e.g. a sample of the "
                                    f"training rows)")
        if np.any(cover[machine.features >= 0] <= 0):
            raise InvalidValueError(f"background: {machine!r} has a split node without training cover; pass "
                                    f"background rows")
        if isinstance(machine, MultiClassTreeMachine):
            values = margin_vectors(machine.number_of_classes)[machine.labels]
            roots, categories = np.zeros(1, dtype=np.int64), machine.category_layout
        else:
            values, roots, categories = machine.values, machine.roots, machine.category_layout
        out[:, :width] += weight * path_shap.path_tree_shap(
            features, machine.features, machine.thresholds, machine.left_children, machine.right_children,
            machine.missing_left, categories, values, cover, roots, machine.depth, n_threads)
        expected += weight * path_shap.expected_value(values, machine.features, cover, roots)
    out[:, width] = expected
    return out


def _enumerated(machine: WeakMachine, read: np.ndarray, features: np.ndarray,
                background: np.ndarray) -> np.ndarray:
    """(#rows, #read, #outputs) the Shapley values of ``machine``'s features ``read`` from the game of every
    coalition of them (the others do not change its output)."""
    if read.size > MAX_ENUMERATED_FEATURES:
        raise InvalidValueError(f"machine: {machine!r} reads {read.size} features; its Shapley values enumerate "
                                f"their coalitions, at most {MAX_ENUMERATED_FEATURES} features")
    d = read.size
    values = {}
    step = max(1, _MIXED_ROWS // background.shape[0])
    for members in itertools.product((False, True), repeat=d):
        taken = read[np.array(members, dtype=bool)]
        game = np.empty((features.shape[0], machine.number_of_outputs))
        for start in range(0, features.shape[0], step):
            block = features[start:start + step]
            mixed = np.repeat(background[np.newaxis], block.shape[0], axis=0)
            mixed[:, :, taken] = block[:, np.newaxis, taken]
            outputs = machine.forward(mixed.reshape(-1, features.shape[1]))
            game[start:start + block.shape[0]] = outputs.reshape(block.shape[0], background.shape[0], -1).mean(axis=1)
        values[members] = game
    out = np.zeros((features.shape[0], d, machine.number_of_outputs))
    for members, game in values.items():
        size = sum(members)
        for q in range(d):
            if members[q]:
                continue
            joined = members[:q] + (True,) + members[q + 1:]
            share = math.factorial(size) * math.factorial(d - size - 1) / math.factorial(d)
            out[:, q] += share * (values[joined] - game)
    return out
