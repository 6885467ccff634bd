"""Every kind of distributed training on worker processes reached over TCP, against the same training on the
session's in-process cluster: the same model, bit for bit.

The other distributed tests run on the session's cluster of workers in the test process (``inproc://``, where
tasks, their arguments and results are handed over, not pickled). Here every trainer, weak learner, step rule,
missing-value route, continuation and estimator ships its tasks, arguments and results to other processes as a
remote cluster would (pickled, over TCP), so that what cannot be pickled or is read from the client's memory
fails here.
"""
from __future__ import annotations

import numpy as np
import pytest

import bob_boost

da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
distributed = pytest.importorskip("distributed", reason="distributed training needs the dask extra")

from bob_boost.dask import (DaskBoosting, DaskCostSensitiveBoosting, DaskMultiClassBoosting,  # noqa: E402
                            decision_scores)
from conftest import features_with_nan  # noqa: E402


def _data(n=400, seed=0):
    """Float features with NaN in two columns, binary targets, three classes and a regression target."""
    features, score = features_with_nan(n, seed)
    classes = np.digitize(score, [-0.5, 0.5])
    return features, np.where(score > 0, 1.0, -1.0), classes, score


def _codes(n=400, seed=1):
    rng = np.random.default_rng(seed)
    features = rng.integers(0, 8, size=(n, 4))
    classes = (features[:, 0] + features[:, 1] + rng.integers(0, 3, n)) % 3
    return features, classes


def _trainings():
    """name -> function(client) training on chunks of 150, 13 and 237 rows; each returns a BoostedMachine."""
    features, binary, classes, score = _data()
    codes, code_classes = _codes()
    chunks = ((150, 13, 237),)
    dX = da.from_array(features, chunks=chunks + ((4,),))
    dC = da.from_array(codes, chunks=chunks + ((4,),))
    costs = np.array([[0.0, 1.0, 3.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]])
    tree = bob_boost.TreeTrainer(max_depth=2, missing="bin", multi_output="per_output")

    def continued(client):
        trainer = DaskBoosting(bob_boost.LogitLoss(), client=client, missing="bin")
        return trainer.train(dX, binary, 1, boosted_machine=trainer.train(dX, binary, 1))

    def estimator(client):
        from bob_boost.dask import DaskBoostingClassifier
        model = DaskBoostingClassifier(loss="logit", n_estimators=1, warm_start=True, early_stopping=True,
                                       n_iter_no_change=2, random_state=3, missing="bin", client=client)
        model.fit(dX, np.where(binary > 0, "yes", "no"))
        return model.set_params(n_estimators=2).fit(dX, np.where(binary > 0, "yes", "no")).machine_

    def regressor(client):
        from bob_boost.dask import DaskBoostingRegressor
        return DaskBoostingRegressor(n_estimators=2, missing="bin", client=client).fit(dX, score).machine_

    def badacost_estimator(client):
        from bob_boost.dask import DaskBAdaCostClassifier
        model = DaskBAdaCostClassifier("balanced", max_depth=2, n_estimators=2, missing="bin", random_state=0,
                                       client=client)
        return model.fit(dX, classes).machine_

    return {
        "stumps, closed form": lambda client: DaskBoosting(bob_boost.ExponentialLoss(), client=client).train(
            dC, binary, 2, sample_weight=np.linspace(0.5, 2.0, binary.size)),
        "stumps, Newton, missing values, continued": continued,
        "stumps, L-BFGS": lambda client: DaskBoosting(bob_boost.TangentialLoss(), client=client).train(dC, binary, 2),
        "tables, shared": lambda client: DaskBoosting(bob_boost.LogitLoss(), client=client, weak_learner="lut",
                                                      selection_style="shared").train(
            dC, np.where(code_classes[:, np.newaxis] == np.arange(3), 1.0, -1.0), 2),
        "tables, softmax": lambda client: DaskBoosting(bob_boost.SoftmaxLoss(3), client=client,
                                                       weak_learner="lut").train(dC, code_classes, 2),
        "gradient trees, missing values": lambda client: DaskBoosting(
            bob_boost.SoftmaxLoss(3), client=client, weak_learner="tree", tree=tree, learning_rate=0.5).train(
            dX, classes, 2),
        "AdaBoostDB": lambda client: DaskCostSensitiveBoosting(bob_boost.AdaBoostDBTrainer(2.0, 1.0),
                                                               client=client).train(dC, binary, 2),
        "BAdaCost trees, missing values": lambda client: DaskMultiClassBoosting(bob_boost.BAdaCostTrainer(
            costs, bob_boost.CostSensitiveTreeTrainer(max_depth=2, missing="bin")), client=client).train(
            dX, classes, 2),
        "SAMME stumps": lambda client: DaskMultiClassBoosting(bob_boost.SAMMETrainer(
            bob_boost.MultiClassStumpTrainer()), client=client).train(dC, code_classes, 2),
        "boosting classifier, early stopping, warm start": estimator,
        "regressor": regressor,
        "BAdaCost classifier": badacost_estimator,
    }


@pytest.mark.parametrize("name", list(_trainings()))
@pytest.mark.long
def test_worker_processes_train_the_in_process_model(process_client, dask_session_client, name):
    training = _trainings()[name]
    remote = training(process_client)
    local = training(dask_session_client)
    assert len(remote) == len(local) == 2
    assert remote.weak_machines == local.weak_machines
    np.testing.assert_array_equal(remote.weights, local.weights)
    assert remote.metadata == local.metadata


@pytest.mark.long
def test_worker_processes_score_chunks_as_in_memory(process_client):
    features, binary, _, _ = _data(seed=2)
    machine = bob_boost.Boosting(bob_boost.StumpTrainer(missing="bin"), bob_boost.LogitLoss()).train(
        features, binary, 3)
    scores = decision_scores(machine, da.from_array(features, chunks=(150, 4)))
    np.testing.assert_array_equal(scores.compute(), machine.decision_scores(features))
