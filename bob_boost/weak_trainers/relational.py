"""Lp-CSB's weak trainer: a two-class tree over (sample, label) pairs, whose label is a categorical feature.

Every round reads the pairs' classes ``state.labels`` ((#samples, K), true where label ``k`` is a good one for
sample ``n``) and weights ``state.sample_weights`` ((#samples, K)). The tree is a
:class:`~bob_boost.weak_trainers.multiclass.CostSensitiveTreeTrainer`'s with the 0|1 loss, which splits the label
column by sets of labels; the machine is its :class:`~bob_boost.weak.relational.RelationalTreeMachine`.
"""
from __future__ import annotations


import numpy as np

from .._validation import as_feature_matrix, check_positive_int
from ..binning import BinnedFeatures
from ..boosting.protocol import Proposal, RoundState
from ..costs import zero_one_cost_matrix
from ..weak.relational import RelationalTreeMachine, pair_features
from .multiclass import CostSensitiveTreeTrainer

__all__ = ["RelationalTreeTrainer"]


class RelationalTreeTrainer:
    """Fit :class:`~bob_boost.weak.relational.RelationalTreeMachine` hypotheses of ``number_of_classes`` labels.

    Parameters
    ----------
    number_of_classes : int
        K >= 2.
    max_depth : int
        Depth of the two-class trees.
    min_weight_fraction_leaf : float
        In [0, 0.5]: the least share of the round's weight in each child of a split.
    """

    def __init__(self, number_of_classes: int, max_depth: int = 3, min_weight_fraction_leaf: float = 0.0) -> None:
        self.number_of_classes = check_positive_int(number_of_classes, "number_of_classes", 2)
        self.max_depth = check_positive_int(max_depth, "max_depth")
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.min_weight_fraction_leaf = self._trees(0).min_weight_fraction_leaf  # validated there
        self._loss = zero_one_cost_matrix(2)

    def _trees(self, label_column: int) -> CostSensitiveTreeTrainer:
        return CostSensitiveTreeTrainer(max_depth=self.max_depth,
                                        min_weight_fraction_leaf=self.min_weight_fraction_leaf,
                                        categorical_features=[label_column])

    def prepare(self, features) -> tuple[BinnedFeatures, int]:
        """The pairs' binned rows ``[x_n, k]`` and the label's column."""
        array = as_feature_matrix(features)
        return self._trees(array.shape[1]).prepare(pair_features(array, self.number_of_classes)), array.shape[1]

    def propose(self, prepared: tuple[BinnedFeatures, int], state: RoundState) -> Proposal | None:
        """The tree for the round's pair weights; None when every weight is zero."""
        pairs, label_column = prepared
        weights = state.sample_weights.reshape(-1)
        total = weights.sum()
        if not total > 0:
            return None
        k = self.number_of_classes
        good = state.labels.reshape(-1).astype(np.int64)
        tree = self._trees(label_column).propose(pairs, RoundState(features=pairs, scores=None, labels=good,
                                                                   sample_weights=weights / total,
                                                                   loss_matrix=self._loss))
        return Proposal(RelationalTreeMachine(tree.machine, k, label_column))

    def __repr__(self) -> str:
        return (f"RelationalTreeTrainer(number_of_classes={self.number_of_classes}, max_depth={self.max_depth}, "
                f"min_weight_fraction_leaf={self.min_weight_fraction_leaf})")
