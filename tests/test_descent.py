"""The descent guarantee of the training loop, the defaults of gradient trees, and their bad input."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from bob_boost import Boosting, LUTTrainer, StumpTrainer, TreeTrainer
from bob_boost.exceptions import ConvergenceWarning
from bob_boost.losses import ExponentialLoss, LogitLoss, SoftmaxLoss, SquaredLoss, TangentialLoss
from bob_boost.losses.base import BinaryClassificationLoss
from bob_boost.sklearn import BoostingClassifier, BoostingRegressor
from test_defaults import load

#: Held-out accuracy of LightGBM 4.7.0's defaults (``LGBMClassifier(n_estimators=50)``: 31 leaves, learning
#: rate 0.1) on the split of :func:`split` below, as ``bench/bench_defaults.py --rounds 50`` measures it.
LIGHTGBM_DEFAULT_ACCURACY = {"pendigits": 0.9909, "optdigits": 0.9739}


def split(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A shipped UCI set, split 70/30 after a permutation by ``numpy.random.default_rng(0)``."""
    return load(name, seed=0)


@pytest.fixture(scope="module")
def pendigits():
    return split("pendigits")


def losses_per_round(trainer, features, targets, loss, rounds):
    """The training loss before the first round (scores 0) and after each round (from the scores a callback
    sees), and the machine."""
    checked = loss.check_targets(targets)
    values = [float(np.sum(loss.loss(checked, np.zeros(checked.shape))))]

    def record(round_index, machine, scores):
        values.append(float(np.sum(loss.loss(checked, scores))))

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        machine = trainer.train(features, targets, rounds, callback=record)
    return np.array(values), machine


@pytest.mark.parametrize("name", sorted(LIGHTGBM_DEFAULT_ACCURACY))
def test_default_trees_reach_lightgbms_default_accuracy(name):
    x, y, x_test, y_test = split(name)
    machine = Boosting(TreeTrainer(), SoftmaxLoss()).train(x, y, 50)
    accuracy = np.mean(machine.predict(x_test) == y_test)
    assert accuracy >= LIGHTGBM_DEFAULT_ACCURACY[name] - 0.01
    estimator = BoostingClassifier(weak_learner="tree", loss="softmax", n_estimators=50).fit(x, y)
    assert estimator.score(x_test, y_test) >= LIGHTGBM_DEFAULT_ACCURACY[name] - 0.01


def test_defaults_resolve_per_weak_trainer():
    assert Boosting(TreeTrainer(), LogitLoss()).learning_rate == 0.1
    assert Boosting(StumpTrainer(), LogitLoss()).learning_rate == 1.0
    assert Boosting(LUTTrainer(4), LogitLoss()).learning_rate == 1.0
    assert Boosting(TreeTrainer(), LogitLoss(), learning_rate=0.5).learning_rate == 0.5
    tree = TreeTrainer()
    assert (tree.max_depth, tree.max_leaves, tree.growth, tree.multi_output) == (None, 31, "leafwise", "per_output")
    assert BoostingClassifier().get_params()["learning_rate"] is None


@pytest.mark.parametrize("multi_output", ["shared", "per_output"])
def test_a_learning_rate_of_one_no_longer_diverges(pendigits, multi_output):
    # Newton leaves of nearly pure nodes of a rare class step about 1/p: unshrunk, they ran away to scores of
    # 1e251 and 10% accuracy; the guarantee halves such steps until the training loss decreases
    x, y, x_test, y_test = pendigits
    trainer = Boosting(TreeTrainer(multi_output=multi_output), SoftmaxLoss(), learning_rate=1.0)
    values, machine = losses_per_round(trainer, x, y, SoftmaxLoss(), 20)
    assert np.all(np.diff(values) <= 1e-12 * values[:-1])
    scores = machine.decision_scores(x_test)
    assert np.all(np.isfinite(scores)) and np.mean(np.argmax(scores, axis=1) == y_test) > 0.9


