"""What the Dask estimators add to the in-memory estimators they subclass: warm starts and early stopping on
held-out rows of Dask data, labels to targets on the cluster, class weights, prediction of Dask arrays block
by block, and ``to_local()``, ``save`` and ``load`` through the in-memory twin."""
from __future__ import annotations

import copy
import logging
import numbers

import numpy as np

from ..callbacks import EarlyStopping
from ..exceptions import InvalidValueError
from ..labels import ClassEncoding, classes_of
from ..machine import BoostedMachine
from ..sklearn._base import ESTIMATOR_KEY, _offers_probabilities
from ..sklearn._compat import available_if, check_is_fitted, check_scoring
from ..sklearn._fitting import (check_fit_parameters, early_stopping_enabled, eval_records, evals_result, kept_seed,
                                previous_machine,
                                scorer_metric, validation_seed)
from ..sklearn._holdout import held_out_counts
from . import _dask

logger = logging.getLogger(__name__)

#: ``early_stopping="auto"`` holds out no rows when their features would take more than this many bytes on the
#: client (which scores them every round); with less, it holds out the rows the in-memory estimator would.
AUTO_HELD_OUT_BYTES = 1 << 30


class _HeldOut:
    """Warm starts and early stopping on rows held out of the Dask data, as the in-memory estimators have them.

    The held-out rows are those the in-memory estimator holds out of the same data
    (:mod:`bob_boost.sklearn._holdout`: stratified by class for classifiers, rows without positive weight
    taking no part, whatever the chunking); they stay in the data with training weight 0 and are gathered to
    the client, where an
    :class:`~bob_boost.callbacks.EarlyStopping` scores the machine on them after every round: by the loss, or
    by the ``scoring`` scorer applied to the in-memory twin holding the growing machine, as in memory. Their
    seed is the in-memory one (:func:`~bob_boost.sklearn._fitting.validation_seed`).
    """

    #: Whether the held-out rows are chosen class by class (classifiers) or from all rows (regressors).
    _stratified_holdout = True

    def _previous(self, rounds: int) -> BoostedMachine | None:
        """The fitted machine ``warm_start`` continues (None for a fresh fit), the fit's parameters checked.

        Raises
        ------
        ValueError
            For bad ``warm_start``, ``scoring`` or early-stopping parameters, or ``n_estimators`` below the
            fitted rounds.
        """
        check_fit_parameters(self)
        self._scorer()
        previous = previous_machine(self, rounds)
        self._continuing, self._start = previous is not None, 0 if previous is None else len(previous)
        return previous

    def _check_continued_features(self, features) -> None:
        """A warm start keeps the fitted feature count (scikit-learn's message)."""
        if self._continuing and features.shape[1] != self.n_features_in_:
            raise InvalidValueError(f"X has {features.shape[1]} features, but {type(self).__name__} is "
                                    f"expecting {self.n_features_in_} features as input")

    def _seed(self, attribute: str = "_random_seed") -> int | None:
        """``random_state`` when an int, else a seed drawn from it once and kept across warm starts."""
        if isinstance(self.random_state, numbers.Integral):
            return int(self.random_state)
        return kept_seed(self, attribute, hasattr(self, "machine_") and bool(self.warm_start))

    def _scorer(self):
        """The scikit-learn scorer of ``scoring`` (None for ``"loss"``), checked as in memory."""
        return None if self.scoring == "loss" else check_scoring(self._local_estimator(), self.scoring)

    def _held_out(self, features, targets, weights, loss, labels=None, eval_sets=(), stratified: bool | None = None
                  ) -> tuple:
        """``(features, targets, weights, stopper)`` of training: with early stopping, the rows of
        positive weight that are not held out (as in memory, where the others are dropped before training)
        and the stopper scoring the held-out rows; without, the arguments unchanged and None. With evaluation
        sets (:func:`~bob_boost.sklearn._eval_sets.check_eval_sets`), the arguments unchanged and a recorder of
        every set (the first the stopper with early stopping), as in memory.

        ``labels`` (a Dask vector chunked like the rows, default ``targets``) are what the estimator's
        ``_scored_labels`` turns into a scorer's ``y``, and its ``_scoring_view`` is the twin it scores.
        ``stratified`` (default: the estimator's ``_stratified_holdout``) holds out rows of each class.
        """
        if eval_sets:  # in memory already: they are the validation data
            scorer = self._scorer()
            stopping = early_stopping_enabled(self, features.shape[0])
            records = eval_records(self._scoring_view() if scorer is not None else self, scorer, loss, eval_sets,
                                   stopping)
            self._stopper, self._records = (records[0] if stopping else None), (eval_sets, records)
            return features, targets, weights, records
        self._records = ((), [])
        if not self._early_stopping(features):
            self._stopper = None
            return features, targets, weights, None
        held_out = self._held_out_rows(targets if labels is None else labels, weights,
                                       self._stratified_holdout if stratified is None else stratified)
        scorer = self._scorer()
        rows, values, sample_weight, scored = _dask.rows_where(held_out, features, targets, weights,
                                                               None if scorer is None else labels)
        if rows.shape[0] == 0:
            raise ValueError(f"validation_fraction: {self.validation_fraction} holds out no sample")
        if scorer is None:
            stopper = EarlyStopping(rows, loss, values, sample_weight, patience=self.n_iter_no_change, tol=self.tol)
        else:  # the scorer predicts the held-out rows with the in-memory twin holding the growing machine
            metric = scorer_metric(self._scoring_view(), scorer, rows,
                                   self._scored_labels(values if scored is None else scored), sample_weight)
            stopper = EarlyStopping(rows, metric, greater_is_better=True, patience=self.n_iter_no_change,
                                    tol=self.tol)
        self._stopper = stopper
        training = ~held_out if weights is None else ~held_out & (weights > 0)
        return (*_dask.rows_kept(training, features, targets, weights), stopper)

    def _early_stopping(self, features) -> bool:
        """Whether this fit holds out rows: as in memory, except that ``"auto"`` does not when the held-out rows'
        features would take more than :data:`AUTO_HELD_OUT_BYTES` on the client (logged)."""
        if not early_stopping_enabled(self, features.shape[0]):
            return False
        held_out_bytes = self.validation_fraction * features.shape[0] * features.shape[1] * features.dtype.itemsize
        if self.early_stopping == "auto" and held_out_bytes > AUTO_HELD_OUT_BYTES:
            logger.info("%s: early_stopping='auto' holds out no rows: they would take %.3g GB on the client "
                        "(early_stopping=True holds them out)", type(self).__name__, held_out_bytes / 1e9)
            return False
        return True

    def _held_out_rows(self, labels, weights, stratified: bool):
        """The lazy boolean vector of the held-out rows (:func:`bob_boost.dask._dask.holdout`)."""
        names = list(self.classes_) if stratified else None
        groups = _dask.row_groups(labels, weights, stratified)
        sizes = _dask.class_sizes(groups + 1, None, len(names or [0]) + 1)[1:].astype(np.int64)
        counts = held_out_counts(sizes, self.validation_fraction, names)
        return _dask.holdout(groups, counts, validation_seed(self, self._continuing))

    def _unchanged(self):
        """``self``, refitted to the rounds it has: a warm start with ``n_estimators`` equal to them."""
        for attribute in ("_start", "_continuing"):
            self.__dict__.pop(attribute, None)
        return self

    def _record_validation(self) -> None:
        """``n_iter_`` and ``validation_score_`` (a warm start's after the continued machine's, as in memory)."""
        stopper, start = self.__dict__.pop("_stopper", None), self.__dict__.pop("_start", 0)
        self.__dict__.pop("_continuing", None)
        scores = np.empty(0)
        if stopper is not None:
            scores = np.asarray(stopper.history[:len(self.machine_) - start + 1], dtype=np.float64)
            scores = scores if stopper.greater_is_better else -scores  # higher is better, as in memory
            if start:  # the run's first entry scores the continued machine; unknown earlier ones are NaN
                known = np.full(start, np.nan)
                previous = getattr(self, "validation_score_", np.empty(0))[:start]
                known[:previous.size] = previous
                scores = np.concatenate([known, scores])
        self.validation_score_ = scores
        self.n_iter_ = len(self.machine_)
        eval_sets, records = self.__dict__.pop("_records", ((), []))
        self.evals_result_ = evals_result(eval_sets, records, len(self.machine_) - start + 1)
        self.train_score_ = np.full(self.n_iter_ + 1, np.nan)  # the training scores stay on the workers


