"""Compile the engine's largest kernels into numba's on-disk cache, for a test session started with it cold.

``tests/conftest.py`` uses it in two ways. Under pytest-xdist, each worker compiles its share of
:data:`PARTS` before its first test and waits for the other workers' shares, so that each kernel is compiled
once, by one worker, while the others compile theirs. In one process (``-n 0``, on a machine with more than
one core), this file runs in a child process while the suite's first files run, and the second core
compiles the kernels (gradient trees, quantised trees, the L-BFGS objective, the detector) that the tests
need later. Either way the tests then load them from the cache instead of compiling them (about a minute
of compiling on two cores). A kernel the tests reach first they compile themselves, as they would without
this; nothing here is checked, and a failure here only costs the time it would have saved.

It trains through the public API, on the kinds of arrays the tests use, so that the compiled signatures
are the tests'. Run it by hand to see what it compiles and how long each part takes::

    python tests/compile_kernels.py
"""
from __future__ import annotations

import sys
import time

import numpy as np


def gradient_trees() -> None:
    import bob_boost

    rng = np.random.default_rng(0)
    features = np.round(rng.normal(size=(600, 5)), 2)
    classes = (features[:, 0] > 0).astype(int) + (features[:, 1] > 0.5)
    for growth in ("levelwise", "leafwise"):
        tree = bob_boost.TreeTrainer(max_depth=3, max_leaves=6, growth=growth, multi_output="per_output")
        machine = bob_boost.Boosting(tree, bob_boost.SoftmaxLoss(), learning_rate=0.3).train(features, classes, 2)
        machine.decision_scores(features)


def distributed_trees() -> None:
    """Trees grown from histograms summed over chunks: the histogram and split kernels alone."""
    import dask.array as da
    import distributed

    import bob_boost
    from bob_boost.dask import DaskBoosting

    rng = np.random.default_rng(4)
    features = rng.integers(0, 12, size=(400, 4))
    classes = (features[:, 0] > 5).astype(int) + (features[:, 1] > 8)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None,
                                  silence_logs=50) as cluster, distributed.Client(cluster) as client:
        tree = bob_boost.TreeTrainer(max_depth=2, multi_output="per_output")
        DaskBoosting(bob_boost.SoftmaxLoss(3), client=client, weak_learner="tree", tree=tree,
                     learning_rate=0.3).train(da.from_array(features, chunks=(200, 4)), classes, 1)


def quantised_trees() -> None:
    import bob_boost

    rng = np.random.default_rng(1)
    few = np.column_stack([rng.integers(0, 16, 600), rng.integers(0, 16, 600), rng.normal(size=600).round(2)])
    for features in (np.round(rng.normal(size=(600, 4)), 2), few.astype(float)):
        gradient = rng.normal(size=(600, 1))
        bob_boost.TreeTrainer(max_depth=3, quantized_gradients=4).train(features, gradient, np.ones((600, 1)))
    # a tree per output, grown in batches: a kernel of its own, which each worker compiled otherwise
    gradient = rng.normal(size=(600, 3))
    bob_boost.TreeTrainer(max_depth=3, quantized_gradients=4).train(few.astype(float), gradient, np.ones((600, 3)))


def detector() -> None:
    from bob_boost.vision import HaarFeatures, detect, train_cascade

    rng = np.random.default_rng(2)
    window = (12, 12)
    pattern = np.zeros(window)
    pattern[3:6, 2:10] = -1.0
    faces = 0.5 + 0.1 * pattern + 0.15 * rng.standard_normal((60,) + window)
    backgrounds = [0.5 + 0.15 * rng.standard_normal((36, 36)) for _ in range(2)]
    cascade = train_cascade(faces, backgrounds, features=HaarFeatures.all(window, stride=3), max_stages=2,
                            max_rounds=3, detection_rate=0.95, random_state=3, n_threads=1)
    detect(backgrounds[0], cascade)


