"""Categorical splits of gradient trees: the best partition, the routing of unseen values, files, ONNX,
partitions, the estimators' categorical_features, and bad input."""
from __future__ import annotations

import gzip
import itertools
from pathlib import Path

import h5py
import numpy as np
import pytest

import bob_boost
from bob_boost import BoostedMachine, Boosting, LogitLoss, SquaredLoss, TreeMachine, TreeTrainer
from bob_boost.boosting.partitions import LocalRows
from bob_boost.engine.categorical import (INSERTION_SORT_MOST, _sort_by_keys, best_category_split,
                                          category_parameters, has_category, scan_categories, workspace)
from bob_boost.trainers.partitioned import PartitionedBoosting

DATA = Path(__file__).parent / "data"

#: Parameters that leave the ordered prefixes exact: no smoothing, no extra l2, no cap, no one-vs-rest.
EXACT = category_parameters(0.0, 0.0, 1 << 20, 0, 0)


def _newton_gain(total: np.ndarray, left: np.ndarray) -> float:
    right = total - left
    return left[0] ** 2 / left[1] + right[0] ** 2 / right[1] - total[0] ** 2 / total[1]


def _best_partition(sums: np.ndarray) -> float:
    """The largest Newton gain over every two-way partition of the categories (each counted once)."""
    total = sums.sum(axis=0)
    k = sums.shape[0]
    return max(_newton_gain(total, sums[[0, *rest]].sum(axis=0))
               for size in range(0, k - 1) for rest in itertools.combinations(range(1, k), size))


def test_the_ordered_prefixes_hold_the_best_of_all_partitions():
    """Fisher's property: with one output and no smoothing, the G/H order's prefixes contain the partition
    of largest gain among all 2^(k-1) - 1, checked by brute force for k = 2 .. 9."""
    rng = np.random.default_rng(1)
    bits = np.zeros(4, dtype=np.uint64)
    for _ in range(200):
        k = int(rng.integers(2, 10))
        sums = np.column_stack([rng.normal(size=k), rng.uniform(0.1, 2.0, size=k)])
        counts = rng.integers(1, 20, size=k).astype(np.int32)
        total = sums.sum(axis=0)
        gain = best_category_split(sums, counts, 0, k, total, int(counts.sum()), 0.0, 1, 0.0, 1e-12, EXACT,
                                   -np.inf, np.inf, False, bits, workspace(2, 1))
        chosen = [c for c in range(k) if has_category(bits, c)]
        best = _best_partition(sums)
        assert gain == pytest.approx(best, rel=1e-9)
        assert _newton_gain(total, sums[chosen].sum(axis=0)) == pytest.approx(best, rel=1e-9)


def test_one_against_the_rest_takes_the_best_single_category():
    rng = np.random.default_rng(2)
    bits = np.zeros(4, dtype=np.uint64)
    for _ in range(50):
        k = int(rng.integers(2, 5))
        sums = np.column_stack([rng.normal(size=k), rng.uniform(0.1, 2.0, size=k)])
        counts = np.full(k, 5, dtype=np.int32)
        total = sums.sum(axis=0)
        gain = best_category_split(sums, counts, 0, k, total, 5 * k, 0.0, 1, 0.0, 1e-12,
                                   category_parameters(0.0, 0.0, 32, 4, 0), -np.inf, np.inf, False, bits,
                                   workspace(2, 1))
        singles = [_newton_gain(total, sums[c]) for c in range(k)]
        chosen = [c for c in range(k) if has_category(bits, c)]
        assert len(chosen) == 1  # two categories: either alone is the same partition, with the same gain
        assert singles[chosen[0]] == pytest.approx(max(singles), rel=1e-9)
        assert gain == pytest.approx(max(singles), rel=1e-9)


