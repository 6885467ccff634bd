"""Distributed stump boosting on a local Dask cluster (two workers; two worker processes for the test that kills one)
against in-memory training."""
from __future__ import annotations

import numpy as np
import pytest

import bob_boost

da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
distributed = pytest.importorskip("distributed", reason="distributed training needs the dask extra")

from bob_boost.dask import DaskBoosting, NoClientError, decision_scores  # noqa: E402
from held_out_rows import held_out_rows  # noqa: E402


def test_no_client_is_a_clear_error():
    # outside the tests that ask for a client, the session's clusters have no default or current client
    assert distributed.client._get_global_client() is None
    features, targets = _data(n=100)
    with pytest.raises(NoClientError, match="client"):
        DaskBoosting(bob_boost.ExponentialLoss()).train(da.from_array(features, chunks=50), targets, 1)


def _data(n=1500, integer=True, seed=0):
    rng = np.random.default_rng(seed)
    features = rng.integers(0, 15, size=(n, 6)) if integer else rng.normal(size=(n, 6)).round(2)
    targets = np.where(features[:, 0] + features[:, 2] + rng.normal(0, 3, n) > (14 if integer else 0), 1.0, -1.0)
    return features, targets


def _in_memory(loss, features, targets, rounds, sample_weight=None):
    trainer = bob_boost.Boosting(bob_boost.StumpTrainer(max_bins=256), loss, step_rule="newton")
    return trainer.train(features, targets, rounds, sample_weight=sample_weight)


def _assert_same_model(distributed_machine, memory_machine, rtol=1e-9):
    assert len(distributed_machine) == len(memory_machine) > 0
    assert distributed_machine.weak_machines == memory_machine.weak_machines
    np.testing.assert_allclose(distributed_machine.weights, memory_machine.weights, rtol=rtol, atol=0)


@pytest.mark.parametrize("loss", [bob_boost.ExponentialLoss(), bob_boost.LogitLoss()], ids=["exp", "logit"])
@pytest.mark.long
def test_uneven_chunks_and_a_one_class_chunk_give_the_in_memory_model(client, loss):
    features, targets = _data()
    order = np.argsort(targets, kind="stable")  # the first chunk holds negatives only
    features, targets = features[order], targets[order]
    assert np.all(targets[:200] == -1.0)
    chunks = ((200, 650, 13, 637),)
    machine = DaskBoosting(loss, client=client).train(da.from_array(features, chunks=chunks + ((6,),)),
                                                      da.from_array(targets, chunks=chunks), 8)
    _assert_same_model(machine, _in_memory(loss, features, targets, 8))


def test_chunks_are_spread_over_the_workers(client):
    from bob_boost.boosting.partitioned_data import integer_range
    from bob_boost.dask import _dask
    array = da.from_array(np.arange(80 * 3).reshape(80, 3), chunks=(10, 3))
    futures = _dask.per_chunk(client, integer_range, array)
    distributed.wait(futures)
    keys = [future.key for future in futures]

    def asked(dask_scheduler):  # where each task was asked to run: Dask may still move one from a busy worker
        return [sorted(dask_scheduler.tasks[key].worker_restrictions or ()) for key in keys]

    workers = sorted(client.scheduler_info()["workers"])
    assert client.run_on_scheduler(asked) == [[workers[0]]] * 4 + [[workers[1]]] * 4  # contiguous halves
    assert [tuple(map(int, r[0])) for r in client.gather(futures)] == [(30 * i, 30 * i + 1, 30 * i + 2)
                                                                       for i in range(8)]


def test_float_features_column_chunks_and_sample_weights(client):
    features, targets = _data(integer=False, seed=1)
    weights = np.random.default_rng(2).uniform(0.5, 2.0, size=targets.size)
    loss = bob_boost.ExponentialLoss()
    machine = DaskBoosting(loss, client=client).train(da.from_array(features, chunks=(400, 4)), targets, 6,
                                                      sample_weight=weights)
    _assert_same_model(machine, _in_memory(loss, features, targets, 6, weights))


def test_targets_chunked_otherwise_are_rechunked_and_give_the_same_model(client):
    features, targets = _data(seed=3)
    loss = bob_boost.ExponentialLoss()
    first = DaskBoosting(loss, client=client).train(da.from_array(features, chunks=(500, 6)),
                                                    da.from_array(targets, chunks=700), 5)
    second = DaskBoosting(loss, client=client).train(da.from_array(features, chunks=(500, 6)),
                                                     da.from_array(targets, chunks=500), 5)
    assert first.weak_machines == second.weak_machines
    assert np.array_equal(first.weights, second.weights)


def test_decision_scores_are_computed_chunk_by_chunk(client):
    features, targets = _data(seed=4)
    machine = _in_memory(bob_boost.ExponentialLoss(), features, targets, 5)
    lazy = decision_scores(machine, da.from_array(features, chunks=(333, 6)))
    assert isinstance(lazy, da.Array)
    assert np.array_equal(lazy.compute(), machine.decision_scores(features))


def test_bad_inputs_name_the_argument(client):
    features, targets = _data(n=200)
    good = da.from_array(features, chunks=(100, 6))
    trainer = DaskBoosting(bob_boost.ExponentialLoss(), client=client)
    with pytest.raises(TypeError, match="features"):
        trainer.train(features, targets, 2)
    unknown = good[good[:, 0] >= 0]  # boolean indexing: unknown chunk sizes
    with pytest.raises(ValueError, match="features: the chunk sizes are unknown"):
        trainer.train(unknown, targets, 2)
    with pytest.raises(ValueError, match="targets"):
        trainer.train(good, targets[:-1], 2)
    bad = targets.copy()
    bad[5] = np.nan
    with pytest.raises(ValueError, match="targets: contain NaN"):
        trainer.train(good, bad, 2)
    with pytest.raises(ValueError, match="max_bins"):
        DaskBoosting(bob_boost.ExponentialLoss(), max_bins=1000)
    with pytest.raises(TypeError, match="loss_function"):
        DaskBoosting("exponential")


def _killing_callback(client, killed, at_round=2):
    import os
    import signal

    def kill_a_worker(round_index, machine, scores):
        if round_index == at_round:
            address = sorted(client.scheduler_info()["workers"])[0]
            pid = client.run(os.getpid, workers=[address])[address]
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        return False
    return kill_a_worker


