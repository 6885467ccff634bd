"""What every estimator shares: feature and weight checks, label encoding, decisions and persistence."""
from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..costs import cost_star
from ..exceptions import InvalidTypeError, InvalidValueError, ModelFormatError
from ..labels import ClassEncoding, classes_of
from ..losses import LossFunction
from ..machine import BoostedMachine
from .. import importances, recipes
from ..recipes import WEAK_LEARNERS  # noqa: F401 (the estimators' choices, re-exported)
from ..registry import loss_class
from ..binning import check_missing
from ..weak.lut import check_discrete
from . import _categories, _fitting
from ._eval_sets import check_eval_sets
from ._fit_data import MemoryData
from ._compat import (BaseEstimator, ClassifierMixin, available_if, check_classification_targets, check_is_fitted,
                      validate_data)

#: Key of the machine's metadata that names the estimator class.
ESTIMATOR_KEY = "sklearn_estimator"

#: The ``loss`` choices of :class:`BoostingClassifier` (:data:`bob_boost.recipes.CLASSIFICATION_LOSSES`).
CLASSIFICATION_LOSSES: dict[str, type[LossFunction]] = {
    name: loss_class(name) for name in recipes.CLASSIFICATION_LOSSES}


def _json_value(value: Any) -> Any:
    """A JSON-serialisable version of a constructor parameter."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (np.random.RandomState, np.random.Generator)):
        # a generator's state is not a parameter worth restoring: only refitting uses it
        return None
    return value


class _BoostedEstimator(BaseEstimator):
    """Input validation, sample weights and HDF5 persistence shared by all estimators."""

    #: Parameters the estimator no longer takes, each with what replaces it: passing one is a TypeError
    #: that says so (instead of Python's "unexpected keyword argument").
    removed_parameters: dict[str, str] = {}

    def __new__(cls, *args, **kwargs):
        for name in kwargs.keys() & cls.removed_parameters.keys():
            raise InvalidTypeError(f"{cls.__name__}: {name} is not a parameter: {cls.removed_parameters[name]}")
        return super().__new__(cls)

    def _validate_features(self, X, reset: bool) -> np.ndarray:
        X = validate_data(self, _categories.coded_frame(self, X, reset), reset=reset,
                          ensure_all_finite=self._finite_rule())
        if getattr(self, "weak_learner", None) == "lut":
            _check_lut_features(X, self.maximum_feature_value)
        return X

    def _finite_rule(self) -> bool | str:
        """scikit-learn's ``ensure_all_finite``: NaN is accepted only with ``missing="bin"``."""
        return "allow-nan" if check_missing(getattr(self, "missing", None)) == "bin" else True

    def __sklearn_tags__(self):
        """scikit-learn tags: NaN input only with ``missing="bin"``."""
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = getattr(self, "missing", None) == "bin"
        return tags

    def _fit_data(self):
        """Where this estimator's ``fit`` finds its rows (:mod:`bob_boost.sklearn._fit_data`): in memory."""
        return MemoryData()

    def _base_metadata(self) -> dict[str, Any]:
        metadata: dict[str, Any] = {
            ESTIMATOR_KEY: type(self).__name__,
            "params": {key: _json_value(value) for key, value in self.get_params(deep=False).items()},
            "n_features_in": int(self.n_features_in_),
        }
        if hasattr(self, "feature_names_in_"):
            names = [str(name) for name in self.feature_names_in_]
            # "feature_names" is what bob-boost inspect and the plots read, as for a table's header line
            metadata["feature_names_in"] = metadata["feature_names"] = names
        if hasattr(self, "n_iter_"):
            metadata.update(_fitting.fitted_state(self))
        metadata.update(_categories.metadata_of(self))
        return metadata

    def _restore(self, machine: BoostedMachine, metadata: dict[str, Any]) -> None:
        """Set the fitted attributes from a loaded machine (overridden by classifiers)."""
        self.machine_ = machine
        self.n_features_in_ = int(metadata["n_features_in"])
        if "feature_names_in" in metadata:
            self.feature_names_in_ = np.asarray(metadata["feature_names_in"], dtype=object)
        _categories.restore(self, metadata)
        _fitting.restore_state(self, machine, metadata)

    def _boost(self, data, recipe, X, targets, weights, y, rounds: int, groups=None, index=None,
               split_weights=None, eval_set=None, baseline=None) -> BoostedMachine:
        """Train (or with ``warm_start`` continue) the machine; see :func:`bob_boost.sklearn._fitting.boost`.
        ``eval_set`` is ``fit``'s (:func:`~bob_boost.sklearn._eval_sets.check_eval_sets`)."""
        eval_sets = check_eval_sets(self, eval_set, self._eval_targets(recipe),
                                    multilabel=recipe.loss.decision_rule(2) == "multilabel")
        return _fitting.boost(self, data, recipe, X, targets, weights, y, rounds, groups, index, split_weights,
                              eval_sets, baseline)

    def _eval_targets(self, recipe):
        """``targets_of(y, name)``: the targets ``recipe`` trains on of an evaluation set's ``y``."""
        raise NotImplementedError

    def _fit_features(self, data, X, y, **options) -> tuple:
        """Validate ``X`` and ``y`` as ``data``'s rows; a warm start keeps the fitted feature count (checks the
        parameters too)."""
        _fitting.check_fit_parameters(self)
        continuing = self.warm_start and hasattr(self, "machine_")
        return data.validated(self, X, y, reset=not continuing, **options)

    def _categorical_features(self) -> np.ndarray | None:
        """The fitted features' categorical ones (:mod:`bob_boost.sklearn._categories`).

        Raises
        ------
        ValueError
            For names or indices that are not features of ``X``.
        """
        return _categories.categorical_indices(self)

    def _monotone_constraints(self):
        """``monotonic_cst`` as the tree trainer takes it: a dict ``{feature name: -1, 0 or +1}`` (scikit-learn's
        form for named columns; features it does not name are free) becomes one entry per feature.

        Raises
        ------
        ValueError
            For a dict without named columns in ``X``, or naming a column ``X`` does not have.
        """
        constraints = getattr(self, "monotonic_cst", None)
        if not isinstance(constraints, dict):
            return constraints
        names = getattr(self, "feature_names_in_", None)
        if names is None:
            raise InvalidValueError("monotonic_cst: a dict names features, but X has no column names; give one "
                                    "entry per feature instead")
        unknown = [key for key in constraints if key not in set(names.tolist())]
        if unknown:
            raise InvalidValueError(f"monotonic_cst: names {unknown[0]!r}, which is not a column of X")
        return [constraints.get(name, 0) for name in names.tolist()]

    @property
    def feature_importances_(self) -> np.ndarray:
        """(#features,) each feature's importance of kind ``importance_type``, summing to 1 (all zeros when
        there is none: a machine without rounds, say).

        ``"loss"`` (the default): every round lowers the training loss (the
        loss the trainer minimises, weighted by the sample weights, on the
        samples it trained on) by some amount; that decrease (0 if the loss
        rose) is shared equally by the features the round's weak machine
        reads (the one feature of a stump or a univariate LUT; the split
        features of a tree; the per-output features of a multi-output LUT),
        and a feature's importance is its total over the rounds. ``"split"``
        (or ``"weight"``), ``"gain"`` and ``"cover"``: the machine's
        :meth:`~bob_boost.BoostedMachine.feature_importances` of that kind
        (how often the weak machines read each feature; the trees' split
        gains or training cover on it), normalised.

        Raises
        ------
        ValueError
            For an unknown ``importance_type``, or gains and covers of weak machines that record none
            (stumps, tables).
        """
        check_is_fitted(self)
        kind = importances.check_kind(getattr(self, "importance_type", "loss"), "importance_type",
                                      ("loss", "split", "weight", "gain", "cover"))
        if kind == "loss":
            return _fitting.importances(self.machine_, self.n_features_in_)
        try:
            totals = importances.tree_importances(self.machine_.weak_machines, kind, self.n_features_in_)
        except InvalidValueError as error:
            raise InvalidValueError(str(error).replace("kind:", "importance_type:", 1)) from None
        total = totals.sum()
        return totals / total if total > 0 else totals

    def shap_values(self, X, background=None) -> np.ndarray:
        """:meth:`bob_boost.BoostedMachine.shap_values` of ``X``'s rows, path-dependent from the trees' training
        cover or against the ``background`` rows: the Shapley values of the machine's scores (a log-link
        regressor's: of the log of its mean), the expected value in the last column."""
        check_is_fitted(self)
        return self.machine_.shap_values(self._validate_features(X, reset=False),
                                         None if background is None else self._validate_features(background,
                                                                                                 reset=False))

    def save(self, path: str | os.PathLike) -> None:
        """Write the fitted estimator to an HDF5 file.

        The file holds ``machine_`` in bob_boost's format (readable by
        :meth:`bob_boost.BoostedMachine.load` and the command line) with the
        estimator's parameters and fitted attributes in its metadata.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        TypeError
            If a parameter or a class label cannot be stored as JSON.
        """
        check_is_fitted(self)
        try:
            json.dumps(self.machine_.metadata)
        except TypeError as error:
            raise InvalidTypeError(f"{type(self).__name__}.save: a parameter or class label cannot be stored "
                                   f"as JSON ({error})") from None
        self.machine_.save(path)

    @classmethod
    def load(cls, path: str | os.PathLike):
        """Read an estimator of this class written by :meth:`save`.

        Raises
        ------
        bob_boost.ModelFormatError
            If the file does not hold a fitted estimator of this class.
        """
        from .persistence import load_estimator  # the estimator classes live below this module

        estimator = load_estimator(path)
        if not isinstance(estimator, cls):
            raise ModelFormatError(f"{os.fspath(path)}: holds a {type(estimator).__name__}, not a {cls.__name__}")
        return estimator


