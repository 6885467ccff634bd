"""Gradient trees on a local Dask cluster (two workers) against in-memory training."""
from __future__ import annotations

import numpy as np
import pytest

import bob_boost

da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
distributed = pytest.importorskip("distributed", reason="distributed training needs the dask extra")

from bob_boost.dask import DaskBoosting  # noqa: E402


def _classes(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    features = np.round(rng.normal(size=(n, 5)), 2)
    labels = (features[:, 0] > 0).astype(int) + (features[:, 1] + 0.3 * rng.normal(size=n) > 0.5)
    return features, labels


def _assert_same_trees(distributed_machine, memory_machine, rtol=1e-9):
    assert len(distributed_machine) == len(memory_machine) > 0
    np.testing.assert_array_equal(distributed_machine.weights, memory_machine.weights)
    for ours, theirs in zip(distributed_machine.weak_machines, memory_machine.weak_machines):
        assert ours.features.tolist() == theirs.features.tolist()
        assert ours.thresholds.tolist() == theirs.thresholds.tolist()
        assert ours.roots.tolist() == theirs.roots.tolist()
        assert ours.left_children.tolist() == theirs.left_children.tolist()
        np.testing.assert_allclose(ours.values, theirs.values, rtol=rtol, atol=1e-12)
        # the training records: hessian sums and gains of the same rows, summed by chunk
        np.testing.assert_allclose(ours.cover, theirs.cover, rtol=rtol, atol=1e-12)
        np.testing.assert_allclose(ours.gains, theirs.gains, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("multi_output, max_leaves", [("per_output", None), ("shared", 5)])
@pytest.mark.long
def test_softmax_trees_give_the_in_memory_trees(client, multi_output, max_leaves):
    features, labels = _classes()
    tree = bob_boost.TreeTrainer(max_depth=3, max_leaves=max_leaves, min_samples_leaf=10, multi_output=multi_output)
    loss = bob_boost.SoftmaxLoss(3)
    machine = DaskBoosting(loss, client=client, weak_learner="tree", tree=tree, learning_rate=0.3).train(
        da.from_array(features, chunks=(500, 5)), da.from_array(labels, chunks=500), 6)
    memory = bob_boost.Boosting(tree, loss, learning_rate=0.3).train(features, labels, 6)
    _assert_same_trees(machine, memory)
    assert np.array_equal(machine.predict(features), memory.predict(features))


def test_logit_trees_with_uneven_chunks_and_a_checkpoint(client, monkeypatch):
    from bob_boost.dask import _chunks
    monkeypatch.setattr(_chunks, "CHECKPOINT_ROUNDS", 3)  # rounds 3 and 6 rebuild the scores from the codes
    features, labels = _classes(seed=1)
    targets = np.where(labels > 0, 1.0, -1.0)
    tree = bob_boost.TreeTrainer(max_depth=4, min_samples_leaf=5, l2_regularization=1.0)
    loss = bob_boost.LogitLoss()
    chunks = ((300, 451, 449),)
    machine = DaskBoosting(loss, client=client, weak_learner="tree", tree=tree, learning_rate=0.5).train(
        da.from_array(features, chunks=chunks + ((5,),)), da.from_array(targets, chunks=chunks), 7)
    memory = bob_boost.Boosting(tree, loss, learning_rate=0.5).train(features, targets, 7)
    _assert_same_trees(machine, memory)


@pytest.mark.parametrize("growth", ["levelwise", "leafwise"])
@pytest.mark.long
def test_histograms_summed_on_a_worker_or_here_give_the_same_trees(client, monkeypatch, growth):
    """Small histograms come to the client and are summed there; larger ones are summed on a worker (forced
    here with no bytes allowed to the client): the same trees bit for bit, the in-memory ones."""
    from bob_boost.dask import _chunks
    features, labels = _classes(seed=2)
    tree = bob_boost.TreeTrainer(max_depth=None if growth == "leafwise" else 4, max_leaves=9, min_samples_leaf=10,
                                 growth=growth)
    loss = bob_boost.SoftmaxLoss(3)

    def trained():
        return DaskBoosting(loss, client=client, weak_learner="tree", tree=tree, learning_rate=0.3).train(
            da.from_array(features, chunks=((400, 350, 450), (5,))), da.from_array(labels, chunks=((400, 350, 450),)),
            4)
    here = trained()
    monkeypatch.setattr(_chunks, "GATHERED_BYTES", 0)
    on_a_worker = trained()
    memory = bob_boost.Boosting(tree, loss, learning_rate=0.3).train(features, labels, 4)
    _assert_same_trees(here, on_a_worker, rtol=0)
    _assert_same_trees(here, memory)


@pytest.mark.long
def test_sample_weights_are_rescaled_to_mean_one_as_in_memory(client):
    """``min_hessian_leaf`` and ``l2_regularization`` weigh the hessians: with weights of mean 40 they bind
    differently unless the cluster rescales the weights to mean 1 as the in-memory trainer does."""
    features, labels = _classes(seed=5)
    weights = np.random.default_rng(5).uniform(20.0, 60.0, size=labels.size)
    targets = np.where(labels > 0, 1.0, -1.0)
    tree = bob_boost.TreeTrainer(max_depth=4, min_samples_leaf=2, min_hessian_leaf=3.0, l2_regularization=5.0)
    loss = bob_boost.LogitLoss()
    chunks = ((500, 13, 687),)
    machine = DaskBoosting(loss, client=client, weak_learner="tree", tree=tree, learning_rate=0.5).train(
        da.from_array(features, chunks=chunks + ((5,),)), da.from_array(targets, chunks=chunks), 5,
        sample_weight=da.from_array(weights, chunks=chunks))
    memory = bob_boost.Boosting(tree, loss, learning_rate=0.5).train(features, targets, 5, sample_weight=weights)
    _assert_same_trees(machine, memory)
    with pytest.raises(ValueError, match="sample_weight: every weight is zero"):
        DaskBoosting(loss, client=client).train(da.from_array(features, chunks=chunks + ((5,),)), targets, 2,
                                                sample_weight=np.zeros(labels.size))


def test_squared_loss_regression_trees(client):
    features, _ = _classes(seed=2)
    target = np.sin(features[:, 0]) + features[:, 1]
    tree = bob_boost.TreeTrainer(max_depth=3)
    machine = DaskBoosting(bob_boost.SquaredLoss(), client=client, weak_learner="tree", tree=tree,
                           learning_rate=0.3).train(da.from_array(features, chunks=(600, 5)), target, 5,
                                                    baseline=float(target.mean()))
    memory = bob_boost.Boosting(tree, bob_boost.SquaredLoss(), learning_rate=0.3).train(
        features, target, 5, baseline=float(target.mean()))
    _assert_same_trees(machine, memory)


@pytest.mark.parametrize("loss, multi_output, max_depth", [
    pytest.param(bob_boost.SoftmaxLoss(3), "per_output", None, marks=pytest.mark.long),
    (bob_boost.SoftmaxLoss(3), "shared", 3),  # the suite's quick case
    pytest.param(bob_boost.LogitLoss(), "shared", None, marks=pytest.mark.long)])
def test_leafwise_trees_give_the_in_memory_trees(client, loss, multi_output, max_depth):
    features, labels = _classes(seed=4)
    targets = labels if isinstance(loss, bob_boost.SoftmaxLoss) else np.where(labels > 0, 1.0, -1.0)
    tree = bob_boost.TreeTrainer(max_depth=max_depth, max_leaves=7, min_samples_leaf=10, growth="leafwise",
                                 multi_output=multi_output)
    machine = DaskBoosting(loss, client=client, weak_learner="tree", tree=tree, learning_rate=0.3).train(
        da.from_array(features, chunks=(450, 5)), da.from_array(targets, chunks=450), 5)
    memory = bob_boost.Boosting(tree, loss, learning_rate=0.3).train(features, targets, 5)
    _assert_same_trees(machine, memory)
    leaves = [np.count_nonzero(w.features < 0) for w in memory.weak_machines]
    assert max(leaves) == 7 * len(memory.weak_machines[0].roots)  # the leaf limit was reached
    if max_depth is not None:
        assert max(w.depth for w in machine.weak_machines) <= max_depth


@pytest.mark.parametrize("growth", ["levelwise", "leafwise"])
@pytest.mark.long
def test_missing_values_get_the_in_memory_trees(client, monkeypatch, growth):
    from bob_boost.dask import _chunks
    monkeypatch.setattr(_chunks, "CHECKPOINT_ROUNDS", 2)  # scores rebuilt from the codes: NaN routed there too
    features, labels = _classes(seed=5)
    rng = np.random.default_rng(5)
    features[rng.random(features.shape) < 0.15] = np.nan
    features[:, 1] = np.where(labels == 2, np.nan, features[:, 1])  # NaN that tells a class
    tree = bob_boost.TreeTrainer(max_depth=3, max_leaves=6, min_samples_leaf=10, missing="bin", growth=growth,
                                 multi_output="per_output")
    loss = bob_boost.SoftmaxLoss(3)
    machine = DaskBoosting(loss, client=client, weak_learner="tree", tree=tree, learning_rate=0.3).train(
        da.from_array(features, chunks=(450, 5)), da.from_array(labels, chunks=450), 5)
    memory = bob_boost.Boosting(tree, loss, learning_rate=0.3).train(features, labels, 5)
    _assert_same_trees(machine, memory)
    for ours, theirs in zip(machine.weak_machines, memory.weak_machines):
        assert ours.missing_left is not None and ours.missing_left.tolist() == theirs.missing_left.tolist()
    assert any(w.missing_left.any() for w in memory.weak_machines)  # some NaN went left
    np.testing.assert_allclose(machine.decision_scores(features), memory.decision_scores(features), rtol=1e-9)


def test_the_estimators_route_missing_values_as_in_memory(client):
    from bob_boost.dask import DaskBoostingClassifier, DaskBoostingRegressor
    from bob_boost.sklearn import BoostingClassifier
    features, labels = _classes(seed=7)
    features[np.random.default_rng(7).random(features.shape) < 0.2] = np.nan
    options = dict(weak_learner="tree", max_depth=3, learning_rate=0.3, n_estimators=3, missing="bin",
                   loss="softmax", multi_output="per_output")
    model = DaskBoostingClassifier(client=client, **options).fit(da.from_array(features, chunks=(500, 5)),
                                                                 da.from_array(labels, chunks=500))
    memory = BoostingClassifier(early_stopping=False, **options).fit(features, labels)
    _assert_same_trees(model.machine_, memory.machine_)
    assert np.array_equal(model.to_local().predict(features), memory.predict(features))
    with pytest.raises(ValueError, match="missing: must be None or 'bin'"):
        DaskBoostingRegressor(client=client, weak_learner="lut", missing="zero").fit(
            da.from_array(np.nan_to_num(features), chunks=(500, 5)), features[:, 0] * 0)
    with pytest.raises(ValueError, match="missing: must be None or 'bin'"):
        DaskBoostingClassifier(client=client, weak_learner="tree", missing="zero").fit(
            da.from_array(features, chunks=(500, 5)), da.from_array(labels, chunks=500))


def test_infinite_features_are_an_error_even_with_missing_values(client):
    features, labels = _classes(seed=6)
    features[3, 2] = np.inf
    tree = bob_boost.TreeTrainer(missing="bin")
    with pytest.raises(ValueError, match="infinite"):
        DaskBoosting(bob_boost.SoftmaxLoss(3), client=client, weak_learner="tree", tree=tree).train(
            da.from_array(features, chunks=(600, 5)), da.from_array(labels, chunks=600), 2)


@pytest.mark.parametrize("options, message", [
    ({"learning_rate": 0.0}, "learning_rate"),
])
def test_tree_options_that_cannot_be_distributed(options, message):
    with pytest.raises(ValueError, match=message):
        DaskBoosting(bob_boost.LogitLoss(), weak_learner="tree", **options)


def test_a_tree_option_of_another_type_is_a_type_error():
    with pytest.raises(TypeError, match="tree: expected a TreeTrainer"):
        DaskBoosting(bob_boost.LogitLoss(), weak_learner="tree", tree=bob_boost.StumpTrainer())


def test_tree_options_with_another_weak_learner_are_errors_not_ignored():
    with pytest.raises(ValueError, match="tree: an option of weak_learner='tree' only, got weak_learner='lut'"):
        DaskBoosting(bob_boost.LogitLoss(), weak_learner="lut", tree=bob_boost.TreeTrainer())


def test_newton_leaves_for_a_loss_without_hessian_are_refused():
    tree = bob_boost.TreeTrainer(newton_leaves=True)
    with pytest.raises(ValueError, match="newton_leaves: TangentialLoss defines no loss_hessian"):
        DaskBoosting(bob_boost.TangentialLoss(), weak_learner="tree", tree=tree)


@pytest.mark.parametrize("loss, newton_leaves", [(bob_boost.TangentialLoss(), None), (bob_boost.LogitLoss(), False)])
@pytest.mark.long
def test_gradient_only_trees_get_the_in_memory_trees_and_line_searched_weights(client, loss, newton_leaves):
    features, labels = _classes(seed=3)
    targets = np.where(labels > 0, 1.0, -1.0)
    tree = bob_boost.TreeTrainer(max_depth=3, min_samples_leaf=10, newton_leaves=newton_leaves)
    machine = DaskBoosting(loss, client=client, weak_learner="tree", tree=tree, learning_rate=0.5).train(
        da.from_array(features, chunks=(500, 5)), da.from_array(targets, chunks=500), 4)
    memory = bob_boost.Boosting(tree, loss, learning_rate=0.5).train(features, targets, 4)
    assert len(machine) == len(memory) == 4
    # the weights are line searches (L-BFGS, or Newton on the cluster for the logit loss) of summed losses
    np.testing.assert_allclose(machine.weights, memory.weights, rtol=1e-6)
    assert np.all(machine.weights > 0) and not np.allclose(machine.weights, 0.5)
    for ours, theirs in zip(machine.weak_machines, memory.weak_machines):
        assert ours.features.tolist() == theirs.features.tolist()
        assert ours.thresholds.tolist() == theirs.thresholds.tolist()
        np.testing.assert_allclose(ours.values, theirs.values, rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("shape", [dict(max_depth=3, max_leaves=6), dict(max_depth=None, max_leaves=6,
                                                                          growth="leafwise")])
@pytest.mark.long
def test_the_estimators_train_gradient_trees_as_in_memory(client, shape):
    from bob_boost.dask import DaskBoostingClassifier, DaskBoostingRegressor
    from bob_boost.sklearn import BoostingClassifier, BoostingRegressor
    features, labels = _classes(seed=3)
    names = np.array(["a", "b", "c"])[labels]
    options = dict(weak_learner="tree", learning_rate=0.3, n_estimators=4, **shape)
    model = DaskBoostingClassifier(loss="softmax", multi_output="per_output", client=client, **options).fit(
        da.from_array(features, chunks=(400, 5)), da.from_array(names, chunks=400))
    memory = BoostingClassifier(loss="softmax", multi_output="per_output", early_stopping=False, **options).fit(
        features, names)
    _assert_same_trees(model.machine_, memory.machine_)
    assert np.array_equal(model.to_local().predict(features), memory.predict(features))
    target = np.sin(features[:, 0]) + features[:, 1]
    regressor = DaskBoostingRegressor(client=client, **options).fit(da.from_array(features, chunks=(400, 5)), target)
    memory_regressor = BoostingRegressor(early_stopping=False, **options).fit(features, target)
    _assert_same_trees(regressor.machine_, memory_regressor.machine_)
    np.testing.assert_allclose(regressor.to_local().predict(features), memory_regressor.predict(features),
                               rtol=1e-9)


def test_quantised_gradients_are_refused_on_the_cluster(client):
    """Distributed trees sum float histograms: a trainer asking for quantised ones is an error, not ignored."""
    with pytest.raises(ValueError, match="tree: quantized_gradients is for training in memory"):
        DaskBoosting(bob_boost.SoftmaxLoss(), client=client, weak_learner="tree",
                     tree=bob_boost.TreeTrainer(multi_output="per_output", quantized_gradients=4))
