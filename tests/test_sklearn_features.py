"""What scikit-learn and LightGBM users expect of the estimators: staged outputs, early stopping,
warm start, class weights, feature importances, probabilities; and the callbacks behind them."""
from __future__ import annotations

import copy

import numpy as np
import pytest

pytest.importorskip("sklearn", reason="scikit-learn is an optional extra (pip install bob_boost[sklearn])")

from sklearn.datasets import make_classification  # noqa: E402
from sklearn.metrics import recall_score  # noqa: E402

from bob_boost import Boosting, ExponentialLoss, LogitLoss, StumpTrainer  # noqa: E402
from bob_boost.callbacks import EarlyStopping, LogEvaluation, RecordEvaluation  # noqa: E402
from bob_boost.sklearn import (AdaBoostDBClassifier, BAdaCostClassifier, BoostingClassifier,  # noqa: E402
                               BoostingRegressor, load_estimator)
from conftest import load_uci  # noqa: E402
from held_out_rows import held_out_rows  # noqa: E402


def _binary(n=400, flip=0.0, seed=0):
    X, y = make_classification(n_samples=n, n_features=8, n_informative=3, n_redundant=0, shuffle=False,
                               flip_y=flip, random_state=seed)
    return X, y


def _multiclass(n=300, seed=0):
    X, y = make_classification(n_samples=n, n_features=6, n_informative=4, n_redundant=0, n_classes=3,
                               n_clusters_per_class=1, random_state=seed)
    return X, np.array(["a", "b", "c"])[y]


ESTIMATORS = [
    lambda **kw: BoostingClassifier(n_estimators=25, **kw),
    lambda **kw: BoostingClassifier(loss="logit", weak_learner="tree", max_depth=2, learning_rate=0.5,
                                    n_estimators=25, **kw),
    lambda **kw: AdaBoostDBClassifier(cost_positive=2.0, n_estimators=25, **kw),
    lambda **kw: BAdaCostClassifier(n_estimators=25, feature_fraction=0.5, random_state=3, **kw),
]
ESTIMATOR_IDS = ["stumps", "gradient-trees", "adaboostdb", "badacost"]


def _data_for(factory):
    return _multiclass() if isinstance(factory(), BAdaCostClassifier) else _binary()


def _truncated_copy(machine, rounds):
    shorter = copy.deepcopy(machine)
    shorter.truncate(rounds)
    return shorter


