"""The cost-sensitive scikit-learn estimators trained on a Dask cluster (AdaBoostDB, BAdaCost), each with
``to_local()`` to its in-memory twin."""
from __future__ import annotations

from ..sklearn import AdaBoostDBClassifier, BAdaCostClassifier
from ._estimator_base import _DaskClassifier, cluster_init


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

    __init__ = cluster_init(_local_class, own=(("max_bins", 256),))



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

    __init__ = cluster_init(_local_class)

    def _local_estimator(self) -> BAdaCostClassifier:
        """The unfitted in-memory twin with these parameters (the fitted costs, once there are some)."""
        return super()._local_estimator().set_params(cost_matrix=getattr(self, "cost_matrix_", self.cost_matrix))
