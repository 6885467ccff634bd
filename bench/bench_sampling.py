"""Stochastic boosting on MNIST: training time and test accuracy of sampled rounds against every row and column.

Each configuration trains ``BoostingClassifier(weak_learner="tree", loss="softmax", n_estimators=ROUNDS,
n_threads=2, early_stopping=False)`` (the tree defaults: 31 leaves grown leaf-wise, 20 samples a leaf, 256
bins, learning rate 0.1) on MNIST's 60,000 training images (784 pixels, 10 classes, one tree per class a
round) and scores the 10,000 test images:

- ``full``: every row and column (the default);
- ``subsample=0.5, colsample_bytree=0.5``: half the rows (drawn every round) and half the columns a round;
- ``goss``: ``sampling="goss"`` with LightGBM's rates (``top_rate=0.2``, ``other_rate=0.1``);
- with ``--all`` also ``subsample=0.5`` and ``colsample_bytree=0.5`` alone.

Times are the fastest of ``--repeats`` fits, the configurations interleaved, after one untimed fit of 2
rounds of each (compilation stays out). The data are ``../shared/data/mnist/mnist_data.hdf5`` (bob's layout).

Usage::

    python bench/bench_sampling.py [--rounds 100] [--repeats 3] [--all] [--data-dir DIR]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from _machine import cpu_model  # bench/, beside this script

ROOT = Path(__file__).resolve().parents[1]



def _mnist(data_dir: Path):
    import h5py
    with h5py.File(data_dir / "mnist" / "mnist_data.hdf5", "r") as h5:
        return tuple(h5[f"{part}/{field}"][()] for part in ("train", "test") for field in ("data", "labels"))


CONFIGURATIONS = {
    "full": {},
    "subsample=0.5, colsample_bytree=0.5": {"subsample": 0.5, "colsample_bytree": 0.5},
    "goss (0.2, 0.1)": {"sampling": "goss"},
}
SINGLE = {"subsample=0.5": {"subsample": 0.5}, "colsample_bytree=0.5": {"colsample_bytree": 0.5}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--all", action="store_true", help="also each sampling alone")
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    arguments = parser.parse_args()
    from bob_boost.sklearn import BoostingClassifier

    x, y, x_test, y_test = _mnist(arguments.data_dir)
    configurations = dict(CONFIGURATIONS, **(SINGLE if arguments.all else {}))

    def estimator(rounds: int, options: dict) -> BoostingClassifier:
        return BoostingClassifier(weak_learner="tree", loss="softmax", n_estimators=rounds, n_threads=2,
                                  early_stopping=False, **options)

    for options in configurations.values():
        estimator(2, options).fit(x[:5000], y[:5000])
    times = {name: [] for name in configurations}
    accuracy = {}
    for _ in range(arguments.repeats):
        for name, options in configurations.items():
            start = time.perf_counter()
            fitted = estimator(arguments.rounds, options).fit(x, y)
            times[name].append(time.perf_counter() - start)
            accuracy[name] = float(np.mean(fitted.predict(x_test) == y_test))
    print(f"# {cpu_model()}, 2 threads; MNIST 60,000 x 784, 10 classes; {arguments.rounds} rounds of 31-leaf trees; "
          f"fastest of {arguments.repeats}")
    print("| configuration | training time | vs full | test accuracy | vs full (points) |")
    print("|---|---:|---:|---:|---:|")
    full_time, full_accuracy = min(times["full"]), accuracy["full"]
    for name in configurations:
        best = min(times[name])
        print(f"| {name} | {best:.2f} s | {best / full_time:.2f}x | {100 * accuracy[name]:.2f} % | "
              f"{100 * (accuracy[name] - full_accuracy):+.2f} |")


if __name__ == "__main__":
    main()
