"""Categorical splits of the cost-sensitive multi-class trees (BAdaCost, SAMME, AdaBoost.M1): the best set of
categories by the cost-weighted Gini criterion, the same trees in memory and on partitions, and every front
door (machine files, ONNX, Shapley values, the estimator, the command line)."""
from __future__ import annotations

import itertools
import subprocess
import sys

import h5py
import numpy as np
import pytest

import bob_boost
from bob_boost import BoostedMachine, CostSensitiveTreeTrainer, MultiClassTreeMachine
from bob_boost.boosting.partitions import LocalRows
from bob_boost.costs import samme_cost_matrix
from bob_boost.trainers.badacost import BAdaCostTrainer
from bob_boost.trainers.partitioned_classes import PartitionedMultiClassBoosting


def _gini_score(left: np.ndarray, labels: np.ndarray, weights: np.ndarray, factors: np.ndarray, k: int) -> float:
    """``sum_j p_j(A)^2 / P(A) + sum_j p_j(B)^2 / P(B)`` of the rows ``left`` (A) and the others (B)."""
    score = 0.0
    for side in (left, ~left):
        sums = np.bincount(labels[side], weights=(weights * factors[labels])[side], minlength=k)
        score += np.square(sums).sum() / sums.sum() if sums.sum() > 0 else 0.0
    return score


def _categorical_data(n=1500, categories=8, k=3, seed=0, missing=False):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, categories, n)
    effect = rng.integers(0, k, categories)
    labels = np.where(rng.random(n) < 0.7, effect[codes], rng.integers(0, k, n))
    X = np.column_stack([codes * 5 + 2, rng.normal(size=n), rng.integers(0, 4, n)]).astype(float)
    if missing:
        X[rng.random(n) < 0.1, 0] = np.nan
    return X, labels


@pytest.mark.parametrize("k, categories", [(2, 3), (3, 6), (4, 9), (2, 14)])
@pytest.mark.long
def test_a_categorical_root_takes_the_best_of_every_partition_of_its_categories(k, categories):
    """Checked by brute force over all 2^(m-1) - 1 two-way partitions of the m present categories (NaN one of
    them): up to 10 categories every partition is scored; for two classes the class-share order holds the best
    partition at any number (Breiman et al. 1984)."""
    rng = np.random.default_rng(k * 100 + categories)
    for trial in range(6 if categories <= 10 else 2):  # 8191 partitions of 14 categories take a while
        column = rng.integers(0, categories, 400).astype(float)
        column[rng.random(400) < 0.1] = np.nan
        labels = rng.integers(0, k, 400)
        weights = rng.random(400) + 0.1
        loss = rng.random((k, k)) + 0.5
        np.fill_diagonal(loss, 0.0)
        tree = CostSensitiveTreeTrainer(1, missing="bin", categorical_features=[0], n_threads=1).train(
            column[:, np.newaxis], labels, weights, loss)
        assert tree.features[0] == 0 and tree.categories[0] is not None
        factors = loss.sum(axis=1)  # rows of L relative to the (zero) diagonal
        left = np.isin(column, tree.categories[0]) | (np.isnan(column) & tree.missing_left[0])
        chosen = _gini_score(left, labels, weights, factors, k)
        values = np.append(np.unique(column[~np.isnan(column)]), np.nan)
        best = -np.inf
        for size in range(1, values.size):
            for subset in itertools.combinations(range(1, values.size), size - 1):
                members = values[[0, *subset]]
                mask = np.isin(column, members) | (np.isnan(column) & np.isnan(members).any())
                if mask.all():
                    continue
                best = max(best, _gini_score(mask, labels, weights, factors, k))
        assert chosen == pytest.approx(best, rel=1e-9), trial


