"""Continuing a trained machine on a local Dask cluster (two workers): k rounds after n give the model
n + k rounds at once give, bit for bit, and the in-memory continuation's."""
from __future__ import annotations

import numpy as np
import pytest

import bob_boost

da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
distributed = pytest.importorskip("distributed", reason="distributed training needs the dask extra")

from bob_boost.dask import (DaskBoosting, DaskCostSensitiveBoosting, DaskMultiClassBoosting,  # noqa: E402
                            _chunks)

#: Uneven row chunks of the 900 rows of every test.
CHUNKS = (250, 13, 400, 237)


@pytest.fixture
def checkpoints(monkeypatch):
    """Checkpoints every 2 rounds, so that continued runs rebuild their scores from the continued start."""
    monkeypatch.setattr(_chunks, "CHECKPOINT_ROUNDS", 2)


def _binary(seed=0, integer=True):
    rng = np.random.default_rng(seed)
    n = sum(CHUNKS)
    features = rng.integers(0, 12, size=(n, 5)) if integer else np.round(rng.normal(size=(n, 5)), 2)
    score = features[:, 0] + features[:, 2] - (11 if integer else 0) + rng.normal(0, 2 if integer else 0.5, n)
    return features, np.where(score > 0, 1.0, -1.0)


def _chunked(values):
    return da.from_array(values, chunks=(CHUNKS,) + tuple((s,) for s in values.shape[1:]))


def _assert_identical(ours, theirs):
    assert len(ours) == len(theirs) > 0
    assert ours.weak_machines == theirs.weak_machines
    np.testing.assert_array_equal(ours.weights, theirs.weights)


def _assert_same_trees(ours, theirs):
    assert len(ours) == len(theirs) > 0
    np.testing.assert_array_equal(ours.weights, theirs.weights)
    for a, b in zip(ours.weak_machines, theirs.weak_machines):
        assert a.features.tolist() == b.features.tolist() and a.thresholds.tolist() == b.thresholds.tolist()
        np.testing.assert_array_equal(a.values, b.values)


@pytest.mark.parametrize("weak_learner", ["stump", "lut", "tree"])
@pytest.mark.long
def test_continuing_gives_the_longer_run_bit_for_bit(client, checkpoints, weak_learner):
    features, targets = _binary(seed=1)
    loss = bob_boost.LogitLoss()
    options = {"tree": bob_boost.TreeTrainer(max_depth=2), "learning_rate": 0.5} if weak_learner == "tree" else {}
    trainer = DaskBoosting(loss, client=client, weak_learner=weak_learner, **options)
    dX = _chunked(features)
    straight = trainer.train(dX, targets, 5)  # checkpoints after rounds 2 and 4, one in each run
    first = trainer.train(dX, targets, 3)
    continued = trainer.train(dX, targets, 2, boosted_machine=first)
    assert continued is first  # extended in place, as in memory
    if weak_learner == "tree":
        _assert_same_trees(continued, straight)
    else:
        _assert_identical(continued, straight)
    if weak_learner == "stump":  # and as the in-memory trainer continues the same machine
        memory = bob_boost.Boosting(bob_boost.StumpTrainer(max_bins=256), loss, step_rule="newton")
        machine = memory.train(features, targets, 3)
        memory.train(features, targets, 2, boosted_machine=machine)
        assert continued.weak_machines == machine.weak_machines
        np.testing.assert_allclose(continued.weights, machine.weights, rtol=1e-9, atol=0)


def test_a_machine_with_a_baseline_keeps_boosting_its_residuals(client, checkpoints):
    rng = np.random.default_rng(2)
    features = rng.integers(0, 12, size=(sum(CHUNKS), 4))
    values = features[:, 0] * 2.0 + rng.normal(0, 1, sum(CHUNKS)) + 50.0
    trainer = DaskBoosting(bob_boost.SquaredLoss(), client=client)
    dX = _chunked(features)
    mean = float(values.mean())
    straight = trainer.train(dX, values, 5, baseline=mean)
    continued = trainer.train(dX, values, 2, boosted_machine=trainer.train(dX, values, 3, baseline=mean))
    _assert_identical(continued, straight)
    assert continued.baseline.tolist() == [mean]


