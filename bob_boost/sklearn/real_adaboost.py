"""Real AdaBoost (two classes) and its multi-class form SAMME.R as a scikit-learn classifier."""
from __future__ import annotations

import numpy as np

from .._validation import check_positive_int
from ..recipes import make_recipe
from ._classifier import _BoostedClassifier

__all__ = ["RealAdaBoostClassifier"]


class RealAdaBoostClassifier(_BoostedClassifier):
    """Boosting of class-probability trees: Real AdaBoost for two classes, SAMME.R for more.

    Every round grows a tree on the weighted rows (weighted Gini splits) and adds a function of the weighted
    class probabilities ``p`` in its leaves: ``(1/2) log(p_1 / p_0)`` for two classes (Friedman, Hastie and
    Tibshirani 2000, Real AdaBoost), ``(K - 1) (log p_k - (1/K) sum_j log p_j)`` for each of ``K > 2`` classes
    (Zhu, Zou, Rosset and Hastie 2009, SAMME.R, which scikit-learn's ``AdaBoostClassifier`` offered until
    version 1.6). The rows are reweighted by the exponential loss of the scores. See
    :mod:`bob_boost.trainers.real_adaboost`.

    Parameters
    ----------
    n_estimators : int
        Maximum number of trees; training stops earlier after a tree that classifies every weighted
        training row correctly.
    max_depth : int
        Depth of the trees (1: stumps, scikit-learn's SAMME.R default).
    learning_rate : float
        In (0, 1]: every tree's weight (1 in the papers).
    missing : {None, "bin"}
        ``"bin"``: NaN in ``X`` is a missing value with a bin of its own, and every split learns where it goes;
        None (the default) rejects NaN.
    min_weight_fraction_leaf : float
        In [0, 0.5]: every leaf holds at least this share of the round's total sample weight.
    categorical_features : "from_dtype", array_like of int, str or bool, or None
        The features that are categories, as :class:`~bob_boost.sklearn.BoostingClassifier` takes them; the
        trees split them by sets of categories.
    class_weight : dict, "balanced" or None
        Factors of each class's initial weights.
    early_stopping, validation_fraction, n_iter_no_change, tol, scoring, warm_start, random_state, \
importance_type
        As in :class:`~bob_boost.sklearn.BAdaCostClassifier` (``"loss"`` scores minus the mean exponential
        loss; ``random_state`` seeds the held-out rows).

    Attributes
    ----------
    classes_ : numpy.ndarray
        The class labels; with two, ``classes_[1]`` is the positive class.
    machine_ : bob_boost.BoostedMachine
        The trained machine: one output (two classes, its sign the class) or one per class (the argmax).
    n_features_in_, feature_names_in_, n_iter_, train_score_, validation_score_, feature_importances_
        As in :class:`~bob_boost.sklearn.BAdaCostClassifier`.

    Notes
    -----
    :meth:`predict_proba` is the probability the exponential loss's minimiser implies (Friedman, Hastie and
    Tibshirani 2000, Lemma 1; Zhu et al. 2009, Lemma 1): ``sigmoid(2 F)`` for two classes, the softmax of
    ``F / (K - 1)`` for more.
    """

    def __init__(self, n_estimators: int = 100, max_depth: int = 1, learning_rate: float = 1.0,
                 missing: str | None = None, min_weight_fraction_leaf: float = 0.0,
                 categorical_features="from_dtype", class_weight=None, early_stopping="auto",
                 validation_fraction: float = 0.1, n_iter_no_change: int = 10, tol: float = 1e-7, scoring="loss",
                 warm_start: bool = False, random_state=None, importance_type: str = "loss") -> None:
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.missing = missing
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.categorical_features = categorical_features
        self.class_weight = class_weight
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.scoring = scoring
        self.warm_start = warm_start
        self.random_state = random_state
        self.importance_type = importance_type

    def fit(self, X, y, sample_weight=None, eval_set=None) -> "RealAdaBoostClassifier":
        """Train on ``X`` (#samples, #features) and labels ``y``.

        Parameters
        ----------
        X : array_like
            Training features.
        y : array_like
            (#samples,) class labels of any type.
        sample_weight : array_like, optional
            Non-negative initial sample weights; zero-weight samples are ignored.
        eval_set : list of (X, y) or (X, y, sample_weight), optional
            Evaluation sets, as in :class:`~bob_boost.sklearn.BAdaCostClassifier`.

        Returns
        -------
        RealAdaBoostClassifier
            ``self``.
        """
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        max_depth = check_positive_int(self.max_depth, "max_depth")
        data = self._fit_data()
        X, y = self._fit_features(data, X, y)
        X, encoded, y, weights, index = self._encoded_rows(data, X, y, sample_weight)
        k = self.classes_.size
        recipe = make_recipe("real-adaboost" if k == 2 else "samme-r", number_of_classes=k, weak_learner="tree",
                             tree_depth=max_depth, number_of_rounds=rounds, shrinkage=self.learning_rate,
                             missing=self.missing, tree_min_weight_fraction_leaf=self.min_weight_fraction_leaf,
                             categorical_features=self._categorical_features())
        encoding, kind = self._encoding, recipe.target_kind
        targets = encoded if kind == "indices" else data.rows(lambda indices: encoding.targets(kind, indices), encoded,
                                                                np.float64)
        self.machine_ = self._boost(data, recipe, X, targets, weights, y, rounds, groups=encoded, index=index,
                                    eval_set=eval_set)
        self.machine_.metadata.update(self._classifier_metadata())
        return self

    def _probability_link(self) -> tuple:
        """``sigmoid(2 F)`` for one output, a softmax of ``F / (K - 1)`` for K (see
        :meth:`_BoostedClassifier._probability_link`)."""
        k = self.machine_.number_of_outputs
        return ("sigmoid", 2.0, 1) if k == 1 else ("softmax", 1.0 / (k - 1))

    def _proba_from_scores(self, scores: np.ndarray) -> np.ndarray:
        if scores.shape[1] == 1:
            positive = 1.0 / (1.0 + np.exp(-2.0 * scores[:, 0]))
            return np.column_stack([1.0 - positive, positive])
        scaled = scores / (scores.shape[1] - 1)
        exponentials = np.exp(scaled - scaled.max(axis=1, keepdims=True))
        return exponentials / exponentials.sum(axis=1, keepdims=True)