def _walk(tree, row: np.ndarray) -> int:
    """The label a row reaches, node by node: a categorical node sends its set's categories left and every other
    value right; a numeric node sends ``x >= threshold`` right; NaN goes where ``missing_left`` says."""
    node = 0
    while tree.features[node] >= 0:
        value = row[tree.features[node]]
        if np.isnan(value):
            left = bool(tree.missing_left[node])
        elif tree.categories[node] is not None:
            left = value in tree.categories[node].tolist()
        else:
            left = not value >= tree.thresholds[node]
        node = tree.left_children[node] if left else tree.right_children[node]
    return int(tree.labels[node])


def test_the_trees_send_their_sets_left_and_every_other_value_right():
    X, labels = _categorical_data(missing=True)
    tree = CostSensitiveTreeTrainer(3, missing="bin", categorical_features=[0]).train(
        X, labels, np.ones(len(labels)), 1 - np.eye(3))
    assert tree.categories[0] is not None and tree.features[0] == 0
    unseen = X[:200].copy()
    unseen[::2, 0] = 1000.0  # a category never seen in training
    for rows in (X, unseen):
        np.testing.assert_array_equal(tree.forward_labels(rows), [_walk(tree, row) for row in rows])


def test_a_grown_tree_is_the_tree_its_arrays_make_through_the_checked_constructor():
    """The trainers build their trees without the constructor's checks (:meth:`MultiClassTreeMachine.trusted`):
    the same arrays, read-only, as the checked constructor makes of them, and the same predictions."""
    X, labels = _categorical_data(missing=True)
    tree = CostSensitiveTreeTrainer(3, missing="bin", categorical_features=[0]).train(
        X, labels, np.ones(len(labels)), 1 - np.eye(3))
    checked = MultiClassTreeMachine(tree.features, tree.thresholds, tree.left_children, tree.right_children,
                                    tree.labels, tree.number_of_classes, tree.missing_left, tree.cover,
                                    categories=tree.categories)
    assert tree.categories[0] is not None and tree.missing_left is not None
    assert tree == checked
    for name in ("features", "thresholds", "left_children", "right_children", "labels", "missing_left", "cover"):
        ours, theirs = getattr(tree, name), getattr(checked, name)
        assert ours.dtype == theirs.dtype and not ours.flags.writeable
        np.testing.assert_array_equal(ours, theirs)
    assert tree.depth == checked.depth and tree.gains is None
    for ours, theirs in zip(tree._category_sets, checked._category_sets):
        assert ours.dtype == theirs.dtype and not ours.flags.writeable
        np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(tree.forward_labels(X), checked.forward_labels(X))


@pytest.mark.parametrize("quantized", [True, False])
def test_category_codes_of_any_value_give_the_trees_of_their_ranks(quantized):
    """A categorical feature is split by its categories' order of appearance only: codes 0, 5, 10, ... and
    0, 1, 2, ... give the same trees (up to the category values they name)."""
    X, labels = _categorical_data()
    ranks = X.copy()
    ranks[:, 0] = (X[:, 0] - 2) / 5
    trainer = CostSensitiveTreeTrainer(3, quantized=quantized, categorical_features=[0])
    coded = trainer.train(X, labels, np.ones(len(labels)), 1 - np.eye(3))
    ranked = trainer.train(ranks, labels, np.ones(len(labels)), 1 - np.eye(3))
    np.testing.assert_array_equal(coded.features, ranked.features)
    np.testing.assert_array_equal(coded.labels, ranked.labels)
    for a, b in zip(coded.categories, ranked.categories):
        assert (a is None) == (b is None) and (a is None or np.array_equal((a - 2) / 5, b))


def test_partitions_give_the_in_memory_trees():
    """Uneven partitions, one holding a single row: the same trees, and the weights within 1e-12 relative (each
    partition's sums are added in partition order)."""
    X, labels = _categorical_data(n=2000, missing=True)
    trainer = BAdaCostTrainer(samme_cost_matrix(3), weak_learner=CostSensitiveTreeTrainer(
        3, missing="bin", categorical_features=[0, 2]), number_of_rounds=12)
    memory = trainer.train(X, labels)
    assert any(m.categories is not None for m in memory.weak_machines)
    for rows in ([2000], [700, 1, 1299], [1, 1999]):
        partitioned = PartitionedMultiClassBoosting(trainer).train_on(LocalRows(rows), X, labels)
        assert partitioned.weak_machines == memory.weak_machines
        np.testing.assert_allclose(partitioned.weights, memory.weights, rtol=1e-12)


