"""Categorical features in AdaBoostDB's and Cost-Sensitive AdaBoost's stump pool: each round's stump is the best of
every set of categories, and row partitions train the in-memory model."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from bob_boost import AdaBoostDBTrainer, CostSensitiveAdaBoostTrainer
from bob_boost.boosting.partitions import LocalRows
from bob_boost.losses.double_base import DoubleBaseLoss
from bob_boost.trainers.partitioned_classes import PartitionedCostSensitiveBoosting

#: Each category's share of positives: not monotone in the category's value, so no threshold finds the best set.
SHARES = np.array([0.15, 0.85, 0.3, 0.75, 0.05, 0.6, 0.45])


def _data(n: int = 700, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    category = rng.integers(0, SHARES.size, n)
    targets = np.where(rng.random(n) < SHARES[category], 1.0, -1.0)
    # the noise feature has fewer distinct values than the partitions' bins, so both pools are the same
    return np.column_stack([category * 3.0 + 2.0, np.round(rng.normal(size=n), 1)]), targets


def _trainers():
    return [AdaBoostDBTrainer(2.0, 1.0, categorical_features=[0]),
            AdaBoostDBTrainer(2.0, 1.0, selection="loss", categorical_features=[0]),
            CostSensitiveAdaBoostTrainer(1.0, 3.0, categorical_features=[0])]


def _bound(trainer, targets, outputs, weights, alpha) -> float:
    costs = np.where(targets > 0, trainer.cost_positive, trainer.cost_negative)
    return float(np.sum(weights * np.exp(-costs * targets * alpha * outputs)))


@pytest.mark.parametrize("trainer", _trainers(), ids=lambda t: f"{type(t).__name__}-{getattr(t, 'selection', '')}")
def test_the_first_stump_is_the_best_set_of_all(trainer):
    """Against every one of the 2^7 - 2 sets of the categorical feature (the numeric one is noise)."""
    features, targets = _data()
    machine = trainer.train(features, targets, 1)
    stump, alpha = machine.weak_machines[0], float(machine.weights[0, 0])
    assert stump.index == 0 and stump.categories is not None
    positive = targets > 0
    weights = np.where(positive, 0.5 / positive.sum(), 0.5 / (~positive).sum())  # the papers' D_1
    values = np.unique(features[:, 0])
    found = {}
    for size in range(1, values.size):
        for chosen in itertools.combinations(values, size):
            outputs = np.where(np.isin(features[:, 0], chosen), 1.0, -1.0)
            step = trainer.optimal_step(targets, outputs, weights)
            found[chosen] = (step, _bound(trainer, targets, outputs, weights, step))
    if getattr(trainer, "selection", "loss") == "alpha":
        best = max(found, key=lambda chosen: found[chosen][0])
        np.testing.assert_allclose(alpha, found[best][0], rtol=1e-9)
    else:
        best = min(found, key=lambda chosen: found[chosen][1])
        np.testing.assert_allclose(_bound(trainer, targets, stump.polarity * np.where(
            np.isin(features[:, 0], stump.categories), 1.0, -1.0), weights, alpha), found[best][1], rtol=1e-9)
    # the categories whose samples get a positive score: a set with a negative step is its complement with a
    # positive one, and the two bounds can differ in their last bit, so the brute force may list either
    voted = set(stump.categories.tolist()) if stump.polarity * alpha > 0 else set(
        np.setdiff1d(values, stump.categories).tolist())
    best_voted = set(best) if found[best][0] > 0 else set(np.setdiff1d(values, best).tolist())
    assert voted == best_voted
    # a category never seen in training gets the sign outside the set
    assert machine.weak_machines[0].forward(np.array([[99.0, 0.0]]))[0, 0] == -stump.polarity


@pytest.mark.parametrize("trainer", _trainers(), ids=lambda t: f"{type(t).__name__}-{getattr(t, 'selection', '')}")
@pytest.mark.parametrize("rows", [(700,), (350, 350), (1, 400, 299)])
def test_partitions_train_the_in_memory_model(trainer, rows):
    features, targets = _data()
    memory = trainer.train(features, targets, 8)
    parts = PartitionedCostSensitiveBoosting(trainer, max_bins=256).train_on(LocalRows(rows), features, targets, 8)
    assert len(parts) == len(memory) == 8
    for ours, theirs in zip(parts.weak_machines, memory.weak_machines):
        assert (ours.index, ours.polarity) == (theirs.index, theirs.polarity)
        if theirs.categories is None:
            assert ours.categories is None
        else:
            np.testing.assert_array_equal(ours.categories, theirs.categories)
    np.testing.assert_allclose(parts.weights, memory.weights, rtol=1e-12)


def test_partitions_rebuilt_from_their_codes_keep_the_category_sets(monkeypatch):
    """At a checkpoint the partitions' scores are rebuilt from the codes and every stump so far: a set's outputs
    come from its bins then, as in the rounds between."""
    from bob_boost.boosting.partitions import LocalPartitions
    monkeypatch.setattr(LocalPartitions, "checkpoint_rounds", 3)
    features, targets = _data()
    trainer = AdaBoostDBTrainer(2.0, 1.0, categorical_features=[0])
    memory = trainer.train(features, targets, 10)
    parts = PartitionedCostSensitiveBoosting(trainer).train_on(LocalRows((300, 400)), features, targets, 10)
    assert sum(m.categories is not None for m in parts.weak_machines) >= 3
    np.testing.assert_allclose(parts.weights, memory.weights, rtol=1e-12)


def test_categorical_stumps_beat_thresholds_on_set_shaped_data():
    features, targets = _data(seed=1)
    test_features, test_targets = _data(seed=2)
    loss = DoubleBaseLoss(1.0, 1.0)
    errors = {}
    for categorical in (None, [0]):
        machine = AdaBoostDBTrainer(1.0, 1.0, categorical_features=categorical).train(features, targets, 6)
        scores = machine.decision_scores(test_features)
        errors[categorical is None] = float(np.mean(np.sign(scores[:, 0]) != test_targets))
        assert np.isfinite(loss.loss(test_targets[:, None], scores)).all()
    assert errors[False] < errors[True]


@pytest.mark.parametrize("values, message", [(-1.0, "integers"), (2.5, "integers")])
def test_categories_must_be_non_negative_integers(values, message):
    features, targets = _data(n=60)
    features[3, 0] = values
    with pytest.raises(ValueError, match=message):
        AdaBoostDBTrainer(1.0, 1.0, categorical_features=[0]).train(features, targets, 2)


def test_categorical_features_are_checked_at_construction():
    with pytest.raises(ValueError, match="categorical_features"):
        CostSensitiveAdaBoostTrainer(1.0, 1.0, categorical_features=[[0]])


def test_the_command_line_trains_categorical_stumps(tmp_path, capsys):
    """``bob-boost train --trainer adaboostdb --categorical 0`` (in memory) writes the same stumps as the trainer."""
    import csv
    from bob_boost import BoostedMachine
    from bob_boost.cli import main
    features, targets = _data(n=300)
    path = tmp_path / "data.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["city", "noise", "target"])
        writer.writerows([[int(c), x, int(t)] for (c, x), t in zip(features.tolist(), targets.tolist())])
    model = tmp_path / "m.hdf5"
    assert main(["train", str(path), "-o", str(model), "--trainer", "adaboostdb", "--categorical", "0",
                 "--cost-positive", "2", "-r", "4", "-q"]) == 0, capsys.readouterr().err
    machine = BoostedMachine.load(model)
    expected = AdaBoostDBTrainer(2.0, 1.0, categorical_features=[0]).train(features, targets, 4)
    assert any(m.categories is not None for m in machine.weak_machines)
    np.testing.assert_array_equal(machine.decision_scores(features), expected.decision_scores(features))
