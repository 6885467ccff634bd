"""scikit-learn estimators around bob_boost's trainers.

The estimators follow scikit-learn's conventions (parameters stored by the
constructor, fitted attributes ending in ``_``, ``classes_`` with arbitrary
labels) so they work in pipelines, grid searches and cross validation. Every
fitted estimator exposes the trained :class:`~bob_boost.BoostedMachine` as
``machine_`` and can be written to / read from HDF5 with :meth:`save` and
:func:`load_estimator` (or the ``load`` classmethod of its class); what the
estimator needs besides the machine (class labels, feature count, ...) is
kept in the machine's ``metadata``.

scikit-learn (>= 1.6) is an optional dependency: ``pip install bob_boost[sklearn]``.
"""
from __future__ import annotations

import json
import numbers
import os
from typing import Any

import numpy as np

try:
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
    from sklearn.utils import check_random_state
    from sklearn.utils.metaestimators import available_if
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_is_fitted, validate_data
except ImportError as _error:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        "bob_boost.sklearn needs scikit-learn >= 1.6 (not installed or too old: "
        f"{_error}); install it with: pip install bob_boost[sklearn]") from _error

from ._validation import check_positive_int
from .costs import check_cost_matrix, cost_star, samme_cost_matrix
from .exceptions import InvalidTypeError, InvalidValueError, ModelFormatError
from .labels import REGRESSION_METADATA, ClassEncoding, classes_of
from . import recipes
from .losses import LossFunction, SquaredLoss
from .machine import BoostedMachine
from .recipes import SELECTION_STYLES, make_loss, make_recipe
from .registry import loss_class
from .trainers.multiclass import CostSensitiveTreeTrainer
from .weak.lut import LUTMachine, check_discrete

__all__ = ["AdaBoostDBClassifier", "BAdaCostClassifier", "BoostingClassifier", "BoostingRegressor",
           "estimator_from_machine", "load_estimator"]

#: Key of the machine's metadata that names the estimator class.
ESTIMATOR_KEY = "sklearn_estimator"

#: The ``loss`` choices of :class:`BoostingClassifier` (:data:`bob_boost.recipes.CLASSIFICATION_LOSSES`).
CLASSIFICATION_LOSSES: dict[str, type[LossFunction]] = {
    name: loss_class(name) for name in recipes.CLASSIFICATION_LOSSES}
WEAK_LEARNERS = ("stump", "lut")


def _check_choice(value, name: str, choices) -> str:
    if not isinstance(value, str) or value not in choices:
        raise InvalidValueError(f"{name}: must be one of {tuple(choices)}, got {value!r}")
    return value


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

    def _validate_features(self, X, reset: bool) -> np.ndarray:
        X = validate_data(self, X, reset=reset)
        if getattr(self, "weak_learner", None) == "lut":
            _check_lut_features(X, self.maximum_feature_value)
        return X

    @staticmethod
    def _positive_weights(sample_weight, n_samples: int) -> tuple[np.ndarray, np.ndarray]:
        """Validate ``sample_weight``; return the mask of samples with positive weight and their weights.

        The weights are rescaled to a mean of 1, so that integer weights give
        the same objective as repeating samples; zero-weight samples are
        dropped because they must not influence the model (not even through
        the thresholds they would add between distinct feature values).
        """
        if sample_weight is None:
            return np.ones(n_samples, dtype=bool), np.ones(n_samples)
        weights = np.asarray(sample_weight)
        if weights.dtype == object or not (np.issubdtype(weights.dtype, np.number) or weights.dtype == bool):
            raise InvalidTypeError(f"sample_weight: expected numbers, got dtype {weights.dtype}")
        weights = weights.astype(np.float64)
        if weights.ndim == 0:
            weights = np.full(n_samples, float(weights))
        if weights.shape != (n_samples,):
            raise InvalidValueError(f"sample_weight: expected shape ({n_samples},), got {weights.shape}")
        if not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise InvalidValueError("sample_weight: must be finite and non-negative")
        kept = weights > 0
        if not kept.any():
            raise InvalidValueError("sample_weight: every weight is zero")
        weights = weights[kept]
        return kept, weights * (weights.size / weights.sum())

    def _base_metadata(self) -> dict[str, Any]:
        metadata: dict[str, Any] = {
            ESTIMATOR_KEY: type(self).__name__,
            "params": {key: _json_value(value) for key, value in self.get_params(deep=False).items()},
            "n_features_in": int(self.n_features_in_),
        }
        if hasattr(self, "feature_names_in_"):
            metadata["feature_names_in"] = [str(name) for name in self.feature_names_in_]
        return metadata

    def _restore(self, machine: BoostedMachine, metadata: dict[str, Any]) -> None:
        """Set the fitted attributes from a loaded machine (overridden by classifiers)."""
        self.machine_ = machine
        self.n_features_in_ = int(metadata["n_features_in"])
        if "feature_names_in" in metadata:
            self.feature_names_in_ = np.asarray(metadata["feature_names_in"], dtype=object)

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
        estimator = load_estimator(path)
        if not isinstance(estimator, cls):
            raise ModelFormatError(f"{os.fspath(path)}: holds a {type(estimator).__name__}, not a {cls.__name__}")
        return estimator


