"""Gradient trees on quantised gradients (``TreeTrainer(quantized_gradients=L)``)."""
from __future__ import annotations

import numpy as np
import pytest

from bob_boost import Boosting, LogitLoss, SoftmaxLoss, SquaredLoss, TreeTrainer
from bob_boost.engine import quantised, tree_histograms


def _packed(gradient: np.ndarray, hessian: np.ndarray, levels: int, seed: int = 0, columns: int | None = None):
    """One column quantised into ``columns`` int64 columns (default: those :func:`quantised.packing` takes)."""
    n = gradient.shape[0]
    least, *bits = quantised.packing(n, levels)
    bits = np.array(bits, dtype=np.int64)
    packed = np.empty((n, columns or least), dtype=np.int64)
    scales, real = np.empty((1, 2)), np.empty((1, n, 2))
    quantised.quantise(gradient, hessian, 0, 1, levels, seed, bits[0], bits[1], packed, real, scales)
    assert np.array_equal(real[0], np.column_stack([gradient[:, 0], hessian[:, 0]]))
    return packed, scales[0], bits


def _decoded(packed: np.ndarray, scales: np.ndarray, bits: np.ndarray):
    sums, counts = np.empty((packed.shape[0], 2)), np.empty(packed.shape[0], dtype=np.int64)
    quantised.decode(packed, bits[0], bits[1], scales, sums, counts)
    return sums, counts


def test_each_row_rounds_to_a_neighbouring_level_without_bias():
    rng = np.random.default_rng(0)
    n = 20000
    gradient = rng.normal(size=(n, 1))
    hessian = rng.uniform(0, 0.25, size=(n, 1))
    packed, scales, bits = _packed(gradient, hessian, 4)
    assert scales[0] == pytest.approx(np.abs(gradient).max() / 2) and scales[1] == pytest.approx(hessian.max() / 4)
    rows, counts = _decoded(packed, scales, bits)
    assert np.all(counts == 1)
    for column, values in enumerate((gradient[:, 0], hessian[:, 0])):
        level = rows[:, column] / scales[column]
        assert np.array_equal(level, np.round(level))  # whole levels
        assert np.all((np.floor(values / scales[column]) <= level + 1e-12) &
                      (level <= np.ceil(values / scales[column]) + 1e-12))
        # stochastic rounding is unbiased: the rounding errors average out (their spread is at most half a level)
        assert abs(np.mean(rows[:, column] - values)) < 4 * 0.5 * scales[column] / np.sqrt(n)
    assert rows[:, 0].min() >= -2 * scales[0] and rows[:, 1].max() <= 4 * scales[1]


def test_packed_sums_decode_to_the_sums_of_their_fields():
    rng = np.random.default_rng(1)
    gradient, hessian = rng.normal(size=(5000, 1)), rng.random((5000, 1))
    packed, scales, bits = _packed(gradient, hessian, 8, seed=3)
    rows, _ = _decoded(packed, scales, bits)
    for chosen in (np.arange(5000), rng.choice(5000, 77, replace=False), np.array([4])):
        total, count = _decoded(packed[chosen].sum(axis=0, keepdims=True), scales, bits)
        assert count[0] == chosen.size
        # sums of whole levels times a scale: exact up to that one product's rounding
        np.testing.assert_allclose(total[0], rows[chosen].sum(axis=0), rtol=1e-13, atol=1e-12)
    # a difference of sums (histogram subtraction) decodes to the difference of the fields
    rest, count = _decoded((packed.sum(axis=0) - packed[:100].sum(axis=0))[np.newaxis], scales, bits)
    assert count[0] == 4900
    np.testing.assert_allclose(rest[0], rows[100:].sum(axis=0), rtol=1e-13, atol=1e-12)


