"""The Dask estimators are the in-memory estimators with a cluster as their data source: subclasses with the
same parameters (plus ``client``), the in-memory prediction, probabilities, staged scores and files."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
pytest.importorskip("distributed", reason="distributed training needs the dask extra")

from bob_boost import ModelFormatError  # noqa: E402
from bob_boost.dask import (DaskAdaBoostDBClassifier, DaskBAdaCostClassifier, DaskBoostingClassifier,  # noqa: E402
                            DaskBoostingRegressor)
from bob_boost.sklearn import (AdaBoostDBClassifier, BAdaCostClassifier, BoostingClassifier,  # noqa: E402
                               BoostingRegressor)

#: Dask estimator -> (its in-memory estimator, its parameters of its own, defaults that differ on a cluster)
TWINS = {
    DaskBoostingClassifier: (BoostingClassifier, ["client"], {"n_threads": 1}),
    DaskBoostingRegressor: (BoostingRegressor, ["client"], {"n_threads": 1}),
    DaskAdaBoostDBClassifier: (AdaBoostDBClassifier, ["max_bins", "client"], {}),
    DaskBAdaCostClassifier: (BAdaCostClassifier, ["client"], {}),
}


@pytest.mark.parametrize("dask_class", list(TWINS), ids=lambda cls: cls.__name__)
def test_each_dask_estimator_is_its_in_memory_estimator_with_a_client(dask_class):
    local_class, own, defaults = TWINS[dask_class]
    assert issubclass(dask_class, local_class)
    dask_parameters = inspect.signature(dask_class).parameters
    local_parameters = inspect.signature(local_class).parameters
    # the in-memory parameters first, in their order (positional calls mean the same), then the cluster's
    assert list(dask_parameters) == list(local_parameters) + own
    for name, parameter in local_parameters.items():
        assert dask_parameters[name].default == defaults.get(name, parameter.default), name
    # every parameter is kept under its own name (the constructors only store them): a distinct value each
    values = {name: object() for name in dask_parameters}
    params = dask_class(**values).get_params(deep=False)
    assert all(params[name] is value for name, value in values.items())

@pytest.mark.parametrize("dask_class", list(TWINS), ids=lambda cls: cls.__name__)
def test_a_dask_estimator_takes_parameters_by_position_or_name_and_names_itself_for_an_unknown_one(dask_class):
    local_class, own, defaults = TWINS[dask_class]
    names = list(inspect.signature(local_class).parameters)[:3]
    values = [object() for _ in names]
    by_position, by_name = dask_class(*values), dask_class(**dict(zip(names, values)))
    assert by_position.get_params(deep=False) == by_name.get_params(deep=False)
    assert {name: by_position.get_params()[name] for name, value in defaults.items()} == defaults
    with pytest.raises(TypeError, match=dask_class.__name__):
        dask_class(not_a_parameter=1)


def _binary(n=600, seed=3):
    rng = np.random.default_rng(seed)
    features = rng.integers(0, 9, size=(n, 4)).astype(float)
    labels = np.where(features[:, 0] + features[:, 1] + rng.normal(0, 2, n) > 8, "yes", "no")
    return features, labels


def test_probabilities_staged_scores_and_importances_are_the_in_memory_ones(client):
    features, labels = _binary()
    dX = da.from_array(features, chunks=(250, 4))
    model = DaskBoostingClassifier(loss="logit", n_estimators=5, client=client).fit(dX, labels)
    local = model.to_local()
    probabilities = model.predict_proba(dX)
    assert isinstance(probabilities, da.Array) and probabilities.shape == (600, 2)
    np.testing.assert_array_equal(probabilities.compute(), local.predict_proba(features))
    np.testing.assert_array_equal(model.predict_proba(features), local.predict_proba(features))
    staged = list(model.staged_predict(features))
    assert len(staged) == 5 and np.array_equal(staged[-1], local.predict(features))
    assert np.isnan(model.train_score_).all() and model.train_score_.shape == (6,)
    for estimator in (model, local):  # the training losses stayed on the workers: no importances from them
        with pytest.raises(ValueError, match="importance_type: 'loss' needs the training losses of every round"):
            _ = estimator.feature_importances_
    model.set_params(importance_type="split")
    local.set_params(importance_type="split")
    np.testing.assert_array_equal(model.feature_importances_, local.feature_importances_)
    assert model.feature_importances_.sum() == pytest.approx(1.0)
    with pytest.raises(TypeError, match="X: DaskBoostingClassifier predicts Dask arrays with predict"):
        list(model.staged_predict(dX))


def test_multi_class_scores_and_probabilities_of_dask_arrays_have_a_column_per_class(client):
    rng = np.random.default_rng(5)
    features = rng.integers(0, 6, size=(450, 3)).astype(float)
    classes = (features[:, 0] + features[:, 1] + rng.integers(0, 2, 450)) % 3
    dX = da.from_array(features, chunks=(200, 3))
    model = DaskBAdaCostClassifier(n_estimators=4, client=client).fit(dX, classes)
    local = model.to_local()
    for method in ("decision_function", "predict_proba"):
        lazy = getattr(model, method)(dX)
        expected = getattr(local, method)(features)
        assert lazy.shape == expected.shape == (450, 3), method
        np.testing.assert_array_equal(lazy.compute(), expected)


def test_a_saved_dask_estimator_loads_in_memory_and_on_the_cluster(client, tmp_path):
    features, labels = _binary(seed=4)
    dX = da.from_array(features, chunks=(300, 4))
    model = DaskAdaBoostDBClassifier(2.0, 1.0, n_estimators=4, max_bins=32, client=client).fit(dX, labels)
    path = tmp_path / "model.hdf5"
    model.save(path)
    memory = AdaBoostDBClassifier.load(path)
    again = DaskAdaBoostDBClassifier.load(path)
    assert type(memory) is AdaBoostDBClassifier and type(again) is DaskAdaBoostDBClassifier
    assert again.client is None and again.max_bins == 256  # the file holds the in-memory parameters
    assert again.get_params()["cost_positive"] == 2.0
    for estimator in (memory, again):
        np.testing.assert_array_equal(estimator.decision_function(features), model.decision_function(features))
    np.testing.assert_array_equal(again.predict(dX).compute(), model.predict(features))
    (tmp_path / "other.hdf5").write_bytes(b"not a model")
    with pytest.raises(ModelFormatError):
        DaskAdaBoostDBClassifier.load(tmp_path / "other.hdf5")


@pytest.mark.parametrize("dask_class", [DaskBoostingClassifier, DaskBoostingRegressor], ids=lambda c: c.__name__)
def test_quantised_gradients_are_refused_on_a_cluster(client, dask_class):
    features, labels = _binary(n=100)
    targets = labels if dask_class is DaskBoostingClassifier else features[:, 0]
    with pytest.raises(ValueError, match="quantized_gradients: is for training in memory"):
        dask_class(weak_learner="tree", quantized_gradients=8, client=client).fit(
            da.from_array(features, chunks=50), targets)


@pytest.mark.parametrize("options", [{"learning_rate": 0.5}, {"weak_learner": "lut", "learning_rate": 0.5,
                                                              "maximum_feature_value": 9}],
                         ids=["stumps", "tables"])
def test_shrunk_stumps_and_tables_are_the_in_memory_ones(client, options):
    """The cluster trains the in-memory recipe's twin: its learning rate too (every weight halved here)."""
    features, labels = _binary(seed=6)
    memory = BoostingClassifier(loss="logit", n_estimators=4, **options).fit(features, labels)
    model = DaskBoostingClassifier(loss="logit", n_estimators=4, client=client, **options).fit(
        da.from_array(features, chunks=(250, 4)), labels)
    assert model.machine_.weak_machines == memory.machine_.weak_machines
    np.testing.assert_allclose(model.machine_.weights, memory.machine_.weights, rtol=1e-9)


