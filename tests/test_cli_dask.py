"""``bob-boost train/predict --scheduler`` on a local Dask cluster (two workers; two worker processes where the
workers read the data files), against
:class:`bob_boost.dask.DaskBoosting` called directly and the in-memory command line (the lazy readers
themselves: tests/test_dask_files.py)."""
from __future__ import annotations

import csv
import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

import bob_boost
from bob_boost import BoostedMachine
from bob_boost.cli import main

da = pytest.importorskip("dask.array", reason="--scheduler needs the dask extra (pip install \"bob_boost[dask]\")")
distributed = pytest.importorskip("distributed", reason="--scheduler needs the dask extra "
                                                        "(pip install \"bob_boost[dask]\")")

from bob_boost.dask import DaskBoosting  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def cluster(dask_cluster):
    """The session's cluster of two workers (tests/conftest.py); the command line reaches it by its address."""
    return dask_cluster


@pytest.fixture
def client(dask_session_client):
    # not the default or current client: the command line must reach the cluster through its own
    return dask_session_client


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _data(n=1500, seed=0):
    """Integer features 0..14 (at most 256 values: one bin per value in memory and on the cluster), labels
    'yes'/'no' from a noisy sum of two of them."""
    rng = np.random.default_rng(seed)
    features = rng.integers(0, 15, size=(n, 6))
    labels = np.where(features[:, 0] + features[:, 2] + rng.normal(0, 3, n) > 14, "yes", "no")
    return features, labels


def _write_hdf5(path, features, labels, group=None, feature_key="features"):
    with h5py.File(path, "w") as handle:
        node = handle.require_group(group) if group else handle
        node[feature_key] = features
        if labels.dtype.kind == "U":
            node.create_dataset("labels", data=labels.astype(object), dtype=h5py.string_dtype())
        else:
            node["labels"] = labels


def _write_csv(path, features, labels, header=True, delimiter=","):
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle, delimiter=delimiter)
        if header:
            writer.writerow([f"f{i}" for i in range(features.shape[1])] + ["target"])
        for row, label in zip(features.tolist(), labels.tolist()):
            writer.writerow(row + [label])


def _predictions(path):
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    return np.array([r[0] for r in rows[1:]]), np.array([[float(v) for v in r[1:]] for r in rows[1:]])


@pytest.mark.long
def test_hdf5_training_is_dask_boosting_and_predicts_as_in_memory(process_cluster, process_session_client, tmp_path,
                                                                  capsys, monkeypatch, read_on_workers_only):
    cluster, client = process_cluster, process_session_client  # the workers read the file in their own processes
    features, labels = _data()
    data = tmp_path / "d.hdf5"
    _write_hdf5(data, features, labels, group="train", feature_key="data")
    distributed_model, memory_model = tmp_path / "cluster.hdf5", tmp_path / "memory.hdf5"
    read_on_workers_only("_dataset_rows")
    code, out, err = _run(capsys, "train", data, "--group", "train", "-o", distributed_model, "-r", 6, "--max-bins",
                          256, "--scheduler", cluster.scheduler_address, "--chunk-rows", 400)
    assert code == 0, err
    assert f"on the Dask cluster at {cluster.scheduler_address}" in out and "round 6/6: feature" in err
    machine = BoostedMachine.load(distributed_model)

    targets = np.where(labels == "yes", 1.0, -1.0)  # 'yes' sorts last: the positive class
    direct = DaskBoosting(bob_boost.ExponentialLoss(), max_bins=256, client=client).train(
        da.from_array(features, chunks=(400, 6)), targets, 6, sample_weight=None)
    assert len(machine) == 6 and machine.weak_machines == direct.weak_machines
    np.testing.assert_allclose(machine.weights, direct.weights, rtol=1e-9, atol=0)

    # in memory the exactly binned integer features get L-BFGS steps, the cluster Newton's: the same stumps,
    # weights equal to far below what could change a prediction
    assert _run(capsys, "train", data, "--group", "train", "-o", memory_model, "-r", 6, "--trainer", "boosting",
                "-w", "stump", "--max-bins", 256, "-q")[0] == 0
    memory = BoostedMachine.load(memory_model)
    assert machine.weak_machines == memory.weak_machines
    np.testing.assert_allclose(machine.weights, memory.weights, rtol=1e-9, atol=0)
    for key in ("task", "classes", "classes_dtype", "trainer", "weak_learner", "loss"):
        assert machine.metadata[key] == memory.metadata[key], key
    assert machine.metadata["distributed"] == "dask"

    outputs = {}
    for name, model in (("cluster", distributed_model), ("memory", memory_model)):
        outputs[name] = tmp_path / f"{name}.csv"
        assert _run(capsys, "predict", model, data, "--group", "train", "-o", outputs[name])[0] == 0
        result = json.loads(_run(capsys, "evaluate", model, data, "--group", "train", "--json")[1])
        assert result["classes"] == ["no", "yes"] and result["accuracy"] > 0.7
    predicted, scores = _predictions(outputs["cluster"])
    expected, memory_scores = _predictions(outputs["memory"])
    np.testing.assert_array_equal(predicted, expected)
    np.testing.assert_allclose(scores, memory_scores, rtol=1e-9, atol=1e-12)
    # text labels written to HDF5 chunk by chunk, as in memory
    remote = tmp_path / "remote.hdf5"
    assert _run(capsys, "predict", distributed_model, data, "--group", "train", "-o", remote, "--scheduler",
                cluster.scheduler_address, "--chunk-rows", 700)[0] == 0
    assert _run(capsys, "predict", distributed_model, data, "--group", "train", "-o", tmp_path / "local.hdf5")[0] == 0
    with h5py.File(remote, "r") as got, h5py.File(tmp_path / "local.hdf5", "r") as want:
        assert got["labels"].dtype == want["labels"].dtype and h5py.check_string_dtype(got["labels"].dtype)
        np.testing.assert_array_equal(got["labels"].asstr()[()], want["labels"].asstr()[()])
        np.testing.assert_allclose(got["scores"][()], want["scores"][()], rtol=1e-12, atol=0)


