"""The multinomial cross-entropy (softmax) loss of gradient-boosted multi-class trees."""
from __future__ import annotations

import numba
import numpy as np
from scipy.special import logsumexp

from .._validation import as_score_matrix
from ..exceptions import InvalidValueError
from .base import SHARE_LIMIT, LossFunction, weighted


_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}


#: Empty arrays: "not asked for" to the kernels, which need arrays of one type whatever the call.
_NO_ROWS, _NO_MATRIX = np.empty(0), np.empty((0, 0))


@numba.njit(**_JIT)
def _shift_rows(scores: np.ndarray, shifted: np.ndarray, targets: np.ndarray, offsets: np.ndarray) -> None:
    """Each row minus its largest score (so that no exponential overflows); with ``offsets`` (not empty),
    also each row's ``max_k s_k - sum_k t_k s_k``, the loss without its ``log(sum_k exp(s_k - max))``."""
    rows, classes = scores.shape
    for i in range(rows):
        largest = scores[i, 0]
        for k in range(1, classes):
            largest = max(largest, scores[i, k])
        for k in range(classes):
            shifted[i, k] = scores[i, k] - largest
        if offsets.size:
            dot = 0.0
            for k in range(classes):
                dot += targets[i, k] * scores[i, k]
            offsets[i] = largest - dot


@numba.njit(**_JIT)
def _normalise_rows(exponentials: np.ndarray, targets: np.ndarray, probabilities: np.ndarray,
                    hessian: np.ndarray, derivatives: bool, offsets: np.ndarray, losses: np.ndarray) -> None:
    """``p`` = each row of ``exponentials`` over its sum; with ``derivatives``, ``p - targets`` and ``p (1 - p)``;
    with ``losses`` (not empty), each row's loss ``offsets + log(sum)``."""
    rows, classes = exponentials.shape
    for i in range(rows):
        total = 0.0
        for k in range(classes):
            total += exponentials[i, k]
        if losses.size:
            losses[i, 0] = offsets[i] + np.log(total)
            if not derivatives:
                continue
        for k in range(classes):
            p = exponentials[i, k] / total
            if derivatives:
                probabilities[i, k] = p - targets[i, k]
                hessian[i, k] = p * (1.0 - p)
            else:
                probabilities[i, k] = p


def _exponentials(scores: np.ndarray, targets: np.ndarray = _NO_MATRIX,
                  offsets: np.ndarray = _NO_ROWS) -> np.ndarray:
    """``exp(s - max_k s_k)`` per row of (#samples, K) scores (numpy's vectorised exponential, in place), and
    the rows' loss offsets into ``offsets`` when it is not empty."""
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    if scores.ndim != 2:
        raise InvalidValueError(f"scores: expected (#samples, K) scores, got shape {scores.shape}")
    shifted = np.empty_like(scores)
    _shift_rows(scores, shifted, targets, offsets)
    return np.exp(shifted, out=shifted)


def _softmax(scores: np.ndarray) -> np.ndarray:
    """Row-wise softmax of (#samples, K) scores."""
    exponentials = _exponentials(scores)
    _normalise_rows(exponentials, exponentials, exponentials, exponentials, False, _NO_ROWS, _NO_MATRIX)
    return exponentials


def _checked_targets(targets: np.ndarray, scores: np.ndarray) -> np.ndarray:
    targets = np.ascontiguousarray(targets, dtype=np.float64)
    if targets.shape != np.shape(scores) or targets.ndim != 2:
        raise InvalidValueError(f"targets: shape {targets.shape} does not match the (#samples, K) scores' "
                                f"{np.shape(scores)}")
    return targets


