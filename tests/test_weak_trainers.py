"""Weak trainers against brute-force searches written out in the test."""
import numpy as np
import pytest

from bob_boost.trainers import LUTTrainer, StumpTrainer

rng = np.random.default_rng(7)


def brute_force_stump(features, gradient):
    """Best |sum -g h| over every feature and mid-point threshold, by loops."""
    best = (-1.0, None)
    for index in range(features.shape[1]):
        values = np.unique(features[:, index])
        for low, high in zip(values[:-1], values[1:]):
            threshold = 0.5 * (low + high)
            output = np.where(features[:, index] >= threshold, 1.0, -1.0)
            gain = np.sum(-gradient * output)
            if abs(gain) > best[0] + 1e-12:
                best = (abs(gain), (index, threshold, 1.0 if gain >= 0 else -1.0))
    return best


@pytest.mark.parametrize("kind", ["float", "small-int", "wide-int"])
def test_stump_trainer_finds_the_brute_force_optimum(kind):
    for _ in range(5):
        if kind == "float":
            features = rng.normal(size=(60, 5))
            features[:, 2] = np.round(features[:, 2])  # repeated values
        elif kind == "small-int":
            features = rng.integers(0, 6, size=(60, 5)).astype(np.uint8)
        else:
            features = rng.integers(-(10 ** 9), 10 ** 9, size=(60, 5))
        gradient = rng.normal(size=60)
        machine = StumpTrainer().train(features, gradient)
        gain, (index, threshold, polarity) = brute_force_stump(features, gradient)
        assert (machine.index, machine.threshold, machine.polarity) == (index, pytest.approx(threshold), polarity)
        achieved = np.sum(-gradient * machine(features)[:, 0])
        assert achieved == pytest.approx(gain) and achieved > 0


def test_integer_and_float_paths_choose_the_same_stump():
    features = rng.integers(0, 30, size=(200, 8))
    gradient = rng.normal(size=200)
    from_int = StumpTrainer().train(features, gradient)
    from_float = StumpTrainer().train(features.astype(np.float64) + 0.0, gradient)
    assert from_int == from_float


def test_stump_trainer_rejects_constant_features_and_bad_gradients():
    with pytest.raises(ValueError, match="constant"):
        StumpTrainer().train(np.ones((5, 3)), np.ones(5))
    with pytest.raises(ValueError, match="loss_gradient.*samples"):
        StumpTrainer().train(np.eye(4), np.ones(3))
    with pytest.raises(ValueError, match="univariate"):
        StumpTrainer().train(np.eye(4), np.ones((4, 2)))


def brute_force_lut_scores(features, gradient, entries):
    """Per feature and output: sum over values of |sum of gradient|."""
    scores = np.zeros((features.shape[1], gradient.shape[1]))
    for f in range(features.shape[1]):
        for o in range(gradient.shape[1]):
            scores[f, o] = sum(abs(gradient[features[:, f] == v, o].sum()) for v in range(entries))
    return scores


def test_lut_trainer_independent_and_shared_selection():
    entries, outputs = 8, 4
    features = rng.integers(0, entries, size=(300, 10))
    # each output depends on a different feature, so independent selection must differ per output
    gradient = np.stack([np.where(features[:, 2 * o] % 2 == 0, 1.0, -1.0) for o in range(outputs)], axis=1)
    gradient += 0.1 * rng.normal(size=gradient.shape)
    scores = brute_force_lut_scores(features, gradient, entries)

    independent = LUTTrainer(entries, outputs, "independent").train(features, gradient)
    np.testing.assert_array_equal(independent.indices, np.argmax(scores, axis=0))
    assert len(set(independent.indices.tolist())) == outputs

    shared = LUTTrainer(entries, outputs, "shared").train(features, gradient)
    assert len(set(shared.indices.tolist())) == 1
    assert shared.indices[0] == np.argmax(scores.sum(axis=1))

    # LUT signs follow the negative gradient, so every output correlates positively with it
    outputs_of_machine = independent(features)
    assert np.all(np.sum(-gradient * outputs_of_machine, axis=0) > 0)