@pytest.mark.parametrize("family", ["stumps", "cost-sensitive", "multi-class trees"])
@pytest.mark.long
def test_a_worker_killed_during_training_changes_nothing(process_client, family):
    """The lost chunks are recomputed from their lineage (codes, then every round's scores or weights)."""
    from bob_boost.dask import DaskCostSensitiveBoosting, DaskMultiClassBoosting

    client = process_client  # a worker process to kill

    killed = []
    callback = _killing_callback(client, killed)
    if family == "stumps":
        features, targets = _data(seed=5)
        loss = bob_boost.ExponentialLoss()
        machine = DaskBoosting(loss, client=client).train(da.from_array(features, chunks=(250, 6)), targets, 6,
                                                          callback=callback)
        memory = _in_memory(loss, features, targets, 6)
    elif family == "cost-sensitive":
        features, targets = _data(seed=22)
        trainer = bob_boost.AdaBoostDBTrainer(2.0, 1.0)
        machine = DaskCostSensitiveBoosting(trainer, client=client).train(da.from_array(features, chunks=(250, 6)),
                                                                          targets, 6, callback=callback)
        memory = trainer.train(features, targets, 6)
    else:
        features, labels = _classes(seed=23)
        trainer = bob_boost.BAdaCostTrainer(np.ones((3, 3)) - np.eye(3), number_of_rounds=6)
        machine = DaskMultiClassBoosting(trainer, client=client).train(da.from_array(features, chunks=(250, 5)),
                                                                       labels, callback=callback)
        memory = trainer.train(features, labels)
    assert killed
    _assert_same_model(machine, memory)


def test_early_stopping_on_a_validation_set(client):
    features, targets = _data(seed=6)
    validation, validation_targets = _data(n=400, seed=7)
    loss = bob_boost.ExponentialLoss()
    stop = bob_boost.callbacks.EarlyStopping(validation, loss, validation_targets, patience=2)
    machine = DaskBoosting(loss, client=client).train(da.from_array(features, chunks=(500, 6)), targets, 60,
                                                      callback=stop)
    full = _in_memory(loss, features, targets, 60)
    assert stop.stopped and len(machine) < len(full)
    assert machine.weak_machines == full.weak_machines[:len(machine)]
    assert len(machine) == stop.best_length == int(np.argmin(stop.history))


