"""ONNX export (bob_boost.onnx): onnxruntime must predict as bob_boost does, for every weak machine and rule."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="ONNX export is an optional extra (pip install bob_boost[onnx])")
ort = pytest.importorskip("onnxruntime", reason="ONNX export is an optional extra (pip install bob_boost[onnx])")

from bob_boost import (AdaBoostM1Trainer, BAdaCostTrainer, BoostedMachine, Boosting, ExponentialLoss,  # noqa: E402
                       LogitLoss, LUTTrainer, SAMMETrainer, SoftmaxLoss, SquaredLoss, StumpTrainer, TreeTrainer)
from bob_boost.onnx import register_converter, to_onnx  # noqa: E402
from bob_boost.weak_trainers.multiclass import (CostSensitiveTreeTrainer, MultiClassLUTTrainer,  # noqa: E402
                                           MultiClassStumpTrainer)
from bob_boost.weak.base import WeakMachine  # noqa: E402

RNG = np.random.default_rng(0)


def _run(model, features):
    """onnxruntime's outputs, by name."""
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [output.name for output in session.get_outputs()]
    return dict(zip(names, session.run(None, {"features": np.asarray(features, dtype=np.float32)})))


def _check_machine(machine, held_out):
    """Labels equal, scores within 1e-5 relative (float32 output), model valid."""
    model = to_onnx(machine)
    onnx.checker.check_model(model, full_check=True)
    out = _run(model, held_out)
    features = held_out.astype(np.float32)
    if machine.decision_rule == "identity":  # the labels are the scores, summed in the graph's order
        np.testing.assert_allclose(out["labels"], machine.predict(features), rtol=1e-12)
    else:
        np.testing.assert_array_equal(out["labels"], machine.predict(features))
    expected = machine.decision_scores(features)
    np.testing.assert_allclose(out["scores"], expected, rtol=1e-5, atol=1e-5 * np.max(np.abs(expected)))
    return out


