"""The cost-reweighting family (AdaC1-3, AdaCost, CSB0-2, AsymBoost): every step and weight recomputed here from the
machine's own stumps with each rule's formulas written out; the reductions to AdaBoost at equal costs; the steps
as the minimisers they are derived as; continuation; the front doors and bad input."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize

from bob_boost import (AdaC1Trainer, AdaC2Trainer, AdaC3Trainer, AdaCostTrainer, AsymBoostTrainer, Boosting,
                       CSB0Trainer, CSB1Trainer, CSB2Trainer, ExponentialLoss, StumpTrainer, TreeTrainer)
from bob_boost.exceptions import ConvergenceWarning

ALL = (AdaC1Trainer, AdaC2Trainer, AdaC3Trainer, AdaCostTrainer, CSB0Trainer, CSB1Trainer, CSB2Trainer,
       AsymBoostTrainer)
#: Costs in (0, 1] that every rule takes, with false negatives dearer.
COSTS = (1.0, 0.4)


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    return X, np.where(X[:, 0] + 0.6 * X[:, 1] + rng.normal(scale=0.8, size=n) > 0.4, 1.0, -1.0)


def _rule_weights(name, D, u, c, alpha, positive, rounds):
    """The next unnormalised distribution, as each paper's update states it."""
    if name == "AdaC1":
        return D * np.exp(-alpha * c * u)
    if name == "AdaC2":
        return c * D * np.exp(-alpha * u)
    if name == "AdaC3":
        return c * D * np.exp(-alpha * c * u)
    if name == "AdaCost":
        beta = np.where(u > 0, -0.5 * c + 0.5, 0.5 * c + 0.5)
        return D * np.exp(-alpha * u * beta)
    wrong_cost = np.where(u < 0, c, 1.0)
    if name == "CSB0":
        return wrong_cost * D
    if name == "CSB1":
        return wrong_cost * D * np.exp(-u)
    if name == "CSB2":
        return wrong_cost * D * np.exp(-alpha * u)
    k = COSTS[0] / COSTS[1]
    return D * np.exp(-alpha * u) * k ** (np.where(positive, 1.0, -1.0) / (2 * rounds))


def _rule_step(name, D, u, c):
    """Each paper's step, written with its sums."""
    right, wrong = u > 0, u < 0
    if name == "AdaC1":
        s = np.sum(c * D * u)
        return 0.5 * np.log((1 + s) / (1 - s))
    if name == "AdaC2":
        return 0.5 * np.log(np.sum(c[right] * D[right]) / np.sum(c[wrong] * D[wrong]))
    if name == "AdaC3":
        t, s = np.sum(c * D), np.sum(c * c * D * u)
        return 0.5 * np.log((t + s) / (t - s))
    if name == "AdaCost":
        beta = np.where(u > 0, -0.5 * c + 0.5, 0.5 * c + 0.5)
        r = np.sum(D * u * beta)
        return 0.5 * np.log((1 + r) / (1 - r))
    r = np.sum(D * u)
    return 0.5 * np.log((1 + r) / (1 - r))


@pytest.mark.parametrize("cls", ALL, ids=lambda cls: cls.algorithm)
def test_every_step_and_every_stump_follow_the_rule(cls):
    X, y = _data()
    costs = COSTS if cls is not AdaCostTrainer else (0.2, 0.05)  # AdaCost takes steps at small costs only
    rounds = 25
    trainer = cls(*costs, asymmetry_rounds=rounds) if cls is AsymBoostTrainer else cls(*costs)
    machine = trainer.train(X, y, rounds)
    assert len(machine) >= 5  # a rule whose best stump's step is no longer positive stops there
    positive = y > 0
    c = np.where(positive, *costs)
    D = c.copy() if cls is AdaCostTrainer else np.ones(y.size)
    if cls is AsymBoostTrainer:
        D = D * (costs[0] / costs[1]) ** (np.where(positive, 1.0, -1.0) / (2 * rounds))
    for weak, alpha in zip(machine.weak_machines, machine.weights[:, 0]):
        D = D / D.sum()
        outputs = weak.forward(X)[:, 0]
        u = y * outputs
        edge = np.sum(D * u)
        # the stump is the one of largest edge on D (no stump of the trainer's candidates does better)
        best = StumpTrainer().train(X, -y * D)
        assert edge == pytest.approx(np.sum(D * y * best.forward(X)[:, 0]), rel=1e-9)
        assert alpha == pytest.approx(_rule_step(cls.algorithm, D, u, c), rel=1e-9)
        D = _rule_weights(cls.algorithm, D, u, c, alpha, positive, rounds)