def test_the_split_scan_scores_one_output_as_the_set_search_does():
    """The scan's scalar path for one output gives every feature the gain best_category_split returns, bit for
    bit: one-vs-rest and ordered prefixes, smoothing, caps, small groups, bounds, missing values, empty bins and
    exact ties."""
    rng = np.random.default_rng(3)
    bits = np.zeros(4, dtype=np.uint64)
    compared = 0
    for trial in range(600):
        k = int(rng.integers(2, 40))
        counts = rng.integers(0, 60, size=k).astype(np.int32)
        sums = np.column_stack([rng.normal(size=k) * counts, rng.uniform(0.05, 0.3, size=k) * counts])
        if trial % 3 == 0:  # exact ties: categories with the same sums
            sums[1::2] = sums[0]
            counts[1::2] = counts[0]
        missing = bool(trial % 2)
        params = category_parameters(float(rng.choice([0.0, 10.0])), float(rng.choice([0.0, 10.0])),
                                     int(rng.choice([1, 4, 32])), int(rng.choice([0, 4, 8])),
                                     int(rng.choice([0, 20, 100])))
        bounds = ((-np.inf, np.inf), (-0.1, 0.2), (-0.1, np.inf), (-np.inf, 0.2))
        lower, upper = bounds[0 if trial % 4 else trial % 3 + 1]
        total, count = sums.sum(axis=0), int(counts.sum())
        min_samples, min_hessian = int(rng.choice([1, 20])), float(rng.choice([0.0, 1.0]))
        gains = np.full(2 * k, np.nan)
        scan_categories(sums, counts, np.full(1, -1, dtype=np.int64), np.array([0, k]), total, count, 0.5,
                        min_samples, min_hessian, 1e-12, missing, gains, np.ones(1, dtype=bool),
                        np.ones(1, dtype=bool), params, lower, upper, workspace(2, 1))
        gain = best_category_split(sums, counts, 0, k, total, count, 0.5, min_samples, min_hessian, 1e-12, params,
                                   lower, upper, missing, bits, workspace(2, 1))
        if (counts > 0).sum() - (missing and counts[-1] > 0) >= 2:
            assert gains[0] == gain, trial
            compared += gain > 0
    assert compared > 200


def test_categories_sort_as_numpys_stable_sort_puts_their_keys():
    """A node's categories are ordered as numpy's stable merge sort orders their keys (ties in bin order, NaN
    last), with few categories (insertion) and with many."""
    rng = np.random.default_rng(4)
    for trial in range(400):
        m = int(rng.integers(1, 3 * INSERTION_SORT_MOST))
        keys = (rng.choice([0.5, -1.0, 2.0, np.nan, 0.0], size=m) if trial % 2
                else rng.normal(size=m).astype(np.float32).astype(np.float64))
        ordered = rng.permutation(1000)[:m].astype(np.int64)
        expected = ordered[np.argsort(keys, kind="mergesort")]
        _sort_by_keys(ordered, keys, m)
        np.testing.assert_array_equal(ordered, expected)


def _category_data(n=3000, seed=0, missing=False):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 12, n)
    effect = rng.normal(size=12)
    X = np.column_stack([codes, rng.normal(size=n), rng.integers(0, 3, n)]).astype(float)
    y = np.where(effect[codes] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=n) > 0, 1.0, -1.0)
    if missing:
        X[rng.random(n) < 0.1, 0] = np.nan
    return X, y


def test_a_tree_splits_a_categorical_root_by_the_best_partition_of_its_categories():
    X, y = _category_data()
    trainer = TreeTrainer(max_depth=1, min_samples_leaf=1, min_hessian_leaf=0.0, categorical_features=[0],
                          cat_smooth=0.0, cat_l2=0.0, max_cat_to_onehot=0, min_data_per_group=0,
                          max_cat_threshold=64, n_threads=1)
    gradient = -y[:, np.newaxis]
    machine = trainer.train(X[:, :1], gradient, np.ones_like(gradient))
    per_category = np.array([[gradient[X[:, 0] == c].sum(), (X[:, 0] == c).sum()] for c in range(12)])
    left = np.isin(np.arange(12), machine.categories[0])
    assert _newton_gain(per_category.sum(axis=0), per_category[left].sum(axis=0)) == pytest.approx(
        _best_partition(per_category), rel=1e-9)


