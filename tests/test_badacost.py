"""BAdaCost, SAMME, AdaBoost.M1, the CMEL loss and the detection helpers."""
import numpy as np
import pytest

from bob_boost import BoostedMachine, Boosting, LUTTrainer
from bob_boost.costs import cost_star, face_detection_cost_matrix, margin_cost_matrix, samme_cost_matrix
from bob_boost.detection import (calibrate_cascade, detection_scores, early_exit_evaluate, positive_scores,
                                 score_traces)
from bob_boost.losses.cmel import CMELoss
from bob_boost.registry import loss_class
from bob_boost.exceptions import ConvergenceWarning
from bob_boost.trainers.badacost import AdaBoostM1Trainer, BAdaCostTrainer, SAMMETrainer, optimal_step
from bob_boost.trainers.cost_sensitive import CostSensitiveAdaBoostTrainer
from bob_boost.weak_trainers.multiclass import CostSensitiveTreeTrainer, MultiClassLUTTrainer, MultiClassStumpTrainer


def gaussian_classes(n_per_class, centers, seed, spread=1.0):
    """Isotropic Gaussian blobs, one per class, in as many dimensions as the centers have."""
    rng = np.random.default_rng(seed)
    centers = np.asarray(centers, dtype=float)
    labels = np.repeat(np.arange(len(centers)), n_per_class)
    features = centers[labels] + spread * rng.normal(size=(labels.size, centers.shape[1]))
    return features, labels


CENTERS = [[0, 0, 0], [2, 0, 0], [0, 2, 0], [0, 0, 2]]


def replay_weights(machine, features, labels):
    """Per-round normalised BAdaCost weights w_n ~ exp(C*[l_n] . f_{m-1}(x_n)), recomputed from the model."""
    star = cost_star(machine.cost_matrix)
    scores = np.zeros((labels.size, machine.number_of_outputs))
    for weak, weight in zip(machine.weak_machines, machine.weights):
        log_weights = np.sum(star[labels] * scores, axis=1)
        weights = np.exp(log_weights - log_weights.max())
        yield weak, weight[0], weights / weights.sum()
        scores += weight * weak.forward(features)


# -- the step -------------------------------------------------------------------
def test_optimal_step_solves_the_samme_equation():
    k, error = 4, 0.3
    exponents = margin_cost_matrix(samme_cost_matrix(k))
    confusion = np.full((k, k), error / (k * (k - 1)))
    np.fill_diagonal(confusion, (1 - error) / k)
    expected = (k - 1) ** 2 / k * (np.log((1 - error) / error) + np.log(k - 1))
    assert optimal_step(confusion, exponents) == pytest.approx(expected, rel=1e-12)


def test_optimal_step_minimises_the_convex_function():
    rng = np.random.default_rng(4)
    exponents = margin_cost_matrix(rng.uniform(0, 3, (3, 3)) * (1 - np.eye(3)))
    confusion = rng.uniform(0, 1, (3, 3)) + 3 * np.eye(3)
    beta = optimal_step(confusion, exponents)

    def phi(value):
        return np.sum(confusion * np.exp(value * exponents))
    assert beta > 0
    assert phi(beta) < phi(beta * (1 + 1e-6)) and phi(beta) < phi(beta * (1 - 1e-6))
    derivative = np.sum(confusion * exponents * np.exp(beta * exponents))
    assert abs(derivative) < 1e-12 * np.sum(np.abs(confusion * exponents * np.exp(beta * exponents)))


def test_optimal_step_edge_cases():
    exponents = np.array([[-1.0, 1.0], [2.0, -2.0]])
    assert optimal_step(np.diag([0.5, 0.5]), exponents) == np.inf
    assert optimal_step(np.array([[0, 0.5], [0.5, 0]]), exponents) == -np.inf
    assert optimal_step(np.array([[0.4, 0.6], [0.0, 0.0]]), exponents) < 0
    assert optimal_step(np.array([[0.5, 0.5], [0.0, 0.0]]), exponents) == 0.0
    with pytest.raises(ValueError, match="confusion"):
        optimal_step(-np.eye(2), exponents)
    with pytest.raises(ValueError, match="exponents"):
        optimal_step(np.eye(2), np.zeros((3, 3)))


