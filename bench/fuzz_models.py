"""Fuzz the model loader: tens of thousands of damaged and hostile model files, a table of outcomes.

Runs the harness of ``tests/fuzzing.py`` (the one ``tests/test_fuzz_loader.py`` runs a few hundred
cases of) on the checkout this script lives in: every case copies a valid model file (trained
machines of every weak-machine type, bob.learn.boosting's files, the golden models, two face
detection cascades), mutates it and loads it in a worker process with a time limit. Prints a
Markdown table of outcomes per mutation kind, then every disallowed outcome with what reproduces
it; mutated files with a disallowed outcome are kept in ``--keep``.

Usage::

    python bench/fuzz_models.py --cases 20000 --seed 1 [--workers 2] [--time-limit 10] [--keep DIR]
    python bench/fuzz_models.py --cases 10000 --seed 2 --seeds cascade_   # cascade files only

Exit status 1 when any case had a disallowed outcome.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this checkout's bob_boost, and the harness

import fuzzing  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20000, help="number of cases (default 20000)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the case list (default 1)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--time-limit", type=float, default=fuzzing.TIME_LIMIT,
                        help=f"seconds a load may take (default {fuzzing.TIME_LIMIT})")
    parser.add_argument("--keep", type=Path, default=None, help="folder for the files of disallowed outcomes")
    parser.add_argument("--seeds", default="", metavar="PREFIX",
                        help="mutate only the seed files whose names start with PREFIX (e.g. cascade_)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bob_boost-fuzz-seeds-") as seeds:
        paths = [path for path in fuzzing.write_seeds(seeds) if path.name.startswith(args.seeds)]
        if not paths:
            parser.error(f"--seeds: no seed file starts with {args.seeds!r}")
        cases = fuzzing.make_cases([p.name for p in paths], args.cases, args.seed)
        started = time.perf_counter()
        results = list(fuzzing.run_cases(cases, seeds, workers=args.workers, time_limit=args.time_limit,
                                         keep=args.keep))
        elapsed = time.perf_counter() - started
    print(f"{len(results)} cases on {len(paths)} seed files, seed {args.seed}, {args.workers} worker(s), "
          f"time limit {args.time_limit:g} s: {elapsed:.0f} s\n")
    print(fuzzing.table(results))
    slowest = max(results, key=lambda r: r.seconds)
    print(f"\nslowest case: {slowest.seconds:.2f} s ({slowest.outcome}; {fuzzing.describe(slowest)})")
    bad = [r for r in results if not r.allowed]
    for result in bad:
        print(fuzzing.describe(result))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
