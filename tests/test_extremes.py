"""Numerical extremes: every trainer on degenerate and extreme data, under warnings-as-errors.

Each case has one documented outcome: a ``ValueError`` (bob_boost's ``InvalidValueError``) whose message
names the argument at fault, or a valid model. A valid model has finite weights, baseline, thresholds,
leaf values and table entries, and finite scores on its training data; no warning (numpy's
``RuntimeWarning`` above all) may leak from training or prediction, which the module-wide
``filterwarnings("error")`` turns into a failure. (The BAdaCost cost overflow and the overflowing
finiteness sum were found here and fixed.)
"""
from __future__ import annotations

import numpy as np
import pytest

import bob_boost
from bob_boost.exceptions import ConvergenceWarning, InvalidValueError

pytestmark = pytest.mark.filterwarnings("error")


def assert_valid_model(machine: bob_boost.BoostedMachine, features) -> None:
    """Every parameter of ``machine`` and its scores on ``features`` are finite."""
    assert np.all(np.isfinite(machine.weights))
    assert np.all(np.isfinite(machine.baseline))
    for weak in machine.weak_machines:
        for name in ("threshold", "thresholds", "values", "look_up_tables"):
            if hasattr(weak, name):
                assert np.all(np.isfinite(getattr(weak, name))), f"{weak!r}.{name} not finite"
    if len(machine):
        assert np.all(np.isfinite(machine.decision_scores(features)))
        machine.predict(features)


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def near_separable(n: int = 60, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Data a stump separates but for one flipped label: a near-perfect weak learner every round."""
    features = _rng(seed).normal(size=(n, 3))
    targets = np.where(features[:, 0] > 0, 1.0, -1.0)
    targets[0] *= -1
    return features, targets


# -- 2000 rounds of a near-perfect weak learner ----------------------------------------------------
@pytest.mark.parametrize("algorithm", ["adaboost", "logit", "adaboostdb", "cost_sensitive_adaboost", "samme"])
@pytest.mark.long
def test_two_thousand_rounds_of_a_near_perfect_learner(algorithm):
    """Weights stay finite while the margins grow; training may stop early (a zero step), never warn."""
    features, targets = near_separable()
    labels = (targets > 0).astype(int)
    if algorithm == "adaboost":
        machine = bob_boost.Boosting(bob_boost.StumpTrainer(), bob_boost.ExponentialLoss()).train(features, targets,
                                                                                                   2000)
    elif algorithm == "logit":
        machine = bob_boost.Boosting(bob_boost.StumpTrainer(), bob_boost.LogitLoss()).train(features, targets, 2000)
    elif algorithm == "adaboostdb":
        machine = bob_boost.AdaBoostDBTrainer(1.0, 2.0).train(features, targets, 2000)
    elif algorithm == "cost_sensitive_adaboost":
        machine = bob_boost.CostSensitiveAdaBoostTrainer(1.0, 2.0).train(features, targets, 500)
    else:
        machine = bob_boost.SAMMETrainer(bob_boost.CostSensitiveTreeTrainer(max_depth=1)).train(features, labels,
                                                                                                2000)
    assert len(machine) >= 1
    assert_valid_model(machine, features)


# -- costs from 1e-6 to 1e6 ---------------------------------------------------------------------------
COSTS = [1e-6, 1e-3, 1.0, 1e3, 1e6]


@pytest.mark.parametrize("cost_positive", COSTS)
@pytest.mark.parametrize("cost_negative", [1e-6, 1.0, 1e6])
@pytest.mark.parametrize("trainer", [bob_boost.AdaBoostDBTrainer, bob_boost.CostSensitiveAdaBoostTrainer])
def test_binary_costs_across_twelve_orders_of_magnitude(trainer, cost_positive, cost_negative):
    features, targets = near_separable()
    machine = trainer(cost_positive, cost_negative).train(features, targets, 30)
    assert len(machine) >= 1
    assert_valid_model(machine, features)


@pytest.mark.parametrize("cost", [0.0, -1.0, np.inf, np.nan])
def test_invalid_binary_costs_name_the_argument(cost):
    with pytest.raises(ValueError, match="cost_positive"):
        bob_boost.AdaBoostDBTrainer(cost, 1.0)
    with pytest.raises(ValueError, match="cost_negative"):
        bob_boost.CostSensitiveAdaBoostTrainer(1.0, cost)


def _matrix(low: float, high: float, k: int = 3) -> np.ndarray:
    matrix = np.full((k, k), high)
    matrix[0, 1] = low
    np.fill_diagonal(matrix, 0.0)
    return matrix


@pytest.mark.parametrize("low,high", [(1e-6, 1e-6), (1e-6, 1.0), (1e-3, 100.0)])
def test_badacost_costs_of_moderate_range(low, high):
    features = _rng().normal(size=(60, 3))
    labels = _rng(1).integers(0, 3, 60)
    machine = bob_boost.BAdaCostTrainer(_matrix(low, high), number_of_rounds=30).train(features, labels)
    assert len(machine) >= 1
    assert_valid_model(machine, features)


@pytest.mark.parametrize("low,high", [(1e-3, 1e3), (1e-6, 1e6), (1e6, 1e6)])
def test_badacost_costs_up_to_a_million(low, high):
    features = _rng().normal(size=(60, 3))
    labels = _rng(1).integers(0, 3, 60)
    machine = bob_boost.BAdaCostTrainer(_matrix(low, high), number_of_rounds=30).train(features, labels)
    assert len(machine) >= 1
    assert_valid_model(machine, features)


# -- 100 classes ---------------------------------------------------------------------------------------------
def hundred_classes() -> tuple[np.ndarray, np.ndarray]:
    return _rng().normal(size=(300, 4)), np.arange(300) % 100


def test_samme_with_100_classes():
    features, labels = hundred_classes()
    machine = bob_boost.SAMMETrainer(number_of_rounds=20).train(features, labels)
    assert len(machine) >= 1 and machine.number_of_outputs == 100
    assert_valid_model(machine, features)


def test_badacost_with_100_classes():
    features, labels = hundred_classes()
    matrix = _rng(2).uniform(0.5, 2.0, size=(100, 100))
    np.fill_diagonal(matrix, 0.0)
    machine = bob_boost.BAdaCostTrainer(matrix, number_of_rounds=20).train(features, labels)
    assert len(machine) >= 1 and machine.number_of_outputs == 100
    assert_valid_model(machine, features)


def test_softmax_trees_with_100_classes():
    features, labels = hundred_classes()
    machine = bob_boost.Boosting(bob_boost.TreeTrainer(max_depth=2, min_samples_leaf=1),
                                 bob_boost.SoftmaxLoss()).train(features, labels, 5)
    assert len(machine) == 5 and machine.number_of_outputs == 100
    assert_valid_model(machine, features)


# -- constant and all-NaN features --------------------------------------------------------------------
def constant_and_missing(integer: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Column 0 constant, column 1 all NaN, column 2 informative."""
    rng = _rng(3)
    informative = rng.integers(0, 3, 20).astype(float) if integer else rng.normal(size=20)
    targets = np.where(rng.random(20) < 0.5, 1.0, -1.0)
    targets[:2] = [1.0, -1.0]
    return np.column_stack([np.ones(20), np.full(20, np.nan), informative]), targets


def _weak_trainers():
    return {
        "stump": lambda: bob_boost.StumpTrainer(missing="bin"),
        "tree": lambda: bob_boost.TreeTrainer(min_samples_leaf=1, missing="bin"),
        "lut": lambda: bob_boost.LUTTrainer(3, missing="bin"),
    }


@pytest.mark.parametrize("weak", ["stump", "tree", "lut"])
def test_constant_and_all_nan_features_are_never_chosen(weak):
    features, targets = constant_and_missing(integer=weak == "lut")
    machine = bob_boost.Boosting(_weak_trainers()[weak](), bob_boost.LogitLoss()).train(features, targets, 10)
    assert len(machine) >= 1
    used = set(np.concatenate([w.feature_indices() for w in machine.weak_machines]).tolist())
    # a LUT on the constant column is a constant learner, which the logit loss's unbalanced gradient
    # can prefer (it acts as an intercept); the all-NaN column, equally constant, is excluded by rule
    assert used <= ({0, 2} if weak == "lut" else {2})
    assert_valid_model(machine, features)


def test_multiclass_trees_skip_constant_and_all_nan_features():
    features, _ = constant_and_missing()
    labels = np.arange(20) % 3
    learner = bob_boost.CostSensitiveTreeTrainer(missing="bin")
    machine = bob_boost.BAdaCostTrainer(1 - np.eye(3), learner, number_of_rounds=10).train(features, labels)
    assert len(machine) >= 1
    assert set(np.concatenate([w.feature_indices() for w in machine.weak_machines]).tolist()) <= {2}
    assert_valid_model(machine, features)


def test_only_constant_and_all_nan_features():
    """Stumps refuse (a clear error naming ``features``); trees and LUTs give a valid (constant) model."""
    features, targets = constant_and_missing()
    features = features[:, :2]
    with pytest.raises(ValueError, match="features: every feature is constant"):
        bob_boost.Boosting(bob_boost.StumpTrainer(missing="bin"), bob_boost.ExponentialLoss()).train(
            features, targets, 5)
    for weak in ("tree", "lut"):
        machine = bob_boost.Boosting(_weak_trainers()[weak](), bob_boost.LogitLoss()).train(features, targets, 5)
        assert_valid_model(machine, features)
    learner = bob_boost.CostSensitiveTreeTrainer(missing="bin")
    machine = bob_boost.SAMMETrainer(learner, number_of_rounds=5).train(features, np.arange(20) % 3)
    assert_valid_model(machine, features)


def test_nan_without_missing_bin_names_the_features():
    features, targets = constant_and_missing()
    with pytest.raises(ValueError, match="features: contains NaN"):
        bob_boost.Boosting(bob_boost.StumpTrainer(), bob_boost.ExponentialLoss()).train(features, targets, 5)


# -- a single class -------------------------------------------------------------------------------------
def test_single_class_binary():
    """Gradient boosting fits the constant (valid model); AdaBoostDB and softmax need both classes."""
    features = _rng().normal(size=(20, 3))
    ones = np.ones(20)
    for loss in (bob_boost.ExponentialLoss(), bob_boost.LogitLoss()):
        machine = bob_boost.Boosting(bob_boost.StumpTrainer(), loss).train(features, ones, 10)
        assert_valid_model(machine, features)
        assert np.all(machine.predict(features) == 1)
    with pytest.raises(ValueError, match="targets: both classes"):
        bob_boost.AdaBoostDBTrainer(1.0, 1.0).train(features, ones, 5)
    with pytest.raises(ValueError, match="targets: the softmax loss needs at least two classes"):
        bob_boost.Boosting(bob_boost.TreeTrainer(), bob_boost.SoftmaxLoss()).train(features, np.zeros(20), 5)
    with pytest.raises(ValueError, match="targets: class 1 has no sample"):
        bob_boost.Boosting(bob_boost.TreeTrainer(), bob_boost.SoftmaxLoss(3)).train(features, np.zeros(20), 5)


def test_single_class_multiclass():
    """SAMME and BAdaCost: one perfect (constant) learner, predicting the class present."""
    features = _rng().normal(size=(20, 3))
    zeros = np.zeros(20, dtype=int)
    for trainer in (bob_boost.SAMMETrainer(number_of_rounds=10),
                    bob_boost.BAdaCostTrainer(1 - np.eye(3), number_of_rounds=10)):
        machine = trainer.train(features, zeros)
        assert_valid_model(machine, features)
        assert np.all(machine.predict(features) == 0)


# -- duplicated samples with contradicting labels ----------------------------------------------------
@pytest.mark.parametrize("algorithm", ["adaboost", "logit_trees", "adaboostdb", "samme", "badacost"])
def test_duplicates_with_contradicting_labels(algorithm):
    """Nothing can be learnt: an empty model (no learner lowers the loss) or finite weights, never NaN."""
    features = np.repeat(_rng().normal(size=(5, 2)), 2, axis=0)
    targets = np.tile([1.0, -1.0], 5)
    labels = (targets > 0).astype(int)
    if algorithm == "adaboost":
        machine = bob_boost.Boosting(bob_boost.StumpTrainer(), bob_boost.ExponentialLoss()).train(features, targets, 10)
    elif algorithm == "logit_trees":
        machine = bob_boost.Boosting(bob_boost.TreeTrainer(min_samples_leaf=1), bob_boost.LogitLoss()).train(
            features, targets, 10)
    elif algorithm == "adaboostdb":
        machine = bob_boost.AdaBoostDBTrainer(1.0, 3.0).train(features, targets, 10)
    elif algorithm == "samme":
        # every learner's weighted error is 1/2: no positive step, an empty machine, and a warning saying so
        with pytest.warns(ConvergenceWarning, match="the machine is empty"):
            machine = bob_boost.SAMMETrainer(number_of_rounds=10).train(features, labels)
    else:
        machine = bob_boost.BAdaCostTrainer([[0.0, 1.0], [3.0, 0.0]], number_of_rounds=10).train(features, labels)
    assert_valid_model(machine, features)


# -- features near the float limits ----------------------------------------------------------------------
def _extreme(scale: float) -> tuple[np.ndarray, np.ndarray]:
    features, targets = near_separable(30)
    return np.sign(features) * scale, targets


TRAINERS = {
    "stumps": lambda f, t: bob_boost.Boosting(bob_boost.StumpTrainer(max_bins=None),
                                              bob_boost.ExponentialLoss()).train(f, t, 10),
    "quantised_stumps": lambda f, t: bob_boost.Boosting(bob_boost.StumpTrainer(max_bins=4),
                                                        bob_boost.ExponentialLoss()).train(f, t, 10),
    "trees": lambda f, t: bob_boost.Boosting(bob_boost.TreeTrainer(min_samples_leaf=1),
                                             bob_boost.SquaredLoss()).train(f, t, 10),
    "adaboostdb": lambda f, t: bob_boost.AdaBoostDBTrainer(1.0, 2.0).train(f, t, 10),
    "samme": lambda f, t: bob_boost.SAMMETrainer(number_of_rounds=10).train(f, (t > 0).astype(int)),
    "samme_exact": lambda f, t: bob_boost.SAMMETrainer(bob_boost.CostSensitiveTreeTrainer(quantized=False),
                                                       number_of_rounds=10).train(f, (t > 0).astype(int)),
}


@pytest.mark.parametrize("scale", [1e-310, 5e-324, 1e300])
@pytest.mark.parametrize("trainer", sorted(TRAINERS))
def test_denormal_and_huge_features(trainer, scale):
    """Denormals (down to the smallest, 5e-324) and 1e300: thresholds between values stay finite."""
    features, targets = _extreme(scale)
    machine = TRAINERS[trainer](features, targets)
    assert len(machine) >= 1
    assert_valid_model(machine, features)


@pytest.mark.parametrize("trainer", sorted(TRAINERS))
def test_largest_finite_features_in_two_columns(trainer):
    """+-1.7e308 in single columns: the midpoint threshold of -max and +max is finite (0)."""
    features = np.array([[1.7e308], [-1.7e308], [1.7e308], [-1.7e308], [1.0], [-1.0]])
    targets = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
    machine = TRAINERS[trainer](features, targets)
    assert len(machine) >= 1
    assert_valid_model(machine, features)


@pytest.mark.parametrize("trainer", sorted(TRAINERS))
def test_features_whose_sum_overflows(trainer):
    features, targets = _extreme(1e308)
    machine = TRAINERS[trainer](features, targets)
    assert_valid_model(machine, features)


# -- one sample, one feature ------------------------------------------------------------------------------
def test_one_sample():
    """One sample: stumps cannot split (error naming ``features``), AdaBoostDB needs both classes; trees
    fit the constant; SAMME a constant learner."""
    features, targets = np.array([[1.0]]), np.array([1.0])
    with pytest.raises(ValueError, match="features: every feature is constant"):
        bob_boost.Boosting(bob_boost.StumpTrainer(), bob_boost.ExponentialLoss()).train(features, targets, 3)
    with pytest.raises(ValueError, match="targets: both classes"):
        bob_boost.AdaBoostDBTrainer(1.0, 1.0).train(features, targets, 3)
    machine = bob_boost.Boosting(bob_boost.TreeTrainer(), bob_boost.SquaredLoss()).train(features, targets, 3)
    assert_valid_model(machine, features)
    machine = bob_boost.SAMMETrainer(number_of_rounds=3).train(features, [0])
    assert_valid_model(machine, features)
    assert machine.predict(features)[0] == 0


def test_one_feature():
    features, targets = near_separable()
    column = features[:, :1]
    for machine in (bob_boost.Boosting(bob_boost.StumpTrainer(), bob_boost.ExponentialLoss()).train(column, targets,
                                                                                                    20),
                    bob_boost.AdaBoostDBTrainer(1.0, 1.0).train(column, targets, 20),
                    bob_boost.SAMMETrainer(number_of_rounds=20).train(column, (targets > 0).astype(int)),
                    bob_boost.Boosting(bob_boost.TreeTrainer(min_samples_leaf=1), bob_boost.LogitLoss()).train(
                        column, targets, 20)):
        assert len(machine) >= 1
        assert_valid_model(machine, column)
    discrete = _rng().integers(0, 3, size=(60, 1))
    machine = bob_boost.Boosting(bob_boost.LUTTrainer(3), bob_boost.ExponentialLoss()).train(discrete, targets, 20)
    assert_valid_model(machine, discrete)


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (3,)])
def test_empty_and_one_dimensional_data_name_the_features(shape):
    targets = np.ones(shape[0]) if shape[0] else np.ones(0)
    with pytest.raises(InvalidValueError, match="features"):
        bob_boost.Boosting(bob_boost.StumpTrainer(), bob_boost.ExponentialLoss()).train(np.ones(shape), targets, 3)
