"""Compiled scores of a whole ensemble of one kind of weak machine (stumps, look-up tables or trees): the
weak machines' parameters stacked once for :mod:`bob_boost.engine.prediction`, which adds the rounds in order,
so the scores are those of the machines' own ``forward`` summed round by round, bit for bit."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .costs import margin_vectors
from .engine import prediction
from .weak.base import WeakMachine
from .weak.lut import LUTMachine, check_discrete
from .weak.multiclass import MultiClassTreeMachine
from .weak.stump import StumpMachine
from .weak.tree import TreeMachine


def compiled_scores(machines: list, weights: np.ndarray, baseline: np.ndarray, n_threads: int,
                    columns: np.ndarray | None = None) -> Callable[[np.ndarray], np.ndarray] | None:
    """The scores of the rounds ``machines`` weighted by ``weights`` (#rounds, #outputs) plus ``baseline``
    (#outputs,), as a function of (#samples, #features) rows; None unless every round is a stump (without
    categories), a look-up table, or a tree of one kind (without categories).

    With ``columns`` (the feature each column of the rows is, ascending, holding every feature the machines
    read) the rows hold those columns only: a sparse matrix's columns the machines read, made dense.
    """
    kinds = {type(machine) for machine in machines}

    def local(indices: np.ndarray) -> np.ndarray:
        """Feature ``indices`` (-1: none) as columns of the rows."""
        if columns is None:
            return indices
        return np.where(indices >= 0, np.searchsorted(columns, indices), indices)

    if kinds == {StumpMachine} and all(m.categories is None for m in machines):
        indices = local(np.array([m.index for m in machines], dtype=np.int64))
        thresholds = np.array([m.threshold for m in machines], dtype=np.float64)
        polarities = np.array([m.polarity for m in machines], dtype=np.float64)
        missing = np.array([-1 if m.missing_above is None else int(m.missing_above) for m in machines],
                           dtype=np.int64)
        return lambda array: prediction.stump_scores(array, indices, thresholds, polarities, missing,
                                                     weights[:, 0], float(baseline[0]), n_threads)
    if kinds == {LUTMachine}:
        entries = max(m.look_up_tables.shape[0] for m in machines)
        tables = np.zeros((len(machines), entries, weights.shape[1]))
        for r, machine in enumerate(machines):
            tables[r, :machine.look_up_tables.shape[0]] = machine.look_up_tables
        indices = local(np.vstack([m.indices for m in machines]))
        missing_rows = prediction.lut_missing_rows(machines)
        return lambda array: prediction.lut_scores(array, indices, tables, weights, baseline, n_threads,
                                                   missing_rows)
    if kinds in ({MultiClassTreeMachine}, {TreeMachine}) and all(m.categories is None for m in machines):
        features, *table = _tree_table(machines)
        features = local(features)
        missing_left = prediction.tree_missing_left(machines)
        return prediction.tree_scorer(features, *table, weights, baseline, n_threads, missing_left=missing_left)
    return None


def _tree_table(machines: list) -> tuple[np.ndarray, ...]:
    """The node arrays of tree machines concatenated for :func:`bob_boost.engine.prediction.tree_scorer`.

    A multi-class tree's node values are the margin vectors of its node labels, which is what its
    ``forward`` outputs.
    """
    features, thresholds, left, right, values, roots, round_trees = [], [], [], [], [], [], [0]
    offset = 0
    for machine in machines:
        if isinstance(machine, TreeMachine):
            node_values, tree_roots = machine.values, machine.roots
        else:
            node_values, tree_roots = margin_vectors(machine.number_of_classes)[machine.labels], np.array([0])
        internal = machine.features >= 0
        features.append(machine.features)
        thresholds.append(machine.thresholds)
        left.append(np.where(internal, machine.left_children + offset, -1))
        right.append(np.where(internal, machine.right_children + offset, -1))
        values.append(node_values)
        roots.append(tree_roots + offset)
        round_trees.append(round_trees[-1] + tree_roots.size)
        offset += machine.features.size
    return (np.concatenate(features), np.concatenate(thresholds), np.concatenate(left), np.concatenate(right),
            np.vstack(values), np.array(round_trees, dtype=np.int64), np.concatenate(roots))


def value_checks(machines: list) -> list[Callable[[np.ndarray], None]]:
    """The checks of the values the ``machines`` read (their :meth:`~bob_boost.weak.base.WeakMachine.check_values`),
    made once for a whole ensemble: look-up tables of one size check the union of their columns at once (the
    rule of each of them), and a machine that checks nothing is left out."""
    checks, tables = [], {}
    for machine in machines:
        if isinstance(machine, LUTMachine) and type(machine).check_values is LUTMachine.check_values:
            tables.setdefault((machine.number_of_values, bool(machine.missing_entry)), []).append(machine.indices)
        elif type(machine).check_values is not WeakMachine.check_values:
            checks.append(machine.check_values)
    for (values, missing), indices in tables.items():
        read = np.unique(np.concatenate([np.ravel(i) for i in indices]))
        checks.append(lambda features, read=read, values=values, missing=missing:
                      check_discrete(features[:, read], values, allow_nan=missing))
    return checks
