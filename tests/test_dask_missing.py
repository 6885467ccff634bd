"""``missing="bin"`` for decision stumps and look-up tables on a local Dask cluster (two workers)
against in-memory training on the same bins."""
from __future__ import annotations

import numpy as np
import pytest

import bob_boost

da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
distributed = pytest.importorskip("distributed", reason="distributed training needs the dask extra")

from bob_boost.dask import DaskBoosting, _chunks  # noqa: E402
from conftest import features_with_nan  # noqa: E402


def _with_nan(seed=0, n=1200):
    features, score = features_with_nan(n, seed)
    return features, np.where(score > 0, 1.0, -1.0)


def test_stumps_with_missing_values_give_the_in_memory_stumps(client, monkeypatch):
    monkeypatch.setattr(_chunks, "CHECKPOINT_ROUNDS", 3)  # the scores rebuilt from the codes route NaN too
    features, targets = _with_nan()
    loss = bob_boost.LogitLoss()
    machine = DaskBoosting(loss, client=client, missing="bin").train(
        da.from_array(features, chunks=((300, 17, 500, 383), (4,))), targets, 8)
    memory = bob_boost.Boosting(bob_boost.StumpTrainer(max_bins=256, missing="bin"), loss, step_rule="newton")
    expected = memory.train(features, targets, 8)
    assert len(machine) == 8 and machine.weak_machines == expected.weak_machines
    np.testing.assert_allclose(machine.weights, expected.weights, rtol=1e-9, atol=0)
    sides = {w.missing_above for w in machine.weak_machines if w.index == 0}
    assert True in sides  # NaN of feature 0 goes with the high values
    assert np.array_equal(machine.predict(features), expected.predict(features))


def test_the_classifier_takes_missing_for_stumps(client):
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    from bob_boost.dask import DaskBoostingClassifier
    from bob_boost.sklearn import BoostingClassifier
    features, targets = _with_nan(seed=1)
    dX = da.from_array(features, chunks=(500, 4))
    model = DaskBoostingClassifier(loss="logit", n_estimators=6, missing="bin", client=client).fit(dX, targets)
    memory = BoostingClassifier(loss="logit", n_estimators=6, missing="bin", early_stopping=False).fit(features,
                                                                                                      targets)
    assert model.machine_.weak_machines == memory.machine_.weak_machines
    # in memory, exactly binned features take L-BFGS steps (stopping at its tolerance), the cluster Newton's
    np.testing.assert_allclose(model.machine_.weights, memory.machine_.weights, rtol=1e-7, atol=0)
    assert np.array_equal(model.predict(dX).compute(), model.to_local().predict(features))
    with pytest.raises(ValueError, match="missing"):
        DaskBoostingClassifier(missing="zero", client=client).fit(dX, targets)
    with pytest.raises(ValueError, match="features: contain NaN"):
        DaskBoostingClassifier(client=client).fit(dX, targets)
    with pytest.raises(ValueError, match="missing"):
        DaskBoosting(bob_boost.LogitLoss(), weak_learner="tree", missing="bin")


def _discrete_with_nan(seed=2, n=1300, outputs=1):
    """Integer features 0 .. 7 with NaN: in feature 0 where the class would be negative (so a table must give
    NaN its own output, not the +1 of an entry no row reaches), at random in feature 1, and everywhere in
    feature 2 (a table could only give every row one output there: never selected, though its NaN entry holds
    the whole gradient)."""
    rng = np.random.default_rng(seed)
    features = rng.integers(0, 8, size=(n, 4)).astype(np.float64)
    score = features[:, 0] + features[:, 1] - 7 + rng.normal(0, 1.5, n)
    features[(score < -1.0) & (rng.random(n) < 0.6), 0] = np.nan
    features[rng.random(n) < 0.15, 1] = np.nan
    features[:, 2] = np.nan
    if outputs == 1:
        return features, np.where(score > 0, 1.0, -1.0)
    classes = np.digitize(score, [-1.5, 1.5])
    return features, np.where(classes[:, np.newaxis] == np.arange(outputs), 1.0, -1.0)


@pytest.mark.parametrize("loss", [bob_boost.ExponentialLoss(), bob_boost.LogitLoss()], ids=["exp", "logit"])
@pytest.mark.long
def test_look_up_tables_with_missing_values_give_the_in_memory_tables(client, monkeypatch, loss):
    monkeypatch.setattr(_chunks, "CHECKPOINT_ROUNDS", 3)  # the scores rebuilt from the codes read NaN's entry
    features, targets = _discrete_with_nan()
    chunks = ((400, 13, 600, 287), (4,))
    machine = DaskBoosting(loss, client=client, weak_learner="lut", lut_entries=8, missing="bin").train(
        da.from_array(features, chunks=chunks), targets, 8)
    memory = bob_boost.Boosting(bob_boost.LUTTrainer(8, missing="bin"), loss, step_rule="newton")
    expected = memory.train(features, targets, 8)
    assert len(machine) == 8 and machine.weak_machines == expected.weak_machines
    np.testing.assert_allclose(machine.weights, expected.weights, rtol=1e-9, atol=0)
    tables = machine.weak_machines
    assert all(t.missing_entry and t.look_up_tables.shape == (9, 1) for t in tables)
    assert all(2 not in t.indices for t in tables)  # the feature of NaN only is never chosen
    # NaN of feature 0 means "negative": the first table on it gives NaN the output of the low values
    first = next(t for t in tables if t.indices[0] == 0)
    assert first.look_up_tables[8, 0] == first.look_up_tables[0, 0] == -1.0
    np.testing.assert_array_equal(machine.predict(features), expected.predict(features))