def test_continuing_cost_sensitive_boosting(client, checkpoints):
    features, targets = _binary(seed=3)
    trainer = DaskCostSensitiveBoosting(bob_boost.AdaBoostDBTrainer(2.0, 1.0), client=client)
    dX = _chunked(features)
    straight = trainer.train(dX, targets, 5)
    continued = trainer.train(dX, targets, 2, boosted_machine=trainer.train(dX, targets, 3))
    _assert_identical(continued, straight)


def test_a_perfect_last_stump_adds_nothing_as_in_memory(client):
    features, targets = _binary(seed=4)
    targets = np.where(features[:, 1] >= 6, 1.0, -1.0)  # one stump separates the classes
    trainer = DaskCostSensitiveBoosting(bob_boost.AdaBoostDBTrainer(1.0, 1.0), client=client)
    machine = trainer.train(_chunked(features), targets, 5)
    assert len(machine) == 1
    assert len(trainer.train(_chunked(features), targets, 5, boosted_machine=machine)) == 1


@pytest.mark.parametrize("feature_fraction", [1.0, 0.6])
@pytest.mark.long
def test_continuing_multi_class_trees_replays_the_rounds(client, checkpoints, feature_fraction):
    rng = np.random.default_rng(5)
    features = rng.integers(0, 12, size=(sum(CHUNKS), 5))
    score = features[:, 0] - features[:, 1] + features[:, 2] + rng.integers(0, 4, sum(CHUNKS))
    labels = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))
    costs = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]])
    trainer = bob_boost.BAdaCostTrainer(costs, bob_boost.CostSensitiveTreeTrainer(max_depth=2), shrinkage=0.5,
                                        feature_fraction=feature_fraction, random_state=7)
    dX = _chunked(features)
    straight = DaskMultiClassBoosting(trainer, client=client).train(dX, labels, 5)
    first = DaskMultiClassBoosting(trainer, client=client).train(dX, labels, 3)
    continued = DaskMultiClassBoosting(trainer, client=client).train(dX, labels, 2, boosted_machine=first)
    _assert_identical(continued, straight)
    memory = trainer.train(features, labels, 3)
    trainer.train(features, labels, 2, boosted_machine=memory)
    assert continued.weak_machines == memory.weak_machines
    np.testing.assert_allclose(continued.weights, memory.weights, rtol=1e-9, atol=0)


def test_a_machine_that_cannot_be_continued_is_a_clear_error(client):
    features, targets = _binary(seed=6)
    dX = _chunked(features)
    trainer = DaskBoosting(bob_boost.ExponentialLoss(), client=client)
    with pytest.raises(TypeError, match="boosted_machine"):
        trainer.train(dX, targets, 2, boosted_machine="model.hdf5")
    narrow = trainer.train(dX[:, :4], targets, 2)
    with pytest.raises(ValueError, match="boosted_machine: reads 4 features"):
        trainer.train(dX, targets, 2, boosted_machine=narrow)
    with pytest.raises(ValueError, match="baseline"):
        trainer.train(dX, targets, 2, baseline=0.5, boosted_machine=trainer.train(dX, targets, 1))
    two_outputs = bob_boost.BoostedMachine(number_of_outputs=2, number_of_features=5)
    with pytest.raises(ValueError, match="boosted_machine: has 2 outputs"):
        trainer.train(dX, targets, 2, boosted_machine=two_outputs)
    with pytest.raises(ValueError, match="boosted_machine: has 2 outputs"):
        DaskCostSensitiveBoosting(bob_boost.AdaBoostDBTrainer(1.0, 1.0), client=client).train(
            dX, targets, 2, boosted_machine=two_outputs)
    labels = (features[:, 0] % 3).astype(int)
    samme = bob_boost.SAMMETrainer(bob_boost.CostSensitiveTreeTrainer(max_depth=1))
    other = bob_boost.BAdaCostTrainer(np.ones((3, 3)) - np.eye(3), bob_boost.CostSensitiveTreeTrainer(max_depth=1))
    with pytest.raises(ValueError, match="boosted_machine: must hold the trainer's cost matrix"):
        DaskMultiClassBoosting(other, client=client).train(
            dX, labels, 2, boosted_machine=DaskMultiClassBoosting(samme, client=client).train(dX, labels, 1))


