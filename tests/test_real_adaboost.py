"""Real AdaBoost and SAMME.R: their papers' algorithms, written out here with scikit-learn's trees as the
classifier, give the scores bob_boost's trainers give; SAMME.R on two classes is Real AdaBoost."""
from __future__ import annotations

import numpy as np
import pytest

import bob_boost
from bob_boost import BoostedMachine, ProbabilityTreeTrainer, RealAdaBoostTrainer, SAMMERTrainer

EPS = np.finfo(np.float64).eps


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = (X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(scale=0.5, size=n) > 0.5).astype(int)
    return X, y, y + (X[:, 2] > 1)


def _reference_samme_r(X, y, k, rounds, depth):
    """Zhu et al. 2009, Algorithm 4, with scikit-learn's weighted Gini trees as the classifier."""
    from sklearn.tree import DecisionTreeClassifier
    w = np.full(y.size, 1.0 / y.size)
    coding = np.where(np.arange(k) == y[:, np.newaxis], 1.0, -1.0 / (k - 1))
    scores = np.zeros((y.size, k))
    for _ in range(rounds):
        tree = DecisionTreeClassifier(max_depth=depth).fit(X, y, sample_weight=w)
        logs = np.log(np.clip(tree.predict_proba(X), EPS, None))
        scores += (k - 1) * (logs - logs.mean(axis=1, keepdims=True))
        w = w * np.exp(-(k - 1) / k * (coding * logs).sum(axis=1))
        w /= w.sum()
    return scores


def _reference_real(X, y, rounds, depth):
    """Friedman, Hastie and Tibshirani 2000, Algorithm 2, with scikit-learn's weighted Gini trees."""
    from sklearn.tree import DecisionTreeClassifier
    signs = np.where(y == 1, 1.0, -1.0)
    w = np.full(y.size, 1.0 / y.size)
    scores = np.zeros(y.size)
    for _ in range(rounds):
        p = np.clip(DecisionTreeClassifier(max_depth=depth).fit(X, y, sample_weight=w).predict_proba(X), EPS, None)
        f = 0.5 * np.log(p[:, 1] / p[:, 0])
        scores += f
        w = w * np.exp(-signs * f)
        w /= w.sum()
    return scores


@pytest.mark.parametrize("depth", [1, 2])
def test_samme_r_is_zhu_et_al_algorithm_4(depth):
    pytest.importorskip("sklearn", reason="the reference's trees are scikit-learn's")
    X, _, y3 = _data()
    machine = SAMMERTrainer(ProbabilityTreeTrainer(depth, quantized=False), number_of_rounds=10).train(X, y3)
    assert len(machine) == 10 and np.all(machine.weights == 1.0)
    np.testing.assert_allclose(machine.decision_scores(X), _reference_samme_r(X, y3, 3, 10, depth), atol=1e-9)
    assert machine.decision_rule == "argmax"


@pytest.mark.parametrize("depth", [1, 3])
def test_real_adaboost_is_friedman_hastie_tibshirani_algorithm_2(depth):
    pytest.importorskip("sklearn", reason="the reference's trees are scikit-learn's")
    X, y, _ = _data(seed=1)
    machine = RealAdaBoostTrainer(ProbabilityTreeTrainer(depth, leaves="real", quantized=False),
                                  number_of_rounds=8).train(X, y)
    np.testing.assert_allclose(machine.decision_scores(X)[:, 0], _reference_real(X, y, 8, depth), atol=1e-9)
    np.testing.assert_array_equal(machine.predict(X), np.where(machine.decision_scores(X)[:, 0] > 0, 1, -1))


def test_samme_r_on_two_classes_is_real_adaboost():
    """The same trees (the same weights every round), and scores ``(-F, F)`` of Real AdaBoost's ``F``."""
    X, y, _ = _data(n=1500, seed=2)
    real = RealAdaBoostTrainer(number_of_rounds=25).train(X, y)
    samme_r = SAMMERTrainer(number_of_rounds=25).train(X, y)
    assert len(real) == len(samme_r) == 25
    for a, b in zip(real.weak_machines, samme_r.weak_machines):
        np.testing.assert_array_equal(a.features, b.features)
        np.testing.assert_array_equal(a.thresholds, b.thresholds)
    F = real.decision_scores(X)[:, 0]
    np.testing.assert_allclose(samme_r.decision_scores(X), np.column_stack([-F, F]), rtol=1e-12, atol=1e-12)


def test_continuing_a_machine_gives_one_longer_run_and_a_separating_tree_ends_training():
    X, _, y3 = _data(seed=3)
    trainer = SAMMERTrainer(ProbabilityTreeTrainer(2), number_of_rounds=12)
    whole = trainer.train(X, y3)
    part = trainer.train(X, y3, number_of_rounds=5)
    trainer.train(X, y3, number_of_rounds=7, boosted_machine=part)
    assert len(part) == 12
    for a, b in zip(whole.weak_machines, part.weak_machines):
        np.testing.assert_array_equal(a.features, b.features)
    np.testing.assert_allclose(part.decision_scores(X), whole.decision_scores(X), rtol=1e-12, atol=1e-12)
    separable = (X[:, 0] > 0).astype(int)
    exact = ProbabilityTreeTrainer(1, leaves="real", quantized=False)
    assert len(RealAdaBoostTrainer(exact, number_of_rounds=10).train(X, separable)) == 1


def test_files_shapley_values_and_sample_weights(tmp_path):
    X, _, y3 = _data(seed=4)
    weights = np.random.default_rng(0).random(y3.size)
    machine = SAMMERTrainer(ProbabilityTreeTrainer(2, missing="bin"), number_of_rounds=6).train(
        X, y3, sample_weight=weights)
    assert not np.array_equal(machine.decision_scores(X), SAMMERTrainer(
        ProbabilityTreeTrainer(2, missing="bin"), number_of_rounds=6).train(X, y3).decision_scores(X))
    machine.save(tmp_path / "samme_r.hdf5")
    loaded = BoostedMachine.load(tmp_path / "samme_r.hdf5")
    np.testing.assert_array_equal(loaded.decision_scores(X), machine.decision_scores(X))
    np.testing.assert_array_equal(loaded.predict(X), machine.predict(X))
    values = machine.shap_values(X[:30])
    np.testing.assert_allclose(values.sum(axis=1), machine.decision_scores(X[:30]), atol=1e-10)


def test_bad_arguments_are_errors_naming_them():
    X, y, y3 = _data(n=100)
    with pytest.raises(ValueError, match="leaves: must be one of"):
        ProbabilityTreeTrainer(leaves="discrete")
    with pytest.raises(ValueError, match="weak_learner: RealAdaBoostTrainer needs leaves='real'"):
        RealAdaBoostTrainer(ProbabilityTreeTrainer(leaves="samme.r"))
    with pytest.raises(TypeError, match="weak_learner: expected a ProbabilityTreeTrainer"):
        SAMMERTrainer(bob_boost.CostSensitiveTreeTrainer())
    with pytest.raises(ValueError, match="learning_rate"):
        SAMMERTrainer(learning_rate=0.0)
    with pytest.raises(ValueError, match="labels"):
        RealAdaBoostTrainer().train(X, y3)
    with pytest.raises(ValueError, match="labels: has 99 samples"):
        SAMMERTrainer().train(X, y[:99])