def test_rows_without_weight_take_no_part_as_in_memory(client):
    """Zero-weight rows are dropped before binning on the cluster too: their values move no threshold."""
    features, labels = _binary(seed=7)
    features[::3] += 0.5  # values only the rows without weight have
    weights = np.where(np.arange(600) % 3 == 0, 0.0, 1.0)
    memory = BoostingClassifier(loss="logit", n_estimators=4, max_bins=8).fit(features, labels, sample_weight=weights)
    model = DaskBoostingClassifier(loss="logit", n_estimators=4, max_bins=8, client=client).fit(
        da.from_array(features, chunks=(250, 4)), labels, sample_weight=weights)
    assert model.machine_.weak_machines == memory.machine_.weak_machines
    np.testing.assert_allclose(model.machine_.weights, memory.machine_.weights, rtol=1e-9)


@pytest.mark.long
def test_shapley_values_of_dask_rows_are_lazy_and_the_in_memory_ones(client):
    features, labels = _binary(seed=8)
    dX = da.from_array(features, chunks=(250, 4))
    model = DaskBoostingClassifier(weak_learner="tree", n_estimators=4, client=client).fit(dX, labels)
    lazy = model.shap_values(dX, features[:20])
    assert isinstance(lazy, da.Array) and lazy.shape == (600, 5)
    np.testing.assert_array_equal(lazy.compute(), model.to_local().shap_values(features, features[:20]))
    path_dependent = model.shap_values(dX)  # from the trees' cover
    assert isinstance(path_dependent, da.Array)
    np.testing.assert_array_equal(path_dependent.compute(), model.to_local().shap_values(features))
    for labels, shape in ((np.arange(600) % 3, (600, 5, 3)), (np.arange(600) % 2, (600, 5))):
        costs = DaskBAdaCostClassifier(n_estimators=3, client=client).fit(dX, labels)
        values = costs.shap_values(dX, features[:10])
        assert values.shape == shape
        np.testing.assert_array_equal(values.compute(), costs.to_local().shap_values(features, features[:10]))


