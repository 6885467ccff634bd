"""The Dask estimators' ``fit`` with the code of two checkouts, side by side.

``DaskBoostingClassifier(n_estimators=20)`` on 1,000,000 x 20 integer features in 8 chunks (persisted on a
``LocalCluster`` of 2 worker processes, one thread each), three ways: every default (early stopping holds out
rows), ``early_stopping=False``, and with sample weights. Each checkout runs in its own process (its import
not timed), the checkouts interleaved; printed: the fastest of ``--repeats`` fits per case and checkout, their
ratio and whether both gave the same model (a checksum of its weights).

Usage::

    git worktree add /tmp/base <commit>
    python bench/bench_dask_estimators.py --base /tmp/base --new . [--repeats 2]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

CASES = ("every default", "early_stopping=False", "sample weights")

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import bob_boost
assert bob_boost.__file__.startswith(sys.argv[1]), bob_boost.__file__
import dask.array as da
from distributed import Client, LocalCluster
from bob_boost.dask import DaskBoostingClassifier

if __name__ == "__main__":
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        state = da.random.RandomState(0)
        X = state.randint(0, 20, size=(1_000_000, 20), chunks=(125_000, 20)).persist()
        y = da.where(X[:, 0] + X[:, 1] + state.normal(0, 3, size=1_000_000, chunks=125_000) > 19, 1, 0).persist()
        w = (state.random_sample(1_000_000, chunks=125_000) + 0.5).persist()
        cases = [({}, {}), ({"early_stopping": False}, {}), ({"early_stopping": False}, {"sample_weight": w})]
        results = []
        for options, fitting in cases:
            start = time.perf_counter()
            model = DaskBoostingClassifier(n_estimators=20, client=client, **options).fit(X, y, **fitting)
            results.append([time.perf_counter() - start, float(model.machine_.weights.sum())])
        print(json.dumps(results))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, type=Path)
    parser.add_argument("--new", required=True, type=Path)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    runs: dict[str, list] = {"base": [], "new": []}
    for _ in range(args.repeats):
        for name in ("base", "new"):
            folder = str(getattr(args, name).resolve())
            done = subprocess.run([sys.executable, "-c", CHILD, folder], capture_output=True, text=True, check=True)
            runs[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"fastest of {args.repeats} runs, interleaved; base {args.base}, new {args.new}")
    print("| DaskBoostingClassifier fit | base s | new s | new / base | same model |")
    print("|---|---:|---:|---:|---|")
    for i, case in enumerate(CASES):
        base = min(run[i][0] for run in runs["base"])
        new = min(run[i][0] for run in runs["new"])
        sums = {name: sorted({run[i][1] for run in runs[name]}) for name in runs}
        same = "yes" if len(set(sums["base"] + sums["new"])) == 1 else f"no: {sums}"
        print(f"| {case} | {base:.2f} | {new:.2f} | {new / base:.3f} | {same} |")


if __name__ == "__main__":
    main()
