"""Cost-sensitive estimators: AdaBoostDB (binary) and BAdaCost (multi-class)."""
from __future__ import annotations

import numbers

import numpy as np

from .._validation import check_positive_int, mean_one
from ..costs import check_cost_matrix, samme_cost_matrix
from ..exceptions import InvalidValueError
from ..recipes import make_recipe
from ..trainers.multiclass import CostSensitiveTreeTrainer
from ._base import _BoostedClassifier, _check_splittable
from ._compat import check_random_state, validate_data

__all__ = ["AdaBoostDBClassifier", "BAdaCostClassifier"]


class AdaBoostDBClassifier(_BoostedClassifier):
    """Cost-sensitive binary boosting of decision stumps with AdaBoostDB.

    AdaBoostDB (Landesa-Vazquez & Alba-Castro, "Double-Base Asymmetric
    AdaBoost") minimises the class-dependent exponential bound
    ``sum_n D(n) exp(-C_t t_n F(x_n))`` over the pool of all stumps, with
    targets ``t = +1`` for ``classes_[1]`` (the positive class) and ``-1``
    for ``classes_[0]``. See
    :class:`bob_boost.trainers.cost_sensitive.AdaBoostDBTrainer`.

    Parameters
    ----------
    cost_positive : float
        ``C_P`` > 0: the cost of a false negative (a ``classes_[1]`` sample
        predicted as ``classes_[0]``).
    cost_negative : float
        ``C_N`` > 0: the cost of a false positive.
    n_estimators : int
        Maximum number of stumps; training stops earlier when no stump
        lowers the bound or after a stump without training error.
    selection : {"alpha", "loss"}
        ``"alpha"``: the stump with the largest step (the paper's rule);
        ``"loss"``: the stump that lowers the bound most.

    Attributes
    ----------
    classes_ : numpy.ndarray
        The two class labels; ``classes_[1]`` is the positive class.
    machine_ : bob_boost.BoostedMachine
        The trained stumps; its scores are :meth:`decision_function`'s.
    n_features_in_ : int
        Number of features seen during :meth:`fit`.
    feature_names_in_ : numpy.ndarray
        Feature names, when ``X`` had string column names.

    Notes
    -----
    As in the paper, each class starts with half of the total weight
    whatever the class sizes; ``sample_weight`` distributes that half among
    the samples of the class. Asymmetry between the classes is the job of
    the costs. No ``predict_proba`` is offered: the scores estimate a
    cost-weighted and class-balanced odds, not the class probability.
    """

    def __init__(self, cost_positive: float = 1.0, cost_negative: float = 1.0, n_estimators: int = 100,
                 selection: str = "alpha") -> None:
        self.cost_positive = cost_positive
        self.cost_negative = cost_negative
        self.n_estimators = n_estimators
        self.selection = selection

    def fit(self, X, y, sample_weight=None) -> "AdaBoostDBClassifier":
        """Train on ``X`` (#samples, #features) and two-class labels ``y``.

        Parameters
        ----------
        X : array_like
            Training features.
        y : array_like
            (#samples,) labels of exactly two classes.
        sample_weight : array_like, optional
            Non-negative initial weights within each class; zero-weight
            samples are ignored.

        Returns
        -------
        AdaBoostDBClassifier
            ``self``.
        """
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        recipe = make_recipe("adaboostdb", number_of_classes=2, cost_positive=self.cost_positive,
                             cost_negative=self.cost_negative, selection=self.selection)
        X, y = validate_data(self, X, y)
        kept, weights = self._positive_weights(sample_weight, X.shape[0])
        encoded = self._encode_labels(y, kept)
        if self.classes_.size > 2:
            raise InvalidValueError(f"Only binary classification is supported by AdaBoostDB (y has "
                                    f"{self.classes_.size} classes); use BAdaCostClassifier for costs between "
                                    "several classes.")
        X, positive = X[kept], encoded[kept] == 1
        _check_splittable(X)
        weights = mean_one(weights)
        initial = weights / np.where(positive, weights[positive].sum(), weights[~positive].sum())
        self.machine_ = recipe.train(X, self._encoding.targets(recipe.target_kind, encoded[kept]), rounds,
                                     sample_weight=initial)
        self.machine_.metadata.update(self._classifier_metadata())
        return self

    def __sklearn_tags__(self):
        """scikit-learn tags: a two-class estimator."""
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


