"""The histogram engine: quantised bins, compiled kernels, threads, the Newton step and compiled prediction."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from bob_boost import (BoostedMachine, Boosting, ExponentialLoss, LogitLoss, LUTTrainer, SquaredLoss, StumpTrainer,
                       TangentialLoss)
from bob_boost.binning import BinnedFeatures
from bob_boost.boosting.protocol import RoundState
from bob_boost.boosting.steps import fit_weights, newton_fit_weights
from bob_boost.engine import edges
from bob_boost.weak import LUTMachine, StumpMachine


def _data(n: int, features: int = 6, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, features))
    y = np.where(x[:, 0] + 0.5 * x[:, 1] ** 2 - 0.3 * x[:, 2] + 0.5 * rng.normal(size=n) > 0.2, 1.0, -1.0)
    return x, y


def _same_machine(first: BoostedMachine, second: BoostedMachine) -> None:
    assert len(first) == len(second)
    assert np.array_equal(first.weights, second.weights)
    for a, b in zip(first.weak_machines, second.weak_machines):
        assert a == b


# -- quantised binning --------------------------------------------------------------------------

def test_default_bins_equal_exact_mode_when_features_have_few_values():
    x, y = _data(200)  # 200 distinct values per feature: at most 256, so one bin per value
    binned = BinnedFeatures.from_values(x, max_bins=256)
    assert not binned.lossy
    exact = Boosting(StumpTrainer(max_bins=None), ExponentialLoss()).train(x, y, 15)
    default = Boosting(StumpTrainer(), ExponentialLoss()).train(x, y, 15)
    _same_machine(exact, default)


def test_features_with_many_values_get_at_most_max_bins_of_similar_mass():
    x, _ = _data(5000, 3)
    binned = BinnedFeatures.from_values(x, max_bins=16)
    assert binned.lossy
    sizes = np.diff(binned.offsets)
    assert np.all(sizes <= 16) and np.all(sizes >= 12)
    counts = binned.coded.counts[:, :16]
    assert counts.sum(axis=1).tolist() == [5000] * 3
    assert counts.max() <= 2 * 5000 / 16  # equal-frequency cuts, up to the sample's noise


def test_a_value_holding_much_of_the_mass_gets_its_own_bin_and_the_rest_keep_theirs():
    """A mostly-zero feature with many other values: zero alone in a bin, the other values in the remaining
    bins of similar mass (equal-mass cuts of the whole would all fall inside the zeros)."""
    rng = np.random.default_rng(3)
    x = np.where(rng.random(20_000) < 0.9, 0.0, rng.normal(size=20_000))
    x[:500] = 7.0  # a second heavy value, at the top
    binned = BinnedFeatures.from_values(x[:, np.newaxis], max_bins=32)
    thresholds = binned.split_thresholds[:binned.offsets[1] - 1]
    codes = binned.coded.codes[0]
    assert 29 <= thresholds.size <= 31
    for value in (0.0, 7.0):  # each heavy value alone in its bin
        assert set(codes[x == value]) & set(codes[x != value]) == set()
    light = np.bincount(codes[(x != 0.0) & (x != 7.0)])
    light = light[light > 0]
    assert light.max() <= 2 * light.mean()
    from bob_boost.engine.edges import quantile_thresholds
    for seed in range(200):  # never more than max_bins - 1 thresholds, whatever the counts
        generator = np.random.default_rng(seed)
        size, bins = int(generator.integers(3, 400)), int(generator.integers(2, 40))
        counts = np.where(generator.random(size) < 0.05, generator.integers(50, 5000, size),
                          generator.integers(1, 4, size))
        found = quantile_thresholds(np.arange(size, dtype=float), counts, bins)
        assert found.size <= bins - 1 and np.all(np.diff(found) > 0)


def test_few_valued_feature_keeps_one_bin_per_value_beside_quantised_ones():
    rng = np.random.default_rng(1)
    x = np.column_stack([rng.normal(size=3000), rng.integers(0, 5, size=3000).astype(float)])
    binned = BinnedFeatures.from_values(x, max_bins=32)
    thresholds = binned.split_thresholds[binned.offsets[1]:binned.offsets[2] - 1]
    assert np.array_equal(thresholds, [0.5, 1.5, 2.5, 3.5])


def test_sampled_bins_are_checked_against_every_row(monkeypatch):
    # the sample shows 3 values, the full column has a rare fourth: it must get its own bin
    monkeypatch.setattr(edges, "SAMPLE_SIZE", 50)
    x = np.zeros((400, 1))
    x[:, 0] = np.arange(400) % 3
    x[399, 0] = 7.0
    rows = edges.sample_rows(400, 50)
    assert 399 not in rows
    binned = BinnedFeatures.from_values(x, max_bins=8)
    assert np.array_equal(binned.split_thresholds[:-1], [0.5, 1.5, 4.5])
    assert not binned.lossy or binned.number_of_bins == 4


def _stump_gain(x: np.ndarray, gradient: np.ndarray, machine: StumpMachine) -> float:
    return float(np.abs(np.sum(-gradient * machine.forward(x)[:, 0])))


@pytest.mark.parametrize("max_bins", [4, 13, 64])
def test_quantised_stump_is_the_best_among_the_bin_boundaries(max_bins):
    x, y = _data(700, 4, seed=max_bins)
    gradient = np.random.default_rng(max_bins).normal(size=(700, 1))
    trainer = StumpTrainer(max_bins=max_bins)
    binned = trainer.prepare(x)
    stump = trainer.train(binned, gradient)
    best = 0.0
    for f in range(4):
        for t in binned.split_thresholds[binned.offsets[f]:binned.offsets[f + 1] - 1]:
            best = max(best, _stump_gain(x, gradient[:, 0], StumpMachine(float(t), 1.0, f)))
    assert stump.threshold in binned.split_thresholds
    assert _stump_gain(x, gradient[:, 0], stump) == pytest.approx(best, rel=1e-9)


def test_lut_choice_is_the_brute_force_best():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 7, size=(500, 5))
    gradient = rng.normal(size=(500, 3))
    machine = LUTTrainer(7, number_of_outputs=3).train(x, gradient)
    for k in range(3):
        masses = [sum(abs(gradient[x[:, f] == v, k].sum()) for v in range(7)) for f in range(5)]
        assert masses[machine.indices[k]] == pytest.approx(max(masses), rel=1e-12)


def test_sparse_features_give_the_same_histograms_as_plain_sums():
    rng = np.random.default_rng(2)
    x = np.where(rng.random((1000, 4)) < 0.8, 0, rng.integers(1, 9, size=(1000, 4)))  # mostly zeros
    values = rng.normal(size=(1000, 2))
    binned = BinnedFeatures.from_values(x)
    assert np.all(binned.coded.mode_bins == 0)  # stored sparse: only the non-zero rows are visited
    expected = np.concatenate([[values[x[:, f] == v].sum(axis=0) for v in np.unique(x[:, f])] for f in range(4)])
    assert np.allclose(binned.histograms(values), expected, rtol=0, atol=1e-12)


def test_codes_of_float32_features_agree_with_the_stumps():
    x, y = _data(3000, 3)
    x32 = x.astype(np.float32)
    trainer = StumpTrainer(max_bins=32)
    binned = trainer.prepare(x32)
    state_gradient = -y[:, np.newaxis]
    proposal = trainer.propose(binned, RoundState(features=x32, scores=None, gradient=state_gradient))
    assert np.array_equal(proposal.outputs, proposal.machine.forward(x32))


# -- threads ------------------------------------------------------------------------------------

def test_model_is_the_same_for_every_thread_count():
    x, y = _data(20000, 8)
    machines = [Boosting(StumpTrainer(max_bins=64, n_threads=t), LogitLoss()).train(x, y, 12) for t in (1, 2, 4)]
    for other in machines[1:]:
        _same_machine(machines[0], other)
    discrete = np.random.default_rng(3).integers(0, 16, size=(20000, 8))
    targets = np.where(discrete[:, [0, 1]] > 7, 1.0, -1.0)
    luts = [Boosting(LUTTrainer(16, 2, n_threads=t), ExponentialLoss()).train(discrete, targets, 8) for t in (1, 3)]
    _same_machine(*luts)


def test_eight_python_threads_predict_as_one():
    x, y = _data(3000, 5)
    machine = Boosting(StumpTrainer(max_bins=32), ExponentialLoss()).train(x, y, 30)
    probe = np.random.default_rng(9).normal(size=(60000, 5))
    expected = machine.decision_scores(probe)
    results = [None] * 8

    def predict(i: int) -> None:
        results[i] = machine.decision_scores(probe)

    threads = [threading.Thread(target=predict, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(np.array_equal(result, expected) for result in results)


# -- compiled prediction ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint8])
def test_compiled_stump_scores_equal_the_staged_scores(dtype):
    rng = np.random.default_rng(4)
    machine = BoostedMachine(baseline=0.37)
    for _ in range(40):
        machine.add_weak_machine(StumpMachine(float(rng.normal() * 3 + 100), float(rng.choice([-1, 1])),
                                              int(rng.integers(0, 6))), rng.random())
    features = (rng.normal(size=(5000, 6)) * 3 + 100).astype(dtype)
    staged = list(machine.staged_decision_scores(features))[-1]
    assert machine._compiled_forward(features) is not None
    assert np.array_equal(machine.decision_scores(features), staged)
    manual = np.full((5000, 1), 0.37)
    for weak, weight in zip(machine.weak_machines, machine.weights):
        manual += weight * weak.forward(features)
    assert np.array_equal(staged, manual)


def test_compiled_lut_scores_equal_the_staged_scores():
    rng = np.random.default_rng(6)
    machine = BoostedMachine(number_of_outputs=3, baseline=[0.1, -0.2, 0.3])
    for r in range(25):
        entries = 8 if r % 2 else 5
        machine.add_weak_machine(LUTMachine(rng.choice([-1.0, 1.0], size=(entries, 3)), rng.integers(0, 4, size=3)),
                                 rng.random(3))
    features = rng.integers(0, 5, size=(4000, 4)).astype(np.uint8)
    staged = list(machine.staged_decision_scores(features))[-1]
    assert machine._compiled_forward(features) is not None
    assert np.array_equal(machine.decision_scores(features), staged)


def test_prediction_rejects_another_feature_count():
    x, y = _data(500, 4)
    machine = Boosting(StumpTrainer(), ExponentialLoss()).train(x, y, 5)
    with pytest.raises(ValueError, match="features: the machine was trained on 4 features, got 3"):
        machine.decision_scores(x[:, :3])


# -- the Newton step ----------------------------------------------------------------------------

@pytest.mark.parametrize("loss", [ExponentialLoss(), LogitLoss(), SquaredLoss()])
@pytest.mark.parametrize("weighted", [False, True])
def test_newton_weights_match_lbfgs(loss, weighted):
    rng = np.random.default_rng(7)
    n, outputs = 5000, 3
    targets = np.where(rng.random((n, outputs)) < 0.4, -1.0, 1.0)
    if isinstance(loss, SquaredLoss):
        targets = targets * 2 + rng.normal(size=(n, outputs))
    scores = 0.4 * rng.normal(size=(n, outputs))
    weak = np.where(rng.random((n, outputs)) < 0.3 + 0.4 * (targets > 0), 1.0, -1.0)
    weights = rng.random(n) * 2 if weighted else None
    lbfgs = fit_weights(loss, targets, scores, weak, weights)
    newton = newton_fit_weights(loss, targets, scores, weak, weights, n_threads=2)
    # L-BFGS's line search often ends at a per-sample slope of ~1e-9 (it accepts up to 1e-6), which
    # leaves its weights ~1e-8 relative from the minimiser; Newton's slope is at the rounding level
    slope = [np.abs(loss.loss_and_gradient_sum(a, targets, scores, weak, weights)[1]) / n for a in (newton, lbfgs)]
    assert np.all(slope[0] <= 1e-14) and np.all(slope[0] <= slope[1] + 1e-16)
    assert np.all(np.abs(newton - lbfgs) <= 1e-7 * np.abs(lbfgs))
    # L-BFGS carried on to the rounding level of the slope (the step rule stops at 1e-6) meets Newton at 1e-10
    import scipy.optimize

    def mean_loss(alpha):
        value, gradient = loss.loss_and_gradient_sum(alpha, targets, scores, weak, weights)
        return value / n, gradient / n
    result = scipy.optimize.minimize(mean_loss, lbfgs, jac=True, method="L-BFGS-B",
                                     options={"ftol": 0.0, "gtol": 1e-15, "maxiter": 200})
    tight = result.x
    assert result.success or np.max(np.abs(result.jac)) <= 1e-14, result.message
    assert np.all(np.abs(newton - tight) <= 1e-10 * np.abs(tight)), np.abs(newton - tight) / np.abs(tight)


@pytest.mark.parametrize("weighted", [False, True])
def test_newton_weights_equal_the_closed_form_minimisers(weighted):
    # exponential loss with +-1 outputs: alpha = log(W_agree / W_disagree) / 2, W the weights exp(-t s);
    # squared loss: alpha = sum(w h (t - s)) / sum(w h^2)
    rng = np.random.default_rng(11)
    n, outputs = 4000, 3
    targets = np.where(rng.random((n, outputs)) < 0.4, -1.0, 1.0)
    scores = 0.6 * rng.normal(size=(n, outputs))
    weak = np.where(rng.random((n, outputs)) < 0.3 + 0.4 * (targets > 0), 1.0, -1.0)
    weights = rng.random(n) * 2 if weighted else np.ones(n)
    w = weights[:, np.newaxis] * np.exp(-targets * scores)
    agree = targets * weak > 0
    expected = 0.5 * np.log(np.sum(np.where(agree, w, 0.0), axis=0) / np.sum(np.where(agree, 0.0, w), axis=0))
    newton = newton_fit_weights(ExponentialLoss(), targets, scores, weak, weights if weighted else None)
    assert np.allclose(newton, expected, rtol=1e-12, atol=0)
    real_targets = 2 * targets + rng.normal(size=(n, outputs))
    real_weak = rng.normal(size=(n, outputs)) + 0.5 * real_targets
    column = weights[:, np.newaxis]
    expected = np.sum(column * real_weak * (real_targets - scores), axis=0) / np.sum(column * real_weak ** 2, axis=0)
    newton = newton_fit_weights(SquaredLoss(), real_targets, scores, real_weak, weights if weighted else None)
    assert np.allclose(newton, expected, rtol=1e-12, atol=0)


def test_quantised_training_uses_newton_and_exact_training_lbfgs(monkeypatch):
    from bob_boost.boosting import algorithms
    calls = []
    original = algorithms.newton_fit_step

    def spy(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(algorithms, "newton_fit_step", spy)
    x, y = _data(2000, 4)
    Boosting(StumpTrainer(max_bins=None), ExponentialLoss()).train(x, y, 3)
    assert not calls
    Boosting(StumpTrainer(max_bins=32), ExponentialLoss()).train(x, y, 3)
    assert len(calls) == 3
    calls.clear()
    Boosting(StumpTrainer(max_bins=32), TangentialLoss()).train(x, y, 3)  # no compiled form: L-BFGS
    assert not calls


def test_quantised_accuracy_is_close_to_the_exact_mode():
    x, y = _data(6000, 6)
    exact = Boosting(StumpTrainer(max_bins=None), ExponentialLoss()).train(x, y, 40)
    quantised = Boosting(StumpTrainer(max_bins=64), ExponentialLoss()).train(x, y, 40)
    probe, truth = _data(6000, 6, seed=11)
    accuracy = [np.mean(m.predict(probe) == truth) for m in (exact, quantised)]
    assert abs(accuracy[0] - accuracy[1]) < 0.01


# -- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize("max_bins, error", [(1, ValueError), (65536, ValueError), (0, ValueError),
                                             (2.5, TypeError), (True, TypeError), ("256", TypeError)])
def test_bad_max_bins(max_bins, error):
    with pytest.raises(error, match="max_bins"):
        StumpTrainer(max_bins=max_bins)
    trainer = StumpTrainer()
    trainer.max_bins = max_bins  # read again when training starts
    with pytest.raises(error, match="max_bins"):
        trainer.prepare(np.zeros((3, 2)))


@pytest.mark.parametrize("n_threads, error", [(0, ValueError), (-2, ValueError), (1.5, TypeError),
                                              (True, TypeError)])
def test_bad_n_threads(n_threads, error):
    with pytest.raises(error, match="n_threads"):
        StumpTrainer(n_threads=n_threads)
    with pytest.raises(error, match="n_threads"):
        LUTTrainer(4, n_threads=n_threads)
    machine = BoostedMachine()
    machine.add_weak_machine(StumpMachine(0.0, 1.0, 0), 1.0)
    machine.n_threads = n_threads
    with pytest.raises(error, match="n_threads"):
        machine.decision_scores(np.zeros((2, 1)))


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_non_finite_features_are_rejected(bad):
    x, y = _data(50, 3)
    x[7, 1] = bad
    with pytest.raises(ValueError, match="features: contains NaN or infinite values"):
        Boosting(StumpTrainer(), ExponentialLoss()).train(x, y, 2)


def test_constant_features_are_never_chosen_and_all_constant_data_fails_clearly():
    x, y = _data(3000, 3)
    x[:, 1] = 4.0
    machine = Boosting(StumpTrainer(max_bins=16), ExponentialLoss()).train(x, y, 20)
    assert 1 not in machine.feature_indices()
    with pytest.raises(ValueError, match="every feature is constant"):
        Boosting(StumpTrainer(max_bins=16), ExponentialLoss()).train(np.ones((30, 2)), y[:30], 2)


def test_the_caller_arrays_are_not_modified():
    x, y = _data(3000, 3)
    x32 = x.astype(np.float32)
    copies = x32.copy(), y.copy()
    Boosting(StumpTrainer(max_bins=8), ExponentialLoss()).train(x32, y, 4)
    assert np.array_equal(copies[0], x32) and np.array_equal(copies[1], y)


# -- missing values ------------------------------------------------------------------------------

def _with_missing(n: int = 3000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x, y = _data(n, 4, seed)
    x[rng.random(n) < 0.3, 0] = np.nan  # feature 0 carries the signal; its missing samples lean positive
    y[np.isnan(x[:, 0]) & (rng.random(n) < 0.8)] = 1.0
    return x, y


def test_missing_values_are_rejected_unless_asked_for():
    x, y = _with_missing()
    with pytest.raises(ValueError, match="missing='bin'"):
        Boosting(StumpTrainer(), ExponentialLoss()).train(x, y, 2)
    with pytest.raises(ValueError, match="missing: must be None or 'bin'"):
        StumpTrainer(missing="zero")
    x[3, 2] = np.inf
    with pytest.raises(ValueError, match="features: contains infinite values"):
        Boosting(StumpTrainer(missing="bin"), ExponentialLoss()).train(x, y, 2)


def test_missing_stump_is_the_brute_force_best_with_nan_on_either_side():
    x, y = _with_missing()
    gradient = -y[:, np.newaxis] * np.random.default_rng(1).random((x.shape[0], 1))
    trainer = StumpTrainer(max_bins=16, missing="bin")
    binned = trainer.prepare(x)
    stump = trainer.train(binned, gradient)
    best = 0.0
    for f in range(4):
        for t in binned.split_thresholds[binned.offsets[f]:binned.offsets[f + 1] - 2]:
            for side in (False, True):
                best = max(best, _stump_gain(x, gradient[:, 0], StumpMachine(float(t), 1.0, f, side)))
    assert stump.missing_above is not None
    assert _stump_gain(x, gradient[:, 0], stump) == pytest.approx(best, rel=1e-9)


def test_missing_values_route_as_learnt_and_survive_save_and_load(tmp_path):
    x, y = _with_missing()
    machine = Boosting(StumpTrainer(max_bins=32, missing="bin"), ExponentialLoss()).train(x, y, 20)
    assert any(stump.index == 0 for stump in machine.weak_machines)
    probe, _ = _with_missing(2000, seed=5)
    staged = list(machine.staged_decision_scores(probe))[-1]
    assert np.array_equal(machine.decision_scores(probe), staged)  # compiled path = numpy path, NaN included
    accuracy = np.mean(machine.predict(x) == y)
    assert accuracy > 0.8
    path = tmp_path / "missing.hdf5"
    machine.save(path)
    loaded = BoostedMachine.load(path)
    assert [m.missing_above for m in loaded.weak_machines] == [m.missing_above for m in machine.weak_machines]
    assert np.array_equal(loaded.decision_scores(probe), staged)


def test_a_machine_without_missing_handling_rejects_nan():
    x, y = _data(500, 3)
    machine = Boosting(StumpTrainer(), ExponentialLoss()).train(x, y, 5)
    x[0, 0] = np.nan
    with pytest.raises(ValueError, match="features: contains NaN"):
        machine.decision_scores(x)


def test_all_nan_feature_is_never_chosen():
    x, y = _data(2000, 3)
    x[:, 1] = np.nan
    machine = Boosting(StumpTrainer(missing="bin"), ExponentialLoss()).train(x, y, 10)
    assert 1 not in machine.feature_indices()


def test_compiled_tree_scores_equal_the_staged_scores():
    from bob_boost import SAMMETrainer, CostSensitiveTreeTrainer
    x, _ = _data(1500, 4)
    classes = (x[:, 0] > 0).astype(int) + (x[:, 1] > 0.4)
    machine = SAMMETrainer(weak_learner=CostSensitiveTreeTrainer(max_depth=3), number_of_rounds=15).train(x, classes)
    probe, _ = _data(3000, 4, seed=8)
    assert machine._compiled_forward(probe) is not None
    assert np.array_equal(machine.decision_scores(probe), list(machine.staged_decision_scores(probe))[-1])


def test_compiled_gradient_tree_scores_add_each_round_as_its_machine_does():
    """Rows go through the trees in groups (prediction.TREE_ROWS) within blocks (prediction.BLOCK_ROWS); each
    row's score is still the baseline plus every round's weighted output, added in round order, and a round of
    several trees (one per output) adds its trees in order."""
    from bob_boost import SoftmaxLoss, TreeTrainer
    from bob_boost.engine import prediction
    x, _ = _data(600, 4)
    classes = (x[:, 0] > 0).astype(int) + (x[:, 1] > 0.4)
    machine = Boosting(TreeTrainer(max_depth=3, multi_output="per_output"), SoftmaxLoss(), learning_rate=0.3).train(
        x, classes, 4)
    assert machine.weak_machines[0].roots.size == 3  # one tree per class in every round
    probe, _ = _data(prediction.BLOCK_ROWS + 3 * prediction.TREE_ROWS + 17, 4, seed=9)  # partial groups and blocks
    expected = np.zeros((probe.shape[0], 3)) + machine.baseline
    for weak, weight in zip(machine.weak_machines, machine.weights):
        expected += weight * weak.forward(probe)
    assert machine._compiled_forward(probe) is not None
    assert np.array_equal(machine.decision_scores(probe), expected)
    machine.n_threads = 1
    assert np.array_equal(machine.decision_scores(probe), expected)


def test_row_ranges_share_fewer_rows_than_a_block_when_the_work_pays_for_the_threads():
    from bob_boost.engine import prediction
    rows = 389
    cheap = prediction.PARALLEL_NS / rows / 2  # nanoseconds a row: half the work that pays
    assert prediction.row_ranges(rows, cheap, 2) == [(0, rows)]  # the caller's thread alone
    assert prediction.row_ranges(rows, 4 * cheap, 1) == [(0, rows)]
    assert prediction.row_ranges(rows, 4 * cheap, 2) == [(0, 195), (195, rows)]
    assert prediction.row_ranges(rows, 4 * cheap, 3) == [(0, 130), (130, 260), (260, rows)]
    big = 3 * prediction.BLOCK_ROWS + 5
    ranges = prediction.row_ranges(big, 100.0, 2)
    assert ranges[0][0] == 0 and ranges[-1][1] == big and all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    assert max(b - a for a, b in ranges) == prediction.BLOCK_ROWS


@pytest.mark.parametrize("kind", ["stump", "lut", "tree"])
@pytest.mark.long
def test_compiled_prediction_on_every_thread_count_is_the_machines_own_sum(kind):
    """Fewer rows than a block go to every thread when the ensemble's work pays for them (prediction.row_ranges);
    the scores are still each row's baseline plus every round's weighted output, added in round order."""
    from bob_boost import ExponentialLoss, LogitLoss, LUTTrainer, StumpTrainer, TreeTrainer
    from bob_boost.engine import prediction
    rows = 389
    x, y = _data(3000, 5, seed=5)
    if kind == "tree":
        rounds = int(np.ceil(prediction.PARALLEL_NS / (prediction.TREE_NS * rows)))
        machine = Boosting(TreeTrainer(max_depth=None, max_leaves=15), LogitLoss()).train(x, y, rounds)
    elif kind == "stump":
        rounds = int(np.ceil(prediction.PARALLEL_NS / (prediction.STUMP_NS * rows)))
        machine = Boosting(StumpTrainer(), ExponentialLoss(), learning_rate=0.1).train(x, y, rounds)
    else:
        x = np.floor((x - x.min()) * 3).astype(np.int64)  # the table's entries: small whole numbers
        rounds = int(np.ceil(prediction.PARALLEL_NS / (prediction.LUT_NS * rows)))
        machine = Boosting(LUTTrainer(int(x.max()) + 1), ExponentialLoss(), learning_rate=0.1).train(x, y, rounds)
    probe = x[:rows]
    assert len(prediction.row_ranges(rows, prediction.PARALLEL_NS / rows, 2)) == 2  # this much work is shared
    expected = np.zeros((rows, 1)) + machine.baseline
    for weak, weight in zip(machine.weak_machines, machine.weights):
        expected += weight * weak.forward(probe)
    assert machine._compiled_forward(probe) is not None
    for n_threads in (1, 2, 3):
        machine.n_threads = n_threads
        assert np.array_equal(machine.decision_scores(probe), expected), n_threads


def test_a_tree_of_one_output_column_is_added_to_that_column_only():
    """A round's tree whose leaves are zero outside one output column adds that column; a tree of vector leaves
    adds every column; both give the scores of the machines' own evaluation."""
    from bob_boost import SoftmaxLoss, TreeTrainer
    from bob_boost.engine import prediction
    values = np.array([[0.0, 0.0], [1.5, 0.0], [-2.0, -0.0], [0.0, 0.5], [0.0, -1.0], [0.0, 0.0], [1.0, 2.0]])
    roots = np.array([0, 3, 5, 6])  # trees of nodes 0-2 (column 0), 3-4 (column 1), 5 (zeros), 6 (both)
    assert prediction._tree_columns(values, roots).tolist() == [0, 1, 0, -1]
    x, _ = _data(900, 4)
    classes = (x[:, 0] > 0).astype(int) + (x[:, 1] > 0.4)
    probe, _ = _data(700, 4, seed=10)
    for multi_output in ("per_output", "shared"):
        machine = Boosting(TreeTrainer(max_depth=3, multi_output=multi_output), SoftmaxLoss(),
                           learning_rate=0.3).train(x, classes, 3)
        expected = np.zeros((probe.shape[0], 3)) + machine.baseline
        for weak, weight in zip(machine.weak_machines, machine.weights):
            expected += weight * weak.forward(probe)
        assert machine._compiled_forward(probe) is not None
        assert np.array_equal(machine.decision_scores(probe), expected)


