"""Defaults that converge through every front door: the scikit-learn estimators, ``bob-boost train`` and the
Dask estimators, each with every argument at its default, on small real data sets shipped in
``tests/data/uci``.

The training loss is replayed here from the saved or fitted model, round by round (the baseline plus each
weak machine's weighted outputs, independent of the trainers' own bookkeeping); it must never rise, the
scores must stay finite and bounded, and held-out accuracy must beat the majority class's.
"""
from __future__ import annotations

import csv
import warnings

import numpy as np
import pytest

from bob_boost import BoostedMachine
from bob_boost.cli import main
from bob_boost.losses import ExponentialLoss, LogitLoss, SoftmaxLoss, SquaredLoss, TangentialLoss
from bob_boost.sklearn import (AdaBoostDBClassifier, AdaMECClassifier, ArcGVClassifier, BAdaCostClassifier,
                               BoostingClassifier, BoostingRegressor, CostReweightingClassifier,
                               GentleAdaBoostClassifier, LogitBoostClassifier, RealAdaBoostClassifier)
from test_defaults import MARGIN, SCORE_BOUNDS, load, majority

LOSSES = {"exponential": ExponentialLoss(), "logit": LogitLoss(), "tangential": TangentialLoss(),
          "softmax": SoftmaxLoss(), "squared": SquaredLoss()}


def replayed_losses(machine: BoostedMachine, features: np.ndarray, targets: np.ndarray, loss) -> list[float]:
    """The training loss of the machine's first 0, 1, ... rounds (0: its baseline alone), from its weak
    machines' outputs."""
    scores = np.zeros((features.shape[0], machine.number_of_outputs)) + machine.baseline
    checked = loss.check_targets(targets)
    values = [float(np.sum(loss.loss(checked, scores)))]
    for weak, weight in zip(machine.weak_machines, machine.weights):
        scores = scores + weight * weak.forward(features)
        assert np.all(np.isfinite(scores)) and np.max(np.abs(scores)) <= SCORE_BOUNDS[type(loss).__name__]
        values.append(float(np.sum(loss.loss(checked, scores))))
    assert np.array_equal(scores, machine.decision_scores(features))
    return values


def assert_descends(values: list[float]) -> None:
    assert len(values) > 1, "no round was trained"
    rises = [(after - before) / abs(before) for before, after in zip(values, values[1:])]
    assert max(rises, default=0.0) <= 1e-12


def fit_quietly(estimator, x, y):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return estimator.fit(x, y)


def classifier_cases():
    for loss in ("exponential", "logit", "tangential"):
        for weak in ("stump", "tree"):
            yield pytest.param("ionosphere", loss, weak, id=f"ionosphere-{loss}-{weak}")
    for loss in ("softmax", "logit", "exponential"):
        for weak in ("lut", "tree"):
            yield pytest.param("pendigits_600", loss, weak, id=f"pendigits_600-{loss}-{weak}")


@pytest.mark.parametrize("name, loss, weak", list(classifier_cases()))
def test_boosting_classifier_defaults_converge(name, loss, weak):
    x, y, x_test, y_test = load(name)
    estimator = fit_quietly(BoostingClassifier(loss=loss, weak_learner=weak), x, y)
    k = estimator.classes_.size
    if loss == "softmax":
        targets = y
    elif k == 2:
        targets = np.where(y == estimator.classes_[1], 1.0, -1.0)
    else:
        targets = np.where(np.eye(k)[y] > 0, 1.0, -1.0)
    assert_descends(replayed_losses(estimator.machine_, x, targets, LOSSES[loss]))
    assert np.all(np.diff(estimator.train_score_) >= -1e-12 * np.abs(estimator.train_score_[:-1]))
    assert estimator.score(x_test, y_test) >= majority(y_test) + MARGIN


@pytest.mark.parametrize("weak", ["stump", "tree"])
def test_boosting_regressor_defaults_converge(weak):
    # diabetes' label as a number to regress (0 or 1): the held-out error must beat the mean's
    x, y, x_test, y_test = load("diabetes")
    estimator = fit_quietly(BoostingRegressor(weak_learner=weak), x, y.astype(float))
    assert_descends(replayed_losses(estimator.machine_, x, y.astype(float), SquaredLoss()))
    error = np.mean((estimator.predict(x_test) - y_test) ** 2)
    assert error <= (1.0 - MARGIN) * np.mean((y_test - y.mean()) ** 2)


def test_cost_sensitive_estimators_defaults_beat_the_majority():
    x, y, x_test, y_test = load("credit-g_500")
    assert fit_quietly(AdaBoostDBClassifier(), x, y).score(x_test, y_test) >= majority(y_test) + MARGIN
    x, y, x_test, y_test = load("car_500")
    assert fit_quietly(BAdaCostClassifier(), x, y).score(x_test, y_test) >= majority(y_test) + MARGIN


def test_the_two_class_family_defaults_beat_the_majority():
    """Gentle AdaBoost, LogitBoost, arc-gv, calibrated AdaMEC and the cost-reweighting classifier (AdaC2) with every
    parameter at its default."""
    x, y, x_test, y_test = load("credit-g_500")
    for cls in (GentleAdaBoostClassifier, LogitBoostClassifier, ArcGVClassifier, AdaMECClassifier,
                CostReweightingClassifier):
        assert fit_quietly(cls(), x, y).score(x_test, y_test) >= majority(y_test) + MARGIN, cls.__name__


