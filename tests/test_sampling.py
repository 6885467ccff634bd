"""Stochastic boosting (:class:`bob_boost.Sampling`): the draws, their exactness and determinism, and the models
they give in memory, on row partitions and on Dask."""
from __future__ import annotations

import numpy as np
import pytest

import bob_boost
from bob_boost.boosting import sampling
from bob_boost.boosting.partitions import LocalRows
from bob_boost.trainers.partitioned import PartitionedBoosting


def _binary(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    features = np.round(rng.normal(size=(n, 6)), 2)
    margin = features[:, 0] + 0.6 * features[:, 1] - 0.4 * features[:, 2] + 0.5 * rng.normal(size=n)
    return features, np.where(margin > 0.6, 1.0, -1.0)  # unbalanced: about a third positive


def _weak(name, **options):
    if name == "stump":
        return bob_boost.StumpTrainer(max_bins=64, **options)
    return bob_boost.TreeTrainer(max_bins=64, max_depth=None, max_leaves=8, min_samples_leaf=10, **options)


def _same_machines(a, b, rtol=1e-12):
    assert len(a) == len(b) > 0
    assert [repr(w) for w in a.weak_machines] == [repr(w) for w in b.weak_machines]
    np.testing.assert_allclose(a.weights, b.weights, rtol=rtol)


@pytest.mark.parametrize("arguments, message", [
    ({"subsample": 0.0}, "subsample"), ({"subsample": 1.5}, "subsample"), ({"subsample_freq": 0}, "subsample_freq"),
    ({"method": "bagging"}, "method"), ({"colsample_bytree": 0}, "colsample_bytree"),
    ({"method": "goss", "top_rate": 0.6, "other_rate": 0.5}, "top_rate, other_rate"),
    ({"method": "goss", "top_rate": 1.0, "other_rate": 0.1}, "top_rate"), ({"other_rate": -0.1}, "other_rate"),
    ({"random_state": -1}, "random_state")])
def test_bad_sampling_arguments_are_named(arguments, message):
    with pytest.raises(ValueError, match=message):
        bob_boost.Sampling(**arguments)


def test_a_seed_must_be_an_int_and_sampling_a_sampling():
    with pytest.raises(TypeError, match="random_state"):
        bob_boost.Sampling(random_state=np.random.default_rng(0))
    with pytest.raises(TypeError, match="sampling"):
        bob_boost.Boosting(_weak("stump"), bob_boost.LogitLoss(), sampling={"subsample": 0.5})


def test_column_sampling_needs_a_weak_trainer_that_reads_columns():
    with pytest.raises(ValueError, match="colsample_bytree"):
        bob_boost.Boosting(bob_boost.LUTTrainer(4), bob_boost.LogitLoss(),
                           sampling=bob_boost.Sampling(colsample_bytree=0.5))
    with pytest.raises(ValueError, match="colsample_bytree"):
        PartitionedBoosting(bob_boost.LogitLoss(), weak_learner="lut",
                            sampling=bob_boost.Sampling(colsample_bytree=0.5))


def test_a_rows_number_depends_on_its_global_index_only():
    whole = sampling.uniforms(7, 3, 0, 1000)
    assert np.array_equal(whole[250:600], sampling.uniforms(7, 3, 250, 350))
    assert not np.array_equal(whole, sampling.uniforms(7, 4, 0, 1000))
    assert not np.array_equal(whole, sampling.uniforms(8, 3, 0, 1000))
    assert 0.0 <= whole.min() and whole.max() < 1.0
    # uniform on [0, 1): mean 1/2, variance 1/12, within 5 standard errors
    many = sampling.uniforms(1, 0, 0, 200_000)
    assert abs(many.mean() - 0.5) < 5 * np.sqrt(1 / 12 / many.size)
    assert abs(np.mean(many < 0.3) - 0.3) < 5 * np.sqrt(0.21 / many.size)


def test_the_two_pass_selection_is_numpys_order_statistic_on_any_split_of_the_keys():
    from bob_boost.engine import hashing
    rng = np.random.default_rng(1)
    keys = sampling.float_keys(np.abs(rng.standard_cauchy(5000)))
    keys[:40] = keys[40]  # ties
    groups = rng.integers(0, 3, size=keys.size)
    groups[::97] = -1  # rows in no group
    ranks = np.array([1, 700, int(np.sum(groups == 2))])
    blocks = np.split(np.arange(keys.size), [1000, 1001, 3500])
    counts = sum(hashing.bucket_counts(keys[b], groups[b], 3) for b in blocks)
    candidates = [hashing.bucket_keys(keys[b], groups[b], hashing.last_buckets(counts, ranks)) for b in blocks]
    expected = [np.sort(keys[groups == g])[r - 1] for g, r in enumerate(ranks)]
    assert hashing.kth_keys(counts, candidates, ranks).tolist() == expected
    assert hashing.kth_keys(counts, candidates, np.array([0, 1, 1]))[0] == 0  # no row of the group taken


def test_stratified_rows_keep_every_class_share_exactly():
    features, labels = _binary()
    strata = (labels > 0).astype(np.int64)
    chosen = sampling.Sampling(subsample=0.3, method="stratified", random_state=5)
    factors = sampling.in_memory_factors(chosen, 0, labels.size, strata, None, None)
    for c in (0, 1):
        assert factors[strata == c].sum() == max(1, round(0.3 * np.sum(strata == c)))
    assert set(np.unique(factors)) == {0.0, 1.0}


def test_rows_are_drawn_again_every_subsample_freq_rounds():
    chosen = sampling.Sampling(subsample=0.5, subsample_freq=3, random_state=2)
    draws = [sampling.in_memory_factors(chosen, place, 500, None, None, None) for place in range(4)]
    assert np.array_equal(draws[0], draws[1]) and np.array_equal(draws[0], draws[2])
    assert not np.array_equal(draws[2], draws[3])
    assert abs(draws[0].mean() - 0.5) < 0.1


def test_goss_keeps_the_top_share_and_its_histogram_sums_are_unbiased():
    rng = np.random.default_rng(3)
    gradient = rng.normal(size=(400, 1)) * rng.exponential(size=(400, 1))
    codes = rng.integers(0, 5, size=400)
    top_rate, other_rate = 0.2, 0.1
    magnitude = np.abs(gradient[:, 0])
    top = magnitude >= np.sort(magnitude)[-80]
    full = np.bincount(codes, weights=gradient[:, 0], minlength=5)
    estimates = []
    for seed in range(3000):
        chosen = sampling.Sampling(method="goss", top_rate=top_rate, other_rate=other_rate, random_state=seed)
        factors = sampling.in_memory_factors(chosen, 0, 400, None, gradient, None)
        assert np.all(factors[top] == 1.0)
        assert set(np.unique(factors[~top])) <= {0.0, (1 - top_rate) / other_rate}
        estimates.append(np.bincount(codes, weights=gradient[:, 0] * factors, minlength=5))
    estimates = np.array(estimates)
    standard_error = estimates.std(axis=0) / np.sqrt(len(estimates))
    assert np.all(np.abs(estimates.mean(axis=0) - full) < 5 * standard_error)
    assert np.all(standard_error > 0)


@pytest.mark.parametrize("weak", ["stump", "tree"])
def test_full_sampling_is_no_sampling(weak):
    features, labels = _binary()
    plain = bob_boost.Boosting(_weak(weak), bob_boost.LogitLoss()).train(features, labels, 8)
    for method in ("uniform", "stratified"):
        full = bob_boost.Boosting(_weak(weak), bob_boost.LogitLoss(),
                                  sampling=bob_boost.Sampling(method=method, random_state=4)).train(features, labels, 8)
        _same_machines(full, plain, rtol=0)


@pytest.mark.parametrize("weak", ["stump", "tree"])
@pytest.mark.parametrize("method", ["uniform", "stratified", "goss"])
def test_sampled_models_are_the_same_in_memory_and_on_partitions(weak, method):
    features, labels = _binary()
    chosen = bob_boost.Sampling(subsample=0.5, method=method, colsample_bytree=0.5, random_state=11)
    memory = bob_boost.Boosting(_weak(weak), bob_boost.LogitLoss(), step_rule="newton", sampling=chosen).train(
        features, labels, 10)
    plain = bob_boost.Boosting(_weak(weak), bob_boost.LogitLoss(), step_rule="newton").train(features, labels, 10)
    assert [repr(w) for w in memory.weak_machines] != [repr(w) for w in plain.weak_machines]
    tree = _weak("tree") if weak == "tree" else None
    partitioned = PartitionedBoosting(bob_boost.LogitLoss(), 64, weak_learner=weak, tree=tree, sampling=chosen,
                                      step_rule="newton").train_on(LocalRows([600, 1, 899]), features, labels, 10)
    _same_machines(partitioned, memory, rtol=1e-10)


def test_column_samples_restrict_every_tree_and_stump_to_their_columns():
    features, labels = _binary()
    chosen = bob_boost.Sampling(colsample_bytree=0.34, random_state=9)
    for weak in ("stump", "tree"):
        machine = bob_boost.Boosting(_weak(weak), bob_boost.LogitLoss(), sampling=chosen).train(features, labels, 6)
        for place, weak_machine in enumerate(machine.weak_machines):
            used = weak_machine.features[weak_machine.features >= 0] if weak == "tree" else [weak_machine.index]
            assert set(np.asarray(used).tolist()) <= set(chosen.columns(place, 6).tolist())
            assert chosen.columns(place, 6).size == 2


def test_sampled_trees_do_not_depend_on_the_thread_count():
    features, labels = _binary(40_000)  # above twice PART_ROWS: a team shares out the large nodes
    chosen = bob_boost.Sampling(subsample=0.6, colsample_bytree=0.7, random_state=1)
    machines = [bob_boost.Boosting(_weak("tree", n_threads=threads), bob_boost.LogitLoss(), sampling=chosen).train(
        features, labels, 6) for threads in (1, 2, 4)]
    for other in machines[1:]:
        _same_machines(other, machines[0], rtol=0)


def test_a_continued_machine_draws_as_one_longer_run():
    features, labels = _binary()
    chosen = bob_boost.Sampling(subsample=0.5, subsample_freq=2, colsample_bytree=0.5, random_state=6)
    trainer = bob_boost.Boosting(_weak("tree"), bob_boost.LogitLoss(), sampling=chosen)
    once = trainer.train(features, labels, 8)
    twice = trainer.train(features, labels, 3)
    trainer.train(features, labels, 5, boosted_machine=twice)
    _same_machines(twice, once, rtol=0)


def test_stratified_sampling_refuses_continuous_targets_and_leaves_inputs_alone():
    rng = np.random.default_rng(0)
    features = rng.normal(size=(600, 3))
    targets = features[:, 0] + rng.normal(size=600)
    with pytest.raises(ValueError, match="stratified"):
        bob_boost.Boosting(_weak("tree"), bob_boost.SquaredLoss(),
                           sampling=bob_boost.Sampling(subsample=0.5, method="stratified")).train(features, targets, 2)
    weights = rng.uniform(0.5, 2.0, size=600)
    copies = features.copy(), targets.copy(), weights.copy()
    bob_boost.Boosting(_weak("tree"), bob_boost.SquaredLoss(), sampling=bob_boost.Sampling(
        method="goss", random_state=2)).train(features, targets, 3, sample_weight=weights)
    for given, copy in zip((features, targets, weights), copies):
        assert np.array_equal(given, copy)


@pytest.mark.long
def test_sampled_dask_trees_are_the_in_memory_trees(client):
    da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
    from bob_boost.dask import DaskBoosting
    features, labels = _binary()
    for method in ("uniform", "goss"):
        chosen = bob_boost.Sampling(subsample=0.5, method=method, colsample_bytree=0.5, random_state=12)
        memory = bob_boost.Boosting(_weak("tree"), bob_boost.LogitLoss(), sampling=chosen).train(features, labels, 6)
        machine = DaskBoosting(bob_boost.LogitLoss(), 64, client=client, weak_learner="tree", tree=_weak("tree"),
                               sampling=chosen).train(da.from_array(features, chunks=(500, 6)),
                                                      da.from_array(labels, chunks=500), 6)
        _same_machines(machine, memory, rtol=1e-10)


def _three_classes(n=900, seed=4):
    rng = np.random.default_rng(seed)
    features = np.round(rng.normal(size=(n, 4)), 2)
    labels = (features[:, 0] > 0).astype(np.int64) + (features[:, 1] + 0.3 * rng.normal(size=n) > 0.5)
    return features, labels


@pytest.mark.parametrize("method", ["uniform", "stratified", "goss"])
def test_sampled_badacost_trees_are_the_same_in_memory_and_on_partitions(method):
    from bob_boost.trainers.partitioned_classes import PartitionedMultiClassBoosting
    features, labels = _three_classes()
    chosen = bob_boost.Sampling(subsample=0.5, method=method, top_rate=0.3, other_rate=0.3, random_state=8)
    trainer = bob_boost.BAdaCostTrainer(1.0 - np.eye(3), bob_boost.CostSensitiveTreeTrainer(max_depth=3),
                                        number_of_rounds=6, sampling=chosen)
    memory = trainer.train(features, labels)
    plain = bob_boost.BAdaCostTrainer(1.0 - np.eye(3), bob_boost.CostSensitiveTreeTrainer(max_depth=3),
                                      number_of_rounds=6).train(features, labels)
    assert memory.weak_machines != plain.weak_machines
    partitioned = PartitionedMultiClassBoosting(trainer).train_on(LocalRows((250, 13, 637)), features, labels)
    assert partitioned.weak_machines == memory.weak_machines
    np.testing.assert_allclose(partitioned.weights, memory.weights, rtol=1e-12, atol=0)


def test_the_multiclass_trainers_sample_columns_by_feature_fraction_only():
    with pytest.raises(ValueError, match="feature_fraction"):
        bob_boost.SAMMETrainer(sampling=bob_boost.Sampling(colsample_bytree=0.5))
    with pytest.raises(TypeError, match="sampling"):
        bob_boost.SAMMETrainer(sampling=0.5)


def _cancer():
    datasets = pytest.importorskip("sklearn.datasets", reason="the estimators need scikit-learn")
    return datasets.load_breast_cancer(return_X_y=True)


@pytest.mark.parametrize("arguments, name", [({"subsample": 0.0}, "subsample"), ({"sampling": "bag"}, "sampling"),
                                             ({"colsample_bytree": 2.0}, "colsample_bytree"),
                                             ({"subsample_freq": 0}, "subsample_freq"),
                                             ({"sampling": "goss", "top_rate": 0.7, "other_rate": 0.7}, "top_rate")])
def test_the_estimators_name_a_bad_sampling_parameter(arguments, name):
    from bob_boost.sklearn import BAdaCostClassifier, BoostingClassifier
    X, y = _cancer()
    for estimator in (BoostingClassifier(n_estimators=2, **arguments),
                      BAdaCostClassifier(n_estimators=2, **{k: v for k, v in arguments.items()
                                                            if k != "colsample_bytree"})):
        if "colsample_bytree" in arguments and isinstance(estimator, BAdaCostClassifier):
            continue
        with pytest.raises(ValueError, match=name):
            estimator.fit(X, y)


def test_a_regressor_is_not_stratified_and_a_warm_start_draws_as_one_fit():
    from bob_boost.sklearn import BoostingClassifier, BoostingRegressor
    X, y = _cancer()
    with pytest.raises(ValueError, match="sampling: 'stratified'"):
        BoostingRegressor(sampling="stratified", subsample=0.5).fit(X, y.astype(float))
    options = dict(weak_learner="tree", subsample=0.5, subsample_freq=2, colsample_bytree=0.5, random_state=3)
    once = BoostingClassifier(n_estimators=12, **options).fit(X, y)
    warm = BoostingClassifier(n_estimators=5, warm_start=True, **options).fit(X, y)
    warm.set_params(n_estimators=12).fit(X, y)
    _same_machines(warm.machine_, once.machine_, rtol=0)
    plain = BoostingClassifier(n_estimators=12, weak_learner="tree").fit(X, y)
    assert [repr(w) for w in plain.machine_.weak_machines] != [repr(w) for w in once.machine_.weak_machines]


@pytest.mark.long
def test_the_dask_estimators_sample_the_rows_sampled_in_memory(client):
    da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
    from bob_boost.dask import DaskBAdaCostClassifier, DaskBoostingClassifier
    from bob_boost.sklearn import BAdaCostClassifier, BoostingClassifier
    X, y = _cancer()
    chunked = da.from_array(X, chunks=(200, 30))
    options = dict(n_estimators=8, max_bins=64, weak_learner="tree", subsample=0.5, colsample_bytree=0.5)
    memory = BoostingClassifier(**options).fit(X, y)
    remote = DaskBoostingClassifier(**options).fit(chunked, y)
    _same_machines(remote.machine_, memory.machine_, rtol=1e-10)
    options = dict(n_estimators=5, subsample=0.5, sampling="stratified")
    memory = BAdaCostClassifier(**options).fit(X, y)
    remote = DaskBAdaCostClassifier(**options).fit(chunked, y)
    assert remote.machine_.weak_machines == memory.machine_.weak_machines


def test_a_sampled_tree_grows_on_its_rows_alone():
    # min_samples_leaf counts the sampled rows: 30% of all rows on each side cannot be met by half of them
    features, labels = _binary(2000)
    tree = bob_boost.TreeTrainer(max_depth=1, max_leaves=None, min_samples_leaf=600)
    full = bob_boost.Boosting(tree, bob_boost.LogitLoss()).train(features, labels, 2)
    assert all(weak.features[0] >= 0 for weak in full.weak_machines)
    sampled = bob_boost.Boosting(tree, bob_boost.LogitLoss(), sampling=bob_boost.Sampling(subsample=0.5)).train(
        features, labels, 2)
    assert all(np.all(weak.features < 0) for weak in sampled.weak_machines)


def test_a_column_layout_gives_the_full_layouts_sums_of_its_columns():
    from bob_boost.engine.tree_histograms import build_histogram
    features, _ = _binary(3000)
    features[:2500, 3] = 0.0  # a sparse column
    binned = _weak("tree").prepare(features)
    coded, offsets = binned.coded, binned.offsets
    values = np.random.default_rng(0).normal(size=(3000, 2))
    order = np.arange(3000)
    columns = np.array([1, 3, 4])
    cells = int(offsets[-1])
    results = []
    for layout in (coded.row_layout(offsets), coded.column_layout(columns, offsets)):
        sums, counts = np.empty((cells, 2)), np.empty(cells, dtype=np.int64)
        build_histogram(layout, coded.mode_bins, offsets, values, order, 0, 3000, values.sum(axis=0), 3000, sums,
                        counts, np.empty(0))
        results.append(np.concatenate([np.column_stack([sums, counts])[offsets[f]:offsets[f + 1]] for f in columns]))
    assert np.array_equal(results[0], results[1])


@pytest.mark.parametrize("options", [{}, {"missing": "bin"}, {"quantized_gradients": 16},
                                     {"multi_output": "shared"}])
def test_a_sampled_trees_outputs_are_its_predictions_on_every_row(options):
    from bob_boost.boosting.protocol import RoundState
    features, labels = _binary(3000)
    if "missing" in options:
        features[::7, 1] = np.nan
    classes = (labels > 0).astype(int) + (features[:, 2] > 0.5)
    loss = bob_boost.SoftmaxLoss(3) if "multi_output" in options else bob_boost.LogitLoss()
    targets = loss.check_targets(classes if "multi_output" in options else labels)
    trainer = _weak("tree", **options)
    prepared = trainer.prepare(features)
    gradient, hessian = loss.gradient_and_hessian(targets, np.zeros(targets.shape))
    rows = np.flatnonzero(sampling.uniforms(0, 0, 0, 3000) < 0.4)
    factors = np.zeros(3000)
    factors[rows] = 1.0
    state = RoundState(features=features, scores=None, gradient=gradient * factors[:, None],
                       hessian=hessian * factors[:, None], rows=rows)
    proposal = trainer.propose(prepared, state)
    np.testing.assert_array_equal(proposal.outputs, proposal.machine.forward(features))


def test_the_command_line_samples_as_the_library_and_names_its_options(tmp_path, capsys):
    from bob_boost.cli import main
    features, labels = _binary(800)
    table = tmp_path / "data.csv"
    np.savetxt(table, np.column_stack([features, (labels > 0).astype(int)]), delimiter=",", comments="",
               header=",".join([f"f{i}" for i in range(6)] + ["label"]))
    options = ["-w", "tree", "--rounds", "4", "--subsample", "0.5", "--colsample-bytree", "0.5", "--seed", "3", "-q"]
    assert main(["train", str(table), "-o", str(tmp_path / "m.hdf5"), *options]) == 0
    machine = bob_boost.BoostedMachine.load(tmp_path / "m.hdf5")
    chosen = bob_boost.Sampling(subsample=0.5, colsample_bytree=0.5, random_state=3)
    expected = bob_boost.Boosting(bob_boost.TreeTrainer(), bob_boost.ExponentialLoss(), sampling=chosen).train(
        features, labels, 4)
    _same_machines(machine, expected, rtol=1e-12)
    assert main(["train", str(table), "-o", str(tmp_path / "g.hdf5"), "-w", "tree", "--sampling", "goss",
                 "--top-rate", "0.7", "--other-rate", "0.5", "-q"]) != 0
    assert "--top-rate, --other-rate: must sum to at most 1" in capsys.readouterr().err
    assert main(["train", str(table), "-o", str(tmp_path / "a.hdf5"), "--trainer", "adaboostdb", "--subsample",
                 "0.5", "-q"]) != 0
    assert "takes no subsampling" in capsys.readouterr().err


def test_a_nodes_columns_are_a_share_of_the_rounds_drawn_by_key_tree_and_node():
    from bob_boost.engine.split_scan import node_columns
    allowed = np.zeros(40, dtype=bool)
    allowed[::2] = True  # the round's 20 columns
    draws = []
    for tree, node in ((0, 0), (0, 1), (1, 0), (0, 0)):
        out = np.empty(40, dtype=bool)
        node_columns(allowed, np.uint64(12345), tree, node, 0.3, out)
        assert out.sum() == 6 and not np.any(out & ~allowed)
        draws.append(out)
    assert np.array_equal(draws[0], draws[3])
    assert not np.array_equal(draws[0], draws[1]) and not np.array_equal(draws[0], draws[2])
    out = np.empty(40, dtype=bool)
    node_columns(allowed, np.uint64(1), 0, 0, 0.001, out)
    assert out.sum() == 1


@pytest.mark.parametrize("multi_output", ["per_output", "shared"])
def test_node_sampled_trees_are_the_same_for_any_thread_count_and_on_partitions(multi_output):
    features, labels = _three_classes()
    chosen = bob_boost.Sampling(subsample=0.7, colsample_bytree=0.8, colsample_bynode=0.5, random_state=3)
    machines = [bob_boost.Boosting(_weak("tree", multi_output=multi_output, n_threads=n), bob_boost.SoftmaxLoss(3),
                                   sampling=chosen).train(features, labels, 6) for n in (1, 2)]
    assert machines[0].weak_machines == machines[1].weak_machines
    partitioned = PartitionedBoosting(bob_boost.SoftmaxLoss(3), 64, weak_learner="tree",
                                      tree=_weak("tree", multi_output=multi_output), sampling=chosen).train_on(
        LocalRows([300, 1, 599]), features, labels, 6)
    for ours, theirs in zip(partitioned.weak_machines, machines[0].weak_machines):
        assert ours.features.tolist() == theirs.features.tolist()
        assert ours.thresholds.tolist() == theirs.thresholds.tolist()
        np.testing.assert_allclose(ours.values, theirs.values, rtol=1e-10, atol=1e-12)
    by_tree = bob_boost.Sampling(subsample=0.7, colsample_bytree=0.8, random_state=3)
    by_tree = bob_boost.Boosting(_weak("tree", multi_output=multi_output), bob_boost.SoftmaxLoss(3),
                                 sampling=by_tree).train(features, labels, 6)
    assert by_tree.weak_machines != machines[0].weak_machines


def test_node_sampling_needs_gradient_trees():
    for weak in (bob_boost.StumpTrainer(), bob_boost.LUTTrainer(4)):
        with pytest.raises(ValueError, match="colsample_bynode"):
            bob_boost.Boosting(weak, bob_boost.LogitLoss(), sampling=bob_boost.Sampling(colsample_bynode=0.5))
    with pytest.raises(ValueError, match="colsample_bynode"):
        PartitionedBoosting(bob_boost.LogitLoss(), sampling=bob_boost.Sampling(colsample_bynode=0.5))
    with pytest.raises(ValueError, match="feature_fraction"):
        bob_boost.SAMMETrainer(sampling=bob_boost.Sampling(colsample_bynode=0.5))
    with pytest.raises(ValueError, match="colsample_bynode"):
        bob_boost.Sampling(colsample_bynode=0)
