"""Sample weights on the losses and on every trainer."""
import numpy as np
import pytest

from bob_boost import (AdaBoostDBTrainer, AdaBoostM1Trainer, BAdaCostTrainer, Boosting, CMELoss,
                       CostSensitiveAdaBoostTrainer, DoubleBaseLoss, ExponentialLoss, JesorskyLoss, LogitLoss,
                       LossFunction, LUTTrainer, SAMMETrainer, SquaredLoss, StumpTrainer, TangentialLoss)

COSTS = [[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]]


@pytest.fixture
def data():
    rng = np.random.default_rng(5)
    features = rng.normal(size=(150, 4))
    noise = rng.normal(scale=0.8, size=150)
    signed = np.where(features[:, 0] + noise > 0, 1.0, -1.0)
    classes = (features[:, 0] + noise > 0).astype(int) + (features[:, 1] - noise > 0.5)
    weights = rng.uniform(0.2, 3.0, size=150)
    return features, signed, classes, weights


#: L-BFGS stops at a mean gradient of 1e-12: weights that round differently (scaled by 3.7, or repeated
#: samples, which change the number the objective is divided by) move its stopping point by about 1e-9.
LBFGS_TOLERANCE = 1e-7


def _same(first, second, tolerance: float = 0.0) -> None:
    assert [repr(m) for m in first.weak_machines] == [repr(m) for m in second.weak_machines]
    if tolerance:
        np.testing.assert_allclose(first.weights, second.weights, rtol=tolerance, atol=0)
    else:
        np.testing.assert_array_equal(first.weights, second.weights)


LOSSES = [
    (ExponentialLoss(), lambda t: t), (LogitLoss(), lambda t: t), (TangentialLoss(), lambda t: t),
    (SquaredLoss(), lambda t: 3.0 * t), (DoubleBaseLoss(1.0, 4.0), lambda t: t),
]


@pytest.mark.parametrize("loss, make_targets", LOSSES, ids=lambda v: type(v).__name__)
def test_every_loss_method_weighs_each_sample(loss, make_targets):
    rng = np.random.default_rng(0)
    targets = make_targets(np.where(rng.normal(size=(40, 1)) > 0, 1.0, -1.0))
    scores = rng.normal(size=(40, 1))
    weights = rng.uniform(0.0, 2.0, size=40)
    np.testing.assert_array_equal(loss.loss(targets, scores, weights), weights[:, None] * loss.loss(targets, scores))
    np.testing.assert_array_equal(loss.loss_gradient(targets, scores, weights),
                                  weights[:, None] * loss.loss_gradient(targets, scores))
    values, gradients = loss.loss_and_gradient(targets, scores, weights)
    plain_values, plain_gradients = loss.loss_and_gradient(targets, scores)
    np.testing.assert_array_equal(values, weights[:, None] * plain_values)
    np.testing.assert_array_equal(gradients, weights[:, None] * plain_gradients)
    step = rng.normal(size=(40, 1))
    total = loss.loss_sum(0.3, targets, scores, step, weights)
    assert total == pytest.approx(float(np.sum(weights[:, None] * loss.loss(targets, scores + 0.3 * step))))
    slope = loss.loss_gradient_sum(0.3, targets, scores, step, weights)
    np.testing.assert_allclose(slope, np.sum(weights[:, None] * loss.loss_gradient(targets, scores + 0.3 * step)
                                             * step, axis=0))


def test_coupled_losses_weigh_each_sample():
    rng = np.random.default_rng(1)
    weights = rng.uniform(0.0, 2.0, size=30)
    cmel = CMELoss(COSTS)
    targets = cmel.check_targets(rng.integers(0, 3, size=30))
    scores = rng.normal(size=(30, 3))
    np.testing.assert_array_equal(cmel.loss(targets, scores, weights), weights[:, None] * cmel.loss(targets, scores))
    np.testing.assert_array_equal(cmel.loss_gradient(targets, scores, weights),
                                  weights[:, None] * cmel.loss_gradient(targets, scores))
    jesorsky = JesorskyLoss()
    points = rng.normal(size=(30, 6))
    guess = points + rng.normal(scale=0.1, size=(30, 6))
    np.testing.assert_array_equal(jesorsky.loss(points, guess, weights),
                                  weights[:, None] * jesorsky.loss(points, guess))


def test_a_loss_written_without_sample_weight_is_weighted_by_the_base_class(data):
    features, signed, _, weights = data

    class Hinge2(LossFunction):  # a third-party loss of bob_boost 0.1: no sample_weight anywhere
        def loss(self, targets, scores):
            return np.maximum(0.0, 1.0 - targets * scores) ** 2

        def loss_gradient(self, targets, scores):
            return -2.0 * targets * np.maximum(0.0, 1.0 - targets * scores)

    loss = Hinge2()
    targets, scores = signed[:, None], np.zeros((signed.size, 1))
    step = np.ones((signed.size, 1))
    assert loss.loss_sum(0.5, targets, scores, step, weights) == pytest.approx(
        float(np.sum(weights * (np.maximum(0.0, 1.0 - 0.5 * signed)) ** 2)))
    machine = Boosting(StumpTrainer(), loss).train(features, signed, 5, sample_weight=weights)
    assert len(machine) == 5