@pytest.mark.parametrize("suffix", [".csv", ".tsv.gz", ".npy", ".hdf5", ".npz"])
def test_predict_on_the_cluster_writes_what_predict_writes(cluster, tmp_path, capsys, suffix):
    features, labels = _data(n=1000, seed=1)
    data = tmp_path / "d.npy"  # the target column first, chosen with --target
    np.save(data, np.column_stack([(labels == "yes").astype(np.int64), features]))
    model = tmp_path / "m.hdf5"
    assert _run(capsys, "train", data, "--target", 0, "-o", model, "-r", 8, "-q")[0] == 0
    local, remote = tmp_path / f"local{suffix}", tmp_path / f"remote{suffix}"
    assert _run(capsys, "predict", model, data, "--target", 0, "-o", local)[0] == 0
    code, out, err = _run(capsys, "predict", model, data, "--target", 0, "-o", remote, "--scheduler",
                          cluster.scheduler_address, "--chunk-rows", 333)  # uneven chunks: 333, 333, 333, 1
    assert (code, out, err) == (0, "", "")
    if suffix == ".npy":
        np.testing.assert_allclose(np.load(remote), np.load(local), rtol=1e-12, atol=0)
        assert remote.read_bytes()[:128] == local.read_bytes()[:128]  # the same header
    elif suffix in (".hdf5", ".npz"):
        opened = ((h5py.File(remote, "r"), h5py.File(local, "r")) if suffix == ".hdf5"
                  else (np.load(remote), np.load(local)))
        got, want = opened
        np.testing.assert_allclose(got["scores"][()], want["scores"][()], rtol=1e-12, atol=0)
        np.testing.assert_array_equal(got["labels"][()], want["labels"][()])
        assert got["labels"][()].dtype == want["labels"][()].dtype
        for handle in opened:
            handle.close()
    else:
        opener = gzip.open if suffix.endswith(".gz") else open
        with opener(remote, "rt") as got, opener(local, "rt") as want:
            assert got.read() == want.read()  # every score's repr, so equal to the last bit
    # and to standard output
    code, out, _ = _run(capsys, "predict", model, data, "--target", 0, "--scheduler", cluster.scheduler_address)
    assert code == 0 and out == _run(capsys, "predict", model, data, "--target", 0)[1]


def test_a_bad_chunk_is_a_one_line_error_and_leaves_no_predictions(cluster, tmp_path, capsys):
    rng = np.random.default_rng(11)
    features = rng.normal(size=(900, 3))
    data = tmp_path / "d.npy"
    np.save(data, np.column_stack([features, np.where(features[:, 0] > 0, 1.0, -1.0)]))
    model = tmp_path / "m.hdf5"
    assert _run(capsys, "train", data, "-o", model, "-r", 2, "-q")[0] == 0
    features[850, 1] = np.nan  # in the last chunk: the first ones are written by then
    bad = tmp_path / "bad.npy"
    np.save(bad, features)
    for output in ("p.csv", "p.hdf5"):
        code, out, err = _run(capsys, "predict", model, bad, "-o", tmp_path / output, "--scheduler",
                              cluster.scheduler_address, "--chunk-rows", 200)
        assert code == 1 and out == "" and len(err.splitlines()) == 1
        assert "bad.npy: features contain NaN or infinite values" in err
        assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.npy", "d.npy", "m.hdf5"]


@pytest.mark.long
def test_regression_boosts_from_the_mean_as_in_memory(process_cluster, process_session_client, tmp_path, capsys,
                                                       monkeypatch, read_on_workers_only):
    cluster, client = process_cluster, process_session_client  # the workers read the file in their own processes
    # float features: their bins come from the sample, which must be gathered on the cluster too
    rng = np.random.default_rng(2)
    features = np.round(rng.uniform(0, 12, size=(1200, 4)), 3)
    values = 3.0 + 0.5 * features[:, 1] - (features[:, 3] > 6) + rng.normal(0, 0.3, 1200)
    data = tmp_path / "r.npy"
    np.save(data, np.column_stack([features, values]))
    distributed_model, memory_model = tmp_path / "cluster.hdf5", tmp_path / "memory.hdf5"
    read_on_workers_only("_npy_rows")
    code, _, err = _run(capsys, "train", data, "-o", distributed_model, "--loss", "squared", "-r", 5, "-q",
                        "--scheduler", cluster.scheduler_address, "--chunk-rows", 500)
    assert code == 0, err
    machine = BoostedMachine.load(distributed_model)
    direct = DaskBoosting(bob_boost.SquaredLoss(), client=client).train(
        da.from_array(features, chunks=(500, 4)), values, 5, baseline=values.mean())
    assert machine.weak_machines == direct.weak_machines
    np.testing.assert_allclose(machine.weights, direct.weights, rtol=1e-9, atol=0)
    np.testing.assert_allclose(machine.baseline, [values.mean()], rtol=1e-12)
    assert machine.metadata["task"] == "regression"

    assert _run(capsys, "train", data, "-o", memory_model, "--loss", "squared", "-r", 5, "-q")[0] == 0
    memory = BoostedMachine.load(memory_model)
    assert machine.weak_machines == memory.weak_machines
    np.testing.assert_allclose(machine.baseline, memory.baseline, rtol=1e-12)
    np.testing.assert_allclose(machine.weights, memory.weights, rtol=1e-9)
    errors = [json.loads(_run(capsys, "evaluate", m, data, "--json")[1])["mean_squared_error"]
              for m in (distributed_model, memory_model)]
    assert errors[0] == pytest.approx(errors[1], rel=1e-9) and errors[0] < 0.5 * np.var(values)