def test_the_classifier_predicts_dask_arrays_and_goes_local(client, tmp_path):
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    from bob_boost.dask import DaskBoostingClassifier
    from bob_boost.sklearn import BoostingClassifier, load_estimator

    features, targets = _data(seed=8)
    labels = np.where(targets > 0, "face", "background")
    dX = da.from_array(features, chunks=(400, 6))
    # the core trainer's model: no intercept (the prior's is tested in test_class_prior.py)
    model = DaskBoostingClassifier(n_estimators=6, boost_from_average=False, client=client).fit(
        dX, da.from_array(labels, chunks=300))
    assert model.classes_.tolist() == ["background", "face"]
    memory = _in_memory(bob_boost.ExponentialLoss(), features, targets, 6)
    _assert_same_model(model.machine_, memory)
    predicted = model.predict(dX)
    assert isinstance(predicted, da.Array)
    local = model.to_local()
    assert isinstance(local, BoostingClassifier)
    assert np.array_equal(predicted.compute(), local.predict(features))
    assert np.array_equal(model.decision_function(dX).compute(), local.decision_function(features))
    assert np.array_equal(model.predict(features), local.predict(features))
    local.save(tmp_path / "model.hdf5")
    loaded = load_estimator(tmp_path / "model.hdf5")
    assert isinstance(loaded, BoostingClassifier)
    assert np.array_equal(loaded.predict(features), local.predict(features))
    three = np.array(["a", "b", "c"] * (len(labels) // 3))
    with pytest.raises(ValueError, match=r"weak_learner='stump' \(y has 3 classes\)"):
        DaskBoostingClassifier(n_estimators=2, client=client).fit(dX[:len(three)], three)


def test_a_scheduler_address_that_does_not_answer_fails_within_the_timeout(monkeypatch):
    import socket
    import time

    from bob_boost.dask import _dask

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setattr(_dask, "CONNECT_TIMEOUT", 1.0)
    features, targets = _data(n=100)
    start = time.perf_counter()
    with pytest.raises(NoClientError, match=f"client: no Dask scheduler answers at 'tcp://127.0.0.1:{port}'"):
        DaskBoosting(bob_boost.ExponentialLoss(), client=f"tcp://127.0.0.1:{port}").train(
            da.from_array(features, chunks=50), targets, 1)
    assert time.perf_counter() - start < 30


def test_a_scheduler_address_connects_for_the_run(client):
    features, targets = _data(n=600, seed=9)
    loss = bob_boost.ExponentialLoss()
    machine = DaskBoosting(loss, client=client.scheduler.address).train(da.from_array(features, chunks=200),
                                                                        targets, 3)
    _assert_same_model(machine, _in_memory(loss, features, targets, 3))


def test_the_regressor_matches_the_in_memory_regressor(client, tmp_path):
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    from bob_boost.dask import DaskBoostingRegressor
    from bob_boost.sklearn import BoostingRegressor, load_estimator

    features, _ = _data(seed=10)
    rng = np.random.default_rng(11)
    y = features[:, 0] * 0.7 - features[:, 3] + rng.normal(0, 1.0, features.shape[0]) + 5.0
    weights = rng.uniform(0.5, 2.0, size=y.size)
    dX = da.from_array(features, chunks=(600, 6))
    model = DaskBoostingRegressor(n_estimators=6, client=client).fit(dX, da.from_array(y, chunks=600),
                                                                     sample_weight=weights)
    memory = BoostingRegressor(weak_learner="stump", n_estimators=6, early_stopping=False).fit(
        features, y, sample_weight=weights)
    assert model.intercept_ == pytest.approx(memory.intercept_, rel=1e-12)
    assert model.machine_.weak_machines == memory.machine_.weak_machines
    np.testing.assert_allclose(model.machine_.weights, memory.machine_.weights, rtol=1e-9)
    predicted = model.predict(dX)
    assert isinstance(predicted, da.Array)
    np.testing.assert_allclose(predicted.compute(), memory.predict(features), rtol=1e-9)
    local = model.to_local()
    local.save(tmp_path / "regressor.hdf5")
    loaded = load_estimator(tmp_path / "regressor.hdf5")
    assert isinstance(loaded, BoostingRegressor)
    np.testing.assert_allclose(loaded.predict(features), memory.predict(features), rtol=1e-9)


def _lut_in_memory(loss, features, targets, rounds, entries, outputs=1, style="independent"):
    trainer = bob_boost.Boosting(bob_boost.LUTTrainer(entries, outputs, style), loss, step_rule="newton")
    return trainer.train(features, targets, rounds)


@pytest.mark.parametrize("loss", [bob_boost.ExponentialLoss(), bob_boost.LogitLoss()], ids=["exp", "logit"])
@pytest.mark.long
def test_look_up_tables_give_the_in_memory_model(client, loss):
    features, targets = _data(seed=10)
    order = np.argsort(targets, kind="stable")  # the first chunk holds negatives only
    features, targets = features[order], targets[order]
    chunks = ((300, 11, 700, 489),)
    machine = DaskBoosting(loss, client=client, weak_learner="lut").train(
        da.from_array(features, chunks=chunks + ((6,),)), da.from_array(targets, chunks=chunks), 8)
    assert machine.weak_machines[0].look_up_tables.shape == (15, 1)  # entries from the largest value, 14
    _assert_same_model(machine, _lut_in_memory(loss, features, targets, 8, 15))


def _three_classes(n=1800, seed=11):
    rng = np.random.default_rng(seed)
    features = rng.integers(0, 8, size=(n, 5))
    classes = (features[:, 0] + features[:, 1] + rng.integers(0, 3, n)) % 3
    return features, np.where(classes[:, np.newaxis] == np.arange(3), 1.0, -1.0)


@pytest.mark.parametrize("style", ["independent", "shared"])
@pytest.mark.long
def test_multi_output_look_up_tables_from_a_dataframe(client, style):
    dd = pytest.importorskip("dask.dataframe", reason="dataframe inputs need dask[dataframe]")
    import pandas

    features, targets = _three_classes()
    frame = dd.from_pandas(pandas.DataFrame(features, columns=list("abcde")), npartitions=3)
    loss = bob_boost.LogitLoss()
    machine = DaskBoosting(loss, client=client, weak_learner="lut", lut_entries=10,
                           selection_style=style).train(frame, da.from_array(targets, chunks=(500, 3)), 6)
    assert machine.number_of_outputs == 3 and machine.weights.shape == (6, 3)
    _assert_same_model(machine, _lut_in_memory(loss, features, targets, 6, 10, 3, style))
    scores = decision_scores(machine, frame)
    np.testing.assert_array_equal(scores.compute(), machine.decision_scores(features))


def test_look_up_table_inputs_and_losses_that_cannot_be_distributed(client):
    features, targets = _three_classes(n=300)
    good = da.from_array(features, chunks=100)
    with pytest.raises(ValueError, match="features: LUT feature value 7 is >= the number of LUT entries"):
        DaskBoosting(bob_boost.LogitLoss(), client=client, weak_learner="lut", lut_entries=5).train(
            good, targets, 2)
    with pytest.raises(ValueError, match="features: LUT features must be integers"):
        DaskBoosting(bob_boost.LogitLoss(), client=client, weak_learner="lut").train(good + 0.5, targets, 2)
    with pytest.raises(ValueError, match="targets: stumps have one output, got 3"):
        DaskBoosting(bob_boost.LogitLoss(), client=client).train(good, targets, 2)
    labels = np.sort(np.argmax(targets, axis=1))  # the last chunk holds class 2 only: each chunk need not hold all
    machine = DaskBoosting(bob_boost.SoftmaxLoss(3), client=client, weak_learner="lut").train(good, labels, 2)
    assert len(machine) == 2
    with pytest.raises(ValueError, match=r"targets: class 1 has no sample \(classes 0 .. 2\)"):
        DaskBoosting(bob_boost.SoftmaxLoss(3), client=client, weak_learner="lut").train(
            good, np.where(labels == 1, 0, labels), 2)
    with pytest.raises(ValueError, match=r"give SoftmaxLoss\(number_of_classes\)"):
        DaskBoosting(bob_boost.SoftmaxLoss(), client=client, weak_learner="lut").train(good, labels, 2)
    with pytest.raises(ValueError, match="step_rule: 'newton' treats outputs separately, but SoftmaxLoss couples"):
        DaskBoosting(bob_boost.SoftmaxLoss(3), client=client, weak_learner="lut", step_rule="newton").train(
            good, np.argmax(targets, axis=1), 2)
    with pytest.raises(ValueError, match="step_rule: 'newton' needs a second derivative"):
        DaskBoosting(bob_boost.TangentialLoss(), step_rule="newton")
    with pytest.raises(ValueError, match="weak_learner"):
        DaskBoosting(bob_boost.LogitLoss(), weak_learner="forest")


def _cost_sensitive_trainers():
    return [bob_boost.AdaBoostDBTrainer(2.0, 1.0), bob_boost.AdaBoostDBTrainer(1.0, 3.0, selection="loss"),
            bob_boost.CostSensitiveAdaBoostTrainer(2.0, 1.0)]


@pytest.mark.parametrize("trainer", _cost_sensitive_trainers(), ids=["db-alpha", "db-loss", "cs"])
@pytest.mark.long
def test_cost_sensitive_boosting_gives_the_in_memory_model(client, trainer):
    from bob_boost.dask import DaskCostSensitiveBoosting

    features, targets = _data(seed=12)
    order = np.argsort(-targets, kind="stable")  # the first chunk holds positives only
    features, targets = features[order], targets[order]
    chunks = ((150, 900, 7, 443),)
    distributed_trainer = DaskCostSensitiveBoosting(trainer, client=client)
    machine = distributed_trainer.train(da.from_array(features, chunks=chunks + ((6,),)),
                                        da.from_array(targets, chunks=chunks), 10)
    memory = trainer.train(features, targets, 10)
    _assert_same_model(machine, memory)
    assert machine.metadata["trainer"] == memory.metadata["trainer"]
    assert distributed_trainer.root_searches > 0


def test_cost_sensitive_boosting_with_sample_weights_and_float_features(client):
    from bob_boost.dask import DaskCostSensitiveBoosting

    features, targets = _data(n=900, seed=13)
    features = features / 7.0  # floats with few distinct values: the binned pool is the exact pool
    weights = np.random.default_rng(14).uniform(0.0, 3.0, size=targets.size)
    trainer = bob_boost.AdaBoostDBTrainer(3.0, 1.0)
    machine = DaskCostSensitiveBoosting(trainer, client=client).train(
        da.from_array(features, chunks=(250, 6)), targets, 8, sample_weight=da.from_array(weights, chunks=300))
    _assert_same_model(machine, trainer.train(features, targets, 8, sample_weight=weights))


def test_cost_sensitive_bad_inputs(client):
    from bob_boost.dask import DaskCostSensitiveBoosting

    features, targets = _data(n=200)
    good = da.from_array(features, chunks=100)
    trainer = DaskCostSensitiveBoosting(bob_boost.AdaBoostDBTrainer(2.0, 1.0), client=client)
    with pytest.raises(ValueError, match="targets: both classes"):
        trainer.train(good, np.ones(200), 2)
    with pytest.raises(ValueError, match=r"targets: must be -1 or \+1"):
        trainer.train(good, targets * 2, 2)
    with pytest.raises(ValueError, match="sample_weight: must be finite and non-negative"):
        trainer.train(good, targets, 2, sample_weight=-np.ones(200))
    with pytest.raises(ValueError, match="sample_weight: each class needs some positive weight"):
        trainer.train(good, targets, 2, sample_weight=np.where(targets > 0, 0.0, 1.0))
    with pytest.raises(TypeError, match="trainer"):
        DaskCostSensitiveBoosting(bob_boost.ExponentialLoss())


def test_the_adaboostdb_classifier_matches_the_in_memory_classifier(client, tmp_path):
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    from bob_boost.dask import DaskAdaBoostDBClassifier
    from bob_boost.sklearn import AdaBoostDBClassifier, load_estimator

    features, targets = _data(seed=15)
    labels = np.where(targets > 0, 7, 3)
    weights = np.random.default_rng(16).uniform(0.5, 2.0, size=targets.size)
    dX = da.from_array(features, chunks=(350, 6))
    model = DaskAdaBoostDBClassifier(2.0, 1.0, n_estimators=8, client=client).fit(
        dX, labels, sample_weight=da.from_array(weights, chunks=350))
    memory = AdaBoostDBClassifier(2.0, 1.0, n_estimators=8, early_stopping=False).fit(
        features, labels, sample_weight=weights)
    _assert_same_model(model.machine_, memory.machine_)
    local = model.to_local()
    assert isinstance(local, AdaBoostDBClassifier) and local.classes_.tolist() == [3, 7]
    predicted = model.predict(dX)
    assert isinstance(predicted, da.Array)
    assert np.array_equal(predicted.compute(), memory.predict(features))
    np.testing.assert_allclose(model.decision_function(dX).compute(), memory.decision_function(features),
                               rtol=1e-9, atol=1e-12)
    local.save(tmp_path / "db.hdf5")
    assert np.array_equal(load_estimator(tmp_path / "db.hdf5").predict(features), memory.predict(features))
    with pytest.raises(ValueError, match="sample_weight: class 7 has no sample with positive weight"):
        DaskAdaBoostDBClassifier(client=client).fit(dX, labels, sample_weight=np.where(targets > 0, 0.0, 1.0))


def _classes(n=1500, seed=17, k=3, integer=True):
    rng = np.random.default_rng(seed)
    features = rng.integers(0, 12, size=(n, 5)) if integer else rng.normal(size=(n, 5))
    score = features[:, 0] - features[:, 1] + (rng.integers(0, 4, n) if integer else rng.normal(0, 1, n))
    labels = np.digitize(score, np.quantile(score, np.arange(1, k) / k))
    return features, labels


def _multiclass_trainers():
    costs = np.array([[0.0, 1.0, 4.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]])
    return [bob_boost.BAdaCostTrainer(costs, bob_boost.CostSensitiveTreeTrainer(max_depth=3), number_of_rounds=6),
            bob_boost.SAMMETrainer(bob_boost.MultiClassStumpTrainer(), number_of_rounds=6, shrinkage=0.5,
                                   feature_fraction=0.6, random_state=3),
            bob_boost.AdaBoostM1Trainer(bob_boost.CostSensitiveTreeTrainer(max_depth=2), number_of_rounds=5)]


@pytest.mark.parametrize("trainer", _multiclass_trainers(), ids=["badacost-trees", "samme-stumps", "m1-trees"])
@pytest.mark.long
def test_multi_class_boosting_gives_the_in_memory_model(client, trainer):
    from bob_boost.dask import DaskMultiClassBoosting

    features, labels = _classes()
    order = np.argsort(labels, kind="stable")  # the first chunk holds class 0 only
    features, labels = features[order], labels[order]
    chunks = ((300, 700, 9, 491),)
    machine = DaskMultiClassBoosting(trainer, client=client).train(
        da.from_array(features, chunks=chunks + ((5,),)), da.from_array(labels, chunks=chunks))
    _assert_same_model(machine, trainer.train(features, labels))


def test_multi_class_boosting_on_float_features_with_sample_weights(client):
    from bob_boost.dask import DaskMultiClassBoosting

    features, labels = _classes(n=1200, seed=18, integer=False)
    weights = np.random.default_rng(19).uniform(0.0, 2.0, size=labels.size)
    trainer = bob_boost.SAMMETrainer(bob_boost.CostSensitiveTreeTrainer(max_depth=2), number_of_rounds=5)
    machine = DaskMultiClassBoosting(trainer, client=client).train(da.from_array(features, chunks=(400, 5)), labels,
                                                                   sample_weight=weights)
    _assert_same_model(machine, trainer.train(features, labels, sample_weight=weights))
    scores = decision_scores(machine, da.from_array(features, chunks=(400, 5))).compute()
    np.testing.assert_array_equal(scores, machine.decision_scores(features))


# the NaN features are made on the workers (0 / 0), which run in this process
@pytest.mark.filterwarnings("ignore:invalid value encountered in divide:RuntimeWarning")
def test_multi_class_bad_inputs(client):
    from bob_boost.dask import DaskMultiClassBoosting

    features, labels = _classes(n=300)
    good = da.from_array(features, chunks=100)
    trainer = bob_boost.BAdaCostTrainer(np.ones((3, 3)) - np.eye(3), number_of_rounds=2)
    with pytest.raises(ValueError, match="labels: label 3 is out of range for 3 classes"):
        DaskMultiClassBoosting(trainer, client=client).train(good, np.where(labels == 2, 3, labels))
    with pytest.raises(ValueError, match="features: contain NaN"):
        DaskMultiClassBoosting(trainer, client=client).train(good / (good > 0), labels)
    with pytest.raises(ValueError, match="trainer: its weak learner"):
        DaskMultiClassBoosting(bob_boost.SAMMETrainer(bob_boost.MultiClassLUTTrainer(12)))
    with pytest.raises(TypeError, match="trainer"):
        DaskMultiClassBoosting(bob_boost.AdaBoostDBTrainer(1.0, 1.0))


@pytest.mark.parametrize("costs", [None, "balanced", "imbalance", [[0, 1, 3], [1, 0, 1], [2, 2, 0]]],
                         ids=["samme", "balanced", "imbalance", "given"])
@pytest.mark.long
def test_the_badacost_classifier_matches_the_in_memory_classifier(client, tmp_path, costs):
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    from bob_boost.dask import DaskBAdaCostClassifier
    from bob_boost.sklearn import BAdaCostClassifier, load_estimator

    features, indices = _classes(n=1200, seed=20)
    labels = np.array(["low", "mid", "high"])[indices]
    weights = np.random.default_rng(21).uniform(0.5, 2.0, size=labels.size)
    dX = da.from_array(features, chunks=(500, 5))
    model = DaskBAdaCostClassifier(costs, max_depth=2, n_estimators=5, feature_fraction=0.8, random_state=4,
                                   client=client).fit(dX, da.from_array(labels, chunks=300), sample_weight=weights)
    memory = BAdaCostClassifier(costs, max_depth=2, n_estimators=5, feature_fraction=0.8, random_state=4,
                                early_stopping=False).fit(features, labels, sample_weight=weights)
    assert model.classes_.tolist() == ["high", "low", "mid"]
    np.testing.assert_allclose(model.cost_matrix_, memory.cost_matrix_, rtol=1e-12)
    _assert_same_model(model.machine_, memory.machine_)
    predicted = model.predict(dX)
    assert isinstance(predicted, da.Array)
    assert np.array_equal(predicted.compute(), memory.predict(features))
    local = model.to_local()
    local.save(tmp_path / "badacost.hdf5")
    assert np.array_equal(load_estimator(tmp_path / "badacost.hdf5").predict(features), memory.predict(features))
    with pytest.raises(ValueError, match="cost_matrix: is 2x2 but y has 3 classes"):
        DaskBAdaCostClassifier([[0, 1], [1, 0]], client=client).fit(dX, labels)
    with pytest.raises(ValueError, match="cost_matrix: must be one of"):
        DaskBAdaCostClassifier("skewed", client=client).fit(dX, labels)
    if costs == "imbalance":  # the SAMME model's confusions made the costs: not SAMME's own
        from bob_boost.costs import samme_cost_matrix
        assert not np.allclose(model.cost_matrix_, samme_cost_matrix(3))


@pytest.mark.parametrize("family", ["stumps", "cost-sensitive", "multi-class trees"])
@pytest.mark.long
def test_the_task_graph_stays_bounded_and_checkpoints_change_nothing(client, monkeypatch, family):
    """Every CHECKPOINT_ROUNDS rounds the chunks' scores are rebuilt from their codes: the scheduler then
    forgets the earlier rounds' tasks, and the model is the same bit for bit as without checkpoints."""
    from bob_boost.dask import DaskCostSensitiveBoosting, DaskMultiClassBoosting, _chunks

    def train(rounds):
        if family == "stumps":
            features, targets = _data(n=800, seed=24)
            return DaskBoosting(bob_boost.LogitLoss(), client=client).train(
                da.from_array(features, chunks=200), targets, rounds, callback=count)
        if family == "cost-sensitive":
            features, targets = _data(n=800, seed=25)
            return DaskCostSensitiveBoosting(bob_boost.CostSensitiveAdaBoostTrainer(2.0, 1.0), client=client).train(
                da.from_array(features, chunks=200), targets, rounds, callback=count)
        features, labels = _classes(n=800, seed=26)
        trainer = bob_boost.SAMMETrainer(bob_boost.CostSensitiveTreeTrainer(max_depth=2), number_of_rounds=rounds)
        return DaskMultiClassBoosting(trainer, client=client).train(da.from_array(features, chunks=200), labels,
                                                                    callback=count)

    tasks = []

    def count(round_index, machine, scores):
        tasks.append(client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)))
        return False

    without = train(8)
    growth_without = tasks[7] - tasks[1]
    monkeypatch.setattr(_chunks, "CHECKPOINT_ROUNDS", 2)
    tasks.clear()
    checkpointed = train(8)
    assert checkpointed.weak_machines == without.weak_machines
    assert np.array_equal(checkpointed.weights, without.weights)
    # without checkpoints the scheduler keeps every round's scores (one task or more per chunk and round);
    # with them it forgets the rounds before the last checkpoint (when exactly depends on its timing)
    assert len(tasks) == 8 and growth_without >= 6 * 4
    assert tasks[7] - tasks[1] < growth_without / 2