@pytest.mark.parametrize("factory", ESTIMATORS, ids=ESTIMATOR_IDS)
def test_staged_outputs_equal_truncated_machines(factory):
    X, y = _data_for(factory)
    estimator = factory().fit(X, y)
    machine = estimator.machine_
    staged = list(zip(estimator.staged_decision_function(X), estimator.staged_predict(X),
                      estimator.staged_predict_proba(X), estimator.staged_score(X, y)))
    assert len(staged) == len(machine) > 5
    for rounds in (1, len(machine) // 2, len(machine)):
        decision, predicted, proba, score = staged[rounds - 1]
        estimator.machine_ = _truncated_copy(machine, rounds)
        np.testing.assert_array_equal(decision, estimator.decision_function(X))
        np.testing.assert_array_equal(predicted, estimator.predict(X))
        np.testing.assert_array_equal(proba, estimator.predict_proba(X))
        assert score == estimator.score(X, y)
    estimator.machine_ = machine


@pytest.mark.parametrize("factory", ESTIMATORS, ids=ESTIMATOR_IDS)
def test_predict_proba_is_consistent_with_predict(factory):
    X, y = _data_for(factory)
    estimator = factory().fit(X, y)
    proba = estimator.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_array_equal(estimator.classes_[np.argmax(proba, axis=1)], estimator.predict(X))


def test_adaboostdb_probability_is_the_cost_weighted_share():
    X, y = _binary()
    estimator = AdaBoostDBClassifier(cost_positive=3.0, cost_negative=0.5, n_estimators=10).fit(X, y)
    scores = estimator.decision_function(X)
    expected = 1.0 / (1.0 + np.exp(-3.5 * scores))
    np.testing.assert_allclose(estimator.predict_proba(X)[:, 1], expected, rtol=1e-12)


def test_regressor_staged_predict_and_score():
    X, y = _binary()
    target = X[:, 0] * 3.0 + X[:, 1]
    regressor = BoostingRegressor(n_estimators=20).fit(X, target)
    staged = list(regressor.staged_predict(X))
    assert len(staged) == len(regressor.machine_) == 20
    np.testing.assert_array_equal(staged[-1], regressor.predict(X))
    scores = list(regressor.staged_score(X, target))
    assert scores[-1] == pytest.approx(regressor.score(X, target))
    assert scores[-1] > scores[0]


@pytest.mark.parametrize("factory", ESTIMATORS, ids=ESTIMATOR_IDS)
def test_warm_start_equals_one_fit_bit_for_bit(factory):
    X, y = _data_for(factory)
    once = factory(warm_start=True).set_params(n_estimators=25).fit(X, y)
    grown = factory(warm_start=True).set_params(n_estimators=10).fit(X, y)
    first = grown.machine_
    grown.set_params(n_estimators=25).fit(X, y)
    assert grown.machine_ is first  # continued, not replaced
    assert len(grown.machine_) == len(once.machine_) == grown.n_iter_
    np.testing.assert_array_equal(grown.machine_.weights, once.machine_.weights)
    assert grown.machine_.weak_machines == once.machine_.weak_machines
    np.testing.assert_array_equal(grown.decision_function(X), once.decision_function(X))
    np.testing.assert_array_equal(grown.train_score_, once.train_score_)
    np.testing.assert_allclose(grown.feature_importances_, once.feature_importances_, rtol=1e-12, atol=1e-15)


def test_warm_start_regressor_with_intercept_bit_for_bit():
    X, _ = _binary()
    target = 50.0 + X[:, 0] * 3.0 + np.sin(X[:, 1])
    once = BoostingRegressor(n_estimators=30, warm_start=True).fit(X, target)
    grown = BoostingRegressor(n_estimators=12, warm_start=True).fit(X, target)
    grown.set_params(n_estimators=30).fit(X, target)
    np.testing.assert_array_equal(grown.machine_.weights, once.machine_.weights)
    np.testing.assert_array_equal(grown.predict(X), once.predict(X))


def test_warm_start_bad_input():
    X, y = _binary()
    estimator = BoostingClassifier(n_estimators=10, warm_start=True).fit(X, y)
    with pytest.raises(ValueError, match=r"n_estimators=5 must be larger or equal to len\(machine_\)=10"):
        estimator.set_params(n_estimators=5).fit(X, y)
    with pytest.raises(ValueError, match="X has 7 features"):
        estimator.set_params(n_estimators=20).fit(X[:, :7], y)
    with pytest.raises(ValueError, match="y: has classes"):
        estimator.fit(X, np.where(y == 1, "yes", "no"))
    same = estimator.machine_
    estimator.set_params(n_estimators=10).fit(X, y)  # as many rounds as fitted: nothing to add
    assert estimator.machine_ is same and len(same) == 10


def test_without_warm_start_refit_starts_over():
    X, y = _binary()
    estimator = BoostingClassifier(n_estimators=10).fit(X, y)
    first = estimator.machine_
    estimator.set_params(n_estimators=5).fit(X, y)
    assert estimator.machine_ is not first and len(estimator.machine_) == 5


def test_early_stopping_on_noisy_labels_stops_at_the_best_round():
    X, y = _binary(n=1000, flip=0.3, seed=1)
    estimator = BoostingClassifier(n_estimators=300, early_stopping=True, n_iter_no_change=5, random_state=0,
                                   validation_fraction=0.25).fit(X, y)
    assert estimator.n_iter_ == len(estimator.machine_) < 300
    assert estimator.train_score_.shape == estimator.validation_score_.shape == (estimator.n_iter_ + 1,)
    # the validation history says where: its best entry is the last kept one
    assert np.argmax(estimator.validation_score_) == estimator.n_iter_
    assert estimator.validation_score_[-1] > estimator.validation_score_[0]


def test_early_stopping_history_is_the_staged_validation_loss():
    X, y = _binary(n=600, flip=0.2)
    estimator = BoostingClassifier(n_estimators=200, early_stopping=True, n_iter_no_change=3, random_state=7,
                                   loss="logit").fit(X, y)
    held_out = held_out_rows(len(y), 7, labels=y)
    targets = np.where(y[held_out] == 1, 1.0, -1.0)[:, None]
    loss = LogitLoss()
    staged = [-np.mean(loss.loss(targets, s)) for s in estimator.machine_.staged_decision_scores(X[held_out])]
    np.testing.assert_allclose(estimator.validation_score_[1:], staged, rtol=1e-12)


def test_zero_weight_samples_move_no_other_sample_in_or_out_of_the_validation_set():
    X, y = _binary(n=600, flip=0.2)
    weights = np.where(np.arange(600) % 7 == 3, 0.0, 1.0)
    estimator = BoostingClassifier(n_estimators=30, early_stopping=True, n_iter_no_change=30,
                                   loss="logit").fit(X, y, sample_weight=weights)
    held_out = held_out_rows(len(y), 0, labels=y, weights=weights)  # random_state=None: seed 0
    targets = np.where(y[held_out] == 1, 1.0, -1.0)[:, None]
    staged = [-np.mean(LogitLoss().loss(targets, s)) for s in estimator.machine_.staged_decision_scores(X[held_out])]
    np.testing.assert_allclose(estimator.validation_score_[1:], staged, rtol=1e-12)


def test_early_stopping_auto_and_scorer():
    X, y = _binary(n=300)
    small = BoostingClassifier(n_estimators=10).fit(X, y)
    assert small.validation_score_.size == 0 and small.train_score_.size == 11
    scored = BoostingClassifier(n_estimators=60, early_stopping=True, scoring="accuracy", n_iter_no_change=4,
                                random_state=0).fit(X, y)
    assert scored.validation_score_.size == scored.n_iter_ + 1
    assert np.all((scored.validation_score_ >= 0) & (scored.validation_score_ <= 1))


@pytest.mark.parametrize("parameters, message", [
    ({"n_iter_no_change": 0}, "n_iter_no_change"),
    ({"validation_fraction": 1.0}, "validation_fraction"),
    ({"validation_fraction": 0.0}, "validation_fraction"),
    ({"early_stopping": "yes"}, "early_stopping"),
    ({"tol": -1.0}, "tol"),
    ({"class_weight": {"z": 2.0}}, "class_weight: names class 'z', which is not in y"),
    ({"class_weight": {0: 1.0, 1: 2.0, 2: 3.0}}, "class_weight: names class 2"),
    ({"class_weight": "skewed"}, "class_weight"),
])
def test_bad_fit_parameters(parameters, message):
    X, y = _binary(n=100)
    with pytest.raises(ValueError, match=message):
        BoostingClassifier(n_estimators=3, **parameters).fit(X, y)


def test_validation_fraction_leaving_a_class_without_samples():
    X, y = _binary(n=100)
    y = y.copy()
    y[:] = 0
    y[:1] = 1  # one sample of class 1: it cannot be held out and kept for training
    with pytest.raises(ValueError, match="validation_fraction"):
        BoostingClassifier(n_estimators=3, early_stopping=True, validation_fraction=0.01).fit(X, y)


@pytest.mark.parametrize("factory", [f for f in ESTIMATORS if "class_weight" in f().get_params()],
                         ids=[i for f, i in zip(ESTIMATORS, ESTIMATOR_IDS) if "class_weight" in f().get_params()])
def test_class_weight_equals_matching_sample_weight(factory):
    X, y = _data_for(factory)
    classes = np.unique(y)
    weights = {c: float(i + 1) for i, c in enumerate(classes)}
    by_class = factory(class_weight=weights).fit(X, y)
    by_sample = factory().fit(X, y, sample_weight=np.array([weights[c] for c in y]))
    np.testing.assert_array_equal(by_class.machine_.weights, by_sample.machine_.weights)
    np.testing.assert_array_equal(by_class.decision_function(X), by_sample.decision_function(X))
    unweighted = factory().fit(X, y)
    assert not np.array_equal(by_class.decision_function(X), unweighted.decision_function(X))


def test_balanced_class_weight_raises_minority_recall_on_uci_data():
    X, y = _imbalanced_uci()
    minority = np.argmin(np.bincount(y))
    plain = BoostingClassifier(n_estimators=20).fit(X, y)
    balanced = BoostingClassifier(n_estimators=20, class_weight="balanced").fit(X, y)
    counts = np.bincount(y)
    expected = len(y) / (2 * counts[y])
    same = BoostingClassifier(n_estimators=20).fit(X, y, sample_weight=expected)
    np.testing.assert_array_equal(balanced.machine_.weights, same.machine_.weights)
    assert (recall_score(y, balanced.predict(X), pos_label=minority)
            > recall_score(y, plain.predict(X), pos_label=minority))


def _imbalanced_uci():
    """Pima diabetes (500 negative, 268 positive), the positives thinned to 1 in 4: about 1:7."""
    X, labels = load_uci("diabetes")
    y = (labels == labels.max()).astype(int)
    keep = (y == 0) | (np.arange(len(y)) % 4 == 0)
    return X[keep], y[keep]


def test_feature_importances_rank_informative_features_first():
    X, y = _binary(n=600)  # shuffle=False: the 3 informative features are columns 0, 1, 2
    for estimator in (BoostingClassifier(n_estimators=40), BoostingClassifier(weak_learner="tree", max_depth=2,
                                                                              loss="logit", n_estimators=20),
                      AdaBoostDBClassifier(n_estimators=30)):
        importances = estimator.fit(X, y).feature_importances_
        assert importances.shape == (8,) and np.all(importances >= 0)
        assert importances.sum() == pytest.approx(1.0)
        assert set(np.argsort(importances)[-3:]) == {0, 1, 2}, (type(estimator).__name__, importances)


def test_feature_importances_of_lut_and_badacost():
    X, y = _multiclass()
    importances = BAdaCostClassifier(n_estimators=20).fit(X, y).feature_importances_
    assert importances.sum() == pytest.approx(1.0) and np.all(importances >= 0)
    digits = np.clip((X * 2 + 8).astype(int), 0, 15)
    lut = BoostingClassifier(weak_learner="lut", maximum_feature_value=16, loss="logit", n_estimators=20)
    importances = lut.fit(digits, y).feature_importances_
    assert importances.sum() == pytest.approx(1.0)
    used = np.zeros(6, dtype=bool)
    used[lut.machine_.feature_indices()] = True
    assert np.all(importances[~used] == 0) and np.all(importances[used] > 0)


def test_fitted_attributes_survive_save_and_load(tmp_path):
    X, y = _binary()
    estimator = BoostingClassifier(n_estimators=15).fit(X, y)
    estimator.save(tmp_path / "model.hdf5")
    loaded = load_estimator(tmp_path / "model.hdf5")
    assert loaded.n_iter_ == 15
    np.testing.assert_array_equal(loaded.train_score_, estimator.train_score_)
    np.testing.assert_array_equal(loaded.feature_importances_, estimator.feature_importances_)


def test_feature_names_stored_for_the_other_tools():
    pandas = pytest.importorskip("pandas")
    X, y = _binary()
    frame = pandas.DataFrame(X, columns=[f"f{i}" for i in range(8)])
    estimator = BoostingClassifier(n_estimators=5).fit(frame, y)
    assert list(estimator.feature_names_in_) == [f"f{i}" for i in range(8)]
    assert estimator.machine_.metadata["feature_names"] == [f"f{i}" for i in range(8)]


def test_badacost_sample_weight_and_presets():
    X, y = _multiclass()
    keep = np.ones(len(y))
    keep[:50] = 0.0
    weighted = BAdaCostClassifier(n_estimators=10).fit(X, y, sample_weight=keep)
    subset = BAdaCostClassifier(n_estimators=10).fit(X[50:], y[50:])
    np.testing.assert_array_equal(weighted.machine_.weights, subset.machine_.weights)
    rare = np.r_[np.flatnonzero(y != "c"), np.flatnonzero(y == "c")[:15]]
    balanced = BAdaCostClassifier(cost_matrix="balanced", n_estimators=10).fit(X[rare], y[rare])
    costs = balanced.cost_matrix_
    assert costs[2, 0] > costs[0, 1] and np.all(np.diag(costs) == 0)
    imbalance = BAdaCostClassifier(cost_matrix="imbalance", n_estimators=10).fit(X[rare], y[rare])
    assert imbalance.cost_matrix_.shape == (3, 3) and np.all(imbalance.cost_matrix_[~np.eye(3, dtype=bool)] > 0)
    with pytest.raises(ValueError, match="cost_matrix"):
        BAdaCostClassifier(cost_matrix="cheap").fit(X, y)


def test_record_and_early_stopping_callbacks_in_scripts(caplog):
    X, y = _binary(n=500, flip=0.1)
    t = np.where(y == 1, 1.0, -1.0)
    loss = ExponentialLoss()
    train, valid = slice(0, 400), slice(400, None)
    record = RecordEvaluation(X[train], loss, targets=t[train], name="training")
    from_trainer = RecordEvaluation(X[train], loss, targets=t[train], name="training", training=True)
    stopper = EarlyStopping(X[valid], loss, targets=t[valid], patience=3)
    with caplog.at_level("INFO", logger="bob_boost.callbacks"):
        machine = Boosting(StumpTrainer(), loss).train(X[train], t[train], 200,
                                                       callback=[record, from_trainer, stopper,
                                                                 LogEvaluation([record, stopper], 2)])
    assert stopper.stopped and len(machine) == stopper.best_length < 200
    assert len(record.history) == len(stopper.history) == stopper.best_length + 3 + 1
    assert from_trainer.history == record.history  # the trainer's scores are the staged scores
    assert np.argmin(stopper.history) == stopper.best_length
    assert stopper.best_length > 2 and "round 2: training" in caplog.text and "validation" in caplog.text
    staged = [np.mean(loss.loss(t[train, None], s)) for s in machine.staged_decision_scores(X[train])]
    np.testing.assert_array_equal(record.history[1:len(machine) + 1], staged)


def test_a_training_record_takes_the_loss_the_trainer_summed():
    """Where the trainer sums the training loss at a round's scores (trees' Newton steps, checked for descent:
    here every round's, the loss having no curvature bound that would show a step to descend), a record of that
    loss on the same training targets and weights (or weights of 1) takes the sum instead of a second pass; a
    record with other weights computes its own. Both histories are the loss of the staged scores."""
    from bob_boost import TreeTrainer

    class Checked(LogitLoss):
        curvature = None

    X, y = _binary(n=3000, flip=0.1)
    t = np.where(y == 1, 1.0, -1.0)[:, np.newaxis]
    weights = np.random.default_rng(0).uniform(0.5, 2.0, size=t.shape[0])
    loss = Checked()
    same = RecordEvaluation(X, loss, targets=t, name="training", training=True)
    other = RecordEvaluation(X, loss, targets=t, sample_weight=weights, name="training", training=True)
    ones = RecordEvaluation(X, loss, targets=t, sample_weight=np.ones(t.shape[0]), name="training", training=True)
    passes = {"same": 0, "other": 0, "ones": 0}
    for name, record in (("same", same), ("other", other), ("ones", ones)):
        def counted(machine, evaluate=record._evaluate, name=name):
            passes[name] += 1
            return evaluate(machine)
        record._evaluate = counted
    machine = Boosting(TreeTrainer(max_leaves=8), loss, learning_rate=0.3).train(X, t, 12,
                                                                                callback=[same, other, ones])
    # before training, then every round; weights of 1 are no weights
    assert len(machine) == 12 and passes == {"same": 1, "other": 13, "ones": 1}
    assert ones.history == same.history
    staged = list(machine.staged_decision_scores(X))
    np.testing.assert_allclose(same.history[1:], [np.mean(loss.loss(t, s)) for s in staged], rtol=1e-13)
    np.testing.assert_array_equal(other.history[1:], [np.sum(weights[:, np.newaxis] * loss.loss(t, s))
                                                      / np.sum(weights) for s in staged])


def test_a_records_loss_is_the_trainers_sum_on_any_number_of_threads():
    """A record sums a loss in the trainer's fixed row blocks: its history is the same float for 1 and 2 threads,
    where the trainer's own sums reach it (a loss without a curvature bound, checked every round) or not."""
    from bob_boost import TreeTrainer

    class Checked(LogitLoss):
        curvature = None

    rng = np.random.default_rng(5)
    X = rng.normal(size=(150_000, 3))  # three blocks of the loss sums
    t = np.where(X[:, 0] + rng.normal(size=X.shape[0]) > 0, 1.0, -1.0)[:, np.newaxis]
    histories = {}
    for loss in (LogitLoss(), Checked()):
        for n_threads in (1, 2):
            record = RecordEvaluation(X, loss, targets=t, name="training", training=True, n_threads=n_threads)
            Boosting(TreeTrainer(max_leaves=4, n_threads=n_threads), loss).train(X, t, 3, callback=record)
            histories[type(loss).__name__, n_threads] = record.history
    assert histories["LogitLoss", 1] == histories["LogitLoss", 2] == histories["Checked", 1] == histories["Checked", 2]
    assert histories["LogitLoss", 1][-1] < histories["LogitLoss", 1][0]


def test_callback_bad_input():
    X, y = _binary(n=50)
    with pytest.raises(ValueError, match="targets"):
        RecordEvaluation(X, ExponentialLoss())
    with pytest.raises(TypeError, match="metric"):
        RecordEvaluation(X, "loss")
    with pytest.raises(ValueError, match="patience"):
        EarlyStopping(X, ExponentialLoss(), targets=np.ones(50), patience=0)
    with pytest.raises(TypeError, match="n_threads"):
        RecordEvaluation(X, ExponentialLoss(), targets=np.ones(50), n_threads="two")
    with pytest.raises(TypeError, match=r"callback\[1\]"):
        Boosting(StumpTrainer(), ExponentialLoss()).train(X, np.where(y == 1, 1.0, -1.0), 3, callback=[None, 3])


def test_warm_start_after_loading_a_plain_machine_file(tmp_path):
    from bob_boost.recipes import make_recipe

    X, y = _binary()
    machine = make_recipe("boosting", number_of_classes=2).train(X, np.where(y == 1, 1.0, -1.0), 10)
    machine.save(tmp_path / "plain.hdf5")
    estimator = load_estimator(tmp_path / "plain.hdf5")
    assert estimator.n_iter_ == 10 and np.all(np.isnan(estimator.train_score_)) and estimator.train_score_.size == 11
    estimator.set_params(warm_start=True, n_estimators=20).fit(X, np.where(y == 1, 1, -1))  # the file's labels
    assert estimator.n_iter_ == 20 and estimator.train_score_.shape == (21,)
    assert np.all(np.isnan(estimator.train_score_[:10])) and np.all(np.isfinite(estimator.train_score_[10:]))


def test_warm_start_with_early_stopping_keeps_its_seeds(tmp_path):
    X, y = _multiclass()
    options = dict(feature_fraction=0.5, early_stopping=True, n_iter_no_change=100, shrinkage=0.1, warm_start=True)
    once = BAdaCostClassifier(n_estimators=25, random_state=np.random.RandomState(1), **options).fit(X, y)
    grown = BAdaCostClassifier(n_estimators=10, random_state=np.random.RandomState(1), **options).fit(X, y)
    grown.save(tmp_path / "grown.hdf5")
    loaded = load_estimator(tmp_path / "grown.hdf5").set_params(n_estimators=25).fit(X, y)
    grown.set_params(n_estimators=25).fit(X, y)
    for continued in (grown, loaded):
        np.testing.assert_array_equal(continued.machine_.weights, once.machine_.weights)
        np.testing.assert_array_equal(continued.validation_score_, once.validation_score_)


def test_scorer_on_named_columns_warns_nothing():
    import warnings

    pandas = pytest.importorskip("pandas")
    X, y = _binary(n=300)
    frame = pandas.DataFrame(X, columns=[f"f{i}" for i in range(8)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        estimator = BoostingClassifier(n_estimators=15, early_stopping=True, scoring="accuracy",
                                       random_state=0).fit(frame, y, sample_weight=np.linspace(1, 2, 300))
    assert estimator.validation_score_.size == estimator.n_iter_ + 1


def test_constant_features_regressor_history():
    regressor = BoostingRegressor(n_estimators=5).fit(np.ones((50, 3)), np.arange(50.0))
    assert regressor.n_iter_ == 0 and regressor.train_score_.shape == (1,) and regressor.train_score_[0] < 0


@pytest.mark.parametrize("options", [dict(), dict(weak_learner="tree", loss="logit", max_depth=3),
                                     dict(weak_learner="lut", maximum_feature_value=8, loss="logit")],
                         ids=["stumps", "trees", "luts"])
def test_missing_values_through_the_estimators(options):
    X, y = _binary(n=500)
    if options.get("weak_learner") == "lut":
        X = np.clip(np.round(X + 4), 0, 7)
    X = X.copy()
    X[np.random.default_rng(0).random(X.shape) < 0.2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        BoostingClassifier(n_estimators=5, **options).fit(X, y)
    estimator = BoostingClassifier(n_estimators=20, missing="bin", **options).fit(X, y)
    assert estimator.score(X, y) > 0.7  # chance is 0.5
    assert any(m.accepts_missing for m in estimator.machine_.weak_machines)


def test_missing_values_regressor_badacost_and_bad_values():
    X, y = _multiclass()
    X = X.copy()
    X[np.random.default_rng(1).random(X.shape) < 0.2] = np.nan
    assert BAdaCostClassifier(n_estimators=10, missing="bin").fit(X, y).score(X, y) > 0.6
    regressor = BoostingRegressor(weak_learner="tree", n_estimators=10, missing="bin").fit(X, np.nan_to_num(X[:, 0]))
    assert np.all(np.isfinite(regressor.predict(X)))
    with pytest.raises(ValueError, match="missing: must be None or 'bin'"):
        BoostingClassifier(missing="zero").fit(X[:, :2], (y == "a").astype(int))
