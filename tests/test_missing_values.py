"""Missing values (NaN) for the weak learners beyond stumps: gradient trees, multi-class trees, LUTs.

Each learner with ``missing="bin"`` gives NaN a bin of its own and learns where NaN goes. The tests
check the learnt splits against brute-force searches written here from the raw values (independent
of the kernels), the routing of NaN by the numpy and the compiled prediction (bit for bit), files,
rejection of NaN where it is not handled, and thread-count independence.
"""
from __future__ import annotations

import h5py
import numpy as np
import pytest

from bob_boost import BoostedMachine, Boosting, LogitLoss, SoftmaxLoss, TreeMachine, TreeTrainer
from bob_boost.engine import prediction
from bob_boost.ensemble_scores import _tree_table as _node_table
from bob_boost.weak.tree import route


def _with_missing(n: int = 2000, seed: int = 0, features: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Float features, NaN in features 0 (30 %, leaning positive) and 2 (10 %, noise); +-1 labels."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, features))
    y = np.where(x[:, 0] + 0.5 * x[:, 1] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    x[rng.random(n) < 0.3, 0] = np.nan
    y[np.isnan(x[:, 0]) & (rng.random(n) < 0.8)] = 1.0
    x[rng.random(n) < 0.1, 2] = np.nan
    return x, y


def _compiled_scores(machine: BoostedMachine, features: np.ndarray) -> np.ndarray:
    """The compiled tree-ensemble scores, with the machines' NaN directions."""
    machines = machine.weak_machines
    return prediction.tree_scorer(*_node_table(machines), np.vstack(machine.weights), machine.baseline, 2,
                                  missing_left=prediction.tree_missing_left(machines))(features)


# -- gradient trees: brute force ---------------------------------------------------------------------------

def _newton_gain(g: np.ndarray, h: np.ndarray, left: np.ndarray, l2: float) -> float:
    """Newton gain of splitting samples ``g``, ``h`` ((n, K) each) into ``left`` and the rest."""
    def score(mask):
        return float(np.sum(g[mask].sum(axis=0) ** 2 / (h[mask].sum(axis=0) + l2)))
    return score(left) + score(~left) - score(np.ones(left.size, dtype=bool))


def _brute_force_split(x, g, h, thresholds, min_samples, min_hessian, l2=0.0):
    """Largest Newton gain over every feature, candidate threshold and NaN direction (-inf without a split).

    ``thresholds[f]`` lists feature ``f``'s candidate thresholds; a sample goes right when
    ``x >= t``, NaN goes where the candidate says.
    """
    best = -np.inf
    for f, candidates in enumerate(thresholds):
        column = x[:, f]
        nan = np.isnan(column)
        for t in candidates:
            with np.errstate(invalid="ignore"):
                below = column < t
            for nan_left in (True, False):
                left = below | (nan & nan_left)
                if min(left.sum(), (~left).sum()) < min_samples:
                    continue
                if min(h[left].sum(axis=0).min(), h[~left].sum(axis=0).min()) < min_hessian:
                    continue
                best = max(best, _newton_gain(g, h, left, l2))
    return best


def _candidate_thresholds(trainer: TreeTrainer, x: np.ndarray) -> list[np.ndarray]:
    """Each feature's value-bin boundaries of the trainer's binning (the NaN bin has none)."""
    binned = trainer.prepare(x)
    return [binned.split_thresholds[binned.offsets[f]:binned.offsets[f + 1] - 2] for f in range(x.shape[1])]


@pytest.mark.parametrize("outputs, mostly_missing", [(1, False), (2, False), (1, True)])
def test_every_split_of_a_tree_is_the_brute_force_best_with_nan_on_either_side(outputs, mostly_missing):
    x, _ = _with_missing(600, seed=3)
    rng = np.random.default_rng(4)
    if mostly_missing:  # the NaN bin is the feature's frequent bin, recovered as total minus the others
        x[rng.random(x.shape[0]) < 0.6, 1] = np.nan
    g = rng.normal(size=(x.shape[0], outputs)) + np.where(np.isnan(x[:, :1]), 1.0, 0.0)
    h = rng.uniform(0.5, 1.5, size=g.shape)
    trainer = TreeTrainer(max_depth=3, min_samples_leaf=10, max_bins=12, missing="bin", multi_output="shared")
    tree = trainer.train(x, g, h)
    thresholds = _candidate_thresholds(trainer, x)
    assert tree.missing_left is not None and tree.features[0] >= 0
    leaves = tree.leaves(x)[:, 0]
    for node in np.flatnonzero(tree.features >= 0):
        inside = _reaches(tree, x, node)
        gi, hi, xi = g[inside], h[inside], x[inside]
        best = _brute_force_split(xi, gi, hi, thresholds, 10, trainer.min_hessian_leaf)
        feature, threshold = tree.features[node], tree.thresholds[node]
        column = xi[:, feature]
        with np.errstate(invalid="ignore"):
            left = (column < threshold) | (np.isnan(column) & tree.missing_left[node])
        assert _newton_gain(gi, hi, left, 0.0) == pytest.approx(best, rel=1e-9)
    # leaves hold -G/H of the samples reaching them
    for leaf in np.unique(leaves):
        mask = leaves == leaf
        assert np.allclose(tree.values[leaf], -g[mask].sum(axis=0) / h[mask].sum(axis=0), rtol=1e-12)


def _reaches(tree: TreeMachine, x: np.ndarray, target: int) -> np.ndarray:
    """Which rows pass through node ``target`` of a one-tree machine (routed by the machine's own rule)."""
    node = np.zeros(x.shape[0], dtype=np.int64)
    passed = node == target
    for _ in range(tree.depth):
        node = route(x, node, tree.features, tree.thresholds, tree.left_children, tree.right_children,
                     tree.missing_left)
        passed |= node == target
    return passed


def test_a_node_without_nan_sends_it_to_the_child_of_larger_hessian():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(500, 2))
    g = np.where(x[:, :1] > 0.7, -1.0, 1.0)
    h = np.where(x[:, :1] > 0.7, 3.0, 1.0)  # the few samples right weigh more in hessian
    tree = TreeTrainer(max_depth=1, min_samples_leaf=5, missing="bin").train(x, g, h)
    column = x[:, tree.features[0]]
    left = column < tree.thresholds[0]
    assert tree.missing_left[0] == (h[left].sum() >= h[~left].sum())
    probe = x[:3].copy()
    probe[:, tree.features[0]] = np.nan
    child = tree.left_children[0] if tree.missing_left[0] else tree.right_children[0]
    assert np.array_equal(tree(probe), np.repeat(tree.values[[child]], 3, axis=0))


def test_a_feature_that_is_all_nan_is_never_chosen():
    x, y = _with_missing(1500)
    x[:, 1] = np.nan
    machine = Boosting(TreeTrainer(max_depth=3, missing="bin"), LogitLoss()).train(x, y, 8)
    assert 1 not in machine.feature_indices()


# -- gradient trees: routing, files, rejection --------------------------------------------------------------

@pytest.mark.parametrize("multi_output", ["shared", "per_output"])
def test_nan_is_routed_alike_by_numpy_and_compiled_prediction(multi_output):
    x, y = _with_missing(2000)
    labels = (y > 0).astype(int) + (x[:, 1] > 1).astype(int)
    trainer = TreeTrainer(max_depth=3, max_bins=32, missing="bin", multi_output=multi_output)
    machine = Boosting(trainer, SoftmaxLoss(3)).train(x, labels, 6)
    assert any(m.missing_left[m.features >= 0].any() for m in machine.weak_machines)
    assert any((~m.missing_left[m.features >= 0]).any() for m in machine.weak_machines)
    probe, _ = _with_missing(1500, seed=7)
    staged = list(machine.staged_decision_scores(probe))[-1]
    assert np.array_equal(_compiled_scores(machine, probe), staged)
    assert np.array_equal(machine.decision_scores(probe), staged)
    # without the directions the compiled path cannot route NaN and says so (callers then use numpy)
    table = _node_table(machine.weak_machines)
    scores = prediction.tree_scorer(*table, np.vstack(machine.weights), machine.baseline, 2)
    assert scores(probe) is None
    clean = np.nan_to_num(probe)
    assert np.array_equal(scores(clean), list(machine.staged_decision_scores(clean))[-1])


def test_binary_trees_learn_from_missing_values_and_survive_save_and_load(tmp_path):
    x, y = _with_missing(3000)
    machine = Boosting(TreeTrainer(max_depth=2, missing="bin"), LogitLoss()).train(x, y, 15)
    assert np.mean(machine.predict(x) == y) > 0.85
    path = tmp_path / "trees.hdf5"
    machine.save(path)
    loaded = BoostedMachine.load(path)
    for a, b in zip(machine.weak_machines, loaded.weak_machines):
        assert a == b and np.array_equal(a.missing_left, b.missing_left)
    probe, _ = _with_missing(1000, seed=9)
    assert np.array_equal(loaded.decision_scores(probe), machine.decision_scores(probe))


def test_old_tree_files_load_and_reject_nan(tmp_path):
    x, y = _with_missing(1500)
    machine = Boosting(TreeTrainer(max_depth=2, missing="bin"), LogitLoss()).train(x, y, 3)
    path = tmp_path / "old.hdf5"
    machine.save(path)
    with h5py.File(path, "r+") as handle:  # a file written before missing values: no MissingLeft datasets
        names = []
        handle.visit(lambda name: names.append(name) if name.endswith("MissingLeft") else None)
        assert names
        for name in names:
            del handle[name]
    old = BoostedMachine.load(path)
    assert all(m.missing_left is None for m in old.weak_machines)
    clean = np.nan_to_num(x)
    assert np.array_equal(old.decision_scores(clean), list(old.staged_decision_scores(clean))[-1])
    with pytest.raises(ValueError, match="features: contains NaN"):
        old.decision_scores(x)
    with pytest.raises(ValueError, match="features: contains NaN"):
        old.weak_machines[0](x)


def test_trees_without_missing_handling_reject_nan_as_before():
    x, y = _with_missing(800)
    with pytest.raises(ValueError, match="missing='bin'"):
        Boosting(TreeTrainer(), LogitLoss()).train(x, y, 2)
    with pytest.raises(ValueError, match="features: contains NaN"):
        TreeTrainer().train(x, np.ones((x.shape[0], 1)), np.ones((x.shape[0], 1)))
    machine = Boosting(TreeTrainer(max_depth=2), LogitLoss()).train(np.nan_to_num(x), y, 2)
    assert all(m.missing_left is None for m in machine.weak_machines)
    with pytest.raises(ValueError, match="features: contains NaN"):
        machine.decision_scores(x)


def test_histogram_subtraction_gives_the_same_tree_with_missing_values():
    x, _ = _with_missing(1500)
    x[np.random.default_rng(1).random(x.shape[0]) < 0.6, 3] = np.nan
    g = np.random.default_rng(2).normal(size=(x.shape[0], 2))
    trees = []
    for subtraction in (True, False):
        trainer = TreeTrainer(max_depth=4, min_samples_leaf=5, missing="bin")
        trainer.histogram_subtraction = subtraction
        trees.append(trainer.train(x, g, np.ones_like(g)))
    assert trees[0].features.tolist() == trees[1].features.tolist()
    assert trees[0].missing_left.tolist() == trees[1].missing_left.tolist()
    assert np.allclose(trees[0].thresholds, trees[1].thresholds) and np.allclose(trees[0].values, trees[1].values)


def test_integer_features_train_with_missing_bin():
    x, y = _with_missing(1000)
    integers = np.round(np.nan_to_num(x) * 4).astype(np.int16)
    machine = Boosting(TreeTrainer(max_depth=2, missing="bin"), LogitLoss()).train(integers, y, 3)
    reference = Boosting(TreeTrainer(max_depth=2), LogitLoss()).train(integers, y, 3)
    assert [m.features.tolist() for m in machine.weak_machines] == [m.features.tolist() for m in
                                                                    reference.weak_machines]
    assert np.allclose(machine.decision_scores(integers), reference.decision_scores(integers))


def test_the_tree_does_not_depend_on_the_thread_count():
    x, y = _with_missing(3000)
    labels = (y > 0).astype(int) + (x[:, 3] > 0.5).astype(int)
    models = [Boosting(TreeTrainer(max_depth=3, max_bins=64, missing="bin", n_threads=t), SoftmaxLoss(3))
              .train(x, labels, 4) for t in (1, 2, 4)]
    for other in models[1:]:
        assert other.weak_machines == models[0].weak_machines
        assert np.array_equal(np.vstack(other.weights), np.vstack(models[0].weights))


@pytest.mark.parametrize("bad", ["zero", "BIN", 1, True])
def test_a_bad_missing_option_is_an_error_naming_it(bad):
    with pytest.raises(ValueError, match="missing: must be None or 'bin'"):
        TreeTrainer(missing=bad)


def test_tree_machines_validate_their_missing_left():
    args = ([0, -1, -1], [0.5, 0.0, 0.0], [1, -1, -1], [2, -1, -1], [[0.0], [1.0], [2.0]])
    with pytest.raises(ValueError, match="missing_left"):
        TreeMachine(*args, missing_left=[True, False])
    with pytest.raises(ValueError, match="missing_left"):
        TreeMachine(*args, missing_left=[2, 0, 0])
    tree = TreeMachine(*args, missing_left=[1, 1, 1])
    assert tree.missing_left.tolist() == [True, False, False]  # leaves route nothing
    assert tree(np.array([[np.nan], [1.0]]))[:, 0].tolist() == [1.0, 2.0]


# -- multi-class cost-sensitive trees ------------------------------------------------------------------------

def _classes_with_missing(n: int = 1500, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Three classes; NaN in feature 0 (25 %, mostly class 2) and feature 2 (10 %, noise)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4))
    labels = (x[:, 0] > 0).astype(int) + (x[:, 1] > 0.5).astype(int)
    x[rng.random(n) < 0.25, 0] = np.nan
    labels[np.isnan(x[:, 0]) & (rng.random(n) < 0.7)] = 2
    x[rng.random(n) < 0.1, 2] = np.nan
    return x, labels