def test_halved_rounds_are_logged_and_the_model_is_the_same_for_any_thread_count(pendigits, caplog):
    # 30,000 rows of 10 scores: the loss, its derivatives and the score updates run on row blocks in threads
    x, y, _, _ = pendigits
    x = np.vstack([x] * 4)[:30000] + np.random.default_rng(0).normal(scale=0.5, size=(30000, x.shape[1]))
    y = np.concatenate([y] * 4)[:30000]
    weights = np.random.default_rng(1).random(y.size)
    machines = []
    for threads in (1, 2):
        with caplog.at_level("INFO", logger="bob_boost.boosting"):
            machines.append(Boosting(TreeTrainer(multi_output="shared", max_leaves=8, n_threads=threads),
                                     SoftmaxLoss(), learning_rate=1.0).train(x, y, 6, sample_weight=weights))
    assert "halved" in caplog.text
    assert np.array_equal(machines[0].weights, machines[1].weights)
    assert np.array_equal(machines[0].decision_scores(x), machines[1].decision_scores(x))


class WrongGradientLoss(BinaryClassificationLoss):
    """The logit loss with a gradient of the wrong sign: no step along what it proposes can decrease the loss."""

    name = "wrong_gradient"

    def loss(self, targets, scores, sample_weight=None):
        return LogitLoss().loss(targets, scores, sample_weight)

    def loss_gradient(self, targets, scores, sample_weight=None):
        return -LogitLoss().loss_gradient(targets, scores, sample_weight)

    def loss_hessian(self, targets, scores, sample_weight=None):
        return LogitLoss().loss_hessian(targets, scores, sample_weight)


@pytest.mark.parametrize("weak", [TreeTrainer, StumpTrainer])
def test_a_loss_with_a_wrong_gradient_stops_with_a_warning_naming_it(weak):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(400, 4))
    y = np.where(x[:, 0] + 0.3 * rng.normal(size=400) > 0, 1.0, -1.0)
    with pytest.warns(ConvergenceWarning, match=r"round 1: .*WrongGradientLoss"):
        machine = Boosting(weak(), WrongGradientLoss()).train(x, y, 10)
    assert len(machine) == 0


def test_a_shrunk_step_on_a_non_convex_loss_is_checked(pendigits):
    # the tangential loss is not convex: a shrunk L-BFGS weight is evaluated, not assumed to descend
    x, y, _, _ = pendigits
    targets = np.where(y == 3, 1.0, -1.0)
    values, machine = losses_per_round(Boosting(StumpTrainer(), TangentialLoss(), learning_rate=0.5), x, targets,
                                       TangentialLoss(), 15)
    assert len(machine) == 15 and np.all(np.diff(values) <= 1e-12 * values[:-1])


def test_max_delta_step_caps_every_leaf(pendigits):
    x, y, _, _ = pendigits
    targets = np.where(y == 0, 1.0, -1.0)
    capped = Boosting(TreeTrainer(max_delta_step=0.25), LogitLoss(), learning_rate=1.0).train(x, targets, 5)
    free = Boosting(TreeTrainer(), LogitLoss(), learning_rate=1.0).train(x, targets, 5)
    assert all(np.max(np.abs(m.values)) <= 0.25 for m in capped.weak_machines)
    assert max(np.max(np.abs(m.values)) for m in free.weak_machines) > 0.25
    # XGBoost's "no constraint" value
    same = Boosting(TreeTrainer(max_delta_step=0), LogitLoss(), learning_rate=1.0).train(x, targets, 5)
    assert np.array_equal(same.decision_scores(x), free.decision_scores(x))


@pytest.mark.parametrize("value", [0.0, -0.1, float("nan"), float("inf"), 1.5])
def test_bad_learning_rates_are_refused(value):
    with pytest.raises(ValueError, match="learning_rate"):
        Boosting(TreeTrainer(), LogitLoss(), learning_rate=value)
    x = np.random.default_rng(0).normal(size=(60, 2))
    with pytest.raises(ValueError, match="learning_rate"):
        BoostingClassifier(weak_learner="tree", learning_rate=value).fit(x, x[:, 0] > 0)