# -- SAMME ------------------------------------------------------------------------
def test_samme_is_badacost_with_the_scaled_zero_one_matrix():
    """Classic SAMME, written out here, picks the same trees; BAdaCost's beta is (K-1)^2/K times its alpha."""
    k = 4
    features, labels = gaussian_classes(100, CENTERS, 0, spread=1.2)
    tree = CostSensitiveTreeTrainer(max_depth=2, quantized=False)
    machine = BAdaCostTrainer(samme_cost_matrix(k), tree, number_of_rounds=12).train(features, labels)
    assert len(machine) == 12

    weights = np.full(labels.size, 1 / labels.size)
    prepared = tree.prepare(features)
    for weak, beta in zip(machine.weak_machines, machine.weights[:, 0]):
        reference = tree.train(prepared, labels, weights, 1 - np.eye(k))
        assert reference == weak
        wrong = reference.predict_labels(features) != labels
        error = weights[wrong].sum()
        alpha = np.log((1 - error) / error) + np.log(k - 1)
        assert beta == pytest.approx((k - 1) ** 2 / k * alpha, rel=1e-9)
        weights = weights * np.exp(alpha * wrong)
        weights /= weights.sum()

    samme = SAMMETrainer(tree, number_of_rounds=12).train(features, labels)
    assert samme.weak_machines == machine.weak_machines
    np.testing.assert_allclose(samme.weights, machine.weights, rtol=1e-12)


def test_adaboost_m1_weights_and_stopping_rule():
    features, labels = gaussian_classes(80, CENTERS[:3], 1)
    tree = CostSensitiveTreeTrainer(2, quantized=False)
    machine = AdaBoostM1Trainer(tree, number_of_rounds=20).train(features, labels)
    assert 3 <= len(machine) < 20
    weights = np.full(labels.size, 1 / labels.size)
    for weak, alpha in zip(machine.weak_machines, machine.weights[:, 0]):
        wrong = weak.predict_labels(features) != labels
        error = weights[wrong].sum()
        assert alpha == pytest.approx(np.log((1 - error) / error), rel=1e-9)
        weights = weights * np.exp(alpha * wrong)
        weights /= weights.sum()
    # training stopped because the next learner's weighted error reached 1/2
    following = tree.train(features, labels, weights, 1 - np.eye(3))
    assert weights[following.predict_labels(features) != labels].sum() >= 0.5
    votes = np.zeros((labels.size, 3))
    for weak, alpha in zip(machine.weak_machines, machine.weights[:, 0]):
        votes[np.arange(labels.size), weak.predict_labels(features)] += alpha
    np.testing.assert_array_equal(machine.predict(features), np.argmax(votes, axis=1))
    # a stump names 2 of 4 balanced classes, so its weighted error is at least 1/2: M1 cannot start, SAMME can
    features, labels = gaussian_classes(50, CENTERS, 2)
    with pytest.warns(ConvergenceWarning, match="AdaBoostM1Trainer round 1: the weak learner's step is 0"):
        assert len(AdaBoostM1Trainer(MultiClassStumpTrainer(), number_of_rounds=5).train(features, labels)) == 0
    assert len(SAMMETrainer(MultiClassStumpTrainer(), number_of_rounds=5).train(features, labels)) == 5


# -- K = 2: Cost-Sensitive AdaBoost ---------------------------------------------------
def test_two_class_badacost_step_is_half_the_cost_sensitive_adaboost_step():
    """With C = [[0, C_P], [C_N, 0]] and class 0 as the positive class, C2 = 2 C*, so CS-AdaBoost's
    alpha (exponent C_y alpha) is twice BAdaCost's beta (exponent 2 C_y beta)."""
    cost_positive, cost_negative = 0.1, 0.3
    features, labels = gaussian_classes(150, [[0, 0], [1.5, 0.5]], 3)
    machine = BAdaCostTrainer([[0, cost_positive], [cost_negative, 0]], MultiClassStumpTrainer(),
                              number_of_rounds=6).train(features, labels)
    assert len(machine) == 6
    reference = CostSensitiveAdaBoostTrainer(cost_positive, cost_negative)
    targets = np.where(labels == 0, 1.0, -1.0)
    for weak, beta, weights in replay_weights(machine, features, labels):
        predictions = np.where(weak.predict_labels(features) == 0, 1.0, -1.0)
        alpha = reference.optimal_step(targets, predictions, weights)
        assert alpha == pytest.approx(2 * beta, rel=1e-8)


