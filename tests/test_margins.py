"""Tests of the margin distributions (bob_boost.plots.margin_distribution, plot_margins, bob-boost plot margins)."""
import numpy as np
import pytest

from bob_boost import BoostedMachine, Boosting, ExponentialLoss, LUTMachine, LUTTrainer, StumpMachine, StumpTrainer
from bob_boost.cli import main
from bob_boost.plots import default_margin_rounds, errors_per_round, margin_distribution

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _separable(n=240, seed=0, gap=0.1):
    """Two uniform features, the class is x0 + x1 > 1, samples within ``gap`` of the boundary dropped.

    A diagonal boundary needs many axis-parallel stumps, so AdaBoost keeps adding rounds after the training
    error reaches 0 (which it does: the gap makes the classes separable by a staircase of stumps).
    """
    rng = np.random.default_rng(seed)
    features = rng.uniform(size=(n, 2))
    keep = np.abs(features.sum(axis=1) - 1.0) > gap
    features = features[keep]
    return features, (features.sum(axis=1) > 1.0).astype(np.int64)


@pytest.fixture(scope="module")
def adaboost():
    features, classes = _separable()
    machine = Boosting(StumpTrainer(), ExponentialLoss()).train(features, np.where(classes == 1, 1.0, -1.0), 120)
    assert len(machine) == 120
    return machine, features, classes


def test_margins_by_hand_univariate():
    machine = BoostedMachine(number_of_features=2)
    machine.add_weak_machine(StumpMachine(0.5, 1.0, 0), 1.0)
    machine.add_weak_machine(StumpMachine(0.5, -1.0, 1), 3.0)
    features = np.array([[0.9, 0.9], [0.9, 0.1], [0.1, 0.1]])
    classes = np.array([1, 0, 1])
    margins = margin_distribution(machine, features, classes, rounds=[2, 1])
    assert list(margins) == [1, 2]
    # round 1: scores +1, +1, -1 over sum|w| = 1; y = +1, -1, +1
    np.testing.assert_allclose(margins[1], [1.0, -1.0, -1.0])
    # round 2 adds 3 * (-sign(x1 - 0.5)): scores -2, 4, 2 over 4
    np.testing.assert_allclose(margins[2], [-0.5, -1.0, 0.5])


def test_margins_by_hand_multi_output_and_baseline():
    machine = BoostedMachine(number_of_features=1, baseline=[0.5, 0.0, -0.5])
    machine.add_weak_machine(LUTMachine([[1.0, -1.0, -1.0], [-1.0, 1.0, -1.0]], [0, 0, 0]), [1.0, 2.0, 0.5])
    features = np.array([[0], [1]])
    margins = margin_distribution(machine, features, [0, 2], rounds=1)
    # scores: x=0 -> (1.5, -2, -1); x=1 -> (-0.5, 2, -1); normaliser 2 * (max|b| + max|w|) = 2 * 2.5 = 5
    np.testing.assert_allclose(margins[1], [(1.5 - -1.0) / 5, (-1.0 - 2.0) / 5])


def test_two_symmetric_outputs_give_the_univariate_margin():
    """The multi-class normalisation's factor 2: scores (-s, s) have the margin of the one-output score s."""
    rng = np.random.default_rng(4)
    single, double = BoostedMachine(number_of_features=3), BoostedMachine(number_of_features=3)
    for _ in range(5):
        table, index, weight = np.where(rng.uniform(size=4) > 0.5, 1.0, -1.0), int(rng.integers(3)), rng.uniform()
        single.add_weak_machine(LUTMachine(table[:, None], [index]), weight)
        double.add_weak_machine(LUTMachine(np.column_stack([-table, table]), [index, index]), [weight, weight])
    features = rng.integers(0, 4, (30, 3))
    classes = rng.integers(0, 2, 30)
    one, two = margin_distribution(single, features, classes), margin_distribution(double, features, classes)
    assert list(one) == list(two) == default_margin_rounds(5)
    for r in one:
        np.testing.assert_allclose(two[r], one[r], rtol=1e-12)


