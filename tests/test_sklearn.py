"""Tests of the scikit-learn estimators in bob_boost.sklearn."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("sklearn", reason="scikit-learn is an optional extra (pip install bob_boost[sklearn])")

from scipy.special import expit  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402
from sklearn.multiclass import OneVsRestClassifier  # noqa: E402
from sklearn.pipeline import Pipeline, make_pipeline  # noqa: E402
from sklearn.preprocessing import KBinsDiscretizer, StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import bob_boost  # noqa: E402
from bob_boost.sklearn import (AdaBoostDBClassifier, AdaMECClassifier, BAdaCostClassifier, BoostingClassifier,  # noqa: E402
                               ArcGVClassifier, BoostingRegressor, CostReweightingClassifier, GentleAdaBoostClassifier,
                               LogitBoostClassifier, MultiClassCostClassifier, PIBoostClassifier,
                               RealAdaBoostClassifier, load_estimator)
from bob_boost.trainers.badacost import BAdaCostTrainer  # noqa: E402
from bob_boost.trainers.cost_sensitive import AdaBoostDBTrainer  # noqa: E402
from bob_boost.weak_trainers.multiclass import CostSensitiveTreeTrainer  # noqa: E402

N_BINS = 8


def _lut_pipeline(estimator):
    """A LUT estimator behind the quantiser that turns real features into LUT indices."""
    return make_pipeline(
        KBinsDiscretizer(n_bins=N_BINS, encode="ordinal", strategy="uniform"), estimator)


CHECKED_ESTIMATORS = [
    BoostingClassifier(n_estimators=5),
    BoostingClassifier(loss="tangential", n_estimators=5),
    BoostingClassifier(weak_learner="tree", loss="logit", max_depth=2, n_estimators=5, missing="bin"),
    BoostingRegressor(n_estimators=5),
    AdaBoostDBClassifier(cost_positive=2.0, n_estimators=5),
    BAdaCostClassifier(n_estimators=5, feature_fraction=0.5, random_state=0),
    RealAdaBoostClassifier(n_estimators=5, max_depth=2),
    GentleAdaBoostClassifier(n_estimators=5),
    LogitBoostClassifier(n_estimators=5, max_depth=2),
    ArcGVClassifier(n_estimators=5),
    AdaMECClassifier(n_estimators=5),
    CostReweightingClassifier(n_estimators=5),
    CostReweightingClassifier("asymboost", cost_positive=2.0, n_estimators=5),
    MultiClassCostClassifier(n_estimators=5),
    MultiClassCostClassifier("multiboost", pool_size=30, n_estimators=5, random_state=0),
    MultiClassCostClassifier("lp-csb", n_estimators=5),
    PIBoostClassifier(n_estimators=5),
    _lut_pipeline(BoostingClassifier(loss="logit", weak_learner="lut", maximum_feature_value=N_BINS, n_estimators=5)),
    _lut_pipeline(BoostingRegressor(weak_learner="lut", maximum_feature_value=N_BINS, n_estimators=5)),
]

#: Why a check fails; doc/sklearn.md lists the same reasons.
PIPELINE_FAILURES = {
    "check_estimators_overwrite_params": "sklearn's Pipeline fits the step estimators it holds in place",
    "check_dont_overwrite_parameters": "sklearn's Pipeline fits the step estimators it holds in place",
}


#: Real AdaBoost's and SAMME.R's own reweighting undoes a constant class weight: doc/sklearn.md says how.
REAL_ADABOOST_FAILURES = {
    "check_class_weight_classifiers": "the rows are reweighted by the exponential loss of the scores every round, "
                                      "so after the first round the light classes weigh as much as class 0 and "
                                      "their leaves win back 10-20% of its test points",
}


#: Gentle AdaBoost's and LogitBoost's trees are the paper's: doc/sklearn.md says how.
LEAST_SQUARES_FAILURES = {
    "check_class_weight_classifiers": "the paper's least-squares trees have no least leaf weight: a leaf holding "
                                      "light-class rows only outputs their weighted mean, +1, whatever their weight",
}


#: arc-gv's and the cost-reweighting algorithms' stumps start from 0, as their papers: doc/sklearn.md says how.
ARC_GV_FAILURES = {
    "check_class_weight_classifiers": "an ensemble of +-1 stumps without an intercept (Breiman's starts from 0) "
                                      "predicts class 1 wherever most of its 5 stumps vote for it, whatever the "
                                      "class weights: 82% class 0, as BoostingClassifier(boost_from_average=False)",
}


#: AdaMEC holds out samples to calibrate: doc/sklearn.md says how.
ADAMEC_FAILURES = {
    "check_sample_weight_equivalence_on_dense_data": "the calibration samples are held out row by row, so a row "
                                                     "repeated is not a row weighted twice (and the check's class of "
                                                     "one sample cannot be split)",
}


#: MultiBoost's pool and Lp-CSB's votes: doc/sklearn.md says how.
MULTICLASS_COST_FAILURES = {
    "multiboost": {"check_sample_weight_equivalence_on_dense_data": "the pool's trees grow on random samples of the "
                                                                    "rows, so a row repeated is two chances to be "
                                                                    "drawn, not one row weighted twice"},
    "lp-csb": {"check_class_weight_classifiers": "its trees vote per label in each leaf with no least leaf weight "
                                                 "(it takes no min_weight_fraction_leaf), so a leaf holding "
                                                 "light-class rows only votes for their label: 78% class 0"},
}


def expected_failed_checks(estimator) -> dict[str, str]:
    """The checks that cannot pass, with the reason."""
    if isinstance(estimator, MultiClassCostClassifier):
        return MULTICLASS_COST_FAILURES.get(estimator.algorithm, {})
    if isinstance(estimator, PIBoostClassifier):
        return {"check_class_weight_classifiers": "margin-vector stumps without an intercept (PIBoost starts from 0) "
                                                  "predict a light class wherever most stumps vote for it: 82% class "
                                                  "0 with two classes, 84% with three"}
    if isinstance(estimator, Pipeline):
        return PIPELINE_FAILURES
    if isinstance(estimator, AdaMECClassifier):
        return ADAMEC_FAILURES
    if isinstance(estimator, (ArcGVClassifier, CostReweightingClassifier)):
        return ARC_GV_FAILURES
    if isinstance(estimator, (GentleAdaBoostClassifier, LogitBoostClassifier)):
        return LEAST_SQUARES_FAILURES
    return REAL_ADABOOST_FAILURES if isinstance(estimator, RealAdaBoostClassifier) else {}


@parametrize_with_checks(CHECKED_ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def _binary_data(n_samples=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, "yes", "no")
    return X, y


def _digit_like_data(n_samples=300, seed=0):
    """Integer features in [0, 16) whose first three columns carry the class (3 classes)."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, size=n_samples)
    X = rng.integers(0, 16, size=(n_samples, 6))
    X[np.arange(n_samples), labels] = rng.integers(12, 16, size=n_samples)
    X[np.arange(n_samples), (labels + 1) % 3] = rng.integers(0, 4, size=n_samples)
    return X, np.array(["cat", "dog", "emu"])[labels]


