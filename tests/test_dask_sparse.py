"""Dask arrays of scipy sparse chunks: the estimators that read sparse matrices in memory train on them the model
of the same rows in dense chunks, without a dense copy of a chunk; the others refuse them by name."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
pytest.importorskip("distributed", reason="distributed training needs the dask extra")

from bob_boost.dask import DaskAdaBoostDBClassifier, DaskBoostingClassifier, DaskBoostingRegressor  # noqa: E402


def _rows(n=900, d=30, density=0.08, seed=0, integers=False):
    rng = np.random.default_rng(seed)
    values = (lambda size: rng.integers(1, 5, size).astype(float)) if integers else rng.standard_normal
    matrix = sp.random(n, d, density=density, format="csr", random_state=rng, data_rvs=values)
    return matrix, matrix @ rng.standard_normal(d) + 0.2 * rng.standard_normal(n)


def _chunks(matrix, rows: int = 300):
    """The matrix in row chunks, each a scipy sparse matrix (and its dense form in the same chunks)."""
    return (da.from_array(matrix, chunks=(rows, matrix.shape[1]), asarray=False),
            da.from_array(matrix.toarray(), chunks=(rows, matrix.shape[1])))


@pytest.mark.parametrize("options", [
    pytest.param({}, id="defaults", marks=pytest.mark.long),
    pytest.param({"weak_learner": "tree", "n_estimators": 4}, id="trees", marks=pytest.mark.long),
    pytest.param({"weak_learner": "tree", "n_estimators": 8, "early_stopping": True, "n_iter_no_change": 2},
                 id="early stopping", marks=pytest.mark.long),
    # the suite's quick case (the others take 7 to 16 s each)
    pytest.param({"weak_learner": "lut", "maximum_feature_value": 5, "n_estimators": 6}, id="tables"),
    pytest.param({"weak_learner": "tree", "n_estimators": 4, "categorical_features": [0, 3]}, id="categories",
                 marks=pytest.mark.long)])
def test_sparse_chunks_train_the_model_of_their_dense_chunks(client, options):
    matrix, scores = _rows(integers="maximum_feature_value" in options or "categorical_features" in options)
    labels = np.where(scores > 0, "up", "down")
    sparse_chunks, dense_chunks = _chunks(matrix)
    assert sp.issparse(sparse_chunks.blocks[0].compute())
    model = DaskBoostingClassifier(client=client, **options).fit(sparse_chunks, labels)
    dense = DaskBoostingClassifier(client=client, **options).fit(dense_chunks, labels)
    assert len(model.machine_.weak_machines) >= 2
    assert model.machine_.weak_machines == dense.machine_.weak_machines
    np.testing.assert_array_equal(model.machine_.weights, dense.machine_.weights)
    probabilities = model.predict_proba(sparse_chunks)
    assert isinstance(probabilities, da.Array)
    np.testing.assert_array_equal(probabilities.compute(), dense.to_local().predict_proba(matrix.toarray()))


@pytest.mark.long
def test_a_regressor_on_sparse_chunks_is_the_regressor_on_dense_chunks(client):
    matrix, scores = _rows(seed=1)
    sparse_chunks, dense_chunks = _chunks(matrix, rows=250)
    options = {"weak_learner": "tree", "n_estimators": 4, "client": client}
    model = DaskBoostingRegressor(**options).fit(sparse_chunks, scores)
    dense = DaskBoostingRegressor(**options).fit(dense_chunks, scores)
    assert model.machine_.weak_machines == dense.machine_.weak_machines
    np.testing.assert_array_equal(model.predict(sparse_chunks).compute(), dense.predict(matrix.toarray()))


def test_estimators_of_dense_trainers_refuse_sparse_chunks_naming_them(client):
    matrix, scores = _rows(seed=2)
    with pytest.raises(TypeError, match="X: DaskAdaBoostDBClassifier reads dense chunks"):
        DaskAdaBoostDBClassifier(client=client, n_estimators=2).fit(_chunks(matrix)[0], scores > 0)


def test_infinite_values_in_a_sparse_chunk_are_an_error(client):
    matrix, scores = _rows(seed=3)
    matrix = matrix.tolil()
    matrix[700, 4] = np.inf
    with pytest.raises(ValueError, match="features: contains? .*infinite values"):
        DaskBoostingClassifier(client=client, n_estimators=2).fit(_chunks(matrix.tocsr())[0], scores > 0)


def test_auto_early_stopping_counts_a_sparse_chunks_stored_values(client, monkeypatch):
    """``early_stopping="auto"`` holds out rows unless they would not fit the client: of sparse chunks, what
    their stored values and indices take, not their dense size."""
    from bob_boost.dask import _fit_data

    matrix, scores = _rows(n=10_400, d=40, density=0.05, seed=4)
    held_out = 0.1 * matrix.nnz * (8 + 4)  # the default validation_fraction of the stored values and indices
    assert held_out < 0.1 * matrix.shape[0] * matrix.shape[1] * 8 / 5
    chunks = _chunks(matrix, rows=5200)[0]
    monkeypatch.setattr(_fit_data, "AUTO_HELD_OUT_BYTES", int(held_out) - 1)
    assert DaskBoostingClassifier(n_estimators=3, client=client).fit(chunks, scores > 0).validation_score_.size == 0
    monkeypatch.setattr(_fit_data, "AUTO_HELD_OUT_BYTES", int(held_out) + 1)
    assert DaskBoostingClassifier(n_estimators=3, client=client).fit(chunks, scores > 0).validation_score_.size == 4


@pytest.mark.long
def test_the_cost_sensitive_trainers_on_sparse_chunks(client):
    """``DaskCostSensitiveBoosting`` (AdaBoostDB, Cost-Sensitive AdaBoost) reads sparse chunks as the generic
    trainer does, into the model of the same rows in dense chunks; the multi-class trainer, whose quantised codes
    are dense, refuses them by name (as its in-memory trainer refuses a sparse matrix)."""
    import bob_boost
    from bob_boost.boosting.partitions import LocalRows
    from bob_boost.dask import DaskCostSensitiveBoosting, DaskMultiClassBoosting
    from bob_boost.trainers.partitioned_classes import PartitionedMultiClassBoosting

    matrix, scores = _rows(seed=5, integers=True)
    sparse_chunks, dense_chunks = _chunks(matrix)
    signs = np.where(scores > 0, 1.0, -1.0)
    for trainer in (bob_boost.AdaBoostDBTrainer(1.0, 3.0), bob_boost.CostSensitiveAdaBoostTrainer(2.0, 1.0)):
        model = DaskCostSensitiveBoosting(trainer, client=client).train(sparse_chunks, signs, 6)
        dense = DaskCostSensitiveBoosting(trainer, client=client).train(dense_chunks, signs, 6)
        assert len(model) == 6 and model.weak_machines == dense.weak_machines
        np.testing.assert_array_equal(model.weights, dense.weights)
    classes = np.digitize(scores, np.quantile(scores, [1 / 3, 2 / 3]))
    badacost = bob_boost.BAdaCostTrainer(np.ones((3, 3)) - np.eye(3),
                                         bob_boost.CostSensitiveTreeTrainer(max_depth=2, quantized=True))
    with pytest.raises(TypeError, match="features: BAdaCostTrainer on partitions reads dense rows"):
        DaskMultiClassBoosting(badacost, client=client).train(sparse_chunks, classes, 2)
    with pytest.raises(TypeError, match="features: BAdaCostTrainer on partitions reads dense rows"):
        PartitionedMultiClassBoosting(badacost).train_on(LocalRows([900]), matrix, classes, 2)
