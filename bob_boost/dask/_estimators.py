"""scikit-learn estimators trained on a Dask cluster, each with ``to_local()`` to its in-memory twin."""
from __future__ import annotations

import copy

import numpy as np

from .._validation import check_bool, check_choice, check_positive_int
from ..binning import check_missing
from ..labels import REGRESSION_METADATA, ClassEncoding
from ..losses.logit import MultiLabelLogitLoss
from ..recipes import CLASSIFICATION_LOSSES, make_recipe
from ..sklearn import BoostingClassifier, BoostingRegressor
from ..exceptions import InvalidValueError
from ..sklearn._base import check_indicator
from ..sklearn._compat import check_is_fitted
from ..sklearn._eval_sets import check_eval_sets
from ..sklearn._fitting import estimator_sampling
from . import _dask
from ._cost_estimators import DaskAdaBoostDBClassifier, DaskBAdaCostClassifier
from ._estimator_base import _DaskClassifier, _DaskEstimator, _HeldOut
from ._trainers import DASK_WEAK_LEARNERS, DaskBoosting, check_cluster_threads

__all__ = ["DaskAdaBoostDBClassifier", "DaskBAdaCostClassifier", "DaskBoostingClassifier", "DaskBoostingRegressor"]


class DaskBoostingClassifier(_HeldOut, _DaskClassifier, BoostingClassifier):
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
colsample_bynode, boost_from_average, monotonic_cst, interaction_cst, categorical_features
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
        whatever the chunking (stratified by class; :mod:`bob_boost.sklearn._holdout`), and training, its
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

    def __init__(self, loss: str = "exponential", weak_learner: str = "stump", n_estimators: int = 100,
                 maximum_feature_value: int = 256, selection_style: str = "independent",
                 max_bins: int | None = 256, n_threads: int | None = 1, max_depth: int | None = None,
                 learning_rate: float | None = None, class_weight=None, early_stopping="auto",
                 validation_fraction: float = 0.1, n_iter_no_change: int = 10, tol: float = 1e-7,
                 scoring="loss", warm_start: bool = False, random_state=None, missing: str | None = None,
                 max_leaves: int | None = 31, growth: str = "leafwise", multi_output: str = "per_output",
                 quantized_gradients: int | None = None,
                 subsample: float = 1.0, subsample_freq: int = 1, sampling: str = "uniform", top_rate: float = 0.2,
                 other_rate: float = 0.1, colsample_bytree: float = 1.0, colsample_bynode: float = 1.0,
                 boost_from_average: bool = True, monotonic_cst=None, interaction_cst=None,
                 categorical_features="from_dtype", client=None) -> None:
        super().__init__(loss=loss, weak_learner=weak_learner, n_estimators=n_estimators,
                         maximum_feature_value=maximum_feature_value, selection_style=selection_style,
                         max_bins=max_bins, n_threads=n_threads, max_depth=max_depth, learning_rate=learning_rate,
                         class_weight=class_weight, early_stopping=early_stopping,
                         validation_fraction=validation_fraction, n_iter_no_change=n_iter_no_change, tol=tol,
                         scoring=scoring, warm_start=warm_start, random_state=random_state, missing=missing,
                         max_leaves=max_leaves, growth=growth, multi_output=multi_output,
                         quantized_gradients=quantized_gradients,
                         subsample=subsample, subsample_freq=subsample_freq, sampling=sampling, top_rate=top_rate,
                         other_rate=other_rate, colsample_bytree=colsample_bytree, colsample_bynode=colsample_bynode,
                         boost_from_average=boost_from_average, monotonic_cst=monotonic_cst,
                         interaction_cst=interaction_cst, categorical_features=categorical_features)
        self.client = client

    def fit(self, X, y, sample_weight=None, eval_set=None) -> "DaskBoostingClassifier":
        """Train on the Dask array (or dataframe) ``X`` with labels ``y`` of any type.

        ``eval_set`` is as in memory, its sets brought to the client (NumPy or Dask arrays).

        Raises
        ------
        ValueError
            For more than two classes with stumps, or the inputs :meth:`DaskBoosting.train` rejects.
        """
        check_choice(self.loss, "loss", CLASSIFICATION_LOSSES)
        check_choice(self.weak_learner, "weak_learner", DASK_WEAK_LEARNERS)
        check_bool(self.boost_from_average, "boost_from_average")
        _check_float_gradients(self)
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        maximum = check_positive_int(self.maximum_feature_value, "maximum_feature_value", 2)
        n_threads = check_cluster_threads(self.n_threads)
        previous = self._previous(rounds)
        if np.ndim(y) == 2:  # a label indicator matrix
            return self._fit_labels(X, y, sample_weight, eval_set, rounds, maximum, n_threads, previous)
        features, indices = self._class_indices(X, y)
        k = self.classes_.size
        if k > 2 and self.weak_learner == "stump":
            raise ValueError(f"y: stumps are binary, got {k} classes; use weak_learner='lut' or "
                             f"DaskBAdaCostClassifier")
        recipe, trainer = self._trainer(k, self.loss, maximum, n_threads, previous)
        encoding, kind = self._encoding, recipe.target_kind
        shape = {} if kind in ("signed", "indices") else {"new_axis": 1, "chunks": (indices.chunks[0], (k,))}
        targets = indices.map_blocks(lambda block: encoding.targets(kind, block), dtype=np.float64, **shape)
        if previous is not None and rounds == len(previous):
            return self._unchanged()
        features, targets, weights, stopper = self._held_out(
            features, targets, self._class_weighted(indices, sample_weight, features.chunks[0]), recipe.loss,
            labels=indices, eval_sets=check_eval_sets(self, eval_set, self._eval_targets(recipe)))
        baseline = None
        if self.boost_from_average and previous is None:  # the training rows' weighted class prior
            classes = targets.map_blocks(lambda block: ClassEncoding.classes_of(kind, block), dtype=np.int64,
                                         **({} if targets.ndim == 1 else {"drop_axis": 1}))
            baseline = recipe.prior_baseline(_dask.class_sizes(classes, weights, k))
        self.machine_ = trainer.train(features, targets, rounds - self._start, sample_weight=weights,
                                      baseline=baseline, callback=stopper, boosted_machine=previous)
        self._record_validation()
        return self

    def _trainer(self, outputs: int, loss, maximum: int, n_threads, previous, one_vs_rest: bool = False) -> tuple:
        """The in-memory recipe of the parameters (its loss, targets and tree trainer) for ``outputs`` classes or
        labels, and the :class:`DaskBoosting` that trains it."""
        recipe = make_recipe("boosting", number_of_classes=outputs, loss=loss, weak_learner=self.weak_learner,
                             lut_entries=maximum, selection_style=self.selection_style, max_bins=self.max_bins,
                             tree_depth=self.max_depth, tree_leaves=self.max_leaves, tree_outputs=self.multi_output,
                             tree_growth=self.growth, shrinkage=self.learning_rate,
                             missing=check_missing(self.missing), one_vs_rest=one_vs_rest,
                             tree_monotonic_cst=self._monotone_constraints(), tree_interaction_cst=self.interaction_cst,
                             categorical_features=self._categorical_features())
        trainer = DaskBoosting(recipe.loss, self.max_bins, self.client, weak_learner=self.weak_learner,
                               lut_entries=maximum if self.weak_learner == "lut" else None,
                               selection_style=self.selection_style, n_threads=n_threads,
                               sampling=estimator_sampling(self, previous is not None), **_tree_options(self, recipe))
        return recipe, trainer

    def _fit_labels(self, X, y, sample_weight, eval_set, rounds: int, maximum: int, n_threads, previous):
        """Multi-label ``fit`` (as in memory): ``y`` a (#samples, #labels) 0 / 1 indicator, checked chunk by chunk."""
        features = _dask.as_row_chunked(X, "X")
        self._check_continued_features(features)
        labels = _dask.as_matching_targets(y, features.chunks[0], "y")
        count = int(labels.shape[1]) if labels.ndim == 2 else 1
        if count < 2:
            raise InvalidValueError(f"y: a label indicator matrix has at least 2 columns, got {count}")
        self._check_labels(count)
        labels = labels.map_blocks(check_indicator, count, dtype=np.int64)
        self._encoding, self.classes_ = ClassEncoding(np.arange(count)), np.arange(count)
        self.n_features_in_ = int(features.shape[1])
        recipe, trainer = self._trainer(count, MultiLabelLogitLoss(), maximum, n_threads, previous, one_vs_rest=True)
        if previous is not None and rounds == len(previous):
            return self._unchanged()
        weights = None if sample_weight is None else _dask.as_matching_vector(sample_weight, features.chunks[0],
                                                                              "sample_weight")
        features, targets, weights, stopper = self._held_out(
            features, 2.0 * labels - 1.0, weights, recipe.loss, labels=labels, stratified=False,
            eval_sets=check_eval_sets(self, eval_set, self._eval_targets(recipe), multilabel=True))
        baseline = None
        if self.boost_from_average and previous is None:  # every label's weighted log-odds, summed on the cluster
            positive, total = _dask.positive_weights(targets, weights)
            baseline = recipe.loss.constants_of_shares(positive / total)
        self.machine_ = trainer.train(features, targets, rounds - self._start, sample_weight=weights,
                                      baseline=baseline, callback=stopper, boosted_machine=previous)
        self._record_validation()
        return self

    def to_local(self) -> BoostingClassifier:
        """The in-memory :class:`~bob_boost.sklearn.BoostingClassifier` with this model (its ``save`` and all)."""
        check_is_fitted(self)
        return self._fill(self._local_estimator())


