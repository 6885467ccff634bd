"""The model owns its meaning: baseline, decision rule, staged scores, callbacks, probability links."""
import h5py
import numpy as np
import pytest
from scipy.special import expit

import bob_boost
from bob_boost import (AdaBoostDBTrainer, BAdaCostTrainer, BoostedMachine, Boosting, CostSensitiveAdaBoostTrainer,
                       ExponentialLoss, LogitLoss, LUTTrainer, SAMMETrainer, SquaredLoss, StumpMachine, StumpTrainer,
                       TangentialLoss)
from bob_boost.exceptions import BobBoostError, DataFormatError, ModelFormatError


@pytest.fixture
def data():
    rng = np.random.default_rng(7)
    features = rng.normal(size=(120, 4))
    targets = np.where(features[:, 0] - 0.5 * features[:, 1] + 0.3 * rng.normal(size=120) > 0, 1.0, -1.0)
    return features, targets


def _stump_machine(**kwargs) -> BoostedMachine:
    machine = BoostedMachine(**kwargs)
    machine.add_weak_machine(StumpMachine(0.0, 1.0, 0), 0.5)
    machine.add_weak_machine(StumpMachine(1.0, -1.0, 1), 0.25)
    return machine


# -- baseline -----------------------------------------------------------------------------
def test_baseline_is_added_to_every_score_and_saved(tmp_path):
    features = np.array([[-1.0, 0.0], [1.0, 2.0]])
    plain = _stump_machine()
    shifted = _stump_machine(baseline=100.0, decision_rule="identity")
    np.testing.assert_array_equal(shifted.decision_scores(features), 100.0 + plain.decision_scores(features))
    np.testing.assert_array_equal(shifted.predict(features), shifted(features))
    path = tmp_path / "m.hdf5"
    shifted.save(path)
    loaded = BoostedMachine.load(path)
    np.testing.assert_array_equal(loaded.baseline, [100.0])
    assert loaded.decision_rule == "identity"
    np.testing.assert_array_equal(loaded(features), shifted(features))


def test_a_bob_style_classifier_file_gets_no_new_items(tmp_path):
    path = tmp_path / "m.hdf5"
    _stump_machine().save(path)
    with h5py.File(path, "r") as h5:
        assert "Baseline" not in h5 and "DecisionRule" not in h5.attrs
    loaded = BoostedMachine.load(path)
    assert loaded.decision_rule == "sign"
    np.testing.assert_array_equal(loaded.baseline, [0.0])


@pytest.mark.parametrize("value, message", [([1.0, 2.0], "baseline: expected a scalar or 1 values"),
                                            (np.inf, "baseline: must be finite")])
def test_bad_baseline(value, message):
    with pytest.raises(ValueError, match=message):
        BoostedMachine(number_of_outputs=1, baseline=value)


def test_baseline_of_the_wrong_size_in_a_file(tmp_path):
    path = tmp_path / "m.hdf5"
    _stump_machine(baseline=1.0).save(path)
    with h5py.File(path, "r+") as h5:
        del h5["Baseline"]
        h5.create_dataset("Baseline", data=np.zeros(3))
    with pytest.raises(ModelFormatError, match="Baseline has shape"):
        BoostedMachine.load(path)


# -- decision rules --------------------------------------------------------------------------
def test_decision_rules_give_the_documented_predictions():
    scores = np.array([[0.5, -1.0, 2.0], [3.0, 0.0, 3.0]])
    assert bob_boost.decision.labels_from_scores("argmax", scores).tolist() == [2, 0]
    assert bob_boost.decision.labels_from_scores("sign", scores[:, :1]).tolist() == [1, 1]
    assert bob_boost.decision.labels_from_scores("sign", -scores[:, :1]).tolist() == [-1, -1]
    np.testing.assert_array_equal(bob_boost.decision.labels_from_scores("identity", scores), scores)
    # C* = [[-1, 1], [4, -4]]: expected costs (-f0 + f1, 4 f0 - 4 f1); class 0 wins when f0 > f1
    costs = np.array([[0.0, 1.0], [4.0, 0.0]])
    two = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert bob_boost.decision.labels_from_scores("cost_sensitive", two, costs).tolist() == [0, 1]
    assert bob_boost.decision.class_indices_from_scores("sign", np.array([[-2.0], [2.0]])).tolist() == [0, 1]
    with pytest.raises(ValueError, match="predicts values, not classes"):
        bob_boost.decision.class_indices_from_scores("identity", scores)


