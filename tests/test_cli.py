"""Tests of the bob-boost command line, driven through main([...]) and once through the installed script."""
import csv
import gzip
import json
import re
import shutil
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pytest

from bob_boost import BoostedMachine
from bob_boost.cli import build_parser, main

SMALL_MNIST = Path(__file__).resolve().parent / "data" / "mnist_small.hdf5"


def _easy_binary(n=120, seed=0, noise=0.0):
    """Two features; the class is 'yes' when feature 0 exceeds 0.5 (one stump separates it), then a
    fraction ``noise`` of the labels is flipped."""
    rng = np.random.default_rng(seed)
    features = np.round(rng.uniform(0, 1, (n, 2)), 3)
    yes = (features[:, 0] > 0.5) ^ (rng.uniform(size=n) < noise)
    return features, np.where(yes, "yes", "no")


def _write_csv(path, features, labels, header=True, delimiter=","):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt", newline="") as handle:
        writer = csv.writer(handle, delimiter=delimiter)
        if header:
            writer.writerow([f"f{i}" for i in range(features.shape[1])] + ["target"])
        for row, label in zip(features.tolist(), labels.tolist()):
            writer.writerow(row + [label])


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _three_classes(n=150, seed=1):
    """Integer features 0..8; the class is feature 0 // 3, so one LUT on feature 0 separates the classes."""
    rng = np.random.default_rng(seed)
    features = rng.integers(0, 9, (n, 3))
    return features, features[:, 0] // 3


def test_round_trip_train_evaluate_predict_inspect(tmp_path, capsys):
    features, labels = _easy_binary(noise=0.1)
    data = tmp_path / "train.csv"
    _write_csv(data, features, labels)
    model = tmp_path / "model.hdf5"
    code, out, err = _run(capsys, "train", data, "-o", model, "-r", 5, "--quiet")
    assert (code, out, err) == (0, "", "")

    predictions = tmp_path / "pred.csv"
    code, out, err = _run(capsys, "predict", model, data, "-o", predictions)
    assert code == 0 and err == ""
    rows = list(csv.reader(predictions.open()))
    assert rows[0] == ["label", "score"]
    # expected values from the model itself, not from the command line: positive score -> 'yes'
    expected_scores = BoostedMachine.load(model)(features)
    expected_labels = np.where(expected_scores > 0, "yes", "no")
    np.testing.assert_allclose([float(row[1]) for row in rows[1:]], expected_scores, rtol=1e-12)
    np.testing.assert_array_equal([row[0] for row in rows[1:]], expected_labels)

    code, out, err = _run(capsys, "evaluate", model, data, "--json")
    assert code == 0 and err == ""
    result = json.loads(out)
    assert result["classes"] == ["no", "yes"] and result["positive_class"] == "yes"
    assert result["accuracy"] == pytest.approx(np.mean(expected_labels == labels))
    assert 0.8 < result["accuracy"] < 1.0  # 10% label noise
    truth, guess = (labels == "yes").astype(int), (expected_labels == "yes").astype(int)
    expected = np.bincount(2 * truth + guess, minlength=4).reshape(2, 2).tolist()
    assert result["confusion_matrix"] == expected
    assert result["false_negative_rate"] == pytest.approx(expected[1][0] / sum(expected[1]))
    assert result["false_positive_rate"] == pytest.approx(expected[0][1] / sum(expected[0]))

    code, out, err = _run(capsys, "inspect", model, "--json")
    assert code == 0
    summary = json.loads(out)
    assert summary["weak_machines"] == 5 and summary["machine_types"] == {"StumpMachine": 5}
    assert summary["rounds"][0]["features"] == [0]  # the informative feature comes first
    assert summary["metadata"]["loss"] == "exponential" and summary["metadata"]["feature_names"] == ["f0", "f1"]
    code, out, _ = _run(capsys, "inspect", model, "--rounds", 2)
    assert code == 0 and "StumpMachine x5" in out and "... 3 more" in out


def test_evaluate_text_report_with_fn_fp_nec(tmp_path, capsys):
    features, labels = _easy_binary(seed=2)
    data = tmp_path / "d.tsv.gz"
    _write_csv(data, features, labels, delimiter="\t")
    model = tmp_path / "m.hdf5"
    assert _run(capsys, "train", data, "-o", model, "-r", 1, "-q")[0] == 0
    # evaluate on data where one 'yes' sample has been relabelled 'no' -> one false positive
    flipped = labels.copy()
    index = int(np.flatnonzero(labels == "yes")[0])
    flipped[index] = "no"
    other = tmp_path / "flipped.csv"
    _write_csv(other, features, flipped)
    code, out, err = _run(capsys, "evaluate", model, other, "--cost-positive", 3, "--json")
    result = json.loads(out)
    negatives = int(np.sum(flipped == "no"))
    assert result["false_positive_rate"] == pytest.approx(1 / negatives)
    assert result["false_negative_rate"] == 0.0
    assert result["pcf"] == pytest.approx(0.75)  # 0.5*3 / (0.5*3 + 0.5*1)
    assert result["normalized_expected_cost"] == pytest.approx(0.25 / negatives)
    code, out, _ = _run(capsys, "evaluate", model, other)
    assert code == 0 and "false-positive rate" in out and "accuracy:" in out