# -- costs change the decisions ----------------------------------------------------------
def test_an_expensive_confusion_is_made_less_often_than_with_samme():
    centers = [[0, 0], [1.2, 0], [0.6, 1.0]]
    features, labels = gaussian_classes(300, centers, 4)
    test_features, test_labels = gaussian_classes(1000, centers, 5)
    costs = np.ones((3, 3)) - np.eye(3)
    costs[1, 2] = 8.0  # class 1 predicted as class 2 is expensive
    tree = CostSensitiveTreeTrainer(2)
    badacost = BAdaCostTrainer(0.1 * costs, tree, number_of_rounds=40).train(features, labels)
    samme = SAMMETrainer(tree, number_of_rounds=40).train(features, labels)

    def confusions(machine):
        predicted = machine.predict(test_features)
        return np.sum((test_labels == 1) & (predicted == 2))
    assert confusions(samme) > 50
    assert confusions(badacost) < 0.5 * confusions(samme)
    average = [costs[test_labels, m.predict(test_features)].mean() for m in (badacost, samme)]
    assert average[0] < average[1]


# -- the trained model --------------------------------------------------------------------
def test_model_predicts_with_the_cost_rule_and_survives_hdf5(tmp_path):
    features, labels = gaussian_classes(60, CENTERS, 6)
    costs = face_detection_cost_matrix(3, 2.0)
    machine = BAdaCostTrainer(costs, number_of_rounds=10).train(features, labels)
    scores = machine.decision_scores(features)
    np.testing.assert_array_equal(machine.predict(features), np.argmin(scores @ cost_star(costs).T, axis=1))
    np.testing.assert_allclose(scores.sum(axis=1), 0, atol=1e-9)  # sums of margin vectors
    path = tmp_path / "badacost.hdf5"
    machine.save(path)
    loaded = BoostedMachine.load(path)
    np.testing.assert_array_equal(loaded.cost_matrix, costs)
    assert loaded.weak_machines == machine.weak_machines
    np.testing.assert_array_equal(loaded.weights, machine.weights)
    np.testing.assert_array_equal(loaded.predict(features), machine.predict(features))
    assert loaded.metadata["trainer"] == "BAdaCostTrainer"


def test_shrinkage_scales_the_steps_and_feature_sampling_is_seeded():
    features, labels = gaussian_classes(60, CENTERS, 7)
    full = BAdaCostTrainer(samme_cost_matrix(4), number_of_rounds=1).train(features, labels)
    shrunk = BAdaCostTrainer(samme_cost_matrix(4), number_of_rounds=1, shrinkage=0.25).train(features, labels)
    assert shrunk.weights[0, 0] == pytest.approx(0.25 * full.weights[0, 0], rel=1e-12)

    def sampled(seed):
        return BAdaCostTrainer(samme_cost_matrix(4), number_of_rounds=8, feature_fraction=0.34,
                               random_state=seed).train(features, labels)
    first, again, other = sampled(3), sampled(3), sampled(4)
    assert first.weak_machines == again.weak_machines
    np.testing.assert_array_equal(first.weights, again.weights)
    assert all(m.feature_indices().size == 1 for m in first.weak_machines)  # one of 3 columns per round
    assert [m.feature_indices()[0] for m in first.weak_machines] != \
        [m.feature_indices()[0] for m in other.weak_machines]


def test_training_can_be_continued():
    features, labels = gaussian_classes(60, CENTERS, 8)
    costs = 0.2 * face_detection_cost_matrix(3, 1.5)
    at_once = BAdaCostTrainer(costs, number_of_rounds=9).train(features, labels)
    trainer = BAdaCostTrainer(costs)
    continued = trainer.train(features, labels, number_of_rounds=5)
    trainer.train(features, labels, number_of_rounds=4, boosted_machine=continued)
    assert continued.weak_machines == at_once.weak_machines
    np.testing.assert_allclose(continued.weights, at_once.weights, rtol=1e-9)
    m1 = AdaBoostM1Trainer(number_of_rounds=4).train(features, labels)
    m1_continued = AdaBoostM1Trainer().train(features, labels, 2)
    AdaBoostM1Trainer().train(features, labels, 2, boosted_machine=m1_continued)
    np.testing.assert_allclose(m1_continued.weights, m1.weights, rtol=1e-9)


