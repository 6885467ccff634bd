"""A boosted machine's trees as a table: one row per node, as LightGBM's ``Booster.trees_to_dataframe``.

:func:`tree_table` gives the columns as numpy arrays (no pandas needed); :func:`trees_to_dataframe` makes a
:class:`pandas.DataFrame` of them. Gradient trees, cost-sensitive trees and stumps (a root and two leaves)
have a tree form; look-up tables and multi-class stumps do not.
"""
from __future__ import annotations

import numpy as np

from ._optional import optional_import
from .analysis import feature_names
from .exceptions import InvalidTypeError
from .machine import BoostedMachine
from .weak.multiclass import MultiClassTreeMachine
from .weak.stump import StumpMachine
from .weak.tree import TreeMachine


def _stump_tree(stump: StumpMachine) -> dict:
    """A stump as a tree: ``x >= threshold`` (numeric) goes right to ``+polarity``; a categorical stump's set
    goes left to ``+polarity``, as a tree's categorical split sends its set left."""
    categorical = stump.categories is not None
    above, below = stump.polarity, -stump.polarity
    missing = None if stump.missing_above is None else (stump.missing_above == categorical)
    return {"features": np.array([stump.index, -1, -1]), "thresholds": np.array([stump.threshold, 0.0, 0.0]),
            "left": np.array([1, -1, -1]), "right": np.array([2, -1, -1]), "roots": np.array([0]),
            "values": np.array([[0.0], [above if categorical else below], [below if categorical else above]]),
            "categories": [stump.categories, None, None] if categorical else None,
            "missing_left": None if missing is None else np.array([missing, False, False])}


def _tree_arrays(weak) -> dict:
    if isinstance(weak, StumpMachine):
        return _stump_tree(weak)
    if isinstance(weak, (TreeMachine, MultiClassTreeMachine)):
        tree = isinstance(weak, TreeMachine)
        return {"features": weak.features, "thresholds": weak.thresholds, "left": weak.left_children,
                "right": weak.right_children, "roots": weak.roots if tree else np.array([0]),
                "values": weak.values if tree else weak.labels[:, np.newaxis],
                "categories": weak.categories, "missing_left": weak.missing_left,
                "cover": weak.cover, "gains": weak.gains}
    raise InvalidTypeError(f"machine: {weak!r} has no tree form (gradient trees, cost-sensitive trees and stumps "
                           f"do)")


def tree_table(machine: BoostedMachine) -> dict[str, np.ndarray]:
    """The columns of :func:`trees_to_dataframe`, as numpy arrays of one entry per node.

    Raises
    ------
    TypeError
        Naming ``machine``, for a weak machine without a tree form (look-up tables, multi-class stumps).
    """
    names = feature_names(machine)
    outputs = machine.number_of_outputs
    columns: dict[str, list] = {key: [] for key in (
        "round", "tree", "node", "depth", "parent", "left_child", "right_child", "feature", "feature_name",
        "decision_type", "threshold", "categories", "missing_direction", "cover", "gain", "weight")}
    value_columns = ["value"] if outputs == 1 else [f"value_{k}" for k in range(outputs)]
    classes = any(isinstance(weak, MultiClassTreeMachine) for weak in machine.weak_machines)
    value_columns = ["class"] if classes else value_columns
    values: list = []
    for index, (weak, weight) in enumerate(zip(machine.weak_machines, machine.weights)):
        arrays = _tree_arrays(weak)
        size = arrays["features"].size
        ends = np.append(arrays["roots"][1:], size)
        parent, depth = np.full(size, -1), np.zeros(size, dtype=np.int64)
        for node in range(size):  # children follow their parents
            for child in (arrays["left"][node], arrays["right"][node]):
                if child >= 0:
                    parent[child], depth[child] = node, depth[node] + 1
        inner = arrays["features"] >= 0
        categories = arrays["categories"] or [None] * size
        missing = arrays["missing_left"]
        columns["round"] += [index] * size
        columns["tree"] += np.searchsorted(ends, np.arange(size), side="right").tolist()
        columns["node"] += list(range(size))
        columns["depth"] += depth.tolist()
        columns["parent"] += parent.tolist()
        columns["left_child"] += arrays["left"].tolist()
        columns["right_child"] += arrays["right"].tolist()
        columns["feature"] += arrays["features"].tolist()
        columns["feature_name"] += [(names[f] if names else f"f{f}") if f >= 0 else None
                                    for f in arrays["features"].tolist()]
        columns["decision_type"] += ["" if not split else "in" if sets is not None else "<"
                                     for split, sets in zip(inner, categories)]
        columns["threshold"] += np.where(inner & np.array([c is None for c in categories]), arrays["thresholds"],
                                         np.nan).tolist()
        columns["categories"] += [None if c is None else tuple(np.asarray(c).tolist()) for c in categories]
        columns["missing_direction"] += [None if missing is None or not split else "left" if missing[node] else
                                         "right" for node, split in enumerate(inner)]
        for key, record in (("cover", arrays.get("cover")), ("gain", arrays.get("gains"))):
            columns[key] += [np.nan] * size if record is None else record.tolist()
        columns["weight"] += [float(weight[0]) if np.all(weight == weight[0]) else np.nan] * size
        values.append(np.where(inner[:, np.newaxis], np.nan, arrays["values"]) if not classes
                      else np.where(inner, -1, arrays["values"][:, 0])[:, np.newaxis])
    table = {key: np.array(value, dtype=object if key in ("feature_name", "categories", "missing_direction",
                                                          "decision_type") else None)
             for key, value in columns.items()}
    stacked = np.vstack(values) if values else np.zeros((0, len(value_columns)))
    for k, name in enumerate(value_columns):
        table[name] = stacked[:, k]
    return table


def trees_to_dataframe(machine: BoostedMachine):
    """The machine's trees as a :class:`pandas.DataFrame` of one row per node (pandas is the ``pandas`` extra).

    Columns: ``round`` (the weak machine), ``tree`` (its tree, for machines of several), ``node`` (its index
    in the weak machine), ``depth``, ``parent``, ``left_child``, ``right_child`` (-1: none), ``feature``
    (-1 for a leaf) and ``feature_name``, ``decision_type`` (``"<"``: a value below ``threshold`` goes left;
    ``"in"``: a value in ``categories`` goes left; empty for a leaf), ``threshold``, ``categories``,
    ``missing_direction`` (where NaN goes; None where the split refuses NaN), ``cover`` and ``gain`` (the
    training records of trees; NaN where not recorded), ``weight`` (the weak machine's weight in the
    machine; NaN where its outputs have different weights), and the leaf values: ``value``, or
    ``value_0``, ... for several outputs, or ``class`` for cost-sensitive trees (-1 for inner nodes).

    Raises
    ------
    TypeError
        Naming ``machine``, for a weak machine without a tree form (look-up tables, multi-class stumps).
    ImportError
        Without pandas, naming the extra that installs it.
    """
    pandas = optional_import("pandas", "trees_to_dataframe")
    return pandas.DataFrame(tree_table(machine))