def test_lut_trainer_validates_features_and_arguments():
    trainer = LUTTrainer(4)
    gradient = np.ones(3)
    with pytest.raises(ValueError, match="maximum_feature_value|LUT entries"):
        trainer.train(np.array([[0], [4], [1]]), gradient)
    with pytest.raises(ValueError, match="non-negative"):
        trainer.train(np.array([[0], [-1], [1]]), gradient)
    with pytest.raises(ValueError, match="integers"):
        trainer.train(np.array([[0.5], [1], [1]]), gradient)
    with pytest.raises(ValueError, match="selection_style"):
        LUTTrainer(4, selection_style="both")
    with pytest.raises(ValueError, match="loss_gradient.*outputs"):
        LUTTrainer(4, 2).train(np.array([[0], [1], [2]]), gradient)


def test_trainers_do_not_modify_their_inputs():
    features = rng.integers(0, 5, size=(50, 4))
    gradient = rng.normal(size=(50, 1))
    copies = features.copy(), gradient.copy()
    StumpTrainer().train(features, gradient)
    LUTTrainer(5).train(features, gradient)
    np.testing.assert_array_equal(features, copies[0])
    np.testing.assert_array_equal(gradient, copies[1])


def test_stumps_tied_in_exact_arithmetic_go_to_the_lowest_feature():
    # a mirrored copy of a feature offers the same splits, whose gains differ only by rounding
    for _ in range(20):
        values = rng.normal(size=(200, 1))
        machine = StumpTrainer().train(np.hstack([values, -values]), rng.normal(size=200))
        assert machine.index == 0


def test_neighbouring_and_extreme_values_still_get_a_splitting_threshold():
    low, high = 1.0, np.nextafter(1.0, 2.0)
    features = np.array([[low], [high], [low], [high]])
    machine = StumpTrainer().train(features, np.array([1.0, -1.0, 1.0, -1.0]))
    np.testing.assert_array_equal(machine(features)[:, 0], [-1, 1, -1, 1])
    extreme = np.array([[1.7e308], [-1.7e308]])
    machine = StumpTrainer().train(extreme, np.array([-1.0, 1.0]))
    assert np.isfinite(machine.threshold)
    np.testing.assert_array_equal(machine(extreme)[:, 0], [1, -1])


def test_unsigned_64_bit_features_beyond_the_int64_range_are_accepted():
    features = np.array([[2 ** 63 + 2 ** 12], [2 ** 63], [2 ** 63 + 2 ** 13]], dtype=np.uint64)
    machine = StumpTrainer().train(features, np.array([-1.0, 1.0, -1.0]))
    np.testing.assert_array_equal(machine(features)[:, 0], [1, -1, 1])


def test_lut_trainer_refuses_histograms_too_large_to_allocate():
    with pytest.raises(ValueError, match="maximum_feature_value.*quantise"):
        LUTTrainer(10 ** 9).train(np.zeros((60, 3), dtype=int), np.ones(60))


@pytest.mark.parametrize("missing", [None, "bin"])
@pytest.mark.parametrize("style", ["independent", "shared"])
def test_lut_proposal_outputs_are_the_machine_outputs_in_its_layout(missing, style):
    from bob_boost import Boosting, LogitLoss, LUTTrainer
    from bob_boost.boosting.protocol import RoundState
    rng = np.random.default_rng(11)
    x = rng.integers(0, 12, size=(400, 6)).astype(np.float64)
    if missing:
        x[rng.random(x.shape) < 0.1] = np.nan
    labels = (np.nan_to_num(x[:, 0]) + np.nan_to_num(x[:, 3])).astype(int) % 3
    targets = np.where(labels[:, np.newaxis] == np.arange(3), 1.0, -1.0)
    trainer = LUTTrainer(12, 3, style, missing=missing)
    prepared = trainer.prepare(x)
    state = RoundState(features=x, scores=np.zeros(targets.shape))
    state.gradient = LogitLoss().loss_gradient(targets, state.scores)
    proposal = trainer.propose(prepared, state)
    expected = proposal.machine.forward(x)
    assert proposal.outputs.tobytes(order="A") == expected.tobytes(order="A")
    assert proposal.outputs.flags.f_contiguous == expected.flags.f_contiguous
    assert proposal.outputs.flags.c_contiguous == expected.flags.c_contiguous
    # training with them gives the machine of training without them
    fast = Boosting(trainer, LogitLoss()).train(x, targets, 5)
    plain = LUTTrainer(12, 3, style, missing=missing)
    plain.propose = lambda prepared, state: type(proposal)(plain._fit(prepared, state.gradient))
    slow = Boosting(plain, LogitLoss()).train(x, targets, 5)
    assert np.array_equal(fast.weights, slow.weights)
    assert np.array_equal(fast(x), slow(x))