def test_packed_node_histograms_count_every_row_once():
    rng = np.random.default_rng(2)
    n = 5000
    dense = 70
    x = np.hstack([rng.normal(size=(n, dense)), np.where(rng.random((n, 4)) < 0.9, 0.0, rng.integers(1, 5, (n, 4)))])
    binned = TreeTrainer(n_threads=1).prepare(x)
    coded, offsets = binned.coded, binned.offsets
    assert coded.row_layout(offsets)[1].size == dense
    gradient, hessian = rng.normal(size=(n, 1)), rng.random((n, 1))
    packed, scales, bits = _packed(gradient, hessian, 4)
    rows, _ = _decoded(packed, scales, bits)
    bins = int(offsets[-1])
    for order in (np.arange(n), np.sort(rng.choice(n, 3000, replace=False))):  # every row, some rows
        total = np.zeros(1, dtype=np.int64)
        tree_histograms.node_total(packed, order, 0, order.size, total)
        sums = np.full((bins, 1), -7, dtype=np.int64)
        tree_histograms.build_histogram(coded.row_layout(offsets), coded.mode_bins, offsets,
                                        packed, order, 0, order.size, total, order.size, sums,
                                        np.empty(0, dtype=np.int32), np.empty(0))
        decoded, counts = _decoded(sums, scales, bits)
        for f in (0, dense - 1, dense + 1):  # dense, dense, sparse (its frequent bin recovered from the total)
            part = slice(offsets[f], offsets[f + 1])
            codes = coded.codes[f, order]
            assert counts[part].tolist() == np.bincount(codes, minlength=offsets[f + 1] - offsets[f]).tolist()
            expected = np.zeros((offsets[f + 1] - offsets[f], 2))
            np.add.at(expected, codes, rows[order])
            np.testing.assert_allclose(decoded[part], expected, rtol=1e-12, atol=1e-9)


