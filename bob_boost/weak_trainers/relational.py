"""Lp-CSB's weak trainer: a tree over the features with a vote per label in each leaf.

Every round reads the pairs' classes ``state.labels`` ((#samples, K), true where label ``k`` is a good one for
sample ``n``) and weights ``state.sample_weights`` ((#samples, K)). The tree is a
:class:`~bob_boost.weak_trainers.tree.TreeTrainer`'s with one shared tree for the K outputs, Newton leaves on
the gradient ``-w z`` and hessian ``w`` (``z = +-1`` the pair's class): each leaf's output ``k`` is the
weighted vote ``sum w z / sum w`` of its label-``k`` pairs, and a split lowers the weighted squared error of
those votes summed over the labels. A tree of (sample, label) pairs that splits on the label first cannot
improve at the first round, where every sample's good and bad pairs weigh the same; leaves of votes per label
can.
"""
from __future__ import annotations

import numpy as np

from .._validation import check_positive_int
from ..binning import BinnedFeatures
from ..boosting.protocol import Proposal, RoundState
from ..weak.relational import RelationalTreeMachine
from .tree import TreeTrainer

__all__ = ["RelationalTreeTrainer"]


class RelationalTreeTrainer:
    """Fit :class:`~bob_boost.weak.relational.RelationalTreeMachine` hypotheses of ``number_of_classes`` labels.

    Parameters
    ----------
    number_of_classes : int
        K >= 2.
    max_depth : int
        Depth of the trees.
    min_samples_leaf : int
        The fewest samples in a leaf.
    max_bins : int or None
        Candidate bins per feature (None: every distinct value).
    """

    def __init__(self, number_of_classes: int, max_depth: int = 2, min_samples_leaf: int = 1,
                 max_bins: int | None = 256) -> None:
        self.number_of_classes = check_positive_int(number_of_classes, "number_of_classes", 2)
        self.max_depth = check_positive_int(max_depth, "max_depth")
        self.min_samples_leaf = check_positive_int(min_samples_leaf, "min_samples_leaf")
        self.max_bins = max_bins
        self._trees = TreeTrainer(max_depth=self.max_depth, max_leaves=None, growth="levelwise",
                                  min_samples_leaf=self.min_samples_leaf, min_hessian_leaf=0.0,
                                  max_bins=max_bins, multi_output="shared", newton_leaves=True)

    def prepare(self, features) -> BinnedFeatures:
        """The binned features."""
        return self._trees.prepare(features)

    def propose(self, prepared: BinnedFeatures, state: RoundState) -> Proposal | None:
        """The tree for the round's pair classes and weights; None when every weight is zero."""
        weights = state.sample_weights
        total = weights.sum()
        if not total > 0:
            return None
        hessian = weights * (weights.size / total)  # mean 1
        gradient = np.where(state.labels, -hessian, hessian)
        tree = self._trees.propose(prepared, RoundState(features=state.features, scores=None, gradient=gradient,
                                                        hessian=hessian, round_index=state.round_index,
                                                        rounds_before=state.rounds_before))
        return Proposal(RelationalTreeMachine(tree.machine))

    def __repr__(self) -> str:
        return (f"RelationalTreeTrainer(number_of_classes={self.number_of_classes}, max_depth={self.max_depth}, "
                f"min_samples_leaf={self.min_samples_leaf}, max_bins={self.max_bins})")
