"""``missing="bin"`` for decision stumps on a local Dask cluster (two worker processes) against in-memory
training on the same bins."""
from __future__ import annotations

import numpy as np
import pytest

import bob_boost

da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
distributed = pytest.importorskip("distributed", reason="distributed training needs the dask extra")

from bob_boost.dask import DaskBoosting, _training  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        yield client


def _with_nan(seed=0, n=1200):
    rng = np.random.default_rng(seed)
    features = np.round(rng.normal(size=(n, 4)), 2)
    score = features[:, 0] + features[:, 1] + rng.normal(0, 0.5, n)
    # NaN where the feature would have said most: a stump must learn which side it goes to
    features[(score > 1.0) & (rng.random(n) < 0.5), 0] = np.nan
    features[rng.random(n) < 0.1, 1] = np.nan
    return features, np.where(score > 0, 1.0, -1.0)


def test_stumps_with_missing_values_give_the_in_memory_stumps(client, monkeypatch):
    monkeypatch.setattr(_training, "CHECKPOINT_ROUNDS", 3)  # the scores rebuilt from the codes route NaN too
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
        DaskBoostingClassifier(weak_learner="lut", missing="bin", client=client).fit(dX, targets)
    with pytest.raises(ValueError, match="missing"):
        DaskBoostingClassifier(missing="zero", client=client).fit(dX, targets)
    with pytest.raises(ValueError, match="features: contain NaN"):
        DaskBoostingClassifier(client=client).fit(dX, targets)
    with pytest.raises(ValueError, match="missing"):
        DaskBoosting(bob_boost.LogitLoss(), weak_learner="lut", missing="bin")
