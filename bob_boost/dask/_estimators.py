"""A scikit-learn classifier trained on a Dask cluster, with ``to_local()`` to the in-memory estimator."""
from __future__ import annotations

import copy

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .._validation import check_choice, check_positive_int
from ..labels import REGRESSION_METADATA, ClassEncoding
from ..recipes import make_loss
from ..losses import SquaredLoss
from ..sklearn import BoostingClassifier, BoostingRegressor
from ..sklearn._base import ESTIMATOR_KEY
from . import _dask
from ._training import DaskBoosting

#: The losses of :class:`DaskBoostingClassifier` (univariate, twice differentiable).
DASK_CLASSIFICATION_LOSSES = ("exponential", "logit")


class DaskBoostingClassifier(ClassifierMixin, BaseEstimator):
    """Binary boosted stumps trained from Dask arrays; the twin of ``BoostingClassifier(weak_learner="stump")``.

    Parameters
    ----------
    loss : {"exponential", "logit"}
        The loss, as in :class:`~bob_boost.sklearn.BoostingClassifier`.
    n_estimators : int
        Rounds of boosting (stumps) at most.
    max_bins : int
        Bins per feature (2 .. 256), as :class:`~bob_boost.sklearn.BoostingClassifier`'s ``max_bins``.
    client : distributed.Client, optional
        The cluster's client (None: the current default client).

    Attributes
    ----------
    machine_ : BoostedMachine
        The trained machine (an ordinary bob_boost model).
    classes_ : numpy.ndarray
        The two class labels; ``classes_[1]`` is the positive class.
    n_features_in_ : int
        Number of features seen in ``fit``.
    """

    def __init__(self, loss: str = "exponential", n_estimators: int = 100, max_bins: int = 256, client=None) -> None:
        self.loss = loss
        self.n_estimators = n_estimators
        self.max_bins = max_bins
        self.client = client

    def fit(self, X, y, sample_weight=None) -> "DaskBoostingClassifier":
        """Train on the Dask array ``X`` with labels ``y`` (a Dask array or an array of any label type).

        Raises
        ------
        ValueError
            For other than two classes, or the inputs :meth:`DaskBoosting.train` rejects.
        """
        check_choice(self.loss, "loss", DASK_CLASSIFICATION_LOSSES)
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        features = _dask.as_row_chunked(X, "X")
        labels = _dask.as_label_vector(y, features.chunks[0], "y")
        encoding = ClassEncoding.fit(_dask.distinct_labels(labels), name="y")
        if len(encoding.classes) != 2:
            raise ValueError(f"y: DaskBoostingClassifier is binary, got {len(encoding.classes)} classes")
        positive = encoding.classes[1]
        targets = labels.map_blocks(lambda block: np.where(block == positive, 1.0, -1.0), dtype=np.float64)
        trainer = DaskBoosting(make_loss(self.loss), self.max_bins, self.client)
        self.machine_ = trainer.train(features, targets, rounds, sample_weight=sample_weight)
        self._encoding = encoding
        self.classes_ = np.array(encoding.classes)
        self.n_features_in_ = int(features.shape[1])
        return self

    def to_local(self) -> BoostingClassifier:
        """The in-memory :class:`~bob_boost.sklearn.BoostingClassifier` with this model (its ``save`` and all)."""
        check_is_fitted(self)
        local = BoostingClassifier(loss=self.loss, weak_learner="stump", n_estimators=self.n_estimators,
                                   max_bins=self.max_bins, early_stopping=False)
        machine = copy.deepcopy(self.machine_)
        local.n_features_in_ = self.n_features_in_
        local._encoding = self._encoding
        local.classes_ = self.classes_
        local.machine_ = machine
        local.n_iter_ = len(machine)
        local.train_score_ = np.full(len(machine) + 1, np.nan)
        local.validation_score_ = np.empty(0)
        machine.metadata.update(local._classifier_metadata())
        machine.metadata[ESTIMATOR_KEY] = "BoostingClassifier"
        return local

    def decision_function(self, X):
        """Scores (positive: ``classes_[1]``): a Dask array for a Dask ``X``, else a numpy array."""
        return self._apply("decision_function", X, np.float64)

    def predict(self, X):
        """Predicted labels: a Dask array for a Dask ``X``, else a numpy array."""
        return self._apply("predict", X, self.classes_.dtype)

    def _apply(self, method: str, X, dtype):
        """The in-memory estimator's ``method`` on ``X``, block by block for a Dask array."""
        check_is_fitted(self)
        function = getattr(self.to_local(), method)
        if not _dask.is_dask(X):
            return function(X)
        features = _dask.as_row_chunked(X, "X")
        return features.map_blocks(function, drop_axis=1, chunks=(features.chunks[0],), dtype=dtype)