class _DaskEstimator:
    """What every Dask estimator adds to the in-memory estimator it subclasses (:attr:`_local_class`, whose
    parameters it takes, plus ``client``): the in-memory twin, and files through it."""

    #: The in-memory estimator this one subclasses.
    _local_class: type

    def _local_estimator(self):
        """The unfitted in-memory twin with these parameters (without early stopping: it only predicts)."""
        params = self.get_params(deep=False)
        return self._local_class(**{name: params[name] for name in self._local_class._get_param_names()
                                    if name != "early_stopping"}, early_stopping=False)

    def _validate_features(self, X, reset: bool) -> np.ndarray:
        """The in-memory validation, which a Dask array would reach only by being computed whole: refused."""
        if _dask.is_dask(X):
            raise TypeError(f"X: {type(self).__name__} predicts Dask arrays with predict, decision_function and "
                            f"predict_proba; for the others, pass a numpy array or use to_local()")
        return super()._validate_features(X, reset)

    def save(self, path) -> None:
        """Write the model as the in-memory twin's file (see ``to_local().save``); ``load`` of either class
        reads it.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        """
        check_is_fitted(self)
        self.to_local().save(path)

    @classmethod
    def load(cls, path):
        """The fitted estimator in a file written by ``save`` (of this class or its in-memory twin), with the
        file's parameters and the default ``client``.

        Raises
        ------
        bob_boost.ModelFormatError
            If the file does not hold a fitted in-memory twin of this class.
        """
        local = cls._local_class.load(path)
        params = local.get_params(deep=False)
        estimator = cls(**{name: params[name] for name in cls._get_param_names() if name in params})
        estimator.__dict__.update({name: value for name, value in vars(local).items() if name not in params})
        return estimator

    def _apply(self, method: str, X, dtype, from_scores=None):
        """The in-memory ``method`` on ``X``; for a Dask array, on each of its row blocks (on the workers, by a
        copy of the in-memory twin), where ``from_scores`` (None: one value per row) gives each row's shape."""
        if not _dask.is_dask(X):
            return getattr(super(), method)(X)
        check_is_fitted(self)
        features = _dask.as_row_chunked(X, "X")
        row = () if from_scores is None else from_scores(
            np.zeros((1, self.machine_.number_of_outputs or len(self.classes_))))[0].shape
        function = getattr(self.to_local(), method)
        if not row:
            return features.map_blocks(function, drop_axis=1, chunks=(features.chunks[0],), dtype=dtype)
        return features.map_blocks(function, chunks=(features.chunks[0], row), dtype=dtype)


