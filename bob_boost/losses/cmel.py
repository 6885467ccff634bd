"""The Cost-sensitive Multi-class Exponential Loss (CMEL) of BAdaCost, with class or example-dependent costs."""
from __future__ import annotations

import numpy as np

from ..costs import check_class_labels, check_cost_matrix, check_sample_costs, cost_star, margin_vectors
from ..exceptions import InvalidTypeError, InvalidValueError
from ..registry import register_loss
from .base import LossFunction, weighted
from .exponential import EXPONENT_LIMIT


@register_loss
class CMELoss(LossFunction):
    """``L(l, f) = exp(C*[l, :] @ f)`` for a sample of class ``l`` and score vector ``f``.

    ``C*`` is the cost matrix with its diagonal replaced by minus its row
    sums (:func:`bob_boost.machine.cost_star`). The loss couples the K
    outputs, so :meth:`loss` returns one column. Machines trained with it by
    :class:`~bob_boost.trainers.Boosting` receive :attr:`cost_matrix` and
    predict ``argmin_k (C* f(x))_k``; the matrix is saved with the model.

    Targets are class labels: :meth:`check_targets` takes a (#samples,)
    integer array with values in ``0 .. K-1`` and returns the matching
    (#samples, K) margin vectors (1 at the label, ``-1/(K-1)`` elsewhere),
    which is the form the generic trainer passes to :meth:`loss`; those
    margin vectors are accepted again as targets.

    Parameters
    ----------
    cost_matrix : array_like
        (K, K) non-negative matrix with a zero diagonal; ``C[i, j]`` is the
        cost of predicting ``j`` for class ``i``.
    """

    name = "cmel"
    convex = True

    def __init__(self, cost_matrix) -> None:
        matrix = check_cost_matrix(cost_matrix)
        matrix.setflags(write=False)
        self.cost_matrix = matrix
        self._cost_star = cost_star(matrix)
        self._margin_vectors = margin_vectors(matrix.shape[0])

    def decision_rule(self, number_of_outputs: int) -> str:
        """``"cost_sensitive"``: the class of least expected cost ``argmin_k (C* f)_k``."""
        return "cost_sensitive"

    @property
    def number_of_classes(self) -> int:
        """K."""
        return self.cost_matrix.shape[0]

    def check_targets(self, targets) -> np.ndarray:
        """Turn (#samples,) class labels into (#samples, K) margin vectors.

        (#samples, K) arrays must already be exact margin vectors.

        Raises
        ------
        ValueError
            For labels outside ``0 .. K-1``, non-integer labels, or 2-D
            targets that are not margin vectors.
        """
        array = np.asarray(targets)
        if array.ndim == 2:
            if array.shape[1] != self.number_of_classes or array.shape[0] == 0:
                raise InvalidValueError(f"targets: 2-D targets must be (#samples, {self.number_of_classes}) margin "
                                        f"vectors, got shape {array.shape}")
            if array.dtype == object or not np.issubdtype(array.dtype, np.number):
                raise InvalidTypeError(f"targets: expected a numeric array, got dtype {array.dtype}")
            labels = np.argmax(array, axis=1)
            if not np.array_equal(array, self._margin_vectors[labels]):
                raise InvalidValueError("targets: 2-D targets must be margin vectors (1 at the class, -1/(K-1) "
                                        "elsewhere); pass (#samples,) class labels instead")
            return self._margin_vectors[labels]
        return self._margin_vectors[check_class_labels(array, self.number_of_classes, "targets")]

    def _labels(self, targets: np.ndarray) -> np.ndarray:
        """Class of each margin-vector target (its largest entry)."""
        return np.argmax(targets, axis=1)

    def loss(self, targets: np.ndarray, scores: np.ndarray,
             sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Return ``exp(C*[l_n, :] @ f(x_n))`` as a (#samples, 1) array."""
        margin = np.sum(self._cost_star[self._labels(targets)] * scores, axis=1, keepdims=True)
        return weighted(np.exp(np.minimum(margin, EXPONENT_LIMIT)), sample_weight)

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray,
                      sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Return ``C*[l_n, :] * exp(C*[l_n, :] @ f(x_n))``, shape (#samples, K)."""
        rows = self._cost_star[self._labels(targets)]
        margin = np.sum(rows * scores, axis=1, keepdims=True)
        return weighted(rows * np.exp(np.minimum(margin, EXPONENT_LIMIT)), sample_weight)

    def loss_hessian(self, targets: np.ndarray, scores: np.ndarray,
                     sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Return the diagonal ``C*[l_n, k]**2 * exp(C*[l_n, :] @ f(x_n))`` of the rank-one Hessian."""
        rows = self._cost_star[self._labels(targets)]
        margin = np.sum(rows * scores, axis=1, keepdims=True)
        return weighted(rows * rows * np.exp(np.minimum(margin, EXPONENT_LIMIT)), sample_weight)

    def __repr__(self) -> str:
        return f"CMELoss(cost_matrix={self.cost_matrix.tolist()})"


class SampleCostCMELoss(LossFunction):
    """CMEL with example-dependent costs: ``L_n(f) = exp(c*_n @ f)`` for each sample's own cost row.

    ``c*_n`` is sample ``n``'s cost row (the cost of predicting each class for it, zero at its class ``l_n``)
    with minus the row's sum at ``l_n``; :meth:`targets` makes these rows from class labels and costs, and they
    are the loss's targets, so the generic trainer (:class:`~bob_boost.Boosting`) and its row blocks need
    nothing else. With every sample's row its class's row of ``cost_matrix`` the targets are
    :class:`CMELoss`'s rows and the training is the same. New samples have no costs: the machines predict
    with ``cost_matrix`` (e.g. the class means of the rows, :func:`bob_boost.costs.class_mean_costs`).

    Parameters
    ----------
    cost_matrix : array_like
        (K, K) class costs the trained machines predict with.
    """

    name = "cmel_sample_costs"
    convex = True
    row_separable = True

    def __init__(self, cost_matrix) -> None:
        matrix = check_cost_matrix(cost_matrix)
        matrix.setflags(write=False)
        self.cost_matrix = matrix

    @staticmethod
    def targets(labels, sample_costs, number_of_classes: int) -> np.ndarray:
        """The (#samples, K) rows ``c*_n`` of class ``labels`` and ``sample_costs`` ((#samples, K) rows or
        (#samples, K, K) matrices, as :func:`bob_boost.costs.check_sample_costs` takes them)."""
        classes = check_class_labels(labels, number_of_classes)
        rows = check_sample_costs(sample_costs, classes, number_of_classes)
        rows[np.arange(classes.size), classes] = -rows.sum(axis=1)
        return rows

    def decision_rule(self, number_of_outputs: int) -> str:
        """``"cost_sensitive"``: the class of least expected cost under :attr:`cost_matrix`."""
        return "cost_sensitive"

    def check_targets(self, targets) -> np.ndarray:
        """Validate (#samples, K) rows ``c*_n``: finite, each non-negative but for at most one entry and summing
        to 0 (up to rounding).

        Raises
        ------
        ValueError
            For another shape, or rows that are not of that form (pass :meth:`targets` of labels and costs).
        """
        array = np.asarray(targets)
        k = self.cost_matrix.shape[0]
        if array.ndim != 2 or array.shape[1] != k or array.shape[0] == 0:
            raise InvalidValueError(f"targets: expected (#samples, {k}) cost rows from SampleCostCMELoss.targets, "
                                    f"got shape {array.shape}")
        if array.dtype == object or not np.issubdtype(array.dtype, np.number):
            raise InvalidTypeError(f"targets: expected a numeric array, got dtype {array.dtype}")
        rows = np.array(array, dtype=np.float64)
        scale = np.abs(rows).sum(axis=1)
        if not np.all(np.isfinite(rows)) or np.any(np.sum(rows < 0, axis=1) > 1) or \
                np.any(np.abs(rows.sum(axis=1)) > 1e-12 * np.maximum(scale, 1.0)):
            raise InvalidValueError("targets: each row must be a sample's costs with minus their sum at its class "
                                    "(SampleCostCMELoss.targets(labels, sample_costs, K) makes them)")
        return rows

    def loss(self, targets: np.ndarray, scores: np.ndarray,
             sample_weight: np.ndarray | None = None) -> np.ndarray:
        """``exp(c*_n @ f(x_n))`` as a (#samples, 1) array."""
        margin = np.sum(targets * scores, axis=1, keepdims=True)
        return weighted(np.exp(np.minimum(margin, EXPONENT_LIMIT)), sample_weight)

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray,
                      sample_weight: np.ndarray | None = None) -> np.ndarray:
        """``c*_n exp(c*_n @ f(x_n))``, shape (#samples, K)."""
        margin = np.sum(targets * scores, axis=1, keepdims=True)
        return weighted(targets * np.exp(np.minimum(margin, EXPONENT_LIMIT)), sample_weight)

    def loss_hessian(self, targets: np.ndarray, scores: np.ndarray,
                     sample_weight: np.ndarray | None = None) -> np.ndarray:
        """The diagonal ``c*_(n,k)^2 exp(c*_n @ f(x_n))`` of the rank-one Hessian."""
        margin = np.sum(targets * scores, axis=1, keepdims=True)
        return weighted(targets * targets * np.exp(np.minimum(margin, EXPONENT_LIMIT)), sample_weight)

    def __repr__(self) -> str:
        return f"SampleCostCMELoss(cost_matrix={self.cost_matrix.tolist()})"