@pytest.mark.parametrize("make, kind", [
    (lambda: Boosting(StumpTrainer(), ExponentialLoss()), "signed"),
    (lambda: Boosting(LUTTrainer(3, 3), LogitLoss()), "lut"),
    (lambda: BAdaCostTrainer(COSTS, number_of_rounds=8), "classes"),
    (lambda: SAMMETrainer(number_of_rounds=8), "classes"),
    (lambda: AdaBoostM1Trainer(number_of_rounds=8), "classes"),
])
def test_scaling_every_weight_leaves_the_model_unchanged(data, make, kind):
    features, signed, classes, weights = data
    if kind == "lut":
        features = np.digitize(features, [-0.5, 0.5])
        targets = np.where(classes[:, None] == np.arange(3), 1.0, -1.0)
    else:
        targets = signed if kind == "signed" else classes
    rounds = {} if kind == "classes" else {"number_of_rounds": 8}
    reference = make().train(features, targets, sample_weight=weights, **rounds)
    assert len(reference) >= 3
    _same(reference, make().train(features, targets, sample_weight=4.0 * weights, **rounds))  # exact: a power of 2
    _same(reference, make().train(features, targets, sample_weight=3.7 * weights, **rounds), tolerance=LBFGS_TOLERANCE)
    unweighted = make().train(features, targets, **rounds)
    assert not np.array_equal(unweighted.weights, reference.weights)  # the weights did matter


def test_integer_weights_weigh_as_repeated_samples(data):
    features, signed, _, _ = data
    counts = np.random.default_rng(2).integers(1, 4, size=signed.size)
    weighted = Boosting(StumpTrainer(), LogitLoss()).train(features, signed, 10, sample_weight=counts)
    repeated = Boosting(StumpTrainer(), LogitLoss()).train(np.repeat(features, counts, axis=0),
                                                            np.repeat(signed, counts), 10)
    _same(weighted, repeated, tolerance=LBFGS_TOLERANCE)


def test_zero_weights_remove_samples_from_the_loss(data):
    features, _, classes, _ = data
    weights = np.where(classes == 2, 0.0, 1.0)
    machine = SAMMETrainer(number_of_rounds=5).train(features, classes, sample_weight=weights)
    kept = classes != 2
    # samples without weight never count: the machine equals one trained on the others alone for K = 3
    alone = SAMMETrainer(number_of_classes=3, number_of_rounds=5).train(features[kept], classes[kept])
    np.testing.assert_allclose(machine.weights, alone.weights, rtol=1e-9)


@pytest.mark.parametrize("weights, error, message", [
    (np.ones(3), ValueError, r"sample_weight: expected shape \(150,\), got \(3,\)"),
    (-np.ones(150), ValueError, "sample_weight: must be finite and non-negative"),
    (np.full(150, np.nan), ValueError, "sample_weight: must be finite and non-negative"),
    (np.zeros(150), ValueError, "sample_weight: every weight is zero"),
    (np.array(["a"] * 150), TypeError, "sample_weight: expected numbers"),
])
def test_bad_sample_weight(data, weights, error, message):
    features, signed, classes, _ = data
    with pytest.raises(error, match=message):
        Boosting(StumpTrainer(), ExponentialLoss()).train(features, signed, 3, sample_weight=weights)
    with pytest.raises(error, match=message):
        BAdaCostTrainer(COSTS, number_of_rounds=3).train(features, classes, sample_weight=weights)


def test_the_callers_weights_are_not_modified(data):
    features, signed, _, weights = data
    before = weights.copy()
    Boosting(StumpTrainer(), ExponentialLoss()).train(features, signed, 3, sample_weight=weights)
    np.testing.assert_array_equal(weights, before)


@pytest.mark.parametrize("make", [lambda: AdaBoostDBTrainer(1.0, 3.0), lambda: CostSensitiveAdaBoostTrainer(1.0, 3.0)])
def test_the_cost_sensitive_trainers_take_sample_weight_too(data, make):
    features, signed, _, weights = data
    older = make().train(features, signed, 6, sample_weights=weights)
    newer = make().train(features, signed, 6, sample_weight=weights)
    _same(older, newer)
    # the initial distribution is normalised in the log domain: scaling changes the model by rounding only
    _same(older, make().train(features, signed, 6, sample_weight=3.7 * weights), tolerance=1e-12)
    with pytest.raises(ValueError, match="give sample_weight or its older name sample_weights, not both"):
        make().train(features, signed, 6, sample_weights=weights, sample_weight=weights)


def test_rows_of_positive_weight_are_trained_on_without_a_copy():
    """Dropping rows of zero weight copies the rows kept; with every weight positive nothing is dropped, and the
    features are not copied: fitting the default classifier traces less memory than the features take."""
    import tracemalloc

    from bob_boost.sklearn import BoostingClassifier
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100_000, 20))
    y = (X[:, 0] > 0).astype(int)
    BoostingClassifier(n_estimators=2).fit(X[:500], y[:500])  # the kernels compiled outside the trace
    for weights in (None, np.ones(y.size)):
        tracemalloc.start()
        try:
            BoostingClassifier(n_estimators=2, early_stopping=False).fit(X, y, sample_weight=weights)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < X.nbytes
