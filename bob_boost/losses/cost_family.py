"""The losses of two of BAdaCost's multi-class cost-sensitive competitors, for reporting and scoring.

:class:`CostExponentialLoss` is MultiBoost's ``sum_k C(l, k) exp(f_k)`` and :class:`PNormCostLoss` Lp-CSB's
``sum_k C(l, k) H_k^p`` of the stochastic hypothesis ``H = f / sum_k f_k``. Both take class labels (turned into
margin vectors, as :class:`~bob_boost.losses.cmel.CMELoss` does) and their machines predict the class of the
largest score; their trainers (:mod:`bob_boost.trainers.multiboost`, :mod:`bob_boost.trainers.lp_csb`) fit
the weak machines themselves, so the losses need no derivatives beyond the gradient of the first.
"""
from __future__ import annotations

import numbers

import numpy as np

from .._validation import check_scalar
from ..costs import check_cost_matrix
from .base import LossFunction, weighted
from .cmel import CMELoss
from .exponential import EXPONENT_LIMIT

__all__ = ["CostExponentialLoss", "PNormCostLoss", "label_shares"]


def label_shares(scores: np.ndarray) -> np.ndarray:
    """``H = f / sum_k f_k``, each row of non-negative scores as shares of its labels (``1/K`` where the scores
    sum to 0): Lp-CSB's stochastic hypothesis from its machine's scores."""
    totals = scores.sum(axis=1, keepdims=True)
    return np.where(totals > 0, scores / np.where(totals > 0, totals, 1.0), 1.0 / scores.shape[1])


class _ClassCosts(LossFunction):
    """Class-label targets and the ``argmax`` rule of a loss of a (K, K) cost matrix ``costs``."""

    def __init__(self, cost_matrix) -> None:
        matrix = check_cost_matrix(cost_matrix)
        matrix.setflags(write=False)
        self.costs = matrix
        self._targets = CMELoss(matrix)

    @property
    def number_of_classes(self) -> int:
        """K."""
        return self.costs.shape[0]

    def decision_rule(self, number_of_outputs: int) -> str:
        """``"argmax"``: the class of the largest score."""
        return "argmax"

    def check_targets(self, targets) -> np.ndarray:
        """(#samples,) class labels (or their margin vectors) as (#samples, K) margin vectors."""
        return self._targets.check_targets(targets)

    def _rows(self, targets: np.ndarray) -> np.ndarray:
        return self.costs[np.argmax(targets, axis=1)]


class CostExponentialLoss(_ClassCosts):
    """MultiBoost's ``L(l, f) = sum_k C(l, k) exp(f_k)`` (one column).

    Parameters
    ----------
    cost_matrix : array_like
        (K, K) non-negative costs with a zero diagonal.
    """

    name = "cost_exponential"
    convex = True

    def loss(self, targets: np.ndarray, scores: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """``sum_k C(l_n, k) exp(f_k(x_n))`` as a (#samples, 1) array."""
        terms = self._rows(targets) * np.exp(np.minimum(scores, EXPONENT_LIMIT))
        return weighted(terms.sum(axis=1, keepdims=True), sample_weight)

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray,
                      sample_weight: np.ndarray | None = None) -> np.ndarray:
        """``C(l_n, k) exp(f_k(x_n))``, shape (#samples, K)."""
        return weighted(self._rows(targets) * np.exp(np.minimum(scores, EXPONENT_LIMIT)), sample_weight)

    def __repr__(self) -> str:
        return f"CostExponentialLoss(cost_matrix={self.costs.tolist()})"


class PNormCostLoss(_ClassCosts):
    """Lp-CSB's ``L(l, f) = sum_k C(l, k) H_k^p`` with ``H = f / sum_k f_k`` (one column).

    Scores summing to 0 (a machine without hypotheses) are the uniform ``H = 1/K``.

    Parameters
    ----------
    cost_matrix : array_like
        (K, K) non-negative costs with a zero diagonal.
    p : float
        The norm, >= 1.
    """

    name = "p_norm_cost"

    def __init__(self, cost_matrix, p: float = 2.0) -> None:
        super().__init__(cost_matrix)
        self.p = float(check_scalar(p, "p", numbers.Real, min_val=1.0))

    @property
    def has_probabilities(self) -> bool:
        """True: the scores are a distribution over the labels once normalised."""
        return True

    def inverse_link(self, scores: np.ndarray) -> np.ndarray:
        """:func:`label_shares` of the scores."""
        return label_shares(scores)

    def loss(self, targets: np.ndarray, scores: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """``sum_k C(l_n, k) H_k(x_n)^p`` as a (#samples, 1) array."""
        terms = self._rows(targets) * self.inverse_link(scores) ** self.p
        return weighted(terms.sum(axis=1, keepdims=True), sample_weight)

    def __repr__(self) -> str:
        return f"PNormCostLoss(cost_matrix={self.costs.tolist()}, p={self.p})"