def test_compiled_trees_of_uneven_depth_give_each_rows_own_leaf():
    """Rows go down a tree eight at a time (prediction._leaves), those that reach a leaf early waiting on it;
    leaf-wise trees put rows of one group at very different depths, and NaN goes the way each node learnt.
    Every row must still get its own tree's leaf: the scores equal the machines' own (numpy) evaluation."""
    from bob_boost import LogitLoss, TreeTrainer
    from bob_boost.engine import prediction
    x, y = _data(4000, 5, seed=3)
    x[::9, 1] = np.nan
    machine = Boosting(TreeTrainer(max_depth=None, max_leaves=40, min_samples_leaf=2, missing="bin"),
                       LogitLoss()).train(x, y, 6)
    probe, _ = _data(2 * prediction.TREE_ROWS + 8 * 3 + 5, 5, seed=4)  # full and partial groups of eight
    probe[::4, 1] = np.nan
    expected = np.zeros((probe.shape[0], 1)) + machine.baseline
    for weak, weight in zip(machine.weak_machines, machine.weights):
        expected += weight * weak.forward(probe)
    assert machine._compiled_forward(probe) is not None
    assert np.array_equal(machine.decision_scores(probe), expected)
    tree = machine.weak_machines[0]
    depth = np.zeros(tree.features.size, dtype=int)
    for node in np.flatnonzero(tree.features >= 0):  # a child is stored after its parent
        depth[[tree.left_children[node], tree.right_children[node]]] = depth[node] + 1
    leaves = depth[tree.features < 0]
    assert leaves.min() <= 3 < 7 <= leaves.max()  # shallow and deep leaves in one tree