@pytest.mark.parametrize("options", [["--loss", "exponential"], ["-w", "lut", "--loss", "logit"]],
                         ids=["stumps", "luts"])
@pytest.mark.long
def test_boosting_from_the_class_prior_as_in_memory(cluster, tmp_path, capsys, options):
    features, labels = _data(n=900, seed=4)
    data = tmp_path / "d.hdf5"
    _write_hdf5(data, features, labels)
    models = {name: tmp_path / f"{name}.hdf5" for name in ("cluster", "memory", "bob")}
    code, _, err = _run(capsys, "train", data, "-o", models["cluster"], *options, "-r", 4, "-q",
                        "--boost-from-average", "--scheduler", cluster.scheduler_address, "--chunk-rows", 250)
    assert code == 0, err
    assert _run(capsys, "train", data, "-o", models["memory"], *options, "-r", 4, "-q", "--boost-from-average")[0] == 0
    assert _run(capsys, "train", data, "-o", models["bob"], *options, "-r", 4, "-q")[0] == 0
    machine, memory, bob = (BoostedMachine.load(models[name]) for name in ("cluster", "memory", "bob"))
    share = np.mean(labels == "yes")
    scale = 2.0 if "exponential" in options else 1.0
    np.testing.assert_allclose(memory.baseline, [np.log(share / (1 - share)) / scale], rtol=1e-12)
    np.testing.assert_allclose(machine.baseline, memory.baseline, rtol=1e-12)
    assert machine.weak_machines == memory.weak_machines
    np.testing.assert_allclose(machine.weights, memory.weights, rtol=1e-6)  # L-BFGS in memory
    assert np.all(bob.baseline == 0)  # by default bob's model


def _three_classes(n=1500, seed=12):
    """Integer features 0..7 and three text classes from a noisy sum of two of them."""
    rng = np.random.default_rng(seed)
    features = rng.integers(0, 8, size=(n, 5))
    classes = (features[:, 0] + features[:, 1] + rng.integers(0, 3, n)) % 3
    return features, np.array(["red", "green", "blue"])[classes]


LUT_CASES = {"binary": ([], 6), "three classes": (["--selection-style", "shared", "--lut-entries", 10], 5)}


@pytest.mark.parametrize("case", list(LUT_CASES))
@pytest.mark.long
def test_look_up_tables_are_dask_boosting_and_predict_as_in_memory(cluster, client, tmp_path, capsys, case):
    options, rounds = LUT_CASES[case]
    features, labels = _data(seed=13) if case == "binary" else _three_classes()
    data = tmp_path / "d.hdf5"
    _write_hdf5(data, features, labels)
    models = {name: tmp_path / f"{name}.hdf5" for name in ("cluster", "memory")}
    code, _, err = _run(capsys, "train", data, "-o", models["cluster"], "-w", "lut", *options, "-r", rounds,
                        "--scheduler", cluster.scheduler_address, "--chunk-rows", 400)
    assert code == 0, err
    assert f"round {rounds}/{rounds}: feature" in err
    assert _run(capsys, "train", data, "-o", models["memory"], "-w", "lut", *options, "-r", rounds, "-q")[0] == 0
    machine, memory = (BoostedMachine.load(models[name]) for name in ("cluster", "memory"))

    # the distributed trainer itself on the same chunks, with the targets the command line encodes: the
    # sorted classes, +-1 for the last of two, else one +-1 output per class
    classes = np.unique(labels)
    if case == "binary":
        loss, targets, style, entries = bob_boost.ExponentialLoss(), np.where(labels == classes[1], 1.0, -1.0), \
            "independent", None
    else:
        loss, style, entries = bob_boost.LogitLoss(), "shared", 10
        targets = np.where(labels[:, np.newaxis] == classes, 1.0, -1.0)
    direct = DaskBoosting(loss, client=client, weak_learner="lut", lut_entries=entries, selection_style=style).train(
        da.from_array(features, chunks=(400, features.shape[1])), targets, rounds)
    assert len(machine) == rounds and machine.weak_machines == direct.weak_machines
    np.testing.assert_allclose(machine.weights, direct.weights, rtol=1e-9, atol=0)

    # not the weights: in memory the LUTs' weights come from another step rule, L-BFGS (on exact codes
    # Boosting's "auto" rule is bob's), which stops at its gradient tolerance, while the cluster takes Newton
    # steps to convergence. They agree to that tolerance (about 3e-10 relative on the three classes here, the
    # joint fit of three outputs), not by construction; what it cannot change is the tables and predictions
    assert machine.weak_machines == memory.weak_machines
    assert machine.number_of_outputs == memory.number_of_outputs == (1 if case == "binary" else 3)
    for key in ("task", "classes", "classes_dtype", "trainer", "weak_learner", "loss", "lut_entries"):
        assert machine.metadata[key] == memory.metadata[key], key
    assert machine.metadata["lut_entries"] == (15 if case == "binary" else 10)
    predictions = {}
    for name, model in models.items():
        predictions[name] = tmp_path / f"{name}.csv"
        assert _run(capsys, "predict", model, data, "-o", predictions[name])[0] == 0
        result = json.loads(_run(capsys, "evaluate", model, data, "--json")[1])
        assert result["classes"] == classes.tolist()
    np.testing.assert_array_equal(_predictions(predictions["cluster"])[0], _predictions(predictions["memory"])[0])
    assert set(_predictions(predictions["cluster"])[0]) == set(classes)
    # and the scores of every output, computed on the cluster, are those computed here
    code, out, _ = _run(capsys, "predict", models["cluster"], data, "--scheduler", cluster.scheduler_address)
    assert code == 0 and out == predictions["cluster"].read_text()