def line_objective() -> None:
    import itertools

    import bob_boost
    from bob_boost.boosting import steps

    rng = np.random.default_rng(3)
    features = rng.normal(size=(300, 4))
    binary = np.where(features[:, 0] + 0.3 * rng.normal(size=300) > 0, 1.0, -1.0)
    for loss in (bob_boost.ExponentialLoss(), bob_boost.LogitLoss()):
        bob_boost.Boosting(bob_boost.StumpTrainer(max_bins=None), loss).train(features, binary, 2)
    codes = rng.integers(0, 8, size=(300, 3))
    one_vs_rest = np.where(codes[:, :1] + rng.integers(0, 3, (300, 1)) > np.array([[2, 5, 8]]), 1.0, -1.0)
    for loss in (bob_boost.ExponentialLoss(), bob_boost.LogitLoss()):
        bob_boost.Boosting(bob_boost.LUTTrainer(8, 3), loss).train(codes, one_vs_rest, 2)
    # the objective in every memory layout, with outputs of any value and of +-1, weighted or not
    targets, previous = np.where(rng.random((64, 2)) < 0.3, 1.0, -1.0), rng.normal(size=(64, 2))
    for loss, orders, weights, current in itertools.product(
            (bob_boost.ExponentialLoss(), bob_boost.LogitLoss()), itertools.product("CF", repeat=3),
            (None, rng.random(64)), (rng.normal(size=(64, 2)), np.where(rng.random((64, 2)) < 0.5, 1.0, -1.0))):
        arrays = (np.asarray(a, order=o) for a, o in zip((targets, previous, current), orders))
        steps._line_objective(loss, *arrays, weights, 1)(np.ones(2))


#: What is compiled, in this order. pytest-xdist workers each take every ``workercount``-th part
#: (tests/conftest.py); with two, the first takes the quantised trees, the distributed trees and the detector
#: (about 21 s of compiling on this project's Xeon: 12.4, 4.4 and 4.7 s) and the second the gradient trees
#: and the L-BFGS objective (about 24 s: 16.0 and 7.7 s).
def tree_shap() -> None:
    """Shapley values of gradient trees (the compiled interventional and path-dependent Tree SHAP)."""
    import bob_boost

    rng = np.random.default_rng(0)
    features = rng.normal(size=(300, 4))
    machine = bob_boost.Boosting(bob_boost.TreeTrainer(max_leaves=4), bob_boost.LogitLoss()).train(
        features, np.where(features[:, 0] > 0, 1.0, -1.0), 2)
    machine.shap_values(features[:5], features[:5])
    machine.shap_values(features[:5])


def the_rest() -> None:
    """The smaller parts, one share together."""
    distributed_trees()
    line_objective()
    tree_shap()


#: Worker ``w`` of ``W`` compiles parts ``w, w + W, ...``; on 2 workers the shares took 39.7 s (quantised trees
#: 34.2 s, the detector 5.5 s) and 41.3 s (gradient trees 17.0 s, the rest 24.3 s) on epyc-zen4 from an empty
#: cache (before the quantised part also grew a tree per output: a cold run of the tests on epyc-zen5 then compiled
#: that batched kernel once instead of once in each worker, about 13 s each).
PARTS = (quantised_trees, gradient_trees, detector, the_rest)


def main() -> int:
    started = time.perf_counter()
    import bob_boost  # noqa: F401  (the import is timed too)

    print(f"import {time.perf_counter() - started:.1f} s", flush=True)
    failed = 0
    for part in PARTS:
        begun = time.perf_counter()
        try:
            part()
        except Exception as error:  # the next part may still save the tests time
            failed += 1
            print(f"{part.__name__} failed: {type(error).__name__}: {error}", flush=True)
            continue
        print(f"{part.__name__} {time.perf_counter() - begun:.1f} s", flush=True)
    return failed


if __name__ == "__main__":
    sys.exit(main())