def test_a_categorical_node_sends_its_categories_left_and_every_other_value_right():
    machine = TreeMachine([0, -1, -1], [0.0, 0.0, 0.0], [1, -1, -1], [2, -1, -1], [[0.0], [-1.0], [1.0]],
                          missing_left=[True, False, False], categories=[[1, 3], None, None])
    rows = np.array([[1.0], [3.0], [2.0], [7.0], [np.nan], [0.0]])
    assert machine.forward(rows)[:, 0].tolist() == [-1.0, -1.0, 1.0, 1.0, -1.0, 1.0]
    assert machine.categories[0].tolist() == [1.0, 3.0] and machine.categories[1] is None


def test_trees_on_categories_save_as_version_3_and_load_the_same(tmp_path):
    X, y = _category_data(missing=True)
    machine = Boosting(TreeTrainer(categorical_features=[0, 2], missing="bin", min_data_per_group=10),
                       LogitLoss()).train(X, y, 10)
    assert any(c is not None for c in machine.weak_machines[0].categories)
    path = tmp_path / "categorical.hdf5"
    machine.save(path)
    with h5py.File(path, "r") as h5:
        assert int(h5.attrs["version"][0]) == 3
    loaded = BoostedMachine.load(path)
    assert loaded.weak_machines == machine.weak_machines
    assert np.array_equal(loaded.decision_scores(X), machine.decision_scores(X))
    numeric = Boosting(TreeTrainer(), LogitLoss()).train(X[:, 1:2], y, 2)
    numeric.save(tmp_path / "numeric.hdf5")
    with h5py.File(tmp_path / "numeric.hdf5", "r") as h5:
        assert int(h5.attrs["version"][0]) == 2  # what bob.learn.boosting and earlier readers accept


def test_onnx_export_of_categorical_splits_predicts_the_same():
    pytest.importorskip("onnx", reason="ONNX export is an optional extra (pip install bob_boost[onnx])")
    ort = pytest.importorskip("onnxruntime", reason="ONNX export is an optional extra (pip install bob_boost[onnx])")
    from bob_boost.onnx import to_onnx
    X, y = _category_data(missing=True)
    machine = Boosting(TreeTrainer(categorical_features=[0, 2], missing="bin", min_data_per_group=10),
                       LogitLoss()).train(X, y, 10)
    rng = np.random.default_rng(5)
    test = np.column_stack([rng.integers(0, 15, 400), rng.normal(size=400), rng.integers(0, 4, 400)]).astype(float)
    test[::7, 0] = np.nan
    session = ort.InferenceSession(to_onnx(machine).SerializeToString())
    scores = session.run(["scores"], {session.get_inputs()[0].name: test.astype(np.float32)})[0]
    ours = machine.decision_scores(test.astype(np.float32))
    np.testing.assert_allclose(scores.reshape(ours.shape), ours, rtol=1e-5, atol=1e-5)


def test_sampled_and_quantised_rounds_route_categories_as_the_machine_does():
    """The training outputs of rows a sampled tree did not grow on come from routing their codes; they are
    the machine's own outputs, for float and quantised gradients."""
    X, y = _category_data(missing=True)
    gradient = -y[:, np.newaxis]
    rows = np.flatnonzero(np.random.default_rng(3).random(y.size) < 0.5)
    for quantised in (None, 8):
        trainer = TreeTrainer(categorical_features=[0, 2], missing="bin", min_data_per_group=10,
                              quantized_gradients=quantised, n_threads=1)
        machine, outputs = trainer._grow(trainer.prepare(X), gradient, np.ones_like(gradient), 0, rows=rows)
        assert machine.categories is not None
        np.testing.assert_array_equal(outputs, machine.forward(X))