def _gini(sums: np.ndarray) -> float:
    total = sums.sum()
    return float((sums ** 2).sum() / total) if total > 0 else 0.0


def _brute_force_gini(values: np.ndarray, labels: np.ndarray, weights: np.ndarray, k: int) -> float:
    """Largest ``gini(left) + gini(right)`` over every feature, midpoint of two present values and NaN side."""
    best = -np.inf
    for column in values.T:
        nan = np.isnan(column)
        present = np.unique(column[~nan])
        for t in (present[:-1] + present[1:]) / 2:
            for nan_left in (True, False):
                with np.errstate(invalid="ignore"):
                    left = (column < t) | (nan & nan_left)
                sums = [np.bincount(labels[side], weights=weights[side], minlength=k) for side in (left, ~left)]
                best = max(best, _gini(sums[0]) + _gini(sums[1]))
    return best


@pytest.mark.parametrize("quantized, mostly_missing", [(True, False), (False, False), (True, True)])
def test_every_multiclass_split_is_the_brute_force_best_with_nan_on_either_side(quantized, mostly_missing):
    from bob_boost import CostSensitiveTreeTrainer
    x, labels = _classes_with_missing(500, seed=2)
    if mostly_missing:  # the NaN bin is the feature's frequent bin, recovered as total minus the others
        x[np.random.default_rng(9).random(x.shape[0]) < 0.6, 1] = np.nan
    x[:, 3] = np.round(x[:, 3] * 3)  # a few-valued feature among the continuous ones
    weights = np.random.default_rng(3).uniform(0.5, 2.0, x.shape[0])
    loss = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [3.0, 1.0, 0.0]])
    trainer = CostSensitiveTreeTrainer(max_depth=3, quantized=quantized, missing="bin")
    binned = trainer.prepare(x)
    tree = trainer.train(binned, labels, weights, loss)
    assert tree.missing_left is not None and tree.depth >= 2
    # the values the splits see: each sample's bin value (the raw value, for exact trees); NaN stays NaN
    codes = binned.codes - binned.offsets[np.newaxis, :-1] if binned.coded is None else binned.coded.codes.T
    values = binned.bin_values[codes + binned.offsets[np.newaxis, :-1]]
    assert np.array_equal(np.isnan(values), np.isnan(x))
    cost_weights = weights * (loss - np.diag(loss)[:, np.newaxis]).sum(axis=1)[labels]
    for node in np.flatnonzero(tree.features >= 0):
        inside = _reaches(tree, x, node)
        vi, li, wi = values[inside], labels[inside], cost_weights[inside]
        best = _brute_force_gini(vi, li, wi, 3)
        column = vi[:, tree.features[node]]
        with np.errstate(invalid="ignore"):
            left = (column < tree.thresholds[node]) | (np.isnan(column) & tree.missing_left[node])
        chosen = sum(_gini(np.bincount(li[side], weights=wi[side], minlength=3)) for side in (left, ~left))
        assert chosen == pytest.approx(best, rel=1e-9)


