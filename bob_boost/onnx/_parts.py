"""Weak machines as the two shapes an ONNX graph evaluates in bulk: node tables and look-up columns.

Numpy only. Every built-in weak machine is either a tree (stumps are one-split trees, multi-class
machines output the margin vector of their label) or a set of look-up columns (one feature, one
table column per output). A weak machine of any other type needs a converter registered with
:func:`register_converter`, which writes its own ONNX nodes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Callable

import numpy as np

from ..costs import margin_vectors
from ..exceptions import InvalidTypeError
from ..weak.base import WeakMachine
from ..weak.lut import LUTMachine
from ..weak.multiclass import MultiClassLUTMachine, MultiClassStumpMachine, MultiClassTreeMachine
from ..weak.stump import StumpMachine
from ..weak.tree import TreeMachine

#: Weak machine class -> ``converter(machine, graph, features) -> name``: the name of a (N, #outputs)
#: double tensor of the machine's (unweighted) outputs, written with the graph's ``node`` and
#: ``constant`` methods (:class:`bob_boost.onnx.Graph`) from the double (N, #features) ``features``.
_converters: dict[type, Callable] = {}


def register_converter(machine_class: type, converter: Callable | None = None):
    """Register the ONNX converter of a plugin weak machine class (usable as a decorator).

    Parameters
    ----------
    machine_class : type
        A :class:`~bob_boost.weak.base.WeakMachine` subclass.
    converter : callable, optional
        ``converter(machine, graph, features) -> str``: adds nodes to ``graph``
        (:class:`bob_boost.onnx.Graph`) that compute the machine's (#samples, #outputs) outputs in
        double precision from the double tensor named ``features``, and returns the output's name.

    Raises
    ------
    TypeError
        If ``machine_class`` is not a weak machine class or ``converter`` is not callable.
    """
    if not (isinstance(machine_class, type) and issubclass(machine_class, WeakMachine)):
        raise InvalidTypeError(f"machine_class: expected a WeakMachine subclass, got {machine_class!r}")

    def register(function: Callable) -> Callable:
        if not callable(function):
            raise InvalidTypeError(f"converter: expected a callable, got {type(function).__name__}")
        _converters[machine_class] = function
        return function
    return register if converter is None else register(converter)


def converter_of(machine: WeakMachine) -> Callable | None:
    """The registered converter of ``machine``'s class (or of its nearest registered base class)."""
    for cls in type(machine).__mro__:
        if cls in _converters:
            return _converters[cls]
    return None


#: ``TreeEnsemble``'s node modes: ``x >= split``, and ``x`` one of the node's ``membership_values``.
_BRANCH_GTE, _BRANCH_MEMBER = 2, 6


