"""A loss given as plain functions (:class:`bob_boost.FunctionLoss`), as a LightGBM custom objective."""
from __future__ import annotations

import numpy as np
import pytest

import bob_boost
from bob_boost.trainers.partitioned import PartitionedBoosting


def _regression(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(n, 4))
    return features, 2 * features[:, 0] - features[:, 1] ** 2 + rng.normal(size=n)


def _squared(with_loss: bool) -> bob_boost.FunctionLoss:
    return bob_boost.FunctionLoss(lambda t, s: s - t, lambda t, s: np.ones_like(s),
                                  (lambda t, s: 0.5 * (s - t) ** 2) if with_loss else None, decision_rule="identity")


@pytest.mark.parametrize("with_loss", [False, True])
def test_the_squared_loss_as_two_functions_trains_the_squared_losss_trees(with_loss):
    features, targets = _regression()
    ours = bob_boost.Boosting(bob_boost.TreeTrainer(), _squared(with_loss)).train(features, targets, 15)
    built_in = bob_boost.Boosting(bob_boost.TreeTrainer(), bob_boost.SquaredLoss()).train(features, targets, 15)
    assert ours.weak_machines == built_in.weak_machines
    np.testing.assert_array_equal(ours.predict(features), built_in.predict(features))


def test_a_logistic_objective_of_zero_one_labels_learns_as_the_logit_loss():
    rng = np.random.default_rng(1)
    features = rng.normal(size=(2000, 5))
    labels = (features[:, 0] + 0.5 * features[:, 1] + 0.5 * rng.normal(size=2000) > 0).astype(float)

    def gradient(targets, scores):
        return 1 / (1 + np.exp(-scores)) - targets

    def hessian(targets, scores):
        p = 1 / (1 + np.exp(-scores))
        return p * (1 - p)
    ours = bob_boost.Boosting(bob_boost.TreeTrainer(), bob_boost.FunctionLoss(gradient, hessian)).train(
        features, labels, 30)
    logit = bob_boost.Boosting(bob_boost.TreeTrainer(), bob_boost.LogitLoss()).train(features, 2 * labels - 1, 30)
    np.testing.assert_allclose(ours.decision_scores(features), logit.decision_scores(features), atol=1e-9)


def test_what_needs_the_losss_values_refuses_a_loss_without_them():
    derivatives_only = _squared(False)
    with pytest.raises(ValueError, match="loss_function: .* knows its derivatives only"):
        bob_boost.Boosting(bob_boost.StumpTrainer(), derivatives_only)
    with pytest.raises(ValueError, match="loss_function: .* knows its derivatives only"):
        bob_boost.Boosting(bob_boost.TreeTrainer(newton_leaves=False), derivatives_only)
    with pytest.raises(ValueError, match="loss_function: .* knows its derivatives only"):
        PartitionedBoosting(derivatives_only, weak_learner="tree")
    with pytest.raises(NotImplementedError, match="no loss function"):
        derivatives_only.loss(np.zeros((2, 1)), np.zeros((2, 1)))
    features, targets = _regression()
    machine = bob_boost.Boosting(bob_boost.StumpTrainer(), _squared(True)).train(features, targets, 5)
    assert len(machine) == 5


@pytest.mark.parametrize("arguments, kind, message", [
    ((None, lambda t, s: s), TypeError, "gradient"), ((lambda t, s: s, 3), TypeError, "hessian"),
    ((lambda t, s: s, lambda t, s: s, "loss"), TypeError, "loss")])
def test_functions_must_be_callable(arguments, kind, message):
    with pytest.raises(kind, match=message):
        bob_boost.FunctionLoss(*arguments)
    with pytest.raises(ValueError, match="decision_rule"):
        bob_boost.FunctionLoss(lambda t, s: s, lambda t, s: s, decision_rule="median")


@pytest.mark.parametrize("gradient, message", [(lambda t, s: (s - t)[:, 0], "gradient: returned an array of shape"),
                                               (lambda t, s: s - t + np.nan, "gradient: returned values that are not")])
def test_what_the_functions_return_is_checked(gradient, message):
    features, targets = _regression(200)
    loss = bob_boost.FunctionLoss(gradient, lambda t, s: np.ones_like(s))
    with pytest.raises(ValueError, match=message):
        bob_boost.Boosting(bob_boost.TreeTrainer(), loss).train(features, targets, 2)