def _check_lut_features(X: np.ndarray, maximum_feature_value: int) -> None:
    """Raise a ValueError unless every value is an integer in ``[0, maximum_feature_value)``."""
    try:
        check_discrete(X, maximum_feature_value, "X")
    except ValueError as error:
        raise InvalidValueError(f"{error}; weak_learner='lut' needs integer features in [0, maximum_feature_value="
                                f"{maximum_feature_value}). Quantise the features first, e.g. with "
                         "sklearn.preprocessing.KBinsDiscretizer(n_bins=..., encode='ordinal') in a pipeline."
                         ) from None


def _check_splittable(X: np.ndarray) -> None:
    """Raise a ValueError if no stump can split ``X`` (every feature constant)."""
    if np.all(X == X[0]):
        raise InvalidValueError("X: every feature is constant over the training samples (with positive weight), "
                                "so no decision stump can split them")


class _BoostedClassifier(ClassifierMixin, _BoostedEstimator):
    """Label encoding and score -> label decisions shared by the classifiers."""

    def _encode_labels(self, y, kept: np.ndarray) -> np.ndarray:
        """Set ``classes_`` and return the class index of every sample."""
        check_classification_targets(y)
        self._encoding = ClassEncoding.fit(y, name="y")
        self.classes_ = np.array(self._encoding.classes)
        encoded = self._encoding.encode(y, "y")
        weighted_classes = np.unique(encoded[kept])
        if weighted_classes.size != self.classes_.size:
            missing = np.setdiff1d(np.arange(self.classes_.size), weighted_classes)
            raise InvalidValueError(f"sample_weight: class {self.classes_[missing[:1]].tolist()[0]!r} has no sample "
                                    "with positive weight; every class in y needs some weight")
        return encoded

    def _classifier_metadata(self) -> dict[str, Any]:
        metadata = self._base_metadata()
        metadata.update(self._encoding.to_metadata())
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
        scores = self._machine_scores(X)
        if self.machine_.cost_matrix is not None:
            scores = -(scores @ cost_star(self.machine_.cost_matrix).T)
            if self.classes_.size == 2:
                # ties (equal costs) give 0, i.e. classes_[0], as the machine's argmin does
                return scores[:, 1] - scores[:, 0]
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X) -> np.ndarray:
        """Predicted class labels (elements of ``classes_``): the machine's decision, as its ``predict``."""
        scores = self._machine_scores(X)
        return self.classes_[self.machine_.class_indices_from_scores(scores)]

    def _machine_scores(self, X) -> np.ndarray:
        """(#samples, #outputs) scores of the fitted machine for validated ``X``."""
        check_is_fitted(self)
        return self.machine_.decision_scores(self._validate_features(X, reset=False))


