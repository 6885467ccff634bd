"""Cross-validation round by round (``bob_boost.cv``): the folds, the per-round means against the fold models'
own staged scores, stratification, and bad input."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn", reason="cross-validation runs the scikit-learn estimators")

import bob_boost  # noqa: E402
from sklearn.metrics import accuracy_score, log_loss, mean_squared_error  # noqa: E402
from bob_boost.sklearn import BoostingClassifier, BoostingRegressor  # noqa: E402


def _classes(n=300, seed=0):
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(n, 4))
    return features, np.where(features[:, 0] + 0.5 * rng.normal(size=n) > 0, "yes", "no")


def test_the_means_are_the_fold_models_staged_scores():
    features, labels = _classes()
    result = bob_boost.cv(BoostingClassifier(loss="logit", n_estimators=12), features, labels, n_folds=3,
                          metrics=["accuracy", "log_loss"])
    assert len(result["models"]) == 3 and len(result["folds"]) == 3
    accuracies, losses = [], []
    for model, (train, test) in zip(result["models"], result["folds"]):
        assert np.intersect1d(train, test).size == 0
        accuracies.append([accuracy_score(labels[test], p) for p in model.staged_predict(features[test])])
        losses.append([log_loss(labels[test], p) for p in model.staged_predict_proba(features[test])])
    np.testing.assert_allclose(result["accuracy-mean"], np.mean(accuracies, axis=0), rtol=1e-15)
    np.testing.assert_allclose(result["accuracy-std"], np.std(accuracies, axis=0), rtol=1e-15)
    np.testing.assert_allclose(result["log_loss-mean"], np.mean(losses, axis=0), rtol=1e-15)
    assert result["accuracy-mean"].size == 12
    assert result["log_loss-mean"][-1] < result["log_loss-mean"][0]
    # the folds hold every row once, stratified: each fold has the classes' proportions
    held = np.sort(np.concatenate([test for _, test in result["folds"]]))
    assert np.array_equal(held, np.arange(labels.size))
    share = np.mean(labels == "yes")
    assert all(abs(np.mean(labels[test] == "yes") - share) < 0.02 for _, test in result["folds"])


def test_regressors_get_rmse_by_default_and_the_same_result_from_the_same_seed():
    rng = np.random.default_rng(1)
    features = rng.normal(size=(240, 3))
    targets = features[:, 0] * 3 + rng.normal(size=240)
    model = BoostingRegressor(weak_learner="tree", n_estimators=10)
    first = bob_boost.cv(model, features, targets, n_folds=4, random_state=5)
    second = bob_boost.cv(model, features, targets, n_folds=4, random_state=5)
    assert set(first) == {"rmse-mean", "rmse-std", "models", "folds"}
    assert np.array_equal(first["rmse-mean"], second["rmse-mean"])
    train, test = first["folds"][0]
    fold = first["models"][0]
    expected = np.sqrt(mean_squared_error(targets[test], fold.predict(features[test])))
    assert first["rmse-mean"][-1] == pytest.approx(np.mean([np.sqrt(mean_squared_error(
        targets[t], m.predict(features[t]))) for m, (_, t) in zip(first["models"], first["folds"])]), rel=1e-12)
    assert expected > 0 and not hasattr(model, "machine_")  # the estimator passed is left unfitted


def test_folds_that_stop_early_keep_the_rounds_every_fold_reached():
    features, labels = _classes(n=400, seed=2)
    model = BoostingClassifier(loss="logit", weak_learner="tree", n_estimators=200, early_stopping=True,
                               n_iter_no_change=3, validation_fraction=0.2)
    result = bob_boost.cv(model, features, labels, n_folds=3, metrics="accuracy")
    assert result["accuracy-mean"].size == min(m.n_iter_ for m in result["models"])


def test_a_callable_metric_and_weights():
    features, labels = _classes(seed=3)
    weights = np.random.default_rng(3).uniform(0.5, 2.0, size=labels.size)

    def share_yes(truth, predicted, sample_weight=None):
        return float(np.average(predicted == "yes", weights=sample_weight))
    result = bob_boost.cv(BoostingClassifier(n_estimators=5), features, labels, n_folds=2, metrics=share_yes,
                          sample_weight=weights)
    assert result["share_yes-mean"].shape == (5,) and np.all((0 <= result["share_yes-mean"])
                                                             & (result["share_yes-mean"] <= 1))


@pytest.mark.parametrize("arguments, message", [
    ({"n_folds": 1}, r"n_folds"),
    ({"n_folds": 40}, r"n_folds: 40 stratified folds, but class 'rare' has 3 samples"),
    ({"metrics": "f1"}, r"metrics: unknown metric 'f1'"),
    ({"metrics": "log_loss", "estimator": BoostingClassifier(loss="tangential")}, r"metrics: 'log_loss' needs "
                                                                                  r"predict_proba"),
])
def test_bad_cross_validation_arguments_are_refused(arguments, message):
    features, labels = _classes(n=60, seed=4)
    labels = labels.astype(object)
    labels[:3] = "rare"
    estimator = arguments.pop("estimator", BoostingClassifier(n_estimators=3))
    with pytest.raises(ValueError, match=message):
        bob_boost.cv(estimator, features, labels, **arguments)


def test_an_object_without_staged_predictions_is_refused():
    from sklearn.linear_model import LogisticRegression
    with pytest.raises(TypeError, match="estimator: expected a bob_boost.sklearn estimator"):
        bob_boost.cv(LogisticRegression(), np.zeros((10, 2)), np.arange(10) % 2)