def test_files_onnx_and_shapley_values_of_categorical_trees(tmp_path):
    X, labels = _categorical_data(missing=True)
    machine = BAdaCostTrainer(samme_cost_matrix(3), weak_learner=CostSensitiveTreeTrainer(
        2, missing="bin", categorical_features=[0]), number_of_rounds=8).train(X, labels)
    path = tmp_path / "categorical.hdf5"
    machine.save(path)
    loaded = BoostedMachine.load(path)
    assert loaded.weak_machines == machine.weak_machines
    np.testing.assert_array_equal(loaded.decision_scores(X), machine.decision_scores(X))
    with h5py.File(path, "r") as handle:
        assert handle.attrs["version"][0] == bob_boost.io.model.CATEGORICAL_FORMAT_VERSION
    # a machine of numeric splits only is unchanged: its compiled table prediction, and the loop's per-tree path,
    # agree with a categorical machine's row-by-row routing
    tree = machine.weak_machines[0]
    numeric = MultiClassTreeMachine(tree.features, tree.thresholds, tree.left_children, tree.right_children,
                                    tree.labels, 3, tree.missing_left)
    assert numeric.categories is None and numeric != tree
    values = machine.shap_values(X[:40])
    np.testing.assert_allclose(values.sum(axis=1), machine.decision_scores(X[:40]), atol=1e-12)
    values = machine.shap_values(X[:10], background=X[100:130])
    np.testing.assert_allclose(values.sum(axis=1), machine.decision_scores(X[:10]), atol=1e-12)
    onnxruntime = pytest.importorskip("onnxruntime", reason="ONNX parity needs the onnx extra")
    from bob_boost.onnx import to_onnx
    model = to_onnx(machine)
    session = onnxruntime.InferenceSession(model.SerializeToString())
    outputs = session.run(None, {session.get_inputs()[0].name: X.astype(np.float32)})
    np.testing.assert_array_equal(outputs[0], np.argmax(machine.decision_scores(X), axis=1))
    np.testing.assert_allclose(outputs[1], machine.decision_scores(X), atol=1e-5)
    pytest.importorskip("pandas", reason="the tree table is a pandas frame")
    table = bob_boost.trees_to_dataframe(machine)
    assert table["categories"].notna().any()


def test_the_estimator_splits_a_pandas_category_column_as_its_codes():
    pd = pytest.importorskip("pandas", reason="category columns are pandas'")
    from bob_boost.sklearn import BAdaCostClassifier
    X, labels = _categorical_data()
    names = np.array(["red", "green", "blue"])[labels]
    frame = pd.DataFrame({"colour": pd.Categorical(X[:, 0].astype(int)), "size": X[:, 1], "n": X[:, 2]})
    by_dtype = BAdaCostClassifier(n_estimators=10, random_state=0).fit(frame, names)
    ranks = np.unique(X[:, 0], return_inverse=True)[1].astype(float)
    codes = np.column_stack([ranks, X[:, 1:]])
    by_index = BAdaCostClassifier(n_estimators=10, random_state=0, categorical_features=[0]).fit(codes, names)
    assert by_dtype.machine_.weak_machines == by_index.machine_.weak_machines
    assert any(m.categories is not None for m in by_dtype.machine_.weak_machines)
    np.testing.assert_array_equal(by_dtype.predict(frame), by_index.predict(codes))
    numeric = BAdaCostClassifier(n_estimators=10, random_state=0, categorical_features=None).fit(codes, names)
    assert all(m.categories is None for m in numeric.machine_.weak_machines)