COST_SENSITIVE = [("adaboostdb", ["--cost-positive", 2]), ("adaboostdb", ["--cost-negative", 3, "--selection", "loss"]),
                  ("cost-sensitive-adaboost", ["--cost-positive", 2])]


@pytest.mark.parametrize("trainer, options", COST_SENSITIVE, ids=["db-alpha", "db-loss", "cs"])
@pytest.mark.long
def test_cost_sensitive_trainers_give_the_in_memory_model(cluster, tmp_path, capsys, trainer, options):
    # integer features with 15 values: one bin per value, so the binned stump pool is the exact one in memory
    features, labels = _data(n=1200, seed=14)
    data = tmp_path / "d.hdf5"
    _write_hdf5(data, features, np.where(labels == "yes", 7, 3))
    models = tmp_path / "cluster.hdf5", tmp_path / "memory.hdf5"
    code, out, err = _run(capsys, "train", data, "-o", models[0], "--trainer", trainer, *options, "-r", 8,
                          "--scheduler", cluster.scheduler_address, "--chunk-rows", 350)
    assert code == 0, err
    assert "on the Dask cluster" in out and "round 8/8: feature" in err
    assert _run(capsys, "train", data, "-o", models[1], "--trainer", trainer, *options, "-r", 8, "-q")[0] == 0
    machine, memory = (BoostedMachine.load(m) for m in models)
    assert len(machine) == len(memory) == 8
    assert machine.weak_machines == memory.weak_machines
    np.testing.assert_allclose(machine.weights, memory.weights, rtol=1e-9, atol=0)
    assert machine.metadata["distributed"] == "dask"
    keys = {"task", "classes", "classes_dtype", "trainer", "weak_learner", "loss", "cost_positive", "cost_negative",
            "selection", "search", "root_search"} & set(memory.metadata)
    assert {key: machine.metadata.get(key) for key in keys} == {key: memory.metadata[key] for key in keys}
    assert machine.metadata["trainer"] == trainer and machine.metadata["classes"] == [3, 7]


def _ordered_classes(n=1000, k=3, seed=20):
    """Integer features 0..11 (one quantisation step per value, in memory and on the cluster) and k text
    classes from a noisy difference of two of them, the rows sorted by label. The names do not sort in the
    order the classes were made, so the indices are the sorted labels' (as in memory), not that order."""
    rng = np.random.default_rng(seed)
    features = rng.integers(0, 12, size=(n, 5))
    score = features[:, 0] - features[:, 1] + rng.integers(0, 4, n)
    labels = np.array(["red", "green", "blue", "amber"])[np.digitize(score, np.quantile(score, np.arange(1, k) / k))]
    order = np.argsort(labels, kind="stable")
    return features[order], labels[order]


#: rows: true class, columns: predicted class, in sorted label order (amber, blue, green, red); asymmetric, so
#: a matrix read in another order would give another model
FOUR_COSTS = "0,1,2,4\n1,0,1,2\n3,1,0,1\n5,2,1,0\n"

#: classes, data seed, options, rounds. AdaBoost.M1's stumps (two of the three classes each) soon reach a
#: weighted error of exactly 1/2 in exact arithmetic, where rounding decides whether a step of 1e-15 or none
#: is taken: its rounds stop before that.
MULTI_CLASS = {"badacost-trees": (4, 20, ["--trainer", "badacost", "--cost-matrix", "{costs}", "-w", "tree",
                                          "--tree-depth", 2, "--shrinkage", 0.5, "--feature-fraction", 0.6, "--seed",
                                          3], 5),
               "samme-stumps": (3, 20, ["--trainer", "samme", "-w", "stump"], 6),
               "m1-stumps": (3, 21, ["--trainer", "adaboost-m1"], 4),
               "samme-trees-leaf-weight": (3, 22, ["--trainer", "samme", "-w", "tree", "--tree-depth", 3,
                                                   "--min-weight-fraction-leaf", 0.05], 4)}


@pytest.mark.parametrize("case", list(MULTI_CLASS))
@pytest.mark.long
def test_multi_class_trainers_give_the_in_memory_model(cluster, tmp_path, capsys, case):
    classes, seed, options, rounds = MULTI_CLASS[case]
    features, labels = _ordered_classes(k=classes, seed=seed)
    # chunks of 240, 240, 240, 240 and 40 rows, the first holding one class only
    assert np.unique(labels[:240]).size == 1 and np.unique(labels).size == classes
    data, costs = tmp_path / "d.hdf5", tmp_path / "costs.csv"
    _write_hdf5(data, features, labels)
    costs.write_text(FOUR_COSTS)
    options = [str(a).format(costs=costs) for a in options]
    models = {name: tmp_path / f"{name}.hdf5" for name in ("cluster", "memory")}
    code, out, err = _run(capsys, "train", data, "-o", models["cluster"], *options, "-r", rounds, "--scheduler",
                          cluster.scheduler_address, "--chunk-rows", 240)
    assert code == 0, err
    assert _run(capsys, "train", data, "-o", models["memory"], *options, "-r", rounds, "-q")[0] == 0
    machine, memory = (BoostedMachine.load(models[name]) for name in ("cluster", "memory"))
    assert len(machine) == len(memory) == rounds
    assert "weak machines on 1000 samples" in out and f"round {rounds}/{rounds}: feature" in err
    assert machine.weak_machines == memory.weak_machines
    np.testing.assert_allclose(machine.weights, memory.weights, rtol=1e-9, atol=0)
    np.testing.assert_array_equal(machine.cost_matrix, memory.cost_matrix)
    # what the in-memory command writes, so predict and evaluate read it as they read that model
    assert machine.metadata == {**memory.metadata, "distributed": "dask"}
    assert machine.metadata["classes"] == sorted(set(labels.tolist()))
    predictions = {}
    for name, model in models.items():
        predictions[name] = tmp_path / f"{name}.csv"
        assert _run(capsys, "predict", model, data, "-o", predictions[name])[0] == 0
    predicted = _predictions(predictions["cluster"])[0]
    np.testing.assert_array_equal(predicted, _predictions(predictions["memory"])[0])
    assert np.mean(predicted == labels) > 1.5 / classes  # it learnt something
    results = [json.loads(_run(capsys, "evaluate", model, data, "--json")[1]) for model in models.values()]
    assert results[0]["accuracy"] == results[1]["accuracy"] and results[0]["classes"] == results[1]["classes"]


