"""Trees as tables and pictures: walking the table's nodes by its own columns reproduces the machine's scores for
every weak machine with a tree form; the pandas frame; the tree, summary and dependence plots; bad input."""
from __future__ import annotations

import numpy as np
import pytest

import bob_boost
from bob_boost.tree_tables import tree_table


def _data(seed=0, n=1500, missing=False):
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(n, 4))
    features[:, 3] = rng.integers(0, 6, n)
    targets = np.where(features[:, 0] + features[:, 1] * features[:, 2] + (features[:, 3] == 2) > 0, 1.0, -1.0)
    if missing:
        features[rng.random(features.shape) < 0.1] = np.nan
    return features, targets


def _walk(table: dict, row: np.ndarray, start: int) -> int:
    """The leaf a row reaches from the table row ``start``, read from the table's documented columns."""
    at = start
    while table["feature"][at] >= 0:
        value = row[table["feature"][at]]
        if np.isnan(value):
            left = table["missing_direction"][at] == "left"
        elif table["decision_type"][at] == "in":
            left = value in table["categories"][at]
        else:
            left = value < table["threshold"][at]
        child = table["left_child"][at] if left else table["right_child"][at]
        at = at - table["node"][at] + child  # the weak machine's rows start at node 0
    return at


def _scores_from_table(machine, features: np.ndarray) -> np.ndarray:
    table = tree_table(machine)
    value_keys = [key for key in table if key.startswith("value")]
    scores = np.repeat(machine.baseline[np.newaxis].astype(float), features.shape[0], axis=0)
    roots = np.flatnonzero(table["parent"] == -1)
    for i, row in enumerate(features):
        for root in roots:
            leaf = _walk(table, row, root)
            scores[i] += table["weight"][leaf] * np.array([table[key][leaf] for key in value_keys])
    return scores


MACHINES = {
    "trees, categorical": lambda X, y: bob_boost.Boosting(
        bob_boost.TreeTrainer(max_leaves=6, categorical_features=[3], min_data_per_group=5), bob_boost.LogitLoss(),
        learning_rate=0.3).train(X, y, 4),
    "trees, missing values": lambda X, y: bob_boost.Boosting(
        bob_boost.TreeTrainer(max_leaves=6, missing="bin"), bob_boost.LogitLoss(), learning_rate=0.3).train(X, y, 4),
    "trees, one per class": lambda X, y: bob_boost.Boosting(
        bob_boost.TreeTrainer(max_leaves=4), bob_boost.SoftmaxLoss(2), learning_rate=0.3).train(X, (y > 0) * 1, 3),
    "stumps": lambda X, y: bob_boost.Boosting(bob_boost.StumpTrainer(), bob_boost.LogitLoss()).train(X, y, 6),
    "stumps, categorical and missing": lambda X, y: bob_boost.Boosting(
        bob_boost.StumpTrainer(categorical_features=[3], missing="bin"), bob_boost.LogitLoss()).train(X, y, 6),
}


@pytest.mark.parametrize("name", list(MACHINES))
def test_walking_the_table_gives_the_machines_scores(name):
    features, targets = _data(missing="missing" in name)
    machine = MACHINES[name](features, targets)
    if "categorical" in name:
        assert "in" in tree_table(machine)["decision_type"].tolist()
    rows = features[:200]
    np.testing.assert_allclose(_scores_from_table(machine, rows), machine.decision_scores(rows), rtol=1e-12,
                               atol=1e-12)


def test_cost_sensitive_trees_list_their_leaves_classes_and_cover():
    features, targets = _data()
    classes = (targets > 0).astype(int) + (features[:, 1] > 0.8)
    machine = bob_boost.BAdaCostTrainer(1.0 - np.eye(3), bob_boost.CostSensitiveTreeTrainer(max_depth=2)).train(
        features, classes, 2)
    table = tree_table(machine)
    weak = machine.weak_machines[0]
    first = table["round"] == 0
    leaves = [_walk(table, row, 0) for row in features[:100]]
    np.testing.assert_array_equal(table["class"][leaves], weak.forward_labels(features[:100]))
    np.testing.assert_array_equal(table["cover"][first], weak.cover)
    assert np.all(table["class"][first][weak.features >= 0] == -1)


def test_the_dataframe_has_a_row_per_node():
    pandas = pytest.importorskip("pandas", reason="the frame is the pandas extra")
    features, targets = _data()
    machine = MACHINES["trees, categorical"](features, targets)
    frame = bob_boost.trees_to_dataframe(machine)
    assert isinstance(frame, pandas.DataFrame)
    assert len(frame) == sum(weak.features.size for weak in machine.weak_machines)
    assert frame.loc[frame["feature"] >= 0, "gain"].gt(0).all()
    np.testing.assert_array_equal(frame["cover"].to_numpy(), np.concatenate([w.cover for w in machine.weak_machines]))


def test_machines_without_a_tree_form_are_refused():
    features, targets = _data()
    tables = bob_boost.Boosting(bob_boost.LUTTrainer(6), bob_boost.LogitLoss()).train(
        np.clip(features, 0, 5).astype(int), targets, 2)
    with pytest.raises(TypeError, match="machine: LUTMachine.* has no tree form"):
        tree_table(tables)


def test_the_plots_draw_every_node_and_row(tmp_path):
    pytest.importorskip("matplotlib", reason="plotting is the plot extra")
    from bob_boost.explanation_plots import plot_shap_dependence, plot_shap_summary, plot_tree

    features, targets = _data()
    machine = MACHINES["trees, one per class"](features, targets)
    figure = plot_tree(machine, 1, tree=1, path=tmp_path / "tree.png")
    boxes = [text for text in figure.axes[0].texts if text.get_bbox_patch() is not None]
    tree = machine.weak_machines[1]
    assert len(boxes) == tree.features.size - tree.roots[1]  # the nodes of its second tree
    assert (tmp_path / "tree.png").read_bytes()[:4] == b"\x89PNG"
    values = machine.shap_values(features[:300])
    summary = plot_shap_summary(values, features[:300], names=["a", "b", "c", "d"], output=1, top=3)
    dots = sum(collection.get_offsets().shape[0] for collection in summary.axes[0].collections)
    assert dots == 3 * 300
    dependence = plot_shap_dependence(values, features[:300], 0, output=1)
    np.testing.assert_array_equal(dependence.axes[0].collections[0].get_offsets()[:, 1], values[:, 0, 1])
    with pytest.raises(ValueError, match="index: expected a weak machine's index in"):
        plot_tree(machine, 3)
    with pytest.raises(ValueError, match="tree: weak machine 0 has 2 trees, got 2"):
        plot_tree(machine, 0, tree=2)
    with pytest.raises(ValueError, match="values: expected shap_values'"):
        plot_shap_summary(values[:, :-1], features[:300])
    with pytest.raises(ValueError, match="output: the values have 2 outputs, got 2"):
        plot_shap_dependence(values, features[:300], 0, output=2)
