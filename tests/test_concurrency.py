"""Concurrency: threads predicting and training at once, processes writing model files side by side."""
from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from bob_boost import (BoostedMachine, Boosting, ExponentialLoss, LogitLoss, LUTTrainer, SAMMETrainer, SoftmaxLoss,
                       StumpTrainer, TreeTrainer)
from bob_boost.weak_trainers.multiclass import CostSensitiveTreeTrainer

RNG = np.random.default_rng(11)
X = RNG.normal(size=(3000, 6))
LABELS = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)
SIGNED = np.where(X[:, 0] + X[:, 2] > 0, 1.0, -1.0)
VALUES = np.clip(np.round(X * 2 + 4), 0, 7)


#: How to train one machine of each kind, and the features it reads.
MACHINES = {
    "stumps": lambda: (Boosting(StumpTrainer(), ExponentialLoss()).train(X, SIGNED, 30), X),
    "luts": lambda: (Boosting(LUTTrainer(8, 3, "independent"), LogitLoss()).train(
        VALUES, np.where(np.eye(3)[LABELS] > 0, 1.0, -1.0), 15), VALUES),
    "gradient trees": lambda: (Boosting(TreeTrainer(max_depth=3), SoftmaxLoss(), learning_rate=0.3).train(
        X, LABELS, 10), X),
    "samme trees": lambda: (SAMMETrainer(CostSensitiveTreeTrainer(max_depth=2), 10, number_of_classes=3).train(
        X, LABELS), X),
}


@pytest.mark.parametrize("kind", list(MACHINES))
def test_threads_predicting_with_one_machine_agree_with_one_thread(kind):
    machine, features = MACHINES[kind]()
    expected = machine.decision_scores(features)
    chunks = np.array_split(np.arange(features.shape[0]), 16)
    with ThreadPoolExecutor(8) as pool:  # each call may itself use the machine's threads
        results = list(pool.map(lambda rows: machine.decision_scores(features[rows]), chunks * 2))
    for rows, scores in zip(chunks * 2, results):
        np.testing.assert_array_equal(scores, expected[rows])


def test_threads_training_at_once_give_the_serial_models():
    def train(seed: int) -> BoostedMachine:
        rng = np.random.default_rng(seed)
        rows = rng.choice(X.shape[0], 1500, replace=False)
        return Boosting(TreeTrainer(max_depth=3, n_threads=2), SoftmaxLoss(), learning_rate=0.3).train(
            X[rows], LABELS[rows], 8)
    serial = [train(seed) for seed in range(6)]
    with ThreadPoolExecutor(6) as pool:
        parallel = list(pool.map(train, range(6)))
    for one, other in zip(serial, parallel):
        np.testing.assert_array_equal(one.weights, other.weights)
        assert one.weak_machines == other.weak_machines


_WRITER = """
import sys
import numpy as np
from bob_boost import Boosting, ExponentialLoss, StumpTrainer
seed, path = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(seed)
x = rng.normal(size=(2000, 5))
t = np.where(x[:, seed % 5] > 0, 1.0, -1.0)
for _ in range(3):  # save several times: writers overlap in time and directory
    Boosting(StumpTrainer(), ExponentialLoss()).train(x, t, 40).save(path)
"""


@pytest.mark.long
def test_processes_writing_model_files_side_by_side(tmp_path: Path):
    paths = [tmp_path / f"model{seed}.hdf5" for seed in range(4)]
    writers = [subprocess.Popen([sys.executable, "-c", _WRITER, str(seed), str(path)])
               for seed, path in enumerate(paths)]
    assert [writer.wait(timeout=300) for writer in writers] == [0] * 4
    for seed, path in enumerate(paths):
        rng = np.random.default_rng(seed)
        x = rng.normal(size=(2000, 5))
        expected = Boosting(StumpTrainer(), ExponentialLoss()).train(x, np.where(x[:, seed % 5] > 0, 1.0, -1.0), 40)
        loaded = BoostedMachine.load(path)
        np.testing.assert_array_equal(loaded.weights, expected.weights)
        assert loaded.weak_machines == expected.weak_machines
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)  # no temporary left
