"""Multi-class weak machines and their cost-sensitive weak trainers."""
import h5py
import numpy as np
import pytest

from bob_boost import BoostedMachine, ModelFormatError
from bob_boost.costs import margin_cost_matrix
from bob_boost.binning import BinnedFeatures
from bob_boost.weak_trainers.multiclass import CostSensitiveTreeTrainer, MultiClassLUTTrainer, MultiClassStumpTrainer
from bob_boost.weak.multiclass import MultiClassLUTMachine, MultiClassStumpMachine, MultiClassTreeMachine

ZERO_ONE = 1.0 - np.eye(3)


def axis_parallel_data(n, seed):
    """Three classes cut by x2 < 0.3 (class 0), then x4 >= 0.6 (class 1, else 2)."""
    features = np.random.default_rng(seed).uniform(0, 1, (n, 5))
    labels = np.where(features[:, 2] < 0.3, 0, np.where(features[:, 4] >= 0.6, 1, 2))
    return features, labels


def random_loss_matrix(k, seed):
    costs = np.random.default_rng(seed).uniform(0.1, 2.0, (k, k))
    np.fill_diagonal(costs, 0)
    return np.exp(margin_cost_matrix(costs))


@pytest.mark.parametrize("quantized", [True, False])
def test_tree_recovers_an_axis_parallel_partition(quantized):
    features, labels = axis_parallel_data(3000, 0)
    tree = CostSensitiveTreeTrainer(max_depth=2, quantized=quantized).train(
        features, labels, np.full(labels.size, 1 / labels.size), ZERO_ONE)
    assert tree.depth == 2
    assert tree.features[0] == 2 and tree.thresholds[0] == pytest.approx(0.3, abs=0.01)
    right = tree.right_children[0]
    assert tree.features[right] == 4 and tree.thresholds[right] == pytest.approx(0.6, abs=0.01)
    test_features, test_labels = axis_parallel_data(2000, 1)
    assert np.mean(tree.predict_labels(test_features) == test_labels) > 0.99
    training_accuracy = np.mean(tree.predict_labels(features) == labels)
    # quantisation may misplace the cut by up to half a bin (1/510 of the range)
    assert training_accuracy > 0.995 if quantized else training_accuracy == 1.0


@pytest.mark.parametrize("dtype", [np.uint8, np.float64])
def test_float_and_quantised_paths_agree_on_integer_data(dtype):
    rng = np.random.default_rng(5)
    features = rng.integers(0, 256, size=(600, 6)).astype(dtype)
    features[:, 3] = 2 * rng.integers(0, 40, size=600)  # a sparse column: most values absent
    labels = ((features[:, 0] > 100).astype(int) + (features[:, 3] > 30) + (rng.uniform(size=600) < 0.1)) % 4
    weights = rng.uniform(0.1, 1.0, 600)
    loss_matrix = random_loss_matrix(4, 2)
    quantised = CostSensitiveTreeTrainer(3, quantized=True).train(features, labels, weights, loss_matrix)
    exact = CostSensitiveTreeTrainer(3, quantized=False).train(features, labels, weights, loss_matrix)
    assert quantised.depth == 3
    assert quantised == exact


def test_quantisation_uses_256_bins_and_raw_unit_thresholds():
    rng = np.random.default_rng(8)
    features = rng.normal(10.0, 5.0, size=(2000, 2))
    coded = BinnedFeatures.quantize(features)
    assert coded.number_of_bins == 512 and coded.codes.min() == 0 and coded.codes.max() == 511
    step = np.ptp(features[:, 0]) / 255
    expected = np.round((features[:, 0] - features[:, 0].min()) / step)
    np.testing.assert_array_equal(coded.codes[:, 0], expected)
    labels = (features[:, 1] > 12.34).astype(int)
    tree = CostSensitiveTreeTrainer(1).train(features, labels, np.ones(2000), 1 - np.eye(2))
    # the threshold is in raw units, within one quantisation step of the true cut
    assert tree.features[0] == 1 and abs(tree.thresholds[0] - 12.34) < np.ptp(features[:, 1]) / 255


def brute_force_root_split(features, labels, weights, loss_matrix):
    """Best (score, feature, threshold) of the cost-weighted Gini criterion, by enumeration."""
    factors = [sum(loss_matrix[j, k] - loss_matrix[j, j] for k in range(len(loss_matrix)))
               for j in range(len(loss_matrix))]

    def term(mask):
        sums = np.array([np.sum(weights[mask & (labels == j)]) * factors[j] for j in range(len(factors))])
        return (sums ** 2).sum() / sums.sum() if sums.sum() > 0 else 0.0

    best = (-np.inf, None, None)
    for feature in range(features.shape[1]):
        values = np.unique(features[:, feature])
        for low, high in zip(values[:-1], values[1:]):
            threshold = 0.5 * (low + high)
            above = features[:, feature] >= threshold
            score = term(above) + term(~above)
            if score > best[0] + 1e-12:
                best = (score, feature, threshold)
    return best


