"""Global feature importances: split counts, the trees' recorded split gains and training cover (checked against
the gradient sums of the training rows), mean absolute Shapley values; through the machine and the estimators'
``importance_type``; bad kinds refused."""
from __future__ import annotations

import numpy as np
import pytest

import bob_boost


def _data(seed=0, n=2000):
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(n, 5))
    targets = np.where(features[:, 0] + features[:, 1] * features[:, 2] > 0, 1.0, -1.0)
    return features, targets


def _trees(features, targets, rounds=8):
    return bob_boost.Boosting(bob_boost.TreeTrainer(max_leaves=8), bob_boost.LogitLoss(),
                              learning_rate=0.3).train(features, targets, rounds)


def test_split_gain_and_cover_sum_the_trees_nodes():
    features, targets = _data()
    machine = _trees(features, targets)
    expected = {kind: np.zeros(5) for kind in ("split", "gain", "cover")}
    for weak in machine.weak_machines:
        for node, feature in enumerate(weak.features):
            if feature >= 0:
                expected["split"][feature] += 1
                expected["gain"][feature] += weak.gains[node]
                expected["cover"][feature] += weak.cover[node]
    for kind, totals in expected.items():
        np.testing.assert_allclose(machine.feature_importances(kind), totals, rtol=1e-12)
    np.testing.assert_array_equal(machine.feature_importances("weight"), machine.feature_importances("split"))
    assert machine.feature_importances().tolist() == expected["split"].tolist()  # the default kind


def test_the_recorded_cover_and_gain_are_the_training_rows_sums():
    features, targets = _data(seed=3)
    machine = _trees(features, targets, rounds=1)
    tree = machine.weak_machines[0]
    gradient, hessian = bob_boost.LogitLoss().gradient_and_hessian(targets[:, np.newaxis], np.zeros((2000, 1)))
    gradient, hessian = gradient[:, 0], hessian[:, 0]
    right = features[:, tree.features[0]] >= tree.thresholds[0]
    assert tree.cover[0] == pytest.approx(hessian.sum(), rel=1e-12)
    assert tree.cover[tree.right_children[0]] == pytest.approx(hessian[right].sum(), rel=1e-12)

    def score(rows):
        return gradient[rows].sum() ** 2 / hessian[rows].sum()  # no l2 regularisation by default

    assert tree.gains[0] == pytest.approx(score(right) + score(~right) - score(np.ones(2000, bool)), rel=1e-9)
    assert np.all(tree.gains[tree.features < 0] == 0)


def test_cost_sensitive_trees_record_the_sample_weight_they_split():
    features, targets = _data(seed=4)
    classes = (targets > 0).astype(int) + (features[:, 3] > 0.5)
    machine = bob_boost.BAdaCostTrainer(1.0 - np.eye(3), bob_boost.CostSensitiveTreeTrainer(max_depth=2)).train(
        features, classes, 3)
    first = machine.weak_machines[0]
    assert first.cover[0] == pytest.approx(1.0, rel=1e-12)  # the first round's weights: 1/n each
    right = features[:, first.features[0]] >= first.thresholds[0]
    assert first.cover[first.right_children[0]] == pytest.approx(right.mean(), rel=1e-12)
    assert machine.feature_importances("cover")[first.features[0]] >= first.cover[0]
    with pytest.raises(ValueError, match="kind: 'gain' needs the split gains trees record"):
        machine.feature_importances("gain")


def test_one_feature_machines_count_their_feature():
    features, targets = _data()
    machine = bob_boost.Boosting(bob_boost.StumpTrainer(), bob_boost.LogitLoss()).train(features, targets, 12)
    counts = np.bincount([weak.index for weak in machine.weak_machines], minlength=5)
    np.testing.assert_array_equal(machine.feature_importances("split"), counts)
    for kind in ("gain", "cover"):
        with pytest.raises(ValueError, match=f"kind: '{kind}' needs the .* trees record; StumpMachine"):
            machine.feature_importances(kind)


def test_shap_importance_is_the_mean_absolute_value():
    features, targets = _data()
    machine = _trees(features, targets)
    values = machine.shap_values(features[:300])
    np.testing.assert_allclose(machine.feature_importances("shap", features[:300]),
                               np.abs(values[:, :-1]).mean(axis=0), rtol=1e-12)
    background = features[::50]
    np.testing.assert_allclose(machine.feature_importances("shap", features[:300], background),
                               np.abs(machine.shap_values(features[:300], background)[:, :-1]).mean(axis=0))
    softmax = bob_boost.Boosting(bob_boost.TreeTrainer(max_leaves=4), bob_boost.SoftmaxLoss(2)).train(
        features, (targets > 0).astype(int), 3)
    per_output = np.abs(softmax.shap_values(features[:100])[:, :-1]).mean(axis=0)  # (#features, #outputs)
    np.testing.assert_allclose(softmax.feature_importances("shap", features[:100]), per_output.sum(axis=1))


def test_the_estimators_importance_type(tmp_path):
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    from bob_boost.sklearn import BoostingClassifier, load_estimator

    features, targets = _data()
    default = BoostingClassifier(weak_learner="tree", n_estimators=10, random_state=0).fit(features, targets)
    assert default.importance_type == "loss"
    for kind in ("split", "weight", "gain", "cover"):
        model = BoostingClassifier(weak_learner="tree", n_estimators=10, random_state=0,
                                   importance_type=kind).fit(features, targets)
        totals = model.machine_.feature_importances(kind)
        np.testing.assert_allclose(model.feature_importances_, totals / totals.sum(), rtol=1e-12)
    model.save(tmp_path / "cover.hdf5")
    loaded = load_estimator(tmp_path / "cover.hdf5")
    assert loaded.importance_type == "cover"
    np.testing.assert_array_equal(loaded.feature_importances_, model.feature_importances_)
    np.testing.assert_array_equal(default.set_params(importance_type="loss").feature_importances_,
                                  BoostingClassifier(weak_learner="tree", n_estimators=10, random_state=0).fit(
                                      features, targets).feature_importances_)
    with pytest.raises(ValueError, match="importance_type: expected one of 'loss', 'split', .* got 'shap'"):
        _ = default.set_params(importance_type="shap").feature_importances_
    stumps = BoostingClassifier(n_estimators=5, importance_type="gain").fit(features, targets)
    with pytest.raises(ValueError, match="importance_type: 'gain' needs the split gains"):
        _ = stumps.feature_importances_


def test_bad_kinds_and_rows_are_refused():
    features, targets = _data()
    machine = _trees(features, targets, rounds=2)
    with pytest.raises(ValueError, match="kind: expected one of 'split', 'weight', 'gain', 'cover', 'shap', got"):
        machine.feature_importances("total_gain")
    with pytest.raises(ValueError, match="features: kind 'shap' averages the Shapley values of rows"):
        machine.feature_importances("shap")
    with pytest.raises(ValueError, match="features: only kind 'shap' reads rows"):
        machine.feature_importances("gain", features)
    with pytest.raises(ValueError, match="features: the machine was trained on 5 features, got 4"):
        machine.feature_importances("shap", features[:, :4])
