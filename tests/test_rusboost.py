"""RUSBoost (imbalanced-learn's form): SAMME whose every round's weak learner sees a random under-sample of
the larger classes; with nothing to cut it is SAMME itself."""
from __future__ import annotations

import numpy as np
import pytest

from bob_boost import CostSensitiveTreeTrainer, RUSBoostTrainer, SAMMETrainer
from bob_boost.boosting.partitions import LocalRows
from bob_boost.trainers.partitioned_classes import PartitionedMultiClassBoosting


def _imbalanced(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    labels = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.8, size=n) > 1.4).astype(int)
    labels[(labels == 0) & (X[:, 2] > 1.2)] = 2  # a third, middle-sized class
    return X, labels


class _Recorder:
    """A weak trainer that records, every round, how many rows of each class have weight."""

    def __init__(self, inner):
        self.inner, self.counts = inner, []

    def prepare(self, features):
        return self.inner.prepare(features)

    def train(self, *arguments):
        return self.inner.train(*arguments)

    def propose(self, prepared, state):
        self.counts.append(np.bincount(state.labels[state.sample_weights > 0], minlength=3))
        return self.inner.propose(prepared, state)


def test_every_round_sees_every_class_cut_to_the_smallest_over_the_ratio():
    X, labels = _imbalanced()
    sizes = np.bincount(labels)
    for ratio in (1.0, 0.5):
        recorder = _Recorder(CostSensitiveTreeTrainer(2))
        RUSBoostTrainer(recorder, number_of_rounds=8, ratio=ratio, random_state=1).train(X, labels)
        expected = np.minimum(sizes, round(sizes.min() / ratio))
        assert len(recorder.counts) >= 2
        for counts in recorder.counts:
            np.testing.assert_array_equal(counts, expected)


def test_nothing_to_cut_is_samme_and_the_seed_decides_the_draws():
    X, labels = _imbalanced()
    samme = SAMMETrainer(CostSensitiveTreeTrainer(2), number_of_rounds=10).train(X, labels)
    uncut = RUSBoostTrainer(CostSensitiveTreeTrainer(2), number_of_rounds=10, ratio=0.01).train(X, labels)
    np.testing.assert_array_equal(uncut.decision_scores(X), samme.decision_scores(X))
    first = RUSBoostTrainer(CostSensitiveTreeTrainer(2), number_of_rounds=10, random_state=4).train(X, labels)
    again = RUSBoostTrainer(CostSensitiveTreeTrainer(2), number_of_rounds=10, random_state=4).train(X, labels)
    other = RUSBoostTrainer(CostSensitiveTreeTrainer(2), number_of_rounds=10, random_state=5).train(X, labels)
    np.testing.assert_array_equal(first.decision_scores(X), again.decision_scores(X))
    assert not np.array_equal(first.decision_scores(X), other.decision_scores(X))


def test_partitions_draw_the_in_memory_under_samples():
    X, labels = _imbalanced(n=900)
    trainer = RUSBoostTrainer(CostSensitiveTreeTrainer(2), number_of_rounds=6, random_state=2)
    memory = trainer.train(X, labels)
    for rows in ([900], [300, 1, 599]):
        partitioned = PartitionedMultiClassBoosting(trainer).train_on(LocalRows(rows), X, labels)
        assert partitioned.weak_machines == memory.weak_machines
        np.testing.assert_allclose(partitioned.weights, memory.weights, rtol=1e-12)


def test_the_recipe_and_its_bad_input():
    from bob_boost.boosting.sampling import Sampling
    from bob_boost.recipes import make_recipe
    recipe = make_recipe("rusboost", number_of_classes=3, random_state=7)
    assert recipe.trainer.sampling.method == "undersample" and recipe.trainer.sampling.random_state == 7
    with pytest.raises(ValueError, match="sampling: RUSBoost under-samples every class"):
        make_recipe("rusboost", number_of_classes=3, sampling=Sampling(subsample=0.5))
    for ratio in (1.5, 0.0):
        with pytest.raises(ValueError, match="ratio"):
            RUSBoostTrainer(ratio=ratio)
