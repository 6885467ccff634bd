"""What the classifiers share: label encoding, class weights, multi-label indicators, and the decisions,
probabilities and staged predictions they make from the machine's scores."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..costs import cost_star
from ..exceptions import InvalidValueError
from ..labels import ClassEncoding, classes_of
from ..machine import BoostedMachine
from ._base import _BoostedEstimator
from ._compat import ClassifierMixin, available_if, check_classification_targets, check_is_fitted


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


def _refuse_constant() -> None:
    """Raise the ValueError of features that no stump can split (every feature constant)."""
    raise InvalidValueError("X: every feature is constant over the training samples (with positive weight), so no "
                            "decision stump can split them")


def _offers_probabilities(estimator) -> bool:
    """``available_if`` check: whether the estimator offers probabilities."""
    return estimator._has_probabilities()


class _BoostedClassifier(ClassifierMixin, _BoostedEstimator):
    """Label encoding, class weights and score -> label decisions shared by the classifiers."""

    def _encoded_rows(self, data, X, y, sample_weight, *aligned) -> tuple:
        """Set ``classes_`` from ``y``; return ``(X, class indices, y, weights, index, *aligned)`` of the samples
        with positive weight (:meth:`FitData.positive`), each weighed by ``sample_weight`` times its class's
        ``class_weight`` (for an estimator that has the parameter); ``aligned`` are further row arrays of the data
        (:meth:`FitData.aligned`), kept where the samples are.

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
        weights, index, (X, encoded, y, *aligned) = data.positive(weights, X, encoded, y, *aligned)
        if weights is not None:
            weighted = data.sums(encoded, None, self.classes_.size)
            if np.any(weighted == 0):
                missing = self.classes_[np.flatnonzero(weighted == 0)[:1]].tolist()[0]
                raise InvalidValueError(f"sample_weight: class {missing!r} has no sample with positive weight; "
                                        "every class in y needs some weight")
        return (X, encoded, y, weights, index, *aligned)

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
        elif self.classes_.size == 2 and scores.shape[1] == 2 and self.machine_.decision_rule == "argmax":
            # an output per class: the second's less the first's (a tie is classes_[0], as argmax gives)
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
        the scores without cost matrix); ``("softmax",)``: a softmax of the scores (``("softmax", c)``: of
        ``c * scores``);
        ``("sigmoid", c, K)``: ``sigmoid(c * scores)`` (``("sigmoid", c, K, d)``: ``sigmoid(c * scores + d)``),
        as ``[1 - p, p]`` for one output, else
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


class _TwoClassClassifier(_BoostedClassifier):
    """A classifier of two classes whose probability of ``classes_[1]`` is ``sigmoid(c F + d)`` of its one score
    ``F``, as its :meth:`_probability_link` ``("sigmoid", c, 1[, d])`` says."""

    def _encoded_two_class_rows(self, data, X, y, sample_weight, name: str, instead: str = "") -> tuple:
        """:meth:`_encoded_rows` of labels of exactly two classes (``name`` the algorithm, ``instead`` what to use
        for more, in the error)."""
        rows = self._encoded_rows(data, X, y, sample_weight)
        if self.classes_.size != 2:
            raise InvalidValueError(f"Only binary classification is supported by {name} (y has {self.classes_.size} "
                                    f"classes){'; ' + instead if instead else ''}")
        return rows

    def _proba_from_scores(self, scores: np.ndarray) -> np.ndarray:
        _, scale, _, *offset = self._probability_link()
        positive = 1.0 / (1.0 + np.exp(-(scale * scores[:, 0] + (offset[0] if offset else 0.0))))
        return np.column_stack([1.0 - positive, positive])

    def __sklearn_tags__(self):
        """scikit-learn tags: a two-class estimator."""
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags
