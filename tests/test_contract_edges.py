"""Edges of the model contract: each test reproduces a failure an earlier version of the contract had."""
import numpy as np
import pytest

from bob_boost import BAdaCostTrainer, BoostedMachine, Boosting, ExponentialLoss, JesorskyLoss, LUTTrainer, SquaredLoss
from bob_boost import StumpTrainer, datasets
from bob_boost.cli import main
from bob_boost.examples.mnist import example_accuracy, train_example
from bob_boost.labels import ClassEncoding
from bob_boost.sklearn import BoostingClassifier, BoostingRegressor, load_estimator


def test_boolean_labels_round_trip(tmp_path):
    features = np.random.default_rng(0).normal(size=(80, 3))
    labels = features[:, 0] > 0
    estimator = BoostingClassifier(n_estimators=5).fit(features, labels)
    estimator.save(tmp_path / "b.hdf5")
    restored = BoostingClassifier.load(tmp_path / "b.hdf5")
    assert restored.classes_.dtype == bool
    np.testing.assert_array_equal(restored.predict(features), estimator.predict(features))


def test_integer_labels_beyond_float_precision_stay_distinct():
    big = 2 ** 53
    encoding = ClassEncoding([big, big + 1])
    np.testing.assert_array_equal(encoding.encode(np.array([big + 1, big, big + 1])), [1, 0, 1])
    features = np.random.default_rng(1).normal(size=(60, 2))
    labels = np.where(features[:, 0] > 0, big + 1, big)
    assert BoostingClassifier(n_estimators=5).fit(features, labels).score(features, labels) == 1.0


def test_the_multivariate_example_with_two_digits():
    train_x, train_y = datasets.make_digits(200, random_state=0)
    data = datasets.MNIST(train_x, train_y, train_x, train_y).subset([5, 6])
    machine = train_example(data, [5, 6], "lut", "log", 3, multi_variate=True, entries=17)
    assert machine.number_of_outputs == 2 and machine.decision_rule == "argmax"
    assert example_accuracy(machine, data.test_data, data.test_labels, [5, 6], True) > 0.9


def test_evaluating_a_regression_model_on_text_labels_is_one_line(tmp_path, capsys):
    rng = np.random.default_rng(2)
    numbers, words = tmp_path / "numbers.csv", tmp_path / "words.csv"
    x = rng.normal(size=(30, 2))
    numbers.write_text("a,b,target\n" + "\n".join(f"{p},{q},{p * 3 + 10}" for p, q in x))
    words.write_text("a,b,target\n" + "\n".join(f"{p},{q},yes" for p, q in x))
    assert main(["train", str(numbers), "-o", str(tmp_path / "r.hdf5"), "-l", "squared", "-r", "3", "-q"]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(tmp_path / "r.hdf5"), str(words)]) == 1
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and "regression model but the labels are not numbers" in err


def test_a_regression_run_reports_scores_with_its_baseline(tmp_path, capsys):
    rng = np.random.default_rng(3)
    features = rng.normal(size=(100, 3))
    targets = 500.0 + features[:, 0]
    seen = []
    machine = Boosting(StumpTrainer(), SquaredLoss()).train(
        features, targets, 4, baseline=500.0, callback=lambda r, m, s: seen.append(np.array(s)))
    np.testing.assert_array_equal(machine.baseline, [500.0])
    np.testing.assert_allclose(seen[-1], machine.decision_scores(features), rtol=1e-15)
    data = tmp_path / "d.csv"
    data.write_text("a,b,c,target\n" + "\n".join(",".join(map(str, [*row, t])) for row, t in zip(features, targets)))
    assert main(["train", str(data), "-o", str(tmp_path / "m.hdf5"), "-l", "squared", "-r", "5"]) == 0
    last = [line for line in capsys.readouterr().err.splitlines() if line.startswith("round 5/5")][0]
    assert float(last.split("loss ")[1].split(",")[0]) < 1.0  # the loss of the model, not of the residuals
    with pytest.raises(ValueError, match="baseline: a machine being continued keeps its own baseline"):
        Boosting(StumpTrainer(), SquaredLoss()).train(features, targets, 2, boosted_machine=machine, baseline=1.0)


def test_weighted_losses_of_1d_arrays_and_wrong_lengths():
    targets, scores = np.array([1.0, -1.0, 1.0]), np.array([0.5, 0.2, -1.0])
    loss = ExponentialLoss()
    np.testing.assert_array_equal(loss.loss(targets, scores, np.array([1.0, 2.0, 0.0])),
                                  np.array([1.0, 2.0, 0.0]) * loss.loss(targets, scores))
    with pytest.raises(ValueError, match=r"sample_weight: expected shape \(3,\), got \(2,\)"):
        loss.loss(targets, scores, np.ones(2))


def test_a_multi_output_regression_machine_is_no_boosting_regressor(tmp_path):
    rng = np.random.default_rng(4)
    points = rng.normal(size=(50, 4)) + np.array([0.0, 0.0, 3.0, 0.0])
    features = rng.integers(0, 4, size=(50, 3))
    machine = Boosting(LUTTrainer(4, 4), JesorskyLoss()).train(features, points, 3)
    machine.save(tmp_path / "landmarks.hdf5")
    with pytest.raises(ValueError, match="predicts 4 values per sample; BoostingRegressor predicts one"):
        load_estimator(tmp_path / "landmarks.hdf5")


def test_regressor_files_keep_the_intercept_in_the_metadata(tmp_path):
    features = np.random.default_rng(5).normal(size=(40, 2))
    regressor = BoostingRegressor(n_estimators=3).fit(features, 7.0 + features[:, 0])
    regressor.save(tmp_path / "r.hdf5")
    assert BoostedMachine.load(tmp_path / "r.hdf5").metadata["intercept"] == regressor.intercept_


def test_badacost_continues_an_empty_machine_from_its_baseline():
    rng = np.random.default_rng(6)
    features = rng.normal(size=(90, 3))
    labels = (features[:, 0] > 0).astype(int) + (features[:, 1] > 0.5)
    costs = [[0, 1, 1], [1, 0, 1], [1, 1, 0]]
    start = BoostedMachine(cost_matrix=costs, baseline=[0.0, 5.0, 0.0])
    seen = []
    machine = BAdaCostTrainer(costs, number_of_rounds=2).train(features, labels, boosted_machine=start,
                                                               callback=lambda r, m, s: seen.append(np.array(s)))
    np.testing.assert_allclose(seen[-1], machine.decision_scores(features), rtol=1e-12)


def test_only_true_stops_training():
    features = np.random.default_rng(7).normal(size=(60, 3))
    targets = np.where(features[:, 0] + 0.5 * features[:, 1] > 0, 1.0, -1.0)
    trainer = Boosting(StumpTrainer(), ExponentialLoss())
    assert len(trainer.train(features, targets, 4, callback=lambda r, m, s: 0.5)) == 4  # a number: go on
    assert len(trainer.train(features, targets, 4, callback=lambda r, m, s: np.True_)) == 1


def test_inspect_shows_what_the_model_means(tmp_path, capsys):
    import json

    features = np.random.default_rng(8).normal(size=(40, 2))
    BoostingRegressor(n_estimators=3).fit(features, 99.0 + features[:, 0]).save(tmp_path / "r.hdf5")
    assert main(["inspect", str(tmp_path / "r.hdf5"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["decision_rule"] == "identity" and summary["baseline"][0] == pytest.approx(99.0, abs=0.5)
