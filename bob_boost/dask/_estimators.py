"""scikit-learn estimators trained on a Dask cluster, each with ``to_local()`` to its in-memory twin."""
from __future__ import annotations

import copy

import numpy as np

from .._validation import check_choice, check_positive_int
from ..binning import check_missing
from ..labels import REGRESSION_METADATA
from ..recipes import CLASSIFICATION_LOSSES, make_recipe
from ..losses import SquaredLoss
from ..sklearn import BoostingClassifier, BoostingRegressor
from ..sklearn._compat import BaseEstimator, RegressorMixin, check_is_fitted
from . import _dask
from ._cost_estimators import DaskAdaBoostDBClassifier, DaskBAdaCostClassifier
from ._estimator_base import _DaskClassifier, _HeldOut
from ._chunks import check_cluster_threads
from ._training import DASK_WEAK_LEARNERS, DaskBoosting

__all__ = ["DaskAdaBoostDBClassifier", "DaskBAdaCostClassifier", "DaskBoostingClassifier", "DaskBoostingRegressor"]


class DaskBoostingClassifier(_HeldOut, _DaskClassifier):
    """Boosted stumps, look-up tables or gradient trees trained from Dask arrays; the twin of
    :class:`~bob_boost.sklearn.BoostingClassifier`.

    Two classes are one +-1 output; more need ``weak_learner="lut"`` (one output per class, as in memory)
    or ``"tree"`` with the softmax loss.

    Parameters
    ----------
    loss : {"exponential", "logit", "tangential", "softmax"}
        The loss, as in :class:`~bob_boost.sklearn.BoostingClassifier`.
    weak_learner : {"stump", "lut", "tree"}
        Decision stumps, look-up tables on integer features ``0 .. maximum_feature_value - 1``, or
        gradient trees (see :class:`DaskBoosting`).
    n_estimators : int
        Rounds of boosting at most.
    max_depth, max_leaves, multi_output, growth, learning_rate, missing
        Gradient trees: as in :class:`~bob_boost.sklearn.BoostingClassifier` (``learning_rate``: the
        trees' weight, 0.1 by default; ``missing="bin"``: NaN is a missing value, for stumps, tables and trees).
    maximum_feature_value : int
        Entries of each look-up table.
    selection_style : {"independent", "shared"}
        Multi-output tables: one feature per output, or one for all.
    max_bins : int
        Bins per feature of the stumps (2 .. 256).
    class_weight : dict, "balanced" or None
        Factors of the sample weights per class, as in memory (``"balanced"``: ``n / (K n_class)``).
    early_stopping, validation_fraction, n_iter_no_change, tol, random_state
        As in memory: the held-out rows are the ones the in-memory estimator holds out of the same data,
        whatever the chunking (stratified by class; :mod:`bob_boost.sklearn._holdout`), and training, its
        bins included, uses the other rows of positive weight. The held-out rows are gathered to the client,
        so ``"auto"`` holds out none when their features would take more than 1 GiB there (``True`` does).
    scoring : str, callable or "loss"
        The early-stopping score, as in memory: ``"loss"`` (minus the mean loss) or a scikit-learn scorer,
        which predicts the held-out rows (gathered to the client) with the in-memory twin every round.
    n_threads : int or None
        Threads of each task's compiled kernels on its worker (None: every core the worker process may use,
        as in memory; the default 1 suits workers that run one task per thread). The model does not depend
        on it.
    warm_start : bool
        As in memory: refitting with a larger ``n_estimators`` adds rounds to the fitted machine (on the same
        data, the model one fit of the larger number gives, bit for bit); a smaller one, other classes or
        another feature count are errors.
    client : distributed.Client or str, optional
        The cluster's client or its scheduler's address (None: the current default client).

    Attributes
    ----------
    machine_ : BoostedMachine
        The trained machine (an ordinary bob_boost model).
    classes_ : numpy.ndarray
        The class labels; with two, ``classes_[1]`` is the positive class.
    n_features_in_ : int
        Number of features seen in ``fit``.
    """

    def __init__(self, loss: str = "exponential", weak_learner: str = "stump", n_estimators: int = 100,
                 maximum_feature_value: int = 256, selection_style: str = "independent", max_bins: int = 256,
                 class_weight=None, early_stopping="auto", validation_fraction: float = 0.1,
                 n_iter_no_change: int = 10, tol: float = 1e-7, random_state: int | None = None,
                 client=None, max_depth: int | None = None, max_leaves: int | None = 31,
                 multi_output: str = "per_output", growth: str = "leafwise", learning_rate: float | None = None,
                 missing: str | None = None, warm_start: bool = False, n_threads: int | None = 1,
                 scoring="loss") -> None:
        self.scoring = scoring
        self.n_threads = n_threads
        self.warm_start = warm_start
        self.missing = missing
        self.loss = loss
        self.weak_learner = weak_learner
        self.max_depth = max_depth
        self.max_leaves = max_leaves
        self.multi_output = multi_output
        self.growth = growth
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.maximum_feature_value = maximum_feature_value
        self.selection_style = selection_style
        self.max_bins = max_bins
        self.class_weight = class_weight
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.random_state = random_state
        self.client = client

    def fit(self, X, y, sample_weight=None) -> "DaskBoostingClassifier":
        """Train on the Dask array (or dataframe) ``X`` with labels ``y`` of any type.

        Raises
        ------
        ValueError
            For more than two classes with stumps, or the inputs :meth:`DaskBoosting.train` rejects.
        """
        check_choice(self.loss, "loss", CLASSIFICATION_LOSSES)
        check_choice(self.weak_learner, "weak_learner", DASK_WEAK_LEARNERS)
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        maximum = check_positive_int(self.maximum_feature_value, "maximum_feature_value", 2)
        n_threads = check_cluster_threads(self.n_threads)
        previous = self._previous(rounds)
        features, indices = self._class_indices(X, y)
        k = self.classes_.size
        if k > 2 and self.weak_learner == "stump":
            raise ValueError(f"y: stumps are binary, got {k} classes; use weak_learner='lut' or "
                             f"DaskBAdaCostClassifier")
        recipe = make_recipe("boosting", number_of_classes=k, loss=self.loss, weak_learner=self.weak_learner,
                             lut_entries=maximum, selection_style=self.selection_style, max_bins=self.max_bins,
                             tree_depth=self.max_depth, tree_leaves=self.max_leaves, tree_outputs=self.multi_output,
                             tree_growth=self.growth, shrinkage=self.learning_rate,
                             missing=check_missing(self.missing))
        encoding, kind = self._encoding, recipe.target_kind
        shape = {} if kind in ("signed", "indices") else {"new_axis": 1, "chunks": (indices.chunks[0], (k,))}
        targets = indices.map_blocks(lambda block: encoding.targets(kind, block), dtype=np.float64, **shape)
        trainer = DaskBoosting(recipe.loss, self.max_bins, self.client, weak_learner=self.weak_learner,
                               lut_entries=maximum if self.weak_learner == "lut" else None,
                               selection_style=self.selection_style, n_threads=n_threads,
                               **_tree_options(self, recipe))
        if previous is not None and rounds == len(previous):
            return self._unchanged()
        features, targets, weights, stopper = self._held_out(
            features, targets, self._class_weighted(indices, sample_weight, features.chunks[0]), recipe.loss,
            labels=indices)
        self.machine_ = trainer.train(features, targets, rounds - self._start, sample_weight=weights,
                                      callback=stopper, boosted_machine=previous)
        self._record_validation()
        return self

    def to_local(self) -> BoostingClassifier:
        """The in-memory :class:`~bob_boost.sklearn.BoostingClassifier` with this model (its ``save`` and all)."""
        check_is_fitted(self)
        return self._fill(self._local_estimator())

    def _local_estimator(self) -> BoostingClassifier:
        """The unfitted in-memory twin with these parameters."""
        return BoostingClassifier(loss=self.loss, weak_learner=self.weak_learner, n_estimators=self.n_estimators,
                                  maximum_feature_value=self.maximum_feature_value,
                                  selection_style=self.selection_style, max_bins=self.max_bins,
                                  class_weight=self.class_weight, early_stopping=False, max_depth=self.max_depth,
                                  max_leaves=self.max_leaves, multi_output=self.multi_output, growth=self.growth,
                                  learning_rate=self.learning_rate, missing=self.missing,
                                  warm_start=self.warm_start, n_threads=self.n_threads, scoring=self.scoring)


