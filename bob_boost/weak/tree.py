"""Regression trees with vector leaves: the weak machine of gradient-boosted trees."""
from __future__ import annotations

import h5py
import numpy as np

from .._validation import as_feature_matrix
from ..exceptions import InvalidTypeError, InvalidValueError
from ..io import hdf5
from ..engine.prediction import node_leaves
from ..registry import register_weak_machine
from .base import WeakMachine


def check_tree_arrays(features, thresholds, left_children, right_children, size: int,
                      roots=(0,)) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Validate the node arrays of one or more binary trees stored together; return them read-only.

    Node ``i`` is a leaf where ``features[i] == -1`` (children -1), else it
    sends ``x[features[i]] >= thresholds[i]`` to ``right_children[i]`` and the
    rest to ``left_children[i]``. Every child index is larger than its
    parent's, and every node other than the ``roots`` is the child of exactly
    one node, so the arrays describe trees (no cycles, nothing unreachable).
    """
    arrays = {}
    for name, values in (("features", features), ("left_children", left_children),
                         ("right_children", right_children), ("roots", roots)):
        array = np.atleast_1d(np.array(values))
        expected = (size,) if name != "roots" else array.shape
        if array.shape != expected or array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
            raise InvalidTypeError(f"{name}: expected {size if name != 'roots' else 'some'} integers, got "
                                   f"{array.dtype} of shape {array.shape}")
        arrays[name] = array.astype(np.int64)
    threshold_array = np.atleast_1d(np.array(thresholds, dtype=np.float64))
    if threshold_array.shape != (size,):
        raise InvalidValueError(f"thresholds: expected {size} values (one per node), got shape {threshold_array.shape}")
    if not np.all(np.isfinite(threshold_array)):
        raise InvalidValueError("thresholds: contains NaN or infinite values")
    feature_array, left, right, root = (arrays[n] for n in ("features", "left_children", "right_children", "roots"))
    leaf = feature_array == -1
    if np.any(feature_array < -1):
        raise InvalidValueError("features: must be a feature index >= 0, or -1 for a leaf")
    if np.any(leaf & ((left != -1) | (right != -1))):
        raise InvalidValueError("left_children, right_children: leaves (features == -1) must have children -1")
    nodes = np.arange(size)
    for name, children in (("left_children", left), ("right_children", right)):
        if np.any(~leaf & ((children <= nodes) | (children >= size))):
            raise InvalidValueError(f"{name}: every child index must be larger than its parent's and < {size}")
    if root.size == 0 or root[0] != 0 or np.any(np.diff(root) <= 0) or root[-1] >= max(size, 1):
        raise InvalidValueError(f"roots: expected increasing node indices starting at 0 and below {size}")
    referenced = np.concatenate([left[~leaf], right[~leaf], root])
    if not np.array_equal(np.sort(referenced), nodes):
        raise InvalidValueError("left_children, right_children: every node but a root must be the child of "
                                "exactly one node (a node is the child of two parents, or of none)")
    for array in (feature_array, threshold_array, left, right, root):
        array.setflags(write=False)
    return feature_array, threshold_array, left, right, root


def check_missing_left(missing_left, features: np.ndarray) -> np.ndarray | None:
    """Validate a per-node missing-value direction array; return it read-only (None stays None).

    ``missing_left[i]`` says whether NaN in ``x[features[i]]`` goes to the left child of internal
    node ``i`` (True) or to the right one (False); it is stored False for leaves.
    """
    if missing_left is None:
        return None
    array = np.atleast_1d(np.array(missing_left))
    if not (array.dtype == bool or np.issubdtype(array.dtype, np.integer)):
        raise InvalidTypeError(f"missing_left: expected booleans (one per node), got {array.dtype}")
    if array.shape != features.shape:
        raise InvalidValueError(f"missing_left: expected {features.size} entries (one per node), got shape "
                                f"{array.shape}")
    if array.dtype != bool and np.any((array != 0) & (array != 1)):
        raise InvalidValueError("missing_left: entries must be 0 / False (NaN goes right) or 1 / True (left)")
    array = array.astype(bool) & (features >= 0)
    array.setflags(write=False)
    return array


def check_categories(categories, features: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Validate per-node category sets; return them as read-only ``(offsets, values)`` (None stays None).

    ``categories`` is a sequence with, per node, None for a numeric node (and a leaf) or the category values
    (non-negative integers) that go to the left child of that internal node; its other values go right. Or
    the machine's own layout, a pair of arrays ``(offsets, values)``: node ``i``'s values are
    ``values[offsets[i]:offsets[i + 1]]``, increasing, none for a numeric node.
    """
    if categories is None:
        return None
    if isinstance(categories, tuple) and len(categories) == 2 and all(isinstance(a, np.ndarray)
                                                                      for a in categories):
        offsets, values = np.asarray(categories[0]), np.asarray(categories[1], dtype=np.float64)
        if (offsets.ndim != 1 or offsets.size != features.size + 1 or not np.issubdtype(offsets.dtype, np.integer)
                or offsets[0] != 0 or np.any(np.diff(offsets) < 0) or offsets[-1] != values.size
                or values.ndim != 1):
            raise InvalidValueError(f"categories: (offsets, values) needs {features.size + 1} increasing offsets "
                                    f"from 0 to the number of values")
        node = np.repeat(np.arange(features.size), np.diff(offsets))
        repeated = np.flatnonzero((node[1:] == node[:-1]) & ~(values[1:] > values[:-1]))
        if repeated.size:
            raise InvalidValueError(f"categories: node {node[repeated[0]]} lists its values out of order or twice")
    else:
        if len(categories) != features.size:
            raise InvalidValueError(f"categories: expected {features.size} entries (one per node), got "
                                    f"{len(categories)}")
        arrays = [None if entry is None else np.asarray(entry, dtype=np.float64).ravel() for entry in categories]
        sizes = np.array([0 if entry is None else entry.size for entry in arrays], dtype=np.int64)
        empty = np.flatnonzero(np.array([entry is not None for entry in arrays], dtype=bool) & (sizes == 0))
        if empty.size:
            raise InvalidValueError(f"categories: node {empty[0]} has an empty set; give None there")
        values = np.concatenate([entry for entry in arrays if entry is not None] or [np.empty(0)])
        # each node's values sorted and once each, all nodes at a time
        node = np.repeat(np.arange(sizes.size), sizes)
        order = np.lexsort((values, node))
        values, node = values[order], node[order]
        first = np.ones(values.size, dtype=bool)
        first[1:] = (node[1:] != node[:-1]) | (values[1:] != values[:-1])
        values, node = values[first], node[first]
        offsets = np.concatenate([[0], np.cumsum(np.bincount(node, minlength=sizes.size))])
    offsets = offsets.astype(np.int64)
    leaves = np.flatnonzero((features < 0) & (np.diff(offsets) > 0))
    if leaves.size:
        raise InvalidValueError(f"categories: node {leaves[0]} is a leaf; give it no categories")
    wrong = ~(np.isfinite(values) & (values >= 0) & (values == np.round(values)))
    if np.any(wrong):
        node = np.repeat(np.arange(features.size), np.diff(offsets))[wrong][0]
        raise InvalidValueError(f"categories: node {node} holds values that are not non-negative integers")
    values = values.copy()
    for array in (offsets, values):
        array.setflags(write=False)
    return offsets, values