def test_the_packed_fields_hold_their_largest_sums():
    """Every gradient at the largest level, for the most samples the packing takes: the sums do not wrap."""
    for levels in (2, 3, 4, 7, 32):
        largest = 1
        while quantised.packing(2 * largest, levels)[0] == 1:  # the most samples one column holds
            largest *= 2
        step = largest // 2
        while step:
            if quantised.packing(largest + step, levels)[0] == 1:
                largest += step
            step //= 2
        columns, count_bits, hessian_bits = quantised.packing(largest, levels)
        assert columns == 1 and quantised.packing(largest + 1, levels)[0] == 2
        # the worst sums in exact integers: |G| up to n ceil(L/2), H up to n L, the count n
        assert largest * ((levels + 1) // 2) < 2 ** (63 - count_bits - hessian_bits)
        assert largest * levels < 2 ** hessian_bits and largest < 2 ** count_bits
        if levels in (3, 7):  # odd levels reach ceil(L/2); checked on real rows for two of them
            for sign in (1.0, -1.0):
                gradient = np.full((largest, 1), sign)
                packed, scales, bits = _packed(gradient, np.ones((largest, 1)), levels)
                rows, _ = _decoded(packed, scales, bits)
                total, count = _decoded(packed.sum(axis=0, keepdims=True), scales, bits)
                assert count[0] == largest
                assert total[0, 0] == pytest.approx(rows[:, 0].sum(), rel=1e-12)
                assert abs(total[0, 0]) > 0.5 * largest * abs(sign)  # well away from a wrapped value


@pytest.mark.parametrize("columns", [2, 3])
def test_wider_packings_hold_the_same_sums(columns):
    """Two or three int64 columns a row (beyond what one holds) decode to one column's sums, exactly."""
    rng = np.random.default_rng(15)
    gradient, hessian = rng.normal(size=(3000, 1)), rng.random((3000, 1))
    narrow, scales, bits = _packed(gradient, hessian, 8, seed=2)
    wide, wide_scales, _ = _packed(gradient, hessian, 8, seed=2, columns=columns)
    assert narrow.shape[1] == 1 and wide.shape[1] == columns and np.array_equal(wide_scales, scales)
    for chosen in (np.arange(3000), rng.choice(3000, 91, replace=False)):
        for total in (lambda p: p[chosen].sum(axis=0, keepdims=True),  # a node, and a subtraction
                      lambda p: p.sum(axis=0, keepdims=True) - p[chosen].sum(axis=0, keepdims=True)):
            expected, expected_count = _decoded(total(narrow), scales, bits)
            sums, count = _decoded(total(wide), scales, bits)
            assert np.array_equal(sums, expected) and count[0] == expected_count[0]


@pytest.mark.parametrize("columns", [2, 3])
def test_trees_do_not_depend_on_how_many_columns_pack_the_rows(monkeypatch, columns):
    """Every histogram path (one tree, a batch of trees sharing a root pass, feature pairs, NaN bins,
    subtraction) grows the same trees from sums packed in two or three columns as from one."""
    from bob_boost.weak_trainers import tree as tree_module
    rng = np.random.default_rng(16)
    x = _few_valued(rng, 3000)
    x[rng.random(3000) < 0.05, 1] = np.nan
    labels = (x[:, 0] + x[:, 3] * 5 + rng.integers(0, 4, 3000)).astype(int) % 3

    def train():
        machines = []
        for threads, outputs in ((1, 3), (3, 3), (1, 1)):
            tree = TreeTrainer(max_leaves=12, growth="leafwise", max_depth=None, multi_output="per_output",
                               quantized_gradients=32, missing="bin", n_threads=threads)
            if outputs == 1:
                machines.append(Boosting(tree, SquaredLoss(), learning_rate=0.3).train(x, labels, 6))
            else:
                machines.append(Boosting(tree, SoftmaxLoss(), learning_rate=0.3).train(x, labels, 6))
        return machines
    narrow = train()
    packing = quantised.packing
    assert packing(3000, 32)[0] == 1
    monkeypatch.setattr(tree_module.quantised, "packing", lambda n, levels: (columns, *packing(n, levels)[1:]))
    for machine, expected in zip(train(), narrow):
        assert machine.weak_machines == expected.weak_machines and np.array_equal(machine.weights, expected.weights)


def test_quantised_trees_train_beyond_one_columns_reach():
    """65,536 levels: 20,000 rows already need two columns; the trees learn as the float trees do."""
    rng = np.random.default_rng(17)
    x = rng.normal(size=(24000, 5))
    y = np.where(x[:, 0] + x[:, 1] * x[:, 2] + 0.3 * rng.normal(size=24000) > 0, 1.0, -1.0)
    assert quantised.packing(20000, quantised.MAX_LEVELS)[0] == 2

    def accuracy(levels):
        tree = TreeTrainer(max_leaves=15, growth="leafwise", max_depth=None, quantized_gradients=levels)
        machine = Boosting(tree, LogitLoss(), learning_rate=0.3).train(x[:20000], y[:20000], 20)
        return np.mean(np.sign(machine.decision_scores(x[20000:])[:, 0]) == y[20000:])
    assert abs(accuracy(quantised.MAX_LEVELS) - accuracy(None)) < 0.01


def test_gradients_on_whole_levels_give_the_float_tree():
    """Gradients already on the levels round to themselves: the quantised tree is the float tree."""
    rng = np.random.default_rng(4)
    x = np.round(rng.normal(size=(3000, 6)), 2)
    gradient = rng.integers(-1, 2, size=(3000, 1)).astype(float)
    gradient[0] = 1.0  # the largest |g| is one level
    gradient[np.abs(x[:, 0] + x[:, 1]) < 0.5] = -1.0  # structure to split on
    hessian = np.ones((3000, 1))  # two levels of 0.5: exact
    with_nan = x.copy()
    with_nan[rng.random(x.shape) < 0.1] = np.nan
    for growth, features, missing in (("levelwise", x, None), ("leafwise", x, None), ("levelwise", with_nan, "bin")):
        options = dict(max_depth=4, max_leaves=9, max_bins=64, growth=growth, missing=missing)
        exact = TreeTrainer(**options).train(features, gradient, hessian)
        assert exact.features.size > 9
        assert TreeTrainer(quantized_gradients=2, **options).train(features, gradient, hessian) == exact
    # trees of several outputs share their root pass (a sparse feature's frequent bin recovered from it)
    sparse = np.hstack([x, np.where(rng.random((3000, 1)) < 0.8, 0.0, np.round(rng.normal(size=(3000, 1)), 1))])
    gradients = np.hstack([gradient, np.where(sparse[:, 6:] > 0.3, 1.0, -1.0)])
    options = dict(max_depth=3, max_bins=64, multi_output="per_output", n_threads=1)
    exact = TreeTrainer(**options).train(sparse, gradients, np.ones((3000, 2)))
    assert 6 in exact.features.tolist()
    assert TreeTrainer(quantized_gradients=2, **options).train(sparse, gradients, np.ones((3000, 2))) == exact


def test_quantised_softmax_trees_learn_as_well_and_do_not_depend_on_threads():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(4000, 8))
    y = (x[:, 0] > 0).astype(int) + (x[:, 1] + 0.5 * x[:, 2] > 0.3) + (x[:, 3] * x[:, 4] > 0.5)
    train, test = slice(0, 3000), slice(3000, None)

    def fit(levels, threads):
        tree = TreeTrainer(max_depth=3, max_bins=64, n_threads=threads, multi_output="per_output",
                           quantized_gradients=levels)
        return Boosting(tree, SoftmaxLoss(), learning_rate=0.3).train(x[train], y[train], 25)

    exact = np.mean(fit(None, 2).predict(x[test]) == y[test])
    machines = [fit(4, t) for t in (1, 2, 4)]
    quantised_accuracy = np.mean(machines[0].predict(x[test]) == y[test])
    assert quantised_accuracy > 0.8 and abs(quantised_accuracy - exact) < 0.03, (quantised_accuracy, exact)
    for other in machines[1:]:
        assert np.array_equal(other.weights, machines[0].weights)
        assert all(a == b for a, b in zip(other.weak_machines, machines[0].weak_machines))


