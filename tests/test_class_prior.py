"""Boosting from the weighted class prior: the classification losses' optimal constants, and classifiers that
start from them (an intercept) unless a bob-compatible model is asked for."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar

from bob_boost.losses import (DoubleBaseLoss, ExponentialLoss, FocalLoss, LogitLoss, SoftmaxLoss,
                              TangentialLoss)

RNG = np.random.default_rng(7)
SIGNS = np.where(RNG.random((400, 3)) < [0.2, 0.5, 0.9], 1.0, -1.0)
WEIGHTS = RNG.uniform(0.1, 4.0, size=400)
BINARY_LOSSES = [ExponentialLoss(), LogitLoss(), TangentialLoss(), FocalLoss(2.0), FocalLoss(1.0, alpha=0.25),
                 DoubleBaseLoss(2.0, 0.5)]


@pytest.mark.parametrize("loss", BINARY_LOSSES, ids=repr)
@pytest.mark.parametrize("weights", [None, WEIGHTS], ids=["unweighted", "weighted"])
def test_a_binary_baseline_is_the_constant_of_least_loss_of_every_column(loss, weights):
    found = loss.baseline(SIGNS, weights)
    assert found.shape == (3,)
    for column in range(3):
        targets = SIGNS[:, column:column + 1]

        def total(score, targets=targets):
            values = loss.loss(targets, np.full_like(targets, score))[:, 0]
            return float(np.sum(values if weights is None else weights * values))
        best = minimize_scalar(total, bounds=(found[column] - 3, found[column] + 3), method="bounded",
                               options={"xatol": 1e-12})
        np.testing.assert_allclose(found[column], best.x, atol=1e-6)
        assert total(found[column]) <= best.fun * (1 + 1e-12)


def test_the_closed_forms_are_the_log_odds_over_the_probability_scale():
    share = np.average(SIGNS > 0, axis=0, weights=WEIGHTS)
    np.testing.assert_allclose(LogitLoss().baseline(SIGNS, WEIGHTS), np.log(share / (1 - share)), rtol=1e-12)
    np.testing.assert_allclose(ExponentialLoss().baseline(SIGNS, WEIGHTS), 0.5 * np.log(share / (1 - share)),
                               rtol=1e-12)
    np.testing.assert_allclose(TangentialLoss().baseline(SIGNS, WEIGHTS), np.tan(share - 0.5), rtol=1e-12)


@pytest.mark.parametrize("loss", [ExponentialLoss(), LogitLoss(), TangentialLoss(), FocalLoss(2.0)], ids=repr)
def test_a_class_without_weight_gets_a_finite_baseline(loss):
    targets = np.array([[1.0], [1.0], [-1.0]])
    found = loss.baseline(targets, np.array([1.0, 2.0, 0.0]))
    assert np.isfinite(found).all() and found[0] > 0.5  # the tangential loss: tan(1/2)


@pytest.mark.parametrize("weights", [None, WEIGHTS], ids=["unweighted", "weighted"])
def test_the_softmax_baseline_is_the_log_prior_and_least_loss(weights):
    labels = np.minimum((RNG.random(400) * 4.6).astype(int), 3)
    loss = SoftmaxLoss()
    targets = loss.check_targets(labels)
    found = loss.baseline(targets, weights)
    prior = np.average(targets, axis=0, weights=weights)
    np.testing.assert_allclose(np.exp(found) / np.exp(found).sum(), prior, rtol=1e-12)
    assert abs(found.sum()) < 1e-12

    def total(scores):
        values = loss.loss(targets, np.broadcast_to(scores, targets.shape).copy())[:, 0]
        return float(np.sum(values if weights is None else weights * values))
    best = minimize(total, np.zeros(4), method="BFGS", options={"gtol": 1e-10})
    assert total(found) <= best.fun * (1 + 1e-12)


# -- classifiers that boost from the prior -------------------------------------------------------------------

def _blobs(n_classes):
    """The noisy blobs of scikit-learn's check_class_weight_classifiers, split in half as it does."""
    from sklearn.datasets import make_blobs
    from sklearn.model_selection import train_test_split

    X, y = make_blobs(centers=n_classes, random_state=0, cluster_std=20)
    X, X_test, y, y_test = train_test_split(X, y, test_size=0.5, random_state=0)
    return X, y, X_test, y_test