def test_string_labels_binary():
    X, y = _binary_data()
    model = BoostingClassifier(n_estimators=30).fit(X[:150], y[:150])
    assert model.classes_.tolist() == ["no", "yes"]
    predicted = model.predict(X[150:])
    assert predicted.dtype == y.dtype
    assert np.mean(predicted == y[150:]) > 0.85
    # positive scores mean classes_[1]
    assert np.array_equal(predicted == "yes", model.decision_function(X[150:]) > 0)


@pytest.mark.parametrize("boost_from_average", [True, False])
def test_binary_model_is_the_core_boosting_on_plus_minus_one_targets(boost_from_average):
    X, y = _binary_data()
    model = BoostingClassifier(loss="logit", n_estimators=10, boost_from_average=boost_from_average).fit(X, y)
    targets = np.where(y == "yes", 1.0, -1.0)
    # the intercept is the prior's log-odds; without it, bob's model
    baseline = np.log(np.mean(targets > 0) / np.mean(targets < 0)) if boost_from_average else None
    core = bob_boost.Boosting(bob_boost.StumpTrainer(), bob_boost.LogitLoss()).train(X, targets, 10,
                                                                                     baseline=baseline)
    np.testing.assert_allclose(model.machine_.baseline, core.baseline, rtol=1e-12)
    assert (model.machine_.baseline[0] != 0) == boost_from_average
    assert [m._state() for m in model.machine_.weak_machines] == [m._state() for m in core.weak_machines]
    np.testing.assert_allclose(model.machine_.weights, core.weights, rtol=1e-10)