def test_multiclass_lut_from_npz_and_cost_matrix(tmp_path, capsys):
    features, labels = _three_classes()
    data = tmp_path / "d.npz"
    np.savez(data, features=features, labels=labels)
    model = tmp_path / "m.hdf5"
    assert _run(capsys, "train", data, "-o", model, "-w", "lut", "-r", 3, "-q")[0] == 0
    costs = tmp_path / "costs.csv"
    costs.write_text("0,1,4\n1,0,1\n2,1,0\n")
    code, out, _ = _run(capsys, "evaluate", model, data, "--cost-matrix", costs, "--json")
    result = json.loads(out)
    assert code == 0 and result["accuracy"] == 1.0 and result["average_cost"] == 0.0
    assert "false_negative_rate" not in result
    code, _, _ = _run(capsys, "predict", model, data, "-o", tmp_path / "p.npz")
    with np.load(tmp_path / "p.npz") as saved:
        np.testing.assert_array_equal(saved["labels"], labels)
        assert saved["scores"].shape == (labels.size, 3)


def test_average_cost_counts_each_confusion(tmp_path, capsys):
    features, labels = _three_classes(seed=3)
    train = tmp_path / "train.npz"
    np.savez(train, features=features, labels=labels)
    model = tmp_path / "m.hdf5"
    assert _run(capsys, "train", train, "-o", model, "-w", "lut", "-r", 3, "-q")[0] == 0
    # relabel: the model still predicts feature0 // 3, the true labels are shifted by one class
    shifted = (labels + 1) % 3
    test = tmp_path / "test.npz"
    np.savez(test, features=features, labels=shifted)
    costs = tmp_path / "c.npy"
    cost = np.array([[0.0, 1.0, 2.0], [3.0, 0.0, 4.0], [5.0, 6.0, 0.0]])
    np.save(costs, cost)
    result = json.loads(_run(capsys, "evaluate", model, test, "--cost-matrix", costs, "--json")[1])
    expected = np.mean(cost[shifted, labels])
    assert result["accuracy"] == 0.0 and result["average_cost"] == pytest.approx(expected)


@pytest.mark.parametrize("classes, problem", [
    ([0, 1], "a list of 3 class labels"),  # too few for 3 outputs
    ("yes", "a list of 3 class labels"),  # a string is not a list of labels
    ([0, [1], 2], "single values"),
    ([0, 1, 1], "distinct"),
])
@pytest.mark.parametrize("command", ["predict", "evaluate", "plot-confusion"])
def test_model_classes_metadata_is_validated(tmp_path, capsys, classes, problem, command):
    features, labels = _three_classes(seed=11)
    data = tmp_path / "d.npz"
    np.savez(data, features=features, labels=labels)
    model = tmp_path / "m.hdf5"
    assert _run(capsys, "train", data, "-o", model, "-w", "lut", "-r", 2, "-q")[0] == 0
    machine = BoostedMachine.load(model)
    machine.metadata["classes"] = classes
    machine.save(model)
    argv = {"predict": ["predict", model, data, "-o", tmp_path / "p.csv"],
            "evaluate": ["evaluate", model, data],
            "plot-confusion": ["plot", "confusion", model, data, "-o", tmp_path / "c.png"]}[command]
    code, out, err = _run(capsys, *argv)
    assert code == 1 and out == "" and len(err.splitlines()) == 1, err
    assert f"{model}: metadata 'classes'" in err and problem in err


def test_univariate_model_needs_two_classes(tmp_path, capsys):
    features, labels = _easy_binary(seed=12)
    data = tmp_path / "d.csv"
    _write_csv(data, features, labels)
    model = tmp_path / "m.hdf5"
    assert _run(capsys, "train", data, "-o", model, "-r", 2, "-q")[0] == 0
    machine = BoostedMachine.load(model)
    machine.metadata["classes"] = ["no", "maybe", "yes"]
    machine.save(model)
    code, _, err = _run(capsys, "predict", model, data)
    assert code == 1 and "metadata 'classes': expected a list of 2 class labels" in err


@pytest.mark.parametrize("text, problem", [
    ("1,1\n1,0\n", "the diagonal must be zero"),
    ("0,-1\n1,0\n", "non-negative"),
    ("0,1,1\n1,0,1\n", "square"),
])
def test_cost_matrix_file_is_checked_as_a_cost_matrix(tmp_path, capsys, text, problem):
    features, labels = _easy_binary(n=40, seed=13)
    data = tmp_path / "d.csv"
    _write_csv(data, features, labels)
    model = tmp_path / "m.hdf5"
    assert _run(capsys, "train", data, "-o", model, "-r", 1, "-q")[0] == 0
    costs = tmp_path / "costs.csv"
    costs.write_text(text)
    for argv in (["evaluate", model, data, "--cost-matrix", costs],
                 ["train", data, "-o", tmp_path / "b.hdf5", "--trainer", "badacost", "--cost-matrix", costs]):
        code, out, err = _run(capsys, *argv)
        assert code == 1 and out == "" and len(err.splitlines()) == 1, err
        assert f"{costs}: cost matrix: " in err and problem in err


def test_lut_values_beyond_the_table_name_the_file_and_option(tmp_path, capsys):
    features, labels = _three_classes(seed=14)  # values 0..8
    data = tmp_path / "d.npz"
    np.savez(data, features=features, labels=labels)
    code, _, err = _run(capsys, "train", data, "-o", tmp_path / "m.hdf5", "-w", "lut", "--lut-entries", 5, "-q")
    assert code == 1 and f"{data}: features:" in err and "--lut-entries" in err and "8" in err
    np.savez(data, features=features - 1, labels=labels)
    code, _, err = _run(capsys, "train", data, "-o", tmp_path / "m.hdf5", "-w", "lut", "-q")
    assert code == 1 and f"{data}: features:" in err and "-1" in err