def check_indicator(y, labels: int, name: str = "y") -> np.ndarray:
    """``y`` as a (#samples, ``labels``) int64 0 / 1 indicator matrix (a multi-label target).

    Raises
    ------
    ValueError
        For another shape, or values other than 0 and 1; the message names ``name``.
    """
    array = np.asarray(y)
    if array.ndim != 2 or array.shape[1] != labels:
        raise InvalidValueError(f"{name}: expected a (#samples, {labels}) label indicator matrix, got shape "
                                f"{array.shape}")
    if not np.all((array == 0) | (array == 1)):
        raise InvalidValueError(f"{name}: a label indicator matrix holds 0 and 1 only")
    return array.astype(np.int64)


def _check_lut_features(X: np.ndarray, maximum_feature_value: int) -> None:
    """Raise a ValueError unless every value is an integer in ``[0, maximum_feature_value)``."""
    try:  # NaN (accepted only with missing="bin") has its own table entry
        check_discrete(np.where(np.isnan(X), 0, X) if X.dtype.kind == "f" else X, maximum_feature_value, "X")
    except ValueError as error:
        raise InvalidValueError(f"{error}; weak_learner='lut' needs integer features in [0, maximum_feature_value="
                                f"{maximum_feature_value}). Quantise the features first, e.g. with "
                         "sklearn.preprocessing.KBinsDiscretizer(n_bins=..., encode='ordinal') in a pipeline."
                         ) from None