class BoostingClassifier(_BoostedClassifier):
    """Gradient boosting of decision stumps or look-up tables with a classification loss.

    Two classes are learned as targets -1 (``classes_[0]``) / +1
    (``classes_[1]``) with one output. More classes need
    ``weak_learner='lut'``: a multi-variate LUT machine with one output per
    class is trained one-vs-rest (targets +1 for the class, -1 for the
    others) and predicts the class of the largest score. For multi-class
    stumps use :class:`sklearn.multiclass.OneVsRestClassifier` around this
    estimator.

    Parameters
    ----------
    loss : {"exponential", "logit", "tangential"}
        The loss minimised (exponential: discrete AdaBoost; logit: logistic
        regression; tangential: TangentBoost, robust to label noise).
    weak_learner : {"stump", "lut"}
        Decision stumps on real features, or look-up tables on integer
        features in ``[0, maximum_feature_value)``.
    n_estimators : int
        Maximum number of boosting rounds; training stops earlier when a
        round's optimal weight is zero.
    maximum_feature_value : int
        Number of LUT entries (only for ``weak_learner='lut'``).
    selection_style : {"independent", "shared"}
        Multi-class LUTs only: one feature per class, or one feature shared
        by all classes each round.

    Attributes
    ----------
    classes_ : numpy.ndarray
        The class labels.
    machine_ : bob_boost.BoostedMachine
        The trained machine; its scores are :meth:`decision_function`'s.
    n_features_in_ : int
        Number of features seen during :meth:`fit`.
    feature_names_in_ : numpy.ndarray
        Feature names, when ``X`` had string column names.

    Notes
    -----
    The machine has no intercept (as in bob.learn.boosting), so the saved
    model means the same to every bob_boost tool. If every feature is
    constant over the training samples no stump can be trained, and
    :meth:`fit` raises a ValueError instead of returning a model that
    ignores the data.
    """

    def __init__(self, loss: str = "exponential", weak_learner: str = "stump", n_estimators: int = 100,
                 maximum_feature_value: int = 256, selection_style: str = "independent") -> None:
        self.loss = loss
        self.weak_learner = weak_learner
        self.n_estimators = n_estimators
        self.maximum_feature_value = maximum_feature_value
        self.selection_style = selection_style

    def fit(self, X, y, sample_weight=None) -> "BoostingClassifier":
        """Train on ``X`` (#samples, #features) and labels ``y``.

        Parameters
        ----------
        X : array_like
            Training features.
        y : array_like
            (#samples,) class labels of any type.
        sample_weight : array_like, optional
            Non-negative per-sample weights of the loss; zero-weight samples
            are ignored.

        Returns
        -------
        BoostingClassifier
            ``self``.
        """
        _check_choice(self.loss, "loss", CLASSIFICATION_LOSSES)
        _check_choice(self.weak_learner, "weak_learner", WEAK_LEARNERS)
        _check_choice(self.selection_style, "selection_style", SELECTION_STYLES)
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        maximum = check_positive_int(self.maximum_feature_value, "maximum_feature_value", 2)
        X, y = validate_data(self, X, y)
        if self.weak_learner == "lut":
            _check_lut_features(X, maximum)
        kept, weights = self._positive_weights(sample_weight, X.shape[0])
        encoded = self._encode_labels(y, kept)
        n_classes = self.classes_.size
        if n_classes > 2 and self.weak_learner == "stump":
            raise InvalidValueError(
                f"Only binary classification is supported with weak_learner='stump' (y has {n_classes} classes); "
                "use weak_learner='lut', BAdaCostClassifier, or sklearn.multiclass.OneVsRestClassifier.")
        X, encoded = X[kept], encoded[kept]
        if self.weak_learner == "stump":
            _check_splittable(X)
        recipe = make_recipe("boosting", number_of_classes=n_classes, loss=self.loss,
                             weak_learner=self.weak_learner, lut_entries=maximum,
                             selection_style=self.selection_style)
        targets = self._encoding.targets(recipe.target_kind, encoded)
        self.machine_ = recipe.train(X, targets, rounds, sample_weight=weights)
        self.machine_.metadata.update(self._classifier_metadata())
        return self

    def _has_probabilities(self) -> bool:
        """Whether the loss defines class probabilities (see :meth:`predict_proba`)."""
        return self.loss in CLASSIFICATION_LOSSES and make_loss(self.loss).has_probabilities

    @available_if(_has_probabilities)
    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities implied by the loss (only for the logit and exponential losses).

        The score minimising the expected loss is ``log(p / (1 - p)) / c``
        with ``p = P(classes_[1] | x)``: ``c = 1`` for the logit loss (the
        negative log-likelihood of a logistic model) and ``c = 2`` for the
        exponential loss (Friedman, Hastie & Tibshirani, 2000), so
        ``p = sigmoid(c * score)``. With more classes every output is such a
        one-vs-rest estimate, and the estimates are normalised to sum to 1.
        Boosted scores tend to be over-confident; calibrate them (e.g. with
        :class:`sklearn.calibration.CalibratedClassifierCV`) where calibrated
        probabilities matter.

        Returns
        -------
        numpy.ndarray
            (#samples, #classes) probabilities, columns in ``classes_`` order.
        """
        return make_loss(self.loss).inverse_link(self._machine_scores(X))

    def __sklearn_tags__(self):
        """scikit-learn tags: multi-class only with LUTs."""
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = self.weak_learner != "stump"
        return tags


class BoostingRegressor(RegressorMixin, _BoostedEstimator):
    """Gradient boosting of decision stumps or look-up tables with the squared loss.

    The prediction is ``intercept_ + machine_(x)``: the intercept is the
    (weighted) mean of the training targets, the constant that minimises the
    squared loss, and the boosted machine is trained on the residuals
    ``y - intercept_``. Weak machines output +-1, so without it a target far
    from zero would take many rounds just to reach its level.

    Parameters
    ----------
    weak_learner : {"stump", "lut"}
        Decision stumps on real features, or look-up tables on integer
        features in ``[0, maximum_feature_value)``.
    n_estimators : int
        Maximum number of boosting rounds.
    maximum_feature_value : int
        Number of LUT entries (only for ``weak_learner='lut'``).

    Attributes
    ----------
    intercept_ : float
        Weighted mean of the training targets.
    machine_ : bob_boost.BoostedMachine
        The trained machine, predicting ``y - intercept_``.
    n_features_in_ : int
        Number of features seen during :meth:`fit`.
    feature_names_in_ : numpy.ndarray
        Feature names, when ``X`` had string column names.

    Notes
    -----
    When every feature is constant over the training samples no stump can
    split them, and the model is the intercept alone (an empty machine).
    """

    def __init__(self, weak_learner: str = "stump", n_estimators: int = 100,
                 maximum_feature_value: int = 256) -> None:
        self.weak_learner = weak_learner
        self.n_estimators = n_estimators
        self.maximum_feature_value = maximum_feature_value

    def fit(self, X, y, sample_weight=None) -> "BoostingRegressor":
        """Train on ``X`` (#samples, #features) and real targets ``y`` (#samples,).

        Parameters
        ----------
        X : array_like
            Training features.
        y : array_like
            (#samples,) real targets.
        sample_weight : array_like, optional
            Non-negative per-sample weights of the loss; zero-weight samples
            are ignored.

        Returns
        -------
        BoostingRegressor
            ``self``.
        """
        _check_choice(self.weak_learner, "weak_learner", WEAK_LEARNERS)
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        maximum = check_positive_int(self.maximum_feature_value, "maximum_feature_value", 2)
        X, y = validate_data(self, X, y, y_numeric=True)
        if self.weak_learner == "lut":
            _check_lut_features(X, maximum)
        kept, weights = self._positive_weights(sample_weight, X.shape[0])
        X, y = X[kept], y[kept].astype(np.float64)
        if self.weak_learner == "lut" or not np.all(X == X[0]):
            recipe = make_recipe("boosting", number_of_classes=None, loss=SquaredLoss.name,
                                 weak_learner=self.weak_learner, lut_entries=maximum)
            self.machine_ = recipe.train(X, y, rounds, sample_weight=weights)  # the intercept is its baseline
        else:
            self.machine_ = BoostedMachine(number_of_outputs=1, number_of_features=X.shape[1],
                                           decision_rule="identity", baseline=np.average(y, weights=weights))
        self.intercept_ = float(self.machine_.baseline[0])
        metadata = self._base_metadata()
        metadata.update(REGRESSION_METADATA, loss=SquaredLoss.name)
        self.machine_.metadata.update(metadata)
        return self

    def _restore(self, machine: BoostedMachine, metadata: dict[str, Any]) -> None:
        super()._restore(machine, metadata)
        if machine.is_classifier:
            raise InvalidValueError(f"the machine predicts classes (decision rule {machine.decision_rule!r})")
        self.intercept_ = float(machine.baseline[0])

    def predict(self, X) -> np.ndarray:
        """Predicted targets, (#samples,): the machine's scores, intercept included."""
        check_is_fitted(self)
        return self.machine_.decision_scores(self._validate_features(X, reset=False))[:, 0]


class AdaBoostDBClassifier(_BoostedClassifier):
    """Cost-sensitive binary boosting of decision stumps with AdaBoostDB.

    AdaBoostDB (Landesa-Vazquez & Alba-Castro, "Double-Base Asymmetric
    AdaBoost") minimises the class-dependent exponential bound
    ``sum_n D(n) exp(-C_t t_n F(x_n))`` over the pool of all stumps, with
    targets ``t = +1`` for ``classes_[1]`` (the positive class) and ``-1``
    for ``classes_[0]``. See
    :class:`bob_boost.trainers.cost_sensitive.AdaBoostDBTrainer`.

    Parameters
    ----------
    cost_positive : float
        ``C_P`` > 0: the cost of a false negative (a ``classes_[1]`` sample
        predicted as ``classes_[0]``).
    cost_negative : float
        ``C_N`` > 0: the cost of a false positive.
    n_estimators : int
        Maximum number of stumps; training stops earlier when no stump
        lowers the bound or after a stump without training error.
    selection : {"alpha", "loss"}
        ``"alpha"``: the stump with the largest step (the paper's rule);
        ``"loss"``: the stump that lowers the bound most.

    Attributes
    ----------
    classes_ : numpy.ndarray
        The two class labels; ``classes_[1]`` is the positive class.
    machine_ : bob_boost.BoostedMachine
        The trained stumps; its scores are :meth:`decision_function`'s.
    n_features_in_ : int
        Number of features seen during :meth:`fit`.
    feature_names_in_ : numpy.ndarray
        Feature names, when ``X`` had string column names.

    Notes
    -----
    As in the paper, each class starts with half of the total weight
    whatever the class sizes; ``sample_weight`` distributes that half among
    the samples of the class. Asymmetry between the classes is the job of
    the costs. No ``predict_proba`` is offered: the scores estimate a
    cost-weighted and class-balanced odds, not the class probability.
    """

    def __init__(self, cost_positive: float = 1.0, cost_negative: float = 1.0, n_estimators: int = 100,
                 selection: str = "alpha") -> None:
        self.cost_positive = cost_positive
        self.cost_negative = cost_negative
        self.n_estimators = n_estimators
        self.selection = selection

    def fit(self, X, y, sample_weight=None) -> "AdaBoostDBClassifier":
        """Train on ``X`` (#samples, #features) and two-class labels ``y``.

        Parameters
        ----------
        X : array_like
            Training features.
        y : array_like
            (#samples,) labels of exactly two classes.
        sample_weight : array_like, optional
            Non-negative initial weights within each class; zero-weight
            samples are ignored.

        Returns
        -------
        AdaBoostDBClassifier
            ``self``.
        """
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        recipe = make_recipe("adaboostdb", number_of_classes=2, cost_positive=self.cost_positive,
                             cost_negative=self.cost_negative, selection=self.selection)
        X, y = validate_data(self, X, y)
        kept, weights = self._positive_weights(sample_weight, X.shape[0])
        encoded = self._encode_labels(y, kept)
        if self.classes_.size > 2:
            raise InvalidValueError(f"Only binary classification is supported by AdaBoostDB (y has "
                                    f"{self.classes_.size} classes); use BAdaCostClassifier for costs between "
                                    "several classes.")
        X, positive = X[kept], encoded[kept] == 1
        _check_splittable(X)
        initial = weights / np.where(positive, weights[positive].sum(), weights[~positive].sum())
        self.machine_ = recipe.train(X, self._encoding.targets(recipe.target_kind, encoded[kept]), rounds,
                                     sample_weight=initial)
        self.machine_.metadata.update(self._classifier_metadata())
        return self

    def __sklearn_tags__(self):
        """scikit-learn tags: a two-class estimator."""
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


class BAdaCostClassifier(_BoostedClassifier):
    """Cost-sensitive multi-class boosting of decision trees with BAdaCost.

    BAdaCost (Fernandez-Baldera, Buenaposada & Baumela, 2018) boosts
    cost-sensitive multi-class trees on the Cost-sensitive Multi-class
    Exponential Loss and predicts the class of least expected cost,
    ``argmin_k (C* f(x))_k``. See
    :class:`bob_boost.trainers.badacost.BAdaCostTrainer`.

    Parameters
    ----------
    cost_matrix : array_like, optional
        (K, K) costs in ``classes_`` order: ``cost_matrix[i, j]`` is the
        cost of predicting ``classes_[j]`` for a sample of ``classes_[i]``
        (zero diagonal, non-negative). Default: SAMME's matrix
        ``1/(K(K-1))`` off the diagonal, which makes BAdaCost SAMME.
    max_depth : int
        Depth of the trees.
    n_estimators : int
        Maximum number of trees; training stops earlier when a step is not positive.
    shrinkage : float
        Learning rate in (0, 1].
    feature_fraction : float
        Fraction in (0, 1] of the features each tree may use, drawn every round.
    random_state : None, int or numpy.random.RandomState
        Seed of the feature sampling (used only when ``feature_fraction < 1``).

    Attributes
    ----------
    classes_ : numpy.ndarray
        The class labels.
    machine_ : bob_boost.BoostedMachine
        The trained machine; it holds the cost matrix.
    n_features_in_ : int
        Number of features seen during :meth:`fit`.
    feature_names_in_ : numpy.ndarray
        Feature names, when ``X`` had string column names.

    Notes
    -----
    The trees search their splits on features quantised to 256 levels per
    feature (thresholds are stored in raw units). No ``sample_weight``: the
    trainer always starts from uniform weights. No ``predict_proba``: the
    cost-sensitive scores are not probability estimates.
    """

    def __init__(self, cost_matrix=None, max_depth: int = 2, n_estimators: int = 100, shrinkage: float = 1.0,
                 feature_fraction: float = 1.0, random_state=None) -> None:
        self.cost_matrix = cost_matrix
        self.max_depth = max_depth
        self.n_estimators = n_estimators
        self.shrinkage = shrinkage
        self.feature_fraction = feature_fraction
        self.random_state = random_state

    def fit(self, X, y) -> "BAdaCostClassifier":
        """Train on ``X`` (#samples, #features) and labels ``y``.

        Parameters
        ----------
        X : array_like
            Training features.
        y : array_like
            (#samples,) class labels of any type; with a ``cost_matrix``
            their number must match its size.

        Returns
        -------
        BAdaCostClassifier
            ``self``.
        """
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        tree = CostSensitiveTreeTrainer(max_depth=self.max_depth)
        X, y = validate_data(self, X, y)
        encoded = self._encode_labels(y, np.ones(X.shape[0], dtype=bool))
        n_classes = self.classes_.size
        if self.cost_matrix is None:
            matrix = samme_cost_matrix(n_classes)
        else:
            matrix = check_cost_matrix(self.cost_matrix)
            if matrix.shape[0] != n_classes:
                raise InvalidValueError(f"cost_matrix: is {matrix.shape[0]}x{matrix.shape[0]} but y has {n_classes} "
                                        f"classes {self.classes_.tolist()}")
        seed = self.random_state
        if seed is not None and not isinstance(seed, numbers.Integral):
            # the trainer takes an int seed; draw one from the caller's generator, as sklearn does
            seed = int(check_random_state(seed).randint(np.iinfo(np.int32).max))
        recipe = make_recipe("badacost", number_of_classes=n_classes, weak_learner="tree",
                             tree_depth=tree.max_depth, cost_matrix=matrix, number_of_rounds=rounds,
                             shrinkage=self.shrinkage, feature_fraction=self.feature_fraction, random_state=seed)
        self.machine_ = recipe.train(X, encoded, rounds)
        self.machine_.metadata.update(self._classifier_metadata())
        return self


_ESTIMATORS: dict[str, type[_BoostedEstimator]] = {
    cls.__name__: cls for cls in (BoostingClassifier, BoostingRegressor, AdaBoostDBClassifier, BAdaCostClassifier)}


def load_estimator(path: str | os.PathLike) -> _BoostedEstimator:
    """Read a fitted estimator from any bob_boost model file.

    A file written by an estimator's ``save`` gives back that estimator with
    its parameters. Any other model file (written by the command line, by
    :meth:`bob_boost.BoostedMachine.save` or by bob.learn.boosting) is
    adopted by :func:`estimator_from_machine`.

    Parameters
    ----------
    path : path-like
        An HDF5 model file.

    Returns
    -------
    estimator
        A fitted estimator whose ``predict`` gives the file's predictions.

    Raises
    ------
    bob_boost.ModelFormatError
        If the file holds no valid machine, or invalid estimator metadata.
    """
    machine = BoostedMachine.load(path)
    metadata = machine.metadata
    name = metadata.get(ESTIMATOR_KEY)
    try:
        if name is None:
            return estimator_from_machine(machine, source=os.fspath(path))
        if name not in _ESTIMATORS:
            raise ModelFormatError(f"{os.fspath(path)}: metadata {ESTIMATOR_KEY!r} names an unknown estimator "
                                   f"{name!r}")
        estimator = _ESTIMATORS[name](**metadata["params"])
        estimator._restore(machine, metadata)
    except ModelFormatError:
        raise
    except (KeyError, TypeError, ValueError) as error:
        raise ModelFormatError(f"{os.fspath(path)}: invalid {name or 'model'} metadata ({error!r})") from None
    return estimator


def estimator_from_machine(machine: BoostedMachine, source: str = "the machine") -> _BoostedEstimator:
    """Wrap a trained machine in the estimator that predicts as it does.

    A regression machine (decision rule ``"identity"``) becomes a
    :class:`BoostingRegressor`; a cost-sensitive multi-class machine a
    :class:`BAdaCostClassifier`; a machine of the double-base loss an
    :class:`AdaBoostDBClassifier`; any other classifier a
    :class:`BoostingClassifier`. Class labels come from the machine's
    metadata (:func:`bob_boost.labels.classes_of`), the parameters from what
    it records (loss, costs, number of rounds), so that refitting the
    estimator trains a similar model.

    Raises
    ------
    ValueError
        If the machine records neither its number of features nor reads any feature.
    bob_boost.ModelFormatError
        If its metadata names invalid classes.
    """
    metadata = machine.metadata
    n_features = machine.number_of_features
    if n_features is None:
        used = machine.feature_indices()
        if not used.size:
            raise InvalidValueError(f"{source}: the machine records no number of features and reads none")
        n_features = int(used[-1]) + 1
    rounds = max(len(machine), 1)
    lut = any(isinstance(weak, LUTMachine) for weak in machine.weak_machines)
    weak_learner = "lut" if lut else "stump"
    entries = max((weak.look_up_tables.shape[0] for weak in machine.weak_machines if isinstance(weak, LUTMachine)),
                  default=256)
    if not machine.is_classifier:
        estimator = BoostingRegressor(weak_learner=weak_learner, n_estimators=rounds, maximum_feature_value=entries)
        estimator.intercept_ = float(machine.baseline[0])
    elif machine.cost_matrix is not None:
        estimator = BAdaCostClassifier(cost_matrix=machine.cost_matrix.tolist(), n_estimators=rounds)
    elif metadata.get("loss") == "double_base":
        estimator = AdaBoostDBClassifier(cost_positive=float(metadata.get("cost_positive", 1.0)),
                                         cost_negative=float(metadata.get("cost_negative", 1.0)),
                                         n_estimators=rounds)
    else:
        loss = metadata.get("loss")
        estimator = BoostingClassifier(loss=loss if loss in CLASSIFICATION_LOSSES else "exponential",
                                       weak_learner=weak_learner, n_estimators=rounds, maximum_feature_value=entries)
    if machine.is_classifier:
        estimator.classes_ = np.array(classes_of(machine, source).classes)
    estimator.machine_ = machine
    estimator.n_features_in_ = n_features
    return estimator