def test_a_feature_of_nan_only_is_never_chosen_even_when_every_feature_ties(client):
    # positive targets boosted from 0: the squared loss's gradient has one sign, so every table ties exactly
    # and the lowest feature would be chosen, the feature of NaN only (which could not tell rows apart)
    features, _ = _discrete_with_nan(seed=5, n=600)
    features = features[:, [2, 0, 1, 3]]
    targets = 5.0 + np.nan_to_num(features[:, 1], nan=2.0)
    loss = bob_boost.SquaredLoss()
    machine = DaskBoosting(loss, client=client, weak_learner="lut", lut_entries=8, missing="bin").train(
        da.from_array(features, chunks=(250, 4)), targets, 3)
    expected = bob_boost.Boosting(bob_boost.LUTTrainer(8, missing="bin"), loss, step_rule="newton").train(
        features, targets, 3)
    assert machine.weak_machines == expected.weak_machines
    assert machine.weak_machines[0].indices[0] == 1
    np.testing.assert_allclose(machine.weights, expected.weights, rtol=1e-9, atol=0)
    only_nan = np.full((600, 4), np.nan)
    with pytest.raises(ValueError, match="every feature is NaN"):
        DaskBoosting(loss, client=client, weak_learner="lut", lut_entries=8, missing="bin").train(
            da.from_array(only_nan, chunks=(250, 4)), targets, 1)


@pytest.mark.parametrize("style", ["independent", "shared"])
def test_multi_output_tables_with_missing_values_take_their_entries_from_the_largest_value(client, style):
    features, targets = _discrete_with_nan(seed=3, outputs=3)
    features[:, 3] = np.minimum(features[:, 3], 5)  # the largest value, 7, is in features 0 and 1 only
    loss = bob_boost.LogitLoss()
    machine = DaskBoosting(loss, client=client, weak_learner="lut", selection_style=style, missing="bin").train(
        da.from_array(features, chunks=((500, 1, 799), (2, 2))), da.from_array(targets, chunks=(300, 3)), 6)
    memory = bob_boost.Boosting(bob_boost.LUTTrainer(8, 3, style, missing="bin"), loss, step_rule="newton")
    expected = memory.train(features, targets, 6)
    assert machine.weights.shape == (6, 3) and machine.weak_machines == expected.weak_machines
    np.testing.assert_allclose(machine.weights, expected.weights, rtol=1e-9, atol=0)


def test_the_estimators_take_missing_for_look_up_tables(client):
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    from bob_boost.dask import DaskBoostingClassifier, DaskBoostingRegressor
    from bob_boost.sklearn import BoostingClassifier, BoostingRegressor
    features, targets = _discrete_with_nan(seed=4)
    dX = da.from_array(features, chunks=((650, 3, 647), (4,)))
    options = dict(weak_learner="lut", n_estimators=6, maximum_feature_value=8, missing="bin")
    model = DaskBoostingClassifier(loss="logit", client=client, **options).fit(dX, targets)
    memory = BoostingClassifier(loss="logit", early_stopping=False, **options).fit(features, targets)
    assert model.machine_.weak_machines == memory.machine_.weak_machines
    np.testing.assert_allclose(model.machine_.weights, memory.machine_.weights, rtol=1e-7, atol=0)
    assert np.array_equal(model.predict(dX).compute(), memory.predict(features))
    real = np.nan_to_num(features, nan=3.0) @ [1.0, -2.0, 0.0, 0.5]
    regressor = DaskBoostingRegressor(client=client, **options).fit(dX, real)
    in_memory = BoostingRegressor(early_stopping=False, **options).fit(features, real)
    assert regressor.machine_.weak_machines == in_memory.machine_.weak_machines
    np.testing.assert_allclose(regressor.machine_.weights, in_memory.machine_.weights, rtol=1e-7, atol=0)
    np.testing.assert_allclose(regressor.predict(dX).compute(), in_memory.predict(features), rtol=1e-9)


def test_bad_look_up_table_features_with_missing_values_are_the_in_memory_errors(client):
    features, targets = _discrete_with_nan(n=400)
    loss = bob_boost.LogitLoss()

    def train(values, **options):
        return DaskBoosting(loss, client=client, weak_learner="lut", **options).train(
            da.from_array(values, chunks=(150, 4)), targets, 2)
    infinite = features.copy()
    infinite[399, 3] = np.inf
    with pytest.raises(ValueError, match="features: contain infinite"):
        train(infinite, missing="bin")
    with pytest.raises(ValueError, match="features: contain NaN"):
        train(features, lut_entries=8)
    with pytest.raises(ValueError, match="LUT features must be integers"):
        train(features + 0.5, lut_entries=8, missing="bin")
    with pytest.raises(ValueError, match="number of LUT entries"):
        train(features, lut_entries=5, missing="bin")
    with pytest.raises(ValueError, match="missing"):
        DaskBoosting(loss, weak_learner="lut", missing="zero")
