"""``missing="bin"`` for BAdaCost, SAMME and AdaBoost.M1 on a local Dask cluster (two workers):
NaN bins after the quantised bins, each split's NaN side, against in-memory training."""
from __future__ import annotations

import numpy as np
import pytest

import bob_boost

da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
distributed = pytest.importorskip("distributed", reason="distributed training needs the dask extra")

from bob_boost.dask import DaskMultiClassBoosting, _chunks  # noqa: E402

COSTS = np.array([[0.0, 1.0, 4.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]])


def _classes_with_nan(seed=0, n=1500, integer=True):
    """Three classes from features 0 and 1; NaN in feature 0 for most of class 0 (its low values), so a split
    on it must send NaN left; at random in feature 1; in every row of feature 4 (its range then 0 .. 0)."""
    rng = np.random.default_rng(seed)
    features = (rng.integers(0, 12, size=(n, 5)) if integer else rng.normal(size=(n, 5))).astype(np.float64)
    score = features[:, 0] - features[:, 1] + (rng.integers(0, 4, n) if integer else rng.normal(0, 1, n))
    labels = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))
    features[(labels == 0) & (rng.random(n) < 0.7), 0] = np.nan
    features[rng.random(n) < 0.1, 1] = np.nan
    features[:, 4] = np.nan
    return features, labels


def _trainers():
    return [bob_boost.BAdaCostTrainer(COSTS, bob_boost.CostSensitiveTreeTrainer(max_depth=3, missing="bin"),
                                      number_of_rounds=7),
            bob_boost.SAMMETrainer(bob_boost.MultiClassStumpTrainer(missing="bin"), number_of_rounds=6,
                                   shrinkage=0.5, feature_fraction=0.6, random_state=3),
            bob_boost.AdaBoostM1Trainer(bob_boost.CostSensitiveTreeTrainer(max_depth=2, missing="bin"),
                                        number_of_rounds=5)]


@pytest.mark.parametrize("integer", [True, False], ids=["integers", "floats"])
@pytest.mark.parametrize("trainer", _trainers(), ids=["badacost-trees", "samme-stumps", "m1-trees"])
@pytest.mark.long
def test_multi_class_boosting_with_missing_values_gives_the_in_memory_model(client, monkeypatch, trainer, integer):
    monkeypatch.setattr(_chunks, "CHECKPOINT_ROUNDS", 3)  # the weights rebuilt from the codes route NaN too
    features, labels = _classes_with_nan(integer=integer)
    order = np.argsort(labels, kind="stable")  # the first chunk holds class 0 only
    features, labels = features[order], labels[order]
    chunks = ((300, 700, 9, 491),)
    machine = DaskMultiClassBoosting(trainer, client=client).train(
        da.from_array(features, chunks=chunks + ((3, 2),)), da.from_array(labels, chunks=chunks))
    memory = trainer.train(features, labels)
    assert len(machine) == len(memory) > 3 and machine.weak_machines == memory.weak_machines
    np.testing.assert_allclose(machine.weights, memory.weights, rtol=1e-9, atol=0)
    if isinstance(trainer.weak_learner, bob_boost.MultiClassStumpTrainer):
        sides = [w.missing_above for w in machine.weak_machines]
        assert None not in sides
    else:
        sides = [t.missing_left[node] for t in machine.weak_machines for node in range(len(t.missing_left))
                 if t.features[node] == 0]
        assert True in sides  # class 0's NaN goes left, with the low values
    np.testing.assert_array_equal(machine.predict(features), memory.predict(features))


def test_the_badacost_classifier_takes_missing(client):
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    from bob_boost.dask import DaskBAdaCostClassifier
    from bob_boost.sklearn import BAdaCostClassifier
    features, labels = _classes_with_nan(seed=1, n=1200)
    names = np.array(["cat", "dog", "emu"])[labels]
    dX = da.from_array(features, chunks=((500, 7, 693), (5,)))
    options = dict(cost_matrix="balanced", max_depth=2, n_estimators=6, missing="bin")
    model = DaskBAdaCostClassifier(client=client, **options).fit(dX, names)
    memory = BAdaCostClassifier(early_stopping=False, **options).fit(features, names)
    assert model.machine_.weak_machines == memory.machine_.weak_machines
    np.testing.assert_allclose(model.machine_.weights, memory.machine_.weights, rtol=1e-9, atol=0)
    assert np.array_equal(model.predict(dX).compute(), memory.predict(features))
    assert model.to_local().missing == "bin"


def test_bad_features_with_missing_values_are_the_in_memory_errors(client):
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    from bob_boost.dask import DaskBAdaCostClassifier
    features, labels = _classes_with_nan(n=300)
    trainer = _trainers()[0]
    infinite = features.copy()
    infinite[299, 2] = np.inf
    with pytest.raises(ValueError, match="features: contain infinite"):
        DaskMultiClassBoosting(trainer, client=client).train(da.from_array(infinite, chunks=(100, 5)), labels)
    dX = da.from_array(features, chunks=(100, 5))
    with pytest.raises(ValueError, match="features: contain NaN"):
        DaskBAdaCostClassifier(n_estimators=2, client=client).fit(dX, labels)
    with pytest.raises(ValueError, match="missing"):
        DaskBAdaCostClassifier(n_estimators=2, missing="zero", client=client).fit(dX, labels)


@pytest.mark.long
def test_a_continued_machine_replays_its_nan_routing(client, monkeypatch):
    monkeypatch.setattr(_chunks, "CHECKPOINT_ROUNDS", 2)  # the continued run rebuilds from replayed weights
    features, labels = _classes_with_nan(seed=2, n=900)
    dX = da.from_array(features, chunks=((400, 3, 497), (5,)))
    trainer = _trainers()[0]
    at_once = DaskMultiClassBoosting(trainer, client=client).train(dX, labels, 6)
    continued = DaskMultiClassBoosting(trainer, client=client).train(dX, labels, 3)
    continued = DaskMultiClassBoosting(trainer, client=client).train(dX, labels, 3, boosted_machine=continued)
    assert len(continued) == 6 and continued.weak_machines == at_once.weak_machines
    assert np.array_equal(continued.weights, at_once.weights)