def test_margins_lie_in_minus_one_one_and_negative_ones_are_the_errors(adaboost):
    machine, features, classes = adaboost
    rounds = list(range(1, len(machine) + 1))
    margins = margin_distribution(machine, features, classes, rounds)
    errors = errors_per_round(machine, features, classes)
    for r, values in margins.items():
        assert values.shape == (classes.size,)
        assert np.all((values >= -1.0) & (values <= 1.0))
        # no sample sits on the boundary (continuous data, weights in general position), so negative = wrong
        assert not np.any(values == 0.0)
        assert np.mean(values < 0) == errors[r - 1]
    assert errors[0] > 0.1 and errors[-1] == 0.0  # the test covers rounds with errors and without


def test_multi_output_margins_bounded_and_negative_ones_are_the_errors():
    rng = np.random.default_rng(2)
    features = rng.integers(0, 6, (150, 4))
    classes = (features[:, 0] + features[:, 1] + rng.integers(0, 2, 150)) % 3  # noisy: errors stay
    targets = np.where(classes[:, None] == np.arange(3), 1.0, -1.0)
    machine = Boosting(LUTTrainer(6, 3, selection_style="shared"), ExponentialLoss()).train(features, targets, 15)
    margins = margin_distribution(machine, features, classes, range(1, len(machine) + 1))
    errors = errors_per_round(machine, features, classes)
    assert errors[-1] > 0.05
    for r, values in margins.items():
        assert np.all((values >= -1.0) & (values <= 1.0))
        wrong = machine.class_indices_from_scores(next(s for i, s in enumerate(
            machine.staged_decision_scores(features), start=1) if i == r)) != classes
        # a margin of 0 is a tie; argmax gives it to the lower index, so it is an error exactly when a
        # tied class comes first: compare away from 0, count ties by hand
        np.testing.assert_array_equal(wrong[values != 0], values[values != 0] < 0)
        assert np.mean(values < 0) <= errors[r - 1] <= np.mean(values <= 0)


def test_margin_distribution_moves_right_with_more_rounds(adaboost):
    """The chapter's observation (Schapire et al.): after the training error reaches 0, further rounds still
    push the smallest margins up, so the lower part of the cumulative distribution moves right.

    (Not the whole curve: the largest margins shrink as the weights are normalised by a growing sum, which is
    why the claim, and the bound it supports, is about the fraction of margins below a small theta.)
    """
    machine, features, classes = adaboost
    errors = errors_per_round(machine, features, classes)
    first_zero = int(np.argmax(errors == 0.0)) + 1
    assert 1 < first_zero < 30
    rounds = [first_zero, 30, 60, 120]
    margins = margin_distribution(machine, features, classes, rounds)
    smallest = [margins[r].min() for r in rounds]
    assert np.all(np.diff(smallest) > 0.01), smallest
    lower_tail = [np.quantile(margins[r], 0.05) for r in rounds]
    assert np.all(np.diff(lower_tail) > 0), lower_tail
    early, late = margins[first_zero], margins[len(machine)]
    for theta in (0.1, 0.15):
        assert np.mean(late <= theta) < np.mean(early <= theta), theta
    # the curve after 5 rounds, with training errors, starts left of 0
    assert np.mean(margin_distribution(machine, features, classes, 5)[5] < 0) > 0


def test_default_rounds_are_log_spaced_and_include_the_last():
    assert default_margin_rounds(100) == [1, 5, 22, 100]
    assert default_margin_rounds(1) == [1]
    assert default_margin_rounds(3) == [1, 2, 3]
    assert default_margin_rounds(1000, count=3) == [1, 32, 1000]