def _multiclass_machine(quantized: bool = True, n_threads: int | None = None, rounds: int = 5):
    """A SAMME-like machine of multi-class trees trained on NaN features, by reweighting by hand."""
    from bob_boost import CostSensitiveTreeTrainer
    x, labels = _classes_with_missing(1500)
    trainer = CostSensitiveTreeTrainer(max_depth=3, quantized=quantized, n_threads=n_threads, missing="bin")
    binned = trainer.prepare(x)
    weights = np.ones(x.shape[0])
    machine = BoostedMachine(3)
    for _ in range(rounds):
        tree = trainer.train(binned, labels, weights, 1 - np.eye(3))
        wrong = tree.forward_labels(x) != labels
        error = max(weights[wrong].sum() / weights.sum(), 1e-6)
        alpha = np.log((1 - error) / error) + np.log(2)
        weights = weights * np.exp(alpha * wrong)
        machine.add_weak_machine(tree, np.full(3, alpha))
    return machine, x, labels


def test_multiclass_trees_route_nan_alike_by_numpy_and_compiled_prediction_and_survive_files(tmp_path):
    machine, x, labels = _multiclass_machine()
    trees = machine.weak_machines
    assert any(t.missing_left[t.features >= 0].any() for t in trees)
    assert any((~t.missing_left[t.features >= 0]).any() for t in trees)
    assert np.mean(np.argmax(machine.decision_scores(x), axis=1) == labels) > 0.8
    probe, _ = _classes_with_missing(1000, seed=8)
    staged = list(machine.staged_decision_scores(probe))[-1]
    assert np.array_equal(_compiled_scores(machine, probe), staged)
    assert np.array_equal(machine.decision_scores(probe), staged)
    path = tmp_path / "multiclass.hdf5"
    machine.save(path)
    loaded = BoostedMachine.load(path)
    assert loaded.weak_machines == trees
    assert np.array_equal(loaded.decision_scores(probe), staged)
    with h5py.File(path, "r+") as handle:  # as written before missing values
        names = []
        handle.visit(lambda name: names.append(name) if name.endswith("MissingLeft") else None)
        for name in names:
            del handle[name]
    old = BoostedMachine.load(path)
    assert all(t.missing_left is None for t in old.weak_machines)
    with pytest.raises(ValueError, match="features: contains NaN"):
        old.decision_scores(probe)
    with pytest.raises(ValueError, match="features: contains NaN"):
        old.weak_machines[0].predict_labels(probe)