@pytest.mark.long
def test_csv_and_headerless_tsv_read_as_in_memory(cluster, tmp_path, capsys):
    pytest.importorskip("dask.dataframe", reason="CSV with --scheduler needs dask.dataframe (pip install "
                                                 "\"dask[dataframe]\")")
    features, labels = _data(n=1200, seed=3)
    floats = np.round(features + np.random.default_rng(4).uniform(0, 1, features.shape), 2)
    for name, values, header, delimiter in (("d.csv", features, True, ","), ("d.tsv", floats, False, "\t")):
        data = tmp_path / name
        _write_csv(data, values, labels, header=header, delimiter=delimiter)
        models = tmp_path / f"{name}.cluster.hdf5", tmp_path / f"{name}.memory.hdf5"
        code, _, err = _run(capsys, "train", data, "-o", models[0], "-r", 5, "-q", "--positive-label", "no",
                            "--scheduler", cluster.scheduler_address, "--chunk-rows", 300)
        assert code == 0, err
        assert _run(capsys, "train", data, "-o", models[1], "-r", 5, "-q", "--positive-label", "no")[0] == 0
        machine, memory = (BoostedMachine.load(m) for m in models)
        assert machine.weak_machines == memory.weak_machines
        np.testing.assert_allclose(machine.weights, memory.weights, rtol=1e-6)
        assert machine.metadata["classes"] == memory.metadata["classes"] == ["yes", "no"]
        assert machine.metadata.get("feature_names") == memory.metadata.get("feature_names")
        expected = _run(capsys, "predict", models[1], data)[1]
        assert _run(capsys, "predict", models[1], data, "--scheduler", cluster.scheduler_address)[1] == expected


def test_csv_without_dask_dataframe_names_the_extra(cluster, tmp_path, capsys, monkeypatch):
    features, labels = _data(n=50, seed=5)
    data = tmp_path / "d.csv"
    _write_csv(data, features, labels)
    # as on a machine without the dataframe extra, whether or not this one has it
    monkeypatch.setitem(sys.modules, "dask.dataframe", None)
    code, out, err = _run(capsys, "train", data, "-o", tmp_path / "m.hdf5", "--scheduler", cluster.scheduler_address)
    assert code == 1 and out == "" and len(err.splitlines()) == 1
    assert "needs dask.dataframe" in err and 'pip install "dask[dataframe]"' in err


@pytest.mark.parametrize("growth", ["levelwise", "leafwise"])
@pytest.mark.long
def test_gradient_trees_give_the_in_memory_trees(cluster, tmp_path, capsys, growth):
    features, labels = _ordered_classes(k=3, seed=20)
    assert np.unique(labels[:300]).size == 1  # sorted by label: the first chunk holds one class only
    data = tmp_path / "d.hdf5"
    _write_hdf5(data, features, labels)
    options = ["-w", "tree", "-l", "softmax", "--tree-depth", 3, "--tree-leaves", 6, "--tree-outputs", "per_output",
               "--tree-growth", growth, "--shrinkage", 0.3, "-r", 4]
    models = {name: tmp_path / f"{name}.hdf5" for name in ("cluster", "memory")}
    code, out, err = _run(capsys, "train", data, "-o", models["cluster"], *options, "--scheduler",
                          cluster.scheduler_address, "--chunk-rows", 300)
    assert code == 0, err
    assert _run(capsys, "train", data, "-o", models["memory"], *options, "-q")[0] == 0
    machine, memory = (BoostedMachine.load(models[name]) for name in ("cluster", "memory"))
    assert len(machine) == len(memory) == 4
    np.testing.assert_array_equal(machine.weights, memory.weights)
    for ours, theirs in zip(machine.weak_machines, memory.weak_machines):
        assert ours.features.tolist() == theirs.features.tolist() and ours.roots.size == 3
        assert ours.thresholds.tolist() == theirs.thresholds.tolist()
        np.testing.assert_allclose(ours.values, theirs.values, rtol=1e-9, atol=1e-12)
    assert machine.metadata == {**memory.metadata, "distributed": "dask"}


@pytest.mark.parametrize("learner", ["stump", "lut"])
@pytest.mark.long
def test_shrunk_stumps_and_tables_give_the_in_memory_model(cluster, tmp_path, capsys, learner):
    features, labels = _ordered_classes(k=2, seed=21)
    data = tmp_path / "d.hdf5"
    _write_hdf5(data, features.astype(np.int64), labels)
    options = ["-w", learner, "--loss", "logit", "--shrinkage", 0.5, "-r", 4, "-q"]
    models = {name: tmp_path / f"{name}.hdf5" for name in ("cluster", "memory")}
    assert _run(capsys, "train", data, "-o", models["cluster"], *options, "--scheduler", cluster.scheduler_address,
                "--chunk-rows", 300)[0] == 0
    assert _run(capsys, "train", data, "-o", models["memory"], *options)[0] == 0
    machine, memory = (BoostedMachine.load(models[name]) for name in ("cluster", "memory"))
    assert len(machine) == 4 and machine.weak_machines == memory.weak_machines
    np.testing.assert_allclose(machine.weights, memory.weights, rtol=1e-6)