def test_bad_input_names_the_argument(adaboost):
    machine, features, classes = adaboost
    for rounds in (0, [1, len(machine) + 1], -3):
        with pytest.raises(ValueError, match=r"^rounds: must be in 1 \.\. 120"):
            margin_distribution(machine, features, classes, rounds)
    for rounds in ([], [1.5], [True]):
        with pytest.raises(ValueError, match="^rounds:"):
            margin_distribution(machine, features, classes, rounds)
    with pytest.raises(ValueError, match=rf"^class_indices: expected {classes.size} labels"):
        margin_distribution(machine, features, classes[:-1])
    with pytest.raises(ValueError, match=r"^class_indices: must be in 0 \.\. 1"):
        margin_distribution(machine, features, classes + 1)
    with pytest.raises(ValueError, match="^features:"):
        margin_distribution(machine, features[:, :1], classes)
    with pytest.raises(ValueError, match="^machine: has no rounds"):
        margin_distribution(BoostedMachine(number_of_outputs=1), features, classes)
    regression = BoostedMachine(number_of_features=2, decision_rule="identity")
    regression.add_weak_machine(StumpMachine(0.5, 1.0, 0), 1.0)
    with pytest.raises(ValueError, match="^machine: margins need a classifier"):
        margin_distribution(regression, features, classes)


def test_plot_margins_draws_one_cumulative_curve_per_round(adaboost, tmp_path):
    pytest.importorskip("matplotlib")
    from bob_boost.plots import plot_margins

    machine, features, classes = adaboost
    margins = margin_distribution(machine, features, classes, [5, 120])
    figure = plot_margins(margins, path=tmp_path / "m.png")
    assert (tmp_path / "m.png").read_bytes()[:8] == PNG_MAGIC
    lines = [line for line in figure.axes[0].get_lines() if line.get_label().startswith(("5 ", "120 "))]
    assert [line.get_label().split(":")[0] for line in lines] == ["5 rounds", "120 rounds"]
    for line, values in zip(lines, margins.values()):
        x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
        assert y[0] == 0.0 and y[-1] == 1.0 and np.all(np.diff(y) >= 0)
        # the height just right of theta is the fraction of margins <= theta (the empirical CDF)
        for theta in (-0.2, 0.0, 0.1, 0.3):
            height = y[np.searchsorted(x, theta, side="right") - 1]
            assert height == pytest.approx(np.mean(values <= theta))
    assert figure.axes[0].get_xlim() == (-1.0, 1.0)
    labelled = plot_margins({"training": margins[120], 3: [0.5]})
    assert [t.get_text().split(":")[0] for t in labelled.axes[0].get_legend().get_texts()] == ["training", "3 rounds"]
    with pytest.raises(ValueError, match="^margins:"):
        plot_margins({})
    with pytest.raises(ValueError, match="^margins:"):
        plot_margins({1: [np.nan]})


def test_cli_plot_margins_writes_a_png_and_rejects_bad_rounds(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    features, classes = _separable(n=120, seed=3)
    data = tmp_path / "d.npz"
    np.savez(data, features=features, labels=np.where(classes == 1, "yes", "no"))
    model = tmp_path / "m.hdf5"
    assert main(["train", str(data), "-o", str(model), "-r", "12", "-q"]) == 0
    for extra in ([], ["--rounds", "2", "12"]):
        output = tmp_path / f"margins{len(extra)}.png"
        assert main(["plot", "margins", str(model), str(data), "-o", str(output), *extra]) == 0
        assert output.read_bytes()[:8] == PNG_MAGIC
        assert capsys.readouterr().out == f"wrote {output}\n"
    code = main(["plot", "margins", str(model), str(data), "-o", str(tmp_path / "x.png"), "--rounds", "13"])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("bob-boost plot: error: --rounds: must be in 1 .. 12") and len(
        err.splitlines()) == 1
    assert not (tmp_path / "x.png").exists()
    assert main(["plot", "margins", str(model), str(data), "-o", str(tmp_path / "x.png"), "--rounds", "0"]) == 2
    assert "expected a positive integer" in capsys.readouterr().err
