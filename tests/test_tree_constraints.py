"""Constraints of gradient trees: monotone (``monotonic_cst``, LightGBM's "basic" method), predictions never
going against a constrained feature; and interaction (``interaction_cst``), every branch splitting on one
group's features. In memory and on partitions alike, through the estimators, with bad input refused."""
from __future__ import annotations

import numpy as np
import pytest

import bob_boost
from bob_boost import Boosting, SquaredLoss, TreeTrainer
from bob_boost.boosting.partitions import LocalRows
from bob_boost.trainers.partitioned import PartitionedBoosting
from bob_boost.weak_trainers.tree_constraints import interaction_groups

CONSTRAINTS = [1, 0, -1, 0]


def _data(n=3000, seed=0, nan=False):
    """A target that rises and falls with feature 0 and falls and rises with feature 2: the constraints bind."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 4))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 - 0.5 * X[:, 2] + np.cos(2 * X[:, 2]) + 0.3 * rng.normal(size=n)
    if nan:
        X[rng.random(X.shape) < 0.05] = np.nan
    return X, y


def _worst_violation(predict, constraints, seed=1, bases=300, steps=41):
    """The largest step against a constraint along a grid of each constrained feature, every other feature
    at random values, and over random pairs that differ in that feature only."""
    rng = np.random.default_rng(seed)
    worst = 0.0
    grid = np.linspace(-2.5, 2.5, steps)
    for feature, direction in enumerate(constraints):
        if direction == 0:
            continue
        points = np.repeat(rng.uniform(-2, 2, size=(bases, 1, 4)), steps, axis=1)
        points[:, :, feature] = grid
        values = predict(points.reshape(-1, 4)).reshape(bases, steps)
        worst = max(worst, float(np.max(-direction * np.diff(values, axis=1))))
        low = rng.uniform(-2, 2, size=(5000, 4))
        high = low.copy()
        high[:, feature] = low[:, feature] + rng.uniform(0, 2, size=5000)
        worst = max(worst, float(np.max(-direction * (predict(high) - predict(low)))))
    return worst


@pytest.mark.parametrize("options", [{}, {"growth": "levelwise", "max_depth": 4}, {"missing": "bin"},
                                     {"quantized_gradients": 16}, {"max_leaves": 63, "l2_regularization": 1.0}],
                         ids=["leafwise", "levelwise", "missing", "quantized", "63-leaves-l2"])
def test_predictions_never_go_against_a_constraint(options):
    X, y = _data(nan=options.get("missing") == "bin")
    free = Boosting(TreeTrainer(**options), SquaredLoss()).train(X, y, 40, baseline="auto")
    constrained = Boosting(TreeTrainer(monotonic_cst=CONSTRAINTS, **options), SquaredLoss()).train(
        X, y, 40, baseline="auto")
    assert _worst_violation(lambda x: constrained.predict(x), CONSTRAINTS) == 0.0
    assert _worst_violation(lambda x: free.predict(x), CONSTRAINTS) > 0.05  # the data would break them
    # the unconstrained features still shape the model
    residual = np.mean((constrained.predict(np.nan_to_num(X)) - y) ** 2)
    assert residual < np.var(y)


def test_zeros_constrain_nothing_and_give_the_free_trees_bit_for_bit():
    X, y = _data(n=1000)
    free = Boosting(TreeTrainer(), SquaredLoss()).train(X, y, 10, baseline="auto")
    zeros = Boosting(TreeTrainer(monotonic_cst=[0, 0, 0, 0]), SquaredLoss()).train(X, y, 10, baseline="auto")
    assert zeros.weak_machines == free.weak_machines


def _assert_the_same_trees(machine, memory, X) -> None:
    """The partitioned ``machine`` splits the features of the in-memory ``memory`` and scores ``X`` alike."""
    assert [w.features.tolist() for w in machine.weak_machines] == [w.features.tolist() for w in memory.weak_machines]
    np.testing.assert_allclose(machine.decision_scores(X), memory.decision_scores(X), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("rows", [(3000,), (1100, 7, 1893)], ids=["1", "3"])
def test_partitions_grow_the_in_memory_constrained_trees(rows):
    X, y = _data()
    tree = TreeTrainer(monotonic_cst=CONSTRAINTS, n_threads=1)
    memory = Boosting(tree, SquaredLoss(), step_rule="newton").train(X, y, 8, baseline=float(np.mean(y)))
    machine = PartitionedBoosting(SquaredLoss(), weak_learner="tree", tree=tree, step_rule="newton").train_on(
        LocalRows(rows), X, y, 8, baseline=np.mean(y))
    _assert_the_same_trees(machine, memory, X)


@pytest.mark.long
def test_the_estimators_take_it_in_memory_and_on_a_cluster(client):
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
    from bob_boost.dask import DaskBoostingClassifier, DaskBoostingRegressor
    from bob_boost.sklearn import BoostingClassifier, BoostingRegressor

    X, y = _data(n=1500)
    regressor = BoostingRegressor(weak_learner="tree", n_estimators=15, monotonic_cst=CONSTRAINTS).fit(X, y)
    assert _worst_violation(regressor.predict, CONSTRAINTS) == 0.0
    labels = y > np.median(y)
    classifier = BoostingClassifier(weak_learner="tree", loss="logit", n_estimators=15,
                                    monotonic_cst=CONSTRAINTS).fit(X, labels)
    assert _worst_violation(classifier.decision_function, CONSTRAINTS) == 0.0
    remote = DaskBoostingRegressor(weak_learner="tree", n_estimators=3, monotonic_cst=CONSTRAINTS,
                                   client=client).fit(da.from_array(X, chunks=(400, 4)), da.from_array(y, chunks=400))
    local = BoostingRegressor(weak_learner="tree", n_estimators=3, monotonic_cst=CONSTRAINTS).fit(X, y)
    np.testing.assert_allclose(remote.predict(X), local.predict(X), rtol=1e-9, atol=1e-12)
    remote = DaskBoostingClassifier(weak_learner="tree", loss="logit", n_estimators=3, monotonic_cst=CONSTRAINTS,
                                    client=client).fit(da.from_array(X, chunks=(400, 4)), labels)
    assert _worst_violation(remote.decision_function, CONSTRAINTS) == 0.0


@pytest.mark.parametrize("constraints, message", [
    ([1, 0, 2, 0], "monotonic_cst: expected one of -1, 0 and \\+1 per feature"),
    ([[1, 0]], "monotonic_cst: expected one of -1, 0 and \\+1 per feature"),
    (["up"], "monotonic_cst: expected one of -1, 0 and \\+1 per feature"),
])
def test_bad_constraints_are_refused(constraints, message):
    with pytest.raises(ValueError, match=message):
        TreeTrainer(monotonic_cst=constraints)


def test_what_the_constraints_cannot_hold_is_refused():
    X, y = _data(n=300)
    with pytest.raises(ValueError, match="monotonic_cst: has 3 entries but the features have 4 columns"):
        Boosting(TreeTrainer(monotonic_cst=[1, 0, 0]), SquaredLoss()).train(X, y, 2)
    with pytest.raises(ValueError, match="monotonic_cst: the absolute_error loss renews every leaf"):
        Boosting(TreeTrainer(monotonic_cst=CONSTRAINTS), bob_boost.AbsoluteErrorLoss()).train(X, y, 2)
    with pytest.raises(ValueError, match="monotonic_cst: constrains trees of one output, got 3 outputs"):
        Boosting(TreeTrainer(monotonic_cst=CONSTRAINTS), bob_boost.SoftmaxLoss()).train(
            X, (y > 0).astype(int) + (y > 1), 2)
    with pytest.raises(ValueError, match="monotonic_cst: needs Newton leaves"):
        Boosting(TreeTrainer(monotonic_cst=CONSTRAINTS), bob_boost.TangentialLoss()).train(
            X, np.where(y > 0, 1.0, -1.0), 2)
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    from bob_boost.sklearn import BoostingRegressor

    with pytest.raises(ValueError, match="monotonic_cst: constrains gradient trees"):
        BoostingRegressor(monotonic_cst=CONSTRAINTS).fit(X, y)


# -- interaction constraints ------------------------------------------------------------------------------------

GROUPS = [[0, 1], [2, 3]]  # feature 4 is in no group: a group of its own, the rest


def _interacting(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    return X, X[:, 0] * X[:, 2] + X[:, 1] * X[:, 3] + np.sin(X[:, 4]) + 0.1 * rng.normal(size=n)


def _paths_outside(machine, groups) -> int:
    """The root-to-leaf paths of the machine's trees whose split features no single group holds."""
    outside = 0
    for weak in machine.weak_machines:
        stack = [(int(root), frozenset()) for root in weak.roots]
        while stack:
            node, used = stack.pop()
            if weak.features[node] < 0:
                outside += not any(groups[g, list(used)].all() for g in range(groups.shape[0]))
                continue
            used = used | {int(weak.features[node])}
            stack += [(int(weak.left_children[node]), used), (int(weak.right_children[node]), used)]
    return outside