def _cluster_and_memory(cluster, tmp_path, capsys, data, features, values, options: list) -> tuple:
    """The gradient-tree regressions ``bob-boost train`` makes of ``data`` (written from ``features`` and
    ``values``) with ``options``, on the cluster and in memory."""
    np.save(data, np.column_stack([features, values]))
    options = ["--loss", "squared", "-w", "tree", "-r", 4, "-q", *options]
    models = {name: tmp_path / f"{name}.hdf5" for name in ("cluster", "memory")}
    code, _, err = _run(capsys, "train", data, "-o", models["cluster"], *options, "--scheduler",
                        cluster.scheduler_address, "--chunk-rows", 500)
    assert code == 0, err
    assert _run(capsys, "train", data, "-o", models["memory"], *options)[0] == 0
    return tuple(BoostedMachine.load(models[name]) for name in ("cluster", "memory"))


def test_constrained_gradient_trees_give_the_in_memory_trees(cluster, tmp_path, capsys):
    rng = np.random.default_rng(21)
    features = np.round(rng.uniform(-2, 2, size=(1200, 3)), 3)
    values = np.sin(2 * features[:, 0]) + features[:, 1] * features[:, 2]
    data = tmp_path / "r.npy"
    machine, memory = _cluster_and_memory(cluster, tmp_path, capsys, data, features, values, [
        "--monotonic-cst", "1,0,0", "--interaction-cst", "0"])
    assert [w.features.tolist() for w in machine.weak_machines] == [w.features.tolist() for w in memory.weak_machines]
    np.testing.assert_allclose(machine.decision_scores(features), memory.decision_scores(features), rtol=1e-9,
                               atol=1e-12)
    grid = np.column_stack([np.linspace(-2, 2, 81), np.zeros(81), np.zeros(81)])
    assert np.all(np.diff(machine.predict(grid)) >= 0)  # rising with feature 0
    for tree in machine.weak_machines:  # one tree a round: feature 0 alone, or 1 and 2 together
        used = set(tree.features[tree.features >= 0].tolist())
        assert 0 not in used or used == {0}
    code, _, err = _run(capsys, "train", data, "-o", tmp_path / "m.hdf5", "--loss", "squared", "-w", "tree",
                        "--monotonic-cst", "1,0", "--scheduler", cluster.scheduler_address)
    assert code == 1 and "--monotonic-cst: has 2 entries but the features have 3 columns" in err


def test_categorical_gradient_trees_give_the_in_memory_trees(cluster, tmp_path, capsys):
    rng = np.random.default_rng(22)
    codes = rng.integers(0, 9, 1200)
    features = np.column_stack([codes, np.round(rng.uniform(-2, 2, 1200), 3)])
    values = rng.normal(size=9)[codes] + features[:, 1]
    data = tmp_path / "c.npy"
    machine, memory = _cluster_and_memory(cluster, tmp_path, capsys, data, features, values, ["--categorical", "0"])
    for ours, theirs in zip(machine.weak_machines, memory.weak_machines):
        assert ours.features.tolist() == theirs.features.tolist()
        assert [None if c is None else c.tolist() for c in ours.categories] == \
               [None if c is None else c.tolist() for c in theirs.categories]
    np.testing.assert_allclose(machine.decision_scores(features), memory.decision_scores(features), rtol=1e-9,
                               atol=1e-12)
    code, _, err = _run(capsys, "train", data, "-o", tmp_path / "m.hdf5", "--loss", "squared", "-w", "tree",
                        "--categorical", "2")
    assert code == 1 and "--categorical: feature indices must be in [0, 2)" in err


def test_categorical_adaboostdb_stumps_give_the_in_memory_stumps(cluster, tmp_path, capsys):
    """``--trainer adaboostdb --categorical 0`` on a scheduler: the stump pool's category sets of in-memory
    training (every feature has fewer distinct values than the bins, so both pools are the same)."""
    rng = np.random.default_rng(23)
    codes = rng.integers(0, 7, 1000)
    noise = np.round(rng.normal(size=1000), 1)
    labels = np.where(rng.random(1000) < np.array([0.2, 0.8, 0.3, 0.7, 0.1, 0.6, 0.5])[codes], 1, 0)
    data = tmp_path / "a.npy"
    np.save(data, np.column_stack([codes, noise, labels]))
    options = ["--trainer", "adaboostdb", "--categorical", "0", "-r", 5, "-q"]
    models = {name: tmp_path / f"{name}.hdf5" for name in ("cluster", "memory")}
    code, _, err = _run(capsys, "train", data, "-o", models["cluster"], *options, "--scheduler",
                        cluster.scheduler_address, "--chunk-rows", 400)
    assert code == 0, err
    assert _run(capsys, "train", data, "-o", models["memory"], *options)[0] == 0
    machine, memory = (BoostedMachine.load(models[name]) for name in ("cluster", "memory"))
    assert any(m.categories is not None for m in machine.weak_machines)
    for ours, theirs in zip(machine.weak_machines, memory.weak_machines):
        assert (ours.index, ours.polarity) == (theirs.index, theirs.polarity)
        assert (None if ours.categories is None else ours.categories.tolist()) == \
               (None if theirs.categories is None else theirs.categories.tolist())
    features = np.column_stack([codes, noise])
    np.testing.assert_allclose(machine.decision_scores(features), memory.decision_scores(features), rtol=1e-12,
                               atol=1e-12)