def test_shared_trees_of_several_outputs_split_categories_too():
    X, y = _category_data()
    targets = np.column_stack([y, -y, np.sign(X[:, 1])])
    machine = Boosting(TreeTrainer(categorical_features=[0], multi_output="shared", min_data_per_group=10),
                       SquaredLoss()).train(X, targets, 5)
    assert machine.weak_machines[0].categories is not None
    assert machine.decision_scores(X).shape == (y.size, 3)


def test_partitions_grow_the_in_memory_categorical_trees():
    X, y = _category_data(n=900, seed=7, missing=True)
    tree = TreeTrainer(max_depth=3, min_samples_leaf=10, missing="bin", categorical_features=[0, 2],
                       min_data_per_group=10, n_threads=1)
    loss = LogitLoss()
    partitioned = PartitionedBoosting(loss, weak_learner="tree", tree=tree, learning_rate=0.3).train_on(
        LocalRows((400, 120, 380)), X, y, 4)
    memory = Boosting(tree, loss, learning_rate=0.3).train(X, y, 4)
    for ours, theirs in zip(partitioned.weak_machines, memory.weak_machines):
        assert ours.features.tolist() == theirs.features.tolist()
        assert [None if c is None else c.tolist() for c in ours.categories] == \
               [None if c is None else c.tolist() for c in theirs.categories]
        np.testing.assert_allclose(ours.values, theirs.values, rtol=1e-10, atol=1e-13)


@pytest.mark.long
def test_codes_and_a_pandas_category_column_give_the_same_model(tmp_path):
    pd = pytest.importorskip("pandas", reason="pandas category columns need pandas")
    from bob_boost.sklearn import BoostingClassifier
    X, y = _category_data()
    names = np.array([f"city {c}" for c in range(12)])
    frame = pd.DataFrame({"city": pd.Categorical(names[X[:, 0].astype(int)], categories=names), "x": X[:, 1],
                          "size": X[:, 2]})
    codes = BoostingClassifier(weak_learner="tree", categorical_features=[0], random_state=0).fit(X, y)
    dtype = BoostingClassifier(weak_learner="tree", random_state=0).fit(frame, y)
    assert dtype.machine_.weak_machines == codes.machine_.weak_machines
    assert np.array_equal(dtype.decision_function(frame), codes.decision_function(X))
    unseen = frame.assign(city=pd.Categorical(["a new city"] * y.size))
    coded_unseen = np.column_stack([np.full(y.size, 12.0), X[:, 1:]])  # a code no split has seen
    assert np.array_equal(dtype.decision_function(unseen), codes.decision_function(coded_unseen))
    dtype.save(tmp_path / "frame.hdf5")
    loaded = BoostingClassifier.load(tmp_path / "frame.hdf5")
    assert np.array_equal(loaded.decision_function(frame), dtype.decision_function(frame))
    assert frame["city"].dtype == "category"  # the caller's frame is not modified


def _frames(city: np.ndarray, x: np.ndarray) -> dict:
    """The same two columns as every kind of data frame there is a library for here."""
    frames = {}
    pd = pytest.importorskip("pandas", reason="data frames need pandas")
    frames["pandas category"] = pd.DataFrame({"city": pd.Categorical(city, categories=sorted(set(city))), "x": x})
    try:
        import pyarrow as pa
    except ImportError:  # the arrow and polars extras
        return frames
    table = pa.table({"city": pa.array(city).dictionary_encode(), "x": x})
    frames["pyarrow dictionary"] = table
    frames["pandas Arrow dictionary"] = table.to_pandas(types_mapper=pd.ArrowDtype)
    try:
        import polars as pl
    except ImportError:
        return frames
    frames["polars Categorical"] = pl.DataFrame({"city": pl.Series(city).cast(pl.Categorical), "x": x})
    frames["polars Enum"] = pl.DataFrame({"city": pl.Series(city).cast(pl.Enum(sorted(set(city)))), "x": x})
    return frames


