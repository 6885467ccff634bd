"""The regression, count and focal losses: derivatives against finite differences, optimal constants against a
numerical minimiser, training from the optimal constant, files and ONNX of log-link models, and bad input."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

import bob_boost
from bob_boost.boosting.partitions import LocalRows
from bob_boost.losses import (AbsoluteErrorLoss, CMELoss, FocalLoss, GammaLoss, HuberLoss, PoissonLoss, QuantileLoss,
                              TweedieLoss)
from bob_boost.losses.robust import weighted_quantile
from bob_boost.recipes import make_regression_loss
from bob_boost.registry import loss_class
from bob_boost.trainers.partitioned import PartitionedBoosting

RNG = np.random.default_rng(0)
POSITIVE = RNG.gamma(2.0, 1.5, size=(300, 1))
COUNTS = RNG.poisson(2.0, size=(300, 1)).astype(float)
SIGNS = np.where(RNG.random((300, 1)) < 0.3, 1.0, -1.0)
REAL = RNG.standard_t(3, size=(300, 1)) * 2.0 + 1.0
SCORES = RNG.normal(0.0, 1.5, size=(300, 1))

#: (loss, targets) pairs; every loss's targets as it accepts them.
CASES = [
    (HuberLoss(1.3), REAL), (AbsoluteErrorLoss(), REAL), (QuantileLoss(0.8), REAL),
    (PoissonLoss(), COUNTS), (GammaLoss(), POSITIVE), (TweedieLoss(1.3), COUNTS), (TweedieLoss(1.8), POSITIVE),
    (FocalLoss(2.0), SIGNS), (FocalLoss(0.5, alpha=0.25), SIGNS),
]
IDS = [repr(loss) for loss, _ in CASES]


def _away_from_kinks(loss, targets, scores, gap=1e-3):
    """Samples where the loss is smooth within ``gap`` (the residual losses' kinks excluded)."""
    residual = np.abs(scores - targets)
    if isinstance(loss, HuberLoss):
        return np.abs(residual - loss.delta) > gap
    if isinstance(loss, (AbsoluteErrorLoss, QuantileLoss)):
        return residual > gap
    return np.ones(targets.shape, dtype=bool)


@pytest.mark.parametrize("loss, targets", CASES, ids=IDS)
def test_the_gradient_is_the_derivative_of_the_loss(loss, targets):
    h = 1e-6
    numerical = (loss.loss(targets, SCORES + h) - loss.loss(targets, SCORES - h)) / (2 * h)
    smooth = _away_from_kinks(loss, targets, SCORES)
    np.testing.assert_allclose(loss.loss_gradient(targets, SCORES)[smooth], numerical[smooth], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("loss, targets", [c for c in CASES if not isinstance(c[0], (AbsoluteErrorLoss, QuantileLoss,
                                                                                       HuberLoss))],
                         ids=[i for i, c in zip(IDS, CASES) if not isinstance(c[0], (AbsoluteErrorLoss, QuantileLoss,
                                                                                     HuberLoss))])
def test_the_hessian_is_the_derivative_of_the_gradient(loss, targets):
    h = 1e-6
    numerical = (loss.loss_gradient(targets, SCORES + h) - loss.loss_gradient(targets, SCORES - h)) / (2 * h)
    hessian = loss.loss_hessian(targets, SCORES)
    # the focal loss's hessian is the second derivative where that is positive, and 0 elsewhere
    np.testing.assert_allclose(hessian, np.maximum(numerical, 0.0) if isinstance(loss, FocalLoss) else numerical,
                               rtol=1e-5, atol=1e-7)
    assert np.all(hessian >= 0)


def test_the_focal_hessian_is_clipped_only_where_the_loss_is_concave():
    loss = FocalLoss(2.0)
    margins = np.linspace(-8, 8, 161)[:, np.newaxis]
    targets = np.ones_like(margins)
    h = 1e-5
    numerical = (loss.loss_gradient(targets, margins + h) - loss.loss_gradient(targets, margins - h)) / (2 * h)
    concave = numerical < -1e-9
    assert concave.any() and np.all(margins[concave] < 0)  # only badly misclassified samples
    assert np.all(loss.loss_hessian(targets, margins)[concave] == 0.0)


@pytest.mark.parametrize("loss", [HuberLoss(0.7), AbsoluteErrorLoss(), QuantileLoss(0.3)], ids=repr)
def test_robust_losses_bound_their_second_derivative_by_one(loss):
    """Their hessian is the constant 1: Huber's true second derivative is 1 or 0, the others' 0 (a.e.)."""
    assert np.array_equal(loss.loss_hessian(REAL, SCORES), np.ones_like(REAL))
    h = 1e-4
    numerical = (loss.loss_gradient(REAL, SCORES + h) - loss.loss_gradient(REAL, SCORES - h)) / (2 * h)
    smooth = _away_from_kinks(loss, REAL, SCORES, gap=1e-3)
    assert np.all(numerical[smooth] <= 1.0 + 1e-9)


def test_gamma_zero_and_one_are_the_logit_loss():
    logit = bob_boost.LogitLoss()
    np.testing.assert_allclose(FocalLoss(0.0).loss(SIGNS, SCORES), logit.loss(SIGNS, SCORES), rtol=1e-12)
    np.testing.assert_allclose(FocalLoss(0.0).loss_gradient(SIGNS, SCORES), logit.loss_gradient(SIGNS, SCORES),
                               rtol=1e-12)


def test_tweedie_powers_one_and_two_are_poisson_and_gamma():
    np.testing.assert_array_equal(TweedieLoss(1.0).loss(COUNTS, SCORES), PoissonLoss().loss(COUNTS, SCORES))
    np.testing.assert_array_equal(TweedieLoss(2.0).loss(POSITIVE, SCORES), GammaLoss().loss(POSITIVE, SCORES))
    # the deviance is continuous in the power: 1 + 1e-7 is within rounding of Poisson
    np.testing.assert_allclose(TweedieLoss(1.0 + 1e-7).loss(COUNTS, SCORES), PoissonLoss().loss(COUNTS, SCORES),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("loss, targets", CASES, ids=IDS)
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_the_baseline_is_the_constant_of_least_loss(loss, targets, weighted):
    weights = RNG.uniform(0.2, 3.0, size=targets.shape[0]) if weighted else None

    def total(score):
        values = loss.loss(targets, np.full_like(targets, score))[:, 0]
        return float(np.sum(values if weights is None else weights * values))
    found = loss.baseline(targets, weights)
    assert found.shape == (1,)
    best = minimize_scalar(total, bounds=(float(found[0]) - 5, float(found[0]) + 5), method="bounded",
                           options={"xatol": 1e-11})
    # no constant does better than the baseline (the piecewise-linear losses have flat minima)
    assert total(found[0]) <= best.fun * (1 + 1e-9) + 1e-12
    if isinstance(loss, (PoissonLoss, GammaLoss, TweedieLoss)):
        np.testing.assert_allclose(found, np.log(np.average(targets[:, 0], weights=weights)), rtol=1e-12)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_the_huber_baseline_is_exact_on_targets_spread_far_beyond_delta(weighted):
    # residuals mostly beyond delta: a clipped-mean iteration crawls here (scikit-learn's diabetes targets
    # span 25 to 346)
    targets = np.round(RNG.uniform(25, 346, size=(331, 2)), 0)
    weights = RNG.uniform(0.2, 3.0, size=331) if weighted else None
    loss = HuberLoss(1.0)
    found = loss.baseline(targets, weights)
    assert found.shape == (2,)
    for k in range(2):
        def total(score, k=k):
            values = loss.loss(targets[:, k], np.full(331, score))
            return float(np.sum(values if weights is None else weights * values))
        best = minimize_scalar(total, bounds=(float(found[k]) - 50, float(found[k]) + 50), method="bounded",
                               options={"xatol": 1e-11})
        assert total(found[k]) <= best.fun * (1 + 1e-12)
        # the derivative in the constant changes sign there
        derivative = np.clip(found[k] - targets[:, k], -1.0, 1.0)
        weighted_derivative = derivative if weights is None else weights * derivative
        step = 1e-9 * (1 + abs(found[k]))
        assert np.sum(np.clip(found[k] - step - targets[:, k], -1, 1) * (1 if weights is None else weights)) < 0
        assert np.sum(np.clip(found[k] + step - targets[:, k], -1, 1) * (1 if weights is None else weights)) > 0
        assert abs(np.sum(weighted_derivative)) <= 1e-9 * np.sum(np.ones(331) if weights is None else weights)


def test_a_flat_huber_minimum_gives_its_middle():
    # half the targets at 0, half at 10, delta 1: every constant in [1, 9] has the least loss
    targets = np.repeat([[0.0], [10.0]], 6, axis=0)
    assert HuberLoss(1.0).baseline(targets)[0] == 5.0
    assert HuberLoss(1.0).baseline(np.array([[3.0]]))[0] == 3.0


def test_weighted_quantiles_are_numpys_inverted_cdf_with_equal_weights():
    values = RNG.normal(size=(101, 3))
    for q in (0.1, 0.5, 0.9):
        assert np.array_equal(weighted_quantile(values, None, q), np.quantile(values, q, axis=0,
                                                                              method="inverted_cdf"))
    # a sample weighing as much as all the others together is the weighted median
    weights = np.ones(101)
    weights[7] = 100.0
    assert weighted_quantile(values[:, :1], weights, 0.5)[0] == values[7, 0]


def _regression_data(n=1500, seed=3):
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(n, 4))
    mean = np.exp(0.6 * features[:, 0] - 0.4 * features[:, 1])
    return features, mean, rng


@pytest.mark.parametrize("loss", [PoissonLoss(), TweedieLoss(1.5), GammaLoss(), HuberLoss(), AbsoluteErrorLoss(),
                                  QuantileLoss(0.9)], ids=repr)
def test_trees_from_the_optimal_constant_reduce_the_loss(loss):
    features, mean, rng = _regression_data()
    targets = rng.gamma(2.0, mean / 2.0) if isinstance(loss, GammaLoss) else rng.poisson(mean).astype(float)
    machine = bob_boost.Boosting(bob_boost.TreeTrainer(max_depth=3), loss, learning_rate=0.1).train(
        features, targets, 60, baseline="auto")
    column = targets[:, np.newaxis]
    constant = loss.loss(column, np.full_like(column, machine.baseline[0])).mean()
    assert machine.baseline[0] == loss.baseline(column)[0]
    assert loss.loss(column, machine.decision_scores(features)).mean() < 0.85 * constant
    if machine.decision_rule == "exp":  # the prediction is the mean, exp(score)
        np.testing.assert_allclose(machine.predict(features), np.exp(machine.decision_scores(features)[:, 0]),
                                   rtol=1e-15)
        assert np.corrcoef(np.log(machine.predict(features)), np.log(mean))[0, 1] > 0.9


def test_the_quantile_loss_covers_its_quantile():
    features, mean, rng = _regression_data(n=3000, seed=4)
    targets = mean + rng.normal(size=mean.size)
    for q in (0.1, 0.9):
        machine = bob_boost.Boosting(bob_boost.TreeTrainer(max_depth=3), QuantileLoss(q), learning_rate=0.2).train(
            features, targets, 80, baseline="auto")
        coverage = np.mean(targets <= machine.predict(features))
        assert abs(coverage - q) < 0.05


def test_a_count_model_starts_from_its_scores_not_from_shifted_targets():
    """A log-link baseline is a starting score: the first tree is grown on the Poisson derivatives at
    ``exp(baseline)`` against the counts themselves (never against counts minus the baseline)."""
    features, mean, rng = _regression_data(seed=5)
    targets = rng.poisson(mean).astype(float)
    loss = PoissonLoss()
    tree = bob_boost.TreeTrainer(max_depth=2, n_threads=1)
    start = float(np.log(targets.mean()))
    seen = []
    machine = bob_boost.Boosting(tree, loss, learning_rate=0.1).train(
        features, targets, 1, baseline="auto", callback=lambda r, m, scores: seen.append(scores.copy()) and False)
    column, scores = targets[:, np.newaxis], np.full((targets.size, 1), start)
    alone = tree.train(tree.prepare(features), loss.loss_gradient(column, scores), loss.loss_hessian(column, scores))
    first = machine.weak_machines[0]
    assert machine.baseline[0] == start
    assert first.features.tolist() == alone.features.tolist()
    assert np.array_equal(first.values, alone.values)
    # the callback sees the scores with the baseline in them
    np.testing.assert_allclose(seen[0], machine.decision_scores(features), rtol=1e-15)


def test_partitioned_poisson_trees_are_the_in_memory_trees():
    features, mean, rng = _regression_data(n=900, seed=6)
    targets = rng.poisson(mean).astype(float)
    loss = PoissonLoss()
    tree = bob_boost.TreeTrainer(max_depth=3, min_samples_leaf=10, n_threads=1)
    start = loss.baseline(targets[:, np.newaxis])
    memory = bob_boost.Boosting(tree, loss, learning_rate=0.2).train(features, targets, 4, baseline=start)
    blocks = PartitionedBoosting(loss, weak_learner="tree", tree=tree, learning_rate=0.2).train_on(
        LocalRows((300, 200, 400)), features, targets, 4, baseline=start)
    assert blocks.decision_rule == "exp" and np.array_equal(blocks.baseline, memory.baseline)
    for ours, theirs in zip(blocks.weak_machines, memory.weak_machines):
        assert ours.features.tolist() == theirs.features.tolist()
        np.testing.assert_allclose(ours.values, theirs.values, rtol=1e-10, atol=1e-13)


def test_log_link_models_round_trip_through_files_and_onnx(tmp_path):
    features, mean, rng = _regression_data(n=600, seed=7)
    targets = rng.poisson(mean).astype(float)
    machine = bob_boost.Boosting(bob_boost.TreeTrainer(max_depth=2), PoissonLoss(), learning_rate=0.3).train(
        features, targets, 5, baseline="auto")
    path = tmp_path / "counts.hdf5"
    machine.save(path)
    loaded = bob_boost.BoostedMachine.load(path)
    assert loaded.decision_rule == "exp"
    assert np.array_equal(loaded.predict(features), machine.predict(features))
    onnxruntime = pytest.importorskip("onnxruntime", reason="ONNX export needs the onnx extra")
    from bob_boost.onnx import to_onnx
    model = to_onnx(machine)
    session = onnxruntime.InferenceSession(model.SerializeToString())
    names = [output.name for output in session.get_outputs()]
    outputs = dict(zip(names, session.run(None, {"features": features.astype(np.float32)})))
    np.testing.assert_allclose(outputs["labels"], machine.predict(features.astype(np.float32)), rtol=1e-5)
    np.testing.assert_allclose(outputs["scores"][:, 0], machine.decision_scores(features.astype(np.float32))[:, 0],
                               rtol=1e-5, atol=1e-6)


def test_the_losses_are_registered_by_name():
    for name, cls in (("huber", HuberLoss), ("absolute_error", AbsoluteErrorLoss), ("quantile", QuantileLoss),
                      ("poisson", PoissonLoss), ("gamma", GammaLoss), ("tweedie", TweedieLoss), ("focal", FocalLoss)):
        assert loss_class(name) is cls


@pytest.mark.parametrize("make, message", [
    (lambda: HuberLoss(0.0), "delta"), (lambda: HuberLoss(-1.0), "delta"),
    (lambda: QuantileLoss(0.0), "quantile"), (lambda: QuantileLoss(1.0), "quantile"),
    (lambda: QuantileLoss(1.5), "quantile"), (lambda: TweedieLoss(0.5), "power"), (lambda: TweedieLoss(2.5), "power"),
    (lambda: FocalLoss(-1.0), "gamma"), (lambda: FocalLoss(2.0, alpha=0.0), "alpha"),
    (lambda: FocalLoss(2.0, alpha=1.0), "alpha"),
])
def test_bad_loss_parameters_are_refused_naming_them(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize("loss, targets, message", [
    (PoissonLoss(), np.array([1.0, -1.0, 2.0]), r"targets: PoissonLoss needs non-negative targets, found -1"),
    (TweedieLoss(1.5), np.array([1.0, -0.5]), r"targets: TweedieLoss needs non-negative targets"),
    (GammaLoss(), np.array([1.0, 0.0]), r"targets: GammaLoss needs positive targets, found 0"),
    (FocalLoss(), np.array([1.0, 0.0]), r"targets: FocalLoss needs targets in \{-1, \+1\}"),
])
def test_targets_outside_a_loss_domain_are_refused(loss, targets, message):
    kept = targets.copy()
    with pytest.raises(ValueError, match=message):
        bob_boost.Boosting(bob_boost.TreeTrainer(), loss).train(np.ones((targets.size, 1)), targets, 1)
    assert np.array_equal(targets, kept)


def test_bad_baselines_are_refused():
    features = np.arange(8.0)[:, np.newaxis]
    trainer = bob_boost.Boosting(bob_boost.TreeTrainer(), PoissonLoss())
    with pytest.raises(ValueError, match=r"baseline: expected a number, numbers or 'auto', got 'mean'"):
        trainer.train(features, np.ones(8), 1, baseline="mean")
    with pytest.raises(ValueError, match=r"targets: PoissonLoss needs some positive target"):
        trainer.train(features, np.zeros(8), 1, baseline="auto")
    with pytest.raises(NotImplementedError, match="CMELoss defines no optimal constant"):
        bob_boost.Boosting(bob_boost.StumpTrainer(), CMELoss(1.0 - np.eye(2))).train(
            features, (np.arange(8) > 3).astype(float), 1, baseline="auto")


# -- the regressor's losses, in memory and on a cluster ------------------------------------------------------

@pytest.mark.parametrize("loss, options", [("squared_error", {}), ("absolute_error", {}),
                                           ("huber", {"huber_delta": 2.0}), ("quantile", {"quantile": 0.75}),
                                           ("poisson", {}), ("gamma", {}), ("tweedie", {"tweedie_power": 1.2})])
def test_the_regressor_takes_scikit_learns_loss_names(loss, options):
    from bob_boost.sklearn import BoostingRegressor

    features, mean, rng = _regression_data(n=1200, seed=8)
    targets = rng.gamma(2.0, mean / 2.0) if loss == "gamma" else rng.poisson(mean).astype(float)
    kept = targets.copy()
    model = BoostingRegressor(weak_learner="tree", loss=loss, n_estimators=40, **options).fit(features, targets)
    assert np.array_equal(targets, kept)
    expected = make_regression_loss(loss, options.get("quantile"), options.get("huber_delta", 1.0),
                                    options.get("tweedie_power", 1.5))
    assert repr(model.machine_.metadata["loss"]) == repr(expected.name)
    assert model.intercept_ == expected.baseline(targets[:, np.newaxis])[0]
    predicted = model.predict(features)
    if loss in ("poisson", "gamma", "tweedie"):
        assert np.all(predicted > 0) and model.machine_.decision_rule == "exp"
    scores = model.machine_.decision_scores(features)
    column = targets[:, np.newaxis]
    assert expected.loss(column, scores).mean() < expected.loss(column, np.full_like(column, model.intercept_)).mean()
    staged = list(model.staged_predict(features))
    assert np.array_equal(staged[-1], predicted)


def test_a_poisson_regressor_round_trips_through_its_file(tmp_path):
    from bob_boost.sklearn import BoostingRegressor

    features, mean, rng = _regression_data(n=800, seed=9)
    targets = rng.poisson(mean).astype(float)
    model = BoostingRegressor(weak_learner="tree", loss="poisson", n_estimators=10).fit(features, targets)
    path = tmp_path / "counts.hdf5"
    model.save(path)
    loaded = BoostingRegressor.load(path)
    assert loaded.loss == "poisson" and loaded.intercept_ == model.intercept_
    assert np.array_equal(loaded.predict(features), model.predict(features))


@pytest.mark.parametrize("loss, targets", CASES + [(PoissonLoss(max_delta_step=0.7), COUNTS)],
                         ids=IDS + ["PoissonLoss(max_delta_step=0.7)"])
def test_loss_and_derivatives_are_the_three_methods_bit_for_bit(loss, targets):
    """What the descent check asks for at a round's new scores (the log-link losses from one ``exp``), the same
    bits as the loss, gradient and hessian apart, extreme scores included."""
    scores = np.concatenate([RNG.normal(size=(targets.shape[0] - 2, 1)), [[800.0], [-800.0]]])
    values, gradient, hessian = loss.loss_and_derivatives(targets, scores)
    assert np.array_equal(values, loss.loss(targets, scores), equal_nan=True)
    assert np.array_equal(gradient, loss.loss_gradient(targets, scores), equal_nan=True)
    assert np.array_equal(hessian, loss.loss_hessian(targets, scores), equal_nan=True)


def test_poissons_max_delta_step_scales_only_the_hessian():
    """``PoissonLoss(max_delta_step=d)``: the loss and gradient of ``PoissonLoss()``, the hessian ``exp(d)`` times
    its own, on every path that computes derivatives."""
    scores = RNG.normal(size=COUNTS.shape)
    plain, damped = PoissonLoss(), PoissonLoss(max_delta_step=0.7)
    factor = np.exp(0.7)
    assert np.array_equal(damped.loss(COUNTS, scores), plain.loss(COUNTS, scores))
    assert np.array_equal(damped.loss_gradient(COUNTS, scores), plain.loss_gradient(COUNTS, scores))
    np.testing.assert_allclose(damped.loss_hessian(COUNTS, scores), factor * plain.loss_hessian(COUNTS, scores),
                               rtol=1e-15)
    gradient, hessian = damped.gradient_and_hessian(COUNTS, scores)
    assert np.array_equal(gradient, plain.loss_gradient(COUNTS, scores))
    assert np.array_equal(hessian, damped.loss_hessian(COUNTS, scores))
    joint = np.empty((COUNTS.shape[0], 2))
    damped.derivatives_into(COUNTS, scores, joint)
    assert np.array_equal(joint[:, :1], gradient) and np.array_equal(joint[:, 1:], hessian)
    # 0, the default, is the true hessian, bit for bit as before the parameter existed
    assert np.array_equal(PoissonLoss(0.0).loss_hessian(COUNTS, scores), np.exp(np.clip(scores, -700, 700)))
    assert repr(damped) == "PoissonLoss(max_delta_step=0.7)" and repr(plain) == "PoissonLoss()"
    for bad, error in ((-0.1, ValueError), (np.nan, ValueError), (701.0, ValueError), ("0.7", TypeError)):
        with pytest.raises(error, match="max_delta_step"):
            PoissonLoss(max_delta_step=bad)


def test_poisson_trees_with_max_delta_step_take_shorter_newton_steps():
    """The split gains all scale by ``exp(-d)`` and the Newton leaves by ``exp(-d)`` too: the first tree has the
    same splits, its leaves ``exp(d)`` times smaller; the estimator's parameter trains the same model."""
    from bob_boost.sklearn import BoostingRegressor

    features, mean, rng = _regression_data(n=1000, seed=12)
    targets = rng.poisson(mean).astype(float)
    trainer = bob_boost.TreeTrainer(max_depth=3, max_leaves=None, growth="levelwise")
    plain = bob_boost.Boosting(trainer, PoissonLoss()).train(features, targets, 1)
    damped = bob_boost.Boosting(trainer, PoissonLoss(max_delta_step=0.7)).train(features, targets, 1)
    first, second = plain.weak_machines[0], damped.weak_machines[0]
    assert np.array_equal(first.features, second.features) and np.array_equal(first.thresholds, second.thresholds)
    np.testing.assert_allclose(np.asarray(second.values) * np.exp(0.7), first.values, rtol=1e-12, atol=1e-15)
    estimator = BoostingRegressor(weak_learner="tree", loss="poisson", poisson_max_delta_step=0.7, n_estimators=15,
                                  early_stopping=False, learning_rate=0.1).fit(features, targets)
    expected = bob_boost.Boosting(bob_boost.TreeTrainer(), PoissonLoss(max_delta_step=0.7), learning_rate=0.1).train(
        features, targets, 15, baseline="auto")
    assert np.array_equal(estimator.machine_.decision_scores(features), expected.decision_scores(features))
    default = BoostingRegressor(weak_learner="tree", loss="poisson", n_estimators=15, early_stopping=False,
                                learning_rate=0.1).fit(features, targets)
    assert not np.array_equal(default.predict(features), estimator.predict(features))
    with pytest.raises(TypeError, match="poisson_max_delta_step: expected a real number"):
        BoostingRegressor(loss="poisson", poisson_max_delta_step="0.7").fit(features, targets)


@pytest.mark.parametrize("options, y, message", [
    ({"loss": "cubic"}, None, r"loss: must be one of"),
    ({"loss": "quantile"}, None, r"quantile: loss='quantile' needs the quantile"),
    ({"loss": "quantile", "quantile": 1.5}, None, r"quantile"),
    ({"loss": "huber", "huber_delta": 0.0}, None, r"delta"),
    ({"loss": "tweedie", "tweedie_power": 3.0}, None, r"power"),
    ({"loss": "poisson", "poisson_max_delta_step": -0.5}, None, r"poisson_max_delta_step: must be in \[0, 700"),
    ({"loss": "poisson", "poisson_max_delta_step": np.inf}, None, r"poisson_max_delta_step: must be in"),
    ({"loss": "poisson"}, np.array([1.0, -2.0] * 10), r"y: PoissonLoss needs non-negative targets, found -2"),
    ({"loss": "gamma"}, np.array([1.0, 0.0] * 10), r"y: GammaLoss needs positive targets, found 0"),
])
def test_the_regressor_refuses_bad_losses_and_targets_naming_them(options, y, message):
    from bob_boost.sklearn import BoostingRegressor

    features = np.arange(40.0).reshape(20, 2)
    y = np.arange(20.0) if y is None else y
    kept = y.copy()
    with pytest.raises(ValueError, match=message):
        BoostingRegressor(**options).fit(features, y)
    assert np.array_equal(y, kept)


@pytest.mark.parametrize("loss, extra", [("poisson", {}), ("gamma", {}), ("tweedie", {}),
                                         ("poisson", {"poisson_max_delta_step": 0.7})])
@pytest.mark.long
def test_the_dask_regressor_trains_the_log_link_losses_as_in_memory(client, loss, extra):
    da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
    from bob_boost.dask import DaskBoostingRegressor
    from bob_boost.sklearn import BoostingRegressor

    features, mean, rng = _regression_data(n=1500, seed=10)
    targets = rng.gamma(2.0, mean / 2.0) if loss == "gamma" else rng.poisson(mean).astype(float)
    # each split is a round trip
    options = dict(weak_learner="tree", loss=loss, n_estimators=4, max_leaves=6, **extra)
    remote = DaskBoostingRegressor(client=client, **options).fit(da.from_array(features, chunks=(500, 4)),
                                                                 da.from_array(targets, chunks=500))
    local = BoostingRegressor(**options).fit(features, targets)
    assert remote.intercept_ == pytest.approx(local.intercept_, rel=1e-14)
    np.testing.assert_allclose(remote.predict(features), local.predict(features), rtol=1e-12)
    assert remote.to_local().machine_.decision_rule == "exp"


def test_the_dask_regressor_sends_quantile_losses_to_memory(client):
    da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
    from bob_boost.dask import DaskBoostingRegressor

    features = da.from_array(np.arange(40.0).reshape(20, 2), chunks=10)
    with pytest.raises(ValueError, match=r"loss: DaskBoostingRegressor trains .*got 'absolute_error'; train "
                                         r"'absolute_error' in memory"):
        DaskBoostingRegressor(loss="absolute_error", client=client).fit(features, np.arange(20.0))


@pytest.mark.parametrize("loss", [QuantileLoss(0.2), AbsoluteErrorLoss()], ids=repr)
def test_tree_leaves_are_renewed_as_quantiles_of_their_residuals(loss):
    """Each leaf of the first tree is the weighted quantile of its rows' residuals from the optimal constant
    (as LightGBM and scikit-learn renew them), not the Newton value of the constant hessian."""
    features, mean, rng = _regression_data(n=1000, seed=11)
    targets = mean + rng.normal(size=mean.size)
    weights = rng.uniform(0.5, 2.0, size=mean.size)
    machine = bob_boost.Boosting(bob_boost.TreeTrainer(max_depth=3, n_threads=1), loss, learning_rate=0.5).train(
        features, targets, 1, sample_weight=weights, baseline="auto")
    tree = machine.weak_machines[0]
    leaves = tree.leaves(features)[:, 0]
    residuals = targets - machine.baseline[0]
    q = getattr(loss, "quantile", 0.5)
    for leaf in np.unique(leaves):
        rows = leaves == leaf
        expected = weighted_quantile(residuals[rows, np.newaxis], weights[rows] * (mean.size / weights.sum()), q)
        assert tree.values[leaf, 0] == expected[0]
    assert np.array_equal(machine.weights, [[0.5]])


def test_grouped_quantiles_are_each_groups_weighted_quantile():
    from bob_boost.losses.robust import grouped_quantiles
    rng = np.random.default_rng(12)
    groups, values, weights = rng.integers(0, 7, 400), np.round(rng.normal(size=400), 1), rng.uniform(0, 2, 400)
    for q in (0.0, 0.1, 0.5, 0.9, 1.0):
        found = grouped_quantiles(groups, values, weights, q, 9)
        for k in range(9):
            rows = groups == k
            expected = weighted_quantile(values[rows, np.newaxis], weights[rows], q)[0] if rows.any() else np.nan
            assert np.array_equal(found[k], expected, equal_nan=True)


@pytest.mark.parametrize("seed", range(6))
def test_grouped_quantiles_without_weights_select_what_unit_weights_choose(seed):
    """Without weights each group's quantile is selected, not sorted for: the value unit weights choose, at every
    quantile and group size (ties, single values and empty groups included)."""
    from bob_boost.losses.robust import grouped_quantiles
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    groups = rng.integers(0, 11, n) if seed % 2 else rng.integers(0, 3, n) * 4  # some groups empty
    values = np.round(rng.normal(size=n), 1 + seed % 3)
    for q in (0.0, 1e-9, 0.1, 1 / 3, 0.5, 0.9, 1 - 1e-12, 1.0):
        found = grouped_quantiles(groups, values, None, q, 12)
        assert np.array_equal(found, grouped_quantiles(groups, values, np.ones(n), q, 12), equal_nan=True)
        for k in np.unique(groups):
            assert found[k] == weighted_quantile(values[groups == k, np.newaxis], None, q)[0]


@pytest.mark.parametrize("loss", [QuantileLoss(0.3), AbsoluteErrorLoss()], ids=repr)
def test_leaves_renewed_from_the_growers_rows_are_those_of_the_routed_rows(loss, monkeypatch):
    """The grower's row-to-leaf assignment, which the leaf renewal uses, is where the tree routes the training rows:
    the model is the same bit for bit when every row is routed afresh (NaN and a categorical feature included)."""
    from bob_boost.boosting.protocol import Proposal
    from bob_boost.weak_trainers.tree import TreeTrainer
    features, mean, rng = _regression_data(n=1200, seed=21)
    features[rng.random(features.shape) < 0.05] = np.nan
    features[:, 3] = rng.integers(0, 6, features.shape[0])
    targets = mean + rng.normal(size=mean.size)

    def train():
        trainer = TreeTrainer(max_leaves=12, missing="bin", categorical_features=[3], n_threads=2)
        return bob_boost.Boosting(trainer, loss, learning_rate=0.2).train(features, targets, 15, baseline="auto")

    given = train()
    propose = TreeTrainer.propose

    def routed(self, prepared, state):
        proposal = propose(self, prepared, state)
        assert proposal.leaves is not None  # the grower's assignment was there to be used
        return Proposal(proposal.machine, proposal.weight, proposal.perfect, proposal.outputs)

    monkeypatch.setattr(TreeTrainer, "propose", routed)
    again = train()
    for first, second in zip(given.weak_machines, again.weak_machines):
        np.testing.assert_array_equal(first.values, second.values)
        np.testing.assert_array_equal(first.thresholds, second.thresholds)
    np.testing.assert_array_equal(given.decision_scores(features), again.decision_scores(features))


def test_partitioned_training_refuses_losses_that_renew_leaves():
    with pytest.raises(ValueError, match=r"loss_function: QuantileLoss re-estimates each tree leaf"):
        PartitionedBoosting(QuantileLoss(0.3), weak_learner="tree")


def test_compiled_leaves_are_the_routed_leaves():
    """TreeMachine.leaves (compiled) reaches the nodes that level-by-level routing reaches, NaN included."""
    from bob_boost.weak.tree import route
    features, mean, rng = _regression_data(n=500, seed=13)
    features[rng.random(features.shape) < 0.1] = np.nan
    targets = mean + rng.normal(size=mean.size)
    tree = bob_boost.TreeTrainer(max_depth=4, missing="bin", n_threads=1)
    machine = bob_boost.Boosting(tree, bob_boost.SquaredLoss(), learning_rate=0.3).train(features, targets, 3)
    for weak in machine.weak_machines:
        node = np.zeros(features.shape[0], dtype=np.int64)
        for _ in range(weak.depth):
            node = route(features, node, weak.features, weak.thresholds, weak.left_children, weak.right_children,
                         weak.missing_left)
        assert np.array_equal(weak.leaves(features)[:, 0], node)
    integers = np.arange(-10, 10).reshape(5, 4)  # compared in float64, as numpy compares them
    assert np.array_equal(weak.leaves(integers), weak.leaves(integers.astype(np.float64)))


@pytest.mark.parametrize("loss, options", [("poisson", {}), ("quantile", {"quantile": 0.3}), ("huber", {})])
def test_regressors_of_every_link_export_to_onnx(loss, options):
    onnxruntime = pytest.importorskip("onnxruntime", reason="ONNX export needs the onnx extra")
    from bob_boost.onnx import to_onnx
    from bob_boost.sklearn import BoostingRegressor

    features, mean, rng = _regression_data(n=600, seed=14)
    targets = rng.poisson(mean).astype(float)
    model = BoostingRegressor(weak_learner="tree", loss=loss, n_estimators=8, **options).fit(features, targets)
    session = onnxruntime.InferenceSession(to_onnx(model).SerializeToString())
    names = [output.name for output in session.get_outputs()]
    outputs = dict(zip(names, session.run(None, {"features": features.astype(np.float32)})))
    expected = model.predict(features.astype(np.float32))
    np.testing.assert_allclose(outputs["labels"], expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outputs["scores"], expected, rtol=1e-5, atol=1e-6)


def test_the_losses_declare_what_the_loop_may_rely_on():
    """Elementwise derivatives (evaluated on row blocks in threads); convexity (no descent check of a shrunk
    step) for all but the focal loss; residual losses shift their targets, the others start from scores."""
    for loss, convex, shift in ((HuberLoss(), True, True), (AbsoluteErrorLoss(), True, True),
                                (QuantileLoss(0.2), True, True), (PoissonLoss(), True, False),
                                (GammaLoss(), True, False), (TweedieLoss(1.5), True, False),
                                (FocalLoss(), False, False)):
        assert loss.row_separable and loss.convex == convex and loss.shift_invariant == shift


def test_a_bare_count_machine_becomes_a_poisson_regressor():
    from bob_boost.sklearn import estimator_from_machine

    features, mean, rng = _regression_data(n=500, seed=15)
    targets = rng.poisson(mean).astype(float)
    machine = bob_boost.Boosting(bob_boost.TreeTrainer(max_depth=2), PoissonLoss(), learning_rate=0.3).train(
        features, targets, 4, baseline="auto")
    estimator = estimator_from_machine(machine)
    assert estimator.loss == "poisson" and estimator.intercept_ == machine.baseline[0]
    assert np.array_equal(estimator.predict(features), machine.predict(features))


def test_the_classifier_takes_the_focal_loss(tmp_path):
    datasets = pytest.importorskip("sklearn.datasets", reason="the estimators need scikit-learn")
    from bob_boost.sklearn import BoostingClassifier, load_estimator
    X, y = datasets.make_classification(2000, 8, weights=[0.9], random_state=0)
    focal = BoostingClassifier(loss="focal", weak_learner="tree", n_estimators=20).fit(X, y)
    core = bob_boost.Boosting(bob_boost.TreeTrainer(), FocalLoss()).train(X, np.where(y == 1, 1.0, -1.0), 20,
                                                                          baseline="auto")  # the class prior
    np.testing.assert_array_equal(focal.decision_function(X), core.decision_scores(X)[:, 0])
    assert focal.score(X, y) > 0.9 and not hasattr(focal, "predict_proba")  # focal scores are no log-odds
    focal.save(tmp_path / "focal.hdf5")
    restored = load_estimator(tmp_path / "focal.hdf5")
    assert restored.loss == "focal" and np.array_equal(restored.predict(X), focal.predict(X))


@pytest.mark.parametrize("learning_rate", [1.0, 0.3])
def test_renewed_leaves_take_their_step_without_evaluating_the_loss(learning_rate):
    """Renewed leaves minimise the loss over each leaf's rows: the training loss falls every round, and the loop
    takes the step without evaluating the loss, unless the round samples its rows (the leaves then minimise the
    sample's loss, and the descent check evaluates the whole loss)."""
    from bob_boost import Boosting, TreeTrainer
    from bob_boost.boosting.sampling import Sampling
    from bob_boost.callbacks import RecordEvaluation

    class Counting(QuantileLoss):
        convex = True
        calls = 0

        def loss(self, targets, scores, sample_weight=None):
            Counting.calls += 1
            return super().loss(targets, scores, sample_weight)

    rng = np.random.default_rng(4)
    x = rng.normal(size=(3000, 4))
    y = (x[:, 0] + np.abs(x[:, 1]) * rng.standard_t(3, size=3000))[:, np.newaxis]
    seen = []
    record = RecordEvaluation(x, lambda machine, scores: seen.append(scores.copy()) or 0.0, training=True)
    Boosting(TreeTrainer(n_threads=2), Counting(0.3), learning_rate=learning_rate).train(x, y, 15, callback=record)
    assert Counting.calls == 0
    totals = [np.sum(QuantileLoss(0.3).loss(y, scores)) for scores in seen]
    assert np.all(np.diff(totals) <= 1e-9 * np.abs(totals[1:])) and totals[-1] < 0.9 * totals[0]
    Boosting(TreeTrainer(n_threads=2), Counting(0.3), learning_rate=learning_rate,
             sampling=Sampling(subsample=0.5, random_state=0)).train(x, y, 3)
    assert Counting.calls >= 3
