"""The generic boosting trainer and the strong machine."""
import logging

import numpy as np
import pytest

from bob_boost import (BoostedMachine, Boosting, ExponentialLoss, JesorskyLoss, LogitLoss, LUTTrainer,
                       SquaredLoss, StumpMachine, StumpTrainer, TangentialLoss)

rng = np.random.default_rng(3)


def test_exponential_loss_with_stumps_is_discrete_adaboost(ionosphere):
    features, targets = ionosphere
    machine = Boosting(StumpTrainer(), ExponentialLoss()).train(features, targets, 15)
    assert len(machine) == 15
    scores = np.zeros(len(targets))
    for weak, weight in zip(machine.weak_machines, machine.weights[:, 0]):
        distribution = np.exp(-targets * scores)
        distribution /= distribution.sum()
        output = weak(features)[:, 0]
        error = distribution[output != targets].sum()
        assert weight == pytest.approx(0.5 * np.log((1 - error) / error), abs=1e-6)
        scores += weight * output


def test_xor_is_solved_in_three_rounds():
    features = np.array([[0.0, 1.0], [0.0, -1.0], [1.0, 0.0], [-1.0, 0.0]])
    targets = np.array([1.0, 1.0, -1.0, -1.0])
    machine = Boosting(StumpTrainer(), ExponentialLoss()).train(features, targets, 3)
    # the pool is the eight stumps at +-0.5 on either axis
    assert all(abs(m.threshold) == 0.5 for m in machine.weak_machines)
    np.testing.assert_array_equal(machine.predict(features), targets)
    two_rounds = Boosting(StumpTrainer(), ExponentialLoss()).train(features, targets, 2)
    assert np.any(two_rounds.predict(features) != targets)


@pytest.mark.parametrize("style", ["independent", "shared"])
def test_multivariate_lut_boosting_learns_one_vs_rest_targets(style):
    classes, n = 3, 600
    features = rng.integers(0, 16, size=(n, 6))
    labels = (features[:, 1] * 7) % classes  # any value-to-class map is one LUT away
    targets = -np.ones((n, classes))
    targets[np.arange(n), labels] = 1
    machine = Boosting(LUTTrainer(16, classes, style), LogitLoss()).train(features, targets, 20)
    assert machine.weights.shape == (len(machine), classes)
    assert np.all(machine.weights > 0)
    assert np.mean(machine.predict(features) == labels) > 0.9
    if style == "shared":
        assert all(len(set(m.indices.tolist())) == 1 for m in machine.weak_machines)


def test_continuing_training_equals_training_in_one_go(ionosphere):
    features, targets = ionosphere
    trainer = Boosting(StumpTrainer(), LogitLoss())
    once = trainer.train(features, targets, 10)
    twice = trainer.train(features, targets, 4)
    returned = trainer.train(features, targets, 6, boosted_machine=twice)
    assert returned is twice
    assert once.weak_machines == twice.weak_machines
    np.testing.assert_allclose(once.weights, twice.weights, rtol=1e-9)


def test_training_is_deterministic_and_leaves_inputs_alone(ionosphere):
    features, targets = ionosphere
    copies = features.copy(), targets.copy()
    first = Boosting(StumpTrainer(), TangentialLoss()).train(features, targets, 8)
    second = Boosting(StumpTrainer(), TangentialLoss()).train(features, targets, 8)
    assert first.weak_machines == second.weak_machines
    assert np.array_equal(first.weights, second.weights)
    np.testing.assert_array_equal(features, copies[0])
    np.testing.assert_array_equal(targets, copies[1])


def test_uninformative_features_stop_early_with_a_log_message(caplog):
    features = np.array([[0.0], [1.0], [0.0], [1.0]])
    targets = np.array([1.0, 1.0, -1.0, -1.0])  # the feature says nothing about the target
    with caplog.at_level(logging.INFO, logger="bob_boost"):
        machine = Boosting(StumpTrainer(), ExponentialLoss()).train(features, targets, 5)
    assert len(machine) == 0
    assert "no weak machine contributes" in caplog.text  # the best stump's gain is zero


def test_zero_optimal_weight_stops_early_with_a_log_message(caplog):
    class Uncorrelated:
        """bob_boost 0.1's protocol: always the same stump, whatever the gradient."""

        def train(self, features, loss_gradient):
            return StumpMachine(0.5, 1.0, 0)

    features = np.array([[0.0], [1.0], [0.0], [1.0]])
    targets = np.array([1.0, 1.0, -1.0, -1.0])
    with caplog.at_level(logging.INFO, logger="bob_boost"):
        machine = Boosting(Uncorrelated(), ExponentialLoss()).train(features, targets, 5)
    assert len(machine) == 0
    assert "optimal weight is zero" in caplog.text


def test_regression_losses_reduce_the_training_loss():
    n = 400
    features = rng.integers(0, 10, size=(n, 4))
    eyes = np.column_stack([np.zeros(n), np.zeros(n), np.zeros(n), 10 + features[:, 0]])
    targets = np.column_stack([eyes, features[:, 1], features[:, 2]]).astype(float)
    for loss in (SquaredLoss(), JesorskyLoss()):
        machine = Boosting(LUTTrainer(10, targets.shape[1]), loss).train(features, targets, 30)
        before = loss.loss(targets, np.zeros_like(targets)).sum()
        after = loss.loss(targets, machine(features)).sum()
        assert after < 0.5 * before, type(loss).__name__