def test_root_split_maximises_the_cost_weighted_gini_criterion():
    rng = np.random.default_rng(11)
    features = np.round(rng.normal(size=(80, 3)), 1)
    labels = rng.integers(0, 3, 80)
    labels[features[:, 1] > 0.5] = 2
    weights = rng.uniform(0.1, 1, 80)
    loss_matrix = np.array([[1.0, 5.0, 1.5], [1.2, 1.0, 1.1], [3.0, 1.4, 1.0]])
    _, feature, threshold = brute_force_root_split(features, labels, weights, loss_matrix)
    tree = CostSensitiveTreeTrainer(1, quantized=False).train(features, labels, weights, loss_matrix)
    assert (tree.features[0], tree.thresholds[0]) == (feature, pytest.approx(threshold))


def test_every_node_is_labelled_with_its_cheapest_class():
    rng = np.random.default_rng(12)
    features = rng.normal(size=(400, 4))
    labels = rng.integers(0, 3, 400)
    weights = rng.uniform(0.1, 1, 400)
    loss_matrix = random_loss_matrix(3, 7)
    tree = CostSensitiveTreeTrainer(3).train(features, labels, weights, loss_matrix)
    # route each sample by hand and collect the samples of every node
    members = {0: np.arange(400)}
    for node in range(tree.number_of_nodes):
        if tree.features[node] >= 0:
            rows = members[node]
            above = features[rows, tree.features[node]] >= tree.thresholds[node]
            members[tree.left_children[node]] = rows[~above]
            members[tree.right_children[node]] = rows[above]
    for node, rows in members.items():
        costs = [sum(weights[n] * loss_matrix[labels[n], k] for n in rows) for k in range(3)]
        assert tree.labels[node] == int(np.argmin(costs))


def test_costs_move_the_leaf_labels():
    features = np.zeros((10, 1))
    labels = np.array([0] * 6 + [1] * 4)
    cheap = CostSensitiveTreeTrainer(1).train(features, labels, np.ones(10), 1 - np.eye(2))
    assert cheap.depth == 0 and cheap.labels[0] == 0
    expensive_misses = np.array([[0.0, 1.0], [2.0, 0.0]])
    assert CostSensitiveTreeTrainer(1).train(features, labels, np.ones(10), expensive_misses).labels[0] == 1


def test_feature_subset_is_respected():
    features, labels = axis_parallel_data(500, 3)
    tree = CostSensitiveTreeTrainer(3).train(features, labels, np.ones(500), ZERO_ONE, feature_subset=[0, 4])
    assert set(tree.feature_indices().tolist()) <= {0, 4}
    stump = MultiClassStumpTrainer().train(features, labels, np.ones(500), ZERO_ONE, feature_subset=[1])
    assert stump.index == 1


def test_stump_is_the_depth_one_tree():
    features, labels = axis_parallel_data(800, 4)
    weights = np.random.default_rng(0).uniform(0.5, 1, 800)
    tree = CostSensitiveTreeTrainer(1).train(features, labels, weights, ZERO_ONE)
    stump = MultiClassStumpTrainer().train(features, labels, weights, ZERO_ONE)
    assert (stump.index, stump.threshold) == (tree.features[0], tree.thresholds[0])
    assert stump.labels.tolist() == [tree.labels[1], tree.labels[2]]
    np.testing.assert_array_equal(stump.predict_labels(features), tree.predict_labels(features))
    constant = MultiClassStumpTrainer().train(np.zeros((5, 2)), [1, 1, 1, 0, 2], np.ones(5), ZERO_ONE)
    np.testing.assert_array_equal(constant.predict_labels(np.zeros((3, 2))), [1, 1, 1])