def test_quoted_and_plain_tables_read_the_same(tmp_path):
    from bob_boost.cli import read_table

    rng = np.random.default_rng(9)
    matrix = np.column_stack([rng.integers(0, 5, (30, 3)), rng.integers(0, 2, 30)])
    plain, quoted = tmp_path / "plain.csv", tmp_path / "quoted.csv"
    plain.write_text("a,b,c,target\n" + "\n".join(",".join(map(str, row)) for row in matrix) + "\n")
    quoted.write_text('"a","b","c","target"\n' + "\n".join(",".join(f'"{v}"' for v in row) for row in matrix))
    fast, slow = read_table(plain), read_table(quoted)  # numpy's parser, then the csv module
    for table in (fast, slow):
        np.testing.assert_array_equal(table.features, matrix[:, :3])
        np.testing.assert_array_equal(table.labels, matrix[:, 3])
        assert table.feature_names == ["a", "b", "c"] and table.features.dtype == np.int64


def test_hdf5_group_and_npy_target_column(tmp_path, capsys):
    features, labels = _three_classes(seed=4)
    data = tmp_path / "d.hdf5"
    with h5py.File(data, "w") as handle:
        handle["train/data"] = features
        handle["train/labels"] = labels
    model = tmp_path / "m.hdf5"
    assert _run(capsys, "train", data, "--group", "train", "-o", model, "-w", "lut", "-r", 2, "-q")[0] == 0
    matrix = tmp_path / "d.npy"
    np.save(matrix, np.column_stack([labels, features]))
    result = json.loads(_run(capsys, "evaluate", model, matrix, "--target", 0, "--json")[1])
    assert result["accuracy"] == 1.0


def test_hdf5_string_labels_train_and_predictions_read_back(tmp_path, capsys):
    features, labels = _easy_binary(seed=10)
    data = tmp_path / "d.h5"
    with h5py.File(data, "w") as handle:
        handle["features"] = features
        handle.create_dataset("labels", data=labels.astype(object), dtype=h5py.string_dtype())
    model = tmp_path / "m.h5"
    code, _, err = _run(capsys, "train", data, "-o", model, "-r", 3, "-q")
    assert code == 0, err
    assert BoostedMachine.load(model).metadata["classes"] == ["no", "yes"]
    output = tmp_path / "p.h5"
    assert _run(capsys, "predict", model, data, "-o", output)[0] == 0
    with h5py.File(output, "r") as handle:
        predicted = handle["labels"].asstr()[()]
    expected = np.where(BoostedMachine.load(model)(features) > 0, "yes", "no")
    np.testing.assert_array_equal(predicted, expected)
    # the written labels are data the command line reads again: against them the model is always right
    relabelled = tmp_path / "relabelled.h5"
    with h5py.File(relabelled, "w") as handle, h5py.File(output, "r") as written:
        handle["features"] = features
        written.copy("labels", handle)
    assert json.loads(_run(capsys, "evaluate", model, relabelled, "--json")[1])["accuracy"] == 1.0


@pytest.mark.parametrize("trainer, extra", [
    ("adaboostdb", ["--cost-positive", "2"]),
    ("cost-sensitive-adaboost", ["--cost-negative", "2"]),
    ("samme", []),
    ("adaboost-m1", []),
    ("badacost", ["--cost-matrix", "COSTS"]),
])
def test_other_trainers_are_wired(tmp_path, capsys, trainer, extra):
    features, labels = _easy_binary(seed=5)
    data = tmp_path / "d.csv"
    _write_csv(data, features, labels)
    (tmp_path / "c.csv").write_text("0,1\n2,0\n")
    extra = [str(tmp_path / "c.csv") if e == "COSTS" else e for e in extra]
    model = tmp_path / "m.hdf5"
    code, _, err = _run(capsys, "train", data, "-o", model, "--trainer", trainer, "-r", 3, "-q", *extra)
    assert code == 0, err
    result = json.loads(_run(capsys, "evaluate", model, data, "--json")[1])
    assert result["accuracy"] >= 0.95
    assert json.loads(_run(capsys, "inspect", model, "--json")[1])["metadata"]["trainer"]


def test_adaboostdb_selection_rule_is_an_option(tmp_path, capsys):
    features, labels = _easy_binary(seed=6)
    data = tmp_path / "d.csv"
    _write_csv(data, features, labels)
    for selection in ("alpha", "loss"):
        model = tmp_path / f"{selection}.hdf5"
        code, _, err = _run(capsys, "train", data, "-o", model, "--trainer", "adaboostdb", "--selection", selection,
                            "--cost-positive", "3", "-r", 4, "-q")
        assert code == 0, err
        metadata = json.loads(_run(capsys, "inspect", model, "--json")[1])["metadata"]
        assert (metadata["selection"], metadata["search"]) == (selection, "conditional" if selection == "alpha"
                                                               else "bound")
    code, _, err = _run(capsys, "train", data, "-o", tmp_path / "x.hdf5", "--trainer", "adaboostdb",
                        "--selection", "margin")
    assert code != 0 and "--selection" in err and len(err.strip().splitlines()) == 1
    # AdaBoostDB boosts stumps: another weak learner was once ignored, yet written into the model's metadata
    integers = tmp_path / "integers.csv"
    _write_csv(integers, np.floor(features - features.min()).astype(int), labels)
    code, _, err = _run(capsys, "train", integers, "-o", tmp_path / "x.hdf5", "--trainer", "adaboostdb", "-w", "lut")
    assert code != 0 and "'adaboostdb' boosts decision stumps, got 'lut'" in err and not (tmp_path / "x.hdf5").exists()