def test_integer_features_with_a_wide_value_range_are_binned_from_the_sample(client):
    """A feature of identifiers up to 1e12 would need a trillion-entry value table: binned as in memory."""
    features, targets = _data(n=1000, seed=27)
    features = features.copy()
    features[:, 3] = np.random.default_rng(28).integers(0, 10**12, size=features.shape[0])
    loss = bob_boost.ExponentialLoss()
    machine = DaskBoosting(loss, client=client).train(da.from_array(features, chunks=300), targets, 6)
    _assert_same_model(machine, _in_memory(loss, features, targets, 6))


@pytest.mark.parametrize("integer", [True, False], ids=["integer", "float"])
def test_a_chunk_narrower_than_its_array_declares_is_a_clear_error(client, integer):
    import dask

    features, targets = _data(n=200, integer=integer)
    declared = [da.from_delayed(dask.delayed(np.asarray)(block), shape=(100, 6), dtype=features.dtype)
                for block in (features[:100], features[100:, :5])]  # the second block lacks a column
    with pytest.raises(ValueError, match=r"features: chunk 1 has shape \(100, 5\), but the array declares "
                                         r"\(100, 6\)"):
        DaskBoosting(bob_boost.ExponentialLoss(), client=client).train(da.concatenate(declared), targets, 2)
    with pytest.raises(ValueError, match=r"targets: chunk 0 has shape \(99,\), but the array declares \(100,\)"):
        lying = da.concatenate([da.from_delayed(dask.delayed(np.asarray)(targets[:99]), shape=(100,), dtype=float),
                                da.from_array(targets[100:])])
        DaskBoosting(bob_boost.ExponentialLoss(), client=client).train(da.from_array(features, chunks=100), lying, 2)