def test_lut_trainer_finds_the_cheapest_lut():
    rng = np.random.default_rng(21)
    features = rng.integers(0, 5, size=(300, 4))
    labels = np.where(rng.uniform(size=300) < 0.8, features[:, 2] % 3, rng.integers(0, 3, 300))
    features[features[:, 1] == 4, 1] = 3  # value 4 never occurs in column 1
    weights = rng.uniform(0.1, 1, 300)
    loss_matrix = random_loss_matrix(3, 9)
    machine = MultiClassLUTTrainer(5).train(features, labels, weights, loss_matrix)
    totals = []
    for feature in range(4):
        total = 0.0
        for value in range(5):
            rows = features[:, feature] == value
            total += min(sum(weights[rows & (labels == j)].sum() * loss_matrix[j, k] for j in range(3))
                         for k in range(3))
        totals.append(total)
    assert machine.index == int(np.argmin(totals)) == 2
    np.testing.assert_array_equal(machine.predict_labels(features), features[:, 2] % 3)
    only_one = MultiClassLUTTrainer(5).train(features, labels, weights, loss_matrix, feature_subset=[1])
    overall = [sum(weights[labels == j].sum() * loss_matrix[j, k] for j in range(3)) for k in range(3)]
    assert only_one.labels[4] == int(np.argmin(overall))


def test_machines_output_margin_vectors():
    tree = MultiClassTreeMachine([0, -1, -1], [0.5, 0, 0], [1, -1, -1], [2, -1, -1], [0, 1, 3], 4)
    output = tree(np.array([[0.2], [0.5], [0.9]]))
    np.testing.assert_allclose(output, [[-1 / 3, 1, -1 / 3, -1 / 3], [-1 / 3, -1 / 3, -1 / 3, 1],
                                        [-1 / 3, -1 / 3, -1 / 3, 1]])
    assert tree.number_of_outputs == 4
    lut = MultiClassLUTMachine([2, 0, 1], 1, 3)
    np.testing.assert_array_equal(lut.predict_labels([[9, 0], [9, 2]]), [2, 1])
    with pytest.raises(ValueError, match="features"):
        lut.predict_labels([[0, 3]])


@pytest.mark.parametrize("args, message", [
    (([0, -1, -1], [0.5, 0, 0], [0, -1, -1], [2, -1, -1], [0, 1, 1], 2), "left_children"),
    (([0, -1, -1], [0.5, 0, 0], [1, -1, -1], [3, -1, -1], [0, 1, 1], 2), "right_children"),
    (([0, -1, -1], [0.5, 0, 0], [1, -1, -1], [2, -1, -1], [0, 1, 2], 2), "labels"),
    (([0, -1, -1], [np.nan, 0, 0], [1, -1, -1], [2, -1, -1], [0, 1, 1], 2), "thresholds"),
    (([-1, -1, -1], [0, 0, 0], [1, -1, -1], [2, -1, -1], [0, 1, 1], 2), "leaves"),
    (([0, -1], [0.5, 0], [1, -1], [1, -1], [0, 1], 2), "two parents"),
    (([0], [0.5, 0], [-1], [-1], [0], 2), "thresholds"),
    (([-1], [0.0], [-1], [-1], [0], 1), "number_of_classes"),
])
def test_tree_machine_rejects_inconsistent_arrays(args, message):
    with pytest.raises((ValueError, TypeError), match=message):
        MultiClassTreeMachine(*args)


def test_stump_and_lut_machines_reject_bad_parameters():
    with pytest.raises(ValueError, match="labels"):
        MultiClassStumpMachine(0.5, 0, [0, 1, 2], 3)
    with pytest.raises(ValueError, match="threshold"):
        MultiClassStumpMachine(np.inf, 0, [0, 1], 3)
    with pytest.raises(ValueError, match="index"):
        MultiClassLUTMachine([0, 1], -1, 2)
    with pytest.raises(ValueError, match="labels"):
        MultiClassLUTMachine([0, 5], 0, 2)


def trained_machines():
    features, labels = axis_parallel_data(300, 6)
    weights = np.ones(300)
    return [CostSensitiveTreeTrainer(3).train(features, labels, weights, ZERO_ONE),
            MultiClassStumpTrainer().train(features, labels, weights, ZERO_ONE),
            MultiClassLUTTrainer(10).train((features * 10).astype(int), labels, weights, ZERO_ONE)]


@pytest.mark.parametrize("index", [0, 1, 2])
def test_hdf5_round_trip_of_each_machine(tmp_path, index):
    weak = trained_machines()[index]
    features = (axis_parallel_data(50, 9)[0] * 10).astype(int) if index == 2 else axis_parallel_data(50, 9)[0]
    strong = BoostedMachine(cost_matrix=ZERO_ONE, number_of_features=5)
    strong.add_weak_machine(weak, 0.7)
    path = tmp_path / "machine.hdf5"
    strong.save(path)
    loaded = BoostedMachine.load(path)
    assert loaded.weak_machines == [weak]
    np.testing.assert_array_equal(loaded.predict(features), strong.predict(features))
    np.testing.assert_array_equal(loaded.decision_scores(features), strong.decision_scores(features))


