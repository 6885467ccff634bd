"""The row-partition seam in memory: partitioned growing from 1, 2 and 3 partitions against the in-memory trees."""
from __future__ import annotations

import numpy as np
import pytest

import bob_boost
from bob_boost.boosting.partitions import LocalPartitions, LocalRows, in_order, rebuilds, summed_pieces
from bob_boost.engine.codes import CodedFeatures
from bob_boost.trainers.partitioned import PartitionedBoosting
from bob_boost.trainers.partitioned_classes import PartitionedCostSensitiveBoosting, PartitionedMultiClassBoosting
from bob_boost.weak_trainers.partitioned_trees import PartitionedGradientTrees


def _data(n=900, seed=0):
    rng = np.random.default_rng(seed)
    features = np.round(rng.normal(size=(n, 4)), 2)
    labels = (features[:, 0] + 0.4 * rng.normal(size=n) > 0.2).astype(int)
    # sorted by class: the first partition below holds one class only
    order = np.argsort(labels, kind="stable")
    return features[order], labels[order]


def _partitions(binned, targets, rows, weights=None, outputs=1):
    edges = LocalPartitions.bounds(rows)
    coded = [CodedFeatures(np.ascontiguousarray(binned.coded.codes[:, a:b]), binned.coded.number_of_bins, 1)
             for a, b in zip(edges[:-1], edges[1:])]
    parts = [targets[a:b] for a, b in zip(edges[:-1], edges[1:])]
    weight_parts = [None if weights is None else weights[a:b] for a, b in zip(edges[:-1], edges[1:])]
    return LocalPartitions(coded, parts, weight_parts, outputs)


def _grow(tree, binned, targets, rows, outputs=1):
    partitions = _partitions(binned, targets, rows, outputs=outputs)
    grower = PartitionedGradientTrees(tree, partitions, binned.offsets, binned.split_thresholds, outputs)
    machine, training_outputs, _, _ = grower.grow(bob_boost.LogitLoss(), True)
    return machine, np.concatenate(training_outputs)


