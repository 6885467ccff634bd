"""Gentle AdaBoost and LogitBoost: Friedman, Hastie and Tibshirani's algorithms, written out here with
scikit-learn's weighted least-squares trees, give the scores bob_boost's trainers give."""
from __future__ import annotations

import numpy as np
import pytest

from bob_boost import GentleAdaBoostTrainer, LogitBoostTrainer
from bob_boost.recipes import make_recipe


def _data(n=500, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    return X, np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(scale=0.5, size=n) > 0.5, 1.0, -1.0)


def _gentle(X, y, rounds, depth):
    """Algorithm 4: fit f by weighted least squares of y with weights w; F += f; w <- w exp(-y f)."""
    from sklearn.tree import DecisionTreeRegressor
    w, F = np.full(y.size, 1.0 / y.size), np.zeros(y.size)
    for _ in range(rounds):
        f = DecisionTreeRegressor(max_depth=depth).fit(X, y, sample_weight=w).predict(X)
        F += f
        w = w * np.exp(-y * f)
        w /= w.sum()
    return F


def _logitboost(X, y, rounds, depth):
    """Algorithm 3: z = (y* - p) / (p (1 - p)), w = p (1 - p); fit f to z by weighted least squares;
    F += f / 2; p = exp(F) / (exp(F) + exp(-F))."""
    from sklearn.tree import DecisionTreeRegressor
    positive = (y > 0).astype(float)
    F, p = np.zeros(y.size), np.full(y.size, 0.5)
    for _ in range(rounds):
        f = DecisionTreeRegressor(max_depth=depth).fit(X, (positive - p) / (p * (1 - p)),
                                                       sample_weight=p * (1 - p)).predict(X)
        F += f / 2
        p = np.exp(F) / (np.exp(F) + np.exp(-F))
    return F


@pytest.mark.parametrize("depth", [1, 3])
def test_the_trainers_are_the_papers_algorithms(depth):
    pytest.importorskip("sklearn", reason="the references' trees are scikit-learn's")
    X, y = _data()
    gentle = GentleAdaBoostTrainer(depth, max_bins=None).train(X, y, 8)
    logit = LogitBoostTrainer(depth, max_bins=None).train(X, y, 8)
    assert np.all(gentle.weights == 1.0) and np.all(logit.weights == 1.0)
    np.testing.assert_allclose(gentle.decision_scores(X)[:, 0], _gentle(X, y, 8, depth), atol=1e-10)
    # the machine's score is the log-odds, twice the paper's F
    np.testing.assert_allclose(logit.decision_scores(X)[:, 0] / 2, _logitboost(X, y, 8, depth), atol=1e-10)


def test_the_recipes_refuse_what_the_papers_do_not_do():
    for trainer in ("gentle-adaboost", "logitboost"):
        with pytest.raises(ValueError, match="is binary but there are 3 classes"):
            make_recipe(trainer, number_of_classes=3)
        with pytest.raises(ValueError, match="weak_learner: .* boosts regression trees"):
            make_recipe(trainer, number_of_classes=2, weak_learner="lut")
        with pytest.raises(ValueError, match="shrinkage, feature_fraction, sampling"):
            make_recipe(trainer, number_of_classes=2, shrinkage=0.1)
    assert make_recipe("gentle-adaboost", number_of_classes=2, weak_learner="tree").trainer.weak_trainer.max_depth == 2


def test_the_estimators_on_real_data_and_their_files(tmp_path):
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    from bob_boost.sklearn import GentleAdaBoostClassifier, LogitBoostClassifier, load_estimator
    from test_defaults import MARGIN, load, majority
    x, y, x_test, y_test = load("credit-g_500")
    for cls in (GentleAdaBoostClassifier, LogitBoostClassifier):
        estimator = cls().fit(x, y)
        assert estimator.score(x_test, y_test) >= majority(y_test) + MARGIN
        probabilities = estimator.predict_proba(x_test)
        np.testing.assert_array_equal(estimator.classes_[np.argmax(probabilities, axis=1)], estimator.predict(x_test))
        estimator.save(tmp_path / f"{cls.__name__}.hdf5")
        loaded = load_estimator(tmp_path / f"{cls.__name__}.hdf5")
        assert type(loaded) is cls
        np.testing.assert_array_equal(loaded.predict_proba(x_test), probabilities)
        with pytest.raises(ValueError, match="Only binary classification is supported"):
            cls().fit(x[:30], np.arange(30) % 3)
