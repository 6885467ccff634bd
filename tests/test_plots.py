"""Tests of bob_boost.plots and the bob-boost plot commands."""

import numpy as np
import pytest

from bob_boost import BoostedMachine, LUTMachine, StumpMachine
from bob_boost.cli import main
from bob_boost.plots import (errors_per_round, feature_map, plot_confusion_matrix, plot_cost_curves,
                             plot_error_curves, plot_feature_map)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _stump_machine():
    machine = BoostedMachine(number_of_features=3)
    machine.add_weak_machine(StumpMachine(0.5, 1.0, 0), 1.0)
    machine.add_weak_machine(StumpMachine(0.2, 1.0, 1), 0.6)
    machine.add_weak_machine(StumpMachine(0.8, -1.0, 2), 0.7)
    return machine


def test_errors_per_round_follows_the_partial_sums():
    features = np.array([[0.9, 0.0, 0.9], [0.1, 0.9, 0.1], [0.1, 0.1, 0.1], [0.9, 0.9, 0.95]])
    truth = np.array([1, 1, 0, 1])  # index 1 = positive score
    # by hand: round 1 scores sign(x0 - 0.5): +,-,-,+ -> one error (sample 1)
    # round 2 adds 0.6*sign(x1 - 0.2): 1-0.6=0.4+, -1+0.6=-0.4-, -1-0.6-, 1+0.6+ -> still sample 1 wrong
    # round 3 adds 0.7*(-sign(x2 - 0.8)): 0.4-0.7<0 (x2=0.9), -0.4+0.7>0, -1.6+0.7<0, 1.6-0.7>0 -> sample 0 wrong
    np.testing.assert_allclose(errors_per_round(_stump_machine(), features, truth), [0.25, 0.25, 0.25])
    truth_after = np.array([0, 1, 0, 1])
    np.testing.assert_allclose(errors_per_round(_stump_machine(), features, truth_after), [0.5, 0.5, 0.0])


def test_errors_per_round_multi_output_argmax():
    machine = BoostedMachine(number_of_features=2)
    machine.add_weak_machine(LUTMachine([[1.0, -1.0], [-1.0, 1.0]], [0, 0]), [1.0, 1.0])
    machine.add_weak_machine(LUTMachine([[-1.0, 1.0], [1.0, -1.0]], [1, 1]), [2.0, 2.0])
    features = np.array([[0, 0], [1, 1], [0, 1]])
    truth = np.array([0, 1, 0])
    # round 1 predicts x0; round 2 adds the opposite of x1 with weight 2 and so predicts 1 - x1
    np.testing.assert_allclose(errors_per_round(machine, features, truth), [0.0, 2 / 3])
    with pytest.raises(ValueError, match="class_indices"):
        errors_per_round(machine, features, truth[:2])


def test_feature_map_accumulates_absolute_weights():
    machine = BoostedMachine(number_of_features=4)
    machine.add_weak_machine(LUTMachine(np.ones((3, 2)), [1, 3]), [0.5, -2.0])
    machine.add_weak_machine(LUTMachine(np.ones((3, 2)), [1, 1]), [1.0, 1.0])
    importance = feature_map(machine)
    np.testing.assert_allclose(importance, [[0.0, 2.5], [0.0, 2.0]])
    stumps = feature_map(_stump_machine(), (1, 3))
    np.testing.assert_allclose(stumps, [[1.0, 0.6, 0.7]])
    with pytest.raises(ValueError, match="not a square"):
        feature_map(_stump_machine())
    with pytest.raises(ValueError, match="fewer"):
        feature_map(_stump_machine(), (1, 2))


def test_plot_functions_write_png(tmp_path):
    plot_error_curves({"training": [0.5, 0.2, 0.1], "test": [0.5, 0.3, 0.25]}, path=tmp_path / "e.png")
    plot_confusion_matrix([0, 1, 2, 2], [0, 2, 2, 1], ["a", "b", "c"], path=tmp_path / "c.png")
    machine = BoostedMachine(number_of_features=4)
    machine.add_weak_machine(LUTMachine(np.ones((3, 1)), [2]), 1.0)
    plot_feature_map(machine, path=tmp_path / "f.png")
    plot_cost_curves([0.1, 0.3], [0.4, 0.05], ["x", "y"], path=tmp_path / "k.png")
    for name in ("e", "c", "f", "k"):
        assert (tmp_path / f"{name}.png").read_bytes()[:8] == PNG_MAGIC


def test_cost_curves_draw_lines_and_lower_envelope():
    figure = plot_cost_curves([0.1, 0.3], [0.4, 0.05], ["x", "y"], points=5)
    lines = {line.get_label(): line for line in figure.axes[0].get_lines()}
    pcf = np.linspace(0, 1, 5)
    np.testing.assert_allclose(lines["x"].get_ydata(), 0.1 * pcf + 0.4 * (1 - pcf))
    expected = np.minimum.reduce([0.1 * pcf + 0.4 * (1 - pcf), 0.3 * pcf + 0.05 * (1 - pcf), pcf, 1 - pcf])
    np.testing.assert_allclose(lines["lower envelope"].get_ydata(), expected)
    with pytest.raises(ValueError, match="names"):
        plot_cost_curves([0.1], [0.2], ["a", "b"])