CLASSIFIERS = [{"loss": "exponential"}, {"loss": "logit"}, {"loss": "tangential"}, {"loss": "focal"},
               {"weak_learner": "tree", "loss": "logit", "max_depth": 2},
               {"weak_learner": "tree", "loss": "softmax", "max_depth": 2},
               {"weak_learner": "lut", "loss": "exponential", "maximum_feature_value": 8}]


def _classifier_data(options, n_classes=2):
    X, y, X_test, y_test = _blobs(n_classes)
    if options.get("weak_learner") == "lut":  # LUT entries: each feature cut into 8 codes by the training range
        edges = np.linspace(X.min(axis=0), X.max(axis=0), 9)[1:-1]
        X, X_test = ([np.searchsorted(edges[:, j], data[:, j]) for j in range(2)] for data in (X, X_test))
        X, X_test = np.column_stack(X), np.column_stack(X_test)
    return X, y, X_test, y_test


@pytest.mark.parametrize("options", CLASSIFIERS, ids=lambda o: "-".join(map(str, o.values())))
def test_the_intercept_is_the_weighted_prior_and_class_weights_move_it(options):
    from bob_boost.sklearn import BoostingClassifier

    n_classes = 3 if options["loss"] == "softmax" or options.get("weak_learner") == "lut" else 2
    X, y, X_test, _ = _classifier_data(options, n_classes)
    heavy = {0: 1000.0, **{c: 1e-4 for c in range(1, n_classes)}}
    with_prior = BoostingClassifier(n_estimators=5, class_weight=heavy, **options).fit(X, y)
    without = BoostingClassifier(n_estimators=5, class_weight=heavy, boost_from_average=False, **options).fit(X, y)
    assert np.all(without.machine_.baseline == 0)
    # the machine starts from the loss's optimal constant of the weighted classes, so the heavy class wins
    weights = np.where(y == 0, 1000.0, 1e-4)
    loss = with_prior.machine_.metadata["loss"]
    rows = with_prior._encoding.targets({"softmax": "indices"}.get(loss, "signed" if n_classes == 2 else
                                                                    "one_vs_rest"), y)
    from bob_boost.recipes import make_loss
    expected = make_loss(loss).baseline(make_loss(loss).check_targets(rows), weights)
    np.testing.assert_allclose(with_prior.machine_.baseline, expected, rtol=1e-10, atol=1e-12)
    assert np.mean(with_prior.predict(X_test) == 0) > 0.95
    if options.get("weak_learner") != "tree":  # a sum of +-1 weak machines alone cannot predict one class
        assert np.mean(without.predict(X_test) == 0) < 0.87


def test_balanced_data_gets_a_zero_intercept_and_the_bob_model_without_it():
    from bob_boost.sklearn import BoostingClassifier

    X = np.arange(40.0)[:, np.newaxis]
    y = np.tile([0, 1], 20)
    model = BoostingClassifier(n_estimators=3).fit(X, y)
    assert np.all(model.machine_.baseline == 0)  # log(1) exactly
    weighted = BoostingClassifier(n_estimators=3).fit(X, y, sample_weight=np.where(y == 1, 3.0, 1.0))
    np.testing.assert_allclose(weighted.machine_.baseline, [0.5 * np.log(3.0)], rtol=1e-12)


def test_a_warm_start_keeps_the_first_fits_intercept():
    from bob_boost.sklearn import BoostingClassifier

    X, y, _, _ = _blobs(2)
    once = BoostingClassifier(n_estimators=6, loss="logit").fit(X, y)
    model = BoostingClassifier(n_estimators=3, loss="logit", warm_start=True).fit(X, y)
    model.set_params(n_estimators=6).fit(X, y)
    assert model.machine_.baseline.tobytes() == once.machine_.baseline.tobytes()
    assert model.machine_.weights.tobytes() == once.machine_.weights.tobytes()


@pytest.mark.parametrize("value", [1, "yes", None])
def test_boost_from_average_must_be_a_bool(value):
    from bob_boost.sklearn import BoostingClassifier

    X, y, _, _ = _blobs(2)
    with pytest.raises(ValueError, match=r"boost_from_average: must be True or False, got"):
        BoostingClassifier(boost_from_average=value).fit(X, y)


