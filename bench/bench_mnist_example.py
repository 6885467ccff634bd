"""bob.learn.boosting's four documented MNIST experiments, run through ``bob-boost example mnist``'s code.

Each experiment trains 100 rounds on the full training set of the chosen
digits and reports the test accuracy (bob's documented value next to it)
and the seconds spent training and classifying the test set. The same runs
from the shell::

    bob-boost example mnist --data ../shared/data/mnist/mnist_data.hdf5 -t stump -l exp -d 5 6
    bob-boost example mnist --data ../shared/data/mnist/mnist_data.hdf5 -t lut -l log -d 5 6
    bob-boost example mnist --data ../shared/data/mnist/mnist_data.hdf5 -t lut -l log -m -a -s shared
    bob-boost example mnist --data ../shared/data/mnist/mnist_data.hdf5 -t lut -l log -m -a -s independent

Usage: ``python bench/bench_mnist_example.py [--rounds 100] [--write-doc]``;
``--write-doc`` replaces the results table in ``doc/cli.md``; ``--profile N``
prints the N most expensive functions of each experiment.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import platform
import pstats
import time
from pathlib import Path

from bob_boost.examples.mnist import example_accuracy, train_example
from bob_boost.datasets import load_mnist

ROOT = Path(__file__).resolve().parents[1]
MNIST = ROOT.parent / "shared" / "data" / "mnist" / "mnist_data.hdf5"
DOC = ROOT / "doc" / "cli.md"
START, END = "<!-- mnist-table-start -->", "<!-- mnist-table-end -->"

#: (name, options of train_example, digits, bob's documented test accuracy in %)
EXPERIMENTS = (
    ("(1) stumps + exponential, 5 vs 6", dict(trainer_type="stump", loss_type="exp"), [5, 6], 92.05,
     "-t stump -l exp -d 5 6"),
    ("(2) LUT + logit, 5 vs 6", dict(trainer_type="lut", loss_type="log"), [5, 6], 95.35, "-t lut -l log -d 5 6"),
    ("(3) multi-variate LUT + logit, all digits, shared",
     dict(trainer_type="lut", loss_type="log", multi_variate=True, selection_style="shared"), list(range(10)),
     83.47, "-t lut -l log -m -a -s shared"),
    ("(4) multi-variate LUT + logit, all digits, independent",
     dict(trainer_type="lut", loss_type="log", multi_variate=True, selection_style="independent"),
     list(range(10)), 86.25, "-t lut -l log -m -a -s independent"),
)


def _run(subset, digits, options, rounds, profile_rows):
    """Train and test one experiment; return (test accuracy in %, seconds)."""
    profiler = cProfile.Profile() if profile_rows else None
    start = time.perf_counter()
    if profiler:
        profiler.enable()
    machine = train_example(subset, digits, rounds=rounds, **options)
    accuracy = 100 * example_accuracy(machine, subset.test_data, subset.test_labels, digits,
                                      options.get("multi_variate", False))
    if profiler:
        profiler.disable()
    seconds = time.perf_counter() - start
    if profiler:
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(profile_rows)
        print(text.getvalue())
    return accuracy, seconds


def main() -> None:
    """Run the four experiments and print (optionally write) the results table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100, help="boosting rounds per experiment")
    parser.add_argument("--write-doc", action="store_true", help=f"replace the table in {DOC}")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="print the N costliest functions")
    args = parser.parse_args()

    start = time.perf_counter()
    data = load_mnist(MNIST)
    load_seconds = time.perf_counter() - start
    rows = []
    for name, options, digits, bob_accuracy, flags in EXPERIMENTS:
        subset = data.subset(digits)
        accuracy, seconds = _run(subset, digits, options, args.rounds, args.profile)
        print(f"{name}: {accuracy:.2f}% (bob {bob_accuracy:.2f}%) in {seconds:.1f} s", flush=True)
        rows.append((name, flags, subset.train_labels.size, accuracy, bob_accuracy, seconds))

    table = [f"Measured with `python bench/bench_mnist_example.py` ({args.rounds} rounds, full training and test "
             f"sets; seconds of training plus classifying the test set; {platform.machine()}, Python "
             f"{platform.python_version()}; loading the HDF5 file took {load_seconds:.1f} s and is not counted).",
             "",
             "| experiment | `bob-boost example mnist` options | training images | test accuracy | bob documents "
             "| seconds |",
             "|---|---|---:|---:|---:|---:|"]
    for name, flags, samples, accuracy, bob_accuracy, seconds in rows:
        verdict = "" if accuracy >= bob_accuracy else " (below bob)"
        table.append(f"| {name} | `{flags}` | {samples} | {accuracy:.2f}%{verdict} | {bob_accuracy:.2f}% | "
                     f"{seconds:.1f} |")
    table.append(f"| all four | | | | | {sum(row[-1] for row in rows):.1f} |")
    text = "\n".join(table)
    print()
    print(text)
    if args.write_doc:
        document = DOC.read_text()
        if START not in document or END not in document:
            raise SystemExit(f"{DOC}: markers {START} / {END} not found")
        before, rest = document.split(START, 1)
        after = rest.split(END, 1)[1]
        DOC.write_text(f"{before}{START}\n{text}\n{END}{after}")
        print(f"\nwrote the table into {DOC}")


if __name__ == "__main__":
    main()