@pytest.mark.parametrize("cls", (AdaC1Trainer, AdaC2Trainer, AdaC3Trainer, CSB2Trainer, AsymBoostTrainer),
                         ids=lambda cls: cls.algorithm)
def test_at_equal_costs_the_rule_is_discrete_adaboost(cls):
    X, y = _data(seed=1)
    adaboost = Boosting(StumpTrainer(), ExponentialLoss()).train(X, y, 20)
    equal = 3.0 if cls is AdaC2Trainer else 1.0  # AdaC2's common cost cancels in its step and normalisation
    machine = cls(equal, equal).train(X, y, 20)
    assert [repr(weak) for weak in machine.weak_machines] == [repr(weak) for weak in adaboost.weak_machines]
    # the library's AdaBoost fits its weights by L-BFGS to a gradient of 1e-12 per sample: far below 1e-9
    np.testing.assert_allclose(machine.weights, adaboost.weights, rtol=1e-9)


def test_csb0_at_equal_costs_never_moves_the_weights_and_csb1_is_not_adaboost():
    X, y = _data(seed=2)
    machine = CSB0Trainer().train(X, y, 5)
    assert len({repr(weak) for weak in machine.weak_machines}) == 1
    adaboost = Boosting(StumpTrainer(), ExponentialLoss()).train(X, y, 10)
    csb1 = CSB1Trainer().train(X, y, 10)
    assert [repr(w) for w in csb1.weak_machines] != [repr(w) for w in adaboost.weak_machines]


def test_a_negative_adac_step_is_the_negated_stump_voting():
    """AdaC1-3 keep their formula's negative step: the same round as the negated stump with the positive one."""
    rng = np.random.default_rng(9)
    X = rng.normal(size=(300, 4))
    y = np.where(X[:, 0] + rng.normal(scale=2.0, size=300) > 1.2, 1.0, -1.0)  # a rare, noisy positive class
    for cls, costs in ((AdaC1Trainer, (1.0, 0.1)), (AdaC2Trainer, (10.0, 1.0)), (AdaC3Trainer, (1.0, 0.1))):
        machine = cls(*costs).train(X, y, 5)
        assert machine.weights[0, 0] < 0, cls.algorithm
        c = np.where(y > 0, *costs)
        u = y * machine.weak_machines[0].forward(X)[:, 0]
        D = np.full(y.size, 1.0 / y.size)
        assert machine.weights[0, 0] == pytest.approx(_rule_step(cls.algorithm, D, u, c), rel=1e-12)
        assert -machine.weights[0, 0] == pytest.approx(_rule_step(cls.algorithm, D, -u, c), rel=1e-12)


def test_adacost_at_cost_one_takes_no_step():
    X, y = _data()
    with pytest.warns(ConvergenceWarning, match="AdaCost round 1: the step of the best weak machine is"):
        machine = AdaCostTrainer(1.0, 1.0).train(X, y, 10)
    assert len(machine) == 0


def test_the_steps_minimise_what_they_are_derived_from():
    """AdaC2's step minimises sum c D exp(-alpha u); AdaC1's and AdaC3's the convexity bounds of theirs."""
    X, y = _data(seed=3)
    c = np.where(y > 0, *COSTS)
    D = np.random.default_rng(3).uniform(0.5, 1.5, y.size)
    D /= D.sum()
    u = y * StumpTrainer().train(X, -y * D).forward(X)[:, 0]

    def bound(alpha, factor, inside):
        a = inside * u
        return np.sum(factor * D * ((1 + a) / 2 * np.exp(-alpha) + (1 - a) / 2 * np.exp(alpha)))
    objectives = {AdaC1Trainer: lambda a: bound(a, 1.0, c),
                  AdaC2Trainer: lambda a: np.sum(c * D * np.exp(-a * u)),
                  AdaC3Trainer: lambda a: bound(a, c, c)}
    from bob_boost.boosting.reweighting import step_factors
    from bob_boost.boosting.steps import reweighting_step
    for cls, objective in objectives.items():
        step = reweighting_step(D, u, *step_factors(cls.rule, c, u))
        found = scipy.optimize.minimize_scalar(objective, bracket=(0.0, 2.0), tol=1e-12).x
        assert step == pytest.approx(found, abs=1e-6), cls.algorithm


