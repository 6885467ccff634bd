"""The one training loop and its weak-trainer protocol."""
import weakref

import numpy as np
import pytest

from bob_boost import (AdaBoostDBTrainer, BAdaCostTrainer, Boosting, CostSensitiveTreeTrainer, ExponentialLoss,
                       LogitLoss, LUTTrainer, MultiClassLUTTrainer, MultiClassStumpTrainer, SAMMETrainer, StumpMachine,
                       StumpTrainer)
from bob_boost.boosting import loop
from bob_boost.boosting.algorithms import GradientBoosting, uses_propose
from bob_boost.boosting.protocol import Proposal, RoundState, WeakTrainer


@pytest.fixture
def data():
    rng = np.random.default_rng(11)
    features = rng.normal(size=(160, 5))
    noise = rng.normal(scale=0.7, size=160)
    signed = np.where(features[:, 0] - features[:, 2] + noise > 0, 1.0, -1.0)
    classes = (features[:, 0] + noise > 0).astype(int) + (features[:, 1] - noise > 0.3)
    return features, signed, classes


@pytest.mark.parametrize("trainer", [StumpTrainer(), LUTTrainer(4), CostSensitiveTreeTrainer(),
                                     MultiClassStumpTrainer(), MultiClassLUTTrainer(4)], ids=lambda t: type(t).__name__)
def test_the_built_in_weak_trainers_follow_the_protocol(trainer):
    assert isinstance(trainer, WeakTrainer) and uses_propose(trainer)


def test_propose_gives_what_train_gives(data):
    features, signed, classes = data
    gradient = ExponentialLoss().loss_gradient(signed[:, None], np.zeros((signed.size, 1)))
    stumps = StumpTrainer()
    prepared = stumps.prepare(features)
    proposal = stumps.propose(prepared, RoundState(features=features, scores=np.zeros((160, 1)), gradient=gradient))
    assert repr(proposal.machine) == repr(stumps.train(features, gradient)) and proposal.weight is None
    tree = CostSensitiveTreeTrainer(max_depth=2)
    weights = np.full(160, 1 / 160)
    loss_matrix = 1.0 - np.eye(3)
    state = RoundState(features=features, scores=np.zeros((160, 3)), labels=classes, sample_weights=weights,
                       loss_matrix=loss_matrix, feature_subset=np.array([0, 1, 3]))
    grown = tree.propose(tree.prepare(features), state).machine
    expected = tree.train(features, classes, weights, loss_matrix, [3, 1, 0])
    assert grown._state() == expected._state()


def test_a_weak_trainer_of_bob_boost_0_1_still_plugs_in(data):
    features, signed, _ = data

    class FeatureSigns:  # only train(features, loss_gradient), no prepare, no propose
        def __init__(self):
            self.calls = 0

        def train(self, features, loss_gradient):
            self.calls += 1
            return StumpMachine(0.0, 1.0, (self.calls - 1) % 3)

    machine = Boosting(FeatureSigns(), ExponentialLoss()).train(features, signed, 3)
    assert [m.index for m in machine.weak_machines] == [0, 1, 2]


def test_a_subclass_that_overrides_train_keeps_its_train(data):
    features, signed, _ = data
    calls = []

    class CountingStumps(StumpTrainer):
        def train(self, features, loss_gradient):
            calls.append(1)
            return super().train(features, loss_gradient)

    reference = Boosting(StumpTrainer(), LogitLoss()).train(features, signed, 4)
    counted = Boosting(CountingStumps(), LogitLoss()).train(features, signed, 4)
    assert len(calls) == 4
    np.testing.assert_array_equal(counted.weights, reference.weights)


def test_a_proposal_with_a_weight_skips_the_step_rule(data):
    features, signed, _ = data

    class FixedWeight(StumpTrainer):
        def propose(self, prepared, state):
            return Proposal(super().propose(prepared, state).machine, weight=0.125, perfect=state.round_index == 2)

    machine = Boosting(FixedWeight(), ExponentialLoss()).train(features, signed, 10)
    assert len(machine) == 3  # the third proposal says it is perfect: added, then training stops
    np.testing.assert_array_equal(machine.weights, np.full((3, 1), 0.125))


def test_no_proposal_stops_training(data):
    features, signed, _ = data

    class GivesUp(StumpTrainer):
        def propose(self, prepared, state):
            return None if state.round_index == 1 else super().propose(prepared, state)

    assert len(Boosting(GivesUp(), ExponentialLoss()).train(features, signed, 10)) == 1


