"""What the training loop's descent guarantee costs when it does not trigger.

Each case trains with the guarantee and with it switched off (the loop then skips the ``descend`` hook, as
before the guarantee existed), alternating, fastest of ``--repeats``; it prints the seconds, their ratio and
the rounds whose weight was halved (none in these default runs, so both models are the same, which is
checked) and the rounds whose training loss was evaluated. A gradient tree's step is evaluated unless the
loss's curvature bound shows it to descend (the logit's and the softmax's); L-BFGS and converged Newton steps
are certified without an evaluation.

A second table times the check's own work a round, which whole trainings on a shared machine measure only
roughly: at each tree case's shape, the loss derivatives a round computes anyway, and the same with the
training loss (fastest of 200 calls each), against the seconds a round takes.

Usage: ``python bench/bench_descent.py [--repeats 3] [--threads 2]``.
"""
from __future__ import annotations

import argparse
import gzip
import logging
import time
from pathlib import Path

import numpy as np

from _machine import cpu_model  # bench/, beside this script

import bob_boost
from bob_boost.boosting import algorithms, rows

ROOT = Path(__file__).resolve().parents[1]
UCI = ROOT.parent / "shared" / "data" / "uci"
MNIST = ROOT.parent / "shared" / "data" / "mnist" / "mnist_data.hdf5"


def uci(name: str):
    with gzip.open(UCI / name / f"{name}.tsv.gz", "rt") as stream:
        table = np.loadtxt(stream, delimiter="\t", skiprows=1)
    return table[:, :-1], np.unique(table[:, -1], return_inverse=True)[1]


def cases(threads: int):
    """(name, trainer factory, features, targets, rounds)."""
    x, y = uci("letter")
    found = [("letter, softmax, default trees (26 a round), 100 rounds",
              lambda: bob_boost.Boosting(bob_boost.TreeTrainer(n_threads=threads), bob_boost.SoftmaxLoss()), x, y, 100)]
    rng = np.random.default_rng(0)
    big = rng.normal(size=(200_000, 20))
    labels = np.where(big[:, :5].sum(axis=1) + rng.normal(size=200_000) > 0, 1.0, -1.0)
    found.append(("200k x 20 normal, logit, default trees, 100 rounds",
                  lambda: bob_boost.Boosting(bob_boost.TreeTrainer(n_threads=threads), bob_boost.LogitLoss()),
                  big, labels, 100))
    found.append(("200k x 20 normal, exponential, stumps (Newton steps), 100 rounds",
                  lambda: bob_boost.Boosting(bob_boost.StumpTrainer(n_threads=threads), bob_boost.ExponentialLoss()),
                  big, labels, 100))
    if MNIST.exists():
        from bob_boost.datasets import load_mnist
        data = load_mnist(MNIST)
        targets = np.where(np.eye(10)[data.train_labels] > 0, 1.0, -1.0)
        found.append(("MNIST, logit, bob's multi-variate LUTs (L-BFGS steps), 20 rounds",
                      lambda: bob_boost.Boosting(bob_boost.LUTTrainer(256, 10, n_threads=threads),
                                                 bob_boost.LogitLoss()), data.train_data, targets, 20))
    return found


class HalvingCounter(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += "halved" in record.getMessage()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    cpu = cpu_model()
    print(f"# {time.strftime('%Y-%m-%d')}, {cpu}, {args.threads} threads, fastest of {args.repeats}")
    print("| case | with the guarantee (s) | without (s) | ratio | halved rounds | rounds evaluated |")
    print("|---|---:|---:|---:|---:|---:|")
    counter = HalvingCounter()
    logger = logging.getLogger("bob_boost.boosting.algorithms")
    logger.addHandler(counter)
    logger.setLevel(logging.INFO)
    guarantee = algorithms.GradientBoosting.descend
    evaluate = algorithms.derivatives_and_total
    evaluations = [0]

    def counted(*args, **kwargs):
        evaluations[0] += 1
        return evaluate(*args, **kwargs)
    algorithms.derivatives_and_total = counted
    round_seconds: dict = {}
    factory_loss: dict = {}
    for name, factory, features, targets, rounds in cases(args.threads):
        factory_loss[name] = factory().loss_function
        best = {True: np.inf, False: np.inf}
        models = {}
        counter.count = 0
        evaluations[0] = 0
        for _ in range(args.repeats):
            for on in (True, False):
                algorithms.GradientBoosting.descend = guarantee if on else None
                start = time.perf_counter()
                models[on] = factory().train(features, targets, rounds)
                best[on] = min(best[on], time.perf_counter() - start)
        algorithms.GradientBoosting.descend = guarantee
        same = np.array_equal(models[True].weights, models[False].weights)
        print(f"| {name} | {best[True]:.2f} | {best[False]:.2f} | {best[True] / best[False]:.3f} | "
              f"{counter.count // args.repeats}{'' if same else ' (models differ)'} | "
              f"{evaluations[0] // args.repeats} of {rounds} |")
        if "trees" in name:
            round_seconds[name] = (best[True] / rounds, models[True], features, targets)
    print()
    print("| case | derivatives (ms) | derivatives and loss (ms) | the check's share of a round |")
    print("|---|---:|---:|---:|")
    for name, (seconds, machine, features, targets) in round_seconds.items():
        loss = factory_loss[name]
        checked = loss.check_targets(targets)
        scores = machine.decision_scores(features)
        alone = _fastest(lambda: rows.loss_derivatives(loss, checked, scores, True, args.threads))
        both = _fastest(lambda: rows.derivatives_and_total(loss, checked, scores, True, None, args.threads))
        print(f"| {name} | {1e3 * alone:.2f} | {1e3 * both:.2f} | {100 * (both - alone) / seconds:.1f}% |")


def _fastest(call, times: int = 200) -> float:
    call()
    best = np.inf
    for _ in range(times):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


if __name__ == "__main__":
    main()
