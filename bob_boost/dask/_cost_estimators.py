"""The cost-sensitive scikit-learn estimators trained on a Dask cluster (AdaBoostDB, BAdaCost), each with
``to_local()`` to its in-memory twin."""
from __future__ import annotations

from ..sklearn import AdaBoostDBClassifier, BAdaCostClassifier
from ._estimator_base import _DaskClassifier


class DaskAdaBoostDBClassifier(_DaskClassifier, AdaBoostDBClassifier):
    """:class:`~bob_boost.sklearn.AdaBoostDBClassifier` trained from Dask arrays on a cluster: it subclasses
    the in-memory estimator (its parameters, plus ``max_bins`` and ``client``) and predicts Dask arrays block by
    block.

    As there, each class starts with half of the total weight whatever the class sizes, and
    ``sample_weight`` spreads that half within the class (the class sums are computed on the cluster).

    Parameters
    ----------
    cost_positive, cost_negative, n_estimators, selection, validation_fraction, \
n_iter_no_change, tol, warm_start, random_state, importance_type, categorical_features
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
                 warm_start: bool = False, random_state=None, importance_type: str = "loss",
                 categorical_features="from_dtype", max_bins: int = 256, client=None) -> None:
        super().__init__(cost_positive=cost_positive, cost_negative=cost_negative, n_estimators=n_estimators,
                         selection=selection, early_stopping=early_stopping,
                         validation_fraction=validation_fraction, n_iter_no_change=n_iter_no_change, tol=tol,
                         scoring=scoring, warm_start=warm_start, random_state=random_state,
                         importance_type=importance_type, categorical_features=categorical_features)
        self.max_bins = max_bins
        self.client = client



class DaskBAdaCostClassifier(_DaskClassifier, BAdaCostClassifier):
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
min_weight_fraction_leaf, importance_type, categorical_features
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
                 min_weight_fraction_leaf: float = 0.0, importance_type: str = "loss",
                 categorical_features="from_dtype", client=None) -> None:
        super().__init__(cost_matrix=cost_matrix, max_depth=max_depth, n_estimators=n_estimators,
                         shrinkage=shrinkage, feature_fraction=feature_fraction, random_state=random_state,
                         class_weight=class_weight, early_stopping=early_stopping,
                         validation_fraction=validation_fraction, n_iter_no_change=n_iter_no_change, tol=tol,
                         scoring=scoring, warm_start=warm_start, missing=missing, subsample=subsample,
                         subsample_freq=subsample_freq, sampling=sampling, top_rate=top_rate, other_rate=other_rate,
                         min_weight_fraction_leaf=min_weight_fraction_leaf, importance_type=importance_type,
                         categorical_features=categorical_features)
        self.client = client

    def _local_estimator(self) -> BAdaCostClassifier:
        """The unfitted in-memory twin with these parameters (the fitted costs, once there are some)."""
        return super()._local_estimator().set_params(cost_matrix=getattr(self, "cost_matrix_", self.cost_matrix))