@pytest.mark.parametrize("make_trainer", [
    lambda: BAdaCostTrainer(0.2 * face_detection_cost_matrix(3, 1.5)), lambda: SAMMETrainer(),
    lambda: AdaBoostM1Trainer()], ids=["badacost", "samme", "adaboost-m1"])
def test_callback_gets_every_round_with_the_training_scores(make_trainer):
    features, labels = gaussian_classes(40, CENTERS, 12)
    calls = []

    def callback(round_index, machine, scores):
        # the scores of the weak machines so far, summed here from the machine's parts
        expected = sum(w * m.forward(features) for m, w in zip(machine.weak_machines, machine.weights))
        calls.append((round_index, len(machine), machine))
        np.testing.assert_allclose(scores, expected, rtol=1e-12, atol=1e-12)
        assert scores.shape == (labels.size, 4)

    trainer = make_trainer()
    first = trainer.train(features, labels, 3, callback=callback)
    assert [(i, n) for i, n, _ in calls] == [(0, 1), (1, 2), (2, 3)] and all(m is first for _, _, m in calls)
    calls.clear()
    trainer.train(features, labels, 2, boosted_machine=first, callback=callback)  # scores go on from the model
    added = len(first) - 3  # AdaBoost.M1 may stop early
    assert added >= 1 and [(i, n) for i, n, _ in calls] == [(i, 4 + i) for i in range(added)]
    with pytest.raises(TypeError, match="callback: "):
        trainer.train(features, labels, 1, callback="print")


def test_callback_sees_the_round_that_ends_training():
    features = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    labels = np.array([0, 0, 1, 1, 2, 2])
    calls = []
    machine = SAMMETrainer(CostSensitiveTreeTrainer(2), number_of_rounds=10).train(
        features, labels, callback=lambda i, m, s: calls.append(i))
    assert calls == [0] and len(machine) == 1  # the perfect first learner ends training


def test_a_perfect_weak_learner_gets_a_finite_step_and_ends_training():
    features = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    labels = np.array([0, 0, 1, 1, 2, 2])
    machine = SAMMETrainer(CostSensitiveTreeTrainer(2), number_of_rounds=10).train(features, labels)
    assert len(machine) == 1 and np.isfinite(machine.weights[0, 0]) and machine.weights[0, 0] > 0
    np.testing.assert_array_equal(machine.predict(features), labels)


def test_lut_weak_learner_for_discrete_features():
    rng = np.random.default_rng(9)
    features = rng.integers(0, 8, size=(400, 5))
    labels = np.where(features[:, 1] < 3, 0, np.where(features[:, 3] < 4, 1, 2))
    machine = SAMMETrainer(MultiClassLUTTrainer(8), number_of_rounds=30).train(features, labels)
    assert np.mean(machine.predict(features) == labels) > 0.9