@pytest.mark.parametrize("value", [-1.0, float("nan"), "1"])
def test_bad_max_delta_steps_are_refused(value):
    with pytest.raises((ValueError, TypeError), match="max_delta_step"):
        TreeTrainer(max_delta_step=value)


def test_targets_of_extreme_magnitude_get_a_clear_error():
    x = np.random.default_rng(0).normal(size=(200, 3))
    y = 1e200 * x[:, 0]
    kept = y.copy()
    with pytest.raises(ValueError, match=r"^y: .*overflow the squared loss"):
        BoostingRegressor(weak_learner="tree").fit(x, y)
    with pytest.raises(ValueError, match=r"^targets: .*overflow the squared loss"):
        Boosting(TreeTrainer(), SquaredLoss()).train(x, y)
    assert np.array_equal(y, kept)
    # large but representable targets train to finite predictions
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        predictions = BoostingRegressor(weak_learner="tree").fit(x, 1e90 * x[:, 0]).predict(x)
    assert np.all(np.isfinite(predictions))


def test_certified_steps_cost_no_evaluation(monkeypatch):
    # L-BFGS weights carry their own proof of descent, converged Newton weights and shrunk weights of a convex
    # loss too: the loss is never evaluated for them (bob's stumps and tables pay nothing for the guarantee)
    from bob_boost.boosting import algorithms

    calls: dict[str, int] = {}

    def counting(name):
        original = getattr(algorithms, name)

        def counted(*args, **kwargs):
            calls[name] = calls.get(name, 0) + 1
            return original(*args, **kwargs)
        monkeypatch.setattr(algorithms, name, counted)

    for name in ("loss_total", "derivatives_and_total", "fit_line_step", "newton_fit_step"):
        counting(name)
    rng = np.random.default_rng(5)
    x = rng.normal(size=(300, 4))
    y = np.where(x[:, 0] + 0.5 * rng.normal(size=300) > 0, 1.0, -1.0)  # no stump separates them
    for rate in (1.0, 0.3):
        # every threshold: L-BFGS steps; 64 quantile bins: Newton steps
        for bins, rule in ((None, "fit_line_step"), (64, "newton_fit_step")):
            calls.clear()
            Boosting(StumpTrainer(max_bins=bins), ExponentialLoss(), learning_rate=rate).train(x, y, 10)
            assert calls == {rule: 10}
    calls.clear()
    Boosting(TreeTrainer(), ExponentialLoss()).train(x, y, 10)
    assert calls.get("derivatives_and_total", 0) == 10


class ScaledSoftmax(SoftmaxLoss):
    """A subclass that changes the loss: the softmax's one-pass method no longer describes it."""

    def loss(self, targets, scores, sample_weight=None):
        return 2.0 * super().loss(targets, scores, sample_weight)


@pytest.mark.parametrize("rows, threads", [(3000, 1), (20000, 2), (300000, 2)])
@pytest.mark.parametrize("loss", [SoftmaxLoss(), ScaledSoftmax()], ids=["softmax", "subclass"])
def test_the_one_pass_check_gives_the_bits_of_separate_calls(rows, threads, loss):
    from bob_boost.boosting import rows as row_blocks

    rng = np.random.default_rng(rows)
    scores, weights = 5 * rng.normal(size=(rows, 7)), rng.random(rows)
    targets = loss.check_targets(rng.integers(0, 7, rows))
    gradient, hessian, total = row_blocks.derivatives_and_total(loss, targets, scores, True, weights, threads)
    expected_gradient, expected_hessian = row_blocks.loss_derivatives(loss, targets, scores, True, threads)
    assert np.array_equal(gradient, expected_gradient) and np.array_equal(hessian, expected_hessian)
    assert total == row_blocks.loss_total(loss, targets, scores, weights, threads)
    assert total == row_blocks.loss_total(loss, targets, scores, weights, 1)  # any thread count
    np.testing.assert_allclose(total, np.sum(weights[:, np.newaxis] * loss.loss(targets, scores)), rtol=1e-12)
