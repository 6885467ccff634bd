"""The multinomial cross-entropy (softmax) loss of gradient-boosted multi-class trees."""
from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from .._validation import as_score_matrix
from ..exceptions import InvalidValueError
from .base import LossFunction, weighted


def _softmax(scores: np.ndarray) -> np.ndarray:
    """Row-wise softmax, shifted by each row's largest score so that no exponential overflows."""
    shifted = np.exp(scores - scores.max(axis=1, keepdims=True))
    shifted /= shifted.sum(axis=1, keepdims=True)
    return shifted


class SoftmaxLoss(LossFunction):
    """``L(l, s) = log(sum_k exp(s_k)) - s_l`` for a sample of class ``l`` and scores ``s`` (K outputs).

    The negative log-likelihood of the model ``p_k = softmax(s)_k``. Targets
    are class labels ``0 .. K-1`` (:meth:`check_targets` turns them into
    one-hot rows); machines predict the class of the largest score and the
    estimators' ``predict_proba`` is the softmax of the scores. Computed with
    log-sum-exp, so scores of any size give finite values.

    Parameters
    ----------
    number_of_classes : int, optional
        K; by default the number of classes in the training labels, which
        must then each occur at least once.
    """

    name = "softmax"

    def __init__(self, number_of_classes: int | None = None) -> None:
        if number_of_classes is not None and (isinstance(number_of_classes, bool)
                                              or not isinstance(number_of_classes, (int, np.integer))
                                              or number_of_classes < 2):
            raise InvalidValueError(f"number_of_classes: must be None or an integer >= 2, got {number_of_classes!r}")
        self.number_of_classes = None if number_of_classes is None else int(number_of_classes)

    def decision_rule(self, number_of_outputs: int) -> str:
        """``"argmax"``: the class of the largest score."""
        return "argmax"

    @property
    def has_probabilities(self) -> bool:
        """True: :meth:`inverse_link` is the softmax."""
        return True

    def inverse_link(self, scores: np.ndarray) -> np.ndarray:
        """Class probabilities ``softmax(scores)`` per row."""
        return _softmax(np.asarray(scores, dtype=np.float64))

    def check_targets(self, targets) -> np.ndarray:
        """Turn (#samples,) labels ``0 .. K-1`` into (#samples, K) one-hot rows (or check one-hot rows).

        Raises
        ------
        InvalidValueError
            For labels that are not integers in ``0 .. K-1``, a class without
            samples, or rows that are not one-hot.
        """
        labels, classes = self._labels(targets)
        missing = np.flatnonzero(np.bincount(labels, minlength=classes) == 0)
        if missing.size:
            raise InvalidValueError(f"targets: class {missing[0]} has no sample (classes 0 .. {classes - 1})")
        return np.eye(classes)[labels]

    def check_chunk_targets(self, targets) -> np.ndarray:
        """:meth:`check_targets` of one chunk of the training targets: a chunk need not hold every class.

        Raises
        ------
        InvalidValueError
            As :meth:`check_targets`, except for a class without samples; and
            without ``number_of_classes``, which a chunk cannot tell.
        """
        if self.number_of_classes is None:
            raise InvalidValueError("targets: SoftmaxLoss() counts the classes of its labels, which one chunk "
                                    "cannot; give SoftmaxLoss(number_of_classes)")
        labels, classes = self._labels(targets)
        return np.eye(classes)[labels]

    def _labels(self, targets) -> tuple[np.ndarray, int]:
        """The class index of every sample, and K (checked)."""
        array = np.asarray(targets)
        if array.ndim == 2 and array.shape[1] > 1:
            rows = as_score_matrix(array, "targets")
            if not (np.all((rows == 0) | (rows == 1)) and np.all(rows.sum(axis=1) == 1)):
                raise InvalidValueError("targets: (#samples, K) targets of the softmax loss must be one-hot rows")
            if self.number_of_classes is not None and rows.shape[1] != self.number_of_classes:
                raise InvalidValueError(f"targets: {rows.shape[1]} one-hot columns, for "
                                        f"{self.number_of_classes} classes")
            return np.argmax(rows, axis=1), rows.shape[1]
        values = array.reshape(-1) if array.ndim == 2 else array
        if values.ndim != 1 or values.size == 0 or not np.all(np.isfinite(values.astype(np.float64))):
            raise InvalidValueError(f"targets: expected (#samples,) class labels, got shape {array.shape}")
        if not np.all(values == np.round(values)) or values.min() < 0:
            raise InvalidValueError("targets: class labels of the softmax loss must be integers 0 .. K-1")
        labels = values.astype(np.int64)
        classes = self.number_of_classes or int(labels.max()) + 1
        if classes < 2:
            raise InvalidValueError("targets: the softmax loss needs at least two classes")
        if labels.max() >= classes:
            raise InvalidValueError(f"targets: class label {labels.max()} is outside 0 .. {classes - 1}")
        return labels, classes

    def loss(self, targets: np.ndarray, scores: np.ndarray,
             sample_weight: np.ndarray | None = None) -> np.ndarray:
        """(#samples, 1) ``logsumexp(s) - sum_k t_k s_k``."""
        values = logsumexp(scores, axis=1, keepdims=True) - np.sum(targets * scores, axis=1, keepdims=True)
        return weighted(values, sample_weight)

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray,
                      sample_weight: np.ndarray | None = None) -> np.ndarray:
        """``softmax(s) - t``."""
        return weighted(_softmax(scores) - targets, sample_weight)

    def loss_hessian(self, targets: np.ndarray, scores: np.ndarray,
                     sample_weight: np.ndarray | None = None) -> np.ndarray:
        """The diagonal ``p_k (1 - p_k)`` of the Hessian, ``p = softmax(s)``."""
        probabilities = _softmax(scores)
        return weighted(probabilities * (1.0 - probabilities), sample_weight)

    def gradient_and_hessian(self, targets: np.ndarray, scores: np.ndarray,
                             sample_weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`loss_gradient` and :meth:`loss_hessian` from one softmax."""
        probabilities = _softmax(scores)
        return (weighted(probabilities - targets, sample_weight),
                weighted(probabilities * (1.0 - probabilities), sample_weight))

    def __repr__(self) -> str:
        return "SoftmaxLoss()" if self.number_of_classes is None else f"SoftmaxLoss({self.number_of_classes})"