def test_a_round_does_not_hold_the_last_rounds_training_outputs(data):
    # a round's outputs and leaves are arrays of every training row: holding the last round's while the next
    # is made would raise training's peak memory by their size
    features, signed, _ = data

    class Watched(StumpTrainer):
        last = None
        held = []

        def propose(self, prepared, state):
            self.held.append(self.last is not None and self.last() is not None)
            proposal = super().propose(prepared, state)
            outputs = proposal.machine.forward(features)
            self.last = weakref.ref(outputs)
            return Proposal(proposal.machine, outputs=outputs)

    trainer = Watched()
    assert len(Boosting(trainer, ExponentialLoss()).train(features, signed, 4)) == 4
    assert trainer.held == [False] * 4


def test_continuing_a_machine_equals_training_it_at_once(data):
    features, signed, _ = data
    at_once = Boosting(StumpTrainer(), LogitLoss()).train(features, signed, 12)
    first = Boosting(StumpTrainer(), LogitLoss()).train(features, signed, 5)
    continued = Boosting(StumpTrainer(), LogitLoss()).train(features, signed, 7, boosted_machine=first)
    assert continued is first
    np.testing.assert_array_equal(continued.weights, at_once.weights)
    assert [repr(m) for m in continued.weak_machines] == [repr(m) for m in at_once.weak_machines]


def test_the_loop_runs_the_generic_configuration_directly(data):
    features, signed, _ = data
    loss = ExponentialLoss()
    targets = loss.check_targets(signed)
    direct = loop.run(GradientBoosting(loss, StumpTrainer(), targets), StumpTrainer(), features, 6)
    np.testing.assert_array_equal(direct.weights, Boosting(StumpTrainer(), loss).train(features, signed, 6).weights)


def test_samme_and_badacost_share_the_loop(data):
    """SAMME is BAdaCost with the SAMME cost matrix, round for round."""
    features, _, classes = data
    samme = SAMMETrainer(number_of_rounds=6).train(features, classes)
    k = 3
    badacost = BAdaCostTrainer((1.0 - np.eye(k)) / (k * (k - 1)), number_of_rounds=6).train(features, classes)
    np.testing.assert_array_equal(samme.weights, badacost.weights)
    assert [m._state() for m in samme.weak_machines] == [m._state() for m in badacost.weak_machines]


def test_every_trainer_in_memory_and_on_a_cluster_runs_the_one_loop():
    """No module but the loop walks the rounds: the callbacks are asked whether to stop in one place only."""
    from pathlib import Path

    import bob_boost
    package = Path(bob_boost.__file__).parent
    askers = sorted(str(path.relative_to(package)) for path in package.rglob("*.py")
                    if "stop_requested(" in path.read_text() and path.name != "callbacks.py")
    assert askers == ["boosting/loop.py"]


def test_a_cluster_trainer_reports_its_rounds_as_the_loop_does(client, caplog):
    """The distributed trainers' rounds are the loop's: its log lines, and a callback asked after every round
    (with scores None: they stay on the workers)."""
    da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
    from bob_boost.dask import DaskBoosting, DaskCostSensitiveBoosting, DaskMultiClassBoosting

    rng = np.random.default_rng(12)
    features = rng.integers(0, 6, size=(300, 3))
    signed = np.where(features[:, 0] + rng.integers(0, 3, 300) > 3, 1.0, -1.0)
    classes = (features[:, 0] + features[:, 1]) % 3
    dX = da.from_array(features, chunks=(100, 3))
    trainers = [(DaskBoosting(LogitLoss(), client=client), signed, "DaskBoosting"),
                (DaskCostSensitiveBoosting(AdaBoostDBTrainer(2.0, 1.0), client=client), signed, "AdaBoostDB"),
                (DaskMultiClassBoosting(SAMMETrainer(CostSensitiveTreeTrainer(max_depth=2)), client=client), classes,
                 "SAMMETrainer")]
    for trainer, targets, name in trainers:
        seen = []
        with caplog.at_level("INFO", logger="bob_boost.boosting.loop"):
            caplog.clear()
            machine = trainer.train(dX, targets, 3, callback=lambda r, m, s: seen.append((r, len(m), s)))
        assert seen == [(r, r + 1, None) for r in range(len(machine))] and len(machine) == 3
        assert f"{name} round 3/3" in caplog.text