def test_a_stump_without_training_error_gets_the_in_memory_weight(client):
    """No minimum: the exponential loss falls forever along a separating stump. The cluster runs the
    in-memory Newton iteration on summed derivatives, so both stop at the same weight (the cap)."""
    features = np.arange(600).reshape(-1, 1) % 10
    targets = np.where(features[:, 0] >= 5, 1.0, -1.0)
    loss = bob_boost.ExponentialLoss()
    machine = DaskBoosting(loss, client=client).train(da.from_array(features, chunks=250), targets, 1)
    _assert_same_model(machine, _in_memory(loss, features, targets, 1))


@pytest.mark.long
def test_losses_without_newton_steps_take_the_in_memory_lbfgs_search(client):
    """The tangential loss has no second derivative and softmax couples its outputs: their weights come from
    the in-memory L-BFGS search on the loss and gradient summed over the chunks. L-BFGS stops at its own
    tolerance, so its weights agree less closely than Newton's (measured: 4e-9 relative for the tangential
    loss, 2e-15 for softmax); the test allows 1e-6."""
    features, targets = _data(seed=29)
    loss = bob_boost.TangentialLoss()
    machine = DaskBoosting(loss, client=client).train(da.from_array(features, chunks=(400, 6)), targets, 5)
    memory = bob_boost.Boosting(bob_boost.StumpTrainer(max_bins=256), loss, step_rule="lbfgs").train(
        features, targets, 5)
    _assert_same_model(machine, memory, rtol=1e-6)
    features, one_hot = _three_classes(n=900, seed=30)
    labels = np.argmax(one_hot, axis=1)
    softmax = bob_boost.SoftmaxLoss(3)
    machine = DaskBoosting(softmax, client=client, weak_learner="lut").train(
        da.from_array(features, chunks=(300, 5)), labels, 4)
    memory = bob_boost.Boosting(bob_boost.LUTTrainer(8, 3), softmax, step_rule="lbfgs").train(features, labels, 4)
    assert machine.number_of_outputs == 3 and machine.decision_rule == memory.decision_rule
    _assert_same_model(machine, memory, rtol=1e-6)


