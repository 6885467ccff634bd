"""The logistic (logit) loss."""
from __future__ import annotations

import math

import numba
import numpy as np
from scipy.special import expit

from .base import BinaryClassificationLoss, weighted


class LogitLoss(BinaryClassificationLoss):
    """``L(t, s) = log(1 + exp(-t s))`` for targets ``t`` in {-1, +1}."""

    name = "logit"
    convex = True
    row_separable = True
    #: ``t^2 sigmoid(m) sigmoid(-m)`` is at most 1/4 for targets of -1 and +1.
    curvature = 0.25
    #: One C library exponential an entry: 2 threads gained from 16,384 rows (0.28 -> 0.16 ms; 150,000 rows:
    #: 2.44 -> 1.46 ms; epyc-zen3).
    derivative_steps = 16

    #: The negative log-likelihood of a logistic model: the score is the log-odds.
    probability_scale = 1.0

    def loss(self, targets: np.ndarray, scores: np.ndarray,
             sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Return ``log(1 + exp(-targets * scores))``, computed without overflow as ``max(-m, 0) +
        log1p(exp(-|m|))`` for the margin ``m``, in place (a third of ``logaddexp``'s time)."""
        margin = targets * scores
        values = np.abs(margin)
        np.negative(values, out=values)
        np.log1p(np.exp(values, out=values), out=values)
        np.negative(margin, out=margin)
        values += np.maximum(margin, 0.0, out=margin)
        return weighted(values, sample_weight)

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray,
                      sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Return ``-targets sigmoid(-m)`` (``-targets / (1 + exp(m))``) for the margin ``m = targets * scores``,
        the sigmoid from :func:`_sigmoids`."""
        below, _, _ = _sigmoids(targets * scores)
        return weighted(-targets * below, sample_weight)

    def loss_hessian(self, targets: np.ndarray, scores: np.ndarray,
                     sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Return ``targets**2 sigmoid(m) sigmoid(-m)`` for the margin ``m = targets * scores``, the sigmoids
        from :func:`_sigmoids`."""
        _, small, large = _sigmoids(targets * scores)
        return weighted(targets * targets * small * large, sample_weight)

    def gradient_and_hessian(self, targets: np.ndarray, scores: np.ndarray,
                             sample_weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`loss_gradient` and :meth:`loss_hessian`, the same bits, from one exponential."""
        if not self._own_derivatives():  # a subclass's own derivatives
            return super().gradient_and_hessian(targets, scores, sample_weight)
        below, small, large = _sigmoids(targets * scores)
        gradient = -targets * below
        hessian = targets * targets * small * large
        return weighted(gradient, sample_weight), weighted(hessian, sample_weight)

    def derivatives_into(self, targets: np.ndarray, scores: np.ndarray, out: np.ndarray) -> None:
        """The gradient and hessian side by side in ``out``, the bits of :meth:`gradient_and_hessian` (whose
        sigmoid is scipy's ``1 / (1 + exp(-x))`` with the C library's ``exp``), compiled in one pass."""
        if not (self._own_derivatives() and type(self).gradient_and_hessian is LogitLoss.gradient_and_hessian):
            super().derivatives_into(targets, scores, out)
            return
        _fill_derivatives(np.asarray(targets, dtype=np.float64), np.asarray(scores, dtype=np.float64), out)

    def _own_derivatives(self) -> bool:
        cls = type(self)
        return cls.loss_gradient is LogitLoss.loss_gradient and cls.loss_hessian is LogitLoss.loss_hessian

    def loss_and_gradient(self, targets: np.ndarray, scores: np.ndarray,
                          sample_weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Loss and gradient from a single exponential of ``-|margin|`` (never overflows)."""
        margin = targets * scores
        small = np.exp(-np.abs(margin))
        values = np.maximum(-margin, 0.0) + np.log1p(small)
        # sigmoid(-margin) written with exp(-|margin|) on both sides of zero
        sigmoid = np.where(margin >= 0, small, 1.0) / (1.0 + small)
        return weighted(values, sample_weight), weighted(-targets * sigmoid, sample_weight)


def _sigmoids(margin: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(sigmoid(-margin), small, large)``: ``small = sigmoid(-|margin|)``, scipy's ``expit``, the only
    exponential (of ``|margin|``, which overflows to a sigmoid of 0, never to NaN), and ``large = 1 - small``, the
    other sigmoid, at least 1/2 and so rounded by half an ulp at most. With two exponentials (of ``margin`` and
    ``-margin``) the compiled pass over 300,000 rows took 5.0-5.2 ms on one thread, with one 3.6 ms (epyc-zen3)."""
    small = expit(-np.abs(margin))
    large = 1.0 - small
    return np.where(margin >= 0, small, large), small, large


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _fill_derivatives(targets: np.ndarray, scores: np.ndarray, out: np.ndarray) -> None:
    """``out[:, :K]`` the gradient ``-t sigmoid(-m)``, ``out[:, K:]`` the hessian ``t t sigmoid(m) sigmoid(-m)``
    for the margins ``m = t s``, each operation as :func:`_sigmoids` and scipy's ``expit`` order them."""
    outputs = targets.shape[1]
    for i in range(targets.shape[0]):
        for k in range(outputs):
            target = targets[i, k]
            margin = target * scores[i, k]
            small = 1.0 / (1.0 + math.exp(abs(margin)))
            large = 1.0 - small
            out[i, k] = -target * (small if margin >= 0 else large)
            out[i, outputs + k] = target * target * small * large


class MultiLabelLogitLoss(LogitLoss):
    """Multi-label logistic regression: one independent :class:`LogitLoss` per output, targets +1 where the
    label is on and -1 where it is off (any number of labels per sample).

    The loss, its derivatives and its optimal constant (each label's weighted log-odds) are the logit loss's
    column by column; what differs is the meaning of several outputs. Machines decide by each output's sign
    (decision rule ``"multilabel"``), and :meth:`inverse_link` gives each label's own probability
    ``sigmoid(score)``, which need not sum to 1.
    """

    name = "multilabel_logit"

    def decision_rule(self, number_of_outputs: int) -> str:
        """``"multilabel"``: every output's sign."""
        return "multilabel"

    def inverse_link(self, scores: np.ndarray) -> np.ndarray:
        """(#samples, #labels) ``sigmoid(scores)``: each label's probability of being on."""
        return expit(np.asarray(scores, dtype=np.float64))