def test_the_dask_estimator_gives_the_in_memory_categorical_trees(client):
    da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
    from bob_boost.dask import DaskBAdaCostClassifier
    from bob_boost.sklearn import BAdaCostClassifier
    X, labels = _categorical_data(n=1200)
    options = dict(n_estimators=8, random_state=0, categorical_features=[0], early_stopping=False)
    memory = BAdaCostClassifier(**options).fit(X, labels)
    cluster = DaskBAdaCostClassifier(client=client, **options).fit(da.from_array(X, chunks=(500, 3)), labels)
    assert cluster.machine_.weak_machines == memory.machine_.weak_machines
    np.testing.assert_allclose(cluster.machine_.weights, memory.machine_.weights, rtol=1e-12)


@pytest.mark.long
def test_the_command_line_trains_categorical_trees_of_the_multiclass_trainers(tmp_path):
    X, labels = _categorical_data(n=600)
    table = tmp_path / "train.csv"
    np.savetxt(table, np.column_stack([X, labels]), delimiter=",", fmt="%.10g")
    model = tmp_path / "model.hdf5"
    command = [sys.executable, "-m", "bob_boost.cli", "train", str(table), "-o", str(model), "--trainer", "samme",
               "-w", "tree", "-r", "5", "--categorical", "0"]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    machine = BoostedMachine.load(model)
    assert any(m.categories is not None for m in machine.weak_machines)
    refused = subprocess.run([sys.executable, "-m", "bob_boost.cli", "train", str(table), "-o", str(model), "--force",
                              "--trainer", "samme", "-w", "stump", "--categorical", "0"],
                             capture_output=True, text=True)
    assert refused.returncode != 0
    assert "--categorical" in refused.stderr and "weak_learner='stump'" in refused.stderr


def test_bad_categories_are_errors_naming_categorical_features():
    X, labels = _categorical_data(n=300)
    weights, loss = np.ones(300), 1 - np.eye(3)
    for bad in (-1.0, 2.5):
        broken = X.copy()
        broken[7, 0] = bad
        with pytest.raises(ValueError, match="categorical_features: feature 0 holds"):
            CostSensitiveTreeTrainer(2, categorical_features=[0]).train(broken, labels, weights, loss)
    many = X.copy()
    many[:, 0] = np.arange(300) % 257
    with pytest.raises(ValueError, match="categorical_features: feature 0 has 257 categories"):
        CostSensitiveTreeTrainer(2, categorical_features=[0]).train(many, labels, weights, loss)
    with pytest.raises(ValueError, match="categorical_features: feature indices must be in"):
        CostSensitiveTreeTrainer(2, categorical_features=[3]).train(X, labels, weights, loss)
    with pytest.raises(TypeError, match="categorical_features"):
        CostSensitiveTreeTrainer(2, categorical_features=[0.5])
    prepared = CostSensitiveTreeTrainer(2).prepare(X)
    with pytest.raises(ValueError, match="binned with other categorical features"):
        CostSensitiveTreeTrainer(2, categorical_features=[0]).train(prepared, labels, weights, loss)
    untouched = X.copy()
    CostSensitiveTreeTrainer(2, categorical_features=[0]).train(untouched, labels, weights, loss)
    np.testing.assert_array_equal(untouched, X)


def test_a_categorical_split_keeps_the_least_leaf_weight():
    """With ``min_weight_fraction_leaf`` every child of a categorical split holds that share of the weight."""
    X, labels = _categorical_data(n=1000, categories=9)
    weights = np.random.default_rng(2).random(labels.size)
    chosen = []
    for fraction in (0.0, 0.45):  # the unconstrained split leaves 43% of the weight on its lighter side
        tree = CostSensitiveTreeTrainer(1, categorical_features=[0], min_weight_fraction_leaf=fraction).train(
            X[:, :1], labels, weights, 1 - np.eye(3))
        assert tree.features[0] == 0 and tree.categories[0] is not None
        left = np.isin(X[:, 0], tree.categories[0])
        lighter = min(weights[left].sum(), weights[~left].sum())
        assert lighter >= fraction * weights.sum() * (1 - 1e-12)
        chosen.append((tree.categories[0].tolist(), lighter / weights.sum()))
    assert chosen[0][1] < 0.45 and chosen[0][0] != chosen[1][0]