def test_adaboostdb_splits_a_dask_frames_category_column_as_in_memory(client):
    """The stump pool's category sets on a cluster: the same stumps and steps as in memory (the numeric column has
    fewer distinct values than the bins, so both pools hold the same stumps)."""
    pd = pytest.importorskip("pandas", reason="dataframes are pandas'")
    dd = pytest.importorskip("dask.dataframe", reason="Dask dataframes need dask[dataframe]")
    rng = np.random.default_rng(8)
    n = 900
    colour = rng.choice(["red", "green", "blue", "grey", "pink"], n)
    frame = pd.DataFrame({"colour": pd.Categorical(colour), "size": np.round(rng.normal(size=n), 1)})
    y = np.where(np.isin(colour, ["green", "pink"]) ^ (frame["size"] > 0.9), "yes", "no")
    local = AdaBoostDBClassifier(2.0, 1.0, n_estimators=6, early_stopping=False).fit(frame, y)
    model = DaskAdaBoostDBClassifier(2.0, 1.0, n_estimators=6, early_stopping=False, client=client).fit(
        dd.from_pandas(frame, npartitions=3), y)
    sets = [m.categories for m in model.machine_.weak_machines if m.categories is not None]
    assert sets and all(0 < s.size < 5 for s in sets)
    for ours, theirs in zip(model.machine_.weak_machines, local.machine_.weak_machines):
        assert (ours.index, ours.polarity, ours.threshold) == (theirs.index, theirs.polarity, theirs.threshold)
        assert (ours.categories is None) == (theirs.categories is None)
        if ours.categories is not None:
            np.testing.assert_array_equal(ours.categories, theirs.categories)
    np.testing.assert_allclose(model.machine_.weights, local.machine_.weights, rtol=1e-12)


@pytest.mark.long
def test_dask_dataframes_with_category_and_text_columns_train_the_in_memory_model(client):
    """A ``category`` column (with categories Dask knows, or must find) and a named text column are coded as
    the in-memory estimator codes the pandas frame: the same categories, the same model and predictions."""
    pd = pytest.importorskip("pandas", reason="dataframes are pandas'")
    dd = pytest.importorskip("dask.dataframe", reason="Dask dataframes need dask[dataframe]")
    rng = np.random.default_rng(5)
    n = 1200
    frame = pd.DataFrame({"colour": pd.Categorical(rng.choice(["red", "green", "blue", "grey"], n)),
                          "size": rng.normal(size=n), "shape": rng.choice(["round", "square", "flat"], n)})
    y = np.where(frame["colour"].isin(["green", "grey"]) ^ (frame["size"] > 0.8), "yes", "no")
    options = dict(n_estimators=6, early_stopping=False, categorical_features=["colour", "shape"])
    for local_class, dask_class, extra in ((BoostingClassifier, DaskBoostingClassifier, {"weak_learner": "tree"}),
                                           (BAdaCostClassifier, DaskBAdaCostClassifier, {})):
        local = local_class(**options, **extra).fit(frame, y)
        for cluster_frame in (dd.from_pandas(frame, npartitions=3),
                              dd.from_pandas(frame.astype({"colour": str}), npartitions=2).astype(
                                  {"colour": "category"})):  # categories Dask does not know yet
            model = dask_class(client=client, **options, **extra).fit(cluster_frame, y)
            assert model._category_values == local._category_values
            assert list(model.feature_names_in_) == ["colour", "size", "shape"]
            assert any(getattr(m, "categories", None) is not None for m in model.machine_.weak_machines)
            np.testing.assert_allclose(model.decision_function(cluster_frame).compute(), local.decision_function(frame),
                                       rtol=1e-12, atol=1e-12)
            np.testing.assert_array_equal(model.predict(cluster_frame).compute(), local.predict(frame))
        with pytest.raises(ValueError, match="X: its columns .* are not those seen in fit"):
            model.predict(cluster_frame[["size", "colour", "shape"]])
    with pytest.raises(ValueError, match="X: column 'shape' holds text; name it in categorical_features"):
        DaskBoostingClassifier(client=client, n_estimators=2).fit(dd.from_pandas(frame, npartitions=2), y)
