"""Speed and accuracy of 100 rounds of stump boosting on MNIST 5 vs 6.

Compares, in one run on the same data, bob_boost's StumpTrainer +
ExponentialLoss with scikit-learn's AdaBoostClassifier on depth-1 trees and
LightGBM with 2-leaf trees. Each is trained ``--repeats`` times; the table
shows the fastest training time (least disturbed by other processes) and the
test accuracy.

Usage::

    python bench/bench_mnist_stumps.py [--rounds 100] [--repeats 3] [--markdown doc/benchmark_mnist.md]
"""
from __future__ import annotations

import argparse
import platform
from pathlib import Path

import h5py
import numpy as np

from _timing import fastest  # bench/, beside this script

import bob_boost

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mnist" / "mnist_data.hdf5"


def load_pair(path: Path, positive: int = 5, negative: int = 6):
    """Train/test features (uint8) and -1/+1 targets of two digits."""
    with h5py.File(path, "r") as h5:
        sets = {}
        for part in ("train", "test"):
            labels = h5[f"{part}/labels"][()]
            keep = (labels == positive) | (labels == negative)
            sets[part] = (h5[f"{part}/data"][()][keep], np.where(labels[keep] == positive, 1, -1))
    return sets["train"], sets["test"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--markdown", type=Path, help="also write the table to this markdown file")
    args = parser.parse_args()

    (train_x, train_t), (test_x, test_t) = load_pair(args.data)
    rows = []

    seconds, machine = fastest(lambda: bob_boost.Boosting(bob_boost.StumpTrainer(), bob_boost.ExponentialLoss())
                                .train(train_x, train_t, args.rounds), args.repeats)
    rows.append(("bob_boost StumpTrainer + ExponentialLoss", seconds, np.mean(machine.predict(test_x) == test_t)))

    from sklearn.ensemble import AdaBoostClassifier
    from sklearn.tree import DecisionTreeClassifier
    seconds, model = fastest(lambda: AdaBoostClassifier(DecisionTreeClassifier(max_depth=1),
                                                         n_estimators=args.rounds).fit(train_x, train_t), 1)
    rows.append(("scikit-learn AdaBoostClassifier, depth-1 trees", seconds, np.mean(model.predict(test_x) == test_t)))

    import lightgbm
    for jobs in (1, 2):
        seconds, model = fastest(lambda: lightgbm.LGBMClassifier(
            n_estimators=args.rounds, num_leaves=2, n_jobs=jobs, verbose=-1).fit(train_x, train_t), args.repeats)
        rows.append((f"LightGBM, 2-leaf trees, {jobs} thread(s)", seconds, np.mean(model.predict(test_x) == test_t)))

    ours = rows[0][1]
    lines = [f"MNIST 5 vs 6: {len(train_t)} training / {len(test_t)} test images, 784 pixel features, "
             f"{args.rounds} rounds; {platform.processor() or platform.machine()}, numpy {np.__version__}",
             "", "| method | training seconds | relative to bob_boost | test accuracy |", "|---|---:|---:|---:|"]
    for name, seconds, accuracy in rows:
        lines.append(f"| {name} | {seconds:.3f} | {seconds / ours:.1f}x | {100 * accuracy:.2f}% |")
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        args.markdown.write_text(f"<!-- written by: python bench/bench_mnist_stumps.py --rounds {args.rounds} "
                                 f"--repeats {args.repeats} -->\n{table}\n")


if __name__ == "__main__":
    main()