@pytest.mark.parametrize("trainer", ["samme", "badacost"])
def test_multiclass_trainers_show_progress(tmp_path, capsys, trainer):
    features, labels = _three_classes(seed=15)
    data = tmp_path / "d.npz"
    np.savez(data, features=features, labels=labels)
    (tmp_path / "c.csv").write_text("0,1,1\n1,0,1\n4,1,0\n")
    model = tmp_path / "m.hdf5"
    extra = ["--cost-matrix", tmp_path / "c.csv"] if trainer == "badacost" else []
    code, out, err = _run(capsys, "train", data, "-o", model, "--trainer", trainer, "-w", "stump", "-r", 3, *extra)
    assert code == 0, err
    machine = BoostedMachine.load(model)
    lines = err.splitlines()
    assert [line.split(":")[0] for line in lines] == [f"round {r}/3" for r in range(1, len(machine) + 1)]
    error = np.mean(machine.predict(features) != labels)
    assert lines[-1].endswith(f"training error {error:.2%}")


def test_regression_with_squared_loss(tmp_path, capsys):
    rng = np.random.default_rng(6)
    features = rng.uniform(size=(100, 2))
    values = np.where(features[:, 1] > 0.3, 2.0, -1.0)
    data = tmp_path / "r.csv"
    np.savetxt(data, np.column_stack([features, values]), delimiter=",")
    model = tmp_path / "m.hdf5"
    assert _run(capsys, "train", data, "-o", model, "--loss", "squared", "-r", 3, "-q")[0] == 0
    result = json.loads(_run(capsys, "evaluate", model, data, "--json")[1])
    assert result["mean_squared_error"] < 0.05 * np.var(values)


def test_example_digits_trains_and_reuses_the_classifier_file(tmp_path, capsys):
    classifier = tmp_path / "digits.hdf5"
    argv = ["example", "digits", "--samples", "400", "-t", "lut", "-l", "log", "-m", "-a", "-r", "10",
            "-c", classifier, "-q"]
    code, out, _ = _run(capsys, *argv)
    test_accuracy = float(re.search(r"test set: ([\d.]+)%", out).group(1))
    assert code == 0 and test_accuracy > 60.0  # chance is 10%
    code, again, _ = _run(capsys, *argv[:-1])
    assert code == 0 and "loaded the classifier" in again and f"{test_accuracy:.2f}%" in again
    code, forced, _ = _run(capsys, *argv, "-F", "-r", "2")
    assert code == 0 and len(BoostedMachine.load(classifier)) == 2
    # the stored classifier separates all ten digits; asking for 3 vs 8 must not reuse it
    code, out, err = _run(capsys, "example", "digits", "--samples", "400", "-t", "lut", "-l", "log", "-d", "3", "8",
                          "-c", classifier, "-q")
    assert code == 1 and out == "" and len(err.splitlines()) == 1
    assert f"{classifier}: was trained for" in err and "-F/--force" in err


def test_example_mnist_on_real_data_small(tmp_path, capsys):
    # the first 40 training and test images of each digit, shipped in tests/data (the same -n 40 subset
    # the full file gives)
    code, out, err = _run(capsys, "example", "mnist", "--data", SMALL_MNIST, "-n", 40, "-r", 8, "-q")
    assert code == 0, err
    accuracies = [float(v) for v in re.findall(r"set: ([\d.]+)%", out)]
    assert len(accuracies) == 2 and accuracies[1] > 85.0  # 5 vs 6 with 8 stumps; chance is 50%
    classifier = tmp_path / "mnist.hdf5"
    code, out, err = _run(capsys, "example", "mnist", "--data", SMALL_MNIST, "-n", 20, "-r", 3, "-t", "lut",
                          "-l", "log", "-m", "-a", "-s", "shared", "-c", classifier, "-q")
    assert code == 0, err
    machine = BoostedMachine.load(classifier)
    assert machine.number_of_outputs == 10 and len(machine) == 3
    assert all(len(set(w.indices.tolist())) == 1 for w in machine.weak_machines)  # shared: one feature