def test_multiclass_lut_one_vs_rest_with_string_labels():
    X, y = _digit_like_data()
    model = BoostingClassifier(loss="logit", weak_learner="lut", maximum_feature_value=16, n_estimators=20)
    model.fit(X[:200], y[:200])
    assert model.classes_.tolist() == ["cat", "dog", "emu"]
    assert model.machine_.number_of_outputs == 3
    scores = model.decision_function(X[200:])
    assert scores.shape == (100, 3)
    assert np.array_equal(model.predict(X[200:]), model.classes_[np.argmax(scores, axis=1)])
    assert model.score(X[200:], y[200:]) > 0.9
    probabilities = model.predict_proba(X[200:])
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)
    assert np.array_equal(np.argmax(probabilities, axis=1), np.argmax(scores, axis=1))


def test_shared_selection_uses_one_feature_per_round():
    X, y = _digit_like_data()
    model = BoostingClassifier(weak_learner="lut", maximum_feature_value=16, n_estimators=5,
                               selection_style="shared").fit(X, y)
    assert all(len(set(m.indices.tolist())) == 1 for m in model.machine_.weak_machines)


@pytest.mark.parametrize("loss, scale", [("logit", 1.0), ("exponential", 2.0)])
def test_predict_proba_recovers_class_frequencies(loss, scale):
    # one binary feature: the loss minimiser per feature value is the logit of the class frequency
    X = np.repeat([0, 1], 100)[:, np.newaxis]
    y = np.concatenate([np.arange(100) < 20, np.arange(100) < 70])
    model = BoostingClassifier(loss=loss, weak_learner="lut", maximum_feature_value=2, n_estimators=50).fit(X, y)
    probabilities = model.predict_proba([[0], [1]])
    np.testing.assert_allclose(probabilities[:, 1], [0.2, 0.7], atol=1e-6)
    np.testing.assert_allclose(probabilities[:, 1], expit(scale * model.decision_function([[0], [1]])))


def test_tangential_loss_offers_no_probabilities():
    X, y = _binary_data()
    model = BoostingClassifier(loss="tangential", n_estimators=5).fit(X, y)
    assert not hasattr(model, "predict_proba")
    assert hasattr(BoostingClassifier(loss="logit"), "predict_proba")


def test_stumps_refuse_multiclass_but_one_vs_rest_works():
    X, y = _digit_like_data()
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        BoostingClassifier().fit(X, y)
    model = OneVsRestClassifier(BoostingClassifier(n_estimators=10)).fit(X, y)
    assert model.score(X, y) > 0.9