@pytest.mark.parametrize("loss", ["logit", "softmax"])
@pytest.mark.long
def test_the_classifier_with_look_up_tables_learns_several_classes(client, loss):
    """Against the in-memory classifier, whose LUT weights come from L-BFGS (the cluster's from Newton's
    method for logit): the same tables, weights equal to L-BFGS's tolerance."""
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    from bob_boost.dask import DaskBoostingClassifier
    from bob_boost.sklearn import BoostingClassifier

    features, one_hot = _three_classes(n=1200, seed=31)
    labels = np.array(["x", "y", "z"])[np.argmax(one_hot, axis=1)]
    dX = da.from_array(features, chunks=(400, 5))
    options = dict(loss=loss, weak_learner="lut", n_estimators=5, maximum_feature_value=8)
    model = DaskBoostingClassifier(**options, client=client).fit(dX, labels)
    memory = BoostingClassifier(**options, early_stopping=False).fit(features, labels)
    _assert_same_model(model.machine_, memory.machine_, rtol=1e-6)
    assert np.array_equal(model.predict(dX).compute(), memory.predict(features))
    assert np.array_equal(model.to_local().predict(features), memory.predict(features))


@pytest.mark.long
def test_class_weights_weigh_as_in_memory(client):
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    from bob_boost.dask import DaskAdaBoostDBClassifier, DaskBAdaCostClassifier, DaskBoostingClassifier
    from bob_boost.sklearn import AdaBoostDBClassifier, BAdaCostClassifier, BoostingClassifier

    features, targets = _data(seed=32)
    labels = np.where(targets > 0, "rare", "common")
    dX = da.from_array(features, chunks=(400, 6))
    weights = np.random.default_rng(33).uniform(0.5, 2.0, size=labels.size)
    model = DaskBoostingClassifier(n_estimators=5, class_weight="balanced", client=client).fit(dX, labels)
    memory = BoostingClassifier(n_estimators=5, class_weight="balanced", early_stopping=False).fit(features, labels)
    _assert_same_model(model.machine_, memory.machine_, rtol=1e-6)  # in memory: L-BFGS on exact bins
    # AdaBoostDB takes no class weights (each class weighs half); factors within a class are sample weights
    weights = np.where(labels == "rare", 3.0, 1.0) * weights
    model = DaskAdaBoostDBClassifier(2.0, 1.0, n_estimators=5, client=client).fit(
        dX, labels, sample_weight=da.from_array(weights, chunks=400))
    memory = AdaBoostDBClassifier(2.0, 1.0, n_estimators=5, early_stopping=False).fit(features, labels,
                                                                                      sample_weight=weights)
    _assert_same_model(model.machine_, memory.machine_)
    features, indices = _classes(n=1200, seed=34)
    labels = np.array(["a", "b", "c"])[indices]
    dX = da.from_array(features, chunks=(500, 5))
    for class_weight in ({"a": 4.0, "c": 0.5}, "balanced"):
        model = DaskBAdaCostClassifier(n_estimators=4, class_weight=class_weight, client=client).fit(dX, labels)
        memory = BAdaCostClassifier(n_estimators=4, class_weight=class_weight, early_stopping=False).fit(
            features, labels)
        _assert_same_model(model.machine_, memory.machine_)
    with pytest.raises(ValueError, match="class_weight: names class 'd', which is not in y"):
        DaskBAdaCostClassifier(class_weight={"d": 1.0}, client=client).fit(dX, labels)


def test_nan_outside_the_binning_sample_is_still_an_error(client, monkeypatch):
    features, targets = _data(n=600, integer=False, seed=35)
    features[599, 2] = np.nan
    # a sample of 100 rows that misses the last one: only the coding of its chunk can see the NaN
    monkeypatch.setattr("bob_boost.boosting.partitioned_data.sample_rows", lambda n: np.arange(100))
    with pytest.raises(ValueError, match="features: contain NaN or infinite values"):
        DaskBoosting(bob_boost.ExponentialLoss(), client=client).train(da.from_array(features, chunks=200),
                                                                       targets, 2)