@pytest.mark.parametrize("options", [{}, {"growth": "levelwise", "max_depth": 4}, {"interaction_cst": "none"}],
                         ids=["leafwise", "levelwise", "no-interactions"])
def test_every_branch_splits_on_one_group(options):
    X, y = _interacting()
    constraints = "no_interactions" if options.pop("interaction_cst", None) else GROUPS
    groups = interaction_groups(constraints, 5)
    sampling = bob_boost.Sampling(colsample_bynode=0.8, random_state=3)
    constrained = Boosting(TreeTrainer(interaction_cst=constraints, **options), SquaredLoss(),
                           sampling=sampling).train(X, y, 20, baseline="auto")
    free = Boosting(TreeTrainer(**options), SquaredLoss(), sampling=sampling).train(X, y, 20, baseline="auto")
    assert _paths_outside(constrained, groups) == 0
    assert _paths_outside(free, groups) > 0
    if constraints == GROUPS:  # every group, the rest included, still splits
        assert {int(f) for w in constrained.weak_machines for f in w.features if f >= 0} == {0, 1, 2, 3, 4}


def test_the_groups_of_the_features_in_none_and_bad_groups():
    assert interaction_groups([[3, 1]], 5).tolist() == [[False, True, False, True, False],
                                                       [True, False, True, False, True]]
    assert interaction_groups("no_interactions", 3).tolist() == np.eye(3, dtype=bool).tolist()
    for constraints, message in (([[0, 1], [1, 2]], "feature 1 is in two groups"),
                                 ([[0, 9]], "feature 9 is outside 0 .. 4"), ([[-1]], "feature -1 is outside"),
                                 ([["a"]], "expected non-empty groups of feature indices"),
                                 ([[]], "expected non-empty groups"), ("pairs", "expected groups of features or"),
                                 ([[f] for f in range(70)], "at most 63 groups")):
        with pytest.raises(ValueError, match=f"interaction_cst: {message}"):
            interaction_groups(constraints, 5 if "63" not in message else 70)
    with pytest.raises(ValueError, match="interaction_cst: feature 1 is in two groups"):
        TreeTrainer(interaction_cst=[[0, 1], [1]])
    with pytest.raises(ValueError, match="interaction_cst: feature 7 is outside 0 .. 4"):
        Boosting(TreeTrainer(interaction_cst=[[0, 7]]), SquaredLoss()).train(*_interacting(n=200), 1)