class DaskBoostingRegressor(_HeldOut, _DaskEstimator, BoostingRegressor):
    """:class:`~bob_boost.sklearn.BoostingRegressor` trained from Dask arrays on a cluster: it subclasses the
    in-memory estimator (the same parameters, plus ``client``; its intercept, the loss's optimal constant),
    and ``predict`` of a Dask array gives a Dask array.

    Parameters
    ----------
    weak_learner, n_estimators, maximum_feature_value, max_depth, learning_rate, validation_fraction, \
n_iter_no_change, tol, warm_start, random_state, missing, max_leaves, growth, tweedie_power, subsample, \
subsample_freq, sampling, top_rate, other_rate, colsample_bytree, colsample_bynode, monotonic_cst, \
interaction_cst, categorical_features
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
    _stratified_holdout = False

    def __init__(self, weak_learner: str = "stump", n_estimators: int = 100,
                 maximum_feature_value: int = 256, max_bins: int | None = 256,
                 n_threads: int | None = 1, max_depth: int | None = None, learning_rate: float | None = None,
                 early_stopping="auto", validation_fraction: float = 0.1, n_iter_no_change: int = 10,
                 tol: float = 1e-7, scoring="loss", warm_start: bool = False, random_state=None,
                 missing: str | None = None, max_leaves: int | None = 31, growth: str = "leafwise",
                 quantized_gradients: int | None = None, loss: str = "squared_error", quantile: float | None = None,
                 huber_delta: float = 1.0, tweedie_power: float = 1.5,
                 subsample: float = 1.0, subsample_freq: int = 1, sampling: str = "uniform", top_rate: float = 0.2,
                 other_rate: float = 0.1, colsample_bytree: float = 1.0, colsample_bynode: float = 1.0,
                 monotonic_cst=None, interaction_cst=None, categorical_features="from_dtype", client=None) -> None:
        super().__init__(weak_learner=weak_learner, n_estimators=n_estimators,
                         maximum_feature_value=maximum_feature_value, max_bins=max_bins, n_threads=n_threads,
                         max_depth=max_depth, learning_rate=learning_rate, early_stopping=early_stopping,
                         validation_fraction=validation_fraction, n_iter_no_change=n_iter_no_change, tol=tol,
                         scoring=scoring, warm_start=warm_start, random_state=random_state, missing=missing,
                         max_leaves=max_leaves, growth=growth, quantized_gradients=quantized_gradients, loss=loss,
                         quantile=quantile, huber_delta=huber_delta, tweedie_power=tweedie_power,
                         subsample=subsample, subsample_freq=subsample_freq, sampling=sampling, top_rate=top_rate,
                         other_rate=other_rate, colsample_bytree=colsample_bytree, colsample_bynode=colsample_bynode,
                         monotonic_cst=monotonic_cst, interaction_cst=interaction_cst,
                         categorical_features=categorical_features)
        self.client = client

    def fit(self, X, y, sample_weight=None, eval_set=None) -> "DaskBoostingRegressor":
        """Train on the Dask array ``X`` with real targets ``y`` (a Dask array or an array).

        ``eval_set`` is as in memory, its sets brought to the client (NumPy or Dask arrays).
        """
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        check_choice(self.weak_learner, "weak_learner", DASK_WEAK_LEARNERS)
        loss = self._loss_function()
        if self.loss not in DASK_REGRESSION_LOSSES:
            raise InvalidValueError(f"loss: {type(self).__name__} trains {', '.join(map(repr, DASK_REGRESSION_LOSSES))}"
                                    f" (their optimal constant is a function of the weighted mean), got {self.loss!r};"
                                    f" train {self.loss!r} in memory with BoostingRegressor")
        _check_float_gradients(self)
        maximum = check_positive_int(self.maximum_feature_value, "maximum_feature_value", 2)
        n_threads = check_cluster_threads(self.n_threads)
        previous = self._previous(rounds)
        recipe = make_recipe("boosting", number_of_classes=None, loss=loss, weak_learner=self.weak_learner,
                             lut_entries=maximum, max_bins=self.max_bins, tree_depth=self.max_depth,
                             tree_leaves=self.max_leaves,
                             tree_growth=self.growth, shrinkage=self.learning_rate,
                             missing=check_missing(self.missing), tree_monotonic_cst=self._monotone_constraints(),
                             tree_interaction_cst=self.interaction_cst,
                             categorical_features=self._categorical_features())
        features = _dask.as_row_chunked(X, "X")
        self._check_continued_features(features)
        self.n_features_in_ = int(features.shape[1])
        targets = _dask.as_matching_vector(y, features.chunks[0], "y")
        weights = None if sample_weight is None else _dask.as_matching_vector(sample_weight, features.chunks[0],
                                                                              "sample_weight")
        if previous is not None and rounds == len(previous):
            return self._unchanged()
        features, targets, weights, stopper = self._held_out(
            features, targets, weights, loss, eval_sets=check_eval_sets(self, eval_set, self._eval_targets(recipe)))
        # a continued machine keeps its intercept (its baseline), as in memory; the losses trained here have
        # the optimal constant of their weighted mean
        intercept = None if previous is not None else loss.baseline(np.array([[_dask.weighted_mean(targets,
                                                                                                   weights)]]))
        trainer = DaskBoosting(loss, self.max_bins, self.client, weak_learner=self.weak_learner,
                               lut_entries=maximum if self.weak_learner == "lut" else None, n_threads=n_threads,
                               sampling=self._sampling(previous is not None), **_tree_options(self, recipe))
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
        loss = self._loss_function()
        machine.decision_rule = loss.decision_rule(1)
        local.n_features_in_, local.machine_, local.intercept_ = self.n_features_in_, machine, self.intercept_
        local.n_iter_ = len(machine)
        local.train_score_ = np.full(len(machine) + 1, np.nan)
        local.validation_score_ = self.validation_score_
        metadata = local._base_metadata()
        metadata.update(REGRESSION_METADATA, loss=loss.name, intercept=self.intercept_)
        machine.metadata.update(metadata)
        return local

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
        """The in-memory estimator's predictions; a Dask array (chunked as ``X``'s rows) for a Dask ``X``."""
        return self._apply("predict", X, np.float64)


#: The regressor's losses on a cluster: those whose optimal constant is a function of the weighted mean.
DASK_REGRESSION_LOSSES = ("squared_error", "poisson", "gamma", "tweedie")


def _check_float_gradients(estimator) -> None:
    """Distributed gradient trees sum float histograms: ``quantized_gradients`` must be None."""
    if estimator.quantized_gradients is not None:
        raise InvalidValueError(f"quantized_gradients: is for training in memory; {type(estimator).__name__} sums "
                                f"float histograms (leave it None), got {estimator.quantized_gradients!r}")


def _tree_options(estimator, recipe) -> dict:
    """:class:`DaskBoosting`'s gradient-tree options from an estimator whose recipe made its tree trainer (for
    stumps and tables: ``missing``, which trees take from their trainer)."""
    if estimator.weak_learner == "stump":
        return {"missing": check_missing(estimator.missing),
                "categorical_features": recipe.trainer.weak_trainer.categorical_features}
    if estimator.weak_learner != "tree":
        return {"missing": check_missing(estimator.missing)}
    return {"tree": recipe.trainer.weak_trainer, "learning_rate": recipe.trainer.learning_rate}