@pytest.mark.long
def test_early_stopping_holds_out_rows_and_keeps_the_best_round(client):
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    from bob_boost.dask import DaskBoostingClassifier, DaskBoostingRegressor

    rng = np.random.default_rng(36)
    features = rng.integers(0, 15, size=(3000, 6))
    noisy = features[:, 0] + rng.normal(0, 6, 3000)  # mostly noise: the validation loss soon stops improving
    labels = np.where(noisy > 7, "up", "down")
    dX = da.from_array(features, chunks=(800, 6))
    options = dict(n_estimators=150, early_stopping=True, n_iter_no_change=3, random_state=5, client=client)
    model = DaskBoostingClassifier(loss="logit", boost_from_average=False, **options).fit(dX, labels)
    assert 0 < model.n_iter_ < 150 and model.validation_score_.shape == (model.n_iter_ + 1,)
    assert int(np.argmax(model.validation_score_)) == model.n_iter_  # trimmed to its best round
    # the held-out rows take no part in training: the same rounds as training on the other rows, each chunk
    # keeping its own (so that the sums over chunks are the same)
    held_out = held_out_rows(len(labels), 5, labels=labels)  # stratified by class
    kept_chunks = tuple(int((~held_out[start:start + 800]).sum()) for start in range(0, 3000, 800))
    direct = DaskBoosting(bob_boost.LogitLoss(), client=client).train(
        da.from_array(features[~held_out], chunks=(kept_chunks, 6)), np.where(labels == "up", 1.0, -1.0)[~held_out],
        model.n_iter_)
    assert model.machine_.weak_machines == direct.weak_machines
    # (so the seed gives the same split in every fit: held_out_rows is a function of the row indices and seed)
    np.testing.assert_array_equal(model.machine_.weights, direct.weights)
    assert model.to_local().validation_score_.shape == model.validation_score_.shape
    regressor = DaskBoostingRegressor(**options).fit(dX, noisy)
    assert 0 < regressor.n_iter_ < 150 and int(np.argmax(regressor.validation_score_)) == regressor.n_iter_
    with pytest.raises(ValueError, match="validation_fraction"):
        DaskBoostingRegressor(early_stopping=True, validation_fraction=1.5, client=client).fit(dX, noisy)


@pytest.mark.long
def test_early_stopping_of_the_cost_sensitive_classifiers(client):
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    from bob_boost.dask import DaskAdaBoostDBClassifier, DaskBAdaCostClassifier

    rng = np.random.default_rng(37)
    features = rng.integers(0, 15, size=(2400, 5))
    noisy = features[:, 0] + rng.normal(0, 6, 2400)
    dX = da.from_array(features, chunks=(1200, 5))  # two chunks: each cluster round costs a few round trips
    options = dict(n_estimators=120, early_stopping=True, n_iter_no_change=3, random_state=6, client=client)
    binary = np.where(noisy > 7, 1, 0)
    model = DaskAdaBoostDBClassifier(2.0, 1.0, **options).fit(dX, binary)
    assert 0 < model.n_iter_ < 120 and int(np.argmax(model.validation_score_)) == model.n_iter_
    # the same rounds as training on the kept rows only, each class weighing 1/2 of them
    kept = ~held_out_rows(len(binary), 6, labels=binary)
    halves = np.where(binary == 1, 1 / (2 * (kept & (binary == 1)).sum()), 1 / (2 * (kept & (binary == 0)).sum()))
    direct = bob_boost.dask.DaskCostSensitiveBoosting(bob_boost.AdaBoostDBTrainer(2.0, 1.0), client=client).train(
        dX, np.where(binary == 1, 1.0, -1.0), model.n_iter_, sample_weight=np.where(kept, halves, 0.0))
    assert model.machine_.weak_machines == direct.weak_machines
    np.testing.assert_allclose(model.machine_.weights, direct.weights, rtol=1e-12)
    classes = np.digitize(noisy, [4, 10])
    model = DaskBAdaCostClassifier(max_depth=2, **options).fit(dX, classes)
    assert 0 < model.n_iter_ < 120 and int(np.argmax(model.validation_score_)) == model.n_iter_


def _cmel_case():
    features, one_hot = _three_classes(n=900, seed=31)
    costs = np.array([[0.0, 1.0, 3.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]])
    return bob_boost.CMELoss(costs), "lut", features, np.argmax(one_hot, axis=1), 8


def _jesorsky_case():
    features, _ = _three_classes(n=900, seed=32)
    rng = np.random.default_rng(32)
    eyes = np.column_stack([features[:, 0], features[:, 1], features[:, 0] + 4 + features[:, 2], features[:, 1]])
    return bob_boost.JesorskyLoss(), "lut", features, eyes + rng.normal(0, 0.3, eyes.shape), 8


def _double_base_case():
    features, targets = _data(seed=33)
    return bob_boost.DoubleBaseLoss(2.0, 1.0), "stump", features, targets, None


@pytest.mark.parametrize("case", [_cmel_case, _jesorsky_case, _double_base_case], ids=["cmel", "jesorsky", "db"])
@pytest.mark.long
def test_the_other_losses_give_the_in_memory_model(client, case):
    """CMEL and Jesorsky couple their outputs and the double-base loss has no compiled Newton form: their
    weights come from L-BFGS on the chunk sums, equal to the in-memory search within its tolerance."""
    loss, learner, features, targets, entries = case()
    rows = (250, 13, 400, features.shape[0] - 663)
    machine = DaskBoosting(loss, client=client, weak_learner=learner, lut_entries=entries).train(
        da.from_array(features, chunks=(rows, (features.shape[1],))), targets, 4)
    weak = (bob_boost.LUTTrainer(entries, machine.number_of_outputs) if learner == "lut"
            else bob_boost.StumpTrainer(max_bins=256))
    memory = bob_boost.Boosting(weak, loss, step_rule="lbfgs").train(features, targets, 4)
    assert machine.decision_rule == memory.decision_rule
    assert (machine.cost_matrix is None) == (memory.cost_matrix is None)
    if memory.cost_matrix is not None:
        np.testing.assert_array_equal(machine.cost_matrix, memory.cost_matrix)
    _assert_same_model(machine, memory, rtol=1e-6)


