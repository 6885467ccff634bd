"""Calibrated AdaMEC: AdaBoost trained on the samples not held out, its probability calibrated on the others,
and the class of least expected cost: ``classes_[1]`` where that probability exceeds C_FP / (C_FP + C_FN)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn", reason="the estimator needs scikit-learn")

from bob_boost.sklearn import AdaMECClassifier, BoostingClassifier, load_estimator  # noqa: E402
from bob_boost.trainers.adamec import platt  # noqa: E402


def _data(n=800, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = np.where(X[:, 0] + 0.7 * X[:, 1] + rng.normal(scale=0.8, size=n) > 0.6, "sick", "well")
    return X, y


@pytest.mark.parametrize("calibration", ["platt", "isotonic", None])
@pytest.mark.parametrize("costs", [(1.0, 1.0), (5.0, 1.0), (1.0, 4.0)])
def test_the_prediction_is_the_class_of_least_expected_cost(calibration, costs):
    X, y = _data()
    model = AdaMECClassifier(*costs, n_estimators=30, calibration=calibration, random_state=1).fit(X, y)
    positive = model.predict_proba(X)[:, 1]
    expected = np.where(positive > costs[1] / sum(costs), model.classes_[1], model.classes_[0])
    away = np.abs(positive - costs[1] / sum(costs)) > 1e-9  # rows on the threshold itself: rounding decides
    np.testing.assert_array_equal(model.predict(X)[away], expected[away])
    np.testing.assert_array_equal(model.decision_function(X) > 0, model.predict(X) == model.classes_[1])


def test_uncalibrated_adamec_is_adaboost_with_tings_threshold():
    X, y = _data()
    adaboost = BoostingClassifier(n_estimators=30, boost_from_average=False, early_stopping=False).fit(X, y)
    model = AdaMECClassifier(cost_positive=3.0, cost_negative=1.0, n_estimators=30, calibration=None).fit(X, y)
    shift = 0.5 * np.log(1.0 / 3.0)
    assert model.threshold_ == pytest.approx(shift)
    np.testing.assert_allclose(model.decision_function(X), adaboost.decision_function(X) - shift, rtol=1e-12,
                               atol=1e-12)


def test_platt_is_the_logistic_fit_to_platts_targets():
    """The gradient of the cross-entropy to Platt's targets vanishes at the fitted (a, b), and the fit agrees
    with scikit-learn's own sigmoid calibration (which uses the same targets)."""
    rng = np.random.default_rng(3)
    scores = rng.normal(size=400)
    positive = rng.random(400) < 1.0 / (1.0 + np.exp(-1.7 * scores + 0.3))
    a, b = platt(scores, positive, None)
    targets = np.where(positive, (positive.sum() + 1) / (positive.sum() + 2), 1 / ((~positive).sum() + 2))
    residual = 1.0 / (1.0 + np.exp(-(a * scores + b))) - targets
    assert abs(np.sum(residual * scores)) < 1e-8 and abs(np.sum(residual)) < 1e-8
    from sklearn.calibration import _sigmoid_calibration
    sk_a, sk_b = _sigmoid_calibration(scores, positive.astype(int))  # P = 1 / (1 + exp(sk_a F + sk_b))
    assert a == pytest.approx(-sk_a, rel=1e-4) and b == pytest.approx(-sk_b, rel=1e-4, abs=1e-6)


def test_the_machine_is_adaboost_of_the_samples_not_held_out(tmp_path):
    X, y = _data()
    model = AdaMECClassifier(cost_positive=2.0, n_estimators=20, calibration="platt", random_state=5).fit(X, y)
    from bob_boost.holdout import held_out_counts, held_out_mask
    encoded = (y == model.classes_[1]).astype(np.int64)
    held = held_out_mask(np.arange(y.size), encoded, held_out_counts(np.bincount(encoded), 0.5), 5)
    adaboost = BoostingClassifier(n_estimators=20, boost_from_average=False, early_stopping=False).fit(X[~held],
                                                                                                   y[~held])
    np.testing.assert_allclose(model.machine_.weights, adaboost.machine_.weights, rtol=1e-12)
    model.save(tmp_path / "adamec.hdf5")
    loaded = load_estimator(tmp_path / "adamec.hdf5")
    assert type(loaded) is AdaMECClassifier and loaded.calibration_ == model.calibration_
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    onnxruntime = pytest.importorskip("onnxruntime", reason="ONNX parity needs the onnx extra")
    from bob_boost.onnx import to_onnx
    session = onnxruntime.InferenceSession(to_onnx(model).SerializeToString())
    labels, _, probabilities = session.run(None, {session.get_inputs()[0].name: X.astype(np.float32)})
    np.testing.assert_array_equal(labels, model.predict(X))
    np.testing.assert_allclose(probabilities, model.predict_proba(X), atol=1e-5)
    isotonic = AdaMECClassifier(n_estimators=5, calibration="isotonic").fit(X, y)
    with pytest.raises(ValueError, match="isotonic calibration has no ONNX form"):
        to_onnx(isotonic)