@pytest.mark.parametrize("estimator, data", [
    (BoostingClassifier(n_estimators=8), _binary_data),
    (AdaBoostDBClassifier(cost_positive=3.0, n_estimators=8), _binary_data),
    (BAdaCostClassifier(cost_matrix=[[0, 1, 5], [1, 0, 1], [1, 1, 0]], n_estimators=8), _digit_like_data),
    (BoostingClassifier(loss="logit", weak_learner="lut", maximum_feature_value=16, n_estimators=8),
     _digit_like_data),
])
def test_save_and_load_round_trip(tmp_path, estimator, data):
    X, y = data()
    model = estimator.fit(X, y)
    path = tmp_path / "model.hdf5"
    model.save(path)
    loaded = type(model).load(path)
    assert loaded.get_params() == model.get_params()
    assert loaded.classes_.tolist() == model.classes_.tolist()
    assert loaded.classes_.dtype == model.classes_.dtype
    assert loaded.n_features_in_ == X.shape[1]
    assert np.array_equal(loaded.predict(X), model.predict(X))
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    if model.machine_.cost_matrix is not None:
        np.testing.assert_array_equal(loaded.machine_.cost_matrix, model.machine_.cost_matrix)
    # the file is an ordinary model for the core API too
    core = bob_boost.BoostedMachine.load(path)
    np.testing.assert_array_equal(core.decision_scores(X), model.machine_.decision_scores(X))


def test_save_and_load_regressor_and_integer_labels(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 3))
    regressor = BoostingRegressor(n_estimators=10).fit(X, 50.0 + 3.0 * X[:, 0])
    regressor.save(tmp_path / "regressor.hdf5")
    loaded = load_estimator(tmp_path / "regressor.hdf5")
    assert isinstance(loaded, BoostingRegressor)
    assert loaded.intercept_ == regressor.intercept_
    np.testing.assert_array_equal(loaded.predict(X), regressor.predict(X))

    labels = np.where(X[:, 0] > 0, 7, -3)
    classifier = BoostingClassifier(n_estimators=5).fit(X, labels)
    classifier.save(tmp_path / "classifier.hdf5")
    restored = BoostingClassifier.load(tmp_path / "classifier.hdf5")
    assert restored.classes_.tolist() == [-3, 7]
    assert np.array_equal(restored.predict(X), classifier.predict(X))


def test_load_rejects_foreign_files(tmp_path):
    X, y = _binary_data()
    BoostingClassifier(n_estimators=3).fit(X, y).save(tmp_path / "classifier.hdf5")
    with pytest.raises(bob_boost.ModelFormatError, match="holds a BoostingClassifier, not a BoostingRegressor"):
        BoostingRegressor.load(tmp_path / "classifier.hdf5")
    core = bob_boost.Boosting(bob_boost.StumpTrainer(), bob_boost.ExponentialLoss()).train(
        X, np.where(y == "yes", 1.0, -1.0), 3)
    core.save(tmp_path / "core.hdf5")
    # a machine saved outside the estimators is adopted (every front door reads every model file) ...
    adopted = load_estimator(tmp_path / "core.hdf5")
    assert isinstance(adopted, BoostingClassifier) and adopted.classes_.tolist() == [-1, 1]
    np.testing.assert_array_equal(adopted.predict(X), core.predict(X))
    # ... but not as an estimator of another kind, and an unknown estimator name is still refused
    with pytest.raises(bob_boost.ModelFormatError, match="holds a BoostingClassifier, not a BoostingRegressor"):
        BoostingRegressor.load(tmp_path / "core.hdf5")
    core.metadata["sklearn_estimator"] = "RandomForest"
    core.save(tmp_path / "forged.hdf5")
    with pytest.raises(bob_boost.ModelFormatError, match="names an unknown estimator 'RandomForest'"):
        load_estimator(tmp_path / "forged.hdf5")


def test_save_before_fit_raises(tmp_path):
    with pytest.raises(NotFittedError):
        BoostingClassifier().save(tmp_path / "model.hdf5")


def test_pipeline_cross_validation_and_grid_search():
    X, y = _binary_data(300)
    pipeline = make_pipeline(StandardScaler(), BoostingClassifier(loss="logit", n_estimators=20))
    scores = cross_val_score(pipeline, X, y, cv=3)
    assert scores.shape == (3,) and scores.min() > 0.8
    search = GridSearchCV(BoostingClassifier(), {"n_estimators": [1, 20]}, cv=3).fit(X, y)
    assert search.best_params_ == {"n_estimators": 20}


