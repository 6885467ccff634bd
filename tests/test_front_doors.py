"""Every front door reads what any other wrote: the Python API, the scikit-learn estimators and ``bob-boost``.

Each writer trains a model on the same data and saves it; each reader loads that file and predicts. The
readers must agree with the writer's own predictions exactly (labels, values and scores, the baseline
included). For models written by the command line, whose own predictions come from the same command, the
reference is the Python API's reading of the file.
"""
import csv
import json

import numpy as np
import pytest

from bob_boost import BAdaCostTrainer, BoostedMachine, Boosting, LogitLoss, LUTTrainer, SquaredLoss, StumpTrainer
from bob_boost.cli import main
from bob_boost.labels import ClassEncoding, classes_of
from bob_boost.sklearn import BAdaCostClassifier, BoostingClassifier, BoostingRegressor, load_estimator

TASKS = ("binary", "multiclass", "regression", "cost_sensitive")
WRITERS = ("python", "estimator", "cli")
READERS = ("python", "estimator", "cli")
COSTS = [[0.0, 1.0, 1.0], [4.0, 0.0, 1.0], [1.0, 1.0, 0.0]]


def _data(task: str):
    rng = np.random.default_rng(21)
    features = rng.integers(0, 8, size=(240, 4))
    signal = features[:, 0] - features[:, 1] + rng.normal(scale=1.5, size=240)
    if task == "regression":
        return features, 100.0 + 2.0 * signal
    if task == "binary":
        return features, np.where(signal > 0, "yes", "no")
    return features, np.array(["cat", "dog", "emu"])[np.digitize(signal, [-1.5, 1.5])]


def _write_csv(path, features, labels) -> None:
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["a", "b", "c", "d", "target"])
        for row, label in zip(features.tolist(), labels.tolist()):
            writer.writerow([*row, label])


def _cli(capsys, *arguments) -> str:
    code = main([str(a) for a in arguments])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def _write(writer: str, task: str, features, labels, path, data_csv, capsys):
    """Train and save with one front door; return its own predictions (None for the command line)."""
    if writer == "estimator":
        if task == "regression":
            estimator = BoostingRegressor(n_estimators=15)
        elif task == "cost_sensitive":
            estimator = BAdaCostClassifier(cost_matrix=COSTS, n_estimators=8, random_state=0)
        else:
            estimator = BoostingClassifier(loss="logit", weak_learner="lut", n_estimators=15, maximum_feature_value=8)
        estimator.fit(features, labels)
        estimator.save(path)
        return estimator.predict(features)
    if writer == "cli":
        options = {"binary": ["-l", "logit"], "multiclass": ["-l", "logit", "-w", "lut"],
                   "regression": ["-l", "squared"], "cost_sensitive": ["--trainer", "badacost", "-w", "tree"]}[task]
        if task == "cost_sensitive":
            costs = path.with_suffix(".costs.csv")
            costs.write_text("\n".join(",".join(map(str, row)) for row in COSTS) + "\n")
            options += ["--cost-matrix", costs, "--seed", 0]
        _cli(capsys, "train", data_csv, "-o", path, "-r", 8 if task == "cost_sensitive" else 15, "-q", *options)
        return None
    # the Python API: a trainer, and the class encoding written into the metadata as the docs show
    if task == "regression":
        intercept = float(labels.mean())
        machine = Boosting(StumpTrainer(), SquaredLoss()).train(features, labels - intercept, 15)
        machine.baseline = intercept
        machine.save(path)
        return machine.predict(features)
    encoding = ClassEncoding.fit(labels)
    indices = encoding.encode(labels)
    if task == "cost_sensitive":
        machine = BAdaCostTrainer(COSTS, number_of_rounds=8).train(features, indices)
    elif task == "binary":
        machine = Boosting(StumpTrainer(), LogitLoss()).train(features, encoding.targets("signed", indices), 15)
    else:
        machine = Boosting(LUTTrainer(8, 3), LogitLoss()).train(features, encoding.targets("one_vs_rest", indices), 15)
    machine.metadata.update(encoding.to_metadata())
    machine.save(path)
    return encoding.decode(machine.class_indices_from_scores(machine.decision_scores(features)))


