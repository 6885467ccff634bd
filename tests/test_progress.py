"""Tests of bob_boost.progress: plain lines, tqdm bar, quiet mode, training error."""
import io

import numpy as np
import pytest

from bob_boost import BoostedMachine, Boosting, ExponentialLoss, LogitLoss, LUTMachine, SquaredLoss, StumpTrainer
from bob_boost.cli import main
from bob_boost.losses.cmel import CMELoss
from bob_boost.progress import Progress, training_error


def _binary(n=200, seed=0):
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(n, 4))
    targets = np.where(features[:, 0] + 0.5 * features[:, 1] + rng.normal(0, 0.5, n) > 0, 1.0, -1.0)
    return features, targets


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_plain_lines_report_loss_and_error_of_the_scores():
    features, targets = _binary()
    loss = ExponentialLoss()
    out = io.StringIO()
    with Progress(40, loss, targets, stream=out) as progress:
        machine = Boosting(StumpTrainer(), loss).train(features, targets, 40, callback=progress)
    lines = out.getvalue().splitlines()
    # the first round, every second round (40 // 20) and the last one
    assert [line.split(":")[0] for line in lines] == [f"round {r}/40" for r in [1, *range(2, 41, 2)]]
    scores = machine.decision_scores(features)[:, 0]
    expected_loss = np.mean(np.exp(-targets * scores))
    expected_error = np.mean(np.where(scores > 0, 1, -1) != targets)
    assert lines[-1] == f"round 40/40: loss {expected_loss:.4g}, training error {expected_error:.2%}"


def test_quiet_writes_nothing_and_skips_target_checks():
    out = io.StringIO()
    progress = Progress(5, ExponentialLoss(), np.array([3.0, 4.0]), quiet=True, stream=out)
    progress(0, None, np.zeros((2, 1)))
    progress.close()
    assert out.getvalue() == ""


def test_bar_on_terminal_shows_loss_and_error():
    features, targets = _binary(seed=1)
    loss = LogitLoss()
    out = _Terminal()
    with Progress(10, loss, targets, stream=out) as progress:
        Boosting(StumpTrainer(), loss).train(features, targets, 10, callback=progress)
    text = out.getvalue()
    assert "10/10" in text and "loss=" in text and "error=" in text
    assert "round 1/10:" not in text  # no plain lines when the bar is used


def test_forced_plain_output_on_terminal():
    features, targets = _binary(seed=2)
    out = _Terminal()
    loss = ExponentialLoss()
    with Progress(3, loss, targets, stream=out, bar=False) as progress:
        Boosting(StumpTrainer(), loss).train(features, targets, 3, callback=progress)
    assert out.getvalue().splitlines()[0].startswith("round 1/3: loss ")


def test_regression_losses_report_no_training_error():
    features, _ = _binary(seed=3)
    values = features[:, 0] * 2.0
    out = io.StringIO()
    loss = SquaredLoss()
    with Progress(2, loss, values, stream=out) as progress:
        Boosting(StumpTrainer(), loss).train(features, values, 2, callback=progress)
    assert out.getvalue().splitlines()[-1].startswith("round 2/2: loss ")
    assert "error" not in out.getvalue()
    assert training_error(loss, np.zeros((3, 1)), np.ones((3, 1)), BoostedMachine(number_of_outputs=1)) is None


def test_training_error_rules():
    targets = np.array([[1.0, -1.0, -1.0], [-1.0, 1.0, -1.0], [-1.0, -1.0, 1.0]])
    scores = np.array([[2.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 3.0]])
    assert training_error(LogitLoss(), targets, scores, BoostedMachine(number_of_outputs=3)) == pytest.approx(1 / 3)
    # a score of 0 is the negative class
    assert training_error(ExponentialLoss(), np.array([[1.0], [-1.0]]), np.array([[0.0], [-2.0]]),
                          BoostedMachine(number_of_outputs=1)) == 0.5
    # cost-sensitive rule argmin_k sum_j C[k, j] (f_j - f_k): for f = (0.3, 0, 0.2) the values are
    # -0.4, 0.5 and 5 * (0.1 - 0.2) = -0.5, so class 2 is predicted although class 0 has the largest score
    costs = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [5.0, 5.0, 0.0]])
    loss, machine = CMELoss(costs), BoostedMachine(cost_matrix=costs)
    scores = np.array([[0.3, 0.0, 0.2]])
    assert training_error(loss, loss.check_targets(np.array([2])), scores, machine) == 0.0
    assert training_error(loss, loss.check_targets(np.array([0])), scores, machine) == 1.0


def test_multi_output_progress_counts_argmax_errors():
    # one hand-made LUT on feature 0: values 0, 1, 2 score their class (value % 3) highest, value 3 scores
    # class 1 highest although its class is 0, so exactly the samples with value 3 are wrong
    table = np.array([[1.0, -1.0, -1.0], [-1.0, 1.0, -1.0], [-1.0, -1.0, 1.0], [-1.0, 1.0, -1.0]])
    machine = BoostedMachine(number_of_outputs=3)
    machine.add_weak_machine(LUTMachine(table, [0, 0, 0]), 0.5)
    features = np.repeat(np.arange(4), [5, 4, 3, 8])[:, np.newaxis]
    labels = features[:, 0] % 3
    targets = np.where(labels[:, None] == np.arange(3)[None], 1.0, -1.0)
    out = io.StringIO()
    with Progress(1, LogitLoss(), targets, stream=out) as progress:
        progress(0, machine, 0.5 * table[features[:, 0]])
    # LogitLoss per output log(1 + exp(-t s)); s = +-0.5: right signs cost log(1 + e^-0.5), wrong e^0.5
    right, wrong = np.log1p(np.exp(-0.5)), np.log1p(np.exp(0.5))
    expected_loss = (12 * 3 * right + 8 * (1 * right + 2 * wrong)) / 20
    assert out.getvalue() == f"round 1/1: loss {expected_loss:.4g}, training error 40.00%\n"  # 8 of 20


def test_cli_quiet_and_plain_progress(tmp_path, capsys):
    features, targets = _binary(seed=5)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([features, targets]), delimiter=",")
    assert main(["train", str(data), "-o", str(tmp_path / "a.hdf5"), "-r", "4", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""
    assert main(["train", str(data), "-o", str(tmp_path / "b.hdf5"), "-r", "4"]) == 0
    captured = capsys.readouterr()
    assert [line.split(":")[0] for line in captured.err.splitlines()] == [f"round {r}/4" for r in range(1, 5)]
    assert "trained 4 weak machines" in captured.out
