"""BAdaCost with example-dependent costs on a Dask cluster, against a class cost matrix and against memory.

``--rows`` x 10 integer features 0..19 and 4 classes from a noisy sum of two features (generated in numpy,
seed 0); each sample's cost row draws its errors' costs from 0.2 .. 5 (zero at its class), and the class
matrix is their class means (:func:`bob_boost.costs.class_mean_costs`), which both runs predict with.
``BAdaCostTrainer(matrix, CostSensitiveTreeTrainer(max_depth=2, quantized=True), number_of_rounds)`` trains

- in memory, with the class matrix and with ``sample_costs``;
- with :class:`bob_boost.dask.DaskMultiClassBoosting` on a ``LocalCluster`` of 2 worker processes (one thread
  each), the arrays in chunks of ``--chunk`` rows, with the class matrix and with ``sample_costs``.

Times are the fastest of ``--repeats``; the distributed runs include sending the chunks and coding them (as a
user's call does). With costs per sample the step is a root search whose every point sums over the chunks:
the table gives those sums over the chunks per round (the points of the search, counted on the in-memory
partitions of the same chunks, and the round's pass for the terms' slope and range) and whether the
distributed model is the in-memory one (same trees, weights within 1e-9).

Usage: ``python bench/bench_dask_sample_costs.py [--rows 400000] [--chunk 100000] [--rounds 10] [--repeats 3]``
"""
from __future__ import annotations

import argparse

import numpy as np

from _machine import cpu_model  # bench/, beside this script
from _timing import fastest


def data(rows: int):
    rng = np.random.default_rng(0)
    features = rng.integers(0, 20, size=(rows, 10)).astype(np.float64)
    score = features[:, 0] + features[:, 1] + rng.normal(0, 3, rows)
    labels = np.digitize(score, np.quantile(score, [0.25, 0.5, 0.75]))
    costs = rng.uniform(0.2, 5.0, size=(rows, 4))
    costs[np.arange(rows), labels] = 0.0
    return features, labels, costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--chunk", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import dask.array as da
    from distributed import Client, LocalCluster

    import bob_boost
    from bob_boost.boosting import partition_tasks
    from bob_boost.boosting.partitions import LocalRows
    from bob_boost.costs import class_mean_costs
    from bob_boost.dask import DaskMultiClassBoosting
    from bob_boost.trainers.partitioned_classes import PartitionedMultiClassBoosting

    features, labels, costs = data(args.rows)
    matrix = class_mean_costs(labels, costs, 4)
    trainer = bob_boost.BAdaCostTrainer(matrix, bob_boost.CostSensitiveTreeTrainer(max_depth=2, quantized=True),
                                        number_of_rounds=args.rounds)
    rows = [args.chunk] * (args.rows // args.chunk) + ([args.rows % args.chunk] if args.rows % args.chunk else [])

    sums = [0]
    derivative = partition_tasks.term_derivative

    def counted(*arguments):
        sums[0] += 1
        return derivative(*arguments)

    partition_tasks.term_derivative = counted
    counted_machine = PartitionedMultiClassBoosting(trainer).train_on(LocalRows(rows), features, labels,
                                                                      sample_costs=costs)
    partition_tasks.term_derivative = derivative
    # every point of the search sums over every partition; each round also gathers its terms' slope and range
    per_round = (sums[0] / len(rows) + len(counted_machine)) / len(counted_machine)

    memory = {}
    results = {}
    for name, options in (("class matrix", {}), ("sample costs", {"sample_costs": costs})):
        seconds, memory[name] = fastest(lambda: trainer.train(features, labels, **options), args.repeats)
        results[("memory", name)] = seconds
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True) as cluster, Client(cluster) as client:
        chunked = da.from_array(features, chunks=(args.chunk, 10))
        classes = da.from_array(labels, chunks=args.chunk)
        rows_costs = da.from_array(costs, chunks=(args.chunk, 4))
        same = {}
        for name, options in (("class matrix", {}), ("sample costs", {"sample_costs": rows_costs})):
            seconds, machine = fastest(lambda: DaskMultiClassBoosting(trainer, client=client).train(
                chunked, classes, **options), args.repeats)
            results[("dask", name)] = seconds
            reference = memory[name]
            same[name] = (machine.weak_machines == reference.weak_machines
                          and np.allclose(machine.weights, reference.weights, rtol=1e-9, atol=0))

    print(f"{cpu_model()}; {args.rows} rows x 10 features, 4 classes, chunks of {args.chunk}, {args.rounds} rounds "
          f"of depth-2 trees, fastest of {args.repeats}")
    print()
    print("| costs | in memory (s) | Dask, 2 workers (s) | Dask / memory | sums per round's step | same model |")
    print("|---|---:|---:|---:|---:|---|")
    for name in ("class matrix", "sample costs"):
        steps = "1 (confusion matrix)" if name == "class matrix" else f"{per_round:.1f}"
        print(f"| {name} | {results[('memory', name)]:.2f} | {results[('dask', name)]:.2f} | "
              f"{results[('dask', name)] / results[('memory', name)]:.2f}x | {steps} | {same[name]} |")


if __name__ == "__main__":
    main()
