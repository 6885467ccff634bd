"""A small end-to-end run: boost stumps on generated data and report accuracy.

Run with ``python -m bob_boost.demo``; it needs no data files.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from .losses import ExponentialLoss
from .trainers import Boosting, StumpTrainer


def make_rings(number_of_samples: int, random_state: int) -> tuple[np.ndarray, np.ndarray]:
    """Two noisy concentric classes in 10-D: +1 inside radius 3.2, -1 outside."""
    rng = np.random.default_rng(random_state)
    features = rng.normal(size=(number_of_samples, 10))
    radius = np.sqrt((features[:, :4] ** 2).sum(axis=1))
    targets = np.where(radius < 3.2, 1.0, -1.0)
    flip = rng.random(number_of_samples) < 0.05
    targets[flip] *= -1
    return features, targets


def main(argv: list[str] | None = None) -> int:
    """Train on 4000 generated samples, test on 4000 more, print the accuracies."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=200, help="number of boosting rounds")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated data")
    args = parser.parse_args(argv)
    train_x, train_t = make_rings(4000, args.seed)
    test_x, test_t = make_rings(4000, args.seed + 1)
    start = time.perf_counter()
    machine = Boosting(StumpTrainer(), ExponentialLoss()).train(train_x, train_t, args.rounds)
    seconds = time.perf_counter() - start
    print(f"trained {len(machine)} stumps with the exponential loss in {seconds:.2f} s")
    print(f"train accuracy: {np.mean(machine.predict(train_x) == train_t):.2%}")
    print(f"test accuracy:  {np.mean(machine.predict(test_x) == test_t):.2%}  (5% of the labels are noise)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