def test_leaves_hold_the_real_gradients_newton_values():
    rng = np.random.default_rng(6)
    x = rng.normal(size=(2500, 4))
    y = np.sin(2 * x[:, 0]) + x[:, 1] ** 2 + 0.1 * rng.normal(size=2500)
    gradient = (0.0 - y)[:, np.newaxis]  # the squared loss's at scores 0
    hessian = rng.uniform(0.5, 2.0, size=(2500, 1))
    machine = TreeTrainer(max_depth=3, l2_regularization=2.0, quantized_gradients=4).train(x, gradient, hessian)
    leaves = machine.leaves(x)[:, 0]
    for leaf in np.unique(leaves):
        inside = leaves == leaf
        expected = -gradient[inside].sum() / (hessian[inside].sum() + 2.0)
        assert machine.values[leaf, 0] == pytest.approx(expected, rel=1e-12)
    # and the regression learns with the generic loop
    boosted = Boosting(TreeTrainer(max_depth=3, quantized_gradients=4), SquaredLoss(), learning_rate=0.3).train(
        x, y, 40, baseline=float(y.mean()))
    assert np.sqrt(np.mean((boosted(x) - y) ** 2)) < 0.3 * y.std()


@pytest.mark.parametrize("levels", [1, 0, -4, 2.5, "4", quantised.MAX_LEVELS + 1])
def test_bad_levels_are_rejected(levels):
    with pytest.raises((ValueError, TypeError), match="quantized_gradients"):
        TreeTrainer(quantized_gradients=levels)


def test_shared_multi_output_trees_and_too_many_samples_are_rejected():
    x = np.random.default_rng(7).normal(size=(200, 3))
    targets = SoftmaxLoss().check_targets(np.arange(200) % 3)
    with pytest.raises(ValueError, match="quantized_gradients: needs one output a tree"):
        Boosting(TreeTrainer(quantized_gradients=4, multi_output="shared"), SoftmaxLoss()).train(x, targets, 2)
    assert quantised.packing(1_000_000, 4) == (1, 20, 22)
    assert quantised.packing(3_000_000, 4) == (2, 22, 24)  # count and hessian in the second column
    assert quantised.packing(2 ** 40, 2 ** 16)[0] == 3
    with pytest.raises(ValueError, match=f"quantized_gradients: {2 ** 50} samples at 65536 levels do not fit"):
        quantised.packing(2 ** 50, 2 ** 16)


def test_negative_hessians_are_rejected():
    class Concave(SquaredLoss):
        def loss_hessian(self, targets, scores, sample_weight=None):
            return -np.ones_like(scores)
    x = np.random.default_rng(9).normal(size=(300, 3))
    with pytest.raises(ValueError, match="loss_hessian: quantized_gradients needs non-negative hessians"):
        Boosting(TreeTrainer(quantized_gradients=4, newton_leaves=True), Concave()).train(x, x[:, 0], 2)


