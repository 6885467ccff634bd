"""The BAdaCost paper's multi-class cost-sensitive competitors (AdaC2.M1, MultiBoost, Lp-CSB) as one classifier."""
from __future__ import annotations

import numbers

import numpy as np

from .._validation import check_choice, check_positive_int
from ..family_recipes import MULTICLASS_COST_TRAINERS
from ..losses.cost_family import label_shares
from ..recipes import make_recipe
from ..weak_trainers.multiclass import CostSensitiveTreeTrainer
from ._fitting import kept_seed
from .badacost import BAdaCostClassifier

__all__ = ["MultiClassCostClassifier"]


class MultiClassCostClassifier(BAdaCostClassifier):
    """Cost-sensitive multi-class boosting by AdaC2.M1, MultiBoost or Lp-CSB.

    ``algorithm`` names the method (each trainer's module gives its equations and paper):
    ``"adac2-m1"`` (:class:`~bob_boost.trainers.badacost.AdaC2M1Trainer`: AdaC2's reweighting by each class's
    summed costs on AdaBoost.M1's rounds of cost-sensitive trees, predicting the weighted vote),
    ``"multiboost"`` (:class:`~bob_boost.trainers.multiboost.MultiBoostTrainer`: a pool of ``pool_size``
    trees grown on 30%, 45% and 60% samples, descending ``sum_k C(l, k) exp(f_k)``, predicting the largest
    ``f_k``) or ``"lp-csb"`` (:class:`~bob_boost.trainers.lp_csb.LpCSBTrainer`: the average of relational
    trees, a vote per label in each leaf, on the p-norm loss, predicting the label of largest average share).
    These are the algorithms the BAdaCost paper compares :class:`~bob_boost.sklearn.BAdaCostClassifier`
    with (its Table 1).

    Parameters
    ----------
    algorithm : str
        One of the names above (default ``"adac2-m1"``).
    cost_matrix : array_like, "balanced", "imbalance" or None
        As for :class:`~bob_boost.sklearn.BAdaCostClassifier` (default SAMME's 0|1 matrix; every method here
        is unchanged by a common factor of the costs).
    max_depth : int or None
        Depth of the trees; None: AdaC2.M1's trees ``max(2, ceil(log2 K))`` deep (leaves enough for every
        class: AdaBoost.M1's rounds need a weighted error below 1/2), MultiBoost's 2, Lp-CSB's relational
        trees 3 (one level goes to the label). The SAMME model of ``cost_matrix="imbalance"`` has trees of
        ``max_depth`` (None: 2).
    n_estimators : int
        Maximum number of rounds; AdaC2.M1 stops at a step that is not positive, MultiBoost when no pool
        tree lowers its loss.
    p : float
        Lp-CSB's norm (>= 1; 1 fits the same hypothesis every round).
    pool_size : int
        MultiBoost's number of pool trees (the paper's 6,000 by default).
    shrinkage, feature_fraction
        AdaC2.M1's learning rate and column share per round, as for BAdaCost (1: the paper's); the other two
        methods take neither.
    random_state : None, int or numpy.random.RandomState
        Seed of MultiBoost's pool (and of AdaC2.M1's feature sampling, of the validation split).
    class_weight, early_stopping, validation_fraction, n_iter_no_change, tol, scoring, warm_start,
    min_weight_fraction_leaf, importance_type
        As for :class:`~bob_boost.sklearn.BAdaCostClassifier`, except that early stopping is off by default
        (``scoring="loss"`` scores minus the mean of the method's own loss: AdaC2.M1's is the multi-class
        exponential loss of its vote, which it does not minimise).

    Attributes
    ----------
    classes_, machine_, n_features_in_, feature_names_in_, cost_matrix_, n_iter_, train_score_,
    validation_score_, feature_importances_
        As for :class:`~bob_boost.sklearn.BAdaCostClassifier`; ``cost_matrix_`` is the costs the method was
        trained with (the AdaC2.M1 machine itself holds the 0|1 matrix of its vote).

    Notes
    -----
    :meth:`predict_proba` is Lp-CSB's stochastic hypothesis ``H(k | x)``, and for the other two a softmax of
    the scores; none is a calibrated class probability.
    """

    def __init__(self, algorithm: str = "adac2-m1", cost_matrix=None, max_depth: int | None = None,
                 n_estimators: int = 100, p: float = 2.0, pool_size: int = 6000, shrinkage: float = 1.0,
                 feature_fraction: float = 1.0, random_state=None, class_weight=None, early_stopping=False,
                 validation_fraction: float = 0.1, n_iter_no_change: int = 10, tol: float = 1e-7, scoring="loss",
                 warm_start: bool = False, min_weight_fraction_leaf: float = 0.0,
                 importance_type: str = "split") -> None:
        self.algorithm = algorithm
        self.cost_matrix = cost_matrix
        self.max_depth = max_depth
        self.n_estimators = n_estimators
        self.p = p
        self.pool_size = pool_size
        self.shrinkage = shrinkage
        self.feature_fraction = feature_fraction
        self.random_state = random_state
        self.class_weight = class_weight
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.scoring = scoring
        self.warm_start = warm_start
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.importance_type = importance_type

    # BAdaCost's options these methods do not take, fixed at the values that leave them out
    missing = None
    categorical_features = None

    def fit(self, X, y, sample_weight=None, eval_set=None) -> "MultiClassCostClassifier":
        """Train on ``X`` (#samples, #features) and labels ``y``.

        Parameters
        ----------
        X : array_like
            Training features.
        y : array_like
            (#samples,) class labels of any type; with a ``cost_matrix`` their number must match its size.
        sample_weight : array_like, optional
            Non-negative factors of each sample's initial weight (AdaC2.M1) or loss (MultiBoost, Lp-CSB).
        eval_set : list of (X, y) or (X, y, sample_weight), optional
            Evaluation sets, as in :class:`~bob_boost.sklearn.BAdaCostClassifier`.

        Returns
        -------
        MultiClassCostClassifier
            ``self``.
        """
        check_choice(self.algorithm, "algorithm", MULTICLASS_COST_TRAINERS)
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        tree = CostSensitiveTreeTrainer(max_depth=1 if self.max_depth is None else self.max_depth,
                                        min_weight_fraction_leaf=self.min_weight_fraction_leaf)  # validates both
        data = self._fit_data()
        X, y = self._fit_features(data, X, y)
        X, encoded, y, weights, index = self._encoded_rows(data, X, y, sample_weight)
        continuing = self.warm_start and hasattr(self, "machine_")
        seed = int(self.random_state) if isinstance(self.random_state, numbers.Integral) else \
            kept_seed(self, "_trainer_seed", continuing)
        # the options of the SAMME run behind cost_matrix="imbalance" (BAdaCost's preset) and of the method
        options = dict(number_of_classes=self.classes_.size, weak_learner="tree", tree_depth=self.max_depth,
                       number_of_rounds=rounds, shrinkage=self.shrinkage, feature_fraction=self.feature_fraction,
                       random_state=seed, missing=None, tree_min_weight_fraction_leaf=tree.min_weight_fraction_leaf,
                       sampling=None, categorical_features=None)
        matrix = np.array(self.cost_matrix_) if continuing else self._cost_matrix(data, X, encoded, weights, options)
        recipe = make_recipe(self.algorithm, cost_matrix=matrix, lp_norm=self.p, pool_size=self.pool_size,
                             **options)
        self.machine_ = self._boost(data, recipe, X, encoded, weights, y, rounds, groups=encoded, index=index,
                                    eval_set=eval_set)
        self.cost_matrix_ = matrix
        self.machine_.metadata.update(self._classifier_metadata())
        self.machine_.metadata["algorithm"] = self.algorithm
        self.machine_.metadata["costs"] = matrix.tolist()
        return self

    def _proba_from_scores(self, scores: np.ndarray) -> np.ndarray:
        """Lp-CSB: ``H = f / sum_k f_k``; the others: the softmax of the scores."""
        if self.algorithm == "lp-csb":
            return label_shares(scores)
        return super()._proba_from_scores(scores)
