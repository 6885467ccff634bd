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
from ..sklearn._eval_sets import check_eval_sets
from ..sklearn._fitting import estimator_sampling
from ..sklearn.cost_sensitive import COST_PRESETS
from ..trainers.cost_sensitive import AdaBoostDBTrainer
from . import _dask
from ._estimator_base import _DaskClassifier, _HeldOut
from ._trainers import DaskCostSensitiveBoosting, DaskMultiClassBoosting


class DaskAdaBoostDBClassifier(_HeldOut, _DaskClassifier, AdaBoostDBClassifier):
    """:class:`~bob_boost.sklearn.AdaBoostDBClassifier` trained from Dask arrays on a cluster: it subclasses
    the in-memory estimator (its parameters, plus ``max_bins`` and ``client``) and predicts Dask arrays block by
    block.

    As there, each class starts with half of the total weight whatever the class sizes, and
    ``sample_weight`` spreads that half within the class (the class sums are computed on the cluster).

    Parameters
    ----------
    cost_positive, cost_negative, n_estimators, selection, validation_fraction, \
n_iter_no_change, tol, warm_start, random_state
        As in :class:`~bob_boost.sklearn.AdaBoostDBClassifier`.
    early_stopping, scoring, client
        As :class:`DaskBoostingClassifier`'s.
    max_bins : int
        Bins per feature (2 .. 256); the stump pool is the in-memory one for features with at most
        ``max_bins`` distinct values.

    Attributes
    ----------
    machine_ : BoostedMachine
        The trained machine.
    classes_ : numpy.ndarray
        The two class labels; ``classes_[1]`` is the positive class.
    n_iter_, validation_score_, train_score_, n_features_in_
        As :class:`DaskBoostingClassifier`'s.
    """

    _local_class = AdaBoostDBClassifier

    def __init__(self, cost_positive: float = 1.0, cost_negative: float = 1.0, n_estimators: int = 100,
                 selection: str = "alpha", early_stopping="auto",
                 validation_fraction: float = 0.1, n_iter_no_change: int = 10, tol: float = 1e-7, scoring="loss",
                 warm_start: bool = False, random_state=None, max_bins: int = 256, client=None) -> None:
        super().__init__(cost_positive=cost_positive, cost_negative=cost_negative, n_estimators=n_estimators,
                         selection=selection, early_stopping=early_stopping,
                         validation_fraction=validation_fraction, n_iter_no_change=n_iter_no_change, tol=tol,
                         scoring=scoring, warm_start=warm_start, random_state=random_state)
        self.max_bins = max_bins
        self.client = client

    def fit(self, X, y, sample_weight=None, eval_set=None) -> "DaskAdaBoostDBClassifier":
        """Train on the Dask array (or dataframe) ``X`` with two-class labels ``y``.

        ``eval_set`` is as in memory, its sets brought to the client (NumPy or Dask arrays).

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
        recipe = make_recipe("adaboostdb", number_of_classes=2, cost_positive=self.cost_positive,
                             cost_negative=self.cost_negative, selection=self.selection)
        features, targets, weights, stopper = self._held_out(
            features, targets, self._class_weighted(indices, sample_weight, features.chunks[0]),
            trainer.loss_function, labels=indices,
            eval_sets=check_eval_sets(self, eval_set, self._eval_targets(recipe)))
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


class DaskBAdaCostClassifier(_HeldOut, _DaskClassifier, BAdaCostClassifier):
    """:class:`~bob_boost.sklearn.BAdaCostClassifier` (BAdaCost with cost-sensitive trees) trained from Dask
    arrays on a cluster: it subclasses the in-memory estimator (its parameters, plus ``client``) and predicts
    Dask arrays block by block.

    Parameters
    ----------
    cost_matrix : array_like, "balanced", "imbalance" or None
        As in memory: ``"balanced"`` from class sizes summed on the cluster; ``"imbalance"`` from the
        confusions of a SAMME model trained on the cluster first (the confusions counted there).
    max_depth, n_estimators, shrinkage, feature_fraction, random_state, class_weight, validation_fraction, \
n_iter_no_change, tol, warm_start, missing, subsample, subsample_freq, sampling, top_rate, other_rate, \
min_weight_fraction_leaf
        As in :class:`~bob_boost.sklearn.BAdaCostClassifier` (a warm start keeps the fitted cost matrix).
    early_stopping, scoring, client
        As :class:`DaskBoostingClassifier`'s.

    Attributes
    ----------
    machine_ : BoostedMachine
        The trained machine.
    classes_ : numpy.ndarray
        The class labels.
    cost_matrix_ : numpy.ndarray
        The (K, K) costs trained with.
    n_iter_, validation_score_, train_score_, n_features_in_
        As :class:`DaskBoostingClassifier`'s.
    """

    _local_class = BAdaCostClassifier

    def __init__(self, cost_matrix=None, max_depth: int = 2, n_estimators: int = 100, shrinkage: float = 1.0,
                 feature_fraction: float = 1.0, random_state=None, class_weight=None, early_stopping="auto",
                 validation_fraction: float = 0.1, n_iter_no_change: int = 10, tol: float = 1e-7, scoring="loss",
                 warm_start: bool = False, missing: str | None = None, subsample: float = 1.0,
                 subsample_freq: int = 1, sampling: str = "uniform", top_rate: float = 0.2, other_rate: float = 0.1,
                 min_weight_fraction_leaf: float = 0.0, client=None) -> None:
        super().__init__(cost_matrix=cost_matrix, max_depth=max_depth, n_estimators=n_estimators,
                         shrinkage=shrinkage, feature_fraction=feature_fraction, random_state=random_state,
                         class_weight=class_weight, early_stopping=early_stopping,
                         validation_fraction=validation_fraction, n_iter_no_change=n_iter_no_change, tol=tol,
                         scoring=scoring, warm_start=warm_start, missing=missing, subsample=subsample,
                         subsample_freq=subsample_freq, sampling=sampling, top_rate=top_rate, other_rate=other_rate,
                         min_weight_fraction_leaf=min_weight_fraction_leaf)
        self.client = client

    def fit(self, X, y, sample_weight=None, eval_set=None) -> "DaskBAdaCostClassifier":
        """Train on the Dask array (or dataframe) ``X`` with class labels ``y`` of any type.

        ``eval_set`` is as in memory, its sets brought to the client (NumPy or Dask arrays).

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
                       random_state=self._seed("_trainer_seed"), missing=missing,
                       sampling=estimator_sampling(self, previous is not None),
                       tree_min_weight_fraction_leaf=self.min_weight_fraction_leaf)
        costs = previous.cost_matrix if previous is not None else self._costs(features, encoded, weights, options)
        recipe = make_recipe("badacost", cost_matrix=costs, **options)
        features, encoded, weights, stopper = self._held_out(
            features, encoded, weights, recipe.loss, eval_sets=check_eval_sets(self, eval_set,
                                                                               self._eval_targets(recipe)))
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
        return super()._local_estimator().set_params(cost_matrix=getattr(self, "cost_matrix_", self.cost_matrix))