def test_compiled_trees_read_every_feature_type_as_their_own_evaluation_does():
    """Tree prediction reads integer, boolean and column-major features through a float copy of the rows: the
    scores are those of the machines' own evaluation of the features as given."""
    from bob_boost import LogitLoss, TreeTrainer
    rng = np.random.default_rng(12)
    x = rng.integers(0, 200, size=(3000, 4))
    x[:, 3] += 2 ** 40  # int64 values float32 would round together
    y = np.where(x[:, 0] + x[:, 1] > 200, 1.0, -1.0) * np.where(x[:, 3] % 2 ** 40 > 100, 1, -1)
    machine = Boosting(TreeTrainer(max_leaves=15), LogitLoss()).train(x, y, 5)
    assert 3 in machine.feature_indices()
    probe = rng.integers(0, 200, size=(1000, 4))
    big = probe.copy()
    big[:, 3] += 2 ** 40
    for features in (probe.astype(np.uint8), probe.astype(np.int16), big, probe > 100,
                     np.asfortranarray(probe.astype(np.float32)), probe.astype(float)[:, ::-1][:, ::-1]):
        expected = np.zeros((features.shape[0], 1)) + machine.baseline
        for weak, weight in zip(machine.weak_machines, machine.weights):
            expected += weight * weak.forward(features)
        assert machine._compiled_forward(features) is not None
        assert np.array_equal(machine.decision_scores(features), expected), features.dtype