def _derivatives(targets: np.ndarray, scores: np.ndarray,
                 losses: np.ndarray = _NO_MATRIX) -> tuple[np.ndarray, np.ndarray]:
    """``softmax(s) - t`` and ``p (1 - p)``, from one exponential per entry (and each row's loss into
    ``losses``, when it is not empty, from the same two passes)."""
    targets = _checked_targets(targets, scores)
    offsets = np.empty(targets.shape[0]) if losses.size else _NO_ROWS
    exponentials = _exponentials(scores, targets, offsets)
    hessian = np.empty_like(exponentials)
    _normalise_rows(exponentials, targets, exponentials, hessian, True, offsets, losses)
    return exponentials, hessian


def _losses(targets: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """(#samples, 1) losses, by the same passes and arithmetic as :func:`_derivatives` gives them."""
    targets = _checked_targets(targets, scores)
    offsets, losses = np.empty(targets.shape[0]), np.empty((targets.shape[0], 1))
    exponentials = _exponentials(scores, targets, offsets)
    _normalise_rows(exponentials, targets, exponentials, exponentials, False, offsets, losses)
    return losses


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
    convex = True
    row_separable = True
    #: The hessian ``diag(p) - p p^T`` has no eigenvalue above 1/2.
    curvature = 0.5
    #: 2 threads gained from 16,384 rows of 4 classes (0.32 -> 0.20 ms; 50,000 rows: 1.02 -> 0.58 ms).
    derivative_steps = 16

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

    def baseline(self, targets: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """(K,) the log of each class's weighted share of the one-hot ``targets`` (clipped to
        :data:`~bob_boost.losses.base.SHARE_LIMIT`), less their mean: the softmax of the constant is the
        weighted class prior, and the mean is subtracted because the loss is the same for scores shifted
        by a constant."""
        weights = np.ones(targets.shape[0]) if sample_weight is None else np.asarray(sample_weight, np.float64)
        logs = np.log(np.maximum(weights @ targets / np.sum(weights), SHARE_LIMIT))
        return logs - np.mean(logs)

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
        """(#samples, 1) ``logsumexp(s) - sum_k t_k s_k`` (numpy's exponential between two compiled passes)."""
        return weighted(_losses(targets, scores), sample_weight)

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray,
                      sample_weight: np.ndarray | None = None) -> np.ndarray:
        """``softmax(s) - t``."""
        return weighted(_derivatives(targets, scores)[0], sample_weight)

    def loss_hessian(self, targets: np.ndarray, scores: np.ndarray,
                     sample_weight: np.ndarray | None = None) -> np.ndarray:
        """The diagonal ``p_k (1 - p_k)`` of the Hessian, ``p = softmax(s)``."""
        return weighted(_derivatives(targets, scores)[1], sample_weight)

    def gradient_and_hessian(self, targets: np.ndarray, scores: np.ndarray,
                             sample_weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`loss_gradient` and :meth:`loss_hessian` from one softmax."""
        gradient, hessian = _derivatives(targets, scores)
        return weighted(gradient, sample_weight), weighted(hessian, sample_weight)

    def loss_and_gradient(self, targets: np.ndarray, scores: np.ndarray,
                          sample_weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The loss and gradient the L-BFGS weight search minimises: the loss as ``logsumexp(s) - t . s``
        (scipy's), the arithmetic its searches have always used, so that the weights of machines trained with
        L-BFGS steps stay bit for bit; :meth:`loss` agrees with it to rounding."""
        values = logsumexp(scores, axis=1, keepdims=True) - np.sum(targets * scores, axis=1, keepdims=True)
        return weighted(values, sample_weight), self.loss_gradient(targets, scores, sample_weight)

    def loss_and_derivatives(self, targets: np.ndarray,
                             scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`loss`, :meth:`loss_gradient` and :meth:`loss_hessian` from one softmax (the same bits)."""
        losses = np.empty((np.shape(scores)[0], 1))
        gradient, hessian = _derivatives(targets, scores, losses)
        return losses, gradient, hessian

    def __repr__(self) -> str:
        return "SoftmaxLoss()" if self.number_of_classes is None else f"SoftmaxLoss({self.number_of_classes})"