UNSUPPORTED = [
    (["--monotonic-cst", "1,0,0,0,0,0"], "--monotonic-cst: is an option of --trainer boosting -w tree; drop it"),
    (["--tree-growth", "levelwise"], "--tree-growth: is an option of --trainer boosting -w tree; drop it"),
    (["--tree-leaves", "4"], "--tree-leaves: is an option of --trainer boosting -w tree; drop it"),
    (["--trainer", "samme", "-w", "tree", "--tree-outputs", "shared"],
     "--tree-outputs: is an option of --trainer boosting -w tree; drop it"),
    (["{tmp}/three.hdf5", "--trainer", "samme", "-w", "lut"], "--weak-learner: 'lut' does not run on a cluster with "
                                                             "--trainer samme; with --scheduler use -w tree or stump"),
    (["--trainer", "adaboostdb", "-w", "lut"], "--weak-learner: --trainer adaboostdb boosts stumps; drop -w lut"),
    (["--trainer", "cost-sensitive-adaboost", "--loss", "logit"],
     "--loss: --trainer cost-sensitive-adaboost minimises its own cost-sensitive loss"),
    (["--max-bins", "exact"], "--max-bins: with --scheduler, must be an integer in [2, 256], got exact"),
    (["--max-bins", "1024"], "--max-bins: with --scheduler, must be an integer in [2, 256], got 1024"),
    (["--trainer", "badacost", "--max-bins", "64"], "--max-bins: --trainer badacost does not read it"),
    (["--trainer", "samme", "--max-bins", "exact"], "--max-bins: --trainer samme does not read it"),
    (["--threads", "2"], "--threads: is an option of in-memory training only"),
    (["--trainer", "samme", "-w", "tree", "--threads", "2"], "--threads: is an option of in-memory training only"),
    (["--trainer", "adaboostdb", "--shrinkage", "0.5"], "--shrinkage: is an option of --trainer badacost, samme or "
                                                        "adaboost-m1; drop it"),
    (["--tree-depth", "3"], "--tree-depth: is an option of -w tree; drop it"),
    (["--trainer", "adaboost-m1", "--tree-depth", "3"], "--tree-depth: is an option of -w tree; drop it"),
    (["--feature-fraction", "0.5"], "--feature-fraction: is an option of --trainer badacost, samme or adaboost-m1"),
    (["--trainer", "adaboostdb", "--subsample", "0.5"], "takes no subsampling"),
    (["--cost-matrix", "{tmp}/costs.csv"], "--cost-matrix: with --scheduler, is an option of --trainer badacost only"),
    (["--trainer", "samme", "--cost-matrix", "{tmp}/costs.csv"], "--cost-matrix: is an option of --trainer badacost; "
                                                                 "drop it"),
    (["--loss", "cmel", "--cost-matrix", "{tmp}/costs.csv"], "--loss: 'cmel' couples the classes' outputs"),
    (["--trainer", "samme", "--cost-positive", "2"], "--cost-positive: is an option of --trainer adaboostdb or "
                                                     "cost-sensitive-adaboost and of the double_base loss; drop it"),
    (["--trainer", "badacost", "--loss", "logit"], "--loss: --trainer badacost minimises its own cost-sensitive loss"),
    (["--trainer", "samme", "-s", "shared"], "--selection-style: is an option of -w lut; drop it"),
    (["--trainer", "badacost", "--cost-matrix", "{tmp}/none.csv"], "none.csv: no such cost-matrix file"),
    (["{tmp}/three.hdf5", "--trainer", "badacost"], "--cost-matrix: the badacost trainer needs a cost matrix"),
    (["{tmp}/three.hdf5", "--trainer", "badacost", "--cost-matrix", "{tmp}/costs.csv"],
     "--cost-matrix: is 2x2 but there are 3 classes"),
    (["--lut-entries", "16"], "--lut-entries: is an option of -w lut; drop it"),
    (["--min-weight-fraction-leaf", "0.1"], "--min-weight-fraction-leaf: is an option of --trainer badacost, samme "
                                            "or adaboost-m1"),
    (["--trainer", "samme", "--min-weight-fraction-leaf", "0.7"], "--min-weight-fraction-leaf: must be in "
                                                                  "[0.0, 0.5], got 0.7"),
    (["--trainer", "samme", "--boost-from-average"], "--boost-from-average: is an option of --trainer boosting "
                                                     "with a classification loss"),
    (["--selection-style", "shared"], "--selection-style: is an option of -w lut; drop it"),
    (["--selection", "loss"], "--selection: is an option of --trainer adaboostdb; drop it"),
    (["--trainer", "cost-sensitive-adaboost", "--selection", "loss"], "--selection: is an option of --trainer "
                                                                      "adaboostdb"),
    (["-w", "lut", "--loss", "softmax"], "--loss: 'softmax' couples the classes' outputs"),
    (["--loss", "nonsense"], "--loss: unknown loss 'nonsense'"),
    (["--loss", "squared"], "regression loss but the labels are not numbers"),
    (["{tmp}/three.hdf5"], "--weak-learner: stumps are univariate but this task has 3 outputs; use 'lut'"),
    (["{tmp}/three.hdf5", "--trainer", "adaboostdb"], "--trainer: 'adaboostdb' is binary but there are 3 classes"),
    (["{tmp}/three.hdf5", "-w", "lut", "--positive-label", "yes"], "--positive-label: needs exactly two classes"),
    (["-w", "lut", "--lut-entries", "1"], "--lut-entries: must be >= 2, got 1"),
    (["-w", "lut", "--lut-entries", "5"], "d.hdf5: features: LUT feature value 14 is >= the number of LUT entries "
                                          "(5) (LUT weak learners; see --lut-entries)"),
    (["{tmp}/d.npz"], "d.npz: only HDF5, NPY, CSV/TSV/TXT, Parquet and Arrow files are read lazily, not '.npz'"),
]