def test_lut_quantised_pipeline_learns():
    X, y = _binary_data(300)
    pipeline = _lut_pipeline(BoostingClassifier(loss="logit", weak_learner="lut", maximum_feature_value=N_BINS,
                                                n_estimators=30))
    assert cross_val_score(pipeline, X, y, cv=3).min() > 0.8


@pytest.mark.parametrize("X, problem", [
    (np.array([[0.5, 1.0], [2.0, 3.0]]), "X: .*integers"),
    (np.array([[-1, 1], [2, 3]]), "X: .*non-negative.* -1"),
    (np.array([[0, 1], [2, 16]]), "X: .* 16 .*maximum_feature_value=16"),
])
def test_lut_rejects_features_outside_the_table(X, problem):
    model = BoostingClassifier(weak_learner="lut", maximum_feature_value=16)
    with pytest.raises(ValueError, match=problem):
        model.fit(X, [0, 1])
    fitted = BoostingClassifier(weak_learner="lut", maximum_feature_value=16, n_estimators=2)
    fitted.fit(np.array([[0, 1], [2, 3]]), [0, 1])
    with pytest.raises(ValueError, match="KBinsDiscretizer"):
        fitted.predict(X)


@pytest.mark.parametrize("params, message", [
    ({"loss": "squared"}, "loss: must be one of"),
    ({"weak_learner": "forest"}, "weak_learner: must be one of"),
    ({"selection_style": "both"}, "selection_style: must be one of"),
    ({"maximum_feature_value": 1}, "maximum_feature_value: must be >= 2"),
    ({"n_estimators": 0}, "n_estimators: must be >= 1"),
])
def test_bad_parameters_are_reported_at_fit(params, message):
    X, y = _binary_data(20)
    model = BoostingClassifier(**params)  # the constructor only stores them
    with pytest.raises(ValueError, match=message):
        model.fit(X, y)


def test_bad_inputs():
    X, y = _binary_data(20)
    with pytest.raises(ValueError, match="sample_weight: must be finite and non-negative"):
        BoostingClassifier().fit(X, y, sample_weight=np.full(20, -1.0))
    with pytest.raises(ValueError, match="sample_weight: expected shape"):
        BoostingClassifier().fit(X, y, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="class 'no' has no sample with positive weight"):
        BoostingClassifier().fit(X, y, sample_weight=(y == "yes").astype(float))
    with pytest.raises(ValueError, match="1 class"):
        BoostingClassifier().fit(X, np.full(20, "yes"))
    with pytest.raises(ValueError, match="Unknown label type"):
        BoostingClassifier().fit(X, np.linspace(0, 1, 20))
    model = BoostingClassifier(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :3])
    with pytest.raises(ValueError, match="NaN"):
        model.predict(np.full((2, 4), np.nan))


def test_constant_features():
    X = np.ones((10, 3))
    y = np.arange(10) % 2
    with pytest.raises(ValueError, match="every feature is constant"):
        BoostingClassifier().fit(X, y)
    regressor = BoostingRegressor().fit(X, np.arange(10.0), sample_weight=np.arange(10.0))
    assert len(regressor.machine_) == 0
    # the weighted mean sum(i * i) / sum(i) for i = 0..9
    np.testing.assert_allclose(regressor.predict(np.zeros((2, 3))), 285.0 / 45.0)


def test_sample_weight_equals_repetition_without_ties():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    y = X[:, 0] + 0.3 * rng.normal(size=40)
    weights = rng.integers(0, 4, size=40)
    weighted = BoostingRegressor(n_estimators=10).fit(X, y, sample_weight=weights)
    repeated = BoostingRegressor(n_estimators=10).fit(np.repeat(X, weights, axis=0), np.repeat(y, weights))
    assert [m._state() for m in weighted.machine_.weak_machines] == [
        m._state() for m in repeated.machine_.weak_machines]
    np.testing.assert_allclose(weighted.predict(X), repeated.predict(X), rtol=1e-9)