def check_missing_features(machine: WeakMachine, features) -> np.ndarray:
    """:meth:`WeakMachine.check_features` for a tree that routes NaN when ``machine.accepts_missing``."""
    array = as_feature_matrix(features, allow_nan=machine.accepts_missing)
    indices = machine.feature_indices()
    if indices.size and indices[-1] >= array.shape[1]:
        raise InvalidValueError(f"features: {type(machine).__name__} reads feature {indices[-1]} but features have "
                                f"only {array.shape[1]} columns")
    machine.check_values(array)
    return array


def route(features: np.ndarray, node: np.ndarray, node_features: np.ndarray, thresholds: np.ndarray,
          left: np.ndarray, right: np.ndarray, missing_left: np.ndarray | None) -> np.ndarray:
    """One level of routing: the child of ``node`` every row goes to (leaves stay where they are).

    Rows go right where ``x[features[node]] >= thresholds[node]``, and a NaN goes where
    ``missing_left[node]`` says (NaN compares false, so without the array it goes left; such
    machines never see NaN, which their validation rejects).
    """
    feature = node_features[node]
    values = features[np.arange(features.shape[0]), np.maximum(feature, 0)]
    above = values >= thresholds[node]
    if missing_left is not None and values.dtype.kind == "f":
        nan = np.isnan(values)
        above[nan] = ~missing_left[node[nan]]
    child = np.where(above, right[node], left[node])
    return np.where(feature >= 0, child, node)