def _write_bad_inputs(tmp_path: Path) -> dict:
    features, labels = _easy_binary(n=20, seed=7)
    good = tmp_path / "good.csv"
    _write_csv(good, features, labels)
    (tmp_path / "text.csv").write_text("f0,f1,target\n1,2,yes\n3,abc,no\n")
    (tmp_path / "ragged.csv").write_text("f0,f1,target\n1,2,yes\n3,no\n")
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "corrupt.hdf5").write_bytes(b"\x89HDF\r\n\x1a\n" + b"\x00" * 40)
    (tmp_path / "weird.xyz").write_text("1,2,3\n")
    np.save(tmp_path / "cube.npy", np.zeros((2, 2, 2)))
    (tmp_path / "notnpy.npy").write_text("hello")
    (tmp_path / "onecol.csv").write_text("0,1\n1,0\n")
    (tmp_path / "header_only.csv").write_text("f0,f1,target\n")
    (tmp_path / "nan.csv").write_text("1,nan,1\n2,3,-1\n")
    with h5py.File(tmp_path / "latin1.hdf5", "w") as handle:
        handle["features"] = features
        handle["labels"] = np.array(["s\u00ed".encode("latin-1") if v == "yes" else b"no" for v in labels])
    model = tmp_path / "model.hdf5"
    assert main(["train", str(good), "-o", str(model), "-r", "2", "-q"]) == 0
    with h5py.File(tmp_path / "truncated.hdf5", "w") as handle:
        handle.attrs["version"] = np.int32(2)
        handle["Weights"] = np.ones((2, 1))
    return {"good": good, "model": model}


BAD_INPUTS = [
    ["train", "{tmp}/missing.csv", "-o", "{tmp}/m.hdf5"],
    ["train", "{tmp}/text.csv", "-o", "{tmp}/m.hdf5"],
    ["train", "{tmp}/ragged.csv", "-o", "{tmp}/m.hdf5"],
    ["train", "{tmp}/empty.csv", "-o", "{tmp}/m.hdf5"],
    ["train", "{tmp}/weird.xyz", "-o", "{tmp}/m.hdf5"],
    ["train", "{tmp}/cube.npy", "-o", "{tmp}/m.hdf5"],
    ["train", "{tmp}/notnpy.npy", "-o", "{tmp}/m.hdf5"],
    ["train", "{tmp}/corrupt.hdf5", "-o", "{tmp}/m.hdf5"],
    ["train", "{tmp}/header_only.csv", "-o", "{tmp}/m.hdf5"],
    ["train", "{tmp}/nan.csv", "-o", "{tmp}/m.hdf5"],
    ["train", "{tmp}/latin1.hdf5", "-o", "{tmp}/m.hdf5"],
    ["train", "{tmp}/good.csv", "-o", "{tmp}/m.hdf5", "--target", "nope"],
    ["train", "{tmp}/good.csv", "-o", "{tmp}/m.hdf5", "--target", "7"],
    ["train", "{tmp}/good.csv", "-o", "{tmp}/m.hdf5", "--loss", "unknown"],
    ["train", "{tmp}/good.csv", "-o", "{tmp}/m.hdf5", "--loss", "cmel"],
    ["train", "{tmp}/good.csv", "-o", "{tmp}/m.hdf5", "-w", "lut"],
    ["train", "{tmp}/good.csv", "-o", "{tmp}/m.hdf5", "--trainer", "badacost"],
    ["train", "{tmp}/good.csv", "-o", "{tmp}/m.hdf5", "--trainer", "badacost", "--cost-matrix", "{tmp}/cube.npy"],
    ["train", "{tmp}/good.csv", "-o", "{tmp}/m.hdf5", "--positive-label", "maybe"],
    ["train", "{tmp}/good.csv", "-o", "{tmp}/model.hdf5"],
    ["train", "{tmp}/good.csv", "-o", "{tmp}/m.hdf5", "--rounds", "0"],
    ["train", "{tmp}/good.csv", "-o", "{tmp}/m.hdf5", "--rounds", "many"],
    ["train", "{tmp}/good.csv", "-o", "{tmp}/m.hdf5", "--trainer", "magic"],
    ["train", "{tmp}/good.csv"],
    ["train", "{tmp}/good.csv", "-o", "{tmp}/m.hdf5", "--no-such-option"],
    ["evaluate", "{tmp}/corrupt.hdf5", "{tmp}/good.csv"],
    ["evaluate", "{tmp}/truncated.hdf5", "{tmp}/good.csv"],
    ["evaluate", "{tmp}/good.csv", "{tmp}/good.csv"],
    ["evaluate", "{tmp}/missing.hdf5", "{tmp}/good.csv"],
    ["evaluate", "{tmp}/model.hdf5", "{tmp}/onecol.csv"],
    ["evaluate", "{tmp}/model.hdf5", "{tmp}/good.csv", "--cost-matrix", "{tmp}/text.csv"],
    ["predict", "{tmp}/model.hdf5", "{tmp}/good.csv", "-o", "{tmp}/out.xyz"],
    ["predict", "{tmp}/model.hdf5", "{tmp}/text.csv"],
    ["inspect", "{tmp}/corrupt.hdf5"],
    ["example", "mnist", "--data", "{tmp}/missing.hdf5"],
    ["example", "mnist", "--data", "{tmp}/good.csv"],
    ["example", "digits", "-m"],
    ["example", "digits", "-d", "1", "2", "3"],
    ["example", "digits", "-d", "11", "2"],
    ["example", "digits", "-n", "0"],
    ["plot", "errors", "{tmp}/corrupt.hdf5", "{tmp}/good.csv", "-o", "{tmp}/x.png"],
    ["plot", "features", "{tmp}/model.hdf5", "-o", "{tmp}/x.png"],
    ["frobnicate"],
    [],
]