def test_sample_weight_moves_the_decision():
    X = np.arange(20.0)[:, np.newaxis]
    y = (X[:, 0] >= 10).astype(int)
    y[12] = 0  # a negative among the positives
    light = BoostingClassifier(n_estimators=1, boost_from_average=False).fit(X, y)
    heavy = BoostingClassifier(n_estimators=1, boost_from_average=False).fit(
        X, y, sample_weight=np.where(y == 1, 1.0, 10.0))
    # without intercept (which would take up most of the weights' asymmetry): unweighted, splitting at 9.5
    # misclassifies one sample (x=12); with negatives weighing 10 that costs more than misclassifying the
    # positives 10 and 11 by splitting at 12.5
    assert light.predict([[11.0]])[0] == 1
    assert heavy.predict([[11.0]])[0] == 0


def test_regressor_fits_a_step_around_its_intercept():
    X = np.linspace(0, 1, 50)[:, np.newaxis]
    y = 100.0 + np.where(X[:, 0] > 0.5, 2.0, -2.0)
    model = BoostingRegressor(n_estimators=5).fit(X, y)
    assert model.intercept_ == pytest.approx(100.0)
    np.testing.assert_allclose(model.predict(X), y, atol=1e-6)


def test_fit_is_deterministic():
    X, y = _digit_like_data()
    first = BoostingClassifier(weak_learner="lut", maximum_feature_value=16, n_estimators=5).fit(X, y)
    second = BoostingClassifier(weak_learner="lut", maximum_feature_value=16, n_estimators=5).fit(X, y)
    assert [m._state() for m in first.machine_.weak_machines] == [m._state() for m in second.machine_.weak_machines]
    assert first.machine_.weights.tobytes() == second.machine_.weights.tobytes()


@pytest.mark.long
def test_scikit_learn_stays_optional():
    imported = subprocess.run(
        [sys.executable, "-c", "import sys, bob_boost; print('sklearn' in sys.modules)"],
        capture_output=True, text=True, check=True)
    assert imported.stdout.strip() == "False"
    missing = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['sklearn'] = None; import bob_boost.sklearn"],
        capture_output=True, text=True)
    assert missing.returncode != 0
    assert "ImportError" in missing.stderr and 'pip install "bob_boost[sklearn]"' in missing.stderr


# -- AdaBoostDB ------------------------------------------------------------------------
def test_adaboostdb_is_the_trainer_on_plus_minus_one_targets():
    X, y = _binary_data()
    model = AdaBoostDBClassifier(cost_positive=2.0, cost_negative=0.5, n_estimators=10).fit(X, y)
    assert model.classes_.tolist() == ["no", "yes"]
    core = AdaBoostDBTrainer(2.0, 0.5).train(X, np.where(y == "yes", 1.0, -1.0), number_of_rounds=10)
    assert [m._state() for m in model.machine_.weak_machines] == [m._state() for m in core.weak_machines]
    np.testing.assert_allclose(model.machine_.weights, core.weights, rtol=1e-12)
    assert np.array_equal(model.predict(X) == "yes", core.predict(X) == 1)


def test_adaboostdb_costs_trade_false_negatives_for_false_positives():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 2))
    y = (X[:, 0] + rng.normal(scale=1.0, size=400) > 0).astype(int)  # overlapping classes
    rates = []
    for cost_positive in (0.5, 1.0, 2.0):
        predicted = AdaBoostDBClassifier(cost_positive=cost_positive, n_estimators=20).fit(X, y).predict(X)
        rates.append((np.mean(predicted[y == 1] == 0), np.mean(predicted[y == 0] == 1)))
    false_negatives, false_positives = np.array(rates).T
    assert np.all(np.diff(false_negatives) < 0) and np.all(np.diff(false_positives) > 0)


