"""BAdaCost's example-dependent costs on row partitions and on a local Dask cluster (two workers): the trees,
steps and weight updates of in-memory training, through the trainer, the estimator and the command line."""
from __future__ import annotations

import numpy as np
import pytest

import bob_boost
from bob_boost import BAdaCostTrainer, CostSensitiveTreeTrainer
from bob_boost.boosting.partitions import LocalPartitions, LocalRows
from bob_boost.costs import class_mean_costs
from bob_boost.trainers.partitioned_classes import PartitionedMultiClassBoosting

K = 3


def _costly_rows(n=900, seed=0):
    """Integer features 0..11 (one quantisation step per value: the partitions' trees are the in-memory ones)
    and three classes from a noisy difference of two of them; every sample's own cost row (zero at its class,
    the others drawn from 0.2 .. 5, so that no class row gives the same training)."""
    rng = np.random.default_rng(seed)
    features = rng.integers(0, 12, size=(n, 5)).astype(np.float64)
    score = features[:, 0] - features[:, 1] + rng.integers(0, 4, n)
    labels = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))
    costs = rng.uniform(0.2, 5.0, size=(n, K))
    costs[np.arange(n), labels] = 0.0
    return features, labels, costs


def _trainer(rounds=8, **options):
    costs = np.ones((K, K)) - np.eye(K)
    return BAdaCostTrainer(costs, CostSensitiveTreeTrainer(max_depth=2, quantized=True), number_of_rounds=rounds,
                           **options)


def _same_model(machine, memory, features, rtol=1e-12):
    assert len(machine) == len(memory) and machine.weak_machines == memory.weak_machines
    np.testing.assert_allclose(machine.weights, memory.weights, rtol=rtol, atol=0)
    np.testing.assert_array_equal(machine.predict(features), memory.predict(features))


@pytest.mark.parametrize("form", ["rows", "matrices"])
def test_partitions_train_the_in_memory_model_on_sample_costs(monkeypatch, form):
    monkeypatch.setattr(LocalPartitions, "checkpoint_rounds", 3)  # rounds 3 and 6 rebuild the weights from codes
    features, labels, costs = _costly_rows()
    if form == "matrices":  # each sample's matrix, of which its class's row counts
        matrices = np.random.default_rng(1).uniform(0.1, 9.0, size=(labels.size, K, K))
        matrices[:, np.arange(K), np.arange(K)] = 0.0
        matrices[np.arange(labels.size), labels] = costs
        costs = matrices
    weights = np.random.default_rng(2).uniform(0.0, 2.0, labels.size)
    weights[:30] = 0.0
    trainer = _trainer(shrinkage=0.7, feature_fraction=0.8, random_state=4)
    before = costs.copy()
    machine = PartitionedMultiClassBoosting(trainer).train_on(LocalRows([200, 350, 1, 349]), features, labels,
                                                              sample_weight=weights, sample_costs=costs)
    np.testing.assert_array_equal(costs, before)
    memory = trainer.train(features, labels, sample_weight=weights, sample_costs=costs)
    _same_model(machine, memory, features)
    # and the costs matter: the class matrix alone trains another model
    plain = trainer.train(features, labels, sample_weight=weights)
    assert plain.weak_machines != memory.weak_machines or not np.allclose(plain.weights, memory.weights)


def test_continued_and_perfect_partitioned_runs_are_one_in_memory_run():
    features, labels, costs = _costly_rows()
    trainer = _trainer(rounds=4)
    source = LocalRows([450, 450])
    partitioned = PartitionedMultiClassBoosting(trainer)
    machine = partitioned.train_on(source, features, labels, sample_costs=costs)
    partitioned.train_on(source, features, labels, number_of_rounds=3, boosted_machine=machine, sample_costs=costs)
    _same_model(machine, trainer.train(features, labels, 7, sample_costs=costs), features)
    # classes a depth-2 tree separates: the first tree has no costly error; its step is capped and training stops
    separable = np.digitize(features[:, 0], [4, 8])
    own = costs.copy()
    own[np.arange(labels.size), separable] = 0.0
    machine = partitioned.train_on(source, features, separable, sample_costs=own)
    memory = trainer.train(features, separable, sample_costs=own)
    assert len(memory) == 1 and np.isfinite(memory.weights[0, 0])
    _same_model(machine, memory, features)
    partitioned.train_on(source, features, separable, boosted_machine=machine, sample_costs=own)
    assert len(machine) == 1  # its last tree classifies every row: nothing is added, as in memory