@pytest.fixture(scope="module")
def bad_input_dir(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("bad")
    _write_bad_inputs(tmp_path)
    return tmp_path


@pytest.mark.parametrize("argv", BAD_INPUTS, ids=[" ".join(a[:2]) + f"#{i}" for i, a in enumerate(BAD_INPUTS)])
def test_bad_input_gives_one_line_error(bad_input_dir, capsys, argv):
    code = main([a.format(tmp=bad_input_dir) for a in argv])
    captured = capsys.readouterr()
    assert code != 0
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("bob-boost") and "error:" in lines[0]
    assert "Traceback" not in captured.err and captured.out == ""


def _all_parsers(parser):
    yield parser
    for action in parser._actions:
        for sub in getattr(action, "choices", None).values() if isinstance(getattr(action, "choices", None),
                                                                            dict) else ():
            yield from _all_parsers(sub)


def test_help_documents_every_option(capsys):
    parsers = list(_all_parsers(build_parser()))
    assert {p.prog for p in parsers} >= {"bob-boost train", "bob-boost evaluate", "bob-boost predict",
                                         "bob-boost inspect", "bob-boost example mnist",
                                         "bob-boost example digits", "bob-boost plot errors",
                                         "bob-boost plot cost-curves"}
    for parser in parsers:
        for action in parser._actions:
            assert action.help, f"{parser.prog}: {action.option_strings or action.dest} has no help"
    code = main(["example", "mnist", "--help"])
    out = capsys.readouterr().out
    assert code == 0
    for option in ("-t", "--trainer-type", "-l", "--loss-type", "-r", "--number-of-boosting-rounds", "-m",
                   "--multi-variate", "-s", "--feature-selection-style", "-d", "--digits", "-a", "--all-digits",
                   "-n", "--number-of-elements", "-c", "--classifier-file", "-F", "--force", "-v", "--data"):
        assert re.search(rf"(^|[\s,]){re.escape(option)}\b", out), option


@pytest.mark.long
def test_installed_entry_point_round_trip(tmp_path):
    script = shutil.which("bob-boost")
    if script is None:
        # the README's test command installs the package first, so this runs there; from a checkout
        # that was never installed there is no console script whose wiring could be tested
        pytest.skip("the bob-boost console script exists only once the package is installed "
                    "(pip install \".[test]\", as the README's test command does)")
    features, labels = _easy_binary(seed=8, noise=0.1)
    data = tmp_path / "d.csv"
    _write_csv(data, features, labels)
    model = tmp_path / "m.hdf5"

    def run(*argv):
        return subprocess.run([script, *map(str, argv)], capture_output=True, text=True, timeout=120)

    assert run("train", data, "-o", model, "-r", "3", "-q").returncode == 0
    evaluated = run("evaluate", model, data, "--json")
    assert evaluated.returncode == 0 and 0.8 < json.loads(evaluated.stdout)["accuracy"] < 1.0
    predicted = run("predict", model, data)
    lines = predicted.stdout.splitlines()
    assert predicted.returncode == 0 and lines[0] == "label,score" and len(lines) == labels.size + 1
    inspected = run("inspect", model)
    assert inspected.returncode == 0 and "weak machines (rounds): 3" in inspected.stdout


def test_running_a_command_leaves_the_package_logger_as_it_was(tmp_path):
    import logging

    package_logger = logging.getLogger("bob_boost")
    before = (package_logger.level, package_logger.propagate, list(package_logger.handlers))
    assert main(["example", "digits", "--samples", "200", "-r", "2", "-v", "-v"]) == 0
    assert (package_logger.level, package_logger.propagate, list(package_logger.handlers)) == before


def test_library_names_are_importable_from_the_cli_package():
    from bob_boost.cli import CommandError, Table, example_accuracy, read_cost_matrix, read_table, train_example
    from bob_boost.examples import mnist
    from bob_boost.exceptions import BobBoostError
    from bob_boost.io import tables

    assert issubclass(CommandError, BobBoostError)
    assert (read_table, read_cost_matrix, Table) == (tables.read_table, tables.read_cost_matrix, tables.Table)
    assert (train_example, example_accuracy) == (mnist.train_example, mnist.example_accuracy)


def _wide_model(path, rounds=300, outputs=200):
    """A model whose ``inspect --all`` and ``predict`` output is far larger than a pipe's buffer."""
    from bob_boost import LUTMachine

    machine = BoostedMachine(number_of_outputs=outputs)
    for _ in range(rounds):
        machine.add_weak_machine(LUTMachine(np.ones((2, outputs)), np.arange(outputs) % 7), np.full(outputs, 0.25))
    machine.save(path)


@pytest.mark.parametrize("command", ["inspect", "predict"])
@pytest.mark.long
def test_stdout_closed_early_ends_quietly(tmp_path, command):
    """``bob-boost inspect m.h5 | head -1``: no traceback, no 'Exception ignored', exit status 0."""
    import sys

    model = tmp_path / "wide.h5"
    _wide_model(model)
    data = tmp_path / "d.npz"
    np.savez(data, features=np.zeros((200, 7), dtype=np.int64))
    argv = ["inspect", model, "--all"] if command == "inspect" else ["predict", model, data, "-o", "-"]
    process = subprocess.Popen([sys.executable, "-m", "bob_boost.cli", *map(str, argv)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, cwd=tmp_path)
    first = process.stdout.readline()
    process.stdout.close()  # as `head -1` does
    stderr = process.stderr.read()
    assert process.wait(timeout=120) == 0, stderr
    assert first.strip() and stderr == b""


def test_very_verbose_shows_the_traceback_of_an_expected_error(tmp_path, capsys):
    from bob_boost.cli import CommandError

    with pytest.raises(CommandError, match="no such model file"):
        main(["inspect", str(tmp_path / "missing.h5"), "-vvv"])
    assert main(["inspect", str(tmp_path / "missing.h5"), "-vv"]) == 1
    assert capsys.readouterr().err.count("\n") == 1


def test_unexpected_errors_are_not_swallowed(tmp_path, monkeypatch):
    """A KeyError from inside a command is a bug: it propagates instead of becoming a one-line message."""
    from bob_boost.cli import inspect as inspect_command

    model = tmp_path / "m.h5"
    _wide_model(model, rounds=1, outputs=1)

    def broken(*args, **kwargs):
        raise KeyError("a bug")

    monkeypatch.setattr(inspect_command, "describe", broken)
    with pytest.raises(KeyError, match="a bug"):
        main(["inspect", str(model)])


def test_missing_matplotlib_is_a_one_line_error_naming_the_extra(tmp_path, capsys, request):
    features, labels = _easy_binary(n=30, seed=16)
    data = tmp_path / "d.csv"
    _write_csv(data, features, labels)
    model = tmp_path / "m.hdf5"
    assert _run(capsys, "train", data, "-o", model, "-r", 1, "-q")[0] == 0
    request.getfixturevalue("no_matplotlib")  # from here on, importing matplotlib fails
    code, out, err = _run(capsys, "plot", "confusion", model, data, "-o", tmp_path / "c.png")
    assert code == 1 and out == "" and len(err.splitlines()) == 1
    assert err.startswith("bob-boost plot: error:") and 'pip install "bob_boost[plot]"' in err


def test_train_max_bins_and_threads_reach_the_stump_trainer(tmp_path, capsys):
    rng = np.random.default_rng(3)
    features = rng.normal(size=(600, 3))
    labels = np.where(features[:, 0] + 0.3 * rng.normal(size=600) > 0, "yes", "no")
    data = tmp_path / "train.csv"
    _write_csv(data, features, labels)
    thresholds = {}
    for bins in ("4", "exact"):
        model = tmp_path / f"model_{bins}.hdf5"
        code, out, err = _run(capsys, "train", data, "-o", model, "-r", 3, "--quiet", "--max-bins", bins,
                              "--threads", 2)
        assert (code, err) == (0, "")
        thresholds[bins] = {m.threshold for m in BoostedMachine.load(model).weak_machines}
    # four bins per feature leave three cuts per feature; the exact search may cut anywhere
    from bob_boost.binning import BinnedFeatures
    cuts = set(BinnedFeatures.from_values(features.astype(np.float64), max_bins=4).split_thresholds.tolist())
    assert thresholds["4"] <= cuts
    assert not thresholds["exact"] <= cuts
    code, _, err = _run(capsys, "train", data, "-o", tmp_path / "x.hdf5", "--max-bins", 1)
    assert code != 0 and "expected 'exact' or an integer in [2, 65535], got 1" in err


def test_inspect_shows_the_names_of_the_used_features(tmp_path, capsys):
    rng = np.random.default_rng(21)
    features = np.round(rng.uniform(size=(120, 4)), 3)
    labels = np.where(features[:, 2] + 0.4 * features[:, 0] > 0.7, "yes", "no")
    data = tmp_path / "named.csv"
    with data.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["age", "height", "income", "score", "target"])
        writer.writerows(row + [label] for row, label in zip(features.tolist(), labels.tolist()))
    model = tmp_path / "m.hdf5"
    assert _run(capsys, "train", data, "-o", model, "-r", 6, "-q")[0] == 0
    machine = BoostedMachine.load(model)
    used = machine.feature_indices().tolist()
    names = ["age", "height", "income", "score"]
    assert 2 in used  # the informative feature

    code, out, err = _run(capsys, "inspect", model, "--json")
    summary = json.loads(out)
    assert code == 0 and summary["feature_names"] == [names[i] for i in used]
    first = machine.weak_machines[0].feature_indices().tolist()
    assert summary["rounds"][0]["feature_names"] == [names[i] for i in first]

    code, out, err = _run(capsys, "inspect", model, "--rounds", 2)
    assert code == 0 and err == ""
    expected = ", ".join(f"{i} ({names[i]})" for i in used)
    assert f"features: 4 in the input, {len(used)} used: {expected}\n" in out
    assert "feature_names:" not in out  # the names are shown with the features, not again as metadata
    round_one = next(line for line in out.splitlines() if line.startswith("    1  "))
    assert round_one.endswith(f"[{names[first[0]]}]")

    # a model without names (an NPZ file has no header) shows indices only
    np.savez(tmp_path / "d.npz", features=features, labels=labels)
    assert _run(capsys, "train", tmp_path / "d.npz", "-o", tmp_path / "plain.hdf5", "-r", 2, "-q")[0] == 0
    code, out, _ = _run(capsys, "inspect", tmp_path / "plain.hdf5")
    assert code == 0 and "(income)" not in out and "[" not in out.split("weak machine\n")[1]
    assert json.loads(_run(capsys, "inspect", tmp_path / "plain.hdf5", "--json")[1])["feature_names"] is None


def test_plot_features_top_draws_named_bars_and_margins_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    features, labels = _easy_binary(n=80, seed=22, noise=0.1)
    data = tmp_path / "d.csv"
    _write_csv(data, features, labels)  # header f0, f1
    model = tmp_path / "m.hdf5"
    assert _run(capsys, "train", data, "-o", model, "-r", 8, "-q")[0] == 0
    for kind, extra in (("features", ["--top", 5]), ("margins", [data, "--rounds", 1, 8])):
        output = tmp_path / f"{kind}.png"
        code, out, err = _run(capsys, "plot", kind, model, *extra, "-o", output)
        assert (code, err) == (0, "") and out == f"wrote {output}\n"
        assert output.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, _, err = _run(capsys, "plot", "features", model, "-o", tmp_path / "x.png")  # 2 features: no square
    assert code == 1 and "--image-shape: 2 features are not a square image" in err and "--top N" in err
    code, _, err = _run(capsys, "plot", "features", model, "--top", 3, "--image-shape", 1, 2, "-o", tmp_path / "x.png")
    assert code == 1 and "not both" in err


def test_explain_writes_each_features_shapley_values(tmp_path, capsys):
    features, labels = _easy_binary(n=300, noise=0.1)
    data = tmp_path / "train.csv"
    _write_csv(data, features, labels)
    model = tmp_path / "model.hdf5"
    assert _run(capsys, "train", data, "-o", model, "-r", 6, "-w", "tree", "--quiet")[0] == 0
    machine = BoostedMachine.load(model)
    background = tmp_path / "background.csv"
    _write_csv(background, features[:40], labels[:40])
    output = tmp_path / "values.csv"
    code, out, err = _run(capsys, "explain", model, data, "--background", background, "-o", output)
    assert (code, out, err) == (0, "", "")
    rows = list(csv.reader(output.open()))
    assert rows[0] == ["f0", "f1", "expected_value"]  # the header's names, kept in the model
    values = np.array(rows[1:], dtype=float)
    np.testing.assert_array_equal(values, machine.shap_values(features, features[:40]))
    np.testing.assert_allclose(values.sum(axis=1), machine.decision_scores(features)[:, 0], rtol=1e-9)
    # --background-rows: that many rows of the data, spread evenly over it
    assert _run(capsys, "explain", model, data, "-o", tmp_path / "v.npy", "--background-rows", 100)[0] == 0
    spread = features[np.unique(np.linspace(0, 299, 100).astype(int))]
    np.testing.assert_array_equal(np.load(tmp_path / "v.npy"), machine.shap_values(features, spread))
    # neither: the trees' training cover (path-dependent)
    assert _run(capsys, "explain", model, data, "-o", tmp_path / "p.npy")[0] == 0
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy"), machine.shap_values(features))
    # stumps record no cover: 100 rows of the data
    stumps = tmp_path / "stumps.hdf5"
    assert _run(capsys, "train", data, "-o", stumps, "-r", 6, "-w", "stump", "--quiet")[0] == 0
    assert _run(capsys, "explain", stumps, data, "-o", tmp_path / "s.npy")[0] == 0
    np.testing.assert_array_equal(np.load(tmp_path / "s.npy"), BoostedMachine.load(stumps).shap_values(features,
                                                                                                        spread))


def test_explain_of_several_outputs_names_each_block(tmp_path, capsys):
    features, classes = _three_classes()
    data = tmp_path / "three.csv"
    _write_csv(data, features, classes)
    model = tmp_path / "model.hdf5"
    assert _run(capsys, "train", data, "-o", model, "-r", 3, "-w", "lut", "--quiet")[0] == 0
    code, out, err = _run(capsys, "explain", model, data, "--background-rows", 10)
    assert code == 0 and err == ""
    header = next(csv.reader(out.splitlines()))
    assert header[:4] == ["0/f0", "0/f1", "0/f2", "0/expected_value"] and header[-1] == "2/expected_value"


@pytest.mark.parametrize("argv, message", [
    (["--background-rows", "0"], "--background-rows: must be a positive integer"),
    (["-o", "{tmp}/values.hdf5"], "--output: "),
])
def test_explain_refuses_bad_options(tmp_path, capsys, argv, message):
    features, labels = _easy_binary()
    data = tmp_path / "train.csv"
    _write_csv(data, features, labels)
    model = tmp_path / "model.hdf5"
    assert _run(capsys, "train", data, "-o", model, "-r", 2, "--quiet")[0] == 0
    code, out, err = _run(capsys, "explain", model, data, *[a.format(tmp=tmp_path) for a in argv])
    assert code == 1 and message in err and not (tmp_path / "values.hdf5").exists()


def test_explain_plots_the_values(tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="plotting is the plot extra")
    features, classes = _three_classes()
    data = tmp_path / "three.csv"
    _write_csv(data, features, classes)
    model = tmp_path / "model.hdf5"
    assert _run(capsys, "train", data, "-o", model, "-r", 3, "-w", "tree", "--quiet")[0] == 0
    picture = tmp_path / "summary.png"
    code, _, err = _run(capsys, "explain", model, data, "-o", tmp_path / "v.npy", "--plot", picture,
                        "--plot-output", 2)
    assert (code, err) == (0, "") and picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for argv, message in ((["--plot-output", "3"], "--plot-output: the model has 3 outputs, got 3"),
                          ([], "--plot: ")):
        target = tmp_path / ("again.png" if argv else "summary.pdf")
        code, _, err = _run(capsys, "explain", model, data, "-o", tmp_path / "w.npy", "--plot", target, *argv)
        assert code == 1 and message in err and not target.exists()
