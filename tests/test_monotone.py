"""Monotone constraints of gradient trees (``monotonic_cst``, LightGBM's "basic" method): predictions never go
against a constrained feature, in memory and on partitions alike, through the estimators, with bad input
refused."""
from __future__ import annotations

import numpy as np
import pytest

import bob_boost
from bob_boost import Boosting, SquaredLoss, TreeTrainer
from bob_boost.boosting.partitions import LocalRows
from bob_boost.trainers.partitioned import PartitionedBoosting

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


@pytest.mark.parametrize("rows", [(3000,), (1100, 7, 1893)], ids=["1", "3"])
def test_partitions_grow_the_in_memory_constrained_trees(rows):
    X, y = _data()
    tree = TreeTrainer(monotonic_cst=CONSTRAINTS, n_threads=1)
    memory = Boosting(tree, SquaredLoss(), step_rule="newton").train(X, y, 8, baseline=float(np.mean(y)))
    machine = PartitionedBoosting(SquaredLoss(), weak_learner="tree", tree=tree, step_rule="newton").train_on(
        LocalRows(rows), X, y, 8, baseline=np.mean(y))
    assert [w.features.tolist() for w in machine.weak_machines] == [w.features.tolist() for w in memory.weak_machines]
    np.testing.assert_allclose(machine.decision_scores(X), memory.decision_scores(X), rtol=1e-9, atol=1e-12)


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
    remote = DaskBoostingRegressor(weak_learner="tree", n_estimators=5, monotonic_cst=CONSTRAINTS,
                                   client=client).fit(da.from_array(X, chunks=(400, 4)), da.from_array(y, chunks=400))
    local = BoostingRegressor(weak_learner="tree", n_estimators=5, monotonic_cst=CONSTRAINTS).fit(X, y)
    np.testing.assert_allclose(remote.predict(X), local.predict(X), rtol=1e-9, atol=1e-12)
    remote = DaskBoostingClassifier(weak_learner="tree", loss="logit", n_estimators=5, monotonic_cst=CONSTRAINTS,
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