def test_bad_sample_costs_on_partitions_are_errors_naming_them():
    features, labels, costs = _costly_rows(n=300)
    source = LocalRows([100, 200])
    partitioned = PartitionedMultiClassBoosting(_trainer(rounds=2))
    wrong = costs.copy()
    wrong[150, labels[150]] = 1.0  # the second partition's 51st row: named by its place in the whole array
    for bad, message in ((costs[:, :2], r"shape \(300, 3\)"), (costs[:20], "expected 300 rows"),
                         (-costs, "non-negative"), (wrong, "sample 150 has a non-zero cost for its own class")):
        with pytest.raises(ValueError, match=f"sample_costs: .*{message}"):
            partitioned.train_on(source, features, labels, sample_costs=bad)
    samme = bob_boost.SAMMETrainer(CostSensitiveTreeTrainer(max_depth=2, quantized=True))
    with pytest.raises(ValueError, match="sample_costs: SAMMETrainer has costs of its own"):
        PartitionedMultiClassBoosting(samme).train_on(source, features, labels, sample_costs=costs)
    with pytest.raises(ValueError, match="sample_costs: expected a row or a matrix of costs per sample"):
        partitioned.train_on(source, features, labels, sample_costs=1.0)
    huge = costs.copy()
    huge[7, (labels[7] + 1) % K] = 1.5e308  # its exponents overflow: an error before training, here and in memory
    for train in (lambda: partitioned.train_on(source, features, labels, sample_costs=huge),
                  lambda: _trainer(rounds=2).train(features, labels, sample_costs=huge)):
        with pytest.raises(ValueError, match="sample_costs: sample 7's costs are too large"):
            train()
    # a list of rows trains as the array does
    listed = partitioned.train_on(source, features, labels, sample_costs=costs.tolist())
    _same_model(listed, partitioned.train_on(source, features, labels, sample_costs=costs), features, rtol=0)


# -- on a Dask cluster -------------------------------------------------------------------------------------------

da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")


@pytest.mark.long
def test_dask_trainer_trains_the_in_memory_model_on_sample_costs(client):
    from bob_boost.dask import DaskMultiClassBoosting
    features, labels, costs = _costly_rows()
    trainer = _trainer()
    chunks = ((300, 250, 350),)
    machine = DaskMultiClassBoosting(trainer, client=client).train(
        da.from_array(features, chunks=chunks + ((5,),)), da.from_array(labels, chunks=chunks),
        sample_costs=da.from_array(costs, chunks=((450, 450), (2, 1))))  # rechunked to the features' rows
    _same_model(machine, trainer.train(features, labels, sample_costs=costs), features, rtol=1e-9)
    wrong = costs.copy()
    wrong[700, labels[700]] = 2.0
    rows = da.from_array(features, chunks=chunks + ((5,),))
    with pytest.raises(ValueError, match="sample_costs: sample 700 has a non-zero cost"):
        DaskMultiClassBoosting(trainer, client=client).train(rows, labels, sample_costs=wrong)
    for text in (costs.astype(str), da.from_array(costs.astype(str), chunks=300)):
        with pytest.raises(TypeError, match="sample_costs: expected numbers"):
            DaskMultiClassBoosting(trainer, client=client).train(rows, labels, sample_costs=text)


