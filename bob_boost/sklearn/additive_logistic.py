"""Gentle AdaBoost, two-class LogitBoost and arc-gv as scikit-learn classifiers."""
from __future__ import annotations

import numpy as np

from .._validation import check_positive_int
from ..exceptions import InvalidValueError
from ..recipes import make_recipe
from ._classifier import _TwoClassClassifier

__all__ = ["ArcGVClassifier", "GentleAdaBoostClassifier", "LogitBoostClassifier"]


class _LeastSquaresBoosting(_TwoClassClassifier):
    """What Gentle AdaBoost and LogitBoost share: two classes, weighted least-squares trees of weight 1."""

    #: The recipe's trainer name, and the factor of the scores in the probability ``sigmoid(c F)``.
    _trainer: str
    _probability_scale: float

    def __init__(self, n_estimators: int = 100, max_depth: int = 1, max_bins: int | None = 256,
                 n_threads: int | None = None, missing: str | None = None, class_weight=None,
                 early_stopping="auto", validation_fraction: float = 0.1, n_iter_no_change: int = 10,
                 tol: float = 1e-7, scoring="loss", warm_start: bool = False, random_state=None,
                 importance_type: str = "loss") -> None:
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.max_bins = max_bins
        self.n_threads = n_threads
        self.missing = missing
        self.class_weight = class_weight
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.scoring = scoring
        self.warm_start = warm_start
        self.random_state = random_state
        self.importance_type = importance_type

    def fit(self, X, y, sample_weight=None, eval_set=None):
        """Train on ``X`` (#samples, #features) and two-class labels ``y`` (``classes_[1]`` positive).

        Parameters
        ----------
        X : array_like
            Training features.
        y : array_like
            (#samples,) labels of exactly two classes.
        sample_weight : array_like, optional
            Non-negative factors of every sample's loss; zero-weight samples are ignored.
        eval_set : list of (X, y) or (X, y, sample_weight), optional
            Evaluation sets, as in :class:`~bob_boost.sklearn.BAdaCostClassifier`.

        Returns
        -------
        self
        """
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        recipe = self._recipe(rounds)
        data = self._fit_data()
        X, y = self._fit_features(data, X, y)
        X, encoded, y, weights, index = self._encoded_two_class_rows(
            data, X, y, sample_weight, type(self).__name__,
            "RealAdaBoostClassifier (SAMME.R) and BoostingClassifier take more")
        encoding, kind = self._encoding, recipe.target_kind
        targets = data.rows(lambda indices: encoding.targets(kind, indices), encoded, np.float64)
        self.machine_ = self._boost(data, recipe, X, targets, weights, y, rounds, groups=encoded, index=index,
                                    eval_set=eval_set)
        self.machine_.metadata.update(self._classifier_metadata())
        return self

    def _recipe(self, rounds: int):
        """The recipe of the estimator's parameters (checked)."""
        return make_recipe(self._trainer, number_of_classes=2, weak_learner="tree",
                           tree_depth=check_positive_int(self.max_depth, "max_depth"), number_of_rounds=rounds,
                           max_bins=self.max_bins, n_threads=self.n_threads, missing=self.missing)

    def _probability_link(self) -> tuple:
        """``sigmoid(c F)`` of the loss's minimiser (see :meth:`_BoostedClassifier._probability_link`)."""
        return ("sigmoid", self._probability_scale, 1)



class GentleAdaBoostClassifier(_LeastSquaresBoosting):
    """Gentle AdaBoost (Friedman, Hastie and Tibshirani 2000, Algorithm 4): regression trees fitted by
    weighted least squares to the labels with weights ``exp(-y F)``, added whole. See
    :class:`bob_boost.trainers.additive_logistic.GentleAdaBoostTrainer`.

    Parameters
    ----------
    n_estimators : int
        Number of trees.
    max_depth : int
        Depth of the trees (1: the paper's regression stumps).
    max_bins : int or None
        Bins per feature of the split search (None: every distinct value).
    n_threads : int or None
        Threads of the trees' kernels; the model does not depend on it.
    missing : {None, "bin"}
        ``"bin"``: NaN is a missing value, each split learning where it goes.
    class_weight, early_stopping, validation_fraction, n_iter_no_change, tol, scoring, warm_start, \
random_state, importance_type
        As in :class:`~bob_boost.sklearn.BAdaCostClassifier` (``"loss"``: minus the mean exponential loss).

    Attributes
    ----------
    classes_, machine_, n_features_in_, feature_names_in_, n_iter_, train_score_, validation_score_, \
feature_importances_
        As in :class:`~bob_boost.sklearn.AdaBoostDBClassifier`.

    Notes
    -----
    :meth:`predict_proba` is ``sigmoid(2 F)``, the probability the exponential loss's minimiser implies.
    """

    _trainer = "gentle-adaboost"
    _probability_scale = 2.0


class LogitBoostClassifier(_LeastSquaresBoosting):
    """Two-class LogitBoost (Friedman, Hastie and Tibshirani 2000, Algorithm 3): regression trees fitted by
    weighted least squares to the working responses of the binomial log-likelihood. The machine's score is
    the log-odds (twice the paper's ``F``). See :class:`bob_boost.trainers.additive_logistic.LogitBoostTrainer`.

    Parameters
    ----------
    n_estimators, max_depth, max_bins, n_threads, missing, class_weight, early_stopping, validation_fraction, \
n_iter_no_change, tol, scoring, warm_start, random_state, importance_type
        As in :class:`GentleAdaBoostClassifier` (``"loss"``: minus the mean logistic loss).

    Attributes
    ----------
    classes_, machine_, n_features_in_, feature_names_in_, n_iter_, train_score_, validation_score_, \
feature_importances_
        As in :class:`~bob_boost.sklearn.AdaBoostDBClassifier`.

    Notes
    -----
    :meth:`predict_proba` is ``sigmoid`` of the score, the logistic loss's probability.
    """

    _trainer = "logitboost"
    _probability_scale = 1.0


class ArcGVClassifier(_LeastSquaresBoosting):
    """arc-gv (Breiman 1999) with decision stumps: AdaBoost whose weights subtract the one matching the
    ensemble's minimum margin (see :class:`bob_boost.trainers.arc_gv.ArcGVTrainer`). For studying margins; it
    offers no probabilities.

    Parameters
    ----------
    n_estimators : int
        Maximum number of stumps; training stops at a weight that is not positive.
    max_bins, n_threads, missing, class_weight, early_stopping, validation_fraction, n_iter_no_change, tol, \
scoring, warm_start, random_state, importance_type
        As in :class:`GentleAdaBoostClassifier` (``"loss"``: minus the mean exponential loss).
    max_depth : int
        1: arc-gv boosts stumps (any other value is an error).

    Attributes
    ----------
    classes_, machine_, n_features_in_, feature_names_in_, n_iter_, train_score_, validation_score_, \
feature_importances_
        As in :class:`~bob_boost.sklearn.AdaBoostDBClassifier`.
    """

    _trainer = "arc-gv"

    def _recipe(self, rounds: int):
        if self.max_depth != 1:
            raise InvalidValueError(f"max_depth: arc-gv boosts decision stumps (1), got {self.max_depth!r}")
        return make_recipe("arc-gv", number_of_classes=2, weak_learner="stump", number_of_rounds=rounds,
                           max_bins=self.max_bins, n_threads=self.n_threads, missing=self.missing)

    def _has_probabilities(self) -> bool:
        """arc-gv's weights minimise no loss whose minimiser gives probabilities."""
        return False