def test_front_doors_pass_quantised_gradients_to_the_trees(tmp_path):
    from bob_boost import BoostedMachine
    from bob_boost.cli import main
    from bob_boost.recipes import make_recipe
    recipe = make_recipe("boosting", number_of_classes=3, loss="softmax", weak_learner="tree",
                         tree_outputs="per_output", tree_quantized_gradients=8)
    assert recipe.trainer.weak_trainer.quantized_gradients == 8
    sklearn = pytest.importorskip("bob_boost.sklearn", reason="the estimators need scikit-learn")
    rng = np.random.default_rng(8)
    x = rng.normal(size=(600, 4))
    y = (x[:, 0] > 0).astype(int) + (x[:, 1] > 0.5)
    options = dict(weak_learner="tree", n_estimators=5, max_depth=2, learning_rate=0.3)
    quantised_model = sklearn.BoostingClassifier(loss="softmax", multi_output="per_output", quantized_gradients=4,
                                                 **options).fit(x, y)
    float_model = sklearn.BoostingClassifier(loss="softmax", multi_output="per_output", **options).fit(x, y)
    assert quantised_model.score(x, y) > 0.8
    assert any(a != b for a, b in zip(quantised_model.machine_.weak_machines, float_model.machine_.weak_machines))
    regressor = sklearn.BoostingRegressor(quantized_gradients=4, **options).fit(x, x[:, 0] ** 2)
    assert regressor.score(x, x[:, 0] ** 2) > 0.5
    float_regressor = sklearn.BoostingRegressor(**options).fit(x, x[:, 0] ** 2)
    assert any(a != b for a, b in zip(regressor.machine_.weak_machines, float_regressor.machine_.weak_machines))
    table = tmp_path / "train.csv"
    np.savetxt(table, np.column_stack([x, y]), delimiter=",", header="a,b,c,d,y", comments="")
    models = [tmp_path / "quantised.hdf5", tmp_path / "float.hdf5"]
    for model, extra in zip(models, (["--tree-quantized-gradients", "4"], [])):
        assert main(["train", str(table), "-o", str(model), "-w", "tree", "-l", "softmax", "--tree-outputs",
                     "per_output", "-r", "3", "--quiet"] + extra) == 0
    machines = [BoostedMachine.load(model) for model in models]
    assert machines[0].number_of_outputs == 3
    assert any(a != b for a, b in zip(machines[0].weak_machines, machines[1].weak_machines))


@pytest.mark.parametrize("quantized", [None, 16])
def test_continuing_a_machine_gives_the_longer_run(quantized):
    # the rounding of continued rounds is keyed by their place in the whole machine, not in this run
    rng = np.random.default_rng(11)
    features = rng.normal(size=(600, 5))
    labels = (features[:, 0] + 0.5 * features[:, 1] > 0).astype(int) + (features[:, 2] > 0.8)
    tree = TreeTrainer(max_depth=3, multi_output="per_output", quantized_gradients=quantized, n_threads=1)
    trainer = Boosting(tree, SoftmaxLoss(), learning_rate=0.3)
    longer = trainer.train(features, labels, 6)
    continued = trainer.train(features, labels, 3)
    trainer.train(features, labels, 3, boosted_machine=continued)
    assert len(continued) == len(longer) == 6
    np.testing.assert_array_equal(continued(features), longer(features))


def _few_valued(rng: np.random.Generator, n: int) -> np.ndarray:
    """Features of 16, 16, 2, 3, 100, 120, 200 and 300 values, one sparse feature and one of 10 values and NaN."""
    columns = [rng.integers(0, v, n).astype(float) for v in (16, 16, 3, 100, 120, 200, 300)]
    columns.insert(2, np.arange(n) % 2.0)  # two values, never sparse
    columns.append(np.where(rng.random(n) < 0.8, 0.0, rng.integers(1, 9, n)))  # sparse
    columns.append(np.where(rng.random(n) < 0.1, np.nan, rng.integers(0, 10, n)))  # a missing-value bin
    return np.column_stack(columns)


def test_pairs_cover_the_dense_features_once_within_the_joint_bins():
    rng = np.random.default_rng(11)
    binned = TreeTrainer(missing="bin", max_bins=512, n_threads=1).prepare(_few_valued(rng, 4000))
    coded, offsets = binned.coded, binned.offsets
    assert coded.codes.dtype == np.uint16  # the 300 values
    pair_rows, pair_bases, pair_features, pair_bins, single_rows, single_bases = coded.pair_layout(offsets)
    dense = np.flatnonzero(coded.mode_bins < 0)
    singles = np.searchsorted(offsets, single_bases, side="right") - 1  # each single's first bin is its feature's
    assert np.array_equal(offsets[singles], single_bases)
    assert sorted(pair_features.ravel().tolist() + singles.tolist()) == dense.tolist()
    bins = {f: int(coded.codes[f].max()) + 1 for f in dense}
    assert np.all(pair_bins.prod(axis=1) <= 256) and np.array_equal(np.diff(pair_bases), pair_bins.prod(axis=1))
    # smallest with the largest that fits: (2, 120), (3, 16), (11, 16) (10 values and NaN's bin); the 100,
    # 200 and 300 values stay alone
    assert sorted(tuple(sorted(bins[f] for f in pair)) for pair in pair_features.tolist()) == \
        [(2, 120), (3, 16), (11, 16)]
    for j, (a, b) in enumerate(pair_features):
        assert pair_bins[j].tolist() == [bins[a], bins[b]]
        assert np.array_equal(pair_rows[:, j], coded.codes[a] * bins[b] + coded.codes[b])
    assert np.array_equal(single_rows, coded.codes[singles].T)
    # unpaired, for float histograms: every dense feature alone
    no_pairs = coded.pair_layout(offsets, paired=False)
    assert no_pairs[2].shape == (0, 2) and no_pairs[4] is coded.row_layout(offsets)[0]


