"""First-call cost of the compiled kernels: one small stump, LUT, gradient-tree and SAMME training with prediction.

Run it with an empty numba cache (cold: the kernels compile), then again (warm: they load from the cache)::

    export NUMBA_CACHE_DIR=$(mktemp -d)
    python bench/bench_compile_time.py    # cold
    python bench/bench_compile_time.py    # warm
"""
import time

START = time.perf_counter()

import numpy as np  # noqa: E402  (the imports are part of what is timed)

import bob_boost  # noqa: E402


def main() -> None:
    imported = time.perf_counter()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2000, 5))
    y = np.where(x[:, 0] > 0, 1.0, -1.0)
    classes = (x[:, 1] > 0).astype(int)
    stumps = bob_boost.Boosting(bob_boost.StumpTrainer(max_bins=64), bob_boost.ExponentialLoss()).train(x, y, 3)
    stumps.decision_scores(x)
    lut = bob_boost.LUTTrainer(8, 2)
    bob_boost.Boosting(lut, bob_boost.LogitLoss(), step_rule="newton").train(
        rng.integers(0, 8, size=(2000, 4)), np.where(rng.random((2000, 2)) < 0.5, 1.0, -1.0), 3)
    trees = bob_boost.Boosting(bob_boost.TreeTrainer(max_depth=2), bob_boost.SoftmaxLoss()).train(x, classes, 2)
    trees.decision_scores(x)
    samme = bob_boost.SAMMETrainer(weak_learner=bob_boost.CostSensitiveTreeTrainer(max_depth=2), number_of_rounds=2)
    samme.train(x, classes).decision_scores(x)
    print(f"import {imported - START:.2f} s, first trainings and predictions {time.perf_counter() - imported:.2f} s")


if __name__ == "__main__":
    main()
