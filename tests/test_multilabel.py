"""Multi-label classification: the multi-label logistic loss (one independent logit per label), the
``"multilabel"`` decision rule, and BoostingClassifier on a label indicator matrix in memory, on Dask, in
files and in ONNX."""
from __future__ import annotations

import numpy as np
import pytest

import bob_boost
from bob_boost import BoostedMachine, LogitLoss, MultiLabelLogitLoss, TreeTrainer

pytest.importorskip("sklearn", reason="the estimators need scikit-learn")

from sklearn.metrics import accuracy_score  # noqa: E402

from bob_boost.sklearn import BoostingClassifier, load_estimator  # noqa: E402


def _labels(n=900, seed=0):
    """Features and three labels that overlap (a sample can have none, one or several)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] + X[:, 2] > 0.5, X[:, 3] + 0.3 * rng.normal(size=n) < -0.8])
    return X, Y.astype(np.int64)


def test_the_loss_is_the_logit_loss_of_every_label():
    rng = np.random.default_rng(1)
    targets = np.where(rng.random((50, 3)) < 0.3, 1.0, -1.0)
    scores = rng.normal(size=(50, 3))
    multi, logit = MultiLabelLogitLoss(), LogitLoss()
    for method in ("loss", "loss_gradient", "loss_hessian"):
        np.testing.assert_array_equal(getattr(multi, method)(targets, scores), getattr(logit, method)(targets, scores))
    share = np.mean(targets > 0, axis=0)
    np.testing.assert_allclose(multi.baseline(targets), np.log(share / (1 - share)), rtol=1e-12)
    assert multi.decision_rule(3) == "multilabel" and logit.decision_rule(3) is None
    # each label's own probability: the rows need not sum to 1
    np.testing.assert_allclose(multi.inverse_link(scores), 1 / (1 + np.exp(-scores)), rtol=1e-12)


@pytest.mark.parametrize("weak", ["tree", "lut"])
def test_a_machine_decides_every_label_by_its_sign_and_keeps_its_rule_in_files(weak, tmp_path):
    X, Y = _labels()
    features = X if weak == "tree" else np.clip(((X + 3) * 16 / 6).astype(int), 0, 15)
    trainer = TreeTrainer(max_leaves=8) if weak == "tree" else bob_boost.LUTTrainer(16, 3)
    machine = bob_boost.Boosting(trainer, MultiLabelLogitLoss()).train(features, 2.0 * Y - 1, 20, baseline="auto")
    assert machine.decision_rule == "multilabel" and machine.is_classifier
    predicted = machine.predict(features)
    np.testing.assert_array_equal(predicted, np.where(machine.decision_scores(features) > 0, 1, -1))
    assert np.mean(predicted == 2 * Y - 1) > 0.9
    machine.save(tmp_path / "m.hdf5")
    again = BoostedMachine.load(tmp_path / "m.hdf5")
    assert again.decision_rule == "multilabel"
    np.testing.assert_array_equal(again.predict(features), predicted)
    from bob_boost.analysis import errors_per_round, margin_distribution

    errors = errors_per_round(machine, features, Y)
    assert errors.shape == (20,) and errors[-1] == np.mean(np.any(predicted != 2 * Y - 1, axis=1))
    with pytest.raises(ValueError, match="margins need a classifier of one class per sample"):
        margin_distribution(machine, features, Y[:, 0])


def test_the_estimator_is_the_core_trainer_on_plus_minus_one_targets():
    X, Y = _labels()
    model = BoostingClassifier(loss="logit", weak_learner="tree", n_estimators=10).fit(X, Y)
    core = bob_boost.Boosting(TreeTrainer(), MultiLabelLogitLoss(), learning_rate=0.1).train(
        X, 2.0 * Y - 1, 10, baseline="auto")
    assert model.machine_.weak_machines == core.weak_machines
    assert model.machine_.baseline.tobytes() == core.baseline.tobytes()
    np.testing.assert_array_equal(model.machine_.weights, core.weights)
    without = BoostingClassifier(loss="logit", weak_learner="tree", n_estimators=3, boost_from_average=False).fit(X, Y)
    assert np.all(without.machine_.baseline == 0)


def test_predictions_probabilities_and_scores():
    X, Y = _labels()
    model = BoostingClassifier(loss="logit", weak_learner="tree", n_estimators=40).fit(X[:600], Y[:600])
    predicted, scores = model.predict(X[600:]), model.decision_function(X[600:])
    assert predicted.shape == (300, 3) and set(np.unique(predicted)) <= {0, 1}
    np.testing.assert_array_equal(predicted, (scores > 0).astype(int))
    np.testing.assert_allclose(model.predict_proba(X[600:]), 1 / (1 + np.exp(-scores)), rtol=1e-12)
    assert model.classes_.tolist() == [0, 1, 2] and model.machine_.metadata["task"] == "multilabel"
    assert model.score(X[600:], Y[600:]) == pytest.approx(accuracy_score(Y[600:], predicted))
    assert model.score(X[600:], Y[600:]) > 0.8  # every label right
    assert list(model.staged_score(X[600:], Y[600:]))[-1] == pytest.approx(model.score(X[600:], Y[600:]))


def test_files_warm_starts_early_stopping_and_evaluation_sets(tmp_path):
    X, Y = _labels(n=1200)
    model = BoostingClassifier(loss="logit", weak_learner="tree", n_estimators=12).fit(X, Y)
    model.save(tmp_path / "model.hdf5")
    loaded = load_estimator(tmp_path / "model.hdf5")
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    warm = BoostingClassifier(loss="logit", weak_learner="tree", n_estimators=6, warm_start=True).fit(X, Y)
    warm.set_params(n_estimators=12).fit(X, Y)
    assert warm.machine_.weak_machines == model.machine_.weak_machines
    stopped = BoostingClassifier(loss="logit", weak_learner="tree", n_estimators=300, early_stopping=True,
                                 n_iter_no_change=3, learning_rate=0.5).fit(X, Y)
    assert stopped.n_iter_ < 300 and int(np.argmax(stopped.validation_score_)) == stopped.n_iter_
    evaluated = BoostingClassifier(loss="logit", weak_learner="tree", n_estimators=5).fit(
        X[:900], Y[:900], eval_set=[(X[900:], Y[900:])])
    assert evaluated.evals_result_["validation_0"].shape == (6,)
    with pytest.raises(ValueError, match=r"eval_set\[0\]: expected a \(#samples, 3\) label indicator matrix"):
        BoostingClassifier(loss="logit", weak_learner="tree", n_estimators=2).fit(
            X[:900], Y[:900], eval_set=[(X[900:], Y[900:, :2])])


def test_cross_validation_of_labels_is_not_stratified():
    X, Y = _labels(n=600)
    result = bob_boost.cv(BoostingClassifier(loss="logit", weak_learner="tree", n_estimators=5), X, Y, n_folds=3)
    assert set(result) >= {"accuracy-mean", "accuracy-std"} and result["accuracy-mean"].shape == (5,)
    with pytest.raises(ValueError, match="stratified: a multi-label y"):
        bob_boost.cv(BoostingClassifier(loss="logit", weak_learner="tree"), X, Y, n_folds=3, stratified=True)


@pytest.mark.parametrize("parameters, y_change, message", [
    ({}, None, "loss: a multi-label y .* is boosted with loss='logit'"),
    ({"loss": "logit"}, None, "weak_learner: a stump has one output"),
    ({"loss": "logit", "weak_learner": "tree", "class_weight": "balanced"}, None, "class_weight: a multi-label y"),
    ({"loss": "logit", "weak_learner": "tree", "sampling": "stratified", "subsample": 0.5}, None,
     "sampling: 'stratified' draws from every class"),
])
def test_what_labels_cannot_take_is_refused(parameters, y_change, message):
    X, Y = _labels(n=200)
    with pytest.raises(ValueError, match=message):
        BoostingClassifier(n_estimators=2, **parameters).fit(X, Y)


def test_the_command_line_refuses_a_multi_label_model(tmp_path, capsys):
    from bob_boost.cli import main

    X, Y = _labels(n=200)
    BoostingClassifier(loss="logit", weak_learner="tree", n_estimators=2).fit(X, Y).save(tmp_path / "m.hdf5")
    np.savetxt(tmp_path / "d.csv", np.column_stack([X, Y[:, 0]]), delimiter=",",
               header="a,b,c,d,e,target", comments="")
    for command in ("predict", "evaluate"):
        assert main([command, str(tmp_path / "m.hdf5"), str(tmp_path / "d.csv")]) == 1
        assert "a multi-label model predicts a set of labels per sample" in capsys.readouterr().err


def test_onnx_gives_the_labels_and_probabilities():
    runtime = pytest.importorskip("onnxruntime", reason="ONNX export needs the onnx extra")
    from bob_boost.onnx import to_onnx

    X, Y = _labels()
    model = BoostingClassifier(loss="logit", weak_learner="tree", n_estimators=10).fit(X, Y)
    features = X.astype(np.float32)
    labels, _, probabilities = runtime.InferenceSession(to_onnx(model).SerializeToString()).run(
        None, {"features": features})
    np.testing.assert_array_equal(labels, model.predict(features))
    np.testing.assert_allclose(probabilities, model.predict_proba(features), atol=1e-6)
    signs = runtime.InferenceSession(to_onnx(model.machine_).SerializeToString()).run(None, {"features": features})[0]
    np.testing.assert_array_equal(signs, model.machine_.predict(features))


@pytest.mark.long
def test_a_cluster_trains_the_in_memory_labels(client):
    da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
    from bob_boost.dask import DaskBoostingClassifier

    X, Y = _labels()
    weights = np.linspace(0.5, 2.0, Y.shape[0])
    local = BoostingClassifier(loss="logit", weak_learner="tree", n_estimators=5).fit(X, Y, sample_weight=weights)
    remote = DaskBoostingClassifier(loss="logit", weak_learner="tree", n_estimators=5, client=client).fit(
        da.from_array(X, chunks=(170, 5)), da.from_array(Y, chunks=(170, 3)),
        sample_weight=da.from_array(weights, chunks=170))
    # the sums of the cluster's chunks round otherwise: the same trees up to the last bits of their leaves
    np.testing.assert_allclose(remote.machine_.baseline, local.machine_.baseline, rtol=1e-14)
    np.testing.assert_allclose(remote.decision_function(X), local.decision_function(X), rtol=1e-12, atol=1e-12)
    predicted = remote.predict(da.from_array(X, chunks=(170, 5)))
    assert predicted.shape == (900, 3)
    np.testing.assert_array_equal(predicted.compute(), local.predict(X))
    assert remote.to_local().machine_.metadata["task"] == "multilabel"