def _refuse_constant() -> None:
    """Raise the ValueError of features that no stump can split (every feature constant)."""
    raise InvalidValueError("X: every feature is constant over the training samples (with positive weight), so no "
                            "decision stump can split them")


def _offers_probabilities(estimator) -> bool:
    """``available_if`` check: whether the estimator offers probabilities."""
    return estimator._has_probabilities()


class _BoostedClassifier(ClassifierMixin, _BoostedEstimator):
    """Label encoding, class weights and score -> label decisions shared by the classifiers."""

    def _encoded_rows(self, data, X, y, sample_weight) -> tuple:
        """Set ``classes_`` from ``y``; return ``(X, class indices, y, weights, index)`` of the samples with
        positive weight (:meth:`FitData.positive`), each weighed by ``sample_weight`` times its class's
        ``class_weight`` (for an estimator that has the parameter).

        Raises
        ------
        ValueError
            If ``class_weight`` is neither None, ``"balanced"`` nor a dict of the classes in ``y``
            (scikit-learn's own messages), or a class has no sample with positive weight; when a warm start
            would change the classes.
        """
        encoded = self._encode_labels(data, y)
        weights = data.weights(sample_weight, encoded)
        class_weight = getattr(self, "class_weight", None)
        if class_weight is not None:
            factors = self._class_weight_factors(class_weight, lambda: data.sums(encoded, None, self.classes_.size))
            per_sample = data.rows(lambda indices: factors[indices], encoded, np.float64)
            weights = per_sample if weights is None else weights * per_sample
        weights, index, (X, encoded, y) = data.positive(weights, X, encoded, y)
        if weights is not None:
            weighted = data.sums(encoded, None, self.classes_.size)
            if np.any(weighted == 0):
                missing = self.classes_[np.flatnonzero(weighted == 0)[:1]].tolist()[0]
                raise InvalidValueError(f"sample_weight: class {missing!r} has no sample with positive weight; "
                                        "every class in y needs some weight")
        return X, encoded, y, weights, index

    def _class_weight_factors(self, class_weight, counts) -> np.ndarray:
        """(K,) each class's ``class_weight`` factor (``"balanced"``: ``n / (K n_class)`` of the class sizes
        ``counts()``, as scikit-learn's ``compute_sample_weight``)."""
        classes = self.classes_.tolist()
        if isinstance(class_weight, dict):
            unknown = [key for key in class_weight if key not in set(classes)]
            if unknown:
                raise InvalidValueError(f"class_weight: names class {unknown[0]!r}, which is not in y "
                                        f"(classes {sorted(classes)})")
            return np.array([float(class_weight.get(c, 1.0)) for c in classes])
        if not (isinstance(class_weight, str) and class_weight == "balanced"):
            raise InvalidValueError(f"class_weight: must be None, 'balanced' or a dict, got {class_weight!r}")
        sizes = counts()
        return sizes.sum() / (len(classes) * sizes)

    def _eval_targets(self, recipe):
        """The training encoding of an evaluation set's labels (unknown labels are an error naming the set)."""
        return lambda y, name: self._encoding.targets(recipe.target_kind, self._encoding.encode(y, name))

    def _encode_labels(self, data, y):
        """Set ``classes_`` (and the encoding) from ``y``; return every sample's class index."""
        classes = data.distinct(y)
        check_classification_targets(classes)
        encoding = ClassEncoding.fit(classes, name="y")
        if self.warm_start and hasattr(self, "machine_") and list(encoding.classes) != list(self.classes_):
            raise InvalidValueError(f"y: has classes {list(encoding.classes)} but the fitted model, which "
                                    f"warm_start continues, has {self.classes_.tolist()}")
        self._encoding = encoding
        self.classes_ = np.array(self._encoding.classes)
        return data.rows(lambda labels: encoding.encode(labels, "y"), y, np.int64)

    def _classifier_metadata(self) -> dict[str, Any]:
        metadata = self._base_metadata()
        metadata.update(self._encoding.to_metadata())
        if self.machine_.decision_rule == "multilabel":  # the classes are the labels' indices
            metadata["task"] = "multilabel"
        return metadata

    def _restore(self, machine: BoostedMachine, metadata: dict[str, Any]) -> None:
        super()._restore(machine, metadata)
        self.classes_ = np.array(classes_of(machine).classes)

    def decision_function(self, X) -> np.ndarray:
        """Class scores: the larger, the more likely the class.

        For a machine without cost matrix these are the machine's scores; for
        a cost-sensitive machine (BAdaCost) they are minus the expected costs
        ``-(C* f(x))_k``, so the largest score is the predicted class.

        Returns
        -------
        numpy.ndarray
            (#samples,) for two classes (positive means ``classes_[1]``),
            (#samples, #classes) otherwise.
        """
        return self._decision_from_scores(self._machine_scores(X))

    def shap_values(self, X, background=None) -> np.ndarray:
        """:meth:`bob_boost.BoostedMachine.shap_values` of ``X``'s rows (path-dependent, or against the
        ``background`` rows), mapped
        as ``decision_function`` maps the machine's scores (a cost-sensitive machine's costs are a linear
        function of its scores, and so are their Shapley values): they add up to ``decision_function``."""
        values = super().shap_values(X, background)
        rows, width = values.shape[:2]
        decided = self._decision_from_scores(values.reshape(rows * width, -1))
        return decided.reshape((rows, width) + decided.shape[1:])

    def _decision_from_scores(self, scores: np.ndarray) -> np.ndarray:
        if self.machine_.cost_matrix is not None:
            scores = -(scores @ cost_star(self.machine_.cost_matrix).T)
            if self.classes_.size == 2:
                # ties (equal costs) give 0, i.e. classes_[0], as the machine's argmin does
                return scores[:, 1] - scores[:, 0]
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X) -> np.ndarray:
        """Predicted class labels (elements of ``classes_``): the machine's decision, as its ``predict``."""
        return self._labels_from_scores(self._machine_scores(X))

    def _labels_from_scores(self, scores: np.ndarray) -> np.ndarray:
        indices = self.machine_.class_indices_from_scores(scores)
        # a multi-label machine's indicator (#samples, #labels) is the prediction itself
        return indices if self.machine_.decision_rule == "multilabel" else self.classes_[indices]

    def _has_probabilities(self) -> bool:
        """Whether :meth:`predict_proba` is offered (every classifier but the tangential loss's)."""
        return True

    @available_if(_offers_probabilities)
    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities, columns in ``classes_`` order; their argmax is :meth:`predict`.

        Each estimator's documentation says what they estimate.

        Returns
        -------
        numpy.ndarray
            (#samples, #classes) probabilities summing to 1 per row.
        """
        return self._proba_from_scores(self._machine_scores(X))

    def _probability_link(self) -> tuple:
        """How :meth:`_proba_from_scores` maps scores, for exporters (:mod:`bob_boost.onnx`).

        ``("softmax_decision",)``: a softmax of the cost-sensitive class scores ``-(C* f)`` (or of
        the scores without cost matrix); ``("softmax",)``: a softmax of the scores;
        ``("sigmoid", c, K)``: ``sigmoid(c * scores)``, as ``[1 - p, p]`` for one output, else
        normalised over the K outputs; ``("sigmoid_each", c)``: ``sigmoid(c * scores)`` of every output
        on its own (multi-label).
        """
        return ("softmax_decision",)

    def _proba_from_scores(self, scores: np.ndarray) -> np.ndarray:
        """Probabilities from machine scores: a softmax of :meth:`decision_function`'s class scores."""
        decision = self._decision_from_scores(scores)
        if decision.ndim == 1:
            decision = np.column_stack([np.zeros_like(decision), decision])
        decision = decision - decision.max(axis=1, keepdims=True)
        exponentials = np.exp(decision)
        return exponentials / exponentials.sum(axis=1, keepdims=True)

    def staged_decision_function(self, X) -> Iterator[np.ndarray]:
        """:meth:`decision_function` after each round: one array per weak machine of ``machine_``."""
        for scores in self._staged_scores(X):
            yield self._decision_from_scores(scores)

    def staged_predict(self, X) -> Iterator[np.ndarray]:
        """:meth:`predict` after each round: one array per weak machine of ``machine_``."""
        for scores in self._staged_scores(X):
            yield self._labels_from_scores(scores)

    @available_if(_offers_probabilities)
    def staged_predict_proba(self, X) -> Iterator[np.ndarray]:
        """:meth:`predict_proba` after each round: one array per weak machine of ``machine_``."""
        for scores in self._staged_scores(X):
            yield self._proba_from_scores(scores)

    def staged_score(self, X, y, sample_weight=None) -> Iterator[float]:
        """The (weighted) accuracy on ``X``, ``y`` after each round (multi-label: the share of samples with
        every label right, as scikit-learn's ``accuracy_score``)."""
        for predicted in self.staged_predict(X):
            right = predicted == np.asarray(y)
            yield float(np.average(right.all(axis=1) if right.ndim == 2 else right, weights=sample_weight))

    def _machine_scores(self, X) -> np.ndarray:
        """(#samples, #outputs) scores of the fitted machine for validated ``X``."""
        check_is_fitted(self)
        return self.machine_.decision_scores(self._validate_features(X, reset=False))

    def _staged_scores(self, X) -> Iterator[np.ndarray]:
        check_is_fitted(self)
        return self.machine_.staged_decision_scores(self._validate_features(X, reset=False))