def test_a_saved_classifier_keeps_its_intercept(tmp_path):
    from bob_boost.sklearn import BoostingClassifier, load_estimator

    X, y, X_test, _ = _blobs(2)
    model = BoostingClassifier(n_estimators=4, class_weight={0: 5.0}).fit(X, y)
    model.save(tmp_path / "model.hdf5")
    again = load_estimator(tmp_path / "model.hdf5")
    assert again.get_params()["boost_from_average"] is True
    assert again.machine_.baseline.tobytes() == model.machine_.baseline.tobytes()
    np.testing.assert_array_equal(again.decision_function(X_test), model.decision_function(X_test))


@pytest.mark.parametrize("options", [{"loss": "exponential"}, {"weak_learner": "tree", "loss": "softmax"}],
                         ids=["stumps", "softmax-trees"])
def test_a_cluster_counts_the_same_prior(client, options):
    da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
    from bob_boost.dask import DaskBoostingClassifier
    from bob_boost.sklearn import BoostingClassifier

    X, y, X_test, _ = _blobs(3 if options["loss"] == "softmax" else 2)
    weights = np.linspace(0.5, 2.0, y.size)
    settings = dict(n_estimators=4, class_weight={0: 3.0}, **options)
    local = BoostingClassifier(**settings).fit(X, y, sample_weight=weights)
    remote = DaskBoostingClassifier(client=client, **settings).fit(
        da.from_array(X, chunks=(17, 2)), da.from_array(y, chunks=17), sample_weight=da.from_array(weights, chunks=17))
    assert np.any(local.machine_.baseline != 0)
    # the class totals are summed chunk by chunk on the cluster: the same to rounding
    np.testing.assert_allclose(remote.machine_.baseline, local.machine_.baseline, rtol=1e-14)
    np.testing.assert_allclose(remote.decision_function(X_test), local.decision_function(X_test), rtol=1e-9,
                               atol=1e-12)
    np.testing.assert_array_equal(remote.predict(X_test), local.predict(X_test))


def test_a_classifier_saved_before_the_intercept_existed_loads_without_it():
    from pathlib import Path

    from bob_boost.sklearn import load_estimator

    # written by bob_boost 0.1, whose classifiers had no intercept and no boost_from_average parameter
    path = Path(__file__).parent / "data" / "golden" / "sklearn_boosting_classifier_stump_strings.hdf5"
    loaded = load_estimator(path)
    assert "boost_from_average" not in loaded.machine_.metadata["params"]
    assert loaded.get_params()["boost_from_average"] is False and np.all(loaded.machine_.baseline == 0)


# -- AdaBoostDB: the asymmetry is the costs' -----------------------------------------------------------------

@pytest.mark.parametrize("dask", [False, True], ids=["memory", "dask"])
def test_adaboostdb_refuses_class_weights_and_points_to_the_costs(dask):
    if dask:
        pytest.importorskip("distributed", reason="distributed training needs the dask extra")
        from bob_boost.dask import DaskAdaBoostDBClassifier as estimator_class
    else:
        from bob_boost.sklearn import AdaBoostDBClassifier as estimator_class
    assert "class_weight" not in estimator_class().get_params()
    with pytest.raises(TypeError, match=r"class_weight is not a parameter: each class starts with half .* "
                                        r"sample_weight, and the asymmetry between the classes as cost_positive"):
        estimator_class(class_weight="balanced")
    with pytest.raises(TypeError, match=r"unexpected keyword argument .cost_postive."):  # Python's own
        estimator_class(cost_postive=2.0)


def test_an_adaboostdb_file_saved_with_class_weight_still_loads(tmp_path):
    import json

    import h5py

    from bob_boost.sklearn import AdaBoostDBClassifier, load_estimator

    X, y, X_test, _ = _blobs(2)
    model = AdaBoostDBClassifier(cost_positive=2.0, n_estimators=3).fit(X, y)
    model.save(tmp_path / "model.hdf5")
    with h5py.File(tmp_path / "model.hdf5", "r+") as file:  # as bob_boost 0.1 wrote it, with the parameter
        metadata = json.loads(file.attrs["Metadata"])
        metadata["params"]["class_weight"] = {"1": 3.0}
        file.attrs["Metadata"] = json.dumps(metadata)
    loaded = load_estimator(tmp_path / "model.hdf5")
    assert "class_weight" not in loaded.get_params() and loaded.get_params()["cost_positive"] == 2.0
    np.testing.assert_array_equal(loaded.decision_function(X_test), model.decision_function(X_test))