def test_real_adaboost_defaults_beat_the_majority():
    """Real AdaBoost on two classes, SAMME.R on car's four."""
    for name in ("credit-g_500", "car_500"):
        x, y, x_test, y_test = load(name)
        estimator = fit_quietly(RealAdaBoostClassifier(), x, y)
        assert estimator.machine_.number_of_outputs == (1 if np.unique(y).size == 2 else np.unique(y).size)
        assert estimator.score(x_test, y_test) >= majority(y_test) + MARGIN


def _write(path, features, labels) -> None:
    with open(path, "w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow([f"f{j}" for j in range(features.shape[1])] + ["target"])
        writer.writerows(np.column_stack([features, labels]).tolist())


@pytest.mark.parametrize("name, weak", [("ionosphere", "stump"), ("ionosphere", "tree"), ("pendigits_600", "lut"),
                                        ("pendigits_600", "tree")])
def test_command_line_defaults_converge(tmp_path, name, weak):
    x, y, x_test, y_test = load(name)
    data, model = tmp_path / "train.csv", tmp_path / "model.hdf5"
    _write(data, x, y)
    assert main(["train", str(data), "-o", str(model), "-w", weak, "-q"]) == 0
    machine = BoostedMachine.load(model)
    k = int(y.max()) + 1
    # the command line's default loss: exponential for two classes, logit one-vs-rest for more
    if k == 2:
        values = replayed_losses(machine, x, np.where(y == 1, 1.0, -1.0), ExponentialLoss())
        accuracy = np.mean((machine.decision_scores(x_test)[:, 0] > 0) == (y_test == 1))
    else:
        values = replayed_losses(machine, x, np.where(np.eye(k)[y] > 0, 1.0, -1.0), LogitLoss())
        accuracy = np.mean(np.argmax(machine.decision_scores(x_test), axis=1) == y_test)
    assert_descends(values)
    assert accuracy >= majority(y_test) + MARGIN


@pytest.mark.parametrize("trainer, name", [("real-adaboost", "ionosphere"), ("gentle-adaboost", "ionosphere"),
                                           ("logitboost", "ionosphere"), ("arc-gv", "ionosphere"),
                                           ("samme-r", "pendigits_600"), ("rusboost", "pendigits_600"),
                                           ("piboost", "pendigits_600"), ("adac1", "ionosphere"),
                                           ("adac2", "ionosphere"), ("adac3", "ionosphere"), ("csb0", "ionosphere"),
                                           ("csb1", "ionosphere"), ("csb2", "ionosphere"),
                                           ("asymboost", "ionosphere")])
def test_command_line_defaults_of_the_family_beat_the_majority(tmp_path, trainer, name):
    """Each trainer name with every option at its default (its stumps; 100 rounds) on held-out rows."""
    x, y, x_test, y_test = load(name)
    data, model = tmp_path / "train.csv", tmp_path / "model.hdf5"
    _write(data, x, y)
    assert main(["train", str(data), "-o", str(model), "--trainer", trainer, "-q"]) == 0
    machine = BoostedMachine.load(model)
    predicted = machine.decision_scores(x_test)
    indices = (predicted[:, 0] > 0).astype(int) if predicted.shape[1] == 1 else np.argmax(predicted, axis=1)
    if machine.cost_matrix is not None:  # RUSBoost is SAMME's cost-sensitive machine
        indices = machine.predict(x_test)
    assert np.mean(indices == y_test) >= majority(y_test) + MARGIN


def test_dask_estimator_defaults_converge(client):
    da = pytest.importorskip("dask.array")
    from bob_boost.dask import DaskBoostingClassifier

    x, y, x_test, y_test = load("pendigits_600")
    # 8 rounds rather than 100: the cluster grows each tree leaf by leaf, one round of tasks a split (80
    # trees of 31 leaves take seconds; 1,000 took a minute)
    estimator = DaskBoostingClassifier(weak_learner="tree", loss="softmax", client=client, n_estimators=8)
    estimator.fit(da.from_array(x, chunks=(150, x.shape[1])), da.from_array(y, chunks=150))
    machine = estimator.machine_
    assert machine.weights[0, 0] == 0.1  # the trees' default learning rate
    assert_descends(replayed_losses(machine, x, y, SoftmaxLoss()))
    assert np.mean(machine.predict(x_test) == y_test) >= majority(y_test) + MARGIN
    local = fit_quietly(BoostingClassifier(weak_learner="tree", loss="softmax", n_estimators=8), x, y)
    np.testing.assert_allclose(machine.decision_scores(x_test), local.machine_.decision_scores(x_test),
                               rtol=1e-9, atol=1e-9)


def test_dask_descent_guarantee_halves_as_in_memory(client):
    da = pytest.importorskip("dask.array")
    from bob_boost import Boosting, TreeTrainer
    from bob_boost.dask import DaskBoosting

    x, y, _, _ = load("pendigits_600")
    tree = TreeTrainer(multi_output="shared", max_leaves=8)
    # unshrunk Newton leaves of one shared tree overshoot on 10 classes: both paths halve the same rounds
    cluster = DaskBoosting(SoftmaxLoss(10), client=client, weak_learner="tree", tree=tree, learning_rate=1.0).train(
        da.from_array(x, chunks=(200, x.shape[1])), da.from_array(y, chunks=200), 6)
    memory = Boosting(tree, SoftmaxLoss(10), learning_rate=1.0).train(x, y, 6)
    assert np.any(memory.weights < 1.0)
    np.testing.assert_array_equal(cluster.weights, memory.weights)
    assert_descends(replayed_losses(cluster, x, y, SoftmaxLoss()))