@pytest.mark.parametrize("rows", [(3000,), (1100, 7, 1893)], ids=["1", "3"])
def test_partitions_grow_the_in_memory_interaction_trees(rows):
    X, y = _interacting()
    tree = TreeTrainer(interaction_cst=GROUPS, n_threads=1)
    sampling = bob_boost.Sampling(colsample_bynode=0.6, random_state=5)
    memory = Boosting(tree, SquaredLoss(), step_rule="newton", sampling=sampling).train(
        X, y, 6, baseline=float(np.mean(y)))
    machine = PartitionedBoosting(SquaredLoss(), weak_learner="tree", tree=tree, step_rule="newton",
                                  sampling=sampling).train_on(LocalRows(rows), X, y, 6, baseline=np.mean(y))
    _assert_the_same_trees(machine, memory, X)


@pytest.mark.long
def test_the_estimators_take_interaction_constraints(client):
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
    from bob_boost.dask import DaskBoostingRegressor
    from bob_boost.sklearn import BoostingClassifier, BoostingRegressor

    X, y = _interacting(n=1500)
    groups = interaction_groups(GROUPS, 5)
    local = BoostingRegressor(weak_learner="tree", n_estimators=3, interaction_cst=GROUPS).fit(X, y)
    assert _paths_outside(local.machine_, groups) == 0
    classifier = BoostingClassifier(weak_learner="tree", loss="logit", n_estimators=8, interaction_cst=GROUPS).fit(
        X, y > 0)
    assert _paths_outside(classifier.machine_, groups) == 0
    remote = DaskBoostingRegressor(weak_learner="tree", n_estimators=3, interaction_cst=GROUPS, client=client).fit(
        da.from_array(X, chunks=(400, 5)), da.from_array(y, chunks=400))
    np.testing.assert_allclose(remote.predict(X), local.predict(X), rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="interaction_cst: constrains gradient trees"):
        BoostingRegressor(interaction_cst=GROUPS).fit(X, y)


def test_named_columns_take_a_dict_of_directions():
    pd = pytest.importorskip("pandas", reason="named columns come from pandas here")
    from bob_boost.sklearn import BoostingRegressor

    X, y = _data(n=1000)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    by_name = BoostingRegressor(weak_learner="tree", n_estimators=5, monotonic_cst={"a": 1, "c": -1}).fit(frame, y)
    by_position = BoostingRegressor(weak_learner="tree", n_estimators=5, monotonic_cst=CONSTRAINTS).fit(frame, y)
    assert by_name.machine_.weak_machines == by_position.machine_.weak_machines
    with pytest.raises(ValueError, match="monotonic_cst: names 'z', which is not a column of X"):
        BoostingRegressor(weak_learner="tree", monotonic_cst={"z": 1}).fit(frame, y)
    with pytest.raises(ValueError, match="monotonic_cst: a dict names features, but X has no column names"):
        BoostingRegressor(weak_learner="tree", monotonic_cst={"a": 1}).fit(X, y)


@pytest.mark.parametrize("multi_output", ["per_output", "shared"])
def test_trees_of_several_outputs_keep_the_groups(multi_output):
    X, _ = _interacting()
    classes = (X[:, 0] * X[:, 2] > 0).astype(int) + (X[:, 1] + X[:, 3] > 0)
    machine = Boosting(TreeTrainer(interaction_cst=GROUPS, multi_output=multi_output, n_threads=2),
                       bob_boost.SoftmaxLoss()).train(X, classes, 6)
    free = Boosting(TreeTrainer(multi_output=multi_output, n_threads=2), bob_boost.SoftmaxLoss()).train(X, classes, 6)
    groups = interaction_groups(GROUPS, 5)
    assert _paths_outside(machine, groups) == 0 and _paths_outside(free, groups) > 0