def test_single_samples_score_and_predict_like_the_batch(ionosphere):
    features, targets = ionosphere
    machine = Boosting(StumpTrainer(), ExponentialLoss()).train(features, targets, 5)
    batch_scores, batch_labels = machine(features[:7]), machine.predict(features[:7])
    assert batch_scores.shape == (7,)
    for i in range(7):
        assert machine(features[i]) == batch_scores[i]
        assert machine.predict(features[i]) == batch_labels[i]
    multi = BoostedMachine()
    from bob_boost import LUTMachine
    multi.add_weak_machine(LUTMachine(np.array([[1.0, -1.0], [-1.0, 1.0]]), [0, 1]), [0.5, 2.0])
    sample = np.array([1, 0])
    np.testing.assert_array_equal(multi(sample), [-0.5, -2.0])
    assert multi.predict(sample) == 0
    np.testing.assert_array_equal(multi(sample[np.newaxis]), [[-0.5, -2.0]])


def test_boosted_machine_with_cost_matrix_predicts_the_cheapest_class():
    machine = BoostedMachine(cost_matrix=np.array([[0.0, 1.0], [10.0, 0.0]]))
    machine.add_weak_machine(LUTMachine_two_outputs(), [1.0, 1.0])
    # scores (1, -1): C* = [[-1, 1], [10, -10]] -> C* f = (-2, 20) -> class 0
    assert machine.predict(np.array([0])) == 0
    # scores (-1, 1): C* f = (2, -20) -> class 1
    assert machine.predict(np.array([1])) == 1


def LUTMachine_two_outputs():
    from bob_boost import LUTMachine
    return LUTMachine(np.array([[1.0, -1.0], [-1.0, 1.0]]), [0, 0])


def test_training_rejects_bad_input():
    trainer = Boosting(StumpTrainer(), ExponentialLoss())
    good = np.arange(12, dtype=float).reshape(6, 2)
    targets = np.array([1, -1, 1, -1, 1, -1])
    with pytest.raises(ValueError, match="targets.*5 samples but features has 6"):
        trainer.train(good, targets[:5])
    with pytest.raises(ValueError, match="features.*NaN"):
        trainer.train(np.where(good > 5, np.nan, good), targets)
    with pytest.raises(ValueError, match="features.*NaN or infinite"):
        trainer.train(np.where(good > 5, np.inf, good), targets)
    with pytest.raises(ValueError, match="targets.*-1, \\+1"):
        trainer.train(good, targets * 2)
    with pytest.raises(ValueError, match="number_of_rounds"):
        trainer.train(good, targets, 0)
    with pytest.raises(TypeError, match="number_of_rounds"):
        trainer.train(good, targets, 2.5)
    with pytest.raises(ValueError, match="features.*empty"):
        trainer.train(np.zeros((0, 2)), np.zeros(0))
    with pytest.raises(TypeError, match="loss_function"):
        Boosting(StumpTrainer(), "exponential")
    with pytest.raises(TypeError, match="weak_trainer"):
        Boosting(object(), ExponentialLoss())


def test_prediction_rejects_bad_input(ionosphere):
    features, targets = ionosphere
    machine = Boosting(StumpTrainer(), ExponentialLoss()).train(features, targets, 3)
    with pytest.raises(ValueError, match="trained on 34 features, got 10"):
        machine.predict(features[:, :10])
    unconstrained = BoostedMachine()
    unconstrained.add_weak_machine(StumpMachine(0.0, 1, 33), 1.0)
    with pytest.raises(ValueError, match="reads feature 33.*only 10 columns"):
        unconstrained(features[:, :10])
    with pytest.raises(ValueError, match="NaN"):
        machine(np.full(34, np.nan))
    with pytest.raises(ValueError, match="weight"):
        unconstrained.add_weak_machine(StumpMachine(0.0, 1, 1), [1.0, 2.0])


def test_boosted_machine_constructor_validates_its_arguments():
    with pytest.raises(ValueError, match="cost_matrix: costs must be non-negative"):
        BoostedMachine(cost_matrix=-np.ones((2, 2)))
    with pytest.raises(ValueError, match="cost_matrix: the diagonal must be zero"):
        BoostedMachine(cost_matrix=np.ones((2, 2)))
    with pytest.raises(ValueError, match="number_of_outputs"):
        BoostedMachine(number_of_outputs=-1)
    with pytest.raises(TypeError, match="number_of_outputs"):
        BoostedMachine(number_of_outputs="a")
    with pytest.raises(ValueError, match="number_of_features"):
        BoostedMachine(number_of_features=0)
    with pytest.raises(TypeError, match="metadata: must be JSON-serialisable"):
        BoostedMachine(metadata={"a": object()})


def test_labels_from_scores_follow_the_prediction_rules():
    univariate = BoostedMachine(number_of_outputs=1)
    np.testing.assert_array_equal(univariate.labels_from_scores(np.array([[0.5], [0.0], [-2.0]])), [1, -1, -1])
    multi = BoostedMachine(number_of_outputs=3)
    np.testing.assert_array_equal(multi.labels_from_scores(np.array([[0.1, 0.9, 0.3], [2.0, 1.0, 0.0]])), [1, 0])
    costly = BoostedMachine(cost_matrix=np.array([[0.0, 1.0], [10.0, 0.0]]))
    # C* = [[-1, 1], [10, -10]]; scores (1, -1) -> C* f = (-2, 20) -> class 0
    np.testing.assert_array_equal(costly.labels_from_scores(np.array([[1.0, -1.0], [-1.0, 1.0]])), [0, 1])


def test_class_indices_from_scores_map_univariate_labels_to_zero_and_one():
    univariate = BoostedMachine(number_of_outputs=1)
    np.testing.assert_array_equal(univariate.class_indices_from_scores(np.array([[0.5], [0.0], [-2.0]])), [1, 0, 0])
    multi = BoostedMachine(number_of_outputs=3)
    np.testing.assert_array_equal(multi.class_indices_from_scores(np.array([[0.1, 0.9, 0.3], [2.0, 1.0, 0.0]])), [1, 0])