def test_bad_parameters_are_errors_naming_them():
    X, y = _data(n=200)
    for options, match in (({"cost_positive": 0.0}, "cost_positive"), ({"cost_negative": -1.0}, "cost_negative"),
                           ({"calibration": "beta"}, "calibration: must be one of"),
                           ({"calibration_fraction": 1.0}, "calibration_fraction"),
                           ({"random_state": 1.5}, "random_state")):
        with pytest.raises(ValueError, match=match):
            AdaMECClassifier(n_estimators=3, **options).fit(X, y)
    with pytest.raises(ValueError, match="Only binary classification is supported by AdaMECClassifier"):
        AdaMECClassifier(n_estimators=3).fit(X, np.arange(200) % 3)


def test_the_trainer_holds_out_boosts_and_calibrates_as_the_estimator_does():
    """``AdaMECTrainer.train`` is the estimator's fit in one call: the same held-out rows, the same AdaBoost on
    the others, the same calibration and threshold; its probabilities are the estimator's."""
    from bob_boost import AdaMECTrainer
    from bob_boost.trainers.adamec import probability_of_positive
    X, y = _data()
    signed = np.where(y == "well", 1.0, -1.0)  # "well" sorts last: the estimator's classes_[1]
    for calibration in ("platt", "isotonic", None):
        trainer = AdaMECTrainer(2.0, 1.0, calibration=calibration, calibration_fraction=0.4, random_state=7)
        machine = trainer.train(X, signed, 15)
        model = AdaMECClassifier(2.0, 1.0, n_estimators=15, calibration=calibration, calibration_fraction=0.4,
                                 random_state=7).fit(X, y)
        np.testing.assert_array_equal(machine.weights, model.machine_.weights)
        assert machine.metadata["calibration"] == {**model.calibration_, "threshold": model.threshold_}
        scores = machine.decision_scores(X)[:, 0]
        np.testing.assert_array_equal(scores, model.decision_function(X))
        np.testing.assert_array_equal(probability_of_positive(machine.metadata["calibration"], scores),
                                      model.predict_proba(X)[:, 1])
    held = AdaMECTrainer(calibration_fraction=0.25, random_state=2).held_out(signed > 0)
    assert held.sum() == np.ceil(0.25 * (signed > 0).sum()) + np.ceil(0.25 * (signed < 0).sum())
    assert not AdaMECTrainer(calibration=None).held_out(signed > 0).any()


def test_the_trainer_refuses_what_adamec_cannot_do():
    from bob_boost import AdaMECTrainer
    X, y = _data(n=100)
    signed = np.where(y == "well", 1.0, -1.0)
    trainer = AdaMECTrainer()
    machine = trainer.train(X, signed, 3)
    with pytest.raises(ValueError, match="boosted_machine: AdaMEC calibrates one whole run"):
        trainer.train(X, signed, 3, boosted_machine=machine)
    with pytest.raises(ValueError, match="targets: both classes"):
        trainer.train(X, np.ones(100), 3)
    with pytest.raises(ValueError, match="calibration_fraction: 0.9 leaves class 'positive'"):
        AdaMECTrainer(calibration_fraction=0.9).train(X, np.where(np.arange(100) < 95, -1.0, 1.0), 3)
    for options, match in (({"cost_positive": 0.0}, "cost_positive"), ({"calibration": "beta"}, "calibration"),
                           ({"calibration_fraction": 0.0}, "calibration_fraction"),
                           ({"random_state": None}, "random_state")):
        with pytest.raises(ValueError, match=match):
            AdaMECTrainer(**options)


def test_the_command_line_trains_the_estimators_model(tmp_path, capsys):
    """``bob-boost train --trainer adamec`` writes the estimator's machine; the file is adopted as an
    AdaMECClassifier whose predictions are the estimator's, and ``bob-boost predict`` decides by least cost."""
    from bob_boost import BoostedMachine
    from bob_boost.cli import main
    from bob_boost.sklearn import estimator_from_machine
    X, y = _data(n=300, seed=4)
    data, model_file = tmp_path / "train.csv", tmp_path / "adamec.hdf5"
    np.savetxt(data, np.column_stack([X, y == "well"]), delimiter=",", fmt="%.17g")
    assert main(["train", str(data), "-o", str(model_file), "--trainer", "adamec", "--cost-positive", "3",
                 "--calibration", "isotonic", "--calibration-fraction", "0.3", "--seed", "4", "-r", "12", "-q"]) == 0
    machine = BoostedMachine.load(model_file)
    labels = (y == "well").astype(float)
    model = AdaMECClassifier(3.0, 1.0, n_estimators=12, calibration="isotonic", calibration_fraction=0.3,
                             random_state=4).fit(X, labels)
    np.testing.assert_array_equal(machine.weights, model.machine_.weights)
    adopted = estimator_from_machine(machine)
    assert type(adopted) is AdaMECClassifier and adopted.calibration_ == model.calibration_
    np.testing.assert_array_equal(adopted.predict_proba(X), model.predict_proba(X))
    np.testing.assert_array_equal(adopted.predict(X), model.predict(X))
    assert main(["train", str(data), "-o", str(tmp_path / "bad.hdf5"), "--trainer", "adamec", "-w", "tree",
                 "-q"]) != 0
    assert "'adamec' boosts +-1 decision stumps" in capsys.readouterr().err