def test_every_kind_of_frame_gives_the_model_of_the_codes():
    """pandas, pandas on Arrow, pyarrow and polars category columns (by dtype) and a string column (named)
    give the model of the same categories as codes; new frames map their strings alike, an unseen one going
    where an unseen code goes."""
    from bob_boost.sklearn import BoostingClassifier
    X, y = _category_data(n=1500)
    names = np.array([f"city {c:02d}" for c in range(12)])
    city = names[X[:, 0].astype(int)]
    codes = BoostingClassifier(weak_learner="tree", categorical_features=[0], random_state=0).fit(X[:, :2], y)
    frames = _frames(city, X[:, 1])
    for kind, frame in frames.items():
        fitted = BoostingClassifier(weak_learner="tree", random_state=0).fit(frame, y)
        assert fitted.machine_.weak_machines == codes.machine_.weak_machines, kind
        assert fitted.feature_names_in_.tolist() == ["city", "x"]
        assert np.array_equal(fitted.decision_function(frame), codes.decision_function(X[:, :2])), kind
    if "polars Categorical" in frames:
        import polars as pl
        fitted = BoostingClassifier(weak_learner="tree", random_state=0).fit(frames["polars Categorical"], y)
        new = pl.DataFrame({"city": ["city 03", "a new city"], "x": [0.5, 0.5]})  # plain strings
        named = BoostingClassifier(weak_learner="tree", random_state=0, categorical_features=["city"]).fit(
            pl.DataFrame({"city": city, "x": X[:, 1]}), y)
        assert named.machine_.weak_machines == codes.machine_.weak_machines
        expected = codes.decision_function(np.array([[3.0, 0.5], [12.0, 0.5]]))
        assert np.array_equal(named.decision_function(new), expected)
        assert np.array_equal(fitted.decision_function(new.with_columns(pl.col("city").cast(pl.Categorical))),
                              expected)


def test_text_columns_must_be_named_categories():
    pd = pytest.importorskip("pandas", reason="data frames need pandas")
    from bob_boost.sklearn import BoostingClassifier
    frame = pd.DataFrame({"city": ["a", "b"] * 50, "x": np.arange(100.0)})
    with pytest.raises(ValueError, match="X: column 'city' holds text; name it in categorical_features"):
        BoostingClassifier(weak_learner="tree").fit(frame, np.arange(100) % 2)


def test_bad_categorical_input_gets_clear_errors():
    X, y = _category_data(n=400)
    gradient = -y[:, np.newaxis]
    hessian = np.ones_like(gradient)
    with pytest.raises(ValueError, match="categorical_features: feature 0 holds -1.0"):
        TreeTrainer(categorical_features=[0]).train(np.where(X == 3, -1.0, X), gradient, hessian)
    with pytest.raises(ValueError, match="categorical_features: feature 1 holds"):
        TreeTrainer(categorical_features=[1]).train(X, gradient, hessian)
    many = np.column_stack([np.arange(400) % 300, X[:, 1]]).astype(float)
    with pytest.raises(ValueError, match="feature 0 has 300 categories, more than the 256"):
        TreeTrainer(categorical_features=[0]).train(many, gradient, hessian)
    with pytest.raises(ValueError, match="lists a feature twice"):
        TreeTrainer(categorical_features=[0, 0])
    with pytest.raises(ValueError, match=r"must be in \[0, 3\)"):
        TreeTrainer(categorical_features=[3]).train(X, gradient, hessian)
    with pytest.raises(ValueError, match="a categorical feature has no order"):
        TreeTrainer(categorical_features=[0], monotonic_cst=[1, 0, 0]).train(X, gradient, hessian)
    with pytest.raises(ValueError, match="cat_smooth: must be >= 0"):
        TreeTrainer(cat_smooth=-1.0)
    with pytest.raises(TypeError, match="max_cat_threshold: expected an integer"):
        TreeTrainer(max_cat_threshold=2.5)