class DaskBoostingRegressor(RegressorMixin, BaseEstimator):
    """Boosted stumps on the squared loss trained from Dask arrays; the twin of
    ``BoostingRegressor(weak_learner="stump")``, whose intercept (the weighted mean of ``y``) it shares.

    Parameters
    ----------
    n_estimators : int
        Rounds of boosting (stumps) at most.
    max_bins : int
        Bins per feature (2 .. 256).
    client : distributed.Client or str, optional
        The cluster's client or its scheduler's address (None: the current default client).

    Attributes
    ----------
    machine_ : BoostedMachine
        The trained machine; its baseline is ``intercept_``.
    intercept_ : float
        The weighted mean of the training targets.
    n_features_in_ : int
        Number of features seen in ``fit``.
    """

    def __init__(self, n_estimators: int = 100, max_bins: int = 256, client=None) -> None:
        self.n_estimators = n_estimators
        self.max_bins = max_bins
        self.client = client

    def fit(self, X, y, sample_weight=None) -> "DaskBoostingRegressor":
        """Train on the Dask array ``X`` with real targets ``y`` (a Dask array or an array)."""
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        features = _dask.as_row_chunked(X, "X")
        targets = _dask.as_matching_vector(y, features.chunks[0], "y")
        weights = None if sample_weight is None else _dask.as_matching_vector(sample_weight, features.chunks[0],
                                                                              "sample_weight")
        intercept = _dask.weighted_mean(targets, weights)
        trainer = DaskBoosting(SquaredLoss(), self.max_bins, self.client)
        self.machine_ = trainer.train(features, targets, rounds, sample_weight=weights, baseline=intercept)
        self.intercept_ = float(self.machine_.baseline[0])
        self.n_features_in_ = int(features.shape[1])
        return self

    def to_local(self) -> BoostingRegressor:
        """The in-memory :class:`~bob_boost.sklearn.BoostingRegressor` with this model."""
        check_is_fitted(self)
        local = BoostingRegressor(weak_learner="stump", n_estimators=self.n_estimators, max_bins=self.max_bins,
                                  early_stopping=False)
        machine = copy.deepcopy(self.machine_)
        machine.decision_rule = "identity"
        local.n_features_in_, local.machine_, local.intercept_ = self.n_features_in_, machine, self.intercept_
        local.n_iter_ = len(machine)
        local.train_score_ = np.full(len(machine) + 1, np.nan)
        local.validation_score_ = np.empty(0)
        metadata = local._base_metadata()
        metadata.update(REGRESSION_METADATA, loss=SquaredLoss.name, intercept=self.intercept_)
        machine.metadata.update(metadata)
        return local

    def predict(self, X):
        """Predicted targets: a Dask array for a Dask ``X``, else a numpy array."""
        check_is_fitted(self)
        function = self.to_local().predict
        if not _dask.is_dask(X):
            return function(X)
        features = _dask.as_row_chunked(X, "X")
        return features.map_blocks(function, drop_axis=1, chunks=(features.chunks[0],), dtype=np.float64)