def _real(n=400, features=5, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, features))
    return x, x[:n // 2], x[n // 2:]


def _classes(x, k=3):
    return np.digitize(x[:, 0] + 0.5 * x[:, 1], np.quantile(x[:, 0] + 0.5 * x[:, 1], np.linspace(0, 1, k + 1)[1:-1]))


def test_stumps_and_sign_rule():
    x, train, test = _real()
    machine = Boosting(StumpTrainer(), ExponentialLoss()).train(train, np.where(train[:, 0] > 0.2, 1.0, -1.0), 30)
    out = _check_machine(machine, test)
    assert set(np.unique(out["labels"])) == {-1, 1}


def test_stumps_with_missing_values():
    x, train, test = _real(seed=1)
    targets = np.where(train[:, 0] > 0, 1.0, -1.0)
    train, test = train.copy(), test.copy()
    train[RNG.random(train.shape[0]) < 0.3, 0] = np.nan
    test[RNG.random(test.shape[0]) < 0.3, 0] = np.nan
    machine = Boosting(StumpTrainer(missing="bin"), LogitLoss()).train(train, targets, 20)
    _check_machine(machine, test)


def test_regression_stumps_with_baseline_and_identity_rule():
    _, train, test = _real(seed=2)
    machine = Boosting(StumpTrainer(), SquaredLoss()).train(train, 10 + 3 * train[:, 0], 25, baseline=10.0)
    out = _check_machine(machine, test)
    np.testing.assert_allclose(out["labels"], machine.predict(test.astype(np.float32)), rtol=1e-6)


@pytest.mark.parametrize("style", ["independent", "shared"])
def test_multivariate_luts_at_the_table_edges(style):
    values = RNG.integers(0, 8, size=(400, 6))
    labels = (values[:, 0] + values[:, 1]) % 3
    targets = np.where(np.eye(3)[labels] > 0, 1.0, -1.0)
    machine = Boosting(LUTTrainer(8, 3, style), LogitLoss()).train(values[:200], targets[:200], 15)
    edges = np.vstack([np.zeros((1, 6)), np.full((1, 6), 7), values[200:]])  # the first and last table entry
    _check_machine(machine, edges)


def test_univariate_lut_with_nan_entry_and_out_of_range_values():
    values = RNG.integers(0, 5, size=(300, 3)).astype(np.float64)
    targets = np.where(values[:, 1] >= 2, 1.0, -1.0)
    values[RNG.random(300) < 0.2, 1] = np.nan
    machine = Boosting(LUTTrainer(5, missing="bin"), ExponentialLoss()).train(values, targets, 10)
    _check_machine(machine, values)
    outside = values[:3].copy()
    outside[:, machine.weak_machines[0].indices[0]] = 5  # beyond the table: bob_boost raises, the graph gives NaN
    assert np.all(np.isnan(_run(to_onnx(machine), outside)["scores"]))


@pytest.mark.parametrize("multi_output", ["shared", "per_output"])
def test_gradient_trees_softmax_with_missing(multi_output):
    _, train, test = _real(seed=3)
    labels = _classes(train)
    train, test = train.copy(), test.copy()
    train[RNG.random(train.shape[0]) < 0.2, 1] = np.nan
    test[RNG.random(test.shape[0]) < 0.2, 1] = np.nan
    trainer = TreeTrainer(max_depth=4, min_samples_leaf=5, multi_output=multi_output, missing="bin")
    machine = Boosting(trainer, SoftmaxLoss(), learning_rate=0.3).train(train, labels, 15)
    _check_machine(machine, test)


def test_gradient_regression_trees():
    _, train, test = _real(seed=4)
    machine = Boosting(TreeTrainer(max_depth=3, min_samples_leaf=5), SquaredLoss(), learning_rate=0.5).train(
        train, np.sin(2 * train[:, 0]) + train[:, 1], 20, baseline=0.5)
    _check_machine(machine, test)


@pytest.mark.parametrize("make", [
    lambda: BAdaCostTrainer([[0, 1, 1], [2, 0, 1], [5, 1, 0]], CostSensitiveTreeTrainer(max_depth=2), 15),
    lambda: SAMMETrainer(CostSensitiveTreeTrainer(max_depth=3), 15, number_of_classes=3),
    lambda: AdaBoostM1Trainer(MultiClassStumpTrainer(), 15, number_of_classes=3),
], ids=["badacost-trees", "samme-trees", "m1-stumps"])
def test_multiclass_machines_and_the_cost_rule(make):
    _, train, test = _real(seed=5)
    machine = make().train(train, _classes(train))
    assert machine.decision_rule == "cost_sensitive"
    _check_machine(machine, test)


def test_multiclass_luts():
    values = RNG.integers(0, 6, size=(400, 4))
    labels = (values[:, 0] // 2 + values[:, 2]) % 3
    machine = SAMMETrainer(MultiClassLUTTrainer(6), 12, number_of_classes=3).train(values[:200], labels[:200])
    _check_machine(machine, values[200:])


def test_mixed_stumps_and_trees_in_one_machine():
    _, train, test = _real(seed=6)
    targets = np.where(train[:, 0] * train[:, 1] > 0, 1.0, -1.0)
    machine = Boosting(StumpTrainer(), LogitLoss()).train(train, targets, 5)
    Boosting(TreeTrainer(max_depth=2, min_samples_leaf=5), LogitLoss()).train(train, targets, 5,
                                                                               boosted_machine=machine)
    assert {type(m).__name__ for m in machine.weak_machines} == {"StumpMachine", "TreeMachine"}
    _check_machine(machine, test)


def test_empty_machine_gives_its_baseline():
    machine = BoostedMachine(number_of_outputs=2, number_of_features=3, baseline=[1.5, -0.5])
    out = _run(to_onnx(machine), np.zeros((4, 3)))
    np.testing.assert_array_equal(out["scores"], np.tile([1.5, -0.5], (4, 1)))
    np.testing.assert_array_equal(out["labels"], np.zeros(4))


def _estimators():
    pytest.importorskip("sklearn")
    from bob_boost.sklearn import (AdaBoostDBClassifier, BAdaCostClassifier, BoostingClassifier,
                                   BoostingRegressor)
    return AdaBoostDBClassifier, BAdaCostClassifier, BoostingClassifier, BoostingRegressor


@pytest.mark.parametrize("name", ["exponential", "logit", "tangential", "softmax-trees", "lut-ovr", "adaboostdb",
                                  "badacost", "badacost-binary"])
def test_estimators_labels_scores_and_probabilities(name):
    AdaBoostDBClassifier, BAdaCostClassifier, BoostingClassifier, _ = _estimators()
    x, train, test = _real(seed=7)
    binary = np.where(train[:, 0] + train[:, 2] > 0, "yes", "no")
    three = np.array(["car", "bike", "truck"])[_classes(train)]
    values = np.clip(np.round(x * 2 + 4), 0, 7)
    fits = {
        "exponential": lambda: (BoostingClassifier(n_estimators=20).fit(train, binary), test),
        "logit": lambda: (BoostingClassifier(loss="logit", n_estimators=20).fit(train, binary), test),
        "tangential": lambda: (BoostingClassifier(loss="tangential", n_estimators=20).fit(train, binary), test),
        "softmax-trees": lambda: (BoostingClassifier(loss="softmax", weak_learner="tree", max_depth=3,
                                                     learning_rate=0.3, n_estimators=15).fit(train, three), test),
        "lut-ovr": lambda: (BoostingClassifier(loss="logit", weak_learner="lut", maximum_feature_value=8,
                                               n_estimators=15).fit(values[:200], three), values[200:]),
        "adaboostdb": lambda: (AdaBoostDBClassifier(cost_positive=2.0, n_estimators=15).fit(train, binary), test),
        "badacost": lambda: (BAdaCostClassifier(cost_matrix=[[0, 1, 1], [2, 0, 1], [4, 1, 0]],
                                                n_estimators=15).fit(train, three), test),
        "badacost-binary": lambda: (BAdaCostClassifier(n_estimators=10).fit(train, binary), test),
    }
    estimator, held_out = fits[name]()
    model = to_onnx(estimator)
    onnx.checker.check_model(model, full_check=True)
    out = _run(model, held_out)
    features = held_out.astype(np.float32)
    np.testing.assert_array_equal(out["labels"], estimator.predict(features))
    decision = estimator.decision_function(features)
    np.testing.assert_allclose(out["scores"], decision, rtol=1e-5, atol=1e-5 * np.max(np.abs(decision)))
    if hasattr(estimator, "predict_proba"):
        np.testing.assert_allclose(out["probabilities"], estimator.predict_proba(features), rtol=1e-5, atol=1e-6)
    else:
        assert "probabilities" not in out


def test_regressor_estimator():
    *_, BoostingRegressor = _estimators()
    _, train, test = _real(seed=8)
    regressor = BoostingRegressor(weak_learner="tree", max_depth=3, learning_rate=0.5,
                                  n_estimators=20).fit(train, 100 + train[:, 0] ** 2)
    out = _run(to_onnx(regressor), test)
    np.testing.assert_allclose(out["labels"], regressor.predict(test.astype(np.float32)), rtol=1e-6)


class _Offset(WeakMachine):
    """A plugin weak machine: a feature itself, clipped to [-1, 1]."""

    machine_type = "TestOffsetMachine"

    def __init__(self, index):
        self.index = index

    @property
    def number_of_outputs(self):
        return 1

    def feature_indices(self):
        return np.array([self.index])

    def forward(self, features):
        return np.clip(features[:, [self.index]], -1.0, 1.0)


def test_plugin_weak_machine_needs_and_uses_a_converter():
    machine = BoostedMachine(number_of_outputs=1, number_of_features=3)
    machine.add_weak_machine(_Offset(2), 0.5)
    with pytest.raises(TypeError, match=r"no ONNX converter for weak machines of type _Offset \('TestOffsetMachine'\)"):
        to_onnx(machine)

    @register_converter(_Offset)
    def convert(weak_machine, graph, features):
        column = graph.node("Gather", [features, graph.constant(np.array([weak_machine.index]))], axis=1)
        return graph.node("Clip", [column, graph.constant(np.array(-1.0)), graph.constant(np.array(1.0))])

    x = RNG.normal(size=(20, 3))
    out = _run(to_onnx(machine), x)
    np.testing.assert_allclose(out["scores"], machine.decision_scores(x.astype(np.float32)), rtol=1e-6)


def test_bad_input():
    x, train, _ = _real()
    machine = Boosting(StumpTrainer(), ExponentialLoss()).train(train, np.where(train[:, 4] > 0, 1.0, -1.0), 3)
    with pytest.raises(ValueError, match="n_features: the machine reads feature 4"):
        to_onnx(machine, n_features=3)
    with pytest.raises(ValueError, match="n_features"):
        to_onnx(machine, n_features=0)
    with pytest.raises(TypeError, match="model: expected a BoostedMachine"):
        to_onnx("model.hdf5")
    with pytest.raises(ValueError, match="classes: expected 2 labels, got 3"):
        to_onnx(machine, classes=["a", "b", "c"])
    regression = Boosting(StumpTrainer(), SquaredLoss()).train(train, train[:, 0], 3)
    with pytest.raises(ValueError, match="classes: a regression machine"):
        to_onnx(regression, classes=["a", "b"])


def test_missing_onnx_installation_says_which_extra(tmp_path):
    code = ("import sys; sys.modules['onnx'] = None\n"
            "from bob_boost import BoostedMachine\nfrom bob_boost.onnx import to_onnx\n"
            "try:\n    to_onnx(BoostedMachine(number_of_outputs=1))\n"
            "except ImportError as error:\n    print(error)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == 'ONNX export needs onnx: pip install "bob_boost[onnx]"'


def test_cli_export_gives_the_labels_predict_prints(tmp_path, capsys):
    from bob_boost.cli import main

    x = RNG.normal(size=(120, 3))
    names = np.where(x[:, 0] - x[:, 2] > 0, "spam", "ham")
    data = tmp_path / "d.csv"
    data.write_text("a,b,c,label\n" + "".join(f"{r[0]},{r[1]},{r[2]},{n}\n" for r, n in zip(x, names)))
    model, exported, predictions = tmp_path / "m.hdf5", tmp_path / "m.onnx", tmp_path / "p.csv"
    assert main(["train", str(data), "-o", str(model), "-r", "8", "-q"]) == 0
    assert main(["export", str(model), "--format", "onnx", "-o", str(exported)]) == 0
    assert main(["predict", str(model), str(data), "-o", str(predictions)]) == 0
    printed = [line.split(",")[0] for line in predictions.read_text().splitlines()[1:]]
    out = _run(onnx.load(str(exported)), x)
    assert [str(label) for label in out["labels"]] == printed
    assert main(["export", str(tmp_path / "absent.hdf5"), "-o", str(exported)]) == 1
    assert "no such model file" in capsys.readouterr().err


def test_failed_save_leaves_the_old_file(tmp_path, monkeypatch):
    from bob_boost import onnx as exporter

    machine = BoostedMachine(number_of_outputs=1, number_of_features=2)
    target = tmp_path / "model.onnx"
    target.write_bytes(b"old")

    def broken(model, path):
        with open(path, "wb") as stream:
            stream.write(b"half")
        raise OSError("disk full")
    monkeypatch.setattr(onnx, "save", broken)
    with pytest.raises(OSError, match="disk full"):
        exporter.save_onnx(machine, target)
    assert target.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["model.onnx"]


def test_multiclass_stumps_with_missing_values():
    _, train, test = _real(seed=9)
    labels = _classes(train)
    train, test = train.copy(), test.copy()
    train[RNG.random(train.shape[0]) < 0.25, 0] = np.nan
    test[RNG.random(test.shape[0]) < 0.25, 0] = np.nan
    machine = SAMMETrainer(MultiClassStumpTrainer(missing="bin"), 12, number_of_classes=3).train(train, labels)
    assert any(m.missing_above for m in machine.weak_machines)
    _check_machine(machine, test)
