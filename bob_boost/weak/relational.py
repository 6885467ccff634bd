"""A relational (stochastic) hypothesis: a binary tree over (sample, label) pairs, normalised over the labels.

Lozano and Abe's Lp-CSB boosts hypotheses ``h(k | x)`` in ``[0, 1]`` with ``sum_k h(k | x) = 1``, learnt by a
binary classifier ``f(x, k)`` that says whether label ``k`` is a good one for ``x``:
``h(k | x) = f(x, k) / sum_j f(x, j)``, and ``1/K`` for every label where ``f`` accepts none.
"""
from __future__ import annotations

import h5py
import numpy as np

from ..exceptions import InvalidValueError
from ..io import hdf5
from ..registry import register_weak_machine
from .base import WeakMachine
from .multiclass import MultiClassTreeMachine

__all__ = ["RelationalTreeMachine", "pair_features"]

#: Pairs evaluated at once: bounds the memory of the expanded rows.
_PAIRS_PER_BLOCK = 1 << 16


def pair_features(features: np.ndarray, number_of_classes: int) -> np.ndarray:
    """The (#samples K, #features + 1) rows ``[x_n, k]``, pair ``(n, k)`` at row ``n K + k``."""
    rows = np.repeat(features, number_of_classes, axis=0)
    labels = np.tile(np.arange(number_of_classes, dtype=np.float64), features.shape[0])
    return np.column_stack([rows, labels])


@register_weak_machine
class RelationalTreeMachine(WeakMachine):
    """``h(k | x) = f(x, k) / sum_j f(x, j)`` for a two-class tree ``f`` over the features and the label.

    Parameters
    ----------
    tree : MultiClassTreeMachine
        Two classes (1: the label is good for the sample); its column ``label_column`` is the label.
    number_of_classes : int
        K >= 2, the machine's outputs.
    label_column : int
        The tree's column of the label: the machine reads the features before it.
    """

    machine_type = "RelationalTreeMachine"

    def __init__(self, tree: MultiClassTreeMachine, number_of_classes: int, label_column: int) -> None:
        if not isinstance(tree, MultiClassTreeMachine) or tree.number_of_classes != 2:
            raise InvalidValueError("tree: must be a two-class MultiClassTreeMachine")
        if isinstance(number_of_classes, bool) or not isinstance(number_of_classes, (int, np.integer)) or \
                number_of_classes < 2:
            raise InvalidValueError(f"number_of_classes: must be an integer >= 2, got {number_of_classes!r}")
        used = tree.feature_indices()
        if isinstance(label_column, bool) or not isinstance(label_column, (int, np.integer)) or label_column < 0 \
                or (used.size and used[-1] > label_column):
            raise InvalidValueError(f"label_column: must be an integer >= 0 and the tree's last column, got "
                                    f"{label_column!r}")
        self.tree = tree
        self.number_of_classes = int(number_of_classes)
        self.label_column = int(label_column)

    @property
    def number_of_outputs(self) -> int:
        return self.number_of_classes

    def feature_indices(self) -> np.ndarray:
        """The feature columns the tree splits on (the label column excluded)."""
        indices = self.tree.feature_indices()
        return indices[indices != self.label_column]

    def forward(self, features: np.ndarray) -> np.ndarray:
        """(#samples, K) ``h(k | x)``: every row sums to 1."""
        k = self.number_of_classes
        block = max(1, _PAIRS_PER_BLOCK // k)
        good = np.empty((features.shape[0], k))
        for start in range(0, features.shape[0], block):
            rows = features[start:start + block, :self.label_column]
            good[start:start + block] = self.tree.forward_labels(pair_features(rows, k)).reshape(-1, k)
        totals = good.sum(axis=1, keepdims=True)
        return np.where(totals > 0, good / np.maximum(totals, 1.0), 1.0 / k)

    def check_features(self, features) -> np.ndarray:
        """Validate ``features``: 2-D, at least ``label_column`` columns, finite."""
        array = super().check_features(features)
        if array.shape[1] < self.label_column:
            raise InvalidValueError(f"features: the machine reads {self.label_column} columns, got "
                                    f"{array.shape[1]}")
        return array

    def save(self, group: h5py.Group) -> None:
        """Write ``NumberOfClasses``, ``LabelColumn`` and the tree in the subgroup ``Tree``."""
        hdf5.write_scalar(group, "NumberOfClasses", self.number_of_classes, np.int32)
        hdf5.write_scalar(group, "LabelColumn", self.label_column, np.int32)
        self.tree.save(group.create_group("Tree"))

    @classmethod
    def load(cls, group: h5py.Group) -> "RelationalTreeMachine":
        """Read a machine written by :meth:`save`."""
        if "Tree" not in group or not isinstance(group["Tree"], h5py.Group):
            raise hdf5.fail(group, "missing the subgroup 'Tree'")
        tree = MultiClassTreeMachine.load(group["Tree"])
        try:
            return cls(tree, hdf5.read_scalar(group, "NumberOfClasses", "int"),
                       hdf5.read_scalar(group, "LabelColumn", "int"))
        except (TypeError, ValueError) as error:
            raise hdf5.fail(group, str(error)) from None

    def _state(self) -> tuple:
        return (self.number_of_classes, self.label_column, self.tree._state())

    def __repr__(self) -> str:
        return f"RelationalTreeMachine(#classes={self.number_of_classes}, tree={self.tree!r})"