class BAdaCostClassifier(_BoostedClassifier):
    """Cost-sensitive multi-class boosting of decision trees with BAdaCost.

    BAdaCost (Fernandez-Baldera, Buenaposada & Baumela, 2018) boosts
    cost-sensitive multi-class trees on the Cost-sensitive Multi-class
    Exponential Loss and predicts the class of least expected cost,
    ``argmin_k (C* f(x))_k``. See
    :class:`bob_boost.trainers.badacost.BAdaCostTrainer`.

    Parameters
    ----------
    cost_matrix : array_like, optional
        (K, K) costs in ``classes_`` order: ``cost_matrix[i, j]`` is the
        cost of predicting ``classes_[j]`` for a sample of ``classes_[i]``
        (zero diagonal, non-negative). Default: SAMME's matrix
        ``1/(K(K-1))`` off the diagonal, which makes BAdaCost SAMME.
    max_depth : int
        Depth of the trees.
    n_estimators : int
        Maximum number of trees; training stops earlier when a step is not positive.
    shrinkage : float
        Learning rate in (0, 1].
    feature_fraction : float
        Fraction in (0, 1] of the features each tree may use, drawn every round.
    random_state : None, int or numpy.random.RandomState
        Seed of the feature sampling (used only when ``feature_fraction < 1``).

    Attributes
    ----------
    classes_ : numpy.ndarray
        The class labels.
    machine_ : bob_boost.BoostedMachine
        The trained machine; it holds the cost matrix.
    n_features_in_ : int
        Number of features seen during :meth:`fit`.
    feature_names_in_ : numpy.ndarray
        Feature names, when ``X`` had string column names.

    Notes
    -----
    The trees search their splits on features quantised to 256 levels per
    feature (thresholds are stored in raw units). No ``sample_weight``: the
    trainer always starts from uniform weights. No ``predict_proba``: the
    cost-sensitive scores are not probability estimates.
    """

    def __init__(self, cost_matrix=None, max_depth: int = 2, n_estimators: int = 100, shrinkage: float = 1.0,
                 feature_fraction: float = 1.0, random_state=None) -> None:
        self.cost_matrix = cost_matrix
        self.max_depth = max_depth
        self.n_estimators = n_estimators
        self.shrinkage = shrinkage
        self.feature_fraction = feature_fraction
        self.random_state = random_state

    def fit(self, X, y) -> "BAdaCostClassifier":
        """Train on ``X`` (#samples, #features) and labels ``y``.

        Parameters
        ----------
        X : array_like
            Training features.
        y : array_like
            (#samples,) class labels of any type; with a ``cost_matrix``
            their number must match its size.

        Returns
        -------
        BAdaCostClassifier
            ``self``.
        """
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        tree = CostSensitiveTreeTrainer(max_depth=self.max_depth)
        X, y = validate_data(self, X, y)
        encoded = self._encode_labels(y, np.ones(X.shape[0], dtype=bool))
        n_classes = self.classes_.size
        if self.cost_matrix is None:
            matrix = samme_cost_matrix(n_classes)
        else:
            matrix = check_cost_matrix(self.cost_matrix)
            if matrix.shape[0] != n_classes:
                raise InvalidValueError(f"cost_matrix: is {matrix.shape[0]}x{matrix.shape[0]} but y has {n_classes} "
                                        f"classes {self.classes_.tolist()}")
        seed = self.random_state
        if seed is not None and not isinstance(seed, numbers.Integral):
            # the trainer takes an int seed; draw one from the caller's generator, as sklearn does
            seed = int(check_random_state(seed).randint(np.iinfo(np.int32).max))
        recipe = make_recipe("badacost", number_of_classes=n_classes, weak_learner="tree",
                             tree_depth=tree.max_depth, cost_matrix=matrix, number_of_rounds=rounds,
                             shrinkage=self.shrinkage, feature_fraction=self.feature_fraction, random_state=seed)
        self.machine_ = recipe.train(X, encoded, rounds)
        self.machine_.metadata.update(self._classifier_metadata())
        return self
