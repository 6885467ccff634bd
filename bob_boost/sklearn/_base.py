"""What every estimator shares: feature and weight checks, label encoding, decisions and persistence."""
from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from ..costs import cost_star
from ..exceptions import InvalidTypeError, InvalidValueError, ModelFormatError
from ..labels import ClassEncoding, classes_of
from ..losses import LossFunction
from ..machine import BoostedMachine
from .. import recipes
from .._validation import check_sample_weight
from ..registry import loss_class
from ..weak.lut import check_discrete
from ._compat import BaseEstimator, ClassifierMixin, check_classification_targets, check_is_fitted, validate_data

#: Key of the machine's metadata that names the estimator class.
ESTIMATOR_KEY = "sklearn_estimator"

#: The ``loss`` choices of :class:`BoostingClassifier` (:data:`bob_boost.recipes.CLASSIFICATION_LOSSES`).
CLASSIFICATION_LOSSES: dict[str, type[LossFunction]] = {
    name: loss_class(name) for name in recipes.CLASSIFICATION_LOSSES}
WEAK_LEARNERS = ("stump", "lut", "tree")


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

        Zero-weight samples are dropped because they must not influence the
        model (not even through the thresholds they would add between
        distinct feature values); the trainers rescale the others to a mean
        of 1, so that integer weights give the same objective as repeating
        samples.
        """
        if sample_weight is None:
            return np.ones(n_samples, dtype=bool), np.ones(n_samples)
        weights = check_sample_weight(sample_weight, n_samples)
        kept = weights > 0
        return kept, weights[kept]

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
        from .persistence import load_estimator  # the estimator classes live below this module

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
