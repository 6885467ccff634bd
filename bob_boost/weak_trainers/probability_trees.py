"""Class-probability trees: the weak learners of Real AdaBoost and SAMME.R.

A tree is grown on the round's weighted, labelled rows by the weighted Gini criterion (the cost-sensitive
trees' grower with the 0|1 loss matrix, whose Gini is the plain weighted one), as CART grows the
classifiers of Friedman, Hastie and Tibshirani (2000) and scikit-learn's SAMME.R. Each node then holds the
weighted class probabilities ``p_k`` of the training rows reaching it, clipped below at the float64 machine
epsilon (``log 0`` is not a number; scikit-learn clips the same way), and a leaf outputs

- ``leaves="samme.r"``: ``h_k = (K - 1) (log p_k - (1/K) sum_j log p_j)`` for every class ``k`` (Zhu, Zou,
  Rosset and Hastie 2009, Algorithm 4, step 2c);
- ``leaves="real"``: ``f = (1/2) log(p_1 / p_0)`` for two classes (Friedman, Hastie and Tibshirani 2000,
  Algorithm 2, step 2b), computed as ``(1/2) (log p_1 - log p_0)``, which is SAMME.R's ``h_1`` for ``K = 2``.

The machine is a :class:`~bob_boost.weak.TreeMachine` with these leaf values (inner nodes: the same function
of their rows' probabilities) and the rows' sample-weight sums as cover.
"""
from __future__ import annotations

import numpy as np

from ..binning import BinnedFeatures
from ..boosting.protocol import Proposal, RoundState
from ..costs import zero_one_cost_matrix
from ..exceptions import InvalidValueError
from ..weak.tree import TreeMachine
from .multiclass import CostSensitiveTreeTrainer, check_feature_subset, check_training_inputs
from .tree_growing import TreeGrower, node_class_sums

#: The leaf rules: SAMME.R's K outputs, Real AdaBoost's one.
LEAF_RULES = ("samme.r", "real")


def leaf_values(class_sums: np.ndarray, rule: str) -> np.ndarray:
    """(#nodes, #outputs) the outputs of nodes whose rows have the (#nodes, K) weighted ``class_sums``."""
    totals = class_sums.sum(axis=1, keepdims=True)
    probabilities = np.divide(class_sums, totals, out=np.full_like(class_sums, 1.0 / class_sums.shape[1]),
                              where=totals > 0)
    logs = np.log(np.clip(probabilities, np.finfo(np.float64).eps, None))
    if rule == "real":
        return 0.5 * (logs[:, 1:2] - logs[:, 0:1])
    k = class_sums.shape[1]
    return (k - 1) * (logs - logs.mean(axis=1, keepdims=True))


class ProbabilityTreeTrainer:
    """Grow a class-probability tree (see the module's description) of depth ``max_depth``.

    Parameters
    ----------
    max_depth : int
        Depth (>= 1); 1 gives stumps.
    leaves : {"samme.r", "real"}
        The leaves' outputs: SAMME.R's K, or Real AdaBoost's one (two classes).
    quantized, n_threads, missing, min_weight_fraction_leaf, categorical_features
        As :class:`~bob_boost.weak_trainers.multiclass.CostSensitiveTreeTrainer`'s, which grows the trees.
    """

    def __init__(self, max_depth: int = 1, leaves: str = "samme.r", quantized: bool = True,
                 n_threads: int | None = None, missing: str | None = None, min_weight_fraction_leaf: float = 0.0,
                 categorical_features=None) -> None:
        if leaves not in LEAF_RULES:
            raise InvalidValueError(f"leaves: must be one of {LEAF_RULES}, got {leaves!r}")
        self.leaves = leaves
        self._grower = CostSensitiveTreeTrainer(max_depth, quantized, n_threads, missing, min_weight_fraction_leaf,
                                                categorical_features)

    @property
    def max_depth(self) -> int:
        """The trees' depth."""
        return self._grower.max_depth

    @property
    def accepts_missing(self) -> bool:
        """Whether NaN in the features is a missing value (``missing="bin"``) rather than an error."""
        return self._grower.accepts_missing

    @property
    def missing(self) -> str | None:
        """``"bin"`` when NaN is a missing value with its own bin, else None."""
        return self._grower.missing

    @property
    def categorical_features(self) -> np.ndarray | None:
        """The features split by sets of categories."""
        return self._grower.categorical_features

    def prepare(self, features) -> BinnedFeatures:
        """Validate and code ``features`` once, for repeated :meth:`train` calls."""
        return self._grower.prepare(features)

    def train(self, features, labels, weights, number_of_classes: int, feature_subset=None) -> TreeMachine:
        """The tree for weighted labelled data.

        Parameters
        ----------
        features : array_like or BinnedFeatures
            (#samples, #features) matrix, or the result of :meth:`prepare`.
        labels : array_like of int
            (#samples,) classes in ``0 .. number_of_classes - 1``.
        weights : array_like
            (#samples,) non-negative sample weights, not all zero.
        number_of_classes : int
            K (2 for ``leaves="real"``).
        feature_subset : array_like of int, optional
            Columns the splits may use (all when None).
        """
        data = self.prepare(features)
        matrix = zero_one_cost_matrix(int(number_of_classes))
        classes, sample_weights, matrix = check_training_inputs(data.number_of_samples, labels, weights, matrix)
        subset = check_feature_subset(feature_subset, data.number_of_features)
        return self._grow(data, classes, sample_weights, subset, matrix.shape[0])

    def propose(self, prepared: BinnedFeatures, state: RoundState) -> Proposal:
        """The round's tree for its labels, sample weights and feature subset (trusted inputs), weight 1."""
        subset = (np.arange(prepared.number_of_features) if state.feature_subset is None
                  else state.feature_subset)
        return Proposal(self._grow(prepared, state.labels, state.sample_weights, subset,
                                   state.loss_matrix.shape[0]), weight=1.0)

    def _grow(self, data: BinnedFeatures, labels: np.ndarray, weights: np.ndarray, subset: np.ndarray,
              k: int) -> TreeMachine:
        if self.leaves == "real" and k != 2:
            raise InvalidValueError(f"labels: Real AdaBoost's trees have two classes, got {k}")
        grower = TreeGrower(data, labels, weights, zero_one_cost_matrix(k), subset,
                            self._grower.min_weight_fraction_leaf)
        tree = grower.grow(self.max_depth)
        leaf_sums = np.bincount(grower.sample_node * k + labels, weights=weights,
                                minlength=tree.number_of_nodes * k).reshape(-1, k)
        sums, cover = node_class_sums(leaf_sums, tree.features, tree.left_children, tree.right_children)
        return TreeMachine.trusted(tree.features, tree.thresholds, tree.left_children, tree.right_children,
                                   leaf_values(sums, self.leaves), np.zeros(1, dtype=np.int64), tree.missing_left,
                                   tree.category_layout, cover)

    def __repr__(self) -> str:
        return f"ProbabilityTreeTrainer(max_depth={self.max_depth}, leaves={self.leaves!r})"