def _estimators():
    from bob_boost.dask import (DaskAdaBoostDBClassifier, DaskBAdaCostClassifier, DaskBoostingClassifier,
                                DaskBoostingRegressor)
    return {"boosting": DaskBoostingClassifier(loss="logit"), "lut": DaskBoostingClassifier(weak_learner="lut"),
            "regressor": DaskBoostingRegressor(), "regressor-lut": DaskBoostingRegressor(weak_learner="lut"),
            "adaboostdb": DaskAdaBoostDBClassifier(2.0, 1.0),
            "badacost": DaskBAdaCostClassifier("balanced", feature_fraction=0.6)}


@pytest.mark.parametrize("name", ["boosting", "lut", "regressor", "regressor-lut", "adaboostdb", "badacost"])
@pytest.mark.long
def test_warm_start_gives_one_fit_of_the_larger_number(client, checkpoints, name):
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    features, targets = _binary(seed=8)
    y = features[:, 0] * 1.5 + targets if name.startswith("regressor") else np.where(targets > 0, "yes", "no")
    if name == "badacost":
        y = np.digitize(features[:, 0] - features[:, 1] + features[:, 2], [-2, 6])
    dX = _chunked(features)
    options = dict(client=client, early_stopping=True, n_iter_no_change=20, random_state=3)
    once = _estimators()[name].set_params(n_estimators=5, **options).fit(dX, y)
    model = _estimators()[name].set_params(n_estimators=3, warm_start=True, **options).fit(dX, y)
    assert model.n_iter_ == 3 and model.validation_score_.shape == (4,)
    machine = model.machine_
    model.set_params(n_estimators=5).fit(dX, y)
    assert model.machine_ is machine and model.n_iter_ == 5  # the fitted machine, extended
    if name == "badacost":
        assert np.array_equal(model.cost_matrix_, once.cost_matrix_)
    _assert_identical(model.machine_, once.machine_)
    np.testing.assert_array_equal(model.validation_score_, once.validation_score_)
    assert model.fit(dX, y).machine_ is machine and len(machine) == 5  # nothing to add
    with pytest.raises(ValueError, match="n_estimators=4 must be larger or equal to len\\(machine_\\)=5"):
        model.set_params(n_estimators=4).fit(dX, y)
    with pytest.raises(ValueError, match="X has 4 features, but .* is expecting 5"):
        model.set_params(n_estimators=9).fit(dX[:, :4], y)
    if name != "regressor" and name != "regressor-lut":
        with pytest.raises(ValueError, match="y: has classes .* but the fitted model, which warm_start continues"):
            model.fit(dX, np.where(targets > 0, "a", "b"))
    with pytest.raises(ValueError, match="warm_start: must be True or False"):
        model.set_params(warm_start="yes").fit(dX, y)


def test_warm_start_matches_the_in_memory_warm_start(client):
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    from bob_boost.sklearn import BoostingClassifier
    from bob_boost.dask import DaskBoostingClassifier
    features, targets = _binary(seed=9)
    model = DaskBoostingClassifier(loss="logit", n_estimators=3, warm_start=True, client=client)
    memory = BoostingClassifier(loss="logit", n_estimators=3, warm_start=True, early_stopping=False)
    for rounds in (3, 6):
        model.set_params(n_estimators=rounds).fit(_chunked(features), targets)
        memory.set_params(n_estimators=rounds).fit(features, targets)
    assert model.machine_.weak_machines == memory.machine_.weak_machines and len(memory.machine_) == 6
    # in memory, exactly binned features take L-BFGS steps (stopping at its tolerance), the cluster Newton's
    np.testing.assert_allclose(model.machine_.weights, memory.machine_.weights, rtol=1e-7, atol=0)
