"""Shapley values of a machine's scores, interventional (against background rows) and path-dependent (the trees'
training cover): exact against a brute-force enumeration of every coalition of features, for every kind of weak
machine; they add up to the scores; the same for any thread count, through the estimators, after save and load;
bad input refused."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import bob_boost
from bob_boost import BoostedMachine

N_FEATURES = 5


def _data(seed=1, n=500, missing=False, integer=False):
    rng = np.random.default_rng(seed)
    features = rng.integers(0, 8, size=(n, N_FEATURES)).astype(float) if integer else rng.normal(size=(n, N_FEATURES))
    features[:, 3] = rng.integers(0, 6, n)
    classes = (features[:, 0] > features[:, 0].mean()).astype(int) + (features[:, 1] * features[:, 2] > 0) + \
        (features[:, 3] > 2)
    if missing:
        features[rng.random(features.shape) < 0.1] = np.nan
    return features, classes


def brute_force(machine: BoostedMachine, rows: np.ndarray, background: np.ndarray) -> np.ndarray:
    """(#rows, #features, #outputs) Shapley values from their definition: the game of a coalition ``S`` is the
    mean score of the background rows with the features of ``S`` taken from the row, every ``S`` enumerated."""
    width = rows.shape[1]
    game = {}
    for members in itertools.product((False, True), repeat=width):
        mixed = np.repeat(background[np.newaxis], rows.shape[0], axis=0)
        mixed[:, :, list(members)] = rows[:, np.newaxis, list(members)]
        scores = machine.decision_scores(mixed.reshape(-1, width))
        game[members] = scores.reshape(rows.shape[0], background.shape[0], -1).mean(axis=1)
    return shapley(game, width)


def shapley(game: dict, width: int) -> np.ndarray:
    """(..., #features, #outputs) each feature's Shapley value of a game given for every coalition (a tuple of
    ``width`` booleans) as (..., #outputs) arrays: its weighted mean gain on joining each coalition."""
    empty = game[(False,) * width]
    values = np.zeros(empty.shape[:-1] + (width, empty.shape[-1]))
    for members, value in game.items():
        size = sum(members)
        for j in range(width):
            if not members[j]:
                joined = members[:j] + (True,) + members[j + 1:]
                share = math.factorial(size) * math.factorial(width - size - 1) / math.factorial(width)
                values[..., j, :] += share * (game[joined] - value)
    return values


def _signed(classes):
    return np.where(classes > 1, 1.0, -1.0)


MACHINES = {
    "stumps, exact thresholds": lambda X, c: bob_boost.Boosting(bob_boost.StumpTrainer(max_bins=None),
                                                               bob_boost.LogitLoss()).train(X, _signed(c), 8),
    "stumps, categorical": lambda X, c: bob_boost.Boosting(bob_boost.StumpTrainer(categorical_features=[3]),
                                                          bob_boost.LogitLoss()).train(X, _signed(c), 8),
    "gradient trees, leaf-wise, intercept": lambda X, c: bob_boost.Boosting(
        bob_boost.TreeTrainer(max_leaves=8), bob_boost.LogitLoss(), learning_rate=0.3).train(
        X, _signed(c), 6, baseline="auto"),
    "gradient trees, level-wise": lambda X, c: bob_boost.Boosting(
        bob_boost.TreeTrainer(max_depth=3, growth="levelwise"), bob_boost.SquaredLoss(), learning_rate=0.3).train(
        X, X[:, 0] * X[:, 1] + c, 6),
    "gradient trees, categorical": lambda X, c: bob_boost.Boosting(
        bob_boost.TreeTrainer(max_leaves=6, categorical_features=[3], min_data_per_group=5),
        bob_boost.LogitLoss(), learning_rate=0.3).train(X, _signed(c), 6),
    "softmax trees, one per class": lambda X, c: bob_boost.Boosting(
        bob_boost.TreeTrainer(max_leaves=6), bob_boost.SoftmaxLoss(4), learning_rate=0.3).train(X, c, 4),
    "softmax trees, shared": lambda X, c: bob_boost.Boosting(
        bob_boost.TreeTrainer(max_leaves=6, multi_output="shared"), bob_boost.SoftmaxLoss(4),
        learning_rate=0.3).train(X, c, 4),
    "BAdaCost trees": lambda X, c: bob_boost.BAdaCostTrainer(
        np.ones((4, 4)) - np.eye(4), bob_boost.CostSensitiveTreeTrainer(max_depth=2)).train(X, c, 5),
    "SAMME stumps": lambda X, c: bob_boost.SAMMETrainer(bob_boost.MultiClassStumpTrainer()).train(X, c, 5),
}

MISSING = {
    "stumps, missing values": lambda X, c: bob_boost.Boosting(bob_boost.StumpTrainer(missing="bin"),
                                                             bob_boost.LogitLoss()).train(X, _signed(c), 8),
    "gradient trees, missing values": lambda X, c: bob_boost.Boosting(
        bob_boost.TreeTrainer(max_leaves=6, missing="bin"), bob_boost.LogitLoss(), learning_rate=0.3).train(
        X, _signed(c), 6),
}

TABLES = {
    "look-up tables, one output": lambda X, c: bob_boost.Boosting(bob_boost.LUTTrainer(8), bob_boost.LogitLoss()
                                                                 ).train(X, _signed(c), 8),
    "look-up tables, four outputs": lambda X, c: bob_boost.Boosting(
        bob_boost.LUTTrainer(8, 4, "independent"), bob_boost.LogitLoss()).train(
        X, np.where(np.arange(4) == c[:, np.newaxis], 1.0, -1.0), 6),
    "multi-class tables": lambda X, c: bob_boost.SAMMETrainer(bob_boost.MultiClassLUTTrainer(8)).train(X, c, 5),
}


def _check(machine, features):
    rows, background = features[200:225], features[:17]
    values = machine.shap_values(rows, background)
    outputs = machine.number_of_outputs
    assert values.shape == ((25, N_FEATURES + 1) if outputs == 1 else (25, N_FEATURES + 1, outputs))
    values = values.reshape(25, N_FEATURES + 1, outputs)
    np.testing.assert_allclose(values[:, :N_FEATURES], brute_force(machine, rows, background), rtol=1e-9,
                               atol=1e-12)
    # local accuracy: the values and the expected value add up to the score
    np.testing.assert_allclose(values.sum(axis=1), machine.decision_scores(rows), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(values[:, N_FEATURES], np.repeat(
        machine.decision_scores(background).mean(axis=0)[np.newaxis], 25, axis=0), rtol=1e-9, atol=1e-12)
    return values


@pytest.mark.parametrize("name", list(MACHINES))
def test_values_are_the_brute_force_shapley_values(name):
    features, classes = _data()
    machine = MACHINES[name](features, classes)
    if "categorical" in name and "trees" in name:
        assert any(w.category_layout is not None for w in machine.weak_machines)  # sets were split on
    _check(machine, features)


@pytest.mark.parametrize("name", list(MISSING))
def test_missing_values_take_their_learnt_side(name):
    features, classes = _data(missing=True)
    machine = MISSING[name](features, classes)
    values = _check(machine, features)
    assert np.isfinite(values).all()


@pytest.mark.parametrize("name", list(TABLES))
def test_look_up_tables(name):
    features, classes = _data(integer=True)
    _check(TABLES[name](features, classes), features)


def _shap_trees(machine: BoostedMachine) -> dict:
    """The one-output gradient trees of ``machine`` in the ``shap`` package's own tree format: left where
    ``x <= threshold``, so each threshold becomes the largest float below ours (ours: right where ``x >=``)."""
    trees = []
    for weight, weak in zip(machine.weights[:, 0], machine.weak_machines):
        bounds = list(weak.roots) + [weak.features.size]
        for start, stop in zip(bounds[:-1], bounds[1:]):
            inner = weak.features[start:stop] >= 0
            left = np.where(inner, weak.left_children[start:stop] - start, -1).astype(np.int32)
            trees.append({"children_left": left, "children_default": left,
                          "children_right": np.where(inner, weak.right_children[start:stop] - start, -1
                                                     ).astype(np.int32),
                          "features": np.where(inner, weak.features[start:stop], -2).astype(np.int32),
                          "thresholds": np.where(inner, np.nextafter(weak.thresholds[start:stop], -np.inf), 0.0),
                          "values": weight * weak.values[start:stop, :1], "node_sample_weight": np.ones(stop - start)})
    return {"trees": trees, "base_offset": float(machine.baseline[0])}


def test_gradient_trees_give_the_reference_implementations_values():
    shap = pytest.importorskip("shap", reason="the reference implementation is in the test extra")
    features, classes = _data(n=2000, seed=3)
    machine = bob_boost.Boosting(bob_boost.TreeTrainer(max_depth=4, growth="levelwise"), bob_boost.LogitLoss(),
                                 learning_rate=0.3).train(features, _signed(classes), 20, baseline="auto")
    background, rows = features[:50], features[100:300]
    explainer = shap.TreeExplainer(_shap_trees(machine), data=background, feature_perturbation="interventional")
    values = machine.shap_values(rows, background)
    # shap's trees hold float32 values: agreement to their precision
    np.testing.assert_allclose(values[:, :-1], explainer.shap_values(rows), rtol=0, atol=1e-6)
    assert values[0, -1] == pytest.approx(float(np.ravel(explainer.expected_value)[0]), abs=1e-6)


def test_the_values_do_not_depend_on_the_thread_count():
    features, classes = _data(n=3000, seed=2)
    machine = MACHINES["gradient trees, leaf-wise, intercept"](features, classes)
    machine.n_threads = 1
    one = machine.shap_values(features, features[:40])
    machine.n_threads = 2
    np.testing.assert_array_equal(machine.shap_values(features, features[:40]), one)


def test_saved_machines_explain_alike(tmp_path):
    features, classes = _data()
    machine = MACHINES["gradient trees, categorical"](features, classes)
    machine.save(tmp_path / "m.hdf5")
    loaded = BoostedMachine.load(tmp_path / "m.hdf5")
    np.testing.assert_array_equal(loaded.shap_values(features[:30], features[30:50]),
                                  machine.shap_values(features[:30], features[30:50]))


def test_the_estimators_explain_their_decision_scores(tmp_path):
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    from bob_boost.sklearn import BAdaCostClassifier, BoostingClassifier, BoostingRegressor, load_estimator

    features, classes = _data()
    background = features[:20]
    classifier = BoostingClassifier(weak_learner="tree", n_estimators=10).fit(features, classes > 1)
    values = classifier.shap_values(features[:30], background)
    assert values.shape == (30, N_FEATURES + 1)
    np.testing.assert_allclose(values.sum(axis=1), classifier.decision_function(features[:30]), rtol=1e-9)
    classifier.save(tmp_path / "c.hdf5")
    np.testing.assert_array_equal(load_estimator(tmp_path / "c.hdf5").shap_values(features[:30], background), values)
    for labels, shape in ((classes, (30, N_FEATURES + 1, 4)), (classes > 1, (30, N_FEATURES + 1))):
        # the costs BAdaCost decides by are a linear map of its scores: their values add up to them too
        costs = BAdaCostClassifier(n_estimators=5).fit(features, labels)
        values = costs.shap_values(features[:30], background)
        assert values.shape == shape
        np.testing.assert_allclose(values.sum(axis=1), costs.decision_function(features[:30]), rtol=1e-9,
                                   atol=1e-12)
    regressor = BoostingRegressor(weak_learner="tree", loss="poisson", n_estimators=10).fit(features, classes)
    scores = regressor.machine_.decision_scores(features[:30])[:, 0]  # the log of the mean
    np.testing.assert_allclose(regressor.shap_values(features[:30], background).sum(axis=1), scores, rtol=1e-9)


def _tree_game(weak, node: int, row: np.ndarray, members: tuple, outputs: np.ndarray) -> np.ndarray:
    """The tree's expected output given the features ``members`` of ``row``, estimated by its cover: the row's
    branch at a node splitting on a member, else both branches weighted by their cover."""
    feature = weak.features[node]
    if feature < 0:
        return outputs[node]
    if members[feature]:
        return _tree_game(weak, weak.left_children[node] if _goes_left(weak, node, row[feature])
                          else weak.right_children[node], row, members, outputs)
    left, right = weak.left_children[node], weak.right_children[node]
    return (weak.cover[left] * _tree_game(weak, left, row, members, outputs)
            + weak.cover[right] * _tree_game(weak, right, row, members, outputs)) / weak.cover[node]


def _goes_left(weak, node: int, value: float) -> bool:
    """The documented rule of a tree node: NaN where ``missing_left`` says, a category in the node's set left,
    else right from the threshold on."""
    if np.isnan(value):
        return bool(weak.missing_left[node])
    categories = getattr(weak, "categories", None)
    if categories is not None and categories[node] is not None:
        return value in categories[node]
    return not value >= weak.thresholds[node]


def path_brute_force(machine: BoostedMachine, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(#rows, #features, #outputs) Shapley values of the path-dependent game (one-tree machines with a single
    root, as the cost-sensitive trees and depth-limited gradient trees of one output are) enumerated from their
    definition, and the game of the empty coalition (the expected value)."""
    width = rows.shape[1]
    values = np.zeros((rows.shape[0], width, machine.number_of_outputs))
    empty = None
    for i, row in enumerate(rows):
        game = {}
        for members in itertools.product((False, True), repeat=width):
            total = machine.baseline.copy()
            for weight, weak in zip(machine.weights[:, 0], machine.weak_machines):
                outputs = weak.values if hasattr(weak, "values") else bob_boost.costs.margin_vectors(
                    weak.number_of_classes)[weak.labels]
                total = total + weight * _tree_game(weak, 0, row, members, outputs)
            game[members] = total
        empty = game[(False,) * width]
        values[i] = shapley(game, width)
    return values, empty


PATH_MACHINES = {
    **{name: MACHINES[name] for name in ("gradient trees, leaf-wise, intercept", "gradient trees, level-wise",
                                         "gradient trees, categorical", "softmax trees, shared", "BAdaCost trees")},
    "gradient trees, missing values": MISSING["gradient trees, missing values"],
}


@pytest.mark.parametrize("name", list(PATH_MACHINES))
def test_path_dependent_values_are_the_brute_force_shapley_values(name):
    features, classes = _data(missing="missing" in name)
    machine = PATH_MACHINES[name](features, classes)
    rows = features[200:212]
    values = machine.shap_values(rows).reshape(12, N_FEATURES + 1, -1)
    expected, empty = path_brute_force(machine, rows)
    np.testing.assert_allclose(values[:, :N_FEATURES], expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(values[:, N_FEATURES], np.repeat(empty[np.newaxis], 12, axis=0), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(values.sum(axis=1), machine.decision_scores(rows), rtol=1e-9, atol=1e-12)


def test_trees_with_several_roots_add_up_to_their_scores():
    features, classes = _data(n=2000)
    machine = MACHINES["softmax trees, one per class"](features, classes)
    values = machine.shap_values(features)
    np.testing.assert_allclose(values.sum(axis=1), machine.decision_scores(features), rtol=1e-9, atol=1e-12)


def test_path_dependent_trees_give_the_reference_implementations_values():
    shap = pytest.importorskip("shap", reason="the reference implementation is in the test extra")
    features, classes = _data(n=2000, seed=3)
    machine = bob_boost.Boosting(bob_boost.TreeTrainer(max_leaves=12), bob_boost.LogitLoss(),
                                 learning_rate=0.3).train(features, _signed(classes), 20, baseline="auto")
    model = _shap_trees(machine)
    for tree, weak in zip(model["trees"], machine.weak_machines):
        tree["node_sample_weight"] = np.array(weak.cover)
    explainer = shap.TreeExplainer(model, feature_perturbation="tree_path_dependent")
    rows = features[100:400]
    values = machine.shap_values(rows)
    np.testing.assert_allclose(values[:, :-1], explainer.shap_values(rows), rtol=0, atol=1e-6)
    assert values[0, -1] == pytest.approx(float(np.ravel(explainer.expected_value)[0]), abs=1e-6)


def test_path_dependent_values_do_not_depend_on_the_thread_count_or_a_file(tmp_path):
    features, classes = _data(n=3000, seed=2)
    machine = MACHINES["gradient trees, categorical"](features, classes)
    machine.n_threads = 1
    one = machine.shap_values(features)
    machine.n_threads = 2
    np.testing.assert_array_equal(machine.shap_values(features), one)
    machine.save(tmp_path / "m.hdf5")
    np.testing.assert_array_equal(BoostedMachine.load(tmp_path / "m.hdf5").shap_values(features), one)


def test_files_without_cover_explain_against_background_rows_only(tmp_path):
    import h5py

    features, classes = _data()
    machine = MACHINES["gradient trees, leaf-wise, intercept"](features, classes)
    machine.save(tmp_path / "m.hdf5")
    with h5py.File(tmp_path / "m.hdf5", "r+") as handle:  # as files written before trees recorded a cover
        for name in list(handle):
            if name.startswith("WeakMachine_"):
                del handle[name]["Cover"]
    older = BoostedMachine.load(tmp_path / "m.hdf5")
    assert older.weak_machines[0].cover is None and older.weak_machines[0].gains is not None
    with pytest.raises(ValueError, match="background: TreeMachine.* records no training cover"):
        older.shap_values(features[:5])
    np.testing.assert_array_equal(older.shap_values(features[:5], features[:9]),
                                  machine.shap_values(features[:5], features[:9]))


def test_bad_input_is_refused():
    features, classes = _data()
    stumps = MACHINES["stumps, exact thresholds"](features, _signed(classes))
    with pytest.raises(ValueError, match="background: StumpMachine.* records no training cover"):
        stumps.shap_values(features[:5])
    machine = MACHINES["gradient trees, leaf-wise, intercept"](features, classes)
    with pytest.raises(ValueError, match="features: the machine was trained on 5 features, got 4"):
        machine.shap_values(features[:5, :4])
    weak = machine.weak_machines[0]
    arrays = (weak.features, weak.thresholds, weak.left_children, weak.right_children, weak.values)
    with pytest.raises(ValueError, match="cover: expected .* values"):
        bob_boost.TreeMachine(*arrays, cover=weak.cover[:-1])
    with pytest.raises(ValueError, match="gains: must be finite and non-negative"):
        bob_boost.TreeMachine(*arrays, gains=-np.asarray(weak.cover))
    with pytest.raises(ValueError, match="features: the machine was trained on 5 features, got 4"):
        machine.shap_values(features[:5, :4], features[:10])
    with pytest.raises(ValueError, match="background: the machine was trained on 5 features, got 4"):
        machine.shap_values(features[:5], features[:10, :4])
    machine.number_of_features = None  # a machine that reads 5 columns, of no declared width
    with pytest.raises(ValueError, match="background: has 6 columns but features have 5"):
        machine.shap_values(features[:5], np.hstack([features[:10], features[:10, :1]]))
    with pytest.raises(ValueError, match="background: empty array"):
        machine.shap_values(features[:5], features[:0])
    holes = features[:10].copy()
    holes[3, 1] = np.nan
    with pytest.raises(ValueError, match="background: .*NaN"):
        machine.shap_values(features[:5], holes)
    assert not np.isnan(holes[:3]).any()  # nothing the caller passed was changed


def test_a_lone_leaf_is_its_expectation_and_a_split_without_cover_is_refused():
    lone = BoostedMachine()
    lone.add_weak_machine(bob_boost.TreeMachine([-1], [0.0], [-1], [-1], [[0.5]], cover=[0.0]), [2.0])
    np.testing.assert_array_equal(lone.shap_values(np.zeros((3, 2))), [[0.0, 0.0, 1.0]] * 3)
    split = BoostedMachine()
    split.add_weak_machine(bob_boost.TreeMachine([0, -1, -1], [0.0] * 3, [1, -1, -1], [2, -1, -1],
                                                 [[0.0], [1.0], [2.0]], cover=[0.0, 0.0, 0.0]), [1.0])
    with pytest.raises(ValueError, match="background: TreeMachine.* has a split node without training cover"):
        split.shap_values(np.zeros((3, 2)))
    # background rows need no cover: the row goes left (1.0), the background right (2.0)
    np.testing.assert_array_equal(split.shap_values(-np.ones((1, 2)), np.zeros((1, 2)))[0], [-1.0, 0.0, 2.0])