class DaskBoostingRegressor(_HeldOut, RegressorMixin, BaseEstimator):
    """Boosted stumps or gradient trees on the squared loss trained from Dask arrays; the twin of
    :class:`~bob_boost.sklearn.BoostingRegressor`, whose intercept (the weighted mean of ``y``) it shares.

    Parameters
    ----------
    n_estimators : int
        Rounds of boosting at most.
    weak_learner : {"stump", "lut", "tree"}
        Decision stumps, look-up tables on integer features ``0 .. maximum_feature_value - 1``, or gradient
        trees (see :class:`DaskBoosting`).
    maximum_feature_value : int
        Entries of each look-up table.
    max_depth, max_leaves, growth, learning_rate, missing
        Gradient trees: as in :class:`~bob_boost.sklearn.BoostingRegressor` (``learning_rate``: the
        trees' weight, 0.1 by default; ``missing="bin"``: NaN is a missing value, for stumps, tables and trees).
    max_bins : int
        Bins per feature (2 .. 256).
    early_stopping, validation_fraction, n_iter_no_change, tol, random_state, warm_start, n_threads, scoring
        As :class:`DaskBoostingClassifier`'s (a warm start keeps the fitted intercept).
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

    _stratified_holdout = False

    def __init__(self, n_estimators: int = 100, max_bins: int = 256, early_stopping="auto",
                 validation_fraction: float = 0.1, n_iter_no_change: int = 10, tol: float = 1e-7,
                 random_state: int | None = None, client=None, weak_learner: str = "stump",
                 max_depth: int | None = None, max_leaves: int | None = 31, growth: str = "leafwise",
                 learning_rate: float | None = None, missing: str | None = None, maximum_feature_value: int = 256,
                 warm_start: bool = False, n_threads: int | None = 1, scoring="loss") -> None:
        self.scoring = scoring
        self.n_threads = n_threads
        self.maximum_feature_value = maximum_feature_value
        self.warm_start = warm_start
        self.missing = missing
        self.weak_learner = weak_learner
        self.max_depth = max_depth
        self.max_leaves = max_leaves
        self.growth = growth
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.max_bins = max_bins
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.random_state = random_state
        self.client = client

    def fit(self, X, y, sample_weight=None) -> "DaskBoostingRegressor":
        """Train on the Dask array ``X`` with real targets ``y`` (a Dask array or an array)."""
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        check_choice(self.weak_learner, "weak_learner", DASK_WEAK_LEARNERS)
        maximum = check_positive_int(self.maximum_feature_value, "maximum_feature_value", 2)
        n_threads = check_cluster_threads(self.n_threads)
        previous = self._previous(rounds)
        recipe = make_recipe("boosting", number_of_classes=None, loss=SquaredLoss.name, weak_learner=self.weak_learner,
                             lut_entries=maximum, max_bins=self.max_bins, tree_depth=self.max_depth,
                             tree_leaves=self.max_leaves,
                             tree_growth=self.growth, shrinkage=self.learning_rate,
                             missing=check_missing(self.missing))
        features = _dask.as_row_chunked(X, "X")
        self._check_continued_features(features)
        self.n_features_in_ = int(features.shape[1])
        targets = _dask.as_matching_vector(y, features.chunks[0], "y")
        weights = None if sample_weight is None else _dask.as_matching_vector(sample_weight, features.chunks[0],
                                                                              "sample_weight")
        if previous is not None and rounds == len(previous):
            return self._unchanged()
        features, targets, weights, stopper = self._held_out(features, targets, weights, SquaredLoss())
        # a continued machine keeps its intercept (its baseline), as in memory
        intercept = None if previous is not None else _dask.weighted_mean(targets, weights)
        trainer = DaskBoosting(SquaredLoss(), self.max_bins, self.client, weak_learner=self.weak_learner,
                               lut_entries=maximum if self.weak_learner == "lut" else None, n_threads=n_threads,
                               **_tree_options(self, recipe))
        self.machine_ = trainer.train(features, targets, rounds - self._start, sample_weight=weights,
                                      baseline=intercept, callback=stopper, boosted_machine=previous)
        self._record_validation()
        self.intercept_ = float(self.machine_.baseline[0])
        return self

    def to_local(self) -> BoostingRegressor:
        """The in-memory :class:`~bob_boost.sklearn.BoostingRegressor` with this model."""
        check_is_fitted(self)
        local = self._local_estimator()
        machine = copy.deepcopy(self.machine_)
        machine.decision_rule = "identity"
        local.n_features_in_, local.machine_, local.intercept_ = self.n_features_in_, machine, self.intercept_
        local.n_iter_ = len(machine)
        local.train_score_ = np.full(len(machine) + 1, np.nan)
        local.validation_score_ = self.validation_score_
        metadata = local._base_metadata()
        metadata.update(REGRESSION_METADATA, loss=SquaredLoss.name, intercept=self.intercept_)
        machine.metadata.update(metadata)
        return local

    def _local_estimator(self) -> BoostingRegressor:
        """The unfitted in-memory twin with these parameters."""
        return BoostingRegressor(weak_learner=self.weak_learner, n_estimators=self.n_estimators,
                                 maximum_feature_value=self.maximum_feature_value, warm_start=self.warm_start,
                                 n_threads=self.n_threads, scoring=self.scoring, max_bins=self.max_bins,
                                 early_stopping=False, max_depth=self.max_depth, max_leaves=self.max_leaves,
                                 growth=self.growth, learning_rate=self.learning_rate, missing=self.missing)

    @staticmethod
    def _scored_labels(values: np.ndarray) -> np.ndarray:
        """A scorer's ``y``: the gathered targets themselves."""
        return values

    def _scoring_view(self) -> BoostingRegressor:
        """The in-memory twin with this fit's features, for a scorer (the machine set per round)."""
        local = self._local_estimator()
        local.n_features_in_ = self.n_features_in_
        return local

    def predict(self, X):
        """Predicted targets: a Dask array for a Dask ``X``, else a numpy array."""
        check_is_fitted(self)
        function = self.to_local().predict
        if not _dask.is_dask(X):
            return function(X)
        features = _dask.as_row_chunked(X, "X")
        return features.map_blocks(function, drop_axis=1, chunks=(features.chunks[0],), dtype=np.float64)


def _tree_options(estimator, recipe) -> dict:
    """:class:`DaskBoosting`'s gradient-tree options from an estimator whose recipe made its tree trainer (for
    stumps and tables: ``missing``, which trees take from their trainer)."""
    if estimator.weak_learner != "tree":
        return {"missing": check_missing(estimator.missing)}
    return {"tree": recipe.trainer.weak_trainer, "learning_rate": recipe.trainer.learning_rate}
