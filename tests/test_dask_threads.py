"""``n_threads`` of the distributed trainers and estimators: the threads of each task's kernels on its worker,
which never change the model."""
from __future__ import annotations

import numpy as np
import pytest

import bob_boost

da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
distributed = pytest.importorskip("distributed", reason="distributed training needs the dask extra")

from bob_boost.dask import DaskBoosting, DaskCostSensitiveBoosting, DaskMultiClassBoosting  # noqa: E402


def _data(n=90_000, seed=0):
    """Chunks large enough (more than 2^18 values) for the kernels to split their work between threads."""
    rng = np.random.default_rng(seed)
    features = np.round(rng.normal(size=(n, 8)), 3)
    score = features[:, 0] - features[:, 3] + rng.normal(0, 1, n)
    rows = (4 * n // 9, 37 * n // 90)
    return da.from_array(features, chunks=(rows + (n - sum(rows),), (8,))), score


def _trainers(n_threads):
    return {"stumps": DaskBoosting(bob_boost.LogitLoss(), n_threads=n_threads),
            "tables": DaskBoosting(bob_boost.ExponentialLoss(), weak_learner="lut", lut_entries=8, n_threads=n_threads),
            "adaboostdb": DaskCostSensitiveBoosting(bob_boost.AdaBoostDBTrainer(2.0, 1.0), n_threads=n_threads),
            "samme": DaskMultiClassBoosting(bob_boost.SAMMETrainer(bob_boost.CostSensitiveTreeTrainer(max_depth=2)),
                                            n_threads=n_threads)}


def _train(family, n_threads, client, features, score):
    trainer = _trainers(n_threads)[family]
    trainer.client = client
    if family == "tables":
        features = da.clip(da.floor(features * 2 + 4), 0, 7).astype(np.int64)
    if family == "samme":
        return trainer.train(features, np.digitize(score, [-1.0, 1.0]), 4)
    return trainer.train(features, np.where(score > 0, 1.0, -1.0), 4)


@pytest.mark.parametrize("family", [pytest.param("stumps", marks=pytest.mark.long),
                                    pytest.param("tables", marks=pytest.mark.long),
                                    "adaboostdb",  # the suite's quick case
                                    pytest.param("samme", marks=pytest.mark.long)])
def test_the_model_is_the_same_bit_for_bit_for_one_or_two_threads(client, family):
    features, score = _data()
    one = _train(family, 1, client, features, score)
    two = _train(family, 2, client, features, score)
    assert len(one) == 4 and one.weak_machines == two.weak_machines
    np.testing.assert_array_equal(one.weights, two.weights)


@pytest.mark.parametrize("family", ["stumps", "tables", "samme"])
@pytest.mark.long
def test_the_kernels_run_on_the_given_threads(monkeypatch, family):
    """On workers in this process (threads), the coding and histogram kernels see ``n_threads``; None is
    every core the worker may use, as in memory."""
    from bob_boost.engine import codes
    from bob_boost.engine.threads import available_cores
    seen = []
    original = codes.run_blocks

    def recording(kernel, blocks, n_threads, *arguments, **options):
        seen.append(n_threads)
        return original(kernel, blocks, n_threads, *arguments, **options)
    monkeypatch.setattr(codes, "run_blocks", recording)
    features, score = _data(n=3000)
    # a dashboard on a free port: the module's cluster holds 8787, and None still tries 8787 (with a warning)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0",
                                  silence_logs=40) as cluster, \
            distributed.Client(cluster, set_as_default=False) as local:
        _train(family, 3, local, features, score)
        assert seen and set(seen) == {3}
        seen.clear()
        _train(family, None, local, features, score)
        assert seen and set(seen) == {available_cores()}


def test_bad_thread_counts_name_n_threads(client):
    pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
    from bob_boost.dask import DaskBoostingClassifier, DaskBoostingRegressor
    for make in (lambda n: DaskBoosting(bob_boost.LogitLoss(), n_threads=n),
                 lambda n: DaskCostSensitiveBoosting(bob_boost.AdaBoostDBTrainer(1.0, 1.0), n_threads=n),
                 lambda n: DaskMultiClassBoosting(bob_boost.SAMMETrainer(), n_threads=n)):
        with pytest.raises(ValueError, match="n_threads"):
            make(0)
        with pytest.raises(TypeError, match="n_threads"):
            make("2")
    features, score = _data(n=300)
    for estimator, y in ((DaskBoostingClassifier, score > 0), (DaskBoostingRegressor, score)):
        with pytest.raises(ValueError, match="n_threads"):
            estimator(n_threads=0, client=client).fit(features, y)
        model = estimator(n_threads=2, n_estimators=2, client=client).fit(features, y)
        assert model.to_local().n_threads == 2