def save_category_sets(sets: tuple[np.ndarray, np.ndarray] | None, group: h5py.Group) -> None:
    """Write a tree's category sets as ``CategoryOffsets`` and ``CategoryValues`` (nothing without any)."""
    if sets is not None:
        hdf5.write_array(group, "CategoryOffsets", sets[0])
        hdf5.write_array(group, "CategoryValues", sets[1])


def load_category_sets(group: h5py.Group) -> tuple[np.ndarray, np.ndarray] | None:
    """The ``(offsets, values)`` written by :func:`save_category_sets` (None in a file without them)."""
    if "CategoryOffsets" not in group:
        return None
    return (hdf5.read_array(group, "CategoryOffsets", "int", ndim=1),
            hdf5.read_array(group, "CategoryValues", "float", ndim=1))


class CategorySplits:
    """What a tree machine with categorical splits shows of them: its ``_category_sets``, as
    :func:`check_categories` returns them (None for numeric splits only)."""

    features: np.ndarray
    _category_sets: tuple[np.ndarray, np.ndarray] | None

    @property
    def categories(self) -> list[np.ndarray | None] | None:
        """Per node, the category values a categorical split sends left (None for other nodes); None for trees
        of numeric splits only."""
        if self._category_sets is None:
            return None
        offsets, values = self._category_sets
        return [values[offsets[i]:offsets[i + 1]] if offsets[i + 1] > offsets[i] else None
                for i in range(self.features.size)]

    @property
    def category_layout(self) -> tuple[np.ndarray, np.ndarray] | None:
        """:attr:`categories` as compiled code reads them: ``(offsets, values)``, node ``i``'s sorted values
        ``values[offsets[i]:offsets[i + 1]]``; None for trees of numeric splits only."""
        return self._category_sets

    def _category_state(self) -> tuple | None:
        """The category sets as :meth:`_state` compares them."""
        if self._category_sets is None:
            return None
        return tuple(self._category_sets[0].tolist()), self._category_sets[1].tobytes()


#: HDF5 names of the trees' optional per-node training records.
_RECORDS = (("cover", "Cover"), ("gains", "Gains"))


def check_node_record(values, features: np.ndarray, name: str) -> np.ndarray | None:
    """Validate an optional per-node record (cover, gains): finite, non-negative, one per node; return it
    read-only (None stays None)."""
    if values is None:
        return None
    array = np.atleast_1d(np.array(values, dtype=np.float64))
    if array.shape != features.shape:
        raise InvalidValueError(f"{name}: expected {features.size} values (one per node), got shape {array.shape}")
    if not np.all(np.isfinite(array)) or np.any(array < 0):
        raise InvalidValueError(f"{name}: must be finite and non-negative")
    array.setflags(write=False)
    return array


def save_node_records(machine: WeakMachine, group: h5py.Group) -> None:
    """Write a tree machine's ``cover`` and ``gains`` where it has them."""
    for attribute, name in _RECORDS:
        if getattr(machine, attribute) is not None:
            hdf5.write_array(group, name, getattr(machine, attribute))


