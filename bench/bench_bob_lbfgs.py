"""How much bob's MNIST experiment (3) depends on the L-BFGS call that fits the weights.

bob.learn.boosting documents 83.47% test accuracy for its multi-variate LUT
example with shared feature selection (100 rounds, logit loss, all digits).
``shared/fixtures/bob_models/lut_multi.hdf5`` is that machine as bob 2.0.19
saved it. This script

* scores bob's own machine on the full MNIST test set;
* trains the experiment three times with bob_boost's weak trainer and loss,
  changing only how each round's weights are fitted:

  - "bob_boost": :func:`bob_boost.trainers.fit_weights` (L-BFGS-B on the
    summed loss, gradient tolerance 1e-12);
  - "bob's call, summed loss": ``scipy.optimize.fmin_l_bfgs_b`` from zero
    with its default tolerances, as bob's ``Boosting.train`` calls it, on the
    loss summed over outputs;
  - "bob's call, first output's loss": the same, but the objective value is
    the loss of output 0 only, the gradient still has every output. bob's
    ``loss_sum`` returns one value per output and, as far as we can tell,
    the SciPy versions of its time handed the objective to the Fortran code
    through f2py, which takes the first element of a sequence where it
    expects a scalar (current SciPy refuses a vector instead);

* and prints for each: training seconds, how many leading rounds pick the
  same features and look-up tables as bob's machine, the largest weight
  difference in round 1 and its mean over the rounds they share, the
  largest gradient of the training loss at round 1's weights (how close the
  fit is to the optimum), and the test accuracy.

Nothing here changes bob_boost: the weight fitting of the last two rows is
swapped in for the duration of their training only.

Usage: ``python bench/bench_bob_lbfgs.py [--rounds 100]``
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path
from collections.abc import Callable

import numpy as np
import scipy.optimize

from bob_boost import BoostedMachine
from bob_boost.examples.mnist import example_accuracy, train_example
from bob_boost.datasets import load_mnist
from bob_boost.losses import LogitLoss
from bob_boost.boosting import algorithms as boosting  # the loop's generic configuration calls fit_weights

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
MNIST = SHARED / "data" / "mnist" / "mnist_data.hdf5"
BOB_MACHINE = SHARED / "fixtures" / "bob_models" / "lut_multi.hdf5"
DIGITS = list(range(10))


def bob_fit_weights(first_output_only: bool) -> Callable:
    """A replacement for ``fit_weights`` that calls L-BFGS as bob's ``Boosting.train`` does."""
    def fit(loss_function, targets, previous_scores, current_scores, sample_weight=None) -> np.ndarray:
        def value(alpha: np.ndarray) -> float:
            per_output = np.sum(loss_function.loss(targets, previous_scores + alpha * current_scores), axis=0)
            return float(per_output[0] if first_output_only else per_output.sum())

        def gradient(alpha: np.ndarray) -> np.ndarray:
            return loss_function.loss_gradient_sum(alpha, targets, previous_scores, current_scores)

        alpha, _, _ = scipy.optimize.fmin_l_bfgs_b(value, np.zeros(targets.shape[1]), fprime=gradient)
        return alpha
    return fit


def shared_rounds(bob: BoostedMachine, ours: BoostedMachine) -> int:
    """Number of leading rounds with the same features and (up to bob's sign convention) look-up tables."""
    count = 0
    for theirs, mine in zip(bob.weak_machines, ours.weak_machines):
        if not (np.array_equal(theirs.indices, mine.indices)
                and np.array_equal(-theirs.look_up_tables, mine.look_up_tables)):
            break
        count += 1
    return count


def main() -> None:
    """Score bob's machine, train the three variants and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100, help="boosting rounds")
    args = parser.parse_args()
    data = load_mnist(MNIST)
    bob = BoostedMachine.load(BOB_MACHINE)
    targets = np.where(data.train_labels[:, np.newaxis] == np.arange(10), 1.0, -1.0)
    # round 1's look-up tables in bob_boost's sign convention (bob's LUT and weight signs are the opposite)
    first_outputs = -bob.weak_machines[0].forward(data.train_data)
    print(f"bob 2.0.19's saved machine ({len(bob)} rounds): test accuracy "
          f"{100 * example_accuracy(bob, data.test_data, data.test_labels, DIGITS, True):.2f}% "
          f"(bob documents 83.47%)\n")
    print("| weights fitted by | seconds | rounds equal to bob's | max abs weight difference, round 1 | "
          "mean over shared rounds | max abs loss gradient at round 1's weights | test accuracy |")
    print("|---|---|---|---|---|---|---|")
    loss = LogitLoss()
    zero = np.zeros_like(targets)
    gradient_at_bob = loss.loss_gradient_sum(-bob.weights[0], targets, zero, first_outputs)
    print(f"| bob 2.0.19 (saved machine) | | | | | {np.max(np.abs(gradient_at_bob)):.1e} | "
          f"{100 * example_accuracy(bob, data.test_data, data.test_labels, DIGITS, True):.2f}% |")
    variants = (("bob_boost", boosting.fit_weights), ("bob's call, summed loss", bob_fit_weights(False)),
                ("bob's call, first output's loss", bob_fit_weights(True)))
    original = boosting.fit_weights
    for name, fit in variants:
        boosting.fit_weights = fit
        try:
            start = time.perf_counter()
            machine = train_example(data, DIGITS, "lut", "log", args.rounds, True, "shared")
            seconds = time.perf_counter() - start
        finally:
            boosting.fit_weights = original
        accuracy = 100 * example_accuracy(machine, data.test_data, data.test_labels, DIGITS, True)
        shared = shared_rounds(bob, machine)
        if shared == 0:
            print(f"| {name} | {seconds:.1f} | 0 | | | | {accuracy:.2f}% |")
            continue
        differences = np.abs(bob.weights[:shared] + machine.weights[:shared]).max(axis=1)
        gradient = loss.loss_gradient_sum(machine.weights[0], targets, zero, first_outputs)
        print(f"| {name} | {seconds:.1f} | {shared} | {differences[0]:.1e} | {differences.mean():.1e} | "
              f"{np.max(np.abs(gradient)):.1e} | {accuracy:.2f}% |")


if __name__ == "__main__":
    main()
