"""A relational (stochastic) hypothesis: a tree's per-label votes, normalised over the labels.

Lozano and Abe's Lp-CSB boosts hypotheses ``h(k | x)`` in ``[0, 1]`` with ``sum_k h(k | x) = 1``, learnt by a
binary classifier ``f(x, k)`` of (sample, label) pairs that says whether label ``k`` is a good one for ``x``:
``h(k | x) = f(x, k) / sum_j f(x, j)``, and ``1/K`` for every label where ``f`` accepts none. Here ``f`` is a
tree over the features whose leaves hold one vote per label (a pair tree that splits on the features first
and on the label at its leaves): ``f(x, k) = 1`` where the vote of ``x``'s leaf for ``k`` is positive.
"""
from __future__ import annotations

import h5py
import numpy as np

from ..exceptions import InvalidValueError
from ..io import hdf5
from ..registry import register_weak_machine
from .base import WeakMachine
from .tree import TreeMachine

__all__ = ["RelationalTreeMachine"]


@register_weak_machine
class RelationalTreeMachine(WeakMachine):
    """``h(k | x) = f(x, k) / sum_j f(x, j)``, ``f(x, k) = 1`` where output ``k`` of ``tree`` is positive.

    Parameters
    ----------
    tree : TreeMachine
        K >= 2 outputs: each leaf's vote per label.
    """

    machine_type = "RelationalTreeMachine"

    def __init__(self, tree: TreeMachine) -> None:
        if not isinstance(tree, TreeMachine) or tree.number_of_outputs < 2:
            raise InvalidValueError("tree: must be a TreeMachine of at least two outputs (one vote per label)")
        self.tree = tree

    @property
    def number_of_outputs(self) -> int:
        return self.tree.number_of_outputs

    @property
    def accepts_missing(self) -> bool:
        """Whether NaN is a missing value the tree routes."""
        return self.tree.accepts_missing

    def feature_indices(self) -> np.ndarray:
        """The feature columns the tree splits on."""
        return self.tree.feature_indices()

    def check_features(self, features) -> np.ndarray:
        """Validate ``features`` as the tree does."""
        return self.tree.check_features(features)

    def forward(self, features: np.ndarray) -> np.ndarray:
        """(#samples, K) ``h(k | x)``: every row sums to 1."""
        good = (self.tree.forward(features) > 0).astype(np.float64)
        totals = good.sum(axis=1, keepdims=True)
        return np.where(totals > 0, good / np.maximum(totals, 1.0), 1.0 / good.shape[1])

    def save(self, group: h5py.Group) -> None:
        """Write the tree in the subgroup ``Tree``."""
        self.tree.save(group.create_group("Tree"))

    @classmethod
    def load(cls, group: h5py.Group) -> "RelationalTreeMachine":
        """Read a machine written by :meth:`save`."""
        if "Tree" not in group or not isinstance(group["Tree"], h5py.Group):
            raise hdf5.fail(group, "missing the subgroup 'Tree'")
        tree = TreeMachine.load(group["Tree"])
        try:
            return cls(tree)
        except (TypeError, ValueError) as error:
            raise hdf5.fail(group, str(error)) from None

    def _state(self) -> tuple:
        return self.tree._state()

    def __repr__(self) -> str:
        return f"RelationalTreeMachine(#classes={self.number_of_outputs}, tree={self.tree!r})"