@pytest.mark.parametrize("extra, message", UNSUPPORTED, ids=[" ".join(c[0])[-24:] for c in UNSUPPORTED])
def test_what_the_cluster_cannot_train_is_a_one_line_error(cluster, tmp_path, capsys, extra, message):
    """A first argument not beginning with '-' is the data file instead of d.hdf5; the rest are options."""
    features, labels = _data(n=60, seed=7)
    _write_hdf5(tmp_path / "d.hdf5", features, labels)
    _write_hdf5(tmp_path / "three.hdf5", features, np.where(features[:, 1] > 9, "maybe", labels))
    np.savez(tmp_path / "d.npz", features=features, labels=labels)
    (tmp_path / "costs.csv").write_text("0,1\n1,0\n")
    extra = [a.format(tmp=tmp_path) for a in extra]
    data, options = (extra[0], extra[1:]) if not extra[0].startswith("-") else (tmp_path / "d.hdf5", extra)
    model = tmp_path / "m.hdf5"
    code, out, err = _run(capsys, "train", data, "-o", model, *options, "--scheduler", cluster.scheduler_address)
    assert code == 1 and out == "" and len(err.splitlines()) == 1, err
    assert err.startswith("bob-boost train: error: ") and message in err
    assert not model.exists()


def test_chunk_rows_without_a_scheduler_is_an_error(tmp_path, capsys):
    features, labels = _data(n=40, seed=8)
    data = tmp_path / "d.hdf5"
    _write_hdf5(data, features, labels)
    for command in (["train", data, "-o", tmp_path / "m.hdf5"], ["predict", tmp_path / "m.hdf5", data]):
        code, _, err = _run(capsys, *command, "--chunk-rows", 10)
        assert code == 1 and "--chunk-rows: sets the chunks of --scheduler" in err


def test_a_scheduler_that_does_not_answer_is_a_quick_error(tmp_path, capsys, monkeypatch):
    from bob_boost.dask import _dask

    features, labels = _data(n=40, seed=9)
    data = tmp_path / "d.hdf5"
    _write_hdf5(data, features, labels)
    # the library's timeout (10 s) is its own tests'; here only that the command line reports it in one line
    monkeypatch.setattr(_dask, "CONNECT_TIMEOUT", 1.0)
    start = time.perf_counter()
    code, out, err = _run(capsys, "train", data, "-o", tmp_path / "m.hdf5", "--scheduler", "tcp://127.0.0.1:1")
    assert time.perf_counter() - start < 6
    assert code == 1 and out == "" and len(err.splitlines()) == 1
    assert "--scheduler: no Dask scheduler answers at 'tcp://127.0.0.1:1' within 1 s" in err
    assert not (tmp_path / "m.hdf5").exists()
    # a malformed address fails at once, in one line too
    assert _run(capsys, "train", data, "-o", tmp_path / "m.hdf5", "-r", 1, "-q")[0] == 0
    for address, problem in (("scheduler", "missing port number"), ("xyz://host:1", "unknown address scheme")):
        start = time.perf_counter()
        code, _, err = _run(capsys, "predict", tmp_path / "m.hdf5", data, "--scheduler", address)
        assert time.perf_counter() - start < 5 and code == 1 and len(err.splitlines()) == 1
        assert err.startswith("bob-boost predict: error:") and problem in err


@pytest.mark.long
def test_dask_is_imported_only_for_scheduler_and_its_absence_names_the_extra(tmp_path):
    features, labels = _data(n=40, seed=10)
    data = tmp_path / "d.hdf5"
    _write_hdf5(data, features, labels)
    script = f"""
import sys
from bob_boost.cli import main
assert main(["train", {str(data)!r}, "-o", {str(tmp_path / "m.hdf5")!r}, "-r", "2", "-q"]) == 0
assert main(["predict", {str(tmp_path / "m.hdf5")!r}, {str(data)!r}, "-o", {str(tmp_path / "p.csv")!r}]) == 0
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("dask", "distributed") or m == "bob_boost.dask")
assert not loaded, loaded
sys.modules["dask"] = sys.modules["distributed"] = None  # as without the extra: importing them fails
sys.exit(main(["train", {str(data)!r}, "-o", {str(tmp_path / "n.hdf5")!r}, "--scheduler", "tcp://127.0.0.1:1"]))
"""
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                            env=environment)
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("bob-boost train: error: --scheduler needs Dask and distributed")
    assert 'pip install "bob_boost[dask]"' in result.stderr and len(result.stderr.splitlines()) == 1


def test_a_loss_without_second_derivative_trains_with_lbfgs_steps_as_in_memory(cluster, tmp_path, capsys):
    features, labels = _data(n=900, seed=40)
    data = tmp_path / "d.hdf5"
    _write_hdf5(data, features, labels)
    models = {name: tmp_path / f"{name}.hdf5" for name in ("cluster", "memory")}
    assert _run(capsys, "train", data, "-o", models["cluster"], "-r", 4, "-l", "tangential", "--scheduler",
                cluster.scheduler_address, "-q")[0] == 0
    assert _run(capsys, "train", data, "-o", models["memory"], "-r", 4, "-l", "tangential", "-q")[0] == 0
    machine, memory = (BoostedMachine.load(models[name]) for name in ("cluster", "memory"))
    assert len(machine) == 4 and machine.weak_machines == memory.weak_machines
    # both L-BFGS, on sums rounded differently: equal to its tolerance
    np.testing.assert_allclose(machine.weights, memory.weights, rtol=1e-6, atol=0)
    assert machine.metadata["loss"] == memory.metadata["loss"] == "tangential"