class _DaskClassifier(_DaskEstimator):
    """What the Dask classifiers share: labels to targets on the cluster, and prediction of Dask arrays block
    by block through ``to_local()``'s in-memory estimator."""

    def _class_indices(self, X, y):
        """The row-chunked features, and ``y`` as class indices ``0 .. K-1`` in ``classes_`` order (a warm
        start's classes and features must be the fitted ones)."""
        features = _dask.as_row_chunked(X, "X")
        self._check_continued_features(features)
        labels = _dask.as_label_vector(y, features.chunks[0], "y")
        encoding = ClassEncoding.fit(_dask.distinct_labels(labels), name="y")
        if self._continuing and list(encoding.classes) != list(self.classes_):
            raise InvalidValueError(f"y: has classes {list(encoding.classes)} but the fitted model, which "
                                    f"warm_start continues, has {self.classes_.tolist()}")
        self._encoding = encoding
        self.classes_ = np.array(encoding.classes)
        self.n_features_in_ = int(features.shape[1])
        classes = self.classes_
        return features, labels.map_blocks(lambda block: np.searchsorted(classes, block), dtype=np.int64)

    def _class_weighted(self, indices, sample_weight, rows: tuple[int, ...]):
        """``sample_weight`` (a Dask vector, or None) times the ``class_weight`` factor of each sample's class,
        as the in-memory estimators weigh them (``"balanced"``: ``n / (K n_class)``, counted on the cluster)."""
        weights = None if sample_weight is None else _dask.as_matching_vector(sample_weight, rows, "sample_weight")
        class_weight = getattr(self, "class_weight", None)
        if class_weight is None:
            return weights
        k = self.classes_.size
        if isinstance(class_weight, dict):
            unknown = [key for key in class_weight if key not in set(self.classes_.tolist())]
            if unknown:
                raise ValueError(f"class_weight: names class {unknown[0]!r}, which is not in y (classes "
                                 f"{self.classes_.tolist()})")
            factors = np.array([float(class_weight.get(c, 1.0)) for c in self.classes_.tolist()])
        elif class_weight == "balanced":
            counts = _dask.class_sizes(indices, None, k)
            factors = counts.sum() / (k * counts)
        else:
            raise ValueError(f"class_weight: must be None, 'balanced' or a dict, got {class_weight!r}")
        per_sample = indices.map_blocks(lambda block: factors[block], dtype=np.float64)
        return per_sample if weights is None else weights * per_sample

    def _scored_labels(self, values: np.ndarray) -> np.ndarray:
        """The class labels of gathered class indices (a multi-label indicator as it is)."""
        return values.astype(np.int64) if values.ndim == 2 else self.classes_[values.astype(np.int64)]

    def _scoring_view(self):
        """The in-memory twin with this fit's classes and features, for a scorer (the machine set per round)."""
        local = self._local_estimator()
        local.n_features_in_, local._encoding, local.classes_ = self.n_features_in_, self._encoding, self.classes_
        return local

    def _binary_targets(self, X, y):
        """The row-chunked features, the class indices, and ``y`` as +-1 targets (``classes_[1]`` is +1)."""
        features, indices = self._class_indices(X, y)
        if self.classes_.size != 2:
            raise ValueError(f"y: {type(self).__name__} is binary, got {self.classes_.size} classes")
        return features, indices, indices.map_blocks(lambda block: np.where(block == 1, 1.0, -1.0), dtype=np.float64)

    def _fill(self, local):
        """``local`` (the in-memory twin, unfitted) fitted with a copy of this model."""
        machine = copy.deepcopy(self.machine_)
        local.n_features_in_ = self.n_features_in_
        # a loaded estimator has its classes from the machine's metadata, a fitted one its encoding
        local._encoding = getattr(self, "_encoding", None) or classes_of(self.machine_)
        local.classes_ = self.classes_
        local.machine_ = machine
        local.n_iter_ = len(machine)
        local.train_score_ = np.full(len(machine) + 1, np.nan)
        local.validation_score_ = getattr(self, "validation_score_", np.empty(0))
        machine.metadata.update(local._classifier_metadata())
        machine.metadata[ESTIMATOR_KEY] = type(local).__name__
        return local

    def decision_function(self, X):
        """The in-memory estimator's scores; a Dask array (chunked as ``X``'s rows) for a Dask ``X``."""
        return self._apply("decision_function", X, np.float64, self._decision_from_scores)

    def predict(self, X):
        """The in-memory estimator's labels; a Dask array for a Dask ``X``."""
        return self._apply("predict", X, self.classes_.dtype,
                           self._labels_from_scores if self.machine_.decision_rule == "multilabel" else None)

    @available_if(_offers_probabilities)
    def predict_proba(self, X):
        """The in-memory estimator's class probabilities; a Dask array for a Dask ``X``."""
        return self._apply("predict_proba", X, np.float64, self._proba_from_scores)
