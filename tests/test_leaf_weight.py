"""The least weight of a cost-sensitive tree's leaf (``min_weight_fraction_leaf``): every leaf holds that share of
the round's weight, in memory and on partitions alike, and scikit-learn's class-weight check passes with it."""
from __future__ import annotations

import numpy as np
import pytest

import bob_boost
from bob_boost.boosting.partitions import LocalRows
from bob_boost.trainers.partitioned_classes import PartitionedMultiClassBoosting
from bob_boost.weak.multiclass import route
from bob_boost.weak_trainers.multiclass import CostSensitiveTreeTrainer, MultiClassStumpTrainer


def _data(n=600, seed=0, nan=False):
    rng = np.random.default_rng(seed)
    features = np.round(rng.normal(size=(n, 4)), 2)
    labels = (features[:, 0] > 0.8).astype(np.int64) + (features[:, 1] > 1.2)
    if nan:
        features[rng.random(features.shape) < 0.1] = np.nan
    weights = rng.uniform(0.1, 3.0, n) * np.where(labels == 0, 1.0, 8.0)
    return features, labels, weights


def _leaf_weights(tree, features, weights):
    """The training weight in every node the rows end in."""
    node = np.zeros(features.shape[0], dtype=np.int64)
    for _ in range(tree.depth):
        node = route(features, node, tree.features, tree.thresholds, tree.left_children, tree.right_children,
                     tree.missing_left)
    return np.bincount(node, weights=weights, minlength=tree.number_of_nodes)[tree.features < 0]


@pytest.mark.parametrize("quantized", [True, False], ids=["quantized", "exact"])
@pytest.mark.parametrize("nan", [False, True], ids=["dense", "missing"])
@pytest.mark.parametrize("fraction", [0.05, 0.2])
def test_every_leaf_holds_the_share_of_the_weight(quantized, nan, fraction):
    features, labels, weights = _data(nan=nan)
    trainer = CostSensitiveTreeTrainer(max_depth=4, quantized=quantized, missing="bin" if nan else None,
                                       min_weight_fraction_leaf=fraction)
    tree = trainer.train(features, labels, weights, 1.0 - np.eye(3))
    free = CostSensitiveTreeTrainer(max_depth=4, quantized=quantized, missing="bin" if nan else None).train(
        features, labels, weights, 1.0 - np.eye(3))
    leaves = _leaf_weights(tree, features, weights)
    assert tree.depth >= 2 and leaves.size >= 3  # the limit still leaves splits to make
    assert leaves.min() >= fraction * weights.sum() * (1 - 1e-12)
    # without the limit the tree cuts off lighter leaves: the limit is what keeps them
    assert _leaf_weights(free, features, weights).min() < fraction * weights.sum()


def test_a_zero_fraction_is_the_tree_without_limit_and_the_stump_takes_it_too():
    features, labels, weights = _data()
    costs = 1.0 - np.eye(3)
    assert (CostSensitiveTreeTrainer(3, min_weight_fraction_leaf=0.0).train(features, labels, weights, costs)
            == CostSensitiveTreeTrainer(3).train(features, labels, weights, costs))
    stump = MultiClassStumpTrainer(min_weight_fraction_leaf=0.3).train(features, labels, weights, costs)
    below = features[:, stump.index] < stump.threshold
    assert min(weights[below].sum(), weights[~below].sum()) >= 0.3 * weights.sum()


@pytest.mark.parametrize("rows", [(600,), (250, 13, 337)], ids=["1", "3"])
def test_partitions_grow_the_in_memory_trees(rows):
    features, labels, _ = _data(seed=2)
    trainer = bob_boost.BAdaCostTrainer(1.0 - np.eye(3), CostSensitiveTreeTrainer(max_depth=3,
                                                                                  min_weight_fraction_leaf=0.08),
                                        number_of_rounds=4)
    memory = trainer.train(features, labels)
    machine = PartitionedMultiClassBoosting(trainer).train_on(LocalRows(rows), features, labels, 4)
    assert machine.weak_machines == memory.weak_machines
    np.testing.assert_allclose(machine.weights, memory.weights, rtol=1e-12, atol=0)


def test_the_estimators_take_it_in_memory_and_on_a_cluster(client):
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
    from bob_boost.dask import DaskBAdaCostClassifier
    from bob_boost.sklearn import BAdaCostClassifier

    features, labels, weights = _data(seed=3)
    names = np.array(["a", "b", "c"])[labels]
    local = BAdaCostClassifier(n_estimators=4, max_depth=3, min_weight_fraction_leaf=0.1).fit(
        features, names, sample_weight=weights)
    remote = DaskBAdaCostClassifier(n_estimators=4, max_depth=3, min_weight_fraction_leaf=0.1, client=client).fit(
        da.from_array(features, chunks=(200, 4)), names, sample_weight=da.from_array(weights, chunks=200))
    assert remote.machine_.weak_machines == local.machine_.weak_machines
    assert local.machine_.weak_machines != BAdaCostClassifier(n_estimators=4, max_depth=3).fit(
        features, names, sample_weight=weights).machine_.weak_machines


def test_heavy_class_weights_reach_every_leaf():
    """scikit-learn's check_class_weight_classifiers: class 0 weighs 1000, the others 1e-4; with leaves of at
    least 1% of the weight every leaf is class 0's, without it leaves of the light classes remain."""
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    from sklearn.datasets import make_blobs
    from sklearn.model_selection import train_test_split

    from bob_boost.sklearn import BAdaCostClassifier

    X, y = make_blobs(centers=3, random_state=0, cluster_std=20)
    X, X_test, y, _ = train_test_split(X, y, test_size=0.5, random_state=0)
    heavy = {0: 1000.0, 1: 1e-4, 2: 1e-4}
    limited = BAdaCostClassifier(n_estimators=5, class_weight=heavy, min_weight_fraction_leaf=0.01).fit(X, y)
    free = BAdaCostClassifier(n_estimators=5, class_weight=heavy).fit(X, y)
    assert np.mean(limited.predict(X_test) == 0) > 0.87 > np.mean(free.predict(X_test) == 0)


@pytest.mark.parametrize("value, error", [(-0.1, ValueError), (0.6, ValueError), ("x", TypeError),
                                          (np.nan, ValueError)])
def test_bad_fractions_name_the_argument(value, error):
    with pytest.raises(error, match="min_weight_fraction_leaf"):
        CostSensitiveTreeTrainer(min_weight_fraction_leaf=value)
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    from bob_boost.sklearn import BAdaCostClassifier

    features, labels, _ = _data(n=60)
    with pytest.raises(error, match="min_weight_fraction_leaf"):
        BAdaCostClassifier(n_estimators=2, min_weight_fraction_leaf=value).fit(features, labels)


def test_look_up_tables_have_no_leaves():
    from bob_boost.recipes import make_recipe

    with pytest.raises(ValueError, match="min_weight_fraction_leaf: a look-up table has an entry per feature"):
        make_recipe("badacost", number_of_classes=3, weak_learner="lut", cost_matrix=1.0 - np.eye(3),
                    tree_min_weight_fraction_leaf=0.1)
