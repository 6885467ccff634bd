"""Time a round's softmax derivatives and score update, whole (1 thread) and on row blocks (2 threads).

The shapes of letter (16000 x 26), full MNIST (60000 x 10) and pendigits (7494 x 10, below the
threading threshold); random scores, fastest of 50 calls each, in milliseconds::

    python bench/bench_loss_rows.py
"""
from __future__ import annotations

import time

import numpy as np

import bob_boost
from bob_boost.boosting.rows import loss_derivatives, updated_scores

CALLS = 50


def _fastest(function) -> float:
    times = []
    for _ in range(CALLS):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def main() -> None:
    """Print one table row per shape and thread count."""
    rng = np.random.default_rng(0)
    loss = bob_boost.SoftmaxLoss()
    print("| shape | threads | gradient + hessian (ms) | score update (ms) |")
    print("|---|---:|---:|---:|")
    for samples, outputs in ((16000, 26), (60000, 10), (7494, 10)):
        scores = rng.normal(size=(samples, outputs))
        targets = np.eye(outputs)[rng.integers(0, outputs, samples)]
        weight, weak = rng.normal(size=outputs), rng.normal(size=(samples, outputs))
        for threads in (1, 2):
            derivatives = _fastest(lambda: loss_derivatives(loss, targets, scores, True, threads))
            update = _fastest(lambda: updated_scores(scores, weight, weak, threads))
            print(f"| {samples} x {outputs} | {threads} | {derivatives:.2f} | {update:.2f} |")


if __name__ == "__main__":
    main()