def test_confusion_matrix_counts_in_cells():
    figure = plot_confusion_matrix([0, 0, 1, 1, 1], [0, 1, 1, 1, 0], ["neg", "pos"])
    texts = [t.get_text() for t in figure.axes[0].texts]
    assert texts == ["1", "1", "1", "2"]
    assert figure.axes[0].get_title() == "accuracy 60.00%"
    with pytest.raises(ValueError, match="class indices"):
        plot_confusion_matrix([0, 3], [0, 1], ["a", "b"])


def test_missing_matplotlib_gives_install_advice(no_matplotlib):
    with pytest.raises(ImportError, match=r'pip install "bob_boost\[plot\]"'):
        plot_error_curves({"training": [0.1]})


def test_plot_commands(tmp_path, capsys):
    rng = np.random.default_rng(0)
    features = rng.integers(0, 4, (80, 16))
    labels = np.where(features[:, 5] + features[:, 10] > 3, 1, -1)
    np.savez(tmp_path / "d.npz", features=features, labels=labels)
    model = tmp_path / "m.hdf5"
    assert main(["train", str(tmp_path / "d.npz"), "-o", str(model), "-r", "4", "-q"]) == 0
    other = tmp_path / "m2.hdf5"
    assert main(["train", str(tmp_path / "d.npz"), "-o", str(other), "-r", "1", "-q"]) == 0
    runs = [["errors", model, tmp_path / "d.npz", "--test", tmp_path / "d.npz"],
            ["confusion", model, tmp_path / "d.npz"],
            ["features", model, "--image-shape", "4", "4"],
            ["cost-curves", model, other, "--data", tmp_path / "d.npz"]]
    for i, run in enumerate(runs):
        output = tmp_path / f"plot{i}.png"
        assert main(["plot", *map(str, run), "-o", str(output), "-q"]) == 0
        assert output.read_bytes()[:8] == PNG_MAGIC
    capsys.readouterr()
    multi = tmp_path / "multi.npz"
    np.savez(multi, features=features, labels=features[:, 0] % 3)
    assert main(["train", str(multi), "-o", str(tmp_path / "k3.hdf5"), "-w", "lut", "-r", "2", "-q"]) == 0
    assert main(["plot", "cost-curves", str(tmp_path / "k3.hdf5"), "--data", str(multi), "-o",
                 str(tmp_path / "bad.png")]) == 1
    assert "binary models" in capsys.readouterr().err


def _named_machine(names):
    machine = BoostedMachine(number_of_features=3, metadata={"feature_names": names})
    machine.add_weak_machine(StumpMachine(0.5, 1.0, 2), 1.0)
    machine.add_weak_machine(StumpMachine(0.2, 1.0, 0), 0.25)
    machine.add_weak_machine(StumpMachine(0.7, -1.0, 2), 0.5)
    return machine


def test_feature_names_are_read_from_the_metadata_when_they_fit():
    from bob_boost.plots import feature_label, feature_names

    assert feature_names(_named_machine(["age", "height", "income"])) == ["age", "height", "income"]
    assert feature_names(_stump_machine()) is None
    # another count, not a list, not strings, only the column numbers
    for wrong in (["a", "b"], "abc", ["a", 1, "c"], None, ["0", "1", "2"]):
        assert feature_names(_named_machine(wrong)) is None
    # the scikit-learn estimators' key, for models they saved
    machine = _stump_machine()
    machine.metadata["feature_names_in"] = ["x", "y", "z"]
    assert feature_names(machine) == ["x", "y", "z"]
    assert feature_label(2, ["x", "y", "z"]) == "2 (z)" and feature_label(2, None) == "2"


def test_feature_weights_sum_absolute_weights_per_feature():
    from bob_boost.plots import feature_weights

    np.testing.assert_allclose(feature_weights(_named_machine(["a", "b", "c"])), [0.25, 0.0, 1.5])
    machine = BoostedMachine()  # no recorded width: up to the highest feature used
    machine.add_weak_machine(LUTMachine(np.ones((3, 2)), [1, 3]), [0.5, -2.0])
    np.testing.assert_allclose(feature_weights(machine), [0.0, 0.5, 0.0, 2.0])


def test_feature_plots_label_features_with_their_names(tmp_path):
    pytest.importorskip("matplotlib")
    from bob_boost.plots import plot_feature_weights

    machine = _named_machine(["age", "height", "income"])
    figure = plot_feature_weights(machine, path=tmp_path / "w.png")
    assert (tmp_path / "w.png").read_bytes()[:8] == PNG_MAGIC
    axes = figure.axes[0]
    # strongest at the top (the highest bar position); unused features are left out
    labels = [t.get_text() for t in axes.get_yticklabels()]
    assert labels == ["2 (income)", "0 (age)"]
    positions = axes.get_yticks()
    widths = {label: patch.get_width() for label, patch in zip(labels, axes.patches)}
    assert widths == {"2 (income)": 1.5, "0 (age)": 0.25} and positions[0] > positions[1]
    top_one = plot_feature_weights(machine, top=1)
    assert [t.get_text() for t in top_one.axes[0].get_yticklabels()] == ["2 (income)"]
    assert "top 1 shown" in top_one.axes[0].get_title()
    unnamed = plot_feature_weights(_stump_machine())
    assert [t.get_text() for t in unnamed.axes[0].get_yticklabels()] == ["0", "2", "1"]
    with pytest.raises(ValueError, match="^top:"):
        plot_feature_weights(machine, top=0)
    image = plot_feature_map(machine, (1, 3))
    assert image.axes[0].get_title().endswith("strongest: income")
    assert "strongest" not in plot_feature_map(_stump_machine(), (1, 3)).axes[0].get_title()