def _read(reader: str, path, features, data_csv, capsys, tmp_path):
    """Load with one front door and predict: (predictions, scores)."""
    if reader == "python":
        machine = BoostedMachine.load(path)
        scores = machine.decision_scores(features)
        if not machine.is_classifier:
            return machine.predict(features), scores
        return classes_of(machine).decode(machine.class_indices_from_scores(scores)), scores
    if reader == "estimator":
        estimator = load_estimator(path)
        return estimator.predict(features), estimator.machine_.decision_scores(features)
    output = tmp_path / f"predictions-{path.stem}.csv"
    _cli(capsys, "predict", path, data_csv, "-o", output)
    with open(output, newline="") as handle:
        rows = list(csv.reader(handle))
    header, body = rows[0], rows[1:]
    assert header[0] == "label"
    scores = np.array([[float(v) for v in row[1:]] for row in body])
    return np.array([row[0] for row in body]), scores


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("writer", WRITERS)
def test_each_front_door_reads_what_the_others_wrote(tmp_path, capsys, task, writer):
    features, labels = _data(task)
    data_csv = tmp_path / "data.csv"
    _write_csv(data_csv, features, labels)
    path = tmp_path / f"{writer}-{task}.hdf5"
    expected = _write(writer, task, features, labels, path, data_csv, capsys)
    reference_labels, reference_scores = _read("python", path, features, data_csv, capsys, tmp_path)
    if expected is not None:
        np.testing.assert_array_equal(reference_labels, expected)
    if task == "regression":
        assert abs(float(np.mean(reference_labels)) - 100.0) < 5.0  # the intercept is in the model
    else:  # better than chance (cost-sensitive models trade accuracy for cost)
        assert np.mean(reference_labels == labels) > (0.45 if task == "cost_sensitive" else 0.6)
    for reader in READERS:
        predicted, scores = _read(reader, path, features, data_csv, capsys, tmp_path)
        if reader == "cli":  # text: labels as written, scores printed with repr (exact)
            if task == "regression":
                np.testing.assert_array_equal(predicted.astype(float), reference_labels)
            else:
                np.testing.assert_array_equal(predicted, reference_labels.astype(str))
        else:
            np.testing.assert_array_equal(predicted, reference_labels)
        np.testing.assert_array_equal(scores, reference_scores)


def test_a_saved_regressor_predicts_its_values_everywhere(tmp_path, capsys):
    """The bug this contract fixes: the estimator's intercept lived in metadata only sklearn.py read."""
    features, target = _data("regression")
    estimator = BoostingRegressor(n_estimators=20).fit(features, target)
    model = tmp_path / "regressor.hdf5"
    estimator.save(model)
    expected = estimator.predict(features)
    assert abs(float(expected.mean()) - 100.0) < 5.0
    np.testing.assert_array_equal(BoostedMachine.load(model)(features), expected)
    data = tmp_path / "data.npy"
    np.save(data, features)
    scores_file = tmp_path / "scores.npy"
    _cli(capsys, "predict", model, data, "-o", scores_file)
    np.testing.assert_array_equal(np.load(scores_file)[:, 0], expected)
    printed = _cli(capsys, "predict", model, data, "-o", "-").splitlines()
    assert printed[0] == "label,score"
    values = np.array([[float(v) for v in line.split(",")] for line in printed[1:]])
    np.testing.assert_array_equal(values[:, 0], expected)
    np.testing.assert_array_equal(values[:, 1], expected)
    report = json.loads(_cli(capsys, "evaluate", model, _labelled(tmp_path, features, target), "--json"))
    assert report["mean_squared_error"] == pytest.approx(float(np.mean((expected - target) ** 2)), rel=1e-12)


def _labelled(tmp_path, features, target):
    path = tmp_path / "labelled.csv"
    _write_csv(path, features, target)
    return path


def test_a_regressor_file_of_bob_boost_0_1_gets_its_intercept(tmp_path):
    """Files written before the baseline was stored: the intercept in the metadata becomes the baseline."""
    from pathlib import Path

    golden = Path(__file__).parent / "data" / "golden" / "sklearn_boosting_regressor_stump.hdf5"
    machine = BoostedMachine.load(golden)
    assert machine.decision_rule == "identity"
    assert machine.baseline[0] == machine.metadata["intercept"]
    estimator = load_estimator(golden)
    probe = np.random.default_rng(0).normal(size=(5, machine.number_of_features))
    np.testing.assert_array_equal(machine(probe), estimator.predict(probe))