@pytest.mark.parametrize("call, error, message", [
    (lambda x, y: BAdaCostTrainer([[0, 1], [-1, 0]]), ValueError, "cost_matrix"),
    (lambda x, y: BAdaCostTrainer(samme_cost_matrix(4), shrinkage=0.0), ValueError, "shrinkage"),
    (lambda x, y: BAdaCostTrainer(samme_cost_matrix(4), feature_fraction=1.5), ValueError, "feature_fraction"),
    (lambda x, y: BAdaCostTrainer(samme_cost_matrix(4), weak_learner=object()), TypeError, "weak_learner"),
    (lambda x, y: BAdaCostTrainer(samme_cost_matrix(4), number_of_rounds=0), ValueError, "number_of_rounds"),
    (lambda x, y: BAdaCostTrainer(samme_cost_matrix(4), random_state="a"), TypeError, "random_state"),
    (lambda x, y: BAdaCostTrainer(samme_cost_matrix(3)).train(x, y), ValueError, "labels: label 3"),
    (lambda x, y: BAdaCostTrainer(samme_cost_matrix(4)).train(x, y[:-1]), ValueError, "labels: has 239"),
    (lambda x, y: BAdaCostTrainer(samme_cost_matrix(4)).train(x, y + 0.5), ValueError, "labels.*integers"),
    (lambda x, y: BAdaCostTrainer(samme_cost_matrix(4)).train(x[:, 0], y), ValueError, "features"),
    (lambda x, y: BAdaCostTrainer(samme_cost_matrix(4)).train(x, y, 0), ValueError, "number_of_rounds"),
    (lambda x, y: BAdaCostTrainer(samme_cost_matrix(4)).train(
        x, y, boosted_machine=BoostedMachine(cost_matrix=np.ones((4, 4)) - np.eye(4))),
     ValueError, "boosted_machine"),
    (lambda x, y: SAMMETrainer(number_of_classes=1), ValueError, "number_of_classes"),
    (lambda x, y: SAMMETrainer().train(x, y - 1), ValueError, "labels.*>= 0"),
    (lambda x, y: AdaBoostM1Trainer().train(x, y.astype(str)), TypeError, "labels"),
])
def test_bad_input_is_rejected(call, error, message):
    features, labels = gaussian_classes(60, CENTERS, 10)
    with pytest.raises(error, match=message):
        call(features, labels)


# -- the CMEL loss in the generic trainer ---------------------------------------------------
def test_cmel_loss_values_gradient_and_targets():
    costs = np.array([[0.0, 1.0, 2.0], [0.5, 0.0, 1.0], [3.0, 1.0, 0.0]])
    loss = CMELoss(costs)
    assert loss_class("cmel") is CMELoss
    targets = loss.check_targets([2, 0])
    np.testing.assert_allclose(targets, [[-0.5, -0.5, 1.0], [1.0, -0.5, -0.5]])
    np.testing.assert_array_equal(loss.check_targets(targets), targets)
    scores = np.array([[0.3, -0.2, 0.1], [1.0, 0.4, -0.7]])
    # C*[2] = (3, 1, -4), C*[0] = (-3, 1, 2)
    expected = np.exp([3 * 0.3 - 0.2 - 4 * 0.1, -3 * 1.0 + 0.4 - 2 * 0.7])
    np.testing.assert_allclose(loss.loss(targets, scores)[:, 0], expected, rtol=1e-12)
    gradient = loss.loss_gradient(targets, scores)
    step = 1e-6
    for output in range(3):
        shifted = scores.copy()
        shifted[:, output] += step
        numeric = (loss.loss(targets, shifted) - loss.loss(targets, scores - (shifted - scores)))[:, 0] / (2 * step)
        np.testing.assert_allclose(gradient[:, output], numeric, rtol=1e-6)
    for bad, message in (([0, 3], "targets: label 3"), ([0.5, 1], "integers"),
                         (np.ones((2, 3)), "margin vectors"), (np.ones((2, 4)), "margin vectors")):
        with pytest.raises(ValueError, match=message):
            loss.check_targets(bad)
    with pytest.raises(ValueError, match="cost_matrix"):
        CMELoss(np.ones((3, 3)))


def test_cmel_loss_drives_the_generic_trainer_with_multivariate_luts(tmp_path):
    rng = np.random.default_rng(11)
    features = rng.integers(0, 6, size=(600, 4))
    clean = np.where(features[:, 0] < 2, 0, np.where(features[:, 2] < 3, 1, 2))
    labels = np.where(rng.uniform(size=600) < 0.15, rng.integers(0, 3, 600), clean)
    symmetric = 0.5 * (np.ones((3, 3)) - np.eye(3))
    costs = symmetric.copy()
    costs[2, 0] = 2.0  # class 2 predicted as class 0 is expensive

    def train(cost_matrix):
        loss = CMELoss(cost_matrix)
        targets = loss.check_targets(labels)
        losses = []
        machine = Boosting(LUTTrainer(6, 3), loss).train(
            features, labels, 15, callback=lambda i, m, scores: losses.append(loss.loss(targets, scores).sum()))
        assert len(machine) == 15 and np.all(np.diff(losses) < 0)
        return machine

    machine = train(costs)
    np.testing.assert_array_equal(machine.cost_matrix, costs)
    predicted = machine.predict(features)
    np.testing.assert_array_equal(predicted,
                                  np.argmin(machine.decision_scores(features) @ cost_star(costs).T, axis=1))
    assert np.mean(predicted == clean) > 0.8
    baseline = train(symmetric).predict(features)
    assert np.sum((labels == 2) & (predicted == 0)) < np.sum((labels == 2) & (baseline == 0))
    machine.save(tmp_path / "cmel.hdf5")
    loaded = BoostedMachine.load(tmp_path / "cmel.hdf5")
    np.testing.assert_array_equal(loaded.cost_matrix, costs)
    np.testing.assert_array_equal(loaded.predict(features), predicted)