@pytest.mark.parametrize("cls", ALL, ids=lambda cls: cls.algorithm)
def test_continuing_a_machine_is_one_longer_run(cls):
    X, y = _data(seed=4)
    costs = COSTS if cls is not AdaCostTrainer else (0.2, 0.05)
    whole = cls(*costs).train(X, y, 12)
    part = cls(*costs).train(X, y, 5) if cls is not AsymBoostTrainer else cls(*costs, asymmetry_rounds=12).train(
        X, y, 5)
    continued = cls(*costs).train(X, y, 7, boosted_machine=part)
    assert [repr(w) for w in continued.weak_machines] == [repr(w) for w in whole.weak_machines]
    np.testing.assert_array_equal(continued.weights, whole.weights)


def test_the_estimator_warm_starts_as_one_longer_fit_and_does_not_stop_early_by_default():
    pytest.importorskip("sklearn", reason="the estimator needs scikit-learn")
    from bob_boost.sklearn import CostReweightingClassifier
    X, y = _data(n=12000, seed=10)
    for algorithm in ("adac2", "asymboost"):
        estimator = CostReweightingClassifier(algorithm, 1.0, 0.7, n_estimators=15, warm_start=True).fit(X, y)
        estimator.set_params(n_estimators=30).fit(X, y)
        assert estimator.n_iter_ == 30  # no early stop on 12,000 samples
        trainer = AdaC2Trainer(1.0, 0.7) if algorithm == "adac2" else AsymBoostTrainer(1.0, 0.7, asymmetry_rounds=15)
        np.testing.assert_array_equal(estimator.machine_.weights, trainer.train(X, y, 30).weights)


def test_a_weight_of_two_is_a_row_repeated():
    X, y = _data(n=200, seed=5)
    repeated = np.arange(0, 200, 3)
    weights = np.ones(200)
    weights[repeated] = 2.0
    for cls in (AdaC2Trainer, CSB1Trainer, AsymBoostTrainer):
        weighted = cls(*COSTS, weak_trainer=StumpTrainer(max_bins=None)).train(X, y, 8, sample_weight=weights)
        rows = np.concatenate([np.arange(200), repeated])
        copies = cls(*COSTS, weak_trainer=StumpTrainer(max_bins=None)).train(X[rows], y[rows], 8)
        assert [repr(w) for w in weighted.weak_machines] == [repr(w) for w in copies.weak_machines], cls.algorithm
        np.testing.assert_allclose(weighted.weights, copies.weights, rtol=1e-12)


def test_a_dearer_false_negative_means_fewer_false_negatives():
    X, y = _data(n=600, seed=6)
    # not AdaC1: its costs scale the shrinking of a right row as much as the growth of a wrong one, so the dear
    # class, mostly right, loses weight faster (Yin et al. 2013 found AdaC1 the least cost-sensitive of the three)
    for cls in (AdaC2Trainer, AdaC3Trainer, CSB0Trainer, CSB1Trainer, CSB2Trainer, AsymBoostTrainer):
        counts = []
        # CSB's costs are not scale-free: a cost below 1 would shrink a wrong row; Ting's are at least 1
        for costs in ((1.0, 1.0), (1.0 / 0.3, 1.0) if cls.rule.startswith("csb") else (1.0, 0.3)):
            predicted = cls(*costs).train(X, y, 30).predict(X)
            counts.append(int(np.sum((predicted < 0) & (y > 0))))
        assert counts[1] < counts[0], (cls.algorithm, counts)


def test_bad_input_names_the_argument():
    X, y = _data(n=100)
    for cls in (AdaC1Trainer, AdaC3Trainer, AdaCostTrainer):
        with pytest.raises(ValueError, match=r"cost_positive: .* takes costs in \(0, 1\]"):
            cls(2.0, 1.0)
    with pytest.raises(ValueError, match="cost_negative"):
        AdaC2Trainer(1.0, 0.0)
    with pytest.raises(ValueError, match="asymmetry_rounds"):
        AsymBoostTrainer(asymmetry_rounds=0)
    with pytest.raises(ValueError, match="targets: both classes"):
        AdaC2Trainer().train(X, np.ones(100), 3)
    with pytest.raises(ValueError, match="sample_weight: each class needs some positive weight"):
        AdaC2Trainer().train(X, y, 3, sample_weight=np.where(y > 0, 0.0, 1.0))
    weights = np.ones(100)
    with pytest.raises(TypeError, match=r"weak_trainer: AdaC2 boosts \+-1 weak machines"):
        AdaC2Trainer(weak_trainer=TreeTrainer(max_depth=2)).train(X, y, 3)
    AdaC2Trainer().train(X, y, 3, sample_weight=weights)
    assert np.all(weights == 1.0)  # not modified