@pytest.mark.parametrize("dataset, value, message", [
    ("LeftChildren", lambda a: a[::-1], "LeftChildren|left_children"),
    ("Labels", lambda a: a + 5, "labels"),
    ("Thresholds", lambda a: a[:1], "thresholds"),
    ("NumberOfClasses", lambda a: np.array([1]), "number_of_classes"),
    ("Features", None, "missing dataset 'Features'"),
])
def test_corrupt_tree_files_raise_model_format_errors(tmp_path, dataset, value, message):
    tree = trained_machines()[0]
    strong = BoostedMachine()
    strong.add_weak_machine(tree, 1.0)
    path = tmp_path / "tree.hdf5"
    strong.save(path)
    with h5py.File(path, "a") as h5:
        group = h5["WeakMachine_0"]
        original = group[dataset][()]
        del group[dataset]
        if value is not None:
            group.create_dataset(dataset, data=value(original))
    with pytest.raises(ModelFormatError, match=message):
        BoostedMachine.load(path)


def test_corrupt_stump_and_lut_files_raise_model_format_errors(tmp_path):
    for weak, dataset in zip(trained_machines()[1:], ["Labels", "Index"]):
        strong = BoostedMachine()
        strong.add_weak_machine(weak, 1.0)
        path = tmp_path / f"{weak.machine_type}.hdf5"
        strong.save(path)
        with h5py.File(path, "a") as h5:
            del h5["WeakMachine_0"][dataset]
            h5["WeakMachine_0"].create_dataset(dataset, data=np.array([-3]))
        with pytest.raises(ModelFormatError, match="WeakMachine_0.*(labels|index)"):
            BoostedMachine.load(path)


@pytest.mark.parametrize("change, message", [
    (dict(weights=-np.ones(20)), "weights"),
    (dict(weights=np.ones(19)), "weights"),
    (dict(labels=np.full(20, 3)), "labels.*out of range"),
    (dict(labels=np.zeros(19, int)), "labels.*20"),
    (dict(loss_matrix=np.ones((3, 2))), "loss_matrix"),
    (dict(loss_matrix=-ZERO_ONE), "loss_matrix"),
    (dict(feature_subset=[7]), "feature_subset"),
    (dict(feature_subset=[0.5]), "feature_subset"),
])
def test_weak_trainers_reject_bad_input(change, message):
    arguments = dict(features=np.arange(40.0).reshape(20, 2), labels=np.arange(20) % 3, weights=np.ones(20),
                     loss_matrix=ZERO_ONE)
    arguments.update(change)
    for trainer in (CostSensitiveTreeTrainer(), MultiClassStumpTrainer(), MultiClassLUTTrainer(40)):
        with pytest.raises((ValueError, TypeError), match=message):
            trainer.train(**arguments)


def test_trainer_arguments_and_prepared_features_are_checked():
    with pytest.raises(ValueError, match="max_depth"):
        CostSensitiveTreeTrainer(max_depth=0)
    with pytest.raises(TypeError, match="quantized"):
        CostSensitiveTreeTrainer(quantized="yes")
    with pytest.raises(ValueError, match="maximum_feature_value"):
        MultiClassLUTTrainer(1)
    prepared = CostSensitiveTreeTrainer(quantized=True).prepare(np.ones((4, 2)))
    with pytest.raises(ValueError, match="quantized"):
        CostSensitiveTreeTrainer(quantized=False).train(prepared, [0, 1, 0, 1], np.ones(4), 1 - np.eye(2))
    with pytest.raises(ValueError, match="features"):
        MultiClassLUTTrainer(4).prepare([[0, 4]])
    with pytest.raises(ValueError, match="features"):
        CostSensitiveTreeTrainer().prepare([[0.0, np.nan]])


def test_training_does_not_modify_inputs_and_is_deterministic():
    features, labels = axis_parallel_data(400, 13)
    weights = np.random.default_rng(1).uniform(size=400)
    copies = [features.copy(), labels.copy(), weights.copy()]
    first = CostSensitiveTreeTrainer(4).train(features, labels, weights, ZERO_ONE)
    second = CostSensitiveTreeTrainer(4).train(features, labels, weights, ZERO_ONE)
    assert first == second
    for original, copy in zip((features, labels, weights), copies):
        np.testing.assert_array_equal(original, copy)


def test_quantised_trees_handle_features_spanning_the_float_range():
    import warnings

    from bob_boost.trainers.badacost import SAMMETrainer

    features = np.array([[1.7e308], [-1.7e308], [1e308], [-1e308]])
    labels = np.array([0, 1, 0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        machine = SAMMETrainer(number_of_rounds=3).train(features, labels)
    np.testing.assert_array_equal(machine.predict(features), labels)
