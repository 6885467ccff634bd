"""Saving and loading model files: bob_boost's HDF5 files against LightGBM's text model, side by side.

Models:

- ``stumps``: a machine of ``--stumps`` decision stumps (bob.learn.boosting's layout: one group of three
  scalar datasets a weak machine);
- ``trees``: ``BoostingRegressor(weak_learner="tree", n_estimators=--trees, early_stopping=False)`` on 5,000
  rows of 10 features (31-leaf trees, eight datasets a tree), and LightGBM's ``LGBMRegressor`` of as many
  trees on the same rows (``booster_.save_model`` and ``lightgbm.Booster(model_file=...)``).

Each time is the fastest of ``--repeats``, the models timed one after the other in one process; the loaded
models are checked to predict what the saved ones do.

Usage::

    python bench/bench_model_files.py [--stumps 1000] [--trees 500] [--repeats 3]
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

from _machine import cpu_model  # bench/, beside this script
from _timing import fastest


def _fastest(function, repeats: int) -> float:
    return fastest(function, repeats)[0]


def _stumps(count: int):
    from bob_boost import BoostedMachine, StumpMachine
    rng = np.random.default_rng(0)
    machine = BoostedMachine(number_of_outputs=1, number_of_features=20)
    for _ in range(count):
        machine.add_weak_machine(StumpMachine(float(rng.normal()), int(rng.choice([-1, 1])), int(rng.integers(20))),
                                 rng.random(1))
    return machine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stumps", type=int, default=1000)
    parser.add_argument("--trees", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import bob_boost
    from bob_boost import BoostedMachine
    from bob_boost.sklearn import BoostingRegressor

    rng = np.random.default_rng(0)
    features = rng.normal(size=(5000, 10))
    targets = features[:, 0] + np.sin(features[:, 1]) + rng.normal(size=5000)
    trees = BoostingRegressor(weak_learner="tree", n_estimators=args.trees, early_stopping=False).fit(features,
                                                                                                       targets)
    print(f"# bench_model_files: {cpu_model()}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}, "
          f"bob_boost from {os.path.dirname(bob_boost.__file__)}")
    print("| model | library | save (s) | load (s) | file (KB) |")
    print("|---|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as folder:
        for name, machine in ((f"{args.stumps} stumps", _stumps(args.stumps)),
                              (f"{args.trees} trees of 31 leaves", trees.machine_)):
            path = os.path.join(folder, "model.hdf5")
            save = _fastest(lambda: machine.save(path), args.repeats)
            load = _fastest(lambda: BoostedMachine.load(path), args.repeats)
            probe = rng.normal(size=(50, machine.number_of_features))
            assert np.array_equal(BoostedMachine.load(path).decision_scores(probe), machine.decision_scores(probe))
            print(f"| {name} | bob_boost | {save:.3f} | {load:.3f} | {os.path.getsize(path) / 1024:.0f} |", flush=True)
        try:
            import lightgbm
        except ImportError:
            return
        model = lightgbm.LGBMRegressor(n_estimators=args.trees, verbose=-1).fit(features, targets)
        path = os.path.join(folder, "model.txt")
        save = _fastest(lambda: model.booster_.save_model(path), args.repeats)
        load = _fastest(lambda: lightgbm.Booster(model_file=path), args.repeats)
        print(f"| {args.trees} trees of 31 leaves | LightGBM | {save:.3f} | {load:.3f} | "
              f"{os.path.getsize(path) / 1024:.0f} |")


if __name__ == "__main__":
    main()