# -- detection -----------------------------------------------------------------------------
def detection_problem():
    centers = [[0, 0, 0], [2.5, 0, 0], [0, 2.5, 0]]
    features, labels = gaussian_classes(200, centers, 12)
    features = np.vstack([features, gaussian_classes(600, [[0, 0, 0]], 13)[0]])  # many more negatives
    labels = np.concatenate([labels, np.zeros(600, dtype=int)])
    machine = BAdaCostTrainer(face_detection_cost_matrix(2, 1.5), number_of_rounds=25).train(features, labels)
    return machine, features, labels


def test_positive_score_is_background_cost_minus_the_cheapest_object_cost():
    costs = face_detection_cost_matrix(2, 1.5)
    scores = np.array([[1.0, -0.5, -0.5], [-0.5, 1.0, -0.5]])
    # c = C* f: C* rows (-2, 1, 1), (1.5, -2.5, 1), (1.5, 1, -2.5)
    c = scores @ cost_star(costs).T
    np.testing.assert_allclose(positive_scores(scores, costs), c[:, 0] - c[:, 1:].min(axis=1))
    np.testing.assert_allclose(positive_scores(scores, costs), [-5.25, 5.25])
    with pytest.raises(ValueError, match="scores"):
        positive_scores(np.ones((2, 2)), costs)
    with pytest.raises(ValueError, match="cost_matrix: .*non-negative"):
        positive_scores(scores, -costs)
    with pytest.raises(ValueError, match="cost_matrix: .*square"):
        positive_scores(scores, costs[0])
    with pytest.raises(ValueError, match="cost_matrix: .*diagonal"):
        positive_scores(scores, costs + np.eye(3))


def test_traces_calibration_and_early_exit():
    machine, features, labels = detection_problem()
    traces = score_traces(machine, features)
    assert traces.shape == (labels.size, len(machine))
    np.testing.assert_allclose(traces[:, -1], detection_scores(machine, features), atol=1e-12)
    threshold = calibrate_cascade(machine, features, labels)
    assert threshold == pytest.approx(traces[labels > 0].min())
    scores, predicted, evaluated = early_exit_evaluate(machine, features, threshold)
    positives = labels > 0
    assert np.all(evaluated[positives] == len(machine))  # no training positive is rejected early
    np.testing.assert_array_equal(predicted[positives], machine.predict(features[positives]))
    full = evaluated == len(machine)
    np.testing.assert_allclose(scores[full], traces[full, -1], atol=1e-12)
    rejected = ~full
    assert rejected.sum() > 100 and np.all(predicted[rejected] == 0)
    np.testing.assert_allclose(scores[rejected], traces[rejected, evaluated[rejected] - 1], atol=1e-12)
    assert np.all(scores[rejected] < threshold)
    assert evaluated[~positives].mean() < 0.8 * len(machine)
    never = early_exit_evaluate(machine, features, -np.inf)
    np.testing.assert_array_equal(never[1], machine.predict(features))
    assert np.all(never[2] == len(machine))


def test_detection_rejects_bad_input():
    machine, features, labels = detection_problem()
    with pytest.raises(ValueError, match="no positive"):
        calibrate_cascade(machine, features, np.zeros(labels.size, dtype=int))
    with pytest.raises(ValueError, match="features"):
        score_traces(machine, features[:, :2])
    with pytest.raises(TypeError, match="threshold"):
        early_exit_evaluate(machine, features, "low")
    with pytest.raises(ValueError, match="threshold: .*NaN"):
        early_exit_evaluate(machine, features, np.nan)
    with pytest.raises(ValueError, match="cost matrix"):
        detection_scores(BoostedMachine(number_of_outputs=3), features)