def test_paired_histograms_are_the_packed_histograms():
    rng = np.random.default_rng(12)
    n = 4000
    binned = TreeTrainer(missing="bin", max_bins=512, n_threads=1).prepare(_few_valued(rng, n))
    coded, offsets = binned.coded, binned.offsets
    packed, _, _ = _packed(rng.normal(size=(n, 1)), rng.random((n, 1)), 32)
    pairs = coded.pair_layout(offsets)
    assert pairs[2].shape[0] == 3
    bins = int(offsets[-1])
    for order in (np.arange(n), np.sort(rng.choice(n, 700, replace=False)), np.array([5]), np.array([], dtype=int)):
        total = np.zeros(1, dtype=np.int64)
        tree_histograms.node_total(packed, order, 0, order.size, total)
        expected = np.full((bins, 1), -7, dtype=np.int64)
        tree_histograms.build_histogram(coded.row_layout(offsets), coded.mode_bins, offsets,
                                        packed, order, 0, order.size, total, order.size, expected,
                                        np.empty(0, dtype=np.int32), np.empty(0))
        paired_total, sums = np.full(1, -3, dtype=np.int64), np.full((bins, 1), -7, dtype=np.int64)
        tree_histograms.build_paired_histogram(coded.row_layout(offsets), pairs, coded.mode_bins, offsets,
                                               packed, order, 0, order.size, paired_total, sums,
                                               np.full(pairs[1][-1], -5, dtype=np.int64))
        assert paired_total[0] == total[0]
        assert np.array_equal(sums, expected)
    # a batch of trees' roots, one pass a pair
    batch = np.hstack([_packed(rng.normal(size=(n, 1)), rng.random((n, 1)), 32, seed=s)[0] for s in range(3)])
    total = batch.sum(axis=0)
    expected = np.full((bins, 3), -7, dtype=np.int64)
    tree_histograms.root_histograms(coded.stored(), coded.mode_bins, offsets, batch, total, expected,
                                    np.zeros(bins, dtype=np.int32))
    sums = np.full((bins, 3), -7, dtype=np.int64)
    tree_histograms.paired_root_histograms(coded.stored(), coded.mode_bins, pairs, offsets, batch, total, sums)
    assert np.array_equal(sums, expected)


def test_trees_with_paired_features_are_the_trees_without(monkeypatch):
    from bob_boost.engine import codes
    rng = np.random.default_rng(13)
    x = _few_valued(rng, 3000)
    labels = (x[:, 0] + x[:, 3] * 5 + rng.integers(0, 4, 3000)).astype(int) % 3

    def train(threads):  # 1 thread: one batch of 3 trees sharing a root pass; 3: a batch (and root) a tree
        tree = TreeTrainer(max_leaves=12, growth="leafwise", max_depth=None, multi_output="per_output",
                           quantized_gradients=32, missing="bin", n_threads=threads)
        return Boosting(tree, SoftmaxLoss(), learning_rate=0.3).train(x, labels, 8)
    paired = [train(threads) for threads in (1, 3)]
    monkeypatch.setattr(codes, "PAIR_BINS", 0)
    binned = TreeTrainer(missing="bin").prepare(x)
    assert binned.coded.pair_layout(binned.offsets)[2].shape[0] == 0
    alone = [train(threads) for threads in (1, 3)]
    for machine in paired[1:] + alone:
        assert np.array_equal(machine.decision_scores(x), paired[0].decision_scores(x))
        assert [m == n for m, n in zip(machine.weak_machines, paired[0].weak_machines)] == [True] * 8