@dataclass
class Trees:
    """Node tables of several trees, leaf values already multiplied by their round's weight.

    Rows go right where ``x[feature] >= threshold``, or for a categorical split (``categories[i]`` not None)
    where ``x[feature]`` is not one of its categories; ``missing_right`` says where NaN goes
    (False, left, also for nodes that never learnt a direction: NaN compares false).
    :func:`ensemble_attributes` turns them into one ONNX-ML ``TreeEnsemble``.
    """

    features: list = field(default_factory=list)
    thresholds: list = field(default_factory=list)
    left: list = field(default_factory=list)
    right: list = field(default_factory=list)
    missing_right: list = field(default_factory=list)
    values: list = field(default_factory=list)
    roots: list = field(default_factory=list)
    categories: list = field(default_factory=list)
    size: int = 0

    def add(self, features, thresholds, left, right, missing_right, values, roots, weight, categories=None) -> None:
        """Append one weak machine's trees (its node arrays, with children as node indices, and per node the
        categories a categorical split sends left, or None for every node)."""
        self.categories += [None] * features.size if categories is None else list(categories)
        internal = features >= 0
        self.features.append(features)
        self.thresholds.append(np.where(internal, thresholds, 0.0))
        own = np.arange(features.size) + self.size  # a leaf is its own child: routing stops there
        self.left.append(np.where(internal, left + self.size, own))
        self.right.append(np.where(internal, right + self.size, own))
        self.missing_right.append(missing_right)
        self.values.append(values * weight)
        self.roots.append(roots + self.size)
        self.size += features.size

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The concatenated node arrays (leaves are their own children)."""
        return (np.concatenate(self.features), np.concatenate(self.thresholds), np.concatenate(self.left),
                np.concatenate(self.right), np.concatenate(self.missing_right), np.vstack(self.values),
                np.concatenate(self.roots))


@dataclass
class Columns:
    """Look-up columns: output ``outputs[c]`` adds ``table[offsets[c] + x[features[c]]]``.

    A column with a NaN row (``missing_rows[c] >= 0``) reads it for NaN.
    """

    features: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    offsets: list = field(default_factory=list)
    missing_rows: list = field(default_factory=list)
    tables: list = field(default_factory=list)
    size: int = 0

    def add(self, feature: int, output: int, column: np.ndarray, missing_row: int) -> None:
        """Append one table column (already multiplied by its weight)."""
        self.features.append(feature)
        self.outputs.append(output)
        self.offsets.append(self.size)
        self.missing_rows.append(missing_row)
        self.tables.append(column)
        self.size += column.size


def add_machine(machine: WeakMachine, weight: np.ndarray, trees: Trees, columns: Columns) -> bool:
    """Add a built-in weak machine to the node tables or look-up columns; False for any other type."""
    if isinstance(machine, StumpMachine):
        polarity = float(machine.polarity)
        missing = machine.missing_above is not None and bool(machine.missing_above)
        if machine.categories is None:
            trees.add(np.array([machine.index, -1, -1]), np.array([machine.threshold, 0.0, 0.0]),
                      np.array([1, 0, 0]), np.array([2, 0, 0]), np.array([missing, False, False]),
                      np.array([[0.0], [-polarity], [polarity]]), np.array([0]), weight)
        else:  # the set goes left, to +polarity; NaN too where it goes "above"
            trees.add(np.array([machine.index, -1, -1]), np.zeros(3), np.array([1, 0, 0]), np.array([2, 0, 0]),
                      np.array([not missing, False, False]), np.array([[0.0], [polarity], [-polarity]]),
                      np.array([0]), weight, [machine.categories, None, None])
    elif isinstance(machine, MultiClassStumpMachine):
        vectors = margin_vectors(machine.number_of_classes)
        missing = machine.missing_above is not None and bool(machine.missing_above)
        trees.add(np.array([machine.index, -1, -1]), np.array([machine.threshold, 0.0, 0.0]), np.array([1, 0, 0]),
                  np.array([2, 0, 0]), np.array([missing, False, False]),
                  np.vstack([np.zeros(machine.number_of_classes), vectors[machine.labels]]), np.array([0]), weight)
    elif isinstance(machine, (TreeMachine, MultiClassTreeMachine)):
        if isinstance(machine, TreeMachine):
            values, roots = machine.values, machine.roots
        else:
            values, roots = margin_vectors(machine.number_of_classes)[machine.labels], np.array([0])
        missing_left = getattr(machine, "missing_left", None)
        missing_right = (np.zeros(machine.features.size, dtype=bool) if missing_left is None
                         else ~np.asarray(missing_left, dtype=bool))
        trees.add(machine.features, machine.thresholds, machine.left_children, machine.right_children,
                  missing_right, np.asarray(values, dtype=np.float64), np.asarray(roots), weight,
                  getattr(machine, "categories", None))
    elif isinstance(machine, LUTMachine):
        missing_row = machine.number_of_values if machine.missing_entry else -1
        for output, feature in enumerate(machine.indices):
            columns.add(int(feature), output, machine.look_up_tables[:, output] * weight[output], missing_row)
    elif isinstance(machine, MultiClassLUTMachine):
        table = margin_vectors(machine.number_of_classes)[machine.labels]
        for output in range(machine.number_of_classes):
            columns.add(machine.index, output, table[:, output] * weight[output], -1)
    else:
        return False
    return True


def ensemble_attributes(trees: Trees) -> tuple[dict[str, list], np.ndarray]:
    """The arrays of one ONNX-ML ``TreeEnsemble`` (opset 5) for ``trees``, and what leaf-only trees add.

    A ``TreeEnsemble`` leaf holds one target, so a tree whose leaves hold several outputs becomes
    one copy per output it contributes to (per-output gradient trees contribute to one each).
    Interior nodes test ``x >= split`` (mode ``BRANCH_GTE``), the true branch being the right
    child; NaN takes the true branch where ``missing_right`` is set. A categorical split tests
    membership in its categories (``BRANCH_MEMBER``, its values in ``membership_values``, each node's
    ended by NaN), the true branch being the left child.

    Returns
    -------
    attributes : dict of list
        ``nodes_featureids``, ``nodes_splits``, ``nodes_truenodeids``, ``nodes_trueleafs``,
        ``nodes_falsenodeids``, ``nodes_falseleafs``, ``nodes_missing_value_tracks_true``,
        ``tree_roots``, ``leaf_targetids``, ``leaf_weights``, ``nodes_modes`` and ``membership_values``
        (empty when no tree has a split).
    constant : numpy.ndarray
        (#outputs,) sum of the values of trees that are a single leaf.
    """
    features, thresholds, left, right, missing_right, values, roots = trees.arrays()
    keys = ("nodes_featureids", "nodes_splits", "nodes_truenodeids", "nodes_trueleafs", "nodes_falsenodeids",
            "nodes_falseleafs", "nodes_missing_value_tracks_true", "tree_roots", "leaf_targetids", "leaf_weights",
            "nodes_modes", "membership_values")
    out: dict[str, list] = {key: [] for key in keys}
    constant = np.zeros(values.shape[1])
    for root in roots:
        if features[root] < 0:
            constant += values[root]
            continue
        interior, leaves, stack = [], [], [int(root)]
        while stack:
            node = stack.pop()
            if features[node] >= 0:
                interior.append(node)
                stack += [int(right[node]), int(left[node])]
            else:
                leaves.append(node)
        for output in np.flatnonzero(np.any(values[leaves] != 0, axis=0)):
            node_id = {n: len(out["nodes_featureids"]) + i for i, n in enumerate(interior)}
            leaf_id = {n: len(out["leaf_targetids"]) + i for i, n in enumerate(leaves)}
            out["tree_roots"].append(node_id[int(root)])
            for node in interior:
                member = trees.categories[node]
                out["nodes_featureids"].append(int(features[node]))
                out["nodes_splits"].append(float(thresholds[node]))
                out["nodes_modes"].append(_BRANCH_GTE if member is None else _BRANCH_MEMBER)
                out["nodes_missing_value_tracks_true"].append(int(missing_right[node] == (member is None)))
                if member is not None:
                    out["membership_values"] += [*member.tolist(), np.nan]
                sides = (right, left) if member is None else (left, right)
                for child, side in ((int(sides[0][node]), "true"), (int(sides[1][node]), "false")):
                    is_leaf = features[child] < 0
                    out[f"nodes_{side}nodeids"].append(leaf_id[child] if is_leaf else node_id[child])
                    out[f"nodes_{side}leafs"].append(int(is_leaf))
            out["leaf_targetids"] += [int(output)] * len(leaves)
            out["leaf_weights"] += values[leaves, output].tolist()
    return out, constant