def test_estimators_refuse_categories_they_cannot_split():
    from bob_boost.sklearn import BoostingClassifier
    X, y = _category_data(n=400)
    with pytest.raises(ValueError, match="names columns, but X has no column names"):
        BoostingClassifier(weak_learner="tree", categorical_features=["city"]).fit(X, y)
    with pytest.raises(ValueError, match="categorical_features: must be 'from_dtype'"):
        BoostingClassifier(weak_learner="tree", categorical_features="auto").fit(X, y)
    for trainer, weak in (("samme", "stump"), ("badacost", "lut")):
        with pytest.raises(ValueError, match=f"categorical_features: split by .* got trainer='{trainer}' with "
                                             f"weak_learner='{weak}'"):
            bob_boost.recipes.make_recipe(trainer, number_of_classes=3, weak_learner=weak, categorical_features=[0],
                                          cost_matrix=1 - np.eye(3))


def test_adaboostdb_splits_a_frames_category_column_by_sets():
    """AdaBoostDBClassifier takes a pandas category column as categories (``"from_dtype"``): its stumps on it hold
    sets, it beats the same data read as ordered codes, and a category ``fit`` never saw gets the sign outside."""
    pd = pytest.importorskip("pandas", reason="pandas (the test extra) makes the category column")
    from bob_boost.sklearn import AdaBoostDBClassifier
    X, y = _category_data(n=1600, seed=3)
    frame = pd.DataFrame({"city": pd.Categorical(X[:, 0].astype(int)), "x": X[:, 1]})
    train, test = slice(0, 1200), slice(1200, None)
    model = AdaBoostDBClassifier(n_estimators=20, early_stopping=False).fit(frame[train], y[train])
    on_city = [m for m in model.machine_.weak_machines if m.index == 0]
    assert on_city and all(m.categories is not None for m in on_city)
    ordered = AdaBoostDBClassifier(n_estimators=20, early_stopping=False, categorical_features=None).fit(
        X[train, :2], y[train])
    assert model.score(frame[test], y[test]) > ordered.score(X[test, :2], y[test])
    # the frame's 12 categories reach the model as positions 0 .. 11: position 12 was never seen
    assert all(m.forward(np.array([[12.0, 0.0]]))[0, 0] == -m.polarity for m in on_city)
    unseen = pd.DataFrame({"city": pd.Categorical([99], categories=[99]), "x": [0.0]})
    assert model.predict(unseen).shape == (1,)


def test_a_categorical_stump_takes_the_best_of_all_category_sets():
    """Its set (the categories of negative gradient sum) gains as much as the best of every subset, checked
    by brute force; NaN is one more category."""
    rng = np.random.default_rng(4)
    for _ in range(20):
        k = int(rng.integers(2, 8))
        column = rng.integers(0, k, 300).astype(float)
        column[rng.random(300) < 0.1] = np.nan
        gradient = rng.normal(size=300) + rng.normal(size=k + 1)[np.nan_to_num(column, nan=k).astype(int)]
        sums = np.bincount(np.nan_to_num(column, nan=k).astype(int), weights=gradient)
        if not (np.any(sums < 0) and np.any(sums > 0)):
            continue  # no set splits the gradient: every set gains less than the constant
        stump = bob_boost.StumpTrainer(categorical_features=[0], missing="bin").train(column[:, np.newaxis],
                                                                                      gradient)
        codes = np.nan_to_num(column, nan=k)
        present = np.unique(codes)
        best = max(abs(np.sum(np.where(np.isin(codes, subset), -gradient, gradient)))
                   for size in range(1, present.size) for subset in itertools.combinations(present, size))
        assert abs(np.sum(-gradient * stump.forward(column[:, np.newaxis])[:, 0])) == pytest.approx(best, rel=1e-9)
        assert stump.categories is not None and stump.missing_above is not None


