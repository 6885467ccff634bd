"""One thread against two: gradient trees of few features, bob_boost's and LightGBM's, side by side.

Each case trains ``--rounds`` rounds of 31-leaf squared-error trees (learning rate 0.1, 20 samples a leaf,
leaf-wise) on ``N x F`` uniform features with a target ``x0 + sin(3 x1)`` plus unit noise:

- bob_boost ``BoostingRegressor(weak_learner="tree", n_estimators=rounds, early_stopping=False, n_threads=t)``,
  which grows a tree on a team of its threads only where the tree has dense features or rows enough
  (``bob_boost.weak_trainers.tree_parts.team_shares``);
- LightGBM ``LGBMRegressor(n_estimators=rounds, n_jobs=t)`` (its defaults are the same trees),

for ``t`` 1 and 2. A row gives each fit's time a round (the fastest of ``--repeats``, the four fits of a case
interleaved, after one untimed fit of each) and the two-thread time over the one-thread time.

Usage::

    python bench/bench_threads.py [--rounds 50] [--repeats 3] [--cases 20000x6,160000x6,20000x28]
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

from _machine import cpu_model  # bench/, beside this script

CASES = "10000x6,20000x6,40000x6,160000x6,20000x8,40000x8,160000x8,20000x12,80000x12,20000x16,20000x28,80000x28"


def _data(rows: int, features: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    x = rng.uniform(-2, 2, size=(rows, features))
    return x, x[:, 0] + np.sin(3 * x[:, 1]) + rng.normal(size=rows)


def _models(rounds: int) -> dict:
    from lightgbm import LGBMRegressor

    from bob_boost.sklearn import BoostingRegressor
    models = {}
    for threads in (1, 2):
        models["bob_boost", threads] = lambda t=threads: BoostingRegressor(
            weak_learner="tree", n_estimators=rounds, early_stopping=False, n_threads=t)
        models["LightGBM", threads] = lambda t=threads: LGBMRegressor(n_estimators=rounds, n_jobs=t, verbose=-1)
    return models


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", default=CASES, help="comma-separated ROWSxFEATURES")
    args = parser.parse_args()
    print(f"# bench_threads: {cpu_model()}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}; "
          f"{args.rounds} rounds, fastest of {args.repeats}")
    print("| rows x features | bob_boost 1 / 2 threads (ms a round) | 2 / 1 | LightGBM 1 / 2 threads (ms a round) "
          "| 2 / 1 |")
    print("|---|---:|---:|---:|---:|")
    models = _models(args.rounds)
    for case in args.cases.split(","):
        rows, features = (int(part) for part in case.split("x"))
        x, y = _data(rows, features)
        for make in models.values():  # untimed: compilation, imports
            make().fit(x[:2000], y[:2000])
        best = {key: np.inf for key in models}
        for _ in range(args.repeats):
            for key, make in models.items():
                model = make()
                start = time.perf_counter()
                model.fit(x, y)
                best[key] = min(best[key], (time.perf_counter() - start) / args.rounds * 1e3)
        bob, lgb = (best["bob_boost", 1], best["bob_boost", 2]), (best["LightGBM", 1], best["LightGBM", 2])
        print(f"| {rows:,} x {features} | {bob[0]:.2f} / {bob[1]:.2f} | {bob[1] / bob[0]:.2f} | "
              f"{lgb[0]:.2f} / {lgb[1]:.2f} | {lgb[1] / lgb[0]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