@pytest.mark.parametrize("stratified", [True, False], ids=["classes", "one group"])
def test_the_held_out_rows_are_the_in_memory_ones_whatever_the_chunking(client, stratified):
    from bob_boost.dask import _dask
    from bob_boost.dask._fit_data import ClusterData
    from bob_boost import holdout as _holdout

    rng = np.random.default_rng(38)
    labels = np.sort(rng.integers(0, 3, 2003))  # the first chunk holds class 0 only
    weights = np.where(rng.random(2003) < 0.1, 0.0, rng.uniform(0.5, 2.0, 2003))
    expected = held_out_rows(2003, 11, 0.2, labels if stratified else None, weights)
    number = 3 if stratified else 1
    sizes = np.bincount(labels[weights > 0], minlength=3) if stratified else np.array([(weights > 0).sum()])
    counts = _holdout.held_out_counts(sizes, 0.2, list(range(number)) if stratified else None)
    data = ClusterData(client, 256, 1)
    for chunks in [(2003,), (300, 1, 702, 1000), (500,) * 4 + (3,)]:
        # as the estimators' fit: the rows of positive weight, then their held-out rows
        _, index, (kept,) = data.positive(da.from_array(weights, chunks=(chunks,)),
                                          da.from_array(labels, chunks=(chunks,)))
        np.testing.assert_array_equal(index.compute(), np.flatnonzero(weights > 0))
        groups = kept if stratified else None  # None: one group, without a pass over the rows
        np.testing.assert_array_equal(data.held_out(index, groups, counts, 11, kept).compute(), expected[weights > 0])
    # without zero weights every row is kept as it is, and the rows' positions are their own
    everyone = held_out_rows(2003, 11, 0.2, labels if stratified else None, np.ones(2003))
    counts = _holdout.held_out_counts(np.bincount(labels, minlength=3) if stratified else np.array([2003]), 0.2,
                                      list(range(number)) if stratified else None)
    groups = da.from_array(labels if stratified else labels * 0, chunks=((300, 1, 702, 1000),))
    np.testing.assert_array_equal(_dask.holdout(groups, counts, 11).compute(), everyone)


@pytest.mark.long
def test_every_default_gives_the_in_memory_classifier_early_stopping_included(client, caplog):
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    from bob_boost.dask import DaskBoostingClassifier
    from bob_boost.sklearn import BoostingClassifier

    rng = np.random.default_rng(39)
    features = rng.integers(0, 12, size=(12000, 4))  # more than 10,000 rows: "auto" holds out rows
    labels = np.where(features[:, 0] + features[:, 1] + rng.normal(0, 4, 12000) > 11, "yes", "no")
    memory = BoostingClassifier().fit(features, labels)
    with caplog.at_level("WARNING", logger="distributed.scheduler"):
        cluster = DaskBoostingClassifier(client=client).fit(da.from_array(features, chunks=(5000, 4)), labels)
    # the held-out and the training rows are selected in graphs whose keys agree (no "different run_spec")
    assert "run_spec" not in caplog.text
    assert memory.validation_score_.size == memory.n_iter_ + 1 > 1  # early stopping ran
    assert cluster.n_iter_ == memory.n_iter_
    assert cluster.machine_.weak_machines == memory.machine_.weak_machines
    # the default weight search differs: L-BFGS in memory (bob's), the closed form on the cluster; L-BFGS-B
    # stops within its tolerance of the minimum (the weights within 1e-6, as doc/dask.md states)
    np.testing.assert_allclose(cluster.machine_.weights, memory.machine_.weights, rtol=1e-6)
    np.testing.assert_allclose(cluster.validation_score_, memory.validation_score_, rtol=1e-9)
    np.testing.assert_allclose(cluster.decision_function(features[:500]), memory.decision_function(features[:500]),
                               rtol=1e-6, atol=1e-9)


def test_auto_early_stopping_holds_out_nothing_that_would_not_fit_the_client(client, monkeypatch, caplog):
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    from bob_boost.dask import DaskBoostingClassifier, _fit_data

    rng = np.random.default_rng(40)
    features = rng.integers(0, 12, size=(10400, 3))
    labels = (features[:, 0] + rng.normal(0, 3, 10400) > 6).astype(int)
    dX = da.from_array(features, chunks=(5200, 3))
    # the held-out rows' features: 1040 rows x 3 columns x 8 bytes = 24,960 bytes
    monkeypatch.setattr(_fit_data, "AUTO_HELD_OUT_BYTES", 24_959)
    with caplog.at_level("INFO", logger="bob_boost.dask._fit_data"):
        auto = DaskBoostingClassifier(n_estimators=3, client=client).fit(dX, labels)
    assert auto.validation_score_.size == 0 and "holds out no rows" in caplog.text
    forced = DaskBoostingClassifier(n_estimators=3, early_stopping=True, client=client).fit(dX, labels)
    assert forced.validation_score_.size == forced.n_iter_ + 1
    monkeypatch.setattr(_fit_data, "AUTO_HELD_OUT_BYTES", 24_960)
    assert DaskBoostingClassifier(n_estimators=3, client=client).fit(dX, labels).validation_score_.size == 4


@pytest.mark.parametrize("family", ["stumps", "cost-sensitive", "multi-class trees"])
@pytest.mark.long
def test_histograms_summed_here_or_on_a_worker_give_the_same_model(client, monkeypatch, family):
    """Histograms that are small in all (``Chunks.gathered_bytes``) are gathered and summed by the client, which
    spares a summing task's round trip; with no bytes allowed they are summed on a worker. The same model bit for
    bit, the in-memory one."""
    from bob_boost.dask import DaskCostSensitiveBoosting, DaskMultiClassBoosting, _chunks

    summing_tasks = []
    combined = _chunks.Chunks.combined
    monkeypatch.setattr(_chunks.Chunks, "combined",
                        lambda self, *args: summing_tasks.append(1) or combined(self, *args))

    def trained():
        if family == "stumps":
            features, targets = _data(seed=5)
            loss = bob_boost.ExponentialLoss()
            return (DaskBoosting(loss, client=client).train(da.from_array(features, chunks=(400, 6)), targets, 6),
                    _in_memory(loss, features, targets, 6))
        if family == "cost-sensitive":
            features, targets = _data(seed=22)
            trainer = bob_boost.AdaBoostDBTrainer(2.0, 1.0)
            return (DaskCostSensitiveBoosting(trainer, client=client).train(
                da.from_array(features, chunks=(400, 6)), targets, 6), trainer.train(features, targets, 6))
        features, labels = _classes(seed=23)
        trainer = bob_boost.BAdaCostTrainer(np.ones((3, 3)) - np.eye(3), number_of_rounds=4)
        return (DaskMultiClassBoosting(trainer, client=client).train(da.from_array(features, chunks=(400, 5)),
                                                                     labels), trainer.train(features, labels))

    here, memory = trained()
    assert not summing_tasks
    monkeypatch.setattr(_chunks, "GATHERED_BYTES", 0)
    on_a_worker, _ = trained()
    assert summing_tasks
    assert here.weak_machines == on_a_worker.weak_machines
    np.testing.assert_array_equal(here.weights, on_a_worker.weights)
    _assert_same_model(here, memory)