def test_categorical_stumps_in_memory_on_partitions_in_files_and_onnx(tmp_path):
    X, y = _category_data(missing=True)
    trainer = bob_boost.StumpTrainer(categorical_features=[0, 2], missing="bin")
    memory = Boosting(trainer, LogitLoss()).train(X, y, 15)
    assert any(stump.categories is not None for stump in memory.weak_machines)
    partitioned = PartitionedBoosting(LogitLoss(), categorical_features=[0, 2], missing="bin").train_on(
        LocalRows((1000, 300, 1700)), X, y, 15)
    assert partitioned.weak_machines == memory.weak_machines
    np.testing.assert_allclose(partitioned.weights, memory.weights, rtol=1e-9)
    memory.save(tmp_path / "stumps.hdf5")
    loaded = BoostedMachine.load(tmp_path / "stumps.hdf5")
    assert loaded.weak_machines == memory.weak_machines
    with h5py.File(tmp_path / "stumps.hdf5", "r") as h5:
        assert int(h5.attrs["version"][0]) == 3
    unseen = X.copy()
    unseen[::5, 0] = 40.0
    assert np.array_equal(loaded.decision_scores(unseen), memory.decision_scores(unseen))
    ort = pytest.importorskip("onnxruntime", reason="ONNX export is an optional extra (pip install bob_boost[onnx])")
    from bob_boost.onnx import to_onnx
    session = ort.InferenceSession(to_onnx(memory).SerializeToString())
    scores = session.run(["scores"], {session.get_inputs()[0].name: unseen.astype(np.float32)})[0]
    np.testing.assert_allclose(scores.reshape(-1), memory.decision_scores(unseen.astype(np.float32))[:, 0],
                               rtol=1e-5, atol=1e-5)


def test_partitions_grow_the_in_memory_trees_where_categories_tie_exactly():
    """UCI car is a full factorial design: categories of different features have equal gradient sums and gains
    in exact arithmetic, which partitions round otherwise; the trees are still the in-memory ones (before
    ties were judged against the children's scores, round 2 split another feature)."""
    with gzip.open(DATA / "uci" / "car.tsv.gz", "rt") as handle:
        handle.readline()
        table = np.loadtxt(handle, delimiter="\t")
    X, labels = table[:, :-1], table[:, -1].astype(int)
    tree = TreeTrainer(categorical_features=list(range(6)), n_threads=1)
    loss = bob_boost.SoftmaxLoss(4)
    memory = Boosting(tree, loss).train(X, labels, 5)
    partitioned = PartitionedBoosting(loss, weak_learner="tree", tree=tree).train_on(LocalRows((576, 345, 807)), X,
                                                                                      labels, 5)
    for ours, theirs in zip(partitioned.weak_machines, memory.weak_machines):
        assert ours.features.tolist() == theirs.features.tolist()
        assert [None if c is None else c.tolist() for c in ours.categories] == \
               [None if c is None else c.tolist() for c in theirs.categories]
    np.testing.assert_allclose(partitioned.decision_scores(X), memory.decision_scores(X), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("loss", [bob_boost.AbsoluteErrorLoss(), bob_boost.QuantileLoss(0.3)],
                         ids=["absolute", "quantile"])
def test_losses_that_renew_the_leaves_keep_the_categorical_splits(loss):
    rng = np.random.default_rng(0)
    features = rng.normal(size=(2000, 3))
    features[:, 0] = rng.integers(0, 8, 2000)
    targets = np.where(np.isin(features[:, 0], [1, 4, 6]), 3.0, -1.0) + features[:, 1] + 0.1 * rng.normal(size=2000)
    tree = bob_boost.TreeTrainer(max_leaves=6, categorical_features=[0], min_data_per_group=5)
    machine = bob_boost.Boosting(tree, loss, learning_rate=0.5).train(features, targets, 5)
    assert all(weak.category_layout is not None for weak in machine.weak_machines)
    # the renewed leaves are the medians (quantiles) of the rows the categorical splits sent there
    assert np.mean(np.abs(machine.decision_scores(features)[:, 0] - targets)) < 0.5