def test_the_estimator_the_recipe_and_the_saved_model(tmp_path):
    pytest.importorskip("sklearn", reason="the estimator needs scikit-learn")
    from bob_boost.recipes import make_recipe
    from bob_boost.sklearn import CostReweightingClassifier, load_estimator
    X, y = _data(seed=7)
    labels = np.where(y > 0, "yes", "no")
    for algorithm, cls in (("adac1", AdaC1Trainer), ("adac2", AdaC2Trainer), ("adac3", AdaC3Trainer),
                           ("csb0", CSB0Trainer), ("csb1", CSB1Trainer), ("csb2", CSB2Trainer),
                           ("asymboost", AsymBoostTrainer)):
        estimator = CostReweightingClassifier(algorithm, cost_positive=1.0, cost_negative=0.8,
                                              n_estimators=20).fit(X, labels)
        direct = cls(1.0, 0.8).train(X, y, 20)
        np.testing.assert_array_equal(estimator.decision_function(X), direct.decision_scores(X)[:, 0])
        estimator.save(tmp_path / f"{algorithm}.hdf5")
        loaded = load_estimator(tmp_path / f"{algorithm}.hdf5")
        assert type(loaded) is CostReweightingClassifier and loaded.algorithm == algorithm
        np.testing.assert_array_equal(loaded.predict(X), estimator.predict(X))
    assert CostReweightingClassifier().fit(X, labels).score(X, labels) > 0.8  # the default: AdaC2 at equal costs
    with pytest.raises(ValueError, match="algorithm"):
        CostReweightingClassifier("adac9").fit(X, labels)
    with pytest.raises(ValueError, match="cost_positive: AdaC1 takes costs"):
        CostReweightingClassifier("adac1", cost_positive=5.0).fit(X, labels)
    with pytest.raises(ValueError, match="is binary but there are 3 classes"):
        make_recipe("csb2", number_of_classes=3)
    with pytest.raises(ValueError, match="weak_learner: 'csb2' boosts"):
        make_recipe("csb2", number_of_classes=2, weak_learner="tree")
    with pytest.raises(ValueError, match="shrinkage, feature_fraction, sampling"):
        make_recipe("adac2", number_of_classes=2, shrinkage=0.5)
    with pytest.raises(ValueError, match="Only binary classification"):
        CostReweightingClassifier().fit(X, np.arange(X.shape[0]) % 3)


def test_the_command_line(tmp_path, capsys):
    from bob_boost import BoostedMachine
    from bob_boost.cli import main
    X, y = _data(n=200, seed=8)
    data, model = tmp_path / "train.csv", tmp_path / "model.hdf5"
    np.savetxt(data, np.column_stack([X, y > 0]), delimiter=",", fmt="%.17g")
    assert main(["train", str(data), "-o", str(model), "--trainer", "adac2", "--cost-positive", "1",
                 "--cost-negative", "0.5", "-r", "10", "-q"]) == 0
    machine = BoostedMachine.load(model)
    assert machine.metadata["trainer"] == "adac2" and machine.metadata["cost_negative"] == 0.5
    from bob_boost.sklearn import estimator_from_machine
    assert estimator_from_machine(machine).algorithm == "adac2"
    np.testing.assert_array_equal(machine.weights, AdaC2Trainer(1.0, 0.5).train(X, np.where(y > 0, 1.0, -1.0),
                                                                                  10).weights)
    assert main(["train", str(data), "-o", str(tmp_path / "m1.hdf5"), "--trainer", "adac1", "--cost-positive", "2",
                 "-q"]) != 0
    assert "cost-positive: AdaC1 takes costs in (0, 1]" in capsys.readouterr().err
    assert main(["train", str(data), "-o", str(tmp_path / "m2.hdf5"), "--trainer", "adacost", "-q"]) != 0
    assert "'adacost' needs both costs" in capsys.readouterr().err
