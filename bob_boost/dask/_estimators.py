"""scikit-learn estimators trained on a Dask cluster, each with ``to_local()`` to its in-memory twin."""
from __future__ import annotations


import numpy as np

from ..exceptions import InvalidValueError
from ..sklearn import BoostingClassifier, BoostingRegressor
from ._cost_estimators import DaskAdaBoostDBClassifier, DaskBAdaCostClassifier
from ._estimator_base import _DaskClassifier, _DaskEstimator, cluster_init

__all__ = ["DaskAdaBoostDBClassifier", "DaskBAdaCostClassifier", "DaskBoostingClassifier", "DaskBoostingRegressor"]


class DaskBoostingClassifier(_DaskClassifier, BoostingClassifier):
    """:class:`~bob_boost.sklearn.BoostingClassifier` trained from Dask arrays on a cluster.

    It subclasses the in-memory estimator: the same parameters (plus ``client``), the same model, and its
    prediction, ``predict_proba``, staged scores, ``feature_importances_`` and files; ``predict``,
    ``decision_function`` and ``predict_proba`` of a Dask array give Dask arrays, computed block by block.
    Two classes are one +-1 output; more need ``weak_learner="lut"`` (one output per class, as in memory)
    or ``"tree"`` with the softmax loss.

    Parameters
    ----------
    loss, weak_learner, n_estimators, maximum_feature_value, selection_style, max_depth, learning_rate, \
class_weight, validation_fraction, n_iter_no_change, tol, warm_start, random_state, missing, max_leaves, \
growth, multi_output, subsample, subsample_freq, sampling, top_rate, other_rate, colsample_bytree, \
colsample_bynode, boost_from_average, monotonic_cst, interaction_cst, categorical_features, importance_type
        As in :class:`~bob_boost.sklearn.BoostingClassifier` (the trees are those of :class:`DaskBoosting`; the
        sampled rows are those sampled in memory; the class prior's weights are counted on the cluster).
    max_bins : int
        Bins per feature (2 .. 256 on a cluster, whose codes are one byte).
    n_threads : int or None
        Threads of each task's compiled kernels on its worker (None: every core the worker process may use,
        as in memory; the default 1 suits workers that run one task per thread). The model does not depend
        on it.
    early_stopping : {"auto", True, False}
        As in memory: the held-out rows are the ones the in-memory estimator holds out of the same data,
        whatever the chunking (stratified by class; :mod:`bob_boost.holdout`), and training, its
        bins included, uses the other rows of positive weight. The held-out rows are gathered to the client,
        so ``"auto"`` holds out none when their features would take more than 1 GiB there (``True`` does).
    scoring : str, callable or "loss"
        As in memory; a scikit-learn scorer predicts the held-out rows (on the client) every round.
    quantized_gradients : None
        Training in memory only: distributed gradient trees sum float histograms.
    client : distributed.Client or str, optional
        The cluster's client or its scheduler's address (None: the current default client).

    Attributes
    ----------
    machine_ : BoostedMachine
        The trained machine (an ordinary bob_boost model).
    classes_ : numpy.ndarray
        The class labels; with two, ``classes_[1]`` is the positive class.
    n_iter_, validation_score_ : int, numpy.ndarray
        As in memory.
    train_score_ : numpy.ndarray
        NaN: the training scores stay on the workers.
    n_features_in_ : int
        Number of features seen in ``fit``.
    """

    _local_class = BoostingClassifier

    __init__ = cluster_init(_local_class, n_threads=1)



class DaskBoostingRegressor(_DaskEstimator, BoostingRegressor):
    """:class:`~bob_boost.sklearn.BoostingRegressor` trained from Dask arrays on a cluster: it subclasses the
    in-memory estimator (the same parameters, plus ``client``; its intercept, the loss's optimal constant),
    and ``predict`` of a Dask array gives a Dask array.

    Parameters
    ----------
    weak_learner, n_estimators, maximum_feature_value, max_depth, learning_rate, validation_fraction, \
n_iter_no_change, tol, warm_start, random_state, missing, max_leaves, growth, tweedie_power, \
poisson_max_delta_step, subsample, \
subsample_freq, sampling, top_rate, other_rate, colsample_bytree, colsample_bynode, monotonic_cst, \
interaction_cst, categorical_features, importance_type
        As in :class:`~bob_boost.sklearn.BoostingRegressor` (a warm start keeps the fitted intercept).
    loss : {"squared_error", "poisson", "gamma", "tweedie"}
        As in memory; the losses whose optimal constant is a function of the weighted mean (the others,
        whose constant is a weighted quantile, train in memory). ``quantile`` and ``huber_delta`` are
        accepted for the in-memory twin's parameters.
    max_bins, n_threads, early_stopping, scoring, quantized_gradients, client
        As :class:`DaskBoostingClassifier`'s.

    Attributes
    ----------
    machine_ : BoostedMachine
        The trained machine; its baseline is ``intercept_``.
    intercept_ : float
        The loss's optimal constant score: the weighted mean of the training targets, or its log.
    n_iter_, validation_score_, train_score_, n_features_in_
        As :class:`DaskBoostingClassifier`'s.
    """

    _local_class = BoostingRegressor

    __init__ = cluster_init(_local_class, n_threads=1)

    def _fit_data(self):
        """The cluster's rows, for the losses whose optimal constant is a function of the weighted mean."""
        if self.loss not in DASK_REGRESSION_LOSSES:
            self._loss_function()  # an unknown loss: the in-memory message
            raise InvalidValueError(f"loss: {type(self).__name__} trains {', '.join(map(repr, DASK_REGRESSION_LOSSES))}"
                                    f" (their optimal constant is a function of the weighted mean), got {self.loss!r};"
                                    f" train {self.loss!r} in memory with BoostingRegressor")
        return super()._fit_data()

    def predict(self, X):
        """The in-memory estimator's predictions; a Dask array (chunked as ``X``'s rows) for a Dask ``X``."""
        return self._apply("predict", X, np.float64)


#: The regressor's losses on a cluster: those whose optimal constant is a function of the weighted mean.
DASK_REGRESSION_LOSSES = ("squared_error", "poisson", "gamma", "tweedie")
