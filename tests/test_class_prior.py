"""Boosting from the weighted class prior: the classification losses' optimal constants, and classifiers that
start from them (an intercept) unless a bob-compatible model is asked for."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar

from bob_boost.losses import (DoubleBaseLoss, ExponentialLoss, FocalLoss, LogitLoss, SoftmaxLoss,
                              TangentialLoss)

RNG = np.random.default_rng(7)
SIGNS = np.where(RNG.random((400, 3)) < [0.2, 0.5, 0.9], 1.0, -1.0)
WEIGHTS = RNG.uniform(0.1, 4.0, size=400)
BINARY_LOSSES = [ExponentialLoss(), LogitLoss(), TangentialLoss(), FocalLoss(2.0), FocalLoss(1.0, alpha=0.25),
                 DoubleBaseLoss(2.0, 0.5)]


@pytest.mark.parametrize("loss", BINARY_LOSSES, ids=repr)
@pytest.mark.parametrize("weights", [None, WEIGHTS], ids=["unweighted", "weighted"])
def test_a_binary_baseline_is_the_constant_of_least_loss_of_every_column(loss, weights):
    found = loss.baseline(SIGNS, weights)
    assert found.shape == (3,)
    for column in range(3):
        targets = SIGNS[:, column:column + 1]

        def total(score, targets=targets):
            values = loss.loss(targets, np.full_like(targets, score))[:, 0]
            return float(np.sum(values if weights is None else weights * values))
        best = minimize_scalar(total, bounds=(found[column] - 3, found[column] + 3), method="bounded",
                               options={"xatol": 1e-12})
        np.testing.assert_allclose(found[column], best.x, atol=1e-6)
        assert total(found[column]) <= best.fun * (1 + 1e-12)


def test_the_closed_forms_are_the_log_odds_over_the_probability_scale():
    share = np.average(SIGNS > 0, axis=0, weights=WEIGHTS)
    np.testing.assert_allclose(LogitLoss().baseline(SIGNS, WEIGHTS), np.log(share / (1 - share)), rtol=1e-12)
    np.testing.assert_allclose(ExponentialLoss().baseline(SIGNS, WEIGHTS), 0.5 * np.log(share / (1 - share)),
                               rtol=1e-12)
    np.testing.assert_allclose(TangentialLoss().baseline(SIGNS, WEIGHTS), np.tan(share - 0.5), rtol=1e-12)


@pytest.mark.parametrize("loss", [ExponentialLoss(), LogitLoss(), TangentialLoss(), FocalLoss(2.0)], ids=repr)
def test_a_class_without_weight_gets_a_finite_baseline(loss):
    targets = np.array([[1.0], [1.0], [-1.0]])
    found = loss.baseline(targets, np.array([1.0, 2.0, 0.0]))
    assert np.isfinite(found).all() and found[0] > 0.5  # the tangential loss: tan(1/2)


@pytest.mark.parametrize("weights", [None, WEIGHTS], ids=["unweighted", "weighted"])
def test_the_softmax_baseline_is_the_log_prior_and_least_loss(weights):
    labels = np.minimum((RNG.random(400) * 4.6).astype(int), 3)
    loss = SoftmaxLoss()
    targets = loss.check_targets(labels)
    found = loss.baseline(targets, weights)
    prior = np.average(targets, axis=0, weights=weights)
    np.testing.assert_allclose(np.exp(found) / np.exp(found).sum(), prior, rtol=1e-12)
    assert abs(found.sum()) < 1e-12

    def total(scores):
        values = loss.loss(targets, np.broadcast_to(scores, targets.shape).copy())[:, 0]
        return float(np.sum(values if weights is None else weights * values))
    best = minimize(total, np.zeros(4), method="BFGS", options={"gtol": 1e-10})
    assert total(found) <= best.fun * (1 + 1e-12)