@pytest.mark.parametrize("growth", ["levelwise", "leafwise"])
@pytest.mark.parametrize("rows", [(900,), (300, 600), (400, 120, 380)], ids=["1", "2", "3"])
def test_partitioned_trees_are_the_in_memory_trees(growth, rows):
    """Same splits from any partitioning (the first partition holds one class only), leaf values within 1e-12
    relative: partition sums are added in another order than a node's rows."""
    features, labels = _data()
    assert np.unique(labels[:rows[0]]).size == 1 or len(rows) == 1
    targets = np.where(labels > 0, 1.0, -1.0)[:, np.newaxis]
    tree = bob_boost.TreeTrainer(max_depth=4, max_leaves=9, min_samples_leaf=15, growth=growth, n_threads=1)
    binned = tree.prepare(features)
    machine, training_outputs = _grow(tree, binned, targets, rows)
    loss = bob_boost.LogitLoss()
    scores = np.zeros_like(targets)
    memory = tree.train(binned, loss.loss_gradient(targets, scores), loss.loss_hessian(targets, scores))
    assert machine.features.tolist() == memory.features.tolist()
    assert machine.thresholds.tolist() == memory.thresholds.tolist()
    assert machine.left_children.tolist() == memory.left_children.tolist()
    np.testing.assert_allclose(machine.values, memory.values, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(training_outputs, memory.forward(features), rtol=1e-12, atol=1e-15)


def test_one_partition_gives_the_in_memory_tree_bit_for_bit():
    """One partition adds every node's rows in the in-memory order: without histogram subtraction (which
    makes a larger child's sums another way) the tree is the same to the last bit."""
    features, labels = _data(seed=3)
    targets = np.where(labels > 0, 1.0, -1.0)[:, np.newaxis]
    tree = bob_boost.TreeTrainer(max_depth=3, min_samples_leaf=10, n_threads=1, growth="levelwise")
    tree.histogram_subtraction = False
    binned = tree.prepare(features)
    machine, _ = _grow(tree, binned, targets, (900,))
    loss = bob_boost.LogitLoss()
    scores = np.zeros_like(targets)
    memory = tree.train(binned, loss.loss_gradient(targets, scores), loss.loss_hessian(targets, scores))
    assert np.array_equal(machine.values, memory.values)
    assert np.array_equal(machine.thresholds, memory.thresholds)


def test_sums_are_taken_in_partition_order():
    parts = [np.array([1e16]), np.array([1.0]), np.array([-1e16])]
    partitions = LocalPartitions([CodedFeatures(np.zeros((1, 1), np.uint8), 2, 1)] * 3, [p for p in parts],
                                 [None] * 3, None)
    # (1e16 + 1) - 1e16 is 0 in floating point, 1e16 - 1e16 + 1 would be 1: the order is the partitions'
    assert partitions.summed(lambda x: x, parts)[0] == 0.0
    assert in_order(*parts)[0] == 0.0
    assert summed_pieces((np.ones(2), 1.0), (np.ones(2), 2.0))[1] == 3.0
    assert partitions.combined(lambda *p: len(p), parts) == 3
    assert not rebuilds(partitions, 32)


def test_raw_rows_are_cut_at_the_partition_bounds():
    features, labels = _data(n=30)
    targets = np.where(labels > 0, 1.0, -1.0)[:, np.newaxis]
    binned = bob_boost.TreeTrainer(n_threads=1).prepare(features)
    partitions = _partitions(binned, targets, (10, 5, 15))
    blocks = partitions.raw(features, lambda block, scale: block * scale, 2.0)
    assert [b.shape[0] for b in blocks] == [10, 5, 15]
    assert np.array_equal(np.concatenate(blocks), 2.0 * features)


@pytest.mark.parametrize("name, targets, weights, message", [
    ("targets", [np.ones(10)], [None, None], "targets: 1 partitions, the features have 2"),
    ("targets", [np.ones(10), np.ones(4)], [None, None], "targets: a partition of 4 rows, its features have 5"),
    ("weights", [np.ones(10), np.ones(5)], [None, np.ones(6)], "weights: a partition of 6 rows, its features have 5"),
])
def test_partitions_of_other_rows_than_the_features_are_refused(name, targets, weights, message):
    coded = [CodedFeatures(np.zeros((2, n), np.uint8), 4, 1) for n in (10, 5)]
    with pytest.raises(ValueError, match=message):
        LocalPartitions(coded, targets, weights, 1)


def test_partitions_of_other_features_are_refused():
    coded = [CodedFeatures(np.zeros((f, 5), np.uint8), 4, 1) for f in (2, 3)]
    with pytest.raises(ValueError, match=r"coded: partitions of \[2, 3\] features"):
        LocalPartitions(coded, [np.ones(5)] * 2, [None] * 2, 1)


# -- every family on in-memory partitions, against the Dask chunks of the same bounds -------------------------

def _boost_stumps(features, targets, rows, loss, rounds):
    """Generic boosting of stumps on in-memory row blocks: the Dask trainer's code on another source."""
    trainer = PartitionedBoosting(loss, step_rule="newton")
    return trainer.train_on(LocalRows(rows), features, targets, rounds)


def _boost_cost_sensitive(features, targets, rows, trainer, rounds):
    return PartitionedCostSensitiveBoosting(trainer).train_on(LocalRows(rows), features, targets, rounds)


def _stump_data(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    features = rng.integers(0, 15, size=(n, 5)).astype(float)
    targets = np.where(features[:, 0] + features[:, 2] + rng.normal(0, 3, n) > 14, 1.0, -1.0)
    order = np.argsort(targets, kind="stable")  # the first partition holds one class only
    return features[order], targets[order]


@pytest.mark.parametrize("rows", [(1200,), (500, 700), (300, 451, 449)], ids=["1", "2", "3"])
def test_partitioned_stumps_are_the_in_memory_stumps(rows):
    features, targets = _stump_data()
    loss = bob_boost.LogitLoss()
    machine = _boost_stumps(features, targets, rows, loss, 8)
    memory = bob_boost.Boosting(bob_boost.StumpTrainer(max_bins=256), loss, step_rule="newton").train(
        features, targets, 8)
    assert machine.weak_machines == memory.weak_machines
    np.testing.assert_allclose(machine.weights, memory.weights, rtol=1e-9, atol=0)


@pytest.mark.parametrize("weak_learner", ["stump", "lut"])
def test_partitioned_stumps_and_tables_are_shrunk_as_in_memory(weak_learner):
    features, targets = _stump_data()
    loss = bob_boost.LogitLoss()
    weak = bob_boost.StumpTrainer(max_bins=256) if weak_learner == "stump" else bob_boost.LUTTrainer(15)
    memory = bob_boost.Boosting(weak, loss, step_rule="newton", learning_rate=0.3).train(features, targets, 6)
    trainer = PartitionedBoosting(loss, step_rule="newton", weak_learner=weak_learner, learning_rate=0.3,
                                  lut_entries=15 if weak_learner == "lut" else None)
    machine = trainer.train_on(LocalRows((500, 700)), features, targets, 6)
    full = PartitionedBoosting(loss, step_rule="newton", weak_learner=weak_learner,
                               lut_entries=15 if weak_learner == "lut" else None).train_on(
        LocalRows((500, 700)), features, targets, 1)
    assert machine.weak_machines == memory.weak_machines
    np.testing.assert_allclose(machine.weights, memory.weights, rtol=1e-9, atol=0)
    np.testing.assert_allclose(machine.weights[0], 0.3 * full.weights[0], rtol=1e-12, atol=0)


@pytest.mark.parametrize("rows", [(1200,), (500, 700), (300, 451, 449)], ids=["1", "2", "3"])
def test_partitioned_cost_sensitive_boosting_is_the_in_memory_model(rows):
    features, targets = _stump_data(seed=1)
    trainer = bob_boost.AdaBoostDBTrainer(2.0, 1.0)
    machine = _boost_cost_sensitive(features, targets, rows, trainer, 6)
    memory = trainer.train(features, targets, 6)
    assert machine.weak_machines == memory.weak_machines
    np.testing.assert_allclose(machine.weights, memory.weights, rtol=1e-12, atol=0)


def test_the_dask_chunks_are_local_partitions_of_the_same_bounds(client):
    """The Dask trainers only place the chunks: with the same bounds the model is the in-memory partitions'
    bit for bit, for generic and cost-sensitive boosting."""
    da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
    from bob_boost.dask import DaskBoosting, DaskCostSensitiveBoosting

    features, targets = _stump_data(seed=2)
    rows = (300, 451, 449)
    array = da.from_array(features, chunks=(rows, (5,)))
    loss = bob_boost.LogitLoss()
    local = _boost_stumps(features, targets, rows, loss, 6)
    remote = DaskBoosting(loss, client=client, step_rule="newton").train(array, targets, 6)
    assert remote.weak_machines == local.weak_machines
    assert np.array_equal(remote.weights, local.weights)
    trainer = bob_boost.CostSensitiveAdaBoostTrainer(2.0, 1.0)
    local = _boost_cost_sensitive(features, targets, rows, trainer, 5)
    remote = DaskCostSensitiveBoosting(trainer, client=client).train(array, targets, 5)
    assert remote.weak_machines == local.weak_machines
    assert np.array_equal(remote.weights, local.weights)


def _boost_classes(features, labels, rows, trainer, rounds):
    """BAdaCost (SAMME, AdaBoost.M1) trees on in-memory row blocks, coded as the Dask trainer codes chunks."""
    return PartitionedMultiClassBoosting(trainer).train_on(LocalRows(rows), features, labels, rounds)


def _class_data(n=900, seed=4):
    rng = np.random.default_rng(seed)
    features = np.round(rng.normal(size=(n, 4)), 2)
    labels = (features[:, 0] > 0).astype(np.int64) + (features[:, 1] + 0.3 * rng.normal(size=n) > 0.5)
    order = np.argsort(labels, kind="stable")  # the first partition holds class 0 only
    return features[order], labels[order]


@pytest.mark.parametrize("rows", [(900,), (200, 700), (250, 13, 637)], ids=["1", "2", "3"])
def test_partitioned_cost_sensitive_trees_are_the_in_memory_trees(rows):
    features, labels = _class_data()
    trainer = bob_boost.BAdaCostTrainer(1.0 - np.eye(3), bob_boost.CostSensitiveTreeTrainer(max_depth=3),
                                        number_of_rounds=5)
    machine = _boost_classes(features, labels, rows, trainer, 5)
    memory = trainer.train(features, labels)
    assert machine.weak_machines == memory.weak_machines
    np.testing.assert_allclose(machine.weights, memory.weights, rtol=1e-12, atol=0)
    for tree, twin in zip(machine.weak_machines, memory.weak_machines):  # the weights' sums, in another order
        np.testing.assert_allclose(tree.cover, twin.cover, rtol=1e-12, atol=0)


def test_the_dask_chunks_grow_the_local_partitions_class_trees(client):
    da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
    from bob_boost.dask import DaskMultiClassBoosting

    features, labels = _class_data(seed=5)
    rows = (250, 13, 637)
    trainer = bob_boost.SAMMETrainer(bob_boost.CostSensitiveTreeTrainer(max_depth=2), number_of_rounds=4,
                                     number_of_classes=3)
    local = _boost_classes(features, labels, rows, trainer, 4)
    remote = DaskMultiClassBoosting(trainer, client=client).train(da.from_array(features, chunks=(rows, (4,))),
                                                                  labels)
    assert remote.weak_machines == local.weak_machines
    assert np.array_equal(remote.weights, local.weights)
    assert remote.metadata["distributed"] == "dask" and "distributed" not in local.metadata


def test_partitioned_trees_with_missing_values_and_weights_are_the_in_memory_trees():
    """Gradient trees on three row blocks, NaN binned and samples weighted, through the generic trainer."""
    features, labels = _data(n=900, seed=7)
    features[np.random.default_rng(7).random(features.shape) < 0.1] = np.nan
    targets = np.where(labels > 0, 1.0, -1.0)
    weights = np.random.default_rng(8).uniform(0.5, 2.0, size=labels.size)
    tree = bob_boost.TreeTrainer(max_depth=3, min_samples_leaf=10, missing="bin", n_threads=1)
    loss = bob_boost.LogitLoss()
    machine = PartitionedBoosting(loss, weak_learner="tree", tree=tree, learning_rate=0.3).train_on(
        LocalRows((400, 120, 380)), features, targets, 4, sample_weight=weights)
    memory = bob_boost.Boosting(tree, loss, learning_rate=0.3).train(features, targets, 4, sample_weight=weights)
    for ours, theirs in zip(machine.weak_machines, memory.weak_machines):
        assert ours.features.tolist() == theirs.features.tolist()
        assert np.array_equal(ours.thresholds, theirs.thresholds, equal_nan=True)
        np.testing.assert_allclose(ours.values, theirs.values, rtol=1e-10, atol=1e-13)


def test_look_up_tables_on_row_blocks_are_the_in_memory_tables():
    rng = np.random.default_rng(9)
    features = rng.integers(0, 6, size=(600, 4))
    targets = np.where(features[:, 1] + rng.normal(0, 1, 600) > 2.5, 1.0, -1.0)
    loss = bob_boost.ExponentialLoss()
    machine = PartitionedBoosting(loss, weak_learner="lut").train_on(LocalRows((100, 500)), features, targets, 5)
    memory = bob_boost.Boosting(bob_boost.LUTTrainer(6), loss, step_rule="newton").train(features, targets, 5)
    assert machine.weak_machines == memory.weak_machines
    np.testing.assert_allclose(machine.weights, memory.weights, rtol=1e-12, atol=0)


@pytest.mark.parametrize("rows, message", [((), r"rows: expected a block size of at least 1"),
                                           ((5, 0), r"rows: expected a block size of at least 1")])
def test_row_blocks_without_rows_are_refused(rows, message):
    with pytest.raises(ValueError, match=message):
        LocalRows(rows)


def test_row_blocks_of_other_lengths_than_the_arrays_are_refused():
    features, targets = _stump_data(n=100)
    trainer = PartitionedBoosting(bob_boost.LogitLoss())
    with pytest.raises(ValueError, match=r"rows: the blocks hold 90 rows, an array has 100"):
        trainer.train_on(LocalRows((40, 50)), features, targets, 2)
    with pytest.raises(ValueError, match=r"targets: expected 100 rows \(the features'\), got 99"):
        trainer.train_on(LocalRows((50, 50)), features, targets[:99], 2)
    with pytest.raises(ValueError, match=r"sample_weight: expected 100 rows"):
        trainer.train_on(LocalRows((50, 50)), features, targets, 2, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match=r"labels: expected 100 rows"):
        PartitionedMultiClassBoosting(bob_boost.SAMMETrainer(bob_boost.CostSensitiveTreeTrainer(max_depth=1))).train_on(
            LocalRows((50, 50)), features, np.zeros(7, dtype=int))


def _unsampled_value_data(missing: bool) -> tuple[np.ndarray, list[np.ndarray]]:
    """60,000 rows of which a value only rows outside the engine's sample hold, and the in-memory thresholds
    (which re-bin that feature from all its rows)."""
    from bob_boost.binning import BinnedFeatures
    from bob_boost.engine.edges import SAMPLE_SIZE, sample_rows
    n = SAMPLE_SIZE + 10_000
    outside = np.setdiff1d(np.arange(n), sample_rows(n))
    rng = np.random.default_rng(6)
    features = np.zeros((n, 3))
    features[:, 0] = rng.integers(0, 4, n) / 2.0
    features[outside[:5], 0] = 9.25  # never sampled
    features[:, 1] = rng.normal(size=n)  # many values: quantile bins, never re-checked
    features[:, 2] = rng.integers(0, 3, n) - 0.5
    if missing:
        features[outside[5:40], 2] = np.nan
    memory = BinnedFeatures.from_values(features, max_bins=64, missing=missing)
    ends = memory.offsets[1:] - 1 - missing  # each feature's value thresholds end before its NaN-filled tail
    expected = [memory.split_thresholds[a:b] for a, b in zip(memory.offsets[:-1], ends)]
    assert 9.25 > expected[0][-1] > 1.5  # re-binned in memory
    return features, expected


@pytest.mark.parametrize("missing", [False, True])
def test_partitioned_bins_recheck_the_sample_on_every_row_as_in_memory(missing):
    """A value that only rows outside the engine's sample hold re-bins its feature from all its rows, in
    memory and from any partitioning: the same thresholds."""
    from bob_boost.boosting.partitioned_data import global_thresholds
    features, expected = _unsampled_value_data(missing)
    n = features.shape[0]
    for rows in ((n,), (20_000, n - 20_000), (1, 30_000, n - 30_001)):
        found = global_thresholds(LocalRows(rows), features, 64, missing)
        for f in range(3):
            np.testing.assert_array_equal(found[f], expected[f])


def test_the_dask_chunks_recheck_the_sample_on_every_row_as_in_memory(client):
    da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
    from bob_boost.boosting.partitioned_data import global_thresholds
    from bob_boost.dask._chunks import DaskRows
    features, expected = _unsampled_value_data(True)
    array = da.from_array(features, chunks=((25_000, 35_000), (3,)))
    found = global_thresholds(DaskRows(client, array), array, 64, True)
    for f in range(3):
        np.testing.assert_array_equal(found[f], expected[f])


@pytest.mark.parametrize("rows", [(900,), (400, 120, 380)], ids=["1", "3"])
def test_a_leafwise_tree_takes_fewer_round_trips_than_splits(monkeypatch, rows):
    """Leaf-wise growth brings the children of its open leaves of largest gain on trial, so a 31-leaf tree takes
    fewer round trips (histograms gathered or combined, and the leaves' sums) than splits, where a round trip a
    split took 32 (the root's, 30 splits', the leaves' sums), and it is still the in-memory tree."""
    trips = []
    for name in ("gather", "combined"):
        method = getattr(LocalPartitions, name)
        monkeypatch.setattr(LocalPartitions, name,
                            lambda self, *args, method=method: trips.append(1) or method(self, *args))
    features, labels = _data(n=3000, seed=5)
    targets = np.where(labels > 0, 1.0, -1.0)[:, np.newaxis]
    tree = bob_boost.TreeTrainer(max_depth=None, max_leaves=31, min_samples_leaf=5, growth="leafwise", n_threads=1)
    binned = tree.prepare(features)
    machine, _ = _grow(tree, binned, targets, tuple(3000 * r // 900 for r in rows))
    loss = bob_boost.LogitLoss()
    scores = np.zeros_like(targets)
    memory = tree.train(binned, loss.loss_gradient(targets, scores), loss.loss_hessian(targets, scores))
    assert machine.features.tolist() == memory.features.tolist()
    splits = int(np.sum(machine.features >= 0))
    assert splits == 30
    assert len(trips) < splits



@pytest.mark.parametrize("growth", ["levelwise", "leafwise"])
def test_of_two_siblings_the_partitions_build_the_histogram_of_fewer_rows(monkeypatch, growth):
    """With histogram subtraction (the default) the partitions build the histogram of one child a split, the
    one of fewer rows; its sibling's is the parent's minus it. The tree is the one without subtraction, whose
    partitions build both children's histograms."""
    from bob_boost.weak_trainers import partitioned_tree_tasks, partitioned_trees

    built = []  # per node histogram built by a partition: its rows

    def counted(*args, **kwargs):
        result = original(*args, **kwargs)
        built.extend(int(rows) for tree in result for rows in tree[3])
        return result

    original = partitioned_tree_tasks.node_histograms
    monkeypatch.setattr(partitioned_tree_tasks, "node_histograms", counted)
    monkeypatch.setattr(partitioned_trees, "node_histograms", counted)
    features, labels = _data(n=3000, seed=5)
    features[::13, 2] = np.nan
    targets = np.where(labels > 0, 1.0, -1.0)[:, np.newaxis]
    tree = bob_boost.TreeTrainer(max_depth=6, max_leaves=20, min_samples_leaf=5, growth=growth, n_threads=1,
                                 missing="bin")
    binned = tree.prepare(features)
    rows = (1400, 300, 1300)
    machine, outputs = _grow(tree, binned, targets, rows)
    subtracted = list(built)
    built.clear()
    tree.histogram_subtraction = False
    whole, whole_outputs = _grow(tree, binned, targets, rows)
    assert machine.features.tolist() == whole.features.tolist()
    assert machine.thresholds.tolist() == whole.thresholds.tolist()
    np.testing.assert_allclose(outputs, whole_outputs, rtol=1e-12, atol=1e-15)
    partitions = len(rows)
    children = (len(built) - partitions) // 2  # past the roots, children come in pairs
    assert children >= 10
    assert len(subtracted) - partitions == children
    # rows histogrammed below the roots: the smaller of two siblings is at most half of the pair
    assert sum(subtracted) - 3000 <= (sum(built) - 3000) / 2