def _splitmix64(keys: np.ndarray) -> np.ndarray:
    """splitmix64 of uint64 keys in numpy's wrapping integer arithmetic (a reference for the compiled hash)."""
    with np.errstate(over="ignore"):
        z = keys + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def test_a_batch_of_columns_rounds_as_each_column_alone():
    rng = np.random.default_rng(14)
    n = 999
    gradient, hessian = rng.normal(size=(n, 6)), rng.random((n, 6))
    bits = np.array(quantised.packing(n, 16)[1:], dtype=np.int64)
    packed, real, scales = np.empty((n, 3), dtype=np.int64), np.empty((3, n, 2)), np.empty((3, 2))
    quantised.quantise(gradient, hessian, 2, 5, 16, 7, bits[0], bits[1], packed, real, scales)
    for j, column in enumerate(range(2, 5)):
        alone, alone_real, alone_scales = np.empty((n, 1), dtype=np.int64), np.empty((1, n, 2)), np.empty((1, 2))
        quantised.quantise(gradient, hessian, column, column + 1, 16, 7, bits[0], bits[1], alone, alone_real,
                           alone_scales)
        assert np.array_equal(packed[:, j], alone[:, 0])
        assert np.array_equal(real[j], alone_real[0]) and np.array_equal(scales[j], alone_scales[0])
        assert np.array_equal(real[j], np.column_stack([gradient[:, column], hessian[:, column]]))
        # the rounding written out in numpy: floor(x / scale + u), u from the hash of (seed, column, row)
        gradient_scale = np.abs(gradient[:, column]).max() / 8
        hessian_scale = hessian[:, column].max() / 16
        assert scales[j].tolist() == [gradient_scale, hessian_scale]
        z = _splitmix64((np.uint64(7) * np.uint64(1 << 20) + np.uint64(column)) * np.uint64(n) +
                        np.arange(n, dtype=np.uint64))
        q_g = np.floor(gradient[:, column] / gradient_scale + (z >> np.uint64(32)).astype(float) / 2 ** 32)
        q_h = np.floor(hessian[:, column] / hessian_scale + (z & np.uint64(0xFFFFFFFF)).astype(float) / 2 ** 32)
        expected = q_g.astype(np.int64) * 2 ** int(bits[0] + bits[1]) + q_h.astype(np.int64) * 2 ** int(bits[0]) + 1
        assert np.array_equal(packed[:, j], expected)


@pytest.mark.parametrize("columns", [1, 2])
def test_a_lone_quantised_tree_is_the_same_from_histograms_in_parts(monkeypatch, columns):
    """Packed sums are integers: a lone tree whose root and large nodes are built in parts on the threads
    (paired features, sparse features, NaN bins) is the tree of one-pass histograms, bit for bit."""
    from bob_boost.weak_trainers import tree as tree_module
    from bob_boost.weak_trainers import tree_parts
    rng = np.random.default_rng(18)
    x = _few_valued(rng, 4000)
    x[rng.random(4000) < 0.05, 1] = np.nan
    y = np.where(x[:, 0] + x[:, 3] * 5 + rng.normal(size=4000) > 4, 1.0, -1.0)
    packing = quantised.packing
    monkeypatch.setattr(tree_module.quantised, "packing", lambda n, levels: (columns, *packing(n, levels)[1:]))

    def train(threads):
        tree = TreeTrainer(max_leaves=15, growth="leafwise", max_depth=None, quantized_gradients=16, missing="bin",
                           n_threads=threads)
        return Boosting(tree, LogitLoss(), learning_rate=0.3).train(x, y, 5)
    whole = train(2)
    monkeypatch.setattr(tree_module, "PART_ROWS", 100)
    monkeypatch.setattr(tree_parts, "PART_ROWS", 100)
    requests = []
    build = tree_parts.Parts.build
    monkeypatch.setattr(tree_parts.Parts, "build", lambda self, order, start, stop, *rest: (
        requests.append(tree_parts._part_bounds(start, stop, self.entries).size - 1),
        build(self, order, start, stop, *rest)))
    for threads in (1, 2):
        parted = train(threads)
        assert parted.weak_machines == whole.weak_machines and np.array_equal(parted.weights, whole.weights)
    assert max(requests) == tree_parts.MOST_PARTS and len(requests) > 2 * 5