def load_node_records(group: h5py.Group) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(cover, gains)`` of a tree group, None for each the file does not hold (files written before them)."""
    return tuple(hdf5.read_array(group, name, "float", ndim=1) if name in group else None
                 for _, name in _RECORDS)


def tree_depth(features: np.ndarray, left: np.ndarray, right: np.ndarray) -> int:
    """Length of the longest root-to-leaf path of validated arrays (0 for leaves only)."""
    inner = features >= 0
    is_child = np.zeros(features.size, dtype=bool)
    is_child[left[inner]] = True
    is_child[right[inner]] = True
    level = np.flatnonzero(~is_child)  # the roots
    depth = 0
    while True:  # one level at a time
        level = level[inner[level]]
        if level.size == 0:
            return depth
        depth += 1
        level = np.concatenate([left[level], right[level]])


@register_weak_machine
class TreeMachine(CategorySplits, WeakMachine):
    """Regression trees whose leaves hold one value per output; the output is the sum over the trees.

    One tree serves all outputs (``roots=(0,)``), or, in the per-output mode
    of gradient boosting, tree ``k`` holds values for output ``k`` only.

    Parameters
    ----------
    features, thresholds, left_children, right_children : array_like
        Node arrays (see :func:`check_tree_arrays`); samples with
        ``x[features[i]] >= thresholds[i]`` go right.
    values : array_like
        (#nodes, #outputs) leaf values (rows of internal nodes are ignored, kept for inspection).
    roots : array_like of int
        First node of each tree; trees are stored one after the other.
    missing_left : array_like of bool, optional
        Per node, where NaN goes: the left child (True) or the right one (False); the trees of
        ``TreeTrainer(missing="bin")`` learn it. None (the default, and every file written without
        it): the machine does not accept NaN.
    categories : sequence, optional
        Per node, None for a numeric split (or a leaf), or the category values (non-negative integers)
        of a categorical split: samples whose ``x[features[i]]`` is one of them go left, every other
        value (a category unseen in training too) goes right, and NaN where ``missing_left`` says.
        ``thresholds[i]`` is unused there. None (the default): numeric splits only.
    cover : array_like of float, optional
        Per node, its training cover: the hessian sum of the training rows that reach it (over the outputs;
        each inner node's is its children's sum), what path-dependent Shapley values and the ``"cover"``
        importance weigh the nodes by. The trees of :class:`~bob_boost.TreeTrainer` record it; None (files
        written without it): unknown.
    gains : array_like of float, optional
        Per node, the gain of its split (0 for leaves): the split scan's ``sum_k G_k^2 / (H_k + lambda)`` of
        the children minus the node's, the ``"gain"`` importance. None: unknown.
    """

    machine_type = "TreeMachine"

    def __init__(self, features, thresholds, left_children, right_children, values, roots=(0,),
                 missing_left=None, categories=None, cover=None, gains=None) -> None:
        value_array = np.array(values, dtype=np.float64)
        if value_array.ndim == 1:
            value_array = value_array[:, np.newaxis]
        if value_array.ndim != 2 or value_array.shape[0] == 0 or value_array.shape[1] == 0:
            raise InvalidValueError(f"values: expected a non-empty (#nodes, #outputs) array, got {value_array.shape}")
        if not np.all(np.isfinite(value_array)):
            raise InvalidValueError("values: contains NaN or infinite values")
        (self.features, self.thresholds, self.left_children, self.right_children,
         self.roots) = check_tree_arrays(features, thresholds, left_children, right_children,
                                         value_array.shape[0], roots)
        self.missing_left = check_missing_left(missing_left, self.features)
        self._category_sets = check_categories(categories, self.features)
        value_array.setflags(write=False)
        self.values = value_array
        self.depth = tree_depth(self.features, self.left_children, self.right_children)
        self.cover = check_node_record(cover, self.features, "cover")
        self.gains = check_node_record(gains, self.features, "gains")

    @classmethod
    def trusted(cls, features, thresholds, left_children, right_children, values, roots, missing_left=None,
                categories=None, cover=None, gains=None, depth: int | None = None, copy: bool = True) -> "TreeMachine":
        """The machine of node arrays a trainer grew (the constructor's types, valid by construction): the
        constructor without its checks, which would cost a small data set's round a fifth of its time.
        ``categories`` is None or the ``(offsets, values)`` of :attr:`category_layout`; ``depth``, when the
        grower knows it, the trees' :attr:`depth` (computed otherwise). ``copy=False`` takes arrays of the right
        types as they are (made for this machine alone, which makes them read-only)."""
        machine = cls.__new__(cls)
        take = np.array if copy else np.asarray
        arrays = [take(a, dtype=np.int64) for a in (features, left_children, right_children, roots)]
        arrays += [take(a, dtype=np.float64) for a in (thresholds, values)]
        arrays += [None if a is None else take(a, dtype=bool) for a in (missing_left,)]
        arrays += [None if a is None else take(a, dtype=np.float64) for a in (cover, gains)]
        if categories is not None:
            categories = (take(categories[0], dtype=np.int64), take(categories[1], dtype=np.float64))
            arrays += list(categories)
        for array in arrays:
            if array is not None:
                array.setflags(write=False)
        (machine.features, machine.left_children, machine.right_children, machine.roots, machine.thresholds,
         machine.values, machine.missing_left, machine.cover, machine.gains) = arrays[:9]
        machine._category_sets = categories
        machine.depth = (tree_depth(machine.features, machine.left_children, machine.right_children) if depth is None
                         else int(depth))
        return machine

    def with_values(self, values) -> "TreeMachine":
        """The same trees (splits, cover and gains) with other (#nodes, #outputs) leaf ``values``."""
        return TreeMachine.trusted(self.features, self.thresholds, self.left_children, self.right_children, values,
                                   self.roots, self.missing_left, self._category_sets, self.cover, self.gains,
                                   depth=self.depth)

    @property
    def accepts_missing(self) -> bool:
        """Whether NaN is a missing value the trees route (see :attr:`missing_left`), rather than an error."""
        return self.missing_left is not None

    def check_features(self, features) -> np.ndarray:
        """Validate ``features`` (2-D, wide enough; NaN allowed when :attr:`accepts_missing`)."""
        return check_missing_features(self, features)

    @property
    def number_of_outputs(self) -> int:
        """Columns of :attr:`values`."""
        return self.values.shape[1]

    def feature_indices(self) -> np.ndarray:
        """Sorted unique feature columns used by internal nodes."""
        return np.unique(self.features[self.features >= 0])

    def leaves(self, features: np.ndarray) -> np.ndarray:
        """(#samples, #trees) leaf reached by every sample in every tree."""
        array = np.asarray(features)
        if array.dtype.kind != "f":  # compared in float64, as numpy compares integers with the thresholds
            array = array.astype(np.float64)
        return node_leaves(np.ascontiguousarray(array), self.features, self.thresholds, self.left_children,
                           self.right_children, self.missing_left, self.roots, self._category_sets)

    def forward(self, features: np.ndarray) -> np.ndarray:
        """(#samples, #outputs) sum of the leaf values reached in every tree."""
        leaves = self.leaves(features)
        total = self.values[leaves[:, 0]].copy()
        for t in range(1, leaves.shape[1]):
            total += self.values[leaves[:, t]]
        return total

    def save(self, group: h5py.Group) -> None:
        """Write the node arrays, ``Values`` and ``Roots`` (and ``MissingLeft`` when NaN is routed)."""
        hdf5.write_array(group, "Features", self.features.astype(np.int32))
        hdf5.write_array(group, "Thresholds", self.thresholds)
        hdf5.write_array(group, "LeftChildren", self.left_children.astype(np.int32))
        hdf5.write_array(group, "RightChildren", self.right_children.astype(np.int32))
        hdf5.write_array(group, "Values", self.values)
        hdf5.write_array(group, "Roots", self.roots.astype(np.int32))
        if self.missing_left is not None:
            hdf5.write_array(group, "MissingLeft", self.missing_left.astype(np.int8))
        save_category_sets(self._category_sets, group)
        save_node_records(self, group)

    @classmethod
    def load(cls, group: h5py.Group) -> "TreeMachine":
        """Read trees written by :meth:`save`, validating their structure and values."""
        arrays = {name: hdf5.read_array(group, name, "int", ndim=1)
                  for name in ("Features", "LeftChildren", "RightChildren", "Roots")}
        thresholds = hdf5.read_array(group, "Thresholds", "float", ndim=1)
        values = hdf5.read_array(group, "Values", "float", ndim=2)
        # files without MissingLeft (written before missing values, or without them) reject NaN as before
        missing_left = hdf5.read_array(group, "MissingLeft", "int", ndim=1) if "MissingLeft" in group else None
        try:
            return cls(arrays["Features"], thresholds, arrays["LeftChildren"], arrays["RightChildren"], values,
                       arrays["Roots"], missing_left, load_category_sets(group), *load_node_records(group))
        except (TypeError, ValueError) as error:
            raise hdf5.fail(group, str(error)) from None

    def _state(self) -> tuple:
        return (tuple(self.features.tolist()), self.thresholds.tobytes(), tuple(self.left_children.tolist()),
                tuple(self.right_children.tolist()), self.values.tobytes(), self.values.shape,
                tuple(self.roots.tolist()),
                None if self.missing_left is None else tuple(self.missing_left.tolist()), self._category_state())

    def __repr__(self) -> str:
        return (f"TreeMachine(#trees={self.roots.size}, depth={self.depth}, #nodes={self.values.shape[0]}, "
                f"#outputs={self.number_of_outputs})")