@pytest.mark.long
def test_dask_estimator_takes_sample_costs_as_in_memory(client):
    from bob_boost.dask import DaskBAdaCostClassifier
    from bob_boost.sklearn import BAdaCostClassifier
    features, labels, costs = _costly_rows()
    names = np.array(["cat", "dog", "eel"])[labels]
    weights = np.ones(labels.size)
    weights[:40] = 0.0  # dropped rows drop their costs with them, on the cluster too
    options = dict(n_estimators=6, early_stopping=False)
    memory = BAdaCostClassifier(**options).fit(features, names, sample_weight=weights, sample_costs=costs)
    rows = da.from_array(features, chunks=(300, 5))
    fitted = DaskBAdaCostClassifier(**options).fit(rows, da.from_array(names, chunks=300), sample_weight=weights,
                                                   sample_costs=da.from_array(costs, chunks=(200, K)))
    # the class means are summed chunk by chunk: equal to rounding
    np.testing.assert_allclose(fitted.cost_matrix_, memory.cost_matrix_, rtol=1e-14)
    np.testing.assert_allclose(fitted.cost_matrix_, class_mean_costs(labels[40:], costs[40:], K), rtol=1e-14)
    assert fitted.machine_.weak_machines == memory.machine_.weak_machines
    np.testing.assert_allclose(fitted.machine_.weights, memory.machine_.weights, rtol=1e-9)
    np.testing.assert_array_equal(fitted.predict(rows).compute(), memory.predict(features))
    # a matrix per sample: the rows of weight 0 are dropped from the (n, K, K) array too
    matrices = np.broadcast_to(np.ones((K, K)) - np.eye(K), (labels.size, K, K)).copy()
    matrices[np.arange(labels.size), labels] = costs
    memory = BAdaCostClassifier(**options).fit(features, names, sample_weight=weights, sample_costs=matrices)
    fitted = DaskBAdaCostClassifier(**options).fit(rows, names, sample_weight=weights,
                                                   sample_costs=da.from_array(matrices, chunks=(250, K, K)))
    assert fitted.machine_.weak_machines == memory.machine_.weak_machines
    np.testing.assert_allclose(fitted.machine_.weights, memory.machine_.weights, rtol=1e-9)
    estimator = DaskBAdaCostClassifier(**options)
    with pytest.raises(ValueError, match=r"sample_costs: expected shape \(900, 3\) .* got \(900, 2\)"):
        estimator.fit(rows, names, sample_costs=costs[:, :2])
    with pytest.raises(ValueError, match="sample_costs: expected 900 rows"):
        estimator.fit(rows, names, sample_costs=costs[:10])
    with pytest.raises(TypeError, match="sample_costs: expected numbers"):
        estimator.fit(rows, names, sample_costs=costs.astype(str))
    with pytest.raises(ValueError, match="sample_costs: sample 5 has a non-zero cost"):
        estimator.fit(rows, names, sample_costs=costs + (np.arange(labels.size) == 5)[:, None])
    with pytest.raises(ValueError, match="eval_set"):
        DaskBAdaCostClassifier(early_stopping=True).fit(rows, names, sample_costs=costs)


@pytest.mark.long
def test_command_line_trains_sample_costs_on_the_cluster_as_in_memory(dask_cluster, tmp_path, capsys):
    pytest.importorskip("distributed", reason="--scheduler needs the dask extra")
    import h5py

    from bob_boost import BoostedMachine
    from bob_boost.cli import main
    features, labels, costs = _costly_rows()
    data, rows_file = tmp_path / "d.hdf5", tmp_path / "costs.csv"
    with h5py.File(data, "w") as file:
        file["features"], file["labels"] = features, labels
    np.savetxt(rows_file, costs, delimiter=",", fmt="%.17g")
    options = ["--trainer", "badacost", "-w", "tree", "--sample-costs", rows_file, "-r", 5, "-q"]
    models = {name: tmp_path / f"{name}.hdf5" for name in ("cluster", "memory")}
    assert main([str(a) for a in ("train", data, "-o", models["cluster"], *options, "--scheduler",
                                  dask_cluster.scheduler_address, "--chunk-rows", 400)]) == 0, capsys.readouterr().err
    assert main([str(a) for a in ("train", data, "-o", models["memory"], *options)]) == 0
    machine, memory = (BoostedMachine.load(models[name]) for name in ("cluster", "memory"))
    np.testing.assert_array_equal(machine.cost_matrix, memory.cost_matrix)  # the class means, made on the client
    _same_model(machine, memory, features, rtol=1e-9)
    bad = tmp_path / "bad.csv"
    np.savetxt(bad, costs + 1.0, delimiter=",")  # a cost at every sample's own class
    assert main([str(a) for a in ("train", data, "-o", tmp_path / "m.hdf5", *options[:4], "--sample-costs", bad,
                                  "--scheduler", dask_cluster.scheduler_address)]) != 0
    assert "bad.csv: sample 0 has a non-zero cost" in capsys.readouterr().err
    assert not (tmp_path / "m.hdf5").exists()
