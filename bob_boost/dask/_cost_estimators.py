"""The cost-sensitive scikit-learn estimators trained on a Dask cluster (AdaBoostDB, BAdaCost), each with
``to_local()`` to its in-memory twin."""
from __future__ import annotations

import numpy as np

from .._validation import check_choice, check_positive_int
from ..binning import check_missing
from ..costs import check_cost_matrix, imbalance_cost_matrix_from_confusion, samme_cost_matrix
from ..recipes import make_recipe
from ..sklearn import AdaBoostDBClassifier, BAdaCostClassifier
from ..sklearn._compat import check_is_fitted
from ..sklearn.cost_sensitive import COST_PRESETS
from ..trainers.cost_sensitive import AdaBoostDBTrainer
from . import _dask
from ._cost_sensitive import DaskCostSensitiveBoosting
from ._estimator_base import _DaskClassifier, _HeldOut
from ._multiclass import DaskMultiClassBoosting


class DaskAdaBoostDBClassifier(_HeldOut, _DaskClassifier):
    """AdaBoostDB trained from Dask arrays; the twin of :class:`~bob_boost.sklearn.AdaBoostDBClassifier`.

    As there, each class starts with half of the total weight whatever the class sizes, and
    ``sample_weight`` spreads that half within the class (the class sums are computed on the cluster).

    Parameters
    ----------
    cost_positive, cost_negative : float
        The costs of a false negative and a false positive.
    n_estimators : int
        Rounds of boosting (stumps) at most.
    selection : {"alpha", "loss"}
        AdaBoostDB's selection rule (see :class:`~bob_boost.AdaBoostDBTrainer`).
    max_bins : int
        Bins per feature (2 .. 256); the stump pool is the in-memory one for features with at most
        ``max_bins`` distinct values.
    class_weight : dict, "balanced" or None
        Factors of the sample weights per class, as in memory (each class then weighs 1/2 again).
    early_stopping, validation_fraction, n_iter_no_change, tol, random_state, warm_start, scoring
        As :class:`DaskBoostingClassifier`'s.
    client : distributed.Client or str, optional
        The cluster's client or its scheduler's address (None: the current default client).

    Attributes
    ----------
    machine_ : BoostedMachine
        The trained machine.
    classes_ : numpy.ndarray
        The two class labels; ``classes_[1]`` is the positive class.
    n_features_in_ : int
        Number of features seen in ``fit``.
    """

    def __init__(self, cost_positive: float = 1.0, cost_negative: float = 1.0, n_estimators: int = 100,
                 selection: str = "alpha", max_bins: int = 256, class_weight=None, early_stopping="auto",
                 validation_fraction: float = 0.1, n_iter_no_change: int = 10, tol: float = 1e-7,
                 random_state: int | None = None, client=None, warm_start: bool = False, scoring="loss") -> None:
        self.scoring = scoring
        self.warm_start = warm_start
        self.cost_positive = cost_positive
        self.cost_negative = cost_negative
        self.n_estimators = n_estimators
        self.selection = selection
        self.max_bins = max_bins
        self.class_weight = class_weight
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.random_state = random_state
        self.client = client

    def fit(self, X, y, sample_weight=None) -> "DaskAdaBoostDBClassifier":
        """Train on the Dask array (or dataframe) ``X`` with two-class labels ``y``.

        Raises
        ------
        ValueError
            For other than two classes, bad costs, or the inputs :class:`DaskCostSensitiveBoosting` rejects.
        """
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        trainer = AdaBoostDBTrainer(self.cost_positive, self.cost_negative, selection=self.selection)
        previous = self._previous(rounds)
        features, indices, targets = self._binary_targets(X, y)
        if previous is not None and rounds == len(previous):
            return self._unchanged()
        features, targets, weights, stopper = self._held_out(
            features, targets, self._class_weighted(indices, sample_weight, features.chunks[0]),
            trainer.loss_function, labels=indices)
        if weights is not None:  # each class weighs 1/2 again on the rows it trains on, as in memory
            weights = _dask.class_halves(weights, targets > 0, "sample_weight")
        self.machine_ = DaskCostSensitiveBoosting(trainer, self.max_bins, self.client).train(
            features, targets, rounds - self._start, sample_weight=weights, callback=stopper,
            boosted_machine=previous)
        self._record_validation()
        return self

    def to_local(self) -> AdaBoostDBClassifier:
        """The in-memory :class:`~bob_boost.sklearn.AdaBoostDBClassifier` with this model."""
        check_is_fitted(self)
        return self._fill(self._local_estimator())

    def _local_estimator(self) -> AdaBoostDBClassifier:
        """The unfitted in-memory twin with these parameters."""
        return AdaBoostDBClassifier(self.cost_positive, self.cost_negative, self.n_estimators, self.selection,
                                    class_weight=self.class_weight, early_stopping=False,
                                    warm_start=self.warm_start, scoring=self.scoring)