@pytest.mark.parametrize("quantized", [True, False])
def test_multiclass_trees_do_not_depend_on_the_thread_count(quantized):
    models = [_multiclass_machine(quantized, n_threads, rounds=3)[0] for n_threads in (1, 2, 4)]
    for other in models[1:]:
        assert other.weak_machines == models[0].weak_machines


def test_multiclass_trees_without_missing_handling_reject_nan_and_never_split_all_nan_features():
    from bob_boost import CostSensitiveTreeTrainer
    x, labels = _classes_with_missing(800)
    weights, loss = np.ones(x.shape[0]), 1 - np.eye(3)
    for quantized in (True, False):
        with pytest.raises(ValueError, match="features: contains NaN"):
            CostSensitiveTreeTrainer(quantized=quantized).train(x, labels, weights, loss)
        x_nan = x.copy()
        x_nan[:, 1] = np.nan
        tree = CostSensitiveTreeTrainer(max_depth=4, quantized=quantized, missing="bin").train(
            x_nan, labels, weights, loss)
        assert 1 not in tree.feature_indices()
    with pytest.raises(ValueError, match="missing: must be None or 'bin'"):
        CostSensitiveTreeTrainer(missing="mean")


# -- look-up tables -----------------------------------------------------------------------------------------

def _discrete_with_missing(n: int = 2000, seed: int = 0, values: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """Integer features 0 .. values-1 as floats, NaN in feature 0 (30 %, leaning positive) and 2 (10 %)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, values, size=(n, 4)).astype(np.float64)
    y = np.where(x[:, 0] + 0.5 * x[:, 1] + rng.normal(size=n) > 5, 1.0, -1.0)
    x[rng.random(n) < 0.3, 0] = np.nan
    y[np.isnan(x[:, 0]) & (rng.random(n) < 0.8)] = 1.0
    x[rng.random(n) < 0.1, 2] = np.nan
    return x, y


def _lut_criterion(column: np.ndarray, negative_gradient: np.ndarray, values: int) -> float:
    """``sum_e |sum of -g over the samples of entry e|`` with NaN as entry ``values``."""
    entries = np.where(np.isnan(column), values, column).astype(int)
    return float(np.abs(np.bincount(entries, weights=negative_gradient, minlength=values + 1)).sum())


@pytest.mark.parametrize("outputs", [1, 2])
def test_the_lut_is_the_brute_force_best_with_nan_as_an_entry(outputs):
    from bob_boost import LUTTrainer
    x, y = _discrete_with_missing(1500, seed=4)
    rng = np.random.default_rng(5)
    gradient = -y[:, np.newaxis] * rng.random((x.shape[0], outputs))
    machine = LUTTrainer(8, outputs, missing="bin").train(x, gradient)
    assert machine.missing_entry and machine.look_up_tables.shape == (9, outputs)
    for o in range(outputs):
        criteria = [_lut_criterion(x[:, f], -gradient[:, o], 8) for f in range(x.shape[1])]
        assert criteria[machine.indices[o]] == pytest.approx(max(criteria), rel=1e-9)
        column = x[:, machine.indices[o]]
        entries = np.where(np.isnan(column), 8, column).astype(int)
        sums = np.bincount(entries, weights=-gradient[:, o], minlength=9)
        assert np.array_equal(machine.look_up_tables[:, o], np.where(sums >= 0, 1.0, -1.0))


def _lut_compiled_scores(machine: BoostedMachine, features: np.ndarray) -> np.ndarray:
    machines = machine.weak_machines
    entries = max(m.look_up_tables.shape[0] for m in machines)
    weights = np.vstack(machine.weights)
    tables = np.zeros((len(machines), entries, weights.shape[1]))
    for r, m in enumerate(machines):
        tables[r, :m.look_up_tables.shape[0]] = m.look_up_tables
    return prediction.lut_scores(features, np.vstack([m.indices for m in machines]), tables, weights,
                                 machine.baseline, 2, prediction.lut_missing_rows(machines))


def test_luts_route_nan_alike_by_numpy_and_compiled_prediction_and_survive_files(tmp_path):
    from bob_boost import ExponentialLoss, LUTTrainer
    x, y = _discrete_with_missing()
    machine = Boosting(LUTTrainer(8, missing="bin"), ExponentialLoss()).train(x, y, 12)
    assert any(m.indices[0] == 0 for m in machine.weak_machines)
    assert np.mean(machine.predict(x) == y) > 0.85
    probe, _ = _discrete_with_missing(1000, seed=6)
    staged = list(machine.staged_decision_scores(probe))[-1]
    assert np.array_equal(_lut_compiled_scores(machine, probe), staged)
    assert np.array_equal(machine.decision_scores(probe), staged)
    path = tmp_path / "luts.hdf5"
    machine.save(path)
    loaded = BoostedMachine.load(path)
    assert loaded.weak_machines == machine.weak_machines
    assert np.array_equal(loaded.decision_scores(probe), staged)
    with h5py.File(path, "r+") as handle:  # as written before missing values: no MissingEntry
        groups = []
        handle.visititems(lambda name, item: groups.append(item) if "MissingEntry" in getattr(item, "keys",
                                                                                               lambda: [])()
                          else None)
        assert groups
        for group in groups:
            del group["MissingEntry"]
    old = BoostedMachine.load(path)
    assert not any(m.missing_entry for m in old.weak_machines)
    with pytest.raises(ValueError, match="features: contains NaN"):
        old.decision_scores(probe)
    with pytest.raises(ValueError, match="features: contains NaN"):
        old.weak_machines[0](probe)


def test_luts_without_missing_handling_reject_nan_and_never_select_an_all_nan_feature():
    from bob_boost import ExponentialLoss, LUTTrainer
    x, y = _discrete_with_missing(1000)
    with pytest.raises(ValueError, match="missing='bin'"):
        Boosting(LUTTrainer(8), ExponentialLoss()).train(x, y, 2)
    with pytest.raises(ValueError, match="features: contains NaN"):
        LUTTrainer(8).train(x, -y)
    with pytest.raises(ValueError, match="missing: must be None or 'bin'"):
        LUTTrainer(8, missing=0)
    x[:, 0] = np.nan
    machine = Boosting(LUTTrainer(8, missing="bin"), ExponentialLoss()).train(x, np.ones_like(y), 3)
    assert 0 not in machine.feature_indices()  # a constant gradient ties every other feature; never this one
    with pytest.raises(ValueError, match="every feature is NaN"):
        LUTTrainer(8, missing="bin").train(np.full((10, 2), np.nan), np.ones(10))


def test_luts_do_not_depend_on_the_thread_count():
    from bob_boost import ExponentialLoss, LUTTrainer
    x, y = _discrete_with_missing(3000)
    models = [Boosting(LUTTrainer(8, missing="bin", n_threads=t), ExponentialLoss()).train(x, y, 6)
              for t in (1, 2, 4)]
    for other in models[1:]:
        assert other.weak_machines == models[0].weak_machines
        assert np.array_equal(np.vstack(other.weights), np.vstack(models[0].weights))


def test_multiclass_boosting_passes_nan_to_a_tree_learner_that_bins_it():
    from bob_boost import SAMMETrainer
    from bob_boost.weak_trainers.multiclass import CostSensitiveTreeTrainer

    rng = np.random.default_rng(5)
    x = rng.normal(size=(400, 4))
    y = (x[:, 0] > 0).astype(int) + (x[:, 1] > 0)
    x[rng.random(400) < 0.2, 0] = np.nan
    machine = SAMMETrainer(CostSensitiveTreeTrainer(max_depth=2, missing="bin"), 8, number_of_classes=3).train(x, y)
    # the compiled ensemble (NaN directions included) gives the staged scores' last array bit for bit
    np.testing.assert_array_equal(machine.decision_scores(x), list(machine.staged_decision_scores(x))[-1])
    assert np.mean(machine.predict(x) == y) > 0.8
    with pytest.raises(ValueError, match="features"):
        SAMMETrainer(CostSensitiveTreeTrainer(max_depth=2), 8, number_of_classes=3).train(x, y)


def test_multiclass_stumps_learn_where_nan_goes(tmp_path):
    from bob_boost import SAMMETrainer
    from bob_boost.weak_trainers.multiclass import MultiClassStumpTrainer

    rng = np.random.default_rng(6)
    x = rng.normal(size=(300, 3))
    y = np.where(x[:, 1] > 1.5, 2, (x[:, 0] > 0).astype(int))
    missing = rng.random(300) < 0.3
    x[missing, 0] = np.nan
    y[missing & (y < 2)] = 1  # a missing feature 0 means class 1, the class above the threshold
    machine = SAMMETrainer(MultiClassStumpTrainer(missing="bin"), 10, number_of_classes=3).train(x, y)
    first = machine.weak_machines[0]
    assert first.index == 0 and first.missing_above is True and list(first.labels) == [0, 1]
    assert all(m.missing_above is not None for m in machine.weak_machines)
    assert np.mean(machine.predict(x)[missing & (y == 1)] == 1) > 0.9
    machine.save(tmp_path / "stumps.hdf5")
    loaded = BoostedMachine.load(tmp_path / "stumps.hdf5")
    np.testing.assert_array_equal(loaded.decision_scores(x), machine.decision_scores(x))
    with h5py.File(tmp_path / "stumps.hdf5", "r+") as h5:  # a file of an older version: no MissingAbove
        for name in list(h5):
            if isinstance(h5[name], h5py.Group) and "MissingAbove" in h5[name]:
                del h5[name]["MissingAbove"]
    with pytest.raises(ValueError, match="features"):
        BoostedMachine.load(tmp_path / "stumps.hdf5").decision_scores(x)
    with pytest.raises(ValueError, match="features"):
        SAMMETrainer(MultiClassStumpTrainer(), 3, number_of_classes=3).train(x, y)