def test_adaboostdb_sample_weight_acts_within_each_class():
    X, y = _binary_data()
    rng = np.random.default_rng(2)
    weights = rng.uniform(0.5, 2.0, size=y.size)
    model = AdaBoostDBClassifier(n_estimators=5).fit(X, y, sample_weight=weights)
    # scaling one class's weights leaves the within-class distribution, hence the model, unchanged
    scaled = AdaBoostDBClassifier(n_estimators=5).fit(X, y, sample_weight=np.where(y == "yes", 7.0, 1.0) * weights)
    np.testing.assert_allclose(scaled.decision_function(X), model.decision_function(X), rtol=1e-9)
    unweighted = AdaBoostDBClassifier(n_estimators=5).fit(X, y)
    assert not np.allclose(unweighted.decision_function(X), model.decision_function(X))


def test_adaboostdb_refuses_more_than_two_classes():
    X, y = _digit_like_data()
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        AdaBoostDBClassifier().fit(X, y)
    with pytest.raises(ValueError, match="cost_positive"):
        AdaBoostDBClassifier(cost_positive=0.0).fit(*_binary_data())


# -- BAdaCost --------------------------------------------------------------------------
def test_badacost_is_the_trainer_on_class_indices():
    X, y = _digit_like_data()
    costs = np.array([[0, 1, 4], [1, 0, 1], [2, 1, 0]], dtype=float)
    model = BAdaCostClassifier(cost_matrix=costs, max_depth=1, n_estimators=6).fit(X, y)
    core = BAdaCostTrainer(costs, weak_learner=CostSensitiveTreeTrainer(max_depth=1), number_of_rounds=6).train(
        X, np.searchsorted(["cat", "dog", "emu"], y))
    np.testing.assert_allclose(model.machine_.weights, core.weights, rtol=1e-12)
    assert np.array_equal(model.predict(X), model.classes_[core.predict(X)])
    # decision_function is minus the expected cost; its argmax is the prediction
    scores = model.decision_function(X)
    assert np.array_equal(model.classes_[np.argmax(scores, axis=1)], model.predict(X))


def test_badacost_expensive_confusion_happens_less_than_with_samme():
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 3, size=900)
    X = rng.normal(size=(900, 2)) + np.array([[0, 0], [1, 0], [0, 2]])[labels]
    y = np.array(["a", "b", "c"])[labels]
    costs = np.array([[0, 10, 1], [1, 0, 1], [1, 1, 0]], dtype=float)  # "a" taken for "b" is expensive
    test = slice(600, None)
    samme = BAdaCostClassifier(n_estimators=20).fit(X[:600], y[:600]).predict(X[test])
    costly = BAdaCostClassifier(cost_matrix=costs, n_estimators=20).fit(X[:600], y[:600]).predict(X[test])
    confusions = [np.sum((y[test] == "a") & (predicted == "b")) for predicted in (samme, costly)]
    assert confusions[1] < confusions[0]


def test_badacost_two_classes_decision_sign():
    X, y = _binary_data()
    model = BAdaCostClassifier(cost_matrix=[[0, 1], [3, 0]], n_estimators=10).fit(X, y)
    scores = model.decision_function(X)
    assert scores.shape == (X.shape[0],)
    assert np.array_equal(model.predict(X) == "yes", scores > 0)


def test_badacost_random_state():
    X, y = _digit_like_data()
    def fit(random_state):
        model = BAdaCostClassifier(n_estimators=8, feature_fraction=0.4, random_state=random_state).fit(X, y)
        return model.machine_.weights.tobytes(), [m._state() for m in model.machine_.weak_machines]
    assert fit(3) == fit(3)
    assert fit(np.random.RandomState(7)) == fit(np.random.RandomState(7))
    assert len({str(fit(seed)) for seed in range(4)}) > 1


def test_badacost_bad_cost_matrix():
    X, y = _digit_like_data()
    with pytest.raises(ValueError, match=r"cost_matrix: is 2x2 but y has 3 classes"):
        BAdaCostClassifier(cost_matrix=[[0, 1], [1, 0]]).fit(X, y)
    with pytest.raises(ValueError, match="cost_matrix: the diagonal must be zero"):
        BAdaCostClassifier(cost_matrix=np.ones((3, 3))).fit(X, y)