class DaskBAdaCostClassifier(_HeldOut, _DaskClassifier):
    """BAdaCost with cost-sensitive trees trained from Dask arrays; the twin of
    :class:`~bob_boost.sklearn.BAdaCostClassifier`.

    Parameters
    ----------
    cost_matrix : array_like, "balanced", "imbalance" or None
        As :class:`~bob_boost.sklearn.BAdaCostClassifier`'s: ``"balanced"`` from class sizes summed on the
        cluster; ``"imbalance"`` from the confusions of a SAMME model trained on the cluster first (the
        confusions counted there, as in memory).
    max_depth : int
        Depth of the trees.
    n_estimators : int
        Trees at most.
    shrinkage : float
        Learning rate in (0, 1].
    feature_fraction : float
        Fraction in (0, 1] of the features each tree may use, drawn every round.
    random_state : int or None
        Seed of the feature draws (not an int: a seed drawn from it once, kept across warm starts).
    class_weight : dict, "balanced" or None
        Factors of the sample weights per class, as in memory.
    missing : {None, "bin"}
        ``"bin"``: NaN in ``X`` is a missing value with a bin of its own, and each split of the trees learns
        the side it goes to, as in memory; None rejects NaN (infinity is an error either way).
    early_stopping, validation_fraction, n_iter_no_change, tol, warm_start, scoring
        As :class:`DaskBoostingClassifier`'s (``random_state`` also seeds the held-out rows; a warm start
        keeps the fitted cost matrix).
    client : distributed.Client or str, optional
        The cluster's client or its scheduler's address (None: the current default client).

    Attributes
    ----------
    machine_ : BoostedMachine
        The trained machine.
    classes_ : numpy.ndarray
        The class labels.
    cost_matrix_ : numpy.ndarray
        The (K, K) costs trained with.
    n_features_in_ : int
        Number of features seen in ``fit``.
    """

    def __init__(self, cost_matrix=None, max_depth: int = 2, n_estimators: int = 100, shrinkage: float = 1.0,
                 feature_fraction: float = 1.0, random_state: int | None = None, class_weight=None,
                 early_stopping="auto", validation_fraction: float = 0.1, n_iter_no_change: int = 10,
                 tol: float = 1e-7, client=None, warm_start: bool = False, scoring="loss",
                 missing: str | None = None) -> None:
        self.missing = missing
        self.scoring = scoring
        self.warm_start = warm_start
        self.cost_matrix = cost_matrix
        self.max_depth = max_depth
        self.n_estimators = n_estimators
        self.shrinkage = shrinkage
        self.feature_fraction = feature_fraction
        self.random_state = random_state
        self.class_weight = class_weight
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.client = client

    def fit(self, X, y, sample_weight=None) -> "DaskBAdaCostClassifier":
        """Train on the Dask array (or dataframe) ``X`` with class labels ``y`` of any type.

        Raises
        ------
        ValueError
            For a cost matrix of another size than the classes, an unknown preset, or the inputs
            :class:`DaskMultiClassBoosting` rejects.
        """
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        missing = check_missing(self.missing)
        previous = self._previous(rounds)
        features, encoded = self._class_indices(X, y)
        if previous is not None and rounds == len(previous):
            return self._unchanged()
        weights = self._class_weighted(encoded, sample_weight, features.chunks[0])
        k = self.classes_.size
        options = dict(number_of_classes=k, weak_learner="tree", tree_depth=self.max_depth, number_of_rounds=rounds,
                       shrinkage=self.shrinkage, feature_fraction=self.feature_fraction,
                       random_state=self._seed("_trainer_seed"), missing=missing)
        costs = previous.cost_matrix if previous is not None else self._costs(features, encoded, weights, options)
        recipe = make_recipe("badacost", cost_matrix=costs, **options)
        features, encoded, weights, stopper = self._held_out(features, encoded, weights, recipe.loss)
        self.machine_ = DaskMultiClassBoosting(recipe.trainer, self.client).train(
            features, encoded, rounds - self._start, sample_weight=weights, callback=stopper,
            boosted_machine=previous)
        self._record_validation()
        self.cost_matrix_ = self.machine_.cost_matrix
        return self

    def _costs(self, features, encoded, weights, options: dict) -> np.ndarray:
        """The (K, K) costs of ``cost_matrix``: given, SAMME's, or a preset from the training data."""
        k = self.classes_.size
        if self.cost_matrix is None:
            return samme_cost_matrix(k)
        if isinstance(self.cost_matrix, str):
            check_choice(self.cost_matrix, "cost_matrix", COST_PRESETS)
            if self.cost_matrix == "imbalance":  # in memory: a SAMME model's confusions on the training data
                samme = DaskMultiClassBoosting(make_recipe("samme", **options).trainer, self.client).train(
                    features, encoded, options["number_of_rounds"], sample_weight=weights)
                predicted = features.map_blocks(samme.predict, drop_axis=1, dtype=np.int64)
                confusion = _dask.class_sizes(encoded * k + predicted, None, k * k).reshape(k, k)
                return imbalance_cost_matrix_from_confusion(confusion, scale=0.1, smoothing=1.0)
            sizes = _dask.class_sizes(encoded, weights, k)
            return samme_cost_matrix(k) * (sizes.sum() / (k * sizes))[:, np.newaxis]
        matrix = check_cost_matrix(self.cost_matrix)
        if matrix.shape[0] != k:
            raise ValueError(f"cost_matrix: is {matrix.shape[0]}x{matrix.shape[0]} but y has {k} classes "
                             f"{self.classes_.tolist()}")
        return matrix

    def to_local(self) -> BAdaCostClassifier:
        """The in-memory :class:`~bob_boost.sklearn.BAdaCostClassifier` with this model."""
        check_is_fitted(self)
        local = self._fill(self._local_estimator())
        local.cost_matrix_ = self.cost_matrix_
        return local

    def _local_estimator(self) -> BAdaCostClassifier:
        """The unfitted in-memory twin with these parameters (the fitted costs, once there are some)."""
        return BAdaCostClassifier(getattr(self, "cost_matrix_", self.cost_matrix), self.max_depth, self.n_estimators,
                                  self.shrinkage, self.feature_fraction, self.random_state,
                                  class_weight=self.class_weight, early_stopping=False, warm_start=self.warm_start,
                                  scoring=self.scoring, missing=self.missing)