@pytest.mark.parametrize("kwargs, message", [
    (dict(decision_rule="vote"), "decision_rule: must be one of"),
    (dict(number_of_outputs=3, decision_rule="sign"), "'sign' needs one output"),
    (dict(number_of_outputs=2, decision_rule="cost_sensitive"), "'cost_sensitive' goes with a cost matrix"),
    (dict(cost_matrix=[[0, 1], [1, 0]], decision_rule="argmax"), "'cost_sensitive' goes with a cost matrix"),
])
def test_bad_decision_rule(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BoostedMachine(**kwargs)


def test_a_damaged_decision_rule_in_a_file(tmp_path):
    path = tmp_path / "m.hdf5"
    _stump_machine(decision_rule="identity").save(path)
    with h5py.File(path, "r+") as h5:
        h5.attrs["DecisionRule"] = "argmax"  # one output: argmax is valid; try an unknown one
        h5.attrs["DecisionRule"] = "majority"
    with pytest.raises(ModelFormatError, match="DecisionRule: must be one of"):
        BoostedMachine.load(path)


def test_losses_supply_the_decision_rule(data):
    features, targets = data
    assert Boosting(StumpTrainer(), ExponentialLoss()).train(features, targets, 3).decision_rule == "sign"
    regression = Boosting(StumpTrainer(), SquaredLoss()).train(features, 5.0 + features[:, 0], 3)
    assert regression.decision_rule == "identity" and not regression.is_classifier
    np.testing.assert_array_equal(regression.predict(features), regression(features))
    one_vs_rest = np.where(np.arange(3) == (features[:, :1] > 0).sum(axis=1, keepdims=True), 1.0, -1.0)
    lut = Boosting(LUTTrainer(4, 3), LogitLoss()).train((features > 0).astype(int) + (features > 1), one_vs_rest, 3)
    assert lut.decision_rule == "argmax"
    assert BAdaCostTrainer([[0, 1, 2], [1, 0, 1], [2, 1, 0]], number_of_rounds=2).train(
        features, (features[:, 0] > 0).astype(int) + (features[:, 1] > 0)).decision_rule == "cost_sensitive"


# -- staged scores -----------------------------------------------------------------------
def test_staged_scores_follow_the_rounds(data):
    features, targets = data
    machine = Boosting(StumpTrainer(), LogitLoss()).train(features, targets, 12)
    machine.baseline = -0.25
    staged = list(machine.staged_decision_scores(features))
    assert len(staged) == len(machine) == 12
    np.testing.assert_array_equal(staged[-1], machine.decision_scores(features))
    for rounds in (1, 5):
        truncated = BoostedMachine(baseline=-0.25)
        for weak, weight in zip(machine.weak_machines[:rounds], machine.weights[:rounds]):
            truncated.add_weak_machine(weak, weight)
        np.testing.assert_array_equal(staged[rounds - 1], truncated.decision_scores(features))
    assert staged[0] is not staged[1]


def test_staged_scores_validate_before_the_first_round(data):
    machine = Boosting(StumpTrainer(), ExponentialLoss()).train(*data, 3)
    with pytest.raises(ValueError, match="features: the machine was trained on 4 features"):
        machine.staged_decision_scores(np.zeros((2, 3)))
    assert list(BoostedMachine(number_of_outputs=1).staged_decision_scores(np.zeros((2, 3)))) == []


# -- callbacks -----------------------------------------------------------------------------
def _stopper(after: int, seen: list):
    def callback(round_index, machine, scores):
        seen.append((round_index, len(machine), np.array(scores)))
        return len(machine) >= after
    return callback


@pytest.mark.parametrize("make", [
    lambda: Boosting(StumpTrainer(), ExponentialLoss()),
    lambda: AdaBoostDBTrainer(1.0, 2.0),
    lambda: CostSensitiveAdaBoostTrainer(1.0, 2.0),
])
def test_binary_trainers_stop_when_the_callback_says_so(data, make):
    features, targets = data
    seen = []
    machine = make().train(features, targets, 20, callback=_stopper(4, seen))
    assert len(machine) == 4
    assert [entry[:2] for entry in seen] == [(0, 1), (1, 2), (2, 3), (3, 4)]
    np.testing.assert_allclose(seen[-1][2], machine.decision_scores(features), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("make", [lambda: SAMMETrainer(number_of_rounds=20),
                                  lambda: BAdaCostTrainer([[0, 1, 2], [1, 0, 1], [2, 1, 0]], number_of_rounds=20)])
def test_multiclass_trainers_stop_when_the_callback_says_so(data, make):
    features, _ = data
    noise = np.random.default_rng(3).normal(size=features.shape[0])
    labels = (features[:, 0] + noise > 0).astype(int) + (features[:, 1] - noise > 0.5)
    seen = []
    machine = make().train(features, labels, callback=_stopper(3, seen))
    assert len(machine) == 3 and len(seen) == 3
    np.testing.assert_allclose(seen[-1][2], machine.decision_scores(features), rtol=1e-12, atol=1e-12)


def test_a_callback_that_is_not_callable(data):
    with pytest.raises(TypeError, match="callback: expected a callable"):
        Boosting(StumpTrainer(), ExponentialLoss()).train(*data, 3, callback=3)
    with pytest.raises(TypeError, match="callback: expected a callable"):
        AdaBoostDBTrainer(1.0, 1.0).train(*data, 3, callback="progress")


# -- probability links ---------------------------------------------------------------------
def test_inverse_links():
    scores = np.array([[-1.0], [0.0], [2.0]])
    np.testing.assert_allclose(ExponentialLoss().inverse_link(scores)[:, 1], expit(2 * scores[:, 0]))
    np.testing.assert_allclose(LogitLoss().inverse_link(scores)[:, 1], expit(scores[:, 0]))
    np.testing.assert_allclose(LogitLoss().inverse_link(scores).sum(axis=1), 1.0)
    several = LogitLoss().inverse_link(np.array([[0.0, 0.0, np.log(2.0)]]))
    np.testing.assert_allclose(several, [[0.5 / (1 + 2 / 3), 0.5 / (1 + 2 / 3), (2 / 3) / (1 + 2 / 3)]])
    assert ExponentialLoss().has_probabilities and not TangentialLoss().has_probabilities
    with pytest.raises(NotImplementedError, match="TangentialLoss defines no class probabilities"):
        TangentialLoss().inverse_link(scores)
    assert not SquaredLoss().has_probabilities


def test_the_library_errors_share_a_base_and_stay_value_errors():
    for error in (ModelFormatError, DataFormatError):
        assert issubclass(error, BobBoostError) and issubclass(error, ValueError)


def test_bad_arguments_raise_the_library_errors(data):
    """The command line tells a user's mistake (a library error, one line) from a bug (a traceback) by type."""
    from bob_boost.exceptions import InvalidTypeError, InvalidValueError

    with pytest.raises(InvalidValueError, match="decision_rule: must be one of"):
        BoostedMachine(decision_rule="vote")
    with pytest.raises(InvalidTypeError, match="number_of_rounds: expected an integer"):
        Boosting(StumpTrainer(), ExponentialLoss()).train(*data, number_of_rounds=2.5)
    with pytest.raises(InvalidValueError, match="features: contains NaN"):
        Boosting(StumpTrainer(), ExponentialLoss()).train(np.full((3, 2), np.nan), [1, -1, 1])
    assert issubclass(InvalidValueError, ValueError) and issubclass(InvalidTypeError, TypeError)
    assert issubclass(InvalidValueError, BobBoostError) and issubclass(InvalidTypeError, BobBoostError)


def test_truncate_keeps_the_first_rounds_and_checks_its_argument():
    x = np.linspace(-3, 3, 60).reshape(30, 2)
    t = np.where(np.sin(3 * x[:, 0]) > 0, 1.0, -1.0)
    machine = Boosting(StumpTrainer(), SquaredLoss()).train(x, t, 8, baseline=0.25)
    staged = list(machine.staged_decision_scores(x))
    machine.truncate(3)
    assert len(machine) == 3
    np.testing.assert_array_equal(machine.decision_scores(x), staged[2])
    # the rounds alone, as the trainer accumulated them from 0
    np.testing.assert_array_equal(machine.decision_scores(x, include_baseline=False) + 0.0,
                                  sum((w * m.forward(x) for m, w in zip(machine.weak_machines, machine.weights)),
                                      np.zeros((30, 1))))
    for bad in (-1, 4, 1.5, True):
        with pytest.raises(ValueError, match="number_of_rounds"):
            machine.truncate(bad)
    machine.truncate(0)
    assert len(machine) == 0
    np.testing.assert_array_equal(machine.decision_scores(x), np.full((30, 1), 0.25))