def test_column_major_features_give_the_same_codes():
    x, _ = _data(3000, 5)
    x[::7, 2] = np.nan
    for missing in (False, True):
        values = x if missing else np.nan_to_num(x)
        rows = BinnedFeatures.from_values(np.ascontiguousarray(values), max_bins=32, missing=missing)
        columns = BinnedFeatures.from_values(np.asfortranarray(values), max_bins=32, missing=missing)
        assert np.array_equal(rows.coded.codes, columns.coded.codes)
        assert np.array_equal(rows.split_thresholds, columns.split_thresholds, equal_nan=True)


def test_row_blocks_give_plain_sums_and_the_same_model_for_every_thread_count():
    from bob_boost.engine import codes
    rng = np.random.default_rng(12)
    n = codes.HISTOGRAM_ROWS + 4321  # two row blocks
    x = np.column_stack([rng.normal(size=n), np.where(rng.random(n) < 0.9, 0, rng.integers(1, 5, size=n))])
    values = rng.normal(size=(n, 2))
    binned = BinnedFeatures.from_values(x, max_bins=64)
    assert binned.coded.mode_bins[1] == 0  # the mostly-zero feature is sparse
    sizes = np.diff(binned.offsets)
    expected = np.concatenate([[values[binned.coded.codes[f] == b].sum(axis=0) for b in range(sizes[f])]
                               for f in range(2)])
    assert np.allclose(binned.histograms(values), expected, rtol=0, atol=1e-9)
    y = np.where(x[:, 0] + 0.5 * (x[:, 1] > 0) + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    machines = [Boosting(StumpTrainer(max_bins=64, n_threads=t), ExponentialLoss()).train(x, y, 6) for t in (1, 2, 4)]
    for other in machines[1:]:
        _same_machine(machines[0], other)


@pytest.mark.parametrize("kind", ["stump", "lut", "tree"])
def test_the_compiled_tables_kept_between_predictions_follow_every_change_of_the_machine(kind):
    """The compiled evaluation's tables are made once and kept: a new round, a truncation and a new baseline each
    give the scores of the machines' own sums; a copy or a pickle of a machine that predicted carries none of it."""
    import copy
    import pickle
    from bob_boost import TreeTrainer
    x, y = _data(600, 5, seed=2)
    if kind == "lut":
        x = np.floor((x - x.min()) * 3).astype(np.int64)
        trainer, loss = LUTTrainer(int(x.max()) + 1), ExponentialLoss()
    else:
        trainer, loss = (StumpTrainer(), ExponentialLoss()) if kind == "stump" else (TreeTrainer(), LogitLoss())
    machine = Boosting(trainer, loss, learning_rate=0.3).train(x, y, 6)
    extra = Boosting(trainer, loss, learning_rate=0.3).train(x[::2], y[::2], 2).weak_machines

    def own_sum():
        expected = np.zeros((x.shape[0], 1)) + machine.baseline
        for weak, weight in zip(machine.weak_machines, machine.weights):
            expected += weight * weak.forward(x)
        return expected

    first = machine.decision_scores(x)
    assert np.array_equal(first, own_sum())
    indices = machine.feature_indices()
    indices[:] = -1  # the caller's copy
    assert machine.feature_indices().min() >= 0
    for change in (lambda: machine.add_weak_machine(extra[0], 0.7), lambda: machine.truncate(4),
                   lambda: setattr(machine, "baseline", 0.25)):
        change()
        scores = machine.decision_scores(x)
        assert np.array_equal(scores, own_sum()) and not np.array_equal(scores, first)
        first = scores
    for twin in (copy.deepcopy(machine), pickle.loads(pickle.dumps(machine))):
        assert "_prepared_cache" not in vars(twin)
        assert np.array_equal(twin.decision_scores(x), first)


def test_row_indices_are_four_bytes_while_the_rows_fit():
    from bob_boost.engine.tree_kernels import row_index_type, tree_state
    assert row_index_type(10) is np.int32 and row_index_type(2 ** 31 - 1) is np.int32
    assert row_index_type(2 ** 31) is np.int64
    order = np.arange(5, dtype=np.int32)
    state = tree_state(order, 3, 2, 2, np.zeros((5, 2)))
    assert state[0] is order and state[1].dtype == np.int32 and state[1].size == 5  # the buffer follows the order
