"""Multi-class weak machines: classifiers whose output is a margin vector.

Each machine assigns every sample a class ``G(x)`` in ``0 .. K-1`` and
outputs the margin vector ``y_G(x)`` (1 at ``G(x)``, ``-1/(K-1)`` elsewhere),
so that a :class:`~bob_boost.BoostedMachine` holding them with weights
``beta_m`` computes the BAdaCost / SAMME score ``f(x) = sum_m beta_m y_G_m(x)``.
"""
from __future__ import annotations

import numbers

import h5py
import numpy as np

from ..exceptions import InvalidTypeError, InvalidValueError
from ..io import hdf5
from ..costs import margin_vectors
from ..registry import register_weak_machine
from .base import WeakMachine
from .lut import check_discrete
from ..engine.prediction import node_leaves
from .tree import (CategorySplits, check_categories, check_missing_features, check_missing_left, check_node_record,
                   check_tree_arrays, load_category_sets, load_node_records, route, save_category_sets,
                   save_node_records, tree_depth)


def _check_number_of_classes(value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 2:
        raise InvalidValueError(f"number_of_classes: must be an integer >= 2, got {value!r}")
    return int(value)


def _check_class_array(values, number_of_classes: int, name: str) -> np.ndarray:
    """Return ``values`` as a read-only 1-D int64 array of classes in ``0 .. K-1``."""
    array = np.atleast_1d(np.array(values))
    if array.ndim != 1 or array.size == 0 or not np.issubdtype(array.dtype, np.integer):
        raise InvalidTypeError(f"{name}: expected a non-empty 1-D integer array, got {array.dtype} of shape "
                               f"{array.shape}")
    if array.min() < 0 or array.max() >= number_of_classes:
        raise InvalidValueError(f"{name}: classes must be in 0 .. {number_of_classes - 1}, "
                                f"found {array.min()} .. {array.max()}")
    array = array.astype(np.int64)
    array.setflags(write=False)
    return array


class MultiClassWeakMachine(WeakMachine):
    """Base class of weak machines that predict one of ``K`` classes.

    Subclasses implement :meth:`forward_labels`; :meth:`forward` turns the
    labels into margin vectors.
    """

    #: Number of classes K; set by subclasses.
    number_of_classes: int

    @property
    def number_of_outputs(self) -> int:
        """K: one margin-vector component per class."""
        return self.number_of_classes

    def forward_labels(self, features: np.ndarray) -> np.ndarray:
        """Classes ``G(x)`` (int64, (#samples,)) of an already validated feature matrix."""
        raise NotImplementedError

    def predict_labels(self, features) -> np.ndarray:
        """Validate ``features`` and return the predicted class of every row."""
        return self.forward_labels(self.check_features(features))

    def forward(self, features: np.ndarray) -> np.ndarray:
        """Margin vectors ``y_G(x)``, float64 (#samples, K)."""
        return margin_vectors(self.number_of_classes)[self.forward_labels(features)]


@register_weak_machine
class MultiClassTreeMachine(CategorySplits, MultiClassWeakMachine):
    """A binary decision tree whose nodes carry class labels.

    Nodes are stored in flat arrays; node 0 is the root. Internal node ``i``
    sends a sample to ``right_children[i]`` when
    ``x[features[i]] >= thresholds[i]`` and to ``left_children[i]``
    otherwise (a categorical node: by a set of categories, see ``categories``);
    a leaf (``features[i] == -1``, children -1) predicts
    ``labels[i]``. Every child has a larger index than its parent, which
    makes any stored tree finite. A whole feature matrix is evaluated at once,
    one tree level per step.

    Parameters
    ----------
    features : array_like of int
        Feature column of each internal node, -1 for leaves.
    thresholds : array_like of float
        Threshold of each node, in the units of the feature (ignored for leaves).
    left_children, right_children : array_like of int
        Child indices, -1 for leaves.
    labels : array_like of int
        Class of each node (internal nodes keep the class of their samples,
        for inspection).
    number_of_classes : int
        K >= 2.
    missing_left : array_like of bool, optional
        Per node, where NaN goes: the left child (True) or the right one
        (False); the trees of ``CostSensitiveTreeTrainer(missing="bin")`` learn
        it. None (the default, and every file written without it): the
        machine does not accept NaN.
    cover : array_like of float, optional
        Per node, the sample-weight sum of the training rows that reach it (each inner node's is its children's
        sum): what path-dependent Shapley values and the ``"cover"`` importance weigh the nodes by. None
        (files written without it): unknown.
    gains : array_like of float, optional
        Per node, the gain of its split (0 for leaves); None: unknown.
    categories : sequence, optional
        Per node, None for a numeric split (or a leaf), or the category values (non-negative integers) of a
        categorical split, as :class:`~bob_boost.weak.TreeMachine` takes them: samples whose
        ``x[features[i]]`` is one of them go left, every other value (a category unseen in training too) goes
        right, and NaN where ``missing_left`` says. None (the default): numeric splits only.
    """

    machine_type = "MultiClassTreeMachine"

    def __init__(self, features, thresholds, left_children, right_children, labels,
                 number_of_classes: int, missing_left=None, cover=None, gains=None, categories=None) -> None:
        self.number_of_classes = _check_number_of_classes(number_of_classes)
        self.labels = _check_class_array(labels, self.number_of_classes, "labels")
        (self.features, self.thresholds, self.left_children, self.right_children,
         _) = check_tree_arrays(features, thresholds, left_children, right_children, self.labels.size)
        self.missing_left = check_missing_left(missing_left, self.features)
        self._category_sets = check_categories(categories, self.features)
        self.depth = tree_depth(self.features, self.left_children, self.right_children)
        self.cover = check_node_record(cover, self.features, "cover")
        self.gains = check_node_record(gains, self.features, "gains")

    @classmethod
    def trusted(cls, features, thresholds, left_children, right_children, labels, number_of_classes: int,
                missing_left=None, cover=None, categories=None) -> "MultiClassTreeMachine":
        """The tree of node arrays a trainer grew (the constructor's types, valid by construction, and
        ``categories`` None or the machine's own ``(offsets, values)``): the constructor without its checks, which
        took 15% of the profiled time of MultiBoost's pool of 6,000 small trees. The arrays are copied and made
        read-only."""
        machine = cls.__new__(cls)
        machine.number_of_classes = int(number_of_classes)
        arrays = [np.array(a, dtype=np.int64) for a in (labels, features, left_children, right_children)]
        arrays += [np.array(thresholds, dtype=np.float64)]
        arrays += [None if a is None else np.array(a, dtype=dtype)
                   for a, dtype in ((missing_left, bool), (cover, np.float64))]
        if categories is not None:
            categories = (np.array(categories[0], dtype=np.int64), np.array(categories[1], dtype=np.float64))
            arrays += list(categories)
        for array in arrays:
            if array is not None:
                array.setflags(write=False)
        (machine.labels, machine.features, machine.left_children, machine.right_children, machine.thresholds,
         machine.missing_left, machine.cover) = arrays[:7]
        machine._category_sets = categories
        machine.gains = None
        machine.depth = tree_depth(machine.features, machine.left_children, machine.right_children)
        return machine

    @property
    def accepts_missing(self) -> bool:
        """Whether NaN is a missing value the tree routes (see :attr:`missing_left`), rather than an error."""
        return self.missing_left is not None

    def check_features(self, features) -> np.ndarray:
        """Validate ``features`` (2-D, wide enough; NaN allowed when :attr:`accepts_missing`)."""
        return check_missing_features(self, features)

    @property
    def number_of_nodes(self) -> int:
        """Number of nodes, leaves included."""
        return self.labels.size

    def feature_indices(self) -> np.ndarray:
        """Sorted unique feature columns used by internal nodes."""
        return np.unique(self.features[self.features >= 0])

    def forward_labels(self, features: np.ndarray) -> np.ndarray:
        """Route every sample from the root to a leaf, one level per step (row by row, compiled, with
        categorical splits)."""
        if self._category_sets is not None:
            array = np.ascontiguousarray(features, dtype=np.float64)
            leaves = node_leaves(array, self.features, self.thresholds, self.left_children, self.right_children,
                                 self.missing_left, np.zeros(1, dtype=np.int64), self._category_sets)
            return self.labels[leaves[:, 0]]
        node = np.zeros(features.shape[0], dtype=np.int64)
        for _ in range(self.depth):
            node = route(features, node, self.features, self.thresholds, self.left_children, self.right_children,
                         self.missing_left)
        return self.labels[node]

    def save(self, group: h5py.Group) -> None:
        """Write the node arrays and ``NumberOfClasses`` (and ``MissingLeft`` when NaN is routed, the category
        sets of categorical splits)."""
        hdf5.write_array(group, "Features", self.features.astype(np.int32))
        hdf5.write_array(group, "Thresholds", self.thresholds)
        hdf5.write_array(group, "LeftChildren", self.left_children.astype(np.int32))
        hdf5.write_array(group, "RightChildren", self.right_children.astype(np.int32))
        hdf5.write_array(group, "Labels", self.labels.astype(np.int32))
        hdf5.write_scalar(group, "NumberOfClasses", self.number_of_classes, np.int32)
        if self.missing_left is not None:
            hdf5.write_array(group, "MissingLeft", self.missing_left.astype(np.int8))
        save_category_sets(self._category_sets, group)
        save_node_records(self, group)

    @classmethod
    def load(cls, group: h5py.Group) -> "MultiClassTreeMachine":
        """Read a tree written by :meth:`save`, validating its structure."""
        number_of_classes = hdf5.read_scalar(group, "NumberOfClasses", "int")
        arrays = {name: hdf5.read_array(group, name, "int", ndim=1)
                  for name in ("Features", "LeftChildren", "RightChildren", "Labels")}
        thresholds = hdf5.read_array(group, "Thresholds", "float", ndim=1)
        # files without MissingLeft (written before missing values, or without them) reject NaN as before
        missing_left = hdf5.read_array(group, "MissingLeft", "int", ndim=1) if "MissingLeft" in group else None
        try:
            return cls(arrays["Features"], thresholds, arrays["LeftChildren"], arrays["RightChildren"],
                       arrays["Labels"], number_of_classes, missing_left, *load_node_records(group),
                       categories=load_category_sets(group))
        except (TypeError, ValueError) as error:
            raise hdf5.fail(group, str(error)) from None

    def _state(self) -> tuple:
        return (self.number_of_classes, tuple(self.features.tolist()), self.thresholds.tobytes(),
                tuple(self.left_children.tolist()), tuple(self.right_children.tolist()),
                tuple(self.labels.tolist()), None if self.missing_left is None else tuple(self.missing_left.tolist()),
                self._category_state())

    def __repr__(self) -> str:
        return (f"MultiClassTreeMachine(depth={self.depth}, #nodes={self.number_of_nodes}, "
                f"#classes={self.number_of_classes})")


@register_weak_machine
class MultiClassStumpMachine(MultiClassWeakMachine):
    """A depth-1 tree: class ``labels[1]`` where ``x[index] >= threshold``, ``labels[0]`` elsewhere.

    Parameters
    ----------
    threshold : float
        Threshold in the units of the feature.
    index : int
        Feature column.
    labels : array_like of int
        The two classes (below, at or above the threshold).
    number_of_classes : int
        K >= 2.
    missing_above : bool, optional
        Where NaN goes (True: ``labels[1]``), for a stump trained with missing values; None (the
        default) rejects NaN.
    """

    machine_type = "MultiClassStumpMachine"

    def __init__(self, threshold: float, index: int, labels, number_of_classes: int,
                 missing_above: bool | None = None) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not np.isfinite(threshold):
            raise InvalidValueError(f"threshold: expected a finite real number, got {threshold!r}")
        if isinstance(index, bool) or not isinstance(index, numbers.Integral) or index < 0:
            raise InvalidValueError(f"index: must be a non-negative integer, got {index!r}")
        self.number_of_classes = _check_number_of_classes(number_of_classes)
        self.labels = _check_class_array(labels, self.number_of_classes, "labels")
        if self.labels.size != 2:
            raise InvalidValueError(f"labels: expected 2 classes (below, above), got {self.labels.size}")
        if missing_above is not None and not isinstance(missing_above, (bool, np.bool_)):
            raise InvalidTypeError(f"missing_above: expected None or a bool, got {type(missing_above).__name__}")
        self.threshold = float(threshold)
        self.index = int(index)
        self.missing_above = None if missing_above is None else bool(missing_above)

    @property
    def accepts_missing(self) -> bool:
        """Whether NaN is a missing value (see :attr:`missing_above`), rather than an error."""
        return self.missing_above is not None

    def check_features(self, features) -> np.ndarray:
        """Validate ``features`` (2-D, wide enough; NaN allowed when :attr:`accepts_missing`)."""
        return check_missing_features(self, features)

    def feature_indices(self) -> np.ndarray:
        """The single feature column read."""
        return np.array([self.index], dtype=np.int64)

    def forward_labels(self, features: np.ndarray) -> np.ndarray:
        """``labels[1]`` at or above the threshold, ``labels[0]`` below; NaN as :attr:`missing_above` says."""
        column = features[:, self.index]
        above = column >= self.threshold
        if self.missing_above is not None and column.dtype.kind == "f":
            above = np.where(np.isnan(column), self.missing_above, above)
        return self.labels[above.astype(np.intp)]

    def save(self, group: h5py.Group) -> None:
        """Write ``Threshold``, ``Index``, ``Labels`` and ``NumberOfClasses`` (and ``MissingAbove`` when set)."""
        hdf5.write_scalar(group, "Threshold", self.threshold, np.float64)
        hdf5.write_scalar(group, "Index", self.index, np.int32)
        hdf5.write_array(group, "Labels", self.labels.astype(np.int32))
        hdf5.write_scalar(group, "NumberOfClasses", self.number_of_classes, np.int32)
        if self.missing_above is not None:
            hdf5.write_scalar(group, "MissingAbove", int(self.missing_above), np.int8)

    @classmethod
    def load(cls, group: h5py.Group) -> "MultiClassStumpMachine":
        """Read a stump written by :meth:`save`."""
        threshold = hdf5.read_scalar(group, "Threshold", "float")
        index = hdf5.read_scalar(group, "Index", "int")
        labels = hdf5.read_array(group, "Labels", "int", ndim=1)
        number_of_classes = hdf5.read_scalar(group, "NumberOfClasses", "int")
        missing_above = None
        if "MissingAbove" in group:
            flag = hdf5.read_scalar(group, "MissingAbove", "int")
            if flag not in (0, 1):
                raise hdf5.fail(group, f"MissingAbove must be 0 or 1, got {flag}")
            missing_above = bool(flag)
        try:
            return cls(threshold, index, labels, number_of_classes, missing_above)
        except (TypeError, ValueError) as error:
            raise hdf5.fail(group, str(error)) from None

    def _state(self) -> tuple:
        return (self.number_of_classes, self.threshold, self.index, tuple(self.labels.tolist()), self.missing_above)

    def __repr__(self) -> str:
        return (f"MultiClassStumpMachine(threshold={self.threshold!r}, index={self.index}, "
                f"labels={self.labels.tolist()}, #classes={self.number_of_classes})")


@register_weak_machine
class MultiClassLUTMachine(MultiClassWeakMachine):
    """Predict ``labels[x[index]]`` for a discrete feature.

    Parameters
    ----------
    labels : array_like of int
        One class per feature value; the feature must be an integer in
        ``[0, len(labels))``.
    index : int
        Feature column.
    number_of_classes : int
        K >= 2.
    """

    machine_type = "MultiClassLUTMachine"

    def __init__(self, labels, index: int, number_of_classes: int) -> None:
        if isinstance(index, bool) or not isinstance(index, numbers.Integral) or index < 0:
            raise InvalidValueError(f"index: must be a non-negative integer, got {index!r}")
        self.number_of_classes = _check_number_of_classes(number_of_classes)
        self.labels = _check_class_array(labels, self.number_of_classes, "labels")
        self.index = int(index)

    def feature_indices(self) -> np.ndarray:
        """The single feature column read."""
        return np.array([self.index], dtype=np.int64)

    def check_values(self, features: np.ndarray) -> None:
        """Require the column read to hold integers in ``[0, len(labels))``."""
        check_discrete(features[:, [self.index]], self.labels.size)

    def forward_labels(self, features: np.ndarray) -> np.ndarray:
        """Look up the class of every sample's feature value."""
        return self.labels[features[:, self.index].astype(np.intp)]

    def save(self, group: h5py.Group) -> None:
        """Write ``Labels``, ``Index`` and ``NumberOfClasses``."""
        hdf5.write_array(group, "Labels", self.labels.astype(np.int32))
        hdf5.write_scalar(group, "Index", self.index, np.int32)
        hdf5.write_scalar(group, "NumberOfClasses", self.number_of_classes, np.int32)

    @classmethod
    def load(cls, group: h5py.Group) -> "MultiClassLUTMachine":
        """Read a LUT written by :meth:`save`."""
        labels = hdf5.read_array(group, "Labels", "int", ndim=1)
        index = hdf5.read_scalar(group, "Index", "int")
        number_of_classes = hdf5.read_scalar(group, "NumberOfClasses", "int")
        try:
            return cls(labels, index, number_of_classes)
        except (TypeError, ValueError) as error:
            raise hdf5.fail(group, str(error)) from None

    def _state(self) -> tuple:
        return (self.number_of_classes, self.index, tuple(self.labels.tolist()))

    def __repr__(self) -> str:
        return (f"MultiClassLUTMachine(index={self.index}, #entries={self.labels.size}, "
                f"#classes={self.number_of_classes})")
